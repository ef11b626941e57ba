#!/usr/bin/env bash
# A poller under 1% of a core is a busy poll, never "idle" (issue 22,
# verdicts 2; field report 000's "idle CPU burn"): busy_poll --mode poll
# wakes about 900 times a second from a 1 ms poll() and finds nothing,
# using about 0.01 cores.  vitals threads names it a busy poll on the quiet
# host and with a 2-thread CPU hog beside it, and so does analyze of a soak
# of it taken beside the hog; none of them says idle.
# lane: solo — a busy poll is judged from wakeups and CPU
. "$(dirname "$0")/lib.sh"

# say FILE: the patterns vitals found and the poller's figures
say() {
	python3 - "$1" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
p = [t for t in j["threads"] if t["name"] == "poller"]
print(f"#   process {j['process']['cores']:.4f} cores; poller", *(f"{t['voluntary_per_s']:.0f}/s {t['cores']:.4f} cores" for t in p))
for d in j["diagnosis"]:
    print(f"#   {d['pattern']}: {d.get('evidence', '')}")
PY
}
patterns() { jq_py "$1" 'sorted({d["pattern"] for d in j["diagnosis"]})'; }

start_target busy_poll --mode poll --seconds 40
sleep 0.5
vitals threads --json -i 3s "$TPID" >"$WORK/quiet.json" || fail "vitals threads (quiet host)"
echo "# quiet host:"
say "$WORK/quiet.json"

# the hog: two spinning threads, bounded in time, killed at the end
"$T/targets/core_contention" --threads 2 --seconds 20 >"$WORK/hog.out" 2>&1 &
HOG=$!
PIDS+=("$HOG")
sleep 0.5
vitals threads --json -i 3s "$TPID" >"$WORK/loaded.json" || fail "vitals threads (with the hog)"
echo "# with a 2-thread hog:"
say "$WORK/loaded.json"
vitals soak -q -o "$WORK/run.db" --every 0.5s --threads-every 1s --for 5s "$TPID" 2>"$WORK/soak.err" ||
	fail "soak: $(cat "$WORK/soak.err")"
kill "$HOG" 2>/dev/null
wait "$HOG" 2>/dev/null
vitals analyze --json "$WORK/run.db" >"$WORK/a.json" || fail "vitals analyze"
vitals analyze "$WORK/run.db" >"$WORK/a.txt" || fail "vitals analyze (text)"
sed -n '/^what the threads did/,/^$/p' "$WORK/a.txt"

for run in quiet loaded; do
	got=$(patterns "$WORK/$run.json")
	check "threads, $run host: a busy poll, not idle (got $got)" \
		test "$(jq_py "$WORK/$run.json" '(lambda p: "busy poll" in p and "idle" not in p)([d["pattern"] for d in j["diagnosis"]])')" = true
done
check "the poller was under 0.05 cores on the quiet host (the case in question)" \
	test "$(jq_py "$WORK/quiet.json" 'all(t["cores"] < 0.05 for t in j["threads"] if t["name"] == "poller")')" = true
check "analyze of the soak beside the hog: a busy poll, not idle" \
	test "$(jq_py "$WORK/a.json" '(lambda p: "busy poll" in p and "idle" not in p)([d["pattern"] for d in j["threads_diagnosis"]])')" = true

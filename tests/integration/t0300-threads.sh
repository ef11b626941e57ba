#!/usr/bin/env bash
# vitals threads: the process CPU rate over an interval agrees with an
# independent cputime delta (and ps's since-start figure is shown to differ),
# core contention shows nonvoluntary > voluntary switches, a poller's wakeup
# rate matches its truth.  Its views, an idle process, a process that exits
# mid-interval and bad input are t0301, in the shared lane.
# lane: solo — CPU rates are checked against cputime deltas
. "$(dirname "$0")/lib.sh"

# --- load_change: idle 8 s, then two threads burn --------------------------
# ps's since-start figure is diluted by the idle phase: with 3 s of it, a loaded
# CI host took so long to reach the measurement that the busy phase was 72% of
# the process's life (ps 0.24 against 0.33 cores: within 10 points); 8 s keeps
# it near half.  Two burning threads keep the gap over 10 points for the text
# run after it too (one thread at 0.47 cores left it under, in CI).
start_target load_change --idle-seconds 8 --busy-threads 2 --seconds 120   # killed when done; outlives a loaded host
for i in $(seq 120); do
	[ "$(truth_py "$TRUTH" 't["phase"]')" = '"busy"' ] && break
	sleep 0.1
done
[ "$(truth_py "$TRUTH" 't["phase"]')" = '"busy"' ] || fail "load_change did not get busy"
sleep 0.5
# the independent figure: our own reads of /proc/PID/stat utime+stime around
# the run, over the wall time between them
python3 - "$B/vitals" "$TPID" "$WORK/lc.json" >"$WORK/lc.indep" <<'PY' || fail "vitals threads on load_change"
import os, subprocess, sys, time
vit, pid, out = sys.argv[1], sys.argv[2], sys.argv[3]
tck = os.sysconf("SC_CLK_TCK")
def cpu():
    s = open(f"/proc/{pid}/stat").read()
    f = s[s.rindex(")") + 2:].split()
    return (int(f[11]) + int(f[12])) / tck
c0, t0 = cpu(), time.monotonic()
with open(out, "w") as o:
    rc = subprocess.call([vit, "threads", "--json", "-i", "3s", pid], stdout=o)
c1, t1 = cpu(), time.monotonic()
# real ps at once: its since-start average grows while the busy phase goes on, and
# the checks below took seconds on a loaded host (ps 0.21 -> 0.27 in a make test-loaded run)
ps = subprocess.run(["ps", "-o", "%cpu=", "-p", pid], capture_output=True, text=True).stdout.strip()
print((c1 - c0) / (t1 - t0), ps)
sys.exit(rc)
PY
read -r indep ps_pct <"$WORK/lc.indep"
cores=$(jq_py "$WORK/lc.json" 'j["process"]["cores"]')
ps_cores=$(jq_py "$WORK/lc.json" 'j["process"]["ps_since_start_cores"]')
echo "# load_change: vitals $cores cores, independent delta $indep, ps since-start $ps_cores"
check "schema is vitals.threads v1" test "$(jq_py "$WORK/lc.json" '[j["schema"], j["schema_version"]]')" = '["vitals.threads", 1]'
check "process rate agrees with an independent cputime delta within 2 points" \
	python3 -c "import sys; sys.exit(abs($cores - $indep) > 0.02)"
# one burning thread gets a core on a quiet host, 0.48 beside the other lane in
# CI; the idle phase is about 0: at least 0.3 says the busy phase was measured
check "the busy phase is measured (at least 0.3 cores)" python3 -c "import sys; sys.exit($cores < 0.3)"
# After the idle phase ps's since-start average is far below the rate; how far
# depends on the CPU the busy threads got before and during the interval (a CI
# host at load 18 gave them 0.405 cores then, 0.31 on average since the start):
# the flag must say whether the two differ by more than 10 points.
echo "# ps -o %cpu said $ps_pct% right after the run"
if python3 -c "import sys; sys.exit(abs($ps_cores - $cores) <= 0.10)"; then
	check "ps's since-start figure differs by more than 10 points, and the JSON flags it" \
		test "$(jq_py "$WORK/lc.json" 'j["process"]["ps_differs"]')" = true
	check "real ps differs from vitals by more than 10 points" \
		python3 -c "import sys; sys.exit(abs($ps_pct / 100 - $cores) <= 0.10)"
else
	echo "# this load kept ps's since-start figure within 10 points of the rate"
	check "ps's since-start figure within 10 points: the JSON does not flag it" \
		test "$(jq_py "$WORK/lc.json" 'j["process"]["ps_differs"]')" = false
fi
"$B/vitals" threads -i 1s "$TPID" >"$WORK/lc.txt" || fail "text output"
# the text run measures again: it must name the difference when its own figures
# differ by more than 10 points (CI once gave the busy threads less of the
# CPUs in that second, and its rate came near ps's average)
txt_cores=$(awk '$1 == "CPU" {print $2; exit}' "$WORK/lc.txt")
txt_ps=$(awk '$1 == "ps" && $2 == "shows" {print $3; exit}' "$WORK/lc.txt")
echo "# text run: $txt_cores cores, ps shows $txt_ps"
if python3 -c "import sys; sys.exit(abs(${txt_ps:-0} - ${txt_cores:-0}) <= 0.10)"; then
	check "text output names the ps difference" grep -q "ps's since-start average differs" "$WORK/lc.txt"
else
	check "text output shows both figures, and no note within 10 points" \
		test -n "$txt_cores" -a -n "$txt_ps" -a "$(grep -c "ps's since-start average differs" "$WORK/lc.txt")" = 0
fi
check "text output has a burn thread row" grep -q "burn-0" "$WORK/lc.txt"
kill "$TPID" 2>/dev/null   # it burns a core: stop it before the next targets

# --- core_contention: more spinners than CPUs -------------------------------
start_target core_contention --seconds 120
sleep 0.5
"$B/vitals" threads --json -i 2s "$TPID" >"$WORK/cc.json" || fail "vitals threads on core_contention"
vol=$(jq_py "$WORK/cc.json" 'sum(t["voluntary_per_s"] for t in j["threads"] if t["name"].startswith("spin-"))')
nonvol=$(jq_py "$WORK/cc.json" 'sum(t["nonvoluntary_per_s"] for t in j["threads"] if t["name"].startswith("spin-"))')
echo "# core_contention: voluntary $vol/s, nonvoluntary $nonvol/s"
check "nonvoluntary > voluntary switches" python3 -c "import sys; sys.exit(not $nonvol > $vol)"
check "diagnosed as core contention" test "$(jq_py "$WORK/cc.json" '"core contention" in [d["pattern"] for d in j["diagnosis"]]')" = true
kill "$TPID" 2>/dev/null

# --- lock_convoy: workers taking turns on one mutex (its defaults: 4 workers,
# 2 ms holds, the field report's picture) ---------------------------------------
start_target lock_convoy --seconds 120
sleep 0.5
"$B/vitals" threads --json -i 5s "$TPID" >"$WORK/lk.json" || fail "vitals threads on lock_convoy"
echo "# lock_convoy: $(jq_py "$WORK/lk.json" 'j["diagnosis"]')"
check "pool of 4 workers" test "$(jq_py "$WORK/lk.json" '[(p["name"], p["count"]) for p in j["pools"]]')" = '[["worker-", 4]]'
check "the pool's members together are its total, and their shares add up within the process" python3 -c "
import json, sys
j = json.load(open('$WORK/lk.json')); p = j['pools'][0]
ws = [t for t in j['threads'] if t['name'].startswith('worker-')]
sys.exit(not (abs(p['total_cores'] - sum(t['cores'] for t in ws)) < 1e-6
              and p['min_share'] <= min(t['cpu_share'] for t in ws) + 1e-9
              and p['max_share'] >= max(t['cpu_share'] for t in ws) - 1e-9
              and 0.9 < sum(t['cpu_share'] for t in ws) <= 1.0 + 1e-9))"
check "the workers wait in futex most often" \
	test "$(jq_py "$WORK/lk.json" 'sorted(set(t["syscall"] for t in j["threads"] if t["name"].startswith("worker-")))')" = '["futex"]'
check "diagnosed as lock convoy" test "$(jq_py "$WORK/lk.json" '"lock convoy" in [d["pattern"] for d in j["diagnosis"]]')" = true
# the same view over a soak: states, wchans and system calls tallied at the
# per-thread cadence, and the same rules over the recording
"$B/vitals" soak -q --every 0.25s --threads-every 0.25s --for 12s -o "$WORK/lk.db" "$TPID" >/dev/null ||
	fail "soak of lock_convoy"
"$B/vitals" analyze --json "$WORK/lk.db" >"$WORK/lk-an.json" || fail "analyze of the lock_convoy soak"
echo "# over the soak: $(jq_py "$WORK/lk-an.json" 'j["threads_diagnosis"]')"
# each worker's most frequent call: a timing figure, asked of the plain build (under
# ASan on a busy host the workers run or queue most of the time: CI saw 15% futex)
case "$B" in *-san*) ;; *)
check "the soak's workers were sampled in futex" \
	test "$(jq_py "$WORK/lk-an.json" 'sorted(set(t["doing"]["syscall"] for t in j["threads"] if t["name"].startswith("worker-")))')" = '["futex"]'
esac
check "with their states counted" \
	test "$(jq_py "$WORK/lk-an.json" 'all(t["doing"]["samples"] >= 5 and sum(t["doing"]["states"].values()) == t["doing"]["samples"] for t in j["threads"])')" = true
check "and the soak is diagnosed as a lock convoy too" \
	test "$(jq_py "$WORK/lk-an.json" '"lock convoy" in [d["pattern"] for d in j["threads_diagnosis"]]')" = true
kill "$TPID" 2>/dev/null

# --- busy_poll at 2000 Hz ----------------------------------------------------
start_target busy_poll --hz 2000 --seconds 120
sleep 1.2
# The truth's rate over the same seconds: its cumulative wakeups from the
# last line written before vitals began to the first written after it ended
# (lines come about every second).  On a loaded host the poller's rate moves
# with the load, so a line from other seconds can be 20% off.
for _ in $(seq 50); do [ "$(wc -l <"$TRUTH")" -ge 1 ] && break; sleep 0.1; done
before=$(wc -l <"$TRUTH")
"$B/vitals" threads --json -i 2s "$TPID" >"$WORK/bp.json" || fail "vitals threads on busy_poll"
after=$(wc -l <"$TRUTH")
for _ in $(seq 50); do [ "$(wc -l <"$TRUTH")" -gt "$after" ] && break; sleep 0.1; done
want=$(python3 - "$TRUTH" "$before" "$after" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().split("\n")
a, b = json.loads(lines[int(sys.argv[2]) - 1]), json.loads(lines[int(sys.argv[3])])
print((b["wakeups"] - a["wakeups"]) / (b["t"] - a["t"]))
PY
)
got=$(jq_py "$WORK/bp.json" '[t["voluntary_per_s"] for t in j["threads"] if t["name"] == "poller"][0]')
echo "# busy_poll: poller $got voluntary switches/s, truth $want wakeups/s"
check "poller's voluntary switches/s within 15% of its wakeups/s" \
	python3 -c "import sys; sys.exit(abs($got - $want) > 0.15 * $want)"
check "diagnosed as busy poll" test "$(jq_py "$WORK/bp.json" '"busy poll" in [d["pattern"] for d in j["diagnosis"]]')" = true
echo "# poller's system call: $(jq_py "$WORK/bp.json" '[(t["syscall"], t["syscall_samples"], t["samples"]) for t in j["threads"] if t["name"] == "poller"][0]')"
check "the poller is seen in clock_nanosleep most often" \
	test "$(jq_py "$WORK/bp.json" '[t["syscall"] for t in j["threads"] if t["name"] == "poller"][0]')" = clock_nanosleep
check "the idle threads wait in futex" \
	test "$(jq_py "$WORK/bp.json" 'sorted(set(t["syscall"] for t in j["threads"] if t["name"].startswith("idle-")))')" = '["futex"]'

kill "$TPID" 2>/dev/null

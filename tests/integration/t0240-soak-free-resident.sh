#!/usr/bin/env bash
# vitals soak records free_resident (glibc's free bytes on resident pages) and
# trimmable from a walk of the heap that never stops the target, and they
# match free_phases' own truth (mincore() over the free chunks it made) at
# every phase within 5%: free blocks resident (odd, quarter), given back by
# malloc_trim while fordblks stays (trim), half taken again (touch).
# analyze (text, --json, --html, --metric) and compare show them; a recording
# without the columns (an older vitals) loads with them empty and says "not
# recorded"; vitals serve exports the figure and serves it from its cache
# between walks, with its age; another allocator (tcmalloc, when installed)
# has no series and the soak says why, once.
. "$(dirname "$0")/lib.sh"
[ -x "$T/targets/free_phases" ] || fail "no $T/targets/free_phases"

vitals soak -o "$WORK/run.db" --every 0.5s --free-every 0.5s --free-budget 100 --for 17s -- \
	"$T/targets/free_phases" --phase-seconds 3 --truth "$WORK/truth" --seconds 40 \
	>"$WORK/soak.out" 2>"$WORK/soak.err" || fail "soak: $(cat "$WORK/soak.err")"
cat "$WORK/soak.out" | sed 's/^/# /'
check "the summary says what the walks cost" grep -qE "^free-memory walks \(free_resident, trimmable\): [0-9]+.*% of one core over the soak \(budget 100%\)" "$WORK/soak.out"

check "free_resident matches the truth within 5% at every phase" python3 - "$WORK/run.db" "$WORK/truth" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT wall, free_resident, trimmable FROM samples ORDER BY id").fetchall()
lines = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{")]
# each phase: from its first line to the next phase's first line
starts = []
for l in lines:
    if not starts or l["phase"] != starts[-1]["phase"]:
        starts.append(l)
bad, seen = [], {}
for i, p in enumerate(starts):
    if p["phase"] == "exit":
        continue
    t0 = p["wall"] + 0.3
    t1 = starts[i + 1]["wall"] - 0.1 if i + 1 < len(starts) else float("inf")
    truth = [l["free_resident_bytes"] for l in lines if l["phase"] == p["phase"]]
    if len(set(truth)) != 1:
        bad.append((p["phase"], "truth moved within the phase", set(truth)))
    truth, other = truth[0], p["mallinfo_fordblks"] - p["free_bytes"]
    got = [(w, v, tr) for w, v, tr in rows if t0 <= w <= t1]
    known = [v for w, v, tr in got if v is not None]
    seen[p["phase"]] = (truth, known[:1], len(known), len(got))
    print("# %-8s truth %10d (other free %d)  vitals %s  (%d of %d samples)" %
          (p["phase"], truth, other, known[:3], len(known), len(got)))
    if p["phase"] == "ready":
        if any(v > 64 * 1024 for v in known):
            bad.append((p["phase"], known))
        continue
    if len(known) < 3:
        bad.append((p["phase"], "fewer than 3 figures", len(known), len(got)))
    for v in known:
        if abs(v - truth) > 0.05 * truth:
            bad.append((p["phase"], v, truth))
    if p["phase"] in ("trim", "touch"):
        # fordblks stays far above what is resident: the report's point
        if not p["free_bytes"] > 20 * truth:
            bad.append((p["phase"], "free_bytes", p["free_bytes"], truth))
        if any(tr is not None and tr > 0.05 * p["free_bytes"] for w, v, tr in got):
            bad.append((p["phase"], "trimmable after the trim", [tr for w, v, tr in got]))
    if p["phase"] in ("odd", "quarter") and any(tr is not None and tr < 0.9 * truth for w, v, tr in got):
        bad.append((p["phase"], "trimmable", [tr for w, v, tr in got]))
missing = {"odd", "quarter", "trim", "touch"} - set(seen)
print("# bad: %s; phases not seen: %s" % (bad, sorted(missing)))
sys.exit(bool(bad or missing))
PY

vitals analyze --json "$WORK/run.db" >"$WORK/a.json" || fail "analyze --json"
echo "# analyze free_memory: $(jq_py "$WORK/a.json" 'j["free_memory"]')"
touch_truth=$(python3 -c 'import json,sys; print([json.loads(l) for l in open(sys.argv[1]) if "\"touch\"" in l][0]["free_resident_bytes"])' "$WORK/truth")
check "analyze --json: the recording has the metrics" \
	test "$(jq_py "$WORK/a.json" '[m in j["recording"]["metrics"] for m in ("free_resident", "trimmable")]')" = '[true, true]'
check "analyze --json: the last quarter's free_resident is the touch phase's truth within 5%" \
	test "$(jq_py "$WORK/a.json" "abs(j['free_memory']['free_resident_bytes'] - $touch_truth) <= 0.05 * $touch_truth and j['free_memory']['recorded']")" = true
vitals analyze "$WORK/run.db" >"$WORK/a.txt" || fail "analyze"
check "analyze: a line for the free memory on resident pages" grep -qE "^  free mem +[0-9.]+ [KMG]?i?B on resident pages \(free_resident\)" "$WORK/a.txt"
vitals analyze --html "$WORK/a.html" "$WORK/run.db" >/dev/null || fail "analyze --html"
check "analyze --html: a chart of it" grep -q 'id="freemem' "$WORK/a.html"
vitals analyze --metric free_resident --json "$WORK/run.db" >"$WORK/m.json" || fail "analyze --metric free_resident"
check "analyze --metric free_resident judges that series" test "$(jq_py "$WORK/m.json" 'j["verdict"]["metric"]')" = free_resident

# an older recording: the same without the two columns
cp "$WORK/run.db" "$WORK/old.db"
python3 - "$WORK/old.db" <<'PY' || fail "could not make an old recording"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for c in ("free_resident", "trimmable"):
    db.execute("ALTER TABLE samples DROP COLUMN %s" % c)
    for k in ("lo", "hi", "mean", "n"):
        db.execute("ALTER TABLE rollups DROP COLUMN %s_%s" % (c, k))
db.commit()
PY
vitals analyze "$WORK/old.db" >"$WORK/old.txt" || fail "analyze old.db"
check "analyze of an older recording: not recorded" grep -q "free mem   on resident pages not recorded (a recording made before" "$WORK/old.txt"
vitals analyze --json "$WORK/old.db" >"$WORK/old.json" || fail "analyze --json old.db"
check "analyze --json of an older recording: recorded false, why" \
	test "$(jq_py "$WORK/old.json" 'j["free_memory"]["recorded"] is False and j["free_memory"]["free_resident_bytes"] is None and "not in this recording" in j["free_memory"]["why_not"]')" = true
vitals compare "$WORK/run.db" "$WORK/old.db" >"$WORK/cmp.txt" || fail "compare"
sed 's/^/# /' "$WORK/cmp.txt" | head -12
check "compare: an A/B row for each" grep -qE "^  free resident .* n/a" "$WORK/cmp.txt"
check "compare: says which arm did not record them" grep -q "not recorded in old (n/a in its column): free resident, trimmable" "$WORK/cmp.txt"
vitals compare --json "$WORK/run.db" "$WORK/old.db" >"$WORK/cmp.json" || fail "compare --json"
check "compare --json: free_resident known in run, null in old" \
	test "$(jq_py "$WORK/cmp.json" '[[a["median"] is not None for a in f["arms"]] for f in j["fields"] if f["key"] == "free_resident"]')" = '[[true, false]]'

# vitals serve: the same figure as a gauge, walked once and then served from its cache with its age
start_target free_phases --phase-seconds 1 --seconds 60
for _ in $(seq 100); do grep -q '"phase":"touch"' "$TRUTH" 2>/dev/null && break; sleep 0.1; done
serve_log=$WORK/serve.err
"$B/vitals" serve --listen 127.0.0.1:0 --pid "$TPID" --free-every 10m 2>"$serve_log" &
PIDS+=("$!")
for _ in $(seq 100); do grep -q "listening on" "$serve_log" && break; sleep 0.1; done
URL=$(sed -nE 's#^vitals serve: listening on (https?://[^ ]+)/metrics .*#\1#p' "$serve_log")
[ -n "$URL" ] || fail "vitals serve did not start: $(cat "$serve_log")"
check "serve: vitals_heap_free_resident_bytes is the truth within 5%, then cached with its age" \
	python3 - "$URL/metrics" "$TRUTH" <<'PY'
import json, re, sys, time, urllib.request
def scrape():
    text = urllib.request.urlopen(sys.argv[1], timeout=10).read().decode()
    get = lambda name: float(re.search(r"^%s\{target=\"[^\"]*\"\} (\S+)$" % name, text, re.M).group(1))
    return get("vitals_heap_free_resident_bytes"), get("vitals_heap_free_walk_age_seconds")
truth = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{")][-1]["free_resident_bytes"]
v1, age1 = scrape()
time.sleep(1.5)
v2, age2 = scrape()
print("# truth %d; scrape 1: %d (age %.1f s); scrape 2: %d (age %.1f s)" % (truth, v1, age1, v2, age2))
sys.exit(not (abs(v1 - truth) <= 0.05 * truth and v2 == v1 and age1 < 1 and age2 >= 1.4))
PY

# another allocator: no series, the reason said once (in the events and the summary)
TCMALLOC=$(ls /usr/lib/*/libtcmalloc_minimal.so.4 /usr/lib/*/libtcmalloc.so.4 2>/dev/null | head -n1)
if [ -n "$TCMALLOC" ]; then
	vitals soak -o "$WORK/tc.db" --every 0.5s --free-every 0.5s --for 4s --env LD_PRELOAD="$TCMALLOC" -- \
		"$T/targets/arena_churn" --threads 2 --seconds 20 >"$WORK/tc.out" 2>"$WORK/tc.err" ||
		fail "soak of a tcmalloc process: $(cat "$WORK/tc.err")"
	check "tcmalloc: the summary says why there are no free figures" \
		grep -q "^free_resident and trimmable not recorded: its malloc is tcmalloc" "$WORK/tc.out"
	vitals analyze --json "$WORK/tc.db" >"$WORK/tc.json" || fail "analyze tc.db"
	check "tcmalloc: said once in the events, and analyze --json says why" \
		test "$(jq_py "$WORK/tc.json" '(sum("free_resident and trimmable not recorded" in e["detail"] for e in j["events"]), j["free_memory"]["recorded"], "tcmalloc" in j["free_memory"]["why_not"])')" = '[1, false, true]'
else
	echo "# no libtcmalloc here: the other-allocator case is left to test_free_walk (libtcmalloc-minimal4)"
fi
echo "ok - t0240"

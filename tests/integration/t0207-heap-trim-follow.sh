#!/usr/bin/env bash
# vitals heap --trim --follow: what a trim returned, then the refill
# followed, on trim_refill, a target that takes the holes back at a known
# rate after each trim and measures its own refill (its truth):
#  - the bytes returned are the drop in committed, and about the hole;
#  - the stated half-life is within two sampling intervals of the target's
#    own (measured every 10 ms), and the curve is back at its level;
#  - a target that refills at once is "within a tick: not a lever", one that
#    takes a share back only "settled lower";
#  - a follow ended by SIGINT keeps the partial curve (exit 130), and the
#    target is alive and well afterwards (it finishes its refill); one
#    killed (SIGKILL) mid-follow leaves it running, untraced;
#  - a target that exits during the follow: what was followed, exit 4;
#  - --follow without --trim is a usage error; a target vitals does not
#    call into is refused before anything is stopped.
. "$(dirname "$0")/lib.sh"

start_target trim_refill --seconds 120 --refill-seconds 8 --hole-mb 64
sleep 1

# --- the refill at a known rate ---
vitals heap --trim --follow 16s --json --html "$WORK/refill.html" "$TPID" >"$WORK/follow.json" 2>"$WORK/follow.err"
rc=$?
check "--trim --follow exits 0" test $rc -eq 0
cp "$TRUTH" "$WORK/truth1"
python3 - "$WORK/follow.json" "$WORK/truth1" <<'PY' || fail "refill figures"
import json, sys
h = json.load(open(sys.argv[1]))
lines = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{")]
t = lines[-1]
tr, f, r = h["trim"], h["follow"], h["refill"]
every = f["every_s"]
print("trim: committed %d -> %d, returned %.1f MiB; stopped %.1f ms" % (tr["committed_before"], tr["committed_after"],
      r["returned_bytes"] / 2**20, r["stop_ms_per_trim"]))
print("refill: half-life %.2f s (truth %.3f s, every %.3f s), level %.1f MiB at %.2f s, kind %s" % (
      r["half_life_s"], t["half_back_s"], every, r["level_bytes"] / 2**20, r["level_at_s"], r["kind"]))
print("verdict:", r["headline"])
assert t["trims_seen"] == 1, t
# returned = the drop in committed, measured around the call; and about the hole
drop = tr["committed_before"] - tr["committed_after"]
assert r["returned_bytes"] == drop, (r["returned_bytes"], drop)
assert 0.85 * t["hole_bytes"] <= drop <= 1.02 * t["hole_bytes"], (drop, t["hole_bytes"])
truth_drop = t["rss_anon_before_trim"] - t["rss_anon_at_trim"]
assert abs(drop - truth_drop) <= 0.05 * truth_drop, (drop, truth_drop)
# the half-life within two sampling intervals of the target's own
assert abs(r["half_life_s"] - t["half_back_s"]) <= 2 * every, (r["half_life_s"], t["half_back_s"], every)
assert abs(r["half_life_s"] - t["refill_seconds"] / 2) <= 0.5, r["half_life_s"]
assert r["kind"] == "back_at_its_level", r["kind"]
assert abs(r["level_bytes"] - tr["committed_before"]) <= 0.1 * drop
assert r["level_at_s"] <= t["refill_seconds"] + 1
# the relief over the period it picked, and the words that say it
assert r["period_s"] >= 1 and 0 < r["relief_bytes"] < drop
assert "a trim every" in r["headline"] and "ms per trim" in r["headline"], r["headline"]
# the curve: starts at the trim, one point per interval, as long as asked
pts = f["points"]
assert pts[0] == [0.0, tr["committed_after"]], pts[0]
assert f["end"] == "done" and abs(pts[-1][0] - 16) <= every
assert len(pts) >= 16 / every - 2
PY
echo "ok - returned = the drop in committed; half-life within 2 intervals of the truth"
python3 - "$WORK/follow.json" <<'PY' || fail "the lead-in"
import json, sys
r = json.load(open(sys.argv[1]))["refill"]
print("lead-in: %.1f s, committed moved %.0f B/s; growing %s, overshot %s" % (
      r["lead_s"], r["lead_slope_bytes_per_s"], r["growing"], r["overshot"]))
# trim_refill holds still between trims: flat before, and back at (not past) its level
assert r["lead_s"] >= 1 and abs(r["lead_slope_bytes_per_s"]) < 1 << 20, r
assert r["growing"] is False and r["overshot"] is False, r
assert any("not growth that was going on anyway" in e for e in r["evidence"]), r["evidence"]
PY
echo "ok - the lead-in saw it flat before the trim"
grep -q "following the refill" "$WORK/follow.err" || fail "no progress line on stderr"
check "--html: the refill's chart" grep -q '<svg' "$WORK/refill.html"
check "--html: the verdict and the half-life mark" grep -q 'a trim every.*half-life' <(tr -d '\n' <"$WORK/refill.html")
expect_exit 64 "already exists" heap --trim --follow 2s --html "$WORK/refill.html" "$TPID"
expect_exit 64 "give --trim --follow too" heap --html "$WORK/other.html" "$TPID"
check "the target still runs after the follow" kill -0 "$TPID"

# --- the text view: the curve, the evidence, the verdict ---
sleep 1
vitals heap --trim --follow 3s --no-arenas "$TPID" >"$WORK/follow.txt" 2>/dev/null
check "the text follow exits 0" test $? -eq 0
check "text: the REFILL section and its verdict" grep -q '^REFILL VERDICT ' "$WORK/follow.txt"
check "text: the half-life not reached in 3 s" grep -q 'half of it was not back in the 3.0 s followed' "$WORK/follow.txt"
check "text: a follow of 3 s cannot tell yet on an 8 s refill" grep -q 'cannot tell yet: not back to its level after' "$WORK/follow.txt"

# --- SIGINT mid-follow: the partial curve kept, the target unharmed ---
sleep 9     # its refill of the last trim is done
before=$(truth_py "$TRUTH" 't["trims_seen"]')
"$B/vitals" heap --trim --follow 60s --json "$TPID" >"$WORK/stopped.json" 2>"$WORK/stopped.err" &
vp=$!
for i in $(seq 100); do    # past the lead-in and the trim: the follow has begun
	grep -q "following the refill" "$WORK/stopped.err" 2>/dev/null && break
	sleep 0.1
done
sleep 3
kill -INT "$vp"
wait "$vp"
rc=$?
check "a follow stopped by SIGINT exits 130" test $rc -eq 130
python3 - "$WORK/stopped.json" <<'PY' || fail "partial curve"
import json, sys
h = json.load(open(sys.argv[1]))
f, r = h["follow"], h["refill"]
print("stopped: %d points over %.2f s, kind %s: %s" % (len(f["points"]), f["followed_s"], r["kind"], r["headline"]))
assert f["end"] == "stopped" and 1 < f["followed_s"] < 10, f["followed_s"]
assert len(f["points"]) >= 3     # a starved vitals skips the points it missed, never bursts
assert r["kind"] == "cannot_tell_yet", r["kind"]
assert any("stopped on request" in e for e in r["evidence"]), r["evidence"]
PY
echo "ok - SIGINT keeps the partial curve"
grep -q "stopped on request" "$WORK/stopped.err" || fail "no word of the stop on stderr"
state=$(awk '/^State:/{print $2}' /proc/$TPID/status)
check "the target runs on (state $state, not stopped)" test "$state" = S -o "$state" = R
check "nothing traces it" test "$(awk '/^TracerPid:/{print $2}' /proc/$TPID/status)" = 0
sleep 8
python3 - "$TRUTH" "$before" <<'PY' || fail "the target after the stopped follow"
import json, sys
t = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")][-1]
print("target after: trims_seen %d, phase %s, rss_anon %.1f MiB, half back at %.2f s" % (
      t["trims_seen"], t["phase"], t["rss_anon"] / 2**20, t["half_back_s"]))
assert t["trims_seen"] == int(sys.argv[2]) + 1, t
# it took its trim and refilled as usual: its own clock and heap moved on
assert t["phase"] == "waiting" and t["half_back_s"] > 0
assert t["rss_anon"] >= 0.9 * t["rss_anon_before_trim"]
PY
echo "ok - the target finished its refill after the stopped follow"

# --- SIGINT in the lead-in, before the trim: nothing trimmed ---
sleep 9
before=$(truth_py "$TRUTH" 't["trims_seen"]')
"$B/vitals" heap --trim --follow 60s --lead-in 5s "$TPID" >/dev/null 2>"$WORK/lead.err" &
vp=$!
sleep 1
kill -INT "$vp"
wait "$vp"
rc=$?
check "Ctrl-C in the lead-in exits 130" test $rc -eq 130
check "... saying nothing was trimmed" grep -q "before the trim: nothing was trimmed" "$WORK/lead.err"
sleep 0.5
check "... and the target saw no trim" test "$(truth_py "$TRUTH" 't["trims_seen"]')" = "$before"

# --- vitals SIGKILLed mid-follow: the trim had returned, the follow only reads ---
sleep 9
"$B/vitals" heap --trim --follow 30s --no-arenas "$TPID" >/dev/null 2>&1 &
vp=$!
sleep 2
kill -KILL "$vp"
wait "$vp" 2>/dev/null
state=$(awk '/^State:/{print $2}' /proc/$TPID/status)
check "after vitals was killed mid-follow the target runs on (state $state)" test "$state" = S -o "$state" = R
check "and nothing traces it" test "$(awk '/^TracerPid:/{print $2}' /proc/$TPID/status)" = 0

# --- refills at once: within a tick; takes a third back: settled lower ---
start_target trim_refill --seconds 60 --refill-seconds 0 --hole-mb 32
sleep 1
vitals heap --trim --follow 4s --no-arenas --json "$TPID" >"$WORK/tick.json" 2>/dev/null
check "the within-a-tick follow exits 0" test $? -eq 0
check "refills within a tick: not a lever" test "$(jq_py "$WORK/tick.json" 'j["refill"]["kind"]')" = refills_within_a_tick
jq_py "$WORK/tick.json" 'j["refill"]["headline"]'
start_target trim_refill --seconds 60 --refill-seconds 2 --refill-share 0.3 --hole-mb 32
sleep 1
vitals heap --trim --follow 8s --no-arenas --json "$TPID" >"$WORK/lower.json" 2>/dev/null
check "the settled-lower follow exits 0" test $? -eq 0
python3 - "$WORK/lower.json" <<'PY' || fail "settled lower"
import json, sys
r = json.load(open(sys.argv[1]))["refill"]
print(r["kind"], "--", r["headline"])
assert r["kind"] == "settled_lower", r["kind"]
assert 0.55 * r["returned_bytes"] <= r["held_for_good_bytes"] <= 0.8 * r["returned_bytes"]
PY
echo "ok - a refill of 30% settles lower and says what stays returned"

# --- the target exits during the follow ---
start_target trim_refill --seconds 4 --refill-seconds 20 --hole-mb 16
sleep 1
"$B/vitals" heap --trim --follow 20s --lead-in 0 --no-arenas --json "$TPID" >"$WORK/gone.json" 2>"$WORK/gone.err"
rc=$?
check "a target gone during the follow exits 4" test $rc -eq 4
grep -q "exited during the follow" "$WORK/gone.err" || fail "no word of the exit"
python3 - "$WORK/gone.json" <<'PY' || fail "the curve up to the exit"
import json, sys
f = json.load(open(sys.argv[1]))["follow"]
print("gone: %d points over %.2f s, end %s" % (len(f["points"]), f["followed_s"], f["end"]))
assert f["end"] == "target_exited" and 1 < f["followed_s"] < 6 and len(f["points"]) >= 5
PY
echo "ok - the curve up to the exit is reported"

# --- usage, and a refusal before anything is stopped ---
expect_exit 64 "give --trim too" heap --follow 10s "$TPID"
expect_exit 64 "is for --follow" heap --trim --follow-every 1s 1
expect_exit 64 "is not a duration" heap --trim --follow soon 1
cat >"$WORK/spin.c" <<'EOF'
#include <unistd.h>
int main(void) { for (;;) sleep(1); }
EOF
if cc -static -O1 -o "$WORK/static_spin" "$WORK/spin.c" 2>/dev/null; then
	"$WORK/static_spin" &
	sp=$!
	PIDS+=("$sp")
	sleep 0.3
	expect_exit 8 "not supported|statically" heap --trim --follow 10s "$sp"
	check "the refused target was never traced" test "$(awk '/^TracerPid:/{print $2}' /proc/$sp/status)" = 0
else
	echo "# no static libc: the refusal of a static executable is not tested here (t0210 does)"
fi
exit 0

#!/usr/bin/env bash
# vitals soak + analyze on the targets that reproduce each memory story:
# slow_leak → leak at the target's own rate (±20%), step_growth → one step at
# the right time (at the first sample after it) and size (±10%), a short recording → cannot
# tell yet.  The soaks run side by side to keep the test short; each verdict
# is about its own target's memory.  arena_churn's plateau (three minutes of
# soaking) is t0401, in the shared lane: this one stays solo for the step's
# timing.
# lane: solo — verdicts and the sampler's step time rest on the sampling cadence
. "$(dirname "$0")/lib.sh"

truth_rate() {  # leaked bytes per second between the first and last truth lines with a leak
	python3 - "$1" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
rows = [r for r in rows if r.get("phase") in ("leaking", "capped")]
a, b = rows[0], rows[-1]
print((b["leaked_bytes"] - a["leaked_bytes"]) / (b["t"] - a["t"]))
PY
}

# --- three soaks at once: leak, step, and a short one ---------------------------
vitals soak -q -o "$WORK/leak.db" --every 0.5s --for 40s -- \
	"$T/targets/slow_leak" --truth "$WORK/leak.truth" --rate-kb-per-s 1024 --seconds 120 \
	>"$WORK/leak.soak" 2>&1 &
leak_pid=$!
vitals soak -q -o "$WORK/step.db" --every 0.25s --for 32s -- \
	"$T/targets/step_growth" --truth "$WORK/step.truth" --step-at 14 --step-mb 64 --seconds 120 \
	>"$WORK/step.soak" 2>&1 &
step_pid=$!
vitals soak -q -o "$WORK/short.db" --every 0.5s --for 4s -- \
	"$T/targets/slow_leak" --seconds 120 >"$WORK/short.soak" 2>&1 ||
	fail "short soak: $(cat "$WORK/short.soak")"
wait $leak_pid || fail "leak soak: $(cat "$WORK/leak.soak")"
wait $step_pid || fail "step soak: $(cat "$WORK/step.soak")"
check "soak says where the recording went and what next" grep -q "next: vitals analyze $WORK/leak.db" "$WORK/leak.soak"

# --- slow leak -----------------------------------------------------------------
vitals analyze --json "$WORK/leak.db" >"$WORK/leak.json" || fail "analyze leak.db"
truth=$(truth_rate "$WORK/leak.truth")
rate=$(jq_py "$WORK/leak.json" 'j["verdict"]["slope"]["bytes_per_s"]')
echo "# slow_leak: verdict $(jq_py "$WORK/leak.json" 'j["verdict"]["kind"]'), rate $rate B/s, truth $truth B/s"
check "slow_leak is a leak" test "$(jq_py "$WORK/leak.json" 'j["verdict"]["kind"]')" = leak
check "leak rate within 20% of the target's truth" \
	python3 -c "import sys; sys.exit(abs($rate - $truth) > 0.2 * $truth)"
check "the rate comes with an interval around it" \
	python3 -c "import sys; lo, hi = $(jq_py "$WORK/leak.json" '[j["verdict"]["slope"]["lo"], j["verdict"]["slope"]["hi"]]'); sys.exit(not (lo <= $rate <= hi))"
vitals analyze "$WORK/leak.db" >"$WORK/leak.txt" || fail "analyze text"
check "text names the verdict" grep -q "verdict: leak" "$WORK/leak.txt"
check "text shows the q1->q4 floor drift" grep -qi "floor drift" "$WORK/leak.txt"

# --- step growth ---------------------------------------------------------------
vitals analyze --json "$WORK/step.db" >"$WORK/step.json" || fail "analyze step.db"
step_t=$(jq_py "$WORK/step.json" 'j["verdict"]["step"]["t"]')
step_b=$(jq_py "$WORK/step.json" 'j["verdict"]["step"]["bytes"]')
truth_t=$(truth_py "$WORK/step.truth" 't["step_at_t"]')
truth_b=$(truth_py "$WORK/step.truth" 't["step_bytes"]')
echo "# step_growth: verdict $(jq_py "$WORK/step.json" 'j["verdict"]["kind"]'), step at $step_t s of $step_b B; truth $truth_t s, $truth_b B"
check "step_growth is a step" test "$(jq_py "$WORK/step.json" 'j["verdict"]["kind"]')" = step
# The step is placed at a recorded sample: not before it was due, and no later
# than the first sample taken after it was complete.  The interval is 0.25 s,
# but on a busy host a sample can come late; the check follows the samples the
# recording really holds, found by unix time (the target's own clock starts
# after its launch, which a loaded host can delay), within 1 s in any case.
due_t=$(truth_py "$WORK/step.truth" 't["step_at_s"]')
done_wall=$(truth_py "$WORK/step.truth" 't["step_at_wall"]')
next_t=$(python3 -c "
import sqlite3
db = sqlite3.connect('$WORK/step.db')
print(db.execute('SELECT min(t) FROM samples WHERE wall >= ?', ($done_wall,)).fetchone()[0])")
echo "# step due at $due_t s, first sample after it was complete at $next_t s"
check "step time between when it was due and the first sample after it was complete" \
	python3 -c "import sys; sys.exit(not ($due_t - 0.05 <= $step_t <= $next_t + 0.02 and abs($step_t - $truth_t) <= 1))"
check "step size within 10% of the truth" \
	python3 -c "import sys; sys.exit(abs($step_b - $truth_b) > 0.1 * $truth_b)"

# --- too short -------------------------------------------------------------------
vitals analyze --json "$WORK/short.db" >"$WORK/short.json" || fail "analyze short.db"
check "a 4 s recording cannot tell yet" test "$(jq_py "$WORK/short.json" 'j["verdict"]["kind"]')" = cannot_tell
check "and says how much longer to soak" \
	python3 -c "import sys; sys.exit(not $(jq_py "$WORK/short.json" 'j["verdict"]["need_more_s"]') > 0)"

# --- CSV and HTML views of the same recording ------------------------------------
vitals analyze --csv "$WORK/leak.csv" --html "$WORK/leak.html" "$WORK/leak.db" >/dev/null || fail "csv/html"
check "CSV has a header and one row per sample" \
	test "$(($(wc -l <"$WORK/leak.csv") - 1))" -ge 70
check "HTML is one file with inline SVG" grep -q "<svg" "$WORK/leak.html"
check "HTML loads nothing from the network" \
	python3 -c "import re, sys; t = open('$WORK/leak.html').read(); sys.exit(bool(re.search(r'(src|href)=\"(https?:)?//', t)))"

#!/usr/bin/env bash
# vitals experiment --trim-every: an arm whose soak calls malloc_trim(0) in
# the command periodically, against a plain arm, compared.  On trim_refill
# (64 MiB a trim returns, taken back over 8 s after each trim) a trim every
# 10 s holds committed lower for most of each period: the trim arm's median
# is lower by more than 10%; each trim is an event in its recording with
# what it returned and how long a thread was stopped; the plain arm has none.
# lane: solo — the arms' committed memory is compared
. "$(dirname "$0")/lib.sh"

vitals experiment -q --for 25s --every 0.5s -o "$WORK/exp" \
	--arm plain --arm trim10 --trim-every trim10=10s -- \
	"$T/targets/trim_refill" --seconds 300 --refill-seconds 8 --hole-mb 64 >"$WORK/exp.txt" 2>"$WORK/exp.err" ||
	fail "experiment: $(cat "$WORK/exp.err")"
cat "$WORK/exp.txt"
check "the table names the trim arm with its trims" grep -q "trim10 (malloc_trim every 10 s)" "$WORK/exp.txt"

vitals compare --json "$WORK/exp/plain.db" "$WORK/exp/trim10.db" >"$WORK/cmp.json" || fail "compare --json"
field() {  # field KEY ARM KEY2: the fields table, one arm's figure
	jq_py "$WORK/cmp.json" "[f for f in j['fields'] if f['key'] == '$1'][0]['arms'][$2]['$3']"
}
pct=$(field committed 1 pct)
echo "# committed: plain $(field committed 0 median) B, trim10 $(field committed 1 median) B ($pct%)"
check "a trim every 10 s holds committed lower by more than 10%" python3 -c "import sys; sys.exit(not $pct < -10)"
# the trim arm's 5th-95th percentile range reaches the plain arm's level: a sawtooth, not noise,
# so compare makes no noise judgement on its memory rows and says why
check "the trim arm's committed is not called within noise" test "$(field committed 1 within_noise)" = false
check "... but trimmed" test "$(field committed 1 trimmed)" = true
vitals compare "$WORK/exp/plain.db" "$WORK/exp/trim10.db" >"$WORK/cmp.txt" || fail "compare"
check "the text says the range is the swing between trims" grep -q "trimmed: trim10's soak called malloc_trim(0)" "$WORK/cmp.txt"

vitals analyze --json "$WORK/exp/trim10.db" >"$WORK/trim10.json" || fail "analyze trim10"
vitals analyze --json "$WORK/exp/plain.db" >"$WORK/plain.json" || fail "analyze plain"
python3 - "$WORK/trim10.json" "$WORK/plain.json" <<'PY' || fail "trim events"
import json, re, sys
ev = [e for e in json.load(open(sys.argv[1]))["events"] if e["kind"] == "trim"]
for e in ev:
    print("trim event at t+%.1f s: %s" % (e["t"], e["detail"]))
assert len(ev) >= 2, ev
for e in ev:
    m = re.match(r"malloc_trim\(0\): committed ([\d.]+) MiB -> ([\d.]+) MiB \(-([\d.]+) MiB\); a thread stopped ([\d.]+) ms", e["detail"])
    assert m, e["detail"]
    assert 50 <= float(m.group(3)) <= 66, m.group(3)     # the 64 MiB hole, less a page a chunk
    assert float(m.group(4)) < 1000
plain = [e for e in json.load(open(sys.argv[2]))["events"] if e["kind"] == "trim"]
assert not plain, plain
PY
echo "ok - each trim is an event with what it returned and the stop; none in the plain arm"

# a --trim-every that names no arm is refused before anything runs
expect_exit 64 "names 'nope', which is no --arm" experiment --for 2s -o "$WORK/bad" --arm a --arm b \
	--trim-every nope=10s -- "$T/targets/trim_refill"
expect_exit 64 "not ARM=DURATION" experiment --for 2s -o "$WORK/bad" --arm a --arm b --trim-every 10s -- true

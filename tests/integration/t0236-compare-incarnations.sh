#!/usr/bin/env bash
# t0236 — a restart A/B at matched age inside one recording: a soak follows a
# service by name across a restart, the two incarnations hold known amounts
# (step_growth --step-mb 16, then 48), and `vitals compare REC.db` sets them
# side by side at the same age since each process started: the committed
# difference at the last age both reached is the truth's (32 MiB) within 10%,
# beyond noise, and each incarnation's age is its process's (the truth's own
# clock) within a sampling interval.  Also --json, --html, --by-age on two
# recordings, a recording made before starts were recorded (ages from the first
# sample, said so), and the bad inputs: one incarnation (exit 15, said so),
# ages that do not overlap (exit 15, with their spans), a file that is not a
# recording (exit 9).
. "$(dirname "$0")/lib.sh"

NAME=agesvc$$
# an older process for the no-overlap case: soaked by pid at the end, its ages start late
start_target step_growth --step-at 1 --step-mb 8 --churn-mb 2 --seconds 60
OLD=$TPID

vitals soak --name "$NAME" --every 0.25s --for 20s --wait 10s -o "$WORK/run.db" >"$WORK/soak.out" 2>&1 &
SOAK=$!
PIDS+=("$SOAK")
ARGV0=$NAME start_target step_growth --step-at 1 --step-mb 16 --churn-mb 4 --seconds 8
A_TRUTH=$TRUTH
wait "$TPID"
sleep 0.5
ARGV0=$NAME start_target step_growth --step-at 1 --step-mb 48 --churn-mb 4 --seconds 60
B_TRUTH=$TRUTH
wait "$SOAK" || { cat "$WORK/soak.out"; fail "the soak failed"; }
kill "$TPID"
grep -q "restarted 1 time" "$WORK/soak.out" || { cat "$WORK/soak.out"; fail "the soak did not follow the restart"; }

# the truth: what each incarnation held by its step, and how long the first one ran
A_HELD=$(truth_py "$A_TRUTH" 't["step_held_bytes"]')
B_HELD=$(truth_py "$B_TRUTH" 't["step_held_bytes"]')
A_RAN=$(truth_py "$A_TRUTH" 't["t"]')
echo "truth: first holds $A_HELD B, second $B_HELD B; the first ran $A_RAN s"

vitals compare --json "$WORK/run.db" >"$WORK/age.json" || fail "compare --json on one recording"
check "two incarnations, each start recorded" \
	test "$(jq_py "$WORK/age.json" '[len(j["arms"]), j["ages_from"], all(a["start_recorded"] for a in j["arms"])]')" = '[2, "start", true]'
check "the first incarnation, which exited, is the younger" \
	test "$(jq_py "$WORK/age.json" '[j["arms"][0]["younger"], j["arms"][0]["exited"], j["arms"][1]["exited"]]')" = '[true, true, false]'
check "its age at its last sample is its own clock's (truth) within a sampling interval" \
	python3 -c "import sys; a=$(jq_py "$WORK/age.json" 'j["arms"][0]["age_last_s"]'); sys.exit(0 if abs(a - $A_RAN) < 0.5 else 1)"
check "the windows end at the last age both reached" \
	python3 - "$WORK/age.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
w = j["windows"]
assert 1 <= len(w) <= 5, len(w)
assert w[-1]["headline"] and abs(w[-1]["age_s"] - j["common_ages"]["to_s"]) < 1e-6
assert abs(j["common_ages"]["to_s"] - j["arms"][0]["age_last_s"]) < 1e-6
assert all(a["age_s"] < b["age_s"] for a, b in zip(w, w[1:]))
assert all(min(x["samples"]) >= 2 for x in w), [x["samples"] for x in w]
PY
python3 - "$WORK/age.json" "$A_HELD" "$B_HELD" >"$WORK/delta" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
want = int(sys.argv[3]) - int(sys.argv[2])
f = next(f for f in j["windows"][-1]["fields"] if f["key"] == "committed")
d = f["arms"][1]
print(d["delta"], want, d["within_noise"], f["arms"][0]["median"], d["median"])
PY
read -r GOT WANT NOISE MA MB <"$WORK/delta"
echo "at the last common age: committed $MA vs $MB B, delta $GOT B, truth $WANT B"
check "committed differs by the known amount within 10%" \
	python3 -c "import sys; sys.exit(0 if abs($GOT - $WANT) <= 0.1 * $WANT else 1)"
check "... and not within noise" test "$NOISE" = False

vitals compare "$WORK/run.db" >"$WORK/age.txt" || fail "compare on one recording"
check "the text says the headline at the last common age" grep -qE '^at t\+[0-9.]+ s: committed [0-9.]+ MiB \(#1\) vs [0-9.]+ MiB \(#2\), \+3[0-9.]+ MiB' "$WORK/age.txt"
check "... compare's table there, and the metric at each matched age" \
	grep -q "committed at each matched age" "$WORK/age.txt"
check "... and where the ages count from" grep -q "since each process started" "$WORK/age.txt"
vitals compare --html "$WORK/age.html" "$WORK/run.db" >/dev/null || fail "compare --html"
check "the HTML charts both incarnations against age since start" \
	grep -q "age: time since the process started" "$WORK/age.html"
check "... one chart per recorded memory figure, at least committed" test "$(grep -c '<svg' "$WORK/age.html")" -ge 1

# a recording made before vitals recorded starts: ages from each first sample, said so
cp "$WORK/run.db" "$WORK/old.db"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('DROP TABLE processes'); c.execute('PRAGMA user_version=6'); c.commit()" "$WORK/old.db"
vitals compare --json "$WORK/old.db" >"$WORK/old.json" || fail "compare on a schema 6 recording"
check "a recording without starts counts ages from the first sample and says so" \
	test "$(jq_py "$WORK/old.json" '[j["ages_from"], any(a["start_recorded"] for a in j["arms"])]')" = '["first_sample", false]'

# two recordings, each of one incarnation, compared by age
vitals soak --every 0.2s --for 3s -o "$WORK/one.db" -- "$T/targets/step_growth" --step-at 0.5 --step-mb 8 --churn-mb 2 \
	>/dev/null 2>&1 || fail "soak of a launched command"
vitals compare --by-age --json --incarnations 3,1 "$WORK/run.db" "$WORK/one.db" >"$WORK/two.json" ||
	fail "compare --by-age on two recordings"
check "--by-age takes the incarnations of both recordings, --incarnations picks them" \
	test "$(jq_py "$WORK/two.json" '[a["name"] for a in j["arms"]]')" = '["one", "run #1"]'

# bad input
expect_exit 15 "holds one incarnation of its process .*no restart" compare "$WORK/one.db"
vitals soak --every 0.2s --for 2s -o "$WORK/late.db" "$OLD" >/dev/null 2>&1 || fail "soak of a running pid"
expect_exit 15 "ages since their start do not overlap: late \(pid $OLD\) t\+[0-9]+ s–[0-9]+ s, one \(pid [0-9]+\) t\+" \
	compare --by-age "$WORK/late.db" "$WORK/one.db"
expect_exit 64 "incarnations 4: the recordings hold 3" compare --incarnations 1,4 "$WORK/run.db" "$WORK/one.db"
printf 'not a recording at all, just bytes\n' >"$WORK/junk.db"
expect_exit 9 "not a vitals recording" compare "$WORK/junk.db"

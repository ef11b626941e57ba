#!/usr/bin/env bash
# vitals experiment + compare: the report's controlled experiment on the
# arena-churn target.  The same command under default glibc and under
# MALLOC_ARENA_MAX=2, soaked one after the other; the cap must show a large
# committed drop that is not within noise, and the arena counts must differ.
# lane: solo — the arms' arena counts and CPU are compared
. "$(dirname "$0")/lib.sh"

vitals experiment -q --for 30s --every 0.5s -o "$WORK/exp" --html "$WORK/exp.html" \
	--arm default --arm cap2:MALLOC_ARENA_MAX=2 -- \
	"$T/targets/arena_churn" --seconds 300 >"$WORK/exp.txt" 2>"$WORK/exp.err" ||
	fail "experiment: $(cat "$WORK/exp.err")"
cat "$WORK/exp.txt"
check "every arm's recording is kept" test -s "$WORK/exp/default.db" -a -s "$WORK/exp/cap2.db"
check "the command's output is kept beside it" test -e "$WORK/exp/cap2.db.out"
check "the table names both arms" grep -q "cap2" "$WORK/exp.txt"
check "the HTML has the overlaid curves" grep -q "<svg" "$WORK/exp.html"

vitals compare --json "$WORK/exp/default.db" "$WORK/exp/cap2.db" >"$WORK/cmp.json" || fail "compare --json"
field() {  # field KEY ARM KEY2: the fields table, one arm's figure
	jq_py "$WORK/cmp.json" "[f for f in j['fields'] if f['key'] == '$1'][0]['arms'][$2]['$3']"
}
base=$(field committed 0 median)
capd=$(field committed 1 median)
pct=$(field committed 1 pct)
echo "# committed: default $base B, cap2 $capd B ($pct%)"
check "the arms are named by the experiment" \
	test "$(jq_py "$WORK/cmp.json" '[a["name"] for a in j["arms"]]')" = '["default", "cap2"]'
check "MALLOC_ARENA_MAX=2 cuts committed by more than 30%" python3 -c "import sys; sys.exit(not $pct < -30)"
check "and that is not within noise" \
	test "$(field committed 1 within_noise)" = false
check "fewer arenas under the cap" python3 -c "import sys; sys.exit(not $(field arenas 1 median) < $(field arenas 0 median))"
vitals compare "$WORK/exp/default.db" "$WORK/exp/cap2.db" >"$WORK/cmp.txt" || fail "compare text"
check "text table has the committed row" grep -qE "^  committed  +[0-9]" "$WORK/cmp.txt"
vitals compare --csv - "$WORK/exp/default.db" "$WORK/exp/cap2.db" >"$WORK/cmp.csv" || fail "compare --csv"
check "CSV has a header" grep -q "^arm,field" "$WORK/cmp.csv"

# {arm} in the command becomes each arm's name; the arm's environment reaches it
vitals experiment -q --for 2s --every 0.5s -o "$WORK/named" --arm one --arm two:VT_ARM_ENV=set -- \
	sh -c 'echo "{arm} ${VT_ARM_ENV:-unset}" >"$0"; exec "$1" --seconds 60' "$WORK/named/{arm}.txt" \
	"$T/targets/arena_churn" >"$WORK/named.txt" 2>&1 || fail "experiment with {arm}: $(cat "$WORK/named.txt")"
check "{arm} is each arm's name, and each has its own environment" \
	test "$(cat "$WORK/named/one.txt" "$WORK/named/two.txt")" = "$(printf 'one unset\ntwo set')"

# two recordings with one file name are told apart by their folders
mkdir -p "$WORK/a" "$WORK/b"
cp "$WORK/named/one.db" "$WORK/a/run.db"
cp "$WORK/named/one.db" "$WORK/b/run.db"
sqlite_arm() { python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(\"update meta set value='' where key='arm'\"); c.commit()" "$1"; }
sqlite_arm "$WORK/a/run.db" && sqlite_arm "$WORK/b/run.db"
vitals compare --json "$WORK/a/run.db" "$WORK/b/run.db" >"$WORK/ab.json" || fail "compare a/run.db b/run.db"
check "same-named recordings get distinct labels" \
	test "$(jq_py "$WORK/ab.json" '[a["name"] for a in j["arms"]]')" = '["a/run", "b/run"]'

# Ctrl-C in the first arm: 130, stopped on request, what was recorded kept (it was exit 2,
# "fewer than two arms were recorded")
"$B/vitals" experiment -q --for 30s --every 0.5s -o "$WORK/stopped" --arm one --arm two -- \
	"$T/targets/arena_churn" --seconds 60 >"$WORK/stopped.txt" 2>"$WORK/stopped.err" &
exp_pid=$!
for _ in $(seq 100); do [ -s "$WORK/stopped/one.db" ] && break; sleep 0.1; done
sleep 2
kill -INT "$exp_pid"
wait "$exp_pid"
rc=$?
cat "$WORK/stopped.err"
check "Ctrl-C during an experiment exits 130 (got $rc)" test "$rc" = 130
check "it says it was stopped on request" grep -q "stopped on request" "$WORK/stopped.err"
check "the arm it was soaking is kept" test -s "$WORK/stopped/one.db"
check "and listed" grep -q "stopped/one.db" "$WORK/stopped.txt"

expect_exit 64 "at least two --arm" experiment --for 5s --arm default -- /bin/true
expect_exit 64 "is not NAME" experiment --for 5s --arm "bad name" --arm x -- /bin/true
# -o through a symbolic link: refused before anything is made (a file was made, then it failed)
mkdir "$WORK/real" && ln -s "$WORK/real" "$WORK/link"
expect_exit 64 "is a symbolic link, not a folder" experiment --for 5s --arm a --arm b -o "$WORK/link" -- /bin/true
check "nothing was made through the link" test -z "$(ls -A "$WORK/real")"
expect_exit 15 "holds one incarnation" compare "$WORK/exp/default.db"

# --- 30 s of churn is too early for a verdict --------------------------------------
# arena_churn's floor still creeps in its first minutes (each arena's high-water
# mark rises by rarer and rarer records, the report's 65-85 minutes of
# settling in small); t0430 soaks it long enough for the plateau.
vitals analyze --json "$WORK/exp/default.db" >"$WORK/churn.json" || fail "analyze default.db"
echo "# arena_churn default, 30 s: $(jq_py "$WORK/churn.json" 'j["verdict"]["why"]')"
check "30 s of arena churn is not called a leak" \
	python3 -c "import sys; sys.exit('$(jq_py "$WORK/churn.json" 'j["verdict"]["kind"]')' == 'leak')"

#!/usr/bin/env bash
# vitals soak when the target cannot be had: a followed process that exits
# and never comes back ends the soak after --wait-back (or at --for, if
# sooner) with exit 4, a note on stderr and in the recording (not exit 0 at
# --for, not for ever); a
# process vitals may not ptrace-read (another user's) is recorded without
# the parts that need it, which are named once, on stderr and in the
# recording, with exit 1.
# sanitizer: the soak when its target exits or becomes unreadable
. "$(dirname "$0")/lib.sh"

events_py() {   # events_py DB EXPR: EXPR on the recording's events (as ev, a list of dicts)
	vitals analyze --json "$1" >"$WORK/an.json" || fail "analyze $1"
	jq_py "$WORK/an.json" "(lambda ev: $2)(j['events'])"
}

# --- a pid that exits and never comes back ----------------------------------------------
start_target slow_leak --seconds 60
t0=$(date +%s.%N)
"$B/vitals" soak -q -o "$WORK/gone.db" --every 0.2s --for 60s --wait-back 2s "$TPID" \
	>"$WORK/gone.out" 2>"$WORK/gone.err" &
soak=$!
sleep 1.5
kill "$TPID"
wait "$soak"
rc=$?
took=$(python3 -c "import time; print(round($(date +%s.%N) - $t0, 1))")
echo "# soak ended after $took s, rc $rc: $(cat "$WORK/gone.err")"
check "exit 4 when the target never came back" test "$rc" = 4
check "within --wait-back, not at --for" python3 -c "import sys; sys.exit(not $took < 15)"
check "stderr says it did not come back" grep -q "exited and no process to follow came back within 2 s (--wait-back)" "$WORK/gone.err"
check "the summary says so" grep -q "the target exited and did not come back" "$WORK/gone.out"
check "the recording's stop event says so" \
	test "$(events_py "$WORK/gone.db" '[e["detail"] for e in ev if e["kind"] == "stop"][0]')" = \
	"process $TPID exited and no process to follow came back within 2 s (--wait-back)"
check "and the exit before it" test "$(events_py "$WORK/gone.db" '[e["kind"] for e in ev][-2:]')" = '["exit", "stop"]'

# --for ends the wait first: the target is gone all the same (exit 4), not "--for reached"
start_target slow_leak --seconds 60
"$B/vitals" soak -q -o "$WORK/short.db" --every 0.2s --for 3s "$TPID" >"$WORK/short.out" 2>"$WORK/short.err" &
soak=$!
sleep 1
kill "$TPID"
wait "$soak"
rc=$?
echo "# --for 3s, the target killed at 1 s: rc $rc: $(cat "$WORK/short.err")"
check "exit 4 when --for ends before the target came back" test "$rc" = 4
check "... and stderr says so" grep -q "exited and no process to follow came back in the [0-9]* s before --for ended" \
	"$WORK/short.err"

# --wait-back 0 keeps the old behaviour: wait until --for
start_target slow_leak --seconds 60
vitals soak -q -o "$WORK/forever.db" --every 0.2s --for 4s --wait-back 0 "$TPID" >/dev/null 2>&1 &
soak=$!
sleep 1
kill "$TPID"
wait "$soak"
check "--wait-back 0 waits until --for (exit 0)" test $? = 0

# --- another user's process: what needs ptrace access is named, once ---------------------
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	start_target slow_leak --seconds 60
	chmod o+x "$WORK" && mkdir -p "$WORK/nobody" && chmod 777 "$WORK/nobody"   # nobody writes there
	setpriv --reuid=65534 --regid=65534 --clear-groups "$B/vitals" soak -o "$WORK/nobody/other.db" \
		--every 0.2s --threads-every 0.4s --smaps-every 0.4s --for 3s "$TPID" \
		>"$WORK/other.out" 2>"$WORK/other.err"
	rc=$?
	echo "# another user's process: rc $rc: $(grep -v '^ *\[' "$WORK/other.err" | tr '\n' ' ')"
	check "exit 1: partial" test "$rc" = 1
	check "stderr names what is not recorded, once" \
		test "$(grep -c "cannot be read in full (maps: the process belongs to uid 0 and vitals runs as uid 65534): arenas, regions_64m (maps), pss (smaps_rollup), threads' wchan and syscall are not recorded" "$WORK/other.err")" = 1
	check "the summary too" grep -q "^not recorded (the target could not be read in full): arenas, regions_64m" "$WORK/other.out"
	check "the recording has it once, as an event" \
		test "$(events_py "$WORK/nobody/other.db" 'len([e for e in ev if "not recorded: arenas, regions_64m (maps), pss (smaps_rollup)" in e["detail"]])')" = 1
	check "the memory figures are there all the same" python3 - "$WORK/nobody/other.db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
rows = c.execute("select committed, rss_anon, arenas, pss from samples").fetchall()
assert len(rows) >= 10, rows
assert all(r[0] and r[1] for r in rows), rows          # committed, rss_anon: from status
assert all(r[2] is None and r[3] is None for r in rows), rows   # arenas (maps), pss: not readable
PY
else
	echo "# another user's process: needs root and setpriv to drop to nobody"
fi
exit 0

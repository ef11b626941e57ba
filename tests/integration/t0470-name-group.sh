#!/usr/bin/env bash
# t0470 — --name gets one answer from soak, snap, threads and serve (issue 22,
# item 13): a name that is a parent and its same-named workers (slow_leak
# --workers 2, as nginx runs a master and its workers) is refused by soak, snap
# and threads with the three processes (pid, parent, role, RSS) and the commands
# to type, before anything is printed or any file made, also when the name
# appears while soak waits for it; serve sums all three and says which at start.
# A name that is one process is that process in every command.
. "$(dirname "$0")/lib.sh"

# group_pids PARENT: the parent and its children, one line
group_pids() {
	local i
	for i in $(seq 50); do
		[ "$(pgrep -P "$1" | wc -l)" -ge 2 ] && break
		sleep 0.1
	done
	echo "$1 $(pgrep -P "$1" | sort -n | tr '\n' ' ')"
}

# refused WHAT ARGS...: exit 64, every pid of the group listed with its role, nothing on stdout
refused() {
	local what=$1 p
	shift
	expect_exit 64 "is 3 processes, a parent and its 2 same-named children" "$@"
	for p in $GROUP; do
		grep -qE "^ +$p +[0-9]+  (parent|child of $GPID) " "$WORK/err" || { cat "$WORK/err"; fail "$what: pid $p not listed"; }
	done
	check "$what: the command to type for one pid" grep -qE "one of them: +vitals $what.* [0-9]+ " "$WORK/err"
	check "$what: all of them side by side" grep -q "vitals snap $GPID " "$WORK/err"
	check "$what: no progress printed before the refusal" test "$(grep -c "recording into" "$WORK/err")" = 0
}

ARGV0=vt-t0470-group start_target slow_leak --seconds 60 --workers 2 --rate-kb-per-s 64 --churn-mb 4
GPID=$TPID
GROUP=$(group_pids "$GPID")
echo "# the group: $GROUP"

refused snap snap --name vt-t0470-group
refused threads threads -i 0.5s --name vt-t0470-group
refused soak soak -o "$WORK/group.db" --for 2s --name vt-t0470-group
check "soak: no recording made" test ! -e "$WORK/group.db"

# --- the name appears while soak waits for it: refused as well, and nothing made ---
cp "$T/targets/slow_leak" "$WORK/vt-t0470-late"
"$B/vitals" soak -o "$WORK/late.db" --wait 10s --for 2s --name vt-t0470-late >"$WORK/late.out" 2>"$WORK/late.err" &
soak=$!
sleep 0.7
"$WORK/vt-t0470-late" --seconds 30 --workers 2 --churn-mb 4 >/dev/null 2>&1 &
PIDS+=("$!")
wait $soak
rc=$?
check "soak waiting for a name that comes as a group: exit 64 (got $rc)" test $rc = 64
check "... with the list" grep -q "is 3 processes, a parent and its 2 same-named children" "$WORK/late.err"
check "... before anything is printed" test "$(grep -c "recording into" "$WORK/late.err")" = 0
check "... and no recording made" test ! -e "$WORK/late.db"

# --- serve sums the group and says which pids ---
if "$B/vitals" serve --listen 127.0.0.1:0 --name vt-t0470-group 2>"$WORK/serve.err" &
then
	spid=$!
	PIDS+=("$spid")
	for _ in $(seq 50); do grep -q "listening on\|libmicrohttpd" "$WORK/serve.err" && break; sleep 0.1; done
	if grep -q "listening on" "$WORK/serve.err"; then
		line=$(grep "^vitals serve: --name vt-t0470-group" "$WORK/serve.err")
		echo "# $line"
		check "serve says it sums 3 processes" grep -q "is 3 processes, summed: $GPID parent" <<<"$line"
		for p in $GROUP; do
			check "serve names pid $p" grep -qE "[ ,]$p (parent|child of $GPID)" <<<"$line"
		done
		if command -v curl >/dev/null; then
			url=$(sed -nE 's#^vitals serve: listening on (http://[^ ]+) .*#\1#p' "$WORK/serve.err")
			curl -s --max-time 10 "$url" >"$WORK/metrics"
			check "serve's target is the 3 processes" grep -q '^vitals_target_processes{target="vt-t0470-group"} 3' "$WORK/metrics"
		fi
	else
		echo "# serve did not start (no libmicrohttpd?): $(cat "$WORK/serve.err")"
	fi
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
fi
kill "$GPID"

# --- a name that is one process is that process, in every command ---
ARGV0=vt-t0470-alone start_target slow_leak --seconds 60 --churn-mb 4
vitals snap --json --name vt-t0470-alone >"$WORK/alone.json" || fail "snap --name of one process"
check "snap --name: that process" test "$(jq_py "$WORK/alone.json" 'j["processes"][0]["pid"]')" = "$TPID"
vitals threads --json -i 0.5s --name vt-t0470-alone >"$WORK/threads.json" || fail "threads --name of one process"
check "threads --name: that process" test "$(jq_py "$WORK/threads.json" 'j["pid"]')" = "$TPID"
vitals soak -q -o "$WORK/alone.db" --every 0.2s --for 1s --name vt-t0470-alone >"$WORK/soak.out" 2>&1 ||
	fail "soak --name of one process: $(cat "$WORK/soak.out")"
check "soak --name: recorded" test -s "$WORK/alone.db"
expect_exit 3 "no process named 'vt-t0470-none'" snap --name vt-t0470-none
expect_exit 3 "no process named 'vt-t0470-none'" threads --name vt-t0470-none
expect_exit 64 "PIDs or --name, not both" snap --name vt-t0470-alone "$TPID"
echo "all passed"

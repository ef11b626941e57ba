#!/usr/bin/env bash
# Bad input: each gets one clear line on stderr, a distinct exit status and no
# table of zeros.  No such pid, a kernel thread, a zombie, another user's
# process (partial: what can be read is shown, the rest is marked), garbage
# arguments, a process that exits while being read.
# sanitizer: every refusal path of snap (no pid, kernel thread, zombie, a target gone mid-read)
. "$(dirname "$0")/lib.sh"

# no such process: a pid that cannot exist (above pid_max)
pid_max=$(cat /proc/sys/kernel/pid_max)
expect_exit 3 "no process $((pid_max + 1))" snap $((pid_max + 1))
check "no table for a missing pid" test ! -s "$WORK/out"
"$B/vitals" snap --json $((pid_max + 1)) >"$WORK/out.json" 2>/dev/null
check "--json says why, in errors[], with no process entry" test "$(jq_py "$WORK/out.json" \
	'(len(j["processes"]), j["errors"][0]["code"], j["errors"][0]["exit_status"])')" = '[0, "NOPROC", 3]'

# kernel thread
kt=$(kernel_thread)
if [ -n "$kt" ]; then
	expect_exit 6 "kernel thread" snap "$kt"
else
	echo "# no kernel thread visible in this pid namespace; covered by the recorded fixture"
fi
# and on a recorded kernel thread, always
FX=$VT_FIXTURES/proc/files
mkdir -p "$WORK/kt/proc/2"
cp "$FX/kthreadd.stat" "$WORK/kt/proc/2/stat"
cp "$FX/kthreadd.status" "$WORK/kt/proc/2/status"
expect_exit 6 "kernel thread" --proc-root "$WORK/kt/proc" --sys-root "$WORK/kt" snap 2

# zombie: a child its parent never reaps
bash -c 'sleep 0.1 & exec sleep 30' &
PIDS+=($!)
sleep 0.6
zp=$(ps -o pid=,stat= --ppid $! | awk '$2 ~ /^Z/ {print $1}')
[ -n "$zp" ] || fail "could not make a zombie"
expect_exit 7 "zombie" snap "$zp"

# garbage arguments
expect_exit 64 "not a process id" snap abc
expect_exit 64 "not a process id" snap -- -5
expect_exit 64 "which process" snap
expect_exit 64 "not a size" snap --min-region lots 1
expect_exit 64 "unknown option" snap --bogus 1
expect_exit 64 "not a vitals command" frobnicate

# a thread id is not a process id: say whose thread it is
start_target lock_convoy --seconds 30 --threads 2
tid=$(ls "/proc/$TPID/task" | grep -vx "$TPID" | head -1)
expect_exit 64 "is a thread of process $TPID" snap "$tid"

# several pids: the good one is shown, the bad one reported, exit is the bad one's
sleep 30 &
GOOD=$!
PIDS+=("$GOOD")
"$B/vitals" snap "$GOOD" $((pid_max + 1)) >"$WORK/out" 2>"$WORK/err"
check "mixed pids exit with the failure's status" test $? -eq 3
check "mixed pids still show the good one" grep -q "pid $GOOD" "$WORK/out"

# another user's process: smaps/environ need ptrace access -> partial, exit 1
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
	setpriv --reuid=65534 --regid=65534 --clear-groups "$B/vitals" snap "$GOOD" >"$WORK/out" 2>"$WORK/err"
	rc=$?
	check "another user's process: partial result, exit 1" test $rc -eq 1
	check "memory counters still shown" grep -q "VmRSS" "$WORK/out"
	check "the note names the rule: another uid" grep -q "belongs to uid 0" "$WORK/out"
	check "unreadable regions are marked, not zero" grep -q "REGIONS · pid $GOOD: not available" "$WORK/out"
	check "... and so are the arena figures that come from them" \
		test "$(grep -cE '^(arena mapped|arena Rss|main heap|main heap Rss) +n/a' "$WORK/out")" = 4
	setpriv --reuid=65534 --regid=65534 --clear-groups "$B/vitals" snap --json "$GOOD" >"$WORK/out.json" 2>/dev/null
	check "--json marks regions null and lists why" test "$(jq_py "$WORK/out.json" \
		'(j["processes"][0]["regions"], sorted(u["section"] for u in j["processes"][0]["unavailable"])[:2], j["processes"][0]["unavailable"][0]["code"])')" \
		= '[null, ["allocator", "environ"], "PERM"]'
	# hidepid-style refusal of the pid directory itself (recorded tree, mode 000)
	mkdir -p "$WORK/hp/proc/4242"
	chmod 711 "$WORK"
	chmod 755 "$WORK/hp" "$WORK/hp/proc"
	chmod 000 "$WORK/hp/proc/4242"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$B/vitals" --proc-root "$WORK/hp/proc" \
		--sys-root "$WORK/hp" snap 4242 >"$WORK/out" 2>"$WORK/err"
	check "a refused pid directory exits 5 and mentions hidepid" test $? -eq 5 -a -n "$(grep hidepid "$WORK/err")"
	chmod 755 "$WORK/hp/proc/4242"
else
	echo "# not root or no setpriv: permission cases not run"
fi

# a process that exits while being read: race many short-lived processes; every
# outcome must be a clean one (0 ok, 3 gone before, 4 gone during,
# 7 exited but not yet reaped by this shell)
seen=""
for i in $(seq 80); do
	sleep 0.0$((RANDOM % 5)) &
	p=$!
	"$B/vitals" snap "$p" >"$WORK/out" 2>"$WORK/err"
	rc=$?
	case $rc in
	0|3|4|7) seen="$seen $rc" ;;
	*) cat "$WORK/err"; fail "snap of an exiting process exited $rc" ;;
	esac
	if [ $rc = 4 ]; then grep -q "exited while" "$WORK/err" || fail "exit 4 without saying so"; fi
	if [ $rc -ge 3 ]; then [ -s "$WORK/out" ] && fail "output for a process that was gone"; fi
	wait "$p" 2>/dev/null
done
echo "ok - exiting processes gave only clean outcomes:$(echo $seen | tr ' ' '\n' | sort | uniq -c | awk '{printf " %s x exit %s", $1, $2}')"

# a command name that is not UTF-8: the JSON stays valid (U+FFFD), the key is there
cp /bin/sleep "$WORK/bad$(printf '\377')name"
"$WORK/bad$(printf '\377')name" 30 &
PIDS+=($!)
sleep 0.2
vitals snap --json $! >"$WORK/bad.json"
check "snap --json of a non-UTF-8 name is valid JSON with its comm" \
	test "$(jq_py "$WORK/bad.json" 'j["processes"][0]["comm"]')" = "bad$(printf '\357\277\275')name"

# output that cannot be written (a full disk): said with the reason, the error
# table's I/O status, for every command whose view writes to stdout (and
# for any other: main writes what is left before it exits)
if [ -w /dev/full ]; then
	sleep 30 &
	PIDS+=($!)
	for args in "snap $!" "snap --json $!" "caps $!" "census $!" "analyze --help"; do
		# shellcheck disable=SC2086
		"$B/vitals" $args >/dev/full 2>"$WORK/err"
		rc=$?
		check "vitals $args > /dev/full exits 2 (I/O)" test "$rc" = 2
		check "vitals $args > /dev/full says why" grep -q "cannot write the output: No space left on device" "$WORK/err"
	done
fi

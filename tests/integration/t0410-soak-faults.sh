#!/usr/bin/env bash
# vitals soak / analyze under faults: kill -9 of vitals mid-soak, a restarted
# service followed by name, a target that never starts, a command that cannot
# run, a path that cannot be written, an existing file, a full disk, files
# that are not recordings or are newer, an empty recording.
# sanitizer: the soak when its target, disk or recording fail under it
. "$(dirname "$0")/lib.sh"
trap 'umount "$WORK/ro" "$WORK/small" 2>/dev/null; cleanup' EXIT

# --- kill -9 mid-soak: the file opens and analyses afterwards ----------------------
start_target slow_leak --seconds 120
"$B/vitals" soak -q -o "$WORK/killed.db" --every 0.2s "$TPID" >/dev/null 2>&1 &   # the binary, not the shell function: kill -9 must hit vitals
soak=$!
sleep 3
kill -9 $soak
wait $soak 2>/dev/null
vitals analyze --json "$WORK/killed.db" >"$WORK/killed.json" || fail "analyze after kill -9"
n=$(jq_py "$WORK/killed.json" 'j["verdict"]["span"]["samples"]')
echo "# killed after 3 s: $n samples"
check "every sample before the kill is there" python3 -c "import sys; sys.exit($n < 8)"
check "the recording says it did not finish" test "$(jq_py "$WORK/killed.json" 'j["recording"]["finished"]')" = false
kill "$TPID"

# --- a service restarted under the same name is followed -----------------------------
cp "$T/targets/slow_leak" "$WORK/vt-restartee"
"$WORK/vt-restartee" --seconds 120 >/dev/null 2>&1 &
first=$!
PIDS+=("$first")
vitals soak -q -o "$WORK/restart.db" --every 0.2s --for 6s --name vt-restartee >"$WORK/restart.out" 2>&1 &
soak=$!
sleep 2
kill "$first"
wait "$first" 2>/dev/null
"$WORK/vt-restartee" --seconds 120 >/dev/null 2>&1 &
PIDS+=("$!")
wait $soak || fail "soak --name across a restart: $(cat "$WORK/restart.out")"
vitals analyze --json "$WORK/restart.db" >"$WORK/restart.json" || fail "analyze restart.db"
check "one restart recorded" test "$(jq_py "$WORK/restart.json" 'j["verdict"]["span"]["restarts"]')" = 1
check "the restart event names the new pid" \
	test "$(jq_py "$WORK/restart.json" '[e["kind"] for e in j["events"]].count("restart")')" = 1
check "the summary says the target restarted" grep -q "restarted 1 time" "$WORK/restart.out"

# --- a service restarted behind a pidfile is followed --------------------------------
"$T/targets/slow_leak" --seconds 120 >/dev/null 2>&1 &
PIDS+=("$!")
echo $! >"$WORK/svc.pid"
vitals soak -q -o "$WORK/pidfile.db" --every 0.2s --for 5s --pidfile "$WORK/svc.pid" >"$WORK/pidfile.out" 2>&1 &
soak=$!
sleep 2
kill "$(cat "$WORK/svc.pid")"
"$T/targets/slow_leak" --seconds 120 >/dev/null 2>&1 &
PIDS+=("$!")
echo $! >"$WORK/svc.pid"
wait $soak || fail "soak --pidfile across a restart: $(cat "$WORK/pidfile.out")"
vitals analyze --json "$WORK/pidfile.db" >"$WORK/pidfile.json" || fail "analyze pidfile.db"
check "--pidfile: one restart, the new pid followed" \
	test "$(jq_py "$WORK/pidfile.json" '[j["verdict"]["span"]["restarts"], j["verdict"]["span"]["pid"]]')" = "[1, $(cat "$WORK/svc.pid")]"

# --- the wall clock jumps an hour back: intervals hold, the jump is recorded -----------
shim=$T/tests/shims/clock_jump.so
if [ -e "$shim" ]; then
	# the jump is made once the soak has recorded 3 samples, so it falls inside the soak
	VT_JUMP_FILE=$WORK/jump.now VT_JUMP_BY_S=-3600 LD_PRELOAD=$shim \
		ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
		"$B/vitals" soak -q -o "$WORK/jump.db" --every 0.2s --for 5s -- sleep 30 >"$WORK/jump.out" 2>&1 &
	soak=$!
	python3 - "$WORK/jump.db" <<'PY' || fail "the soak recorded no 3 samples in 30 s: $(cat "$WORK/jump.out")"
import sqlite3, sys, time
end = time.monotonic() + 30
while time.monotonic() < end:
    try:
        c = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True, timeout=1)
        if c.execute("select count(*) from samples").fetchone()[0] >= 3:
            sys.exit(0)
    except sqlite3.Error:
        pass
    time.sleep(0.1)
sys.exit(1)
PY
	touch "$WORK/jump.now"
	wait $soak || fail "soak across a clock jump: $(cat "$WORK/jump.out")"
	vitals analyze --json "$WORK/jump.db" >"$WORK/jump.json" || fail "analyze jump.db"
	check "the jump is recorded as an event" \
		test "$(jq_py "$WORK/jump.json" '[e["kind"] for e in j["events"]].count("clock_jump")')" = 1
	check "no gap, and every sample in its place (monotonic times)" python3 - "$WORK/jump.db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
t = [r[0] for r in c.execute("select t from samples order by id")]
steps = [b - a for a, b in zip(t, t[1:])]
assert len(t) >= 14 and all(0.1 < s < 0.4 for s in steps), steps
assert c.execute("select count(*) from events where kind = 4").fetchone()[0] == 0   # VT_EV_GAP
PY
else
	echo "# clock jump: not tested (no $shim)"
fi

# --- bad targets: no recording left behind ---------------------------------------------
expect_exit 3 "no process named no-such-vitals-target appeared within" \
	soak -q -o "$WORK/never.db" --wait 1s --name no-such-vitals-target
check "no file for a target that never started" test ! -e "$WORK/never.db"
expect_exit 3 "cannot run '/nonexistent/cmd'" soak -q -o "$WORK/noexec.db" --for 2s -- /nonexistent/cmd
check "no file for a command that could not run" test ! -e "$WORK/noexec.db"
expect_exit 3 "no process 999999" soak -q -o "$WORK/nopid.db" --for 2s 999999
check "no file for a pid that does not exist" test ! -e "$WORK/nopid.db"
kt=$(kernel_thread)
if [ -n "$kt" ]; then
	expect_exit 6 "kernel thread" soak -q -o "$WORK/kt.db" --for 2s "$kt"
fi
expect_exit 64 "FILE is required" soak --for 2s 1
start_target slow_leak --seconds 60
# --for 0 was "until Ctrl-C" and ran forever
expect_exit 64 "records nothing" soak -q -o "$WORK/zero.db" --for 0 "$TPID"
check "--for 0 makes no recording" test ! -e "$WORK/zero.db"
expect_exit 64 "give one target" soak -o "$WORK/x.db" --name foo "$TPID"
: >"$WORK/exists.db"
expect_exit 64 "already exists" soak -q -o "$WORK/exists.db" --for 1s "$TPID"
check "an existing file is left alone" test ! -s "$WORK/exists.db"
expect_exit 64 "an empty file name" soak -q -o '' --for 1s "$TPID"
expect_exit 2 "its directory takes no new files" soak -q -o /proc/vitals-test.db --for 1s "$TPID"

# --- a path that cannot be written -------------------------------------------------------
if [ "$(id -u)" = 0 ] && mkdir -p "$WORK/ro" && mount -t tmpfs -o ro,size=1m tmpfs "$WORK/ro" 2>/dev/null; then
	expect_exit 5 "Read-only file system" soak -q -o "$WORK/ro/run.db" --for 1s "$TPID"
	umount "$WORK/ro"
else
	:
fi
expect_exit 2 "no directory" soak -q -o "$WORK/no/such/dir/run.db" --for 1s "$TPID"

# --- a full disk: the soak stops with a clear error, what it wrote is intact -------------
if [ "$(id -u)" = 0 ] && mkdir -p "$WORK/small" && mount -t tmpfs -o size=256k tmpfs "$WORK/small" 2>/dev/null; then
	"$B/vitals" soak -q -o "$WORK/small/run.db" --every 0.1s --threads-every 0.1s --for 60s "$TPID" \
		>"$WORK/full.out" 2>&1
	rc=$?
	echo "# full disk: rc $rc: $(tail -n 2 "$WORK/full.out" | tr '\n' ' ')"
	check "full disk exits 2" test $rc = 2
	check "and says the disk is full" grep -q "disk full" "$WORK/full.out"
	vitals analyze --json "$WORK/small/run.db" >"$WORK/full.json" || fail "analyze a recording cut by a full disk"
	check "the samples before it are kept" \
		python3 -c "import sys; sys.exit($(jq_py "$WORK/full.json" 'j["verdict"]["span"]["samples"]') < 5)"
	# too full to create the recording at all: no samples to speak of
	head -c 300k /dev/zero >"$WORK/small/filler" 2>/dev/null
	"$B/vitals" soak -q -o "$WORK/small/none.db" --every 0.1s --for 2s "$TPID" >"$WORK/none.out" 2>&1
	rc=$?
	check "a disk too full to create the file: exit 2, said" \
		bash -c "[ $rc = 2 ] && grep -q 'disk full while creating' '$WORK/none.out'"
	check "... with no word of samples that were never written" bash -c "! grep -q 'samples already' '$WORK/none.out'"
	umount "$WORK/small"
else
	echo "# full disk: not tested (needs root to mount a small tmpfs)"
fi
kill "$TPID"

# --- files that are not recordings ----------------------------------------------------------
echo "hello" >"$WORK/text.db"
expect_exit 9 "not a vitals recording .not a SQLite file" analyze "$WORK/text.db"
: >"$WORK/empty-file.db"
expect_exit 9 "is empty" analyze "$WORK/empty-file.db"
python3 -c "import sqlite3; c = sqlite3.connect('$WORK/other.db'); c.execute('create table t(x)'); c.commit()"
expect_exit 9 "SQLite database, but not a vitals recording" analyze "$WORK/other.db"
cp "$WORK/restart.db" "$WORK/newer.db"   # finished: its header is in the file, not in a WAL
python3 -c "import sqlite3; c = sqlite3.connect('$WORK/newer.db'); c.execute('pragma user_version=99'); c.commit()"
expect_exit 9 "newer vitals" analyze "$WORK/newer.db"
expect_exit 9 "newer vitals" compare "$WORK/restart.db" "$WORK/newer.db"
expect_exit 2 "cannot open" analyze "$WORK/missing.db"

# --- an empty recording: a target that exits at once ----------------------------------------
vitals soak -q -o "$WORK/empty.db" --every 0.2s --for 3s -- /bin/true >"$WORK/empty.out" 2>&1
echo "# /bin/true: rc $? $(head -n1 "$WORK/empty.out")"
if [ -e "$WORK/empty.db" ]; then
	vitals analyze --json "$WORK/empty.db" >"$WORK/empty.json" || fail "analyze an empty recording"
	check "an empty recording cannot tell" test "$(jq_py "$WORK/empty.json" 'j["verdict"]["kind"]')" = cannot_tell
fi

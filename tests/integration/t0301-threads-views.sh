#!/usr/bin/env bash
# vitals threads, its views and its edges: --for gives back-to-back intervals,
# --watch redraws on a terminal and prints reports off one, another user sees
# what it may (and is told what not and why), writers blocked on a disk are
# "blocked on I/O", an idle process is idle and a stopped one stopped, a process that exits mid-interval
# gives what was measured, and bad input exits cleanly.  The CPU rates
# themselves are judged against independent deltas in t0300 (solo lane).
. "$(dirname "$0")/lib.sh"

# --- busy_poll at 2000 Hz: --for, --watch, --top, a pty, another user --------
start_target busy_poll --hz 2000 --seconds 120
sleep 1.2
# --for: back-to-back intervals, one JSON object per line
"$B/vitals" threads --json --for 3s -i 1s "$TPID" >"$WORK/for.jsonl" || fail "--for"
python3 - "$WORK/for.jsonl" <<'PY' || fail "--for gives three back-to-back intervals"
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
assert len(objs) == 3, len(objs)
for o in objs:
    assert abs(o["interval_s"] - 1) < 0.1, o["interval_s"]
    assert "busy poll" in [d["pattern"] for d in o["diagnosis"]]
PY
echo "ok - --for 3s -i 1s: three JSON lines of 1 s each, each a busy poll"
# --watch without a terminal: successive reports, no escape codes; --top
"$B/vitals" threads --watch --for 2s -i 1s --top 1 "$TPID" >"$WORK/watch.txt" || fail "--watch"
check "--watch off a terminal prints one report per interval" \
	test "$(grep -c '^vitals threads .*, every 1.0 s' "$WORK/watch.txt")" = 2
check "and no terminal escapes" python3 -c "import sys; sys.exit(b'\x1b' in open('$WORK/watch.txt', 'rb').read())"
check "--top 1 lists the busiest thread only" grep -q "3 more threads (the busiest are shown" "$WORK/watch.txt"
check "which is the poller" test "$(grep -A2 '^  TID' "$WORK/watch.txt" | head -3 | tail -1 | awk '{print $2}')" = poller
# --watch on a terminal (a pty): redrawn in place, q quits at once, and the
# terminal gets its echo and line mode back
python3 - "$B/vitals" "$TPID" >"$WORK/pty.txt" 2>&1 <<'PY' || fail "--watch on a pty: $(cat "$WORK/pty.txt")"
import fcntl, os, pty, select, struct, subprocess, sys, termios, time
vitals, pid = sys.argv[1], sys.argv[2]
master, slave = pty.openpty()
fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))   # 40 rows, 120 columns
before = termios.tcgetattr(slave)
p = subprocess.Popen([vitals, "threads", "--watch", "-i", "1s", pid],
                     stdin=slave, stdout=slave, stderr=slave, close_fds=True)
out, t0 = b"", time.time()
while b"q quits" not in out and time.time() - t0 < 20:
    if select.select([master], [], [], 0.5)[0]:
        out += os.read(master, 65536)
during = termios.tcgetattr(slave)[3]
os.write(master, b"q")
t1 = time.time()
try:
    rc = p.wait(timeout=10)
except subprocess.TimeoutExpired:
    p.kill()
    rc = "still running"
print(f"exit {rc} {time.time() - t1:.2f} s after q")
ok = (b"q quits" in out and b"\x1b[H" in out and not during & (termios.ECHO | termios.ICANON)
      and rc == 0 and termios.tcgetattr(slave) == before)
sys.exit(not ok)
PY
echo "ok - on a terminal --watch redraws in place, q quits ($(cat "$WORK/pty.txt")), and the terminal is restored"
expect_exit 64 "shorter than the interval" threads --for 1s -i 2s "$TPID"
expect_exit 64 "not a positive count" threads --top 0 "$TPID"

# another user may not see wchan or the system call: said so, the rest is measured
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
	cp "$B/vitals" "$WORK/vitals-nobody" && chmod 755 "$WORK" "$WORK/vitals-nobody"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$WORK/vitals-nobody" threads --json -i 1s "$TPID" \
		>"$WORK/nobody.json" 2>"$WORK/nobody.err" || fail "vitals threads as nobody"
	check "as nobody: wchan unavailable, saying ptrace" \
		test "$(jq_py "$WORK/nobody.json" 'all(t["wchan"] is None and "ptrace" in t["wchan_unavailable"] for t in j["threads"])')" = true
	check "as nobody: syscall unavailable, saying ptrace" \
		test "$(jq_py "$WORK/nobody.json" 'all(t["syscall"] is None and "ptrace" in t["syscall_unavailable"] for t in j["threads"])')" = true
	# what woke it cannot be read: its wakeups are measured, the verdict is "cannot tell yet"
	check "as nobody: the poller's wakeups are measured, why they happen cannot be told" \
		test "$(jq_py "$WORK/nobody.json" '[(d["pattern"], "cannot be read" in d["evidence"]) for d in j["diagnosis"] if d["pattern"] in ("busy poll", "frequent wakeups")] == [("frequent wakeups", True)]')" = true
	check "as nobody: stderr says which rule refused" grep -q "belongs to uid 0 and vitals runs as uid 65534" "$WORK/nobody.err"
else
	echo "# not root or no setpriv: the unprivileged reader is not tried"
fi
kill "$TPID" 2>/dev/null

# --- io_wait: writers blocked on the disk (state D) ---------------------------
# tmpfs never blocks: the files go where a disk is
iodir=$WORK
[ "$(stat -f -c %T "$iodir")" != tmpfs ] || iodir=$(mktemp -d "$B/io-wait.XXXXXX")
if [ "$(stat -f -c %T "$iodir")" = tmpfs ]; then
	echo "# neither $WORK nor $B is on a disk: the blocked-on-I/O case is not tried"
else
	start_target io_wait --dir "$iodir" --seconds 120
	sleep 1
	kill -0 "$TPID" 2>/dev/null || { cat "$WORK"/io_wait.out; fail "io_wait could not run in $iodir"; }
	"$B/vitals" threads --json -i 3s "$TPID" >"$WORK/io.json" || fail "vitals threads on io_wait"
	echo "# io_wait: $(jq_py "$WORK/io.json" '[(t["name"], t["states"], t["wchan"], t["syscall"]) for t in j["threads"] if t["name"].startswith("writer-")]')"
	check "diagnosed as blocked on I/O" \
		test "$(jq_py "$WORK/io.json" '"blocked on I/O" in [d["pattern"] for d in j["diagnosis"]]')" = true
	check "not as a busy poll, nor idle" \
		test "$(jq_py "$WORK/io.json" '[d["pattern"] for d in j["diagnosis"] if d["pattern"] in ("busy poll", "idle")]')" = '[]'
	check "the evidence names a writer" grep -q 'writer-' "$WORK/io.json"
	kill "$TPID" 2>/dev/null
	wait "$TPID" 2>/dev/null
	[ "$iodir" = "$WORK" ] || rm -rf "$iodir"
fi

# --- an idle process ----------------------------------------------------------
sleep 30 &
PIDS+=($!)
"$B/vitals" threads --json -i 1s $! >"$WORK/idle.json" || fail "vitals threads on sleep"
check "sleep uses ~0 cores" python3 -c "import sys; sys.exit($(jq_py "$WORK/idle.json" 'j["process"]["cores"]') >= 0.01)"
check "diagnosed as idle" test "$(jq_py "$WORK/idle.json" 'j["diagnosis"][0]["pattern"]')" = idle

# --- a stopped process (SIGSTOP, Ctrl-Z): stopped, not idle; snap counts it T --
sleep 30 &
SPID=$!
PIDS+=($SPID)
kill -STOP $SPID
"$B/vitals" threads --json -i 0.5s $SPID >"$WORK/stopped.json" || fail "vitals threads on a stopped sleep"
"$B/vitals" threads -i 0.5s $SPID >"$WORK/stopped.txt" || fail "vitals threads (text) on a stopped sleep"
"$B/vitals" snap $SPID >"$WORK/stopped.snap" || fail "vitals snap on a stopped sleep"
kill -CONT $SPID
check "a stopped process is diagnosed as stopped, the only pattern" \
	test "$(jq_py "$WORK/stopped.json" '[d["pattern"] for d in j["diagnosis"]]')" = '["stopped"]'
check "... saying what holds it and what lets it go" grep -qE '^  stopped: its one thread was stopped .*SIGCONT' "$WORK/stopped.txt"
check "snap counts its thread as stopped (T), not 'other'" grep -qE '^  by state +0R 0S 0D 1T .*T stopped' "$WORK/stopped.snap"

# --- a process that exits mid-interval: what was measured, exit 1 ------------
start_target busy_poll --hz 100 --seconds 1.5
"$B/vitals" threads --json -i 3s "$TPID" >"$WORK/ex.json" 2>"$WORK/ex.err"
rc=$?
check "exit 1 (partial) when the process exits mid-interval" test "$rc" = 1
check "the JSON says it exited" test "$(jq_py "$WORK/ex.json" 'j["process_exited"]')" = true
check "and stderr says so" grep -q "exited during the interval" "$WORK/ex.err"

# --- bad input ----------------------------------------------------------------
expect_exit 64 "minimum is 0.2 s" threads -i 0.1s $!
expect_exit 64 "not a duration" threads -i soon $!
expect_exit 64 "give a PID" threads
pid_max=$(cat /proc/sys/kernel/pid_max)
expect_exit 3 "no process $((pid_max + 1))" threads -i 1s $((pid_max + 1))
"$B/vitals" threads --help | grep -q "never a since-start average" || fail "--help explains the method"
echo "ok - --help explains the method"

#!/usr/bin/env bash
# lane: solo
# sanitizer: the stop guard: its signal handlers and its watchdog, with vitals stopped mid-call
# A stopped vitals never keeps a target's thread stopped (issue 23, item 1).
# vitals heap, census --consistent and profile --method ptrace are stopped
# with SIGSTOP or SIGTSTP (Ctrl-Z) at a random instant of a run and kept
# stopped HOLD seconds, far past the bound each states for a stop (heap
# --timeout 300, census --max-stop 300), then continued.  A witness looks
# at the target's threads every 2 ms: none may stand stopped (state t or T)
# longer than the bound + 100 ms, and none at the end of a hold.  The busy
# inject_victim's own longest stall (stops, and waits for a CPU after
# them) must stay under the hold.  Before the stop guard,
# a stopped census --consistent kept all 8 threads stopped for the whole
# hold (stall 1,478 ms for a 1 s hold) and a stopped heap kept one.
#
# VT_STOP_TRIALS sets the runs per command and signal (CI: 12, 6 on the
# sanitizer build; the long form in docs/inject.md is VT_STOP_TRIALS=100);
# VT_STOP_HOLD the hold (0.7 s).
. "$(dirname "$0")/lib.sh"

case "$B" in *-san*) TRIALS=${VT_STOP_TRIALS:-6} ;; *) TRIALS=${VT_STOP_TRIALS:-12} ;; esac
HOLD=${VT_STOP_HOLD:-0.7}
BOUND_MS=300

start_target inject_victim --seconds 1800 --churn-threads 1 --churn-duty 50 --signal-hz 1000
victim=$TPID
sleep 0.5

# stop_loop SIGNAL ARGS...: TRIALS runs of vitals ARGS PID, each stopped at a random
# instant of its run, held HOLD s, continued; prints one summary line, fails on harm.
stop_loop() {
	python3 - "$B/vitals" "$victim" "$TRIALS" "$HOLD" "$BOUND_MS" "$@" <<'PY'
import os, random, signal, subprocess, sys, time
vitals, pid, trials, hold, bound_ms = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
sig = sys.argv[6]
args = sys.argv[7:] + [str(pid)]
signo = getattr(signal, "SIG" + sig)

def state(path):
    try:
        with open(path, errors="replace") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "gone"

# The witness: every 2 ms, which threads of the target stand stopped (state t or T);
# the longest stretch one stayed so, from the first look that saw it to the last.
import threading
longest = [0.0, ""]
def witness():
    since = {}
    while not done.is_set():
        now = time.monotonic()
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            return
        for tid in tids:
            if state(f"/proc/{pid}/task/{tid}/stat") in ("t", "T"):
                first, _ = since.get(tid, (now, now))
                since[tid] = (first, now)
                if now - first > longest[0]:
                    longest[:] = [now - first, tid]
            else:
                since.pop(tid, None)
        time.sleep(0.002)
done = threading.Event()
threading.Thread(target=witness, daemon=True).start()

def watchdogs_of(vpid):
    found = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat", errors="replace") as f:   # a comm may be any bytes
                    st = f.read()
            except OSError:
                continue
            comm, rest = st[st.index("(") + 1:st.rindex(")")], st[st.rindex(")") + 2:].split()
            if comm == "vitals-watch" and int(rest[1]) == vpid:
                found.append(int(d))
    return found
watchdogs = []

def target_held():
    """Threads of the target stopped or traced right now."""
    held = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        s = state(f"/proc/{pid}/task/{tid}/stat")
        if s in ("t", "T"):
            held.append(f"{tid}:{s}")
    return held

run = lambda: subprocess.Popen([vitals] + args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
t = time.monotonic(); run().wait(); span = time.monotonic() - t
exits, restopped, before = {}, 0, 0
for i in range(trials):
    p = run()
    time.sleep(random.uniform(0, span))
    if p.poll() is not None:
        before += 1
    else:
        os.kill(p.pid, signo)
    time.sleep(hold)
    held = target_held()
    if held:
        os.kill(p.pid, signal.SIGCONT)
        p.wait()
        sys.exit(f"run {i + 1}: after {hold} s with vitals stopped, threads of the target are held: {held}")
    restopped += state(f"/proc/{p.pid}/stat") == "T"
    watchdogs += watchdogs_of(p.pid)
    os.kill(p.pid, signal.SIGCONT) if p.poll() is None else None
    try:
        rc = p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        sys.exit(f"run {i + 1}: vitals did not end after SIGCONT")
    exits[rc] = exits.get(rc, 0) + 1
    for w in watchdogs:   # each exits with its vitals
        for _ in range(200):
            if state(f"/proc/{w}/stat") in ("gone", "Z"):
                break
            time.sleep(0.01)
        else:
            sys.exit(f"run {i + 1}: the watchdog {w} of vitals {p.pid} outlived it")
    watchdogs = []
    if not os.path.isdir(f"/proc/{pid}"):
        sys.exit(f"run {i + 1}: the target died")
done.set()
print(f"# SIG{sig} {' '.join(sys.argv[7:])}: {trials} runs (one takes {span:.3f} s), {before} ended before "
      f"the signal, {restopped} stood stopped at the end of the hold, exits {dict(sorted(exits.items()))}; "
      f"longest stop of a target thread {longest[0] * 1e3:.0f} ms")
if longest[0] * 1e3 > bound_ms + 100:
    sys.exit(f"thread {longest[1]} of the target stood stopped {longest[0] * 1e3:.0f} ms: over the "
             f"{bound_ms} ms bound + 100 ms")
PY
}

for sig in STOP TSTP; do
	out=$(stop_loop "$sig" heap --timeout "$BOUND_MS") || fail "vitals heap, SIG$sig: $out"
	echo "$out"
	out=$(stop_loop "$sig" census --consistent --max-stop "$BOUND_MS") ||
		fail "vitals census --consistent, SIG$sig: $out"
	echo "$out"
done
out=$(stop_loop STOP profile --method ptrace --for 1s) || fail "vitals profile --method ptrace, SIGSTOP: $out"
echo "$out"

check "no thread of the target stood stopped past the bound + 100 ms, none at the end of a hold; every watchdog ended with its vitals" true
stall=$(truth_py "$TRUTH" 't["stall_max_ms"]')
# The target's own figure adds whatever the host's scheduling held it up after a stop.
echo "# the target's own longest stall over all runs: $stall ms (stops, and waits for a CPU after them)"
check "no thread of the target stalled as long as a hold" \
	python3 -c "import sys; sys.exit(not float(sys.argv[1]) < $HOLD * 1000)" "$stall"
check "the target is not left traced" test "$(awk '/^TracerPid:/ { print $2 }' "/proc/$victim/status")" = 0

kill -TERM "$victim"
wait "$victim" 2>/dev/null
last=$(tail -n 1 "$TRUTH")
check "the target's own checks all held" python3 -c "
import json, sys
t = json.loads(sys.argv[1])
sys.exit(not (t['phase'] == 'exit' and t['ok'] and t['errors'] == 0))" "$last"

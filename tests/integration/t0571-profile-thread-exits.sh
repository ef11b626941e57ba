#!/usr/bin/env bash
# vitals profile reads every thread's counters only at its start and its end,
# and between them only those of the threads that were sampled (issue 30: a
# tick that read all of them cost 0.5 ms per thread per 5 s profile).  What
# that must not lose, on a process that starts threads while it is profiled:
#  - a thread that is born, burns CPU and exits between the start and the end
#    keeps its measured CPU beside its samples (it is read while it is
#    sampled; the end's read no longer finds it);
#  - with --threads, a thread that takes a matching name while it is profiled
#    is profiled from then on (its name is read again while it is sampled);
#  - the threads that came and went are counted.
# Prerequisite: perf events (root, or perf_event_paranoid <= 1).
# sanitizer: the light ticks' list of sampled threads while threads come and go
. "$(dirname "$0")/lib.sh"

paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)
[ "$(id -u)" = 0 ] || [ "$paranoid" -le 1 ] || skip "perf events need root or kernel.perf_event_paranoid <= 1"
command -v python3 >/dev/null || skip "no python3"

# The target: 40 threads that wait; on 'go', a thread 'burner' burns 0.6 s of its own CPU and exits;
# then a thread 'boot' burns 0.3 s, renames itself 'work-1' (prctl), burns 0.6 s
# more and exits.  Each writes its CPU to a file as it ends; 'done' when both did.
cat >"$WORK/threads.py" <<'PY'
import ctypes, os, sys, threading, time
d = sys.argv[1]
libc = ctypes.CDLL(None)

def burn(s):
    t = time.thread_time()
    while time.thread_time() - t < s:
        pass

def name(n):
    libc.prctl(15, n.encode(), 0, 0, 0)     # PR_SET_NAME: this thread's comm

def burner():
    name("burner")
    burn(0.6)
    open(os.path.join(d, "burner.cpu"), "w").write("%d %.6f\n" % (threading.get_native_id(), time.thread_time()))

def renamed():
    name("boot")
    burn(0.3)
    name("work-1")
    t = time.thread_time()
    burn(0.6)
    open(os.path.join(d, "work.cpu"), "w").write("%d %.6f\n" % (threading.get_native_id(), time.thread_time() - t))

# 40 threads that only wait, so that the sampled ones are a few of many (when most
# threads were sampled, a tick reads them all)
stop = threading.Event()
for _ in range(40):
    threading.Thread(target=stop.wait, daemon=True).start()
print(os.getpid(), flush=True)
while not os.path.exists(os.path.join(d, "go")):
    time.sleep(0.02)
for f in (burner, renamed):
    th = threading.Thread(target=f)
    th.start()
    th.join()
open(os.path.join(d, "done"), "w").close()
time.sleep(120)
PY

# profile_run NAME ARGS...: start the target, profile it for 8 s with ARGS, and
# say 'go' once vitals holds its perf events; the JSON in $WORK/NAME.json.
profile_run() {
	local name=$1 i n rc
	shift
	mkdir -p "$WORK/$name"
	python3 "$WORK/threads.py" "$WORK/$name" >"$WORK/$name.pid" 2>"$WORK/$name.perr" &
	PIDS+=($!)
	local P=$!
	for i in $(seq 100); do [ -s "$WORK/$name.pid" ] && break; sleep 0.1; done
	"$B/vitals" profile --for 8s --hz 499 --json "$@" "$P" >"$WORK/$name.json" 2>"$WORK/$name.err" &
	local V=$!
	for i in $(seq 200); do
		n=$(ls -l /proc/$V/fd 2>/dev/null | grep -c 'perf_event')
		[ "$n" -gt 0 ] && break
		sleep 0.05
	done
	touch "$WORK/$name/go"
	wait "$V"
	rc=$?
	cat "$WORK/$name.err"
	check "$name: profile exits 0 (got $rc)" test "$rc" = 0
	# on a machine so busy that the threads did not finish within the profile, the
	# checks below cannot tell anything
	[ -e "$WORK/$name/done" ] || skip "$name: the threads did not finish within the 8 s profile (a busy machine)"
	kill "$P" 2>/dev/null
}

profile_run all
read -r btid bcpu <"$WORK/all/burner.cpu"
python3 - "$WORK/all.json" "$btid" "$bcpu" <<'PY' || fail "the burner's row: samples and measured CPU"
import json, sys
j = json.load(open(sys.argv[1]))
tid, cpu = int(sys.argv[2]), float(sys.argv[3])
rows = [t for t in j["threads"] if t["tid"] == tid]
print("burner (tid %d, its own clock %.3f s): %s" % (tid, cpu, rows))
assert rows, "no row for the burner"
t = rows[0]
# sampled at 499 Hz: about 300 samples; its measured CPU is its schedstat while it was sampled
assert t["samples"] >= 100, t
assert t["cpu_s"] is not None and abs(t["cpu_s"] - cpu) <= 0.25 * cpu, t
PY
echo "ok - a thread born and gone during the profile keeps its measured CPU beside its samples"
check "the threads that came and went are counted" \
	test "$(jq_py "$WORK/all.json" 'j["unsampled"]["threads_started"] >= 2 and j["unsampled"]["threads_ended"] >= 2')" = true

profile_run glob --threads 'work-*'
read -r wtid wcpu <"$WORK/glob/work.cpu"
python3 - "$WORK/glob.json" "$wtid" "$wcpu" <<'PY' || fail "--threads 'work-*': the renamed thread profiled"
import json, sys
j = json.load(open(sys.argv[1]))
tid, cpu = int(sys.argv[2]), float(sys.argv[3])
names = {t["tid"]: (t["name"], t["samples"]) for t in j["threads"]}
print("threads kept: %s; work-1 is tid %d, %.3f s of CPU under that name" % (names, tid, cpu))
assert all(n.startswith("work-") for n, _ in names.values()), names
# 0.6 s at 499 Hz under its new name: about 300 samples; a name read only at the
# start and the end would have left them all out
assert names.get(tid, ("", 0))[1] >= 100, names
PY
echo "ok - --threads: a thread that takes a matching name during the profile is profiled"
echo "ok - t0571"

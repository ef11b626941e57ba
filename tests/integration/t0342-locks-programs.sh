#!/usr/bin/env bash
# vitals locks on programs nobody here wrote and on bad input: CPU-bound
# python3 threads wait on the GIL, named from libpython's own symbols; a
# lock inside a malloc'd object is placed in its chunk (size and offset);
# Rust's std Mutex and Condvar are told by std's slow path (a mutex, a
# condition variable, a barrier), never left raw futexes, and taken in the program's code; a
# lock in memory shared between processes (multiprocessing's semaphore in
# /dev/shm) is said to be shared; a futex the program calls directly is a
# raw futex, never a wrong name; another user's process, no such pid, a
# kernel thread, a zombie and a process that exits mid-run each get their
# exit code and a clear statement.
# sanitizer: the lock probe's stack copies, unwinds and lock reads
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)

top_lock() {   # $1 json: the most waited-on lock, as JSON
	jq_py "$1" 'sorted(j["locks"], key=lambda l: -l["waits"])[0] if j["locks"] else None'
}

# --- a mutex inside a heap object: the malloc chunk it lies in ----------------------
start_target lock_kinds --mode mutex --heap-object 200 --seconds 60
sleep 0.5
"$B/vitals" locks --json --for 1s "$TPID" >"$WORK/heapobj.json" || fail "vitals locks on a lock in a heap object"
check "a lock in a heap object: its chunk, size and offset, as the target's malloc gave them" python3 -c "
import json
truth = [json.loads(l) for l in open('$TRUTH')][-1]
j = json.load(open('$WORK/heapobj.json'))
top = sorted(j['locks'], key=lambda l: -l['waits'])[0]
assert top['address'] == truth['lock_addr'], (top['address'], truth['lock_addr'])
p = top['place']
assert p['kind'] == 'heap' and p['chunk'], p
assert int(p['chunk']['address'], 16) == int(truth['heap_object'], 16) - 16, (p, truth['heap_object'])
assert p['chunk']['size'] == 208 and p['chunk']['offset'] == 64, p
"
"$B/vitals" threads --json --for 3s -i 1s "$TPID" >"$WORK/heapobj.jsonl" || fail "vitals threads on a lock in a heap object"
check "a lock in a heap object: the same chunk at every interval of vitals threads" python3 -c "
import json
chunks = [json.dumps(l['place'].get('chunk'), sort_keys=True)
          for line in open('$WORK/heapobj.jsonl')
          for l in (json.loads(line).get('locks') or {}).get('locks', []) if l['place']['kind'] == 'heap']
assert len(chunks) >= 3 and len(set(chunks)) == 1 and chunks[0] != 'null', chunks
"
kill "$TPID" 2>/dev/null

# --- Rust's std::sync: a Mutex four workers fight over, a Condvar one waits on ---------
if command -v rustc >/dev/null; then
	cat >"$WORK/rlock.rs" <<'EOF2'
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};
fn spin(us: u64) -> u64 {
    let t = Instant::now();
    let mut h = 1u64;
    while t.elapsed() < Duration::from_micros(us) { h = h.wrapping_mul(6364136223846793005).wrapping_add(1); }
    h
}
fn main() {
    let m = Arc::new(Mutex::new(0u64));
    let idle = Arc::new((Mutex::new(false), Condvar::new()));
    println!("pid {}", std::process::id());
    let i2 = idle.clone();
    thread::Builder::new().name("idler".into()).spawn(move || {
        let g = i2.0.lock().unwrap();
        let _g = i2.1.wait_while(g, |go| !*go).unwrap();
    }).unwrap();
    // two of three parties at a Barrier: they wait there until the end
    let bar = Arc::new(std::sync::Barrier::new(3));
    for i in 0..2 { let b = bar.clone(); thread::Builder::new().name(format!("party-{}", i)).spawn(move || { b.wait(); }).unwrap(); }
    let hs: Vec<_> = (0..4).map(|i| { let m = m.clone(); thread::Builder::new().name(format!("worker-{}", i)).spawn(move || loop {
        let mut g = m.lock().unwrap(); *g = g.wrapping_add(spin(1000)); drop(g); thread::sleep(Duration::from_micros(100)); }).unwrap() }).collect();
    thread::sleep(Duration::from_secs(60));
    drop(hs);
}
EOF2
	# 8 s: a waiter's first walk reads the binary's DWARF for the inlined frames past
	# std, which takes seconds on a loaded box (a sanitizer build beside other tests)
	rustc -O -g -o "$WORK/rlock" "$WORK/rlock.rs" 2>"$WORK/rustc.err" || fail "rustc: $(tail -3 "$WORK/rustc.err")"
	"$WORK/rlock" >"$WORK/rlock.out" &
	RPID=$!
	PIDS+=("$RPID")
	sleep 1
	"$B/vitals" locks --json --for 8s "$RPID" >"$WORK/rlock.json" || fail "vitals locks on a Rust program"
	"$B/vitals" locks --for 1s "$RPID" | sed -n '1,/^lock 1/p' | sed 's/^/# /'
	check "Rust: std's Mutex is a mutex (contention), told by std's slow path, never a raw futex" python3 -c "
import json
j = json.load(open('$WORK/rlock.json'))
workers = {'worker-0', 'worker-1', 'worker-2', 'worker-3'}
top = [l for l in j['locks'] if {t['name'] for t in l['waiters']} & workers]
assert len(top) == 1, top      # one lock, the workers' mutex
top = top[0]
assert top['kind'] == 'mutex' and top['rust_std'] and top['contention'], top
assert {t['name'] for t in top['waiters']} <= workers, top['waiters']
assert 'no owner' in top['holder']['why'], top['holder']
"
	# std (1.79 on) keeps a frame pointer in lock_contended, which a blocked thread's
	# /proc/TID/syscall (sp and pc only) cannot give: the walk finds it on the stack
	check "Rust: the mutex is taken in the program's closure (rlock.rs), not in std's slow path" python3 -c "
import json
j = json.load(open('$WORK/rlock.json'))
top = [l for l in j['locks'] if any(t['name'] == 'worker-0' for t in l['waiters'])][0]
site = top['call_sites'][0]['where']
assert site.startswith('rlock::main::') and 'rlock.rs:' in site, top['call_sites']
"
	check "Rust: the thread in Condvar::wait waits on a condition variable, not contention" python3 -c "
import json
j = json.load(open('$WORK/rlock.json'))
cv = [l for l in j['locks'] if any(t['name'] == 'idler' for t in l['waiters'])]
assert cv and cv[0]['kind'] == 'condvar' and cv[0]['rust_std'] and not cv[0]['contention'], cv
"
	check "Rust: the threads at a Barrier wait at a barrier, not contention" python3 -c "
import json
j = json.load(open('$WORK/rlock.json'))
b = [l for l in j['locks'] if any(t['name'].startswith('party-') for t in l['waiters'])]
assert len(b) == 1 and b[0]['kind'] == 'barrier' and b[0]['rust_std'] and not b[0]['contention'], b
assert 'no holder' in b[0]['holder']['why'], b[0]['holder']
"
	check "Rust: vitals threads calls the workers a lock convoy on that mutex" \
		bash -c "'$B/vitals' threads -i 8s '$RPID' | grep -q '^  lock convoy: on a heap object: .*a mutex'"
	kill "$RPID" 2>/dev/null
fi

# --- 1,000 threads that start waiting at once -------------------------------------
# (the probe's per-thread memo grew in the middle of a sample and freed the slots its
# waiters pointed at: ASan caught it in profile --wall on 2,000 threads)
start_target big_process --threads 1000 --resident-mb 16 --mappings 100 --seconds 60
"$B/vitals" locks --json --for 1s "$TPID" >"$WORK/big.json" || fail "vitals locks on 1,000 waiting threads"
check "1,000 threads parked on one condition variable: all counted, on sleep_cond" python3 -c "
import json
j = json.load(open('$WORK/big.json'))
top = sorted(j['locks'], key=lambda l: -l['waits'])[0]
assert top['place'].get('symbol') == 'sleep_cond' and top['kind'] == 'condvar' and top['peak_waiters'] == 1000, top['peak_waiters']
"
kill "$TPID" 2>/dev/null

# --- CPU-bound python3 threads: the GIL -----------------------------------------
"$PY" - >"$WORK/gil.out" <<'EOF' &
import os, sys, threading
def spin():
    x = 0
    while True:
        x += 1
for i in range(4):
    threading.Thread(target=spin, daemon=True).start()
print("pid", os.getpid(), flush=True)
threading.Event().wait(60)
EOF
PIDS+=("$!")
GPID=$!
sleep 1
"$B/vitals" locks --json --for 2s "$GPID" >"$WORK/gil.json" || fail "vitals locks on python3"
"$B/vitals" locks --for 1s "$GPID" | sed -n '1,/^lock 1/p' | sed 's/^/# /'
check "python3: the most waited-on lock is the Python GIL, in _PyRuntime" \
	test "$(jq_py "$WORK/gil.json" '[(l["python_gil"], l["place"].get("symbol"), l["contention"]) for l in sorted(j["locks"], key=lambda l: -l["waits"])][:1]')" = \
	'[[true, "_PyRuntime", true]]'
check "python3: the spinning threads wait on it" python3 -c "
import json, sys
L = sorted(json.load(open('$WORK/gil.json'))['locks'], key=lambda l: -l['waits'])[0]
sys.exit(L['waiting'] < 1 or len(L['waiters']) < 3)"
kill "$GPID" 2>/dev/null

# --- a lock shared between processes ---------------------------------------------
"$PY" - >"$WORK/mp.out" <<'EOF' &
import multiprocessing as mp, os, time
def child(lock):
    print("child", os.getpid(), flush=True)
    lock.acquire()          # held by the parent: waits in sem_wait on /dev/shm memory
if __name__ == "__main__":
    lock = mp.Lock()
    lock.acquire()
    p = mp.Process(target=child, args=(lock,), daemon=True)
    p.start()
    time.sleep(60)
EOF
PIDS+=("$!")
for i in $(seq 50); do grep -q '^child ' "$WORK/mp.out" && break; sleep 0.1; done
CPID=$(awk '/^child /{print $2}' "$WORK/mp.out")
[ -n "$CPID" ] || fail "the multiprocessing child did not start"
PIDS+=("$CPID")
sleep 0.5
"$B/vitals" locks --json --for 1s "$CPID" >"$WORK/mp.json" || fail "vitals locks on the multiprocessing child"
echo "# multiprocessing child: $(jq_py "$WORK/mp.json" '[(l["what"], l["kind"]) for l in j["locks"]]')"
check "a lock in shared memory is said to be shared, a semaphore" \
	test "$(top_lock "$WORK/mp.json" | python3 -c 'import json,sys; l=json.load(sys.stdin); print(l["place"]["kind"], l["kind"], "/dev/shm/" in l["place"]["mapping"])')" = "shared semaphore True"

# --- a raw futex: the program's own futex(2) call ----------------------------------
"$PY" - >"$WORK/raw.out" <<'EOF' &
import ctypes, os, threading, time
libc = ctypes.CDLL(None, use_errno=True)
word = ctypes.c_int(0)
def wait():
    while True:
        libc.syscall(202, ctypes.byref(word), 0, 0, None, None, 0)   # FUTEX_WAIT while it is 0
for i in range(2):
    threading.Thread(target=wait, daemon=True).start()
print("pid", os.getpid(), flush=True)
time.sleep(60)
EOF
PIDS+=("$!")
RPID=$!
sleep 1
"$B/vitals" locks --json --for 1s "$RPID" >"$WORK/raw.json" || fail "vitals locks on a raw futex"
echo "# raw futex: $(jq_py "$WORK/raw.json" '[(l["what"], l["kind"], l["peak_waiters"]) for l in j["locks"]]')"
check "the program's own futex is a raw futex, not a lock of a known kind" \
	test "$(jq_py "$WORK/raw.json" '[(l["kind"], l["contention"]) for l in j["locks"] if l["peak_waiters"] == 2]')" = '[["raw", false]]'
check "and a raw futex is neither contention nor waiting: said so" \
	grep -q "its kind cannot be told" <("$B/vitals" locks --for 0.5s "$RPID")
kill "$RPID" 2>/dev/null

# --- bad input and faults -------------------------------------------------------
start_target lock_kinds --mode mutex --seconds 60
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
	cp "$B/vitals" "$WORK/vitals-nobody" && chmod 755 "$WORK" "$WORK/vitals-nobody"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$WORK/vitals-nobody" locks --for 0.5s "$TPID" \
		>"$WORK/nobody.out" 2>"$WORK/nobody.err"
	rc=$?
	sed 's/^/# /' "$WORK/nobody.err"
	check "another user's process: exit 5, nothing on stdout" test "$rc" = 5 -a ! -s "$WORK/nobody.out"
	check "it says which part is missing and why" \
		grep -q "system calls (/proc/PID/task/TID/syscall): the process belongs to uid 0 and vitals runs as uid 65534" "$WORK/nobody.err"
else
	echo "# not root or no setpriv: the unprivileged reader is not tried"
fi
kill "$TPID" 2>/dev/null; wait "$TPID" 2>/dev/null

start_target lock_kinds --mode mutex --seconds 1.5
"$B/vitals" locks --json --for 4s "$TPID" >"$WORK/exit.json" 2>"$WORK/exit.err"
rc=$?
check "a process that exits mid-run: exit 1, what was sampled" test "$rc" = 1
check "... with its lock" test "$(jq_py "$WORK/exit.json" '[l["place"].get("symbol") for l in j["locks"]][:1]')" = '["held_lock"]'
check "... and stderr says so" grep -q "exited after" "$WORK/exit.err"

pid_max=$(cat /proc/sys/kernel/pid_max)
expect_exit 3 "no process $((pid_max + 1))" locks --for 0.5s $((pid_max + 1))
kt=$(kernel_thread)
[ -n "$kt" ] && expect_exit 6 "kernel thread" locks --for 0.5s "$kt"
# a zombie: a child that exited and is not reaped by its parent (sleep execs over the shell)
bash -c 'true & exec sleep 30' &
PIDS+=("$!")
sleep 0.5
zpid=$(ps -o pid= --ppid $! | tr -d ' ' | head -n 1)
[ -n "$zpid" ] && expect_exit 7 "zombie" locks --for 0.5s "$zpid"
expect_exit 64 "give a PID" locks
expect_exit 64 "not a process id" locks --for 1s abc
expect_exit 64 "minimum is 0.2 s" locks --for 0.1s 1

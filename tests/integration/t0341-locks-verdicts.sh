#!/usr/bin/env bash
# vitals threads with the locks read: the scene of field report 000 (four
# workers, one running, three in futex waits) is a lock convoy on its named
# mutex, with its holder and call site, on each of 10 intervals, quiet and
# with a 2-thread CPU hog in another process beside it, and never core
# contention; a pool waiting on a condition variable is idle, never a
# convoy; allocating threads under MALLOC_ARENA_MAX=1 wait on main_arena's
# lock, named as allocator contention.
# lane: solo — verdicts that judge CPU time, with and without a hog
. "$(dirname "$0")/lib.sh"

# every interval of $1 (JSON Lines): its verdicts, and the symbol of each convoy's lock
intervals_py() {
	python3 - "$1" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    j = json.loads(line)
    locks = {l["address"]: l for l in (j.get("locks") or {}).get("locks", [])}
    out = []
    for d in j["diagnosis"]:
        lk = locks.get(d.get("lock"))
        out.append(d["pattern"] + (f" on {lk['place'].get('symbol') or lk['what']}" if lk else ""))
    print("; ".join(out))
PY
}

# run NAME PID: vitals threads over 10 intervals of 2 s, quiet, then with the hog
run_both() {
	local name=$1 pid=$2 hog
	vitals threads --json --for 20s -i 2s "$pid" >"$WORK/$name.quiet.jsonl" || fail "vitals threads on $name"
	"$T/targets/core_contention" --threads 2 --seconds 30 >"$WORK/hog.out" 2>&1 &
	hog=$!
	PIDS+=("$hog")
	sleep 0.5
	vitals threads --json --for 20s -i 2s "$pid" >"$WORK/$name.loaded.jsonl" || fail "vitals threads on $name (hog)"
	kill "$hog" 2>/dev/null
	wait "$hog" 2>/dev/null
	intervals_py "$WORK/$name.quiet.jsonl" >"$WORK/$name.quiet.v"
	intervals_py "$WORK/$name.loaded.jsonl" >"$WORK/$name.loaded.v"
	sed 's/^/# quiet:    /' "$WORK/$name.quiet.v"
	sed 's/^/# with hog: /' "$WORK/$name.loaded.v"
}

# --- the report's scene ------------------------------------------------------
start_target lock_convoy --threads 4 --seconds 120
sleep 0.5
run_both convoy "$TPID"
for run in quiet loaded; do
	check "$run: 10 intervals" test "$(wc -l <"$WORK/convoy.$run.v")" -ge 10
	check "$run: every interval is a lock convoy on convoy_lock" \
		test "$(grep -c 'lock convoy on convoy_lock' "$WORK/convoy.$run.v")" = "$(wc -l <"$WORK/convoy.$run.v")"
	check "$run: no interval says core contention" test "$(grep -c 'core contention' "$WORK/convoy.$run.v")" = 0
done
"$B/vitals" threads -i 2s "$TPID" >"$WORK/convoy.txt" || fail "vitals threads text"
grep '^  lock convoy' "$WORK/convoy.txt" | sed 's/^/# /'
check "text: the convoy names its lock, a mutex, its holders and where it is taken" \
	grep -q '^  lock convoy: on convoy_lock (lock_convoy), a mutex (.*held by worker-.*taken at worker_main+0x[0-9a-f]* (lock_convoy)' "$WORK/convoy.txt"
check "text: the locks table lists convoy_lock" grep -q '^  convoy_lock (lock_convoy)  *mutex ' "$WORK/convoy.txt"
kill "$TPID" 2>/dev/null; wait "$TPID" 2>/dev/null

# --- a pool waiting for work on a condition variable --------------------------
start_target lock_kinds --mode idle --threads 8 --seconds 120
sleep 0.5
run_both pool "$TPID"
for run in quiet loaded; do
	check "$run: every interval is idle" \
		test "$(grep -cx 'idle' "$WORK/pool.$run.v")" = "$(wc -l <"$WORK/pool.$run.v")"
done
check "its lock is a condition variable, not contention" test "$(jq_py <(head -n 1 "$WORK/pool.quiet.jsonl") \
	'[(l["kind"], l["contention"]) for l in j["locks"]["locks"]]')" = '[["condvar", false]]'
kill "$TPID" 2>/dev/null; wait "$TPID" 2>/dev/null

# --- allocator contention: one arena for four allocating threads ---------------
(MALLOC_ARENA_MAX=1 exec "$T/targets/lock_kinds" --mode malloc --threads 4 --seconds 60 >"$WORK/malloc.out" 2>&1) &
PIDS+=("$!")
for i in $(seq 50); do grep -q '^pid ' "$WORK/malloc.out" && break; sleep 0.1; done
MPID=$(awk '/^pid /{print $2}' "$WORK/malloc.out")
[ -n "$MPID" ] || fail "lock_kinds --mode malloc did not start"
sleep 0.5
"$B/vitals" locks --json --for 3s "$MPID" >"$WORK/malloc.json" || fail "vitals locks on lock_kinds --mode malloc"
"$B/vitals" locks --for 2s "$MPID" >"$WORK/malloc.txt" || fail "vitals locks text"
sed -n '1,/^lock 1/p' "$WORK/malloc.txt" | sed 's/^/# /'
check "the top lock is main_arena's, the only arena, a glibc lock" \
	test "$(jq_py "$WORK/malloc.json" '[(l["place"]["kind"], l["place"]["arena"], l["place"]["arenas"], l["kind"]) for l in sorted(j["locks"], key=lambda l: -l["waits"])][0]')" = \
	'["malloc_arena", 0, 1, "glibc_lock"]'
check "it is called allocator contention, with its lever" \
	grep -q 'means      allocator contention: .*MALLOC_ARENA_MAX is the lever' "$WORK/malloc.txt"
check "the waiters take it in malloc_worker" \
	test "$(jq_py "$WORK/malloc.json" 'sorted(j["locks"], key=lambda l: -l["waits"])[0]["call_sites"][0]["where"].split("+")[0]')" = malloc_worker
check "its users are every thread, main included (thread_arena read from each thread's TLS)" python3 -c "
import json, sys
L = sorted(json.load(open('$WORK/malloc.json'))['locks'], key=lambda l: -l['waits'])[0]
users = sorted(t['name'] for t in L['place']['users'])
print('# users:', users)
sys.exit(users != sorted(['lock_kinds'] + ['worker-%d' % i for i in range(4)]))"

#!/usr/bin/env bash
# vitals locks against locks whose kind, waiting and holders the threads
# measure themselves (targets/lock_kinds): the lock is named from the symbol
# table, its kind from the waiters' stacks; the holder shares are within
# 10 pp of the hold time each worker measured, the waits on two locks within
# 5 pp of the time spent in each lock call; a rwlock's writer is its holder;
# a condition-variable pool with nothing to do is waiting, not contention.
# lane: solo — shares of time are compared, and the workers must get the CPU they ask for
. "$(dirname "$0")/lib.sh"

# The truth over the window vitals sampled: the workers' counters at its two ends.
truth_window() {   # $1 truth file, $2 copy of its last line before the run -> delta JSON on stdout
	python3 - "$1" "$2" <<'PY'
import json, sys
after = json.loads([l for l in open(sys.argv[1]) if l.startswith("{")][-1])
before = json.loads(open(sys.argv[2]).read())
out = []
for a, b in zip(after["workers"], before["workers"]):
    out.append({k: (a[k] - b[k]) if isinstance(a[k], (int, float)) else a[k] for k in a})
print(json.dumps(out))
PY
}

# run vitals locks on the target started last, for $1, into $2.json; truth deltas into $2.truth
locks_window() {
	local dur=$1 name=$2
	sleep 1.2      # a truth line written since the workers started
	grep '^{' "$TRUTH" | tail -n 1 >"$WORK/$name.before"
	"$B/vitals" locks --json --for "$dur" "$TPID" >"$WORK/$name.json" || fail "vitals locks on $name"
	sleep 1.1      # the truth line after the window
	truth_window "$TRUTH" "$WORK/$name.before" >"$WORK/$name.truth"
	"$B/vitals" locks --for 1s "$TPID" | sed 's/^/# /' | head -n 12
}

lock_py() {   # $1 json, $2 expression on L (the lock whose symbol is $3)
	python3 - "$1" "$2" "$3" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
ls = [l for l in j["locks"] if l["place"].get("symbol") == sys.argv[3]]
L = ls[0] if ls else None
v = eval(sys.argv[2], {"L": L, "j": j})
print(json.dumps(v) if not isinstance(v, str) else v)
PY
}

# --- one mutex, worker-i holding it (i + 1) x 1 ms ---------------------------
start_target lock_kinds --mode mutex --threads 4 --hold-us 1000 --seconds 60
locks_window 12s mutex
check "schema is vitals.locks v1" test "$(jq_py "$WORK/mutex.json" '[j["schema"], j["schema_version"]]')" = '["vitals.locks", 1]'
check "the lock is named: held_lock, a mutex in lock_kinds" \
	test "$(lock_py "$WORK/mutex.json" '[L["kind"], L["place"]["module"], L["contention"]]' held_lock)" = '["mutex", "lock_kinds", true]'
check "the most waited-on lock is held_lock" \
	test "$(jq_py "$WORK/mutex.json" 'max(j["locks"], key=lambda l: l["waits"])["place"].get("symbol")')" = held_lock
check "its waiters take it in turn, with file:line, called by mutex_worker" \
	python3 -c "
import json, sys
L = [l for l in json.load(open('$WORK/mutex.json'))['locks'] if l['place'].get('symbol') == 'held_lock'][0]
s = L['call_sites'][0]['where']
print('# call site:', s)
sys.exit(not (s.startswith('turn+') and 'lock_kinds.c:' in s and s.endswith(' < mutex_worker')))"
python3 - "$WORK/mutex.json" "$WORK/mutex.truth" >"$WORK/mutex.cmp" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); truth = json.load(open(sys.argv[2]))
L = [l for l in j["locks"] if l["place"].get("symbol") == "held_lock"][0]
h = L["holder"]
held = sum(t["samples"] for t in h["threads"])
total_hold = sum(w["hold_s_a"] for w in truth)
worst = 0
for w in truth:
    mine = sum(t["samples"] for t in h["threads"] if t["name"] == w["name"])
    got, want = mine / held, w["hold_s_a"] / total_hold
    print(f"# {w['name']}: held in {100*got:.1f}% of the samples, truth {100*want:.1f}% of the hold time")
    worst = max(worst, abs(got - want))
print(f"# {held} samples with a holder read, {h['reads']} owner reads; worst {100*worst:.1f} pp")
print("ok" if held >= 40 and worst <= 0.10 else "bad")
PY
sed '$d' "$WORK/mutex.cmp"
check "holder shares within 10 pp of the hold time each worker measured" test "$(tail -n 1 "$WORK/mutex.cmp")" = ok
check "thread-seconds waiting per second near the workers' own (within 25%)" python3 -c "
import json, sys
truth = json.load(open('$WORK/mutex.truth'))
j = json.load(open('$WORK/mutex.json'))
L = [l for l in j['locks'] if l['place'].get('symbol') == 'held_lock'][0]
want = sum(w['wait_s_a'] for w in truth) / j['interval_s']
print(f'# vitals {L[\"waiting\"]:.2f} waiting on average, the workers measured {want:.2f} (over a window ~1 s longer)')
sys.exit(abs(L['waiting'] - want) > 0.25 * want + 0.2)"
kill "$TPID" 2>/dev/null; wait "$TPID" 2>/dev/null

# --- two mutexes: lock_a held 1 ms, lock_b 0.3 ms ------------------------------
start_target lock_kinds --mode two --threads 4 --hold-us 1000 --hold-b-us 300 --seconds 60
locks_window 10s two
python3 - "$WORK/two.json" "$WORK/two.truth" >"$WORK/two.cmp" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); truth = json.load(open(sys.argv[2]))
w = {l["place"].get("symbol"): l["waits"] for l in j["locks"]}
a, b = w.get("lock_a", 0), w.get("lock_b", 0)
ta, tb = sum(x["wait_s_a"] for x in truth), sum(x["wait_s_b"] for x in truth)
got, want = a / max(a + b, 1), ta / (ta + tb)
print(f"# lock_a: {100*got:.1f}% of the waits on the two ({a} of {a+b}), truth {100*want:.1f}% of the time in the lock calls")
print("ok" if a + b >= 40 and abs(got - want) <= 0.05 else "bad")
PY
sed '$d' "$WORK/two.cmp"
check "both locks named, mutexes" test "$(python3 -c "
import json; j = json.load(open('$WORK/two.json'))
print(sorted((l['place'].get('symbol'), l['kind']) for l in j['locks'] if l['waits'] >= 3))")" = "[('lock_a', 'mutex'), ('lock_b', 'mutex')]"
check "lock_a's share of the waits within 5 pp of the workers' own" test "$(tail -n 1 "$WORK/two.cmp")" = ok
kill "$TPID" 2>/dev/null; wait "$TPID" 2>/dev/null

# --- a rwlock: 3 writers hold it 1 ms, 2 readers briefly ------------------------
start_target lock_kinds --mode rwlock --threads 3 --readers 2 --hold-us 1000 --seconds 60
locks_window 4s rwlock
check "held_rwlock is a rwlock, one row for its readers' and writers' words" \
	test "$(python3 -c "
import json; j = json.load(open('$WORK/rwlock.json'))
print([(l['place'].get('symbol'), l['kind'], l['place'].get('offset')) for l in j['locks'] if l['waits'] >= 3])")" = "[('held_rwlock', 'rwlock', 0)]"
check "its holders are the writers" python3 -c "
import json, sys
L = [l for l in json.load(open('$WORK/rwlock.json'))['locks'] if l['place'].get('symbol') == 'held_rwlock'][0]
names = {t['name'] for t in L['holder']['threads']}
print(f'# holders {sorted(names)}, readers {L[\"holder\"][\"readers_share\"]:.2f}, free {L[\"holder\"][\"free_share\"]:.2f}')
sys.exit(not names or not all(n.startswith('worker-') for n in names))"
check "its call sites are the writers' and the readers' own functions" python3 -c "
import json, sys
L = [l for l in json.load(open('$WORK/rwlock.json'))['locks'] if l['place'].get('symbol') == 'held_rwlock'][0]
fns = {s['where'].split('+')[0] for s in L['call_sites']}
print('# call sites:', [s['where'] for s in L['call_sites']])
sys.exit(fns != {'rw_writer', 'rw_reader'})"
kill "$TPID" 2>/dev/null; wait "$TPID" 2>/dev/null

# --- a pool waiting on a condition variable: waiting, not contention ------------
start_target lock_kinds --mode idle --threads 6 --seconds 60
locks_window 2s idle
check "idle_cond is a condition variable, no contention, with all six waiting" \
	test "$(lock_py "$WORK/idle.json" '[L["kind"], L["contention"], L["peak_waiters"], L["place"]["offset"]]' idle_cond)" = '["condvar", false, 6, 0]'
check "it is said to be waiting, not contention" \
	grep -q 'means      threads waiting to be woken (for work or an event): not contention' <("$B/vitals" locks --for 1s "$TPID")
kill "$TPID" 2>/dev/null; wait "$TPID" 2>/dev/null

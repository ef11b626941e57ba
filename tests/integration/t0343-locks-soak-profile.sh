#!/usr/bin/env bash
# The locks over a soak: vitals soak looks at the locks at the threads
# cadence and keeps each look in the recording; vitals analyze counts them
# up, names the convoy's lock in its verdict as vitals threads does, and
# says how the waiting changed from the first half of the soak to the
# second.  A recording from before the lock tables analyses with the locks
# said to be not recorded; a damaged look is refused with a clear error.
# vitals profile --wall counts the same locks at its wall ticks, with what
# their holders ran, and --threads keeps the ones its kept threads wait on.
# sanitizer: the soak's and the profiler's lock probes, the lock tables read back
. "$(dirname "$0")/lib.sh"

start_target lock_convoy --threads 4 --seconds 60
LPID=$TPID

"$B/vitals" soak -e 0.5s --threads-every 0.5s --for 8s -o "$WORK/lc.db" "$LPID" >"$WORK/soak.out" 2>&1 ||
	fail "vitals soak on lock_convoy: $(tail -3 "$WORK/soak.out")"
"$B/vitals" analyze "$WORK/lc.db" >"$WORK/an.txt" 2>"$WORK/an.err" || fail "vitals analyze"
"$B/vitals" analyze --json "$WORK/lc.db" >"$WORK/an.json" 2>>"$WORK/an.err" || fail "vitals analyze --json"
sed -n '/what the threads did/,/^lock 1/p' "$WORK/an.txt" | sed 's/^/# /'

check "analyze: the convoy verdict names its lock, convoy_lock, and where it is taken" \
	grep -qE "lock convoy: on convoy_lock \(lock_convoy\), a mutex.*taken at worker_main" "$WORK/an.txt"
check "analyze: a locks table over the soak, with its looks" \
	grep -qE "^locks its threads waited on \([0-9]+ looks at the threads cadence" "$WORK/an.txt"
check "analyze: how the waiting changed, first half and second" \
	grep -qE "^    convoy_lock \(lock_convoy\) +[0-9.]+ +[0-9.]+ +(same|grew|fell|new|gone)$" "$WORK/an.txt"
check "analyze --json: at least 8 looks, the top lock convoy_lock, a mutex held by the workers" python3 -c "
import json, sys
j = json.load(open('$WORK/an.json'))
h = j['locks']
assert h['looks'] >= 8, h['looks']
top = sorted(h['locks']['locks'], key=lambda l: -l['waits'])[0]
assert top['place'].get('symbol') == 'convoy_lock', top['place']
assert top['kind'] == 'mutex', top['kind']
assert top['holder']['threads'] and all(t['name'].startswith('worker') for t in top['holder']['threads']), top['holder']
assert any(d['pattern'] == 'lock convoy' and d.get('lock') == top['address'] for d in j['threads_diagnosis']), j['threads_diagnosis']
halves = {x['address']: x for x in h['halves']}[top['address']]
n, first = h['looks'], h['looks'] // 2
assert halves['first_waiting'] + halves['second_waiting'] > 0, halves   # (a loaded box may miss it in one half)
# the halves add up to the whole: first half's looks plus the second's
assert abs(halves['first_waiting'] * first + halves['second_waiting'] * (n - first) - top['waiting'] * n) < 1e-6, (halves, top['waiting'], n)
"

# --- a recording from before the lock tables -------------------------------------
cp "$WORK/lc.db" "$WORK/old.db"
python3 -c "
import sqlite3
c = sqlite3.connect('$WORK/old.db')
c.executescript('DROP TABLE lock_looks; DROP TABLE lock_rows; DROP TABLE lock_threads; DROP TABLE lock_sites; PRAGMA user_version=4')
c.commit()"
"$B/vitals" analyze "$WORK/old.db" >"$WORK/old.txt" 2>&1 || fail "vitals analyze of a schema 4 recording"
check "an older recording: the locks are said to be not recorded, and why" \
	grep -q "^locks: not recorded (the recording has no lock looks (schema 4" "$WORK/old.txt"
check "an older recording: the convoy is still found, without a lock named" \
	grep -qE "lock convoy: [0-9]+ x worker-" "$WORK/old.txt"

# --- a damaged look ----------------------------------------------------------------
cp "$WORK/lc.db" "$WORK/bad.db"
python3 -c "
import sqlite3
c = sqlite3.connect('$WORK/bad.db')
c.execute('UPDATE lock_rows SET kind = 42')
c.commit()"
"$B/vitals" analyze "$WORK/bad.db" >"$WORK/bad.txt" 2>"$WORK/bad.err"
rc=$?
check "a damaged look: analyze still answers (exit 0), the rest of the recording shown" test "$rc" = 0
check "a damaged look: a note says which look and what is wrong" \
	grep -qE "note: the locks are not shown: .*lock look [0-9]+ is damaged: a lock's kind is not one this vitals knows" "$WORK/bad.err"
check "a damaged look: no lock named from it" bash -c "! grep -q 'locks its threads waited on' '$WORK/bad.txt'"

# --- profile --wall ------------------------------------------------------------------
"$B/vitals" profile --wall --for 2s "$LPID" >"$WORK/prof.txt" 2>"$WORK/prof.err" || fail "vitals profile --wall: $(cat "$WORK/prof.err")"
"$B/vitals" profile --wall --json --for 2s "$LPID" >"$WORK/prof.json" 2>>"$WORK/prof.err" || fail "vitals profile --wall --json"
sed -n '/^locks its threads/,/^$/p' "$WORK/prof.txt" | sed 's/^/# /'
check "profile --wall: a locks table, convoy_lock a mutex in it" \
	grep -qE "^  convoy_lock \(lock_convoy\) +mutex " "$WORK/prof.txt"
check "profile --wall --json: the top lock is convoy_lock, waited on by the workers, its holders running compute()" python3 -c "
import json
j = json.load(open('$WORK/prof.json'))
top = sorted(j['locks']['locks'], key=lambda l: -l['waits'])[0]
assert top['place'].get('symbol') == 'convoy_lock' and top['kind'] == 'mutex', top
assert top['waiters'] and all(t['name'].startswith('worker') for t in top['waiters']), top['waiters']
ran = top['holder']['running']
assert ran and ran[0]['where'] == 'compute', ran   # the holders' critical section: compute()
"
"$B/vitals" profile --wall --json --threads 'lock_convoy' --for 1s "$LPID" >"$WORK/main.json" 2>>"$WORK/prof.err" ||
	fail "vitals profile --wall --threads lock_convoy"
check "profile --wall --threads: only the kept threads' locks (the main thread waits on no mutex)" python3 -c "
import json
j = json.load(open('$WORK/main.json'))
assert not any(l['place'].get('symbol') == 'convoy_lock' for l in j['locks']['locks']), j['locks']['locks']
"
check "profile (no --wall): no locks read" python3 -c "
import json, subprocess
j = json.loads(subprocess.run(['$B/vitals', 'profile', '--json', '--for', '1s', '$LPID'], capture_output=True, text=True, check=True).stdout)
assert j['locks'] is None, j['locks']
"

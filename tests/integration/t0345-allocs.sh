#!/usr/bin/env bash
# vitals allocs on a target whose sites are known (targets/alloc_sites.c):
# churn_round makes 90% of the calls and 36% of the bytes, freed at once;
# keep_block 10% and 64%, kept for seconds.  The shares, the fates and the
# thread come out right; killing vitals while its probes are in leaves the
# target running with no breakpoint left in its malloc (the kernel took the
# probes out) and a later run works; Ctrl-Z takes the probes out before
# vitals stops, and it finishes after fg; bad pids get their distinct errors;
# posix_memalign is one call, followed to its free; the budget holds for a
# target that slows down.
# sanitizer: the sampler, its replay and live table, the uprobe set
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "the uprobe PMU needs root (CAP_PERFMON)"
[ -e /sys/bus/event_source/devices/uprobe/type ] || skip "no uprobe PMU on this kernel"

start_target alloc_sites --seconds 120
APID=$TPID

# malloc's first byte in the target's memory: 0xcc while a probe is in (malloc_byte.py)
MALLOC_BYTE=$(cd "$(dirname "$0")" && pwd)/malloc_byte.py
byte0=$(python3 "$MALLOC_BYTE" "$APID") || fail "reading malloc's first byte in the target"

# a sleepy target: its traps are a large share of its little CPU, so the
# default 5% budget allows few windows; 50% gives enough calls to judge shares.
# Rules of the user's own put each site in a bucket of its own.
printf 'rounds: churn_round\nkept: keep_block   # the ring of kept blocks\n' >"$WORK/sites.buckets"
"$B/vitals" allocs --for 4s --budget 50 --buckets "$WORK/sites.buckets" --json "$APID" >"$WORK/a.json" 2>"$WORK/a.err" ||
	fail "vitals allocs --json: $(tail -3 "$WORK/a.err")"
"$B/vitals" allocs --for 2s --budget 50 "$APID" >"$WORK/a.txt" 2>>"$WORK/a.err" || fail "vitals allocs"
sed 's/^/# /' "$WORK/a.txt" | head -20

check "text: the sites table names churn_round and keep_block" \
	grep -qE "^  (churn_round|keep_block) +[0-9]+ +[0-9]+%" "$WORK/a.txt"
check "text: the cost is measured and said" grep -qE "probes armed .* windows? of .*cost, measured: [0-9]+ probe hits x" <(tr '\n' ' ' <"$WORK/a.txt")
check "json: shares within 5 pp of the truth, fates and thread right" python3 -c "
import json
j = json.load(open('$WORK/a.json'))
assert j['schema'] == 'vitals.allocs', j['schema']
s = {x['site']: x for x in j['sites']}
c, k = s['churn_round'], s['keep_block']
calls, byts = c['calls'] + k['calls'], c['bytes'] + k['bytes']
assert calls >= 200, calls
assert abs(c['calls'] / calls - 0.9) < 0.05, (c['calls'], k['calls'])
assert abs(k['bytes'] / byts - 4096 / 6400) < 0.05, (c['bytes'], k['bytes'])
assert c['freed'] >= 0.95 * c['linked'], c
assert k['live'] >= 0.9 * k['linked'], k
assert c['threads'][0]['name'] == 'alloc-worker', c['threads']
assert j['arenas'] and j['arenas'] >= 1, (j['arenas'], j['arenas_why'])
assert c['threads'][0]['arena'] is not None and 0 <= c['threads'][0]['arena'] < j['arenas'], c['threads']
assert j['cost']['windows'] >= 1 and j['cost']['armed_s'] > 0, j['cost']
assert c['bucket'] == 'rounds' and k['bucket'] == 'kept', (c['bucket'], k['bucket'])
b = {x['bucket']: x for x in j['buckets']}
assert abs(b['kept']['bytes'] / (b['kept']['bytes'] + b['rounds']['bytes']) - 4096 / 6400) < 0.05, b
assert b['rounds']['top_site'] == 'churn_round' and b['rounds']['sites'] == 1, b['rounds']
"
expect_exit 64 "line 1: no ':'" allocs --buckets <(echo 'no colon here') "$APID"

# --folded, --pprof and --html: one stack per site; go tool pprof reads Go's heap
# sample types; the page's flame graph weighs bytes, beside the sites by bytes
"$B/vitals" allocs --for 2s --budget 50 --folded "$WORK/a.folded" --pprof "$WORK/a.pb.gz" \
	--html "$WORK/a.html" "$APID" >/dev/null 2>"$WORK/x.err" ||
	fail "vitals allocs --folded --pprof --html: $(tail -2 "$WORK/x.err")"
check "folded: churn_round and keep_block under the worker's stack, weighing bytes" \
	grep -qE "(^|;)work;keep_block [0-9]+$" "$WORK/a.folded"
cat >"$WORK/html_check.py" <<'PY'
import json, re, sys
t = open(sys.argv[1]).read()
assert t.startswith('<!DOCTYPE html>') and t.rstrip().endswith('</html>'), t[:80]
assert t.count('<html') == 1 and t.count('</script') == 2, 'not one page'
title = '<title>vitals allocs %s (alloc_sites)</title>' % sys.argv[2]
assert title in t, re.search('<title>.*', t)
data = json.loads(re.search(r'<script id="vt-data" type="application/json">(.*?)</script>', t).group(1))
assert data['unit'] == 'bytes' and data['color'] == 'bucket', (data.get('unit'), data['color'])
names = [l[0] for l in data['profile']['locs']]
assert 'churn_round' in names and 'keep_block' in names and 'work' in names, names
# the graph's total: the bytes of the sites' stacks, said in the meta line
total = data['profile']['total']
assert total > 0 and re.search(r'<span>graph: [0-9.]+ [KMG]?i?B \(%d bytes\)</span>' % total, t), total
rows = re.findall(r'<tr><td><span class="sw" data-b="[0-9]+"></span>([^<]*)</td><td class="n">([0-9.]+)%', t)
sites = [r[0] for r in rows]
assert sites.index('keep_block') < sites.index('churn_round'), rows
assert abs(float(rows[sites.index('keep_block')][1]) - 64) < 6, rows
assert '<th>site</th>' in t and '<th class="n">bytes</th>' in t
visible = t.split('<script id="vt-data"')[0]
assert 'share of the bytes; click to zoom' in visible and 'samples' not in visible, 'samples said'
assert re.search(r'<p>(churn|retention|mixed|cannot tell yet): ', visible), 'no verdict'
PY
check "html: one page, its graph and table in bytes, keep_block's row first" \
	python3 "$WORK/html_check.py" "$WORK/a.html" "$APID"
expect_exit 64 "exists" allocs --for 1s --folded "$WORK/a.folded" "$APID"
expect_exit 64 "exists" allocs --for 1s --html "$WORK/a.html" "$APID"
if command -v go >/dev/null; then
	go tool pprof -top -sample_index=alloc_space "$WORK/a.pb.gz" >"$WORK/top.txt" 2>&1 ||
		fail "go tool pprof: $(tail -3 "$WORK/top.txt")"
	sed 's/^/# /' "$WORK/top.txt" | head -12
	check "go tool pprof: alloc_space, keep_block about 64% of the bytes" python3 -c "
import re
t = open('$WORK/top.txt').read()
assert 'Type: alloc_space' in t, t
m = re.search(r'([0-9.]+)%\s+[0-9.]+%\s+\S+\s+[0-9.]+%\s+keep_block', t)
assert m and abs(float(m.group(1)) - 64) < 6, t
"
else
	echo "# no go tool pprof here: the pprof file is not read back"
fi

# Killed at any instant: the target goes on, and the next run is not refused.
for i in 1 2 3 4 5 6; do
	"$B/vitals" allocs --for 3s "$APID" >/dev/null 2>&1 &
	VP=$!
	sleep "0.$((RANDOM % 9 + 1))"
	kill -KILL "$VP" 2>/dev/null
	wait "$VP" 2>/dev/null
	kill -0 "$APID" 2>/dev/null || fail "the target died after vitals was killed ($i)"
	b=$(python3 "$MALLOC_BYTE" "$APID")
	[ "$b" = "$byte0" ] || fail "after SIGKILL $i of vitals, malloc's first byte in the target is $b, not $byte0"
done
"$B/vitals" allocs --for 1s --json "$APID" >"$WORK/b.json" 2>"$WORK/b.err" ||
	fail "vitals allocs after the kills: $(tail -3 "$WORK/b.err")"
check "after 6 SIGKILLs the target runs and is probed again" python3 -c "
import json; j = json.load(open('$WORK/b.json')); assert j['calls'] > 0, j['calls']"

# posix_memalign at an alignment of 16: glibc's calls malloc for it, which is its call, not
# one more of a site "__posix_memalign"; the block it returns is followed to its free
start_target alloc_sites --seconds 60 --aligned 3
"$B/vitals" allocs --for 3s --budget 50 --json "$TPID" >"$WORK/al.json" 2>"$WORK/al.err" ||
	fail "vitals allocs on posix_memalign: $(tail -3 "$WORK/al.err")"
kill "$TPID"
echo "# posix_memalign: $(jq_py "$WORK/al.json" "[(s['site'], s['calls'], s['linked'], s['freed']) for s in j['sites']]")"
check "posix_memalign's malloc is not a site of its own" \
	test "$(jq_py "$WORK/al.json" "[s['site'] for s in j['sites'] if 'memalign' in s['site']]")" = '[]'
check "aligned_round: 3 calls a round against churn_round's 9 (within 15%)" python3 -c "
import json
j = json.load(open('$WORK/al.json'))
calls = {s['site'].split(' ')[0]: s['calls'] for s in j['sites']}
r = calls['aligned_round'] / calls['churn_round'] * 3
assert abs(r - 1) <= 0.15, calls
"
check "... and its blocks followed: freed at once, as churn_round's" python3 -c "
import json
j = json.load(open('$WORK/al.json'))
s = [s for s in j['sites'] if s['site'].startswith('aligned_round')][0]
assert s['linked'] >= 0.9 * s['calls'] and s['freed'] >= 0.95 * s['linked'], s
"

# The budget holds for a target that allocates flat out before the first window and
# slows down after: windows are paid for by its work so far, not by work expected at
# its first rate (which let it cost 8.5-9.2% for a budget of 5%)
start_target alloc_sites --seconds 30 --busy-seconds 2 --pause-us 2000
"$B/vitals" allocs --for 6s --json "$TPID" >"$WORK/slow.json" 2>"$WORK/slow.err" ||
	fail "vitals allocs on a target that slows down: $(tail -3 "$WORK/slow.err")"
kill "$TPID"
echo "# flat out, then slower: $(jq_py "$WORK/slow.json" "j['cost']")"
check "a target that slows down: the measured cost within 1.4x the 5% budget" python3 -c "
import json; c = json.load(open('$WORK/slow.json'))['cost']; assert c['slowdown'] <= 1.4 * c['budget'], c"

# A target that exits in a gap between windows ends the run: the profile so far, exit 1
# (3 s: on the sanitizer build at load 10 naming libc's DWARF before the first
# window took most of 1.5, and a target gone before any window is exit 4)
start_target alloc_sites --seconds 3 --pause-us 20000
"$B/vitals" allocs --for 8s "$TPID" >"$WORK/gone.txt" 2>"$WORK/gone.err"
rc=$?
check "a target that exits: exit 1, the profile so far, said (rc $rc)" test "$rc" = 1
check "... said on stderr and in the text" \
	grep -q "exited during the run" "$WORK/gone.err" "$WORK/gone.txt"

expect_exit 3 "no process" allocs --for 1s 99999999
KT=$(kernel_thread)
[ -n "$KT" ] && expect_exit 6 "kernel thread" allocs --for 1s "$KT"
expect_exit 64 "budget" allocs --budget 0 "$APID"

# Ctrl-Z while armed: the window closes (the target's probes out) before vitals
# stops.
# (a target with CPU of its own, half a core: the budget then allows long windows)
start_target alloc_sites --seconds 60 --spin-us 2000 --pause-us 2000
SPID=$TPID
"$B/vitals" allocs --for 12s --budget 100 --window 4s "$SPID" >"$WORK/z.txt" 2>&1 &
VP=$!
armed=
for i in $(seq 80); do
	[ "$(python3 "$MALLOC_BYTE" "$SPID")" = cc ] && { armed=1; break; }
	sleep 0.1
done
check "armed: an int3 at malloc in the target (the check below can fail)" test -n "$armed"
kill -TSTP "$VP"
for i in $(seq 50); do
	grep -q '^State:.*T' "/proc/$VP/status" 2>/dev/null && break
	sleep 0.1
done
check "Ctrl-Z stops vitals" grep -q '^State:.*T' "/proc/$VP/status"
check "... after taking its probes out of the target (malloc's byte is $byte0 again)" \
	test "$(python3 "$MALLOC_BYTE" "$SPID")" = "$byte0"
kill -CONT "$VP"
wait "$VP" || fail "vitals allocs after Ctrl-Z and fg: $(tail -3 "$WORK/z.txt")"
check "... and it finishes after SIGCONT" grep -q "probes armed" "$WORK/z.txt"
kill "$SPID"   # its spinning is no load for the tests beside this one

# A process of 1,000 threads: each window probes only the threads that ran
# since the last one (a thread that does not run does not allocate), so a
# window arms in milliseconds instead of opening 10,000 events.
start_target big_process --threads 1000 --mappings 500 --resident-mb 32 --churn 5 --seconds 120
BPID=$TPID
for i in $(seq 100); do
	[ "$(awk '/^Threads:/ {print $2}' "/proc/$BPID/status")" -ge 1000 ] 2>/dev/null && break
	sleep 0.1
done
"$B/vitals" allocs --for 3s --json "$BPID" >"$WORK/big.json" 2>"$WORK/big.err" ||
	fail "vitals allocs on 1,000 threads: $(tail -3 "$WORK/big.err")"
check "1,000 threads: a few dozen probed a window, armed in well under a second" python3 -c "
import json
j = json.load(open('$WORK/big.json'))
assert j['threads_seen'] >= 1000, j['threads_seen']
assert 0 < j['threads_probed_max'] <= 80, j['threads_probed_max']
assert j['cost']['arm_ms'] < 1000, j['cost']
assert j['cost']['windows'] >= 2, j['cost']
"

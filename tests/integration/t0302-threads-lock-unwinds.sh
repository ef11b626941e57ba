#!/usr/bin/env bash
# t0302 — vitals threads names the locks its threads wait on (kind and
# place) from a few waiters' stacks, not all of them: 300 threads of
# targets/big_process wait on one condition variable (sleep_cond), and a
# 1 s run unwinds at most 4 of them a sample (8 in the two samples of a quiet
# host, 12 in three on a busy one, where each sample costs less of the
# interval; it was 64 a sample, 128 unwinds, about 70 µs each).  The lock is still the condition
# variable sleep_cond with all 300 waiting; the other waits are counted as
# read without a stack.  vitals locks, which says each lock's call sites,
# still unwinds up to 64 a sample.
. "$(dirname "$0")/lib.sh"

start_target big_process --threads 300 --mappings 10 --resident-mb 8 --seconds 60
for _ in $(seq 100); do
	[ "$(awk '/^Threads:/ { print $2 }' "/proc/$TPID/status" 2>/dev/null)" = 301 ] && break
	sleep 0.1
done
sleep 0.5

vitals threads --json -i 1s "$TPID" >"$WORK/threads.json" || fail "vitals threads --json -i 1s"
check "threads: the condition variable sleep_cond, 300 waiting, from at most 4 unwinds a sample" \
	python3 - "$WORK/threads.json" <<'PY'
import json, sys
l = json.load(open(sys.argv[1]))["locks"]
rows = [r for r in l["locks"] if r["kind"] == "condvar"]
assert rows, [r["kind"] for r in l["locks"]]
r = rows[0]
n = l["samples"]
print("# %d samples, unwinds %d, waits without a stack read %d; %s at %s, %s waiting" %
      (n, l["unwinds"], l["waits_without_stack_read"], r["kind"], r["place"].get("symbol"), r["waiting"]))
assert r["place"].get("symbol") == "sleep_cond", r["place"]
assert 295 <= r["waiting"] <= 300, r["waiting"]
assert 2 <= n <= 10, n
assert 1 <= l["unwinds"] <= 4 * n, (l["unwinds"], n)
assert l["waits_without_stack_read"] >= n * (300 - 4 - 8), (l["waits_without_stack_read"], n)
PY

vitals locks --json --for 1s "$TPID" >"$WORK/locks.json" || fail "vitals locks --json --for 1s"
check "locks: the same lock, its waiters' stacks read 64 a sample for the call sites" \
	python3 - "$WORK/locks.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
rows = [r for r in j["locks"] if r["kind"] == "condvar"]
assert rows and rows[0]["place"].get("symbol") == "sleep_cond", [(r["kind"], r["place"]) for r in j["locks"]]
print("# locks unwinds %d" % j["unwinds"])
assert j["unwinds"] > 8, j["unwinds"]
PY
check "the target runs on" kill -0 "$TPID"

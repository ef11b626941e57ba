#!/usr/bin/env bash
# A soak keeps what the live thread rules read (issue 22, verdicts 5): redis
# under redis-benchmark is "serving" in vitals threads, and analyze of a
# soak of it says the same, not "frequent wakeups: cannot tell ... its
# timeout and the process's I/O counters cannot be read".  The soak records
# the timeout each thread's waits were given (threads table: timed, untimed,
# timeout_ms) and the process's read and write calls (io_syscr, io_syscw).
# lane: solo — serving vs busy polling is judged from wakeups and CPU
. "$(dirname "$0")/lib.sh"

command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null ||
	skip "redis-server or redis-benchmark is not installed (scripts/deps.sh --test)"
sock=$WORK/redis.sock
redis-server --port 0 --unixsocket "$sock" --save '' --appendonly no --daemonize no --dir "$WORK" \
	>"$WORK/redis.log" 2>&1 &
RS=$!
PIDS+=("$RS")
for _ in $(seq 50); do grep -qi 'ready to accept' "$WORK/redis.log" && break; sleep 0.1; done
grep -qi 'ready to accept' "$WORK/redis.log" || fail "redis did not start: $(tail -3 "$WORK/redis.log")"
# a full run takes minutes: bounded, and stopped once the measurements are in
timeout 40 redis-benchmark -s "$sock" -q -n 10000000 -c 20 -t get,set >"$WORK/bench.out" 2>&1 &
RB=$!
PIDS+=("$RB")
sleep 1

vitals threads --json -i 3s "$RS" >"$WORK/threads.json" || fail "vitals threads on redis"
vitals soak -q -o "$WORK/run.db" --every 0.5s --threads-every 1s --for 6s "$RS" 2>"$WORK/soak.err"
rc=$?
cat "$WORK/soak.err"
check "soak exits 0 (got $rc)" test "$rc" = 0
kill -0 "$RB" 2>/dev/null || fail "redis-benchmark ended before the measurements did: $(tail -c 300 "$WORK/bench.out")"
kill "$RB" 2>/dev/null
vitals analyze --json "$WORK/run.db" >"$WORK/a.json" || fail "vitals analyze"
vitals analyze "$WORK/run.db" >"$WORK/a.txt" || fail "vitals analyze (text)"
sed -n '/^what the threads did/,/^$/p' "$WORK/a.txt"
jq_py "$WORK/threads.json" '[(d["pattern"], d.get("evidence", "")) for d in j["diagnosis"]]'

live=$(jq_py "$WORK/threads.json" '"serving" in [d["pattern"] for d in j["diagnosis"]]')
check "vitals threads: redis is serving" test "$live" = true
check "analyze: the same rule says serving, from what the soak recorded" \
	test "$(jq_py "$WORK/a.json" '"serving" in [d["pattern"] for d in j["threads_diagnosis"]]')" = true
check "analyze: not 'frequent wakeups' (cannot tell)" \
	test "$(jq_py "$WORK/a.json" '"frequent wakeups" in [d["pattern"] for d in j["threads_diagnosis"]]')" = false
check "the text does not say the I/O counters cannot be read" \
	bash -c "! grep -q 'cannot be read' '$WORK/a.txt'"
check "the recording has the process's read and write calls" \
	test "$(jq_py "$WORK/a.json" '"io_syscr" in j["recording"]["metrics"] and "io_syscw" in j["recording"]["metrics"]')" = true

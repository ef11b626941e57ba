#!/usr/bin/env bash
# vitals snap names the allocator of a real server from Debian: redis-server
# links jemalloc (libjemalloc2); a plain Debian binary runs glibc malloc.
. "$(dirname "$0")/lib.sh"

command -v redis-server >/dev/null || skip "redis-server is not installed (scripts/deps.sh --test)"
port=$((20000 + RANDOM % 20000))
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
	--dir "$WORK" >"$WORK/redis.log" 2>&1 &
RPID=$!
PIDS+=("$RPID")
for i in $(seq 50); do
	grep -q 'Ready to accept' "$WORK/redis.log" && break
	sleep 0.1
done
grep -q 'Ready to accept' "$WORK/redis.log" || fail "redis did not start: $(tail -3 "$WORK/redis.log")"

vitals snap --json "$RPID" >"$WORK/redis.json"
rc=$?
check "snap of redis exits 0" test $rc -eq 0
name=$(jq_py "$WORK/redis.json" 'j["processes"][0]["allocator"]["name"]')
evidence=$(jq_py "$WORK/redis.json" 'j["processes"][0]["allocator"]["evidence"]')
echo "redis-server: $name — $evidence"
# independent witness: what the server itself says
if command -v redis-cli >/dev/null; then
	own=$(redis-cli -p "$port" info memory | tr -d '\r' | awk -F: '/^mem_allocator:/ {print $2}')
	echo "redis INFO mem_allocator: $own"
	case $own in jemalloc*) want=jemalloc ;; libc*) want=glibc ;; *) want=$own ;; esac
else
	want=jemalloc
fi
check "allocator of redis-server is $want" test "$name" = "$want"
check "no glibc arenas reported for a jemalloc process" test \
	"$(jq_py "$WORK/redis.json" 'j["processes"][0]["arenas"]["heaps"]')" = null

sleep 30 &
SPID=$!
PIDS+=("$SPID")
vitals snap --json "$SPID" >"$WORK/sleep.json"
check "allocator of /bin/sleep is glibc" test "$(jq_py "$WORK/sleep.json" 'j["processes"][0]["allocator"]["name"]')" = glibc

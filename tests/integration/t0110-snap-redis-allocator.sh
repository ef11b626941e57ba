#!/usr/bin/env bash
# vitals snap names the allocator of a real server from Debian: redis-server
# links jemalloc (libjemalloc2); a plain Debian binary runs glibc malloc.
# Under redis-benchmark load, neither snap nor heap shows redis a glibc
# block or a glibc lever, and heap's live figures are jemalloc's.
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
check "every arena key is there, null (a script reads one shape)" test \
	"$(jq_py "$WORK/redis.json" '[j["processes"][0]["arenas"].get(k, "missing") for k in ("reserved_bytes", "mapped_bytes", "rss_bytes", "swap_bytes", "main_heap_bytes", "main_heap_rss")]')" = '[null, null, null, null, null, null]'

# Under load (redis-benchmark, bounded in time): the allocator is jemalloc,
# so no glibc block, cap or lever in any view, and the live heap figures are
# jemalloc's own, agreeing with redis's INFO once the load is over.
if command -v redis-benchmark >/dev/null && [ "$name" = jemalloc ]; then
	timeout 120 redis-benchmark -p "$port" -q -c 8 -n 20000 -r 100000 -d 2000 -t set,get,lpush \
		>"$WORK/bench.txt" 2>&1 &
	BPID=$!
	PIDS+=("$BPID")
	for i in $(seq 100); do
		[ "$(redis-cli -p "$port" dbsize 2>/dev/null)" -gt 1000 ] 2>/dev/null && break
		sleep 0.1
	done
	vitals snap "$RPID" >"$WORK/load-snap.txt"
	check "snap under load exits 0" test $? -eq 0
	vitals snap --json "$RPID" >"$WORK/load-snap.json"
	vitals heap --json "$RPID" >"$WORK/load-heap.json"
	check "heap under load exits 0" test $? -eq 0
	vitals heap "$RPID" >"$WORK/load-heap.txt"
	check "heap text under load exits 0" test $? -eq 0
	wait "$BPID"
	check "redis-benchmark ran to the end" test $? -eq 0
	tr '\r' '\n' <"$WORK/bench.txt" | grep 'requests per second' | sed 's/^/# /'
	# once the load is over: redis refreshes its allocator figures in its cron
	# (10 times a second) and frees the clients' buffers as they go, so the
	# probe is taken between two INFOs a second apart that agree
	for i in 1 2 3 4 5; do
		sleep 1
		redis-cli -p "$port" info memory | tr -d '\r' >"$WORK/info0.txt"
		vitals heap --json "$RPID" >"$WORK/after-heap.json"
		sleep 0.3
		redis-cli -p "$port" info memory | tr -d '\r' >"$WORK/info.txt"
		cmp -s <(grep '^allocator_allocated:' "$WORK/info0.txt") <(grep '^allocator_allocated:' "$WORK/info.txt") && break
	done
	grep -E '^(VERDICT|JEMALLOC)' "$WORK/load-heap.txt"
	grep '^VERDICT' -A3 "$WORK/load-heap.txt" | tail -n +2
	check "snap text: no glibc block for jemalloc" \
		test -z "$(grep -e 'GLIBC ARENAS' -e 'arena cap' -e 'MALLOC_ARENA_MAX' -e ': cap ' "$WORK/load-snap.txt")"
	check "snap JSON: no glibc arenas or cap" \
		test "$(jq_py "$WORK/load-snap.json" '(j["processes"][0]["arenas"]["heaps"], j["processes"][0]["arenas"]["cap"])')" = '[null, null]'
	check "heap text: jemalloc's figures, no glibc block or lever" \
		test -z "$(grep -i -e MALLINFO -e 'ARENAS (malloc_info)' -e malloc_trim -e MALLOC_ARENA_MAX -e 'fewer arenas' -e 'retains' "$WORK/load-heap.txt")"
	python3 - "$WORK/load-heap.json" "$WORK/after-heap.json" "$WORK/info.txt" <<'PY' || fail "jemalloc's heap under load"
import json, sys
load, after = (json.load(open(f)) for f in sys.argv[1:3])
info = dict(l.strip().split(":", 1) for l in open(sys.argv[3]) if ":" in l)
for h in (load, after):
    v = h["verdict"]
    print(h["allocator"], "allocated", h["jemalloc"]["allocated"], "resident", h["jemalloc"]["resident"],
          "->", v["lever"], "--", v["headline"])
    assert h["allocator"] == "jemalloc" and h["jemalloc"]["allocated"] > 0
    assert h["mallinfo2"] is None and h["arenas"] is None and h["live_fraction"] is None
    assert v["lever"] in ("none", "retention", "decay"), v["lever"]
    for words in ("malloc_trim", "MALLOC_ARENA_MAX", "fewer arenas", "retains", "glibc"):
        assert words not in v["headline"] and not any(words in e for e in v["evidence"]), words
    if v["lever"] == "retention":
        assert v["headline"].startswith("this is live data the program holds"), v["headline"]
# the live figure is jemalloc's own: redis's INFO agrees once the load is over
a, je = int(info["allocator_allocated"]), after["jemalloc"]["allocated"]
print("after the load: jemalloc allocated", je, "redis INFO allocator_allocated", a)
assert abs(je - a) <= max(0.10 * a, 256 * 1024), (je, a)
assert je > 20 << 20, je      # thousands of 2000-byte values: live data, not overhead
PY
	echo "ok - under load: jemalloc's live figures, no glibc block or lever"
	check "redis still answers after the probes" test "$(redis-cli -p "$port" ping)" = PONG
fi

sleep 30 &
SPID=$!
PIDS+=("$SPID")
vitals snap --json "$SPID" >"$WORK/sleep.json"
check "allocator of /bin/sleep is glibc" test "$(jq_py "$WORK/sleep.json" 'j["processes"][0]["allocator"]["name"]')" = glibc

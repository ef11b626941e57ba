#!/usr/bin/env bash
# vitals heap beyond plain glibc-by-ptrace: jemalloc (redis-server from
# Debian, against redis's own INFO), the in-process agent (and --no-agent),
# an allocator it does not read (a clear "not supported"), ptrace refused
# (the rule that refused it), and usage errors.
. "$(dirname "$0")/lib.sh"

# --- jemalloc: redis-server ---
if command -v redis-server >/dev/null && command -v redis-cli >/dev/null; then
	port=$((20000 + RANDOM % 20000))
	redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$WORK" \
		>"$WORK/redis.log" 2>&1 &
	RPID=$!
	PIDS+=("$RPID")
	for i in $(seq 50); do grep -q 'Ready to accept' "$WORK/redis.log" && break; sleep 0.1; done
	# give it some data so the figures are not all overhead
	for i in $(seq 200); do echo "SET key:$i $(head -c 2000 /dev/zero | tr '\0' x)"; done |
		redis-cli -p "$port" >/dev/null
	vitals heap --json "$RPID" >"$WORK/redis.json"
	check "heap of redis exits 0" test $? -eq 0
	redis-cli -p "$port" info memory | tr -d '\r' >"$WORK/info.txt"
	python3 - "$WORK/redis.json" "$WORK/info.txt" <<'PY' || fail "jemalloc figures disagree with redis INFO"
import json, sys
h = json.load(open(sys.argv[1]))
info = dict(l.split(":", 1) for l in open(sys.argv[2]) if ":" in l)
je = h["jemalloc"]
print("vitals jemalloc:", je)
print("redis INFO: allocator_allocated", info["allocator_allocated"], "allocator_resident", info["allocator_resident"])
assert h["allocator"] == "jemalloc" and h["method"] == "ptrace"
assert 0 < je["allocated"] <= je["active"] <= je["resident"] <= je["mapped"] + je["metadata"] + je["retained"] + (64 << 20)
a = int(info["allocator_allocated"])
assert abs(je["allocated"] - a) <= max(0.10 * a, 256 * 1024), (je["allocated"], a)
assert je["narenas"] >= 1 and je["version"]
assert h["verdict"]["lever"] in ("none", "retention", "decay")
PY
	echo "ok - jemalloc stats agree with redis's own INFO (10%)"
	check "redis still answers after the probe" test "$(redis-cli -p "$port" ping)" = PONG
	expect_exit 8 "jemalloc returns dirty pages on its decay timer" heap --trim "$RPID"
else
	echo "# redis-server not installed: jemalloc case skipped"
fi

# --- gperftools tcmalloc, preloaded: against the target's own count of live bytes ---
TCMALLOC=$(ls /usr/lib/*/libtcmalloc_minimal.so.4 /usr/lib/*/libtcmalloc.so.4 2>/dev/null | head -n1)
if [ -n "$TCMALLOC" ]; then
	LD_PRELOAD=$TCMALLOC start_target arena_churn --seconds 90 --threads 4 --pause-signal
	sleep 3
	pause_target
	vitals heap --json "$TPID" >"$WORK/tc.json"
	check "heap of a tcmalloc process exits 0" test $? -eq 0
	python3 - "$WORK/tc.json" "$TRUTH" <<'PY' || fail "tcmalloc's figures disagree with the target's count"
import json, sys
h = json.load(open(sys.argv[1]))
t = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{")][-1]
tc, live = h["tcmalloc"], t["live_bytes"]
print("vitals tcmalloc:", tc)
print("target: phase", t["phase"], "live bytes", live, "in", t["live_blocks"], "blocks")
assert h["allocator"] == "tcmalloc" and h["method"] == "ptrace" and h["jemalloc"] is None
assert h["mallinfo2"] is None
assert t["phase"] == "paused"
# tcmalloc counts each block at its size class (at most 1/8 more, whole pages
# above 256 KiB) and its own few KiB
assert live <= tc["allocated"] <= live * 1.25 + (1 << 20), (live, tc["allocated"])
assert tc["allocated"] <= tc["heap_size"]
assert h["verdict"]["lever"] in ("none", "retention", "decay")
PY
	echo "ok - tcmalloc's allocated bytes hold the target's live bytes (size classes: at most 25% more)"
	kill -USR2 "$TPID"
	sleep 0.5
	check "the target runs on after the probe" test "$(truth_py "$TRUTH" 't["phase"]')" != '"paused"'
	vitals heap "$TPID" >"$WORK/tc.txt"
	check "the text view names tcmalloc's figures" grep -q "^TCMALLOC" "$WORK/tc.txt"
	expect_exit 8 "tcmalloc releases free page-heap spans" heap --trim "$TPID"
	kill "$TPID"
else
	echo "# no libtcmalloc here (scripts/deps.sh --test installs it): tcmalloc case skipped"
fi

# --- the agent ---
AGENT=$B/agent/libvitals-agent.so
[ -f "$AGENT" ] || AGENT=$T/agent/libvitals-agent.so
if [ -f "$AGENT" ]; then
	LD_PRELOAD=$AGENT start_target arena_churn --seconds 60 --threads 4
	sleep 3
	vitals heap --json "$TPID" >"$WORK/agent.json"
	check "heap via the agent exits 0" test $? -eq 0
	check "the agent answered (no ptrace)" test "$(jq_py "$WORK/agent.json" '(j["method"], j["stopped_us"])')" = '["agent", 0.0]'
	check "agent figures are real" test "$(jq_py "$WORK/agent.json" 'j["mallinfo2"]["uordblks"] > 1000000 and len(j["arenas"]) >= 3')" = true
	vitals heap --no-agent --json "$TPID" >"$WORK/noagent.json"
	check "--no-agent uses ptrace" test "$(jq_py "$WORK/noagent.json" 'j["method"]')" = ptrace
	expect_exit 8 "trim not allowed" heap --agent-only --trim "$TPID"
	# a process killed by SIGTERM runs no exit handler: its socket stays, and the next
	# agent to start in the directory removes it (they piled up)
	sockdir=/tmp/vitals-agent-$(id -u)
	env -u XDG_RUNTIME_DIR LD_PRELOAD="$AGENT" sleep 30 &
	gone=$!
	for _ in $(seq 50); do [ -S "$sockdir/$gone.sock" ] && break; sleep 0.1; done
	kill -TERM "$gone"; wait "$gone" 2>/dev/null
	check "the socket of a process killed by SIGTERM is left" test -S "$sockdir/$gone.sock"
	env -u XDG_RUNTIME_DIR LD_PRELOAD="$AGENT" sleep 30 &
	next=$!
	PIDS+=("$next")
	for _ in $(seq 50); do [ -S "$sockdir/$next.sock" ] && break; sleep 0.1; done
	check "the next agent removes it" test ! -e "$sockdir/$gone.sock"
else
	echo "# agent not built: agent case skipped"
fi

# --- not supported: a process whose malloc vitals does not read ---
if [ -e /usr/lib/x86_64-linux-gnu/libc.a ] && command -v cc >/dev/null; then
	printf 'int main(void){for(;;)__asm__ volatile("pause");}\n' >"$WORK/spin.c"
	if cc -static -O1 -o "$WORK/static_spin" "$WORK/spin.c" 2>/dev/null; then
		"$WORK/static_spin" &
		PIDS+=($!)
		sleep 0.2
		expect_exit 8 "not supported|statically" heap $!
	fi
fi

# --- ptrace refused: another user's process ---
sleep 30 &
SP=$!
PIDS+=("$SP")
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
	setpriv --reuid=65534 --regid=65534 --clear-groups "$B/vitals" heap "$SP" >"$WORK/out" 2>"$WORK/err"
	rc=$?
	check "another user's process: exit 5" test $rc -eq 5
	check "the message names the rule" grep -q "belongs to uid 0" "$WORK/err"
fi

# --- the agent's /tmp directory taken by another user (issue 23, item 9) ---
# In /tmp anyone may create vitals-agent-<uid> first; the agent then refuses to
# serve from it, and used to say nothing.  A private /tmp (a mount namespace)
# keeps the other tests' agents out of this.
if unshare -m true 2>/dev/null; then
	# the files are passed as descriptors: the new /tmp hides $WORK (and a build under /tmp)
	unshare -m sh -c 'mount -t tmpfs none /tmp && mkdir -m 755 /tmp/vitals-agent-0 &&
		chown 65534 /tmp/vitals-agent-0 &&
		{ LD_PRELOAD=/proc/self/fd/5 sleep 3 2>&3 & } && p=$! && sleep 0.5 &&
		/proc/self/fd/6 caps "$p" >&4 2>&1; wait' \
		3>"$WORK/taken.agent" 4>"$WORK/taken.caps" 5<"$AGENT" 6<"$B/vitals"
	check "the agent says once on its host's stderr why it does not serve" \
		test "$(grep -c "not serving heap figures: '/tmp/vitals-agent-0' has owner 65534" "$WORK/taken.agent")" = 1
	check "vitals caps names the taken directory" \
		grep -q "the agent's directory /tmp/vitals-agent-0 is not the target's own (owner 65534" "$WORK/taken.caps"
else
	echo "# no mount namespace here (unshare -m): the taken-directory check is skipped"
fi

# --- usage ---
expect_exit 64 "one PID at a time" heap 1 2
expect_exit 64 "which process" heap
expect_exit 64 "not a process id" heap nope
expect_exit 64 "leave no way" heap --no-agent --agent-only 1
expect_exit 3 "no process" heap $(( $(cat /proc/sys/kernel/pid_max) + 1 ))
kt=$(kernel_thread)
[ -n "$kt" ] && expect_exit 6 "kernel thread" heap "$kt"
exit 0

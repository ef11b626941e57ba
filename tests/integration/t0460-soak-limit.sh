#!/usr/bin/env bash
# vitals analyze --limit (issue 16, part 2): a memory limit for the process's
# cgroup from a settled soak.  A plateau target (step_growth with its step
# never reached) runs in a memory cgroup of its own:
#  1. under a 1 GiB limit: the limit is given, by the stated rule, from a
#     peak that an independent sampler of /proc/PID/status (VmRSS + VmSwap
#     every 50 ms) confirms; the cgroup's limit and its events are read;
#  2. the limit lowered to 80 MiB, under the rule's figure, while a reader in
#     the same cgroup fills it with page cache: the limit is hit (memory.events
#     max, v1 failcnt) with the process near it, and the answer is "cannot tell
#     yet" with that reason;
#  3. a soak too short to settle: "cannot tell yet", soak longer;
#  4. compare --limit over the recordings, and --limit refused with --prometheus;
#  5. a target that outgrows a 48 MiB limit (swap barred) and is OOM-killed: no
#     sample of it can show its own kill, so the soak reads the cgroup again
#     when it exits and records an oom_kill event; the limit cannot be told.
# Needs root and a memory controller it can configure (cgroup v1 memory, or v2
# with memory available); otherwise skipped, saying why.
# (shared lane: its figures are the target's memory, whose cadence holds beside CPU hogs)
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "creating a cgroup needs root"
MiB=1048576
if [ -d /sys/fs/cgroup/memory ] && [ -w /sys/fs/cgroup/memory/cgroup.procs ] &&
	[ -e /sys/fs/cgroup/memory/memory.limit_in_bytes ]; then
	CG=/sys/fs/cgroup/memory/vitals-t0460-$$
	CG_PROCS_BACK=/sys/fs/cgroup/memory/cgroup.procs
	LIMIT_FILE=memory.limit_in_bytes
elif grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
	CG=/sys/fs/cgroup/vitals-t0460-$$
	CG_PROCS_BACK=/sys/fs/cgroup/cgroup.procs
	LIMIT_FILE=memory.max
	grep -qw memory /sys/fs/cgroup/cgroup.subtree_control ||
		echo +memory >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null ||
		skip "cannot enable the memory controller in /sys/fs/cgroup"
else
	skip "no configurable memory controller (cgroup v1 memory or v2 memory) here"
fi
mkdir "$CG" || skip "cannot create $CG"
cg_cleanup() {
	local p
	for p in $(cat "$CG/cgroup.procs" 2>/dev/null); do kill "$p" 2>/dev/null; done
	sleep 0.2
	for p in $(cat "$CG/cgroup.procs" 2>/dev/null); do echo "$p" >"$CG_PROCS_BACK" 2>/dev/null; done
	cleanup
	rmdir "$CG" 2>/dev/null
	[ -n "${BIG:-}" ] && rm -f "$BIG"
}
trap cg_cleanup EXIT
echo $((1024 * MiB)) >"$CG/$LIMIT_FILE" || skip "cannot set a limit in $CG"

# the target in the cgroup: a shell joins it, then becomes the target
bash -c "echo \$\$ >'$CG/cgroup.procs' && exec '$T/targets/step_growth' --step-at 100000 --churn-mb 64 --seconds 300" \
	>"$WORK/target.out" 2>&1 &
P=$!
PIDS+=("$P")
sleep 1
grep -q "vitals-t0460-$$" "/proc/$P/cgroup" || fail "the target is not in $CG"

# the witness: VmRSS + VmSwap every 50 ms, its highest written at the end
witness() {
	python3 - "$P" "$1" "$2" <<'PY' &
import sys, time
pid, secs, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
hi, end = 0, time.time() + secs
while time.time() < end:
    kb = {}
    for line in open(f"/proc/{pid}/status"):
        k, _, v = line.partition(":")
        if k in ("VmRSS", "VmSwap"):
            kb[k] = int(v.split()[0])
    hi = max(hi, (kb.get("VmRSS", 0) + kb.get("VmSwap", 0)) * 1024)
    time.sleep(0.05)
open(out, "w").write(str(hi))
PY
	WITNESS=$!
}

# --- 1. settled under a loose limit: the limit is given --------------------------
witness 31 "$WORK/peak1"
vitals soak -q -o "$WORK/loose.db" --every 0.25s --for 30s "$P" >"$WORK/soak1.out" 2>&1 ||
	fail "soak under 1 GiB: $(cat "$WORK/soak1.out")"
wait "$WITNESS"
vitals analyze --limit --json "$WORK/loose.db" >"$WORK/loose.json" || fail "analyze --limit --json"
L() { jq_py "$WORK/$1.json" "j['memory_limit']$2"; }
echo "# loose: $(L loose "['headline']"); peak $(L loose "['peak_bytes']") B, witness $(cat "$WORK/peak1") B; spread $(L loose "['spread_bytes']"); cgroup $(L loose "['cgroup']")"
check "a settled soak gets a limit" test "$(L loose "['outcome']")" = given
check "by the stated rule: peak + max(20%, spread, 32 MiB), up to 16 MiB" \
	test "$(L loose "['recommended_bytes'] == __import__('math').ceil((j['memory_limit']['peak_bytes'] + max(0.2 * j['memory_limit']['peak_bytes'], j['memory_limit']['spread_bytes'], 32 * $MiB)) / (16 * $MiB)) * 16 * $MiB")" = true
check "its peak is what the witness saw (within 2%)" \
	python3 -c "import sys; p, w = $(L loose "['peak_bytes']"), $(cat "$WORK/peak1"); sys.exit(not abs(p - w) <= 0.02 * w)"
check "the limit holds the witness's peak with room" \
	python3 -c "import sys; sys.exit(not $(L loose "['recommended_bytes']") >= 1.2 * $(cat "$WORK/peak1"))"
check "the cgroup's limit is read: 1 GiB" test "$(L loose "['cgroup']['limit_bytes']")" = $((1024 * MiB))
check "and its events: the limit was not reached" test "$(L loose "['cgroup']['events_max']")" = 0
vitals analyze --limit "$WORK/loose.db" >"$WORK/loose.txt" || fail "analyze --limit"
rec_mib=$(( $(L loose "['recommended_bytes']") / MiB ))
check "the text gives the limit" grep -q "^memory limit: $rec_mib MiB" "$WORK/loose.txt"
check "as each tool takes it" grep -q "MemoryMax=${rec_mib}M" "$WORK/loose.txt"
check "and says what the cgroup has now" grep -q "limit 1024 MiB now" "$WORK/loose.txt"
vitals analyze "$WORK/loose.db" >"$WORK/plain.txt" || fail "analyze without --limit"
check "no limit section unless asked" test "$(grep -c "^memory limit" "$WORK/plain.txt")" = 0

# --- 2. the limit lowered under the rule's figure, and reached: cannot tell -----
echo $((80 * MiB)) >"$CG/$LIMIT_FILE" || fail "cannot lower the limit to 80 MiB"
# page cache written and read back inside the cgroup is charged to it (a file on
# a disk: /tmp may be tmpfs, whose pages are shmem charged to their writer)
BIG=$(mktemp /var/tmp/vitals-t0460.XXXXXX)
bash -c "echo \$\$ >'$CG/cgroup.procs' && sleep 3 && head -c $((200 * MiB)) /dev/zero >'$BIG' &&
	for i in 1 2 3 4 5; do cat '$BIG' >/dev/null; sleep 1; done" &
PIDS+=($!)
vitals soak -q -o "$WORK/tight.db" --every 0.25s --for 25s "$P" >"$WORK/soak2.out" 2>&1 ||
	fail "soak under 80 MiB: $(cat "$WORK/soak2.out")"
kill -0 "$P" 2>/dev/null || fail "the target died under 80 MiB (the test's limit is too tight)"
vitals analyze --limit --json "$WORK/tight.db" >"$WORK/tight.json" || fail "analyze --limit --json (tight)"
echo "# tight: $(L tight "['headline']"); cgroup $(L tight "['cgroup']")"
check "the limit was reached during the soak" test "$(L tight "['cgroup']['events_max'] > 0")" = true
check "so it cannot tell: the limit bit the process" test "$(L tight "['outcome']")" = limit_hit
check "no figure is recommended" test "$(L tight "['recommended_bytes']")" = null
vitals analyze --limit "$WORK/tight.db" >"$WORK/tight.txt" || fail "analyze --limit (tight)"
check "the text says cannot tell yet" grep -q "^memory limit: cannot tell yet" "$WORK/tight.txt"
check "and why" grep -q "would not fit under" "$WORK/tight.txt"

# --- 3. too short to settle ------------------------------------------------------
vitals soak -q -o "$WORK/short.db" --every 0.5s --for 3s "$P" >/dev/null 2>&1 || fail "short soak"
vitals analyze --limit --json "$WORK/short.db" >"$WORK/short.json" || fail "analyze --limit (short)"
check "a short soak: cannot tell, not settled" test "$(L short "['outcome']")" = not_settled
check "with how much longer to soak" test "$(L short "['need_more_s'] > 0")" = true

# --- 4. compare, and what --limit does not go with -------------------------------
vitals compare --limit --names loose,tight "$WORK/loose.db" "$WORK/tight.db" >"$WORK/cmp.txt" ||
	fail "compare --limit"
check "compare gives each arm's limit" grep -Eq "^  loose +$rec_mib MiB" "$WORK/cmp.txt"
check "and the arm it cannot tell for" grep -Eq "^  tight +cannot tell yet" "$WORK/cmp.txt"
vitals compare --limit --json "$WORK/loose.db" "$WORK/tight.db" >"$WORK/cmp.json" || fail "compare --limit --json"
check "compare --json has memory_limit per arm" \
	test "$(jq_py "$WORK/cmp.json" '[a["memory_limit"]["outcome"] for a in j["arms"]]')" = '["given", "limit_hit"]'
expect_exit 64 "limit is for recordings" analyze --limit --prometheus http://127.0.0.1:9 --query up

# --- 5. killed by the OOM killer: seen after the exit -----------------------------
CG2=$CG-oom
mkdir "$CG2" || fail "cannot create $CG2"
cg2_cleanup() { cg_cleanup; rmdir "$CG2" 2>/dev/null; }
trap cg2_cleanup EXIT
if [ "$LIMIT_FILE" = memory.limit_in_bytes ]; then
	echo $((48 * MiB)) >"$CG2/memory.limit_in_bytes" || fail "cannot set 48 MiB"
	[ -e "$CG2/memory.memsw.limit_in_bytes" ] && echo $((48 * MiB)) >"$CG2/memory.memsw.limit_in_bytes"
else
	echo $((48 * MiB)) >"$CG2/memory.max" || fail "cannot set 48 MiB"
	[ -e "$CG2/memory.swap.max" ] && echo 0 >"$CG2/memory.swap.max"
fi
[ "$(awk '/SwapTotal/ {print $2}' /proc/meminfo)" = 0 ] || [ -e "$CG2/memory.memsw.limit_in_bytes" ] ||
	[ -e "$CG2/memory.swap.max" ] || skip "swap is on and cannot be barred in the cgroup: no OOM kill to see"
bash -c "echo \$\$ >'$CG2/cgroup.procs' && exec '$T/targets/step_growth' --step-at 4 --step-mb 96 --seconds 60" \
	>"$WORK/oom.out" 2>&1 &
Q=$!
sleep 1
# the target killed and not back when --for ends: exit 4, said (t0415)
vitals soak -q -o "$WORK/oom.db" --every 0.25s --for 10s "$Q" >"$WORK/soak5.out" 2>&1
rc=$?
[ "$rc" = 4 ] && grep -q "no process to follow came back" "$WORK/soak5.out" ||
	fail "soak of the OOM: rc $rc: $(cat "$WORK/soak5.out")"
wait "$Q"
echo "# killed: status $? (137: SIGKILL)"
vitals analyze --limit --json "$WORK/oom.db" >"$WORK/oom.json" || fail "analyze --limit (oom)"
echo "# oom: $(L oom "['headline']")"
check "the soak recorded the OOM kill when the target exited" \
	test "$(jq_py "$WORK/oom.json" '[e["kind"] for e in j["events"]].count("oom_kill")')" = 1
check "so the limit cannot be told: the limit killed it" test "$(L oom "['outcome']")" = limit_hit
check "and says so" test "$(L oom "['cgroup']['oom_kill_at_exit']")" = true

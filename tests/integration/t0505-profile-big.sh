#!/usr/bin/env bash
# vitals profile on a big process: 2,000 sleeping threads and 20 short-lived
# ones a second starting and exiting while it samples (big_process --churn).
# The profiler's thread table grows while a tick holds an entry of it: from
# about 32 threads that wrote to freed memory, from about 600 it crashed
# (SIGSEGV in 0.08 s, every run).  Run by both builds: under ASan a use after
# free is a failure even when the plain build happens to survive it.
# Checked: CPU and --wall profiles exit 0 with samples and JSON that parses,
# threads came and went meanwhile, and the target is unharmed.
# Prerequisite: perf events (root, or perf_event_paranoid <= 1).
. "$(dirname "$0")/lib.sh"

paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)
[ "$(id -u)" = 0 ] || [ "$paranoid" -le 1 ] || skip "perf events need root or kernel.perf_event_paranoid <= 1"
start_target big_process --threads 2000 --churn 20 --mappings 10 --resident-mb 16 --seconds 120
P=$TPID
for _ in $(seq 100); do
	[ "$(truth_py "$TRUTH" 't["phase"]' 2>/dev/null)" = '"ready"' ] && break
	sleep 0.2
done
check "the target has 2,000 threads" test "$(ls /proc/"$P"/task | wc -l)" -ge 2000

for mode in cpu wall; do
	args=(--for 3s --json)
	[ $mode = wall ] && args+=(--wall)
	vitals profile "${args[@]}" "$P" >"$WORK/$mode.json" 2>"$WORK/$mode.err"
	rc=$?
	cat "$WORK/$mode.err"
	check "$mode profile of 2,000 threads exits 0 (got $rc)" test "$rc" = 0
	check "$mode profile: no sanitizer report" test "$(grep -c 'Sanitizer' "$WORK/$mode.err")" = 0
	check "$mode profile: samples were taken" \
		test "$(jq_py "$WORK/$mode.json" 'sum(b["samples"] for b in j["buckets"]) > 0')" = true
done
check "short-lived threads came and went during the profiles" \
	test "$(truth_py "$TRUTH" 't["churned"] >= 60')" = true
check "the target is alive and not stopped" \
	test "$(awk '{print $3}' /proc/"$P"/stat)" != T
kill -0 "$P" || fail "the target died"
echo "ok - t0505"

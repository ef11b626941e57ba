#!/usr/bin/env bash
# vitals profile on a big process: 2,000 sleeping threads and 20 short-lived
# ones a second starting and exiting while it samples (big_process --churn).
# The profiler's thread table grows while a tick holds an entry of it: from
# about 32 threads that wrote to freed memory, from about 600 it crashed
# (SIGSEGV in 0.08 s, every run).  Run by both builds: under ASan a use after
# free is a failure even when the plain build happens to survive it.
# Checked: CPU and --wall profiles exit 0 with samples and JSON that parses,
# threads came and went meanwhile, and the target is unharmed; at --hz 50,
# which samples none of the short-lived threads, the profile says so.
# Prerequisite: perf events (root, or perf_event_paranoid <= 1).
# sanitizer: the profiler on 2,000 threads starting and exiting (a use after free was here)
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
	# --hz 997: the churn threads' CPU is sampled (at the default 99 Hz, 0 to 2 samples of
	# 0.5 cores: each lives about 15 ms); the table then grows under the most ticks
	if [ $mode = wall ]; then args+=(--wall); else args+=(--hz 997); fi
	vitals profile "${args[@]}" "$P" >"$WORK/$mode.json" 2>"$WORK/$mode.err"
	rc=$?
	cat "$WORK/$mode.err"
	check "$mode profile of 2,000 threads exits 0 (got $rc)" test "$rc" = 0
	check "$mode profile: no sanitizer report" test "$(grep -c 'Sanitizer' "$WORK/$mode.err")" = 0
	# a wall profile's samples are mostly the 2,000 sleepers, idle in futex waits: none of
	# them is a bucket's CPU sample (it failed so in CI, 0 on-CPU samples of 590,592)
	if [ $mode = cpu ]; then
		check "cpu profile: samples were taken" \
			test "$(jq_py "$WORK/$mode.json" 'j["samples"]["on_cpu"] > 0')" = true
	else
		check "wall profile: every sleeper sampled at least once" \
			test "$(jq_py "$WORK/$mode.json" 'j["samples"]["waiting"] >= 2000')" = true
	fi
done
# A thread-per-request server's case: each churn thread burns about 15 ms, under
# the 1/50 s after which cpu-clock first samples a thread, so at --hz 50 none is
# sampled: the profile says most of the CPU was not, that threads came and
# went, and (events inherited) which rate samples them.
vitals profile --for 3s --hz 50 --json "$P" >"$WORK/hz50.json" 2>"$WORK/hz50.err"
rc=$?
cat "$WORK/hz50.err"
check "--hz 50 profile exits 0 (got $rc)" test "$rc" = 0
jq_py "$WORK/hz50.json" '[j["unsampled_share"], j["threads_inherited"], j["unsampled"]]'
check "--hz 50: most of the CPU not sampled, threads came and went, and what to do" \
	test "$(jq_py "$WORK/hz50.json" 'j["unsampled_share"] > 0.5 and (
	    (j["unsampled"]["cause"], j["unsampled"]["hz_advice"]) ==
	    (("short_lived_threads", 500) if j["threads_inherited"] else ("unlisted_threads", None)))')" = true
check "short-lived threads came and went during the profiles" \
	test "$(truth_py "$TRUTH" 't["churned"] >= 60')" = true
check "the target is alive and not stopped" \
	test "$(awk '{print $3}' /proc/"$P"/stat)" != T
kill -0 "$P" || fail "the target died"
echo "ok - t0505"

#!/usr/bin/env bash
# vitals threads under a cgroup CPU quota: two spinning threads in a cgroup
# limited to half a core.  The share is taken of the quota (not of the CPUs),
# the throttled periods are counted, and the diagnosis says "CPU throttled".
# Needs root and a cpu controller it can configure: cgroup v2 with cpu
# available, or the v1 cpu hierarchy; otherwise skipped, saying why.
# lane: solo — a CPU quota's throttling is measured
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "creating a cgroup needs root"
CG=
CG_PROCS_BACK=
if [ -d /sys/fs/cgroup/cpu ] && [ -w /sys/fs/cgroup/cpu/cgroup.procs ] &&
	[ -e /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then
	CG=/sys/fs/cgroup/cpu/vitals-t0310-$$
	CG_PROCS_BACK=/sys/fs/cgroup/cpu/cgroup.procs
	mkdir "$CG" || skip "cannot create $CG"
	echo 100000 >"$CG/cpu.cfs_period_us" && echo 50000 >"$CG/cpu.cfs_quota_us" ||
		{ rmdir "$CG"; skip "cannot set a quota in $CG"; }
	# a weight well above the other work's: on a busy host (the other lane, make
	# test-loaded's hogs) the spinners still reach the quota, where throttling is
	echo 102400 >"$CG/cpu.shares" 2>/dev/null
	rel=${CG#/sys/fs/cgroup/cpu}
elif grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
	CG=/sys/fs/cgroup/vitals-t0310-$$
	CG_PROCS_BACK=/sys/fs/cgroup/cgroup.procs
	grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control ||
		echo +cpu >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null ||
		skip "cannot enable the cpu controller in /sys/fs/cgroup"
	mkdir "$CG" || skip "cannot create $CG"
	echo "50000 100000" >"$CG/cpu.max" || { rmdir "$CG"; skip "cannot write $CG/cpu.max"; }
	echo 10000 >"$CG/cpu.weight" 2>/dev/null   # as cpu.shares above
	rel=${CG#/sys/fs/cgroup}
else
	skip "no configurable cpu controller (cgroup v1 cpu or v2 cpu) here"
fi
cg_cleanup() {
	local p
	for p in $(cat "$CG/cgroup.procs" 2>/dev/null); do echo "$p" >"$CG_PROCS_BACK" 2>/dev/null; done
	cleanup
	rmdir "$CG" 2>/dev/null
}
trap cg_cleanup EXIT

start_target load_change --idle-seconds 0 --busy-threads 2 --seconds 120   # killed at the end; outlives a slow ASan run
echo "$TPID" >"$CG/cgroup.procs" || fail "cannot move the target into $CG"
sleep 1
"$B/vitals" threads --json -i 2s "$TPID" >"$WORK/q.json" || fail "vitals threads in the cgroup"
echo "# quota: $(jq_py "$WORK/q.json" '[j["cgroup_quota_cores"], j["cgroup_quota_dir"], j["usable_cores"], j["process"]["cores"], j["process"]["throttled_periods"], j["process"]["quota_periods"]]')"
check "the quota is read: 0.5 cores" test "$(jq_py "$WORK/q.json" 'round(j["cgroup_quota_cores"], 3)')" = 0.5
check "and named by its cgroup" test "$(jq_py "$WORK/q.json" 'j["cgroup_quota_dir"].endswith("'"$rel"'")')" = true
check "the share divides by the quota" test "$(jq_py "$WORK/q.json" 'round(j["usable_cores"], 3)')" = 0.5
check "the process gets no more than the quota (+10%)" \
	python3 -c "import sys; sys.exit($(jq_py "$WORK/q.json" 'j["process"]["cores"]') > 0.55)"
check "throttled in most quota periods" \
	test "$(jq_py "$WORK/q.json" 'j["process"]["throttled_periods"] >= 0.5 * j["process"]["quota_periods"] > 0')" = true
check "diagnosed as CPU throttled" \
	test "$(jq_py "$WORK/q.json" '"CPU throttled" in [d["pattern"] for d in j["diagnosis"]]')" = true
"$B/vitals" threads -i 1s "$TPID" >"$WORK/q.txt" || fail "text output"
check "the text gives the share of the quota" grep -q "of its 0.50-core cgroup quota" "$WORK/q.txt"
check "and the throttled periods" grep -q "^  throttled  in " "$WORK/q.txt"

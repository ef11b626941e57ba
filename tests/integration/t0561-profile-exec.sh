#!/usr/bin/env bash
# A process that exec()s while `vitals profile` samples it: the perf
# events follow it into the new image, and so must the names.  The maps
# file vitals held open belonged to the old image and reads empty after
# the exec; the module list stayed the old program's, every pc of the new
# one was unknown and went to the 'JIT code' bucket (42% of this run).
# Here a shell waits 2 s, then execs profile_work: its functions must be
# named and the 'JIT code' bucket stay small.  (The samples taken between
# the exec and the next module refresh, up to one 100 ms tick, are still
# unknown and land in 'JIT code': a few percent, hence the bound.)  The
# same pc named again after a refresh is a new location, not the old one.
# Prerequisite: perf events (root, or perf_event_paranoid <= 1).
# lane: solo — the profile must catch an exec as it happens
# sanitizer: the profiler reloading its module list across an exec
. "$(dirname "$0")/lib.sh"

paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)
[ "$(id -u)" = 0 ] || [ "$paranoid" -le 1 ] || skip "perf events need root or kernel.perf_event_paranoid <= 1"
[ -x "$T/targets/profile_work" ] || skip "no profile_work target"
bash -c "sleep 2; exec '$T/targets/profile_work' --seconds 30 --dir '$WORK'" >"$WORK/pw.out" 2>&1 &
P=$!
PIDS+=("$P")
vitals profile --for 6s --json "$P" >"$WORK/p.json" 2>"$WORK/err"
rc=$?
cat "$WORK/err"
check "profile exits 0 (got $rc)" test "$rc" = 0
python3 - "$WORK/p.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
b = {x["name"]: x["share"] for x in j["buckets"]}
names = {f["function"] for f in j["top_total"]}
print("buckets:", b)
print("top total:", sorted(names)[:20])
PY
check "at most a sliver of JIT code claimed for a program with none" \
	test "$(jq_py "$WORK/p.json" 'sum(b["share"] for b in j["buckets"] if b["name"] == "JIT code") < 0.15')" = true
check "the new image's functions are named" \
	test "$(jq_py "$WORK/p.json" 'any(f["function"] == "worker_main" for f in j["top_total"])')" = true
# Every thread's stack ends in the new libc's start_thread: one return address
# all run long, so named wrongly once (against the old image's modules, or
# libdw's lookup naming ld.so for any address above it) it stayed wrong.
check "the new libc's start_thread is named under most samples" \
	test "$(jq_py "$WORK/p.json" 'sum(f["total_share"] for f in j["top_total"] if f["function"] == "start_thread") > 0.8')" = true

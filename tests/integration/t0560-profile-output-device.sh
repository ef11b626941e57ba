#!/usr/bin/env bash
# `vitals profile --folded/--pprof/--html DEVICE` writes an existing
# character device as it is; when the write fails (a full disk, as
# /dev/full says), the profile's output files are removed, but never a
# device that was there before: as root, `--folded /dev/full` used to
# unlink /dev/full.  A copy of /dev/full (char 1,7) made in the work
# directory stands in for it.
# Prerequisite: perf events (root, or perf_event_paranoid <= 1) and mknod.
. "$(dirname "$0")/lib.sh"

paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)
[ "$(id -u)" = 0 ] || [ "$paranoid" -le 1 ] || skip "perf events need root or kernel.perf_event_paranoid <= 1"
mknod -m 666 "$WORK/full" c 1 7 2>/dev/null || skip "cannot mknod a copy of /dev/full here"
target=profile_work
[ -x "$T/targets/$target" ] || target=core_contention
if [ "$target" = profile_work ]; then
	start_target profile_work --seconds 60 --dir "$WORK"
else
	start_target core_contention --seconds 60 --threads 2
fi
P=$TPID

for opt in --folded --pprof --html; do
	vitals profile --for 0.5s "$opt" "$WORK/full" "$P" >"$WORK/out" 2>"$WORK/err"
	rc=$?
	cat "$WORK/err"
	check "$opt to a full device fails (exit $rc)" test "$rc" != 0
	check "$opt: the error names the file" grep -q "$WORK/full" "$WORK/err"
	check "$opt: the device is still there, a character device" test -c "$WORK/full"
done

# a failed write to a file it made is still removed
vitals profile --for 0.5s --folded "$WORK/full" --pprof "$WORK/p.pb.gz" "$P" >"$WORK/out" 2>"$WORK/err"
check "the device survives beside another output" test -c "$WORK/full"

#!/usr/bin/env bash
# vitals short of file descriptors or memory says so (issue 23, item 6).
# With `ulimit -n` 7 to 12, census said "permission denied" (exit 5) or
# "glibc older than 2.27" (exit 8), threads "process has no thread left"
# (exit 4) and profile "no process N" (exit 3 or 2), and heap could not start
# the watchdog that bounds its stop.  Every command must now end in a result
# (0, or 1 with a note), or in exit 13 naming the limit it ran into.
# sanitizer: every failure path when descriptors or memory run out, where leaks and double frees hide
. "$(dirname "$0")/lib.sh"

start_target inject_victim --seconds 300 --churn-threads 1 --churn-duty 50 --signal-hz 200
victim=$TPID
sleep 0.3

runs=0 short=0
try() {    # try LIMIT-OPTION VALUE ARGS...: vitals ARGS under ulimit; fails on a wrong story
	local opt=$1 val=$2 out rc
	shift 2
	out=$( (ulimit "$opt" "$val"; "$B/vitals" "$@" "$victim" 2>&1 >/dev/null) )
	rc=$?
	runs=$((runs + 1))
	case $rc in
	0 | 1) ;;
	13) short=$((short + 1))
	    echo "$out" | grep -q "ulimit $opt" || fail "ulimit $opt $val, vitals $*: exit 13 without naming the limit: $out" ;;
	*) fail "ulimit $opt $val, vitals $*: exit $rc: $out" ;;
	esac
}
for n in 7 8 9 10 11 12; do
	for cmd in census "census --consistent" threads heap snap "profile --for 0.3s"; do
		# shellcheck disable=SC2086
		try -n "$n" $cmd
	done
done
# AddressSanitizer reserves terabytes of shadow address space: no ulimit -v for that build
case "$B" in *-san*) vlimits="" ;; *) vlimits="8000 10000 14000" ;; esac
for v in $vlimits; do
	for cmd in census heap "profile --for 0.3s"; do
		# shellcheck disable=SC2086
		try -v "$v" $cmd
	done
done
echo "# $runs runs under a limit: $short ended in exit 13 naming it, the rest with a result"
check "some runs met the limit" test "$short" -ge 10
check "the target is alive and not traced" test "$(awk '/^TracerPid:/ { print $2 }' "/proc/$victim/status")" = 0

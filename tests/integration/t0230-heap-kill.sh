#!/usr/bin/env bash
# vitals killed with SIGKILL at a random instant of a probe never harms the
# target.  `timeout -s KILL <delay> vitals heap PID`, the delay drawn at
# random over the whole length of a probe (and a little past it), against a
# busy inject_victim (a thread in malloc/free half the time, 1,000 queued
# signals a second, a reader, a sleeper, a condition variable) whose own
# checks must all hold at the end (allocation checksums, every signal
# received once and in order, no short or interrupted sleep, no lost pipe
# record or queue item), against a quiet one (one thread in read()), and
# `vitals soak --heap` killed mid-tick.  No target may die, none may be left
# traced.  Before calls returned through a signal frame, 38 of 172 kills
# mid-probe killed the busy target (SIGSEGV).
#
# VT_KILLS sets the number of kills of `vitals heap` per target (CI: 200
# busy, 50 quiet; 30 and 10 on the sanitizer build); the long run in docs/inject.md is VT_KILLS=1000.
# sanitizer: heap and soak --heap runs that finish between kills, and the session torn down
. "$(dirname "$0")/lib.sh"

# The sanitizer build's vitals is checked for memory errors on fewer kills.
case "$B" in *-san*) KILLS=${VT_KILLS:-30} ;; *) KILLS=${VT_KILLS:-200} ;; esac
QUIET_KILLS=$((KILLS / 4 > 10 ? KILLS / 4 : 10))
SOAK_KILLS=${VT_SOAK_KILLS:-20}

tracer_of() { awk '/^TracerPid:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
alive() { [[ -d /proc/$1 ]] && [[ $(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) != Z ]]; }

# A probe's length here (median of 7 runs after a first, cold one), to spread the kills over it.
probe_seconds() {
	python3 - "$B/vitals" "$1" <<'PY'
import subprocess, sys, time
runs = []
subprocess.run([sys.argv[1], "heap", sys.argv[2]], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for _ in range(7):
    t = time.monotonic()
    subprocess.run([sys.argv[1], "heap", sys.argv[2]], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    runs.append(time.monotonic() - t)
print(f"{sorted(runs)[3]:.4f}")
PY
}

# kill_loop PID N SPAN CMD...: N runs of CMD, each killed after a random delay
# up to SPAN seconds; sets $killed and $completed; fails as soon as PID dies.
kill_loop() {
	local pid=$1 n=$2 span=$3
	shift 3
	local i delay us rc span_us
	span_us=$(python3 -c "print(int($span * 1e6))")
	killed=0 completed=0 refused=0
	for i in $(seq "$n"); do
		us=$(( (RANDOM * 32768 + RANDOM) % span_us + 500 ))
		delay=$(printf '%d.%06d' $((us / 1000000)) $((us % 1000000)))
		timeout --foreground -s KILL "$delay" "$@" >/dev/null 2>&1
		rc=$?
		# 137: killed; 124: killed as it was ending (timeout's own status)
		if [[ $rc -eq 137 || $rc -eq 124 ]]; then killed=$((killed + 1)); else completed=$((completed + 1)); fi
		[[ $rc -eq 0 || $rc -eq 137 || $rc -eq 124 ]] || refused=$((refused + 1))
		alive "$pid" || fail "target $pid died after run $i (vitals killed after ${delay}s," \
			"exit $rc; $killed killed and $completed completed before)"
	done
}

# --- busy target -----------------------------------------------------------------
start_target inject_victim --seconds 900 --churn-threads 1 --churn-duty 50 --signal-hz 1000
busy=$TPID busy_truth=$TRUTH
sleep 0.5
span=$(probe_seconds "$busy")
echo "# busy target: a probe takes ${span}s here; $KILLS kills over 0-$(python3 -c "print(round(1.3 * $span, 4))")s"
kill_loop "$busy" "$KILLS" "$(python3 -c "print(1.3 * $span)")" "$B/vitals" heap "$busy"
echo "# busy target: $killed runs killed mid-way, $completed completed ($refused of them with an error: thread awake, timeout); target alive"
# a tenth at least: on a host busy with other lanes a probe's length varies several-fold
check "at least a tenth of the runs were killed mid-probe" test "$killed" -ge $((KILLS / 10))
check "the busy target is not left traced" test "$(tracer_of "$busy")" = 0
vitals heap --json "$busy" >"$WORK/after.json" 2>&1
check "a probe after the kills works" python3 -c "import json, sys; json.load(open(sys.argv[1]))" "$WORK/after.json"

# --- soak --heap killed mid-tick ----------------------------------------------------
kill_loop "$busy" "$SOAK_KILLS" 1.5 \
	"$B/vitals" soak -q --force -o "$WORK/soak.db" --every 0.1s --heap --heap-every 0.1s "$busy"
echo "# soak --heap: $killed of $SOAK_KILLS killed mid-run; target alive"
check "soak --heap killed mid-tick leaves the target untraced" test "$(tracer_of "$busy")" = 0

kill -TERM "$busy"
wait "$busy" 2>/dev/null
last=$(tail -n 1 "$busy_truth")
echo "# busy target's last truth: $last"
check "the busy target's own checks all held" python3 -c "
import json, sys
t = json.loads(sys.argv[1])
sys.exit(not (t['phase'] == 'exit' and t['ok'] and t['errors'] == 0 and t['checksum_errors'] == 0
              and t['signals_sent'] == t['signals_received'] and t['signal_order_errors'] == 0))" "$last"

# --- quiet target ----------------------------------------------------------------
mkfifo "$WORK/quiet.in"
"$T/targets/inject_victim" --hold-kb 1000 <"$WORK/quiet.in" >"$WORK/quiet.out" 2>&1 &
quiet=$!
PIDS+=("$quiet")
exec 7>"$WORK/quiet.in"
for i in $(seq 50); do grep -q '^pid ' "$WORK/quiet.out" && break; sleep 0.1; done
span=$(probe_seconds "$quiet")
kill_loop "$quiet" "$QUIET_KILLS" "$(python3 -c "print(1.3 * $span)")" "$B/vitals" heap "$quiet"
echo "# quiet target: $killed of $QUIET_KILLS killed mid-way; target alive"
check "the quiet target is not left traced" test "$(tracer_of "$quiet")" = 0
echo m >&7
sleep 0.3
check "the quiet target still answers on its stdin" grep -Eq '^mallinfo2 [0-9]+' "$WORK/quiet.out"
echo q >&7
exec 7>&-
wait "$quiet" 2>/dev/null
check "the quiet target exits normally" test $? -eq 0

#!/usr/bin/env bash
# go tool pprof (Debian's golang-go) reads vitals profile --pprof as Go's
# world does.  A --wall profile of one sleeping thread for 4 s was "Duration:
# 4s, Total samples = 19.9 s (498%)": each wall look counts hz / wall_hz
# samples of 1/hz s, and they were weighed 1/wall_hz each.  And the file
# opened as "File: kallsyms": pprof takes the first mapping for the program.
# Prerequisite: perf events (root, or perf_event_paranoid <= 1), go.
. "$(dirname "$0")/lib.sh"

paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)
[ "$(id -u)" = 0 ] || [ "$paranoid" -le 1 ] || skip "perf events need root or kernel.perf_event_paranoid <= 1"
command -v go >/dev/null || skip "no go tool pprof (scripts/deps.sh --test installs golang-go)"
export HOME=$WORK GOCACHE=$WORK/gocache   # go wants a cache of its own

sleep 60 &
P=$!
PIDS+=("$P")
vitals profile --wall --for 4s --pprof "$WORK/wall.pb.gz" "$P" >"$WORK/wall.txt" 2>&1 || fail "profile --wall: $(cat "$WORK/wall.txt")"
go tool pprof -top "$WORK/wall.pb.gz" >"$WORK/top.txt" 2>&1 || fail "go tool pprof: $(cat "$WORK/top.txt")"
head -n 12 "$WORK/top.txt"
python3 - "$WORK/top.txt" <<'PY' || fail "go tool pprof's total is not the profile's length"
import re, sys
t = open(sys.argv[1]).read()
d = float(re.search(r"Duration: ([0-9.]+)s", t).group(1))
m = re.search(r"Total samples = ([0-9.]+)(m?s)", t)
total = float(m.group(1)) / (1000 if m.group(2) == "ms" else 1)
print(f"# duration {d} s, total samples {total} s")
# one thread, asleep all along: its wall time is the profile's length
sys.exit(not (0.85 * d <= total <= 1.1 * d))
PY
echo "ok - the wall total is one thread's 4 s"
check "the first mapping is the program, not kallsyms" grep -q "^File: sleep" "$WORK/top.txt"
echo "ok - t0565"

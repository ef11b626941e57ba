#!/usr/bin/env bash
# go tool pprof (Debian's golang-go) reads vitals profile --pprof as Go's
# world does.  A --wall profile of one sleeping thread for 4 s was "Duration:
# 4s, Total samples = 19.9 s (498%)": each wall look counts hz / wall_hz
# samples of 1/hz s, and they were weighed 1/wall_hz each.  And the file
# opened as "File: kallsyms": pprof takes the first mapping for the program,
# which now is the process's executable with the address range of its code
# (every location of it inside), as go tool pprof -raw lists it.
# Prerequisite: perf events (root, or perf_event_paranoid <= 1), go.
. "$(dirname "$0")/lib.sh"
SRC=$(cd "$(dirname "$0")/../.." && pwd)

paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)
[ "$(id -u)" = 0 ] || [ "$paranoid" -le 1 ] || skip "perf events need root or kernel.perf_event_paranoid <= 1"
command -v go >/dev/null || skip "no go tool pprof (scripts/deps.sh --test installs golang-go)"
export HOME=$WORK GOCACHE=$WORK/gocache   # go wants a cache of its own

sleep 60 &
P=$!
PIDS+=("$P")
vitals profile --wall --for 4s --json --pprof "$WORK/wall.pb.gz" "$P" >"$WORK/wall.json" 2>"$WORK/wall.err" ||
	fail "profile --wall: $(cat "$WORK/wall.err")"
EXE=$(readlink /proc/"$P"/exe)   # after the fork's exec: read now, not at the '&'
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
check "the program's mapping has its address range, every location of it inside (pprof_check)" \
	python3 "$SRC/tests/unit/pprof_check.py" "$WORK/wall.pb.gz" \
	"$(jq_py "$WORK/wall.json" 'j["samples"]["kept"]')" wall "$EXE"
go tool pprof -raw "$WORK/wall.pb.gz" >"$WORK/raw.txt" 2>&1 || fail "go tool pprof -raw: $(cat "$WORK/raw.txt")"
sed -n '/^Mappings/,$p' "$WORK/raw.txt"
# "1: 0x55d3a8a00000/0x55d3a8a04000/0x2000 /usr/bin/sleep  [FN]": start/limit/offset
check "go tool pprof lists the program first, with the range of its code in the process" \
	python3 - "$WORK/raw.txt" "$EXE" "$P" <<'PY'
import sys
raw, exe, pid = sys.argv[1], sys.argv[2], sys.argv[3]
lines = open(raw).read().split("Mappings\n", 1)[1].splitlines()
start, limit, off = (int(x, 16) for x in lines[0].split()[1].split("/"))
assert lines[0].split()[2] == exe, lines[0]
# the range is one of the program's executable mappings in /proc/PID/maps
for m in open("/proc/%s/maps" % pid):
    f = m.split()
    lo, hi = (int(x, 16) for x in f[0].split("-"))
    if (lo, hi, int(f[2], 16)) == (start, limit, off) and "x" in f[1] and f[-1] == exe:
        sys.exit(0)
sys.exit("0x%x-0x%x at 0x%x is no executable mapping of %s" % (start, limit, off, exe))
PY
echo "ok - t0565"

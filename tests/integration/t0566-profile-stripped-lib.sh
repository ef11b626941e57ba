#!/usr/bin/env bash
# A stripped library's internal functions have no symbol: a profile of
# nginx gzipping showed 15 rows of libz.so.1.2.13+0x... (one per
# instruction address) for a few functions, and compare of gzip level 1 vs
# 9 read as a list of addresses.  Each address is now named by the function
# that holds it, the start of its unwind-table entry ("libz.so.1.2.13+0x5d80
# (function)"): python3 compressing with zlib for 3 s spends its time in
# libz's deflate functions, which Debian's libz names in no symbol table.
# Prerequisite: perf events (root, or perf_event_paranoid <= 1), python3's zlib.
. "$(dirname "$0")/lib.sh"

paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)
[ "$(id -u)" = 0 ] || [ "$paranoid" -le 1 ] || skip "perf events need root or kernel.perf_event_paranoid <= 1"
python3 -c 'import zlib' 2>/dev/null || skip "python3 has no zlib"
python3 -c '
import os, time, zlib
d = os.urandom(1 << 16) + b"abc" * 100000
end = time.time() + 60
while time.time() < end:
    zlib.compress(d, 9)
' &
P=$!
PIDS+=("$P")
sleep 0.5
vitals profile --for 3s --json "$P" >"$WORK/p.json" 2>"$WORK/err" || fail "profile: $(cat "$WORK/err")"
python3 - "$WORK/p.json" <<'PY' || fail "libz's code is not named by function"
import json, sys
j = json.load(open(sys.argv[1]))
rows = [f["function"] for f in j["top_self"] if f["function"].startswith("libz")]
print("# libz rows:", rows)
# the samples fall in a handful of functions, each one row named by its start
assert rows, "no libz rows"
assert all(r.endswith(" (function)") for r in rows), rows
assert len(rows) == len(set(rows))
PY
echo "ok - libz's internal functions are one row each, named by their start"
echo "ok - t0566"

#!/usr/bin/env bash
# A lock that is a static variable of a stripped program (redis' bio.c
# condition variables, in Debian's stripped redis-server): it has no symbol,
# and its .bss lies past the file's last page, in an anonymous mapping.
# vitals locks names it by its module and the file's virtual address
# ("busy_poll+0x50c0 (static data, no symbol)", JSON place "file" with
# "module" and "offset"), which nm or gdb on an unstripped copy turn into the
# variable: here idle_cond of targets/busy_poll, whose idle threads wait on
# it.  Before, it read "a heap object (anonymous memory: an arena heap or a
# mapping)" and its chunk was looked for in glibc's arenas.  The unstripped
# program's lock is still named by its symbol (idle_cond).
. "$(dirname "$0")/lib.sh"

command -v strip >/dev/null || skip "no strip (binutils)"
command -v nm >/dev/null || skip "no nm (binutils)"
mkdir -p "$WORK/targets"
cp "$T/targets/busy_poll" "$WORK/targets/busy_poll"
strip --strip-all "$WORK/targets/busy_poll"
check "the copy is stripped: no symbol names idle_cond" test -z "$(nm "$WORK/targets/busy_poll" 2>/dev/null | grep idle_cond)"
# idle_cond's place and size in the file, from the unstripped program
read -r sym_addr sym_size < <(nm -S "$T/targets/busy_poll" | awk '$4 == "idle_cond" { print $1, $2 }')
[ -n "$sym_addr" ] || fail "nm found no idle_cond in targets/busy_poll"
echo "# idle_cond at 0x$sym_addr, 0x$sym_size bytes"

T_SAVED=$T
T=$WORK start_target busy_poll --hz 50 --threads 2 --seconds 60
T=$T_SAVED
sleep 0.5
vitals locks --json --for 1s "$TPID" >"$WORK/stripped.json" || fail "vitals locks on the stripped program"
vitals locks --for 1s "$TPID" >"$WORK/stripped.txt" || fail "vitals locks (text) on the stripped program"
sed -n 3,6p "$WORK/stripped.txt"
check "the condition variable the idle threads wait on: module and file address, inside idle_cond" python3 - "$WORK/stripped.json" "$sym_addr" "$sym_size" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
lo, size = int(sys.argv[2], 16), int(sys.argv[3], 16)
conds = [l for l in j["locks"] if l["kind"] == "condvar"]
assert conds, [l["kind"] for l in j["locks"]]
p = conds[0]["place"]
print("# place:", p, "what:", conds[0]["what"])
assert p["kind"] == "file" and p["module"] == "busy_poll", p
assert lo <= p["offset"] < lo + size, (hex(p["offset"]), hex(lo), size)
assert conds[0]["what"] == "busy_poll+0x%x (static data, no symbol)" % p["offset"], conds[0]["what"]
PY
check "the text names it the same way, not as a heap object" grep -q "busy_poll+0x[0-9a-f]* (static data, no symbol)" "$WORK/stripped.txt"
check "and never as a heap object" test -z "$(grep 'a heap object' "$WORK/stripped.txt")"
kill "$TPID" 2>/dev/null

start_target busy_poll --hz 50 --threads 2 --seconds 60
sleep 0.5
vitals locks --json --for 1s "$TPID" >"$WORK/plain.json" || fail "vitals locks on the program with symbols"
check "with its symbols, the same lock is idle_cond" python3 - "$WORK/plain.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
p = [l for l in j["locks"] if l["kind"] == "condvar"][0]["place"]
assert p["kind"] == "symbol" and p["symbol"] == "idle_cond", p
PY
echo "ok - t0344"

#!/usr/bin/env bash
# A Python service's memory named: targets/py_objects.py holds 300,000 small
# objects (in CPython's own arenas, which are not malloc's) and a 128 MiB
# bytearray (a malloc'd block).  For each interpreter on the machine (the
# 1 MiB arenas / 16 KiB pools of 3.10+, the 256 KiB / 4 KiB of 3.8 and 3.9,
# a libpython build and Debian's static one), snap names the bytearray as a
# malloc'd block of its exact size, and counts the arenas as the
# interpreter's own sys._debugmallocstats() does, with the bytes its objects
# use.  Without memory reads, the arenas are named as not counted, with why.
. "$(dirname "$0")/lib.sh"

SCRIPT=$(cd "$(dirname "$0")/../../targets" && pwd)/py_objects.py
pythons=()
for py in /usr/bin/python3 /root/.pyenv/versions/3.11.7/bin/python3.11 /root/.pyenv/versions/3.9.18/bin/python3.9; do
	[ -x "$py" ] && pythons+=("$py")
done
[ ${#pythons[@]} -gt 0 ] || skip "no python3 interpreter"

for py in "${pythons[@]}"; do
	TRUTH=$WORK/py.$RANDOM.truth
	"$py" "$SCRIPT" --seconds 60 --truth "$TRUTH" >"$WORK/py.out" 2>&1 &
	TPID=$!
	PIDS+=("$TPID")
	for i in $(seq 100); do
		grep -q '"arenas"' "$TRUTH" 2>/dev/null && break
		sleep 0.1
	done
	grep -q '"arenas"' "$TRUTH" || fail "$py wrote no truth: $(cat "$WORK/py.out")"

	vitals snap --json "$TPID" >"$WORK/snap.json"
	check "$py: snap --json exits 0" test $? -eq 0
	python3 - "$WORK/snap.json" "$TRUTH" <<'PY' || fail "$py: arenas or bytearray"
import json, sys
p = json.load(open(sys.argv[1]))["processes"][0]
t = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{")][-1]
py = p["cpython"]
print("truth (sys._debugmallocstats):", t["python"], t["arenas"], "arenas of", t["arena_size"],
      "bytes,", t["allocated_blocks_bytes"], "bytes in allocated blocks")
print("vitals:", py["version"], py["arenas"], "arenas of", py["arena_size_bytes"], "bytes,", py["used_bytes"],
      "bytes in use,", py["pools"], "pools of", py["pool_size_bytes"], "in", py["mappings"], "mappings;", py["evidence"])
assert py["version"] == t["python"], py
assert py["not_counted"] is None, py
assert t["arenas"] - 1 <= py["arenas"] <= t["arenas"], (py["arenas"], t["arenas"])
assert py["arena_size_bytes"] == t["arena_size"], py
assert py["arena_bytes"] == py["arenas"] * t["arena_size"], py
assert py["pool_size_bytes"] == (16384 if t["arena_size"] == 1 << 20 else 4096), py
assert abs(py["used_bytes"] - t["allocated_blocks_bytes"]) <= 0.02 * t["allocated_blocks_bytes"], py
assert py["refused_pools"] == 0, py
kinds = {r["kind"] for r in p["regions"]}
# the bytearray: a malloc'd block of its exact size (malloc(n + 1), page-rounded with its header)
n = t["bytearray_bytes"]
size = (n + 1 + 8 + 4095) // 4096 * 4096
blocks = {int(b["addr"], 16): b for m in p["malloc_blocks"]["mappings"] for b in m["blocks"]}
b = blocks.get(int(t["bytearray_chunk"], 16))
assert b is not None, ("the bytearray is not named", t["bytearray_chunk"], [hex(a) for a in blocks])
assert b["size_bytes"] == size, (b, size)
assert b["shape"]["kind"] == "text" and b["shape"]["json"] is True, b
assert "alice" not in json.dumps(p["malloc_blocks"]), "a block's content shown unredacted"
# no arena taken for a block: blocks are malloc'd chunks, none at or under an arena's size here but the runtime's own
print("bytearray: malloc'd block at", t["bytearray_chunk"], "of", b["size_bytes"], "bytes; region kinds:", sorted(kinds))
PY
	echo "ok - $py: bytearray named as a malloc'd block, arenas counted as the interpreter counts them"

	vitals snap "$TPID" >"$WORK/snap.txt"
	check "$py: snap text exits 0" test $? -eq 0
	grep -A1 '^CPYTHON' "$WORK/snap.txt"
	check "$py: snap text names the arenas" grep -q "CPython object arenas: [0-9]* arenas" "$WORK/snap.txt"
	check "$py: snap text says they are not malloc's" grep -q "not malloc's: CPython's allocator" "$WORK/snap.txt"
	check "$py: snap's reading names the arenas beside RssAnon" \
		grep -q "CPython's [0-9]* object arenas hold .* in use by objects: not malloc's" "$WORK/snap.txt"

	# heap: the same arenas beside malloc's figures, and left out of what a trim could reach
	vitals heap --json "$TPID" >"$WORK/heap.json"
	check "$py: heap --json exits 0" test $? -eq 0
	python3 - "$WORK/heap.json" "$TRUTH" <<'PY' || fail "$py: heap's arenas"
import json, sys
h = json.load(open(sys.argv[1]))
t = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{")][-1]
py = h["cpython"]
print("heap: cpython", py["arenas"], "arenas,", py["used_bytes"], "bytes in use; truth", t["arenas"])
assert py["not_counted"] is None, py
assert t["arenas"] - 1 <= py["arenas"] <= t["arenas"], (py["arenas"], t["arenas"])
assert abs(py["used_bytes"] - t["allocated_blocks_bytes"]) <= 0.02 * t["allocated_blocks_bytes"], py
ev = " ".join(h["verdict"]["evidence"])
assert "object arenas hold" in ev and "not malloc's" in ev, ev
assert "RssAnon - live - CPython's pools" in ev, ev
PY
	echo "ok - $py: heap counts the arenas as the interpreter does and leaves them out of a trim's reach"
	vitals heap "$TPID" >"$WORK/heap.txt"
	check "$py: heap text has the CPYTHON section" grep -q "^CPYTHON" "$WORK/heap.txt"

	vitals snap --no-memory --json "$TPID" >"$WORK/nomem.json"
	check "$py: snap --no-memory exits 0" test $? -eq 0
	check "$py: without memory the arenas are named as not counted, with why" \
		test "$(jq_py "$WORK/nomem.json" 'j["processes"][0]["cpython"]["not_counted"]')" = \
		"its memory was not read (not read (--no-memory))"

	check "$py: target still running after the probes" kill -0 "$TPID"
	kill -TERM "$TPID"
	wait "$TPID"
	check "$py: target exits cleanly after being probed" test $? -eq 0
done

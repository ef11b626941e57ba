#!/usr/bin/env bash
# Every large malloc'd block named, in snap and in heap: big_blocks mallocs
# one 128 MiB block against a small mapping of its own (the kernel merges
# them), field report 000's two 128 MiB + three 93 MiB blocks one after the
# other (one mapping of about 535 MiB), and one 128 MiB block with a 256 KiB
# mapping of its own below it whose pages start with near-headers.  Every
# block is found at its address with its exact size, none is invented, the
# program's own mappings are never called a block, and the shape of each
# block's first bytes is the one the target wrote.
# sanitizer: the page-by-page walk of merged mappings, its batched reads and its block lists
. "$(dirname "$0")/lib.sh"

start_target big_blocks --seconds 60
for i in $(seq 50); do
	grep -q '"blocks"' "$TRUTH" 2>/dev/null && break
	sleep 0.1
done
grep -q '"blocks"' "$TRUTH" || fail "the target wrote no truth"

vitals snap --json "$TPID" >"$WORK/snap.json"
check "snap --json exits 0" test $? -eq 0
vitals heap --json "$TPID" >"$WORK/heap.json"
check "heap --json exits 0" test $? -eq 0

python3 - "$WORK/snap.json" "$WORK/heap.json" "$TRUTH" <<'PY' || fail "blocks in snap or heap"
import json, sys
snap = json.load(open(sys.argv[1]))["processes"][0]
heap = json.load(open(sys.argv[2]))
t = [json.loads(l) for l in open(sys.argv[3]) if l.startswith("{")][-1]
truth = {int(b["chunk"], 16): b for b in t["blocks"]}
own = [(int(o["start"], 16), int(o["end"], 16)) for o in t["own"]]

# the layouts the test is about: the kernel merged the blocks with their neighbours
for m in t["mappings"]:
    lo, hi = int(m["start"], 16), int(m["end"], 16)
    inside = [a for a in truth if lo <= a < hi]
    print("mapping %s %x-%x (%.1f MiB): %d blocks" % (m["group"], lo, hi, (hi - lo) / 2**20, len(inside)))
    assert any(lo <= s < hi for s, e in own) or len(inside) > 1, ("not merged", m)
    if m["group"] == "report":
        assert len(inside) == 5, m

for name, mb in (("snap", snap["malloc_blocks"]), ("heap", heap["malloc_blocks"])):
    found = {}
    for m in mb["mappings"]:
        lo, hi = int(m["start"], 16), int(m["end"], 16)
        for b in m["blocks"]:
            a = int(b["addr"], 16)
            assert lo <= a and a + b["size_bytes"] <= hi, (name, b, m)
            found[a] = b
        in_blocks = sum(b["size_bytes"] for b in m["blocks"])
        assert in_blocks + m["other_bytes"] + m["cpython_arena_bytes"] + m["arena_heap_bytes"] + \
            m["unread_bytes"] + m["skipped_bytes"] == hi - lo, (name, m)
        print("%s: mapping %x (%.1f MiB): %d blocks, rest %d bytes other, %d unread" %
              (name, lo, (hi - lo) / 2**20, len(m["blocks"]), m["other_bytes"], m["unread_bytes"]))
    # every block of the truth, at its address, with its exact size
    for a, b in truth.items():
        assert a in found, (name, "missing", b)
        assert found[a]["size_bytes"] == b["size"], (name, found[a], b)
        shape = found[a]["shape"]
        assert shape["kind"] == b["head"], (name, shape, b)
        assert shape["json"] == b["json"], (name, shape, b)
        assert found[a]["rss_bytes"] >= t["touched_bytes"], (name, found[a])
        assert found[a]["rss_bytes"] <= t["touched_bytes"] + (4 << 20), (name, found[a])
        if b["head"] in ("text", "binary"):
            # redacted: length, hash and at most 4 bytes, never the content
            assert shape["head"].startswith("len=") and "alice" not in shape["head"], shape
    # none invented, and the program's own mappings are no block
    extra = set(found) - set(truth)
    assert not extra, (name, "invented", [hex(a) for a in extra])
    for a, b in found.items():
        for s, e in own:
            assert a + b["size_bytes"] <= s or a >= e, (name, "own mapping taken for a block", hex(a))
    assert mb["count"] == len(truth) and mb["bytes"] == sum(b["size"] for b in truth.values()), mb
    print("%s: all %d blocks found, sizes exact, none invented" % (name, len(truth)))

# not a Python process: no CPython section
assert snap["cpython"] is None, snap["cpython"]

# heap holds them against mallinfo2
mi = heap["mallinfo2"]
print("heap:", heap["malloc_blocks"]["match"])
assert heap["malloc_blocks"]["all_found"] is True, heap["malloc_blocks"]["match"]
assert mi["hblks"] == len(truth) and mi["hblkhd"] == sum(b["size"] for b in truth.values()), mi
PY
echo "ok - every block found at its address with its exact size and shape, in snap and heap; none invented"

vitals snap "$TPID" >"$WORK/snap.txt"
check "snap text exits 0" test $? -eq 0
sed -n "/^MALLOC'D BLOCKS/,/^\$/p" "$WORK/snap.txt"
check "snap text names the blocks" grep -q "malloc'd block, 128 MiB" "$WORK/snap.txt"
check "snap text names the 93 MiB blocks" test "$(grep -c "malloc'd block, 93.0 MiB" "$WORK/snap.txt")" -eq 3
check "snap text says what the rest of the 535 MiB mapping is" \
	grep -q "(535 MiB): 5 blocks, 535 MiB; rest of the mapping: 8.0 KiB other anonymous memory" "$WORK/snap.txt"
check "snap's reading counts the blocks as single allocations" \
	grep -q "7 malloc'd blocks hold 791 MiB, .* resident (.*% of RssAnon): single allocations, not arenas" "$WORK/snap.txt"
check "snap text never shows a block's content" test -z "$(grep -e alice -e orders "$WORK/snap.txt")"
vitals heap "$TPID" >"$WORK/heap.txt"
check "heap text exits 0" test $? -eq 0
check "heap text says all blocks were found" grep -q "all 7 blocks found: 791 MiB" "$WORK/heap.txt"

check "target still running after the probes" kill -0 "$TPID"
kill -TERM "$TPID"
wait "$TPID"
check "target exits cleanly after being probed" test $? -eq 0

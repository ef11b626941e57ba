#!/usr/bin/env bash
# vitals heap on a process whose live data is in mmapped chunks: 50 live
# 1 MiB blocks, each above the mmap threshold, so glibc mmaps each alone and
# mallinfo2 counts it in hblks/hblkhd (in use; uordblks is the arenas only).
# That memory is live data: it is not called free, no trim lever is given,
# and a --trim (which returns nothing of it) leaves the verdict unchanged.
. "$(dirname "$0")/lib.sh"

# A fixed mmap threshold (setting it turns glibc's dynamic threshold off):
# every 1 MiB block is an mmapped chunk, whatever was freed before.
GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072 start_target step_growth --seconds 60 \
	--step-at 0 --step-mb 50 --step-chunk-kb 1024 --churn-mb 0 --churn-per-s 0
for i in $(seq 50); do
	[ "$(truth_py "$TRUTH" 't["step_done"]')" = true ] && break
	sleep 0.1
done
[ "$(truth_py "$TRUTH" 't["step_done"]')" = true ] || fail "the target did not take its step"

vitals heap --json "$TPID" >"$WORK/heap.json"
check "vitals heap exits 0" test $? -eq 0
python3 - "$WORK/heap.json" "$TRUTH" <<'PY' || fail "mmapped chunks judged as free memory"
import json, sys
h = json.load(open(sys.argv[1]))
t = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{")][-1]
mi, v = h["mallinfo2"], h["verdict"]
print("mallinfo2:", {k: mi[k] for k in ("arena", "uordblks", "fordblks", "hblks", "hblkhd", "keepcost")})
print("target holds", t["step_held_bytes"], "in", t["step_bytes"] // t["step_chunk_bytes"], "blocks")
print("live_fraction", h["live_fraction"], "verdict", v["lever"], "--", v["headline"])
# the witness: the blocks are mmapped chunks, and uordblks does not hold them
assert mi["hblks"] >= 50 and mi["hblkhd"] >= t["step_held_bytes"], mi
assert mi["uordblks"] < t["step_held_bytes"] // 10, mi
# live = uordblks + hblkhd covers what the target holds
assert mi["uordblks"] + mi["hblkhd"] >= t["live_bytes"]
assert h["live_fraction"] > 0.9, h["live_fraction"]
assert v["lever"] in ("retention", "none"), v["lever"]
for words in ("is free", "--trim", "would return at least", "fewer arenas (", "another allocator"):
    assert words not in v["headline"], (words, v["headline"])
assert v["evidence"][0].startswith("live (uordblks + hblkhd) 50."), v["evidence"][0]
PY
echo "ok - the mmapped chunks are live: no free memory, no trim lever"

vitals heap "$TPID" >"$WORK/heap.txt"
check "text view exits 0" test $? -eq 0
grep '^VERDICT' "$WORK/heap.txt"
check "text verdict does not call it free" test -z "$(grep '^VERDICT' "$WORK/heap.txt" | grep -e 'is free' -e '--trim')"

# --trim returns nothing of it (the chunks are live), and the verdict holds
vitals heap --trim --json "$TPID" >"$WORK/trim.json"
check "--trim exits 0" test $? -eq 0
python3 - "$WORK/trim.json" <<'PY' || fail "verdict after --trim"
import json, sys
h = json.load(open(sys.argv[1]))
t, v = h["trim"], h["verdict"]
print("trim: RssAnon", t["rss_anon_before"], "->", t["rss_anon_after"], "; verdict", v["lever"], "--", v["headline"])
assert t["rss_anon_after"] > 0.9 * t["rss_anon_before"]
assert t["after"]["hblkhd"] == t["before"]["hblkhd"]
assert v["lever"] in ("retention", "none"), v["lever"]
assert "is free" not in v["headline"] and "--trim" not in v["headline"], v["headline"]
PY
echo "ok - after --trim the verdict is unchanged"

check "target still running after the probes" kill -0 "$TPID"
kill -TERM "$TPID"
wait "$TPID"
check "target exits cleanly after being probed" test $? -eq 0

#!/usr/bin/env bash
# vitals heap on a glibc process, by ptrace: mallinfo2 agrees with gdb's
# `p mallinfo2()` at a quiescent moment and with the target's own count of
# live bytes; per-arena figures add up; --trim is measured; the target keeps
# running, consistent, afterwards.  gdb is only the witness.
# sanitizer: the inject session end to end: remote calls and reading their results
. "$(dirname "$0")/lib.sh"

# tcache off, so that every freed chunk is free in malloc's books and the
# live count can be compared to the byte (tcache holds ~1 MiB otherwise)
GLIBC_TUNABLES=glibc.malloc.tcache_count=0 start_target arena_churn --seconds 90 --threads 8 --pause-signal
sleep 6
pause_target

vitals heap --json "$TPID" >"$WORK/heap.json"
rc=$?
check "vitals heap exits 0" test $rc -eq 0
check "read by ptrace, glibc" test "$(jq_py "$WORK/heap.json" '(j["method"], j["allocator"])')" = '["ptrace", "glibc"]'

if command -v gdb >/dev/null; then
	gdb -batch -p "$TPID" -ex 'p mallinfo2()' >"$WORK/gdb.txt" 2>&1
fi
if ! grep -q '^\$1 = ' "$WORK/gdb.txt" 2>/dev/null; then
	# gdb is only the witness: when it cannot call into the process on this
	# kernel (seen: "Couldn't write extended state status"), say so and go on
	echo "# gdb could not call mallinfo2() here: $(grep -E -m1 "Couldn't|[Ee]rror|Cannot" "$WORK/gdb.txt" 2>/dev/null)"
else
	python3 - "$WORK/heap.json" "$WORK/gdb.txt" <<'PY' || fail "mallinfo2 differs from gdb's"
import json, re, sys
v = json.load(open(sys.argv[1]))["mallinfo2"]
text = open(sys.argv[2]).read()
g = {k: int(x) for k, x in re.findall(r"(\w+) = (\d+)", text.split("$1 =", 1)[1])}
print("vitals:", {k: v[k] for k in ("arena", "uordblks", "fordblks", "ordblks", "hblkhd", "keepcost")})
print("gdb:   ", {k: g[k] for k in ("arena", "uordblks", "fordblks", "ordblks", "hblkhd", "keepcost")})
# the same quiescent heap; gdb's own call adds nothing that stays allocated
for k in ("arena", "hblkhd", "uordblks", "fordblks"):
    assert abs(v[k] - g[k]) <= 64 * 1024, (k, v[k], g[k])
PY
	echo "ok - mallinfo2 agrees with gdb's (within 64 KiB)"
fi

python3 - "$WORK/heap.json" "$TRUTH" <<'PY' || fail "live bytes disagree with the target's own count"
import json, sys
h = json.load(open(sys.argv[1]))
t = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{")][-1]
live, blocks = t["live_bytes"], t["live_blocks"]
u = h["mallinfo2"]["uordblks"]
# each live block costs its bytes plus a 16-byte chunk header, rounded up to 16
lo, hi = live, live + blocks * 32 + 256 * 1024
print(f"uordblks {u}, target's live bytes {live} in {blocks} blocks, window [{lo}, {hi}]")
assert lo <= u <= hi, (lo, u, hi)
arenas = h["arenas"]
assert len(arenas) >= 4, len(arenas)                 # main + workers
assert sum(a["system_bytes"] for a in arenas) == h["mallinfo2"]["arena"]
assert 0 < h["live_fraction"] < 1
PY
echo "ok - uordblks within the chunk overhead of the target's live bytes; arenas add up"

# --trim: measured before and after
vitals heap --trim --json "$TPID" >"$WORK/trim.json"
check "--trim exits 0" test $? -eq 0
python3 - "$WORK/trim.json" <<'PY' || fail "trim figures"
import json, sys
t = json.load(open(sys.argv[1]))["trim"]
print("trim: returned", t["returned"], "RssAnon", t["rss_anon_before"], "->", t["rss_anon_after"], "in", t["took_ms"], "ms")
assert t["returned"] == 1
assert t["rss_anon_after"] < t["rss_anon_before"] * 0.8
assert t["after"]["uordblks"] == t["before"]["uordblks"]   # nothing live was touched
PY
echo "ok - --trim returned memory, measured; live bytes untouched"

# the target is intact: resume it, let it churn, check its own books
kill -USR2 "$TPID"
sleep 2
check "target still running after the probes" kill -0 "$TPID"
check "target resumed churning" test "$(truth_py "$TRUTH" 't["phase"]')" = '"steady"'
vitals heap "$TPID" >"$WORK/heap.txt"
check "text view while churning" grep -q "VERDICT" "$WORK/heap.txt"
kill -TERM "$TPID"
wait "$TPID"
check "target exits cleanly after being probed" test $? -eq 0

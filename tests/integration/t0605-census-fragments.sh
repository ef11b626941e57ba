#!/usr/bin/env bash
# vitals census: the most repeated fragments without a needle (issue 28).
# census_records builds records that are each unique text but all hold one
# fragment at a random offset, some live, some freed into the tcache and fast
# bins (a free chunk each), and reports how many of each:
#   - without --needle, the fragment is the top line of the live fragments and
#     of the free ones, shown whole (grown to exactly its bytes), its count
#     within 5% of the truth (both bounds);
#   - redacted by default (text and JSON), shown with --reveal;
#   - a longer fragment and fewer, longer records: the same;
#   - 1 record in 200 holding it, among 66,000 records of unique text: the same;
#   - a fragment that is a whole string (census_work's marker) is marked as the
#     string shown above, not shown twice (in free chunks too, where coalesced
#     chunks hold several copies: fewer chunks than strings);
#   - --no-fragments: none looked for.
. "$(dirname "$0")/lib.sh"

wait_ready() {
	local name=$1 i
	for i in $(seq 100); do
		grep -q '^ready' "$WORK/$name.out" && return 0
		sleep 0.1
	done
	fail "$name did not get ready: $(tail -3 "$WORK/$name.out")"
}

# judge JSON TRUTH: the top fragment of each side is the target's, counted within 5%
judge() {
	python3 - "$1" "$2" <<'PY' || fail "fragments vs truth in $(basename "$1"): see above"
import json, sys
c = json.load(open(sys.argv[1]))
t = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{")]
t = [x for x in t if x["phase"] == "ready"][-1]
want = '"' + t["fragment"] + '"'
bad = []
assert c["fragments"]["unit"] == "chunks", c["fragments"]
for side, truth in (("live", t["live_with_fragment"]), ("free", t["freed_with_fragment"])):
    frags = [f for f in c["content"][side]["top_fragments"] if f["inside_string"] is None]
    if not frags:
        bad.append(f"{side}: no fragment")
        continue
    f = frags[0]
    lo, hi = f["count"] - f["count_err"], f["count"]
    print(f"# {side}: top fragment {f['shown']} in {lo}..{hi} chunks (truth {truth}); "
          f"next: {[(x['shown'][:30], x['count']) for x in frags[1:3]]}")
    if f["shown"] != want:
        bad.append(f"{side}: top fragment {f['shown']}, want {want}")
    if f["len"] != t["fragment_len"]:
        bad.append(f"{side}: length {f['len']}, want {t['fragment_len']}")
    if not (abs(hi - truth) <= 0.05 * truth and abs(lo - truth) <= 0.05 * truth):
        bad.append(f"{side}: count {lo}..{hi} not within 5% of {truth}")
    if len(frags) > 1 and frags[1]["count"] >= 0.5 * truth:
        bad.append(f"{side}: a second fragment about as repeated: {frags[1]}")
if bad:
    print("FAIL:", bad)
    sys.exit(1)
PY
}

# --- 20,000 live records and 10,000 freed, a 20-byte fragment -------------------------
FRAG=user=atus-1-dfql6hsq
start_target census_records --live 20000 --freed 10000 --seconds 120
wait_ready census_records
vitals census --json --reveal --top 20 "$TPID" >"$WORK/r.json" || fail "vitals census --json --reveal"
judge "$WORK/r.json" "$TRUTH"
echo "ok - the 20-byte fragment is the top line, live and free, within 5% of the truth"
vitals census --top 20 "$TPID" >"$WORK/q.txt" || fail "vitals census (text)"
vitals census --json --top 20 "$TPID" >"$WORK/q.json" || fail "vitals census --json"
sed -n '/most repeated fragments/,/^$/p' "$WORK/q.txt"
for f in q.txt q.json; do
	check "$f: the fragment is not shown without --reveal" bash -c "! grep -q '$FRAG' '$WORK/$f'"
	check "$f: not even its first 12 bytes" bash -c "! grep -q '${FRAG:0:12}' '$WORK/$f'"
done
check "text: the top live fragment, redacted (length, hash, user…)" \
	bash -c "grep -A3 '^most repeated fragments in live' '$WORK/q.txt' | grep -Eq '^ +[0-9-]+ +[0-9]+% +len=20 #[0-9a-f]{8} \"user'"
check "text: the top free fragment, redacted" \
	bash -c "grep -A3 '^most repeated fragments in free' '$WORK/q.txt' | grep -Eq '^ +[0-9-]+ +[0-9]+% +len=20 #[0-9a-f]{8} \"user'"
vitals census --reveal "$TPID" >"$WORK/r.txt" || fail "vitals census --reveal (text)"
check "--reveal: the fragment in the text table" \
	bash -c "grep -A3 '^most repeated fragments in live' '$WORK/r.txt' | grep -q '\"$FRAG\"'"
vitals census --json --no-fragments "$TPID" >"$WORK/n.json" || fail "vitals census --no-fragments"
check "--no-fragments: none looked for" python3 -c "
import json; c = json.load(open('$WORK/n.json'))
assert c['fragments'] is None and 'top_fragments' not in c['content']['live'], c['fragments']"
kill -0 "$TPID" || fail "census_records died"
kill "$TPID"
wait "$TPID" 2>/dev/null

# --- a 32-byte fragment, fewer and longer records ----------------------------------------
start_target census_records --live 3000 --freed 1500 --max-len 4000 --seed 7 \
	--fragment "tenant=eu-west;user=atus-1-dfql6"
wait_ready census_records
vitals census --json --reveal "$TPID" >"$WORK/r2.json" || fail "vitals census --json --reveal (32 bytes)"
judge "$WORK/r2.json" "$TRUTH"
echo "ok - the 32-byte fragment grown whole from its pieces, within 5% of the truth"
kill "$TPID"
wait "$TPID" 2>/dev/null

# --- a needle in a haystack: 1 record in 200 holds it, 66,000 records of unique text ----------
start_target census_records --live 60000 --freed 6000 --max-len 1200 --every 200 --seed 3
wait_ready census_records
vitals census --json --reveal "$TPID" >"$WORK/r3.json" || fail "vitals census --json --reveal (1 in 200)"
judge "$WORK/r3.json" "$TRUTH"
echo "ok - 1 record in 200: the fragment is still the top line, within 5% of the truth"
kill "$TPID"
wait "$TPID" 2>/dev/null

# --- census_work: the marker is a whole string, not shown twice ----------------------
start_target census_work --threads 1 --live 2000 --freed 2000 --big 0 --seconds 120
wait_ready census_work
vitals census --json --reveal "$TPID" >"$WORK/w.json" || fail "vitals census --json (census_work)"
python3 - "$WORK/w.json" <<'PY' || fail "the marker as a string and as a fragment"
import json, sys
c = json.load(open(sys.argv[1]))
marker = '"VITALS-CENSUS-MARKER-LIVE"'
# free chunks that coalesced hold several copies: fewer chunks than strings, the same text
for side in ("live", "free"):
    s = c["content"][side]
    frags = [f for f in s["top_fragments"] if f["shown"] == marker]
    print(f"# {side}: marker as fragments: {frags}")
    assert frags, f"{side}: the marker is not among the fragments"
    i = frags[0]["inside_string"]
    assert i is not None and s["top_strings"][i]["shown"] == marker, (i, s["top_strings"][:3])
PY
vitals census --reveal "$TPID" >"$WORK/w.txt" || fail "vitals census (census_work text)"
check "text: the marker is not in the fragments tables" \
	bash -c "! sed -n '/^most repeated fragments in/,/^\$/p' '$WORK/w.txt' | grep -q VITALS-CENSUS"
check "text: said to be inside the strings shown" grep -q '^most repeated fragments in live chunks: none but inside the whole strings' "$WORK/w.txt"
kill "$TPID"
wait "$TPID" 2>/dev/null
echo "# done in ${SECONDS}s"

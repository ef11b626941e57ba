#!/usr/bin/env bash
# Profiles inside a soak (issue 13): `vitals soak --profile-every 6s
# --profile-for 2s --profile-hz 199` for 24 s of profile_work stores one profile every 6 s
# (at 0, 6, 12 and 18 s) in the recording while its samples keep their
# cadence; `vitals analyze` shows the CPU by bucket over time, in text and
# JSON, with the work's buckets in it, and charts it in HTML; `vitals
# compare` sets two recordings' profiles against each other, and --html
# links the differential flame graph of all of each side's profiles.  A
# soak killed with SIGKILL in the middle of a profile leaves a recording
# that reads, holding the profiles finished before, and the target unharmed.
# Prerequisite: perf events (root, or perf_event_paranoid <= 1).
# lane: solo — profiles are timed inside a soak
. "$(dirname "$0")/lib.sh"

paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)
[ "$(id -u)" = 0 ] || [ "$paranoid" -le 1 ] || skip "perf events need root or kernel.perf_event_paranoid <= 1"
# the sanitizer build reads and writes stored profiles in the unit tests and fuzz replays
case "$B" in *-san*) skip "the soak's profiles are tested end to end on the plain build";; esac
target=profile_work
[ -x "$T/targets/$target" ] || target=core_contention
alive() { [[ -d /proc/$1 ]] && [[ $(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) != Z ]]; }

if [ "$target" = profile_work ]; then
	start_target profile_work --seconds 120 --dir "$WORK"
else
	start_target core_contention --seconds 120 --threads 2
fi
P=$TPID

# ---- a 24 s soak with a 2 s profile every 6 s ----
vitals soak "$P" -o "$WORK/run.db" --every 1s --for 24s --profile-every 6s --profile-for 2s --profile-hz 199 -q \
	>"$WORK/soak.out" 2>"$WORK/soak.err"
rc=$?
cat "$WORK/soak.err"
check "soak with profiles exits 0" test "$rc" = 0
check "the summary counts the profiles" grep -qE '^[0-9]+ profiles stored' "$WORK/soak.out"
python3 - "$WORK/run.db" >"$WORK/rows" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
profiles = c.execute("select t, duration_s, samples, partial, pid, hz from profiles order by id").fetchall()
samples = [r[0] for r in c.execute("select t from samples order by id")]
gaps = [b - a for a, b in zip(samples, samples[1:])]
print(len(profiles), min(p[2] for p in profiles) if profiles else 0, max(gaps) if gaps else 99,
      ",".join(sorted({f"{p[5]:g}" for p in profiles})),
      sum(p[3] for p in profiles), " ".join(f"{p[0]:.1f}" for p in profiles))
PY
read -r nprof minsamples maxgap hzs partials starts <<<"$(head -1 "$WORK/rows")"
echo "profiles: $(cat "$WORK/rows")"
check "at least 3 profiles stored (got $nprof)" test "$nprof" -ge 3
check "each profile has samples (fewest: $minsamples)" test "$minsamples" -gt 0
check "each profile ran at --profile-hz 199 (got $hzs)" test "$hzs" = 199
check "no profile is partial in a soak that ran its time" test "$partials" = 0
check "sampling kept its 1 s cadence while profiling (longest step $maxgap s)" \
	python3 -c "import sys; sys.exit(0 if float('$maxgap') < 1.6 else 1)"

vitals analyze "$WORK/run.db" >"$WORK/analyze.txt" 2>"$WORK/analyze.err"
check "analyze exits 0" test $? = 0
sed -n '/^CPU by bucket over time/,/^$/p' "$WORK/analyze.txt"
check "analyze shows the bucket table over time" grep -q '^CPU by bucket over time' "$WORK/analyze.txt"
check "one row per profile" test "$(sed -n '/^CPU by bucket over time/,/^which bucket/p' "$WORK/analyze.txt" |
	grep -cE "^ +[0-9.]+ (s|min) +$P ")" -ge 3
check "and the finding on which bucket grew" grep -q '^which bucket grew when CPU rose: ' "$WORK/analyze.txt"
vitals analyze --json "$WORK/run.db" >"$WORK/analyze.json"
check "JSON: profiles.count matches the recording" test "$(jq_py "$WORK/analyze.json" 'j["profiles"]["count"]')" = "$nprof"
check "JSON: each row has cores and bucket shares adding up to 1" python3 - "$WORK/analyze.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))["profiles"]
for r in j["rows"]:
    assert "error" not in r, r
    assert r["cores"] is None or r["cores"] >= 0, r
    total = sum(b["share"] for b in r["buckets"].values())
    assert r["cpu_samples"] == 0 or abs(total - 1) < 1e-6, (total, r)
assert j["grew_when_cpu_rose"]["verdict"] in ("grew", "cannot tell yet"), j["grew_when_cpu_rose"]
PY
if [ "$target" = profile_work ]; then
	check "profile_work's buckets are seen (network, filesystem, JSON, hashing, memory)" python3 - "$WORK/analyze.json" <<'PY'
import json, sys
names = set(json.load(open(sys.argv[1]))["profiles"]["buckets"])
want = {"network send/recv", "filesystem syscalls", "JSON/serialization", "hashing", "memory allocation"}
missing = want - names
assert len(missing) <= 1, ("missing", missing, "seen", names)
PY
fi

# ---- SIGKILL in the middle of a profile ----
vitals soak "$P" -o "$WORK/killed.db" --every 1s --for 60s --profile-every 4s --profile-for 3s -q \
	>/dev/null 2>&1 &
V=$!
sleep 5.5            # the second profile began at 4 s and runs until 7 s
kill -KILL "$V"
wait "$V" 2>/dev/null
check "the target survives the soak's SIGKILL" alive "$P"
vitals analyze "$WORK/killed.db" >"$WORK/killed.txt" 2>"$WORK/killed.err"
check "the killed recording reads" test $? = 0
check "holding the profile finished before the kill" \
	test "$(vitals analyze --json "$WORK/killed.db" | python3 -c 'import json,sys; print(json.load(sys.stdin)["profiles"]["count"])')" -ge 1
check "the target's own checks still hold (it answers and runs)" kill -0 "$P"

# ---- compare: the two recordings' profiles ----
vitals compare "$WORK/run.db" "$WORK/killed.db" >"$WORK/compare.txt" 2>"$WORK/compare.err"
check "compare exits 0" test $? = 0
sed -n '/^CPU profiles:/,$p' "$WORK/compare.txt"
check "compare sets the profiles against each other" grep -q '^CPU profiles: killed against run' "$WORK/compare.txt"
vitals compare --html "$WORK/ab.html" "$WORK/run.db" "$WORK/killed.db" >"$WORK/compare-html.txt" ||
	fail "compare --html"
check "compare --html writes the differential flame graph of all the profiles beside it" \
	grep -q "^flame graph (difference of all profiles, linked from the charts): $WORK/ab.flame.html" \
	"$WORK/compare-html.txt"
check "... a whole page" grep -q '</html>' "$WORK/ab.flame.html"
check "... titled with both recordings" grep -q '<title>vitals compare: CPU profiles of killed against run</title>' \
	"$WORK/ab.flame.html"
check "... pooling every profile of each" grep -qE "<span>[0-9]+ profiles? of killed pooled against $nprof profiles of run<" \
	"$WORK/ab.flame.html"
check "the charts page has the bucket table" grep -q '<h2>CPU profiles: killed against run</h2>' "$WORK/ab.html"
check "... and links the flame graph" grep -q '<a href="ab.flame.html">' "$WORK/ab.html"
vitals analyze --html "$WORK/analyze.html" "$WORK/run.db" >/dev/null || fail "analyze --html"
check "analyze --html charts the CPU by bucket over time" grep -q 'clip-path="url(#profiles-plot)"' "$WORK/analyze.html"
vitals compare --json "$WORK/run.db" "$WORK/killed.db" >"$WORK/compare.json"
check "compare JSON holds the bucket deltas" \
	test "$(jq_py "$WORK/compare.json" 'len(j["profiles"][0]["buckets"]) > 0')" = true

# ---- bad options ----
expect_exit 64 'profile-for .* is not shorter than --profile-every' soak "$P" -o "$WORK/x.db" --profile-every 5s --profile-for 5s
expect_exit 64 'profile-for applies only with --profile-every' soak "$P" -o "$WORK/x.db" --profile-for 5s
expect_exit 64 'profile-hz applies only with --profile-every' soak "$P" -o "$WORK/x.db" --profile-hz 199
expect_exit 64 'profile-hz' soak "$P" -o "$WORK/x.db" --profile-every 5s --profile-hz 0
expect_exit 64 'shorter than --every' soak "$P" -o "$WORK/x.db" --every 30s --profile-every 20s --profile-for 2s

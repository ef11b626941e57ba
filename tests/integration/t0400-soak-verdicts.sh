#!/usr/bin/env bash
# vitals soak + analyze on the targets that reproduce each memory story:
# slow_leak → leak at the target's own rate (±20%), step_growth → one step at
# the right time (± one interval) and size (±10%), arena_churn → plateau after
# settling, a short recording → cannot tell yet.  The soaks run side by side
# to keep the test short; each verdict is about its own target's memory.
# arena_churn runs with blocks of at most 16 KiB: its arenas then reach their
# high water within seconds (with the default 300 KiB blocks the floor creeps
# for many minutes first, too long for a test).  Under the arena cap
# (MALLOC_ARENA_MAX=2) its floor still ratchets up by rarer and rarer records
# (about a MiB over the first minute, less later) and then holds: a plateau,
# given a live set (96 MiB) large enough that a MiB is well under the 2% of
# the level that counts as material drift (at 32 MiB it is not, and one run
# in five could not rule out a 1.4 MiB drift).  The churn soaks once lasted 90 s:
# at 90 s a late ratchet of just over a MiB once left too short a settled
# window (CI: "cannot tell yet; soak about 45 s more", which was honest), and
# at 120 s on a slower CI box the ramp took 15 s and a ratchet of about a
# MiB after it left "still rising but slowing down; soak 61 s more" (honest
# again: 1 MiB in 100 s cannot be told from a slow leak).  They last 180 s.
# With 8 arenas the floor still wanders by about a MiB as arenas
# are trimmed and refilled, judged a plateau in most runs and "still
# falling" in some: that soak must not be called a leak.
# lane: solo — verdicts and the sampler's step time rest on the sampling cadence
. "$(dirname "$0")/lib.sh"

truth_rate() {  # leaked bytes per second between the first and last truth lines with a leak
	python3 - "$1" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
rows = [r for r in rows if r.get("phase") in ("leaking", "capped")]
a, b = rows[0], rows[-1]
print((b["leaked_bytes"] - a["leaked_bytes"]) / (b["t"] - a["t"]))
PY
}

# --- four soaks at once: leak, step, churn, and a short one ---------------------
# The sanitizer build runs the same verdict code on shorter churn soaks (45 s)
# and checks them for memory errors only: the plateau needs 180 s, once is enough.
churn_for=180s
san=false
case "$B" in *-san*) churn_for=45s san=true ;; esac
vitals soak -q -o "$WORK/churn.db" --every 0.25s --for "$churn_for" --heap --heap-every 5s --env MALLOC_ARENA_MAX=2 -- \
	"$T/targets/arena_churn" --max-block-kb 16 --live-mb 96 --seconds 240 >"$WORK/churn.soak" 2>&1 &
churn_pid=$!
vitals soak -q -o "$WORK/sprawl.db" --every 0.25s --for "$churn_for" -- \
	"$T/targets/arena_churn" --max-block-kb 16 --seconds 240 >"$WORK/sprawl.soak" 2>&1 &
sprawl_pid=$!
vitals soak -q -o "$WORK/leak.db" --every 0.5s --for 40s -- \
	"$T/targets/slow_leak" --truth "$WORK/leak.truth" --rate-kb-per-s 1024 --seconds 120 \
	>"$WORK/leak.soak" 2>&1 &
leak_pid=$!
vitals soak -q -o "$WORK/step.db" --every 0.25s --for 32s -- \
	"$T/targets/step_growth" --truth "$WORK/step.truth" --step-at 14 --step-mb 64 --seconds 120 \
	>"$WORK/step.soak" 2>&1 &
step_pid=$!
vitals soak -q -o "$WORK/short.db" --every 0.5s --for 4s -- \
	"$T/targets/slow_leak" --seconds 120 >"$WORK/short.soak" 2>&1 ||
	fail "short soak: $(cat "$WORK/short.soak")"
wait $leak_pid || fail "leak soak: $(cat "$WORK/leak.soak")"
wait $step_pid || fail "step soak: $(cat "$WORK/step.soak")"
wait $churn_pid || fail "churn soak: $(cat "$WORK/churn.soak")"
wait $sprawl_pid || fail "sprawl soak: $(cat "$WORK/sprawl.soak")"
check "soak says where the recording went and what next" grep -q "next: vitals analyze $WORK/leak.db" "$WORK/leak.soak"

# --- slow leak -----------------------------------------------------------------
vitals analyze --json "$WORK/leak.db" >"$WORK/leak.json" || fail "analyze leak.db"
truth=$(truth_rate "$WORK/leak.truth")
rate=$(jq_py "$WORK/leak.json" 'j["verdict"]["slope"]["bytes_per_s"]')
echo "# slow_leak: verdict $(jq_py "$WORK/leak.json" 'j["verdict"]["kind"]'), rate $rate B/s, truth $truth B/s"
check "slow_leak is a leak" test "$(jq_py "$WORK/leak.json" 'j["verdict"]["kind"]')" = leak
check "leak rate within 20% of the target's truth" \
	python3 -c "import sys; sys.exit(abs($rate - $truth) > 0.2 * $truth)"
check "the rate comes with an interval around it" \
	python3 -c "import sys; lo, hi = $(jq_py "$WORK/leak.json" '[j["verdict"]["slope"]["lo"], j["verdict"]["slope"]["hi"]]'); sys.exit(not (lo <= $rate <= hi))"
vitals analyze "$WORK/leak.db" >"$WORK/leak.txt" || fail "analyze text"
check "text names the verdict" grep -q "verdict: leak" "$WORK/leak.txt"
check "text shows the q1->q4 floor drift" grep -qi "floor drift" "$WORK/leak.txt"

# --- step growth ---------------------------------------------------------------
vitals analyze --json "$WORK/step.db" >"$WORK/step.json" || fail "analyze step.db"
step_t=$(jq_py "$WORK/step.json" 'j["verdict"]["step"]["t"]')
step_b=$(jq_py "$WORK/step.json" 'j["verdict"]["step"]["bytes"]')
truth_t=$(truth_py "$WORK/step.truth" 't["step_at_t"]')
truth_b=$(truth_py "$WORK/step.truth" 't["step_bytes"]')
echo "# step_growth: verdict $(jq_py "$WORK/step.json" 'j["verdict"]["kind"]'), step at $step_t s of $step_b B; truth $truth_t s, $truth_b B"
check "step_growth is a step" test "$(jq_py "$WORK/step.json" 'j["verdict"]["kind"]')" = step
check "step time within one interval (0.25 s, +0.1 s for launch) of the truth" \
	python3 -c "import sys; sys.exit(abs($step_t - $truth_t) > 0.35)"
check "step size within 10% of the truth" \
	python3 -c "import sys; sys.exit(abs($step_b - $truth_b) > 0.1 * $truth_b)"

# --- arena churn: a plateau once settled -------------------------------------------
vitals analyze --json "$WORK/churn.db" >"$WORK/churn.json" || fail "analyze churn.db"
echo "# arena_churn, MALLOC_ARENA_MAX=2: $(jq_py "$WORK/churn.json" 'j["verdict"]["why"]')"
[[ $(jq_py "$WORK/churn.json" 'j["verdict"]["kind"]') == plateau ]] ||
	vitals analyze "$WORK/churn.db" | sed -n '/^verdict/,/^over the span/p'   # the evidence, for the log
# Beside the other lane (or make test-loaded's hogs) a late ratchet of a MiB
# or two can come in the last minute (q3 115 MiB, q4 117 MiB over a live heap
# flat at 98 MiB): "cannot tell yet" is then the honest verdict, with the
# allocator's own live bytes a plateau.  Never a leak, never anything else.
$san || check "arena churn (capped) is a plateau, or cannot tell yet over a live heap that is one" \
	test "$(jq_py "$WORK/churn.json" 'j["verdict"]["kind"] == "plateau" or (j["verdict"]["kind"] == "cannot_tell"
		and (j["verdict"]["heap_live"] or {}).get("kind") == "plateau")')" = true
vitals analyze --json "$WORK/sprawl.db" >"$WORK/sprawl.json" || fail "analyze sprawl.db"
echo "# arena_churn, 8 arenas: $(jq_py "$WORK/sprawl.json" 'j["verdict"]["why"]')"
$san || check "arena churn (8 arenas) is not called a leak" \
	python3 -c "import sys; sys.exit('$(jq_py "$WORK/sprawl.json" 'j["verdict"]["kind"]')' == 'leak')"
echo "# arena_churn events: $(jq_py "$WORK/churn.json" '[(e["kind"], e["detail"]) for e in j["events"]]')"
check "--heap recorded the allocator's figures" \
	test "$(jq_py "$WORK/churn.json" '[m in j["recording"]["metrics"] for m in ("heap_live", "heap_free", "heap_keepcost")]')" = '[true, true, true]'
$san || check "after settling: a settle time and the settled range" \
	test "$(jq_py "$WORK/churn.json" '(lambda s: s["settle_s"] > 0 and s["lo_bytes"] <= s["median_bytes"] <= s["hi_bytes"])(j["verdict"]["settled"])')" = true

# --- the rollups the soak wrote as it went: every sample once, summed up right ----
check "the soak's per-minute rollups hold every sample once, each summed up right" python3 - "$WORK/churn.db" <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT first_id, last_id, t0, t1, pid, n, committed_lo, committed_hi, committed_n,"
                  " cpu_user_s_lo, cpu_user_s_hi FROM rollups ORDER BY id").fetchall()
ids = [r[0] for r in db.execute("SELECT id FROM samples ORDER BY id")]
bad, expect = [], ids[0] if ids else None
for first, last, t0, t1, pid, n, lo, hi, known, cpu0, cpu1 in rows:
    s = db.execute("SELECT t, pid, committed, cpu_user_s FROM samples WHERE id BETWEEN ? AND ? ORDER BY id",
                   (first, last)).fetchall()
    com = [x[2] for x in s if x[2] is not None]
    cpu = [x[3] for x in s if x[3] is not None]
    if (first != expect or len(s) != n or t1 - t0 >= 60 or {x[1] for x in s} != {pid} or
            known != len(com) or (com and (lo, hi) != (min(com), max(com))) or
            (cpu and (abs(cpu0 - cpu[0]) > 1e-9 or abs(cpu1 - cpu[-1]) > 1e-9))):
        bad.append((first, last, n, len(s)))
    expect = last + 1
print("# %d rollups of %d samples; rows that do not add up: %s" % (len(rows), len(ids), bad[:3]))
sys.exit(bool(bad) or not rows or expect != ids[-1] + 1)
EOF

# --- too short -------------------------------------------------------------------
vitals analyze --json "$WORK/short.db" >"$WORK/short.json" || fail "analyze short.db"
check "a 4 s recording cannot tell yet" test "$(jq_py "$WORK/short.json" 'j["verdict"]["kind"]')" = cannot_tell
check "and says how much longer to soak" \
	python3 -c "import sys; sys.exit(not $(jq_py "$WORK/short.json" 'j["verdict"]["need_more_s"]') > 0)"

# --- CSV and HTML views of the same recording ------------------------------------
vitals analyze --csv "$WORK/leak.csv" --html "$WORK/leak.html" "$WORK/leak.db" >/dev/null || fail "csv/html"
check "CSV has a header and one row per sample" \
	test "$(($(wc -l <"$WORK/leak.csv") - 1))" -ge 70
check "HTML is one file with inline SVG" grep -q "<svg" "$WORK/leak.html"
check "HTML loads nothing from the network" \
	python3 -c "import re, sys; t = open('$WORK/leak.html').read(); sys.exit(bool(re.search(r'(src|href)=\"(https?:)?//', t)))"

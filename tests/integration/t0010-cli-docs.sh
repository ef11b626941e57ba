#!/usr/bin/env bash
# t0010 — the documents a user reads hold true:
#   - man/vitals.1 is what vitals-doc writes from man/vitals.1.in and the
#     commands' option tables (the generator is guarded: `make man`);
#   - every option of every command is in its --help and in the man page;
#   - docs/metrics.md documents every family vitals serve declares, and no other;
#   - (t0011 runs every command line README.md and the man page show);
#   - options and operands mix in any order, and only -- ends the options.
. "$(dirname "$0")/lib.sh"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
DOC=$B/vitals-doc
[ -x "$DOC" ] || fail "no $DOC: build first"

# the generator and the checked-in page agree
"$DOC" man "$SRC/man/vitals.1.in" >"$WORK/vitals.1" || fail "vitals-doc man"
check "man/vitals.1 is up to date (run make man)" cmp -s "$WORK/vitals.1" "$SRC/man/vitals.1"

# docs/metrics.md names every family vitals serve declares, with its type, and no other
"$DOC" metrics >"$WORK/families" || fail "vitals-doc metrics"
python3 - "$WORK/families" "$SRC/docs/metrics.md" >"$WORK/metrics.diff" <<'PY'
import re, sys
declared = dict(line.split() for line in open(sys.argv[1]))
documented = {}
for line in open(sys.argv[2]):
    m = re.match(r"\| ((?:`[a-z0-9_]+`(?:, )?)+) \| (gauge|counter) \|", line)
    if m:
        for name in re.findall(r"`([a-z0-9_]+)`", m.group(1)):
            documented[name] = m.group(2)
for name in sorted(set(declared) | set(documented)):
    if declared.get(name) != documented.get(name):
        print(f"{name}: declared {declared.get(name)}, documented {documented.get(name)}")
print(len(declared), "declared", file=sys.stderr)
PY
cat "$WORK/metrics.diff"
check "docs/metrics.md documents each of the exporter's families with its type" test ! -s "$WORK/metrics.diff"

# every option in --help and in the man page
man_text=$WORK/man.txt
MANWIDTH=200 man -l "$SRC/man/vitals.1" >"$man_text" 2>/dev/null || sed 's/\\-/-/g' "$SRC/man/vitals.1" >"$man_text"
missing=0
while read -r cmd opt; do
	vitals "$cmd" --help | grep -q -- "$opt" || { echo "not in vitals $cmd --help: $opt"; missing=1; }
	grep -q -- "$opt" "$man_text" || { echo "not in the man page: $cmd $opt"; missing=1; }
done < <("$DOC" options)
check "every option is in --help and the man page" test $missing = 0
check "vitals help CMD is CMD --help" cmp -s <(vitals help threads) <(vitals threads --help)

start_target arena_churn --seconds 600 --threads 2
P1=$TPID

# ---- options and operands in any order; only -- ends options ----
check "soak PID -o FILE --for D (options after the PID)" \
	vitals soak "$P1" -o "$WORK/order.db" --for 1s --every 0.2s -q
check "threads PID -i D" vitals threads "$P1" -i 0.5s
expect_exit 64 "not a pid" soak -o "$WORK/x.db" --for 1s ./cmd
expect_exit 64 "unknown option '--bogus'" snap --bogus "$P1"
expect_exit 64 "needs an argument" threads "$P1" --interval
check "-- keeps the command's own options its own" \
	vitals soak -o "$WORK/dd.db" --for 1s --every 0.2s -q -- "$T/targets/arena_churn" --seconds 5 --threads 2

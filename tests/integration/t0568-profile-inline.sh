#!/usr/bin/env bash
# Inlined functions and source lines (issue 25): functions the compiler
# inlined are frames of their own, from the module's DWARF (libdw), in every
# view, with where they are defined.
#
# targets/inline_work (gcc -O1 -g) spends known shares of its CPU in
# inline_checksum and inline_scramble (always_inline into work_outer; the
# second inlines inline_rotate): no symbol names them, so before this every
# sample was work_outer's.  Their inclusive shares within 3 points of the
# target's own clock; --folded has the chains work_outer;inline_scramble;
# inline_rotate; --json's rows say "inlined" and where each is defined; the
# text marks them "(inlined)" with a "defined at" column; --pprof has one
# Location per address whose Lines are the inline chain, innermost first,
# with line numbers (DWARF 5, gcc's default; also with compressed debug
# sections).  Debug information is found where it is kept: a
# .gnu_debuglink file (one of another build under its name is not used, and
# said), a file under /usr/lib/debug/.build-id (as -dbgsym packages install
# it), MiniDebugInfo (.gnu_debugdata), split DWARF (.dwo; one moved away is
# named); each module says where its lines came from.  A Rust program built
# with rustc -O -g gets its #[inline(always)] function as an inlined frame,
# demangled.
# Prerequisite: perf events (root, or perf_event_paranoid <= 1).
. "$(dirname "$0")/lib.sh"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)

paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)
[ "$(id -u)" = 0 ] || [ "$paranoid" -le 1 ] || skip "perf events need root or kernel.perf_event_paranoid <= 1"

start_target inline_work --seconds 120
sleep 0.5
kill -USR1 "$TPID"
vitals profile --for 4s --hz 999 --top 100 --json --folded "$WORK/c.folded" --pprof "$WORK/c.pb.gz" "$TPID" \
	>"$WORK/c.json" 2>"$WORK/c.err" || fail "profile --json: $(cat "$WORK/c.err")"
kill -USR1 "$TPID"
vitals profile --for 1s "$TPID" >"$WORK/c.txt" 2>&1 || fail "profile: $(cat "$WORK/c.txt")"
sed -n '/^top functions by total/,/^$/p' "$WORK/c.txt"

# --- shares against the target's own clock ------------------------------------------
check "inclusive shares of the inlined functions within 3 points of the truth" python3 - "$TRUTH" "$WORK/c.json" <<'PY'
import json, sys
marks = {}
for l in open(sys.argv[1]):
    t = json.loads(l)
    if t.get("mark") in (1, 2) and t["mark"] not in marks:
        marks[t["mark"]] = t
a, b = marks[1], marks[2]
cpu = b["process_cpu_s"] - a["process_cpu_s"]
truth = {k: (b[k + "_s"] - a[k + "_s"]) / cpu for k in ("checksum", "scramble", "outer")}
truth["work_outer"] = sum(truth.values())
j = json.load(open(sys.argv[2]))
total = {f["function"]: f["total_share"] for f in j["top_total"]}
worst = 0
for name, key in (("inline_checksum", "checksum"), ("inline_scramble", "scramble"), ("work_outer", "work_outer")):
    got = total.get(name, 0.0)
    diff = 100 * (got - truth[key])
    worst = max(worst, abs(diff))
    print(f"#   {name:18} truth {100 * truth[key]:5.1f}  vitals {100 * got:5.1f}  ({diff:+.1f})")
sys.exit(worst > 3)
PY

# --- every view ------------------------------------------------------------------------
check "--folded: the inline chain under work_outer, two deep" \
	grep -q ';work_outer;inline_scramble;inline_rotate' "$WORK/c.folded"
check "--folded: inline_checksum under work_outer" grep -q ';work_outer;inline_checksum' "$WORK/c.folded"
check "--json: inline_checksum is inlined, defined in inline_work.c at a line" \
	test "$(jq_py "$WORK/c.json" '[(f["inlined"], f["file"].endswith("/inline_work.c"), f["line"] > 0) for f in j["top_total"] if f["function"] == "inline_checksum"]')" = '[[true, true, true]]'
check "--json: work_outer is not (it has code of its own)" \
	test "$(jq_py "$WORK/c.json" '[f["inlined"] for f in j["top_total"] if f["function"] == "work_outer"]')" = '[false]'
check "text: inlined functions are marked, and where they are defined is shown" \
	grep -qE '^  inline_checksum \(inlined\) +inline_work +[0-9]+ +[0-9.]+% +inline_work\.c:[0-9]+$' "$WORK/c.txt"

check "--pprof: an address with the chain inline_rotate, inline_scramble, work_outer as its Lines, with line numbers" \
	python3 - "$WORK/c.pb.gz" "$SRC/tests/unit" <<'PY'
import gzip, sys
sys.path.insert(0, sys.argv[2])
from pprof_check import fields   # the tests' own reader of the wire format

prof = gzip.open(sys.argv[1]).read()
strings, funcs, locs = [], {}, []
for num, wt, v in fields(prof):
    if num == 6:
        strings.append(v.decode())
    elif num == 5:
        f = dict((n, x) for n, _, x in fields(v))
        funcs[f.get(1, 0)] = f
    elif num == 4:
        lines = []
        for n, _, x in fields(v):
            if n == 4:
                l = dict((m, y) for m, _, y in fields(x))
                lines.append((l.get(1, 0), l.get(2, 0)))
        locs.append(lines)
name = lambda fid: strings[funcs[fid].get(2, 0)]
chains = [[(name(f), line) for f, line in lines] for lines in locs]
want = ["inline_rotate", "inline_scramble", "work_outer"]
hit = [c for c in chains if [n for n, _ in c] == want]
print("#   chains of more than one Line:", sorted({tuple(n for n, _ in c) for c in chains if len(c) > 1}))
sys.exit(not hit or not all(line > 0 for _, line in hit[0]))
PY

# --- debug information in a separate file ---------------------------------------------
# The same program stripped of its DWARF, which a .gnu_debuglink names in DIR/.debug/
# (as objcopy --only-keep-debug leaves it, and gdb finds it): found, and the inlined
# frames are back.  A debug file of another program under that name is not used.
mkdir -p "$WORK/sep/.debug" "$WORK/other/.debug"
objcopy --only-keep-debug "$T/targets/inline_work" "$WORK/sep/.debug/inline_work.debug"
objcopy --strip-debug --add-gnu-debuglink="$WORK/sep/.debug/inline_work.debug" \
	"$T/targets/inline_work" "$WORK/sep/inline_work"
objcopy --strip-debug --add-gnu-debuglink="$WORK/sep/.debug/inline_work.debug" \
	"$T/targets/inline_work" "$WORK/other/inline_work"
objcopy --only-keep-debug "$T/targets/profile_work" "$WORK/other/.debug/inline_work.debug"
# profile_program NAME PROGRAM [text]: PROGRAM (a build of inline_work) profiled for 1 s while it
# runs: $WORK/NAME.json and $WORK/NAME.folded, or with "text" $WORK/NAME.txt
profile_program() {
	local name=$1 prog=$2 pid
	"$prog" --seconds 30 >/dev/null 2>&1 &
	pid=$!
	PIDS+=($pid)
	sleep 0.3
	if [ "${3:-}" = text ]; then
		vitals profile --for 1s "$pid" >"$WORK/$name.txt" 2>"$WORK/$name.err"
	else
		vitals profile --for 1s --json --folded "$WORK/$name.folded" "$pid" >"$WORK/$name.json" 2>"$WORK/$name.err"
	fi || fail "$name: profile: $(cat "$WORK/$name.err")"
	kill "$pid"
}
profile_program sep "$WORK/sep/inline_work"
profile_program other "$WORK/other/inline_work"
check "a .gnu_debuglink file in .debug/: the inlined frames, from it" \
	grep -q ';work_outer;inline_checksum' "$WORK/sep.folded"
check "a debug file of another build under that name is ignored: no inlined frame, work_outer still named" \
	sh -c "! grep -q 'inline_checksum' '$WORK/other.folded' && grep -q ';work_outer' '$WORK/other.folded'"
module_py() {  # the inline_work module's row of profile JSON $1, through expression $2 of m
	jq_py "$1" "[$2 for m in j['modules'] if m['name'] == 'inline_work'][0]"
}
check "... the module says its lines came from that debug file" test "$(module_py "$WORK/sep.json" \
	'[m["lines"], m["debug_file"], m["debug_ignored"]]')" = "[\"debugfile\", \"$WORK/sep/.debug/inline_work.debug\", null]"
check "... the other says none, and which file it did not read, and why" test "$(module_py "$WORK/other.json" \
	'[m["lines"], m["debug_file"], m["debug_ignored"]]')" = \
	"[\"none\", null, {\"path\": \"$WORK/other/.debug/inline_work.debug\", \"why\": \"its build ID is not the module's\"}]"
profile_program other "$WORK/other/inline_work" text
sed -n '/unwinding/,$p' "$WORK/other.txt" | sed 's/^/# /'
check "... and the text says so under the modules" \
	grep -qE "^  not used +inline_work: $WORK/other/.debug/inline_work.debug \(its build ID is not the module's\)" "$WORK/other.txt"
check "... the module's lines: none" grep -qE '^ +inline_work +[0-9]+ .* symtab +none$' "$WORK/other.txt"

# --- compressed debug sections (SHF_COMPRESSED, as ld --compress-debug-sections leaves them) --
mkdir -p "$WORK/zlib"
objcopy --compress-debug-sections=zlib "$T/targets/inline_work" "$WORK/zlib/inline_work"
profile_program zlib "$WORK/zlib/inline_work"
check "compressed debug sections: the inlined frames" grep -q ';work_outer;inline_checksum' "$WORK/zlib.folded"

# --- a -dbgsym package's file: /usr/lib/debug/.build-id/xx/rest.debug (root only) ------------
# The program gets a build ID of its own (--build-id=0x...: no other run's file can be
# taken for it), loses its DWARF, and its debug file goes where Debian's -dbgsym puts it.
if [ "$(id -u)" = 0 ]; then
	bid=$(od -An -N20 -tx1 /dev/urandom | tr -d ' \n')
	mkdir -p "$WORK/bid" "/usr/lib/debug/.build-id/${bid:0:2}"
	bid_file=/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug
	trap 'rm -f "$bid_file"; rmdir "${bid_file%/*}" 2>/dev/null; cleanup' EXIT
	gcc -std=gnu11 -O1 -g -D_GNU_SOURCE -I"$SRC/targets" -Wl,--build-id=0x"$bid" -o "$WORK/bid/inline_work" \
		"$SRC/targets/inline_work.c" -lpthread -lm 2>"$WORK/bid.err" || fail "gcc --build-id: $(cat "$WORK/bid.err")"
	objcopy --only-keep-debug "$WORK/bid/inline_work" "$bid_file"
	strip --strip-debug "$WORK/bid/inline_work"
	profile_program bid "$WORK/bid/inline_work"
	check "by build ID under /usr/lib/debug/.build-id: the inlined frames, from it" \
		grep -q ';work_outer;inline_checksum' "$WORK/bid.folded"
	check "... the module names that file" test "$(module_py "$WORK/bid.json" '[m["lines"], m["debug_file"]]')" = \
		"[\"debugfile\", \"$bid_file\"]"
	rm -f "$bid_file"
	rmdir "${bid_file%/*}" 2>/dev/null   # made for it, unless another file is there
else
	echo "# not root: a debug file under /usr/lib/debug/.build-id not tried"
fi

# --- MiniDebugInfo: the program stripped, its function symbols in an xz-compressed
# .gnu_debugdata section (as Fedora's packages carry them) -------------------------------
if command -v xz >/dev/null; then
	mdi=$WORK/mdi
	mkdir -p "$mdi"
	nm -D "$T/targets/inline_work" --format=posix --defined-only | awk '{ print $1 }' | sort >"$mdi/dynsyms"
	nm "$T/targets/inline_work" --format=posix --defined-only | awk '$2 ~ /^[Tt]$/ { print $1 }' | sort >"$mdi/funcs"
	comm -13 "$mdi/dynsyms" "$mdi/funcs" >"$mdi/keep"
	objcopy --only-keep-debug "$T/targets/inline_work" "$mdi/full.debug"
	objcopy -S --remove-section .comment --keep-symbols="$mdi/keep" "$mdi/full.debug" "$mdi/mini"
	xz "$mdi/mini"
	strip --strip-all -R .comment -o "$mdi/inline_work" "$T/targets/inline_work"
	objcopy --add-section .gnu_debugdata="$mdi/mini.xz" "$mdi/inline_work"
	profile_program mdi "$mdi/inline_work"
	check "MiniDebugInfo: work_outer named from .gnu_debugdata" grep -q ';work_outer' "$WORK/mdi.folded"
	check "... the module's symbols: minidebuginfo, lines none" \
		test "$(module_py "$WORK/mdi.json" '[m["symbols"], m["lines"]]')" = '["minidebuginfo", "none"]'
else
	echo "# no xz: MiniDebugInfo not tried (scripts/deps.sh --test installs xz-utils)"
fi

# --- split DWARF (gcc -gsplit-dwarf): the functions in a .dwo beside the program -----------
# Found: the inlined frames as from DWARF in the program.  Moved away: source lines still
# (the line table stays in the program), no inlined frames, and the module names the .dwo.
mkdir -p "$WORK/split"
(cd "$WORK/split" && gcc -std=gnu11 -O1 -g -gsplit-dwarf -D_GNU_SOURCE -I"$SRC/targets" -o inline_work \
	"$SRC/targets/inline_work.c" -lpthread -lm) 2>"$WORK/split.err" || fail "gcc -gsplit-dwarf: $(cat "$WORK/split.err")"
dwo=$(cd "$WORK/split" && ls ./*.dwo 2>/dev/null | head -1)
check "gcc -gsplit-dwarf left a .dwo beside the program" test -n "$dwo"
for d in found moved; do
	[ "$d" = moved ] && mv "$WORK/split/$dwo" "$WORK/moved.dwo"
	profile_program "split-$d" "$WORK/split/inline_work"
done
check "split DWARF: the inlined frames, from the .dwo" grep -q ';work_outer;inline_checksum' "$WORK/split-found.folded"
check "... the module's lines: split, nothing missing" \
	test "$(module_py "$WORK/split-found.json" '[m["lines"], m["debug_ignored"]]')" = '["split", null]'
check "the .dwo moved away: no inlined frame, work_outer still named" \
	sh -c "! grep -q 'inline_checksum' '$WORK/split-moved.folded' && grep -q ';work_outer' '$WORK/split-moved.folded'"
check "... the module names the .dwo it did not find" test "$(module_py "$WORK/split-moved.json" \
	'[m["lines"], m["debug_ignored"]["path"].endswith(".dwo"), "not found" in m["debug_ignored"]["why"]]')" = '["split", true, true]'

# --- Rust -------------------------------------------------------------------------------
if ! command -v rustc >/dev/null; then
	echo "# no rustc: the Rust half is not run (scripts/deps.sh --test installs Debian's rustc)"
	echo "ok - t0568 (C only)"
	exit 0
fi
cat >"$WORK/inl.rs" <<'EOF2'
use std::time::{Duration, Instant};

#[inline(always)]
fn mix_step(x: u64, i: u64) -> u64 {
    let mut h = x;
    for k in 0..64u64 {
        h = (h ^ (h >> 31)).wrapping_mul(0x9e3779b97f4a7c15).wrapping_add(i + k);
    }
    h
}

#[inline(never)]
fn churn(seed: u64) -> u64 {
    let mut x = seed;
    for i in 0..20000u64 {
        x = mix_step(x, i);
    }
    x
}

fn main() {
    let secs: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(60);
    let end = Instant::now() + Duration::from_secs(secs);
    let mut total = 0u64;
    while Instant::now() < end {
        total = total.wrapping_add(churn(total));
    }
    println!("{}", total);
}
EOF2
rustc -O -g -o "$WORK/inl" "$WORK/inl.rs" 2>"$WORK/rustc.err" || fail "rustc: $(cat "$WORK/rustc.err")"
"$WORK/inl" 120 >/dev/null &
PIDS+=($!)
vitals profile --for 2s --top 100 --json --folded "$WORK/rs.folded" "$!" >"$WORK/rs.json" 2>"$WORK/rs.err" ||
	fail "rust: profile: $(cat "$WORK/rs.err")"
check "rust: the #[inline(always)] function is a frame under its caller, demangled" \
	grep -q ';inl::churn;inl::mix_step' "$WORK/rs.folded"
check "rust: --json says it ran inlined, defined in inl.rs" \
	test "$(jq_py "$WORK/rs.json" '[(f["inlined"], (f["file"] or "").endswith("inl.rs")) for f in j["top_total"] if f["function"] == "inl::mix_step"]')" = '[[true, true]]'
echo "ok - t0568"

# lib.sh — sourced by every tests/integration/t*.sh.
#
#   start_target NAME [ARGS...]   run $T/targets/NAME in the background; sets
#                                 $TPID and $TRUTH (its ground-truth file); killed at exit
#   vitals ARGS...                the binary under test
#   jq_py FILE EXPR               evaluate a Python expression on the JSON in FILE (as j)
#   skip "why" / fail "why"       exit 77 / exit 1 with a message
#   check "desc" COND...          run COND; fail with desc if it fails
set -u
B=${VT_BUILD:-$PWD/build}               # the vitals under test (maybe an ASan build)
T=${VT_TARGETS:-$B}                      # the targets: always a plain glibc build
WORK=$(mktemp -d /tmp/vitals-test.XXXXXX)
PIDS=()

cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	rm -rf "$WORK"
}
trap cleanup EXIT

skip() { echo "skip: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
check() {
	local desc=$1
	shift
	if "$@"; then echo "ok - $desc"; else fail "$desc"; fi
}

vitals() { "$B/vitals" "$@"; }

# start_target NAME [ARGS...]: env vars may be set by the caller with `env`.
start_target() {
	local name=$1
	shift
	TRUTH=$WORK/$name.$RANDOM.truth
	"$T/targets/$name" --truth "$TRUTH" "$@" >"$WORK/$name.out" 2>&1 &
	TPID=$!
	PIDS+=("$TPID")
	local i
	for i in $(seq 50); do
		grep -q '^pid ' "$WORK/$name.out" 2>/dev/null && return 0
		sleep 0.1
	done
	fail "target $name did not start"
}

jq_py() {
	python3 - "$1" "$2" <<'PY'
import json, sys
with open(sys.argv[1]) as f:
    j = json.load(f)
v = eval(sys.argv[2], {"j": j})
print(json.dumps(v) if not isinstance(v, str) else v)
PY
}

# last line of a target's truth file, as JSON, then EXPR on it (as t)
truth_py() {
	python3 - "$1" "$2" <<'PY'
import json, sys
lines = [l for l in open(sys.argv[1]) if l.startswith("{")]
t = json.loads(lines[-1])
v = eval(sys.argv[2], {"t": t})
print(json.dumps(v))
PY
}

command -v python3 >/dev/null || skip "python3 is needed to read JSON (scripts/deps.sh --test)"
[ -x "$B/vitals" ] || fail "no $B/vitals: build first"

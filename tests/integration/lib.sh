# lib.sh — sourced by every tests/integration/t*.sh.
#
#   start_target NAME [ARGS...]   run $T/targets/NAME in the background; sets
#                                 $TPID and $TRUTH (its ground-truth file); killed at exit
#   vitals ARGS...                the binary under test
#   jq_py FILE EXPR               evaluate a Python expression on the JSON in FILE (as j)
#   expect_exit STATUS PATTERN ARGS...  a failing vitals call, checked
#   kernel_thread                 pid of a visible kernel thread, or nothing
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

# a TCP port free on 127.0.0.1 now
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start_prometheus SCRAPE_PORT [RULES_FILE]: Debian's prometheus scraping
# 127.0.0.1:SCRAPE_PORT every second (the rules, if given, evaluated every
# second), its config, tsdb and log under $WORK; sets PROM (its URL) and
# prom_pid, and returns once it is ready.
start_prometheus() {
	local pport rules="" i
	pport=$(free_port)
	[ -n "${2:-}" ] && rules="rule_files:
  - $2
"
	printf 'global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n%sscrape_configs:\n  - job_name: vitals\n    static_configs:\n      - targets: [%s]\n' \
		"$rules" "'127.0.0.1:$1'" >"$WORK/prometheus.yml"
	prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
		--web.listen-address="127.0.0.1:$pport" --log.level=warn >"$WORK/prometheus.log" 2>&1 &
	prom_pid=$!
	PIDS+=("$prom_pid")
	PROM=http://127.0.0.1:$pport
	for i in $(seq 100); do
		curl -sf "$PROM/-/ready" >/dev/null 2>&1 && break
		kill -0 $prom_pid 2>/dev/null || fail "prometheus exited: $(tail -5 "$WORK/prometheus.log")"
		sleep 0.2
	done
	curl -sf "$PROM/-/ready" >/dev/null || fail "prometheus not ready: $(tail -5 "$WORK/prometheus.log")"
}

# start_serve ARGS...: vitals serve on a free loopback port, run as the command
# in AS_USER (an array, default none: this user); returns once it listens.
# Sets SPID, URL (no /metrics) and PORT.
AS_USER=()
start_serve() {
	local log=$WORK/serve.$RANDOM.err i
	: >"$log"                   # there before the background job opens it
	"${AS_USER[@]}" "$B/vitals" serve --listen 127.0.0.1:0 "$@" 2>"$log" &
	SPID=$!
	PIDS+=("$SPID")
	for i in $(seq 100); do
		grep -q "listening on" "$log" && break
		kill -0 "$SPID" 2>/dev/null || break
		sleep 0.1
	done
	URL=$(sed -nE 's#^vitals serve: listening on (https?://[^ ]+)/metrics .*#\1#p' "$log")
	[ -n "$URL" ] || { cat "$log"; fail "vitals serve $* did not start"; }
	PORT=${URL##*:}
}

# req ARGS...: curl, at most REQ_TIMEOUT (default 10) seconds; the status on
# stdout, headers in $WORK/head, body in $WORK/body
req() {
	curl -s -o "$WORK/body" -D "$WORK/head" -w '%{http_code}' --max-time "${REQ_TIMEOUT:-10}" "$@"
}

# start_target NAME [ARGS...]: env vars may be set by the caller with `env`.
# ARGV0=NAME runs it under that name (its comm and argv[0]), as a service would be.
start_target() {
	local name=$1
	shift
	TRUTH=$WORK/$name.$RANDOM.truth
	: >"$WORK/$name.out"   # emptied here: a previous run's "pid" line must not pass for this one's
	(exec -a "${ARGV0:-$T/targets/$name}" "$T/targets/$name" --truth "$TRUTH" "$@" >"$WORK/$name.out" 2>&1) &
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

# pause_target: SIGUSR1 to the last start_target'ed target (started with
# --pause-signal), then wait until its truth says "paused"; fails if it never does
pause_target() {
	local i
	kill -USR1 "$TPID"
	for i in $(seq 50); do
		[ "$(truth_py "$TRUTH" 't["phase"]')" = '"paused"' ] && return 0
		sleep 0.1
	done
	fail "target $TPID did not pause"
}

# expect_exit STATUS PATTERN ARGS...: vitals ARGS exits STATUS, says PATTERN on
# stderr, and prints nothing on stdout (no partial result on failure)
expect_exit() {
	local want=$1 pattern=$2 got
	shift 2
	"$B/vitals" "$@" >"$WORK/out" 2>"$WORK/err"
	got=$?
	[ "$got" = "$want" ] || { cat "$WORK/err"; fail "vitals $* exited $got, expected $want"; }
	grep -qE "$pattern" "$WORK/err" || { cat "$WORK/err"; fail "vitals $*: stderr lacks /$pattern/"; }
	[ -s "$WORK/out" ] && fail "vitals $* printed a result on failure"
	echo "ok - vitals $* -> $got: $(head -1 "$WORK/err")"
}

# the pid of a kernel thread visible here (PF_KTHREAD in stat field 9), or nothing
kernel_thread() {
	python3 -c '
import glob
for f in glob.glob("/proc/[0-9]*/stat"):
    try:
        s = open(f).read()
    except OSError:
        continue
    if int(s[s.rindex(")") + 2:].split()[6]) & 0x200000:
        print(s.split()[0]); break'
}

command -v python3 >/dev/null || skip "python3 is needed to read JSON (scripts/deps.sh --test)"
[ -x "$B/vitals" ] || fail "no $B/vitals: build first"

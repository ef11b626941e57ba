#!/usr/bin/env bash
# t0730 — vitals serve's /debug/pprof/ (src/serve/pprof_serve.c, http.c's slow requests),
# as Go's net/http/pprof serves it, read by go tool pprof (Debian's golang-go):
#   - go tool pprof -top URL/debug/pprof/profile?seconds=10&target=busy reads a CPU
#     profile whose total is the target's CPU in the window (/proc/PID/stat), within 25%;
#   - during that profile: GET /metrics answers in under 1 s; a second profile of the
#     same target -> 429 with Retry-After; a profile of another target runs at once;
#   - seconds=100 -> 400 naming the cap 60; target=nope -> 404 naming the targets; no
#     target of two -> 400; /debug/pprof/nope -> 404;
#   - a target that exits mid-profile -> 200 with the profile so far (its comment says so);
#   - a client gone mid-profile (curl --max-time 1) -> the next profile of that target is
#     accepted at once, and the server's threads are back to their number;
#   - /debug/pprof/wall: a wall-clock profile;
#   - /debug/pprof/allocs: Go's heap sample types from a target running the agent's
#     allocation sampling (libvitals-agent-allocs.so); without it -> 501 naming it;
#   - a web config with basic auth: no password -> 401, the right one -> 200;
#   - SIGTERM during a profile -> exit 0 within 2 s.
# sanitizer: the profile threads, suspended and resumed connections, a profile stopped by a
# client gone or by SIGTERM (exit 0 under LeakSanitizer: nothing leaked)
# Prerequisites: perf events (root, or perf_event_paranoid <= 1), curl, go.
. "$(dirname "$0")/lib.sh"

paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)
[ "$(id -u)" = 0 ] || [ "$paranoid" -le 1 ] || skip "perf events need root or kernel.perf_event_paranoid <= 1"
command -v curl >/dev/null || skip "curl is needed (scripts/deps.sh --test)"
command -v go >/dev/null || skip "no go tool pprof (scripts/deps.sh --test installs golang-go)"
export HOME=$WORK GOCACHE=$WORK/gocache   # go wants a cache of its own

PW_HASH='$2b$04$qbntsOR7fkxLECMbwmKEBuUZIOh2GkFH8jnQT6y1k7BqvLEjs/i7.'   # "pw", bcrypt cost 4

REQ_TIMEOUT=20
cpu_ticks() { awk '{print $14 + $15}' /proc/"$1"/stat; }
threads() { ls /proc/"$1"/task | wc -l; }

# busy: about 0.9 of a core in two threads; short: exits 3 s in
start_target profile_work --seconds 80 --share parse=50,hash=40,net=0,fs=0,malloc=0
BUSY=$TPID
start_target profile_work --seconds 3 --share parse=20,hash=0,net=0,fs=0,malloc=0
SHORT=$TPID
start_serve --pid "$BUSY" --label busy --pid "$SHORT" --label short
T0=$(threads "$SPID")

# --- the target exits mid-profile: the profile so far
curl -s -o "$WORK/short.pb.gz" -w '%{http_code}' --max-time 30 "$URL/debug/pprof/profile?seconds=10&target=short" >"$WORK/short.code" &
SHORTREQ=$!

# --- the CPU profile, read by go tool pprof, against the target's own CPU
HZ=$(getconf CLK_TCK)
# the target's CPU, every 0.2 s with the time: read over the profile's own window after
(while kill -0 "$BUSY" 2>/dev/null; do echo "$(date +%s.%N) $(cpu_ticks "$BUSY")"; sleep 0.2; done) >"$WORK/cpu.log" &
PIDS+=($!)
sleep 0.5
go tool pprof -timeout 40 -top "$URL/debug/pprof/profile?seconds=10&target=busy" >"$WORK/top.txt" 2>&1 &
GOP=$!
sleep 2
t=$(curl -s -o "$WORK/metrics" -w '%{time_total}' --max-time 5 "$URL/metrics")
echo "# /metrics during the profile: ${t} s"
check "/metrics answers during a profile, in under 1 s (${t} s)" \
	python3 -c "import sys; sys.exit(not (float('$t') < 1.0))"
check "/metrics has the targets" grep -q 'target="busy"' "$WORK/metrics"
code=$(req "$URL/debug/pprof/profile?seconds=5&target=busy")
check "a second profile of the same target -> 429 (got $code: $(cat "$WORK/body"))" test "$code" = 429
check "the 429 has Retry-After" grep -qi '^Retry-After: [0-9]' "$WORK/head"
code=$(req "$URL/debug/pprof/profile?seconds=100&target=busy")
check "seconds=100 -> 400 naming the cap (got $code: $(cat "$WORK/body"))" \
	bash -c "[ $code = 400 ] && grep -q 'at most 60' '$WORK/body'"
code=$(req "$URL/debug/pprof/profile?seconds=5&target=nope")
check "an unknown target -> 404 naming the known ones (got $code: $(cat "$WORK/body"))" \
	bash -c "[ $code = 404 ] && grep -q \"'busy'\" '$WORK/body' && grep -q \"'short'\" '$WORK/body'"
code=$(req "$URL/debug/pprof/profile?seconds=5")
check "no target of two -> 400 (got $code)" test "$code" = 400
code=$(req "$URL/debug/pprof/profile?seconds=5&pid=1")
check "a pid of no target -> 404 (got $code)" test "$code" = 404
code=$(req "$URL/debug/pprof/heapx")
check "an unknown profile -> 404 (got $code)" test "$code" = 404
wait "$GOP" || fail "go tool pprof: $(cat "$WORK/top.txt")"
sleep 0.3
head -n 14 "$WORK/top.txt"
go tool pprof -raw "$HOME/pprof/"*.pb.gz 2>/dev/null | grep -E '^(Time|Duration):' >"$WORK/when.txt"
cat "$WORK/when.txt"
check "go tool pprof's total is the target's CPU in the profile's window" \
	python3 - "$WORK/top.txt" "$WORK/when.txt" "$WORK/cpu.log" "$HZ" <<'PY'
import datetime, re, sys
t = open(sys.argv[1]).read()
m = re.search(r"Total samples = ([0-9.]+)(m?s)", t)
total = float(m.group(1)) / (1000 if m.group(2) == "ms" else 1)
w = open(sys.argv[2]).read()
ts = re.search(r"Time: (\S+) (\S+)\.(\d+)", w)
t0 = datetime.datetime.strptime(ts.group(1) + " " + ts.group(2), "%Y-%m-%d %H:%M:%S").replace(
    tzinfo=datetime.timezone.utc).timestamp() + float("0." + ts.group(3))
d = float(re.search(r"Duration: ([0-9.]+)", w).group(1))
pts = [tuple(map(float, l.split())) for l in open(sys.argv[3]) if len(l.split()) == 2]
def at(x):   # the target's ticks at time x, between the readings around it
    for (a, ca), (b, cb) in zip(pts, pts[1:]):
        if a <= x <= b:
            return ca + (cb - ca) * (x - a) / (b - a) if b > a else ca
    sys.exit(f"no CPU reading around {x} ({pts[0][0]} .. {pts[-1][0]})")
cpu = (at(t0 + d) - at(t0)) / int(sys.argv[4])
print(f"# profile {d} s: total samples {total:.2f} s, the target's CPU in that window {cpu:.2f} s")
sys.exit(not (d >= 9.5 and cpu > 0.5 and 0.8 * cpu <= total <= 1.15 * cpu))
PY
check "the profile has the pool labels (thread=parse)" bash -c "go tool pprof -tags '$HOME/pprof/'*.pb.gz | grep -q parse"
check "the profile states the exporter's cost" bash -c "go tool pprof -comments '$HOME/pprof/'*.pb.gz | grep -q \"vitals serve's own CPU\""

wait "$SHORTREQ"
code=$(cat "$WORK/short.code")
check "a target that exits mid-profile -> 200 (got $code)" test "$code" = 200
go tool pprof -raw "$WORK/short.pb.gz" >"$WORK/short.txt" 2>&1; grep -E "^(Comment|Duration)" "$WORK/short.txt"
check "... with the profile so far" grep -q "exited before the end" "$WORK/short.txt"

# --- a client gone mid-profile: the profile stops, the next one is let in
curl -s -o /dev/null --max-time 1 "$URL/debug/pprof/profile?seconds=30&target=busy"
t0=$SECONDS
for _ in $(seq 10); do   # the profile's setup may still run on a loaded host: a few tries
	code=$(req "$URL/debug/pprof/profile?seconds=1&target=busy")
	[ "$code" = 429 ] || break
	sleep 0.5
done
check "after a client left mid-profile, the next profile -> 200 within $((SECONDS - t0)) s, not 29 s (got $code)" \
	bash -c "[ $code = 200 ] && [ $((SECONDS - t0)) -le 8 ]"
sleep 0.3
check "the server's threads are back to $T0 ($(threads "$SPID"))" test "$(threads "$SPID")" = "$T0"

# --- wall clock
code=$(curl -s -o "$WORK/wall.pb.gz" -w '%{http_code}' --max-time 30 "$URL/debug/pprof/wall?seconds=2&target=busy")
check "/debug/pprof/wall -> 200 (got $code)" test "$code" = 200
go tool pprof -top "$WORK/wall.pb.gz" >"$WORK/wall.txt" 2>&1
check "... a wall-clock profile" grep -q "^Type: wall" "$WORK/wall.txt"

# --- allocations: on the agent's path only; a target without it -> 501 naming the library
code=$(req "$URL/debug/pprof/allocs?seconds=1&target=busy")
check "/debug/pprof/allocs of a target without the agent -> 501 naming it (got $code: $(cat "$WORK/body"))" \
	bash -c "[ $code = 501 ] && grep -q 'libvitals-agent-allocs' '$WORK/body'"

# --- SIGTERM during a profile: out within 2 s
req "$URL/debug/pprof/profile?seconds=30&target=busy" >/dev/null &
sleep 0.5
kill -TERM "$SPID"
for _ in $(seq 20); do kill -0 "$SPID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$SPID" 2>/dev/null && fail "vitals serve still runs 2 s after SIGTERM during a profile"
wait "$SPID"
check "SIGTERM during a profile -> exit 0" test $? = 0

# --- the web config's auth holds for profiles too
printf 'basic_auth_users:\n  prom: %s\n' "$PW_HASH" >"$WORK/auth.yml"
start_serve --pid "$BUSY" --web-config "$WORK/auth.yml"
code=$(req "$URL/debug/pprof/profile?seconds=1")
check "no password -> 401 (got $code)" test "$code" = 401
code=$(req -u prom:pw "$URL/debug/pprof/profile?seconds=1")
check "the right password, the only target -> 200 (got $code)" test "$code" = 200
stop_auth=$SPID
kill "$stop_auth"

# --- /debug/pprof/allocs with the agent's sampling: Go's heap sample types
AGENT_ALLOCS=$B/agent/libvitals-agent-allocs.so
[ -e "$AGENT_ALLOCS" ] || AGENT_ALLOCS=$T/agent/libvitals-agent-allocs.so
(LD_PRELOAD="$AGENT_ALLOCS" exec "$T/targets/alloc_sites" --seconds 40 >"$WORK/as.out" 2>&1) &
APID=$!
PIDS+=("$APID")
sleep 0.5
start_serve --pid "$APID"
code=$(curl -s -o "$WORK/allocs.pb.gz" -w '%{http_code}' --max-time 30 "$URL/debug/pprof/allocs?seconds=3")
check "/debug/pprof/allocs with the agent -> 200 (got $code)" test "$code" = 200
go tool pprof -raw "$WORK/allocs.pb.gz" >"$WORK/allocs.txt" 2>&1
grep -E '^(PeriodType|Duration|Samples)' -A1 "$WORK/allocs.txt" | head -6
check "... Go's heap sample types" grep -qE "alloc_objects/count alloc_space/bytes(\[dflt\])? inuse_objects/count inuse_space/bytes" "$WORK/allocs.txt"
go tool pprof -top -sample_index=alloc_space "$WORK/allocs.pb.gz" >"$WORK/allocs.top" 2>&1
head -n 12 "$WORK/allocs.top"
check "... with allocations in it" grep -qE "Showing nodes accounting for [0-9.]+[kMG]?B" "$WORK/allocs.top"
echo "ok - t0730"

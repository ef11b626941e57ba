#!/usr/bin/env bash
# Accept-queue stalls (issue 16, part 1): echo_server stops accepting for
# 4 s from 6 s after its start while a loopback client connects four times
# a second; a soak at 0.5 s records the deepest accept queue each tick, and
# analyze reports one stall, its start and length each within one tick
# (plus a little for a loaded host) of the target's own account, and none
# at --stall 10s.  A soak of a process that listens on nothing records no
# queue: analyze's accept_queue is null and the text says nothing.
# Meanwhile vitals threads, during the stall, diagnoses an "accept stall"
# (the queue non-empty at every 100 ms read), never "idle", and after it
# does not.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip "no python3"
start_target echo_server --seconds 40 --stall-at 6 --stall-for 4
for _ in $(seq 50); do grep -q '^port ' "$WORK/echo_server.out" && break; sleep 0.1; done
PORT=$(awk '/^port /{print $2}' "$WORK/echo_server.out")
[ -n "$PORT" ] || fail "echo_server printed no port"
python3 -c '
import socket, sys, time
held, end = [], time.time() + 16
while time.time() < end:
    s = socket.socket(); s.setblocking(False)
    try: s.connect(("127.0.0.1", int(sys.argv[1])))
    except BlockingIOError: pass
    held.append(s)
    time.sleep(0.25)
time.sleep(30)
' "$PORT" >"$WORK/client.out" 2>&1 &
PIDS+=("$!")

# vitals threads during the stall (about 6.5 s to 8.5 s after the target started) notes it
(sleep 6.3; "$B/vitals" threads --json -i 2s "$TPID" >"$WORK/during.json" 2>"$WORK/during.err") &
THREADS_BG=$!
vitals soak -q -o "$WORK/run.db" --every 0.5s --for 15s "$TPID" 2>"$WORK/soak.err"
rc=$?
cat "$WORK/soak.err"
check "soak exits 0 (got $rc)" test "$rc" = 0
wait "$THREADS_BG"
cat "$WORK/during.err"
jq_py "$WORK/during.json" '(j["diagnosis"], j["listen"])'
check "threads during the stall: an accept stall on the echo port" \
	test "$(jq_py "$WORK/during.json" "any(f['pattern'] == 'accept stall' and '127.0.0.1:$PORT' in f['evidence'] for f in j['diagnosis'])")" = true
vitals threads --json -i 1s "$TPID" >"$WORK/after.json"
check "threads during the stall: never idle (issue 22, verdicts 3)" \
	test "$(jq_py "$WORK/during.json" "any(f['pattern'] == 'idle' for f in j['diagnosis'])")" = false
check "threads after it (the queue drained): no accept stall, the listener read" \
	test "$(jq_py "$WORK/after.json" "(any(f['pattern'] == 'accept stall' for f in j['diagnosis']), j['listen']['sockets'][0]['max_queue'])")" = "[false, 0]"
vitals analyze --json "$WORK/run.db" >"$WORK/a.json" 2>"$WORK/err"
check "analyze exits 0" test $? = 0
jq_py "$WORK/a.json" 'j["accept_queue"]'
tail -1 "$TRUTH"
stalls=$(jq_py "$WORK/a.json" 'len(j["accept_queue"]["stalls"])')
check "one stall found (got $stalls)" test "$stalls" = 1
began=$(truth_py "$TRUTH" 't["stall_began_wall"]')
ended=$(truth_py "$TRUTH" 't["stall_ended_wall"]')
python3 - "$WORK/a.json" "$began" "$ended" <<'PY' || fail "the stall's start or length is off by more than a tick"
import json, sys
j = json.load(open(sys.argv[1]))
began, ended = float(sys.argv[2]), float(sys.argv[3])
s = j["accept_queue"]["stalls"][0]
tick = j["accept_queue"]["resolution_s"]
print(f"stall from {s['wall0'] - began:+.2f} s of the truth, length {s['length_s']:.2f} s "
      f"against {ended - began:.2f} s, depth {s['depth']:.0f}, tick {tick}")
# the first sample after it began, the first after it ended: up to one tick
# late each (a loaded host may add a little)
assert -0.3 <= s["wall0"] - began <= tick + 0.5, "start"
assert abs(s["length_s"] - (ended - began)) <= tick + 0.5, "length"
assert s["depth"] >= 4 and not s["ongoing"]
print("ok - the stall's start and length are within a tick of the truth")
PY
vitals analyze "$WORK/run.db" >"$WORK/a.txt" 2>&1
sed -n '/^accept queue/,/^$/p' "$WORK/a.txt"
check "the text names the stall" grep -q "accept queue: 1 stall longer than 2 s" "$WORK/a.txt"
sed -n '/^what the threads did/,/^$/p' "$WORK/a.txt"
check "what the threads did over the run says the stall, not idle" \
	sh -c "sed -n '/^what the threads did/,/^\$/p' '$WORK/a.txt' | grep -q '1 accept-queue stall,' &&
	       ! sed -n '/^what the threads did/,/^\$/p' '$WORK/a.txt' | grep -q '^  idle'"
vitals analyze --json --stall 10s "$WORK/run.db" >"$WORK/a10.json"
check "none longer than 10 s" test "$(jq_py "$WORK/a10.json" 'len(j["accept_queue"]["stalls"])')" = 0
vitals analyze --stall 10s "$WORK/run.db" >"$WORK/a10.txt"
check "the text says there was none that long" grep -q "accept queue: no stall longer than 10 s" "$WORK/a10.txt"
expect_exit 64 "stall" analyze --stall 0 "$WORK/run.db"

# A process that listens on nothing: no queue recorded, nothing said.
start_target slow_leak --seconds 20
vitals soak -q -o "$WORK/quiet.db" --every 0.5s --for 3s "$TPID" 2>/dev/null
vitals analyze --json "$WORK/quiet.db" >"$WORK/q.json"
check "no listener: accept_queue is null" test "$(jq_py "$WORK/q.json" 'j["accept_queue"]')" = null
vitals analyze "$WORK/quiet.db" >"$WORK/q.txt"
check "no listener: the text has no accept-queue line" bash -c "! grep -q 'accept queue' '$WORK/q.txt'"

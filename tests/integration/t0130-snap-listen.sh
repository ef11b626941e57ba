#!/usr/bin/env bash
# snap's listening sockets (issue 16, part 1): each with its address, the
# connections waiting for accept() and the backlog limit; the network
# namespace's ListenOverflows/ListenDrops.  The listener is python, which
# nobody here wrote: it listens on 127.0.0.1 (backlog 4) and ::1 (backlog
# 16) and never accepts; loopback clients connect and wait.  Then the
# queue overflows, the same in another network namespace (no sock_diag
# there: no backlog limit), and as another user (no fds: said so).
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip "no python3"

listener() {   # listener FILE [NETNS-WRAPPER...]: prints "PORT4 PORT6"
	local out=$1
	shift
	"$@" python3 -c '
import socket, sys, time
a = socket.socket(); a.bind(("127.0.0.1", 0)); a.listen(4)
p6 = 0
try:
    b = socket.socket(socket.AF_INET6); b.bind(("::1", 0)); b.listen(16); p6 = b.getsockname()[1]
except OSError:
    pass
print(a.getsockname()[1], p6, flush=True)
time.sleep(60)
' >"$out" 2>&1 &
	LPID=$!
	PIDS+=("$LPID")
	for _ in $(seq 50); do [ -s "$out" ] && return 0; sleep 0.1; done
	fail "the python listener did not start: $(cat "$out")"
}

# clients PORT N [WRAPPER...]: N non-blocking connects held open for 60 s
clients() {
	local port=$1 n=$2
	shift 2
	"$@" python3 -c '
import socket, sys, time
held = []
for _ in range(int(sys.argv[2])):
    s = socket.socket(); s.setblocking(False)
    try: s.connect(("127.0.0.1", int(sys.argv[1])))
    except BlockingIOError: pass
    held.append(s)
print("connected", flush=True)
time.sleep(60)
' "$port" "$n" >"$WORK/clients.$port.$n" 2>&1 &
	PIDS+=("$!")
	for _ in $(seq 50); do [ -s "$WORK/clients.$port.$n" ] && break; sleep 0.1; done
	sleep 0.5   # the handshakes complete in the kernel, no accept() needed
}

listener "$WORK/l.out"
read -r P4 P6 <"$WORK/l.out"
clients "$P4" 3
# run_snap FILE [ARGS...]: vitals snap ARGS LPID into FILE, which must exit 0
run_snap() {
	local f=$1 rc
	shift
	"$B/vitals" snap "$@" "$LPID" >"$f" 2>"$WORK/err"
	rc=$?
	[ "$rc" = 0 ] || { cat "$WORK/err"; fail "vitals snap $* $LPID exited $rc"; }
}
run_snap "$WORK/snap.json" --json
jq_py "$WORK/snap.json" 'j["processes"][0]["listen"]'
sock() { jq_py "$WORK/snap.json" "[s for s in j['processes'][0]['listen']['sockets'] if s['address'] == '$1'][0]['$2']"; }
check "the IPv4 listener is there with 3 connections waiting" test "$(sock "127.0.0.1:$P4" queue)" = 3
check "its backlog limit is listen()'s 4 (from sock_diag)" test "$(sock "127.0.0.1:$P4" backlog)" = 4
if [ "$P6" != 0 ]; then
	check "the IPv6 listener is there, empty, backlog 16" \
		test "$(sock "[::1]:$P6" queue) $(sock "[::1]:$P6" backlog)" = "0 16"
fi
check "read through sock_diag" test "$(jq_py "$WORK/snap.json" 'j["processes"][0]["listen"]["via"]')" = sock_diag
check "the namespace's counters are numbers" \
	test "$(jq_py "$WORK/snap.json" 'isinstance(j["processes"][0]["listen"]["namespace_listen_overflows"], int)')" = true
run_snap "$WORK/snap.txt"
sed -n '/^LISTENING/,/^$/p' "$WORK/snap.txt"
check "the text table shows the waiting queue" grep -Eq "127\.0\.0\.1:$P4 +3 +4 +waiting for accept\(\)" "$WORK/snap.txt"
check "the reading says what a queue that stays means" \
	grep -q "3 connections wait for accept() on 127.0.0.1:$P4 (backlog 4): if it stays" "$WORK/snap.txt"

# Past the backlog: the queue holds backlog + 1, the rest overflow.
before=$(jq_py "$WORK/snap.json" 'j["processes"][0]["listen"]["namespace_listen_overflows"]')
clients "$P4" 6
run_snap "$WORK/snap2.json" --json
q=$(jq_py "$WORK/snap2.json" "[s for s in j['processes'][0]['listen']['sockets'] if s['address'] == '127.0.0.1:$P4'][0]['queue']")
after=$(jq_py "$WORK/snap2.json" 'j["processes"][0]["listen"]["namespace_listen_overflows"]')
check "a full queue holds backlog + 1 = 5 (got $q)" test "$q" = 5
check "ListenOverflows rose ($before -> $after)" test "$after" -gt "$before"
run_snap "$WORK/snap2.txt"
check "the text calls the queue full" grep -q "full: new connections are dropped" "$WORK/snap2.txt"

# Another network namespace: its own net/tcp, no backlog limit.
if [ "$(id -u)" = 0 ] && unshare -n true 2>/dev/null; then
	listener "$WORK/ns.out" unshare -n
	read -r NP4 _ <"$WORK/ns.out"
	run_snap "$WORK/ns.json" --json
	check "in another namespace it is read from net/tcp" \
		test "$(jq_py "$WORK/ns.json" 'j["processes"][0]["listen"]["via"]')" = net/tcp
	check "... the listener is there, its backlog unknown (null)" \
		test "$(jq_py "$WORK/ns.json" "[s['backlog'] for s in j['processes'][0]['listen']['sockets'] if s['address'] == '127.0.0.1:$NP4']")" = "[null]"
	run_snap "$WORK/ns.txt"
	check "the text says why the backlog is missing" grep -q "only sock_diag has them" "$WORK/ns.txt"
fi

# Another user's process: its fds cannot be listed; said so, partial (exit 1).
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
	setpriv --reuid nobody --regid nogroup --clear-groups "$B/vitals" snap --json "$LPID" \
		>"$WORK/nobody.json" 2>"$WORK/nobody.err"
	rc=$?
	check "as nobody: partial, exit 1 (got $rc)" test "$rc" = 1
	check "as nobody: listen is null and named unavailable with the reason" \
		test "$(jq_py "$WORK/nobody.json" '[u["section"] for u in j["processes"][0]["unavailable"] if u["section"] == "listen" and u["reason"]] == ["listen"] and j["processes"][0]["listen"] is None')" = true
fi

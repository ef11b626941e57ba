#!/usr/bin/env bash
# t0700 — vitals serve's HTTP side (src/serve/http.c, web_config.c, cli/cmd_serve.c),
# on a real target, with curl as the scraper:
#   - GET /metrics: 200, text/plain; version=0.0.4 (promtool check metrics passes
#     when promtool is installed); OpenMetrics when Accept asks, ending in "# EOF";
#     gzip when Accept-Encoding asks; HEAD; /healthz 200 "ok"; / links to metrics;
#   - POST -> 405 with Allow; an unknown path, "%00" and "../" tricks -> 404;
#     a 40 KB header -> 431 and the server goes on;
#   - a client that connects and says nothing (slowloris) blocks no scrape, and is
#     dropped after the 10 s connection timeout; 70 such from one address leave
#     room for a scraper at another (16 per address);
#   - a web config with basic auth: none, wrong, unknown user -> 401 with
#     WWW-Authenticate; right -> 200; a plain password, an unknown key, a key file
#     missing or unreadable -> 64 at start, naming the problem;
#   - TLS (openssl makes a self-signed certificate): curl --cacert works, plain
#     HTTP on that port does not; a key that does not match -> 64;
#   - a port already taken -> 2 naming it; a bad --listen, no target -> 64; no such
#     pid -> 3; a kernel thread -> 6;
#   - SIGTERM and SIGINT -> exit 0 within 2 s; the target runs on.
# sanitizer: the exporter: requests, auth, TLS and its connection table
. "$(dirname "$0")/lib.sh"
command -v curl >/dev/null || skip "curl is needed (scripts/deps.sh --test)"

# a bcrypt hash (cost 4) of the password "pw", made by libxcrypt's crypt_r
PW_HASH='$2b$04$qbntsOR7fkxLECMbwmKEBuUZIOh2GkFH8jnQT6y1k7BqvLEjs/i7.'

# stop_serve SIGNAL: it exits 0 within 2 s
stop_serve() {
	local t0=$SECONDS rc
	kill -"$1" "$SPID"
	for _ in $(seq 20); do kill -0 "$SPID" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$SPID" 2>/dev/null && fail "vitals serve still runs 2 s after SIG$1"
	wait "$SPID"
	rc=$?
	check "SIG$1 -> exit 0 (got $rc) in $((SECONDS - t0)) s" test "$rc" = 0
}

header() { tr -d '\r' <"$WORK/head" | sed -nE "s/^$1: //Ip" | head -1; }
# req_fresh ARGS...: req with a password the server has not matched yet; bcrypt gets a
# quarter of the server's time, so one asked for just after another run may get 401
# unchecked: a scraper tries again, and so does this, 5 times at most
req_fresh() {
	local code i
	for i in 1 2 3 4 5; do
		code=$(req "$@")
		[ "$code" != 401 ] && break
		sleep 0.2
	done
	echo "$code"
}

# start_fails STATUS PATTERN ARGS...: vitals serve ARGS exits STATUS at start, saying PATTERN
start_fails() {
	local want=$1 pattern=$2 got
	shift 2
	timeout -k 2 10 "$B/vitals" serve "$@" >"$WORK/out" 2>"$WORK/err"
	got=$?
	[ "$got" = "$want" ] || { cat "$WORK/err"; fail "vitals serve $* exited $got, expected $want"; }
	grep -qE "$pattern" "$WORK/err" || { cat "$WORK/err"; fail "vitals serve $*: stderr lacks /$pattern/"; }
	echo "ok - vitals serve $* -> $got: $(head -1 "$WORK/err")"
}

start_target arena_churn --seconds 600 --threads 2
P=$TPID

# ---- plain HTTP ----------------------------------------------------------------
# names that match nothing are targets too (up 0): they make the body big enough to gzip
names=()
for i in $(seq 12); do names+=(--name "vt-t0700-none-$i"); done
start_serve --pid "$P" --label churn "${names[@]}"
HOSTPORT=${URL#http://}
PORT=${HOSTPORT##*:}

# a client that connects and says nothing, and one that stops mid-header
exec 5<>"/dev/tcp/127.0.0.1/$PORT" || fail "connect"
exec 6<>"/dev/tcp/127.0.0.1/$PORT" || fail "connect"
printf 'GET /metrics HTTP/1.1\r\nHost: x\r\n' >&6
idle_since=$SECONDS

check "GET /metrics -> 200" test "$(req "$URL/metrics")" = 200
check "text/plain; version=0.0.4" grep -q '^text/plain; version=0.0.4' <<<"$(header Content-Type)"
check "the body holds samples of the target" grep -q 'target="churn"' "$WORK/body"
plain_len=$(wc -c <"$WORK/body")
if [ -x /usr/bin/promtool ] || command -v promtool >/dev/null; then
	check "promtool check metrics passes" promtool check metrics <"$WORK/body"
else
	echo "# promtool not installed: the exposition is not checked by it"
fi

check "OpenMetrics when Accept asks -> 200" \
	test "$(req -H 'Accept: application/openmetrics-text; version=1.0.0; charset=utf-8' "$URL/metrics")" = 200
check "application/openmetrics-text; version=1.0.0" \
	grep -q '^application/openmetrics-text; version=1.0.0' <<<"$(header Content-Type)"
check "OpenMetrics ends with # EOF" test "$(tail -n 1 "$WORK/body")" = "# EOF"
check "Prometheus's own Accept gets OpenMetrics" test "$(req -H 'Accept: application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1' "$URL/metrics")" = 200
check "  (its content type)" grep -q '^application/openmetrics-text' <<<"$(header Content-Type)"

check "gzip when asked -> 200" test "$(req -H 'Accept-Encoding: gzip' "$URL/metrics")" = 200
if [ "$plain_len" -gt 1024 ]; then
	check "Content-Encoding: gzip (body of $plain_len bytes)" test "$(header Content-Encoding)" = gzip
	check "it inflates to the exposition" sh -c "gzip -dc <'$WORK/body' | grep -q 'target=\"churn\"'"
fi
check "no gzip with q=0" test "$(req -H 'Accept-Encoding: gzip;q=0' "$URL/metrics")" = 200
check "  (plain)" test -z "$(header Content-Encoding)"

check "HEAD /metrics -> 200" test "$(req -I "$URL/metrics")" = 200
check "GET /healthz -> 200" test "$(req "$URL/healthz")" = 200
check "  says ok" grep -qx ok "$WORK/body"
check "GET / -> 200" test "$(req "$URL/")" = 200
check "  links to metrics" grep -q 'href="metrics"' "$WORK/body"

check "POST /metrics -> 405" test "$(req -X POST -d x=1 "$URL/metrics")" = 405
check "  Allow: GET, HEAD" test "$(header Allow)" = "GET, HEAD"
check "DELETE /healthz -> 405" test "$(req -X DELETE "$URL/healthz")" = 405
check "GET /nope -> 404" test "$(req "$URL/nope")" = 404
check "GET /metrics%00x -> 404 (the NUL does not cut the path)" test "$(req "$URL/metrics%00x")" = 404
check "GET /metrics/ -> 404" test "$(req "$URL/metrics/")" = 404
check "GET /x/%2e%2e/metrics -> 404" test "$(req --path-as-is "$URL/x/%2e%2e/metrics")" = 404
check "GET /metrics?x=%zz -> 200 (queries are ignored)" test "$(req "$URL/metrics?x=%zz")" = 200
big=$(head -c 40000 /dev/zero | tr '\0' a)
code=$(req -H "X-Big: $big" "$URL/metrics")
check "a 40 KB header -> 431 (got $code)" test "$code" = 431
check "  and the next scrape is served" test "$(req "$URL/metrics")" = 200

# the silent clients held no scrape up; the server drops them after its 10 s timeout
t0=$SECONDS
check "a scrape with two stalled clients open -> 200" test "$(req --max-time 2 "$URL/metrics")" = 200
check "  at once" test $((SECONDS - t0)) -le 1
timeout 20 cat <&5 >/dev/null
timeout 20 cat <&6 >"$WORK/stalled"
held=$((SECONDS - idle_since))
exec 5>&- 6>&-
check "the stalled connections were closed after ${held} s (timeout 10 s)" test "$held" -ge 8 -a "$held" -le 16
check "  the one mid-header got no response" test ! -s "$WORK/stalled"
stop_serve TERM

# ---- a heap probe that is not possible right now is tried again --------------------
# A stopped target cannot run a call (vitals heap exits 14, "not right now"): the
# scrape names its heap unread as busy, and once it runs again the next heap time
# (10 s, the least) reads it.  Before, the refusal was taken for a lasting one and
# the exporter never asked that process again (the soak did).
start_serve --pid "$P" --heap-ptrace --heap-every 10s
kill -STOP "$P"
sleep 0.2
req "$URL/metrics" >/dev/null
check "a stopped target's heap is unread as busy" \
	grep -qE '^vitals_target_unread_info\{[^}]*part="heap",reason="busy"\} 1$' "$WORK/body"
kill -CONT "$P"
for _ in $(seq 60); do
	req "$URL/metrics" >/dev/null
	grep -qE '^vitals_heap_live_bytes\{[^}]*\} [1-9]' "$WORK/body" && break
	sleep 0.25
done
check "continued, its heap is read at the next heap time" \
	grep -qE '^vitals_heap_live_bytes\{[^}]*\} [1-9]' "$WORK/body"
check "  and no longer named unread" \
	test -z "$(grep -E '^vitals_target_unread_info\{[^}]*part="heap"' "$WORK/body")"
stop_serve TERM

# ---- another user's process: what cannot be read is named, the rest is there -------
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
	AS_USER=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	start_serve --pid "$P" --heap-ptrace
	AS_USER=()
	check "as nobody: a root process's scrape -> 200" test "$(req "$URL/metrics")" = 200
	check "  it is up, with its memory" grep -qE '^process_resident_memory_bytes\{target="[^"]*"\} [1-9]' "$WORK/body"
	for part in fds maps; do
		check "  its $part are named unread for permission" \
			grep -qE "^vitals_target_unread_info\{[^}]*part=\"$part\",reason=\"permission\"\} 1$" "$WORK/body"
	done
	check "  no figure made up for them" \
		test -z "$(grep -E '^(process_open_fds|vitals_glibc_arenas|vitals_heap_live_bytes)\{' "$WORK/body")"
	stop_serve TERM
	start_serve --pid "$P"
	check "as root: nothing unread" test -z "$(req "$URL/metrics" >/dev/null; grep '^vitals_target_unread_info{' "$WORK/body")"
	stop_serve TERM
else
	echo "# not root or no setpriv: another user's case not run"
fi

# ---- one address cannot take every connection ----------------------------------------
# :0 listens on IPv6 and IPv4 at once, so ::1 and 127.0.0.1 are two clients
"$B/vitals" serve --listen :0 --pid "$P" 2>"$WORK/all.err" &
SPID=$!
PIDS+=("$SPID")
for _ in $(seq 100); do grep -q "listening on" "$WORK/all.err" && break; sleep 0.1; done
APORT=$(sed -nE 's#.*listening on http://\[::\]:([0-9]+)/metrics.*#\1#p' "$WORK/all.err")
if [ -n "$APORT" ] && python3 -c "import socket; socket.create_connection(('::1', $APORT)).close()" 2>/dev/null; then
	python3 - "$APORT" "$WORK/held" <<'PY' &
import socket, sys, time
held = [socket.create_connection(("127.0.0.1", int(sys.argv[1]))) for _ in range(70)]
open(sys.argv[2], "w").write("%d\n" % len(held))
time.sleep(8)
PY
	hog=$!
	for _ in $(seq 50); do [ -s "$WORK/held" ] && break; sleep 0.1; done
	check "  (70 connections held)" test "$(cat "$WORK/held" 2>/dev/null)" = 70
	sleep 0.5                   # the server has taken what it takes
	t0=$SECONDS
	check "with them, a scrape from ::1 -> 200" \
		test "$(req --max-time 3 "http://[::1]:$APORT/metrics")" = 200
	check "  at once" test $((SECONDS - t0)) -le 1
	kill "$hog" 2>/dev/null
	wait "$hog" 2>/dev/null
else
	echo "# no IPv6 loopback (or :0 did not listen there): the per-address limit is not tested"
fi
stop_serve TERM

# ---- basic auth ------------------------------------------------------------------
printf 'basic_auth_users:\n  prom: %s\n' "$PW_HASH" >"$WORK/auth.yml"
start_serve --pid "$P" --web-config "$WORK/auth.yml"
check "no credentials -> 401" test "$(req "$URL/metrics")" = 401
check "  WWW-Authenticate: Basic realm=\"vitals\"" test "$(header WWW-Authenticate)" = 'Basic realm="vitals"'
check "wrong password -> 401" test "$(req -u prom:wrong "$URL/metrics")" = 401
check "unknown user -> 401" test "$(req -u mallory:pw "$URL/metrics")" = 401
check "empty password -> 401" test "$(req -u prom: "$URL/metrics")" = 401
check "right password -> 200" test "$(req_fresh -u prom:pw "$URL/metrics")" = 200
check "  again (the remembered password) -> 200" test "$(req -u prom:pw "$URL/metrics")" = 200
check "  then a wrong one -> 401" test "$(req -u prom:pw2 "$URL/metrics")" = 401
check "/healthz needs it too -> 401" test "$(req "$URL/healthz")" = 401
stop_serve INT

printf 'basic_auth_users:\n  prom: pw\n' >"$WORK/plain.yml"
start_fails 64 "password of 'prom' is not a bcrypt hash" --pid "$P" --web-config "$WORK/plain.yml"
printf 'basic_auth_users:\n  prom: %s\nbasic_auth: {}\n' "$PW_HASH" >"$WORK/unknown.yml"
start_fails 64 "unknown key 'basic_auth'" --pid "$P" --web-config "$WORK/unknown.yml"
printf 'basic_auth_users: [prom\n' >"$WORK/broken.yml"
start_fails 64 "broken.yml' line" --pid "$P" --web-config "$WORK/broken.yml"
start_fails 64 "cannot read web config '$WORK/none.yml'" --pid "$P" --web-config "$WORK/none.yml"

# ---- TLS ---------------------------------------------------------------------------
if command -v openssl >/dev/null; then
	mkdir "$WORK/tls"
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$WORK/tls/s.key" -out "$WORK/tls/s.crt" \
		-subj /CN=localhost -addext 'subjectAltName=DNS:localhost,IP:127.0.0.1' -days 1 2>/dev/null ||
		fail "openssl req"
	# relative to the web config's directory, not to where vitals runs
	printf 'tls_server_config:\n  cert_file: s.crt\n  key_file: s.key\nbasic_auth_users:\n  prom: %s\n' \
		"$PW_HASH" >"$WORK/tls/web.yml"
	start_serve --pid "$P" --web-config "$WORK/tls/web.yml"
	check "it says https" grep -q '^https://' <<<"$URL"
	check "https with --cacert and the password -> 200" \
		test "$(req_fresh --cacert "$WORK/tls/s.crt" -u prom:pw "$URL/metrics")" = 200
	check "  the exposition" grep -q '# TYPE' "$WORK/body"
	check "https without the password -> 401" test "$(req --cacert "$WORK/tls/s.crt" "$URL/metrics")" = 401
	check "plain HTTP on the TLS port gets nothing" test "$(req "http://${URL#https://}/metrics")" = 000
	check "TLS 1.1 is refused" test "$(req --cacert "$WORK/tls/s.crt" --tlsv1.1 --tls-max 1.1 "$URL/metrics")" = 000
	stop_serve TERM

	openssl genrsa -out "$WORK/tls/other.key" 2048 2>/dev/null || fail "openssl genrsa"
	printf 'tls_server_config:\n  cert_file: s.crt\n  key_file: other.key\n' >"$WORK/tls/mismatch.yml"
	start_fails 64 "do not match" --pid "$P" --web-config "$WORK/tls/mismatch.yml"
	printf 'tls_server_config:\n  cert_file: s.crt\n  key_file: missing.key\n' >"$WORK/tls/missing.yml"
	start_fails 64 "cannot read key_file '$WORK/tls/missing.key'" --pid "$P" --web-config "$WORK/tls/missing.yml"
	if [ "$(id -u)" != 0 ]; then
		cp "$WORK/tls/s.key" "$WORK/tls/locked.key"
		chmod 000 "$WORK/tls/locked.key"
		printf 'tls_server_config:\n  cert_file: s.crt\n  key_file: locked.key\n' >"$WORK/tls/locked.yml"
		start_fails 64 "locked.key': Permission denied" --pid "$P" --web-config "$WORK/tls/locked.yml"
	fi
else
	echo "# openssl not installed: TLS is not tested"
fi

# ---- start-up errors ---------------------------------------------------------------
start_serve --pid "$P"
start_fails 2 "cannot listen on '${URL#http://}': Address already in use" --pid "$P" --listen "${URL#http://}"
stop_serve TERM
start_fails 64 "has no port" --pid "$P" --listen 127.0.0.1
start_fails 64 "not a number from 0 to 65535" --pid "$P" --listen 127.0.0.1:65536
start_fails 64 "in brackets" --pid "$P" --listen ::1:9464
start_fails 64 "no target" --listen 127.0.0.1:0
start_fails 64 "names the target given before it" --label x --pid "$P" --listen 127.0.0.1:0
start_fails 64 "needs? --heap-ptrace|give both" --pid "$P" --heap-every 5m --listen 127.0.0.1:0
start_fails 64 "both labelled .vt-dup." --name vt-dup --name vt-dup --listen 127.0.0.1:0
start_fails 64 "both labelled .churn." --pid "$P" --label churn --name churn --listen 127.0.0.1:0
start_fails 3 "" --pid 999999999 --listen 127.0.0.1:0
kt=$(kernel_thread)
[ -n "$kt" ] && start_fails 6 "" --pid "$kt" --listen 127.0.0.1:0

# libmicrohttpd and libcurl are opened when needed, not at exec: where they
# cannot be (an empty file stands in for each), serve and --prometheus say
# which package to install; every other command does not need them
mkdir -p "$WORK/nolibs"
: >"$WORK/nolibs/libmicrohttpd.so.12"
: >"$WORK/nolibs/libcurl.so.4"
LD_LIBRARY_PATH="$WORK/nolibs" start_fails 8 "needs libmicrohttpd.so.12.*" --pid "$P" --listen 127.0.0.1:0
grep -q "apt-get install libmicrohttpd12" "$WORK/err" || fail "no package named: $(cat "$WORK/err")"
LD_LIBRARY_PATH="$WORK/nolibs" "$B/vitals" analyze --prometheus http://127.0.0.1:9/ --query up \
	>"$WORK/out" 2>"$WORK/err"
check "analyze --prometheus without libcurl: exit 8, naming libcurl4" \
	test "$?" = 8 -a -n "$(grep 'apt-get install libcurl4' "$WORK/err")"
check "snap without them works" bash -c "LD_LIBRARY_PATH='$WORK/nolibs' '$B/vitals' snap '$P' >'$WORK/out'"
check "vitals needs no libmicrohttpd, libcurl, GnuTLS or OpenSSL at exec" \
	bash -c "! ldd '$B/vitals' | grep -E 'libmicrohttpd|libcurl|libgnutls|libssl'"

check "the target runs on" kill -0 "$P"

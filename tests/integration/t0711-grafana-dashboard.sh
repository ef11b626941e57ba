#!/usr/bin/env bash
# The Grafana dashboard and the Prometheus rules in contrib/ work on the first
# scrape (issue 29, part 2).
# 1. contrib/grafana/vitals-dashboard.json against the essentials of Grafana's
#    documented dashboard JSON model for schemaVersion 39 (Grafana 10.3-11.x):
#    keys and their types, unique panel ids, every panel's datasource the
#    ${DS_PROMETHEUS} variable, gridPos within 24 columns and no overlaps.
#    Grafana is not in Debian 12's archive: this is the documented schema, not
#    a running Grafana.
# 2. A real Prometheus (Debian's) scrapes a real `vitals serve` every second,
#    with contrib/vitals-rules.yml loaded (its 1 m group interval made 1 s so
#    that deriv() over a recorded series has two points within seconds);
#    serve watches arena_churn (heap, free walk, arenas, thread pools) and
#    echo_server (a listening socket).  Every expression of the dashboard
#    ($instance and $target: every one; $__rate_interval: 10s) and of the
#    rules (as Prometheus loaded them; an alert's condition split into its
#    operands) is asked through /api/v1/query and must return data; each names
#    only families of src/serve/exporter.c's table, and the labels its legend
#    prints.  Families this host cannot show (cgroup v1: no PSI, no
#    memory.high; no memory limit) are listed as such when vitals serve's own
#    /metrics lacks them, never passed silently.
. "$(dirname "$0")/lib.sh"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
DASH=${VT_DASHBOARD:-$SRC/contrib/grafana/vitals-dashboard.json}
RULES=${VT_RULES:-$SRC/contrib/vitals-rules.yml}
CHECK="python3 $SRC/tests/integration/dashboard_check.py"

# ---- 1. the dashboard's JSON against the documented schema ---------------------
$CHECK schema "$DASH" >"$WORK/schema.out" || { cat "$WORK/schema.out"; fail "the dashboard breaks Grafana's schema"; }
grep -c '^ok' "$WORK/schema.out" | sed 's/^/# schema checks passed: /'
tail -1 "$WORK/schema.out"
check "the provisioning file names the dashboards' folder" \
	grep -q 'path: /var/lib/grafana/dashboards/vitals' "$SRC/contrib/grafana/provisioning/dashboards/vitals.yml"
check "the datasource example is a Prometheus" \
	grep -q 'type: prometheus' "$SRC/contrib/grafana/provisioning/datasources/vitals-prometheus.yml"

command -v prometheus >/dev/null || skip "prometheus is not installed (scripts/deps.sh --test): the schema passed, the queries are not checked"
command -v promtool >/dev/null || skip "promtool is not installed (scripts/deps.sh --test)"
command -v curl >/dev/null || skip "curl is not installed (scripts/deps.sh --test)"
# One real Prometheus run is enough: the sanitizer build's serve is tested by t0700.
case "$B" in *-san*) skip "the sanitizer build's serve is covered by t0700" ;; esac

# contrib's own rules are checked and their tests run by t0710; a VT_RULES of
# one's own is checked here, before Prometheus loads it.
[ "$RULES" = "$SRC/contrib/vitals-rules.yml" ] ||
	check "promtool accepts the rules ($RULES)" promtool check rules "$RULES"

# ---- 2. targets that fill every family ---------------------------------------
start_target arena_churn --seconds 300 --threads 2 --live-mb 16
churn_pid=$TPID
start_target echo_server --seconds 300 --port 0
echo_pid=$TPID
for _ in $(seq 50); do grep -q '^port ' "$WORK/echo_server.out" && break; sleep 0.1; done
grep -q '^port ' "$WORK/echo_server.out" || fail "echo_server printed no port"

port=$(free_port)
"$B/vitals" serve --listen "127.0.0.1:$port" --pid "$churn_pid" --label churn --pid "$echo_pid" --label echo \
	--heap-ptrace --heap-every 10s --free-every 10s >"$WORK/serve.out" 2>"$WORK/serve.err" &
serve_pid=$!
PIDS+=("$serve_pid")
for _ in $(seq 50); do
	curl -sf "http://127.0.0.1:$port/metrics" >"$WORK/m0" 2>/dev/null && break
	kill -0 $serve_pid 2>/dev/null || fail "vitals serve exited: $(cat "$WORK/serve.err")"
	sleep 0.1
done
check "vitals serve answers /metrics" test -s "$WORK/m0"

# ---- a real Prometheus, the rules loaded ------------------------------------------
sed 's/^\(\s*interval:\s*\)1m\s*$/\11s/' "$RULES" >"$WORK/rules.yml"
start_prometheus "$port" "$WORK/rules.yml"
started=$(date +%s)

# rate() over 10 s needs two samples in it, the rules two evaluations, the heap
# probe and the free walk their first run: 15 s of scrapes at 1 s give all
# that; on a loaded host the probe and the walk may come later, so wait for
# them too (at most 60 s), then 3 s for Prometheus to scrape them
sleep 15
for _ in $(seq 60); do
	curl -sf "http://127.0.0.1:$port/metrics" >"$WORK/m1" 2>/dev/null || fail "vitals serve stopped answering"
	grep -q '^vitals_heap_live_bytes{target="churn"}' "$WORK/m1" &&
		grep -q '^vitals_heap_free_resident_bytes{target="churn"}' "$WORK/m1" && break
	sleep 1
done
sleep 3
up=$(curl -s "$PROM/api/v1/query?query=up" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["result"][0]["value"][1])')
check "Prometheus scrapes vitals serve (up 1)" test "$up" = 1
n_rules=$(grep -cE '^\s*- (record|alert):' "$RULES")
loaded=$(curl -s "$PROM/api/v1/rules" | python3 -c 'import json,sys; print(sum(len(g["rules"]) for g in json.load(sys.stdin)["data"]["groups"]))')
check "Prometheus loaded every rule of the file ($loaded of $n_rules)" test "$loaded" = "$n_rules"
curl -sf "http://127.0.0.1:$port/metrics" >"$WORK/m1" || fail "vitals serve stopped answering"
grep -v '^#' "$WORK/m1" | sed 's/[{ ].*//' | sort -u | wc -l | sed 's/^/# families in the exposition: /'

# ---- every expression returns data -------------------------------------------------
$CHECK query "$PROM" "$DASH" "$SRC/src/serve/exporter.c" "$WORK/m1" 10s >"$WORK/query.out" 2>&1
rc=$?
grep -v '^ok' "$WORK/query.out"
echo "# $(grep -c '^ok' "$WORK/query.out") query checks passed, after $(($(date +%s) - started)) s of scrapes"
check "every dashboard and rule expression returns data from a real Prometheus" test "$rc" = 0

#!/usr/bin/env bash
# vitals serve scraped by a real Prometheus (Debian's prometheus package), then
# vitals analyze --prometheus reading the series back through its HTTP API:
# three targets (a leak, a step, a flat heap) scraped every second for about
# 50 s; one verdict per series, each about its own target; compare
# --prometheus across two label sets; promtool accepts the exposition and the
# rules in contrib/; a restarted target is found again; an unreachable server,
# a bad query and a query that returns nothing are clear errors.
. "$(dirname "$0")/lib.sh"
SRC=$(cd "$(dirname "$0")/../.." && pwd)

command -v prometheus >/dev/null || skip "prometheus is not installed (scripts/deps.sh --test)"
command -v promtool >/dev/null || skip "promtool is not installed (scripts/deps.sh --test)"
command -v curl >/dev/null || skip "curl is not installed (scripts/deps.sh --test)"
# One real Prometheus run is enough: the sanitizer build's serve is tested by t0700.
case "$B" in *-san*) skip "the sanitizer build's serve is covered by t0700" ;; esac

# ---- the rules and scrape config in contrib/ ---------------------------------
check "promtool accepts contrib/vitals-rules.yml" promtool check rules "$SRC/contrib/vitals-rules.yml"
check "the rules' own tests pass (promtool test rules)" promtool test rules "$SRC/contrib/vitals-rules.test.yml"
check "promtool accepts contrib/prometheus.yml" promtool check config "$SRC/contrib/prometheus.yml"

# ---- three targets under names of their own (argv[0]) --------------------------
# (fleet-step starts once Prometheus is ready: its step must fall inside the
# window analysed, and a loaded host once took longer than the step's 22 s
# to get there)
ARGV0=fleet-leak start_target slow_leak --seconds 600 --rate-kb-per-s 1024
ARGV0=fleet-flat start_target census_work --seconds 600 --live 2000 --freed 2000 --big 0 --threads 1
flat_pid=$TPID

port=$(free_port)
"$B/vitals" serve --listen "127.0.0.1:$port" --name fleet-leak --name fleet-step --name fleet-flat \
	>"$WORK/serve.out" 2>"$WORK/serve.err" &
serve_pid=$!   # vitals itself, not a subshell running the shell function: cleanup kills it
PIDS+=("$serve_pid")
for i in $(seq 50); do
	curl -sf "http://127.0.0.1:$port/metrics" >"$WORK/m0" 2>/dev/null && break
	kill -0 $serve_pid 2>/dev/null || fail "vitals serve exited: $(cat "$WORK/serve.err")"
	sleep 0.1
done
check "vitals serve answers /metrics" test -s "$WORK/m0"
check "promtool check metrics accepts the exposition" promtool check metrics <"$WORK/m0"
for t in fleet-leak fleet-flat; do
	check "$t is up" grep -qE "^vitals_target_up\{[^}]*target=\"$t\"[^}]*\} 1$" "$WORK/m0"
done

# ---- a real Prometheus scraping it every second --------------------------------
start_prometheus "$port"
ARGV0=fleet-step start_target step_growth --seconds 600 --step-at 22 --step-mb 64
started=$(date +%s)
step_up=0
for i in $(seq 100); do
	curl -sf "http://127.0.0.1:$port/metrics" 2>/dev/null |
		grep -qE '^vitals_target_up\{[^}]*target="fleet-step"[^}]*\} 1$' && { step_up=1; break; }
	sleep 0.1
done
check "fleet-step, started later, is found and up" test "$step_up" = 1

# the step comes 22 s after its target started; 50 s of scrapes cover both sides
sleep 50
up=$(curl -s "$PROM/api/v1/query?query=up" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["result"][0]["value"][1])')
check "Prometheus scrapes vitals serve (up 1)" test "$up" = 1

# ---- one verdict per series ------------------------------------------------------
Q='vitals_process_memory_bytes{memtype="committed"}'
vitals analyze --prometheus "$PROM" --query "$Q" --range 48s --step 1s --json >"$WORK/verdicts.json" \
	2>"$WORK/verdicts.err" || fail "analyze --prometheus: $(cat "$WORK/verdicts.err")"
vitals analyze --prometheus "$PROM" --query "$Q" --range 48s --step 1s >"$WORK/verdicts.txt" \
	2>&1 || fail "analyze --prometheus (text): $(cat "$WORK/verdicts.txt")"
cat "$WORK/verdicts.txt" | sed 's/^/# /' | head -60
verdict_of() {  # the verdict kind of the series whose target label is $1
	python3 - "$WORK/verdicts.json" "$1" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
for doc in j:   # one vitals.analyze document per series; its recording.path is the series with its labels
    if 'target="%s"' % sys.argv[2] in doc["recording"]["path"]:
        print(doc["verdict"]["kind"])
        break
else:
    print("missing")
PY
}
check "three series, one verdict each" test "$(jq_py "$WORK/verdicts.json" 'len(j)')" = 3
check "fleet-leak is a leak" test "$(verdict_of fleet-leak)" = leak
check "fleet-step is a step" test "$(verdict_of fleet-step)" = step
check "fleet-flat is a plateau" test "$(verdict_of fleet-flat)" = plateau
leak_rate=$(python3 - "$WORK/verdicts.json" <<'PY'
import json, sys
for doc in json.load(open(sys.argv[1])):
    if 'target="fleet-leak"' in doc["recording"]["path"]:
        print(doc["verdict"]["slope"]["bytes_per_s"])
PY
)
echo "# fleet-leak: $leak_rate B/s through Prometheus (the target leaks 1048576 B/s)"
check "the leak's rate through Prometheus is within 20% of the target's" \
	python3 -c "import sys; sys.exit(abs($leak_rate - 1048576) > 0.2 * 1048576)"
check "the text names each series and its verdict" grep -q 'fleet-leak' "$WORK/verdicts.txt"

# ---- compare across two label sets -----------------------------------------------
Qf='vitals_process_memory_bytes{memtype="committed",target="fleet-flat"}'
Ql='vitals_process_memory_bytes{memtype="committed",target="fleet-leak"}'
vitals compare --prometheus "$PROM" --query "$Qf" --query "$Ql" --range 48s --step 1s --json \
	>"$WORK/cmp.json" 2>"$WORK/cmp.err" || fail "compare --prometheus: $(cat "$WORK/cmp.err")"
check "compare --prometheus gives two arms" test "$(jq_py "$WORK/cmp.json" 'len(j["arms"])')" = 2

# ---- a restarted target is found again ---------------------------------------------
kill $flat_pid
wait $flat_pid 2>/dev/null
sleep 1
curl -sf "http://127.0.0.1:$port/metrics" >"$WORK/m1"
check "a target whose process exited is down" \
	grep -qE '^vitals_target_up\{[^}]*target="fleet-flat"[^}]*\} 0$' "$WORK/m1"
ARGV0=fleet-flat start_target census_work --seconds 600 --live 2000 --freed 2000 --big 0 --threads 1
for i in $(seq 30); do
	curl -sf "http://127.0.0.1:$port/metrics" >"$WORK/m2"
	grep -qE '^vitals_target_up\{[^}]*target="fleet-flat"[^}]*\} 1$' "$WORK/m2" && break
	sleep 0.5
done
check "the restarted target is up again" grep -qE '^vitals_target_up\{[^}]*target="fleet-flat"[^}]*\} 1$' "$WORK/m2"
check "its restart is counted" grep -qE '^vitals_target_restarts_total\{[^}]*target="fleet-flat"[^}]*\} 1$' "$WORK/m2"

# ---- bad input ------------------------------------------------------------------------
closed=$(free_port)
expect_exit 12 "127.0.0.1:$closed|connect|refused" analyze --prometheus "http://127.0.0.1:$closed" --query up --range 1m
expect_exit 64 "parse error|bad_data" analyze --prometheus "$PROM" --query 'foo{' --range 1m
expect_exit 2 "no series" analyze --prometheus "$PROM" --query 'no_such_metric_here' --range 1m
expect_exit 64 "range" analyze --prometheus "$PROM" --query up --range banana
echo "# scraped for $(($(date +%s) - started)) s"

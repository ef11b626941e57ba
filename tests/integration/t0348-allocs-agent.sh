#!/usr/bin/env bash
# vitals allocs on the agent's path: targets/alloc_sites.c started with
# libvitals-agent-allocs.so preloaded samples its own allocations; vitals
# arms the sampling, takes the samples back and gets the same sites as the
# uprobes do (churn_round 90% of the calls, 36% of the bytes, freed at once;
# keep_block kept), as an unprivileged user (no probe, no root), and says
# which path it took.  With the plain agent, or none, --path auto takes the
# uprobes and says why; --path agent is refused with the library to preload.
# sanitizer: the agent reply's parser, the samples' naming and weighing
. "$(dirname "$0")/lib.sh"

AGENT_ALLOCS=$B/agent/libvitals-agent-allocs.so
[ -e "$AGENT_ALLOCS" ] || AGENT_ALLOCS=$T/agent/libvitals-agent-allocs.so
[ -e "$AGENT_ALLOCS" ] || fail "no libvitals-agent-allocs.so in $B/agent or $T/agent"
AGENT_PLAIN=$(dirname "$AGENT_ALLOCS")/libvitals-agent.so

# the target runs as nobody, and so does vitals: the agent's path needs no privilege
as_nobody() {
	if [ "$(id -u)" = 0 ]; then setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"; else "$@"; fi
}
chmod 0755 "$WORK"
mkdir "$WORK/own"
[ "$(id -u)" = 0 ] && chown nobody:nogroup "$WORK/own"
(cd "$WORK/own" && as_nobody env LD_PRELOAD="$AGENT_ALLOCS" "$T/targets/alloc_sites" --seconds 60 \
	--truth "$WORK/own/truth" >"$WORK/own/t.out" 2>&1) &
PIDS+=($!)
for i in $(seq 50); do
	APID=$(pgrep -n -f "^$T/targets/alloc_sites --seconds 60 --truth $WORK/own/truth") && break
	sleep 0.1
done
[ -n "$APID" ] || fail "the target did not start"
sleep 0.5

as_nobody "$B/vitals" allocs --for 3s --every 4096 --json "$APID" >"$WORK/a.json" 2>"$WORK/a.err" ||
	fail "vitals allocs on the agent's path: $(tail -3 "$WORK/a.err")"
check "the agent's path was taken, and said why" \
	test "$(jq_py "$WORK/a.json" "j['path'] == 'agent' and 'in-process' in j['path_why'] and j['agent']['samples'] > 500")" = true
site() {
	jq_py "$WORK/a.json" "(lambda s: $2)(next(s for s in j['sites'] if s['site'] == '$1'))"
}
jq_py "$WORK/a.json" "[(s['site'], s['calls'], s['bytes']) for s in j['sites'][:4]]"
calls=$(jq_py "$WORK/a.json" "sum(s['calls'] for s in j['sites'])")
bytes=$(jq_py "$WORK/a.json" "sum(s['bytes'] for s in j['sites'])")
cs=$(site churn_round "round(100.0 * s['calls'] / $calls, 1)")
bs=$(site churn_round "round(100.0 * s['bytes'] / $bytes, 1)")
echo "churn_round: $cs% of the calls (truth 90%), $bs% of the bytes (truth 36%)"
check "churn_round's share of calls within 3 pp of 90%" python3 -c "import sys; sys.exit(abs($cs - 90) > 3)"
check "churn_round's share of bytes within 3 pp of 36%" python3 -c "import sys; sys.exit(abs($bs - 36) > 3)"
check "churn_round: freed at once (>= 95% within 1 ms)" \
	test "$(site churn_round "sum(s['freed_age_bins'][:3]) >= 0.95 * s['linked']")" = true
check "keep_block: kept (<= 5% freed)" test "$(site keep_block "s['freed'] <= 0.05 * s['linked']")" = true
check "no probe was placed: malloc's callers ran untrapped" \
	test "$(jq_py "$WORK/a.json" "j['probes_how'].startswith('the agent')")" = true
as_nobody "$B/vitals" allocs --for 1s --every 4096 --html "$WORK/own/a.html" "$APID" >"$WORK/a.txt" 2>&1 ||
	fail "text: $(tail -2 "$WORK/a.txt")"
check "text: the path said" grep -q "path: the agent" "$WORK/a.txt"
check "html: the path said, not probes" grep -q "the agent&#39;s in-process sampling" "$WORK/own/a.html"

# the plain agent cannot sample: auto takes the uprobes (root) and says why; agent is refused
if [ "$(id -u)" = 0 ]; then
	start_target alloc_sites --seconds 30
	NPID=$TPID
	"$B/vitals" allocs --for 1s --budget 50 --json "$NPID" >"$WORK/n.json" 2>"$WORK/n.err" || fail "auto without agent"
	check "no agent: auto takes the uprobes, and says why" \
		test "$(jq_py "$WORK/n.json" "j['path'] == 'uprobes' and 'no vitals agent' in j['path_why']")" = true
	expect_exit 2 "runs no vitals agent" allocs --path agent --for 1s "$NPID"
	(LD_PRELOAD="$AGENT_PLAIN" exec "$T/targets/alloc_sites" --seconds 30 >/dev/null 2>&1) &
	PPID_=$!
	PIDS+=("$PPID_")
	sleep 1
	expect_exit 8 "libvitals-agent-allocs.so" allocs --path agent --for 1s "$PPID_"
	"$B/vitals" allocs --for 1s --budget 50 --json "$PPID_" >"$WORK/p.json" 2>/dev/null || fail "auto, plain agent"
	check "the plain agent: auto takes the uprobes, and says its agent cannot sample" \
		test "$(jq_py "$WORK/p.json" "j['path'] == 'uprobes' and 'cannot sample' in j['path_why']")" = true
fi
expect_exit 64 "not with --path uprobes" allocs --path uprobes --every 4096 "$APID"
expect_exit 64 "auto, uprobes or agent" allocs --path ebpf "$APID"

# killed while the agent samples: the agent disarms itself at its deadline
as_nobody "$B/vitals" allocs --for 1s --every 4096 "$APID" >/dev/null 2>&1 &
VP=$!
sleep 0.5
kill -KILL "$VP"
wait "$VP" 2>/dev/null
check "... and the target runs on after vitals is killed mid-run" kill -0 "$APID"
as_nobody "$B/vitals" allocs --for 1s --every 4096 --json "$APID" >"$WORK/b.json" 2>"$WORK/b.err" ||
	fail "a run after the killed one: $(tail -2 "$WORK/b.err")"
check "... and a later run samples afresh" test "$(jq_py "$WORK/b.json" "j['agent']['samples'] > 0")" = true

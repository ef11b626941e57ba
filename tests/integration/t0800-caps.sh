#!/usr/bin/env bash
# vitals caps (issue 16): what works here, and what to grant.
#   - no PID: the host's settings, as /proc says them; exit 0;
#   - as root on inject_victim (which notices any harm): every feature works,
#     the agent honestly not_applicable; exit 0; the target is never stopped nor
#     traced, and its own checks (signals, sleeps, reads) all pass at the end;
#   - a target with the agent preloaded: heap.agent works;
#   - as nobody on a root target: exit 1; heap.ptrace, census, wchan/syscall
#     refused naming the uid and CAP_SYS_PTRACE, with a real grant;
#   - as nobody on its own target: ptrace works (seized, released, no stop);
#     perf events under perf_event_paranoid 2 and 1 (set, restored in a trap);
#     pagemap's frame numbers zeroed; a non-dumpable one refused for that;
#   - kernel.yama.ptrace_scope 1 and 2, where Yama exists (skipped if not);
#   - a stopped target stays stopped; vitals SIGKILLed mid-check harms nothing;
#   - bad input: no such pid 3, kernel thread 6, zombie 7, a thread id 64.
. "$(dirname "$0")/lib.sh"

NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
AGENT=$B/agent/libvitals-agent.so
[ -f "$AGENT" ] || AGENT=$T/agent/libvitals-agent.so

# status FILE NAME, field FILE NAME KEY: a feature of a caps JSON (python3 is slow to
# start: each file is read once, into FILE.tsv)
tsv() {
	[ -s "$1.tsv" ] && ! [ "$1" -nt "$1.tsv" ] && return
	python3 - "$1" >"$1.tsv" <<'PY'
import json, sys
for f in json.load(open(sys.argv[1]))["features"]:
    print("\t".join([f["name"]] + [(f[k] or "").replace("\t", " ") for k in ("status", "reason", "grant", "tried")]))
PY
}
field() {
	local col
	case $3 in status) col=2;; reason) col=3;; grant) col=4;; tried) col=5;; esac
	tsv "$1"
	awk -F'\t' -v n="$2" -v c="$col" '$1 == n { print $c }' "$1.tsv"
}
status() { field "$1" "$2" status; }

# unharmed PID: running or sleeping (never t/T), traced by nobody, every thread
unharmed() {
	local pid=$1 t st
	for t in /proc/"$pid"/task/*; do
		st=$(awk '/^State:/ {print $2}' "$t/status" 2>/dev/null) || continue
		case $st in t|T) fail "thread ${t##*/} of $pid is stopped ($st) after vitals caps";; esac
		grep -q '^TracerPid:[[:space:]]*0$' "$t/status" || fail "thread ${t##*/} of $pid is still traced"
	done
	echo "ok - $pid unharmed: not stopped, not traced"
}

# --- no PID: the host ------------------------------------------------------------------
vitals caps >"$WORK/host.txt"
check "vitals caps exits 0" test $? = 0
check "the text names ptrace_scope and perf_event_paranoid" \
	grep -q 'kernel.perf_event_paranoid' "$WORK/host.txt"
vitals caps --json >"$WORK/host.json" || fail "vitals caps --json"
# the host's figures against /proc, in one python3 (slow to start)
python3 - "$WORK/host.json" <<'PY' || fail "vitals caps --json: the host (above)"
import json, os, re, sys
j = json.load(open(sys.argv[1]))
h = j["host"]
status = open("/proc/self/status").read()
capeff = re.search(r"^CapEff:\s*(\w+)", status, re.M).group(1)
seccomp = int(re.search(r"^Seccomp:\s*(\d+)", status, re.M).group(1))
mi = open("/proc/self/mountinfo").read()
v1, v2 = " - cgroup " in mi, " - cgroup2 " in mi
scope = "/proc/sys/kernel/yama/ptrace_scope"
checks = [
    ("schema vitals.caps 1", [j["schema"], j["schema_version"]] == ["vitals.caps", 1]),
    ("no process, no features, not partial", [j["process"], j["features"], j["partial"]] == [None, [], False]),
    ("perf_event_paranoid as /proc says", h["perf_event_paranoid"] == int(open("/proc/sys/kernel/perf_event_paranoid").read())),
    ("ptrace_scope as /proc says (null without Yama)",
     h["ptrace_scope"] == (int(open(scope).read()) if os.path.exists(scope) else None)),
    ("vitals' seccomp as /proc/self/status says", h["vitals"]["seccomp"] == seccomp),
    ("CapEff as /proc/self/status says", h["vitals"]["cap_eff"] == capeff),
    ("... decoded: cap_sys_ptrace iff bit 19", ("cap_sys_ptrace" in h["vitals"]["capabilities"]) == bool(int(capeff, 16) >> 19 & 1)),
    ("... and as many names as bits", len(h["vitals"]["capabilities"]) == bin(int(capeff, 16)).count("1")),
    ("cgroups as mountinfo says", h["cgroups"] == ("hybrid" if v1 and v2 else "v2" if v2 else "v1" if v1 else "none")),
    ("psi as /proc/pressure says", h["psi"] == os.path.exists("/proc/pressure/cpu")),
    ("every setting has a meaning", all(s["meaning"] for s in h["settings"])),
]
bad = 0
for desc, ok in checks:
    print(("ok - " if ok else "not ok - ") + desc)
    bad += not ok
sys.exit(1 if bad else 0)
PY

# --- as root: every feature works ---------------------------------------------------------
[ "$(id -u)" = 0 ] || skip "the rest needs root (targets of another user, sysctls)"
start_target inject_victim --seconds 120 --churn-threads 1 --churn-duty 50
sleep 1
vitals caps "$TPID" >"$WORK/root.txt"
rc=$?
cat "$WORK/root.txt"
check "as root: exit 0 (got $rc)" test "$rc" = 0
check "the text says the seize stopped nothing" grep -q 'seized and released without a stop' "$WORK/root.txt"
unharmed "$TPID"
vitals caps --json "$TPID" >"$WORK/root.json" || fail "vitals caps --json as root"
tsv "$WORK/root.json"
check "as root: every feature works but the agent (not preloaded)" \
	test "$(awk -F'\t' '$2 != "works" { print $1 }' "$WORK/root.json.tsv")" = heap.agent
check "... heap.agent not_applicable" test "$(status "$WORK/root.json" heap.agent)" = not_applicable
check "... granted by LD_PRELOAD" grep -q "LD_PRELOAD=.*libvitals-agent.so" <<<"$(field "$WORK/root.json" heap.agent grant)"
check "... the process: uid 0, glibc, not traced, not partial" test "$(jq_py "$WORK/root.json" \
	'[j["process"]["uid"], j["process"]["allocator"], j["process"]["tracer_pid"], j["partial"]]')" = '[0, "glibc", 0, false]'
for i in 1 2 3 4 5; do vitals caps "$TPID" >/dev/null || fail "caps run $i"; done
unharmed "$TPID"

# --- vitals SIGKILLed in the middle of its checks: the target runs on ------------------------
for d in 0 0.001 0.002 0.004 0.006 0.008 0.01 0.015 0.02 0.03; do
	"$B/vitals" caps "$TPID" >/dev/null 2>&1 &
	vp=$!
	sleep "$d"
	kill -KILL "$vp" 2>/dev/null
	wait "$vp" 2>/dev/null
done
sleep 0.1
unharmed "$TPID"
kill -TERM "$TPID"
wait "$TPID"
echo "# inject_victim's last truth: $(tail -n 1 "$TRUTH")"
check "inject_victim's own checks all passed (no lost signal, no EINTR, no short sleep)" \
	test "$(truth_py "$TRUTH" 't["ok"]')" = true

# --- the agent ------------------------------------------------------------------------------
if [ -f "$AGENT" ]; then
	LD_PRELOAD=$AGENT start_target arena_churn --seconds 60 --threads 2
	sleep 2
	vitals caps --json "$TPID" >"$WORK/agent.json"
	check "with the agent preloaded: heap.agent works" test "$(status "$WORK/agent.json" heap.agent)" = works
	check "... and the process shows it mapped" test "$(jq_py "$WORK/agent.json" 'j["process"]["agent_mapped"]')" = true
	unharmed "$TPID"
else
	echo "# agent not built: heap.agent works not tested"
fi

# --- as nobody, a root target: refused, with the reason and a real grant -----------------------
start_target inject_victim --seconds 120 --churn-threads 1 --churn-duty 50
sleep 0.5
"${NOBODY[@]}" "$B/vitals" caps --json "$TPID" >"$WORK/nobody.json" 2>"$WORK/nobody.err"
rc=$?
check "nobody on root's process: exit 1 (partial; got $rc)" test "$rc" = 1
"${NOBODY[@]}" "$B/vitals" caps "$TPID" >"$WORK/nobody.txt"
sed -n '/^process/,$p' "$WORK/nobody.txt"
check "... snap.status still works" test "$(status "$WORK/nobody.json" snap.status)" = works
for f in heap.ptrace census threads.wchan_syscall snap.smaps profile.ptrace profile.perf; do
	check "... $f refused" test "$(status "$WORK/nobody.json" $f)" = refused
	reason=$(field "$WORK/nobody.json" $f reason)
	grant=$(field "$WORK/nobody.json" $f grant)
	check "... $f: the reason names the uids and CAP_SYS_PTRACE ($reason)" \
		grep -qE "runs as uid 0 and vitals as uid 65534.*CAP_SYS_PTRACE" <<<"$reason"
	check "... $f: the grant is a real remedy" grep -qE "setcap cap_(perfmon,)?cap_sys_ptrace\+ep|setcap cap_sys_ptrace\+ep" <<<"$grant"
	check "... $f: and says to run as the target's user" grep -q "target's user (uid 0" <<<"$grant"
done
check "census: what was refused is process_vm_readv" \
	grep -q '^process_vm_readv: ' <<<"$(field "$WORK/nobody.json" census reason)"
check "threads: what was refused is the syscall file" \
	grep -q '^syscall: ' <<<"$(field "$WORK/nobody.json" threads.wchan_syscall reason)"
check "... partial true" test "$(jq_py "$WORK/nobody.json" 'j["partial"]')" = true
unharmed "$TPID"

# --- as nobody, its own target: works; perf_event_paranoid 2 and 1 ----------------------------
NB=$(mktemp -d /tmp/vitals-caps-nobody.XXXXXX)   # $WORK is root's alone
chmod 755 "$NB" && chown 65534:65534 "$NB"
trap 'rm -rf "$NB"; cleanup' EXIT
"${NOBODY[@]}" "$T/targets/inject_victim" --truth "$NB/truth" --seconds 120 --churn-threads 1 --churn-duty 50 >"$NB/out" 2>&1 &
NPID=$!
PIDS+=("$NPID")
for i in $(seq 50); do grep -q '^pid ' "$NB/out" 2>/dev/null && break; sleep 0.1; done
sleep 0.5
"${NOBODY[@]}" "$B/vitals" caps --json "$NPID" >"$WORK/own.json"
rc=$?
tsv "$WORK/own.json" && cut -f1-3 "$WORK/own.json.tsv"
check "nobody, its own process: heap.ptrace works" test "$(status "$WORK/own.json" heap.ptrace)" = works
check "... seized and released without a stop" grep -q 'seized and released without a stop' <<<"$(field "$WORK/own.json" heap.ptrace tried)"
check "... census works" test "$(status "$WORK/own.json" census)" = works
check "... pagemap frame numbers read as 0 without CAP_SYS_ADMIN" \
	grep -q 'frame numbers read as 0 without CAP_SYS_ADMIN' <<<"$(field "$WORK/own.json" census reason)"
check "... threads.wchan_syscall works" test "$(status "$WORK/own.json" threads.wchan_syscall)" = works
unharmed "$NPID"

para0=$(cat /proc/sys/kernel/perf_event_paranoid)
restore_para() { echo "$para0" >/proc/sys/kernel/perf_event_paranoid; }
if echo "$para0" >/proc/sys/kernel/perf_event_paranoid 2>/dev/null; then
	trap 'restore_para; rm -rf "$NB"; cleanup' EXIT
	echo 2 >/proc/sys/kernel/perf_event_paranoid
	"${NOBODY[@]}" "$B/vitals" caps --json "$NPID" >"$WORK/p2.json"
	echo 1 >/proc/sys/kernel/perf_event_paranoid
	"${NOBODY[@]}" "$B/vitals" caps --json "$NPID" >"$WORK/p1.json"
	restore_para
	trap 'rm -rf "$NB"; cleanup' EXIT
	check "paranoid 2: profile.perf works, user space only" test "$(status "$WORK/p2.json" profile.perf)" = works
	check "... and says so, with the sysctl that adds kernel frames" test "$(jq_py "$WORK/p2.json" \
		'[("kernel.perf_event_paranoid is 2" in f["reason"], "sudo sysctl kernel.perf_event_paranoid=1" in f["grant"]) for f in j["features"] if f["name"] == "profile.perf"][0]')" = '[true, true]'
	check "paranoid 1: profile.perf works, kernel frames too (no note)" test "$(jq_py "$WORK/p1.json" \
		'[(f["status"], f["reason"]) for f in j["features"] if f["name"] == "profile.perf"][0]')" = '["works", null]'
else
	echo "# /proc/sys/kernel/perf_event_paranoid is read-only here: paranoid variations skipped"
fi

# --- Yama ------------------------------------------------------------------------------------
if [ ! -e /proc/sys/kernel/yama/ptrace_scope ]; then
	echo "# no Yama in this kernel (/proc/sys/kernel/yama/ptrace_scope absent): ptrace_scope variations skipped"
elif ! scope0=$(cat /proc/sys/kernel/yama/ptrace_scope) || ! echo "$scope0" >/proc/sys/kernel/yama/ptrace_scope 2>/dev/null; then
	echo "# /proc/sys/kernel/yama/ptrace_scope is read-only here: ptrace_scope variations skipped"
elif [ "$scope0" = 3 ]; then
	echo "# ptrace_scope is 3 (cannot be lowered until reboot): variations skipped"
else
	trap 'echo "$scope0" >/proc/sys/kernel/yama/ptrace_scope; rm -rf "$NB"; cleanup' EXIT
	echo 1 >/proc/sys/kernel/yama/ptrace_scope
	"${NOBODY[@]}" "$B/vitals" caps --json "$NPID" >"$WORK/y1.json"
	echo 2 >/proc/sys/kernel/yama/ptrace_scope
	"${NOBODY[@]}" "$B/vitals" caps --json "$NPID" >"$WORK/y2.json"
	vitals caps --json "$NPID" >"$WORK/y2root.json"
	echo "$scope0" >/proc/sys/kernel/yama/ptrace_scope
	trap 'rm -rf "$NB"; cleanup' EXIT
	for s in 1 2; do
		check "ptrace_scope $s: heap.ptrace refused" test "$(status "$WORK/y$s.json" heap.ptrace)" = refused
		check "... naming kernel.yama.ptrace_scope $s" \
			grep -q "kernel.yama.ptrace_scope is $s" <<<"$(field "$WORK/y$s.json" heap.ptrace reason)"
		check "... snap.smaps still works (Yama judges attaching only)" test "$(status "$WORK/y$s.json" snap.smaps)" = works
	done
	check "scope 1: the grant lowers it to 0" grep -q 'sudo sysctl kernel.yama.ptrace_scope=0' \
		<<<"$(field "$WORK/y1.json" heap.ptrace grant)"
	check "scope 2: root (CAP_SYS_PTRACE) still attaches" test "$(status "$WORK/y2root.json" heap.ptrace)" = works
fi
unharmed "$NPID"
kill -TERM "$NPID"
wait "$NPID"
echo "# nobody's inject_victim's last truth: $(tail -n 1 "$NB/truth")"
check "nobody's inject_victim: its own checks all passed" \
	test "$(python3 -c "import json; print(json.loads([l for l in open('$NB/truth') if l.startswith('{')][-1])['ok'])")" = True

# --- a non-dumpable process of the same user ---------------------------------------------------
cat >"$WORK/nodump.c" <<'EOF'
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>
int main(void)
{
	prctl(PR_SET_DUMPABLE, 0);
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	for (;;)
		pause();
}
EOF
if cc -O1 -o "$NB/nodump" "$WORK/nodump.c"; then
	"${NOBODY[@]}" "$NB/nodump" >"$NB/nodump.out" &
	DPID=$!
	PIDS+=("$DPID")
	sleep 0.3
	"${NOBODY[@]}" "$B/vitals" caps --json "$DPID" >"$WORK/nodump.json"
	check "not dumpable: heap.ptrace refused for that" \
		grep -q 'not dumpable' <<<"$(field "$WORK/nodump.json" heap.ptrace reason)"
	check "... and the process says so" test "$(jq_py "$WORK/nodump.json" 'j["process"]["dumpable"]')" = false
	unharmed "$DPID"
fi

# --- a stopped process stays stopped --------------------------------------------------------------
start_target inject_victim --seconds 60 --churn-threads 1 --churn-duty 50
sleep 0.5
kill -STOP "$TPID"
sleep 0.2
vitals caps --json "$TPID" >"$WORK/stopped.json"
check "stopped: heap.ptrace not_applicable, granted by kill -CONT" test "$(jq_py "$WORK/stopped.json" \
	'[(f["status"], f["grant"]) for f in j["features"] if f["name"] == "heap.ptrace"][0]')" = \
	"[\"not_applicable\", \"kill -CONT $TPID\"]"
check "... still stopped after vitals caps" grep -q '^State:[[:space:]]*T' "/proc/$TPID/status"
kill -CONT "$TPID"

# --- bad input --------------------------------------------------------------------------------------
expect_exit 3 "no such process|no process" caps 999999999
kt=$(kernel_thread)
[ -n "$kt" ] && expect_exit 6 "kernel thread" caps "$kt"
sh -c 'sleep 0.1 & exec sleep 30' &
ZP=$!
PIDS+=("$ZP")
sleep 0.5
zombie=$(ps -o pid= --ppid "$ZP" | tr -d ' ')
check "a zombie to try" test -n "$zombie"
expect_exit 7 "zombie" caps "$zombie"
tid=$(ls "/proc/$TPID/task" | grep -v "^$TPID\$" | head -1)
expect_exit 64 "thread" caps "$tid"
expect_exit 64 "process id" caps abc
expect_exit 64 "one PID" caps 1 2
exit 0

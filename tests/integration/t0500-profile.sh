#!/usr/bin/env bash
# t0500 — vitals profile on targets/profile_work, whose threads each do one
# known kind of work in a named function and report their own CPU (the
# truth): built without frame pointers and with them, every work function's
# inclusive share and every bucket's share lie within 3 points of the truth,
# and within 3 points of perf record --call-graph dwarf on the same run when
# perf is here; --wall finds the idle threads' waits; a stripped copy gets
# addresses, never wrong names; the files are written whole; bad input gets
# its exit status and no partial output; SIGKILL of vitals leaves the target
# running.
# lane: solo — profile buckets are checked against the targets' own CPU
. "$(dirname "$0")/lib.sh"
case "$B" in *-san*) skip "profiles are compared with the truth on the plain build";; esac
SRC=$(cd "$(dirname "$0")/../.." && pwd)
PT="$SRC/tests/integration/profile_truth.py"

# A first try: perf events may be refused here (a container, paranoid 3 without root).
start_target profile_work --seconds 120
sleep 1
vitals profile --for 0.5s "$TPID" >"$WORK/try" 2>"$WORK/try.err"
rc=$?
[ "$rc" = 5 ] || [ "$rc" = 8 ] && skip "perf events unavailable here: $(head -1 "$WORK/try.err")"
check "a first short profile works (exit $rc)" test "$rc" = 0
kill "$TPID"; wait "$TPID" 2>/dev/null

have_perf=
command -v perf >/dev/null && perf record -q -e cpu-clock -o "$WORK/probe.data" -- true 2>/dev/null && have_perf=1

# buckets_vs_truth NAME JSON POINTS: each work bucket of the profile in JSON
# within POINTS of the truth of the kind of work it holds, between marks 1 and 2.
buckets_vs_truth() {
	local name=$1 json=$2 tol=$3
	python3 - "$PT" "$TRUTH" "$json" "$tol" >"$WORK/$name.buckets" <<'PY' ||
import json, subprocess, sys
pt, truth, prof, tol = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
t = json.loads(subprocess.run([sys.executable, pt, "truth", truth, "--marks", "1", "2"],
                              check=True, capture_output=True, text=True).stdout)
j = json.load(open(prof))
buckets = {b["name"]: 100 * b["share"] for b in j["buckets"]}
want = {"network send/recv": "net", "filesystem syscalls": "fs", "JSON/serialization": "parse",
        "hashing": "hash", "memory allocation": "malloc"}
bad = 0
for bucket, kind in want.items():
    truth_pct = t["kinds"][kind]["function_share_pct"]
    got = buckets.get(bucket, 0.0)
    mark = "" if abs(got - truth_pct) <= tol else "  <-- more than %g points" % tol
    bad += bool(mark)
    print(f"{bucket:22s} truth {truth_pct:5.1f}  vitals {got:5.1f}{mark}")
sys.exit(1 if bad else 0)
PY
		{ cat "$WORK/$name.buckets"; fail "$name: bucket shares within $tol points of the truth"; }
	cat "$WORK/$name.buckets"
	echo "ok - $name: every bucket's share within $tol points of the truth"
}

# profile_one NAME BUILD: profile the target (built as BUILD) for 4 s at 999 Hz
# between two truth marks, perf beside it when here; compare all three.
profile_one() {
	local name=$1 bin=$2 p
	start_target "$bin" --seconds 120
	sleep 1.5
	p=$TPID
	kill -USR1 "$p"
	if [ -n "$have_perf" ]; then
		perf record -q -e cpu-clock -F 999 --call-graph dwarf -p "$p" -o "$WORK/$name.perf" \
			-- sleep 5 >/dev/null 2>&1 &
		PERF_PID=$!
		sleep 0.5
	fi
	vitals profile --for 4s --hz 999 --json --folded "$WORK/$name.folded" --pprof "$WORK/$name.pb.gz" \
		--html "$WORK/$name.html" "$p" >"$WORK/$name.json" 2>"$WORK/$name.err" ||
		{ cat "$WORK/$name.err"; fail "vitals profile on $name"; }
	kill -USR1 "$p"
	[ -n "$have_perf" ] && wait "$PERF_PID"
	sleep 0.3
	check "$name: inclusive shares of the work functions within 3 points of the truth" \
		python3 "$PT" compare "$TRUTH" "$WORK/$name.folded" --marks 1 2 --tolerance 3
	buckets_vs_truth "$name" "$WORK/$name.json" 3
	if [ -n "$have_perf" ]; then
		perf script -i "$WORK/$name.perf" >"$WORK/$name.perf.txt" 2>/dev/null
		check "$name: vitals and perf --call-graph dwarf agree within 3 points per work function" \
			python3 - "$PT" "$WORK/$name.folded" "$WORK/$name.perf.txt" <<'PY'
import json, subprocess, sys
pt, ours, perf = sys.argv[1:4]
fns = ["work_net", "work_fs_syscalls", "work_parse_json", "work_hash_fnv", "work_malloc_churn",
       "json_parse_string", "hash_fnv1a_block"]
def shares(f):
    args = [sys.executable, pt, "stacks", f] + sum((["--function", x] for x in fns), [])
    return json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)["inclusive_pct"]
a, b = shares(ours), shares(perf)
worst = max(abs(a[f] - b[f]) for f in fns)
for f in fns:
    print(f"  {f:20s} vitals {a[f]:5.1f}  perf {b[f]:5.1f}")
sys.exit(0 if worst <= 3 else 1)
PY
	fi
	check "$name: the pprof file reads whole" python3 "$SRC/tests/unit/pprof_check.py" \
		"$WORK/$name.pb.gz" "$(jq_py "$WORK/$name.json" 'j["samples"]["kept"]')" cpu
	check "$name: the HTML file is one page with its flame graph" grep -q '</html>' "$WORK/$name.html"
	check "$name: each thread's share beside its measured CPU" \
		test "$(jq_py "$WORK/$name.json" 'all(abs(t["share"] - t["cpu_s_share"]) < 0.03 for t in j["threads"] if t["samples"] > 50)')" = true
	kill "$TPID"; wait "$TPID" 2>/dev/null
}

profile_one plain profile_work
profile_one fp profile_work-fp
check "the plain build was unwound by DWARF CFI" \
	test "$(jq_py "$WORK/plain.json" '[m for m in j["modules"] if m["name"] == "profile_work"][0]["unwind_steps"]["dwarf"] > 0')" = true

# --- wall clock: the idle threads wait, and are counted apart ------------------
start_target profile_work --seconds 60
sleep 1
vitals profile --for 3s --wall --json "$TPID" >"$WORK/wall.json" 2>"$WORK/wall.err" || { cat "$WORK/wall.err"; fail "profile --wall"; }
check "--wall: idle waits sampled (epoll and futex threads)" \
	test "$(jq_py "$WORK/wall.json" 'j["samples"]["idle"] > 0 and j["wall"]')" = true
check "--wall: threads idle-epoll and idle-futex have wall samples, no CPU" \
	test "$(jq_py "$WORK/wall.json" 'sorted(t["name"] for t in j["threads"] if t["name"].startswith("idle") and t["samples_all_states"] > 0 and t["samples"] == 0)')" = '["idle-epoll", "idle-futex"]'

# --- ptrace instead of perf events: stated, bounded, as close to the truth -------
# (the issue asks 5 points), and the target unharmed
kill -USR1 "$TPID"
vitals profile --for 10s --method ptrace --json --folded "$WORK/ptrace.folded" "$TPID" \
	>"$WORK/ptrace.json" 2>"$WORK/ptrace.err" || { cat "$WORK/ptrace.err"; fail "profile --method ptrace"; }
kill -USR1 "$TPID"
sleep 0.3
# fewer than 50 stops (a box too busy to find the threads running) and vitals says the
# buckets cannot tell yet: then there is nothing to compare
stops=$(jq_py "$WORK/ptrace.json" 'j["samples"]["stops"]')
if [ "$stops" -ge 50 ]; then
	buckets_vs_truth ptrace "$WORK/ptrace.json" 5
	check "ptrace: inclusive shares of the work functions within 5 points of the truth" \
		python3 "$PT" compare "$TRUTH" "$WORK/ptrace.folded" --marks 1 2 --tolerance 5
else
	echo "# ptrace: only $stops stops on this busy box: its shares are not compared"
fi
check "--method ptrace: says how it sampled, and how long the threads stood stopped" \
	test "$(jq_py "$WORK/ptrace.json" 'j["method"] == "ptrace" and j["paused_s"] > 0 and j["method_note"] is not None and j["samples"]["on_cpu"] > 0')" = true
check "--method ptrace: no thread of the target is left stopped or traced" \
	sh -c "! grep -q ') [tT] ' /proc/$TPID/task/*/stat && ! grep -q '^TracerPid:[[:space:]]*[1-9]' /proc/$TPID/task/*/status"

# --- your own buckets come first ------------------------------------------------
# the rule claims the worker too (work_hash_fnv): a sample in its clock read between
# rounds would otherwise be the built-in's, by its '*hash*' on that frame (CI saw it)
printf '# ours\nhot loop: *hash_fnv*\n' >"$WORK/my.buckets"
vitals profile --for 2s --buckets "$WORK/my.buckets" --json "$TPID" >"$WORK/mine.json" || fail "profile --buckets"
check "a user rule claims the hashing loop before the built-in 'hashing'" \
	test "$(jq_py "$WORK/mine.json" '[b["name"] for b in j["buckets"] if b["name"] in ("hot loop", "hashing") and b["samples"] > 0]')" = '["hot loop"]'
printf 'good: foo*\nno colon here\n' >"$WORK/bad.buckets"
expect_exit 64 "line 2" profile --for 1s --buckets "$WORK/bad.buckets" "$TPID"

# --- --threads keeps the others out ------------------------------------------
vitals profile --for 2s --threads 'ha*' --json "$TPID" >"$WORK/thr.json" || fail "profile --threads"
check "--threads 'ha*': only the hash thread" \
	test "$(jq_py "$WORK/thr.json" 'sorted({t["name"] for t in j["threads"] if t["samples"] > 0})')" = '["hash"]'

# --- output files: refused before sampling when they exist ---------------------
: >"$WORK/exists.folded"
expect_exit 64 "already exists" profile --for 1s --folded "$WORK/exists.folded" "$TPID"
check "the existing file was left as it was" test ! -s "$WORK/exists.folded"
ln -s /etc/passwd "$WORK/link.html"
expect_exit 64 "already exists" profile --for 1s --html "$WORK/link.html" "$TPID"
if [ -w /dev/full ]; then
	expect_exit 2 "writing" profile --for 1s --folded /dev/full "$TPID"
fi

# --- a stripped binary: addresses, never wrong names ---------------------------
cp "$T/targets/profile_work" "$WORK/pw-stripped"
strip "$WORK/pw-stripped"
"$WORK/pw-stripped" --seconds 30 >"$WORK/stripped.out" 2>&1 &
SP=$!
PIDS+=("$SP")
sleep 1
vitals profile --for 2s --folded "$WORK/stripped.folded" "$SP" >/dev/null || fail "profile of a stripped binary"
# a frame named after a work function: the whole frame, a user one (kernel frames end in
# _[k], and skb_network_protocol_[k] is no work_ function)
named='(^|;)(work_|json_parse|hash_fnv)[^;[]*(;| [0-9]+$)'
if grep -qE "$named" "$WORK/stripped.folded"; then
	grep -E "$named" "$WORK/stripped.folded" | head -5
	fail "stripped: no work function is named"
fi
echo "ok - stripped: no work function is named"
check "stripped: its frames are pw-stripped+0x..." grep -q 'pw-stripped+0x' "$WORK/stripped.folded"
kill "$SP"

# --- a target that exits mid-profile: the profile so far, exit 1 ---------------
start_target profile_work --seconds 2
vitals profile --for 6s "$TPID" >"$WORK/exit.out" 2>"$WORK/exit.err"
rc=$?
check "exits mid-profile: exit 1 (got $rc)" test "$rc" = 1
check "exits mid-profile: says so" grep -q "exited" "$WORK/exit.err"
check "exits mid-profile: the profile so far is printed" grep -q "where the CPU went" "$WORK/exit.out"

# --- SIGKILL of vitals mid-profile: the target runs on ----------------------------
start_target profile_work --seconds 60
sleep 1
"$B/vitals" profile --for 10s "$TPID" >/dev/null 2>&1 &
VP=$!
sleep 2
kill -KILL "$VP"
wait "$VP" 2>/dev/null
lines=$(grep -c '^{' "$TRUTH")
sleep 2
check "SIGKILL of vitals: the target is alive" kill -0 "$TPID"
check "SIGKILL of vitals: the target still reports its work" test "$(grep -c '^{' "$TRUTH")" -gt "$lines"
check "SIGKILL of vitals: no thread of the target is stopped" \
	sh -c "! grep -q ') [tT] ' /proc/$TPID/task/*/stat"

# --- bad input ------------------------------------------------------------------
expect_exit 3 "no such process|no process" profile --for 1s 999999999
kt=$(kernel_thread)
[ -n "$kt" ] && expect_exit 6 "kernel thread" profile --for 1s "$kt"
sh -c 'sleep 0.1 & exec sleep 30' &
ZP=$!
PIDS+=("$ZP")
sleep 0.5
zombie=$(ps -o pid= --ppid "$ZP" | tr -d ' ')
check "a zombie to try" test -n "$zombie"
expect_exit 7 "zombie" profile --for 1s "$zombie"
tid=$(ls "/proc/$TPID/task" | grep -v "^$TPID\$" | head -1)
expect_exit 64 "thread" profile --for 1s "$tid"
expect_exit 64 "hz" profile --hz 0 "$TPID"
expect_exit 64 "hz" profile --hz abc "$TPID"
expect_exit 64 "PID" profile
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	setpriv --reuid=65534 --regid=65534 --clear-groups "$B/vitals" profile --for 1s "$TPID" \
		>"$WORK/nobody.out" 2>"$WORK/nobody.err"
	rc=$?
	cat "$WORK/nobody.err"
	check "another user's process as nobody: exit 5 (got $rc)" test "$rc" = 5
	check "... naming the setting or capability to grant" \
		grep -qE "perf_event_paranoid|CAP_PERFMON|CAP_SYS_PTRACE|ptrace_scope" "$WORK/nobody.err"
	check "... and nothing on stdout" test ! -s "$WORK/nobody.out"
fi
exit 0

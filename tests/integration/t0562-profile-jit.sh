#!/usr/bin/env bash
# Code a JIT wrote to anonymous memory is the 'JIT code' bucket, named
# [anon]+offset; code of a file never is, and neither is an address where
# nothing is mapped (a return address read wrong: [unknown], no bucket's).
# jit_spin runs the same loop as machine code it copied to an anonymous
# page (thread "jit") and compiled in native_spin (thread "native").
# Then the same on real JITs nobody here wrote, when the machine has them:
# V8 (node) and HotSpot (java) running a hot loop.
# Prerequisite: perf events (root, or perf_event_paranoid <= 1).
# lane: solo — JIT code's CPU share is checked
. "$(dirname "$0")/lib.sh"

paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)
[ "$(id -u)" = 0 ] || [ "$paranoid" -le 1 ] || skip "perf events need root or kernel.perf_event_paranoid <= 1"
[ "$(uname -m)" = x86_64 ] || skip "jit_spin's machine code is x86-64's"

start_target jit_spin --seconds 30
sleep 0.5
vitals profile --for 4s --json "$TPID" >"$WORK/p.json" 2>"$WORK/err"
rc=$?
cat "$WORK/err"
check "profile exits 0 (got $rc)" test "$rc" = 0
python3 - "$WORK/p.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print("buckets:", {b["name"]: round(b["share"], 3) for b in j["buckets"]})
print("threads:", {t["name"]: round(t["share"], 3) for t in j["threads"]})
print("top self:", [(f["function"], f["self"]) for f in j["top_self"]][:8])
PY
jit_share() { jq_py "$1" 'sum(b["share"] for b in j["buckets"] if b["name"] == "JIT code")'; }
thread_share() { jq_py "$WORK/p.json" "sum(t['share'] for t in j['threads'] if t['name'] == '$1')"; }
jit=$(jit_share "$WORK/p.json")
jt=$(thread_share jit)
check "the jit thread runs (its share $jt)" python3 -c "import sys; sys.exit(not $jt > 0.2)"
check "'JIT code' ($jit) is the jit thread's share ($jt) within 0.1" \
	python3 -c "import sys; sys.exit(not abs($jit - $jt) <= 0.1)"
check "the JIT's frames are named [anon]+offset, inside its 16 bytes of code" \
	test "$(jq_py "$WORK/p.json" 'len([f for f in j["top_self"] if f["module"] == "[anon]"]) > 0 and all(f["function"].startswith("[anon]+0x") and int(f["function"][7:], 16) < 16 for f in j["top_self"] if f["module"] == "[anon]")')" = true
check "the compiled loop is named native_spin" \
	test "$(jq_py "$WORK/p.json" 'any(f["function"] == "native_spin" for f in j["top_self"])')" = true
vitals profile --for 1s "$TPID" >"$WORK/p.txt" 2>&1
check "the text report names the JIT bucket" grep -q "JIT code" "$WORK/p.txt"
kill "$TPID" 2>/dev/null

# Real JITs: a hot loop's compiled code is in anonymous memory.
real_jit() {
	local name=$1
	shift
	"$@" >"$WORK/$name.out" 2>&1 &
	local pid=$!
	PIDS+=("$pid")
	# Interpreted first, compiled once hot: each program prints "hot" after
	# two seconds in its loop, by its own clock.  A fixed sleep was not
	# enough on a loaded host, where java's source launcher (javac in the
	# JVM) and the JIT's compiler threads took most of the profiled window.
	local waited=0
	while ! grep -q hot "$WORK/$name.out" 2>/dev/null && [ "$waited" -lt 600 ]; do
		sleep 0.1
		waited=$((waited + 1))
	done
	check "$name: it reached its hot loop" grep -q hot "$WORK/$name.out"
	sleep 1
	vitals profile --for 3s --json "$pid" >"$WORK/$name.json" 2>"$WORK/$name.err"
	check "$name: profile exits 0" test $? = 0
	local share
	share=$(jit_share "$WORK/$name.json")
	echo "$name: JIT code $share"
	check "$name: its hot loop is 'JIT code' ($share)" python3 -c "import sys; sys.exit(not $share > 0.5)"
	kill "$pid" 2>/dev/null
}
if command -v node >/dev/null; then
	real_jit node node -e 'function f(n){let h=1;for(let i=0;i<n;i++){h=(h*31+i)|0}return h}
		let t=Date.now(),e=t+30000,s=0,said=0; while(Date.now()<e){s+=f(1e6); if(!said&&Date.now()>t+2000){console.log("hot");said=1}} console.log(s)'
else
	echo "# no node here: V8 not tried"
fi
if command -v java >/dev/null && java -version 2>&1 | grep -q 'version "\(1[1-9]\|[2-9][0-9]\)'; then
	cat >"$WORK/Spin.java" <<'EOF'
public class Spin {
	static long work(long n) { long h = 1469598103934665603L; for (long i = 0; i < n; i++) { h ^= i; h *= 1099511628211L; } return h; }
	public static void main(String[] a) {
		long s = 0, t = System.currentTimeMillis(), end = t + 30000;
		boolean said = false;
		while (System.currentTimeMillis() < end) {
			s += work(1000000);
			if (!said && System.currentTimeMillis() > t + 2000) { System.out.println("hot"); System.out.flush(); said = true; }
		}
		System.out.println(s);
	}
}
EOF
	real_jit java java "$WORK/Spin.java"
else
	echo "# no java 11+ here: HotSpot not tried"
fi

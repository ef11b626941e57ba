#!/usr/bin/env bash
# vitals heap refuses, before any thread is stopped, where a call into the
# process cannot be safe: exit 8, a message that names what was found, and
# the target lives on.  Sanitizer runtimes (linked by gcc, preloaded, built
# into the executable by clang), a malloc vitals does not know (in the
# executable or in a library: glibc's free() of its buffer aborted the
# target), 32-bit and x32 programs, a stopped process.  And a target that
# exits mid-probe gives exit 4, whichever step notices.
# sanitizer: every refusal of heap, each leaving its session half built
. "$(dirname "$0")/lib.sh"

# run_prog NAME PATH [ARGS...]: start a program that prints "pid N" first; sets PID
run_prog() {
	local name=$1 i
	shift
	"$@" >"$WORK/$name.out" 2>&1 &
	PID=$!
	PIDS+=("$PID")
	for i in $(seq 100); do
		grep -q '^pid ' "$WORK/$name.out" 2>/dev/null && return 0
		kill -0 "$PID" 2>/dev/null || break
		sleep 0.1
	done
	cat "$WORK/$name.out"
	fail "$name did not start"
}

# refused PATTERN: vitals heap $PID exits 8 (REFUSED_EXIT) naming PATTERN; $PID is alive afterwards
refused() {
	expect_exit "${REFUSED_EXIT:-8}" "$1" heap "$PID"
	sleep 0.3
	check "process $PID is alive after the refusal" kill -0 "$PID"
	grep -q '^TracerPid:[[:space:]]*0$' "/proc/$PID/status" || fail "process $PID is still traced"
}

# a program that mallocs and sleeps in nanosleep: a thread a call could use
cat >"$WORK/sleeper.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(void)
{
	void *volatile p = malloc(100);
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	for (;;)
		sleep(1);
	return p != NULL;
}
EOF

# --- sanitizer runtimes linked as libraries (gcc): ASan aborted, TSan faulted ---------
for san in address thread; do
	victim=$T/targets/sanitized/inject_victim-$san
	[ -x "$victim" ] || fail "no $victim: build first"
	run_prog "victim-$san" "$victim" --seconds 60
	case $san in
	address) refused "runs under AddressSanitizer \(libasan\.so[^ ]* mapped" ;;
	thread) refused "runs under ThreadSanitizer \(libtsan\.so[^ ]* mapped" ;;
	esac
	check "the refusal says nothing was called" grep -q "so none is made" "$WORK/err"
done

# --- the same runtime preloaded into a plain build -------------------------------------
asan_lib=$(cc -print-file-name=libasan.so 2>/dev/null)
if [ -e "$asan_lib" ]; then
	LD_PRELOAD=$asan_lib run_prog preloaded "$T/targets/inject_victim" --seconds 60
	refused "runs under AddressSanitizer"
fi

# --- runtimes built into the executable (clang links them statically) -------------------
if command -v clang >/dev/null; then
	for san in address:AddressSanitizer:__asan_init thread:ThreadSanitizer:__tsan_init \
		   memory:MemorySanitizer:__msan_init leak:LeakSanitizer:__lsan_init; do
		IFS=: read -r flag name init <<<"$san"
		clang -O1 -fsanitize="$flag" -o "$WORK/clang-$flag" "$WORK/sleeper.c" 2>"$WORK/clang.err" ||
			{ echo "# clang -fsanitize=$flag: not built ($(head -1 "$WORK/clang.err"))"; continue; }
		run_prog "clang-$flag" "$WORK/clang-$flag"
		refused "runs under $name \(executable [^ ]*clang-$flag defines $init"
		kill "$PID"
	done
else
	echo "# clang not installed: statically linked sanitizer runtimes not tested"
fi

# --- malloc from an allocator vitals does not know ---------------------------------------
cat >"$WORK/bump.c" <<'EOF'
/* a bump allocator: malloc, free, calloc and realloc of its own */
#include <stddef.h>
#include <string.h>
static char pool[1 << 24];
static size_t used;
void *malloc(size_t n)
{
	char *p;

	n = (n + 15) & ~(size_t)15;
	if (used + n + 16 > sizeof(pool))
		return NULL;
	*(size_t *)(pool + used) = n;
	p = pool + used + 16;
	used += n + 16;
	return p;
}
void free(void *p) { (void)p; }
void *calloc(size_t a, size_t b)
{
	void *p = malloc(a * b);

	return p ? memset(p, 0, a * b) : NULL;
}
void *realloc(void *p, size_t n)
{
	void *q = malloc(n);
	size_t old = p ? *(size_t *)((char *)p - 16) : 0;

	if (q && p)
		memcpy(q, p, old < n ? old : n);
	return q;
}
EOF
cc -O1 -shared -fPIC -o "$WORK/libbump.so" "$WORK/bump.c" || fail "cannot build libbump.so"
cc -O1 -o "$WORK/uses-libbump" "$WORK/sleeper.c" -L"$WORK" -lbump -Wl,-rpath,"$WORK" ||
	fail "cannot build uses-libbump"
run_prog uses-libbump "$WORK/uses-libbump"
refused "not supported: process [0-9]+'s malloc is unknown \([^ ]*libbump\.so mapped and defines malloc, not a known allocator \(may preempt glibc\)"
cat "$WORK/sleeper.c" "$WORK/bump.c" | sed '/^#include <stddef.h>/d' >"$WORK/own-malloc.c"
cc -O1 -o "$WORK/own-malloc" "$WORK/own-malloc.c" || fail "cannot build own-malloc"
run_prog own-malloc "$WORK/own-malloc"
refused "malloc is unknown \(executable [^ ]*own-malloc defines malloc itself"
if cc -static -O1 -o "$WORK/own-malloc-static" "$WORK/own-malloc.c" 2>/dev/null; then
	run_prog own-malloc-static "$WORK/own-malloc-static"
	refused "malloc is unknown \(static executable [^ ]*own-malloc-static defines malloc itself"
fi

# --- a stopped process: not right now (exit 14), unlike what never works (exit 8) -------------
cc -O1 -o "$WORK/sleeper" "$WORK/sleeper.c" || fail "cannot build sleeper"
run_prog sleeper "$WORK/sleeper"
kill -STOP "$PID"
sleep 0.2
REFUSED_EXIT=14 refused "process $PID is stopped \(state T\): resume it with kill -CONT $PID"
kill -CONT "$PID"
sleep 0.2
vitals heap "$PID" >"$WORK/continued.txt" || fail "heap after kill -CONT: $(cat "$WORK/continued.txt")"
echo "ok - continued, the same process is read"

# --- programs of another ABI: 32-bit x86 and x32 ---------------------------------------------
for abi in 32:"32-bit x86 \(i386\)" x32:"x32 \(32-bit pointers"; do
	flag=${abi%%:*}
	what=${abi#*:}
	if ! cc -m"$flag" -O1 -o "$WORK/sleeper-$flag" "$WORK/sleeper.c" 2>/dev/null; then
		echo "# cc -m$flag cannot build (scripts/deps.sh --test installs gcc-multilib): not tested here"
		continue
	fi
	"$WORK/sleeper-$flag" >/dev/null 2>&1 &
	probe=$!
	sleep 0.2
	if ! kill -0 "$probe" 2>/dev/null; then
		echo "# this kernel cannot run -m$flag programs (x32 needs CONFIG_X86_X32_ABI): test_inject covers it"
		continue
	fi
	kill "$probe"
	run_prog "sleeper-$flag" "$WORK/sleeper-$flag"
	refused "process $PID is built for $what.*: vitals calls functions only in x86-64 processes"
done
# --- a target that exits mid-probe: exit 4 (GONE) wherever vitals notices it ---------------
# (was 5 "cannot read .../libc.so.6", 8 "no thread ... is blocked", 5 "ptrace: access
# denied", 3 "no process", depending on the step)
shim=$T/tests/shims/kill_target.so
[ -e "$shim" ] || fail "no $shim: build first"
# The target's parent is a sleep that never reaps it, so it stays a zombie once killed,
# as under a service manager that is slow to reap: its files then fail with EACCES, not ENOENT.
for at in open:libc.so.6 open:task/ open:syscall call:ptrace call:process_vm_readv; do
	name=dies-$RANDOM
	("$WORK/sleeper" >"$WORK/$name.out" 2>&1 & exec sleep 600) &
	PIDS+=($!)
	for i in $(seq 50); do grep -q '^pid ' "$WORK/$name.out" 2>/dev/null && break; sleep 0.1; done
	PID=$(awk '/^pid /{print $2}' "$WORK/$name.out")
	[ -n "$PID" ] || fail "$name did not start"
	case $at in
	open:*) how=VT_KILL_ON_OPEN=${at#open:} ;;
	call:*) how=VT_KILL_ON_CALL=${at#call:} ;;
	esac
	env "$how" VT_KILL_PID="$PID" LD_PRELOAD="$shim" \
		ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
		"$B/vitals" heap "$PID" >"$WORK/out" 2>"$WORK/err"
	rc=$?
	check "the target was killed at $at" grep -q '^State:[[:space:]]*Z' "/proc/$PID/status"
	check "killed at $at: exit 4, got $rc: $(head -1 "$WORK/err")" test "$rc" = 4
	check "... and the message says it exited" grep -q "exited" "$WORK/err"
done
exit 0

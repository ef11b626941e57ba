#!/usr/bin/env bash
# vitals snap remembers the allocator's detection per executable, mapped
# files and LD_PRELOAD (alloc/detect_cache.h, file detect-v1 in the user's
# cache directory): a second snap --light says the same allocator line
# without opening libelf, and a process of the same executable that
# preloads jemalloc is not given the glibc answer remembered for the other.
# sanitizer: the cache file's reading and writing
. "$(dirname "$0")/lib.sh"

export XDG_CACHE_HOME="$WORK/cache"
mkdir -p "$XDG_CACHE_HOME"
JEMALLOC=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2

allocator_line() {   # allocator_line PID: the line under ALLOCATOR, without its "PID:"
	vitals snap --light "$1" | awk '/^ALLOCATOR/ { getline; sub(/^ *[0-9]+: /, ""); print; exit }'
}

sleep 300 &
plain=$!
PIDS+=("$plain")
sleep 0.3
first=$(allocator_line "$plain")
echo "# first:  $first"
check "the first snap names glibc" test "${first%% *}" = glibc
check "the answer was remembered in a 0600 file" test "$(stat -c %a "$XDG_CACHE_HOME/vitals/detect-v1")" = 600
second=$(allocator_line "$plain")
echo "# second: $second"
check "the second snap says the same allocator line" test "$first" = "$second"
if command -v strace >/dev/null; then
	strace -f -e trace=openat -o "$WORK/strace" "$B/vitals" snap --light "$plain" >/dev/null 2>&1
	check "a remembered answer opens no libelf" bash -c "! grep -q libelf '$WORK/strace'"
	check "(strace saw the run read the cache)" grep -q 'detect-v1' "$WORK/strace"
else
	echo "# strace not installed: libelf not looked for"
fi

if command -v python3 >/dev/null; then
	python3 -c 'import time; time.sleep(300)' &
	py=$!
	PIDS+=("$py")
	sleep 0.5
	a=$(allocator_line "$py")
	b=$(allocator_line "$py")
	echo "# python3: $a"
	check "python3: the same allocator line twice" test -n "$a" -a "$a" = "$b"
fi

if [ -r "$JEMALLOC" ]; then
	LD_PRELOAD=$JEMALLOC sleep 300 &
	je=$!
	PIDS+=("$je")
	sleep 0.3
	for run in 1 2; do
		line=$(allocator_line "$je")
		echo "# preloaded, run $run: $line"
		check "the same executable preloading jemalloc is jemalloc (run $run)" test "${line%% *}" = jemalloc
	done
	check "the plain one is still glibc" test "$(allocator_line "$plain")" = "$first"
else
	echo "# $JEMALLOC not installed: preloaded case not run"
fi

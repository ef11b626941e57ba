#!/usr/bin/env bash
# jemalloc linked into the executable under a prefix (issue 25): Rust's
# tikv-jemallocator (_rjem_malloc, _rjem_mallctl, the global allocator
# while plain malloc stays libc's) and redis built from source (je_).
# Built here as such a program is: Debian's static libjemalloc with its
# public functions renamed under the prefix (what jemalloc's
# --with-jemalloc-prefix gives), and a program that holds 48 MiB through
# it.  vitals snap names jemalloc and its prefix, never glibc; vitals heap
# calls its mallctl under the prefix in the executable and reads what the
# program holds (within 2%).  Before: the _rjem_ program was glibc's, and
# heap looked for mallctl in a libjemalloc.so neither maps.
# Prerequisite: libjemalloc-dev (scripts/deps.sh --test), objcopy.
. "$(dirname "$0")/lib.sh"

A=/usr/lib/x86_64-linux-gnu/libjemalloc_pic.a
[ -r "$A" ] || skip "no $A (scripts/deps.sh --test installs libjemalloc-dev)"
command -v objcopy >/dev/null || skip "no objcopy"
cat >"$WORK/hold.c" <<'EOF2'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#define CAT(a, b) a##b
#define NAME(a, b) CAT(a, b)
void *NAME(PREFIX, malloc)(size_t);
void NAME(PREFIX, free)(void *);
int main(void)
{
	static void *keep[768];
	for (int i = 0; i < 768; i++) {       /* 48 MiB in 64 KiB blocks */
		keep[i] = NAME(PREFIX, malloc)(65536);
		memset(keep[i], 1, 65536);
	}
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	sleep(120);
	for (int i = 0; i < 768; i++)
		NAME(PREFIX, free)(keep[i]);
	return 0;
}
EOF2
for prefix in _rjem_ je_; do
	nm -g --defined-only "$A" 2>/dev/null | awk '$2 ~ /^[TW]$/ && $3 !~ /^(je_|_)/ { print $3 " '"$prefix"'" $3 }' |
		sort -u >"$WORK/$prefix.map"
	objcopy --redefine-syms="$WORK/$prefix.map" "$A" "$WORK/lib$prefix.a" ||
		fail "objcopy: the archive with prefix $prefix"
	gcc -O1 -DPREFIX="$prefix" -o "$WORK/hold$prefix" "$WORK/hold.c" "$WORK/lib$prefix.a" -lpthread -ldl -lm ||
		fail "gcc: the program with prefix $prefix"
	"$WORK/hold$prefix" >"$WORK/hold$prefix.out" 2>&1 &
	P=$!
	PIDS+=("$P")
	for i in $(seq 50); do grep -q '^pid ' "$WORK/hold$prefix.out" && break; sleep 0.1; done
	vitals snap --json "$P" >"$WORK/snap$prefix.json" || fail "snap ($prefix)"
	echo "# $prefix: $(jq_py "$WORK/snap$prefix.json" 'j["processes"][0]["allocator"]["evidence"]')"
	check "$prefix: snap names jemalloc, linked in, with its prefix" \
		test "$(jq_py "$WORK/snap$prefix.json" '[j["processes"][0]["allocator"][k] for k in ("name", "static", "prefix")]')" = "[\"jemalloc\", true, \"$prefix\"]"
	vitals heap --json "$P" >"$WORK/heap$prefix.json" 2>"$WORK/heap$prefix.err" ||
		fail "heap ($prefix): $(cat "$WORK/heap$prefix.err")"
	check "$prefix: heap reads jemalloc's own figures through ${prefix}mallctl: 48 MiB allocated, within 2%" python3 - "$WORK/heap$prefix.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
mib = j["jemalloc"]["allocated"] / 2**20 if j["allocator"] == "jemalloc" and j["jemalloc"] else 0
print(f"#   allocator {j['allocator']}, allocated {mib:.2f} MiB")
sys.exit(not (47.0 <= mib <= 49.0))
PY
	kill "$P"
done
echo "ok - t0215"

#!/usr/bin/env bash
# t0013 — vitals links only what every command uses (libm, libc); libelf,
# libdw, SQLite, expat, zlib, jansson, protobuf-c, libyaml and libcrypt are
# opened by the commands that need them.  Where one cannot be opened (an
# empty file stands in for it, first on LD_LIBRARY_PATH), that command exits
# 8 naming the Debian package to install, before it stops or writes
# anything; the commands that do not need it run as before.
# sanitizer: every library opened through its table (elf_libs.c, sqlite_lib.c, malloc_info.c, web_config.c)
. "$(dirname "$0")/lib.sh"

needed=$(readelf -d "$B/vitals" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
echo "# NEEDED: $needed"
# (the sanitizer build links its runtimes too)
sorted=$(echo $needed | tr ' ' '\n' | grep -vE '^lib(a|ub|t|l)san\.so' | sort | tr '\n' ' ')
check "vitals links only libm and libc" test "$sorted" = "libc.so.6 libm.so.6 "

# missing SONAME: a directory whose only file is an empty SONAME
missing() {
	mkdir -p "$WORK/no-$1"
	: >"$WORK/no-$1/$1"
	echo "$WORK/no-$1"
}

start_target arena_churn --seconds 60 --threads 2
sleep 1

# each command that needs a library says which package, exit 8
without() {
	local lib=$1 pkg=$2
	shift 2
	LD_LIBRARY_PATH=$(missing "$lib") "$B/vitals" "$@" >"$WORK/out" 2>"$WORK/err"
	local rc=$?
	[ "$rc" = 8 ] || { cat "$WORK/err"; fail "vitals $* without $lib exited $rc, expected 8"; }
	grep -q "needs $lib.*cannot be opened" "$WORK/err" || { cat "$WORK/err"; fail "vitals $*: no '$lib' in the error"; }
	grep -q "apt-get install $pkg\$" "$WORK/err" || { cat "$WORK/err"; fail "vitals $*: package $pkg not named"; }
	echo "ok - without $lib: vitals $* -> 8: $(head -1 "$WORK/err")"
}

without libelf.so.1 libelf1 heap "$TPID"
without libexpat.so.1 libexpat1 heap "$TPID"
without libjansson.so.4 libjansson4 snap --light --json "$TPID"
without libprotobuf-c.so.1 libprotobuf-c1 profile --for 1s --pprof "$WORK/p.pb.gz" "$TPID"
check "without protobuf-c, profile --pprof wrote no file" test ! -e "$WORK/p.pb.gz"
check "without jansson, snap --json wrote no half report" test ! -s "$WORK/out"
without libdw.so.1 libdw1 profile --for 1s "$TPID"
without libsqlite3.so.0 libsqlite3-0 soak --for 2s -o "$WORK/rec.db" "$TPID"
check "soak without SQLite left no recording behind" test ! -e "$WORK/rec.db"
echo 'basic_auth_users: {}' >"$WORK/web.yml"
without libyaml-0.so.2 libyaml-0-2 serve --pid "$TPID" --listen 127.0.0.1:0 --web-config "$WORK/web.yml"
without libcrypt.so.1 libcrypt1 serve --pid "$TPID" --listen 127.0.0.1:0 --web-config "$WORK/web.yml"

# with them all there: a recording written and read back, then read without SQLite
vitals soak --for 2s --every 1s -o "$WORK/rec.db" "$TPID" >"$WORK/soak.out" 2>"$WORK/soak.err"
check "soak records with SQLite opened on demand" test $? -eq 0 -a -s "$WORK/rec.db"
vitals analyze "$WORK/rec.db" >"$WORK/analyze.out" 2>"$WORK/analyze.err"
rc=$?
check "analyze reads it back (exit 0 or 1: a 2 s recording may be partial)" test $rc -le 1 -a -s "$WORK/analyze.out"
without libsqlite3.so.0 libsqlite3-0 analyze "$WORK/rec.db"

# expat is not needed for mallinfo2 alone, nor libelf, libdw or SQLite for a snapshot
LD_LIBRARY_PATH=$(missing libexpat.so.1) "$B/vitals" heap --no-arenas "$TPID" >"$WORK/out" 2>"$WORK/err"
check "heap --no-arenas runs without expat" test $? -eq 0 -a -s "$WORK/out"
mkdir -p "$WORK/none"
for l in libelf.so.1 libdw.so.1 libsqlite3.so.0 libexpat.so.1 libz.so.1 libjansson.so.4 libprotobuf-c.so.1 \
	libyaml-0.so.2 libcrypt.so.1; do : >"$WORK/none/$l"; done
# (an empty cache directory: an allocator remembered from an earlier snap needs no libelf)
export XDG_CACHE_HOME="$WORK/empty-cache"
LD_LIBRARY_PATH="$WORK/none" "$B/vitals" snap --light "$TPID" >"$WORK/out" 2>"$WORK/err"
check "snap --light runs with none of them" test $? -eq 0 -a -s "$WORK/out"
LD_LIBRARY_PATH="$WORK/none" "$B/vitals" snap "$TPID" >"$WORK/out" 2>"$WORK/err"
check "snap runs with none of them, and says why the allocator's version is unknown" \
	grep -q "needs libelf.so.1.*cannot be opened" "$WORK/out"
check "the target runs on" kill -0 "$TPID"

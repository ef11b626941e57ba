#!/usr/bin/env bash
# t0900 — every benchmark in bench/ runs once with its shortest settings
# (bench/smoke), so that a change cannot break one unnoticed.  The plain build
# only: the benchmarks measure the product as shipped.
. "$(dirname "$0")/lib.sh"
case "$B" in *-san*) skip "benchmarks run on the plain build";; esac
SRC=$(cd "$(dirname "$0")/../.." && pwd)
check "bench/smoke: every benchmark runs and reports" env B="$(basename "$B")" VT_BUILD="$B" "$SRC/bench/smoke"

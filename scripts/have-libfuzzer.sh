#!/bin/sh
# have-libfuzzer.sh — exit 0 when clang links a libFuzzer target here, else say
# on stderr what is missing and exit 1.  Used by make test and tests/run.
command -v clang >/dev/null 2>&1 || { echo "no clang" >&2; exit 1; }
out=$(mktemp -d) || exit 1
trap 'rm -rf "$out"' EXIT
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' >"$out/t.c"
if ! clang -fsanitize=fuzzer,address -o "$out/t" "$out/t.c" >/dev/null 2>&1; then
	echo "clang cannot link libFuzzer (Debian: libclang-rt-<version>-dev)" >&2
	exit 1
fi

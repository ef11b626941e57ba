#!/usr/bin/env bash
# t0011 — every command line that README.md and the man page's EXAMPLES show
# runs as written (PID, files and ./server replaced by real ones) without a
# usage error; long ones are ended with SIGINT after 1 s, as a user would end
# them with Ctrl-C.  On the plain build only: they take two minutes, and the
# sanitizer build parses every option in t0010 and runs each command in its
# own tests.
. "$(dirname "$0")/lib.sh"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
case "$B" in *-san*) skip "the documented command lines run on the plain build" ;; esac

start_target arena_churn --seconds 600 --threads 2
P1=$TPID
start_target arena_churn --seconds 600 --threads 2
P2=$TPID
cd "$WORK" || fail "cd"
# the lines run as from the top of the source tree: the files they name are here too
mkdir -p docs && cp "$SRC/docs/example.buckets" docs/
mkdir man
cp "$SRC/man/vitals.1" man/
# ./server: a command that takes any arguments and runs until stopped
printf '#!/bin/sh\nexec %s --seconds 600 --threads 2\n' "$T/targets/arena_churn" >server
chmod +x server
for f in run before after; do
	vitals soak "$P1" -o $f.db --for 2s --every 0.2s -q >/dev/null || fail "making $f.db"
done

# README lines in code blocks, then the man page's EXAMPLES
python3 - "$SRC/README.md" "$SRC/man/vitals.1" >"$WORK/lines" <<'PY'
import re, sys
readme, man = sys.argv[1], sys.argv[2]
out = []
block = False
for line in open(readme):
    if line.startswith("```"):
        block = not block
        continue
    if block:
        cmd = line.split("#", 1)[0].strip() if " #" in line else line.strip()
        if re.match(r"(build/)?vitals |man ", cmd):
            out.append(cmd)
text = open(man).read()
ex = text.split(".SH EXAMPLES", 1)[1].split(".SH ", 1)[0]
for line in ex.splitlines():
    if line.startswith("."):
        continue
    out.append(line.replace("\\-", "-").replace("\\e", "\\"))
print("\n".join(l for l in out if l.strip()))
PY
[ -s "$WORK/lines" ] || fail "no command lines found in README.md and the man page"
n=0 bad=0
while IFS= read -r line; do
	run=${line%% | *}                                  # the vitals part of a pipeline
	run=${run//build\/vitals /$B/vitals }
	run=$(sed -E "s#(^| )vitals #\1$B/vitals #; s#\bPID1\b#$P1#g; s#\bPID2\b#$P2#g; s#\bPID\b#$P1#g; \
		s#\b1234\b#$P1#g; s#\b5678\b#$P2#g" <<<"$run")
	n=$((n + 1))
	# a soak writes a new recording: the one of an earlier line makes way
	out=$(sed -nE 's/.* (-o|--output) ([^ ]+).*/\2/p' <<<"$run")
	case $run in *" soak "*) [ -n "$out" ] && rm -f "$out" "$out-wal" "$out-shm" "$out.out";; esac
	# and so do an earlier line's reports and experiment folder (vitals keeps them without --force)
	for f in $(grep -oE -- '--(html|csv|folded|pprof) [^ -][^ ]*' <<<"$run" | cut -d' ' -f2); do rm -f "$f"; done
	case $run in *" experiment "*) [ -n "$out" ] && rm -rf "$out";; esac
	# ended with SIGINT like Ctrl-C; a usage error is the only failure here
	MANPAGER=cat PAGER=cat timeout --preserve-status -s INT -k 10 1 bash -c "$run" </dev/null \
		>"$WORK/line.out" 2>"$WORK/line.err"
	rc=$?
	if [ $rc = 64 ] || grep -qiE "^vitals[^:]*: .*(unknown option|needs an argument)|usage:" "$WORK/line.err"; then
		echo "FAILED ($rc): $line"
		sed 's/^/    /' "$WORK/line.err" | head -5
		bad=$((bad + 1))
	else
		echo "ok ($rc) - $line"
	fi
done <"$WORK/lines"
check "the $n command lines of README.md and the man page run without a usage error" test $bad = 0
cd "$SRC" || true

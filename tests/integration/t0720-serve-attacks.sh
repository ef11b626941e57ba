#!/usr/bin/env bash
# lane: solo
# sanitizer: the exporter under slow and flooding clients
# vitals serve answers a scraper while it is attacked (issue 23, items 2 and 3).
# - slowloris: 4 source addresses x 16 connections (the per-address cap) that
#   trickle a header byte every 2 s and never finish; a scraper from a fifth
#   address asks once a second.  Before: 0 answers (libmicrohttpd's timeout is
#   of inactivity, and at its connection limit it drops new clients unseen).
# - a password flood: 8 addresses send wrong basic-auth passwords as fast as they
#   can against a bcrypt cost of 10; a scraper with the right one asks once a
#   second.  Before: 0 answers of 10 (the bcrypt budget was shared).
# The scraper must get at least half.  Bounded here (12 s each); the long form
# is `python3 tests/integration/serve_attack.py slowloris PORT 4 16 120`.
. "$(dirname "$0")/lib.sh"
ip addr show lo 2>/dev/null | grep -q '127.0.0.1/8' || skip "needs the whole 127.0.0.0/8 on lo"

start_serve --pid $$
out=$(python3 "$(dirname "$0")/serve_attack.py" slowloris "$PORT" 4 16 12) ||
	fail "slowloris beside a scraper: $out"
echo "# slowloris, 4 x 16 connections: the scraper was $out"
check "a scraper from a new address is answered while slow clients hold every slot" true
kill "$SPID"; wait "$SPID" 2>/dev/null

# password 'pw' at bcrypt cost 10 (about 50 ms a check)
printf 'basic_auth_users:\n  prom: %s\n' '$2b$10$yoNBuAifRJskJPy7ooTxA.sMNNM5sxGFLuvd5LIusjkXwopqJUCBW' >"$WORK/auth.yml"
start_serve --pid $$ --web-config "$WORK/auth.yml"
out=$(python3 "$(dirname "$0")/serve_attack.py" guess "$PORT" prom pw 12) ||
	fail "a password flood beside a scraper: $out"
echo "$out" | sed 's/^answered/# the scraper with the right password was answered/'
check "wrong guesses do not starve the right password" true
kill "$SPID"; wait "$SPID" 2>/dev/null

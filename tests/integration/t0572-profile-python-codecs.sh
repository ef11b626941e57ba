#!/usr/bin/env bash
# A Python service's JSON work is JSON/serialization, not "Python interpreter":
# CPython's codecs in C (_json, _pickle, pyexpat... in lib-dynload) are
# claimed by their library, so the CPU of json.dumps/json.loads inside _json
# shows as its own bucket, beside the interpreter's.
# Where _json has its symbols (pyenv's python3, any python built from source)
# its functions are named (ascii_escape_unicode, scanstring_unicode) and,
# before the library rule, were "Python interpreter": a json.dumps loop gave
# 92% interpreter and no JSON bucket.  Debian's lib-dynload is stripped: its
# functions are named "_json.cpython-311-...so+0x4e40", which the "*json*"
# name rule claimed already, so on Debian's python3 this passes either way;
# test_profile_buckets checks the library rule on recorded stacks.  A python3
# built with _json inside skips.
# Prerequisite: perf events (root, or perf_event_paranoid <= 1), python3.
. "$(dirname "$0")/lib.sh"

paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)
[ "$(id -u)" = 0 ] || [ "$paranoid" -le 1 ] || skip "perf events need root or kernel.perf_event_paranoid <= 1"
PY=$(python3 -c 'import sys; print(sys.executable)') || skip "no python3"
"$PY" -c 'import _json, sys; sys.exit(not getattr(_json, "__file__", "").endswith(".so"))' ||
	skip "this python3 has _json built in: its frames are the interpreter's"

cat >"$WORK/codec.py" <<'EOF2'
import json, sys
rows = [{"id": i, "name": "user-%d" % i, "tags": ["a", "b", "c"], "score": i * 0.5} for i in range(3000)]
print("ready", flush=True)
while True:
    json.loads(json.dumps(rows))
EOF2
"$PY" "$WORK/codec.py" >"$WORK/codec.out" &
pid=$!
PIDS+=("$pid")
for _ in $(seq 100); do grep -q ready "$WORK/codec.out" && break; sleep 0.1; done
grep -q ready "$WORK/codec.out" || fail "the python program did not start"

# 499 Hz, not 99: _json's busiest functions hold about 2% each, and the 15th
# of top_self about 1.5%; 400 samples put them below the cut now and then on
# a loaded host (CI), 2,000 keep them above it
vitals profile --for 4s --hz 499 --json "$pid" >"$WORK/p.json" 2>"$WORK/p.err" || fail "profile: $(cat "$WORK/p.err")"
share() { jq_py "$WORK/p.json" "sum(b['share'] for b in j['buckets'] if b['name'] == '$1')"; }
json_share=$(share JSON/serialization)
py_share=$(share 'Python interpreter')
echo "# JSON/serialization $json_share, Python interpreter $py_share"
check "JSON/serialization is a bucket of its own" python3 -c "import sys; sys.exit(not $json_share > 0)"
check "the interpreter keeps its own share" python3 -c "import sys; sys.exit(not $py_share > 0)"
check "_json's functions are among the busiest" \
	test -n "$(jq_py "$WORK/p.json" "[f['function'] for f in j['top_self'] if (f['module'] or '').startswith('_json.')][:5] or ''")"
echo "ok - t0572"

#!/usr/bin/env bash
# t0001 — the tree reads as one flow: a module includes only modules below it
#   base ← proc, perf, elf ← inject ← alloc ← sample ← store ← soak, analyze ← render ← serve ← cli
# (soak and analyze side by side: neither includes the other), and libelf/libdw,
# SQLite and protobuf-c are each seen by one module only, and so are libmicrohttpd, libcurl,
# libyaml and libcrypt (src/serve).
. "$(dirname "$0")/lib.sh"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
python3 - "$SRC" >"$WORK/layers" <<'PY'
import glob, os, re, sys
src = sys.argv[1]
rank = {"base": 0, "proc": 1, "perf": 1, "elf": 1, "inject": 2, "alloc": 3, "sample": 4, "store": 5,
        "soak": 6, "analyze": 6, "render": 7, "serve": 8, "cli": 9}
only = {"gelf.h": "elf", "libelf.h": "elf", "elfutils": "elf", "sqlite3.h": "store",
        "protobuf-c": "render", "profile.pb-c.h": "render",
        "microhttpd.h": "serve", "curl": "serve", "yaml.h": "serve", "crypt.h": "serve"}
for path in sorted(glob.glob(os.path.join(src, "src", "*", "*.[ch]"))):
    mod = path.split(os.sep)[-2]
    for n, line in enumerate(open(path), 1):
        m = re.match(r'#include [<"]([\w.+-]+)(/[\w.+-]+)?[>"]', line)
        if not m:
            continue
        dep = m.group(1)
        rel = os.path.relpath(path, src)
        if m.group(2) and dep in rank and mod in rank and dep != mod and rank[dep] >= rank[mod]:
            print(f"{rel}:{n}: {mod} includes {dep}/{m.group(2)[1:]}, which is not below it")
        if dep in only and only[dep] != mod:
            print(f"{rel}:{n}: <{dep}> belongs to src/{only[dep]}/ only")
PY
cat "$WORK/layers"
check "no module includes one at its level or above, libelf, SQLite and protobuf-c each in one module" test ! -s "$WORK/layers"

#!/usr/bin/env python3
"""py_objects: a CPython process with known object memory.

Many small objects (tuples of an int and a str, each under 512 bytes) live
in CPython's object arenas (pymalloc: anonymous mmaps carved into pools, not
malloc's); one bytearray of --bytearray-mb MiB is a malloc'd block (glibc
mmaps it alone), its first bytes JSON text.

The target contract of targets/common.h: "pid N" first on stdout; --seconds
N; --truth FILE appends JSON lines with "t" and "phase", the last "exit";
SIGTERM ends it with exit 0.  Truth: the interpreter's own figures from
sys._debugmallocstats() ("arenas" allocated now, "arena_bytes",
"allocated_blocks_bytes": bytes in allocated blocks), and the bytearray's
chunk ("bytearray_chunk", hex: its buffer's address - 16, and
"bytearray_bytes": its length).
"""
import argparse
import ctypes
import json
import os
import re
import signal
import sys
import tempfile
import time

ap = argparse.ArgumentParser()
ap.add_argument("--seconds", type=float, default=60)
ap.add_argument("--truth")
ap.add_argument("--objects", type=int, default=300000)
ap.add_argument("--bytearray-mb", type=int, default=128)
args = ap.parse_args()

t0 = time.monotonic()
print("pid", os.getpid(), flush=True)
stop = False


def on_term(sig, frame):
    global stop
    stop = True


signal.signal(signal.SIGTERM, on_term)
signal.signal(signal.SIGINT, on_term)

objects = [(i, "item-%d" % i) for i in range(args.objects)]
big = bytearray(args.bytearray_mb << 20)
big[:32] = b'{"user": "alice", "token": "c2Vj'
big_addr = ctypes.addressof((ctypes.c_char * len(big)).from_buffer(big))


def mallocstats():
    """sys._debugmallocstats() writes to the C stderr: catch fd 2 in a file."""
    with tempfile.TemporaryFile() as f:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(f.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        f.seek(0)
        text = f.read().decode()
    def num(label):
        m = re.search(r"^# %s\s*=\s*([\d,]+)" % re.escape(label), text, re.M)
        return int(m.group(1).replace(",", "")) if m else None
    m = re.search(r"^(\d+) arenas \* (\d+) bytes/arena", text, re.M)
    return {"arenas": num("arenas allocated current"),
            "arena_size": int(m.group(2)) if m else None,
            "allocated_blocks_bytes": num("bytes in allocated blocks")}


def truth(phase):
    if not args.truth:
        return
    line = {"t": round(time.monotonic() - t0, 3), "phase": phase,
            "python": "%d.%d" % sys.version_info[:2], "objects": len(objects),
            "bytearray_chunk": hex(big_addr - 16), "bytearray_bytes": len(big)}
    line.update(mallocstats())
    with open(args.truth, "a") as f:
        f.write(json.dumps(line) + "\n")


truth("holding")
while not stop and time.monotonic() - t0 < args.seconds:
    time.sleep(0.2)
truth("exit")

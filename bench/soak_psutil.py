#!/usr/bin/python3
"""bench/soak_psutil.py: the sampler a person would write with psutil, for bench/soak.

    /usr/bin/python3 bench/soak_psutil.py --pid PID --out FILE [--every 1] [--for 60]

It records the fields `vitals soak` records, every tick, the plain way:

  * p.memory_info(), p.cpu_times(), p.num_threads(), p.num_ctx_switches();
  * RssAnon, RssFile, RssShmem and VmSwap from /proc/PID/status (psutil has them
    only through memory_full_info(), which reads all of smaps: not used);
  * p.threads(), for each thread's user and system time;
  * each thread's voluntary and nonvoluntary context switches from
    /proc/PID/task/TID/status, opened and read for every thread on every tick;
  * arenas and 64 MiB heap regions: /proc/PID/maps, counting the anonymous
    rw-p mappings that start on a 64 MiB boundary and are at most 64 MiB
    long (glibc's non-main arena heaps; an approximation);
  * the cgroup's memory.current and memory.swap.current (v2), or v1's
    memory.usage_in_bytes and memory.memsw.usage_in_bytes.

Each sample, one row plus one row per thread, goes to a SQLite file in one
transaction.  The file is in WAL mode with synchronous=NORMAL, as vitals
writes its own, so that both pay the same for durability.

Needs the Debian python3-psutil (apt-get install python3-psutil).  Exit 3
if psutil cannot be imported, 1 if the process is gone at the start.
"""
import argparse
import os
import sqlite3
import sys
import time

try:
    import psutil
except ImportError:
    sys.stderr.write("soak_psutil: psutil is not installed (apt-get install python3-psutil)\n")
    sys.exit(3)

SCHEMA = """
CREATE TABLE IF NOT EXISTS samples(id INTEGER PRIMARY KEY, t REAL, wall REAL, pid INTEGER,
    read_ms REAL, committed INTEGER, rss_anon INTEGER, rss_file INTEGER, rss_shmem INTEGER,
    vm_rss INTEGER, vm_swap INTEGER, vm_size INTEGER, arenas INTEGER, regions_64m INTEGER,
    threads INTEGER, cpu_user_s REAL, cpu_sys_s REAL, vcsw INTEGER, nvcsw INTEGER,
    cg_current INTEGER, cg_swap INTEGER);
CREATE TABLE IF NOT EXISTS thread_samples(sample_id INTEGER, tid INTEGER, cpu_s REAL,
    user_s REAL, sys_s REAL, vcsw INTEGER, nvcsw INTEGER, PRIMARY KEY(sample_id, tid)) WITHOUT ROWID;
"""

HEAP = 64 << 20


def status_fields(path, keys):
    out = {}
    with open(path) as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in keys:
                out[k] = int(v.split()[0])
    return out


def arenas_from_maps(pid):
    heaps = 0
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) != 5 or parts[1] != "rw-p":
                continue
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            if lo % HEAP == 0 and hi - lo <= HEAP:
                heaps += 1
    return heaps + 1, heaps


def cgroup_files(pid):
    """(usage file, swap file, swap includes memory): cgroup v2, else v1's memory controller."""
    v1 = v2 = None
    try:
        with open(f"/proc/{pid}/cgroup") as f:
            for line in f:
                num, ctrl, path = line.rstrip("\n").split(":", 2)
                if num == "0" and ctrl == "":
                    v2 = path
                elif "memory" in ctrl.split(","):
                    v1 = path
    except OSError:
        return None
    if v2 is not None and os.path.exists(f"/sys/fs/cgroup{v2}/memory.current"):
        d = f"/sys/fs/cgroup{v2}"
        return d + "/memory.current", d + "/memory.swap.current", False
    if v1 is not None:
        # the path as the host names it; inside a container the cgroup is often the mount's root
        for d in (f"/sys/fs/cgroup/memory{v1}", "/sys/fs/cgroup/memory"):
            if os.path.exists(d + "/memory.usage_in_bytes"):
                return d + "/memory.usage_in_bytes", d + "/memory.memsw.usage_in_bytes", True
    return None


def read_int(path):
    try:
        with open(path) as f:
            return int(f.read())
    except (OSError, ValueError):
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--every", type=float, default=1.0)
    ap.add_argument("--for", dest="duration", type=float, default=60.0)
    a = ap.parse_args()

    try:
        p = psutil.Process(a.pid)
    except psutil.NoSuchProcess:
        sys.stderr.write(f"soak_psutil: no process {a.pid}\n")
        sys.exit(1)
    db = sqlite3.connect(a.out)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.executescript(SCHEMA)
    cg = cgroup_files(a.pid)
    status_keys = {"RssAnon", "RssFile", "RssShmem", "VmSwap"}

    start = time.monotonic()
    next_t = start
    n = 0
    while True:
        now = time.monotonic()
        if now - start >= a.duration - 1e-3:
            break
        t0 = now
        try:
            with p.oneshot():
                mi = p.memory_info()
                ct = p.cpu_times()
                nthreads = p.num_threads()
                csw = p.num_ctx_switches()
            st = status_fields(f"/proc/{a.pid}/status", status_keys)
            arenas, regions = arenas_from_maps(a.pid)
            rows = []
            for th in p.threads():
                try:
                    ts = status_fields(f"/proc/{a.pid}/task/{th.id}/status",
                                       {"voluntary_ctxt_switches", "nonvoluntary_ctxt_switches"})
                except (FileNotFoundError, ProcessLookupError):
                    continue    # the thread exited meanwhile
                rows.append((th.id, th.user_time + th.system_time, th.user_time, th.system_time,
                             ts.get("voluntary_ctxt_switches"), ts.get("nonvoluntary_ctxt_switches")))
        except (psutil.NoSuchProcess, FileNotFoundError, ProcessLookupError):
            break
        cg_cur = cg_swap = None
        if cg:
            cg_cur, cg_swap = read_int(cg[0]), read_int(cg[1])
            if cg[2] and cg_cur is not None and cg_swap is not None:
                cg_swap -= cg_cur     # v1 memsw counts memory + swap
        anon = st.get("RssAnon", 0) * 1024
        swap = st.get("VmSwap", 0) * 1024
        read_ms = (time.monotonic() - t0) * 1000
        with db:    # one transaction per sample
            cur = db.execute(
                "INSERT INTO samples(t, wall, pid, read_ms, committed, rss_anon, rss_file, rss_shmem,"
                " vm_rss, vm_swap, vm_size, arenas, regions_64m, threads, cpu_user_s, cpu_sys_s,"
                " vcsw, nvcsw, cg_current, cg_swap) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (now - start, time.time(), a.pid, read_ms, anon + swap, anon,
                 st.get("RssFile", 0) * 1024, st.get("RssShmem", 0) * 1024, mi.rss, swap, mi.vms,
                 arenas, regions, nthreads, ct.user, ct.system, csw.voluntary, csw.involuntary,
                 cg_cur, cg_swap))
            sid = cur.lastrowid
            db.executemany("INSERT INTO thread_samples VALUES(?,?,?,?,?,?,?)",
                           [(sid,) + r for r in rows])
        n += 1
        next_t += a.every
        delay = next_t - time.monotonic()
        if delay > 0:
            time.sleep(min(delay, max(0.0, start + a.duration - time.monotonic())))
        else:
            next_t = time.monotonic()
    db.close()
    print(f"samples {n}")


if __name__ == "__main__":
    main()

"""bench/snap.py — the measuring half of bench/snap, which builds, starts and
checks the targets, then runs this.  Not meant to be run by hand.

CPU of a command = user + sys of that child from wait4()'s rusage: the whole
invocation (exec, dynamic loading, reading /proc, output), not wall time.
Each command runs once to warm up (not counted), then the runs of the
commands of a group are interleaved, so that a burst of noise on a shared
machine spreads over all of them rather than landing on one.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from floor_ops import floor_ops  # noqa: E402  (bench/floor_ops.py, shared with bench/threads)

ap = argparse.ArgumentParser()
ap.add_argument("--runs", type=int, required=True)
ap.add_argument("--tool-runs", type=int, required=True)
ap.add_argument("--vitals", required=True)
ap.add_argument("--parts", required=True, help="the snap_parts helper")
ap.add_argument("--floor", required=True, help="the snap_floor helper")
ap.add_argument("--strace", type=int, required=True, help="1: strace is there to record the floor's reads")
ap.add_argument("--big", required=True, help="pid threads rss_kb maps_lines")
ap.add_argument("--ref", required=True, help="pid threads rss_kb maps_lines")
ap.add_argument("--tiny", required=True, help="pid of a tiny process")
ap.add_argument("--pidstat", type=int, required=True)
ap.add_argument("--pmap", type=int, required=True)
ap.add_argument("--tmp", required=True)
a = ap.parse_args()

big_pid, big_threads, big_rss_kb, big_maps = a.big.split()
ref_pid, ref_threads, ref_rss_kb, ref_maps = a.ref.split()
big_threads, ref_threads = int(big_threads), int(ref_threads)   # /proc Threads: with main
extra_threads = big_threads - ref_threads
ENV = dict(os.environ, LC_ALL="C")
notes = []


def fail(msg):
    print("bench/snap: " + msg, file=sys.stderr)
    sys.exit(2)


def cpu_ms(argv, partial_ok):
    """Run argv once, stdout to /dev/null; its user+sys CPU in ms."""
    errpath = os.path.join(a.tmp, "stderr")
    with open(os.devnull, "wb") as null, open(errpath, "wb") as err:
        proc = subprocess.Popen(argv, stdout=null, stderr=err, env=ENV)
        _, status, ru = os.wait4(proc.pid, 0)
        proc.returncode = code = os.waitstatus_to_exitcode(status)
    if code != 0 and not (partial_ok and code == 1):
        fail("'%s' exited with status %d: %s" % (" ".join(argv), code,
                                                 open(errpath).read().strip()))
    if code == 1:
        note = "'%s' exited 1 (partial: something could not be read), so it did less work" % (
            " ".join(argv))
        if note not in notes:
            notes.append(note)
    return (ru.ru_utime + ru.ru_stime) * 1000.0


def measure(cmds, runs):
    """cmds: {key: (argv, partial_ok)} -> {key: [ms, ...]}, runs interleaved."""
    for argv, partial_ok in cmds.values():
        cpu_ms(argv, partial_ok)   # warm-up: dentries, page cache
    out = {key: [] for key in cmds}
    for _ in range(runs):
        for key, (argv, partial_ok) in cmds.items():
            out[key].append(cpu_ms(argv, partial_ok))
    return out


def ms(x):
    return "—" if x is None else "%.2f ms" % x if x < 10 else "%.1f ms" % x if x < 100 else \
        "%.0f ms" % x


def us(x):
    return "—" if x is None else "%.1f µs" % x if x < 1000 else "%.0f µs" % x


def ratio(x, y):
    if x is None or not y:
        return "—"
    return "%.3fx" % (x / y) if x / y < 0.1 else "%.2fx" % (x / y)


def row(cols, widths):
    return "".join(c.ljust(w) if i == 0 else c.rjust(w)
                   for i, (c, w) in enumerate(zip(cols, widths))).rstrip()


def trace_floor(name, argv):
    """Run argv once under strace; write the floor's ops for it; returns (ops path, ops)."""
    log = os.path.join(a.tmp, name + ".strace")
    with open(os.devnull, "wb") as null:
        rc = subprocess.run(["strace", "-y", "-o", log] + argv, stdout=null, stderr=null,
                            env=ENV).returncode
    if rc not in (0, 1):
        fail("'strace %s' exited %d" % (" ".join(argv), rc))
    try:
        ops = floor_ops(log)
    except ValueError as e:
        fail(str(e))
    if not any(o.endswith("/stat") for o in ops) or not any(o.endswith("/maps") for o in ops):
        fail("the trace of '%s' shows no read of stat and maps: %s" % (" ".join(argv), log))
    path = os.path.join(a.tmp, name + ".ops")
    with open(path, "w") as f:
        f.write("\n".join(ops) + "\n")
    return path, ops


def only_stat_status_maps(name, ops):
    """The issue's first floor: the same program reading /proc/PID/{stat,status,maps} only."""
    keep = [o for o in ops if re.match(r"read /proc/+\d+/+(stat|status|maps)$", o)]
    if len(keep) != 3:
        fail("the trace of snap --light reads %d of /proc/PID/stat, status and maps, not 3: %s"
             % (len(keep), keep))
    path = os.path.join(a.tmp, name + ".ops")
    with open(path, "w") as f:
        f.write("\n".join(keep) + "\n")
    return path


# ---- whole invocations -----------------------------------------------------
V = a.vitals
load_before = os.getloadavg()
floors = {}
if a.strace:
    # The trace records the steady state the timed runs see: the allocator's
    # detection remembered (alloc/detect_cache.h) by one untraced run first.
    for pid in (big_pid, a.tiny):
        with open(os.devnull, "wb") as null:
            subprocess.run([V, "snap", "--light", pid], stdout=null, stderr=null, env=ENV)
    ops_big, ops_big_list = trace_floor("floor_big", [V, "snap", "--light", big_pid])
    ops_tiny, ops_tiny_list = trace_floor("floor_tiny", [V, "snap", "--light", a.tiny])
    floors = {
        "floor": ([a.floor, ops_big], False),
        "floor_min": ([a.floor, only_stat_status_maps("floor_big_min", ops_big_list)], False),
        "floor_tiny": ([a.floor, ops_tiny], False),
    }
runs = measure({
    "light": ([V, "snap", "--light", big_pid], True),
    "full": ([V, "snap", big_pid], True),
    "light_ref": ([V, "snap", "--light", ref_pid], True),
    "full_ref": ([V, "snap", ref_pid], True),
    "light_tiny": ([V, "snap", "--light", a.tiny], True),
    "full_tiny": ([V, "snap", a.tiny], True),
    "true": (["/bin/true"], False),
    "version": ([V, "--version"], False),
    **floors,
}, a.runs)
tools = {}
if a.pidstat:
    tools["pidstat"] = (["pidstat", "-r", "-u", "-w", "-t", "-p", big_pid, "1", "1"], False)
    tools["pidstat_ref"] = (["pidstat", "-r", "-u", "-w", "-t", "-p", ref_pid, "1", "1"], False)
if a.pmap:
    tools["pmap"] = (["pmap", "-X", big_pid], False)
if tools:
    runs.update(measure(tools, a.tool_runs))
m = {k: statistics.median(v) for k, v in runs.items()}
mx = {k: max(v) for k, v in runs.items()}
pid_ms, pmap_ms = m.get("pidstat"), m.get("pmap")

# ---- the parts, through the library: what read_threads() etc. cost ----------
parts_iters = max(a.runs, 5)
out = subprocess.run([a.parts, big_pid, str(parts_iters)], env=ENV, capture_output=True, text=True)
if out.returncode:
    fail("snap_parts failed: " + out.stderr.strip())
part = {}
for line in out.stdout.splitlines():
    k, *vals = line.split()
    part[k] = [float(x) for x in vals]
anon_rw = int(part["anon_rw"][0])

# ---- report ----------------------------------------------------------------
print("bench/snap — target: %d threads + main, %s mappings, %.2f GiB resident (pid %s), %d runs"
      " (%d of pidstat and pmap -X)"
      % (big_threads - 1, big_maps, int(big_rss_kb) / 1048576, big_pid, a.runs, a.tool_runs))
print("  /proc/%s/status: Threads %d, VmRSS %s kB; maps: %s lines.  Reference (pid %s), 1 thread:"
      " Threads %d, VmRSS %s kB, %s lines" % (big_pid, big_threads, big_rss_kb, big_maps, ref_pid,
                                             ref_threads, ref_rss_kb, ref_maps))
print("  %d CPUs, kernel %s.  CPU = user+sys of each run (wait4 rusage); medians."
      % (os.cpu_count(), os.uname().release))
load_after = os.getloadavg()
print("  load average %.2f %.2f %.2f before the runs, %.2f %.2f %.2f after (2 CPUs shared: compare"
      " ratios, not times)" % (load_before + load_after))
print()

W = (42, 12, 11, 12, 12, 9)
print(row(("one invocation", "CPU median", "CPU max", "vs pidstat", "vs pmap -X", "goal"), W))
for label, key, goal in [
    ("vitals snap --light", "light", "< 3 ms"),
    ("vitals snap", "full", "< 40 ms"),
    ("pidstat -r -u -w -t -p PID 1 1", "pidstat", ""),
    ("pmap -X PID", "pmap", ""),
    ("same maps, 1 thread: vitals snap --light", "light_ref", ""),
    ("same maps, 1 thread: vitals snap", "full_ref", ""),
    ("same maps, 1 thread: pidstat -t", "pidstat_ref", ""),
    ("a `sleep`: vitals snap --light", "light_tiny", ""),
    ("a `sleep`: vitals snap", "full_tiny", ""),
]:
    if key not in m:
        print(row((label, "skipped", "", "", "", goal), W))
        continue
    print(row((label, ms(m[key]), ms(mx[key]), "" if key == "pidstat" else ratio(m[key], pid_ms),
               "" if key == "pmap" else ratio(m[key], pmap_ms), goal), W))
print()

# per thread, in µs
pt = {
    "stat": (part["stat"][0], part["stat"][1]),
    "stat_sys": (part["stat"][0] + part["syscall"][0], part["stat"][1] + part["syscall"][1]),
    "diff_light": ((m["light"] - m["light_ref"]) * 1000 / extra_threads, None),
    "diff_full": ((m["full"] - m["full_ref"]) * 1000 / extra_threads, None),
    "total_light": (m["light"] * 1000 / big_threads, mx["light"] * 1000 / big_threads),
    "total_full": (m["full"] * 1000 / big_threads, mx["full"] * 1000 / big_threads),
}
if pid_ms is not None:
    pt["pidstat"] = (pid_ms * 1000 / big_threads, mx["pidstat"] * 1000 / big_threads)
    pt["pidstat_diff"] = ((pid_ms - m["pidstat_ref"]) * 1000 / extra_threads, None)
pid_pt = pt["pidstat"][0] if "pidstat" in pt else None

W2 = (54, 12, 11, 12, 9)
print(row(("per thread", "CPU median", "CPU max", "vs pidstat", "goal"), W2))
for label, key, goal in [
    ("vitals, task/TID/stat [parts]", "stat", "<= 0.2x"),
    ("vitals full, task/TID/stat + syscall [parts]", "stat_sys", ""),
    ("vitals snap --light [difference]", "diff_light", ""),
    ("vitals snap [difference]", "diff_full", ""),
    ("pidstat -t, its CPU / threads", "pidstat", ""),
    ("pidstat -t [difference]", "pidstat_diff", ""),
    ("vitals snap --light, its CPU / threads", "total_light", ""),
    ("vitals snap, its CPU / threads", "total_full", ""),
]:
    if key not in pt:
        print(row((label, "skipped", "", "", goal), W2))
        continue
    v, vmax = pt[key]
    print(row((label, us(v), us(vmax), "" if key == "pidstat" else ratio(v, pid_pt), goal), W2))
print("  [parts]: bench/snap_parts.c opens /proc/PID once and makes read_threads()'s calls")
print("  (vt_task_list, vt_read_at, vt_proc_stat_parse, vt_syscall_parse_sp) %d times; includes"
      % parts_iters)
print("  listing task/ (%s per listing).  [difference]: (this target - the 1-thread one) / %d threads."
      % (us(part["list"][0]), extra_threads))
print()

# where a snapshot's CPU goes: the parts, same calls as src/sample/sample.c
stat_ms = part["stat"][0] * big_threads / 1000
sys_ms = part["syscall"][0] * big_threads / 1000
probe_light = probe_full = anon_rw    # anonymous rw-p mappings >= 128 KiB (glibc's mmap floor)
W3 = (66, 11, 11)
print(row(("where the CPU goes (medians of the parts)", "--light", "full"), W3))
breakdown = [
    ("fixed: exec, libraries, ELF scan, small files (on a `sleep`)", m["light_tiny"],
     m["full_tiny"]),
    ("threads: list task/, read+parse %d x task/TID/stat" % big_threads, None, stat_ms),
    ("threads: read+parse %d x task/TID/syscall" % big_threads, None, sys_ms),
    ("maps / smaps: the kernel producing the text (read)", part["maps_read"][0] / 1000,
     part["smaps_read"][0] / 1000),
    ("maps / smaps: vt_maps_parse", part["maps_parse"][0] / 1000, part["smaps_parse"][0] / 1000),
    ("memory probes: process_vm_readv x %d anon rw-p mappings >= 128 KiB" % probe_light,
     part["probe"][0] * probe_light / 1000, part["probe"][0] * probe_full / 1000),
    ("vt_regions_classify without memory reads (full: + thread SPs)",
     part["classify_light"][0] / 1000, part["classify_full"][0] / 1000),
]
for label, l, f in breakdown:
    print(row((label, ms(l), ms(f)), W3))
sum_l = sum(l or 0 for _, l, _ in breakdown)
sum_f = sum(f or 0 for _, _, f in breakdown)
print(row(("rest: measured minus the above (noise included)", ms(m["light"] - sum_l),
           ms(m["full"] - sum_f)), W3))
print(row(("measured: vitals snap [--light]", ms(m["light"]), ms(m["full"])), W3))
floor_l = m["true"] + part["maps_read"][0] / 1000
floor_f = m["true"] + part["smaps_read"][0] / 1000
print(row(("lower bound: exec of /bin/true (%s) + the kernel's read" % ms(m["true"]), ms(floor_l),
           ms(floor_f)), W3))
print()


def verdict(ok):
    return "met" if ok else "NOT met"


# snap --light beside its floor, and start-up beside /bin/true
W4 = (58, 11, 11, 9, 10)
print(row(("snap --light beside its floor (same runs)", "vitals", "floor", "ratio", "goal"), W4))
if floors:
    print(row(("big target (%d threads, %s maps lines)" % (big_threads, big_maps), ms(m["light"]),
               ms(m["floor"]), ratio(m["light"], m["floor"]), "<= 1.3x"), W4))
    print(row(("a `sleep`", ms(m["light_tiny"]), ms(m["floor_tiny"]),
               ratio(m["light_tiny"], m["floor_tiny"]), ""), W4))
    print(row(("big target, floor reading only stat, status and maps", ms(m["light"]),
               ms(m["floor_min"]), ratio(m["light"], m["floor_min"]), ""), W4))
    print("  floor: bench/snap_floor.c, libc only, reads what `vitals snap --light` read in a traced run"
          " (strace -y),")
    print("  each file, range, directory, link and memory range once (%d reads on the big target, %d"
          " on the `sleep`:" % (len(ops_big_list), len(ops_tiny_list)))
    print("  %s) and parses nothing." % ", ".join(sorted({o.split()[0] for o in ops_big_list})))
else:
    print("  skipped: no strace (apt-get install strace)")
print(row(("start-up: vitals --version beside /bin/true", ms(m["version"]), ms(m["true"]),
           ratio(m["version"], m["true"]), "<= 1.5x"), W4))
print()

print("summary (medians on this machine; noisy: compare ratios, not absolute times)")
if floors:
    r = m["light"] / m["floor"]
    print("  snap --light        %.2fx its floor (%s / %s), goal <= 1.3x: %s"
          % (r, ms(m["light"]), ms(m["floor"]), verdict(r <= 1.3)))
r = m["version"] / m["true"]
print("  start-up            %.2fx /bin/true (vitals --version %s / %s), goal <= 1.5x: %s"
      % (r, ms(m["version"]), ms(m["true"]), verdict(r <= 1.5)))
for label, key, goal in (("vitals snap --light", "light", 3), ("vitals snap", "full", 40)):
    vs = ", ".join("%s %s" % (ratio(m[key], m[t]), name)
                   for name, t in (("pidstat", "pidstat"), ("pmap -X", "pmap")) if t in m)
    print("  %-20s %8s CPU%s" % (label, ms(m[key]), " = " + vs if vs else ""))
    print("  %-20s goal < %d ms: %s (%.1fx the goal; lower bound here %s)"
          % ("", goal, verdict(m[key] < goal), m[key] / goal,
             ms(floor_l if key == "light" else floor_f)))
if pid_pt is not None:
    f = pid_pt / pt["stat"][0]
    print("  per thread: vitals %s (task/TID/stat), pidstat -t %s: %.1fx cheaper, goal >= 5x  %s"
          % (us(pt["stat"][0]), us(pid_pt), f, verdict(f >= 5)))
    print("              full snapshot %s (stat + syscall): %.1fx cheaper"
          % (us(pt["stat_sys"][0]), pid_pt / pt["stat_sys"][0]))
else:
    print("  per thread: pidstat comparison skipped (install sysstat (apt-get install sysstat))")
print("  a %d-thread snapshot in total: %s per thread with --light, %s full"
      % (big_threads, us(pt["total_light"][0]), us(pt["total_full"][0])))
for n in notes:
    print("  note: " + n)

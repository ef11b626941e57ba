"""bench/profile.py — the measuring half of bench/profile, which builds and
starts targets/profile_work, then runs this.  Not meant to be run by hand.

Modes, each run --runs times, interleaved (the order rotates every round):

  idle         nothing samples the target
  vitals       vitals profile --for D --hz HZ --json --folded FILE PID
  perf dwarf   perf record -e cpu-clock -F HZ --call-graph dwarf -p PID -- sleep D,
               then perf report --stdio (timed) and perf script (not timed)
  perf -g      the same with -g (frame pointers)

D is --seconds + 2.  Once the profiler has its perf events open (seen in
/proc/PROFILER/fd), 0.5 s later, SIGUSR1 marks the start of the window in the
target's truth, and --seconds later a second SIGUSR1 marks its end, while the
profiler still samples.  Throughput is the target's work units ("rounds")
per CPU second of the threads doing them, per kind of work; CPU of a command
is user + sys from wait4()'s rusage (its children included).
"""
import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True     # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
import profile_truth  # noqa: E402  (tests/integration/profile_truth.py)

ap = argparse.ArgumentParser()
ap.add_argument("--vitals", required=True)
ap.add_argument("--pid", type=int, required=True)
ap.add_argument("--target", required=True, help="the target's binary")
ap.add_argument("--truth", required=True)
ap.add_argument("--seconds", type=int, required=True)
ap.add_argument("--runs", type=int, required=True)
ap.add_argument("--hz", type=int, required=True)
ap.add_argument("--perf", type=int, required=True)
ap.add_argument("--tmp", required=True)
a = ap.parse_args()

PID = a.pid
D = a.seconds + 2                      # each profiler samples this long
ENV = dict(os.environ, LC_ALL="C")
BUILDID = os.path.join(a.tmp, "buildid")   # perf's build-id cache, not ~/.debug
PERF = ["perf", "--buildid-dir", BUILDID]
PERF_MODES = ["perf_dwarf", "perf_fp"] if a.perf else []
MODES = ["idle", "vitals", "vitals_ptrace"] + PERF_MODES
LABEL = {"idle": "idle (nothing samples)",
         "vitals": "vitals profile",
         "vitals_ptrace": "vitals profile --method ptrace",
         "perf_dwarf": "perf record --call-graph dwarf",
         "perf_fp": "perf record -g"}
live = []          # profilers running now: killed on the way out
marks = 0          # SIGUSR1s sent to the target


def fail(msg):
    try:        # a profiler that fails because the target died: say so
        with open("/proc/%d/stat" % PID) as f:
            gone = f.read().rpartition(")")[2].split()[0] in "ZX"
    except OSError:
        gone = True
    if gone:
        try:
            err = open(os.path.join(a.tmp, "target.err"), errors="replace").read().strip()
        except OSError:
            err = ""
        msg += "\n  the target (pid %d) has exited: %s" % (PID, err[-500:] or "it said nothing; killed?")
    print("bench/profile: " + msg, file=sys.stderr)
    sys.exit(2)


# ---- the target's truth ----

truth_seen = {"offset": 0, "lines": []}


def truth_lines():
    """The truth file's complete lines, read on from where the last call stopped."""
    try:
        with open(a.truth, "rb") as f:
            f.seek(truth_seen["offset"])
            data = f.read()
    except OSError:
        return truth_seen["lines"]
    end = data.rfind(b"\n") + 1          # a line still being written waits
    for line in data[:end].decode(errors="replace").splitlines():
        if line.startswith("{"):
            try:
                truth_seen["lines"].append(json.loads(line))
            except ValueError:
                pass
    truth_seen["offset"] += end
    return truth_seen["lines"]


def mark():
    """SIGUSR1 to the target; the truth line it writes."""
    global marks
    os.kill(PID, signal.SIGUSR1)
    marks += 1
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        for line in truth_lines():
            if line.get("mark") == marks:
                return line
        time.sleep(0.02)
    fail("the target wrote no truth line for mark %d" % marks)


def window(t0, t1):
    """Per work kind: (CPU s, rounds) between two truth lines."""
    before = {th["tid"]: th for th in t0["threads"]}
    out = {}
    for th in t1["threads"]:
        if "rounds" not in th or th["tid"] not in before:
            continue
        p = before[th["tid"]]
        out[th["kind"]] = (th["cpu_s"] - p["cpu_s"], th["rounds"] - p["rounds"])
    if not out:
        fail("the truth has no work threads with rounds")
    return out


# ---- running commands ----

def start(argv, out, err):
    with open(out, "wb") as o, open(err, "wb") as e:
        proc = subprocess.Popen(argv, stdout=o, stderr=e, env=ENV)
    live.append(proc)
    return proc


def reap(proc, argv, errpath, nohang=False):
    """wait4 the child: None while it runs (nohang), else (exit code, rusage)."""
    pid, status, ru = os.wait4(proc.pid, os.WNOHANG if nohang else 0)
    if pid == 0:
        return None
    proc.returncode = code = os.waitstatus_to_exitcode(status)
    live.remove(proc)
    if code != 0:
        fail("'%s' exited with status %d: %s" % (
            " ".join(argv), code, open(errpath, errors="replace").read().strip()[-1500:]))
    return code, ru


def cpu_ms(ru):
    return (ru.ru_utime + ru.ru_stime) * 1000.0


def run(argv, out=os.devnull):
    """Run argv to the end; (CPU ms, peak RSS KiB)."""
    errpath = os.path.join(a.tmp, "stderr")
    proc = start(argv, out, errpath)
    _, ru = reap(proc, argv, errpath)
    return cpu_ms(ru), ru.ru_maxrss


def perf_fds(pid):
    n = 0
    try:
        for fd in os.listdir("/proc/%d/fd" % pid):
            try:
                if os.readlink("/proc/%d/fd/%s" % (pid, fd)) == "anon_inode:[perf_event]":
                    n += 1
            except OSError:
                pass
    except OSError:
        pass
    return n


def sampled_window(argv, out, err, perf_events=True):
    """Start a profiler, mark a window of --seconds while it samples; the
    window's two truth lines and (exit code, rusage) of the profiler.
    Sampling has begun once the profiler holds a perf event fd; one that
    holds none after 10 s, or one without perf events (perf_events False:
    vitals --method ptrace, which starts within 0.5 s), is taken as sampling
    from then on."""
    proc = start(argv, out, err)
    deadline = time.monotonic() + (10 if perf_events else 0.5)
    with_fds = True
    while perf_fds(proc.pid) == 0:
        if reap(proc, argv, err, nohang=True):
            fail("'%s' ended before its window: %s" % (
                " ".join(argv), open(err, errors="replace").read().strip()[-1500:]))
        if time.monotonic() > deadline:
            with_fds = False
            break
        time.sleep(0.02)
    time.sleep(0.5)
    t0 = mark()
    time.sleep(a.seconds)
    if (with_fds and perf_fds(proc.pid) == 0) or reap(proc, argv, err, nohang=True):
        fail("'%s' stopped sampling before the window's end" % " ".join(argv))
    t1 = mark()
    return t0, t1, reap(proc, argv, err)


def count_samples(stderr_path):
    """perf record's '(N samples)' on stderr."""
    try:
        text = open(stderr_path, errors="replace").read()
    except OSError:
        return None
    m = re.search(r"\((\d+) samples\)", text)
    return int(m.group(1)) if m else None


def one(mode, tag, timed=True):
    """One run of a mode; a dict of what it measured."""
    r = {"mode": mode}
    began = time.monotonic()
    base = os.path.join(a.tmp, "%s.%s" % (mode, tag))
    if mode == "idle":
        t0 = mark()
        time.sleep(a.seconds)
        t1 = mark()
    elif mode in ("vitals", "vitals_ptrace"):
        argv = [a.vitals, "profile", "--for", "%ds" % D, "--hz", str(a.hz), "--json",
                "--folded", base + ".folded", str(PID)]
        if mode == "vitals_ptrace":
            argv[2:2] = ["--method", "ptrace"]
        t0, t1, (_, ru) = sampled_window(argv, base + ".json", base + ".err",
                                         perf_events=mode == "vitals")
        r["cpu"], r["rss"] = cpu_ms(ru), ru.ru_maxrss
        r["wall"] = time.monotonic() - began
        try:
            j = json.load(open(base + ".json"))
        except (OSError, ValueError) as e:
            fail("vitals profile --json: %s" % e)
        ov = j.get("overhead") or {}
        r["stated"] = ov.get("fraction")
        r["stated_how"] = ov.get("how")
        r["self_cpu"] = j.get("vitals_cpu_s")
        r["method"] = j.get("method")
        r["samples"] = (j.get("samples") or {}).get("kept")
        r["lost"] = (j.get("samples") or {}).get("lost")
        r["stacks"] = base + ".folded"
    else:
        data = base + ".data"
        argv = PERF + ["record", "-e", "cpu-clock", "-F", str(a.hz)] + \
            (["--call-graph", "dwarf"] if mode == "perf_dwarf" else ["-g"]) + \
            ["-p", str(PID), "-o", data, "--", "sleep", str(D)]
        t0, t1, (_, ru) = sampled_window(argv, os.devnull, base + ".err")
        r["cpu_record"], r["rss_record"] = cpu_ms(ru), ru.ru_maxrss
        r["samples"] = count_samples(base + ".err")
        r["data_bytes"] = os.path.getsize(data)
        r["cpu_report"], r["rss_report"] = run(PERF + ["report", "-i", data, "--stdio"])
        r["cpu"] = r["cpu_record"] + r["cpu_report"]
        r["wall"] = time.monotonic() - began
        r["rss"] = max(r["rss_record"], r["rss_report"])
        run(PERF + ["script", "-i", data], out=base + ".script")
        r["stacks"] = base + ".script"
        os.unlink(data)
    r["window"] = window(t0, t1)
    r["truth"] = profile_truth.truth_shares(t0, t1)
    return r


# ---- the figures ----

def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def pct(x, signed=True):
    return "—" if x is None else ("%+.2f%%" if signed else "%.2f%%") % (100 * x)


def ms(x):
    return "—" if x is None else "%.0f ms" % x if x >= 100 else "%.1f ms" % x


def mib(kib):
    return "—" if kib is None else "%.1f MiB" % (kib / 1024)


def ratio(x, y):
    return "—" if x is None or not y or y <= 0 else "%.2fx" % (x / y)


def main():
    kinds = None
    if a.runs > 1:      # warm-up, not counted: page cache, perf's build-id cache
        for mode in MODES[1:]:
            one(mode, "warmup")
    results = {m: [] for m in MODES}
    for i in range(a.runs):
        order = MODES[i % len(MODES):] + MODES[:i % len(MODES)]
        for mode in order:
            results[mode].append(one(mode, str(i)))

    # Throughput: CPU per work unit, per kind, against the idle run of the
    # same round (the machine's load drifts; a round is close in time).
    kinds = sorted(results["idle"][0]["window"])
    idle_cpu = {k: sum(r["window"][k][0] for r in results["idle"]) for k in kinds}
    weight = {k: idle_cpu[k] / sum(idle_cpu.values()) for k in kinds}

    def cost(r, k):
        cpu, rounds = r["window"][k]
        return cpu / rounds if rounds > 0 else None

    def slow_kind(r, ref, k):
        c, c0 = cost(r, k), cost(ref, k)
        return c / c0 - 1 if c and c0 else None

    def slow_all(r, ref):       # CPU-weighted: the extra CPU the same work took
        s = [slow_kind(r, ref, k) for k in kinds]
        return None if None in s else sum(weight[k] * x for k, x in zip(kinds, s))

    idle = results["idle"]
    slow = {m: med([slow_all(r, idle[i]) for i, r in enumerate(results[m])]) for m in MODES}
    slow_k = {m: {k: med([slow_kind(r, idle[i], k) for i, r in enumerate(results[m])])
                  for k in kinds} for m in MODES}
    # noise: one idle run against the one before it; a median of R runs
    # resolves about noise / sqrt(R)
    pairs = [(idle[i], idle[i - 1]) for i in range(1, len(idle))]
    noise = med([abs(slow_all(x, y)) for x, y in pairs if slow_all(x, y) is not None])
    noise_k = {k: med([abs(slow_kind(x, y, k)) for x, y in pairs
                       if slow_kind(x, y, k) is not None]) for k in kinds}
    resolution = noise / len(idle) ** 0.5 if noise is not None else None

    t = results["idle"][0]["truth"]["window"]
    print("bench/profile — target %s (pid %d), %s" % (
        os.path.basename(a.target), PID,
        "with frame pointers (except glibc and frameless leaves)" if a.target.endswith("-fp")
        else "built without frame pointers"))
    print("  threads net, fs, parse, hash, malloc paced to their share of a core (%.2f cores here)" %
          (t["cpu_s"] / t["seconds"] if t["seconds"] else 0))
    print("  %d runs of each mode, interleaved; window %d s inside %d s of sampling at %d Hz "
          "per thread (cpu-clock)" % (a.runs, a.seconds, D, a.hz))
    print("  %d CPUs, kernel %s.  Medians.  vitals copies 16 KiB of user stack a sample, "
          "perf --call-graph dwarf 8 KiB" % (os.cpu_count(), os.uname().release))
    print("  vitals sampled with: %s" % (results["vitals"][0].get("method") or "?"))
    if not a.perf:
        print("  perf is missing or cannot sample here: the perf comparisons are skipped")

    # ---- 1. overhead on the target ----
    print("\n1. overhead on the target: CPU per work unit, against the idle runs (CPU-weighted over kinds)")
    print("   %-32s %9s" % ("", "all") + "".join("%9s" % k for k in kinds))
    print("   %-32s %9s" % ("idle: units per CPU-second", "") +
          "".join("%9.0f" % (1 / med([cost(r, k) for r in idle])) for k in kinds))
    for m in MODES[1:]:
        row = "   %-32s %9s" % (LABEL[m], pct(slow[m]))
        for k in kinds:
            row += "%9s" % pct(slow_k[m][k])
        print(row)
    print("   %-32s %9s" % ("noise: idle run vs the one before", pct(noise, signed=False)) +
          "".join("%9s" % pct(noise_k[k], signed=False) for k in kinds))
    if resolution is None:
        print("   (the noise needs --runs 2 or more)")
    else:
        print("   (median of |difference|; a median of %d runs resolves about ±%.2f%% of \"all\")"
              % (len(idle), 100 * resolution))
    stated = med([r["stated"] for r in results["vitals"]])
    how = results["vitals"][len(results["vitals"]) // 2].get("stated_how")
    print("   vitals says its overhead was %s (%s); measured here %s" % (
        pct(stated, signed=False), how or "not stated", pct(slow["vitals"])))
    for m in PERF_MODES:
        sv, sp = slow["vitals"], slow[m]
        if sv is None or sp is None:
            continue
        if sv > 0 and sp > 0:
            text = "%.2fx" % (sv / sp)
        else:
            text = "— (a slowdown not above zero has no ratio)"
        if resolution is not None and max(abs(sv), abs(sp)) < 2 * resolution:
            text += "; both within the noise"
        print("   vitals / %-30s slowdown %s" % (LABEL[m], text))

    # ---- 2. cost to the user ----
    print("\n2. cost to the user: CPU (user+sys, wait4) of one %d s profile, to a table; peak RSS" % D)
    print("   %-40s %10s %10s %10s %8s" % ("", "CPU", "peak RSS", "samples", "wall"))

    def line(label, cpu, rss, samples=None, wall=None):
        print("   %-40s %10s %10s %10s %8s" % (label, ms(cpu), mib(rss),
                                               "" if samples is None else "%.0f" % samples,
                                               "" if wall is None else "%.1f s" % wall))

    vr = results["vitals"]
    vcpu = med([r["cpu"] for r in vr])
    line("vitals profile (sample, unwind, table)", vcpu, med([r["rss"] for r in vr]),
         med([r["samples"] for r in vr]), med([r["wall"] for r in vr]))
    own = med([1000 * r["self_cpu"] for r in vr if r["self_cpu"] is not None])
    print("   %-40s %10s" % ("  while sampling (its vitals_cpu_s)", ms(own)))
    print("   %-40s %10s" % ("  the rest: start, calibration, output", ms(
        med([r["cpu"] - 1000 * r["self_cpu"] for r in vr if r["self_cpu"] is not None]))))
    vp = results["vitals_ptrace"]
    line(LABEL["vitals_ptrace"], med([r["cpu"] for r in vp]), med([r["rss"] for r in vp]),
         med([r["samples"] for r in vp]), med([r["wall"] for r in vp]))
    for m in PERF_MODES:
        rs = results[m]
        line(LABEL[m], med([r["cpu_record"] for r in rs]), med([r["rss_record"] for r in rs]),
             med([r["samples"] for r in rs]))
        line("  + perf report --stdio", med([r["cpu_report"] for r in rs]), med([r["rss_report"] for r in rs]))
        pcpu = med([r["cpu"] for r in rs])
        line("  = together", pcpu, med([r["rss"] for r in rs]), None, med([r["wall"] for r in rs]))
        print("   %-40s %10s   (perf.data %.1f MiB)" % ("  vitals / together", ratio(vcpu, pcpu),
                                                       med([r["data_bytes"] for r in rs]) / 2**20))

    # ---- 3. accuracy ----
    print("\n3. accuracy: each work function's inclusive share of the on-CPU samples, pooled over the runs,")
    print("   beside the truth (its CPU over the process's CPU in the same windows); points")
    profiled = MODES[1:]
    pooled = {}
    for m in profiled:
        stacks, fn_cpu, total = [], {}, 0.0
        for r in results[m]:
            stacks += profile_truth.read_stacks(r["stacks"])
            total += r["truth"]["window"]["cpu_s"]
            for k in r["truth"]["kinds"].values():
                if k["function"]:
                    fn_cpu[k["function"]] = fn_cpu.get(k["function"], 0.0) + k["function_cpu_s"]
        fns = sorted(fn_cpu)
        got = profile_truth.stack_shares(stacks, fns)
        pooled[m] = {"samples": got["samples"], "got": got["inclusive_pct"],
                     "truth": {f: 100 * fn_cpu[f] / total if total else 0.0 for f in fns}}
    fns = sorted(pooled["vitals"]["truth"])
    head = "   %-18s %6s" % ("function", "truth")
    for m in profiled:
        head += " %12s %6s" % ({"vitals": "vitals", "vitals_ptrace": "ptrace", "perf_dwarf": "perf dwarf",
                                  "perf_fp": "perf -g"}[m], "diff")
    print(head)
    for f in fns:
        row = "   %-18s %6.1f" % (f, pooled["vitals"]["truth"][f])
        for m in profiled:
            g = pooled[m]["got"][f]
            row += " %12.1f %+6.1f" % (g, g - pooled[m]["truth"][f])
        print(row)
    row = "   %-25s" % "largest |diff|"
    for m in profiled:
        p = pooled[m]
        row += " %12s %6.1f" % ("", max(abs(p["got"][f] - p["truth"][f]) for f in fns))
    print(row)
    row = "   %-25s" % "samples"
    for m in profiled:
        row += " %12s %6d" % ("", pooled[m]["samples"])
    print(row)
    if "perf_fp" in pooled and not a.target.endswith("-fp"):
        print("   (perf -g walks frame pointers, which this build does not keep: its stacks stop early)")
    print("\nvitals profile: slowdown %s (with --method ptrace %s; perf dwarf %s, perf -g %s); "
          "CPU %s (perf dwarf + report %s)" % (
        pct(slow["vitals"]), pct(slow["vitals_ptrace"]), pct(slow.get("perf_dwarf")),
        pct(slow.get("perf_fp")), ms(vcpu),
        ms(med([r["cpu"] for r in results["perf_dwarf"]])) if "perf_dwarf" in results else "—"))


def on_term(signum, frame):
    sys.exit(128 + signum)


signal.signal(signal.SIGTERM, on_term)
try:
    main()
finally:
    for p in list(live):       # interrupted: end the profilers we started
        try:
            p.send_signal(signal.SIGINT)
            p.wait(timeout=3)
        except (OSError, subprocess.TimeoutExpired):
            try:
                p.kill()
                p.wait(timeout=3)
            except (OSError, subprocess.TimeoutExpired):
                pass

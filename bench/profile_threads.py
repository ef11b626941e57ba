"""bench/profile_threads.py — the measuring half of `bench/profile --threads N`,
which builds and starts targets/profile_work with N threads (one busy, the
rest asleep), then runs this.  Not meant to be run by hand.

What a profile costs the user on a process of many threads, mostly idle:
CPU (user + sys of wait4()'s rusage, children included) from the start of
sampling to a printed table, for

  vitals       vitals profile --for S --hz HZ PID            (its text table)
  perf -g      perf record -e cpu-clock -F HZ -g -p PID -- sleep S,
               then perf report --stdio                      (both counted)

--runs rounds, the two alternating which goes first, after one warm-up run
of each that is not counted (page cache, perf's build-id cache).  Prints each
run, the medians, the ratio vitals / perf, and the load average before and
after (the machine is shared: CPU figures hold up under load better than wall
times, but not entirely).
"""
import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import time

ap = argparse.ArgumentParser()
ap.add_argument("--vitals", required=True)
ap.add_argument("--pid", type=int, required=True)
ap.add_argument("--threads", type=int, required=True)
ap.add_argument("--seconds", type=int, required=True)
ap.add_argument("--runs", type=int, required=True)
ap.add_argument("--hz", type=int, required=True)
ap.add_argument("--tmp", required=True)
a = ap.parse_args()

PID = a.pid
ENV = dict(os.environ, LC_ALL="C")
PERF = ["perf", "--buildid-dir", os.path.join(a.tmp, "buildid")]   # not ~/.debug
live = []


def fail(msg):
    print("bench/profile --threads: " + msg, file=sys.stderr)
    sys.exit(2)


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def run(argv, out):
    """Run argv to its end, stdout to out; (CPU ms, peak RSS KiB, stderr text)."""
    err = os.path.join(a.tmp, "stderr")
    with open(out, "wb") as o, open(err, "wb") as e:
        proc = subprocess.Popen(argv, stdout=o, stderr=e, env=ENV)
    live.append(proc)
    _, status, ru = os.wait4(proc.pid, 0)
    proc.returncode = code = os.waitstatus_to_exitcode(status)
    live.remove(proc)
    text = open(err, errors="replace").read()
    if code != 0:
        fail("'%s' exited with status %d: %s" % (" ".join(argv), code, text.strip()[-1500:]))
    return (ru.ru_utime + ru.ru_stime) * 1000.0, ru.ru_maxrss, text


def one(mode, tag):
    base = os.path.join(a.tmp, "%s.%s" % (mode, tag))
    if mode == "vitals":
        cpu, rss, _ = run([a.vitals, "profile", "--for", "%ds" % a.seconds, "--hz", str(a.hz),
                           str(PID)], base + ".txt")
        m = re.search(r"samples\s+(\d+) kept", open(base + ".txt", errors="replace").read())
        return {"cpu": cpu, "rss": rss, "samples": int(m.group(1)) if m else None}
    data = base + ".data"
    rec, rss, text = run(PERF + ["record", "-e", "cpu-clock", "-F", str(a.hz), "-g",
                                 "-p", str(PID), "-o", data, "--", "sleep", str(a.seconds)],
                         os.devnull)
    m = re.search(r"\((\d+) samples\)", text)
    rep, rss2, _ = run(PERF + ["report", "-i", data, "--stdio"], base + ".txt")
    os.unlink(data)
    return {"cpu": rec + rep, "record": rec, "report": rep, "rss": max(rss, rss2),
            "samples": int(m.group(1)) if m else None}


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def main():
    modes = ["vitals", "perf"]
    load0 = loadavg()
    for m in modes:
        one(m, "warmup")
    res = {m: [] for m in modes}
    for i in range(a.runs):
        for m in (modes if i % 2 == 0 else modes[::-1]):
            res[m].append(one(m, str(i)))
    load1 = loadavg()
    print("bench/profile --threads %d — profile_work (pid %d): %d threads, one busy (parse, half a "
          "core), the rest asleep" % (a.threads, PID, len(os.listdir("/proc/%d/task" % PID))))
    print("  %d runs of each, alternating, after a warm-up of each; %d s at %d Hz; %d CPUs, kernel %s"
          % (a.runs, a.seconds, a.hz, os.cpu_count(), os.uname().release))
    print("  CPU = user + sys of wait4() (children included), from the start of sampling to a printed table")
    print("  load average before %s, after %s" % (load0, load1))
    print("\n   %-44s %s" % ("", "  ".join("%9s" % ("run %d" % (i + 1)) for i in range(a.runs))) +
          "  %9s %9s %8s" % ("median", "peak RSS", "samples"))

    def row(label, xs, rss=None, samples=None):
        print("   %-44s %s  %9s %9s %8s" % (
            label, "  ".join("%6.0f ms" % x for x in xs), "%.0f ms" % med(xs),
            "" if rss is None else "%.1f MiB" % (rss / 1024), "" if samples is None else "%.0f" % samples))

    v, p = res["vitals"], res["perf"]
    row("vitals profile --for %ds" % a.seconds, [r["cpu"] for r in v], med([r["rss"] for r in v]),
        med([r["samples"] for r in v]))
    row("perf record -g -p PID -- sleep %d" % a.seconds, [r["record"] for r in p], None,
        med([r["samples"] for r in p]))
    row("  + perf report --stdio", [r["report"] for r in p])
    row("  = perf together", [r["cpu"] for r in p], med([r["rss"] for r in p]))
    vm, pm = med([r["cpu"] for r in v]), med([r["cpu"] for r in p])
    ratios = [x["cpu"] / y["cpu"] for x, y in zip(v, p) if y["cpu"] > 0]
    print("\n   vitals / (perf record -g + perf report): %.2fx (medians; per round %s); goal <= 1.2x: %s"
          % (vm / pm, ", ".join("%.2fx" % r for r in ratios), "met" if vm / pm <= 1.2 else "NOT met"))
    print("   load average %s -> %s" % (load0, load1))


def on_term(signum, frame):
    sys.exit(128 + signum)


signal.signal(signal.SIGTERM, on_term)
try:
    main()
finally:
    for proc in list(live):
        try:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=3)
        except (OSError, subprocess.TimeoutExpired):
            try:
                proc.kill()
                proc.wait(timeout=3)
            except (OSError, subprocess.TimeoutExpired):
                pass

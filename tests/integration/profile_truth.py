#!/usr/bin/env python3
"""profile_truth.py: the shares targets/profile_work says it spent, and the
shares a profile of it shows, side by side (issue 13).  Python 3 stdlib only.

targets/profile_work runs one thread per kind of work (net, fs, parse, hash,
malloc), each in its own top function (work_net, work_fs_syscalls,
work_parse_json, work_hash_fnv, work_malloc_churn), and writes to its --truth
file (one JSON line per report; SIGUSR1 writes one at once, its "mark"
counting the SIGUSR1s) each thread's own CPU time (cpu_s) and the part of it
spent inside its top function (function_cpu_s, ~97% of it: the rest is the
pacing's sleep and wakeup).  Over a window between two truth lines, a kind's
share is its threads' CPU over all the threads' CPU (what a profile's
per-thread split should show) and its function's share is the function's CPU
over the same total (what the function's inclusive share of on-CPU samples
should be).

Usage:

  profile_truth.py truth TRUTH [--marks A B | --from T0 --to T1]
      The window's per-kind CPU shares, as JSON: {"window": {...}, "kinds":
      {"net": {"share_pct", "cpu_s", "cores", "function",
      "function_share_pct", "function_cpu_s", "threads"}, ..}} (idle and
      main have no function).
      The window is from the first truth line with "mark" A to the first with
      mark B (send SIGUSR1 at each end of the profile), or from the lines
      nearest t=T0 and t=T1 (seconds since the target started), or by
      default from the first line to the last.

  profile_truth.py stacks FILE [--function NAME]... [--top N]
      Per-function shares of the samples in FILE, as JSON: {"samples": N,
      "inclusive_pct": {fn: pct}, "self_pct": {fn: pct}, "threads_pct":
      {comm: pct}}.  FILE is `perf script` output (perf record -g or
      --call-graph dwarf|fp; "-" for stdin) or folded stacks, one
      "root;..;leaf COUNT" line per stack (vitals profile --folded, or
      stackcollapse-perf.pl).  A function's inclusive share counts each
      sample once however often it recurs in the stack; its self share
      counts the samples where it is the leaf.  Offsets (+0x1b) and
      perf's "[unknown]" frames are dropped from names.  With --function,
      only those functions (always listed, 0 when absent); else the --top N
      (default 30) by inclusive share.  threads_pct (perf script only) is
      each thread name's share of the samples.

  profile_truth.py compare TRUTH FILE [--marks A B | --from T0 --to T1]
                           [--tolerance PCT]
      Both of the above, and a table: per kind, the truth's function share
      and the top function's inclusive share in FILE, the truth's thread
      share and (perf script) the thread's share of samples, with the
      differences.  Exits 1 if any difference
      exceeds --tolerance points (default 3), else 0.

Example (perf as the independent witness):

  profile_work --truth T --seconds 30 >out & P=$!
  sleep 2; kill -USR1 $P
  perf record -e cpu-clock -F 499 --call-graph dwarf -p $P -o perf.data -- sleep 5
  kill -USR1 $P; sleep 0.2
  perf script -i perf.data >perf.txt
  profile_truth.py compare T perf.txt --marks 1 2

As a module: read_truth(), truth_shares(), read_stacks(), stack_shares().
"""
import argparse
import json
import re
import sys
from collections import Counter

# ---- The truth ----


def read_truth(path):
    """The truth file's complete JSON lines, in order."""
    lines = []
    with open(path) as f:
        for line in f:
            if not line.startswith("{"):
                continue
            try:
                lines.append(json.loads(line))
            except ValueError:
                pass        # a line still being written
    if not lines:
        raise SystemExit(f"{path}: no truth lines")
    return lines


def pick_window(lines, marks=None, t_from=None, t_to=None):
    """The two truth lines that bound the window."""
    if marks:
        def first(m):
            for line in lines:
                if line.get("mark") == m:
                    return line
            raise SystemExit(f"no truth line with mark {m}")
        return first(marks[0]), first(marks[1])
    if t_from is not None or t_to is not None:
        def nearest(t):
            return min(lines, key=lambda line: abs(line["t"] - t))
        a = nearest(t_from if t_from is not None else lines[0]["t"])
        b = nearest(t_to if t_to is not None else lines[-1]["t"])
        return a, b
    return lines[0], lines[-1]


def truth_shares(a, b):
    """Per-kind CPU between truth lines a and b (every thread, by tid)."""
    before = {th["tid"]: th for th in a["threads"]}
    kinds = {}
    total = 0.0
    for th in b["threads"]:
        prev = before.get(th["tid"])
        cpu = th["cpu_s"] - (prev["cpu_s"] if prev else 0.0)
        total += cpu
        k = kinds.setdefault(th["kind"], {"cpu_s": 0.0, "function": None,
                                          "function_cpu_s": None,
                                          "threads": []})
        k["cpu_s"] += cpu
        k["threads"].append(th["name"])
        if th.get("function"):
            k["function"] = th["function"]
            k["function_cpu_s"] = (k["function_cpu_s"] or 0.0) + \
                th["function_cpu_s"] - \
                (prev["function_cpu_s"] if prev else 0.0)
    dt = b["t"] - a["t"]

    def pct(x):
        return 100.0 * x / total if total > 0 else 0.0

    for k in kinds.values():
        k["share_pct"] = pct(k["cpu_s"])
        k["cores"] = k["cpu_s"] / dt if dt > 0 else 0.0
        k["function_share_pct"] = (pct(k["function_cpu_s"])
                                   if k["function"] else None)
    return {"window": {"t0": a["t"], "t1": b["t"], "seconds": dt,
                       "cpu_s": total},
            "kinds": kinds}


# ---- The stacks ----

# perf script's sample header: "comm [pid/]tid [cpu] time: [period] event:"
HEADER = re.compile(r"^(?P<comm>\S.*?)\s+(?:(?P<pid>-?\d+)/)?(?P<tid>-?\d+)\s+"
                    r"(?:\[\d+\]\s+)?\d+\.\d+:\s+(?:(?P<period>\d+)\s+)?\S+:")
# and a frame: "addr sym+off (dso)", leaf first
FRAME = re.compile(r"^\s+(?P<addr>[0-9a-fA-F]+)\s+(?P<sym>.*?)\s+\((?P<dso>.*)\)\s*$")
OFFSET = re.compile(r"\+0x[0-9a-fA-F]+$")


def clean(sym):
    sym = OFFSET.sub("", sym.strip())
    return None if sym in ("", "[unknown]") else sym


def parse_perf_script(text):
    """[(comm, frames leaf first, count)] from `perf script` output."""
    stacks = []
    comm, frames = None, []

    def flush():
        if comm is not None:
            stacks.append((comm, frames, 1))

    for line in text.splitlines():
        if not line.strip():
            continue
        if not line[0].isspace():
            m = HEADER.match(line)
            if m:
                flush()
                comm, frames = m.group("comm"), []
            continue
        m = FRAME.match(line)
        if m and comm is not None:
            sym = clean(m.group("sym"))
            if sym:
                frames.append(sym)
    flush()
    return stacks


def parse_folded(text):
    """[(None, frames leaf first, count)] from folded stacks."""
    stacks = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        stack, _, count = line.rpartition(" ")
        frames = [f for f in (clean(s) for s in stack.split(";")) if f]
        stacks.append((None, frames[::-1], int(count)))
    return stacks


def read_stacks(path):
    text = sys.stdin.read() if path == "-" else open(path).read()
    folded = all(re.match(r"^\S.* \d+$", line)
                 for line in text.splitlines() if line.strip())
    return parse_folded(text) if folded else parse_perf_script(text)


def stack_shares(stacks, functions=None, top=30):
    """Inclusive and self shares per function, thread shares, in percent."""
    total = sum(n for _, _, n in stacks)
    incl, self_, threads = Counter(), Counter(), Counter()
    for comm, frames, n in stacks:
        for fn in set(frames):
            incl[fn] += n
        if frames:
            self_[frames[0]] += n
        if comm is not None:
            threads[comm] += n

    def pct(c):
        return 100.0 * c / total if total else 0.0

    names = functions or [fn for fn, _ in incl.most_common(top)]
    out = {"samples": total,
           "inclusive_pct": {fn: pct(incl[fn]) for fn in names},
           "self_pct": {fn: pct(self_[fn]) for fn in names}}
    if threads:
        out["threads_pct"] = {c: pct(n) for c, n in threads.most_common()}
    return out


# ---- The commands ----


def window_args(p):
    p.add_argument("--marks", nargs=2, type=int, metavar=("A", "B"))
    p.add_argument("--from", dest="t_from", type=float, metavar="T0")
    p.add_argument("--to", dest="t_to", type=float, metavar="T1")


def cmd_truth(args):
    a, b = pick_window(read_truth(args.truth), args.marks, args.t_from,
                       args.t_to)
    json.dump(truth_shares(a, b), sys.stdout, indent=1)
    print()
    return 0


def cmd_stacks(args):
    json.dump(stack_shares(read_stacks(args.file), args.function, args.top),
              sys.stdout, indent=1)
    print()
    return 0


def cmd_compare(args):
    a, b = pick_window(read_truth(args.truth), args.marks, args.t_from,
                       args.t_to)
    truth = truth_shares(a, b)
    stacks = read_stacks(args.file)
    fns = [k["function"] for k in truth["kinds"].values() if k["function"]]
    prof = stack_shares(stacks, fns)
    threads = prof.get("threads_pct")
    worst = 0.0
    print(f"# window {truth['window']['seconds']:.2f} s, "
          f"{truth['window']['cpu_s']:.3f} CPU s; {prof['samples']} samples")
    print(f"{'kind':8} {'function':18} {'truth':>6} {'stacks':>6} {'diff':>6}"
          f"   {'thread':>6}" + (f" {'stacks':>6} {'diff':>6}" if threads
                                 else ""))
    for kind, k in sorted(truth["kinds"].items(),
                          key=lambda kv: -kv[1]["share_pct"]):
        fn = k["function"]
        row = f"{kind:8} {fn or '-':18}"
        if fn:
            got = prof["inclusive_pct"][fn]
            d = got - k["function_share_pct"]
            worst = max(worst, abs(d))
            row += f" {k['function_share_pct']:6.2f} {got:6.2f} {d:+6.2f}"
        else:
            row += f" {'':6} {'':6} {'':6}"
        row += f"   {k['share_pct']:6.2f}"
        if threads:
            got = sum(threads.get(name, 0.0) for name in k["threads"])
            d = got - k["share_pct"]
            worst = max(worst, abs(d))
            row += f" {got:6.2f} {d:+6.2f}"
        print(row)
    print(f"# largest difference {worst:.2f} points "
          f"(tolerance {args.tolerance:g})")
    return 1 if worst > args.tolerance else 0


def main():
    ap = argparse.ArgumentParser(
        description="profile_work's truth against a profile's stacks "
                    "(see the top of this file)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("truth")
    p.add_argument("truth")
    window_args(p)
    p.set_defaults(fn=cmd_truth)
    p = sub.add_parser("stacks")
    p.add_argument("file")
    p.add_argument("--function", action="append")
    p.add_argument("--top", type=int, default=30)
    p.set_defaults(fn=cmd_stacks)
    p = sub.add_parser("compare")
    p.add_argument("truth")
    p.add_argument("file")
    window_args(p)
    p.add_argument("--tolerance", type=float, default=3.0)
    p.set_defaults(fn=cmd_compare)
    args = ap.parse_args()
    return args.fn(args)


if __name__ == "__main__":
    sys.exit(main())

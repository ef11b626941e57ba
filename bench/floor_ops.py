"""bench/floor_ops.py — the reads a traced run made, as bench/snap_floor.c's
ops: the floor of a command is a program making the same reads and nothing
else (no parsing, no output), so that whatever the command costs beyond it
is its own doing.  Used by bench/snap (snap --light) and bench/threads
(threads -i 1s).

    python3 bench/floor_ops.py [--repeats] TRACE     (prints the ops)

TRACE is `strace -y -o TRACE COMMAND` output.  A file the command opened
relative to a directory fd is named DIR//NAME: the floor opens DIR once and
NAME in it, as the command did (a whole path walks every component again).
Without --repeats each file, range, directory, link and memory range is
read once (the same bytes read twice are the traced program's cost, not the
floor's: what snap needs).  With --repeats every read stays, in order: a
rate needs two reads of the same counters, so a sampler's floor reads them
as often as it did.
"""
import re
import sys


def floor_ops(log_path, repeats=False):
    """The reads a run traced with strace -y made once the dynamic loader was
    done, as bench/snap_floor.c's ops: each file, range, directory, link and
    memory range once (the same bytes read twice are the traced program's
    cost, not the floor's; every read, in order, with repeats); the loader
    opening libraries (dlopen too) is start-up, not a read.  Raises
    ValueError on a file that is not such a trace."""
    lines = open(log_path, errors="replace").read().splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith("set_robust_list(")), None)
    if start is None:
        raise ValueError("no set_robust_list( in %s: not strace -y output of a program" % log_path)
    fdpath, read_fds, ops, seen = {}, set(), [], set()
    fd_ops = {}     # with repeats: fd -> the indices of the ops its reads added

    def add(op, fd=None):
        if repeats or op not in seen:
            seen.add(op)
            ops.append(op)
            if fd is not None:
                fd_ops.setdefault(fd, []).append(len(ops) - 1)

    def dirpath(arg):
        d = re.match(r"(AT_FDCWD|\d+)<([^>]*)>", arg)
        if not d:
            return None
        return d.group(2) if d.group(1) == "AT_FDCWD" else fdpath.get(int(d.group(1)), d.group(2))

    def join(d, name):
        return name if name.startswith("/") else d.rstrip("/") + "/" + name

    def opened(arg, d, name):
        """An opened file's path; DIR//NAME when it was opened relative to a
        directory fd, so that the floor's kernel walks the same one component."""
        if name.startswith("/") or arg.startswith("AT_FDCWD"):
            return join(d, name)
        return d.rstrip("/") + "//" + name

    for l in lines[start + 1:]:
        m = re.match(r'openat\(([^,]+), "([^"]*)", [^)]*\) = (\d+)<', l)
        if m:
            d = dirpath(m.group(1))
            path = opened(m.group(1), d, m.group(2)) if d is not None else None
            if m.group(1).startswith("AT_FDCWD") and path and \
               re.search(r"\.so(\.[\d.]+)?$|^/etc/ld\.so\.cache$", path):
                path = None
            fdpath[int(m.group(3))] = path
            read_fds.discard(int(m.group(3)))
            fd_ops.pop(int(m.group(3)), None)
            continue
        m = re.match(r"(read|pread64|getdents64)\((\d+)<[^>]*>, ", l)
        if m:
            fd = int(m.group(2))
            path = fdpath.get(fd)
            if path is None:
                continue
            if m.group(1) == "pread64":
                r = re.search(r", (\d+), (\d+)\) = (\d+)$", l)
                if r and int(r.group(3)) > 0:
                    add("pread %s %s %s" % (path, r.group(2), r.group(3)), fd)
            elif fd not in read_fds:
                read_fds.add(fd)
                add(("read %s" if m.group(1) == "read" else "list %s") % path)
            continue
        m = re.match(r'(readlinkat|newfstatat)\(([^,]+), "([^"]+)", .* = (\d+)$', l)
        if m and (m.group(1) == "readlinkat" or m.group(4) == "0"):
            base = dirpath(m.group(2))
            if base is not None:
                add("%s %s" % ("readlink" if m.group(1) == "readlinkat" else "stat",
                               join(base, m.group(3))))
            continue
        m = re.match(r"process_vm_readv\((\d+), \[.*?\], \d+, \[(.*?)\], \d+, 0\) = \d+", l)
        if m:
            pairs = re.findall(r"iov_base=0x([0-9a-f]+), iov_len=(\d+)", m.group(2))
            if pairs:
                add("vm %s %s" % (m.group(1), " ".join("%s %s" % p for p in pairs)))
            continue
        m = re.match(r"close\((\d+)<", l)
        if m:
            # a file opened, read once from its start and closed (a thread's wchan read
            # by path) is what "read" does: the floor closes it too, rather than hold it
            idx = fd_ops.pop(int(m.group(1)), [])
            if repeats and len(idx) == 1 and re.match(r"pread \S+ 0 \d+$", ops[idx[0]]):
                ops[idx[0]] = "read " + ops[idx[0]].split()[1]
            fdpath.pop(int(m.group(1)), None)
            read_fds.discard(int(m.group(1)))
    return ops


if __name__ == "__main__":
    args = sys.argv[1:]
    keep = args[:1] == ["--repeats"]
    if keep:
        args = args[1:]
    if len(args) != 1:
        sys.exit("usage: python3 bench/floor_ops.py [--repeats] TRACE")
    try:
        print("\n".join(floor_ops(args[0], keep)))
    except (OSError, ValueError) as e:
        sys.exit("bench/floor_ops.py: %s" % e)

# malloc_byte.py PID — the first byte of malloc in process PID's memory, in hex.
# A uprobe is an int3 written into the target's copy of the code: it reads
# cc while a probe is in, and the function's own byte once the probes are out.
# (for the tests of vitals allocs and soak --allocs-every)
import subprocess, sys
pid = sys.argv[1]
libc = base = None
for line in open('/proc/%s/maps' % pid):
    f = line.split()
    if len(f) >= 6 and f[5].endswith('/libc.so.6') and int(f[2], 16) == 0:
        libc, base = f[5], int(f[0].split('-')[0], 16)
        break
nm = subprocess.run(['nm', '-D', '--defined-only', libc], capture_output=True, text=True).stdout
value = next(int(l.split()[0], 16) for l in nm.splitlines() if l.split()[-1] in ('malloc', 'malloc@@GLIBC_2.2.5'))
with open('/proc/%s/mem' % pid, 'rb') as m:
    m.seek(base + value)
    print('%02x' % m.read(1)[0])

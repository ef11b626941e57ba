/*
 * seize_probe.h — may this process ptrace a thread?  Asked of the kernel
 * itself, harmlessly.
 *
 * PTRACE_SEIZE makes the caller the tracer without stopping the tracee (no
 * SIGSTOP, no stop of any kind until the tracer asks for one), and the
 * kernel applies the exact rule (PTRACE_MODE_ATTACH_REALCREDS: uid,
 * dumpable, CAP_SYS_PTRACE, Yama, LSMs).  PTRACE_DETACH cannot release a
 * tracee that is running, so the seize is made by a thread made for it,
 * which then exits: the kernel detaches every tracee of a tracer that
 * exits (exit_ptrace), silently.  The same holds if vitals is killed at
 * that instant, and PTRACE_O_EXITKILL is never set: the target runs on
 * untouched whatever happens.
 */
#ifndef VT_INJECT_SEIZE_PROBE_H
#define VT_INJECT_SEIZE_PROBE_H

#include <stdbool.h>
#include <sys/types.h>

#include "proc/procfs.h"

/*
 * Seize thread tid of the live /proc's process pid and release it as
 * above.  Returns 0 when the seize worked (*released: its TracerPid was
 * seen back at 0 within 200 ms), else the errno of PTRACE_SEIZE (EPERM,
 * ESRCH) or of pthread_create.
 */
int vt_inject_seize_probe(const struct vt_procfs *pfs, pid_t pid, pid_t tid, bool *released);

#endif

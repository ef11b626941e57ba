/*
 * access.h — explain why a read of another process was refused.
 *
 * Reading smaps, environ, syscall or memory of a process needs ptrace
 * access (proc(5), ptrace(2) "Ptrace access mode checking"): the same uid
 * (and a dumpable process), or CAP_SYS_PTRACE; and under Yama,
 * kernel.yama.ptrace_scope 0 (1 allows only descendants, 2 needs the
 * capability, 3 forbids it).  This names which rule applied.
 */
#ifndef VT_PROC_ACCESS_H
#define VT_PROC_ACCESS_H

#include <stddef.h>

#include "proc/procfs.h"

/*
 * Write a one-line reason and a hint for a denied read of what (e.g. "smaps")
 * of a process owned by target_uid (-1 if unknown).
 */
void vt_access_explain(const struct vt_procfs *pfs, const char *what, long target_uid,
		       int pid_fd, char *reason, size_t reason_cap, char *hint, size_t hint_cap);

#endif

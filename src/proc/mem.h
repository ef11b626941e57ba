/*
 * mem.h — read the memory of another process without stopping it.
 *
 * process_vm_readv needs the same permission as ptrace attach
 * (PTRACE_MODE_ATTACH_REALCREDS): the same user and, under yama, ptrace_scope 0
 * (or 1 for a descendant), or CAP_SYS_PTRACE.  It never stops the target.
 */
#ifndef VT_PROC_MEM_H
#define VT_PROC_MEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/error.h"

/* Read exactly len bytes at addr. VT_E_PERM, VT_E_GONE or VT_E_IO (unmapped). */
int vt_mem_read(pid_t pid, uint64_t addr, void *out, size_t len, struct vt_err *err);

#endif

/*
 * wchan_syscall.h — parsers of task/TID/wchan and task/TID/syscall: what a
 * thread is waiting in.
 *
 *   wchan    the kernel function a sleeping thread sleeps in, or "0" (on a
 *            CPU, or not visible to the reader: the kernel prints "0" then)
 *   syscall  "running"; or "-1 SP PC" (blocked outside a system call); or
 *            "NR ARG1 .. ARG6 SP PC" (proc(5))
 */
#ifndef VT_PROC_WCHAN_SYSCALL_H
#define VT_PROC_WCHAN_SYSCALL_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

#define VT_SYSCALL_NONE (-1)      /* blocked, but not in a system call */
#define VT_SYSCALL_RUNNING (-2)   /* on a CPU (or changing state) when read */

/* The function name into out ("" for "0" or empty text), cut to cap. */
void vt_wchan_parse(const char *buf, size_t len, char *out, size_t cap);

#define VT_SYSCALL_ARGS 6

/*
 * The number in progress or VT_SYSCALL_*; VT_E_PARSE on anything else.
 * args (may be NULL) receives the six arguments of a system call in
 * progress, all 0 otherwise or when the text has none (VT_E_PARSE when it
 * has malformed ones).
 */
int vt_syscall_parse(const char *buf, size_t len, long *nr, uint64_t args[VT_SYSCALL_ARGS],
		     struct vt_err *err);

#endif

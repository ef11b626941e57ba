/*
 * task.h — the threads of a process: /proc/PID/task/TID/{stat,syscall}.
 */
#ifndef VT_PROC_TASK_H
#define VT_PROC_TASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/error.h"

/* List thread ids of the process whose directory is pid_fd. Caller frees *tids. */
int vt_task_list(int pid_fd, pid_t **tids, size_t *n, struct vt_err *err);

/*
 * Parse /proc/PID/task/TID/syscall for the user stack pointer.
 * "running" (on a CPU now) gives false; "-1 sp pc" (blocked outside a
 * syscall) and "nr a1..a6 sp pc" give true with *sp set.
 */
bool vt_syscall_parse_sp(const char *buf, size_t len, uint64_t *sp);
/* The same, with the user program counter too (pc may be NULL): where a blocked
 * thread will return to, for unwinding its stack without stopping it. */
bool vt_syscall_parse_sp_pc(const char *buf, size_t len, uint64_t *sp, uint64_t *pc);

#endif

/*
 * perf_events.h — CPU-clock samples of every thread of one process, from
 * the kernel's perf_event_open ring buffers.
 *
 * One software cpu-clock event per thread (pid = tid, cpu = -1, no inherit,
 * user and kernel), each with its own mmapped ring.  A sample carries the
 * thread, the time, the instruction pointer, the kernel's callchain
 * (kernel frames, then the user frames it found by frame pointers), the
 * user registers at the moment of the interrupt (or at the system call's
 * entry) and a copy of the top of the user stack, for unwinding with CFI
 * where frame pointers are missing (src/elf/unwind.h).
 *
 * Threads come and go: vt_perf_sync_threads opens events for new threads
 * of /proc/PID/task and drops those of threads that exited.  A thread that
 * lives and dies between two syncs is not sampled; the caller measures
 * that CPU from /proc and says so.
 *
 * The target is never stopped.  Errors:
 *   VT_E_PERM         perf_event_open refused (perf_event_paranoid, no CAP_PERFMON,
 *                     seccomp): err->hint says which setting and the command to grant it
 *   VT_E_UNSUPPORTED  the kernel has no perf events (ENOSYS, ENOENT for cpu-clock)
 *   VT_E_NOPROC       no such process
 *   VT_E_NOMEM, VT_E_IO
 */
#ifndef VT_PERF_PERF_EVENTS_H
#define VT_PERF_PERF_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/error.h"

/* The user registers a sample carries, in this order (a subset of perf's x86 regs). */
enum vt_perf_reg {
	VT_PERF_REG_AX, VT_PERF_REG_BX, VT_PERF_REG_CX, VT_PERF_REG_DX,
	VT_PERF_REG_SI, VT_PERF_REG_DI, VT_PERF_REG_BP, VT_PERF_REG_SP,
	VT_PERF_REG_IP,
	VT_PERF_REG_R8, VT_PERF_REG_R9, VT_PERF_REG_R10, VT_PERF_REG_R11,
	VT_PERF_REG_R12, VT_PERF_REG_R13, VT_PERF_REG_R14, VT_PERF_REG_R15,
	VT_PERF_NREGS
};

/* perf's PERF_CONTEXT_* markers in a callchain are kept as they come. */
#define VT_PERF_CONTEXT_MAX ((uint64_t)-4095)

struct vt_perf_opts {
	unsigned hz;              /* samples per second of CPU time per thread (cpu-clock frequency) */
	uint32_t stack_bytes;     /* user stack copied per sample (multiple of 8, <= 65528); 0 none */
	uint32_t ring_pages;      /* data pages per thread ring (power of two); 0 = 64 */
	bool kernel;              /* sample kernel frames too (exclude_kernel = 0) */
};

/* One sample.  The pointers point into the ring (or a bounce copy) and are valid
 * only during the callback. */
struct vt_perf_sample {
	pid_t pid, tid;
	uint64_t time_ns;         /* perf clock (CLOCK_MONOTONIC) */
	uint64_t ip;
	bool in_kernel;           /* the sample interrupted kernel code */
	const uint64_t *callchain;   /* with PERF_CONTEXT_KERNEL/USER markers */
	uint32_t nchain;
	bool regs_ok;             /* user registers were captured (abi != NONE) */
	uint64_t regs[VT_PERF_NREGS];
	const uint8_t *stack;     /* user stack copy from regs[SP] upward */
	uint32_t stack_len;       /* bytes valid in it (the kernel's dyn_size) */
};

typedef void (*vt_perf_sample_fn)(void *ctx, const struct vt_perf_sample *s);

struct vt_perf_stats {
	uint64_t samples;         /* delivered to the callback */
	uint64_t lost;            /* PERF_RECORD_LOST: dropped by the kernel */
	uint64_t threads_opened;  /* events opened over the life of the session */
	uint32_t threads_now;     /* events open now */
	uint64_t threads_missed;  /* tids seen in /proc whose event could not be opened (exited) */
};

struct vt_perf;   /* opaque: the events, their rings and the process's task dir */

/* Open events on every current thread of pid.  Errors above. */
int vt_perf_open(pid_t pid, const struct vt_perf_opts *opts, struct vt_perf **out,
		 struct vt_err *err);

/* Open events for threads that appeared, close those of threads that are gone.
 * VT_E_GONE when the process itself has exited. */
int vt_perf_sync_threads(struct vt_perf *pf, struct vt_err *err);

/* Wait up to timeout_ms for samples, then drain every ring into fn.
 * Returns VT_OK, VT_E_GONE when the process has exited (after draining). */
int vt_perf_poll(struct vt_perf *pf, int timeout_ms, vt_perf_sample_fn fn, void *ctx,
		 struct vt_err *err);

void vt_perf_get_stats(const struct vt_perf *pf, struct vt_perf_stats *out);

/* Disable and close every event; sets *pf to NULL. */
void vt_perf_close(struct vt_perf **pf);

/* Would perf_event_open be allowed for pid here?  VT_OK, or the error vt_perf_open
 * would give with its hint (used by `vitals profile` to choose the ptrace fallback). */
int vt_perf_check(pid_t pid, struct vt_err *err);

#endif

/*
 * perf_events.h — CPU-clock samples of every thread of one process, from
 * the kernel's perf_event_open ring buffers.
 *
 * One software cpu-clock event per thread (pid = tid, cpu = -1, user and
 * kernel), each with its own mmapped ring; or with inherit (below) one per
 * thread and CPU and one ring per CPU.  A sample carries the
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
 * With opts->tasks the kernel also writes a record for each thread the
 * process makes and each that exits (PERF_RECORD_FORK and EXIT, attr.task):
 * vt_perf_stats counts them, so a caller knows how many threads came and
 * went without listing task/.  Those made by a thread with events are all
 * counted; an exit only when the exiting thread had events (with inherit,
 * every thread born meanwhile has them).
 *
 * With opts->inherit, what `perf record -p` does instead: each thread
 * there at the start gets one event per CPU (pid = tid, cpu = c, inherit),
 * and every thread it makes later, however briefly it lives, inherits
 * them; the kernel writes their samples to the parent's ring (a per-task
 * event with inherit cannot be mapped, a per-CPU one can).  One ring per
 * CPU takes every event of that CPU (PERF_EVENT_IOC_SET_OUTPUT).  A sync
 * then opens nothing: a thread that appears was made by a thread that has
 * events (the only miss: one made in the instant between the first
 * listing and its maker's events).  No event is closed before the end,
 * since a thread's inherited events live only as long as its maker's: so
 * it costs threads-at-start x CPUs descriptors; past VT_PERF_INHERIT_FDS_MAX
 * of them, or when the kernel refuses, the session keeps one event per
 * thread (vt_perf_stats.inherit says which).
 *
 * Kernel frames: asked for with opts->kernel; where perf_event_paranoid
 * allows only user space (EACCES with them), the events are opened without
 * them and vt_perf_stats.kernel_refused says so.  Without them the kernel
 * drops every sample that lands in kernel mode (exclude_kernel), silently
 * and uncounted: time in system calls is not sampled at all (a thread in
 * read(2) measured 49 samples per CPU second at 999 Hz), so the caller must
 * take that time from /proc (stime, /proc/TID/syscall) and say so.
 *
 * Limits: each event costs a file descriptor and a locked ring.  On EMFILE
 * RLIMIT_NOFILE's soft limit is raised to the hard limit, once per session
 * (a process-wide change); a ring the locked-memory limit refuses
 * (perf_event_mlock_kb) is retried smaller.  Threads that still cannot be
 * opened are counted in threads_missed, never silently dropped.
 *
 * The record parser (vt_perf_parse_sample) is a pure function on a buffer,
 * for the fuzzer (fuzz/fuzz_perf_record.c) and the tests.
 *
 * Live only (the real /proc).  x86-64: the registers below are perf's x86
 * regs; elsewhere no registers or stack are copied.  The target is never
 * stopped.  Errors:
 *   VT_E_PERM         perf_event_open refused (perf_event_paranoid, no CAP_PERFMON,
 *                     another user's process, seccomp): err->hint says which setting
 *                     and the command to grant it
 *   VT_E_UNSUPPORTED  the kernel has no perf events (ENOSYS, ENOENT/EOPNOTSUPP for
 *                     cpu-clock) or refuses the attributes (EINVAL: a kernel older than 4.8)
 *   VT_E_NOPROC       no such process
 *   VT_E_USAGE        opts out of range (hz above perf_event_max_sample_rate, stack_bytes
 *                     not a multiple of 8, ring_pages not a power of two)
 *   VT_E_NOMEM, VT_E_IO
 */
#ifndef VT_PERF_PERF_EVENTS_H
#define VT_PERF_PERF_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/error.h"

/* The user registers a sample carries, in this order (a subset of perf's x86 regs,
 * whose bit numbers in <asm/perf_regs.h> ascend in the same order). */
enum vt_perf_reg {
	VT_PERF_REG_AX, VT_PERF_REG_BX, VT_PERF_REG_CX, VT_PERF_REG_DX,
	VT_PERF_REG_SI, VT_PERF_REG_DI, VT_PERF_REG_BP, VT_PERF_REG_SP,
	VT_PERF_REG_IP,
	VT_PERF_REG_R8, VT_PERF_REG_R9, VT_PERF_REG_R10, VT_PERF_REG_R11,
	VT_PERF_REG_R12, VT_PERF_REG_R13, VT_PERF_REG_R14, VT_PERF_REG_R15,
	VT_PERF_NREGS
};

/* The sample_regs_user mask of those registers: PERF_REG_X86_AX..IP (bits 0-8)
 * and R8..R15 (bits 16-23). */
#define VT_PERF_X86_REGS_MASK (0x1ffull | (0xffull << 16))

/* perf's PERF_CONTEXT_* markers in a callchain are kept as they come: an entry
 * >= VT_PERF_CONTEXT_MAX is a marker, not an address. */
#define VT_PERF_CONTEXT_MAX ((uint64_t)-4095)

/*
 * An event to open on every thread instead of cpu-clock (opts->events): a
 * uprobe (src/perf/uprobe.h) or any PMU's event, by its attr fields.  Every
 * hit is a sample (period 1).  The first event of a thread (or CPU) maps the
 * ring, the others write into it; each sample says which (vt_perf_sample.event).
 */
struct vt_perf_event {
	uint32_t type;            /* perf_event_attr.type: the PMU ("uprobe": sysfs type) */
	uint64_t config, config1, config2;
	bool stack;               /* its samples carry the callchain and the stack copy
	                           * (opts->stack_bytes); else the registers only */
};

/* Most events per thread (opts->nevents). */
#define VT_PERF_EVENTS_MAX 16

struct vt_perf_opts {
	unsigned hz;              /* samples per second of CPU time per thread (cpu-clock
	                           * frequency); 0 = 99 */
	uint32_t stack_bytes;     /* user stack copied per sample (multiple of 8, <= 65528); 0 none */
	uint32_t ring_pages;      /* data pages per thread ring (power of two); 0 = 64 */
	bool kernel;              /* sample kernel frames too (exclude_kernel = 0) */
	bool inherit;             /* threads born later are sampled by events they inherit
	                           * from the thread that made them: one event per thread
	                           * and CPU, one ring per CPU (see below) */
	bool tasks;               /* count the process's threads that start and exit while
	                           * sampled (the kernel's FORK and EXIT records: exact, a
	                           * thread that lives a microsecond included); one event
	                           * per thread (and CPU) only, not with opts->events */
	const struct vt_perf_event *events;   /* NULL: cpu-clock at hz; else these nevents
	                           * (<= VT_PERF_EVENTS_MAX) events, hz unused.  The array is
	                           * read by vt_perf_open only */
	unsigned nevents;
	/* which threads get events, at the start and when a sync finds them: NULL all.
	 * A thread not wanted is left out for good (threads_skipped), not retried */
	bool (*want)(void *ctx, pid_t tid);
	void *want_ctx;
};

/* One sample.  The pointers point into the ring (or a bounce copy) and are valid
 * only during the callback. */
struct vt_perf_sample {
	pid_t pid, tid;
	unsigned event;           /* opts->events: the index of the event it came from; else 0 */
	uint64_t time_ns;         /* perf clock (CLOCK_MONOTONIC) */
	uint64_t ip;
	bool in_kernel;           /* the sample interrupted kernel code */
	const uint64_t *callchain;   /* with PERF_CONTEXT_KERNEL/USER markers */
	uint32_t nchain;
	bool regs_ok;             /* user registers were captured (abi != NONE) */
	uint64_t regs[VT_PERF_NREGS];
	const uint8_t *stack;     /* user stack copy from regs[SP] upward; NULL when none */
	uint32_t stack_len;       /* bytes valid in it (the kernel's dyn_size) */
};

/*
 * What a sample record carries: the attr's sample_type (PERF_SAMPLE_* bits of
 * <linux/perf_event.h>) and sample_regs_user.  The parser knows IDENTIFIER, IP,
 * TID, TIME, ADDR, ID, STREAM_ID, CPU, PERIOD, CALLCHAIN, REGS_USER and
 * STACK_USER; a layout with any other bit is refused.
 */
struct vt_perf_layout {
	uint64_t sample_type;
	uint64_t regs_mask;
};

/*
 * Parse one PERF_RECORD_SAMPLE: rec is the whole record, perf_event_header
 * first, len the bytes readable at rec (the record's own size may not exceed
 * it).  rec must be 8-byte aligned (ring records and malloc'd copies are).
 * Every length inside is checked against the record's size.  On VT_OK *out
 * points into rec; fields the layout lacks are 0/NULL; on failure *out is all
 * zero.  VT_E_PARSE for a
 * record that is not a well-formed sample of this layout, VT_E_UNSUPPORTED
 * for a layout with bits the parser does not know.  No allocation, no I/O.
 */
int vt_perf_parse_sample(const void *rec, size_t len, const struct vt_perf_layout *layout,
			 struct vt_perf_sample *out);

typedef void (*vt_perf_sample_fn)(void *ctx, const struct vt_perf_sample *s);

struct vt_perf_stats {
	uint64_t samples;         /* delivered to the callback */
	uint64_t lost;            /* PERF_RECORD_LOST: dropped by the kernel (ring full) */
	uint64_t malformed;       /* records that failed to parse (not delivered) */
	uint64_t throttled;       /* PERF_RECORD_THROTTLE: the kernel slowed sampling down */
	uint64_t threads_opened;  /* events opened over the life of the session */
	uint32_t threads_now;     /* events open now */
	uint64_t threads_missed;  /* tids seen in /proc whose event could not be opened
	                           * (exited first, or a limit below), each counted once */
	uint64_t threads_limited; /* of those, refused by the fd or locked-memory limit */
	uint64_t threads_skipped; /* not wanted (opts->want), left out */
	bool kernel_refused;      /* kernel frames were asked for but perf_event_paranoid
	                           * allows only user space: sampled without them */
	bool nofile_raised;       /* RLIMIT_NOFILE's soft limit was raised to the hard one */
	uint32_t ring_pages;      /* data pages of the smallest ring (shrunk under the
	                           * locked-memory limit) */
	unsigned hz;              /* the frequency asked of the kernel */
	bool inherit;             /* new threads sampled through inherited events */
	uint32_t cpus;            /* inherit: CPUs with events */
	uint64_t threads_born;    /* opts->tasks: threads the process made while sampled */
	uint64_t threads_exited;  /* opts->tasks: its threads that exited while sampled */
};

/* With inherit, at most this many events (threads at the start x CPUs). */
#define VT_PERF_INHERIT_FDS_MAX 8192

struct vt_perf;   /* opaque: the events, their rings and the process's task dir */

/* Open events on every current thread of pid (opts NULL: the defaults, kernel on).
 * Errors above; VT_E_NOPROC also when every thread exited before its event opened. */
int vt_perf_open(pid_t pid, const struct vt_perf_opts *opts, struct vt_perf **out,
		 struct vt_err *err);

/* Open events for threads that appeared, close those of threads that are gone.
 * VT_E_GONE when the process itself has exited. */
int vt_perf_sync_threads(struct vt_perf *pf, struct vt_err *err);

/* Wait up to timeout_ms for samples, then drain every ring into fn (which must
 * not call back into this session).  Events of threads that exited are drained,
 * then closed.  Returns VT_OK, VT_E_GONE when the process has exited (after
 * draining: every sample it left was delivered). */
int vt_perf_poll(struct vt_perf *pf, int timeout_ms, vt_perf_sample_fn fn, void *ctx,
		 struct vt_err *err);

void vt_perf_get_stats(const struct vt_perf *pf, struct vt_perf_stats *out);

/* Disable every event: nothing more is written to the rings, whose records the
 * next vt_perf_poll still drains.  A uprobe stays in the target's code until
 * vt_perf_close (a disabled one still traps, unrecorded). */
void vt_perf_disable(struct vt_perf *pf);

/* Disable and close every event; sets *pf to NULL.  Closing the last event of a
 * uprobe takes its breakpoint out of the target's code (the kernel does it when
 * the descriptor closes, so also when vitals dies). */
void vt_perf_close(struct vt_perf **pf);

/* Would perf_event_open be allowed for pid here, user space only (the least
 * vt_perf_open needs), with a small ring mapped?  VT_OK, or the error
 * vt_perf_open would give with its hint (used by `vitals profile` to choose the
 * ptrace fallback). */
int vt_perf_check(pid_t pid, struct vt_err *err);

#endif

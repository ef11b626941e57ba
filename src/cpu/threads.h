/*
 * threads.h — one sample of every thread of a process.
 *
 * Reads /proc/PID/stat (the process's utime+stime, which include threads that
 * have already exited, and its start time), /proc/uptime, and for each
 * task/TID: stat, status (context switches), schedstat and wchan.  It only
 * reads; rates are computed from two or more samples by cpu/rates.h.
 * A thread that exits while it is being read is skipped, not an error.
 */
#ifndef VT_CPU_THREADS_H
#define VT_CPU_THREADS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/buf.h"
#include "base/error.h"
#include "proc/procfs.h"

struct vt_thread_snap {
	pid_t tid;
	char comm[64];              /* task stat (2) */
	char state;                 /* task stat (3) */
	uint64_t utime_ticks;       /* task stat (14) */
	uint64_t stime_ticks;       /* task stat (15) */
	uint64_t start_ticks;       /* task stat (22): tells a reused tid from the old thread */
	int64_t processor;          /* task stat (39): CPU last run on, -1 unknown */
	uint64_t run_ns;            /* task schedstat (1), VT_NA when unreadable */
	uint64_t wait_ns;           /* task schedstat (2), VT_NA when unreadable */
	uint64_t ctxt_vol;          /* task status voluntary_ctxt_switches, VT_NA if absent */
	uint64_t ctxt_nonvol;       /* task status nonvoluntary_ctxt_switches, VT_NA if absent */
	bool wchan_ok;              /* wchan was read */
	char wchan[64];             /* task wchan: kernel function slept in; "" when running ("0") */
	char wchan_why[48];         /* why it is unavailable when !wchan_ok */
};

struct vt_threads_sample {
	pid_t pid;
	char comm[64];              /* stat (2) */
	uint64_t mono_ns;           /* CLOCK_MONOTONIC when the sample began */
	uint64_t utime_ticks;       /* process stat (14): all threads, exited ones included */
	uint64_t stime_ticks;       /* process stat (15) */
	uint64_t start_ticks;       /* process stat (22), clock ticks since boot */
	double uptime_s;            /* /proc/uptime (1) at the sample, 0 if unreadable */
	long clk_tck;               /* ticks per second */
	struct vt_thread_snap *threads;   /* owned, n entries, in tid order */
	size_t n;
};

/*
 * Take one sample of process pid, whose directory fd (vt_pid_open) is pid_fd.
 * out->mono_ns is set here (CLOCK_MONOTONIC, before the first read).
 * buf is scratch space (its max bounds each file read).
 * Errors: VT_E_GONE (the process exited), VT_E_PERM, VT_E_PARSE, VT_E_NOMEM.
 * On success the caller releases *out with vt_threads_sample_release.
 */
int vt_threads_sample_take(const struct vt_procfs *pfs, int pid_fd, pid_t pid,
			   struct vt_buf *buf, struct vt_threads_sample *out,
			   struct vt_err *err);

/* Free the thread array; safe on a zeroed or already released sample. */
void vt_threads_sample_release(struct vt_threads_sample *s);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t vt_threads_now_ns(void);

#endif

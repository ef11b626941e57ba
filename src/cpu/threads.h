/*
 * threads.h — one sample of every thread of a process, as rates need it.
 *
 * A sample is one read of a thread watch (cpu/thread_watch.h: files held
 * open, re-read with pread) turned into plain rows that outlive the watch's
 * next read, plus /proc/uptime for the since-start average that ps shows.
 * It only reads; rates are computed from two or more samples by
 * cpu/rates.h.  A thread that exits while it is being read is left out, not
 * an error.
 */
#ifndef VT_CPU_THREADS_H
#define VT_CPU_THREADS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/buf.h"
#include "base/error.h"
#include "cpu/thread_watch.h"
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
	uint64_t ctxt_vol;          /* task status voluntary_ctxt_switches, VT_NA if not read */
	uint64_t ctxt_nonvol;       /* task status nonvoluntary_ctxt_switches, VT_NA if not read */
	bool wchan_ok;              /* wchan was read */
	char wchan[48];             /* task wchan: kernel function slept in; "" when running ("0") */
	char wchan_why[48];         /* why it is unavailable when !wchan_ok */
	bool syscall_ok;            /* syscall was read */
	char syscall[32];           /* name of the system call in progress, "" none or on a CPU,
	                             * "#N" for a number this build does not name */
	char syscall_why[48];       /* why it is unavailable when !syscall_ok */
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
 * Read process w once (flags as for vt_thread_watch_read; VT_TW_CSW,
 * VT_TW_WCHAN and VT_TW_SYSCALL for the full view) and fill *out with its
 * rows and pfs's uptime.  buf is scratch space for uptime.  A read that is
 * partial (one thread unreadable) still gives a sample.
 * Errors: VT_E_GONE (the process exited, or is a zombie), VT_E_PERM,
 * VT_E_PARSE, VT_E_NOMEM.
 * On success the caller releases *out with vt_threads_sample_release.
 */
int vt_threads_sample_take(struct vt_thread_watch *w, unsigned flags,
			   const struct vt_procfs *pfs, struct vt_buf *buf,
			   struct vt_threads_sample *out, struct vt_err *err);

/*
 * Fill *out from the last read of w without reading anything; uptime_s as
 * read by the caller (0 unknown).  Errors: VT_E_NOMEM; VT_E_GONE when the
 * read had no thread.  For tests on recorded trees, and for callers that
 * read the watch themselves.
 */
int vt_threads_sample_from_watch(const struct vt_thread_watch *w, double uptime_s,
				 struct vt_threads_sample *out, struct vt_err *err);

/* /proc/uptime's first figure under pfs, 0 when unreadable. */
double vt_threads_uptime(const struct vt_procfs *pfs, struct vt_buf *buf);

/* Free the thread array; safe on a zeroed or already released sample. */
void vt_threads_sample_release(struct vt_threads_sample *s);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t vt_threads_now_ns(void);

#endif

/*
 * thread_view.h — what `vitals threads` shows, over a soak recording.
 *
 * Every thread of one recorded process, each with its rates over the span it
 * was recorded in (CPU, run-queue delay, switches), what it was doing (the
 * states, wchan and system call tallied at the per-thread cadence), the
 * pools, and the same diagnosis rules as a live interval; and the recorded
 * threads ranked by CPU, as the soak views list them.  Pure: reads only the
 * series.
 */
#ifndef VT_ANALYZE_THREAD_VIEW_H
#define VT_ANALYZE_THREAD_VIEW_H

#include <stdbool.h>
#include <sys/types.h>

#include "analyze/diagnose.h"
#include "analyze/rates.h"
#include "analyze/soak.h"
#include "analyze/stalls.h"
#include "sample/locks.h"
#include "sample/series.h"

/*
 * Threads that came and went.  A soak writes every thread's counters at the
 * per-thread cadence and an exited one's when it exits; a thread per
 * request lives between two ticks and is never written, and one that lives
 * a tick or two is written once, with no rate.  Such threads are counted as
 * one figure, as `vitals threads` does: the process's CPU over the span its
 * threads were recorded in, minus that of the threads listed one by one.
 */
struct vt_soak_short_lived {
	double t0, t1;               /* the span of the incarnation's thread records */
	size_t threads;              /* threads written once, or after t0 and last before t1 */
	double cores;                /* the process's CPU over [t0, t1] minus the other threads',
	                              * per second, >= 0; NAN when the process's CPU was not recorded */
	double recorded_cores;       /* what the short-lived threads' own records add up to (a lower
	                              * bound: most of a short life falls between two ticks) */
	double process_cores;        /* the process's CPU over [t0, t1]; NAN not recorded */
};

/*
 * The short-lived threads of process pid in s (every thread when none is
 * of pid).  All zero (cores NAN) when no thread was recorded over a span.
 */
void vt_soak_short_lived(const struct vt_series *s, pid_t pid, struct vt_soak_short_lived *out);

/* Is th one of sl's: written once, or came after sl->t0 and went before sl->t1? */
bool vt_soak_thread_short_lived(const struct vt_soak_short_lived *sl, const struct vt_thread_run *th);

/* The process a view of v's span shows the threads of (0: none). */
pid_t vt_soak_threads_pid(const struct vt_series *s, const struct vt_soak_verdict *v);

/*
 * Build *out for the threads of process pid in s (all threads when none is
 * of pid) and diagnose it into *diag.  interval_s is the span from the
 * first to the last per-thread record; usable_cores the recorded CPU count.
 * A thread recorded once has no rate (0); short-lived threads (above) are
 * flagged as appeared and exited, and out->short_lived_* hold their figure;
 * cores is the process's CPU when recorded, so shares are of the process.
 * locks: the locks its threads waited on over the soak (store/lock_store.h),
 * which name a convoy's lock and keep lock-bound threads out of core
 * contention as they do live; NULL when none were recorded.
 * Errors: VT_E_NOMEM; VT_E_NOTFOUND when no thread was recorded.
 * On success release *out with vt_threads_rates_release.
 */
int vt_soak_thread_view(const struct vt_series *s, pid_t pid, const struct vt_stalls *stalls,
			const struct vt_locks *locks, struct vt_threads_rates *out, struct vt_diagnosis *diag,
			struct vt_err *err);

/*
 * The threads of the analysed incarnation (the process of v's span; every
 * thread when none is of it) but its short-lived ones (sl, from
 * vt_soak_short_lived for that process), busiest first (CPU over the time
 * each was seen), as pointers into s->threads in an array the caller
 * frees.  *others: threads of earlier incarnations left out.  Returns the
 * count, or -1 out of memory.
 */
ssize_t vt_soak_threads_by_cpu(const struct vt_series *s, const struct vt_soak_verdict *v,
			       const struct vt_soak_short_lived *sl, const struct vt_thread_run ***list,
			       size_t *others);
/* A thread's CPU in cores over the time it was seen; NAN when that is 0. */
double vt_thread_run_cores(const struct vt_thread_run *th);

#endif

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

#include <sys/types.h>

#include "analyze/diagnose.h"
#include "analyze/rates.h"
#include "analyze/soak.h"
#include "sample/series.h"

/*
 * Build *out for the threads of process pid in s (all threads when none is
 * of pid) and diagnose it into *diag.  interval_s is the span from the
 * first to the last per-thread record; usable_cores the recorded CPU count.
 * A thread recorded once has no rate (0) and is flagged as appeared.
 * Errors: VT_E_NOMEM; VT_E_NOTFOUND when no thread was recorded.
 * On success release *out with vt_threads_rates_release.
 */
int vt_soak_thread_view(const struct vt_series *s, pid_t pid, struct vt_threads_rates *out,
			struct vt_diagnosis *diag, struct vt_err *err);

/*
 * The threads of the analysed incarnation (the process of v's span; every
 * thread when none is of it), busiest first (CPU over the time each was
 * seen), as pointers into s->threads in an array the caller frees.
 * *others: threads of earlier incarnations left out.  Returns the count, or
 * -1 out of memory.
 */
ssize_t vt_soak_threads_by_cpu(const struct vt_series *s, const struct vt_soak_verdict *v,
			       const struct vt_thread_run ***list, size_t *others);
/* A thread's CPU in cores over the time it was seen; NAN when that is 0. */
double vt_thread_run_cores(const struct vt_thread_run *th);

#endif

/*
 * thread_view.h — what `vitals threads` shows, over a soak recording.
 *
 * Every thread of one recorded process, each with its rates over the span it
 * was recorded in (CPU, run-queue delay, switches), what it was doing (the
 * states, wchan and system call tallied at the per-thread cadence), the
 * pools, and the same diagnosis rules as a live interval.  Pure: reads
 * only the series.
 */
#ifndef VT_ANALYZE_THREAD_VIEW_H
#define VT_ANALYZE_THREAD_VIEW_H

#include <sys/types.h>

#include "analyze/diagnose.h"
#include "analyze/rates.h"
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

#endif

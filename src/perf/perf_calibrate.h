/*
 * perf_calibrate.h — what one perf sample costs the thread it interrupts,
 * measured here and now, so a profile can state the overhead it imposed.
 *
 * The sample is taken in the interrupted thread's context (the interrupt,
 * the callchain walk, the copy of its user stack into the ring), so its
 * cost shows only as that thread running slower.  A calibration child
 * spins a fixed loop; its fastest of several runs without events is
 * compared with its fastest of several runs while it is sampled at a high
 * rate with the same settings as the profile.  The difference divided by
 * the samples taken is the cost of one sample.  The fastest of several runs
 * is used because on a busy host any single run may be preempted.
 *
 * Takes 50 ms of CPU (10 runs of 5 ms), more wall time on a busy host.
 * Errors as vt_perf_open.
 */
#ifndef VT_PERF_PERF_CALIBRATE_H
#define VT_PERF_PERF_CALIBRATE_H

#include "base/error.h"
#include "perf/perf_events.h"

struct vt_perf_cost {
	double ns_per_sample;     /* the slowdown one sample causes, >= 0 */
	double noise_ns;          /* the spread of the runs without events, per sample */
	unsigned samples;         /* samples the calibration took */
};

/* Measure with opts' stack copy and kernel setting (its hz is ignored). */
int vt_perf_calibrate(const struct vt_perf_opts *opts, struct vt_perf_cost *out,
		      struct vt_err *err);

#endif

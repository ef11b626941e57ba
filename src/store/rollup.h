/*
 * rollup.h — samples summed up into points, one way for the writer of a
 * recording and for its reader.
 *
 * A point (sample/series.h) is a run of consecutive samples of one process
 * with no gap in it: for each metric its low, its high and its mean (for a
 * cumulative counter, its first and last value and the mean).  The writer
 * keeps the samples of the current minute in one open point and stores it
 * as a row of the rollups table when the next minute begins, the process
 * changes or a gap opens (store.h), the way Prometheus and RRD keep
 * min/max/sum/count per step.  The reader builds the points it is asked
 * for from samples, or, when they are a minute wide or more, from those
 * rows: merging two points gives exactly what adding their samples one by
 * one gives (the mean weighted by how many samples knew the metric), so a
 * point built from rollups differs from one built from samples only in
 * where it begins (on a minute of the recording, not on any sample).
 */
#ifndef VT_STORE_ROLLUP_H
#define VT_STORE_ROLLUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sample/series.h"

/* The rollups' step: the writer closes a point this long after its first sample. */
#define VT_ROLLUP_S 60.0

/* A point being built; count 0: empty. */
struct vt_point_acc {
	int64_t first_id, last_id;     /* rowids of its first and last sample */
	double t0, t1;                 /* their times, s since the soak began */
	double t_sum;                  /* sum of its sample times: the mean time is t_sum / count */
	double wall;                   /* unix time of its first sample */
	pid_t pid;
	uint32_t count;                /* samples */
	uint32_t known[VT_M_COUNT];    /* samples that had metric m */
	struct vt_stat m[VT_M_COUNT];  /* NAN where known[m] is 0 */
};

/* Empty it. */
void vt_point_acc_clear(struct vt_point_acc *a);

/*
 * Does something at time t of process pid begin a new point after a: a is
 * not empty and it is another process, more than gap_s after a's last
 * sample, or width_s or more after a's first (width 0: every sample is a
 * point of its own)?
 */
bool vt_point_acc_ends(const struct vt_point_acc *a, double t, pid_t pid, double width_s, double gap_s);

/* Add sample id at time t; v[m] is NAN where metric m is unknown. */
void vt_point_acc_add(struct vt_point_acc *a, int64_t id, double t, double wall, pid_t pid,
		      const double v[VT_M_COUNT]);

/* Add the samples of b, which follow a's (a may be empty). */
void vt_point_acc_merge(struct vt_point_acc *a, const struct vt_point_acc *b);

#endif

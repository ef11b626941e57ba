/*
 * stalls.h — accept-queue stalls in a recording (issue 16, part 1).
 *
 * A soak records, at each sample, the deepest accept queue among the
 * process's listening TCP sockets (the accept_queue column): connections
 * the kernel completed that no thread has taken with accept() yet.  A
 * server that accepts keeps it at 0 between samples; a queue seen
 * non-empty at every sample for longer than a threshold is a stall: the
 * accepting thread is not accepting.  The first sample that sees it
 * non-empty starts a stall and the first that sees it empty ends it, so
 * both ends and the length are known to one sampling interval.
 *
 * A busy server whose queue refills as fast as it drains also never shows
 * an empty queue; at the default 1 s and 2 s that takes a queue full at
 * every sample for seconds, which is the symptom either way.
 */
#ifndef VT_ANALYZE_STALLS_H
#define VT_ANALYZE_STALLS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "sample/series.h"

struct vt_stall {
	double t0;             /* the first sample that saw the queue non-empty, s since the soak began */
	double t1;             /* the first that saw it empty (the last sample when ongoing) */
	double length_s;       /* t1 - t0 */
	double wall0, wall1;   /* the same two samples' unix times */
	double depth;          /* the deepest queue in it */
	bool ongoing;          /* still non-empty at the recording's end (or its process's) */
	pid_t pid;
};

struct vt_stalls {
	bool recorded;         /* the recording has the column (vitals 0.16 and later) */
	bool listening;        /* some sample saw a listening socket */
	double threshold_s;    /* longer than this is a stall */
	double resolution_s;   /* the widest point: each end is known to this */
	double deepest;        /* the deepest queue seen; NAN when none was read */
	size_t nonempty_points;
	struct vt_stall *v;    /* owned */
	size_t n;
};

/*
 * The stalls of s longer than threshold_s.  A run ends at a restart, at a
 * point without the figure, and across a gap of more than three intervals.
 * 0, or -1 when out of memory (*out then holds none).
 */
int vt_stalls_find(const struct vt_series *s, double threshold_s, struct vt_stalls *out);
void vt_stalls_free(struct vt_stalls *st);

#endif

/*
 * stalls.c — accept-queue stalls (see stalls.h).
 */
#include "analyze/stalls.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int add(struct vt_stalls *st, size_t *cap, const struct vt_stall *s)
{
	if (st->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 8;
		struct vt_stall *v = realloc(st->v, ncap * sizeof(*v));

		if (!v)
			return -1;
		st->v = v;
		*cap = ncap;
	}
	st->v[st->n++] = *s;
	return 0;
}

/* Does point j follow point i in one run: the same process, no gap between? */
static bool follows(const struct vt_series *s, size_t i, size_t j, double max_gap)
{
	return s->incarnation[j] == s->incarnation[i] && s->t0[j] - s->t1[i] <= max_gap;
}

int vt_stalls_find(const struct vt_series *s, double threshold_s, struct vt_stalls *out)
{
	const struct vt_stat *q = s->m[VT_M_ACCEPT_QUEUE];
	double every = s->info.every_s > 0 ? s->info.every_s : 1, max_gap = vt_series_gap_s(s->info.every_s);
	size_t cap = 0, i = 0, j;

	memset(out, 0, sizeof(*out));
	out->threshold_s = threshold_s;
	out->deepest = NAN;
	out->resolution_s = every;
	out->recorded = q != NULL;
	if (!q)
		return 0;
	for (j = 0; j < s->n; j++) {
		if (s->t1[j] - s->t0[j] + every > out->resolution_s)
			out->resolution_s = s->t1[j] - s->t0[j] + every;
		if (isnan(q[j].hi))
			continue;
		out->listening = true;
		if (isnan(out->deepest) || q[j].hi > out->deepest)
			out->deepest = q[j].hi;
	}
	while (i < s->n) {
		struct vt_stall run;

		/* a point is in a run when every sample in it saw a non-empty queue */
		if (isnan(q[i].lo) || q[i].lo <= 0) {
			i++;
			continue;
		}
		memset(&run, 0, sizeof(run));
		run.t0 = s->t0[i];
		run.wall0 = s->wall[i];
		run.depth = q[i].hi;
		run.pid = s->pid[i];
		out->nonempty_points++;
		for (j = i + 1; j < s->n && follows(s, j - 1, j, max_gap) && !isnan(q[j].lo) && q[j].lo > 0; j++) {
			run.depth = fmax(run.depth, q[j].hi);
			out->nonempty_points++;
		}
		/* seen empty at the next point of the same run of samples: it ended by then */
		if (j < s->n && follows(s, j - 1, j, max_gap) && !isnan(q[j].lo)) {
			run.t1 = s->t0[j];
			run.wall1 = s->wall[j];
		} else {
			run.t1 = s->t1[j - 1];
			run.wall1 = s->wall[j - 1] + (s->t1[j - 1] - s->t0[j - 1]);
			run.ongoing = true;
		}
		run.length_s = run.t1 - run.t0;
		if (run.length_s > threshold_s && add(out, &cap, &run)) {
			vt_stalls_free(out);
			return -1;
		}
		i = j;
	}
	return 0;
}

void vt_stalls_free(struct vt_stalls *st)
{
	free(st->v);
	st->v = NULL;
	st->n = 0;
}

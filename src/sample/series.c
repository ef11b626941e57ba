/*
 * series.c — the memory of a struct vt_series.
 */
#include "sample/series.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void vt_series_init(struct vt_series *s)
{
	memset(s, 0, sizeof(*s));
}

static int grow(void **p, size_t elem, size_t cap)
{
	void *q = realloc(*p, elem * (cap ? cap : 1));

	if (!q)
		return -1;
	*p = q;
	return 0;
}

int vt_series_reserve(struct vt_series *s, size_t cap)
{
	size_t old = s->cap, i, m;

	if (cap <= old)
		return 0;
	if (grow((void **)&s->t, sizeof(double), cap) || grow((void **)&s->t0, sizeof(double), cap) ||
	    grow((void **)&s->t1, sizeof(double), cap) || grow((void **)&s->wall, sizeof(double), cap) ||
	    grow((void **)&s->count, sizeof(uint32_t), cap) || grow((void **)&s->pid, sizeof(pid_t), cap) ||
	    grow((void **)&s->incarnation, sizeof(uint32_t), cap))
		return -1;
	for (m = 0; m < VT_M_COUNT; m++) {
		if (!s->m[m])
			continue;
		if (grow((void **)&s->m[m], sizeof(struct vt_stat), cap))
			return -1;
		for (i = old; i < cap; i++)
			s->m[m][i] = (struct vt_stat){ NAN, NAN, NAN };
	}
	s->cap = cap;
	return 0;
}

struct vt_stat *vt_series_stat(struct vt_series *s, enum vt_metric m)
{
	size_t cap = s->cap, i;

	if ((unsigned)m >= VT_M_COUNT)
		return NULL;
	if (s->m[m])
		return s->m[m];
	s->m[m] = malloc(sizeof(struct vt_stat) * (cap ? cap : 1));
	if (!s->m[m])
		return NULL;
	for (i = 0; i < cap; i++)
		s->m[m][i] = (struct vt_stat){ NAN, NAN, NAN };
	return s->m[m];
}

/* Room for one more of n elements in an array that doubles. */
static int room_for_one(void **p, size_t elem, size_t n, size_t *cap)
{
	if (n < *cap)
		return 0;
	if (grow(p, elem, *cap ? *cap * 2 : 16))
		return -1;
	*cap = *cap ? *cap * 2 : 16;
	return 0;
}

int vt_series_add_event(struct vt_series *s, const struct vt_event *ev)
{
	if (room_for_one((void **)&s->events, sizeof(*ev), s->nevents, &s->events_cap))
		return -1;
	s->events[s->nevents++] = *ev;
	return 0;
}

int vt_series_add_thread(struct vt_series *s, const struct vt_thread_run *tr)
{
	if (room_for_one((void **)&s->threads, sizeof(*tr), s->nthreads, &s->threads_cap))
		return -1;
	s->threads[s->nthreads++] = *tr;
	return 0;
}

int vt_series_add_start(struct vt_series *s, const struct vt_process_start *ps)
{
	if (room_for_one((void **)&s->starts, sizeof(*ps), s->nstarts, &s->starts_cap))
		return -1;
	s->starts[s->nstarts++] = *ps;
	return 0;
}

const struct vt_process_start *vt_series_start_of(const struct vt_series *s, size_t from)
{
	const struct vt_process_start *best = NULL;
	size_t i;

	if (from >= s->n)
		return NULL;
	for (i = 0; i < s->nstarts; i++)
		if (s->starts[i].pid == s->pid[from] && s->starts[i].started_t <= s->t0[from] + 1e-6 &&
		    (!best || s->starts[i].started_t > best->started_t))
			best = &s->starts[i];
	return best;
}

void vt_series_free(struct vt_series *s)
{
	size_t m;

	if (!s)
		return;
	free(s->t);
	free(s->t0);
	free(s->t1);
	free(s->wall);
	free(s->count);
	free(s->pid);
	free(s->incarnation);
	for (m = 0; m < VT_M_COUNT; m++)
		free(s->m[m]);
	free(s->events);
	free(s->threads);
	free(s->starts);
	vt_series_init(s);
}

void vt_series_last_incarnation(const struct vt_series *s, size_t *from, size_t *to)
{
	size_t i = s->n;

	while (i > 0 && s->incarnation[i - 1] == s->incarnation[s->n - 1])
		i--;
	*from = i;
	*to = s->n;
}

/*
 * free_mem.c — free memory on resident pages over a recording (see free_mem.h).
 */
#include "analyze/free_mem.h"

#include <math.h>
#include <string.h>

/* The mean of metric m's point means over [from, to), NAN when none is known. */
static double mean_of(const struct vt_series *s, enum vt_metric m, size_t from, size_t to)
{
	double sum = 0;
	size_t i, n = 0;

	if (!s->m[m])
		return NAN;
	for (i = from; i < to; i++)
		if (isfinite(s->m[m][i].mean)) {
			sum += s->m[m][i].mean;
			n++;
		}
	return n ? sum / (double)n : NAN;
}

void vt_free_mem_summarize(const struct vt_series *s, struct vt_free_mem *out)
{
	const struct vt_stat *fr = s->m[VT_M_FREE_RESIDENT];
	size_t from, to, i, first = (size_t)-1, last = 0, q4 = 0;

	memset(out, 0, sizeof(*out));
	out->t0 = out->t1 = out->q4_t0 = NAN;
	out->q4_resident = out->q4_trimmable = out->q4_heap_free = NAN;
	out->lo = out->hi = out->last_resident = out->last_trimmable = NAN;
	out->recorded = fr != NULL;
	for (i = 0; i < s->nevents; i++)
		if (s->events[i].kind == VT_EV_ERROR && strstr(s->events[i].detail, "free_resident and trimmable not recorded")) {
			out->why_none = s->events[i].detail;
			break;
		}
	if (!fr)
		return;
	for (i = 0; i < s->n; i++) {
		if (!isfinite(fr[i].mean))
			continue;
		out->points++;
		if (first == (size_t)-1)
			first = i;
		last = i;
		out->lo = isfinite(out->lo) ? fmin(out->lo, fr[i].lo) : fr[i].lo;
		out->hi = isfinite(out->hi) ? fmax(out->hi, fr[i].hi) : fr[i].hi;
	}
	if (!out->points)
		return;
	out->t0 = s->t[first];
	out->t1 = s->t[last];
	out->last_resident = fr[last].mean;
	out->last_trimmable = s->m[VT_M_TRIMMABLE] ? s->m[VT_M_TRIMMABLE][last].mean : NAN;
	/* the last quarter of the time the last incarnation has figures for */
	vt_series_last_incarnation(s, &from, &to);
	for (i = from, first = (size_t)-1; i < to; i++)
		if (isfinite(fr[i].mean)) {
			if (first == (size_t)-1)
				first = i;
			last = i;
		}
	if (first == (size_t)-1)
		return;
	q4 = first;
	while (q4 < last && s->t[q4] < s->t[first] + 0.75 * (s->t[last] - s->t[first]))
		q4++;
	out->q4_t0 = s->t[q4];
	out->q4_resident = mean_of(s, VT_M_FREE_RESIDENT, q4, last + 1);
	out->q4_trimmable = mean_of(s, VT_M_TRIMMABLE, q4, last + 1);
	out->q4_heap_free = mean_of(s, VT_M_HEAP_FREE, q4, last + 1);
}

/*
 * rollup.c — samples summed up into points (see rollup.h).
 */
#include "store/rollup.h"

#include <math.h>
#include <string.h>

void vt_point_acc_clear(struct vt_point_acc *a)
{
	int m;

	memset(a, 0, sizeof(*a));
	for (m = 0; m < VT_M_COUNT; m++)
		a->m[m] = (struct vt_stat){ NAN, NAN, NAN };
}

bool vt_point_acc_ends(const struct vt_point_acc *a, double t, pid_t pid, double width_s, double gap_s)
{
	return a->count > 0 && (pid != a->pid || t - a->t1 > gap_s || t - a->t0 >= width_s);
}

/* Metric m of b (known in kb samples) after that of a (in ka). */
static void stat_merge(int m, struct vt_stat *a, uint32_t ka, const struct vt_stat *b, uint32_t kb)
{
	if (kb == 0)
		return;
	if (ka == 0) {
		*a = *b;
		return;
	}
	if (vt_metrics[m].flags & VT_MF_CUMULATIVE) {
		a->hi = b->hi;      /* lo stays the first value, hi is the last */
	} else {
		a->lo = fmin(a->lo, b->lo);
		a->hi = fmax(a->hi, b->hi);
	}
	a->mean = (a->mean * ka + b->mean * kb) / ((double)ka + kb);
}

void vt_point_acc_merge(struct vt_point_acc *a, const struct vt_point_acc *b)
{
	int m;

	if (b->count == 0)
		return;
	if (a->count == 0) {
		*a = *b;
		return;
	}
	for (m = 0; m < VT_M_COUNT; m++) {
		stat_merge(m, &a->m[m], a->known[m], &b->m[m], b->known[m]);
		a->known[m] += b->known[m];
	}
	a->last_id = b->last_id;
	a->t1 = b->t1;
	a->t_sum += b->t_sum;
	a->count += b->count;
}

void vt_point_acc_add(struct vt_point_acc *a, int64_t id, double t, double wall, pid_t pid,
		      const double v[VT_M_COUNT])
{
	int m;

	if (a->count == 0) {
		vt_point_acc_clear(a);
		a->first_id = id;
		a->t0 = t;
		a->wall = wall;
		a->pid = pid;
	}
	for (m = 0; m < VT_M_COUNT; m++) {
		struct vt_stat one = { v[m], v[m], v[m] };

		if (isnan(v[m]))
			continue;
		stat_merge(m, &a->m[m], a->known[m], &one, 1);
		a->known[m]++;
	}
	a->last_id = id;
	a->t1 = t;
	a->t_sum += t;
	a->count++;
}

/*
 * soak_step.c — one step in the floor of a soak (see soak_internal.h):
 * flat, one jump, flat again, and when the new level began.
 */
#include "analyze/soak_internal.h"

#include <math.h>
#include <string.h>

#define STEP_NOISE 5.0          /* a step is above this many sds of noise */
#define STEP_MIN_SHARE 0.05     /* a step moves the level by at least 5% */
#define STEP_SIDE 0.10          /* both sides of a step cover this share of the span */
#define STEP_SIDE_DRIFT 0.25    /* a side is flat when it drifts less than this share of the jump */

/* Median of bin floors [a, b). */
static double floors_median(struct vt_soak_work *w, const struct vt_soak_bins *bs, size_t a, size_t b)
{
	memcpy(w->tmp, bs->floor + a, sizeof(double) * (b - a));
	return vt_stat_median(w->tmp, b - a);
}

/* Is one side of a step flat: within tolerance, or without a trend and small against the jump? */
static int side_flat(struct vt_soak_work *w, size_t a, size_t b, double jump, double tol, bool *flat)
{
	struct vt_fit fit;
	double drift;

	if (vt_soak_bins_fit(&w->span, a, b, &fit))
		return -1;
	drift = fabs(fit.slope * vt_soak_bins_span(w, &w->span, a, b));
	*flat = isfinite(drift) && (drift <= tol || (fit.lo <= 0 && fit.hi >= 0 &&
						       drift <= STEP_SIDE_DRIFT * fabs(jump)));
	return 0;
}

static bool past(double x, double mid, bool up)
{
	return up ? x >= mid : x <= mid;
}

/*
 * When the new level began: the first point from a whose low (high, for a
 * step down) is past the midpoint of the two levels and whose next points
 * mostly stay there.  When the point before it summarises several samples
 * and some were already past, the step began inside it: its mean says
 * what share of its samples were at the new level.
 */
static double step_time(struct vt_soak_work *w, size_t a, size_t b, double before, double after)
{
	const struct vt_soak_pts *p = &w->p;
	double mid = (before + after) / 2;
	bool up = after > before;
	size_t i, k, m;

	for (i = a; i < b; i++) {
		if (!past(up ? p->lo[i] : p->hi[i], mid, up))
			continue;
		m = p->n - i - 1 < 5 ? p->n - i - 1 : 5;
		for (k = 0; k < m; k++)
			w->tmp[k] = up ? p->lo[i + 1 + k] : p->hi[i + 1 + k];
		if (m == 0 || past(vt_stat_median(w->tmp, m), mid, up))
			break;
	}
	if (i == b)
		return NAN;
	if (i > 0 && p->w[i - 1] > 1 && past(up ? p->hi[i - 1] : p->lo[i - 1], mid, up)) {
		double f = (p->mean[i - 1] - before) / (after - before);
		double nnew = round(fmin(fmax(f, 0), 1) * p->w[i - 1]);
		double spacing = (p->t1[i - 1] - p->t0[i - 1]) / (p->w[i - 1] - 1);

		if (nnew >= 1)
			return p->t1[i - 1] - (nnew - 1) * spacing;
	}
	return p->t0[i];
}

/* Sum of |floor - m| over bins [a, b). */
static double l1_cost(const struct vt_soak_bins *bs, size_t a, size_t b, double m)
{
	double c = 0;
	size_t k;

	for (k = a; k < b; k++)
		c += fabs(bs->floor[k] - m);
	return c;
}

/*
 * One change point in the span's bin floors: the split where two levels
 * (the medians either side) fit the floors best in absolute deviation,
 * each side at least three bins and STEP_SIDE of the span.  (Maximising
 * the difference of the medians does not place the split: any split
 * within a side's minority keeps both medians.)  A step when the jump is
 * beyond the tolerance and STEP_NOISE sds of noise and both sides are flat.
 */
int vt_soak_find_step(struct vt_soak_work *w, struct vt_soak_verdict *v, bool *found)
{
	const struct vt_soak_bins *b = &w->span;
	double span = v->t1 - v->t0, best = INFINITY, before = NAN, after = NAN, jump, t;
	size_t k, split = 0, lo, hi;
	bool flat_before, flat_after;

	*found = false;
	for (k = 3; k + 3 <= b->n; k++) {
		double at = w->p.t0[b->first[k]], cost, x, y;

		if (at - v->t0 < STEP_SIDE * span || v->t1 - at < STEP_SIDE * span)
			continue;
		x = floors_median(w, b, 0, k);
		y = floors_median(w, b, k, b->n);
		cost = l1_cost(b, 0, k, x) + l1_cost(b, k, b->n, y);
		if (cost < best) {
			best = cost;
			split = k;
			before = x;
			after = y;
		}
	}
	jump = after - before;
	if (!split || !(fabs(jump) > v->tolerance) || !(fabs(jump) > STEP_NOISE * v->noise))
		return 0;
	/* A level shift of a few percent (an arena trimmed, a cache refilled) is
	 * real but not a story to tell: the settle rule takes it. */
	if (!(fabs(jump) >= STEP_MIN_SHARE * fmax(fabs(before), fabs(after))))
		return 0;
	if (side_flat(w, 0, split, jump, v->tolerance, &flat_before) ||
	    side_flat(w, split, b->n, jump, v->tolerance, &flat_after))
		return -1;
	if (!flat_before || !flat_after)
		return 0;
	/* The best split may sit a bin off the jump: look from two bins before to one after. */
	lo = b->first[split >= 2 ? split - 2 : 0];
	hi = b->end[split + 1 < b->n ? split + 1 : split];
	t = step_time(w, lo, hi, before, after);
	if (isnan(t))
		t = w->p.t0[b->first[split]];
	v->step_t = t;
	v->step_before = before;
	v->step_after = after;
	v->step_bytes = jump;
	*found = true;
	return 0;
}

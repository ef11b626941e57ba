/*
 * refill.c — the curve after a trim judged (see refill.h).  The curve is
 * taken as straight lines between the points read: the half-life and the
 * time the level was reached are where those lines cross, and the relief
 * over a period is their mean.  Points not read (NAN) are stepped over.
 */
#include "analyze/refill.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* First t where the curve reaches target (rising), between read points; NAN never. */
static double first_crossing(const double *t, const double *c, size_t n, double target)
{
	size_t i, prev = n;

	for (i = 0; i < n; i++) {
		if (!isfinite(c[i]) || !isfinite(t[i]))
			continue;
		if (c[i] >= target) {
			if (prev == n || c[i] == c[prev])
				return t[i];
			return t[prev] + (target - c[prev]) / (c[i] - c[prev]) * (t[i] - t[prev]);
		}
		prev = i;
	}
	return NAN;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double vt_refill_relief(const double *t, const double *c, size_t n, double before, double period_s)
{
	double area = 0, pt = NAN, pc = NAN;
	size_t i;

	if (!(period_s > 0) || !isfinite(before))
		return NAN;
	for (i = 0; i < n; i++) {
		if (!isfinite(c[i]) || !isfinite(t[i]))
			continue;
		if (isnan(pt)) {
			if (t[i] > 0)
				return NAN;     /* the curve must start at the trim */
			pt = t[i];
			pc = c[i];
			continue;
		}
		if (t[i] >= period_s) {
			double cp = pc + (c[i] - pc) * (period_s - pt) / (t[i] - pt);

			area += (period_s - pt) * (before - (pc + cp) / 2);
			return area / period_s;
		}
		area += (t[i] - pt) * (before - (pc + c[i]) / 2);
		pt = t[i];
		pc = c[i];
	}
	return NAN;     /* the follow ended before period_s */
}

double vt_refill_round_period(double x, double min_s)
{
	double step = x < 20 ? 1 : x < 60 ? 5 : x < 600 ? 30 : 60;
	double p = round(x / step) * step;

	return p < min_s ? min_s : p;
}

/*
 * The level the curve ends at: the median of its last points (the last
 * fifth of the follow, at least three intervals, at least three points),
 * and whether it is flat there: the least-squares rise across those points
 * is within a tenth of what came back, or within twice their scatter.
 */
static void end_level(const struct vt_refill_input *in, double after, double returned, double followed,
		      double *level, bool *flat)
{
	double span = fmax(3 * in->every_s, 0.2 * followed), from = followed - span;
	double *v, st = 0, sc = 0, stt = 0, stc = 0, m, slope, ss = 0, sd, rise, t_first = NAN;
	size_t i, k = 0, finite = 0;

	*level = NAN;
	*flat = false;
	for (i = 0; i < in->n; i++)
		finite += isfinite(in->committed[i]) && isfinite(in->t[i]);
	if (finite < 4)
		return;
	if (!(v = malloc(in->n * sizeof(*v))))
		return;
	/* the window, widened to the last three points read when it holds fewer (never point 0) */
	for (;;) {
		k = 0;
		for (i = 1; i < in->n; i++)
			if (isfinite(in->committed[i]) && isfinite(in->t[i]) && in->t[i] >= from)
				v[k++] = in->committed[i];
		if (k >= 3 || from <= 0)
			break;
		from -= in->every_s > 0 ? in->every_s : span;
	}
	if (k < 3) {
		free(v);
		return;
	}
	qsort(v, k, sizeof(*v), cmp_double);
	*level = k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
	free(v);
	for (i = 1; i < in->n; i++) {
		if (!isfinite(in->committed[i]) || !isfinite(in->t[i]) || in->t[i] < from)
			continue;
		if (isnan(t_first))
			t_first = in->t[i];
		st += in->t[i];
		sc += in->committed[i];
		stt += in->t[i] * in->t[i];
		stc += in->t[i] * in->committed[i];
	}
	m = (double)k;
	if (m * stt - st * st <= 0)
		return;
	slope = (m * stc - st * sc) / (m * stt - st * st);
	for (i = 1; i < in->n; i++) {
		double fit;

		if (!isfinite(in->committed[i]) || !isfinite(in->t[i]) || in->t[i] < from)
			continue;
		fit = sc / m + slope * (in->t[i] - st / m);
		ss += (in->committed[i] - fit) * (in->committed[i] - fit);
	}
	sd = sqrt(ss / m);
	rise = slope * (followed - t_first);
	*flat = fabs(rise) <= fmax(fmax(0.1 * fabs(*level - after), 2 * sd), 0.01 * returned);
}

int vt_refill_judge(const struct vt_refill_input *in, struct vt_refill_verdict *out)
{
	double after, returned, level;
	bool flat, back;
	size_t i;

	memset(out, 0, sizeof(*out));
	out->half_life_s = out->level = out->level_at_s = out->refilled_share = NAN;
	out->period_s = out->relief = out->followed_s = NAN;
	out->lead_slope = out->growth_share = NAN;
	if (in->n < 1 || !isfinite(in->before) || !isfinite(in->committed[0]) || !isfinite(in->t[0]))
		return -1;
	after = in->committed[0];
	returned = in->before - after;
	out->before = in->before;
	out->after = after;
	out->returned = returned;
	for (i = 0; i < in->n; i++)
		if (isfinite(in->t[i]) && isfinite(in->committed[i]))
			out->followed_s = in->t[i];
	out->tick_s = fmax(in->every_s, VT_REFILL_MIN_PERIOD_S);
	if (in->lead_s > 0 && isfinite(in->lead_slope)) {
		out->lead_s = in->lead_s;
		out->lead_slope = in->lead_slope;
	}
	if (in->period_s > 0) {
		out->period_s = in->period_s;
		out->relief = vt_refill_relief(in->t, in->committed, in->n, in->before, in->period_s);
	}
	if (returned < fmax(VT_REFILL_MIN_BYTES, VT_REFILL_MIN_SHARE * in->before)) {
		out->kind = VT_REFILL_NOTHING;
		return 0;
	}
	out->half_life_s = first_crossing(in->t, in->committed, in->n, after + returned / 2);
	end_level(in, after, returned, out->followed_s, &level, &flat);
	out->level = level;
	if (isfinite(level)) {
		out->refilled_share = (level - after) / returned;
		out->level_at_s = level <= after ? 0
			: first_crossing(in->t, in->committed, in->n,
					 after + (level - after) - VT_REFILL_LEVEL_TOL * returned);
	}
	back = isfinite(level) && level >= in->before - VT_REFILL_LEVEL_TOL * returned;
	if (isfinite(out->half_life_s) && out->half_life_s < VT_REFILL_TICKS * out->tick_s)
		out->kind = VT_REFILL_WITHIN_TICK;
	else if (back)
		out->kind = VT_REFILL_BACK;
	else if (isfinite(level) && flat && isfinite(out->level_at_s) &&
		 out->followed_s - out->level_at_s >= VT_REFILL_SETTLE_TICKS * out->tick_s)
		out->kind = VT_REFILL_SETTLED_LOWER;
	else
		out->kind = VT_REFILL_CANNOT_TELL;
	if (out->kind == VT_REFILL_SETTLED_LOWER)
		out->held_for_good = in->before - level;
	if (out->kind == VT_REFILL_CANNOT_TELL)
		out->level_at_s = NAN;      /* not a level yet: where it was when the follow ended */
	out->overshot = isfinite(level) && level >= in->before + returned / 2;
	/* growth before the trim, carried on the same pace, explains this much of the refill */
	if (isfinite(out->lead_slope) && returned > 0) {
		double span = isfinite(out->half_life_s) ? out->half_life_s : out->followed_s;

		out->growth_share = fmax(0, out->lead_slope) * span / returned;
		out->growing = out->growth_share >= VT_REFILL_GROWTH_SHARE;
	}
	/* the period: the user's, or near the half-life (where a trim still has most of its relief) */
	if (!(in->period_s > 0) && isfinite(out->half_life_s) && out->kind != VT_REFILL_WITHIN_TICK) {
		out->period_s = vt_refill_round_period(out->half_life_s, out->tick_s);
		out->relief = vt_refill_relief(in->t, in->committed, in->n, in->before, out->period_s);
	}
	return 0;
}

double vt_refill_slope(const double *t, const double *committed, size_t n)
{
	double st = 0, sc = 0, stt = 0, stc = 0, k = 0, den;
	size_t i;

	for (i = 0; i < n; i++) {
		if (!isfinite(t[i]) || !isfinite(committed[i]))
			continue;
		st += t[i];
		sc += committed[i];
		stt += t[i] * t[i];
		stc += t[i] * committed[i];
		k++;
	}
	if (k < 2)
		return NAN;
	den = k * stt - st * st;
	return den > 0 ? (k * stc - st * sc) / den : NAN;
}

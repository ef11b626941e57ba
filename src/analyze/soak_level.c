/*
 * soak_level.c — the robust level work of the soak verdict (see
 * soak_internal.h): the points that have the metric, equal-time bins and
 * their floors, the noise and the tolerance, the quarters and the settled
 * window.  The floor of a run of points is a robust low (the 5th
 * percentile, never below the second-lowest), so that one odd sample
 * cannot set it.
 */
#include "analyze/soak_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PTS_PER_BIN 4           /* >= 3, so a bin's robust low ignores one odd point */
#define MIN_BINS 8
#define FLOOR_Q 0.05            /* the floor: 5th percentile of lows */
#define NOISE_TOL 3.0           /* tolerance: this many sds of noise ... */
#define LEVEL_TOL 0.005         /* ... or this share of the level */
#define SETTLED_BINS 3          /* a settled window is at least this many bins */
#define LEVEL_BLOCKS 20         /* the local level: medians of 1/20 of the span, interpolated */

/* ---- the points ---- */

int vt_soak_work_alloc(struct vt_soak_work *w, const struct vt_series *s, size_t n)
{
	struct vt_soak_pts *p = &w->p;
	size_t cap = n ? n : 1;

	memset(w, 0, sizeof(*w));
	w->s = s;
	p->idx = malloc(sizeof(*p->idx) * cap);
	p->t = malloc(sizeof(double) * cap * 7);
	w->tmp = malloc(sizeof(*w->tmp) * cap);
	w->wv = malloc(sizeof(*w->wv) * cap);
	if (!p->idx || !p->t || !w->tmp || !w->wv)
		return -1;
	/* One block for the seven double arrays. */
	p->t0 = p->t + cap;
	p->t1 = p->t0 + cap;
	p->lo = p->t1 + cap;
	p->hi = p->lo + cap;
	p->mean = p->hi + cap;
	p->w = p->mean + cap;
	return 0;
}

void vt_soak_work_free(struct vt_soak_work *w)
{
	free(w->p.idx);
	free(w->p.t);
	free(w->tmp);
	free(w->wv);
}

/* Points [from, to) of the series where metric m is known. */
void vt_soak_pts_load(struct vt_soak_work *w, enum vt_metric m, size_t from, size_t to)
{
	const struct vt_series *s = w->s;
	const struct vt_stat *st = s->m[m];
	struct vt_soak_pts *p = &w->p;
	size_t i;

	p->n = 0;
	for (i = from; st && i < to; i++) {
		size_t k = p->n;

		if (isnan(st[i].mean))
			continue;
		p->idx[k] = i;
		p->t[k] = s->t[i];
		p->t0[k] = s->t0[i];
		p->t1[k] = s->t1[i];
		p->mean[k] = st[i].mean;
		p->lo[k] = isnan(st[i].lo) ? st[i].mean : st[i].lo;
		p->hi[k] = isnan(st[i].hi) ? st[i].mean : st[i].hi;
		p->w[k] = s->count[i] ? s->count[i] : 1;
		p->n++;
	}
}

/* Floor of n lows: the FLOOR_Q quantile, and never below the second-lowest of three or more. */
static double robust_low(double *v, size_t n)
{
	double q = FLOOR_Q;

	if (n <= 2)
		return vt_stat_min(v, n);
	if (q * (double)(n - 1) < 1)
		q = 1.0 / (double)(n - 1);
	return vt_stat_quantile(v, n, q);
}

static double floor_of(struct vt_soak_work *w, size_t a, size_t b)
{
	memcpy(w->tmp, w->p.lo + a, sizeof(double) * (b - a));
	return robust_low(w->tmp, b - a);
}

/* Count-weighted median of the point means [a, b). */
static double median_of(struct vt_soak_work *w, size_t a, size_t b)
{
	size_t i;

	for (i = a; i < b; i++)
		w->wv[i - a] = (struct vt_wval){ w->p.mean[i], w->p.w[i] };
	return vt_stat_wquantile(w->wv, b - a, 0.5);
}

double vt_soak_samples_of(const struct vt_soak_work *w, size_t a, size_t b)
{
	double n = 0;
	size_t i;

	for (i = a; i < b; i++)
		n += w->p.w[i];
	return n;
}

/* First point at or after time t (p.n if none). */
size_t vt_soak_point_at(const struct vt_soak_work *w, double t)
{
	size_t lo = 0, hi = w->p.n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (w->p.t[mid] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
/* ---- bins ---- */

static size_t bins_wanted(size_t npts)
{
	size_t nb = npts / PTS_PER_BIN;

	if (nb < MIN_BINS)
		nb = npts < MIN_BINS ? npts : MIN_BINS;
	return nb > MAX_BINS ? MAX_BINS : nb;
}

/* Equal-time bins over points [a, b), by each point's mean time. */
void vt_soak_bins_make(struct vt_soak_work *w, size_t a, size_t b, struct vt_soak_bins *out)
{
	const struct vt_soak_pts *p = &w->p;
	size_t nb = bins_wanted(b - a), i = a, k;
	double ta = b > a ? p->t[a] : 0, width = b > a ? (p->t[b - 1] - ta) / (double)nb : 0;

	out->n = 0;
	for (k = 0; k < nb && i < b; k++) {
		double edge = ta + (double)(k + 1) * width, tw = 0, ws = 0;
		size_t first = i, j = out->n;

		while (i < b && (k + 1 == nb || p->t[i] < edge)) {
			tw += p->t[i] * p->w[i];
			ws += p->w[i];
			i++;
		}
		if (i == first)
			continue;
		out->first[j] = first;
		out->end[j] = i;
		out->t[j] = tw / ws;
		out->floor[j] = floor_of(w, first, i);
		out->n++;
	}
}

/*
 * Theil–Sen on bins [a, b) of bs.  Sen's interval assumes independent
 * residuals; floors that wander (residuals that follow each other) make
 * it too narrow.  With r the lag-1 autocorrelation of the residuals, an
 * AR(1) process has n (1 - r) / (1 + r) independent values' worth of
 * information, so the interval widens by sqrt((1 + r) / (1 - r)) (r
 * capped at 0.9; a negative r is left alone rather than narrowing).
 */
int vt_soak_bins_fit(const struct vt_soak_bins *bs, size_t a, size_t b, struct vt_fit *fit)
{
	double num = 0, den = 0, prev = NAN, r, widen;
	size_t k;

	if (vt_stat_theil_sen(bs->t + a, bs->floor + a, b - a, VT_Z90, fit))
		return -1;
	if (b - a < 4 || !isfinite(fit->lo) || !isfinite(fit->hi))
		return 0;
	for (k = a; k < b; k++) {
		double e = bs->floor[k] - (fit->intercept + fit->slope * bs->t[k]);

		den += e * e;
		if (!isnan(prev))
			num += e * prev;
		prev = e;
	}
	r = den > 0 ? fmin(num / den, 0.9) : 0;
	if (r <= 0)
		return 0;
	widen = sqrt((1 + r) / (1 - r));
	fit->lo = fit->slope - (fit->slope - fit->lo) * widen;
	fit->hi = fit->slope + (fit->hi - fit->slope) * widen;
	return 0;
}

/* Duration of bins [a, b): first sample of the first point to last sample of the last. */
double vt_soak_bins_span(const struct vt_soak_work *w, const struct vt_soak_bins *bs, size_t a, size_t b)
{
	return w->p.t1[bs->end[b - 1] - 1] - w->p.t0[bs->first[a]];
}
/* ---- noise and tolerance ---- */

/*
 * Scatter of lows around a slowly moving level: the level is the median of
 * blocks of LEVEL_BLOCKS-th of the points, interpolated linearly between
 * block centres (so a steady trend is not scatter).  It sees what
 * consecutive differences miss: an oscillation slower than the sampling,
 * a GC-like sawtooth that climbs a little each sample and drops at once.
 * lows[i].v is the low, lows[i].w its time.
 */
static double level_scatter(struct vt_soak_work *w, const struct vt_wval *lows, size_t n)
{
	double centre[LEVEL_BLOCKS], median[LEVEL_BLOCKS];
	size_t per = (n + LEVEL_BLOCKS - 1) / LEVEL_BLOCKS, nb = 0, i, k, j = 0;

	if (per < 5)
		per = 5;    /* a median of fewer is not a level */

	if (n < 2 * per)
		return 0;
	for (i = 0; i + per <= n; i += per) {
		size_t end = i + 2 * per > n ? n : i + per;   /* the last block takes the rest */

		for (k = i; k < end; k++)
			w->tmp[k - i] = lows[k].v;
		median[nb] = vt_stat_median(w->tmp, end - i);
		centre[nb++] = (lows[i].w + lows[end - 1].w) / 2;
	}
	for (i = 0; i < n; i++) {
		double t = lows[i].w, lv;

		while (j + 1 < nb - 1 && centre[j + 1] < t)
			j++;
		if (t <= centre[0])
			lv = median[0];
		else if (t >= centre[nb - 1])
			lv = median[nb - 1];
		else
			lv = median[j] + (median[j + 1] - median[j]) * (t - centre[j]) /
					 (centre[j + 1] - centre[j]);
		w->tmp[i] = lows[i].v - lv;
	}
	return vt_stat_robust_sd(w->tmp, n);
}

/*
 * Noise of metric m in the span, its level and its tolerance (see the top
 * comment).  The noise is the larger of the scatter between consecutive
 * lows (robust sd of their differences / sqrt(2)) and their scatter
 * around the slowly moving level (level_scatter).  Reads the series
 * directly so that it serves any metric.
 */
double vt_soak_tolerance_of(struct vt_soak_work *w, enum vt_metric m, size_t from, size_t to,
			   double *noise, double *level)
{
	const struct vt_stat *st = w->s->m[m];
	double diff;
	size_t i, n = 0;

	*noise = *level = NAN;
	if (!st)
		return NAN;
	for (i = from; i < to; i++) {
		double lo = isnan(st[i].lo) ? st[i].mean : st[i].lo;

		if (!isnan(st[i].mean))
			w->wv[n++] = (struct vt_wval){ lo, w->s->t[i] };
	}
	if (n == 0)
		return NAN;
	for (i = 1; i < n; i++)
		w->tmp[i - 1] = w->wv[i].v - w->wv[i - 1].v;
	diff = vt_stat_robust_sd(w->tmp, n - 1) / sqrt(2);
	*noise = fmax(diff, level_scatter(w, w->wv, n));

	for (i = from, n = 0; i < to; i++) {
		double weight = w->s->count[i] ? w->s->count[i] : 1;

		if (!isnan(st[i].mean))
			w->wv[n++] = (struct vt_wval){ st[i].mean, weight };
	}
	*level = vt_stat_wquantile(w->wv, n, 0.5);
	return fmax(NOISE_TOL * *noise, vt_soak_change_floor(m, *level));
}

double vt_soak_change_floor(enum vt_metric m, double level)
{
	double abs_min;

	switch ((unsigned)m < VT_M_COUNT ? vt_metrics[m].unit : VT_UNIT_COUNT) {
	case VT_UNIT_BYTES: abs_min = VT_MiB; break;
	case VT_UNIT_CORES: case VT_UNIT_FRACTION: abs_min = 0.01; break;
	default: abs_min = 0.5; break;
	}
	return fmax(LEVEL_TOL * fabs(level), abs_min);
}
/* ---- quarters and settling ---- */

void vt_soak_quarters(struct vt_soak_work *w, struct vt_soak_verdict *v)
{
	const struct vt_soak_pts *p = &w->p;
	double len = (v->t1 - v->t0) / 4;
	size_t i = 0, q;

	for (q = 0; q < 4; q++) {
		struct vt_quarter *qu = &v->q[q];
		size_t first = i;

		qu->t0 = v->t0 + (double)q * len;
		qu->t1 = q == 3 ? v->t1 : v->t0 + (double)(q + 1) * len;
		while (i < p->n && (q == 3 || p->t[i] < qu->t1))
			i++;
		qu->samples = (size_t)vt_soak_samples_of(w, first, i);
		qu->floor = i > first ? floor_of(w, first, i) : NAN;
		qu->median = i > first ? median_of(w, first, i) : NAN;
		qu->peak = i > first ? vt_stat_max(p->hi + first, i - first) : NAN;
	}
	v->floor_drift = v->q[3].floor - v->q[0].floor;
}

/* Floor of the span's last part: median of the floors of the bins in its last quarter. */
static double final_level(struct vt_soak_work *w, const struct vt_soak_verdict *v)
{
	const struct vt_soak_bins *b = &w->span;
	double from = v->t0 + 0.75 * (v->t1 - v->t0);
	size_t k, n = 0;

	for (k = 0; k < b->n; k++)
		if (b->t[k] >= from)
			w->tmp[n++] = b->floor[k];
	if (n == 0)
		w->tmp[n++] = b->floor[b->n - 1];
	return vt_stat_median(w->tmp, n);
}

/* Range (5th..95th percentile of lows and highs) and median of points [a, p.n). */
static void window_figures(struct vt_soak_work *w, size_t a, double *lo, double *hi, double *median)
{
	size_t n = w->p.n - a;

	memcpy(w->tmp, w->p.lo + a, sizeof(double) * n);
	*lo = vt_stat_quantile(w->tmp, n, RANGE_Q);
	memcpy(w->tmp, w->p.hi + a, sizeof(double) * n);
	*hi = vt_stat_quantile(w->tmp, n, 1 - RANGE_Q);
	*median = median_of(w, a, w->p.n);
}

/*
 * A bin is 1/160 of a long span (4.5 h of 30 days): find where in the bin
 * before the window the floor came within the tolerance, walking back in
 * chunks of PTS_PER_BIN points while their floor stays in line.
 */
static size_t settle_refine(struct vt_soak_work *w, size_t a, size_t start, double level, double tol)
{
	while (start - a >= PTS_PER_BIN &&
	       fabs(floor_of(w, start - PTS_PER_BIN, start) - level) <= tol)
		start -= PTS_PER_BIN;
	return start;
}

/* The settled window's figures, from its first point w->settled_pt to the end. */
static void settled_figures(struct vt_soak_work *w, struct vt_soak_verdict *v)
{
	v->settled_from = w->p.idx[w->settled_pt];
	v->settled_t0 = w->p.t0[w->settled_pt];
	v->settle_s = v->settled_t0 - v->t0;
	v->settled_window_s = w->p.t1[w->p.n - 1] - w->p.t0[w->settled_pt];
	v->settled_points = w->p.n - w->settled_pt;
	window_figures(w, w->settled_pt, &v->settled_lo, &v->settled_hi, &v->settled_median);
}

/*
 * The settled window: the longest run of bins up to the end whose floors
 * stay within the tolerance of the final level.  One bin out of line
 * between two bins in line is an excursion, not the end of the window
 * (a bin of a few points can have its floor set by one dip); the window
 * always begins with a bin in line.
 */
void vt_soak_settle(struct vt_soak_work *w, struct vt_soak_verdict *v)
{
	const struct vt_soak_bins *b = &w->span;
	double level = final_level(w, v);
	size_t k = b->n;

	while (k > 0) {
		size_t j = k - 1;

		if (fabs(b->floor[j] - level) > v->tolerance &&
		    !(j > 0 && j + 1 < b->n && fabs(b->floor[j - 1] - level) <= v->tolerance))
			break;
		k = j;
	}
	w->settled_pt = w->p.n;
	v->settled = b->n - k >= SETTLED_BINS;
	if (!v->settled)
		return;
	w->settled_bin = k;
	w->settled_pt = k > 0 ? settle_refine(w, b->first[k - 1], b->first[k], level, v->tolerance)
			      : b->first[k];
	settled_figures(w, v);
}

/* Begin the settled window later, at point pt (in the span bin that holds it). */
void vt_soak_settle_at(struct vt_soak_work *w, struct vt_soak_verdict *v, size_t pt)
{
	const struct vt_soak_bins *b = &w->span;
	size_t k = 0;

	while (k + 1 < b->n && b->first[k + 1] <= pt)
		k++;
	v->settled = true;
	w->settled_bin = k;
	w->settled_pt = pt;
	settled_figures(w, v);
}

void vt_soak_unsettle(struct vt_soak_work *w, struct vt_soak_verdict *v)
{
	v->settled = false;
	v->settled_from = v->to;
	v->settle_s = v->settled_t0 = v->settled_lo = v->settled_hi = v->settled_median = NAN;
	v->settled_window_s = NAN;
	v->settled_points = 0;
	w->settled_pt = w->p.n;
}

double vt_soak_settled_s(const struct vt_soak_work *w)
{
	return w->settled_pt < w->p.n ? w->p.t1[w->p.n - 1] - w->p.t0[w->settled_pt] : 0;
}

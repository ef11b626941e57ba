/*
 * soak.c — leak, plateau, step or still settling: the verdict on a soak
 * recording (see soak.h), with every figure it rests on.
 *
 * The verdict is about the floor: the level the metric comes back to
 * between bursts.  Churn moves the peaks and the mean; a leak moves the
 * floor (field report 000: "FLOOR drift q1->q4").  A robust low (the 5th
 * percentile, and never below the second-lowest value) stands for the
 * floor of a quarter or of a time bin, so that one odd sample cannot set
 * it.  Choices, each defended where it is made:
 *
 *  - noise: robust (MAD) sd of the point lows around their local level,
 *    the larger of two views: consecutive differences / sqrt(2) (blind
 *    to a steady drift and, MAD being robust, to steps), and the scatter
 *    around medians of twentieths of the span interpolated linearly
 *    (which sees a sawtooth or an oscillation slower than the sampling).
 *    At the points' resolution: a point that summarises 100 samples has
 *    a steadier low than one sample, and its floors scatter less too.
 *  - tolerance: a change smaller than max(3 noise, 0.5% of the level,
 *    1 MiB) is "within noise".  3 sd: floors of many bins still rarely
 *    stray beyond it by chance.  0.5%: nobody acts on less (the report's
 *    plateau moved 1 MB on 611 MB).  1 MiB: heaps grow in 128 KiB..1 MiB
 *    steps, finer movement is the allocator's granularity.
 *  - material: the drift a plateau must rule out, max(2% of the level,
 *    1 MiB), not scaled by noise: a noisy recording must earn a plateau
 *    with a narrow slope interval, not get one because its tolerance is
 *    wide (the report's leak moved its floor 4% in 2.7 h).
 *  - floors of equal-time bins (about 4 points each, 8..160 bins) carry
 *    the trend; Theil–Sen on them is O(bins^2) whatever the recording's
 *    length, and its median of pairwise slopes shrugs off page-sized
 *    steps and lone spikes.  90% interval by Sen's ranks (stats.h),
 *    widened when the floors wander (bins_fit).
 *  - settled window: the longest suffix of bins whose floors stay within
 *    the tolerance of the final level (median floor of the last quarter).
 *
 * Order of the tests: too short, step, leak (or still settling), plateau,
 * else cannot tell.  Never prints and writes no sentence: the verdict holds
 * a reason code and the figures it quotes (render/ words them).
 */
#include "analyze/soak.h"

#include "analyze/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MiB (1024.0 * 1024.0)

#define MIN_POINTS 8            /* fewer points cannot show a shape */
#define DEFAULT_MIN_SAMPLES 20
#define DEFAULT_MIN_SPAN_S 20.0   /* with 20 intervals: a shape needs time as well as samples */
#define MIN_SPAN_INTERVALS 20
#define PTS_PER_BIN 4           /* >= 3, so a bin's robust low ignores one odd point */
#define MIN_BINS 8
#define MAX_BINS 160            /* Theil–Sen: 12,720 pairwise slopes at most */
#define FLOOR_Q 0.05            /* the floor: 5th percentile of lows */
#define RANGE_Q 0.05            /* ranges: 5th..95th percentile */
#define WARMUP 0.25             /* share of the span left out of the trend fit */
#define NOISE_TOL 3.0           /* tolerance: this many sds of noise ... */
#define LEVEL_TOL 0.005         /* ... or this share of the level */
#define LEVEL_MATERIAL 0.02     /* a plateau rules out drifts of this share of the level */
#define STEP_NOISE 5.0          /* a step is above this many sds of noise */
#define STEP_MIN_SHARE 0.05     /* a step moves the level by at least 5% */
#define STEP_SIDE 0.10          /* both sides of a step cover this share of the span */
#define STEP_SIDE_DRIFT 0.25    /* a side is flat when it drifts less than this share of the jump */
#define DECEL_RATIO (1.0 / 3)   /* growth this much slower in the last half: decelerating */
#define SETTLED_BINS 3          /* a settled window is at least this many bins */
#define PLATEAU_SHARE (1.0 / 3) /* a plateau's settled window covers this share of the span */
#define PLATEAU_POINTS 10
#define LEVEL_BLOCKS 20         /* the local level: medians of 1/20 of the span, interpolated */
#define GAP_INTERVALS 3.0       /* points further apart than this many intervals: a gap */

const char *vt_verdict_name(enum vt_verdict_kind k)
{
	switch (k) {
	case VT_VERDICT_SETTLING: return "still settling";
	case VT_VERDICT_PLATEAU: return "plateau";
	case VT_VERDICT_LEAK: return "leak";
	case VT_VERDICT_STEP: return "step growth";
	case VT_VERDICT_CANNOT_TELL: break;
	}
	return "cannot tell yet";
}

const char *vt_verdict_key(enum vt_verdict_kind k)
{
	switch (k) {
	case VT_VERDICT_SETTLING: return "settling";
	case VT_VERDICT_PLATEAU: return "plateau";
	case VT_VERDICT_LEAK: return "leak";
	case VT_VERDICT_STEP: return "step";
	case VT_VERDICT_CANNOT_TELL: break;
	}
	return "cannot_tell";
}

void vt_soak_opts_default(struct vt_soak_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->metric = VT_M_COMMITTED;
	o->min_span_s = 0;              /* resolved against the interval: 20 intervals, at least 20 s */
	o->min_samples = DEFAULT_MIN_SAMPLES;
}

/* The span's points that have the metric, in time order (copies, for locality). */
struct pts {
	size_t n;
	size_t *idx;                    /* series index */
	double *t, *t0, *t1, *lo, *hi, *mean, *w;   /* w: samples in the point */
};

/* Equal-time bins over a run of points; empty bins are left out. */
struct bins {
	size_t n;
	double t[MAX_BINS];             /* count-weighted mean time of its points */
	double floor[MAX_BINS];         /* robust low of its points' lows */
	size_t first[MAX_BINS], end[MAX_BINS];   /* its points [first, end) in struct pts */
};

/* Everything one analysis allocates; vt_soak_analyze owns it. */
struct work {
	const struct vt_series *s;
	struct pts p;
	double *tmp;                    /* scratch, one value per point of the span */
	struct vt_wval *wv;             /* scratch pairs, same size */
	struct bins span, fit;
	bool bytes;                     /* the metric is in bytes (else a count) */
	double interval;                /* sampling interval, s (nominal, else measured) */
	double level;                   /* median of the metric over the span */
	double material;
	size_t settled_pt;              /* settled window start in struct pts (p.n: none) */
	size_t settled_bin;             /* the span bin it begins in */
	size_t fit_pt;                  /* fit window start in struct pts (its duration: v->slope_window_s) */
	double fit_b;                   /* the fitted line: floor = fit_b + slope * t */
};

/* ---- the points ---- */

static int work_alloc(struct work *w, const struct vt_series *s, size_t n)
{
	struct pts *p = &w->p;
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

static void work_free(struct work *w)
{
	free(w->p.idx);
	free(w->p.t);
	free(w->tmp);
	free(w->wv);
}

/* Points [from, to) of the series where metric m is known. */
static void pts_load(struct work *w, enum vt_metric m, size_t from, size_t to)
{
	const struct vt_series *s = w->s;
	const struct vt_stat *st = s->m[m];
	struct pts *p = &w->p;
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

static double floor_of(struct work *w, size_t a, size_t b)
{
	memcpy(w->tmp, w->p.lo + a, sizeof(double) * (b - a));
	return robust_low(w->tmp, b - a);
}

/* Count-weighted median of the point means [a, b). */
static double median_of(struct work *w, size_t a, size_t b)
{
	size_t i;

	for (i = a; i < b; i++)
		w->wv[i - a] = (struct vt_wval){ w->p.mean[i], w->p.w[i] };
	return vt_stat_wquantile(w->wv, b - a, 0.5);
}

static double samples_of(const struct work *w, size_t a, size_t b)
{
	double n = 0;
	size_t i;

	for (i = a; i < b; i++)
		n += w->p.w[i];
	return n;
}

/* First point at or after time t (p.n if none). */
static size_t point_at(const struct work *w, double t)
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
static void bins_make(struct work *w, size_t a, size_t b, struct bins *out)
{
	const struct pts *p = &w->p;
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
static int bins_fit(const struct bins *bs, size_t a, size_t b, struct vt_fit *fit)
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
static double bins_span(const struct work *w, const struct bins *bs, size_t a, size_t b)
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
static double level_scatter(struct work *w, const struct vt_wval *lows, size_t n)
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
static double tolerance_of(struct work *w, enum vt_metric m, size_t from, size_t to,
			   double *noise, double *level)
{
	const struct vt_stat *st = w->s->m[m];
	bool bytes = vt_metrics[m].unit == VT_UNIT_BYTES;
	double abs_min = bytes ? MiB : 0.5, diff;
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
	return fmax(fmax(NOISE_TOL * *noise, LEVEL_TOL * fabs(*level)), abs_min);
}

/* ---- span bookkeeping: restarts, gaps, CPU ---- */

static void count_restarts(const struct vt_series *s, struct vt_soak_verdict *v)
{
	int events = 0, changes = 0;
	size_t i;

	for (i = 0; i < s->nevents; i++)
		if (s->events[i].kind == VT_EV_RESTART)
			events++;
	for (i = 1; i < s->n; i++)
		if (s->incarnation[i] != s->incarnation[i - 1])
			changes++;
	/* Either source may miss some: an event log cut short, points binned over a restart. */
	v->restarts = events > changes ? events : changes;
}

/*
 * Gaps inside the span: points further apart than GAP_INTERVALS intervals,
 * plus gap events that no such spacing accounts for (a suspend shorter
 * than the spacing rule sees, a gap the recorder noticed itself).
 */
static void count_gaps(const struct vt_series *s, double interval, struct vt_soak_verdict *v)
{
	double limit = GAP_INTERVALS * interval;
	size_t i, e;

	v->gaps = 0;
	if (v->to <= v->from)
		return;
	for (i = v->from + 1; i < v->to; i++)
		if (interval > 0 && s->t0[i] - s->t1[i - 1] > limit)
			v->gaps++;
	for (e = 0; e < s->nevents; e++) {
		const struct vt_event *ev = &s->events[e];
		bool seen = false;

		if (ev->kind != VT_EV_GAP || ev->t <= v->t0 || ev->t > v->t1)
			continue;
		for (i = v->from + 1; i < v->to && s->t0[i - 1] <= ev->t + interval; i++)
			if (interval > 0 && s->t0[i] - s->t1[i - 1] > limit &&
			    ev->t >= s->t1[i - 1] - interval && ev->t <= s->t0[i] + interval)
				seen = true;
		if (!seen)
			v->gaps++;
	}
}

/* Cores of a cumulative CPU counter over points [a, b) of the series. */
static double counter_cores(const struct vt_series *s, enum vt_metric m, size_t a, size_t b)
{
	const struct vt_stat *st = s->m[m];
	size_t i = a, j = b;
	double d;

	if (!st)
		return NAN;
	while (i < b && isnan(st[i].lo))
		i++;
	while (j > i && isnan(st[j - 1].hi))
		j--;
	if (j <= i || !(s->t1[j - 1] > s->t0[i]))
		return NAN;
	d = st[j - 1].hi - st[i].lo;
	return d >= 0 ? d / (s->t1[j - 1] - s->t0[i]) : NAN;
}

static void cpu(const struct vt_series *s, struct vt_soak_verdict *v)
{
	v->cpu_user_cores = counter_cores(s, VT_M_CPU_USER_S, v->from, v->to);
	v->cpu_sys_cores = counter_cores(s, VT_M_CPU_SYS_S, v->from, v->to);
	v->cpu_cores = v->cpu_user_cores + v->cpu_sys_cores;   /* NAN unless both known */
}

/* Nominal interval, else the mean spacing of the samples. */
static double sampling_interval(const struct vt_series *s, const struct vt_soak_verdict *v)
{
	if (s->info.every_s > 0)
		return s->info.every_s;
	if (v->samples >= 2 && v->t1 > v->t0)
		return (v->t1 - v->t0) / (double)(v->samples - 1);
	return NAN;
}

/* ---- quarters and settling ---- */

static void quarters(struct work *w, struct vt_soak_verdict *v)
{
	const struct pts *p = &w->p;
	double len = (v->t1 - v->t0) / 4;
	size_t i = 0, q;

	for (q = 0; q < 4; q++) {
		struct vt_quarter *qu = &v->q[q];
		size_t first = i;

		qu->t0 = v->t0 + (double)q * len;
		qu->t1 = q == 3 ? v->t1 : v->t0 + (double)(q + 1) * len;
		while (i < p->n && (q == 3 || p->t[i] < qu->t1))
			i++;
		qu->samples = (size_t)samples_of(w, first, i);
		qu->floor = i > first ? floor_of(w, first, i) : NAN;
		qu->median = i > first ? median_of(w, first, i) : NAN;
		qu->peak = i > first ? vt_stat_max(p->hi + first, i - first) : NAN;
	}
	v->floor_drift = v->q[3].floor - v->q[0].floor;
}

/* Floor of the span's last part: median of the floors of the bins in its last quarter. */
static double final_level(struct work *w, const struct vt_soak_verdict *v)
{
	const struct bins *b = &w->span;
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
static void window_figures(struct work *w, size_t a, double *lo, double *hi, double *median)
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
static size_t settle_refine(struct work *w, size_t a, size_t start, double level, double tol)
{
	while (start - a >= PTS_PER_BIN &&
	       fabs(floor_of(w, start - PTS_PER_BIN, start) - level) <= tol)
		start -= PTS_PER_BIN;
	return start;
}

/*
 * The settled window: the longest run of bins up to the end whose floors
 * stay within the tolerance of the final level.  One bin out of line
 * between two bins in line is an excursion, not the end of the window
 * (a bin of a few points can have its floor set by one dip); the window
 * always begins with a bin in line.
 */
static void settle(struct work *w, struct vt_soak_verdict *v)
{
	const struct bins *b = &w->span;
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
	v->settled_from = w->p.idx[w->settled_pt];
	v->settle_s = w->p.t0[w->settled_pt] - v->t0;
	v->settled_window_s = w->p.t1[w->p.n - 1] - w->p.t0[w->settled_pt];
	window_figures(w, w->settled_pt, &v->settled_lo, &v->settled_hi, &v->settled_median);
}

static void unsettle(struct work *w, struct vt_soak_verdict *v)
{
	v->settled = false;
	v->settled_from = v->to;
	v->settle_s = v->settled_lo = v->settled_hi = v->settled_median = v->settled_window_s = NAN;
	w->settled_pt = w->p.n;
}

static double settled_s(const struct work *w)
{
	return w->settled_pt < w->p.n ? w->p.t1[w->p.n - 1] - w->p.t0[w->settled_pt] : 0;
}

/* ---- trend ---- */

/* First point after the warm-up. */
static size_t warm_pt(const struct work *w, const struct vt_soak_verdict *v)
{
	return point_at(w, v->t0 + WARMUP * (v->t1 - v->t0));
}

/* Theil–Sen on the floors of points [a, p.n): the verdict's slope and its window. */
static int fit_from(struct work *w, struct vt_soak_verdict *v, size_t a)
{
	struct vt_fit fit;

	if (w->p.n - a < 3)
		a = w->p.n >= 3 ? w->p.n - 3 : 0;
	w->fit_pt = a;
	v->slope_window_s = w->p.t1[w->p.n - 1] - w->p.t0[a];
	v->slope_window_t0 = w->p.t0[a];
	bins_make(w, a, w->p.n, &w->fit);
	if (bins_fit(&w->fit, 0, w->fit.n, &fit))
		return -1;
	v->slope = fit.slope;
	v->slope_lo = fit.lo;
	v->slope_hi = fit.hi;
	w->fit_b = fit.intercept;
	return 0;
}

/*
 * The window the trend is fitted on: the settled window when it is long
 * enough to be a plateau candidate (a warm-up that ended after the first
 * quarter then stays out of the fit), else everything after the warm-up.
 */
static int fit_trend(struct work *w, struct vt_soak_verdict *v)
{
	if (v->settled && settled_s(w) >= PLATEAU_SHARE * (v->t1 - v->t0))
		return fit_from(w, v, w->settled_pt);
	return fit_from(w, v, warm_pt(w, v));
}

static bool rising(const struct vt_soak_verdict *v)
{
	return v->slope_lo > 0 && v->slope * v->slope_window_s > v->tolerance;
}

static bool falling(const struct vt_soak_verdict *v)
{
	return v->slope_hi < 0 && -v->slope * v->slope_window_s > v->tolerance;
}

/*
 * A slow leak stays within the tolerance for a while, so its "settled"
 * window can be long and the trend was fitted on it alone.  When that
 * window has a trend (its interval excludes zero), fit everything after
 * the warm-up instead: more bins, a steadier rate, and the deceleration
 * check sees the whole growth (an exponential approach has a trend all
 * the way: judge_growth tells its end from a leak).  Kept only if the
 * longer window moves beyond the tolerance.
 */
static int widen_fit(struct work *w, struct vt_soak_verdict *v)
{
	size_t a = warm_pt(w, v), was = w->fit_pt;

	if (a >= was || !(v->slope_lo > 0 || v->slope_hi < 0))
		return 0;
	if (fit_from(w, v, a))
		return -1;
	return rising(v) || falling(v) ? 0 : fit_from(w, v, was);
}

/* ---- step ---- */

/* Median of bin floors [a, b). */
static double floors_median(struct work *w, const struct bins *bs, size_t a, size_t b)
{
	memcpy(w->tmp, bs->floor + a, sizeof(double) * (b - a));
	return vt_stat_median(w->tmp, b - a);
}

/* Is one side of a step flat: within tolerance, or without a trend and small against the jump? */
static int side_flat(struct work *w, size_t a, size_t b, double jump, double tol, bool *flat)
{
	struct vt_fit fit;
	double drift;

	if (bins_fit(&w->span, a, b, &fit))
		return -1;
	drift = fabs(fit.slope * bins_span(w, &w->span, a, b));
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
static double step_time(struct work *w, size_t a, size_t b, double before, double after)
{
	const struct pts *p = &w->p;
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
static double l1_cost(const struct bins *bs, size_t a, size_t b, double m)
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
static int find_step(struct work *w, struct vt_soak_verdict *v, bool *found)
{
	const struct bins *b = &w->span;
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

/* ---- leak or still settling ---- */

struct halves {
	bool known;
	struct vt_fit first, last;
	double last_t0;                 /* where the last half begins */
};

/* Theil–Sen on the two time halves of fit bins [a, b); known when each has three bins. */
static int split_fit(struct work *w, size_t a, size_t b, struct halves *h)
{
	const struct bins *bs = &w->fit;
	double mid;
	size_t k;

	h->known = false;
	if (b - a < 6)
		return 0;
	mid = (w->p.t0[bs->first[a]] + w->p.t1[bs->end[b - 1] - 1]) / 2;
	for (k = a; k < b && bs->t[k] < mid; k++)
		;
	if (k - a < 3 || b - k < 3)
		return 0;
	if (bins_fit(bs, a, k, &h->first) || bins_fit(bs, k, b, &h->last))
		return -1;
	h->last_t0 = w->p.t0[bs->first[k]];
	h->known = true;
	return 0;
}

/* Index of the first fit bin at or after time t. */
static size_t fit_bin_at(const struct work *w, double t)
{
	size_t k = 0;

	while (k < w->fit.n && w->p.t0[w->fit.first[k]] < t)
		k++;
	return k;
}

/*
 * Time still needed to settle, if the growth decays exponentially: the
 * rate fell by r = last/first over half the window h, so tau = h / ln(1/r)
 * and R = rate * tau is still to come; the floor is within the tolerance of
 * its final level after tau * ln(R / tol) more, and the settled window
 * then needs to grow to a third of the span (t_end - t0 >= 1.5 (t_s - t0)).
 */
static double settle_estimate(const struct vt_soak_verdict *v, const struct halves *h,
			      double window_s)
{
	double r = h->last.slope / h->first.slope, tau, rest, t_s, t_end;

	if (!(r > 0.01 && r < 0.99))
		r = r <= 0.01 ? 0.01 : 0.99;
	tau = window_s / 2 / log(1 / r);
	rest = fmax(h->last.slope, 0) * tau;
	t_s = v->t1 + (rest > v->tolerance ? tau * log(rest / v->tolerance) : 0);
	t_end = v->t0 + 1.5 * (t_s - v->t0);
	return fmax(t_end - v->t1, WARMUP * (v->t1 - v->t0));
}

/*
 * Levelled off too recently: soak until the settled window is a third of
 * the span ((T + x) / 3 <= w + x) and holds PLATEAU_POINTS points.
 */
static void judge_recent(struct work *w, struct vt_soak_verdict *v)
{
	double span = v->t1 - v->t0, win = settled_s(w);
	double npts = (double)(w->p.n - w->settled_pt);

	v->kind = VT_VERDICT_SETTLING;
	v->need_more_s = fmax((span - 3 * win) / 2, (PLATEAU_POINTS - npts) * w->interval);
	if (!(v->need_more_s > 0))
		v->need_more_s = w->interval > 0 ? w->interval : span / 10;
	v->reason = VT_SOAK_WHY_LEVELLED_RECENTLY;
}

/*
 * Flat at the end of a window that grew: did the growth stop, or is it a
 * slow leak whose last stretch happens to stay within the tolerance?  The
 * settled window was picked for being flat, so its own slope is biased
 * towards zero; instead see whether the floors of its second half fell
 * below the window's fitted line by more than the tolerance (a leak goes
 * on along the line).
 */
static bool stopped(struct work *w, const struct vt_soak_verdict *v)
{
	const struct bins *b = &w->span;
	double mid = (w->p.t0[w->settled_pt] + v->t1) / 2;
	size_t k, n = 0;

	for (k = w->settled_bin; k < b->n; k++)
		if (b->t[k] >= mid)
			w->tmp[n++] = b->floor[k] - (w->fit_b + v->slope * b->t[k]);
	return n > 0 && vt_stat_median(w->tmp, n) < -v->tolerance;
}

/*
 * The floor rises beyond the tolerance with a slope interval above zero.
 * A leak, unless the growth is decelerating: the last half of the window
 * grows at under a third of the first half's rate and either its interval
 * reaches about zero (a rate that would stay within the tolerance over the
 * window) or it is itself still slowing down (its second half under 2/3 of
 * its first).  A decelerating curve whose last half grows steadily is a
 * leak after a long warm-up: its rate is the last half's.
 *
 * Returns 1 when the growth has stopped (or slowed to nothing) and a
 * settled window long enough for a plateau follows it: the caller then
 * judges the plateau on that window.  0 when decided, -1 out of memory.
 */
static int judge_growth(struct work *w, struct vt_soak_verdict *v, bool plateau_window)
{
	struct halves h, tail;
	double negligible = v->tolerance / v->slope_window_s;
	bool slowing = false;

	if (w->settled_pt > w->fit_pt && stopped(w, v)) {
		if (plateau_window)
			return 1;
		judge_recent(w, v);
		return 0;
	}
	if (split_fit(w, 0, w->fit.n, &h))
		return -1;
	if (h.known && h.first.slope > 0 && h.last.slope < DECEL_RATIO * h.first.slope) {
		if (split_fit(w, fit_bin_at(w, h.last_t0), w->fit.n, &tail))
			return -1;
		/* Slowed to nothing and flat for long enough: the end of a warm-up. */
		if (plateau_window && h.last.lo <= negligible && w->settled_pt > w->fit_pt)
			return 1;
		slowing = h.last.lo <= negligible ||
			  (tail.known && tail.last.slope < 2.0 / 3 * tail.first.slope);
		if (slowing) {
			unsettle(w, v);
			v->kind = VT_VERDICT_SETTLING;
			v->need_more_s = settle_estimate(v, &h, v->slope_window_s);
			v->reason = VT_SOAK_WHY_SLOWING;
			v->rate_first_half_per_s = h.first.slope;
			v->rate_last_half_per_s = h.last.slope;
			return 0;
		}
		/*
		 * Steady after a long warm-up.  Only a steady part as long as any
		 * shape needs can be called a leak: shorter, it may as well be the
		 * end of the warm-up (30 s of glibc arena churn looks like this).
		 */
		if (w->p.t1[w->p.n - 1] - h.last_t0 < v->min_span_s) {
			double steady = w->p.t1[w->p.n - 1] - h.last_t0;

			unsettle(w, v);
			v->kind = VT_VERDICT_CANNOT_TELL;
			v->need_more_s = 2 * (v->min_span_s - steady);
			v->reason = VT_SOAK_WHY_STEADY_TOO_SHORT;
			v->rate_first_half_per_s = h.first.slope;
			v->rate_last_half_per_s = h.last.slope;
			v->steady_s = steady;
			return 0;
		}
		v->slope = h.last.slope;
		v->slope_lo = h.last.lo;
		v->slope_hi = h.last.hi;
		v->slope_window_t0 = h.last_t0;
		v->slope_window_s = w->p.t1[w->p.n - 1] - h.last_t0;
	}
	unsettle(w, v);
	v->kind = VT_VERDICT_LEAK;
	v->reason = VT_SOAK_WHY_LEAK;
	return 0;
}

/* ---- swap push/pull ---- */

struct swap_scan {
	const struct vt_stat *anon, *swap, *committed;
	double tol;
};

static bool swap_known(const struct swap_scan *sc, size_t i)
{
	return !isnan(sc->anon[i].mean) && !isnan(sc->swap[i].mean);
}

static double committed_at(const struct swap_scan *sc, size_t i)
{
	if (sc->committed && !isnan(sc->committed[i].mean))
		return sc->committed[i].mean;
	return sc->anon[i].mean + sc->swap[i].mean;
}

/* Median of one of anon (0), swap (1), committed (2) over the known points [a, b]. */
static double swap_level(struct work *w, const struct swap_scan *sc, int which, size_t a, size_t b)
{
	size_t i, n = 0;

	for (i = a; i <= b; i++) {
		if (!swap_known(sc, i))
			continue;
		w->tmp[n++] = which == 0 ? sc->anon[i].mean : which == 1 ? sc->swap[i].mean
						: committed_at(sc, i);
	}
	return vt_stat_median(w->tmp, n);
}

/*
 * A falling swing of RssAnon from its high at a to its low at b.  The
 * extremes are noise peaks on flat stretches: the motion itself runs from
 * the last point within 10% of the drop from the high to the first within
 * 10% of the low, and the levels either side are the medians of those
 * flat stretches.  An episode when swap took about what RssAnon lost
 * (50%..150%) and committed stayed within the tolerance (nothing freed).
 */
static void swap_leg(struct work *w, const struct swap_scan *sc, size_t a, size_t b,
		     struct vt_soak_verdict *v)
{
	struct vt_swap_motion *sw = &v->swap;
	double drop = sc->anon[a].mean - sc->anon[b].mean, edge = 0.1 * drop, da, ds, dc;
	size_t i, start = a, end = b;

	for (i = a; i <= b; i++) {
		if (!swap_known(sc, i))
			continue;
		if (sc->anon[i].mean < sc->anon[a].mean - edge)
			break;
		start = i;
	}
	for (i = start; i <= b; i++)
		if (swap_known(sc, i) && sc->anon[i].mean <= sc->anon[b].mean + edge)
			break;
	end = i <= b ? i : b;
	da = swap_level(w, sc, 0, end, b) - swap_level(w, sc, 0, a, start);
	ds = swap_level(w, sc, 1, end, b) - swap_level(w, sc, 1, a, start);
	dc = swap_level(w, sc, 2, end, b) - swap_level(w, sc, 2, a, start);
	if (!(-da > sc->tol) || !(ds >= 0.5 * -da && ds <= 1.5 * -da) || !(fabs(dc) < sc->tol))
		return;
	sw->episodes++;
	if (sw->episodes == 1 || da < sw->anon_delta) {
		sw->t0 = w->s->t1[start];
		sw->t1 = w->s->t0[end];
		sw->anon_delta = da;
		sw->swap_delta = ds;
		sw->committed_delta = dc;
	}
}

/*
 * RssAnon's swings, found with hysteresis (a turn counts once the value
 * moved back by more than the tolerance), so noise does not split one
 * push into many; each falling swing is checked by swap_leg.  seen: at
 * least one episode (what the views key on); the tolerance is committed's.
 */
static void swap_motion(struct work *w, struct vt_soak_verdict *v)
{
	const struct vt_series *s = w->s;
	struct vt_swap_motion *sw = &v->swap;
	struct swap_scan sc = { s->m[VT_M_RSS_ANON], s->m[VT_M_VM_SWAP], s->m[VT_M_COMMITTED], 0 };
	size_t i, ext = v->to, start = v->to;
	double noise, level;
	bool falling = false;

	if (!sc.anon || !sc.swap)
		return;
	sc.tol = v->metric == VT_M_COMMITTED ? v->tolerance
		 : tolerance_of(w, VT_M_COMMITTED, v->from, v->to, &noise, &level);
	if (isnan(sc.tol))
		sc.tol = tolerance_of(w, VT_M_RSS_ANON, v->from, v->to, &noise, &level);
	if (isnan(sc.tol))
		return;
	for (i = v->from; i < v->to; i++) {
		double a = sc.anon[i].mean;

		if (!swap_known(&sc, i))
			continue;
		if (ext == v->to) {
			ext = start = i;
			continue;
		}
		if (!falling) {
			if (a > sc.anon[ext].mean) {
				ext = i;
			} else if (sc.anon[ext].mean - a > sc.tol) {
				start = ext;
				ext = i;
				falling = true;
			}
		} else if (a < sc.anon[ext].mean) {
			ext = i;
		} else if (a - sc.anon[ext].mean > sc.tol) {
			swap_leg(w, &sc, start, ext, v);
			start = ext;
			ext = i;
			falling = false;
		}
	}
	if (falling)
		swap_leg(w, &sc, start, ext, v);
	sw->seen = sw->episodes > 0;
}

/* RssAnon's range in the settled window, else the span (5th..95th percentile). */
static void anon_range(struct work *w, struct vt_soak_verdict *v)
{
	const struct vt_stat *st = w->s->m[VT_M_RSS_ANON];
	size_t i, from = v->settled ? v->settled_from : v->from, n = 0;

	if (!st)
		return;
	for (i = from; i < v->to; i++)
		if (!isnan(st[i].lo))
			w->tmp[n++] = st[i].lo;
	v->swap.anon_range_lo = vt_stat_quantile(w->tmp, n, RANGE_Q);
	for (i = from, n = 0; i < v->to; i++)
		if (!isnan(st[i].hi))
			w->tmp[n++] = st[i].hi;
	v->swap.anon_range_hi = vt_stat_quantile(w->tmp, n, 1 - RANGE_Q);
}

/* ---- the verdict ---- */

static void verdict_init(struct vt_soak_verdict *v, enum vt_metric m)
{
	size_t q;

	memset(v, 0, sizeof(*v));
	v->kind = VT_VERDICT_CANNOT_TELL;
	v->metric = m;
	v->t0 = v->t1 = v->noise = v->tolerance = v->floor_drift = NAN;
	v->settle_s = v->settled_lo = v->settled_hi = v->settled_median = NAN;
	v->slope = v->slope_lo = v->slope_hi = v->slope_window_t0 = v->slope_window_s = NAN;
	v->min_span_s = v->judged_span_s = v->settled_window_s = NAN;
	v->rate_first_half_per_s = v->rate_last_half_per_s = v->steady_s = NAN;
	v->drift_not_ruled_out = NAN;
	v->step_t = v->step_bytes = v->step_before = v->step_after = NAN;
	v->need_more_s = NAN;
	v->cpu_cores = v->cpu_user_cores = v->cpu_sys_cores = NAN;
	v->swap.t0 = v->swap.t1 = v->swap.anon_delta = v->swap.swap_delta = NAN;
	v->swap.committed_delta = v->swap.anon_range_lo = v->swap.anon_range_hi = NAN;
	for (q = 0; q < 4; q++)
		v->q[q] = (struct vt_quarter){ NAN, NAN, 0, NAN, NAN, NAN };
}

/* Too little to decide on?  Then say what is missing and how long to go on. */
static bool too_short(struct work *w, const struct vt_soak_opts *o, struct vt_soak_verdict *v)
{
	const struct pts *p = &w->p;
	double span = p->n ? p->t1[p->n - 1] - p->t0[0] : 0, samples = samples_of(w, 0, p->n);
	double step = isnan(w->interval) ? 1 : w->interval, need;

	v->min_samples = o->min_samples ? o->min_samples : DEFAULT_MIN_SAMPLES;
	v->min_span_s = o->min_span_s > 0 ? o->min_span_s
					  : fmax(MIN_SPAN_INTERVALS * step, DEFAULT_MIN_SPAN_S);
	v->judged_samples = (size_t)samples;
	v->judged_span_s = span;
	if (samples >= (double)v->min_samples && span >= v->min_span_s && p->n >= MIN_POINTS)
		return false;
	if (!w->s->m[v->metric] && w->s->n > 0) {
		/* Soaking longer cannot help: this recording does not have it. */
		v->reason = VT_SOAK_WHY_NOT_RECORDED;
		return true;
	}
	need = fmax(v->min_span_s - span, ((double)v->min_samples - samples) * step);
	if (p->n < MIN_POINTS)
		need = fmax(need, (double)(MIN_POINTS - p->n) *
				  (p->n ? fmax(span / (double)p->n, step) : step));
	v->need_more_s = need > 0 ? need : step;
	v->reason = p->n ? VT_SOAK_WHY_TOO_FEW : VT_SOAK_WHY_NO_SAMPLES;
	return true;
}

static void judge_falling(struct vt_soak_verdict *v)
{
	v->kind = VT_VERDICT_SETTLING;
	v->reason = VT_SOAK_WHY_FALLING;
	/* No model for how long a release goes on: another half of what was seen. */
	v->need_more_s = (v->t1 - v->t0) / 2;
}

static void judge_plateau(const struct work *w, struct vt_soak_verdict *v)
{
	v->kind = VT_VERDICT_PLATEAU;
	v->reason = w->settled_pt == 0 ? VT_SOAK_WHY_FLAT_FROM_START : VT_SOAK_WHY_SETTLED_AFTER;
}

/*
 * The data does not decide.  The half-width of a slope interval shrinks
 * as T^-1.5 at a fixed cadence (slope sd ~ sigma / (T sqrt(n)), n ~ T), so
 * the drift it allows over a window proportional to T shrinks as T^-0.5:
 * the span T' where hw * W falls to the material drift is
 * T' = T (hw W / material)^2.  Without an interval at all, double the span.
 */
static void judge_undecided(const struct work *w, struct vt_soak_verdict *v)
{
	double span = v->t1 - v->t0, hw = (v->slope_hi - v->slope_lo) / 2;
	double allowed = fmax(fabs(v->slope_lo), fabs(v->slope_hi)) * v->slope_window_s;
	double ratio = hw * v->slope_window_s / w->material;

	v->kind = VT_VERDICT_CANNOT_TELL;
	if (v->slope_lo > 0 || v->slope_hi < 0) {
		/* A trend too slow to matter yet: soak until it would cross the tolerance. */
		v->need_more_s = fmax(v->tolerance / fabs(v->slope) - v->slope_window_s, w->interval);
		v->reason = VT_SOAK_WHY_SLOW_TREND;
		return;
	}
	if (!isfinite(ratio))
		v->need_more_s = span;
	else if (ratio > 1)
		v->need_more_s = span * (ratio * ratio - 1);
	else
		v->need_more_s = span / 2;   /* precise but unsettled: no model, a stated guess */
	if (v->settled && isfinite(allowed)) {
		v->reason = VT_SOAK_WHY_TOO_NOISY;
		v->drift_not_ruled_out = allowed;
	} else {
		v->reason = VT_SOAK_WHY_NO_STEADY_TREND;
	}
}

/*
 * Flat over the fit window: the floor moved within the tolerance, and the
 * slope interval rules out a drift that matters (material) over it.
 */
static bool flat(const struct work *w, const struct vt_soak_verdict *v)
{
	return fabs(v->slope * v->slope_window_s) <= v->tolerance &&
	       fmax(fabs(v->slope_lo), fabs(v->slope_hi)) * v->slope_window_s <= w->material;
}

static int judge(struct work *w, struct vt_soak_verdict *v)
{
	double span = v->t1 - v->t0;
	bool step, plateau_window;

	v->tolerance = tolerance_of(w, v->metric, v->from, v->to, &v->noise, &w->level);
	w->material = fmax(LEVEL_MATERIAL * fabs(w->level), w->bytes ? MiB : 0.5);
	bins_make(w, 0, w->p.n, &w->span);
	settle(w, v);
	if (fit_trend(w, v) || find_step(w, v, &step))
		return -1;
	if (isnan(v->slope)) {
		/* Only possible with a tiny min_span_s: every point at one time. */
		v->reason = VT_SOAK_WHY_NO_SPREAD;
		v->need_more_s = isnan(w->interval) ? DEFAULT_MIN_SPAN_S
						    : MIN_SPAN_INTERVALS * w->interval;
		return 0;
	}
	if (!step && widen_fit(w, v))
		return -1;
	plateau_window = v->settled && settled_s(w) >= PLATEAU_SHARE * span &&
			 w->p.n - w->settled_pt >= PLATEAU_POINTS;
	if (step) {
		v->kind = VT_VERDICT_STEP;
		v->reason = VT_SOAK_WHY_STEP;
	} else if (rising(v)) {
		int rc = judge_growth(w, v, plateau_window);

		if (rc < 0 || (rc > 0 && fit_from(w, v, w->settled_pt)))
			return -1;
		if (rc > 0 && flat(w, v))
			judge_plateau(w, v);
		else if (rc > 0)
			judge_undecided(w, v);
	} else if (falling(v)) {
		judge_falling(v);
		unsettle(w, v);
	} else if (plateau_window && flat(w, v)) {
		judge_plateau(w, v);
	} else if (v->settled && !plateau_window) {
		judge_recent(w, v);
	} else {
		judge_undecided(w, v);
	}
	swap_motion(w, v);
	anon_range(w, v);
	/* An interval too wide to bound is unknown, not infinite (JSON has no inf). */
	if (!isfinite(v->slope_lo))
		v->slope_lo = NAN;
	if (!isfinite(v->slope_hi))
		v->slope_hi = NAN;
	return 0;
}

int vt_soak_analyze(const struct vt_series *s, const struct vt_soak_opts *o,
		    struct vt_soak_verdict *v)
{
	struct vt_soak_opts def;
	struct work w;
	size_t i;
	int rc = 0;

	if (!o) {
		vt_soak_opts_default(&def);
		o = &def;
	}
	verdict_init(v, (unsigned)o->metric < VT_M_COUNT ? o->metric : VT_M_COMMITTED);
	vt_series_last_incarnation(s, &v->from, &v->to);
	v->settled_from = v->to;
	v->running = !s->info.finished;
	count_restarts(s, v);
	for (i = v->from; i < v->to; i++)
		v->samples += s->count[i];
	if (v->to > v->from) {
		v->t0 = s->t0[v->from];
		v->t1 = s->t1[v->to - 1];
	}
	if (work_alloc(&w, s, v->to - v->from)) {
		rc = -1;
		goto out;
	}
	w.bytes = vt_metrics[v->metric].unit == VT_UNIT_BYTES;
	w.interval = sampling_interval(s, v);
	count_gaps(s, w.interval, v);
	cpu(s, v);
	pts_load(&w, v->metric, v->from, v->to);
	if (w.p.n)
		quarters(&w, v);
	if (!too_short(&w, o, v))
		rc = judge(&w, v);
out:
	work_free(&w);
	return rc;
}

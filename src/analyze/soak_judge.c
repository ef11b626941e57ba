/*
 * soak_judge.c — the judgement that picks the soak verdict (see
 * soak_internal.h): too short, or the trend of the floor fitted on the
 * right window, then step, leak or still settling, plateau, else cannot
 * tell, each with its reason code and the figures it quotes.
 */
#include "analyze/soak_internal.h"

#include <math.h>

#define MIN_POINTS 8            /* fewer points cannot show a shape */
#define DEFAULT_MIN_SPAN_S 20.0   /* with 20 intervals: a shape needs time as well as samples */
#define MIN_SPAN_INTERVALS 20
#define WARMUP 0.25             /* share of the span left out of the trend fit */
#define LEVEL_MATERIAL 0.02     /* a plateau rules out drifts of this share of the level */
#define DECEL_RATIO (1.0 / 3)   /* growth this much slower in the last half: decelerating */
#define SLOWER_RATIO 0.8        /* a short span whose second half grows this much slower: not steady */
#define PLATEAU_SHARE (1.0 / 3) /* a plateau's settled window covers this share of the span */
#define PLATEAU_POINTS 10
#define STEADY_LEAK_SPANS 2     /* a rise after a faster start: a leak once steady this many min spans */
#define RATCHET_RECORDS (2.0 / 3) /* a leak's floor sets a new high in this share of its bins at least */
#define RATCHET_MIN_BINS 6      /* fewer fitted bins cannot tell a ratchet from a climb */
#define RATCHET_SETTLE_S 1800.0 /* a ratchet this long is a leak in steps, not high-water marks filling */

/* ---- trend ---- */

/* First point after the warm-up. */
static size_t warm_pt(const struct vt_soak_work *w, const struct vt_soak_verdict *v)
{
	return vt_soak_point_at(w, v->t0 + WARMUP * (v->t1 - v->t0));
}

/* Theil–Sen on the floors of points [a, p.n): the verdict's slope and its window. */
static int fit_from(struct vt_soak_work *w, struct vt_soak_verdict *v, size_t a)
{
	struct vt_fit fit;

	if (w->p.n - a < 3)
		a = w->p.n >= 3 ? w->p.n - 3 : 0;
	w->fit_pt = a;
	v->slope_window_s = w->p.t1[w->p.n - 1] - w->p.t0[a];
	v->slope_window_t0 = w->p.t0[a];
	vt_soak_bins_make(w, a, w->p.n, &w->fit);
	if (vt_soak_bins_fit(&w->fit, 0, w->fit.n, &fit))
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
static int fit_trend(struct vt_soak_work *w, struct vt_soak_verdict *v)
{
	if (v->settled && vt_soak_settled_s(w) >= PLATEAU_SHARE * (v->t1 - v->t0))
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
static int widen_fit(struct vt_soak_work *w, struct vt_soak_verdict *v)
{
	size_t a = warm_pt(w, v), was = w->fit_pt;

	if (a >= was || !(v->slope_lo > 0 || v->slope_hi < 0))
		return 0;
	if (fit_from(w, v, a))
		return -1;
	return rising(v) || falling(v) ? 0 : fit_from(w, v, was);
}
/* ---- leak or still settling ---- */

struct halves {
	bool known;
	struct vt_fit first, last;
	double last_t0;                 /* where the last half begins */
};

/* Theil–Sen on the two time halves of fit bins [a, b); known when each has three bins. */
static int split_fit(struct vt_soak_work *w, size_t a, size_t b, struct halves *h)
{
	const struct vt_soak_bins *bs = &w->fit;
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
	if (vt_soak_bins_fit(bs, a, k, &h->first) || vt_soak_bins_fit(bs, k, b, &h->last))
		return -1;
	h->last_t0 = w->p.t0[bs->first[k]];
	h->known = true;
	return 0;
}

/* Index of the first fit bin at or after time t. */
static size_t fit_bin_at(const struct vt_soak_work *w, double t)
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
static void judge_recent(struct vt_soak_work *w, struct vt_soak_verdict *v)
{
	double span = v->t1 - v->t0, win = vt_soak_settled_s(w);
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
static bool stopped(struct vt_soak_work *w, const struct vt_soak_verdict *v)
{
	const struct vt_soak_bins *b = &w->span;
	double mid = (w->p.t0[w->settled_pt] + v->t1) / 2;
	size_t k, n = 0;

	for (k = w->settled_bin; k < b->n; k++)
		if (b->t[k] >= mid)
			w->tmp[n++] = b->floor[k] - (w->fit_b + v->slope * b->t[k]);
	return n > 0 && vt_stat_median(w->tmp, n) < -v->tolerance;
}

/*
 * The settled window was the fit window, and the growth that crossed the
 * tolerance lies in its first half: all of it stayed within the tolerance
 * of the final level, rising to above it and easing back (CI's capped
 * arena churn: +0.7 MiB in the first half, -0.3 MiB in the last, 1 MiB of
 * tolerance).  When the last half is long enough to be a plateau window
 * on its own, the window begins there; the caller judges the plateau on it.
 */
static bool settle_in_last_half(struct vt_soak_work *w, struct vt_soak_verdict *v,
				const struct halves *h)
{
	size_t pt = vt_soak_point_at(w, h->last_t0);

	if (w->settled_pt != w->fit_pt || pt <= w->settled_pt || pt >= w->p.n ||
	    w->p.n - pt < PLATEAU_POINTS ||
	    w->p.t1[w->p.n - 1] - w->p.t0[pt] < PLATEAU_SHARE * (v->t1 - v->t0))
		return false;
	vt_soak_settle_at(w, v, pt);
	return true;
}

/*
 * The span's second time half grew at under SLOWER_RATIO of its first
 * half's rate, beyond the noise (the second half's 90% interval lies below
 * the first half's rate, or there is no interval: too few bins to have
 * one): true with both rates and where the second half begins.  Theil–Sen
 * on the span bins of each half, three at least.  A start-up ramp bends
 * most at its start, which the fitted window leaves out: over the span,
 * the second half of a sqrt-shaped rise grows at about 0.6 of its first
 * half's rate, of t^0.6 at 0.65, of an exponential approach still half way
 * at 0.5, of a log-shaped one at 0.3 or less; of a steady leak at 1.
 */
static bool span_slowed(struct vt_soak_work *w, const struct vt_soak_verdict *v, double *first_rate,
			double *second_rate, double *second_t0)
{
	const struct vt_soak_bins *b = &w->span;
	double mid = (v->t0 + v->t1) / 2;
	struct vt_fit first, second;
	size_t k;

	for (k = 0; k < b->n && b->t[k] < mid; k++)
		;
	if (k < 3 || b->n - k < 3 || vt_soak_bins_fit(b, 0, k, &first) || vt_soak_bins_fit(b, k, b->n, &second))
		return false;
	*first_rate = first.slope;
	*second_rate = second.slope;
	*second_t0 = w->p.t0[b->first[k]];
	return first.slope > 0 && second.slope < SLOWER_RATIO * first.slope &&
	       (second.hi < first.slope || !isfinite(second.hi));
}

/*
 * A steady rise after a faster start is a leak only once it has lasted
 * STEADY_LEAK_SPANS times what any shape needs: shorter, it may as well be
 * the start's tail.  The faster start is a warm-up left out of the fit
 * that rose at more than 1/DECEL_RATIO times the fitted rate (30 s of glibc
 * arena churn on a slow host: 115 MiB in the first 8 s, then 9 MiB in 22
 * s), and the rise has been steady over the fitted window at most; else,
 * in a span too short for its second half to be long enough, the span's
 * first half when it grew faster than the second (span_slowed: start-up
 * ramps that slow down all along, e.g. sqrt-shaped over 30 s or 60 s, were
 * called leaks), and the rise has been steady over the second half at
 * most.  A steady leak from the start has neither.  Returns true when it
 * judged that.
 */
static bool after_fast_warmup(struct vt_soak_work *w, struct vt_soak_verdict *v)
{
	const struct vt_soak_bins *b = &w->span;
	double steady = v->slope_window_s, need = STEADY_LEAK_SPANS * v->min_span_s;
	double fast = NAN, slow = v->slope;
	size_t k;

	if (b->n < 2 || !(v->slope > 0))
		return false;
	for (k = 1; k < b->n && b->t[k] < v->slope_window_t0; k++)
		;
	if (steady < need && k < b->n && b->t[k] - b->t[0] > 0) {
		fast = (b->floor[k] - b->floor[0]) / (b->t[k] - b->t[0]);
		if (!(fast * DECEL_RATIO > v->slope))
			fast = NAN;
	}
	if (isnan(fast)) {
		double first, second, second_t0;

		/* the span's second half is at most what has been steady */
		if (!(w->p.t1[w->p.n - 1] - (v->t0 + v->t1) / 2 < need &&
		      span_slowed(w, v, &first, &second, &second_t0)))
			return false;
		fast = first;
		slow = second;
		steady = fmin(steady, w->p.t1[w->p.n - 1] - second_t0);
	}
	if (steady >= need)
		return false;
	vt_soak_unsettle(w, v);
	v->kind = VT_VERDICT_CANNOT_TELL;
	v->reason = VT_SOAK_WHY_STEADY_TOO_SHORT;
	v->rate_first_half_per_s = fast;
	v->rate_last_half_per_s = slow;
	v->steady_s = steady;
	v->need_more_s = need - steady;
	return true;
}

/*
 * Bins of the fitted window whose floor is above every floor before it in
 * the window: a leak sets a new high in most of them, a heap whose arenas
 * fill their burst high-water marks in a few (field report 000's arena
 * sprawl, and CI's capped churn: "leak, 1138 MiB/h" from a ratchet of three
 * steps).
 */
static size_t floor_records(const struct vt_soak_work *w, size_t *bins)
{
	const struct vt_soak_bins *b = &w->fit;
	double high;
	size_t k, records = 0;

	*bins = b->n;
	if (b->n == 0)
		return 0;
	high = b->floor[0];
	for (k = 1; k < b->n; k++)
		if (b->floor[k] > high) {
			high = b->floor[k];
			records++;
		}
	return records;
}

/*
 * A steady rise that cannot be called a leak yet: smaller than the drift
 * that counts (the material share of the level; a plateau must rule out as
 * much, so a leak must show as much), or a ratchet — a floor that rose in
 * a few steps between flat stretches, for less than RATCHET_SETTLE_S.
 * Arenas filling their high-water marks after start-up do both for many
 * minutes (report 000's baseline took 65-85 minutes to settle); only the
 * allocator's own live bytes tell them from a leak (free_lists in soak.c).
 * Returns true when it judged that.
 */
static bool not_yet_a_leak(struct vt_soak_work *w, struct vt_soak_verdict *v)
{
	double rise = v->slope * v->slope_window_s;
	size_t bins, records = floor_records(w, &bins);

	if (rise < w->material && v->slope > 0) {
		vt_soak_unsettle(w, v);
		v->kind = VT_VERDICT_CANNOT_TELL;
		v->reason = VT_SOAK_WHY_SMALL_RISE;
		v->need_more_s = fmax((w->material - rise) / v->slope, w->interval);
		return true;
	}
	if (bins >= RATCHET_MIN_BINS && (double)records < RATCHET_RECORDS * (double)(bins - 1) &&
	    v->slope_window_s < RATCHET_SETTLE_S) {
		vt_soak_unsettle(w, v);
		v->kind = VT_VERDICT_CANNOT_TELL;
		v->reason = VT_SOAK_WHY_RATCHET;
		v->floor_records = records;
		v->floor_bins = bins;
		v->need_more_s = RATCHET_SETTLE_S - v->slope_window_s;
		return true;
	}
	return false;
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
static int judge_growth(struct vt_soak_work *w, struct vt_soak_verdict *v, bool plateau_window)
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
		if (plateau_window && h.last.lo <= negligible &&
		    (w->settled_pt > w->fit_pt || settle_in_last_half(w, v, &h)))
			return 1;
		slowing = h.last.lo <= negligible ||
			  (tail.known && tail.last.slope < 2.0 / 3 * tail.first.slope);
		if (slowing) {
			vt_soak_unsettle(w, v);
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

			vt_soak_unsettle(w, v);
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
	if (after_fast_warmup(w, v) || not_yet_a_leak(w, v))
		return 0;
	vt_soak_unsettle(w, v);
	v->kind = VT_VERDICT_LEAK;
	v->reason = VT_SOAK_WHY_LEAK;
	return 0;
}
/* Too little to decide on?  Then say what is missing and how long to go on. */
bool vt_soak_too_short(struct vt_soak_work *w, const struct vt_soak_opts *o, struct vt_soak_verdict *v)
{
	const struct vt_soak_pts *p = &w->p;
	double span = p->n ? p->t1[p->n - 1] - p->t0[0] : 0, samples = vt_soak_samples_of(w, 0, p->n);
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
	v->need_more_s = fmax(need, step);     /* at least the next sample: never "0 s more" */
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

static void judge_plateau(const struct vt_soak_work *w, struct vt_soak_verdict *v)
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
static void judge_undecided(const struct vt_soak_work *w, struct vt_soak_verdict *v)
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
	} else {
		v->reason = VT_SOAK_WHY_NO_STEADY_TREND;
	}
}

/*
 * Flat over the fit window: the floor moved within the tolerance, and the
 * slope interval rules out a drift that matters (material) over it.
 */
static bool flat(const struct vt_soak_work *w, const struct vt_soak_verdict *v)
{
	return fabs(v->slope * v->slope_window_s) <= v->tolerance &&
	       fmax(fabs(v->slope_lo), fabs(v->slope_hi)) * v->slope_window_s <= w->material;
}

/*
 * A fall beyond the tolerance (falling) that is a trim after settling, not
 * a release: the floor first rose, by more than it then fell (the span's
 * first bin lies that far below the fitted line where the fall begins),
 * and the fall stays under the material drift, with the slope interval's
 * bound as flat() asks.  A plateau rules out drifts of the material either
 * way; holding a fall to the tolerance called CI's capped arena churn
 * "still falling" (106 MiB, then 112-113 MiB, then -1.49 MiB over 2.2 min
 * against 1 MiB of tolerance and 2.24 MiB of material).  A release larger
 * than the material, or a decline under way from the start, still falls.
 */
static bool trimmed_after_rise(const struct vt_soak_work *w, const struct vt_soak_verdict *v)
{
	double fall = -v->slope * v->slope_window_s;
	double begin = w->fit_b + v->slope * v->slope_window_t0;

	return w->span.n > 0 && begin - w->span.floor[0] > fall && fall <= w->material &&
	       fmax(fabs(v->slope_lo), fabs(v->slope_hi)) * v->slope_window_s <= w->material;
}

/*
 * What a plateau needs and, when a settled window is left standing under
 * another verdict, which of it the window lacks (soak.h enum
 * vt_plateau_need): the views then say that instead of calling the window
 * settled as a fact.  The window's flatness is known only when the trend
 * was fitted on it.
 */
static void plateau_needs(const struct vt_soak_work *w, struct vt_soak_verdict *v)
{
	double allowed = fmax(fabs(v->slope_lo), fabs(v->slope_hi)) * v->slope_window_s;

	v->plateau_window_s = PLATEAU_SHARE * (v->t1 - v->t0);
	v->plateau_points = PLATEAU_POINTS;
	v->material = w->material;
	v->drift_not_ruled_out = isfinite(allowed) ? allowed : NAN;
	v->plateau_missing = 0;
	if (!v->settled || v->kind == VT_VERDICT_PLATEAU || v->kind == VT_VERDICT_STEP)
		return;
	if (vt_soak_settled_s(w) < v->plateau_window_s)
		v->plateau_missing |= VT_PLATEAU_NEEDS_LENGTH;
	if (v->settled_points < PLATEAU_POINTS)
		v->plateau_missing |= VT_PLATEAU_NEEDS_POINTS;
	if (w->fit_pt == w->settled_pt) {
		if (!(fabs(v->slope * v->slope_window_s) <= v->tolerance))
			v->plateau_missing |= VT_PLATEAU_NEEDS_FLAT;
		if (!(v->drift_not_ruled_out <= w->material))
			v->plateau_missing |= VT_PLATEAU_NEEDS_BOUND;
	}
}

int vt_soak_judge(struct vt_soak_work *w, struct vt_soak_verdict *v)
{
	double span = v->t1 - v->t0;
	bool step, plateau_window;

	v->tolerance = vt_soak_tolerance_of(w, v->metric, v->from, v->to, &v->noise, &w->level);
	w->material = fmax(LEVEL_MATERIAL * fabs(w->level), w->bytes ? VT_MiB : 0.5);
	vt_soak_bins_make(w, 0, w->p.n, &w->span);
	vt_soak_settle(w, v);
	if (fit_trend(w, v) || vt_soak_find_step(w, v, &step))
		return -1;
	if (isnan(v->slope)) {
		/* Only possible with a tiny min_span_s: every point at one time (no window either). */
		vt_soak_unsettle(w, v);
		v->reason = VT_SOAK_WHY_NO_SPREAD;
		v->need_more_s = isnan(w->interval) ? DEFAULT_MIN_SPAN_S
						    : MIN_SPAN_INTERVALS * w->interval;
		return 0;
	}
	if (!step && widen_fit(w, v))
		return -1;
	plateau_window = v->settled && vt_soak_settled_s(w) >= PLATEAU_SHARE * span &&
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
	} else if (falling(v) && plateau_window && trimmed_after_rise(w, v)) {
		judge_plateau(w, v);
	} else if (falling(v)) {
		judge_falling(v);
		vt_soak_unsettle(w, v);
	} else if (plateau_window && flat(w, v)) {
		judge_plateau(w, v);
	} else if (v->settled && !plateau_window) {
		judge_recent(w, v);
	} else {
		judge_undecided(w, v);
	}
	plateau_needs(w, v);
	vt_soak_swap(w, v);
	/* An interval too wide to bound is unknown, not infinite (JSON has no inf). */
	if (!isfinite(v->slope_lo))
		v->slope_lo = NAN;
	if (!isfinite(v->slope_hi))
		v->slope_hi = NAN;
	return 0;
}

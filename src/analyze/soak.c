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
 *    widened when the floors wander (vt_soak_bins_fit).
 *  - settled window: the longest suffix of bins whose floors stay within
 *    the tolerance of the final level (median floor of the last quarter).
 *
 * Order of the tests: too short, step, leak (or still settling), plateau,
 * else cannot tell.  Never prints and writes no sentence: the verdict holds
 * a reason code and the figures it quotes (render/ words them).
 *
 * This file holds the entry point and the span's bookkeeping (restarts,
 * gaps, CPU); the parts it calls are listed in soak_internal.h.
 */
#include "analyze/soak.h"

#include "analyze/soak_internal.h"
#include "base/units.h"

#include <math.h>
#include <string.h>

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
 * Gaps inside the span: points further apart than VT_GAP_INTERVALS intervals,
 * plus gap events that no such spacing accounts for (a suspend shorter
 * than the spacing rule sees, a gap the recorder noticed itself).
 */
static void count_gaps(const struct vt_series *s, double interval, struct vt_soak_verdict *v)
{
	double limit = VT_GAP_INTERVALS * interval;
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

/* ---- the allocator's live bytes beside the process's memory ---- */

/* The process's own memory, which free lists the allocator holds can fill. */
static bool process_memory(enum vt_metric m)
{
	switch (m) {
	case VT_M_COMMITTED: case VT_M_RSS_ANON: case VT_M_VM_RSS: case VT_M_PSS: case VT_M_CG_CURRENT:
		return true;
	default:
		return false;
	}
}

/* A verdict that rests on a trend of heap_live, not on too little of it. */
static bool judged(const struct vt_soak_verdict *h)
{
	switch (h->reason) {
	case VT_SOAK_WHY_NONE: case VT_SOAK_WHY_NOT_RECORDED: case VT_SOAK_WHY_NO_SAMPLES:
	case VT_SOAK_WHY_TOO_FEW: case VT_SOAK_WHY_NO_SPREAD:
		return false;
	default:
		return isfinite(h->slope);
	}
}

/*
 * With the allocator's figures recorded (--heap, the agent), the live heap
 * says what a rising floor is: live data that grows (a leak), or the
 * free lists the allocator keeps for its arenas (field report 000: 1.1 GB
 * of RSS around 44 MB of live heap).  A floor that rises while the live
 * heap stays flat, its floor moving under FREE_LIST_SHARE of the rise over
 * the same window, is free-list growth: still settling, not a leak, with
 * both figures.  The live heap's own figures are kept for every verdict.
 */
#define FREE_LIST_SHARE 0.25
static int free_lists(const struct vt_series *s, const struct vt_soak_opts *o, struct vt_soak_verdict *v)
{
	struct vt_soak_opts ho = *o;
	struct vt_soak_verdict h;
	double rise = v->slope * v->slope_window_s;
	bool growing;

	if (!process_memory(v->metric) || !s->m[VT_M_HEAP_LIVE])
		return 0;
	ho.metric = VT_M_HEAP_LIVE;
	if (vt_soak_analyze(s, &ho, &h))
		return -1;
	if (!judged(&h))
		return 0;
	v->heap_live_kind = h.kind;
	v->heap_live_median = h.q[3].median;
	v->heap_live_drift = h.floor_drift;
	v->heap_live_rise = h.slope * v->slope_window_s;
	growing = v->kind == VT_VERDICT_LEAK || v->reason == VT_SOAK_WHY_SMALL_RISE ||
		  v->reason == VT_SOAK_WHY_RATCHET || v->reason == VT_SOAK_WHY_STEADY_TOO_SHORT ||
		  v->reason == VT_SOAK_WHY_SLOWING;
	if (!growing || !(rise > 0) || h.kind == VT_VERDICT_LEAK || h.kind == VT_VERDICT_STEP ||
	    !(fabs(v->heap_live_rise) < FREE_LIST_SHARE * rise))
		return 0;
	v->kind = VT_VERDICT_SETTLING;
	v->reason = VT_SOAK_WHY_FREE_LISTS;
	/* no model for when the arenas' high-water marks are full: as long again, at least */
	v->need_more_s = fmax(isfinite(v->need_more_s) ? v->need_more_s : 0, v->t1 - v->t0);
	return 0;
}

/* ---- the verdict ---- */

static void verdict_init(struct vt_soak_verdict *v, enum vt_metric m)
{
	size_t q;

	memset(v, 0, sizeof(*v));
	v->kind = VT_VERDICT_CANNOT_TELL;
	v->metric = m;
	v->t0 = v->t1 = v->noise = v->tolerance = v->floor_drift = NAN;
	v->settle_s = v->settled_t0 = v->settled_lo = v->settled_hi = v->settled_median = NAN;
	v->slope = v->slope_lo = v->slope_hi = v->slope_window_t0 = v->slope_window_s = NAN;
	v->min_span_s = v->judged_span_s = v->settled_window_s = NAN;
	v->rate_first_half_per_s = v->rate_last_half_per_s = v->steady_s = NAN;
	v->drift_not_ruled_out = v->plateau_window_s = v->material = NAN;
	v->step_t = v->step_bytes = v->step_before = v->step_after = NAN;
	v->need_more_s = NAN;
	v->cpu_cores = v->cpu_user_cores = v->cpu_sys_cores = NAN;
	v->heap_live_median = v->heap_live_drift = v->heap_live_rise = NAN;
	v->swap.t0 = v->swap.t1 = v->swap.anon_delta = v->swap.swap_delta = NAN;
	v->swap.committed_delta = v->swap.anon_range_lo = v->swap.anon_range_hi = NAN;
	for (q = 0; q < 4; q++)
		v->q[q] = (struct vt_quarter){ NAN, NAN, 0, NAN, NAN, NAN };
}
int vt_soak_analyze(const struct vt_series *s, const struct vt_soak_opts *o,
		    struct vt_soak_verdict *v)
{
	struct vt_soak_opts def;
	struct vt_soak_work w;
	size_t i;
	int rc = 0;

	if (!o) {
		vt_soak_opts_default(&def);
		o = &def;
	}
	verdict_init(v, (unsigned)o->metric < VT_M_COUNT ? o->metric : VT_M_COMMITTED);
	vt_series_last_incarnation(s, &v->from, &v->to);
	v->settled_from = v->to;
	v->running = !s->info.finished && s->info.writing;
	v->died = !s->info.finished && !s->info.writing;
	count_restarts(s, v);
	for (i = v->from; i < v->to; i++)
		v->samples += s->count[i];
	if (v->to > v->from) {
		v->t0 = s->t0[v->from];
		v->t1 = s->t1[v->to - 1];
	}
	if (vt_soak_work_alloc(&w, s, v->to - v->from)) {
		rc = -1;
		goto out;
	}
	w.bytes = vt_metrics[v->metric].unit == VT_UNIT_BYTES;
	w.interval = sampling_interval(s, v);
	count_gaps(s, w.interval, v);
	cpu(s, v);
	vt_soak_pts_load(&w, v->metric, v->from, v->to);
	if (w.p.n)
		vt_soak_quarters(&w, v);
	if (!vt_soak_too_short(&w, o, v))
		rc = vt_soak_judge(&w, v);
	if (rc == 0)
		rc = free_lists(s, o, v);
	/*
	 * One figure for how much longer, rounded up once, here, to what every
	 * view says exactly: "at least 2.1 min more" is 126 s in the JSON too.
	 */
	v->need_more_s = vt_span_ceil(v->need_more_s);
out:
	vt_soak_work_free(&w);
	return rc;
}

bool vt_soak_settled_window(const struct vt_series *s, const struct vt_soak_verdict *v, size_t *a,
			    size_t *b)
{
	bool settled = (v->kind == VT_VERDICT_PLATEAU || v->kind == VT_VERDICT_STEP) &&
		       (v->settled || v->kind == VT_VERDICT_STEP);
	size_t i = v->from;

	*b = v->to;
	if (settled) {
		i = v->settled ? v->settled_from : v->from;
		if (v->kind == VT_VERDICT_STEP)
			while (i < v->to && s->t0[i] < v->step_t)
				i++;
	} else if (v->to > v->from) {
		double mid = (v->t0 + v->t1) / 2;

		while (i < v->to && s->t[i] < mid)
			i++;
	}
	*a = i;
	return settled;
}

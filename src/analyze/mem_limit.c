/*
 * mem_limit.c — a memory limit from a settled soak (see mem_limit.h).
 */
#include "analyze/mem_limit.h"

#include "analyze/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Metric m at point i: its lowest (field -1), mean (0) or highest (1) value; NAN where unknown. */
static double stat_at(const struct vt_series *s, enum vt_metric m, size_t i, int field)
{
	const struct vt_stat *st = s->m[m] ? &s->m[m][i] : NULL;

	return !st ? NAN : field < 0 ? st->lo : field > 0 ? st->hi : st->mean;
}

/* A part of the need at point i, 0 when the recording lacks it there (a part that is not held). */
static double part(const struct vt_series *s, enum vt_metric m, size_t i, int field)
{
	double v = stat_at(s, m, i, field);

	return isnan(v) ? 0 : v;
}

/*
 * committed + RssFile + RssShmem at point i (m is not used: the shape of
 * stat_at).  NAN where committed, which carries it, is unknown: the file
 * and shmem parts may be 0.
 */
static double need_at(const struct vt_series *s, enum vt_metric m, size_t i, int field)
{
	(void)m;
	if (isnan(stat_at(s, VT_M_COMMITTED, i, 0)))
		return NAN;
	return part(s, VT_M_COMMITTED, i, field) + part(s, VT_M_RSS_FILE, i, field) +
	       part(s, VT_M_RSS_SHMEM, i, field);
}

typedef double (*point_value)(const struct vt_series *s, enum vt_metric m, size_t i, int field);

/* A figure (at: stat_at of metric m, or need_at) over points [a, b); means go through scratch, b - a values. */
static void level_of(const struct vt_series *s, point_value at, enum vt_metric m, size_t a, size_t b,
		     double *scratch, struct vt_limit_level *out)
{
	size_t i, n = 0;

	*out = (struct vt_limit_level){ NAN, NAN, NAN };
	for (i = a; i < b; i++) {
		double mean = at(s, m, i, 0), lo = at(s, m, i, -1), hi = at(s, m, i, 1);

		if (isnan(mean))
			continue;
		scratch[n++] = mean;
		out->lo = isnan(out->lo) ? lo : fmin(out->lo, lo);
		out->hi = isnan(out->hi) ? hi : fmax(out->hi, hi);
	}
	if (n)
		out->median = vt_stat_median(scratch, n);
}

/*
 * How much a cumulative count rose over points [a, b): within each point
 * (its first to its last sample) and from one point to the next; a drop
 * is a reset (a new cgroup) and counts from 0.  NAN when never recorded.
 */
static double rise(const struct vt_series *s, enum vt_metric m, size_t a, size_t b)
{
	const struct vt_stat *st = s->m[m];
	double total = NAN, prev = NAN;
	size_t i;

	for (i = a; st && i < b; i++) {
		if (isnan(st[i].lo) || isnan(st[i].hi))
			continue;
		if (isnan(total))
			total = 0;
		if (!isnan(prev))
			total += st[i].lo >= prev ? st[i].lo - prev : st[i].lo;
		total += fmax(st[i].hi - st[i].lo, 0);
		prev = st[i].hi;
	}
	return total;
}

static double highest(const struct vt_series *s, enum vt_metric m, size_t a, size_t b)
{
	double hi = NAN;
	size_t i;

	for (i = a; s->m[m] && i < b; i++)
		if (!isnan(s->m[m][i].hi))
			hi = isnan(hi) ? s->m[m][i].hi : fmax(hi, s->m[m][i].hi);
	return hi;
}

static double last_known(const struct vt_series *s, enum vt_metric m, size_t a, size_t b)
{
	size_t i;

	for (i = b; s->m[m] && i > a; i--)
		if (!isnan(s->m[m][i - 1].mean))
			return s->m[m][i - 1].mean;
	return NAN;
}

/* The cgroup's figures over the span [from, to), memory.current's median over [a, b). */
static void cgroup_figures(const struct vt_series *s, size_t from, size_t to, size_t a, size_t b,
			   double *scratch, struct vt_mem_limit *out)
{
	struct vt_limit_level cur;
	double span_s = to > from ? s->t1[to - 1] - s->t0[from] : 0;
	double some = rise(s, VT_M_CG_PSI_SOME_S, from, to), full = rise(s, VT_M_CG_PSI_FULL_S, from, to);

	level_of(s, stat_at, VT_M_CG_CURRENT, a, b, scratch, &cur);
	out->cg_current_median = cur.median;
	out->cg_current_peak = highest(s, VT_M_CG_CURRENT, from, to);
	out->cgroup = !isnan(out->cg_current_peak);
	/* memory.current known without a limit beside it: the cgroup has none (an older recording: unknown) */
	out->cg_limit = last_known(s, VT_M_CG_LIMIT, from, to);
	out->ev_high = rise(s, VT_M_CG_HIGH_EVENTS, from, to);
	out->ev_max = rise(s, VT_M_CG_MAX_EVENTS, from, to);
	out->ev_oom_kill = rise(s, VT_M_CG_OOM_KILLS, from, to);
	out->cgroup_events = !isnan(out->ev_high) || !isnan(out->ev_max) || !isnan(out->ev_oom_kill);
	out->psi_some_pct = span_s > 0 && !isnan(some) ? some / span_s * 100 : NAN;
	out->psi_full_pct = span_s > 0 && !isnan(full) ? full / span_s * 100 : NAN;
}

/* An oom_kill event (soak.c) for the span's process: its cgroup's count rose as it exited. */
static bool oom_at_exit(const struct vt_series *s, const struct vt_soak_verdict *v)
{
	size_t i;

	if (v->to <= v->from)
		return false;
	for (i = 0; i < s->nevents; i++)
		if (s->events[i].kind == VT_EV_OOM_KILL && s->events[i].pid == s->pid[v->from])
			return true;
	return false;
}

static bool bit(double count)
{
	return !isnan(count) && count > 0;
}

/* The rule of mem_limit.h on out->peak and out->spread. */
static void apply_rule(struct vt_mem_limit *out)
{
	double share = VT_LIMIT_HEADROOM_SHARE * out->peak;

	out->headroom = share;
	out->headroom_by = VT_HEADROOM_SHARE;
	if (out->spread > out->headroom) {
		out->headroom = out->spread;
		out->headroom_by = VT_HEADROOM_SPREAD;
	}
	if (VT_LIMIT_HEADROOM_MIN > out->headroom) {
		out->headroom = VT_LIMIT_HEADROOM_MIN;
		out->headroom_by = VT_HEADROOM_MIN;
	}
	out->recommended = ceil((out->peak + out->headroom) / VT_LIMIT_ROUND) * VT_LIMIT_ROUND;
}

void vt_mem_limit_recommend(const struct vt_series *s, const struct vt_soak_verdict *v,
			    struct vt_mem_limit *out)
{
	size_t a, b, i;
	double *scratch;

	memset(out, 0, sizeof(*out));
	out->verdict = v->kind;
	out->need_more_s = v->need_more_s;
	out->window_t0 = out->window_t1 = out->spread = NAN;
	out->peak = out->peak_t = out->headroom = out->recommended = NAN;
	out->need = out->committed = out->rss_file = out->rss_shmem = (struct vt_limit_level){ NAN, NAN, NAN };
	out->swap_peak = out->cg_limit = out->cg_current_median = out->cg_current_peak = NAN;
	out->ev_high = out->ev_max = out->ev_oom_kill = out->psi_some_pct = out->psi_full_pct = NAN;

	out->settled = vt_soak_settled_window(s, v, &a, &b) && a < b;
	scratch = malloc((v->to > v->from ? v->to - v->from : 1) * sizeof(*scratch));
	if (!scratch) {
		out->why = VT_LIMIT_NOT_RECORDED;
		return;
	}
	for (i = v->from; i < v->to; i++) {
		double n = need_at(s, VT_M_COMMITTED, i, 1);

		if (isnan(n))
			continue;
		if (isnan(out->peak) || n > out->peak) {
			out->peak = n;
			out->peak_t = s->t[i];
		}
	}
	level_of(s, need_at, VT_M_COMMITTED, a, b, scratch, &out->need);
	level_of(s, stat_at, VT_M_COMMITTED, a, b, scratch, &out->committed);
	level_of(s, stat_at, VT_M_RSS_FILE, a, b, scratch, &out->rss_file);
	level_of(s, stat_at, VT_M_RSS_SHMEM, a, b, scratch, &out->rss_shmem);
	out->spread = out->need.hi - out->need.lo;
	out->swap_peak = highest(s, VT_M_VM_SWAP, v->from, v->to);
	cgroup_figures(s, v->from, v->to, a, b, scratch, out);
	free(scratch);
	if (a < b) {
		out->window_t0 = s->t0[a];
		out->window_t1 = s->t1[b - 1];
	}

	out->limit_reached = bit(out->ev_high) || bit(out->ev_max);
	out->oom_at_exit = oom_at_exit(s, v);
	if (isnan(out->peak) || isnan(out->need.median)) {
		out->why = VT_LIMIT_NOT_RECORDED;
	} else if (bit(out->ev_oom_kill) || out->oom_at_exit) {
		/* first: a process the limit killed may not have lived to settle */
		out->why = VT_LIMIT_WAS_HIT;
		out->hit_by = VT_HIT_OOM_KILL;
	} else if (!out->settled) {
		out->why = VT_LIMIT_NOT_SETTLED;
	} else {
		apply_rule(out);
		if (out->limit_reached && !(out->recommended <= fmin(out->cg_limit, out->cg_current_peak)))
			out->hit_by = VT_HIT_NEAR_LIMIT;
		else if (out->limit_reached && out->psi_some_pct >= VT_LIMIT_PSI_NOTE)
			out->hit_by = VT_HIT_RECLAIM;
		out->why = out->hit_by ? VT_LIMIT_WAS_HIT : VT_LIMIT_GIVEN;
	}
	if (out->why != VT_LIMIT_GIVEN && out->why != VT_LIMIT_WAS_HIT)
		out->headroom = out->recommended = NAN;
	if (out->why != VT_LIMIT_NOT_SETTLED)
		out->need_more_s = NAN;     /* a longer soak is not what it lacks */
}

/*
 * soak_words.c — what every view of a soak says in the same words (soak.h):
 * the verdict line (vt_soak_headline), why the verdict is what it is
 * (vt_soak_why, from the reason code and the figures the analysis left in
 * struct vt_soak_verdict), an arm's line in a comparison, an event's name
 * and the states a thread was seen in.  The text, JSON, HTML views and the
 * demo all print these.
 */
#include "render/soak.h"
#include "render/soak_fmt.h"
#include "render/threads.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *vt_soak_event_name(enum vt_event_kind k)
{
	switch (k) {
	case VT_EV_START: return "start";
	case VT_EV_RESTART: return "restart";
	case VT_EV_EXIT: return "exit";
	case VT_EV_GAP: return "gap";
	case VT_EV_CLOCK_JUMP: return "clock_jump";
	case VT_EV_STOP: return "stop";
	case VT_EV_ERROR: return "error";
	case VT_EV_NOTE: return "note";
	case VT_EV_OOM_KILL: return "oom_kill";
	case VT_EV_TRIM: return "trim";
	}
	return "unknown";
}

const char *vt_soak_headline(const struct vt_soak_verdict *v, char *buf, size_t cap)
{
	const char *name = vt_verdict_name(v->kind);
	char a[96], b[96], c[96];

	if (!name)
		name = "unknown";
	switch (v->kind) {
	case VT_VERDICT_LEAK:
		if (isfinite(v->slope_lo) && isfinite(v->slope_hi))
			snprintf(buf, cap, "%s — floor rising %s %s (90%% interval %s–%s)", name,
				 vt_fmt_per_h(v->metric, v->slope, a, sizeof(a)), vt_per_h_unit(v->metric),
				 vt_fmt_per_h(v->metric, v->slope_lo, b, sizeof(b)),
				 vt_fmt_per_h(v->metric, v->slope_hi, c, sizeof(c)));
		else
			snprintf(buf, cap, "%s — floor rising %s %s", name,
				 vt_fmt_per_h(v->metric, v->slope, a, sizeof(a)), vt_per_h_unit(v->metric));
		break;
	case VT_VERDICT_PLATEAU:
		vt_fmt_metric(v->metric, v->settled_median, b, sizeof(b));
		vt_fmt_metric_pair(v->metric, v->settled_lo, v->settled_hi, "–", c, sizeof(c));
		if (!v->settled)
			snprintf(buf, cap, "%s — %s (%s)", name, b, c);
		else if (v->reason == VT_SOAK_WHY_FLAT_FROM_START ||
			 (v->reason != VT_SOAK_WHY_SETTLED_AFTER && v->settle_s < 1))
			/* the why's word for it when there is one, so the two lines agree */
			snprintf(buf, cap, "%s — flat from the start; %s (%s %s)", name, b,
				 v->settled_hi - v->settled_lo > 2 * v->tolerance ? "oscillating" : "range", c);
		else
			snprintf(buf, cap, "%s — settled after %s; %s (%s %s)", name,
				 vt_fmt_span(v->settle_s, a, sizeof(a)), b,
				 v->settled_hi - v->settled_lo > 2 * v->tolerance ? "oscillating" : "range", c);
		break;
	case VT_VERDICT_STEP:
		snprintf(buf, cap, "%s — %s at t+%s (%s), flat on both sides", name,
			 vt_fmt_metric_delta(v->metric, v->step_bytes, v->step_before, a, sizeof(a)),
			 vt_fmt_span(v->step_t, b, sizeof(b)),
			 vt_fmt_metric_pair(v->metric, v->step_before, v->step_after, " → ", c, sizeof(c)));
		break;
	case VT_VERDICT_SETTLING: {
		char tail[128] = "";

		/* levelled off lately: the slope is the growth before it, not "still rising" */
		if (isfinite(v->slope) && v->slope > 0 && v->reason != VT_SOAK_WHY_LEVELLED_RECENTLY)
			snprintf(tail, sizeof(tail), " (floor still rising %s %s)",
				 vt_fmt_per_h(v->metric, v->slope, b, sizeof(b)), vt_per_h_unit(v->metric));
		if (vt_soak_go_on(v, a, sizeof(a))[0])
			snprintf(buf, cap, "%s — %s%s", name, a, tail);
		else
			snprintf(buf, cap, "%s — growth is slowing%s", name, tail);
		break;
	}
	case VT_VERDICT_CANNOT_TELL:
		if (v->samples == 0)
			snprintf(c, sizeof(c), "no samples");
		else
			snprintf(c, sizeof(c), "%zu sample%s over %s", v->samples, v->samples == 1 ? "" : "s",
				 vt_fmt_span(v->t1 - v->t0, b, sizeof(b)));
		if (vt_soak_go_on(v, a, sizeof(a))[0])
			snprintf(buf, cap, "%s — %s; %s", name, c, a);
		else
			snprintf(buf, cap, "%s — %s", name, c);
		break;
	default:
		snprintf(buf, cap, "%s", name);
	}
	return buf;
}

const char *vt_compare_arm_line(const struct vt_cmp_arm *a, char *buf, size_t cap)
{
	const char *vname = vt_verdict_name(a->verdict.kind);
	const char *env = a->series ? a->series->info.env : "";
	char span[32], who[640], count[32], flat[32];

	if (env[0] && (!a->name || strcmp(env, a->name)))
		snprintf(who, sizeof(who), "%s (%s)", a->name ? a->name : "?", env);
	else
		snprintf(who, sizeof(who), "%s", a->name ? a->name : "?");
	vt_fmt_span(a->window_t1 - a->window_t0, span, sizeof(span));
	vt_fmt_count_of(a->window_samples, "sample", "samples", count, sizeof(count));
	if (a->window_settled)
		snprintf(buf, cap, "%s: %s, settled window %s, %s", who, vname ? vname : "unknown", span, count);
	else if (vt_soak_settled_not_yet(&a->verdict))
		snprintf(buf, cap, "%s: %s, flat since t+%s but not a plateau yet: last half used (%s, %s)", who,
			 vname ? vname : "unknown", vt_fmt_span(a->verdict.settled_t0, flat, sizeof(flat)), span,
			 count);
	else
		snprintf(buf, cap, "%s: %s, never settled: last half used (%s, %s)", who,
			 vname ? vname : "unknown", span, count);
	return buf;
}

const char *vt_thread_doing_states(const struct vt_thread_doing *d, char *buf, size_t cap)
{
	const unsigned n[4] = { d->n_r, d->n_s, d->n_d, d->seen - d->n_r - d->n_s - d->n_d };
	static const char *const labels[4] = { "R", "S", "D", "other" };

	return vt_render_state_shares(n, labels, 4, d->seen, buf, cap);
}

/* ---- why ---- */

/* A few formatted figures for one sentence: a ring of buffers, one per figure. */
#define FIGS 8

struct figs {
	char b[FIGS][64];
	int next;
};

static char *slot(struct figs *f)
{
	return f->b[f->next++ % FIGS];
}

static const char *value(struct figs *f, enum vt_metric m, double x)
{
	return vt_fmt_metric(m, x, slot(f), sizeof(f->b[0]));
}

/* A movement, signed, in the unit of the tolerance it is held against. */
static const char *moved(struct figs *f, const struct vt_soak_verdict *v, double x)
{
	return vt_fmt_metric_delta(v->metric, x, v->tolerance, slot(f), sizeof(f->b[0]));
}

static const char *span(struct figs *f, double s)
{
	return vt_fmt_span(s, slot(f), sizeof(f->b[0]));
}

/* "<sep>soak at least 2.1 min more", or "" when no figure applies. */
static const char *go_on(struct figs *f, const struct vt_soak_verdict *v, const char *sep)
{
	char *b = slot(f), phrase[48];

	if (vt_soak_go_on(v, phrase, sizeof(phrase))[0])
		snprintf(b, sizeof(f->b[0]), "%s%s", sep, phrase);
	else
		b[0] = '\0';
	return b;
}

/*
 * Decimals for a rate and its half-interval: three significant digits of
 * the rate (at most two decimals), more if the half-interval needs them
 * to show (at most four).
 */
static int decimals(double x, double half)
{
	double ax = fabs(x);
	int prec = ax >= 100 ? 0 : ax >= 10 ? 1 : 2;

	if (half > 0 && isfinite(half)) {
		int need = (int)ceil(-log10(half));

		if (need > prec)
			prec = need > 4 ? 4 : need;
	}
	return prec;
}

/*
 * A rate with its half-interval (NAN: none): per second when the sentence's
 * fastest rate (unit_rate) is fast and the window short (the report's
 * "0.51 MiB/s ± 0.04"), else per hour; one unit for the whole sentence.
 */
static const char *rate(struct figs *f, const struct vt_soak_verdict *v, double per_s, double half,
			double unit_rate)
{
	char *b = slot(f);
	bool bytes = vt_metric_is_bytes(v->metric);
	double u = bytes ? VT_MiB : 1;
	double k = v->slope_window_s < 600 && fabs(unit_rate) >= 0.1 * u ? 1 : 3600;
	const char *unit = bytes ? (k == 1 ? " MiB/s" : " MiB/h") : (k == 1 ? "/s" : "/h");
	int prec = decimals(per_s * k / u, half * k / u);

	if (!isfinite(per_s))
		snprintf(b, sizeof(f->b[0]), "n/a");
	else if (isfinite(half))
		snprintf(b, sizeof(f->b[0]), "%.*f%s ± %.*f", prec, per_s * k / u, unit, prec,
			 half * k / u);
	else
		snprintf(b, sizeof(f->b[0]), "%.*f%s", prec, per_s * k / u, unit);
	return b;
}

/* "<pre>q1 floor A, q4 floor B<post>", or "" when a quarter is empty (a gap). */
static const char *quarter_floors(struct figs *f, const struct vt_soak_verdict *v, const char *pre,
				  const char *post)
{
	char *b = slot(f);

	if (isnan(v->q[0].floor) || isnan(v->q[3].floor))
		return "";
	snprintf(b, sizeof(f->b[0]), "%sq1 floor %s, q4 floor %s%s", pre, value(f, v->metric, v->q[0].floor),
		 value(f, v->metric, v->q[3].floor), post);
	return b;
}

/* The sentences of a plateau, flat from the start or settled later. */
static void plateau(struct figs *f, const struct vt_soak_verdict *v, char *buf, size_t cap)
{
	char since[64], range[64], bound[160] = "";

	if (v->reason == VT_SOAK_WHY_FLAT_FROM_START)
		snprintf(since, sizeof(since), "flat from the start");
	else
		snprintf(since, sizeof(since), "settled after %s", span(f, v->settle_s));
	if (isfinite(v->drift_not_ruled_out) && isfinite(v->material) && v->material > 0)
		/* its confidence: what the slope interval rules out */
		snprintf(bound, sizeof(bound), "; the slope interval bounds the drift to %s, under the %s a "
			 "plateau must rule out", value(f, v->metric, v->drift_not_ruled_out),
			 value(f, v->metric, v->material));
	snprintf(buf, cap, "%s at %s (%s); over the last %s the floor moved %s, %s of %s%s",
		 since, value(f, v->metric, v->settled_median),
		 vt_fmt_metric_pair(v->metric, v->settled_lo, v->settled_hi, " to ", range, sizeof(range)),
		 span(f, v->slope_window_s), moved(f, v, v->slope * v->slope_window_s),
		 /* a trim after settling (soak_judge.c): down by more than the tolerance, under the material */
		 fabs(v->slope * v->slope_window_s) <= v->tolerance ? "within the tolerance"
								     : "a trim beyond the tolerance",
		 value(f, v->metric, v->tolerance), bound);
}

/* The sentences of a verdict that cannot decide yet, once there is a trend to judge. */
static void undecided(struct figs *f, const struct vt_soak_verdict *v, char *buf, size_t cap)
{
	double w = v->slope_window_s, hw = (v->slope_hi - v->slope_lo) / 2;
	enum vt_metric m = v->metric;
	char missing[VT_SOAK_WHY_MAX / 2 + 32] = "", lacks[VT_SOAK_WHY_MAX / 2];

	if (vt_soak_plateau_missing(v, lacks, sizeof(lacks))[0])
		snprintf(missing, sizeof(missing), "; not a plateau yet: %s", lacks);
	switch (v->reason) {
	case VT_SOAK_WHY_SLOW_TREND:
		snprintf(buf, cap, "the floor %s slowly (%s): %s over %s, within the tolerance of %s so far%s%s",
			 v->slope > 0 ? "rises" : "falls", rate(f, v, v->slope, hw, v->slope),
			 moved(f, v, v->slope * w), span(f, w), value(f, m, v->tolerance), missing,
			 go_on(f, v, "; "));
		break;
	case VT_SOAK_WHY_TOO_NOISY:
		if (missing[0])
			snprintf(buf, cap, "too noisy to tell: the floor trend is %s (noise %s)%s%s",
				 rate(f, v, v->slope, hw, v->slope), value(f, m, v->noise), missing, go_on(f, v, "; "));
		else
			snprintf(buf, cap, "too noisy to tell: the floor trend is %s, which cannot rule out a drift "
				 "of %s over %s (noise %s)%s", rate(f, v, v->slope, hw, v->slope),
				 value(f, m, v->drift_not_ruled_out), span(f, w), value(f, m, v->noise),
				 go_on(f, v, "; "));
		break;
	case VT_SOAK_WHY_NO_STEADY_TREND:
		snprintf(buf, cap, "the floor moves by more than the tolerance (%s) without a steady trend "
			 "(%s): cannot tell yet%s", value(f, m, v->tolerance),
			 rate(f, v, v->slope, hw, v->slope), go_on(f, v, "; "));
		break;
	case VT_SOAK_WHY_SMALL_RISE:
		snprintf(buf, cap, "the floor rose %s over %s (%s), under the %s a leak must show (the drift a "
			 "plateau must rule out): a heap filling its arenas' high-water marks does this too; "
			 "cannot tell yet%s; --heap records the live bytes that tell them apart",
			 moved(f, v, v->slope * w), span(f, w), rate(f, v, v->slope, hw, v->slope),
			 value(f, m, v->material), go_on(f, v, "; "));
		break;
	case VT_SOAK_WHY_RATCHET:
		snprintf(buf, cap, "the floor rose %s over %s (%s) in steps: a new high in %zu of %zu stretches, "
			 "flat between them; arenas filling their high-water marks ratchet like this for many "
			 "minutes after a start: cannot tell yet%s; --heap records the live bytes that tell them apart",
			 moved(f, v, v->slope * w), span(f, w), rate(f, v, v->slope, hw, v->slope),
			 v->floor_records, v->floor_bins > 0 ? v->floor_bins - 1 : 0, go_on(f, v, "; "));
		break;
	case VT_SOAK_WHY_STEADY_TOO_SHORT:
		snprintf(buf, cap, "floor rose fast (%s), then at %s over the last %s: too short to tell a "
			 "leak from the end of a warm-up%s%s",
			 rate(f, v, v->rate_first_half_per_s, NAN, v->rate_first_half_per_s),
			 rate(f, v, v->rate_last_half_per_s, NAN, v->rate_first_half_per_s),
			 span(f, v->steady_s), quarter_floors(f, v, " (", ")"), go_on(f, v, "; "));
		break;
	default:
		buf[0] = '\0';
	}
}

bool vt_soak_settled_not_yet(const struct vt_soak_verdict *v)
{
	return v->settled && v->kind != VT_VERDICT_PLATEAU && v->kind != VT_VERDICT_STEP;
}

const char *vt_soak_plateau_missing(const struct vt_soak_verdict *v, char *buf, size_t cap)
{
	unsigned bits = v->plateau_missing;
	struct figs f = { .next = 0 };
	size_t len = 0;
	int k;

	if (!cap)
		return buf;
	buf[0] = '\0';
	for (k = 0; k < 4 && len < cap; k++) {
		const char *sep = len ? "; " : "";
		int w = 0;

		switch (bits & (1u << k)) {
		case VT_PLATEAU_NEEDS_LENGTH:
			w = snprintf(buf + len, cap - len, "%sa plateau needs a third of the span (%s), this window "
				     "is %s", sep, span(&f, v->plateau_window_s), span(&f, v->settled_window_s));
			break;
		case VT_PLATEAU_NEEDS_POINTS:
			w = snprintf(buf + len, cap - len, "%sa plateau needs %zu points, this window has %zu", sep,
				     v->plateau_points, v->settled_points);
			break;
		case VT_PLATEAU_NEEDS_FLAT:
			w = snprintf(buf + len, cap - len, "%sthe floor moved %s over %s, beyond the tolerance of %s",
				     sep, moved(&f, v, v->slope * v->slope_window_s), span(&f, v->slope_window_s),
				     value(&f, v->metric, v->tolerance));
			break;
		case VT_PLATEAU_NEEDS_BOUND:
			w = snprintf(buf + len, cap - len, "%sthe slope interval allows a drift of %s over %s, more "
				     "than the %s a plateau must rule out", sep,
				     value(&f, v->metric, v->drift_not_ruled_out), span(&f, v->slope_window_s),
				     value(&f, v->metric, v->material));
			break;
		default:
			break;
		}
		if (w > 0)
			len += (size_t)w;
	}
	return buf;
}

const char *vt_soak_go_on(const struct vt_soak_verdict *v, char *buf, size_t cap)
{
	char figure[32];

	if (!cap)
		return buf;
	if (isfinite(v->need_more_s) && v->need_more_s > 0)
		snprintf(buf, cap, "soak at least %s more", vt_fmt_span(v->need_more_s, figure, sizeof(figure)));
	else
		buf[0] = '\0';
	return buf;
}

const char *vt_soak_why(const struct vt_soak_verdict *v, char *buf, size_t cap)
{
	return vt_soak_why_as(v, NULL, buf, cap);
}

const char *vt_soak_why_as(const struct vt_soak_verdict *v, const char *name, char *buf, size_t cap)
{
	struct figs f = { .next = 0 };
	enum vt_metric m = (unsigned)v->metric < VT_M_COUNT ? v->metric : VT_M_COMMITTED;
	const char *label = name ? name : vt_metrics[m].label;
	double w = v->slope_window_s, hw = (v->slope_hi - v->slope_lo) / 2;
	char pair[64], lacks[VT_SOAK_WHY_MAX / 2];

	if (!cap)
		return buf;
	switch (v->reason) {
	case VT_SOAK_WHY_NOT_RECORDED:
		snprintf(buf, cap, "%s was not recorded: nothing to judge", label);
		break;
	case VT_SOAK_WHY_NO_SAMPLES:
		snprintf(buf, cap, "no %s samples yet: a verdict needs %zu samples over %s%s",
			 label, v->min_samples, span(&f, v->min_span_s), go_on(&f, v, "; "));
		break;
	case VT_SOAK_WHY_TOO_FEW:
		snprintf(buf, cap, "only %zu %s sample%s over %s: a verdict needs %zu samples over %s%s",
			 v->judged_samples, label, v->judged_samples == 1 ? "" : "s",
			 span(&f, v->judged_span_s), v->min_samples, span(&f, v->min_span_s),
			 go_on(&f, v, "; "));
		break;
	case VT_SOAK_WHY_NO_SPREAD:
		snprintf(buf, cap, "the samples do not spread over time: no trend to judge");
		break;
	case VT_SOAK_WHY_STEP:
		snprintf(buf, cap, "floor stepped %s %s at %s (from %s) and was flat before and after",
			 v->step_bytes > 0 ? "up" : "down", value(&f, m, fabs(v->step_bytes)),
			 span(&f, v->step_t),
			 vt_fmt_metric_pair(m, v->step_before, v->step_after, " to ", pair, sizeof(pair)));
		break;
	case VT_SOAK_WHY_FALLING:
		snprintf(buf, cap, "floor still falling: %s over %s (%s); not settled yet%s",
			 value(&f, m, v->slope * w), span(&f, w), rate(&f, v, v->slope, hw, v->slope),
			 go_on(&f, v, "; "));
		break;
	case VT_SOAK_WHY_FLAT_FROM_START:
	case VT_SOAK_WHY_SETTLED_AFTER:
		plateau(&f, v, buf, cap);
		break;
	case VT_SOAK_WHY_LEVELLED_RECENTLY:
		if (vt_soak_plateau_missing(v, lacks, sizeof(lacks))[0])
			snprintf(buf, cap, "floor levelled off at %s since t+%s, too recently to call a plateau: "
				 "%s%s", value(&f, m, v->settled_median), span(&f, v->settled_t0), lacks,
				 go_on(&f, v, "; "));
		else
			snprintf(buf, cap, "floor levelled off at %s only in the last %s: too recent to call a "
				 "plateau%s", value(&f, m, v->settled_median),
				 span(&f, v->settled_window_s), go_on(&f, v, "; "));
		break;
	case VT_SOAK_WHY_SLOWING:
		snprintf(buf, cap, "floor still rising but slowing down: %s in the first half of the window, "
			 "%s in the last; not settled yet%s%s",
			 rate(&f, v, v->rate_first_half_per_s, NAN, v->rate_first_half_per_s),
			 rate(&f, v, v->rate_last_half_per_s, NAN, v->rate_first_half_per_s),
			 quarter_floors(&f, v, " (", ")"), go_on(&f, v, "; "));
		break;
	case VT_SOAK_WHY_LEAK:
		snprintf(buf, cap, "floor rose %s over %s (%s), steadily%s%s%s%s", value(&f, m, v->slope * w),
			 span(&f, w), rate(&f, v, v->slope, hw, v->slope), quarter_floors(&f, v, ": ", ""),
			 v->heap_live_kind ? "; the allocator's live bytes rose " : "",
			 v->heap_live_kind ? value(&f, VT_M_HEAP_LIVE, v->heap_live_rise) : "",
			 v->heap_live_kind ? " over the same time: live data grows" : "");
		break;
	case VT_SOAK_WHY_FREE_LISTS:
		snprintf(buf, cap, "free-list growth, not a leak: the floor rose %s over %s (%s) while the "
			 "allocator's live bytes stayed at %s (their floor moved %s over the same time): the "
			 "arenas keep what was freed; not settled yet%s",
			 value(&f, m, v->slope * w), span(&f, w), rate(&f, v, v->slope, hw, v->slope),
			 value(&f, VT_M_HEAP_LIVE, v->heap_live_median), moved(&f, v, v->heap_live_rise),
			 go_on(&f, v, "; "));
		break;
	case VT_SOAK_WHY_SMALL_RISE:
	case VT_SOAK_WHY_RATCHET:
	case VT_SOAK_WHY_STEADY_TOO_SHORT:
	case VT_SOAK_WHY_SLOW_TREND:
	case VT_SOAK_WHY_TOO_NOISY:
	case VT_SOAK_WHY_NO_STEADY_TREND:
		undecided(&f, v, buf, cap);
		break;
	case VT_SOAK_WHY_NONE:
	default:
		buf[0] = '\0';
	}
	return buf;
}

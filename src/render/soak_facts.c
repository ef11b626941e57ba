/*
 * soak_facts.c — the evidence under a soak verdict as label and sentence
 * (soak.h vt_soak_facts): floor drift, noise, slope, settled window, step,
 * swap push/pull, CPU and how long to go on, the same in the text and the
 * HTML view.
 */
#include "render/soak.h"
#include "render/soak_fmt.h"

#include "analyze/free_mem.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* One fact: "swap", "RssAnon fell 62 MiB while ...".  Returns the next free slot. */
static int fact(struct vt_soak_fact *f, int n, int max, const char *label, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int fact(struct vt_soak_fact *f, int n, int max, const char *label, const char *fmt, ...)
{
	va_list ap;

	if (n >= max)
		return n;
	snprintf(f[n].label, sizeof(f[n].label), "%s", label);
	va_start(ap, fmt);
	vsnprintf(f[n].text, sizeof(f[n].text), fmt, ap);
	va_end(ap);
	return n + 1;
}

static int swap_facts(const struct vt_soak_verdict *v, struct vt_soak_fact *f, int n, int max)
{
	const struct vt_swap_motion *m = &v->swap;
	char a[32], b[32], c[32], d[32], e[96];
	bool flat = isfinite(m->committed_delta) &&
		    fabs(m->committed_delta) <= (isfinite(v->tolerance) ? v->tolerance : 0);

	if (flat)
		snprintf(e, sizeof(e), "stayed flat");
	else
		snprintf(e, sizeof(e), "moved %s", vt_fmt_size_delta_like(m->committed_delta, NAN, c, sizeof(c)));
	vt_fmt_span(m->t0, c, sizeof(c));
	vt_fmt_span(m->t1, d, sizeof(d));
	if (m->anon_delta <= 0)
		n = fact(f, n, max, "swap", "RssAnon fell %s while swap rose %s and committed %s: paged out, "
			 "not absorbed (%d episode%s; largest t+%s → t+%s)",
			 vt_fmt_size(-m->anon_delta, a, sizeof(a)), vt_fmt_size(m->swap_delta, b, sizeof(b)), e,
			 m->episodes, m->episodes == 1 ? "" : "s", c, d);
	else
		n = fact(f, n, max, "swap", "RssAnon rose %s while swap fell %s and committed %s: paged back "
			 "in, not new memory (%d episode%s; largest t+%s → t+%s)",
			 vt_fmt_size(m->anon_delta, a, sizeof(a)), vt_fmt_size(-m->swap_delta, b, sizeof(b)), e,
			 m->episodes, m->episodes == 1 ? "" : "s", c, d);
	if (isfinite(m->anon_range_lo) && isfinite(m->anon_range_hi))
		n = fact(f, n, max, "", "RssAnon oscillates %s %s%s",
			 vt_fmt_metric_pair(VT_M_RSS_ANON, m->anon_range_lo, m->anon_range_hi, "–", e, sizeof(e)),
			 vt_soak_settled_not_yet(v) ? "since t+" : v->settled ? "in the settled window" : "over the span",
			 vt_soak_settled_not_yet(v) ? vt_fmt_span(v->settled_t0, c, sizeof(c)) : "");
	return n;
}

/*
 * Free memory that costs RAM (analyze/free_mem.h): the last quarter's free
 * bytes on resident pages and trimmable pages beside the allocator's free
 * figure, or why the recording has none.
 */
static int free_facts(const struct vt_series *s, struct vt_soak_fact *f, int n, int max)
{
	struct vt_free_mem fm;
	char a[32], b[32], c[32], d[64], e[32], g[96];

	vt_free_mem_summarize(s, &fm);
	if (!fm.points) {
		if (fm.why_none)
			return fact(f, n, max, "free mem", "on resident pages not recorded: %.380s",
				    fm.why_none + strlen("free_resident and trimmable not recorded: "));
		return fact(f, n, max, "free mem", "on resident pages not recorded (%s)", fm.recorded
			    ? "no walk of the heap gave a figure: see the events"
			    : "a recording made before vitals measured it, or with --free-every 0");
	}
	d[0] = '\0';
	g[0] = '\0';
	/* the walk counts the tcache's chunks as free, mallinfo2 as in use: never "170 KiB of 161 KiB" */
	if (isfinite(fm.q4_heap_free) && fm.q4_resident <= fm.q4_heap_free)
		snprintf(d, sizeof(d), " of %s free-held (fordblks)", vt_fmt_metric(VT_M_HEAP_FREE, fm.q4_heap_free,
										 e, sizeof(e)));
	else if (isfinite(fm.q4_heap_free))
		snprintf(g, sizeof(g), "; above fordblks' %s, which counts the tcache's free chunks as in use",
			 vt_fmt_metric(VT_M_HEAP_FREE, fm.q4_heap_free, e, sizeof(e)));
	return fact(f, n, max, "free mem", "%s%s on resident pages (free_resident%s), %s trimmable (last "
		    "quarter, from t+%s); %s over the recording, %zu points",
		    vt_fmt_metric(VT_M_FREE_RESIDENT, fm.q4_resident, a, sizeof(a)), d, g,
		    vt_fmt_metric(VT_M_TRIMMABLE, fm.q4_trimmable, b, sizeof(b)), vt_fmt_span(fm.q4_t0, e, sizeof(e)),
		    vt_fmt_metric_pair(VT_M_FREE_RESIDENT, fm.lo, fm.hi, "–", c, sizeof(c)), fm.points);
}

int vt_soak_facts(const struct vt_analyze_report *r, struct vt_soak_fact *f, int max)
{
	const struct vt_soak_verdict *v = r->verdict;
	const struct vt_series *s = r->series;
	enum vt_metric m = v->metric;
	char a[96], b[96], c[96], d[96];
	int n = 0;

	if (isfinite(v->floor_drift) && isfinite(v->tolerance))
		n = fact(f, n, max, "drift", "floor drift q1→q4: %s (%s: tolerance %s)",
			 vt_fmt_metric_delta(m, v->floor_drift, v->q[0].floor, a, sizeof(a)),
			 fabs(v->floor_drift) <= v->tolerance ? "within noise" : "beyond noise",
			 vt_fmt_metric(m, v->tolerance, b, sizeof(b)));
	else
		n = fact(f, n, max, "drift", "floor drift q1→q4: %s",
			 vt_fmt_metric_delta(m, v->floor_drift, v->q[0].floor, a, sizeof(a)));
	if (isfinite(v->tolerance))
		n = fact(f, n, max, "noise", "%s (robust sd); changes under %s are within noise",
			 vt_fmt_metric(m, v->noise, a, sizeof(a)), vt_fmt_metric(m, v->tolerance, b, sizeof(b)));
	else
		n = fact(f, n, max, "noise", "%s", vt_fmt_metric(m, v->noise, a, sizeof(a)));
	if (isfinite(v->slope)) {
		snprintf(b, sizeof(b), "%s", "");
		snprintf(c, sizeof(c), "%s", "");
		if (isfinite(v->slope_lo) && isfinite(v->slope_hi)) {
			char lo[32], hi[32];

			snprintf(b, sizeof(b), " (90%% interval %s–%s)", vt_fmt_per_h(m, v->slope_lo, lo, sizeof(lo)),
				 vt_fmt_per_h(m, v->slope_hi, hi, sizeof(hi)));
		}
		if (isfinite(v->slope_window_t0))
			snprintf(c, sizeof(c), ", floor fitted from t+%s", vt_fmt_span(v->slope_window_t0, d, sizeof(d)));
		n = fact(f, n, max, "slope", "%s%s %s%s%s", v->slope >= 0 ? "+" : "",
			 vt_fmt_per_h(m, v->slope, a, sizeof(a)), vt_per_h_unit(m), b, c);
	} else {
		n = fact(f, n, max, "slope", "n/a");
	}
	if (vt_soak_settled_not_yet(v)) {
		/* the same window, but the verdict did not call it settled: say what it lacks */
		char lacks[360];

		vt_soak_plateau_missing(v, lacks, sizeof(lacks));
		n = fact(f, n, max, "settled", "not yet: flat since t+%s (%s, median %s)%s%s",
			 vt_fmt_span(v->settled_t0, a, sizeof(a)),
			 vt_fmt_metric_pair(m, v->settled_lo, v->settled_hi, "–", c, sizeof(c)),
			 vt_fmt_metric(m, v->settled_median, d, sizeof(d)), lacks[0] ? ", but " : "", lacks);
	} else if (v->settled) {
		n = fact(f, n, max, "settled", "from t+%s (after %s): %s, median %s",
			 vt_fmt_span(v->settled_t0, a, sizeof(a)), vt_fmt_span(v->settle_s, b, sizeof(b)),
			 vt_fmt_metric_pair(m, v->settled_lo, v->settled_hi, "–", c, sizeof(c)),
			 vt_fmt_metric(m, v->settled_median, d, sizeof(d)));
	} else {
		n = fact(f, n, max, "settled", "no: no window where the floor stops moving");
	}
	if (isfinite(v->step_t))
		n = fact(f, n, max, "step", "%s at t+%s (%s)",
			 vt_fmt_metric_delta(m, v->step_bytes, v->step_before, a, sizeof(a)),
			 vt_fmt_span(v->step_t, b, sizeof(b)),
			 vt_fmt_metric_pair(m, v->step_before, v->step_after, " → ", c, sizeof(c)));
	if (v->heap_live_kind)
		n = fact(f, n, max, "live heap", "%s (the allocator's live bytes, last quarter); floor drift "
			 "q1→q4 %s; their own verdict: %s",
			 vt_fmt_metric(VT_M_HEAP_LIVE, v->heap_live_median, a, sizeof(a)),
			 vt_fmt_metric_delta(VT_M_HEAP_LIVE, v->heap_live_drift, v->heap_live_median, b, sizeof(b)),
			 vt_verdict_name(v->heap_live_kind));
	else if (s->m[VT_M_HEAP_LIVE])
		n = fact(f, n, max, "live heap", "recorded, too sparsely to judge");
	n = free_facts(s, f, n, max);
	if (v->swap.seen)
		n = swap_facts(v, f, n, max);
	else if (s->m[VT_M_RSS_ANON] && s->m[VT_M_VM_SWAP])
		n = fact(f, n, max, "swap", "no push/pull: RssAnon and swap did not trade places");
	if (isfinite(v->cpu_cores) && isfinite(v->cpu_user_cores) && isfinite(v->cpu_sys_cores))
		n = fact(f, n, max, "CPU", "%.2f cores (user %.2f, sys %.2f)", v->cpu_cores, v->cpu_user_cores,
			 v->cpu_sys_cores);
	else if (isfinite(v->cpu_cores))
		n = fact(f, n, max, "CPU", "%.2f cores", v->cpu_cores);
	else
		n = fact(f, n, max, "CPU", "n/a (not recorded)");
	if (vt_soak_go_on(v, a, sizeof(a))[0])
		n = fact(f, n, max, "go on", "%s", a);
	return n;
}

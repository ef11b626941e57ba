/*
 * soak_html.c — `vitals analyze --html`: one self-contained page (inline
 * CSS and SVG, no scripts, nothing fetched) with the verdict and its
 * evidence, then charts over the whole recording: the verdict's metric with
 * its settled window, step and floor trend; RssAnon with VmSwap; live and
 * free-held; arenas and 64 MiB regions; CPU in cores; the CPU by bucket of
 * the profiles it holds (soak --profile-every); then threads and events.  Every text from the recording is escaped.
 */
#include "render/soak.h"
#include "render/soak_fmt.h"

#include "analyze/thread_view.h"
#include "render/alloc_trend.h"
#include "render/profile_trend.h"
#include "render/svg_chart.h"
#include "render/threads.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MiB (1024.0 * 1024.0)
#define EVENTS_SHOWN 50

/* A metric of the series as chart arrays, with a break (NAN) at restarts and gaps. */
struct xy {
	double *x, *y, *lo, *hi;
	size_t n;
};

static void xy_free(struct xy *a)
{
	free(a->x);
	free(a->y);
	free(a->lo);
	free(a->hi);
	memset(a, 0, sizeof(*a));
}

/* Point i starts a new piece: another process, or a gap in the recording before it. */
static bool breaks_before(const struct vt_series *s, size_t i)
{
	double every = s->info.every_s > 0 ? s->info.every_s : 0;

	if (i == 0)
		return false;
	if (s->incarnation[i] != s->incarnation[i - 1])
		return true;
	return every > 0 && s->t0[i] - s->t1[i - 1] > 3 * every;
}

static int xy_alloc(struct xy *a, size_t n, bool range)
{
	memset(a, 0, sizeof(*a));
	a->x = malloc(sizeof(double) * (n ? n : 1));
	a->y = malloc(sizeof(double) * (n ? n : 1));
	if (range) {
		a->lo = malloc(sizeof(double) * (n ? n : 1));
		a->hi = malloc(sizeof(double) * (n ? n : 1));
	}
	if (!a->x || !a->y || (range && (!a->lo || !a->hi))) {
		xy_free(a);
		return -1;
	}
	return 0;
}

static void xy_push(struct xy *a, double x, double y, double lo, double hi)
{
	a->x[a->n] = x;
	a->y[a->n] = y;
	if (a->lo) {
		a->lo[a->n] = lo;
		a->hi[a->n] = hi;
	}
	a->n++;
}

/* The means of metric m (and, when range, each point's lo..hi). */
static int xy_metric(struct xy *a, const struct vt_series *s, enum vt_metric m, bool range)
{
	size_t i;

	if (xy_alloc(a, 2 * s->n, range))
		return -1;
	for (i = 0; i < s->n; i++) {
		const struct vt_stat *st = &s->m[m][i];

		if (breaks_before(s, i))
			xy_push(a, s->t[i], NAN, NAN, NAN);
		/* a band only where a point summarises several samples */
		if (range && s->count[i] > 1)
			xy_push(a, s->t[i], st->mean, st->lo, st->hi);
		else
			xy_push(a, s->t[i], st->mean, NAN, NAN);
	}
	return 0;
}

/*
 * CPU in cores from a cumulative counter (or the sum of two): its increase
 * from one point's last sample to the next point's last sample, over the
 * time between them; within a point of several samples when it is the
 * first of its piece.
 */
static int xy_cpu(struct xy *a, const struct vt_series *s, const struct vt_stat *u, const struct vt_stat *k)
{
	size_t i;

	if (xy_alloc(a, 2 * s->n, false))
		return -1;
	for (i = 0; i < s->n; i++) {
		double hi = u[i].hi + (k ? k[i].hi : 0), lo = u[i].lo + (k ? k[i].lo : 0), y = NAN;
		bool brk = breaks_before(s, i);

		if (brk)
			xy_push(a, s->t1[i], NAN, NAN, NAN);
		if (i > 0 && !brk) {
			double prev = u[i - 1].hi + (k ? k[i - 1].hi : 0), dt = s->t1[i] - s->t1[i - 1];

			if (dt > 0 && hi >= prev)
				y = (hi - prev) / dt;
		} else if (s->t1[i] > s->t0[i] && hi >= lo) {
			y = (hi - lo) / (s->t1[i] - s->t0[i]);
		}
		xy_push(a, s->t1[i], y, NAN, NAN);
	}
	return 0;
}

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return a < b ? -1 : a > b;
}

/*
 * The floor trend as a dashed line over the fitted window: the verdict's
 * slope through the 10th percentile of (low - slope * t) of the window's
 * points, so it runs along the floor the slope was fitted to.  Returns 1 when drawn,
 * 0 when there is no trend to draw, -1 out of memory.
 */
static int trend_line(struct xy *a, const struct vt_series *s, const struct vt_soak_verdict *v)
{
	const struct vt_stat *st = s->m[v->metric];
	double t0 = isfinite(v->slope_window_t0) ? v->slope_window_t0 : v->t0, *r, icpt;
	size_t i, n = 0, to = v->to < s->n ? v->to : s->n;

	if (!isfinite(v->slope) || !st || to <= v->from)
		return 0;
	r = malloc(sizeof(*r) * (to - v->from));
	if (!r)
		return -1;
	for (i = v->from; i < to; i++)
		if (s->t[i] >= t0 && isfinite(st[i].lo))
			r[n++] = st[i].lo - v->slope * s->t[i];
	if (n < 2) {
		free(r);
		return 0;
	}
	qsort(r, n, sizeof(*r), cmp_double);
	icpt = r[n / 10];
	free(r);
	if (xy_alloc(a, 2, false))
		return -1;
	xy_push(a, t0, icpt + v->slope * t0, NAN, NAN);
	xy_push(a, v->t1, icpt + v->slope * v->t1, NAN, NAN);
	return 1;
}

static double series_max(const struct xy *a)
{
	double m = -INFINITY;
	size_t i;

	for (i = 0; i < a->n; i++)
		if (isfinite(a->y[i]) && a->y[i] > m)
			m = a->y[i];
	return m;
}

static void chart_base(struct vt_chart *c, const struct vt_series *s, const char *id, const char *title,
		       enum vt_chart_unit unit)
{
	memset(c, 0, sizeof(*c));
	c->id = id;
	c->title = title;
	c->x_title = "time since the soak began";
	c->y_unit = unit;
	c->x_min = s->n ? s->t0[0] : NAN;
	c->x_max = s->n ? s->t1[s->n - 1] : NAN;
	c->y_min_span = unit == VT_CHART_BYTES ? MiB : unit == VT_CHART_COUNT ? 2 : 0.05;
}

/* Restarts as grey marks, shared by the charts. */
static size_t restart_marks(const struct vt_series *s, struct vt_chart_mark *marks, size_t max)
{
	size_t i, n = 0;

	for (i = 1; i < s->n && n < max; i++)
		if (s->incarnation[i] != s->incarnation[i - 1])
			marks[n++] = (struct vt_chart_mark){ s->t0[i], "restart", "#888" };
	return n;
}

#define MAX_MARKS 12

static int chart_metric(FILE *out, const struct vt_analyze_report *r)
{
	const struct vt_series *s = r->series;
	const struct vt_soak_verdict *v = r->verdict;
	enum vt_metric m = v->metric;
	struct vt_chart_line lines[2];
	struct vt_chart_band band;
	struct vt_chart_mark marks[MAX_MARKS + 1];
	struct xy main = { 0 }, trend = { 0 };
	struct vt_chart c;
	char title[160], step_label[96], a[32], b[32];
	int rc = 0, has_trend;

	if ((unsigned)m >= VT_M_COUNT || !s->m[m] || !s->n)
		return 0;
	if (xy_metric(&main, s, m, true))
		return -1;
	has_trend = trend_line(&trend, s, v);
	if (has_trend < 0) {
		xy_free(&main);
		return -1;
	}
	snprintf(title, sizeof(title), "%s — %s", vt_metrics[m].label, vt_metrics[m].meaning);
	chart_base(&c, s, "metric", title, vt_metrics[m].unit != VT_UNIT_BYTES ? VT_CHART_COUNT
										      : VT_CHART_BYTES);
	if (c.y_unit == VT_CHART_BYTES) {
		double span = fmax(0.05 * series_max(&main), isfinite(v->tolerance) ? 4 * v->tolerance : 0);

		c.y_min_span = isfinite(span) && span > MiB ? span : MiB;
	}
	lines[0] = (struct vt_chart_line){ vt_metrics[m].label, vt_chart_palette[0], main.x, main.y,
					   main.lo, main.hi, main.n, false };
	c.lines = lines;
	c.nlines = 1;
	if (has_trend > 0) {
		lines[1] = (struct vt_chart_line){ "floor trend (fitted slope)", "#555", trend.x, trend.y,
						   NULL, NULL, trend.n, true };
		c.nlines = 2;
	}
	if (v->settled) {
		band = (struct vt_chart_band){ v->settled_t0, v->t1, "settled window", "#2ca02c" };
		c.bands = &band;
		c.nbands = 1;
	}
	c.nmarks = restart_marks(s, marks, MAX_MARKS);
	if (isfinite(v->step_t)) {
		if (c.y_unit == VT_CHART_BYTES)
			vt_fmt_size_delta_like(v->step_bytes, v->step_before, a, sizeof(a));
		else
			snprintf(a, sizeof(a), "%+.0f", v->step_bytes);
		snprintf(step_label, sizeof(step_label), "step %s at t+%s", a,
			 vt_fmt_span(v->step_t, b, sizeof(b)));
		marks[c.nmarks++] = (struct vt_chart_mark){ v->step_t, step_label, "#ff7f0e" };
	}
	c.marks = marks;
	rc = vt_svg_chart(out, &c);
	xy_free(&main);
	xy_free(&trend);
	return rc;
}

/* A chart of up to four metrics that are recorded (the others are left out). */
static int chart_metrics(FILE *out, const struct vt_series *s, const char *id, const char *title,
			 enum vt_chart_unit unit, const enum vt_metric *ms, size_t nm)
{
	struct vt_chart_line lines[4];
	struct vt_chart_mark marks[MAX_MARKS];
	struct xy xy[4];
	struct vt_chart c;
	size_t i, n = 0;
	int rc = 0;
	double top = -INFINITY;

	for (i = 0; i < nm && i < 4; i++) {
		if (!s->m[ms[i]])
			continue;
		if (xy_metric(&xy[n], s, ms[i], true)) {
			rc = -1;
			break;
		}
		top = fmax(top, series_max(&xy[n]));
		lines[n] = (struct vt_chart_line){ vt_metrics[ms[i]].label, vt_chart_palette[(i + 1) % 8],
						   xy[n].x, xy[n].y, xy[n].lo, xy[n].hi, xy[n].n, false };
		n++;
	}
	if (!rc && n) {
		chart_base(&c, s, id, title, unit);
		if (unit == VT_CHART_BYTES && isfinite(top) && 0.05 * top > c.y_min_span)
			c.y_min_span = 0.05 * top;
		c.lines = lines;
		c.nlines = n;
		c.nmarks = restart_marks(s, marks, MAX_MARKS);
		c.marks = marks;
		rc = vt_svg_chart(out, &c);
	}
	for (i = 0; i < n; i++)
		xy_free(&xy[i]);
	return rc;
}

static int chart_cpu(FILE *out, const struct vt_series *s)
{
	const struct vt_stat *u = s->m[VT_M_CPU_USER_S], *k = s->m[VT_M_CPU_SYS_S];
	struct vt_chart_line lines[3];
	struct vt_chart_mark marks[MAX_MARKS];
	struct xy xy[3] = { { 0 } };
	struct vt_chart c;
	size_t n = 0, i;
	int rc = 0;
	const struct {
		const char *label;
		int colour;
		const struct vt_stat *a, *b;     /* the counters summed; the line needs a */
	} curves[3] = {
		{ "user + system", 0, u && k ? u : NULL, k },
		{ "user", 2, u, NULL },
		{ "system", 1, k, NULL },
	};

	if (!u && !k)
		return 0;
	for (i = 0; i < 3; i++) {
		if (!curves[i].a)
			continue;
		if (xy_cpu(&xy[n], s, curves[i].a, curves[i].b))
			goto oom;
		lines[n] = (struct vt_chart_line){ curves[i].label, vt_chart_palette[curves[i].colour], xy[n].x,
						   xy[n].y, NULL, NULL, xy[n].n, false };
		n++;
	}
	chart_base(&c, s, "cpu", "CPU — cores, from the growth of the CPU counters between points", VT_CHART_CORES);
	c.y_zero = true;
	c.lines = lines;
	c.nlines = n;
	c.nmarks = restart_marks(s, marks, MAX_MARKS);
	c.marks = marks;
	rc = vt_svg_chart(out, &c);
	for (i = 0; i < n; i++)
		xy_free(&xy[i]);
	return rc;
oom:
	for (i = 0; i < 3; i++)
		xy_free(&xy[i]);
	return -1;
}

/* Metric m recorded, and 0 at every point (swap never used). */
static bool all_zero(const struct vt_series *s, enum vt_metric m)
{
	bool seen = false;

	return vt_series_zero_throughout(s, m, &seen) && seen;
}

static void meta(FILE *out, const char *label, const char *value)
{
	fputs("<span>", out);
	vt_html_text(out, label);
	fputs(" <b>", out);
	vt_html_text(out, value);
	fputs("</b></span>", out);
}

static void print_head(FILE *out, const struct vt_analyze_report *r)
{
	const struct vt_series *s = r->series;
	const struct vt_soak_verdict *v = r->verdict;
	const struct vt_recording_info *in = &s->info;
	char a[64], b[64], buf[256];

	fputs("<h1>vitals analyze: ", out);
	vt_html_text(out, in->target[0] ? in->target : "(unnamed target)");
	fputs("</h1>\n<p class=\"meta\">", out);
	meta(out, "file", r->path ? r->path : "n/a");
	if (in->redacted == VT_REDACTED_SECRETS) {
		char names[256];

		vt_recording_redacted_names(in, names, sizeof(names));
		meta(out, "redacted", names);
	}
	else if (in->redacted == VT_REDACTED_ARGS)
		meta(out, "redacted", "every argument (--redact-args)");
	if (in->wal_unread)
		meta(out, "note", "read without its -wal: the latest samples may be missing");
	if (in->arm[0])
		meta(out, "arm", in->arm);
	if (in->env[0])
		meta(out, "env", in->env);
	if (in->host[0])
		meta(out, "host", in->host);
	if (in->ncpus > 0) {
		snprintf(buf, sizeof(buf), "%d", in->ncpus);
		meta(out, "CPUs", buf);
	}
	fputs("<br>", out);
	meta(out, "recorded from", vt_fmt_utc(in->started_wall, false, a, sizeof(a)));
	meta(out, "every", vt_fmt_span(in->every_s, a, sizeof(a)));
	snprintf(buf, sizeof(buf), "%zu in %zu points", s->samples, s->n);
	meta(out, "samples", buf);
	fputs("<br>", out);
	if (v->to > v->from && v->from < s->n) {
		snprintf(buf, sizeof(buf), "%s + %s, %zu sample%s, pid %d",
			 vt_fmt_utc(s->wall[v->from], false, a, sizeof(a)), vt_fmt_span(v->t1 - v->t0, b, sizeof(b)),
			 v->samples, v->samples == 1 ? "" : "s", (int)s->pid[v->from]);
		meta(out, "analysed", buf);
	} else {
		meta(out, "analysed", "nothing: no samples");
	}
	snprintf(buf, sizeof(buf), "%d before the span", v->restarts);
	meta(out, "restarts", buf);
	snprintf(buf, sizeof(buf), "%d", v->gaps);
	meta(out, "gaps", buf);
	meta(out, "status", v->running ? "still being written"
			    : v->died ? "ended without a stop event (the soak died: killed, or its disk filled)"
				      : "finished");
	fputs("</p>\n", out);
}

static void print_verdict(FILE *out, const struct vt_analyze_report *r)
{
	const struct vt_soak_verdict *v = r->verdict;
	const char *key = vt_verdict_key(v->kind);
	char line[640], why[VT_SOAK_WHY_MAX];

	fputs("<div class=\"verdict k-", out);
	vt_html_text(out, key ? key : "unknown");
	fputs("\">\n<p class=\"line\">verdict: ", out);
	vt_html_text(out, vt_soak_headline(v, line, sizeof(line)));
	fputs("</p>\n", out);
	if (vt_soak_why(v, why, sizeof(why))[0]) {
		fputs("<p>", out);
		vt_html_text(out, why);
		fputs("</p>\n", out);
	}
	if (v->running)
		fputs("<p class=\"small\">The recording is still being written: the verdict covers what is "
		      "recorded so far.</p>\n", out);
	fputs("</div>\n", out);
}

/* analyze --limit: the figure or why not, the rule, and the figures it rests on. */
static void print_limit(FILE *out, const struct vt_mem_limit *l)
{
	char buf[600], a[32], b[32], c[32];

	if (!l)
		return;
	fputs("<h2>memory limit: ", out);
	vt_html_text(out, l->why == VT_LIMIT_GIVEN ? vt_mem_limit_headline(l, buf, sizeof(buf)) : "cannot tell yet");
	fputs("</h2>\n<ul class=\"facts\">\n<li>", out);
	if (l->why == VT_LIMIT_GIVEN) {
		vt_html_text(out, vt_mem_limit_rule());
		fputs("</li>\n<li>", out);
		vt_html_text(out, vt_mem_limit_setting(l, buf, sizeof(buf)));
	} else {
		vt_html_text(out, vt_mem_limit_why(l, buf, sizeof(buf)));
	}
	if (l->why != VT_LIMIT_NOT_RECORDED) {
		snprintf(buf, sizeof(buf), "need (RSS + swap) %s %s, peak %s; cgroup limit %s",
			 vt_fmt_size(l->need.median, a, sizeof(a)), l->settled ? "settled" : "over the last half",
			 vt_fmt_size(l->peak, b, sizeof(b)),
			 isfinite(l->cg_limit) ? vt_fmt_size(l->cg_limit, c, sizeof(c))
			 : l->cgroup_events ? "none set" : "not recorded");
		fputs("</li>\n<li>", out);
		vt_html_text(out, buf);
	}
	fputs("</li>\n</ul>\n<p class=\"small\">vitals analyze --limit prints the evidence in full.</p>\n", out);
}

static void td(FILE *out, const char *cls, const char *text)
{
	fprintf(out, "<td%s>", cls ? " class=\"n\"" : "");
	vt_html_text(out, text);
	fputs("</td>", out);
}

static void print_evidence(FILE *out, const struct vt_analyze_report *r)
{
	const struct vt_soak_verdict *v = r->verdict;
	struct vt_soak_fact f[VT_SOAK_FACTS_MAX];
	int n = vt_soak_facts(r, f, VT_SOAK_FACTS_MAX), i;
	char a[64], b[160], t1[64];

	fputs("<h2>evidence: ", out);
	vt_html_text(out, (unsigned)v->metric < VT_M_COUNT ? vt_metrics[v->metric].label : "?");
	fputs("</h2>\n<table>\n<tr><th>quarter</th><th>time since the soak began</th><th class=\"n\">samples</th>"
	      "<th class=\"n\">floor</th><th class=\"n\">median</th><th class=\"n\">peak</th></tr>\n", out);
	for (i = 0; i < 4; i++) {
		const struct vt_quarter *q = &v->q[i];

		fprintf(out, "<tr><td>q%d</td>", i + 1);
		vt_fmt_span(q->t0, a, sizeof(a));
		snprintf(b, sizeof(b), "%s – %s", a, vt_fmt_span(q->t1, t1, sizeof(t1)));
		td(out, NULL, b);
		snprintf(a, sizeof(a), "%zu", q->samples);
		td(out, "n", a);
		td(out, "n", vt_fmt_metric(v->metric, q->floor, a, sizeof(a)));
		td(out, "n", vt_fmt_metric(v->metric, q->median, a, sizeof(a)));
		td(out, "n", vt_fmt_metric(v->metric, q->peak, a, sizeof(a)));
		fputs("</tr>\n", out);
	}
	fputs("</table>\n<ul class=\"facts\">\n", out);
	for (i = 0; i < n; i++) {
		fputs("<li>", out);
		if (f[i].label[0] && strcmp(f[i].label, "drift")) {
			fputs("<b>", out);
			vt_html_text(out, f[i].label);
			fputs("</b> ", out);
		}
		vt_html_text(out, f[i].text);
		fputs("</li>\n", out);
	}
	fputs("</ul>\n", out);
}

static int print_threads(FILE *out, const struct vt_analyze_report *r)
{
	const struct vt_thread_run **list;
	struct vt_soak_short_lived sl;
	size_t top = r->top_threads ? r->top_threads : 10, others, i;
	ssize_t n;
	char a[64], ev[VT_DIAG_EVIDENCE_MAX], names[256];
	bool short_row;
	int k;

	vt_soak_short_lived(r->series, vt_soak_threads_pid(r->series, r->verdict), &sl);
	short_row = vt_render_soak_short_row(&sl);
	n = vt_soak_threads_by_cpu(r->series, r->verdict, &sl, &list, &others);
	if (n < 0)
		return -1;
	if (n > 0 || short_row) {
		fprintf(out, "<h2>threads by CPU over the run</h2>\n<div class=\"wide\"><table class=\"rows\">\n<tr><th class=\"n\">tid</th>"
			"<th>name</th><th class=\"n\">cores</th>");
		for (k = 0; k < VT_TC_COUNT; k++)
			if (!(vt_thread_counters[k].flags & VT_TCF_OWN_COLUMN))
				fprintf(out, "<th class=\"n\">%s</th>", vt_thread_counters[k].label);
		fputs("<th class=\"n\">seen</th><th>states</th><th>wchan (most seen)</th>"
		      "<th>system call (most seen)</th></tr>\n", out);
		for (i = 0; i < (size_t)n && i < top; i++) {
			const struct vt_thread_run *th = list[i];
			double dt = th->t_last - th->t_first, c = vt_thread_run_cores(th);

			fputs("<tr>", out);
			snprintf(a, sizeof(a), "%d", (int)th->tid);
			td(out, "n", a);
			td(out, NULL, th->name);
			if (isfinite(c))
				snprintf(a, sizeof(a), "%.3f", c);
			else
				snprintf(a, sizeof(a), "n/a");
			td(out, "n", a);
			for (k = 0; k < VT_TC_COUNT; k++)
				if (!(vt_thread_counters[k].flags & VT_TCF_OWN_COLUMN))
					td(out, "n", vt_thread_counter_cell(k, vt_thread_counter_rate(k, th->delta[k], dt),
									    a, sizeof(a)));
			td(out, "n", vt_fmt_span(dt, a, sizeof(a)));
			td(out, NULL, th->doing.seen ? vt_thread_doing_states(&th->doing, a, sizeof(a)) : "n/a");
			td(out, NULL, th->doing.wchan_n ? th->doing.wchan : th->doing.seen ? "-" : "n/a");
			td(out, NULL, th->doing.syscall_n ? th->doing.syscall : th->doing.seen ? "-" : "n/a");
			fputs("</tr>\n", out);
		}
		if (short_row) {
			fputs("<tr>", out);
			td(out, "n", "+-");
			vt_render_soak_short_names(r->series, r->verdict, &sl, names, sizeof(names));
			snprintf(a, sizeof(a), "short-lived: ");
			fputs("<td class=\"names\" title=\"", out);
			vt_html_text(out, names);
			fputs("\">", out);
			vt_html_text(out, a);
			vt_html_text(out, names);
			fputs("</td>", out);
			snprintf(a, sizeof(a), "%.3f", isfinite(sl.cores) ? sl.cores : sl.recorded_cores);
			td(out, "n", a);
			for (i = 0; i < 7; i++)
				td(out, i < 4 ? "n" : NULL, "-");
			fputs("</tr>\n", out);
		}
		fputs("</table></div>\n", out);
		if (short_row)
			fprintf(out, "<p class=\"small\">+- short-lived: threads that came and went during the run; "
				"their CPU is %s.</p>\n", isfinite(sl.cores)
				? "the process's minus that of the threads listed (so it holds those that lived between "
				  "two samples)"
				: "what their records add up to (the process's CPU was not recorded)");
		if ((size_t)n > top)
			fprintf(out, "<p class=\"small\">%zu other threads not listed.</p>\n", (size_t)n - top);
		if (others)
			fprintf(out, "<p class=\"small\">%zu thread%s of earlier incarnations not listed.</p>\n", others,
				others == 1 ? "" : "s");
	}
	if (r->thread_diag && r->thread_diag->n) {
		fputs("<h3>what the threads did over the run</h3>\n<ul>\n", out);
		for (i = 0; i < r->thread_diag->n; i++) {
			fputs("<li><b>", out);
			vt_html_text(out, vt_diag_name(r->thread_diag->f[i].kind));
			fputs("</b>: ", out);
			vt_html_text(out, vt_render_diag_evidence(&r->thread_diag->f[i], ev, sizeof(ev)));
			fputs("</li>\n", out);
		}
		fputs("</ul>\n", out);
	}
	free(list);
	return 0;
}

static void print_events(FILE *out, const struct vt_series *s)
{
	char a[64];
	size_t i;

	if (!s->nevents)
		return;
	fputs("<h2>events</h2>\n<table>\n<tr><th class=\"n\">t</th><th>UTC</th><th>event</th>"
	      "<th class=\"n\">pid</th><th>detail</th></tr>\n", out);
	for (i = 0; i < s->nevents && i < EVENTS_SHOWN; i++) {
		const struct vt_event *e = &s->events[i];
		char t[40];

		fputs("<tr>", out);
		snprintf(t, sizeof(t), "t+%s", vt_fmt_span(e->t, a, sizeof(a)));
		td(out, "n", t);
		td(out, NULL, vt_fmt_utc(e->wall, false, a, sizeof(a)));
		td(out, NULL, vt_soak_event_name(e->kind));
		if (e->pid > 0)
			snprintf(a, sizeof(a), "%d", (int)e->pid);
		else
			a[0] = '\0';
		td(out, "n", a);
		td(out, NULL, e->detail);
		fputs("</tr>\n", out);
	}
	fputs("</table>\n", out);
	if (s->nevents > EVENTS_SHOWN)
		fprintf(out, "<p class=\"small\">%zu more events not listed.</p>\n", s->nevents - EVENTS_SHOWN);
}

int vt_render_analyze_html(FILE *out, const struct vt_analyze_report *r)
{
	static const enum vt_metric anon_swap[] = { VT_M_RSS_ANON, VT_M_VM_SWAP };
	static const enum vt_metric heap[] = { VT_M_HEAP_LIVE, VT_M_HEAP_FREE };
	static const enum vt_metric freemem[] = { VT_M_HEAP_FREE, VT_M_FREE_RESIDENT, VT_M_TRIMMABLE };
	static const enum vt_metric arenas[] = { VT_M_ARENAS, VT_M_REGIONS_64M };
	const struct vt_series *s = r->series;
	char title[640];
	int rc = 0;

	if (!s || !r->verdict)
		return -1;
	snprintf(title, sizeof(title), "vitals analyze: %s", s->info.target[0] ? s->info.target : "recording");
	vt_html_begin(out, title);
	print_head(out, r);
	print_verdict(out, r);
	print_evidence(out, r);
	print_limit(out, r->limit);
	fputs("<h2>charts</h2>\n", out);
	rc |= chart_metric(out, r);
	if (all_zero(s, VT_M_VM_SWAP))
		rc |= chart_metrics(out, s, "anonswap", "RssAnon — resident anonymous memory (VmSwap 0 throughout: "
				    "no swap)", VT_CHART_BYTES, anon_swap, 1);
	else
		rc |= chart_metrics(out, s, "anonswap", "RssAnon and VmSwap — resident and swapped anonymous memory",
				    VT_CHART_BYTES, anon_swap, 2);
	rc |= chart_metrics(out, s, "heap", "allocator — live and free-held", VT_CHART_BYTES, heap, 2);
	if (s->m[VT_M_FREE_RESIDENT])    /* else the heap chart has free-held already */
		rc |= chart_metrics(out, s, "freemem", "free memory — free-held (fordblks), free chunks on resident pages "
				    "(what costs RAM; with the tcache's, which fordblks counts in use) and the resident "
				    "pages a trim could give back", VT_CHART_BYTES,
				    freemem, 3);
	rc |= chart_metrics(out, s, "arenas", "arenas and 64 MiB regions", VT_CHART_COUNT, arenas, 2);
	rc |= chart_cpu(out, s);
	fputs("<p class=\"small\">Lines are each point's mean; the light band around a line is the range of "
	      "the samples a point summarises. Breaks are restarts or gaps in the recording.</p>\n", out);
	if (s->n)
		rc |= vt_render_prof_trend_html(out, r->profiles, s->t0[0], s->t1[s->n - 1]);
	if (s->n)
		rc |= vt_render_alloc_trend_html(out, r->allocs, s->t0[0], s->t1[s->n - 1]);
	rc |= print_threads(out, r);
	print_events(out, s);
	vt_html_end(out);
	return rc || ferror(out) ? -1 : 0;
}

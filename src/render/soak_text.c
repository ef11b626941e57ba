/*
 * soak_text.c — `vitals analyze` as text: what was recorded, the verdict in
 * one line and why, then the evidence it rests on (quarters and floor drift,
 * noise, slope, settled window, swap motion, CPU), sparklines of the span,
 * the threads by CPU and the events.  Also the words and units every soak
 * view shares (soak.h): the verdict line and an arm's line (their figures: soak_fmt.c).
 */
#include "render/soak.h"
#include "render/soak_fmt.h"
#include "render/threads.h"
#include "render/svg_chart.h"
#include "render/table.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SPARK_WIDTH 60
#define EVENTS_SHOWN 10

/* ---- shared words ------------------------------------------------------- */

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
		else if (v->settle_s < 1)
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

		if (isfinite(v->slope) && v->slope > 0)
			snprintf(tail, sizeof(tail), " (floor still rising %s %s)",
				 vt_fmt_per_h(v->metric, v->slope, b, sizeof(b)), vt_per_h_unit(v->metric));
		if (isfinite(v->need_more_s) && v->need_more_s > 0)
			snprintf(buf, cap, "%s — soak at least %s%s", name,
				 vt_fmt_more(v->need_more_s, a, sizeof(a)), tail);
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
		if (isfinite(v->need_more_s) && v->need_more_s > 0)
			snprintf(buf, cap, "%s — %s; soak at least %s", name, c,
				 vt_fmt_more(v->need_more_s, a, sizeof(a)));
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
	char span[32], who[640];

	if (env[0] && (!a->name || strcmp(env, a->name)))
		snprintf(who, sizeof(who), "%s (%s)", a->name ? a->name : "?", env);
	else
		snprintf(who, sizeof(who), "%s", a->name ? a->name : "?");
	vt_fmt_span(a->window_t1 - a->window_t0, span, sizeof(span));
	if (a->window_settled)
		snprintf(buf, cap, "%s: %s, settled window %s, %zu samples", who, vname ? vname : "unknown",
			 span, a->window_samples);
	else
		snprintf(buf, cap, "%s: %s, never settled: last half used (%s, %zu samples)", who,
			 vname ? vname : "unknown", span, a->window_samples);
	return buf;
}

/* ---- the text view ------------------------------------------------------ */

/* Time offsets in one unit for a whole table: "0–51 min". */
struct tunit {
	double div;
	const char *name;
	int prec;
};

static struct tunit pick_tunit(double span)
{
	if (span < 180)
		return (struct tunit){ 1, "s", 0 };
	if (span < 5 * 3600)
		return (struct tunit){ 60, "min", span < 20 * 60 ? 1 : 0 };
	if (span < 72 * 3600)
		return (struct tunit){ 3600, "h", 1 };
	return (struct tunit){ 86400, "d", 1 };
}

static const char *fmt_trange(struct tunit u, double t0, double t1, char *buf, size_t cap)
{
	if (!isfinite(t0) || !isfinite(t1))
		snprintf(buf, cap, "n/a");
	else
		snprintf(buf, cap, "%.*f–%.*f %s", u.prec, t0 / u.div, u.prec, t1 / u.div, u.name);
	return buf;
}

/*
 * Words wrapped at width columns, each line indented; the first line starts
 * at column `at` (something is already printed before it) or 0.
 */
static void print_wrapped(FILE *out, const char *text, int indent, int width, int at)
{
	const char *p = text;
	int col = at;
	bool line_empty = true;        /* nothing of text on this line yet */

	while (*p) {
		const char *w = p, *q;
		int len = 0;

		while (*w == ' ')
			w++;
		if (!*w)
			break;
		for (q = w; *q && *q != ' '; q++)
			if (((unsigned char)*q & 0xc0) != 0x80)
				len++;
		if (!line_empty && col + 1 + len > width) {
			fputc('\n', out);
			col = 0;
			line_empty = true;
		}
		if (line_empty && col == 0)
			col = fprintf(out, "%*s", indent, "");
		else if (!line_empty)
			col += fprintf(out, " ");
		fwrite(w, 1, (size_t)(q - w), out);
		col += len;
		line_empty = false;
		p = q;
	}
	if (!line_empty || at)
		fputc('\n', out);
}

/* Target text on one line of valid UTF-8: control bytes and bytes that are not UTF-8 become '?'. */
static const char *printable(const char *text, char *buf, size_t cap)
{
	size_t i = 0, n;

	snprintf(buf, cap, "%s", text);
	while (buf[i]) {
		n = vt_utf8_len((const unsigned char *)buf + i);
		if (n == 0 || (unsigned char)buf[i] < 0x20 || buf[i] == 0x7f) {
			buf[i++] = '?';
			continue;
		}
		i += n;
	}
	return buf;
}

static double thread_span(const struct vt_thread_run *th)
{
	return th->t_last - th->t_first;
}

static void print_header(FILE *out, const struct vt_analyze_report *r)
{
	const struct vt_series *s = r->series;
	const struct vt_soak_verdict *v = r->verdict;
	const struct vt_recording_info *in = &s->info;
	char a[48], b[48], c[48], d[48], text[sizeof(in->target)], env[sizeof(in->env)];

	fprintf(out, "vitals analyze · %s\n", r->path ? printable(r->path, text, sizeof(text)) : "(recording)");
	fprintf(out, "  target     %s\n", in->target[0] ? printable(in->target, text, sizeof(text)) : "n/a");
	if (in->arm[0] || in->env[0])
		fprintf(out, "  arm        %s%s%s%s\n", printable(in->arm, text, sizeof(text)),
			in->arm[0] && in->env[0] ? " (" : "", printable(in->env, env, sizeof(env)),
			in->arm[0] && in->env[0] ? ")" : "");
	if (in->host[0] || in->ncpus > 0) {
		fprintf(out, "  host       %s", in->host[0] ? printable(in->host, text, sizeof(text)) : "n/a");
		if (in->ncpus > 0)
			fprintf(out, ", %d CPUs", in->ncpus);
		fputc('\n', out);
	}
	fprintf(out, "  recorded   from %s, every %s, %zu samples in %zu points",
		vt_fmt_utc(in->started_wall, false, a, sizeof(a)), vt_fmt_span(in->every_s, b, sizeof(b)),
		s->samples, s->n);
	if (in->vitals_version[0])
		fprintf(out, " (vitals %s)", in->vitals_version);
	fputc('\n', out);
	if (v->to > v->from && v->from < s->n)
		fprintf(out, "  analysed   %s + %s (t+%s → t+%s), %zu samples, pid %d\n",
			vt_fmt_utc(s->wall[v->from], false, a, sizeof(a)),
			vt_fmt_span(v->t1 - v->t0, b, sizeof(b)), vt_fmt_span(v->t0, c, sizeof(c)),
			vt_fmt_span(v->t1, d, sizeof(d)), v->samples, (int)s->pid[v->from]);
	else
		fprintf(out, "  analysed   nothing: no samples\n");
	fprintf(out, "  restarts   %d before the span · gaps %d inside it\n", v->restarts, v->gaps);
	if (v->running)
		fprintf(out, "  status     still being written (no stop event): the verdict covers what is recorded so far\n");
	else
		fprintf(out, "  status     finished\n");
}

static void print_quarters(FILE *out, const struct vt_soak_verdict *v, struct tunit u)
{
	struct vt_table t;
	char a[48], b[48], c[48], d[48];
	int i;

	vt_table_init(&t, 6);
	for (i = 2; i < 6; i++)
		vt_table_align(&t, i, VT_RIGHT);
	vt_table_cell(&t, "QUARTER");
	vt_table_cell(&t, "TIME");
	vt_table_cell(&t, "SAMPLES");
	vt_table_cell(&t, "FLOOR");
	vt_table_cell(&t, "MEDIAN");
	vt_table_cell(&t, "PEAK");
	for (i = 0; i < 4; i++) {
		const struct vt_quarter *q = &v->q[i];

		vt_table_cell(&t, "q%d", i + 1);
		vt_table_cell(&t, "%s", fmt_trange(u, q->t0, q->t1, a, sizeof(a)));
		vt_table_cell(&t, "%zu", q->samples);
		vt_table_cell(&t, "%s", vt_fmt_metric(v->metric, q->floor, b, sizeof(b)));
		vt_table_cell(&t, "%s", vt_fmt_metric(v->metric, q->median, c, sizeof(c)));
		vt_table_cell(&t, "%s", vt_fmt_metric(v->metric, q->peak, d, sizeof(d)));
	}
	vt_table_print(&t, out, 2, true);
	vt_table_release(&t);
}

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
		n = fact(f, n, max, "", "RssAnon oscillates %s %s",
			 vt_fmt_metric_pair(VT_M_RSS_ANON, m->anon_range_lo, m->anon_range_hi, "–", e, sizeof(e)),
			 v->settled ? "in the settled window" : "over the span");
	return n;
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
	if (v->settled) {
		double from = v->settled_from < s->n ? s->t[v->settled_from] : v->t0 + v->settle_s;

		n = fact(f, n, max, "settled", "from t+%s (after %s): %s, median %s",
			 vt_fmt_span(from, a, sizeof(a)), vt_fmt_span(v->settle_s, b, sizeof(b)),
			 vt_fmt_metric_pair(m, v->settled_lo, v->settled_hi, "–", c, sizeof(c)),
			 vt_fmt_metric(m, v->settled_median, d, sizeof(d)));
	} else {
		n = fact(f, n, max, "settled", "no: no window where the floor stops moving");
	}
	if (isfinite(v->step_t))
		n = fact(f, n, max, "step", "%s at t+%s (%s)", vt_fmt_metric_delta(m, v->step_bytes, v->step_before, a, sizeof(a)),
			 vt_fmt_span(v->step_t, b, sizeof(b)),
			 vt_fmt_metric_pair(m, v->step_before, v->step_after, " → ", c, sizeof(c)));
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
	if (isfinite(v->need_more_s) && v->need_more_s > 0)
		n = fact(f, n, max, "go on", "soak at least %s", vt_fmt_more(v->need_more_s, a, sizeof(a)));
	return n;
}

static void print_evidence(FILE *out, const struct vt_analyze_report *r, struct tunit u)
{
	const struct vt_soak_verdict *v = r->verdict;
	struct vt_soak_fact f[VT_SOAK_FACTS_MAX];
	int n = vt_soak_facts(r, f, VT_SOAK_FACTS_MAX), i;

	fprintf(out, "\nevidence (%s)\n", (unsigned)v->metric < VT_M_COUNT ? vt_metrics[v->metric].label : "?");
	print_quarters(out, v, u);
	/* the drift sits under the quarters; the rest follows as label and text */
	for (i = 0; i < n; i++) {
		if (!strcmp(f[i].label, "drift")) {
			fprintf(out, "  %s\n\n", f[i].text);
			continue;
		}
		fprintf(out, "  %-9s  ", f[i].label);
		print_wrapped(out, f[i].text, 13, 100, 13);
	}
}

/* The means of metric m over points [from, to), NAN where unknown.  NULL: out of memory. */
static double *means(const struct vt_series *s, enum vt_metric m, size_t from, size_t to)
{
	double *y = calloc(to > from ? to - from : 1, sizeof(*y));
	size_t i;

	if (!y)
		return NULL;
	for (i = from; i < to; i++)
		y[i - from] = s->m[m][i].mean;
	return y;
}

static int add_spark(struct vt_table *t, const struct vt_series *s, enum vt_metric m, size_t from,
		     size_t to, bool utf8)
{
	char line[SPARK_WIDTH * 3 + 1], lo_s[32], hi_s[32];
	double lo = INFINITY, hi = -INFINITY;
	double *y;
	size_t i;

	if (!s->m[m])
		return 0;
	y = means(s, m, from, to);
	if (!y)
		return -1;
	for (i = 0; i < to - from; i++) {
		if (!isfinite(y[i]))
			continue;
		lo = y[i] < lo ? y[i] : lo;
		hi = y[i] > hi ? y[i] : hi;
	}
	vt_sparkline(line, sizeof(line), y, to - from, SPARK_WIDTH, utf8);
	free(y);
	vt_table_cell(t, "%s", vt_metrics[m].label);
	vt_table_cell(t, "%s", line);
	vt_table_cell(t, "min %s", isfinite(lo) ? vt_fmt_metric(m, lo, lo_s, sizeof(lo_s)) : "n/a");
	vt_table_cell(t, "max %s", isfinite(hi) ? vt_fmt_metric(m, hi, hi_s, sizeof(hi_s)) : "n/a");
	return 0;
}

static int print_sparks(FILE *out, const struct vt_analyze_report *r)
{
	const struct vt_series *s = r->series;
	const struct vt_soak_verdict *v = r->verdict;
	size_t from = v->from, to = v->to < s->n ? v->to : s->n;
	struct vt_table t;
	char a[32], b[32];
	int rc = 0;

	if (to <= from)
		return 0;
	fprintf(out, "\nover the span (t+%s → t+%s, %zu points)\n", vt_fmt_span(v->t0, a, sizeof(a)),
		vt_fmt_span(v->t1, b, sizeof(b)), to - from);
	vt_table_init(&t, 4);
	vt_table_align(&t, 3, VT_RIGHT);
	vt_table_align(&t, 2, VT_RIGHT);
	if ((unsigned)v->metric < VT_M_COUNT)
		rc |= add_spark(&t, s, v->metric, from, to, r->utf8);
	if (v->metric != VT_M_RSS_ANON)
		rc |= add_spark(&t, s, VT_M_RSS_ANON, from, to, r->utf8);
	if (v->metric != VT_M_VM_SWAP)
		rc |= add_spark(&t, s, VT_M_VM_SWAP, from, to, r->utf8);
	if (t.oom)
		rc = -1;
	vt_table_print(&t, out, 2, false);
	vt_table_release(&t);
	return rc;
}

double vt_thread_run_cores(const struct vt_thread_run *th)
{
	double dt = thread_span(th);

	return dt > 0 ? (double)th->cpu_ns / 1e9 / dt : NAN;
}

static int by_cores_desc(const void *pa, const void *pb)
{
	const struct vt_thread_run *a = *(const struct vt_thread_run *const *)pa;
	const struct vt_thread_run *b = *(const struct vt_thread_run *const *)pb;
	double ca = vt_thread_run_cores(a), cb = vt_thread_run_cores(b);

	if (!isfinite(ca))
		ca = -1;
	if (!isfinite(cb))
		cb = -1;
	if (ca != cb)
		return ca < cb ? 1 : -1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

ssize_t vt_soak_threads_by_cpu(const struct vt_series *s, const struct vt_soak_verdict *v,
			      const struct vt_thread_run ***out, size_t *others)
{
	const struct vt_thread_run **list;
	pid_t pid = v->from < s->n && v->to > v->from ? s->pid[v->from] : 0;
	size_t i, n = 0, match = 0;

	*out = NULL;
	*others = 0;
	for (i = 0; i < s->nthreads; i++)
		match += s->threads[i].pid == pid;
	list = malloc(sizeof(*list) * (s->nthreads ? s->nthreads : 1));
	if (!list)
		return -1;
	for (i = 0; i < s->nthreads; i++) {
		if (match && s->threads[i].pid != pid) {
			(*others)++;
			continue;
		}
		list[n++] = &s->threads[i];
	}
	qsort(list, n, sizeof(*list), by_cores_desc);
	*out = list;
	return (ssize_t)n;
}

const char *vt_thread_doing_states(const struct vt_thread_doing *d, char *buf, size_t cap)
{
	const unsigned n[4] = { d->n_r, d->n_s, d->n_d, d->seen - d->n_r - d->n_s - d->n_d };
	static const char *const labels[4] = { "R", "S", "D", "other" };

	return vt_render_state_shares(n, labels, 4, d->seen, buf, cap);
}

static void print_thread_diag(FILE *out, const struct vt_diagnosis *d)
{
	if (!d)
		return;
	fprintf(out, "\nwhat the threads did over the run (the rules of vitals threads):\n");
	vt_render_diagnosis_text(out, d);
}

static int print_threads(FILE *out, const struct vt_analyze_report *r)
{
	const struct vt_thread_run **list;
	size_t top = r->top_threads ? r->top_threads : 10, others, i;
	ssize_t n = vt_soak_threads_by_cpu(r->series, r->verdict, &list, &others);
	struct vt_table t;
	double rest = 0;
	char a[32], nm[sizeof(list[0]->name)], st[64], wb[96];
	bool doing = false;
	unsigned seen_max = 0;

	if (n < 0)
		return -1;
	if (n == 0) {
		free(list);
		return 0;
	}
	for (i = 0; i < (size_t)n; i++) {
		doing |= list[i]->doing.seen > 0;
		if (list[i]->doing.seen > seen_max)
			seen_max = list[i]->doing.seen;
	}
	fprintf(out, "\nthreads by CPU over the run (%zu of %zd shown)\n", (size_t)n < top ? (size_t)n : top, n);
	vt_table_init(&t, doing ? 10 : 7);
	for (i = 2; i < 7; i++)
		vt_table_align(&t, (int)i, VT_RIGHT);
	vt_table_cell(&t, "TID");
	vt_table_cell(&t, "NAME");
	vt_table_cell(&t, "CORES");
	vt_table_cell(&t, "RUNQ");
	vt_table_cell(&t, "VOL/s");
	vt_table_cell(&t, "NONVOL/s");
	vt_table_cell(&t, "SEEN");
	if (doing) {
		vt_table_cell(&t, "STATES");
		vt_table_cell(&t, "WCHAN");
		vt_table_cell(&t, "SYSCALL");
	}
	for (i = 0; i < (size_t)n; i++) {
		const struct vt_thread_run *th = list[i];
		double dt = thread_span(th), c = vt_thread_run_cores(th);

		if (i >= top) {
			if (isfinite(c))
				rest += c;
			continue;
		}
		vt_table_cell(&t, "%d", (int)th->tid);
		vt_table_cell(&t, "%s", th->name[0] ? printable(th->name, nm, sizeof(nm)) : "?");
		if (isfinite(c))
			vt_table_cell(&t, "%.3f", c);
		else
			vt_table_cell(&t, "n/a");
		if (th->wait_known && dt > 0)
			vt_table_cell(&t, "%.1f%%", 100.0 * (double)th->wait_ns / 1e9 / dt);
		else
			vt_table_cell(&t, "n/a");
		if (th->csw_known && dt > 0) {
			vt_table_cell(&t, "%.1f", (double)th->vcsw / dt);
			vt_table_cell(&t, "%.1f", (double)th->nvcsw / dt);
		} else {
			vt_table_cell(&t, "n/a");
			vt_table_cell(&t, "n/a");
		}
		vt_table_cell(&t, "%s", vt_fmt_span(dt, a, sizeof(a)));
		if (doing) {
			const struct vt_thread_doing *d = &th->doing;

			vt_table_cell(&t, "%s", d->seen ? vt_thread_doing_states(d, st, sizeof(st)) : "n/a");
			vt_table_cell(&t, "%s", vt_render_seen(d->seen > 0, NULL, d->wchan, d->wchan_n, d->seen, wb, sizeof(wb)));
			vt_table_cell(&t, "%s", vt_render_seen(d->seen > 0, NULL, d->syscall, d->syscall_n, d->seen,
						    wb, sizeof(wb)));
		}
	}
	vt_table_print(&t, out, 2, true);
	vt_table_release(&t);
	if ((size_t)n > top)
		fprintf(out, "  %zu other threads: %.3f cores together\n", (size_t)n - top, rest);
	if (doing)
		fprintf(out, "  STATES, WCHAN, SYSCALL: sampled at the per-thread cadence, up to %u times a thread\n",
			seen_max);
	if (others)
		fprintf(out, "  %zu threads of earlier incarnations not listed\n", others);
	fprintf(out, "  RUNQ: share of the time runnable but waiting for a CPU; switches per second kept apart\n");
	free(list);
	return 0;
}

static void print_events(FILE *out, const struct vt_series *s)
{
	size_t i, counts[VT_EV_NOTE + 1] = { 0 };
	struct vt_table t;
	char a[32], b[256];

	if (!s->nevents)
		return;
	for (i = 0; i < s->nevents; i++)
		if ((unsigned)s->events[i].kind <= VT_EV_NOTE)
			counts[s->events[i].kind]++;
	fprintf(out, "\nevents (%zu: %zu restart%s, %zu gap%s, %zu error%s)\n", s->nevents,
		counts[VT_EV_RESTART], counts[VT_EV_RESTART] == 1 ? "" : "s", counts[VT_EV_GAP],
		counts[VT_EV_GAP] == 1 ? "" : "s", counts[VT_EV_ERROR], counts[VT_EV_ERROR] == 1 ? "" : "s");
	vt_table_init(&t, 5);
	vt_table_align(&t, 0, VT_RIGHT);
	vt_table_align(&t, 3, VT_RIGHT);
	for (i = 0; i < s->nevents && i < EVENTS_SHOWN; i++) {
		const struct vt_event *e = &s->events[i];

		vt_table_cell(&t, "t+%s", vt_fmt_span(e->t, a, sizeof(a)));
		vt_table_cell(&t, "%s", vt_fmt_utc(e->wall, false, a, sizeof(a)));
		vt_table_cell(&t, "%s", vt_soak_event_name(e->kind));
		if (e->pid > 0)
			vt_table_cell(&t, "pid %d", (int)e->pid);
		else
			vt_table_cell(&t, "%s", "");
		vt_table_cell(&t, "%s", printable(e->detail, b, sizeof(b)));
	}
	vt_table_print(&t, out, 2, false);
	vt_table_release(&t);
	if (s->nevents > EVENTS_SHOWN)
		fprintf(out, "  … %zu more\n", s->nevents - EVENTS_SHOWN);
}

int vt_render_analyze_text(FILE *out, const struct vt_analyze_report *r)
{
	const struct vt_soak_verdict *v = r->verdict;
	char line[640], why[VT_SOAK_WHY_MAX];
	int rc = 0;
	struct tunit u;

	if (!r->series || !v)
		return -1;
	u = pick_tunit(v->t1);
	print_header(out, r);
	fprintf(out, "\nverdict: %s\n", vt_soak_headline(v, line, sizeof(line)));
	if (vt_soak_why(v, why, sizeof(why))[0])
		print_wrapped(out, why, 2, 100, 0);
	print_evidence(out, r, u);
	rc |= print_sparks(out, r);
	rc |= print_threads(out, r);
	print_thread_diag(out, r->thread_diag);
	print_events(out, r->series);
	return rc || ferror(out) ? -1 : 0;
}

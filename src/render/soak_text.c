/*
 * soak_text.c — `vitals analyze` as text: what was recorded, the verdict in
 * one line and why, then the evidence it rests on (quarters and floor drift,
 * noise, slope, settled window, swap motion, CPU), sparklines of the span,
 * the threads by CPU and the events.  The words it shares with the other
 * views are in soak_words.c and soak_facts.c.
 */
#include "render/soak.h"
#include "render/soak_fmt.h"

#include "analyze/thread_view.h"
#include "render/locks.h"
#include "render/threads.h"
#include "render/alloc_trend.h"
#include "render/profile_trend.h"
#include "render/svg_chart.h"
#include "render/table.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SPARK_WIDTH 60
#define EVENTS_SHOWN 10

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


static void print_header(FILE *out, const struct vt_analyze_report *r)
{
	const struct vt_series *s = r->series;
	const struct vt_soak_verdict *v = r->verdict;
	const struct vt_recording_info *in = &s->info;
	char a[48], b[48], c[48], d[48], text[sizeof(in->target)], env[sizeof(in->env)];

	fprintf(out, "vitals analyze · %s\n", r->path ? vt_text_printable(r->path, text, sizeof(text)) : "(recording)");
	fprintf(out, "  target     %s\n", in->target[0] ? vt_text_printable(in->target, text, sizeof(text)) : "n/a");
	if (in->redacted == VT_REDACTED_SECRETS) {
		char names[256];
		size_t n = vt_recording_redacted_names(in, names, sizeof(names));

		fprintf(out, "  redacted   %zu value%s that look%s like secrets: %s\n", n, n == 1 ? "" : "s",
			n == 1 ? "s" : "", vt_text_printable(names, text, sizeof(text)));
	}
	else if (in->redacted == VT_REDACTED_ARGS)
		fprintf(out, "  redacted   the command's arguments were not recorded (--redact-args)\n");
	if (in->wal_unread)
		fprintf(out, "  note       read without its -wal (no -shm can be made beside it): the latest samples "
			"may be missing\n");
	if (in->arm[0] || in->env[0])
		fprintf(out, "  arm        %s%s%s%s\n", vt_text_printable(in->arm, text, sizeof(text)),
			in->arm[0] && in->env[0] ? " (" : "", vt_text_printable(in->env, env, sizeof(env)),
			in->arm[0] && in->env[0] ? ")" : "");
	if (in->host[0] || in->ncpus > 0) {
		fprintf(out, "  host       %s", in->host[0] ? vt_text_printable(in->host, text, sizeof(text)) : "n/a");
		if (in->ncpus > 0)
			fprintf(out, ", %d CPUs", in->ncpus);
		fputc('\n', out);
	}
	fprintf(out, "  recorded   from %s, every %s, %s in %zu point%s",
		vt_fmt_utc(in->started_wall, false, a, sizeof(a)), vt_fmt_span(in->every_s, b, sizeof(b)),
		vt_fmt_count_of(s->samples, "sample", "samples", c, sizeof(c)), s->n, s->n == 1 ? "" : "s");
	if (in->vitals_version[0])
		fprintf(out, " (vitals %s)", in->vitals_version);
	fputc('\n', out);
	if (in->rollups > 0)
		fprintf(out, "  read       from %s (points of a minute or more)\n",
			vt_fmt_count_of(in->rollups, "per-minute rollup", "per-minute rollups", c, sizeof(c)));
	if (in->rollups_damaged)
		fprintf(out, "  note       its rollups cannot be what vitals wrote: read from the samples instead\n");
	if (v->to > v->from && v->from < s->n && s->pid[v->from] > 0)
		fprintf(out, "  analysed   %s + %s (t+%s → t+%s), %zu sample%s, pid %d\n",
			vt_fmt_utc(s->wall[v->from], false, a, sizeof(a)),
			vt_fmt_span(v->t1 - v->t0, b, sizeof(b)), vt_fmt_span(v->t0, c, sizeof(c)),
			vt_fmt_span(v->t1, d, sizeof(d)), v->samples, v->samples == 1 ? "" : "s",
			(int)s->pid[v->from]);
	else if (v->to > v->from && v->from < s->n)   /* not a process's (a Prometheus series) */
		fprintf(out, "  analysed   %s + %s (t+%s → t+%s), %zu sample%s\n",
			vt_fmt_utc(s->wall[v->from], false, a, sizeof(a)),
			vt_fmt_span(v->t1 - v->t0, b, sizeof(b)), vt_fmt_span(v->t0, c, sizeof(c)),
			vt_fmt_span(v->t1, d, sizeof(d)), v->samples, v->samples == 1 ? "" : "s");
	else
		fprintf(out, "  analysed   nothing: no samples\n");
	fprintf(out, "  restarts   %d before the span · gaps %d inside it\n", v->restarts, v->gaps);
	if (v->running)
		fprintf(out, "  status     still being written (no stop event): the verdict covers what is recorded so far\n");
	else if (v->died)
		fprintf(out, "  status     ended without a stop event (the soak died: killed, or its disk filled); "
			"the verdict covers what it recorded\n");
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

static void print_evidence(FILE *out, const struct vt_analyze_report *r, struct tunit u)
{
	const struct vt_soak_verdict *v = r->verdict;
	struct vt_soak_fact f[VT_SOAK_FACTS_MAX];
	int n = vt_soak_facts(r, f, VT_SOAK_FACTS_MAX), i;

	fprintf(out, "\nevidence (%s)\n", r->metric_label ? r->metric_label
				     : (unsigned)v->metric < VT_M_COUNT ? vt_metrics[v->metric].label : "?");
	print_quarters(out, v, u);
	/* the drift sits under the quarters; the rest follows as label and text */
	for (i = 0; i < n; i++) {
		if (!strcmp(f[i].label, "drift")) {
			fprintf(out, "  %s\n\n", f[i].text);
			continue;
		}
		fprintf(out, "  %-9s  ", f[i].label);
		vt_print_wrapped(out, f[i].text, 13, 100, 13);
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

static int add_spark(struct vt_table *t, const struct vt_series *s, enum vt_metric m, const char *label,
		     size_t from, size_t to, bool utf8)
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
	vt_fmt_metric(m, lo, lo_s, sizeof(lo_s));
	vt_fmt_metric(m, hi, hi_s, sizeof(hi_s));
	/* a change the figures beside it cannot show is not drawn either */
	vt_sparkline(line, sizeof(line), y, to - from, SPARK_WIDTH, utf8, strcmp(lo_s, hi_s) ? 0 : INFINITY);
	free(y);
	vt_table_cell(t, "%s", label ? label : vt_metrics[m].label);
	vt_table_cell(t, "%s", line);
	vt_table_cell(t, "min %s", lo_s);
	vt_table_cell(t, "max %s", hi_s);
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
		rc |= add_spark(&t, s, v->metric, r->metric_label, from, to, r->utf8);
	if (v->metric != VT_M_RSS_ANON)
		rc |= add_spark(&t, s, VT_M_RSS_ANON, NULL, from, to, r->utf8);
	if (v->metric != VT_M_VM_SWAP)
		rc |= add_spark(&t, s, VT_M_VM_SWAP, NULL, from, to, r->utf8);
	/* recorded only for a process that listens */
	rc |= add_spark(&t, s, VT_M_ACCEPT_QUEUE, NULL, from, to, r->utf8);
	if (t.oom)
		rc = -1;
	vt_table_print(&t, out, 2, false);
	vt_table_release(&t);
	return rc;
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
	struct vt_soak_short_lived sl;
	size_t top = r->top_threads ? r->top_threads : 10, others, i;
	ssize_t n;
	struct vt_table t;
	double rest = 0;
	char a[32], nm[sizeof(list[0]->name)], st[64], wb[96], names[256];
	bool doing = false, short_row;
	unsigned seen_max = 0;
	int k;

	vt_soak_short_lived(r->series, vt_soak_threads_pid(r->series, r->verdict), &sl);
	short_row = vt_render_soak_short_row(&sl);
	n = vt_soak_threads_by_cpu(r->series, r->verdict, &sl, &list, &others);
	if (n < 0)
		return -1;
	if (n == 0 && !short_row) {
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
	for (k = 0; k < VT_TC_COUNT; k++)
		if (!(vt_thread_counters[k].flags & VT_TCF_OWN_COLUMN))
			vt_table_cell(&t, "%s", vt_thread_counters[k].head);
	vt_table_cell(&t, "SEEN");
	if (doing) {
		vt_table_cell(&t, "STATES");
		vt_table_cell(&t, "WCHAN");
		vt_table_cell(&t, "SYSCALL");
	}
	for (i = 0; i < (size_t)n; i++) {
		const struct vt_thread_run *th = list[i];
		double dt = th->t_last - th->t_first, c = vt_thread_run_cores(th);

		if (i >= top) {
			if (isfinite(c))
				rest += c;
			continue;
		}
		vt_table_cell(&t, "%d", (int)th->tid);
		vt_table_cell(&t, "%s", th->name[0] ? vt_text_printable(th->name, nm, sizeof(nm)) : "?");
		if (isfinite(c))
			vt_table_cell(&t, "%.3f", c);
		else
			vt_table_cell(&t, "n/a");
		for (k = 0; k < VT_TC_COUNT; k++)
			if (!(vt_thread_counters[k].flags & VT_TCF_OWN_COLUMN))
				vt_table_cell(&t, "%s", vt_thread_counter_cell(k, vt_thread_counter_rate(k,
						th->delta[k], dt), a, sizeof(a)));
		vt_table_cell(&t, "%s", vt_fmt_span(dt, a, sizeof(a)));
		if (doing) {
			const struct vt_thread_doing *d = &th->doing;

			vt_table_cell(&t, "%s", d->seen ? vt_thread_doing_states(d, st, sizeof(st)) : "n/a");
			vt_table_cell(&t, "%s", vt_render_seen(d->seen > 0, NULL, d->wchan, d->wchan_n, d->seen, wb, sizeof(wb)));
			vt_table_cell(&t, "%s", vt_render_seen(d->seen > 0, NULL, d->syscall, d->syscall_n, d->seen,
						    wb, sizeof(wb)));
		}
	}
	if (short_row) {
		vt_table_cell(&t, "+-");
		vt_table_cell(&t, "short-lived");
		vt_table_cell(&t, "%.3f", isfinite(sl.cores) ? sl.cores : sl.recorded_cores);
		for (i = 3; i < (doing ? 10u : 7u); i++)
			vt_table_cell(&t, "-");
	}
	vt_table_print(&t, out, 2, true);
	vt_table_release(&t);
	if ((size_t)n > top)
		fprintf(out, "  %zu other threads: %.3f cores together\n", (size_t)n - top, rest);
	if (short_row)
		fprintf(out, "  +- short-lived: %s, threads that came and went during the run; their CPU is %s\n",
			vt_render_soak_short_names(r->series, r->verdict, &sl, names, sizeof(names)),
			isfinite(sl.cores) ? "the process's minus that of the threads listed (so it holds those "
					     "that lived between two samples)"
					   : "what their records add up to (the process's CPU was not recorded)");
	if (doing)
		fprintf(out, "  STATES, WCHAN, SYSCALL: sampled at the per-thread cadence, up to %u times a thread\n",
			seen_max);
	if (others)
		fprintf(out, "  %zu thread%s of earlier incarnations not listed\n", others, others == 1 ? "" : "s");
	fprintf(out, "  RUNQ: share of the time runnable but waiting for a CPU; switches per second kept apart\n");
	free(list);
	return 0;
}

/* The accept queue: how deep it got, and each stall with its ends. */
static void print_stalls(FILE *out, const struct vt_stalls *st)
{
	char a[32], b[32];
	struct vt_table t;
	size_t i;

	if (!st || !st->recorded || !st->listening)
		return;
	vt_fmt_span(st->threshold_s, a, sizeof(a));
	vt_fmt_span(st->resolution_s, b, sizeof(b));
	if (!st->n) {
		fprintf(out, "\naccept queue: no stall longer than %s (deepest queue %.0f; sampled every %s)\n", a,
			st->deepest, b);
		return;
	}
	fprintf(out, "\naccept queue: %zu stall%s longer than %s, connections waiting for accept() at every "
		"sample (deepest %.0f; each end known to %s)\n", st->n, st->n == 1 ? "" : "s", a, st->deepest, b);
	vt_table_init(&t, 4);
	vt_table_align(&t, 1, VT_RIGHT);
	vt_table_align(&t, 2, VT_RIGHT);
	vt_table_cell(&t, "FROM");
	vt_table_cell(&t, "LENGTH");
	vt_table_cell(&t, "DEPTH");
	vt_table_cell(&t, "%s", "");
	for (i = 0; i < st->n && i < EVENTS_SHOWN; i++) {
		const struct vt_stall *s = &st->v[i];

		vt_table_cell(&t, "t+%s", vt_fmt_span(s->t0, a, sizeof(a)));
		vt_table_cell(&t, "%s%s", s->ongoing ? "≥ " : "", vt_fmt_span(s->length_s, b, sizeof(b)));
		vt_table_cell(&t, "%.0f", s->depth);
		vt_table_cell(&t, "pid %d%s", (int)s->pid, s->ongoing ? ", not seen to empty" : "");
	}
	vt_table_print(&t, out, 2, true);
	vt_table_release(&t);
	if (st->n > EVENTS_SHOWN)
		fprintf(out, "  ... and %zu more (--json lists them all)\n", st->n - EVENTS_SHOWN);
	fprintf(out, "  nothing called accept() meanwhile: vitals threads PID during a stall shows what the\n"
		"  accepting thread waits in instead\n");
}

static void print_events(FILE *out, const struct vt_series *s)
{
	size_t i, counts[VT_EV_TRIM + 1] = { 0 };
	char trims[48] = "";
	struct vt_table t;
	char a[32], b[256];

	if (!s->nevents)
		return;
	for (i = 0; i < s->nevents; i++)
		if ((unsigned)s->events[i].kind <= VT_EV_TRIM)
			counts[s->events[i].kind]++;
	if (counts[VT_EV_TRIM])
		snprintf(trims, sizeof(trims), ", %zu trim%s", counts[VT_EV_TRIM], counts[VT_EV_TRIM] == 1 ? "" : "s");
	fprintf(out, "\nevents (%zu: %zu restart%s, %zu gap%s, %zu error%s%s)\n", s->nevents,
		counts[VT_EV_RESTART], counts[VT_EV_RESTART] == 1 ? "" : "s", counts[VT_EV_GAP],
		counts[VT_EV_GAP] == 1 ? "" : "s", counts[VT_EV_ERROR], counts[VT_EV_ERROR] == 1 ? "" : "s", trims);
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
		vt_table_cell(&t, "%s", vt_text_printable(e->detail, b, sizeof(b)));
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
	if (vt_soak_why_as(v, r->metric_label, why, sizeof(why))[0])
		vt_print_wrapped(out, why, 2, 100, 0);
	print_evidence(out, r, u);
	rc |= print_sparks(out, r);
	rc |= print_threads(out, r);
	print_thread_diag(out, r->thread_diag);
	vt_render_lock_history_text(out, r->locks, 5);
	print_stalls(out, r->stalls);
	if (r->limit)
		vt_render_mem_limit_text(out, r->limit);
	rc |= vt_render_prof_trend_text(out, r->profiles);
	rc |= vt_render_alloc_trend_text(out, r->allocs);
	print_events(out, r->series);
	return rc || ferror(out) ? -1 : 0;
}

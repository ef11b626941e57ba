/*
 * prom_cli.c — analyze and compare on series read from Prometheus: fetch
 * (serve/prom_client.h), judge each series (analyze/soak.h) or set arms
 * against each other (analyze/compare.h), and show them through the views
 * a recording uses, each named by its series.
 */
#include "cli/prom_cli.h"
#include "cli/cli.h"
#include "cli/soak_cli.h"
#include "analyze/compare.h"
#include "analyze/soak.h"
#include "render/view.h"
#include "serve/prom_client.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A plain-number series with fractions whose values stay under this is small against a count's 0.5 tolerance. */
#define SMALL_LEVEL 50.0
/* Series listed when a compare query returns more than one. */
#define LIST_MAX 10

bool vt_cli_parse_time(const char *text, double *unix_s)
{
	struct tm tm;
	const char *p;
	char *end;
	double frac = 0, x;
	time_t t;

	if (!text || !*text)
		return false;
	if (strcmp(text, "now") == 0) {
		*unix_s = (double)time(NULL);
		return true;
	}
	if (strspn(text, "0123456789.") == strlen(text)) {
		errno = 0;
		x = strtod(text, &end);
		if (errno || *end || !(x > 0) || !isfinite(x))
			return false;
		*unix_s = x;
		return true;
	}
	/* RFC 3339: 2026-12-04T10:00:00[.frac](Z|+hh:mm|-hh:mm) */
	memset(&tm, 0, sizeof(tm));
	p = strptime(text, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!p)
		p = strptime(text, "%Y-%m-%d %H:%M:%S", &tm);
	if (!p)
		return false;
	if (*p == '.') {
		const char *q = p + 1;

		while (isdigit((unsigned char)*q))
			q++;
		if (q == p + 1)
			return false;
		frac = strtod(p, NULL);
		p = q;
	}
	t = timegm(&tm);
	if (t == (time_t)-1)
		return false;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if ((*p == '+' || *p == '-') && isdigit((unsigned char)p[1]) && isdigit((unsigned char)p[2]) &&
		   p[3] == ':' && isdigit((unsigned char)p[4]) && isdigit((unsigned char)p[5])) {
		int off = ((p[1] - '0') * 10 + (p[2] - '0')) * 3600 + ((p[4] - '0') * 10 + (p[5] - '0')) * 60;

		t += *p == '+' ? -off : off;
		p += 6;
	} else {
		return false;
	}
	if (*p)
		return false;
	*unix_s = (double)t + frac;
	return *unix_s > 0;
}

/* The range, step and end p resolves to. */
struct window {
	double range_s, step_s, end;
};

static struct window resolve(const struct vt_cli_prom *p)
{
	struct window w;

	w.range_s = p->range_s > 0 ? p->range_s : VT_CLI_PROM_RANGE_S;
	w.step_s = p->step_s > 0 ? p->step_s : vt_prom_default_step(w.range_s);
	w.end = p->end > 0 ? p->end : (double)time(NULL);
	return w;
}

/*
 * Ask query over [end - range, end]; print the error and return its exit
 * status, or 0 with *a filled (at least one series).
 */
static int fetch(const struct vt_command *cmd, const struct vt_cli_prom *p, const char *query,
		 const struct window *w, double end, struct vt_prom_answer *a)
{
	struct vt_prom_range q = { p->url, query, end - w->range_s, end, w->step_s, p->timeout_s };
	struct vt_err err;
	char shown[512], t0[48], t1[48];

	if (vt_prom_query_range(&q, a, &err) != VT_OK)
		return vt_cli_error(&err);
	if (a->warnings[0])
		fprintf(stderr, "vitals %s: note: Prometheus warns: %s\n", cmd->name, a->warnings);
	if (a->n == 0) {
		vt_err_set(&err, VT_E_NOTFOUND, 0, "the query '%.200s' returned no series from %s to %s", query,
			   vt_fmt_utc(q.start, false, t0, sizeof(t0)), vt_fmt_utc(q.end, false, t1, sizeof(t1)));
		vt_err_hint(&err, "try it in Prometheus' own graph page (%.300s/graph): a name or label that "
			    "does not exist matches nothing", vt_prom_url_shown(p->url, shown, sizeof(shown)));
		vt_prom_answer_release(a);
		return vt_cli_error(&err);
	}
	return 0;
}

/* What a series is called in the views: its metric name, "value" when the query dropped it. */
static const char *series_name(const struct vt_prom_series *ps)
{
	return ps->name[0] ? ps->name : "value";
}

/* The notes a series needs before its verdict is read (stderr). */
static void series_notes(const struct vt_command *cmd, const struct vt_prom_series *ps)
{
	const struct vt_stat *st = ps->series.m[ps->metric];
	double top = 0;
	bool fractions = false;
	size_t i;

	if (ps->counter)
		fprintf(stderr, "vitals %s: note: '%s' is a counter: it counts up from the process's start, "
			"it is not a level of memory; rate(%s[5m]) shows its pace.  Judged as asked%s\n",
			cmd->name, ps->labels, ps->name,
			ps->resets ? ", its resets taken as restarts (the last incarnation is judged)" : "");
	if (ps->unknown)
		fprintf(stderr, "vitals %s: note: %zu value%s of '%s' %s NaN or infinite: taken as unknown\n",
			cmd->name, ps->unknown, ps->unknown == 1 ? "" : "s", ps->labels,
			ps->unknown == 1 ? "was" : "were");
	for (i = 0; st && i < ps->series.n; i++) {
		if (!isfinite(st[i].mean))
			continue;
		top = fmax(top, fabs(st[i].mean));
		fractions |= st[i].mean != floor(st[i].mean);
	}
	/* a rate or a ratio, not a count: its moves may all be under a count's tolerance */
	if (!ps->bytes && fractions && top < SMALL_LEVEL)
		fprintf(stderr, "vitals %s: note: '%s' is judged as a count: a change under 0.5 is within noise; "
			"scale it in the query (* 1000) when its values are this small\n", cmd->name, ps->labels);
}

/* The series' source, as struct vt_recording_info target says it. */
static void name_source(struct vt_prom_series *ps, const struct vt_cli_prom *p, const char *query)
{
	char shown[256];

	snprintf(ps->series.info.target, sizeof(ps->series.info.target), "prometheus %s, query %.200s",
		 vt_prom_url_shown(p->url, shown, sizeof(shown)), query);
}

int vt_cli_prom_analyze(const struct vt_command *cmd, const struct vt_cli_prom *p)
{
	struct window w = resolve(p);
	struct vt_prom_answer a;
	size_t i;
	int rc;

	if (p->nquery != 1)
		return vt_cli_usage_error(cmd->name, "give one --query with --prometheus");
	if (p->offset_s > 0)
		return vt_cli_usage_error(cmd->name, "--offset is for compare: analyze reads one range");
	if ((rc = fetch(cmd, p, p->query[0], &w, w.end, &a)))
		return rc;
	if (p->json)
		fputs("[\n", stdout);
	for (i = 0; i < a.n && rc == 0; i++) {
		struct vt_prom_series *ps = &a.series[i];
		struct vt_soak_opts so;
		struct vt_soak_verdict v;
		struct vt_analyze_report r = { 0 };

		name_source(ps, p, p->query[0]);
		series_notes(cmd, ps);
		vt_soak_opts_default(&so);
		so.metric = ps->metric;
		if (vt_soak_analyze(&ps->series, &so, &v) != 0) {
			rc = vt_cli_nomem(cmd->name);
			break;
		}
		r.path = ps->labels;
		r.series = &ps->series;
		r.verdict = &v;
		r.utf8 = vt_cli_utf8();
		r.metric_label = series_name(ps);
		if (p->json) {
			if (i)
				fputs(",\n", stdout);
			rc = vt_cli_stdout_done(cmd->name, vt_view("json")->analyze(stdout, &r));
		} else {
			if (i)
				fputc('\n', stdout);
			rc = vt_cli_stdout_done(cmd->name, vt_view("text")->analyze(stdout, &r));
		}
	}
	if (p->json && rc == 0)
		fputs("]\n", stdout);
	vt_prom_answer_release(&a);
	return rc ? rc : vt_cli_stdout_done(cmd->name, 0);
}

/* A query for compare returned more than one series: say which, and how to pick one. */
static int not_one(const struct vt_command *cmd, const char *query, const struct vt_prom_answer *a)
{
	size_t i;

	fprintf(stderr, "vitals %s: the query '%s' returned %zu series; compare takes one per arm:\n", cmd->name,
		query, a->n);
	for (i = 0; i < a->n && i < LIST_MAX; i++)
		fprintf(stderr, "    %s\n", a->series[i].labels);
	if (a->n > LIST_MAX)
		fprintf(stderr, "    ... and %zu more\n", a->n - LIST_MAX);
	fprintf(stderr, "  hint: pick one with its labels (name{instance=\"...\"}) or aggregate (max(...))\n");
	return vt_code_exit(VT_E_USAGE);
}

/* One arm: its query and the end of its range. */
struct arm_src {
	const char *query;
	double end;
};

/*
 * The arms' labels when --names gives none: with --offset "1.0 d earlier"
 * and "latest"; else each series' labels when they fit, else its query when
 * that fits, else "query N" (and "query N" for all when two come out alike).
 */
static void default_labels(const struct vt_cli_prom *p, const struct arm_src *src, struct vt_compare_set *set)
{
	char span[32];
	size_t i, j;
	bool alike = false;

	for (i = 0; i < set->n; i++) {
		const char *target = set->series[i].info.target;   /* the series' labels (prom_series.h) */

		if (p->offset_s > 0 && i == 0)
			snprintf(set->labels[i], sizeof(set->labels[i]), "%s earlier",
				 vt_fmt_span(p->offset_s, span, sizeof(span)));
		else if (p->offset_s > 0)
			snprintf(set->labels[i], sizeof(set->labels[i]), "latest");
		else if (strlen(target) < sizeof(set->labels[i]))
			memcpy(set->labels[i], target, strlen(target) + 1);
		else if (strlen(src[i].query) < sizeof(set->labels[i]))
			memcpy(set->labels[i], src[i].query, strlen(src[i].query) + 1);
		else
			snprintf(set->labels[i], sizeof(set->labels[i]), "query %zu", i + 1);
	}
	for (i = 0; i < set->n; i++)
		for (j = i + 1; j < set->n; j++)
			alike |= strcmp(set->labels[i], set->labels[j]) == 0;
	for (i = 0; alike && i < set->n; i++)
		snprintf(set->labels[i], sizeof(set->labels[i]), "query %zu", i + 1);
}

/* --names A,B,...: the first n names over the defaults. */
static void given_labels(const char *names, struct vt_compare_set *set)
{
	const char *p = names;
	size_t i;

	for (i = 0; p && *p && i < set->n; i++) {
		size_t len = strcspn(p, ",");

		if (len)
			snprintf(set->labels[i], sizeof(set->labels[i]), "%.*s", (int)len, p);
		p += len;
		if (*p == ',')
			p++;
	}
}

int vt_cli_prom_compare(const struct vt_command *cmd, const struct vt_cli_prom *p)
{
	struct window w = resolve(p);
	struct arm_src src[VT_CLI_PROM_MAX_QUERIES];
	struct vt_compare_set set;
	const struct vt_series *arms[VT_CLI_PROM_MAX_QUERIES];
	struct vt_soak_opts so;
	char title[640], shown[256], range[32], name[256] = "value";
	enum vt_metric metric = VT_M_COMMITTED;
	size_t i, n;
	int rc = 0;

	if (p->offset_s > 0 && p->nquery != 1)
		return vt_cli_usage_error(cmd->name, "--offset compares one --query with itself earlier: "
					  "give one --query");
	if (p->offset_s <= 0 && p->nquery < 2)
		return vt_cli_usage_error(cmd->name, "give two --query (each arm one series), or one --query "
					  "and --offset DURATION (the same series earlier)");
	n = p->offset_s > 0 ? 2 : p->nquery;
	for (i = 0; i < n; i++) {
		src[i].query = p->query[p->offset_s > 0 ? 0 : i];
		src[i].end = p->offset_s > 0 && i == 0 ? w.end - p->offset_s : w.end;
	}
	memset(&set, 0, sizeof(set));
	set.series = calloc(n, sizeof(*set.series));
	set.labels = calloc(n, sizeof(*set.labels));
	set.label_ptrs = calloc(n, sizeof(*set.label_ptrs));
	if (!set.series || !set.labels || !set.label_ptrs) {
		vt_compare_set_release(&set);
		return vt_cli_nomem(cmd->name);
	}
	for (i = 0; i < n; i++) {
		struct vt_prom_answer a;

		if ((rc = fetch(cmd, p, src[i].query, &w, src[i].end, &a)))
			goto out;
		if (a.n != 1) {
			rc = not_one(cmd, src[i].query, &a);
			vt_prom_answer_release(&a);
			goto out;
		}
		if (i > 0 && a.series[0].metric != metric) {
			fprintf(stderr, "vitals %s: cannot compare '%s' (%s) with '%s' (%s)\n", cmd->name,
				set.series[0].info.target, metric == VT_M_COMMITTED ? "bytes" : "a plain number",
				a.series[0].labels, a.series[0].bytes ? "bytes" : "a plain number");
			vt_prom_answer_release(&a);
			rc = vt_code_exit(VT_E_USAGE);
			goto out;
		}
		series_notes(cmd, &a.series[0]);
		metric = a.series[0].metric;
		/* the row is named by the arms' metric name; "value" when they are not the same metric */
		if (i == 0)
			snprintf(name, sizeof(name), "%s", series_name(&a.series[0]));
		else if (strcmp(name, series_name(&a.series[0])) != 0)
			snprintf(name, sizeof(name), "value");
		/* the series moves into the set: the answer keeps nothing to free */
		set.series[i] = a.series[0].series;
		vt_series_init(&a.series[0].series);
		vt_prom_answer_release(&a);
		set.n = i + 1;
	}
	default_labels(p, src, &set);
	if (p->names)
		given_labels(p->names, &set);
	for (i = 0; i < n; i++) {
		set.label_ptrs[i] = set.labels[i];
		arms[i] = &set.series[i];
	}
	vt_soak_opts_default(&so);
	so.metric = metric;
	if (vt_compare(arms, set.label_ptrs, n, &so, &set.cmp)) {
		rc = vt_cli_nomem(cmd->name);
		goto out;
	}
	snprintf(title, sizeof(title), "vitals compare · prometheus %s · %s ending %s",
		 vt_prom_url_shown(p->url, shown, sizeof(shown)), vt_fmt_span(w.range_s, range, sizeof(range)),
		 p->end > 0 ? "at --end" : "now");
	rc = vt_cli_compare_write(cmd->name, &set,
				  &(struct vt_cli_compare_out){ .json = p->json, .title = title,
								 .metric_label = name });
out:
	vt_compare_set_release(&set);
	return rc;
}

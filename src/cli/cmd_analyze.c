/*
 * cmd_analyze.c — `vitals analyze FILE` and `vitals compare A B...`: read
 * recordings (src/store), judge them (src/analyze), render them (the views
 * of src/render/view.h) as text, JSON, CSV or HTML.  With --prometheus the
 * series come from a Prometheus server instead (prom_cli.c).
 */
#include "cli/cli.h"
#include "cli/prom_cli.h"
#include "cli/soak_cli.h"
#include "analyze/age_compare.h"
#include "analyze/compare.h"
#include "analyze/alloc_trend.h"
#include "analyze/profile_trend.h"
#include "analyze/soak.h"
#include "analyze/thread_view.h"
#include "render/view.h"
#include "store/lock_store.h"
#include "store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	OPT_JSON = 1, OPT_CSV, OPT_HTML, OPT_METRIC, OPT_POINTS, OPT_NAMES, OPT_FORCE,
	OPT_STALL, OPT_LIMIT, OPT_PROMETHEUS, OPT_QUERY, OPT_RANGE, OPT_STEP, OPT_END, OPT_OFFSET, OPT_TIMEOUT,
	OPT_BY_AGE, OPT_INCARNATIONS, OPT_AGE_WINDOW,
};

#define JSON_OPTION(schema) { "json", 0, NULL, "machine-readable output (schema " schema ", docs/json.md)", OPT_JSON }
#define CSV_OPTION(what) { "csv", 0, "FILE", what " as CSV to FILE (- for stdout)", OPT_CSV }
#define FORCE_OPTION { "force", 0, NULL, "overwrite the --csv and --html files if they exist", OPT_FORCE }
#define LIMIT_OPTION(whose) { "limit", 0, NULL, "recommend a memory limit for " whose " cgroup from the\n" \
						"settled window, with the rule and its evidence", OPT_LIMIT }
#define PROM_OPTIONS(query_help) \
	{ "prometheus", 0, "URL", "read the series from this Prometheus server instead of a\n" \
				  "recording (http://host:9090, a path prefix and\n" \
				  "user:password@ allowed)", OPT_PROMETHEUS }, \
	{ "query", 0, "PROMQL", query_help, OPT_QUERY }, \
	{ "range", 0, "DURATION", "with --prometheus: how far back to read (default 1h)", OPT_RANGE }, \
	{ "step", 0, "DURATION", "with --prometheus: one value per step (default the range\n" \
				 "/ 1000, whole seconds, at least 1s)", OPT_STEP }, \
	{ "end", 0, "TIME", "with --prometheus: where the range ends: now (default),\n" \
			    "unix seconds or RFC 3339 (2026-12-04T10:00:00Z)", OPT_END }, \
	{ "timeout", 0, "DURATION", "with --prometheus: give up on the server after this\n" \
				    "long (default 30s)", OPT_TIMEOUT }

static const struct vt_option analyze_options[] = {
	{ "metric", 0, "KEY", "judge this metric instead of committed (rss_anon, vm_rss,\n"
			      "pss, heap_live, cg_current, ...)", OPT_METRIC },
	JSON_OPTION("vitals.analyze"),
	CSV_OPTION("the series, one row per point,"),
	{ "html", 0, "FILE", "one self-contained HTML file with the charts", OPT_HTML },
	{ "points", 0, "N", "summarise into at most N points (default 20000); a\n"
			    "recording of N/4 minutes or more is read in minute\n"
			    "points, from its per-minute rollups", OPT_POINTS },
	{ "stall", 0, "DURATION", "an accept queue never seen empty for longer than this\n"
				  "is a stall (default 2s)", OPT_STALL },
	LIMIT_OPTION("the process's"),
	FORCE_OPTION,
	PROM_OPTIONS("with --prometheus: the series to judge, one verdict each\n"
		     "(a memory level: process_resident_memory_bytes{job=\"api\"})"),
	{ 0 }
};

static const struct vt_option compare_options[] = {
	{ "names", 0, "A,B,...", "labels (default: the experiment arm, else the file name;\n"
				 "two alike get their folder, then their position; by\n"
				 "age: the incarnations compared, in order)", OPT_NAMES },
	{ "metric", 0, "KEY", "the metric that decides settling (default committed); by\n"
			      "age: the one shown at every matched age", OPT_METRIC },
	JSON_OPTION("vitals.compare"),
	CSV_OPTION("the table"),
	{ "html", 0, "FILE", "one self-contained HTML file with the curves overlaid;\n"
			     "when the recordings hold profiles, their bucket and\n"
			     "function tables, and a link to a differential flame\n"
			     "graph of all of them beside it (FILE.flame.html)", OPT_HTML },
	LIMIT_OPTION("each arm's"),
	FORCE_OPTION,
	{ "by-age", 0, NULL, "compare incarnations (the processes a soak followed\n"
			     "across restarts) at matched age since each started:\n"
			     "every incarnation of each recording, the first the\n"
			     "baseline; implied with one recording", OPT_BY_AGE },
	{ "incarnations", 0, "N,M,...", "with --by-age: which incarnations to compare, numbered\n"
					"from 1 in the order listed (2,3); the first is the\n"
					"baseline", OPT_INCARNATIONS },
	{ "age-window", 0, "DURATION", "with --by-age: each window's width (default a fifth of\n"
				       "the ages all reached, at least two sampling\n"
				       "intervals)", OPT_AGE_WINDOW },
	PROM_OPTIONS("with --prometheus: an arm, one series (the first is the\n"
		     "baseline); give two or more, or one with --offset"),
	{ "offset", 0, "DURATION", "with --prometheus: set the --query's range against the\n"
				   "same range this much earlier (the baseline)", OPT_OFFSET },
	{ 0 }
};

static const struct vt_exit_note analyze_exits[] = {
	{ 2, "cannot read FILE, or write an output; Prometheus' answer is not its API's, its query\n"
	     "failed, or it returned no series" },
	{ 5, "FILE may not be read, or its samples are in its -wal and no -shm can be made beside it;\n"
	     "Prometheus refused the credentials (HTTP 401, 403)" },
	{ 8, "Prometheus answered with an instant vector or a scalar, not a range; --prometheus\n"
	     "without libcurl installed (libcurl4)" },
	{ 9, "not a vitals recording, damaged, or written by a newer vitals" },
	{ 10, "Prometheus did not answer within --timeout, or gave up on the query" },
	{ 12, "cannot reach the Prometheus server (refused, unknown host, TLS)" },
	{ 64, "usage; a --csv or --html file exists (without --force); Prometheus refused the query\n"
	      "(its error quoted: bad PromQL, too many points per series)" }, { -1, NULL },
};

static const struct vt_exit_note compare_exits[] = {
	{ 2, "cannot read FILE, or write an output; Prometheus' answer is not its API's, its query\n"
	     "failed, or it returned no series" },
	{ 5, "FILE may not be read, or its samples are in its -wal and no -shm can be made beside it;\n"
	     "Prometheus refused the credentials (HTTP 401, 403)" },
	{ 8, "Prometheus answered with an instant vector or a scalar, not a range; --prometheus\n"
	     "without libcurl installed (libcurl4)" },
	{ 9, "not a vitals recording, damaged, or written by a newer vitals" },
	{ 10, "Prometheus did not answer within --timeout, or gave up on the query" },
	{ 12, "cannot reach the Prometheus server (refused, unknown host, TLS)" },
	{ 15, "by age: one recording that holds one incarnation (no restart), or incarnations whose\n"
	      "ages since start do not overlap (their spans are listed)" },
	{ 64, "usage; a --csv or --html file exists (without --force); Prometheus refused the query\n"
	      "(its error quoted: bad PromQL, too many points per series)" }, { -1, NULL },
};

static const char *const analyze_examples[] = {
	"vitals analyze run.db",
	"vitals analyze run.db --html report.html",
	"vitals analyze --json --metric rss_anon run.db",
	"vitals analyze --csv series.csv run.db",
	"vitals analyze --limit run.db",
	"vitals analyze --prometheus http://localhost:9090 --query 'process_resident_memory_bytes{job=\"api\"}' --range 6h",
	NULL,
};

static const char *const compare_examples[] = {
	"vitals compare before.db after.db",
	"vitals compare --html ab.html before.db after.db",
	"vitals compare --names old,new --json before.db after.db",
	"vitals compare --limit before.db after.db",
	"vitals compare followed.db",
	"vitals compare --by-age --html ages.html v61.db v62.db",
	"vitals compare --prometheus http://localhost:9090 --query 'process_resident_memory_bytes{version=\"1.4\"}' --query 'process_resident_memory_bytes{version=\"1.5\"}' --range 2h",
	"vitals compare --prometheus http://localhost:9090 --query 'process_resident_memory_bytes{job=\"api\"}' --range 6h --offset 1d",
	NULL,
};

struct view_opts {
	bool json, force, limit;
	const char *csv, *html, *names;
	int metric;
	bool metric_given;
	long points;
	double stall_s;                   /* analyze --stall */
	bool stall_given;
	struct vt_cli_prom prom;          /* --prometheus and what goes with it */
	bool prom_only;                   /* an option that needs --prometheus was given */
	bool by_age;                      /* compare --by-age, --incarnations or --age-window */
	const char *incarnations;         /* --incarnations */
	double age_window_s;              /* --age-window, 0 default */
	const struct vt_command *cmd;     /* analyze or compare, for its usage errors */
};

/* The options of --prometheus: checked alone here, together in check_prom. */
static int prom_option(struct view_opts *o, int id, const char *arg)
{
	struct vt_cli_prom *p = &o->prom;

	o->prom_only |= id != OPT_PROMETHEUS;
	switch (id) {
	case OPT_PROMETHEUS: p->url = arg; break;
	case OPT_QUERY:
		if (!*arg)
			return vt_cli_usage_error(o->cmd->name, "--query is empty");
		if (p->nquery == VT_CLI_PROM_MAX_QUERIES)
			return vt_cli_usage_error(o->cmd->name, "at most %d --query", VT_CLI_PROM_MAX_QUERIES);
		p->query[p->nquery++] = arg;
		break;
	case OPT_RANGE: return vt_cli_duration(o->cmd, "range", arg, 1, 0, &p->range_s);
	case OPT_STEP: return vt_cli_duration(o->cmd, "step", arg, 0.001, 0, &p->step_s);
	case OPT_OFFSET: return vt_cli_duration(o->cmd, "offset", arg, 1, 0, &p->offset_s);
	case OPT_TIMEOUT: return vt_cli_duration(o->cmd, "timeout", arg, 0.1, 3600, &p->timeout_s);
	case OPT_END:
		if (!vt_cli_parse_time(arg, &p->end))
			return vt_cli_usage_error(o->cmd->name, "--end '%s' is not a time (now, unix seconds, or "
						  "RFC 3339 like 2026-12-04T10:00:00Z)", arg);
		break;
	}
	return 0;
}

static int view_option(void *ctx, int id, const char *arg)
{
	struct view_opts *o = ctx;

	switch (id) {
	case OPT_JSON: o->json = true; break;
	case OPT_FORCE: o->force = true; break;
	case OPT_LIMIT: o->limit = true; break;
	case OPT_CSV: o->csv = arg; break;
	case OPT_HTML: o->html = arg; break;
	case OPT_NAMES: o->names = arg; break;
	case OPT_METRIC:
		o->metric = vt_metric_find(arg);
		o->metric_given = true;
		if (!vt_metric_judgeable(o->metric))
			return vt_cli_usage_error(o->cmd->name, "'%s' is not a metric that can be judged", arg);
		break;
	case OPT_POINTS:
		return vt_cli_count(o->cmd, "points", arg, 100, 1000000, &o->points);
	case OPT_STALL:
		o->stall_given = true;
		return vt_cli_duration(o->cmd, "stall", arg, 0.1, 0, &o->stall_s);
	case OPT_BY_AGE: o->by_age = true; break;
	case OPT_INCARNATIONS:
		o->by_age = true;
		o->incarnations = arg;
		if (!*arg || strspn(arg, "0123456789,") != strlen(arg))
			return vt_cli_usage_error(o->cmd->name, "--incarnations '%s' is not a list of incarnations "
						  "numbered from 1 (1,3)", arg);
		break;
	case OPT_AGE_WINDOW:
		o->by_age = true;
		return vt_cli_duration(o->cmd, "age-window", arg, 0.001, 0, &o->age_window_s);
	default:
		return prom_option(o, id, arg);
	}
	return 0;
}

/* --prometheus goes with its own options and no files; they go with it only. */
static int check_prom(struct view_opts *o, const struct vt_args *args)
{
	const char *name = o->cmd->name;
	const struct vt_cli_prom *p = &o->prom;

	if (!p->url) {
		if (o->prom_only)
			return vt_cli_usage_error(name, "--query, --range, --step, --end, --offset and --timeout "
						  "go with --prometheus URL");
		return 0;
	}
	if (args->noperands)
		return vt_cli_usage_error(name, "give --prometheus or recordings, not both");
	if (!p->nquery)
		return vt_cli_usage_error(name, "--prometheus needs --query PROMQL");
	if (o->csv || o->html || o->metric_given || o->points || o->stall_given)
		return vt_cli_usage_error(name, "--csv, --html, --metric, --points and --stall are for recordings, "
					  "not --prometheus (the --query picks the metric)");
	if (o->limit)
		return vt_cli_usage_error(name, "--limit is for recordings: it needs the process's RSS, swap and "
					  "cgroup figures, not one series");
	if (p->step_s > 0 && p->step_s > (p->range_s > 0 ? p->range_s : VT_CLI_PROM_RANGE_S))
		return vt_cli_usage_error(name, "--step is longer than --range: that is one value");
	o->prom.json = o->json;
	o->prom.names = o->names;
	return 0;
}

static int parse_views(const struct vt_command *cmd, int argc, char **argv, struct view_opts *o,
		       struct vt_args *args)
{
	int rc;

	memset(o, 0, sizeof(*o));
	o->cmd = cmd;
	o->metric = VT_M_COMMITTED;
	o->stall_s = 2;
	if ((rc = vt_cli_parse(cmd, argc, argv, view_option, o, args)))
		return rc;
	if (o->csv && o->json && strcmp(o->csv, "-") == 0)
		return vt_cli_usage_error(cmd->name, "--json and --csv - both want stdout; give --csv a file");
	return check_prom(o, args);
}

static int analyze_run(const struct vt_command *cmd, int argc, char **argv)
{
	struct view_opts o;
	struct vt_args args;
	struct vt_series s;
	struct vt_soak_opts so;
	struct vt_soak_verdict v;
	struct vt_analyze_report r = { 0 };
	struct vt_threads_rates tview;
	struct vt_diagnosis tdiag;
	struct vt_prof_trend trend;
	struct vt_alloc_trend allocs = { 0 };
	struct vt_stalls stalls = { 0 };
	struct vt_lock_history locks = { 0 };
	struct vt_mem_limit limit;
	pid_t tpid;
	struct vt_err err;
	FILE *f_csv = NULL, *f_html = NULL;
	int rc;

	if ((rc = parse_views(cmd, argc, argv, &o, &args)))
		return rc == VT_CLI_HELP ? VT_EXIT_OK : rc;
	if (o.prom.url)
		return vt_cli_prom_analyze(cmd, &o.prom);
	if (args.noperands != 1)
		return vt_cli_usage_error("analyze", "give one recording (vitals soak -o FILE writes one)");
	vt_series_init(&s);
	if (vt_store_load(args.operands[0], (size_t)o.points, &s, &err) != VT_OK)
		return vt_cli_error(&err);
	vt_soak_opts_default(&so);
	so.metric = (enum vt_metric)o.metric;
	if (vt_soak_analyze(&s, &so, &v) != 0) {
		vt_series_free(&s);
		return vt_cli_nomem("analyze");
	}
	r.path = args.operands[0];
	r.series = &s;
	r.verdict = &v;
	r.utf8 = vt_cli_utf8();
	/* accept-queue stalls, when it recorded its listening sockets */
	if (vt_stalls_find(&s, o.stall_s, &stalls) == 0)
		r.stalls = &stalls;
	/* the locks its threads waited on, looked at at the threads cadence */
	tpid = v.from < s.n && v.to > v.from ? s.pid[v.from] : 0;
	if (vt_store_locks_load(args.operands[0], tpid, &locks, &err) == VT_OK)
		r.locks = &locks;
	else
		fprintf(stderr, "vitals analyze: note: the locks are not shown: %s\n", err.msg);
	/* the threads of the analysed incarnation, through the rules of vitals threads */
	if (vt_soak_thread_view(&s, tpid, r.stalls, r.locks ? &locks.all : NULL, &tview, &tdiag, NULL) == VT_OK) {
		r.thread_diag = &tdiag;
		vt_threads_rates_release(&tview);
	}
	/* the memory limit its settled window supports */
	if (o.limit) {
		vt_mem_limit_recommend(&s, &v, &limit);
		r.limit = &limit;
	}
	/* the profiles it holds (vitals soak --profile-every), over time */
	if (vt_prof_trend_load(args.operands[0], &s, NULL, &trend, &err) == VT_OK)
		r.profiles = &trend;
	else
		fprintf(stderr, "vitals analyze: note: its profiles are not shown: %s\n", err.msg);
	/* the allocation profiles it holds (vitals soak --allocs-every), over time */
	if (vt_alloc_trend_load(args.operands[0], &allocs, &err) == VT_OK)
		r.allocs = &allocs;
	else
		fprintf(stderr, "vitals analyze: note: its allocation profiles are not shown: %s\n", err.msg);
	/* the files first: one that may not be written stops it before anything is printed */
	rc = 0;
	if (o.csv && !(f_csv = vt_cli_open_out("analyze", o.csv, o.force, &rc)))
		goto out;
	if (o.html && !(f_html = vt_cli_open_out("analyze", o.html, o.force, &rc)))
		goto out;
	if (o.json)
		rc = vt_cli_stdout_done("analyze", vt_view("json")->analyze(stdout, &r));
	else if (!(o.csv && strcmp(o.csv, "-") == 0))
		rc = vt_cli_stdout_done("analyze", vt_view("text")->analyze(stdout, &r));
	if (f_csv) {
		int rc2 = vt_cli_close_out("analyze", f_csv, o.csv, rc ? 0 : vt_view("csv")->analyze(f_csv, &r));

		f_csv = NULL;
		rc = rc ? rc : rc2;
	}
	if (f_html) {
		int rc2 = vt_cli_close_out("analyze", f_html, o.html, rc ? 0 : vt_view("html")->analyze(f_html, &r));

		f_html = NULL;
		rc = rc ? rc : rc2;
		if (rc == 0 && !o.json)
			printf("charts: %s\n", o.html);
	}
out:
	if (f_csv)
		vt_cli_close_out("analyze", f_csv, o.csv, 0);
	if (r.profiles)
		vt_prof_trend_release(&trend);
	vt_alloc_trend_release(&allocs);
	vt_stalls_free(&stalls);
	vt_lock_history_release(&locks);
	vt_series_free(&s);
	return rc;
}

/* compare --by-age (or one recording): its incarnations side by side at matched age. */
static int compare_by_age(const struct view_opts *o, const struct vt_args *args)
{
	struct vt_age_set set;
	struct vt_age_report r;
	struct vt_err err;
	FILE *f_html = NULL;
	int rc = 0, rc2;

	if (args->noperands < 1)
		return vt_cli_usage_error("compare", "give a recording that followed a restart, or recordings "
					  "of one service: the baseline first");
	if (o->csv || o->limit)
		return vt_cli_usage_error("compare", "--csv and --limit are not for --by-age (one recording is "
					  "compared by age): --json and --html are");
	if (vt_age_compare_files(args->operands, args->noperands, o->names, o->incarnations, o->age_window_s,
				 (enum vt_metric)o->metric, &set, &err))
		return vt_cli_error(&err);
	for (size_t i = 0; i < set.n; i++)
		if (set.series[i].info.wal_unread)
			fprintf(stderr, "vitals compare: note: '%s' was read without its -wal (no -shm can be made "
				"beside it): its latest samples may be missing\n", args->operands[i]);
	r = (struct vt_age_report){ &set.cmp, args->operands, args->noperands, vt_cli_utf8() };
	/* the file first: one that may not be written stops it before anything is printed */
	if (o->html && !(f_html = vt_cli_open_out("compare", o->html, o->force, &rc))) {
		vt_age_set_release(&set);
		return rc;
	}
	rc = vt_cli_stdout_done("compare", vt_view(o->json ? "json" : "text")->age(stdout, &r));
	if (f_html) {
		rc2 = vt_cli_close_out("compare", f_html, o->html, rc ? 0 : vt_view("html")->age(f_html, &r));
		rc = rc ? rc : rc2;
		if (rc == 0 && !o->json)
			printf("charts: %s\n", o->html);
	}
	vt_age_set_release(&set);
	return rc;
}

static int compare_run(const struct vt_command *cmd, int argc, char **argv)
{
	struct view_opts o;
	struct vt_args args;
	struct vt_compare_set set;
	struct vt_prof_diff *diffs = NULL;
	struct vt_alloc_diff *alloc_diffs = NULL;
	struct vt_err err;
	size_t i;
	int rc;

	if ((rc = parse_views(cmd, argc, argv, &o, &args)))
		return rc == VT_CLI_HELP ? VT_EXIT_OK : rc;
	if (o.prom.url && o.by_age)
		return vt_cli_usage_error("compare", "--by-age, --incarnations and --age-window are for recordings, "
					  "not --prometheus");
	if (o.prom.url)
		return vt_cli_prom_compare(cmd, &o.prom);
	if (o.by_age || args.noperands == 1)
		return compare_by_age(&o, &args);
	if (args.noperands < 2)
		return vt_cli_usage_error("compare", "give at least two recordings: the baseline first");
	if (vt_compare_files(args.operands, args.noperands, o.names, (enum vt_metric)o.metric, &set, &err))
		return vt_cli_error(&err);
	for (i = 0; i < set.n; i++)
		if (set.series[i].info.wal_unread)
			fprintf(stderr, "vitals compare: note: '%s' was read without its -wal (no -shm can be made "
				"beside it): its latest samples may be missing\n", args.operands[i]);
	/* the profiles and allocation sites they hold, each against the baseline's */
	diffs = calloc(args.noperands, sizeof(*diffs));
	alloc_diffs = calloc(args.noperands, sizeof(*alloc_diffs));
	for (i = 1; diffs && i < args.noperands; i++)
		if (vt_prof_diff_files(args.operands[0], args.operands[i], NULL, &diffs[i - 1], &err) != VT_OK)
			fprintf(stderr, "vitals compare: note: the profiles of '%s' are not compared: %s\n",
				args.operands[i], err.msg);
	for (i = 1; alloc_diffs && i < args.noperands; i++)
		if (vt_alloc_diff_files(args.operands[0], args.operands[i], &alloc_diffs[i - 1], &err) != VT_OK) {
			fprintf(stderr, "vitals compare: note: the allocation sites of '%s' are not compared: %s\n",
				args.operands[i], err.msg);
			vt_alloc_diff_release(&alloc_diffs[i - 1]);
			snprintf(alloc_diffs[i - 1].why, sizeof(alloc_diffs[i - 1].why), "%.190s", err.msg);
		}
	rc = vt_cli_compare_write("compare", &set,
				  &(struct vt_cli_compare_out){ o.json, o.csv, o.html, NULL, o.force, diffs,
								 diffs ? args.noperands - 1 : 0, NULL, o.limit,
								 alloc_diffs });
	for (i = 1; diffs && i < args.noperands; i++)
		vt_prof_diff_release(&diffs[i - 1]);
	for (i = 1; alloc_diffs && i < args.noperands; i++)
		vt_alloc_diff_release(&alloc_diffs[i - 1]);
	free(diffs);
	free(alloc_diffs);
	vt_compare_set_release(&set);
	return rc;
}

const struct vt_command vt_cmd_analyze = {
	.name = "analyze",
	.summary = "leak, plateau, step or still settling: a soak's verdict with its evidence",
	.synopsis = "[options] FILE\n"
		    "[options] --prometheus URL --query PROMQL [--range DURATION] [--step DURATION] [--end TIME]",
	.description =
"The verdict on a soak recording (vitals soak -o FILE), with the evidence it\n"
"rests on.  Works on a recording that is still being written.\n"
"\n"
"  plateau          settled: the floor no longer moves beyond the noise\n"
"  leak             the floor rises steadily: rate in MiB/h with its 90% interval\n"
"  step growth      flat, one jump, flat again: when and how much\n"
"  still settling   growing more and more slowly: not settled yet; or, with the\n"
"                   allocator's live bytes recorded (--heap, the agent), a floor\n"
"                   rising over a flat live heap: free-list growth, not a leak\n"
"  cannot tell yet  too short or too noisy, and how much longer to soak; a rise\n"
"                   under 2% of the level, or one that ratchets up in a few\n"
"                   steps for under 30 min (arenas filling their high-water\n"
"                   marks after a start do both), is not called a leak\n"
"\n"
"Evidence: floors and medians per quarter and the q1->q4 floor drift, the\n"
"noise level and what counts as movement, the slope of the floor, the settled\n"
"window and its oscillation, swap push/pull (RssAnon falling while swap rises\n"
"and committed stays flat: paged out, not freed), restarts, CPU over the run\n"
"and per thread with what each was doing (threads that came and went, such as\n"
"a thread per request, share one row, short-lived: their names counted, their\n"
"CPU the process's minus that of the threads listed), and the rules of vitals\n"
"threads over the whole run.  The last incarnation of the process is judged\n"
"(a restart starts memory over); earlier ones are counted.\n"
"\n"
"Locks: the ones its threads waited on at the per-thread cadence, counted up\n"
"as vitals locks counts them (what each is, its kind, waiters, holders, call\n"
"sites), with each one's waiting in the first half of the soak and the\n"
"second; a lock convoy's verdict names its lock.  A recording made before\n"
"vitals recorded locks says so.\n"
"\n"
"Accept-queue stalls, for a process that listens on TCP: the soak records\n"
"the deepest queue of connections waiting for accept() at every sample; a\n"
"queue never seen empty for longer than --stall is a stall, listed with when\n"
"it began, its length and depth, each end known to one sampling interval.\n"
"\n"
"Profiles stored by vitals soak --profile-every: CPU by bucket over time, one\n"
"row per profile (its time, the process's CPU in cores from the samples around\n"
"it, each bucket's share of the on-CPU samples with its 95% interval), and\n"
"which bucket grew when CPU rose: the profiles of lowest and highest CPU set\n"
"against each other, the buckets whose CPU (share x cores) grew beyond their\n"
"interval named with the figures; \"cannot tell yet\" with fewer than two\n"
"profiles of enough samples, CPU that did not rise, or growth within noise.\n"
"\n"
"Allocation profiles stored by vitals soak --allocs-every: each profile's\n"
"calls and bytes per second of armed time, the share of its bytes freed\n"
"within their window and its top sites' bytes per second (charted in the\n"
"HTML), then every site pooled over the profiles: bytes and calls per second,\n"
"freed, freed within 1 ms, churn per hour, first and last rate.\n"
"\n"
"With --prometheus, the series of a PromQL range query (GET\n"
"/api/v1/query_range) are judged instead, one verdict per series the query\n"
"returns, with the same evidence, each named by its labels.  A series whose\n"
"name ends in _bytes is judged in bytes (a change under 1 MiB is within\n"
"noise), any other as a plain number (under 0.5).  Steps with no value longer\n"
"than 3 steps are gaps.  A counter (a name ending in _total) is not a level: it\n"
"is judged if asked, each drop taken as a reset (a restart: the last\n"
"incarnation is judged), with a note that rate() is what moves.  NaN and Inf\n"
"are unknown values, never 0.  --json prints an array, one vitals.analyze\n"
"document per series.\n",
	.options = analyze_options,
	.exits = analyze_exits,
	.examples = analyze_examples,
	.run = analyze_run,
};

const struct vt_command vt_cmd_compare = {
	.name = "compare",
	.summary = "A/B of recordings on their settled windows",
	.synopsis = "[options] BASELINE OTHER...\n"
		    "[options] [--by-age] RECORDING...\n"
		    "[options] --prometheus URL --query PROMQL_A --query PROMQL_B... [--range DURATION]\n"
		    "[options] --prometheus URL --query PROMQL --offset DURATION [--range DURATION]",
	.description =
"A/B of soak recordings on their settled windows: committed, RssAnon, VmSwap,\n"
"arenas and 64 MiB regions, live, free-held, live fraction, keepcost, CPU.\n"
"Each figure is the median over the window with its 5th-95th percentile range;\n"
"every other recording is set against the first with its change and %, and\n"
"\"within noise\" where the change is within the noise of the two (for CPU, of\n"
"their mean rates) or under what analyze counts as a change (0.5% of the level,\n"
"and at least 1 MiB or 0.01 cores).  A recording that never settled is\n"
"compared on its last half, and says so.  Recordings of different programs\n"
"are compared with a warning.\n"
"\n"
"When recordings hold profiles (vitals soak --profile-every), each one's are\n"
"pooled and set against the baseline's: bucket shares and the functions whose\n"
"self share changed most, each change with its 95% interval.\n"
"\n"
"When they hold allocation profiles (vitals soak --allocs-every), each one's\n"
"sites are pooled and set against the baseline's: bytes per second and churn\n"
"per hour of armed time, and the site whose churn changed most named (\"the\n"
"change removed 1.1 GiB/h of churn from poll_round\"); a change under 10%, or\n"
"at a site of fewer than 50 calls, is within noise.\n"
"\n"
"By age (--by-age, or one recording): a restart A/B at matched age.  A soak\n"
"that follows a service across restarts records each process (an\n"
"incarnation) and when it started; the incarnations of the recordings, in\n"
"order (the first the baseline; --incarnations picks), are set side by side\n"
"on windows of the same age since each process started: the ages all of\n"
"them reached, cut into up to 5 windows (--age-window sets their width), the\n"
"last, at the age the younger reached, the headline (\"at t+83 min:\n"
"committed 1458 MiB (#1) vs 1488 MiB (#2)\").  Each window has compare's\n"
"table and noise judgement.  A recording made before vitals recorded starts\n"
"counts ages from each incarnation's first sample, and says so.  One\n"
"recording of one incarnation, or ages that do not overlap, exit 15 with the\n"
"reason.\n"
"\n"
"With --prometheus, the arms are series read from Prometheus: one per --query\n"
"(two label sets, such as two versions of a rollout), or with --offset one\n"
"query over the range ending now (or --end) against the same range that much\n"
"earlier, the baseline.  Each query must return exactly one series; a query\n"
"that returns more is refused with the series it returned listed.\n",
	.options = compare_options,
	.exits = compare_exits,
	.examples = compare_examples,
	.run = compare_run,
};

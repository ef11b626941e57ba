/*
 * cmd_analyze.c — `vitals analyze FILE` and `vitals compare A B...`: read
 * recordings (src/store), judge them (src/analyze), render them (the views
 * of src/render/view.h) as text, JSON, CSV or HTML.
 */
#include "cli/cli.h"
#include "cli/soak_cli.h"
#include "analyze/compare.h"
#include "analyze/profile_trend.h"
#include "analyze/soak.h"
#include "analyze/thread_view.h"
#include "render/view.h"
#include "store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_JSON = 1, OPT_CSV, OPT_HTML, OPT_METRIC, OPT_POINTS, OPT_NAMES, OPT_FORCE };

#define JSON_OPTION(schema) { "json", 0, NULL, "machine-readable output (schema " schema ", docs/json.md)", OPT_JSON }
#define CSV_OPTION(what) { "csv", 0, "FILE", what " as CSV to FILE (- for stdout)", OPT_CSV }
#define FORCE_OPTION { "force", 0, NULL, "overwrite the --csv and --html files if they exist", OPT_FORCE }

static const struct vt_option analyze_options[] = {
	{ "metric", 0, "KEY", "judge this metric instead of committed (rss_anon, vm_rss,\n"
			      "pss, heap_live, cg_current, ...)", OPT_METRIC },
	JSON_OPTION("vitals.analyze"),
	CSV_OPTION("the series, one row per point,"),
	{ "html", 0, "FILE", "one self-contained HTML file with the charts", OPT_HTML },
	{ "points", 0, "N", "summarise into at most N points (default 20000)", OPT_POINTS },
	FORCE_OPTION,
	{ 0 }
};

static const struct vt_option compare_options[] = {
	{ "names", 0, "A,B,...", "labels (default: the experiment arm, else the file name;\n"
				 "two alike get their folder, then their position)", OPT_NAMES },
	{ "metric", 0, "KEY", "the metric that decides settling (default committed)", OPT_METRIC },
	JSON_OPTION("vitals.compare"),
	CSV_OPTION("the table"),
	{ "html", 0, "FILE", "one self-contained HTML file with the curves overlaid;\n"
			     "when the recordings hold profiles, a differential\n"
			     "flame graph beside it (FILE.flame.html)", OPT_HTML },
	FORCE_OPTION,
	{ 0 }
};

static const struct vt_exit_note analyze_exits[] = {
	{ 2, "cannot read FILE, or write an output" },
	{ 5, "FILE may not be read, or its samples are in its -wal and no -shm can be made beside it" },
	{ 9, "not a vitals recording, damaged, or written by a newer vitals" },
	{ 64, "usage; a --csv or --html file exists (without --force)" }, { -1, NULL },
};

static const char *const analyze_examples[] = {
	"vitals analyze run.db",
	"vitals analyze run.db --html report.html",
	"vitals analyze --json --metric rss_anon run.db",
	"vitals analyze --csv series.csv run.db",
	NULL,
};

static const char *const compare_examples[] = {
	"vitals compare before.db after.db",
	"vitals compare --html ab.html before.db after.db",
	"vitals compare --names old,new --json before.db after.db",
	NULL,
};

struct view_opts {
	bool json, force;
	const char *csv, *html, *names;
	int metric;
	long points;
	const struct vt_command *cmd;     /* analyze or compare, for its usage errors */
};

static int view_option(void *ctx, int id, const char *arg)
{
	struct view_opts *o = ctx;

	switch (id) {
	case OPT_JSON: o->json = true; break;
	case OPT_FORCE: o->force = true; break;
	case OPT_CSV: o->csv = arg; break;
	case OPT_HTML: o->html = arg; break;
	case OPT_NAMES: o->names = arg; break;
	case OPT_METRIC:
		o->metric = vt_metric_find(arg);
		if (!vt_metric_judgeable(o->metric))
			return vt_cli_usage_error(o->cmd->name, "'%s' is not a metric that can be judged", arg);
		break;
	case OPT_POINTS:
		return vt_cli_count(o->cmd, "points", arg, 100, 1000000, &o->points);
	}
	return 0;
}

static int parse_views(const struct vt_command *cmd, int argc, char **argv, struct view_opts *o,
		       struct vt_args *args)
{
	int rc;

	memset(o, 0, sizeof(*o));
	o->cmd = cmd;
	o->metric = VT_M_COMMITTED;
	if ((rc = vt_cli_parse(cmd, argc, argv, view_option, o, args)))
		return rc;
	if (o->csv && o->json && strcmp(o->csv, "-") == 0)
		return vt_cli_usage_error(cmd->name, "--json and --csv - both want stdout; give --csv a file");
	return 0;
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
	struct vt_err err;
	FILE *f_csv = NULL, *f_html = NULL;
	int rc;

	if ((rc = parse_views(cmd, argc, argv, &o, &args)))
		return rc == VT_CLI_HELP ? VT_EXIT_OK : rc;
	if (args.noperands != 1)
		return vt_cli_usage_error("analyze", "give one recording (vitals soak -o FILE writes one)");
	vt_series_init(&s);
	if (vt_store_load(args.operands[0], (size_t)o.points, &s, &err) != VT_OK)
		return vt_cli_error(&err);
	vt_soak_opts_default(&so);
	so.metric = (enum vt_metric)o.metric;
	if (vt_soak_analyze(&s, &so, &v) != 0) {
		vt_series_free(&s);
		fprintf(stderr, "vitals analyze: out of memory\n");
		return 2;
	}
	r.path = args.operands[0];
	r.series = &s;
	r.verdict = &v;
	r.utf8 = vt_cli_utf8();
	/* the threads of the analysed incarnation, through the rules of vitals threads */
	if (vt_soak_thread_view(&s, v.from < s.n && v.to > v.from ? s.pid[v.from] : 0, &tview, &tdiag,
				NULL) == VT_OK) {
		r.thread_diag = &tdiag;
		vt_threads_rates_release(&tview);
	}
	/* the profiles it holds (vitals soak --profile-every), over time */
	if (vt_prof_trend_load(args.operands[0], &s, NULL, &trend, &err) == VT_OK)
		r.profiles = &trend;
	else
		fprintf(stderr, "vitals analyze: note: its profiles are not shown: %s\n", err.msg);
	/* the files first: one that may not be written stops it before anything is printed */
	rc = 0;
	if (o.csv && !(f_csv = vt_cli_open_out("analyze", o.csv, o.force, &rc)))
		goto out;
	if (o.html && !(f_html = vt_cli_open_out("analyze", o.html, o.force, &rc)))
		goto out;
	if (o.json)
		rc = vt_view("json")->analyze(stdout, &r) ? 2 : 0;
	else if (!(o.csv && strcmp(o.csv, "-") == 0))
		rc = vt_view("text")->analyze(stdout, &r) ? 2 : 0;
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
	vt_series_free(&s);
	return rc;
}

static int compare_run(const struct vt_command *cmd, int argc, char **argv)
{
	struct view_opts o;
	struct vt_args args;
	struct vt_compare_set set;
	struct vt_prof_diff *diffs = NULL;
	struct vt_err err;
	size_t i;
	int rc;

	if ((rc = parse_views(cmd, argc, argv, &o, &args)))
		return rc == VT_CLI_HELP ? VT_EXIT_OK : rc;
	if (args.noperands < 2)
		return vt_cli_usage_error("compare", "give at least two recordings: the baseline first");
	if (vt_compare_files(args.operands, args.noperands, o.names, (enum vt_metric)o.metric, &set, &err))
		return vt_cli_error(&err);
	for (i = 0; i < set.n; i++)
		if (set.series[i].info.wal_unread)
			fprintf(stderr, "vitals compare: note: '%s' was read without its -wal (no -shm can be made "
				"beside it): its latest samples may be missing\n", args.operands[i]);
	/* the profiles they hold, each against the baseline's */
	diffs = calloc(args.noperands, sizeof(*diffs));
	for (i = 1; diffs && i < args.noperands; i++)
		if (vt_prof_diff_files(args.operands[0], args.operands[i], NULL, &diffs[i - 1], &err) != VT_OK)
			fprintf(stderr, "vitals compare: note: the profiles of '%s' are not compared: %s\n",
				args.operands[i], err.msg);
	rc = vt_cli_compare_write("compare", &set,
				  &(struct vt_cli_compare_out){ o.json, o.csv, o.html, NULL, o.force, diffs,
								 diffs ? args.noperands - 1 : 0 });
	for (i = 1; diffs && i < args.noperands; i++)
		vt_prof_diff_release(&diffs[i - 1]);
	free(diffs);
	vt_compare_set_release(&set);
	return rc;
}

const struct vt_command vt_cmd_analyze = {
	.name = "analyze",
	.summary = "leak, plateau, step or still settling: a soak's verdict with its evidence",
	.synopsis = "[options] FILE",
	.description =
"The verdict on a soak recording (vitals soak -o FILE), with the evidence it\n"
"rests on.  Works on a recording that is still being written.\n"
"\n"
"  plateau          settled: the floor no longer moves beyond the noise\n"
"  leak             the floor rises steadily: rate in MiB/h with its 90% interval\n"
"  step growth      flat, one jump, flat again: when and how much\n"
"  still settling   growing more and more slowly: not settled yet\n"
"  cannot tell yet  too short or too noisy, and how much longer to soak\n"
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
"Profiles stored by vitals soak --profile-every: CPU by bucket over time, one\n"
"row per profile (its time, the process's CPU in cores from the samples around\n"
"it, each bucket's share of the on-CPU samples with its 95% interval), and\n"
"which bucket grew when CPU rose: the profiles of lowest and highest CPU set\n"
"against each other, the buckets whose CPU (share x cores) grew beyond their\n"
"interval named with the figures; \"cannot tell yet\" with fewer than two\n"
"profiles of enough samples, CPU that did not rise, or growth within noise.\n",
	.options = analyze_options,
	.exits = analyze_exits,
	.examples = analyze_examples,
	.run = analyze_run,
};

const struct vt_command vt_cmd_compare = {
	.name = "compare",
	.summary = "A/B of recordings on their settled windows",
	.synopsis = "[options] BASELINE OTHER...",
	.description =
"A/B of soak recordings on their settled windows: committed, RssAnon, VmSwap,\n"
"arenas and 64 MiB regions, live, free-held, live fraction, keepcost, CPU.\n"
"Each figure is the median over the window with its 5th-95th percentile range;\n"
"every other recording is set against the first with its change and %, and\n"
"\"within noise\" where the change is within the noise of the two.  A recording\n"
"that never settled is compared on its last half, and says so.\n"
"\n"
"When recordings hold profiles (vitals soak --profile-every), each one's are\n"
"pooled and set against the baseline's: bucket shares and the functions whose\n"
"self share changed most, each change with its 95% interval.\n",
	.options = compare_options,
	.exits = analyze_exits,
	.examples = compare_examples,
	.run = compare_run,
};

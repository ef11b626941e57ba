/*
 * cmd_analyze.c — `vitals analyze FILE` and `vitals compare A B...`: read
 * recordings (src/soak/store), judge them (src/analyze), render them
 * (src/render/soak.h) as text, JSON, CSV or HTML.
 */
#include "cli/cli.h"
#include "cli/soak_cli.h"
#include "analyze/compare.h"
#include "analyze/soak.h"
#include "analyze/thread_view.h"
#include "render/soak.h"
#include "soak/store.h"

#include <getopt.h>
#include <langinfo.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void analyze_usage(FILE *out)
{
	fprintf(out,
"usage: vitals analyze [options] FILE\n"
"\n"
"The verdict on a soak recording (vitals soak -o FILE), with the evidence it\n"
"rests on.  Works on a recording that is still being written.\n"
"\n"
"  plateau          settled: the floor no longer moves beyond the noise\n"
"  leak             the floor rises steadily: rate in MiB/h with its 90%% interval\n"
"  step growth      flat, one jump, flat again: when and how much\n"
"  still settling   growing more and more slowly: not settled yet\n"
"  cannot tell yet  too short or too noisy, and how much longer to soak\n"
"\n"
"Evidence: floors and medians per quarter and the q1->q4 floor drift, the\n"
"noise level and what counts as movement, the slope of the floor, the settled\n"
"window and its oscillation, swap push/pull (RssAnon falling while swap rises\n"
"and committed stays flat: paged out, not freed), restarts, CPU over the run\n"
"and per thread.  The last incarnation of the process is judged (a restart\n"
"starts memory over); earlier ones are counted.\n"
"\n"
"options:\n"
"  --metric KEY     judge this metric instead of committed (rss_anon, vm_rss,\n"
"                   pss, heap_live, cg_current, ...)\n"
"  --json           machine-readable (schema vitals.analyze v1)\n"
"  --csv FILE       the series, one row per point, to FILE (- for stdout)\n"
"  --html FILE      one self-contained HTML file with the charts\n"
"  --points N       summarise into at most N points (default 20000)\n"
"  -h, --help       this help\n"
"\n"
"exit status: 0 ok; 2 cannot read FILE; 9 not a vitals recording, damaged, or\n"
"written by a newer vitals; 64 usage.\n");
}

static void compare_usage(FILE *out)
{
	fprintf(out,
"usage: vitals compare [options] BASELINE OTHER...\n"
"\n"
"A/B of soak recordings on their settled windows: committed, RssAnon, VmSwap,\n"
"arenas and 64 MiB regions, live, free-held, live fraction, keepcost, CPU.\n"
"Each figure is the median over the window with its 5th-95th percentile range;\n"
"every other recording is set against the first with its change and %%, and\n"
"\"~\" where the change is within the noise of the two.  A recording that never\n"
"settled is compared on its last half, and says so.\n"
"\n"
"options:\n"
"  --names A,B,...  labels (default: the experiment arm, else the file name)\n"
"  --metric KEY     the metric that decides settling (default committed)\n"
"  --json           machine-readable (schema vitals.compare v1)\n"
"  --csv FILE       the table as CSV to FILE (- for stdout)\n"
"  --html FILE      one self-contained HTML file with the curves overlaid\n"
"  -h, --help       this help\n"
"\n"
"exit status: 0 ok; 2 cannot read a file; 9 not a vitals recording; 64 usage.\n");
}

static bool utf8_terminal(void)
{
	const char *cs;

	setlocale(LC_CTYPE, "");
	cs = nl_langinfo(CODESET);
	return cs && strcmp(cs, "UTF-8") == 0;
}

/* Open FILE for writing ("-" is stdout); prints the error itself. */
static FILE *open_out(const char *cmd, const char *path)
{
	FILE *f;

	if (strcmp(path, "-") == 0)
		return stdout;
	f = fopen(path, "w");
	if (!f)
		fprintf(stderr, "vitals %s: cannot write '%s': %m\n", cmd, path);
	return f;
}

static int close_out(const char *cmd, FILE *f, const char *path, int render_rc)
{
	int rc = render_rc;

	if (f == stdout)
		return fflush(stdout) == 0 && rc == 0 ? 0 : 2;
	if (fclose(f) != 0 || rc != 0) {
		fprintf(stderr, "vitals %s: writing '%s' failed\n", cmd, path);
		return 2;
	}
	return 0;
}

struct view_opts {
	bool json;
	const char *csv, *html;
	int metric;
	size_t points;
	const char *names;
};

/* The options analyze and compare share; returns 0, 'h' for help, or 64. */
static int parse_view_opts(const char *cmd, int argc, char **argv, struct view_opts *o)
{
	enum { OPT_JSON = 256, OPT_CSV, OPT_HTML, OPT_METRIC, OPT_POINTS, OPT_NAMES };
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, OPT_JSON },
		{ "csv", required_argument, NULL, OPT_CSV },
		{ "html", required_argument, NULL, OPT_HTML },
		{ "metric", required_argument, NULL, OPT_METRIC },
		{ "points", required_argument, NULL, OPT_POINTS },
		{ "names", required_argument, NULL, OPT_NAMES },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	memset(o, 0, sizeof(*o));
	o->metric = VT_M_COMMITTED;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_JSON: o->json = true; break;
		case OPT_CSV: o->csv = optarg; break;
		case OPT_HTML: o->html = optarg; break;
		case OPT_NAMES: o->names = optarg; break;
		case OPT_METRIC:
			o->metric = vt_metric_find(optarg);
			if (!vt_metric_judgeable(o->metric))
				return vt_cli_usage_error(cmd, "'%s' is not a metric that can be judged", optarg);
			break;
		case OPT_POINTS:
			o->points = strtoul(optarg, &end, 10);
			if (*end || o->points < 100 || o->points > 1000000)
				return vt_cli_usage_error(cmd, "--points wants 100..1000000");
			break;
		case 'h': return 'h';
		default: return 64;
		}
	}
	if (o->csv && o->json && strcmp(o->csv, "-") == 0)
		return vt_cli_usage_error(cmd, "--json and --csv - both want stdout; give --csv a file");
	return 0;
}

static int load(const char *path, size_t points, struct vt_series *s)
{
	struct vt_err err;

	vt_err_clear(&err);
	vt_series_init(s);
	if (vt_store_load(path, points, s, &err) != VT_OK)
		return vt_cli_error(&err);
	return 0;
}

int cmd_analyze(int argc, char **argv)
{
	struct view_opts o;
	struct vt_series s;
	struct vt_soak_opts so;
	struct vt_soak_verdict v;
	struct vt_analyze_report r = { 0 };
	struct vt_threads_rates tview;
	struct vt_diagnosis tdiag;
	FILE *f;
	int rc;

	if ((rc = parse_view_opts("analyze", argc, argv, &o)))
		return rc == 'h' ? (analyze_usage(stdout), 0) : (analyze_usage(stderr), 64);
	if (optind + 1 != argc)
		return vt_cli_usage_error("analyze", "give one recording (vitals soak -o FILE writes one)");
	if (o.names)
		return vt_cli_usage_error("analyze", "--names is for vitals compare");
	if ((rc = load(argv[optind], o.points, &s)))
		return rc;
	vt_soak_opts_default(&so);
	so.metric = (enum vt_metric)o.metric;
	if (vt_soak_analyze(&s, &so, &v) != 0) {
		vt_series_free(&s);
		fprintf(stderr, "vitals analyze: out of memory\n");
		return 2;
	}
	r.path = argv[optind];
	r.series = &s;
	r.verdict = &v;
	r.utf8 = utf8_terminal();
	/* the threads of the analysed incarnation, through the rules of vitals threads */
	if (vt_soak_thread_view(&s, v.from < s.n && v.to > v.from ? s.pid[v.from] : 0, &tview, &tdiag,
				NULL) == VT_OK) {
		r.thread_diag = &tdiag;
		vt_threads_rates_release(&tview);
	}
	rc = 0;
	if (o.json)
		rc = vt_render_analyze_json(stdout, &r) ? 2 : 0;
	else if (!(o.csv && strcmp(o.csv, "-") == 0))
		rc = vt_render_analyze_text(stdout, &r) ? 2 : 0;
	if (rc == 0 && o.csv && (f = open_out("analyze", o.csv)))
		rc = close_out("analyze", f, o.csv, vt_render_series_csv(f, &s));
	else if (rc == 0 && o.csv)
		rc = 2;
	if (rc == 0 && o.html && (f = open_out("analyze", o.html))) {
		rc = close_out("analyze", f, o.html, vt_render_analyze_html(f, &r));
		if (rc == 0 && !o.json)
			fprintf(stdout, "charts: %s\n", o.html);
	} else if (rc == 0 && o.html) {
		rc = 2;
	}
	vt_series_free(&s);
	return rc;
}

/* Label of recording i: --names, else the arm it was recorded as, else the file name. */
static const char *arm_name(const struct view_opts *o, const struct vt_series *s, const char *path,
			    size_t i, char *buf, size_t cap)
{
	const char *base, *p;
	size_t k = 0;

	if (o->names) {
		for (p = o->names; *p && k < i; p++)
			k += *p == ',';
		if (k == i && *p) {
			size_t len = strcspn(p, ",");

			snprintf(buf, cap, "%.*s", (int)len, p);
			return buf;
		}
	}
	if (s->info.arm[0])
		return s->info.arm;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	snprintf(buf, cap, "%s", base);
	if ((p = strrchr(buf, '.')) && strcmp(p, ".db") == 0)
		buf[p - buf] = '\0';
	return buf;
}

int vt_cli_compare_files(char *const *paths, size_t n, const char *names, bool json, const char *csv,
			 const char *html, int metric, const char *title)
{
	struct view_opts o = { .json = json, .csv = csv, .html = html, .metric = metric, .names = names };
	struct vt_series *s = calloc(n, sizeof(*s));
	const struct vt_series **sp = calloc(n, sizeof(*sp));
	const char **label = calloc(n, sizeof(*label));
	char (*label_buf)[64] = calloc(n, sizeof(*label_buf));
	struct vt_comparison cmp = { 0 };
	struct vt_compare_report r = { 0 };
	struct vt_soak_opts so;
	size_t i, loaded = 0;
	FILE *f;
	int rc = 0;

	if (!s || !sp || !label || !label_buf) {
		fprintf(stderr, "vitals compare: out of memory\n");
		rc = 2;
		goto out;
	}
	for (i = 0; i < n && rc == 0; i++) {
		if ((rc = load(paths[i], 0, &s[i])))
			break;
		loaded++;
		sp[i] = &s[i];
		label[i] = arm_name(&o, &s[i], paths[i], i, label_buf[i], sizeof(label_buf[i]));
	}
	if (rc)
		goto out;
	vt_soak_opts_default(&so);
	so.metric = (enum vt_metric)metric;
	if (vt_compare(sp, label, n, &so, &cmp) != 0) {
		fprintf(stderr, "vitals compare: out of memory\n");
		rc = 2;
		goto out;
	}
	r.cmp = &cmp;
	r.title = title;
	r.utf8 = utf8_terminal();
	if (json)
		rc = vt_render_compare_json(stdout, &r) ? 2 : 0;
	else if (!(csv && strcmp(csv, "-") == 0))
		rc = vt_render_compare_text(stdout, &r) ? 2 : 0;
	if (rc == 0 && csv)
		rc = (f = open_out("compare", csv)) ? close_out("compare", f, csv, vt_render_compare_csv(f, &r)) : 2;
	if (rc == 0 && html) {
		rc = (f = open_out("compare", html)) ? close_out("compare", f, html, vt_render_compare_html(f, &r)) : 2;
		if (rc == 0 && !json)
			fprintf(stdout, "charts: %s\n", html);
	}
	vt_comparison_free(&cmp);
out:
	for (i = 0; i < loaded; i++)
		vt_series_free(&s[i]);
	free(s);
	free(sp);
	free(label);
	free(label_buf);
	return rc;
}

int cmd_compare(int argc, char **argv)
{
	struct view_opts o;
	int rc;

	if ((rc = parse_view_opts("compare", argc, argv, &o)))
		return rc == 'h' ? (compare_usage(stdout), 0) : (compare_usage(stderr), 64);
	if (argc - optind < 2)
		return vt_cli_usage_error("compare", "give at least two recordings: the baseline first");
	if (o.points)
		return vt_cli_usage_error("compare", "--points is for vitals analyze");
	return vt_cli_compare_files(argv + optind, (size_t)(argc - optind), o.names, o.json, o.csv, o.html,
				    o.metric, NULL);
}

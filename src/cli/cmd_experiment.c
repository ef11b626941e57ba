/*
 * cmd_experiment.c — `vitals experiment --for 10m --arm default
 * --arm cap2:MALLOC_ARENA_MAX=2 -- CMD ARGS`: the same command under each
 * arm, one after the other, each soaked for the same time, every recording
 * kept, then the A/B table (field report 000's controlled experiment).
 */
#include "cli/cli.h"
#include "cli/experiment.h"
#include "cli/soak_cli.h"
#include "render/soak.h"
#include "soak/soak.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static void experiment_usage(FILE *out)
{
	fprintf(out,
"usage: vitals experiment [options] --arm NAME[:KEY=VALUE...] --arm ... -- COMMAND [ARGS...]\n"
"\n"
"Runs COMMAND once per arm, one arm after the other, each with its own\n"
"environment added, soaks each for the same time (vitals soak), keeps every\n"
"recording, and prints the A/B table of vitals compare (the first arm is the\n"
"baseline).  Arms run one at a time so that they do not compete for the CPU\n"
"and memory they are measured on.\n"
"\n"
"  --arm default                      COMMAND as it is\n"
"  --arm cap2:MALLOC_ARENA_MAX=2      with MALLOC_ARENA_MAX=2 in its environment\n"
"  --arm je:LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2\n"
"  --arm both:MALLOC_ARENA_MAX=2:MALLOC_TRIM_THRESHOLD_=131072\n"
"\n"
"options:\n"
"  -f, --for DURATION       soak each arm this long (required; 10m, 1h)\n"
"  -e, --every DURATION     sampling interval (default: --for / 200, 1s..10s)\n"
"  -o, --dir DIR            where the recordings go (default\n"
"                           vitals-experiment-YYYYMMDD-HHMMSS); one ARM.db each,\n"
"                           and ARM.db.out with the command's output\n"
"  --heap                   allocator figures by ptrace (see vitals soak)\n"
"  --html FILE              the comparison's charts as one HTML file\n"
"  --json                   the comparison as JSON (schema vitals.compare v1)\n"
"  -q, --quiet              no progress line\n"
"  -h, --help               this help\n"
"\n"
"Ctrl-C stops the arm being soaked and compares the arms recorded so far.\n"
"\n"
"exit status: 0 ok; 1 an arm's command exited before its time (its recording\n"
"is compared as far as it goes); 2 a recording could not be written; 3 the\n"
"command could not be run; 64 usage.\n");
}

static bool is_assignment(const char *p)
{
	if (!isalpha((unsigned char)*p) && *p != '_')
		return false;
	while (isalnum((unsigned char)*p) || *p == '_')
		p++;
	return *p == '=';
}

int vt_experiment_parse_arm(const char *spec, struct vt_experiment_arm *arm)
{
	const char *colon = strchr(spec, ':'), *p;
	size_t len = colon ? (size_t)(colon - spec) : strlen(spec), i;

	memset(arm, 0, sizeof(*arm));
	if (len == 0 || len >= sizeof(arm->name))
		return -1;
	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)spec[i]) && !strchr("-_.+", spec[i]))
			return -1;   /* the name is also a file name */
	memcpy(arm->name, spec, len);
	p = colon ? colon + 1 : NULL;
	/* a ':' starts another KEY=VALUE only where one follows; else it is part of the value */
	while (p && *p) {
		const char *end;

		if (!is_assignment(p) || arm->nenv == VT_EXPERIMENT_MAX_ENV)
			goto bad;
		for (end = strchr(p, ':'); end && !is_assignment(end + 1); end = strchr(end + 1, ':'))
			;
		len = end ? (size_t)(end - p) : strlen(p);
		if (!(arm->env[arm->nenv] = strndup(p, len)))
			goto bad;
		arm->nenv++;
		p = end ? end + 1 : NULL;
	}
	arm->env_text[0] = '\0';
	for (i = 0; i < arm->nenv; i++) {
		size_t used = strlen(arm->env_text);

		snprintf(arm->env_text + used, sizeof(arm->env_text) - used, "%s%s", i ? " " : "", arm->env[i]);
	}
	return 0;
bad:
	vt_experiment_arm_release(arm);
	return -1;
}

void vt_experiment_arm_release(struct vt_experiment_arm *arm)
{
	size_t i;

	for (i = 0; i < arm->nenv; i++) {
		free(arm->env[i]);
		arm->env[i] = NULL;
	}
	arm->nenv = 0;
}

int vt_experiment_run(const struct vt_experiment *ex, char ***paths_out, size_t *n_out, bool *stopped)
{
	struct vt_procfs pfs;
	struct vt_err err;
	char **paths = calloc(ex->narms, sizeof(*paths));
	size_t i, done = 0;
	int rc = 0;
	volatile sig_atomic_t *stop;

	*paths_out = NULL;
	*n_out = 0;
	*stopped = false;
	if (!paths)
		return 2;
	if (mkdir(ex->dir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "vitals experiment: cannot create '%s': %s\n", ex->dir, strerror(errno));
		free(paths);
		return 2;
	}
	if (vt_cli_open_procfs(&pfs, &err)) {
		free(paths);
		return vt_cli_error(&err);
	}
	vt_cli_catch_stop(&stop);
	for (i = 0; i < ex->narms && !*stop; i++) {
		const struct vt_experiment_arm *arm = &ex->arms[i];
		struct vt_cli_progress pr = { 0 };
		struct vt_soak_config cfg;
		struct vt_soak_result res;
		char prefix[96], *log = NULL, span[32];

		if (asprintf(&paths[i], "%s/%s.db", ex->dir, arm->name) < 0 ||
		    asprintf(&log, "%s/%s.db.out", ex->dir, arm->name) < 0) {
			rc = 2;
			break;
		}
		vt_soak_config_default(&cfg);
		cfg.target.kind = VT_SOAK_COMMAND;
		cfg.target.argv = ex->argv;
		cfg.target.env_add = (char *const *)arm->env;
		cfg.target.output = log;
		cfg.out_path = paths[i];
		cfg.overwrite = true;
		cfg.every_s = ex->every_s;
		cfg.for_s = ex->for_s;
		cfg.heap = ex->heap;
		cfg.heap_every_s = ex->heap_every_s > 0 ? ex->heap_every_s : cfg.heap_every_s;
		cfg.smaps_every_s = ex->for_s / 4;
		cfg.arm = arm->name;
		cfg.env_text = arm->env_text;
		cfg.stop = stop;
		snprintf(prefix, sizeof(prefix), "  arm %zu/%zu %s: ", i + 1, ex->narms, arm->name);
		pr.prefix = prefix;
		if (!ex->quiet) {
			cfg.progress = vt_cli_soak_progress;
			cfg.progress_ctx = &pr;
			fprintf(stderr, "arm %zu/%zu %s%s%s: soaking for %s into %s\n", i + 1, ex->narms, arm->name,
				arm->nenv ? " with " : "", arm->env_text, vt_fmt_span(ex->for_s, span, sizeof(span)),
				paths[i]);
		}
		rc = vt_soak_run(&pfs, &cfg, &res, &err);
		vt_cli_progress_end(&pr);
		free(log);
		if (rc != VT_OK && res.samples == 0) {
			rc = vt_cli_error(&err);
			free(paths[i]);
			paths[i] = NULL;
			break;
		}
		done++;
		if (rc != VT_OK) {
			rc = vt_cli_error(&err);
			break;
		}
		if (strncmp(res.end_reason, "the target", 10) == 0) {
			fprintf(stderr, "vitals experiment: arm %s: %s after %s; compared as far as it went\n",
				arm->name, res.end_reason, vt_fmt_span(res.elapsed_s, span, sizeof(span)));
			rc = VT_EXIT_PARTIAL;
		}
	}
	*stopped = *stop != 0;
	vt_procfs_close(&pfs);
	*paths_out = paths;
	*n_out = done;
	return rc;
}

int cmd_experiment(int argc, char **argv)
{
	enum { OPT_ARM = 256, OPT_HEAP, OPT_HTML, OPT_JSON };
	static const struct option longopts[] = {
		{ "arm", required_argument, NULL, OPT_ARM },
		{ "for", required_argument, NULL, 'f' },
		{ "every", required_argument, NULL, 'e' },
		{ "dir", required_argument, NULL, 'o' },
		{ "heap", no_argument, NULL, OPT_HEAP },
		{ "html", required_argument, NULL, OPT_HTML },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct vt_experiment ex = { 0 };
	struct vt_experiment_arm arms[VT_EXPERIMENT_MAX_ARMS];
	const char *html = NULL;
	char dir[96], **paths = NULL, title[256];
	bool json = false, stopped = false;
	size_t i, n = 0;
	int c, rc = 64, rc2;

	ex.arms = arms;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+f:e:o:qh", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_ARM:
			if (ex.narms == VT_EXPERIMENT_MAX_ARMS) {
				vt_cli_usage_error("experiment", "at most %d arms", VT_EXPERIMENT_MAX_ARMS);
				goto out;
			}
			if (vt_experiment_parse_arm(optarg, &arms[ex.narms])) {
				vt_cli_usage_error("experiment", "'%s' is not NAME[:KEY=VALUE...] (NAME: letters, "
						   "digits, - _ . +)", optarg);
				goto out;
			}
			ex.narms++;
			break;
		case 'f':
		case 'e':
			if (!vt_parse_duration(optarg, c == 'f' ? &ex.for_s : &ex.every_s)) {
				vt_cli_usage_error("experiment", "'%s' is not a duration", optarg);
				goto out;
			}
			break;
		case 'o': ex.dir = optarg; break;
		case OPT_HEAP: ex.heap = true; break;
		case OPT_HTML: html = optarg; break;
		case OPT_JSON: json = true; break;
		case 'q': ex.quiet = true; break;
		case 'h': experiment_usage(stdout); rc = 0; goto out;
		default: experiment_usage(stderr); goto out;
		}
	}
	if (optind >= argc || strcmp(argv[optind - 1], "--") != 0) {
		vt_cli_usage_error("experiment", "give the command after --");
		goto out;
	}
	if (ex.narms < 2) {
		vt_cli_usage_error("experiment", "give at least two --arm (the first is the baseline)");
		goto out;
	}
	for (i = 0; i < ex.narms; i++)
		for (size_t j = 0; j < i; j++)
			if (strcmp(arms[i].name, arms[j].name) == 0) {
				vt_cli_usage_error("experiment", "two arms are called '%s'", arms[i].name);
				goto out;
			}
	if (ex.for_s < 1) {
		vt_cli_usage_error("experiment", "--for is required (at least 1s): how long to soak each arm");
		goto out;
	}
	if (ex.every_s == 0)
		ex.every_s = ex.for_s / 200 < 1 ? 1 : ex.for_s / 200 > 10 ? 10 : ex.for_s / 200;
	if (ex.every_s < 0.1) {
		vt_cli_usage_error("experiment", "the interval must be at least 0.1s");
		goto out;
	}
	if (!ex.dir) {
		time_t now = time(NULL);
		struct tm tm;

		strftime(dir, sizeof(dir), "vitals-experiment-%Y%m%d-%H%M%S", localtime_r(&now, &tm));
		ex.dir = dir;
	}
	ex.argv = argv + optind;
	rc = vt_experiment_run(&ex, &paths, &n, &stopped);
	if (n >= 2) {
		snprintf(title, sizeof(title), "experiment: %zu arms of %s%s, %s each", n, ex.argv[0],
			 ex.argv[1] ? " ..." : "", vt_fmt_span(ex.for_s, dir, sizeof(dir)));
		if (stopped)
			fprintf(stderr, "vitals experiment: stopped; comparing the %zu arms recorded\n", n);
		rc2 = vt_cli_compare_files(paths, n, NULL, json, NULL, html, VT_M_COMMITTED, title);
		if (rc2)
			rc = rc2;
	} else if (rc == 0) {
		fprintf(stderr, "vitals experiment: fewer than two arms were recorded; nothing to compare\n");
		rc = 2;
	}
	if (n && !json) {
		printf("recordings:");
		for (i = 0; i < n; i++)
			printf(" %s", paths[i]);
		printf("\n");
	}
	for (i = 0; paths && i < ex.narms; i++)
		free(paths[i]);
	free(paths);
out:
	for (i = 0; i < ex.narms; i++)
		vt_experiment_arm_release(&arms[i]);
	return rc;
}

/*
 * cmd_experiment.c — `vitals experiment --for 10m --arm default
 * --arm cap2:MALLOC_ARENA_MAX=2 -- CMD ARGS`: the same command under each
 * arm, one after the other, each soaked for the same time, every recording
 * kept, then the A/B table (field report 000's controlled experiment).  The
 * runner is soak/experiment.c; this file reads the options, shows the
 * progress and writes the comparison.
 */
#include "cli/cli.h"
#include "cli/soak_cli.h"
#include "render/soak.h"
#include "soak/experiment.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

enum { OPT_ARM = 1, OPT_FOR, OPT_EVERY, OPT_DIR, OPT_HEAP, OPT_HTML, OPT_JSON, OPT_QUIET, OPT_FORCE, OPT_LIMIT,
       OPT_TRIM_EVERY };

static const struct vt_option experiment_options[] = {
	{ "arm", 0, "NAME[:KEY=VALUE...]", "an arm: COMMAND with these added to its environment\n"
					   "(at least two; the first is the baseline)", OPT_ARM },
	{ "for", 'f', "DURATION", "soak each arm this long (required; 10m, 1h)", OPT_FOR },
	{ "every", 'e', "DURATION", "sampling interval (default: --for / 200, 1s..10s)", OPT_EVERY },
	{ "dir", 'o', "DIR", "where the recordings go (default\n"
			     "vitals-experiment-YYYYMMDD-HHMMSS; one ARM.db each,\n"
			     "and ARM.db.out with the command's output; one that\n"
			     "is not empty only with --force)", OPT_DIR },
	{ "heap", 0, NULL, "allocator figures by ptrace (see vitals soak)", OPT_HEAP },
	{ "trim-every", 0, "ARM=DURATION", "in arm ARM, call malloc_trim(0) in the command this\n"
					   "often (glibc; by ptrace or its agent, as vitals heap\n"
					   "--trim does: one thread stopped for the call), each\n"
					   "recorded as a trim event with what it returned and the\n"
					   "stop; compare it with an arm that changes the allocator", OPT_TRIM_EVERY },
	{ "html", 0, "FILE", "the comparison's charts as one HTML file", OPT_HTML },
	{ "json", 0, NULL, "the comparison as JSON (schema vitals.compare, docs/json.md)", OPT_JSON },
	{ "limit", 0, NULL, "recommend a memory limit for each arm (see vitals analyze)", OPT_LIMIT },
	{ "force", 0, NULL, "write into a DIR that is not empty, replacing the arms'\n"
			    "files there, and overwrite the --html file", OPT_FORCE },
	{ "quiet", 'q', NULL, "no progress line", OPT_QUIET },
	{ 0 }
};

static const struct vt_exit_note experiment_exits[] = {
	{ 1, "an arm's command exited before its time (its recording is compared as far as it goes)" },
	{ 2, "a recording could not be written" }, { 3, "the command could not be run" },
	{ 64, "usage; DIR is not empty (without --force), or a recording in it is being written" },
	{ 130, "stopped on request (Ctrl-C): the arms recorded are kept, and compared when two or more" },
	{ -1, NULL },
};

static const char *const experiment_examples[] = {
	"vitals experiment --for 1h --limit --arm default --arm cap2:MALLOC_ARENA_MAX=2 -- ./server --port 8080",
	"vitals experiment --for 30m --arm default --arm je:LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2 "
	"-o exp -- ./server",
	"vitals experiment --for 30m --arm default --arm trim40 --trim-every trim40=40s --arm cap2:MALLOC_ARENA_MAX=2 "
	"-- ./server",
	NULL,
};

struct experiment_opts {
	struct vt_experiment ex;
	struct vt_experiment_arm arms[VT_EXPERIMENT_MAX_ARMS];
	const char *html;
	bool json, quiet, limit;
	struct { char arm[32]; double every_s; } trims[VT_EXPERIMENT_MAX_ARMS];   /* --trim-every */
	size_t ntrims;
};

static int experiment_option(void *ctx, int id, const char *arg)
{
	struct experiment_opts *o = ctx;

	switch (id) {
	case OPT_ARM:
		if (o->ex.narms == VT_EXPERIMENT_MAX_ARMS)
			return vt_cli_usage_error("experiment", "at most %d arms", VT_EXPERIMENT_MAX_ARMS);
		if (vt_experiment_parse_arm(arg, &o->arms[o->ex.narms]))
			return vt_cli_usage_error("experiment", "'%s' is not NAME[:KEY=VALUE...] (NAME: letters, "
						  "digits, - _ . +)", arg);
		o->ex.narms++;
		return 0;
	case OPT_FOR: return vt_cli_duration(&vt_cmd_experiment, "for", arg, 1, 0, &o->ex.for_s);
	case OPT_EVERY: return vt_cli_duration(&vt_cmd_experiment, "every", arg, 0.1, 0, &o->ex.every_s);
	case OPT_DIR: o->ex.dir = arg; return 0;
	case OPT_HEAP: o->ex.heap = true; return 0;
	case OPT_HTML: o->html = arg; return 0;
	case OPT_JSON: o->json = true; return 0;
	case OPT_QUIET: o->quiet = true; return 0;
	case OPT_LIMIT: o->limit = true; return 0;
	case OPT_TRIM_EVERY: {
		const char *eq = strrchr(arg, '=');
		int rc;

		if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof(o->trims[0].arm))
			return vt_cli_usage_error("experiment", "--trim-every '%s' is not ARM=DURATION (trim40=40s)", arg);
		if (o->ntrims == VT_EXPERIMENT_MAX_ARMS)
			return vt_cli_usage_error("experiment", "at most %d --trim-every", VT_EXPERIMENT_MAX_ARMS);
		if ((rc = vt_cli_duration(&vt_cmd_experiment, "trim-every", eq + 1, 1, 0, &o->trims[o->ntrims].every_s)))
			return rc;
		snprintf(o->trims[o->ntrims].arm, sizeof(o->trims[0].arm), "%.*s", (int)(eq - arg), arg);
		o->ntrims++;
		return 0;
	}
	case OPT_FORCE: o->ex.overwrite = true; return 0;
	}
	return 0;
}

static int check_options(struct experiment_opts *o, const struct vt_args *args)
{
	struct stat sb;
	size_t i, j;

	if (!args->after || !args->after[0] || args->noperands)
		return vt_cli_usage_error("experiment", "give the command after --");
	if (o->ex.narms < 2)
		return vt_cli_usage_error("experiment", "give at least two --arm (the first is the baseline)");
	for (i = 0; i < o->ex.narms; i++)
		for (j = 0; j < i; j++)
			if (strcmp(o->arms[i].name, o->arms[j].name) == 0)
				return vt_cli_usage_error("experiment", "two arms are called '%s'", o->arms[i].name);
	if (o->ex.for_s < 1)
		return vt_cli_usage_error("experiment", "--for is required (at least 1s): how long to soak each arm");
	/* each --trim-every names an arm: it trims, and its recording says so beside its environment */
	for (i = 0; i < o->ntrims; i++) {
		struct vt_experiment_arm *arm = NULL;
		char text[sizeof(arm->env_text) + 64], span[32];
		size_t len;

		for (j = 0; j < o->ex.narms && !arm; j++)
			if (strcmp(o->arms[j].name, o->trims[i].arm) == 0)
				arm = &o->arms[j];
		if (!arm)
			return vt_cli_usage_error("experiment", "--trim-every names '%s', which is no --arm", o->trims[i].arm);
		if (arm->trim_every_s > 0)
			return vt_cli_usage_error("experiment", "two --trim-every for arm '%s'", arm->name);
		arm->trim_every_s = o->trims[i].every_s;
		snprintf(text, sizeof(text), "%s%smalloc_trim every %s", arm->env_text, arm->env_text[0] ? " and " : "",
			 vt_fmt_span(arm->trim_every_s, span, sizeof(span)));
		len = strlen(text) < sizeof(arm->env_text) ? strlen(text) : sizeof(arm->env_text) - 1;
		memcpy(arm->env_text, text, len);
		arm->env_text[len] = '\0';
	}
	/* said now, not after the arms have run their hours */
	if (o->html && !o->ex.overwrite && lstat(o->html, &sb) == 0)
		return vt_cli_usage_error("experiment", "'%s' already exists: give another --html, or --force to "
					  "overwrite it", o->html);
	return 0;
}

/* Progress and each arm's start and end, on stderr. */
struct show {
	const struct experiment_opts *o;
	struct vt_cli_progress pr;
	char prefix[96];
};

static void arm_started(void *ctx, size_t i, const char *path)
{
	struct show *sh = ctx;
	const struct vt_experiment *ex = &sh->o->ex;
	const struct vt_experiment_arm *arm = &ex->arms[i];
	char span[32];

	snprintf(sh->prefix, sizeof(sh->prefix), "  arm %zu/%zu %s: ", i + 1, ex->narms, arm->name);
	sh->pr = (struct vt_cli_progress){ .prefix = sh->prefix };
	if (!sh->o->quiet)
		fprintf(stderr, "arm %zu/%zu %s%s%s: soaking for %s into %s\n", i + 1, ex->narms, arm->name,
			arm->nenv ? " with " : "", arm->env_text, vt_fmt_span(ex->for_s, span, sizeof(span)), path);
}

static void arm_progress(void *ctx, size_t i, const struct vt_soak_progress *p)
{
	struct show *sh = ctx;

	(void)i;
	if (!sh->o->quiet)
		vt_cli_soak_progress(&sh->pr, p);
}

static void arm_ended(void *ctx, size_t i, const struct vt_soak_result *res)
{
	struct show *sh = ctx;
	char why[96], span[32];

	vt_cli_progress_end(&sh->pr);
	if (res->end == VT_SOAK_END_TARGET_EXITED)
		fprintf(stderr, "vitals experiment: arm %s: %s after %s; compared as far as it went\n",
			sh->o->ex.arms[i].name, vt_soak_end_words(res, why, sizeof(why)),
			vt_fmt_span(res->elapsed_s, span, sizeof(span)));
}

static int experiment_run(const struct vt_command *cmd, int argc, char **argv)
{
	struct experiment_opts o = { 0 };
	struct show sh = { &o };
	struct vt_experiment_result res = { 0 };
	struct vt_compare_set set;
	struct vt_args args;
	struct vt_procfs pfs;
	struct vt_err err;
	char dir[96], title[256], span[32], **paths = NULL;
	size_t i;
	int rc, rc2;

	o.ex.arms = o.arms;
	if ((rc = vt_cli_parse(cmd, argc, argv, experiment_option, &o, &args)) || (rc = check_options(&o, &args)))
		goto out;
	if (o.ex.every_s == 0)
		o.ex.every_s = o.ex.for_s / 200 < 1 ? 1 : o.ex.for_s / 200 > 10 ? 10 : o.ex.for_s / 200;
	if (!o.ex.dir) {
		time_t now = time(NULL);
		struct tm tm;

		strftime(dir, sizeof(dir), "vitals-experiment-%Y%m%d-%H%M%S", localtime_r(&now, &tm));
		o.ex.dir = dir;
	}
	o.ex.argv = args.after;
	o.ex.progress = arm_progress;
	o.ex.arm_started = arm_started;
	o.ex.arm_ended = arm_ended;
	o.ex.ctx = &sh;
	if ((rc = vt_cli_open_procfs(&pfs, &err))) {
		rc = vt_cli_error(&err);
		goto out;
	}
	vt_cli_catch_stop(&o.ex.stop);
	rc = vt_experiment_run(&pfs, &o.ex, &res, &err);
	vt_procfs_close(&pfs);
	if (rc != VT_OK) {
		rc = vt_cli_error(&err);
		goto out;
	}
	/* an arm that failed after others recorded: say why, compare what there is */
	for (i = 0; i < res.narms; i++)
		if (res.arms[i].rc != VT_OK && res.arms[i].path) {
			rc = vt_cli_error(&res.arms[i].err);
			break;
		}
	for (i = 0; i < res.recorded && rc == VT_OK; i++)
		if (res.arms[i].soak.end == VT_SOAK_END_TARGET_EXITED)
			rc = VT_EXIT_PARTIAL;
	paths = calloc(res.narms + 1, sizeof(*paths));
	for (i = 0; paths && i < res.recorded; i++)
		paths[i] = res.arms[i].path;
	if (res.recorded >= 2 && paths) {
		snprintf(title, sizeof(title), "experiment: %zu arms of %s%s, %s each", res.recorded, o.ex.argv[0],
			 o.ex.argv[1] ? " ..." : "", vt_fmt_span(o.ex.for_s, span, sizeof(span)));
		if (res.stopped)
			fprintf(stderr, "vitals experiment: stopped on request; comparing the %zu arms recorded\n",
				res.recorded);
		if (vt_compare_files(paths, res.recorded, NULL, VT_M_COMMITTED, &set, &err) != VT_OK) {
			rc = vt_cli_error(&err);
		} else {
			rc2 = vt_cli_compare_write("experiment", &set,
						   &(struct vt_cli_compare_out){ .json = o.json, .html = o.html,
										 .title = title, .force = o.ex.overwrite,
										 .limits = o.limit });
			if (rc2)
				rc = rc2;
			vt_compare_set_release(&set);
		}
	} else if (res.stopped) {
		fprintf(stderr, "vitals experiment: stopped on request with %zu arm%s recorded; nothing to compare\n",
			res.recorded, res.recorded == 1 ? "" : "s");
	} else if (rc == VT_OK) {
		fprintf(stderr, "vitals experiment: fewer than two arms were recorded; nothing to compare\n");
		rc = vt_code_exit(VT_E_FAIL);
	}
	if (res.stopped && (rc == VT_OK || rc == VT_EXIT_PARTIAL))
		rc = VT_EXIT_STOPPED;
	if (res.recorded && !o.json) {
		printf("recordings:");
		for (i = 0; i < res.recorded; i++)
			printf(" %s", res.arms[i].path);
		printf("\n");
	}
out:
	free(paths);
	vt_experiment_result_release(&res);
	for (i = 0; i < o.ex.narms; i++)
		vt_experiment_arm_release(&o.arms[i]);
	return rc == VT_CLI_HELP ? VT_EXIT_OK : rc;
}

const struct vt_command vt_cmd_experiment = {
	.name = "experiment",
	.summary = "run a command under several arms (env), soak each, compare",
	.synopsis = "[options] --for DURATION --arm NAME[:KEY=VALUE...] --arm ... -- COMMAND [ARGS...]",
	.description =
"Runs COMMAND once per arm, one arm after the other, each with its own\n"
"environment added, soaks each for the same time (vitals soak), keeps every\n"
"recording, and prints the A/B table of vitals compare (the first arm is the\n"
"baseline).  Arms run one at a time so that they do not compete for the CPU\n"
"and memory they are measured on.  \"{arm}\" in an argument of COMMAND becomes\n"
"the arm's name (--log /tmp/{arm}.log).\n"
"\n"
"  --arm default                      COMMAND as it is\n"
"  --arm cap2:MALLOC_ARENA_MAX=2      with MALLOC_ARENA_MAX=2 in its environment\n"
"  --arm je:LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2\n"
"  --arm both:MALLOC_ARENA_MAX=2:MALLOC_TRIM_THRESHOLD_=131072\n"
"  --arm trim40 --trim-every trim40=40s\n"
"                                     COMMAND as it is, and vitals calls\n"
"                                     malloc_trim(0) in it every 40 s\n"
"\n"
"A --trim-every arm answers what a periodic trim buys over the whole run (vitals\n"
"heap --trim --follow measures one trim's refill): each trim is an event in its\n"
"recording with what it returned and how long a thread was stopped.\n",
	.options = experiment_options,
	.after = "Ctrl-C stops the arm being soaked and compares the arms recorded so far.\n",
	.exits = experiment_exits,
	.examples = experiment_examples,
	.takes_command = true,
	.libs = VT_CMD_LIBDW,
	.run = experiment_run,
};

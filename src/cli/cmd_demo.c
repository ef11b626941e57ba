/*
 * cmd_demo.c — `vitals demo`: field report 000 in about three minutes.
 *
 * The bundled arena_churn target runs twice at once — default glibc and
 * MALLOC_ARENA_MAX=2 — as the two arms of an experiment soaked side by side
 * (soak/experiment.c, in this process).  Then: both snapped side by side
 * with the target's own count of live bytes, the allocator's own figures,
 * each soak's verdict and the A/B table on the settled windows, and how to
 * do the same on your own service.  The targets are ours: they are stopped
 * (SIGTERM) and reaped at the end, also on Ctrl-C.
 */
#include "cli/cli.h"
#include "cli/soak_cli.h"
#include "analyze/compare.h"
#include "analyze/heap_verdict.h"
#include "base/unknown.h"
#include "render/heap.h"
#include "render/table.h"
#include "render/view.h"
#include "sample/heap.h"
#include "sample/sample.h"
#include "soak/experiment.h"
#include "soak/follow.h"
#include "base/json_lib.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ARMS 2

enum { OPT_SECONDS = 1, OPT_THREADS, OPT_DIR, OPT_JSON };

static const struct vt_option demo_options[] = {
	{ "seconds", 0, "DURATION", "how long both arms churn and are soaked (default 150s;\n"
				    "10s to 1h)", OPT_SECONDS },
	{ "threads", 0, "N", "worker threads per arm (default 8)", OPT_THREADS },
	{ "dir", 0, "DIR", "keep the two recordings in DIR (default: a temporary\n"
			   "directory, removed at the end)", OPT_DIR },
	{ "json", 0, NULL, "the comparison as JSON (schema vitals.compare, docs/json.md)", OPT_JSON },
	{ 0 }
};

static const struct vt_exit_note demo_exits[] = {
	{ 2, "the demo could not run (a missing target, a directory that cannot be written)" },
	{ 130, "interrupted (Ctrl-C): the targets were stopped" }, { -1, NULL },
};

static const char *const demo_examples[] = {
	"vitals demo",
	"vitals demo --seconds 60 --dir demo-recordings",
	NULL,
};

struct demo_opts {
	double seconds;
	long threads;
	const char *dir;
	bool json;
};

static int demo_option(void *ctx, int id, const char *arg)
{
	struct demo_opts *o = ctx;

	switch (id) {
	case OPT_SECONDS: return vt_cli_duration(&vt_cmd_demo, "seconds", arg, 10, 3600, &o->seconds);
	case OPT_THREADS: return vt_cli_count(&vt_cmd_demo, "threads", arg, 2, 256, &o->threads);
	case OPT_DIR: o->dir = arg; return 0;
	case OPT_JSON: o->json = true; return 0;
	}
	return 0;
}

/* The arms: labels for people, and what each sets in the target's environment. */
static const struct {
	const char *name, *label;
	const char *env[2];        /* "KEY" removes KEY, "KEY=V" sets it */
	const char *env_text;
} arm_specs[ARMS] = {
	{ "default", "default glibc", { "MALLOC_ARENA_MAX", NULL }, "" },
	{ "cap2", "MALLOC_ARENA_MAX=2", { "MALLOC_ARENA_MAX=2", NULL }, "MALLOC_ARENA_MAX=2" },
};

/*
 * The target sits next to the vitals binary in the build tree
 * (<dir>/targets/arena_churn), and under lib/vitals once installed
 * (<prefix>/bin/../lib/vitals/targets/arena_churn).
 */
static int find_target(char *path, size_t cap)
{
	char self[PATH_MAX - 64];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n <= 0)
		return -1;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	snprintf(path, cap, "%s/targets/arena_churn", self);
	if (access(path, X_OK) == 0)
		return 0;
	snprintf(path, cap, "%s/../lib/vitals/targets/arena_churn", self);
	return access(path, X_OK);
}

/* Last JSON line of the target's truth file: its exact live bytes. */
static uint64_t read_live_bytes(const char *path)
{
	char line[4096], last[4096] = "";
	FILE *f = fopen(path, "r");
	json_t *j, *v;
	uint64_t live = VT_NA;

	if (!f)
		return VT_NA;
	while (fgets(line, sizeof(line), f))
		if (line[0] == '{')
			memcpy(last, line, sizeof(last));
	fclose(f);
	j = json_loads(last, 0, NULL);
	if (j && (v = json_object_get(j, "live_bytes")) && json_is_integer(v))
		live = (uint64_t)json_integer_value(v);
	json_decref(j);
	return live;
}

/* The progress while both arms soak: time left and each arm's committed memory. */
struct show {
	double seconds;
	double elapsed;
	double committed[ARMS];
	double last_line;
	bool tty;
};

static void arm_progress(void *ctx, size_t arm, const struct vt_soak_progress *p)
{
	struct show *sh = ctx;
	char left[32], size[32];
	size_t i;

	sh->committed[arm] = p->committed;
	sh->elapsed = fmax(sh->elapsed, p->elapsed_s);
	if (arm != ARMS - 1 || (!sh->tty && sh->elapsed - sh->last_line < 30 && sh->last_line > 0))
		return;
	sh->last_line = sh->elapsed;
	fprintf(stderr, "%s  soaking both arms: %s left", sh->tty ? "\r\033[K" : "",
		vt_fmt_span_like(fmax(0, sh->seconds - sh->elapsed), sh->seconds, left, sizeof(left)));
	for (i = 0; i < ARMS; i++)
		fprintf(stderr, " · %s committed %s", arm_specs[i].name, vt_fmt_size(sh->committed[i], size, sizeof(size)));
	fputs(sh->tty ? "" : "\n", stderr);
}

/* The allocator's own view of each arm (mallinfo2 by ptrace), one line each. */
static void print_heaps(const struct vt_procfs *pfs, const pid_t *pids)
{
	struct vt_heap_opts opts = { .arenas = true, .timeout_ms = 2000 };
	struct vt_heap_verdict v;
	struct vt_heap_sample h;
	struct vt_err err;
	char a[32], b[32], line[VT_HEAP_LINE_MAX];
	int i;

	printf("THE ALLOCATOR'S OWN FIGURES (vitals heap: mallinfo2 read inside each process)\n");
	for (i = 0; i < ARMS; i++) {
		if (vt_heap_take(pfs, pids[i], &opts, &h, &err) != VT_OK) {
			printf("  %-20s not read: %s\n", arm_specs[i].label, err.msg);
			continue;
		}
		vt_heap_judge(&h, (uint64_t)sysconf(_SC_PAGESIZE), &v);
		printf("  %-20s live %s, free but held %s (live_fraction %.2f) in %zu arena%s\n"
		       "  %-20s -> %s\n", arm_specs[i].label, vt_fmt_bytes(v.live, a, sizeof(a)),
		       vt_fmt_bytes(h.mi.fordblks, b, sizeof(b)), vt_mallinfo_live_fraction(&h.mi),
		       h.info.n_arenas, h.info.n_arenas == 1 ? "" : "s", "", vt_render_heap_headline(&v, line,
													sizeof(line)));
		vt_heap_release(&h);
	}
	printf("\n");
}

static void print_verdict(const struct vt_sample *s, const uint64_t *live)
{
	char a[32], b[32];
	int i;

	printf("WHAT THIS SHOWS\n");
	for (i = 0; i < ARMS; i++) {
		const struct vt_sample *x = &s[i];

		printf("  %-20s %2d arena heap%s, RssAnon %s, live (target's own count) %s", arm_specs[i].label,
		       x->arenas.heaps, x->arenas.heaps == 1 ? "" : "s", vt_fmt_bytes(x->status.rss_anon, a, sizeof(a)),
		       vt_fmt_bytes(live[i], b, sizeof(b)));
		if (vt_known(live[i]) && vt_known(x->status.rss_anon) && x->status.rss_anon)
			printf(" = %.0f%% of RssAnon", 100.0 * (double)live[i] / (double)x->status.rss_anon);
		printf("\n");
	}
	if (vt_known(s[0].committed) && vt_known(s[1].committed) && s[0].committed) {
		double delta = (double)s[1].committed - (double)s[0].committed;

		printf("  committed: %s -> %s (%+.0f%%) with the arena cap, same work, same live data\n",
		       vt_fmt_bytes(s[0].committed, a, sizeof(a)), vt_fmt_bytes(s[1].committed, b, sizeof(b)),
		       100.0 * delta / (double)s[0].committed);
	}
	printf("\n  Each glibc arena keeps the memory its threads freed; with many arenas that\n"
	       "  free-but-held memory multiplies.  A snapshot shows the shape; the soaks\n"
	       "  below say whether it settled (a plateau) or still grows, and the A/B table\n"
	       "  compares the two on their settled windows.\n\n");
}

/* Each soak's verdict, one line each. */
static void print_soaks(const struct vt_compare_set *set)
{
	size_t i;

	printf("WHAT THE SOAKS SAY (vitals analyze)\n");
	for (i = 0; i < set->cmp.narms; i++) {
		const struct vt_soak_verdict *v = &set->cmp.arms[i].verdict;
		char why[VT_SOAK_WHY_MAX];

		printf("  %-20s %s: %s\n", arm_specs[i].label, vt_verdict_name(v->kind),
		       vt_soak_why(v, why, sizeof(why)));
	}
	printf("\n");
}

/*
 * The commands to run next, named as this vitals was run: make demo runs
 * build/vitals, and "vitals snap PID" is not a command in a clone.
 */
static void print_next_steps(void)
{
	static const struct { const char *args, *what; } steps[] = {
		{ "snap PID", "memory breakdown, arenas, cap, cgroup" },
		{ "heap PID", "the allocator's own figures: live vs free-held" },
		{ "threads PID", "CPU now (not ps's average), per thread, and why" },
		{ "threads --watch PID", "the same, live" },
		{ "profile PID", "where the CPU goes, bucketed by what the code does" },
		{ "soak PID -o before.db --for 4h", "leave it running; Ctrl-C ends it early" },
		{ "analyze before.db", "leak, plateau, step or still settling, with evidence" },
		{ "analyze --limit before.db", "a memory limit for its cgroup, from the settled window" },
		{ "compare before.db after.db", "A/B on the settled windows (--html for charts)" },
		{ "experiment --for 1h --arm default --arm cap2:MALLOC_ARENA_MAX=2 -- CMD ARGS",
		  "the same command under each arm, soaked and compared" },
		{ "census PID", "what fills the heap: live and free chunks, what they hold" },
		{ "serve --pid PID", "memory, allocator and CPU figures for Prometheus (:9464)" },
		{ "caps PID", "what works on this host, and what grants the rest" },
	};
	/* as typed: a path (build/vitals) when it has a slash, else found on PATH */
	const char *self = strchr(program_invocation_name, '/') ? program_invocation_name : "vitals";
	char line[256], shown[128];
	int width = 0;

	vt_text_printable(self, shown, sizeof(shown));
	for (size_t i = 0; i < sizeof(steps) / sizeof(*steps); i++)
		if (strlen(steps[i].args) < 40 && (int)strlen(steps[i].args) > width)
			width = (int)strlen(steps[i].args);
	printf("\nON YOUR OWN SERVICE\n");
	for (size_t i = 0; i < sizeof(steps) / sizeof(*steps); i++) {
		snprintf(line, sizeof(line), "%s %s", shown, steps[i].args);
		if (strlen(steps[i].args) < 40)
			printf("    %-*s  %s\n", (int)strlen(shown) + 1 + width, line, steps[i].what);
		else   /* too long for the column: its words on the next line */
			printf("    %s\n    %-*s  %s\n", line, (int)strlen(shown) + 1 + width, "", steps[i].what);
	}
}

/* The story once both soaks are done and both targets still run. */
static int tell(const struct vt_procfs *pfs, const struct vt_experiment_result *res, const char *truth_dir,
		const struct demo_opts *o)
{
	static const char *const labels[ARMS] = { "default glibc", "MALLOC_ARENA_MAX=2" };
	struct vt_sample samples[ARMS];
	struct vt_sample_opts opts = { 0 };
	struct vt_snap_report report = { 0 };
	struct vt_compare_set set;
	struct vt_err err;
	char *paths[ARMS], truth[PATH_MAX];
	pid_t pids[ARMS];
	uint64_t live[ARMS];
	int i, taken = 0, status = VT_EXIT_OK;

	for (i = 0; i < ARMS; i++) {
		paths[i] = res->arms[i].path;
		pids[i] = res->arms[i].soak.child;
		snprintf(truth, sizeof(truth), "%s/%s.truth", truth_dir, arm_specs[i].name);
		live[i] = read_live_bytes(truth);
	}
	if (vt_compare_files(paths, ARMS, "default,cap2", VT_M_COMMITTED, &set, &err) != VT_OK)
		return vt_cli_error(&err);
	if (o->json) {
		status = vt_cli_compare_write("demo", &set, &(struct vt_cli_compare_out){ true, NULL, NULL,
							"demo: default glibc vs MALLOC_ARENA_MAX=2" });
		vt_compare_set_release(&set);
		return status;
	}
	while (taken < ARMS) {
		if (!pids[taken] || vt_sample_take(pfs, pids[taken], &opts, &samples[taken], &err) != VT_OK) {
			status = pids[taken] ? vt_cli_error(&err) : vt_code_exit(VT_E_FAIL);
			break;
		}
		taken++;
	}
	if (status == VT_EXIT_OK) {
		report.samples = samples;
		report.n = ARMS;
		report.labels = labels;
		report.min_region = 16ull << 20;
		report.title = "demo: default glibc vs MALLOC_ARENA_MAX=2";
		vt_view("text")->snap(stdout, &report);
		print_heaps(pfs, pids);
		print_verdict(samples, live);
		print_soaks(&set);
		printf("THE A/B TABLE (vitals compare default.db cap2.db)\n");
		status = vt_cli_compare_write("demo", &set, &(struct vt_cli_compare_out){ false, NULL, NULL, NULL });
		print_next_steps();
		if (o->dir)
			printf("\nthe recordings: %s and %s (vitals analyze --html report.html %s)\n", paths[0],
			       paths[1], paths[1]);
	}
	for (i = 0; i < taken; i++)
		vt_sample_release(&samples[i]);
	vt_compare_set_release(&set);
	return status;
}

/* Remove what the demo left in dir: the recordings unless kept, their WAL files, the target's output. */
static void clean(const char *dir, bool keep_recordings)
{
	static const char *const suffixes[] = { ".truth", ".db.out", ".db", ".db-wal", ".db-shm" };
	char path[PATH_MAX];
	size_t i, k;

	for (i = 0; i < ARMS; i++)
		for (k = 0; k < sizeof(suffixes) / sizeof(suffixes[0]); k++) {
			if (keep_recordings && k >= 2)
				continue;
			snprintf(path, sizeof(path), "%s/%s%s", dir, arm_specs[i].name, suffixes[k]);
			unlink(path);
		}
}

static int demo_run(const struct vt_command *cmd, int argc, char **argv)
{
	struct demo_opts o = { .seconds = 150, .threads = 8 };
	struct vt_experiment_arm arms[ARMS];
	struct vt_experiment ex = { 0 };
	struct vt_experiment_result res = { 0 };
	struct show sh = { .tty = isatty(STDERR_FILENO) };
	struct vt_args args;
	struct vt_procfs pfs;
	struct vt_err err;
	char target[PATH_MAX], tmpdir[] = "/tmp/vitals-demo-XXXXXX", truth[PATH_MAX + 16], secs[32], thr[32];
	char span[32];
	char *target_argv[] = { target, "--seconds", secs, "--threads", thr, "--max-block-kb", "64", "--truth",
				truth, NULL };
	size_t i;
	int rc, status;

	if ((rc = vt_cli_parse(cmd, argc, argv, demo_option, &o, &args)))
		return rc == VT_CLI_HELP ? VT_EXIT_OK : rc;
	if (args.noperands)
		return vt_cli_usage_error("demo", "unexpected argument '%s'", args.operands[0]);
	if (find_target(target, sizeof(target)) != 0) {
		vt_err_set(&err, VT_E_NOTFOUND, errno, "the demo target '%s' is missing", target);
		vt_err_hint(&err, "build it with 'make' in the vitals source tree, or 'make install' it");
		return vt_cli_error(&err);
	}
	if (!mkdtemp(tmpdir)) {
		vt_err_set(&err, VT_E_IO, errno, "cannot create a temporary directory: %s", strerror(errno));
		return vt_cli_error(&err);
	}
	if (o.dir && mkdir(o.dir, 0755) != 0 && errno != EEXIST) {
		vt_err_set(&err, VT_E_IO, errno, "cannot create '%s': %s", o.dir, strerror(errno));
		rmdir(tmpdir);
		return vt_cli_error(&err);
	}
	if ((rc = vt_cli_open_procfs(&pfs, &err))) {
		rmdir(tmpdir);
		return vt_cli_error(&err);
	}
	for (i = 0; i < ARMS; i++)
		if (vt_experiment_arm_set(&arms[i], arm_specs[i].name, arm_specs[i].env, arm_specs[i].env_text))
			return vt_cli_nomem("demo");
	/* the targets outlive the soaks by a minute: the snapshots and heap probes come after */
	snprintf(secs, sizeof(secs), "%.0f", o.seconds + 60);
	snprintf(thr, sizeof(thr), "%ld", o.threads);
	snprintf(truth, sizeof(truth), "%s/{arm}.truth", tmpdir);
	/* blocks up to 64 KiB: the arenas sprawl as with larger ones, and reach
	 * their high water within seconds, so that a few minutes show a plateau */
	ex = (struct vt_experiment){
		.arms = arms, .narms = ARMS, .argv = target_argv, .dir = o.dir ? o.dir : tmpdir,
		.for_s = o.seconds,
		/* one sample a second, or fewer on a long demo: 150-300 samples an arm */
		.every_s = o.seconds / 150 < 1 ? 1 : o.seconds / 150,
		.smaps_every_s = o.seconds / 3,
		/* the arms are our own targets: mallinfo2 by ptrace every 1/15 of the
		 * run gives the A/B table its live and free-held rows */
		.heap = true, .heap_every_s = o.seconds / 15,
		.side_by_side = true, .keep_commands = true,
		/* --dir is the demo's own folder: a second demo replaces its recordings */
		.overwrite = true,
		.progress = arm_progress, .ctx = &sh,
	};
	sh.seconds = o.seconds;
	vt_cli_catch_stop(&ex.stop);
	fprintf(stderr, "vitals demo: the same allocation churn (%ld threads, bounded live set) under default\n"
		"glibc and under MALLOC_ARENA_MAX=2, both soaked for %s into %s\n", o.threads,
		vt_fmt_span(o.seconds, span, sizeof(span)), ex.dir);
	rc = vt_experiment_run(&pfs, &ex, &res, &err);
	if (sh.tty)
		fputs("\r\033[K", stderr);
	if (rc != VT_OK)
		status = vt_cli_error(&err);
	else if (res.stopped) {
		fprintf(stderr, "vitals demo: interrupted; targets stopped\n");
		status = VT_EXIT_STOPPED;
	} else if (res.recorded < ARMS) {
		for (i = 0; i < ARMS && res.arms[i].rc == VT_OK; i++)
			;
		status = i < ARMS ? vt_cli_error(&res.arms[i].err) : vt_code_exit(VT_E_FAIL);
	} else {
		status = tell(&pfs, &res, tmpdir, &o);
	}
	for (i = 0; i < res.narms; i++) {
		int ws;

		if (res.arms[i].soak.child > 0)
			vt_launch_stop(res.arms[i].soak.child, 5.0, &ws);
	}
	vt_experiment_result_release(&res);
	for (i = 0; i < ARMS; i++)
		vt_experiment_arm_release(&arms[i]);
	vt_procfs_close(&pfs);
	clean(tmpdir, false);
	if (o.dir)
		clean(o.dir, true);
	rmdir(tmpdir);
	return status;
}

const struct vt_command vt_cmd_demo = {
	.name = "demo",
	.summary = "reproduce glibc arena sprawl on a bundled target, default vs capped",
	.synopsis = "[options]",
	.description =
"Reproduces field report 000 on the bundled arena_churn target: the same\n"
"multi-threaded allocation churn (bounded live set, memory freed on another\n"
"thread than the one that allocated it) runs twice at once, under default\n"
"glibc and under MALLOC_ARENA_MAX=2, each soaked by vitals into a recording.\n"
"Then: both snapped side by side with the target's own count of live bytes,\n"
"the allocator's own figures, each soak's verdict, and the A/B table on the\n"
"settled windows (vitals compare).  It ends with the commands to do the same\n"
"on your own service.\n",
	.options = demo_options,
	.exits = demo_exits,
	.examples = demo_examples,
	.libs = VT_CMD_LIBDW,
	.run = demo_run,
};

/*
 * cmd_allocs.c — `vitals allocs PID [--for 10s] [--budget 5%] [--json]
 * [--folded F] [--pprof F] [--html F]`.
 *
 * Probes the allocator's entry points with uprobes in short windows
 * (sample/allocs.h) and prints which code allocates, how much, and what
 * became of the blocks.
 */
#include "cli/cli.h"
#include "cli/name_cli.h"
#include "render/allocs.h"
#include "base/clock.h"
#include "sample/allocs.h"

#include <math.h>
#include <sys/stat.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ALLOCS_MAX_S 3600.0

enum { OPT_FOR = 1, OPT_BUDGET, OPT_WINDOW, OPT_TOP, OPT_JSON, OPT_NAME, OPT_FOLDED, OPT_FOLDED_CALLS,
       OPT_PPROF, OPT_HTML, OPT_FORCE, OPT_PATH, OPT_EVERY, OPT_BUCKETS };

static const struct vt_option allocs_options[] = {
	{ "for", 0, "DURATION", "profile for DURATION (default 10s; at least 0.1s,\n"
				"at most 1h)", OPT_FOR },
	{ "budget", 0, "PCT", "slow the target by at most PCT percent over the run\n"
			      "(default 5; 0.1 to 100): the windows are spaced to\n"
			      "keep the measured cost under it", OPT_BUDGET },
	{ "window", 0, "DURATION", "each armed window (default 100ms; 10ms to 10s):\n"
				   "blocks freed within it are seen freed", OPT_WINDOW },
	{ "path", 0, "HOW", "auto (the default): the agent's in-process sampling\n"
			    "when the process runs libvitals-agent-allocs.so,\n"
			    "else uprobes; uprobes; or agent", OPT_PATH },
	{ "every", 0, "SIZE", "the agent's path: one sample every SIZE allocated\n"
			      "on average (default 512KiB; 1 to 1GiB)", OPT_EVERY },
	{ "buckets", 0, "FILE", "bucket rules of your own before the built-in ones, as\n"
				"vitals profile --buckets takes them: the sites by\n"
				"the kind of work that allocates", OPT_BUCKETS },
	{ "top", 0, "N", "show the N sites that allocate the most (default 20;\n"
			 "0 all)", OPT_TOP },
	{ "name", 0, "NAME", "the process called NAME instead of a PID", OPT_NAME },
	{ "json", 0, NULL, "machine-readable output (vitals.allocs, docs/json.md)", OPT_JSON },
	{ "folded", 0, "FILE", "write folded stacks weighing bytes allocated (one per\n"
			       "site: its first stack; flamegraph.pl, speedscope)", OPT_FOLDED },
	{ "folded-calls", 0, "FILE", "the same weighing calls", OPT_FOLDED_CALLS },
	{ "pprof", 0, "FILE", "write a pprof profile with Go's heap sample types\n"
			      "(alloc_objects, alloc_space, inuse_objects,\n"
			      "inuse_space): go tool pprof reads it", OPT_PPROF },
	{ "html", 0, "FILE", "one self-contained HTML file: a searchable, zoomable\n"
			     "flame graph of the bytes allocated beside the sites", OPT_HTML },
	{ "force", 0, NULL, "overwrite the files of --folded, --folded-calls,\n"
			    "--pprof and --html", OPT_FORCE },
	{ 0 }
};

static const struct vt_exit_note allocs_exits[] = {
	{ 1, "partial: the process exited during the run; the profile so far is shown" },
	{ 3, NULL }, { 4, "it exited before the probes were armed" },
	{ 2, "--path agent: the process runs no vitals agent" },
	{ 5, "the probes need CAP_PERFMON or CAP_SYS_ADMIN" }, { 6, "kernel thread" }, { 7, "zombie" },
	{ 8, "no uprobe PMU, or an allocator that cannot be probed (stripped and linked in, a "
	     "sanitizer's); --path agent: its agent does not sample (the plain libvitals-agent.so)" },
	{ 64, "usage error" },
	{ -1, NULL },
};

static const char *const allocs_examples[] = {
	"vitals allocs PID",
	"vitals allocs --for 30s --budget 2 PID",
	"vitals allocs --json PID",
	"vitals allocs --pprof allocs.pb.gz --folded allocs.folded PID",
	"vitals allocs --for 30s --html allocs.html PID",
	"vitals allocs --path agent --every 64KiB PID",
	NULL,
};

#define ALLOCS_DESCRIPTION \
"Which code of a running process allocates, how much, and what becomes of\n" \
"the blocks: no restart, no preload, no debug symbols.  vitals puts probes\n" \
"(uprobes, through perf_event_open) on the allocator's entry points in the\n" \
"process's own library (malloc, calloc, realloc, memalign, posix_memalign,\n" \
"free; jemalloc's mallocx family too), entry and return, so each block's\n" \
"address links the call that made it to the free that ends it.\n" \
"\n" \
"  SITE      the first function above the allocator that is not one of its\n" \
"            wrappers (operator new, strdup, Rust's alloc, redis' zmalloc),\n" \
"            from the return address at the call, else the unwound stack\n" \
"  CALLS/S   allocations per second while armed, and their share\n" \
"  BYTES/S   bytes asked per second while armed, and their share\n" \
"  FREED     of the blocks it made, the share freed before the window\n" \
"            closed; <=1MS within a millisecond: churn\n" \
"  LIVE      the share still live when the window closed: kept past it\n" \
"  THREADS   which threads called it\n" \
"\n" \
"Every call of a probed function traps into the kernel, armed or not, so\n" \
"the probes are in only for short windows (opened, then closed: a closed\n" \
"probe leaves the target's code) and the windows are spaced to keep the\n" \
"slowdown under the budget.  The cost is measured, not assumed: the share of\n" \
"the target's CPU spent in the kernel while armed against while not, and\n" \
"said with the result.\n" \
"\n" \
"The cheap path: a process started with LD_PRELOAD=libvitals-agent-allocs.so\n" \
"(the vitals agent with malloc wrappers) samples its own allocations, one\n" \
"every --every bytes on average (like jemalloc's lg_prof_sample), with their\n" \
"stacks and, when freed during the run, when: no probe, no trap, no root.\n" \
"The sites' figures are then estimates (each sample stands for the calls it\n" \
"was drawn from), the totals the agent's exact counts, and a block's fate is\n" \
"seen to the end of the run.  --path auto takes it when the agent answers;\n" \
"the output says which path was taken and why.\n"

#define ALLOCS_AFTER \
"The probes need CAP_PERFMON or CAP_SYS_ADMIN (root), whatever\n" \
"kernel.perf_event_paranoid says, and the uprobe PMU (Linux 4.17).  If vitals\n" \
"is killed, the kernel takes the probes out when its descriptors close.\n" \
"Ctrl-Z (SIGTSTP) closes the window in progress before vitals stops; SIGSTOP\n" \
"cannot be caught and leaves the probes in until vitals continues or dies:\n" \
"the target is never blocked (the kernel drops what a full ring cannot take)\n" \
"but keeps paying for the traps.  Where tracefs is not mounted and cannot\n" \
"be, the uprobe PMU is used, whose every event takes the kernel about 50 ms\n" \
"to close while it still traps: the cost said includes it.  An allocator\n" \
"linked into a stripped executable cannot be probed by name, and a\n" \
"sanitizer's malloc is not probed: vitals says so.\n"

struct allocs_cli {
	double for_s, budget, window_s;
	size_t top;
	bool json, force;
	const char *name;
	const char *folded, *folded_calls, *pprof, *html;
	enum vt_allocs_path path;
	uint64_t every;
	const char *buckets;
};

static int allocs_option(void *ctx, int id, const char *arg)
{
	struct allocs_cli *o = ctx;
	long top;
	int rc;

	switch (id) {
	case OPT_FOR:
		return vt_cli_duration(&vt_cmd_allocs, "for", arg, 0.1, ALLOCS_MAX_S, &o->for_s);
	case OPT_WINDOW:
		return vt_cli_duration(&vt_cmd_allocs, "window", arg, 0.01, 10, &o->window_s);
	case OPT_BUDGET:
		return vt_cli_budget("allocs", "budget", arg, &o->budget);
	case OPT_TOP:
		if ((rc = vt_cli_count(&vt_cmd_allocs, "top", arg, 0, 100000, &top)))
			return rc;
		o->top = (size_t)top;
		return 0;
	case OPT_JSON: o->json = true; return 0;
	case OPT_FOLDED: o->folded = arg; return 0;
	case OPT_FOLDED_CALLS: o->folded_calls = arg; return 0;
	case OPT_PPROF: o->pprof = arg; return 0;
	case OPT_HTML: o->html = arg; return 0;
	case OPT_BUCKETS: o->buckets = arg; return 0;
	case OPT_PATH:
		if (!strcmp(arg, "auto"))
			o->path = VT_ALLOCS_AUTO;
		else if (!strcmp(arg, "uprobes"))
			o->path = VT_ALLOCS_UPROBES;
		else if (!strcmp(arg, "agent"))
			o->path = VT_ALLOCS_AGENT;
		else
			return vt_cli_usage_error("allocs", "--path '%s': auto, uprobes or agent", arg);
		return 0;
	case OPT_EVERY:
		if ((rc = vt_cli_size(&vt_cmd_allocs, "every", arg, &o->every)))
			return rc;
		if (o->every < 1 || o->every > (1ull << 30))
			return vt_cli_usage_error("allocs", "--every '%s': from 1 byte to 1GiB", arg);
		return 0;
	case OPT_FORCE: o->force = true; return 0;
	case OPT_NAME:
		if (o->name)
			return vt_cli_usage_error("allocs", "one --name (allocs reads one process)");
		o->name = arg;
		return 0;
	}
	return 0;
}

/* Ctrl-Z: the sampler closes its window, then stops vitals here. */

static void progress(void *ctx, double elapsed_s, double total_s, uint64_t calls)
{
	double left = total_s - elapsed_s;

	(void)ctx;
	fprintf(stderr, "\rvitals allocs: %.0f s of %.0f s, %llu allocations, %.0f s left \033[K",
		elapsed_s, total_s, (unsigned long long)calls, left > 0 ? ceil(left) : 0);
}

/* An output file that exists without --force, or named twice: refused before probing. */
static int check_outputs(const struct allocs_cli *o)
{
	const char *paths[4] = { o->folded, o->folded_calls, o->pprof, o->html };

	for (int i = 0; i < 4; i++) {
		struct stat st;

		if (!paths[i] || !strcmp(paths[i], "-"))
			continue;
		for (int k = 0; k < i; k++)
			if (paths[k] && !strcmp(paths[k], paths[i]))
				return vt_cli_usage_error("allocs", "'%s' is named twice", paths[i]);
		if (!o->force && lstat(paths[i], &st) == 0 && S_ISREG(st.st_mode))
			return vt_cli_usage_error("allocs", "'%s' exists: --force overwrites it", paths[i]);
	}
	return 0;
}

static int write_folded_bytes(FILE *f, const void *a, struct vt_err *err)
{
	(void)err;
	return vt_render_allocs_folded(f, a, true);
}

static int write_folded_calls(FILE *f, const void *a, struct vt_err *err)
{
	(void)err;
	return vt_render_allocs_folded(f, a, false);
}

static int write_pprof(FILE *f, const void *a, struct vt_err *err)
{
	return vt_render_allocs_pprof(f, a, (int64_t)(vt_wall_s() * 1e9), err);
}

static int write_html(FILE *f, const void *a, struct vt_err *err)
{
	return vt_render_allocs_html(f, a, err);
}

static int allocs_run(const struct vt_command *cmd, int argc, char **argv)
{
	struct allocs_cli o = { .for_s = 10, .budget = 0.05, .window_s = 0.1, .top = 20 };
	struct vt_allocs *a = NULL;
	struct vt_bucket_rules *rules = NULL;
	struct vt_alloc_buckets buckets = { 0 };
	struct vt_allocs_opts ao;
	struct vt_procfs pfs;
	struct vt_args args;
	struct vt_err err;
	volatile sig_atomic_t *stop = NULL, *tstp = NULL;
	int pid = 0, rc, exit_status = 0;

	if ((rc = vt_cli_parse(cmd, argc, argv, allocs_option, &o, &args)))
		return rc == VT_CLI_HELP ? VT_EXIT_OK : rc;
	if (o.name && args.noperands)
		return vt_cli_usage_error("allocs", "give a PID or --name, not both");
	if (!o.name && args.noperands != 1)
		return args.noperands ? vt_cli_usage_error("allocs", "unexpected argument '%s' (one PID)",
							   args.operands[1])
				      : vt_cli_usage_error("allocs", "which process? give a PID or --name NAME");
	if (!o.name && !vt_cli_parse_pid(args.operands[0], &pid))
		return vt_cli_usage_error("allocs", "'%s' is not a process id", args.operands[0]);
	if ((rc = check_outputs(&o)))
		return rc;
	if (o.every && o.path == VT_ALLOCS_UPROBES)
		return vt_cli_usage_error("allocs", "--every is the agent's sampling interval: not with --path uprobes");
	vt_err_clear(&err);
	/* the rules first: a bad file is refused before anything is probed */
	if ((o.buckets ? vt_bucket_rules_load(o.buckets, &rules, &err) : vt_bucket_rules_builtin(&rules, &err)))
		return vt_cli_error(&err);
	if (vt_cli_open_procfs(&pfs, &err)) {
		vt_bucket_rules_free(&rules);
		return vt_cli_error(&err);
	}
	if (o.name && (exit_status = vt_cli_name_pid(&pfs, "allocs", o.name, "vitals allocs", true, &pid)))
		goto out;
	vt_cli_catch_stop(&stop);
	vt_cli_catch_tstp(&tstp, NULL);
	ao = (struct vt_allocs_opts){
		.duration_s = o.for_s, .budget = o.budget, .window_s = o.window_s, .stop = stop,
		.path = o.path, .every = o.every,
		.pause = tstp, .paused = vt_cli_tstp_paused,
		.progress = isatty(STDERR_FILENO) && !o.json ? progress : NULL,
	};
	rc = vt_allocs_run(&pfs, pid, &ao, &a, &err);
	if (ao.progress)
		fprintf(stderr, "\r\033[K");
	if (rc) {
		exit_status = vt_cli_error(&err);
		goto out;
	}
	if (a->meta.exited) {
		fprintf(stderr, "vitals: note: process %d exited during the run; the profile so far is "
			"shown\n", pid);
		exit_status = VT_EXIT_PARTIAL;
	}
	{
		const char *paths[4] = { o.folded, o.folded_calls, o.pprof, o.html };
		const vt_cli_write_fn writers[4] = { write_folded_bytes, write_folded_calls, write_pprof,
						     write_html };
		bool to_stdout = false;

		for (int k = 0; k < 4; k++) {
			if (!paths[k])
				continue;
			to_stdout |= !strcmp(paths[k], "-");
			if ((rc = vt_cli_write_out("allocs", paths[k], o.force, writers[k], a))) {
				exit_status = rc;
				goto out;
			}
		}
		if (to_stdout)
			goto out;   /* stdout holds the export */
	}
	if ((rc = vt_alloc_buckets_compute(a, rules, &buckets, &err))) {
		exit_status = vt_cli_error(&err);
		goto out;
	}
	rc = o.json ? vt_render_allocs_json(stdout, a, &buckets, false)
		    : vt_render_allocs_text(stdout, a, &buckets, o.top);
	if ((rc = vt_cli_stdout_done("allocs", rc)))
		exit_status = rc;
out:
	vt_alloc_buckets_release(&buckets);
	vt_bucket_rules_free(&rules);
	vt_allocs_free(&a);
	vt_procfs_close(&pfs);
	return exit_status;
}

const struct vt_command vt_cmd_allocs = {
	.name = "allocs",
	.summary = "which code allocates: sites, bytes per second, and whether the blocks churn or stay",
	.synopsis = "[options] PID\n"
		    "[options] --name NAME",
	.description = ALLOCS_DESCRIPTION,
	.options = allocs_options,
	.after = ALLOCS_AFTER,
	.exits = allocs_exits,
	.examples = allocs_examples,
	.libs = VT_CMD_LIBDW,
	.run = allocs_run,
};

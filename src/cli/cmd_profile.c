/*
 * cmd_profile.c — `vitals profile PID [--for 10s] [--hz 99] [--buckets FILE]
 * [--threads PATTERN] [--wall] [--folded F] [--pprof F] [--html F] [--json]`.
 *
 * Samples the process (sample/profiler.h), buckets the stacks by top of
 * stack (analyze/profile_buckets.h), summarises them (analyze/
 * profile_summary.h) and renders the summary as a table or JSON, and the
 * profile itself into the files asked for.  Output files are checked
 * before sampling starts (an existing one needs --force), written only
 * after it ends, and removed again if writing fails: no partial files.
 */
#include "cli/cli.h"
#include "sample/call_count.h"
#include "base/clock.h"
#include "analyze/profile_buckets.h"
#include "analyze/profile_summary.h"
#include "render/profile_folded.h"
#include "render/profile_html.h"
#include "render/profile_json.h"
#include "render/pprof_lib.h"
#include "render/profile_pprof.h"
#include "render/profile_text.h"
#include "sample/profiler.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROFILE_DEFAULT_S 10.0
#define PROFILE_MAX_S (24 * 3600.0)

enum {
	OPT_FOR = 1, OPT_HZ, OPT_BUCKETS, OPT_THREADS, OPT_WALL, OPT_FOLDED, OPT_PPROF, OPT_HTML,
	OPT_JSON, OPT_TOP, OPT_NO_KERNEL, OPT_FORCE, OPT_METHOD, OPT_WIDE, OPT_COUNT,
};

static const struct vt_option profile_options[] = {
	{ "for", 0, "DURATION", "sample for DURATION (default 10s; 30s, 2m)", OPT_FOR },
	{ "hz", 0, "N", "samples per second of CPU per thread (default 99,\n"
			"at most 10000)", OPT_HZ },
	{ "buckets", 0, "FILE", "bucket rules of your own, before the built-in\n"
				"ones: lines 'bucket: glob' (see BUCKET RULES)", OPT_BUCKETS },
	{ "threads", 0, "PATTERN", "only threads whose name matches PATTERN (a shell\n"
				   "glob: 'worker-*')", OPT_THREADS },
	{ "wall", 0, NULL, "wall-clock profile too: threads that are not running\n"
			   "are sampled (state, what they wait in, their stack)", OPT_WALL },
	{ "folded", 0, "FILE", "collapsed stacks for flame-graph tools\n"
			       "(frame;frame;leaf COUNT, root first)", OPT_FOLDED },
	{ "pprof", 0, "FILE", "a gzipped profile.proto (go tool pprof, Pyroscope,\n"
			      "Parca)", OPT_PPROF },
	{ "html", 0, "FILE", "one self-contained HTML file: a searchable, zoomable\n"
			     "flame graph beside the bucket table", OPT_HTML },
	{ "json", 0, NULL, "machine-readable output (vitals.profile)", OPT_JSON },
	{ "top", 0, "N", "functions listed by self and total time (default 15)", OPT_TOP },
	{ "wide", 0, NULL, "function names whole in the tables (else shortened to fit the\n"
			   "terminal, or 120 columns: BTreeMap<…>::insert)", OPT_WIDE },
	{ "no-kernel", 0, NULL, "leave kernel frames out", OPT_NO_KERNEL },
	{ "method", 0, "perf|ptrace", "how to sample: perf events (the default; ptrace\n"
				     "when they are refused), or ptrace: running threads\n"
				     "stopped one at a time (three looks per 1/hz),\n"
				     "each thread for at most 1% of its time", OPT_METHOD },
	{ "force", 0, NULL, "overwrite the files of --folded, --pprof and --html", OPT_FORCE },
	{ "count", 0, "FUNC[,FUNC...]", "count the calls of these functions (uprobes on\n"
					"their entry; root) and put calls per second beside\n"
					"their CPU: 33 calls/s x 38.7 ms = 12.6% of a core.\n"
					"NAME@FILE picks one of several; at most 8", OPT_COUNT },
	{ 0 }
};

static const struct vt_exit_note profile_exits[] = {
	{ 1, "partial: the process exited during the profile; the profile so far is shown" },
	{ 2, "an output file could not be written (it is removed again)" },
	{ 3, NULL }, { 4, "it exited before the first sample" },
	{ 5, "perf events refused (kernel.perf_event_paranoid, CAP_PERFMON) or the process's\n"
	     "memory map unreadable: the message says which and how to grant it" },
	{ 6, "kernel thread" }, { 7, "zombie" }, { 8, "the kernel has no perf events" },
	{ 64, "usage error (a malformed --buckets file: its line and what is wrong; an output\n"
	      "file that exists, without --force)" },
	{ -1, NULL },
};

static const char *const profile_examples[] = {
	"vitals profile PID",
	"vitals profile --for 30s --wall PID",
	"vitals profile --html profile.html --folded profile.folded PID",
	"vitals profile --buckets docs/example.buckets --threads 'hash*' PID",
	"vitals profile --count malloc,free PID",
	NULL,
};

#define PROFILE_DESCRIPTION \
"Where a running process spends its CPU, bucketed by what the code is doing.\n" \
"Every thread is sampled N times per second of CPU it uses (perf events,\n" \
"software cpu-clock); each sample's stack is walked from the registers and\n" \
"the copy of the stack the kernel takes, with the call frame information\n" \
"every binary carries (.eh_frame), so no frame pointers, debug symbols or\n" \
"restart are needed; kernel frames are named from /proc/kallsyms.\n" \
"\n" \
"  buckets      each sample goes to the bucket of its top of stack: the\n" \
"               first frame, walking up from the leaf, that a rule claims\n" \
"               (network send/recv, filesystem syscalls, memory allocation,\n" \
"               hashing, compression, JSON/serialization, crypto,\n" \
"               locks/futex, poll/sleep (the CPU of entering and leaving\n" \
"               epoll, poll and sleeps: a busy poller), kernel other,\n" \
"               other; JIT code and interpreters as their runtime's\n" \
"               bucket, said so); share of the on-CPU samples with a 95%\n" \
"               confidence half-width, and the sample count; idle waits\n" \
"               are left out and counted apart\n" \
"  functions    the busiest functions by self time (the leaf) and by total\n" \
"               time (anywhere on the stack); code no symbol names (a\n" \
"               stripped library's internal functions) is named by the\n" \
"               start of the function that holds it, from the unwind\n" \
"               table: libz.so.1.2.13+0x5d80 (function); C++ and Rust names\n" \
"               demangled; with DWARF debug information (in the binary, a\n" \
"               -dbgsym package's file, a .gnu_debuglink file, or split\n" \
"               DWARF .dwo files) functions the compiler inlined are\n" \
"               frames of their own, marked (inlined), and each\n" \
"               function's file:line is shown\n" \
"  threads      each thread's and pool's share of the samples beside the\n" \
"               CPU the kernel counted for it over the same time\n" \
"  sampling     method, rate, samples taken and lost, how each library\n" \
"               was unwound, where its names and source lines came from\n" \
"               (the debug file read; one found under its name but of\n" \
"               another build is not read, and said), and what profiling\n" \
"               cost\n" \
"\n" \
"Ctrl-C ends the profile early and prints what was taken.\n" \
"\n" \
"With --wall, threads that are not on a CPU are sampled too, without\n" \
"stopping them: their state, the kernel function or system call they wait\n" \
"in, and their user stack (from the stack pointer and program counter in\n" \
"/proc/TID/syscall and a copy of the stack).  Each bucket's wall time is\n" \
"then split into running, runnable (waiting for a CPU) and waiting, and the\n" \
"locks the threads wait on are counted at every wall tick as vitals locks\n" \
"counts them: a table of each lock, its kind, waiters and holders.\n"

#define PROFILE_AFTER \
"BUCKET RULES.  A --buckets file holds one rule per line, 'bucket: glob';\n" \
"'#' starts a comment.  The glob matches a function name ('parse_*'), or\n" \
"with 'lib:' a library's file name ('lib:libcrypto.so*').  The first rule\n" \
"that matches wins; your rules come before the built-in ones, so a team can\n" \
"name its own buckets:\n" \
"\n" \
"  # our code\n" \
"  request parsing: http_parse_*\n" \
"  templating: render_*\n" \
"  crypto: lib:libsodium.so*\n" \
"\n" \
"(docs/example.buckets; docs/profile-buckets.md has the whole syntax.)\n" \
"\n" \
"Nothing is written to the target and it is never stopped.  Perf events on\n" \
"another user's process need root or CAP_PERFMON (and CAP_SYS_PTRACE to read\n" \
"its stack); on your own processes kernel.perf_event_paranoid <= 2 is\n" \
"enough for user frames, <= 1 for kernel frames.\n"

struct profile_opts {
	double for_s;
	unsigned hz;
	const char *buckets;
	const char *threads;
	bool wall, json, no_kernel, force, ptrace, wide;
	const char *folded, *pprof, *html;
	size_t top;
	char count[VT_CALLS_MAX][128];   /* --count's names */
	size_t ncount;
};

/* The terminal's width when stdout is one, else 0 (the text's default). */
static uint32_t terminal_columns(void)
{
	size_t rows, cols;

	return vt_cli_terminal_size(&rows, &cols) && cols <= UINT32_MAX ? (uint32_t)cols : 0;
}

static int profile_option(void *ctx, int id, const char *arg)
{
	struct profile_opts *o = ctx;
	long n;
	int rc;
	switch (id) {
	case OPT_FOR:
		return vt_cli_duration(&vt_cmd_profile, "for", arg, 0.1, PROFILE_MAX_S, &o->for_s);
	case OPT_HZ:
		if ((rc = vt_cli_count(&vt_cmd_profile, "hz", arg, 1, VT_PROFILER_HZ_MAX, &n)))
			return rc;
		o->hz = (unsigned)n;
		return 0;
	case OPT_TOP:
		if ((rc = vt_cli_count(&vt_cmd_profile, "top", arg, 1, 10000, &n)))
			return rc;
		o->top = (size_t)n;
		return 0;
	case OPT_BUCKETS: o->buckets = arg; return 0;
	case OPT_THREADS: o->threads = arg; return 0;
	case OPT_WALL: o->wall = true; return 0;
	case OPT_FOLDED: o->folded = arg; return 0;
	case OPT_PPROF: o->pprof = arg; return 0;
	case OPT_HTML: o->html = arg; return 0;
	case OPT_JSON: o->json = true; return 0;
	case OPT_WIDE: o->wide = true; return 0;
	case OPT_NO_KERNEL: o->no_kernel = true; return 0;
	case OPT_FORCE: o->force = true; return 0;
	case OPT_COUNT: {
		const char *p = arg;

		while (*p) {
			size_t len = strcspn(p, ",");

			if (len && o->ncount == VT_CALLS_MAX)
				return vt_cli_usage_error("profile", "--count: at most %d functions",
							  VT_CALLS_MAX);
			if (len >= sizeof(o->count[0]))
				return vt_cli_usage_error("profile", "--count: a name of %zu bytes", len);
			if (len)
				snprintf(o->count[o->ncount++], sizeof(o->count[0]), "%.*s", (int)len, p);
			p += len + (p[len] == ',');
		}
		if (!o->ncount)
			return vt_cli_usage_error("profile", "--count: which function?");
		return 0;
	}
	case OPT_METHOD:
		if (strcmp(arg, "perf") && strcmp(arg, "ptrace"))
			return vt_cli_usage_error("profile", "--method '%s': perf or ptrace", arg);
		o->ptrace = !strcmp(arg, "ptrace");
		return 0;
	}
	return 0;
}

/* An output file named twice, or one that exists without --force: refused before sampling. */
static int check_outputs(const struct profile_opts *o)
{
	const char *paths[3] = { o->folded, o->pprof, o->html };
	for (int i = 0; i < 3; i++) {
		struct stat st;
		if (!paths[i])
			continue;
		if (strcmp(paths[i], "-") == 0 && (o->json || i > 0))
			return vt_cli_usage_error("profile", "only --folded may write to stdout ('-'), and "
						  "not with --json");
		for (int j = 0; j < i; j++)
			if (paths[j] && strcmp(paths[i], paths[j]) == 0)
				return vt_cli_usage_error("profile", "'%s' is named twice", paths[i]);
		if (!o->force && strcmp(paths[i], "-") != 0 && lstat(paths[i], &st) == 0 &&
		    !S_ISCHR(st.st_mode))
			return vt_cli_usage_error("profile", "'%s' already exists (--force overwrites it)",
						  paths[i]);
	}
	return 0;
}

/* Progress on a terminal: seconds done, samples, time left. */
static void progress(void *ctx, double elapsed_s, double total_s, uint64_t samples)
{
	(void)ctx;
	double left = total_s - elapsed_s;
	fprintf(stderr, "\rvitals profile: %.0f s of %.0f s, %llu samples, %.0f s left \033[K",
		elapsed_s, total_s, (unsigned long long)samples, left > 0 ? ceil(left) : 0);
}

/* What an output file is written from. */
struct outputs {
	const struct vt_profile *profile;
	const struct vt_prof_summary *summary;
	bool wall;
	int64_t start_ns;         /* wall clock at the start, for pprof's time_nanos */
};


/* Folded stacks: on-CPU samples, or with --wall every state. */
static int write_folded(FILE *f, const void *ctx, struct vt_err *err)
{
	const struct outputs *o = ctx;
	struct vt_folded_opts fo = {
		.root = VT_FOLDED_MERGED,
		.states = o->wall ? VT_PROF_STATES_ALL : VT_PROF_STATES_CPU,
	};
	return vt_profile_folded_write(f, o->profile, &fo, err);
}

static int write_pprof(FILE *f, const void *ctx, struct vt_err *err)
{
	const struct outputs *o = ctx;
	struct vt_pprof_opts po = { .wall = o->wall, .time_nanos = o->start_ns };
	return vt_profile_pprof_write(f, o->profile, &po, err);
}

/* The flame graph beside the bucket table of the summary. */
static int write_html(FILE *f, const void *ctx, struct vt_err *err)
{
	const struct outputs *o = ctx;
	const struct vt_prof_summary *s = o->summary;
	struct vt_html_bucket_row *rows = calloc(s->nbuckets ? s->nbuckets : 1, sizeof(*rows));
	if (!rows)
		return vt_err_set(err, VT_E_NOMEM, 0, "html bucket table");
	for (uint32_t i = 0; i < s->nbuckets; i++) {
		const struct vt_prof_share *sh = o->wall ? &s->buckets[i].wall : &s->buckets[i].cpu;
		rows[i] = (struct vt_html_bucket_row){
			.name = s->buckets[i].name,
			.share = sh->share,
			.ci = sh->pm,
			.samples = sh->samples,
		};
	}
	struct vt_profile_html h = {
		.profile = o->profile,
		.states = o->wall ? VT_PROF_STATES_ALL : VT_PROF_STATES_CPU,
		.buckets = rows,
		.nbuckets = s->nbuckets,
	};
	int rc = vt_profile_html_write(f, &h, err);
	free(rows);
	return rc;
}

static int profile_run(const struct vt_command *cmd, int argc, char **argv)
{
	struct profile_opts o = { .for_s = PROFILE_DEFAULT_S, .top = 15 };
	struct vt_args args;
	struct vt_err err;
	struct vt_procfs pfs;
	struct vt_bucket_rules *rules = NULL;
	struct vt_profile *prof = NULL;
	struct vt_prof_summary *sum = NULL;
	volatile sig_atomic_t *stop;
	int pid, rc, status = 0;

	rc = vt_cli_parse(cmd, argc, argv, profile_option, &o, &args);
	if (rc != 0)
		return rc == VT_CLI_HELP ? VT_EXIT_OK : rc;
	if (args.noperands == 0)
		return vt_cli_usage_error("profile", "which process? give a PID");
	if (args.noperands > 1)
		return vt_cli_usage_error("profile", "one PID at a time");
	if (!vt_cli_parse_pid(args.operands[0], &pid))
		return vt_cli_usage_error("profile", "'%s' is not a process id", args.operands[0]);
	if ((rc = check_outputs(&o)))
		return rc;
	vt_err_clear(&err);
	/* --pprof needs protobuf-c (opened on demand): said before anything is sampled */
	if (o.pprof && vt_protobuf_load(&err))
		return vt_cli_error(&err);
	/* the rules first: a malformed file is a usage error before anything is sampled */
	rc = o.buckets ? vt_bucket_rules_load(o.buckets, &rules, &err)
		       : vt_bucket_rules_builtin(&rules, &err);
	if (rc)
		return vt_cli_error(&err);
	if (vt_cli_open_procfs(&pfs, &err)) {
		vt_bucket_rules_free(&rules);
		return vt_cli_error(&err);
	}
	struct vt_call_counts *counts = NULL;
	struct vt_call_counter *counter = NULL;
	struct vt_prof_calls calls;
	if (o.ncount) {
		char cand[1024];

		if (!(counts = calloc(1, sizeof(*counts)))) {
			vt_procfs_close(&pfs);
			vt_bucket_rules_free(&rules);
			return vt_cli_nomem("profile");
		}
		for (size_t i = 0; i < o.ncount && !rc; i++)
			rc = vt_call_resolve(&pfs, pid, o.count[i], &counts->fns[counts->n++], cand,
					     sizeof(cand), &err);
		if (!rc)
			rc = vt_call_counter_start(pid, counts, 0.05, &counter, &err);
		if (rc) {
			vt_procfs_close(&pfs);
			vt_bucket_rules_free(&rules);
			free(counts);
			return vt_cli_error(&err);
		}
	}
	vt_cli_catch_stop(&stop);
	struct vt_locks locks = { 0 };
	struct vt_profiler_opts po = {
		.duration_s = o.for_s,
		.hz = o.hz,
		.wall = o.wall,
		.threads_glob = o.threads,
		.no_kernel = o.no_kernel,
		.ptrace = o.ptrace,
		.locks = o.wall ? &locks : NULL,
		.stop = stop,
		.progress = isatty(STDERR_FILENO) ? progress : NULL,
	};
	int64_t start_ns = (int64_t)(vt_wall_s() * 1e9);
	rc = vt_profiler_run(&pfs, pid, &po, &prof, &err);
	vt_call_counter_finish(&counter);
	if (po.progress)
		fputs("\r\033[K", stderr);
	vt_procfs_close(&pfs);
	if (rc) {
		vt_bucket_rules_free(&rules);
		vt_locks_release(&locks);
		free(counts);
		return vt_cli_error(&err);
	}
	struct vt_prof_summary_opts so = { .top = (uint32_t)o.top };
	if ((rc = vt_prof_summarize(prof, rules, &so, &sum, &err))) {
		status = vt_cli_error(&err);
		goto out;
	}
	sum->locks = o.wall ? &locks : NULL;
	if (counts) {
		vt_prof_calls_compute(prof, counts, &calls);
		sum->calls = &calls;
	}
	if (prof->meta.exited)
		fprintf(stderr, "vitals: note: process %d exited after %.1f s; this is the profile "
			"so far\n", pid, prof->meta.duration_s);
	struct outputs outs = { prof, sum, o.wall, start_ns };
	if (o.folded && (status = vt_cli_write_out("profile", o.folded, o.force, write_folded, &outs)))
		goto out;
	if (o.pprof && (status = vt_cli_write_out("profile", o.pprof, o.force, write_pprof, &outs)))
		goto out;
	if (o.html && (status = vt_cli_write_out("profile", o.html, o.force, write_html, &outs)))
		goto out;
	if (!(o.folded && strcmp(o.folded, "-") == 0)) {
		struct vt_profile_text_opts to = { .top = (uint32_t)o.top, .wide = o.wide,
						   .columns = terminal_columns() };
		rc = o.json ? vt_render_profile_json(stdout, sum, false)
			    : vt_render_profile_text(stdout, sum, &to);
		if ((status = vt_cli_stdout_done("profile", rc)))
			goto out;
	}
	if (prof->meta.exited)
		status = VT_EXIT_PARTIAL;
out:
	vt_prof_summary_free(&sum);
	free(counts);
	vt_locks_release(&locks);
	vt_profile_free(&prof);
	vt_bucket_rules_free(&rules);
	return status;
}

const struct vt_command vt_cmd_profile = {
	.name = "profile",
	.summary = "where a running process spends its CPU, bucketed by top of stack",
	.synopsis = "[options] PID",
	.description = PROFILE_DESCRIPTION,
	.options = profile_options,
	.after = PROFILE_AFTER,
	.exits = profile_exits,
	.examples = profile_examples,
	.libs = VT_CMD_LIBDW,
	.run = profile_run,
};

/*
 * cmd_soak.c — `vitals soak TARGET -o run.db [--every 10s] [--for 4h]`.
 *
 * Reads the target and the cadences, shows a progress line while the
 * sampler runs (src/soak), and says where the recording is and what to run
 * next.
 */
#include "cli/cli.h"
#include "cli/name_cli.h"
#include "cli/soak_cli.h"
#include "base/clock.h"
#include "sample/profiler.h"
#include "soak/soak.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_OUTPUT = 1, OPT_EVERY, OPT_FOR, OPT_NAME, OPT_PIDFILE, OPT_SMAPS, OPT_THREADS, OPT_HEAP,
       OPT_HEAP_EVERY, OPT_WAIT, OPT_WAIT_BACK, OPT_ENV, OPT_LOG, OPT_FORCE, OPT_QUIET,
       OPT_REDACT, OPT_PROFILE_EVERY, OPT_PROFILE_FOR, OPT_PROFILE_HZ, OPT_ALLOCS_EVERY, OPT_ALLOCS_FOR,
       OPT_ALLOCS_BUDGET, OPT_FREE_EVERY, OPT_FREE_BUDGET };

static const struct vt_option soak_options[] = {
	{ "output", 'o', "FILE", "the recording to write (required)", OPT_OUTPUT },
	{ "every", 'e', "DURATION", "sampling interval (default 10s; at least 0.1s)", OPT_EVERY },
	{ "for", 'f', "DURATION", "stop after DURATION (default: until Ctrl-C)", OPT_FOR },
	{ "name", 0, "NAME", "the process called NAME (comm or argv[0]); followed\n"
			     "across restarts; refused when NAME is several\n"
			     "processes (a parent and its workers)", OPT_NAME },
	{ "pidfile", 0, "FILE", "the pid in FILE, read again after a restart", OPT_PIDFILE },
	{ "smaps-every", 0, "DURATION", "Pss (smaps_rollup) cadence (default 10m; 0 = never)", OPT_SMAPS },
	{ "threads-every", 0, "DURATION", "per-thread rows cadence (default 1m)", OPT_THREADS },
	{ "heap", 0, NULL, "allocator figures by ptrace when no agent answers:\n"
			   "mallinfo2 alone, stopping one thread for about\n"
			   "0.3 ms per probe (more on a saturated host)", OPT_HEAP },
	{ "heap-every", 0, "DURATION", "allocator figures cadence (default 1m)", OPT_HEAP_EVERY },
	{ "free-every", 0, "DURATION", "glibc: free bytes on resident pages and trimmable\n"
				       "pages from a walk of the heap, at most this often\n"
				       "(default 1m; 0 = never); spaced further when a walk\n"
				       "costs more than --free-budget allows", OPT_FREE_EVERY },
	{ "free-budget", 0, "PCT", "the share of one core those walks may use (default 1)",
	  OPT_FREE_BUDGET },
	{ "profile-every", 0, "DURATION", "a CPU profile (as vitals profile takes) this often,\n"
					  "the first at the start, stored in the recording\n"
					  "(at least --every; default: none)", OPT_PROFILE_EVERY },
	{ "profile-for", 0, "DURATION", "each profile this long (default 10s; shorter than\n"
					"--profile-every)", OPT_PROFILE_FOR },
	{ "profile-hz", 0, "N", "each profile's samples per second of CPU per thread\n"
				"(default 99, as vitals profile --hz)", OPT_PROFILE_HZ },
	{ "allocs-every", 0, "DURATION", "an allocation profile (as vitals allocs takes) this\n"
					 "often, the first at the start, stored in the\n"
					 "recording (at least --every; default: none)", OPT_ALLOCS_EVERY },
	{ "allocs-for", 0, "DURATION", "each one this long (default 10s; shorter than\n"
				       "--allocs-every)", OPT_ALLOCS_FOR },
	{ "allocs-budget", 0, "PCT", "the slowdown its probes may cost the target while\n"
				     "one is taken (default 5, as vitals allocs --budget)", OPT_ALLOCS_BUDGET },
	{ "wait", 0, "DURATION", "how long --name/--pidfile may take to appear\n(default 30s)", OPT_WAIT },
	{ "wait-back", 0, "DURATION", "how long a followed target that exited may take to\n"
				      "come back before the soak ends with exit 4 (default 5m;\n"
				      "0 = until --for or Ctrl-C)", OPT_WAIT_BACK },
	{ "env", 0, "KEY=VALUE", "with -- COMMAND: add to its environment (repeat)", OPT_ENV },
	{ "log", 0, "FILE", "with -- COMMAND: its output (default FILE.out; an\n"
			    "existing file only with --force)", OPT_LOG },
	{ "redact-args", 0, NULL, "with -- COMMAND: record its name only, not its\n"
				  "arguments (values that look like secrets never are)", OPT_REDACT },
	{ "force", 0, NULL, "overwrite FILE (and FILE.out) if they exist; never\n"
			    "a recording another soak is writing", OPT_FORCE },
	{ "quiet", 'q', NULL, "no progress line", OPT_QUIET },
	{ 0 }
};

static const struct vt_exit_note soak_exits[] = {
	{ 1, "the target exited and could not be followed (the recording is complete up to then),\n"
	     "or parts of it could not be read (a note names them; the rest is recorded)" },
	{ 2, "the recording could not be written (disk full: every sample before is kept)" },
	{ 3, "no such process, or it never appeared, or the command could not be run" },
	{ 4, "the target exited and nothing came back within --wait-back, or before --for\n"
	     "ended (the recording says so)" },
	{ 5, NULL }, { 6, "kernel thread" }, { 7, "zombie" },
	{ 64, "usage; FILE or FILE.out exists (without --force), or another soak is writing FILE" }, { -1, NULL },
};

static const char *const soak_examples[] = {
	"vitals soak PID -o run.db --for 4h",
	"vitals soak --name redis-server -o redis.db --every 30s",
	"vitals soak -o run.db --for 10m -- ./server --port 8080",
	"vitals soak PID -o run.db --for 8h --profile-every 10m --profile-for 10s",
	"vitals soak PID -o run.db --for 8h --allocs-every 10m --allocs-for 10s",
	NULL,
};

struct soak_opts {
	struct vt_soak_config cfg;
	char **env;                  /* --env values, NULL-terminated (borrowed strings) */
	size_t nenv;
	const char *log;
	bool quiet;
	bool oom;
	bool profile_for_given, profile_hz_given, allocs_for_given, allocs_budget_given;
};

static int soak_option(void *ctx, int id, const char *arg)
{
	struct soak_opts *o = ctx;
	struct vt_soak_config *cfg = &o->cfg;
	char **env;
	long n;
	int rc;

	switch (id) {
	case OPT_OUTPUT: cfg->out_path = arg; return 0;
	case OPT_EVERY: return vt_cli_duration(&vt_cmd_soak, "every", arg, 0.1, 0, &cfg->every_s);
	case OPT_FOR:
		if (vt_cli_duration(&vt_cmd_soak, "for", arg, 0, 0, &cfg->for_s))
			return vt_code_exit(VT_E_USAGE);
		if (cfg->for_s <= 0)   /* 0 meant "until Ctrl-C" inside, and ran forever */
			return vt_cli_usage_error(vt_cmd_soak.name, "--for '%s' records nothing: give a duration, "
						  "or leave --for out to record until Ctrl-C", arg);
		return 0;
	case OPT_SMAPS: return vt_cli_duration(&vt_cmd_soak, "smaps-every", arg, 0, 0, &cfg->smaps_every_s);
	case OPT_THREADS: return vt_cli_duration(&vt_cmd_soak, "threads-every", arg, 0, 0, &cfg->threads_every_s);
	case OPT_HEAP_EVERY: return vt_cli_duration(&vt_cmd_soak, "heap-every", arg, 0.1, 0, &cfg->heap_every_s);
	case OPT_FREE_EVERY: return vt_cli_duration(&vt_cmd_soak, "free-every", arg, 0, 0, &cfg->free_every_s);
	case OPT_FREE_BUDGET: return vt_cli_budget("soak", "free-budget", arg, &cfg->free_budget);
	case OPT_PROFILE_EVERY:
		return vt_cli_duration(&vt_cmd_soak, "profile-every", arg, 1, 0, &cfg->profile_every_s);
	case OPT_PROFILE_FOR:
		o->profile_for_given = true;
		return vt_cli_duration(&vt_cmd_soak, "profile-for", arg, 0.1, 0, &cfg->profile_for_s);
	case OPT_PROFILE_HZ:
		o->profile_hz_given = true;
		if ((rc = vt_cli_count(&vt_cmd_soak, "profile-hz", arg, 1, VT_PROFILER_HZ_MAX, &n)))
			return rc;
		cfg->profile_hz = (unsigned)n;
		return 0;
	case OPT_ALLOCS_EVERY:
		return vt_cli_duration(&vt_cmd_soak, "allocs-every", arg, 1, 0, &cfg->allocs_every_s);
	case OPT_ALLOCS_FOR:
		o->allocs_for_given = true;
		return vt_cli_duration(&vt_cmd_soak, "allocs-for", arg, 0.1, 0, &cfg->allocs_for_s);
	case OPT_ALLOCS_BUDGET:
		o->allocs_budget_given = true;
		return vt_cli_budget("soak", "allocs-budget", arg, &cfg->allocs_budget);
	case OPT_WAIT: return vt_cli_duration(&vt_cmd_soak, "wait", arg, 0, 0, &cfg->wait_s);
	case OPT_WAIT_BACK: return vt_cli_duration(&vt_cmd_soak, "wait-back", arg, 0, 0, &cfg->wait_back_s);
	case OPT_NAME:
	case OPT_PIDFILE:
		if (cfg->target.kind)
			return vt_cli_usage_error("soak", "give one target: a pid, --name, --pidfile or -- COMMAND");
		cfg->target.kind = id == OPT_NAME ? VT_SOAK_NAME : VT_SOAK_PIDFILE;
		if (id == OPT_NAME)
			cfg->target.name = arg;
		else
			cfg->target.pidfile = arg;
		return 0;
	case OPT_HEAP: cfg->heap = true; return 0;
	case OPT_ENV:
		if (!strchr(arg, '=') || arg[0] == '=')
			return vt_cli_usage_error("soak", "--env wants KEY=VALUE, not '%s'", arg);
		env = realloc(o->env, (o->nenv + 2) * sizeof(*env));
		if (!env)
			return vt_cli_nomem("soak");
		o->env = env;
		o->env[o->nenv++] = (char *)arg;
		o->env[o->nenv] = NULL;
		return 0;
	case OPT_LOG: o->log = arg; return 0;
	case OPT_FORCE: cfg->overwrite = true; return 0;
	case OPT_QUIET: o->quiet = true; return 0;
	case OPT_REDACT: cfg->redact_args = true; return 0;
	}
	return 0;
}

/* --profile-every and --profile-for, with each other and with --every. */
static int soak_check_profiles(const struct soak_opts *o)
{
	const struct vt_soak_config *cfg = &o->cfg;
	char a[32], b[32];

	if (cfg->profile_every_s <= 0) {
		if (o->profile_for_given)
			return vt_cli_usage_error("soak", "--profile-for applies only with --profile-every");
		if (o->profile_hz_given)
			return vt_cli_usage_error("soak", "--profile-hz applies only with --profile-every");
		return 0;
	}
	if (cfg->profile_for_s >= cfg->profile_every_s && !o->profile_for_given)
		return vt_cli_usage_error("soak", "--profile-every %s is not longer than a profile (--profile-for, "
					  "default %s): give a shorter --profile-for",
					  vt_fmt_span(cfg->profile_every_s, a, sizeof(a)),
					  vt_fmt_span(cfg->profile_for_s, b, sizeof(b)));
	if (cfg->profile_for_s >= cfg->profile_every_s)
		return vt_cli_usage_error("soak", "--profile-for %s is not shorter than --profile-every %s: "
					  "a profile must end before the next begins",
					  vt_fmt_span(cfg->profile_for_s, a, sizeof(a)),
					  vt_fmt_span(cfg->profile_every_s, b, sizeof(b)));
	if (cfg->profile_every_s < cfg->every_s)
		return vt_cli_usage_error("soak", "--profile-every %s is shorter than --every %s: a profile begins "
					  "at a sample", vt_fmt_span(cfg->profile_every_s, a, sizeof(a)),
					  vt_fmt_span(cfg->every_s, b, sizeof(b)));
	return 0;
}

/* --allocs-every, --allocs-for and --allocs-budget, with each other and with --every. */
static int soak_check_allocs(const struct soak_opts *o)
{
	const struct vt_soak_config *cfg = &o->cfg;
	char a[32], b[32];

	if (cfg->allocs_every_s <= 0) {
		if (o->allocs_for_given)
			return vt_cli_usage_error("soak", "--allocs-for applies only with --allocs-every");
		if (o->allocs_budget_given)
			return vt_cli_usage_error("soak", "--allocs-budget applies only with --allocs-every");
		return 0;
	}
	if (cfg->allocs_for_s >= cfg->allocs_every_s)
		return vt_cli_usage_error("soak", "--allocs-for %s is not shorter than --allocs-every %s: one "
					  "must end before the next begins%s", vt_fmt_span(cfg->allocs_for_s, a, sizeof(a)),
					  vt_fmt_span(cfg->allocs_every_s, b, sizeof(b)),
					  o->allocs_for_given ? "" : " (give a shorter --allocs-for)");
	if (cfg->allocs_every_s < cfg->every_s)
		return vt_cli_usage_error("soak", "--allocs-every %s is shorter than --every %s: an allocation "
					  "profile begins at a sample", vt_fmt_span(cfg->allocs_every_s, a, sizeof(a)),
					  vt_fmt_span(cfg->every_s, b, sizeof(b)));
	return 0;
}

/* The target from the operands: a pid before "--", or the command after it. */
static int soak_target(struct soak_opts *o, const struct vt_args *args)
{
	struct vt_soak_target *t = &o->cfg.target;
	int pid, rc;

	if (args->after) {
		if (t->kind || args->noperands)
			return vt_cli_usage_error("soak", "give one target: a pid, --name, --pidfile or -- COMMAND");
		if (!args->after[0])
			return vt_cli_usage_error("soak", "no command after --");
		t->kind = VT_SOAK_COMMAND;
		t->argv = args->after;
	} else if (args->noperands) {
		if (t->kind || args->noperands > 1)
			return vt_cli_usage_error("soak", "give one target: a pid, --name, --pidfile or -- COMMAND");
		if (!vt_cli_parse_pid(args->operands[0], &pid))
			return vt_cli_usage_error("soak", "'%s' is not a pid (a command goes after --)",
						  args->operands[0]);
		t->kind = VT_SOAK_PID;
		t->pid = pid;
	} else if (!t->kind) {
		return vt_cli_usage_error("soak", "no target: give a pid, --name, --pidfile or -- COMMAND");
	}
	if (o->env && t->kind != VT_SOAK_COMMAND)
		return vt_cli_usage_error("soak", "--env applies only to a command vitals starts (-- COMMAND)");
	if (o->cfg.redact_args && t->kind != VT_SOAK_COMMAND)
		return vt_cli_usage_error("soak", "--redact-args applies only to a command vitals starts (-- COMMAND); "
					  "a pid is recorded as \"pid N\", without its command line");
	if (!o->cfg.out_path)
		return vt_cli_usage_error("soak", "-o FILE is required: where the recording goes");
	if ((rc = soak_check_profiles(o)))
		return rc;
	return soak_check_allocs(o);
}

/*
 * The target could not be soaked: say why.  A name that became several
 * processes while the soak waited for it is refused as at the start, with
 * the list (if it is still several).
 */
static int soak_refused(const struct soak_opts *o, const struct vt_procfs *pfs, const char *one_pid,
			const struct vt_err *err)
{
	pid_t pid;
	int rc;

	if (err->code == VT_E_USAGE && o->cfg.target.kind == VT_SOAK_NAME &&
	    (rc = vt_cli_name_pid(pfs, "soak", o->cfg.target.name, one_pid, false, &pid)))
		return rc;
	return vt_cli_error(err);
}

static int soak_run(const struct vt_command *cmd, int argc, char **argv)
{
	struct soak_opts o = { 0 };
	struct vt_soak_result res;
	struct vt_cli_progress pr = { .prefix = "  " };
	struct vt_soak *sk;
	struct vt_args args;
	struct vt_procfs pfs;
	struct vt_err err;
	char *log_alloc = NULL, *one_pid = NULL, every[32], span[32];
	double next;
	bool done = false;
	pid_t pid;
	int rc;

	vt_soak_config_default(&o.cfg);
	if ((rc = vt_cli_parse(cmd, argc, argv, soak_option, &o, &args)) || (rc = soak_target(&o, &args)))
		goto out;
	if (o.cfg.target.kind == VT_SOAK_COMMAND) {
		if (!o.log && asprintf(&log_alloc, "%s.out", o.cfg.out_path) >= 0)
			o.log = log_alloc;
		o.cfg.target.output = o.log;
		o.cfg.target.env_add = o.env;
	}
	if (asprintf(&one_pid, "vitals soak -o %s", o.cfg.out_path) < 0)
		one_pid = NULL;
	if ((rc = vt_cli_open_procfs(&pfs, &err))) {
		rc = vt_cli_error(&err);
		goto out;
	}
	/* a name that is several processes is refused before anything is printed or made */
	if (o.cfg.target.kind == VT_SOAK_NAME &&
	    (rc = vt_cli_name_pid(&pfs, "soak", o.cfg.target.name, one_pid ? one_pid : "vitals soak", false, &pid))) {
		vt_procfs_close(&pfs);
		goto out;
	}
	vt_cli_catch_stop(&o.cfg.stop);
	if (o.cfg.allocs_every_s > 0) {
		/* Ctrl-Z while an allocation profile's probes are armed: its window closes first */
		static volatile sig_atomic_t probes_armed;

		o.cfg.probes_armed = &probes_armed;
		vt_cli_catch_tstp(&o.cfg.pause, &probes_armed);
		o.cfg.paused = vt_cli_tstp_paused;
	}
	o.cfg.notice = vt_cli_soak_notice;
	o.cfg.notice_ctx = &pr;
	if (!o.quiet) {
		o.cfg.progress = vt_cli_soak_progress;
		o.cfg.progress_ctx = &pr;
	}
	memset(&res, 0, sizeof(res));
	if ((rc = vt_soak_start(&pfs, &o.cfg, &sk, &err))) {
		vt_cli_progress_end(&pr);
		rc = soak_refused(&o, &pfs, one_pid ? one_pid : "vitals soak", &err);
		vt_procfs_close(&pfs);
		goto out;
	}
	if (!o.quiet) {
		vt_cli_progress_end(&pr);    /* the line drawn while waiting for --name or --pidfile */
		fprintf(stderr, "vitals: recording into %s every %s%s%s; Ctrl-C ends it\n", o.cfg.out_path,
			vt_fmt_span(o.cfg.every_s, every, sizeof(every)), o.cfg.for_s > 0 ? " for " : "",
			o.cfg.for_s > 0 ? vt_fmt_span(o.cfg.for_s, span, sizeof(span)) : "");
	}
	while (vt_soak_step(sk, &next, &done, &err) == VT_OK && !done)
		vt_sleep_until_ns((uint64_t)(next * 1e9), o.cfg.stop);
	rc = vt_soak_finish(sk, &res, &err);
	vt_cli_progress_end(&pr);
	vt_procfs_close(&pfs);
	if (rc != VT_OK && res.samples == 0) {
		rc = vt_cli_error(&err);
		goto out;
	}
	vt_cli_soak_summary(stdout, o.cfg.out_path, &res);
	if (rc != VT_OK)
		rc = vt_cli_error(&err);
	else if (res.end == VT_SOAK_END_GONE) {
		fprintf(stderr, "vitals: %s\n", res.end_detail);
		rc = vt_code_exit(VT_E_GONE);
	} else if (res.end == VT_SOAK_END_TARGET_EXITED || res.missing[0]) {
		rc = VT_EXIT_PARTIAL;
	}
out:
	free(log_alloc);
	free(one_pid);
	free(o.env);
	return rc == VT_CLI_HELP ? VT_EXIT_OK : rc;
}

const struct vt_command vt_cmd_soak = {
	.name = "soak",
	.summary = "record memory and CPU durably for hours (SQLite), following restarts",
	.synopsis = "[options] -o FILE PID\n"
		    "[options] -o FILE --name NAME | --pidfile PIDFILE\n"
		    "[options] -o FILE -- COMMAND [ARGS...]",
	.description =
"Record a process's memory and CPU durably, for hours, so that `vitals\n"
"analyze` can tell a leak from a plateau.  Every sample is written to FILE\n"
"(SQLite, one transaction per sample) as it is taken: killing vitals loses at\n"
"most the sample being taken.  FILE can be analysed while it is written.\n"
"\n"
"Each sample: RssAnon, VmSwap, committed (their sum), RSS, arenas and 64 MiB\n"
"heap regions (from maps), threads, process CPU, the cgroup's memory and swap,\n"
"the deepest accept queue of its listening TCP sockets (for analyze's stalls),\n"
"and every thread's CPU, run-queue wait and context-switch counters (read\n"
"every tick through held-open files, written every --threads-every and when a\n"
"thread exits).  At the per-thread cadence each thread's state, wchan and\n"
"system call too, kept as a tally per thread, and the locks its threads wait\n"
"on (what vitals locks reads, from that one sample: no thread is stopped),\n"
"which vitals analyze counts up.  Pss (smaps_rollup) only every\n"
"--smaps-every: the kernel walks the page tables for it under the target's\n"
"mmap lock, tens of milliseconds on a large process.  Allocator figures\n"
"(live, free-held, keepcost) when the process runs the vitals agent, or with\n"
"--heap.\n"
"\n"
"On glibc, the free memory that costs RAM: free_resident, the bytes of\n"
"malloc's free chunks on resident pages (fordblks also counts free pages the\n"
"kernel never backed or took back), and trimmable, the resident whole pages\n"
"malloc_trim(0) could give back.  They come from a walk of the arenas that\n"
"never stops the process (process_vm_readv and pagemap, counts only), at most\n"
"every --free-every and spaced further so that the walks' CPU stays within\n"
"--free-budget of one core: a walk cost about 0.23 s of CPU per GiB of\n"
"resident heap on a 2-core VM, so at the defaults a 1 GiB heap is walked\n"
"every minute for about 0.4% of a core, and a 10 GiB heap every 4 minutes or\n"
"so.  A walk the process changes under, or that its exit cuts short, leaves\n"
"that sample's figures unknown.  The summary says what the walks cost.\n"
"\n"
"With --profile-every, a CPU profile of the process (what vitals profile\n"
"takes: stacks sampled with perf events, bucketed by what the code does) for\n"
"--profile-for, the first at the start, stored whole in the recording.  It is\n"
"taken in a thread of its own: sampling goes on meanwhile.  A soak that ends\n"
"during one stores what it has, marked partial; after a restart the next one\n"
"is of the new process.  vitals analyze shows the CPU by bucket over time and\n"
"which bucket grew when CPU rose; vitals compare sets two recordings' profiles\n"
"side by side.  Where perf events are refused the soak goes on without them\n"
"and says so once.\n"
"\n"
"With --allocs-every, an allocation profile (what vitals allocs takes: the\n"
"allocator's entry points probed with uprobes in windows, or the agent's\n"
"in-process sampling where it runs libvitals-agent-allocs.so; each site's\n"
"calls, bytes and what became of its blocks) for --allocs-for, the first at the\n"
"start, stored in the recording (its 128 sites of the most bytes, with their\n"
"first stack).  Its probes slow the target's allocating code, within\n"
"--allocs-budget: it is never taken while a CPU profile is, and one due\n"
"meanwhile waits for the other to end.  Ctrl-Z while its probes are armed\n"
"closes their window before vitals stops.  vitals analyze shows each site\n"
"over the profiles; vitals compare sets two recordings' sites side by side\n"
"(\"the change removed 1.1 GiB/h of churn from poll_round\").\n"
"\n"
"The target:\n"
"  PID                      that process; if it exits, a new process with the\n"
"                           same command line is followed (a restart)\n"
"  --name NAME              the process called NAME; followed across restarts;\n"
"                           several processes of that name (a parent and its\n"
"                           same-named workers) are refused, with each one's\n"
"                           pid, role and RSS, before any file is made\n"
"  --pidfile FILE           the pid in FILE, read again after a restart\n"
"  -- COMMAND [ARGS...]     vitals starts COMMAND, soaks it, and stops it at the\n"
"                           end (SIGTERM, then SIGKILL after 5 s)\n"
"A followed target that exits is waited for, up to --wait-back (5 min); if\n"
"nothing comes back the soak ends, says so in the recording and on stderr,\n"
"and exits 4.  Parts of the target that cannot be read (no ptrace access to\n"
"another user's process: maps, smaps_rollup, each thread's wchan and system\n"
"call) are named once, on stderr and in the recording; the rest is recorded.\n"
"Options may come before or after PID; only -- ends them.\n"
"\n"
"The recording keeps how the target was named.  Of a command, the values of\n"
"arguments that look like secrets are recorded as an ellipsis: --NAME=VALUE and\n"
"NAME=VALUE, and --NAME VALUE, where NAME holds password, passwd, secret,\n"
"token, key, auth or credential (any case), and the password of a URL's\n"
"user:password@; --redact-args records the command's name only.  A short\n"
"flag (-p VALUE) is recorded as it is.\n"
"\n"
"FILE and FILE.out are created afresh, never through a symbolic link; one that\n"
"exists is refused unless --force, which replaces it.  A soak holds a lock on\n"
"FILE while it writes it: a second soak onto it is refused, --force or not.\n",
	.options = soak_options,
	.after = "Ctrl-C (or SIGTERM) ends the soak cleanly.  Then: vitals analyze FILE.\n",
	.exits = soak_exits,
	.examples = soak_examples,
	.takes_command = true,
	.libs = VT_CMD_LIBDW,
	.run = soak_run,
};

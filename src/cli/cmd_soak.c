/*
 * cmd_soak.c — `vitals soak TARGET -o run.db [--every 10s] [--for 4h]`.
 *
 * Parses the target and the cadences, shows a progress line while the
 * sampler runs (src/soak), and prints where the recording is and what to
 * run next.
 */
#include "cli/cli.h"
#include "cli/soak_cli.h"
#include "render/soak.h"
#include "soak/soak.h"

#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void soak_usage(FILE *out)
{
	fprintf(out,
"usage: vitals soak [options] -o FILE PID\n"
"       vitals soak [options] -o FILE --name NAME | --pidfile PIDFILE\n"
"       vitals soak [options] -o FILE -- COMMAND [ARGS...]\n"
"\n"
"Record a process's memory and CPU durably, for hours, so that `vitals\n"
"analyze` can tell a leak from a plateau.  Every sample is written to FILE\n"
"(SQLite, one transaction per sample) as it is taken: killing vitals loses at\n"
"most the sample being taken.  FILE can be analysed while it is written.\n"
"\n"
"Each sample: RssAnon, VmSwap, committed (their sum), RSS, arenas and 64 MiB\n"
"heap regions (from maps), threads, process CPU, the cgroup's memory and swap,\n"
"and every thread's CPU, run-queue wait and context-switch counters (read\n"
"every tick through held-open files, written every --threads-every and when a\n"
"thread exits).  Pss (smaps_rollup) only every --smaps-every: the kernel walks\n"
"the page tables for it under the target's mmap lock, tens of milliseconds on a\n"
"large process.\n"
"Allocator figures (live, free-held, keepcost) when the process runs the\n"
"vitals agent, or with --heap.\n"
"\n"
"target:\n"
"  PID                      that process; if it exits, a new process with the\n"
"                           same command line is followed (a restart)\n"
"  --name NAME              the process called NAME (comm or argv[0]); followed\n"
"                           across restarts\n"
"  --pidfile FILE           the pid in FILE, read again after a restart\n"
"  -- COMMAND [ARGS...]     vitals starts COMMAND, soaks it, and stops it at the\n"
"                           end (SIGTERM, then SIGKILL after 5 s)\n"
"\n"
"options:\n"
"  -o, --output FILE        the recording to write (required)\n"
"  -e, --every DURATION     sampling interval (default 10s; at least 0.1s)\n"
"  -f, --for DURATION       stop after DURATION (default: until Ctrl-C)\n"
"  --smaps-every DURATION   Pss (smaps_rollup) cadence (default 10m; 0 = never)\n"
"  --threads-every DURATION per-thread rows cadence (default 1m)\n"
"  --heap                   allocator figures by ptrace when no agent answers:\n"
"                           stops one thread for about 1-2 ms per probe\n"
"  --heap-every DURATION    allocator figures cadence (default 1m)\n"
"  --wait DURATION          how long --name/--pidfile may take to appear\n"
"                           (default 30s)\n"
"  --env KEY=VALUE          with -- COMMAND: add to its environment (repeat)\n"
"  --log FILE               with -- COMMAND: its output (default FILE.out)\n"
"  --force                  overwrite FILE if it exists\n"
"  -q, --quiet              no progress line\n"
"  -h, --help               this help\n"
"\n"
"Ctrl-C (or SIGTERM) ends the soak cleanly.  Then: vitals analyze FILE.\n"
"\n"
"exit status: 0 ok; 1 the target exited and could not be followed (the\n"
"recording is complete up to then); 2 the recording could not be written\n"
"(disk full: every sample before is kept); 3 no such process, or it never\n"
"appeared, or the command could not be run; 5 permission denied; 6 kernel\n"
"thread; 7 zombie; 64 usage.\n");
}

/* The progress line: rewritten in place on a terminal, one line a minute otherwise. */
void vt_cli_soak_progress(void *ctx, const struct vt_soak_progress *p)
{
	struct vt_cli_progress *pr = ctx;
	char el[32], left[32], size[32], tr[48] = "", win[32], bar[24] = "";
	bool tty = isatty(STDERR_FILENO);

	if (!tty && pr->lines && p->elapsed_s - pr->last_line < 60)
		return;
	pr->last_line = p->elapsed_s;
	pr->lines++;
	vt_fmt_span(p->elapsed_s, el, sizeof(el));
	if (!isnan(p->trend) && p->trend_window_s > 0) {
		char d[32];

		snprintf(tr, sizeof(tr), " · trend %s/h over %s", vt_fmt_size_delta(p->trend * 3600, d, sizeof(d)),
			 vt_fmt_span(p->trend_window_s, win, sizeof(win)));
	}
	if (p->planned_s > 0) {
		int filled = (int)fmin(10, floor(10 * p->elapsed_s / p->planned_s));

		snprintf(bar, sizeof(bar), "[%.*s%.*s] ", filled, "##########", 10 - filled, "..........");
		snprintf(left, sizeof(left), ", %s left", vt_fmt_span(fmax(0, p->planned_s - p->elapsed_s), win,
								   sizeof(win)));
	} else {
		left[0] = '\0';
	}
	fprintf(stderr, "%s%s%s%s elapsed%s · %llu samples · ", tty ? "\r\033[K" : "", pr->prefix, bar,
		el, left, (unsigned long long)p->samples);
	if (p->pid)
		fprintf(stderr, "pid %d · committed %s%s", (int)p->pid,
			isnan(p->committed) ? "n/a" : vt_fmt_size(p->committed, size, sizeof(size)), tr);
	else
		fprintf(stderr, "%s", p->state);
	if (p->restarts)
		fprintf(stderr, " · %d restart%s", p->restarts, p->restarts == 1 ? "" : "s");
	fputs(tty ? "" : "\n", stderr);
	pr->drawn = tty;
}

void vt_cli_progress_end(struct vt_cli_progress *pr)
{
	if (pr->drawn)
		fputs("\n", stderr);
	pr->drawn = false;
}

int cmd_soak(int argc, char **argv)
{
	enum { OPT_NAME = 256, OPT_PIDFILE, OPT_SMAPS, OPT_THREADS, OPT_HEAP, OPT_HEAP_EVERY, OPT_WAIT,
	       OPT_ENV, OPT_LOG, OPT_FORCE };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "every", required_argument, NULL, 'e' },
		{ "for", required_argument, NULL, 'f' },
		{ "name", required_argument, NULL, OPT_NAME },
		{ "pidfile", required_argument, NULL, OPT_PIDFILE },
		{ "smaps-every", required_argument, NULL, OPT_SMAPS },
		{ "threads-every", required_argument, NULL, OPT_THREADS },
		{ "heap", no_argument, NULL, OPT_HEAP },
		{ "heap-every", required_argument, NULL, OPT_HEAP_EVERY },
		{ "wait", required_argument, NULL, OPT_WAIT },
		{ "env", required_argument, NULL, OPT_ENV },
		{ "log", required_argument, NULL, OPT_LOG },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct vt_soak_config cfg;
	struct vt_soak_result res;
	struct vt_cli_progress pr = { .prefix = "  " };
	struct vt_procfs pfs;
	struct vt_err err;
	char **env_add = NULL, *log_path = NULL, *log_alloc = NULL, text[64];
	size_t nenv = 0;
	bool quiet = false;
	double *dur;
	int c, pid, rc;

	vt_soak_config_default(&cfg);
	optind = 1;
	/* "+": stop at the first non-option, so COMMAND's own options stay its own */
	while ((c = getopt_long(argc, argv, "+o:e:f:qh", longopts, NULL)) != -1) {
		dur = NULL;
		switch (c) {
		case 'o': cfg.out_path = optarg; break;
		case 'e': dur = &cfg.every_s; break;
		case 'f': dur = &cfg.for_s; break;
		case OPT_SMAPS: dur = &cfg.smaps_every_s; break;
		case OPT_THREADS: dur = &cfg.threads_every_s; break;
		case OPT_HEAP_EVERY: dur = &cfg.heap_every_s; break;
		case OPT_WAIT: dur = &cfg.wait_s; break;
		case OPT_NAME: cfg.target.kind = VT_SOAK_NAME; cfg.target.name = optarg; break;
		case OPT_PIDFILE: cfg.target.kind = VT_SOAK_PIDFILE; cfg.target.pidfile = optarg; break;
		case OPT_HEAP: cfg.heap = true; break;
		case OPT_ENV:
			if (!strchr(optarg, '=') || optarg[0] == '=')
				return vt_cli_usage_error("soak", "--env wants KEY=VALUE, not '%s'", optarg);
			env_add = realloc(env_add, (nenv + 2) * sizeof(*env_add));
			if (!env_add)
				return vt_cli_usage_error("soak", "out of memory");
			env_add[nenv++] = optarg;
			env_add[nenv] = NULL;
			break;
		case OPT_LOG: log_path = optarg; break;
		case OPT_FORCE: cfg.overwrite = true; break;
		case 'q': quiet = true; break;
		case 'h': soak_usage(stdout); free(env_add); return 0;
		default: soak_usage(stderr); free(env_add); return 64;
		}
		if (dur && !vt_parse_duration(optarg, dur)) {
			free(env_add);
			return vt_cli_usage_error("soak", "'%s' is not a duration (30s, 5m, 2h)", optarg);
		}
	}
	rc = 64;
	if (!cfg.out_path) {
		vt_cli_usage_error("soak", "-o FILE is required: where the recording goes");
		goto out;
	}
	if (cfg.every_s < 0.1 || cfg.for_s < 0 || cfg.smaps_every_s < 0 || cfg.threads_every_s < 0) {
		vt_cli_usage_error("soak", "the interval must be at least 0.1s and durations not negative");
		goto out;
	}
	if (optind < argc && strcmp(argv[optind - 1], "--") == 0) {
		if (cfg.target.kind) {
			vt_cli_usage_error("soak", "give one target: a pid, --name, --pidfile or -- COMMAND");
			goto out;
		}
		cfg.target.kind = VT_SOAK_COMMAND;
		cfg.target.argv = argv + optind;
	} else if (optind < argc) {
		if (cfg.target.kind || optind + 1 != argc) {
			vt_cli_usage_error("soak", "give one target: a pid, --name, --pidfile or -- COMMAND");
			goto out;
		}
		if (!vt_cli_parse_pid(argv[optind], &pid)) {
			vt_cli_usage_error("soak", "'%s' is not a pid", argv[optind]);
			goto out;
		}
		cfg.target.kind = VT_SOAK_PID;
		cfg.target.pid = pid;
	} else if (!cfg.target.kind) {
		vt_cli_usage_error("soak", "no target: give a pid, --name, --pidfile or -- COMMAND");
		goto out;
	}
	if (env_add && cfg.target.kind != VT_SOAK_COMMAND) {
		vt_cli_usage_error("soak", "--env applies only to a command vitals starts (-- COMMAND)");
		goto out;
	}
	if (cfg.target.kind == VT_SOAK_COMMAND) {
		if (!log_path && asprintf(&log_alloc, "%s.out", cfg.out_path) >= 0)
			log_path = log_alloc;
		cfg.target.output = log_path;
		cfg.target.env_add = env_add;
	}
	if ((rc = vt_cli_open_procfs(&pfs, &err))) {
		rc = vt_cli_error(&err);
		goto out;
	}
	vt_cli_catch_stop(&cfg.stop);
	if (!quiet) {
		cfg.progress = vt_cli_soak_progress;
		cfg.progress_ctx = &pr;
		fprintf(stderr, "vitals: recording into %s every %s%s%s; Ctrl-C ends it\n", cfg.out_path,
			vt_fmt_span(cfg.every_s, text, sizeof(text)), cfg.for_s > 0 ? " for " : "",
			cfg.for_s > 0 ? vt_fmt_span(cfg.for_s, text + 32, 32) : "");
	}
	rc = vt_soak_run(&pfs, &cfg, &res, &err);
	vt_cli_progress_end(&pr);
	vt_procfs_close(&pfs);
	if (rc != VT_OK && res.samples == 0) {
		rc = vt_cli_error(&err);
		goto out;
	}
	vt_cli_soak_summary(stdout, cfg.out_path, &res);
	if (rc != VT_OK)
		rc = vt_cli_error(&err);
	else if (strncmp(res.end_reason, "the target", 10) == 0)
		rc = VT_EXIT_PARTIAL;
out:
	free(log_alloc);
	free(env_add);
	return rc;
}

void vt_cli_soak_summary(FILE *out, const char *path, const struct vt_soak_result *res)
{
	char el[32], size[32], per[32];

	fprintf(out, "recorded %llu sample%s over %s into %s (%s, %s per sample); %s\n",
		(unsigned long long)res->samples, res->samples == 1 ? "" : "s",
		vt_fmt_span(res->elapsed_s, el, sizeof(el)), path,
		vt_fmt_size((double)res->file_bytes, size, sizeof(size)),
		res->samples ? vt_fmt_size((double)res->file_bytes / (double)res->samples, per, sizeof(per)) : "n/a",
		res->end_reason[0] ? res->end_reason : "done");
	if (res->restarts)
		fprintf(out, "the target restarted %d time%s; each restart is in the recording\n", res->restarts,
			res->restarts == 1 ? "" : "s");
	if (res->elapsed_s > 0)
		fprintf(out, "vitals used %.2f s of CPU (%.2f%% of one core) and %s of memory\n", res->own_cpu_s,
			100.0 * res->own_cpu_s / res->elapsed_s,
			vt_fmt_size((double)res->own_maxrss, size, sizeof(size)));
	fprintf(out, "next: vitals analyze %s\n", path);
}

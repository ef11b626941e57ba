/*
 * cmd_threads.c — `vitals threads PID [-i 5s] [--json]`.
 *
 * Samples every thread of the process every 100 ms over the interval, then
 * prints rates from the first and last sample (states and wchans from all).
 */
#include "cli/cli.h"
#include "cpu/diagnose.h"
#include "cpu/rates.h"
#include "cpu/threads.h"
#include "render/threads.h"
#include "sample/target.h"

#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define THREADS_STEP_NS 100000000ull   /* 100 ms between state samples */
#define THREADS_MAX_INTERVAL_S 3600.0

static void threads_usage(FILE *out)
{
	fprintf(out,
"usage: vitals threads [options] PID\n"
"\n"
"How much CPU a process uses now, which of its threads use it, and what they\n"
"are doing.  vitals reads every thread's cumulative counters at the start and\n"
"the end of the interval and divides the deltas by the interval: the figures\n"
"are the rate over that interval, never a since-start average.  In between it\n"
"samples every 100 ms to count thread states (R running or runnable, S sleeping,\n"
"D uninterruptible, ...) and the kernel function each thread sleeps in (wchan).\n"
"\n"
"  process CPU  in cores (0.60 = 60%% of one CPU), from the threads' schedstat\n"
"               run time (nanoseconds); from /proc/PID/stat utime+stime (10 ms\n"
"               ticks, includes exited threads) when schedstat is missing or\n"
"               threads exited; user/system split by the stat tick deltas\n"
"  ps shows     (utime+stime) / time since start, what ps %%CPU prints; a note\n"
"               says when it differs from the interval rate by over 10 points\n"
"  per thread   cores, share of the process, RUNQ (time runnable but waiting\n"
"               for a CPU, share of the interval), voluntary and nonvoluntary\n"
"               context switches per second (kept apart), last CPU, states,\n"
"               most frequent wchan; + marks threads that appeared, - threads\n"
"               that exited during the interval (rates over the part they lived)\n"
"  pools        threads whose names differ only by trailing digits, with the\n"
"               spread of their CPU\n"
"  diagnosis    idle, core contention, lock convoy or busy poll, each with the\n"
"               figures it rests on; otherwise \"no pattern\"\n"
"\n"
"options:\n"
"  -i, --interval DURATION  measure over DURATION (default 5s; at least 0.2s,\n"
"                           at most 1h; 30, 30s, 5m)\n"
"  --json                   machine-readable output (schema vitals.threads v1)\n"
"  -h, --help               this help\n"
"\n"
"Nothing is written to the target and it is never stopped.  wchan needs\n"
"ptrace-read access to the process; without it the column says why.\n"
"\n"
"exit status: 0 ok; 1 partial (the process exited during the interval: the\n"
"part measured is shown); 3 no such process; 4 it exited before two samples;\n"
"5 permission denied; 6 kernel thread; 7 zombie; 64 usage (including an\n"
"interval below 0.2 s, or a thread id instead of a process id).\n");
}

static void sleep_until(uint64_t mono_ns)
{
	struct timespec ts = { (time_t)(mono_ns / 1000000000ull), (long)(mono_ns % 1000000000ull) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* CPU seconds this process (vitals) has used so far. */
static double self_cpu(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return -1;
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static int allowed_cpus(pid_t pid)
{
	cpu_set_t set;

	if (sched_getaffinity(pid, sizeof(set), &set) == 0)
		return CPU_COUNT(&set);
	return (int)sysconf(_SC_NPROCESSORS_ONLN);
}

int cmd_threads(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct vt_buf buf = VT_BUF_INIT(1u << 20);
	struct vt_threads_sample *samples = NULL;
	struct vt_threads_rates rates;
	struct vt_diagnosis diag;
	struct vt_proc_stat st;
	struct vt_proc_status status;
	struct vt_procfs pfs;
	struct vt_err err;
	double interval = 5, self0;
	bool json = false, partial = false;
	size_t n = 0, cap, i;
	uint64_t start, end, next;
	int c, pid, dirfd = -1, rc, exit_status = 0;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "i:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (!vt_cli_parse_duration(optarg, &interval))
				return vt_cli_usage_error("threads", "'%s' is not a duration (try 5s, 0.5, 1m)",
							  optarg);
			if (interval < VT_RATES_MIN_INTERVAL_S)
				return vt_cli_usage_error("threads",
							  "interval '%s' is too short to measure: the minimum is %.1fs",
							  optarg, VT_RATES_MIN_INTERVAL_S);
			if (interval > THREADS_MAX_INTERVAL_S)
				return vt_cli_usage_error("threads", "interval '%s' is over the maximum of 1h",
							  optarg);
			break;
		case 'j': json = true; break;
		case 'h': threads_usage(stdout); return 0;
		default:
			return vt_cli_usage_error("threads", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return vt_cli_usage_error("threads", "which process? give a PID");
	if (optind + 1 < argc)
		return vt_cli_usage_error("threads", "unexpected argument '%s' (one PID)", argv[optind + 1]);
	if (!vt_cli_parse_pid(argv[optind], &pid))
		return vt_cli_usage_error("threads", "'%s' is not a process id", argv[optind]);

	vt_err_clear(&err);
	if (vt_cli_open_procfs(&pfs, &err))
		return vt_cli_error(&err);
	rc = vt_pid_open(&pfs, pid, &dirfd, &err);
	if (rc == VT_OK)
		rc = vt_target_check(dirfd, pid, &buf, &st, &status, &err);
	if (rc != VT_OK) {
		exit_status = vt_cli_error(&err);
		goto out;
	}

	cap = (size_t)(interval * 1e9 / (double)THREADS_STEP_NS) + 3;
	samples = calloc(cap, sizeof(*samples));
	if (!samples) {
		vt_err_set(&err, VT_E_NOMEM, ENOMEM, "out of memory");
		exit_status = vt_cli_error(&err);
		goto out;
	}
	self0 = self_cpu();
	start = vt_threads_now_ns();
	end = start + (uint64_t)(interval * 1e9);
	for (next = start;; ) {
		rc = vt_threads_sample_take(&pfs, dirfd, pid, &buf, &samples[n], &err);
		if (rc != VT_OK) {
			if (rc != VT_E_GONE && rc != VT_E_NOPROC) {
				exit_status = vt_cli_error(&err);
				goto out;
			}
			partial = true;   /* exited: keep what was measured */
			break;
		}
		n++;
		if (samples[n - 1].mono_ns >= end || n == cap)
			break;
		next += THREADS_STEP_NS;
		if (next > end)
			next = end;
		sleep_until(next);
	}
	if (n < 2 || samples[n - 1].mono_ns - samples[0].mono_ns <
			     (uint64_t)(VT_RATES_MIN_INTERVAL_S * 1e9)) {
		vt_err_set(&err, VT_E_GONE, 0, "process %d exited before it could be measured", pid);
		exit_status = vt_cli_error(&err);
		goto out;
	}
	if (partial)
		fprintf(stderr, "vitals: note: process %d exited during the interval; "
			"the figures cover the %.2f s measured before it did\n", pid,
			(double)(samples[n - 1].mono_ns - samples[0].mono_ns) / 1e9);
	rc = vt_threads_rates_compute(samples, n, allowed_cpus(pid), &rates, &err);
	if (rc != VT_OK) {
		exit_status = vt_cli_error(&err);
		goto out;
	}
	rates.process_exited = partial;
	if (self0 >= 0 && self_cpu() >= self0)
		rates.self_cpu_s = self_cpu() - self0;
	vt_diagnose(&rates, &diag);
	if ((json ? vt_render_threads_json : vt_render_threads_text)(stdout, &rates, &diag) != 0 ||
	    fflush(stdout) != 0) {
		fprintf(stderr, "vitals: cannot write output\n");
		exit_status = 2;
	} else if (partial) {
		exit_status = VT_EXIT_PARTIAL;
	}
	vt_threads_rates_release(&rates);
out:
	for (i = 0; i < n; i++)
		vt_threads_sample_release(&samples[i]);
	free(samples);
	if (dirfd >= 0)
		close(dirfd);
	vt_buf_release(&buf);
	vt_procfs_close(&pfs);
	return exit_status;
}

/*
 * threads_parts — what reading every thread of a process costs vitals, and a
 * timer for the other tools' runs.  Built and run by bench/threads.
 *
 *   threads_parts ticks PID TICKS GAP_MS
 *       Opens /proc/PID once, then times, each TICKS times with GAP_MS of sleep
 *       between ticks (a soak reads once a second, so caches are not kept hot):
 *         first         vt_thread_watch_open + the first read (opens every fd)
 *         watch         vt_thread_watch_read, held fds, flags 0 (stat + schedstat)
 *         watch_csw     the same with VT_TW_CSW (+ status)
 *         watch_byname  vt_thread_watch_read with no fd budget (open-read-close
 *                       of stat + schedstat: threads beyond RLIMIT_NOFILE)
 *         sample        vt_threads_sample_take with every flag (stat, schedstat,
 *                       status, wchan, syscall; held fds): one state sample
 *                       of `vitals threads`
 *       CPU is this process's own (CLOCK_PROCESS_CPUTIME_ID; it has one
 *       thread).  Prints "threads N" and "fds N" (the held watch's), then
 *       "NAME cpu_median_us cpu_max_us wall_median_us" per tick.
 *
 *   threads_parts locks PID TICKS GAP_MS
 *       The cost of reading the locks at each sample of `vitals threads`
 *       (sample/locks.h): TICKS state samples timed alone and TICKS timed
 *       with vt_lock_probe_sample after each, interleaved.  Prints
 *       "sample" and "sample_locks" lines as ticks does, and "waits N":
 *       the futex waits the probe counted.
 *
 *   threads_parts exec RUNS CMD [ARG...]
 *       Runs CMD once to warm up, then RUNS times, stdout to /dev/null, and
 *       prints "cpu_median_ms cpu_max_ms wall_median_ms": user + sys of the
 *       child from wait4(), and its wall time.  Exits 2 if CMD fails.
 *
 *   threads_parts once CMD [ARG...]
 *       Runs CMD once, stdout to /dev/null, and prints "cpu_ms user_ms
 *       sys_ms wall_ms" (user + sys from wait4(): the whole invocation, exec
 *       and exit included).  Exits 2 if CMD fails.  bench/threads takes
 *       turns between the tools with it, run by run.
 */
#include "proc/thread_watch.h"
#include "sample/locks.h"
#include "sample/threads.h"
#include "proc/procfs.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { FIRST, WATCH, WATCH_CSW, WATCH_BYNAME, SAMPLE, NPARTS };
static const char *const part_name[NPARTS] = {
	"first", "watch", "watch_csw", "watch_byname", "sample",
};
#define SAMPLE_FLAGS (VT_TW_CSW | VT_TW_WCHAN | VT_TW_SYSCALL)

static double clock_us(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void die(const char *what, const struct vt_err *e)
{
	fprintf(stderr, "threads_parts: %s: %s\n", what, e ? e->msg : "failed");
	exit(2);
}

static void nap(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* One timed call per tick; cpu[] and wall[] get TICKS entries each. */
static int ticks(pid_t pid, int n, int gap_ms)
{
	static double cpu[NPARTS][1000], wall[NPARTS][1000], t0, w0;
	struct vt_thread_watch *w, *wn, *ws;
	struct vt_thread_watch_stats stats;
	struct vt_threads_sample sample;
	struct vt_procfs pfs;
	struct vt_err err;
	size_t threads = 0, fds = 0;
	int pid_fd, i, k;

	if (vt_procfs_open(&pfs, NULL, NULL, &err))
		die("open /proc", &err);
	if (vt_pid_open(&pfs, pid, &pid_fd, &err))
		die("open the process", &err);
	for (i = 0; i < n; i++) {
		/* first: a fresh watch, opened and read once */
		t0 = clock_us(CLOCK_PROCESS_CPUTIME_ID);
		w0 = clock_us(CLOCK_MONOTONIC);
		if (vt_thread_watch_open(&pfs, pid_fd, pid, &w, &err) ||
		    vt_thread_watch_read(w, 0, &err))
			die("first read", &err);
		cpu[FIRST][i] = clock_us(CLOCK_PROCESS_CPUTIME_ID) - t0;
		wall[FIRST][i] = clock_us(CLOCK_MONOTONIC) - w0;
		threads = vt_thread_watch_count(w);
		vt_thread_watch_close(w);
		nap(gap_ms);
	}

	if (vt_thread_watch_open(&pfs, pid_fd, pid, &w, &err) || vt_thread_watch_read(w, VT_TW_CSW, &err))
		die("watch", &err);
	if (vt_thread_watch_open(&pfs, pid_fd, pid, &wn, &err))
		die("watch", &err);
	vt_thread_watch_set_fd_max(wn, 0);
	if (vt_thread_watch_read(wn, 0, &err))
		die("watch by name", &err);
	if (vt_thread_watch_open(&pfs, pid_fd, pid, &ws, &err) ||
	    vt_thread_watch_read(ws, SAMPLE_FLAGS, &err))
		die("watch for samples", &err);
	for (i = 0; i < n; i++) {
		for (k = WATCH; k < NPARTS; k++) {     /* interleaved: noise lands on all */
			nap(gap_ms);
			t0 = clock_us(CLOCK_PROCESS_CPUTIME_ID);
			w0 = clock_us(CLOCK_MONOTONIC);
			switch (k) {
			case WATCH:
			case WATCH_CSW:
				if (vt_thread_watch_read(w, k == WATCH_CSW ? VT_TW_CSW : 0, &err))
					die("read", &err);
				break;
			case WATCH_BYNAME:
				if (vt_thread_watch_read(wn, 0, &err))
					die("read by name", &err);
				break;
			case SAMPLE:
				if (vt_threads_sample_take(ws, SAMPLE_FLAGS, &sample, &err))
					die("vt_threads_sample_take", &err);
				vt_threads_sample_release(&sample);
				break;
			}
			cpu[k][i] = clock_us(CLOCK_PROCESS_CPUTIME_ID) - t0;
			wall[k][i] = clock_us(CLOCK_MONOTONIC) - w0;
		}
	}
	vt_thread_watch_stats(w, &stats);
	fds = stats.fds;
	vt_thread_watch_stats(wn, &stats);
	if (stats.held != 0 || stats.reopened == 0) {
		fprintf(stderr, "threads_parts: the no-budget watch held %zu threads\n", stats.held);
		return 2;
	}
	vt_thread_watch_close(w);
	vt_thread_watch_close(wn);
	vt_thread_watch_close(ws);
	close(pid_fd);
	vt_procfs_close(&pfs);

	printf("threads %zu\nfds %zu\n", threads, fds);
	for (k = 0; k < NPARTS; k++) {
		double mw = median(wall[k], n), mc = median(cpu[k], n);

		printf("%s %.1f %.1f %.1f\n", part_name[k], mc, cpu[k][n - 1], mw);
	}
	return 0;
}

static int lock_ticks(pid_t pid, int n, int gap_ms)
{
	static double cpu[2][1000], wall[2][1000];
	struct vt_lock_probe *lp;
	struct vt_thread_watch *ws;
	struct vt_threads_sample sample;
	struct vt_locks locks = { 0 };
	struct vt_procfs pfs;
	struct vt_err err;
	double t0, w0;
	int pid_fd, i, k;

	if (vt_procfs_open(&pfs, NULL, NULL, &err))
		die("open /proc", &err);
	if (vt_pid_open(&pfs, pid, &pid_fd, &err))
		die("open the process", &err);
	if (vt_thread_watch_open(&pfs, pid_fd, pid, &ws, &err) || vt_thread_watch_read(ws, SAMPLE_FLAGS, &err))
		die("watch for samples", &err);
	if (vt_lock_probe_open(&pfs, pid, pid_fd, &lp, &err))
		die("lock probe", &err);
	for (i = 0; i < n; i++) {
		for (k = 0; k < 2; k++) {
			nap(gap_ms);
			t0 = clock_us(CLOCK_PROCESS_CPUTIME_ID);
			w0 = clock_us(CLOCK_MONOTONIC);
			if (vt_threads_sample_take(ws, SAMPLE_FLAGS, &sample, &err))
				die("vt_threads_sample_take", &err);
			if (k == 1 && vt_lock_probe_sample(lp, &sample, &locks, &err))
				die("vt_lock_probe_sample", &err);
			vt_threads_sample_release(&sample);
			cpu[k][i] = clock_us(CLOCK_PROCESS_CPUTIME_ID) - t0;
			wall[k][i] = clock_us(CLOCK_MONOTONIC) - w0;
		}
	}
	printf("waits %llu\nunwinds %llu\n", (unsigned long long)locks.futex_waits,
	       (unsigned long long)locks.unwinds);
	for (k = 0; k < 2; k++)
		printf("%s %.1f %.1f %.1f\n", k ? "sample_locks" : "sample", median(cpu[k], n), cpu[k][n - 1],
		       median(wall[k], n));
	vt_locks_release(&locks);
	vt_lock_probe_close(lp);
	vt_thread_watch_close(ws);
	close(pid_fd);
	vt_procfs_close(&pfs);
	return 0;
}

/* Run argv once; its user+sys CPU (and each) and wall time in ms.  Exits 2 on failure. */
static void run_split(char **argv, double *cpu_ms, double *user_ms, double *sys_ms, double *wall_ms)
{
	struct rusage ru;
	double w0 = clock_us(CLOCK_MONOTONIC);
	int status, null;
	pid_t child = fork();

	if (child < 0) {
		perror("threads_parts: fork");
		exit(2);
	}
	if (child == 0) {
		null = open("/dev/null", O_WRONLY);
		if (null >= 0)
			dup2(null, 1);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (wait4(child, &status, 0, &ru) < 0) {
		perror("threads_parts: wait4");
		exit(2);
	}
	*wall_ms = (clock_us(CLOCK_MONOTONIC) - w0) / 1e3;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "threads_parts: '%s' failed (status %d)\n", argv[0], status);
		exit(2);
	}
	*user_ms = (double)ru.ru_utime.tv_sec * 1e3 + (double)ru.ru_utime.tv_usec / 1e3;
	*sys_ms = (double)ru.ru_stime.tv_sec * 1e3 + (double)ru.ru_stime.tv_usec / 1e3;
	*cpu_ms = *user_ms + *sys_ms;
}

static void run_once(char **argv, double *cpu_ms, double *wall_ms)
{
	double user, sys;

	run_split(argv, cpu_ms, &user, &sys, wall_ms);
}

static int exec_runs(int runs, char **argv)
{
	double cpu[100], wall[100], c, wl;
	int i;

	run_once(argv, &c, &wl);    /* warm-up */
	for (i = 0; i < runs; i++)
		run_once(argv, &cpu[i], &wall[i]);
	c = median(cpu, runs);
	printf("%.2f %.2f %.1f\n", c, cpu[runs - 1], median(wall, runs));
	return 0;
}

int main(int argc, char **argv)
{
	int n;

	if (argc == 5 && !strcmp(argv[1], "ticks") && atoi(argv[2]) > 0 &&
	    (n = atoi(argv[3])) > 0 && n <= 1000 && atoi(argv[4]) >= 0)
		return ticks((pid_t)atoi(argv[2]), n, atoi(argv[4]));
	if (argc == 5 && !strcmp(argv[1], "locks") && atoi(argv[2]) > 0 &&
	    (n = atoi(argv[3])) > 0 && n <= 1000 && atoi(argv[4]) >= 0)
		return lock_ticks((pid_t)atoi(argv[2]), n, atoi(argv[4]));
	if (argc >= 4 && !strcmp(argv[1], "exec") && (n = atoi(argv[2])) > 0 && n <= 100)
		return exec_runs(n, argv + 3);
	if (argc >= 3 && !strcmp(argv[1], "once")) {
		double cpu, user, sys, wall;

		run_split(argv + 2, &cpu, &user, &sys, &wall);
		printf("%.2f %.2f %.2f %.1f\n", cpu, user, sys, wall);
		return 0;
	}
	fprintf(stderr, "usage: threads_parts ticks PID TICKS GAP_MS\n"
			"       threads_parts locks PID TICKS GAP_MS\n"
			"       threads_parts exec RUNS CMD [ARG...]\n"
			"       threads_parts once CMD [ARG...]\n");
	return 64;
}

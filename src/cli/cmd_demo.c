/*
 * cmd_demo.c — `vitals demo`: field report 000 in a couple of minutes.
 *
 * Starts the bundled arena_churn target twice — default glibc and
 * MALLOC_ARENA_MAX=2 — lets both churn, then snaps both side by side and
 * sets each one's RssAnon against the live bytes the target itself counts.
 * The targets are ours: they are stopped (SIGTERM) and reaped at the end,
 * also on Ctrl-C.
 */
#include "cli/cli.h"
#include "render/render.h"
#include "render/table.h"
#include "analyze/heap_verdict.h"
#include "sample/heap.h"
#include "sample/sample.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ARMS 2

struct arm {
	const char *label;
	const char *env;          /* NAME=VALUE added to the environment, or NULL */
	pid_t pid;
	char truth[PATH_MAX];
	uint64_t live_bytes;      /* the target's own count, VT_NA if unread */
};

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

static void demo_usage(FILE *out)
{
	fprintf(out,
"usage: vitals demo [--seconds N] [--threads N] [--json]\n"
"\n"
"Reproduces glibc arena sprawl (field report 000) on the bundled arena_churn\n"
"target: the same multi-threaded churn runs twice, once with default glibc and\n"
"once with MALLOC_ARENA_MAX=2, for N seconds (default 30).  Then both are\n"
"snapped side by side: arenas, RssAnon, committed, and the target's own count\n"
"of live bytes, so you see how much of the resident heap is live data.\n"
"\n"
"  --seconds N   how long both arms churn before the snapshot (default 30)\n"
"  --threads N   worker threads per arm (default 8)\n"
"  --json        the two snapshots as vitals.snap JSON\n");
}

/* The target sits next to the vitals binary: <dir>/targets/arena_churn. */
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
	return access(path, X_OK);
}

static pid_t start_arm(const char *target, struct arm *a, int seconds, int threads)
{
	char secs[32], thr[32];
	pid_t pid;

	snprintf(secs, sizeof(secs), "%d", seconds + 60);
	snprintf(thr, sizeof(thr), "%d", threads);
	pid = fork();
	if (pid != 0)
		return pid;
	if (a->env)
		putenv((char *)a->env);
	else
		unsetenv("MALLOC_ARENA_MAX");
	if (!freopen("/dev/null", "w", stdout))
		_exit(127);
	execl(target, target, "--seconds", secs, "--threads", thr, "--truth", a->truth, (char *)NULL);
	_exit(127);
}

static void stop_arm(struct arm *a)
{
	if (a->pid <= 0)
		return;
	kill(a->pid, SIGTERM);
	waitpid(a->pid, NULL, 0);
	a->pid = 0;
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

static void wait_with_progress(struct arm *arms, int seconds)
{
	bool tty = isatty(STDERR_FILENO);
	int left;

	for (left = seconds; left > 0 && !interrupted; left--) {
		int i, alive = 0;
		for (i = 0; i < ARMS; i++)
			alive += arms[i].pid > 0 && waitpid(arms[i].pid, NULL, WNOHANG) == 0;
		if (alive < ARMS)
			return;
		if (tty)
			fprintf(stderr, "\r  churning: %3d s left  ", left);
		else if (left % 10 == 0 || left == seconds)
			fprintf(stderr, "  churning: %d s left\n", left);
		sleep(1);
	}
	if (tty)
		fprintf(stderr, "\r%30s\r", "");
}

/* The allocator's own view of each arm (mallinfo2 by ptrace), one line each. */
static void print_heaps(const struct vt_procfs *pfs, const struct arm *arms)
{
	struct vt_heap_opts opts = { .timeout_ms = 2000 };
	struct vt_heap_verdict v;
	struct vt_heap_sample h;
	struct vt_err err;
	char a[32], b[32];
	int i;

	printf("THE ALLOCATOR'S OWN FIGURES (vitals heap: mallinfo2 read inside each process)\n");
	for (i = 0; i < ARMS; i++) {
		if (vt_heap_take(pfs, arms[i].pid, &opts, &h, &err) != VT_OK) {
			printf("  %-20s not read: %s\n", arms[i].label, err.msg);
			continue;
		}
		vt_heap_judge(&h, (uint64_t)sysconf(_SC_PAGESIZE), &v);
		printf("  %-20s live %s, free but held %s (live_fraction %.2f) in %zu arenas\n"
		       "  %-20s -> %s\n", arms[i].label, vt_fmt_bytes(h.mi.uordblks, a, sizeof(a)),
		       vt_fmt_bytes(h.mi.fordblks, b, sizeof(b)), vt_heap_live_fraction(&h.mi),
		       h.info.n_arenas, "", v.headline);
		vt_heap_release(&h);
	}
	printf("\n");
}

static void print_verdict(const struct vt_sample *s, const struct arm *arms)
{
	char a[32], b[32];
	int i;

	printf("WHAT THIS SHOWS\n");
	for (i = 0; i < ARMS; i++) {
		const struct vt_sample *x = &s[i];
		printf("  %-20s %2d arena heap%s, RssAnon %s, live (target's own count) %s",
		       arms[i].label, x->arenas.heaps, x->arenas.heaps == 1 ? "" : "s",
		       vt_fmt_bytes(x->status.rss_anon, a, sizeof(a)),
		       vt_fmt_bytes(arms[i].live_bytes, b, sizeof(b)));
		if (vt_known(arms[i].live_bytes) && vt_known(x->status.rss_anon) && x->status.rss_anon)
			printf(" = %.0f%% of RssAnon", 100.0 * (double)arms[i].live_bytes /
			       (double)x->status.rss_anon);
		printf("\n");
	}
	if (vt_known(s[0].committed) && vt_known(s[1].committed) && s[0].committed) {
		double delta = (double)s[1].committed - (double)s[0].committed;
		printf("  committed: %s -> %s (%+.0f%%) with the arena cap, same work, same live data\n",
		       vt_fmt_bytes(s[0].committed, a, sizeof(a)), vt_fmt_bytes(s[1].committed, b, sizeof(b)),
		       100.0 * delta / (double)s[0].committed);
	}
	printf("\n  Each glibc arena keeps the memory its threads freed; with many arenas that\n"
	       "  free-but-held memory multiplies.  One snapshot shows the shape; whether it\n"
	       "  is a plateau or a leak takes a soak.  On your own service:\n"
	       "    vitals snap PID            memory breakdown, arenas, cap, cgroup\n"
	       "    vitals snap PID1 PID2      two processes side by side\n"
	       "    vitals heap PID            the allocator's own figures: live vs free-held\n");
}

int cmd_demo(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "threads", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct arm arms[ARMS] = {
		{ "default glibc", NULL, 0, "", VT_NA },
		{ "MALLOC_ARENA_MAX=2", "MALLOC_ARENA_MAX=2", 0, "", VT_NA },
	};
	const char *labels[ARMS];
	struct vt_sample samples[ARMS];
	struct vt_snap_report report = { 0 };
	struct vt_sample_opts opts = { 0 };
	struct sigaction sa = { 0 };
	char target[PATH_MAX], tmpdir[] = "/tmp/vitals-demo-XXXXXX";
	struct vt_procfs pfs;
	struct vt_err err;
	double seconds = 30;
	int threads = 8, c, i, taken = 0, status = 0;
	bool json = false;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (!vt_cli_parse_duration(optarg, &seconds) || seconds < 1 || seconds > 3600)
				return vt_cli_usage_error("demo", "'%s' is not a duration of 1 s to 1 h", optarg);
			break;
		case 't':
			threads = atoi(optarg);
			if (threads < 2 || threads > 256)
				return vt_cli_usage_error("demo", "--threads takes 2 to 256");
			break;
		case 'j': json = true; break;
		case 'h': demo_usage(stdout); return 0;
		default: return vt_cli_usage_error("demo", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return vt_cli_usage_error("demo", "unexpected argument '%s'", argv[optind]);
	if (find_target(target, sizeof(target)) != 0) {
		vt_err_set(&err, VT_E_NOTFOUND, errno, "the demo target '%s' is missing", target);
		vt_err_hint(&err, "build it with 'make' in the vitals source tree");
		return vt_cli_error(&err);
	}
	if (!mkdtemp(tmpdir)) {
		vt_err_set(&err, VT_E_IO, errno, "cannot create a temporary directory: %s", strerror(errno));
		return vt_cli_error(&err);
	}
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	fprintf(stderr, "vitals demo: the same allocation churn (%d threads, bounded live set) "
		"under default glibc and under MALLOC_ARENA_MAX=2, %.0f s\n", threads, seconds);
	for (i = 0; i < ARMS; i++) {
		snprintf(arms[i].truth, sizeof(arms[i].truth), "%s/arm%d.truth", tmpdir, i);
		arms[i].pid = start_arm(target, &arms[i], (int)seconds, threads);
		if (arms[i].pid < 0) {
			vt_err_set(&err, VT_E_FAIL, errno, "cannot start the target: %s", strerror(errno));
			status = vt_cli_error(&err);
			goto out;
		}
		fprintf(stderr, "  %-20s pid %d\n", arms[i].label, (int)arms[i].pid);
	}
	wait_with_progress(arms, (int)seconds);
	if (interrupted) {
		fprintf(stderr, "vitals demo: interrupted; targets stopped\n");
		status = 130;
		goto out;
	}
	if ((status = vt_cli_open_procfs(&pfs, &err)) != 0) {
		status = vt_cli_error(&err);
		goto out;
	}
	for (i = 0; i < ARMS; i++) {
		if (vt_sample_take(&pfs, arms[i].pid, &opts, &samples[i], &err) != VT_OK) {
			status = vt_cli_error(&err);
			break;
		}
		arms[i].live_bytes = read_live_bytes(arms[i].truth);
		labels[i] = arms[i].label;
		taken++;
	}
	if (taken == ARMS) {
		report.samples = samples;
		report.n = ARMS;
		report.labels = labels;
		report.min_region = 16ull << 20;
		report.title = "demo: default glibc vs MALLOC_ARENA_MAX=2";
		if (json) {
			vt_render_snap_json(stdout, &report);
		} else {
			vt_render_snap_text(stdout, &report);
			print_heaps(&pfs, arms);
			print_verdict(samples, arms);
		}
	}
	vt_procfs_close(&pfs);
	for (i = 0; i < taken; i++)
		vt_sample_release(&samples[i]);
out:
	for (i = 0; i < ARMS; i++) {
		stop_arm(&arms[i]);
		unlink(arms[i].truth);
	}
	rmdir(tmpdir);
	return status;
}

/*
 * cmd_demo.c — `vitals demo`: field report 000 in about three minutes.
 *
 * Starts the bundled arena_churn target twice — default glibc and
 * MALLOC_ARENA_MAX=2 — and soaks both at once (two `vitals soak` children,
 * one recording each) while they churn.  Then: both snapped side by side
 * with the target's own count of live bytes, the allocator's own figures,
 * each soak's verdict (plateau, still settling, ...) and the A/B table of
 * vitals compare on the settled windows, and how to do the same on your
 * own service.  The targets are ours: they are stopped (SIGTERM) and reaped
 * at the end, also on Ctrl-C.
 */
#include "cli/cli.h"
#include "base/unknown.h"
#include "cli/soak_cli.h"
#include "analyze/soak.h"
#include "render/soak.h"
#include "soak/store.h"
#include "render/render.h"
#include "render/table.h"
#include "analyze/heap_verdict.h"
#include "render/heap.h"
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ARMS 2

struct arm {
	const char *label;
	const char *env;          /* NAME=VALUE added to the environment, or NULL */
	const char *name;         /* the recording's name: default.db, cap2.db */
	pid_t pid;
	pid_t soak;               /* the `vitals soak` child recording it */
	char truth[PATH_MAX];
	char db[PATH_MAX];
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
"usage: vitals demo [--seconds N] [--threads N] [--dir DIR] [--json]\n"
"\n"
"Reproduces field report 000 on the bundled arena_churn target: the same\n"
"multi-threaded allocation churn (bounded live set, memory freed on another\n"
"thread than the one that allocated it) runs twice at once, under default\n"
"glibc and under MALLOC_ARENA_MAX=2, each soaked by vitals into a recording.\n"
"Then: both snapped side by side with the target's own count of live bytes,\n"
"the allocator's own figures, each soak's verdict, and the A/B table on the\n"
"settled windows (vitals compare).  It ends with the commands to do the same\n"
"on your own service.\n"
"\n"
"  --seconds N   how long both arms churn and are soaked (default 150)\n"
"  --threads N   worker threads per arm (default 8)\n"
"  --dir DIR     keep the two recordings in DIR (default: a temporary\n"
"                directory, removed at the end)\n"
"  --json        the comparison as vitals.compare JSON\n");
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
	/* blocks up to 64 KiB: the arenas sprawl as with larger ones, and reach
	 * their high water within seconds, so that a few minutes show a plateau */
	execl(target, target, "--seconds", secs, "--threads", thr, "--max-block-kb", "64", "--truth", a->truth,
	      (char *)NULL);
	_exit(127);
}

static void stop_arm(struct arm *a)
{
	if (a->soak > 0) {
		kill(a->soak, SIGTERM);
		waitpid(a->soak, NULL, 0);
		a->soak = 0;
	}
	if (a->pid <= 0)
		return;
	kill(a->pid, SIGTERM);
	waitpid(a->pid, NULL, 0);
	a->pid = 0;
}

/* `vitals soak -q -o DB --every 1s --for N --heap PID`, run by this very binary. */
static pid_t start_soak(struct arm *a, double seconds, double every)
{
	char pid[32], secs[32], ev[32], smaps[32], heap[32];
	pid_t child;

	snprintf(pid, sizeof(pid), "%d", (int)a->pid);
	snprintf(secs, sizeof(secs), "%.3fs", seconds);
	snprintf(ev, sizeof(ev), "%.3fs", every);
	snprintf(smaps, sizeof(smaps), "%.3fs", seconds / 3);
	snprintf(heap, sizeof(heap), "%.3fs", seconds / 15);
	child = fork();
	if (child != 0)
		return child;
	if (!freopen("/dev/null", "w", stdout))
		_exit(127);
	/* --heap: the arms are our own targets; mallinfo2 by ptrace every
	 * 1/15 of the run gives the A/B table its live and free-held rows */
	execl("/proc/self/exe", "vitals", "soak", "-q", "--force", "-o", a->db, "--every", ev, "--for", secs,
	      "--smaps-every", smaps, "--heap", "--heap-every", heap, pid, (char *)NULL);
	_exit(127);
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

/* Until both soaks end: time left and each arm's committed memory now. */
static void wait_with_progress(const struct vt_procfs *pfs, struct arm *arms, double seconds)
{
	struct vt_sample_opts light = { .light = true, .no_memory = true };
	bool tty = isatty(STDERR_FILENO);
	struct timespec second = { 1, 0 };
	double left;
	int i, running;

	for (left = seconds;; left -= 1) {
		char line[256], now[32], span[32];
		size_t len;

		for (i = 0, running = 0; i < ARMS; i++)
			if (arms[i].soak > 0 && waitpid(arms[i].soak, NULL, WNOHANG) == 0)
				running++;
			else
				arms[i].soak = 0;
		if (!running || interrupted)
			break;
		len = (size_t)snprintf(line, sizeof(line), "  soaking both arms: %s left",
				       vt_fmt_span(left > 0 ? left : 0, span, sizeof(span)));
		for (i = 0; i < ARMS; i++) {
			struct vt_sample s;
			struct vt_err err;

			if (vt_sample_take(pfs, arms[i].pid, &light, &s, &err) != VT_OK)
				continue;
			len += (size_t)snprintf(line + len, sizeof(line) - len, " · %s committed %s", arms[i].name,
						vt_fmt_size((double)s.committed, now, sizeof(now)));
			vt_sample_release(&s);
		}
		if (tty)
			fprintf(stderr, "\r\033[K%s", line);
		else if ((int)left % 30 == 0 || left == seconds)
			fprintf(stderr, "%s\n", line);
		nanosleep(&second, NULL);
	}
	if (tty)
		fprintf(stderr, "\r\033[K");
}

/* The allocator's own view of each arm (mallinfo2 by ptrace), one line each. */
static void print_heaps(const struct vt_procfs *pfs, const struct arm *arms)
{
	struct vt_heap_opts opts = { .timeout_ms = 2000 };
	struct vt_heap_verdict v;
	struct vt_heap_sample h;
	struct vt_err err;
	char a[32], b[32], line[VT_HEAP_LINE_MAX];
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
		       vt_fmt_bytes(h.mi.fordblks, b, sizeof(b)), vt_mallinfo_live_fraction(&h.mi),
		       h.info.n_arenas, "", vt_render_heap_headline(&v, line, sizeof(line)));
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
	       "  free-but-held memory multiplies.  A snapshot shows the shape; the soaks\n"
	       "  below say whether it settled (a plateau) or still grows, and the A/B table\n"
	       "  compares the two on their settled windows.\n\n");
}

/* Each soak's verdict, in one line each. */
static void print_soaks(const struct arm *arms)
{
	struct vt_soak_opts so;
	int i;

	vt_soak_opts_default(&so);
	printf("WHAT THE SOAKS SAY (vitals analyze)\n");
	for (i = 0; i < ARMS; i++) {
		struct vt_series s;
		struct vt_soak_verdict v;
		struct vt_err err;
		char why[VT_SOAK_WHY_MAX];

		vt_series_init(&s);
		if (vt_store_load(arms[i].db, 0, &s, &err) != VT_OK) {
			printf("  %-20s not read: %s\n", arms[i].label, err.msg);
			continue;
		}
		if (vt_soak_analyze(&s, &so, &v) == 0)
			printf("  %-20s %s: %s\n", arms[i].label, vt_verdict_name(v.kind),
			       vt_soak_why(&v, why, sizeof(why)));
		vt_series_free(&s);
	}
	printf("\n");
}

static void print_next_steps(void)
{
	printf("\nON YOUR OWN SERVICE\n"
	       "    vitals snap PID                    memory breakdown, arenas, cap, cgroup\n"
	       "    vitals heap PID                    the allocator's own figures: live vs free-held\n"
	       "    vitals threads PID                 CPU now (not ps's average), per thread, and why\n"
	       "    vitals threads --watch PID         the same, live\n"
	       "    vitals soak PID -o before.db --for 4h     leave it running; Ctrl-C ends it early\n"
	       "    vitals analyze before.db           leak, plateau, step or still settling, with evidence\n"
	       "    vitals compare before.db after.db  A/B on the settled windows (--html for charts)\n"
	       "    vitals experiment --for 1h --arm default --arm cap2:MALLOC_ARENA_MAX=2 -- CMD ARGS\n"
	       "                                       the same command under each arm, soaked and compared\n");
}

int cmd_demo(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "threads", required_argument, NULL, 't' },
		{ "dir", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct arm arms[ARMS] = {
		{ "default glibc", NULL, "default", 0, 0, "", "", VT_NA },
		{ "MALLOC_ARENA_MAX=2", "MALLOC_ARENA_MAX=2", "cap2", 0, 0, "", "", VT_NA },
	};
	const char *labels[ARMS];
	char *dbs[ARMS];
	struct vt_sample samples[ARMS];
	struct vt_snap_report report = { 0 };
	struct vt_sample_opts opts = { 0 };
	struct sigaction sa = { 0 };
	char target[PATH_MAX], tmpdir[] = "/tmp/vitals-demo-XXXXXX", span[32];
	const char *dir = NULL;
	struct vt_procfs pfs;
	struct vt_err err;
	double seconds = 150, every;
	int threads = 8, c, i, taken = 0, status = 0;
	bool json = false, have_pfs = false;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (!vt_parse_duration(optarg, &seconds) || seconds < 10 || seconds > 3600)
				return vt_cli_usage_error("demo", "'%s' is not a duration of 10 s to 1 h", optarg);
			break;
		case 't':
			threads = atoi(optarg);
			if (threads < 2 || threads > 256)
				return vt_cli_usage_error("demo", "--threads takes 2 to 256");
			break;
		case 'd': dir = optarg; break;
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
	if (dir && mkdir(dir, 0755) != 0 && errno != EEXIST) {
		vt_err_set(&err, VT_E_IO, errno, "cannot create '%s': %s", dir, strerror(errno));
		rmdir(tmpdir);
		return vt_cli_error(&err);
	}
	if ((status = vt_cli_open_procfs(&pfs, &err)) != 0) {
		rmdir(tmpdir);
		return vt_cli_error(&err);
	}
	have_pfs = true;
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	/* one sample a second, or fewer on a long demo: 150-300 samples an arm */
	every = seconds / 150 < 1 ? 1 : seconds / 150;
	fprintf(stderr, "vitals demo: the same allocation churn (%d threads, bounded live set) under default\n"
		"glibc and under MALLOC_ARENA_MAX=2, both soaked for %s\n", threads,
		vt_fmt_span(seconds, span, sizeof(span)));
	for (i = 0; i < ARMS; i++) {
		snprintf(arms[i].truth, sizeof(arms[i].truth), "%s/%s.truth", tmpdir, arms[i].name);
		snprintf(arms[i].db, sizeof(arms[i].db), "%s/%s.db", dir ? dir : tmpdir, arms[i].name);
		arms[i].pid = start_arm(target, &arms[i], (int)seconds, threads);
		if (arms[i].pid < 0) {
			vt_err_set(&err, VT_E_FAIL, errno, "cannot start the target: %s", strerror(errno));
			status = vt_cli_error(&err);
			goto out;
		}
		arms[i].soak = start_soak(&arms[i], seconds, every);
		fprintf(stderr, "  %-20s pid %d, recording %s\n", arms[i].label, (int)arms[i].pid, arms[i].db);
	}
	wait_with_progress(&pfs, arms, seconds);
	if (interrupted) {
		fprintf(stderr, "vitals demo: interrupted; targets stopped\n");
		status = 130;
		goto out;
	}
	for (i = 0; i < ARMS; i++) {
		if (vt_sample_take(&pfs, arms[i].pid, &opts, &samples[i], &err) != VT_OK) {
			status = vt_cli_error(&err);
			break;
		}
		arms[i].live_bytes = read_live_bytes(arms[i].truth);
		labels[i] = arms[i].label;
		dbs[i] = arms[i].db;
		taken++;
	}
	if (taken == ARMS) {
		report.samples = samples;
		report.n = ARMS;
		report.labels = labels;
		report.min_region = 16ull << 20;
		report.title = "demo: default glibc vs MALLOC_ARENA_MAX=2";
		if (json) {
			status = vt_cli_compare_files(dbs, ARMS, "default,cap2", true, NULL, NULL, VT_M_COMMITTED,
						      report.title);
		} else {
			vt_render_snap_text(stdout, &report);
			print_heaps(&pfs, arms);
			print_verdict(samples, arms);
			print_soaks(arms);
			printf("THE A/B TABLE (vitals compare default.db cap2.db)\n");
			status = vt_cli_compare_files(dbs, ARMS, "default,cap2", false, NULL, NULL, VT_M_COMMITTED,
						      NULL);
			print_next_steps();
			if (dir)
				printf("\nthe recordings: %s and %s (vitals analyze --html report.html %s)\n",
				       arms[0].db, arms[1].db, arms[1].db);
		}
	}
	for (i = 0; i < taken; i++)
		vt_sample_release(&samples[i]);
out:
	for (i = 0; i < ARMS; i++) {
		stop_arm(&arms[i]);
		unlink(arms[i].truth);
		if (!dir) {
			char side[PATH_MAX + 8];

			unlink(arms[i].db);
			snprintf(side, sizeof(side), "%s-wal", arms[i].db);
			unlink(side);
			snprintf(side, sizeof(side), "%s-shm", arms[i].db);
			unlink(side);
		}
	}
	if (have_pfs)
		vt_procfs_close(&pfs);
	rmdir(tmpdir);
	return status;
}

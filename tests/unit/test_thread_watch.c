/*
 * test_thread_watch.c — proc/thread_watch.c on trees written by the test
 * (thread churn, a reused tid, the fd budget, context switches, a zombie),
 * on a recorded tree, and on the live test process and a child: threads that
 * exit and appear, counters that only grow, a process that exits, and no fd
 * left behind under churn.
 */
#include "harness.h"
#include "base/unknown.h"

#include "proc/thread_watch.h"
#include "proc/procfs.h"
#include "sample/threads.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- trees written by the test ------------------------------------------ */

struct tree {
	char root[64];      /* mkdtemp */
	char proc[96];      /* root/proc */
	pid_t pid;
};

static void put(const char *path, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Write a file in place (same inode: a held fd sees the new text, as procfs). */
static void put(const char *path, const char *fmt, ...)
{
	char text[1024];
	va_list ap;
	int fd, n;

	va_start(ap, fmt);
	n = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, text, (size_t)n) != n) {
		printf("Bail out! cannot write %s\n", path);
		exit(2);
	}
	close(fd);
}

static void stat_line(const char *path, pid_t tid, const char *comm, char state, int nthreads,
		      uint64_t start, uint64_t ut, uint64_t st, int cpu)
{
	put(path,
	    "%d (%s) %c 1 %d %d 0 -1 4194368 0 0 0 0 %" PRIu64 " %" PRIu64 " 0 0 20 0 %d 0 %" PRIu64
	    " 1000000 100 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 0 %d 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
	    (int)tid, comm, state, (int)tid, (int)tid, ut, st, nthreads, start, cpu);
}

static void tree_init(struct tree *t, pid_t pid, bool schedstat)
{
	char path[256];

	snprintf(t->root, sizeof(t->root), "/tmp/vt-tw-XXXXXX");
	if (!mkdtemp(t->root)) {
		printf("Bail out! mkdtemp\n");
		exit(2);
	}
	t->pid = pid;
	snprintf(t->proc, sizeof(t->proc), "%s/proc", t->root);
	mkdir(t->proc, 0755);
	snprintf(path, sizeof(path), "%s/%d", t->proc, (int)pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/task", t->proc, (int)pid);
	mkdir(path, 0755);
	if (schedstat) {
		snprintf(path, sizeof(path), "%s/%d/schedstat", t->proc, (int)pid);
		put(path, "0 0 0\n");
	}
	snprintf(path, sizeof(path), "%s/%d/stat", t->proc, (int)pid);
	stat_line(path, pid, "app", 'S', 1, 100, 0, 0, 0);
}

/* The process stat: state and totals. */
static void tree_proc(struct tree *t, char state, int nthreads, uint64_t ut, uint64_t st)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%d/stat", t->proc, (int)t->pid);
	stat_line(path, t->pid, "app", state, nthreads, 100, ut, st, 0);
}

/* One thread: stat, schedstat (run = ut ms), status (vol = ut, nonvol = st). */
static void tree_thread(struct tree *t, pid_t tid, const char *comm, uint64_t start, uint64_t ut,
			uint64_t st)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%d/task/%d", t->proc, (int)t->pid, (int)tid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/task/%d/stat", t->proc, (int)t->pid, (int)tid);
	stat_line(path, tid, comm, 'S', 1, start, ut, st, (int)(tid % 4));
	snprintf(path, sizeof(path), "%s/%d/task/%d/schedstat", t->proc, (int)t->pid, (int)tid);
	put(path, "%" PRIu64 " %" PRIu64 " 7\n", ut * 1000000, st * 1000);
	snprintf(path, sizeof(path), "%s/%d/task/%d/status", t->proc, (int)t->pid, (int)tid);
	put(path, "Name:\t%s\nState:\tS (sleeping)\nTgid:\t%d\nPid:\t%d\nThreads:\t3\n"
		  "Cpus_allowed_list:\t0-1\nvoluntary_ctxt_switches:\t%" PRIu64
		  "\nnonvoluntary_ctxt_switches:\t%" PRIu64 "\n",
	    comm, (int)t->pid, (int)tid, ut, st);
}

static void tree_rm_thread(struct tree *t, pid_t tid)
{
	static const char *const files[] = { "stat", "schedstat", "status", "wchan", "syscall" };
	char path[256];
	size_t i;

	for (i = 0; i < 5; i++) {
		snprintf(path, sizeof(path), "%s/%d/task/%d/%s", t->proc, (int)t->pid, (int)tid,
			 files[i]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/%d/task/%d", t->proc, (int)t->pid, (int)tid);
	rmdir(path);
}

static void tree_free(struct tree *t)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->root);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", t->root);
}

/* Open pfs on the tree and a watch on its process. */
static struct vt_thread_watch *tree_watch(struct tree *t, struct vt_procfs *pfs, int *pid_fd)
{
	struct vt_thread_watch *w = NULL;
	struct vt_err err;

	if (vt_procfs_open(pfs, t->proc, NULL, &err) || vt_pid_open(pfs, t->pid, pid_fd, &err) ||
	    vt_thread_watch_open(pfs, *pid_fd, t->pid, &w, &err)) {
		printf("Bail out! cannot watch the tree %s: %s\n", t->proc, err.msg);
		exit(2);
	}
	return w;
}

static const struct vt_thread_counts *find(const struct vt_thread_counts *v, size_t n, pid_t tid)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i].tid == tid)
			return &v[i];
	return NULL;
}

static bool sorted(const struct vt_thread_counts *v, size_t n)
{
	size_t i;

	for (i = 1; i < n; i++)
		if (v[i - 1].tid >= v[i].tid)
			return false;
	return true;
}

static bool same(const struct vt_thread_counts *a, const struct vt_thread_counts *b)
{
	return a->tid == b->tid && !strcmp(a->comm, b->comm) && a->state == b->state &&
	       a->start_ticks == b->start_ticks && a->utime_ticks == b->utime_ticks &&
	       a->stime_ticks == b->stime_ticks && a->run_ns == b->run_ns &&
	       a->wait_ns == b->wait_ns && a->vcsw == b->vcsw && a->nvcsw == b->nvcsw &&
	       a->processor == b->processor && a->is_new == b->is_new;
}

/* ---- on written trees ---------------------------------------------------- */

/* Three threads, then one exits, one appears and one works. */
static void test_thread_watch__fixture_churn(void)
{
	const struct vt_thread_counts *r, *x, *c;
	const struct vt_thread_watch_proc *p;
	struct vt_thread_watch_stats stats;
	struct vt_thread_watch *w;
	struct vt_procfs pfs;
	struct vt_err err;
	struct tree t;
	size_t n, nx;
	int pid_fd;

	tree_init(&t, 500, true);
	tree_proc(&t, 'S', 3, 40, 4);
	tree_thread(&t, 500, "app", 100, 10, 1);
	tree_thread(&t, 502, "worker 1)", 150, 20, 2);   /* comm with a space and ')' */
	tree_thread(&t, 501, "worker-0", 120, 10, 1);
	w = tree_watch(&t, &pfs, &pid_fd);
	CHECK_EQ_U64(vt_thread_watch_count(w), 0);

	CHECK(vt_thread_watch_read(w, 0, &err) == VT_OK);
	r = vt_thread_watch_rows(w, &n);
	CHECK_EQ_U64(n, 3);
	CHECK(sorted(r, n));
	CHECK_EQ_I64(r[0].tid, 500);
	CHECK_STR(r[2].comm, "worker 1)");
	CHECK_EQ_U64(r[2].utime_ticks, 20);
	CHECK_EQ_U64(r[2].stime_ticks, 2);
	CHECK_EQ_U64(r[2].start_ticks, 150);
	CHECK_EQ_U64(r[2].run_ns, 20000000);
	CHECK_EQ_U64(r[2].wait_ns, 2000);
	CHECK_EQ_I64(r[2].processor, 502 % 4);
	CHECK(r[2].state == 'S');
	CHECK_EQ_U64(r[2].vcsw, VT_NA);     /* not asked for */
	CHECK(!r[0].is_new && !r[1].is_new && !r[2].is_new);   /* the first read is the baseline */
	vt_thread_watch_exited(w, &nx);
	CHECK_EQ_U64(nx, 0);
	p = vt_thread_watch_process(w);
	CHECK_EQ_U64(p->utime_ticks, 40);
	CHECK_EQ_U64(p->stime_ticks, 4);
	CHECK_EQ_I64(p->num_threads, 3);
	CHECK_EQ_I64(p->pid, 500);
	CHECK(p->mono_ns > 0);
	vt_thread_watch_stats(w, &stats);
	CHECK_EQ_U64(stats.held, 3);
	CHECK_EQ_U64(stats.reopened, 0);
	CHECK_EQ_U64(stats.fds, 2 + 3 * 2);
	CHECK(stats.schedstat);

	/* 501 exits, 503 appears, 502 works */
	tree_rm_thread(&t, 501);
	tree_thread(&t, 503, "worker-2", 300, 0, 0);
	tree_thread(&t, 502, "worker 1)", 150, 25, 3);
	tree_proc(&t, 'S', 3, 50, 5);
	CHECK(vt_thread_watch_read(w, 0, &err) == VT_OK);
	r = vt_thread_watch_rows(w, &n);
	CHECK_EQ_U64(n, 3);
	CHECK(sorted(r, n));
	CHECK(!find(r, n, 501));
	c = find(r, n, 503);
	CHECK(c && c->is_new);
	c = find(r, n, 502);
	CHECK(c && !c->is_new && c->utime_ticks == 25 && c->run_ns == 25000000);
	x = vt_thread_watch_exited(w, &nx);
	CHECK_EQ_U64(nx, 1);
	CHECK(nx == 1 && x[0].tid == 501 && x[0].utime_ticks == 10 && x[0].start_ticks == 120);
	CHECK(nx == 1 && !strcmp(x[0].comm, "worker-0"));
	CHECK_EQ_U64(vt_thread_watch_process(w)->utime_ticks, 50);
	vt_thread_watch_stats(w, &stats);
	CHECK_EQ_U64(stats.fds, 2 + 3 * 2);   /* 501's closed, 503's opened */
	CHECK_EQ_U64(stats.reads, 2);

	/* nothing changes: no exits, nothing new */
	CHECK(vt_thread_watch_read(w, 0, &err) == VT_OK);
	r = vt_thread_watch_rows(w, &n);
	vt_thread_watch_exited(w, &nx);
	CHECK_EQ_U64(nx, 0);
	CHECK(n == 3 && !r[0].is_new && !r[1].is_new && !r[2].is_new);

	vt_thread_watch_close(w);
	close(pid_fd);
	vt_procfs_close(&pfs);
	tree_free(&t);
}

/* A different start time under a known tid is exit + new, held fd or not. */
static void test_thread_watch__fixture_tid_reuse(void)
{
	const struct vt_thread_counts *r, *x, *c;
	struct vt_thread_watch *w;
	struct vt_procfs pfs;
	struct vt_err err;
	struct tree t;
	size_t n, nx;
	int pid_fd, round;

	for (round = 0; round < 2; round++) {   /* held fds, then by path only */
		tree_init(&t, 600, true);
		tree_thread(&t, 600, "app", 100, 5, 0);
		tree_thread(&t, 601, "old", 110, 70, 7);
		w = tree_watch(&t, &pfs, &pid_fd);
		if (round == 1)
			vt_thread_watch_set_fd_max(w, 0);
		CHECK(vt_thread_watch_read(w, VT_TW_CSW, &err) == VT_OK);
		tree_thread(&t, 601, "young", 900, 1, 0);   /* rewritten in place */
		CHECK(vt_thread_watch_read(w, VT_TW_CSW, &err) == VT_OK);
		r = vt_thread_watch_rows(w, &n);
		CHECK_EQ_U64(n, 2);
		c = find(r, n, 601);
		CHECK(c && c->is_new && c->start_ticks == 900 && c->utime_ticks == 1);
		CHECK(c && !strcmp(c->comm, "young"));
		x = vt_thread_watch_exited(w, &nx);
		CHECK_EQ_U64(nx, 1);
		CHECK(nx == 1 && x[0].tid == 601 && x[0].start_ticks == 110 && x[0].utime_ticks == 70);
		CHECK(nx == 1 && x[0].vcsw == 70 && x[0].nvcsw == 7);
		CHECK(!find(r, n, 600)->is_new);
		vt_thread_watch_close(w);
		close(pid_fd);
		vt_procfs_close(&pfs);
		tree_free(&t);
	}
}

/* Beyond the fd budget threads are read by path, with the same figures. */
static void test_thread_watch__fixture_fd_budget(void)
{
	const struct vt_thread_counts *a, *b, *x;
	struct vt_thread_watch *wa, *wb;
	struct vt_thread_watch_stats stats;
	struct vt_procfs pfs;
	struct vt_err err;
	struct tree t;
	size_t na, nb, nx, i;
	int fda, fdb;
	pid_t tid;

	tree_init(&t, 700, true);
	for (tid = 700; tid < 710; tid++)
		tree_thread(&t, tid, "w", 100 + (uint64_t)tid, (uint64_t)tid - 690, 1);
	wa = tree_watch(&t, &pfs, &fda);
	vt_procfs_close(&pfs);
	wb = tree_watch(&t, &pfs, &fdb);
	vt_thread_watch_set_fd_max(wb, 5);   /* 700's 3 files, 701's stat and schedstat */
	CHECK(vt_thread_watch_read(wa, VT_TW_CSW, &err) == VT_OK);
	CHECK(vt_thread_watch_read(wb, VT_TW_CSW, &err) == VT_OK);
	vt_thread_watch_stats(wb, &stats);
	CHECK_EQ_U64(stats.fds, 2 + 5);
	CHECK_EQ_U64(stats.held, 2);
	CHECK_EQ_U64(stats.reopened, 8);
	vt_thread_watch_stats(wa, &stats);
	CHECK_EQ_U64(stats.fds, 2 + 10 * 3);   /* stat, schedstat and status each */
	a = vt_thread_watch_rows(wa, &na);
	b = vt_thread_watch_rows(wb, &nb);
	CHECK_EQ_U64(na, 10);
	CHECK_EQ_U64(nb, 10);
	for (i = 0; i < na && i < nb; i++)
		CHECK(same(&a[i], &b[i]));

	/* churn while over budget; then the cap drops to nothing */
	tree_rm_thread(&t, 700);
	tree_rm_thread(&t, 709);
	tree_thread(&t, 705, "w", 100 + 705, 99, 2);
	vt_thread_watch_set_fd_max(wb, 0);
	CHECK(vt_thread_watch_read(wb, 0, &err) == VT_OK);
	vt_thread_watch_stats(wb, &stats);
	CHECK_EQ_U64(stats.fds, 2);
	CHECK_EQ_U64(stats.held, 0);
	CHECK_EQ_U64(stats.reopened, 8);
	b = vt_thread_watch_rows(wb, &nb);
	CHECK_EQ_U64(nb, 8);
	CHECK(find(b, nb, 705) && find(b, nb, 705)->utime_ticks == 99);
	x = vt_thread_watch_exited(wb, &nx);
	CHECK_EQ_U64(nx, 2);
	CHECK(nx == 2 && x[0].tid == 700 && x[1].tid == 709 && x[1].utime_ticks == 19);

	/* and back: the cap lifted, fds are held again */
	vt_thread_watch_set_fd_max(wb, SIZE_MAX);
	CHECK(vt_thread_watch_read(wb, 0, &err) == VT_OK);
	vt_thread_watch_stats(wb, &stats);
	CHECK_EQ_U64(stats.held, 8);
	CHECK_EQ_U64(stats.fds, 2 + 8 * 2);

	vt_thread_watch_close(wa);
	vt_thread_watch_close(wb);
	close(fda);
	close(fdb);
	vt_procfs_close(&pfs);
	tree_free(&t);
}

/* Context switches only when asked; a missing status or schedstat is VT_NA. */
static void test_thread_watch__fixture_csw(void)
{
	const struct vt_thread_counts *r;
	struct vt_thread_watch *w;
	struct vt_thread_watch_stats stats;
	struct vt_procfs pfs;
	struct vt_err err;
	struct tree t;
	char path[256];
	size_t n;
	int pid_fd;

	tree_init(&t, 800, false);   /* a kernel without schedstat */
	tree_thread(&t, 800, "app", 100, 12, 3);
	tree_thread(&t, 801, "io", 100, 40, 9);
	snprintf(path, sizeof(path), "%s/800/task/801/status", t.proc);
	unlink(path);
	w = tree_watch(&t, &pfs, &pid_fd);
	CHECK(vt_thread_watch_read(w, VT_TW_CSW, &err) == VT_OK);
	r = vt_thread_watch_rows(w, &n);
	CHECK_EQ_U64(n, 2);
	CHECK(n == 2 && r[0].vcsw == 12 && r[0].nvcsw == 3);
	CHECK(n == 2 && r[1].vcsw == VT_NA && r[1].nvcsw == VT_NA);   /* no status: still a row */
	CHECK(n == 2 && r[0].run_ns == VT_NA && r[0].wait_ns == VT_NA);
	vt_thread_watch_stats(w, &stats);
	CHECK(!stats.schedstat);
	CHECK_EQ_U64(stats.fds, 2 + 2 + 1);   /* two stats, one status */
	CHECK(vt_thread_watch_read(w, 0, &err) == VT_OK);
	r = vt_thread_watch_rows(w, &n);
	CHECK(n == 2 && r[0].vcsw == VT_NA && r[0].utime_ticks == 12);
	vt_thread_watch_close(w);
	close(pid_fd);
	vt_procfs_close(&pfs);
	tree_free(&t);
}

/*
 * VT_TW_SCHEDSTAT_ONLY: a known thread with held fds reads schedstat alone
 * and keeps the stat fields of its last full read; a new thread, one read by
 * path, and every thread of a kernel without schedstat read stat as usual.
 */
static void test_thread_watch__fixture_schedstat_only(void)
{
	const struct vt_thread_counts *r, *x, *c;
	struct vt_thread_watch_stats stats;
	struct vt_thread_watch *w;
	struct vt_procfs pfs;
	struct vt_err err;
	struct tree t;
	size_t n, nx;
	int pid_fd, round;

	for (round = 0; round < 3; round++) {   /* held fds, by path only, no schedstat */
		tree_init(&t, 1000, round != 2);
		tree_proc(&t, 'S', 3, 30, 3);
		tree_thread(&t, 1000, "app", 100, 10, 1);
		tree_thread(&t, 1001, "busy", 110, 10, 1);
		tree_thread(&t, 1002, "leaves", 120, 7, 1);
		w = tree_watch(&t, &pfs, &pid_fd);
		if (round == 1)
			vt_thread_watch_set_fd_max(w, 0);
		CHECK(vt_thread_watch_read(w, VT_TW_SCHEDSTAT_ONLY, &err) == VT_OK);   /* first: all new */
		r = vt_thread_watch_rows(w, &n);
		CHECK(n == 3 && r[1].utime_ticks == 10 && !strcmp(r[1].comm, "busy"));

		/* 1001 works and renames itself, 1002 exits, 1003 starts */
		tree_thread(&t, 1001, "renamed", 110, 50, 5);
		tree_rm_thread(&t, 1002);
		tree_thread(&t, 1003, "fresh", 300, 4, 2);
		tree_proc(&t, 'S', 3, 80, 9);
		CHECK(vt_thread_watch_read(w, VT_TW_SCHEDSTAT_ONLY, &err) == VT_OK);
		r = vt_thread_watch_rows(w, &n);
		CHECK_EQ_U64(n, 3);
		c = find(r, n, 1001);
		if (round == 0) {   /* stat of the last full read, schedstat of this one */
			CHECK(c && c->utime_ticks == 10 && c->stime_ticks == 1 && !strcmp(c->comm, "busy"));
			CHECK(c && c->run_ns == 50000000 && c->wait_ns == 5000);
		} else {
			CHECK(c && c->utime_ticks == 50 && c->stime_ticks == 5 && !strcmp(c->comm, "renamed"));
			CHECK(c && c->run_ns == (round == 1 ? 50000000 : VT_NA));
		}
		CHECK(c && !c->is_new && c->start_ticks == 110);
		c = find(r, n, 1003);
		CHECK(c && c->is_new && c->utime_ticks == 4 && c->start_ticks == 300 && !strcmp(c->comm, "fresh"));
		x = vt_thread_watch_exited(w, &nx);
		CHECK(nx == 1 && x[0].tid == 1002 && x[0].utime_ticks == 7 && x[0].start_ticks == 120);
		CHECK_EQ_U64(vt_thread_watch_process(w)->utime_ticks, 80);   /* the process stat is read */
		vt_thread_watch_stats(w, &stats);
		CHECK_EQ_U64(stats.held, round == 1 ? 0 : 3);

		/* a full read brings the stat fields up to date */
		CHECK(vt_thread_watch_read(w, 0, &err) == VT_OK);
		r = vt_thread_watch_rows(w, &n);
		c = find(r, n, 1001);
		CHECK(c && c->utime_ticks == 50 && !strcmp(c->comm, "renamed"));
		vt_thread_watch_close(w);
		close(pid_fd);
		vt_procfs_close(&pfs);
		tree_free(&t);
	}
}

/* A zombie process: VT_E_GONE, and its threads' last counters in exited. */
static void test_thread_watch__fixture_zombie(void)
{
	const struct vt_thread_counts *x;
	struct vt_thread_watch *w;
	struct vt_procfs pfs;
	struct vt_err err;
	struct tree t;
	size_t nx;
	int pid_fd;

	tree_init(&t, 900, true);
	tree_proc(&t, 'S', 2, 10, 0);
	tree_thread(&t, 900, "app", 100, 3, 0);
	tree_thread(&t, 901, "w", 100, 7, 0);
	w = tree_watch(&t, &pfs, &pid_fd);
	CHECK(vt_thread_watch_read(w, 0, &err) == VT_OK);
	/* the main thread exited but another runs on: not gone */
	tree_proc(&t, 'Z', 2, 10, 0);
	CHECK(vt_thread_watch_read(w, 0, &err) == VT_OK);
	CHECK_EQ_U64(vt_thread_watch_count(w), 2);
	tree_proc(&t, 'Z', 1, 10, 0);
	CHECK(vt_thread_watch_read(w, 0, &err) == VT_E_GONE);
	CHECK(strstr(err.msg, "zombie") != NULL);
	CHECK_EQ_U64(vt_thread_watch_count(w), 0);
	x = vt_thread_watch_exited(w, &nx);
	CHECK_EQ_U64(nx, 2);
	CHECK(nx == 2 && x[1].tid == 901 && x[1].utime_ticks == 7);
	CHECK(vt_thread_watch_read(w, 0, &err) == VT_E_GONE);
	vt_thread_watch_exited(w, &nx);
	CHECK_EQ_U64(nx, 0);
	vt_thread_watch_close(w);
	close(pid_fd);
	vt_procfs_close(&pfs);
	tree_free(&t);
	vt_thread_watch_close(NULL);
}

/* The recorded tree of a real process: every task/TID, stat only. */
static void test_thread_watch__recorded_tree(void)
{
	const struct vt_thread_counts *r, *c;
	struct vt_thread_watch *w = NULL;
	struct vt_procfs pfs;
	struct vt_err err;
	char *text;
	size_t n, len;
	int pid_fd = -1;

	CHECK(vt_procfs_open(&pfs, vt_fixture_path("proc/arena_default/proc"), NULL, &err) == VT_OK);
	CHECK(vt_pid_open(&pfs, 9277, &pid_fd, &err) == VT_OK);
	CHECK(vt_thread_watch_open(&pfs, pid_fd, 9277, &w, &err) == VT_OK);
	if (!w)
		return;
	CHECK(vt_thread_watch_read(w, VT_TW_CSW, &err) == VT_OK);
	r = vt_thread_watch_rows(w, &n);
	CHECK_EQ_U64(n, 9);
	CHECK(sorted(r, n));
	c = find(r, n, 9281);
	CHECK(c && !strcmp(c->comm, "churn-0") && c->utime_ticks == 8 && c->stime_ticks == 8);
	CHECK(c && c->start_ticks == 91232 && c->run_ns == VT_NA && c->vcsw == VT_NA);
	text = vt_fixture("proc/arena_default/proc/9277/stat", &len);
	CHECK(!strncmp(text, "9277 (", 6));
	CHECK_STR(vt_thread_watch_process(w)->comm, "arena_churn");
	free(text);
	vt_thread_watch_close(w);
	close(pid_fd);
	vt_procfs_close(&pfs);

	/* a recorded zombie has no task/: gone at open */
	CHECK(vt_procfs_open(&pfs, vt_fixture_path("proc/zombie/proc"), NULL, &err) == VT_OK);
	CHECK(vt_pid_open(&pfs, 9772, &pid_fd, &err) == VT_OK);
	CHECK(vt_thread_watch_open(&pfs, pid_fd, 9772, &w, &err) == VT_E_GONE);
	CHECK(w == NULL);
	close(pid_fd);
	vt_procfs_close(&pfs);
}

/* ---- on live processes -------------------------------------------------- */

struct worker {
	pthread_t th;
	atomic_int stop;
	atomic_int tid;
	atomic_int loops;
	int id;
};

static void *worker_main(void *arg)
{
	struct worker *wk = arg;
	char name[16];
	volatile unsigned x = 0;
	struct timespec nap = { 0, 200000 };
	int i;

	snprintf(name, sizeof(name), "tw-%d", wk->id);
	pthread_setname_np(pthread_self(), name);
	atomic_store(&wk->tid, (int)gettid());
	while (!atomic_load(&wk->stop)) {
		for (i = 0; i < 20000; i++)
			x += (unsigned)i;
		nanosleep(&nap, NULL);     /* voluntary switches */
		atomic_fetch_add(&wk->loops, 1);
	}
	return NULL;
}

static void worker_start(struct worker *wk, int id)
{
	memset(wk, 0, sizeof(*wk));
	wk->id = id;
	if (pthread_create(&wk->th, NULL, worker_main, wk) != 0) {
		printf("Bail out! pthread_create\n");
		exit(2);
	}
	while (atomic_load(&wk->loops) < 2)   /* has slept, so has switched */
		usleep(100);
}

/* Join and wait until the kernel has dropped task/TID too. */
static void worker_stop(struct worker *wk)
{
	char path[64];
	int i;

	atomic_store(&wk->stop, 1);
	pthread_join(wk->th, NULL);
	snprintf(path, sizeof(path), "/proc/self/task/%d", atomic_load(&wk->tid));
	for (i = 0; i < 2000 && access(path, F_OK) == 0; i++)
		usleep(500);
}

static void burn_cpu(double seconds)
{
	struct timespec a, b;
	volatile uint64_t x = 0;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do {
		for (int i = 0; i < 100000; i++)
			x += (uint64_t)i * 3;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	} while ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9 < seconds);
}

static bool grew(uint64_t before, uint64_t after)
{
	return !vt_known(before) || !vt_known(after) || after >= before;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)) != NULL)
		n += de->d_name[0] != '.';
	closedir(d);
	return n - 1;   /* the DIR's own fd */
}

/* This test process: threads exit and appear, counters grow, CPU advances. */
static void test_thread_watch__live_self(void)
{
	struct worker wk[5];
	struct vt_thread_counts before[64], gone;
	const struct vt_thread_counts *r, *x, *c, *b;
	const struct vt_thread_watch_proc *p;
	struct vt_thread_watch_stats stats;
	struct vt_thread_watch *w = NULL;
	struct vt_procfs pfs;
	struct vt_err err;
	uint64_t cpu0, main_run0;
	size_t n, nb, nx, i;
	pid_t self = getpid();
	struct rlimit rl;
	int pid_fd = -1;

	for (i = 0; i < 4; i++)
		worker_start(&wk[i], (int)i);
	CHECK(vt_procfs_open(&pfs, NULL, NULL, &err) == VT_OK);
	CHECK(vt_pid_open(&pfs, self, &pid_fd, &err) == VT_OK);
	CHECK(vt_thread_watch_open(&pfs, pid_fd, self, &w, &err) == VT_OK);
	if (!w)
		return;
	/* the soft limit went up to the hard one */
	CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur == rl.rlim_max);

	usleep(20000);
	CHECK(vt_thread_watch_read(w, VT_TW_CSW, &err) == VT_OK);
	r = vt_thread_watch_rows(w, &n);
	CHECK(n >= 5);
	CHECK(sorted(r, n));
	for (i = 0; i < 4; i++) {
		c = find(r, n, atomic_load(&wk[i].tid));
		CHECK(c && !c->is_new && !strncmp(c->comm, "tw-", 3));
		CHECK(c && vt_known(c->vcsw) && c->vcsw > 0);
	}
	c = find(r, n, self);
	CHECK(c != NULL);
	main_run0 = c ? c->run_ns : 0;
	nb = n < 64 ? n : 64;
	memcpy(before, r, nb * sizeof(*r));
	p = vt_thread_watch_process(w);
	cpu0 = p->utime_ticks + p->stime_ticks;
	CHECK_EQ_I64(p->pid, self);
	CHECK(p->num_threads >= 5);

	/* worker 0 ends, worker 4 starts, the main thread burns 0.2 s */
	worker_stop(&wk[0]);
	c = find(before, nb, atomic_load(&wk[0].tid));
	CHECK(c != NULL);
	memset(&gone, 0, sizeof(gone));
	if (c)
		gone = *c;
	worker_start(&wk[4], 4);
	burn_cpu(0.2);
	usleep(20000);

	CHECK(vt_thread_watch_read(w, VT_TW_CSW, &err) == VT_OK);
	r = vt_thread_watch_rows(w, &n);
	CHECK(sorted(r, n));
	CHECK(!find(r, n, atomic_load(&wk[0].tid)));
	x = vt_thread_watch_exited(w, &nx);
	c = find(x, nx, atomic_load(&wk[0].tid));
	CHECK(c != NULL);
	if (c) {   /* exactly what the previous read saw of it */
		CHECK_EQ_U64(c->utime_ticks, gone.utime_ticks);
		CHECK_EQ_U64(c->run_ns, gone.run_ns);
		CHECK_EQ_U64(c->vcsw, gone.vcsw);
		CHECK_EQ_U64(c->start_ticks, gone.start_ticks);
	}
	c = find(r, n, atomic_load(&wk[4].tid));
	CHECK(c && c->is_new && !strcmp(c->comm, "tw-4"));
	for (i = 0; i < n; i++) {
		b = find(before, nb, r[i].tid);
		if (!b)
			continue;
		CHECK(!r[i].is_new);
		CHECK_EQ_U64(r[i].start_ticks, b->start_ticks);
		CHECK(grew(b->utime_ticks, r[i].utime_ticks));
		CHECK(grew(b->stime_ticks, r[i].stime_ticks));
		CHECK(grew(b->run_ns, r[i].run_ns));
		CHECK(grew(b->wait_ns, r[i].wait_ns));
		CHECK(grew(b->vcsw, r[i].vcsw));
		CHECK(grew(b->nvcsw, r[i].nvcsw));
	}
	c = find(r, n, self);
	CHECK(c && (c->run_ns == VT_NA || c->run_ns - main_run0 >= 150000000ull));
	p = vt_thread_watch_process(w);
	CHECK(p->utime_ticks + p->stime_ticks >= cpu0 + (uint64_t)p->clk_tck / 10);

	/* one worker replaced by another, same count: the listing was skipped,
	 * then done in the same read when worker 0 was found gone */
	vt_thread_watch_stats(w, &stats);
	CHECK_EQ_U64(stats.lists, 2);

	/* without VT_TW_CSW: no switches, nothing new, nothing gone, no listing */
	CHECK(vt_thread_watch_read(w, 0, &err) == VT_OK);
	vt_thread_watch_stats(w, &stats);
	CHECK_EQ_U64(stats.lists, 2);
	CHECK_EQ_U64(stats.reads, 3);
	r = vt_thread_watch_rows(w, &n);
	c = find(r, n, atomic_load(&wk[1].tid));
	CHECK(c && c->vcsw == VT_NA && c->nvcsw == VT_NA && !c->is_new);
	vt_thread_watch_exited(w, &nx);
	CHECK_EQ_U64(nx, 0);

	for (i = 1; i < 5; i++)
		worker_stop(&wk[i]);
	vt_thread_watch_close(w);
	close(pid_fd);
	vt_procfs_close(&pfs);
}

/*
 * VT_TW_SCHEDSTAT_ONLY on this live process: the main thread's run_ns grows
 * while its utime stays that of the last full read; a thread that started
 * meanwhile has a full row, one that ended is in the exited list.
 */
static void test_thread_watch__live_schedstat_only(void)
{
	struct worker wk[3];
	struct vt_thread_counts main0 = { 0 }, gone0 = { 0 };
	const struct vt_thread_counts *r, *x, *c;
	struct vt_thread_watch_stats stats;
	struct vt_thread_watch *w = NULL;
	struct vt_procfs pfs;
	struct vt_err err;
	size_t n, nx;
	pid_t self = getpid();
	int pid_fd = -1;

	worker_start(&wk[0], 10);
	worker_start(&wk[1], 11);
	CHECK(vt_procfs_open(&pfs, NULL, NULL, &err) == VT_OK);
	CHECK(vt_pid_open(&pfs, self, &pid_fd, &err) == VT_OK);
	CHECK(vt_thread_watch_open(&pfs, pid_fd, self, &w, &err) == VT_OK);
	if (!w)
		return;
	vt_thread_watch_stats(w, &stats);
	if (!stats.schedstat) {
		printf("# no schedstat on this kernel: the flag changes nothing\n");
		worker_stop(&wk[0]);
		worker_start(&wk[2], 12);
		goto out;
	}
	CHECK(vt_thread_watch_read(w, 0, &err) == VT_OK);
	r = vt_thread_watch_rows(w, &n);
	if ((c = find(r, n, self)))
		main0 = *c;
	if ((c = find(r, n, atomic_load(&wk[0].tid))))
		gone0 = *c;
	CHECK(main0.tid == self && gone0.tid != 0);

	worker_stop(&wk[0]);
	worker_start(&wk[2], 12);
	burn_cpu(0.2);     /* 20 ticks at 100 Hz */
	CHECK(vt_thread_watch_read(w, VT_TW_SCHEDSTAT_ONLY, &err) == VT_OK);
	r = vt_thread_watch_rows(w, &n);
	c = find(r, n, self);
	CHECK(c && c->run_ns >= main0.run_ns + 150000000ull);
	CHECK(c && c->utime_ticks == main0.utime_ticks && c->stime_ticks == main0.stime_ticks);
	c = find(r, n, atomic_load(&wk[2].tid));
	CHECK(c && c->is_new && !strcmp(c->comm, "tw-12") && c->start_ticks > 0);
	x = vt_thread_watch_exited(w, &nx);
	c = find(x, nx, atomic_load(&wk[0].tid));
	CHECK(c && c->start_ticks == gone0.start_ticks && c->run_ns >= gone0.run_ns);

	/* the next full read sees the CPU in stat too */
	CHECK(vt_thread_watch_read(w, 0, &err) == VT_OK);
	r = vt_thread_watch_rows(w, &n);
	c = find(r, n, self);
	CHECK(c && c->utime_ticks + c->stime_ticks >=
		       main0.utime_ticks + main0.stime_ticks + (uint64_t)vt_thread_watch_process(w)->clk_tck / 10);
out:
	worker_stop(&wk[1]);
	worker_stop(&wk[2]);
	vt_thread_watch_close(w);
	close(pid_fd);
	vt_procfs_close(&pfs);
}

/* A child with threads exits: VT_E_GONE, zombie or reaped, last counters kept. */
static void test_thread_watch__live_child_exit(void)
{
	const struct vt_thread_counts *x;
	struct vt_thread_watch *w = NULL;
	struct vt_procfs pfs;
	struct vt_err err;
	size_t nx;
	int pid_fd = -1, reap, pipefd[2];
	pid_t child;
	char c;

	for (reap = 0; reap < 2; reap++) {
		CHECK(pipe(pipefd) == 0);
		child = fork();
		if (child == 0) {
			struct worker wk[3];
			int i;

			for (i = 0; i < 3; i++)
				worker_start(&wk[i], i);
			if (write(pipefd[1], "r", 1) != 1)
				_exit(1);
			pause();
			_exit(0);
		}
		CHECK(read(pipefd[0], &c, 1) == 1);
		close(pipefd[0]);
		close(pipefd[1]);
		CHECK(vt_procfs_open(&pfs, NULL, NULL, &err) == VT_OK);
		CHECK(vt_pid_open(&pfs, child, &pid_fd, &err) == VT_OK);
		CHECK(vt_thread_watch_open(&pfs, pid_fd, child, &w, &err) == VT_OK);
		if (!w)
			return;
		CHECK(vt_thread_watch_read(w, VT_TW_CSW, &err) == VT_OK);
		CHECK_EQ_U64(vt_thread_watch_count(w), 4);
		kill(child, SIGKILL);
		if (reap) {
			waitpid(child, NULL, 0);
		} else {   /* a zombie until the end of this round */
			siginfo_t si;

			waitid(P_PID, (id_t)child, &si, WEXITED | WNOWAIT);
		}
		CHECK(vt_thread_watch_read(w, VT_TW_CSW, &err) == VT_E_GONE);
		CHECK_EQ_U64(vt_thread_watch_count(w), 0);
		x = vt_thread_watch_exited(w, &nx);
		CHECK_EQ_U64(nx, 4);
		CHECK(nx == 4 && x[0].tid == child && vt_known(x[3].vcsw));
		vt_thread_watch_close(w);
		close(pid_fd);
		vt_procfs_close(&pfs);
		if (!reap)
			waitpid(child, NULL, 0);
	}
}

/* Threads come and go all the time: the books stay right, no fd is left. */
static atomic_int churn_stop;

static void *short_lived(void *arg)
{
	volatile unsigned x = 0;

	for (unsigned i = 0; i < 1000u + (unsigned)(uintptr_t)arg % 5000u; i++)
		x += i;
	return NULL;
}

static void *spawner(void *arg)
{
	pthread_t th[8];
	uintptr_t k = 0;
	int i;

	(void)arg;
	while (!atomic_load(&churn_stop)) {
		for (i = 0; i < 8; i++)
			if (pthread_create(&th[i], NULL, short_lived, (void *)k++) != 0)
				th[i] = 0;
		for (i = 0; i < 8; i++)
			if (th[i])
				pthread_join(th[i], NULL);
	}
	return NULL;
}

static void test_thread_watch__live_churn_no_fd_leak(void)
{
	struct vt_thread_counts prev[256];
	const struct vt_thread_counts *r, *x, *b;
	struct vt_thread_watch_stats stats;
	struct vt_thread_watch *w = NULL;
	struct vt_procfs pfs;
	struct vt_err err;
	size_t n, nx, np = 0, i, news = 0, exits = 0;
	pid_t self = getpid();
	pthread_t sp[2];
	int pid_fd = -1, fds0, tick, rc, bad = 0;
	time_t t0;

	atomic_store(&churn_stop, 0);
	CHECK(vt_procfs_open(&pfs, NULL, NULL, &err) == VT_OK);
	CHECK(vt_pid_open(&pfs, self, &pid_fd, &err) == VT_OK);
	fds0 = count_fds();
	CHECK(vt_thread_watch_open(&pfs, pid_fd, self, &w, &err) == VT_OK);
	if (!w)
		return;
	pthread_create(&sp[0], NULL, spawner, NULL);
	pthread_create(&sp[1], NULL, spawner, NULL);
	/*
	 * 300 reads, more on a loaded machine until 11 threads came and went
	 * (20 s at most): past 300 a read waits 1 ms, as a busy reader once
	 * took 5000 reads before the spawners ran at all.
	 */
	t0 = time(NULL);
	for (tick = 0; tick < 300 || ((news <= 10 || exits <= 10) && time(NULL) < t0 + 20); tick++) {
		if (tick >= 300)
			usleep(1000);
		rc = vt_thread_watch_read(w, tick % 2 ? VT_TW_CSW : 0, &err);
		if (rc != VT_OK) {
			printf("#   read %d: %s\n", tick, err.msg);
			bad++;
			continue;
		}
		r = vt_thread_watch_rows(w, &n);
		x = vt_thread_watch_exited(w, &nx);
		bad += !sorted(r, n) || !sorted(x, nx) || !find(r, n, self);
		for (i = 0; i < nx; i++)   /* every exit was a row of the previous read */
			bad += !find(prev, np, x[i].tid) && np < 256;
		for (i = 0; i < n; i++) {
			b = find(prev, np, r[i].tid);
			news += r[i].is_new;
			if (b && !r[i].is_new)
				bad += b->start_ticks != r[i].start_ticks ||
				       !grew(b->utime_ticks, r[i].utime_ticks) ||
				       !grew(b->run_ns, r[i].run_ns);
			/* a new row under a known tid: the old one must be in exited */
			if (b && r[i].is_new)
				bad += !find(x, nx, r[i].tid);
			if (tick && !b && !r[i].is_new && np < 256)
				bad++;
		}
		exits += nx;
		vt_thread_watch_stats(w, &stats);
		bad += stats.fds < 2 + n || stats.fds > 2 + 3 * n;
		np = n < 256 ? n : 256;
		memcpy(prev, r, np * sizeof(*r));
	}
	atomic_store(&churn_stop, 1);
	pthread_join(sp[0], NULL);
	pthread_join(sp[1], NULL);
	printf("# %d reads: %zu new threads, %zu exits seen\n", tick, news, exits);
	CHECK_EQ_I64(bad, 0);
	CHECK(news > 10 && exits > 10);
	vt_thread_watch_close(w);
	CHECK_EQ_I64(count_fds(), fds0);
	close(pid_fd);
	vt_procfs_close(&pfs);
}

/* ---- what a thread is doing: wchan and syscall ----------------------------- */

static void tree_doing(struct tree *t, pid_t tid, const char *wchan, const char *syscall)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%d/task/%d/wchan", t->proc, (int)t->pid, (int)tid);
	put(path, "%s", wchan);
	snprintf(path, sizeof(path), "%s/%d/task/%d/syscall", t->proc, (int)t->pid, (int)tid);
	if (syscall)
		put(path, "%s", syscall);
	else
		unlink(path);
}

static void test_thread_watch__fixture_doing(void)
{
	const struct vt_thread_counts *r, *c;
	struct vt_thread_watch *w;
	struct vt_procfs pfs;
	struct vt_err err;
	struct tree t;
	size_t n;
	int pid_fd;

	tree_init(&t, 700, true);
	tree_proc(&t, 'S', 3, 10, 1);
	tree_thread(&t, 700, "main", 100, 1, 1);
	tree_thread(&t, 701, "lock", 100, 1, 1);
	tree_thread(&t, 702, "cpu", 100, 1, 1);
	tree_doing(&t, 700, "do_wait", "61 0xffffffff 0x0 0x0 0x0 0x0 0x0 0x7ffd 0x7f12\n");
	tree_doing(&t, 701, "futex_wait_queue", "202 0x5581 0x80 0x0 0x0 0x0 0x0 0x7ffd 0x7f12\n");
	tree_doing(&t, 702, "0", "running\n");
	w = tree_watch(&t, &pfs, &pid_fd);

	/* not asked for: nothing read, said so */
	CHECK(vt_thread_watch_read(w, 0, &err) == VT_OK);
	r = vt_thread_watch_rows(w, &n);
	CHECK(n == 3 && r[1].wchan_rc == VT_TW_UNREAD && r[1].syscall_rc == VT_TW_UNREAD);

	CHECK(vt_thread_watch_read(w, VT_TW_WCHAN | VT_TW_SYSCALL, &err) == VT_OK);
	r = vt_thread_watch_rows(w, &n);
	CHECK_EQ_U64(n, 3);
	c = find(r, n, 701);
	CHECK(c && c->wchan_rc == VT_OK && !strcmp(c->wchan, "futex_wait_queue"));
	CHECK(c && c->syscall_rc == VT_OK && c->syscall == 202);
	c = find(r, n, 700);
	CHECK(c && c->syscall == 61 && !strcmp(c->wchan, "do_wait"));
	c = find(r, n, 702);
	CHECK(c && c->wchan_rc == VT_OK && c->wchan[0] == '\0');      /* "0": on a CPU */
	CHECK(c && c->syscall_rc == VT_OK && c->syscall == VT_TW_SYSCALL_RUNNING);

	/* blocked outside a system call; then a malformed file */
	tree_doing(&t, 701, "futex_wait_queue", "-1 0x7ffd 0x7f12\n");
	tree_doing(&t, 702, "0", "banana\n");
	CHECK(vt_thread_watch_read(w, VT_TW_WCHAN | VT_TW_SYSCALL, &err) == VT_OK);
	r = vt_thread_watch_rows(w, &n);
	c = find(r, n, 701);
	CHECK(c && c->syscall_rc == VT_OK && c->syscall == VT_TW_SYSCALL_NONE);
	c = find(r, n, 702);
	CHECK(c && c->syscall_rc == VT_E_PARSE);
	CHECK(c && c->utime_ticks == 1);                    /* the rest of the row stands */

	/* no syscall file (a kernel without it): every thread says so, none is asked again */
	tree_doing(&t, 700, "do_wait", NULL);
	vt_thread_watch_close(w);
	close(pid_fd);
	vt_procfs_close(&pfs);
	w = tree_watch(&t, &pfs, &pid_fd);
	CHECK(vt_thread_watch_read(w, VT_TW_SYSCALL, &err) == VT_OK);
	r = vt_thread_watch_rows(w, &n);
	CHECK(n == 3 && r[0].syscall_rc == VT_E_NOTFOUND);
	CHECK(n == 3 && r[1].syscall_rc == VT_E_NOTFOUND && r[2].syscall_rc == VT_E_NOTFOUND);
	CHECK(n == 3 && r[1].wchan_rc == VT_TW_UNREAD);

	vt_thread_watch_close(w);
	close(pid_fd);
	vt_procfs_close(&pfs);
	tree_free(&t);
}

static void *block_in_read(void *arg)
{
	char byte;

	return read(*(int *)arg, &byte, 1) == 1 ? arg : NULL;
}

/* A thread's schedstat as written: run ns, wait ns and timeslices. */
static void tree_schedstat(struct tree *t, pid_t tid, uint64_t run, uint64_t wait, uint64_t slices)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%d/task/%d/schedstat", t->proc, (int)t->pid, (int)tid);
	put(path, "%" PRIu64 " %" PRIu64 " %" PRIu64 "\n", run, wait, slices);
}

static void tree_state(struct tree *t, pid_t tid, const char *comm, char state, uint64_t start)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%d/task/%d/stat", t->proc, (int)t->pid, (int)tid);
	stat_line(path, tid, comm, state, 1, start, 1, 1, 0);
}

/*
 * VT_TW_CARRY: a thread whose schedstat is as it was keeps its row (its
 * other files, changed behind its back here, are not read); one whose run
 * time, timeslices or run-queue wait moved is read again; a thread in R
 * gets no wchan or syscall read; a row whose state and wchan disagreed
 * (S, but wchan "0") reads its wait again.
 */
static void test_thread_watch__fixture_carry(void)
{
	const unsigned flags = VT_TW_CSW | VT_TW_WCHAN | VT_TW_SYSCALL | VT_TW_CARRY;
	const struct vt_thread_counts *r, *c;
	struct vt_thread_watch_stats st;
	struct vt_threads_sample sample;
	struct vt_thread_watch *w;
	struct vt_procfs pfs;
	struct vt_err err;
	struct tree t;
	size_t n;
	int pid_fd;

	tree_init(&t, 700, true);
	tree_proc(&t, 'S', 5, 5, 5);
	tree_thread(&t, 700, "sleeper", 100, 1, 1);          /* asleep throughout */
	tree_thread(&t, 701, "slices", 100, 1, 1);           /* switched in, no run time counted */
	tree_thread(&t, 702, "spinner", 100, 1, 1);          /* R throughout */
	tree_thread(&t, 703, "caught", 100, 1, 1);           /* S with wchan "0": caught going to sleep */
	tree_thread(&t, 704, "queued", 100, 1, 1);           /* only its run-queue wait moved */
	tree_thread(&t, 705, "woken", 100, 1, 1);            /* woken, queued for a CPU: not run yet */
	tree_state(&t, 702, "spinner", 'R', 100);
	tree_doing(&t, 700, "futex_wait_queue", "202 0x5581 0x80 0x0 0x0 0x0 0x0 0x7ffd 0x7f12\n");
	tree_doing(&t, 701, "futex_wait_queue", "202 0x5582 0x80 0x0 0x0 0x0 0x0 0x7ffd 0x7f12\n");
	tree_doing(&t, 702, "0", "running\n");
	tree_doing(&t, 703, "0", "running\n");
	tree_doing(&t, 704, "do_epoll_wait", "232 0x3 0x7ffd 0x40 0x3e8 0x0 0x0 0x7ffd 0x7f12\n");
	tree_doing(&t, 705, "futex_wait_queue", "202 0x5583 0x80 0x0 0x0 0x0 0x0 0x7ffd 0x7f12\n");
	w = tree_watch(&t, &pfs, &pid_fd);

	CHECK(vt_thread_watch_read(w, flags, &err) == VT_OK);
	vt_thread_watch_stats(w, &st);
	CHECK_EQ_U64(st.stat_read, 6);
	CHECK_EQ_U64(st.stat_carried, 0);
	CHECK_EQ_U64(st.doing_read, 5);       /* 702 is R: its none is known without a read */
	CHECK_EQ_U64(st.doing_running, 1);
	r = vt_thread_watch_rows(w, &n);
	c = find(r, n, 702);
	CHECK(c && c->wchan_rc == VT_OK && !c->wchan[0] && c->syscall_rc == VT_OK &&
	      c->syscall == VT_TW_SYSCALL_RUNNING && (c->carried & VT_TW_DOING_RUNNING));
	c = find(r, n, 700);
	CHECK(c && c->carried == 0 && c->vcsw == 1 && c->timeslices == 7 && !strcmp(c->wchan, "futex_wait_queue"));

	/* behind their backs: every other file changes, schedstat only where said */
	tree_doing(&t, 700, "pipe_read", "0 0x3 0x0 0x0 0x0 0x0 0x0 0x7ffd 0x7f12\n");
	tree_doing(&t, 701, "pipe_read", "0 0x4 0x0 0x0 0x0 0x0 0x0 0x7ffd 0x7f12\n");
	tree_doing(&t, 703, "pipe_read", "0 0x5 0x0 0x0 0x0 0x0 0x0 0x7ffd 0x7f12\n");
	tree_doing(&t, 704, "pipe_read", "0 0x6 0x0 0x0 0x0 0x0 0x0 0x7ffd 0x7f12\n");
	tree_state(&t, 701, "slices", 'D', 100);
	tree_state(&t, 704, "queued", 'D', 100);
	tree_state(&t, 705, "woken", 'R', 100);              /* woken: R before it runs, schedstat still */
	tree_schedstat(&t, 701, 1000000, 1000, 8);            /* a timeslice, the same run time */
	tree_schedstat(&t, 704, 1000000, 2000, 7);            /* waited on a run queue */
	CHECK(vt_thread_watch_read(w, flags, &err) == VT_OK);
	vt_thread_watch_stats(w, &st);
	CHECK_EQ_U64(st.stat_read, 6);        /* the state: every thread */
	CHECK_EQ_U64(st.stat_carried, 3);     /* 700, 702, 703: not run, the same state */
	CHECK_EQ_U64(st.csw_read, 3);         /* 701, 704, 705 */
	CHECK_EQ_U64(st.doing_carried, 1);    /* 700 */
	CHECK_EQ_U64(st.doing_running, 2);    /* 702, still R: it has not run; 705, R now */
	CHECK_EQ_U64(st.doing_read, 3);       /* 701, 704, and 703 caught going to sleep */
	r = vt_thread_watch_rows(w, &n);
	CHECK_EQ_U64(n, 6);
	c = find(r, n, 700);
	CHECK(c && c->state == 'S' && !strcmp(c->wchan, "futex_wait_queue") && c->syscall == 202 &&
	      c->carried == (VT_TW_CARRIED_STAT | VT_TW_CARRIED_CSW | VT_TW_CARRIED_DOING));
	c = find(r, n, 701);
	CHECK(c && c->state == 'D' && !strcmp(c->wchan, "pipe_read") && c->syscall == 0 && c->timeslices == 8 &&
	      c->carried == 0);
	c = find(r, n, 702);
	CHECK(c && c->state == 'R' && (c->carried & VT_TW_CARRIED_STAT) && !c->wchan[0]);
	c = find(r, n, 703);
	CHECK(c && c->state == 'S' && !strcmp(c->wchan, "pipe_read") && c->syscall == 0 &&
	      (c->carried & VT_TW_CARRIED_STAT) && !(c->carried & VT_TW_CARRIED_DOING));
	c = find(r, n, 704);
	CHECK(c && c->state == 'D' && c->wait_ns == 2000 && !strcmp(c->wchan, "pipe_read"));
	c = find(r, n, 705);      /* not asleep in its old wait: R, though it has not run */
	CHECK(c && c->state == 'R' && !(c->carried & VT_TW_CARRIED_STAT) && (c->carried & VT_TW_DOING_RUNNING) &&
	      !c->wchan[0]);

	/* what a sample says it rests on */
	CHECK(vt_threads_sample_take(w, flags, &sample, &err) == VT_OK);
	CHECK_EQ_U64(sample.reads.stat_read, 6);
	CHECK_EQ_U64(sample.reads.stat_carried, 6);
	CHECK_EQ_U64(sample.reads.doing_carried, 4);
	CHECK_EQ_U64(sample.reads.doing_running, 2);
	CHECK(sample.n == 6 && sample.threads[0].wchan_ok && !strcmp(sample.threads[0].wchan, "futex_wait_queue"));
	vt_threads_sample_release(&sample);

	/* without the flag every file is read, as before */
	CHECK(vt_thread_watch_read(w, VT_TW_CSW | VT_TW_WCHAN | VT_TW_SYSCALL, &err) == VT_OK);
	r = vt_thread_watch_rows(w, &n);
	c = find(r, n, 700);
	CHECK(c && c->state == 'S' && !strcmp(c->wchan, "pipe_read") && c->carried == 0);
	vt_thread_watch_close(w);
	close(pid_fd);
	vt_procfs_close(&pfs);
	tree_free(&t);
}

/* A live thread blocked in read(2) on a pipe: the kernel's own view of it. */
static void test_thread_watch__live_doing(void)
{
	const struct vt_thread_counts *r;
	struct vt_thread_watch *w = NULL;
	struct vt_procfs pfs;
	struct vt_err err;
	pthread_t th;
	size_t n, i;
	int pipefd[2], pid_fd = -1, found = 0, tries;

	CHECK(pipe(pipefd) == 0);
	CHECK(pthread_create(&th, NULL, block_in_read, &pipefd[0]) == 0);
	CHECK(vt_procfs_open(&pfs, NULL, NULL, &err) == VT_OK);
	CHECK(vt_pid_open(&pfs, getpid(), &pid_fd, &err) == VT_OK);
	CHECK(vt_thread_watch_open(&pfs, pid_fd, getpid(), &w, &err) == VT_OK);
	for (tries = 0; w && tries < 200 && !found; tries++) {
		usleep(10000);
		CHECK(vt_thread_watch_read(w, VT_TW_WCHAN | VT_TW_SYSCALL, &err) == VT_OK);
		r = vt_thread_watch_rows(w, &n);
		for (i = 0; i < n; i++)
			if (r[i].tid != getpid() && r[i].syscall_rc == VT_OK && r[i].syscall == __NR_read &&
			    r[i].state == 'S')
				found = 1;
	}
	CHECK(found);
	r = vt_thread_watch_rows(w, &n);
	for (i = 0; found && i < n; i++) {
		if (r[i].tid == getpid()) {
			/* the reader itself: its own call in progress (pread64 on its held fd) */
			CHECK(r[i].syscall >= 0);
			continue;
		}
		CHECK(r[i].wchan_rc == VT_OK);
		printf("# blocked reader: wchan %s, syscall %ld\n", r[i].wchan, r[i].syscall);
		CHECK(r[i].wchan[0] != '\0');
	}
	CHECK(write(pipefd[1], "x", 1) == 1);
	pthread_join(th, NULL);
	close(pipefd[0]);
	close(pipefd[1]);
	vt_thread_watch_close(w);
	close(pid_fd);
	vt_procfs_close(&pfs);
}

VT_TEST_MAIN(test_thread_watch__fixture_churn, test_thread_watch__fixture_tid_reuse,
	     test_thread_watch__fixture_fd_budget, test_thread_watch__fixture_csw,
	     test_thread_watch__fixture_zombie, test_thread_watch__recorded_tree,
	     test_thread_watch__live_self, test_thread_watch__live_child_exit,
	     test_thread_watch__live_churn_no_fd_leak, test_thread_watch__fixture_doing,
	     test_thread_watch__live_doing, test_thread_watch__fixture_schedstat_only,
	     test_thread_watch__live_schedstat_only, test_thread_watch__fixture_carry)

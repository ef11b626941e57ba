/*
 * test_threads_recorded.c — the whole path of `vitals threads` (thread watch
 * -> sample -> rates -> diagnosis) on pairs of /proc trees recorded from
 * real processes by tests/fixtures/record_threads.sh, checked against the
 * rates its awk computed from the same files (tests/fixtures/threads/NAME/
 * expect): a steady pool (lock_convoy), a process whose threads came and
 * went between the two reads (thread_churn) and a thread-per-request server
 * whose request threads no read saw (http_server: python3 -m http.server
 * under a urllib request loop, recorded with record_threads.sh PID
 * http_server 1).
 */
#include "harness.h"

#include "analyze/diagnose.h"
#include "analyze/rates.h"
#include "render/threads.h"
#include "proc/hostload.h"
#include "proc/io.h"
#include "proc/thread_watch.h"
#include "sample/threads.h"
#include "proc/procfs.h"
#include "proc/uptime.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#define FLAGS (VT_TW_CSW | VT_TW_WCHAN | VT_TW_SYSCALL)
#define VT_RECORDED_MAX 64      /* reads of one recording */

static int near(double a, double b, double tol)
{
	return fabs(a - b) <= tol;
}

/* The one numeric entry of DIR/proc: the recorded pid. */
static pid_t recorded_pid(const char *dir)
{
	char path[1100];
	struct dirent *e;
	pid_t pid = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/proc", dir);
	d = opendir(path);
	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (e->d_name[0] >= '1' && e->d_name[0] <= '9')
			pid = (pid_t)atoi(e->d_name);
	closedir(d);
	return pid;
}

/* Read recorded tree NAME/i as vitals reads /proc: one watch read. */
static void take_recorded(const char *name, int i, struct vt_threads_sample *s)
{
	char rel[256], path[1024], *mono;
	struct vt_buf buf = VT_BUF_INIT(1u << 20);
	struct vt_thread_watch *w = NULL;
	struct vt_procfs pfs;
	struct vt_loadavg la;
	struct vt_err err;
	size_t len;
	pid_t pid;
	int pid_fd = -1;

	memset(s, 0, sizeof(*s));
	snprintf(rel, sizeof(rel), "threads/%s/%d", name, i);
	snprintf(path, sizeof(path), "%s", vt_fixture_path(rel));
	pid = recorded_pid(path);
	CHECK(pid > 0);
	snprintf(path + strlen(path), sizeof(path) - strlen(path), "/proc");
	CHECK(vt_procfs_open(&pfs, path, NULL, &err) == VT_OK);
	CHECK(vt_pid_open(&pfs, pid, &pid_fd, &err) == VT_OK);
	CHECK(vt_thread_watch_open(&pfs, pid_fd, pid, &w, &err) == VT_OK);
	if (w)
		CHECK(vt_threads_sample_take(w, FLAGS, s, &err) == VT_OK);
	s->uptime_s = vt_uptime_read(&pfs, &buf);
	/* what the interval sampler reads beside each sample, when recorded */
	if (vt_loadavg_read(&pfs, &buf, &la, NULL) == VT_OK) {
		s->host_known = true;
		s->host_runnable = (uint32_t)la.runnable;
	}
	/* the recorded clock, not the time of this read */
	snprintf(rel, sizeof(rel), "threads/%s/%d/mono_ns", name, i);
	mono = vt_fixture(rel, &len);
	s->mono_ns = strtoull(mono, NULL, 10);
	free(mono);
	vt_thread_watch_close(w);
	if (pid_fd >= 0)
		close(pid_fd);
	vt_procfs_close(&pfs);
	vt_buf_release(&buf);
}

static const struct vt_thread_rate *rate_of(const struct vt_threads_rates *r, pid_t tid)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (r->threads[i].tid == tid)
			return &r->threads[i];
	return NULL;
}

/* The CPU of the threads there at both reads: the rows `vitals threads` shows one by one. */
static double whole_cores(const struct vt_threads_rates *r)
{
	double sum = 0;
	size_t i;

	for (i = 0; i < r->n; i++)
		if (!(r->threads[i].flags & (VT_THREAD_APPEARED | VT_THREAD_EXITED)))
			sum += r->threads[i].cpu_cores;
	return sum;
}

/*
 * Compute rates over the pair NAME/0, NAME/1 and check every line of
 * NAME/expect.  Returns the number of expect lines checked.
 */
/* Reads recorded of NAME: directories 0, 1, ... */
static int recorded_reads(const char *name)
{
	char rel[256];
	int n = 0;

	for (;; n++) {
		snprintf(rel, sizeof(rel), "threads/%s/%d", name, n);
		if (access(vt_fixture_path(rel), F_OK) != 0)
			return n;
	}
}

/* NAME/i's recorded file rel (under proc/) into *io; false when not recorded. */
static bool recorded_io(const char *name, int i, pid_t pid, struct vt_proc_io *io)
{
	char rel[256], *text;
	size_t len;
	bool ok;

	snprintf(rel, sizeof(rel), "threads/%s/%d/proc/%d/io", name, i, (int)pid);
	if (access(vt_fixture_path(rel), F_OK) != 0)
		return false;
	text = vt_fixture(rel, &len);
	ok = vt_proc_io_parse(text, len, io, NULL) == VT_OK;
	free(text);
	return ok;
}

/* What the sampler measures over the interval: the load at its end, the I/O between its ends. */
static void recorded_host(const char *name, int last, struct vt_threads_rates *r)
{
	struct vt_interval_host h = { .load1 = -1, .cpu_some_s = -1 };
	struct vt_proc_io a, b;
	char rel[256], *text;
	struct vt_loadavg la;
	size_t len;

	snprintf(rel, sizeof(rel), "threads/%s/%d/proc/loadavg", name, last);
	if (access(vt_fixture_path(rel), F_OK) == 0) {
		text = vt_fixture(rel, &len);
		if (vt_loadavg_parse(text, len, &la, NULL) == VT_OK)
			h.load1 = la.load1;
		free(text);
		h.ncpu_online = 2;
	}
	if (recorded_io(name, 0, r->pid, &a) && recorded_io(name, last, r->pid, &b) && b.syscr >= a.syscr &&
	    b.syscw >= a.syscw) {
		h.io_known = true;
		h.syscr = b.syscr - a.syscr;
		h.syscw = b.syscw - a.syscw;
	}
	vt_threads_rates_set_host(r, &h);
}

static int check_pair(const char *name, struct vt_threads_rates *r)
{
	struct vt_threads_sample s[VT_RECORDED_MAX];
	int n = recorded_reads(name), i;
	const struct vt_thread_rate *t;
	char rel[256], *text, *line, *save = NULL;
	struct vt_err err;
	size_t len;
	int lines = 0;

	CHECK(n >= 2 && n <= VT_RECORDED_MAX);
	if (n > VT_RECORDED_MAX)
		n = VT_RECORDED_MAX;
	for (i = 0; i < n; i++)
		take_recorded(name, i, &s[i]);
	CHECK(vt_threads_rates_compute(s, (size_t)n, 2, r, &err) == VT_OK);
	recorded_host(name, n - 1, r);
	snprintf(rel, sizeof(rel), "threads/%s/expect", name);
	text = vt_fixture(rel, &len);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		double v, cores, runq, vol, nonvol;
		int tid;

		lines++;
		if (sscanf(line, "interval_s %lf", &v) == 1) {
			CHECK(near(r->interval_s, v, 1e-9));
		} else if (sscanf(line, "process cores_ticks %lf", &v) == 1) {
			CHECK(near(r->cores_ticks, v, 1e-6));
		} else if (sscanf(line, "thread %d cores %lf runq %lf vol %lf nonvol %lf", &tid, &cores,
				  &runq, &vol, &nonvol) == 5) {
			t = rate_of(r, tid);
			CHECK(t != NULL);
			if (!t)
				continue;
			CHECK(near(t->cpu_cores, cores, 1e-6));
			CHECK(near(t->rate[VT_TC_WAIT_NS], runq, 1e-6));
			CHECK(near(t->rate[VT_TC_VCSW], vol, 1e-6));
			CHECK(near(t->rate[VT_TC_NVCSW], nonvol, 1e-6));
			CHECK_EQ_U64(t->flags & (VT_THREAD_APPEARED | VT_THREAD_EXITED), 0);
		} else if (sscanf(line, "appeared %d", &tid) == 1) {
			t = rate_of(r, tid);
			CHECK(t && (t->flags & VT_THREAD_APPEARED) && t->cpu_cores >= 0 && t->cpu_cores <= 1.05);
		} else if (sscanf(line, "exited %d", &tid) == 1) {
			t = rate_of(r, tid);
			CHECK(t && (t->flags & VT_THREAD_EXITED) && t->cpu_cores >= 0 && t->cpu_cores <= 1.05);
		} else {
			printf("# unknown expect line: %s\n", line);
			CHECK(0);
		}
	}
	free(text);
	for (i = 0; i < n; i++)
		vt_threads_sample_release(&s[i]);
	return lines;
}

/* Four workers on one mutex: the pool, their rates, what they were doing. */
static void test_recorded__lock_convoy(void)
{
	struct vt_threads_rates r;
	size_t i;

	CHECK(check_pair("lock_convoy", &r) >= 7);
	CHECK_STR(r.cores_source, "schedstat");
	CHECK_EQ_U64(r.n, 5);
	CHECK_EQ_U64(r.appeared + r.exited, 0);
	CHECK_EQ_U64(r.npools, 1);
	CHECK(r.npools == 1 && r.pools[0].count == 4 && !strcmp(r.pools[0].name, "worker-"));
	CHECK(r.cores > 0.5 && r.cores < 1.5);           /* about one core: the lock's */
	CHECK(near(r.cores, r.cores_ticks, 0.05));        /* schedstat and ticks agree */
	for (i = 0; i < r.n; i++) {
		const struct vt_thread_rate *t = &r.threads[i];

		CHECK(t->nsamples == 2 && t->wchan_ok && t->syscall_ok);
#ifdef __x86_64__
		/* recorded on x86_64 (the name table comes from the build's kernel header):
		 * the targets' main thread waits for signals in rt_sigtimedwait, 128 */
		if (t->tid == r.pid)
			CHECK_STR(t->syscall, "rt_sigtimedwait");
#endif
	}
	vt_threads_rates_release(&r);
}

/* One thread exited and another started between the reads. */
static void test_recorded__thread_churn(void)
{
	struct vt_threads_rates r;
	struct vt_diagnosis d;

	CHECK(check_pair("thread_churn", &r) >= 5);
	CHECK_EQ_U64(r.appeared, 1);
	CHECK_EQ_U64(r.exited, 1);
	/* an exited thread's last run time is gone: the process stat's ticks count it */
	CHECK_STR(r.cores_source, "stat");
	CHECK(near(r.cores, r.cores_ticks, 1e-12));
	CHECK(r.cores > 0.3 && r.cores <= 1.05);
	vt_diagnose(&r, &d);
	CHECK(d.n >= 1 && d.f[0].kind != VT_DIAG_IDLE);
	/* the two that came and went: the process's CPU minus the two there throughout (expect) */
	CHECK_EQ_U64(r.short_lived, 2);
	CHECK(near(r.short_lived_cores, 0.768736482 - 0.000247799 - 0, 1e-6));
	CHECK(near(r.short_lived_cores + whole_cores(&r), r.cores, 1e-9));
	CHECK(rate_of(&r, 31787) && rate_of(&r, 31787)->cpu_share < 0.01);
	vt_threads_rates_release(&r);
}

/*
 * python3 -m http.server under a request loop (a thread per request): no
 * request thread was there at either read, yet the process used 0.45 cores,
 * the main thread 0.11.  The rest is the short-lived threads', and the main
 * thread's share is of the process.
 */
static void test_recorded__http_server(void)
{
	struct vt_threads_rates r;
	const struct vt_thread_rate *main_thread;

	CHECK(check_pair("http_server", &r) >= 3);
	CHECK_STR(r.cores_source, "stat");           /* schedstat would miss the unseen threads */
	CHECK(near(r.cores, r.cores_ticks, 1e-12));
	CHECK_EQ_U64(r.short_lived, 0);              /* none seen by either read */
	CHECK(near(r.short_lived_cores, 0.445736852 - 0.108733631, 1e-6));
	CHECK(near(r.short_lived_cores + whole_cores(&r), r.cores, 1e-9));
	main_thread = rate_of(&r, r.pid);
	CHECK(main_thread && main_thread->cpu_share < 0.5);
	CHECK(near(r.short_lived_share, 1 - (main_thread ? main_thread->cpu_share : 0), 1e-9));
	vt_threads_rates_release(&r);
}

/* The diagnosis of a recording, printed for the log. */
static void diagnose_recorded(const char *name, struct vt_threads_rates *r, struct vt_diagnosis *d)
{
	char ev[VT_DIAG_EVIDENCE_MAX];
	size_t i;

	CHECK(check_pair(name, r) >= 3);
	vt_diagnose(r, d);
	for (i = 0; i < d->n; i++)
		printf("# %s: %s: %s\n", name, vt_diag_name(d->f[i].kind),
		       vt_render_diag_evidence(&d->f[i], ev, sizeof(ev)));
}

static bool found(const struct vt_diagnosis *d, enum vt_diag_kind k)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		if (d->f[i].kind == k)
			return true;
	return false;
}

/* echo_server under echo_client: connection threads woken ~2,000 times/s by recv(): serving. */
static void test_recorded__echo_server_is_serving(void)
{
	struct vt_threads_rates r;
	struct vt_diagnosis d;

	diagnose_recorded("echo_server", &r, &d);
	CHECK(!found(&d, VT_DIAG_BUSY_POLL));
	CHECK(found(&d, VT_DIAG_SERVING));
	vt_threads_rates_release(&r);
}

/* lock_convoy at its defaults beside a hog on every core (core_contention --threads 2): still a convoy, no core contention. */
static void test_recorded__convoy_beside_a_hog(void)
{
	struct vt_threads_rates r;
	struct vt_diagnosis d;

	diagnose_recorded("lock_convoy_loaded", &r, &d);
	CHECK(found(&d, VT_DIAG_CONVOY));
	CHECK(!found(&d, VT_DIAG_CONTENTION));
	CHECK(r.others_runnable >= 1);
	vt_threads_rates_release(&r);
}

/* One burning thread beside the hog: the host is busy; its own threads do not contend. */
static void test_recorded__burner_beside_a_hog(void)
{
	struct vt_threads_rates r;
	struct vt_diagnosis d;

	diagnose_recorded("burner_loaded", &r, &d);
	CHECK(found(&d, VT_DIAG_HOST_BUSY));
	CHECK(!found(&d, VT_DIAG_CONTENTION));
	vt_threads_rates_release(&r);
}

VT_TEST_MAIN(test_recorded__echo_server_is_serving, test_recorded__convoy_beside_a_hog,
	     test_recorded__burner_beside_a_hog, test_recorded__lock_convoy, test_recorded__thread_churn, test_recorded__http_server)

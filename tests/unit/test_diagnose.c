/*
 * test_diagnose.c — the thread diagnosis rules on the cases that misfired
 * on real servers and busy hosts (issue 12), as interval rates: a blocking
 * recv() woken by data and http.server's accept loop are serving, not busy
 * polls; a poll on a 1 ms timeout, a sleep loop and a ppoll that reads
 * nothing are busy polls; run-queue wait behind other processes is a busy
 * host, not core contention; a convoy on a loaded host is still a convoy.
 * The figures are the ones measured in the runs.
 */
#include "harness.h"

#include <math.h>
#include <string.h>

#include "analyze/diagnose.h"
#include "analyze/wait_kind.h"
#include "render/threads.h"

static const char *evidence(const struct vt_diag_finding *f)
{
	static char buf[VT_DIAG_EVIDENCE_MAX];

	return vt_render_diag_evidence(f, buf, sizeof(buf));
}

/* A process of n zeroed threads over 3 s on a quiet 2-CPU host (no other task runnable). */
static void quiet(struct vt_threads_rates *r, struct vt_thread_rate *t, size_t n)
{
	memset(r, 0, sizeof(*r));
	memset(t, 0, sizeof(*t) * n);
	r->ncpu = 2;
	r->usable_cores = 2;
	r->interval_s = 3;
	r->threads = t;
	r->n = n;
	r->load1 = r->host_cpu_some = -1;
	r->host_ncpu = 2;
}

/* Thread i: name, CPU, wakeups/s, seen sleeping in wchan / syscall in every sample. */
static void sleeper(struct vt_thread_rate *t, const char *comm, double cores, double vol,
		    const char *wchan, const char *call)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->comm, sizeof(t->comm), "%s", comm);
	t->tid = 100 + (pid_t)(t->comm[0]);
	t->cpu_cores = cores;
	t->runq_share = 0;
	t->vol_per_s = vol;
	t->nonvol_per_s = vol / 50;
	t->nsamples = 30;
	t->states[VT_STATE_S] = 30;
	t->wchan_ok = t->syscall_ok = true;
	snprintf(t->wchan, sizeof(t->wchan), "%s", wchan);
	t->wchan_count = wchan[0] ? 30 : 0;
	snprintf(t->syscall, sizeof(t->syscall), "%s", call);
	t->syscall_count = call[0] ? 30 : 0;
}

static bool has(const struct vt_diagnosis *d, enum vt_diag_kind k)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		if (d->f[i].kind == k)
			return true;
	return false;
}

static const struct vt_diag_finding *find(const struct vt_diagnosis *d, enum vt_diag_kind k)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		if (d->f[i].kind == k)
			return &d->f[i];
	return NULL;
}

/* recv() woken by data ~3,900 times/s, 58 µs of copying each: serving (was "busy poll"). */
static void test_diagnose__blocking_recv_is_serving(void)
{
	struct vt_threads_rates r;
	struct vt_thread_rate t[2];
	struct vt_diagnosis d;

	quiet(&r, t, 2);
	sleeper(&t[0], "main", 0, 1, "do_sigtimedwait", "rt_sigtimedwait");
	sleeper(&t[1], "conn-0", 0.226, 3900, "wait_woken", "recvfrom");
	r.cores = 0.226;
	vt_diagnose(&r, &d);
	CHECK(!has(&d, VT_DIAG_BUSY_POLL));
	CHECK(has(&d, VT_DIAG_SERVING));
	CHECK(find(&d, VT_DIAG_SERVING)->wake.wait == VT_WAIT_DATA);
	CHECK(strstr(evidence(find(&d, VT_DIAG_SERVING)), "woken by data or connections") != NULL);
	printf("# %s: %s\n", vt_diag_name(d.f[0].kind), evidence(&d.f[0]));
}

/* http.server's accept loop: poll(fds, 1, 500) woken 1,903 times/s, 42.6 µs each: serving. */
static void test_diagnose__accept_loop_woken_faster_than_its_timeout(void)
{
	struct vt_threads_rates r;
	struct vt_thread_rate t[1];
	struct vt_diagnosis d;

	quiet(&r, t, 1);
	sleeper(&t[0], "python3", 0.081, 1903, "poll_schedule_timeout.constprop.0", "poll");
	t[0].timed = 30;
	t[0].timeout_min_ms = 500;
	r.cores = 0.081;
	vt_diagnose(&r, &d);
	CHECK(!has(&d, VT_DIAG_BUSY_POLL));
	CHECK(has(&d, VT_DIAG_SERVING));
	CHECK(strstr(evidence(find(&d, VT_DIAG_SERVING)), "far more often than its 500 ms timeout") != NULL);
	printf("# %s: %s\n", vt_diag_name(d.f[0].kind), evidence(&d.f[0]));
}

/* The pollers: a 1 ms poll timeout, a nanosleep loop, a ppoll whose process reads nothing. */
static void test_diagnose__timeout_driven_pollers(void)
{
	struct vt_threads_rates r;
	struct vt_thread_rate t[1];
	struct vt_diagnosis d;

	quiet(&r, t, 1);
	sleeper(&t[0], "poller", 0.026, 900, "poll_schedule_timeout", "poll");
	t[0].timed = 30;
	t[0].timeout_min_ms = 1;
	r.cores = 0.026;
	vt_diagnose(&r, &d);
	CHECK(d.f[0].kind == VT_DIAG_BUSY_POLL && d.f[0].wake.wait == VT_WAIT_TIMEOUT);
	CHECK(strstr(evidence(&d.f[0]), "with a 1 ms timeout, which accounts for the wakeups") != NULL);

	sleeper(&t[0], "poller", 0.026, 2000, "hrtimer_nanosleep", "clock_nanosleep");
	vt_diagnose(&r, &d);
	CHECK(d.f[0].kind == VT_DIAG_BUSY_POLL && d.f[0].wake.wait == VT_WAIT_TIMER);

	/* ppoll: its timeout is behind a pointer; the process made 1 read/write call a second */
	sleeper(&t[0], "poller", 0.026, 2000, "poll_schedule_timeout", "ppoll");
	r.io_known = true;
	r.syscw_per_s = 1;
	vt_diagnose(&r, &d);
	CHECK(d.f[0].kind == VT_DIAG_BUSY_POLL && d.f[0].wake.wait == VT_WAIT_POLL);
	CHECK(strstr(evidence(&d.f[0]), "0.00 per wakeup") != NULL);

	/* the same ppoll while the process reads and writes twice per wakeup: serving */
	r.syscr_per_s = r.syscw_per_s = 2000;
	vt_diagnose(&r, &d);
	CHECK(d.f[0].kind == VT_DIAG_SERVING);

	/* ... and with its I/O counters unreadable: cannot tell */
	r.io_known = false;
	vt_diagnose(&r, &d);
	CHECK(d.f[0].kind == VT_DIAG_WAKEUPS);
	CHECK(strstr(evidence(&d.f[0]), "cannot tell a busy poll from serving yet") != NULL);

	/* wchan and syscall both unreadable: cannot tell (was "busy poll") */
	sleeper(&t[0], "poller", 0.026, 2000, "", "");
	t[0].wchan_ok = t[0].syscall_ok = false;
	vt_diagnose(&r, &d);
	CHECK(d.f[0].kind == VT_DIAG_WAKEUPS);
	CHECK(strstr(evidence(&d.f[0]), "cannot be read") != NULL);
}

/*
 * 4 threads of 0.25 cores on a host with 3 other tasks runnable: 2.42
 * runnable for 2 usable cores, nonvoluntary 5,090/s > voluntary 3,560/s.
 * The queue is other processes': host busy, not core contention.
 */
static void test_diagnose__busy_host_is_not_core_contention(void)
{
	struct vt_threads_rates r;
	struct vt_thread_rate t[4];
	struct vt_diagnosis d;
	int i;

	quiet(&r, t, 4);
	for (i = 0; i < 4; i++) {
		char name[32];

		snprintf(name, sizeof(name), "w%d", i);
		sleeper(&t[i], name, 0.25, 890, "", "");
		t[i].runq_share = 0.355;
		t[i].nonvol_per_s = 1272.5;
	}
	r.cores = 1.0;
	r.others_runnable = 3;
	r.load1 = 4.1;
	vt_diagnose(&r, &d);
	CHECK(!has(&d, VT_DIAG_CONTENTION));
	CHECK(has(&d, VT_DIAG_HOST_BUSY));
	CHECK(strstr(evidence(find(&d, VT_DIAG_HOST_BUSY)), "host load 4.10 on 2 CPUs") != NULL);
	printf("# %s\n", evidence(find(&d, VT_DIAG_HOST_BUSY)));

	/* the same on a quiet host: every queued second is behind its own threads */
	r.others_runnable = 0;
	for (i = 0; i < 4; i++)
		t[i].runq_share = 0.4;
	r.cores = 2;
	for (i = 0; i < 4; i++)
		t[i].cpu_cores = 0.5;
	vt_diagnose(&r, &d);
	CHECK(has(&d, VT_DIAG_CONTENTION) && !has(&d, VT_DIAG_HOST_BUSY));
}

/* 4 spinners on 2 CPUs beside a hog of 2 spinners: core contention and a busy host. */
static void test_diagnose__spinners_beside_a_hog(void)
{
	struct vt_threads_rates r;
	struct vt_thread_rate t[4];
	struct vt_diagnosis d;
	int i;

	quiet(&r, t, 4);
	for (i = 0; i < 4; i++) {
		char name[32];

		snprintf(name, sizeof(name), "spin-%d", i);
		sleeper(&t[i], name, 1.0 / 3, 0, "", "");
		t[i].runq_share = 2.0 / 3;
		t[i].nonvol_per_s = 300;
		t[i].states[VT_STATE_S] = 0;
		t[i].states[VT_STATE_R] = 30;
	}
	r.cores = 4.0 / 3;
	r.others_runnable = 2;
	vt_diagnose(&r, &d);
	CHECK(has(&d, VT_DIAG_CONTENTION));
	CHECK(has(&d, VT_DIAG_HOST_BUSY));
	CHECK(strstr(evidence(find(&d, VT_DIAG_CONTENTION)), "behind its own threads") != NULL);
}

/*
 * A convoy on a loaded host: 4 workers of 0.25 cores, asleep (on the
 * futex) in 35% of their samples and queued in much of the rest.  Of the
 * time off a CPU only 47% was futex wait, of the time asleep 95%.
 */
static void test_diagnose__convoy_on_a_loaded_host(void)
{
	struct vt_threads_rates r;
	struct vt_thread_rate t[4];
	struct vt_thread_pool pool = { .name = "worker-", .label = "worker-", .indexed = true, .count = 4,
				       .min_cores = 0.24, .max_cores = 0.26 };
	struct vt_diagnosis d;
	int i;

	quiet(&r, t, 4);
	for (i = 0; i < 4; i++) {
		char name[32];

		snprintf(name, sizeof(name), "worker-%d", i);
		sleeper(&t[i], name, 0.25, 220, "futex_do_wait", "futex");
		t[i].runq_share = 0.38;
		t[i].nsamples = 100;
		t[i].states[VT_STATE_S] = 37;
		t[i].states[VT_STATE_R] = 63;
		t[i].wchan_count = t[i].syscall_count = 35;
	}
	r.pools = &pool;
	r.npools = 1;
	r.cores = 1;
	r.others_runnable = 3;
	vt_diagnose(&r, &d);
	CHECK(has(&d, VT_DIAG_CONVOY));
	CHECK(!has(&d, VT_DIAG_CONTENTION));
	printf("# %s\n", evidence(find(&d, VT_DIAG_CONVOY)));
}

VT_TEST_MAIN(test_diagnose__blocking_recv_is_serving, test_diagnose__accept_loop_woken_faster_than_its_timeout,
	     test_diagnose__timeout_driven_pollers, test_diagnose__busy_host_is_not_core_contention,
	     test_diagnose__spinners_beside_a_hog, test_diagnose__convoy_on_a_loaded_host)

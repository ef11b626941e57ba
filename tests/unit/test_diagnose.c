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
#include "sample/threads.h"

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
	t->rate[VT_TC_WAIT_NS] = 0;
	t->rate[VT_TC_VCSW] = vol;
	t->rate[VT_TC_NVCSW] = vol / 50;
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
	t[0].timeout_ms = 500;
	r.cores = 0.081;
	vt_diagnose(&r, &d);
	CHECK(!has(&d, VT_DIAG_BUSY_POLL));
	CHECK(has(&d, VT_DIAG_SERVING));
	CHECK(strstr(evidence(find(&d, VT_DIAG_SERVING)), "far more often than its 500 ms timeout (the median seen)") != NULL);
	printf("# %s: %s\n", vt_diag_name(d.f[0].kind), evidence(&d.f[0]));
}

/*
 * redis under a loaded host: epoll_wait given the time to its next timer,
 * anything from 0 to 100 ms, woken by data 1,900 times/s at 160 µs each.
 * The shortest timeout among 300 sleeping samples is 0 or 1 ms, which made
 * the wakeups look timeout-driven and the serving verdict vanish (CI, with
 * the hog); the median does not fall with the number of samples.
 */
static void test_diagnose__event_loop_timer_deadlines(void)
{
	struct vt_timeout_tally tally;
	struct vt_threads_rates r;
	struct vt_thread_rate t[1];
	struct vt_diagnosis d;
	int64_t shortest = -1;
	int i;

	memset(&tally, 0, sizeof(tally));
	CHECK(vt_timeout_tally_median(&tally) == -1);
	for (i = 0; i < 300; i++) {
		int64_t ms = (i * 37) % 101;   /* 0..100, evenly */

		vt_timeout_tally_add(&tally, ms);
		if (shortest < 0 || ms < shortest)
			shortest = ms;
	}
	CHECK(shortest == 0);
	CHECK(vt_timeout_tally_median(&tally) >= 32 && vt_timeout_tally_median(&tally) <= 64);

	quiet(&r, t, 1);
	sleeper(&t[0], "redis-server", 0.304, 1900, "do_epoll_wait", "epoll_wait");
	t[0].timed = 300;
	t[0].timeout_ms = vt_timeout_tally_median(&tally);
	r.cores = 0.304;
	vt_diagnose(&r, &d);
	CHECK(has(&d, VT_DIAG_SERVING) && !has(&d, VT_DIAG_BUSY_POLL));
	printf("# %s: %s\n", vt_diag_name(d.f[0].kind), evidence(&d.f[0]));

	/* the shortest one would have called it timeout-driven, and lost the verdict */
	t[0].timeout_ms = shortest;
	vt_diagnose(&r, &d);
	CHECK(!has(&d, VT_DIAG_SERVING));

	/* a poller whose timeouts are all alike: the median is that timeout, exactly */
	memset(&tally, 0, sizeof(tally));
	for (i = 0; i < 40; i++)
		vt_timeout_tally_add(&tally, 5);
	vt_timeout_tally_add(&tally, -1);      /* not a timeout: not counted */
	CHECK(vt_timeout_tally_median(&tally) == 5);
	vt_timeout_tally_add(&tally, (int64_t)1 << 40);   /* past the last octave: counted there */
	CHECK(vt_timeout_tally_median(&tally) == 5);
}

/*
 * redis under redis-benchmark, sampled 31 times in 3 s: running in 30, and
 * the one sleeping read found it running again (no wchan, no system call).
 * Woken 5,606 times/s while the process made 2 read/write calls per wakeup:
 * serving, on the quiet host (132 µs a wakeup) and under a hog (60 µs) alike
 * (was: nothing, or "cannot tell", as the CPU per wakeup fell either side
 * of 100 µs).  Never a busy poll unseen; without I/O, cannot tell.
 */
static void test_diagnose__waits_too_short_to_see(void)
{
	struct vt_threads_rates r;
	struct vt_thread_rate t[1];
	struct vt_diagnosis d;
	size_t k;

	for (k = 0; k < 2; k++) {
		double cores = k ? 0.336 : 0.740;

		quiet(&r, t, 1);
		sleeper(&t[0], "redis-server", cores, 5606, "", "");
		t[0].states[VT_STATE_R] = 30;
		t[0].nsamples = 31;
		t[0].states[VT_STATE_S] = 1;
		r.cores = cores;
		r.io_known = true;
		r.syscr_per_s = r.syscw_per_s = 5606;
		vt_diagnose(&r, &d);
		CHECK(has(&d, VT_DIAG_SERVING) && !has(&d, VT_DIAG_BUSY_POLL) && !has(&d, VT_DIAG_WAKEUPS));
		CHECK(has(&d, VT_DIAG_SERVING) && strstr(evidence(find(&d, VT_DIAG_SERVING)),
			     "too short to be seen (asleep in 1 of 31 samples); the process made 11212 read/write "
			     "calls/s, 2.00 per wakeup: woken by work") != NULL);
		if (d.n)
			printf("# %s: %s\n", vt_diag_name(d.f[0].kind), evidence(&d.f[0]));

		/* the process moved nothing: it cannot be told, and it is never a busy poll */
		r.syscr_per_s = r.syscw_per_s = 0;
		vt_diagnose(&r, &d);
		CHECK(!has(&d, VT_DIAG_SERVING) && !has(&d, VT_DIAG_BUSY_POLL));
		CHECK(has(&d, VT_DIAG_WAKEUPS) == (k == 1));
	}
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
	t[0].timeout_ms = 1;
	r.cores = 0.026;
	vt_diagnose(&r, &d);
	CHECK(d.f[0].kind == VT_DIAG_BUSY_POLL && d.f[0].wake.wait == VT_WAIT_TIMEOUT);
	CHECK(strstr(evidence(&d.f[0]), "with a 1 ms timeout (the median seen), which accounts for the wakeups") != NULL);

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
 * Field report 000's "idle CPU burn": a 1 ms poll loop on a loaded host got
 * 0.9-1.4% of a core, so 900 wakeups/s at 0.0094 cores were called "idle"
 * (the idle rule returned before any wakeup rule ran).  Idle is what is left.
 */
static void test_diagnose__poller_under_a_hundredth_of_a_core(void)
{
	struct vt_threads_rates r;
	struct vt_thread_rate t[2];
	struct vt_diagnosis d;

	quiet(&r, t, 2);
	sleeper(&t[0], "main", 0, 0.3, "do_sigtimedwait", "rt_sigtimedwait");
	sleeper(&t[1], "poller", 0.0094, 900, "poll_schedule_timeout", "poll");
	t[1].timed = 30;
	t[1].timeout_ms = 1;
	r.cores = 0.0094;
	vt_diagnose(&r, &d);
	CHECK(has(&d, VT_DIAG_BUSY_POLL) && !has(&d, VT_DIAG_IDLE));
	if (has(&d, VT_DIAG_BUSY_POLL))
		printf("# %s\n", evidence(find(&d, VT_DIAG_BUSY_POLL)));
	/* the same process with its poller waking 5 times a second: idle */
	t[1].rate[VT_TC_VCSW] = 5;
	t[1].cpu_cores = 0.0001;
	r.cores = 0.0001;
	vt_diagnose(&r, &d);
	CHECK(d.n == 1 && d.f[0].kind == VT_DIAG_IDLE);
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
		t[i].rate[VT_TC_WAIT_NS] = 0.355;
		t[i].rate[VT_TC_NVCSW] = 1272.5;
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
		t[i].rate[VT_TC_WAIT_NS] = 0.4;
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
		t[i].rate[VT_TC_WAIT_NS] = 2.0 / 3;
		t[i].rate[VT_TC_NVCSW] = 300;
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
		t[i].rate[VT_TC_WAIT_NS] = 0.38;
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

/*
 * The same convoy with a hog on every core beside it (t0320 under make
 * test-loaded): the workers queue for a CPU 65% of the time and hand the
 * lock over 90 times a second each, not 112-120; over the time they were
 * not queued that is 257/s, still a convoy.  A pool that wakes 90 times a
 * second on an idle host is not.
 */
static void test_diagnose__convoy_slowed_by_a_busy_host(void)
{
	struct vt_threads_rates r;
	struct vt_thread_rate t[4];
	struct vt_thread_pool pool = { .name = "worker-", .label = "worker-", .indexed = true, .count = 4,
				       .min_cores = 0.11, .max_cores = 0.12 };
	struct vt_diagnosis d;
	int i, pass;

	for (pass = 0; pass < 2; pass++) {
		bool loaded = pass == 0;

		quiet(&r, t, 4);
		for (i = 0; i < 4; i++) {
			char name[32];

			snprintf(name, sizeof(name), "worker-%d", i);
			sleeper(&t[i], name, 0.115, 90, "futex_do_wait", "futex");
			t[i].rate[VT_TC_WAIT_NS] = loaded ? 0.65 : 0;
			t[i].nsamples = 100;
			t[i].states[VT_STATE_S] = loaded ? 30 : 85;
			t[i].states[VT_STATE_R] = loaded ? 70 : 15;
			t[i].wchan_count = t[i].syscall_count = loaded ? 28 : 80;
		}
		r.pools = &pool;
		r.npools = 1;
		r.cores = 0.46;
		r.others_runnable = loaded ? 9.5 : 0;
		vt_diagnose(&r, &d);
		CHECK(has(&d, VT_DIAG_CONVOY) == loaded);
		if (loaded && has(&d, VT_DIAG_CONVOY))
			printf("# %s\n", evidence(find(&d, VT_DIAG_CONVOY)));
	}
}

/*
 * Issue 26: 4 workers taking turns on one mutex with a hog beside them want
 * 2.86 CPUs by their CPU over the time not queued (0.25 / 0.35), so without
 * the locks they were called core contention.  With the locks read, they
 * sleep on a contended mutex in 28 of the 30 samples they were off a CPU:
 * lock-bound, no core contention, and the convoy names its lock.  The same
 * figures on a condition variable are a pool waiting for work: no convoy.
 */
static void convoy_locks(struct vt_locks *l, struct vt_lock *k, enum vt_lock_kind kind, const struct vt_thread_rate *t)
{
	int i;

	memset(l, 0, sizeof(*l));
	memset(k, 0, sizeof(*k));
	k->addr = 0x5000;
	k->kind = kind;
	k->place = VT_LOCK_AT_SYMBOL;
	snprintf(k->symbol, sizeof(k->symbol), "convoy_lock");
	snprintf(k->module, sizeof(k->module), "lock_convoy");
	for (i = 0; i < 4; i++) {
		k->waiters[i].tid = t[i].tid;
		k->waiters[i].n = 28;
	}
	k->nwaiters = 4;
	k->waits = 112;
	k->samples = 100;
	k->owner_reads = kind == VT_LOCK_MUTEX ? 100 : 0;
	k->holders[0] = (struct vt_lock_thread){ .tid = t[2].tid, .comm = "worker-2", .n = 100, .running = 90 };
	k->nholders = kind == VT_LOCK_MUTEX;
	l->v = k;
	l->n = 1;
	l->samples = 100;
	l->thread_samples = 500;
}

static void test_diagnose__convoy_with_its_lock_is_no_core_contention(void)
{
	struct vt_threads_rates r;
	struct vt_thread_rate t[4];
	struct vt_thread_pool pool = { .name = "worker-", .label = "worker-", .indexed = true, .count = 4,
				       .min_cores = 0.24, .max_cores = 0.26 };
	struct vt_locks locks;
	struct vt_lock lock;
	struct vt_diagnosis d;
	int i, pass;

	for (pass = 0; pass < 3; pass++) {
		quiet(&r, t, 4);
		for (i = 0; i < 4; i++) {
			char name[32];

			snprintf(name, sizeof(name), "worker-%d", i);
			sleeper(&t[i], name, 0.25, 150, "futex_do_wait", "futex");
			t[i].tid = 200 + i;
			t[i].rate[VT_TC_WAIT_NS] = 0.65;
			t[i].rate[VT_TC_NVCSW] = 200;
			t[i].nsamples = 100;
			t[i].states[VT_STATE_S] = 30;
			t[i].states[VT_STATE_R] = 70;
			t[i].wchan_count = t[i].syscall_count = 28;
		}
		r.pools = &pool;
		r.npools = 1;
		r.cores = 1;
		r.others_runnable = 2;
		if (pass > 0) {
			convoy_locks(&locks, &lock, pass == 1 ? VT_LOCK_MUTEX : VT_LOCK_CONDVAR, t);
			r.locks = &locks;
		}
		vt_diagnose(&r, &d);
		if (pass == 0) {
			/* without the locks: the misreading the issue reports */
			CHECK(has(&d, VT_DIAG_CONTENTION));
		} else if (pass == 1) {
			CHECK(!has(&d, VT_DIAG_CONTENTION));
			CHECK(has(&d, VT_DIAG_CONVOY));
			CHECK(find(&d, VT_DIAG_CONVOY) && find(&d, VT_DIAG_CONVOY)->convoy.lock == &lock);
			CHECK(strstr(evidence(find(&d, VT_DIAG_CONVOY)), "on convoy_lock (lock_convoy), a mutex") != NULL);
			CHECK(strstr(evidence(find(&d, VT_DIAG_CONVOY)), "held by worker-2 (202) 100%") != NULL);
			printf("# %s\n", evidence(find(&d, VT_DIAG_CONVOY)));
		} else {
			CHECK(!has(&d, VT_DIAG_CONVOY));
		}
	}
}

/* A listener whose queue never emptied over 30 reads: an accept stall, never "idle" beside it. */
static void test_diagnose__accept_stall(void)
{
	struct vt_threads_rates r;
	struct vt_thread_rate t[2];
	struct vt_diagnosis d;
	const struct vt_diag_finding *f;

	quiet(&r, t, 2);
	sleeper(&t[0], "main", 0, 1, "do_sigtimedwait", "rt_sigtimedwait");
	sleeper(&t[1], "acceptor", 0.002, 98, "hrtimer_nanosleep", "clock_nanosleep");
	r.cores = 0.002;
	r.listen_reads = 30;
	r.nlisten = 2;
	r.listen[0] = (struct vt_rates_listener){ "[::1]:8080", 0, 3, 128 };
	r.listen[1] = (struct vt_rates_listener){ "127.0.0.1:8080", 7, 21, 128 };
	vt_diagnose(&r, &d);
	f = find(&d, VT_DIAG_ACCEPT_STALL);
	CHECK(f != NULL && !has(&d, VT_DIAG_IDLE));
	if (f) {
		CHECK(!strcmp(f->stall.l.address, "127.0.0.1:8080") && f->stall.listeners == 1);
		CHECK(strstr(evidence(f), "127.0.0.1:8080 had connections waiting for accept() at all 30 reads "
				     "over 3.0 s (7 to 21 waiting, backlog 128)") != NULL);
		printf("# %s\n", evidence(f));
	}
	/* emptied once: a server that keeps up, and at 0.002 cores an idle one */
	r.listen[1].min_queue = 0;
	vt_diagnose(&r, &d);
	CHECK(!has(&d, VT_DIAG_ACCEPT_STALL) && has(&d, VT_DIAG_IDLE));
	/* too few reads, or too short, to tell */
	r.listen[1].min_queue = 7;
	r.listen_reads = 2;
	vt_diagnose(&r, &d);
	CHECK(!has(&d, VT_DIAG_ACCEPT_STALL));
	r.listen_reads = 30;
	r.interval_s = 0.5;
	vt_diagnose(&r, &d);
	CHECK(!has(&d, VT_DIAG_ACCEPT_STALL));
	/* over a recording (analyze): the stalls stalls.c found; the run is not "idle" */
	r.listen[1].min_queue = 0;
	r.recorded_stalls = 5;
	r.recorded_stall_s = 21.5;
	vt_diagnose(&r, &d);
	f = find(&d, VT_DIAG_ACCEPT_STALL);
	CHECK(f != NULL && !has(&d, VT_DIAG_IDLE));
	if (f)
		CHECK(strstr(evidence(f), "5 accept-queue stalls, 21.5 s in all") != NULL);
	r.recorded_stalls = 0;
	r.recorded_stall_s = 0;
	r.listen[1].min_queue = 7;
	/* blocked on I/O and stalled: both said, not idle */
	r.interval_s = 3;
	t[1].states[VT_STATE_S] = 0;
	t[1].states[VT_STATE_D] = 30;
	vt_diagnose(&r, &d);
	CHECK(has(&d, VT_DIAG_ACCEPT_STALL) && has(&d, VT_DIAG_IO) && !has(&d, VT_DIAG_IDLE));
}

VT_TEST_MAIN(test_diagnose__accept_stall, test_diagnose__convoy_with_its_lock_is_no_core_contention, test_diagnose__blocking_recv_is_serving, test_diagnose__accept_loop_woken_faster_than_its_timeout,
	     test_diagnose__event_loop_timer_deadlines, test_diagnose__waits_too_short_to_see,
	     test_diagnose__timeout_driven_pollers, test_diagnose__busy_host_is_not_core_contention,
	     test_diagnose__spinners_beside_a_hog, test_diagnose__convoy_on_a_loaded_host,
	     test_diagnose__convoy_slowed_by_a_busy_host,
	     test_diagnose__poller_under_a_hundredth_of_a_core)

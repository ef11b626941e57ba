/*
 * diagnose.c — rules over interval rates (see diagnose.h).  Reads nothing,
 * writes no sentence: each finding keeps the figures its rule used.
 */
#include "analyze/diagnose.h"
#include "base/unknown.h"

#include "proc/procfs.h"
#include "sample/threads.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *vt_diag_name(enum vt_diag_kind k)
{
	switch (k) {
	case VT_DIAG_IDLE: return "idle";
	case VT_DIAG_CONTENTION: return "core contention";
	case VT_DIAG_CONVOY: return "lock convoy";
	case VT_DIAG_BUSY_POLL: return "busy poll";
	case VT_DIAG_IO: return "blocked on I/O";
	case VT_DIAG_THROTTLED: return "CPU throttled";
	case VT_DIAG_HOST_BUSY: return "host busy";
	case VT_DIAG_SERVING: return "serving";
	case VT_DIAG_WAKEUPS: return "frequent wakeups";
	case VT_DIAG_ACCEPT_STALL: return "accept stall";
	case VT_DIAG_STOPPED: return "stopped";
	case VT_DIAG_NONE: break;
	}
	return "no pattern";
}

static struct vt_diag_finding *add(struct vt_diagnosis *d, enum vt_diag_kind kind)
{
	struct vt_diag_finding *f;

	if (d->n >= VT_DIAG_MAX)
		return NULL;
	f = &d->f[d->n++];
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	return f;
}

/* What a finding says of thread t: its name, and the wchan and system call it was seen in most. */
static void name_thread(const struct vt_thread_rate *t, struct vt_diag_thread *out)
{
	out->tid = t->tid;
	snprintf(out->comm, sizeof(out->comm), "%s", t->comm);
	snprintf(out->wchan, sizeof(out->wchan), "%s", t->wchan_count ? t->wchan : "");
	snprintf(out->syscall, sizeof(out->syscall), "%s", t->syscall_count ? t->syscall : "");
}

static bool futex_wchan(const struct vt_thread_rate *t)
{
	return t->wchan_count && strstr(t->wchan, "futex");
}

/* In D state (uninterruptible, usually I/O) in a good part of its samples. */
static bool mostly_blocked(const struct vt_thread_rate *t)
{
	return t->nsamples >= VT_DIAG_IO_MIN_SAMPLES &&
	       (double)t->states[2] / t->nsamples >= VT_DIAG_IO_SHARE;   /* 'D' */
}

static double pos(double v)
{
	return v > 0 ? v : 0;
}

/*
 * Of the time its threads waited on a run queue, the part spent behind its
 * own other threads.  A waiting thread competes with the process's other
 * runnable threads (runnable - 1 on average) and with every other task
 * runnable on the host; the queue time is split in that proportion.
 */
static double own_runq(const struct vt_threads_rates *r, double runnable, double runq)
{
	double own = runnable - 1;

	if (own <= 0)
		return 0;
	return runq * own / (own + r->others_runnable);
}

/*
 * The CPU a thread would use if it never waited for one: a thread that
 * runs c and sleeps s of each cycle runs c / (c + s) of the time when it
 * does not queue, and c + s is the time it did not spend queued.  A
 * spinner wants a whole CPU however busy the host; a thread that ran 25%
 * and queued 35% on a loaded host wants 38%.
 */
static double wants(const struct vt_thread_rate *t)
{
	double not_queued = 1 - pos(t->rate[VT_TC_WAIT_NS]);

	return not_queued > 0.01 ? fmin(1, pos(t->cpu_cores) / not_queued) : 1;
}

/*
 * A thread that sleeps on a contended lock (a mutex, a rwlock, glibc's own
 * lock, the GIL) in at least half the samples it was not running: its CPU
 * is bounded by the lock, not by the cores, whatever the run queue does.
 * False when the locks were not read.
 */
static bool lock_bound(const struct vt_threads_rates *r, const struct vt_thread_rate *t)
{
	unsigned off_cpu = t->nsamples > t->states[VT_STATE_R] ? t->nsamples - t->states[VT_STATE_R] : 0;

	return r->locks && off_cpu > 0 &&
	       vt_locks_contended_waits_of(r->locks, t->tid) >= VT_DIAG_LOCK_BOUND * off_cpu;
}

/*
 * Core contention: its own threads want more CPUs than it may use, and
 * they queue and are preempted for it.  The host is busy: its threads
 * queued behind other processes' tasks.  On a loaded host the run-queue
 * wait of a process that wants less than its cores is the host's, which
 * the per-thread CPU over the time not queued tells apart.
 */
static void rule_contention(const struct vt_threads_rates *r, struct vt_diagnosis *d)
{
	double runnable = 0, demand = 0, runq = 0, vol = 0, nonvol = 0, mine = -1;
	struct vt_diag_finding *f;
	size_t i;

	for (i = 0; i < r->n; i++) {
		const struct vt_thread_rate *t = &r->threads[i];

		/* runnable = on a CPU or waiting for one, over the interval */
		runnable += pos(t->cpu_cores) + pos(t->rate[VT_TC_WAIT_NS]);
		/* threads that take turns on a lock want the lock, not more cores */
		if (!lock_bound(r, t))
			demand += wants(t);
		runq += pos(t->rate[VT_TC_WAIT_NS]);
		vol += pos(t->rate[VT_TC_VCSW]);
		nonvol += pos(t->rate[VT_TC_NVCSW]);
	}
	if (r->others_runnable >= 0)
		mine = own_runq(r, runnable, runq);
	if (r->usable_cores > 0 && demand > r->usable_cores + VT_DIAG_CONTENTION_MARGIN &&
	    runq >= VT_DIAG_RUNQ_HIGH && nonvol > vol && (f = add(d, VT_DIAG_CONTENTION))) {
		f->contention.runnable = runnable;
		f->contention.demand = demand;
		f->contention.usable_cores = r->usable_cores;
		f->contention.runq_per_s = runq;
		f->contention.own_runq_per_s = mine;
		f->contention.others_runnable = r->others_runnable;
		f->contention.nonvol_per_s = nonvol;
		f->contention.vol_per_s = vol;
	}
	if (mine >= 0 && runq - mine >= VT_DIAG_RUNQ_HIGH && (f = add(d, VT_DIAG_HOST_BUSY))) {
		f->host_busy.runq_per_s = runq;
		f->host_busy.host_runq_per_s = runq - mine;
		f->host_busy.own_runnable = runnable;
		f->host_busy.others_runnable = r->others_runnable;
		f->host_busy.load1 = r->load1;
		f->host_busy.host_ncpu = r->host_ncpu;
		f->host_busy.cpu_some = r->host_cpu_some;
		f->host_busy.cores = pos(r->cores);
	}
}

/* Whether thread t is a member of pool pl (there throughout). */
static bool pool_member(const struct vt_thread_pool *pl, const struct vt_thread_rate *t)
{
	size_t klen = strlen(pl->name);

	return !strncmp(t->comm, pl->name, klen) && vt_threads_pool_key_len(t->comm) == klen &&
	       !(t->flags & (VT_THREAD_APPEARED | VT_THREAD_EXITED));
}

/* The lock pool pl's members waited on most, and its share of their lock waits; NULL
 * when the locks were not read or they waited on none. */
static const struct vt_lock *pool_lock(const struct vt_threads_rates *r, const struct vt_thread_pool *pl,
				       double *share)
{
	const struct vt_lock *best = NULL;
	unsigned best_n = 0, all = 0;
	size_t k, i;

	*share = 0;
	if (!r->locks)
		return NULL;
	for (k = 0; k < r->locks->n; k++) {
		const struct vt_lock *lk = &r->locks->v[k];
		unsigned n = 0;

		for (i = 0; i < r->n; i++)
			if (pool_member(pl, &r->threads[i]))
				n += vt_lock_waits_of(lk, r->threads[i].tid);
		all += n;
		if (n > best_n) {
			best = lk;
			best_n = n;
		}
	}
	*share = all ? (double)best_n / all : 0;
	return best;
}

static bool rule_convoy(const struct vt_threads_rates *r, struct vt_diagnosis *d)
{
	size_t p, i;

	for (p = 0; p < r->npools; p++) {
		const struct vt_thread_pool *pl = &r->pools[p];
		size_t members = 0;
		unsigned samples = 0, futex = 0, asleep = 0;
		double vol = 0, runq = 0, futex_share, futex_active, lock_share = 0;
		const struct vt_lock *lock;
		struct vt_diag_finding *f;

		if (pl->count < VT_DIAG_CONVOY_MIN)
			continue;
		for (i = 0; i < r->n; i++) {
			const struct vt_thread_rate *t = &r->threads[i];

			if (!pool_member(pl, t))
				continue;      /* a pool is of the threads there throughout */
			members++;
			samples += t->nsamples;
			asleep += t->states[VT_STATE_S];
			runq += pos(t->rate[VT_TC_WAIT_NS]);
			if (futex_wchan(t))
				futex += t->wchan_count;
			vol += pos(t->rate[VT_TC_VCSW]);
		}
		if (!members || !samples)
			continue;
		vol /= (double)members;
		/* near-equal: spread within a quarter of the busiest, and they do use CPU */
		if (pl->max_cores < 0.01 || pl->max_cores - pl->min_cores > 0.25 * pl->max_cores + 0.02)
			continue;
		/*
		 * In a convoy, whoever is not running the critical section waits on
		 * the lock: the futex share is taken of the samples in which they
		 * slept (state S).  /proc shows R both on a CPU and queued for one,
		 * so on a busy host a share of the time off a CPU would count the
		 * run-queue wait as time the lock should have taken.
		 */
		futex_share = asleep ? fmin(1, (double)futex / asleep) : 0;
		/* and the lock takes a good part of the time they do not queue for a CPU */
		runq /= (double)members;
		futex_active = runq < 0.99 ? (double)futex / samples / (1 - runq) : 0;
		/*
		 * The handoffs are counted over the time they did not queue for a
		 * CPU: a busy host slows every handoff, not the convoy (4 workers at
		 * 112-120 switches/s each on a loaded host, 89-91/s with a hog on
		 * every core beside them, queued 65% of the time).  At most 4x.
		 */
		if (futex_share < VT_DIAG_CONVOY_FUTEX || futex_active < VT_DIAG_CONVOY_FUTEX_ACTIVE ||
		    vol / fmax(1 - runq, 0.25) < VT_DIAG_CONVOY_VOL)
			continue;
		/* with the locks read: a pool waiting on a condition variable or a semaphore waits
		 * for work, it is no convoy */
		lock = pool_lock(r, pl, &lock_share);
		if (lock && !vt_lock_kind_contended(lock->kind) && !lock->python_gil)
			continue;
		f = add(d, VT_DIAG_CONVOY);
		if (f) {
			f->convoy.lock = lock;
			f->convoy.lock_share = lock_share;
			f->convoy.lock_waiting = lock && r->locks->samples ? (double)lock->waits / r->locks->samples : 0;
			snprintf(f->convoy.pool, sizeof(f->convoy.pool), "%s", pl->name);
			f->convoy.members = pl->count;
			f->convoy.min_cores = pl->min_cores;
			f->convoy.max_cores = pl->max_cores;
			f->convoy.futex_share = (double)futex / samples;
			f->convoy.futex_sleep_share = futex_share;
			f->convoy.vol_per_s = vol;
		}
		return true;
	}
	return false;
}

/* What a wake finding says of thread t. */
static void wake_figures(const struct vt_threads_rates *r, const struct vt_thread_rate *t,
			 enum vt_wait_kind wait, struct vt_diag_finding *f)
{
	name_thread(t, &f->wake.t);
	f->wake.wchan_ok = t->wchan_ok;
	f->wake.syscall_ok = t->syscall_ok;
	f->wake.wait = wait;
	f->wake.timeout_ms = t->timed ? t->timeout_ms : -1;
	f->wake.wakeups_per_s = t->rate[VT_TC_VCSW];
	f->wake.cpu_us = pos(t->cpu_cores) / t->rate[VT_TC_VCSW] * 1e6;
	f->wake.cores = pos(t->cpu_cores);
	f->wake.io_known = r->io_known;
	f->wake.io_calls_per_s = r->io_known ? r->syscr_per_s + r->syscw_per_s : 0;
	f->wake.threads = 1;
	f->wake.samples = t->nsamples;
	f->wake.asleep = t->states[VT_STATE_S] + t->states[VT_STATE_D];
}

/*
 * A thread that wakes often: a busy poll when a timer or a timeout woke it
 * and it did little each time; serving when data or a connection woke it;
 * for a poll whose timeout could not be read, the process's own read and
 * write calls decide (none per wakeup: nothing came); else cannot tell.
 * A thread whose waits are too short to be seen in them (a loaded event
 * loop: asleep in 1 of 31 samples) is serving when the process made a
 * read or write call per wakeup; it is never called a busy poll unseen.
 */
static enum vt_diag_kind wake_verdict(const struct vt_threads_rates *r, const struct vt_thread_rate *t,
				      enum vt_wait_kind wait)
{
	double us = pos(t->cpu_cores) / t->rate[VT_TC_VCSW] * 1e6, io;

	switch (wait) {
	case VT_WAIT_DATA:
		return VT_DIAG_SERVING;
	case VT_WAIT_TIMER:
	case VT_WAIT_TIMEOUT:
		return us < VT_DIAG_POLL_US ? VT_DIAG_BUSY_POLL : VT_DIAG_NONE;
	case VT_WAIT_POLL:
		if (!r->io_known)
			return us < VT_DIAG_POLL_US ? VT_DIAG_WAKEUPS : VT_DIAG_NONE;
		io = (r->syscr_per_s + r->syscw_per_s) / t->rate[VT_TC_VCSW];
		if (io >= 1)
			return VT_DIAG_SERVING;
		if (io < VT_DIAG_POLL_IO_PER_WAKEUP && us < VT_DIAG_POLL_US)
			return VT_DIAG_BUSY_POLL;
		return us < VT_DIAG_POLL_US ? VT_DIAG_WAKEUPS : VT_DIAG_NONE;
	case VT_WAIT_UNKNOWN:
		if (r->io_known && (r->syscr_per_s + r->syscw_per_s) / t->rate[VT_TC_VCSW] >= 1)
			return VT_DIAG_SERVING;
		break;
	}
	return us < VT_DIAG_POLL_US ? VT_DIAG_WAKEUPS : VT_DIAG_NONE;
}

/*
 * Threads woken more than VT_DIAG_POLL_VOL times a second (not on a lock,
 * not mostly in D): the first busy poller, else the first thread that
 * cannot be told; and one serving note for those woken by data, naming
 * the busiest.
 */
static void rule_wakeups(const struct vt_threads_rates *r, struct vt_diagnosis *d)
{
	struct vt_diag_finding *poll = NULL, *unknown = NULL, *serving = NULL;
	const struct vt_thread_rate *busiest = NULL;
	enum vt_wait_kind busiest_wait = VT_WAIT_UNKNOWN;
	size_t i, nserving = 0;

	for (i = 0; i < r->n; i++) {
		const struct vt_thread_rate *t = &r->threads[i];
		enum vt_wait_kind wait;

		if (t->rate[VT_TC_VCSW] < VT_DIAG_POLL_VOL || futex_wchan(t) || mostly_blocked(t))
			continue;
		wait = vt_wait_kind_of(t, t->rate[VT_TC_VCSW]);
		switch (wake_verdict(r, t, wait)) {
		case VT_DIAG_BUSY_POLL:
			if (!poll && (poll = add(d, VT_DIAG_BUSY_POLL)))
				wake_figures(r, t, wait, poll);
			break;
		case VT_DIAG_SERVING:
			nserving++;
			if (!busiest || t->rate[VT_TC_VCSW] > busiest->rate[VT_TC_VCSW]) {
				busiest = t;
				busiest_wait = wait;
			}
			break;
		case VT_DIAG_WAKEUPS:
			if (!unknown && (unknown = add(d, VT_DIAG_WAKEUPS)))
				wake_figures(r, t, wait, unknown);
			break;
		default:
			break;
		}
	}
	if (busiest && (serving = add(d, VT_DIAG_SERVING))) {
		wake_figures(r, busiest, busiest_wait, serving);
		serving->wake.threads = nserving;
	}
}

/* Threads in uninterruptible sleep for a good part of the interval. */
static void rule_io(const struct vt_threads_rates *r, struct vt_diagnosis *d)
{
	struct vt_diag_finding *f = NULL;
	size_t i;

	for (i = 0; i < r->n; i++) {
		const struct vt_thread_rate *t = &r->threads[i];
		size_t k;

		if (!mostly_blocked(t))
			continue;
		if (!f && !(f = add(d, VT_DIAG_IO)))
			return;
		f->io.blocked++;
		if (f->io.shown == VT_DIAG_IO_SHOWN)
			continue;
		k = f->io.shown++;
		name_thread(t, &f->io.t[k].t);
		f->io.t[k].d_share = (double)t->states[2] / t->nsamples;
		f->io.t[k].samples = t->nsamples;
	}
}

/*
 * Every thread stopped (state T: SIGSTOP, Ctrl-Z, a job-control stop; t: a
 * debugger's) in VT_DIAG_STOPPED_SHARE of its samples: the process cannot
 * run, so it is neither idle nor waiting on anything of its own.  True when
 * so (the other rules then have nothing to say).
 */
static bool rule_stopped(const struct vt_threads_rates *r, struct vt_diagnosis *d)
{
	struct vt_diag_finding *f;
	unsigned seen = 0, stopped = 0;
	size_t i;

	for (i = 0; i < r->n; i++) {
		const struct vt_thread_rate *t = &r->threads[i];
		unsigned in_t = t->states[VT_STATE_T];

		if (!t->nsamples || (double)in_t / t->nsamples < VT_DIAG_STOPPED_SHARE)
			return false;
		seen += t->nsamples;
		stopped += in_t;
	}
	if (!seen || !(f = add(d, VT_DIAG_STOPPED)))
		return false;
	f->stopped.threads = r->n;
	f->stopped.share = (double)stopped / seen;
	f->stopped.samples = seen;
	return true;
}

static void rule_throttled(const struct vt_threads_rates *r, struct vt_diagnosis *d)
{
	struct vt_diag_finding *f;

	if (!vt_known(r->periods) || !vt_known(r->throttled_periods) || r->periods == 0 ||
	    (double)r->throttled_periods / (double)r->periods < VT_DIAG_THROTTLED_SHARE)
		return;
	f = add(d, VT_DIAG_THROTTLED);
	if (!f)
		return;
	f->throttled.quota_cores = r->quota_cores;
	snprintf(f->throttled.quota_dir, sizeof(f->throttled.quota_dir), "%s", r->quota_dir);
	f->throttled.throttled_periods = r->throttled_periods;
	f->throttled.periods = r->periods;
	f->throttled.throttled_s = r->throttled_s > 0 ? r->throttled_s : 0;
	f->throttled.interval_s = r->interval_s;
	f->throttled.cores = r->cores;
}

/*
 * A listening socket with connections waiting for accept() at every read
 * of the interval (VT_DIAG_STALL_READS of them over VT_DIAG_STALL_MIN_S at
 * least).  A server that keeps up empties its queue between two reads
 * 100 ms apart; one that stopped accepting does not, nor does one that
 * accepts slower than connections arrive (a CPU-starved python http.server
 * under four clients, t0320).  The queue's length cannot tell the two apart
 * (no per-listener accept count exists), so the finding names the symptom,
 * and its evidence says it is either.
 */
static void rule_accept_stall(const struct vt_threads_rates *r, struct vt_diagnosis *d)
{
	struct vt_diag_finding *f = NULL;
	size_t i;

	if (r->recorded_stalls && (f = add(d, VT_DIAG_ACCEPT_STALL))) {
		f->stall.recorded = r->recorded_stalls;
		f->stall.recorded_s = r->recorded_stall_s;
		f->stall.interval_s = r->interval_s;
		return;
	}
	if (r->listen_reads < VT_DIAG_STALL_READS || r->interval_s < VT_DIAG_STALL_MIN_S)
		return;
	for (i = 0; i < r->nlisten; i++) {
		const struct vt_rates_listener *l = &r->listen[i];

		if (l->min_queue == 0)
			continue;
		if (!f && !(f = add(d, VT_DIAG_ACCEPT_STALL)))
			return;
		if (!f->stall.listeners++ || l->max_queue > f->stall.l.max_queue)
			f->stall.l = *l;
	}
	if (f) {
		f->stall.reads = r->listen_reads;
		f->stall.interval_s = r->interval_s;
	}
}

void vt_diagnose(const struct vt_threads_rates *r, struct vt_diagnosis *out)
{
	struct vt_diag_finding *f;
	bool idle_cpu;

	memset(out, 0, sizeof(*out));
	if (rule_stopped(r, out))
		return;
	rule_io(r, out);
	rule_accept_stall(r, out);
	idle_cpu = r->cores < VT_DIAG_IDLE_CORES;
	if (!idle_cpu) {
		rule_throttled(r, out);
		rule_contention(r, out);
	}
	/* A poller waking 900 times a second may use under 1% of a core: the
	 * wakeup rules decide before the CPU figure calls it idle. */
	if (idle_cpu || !rule_convoy(r, out))
		rule_wakeups(r, out);
	if (out->n > 0)
		return;      /* blocked on I/O, a stalled queue, a poller: never idle */
	if (!idle_cpu) {
		add(out, VT_DIAG_NONE);
		return;
	}
	f = add(out, VT_DIAG_IDLE);
	f->idle.cores = r->cores;
	f->idle.cpu_s = r->cpu_seconds;
	f->idle.interval_s = r->interval_s;
}

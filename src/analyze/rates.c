/*
 * rates.c — interval rates from thread samples (see rates.h).
 *
 * Only arithmetic on samples already taken: no /proc access.  Counters are
 * untrusted: one that goes backwards (a reused tid, a wrapped value) gives a
 * zero delta and a flag, never a negative or huge rate.
 */
#include "analyze/rates.h"
#include "base/unknown.h"

#include "base/scan.h"

#include "proc/procfs.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_tid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/*
 * b - a for a cumulative counter; a == NULL means the thread started in the
 * interval (its counters began at 0).  false when unknown.
 */
static bool delta(const uint64_t *a, uint64_t b, uint64_t *d, unsigned *flags)
{
	uint64_t base = a ? *a : 0;

	if (!vt_known(b) || (a && !vt_known(*a)))
		return false;
	if (b < base) {
		*flags |= VT_THREAD_COUNTER_RESET;
		*d = 0;
		return true;
	}
	*d = b - base;
	return true;
}

size_t vt_threads_pool_key_len(const char *name)
{
	size_t len = strlen(name);

	while (len > 0 && name[len - 1] >= '0' && name[len - 1] <= '9')
		len--;
	return len;
}

/*
 * A thread cannot run more than one core, nor switch more often than the
 * scheduler could: a larger value is a corrupt or reset counter.  It is
 * taken as 0 and flagged, never shown.
 */
static void sanitize(double *v, double max, unsigned *flags)
{
	if (*v > max) {
		*v = 0;
		*flags |= VT_THREAD_COUNTER_RESET;
	}
}

static void thread_rate(const struct vt_threads_sample *samples, size_t n, pid_t tid,
			double dt, struct vt_thread_rate *r)
{
	const struct vt_thread_snap *first = NULL, *last = NULL, *base, *t;
	struct vt_thread_tally tally;
	long clk = samples[n - 1].clk_tck > 0 ? samples[n - 1].clk_tck : 100;
	uint64_t d, du, ds;
	size_t i;
	int k;

	memset(r, 0, sizeof(*r));
	memset(&tally, 0, sizeof(tally));
	r->tid = tid;
	r->user_cores = r->sys_cores = -1;
	for (k = 0; k < VT_TC_COUNT; k++)
		r->rate[k] = -1;
	r->cpu_share = -1;
	for (i = 0; i < n; i++) {
		t = vt_threads_sample_find(&samples[i], tid);
		if (!t)
			continue;
		if (!first)
			first = t;
		else if (t->start_ticks != first->start_ticks)
			continue;      /* the tid was reused by another thread: not this one */
		last = t;
		vt_thread_tally_add(&tally, t);
		if (!t->wchan_ok)
			snprintf(r->wchan_why, sizeof(r->wchan_why), "%s", t->wchan_why);
		if (!t->syscall_ok)
			snprintf(r->syscall_why, sizeof(r->syscall_why), "%s", t->syscall_why);
	}
	if (!first)
		return;
	r->nsamples = tally.seen;
	memcpy(r->states, tally.states, sizeof(r->states));
	snprintf(r->comm, sizeof(r->comm), "%s", last->comm);
	r->last_cpu = last->processor;
	r->last_state = last->state;
	r->wchan_ok = last->wchan_ok;
	if (vt_name_tally_top(tally.wchans, r->wchan, sizeof(r->wchan), &r->wchan_count))
		r->wchan_ok = true;
	r->syscall_ok = last->syscall_ok;
	if (vt_name_tally_top(tally.calls, r->syscall, sizeof(r->syscall), &r->syscall_count))
		r->syscall_ok = true;
	r->timed = tally.timed;
	r->untimed = tally.untimed;
	r->timeout_ms = vt_timeout_tally_median(&tally.timeouts);

	base = vt_threads_sample_find(&samples[0], tid) == first ? first : NULL;
	if (!base)
		r->flags |= VT_THREAD_APPEARED;
	t = vt_threads_sample_find(&samples[n - 1], tid);
	if (!t || t != last)
		r->flags |= VT_THREAD_EXITED;

	if (delta(base ? &base->utime_ticks : NULL, last->utime_ticks, &du, &r->flags) &&
	    delta(base ? &base->stime_ticks : NULL, last->stime_ticks, &ds, &r->flags)) {
		r->user_cores = (double)du / (double)clk / dt;
		r->sys_cores = (double)ds / (double)clk / dt;
		r->cpu_cores = r->user_cores + r->sys_cores;
	}
	for (k = 0; k < VT_TC_COUNT; k++) {
		if (!delta(base ? &base->counter[k] : NULL, last->counter[k], &d, &r->flags))
			continue;
		r->rate[k] = vt_thread_counter_rate(k, d, dt);
		sanitize(&r->rate[k], vt_thread_counters[k].rate_max, &r->flags);
	}
	/* CPU from schedstat when both ends have it, else the ticks above */
	if (r->rate[VT_TC_CPU_NS] >= 0 && last->cpu_schedstat && (!base || base->cpu_schedstat))
		r->cpu_cores = r->rate[VT_TC_CPU_NS];
	sanitize(&r->cpu_cores, vt_thread_counters[VT_TC_CPU_NS].rate_max, &r->flags);
	sanitize(&r->user_cores, vt_thread_counters[VT_TC_CPU_NS].rate_max, &r->flags);
	sanitize(&r->sys_cores, vt_thread_counters[VT_TC_CPU_NS].rate_max, &r->flags);
	r->rate[VT_TC_CPU_NS] = r->cpu_cores;
}

/* Widen [*lo, *hi] to v; unknown figures (< 0) leave it, and it starts at -1 (none yet). */
static void spread_add(double *lo, double *hi, double v)
{
	if (!(v >= 0))
		return;
	if (*lo < 0 || v < *lo)
		*lo = v;
	if (v > *hi)
		*hi = v;
}

/*
 * Pools of threads named alike, with their spread; needs each thread's
 * cpu_share set first.  Threads that came or went are not members.
 */
static int make_pools(struct vt_threads_rates *r, struct vt_err *err)
{
	struct vt_thread_pool *pool;
	const char **first;          /* the first member's full name, per pool */
	size_t i, j, len;

	r->pools = calloc(r->n ? r->n : 1, sizeof(*r->pools));
	first = calloc(r->n ? r->n : 1, sizeof(*first));
	if (!r->pools || !first) {
		free(first);
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory grouping threads");
	}
	for (i = 0; i < r->n; i++) {
		const struct vt_thread_rate *t = &r->threads[i];
		char key[64];

		if (t->flags & (VT_THREAD_APPEARED | VT_THREAD_EXITED))
			continue;      /* a rate over part of the interval: no measure of the spread */
		/* no trailing digits (tokio's "tokio-runtime-w" workers all
		 * share one name), or nothing but digits: the whole name */
		len = vt_threads_pool_key_len(t->comm);
		if (len == 0)
			len = strlen(t->comm);
		if (len == 0 || len >= sizeof(key))
			continue;
		memcpy(key, t->comm, len);
		key[len] = '\0';
		for (j = 0; j < r->npools; j++)
			if (!strcmp(r->pools[j].name, key))
				break;
		pool = &r->pools[j];
		if (j == r->npools) {
			memcpy(pool->name, key, len + 1);
			pool->min_cores = pool->max_cores = -1;
			pool->min_share = pool->max_share = -1;
			first[j] = t->comm;
			r->npools++;
		}
		if (strcmp(first[j], t->comm))
			pool->indexed = true;
		pool->count++;
		spread_add(&pool->min_cores, &pool->max_cores, t->cpu_cores);
		spread_add(&pool->min_share, &pool->max_share, t->cpu_share);
		if (t->cpu_cores > 0)
			pool->total_cores += t->cpu_cores;
	}
	/* A pool is two threads or more. */
	for (i = j = 0; i < r->npools; i++) {
		pool = &r->pools[i];
		if (pool->count < 2)
			continue;
		snprintf(pool->label, sizeof(pool->label), "%s", pool->indexed ? pool->name : first[i]);
		pool->uneven = pool->max_cores > pool->min_cores + 0.02 &&
			       pool->max_cores - pool->min_cores > VT_POOL_EVEN_SPREAD * pool->max_cores;
		r->pools[j++] = *pool;
	}
	r->npools = j;
	free(first);
	return VT_OK;
}

/*
 * The other tasks runnable host-wide, a mean over the samples that read
 * it: the host's count less the process's threads in state R, and less the
 * reader, which is running when it reads the count right after the sample.
 */
static void others_runnable(const struct vt_threads_sample *samples, size_t n, struct vt_threads_rates *out)
{
	double others = 0;
	size_t i, j, known = 0;

	for (i = 0; i < n; i++) {
		unsigned r = 0;

		if (!samples[i].host_known)
			continue;
		for (j = 0; j < samples[i].n; j++)
			r += samples[i].threads[j].state == 'R';
		others += fmax(0, (double)samples[i].host_runnable - 1 - r);
		known++;
	}
	out->others_runnable = known * 2 > n ? others / (double)known : -1;
}

int vt_threads_rates_compute(const struct vt_threads_sample *samples, size_t n, int ncpu,
			     struct vt_threads_rates *out, struct vt_err *err)
{
	const struct vt_threads_sample *a, *b;
	pid_t *tids = NULL;
	size_t ntids = 0, total = 0, i, j;
	double dt, sum_ns = 0, whole = 0, elapsed;
	bool ns_ok = true, unseen;
	uint64_t du, ds;
	unsigned fl = 0;
	long clk;

	memset(out, 0, sizeof(*out));
	if (n < 2)
		return vt_err_set(err, VT_E_USAGE, 0, "two samples at least are needed for a rate");
	a = &samples[0];
	b = &samples[n - 1];
	dt = b->mono_ns > a->mono_ns ? (double)(b->mono_ns - a->mono_ns) / 1e9 : 0;
	if (dt < VT_RATES_MIN_INTERVAL_S)
		return vt_err_set(err, VT_E_USAGE, 0,
				  "interval of %.3f s is too short to measure: the minimum is %.1f s",
				  dt, VT_RATES_MIN_INTERVAL_S);
	clk = b->clk_tck > 0 ? b->clk_tck : 100;
	out->pid = b->pid;
	memcpy(out->comm, b->comm, sizeof(out->comm));
	out->interval_s = dt;
	out->nsamples = (unsigned)n;
	out->ncpu = ncpu;
	out->usable_cores = ncpu > 0 ? ncpu : 0;
	out->quota_cores = -1;
	out->throttled_s = -1;
	out->throttled_periods = out->periods = VT_NA;
	out->self_cpu_s = -1;
	out->load1 = out->host_cpu_some = -1;
	others_runnable(samples, n, out);

	for (i = 0; i < n; i++) {
		total += samples[i].n;
		vt_thread_reads_add(&out->reads, &samples[i].reads);
	}
	tids = malloc((total ? total : 1) * sizeof(*tids));
	if (!tids)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory computing rates");
	for (i = 0; i < n; i++)
		for (j = 0; j < samples[i].n; j++)
			tids[ntids++] = samples[i].threads[j].tid;
	qsort(tids, ntids, sizeof(*tids), cmp_tid);
	for (i = j = 0; i < ntids; i++)
		if (j == 0 || tids[j - 1] != tids[i])
			tids[j++] = tids[i];
	ntids = j;
	out->threads = calloc(ntids ? ntids : 1, sizeof(*out->threads));
	if (!out->threads) {
		free(tids);
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory computing rates");
	}
	for (i = 0; i < ntids; i++) {
		struct vt_thread_rate *r = &out->threads[out->n];
		const struct vt_thread_snap *f = vt_threads_sample_find(a, tids[i]), *l = vt_threads_sample_find(b, tids[i]);

		thread_rate(samples, n, tids[i], dt, r);
		if (!r->nsamples)
			continue;
		if (r->flags & VT_THREAD_APPEARED)
			out->appeared++;
		if (r->flags & VT_THREAD_EXITED)
			out->exited++;
		if (r->flags & (VT_THREAD_APPEARED | VT_THREAD_EXITED))
			out->short_lived++;
		else
			whole += r->cpu_cores;      /* there at both ends */
		/* schedstat sum: every thread needs both ends known (or a start in the interval). */
		if ((f && !f->cpu_schedstat) || (l && !l->cpu_schedstat))
			ns_ok = false;
		sum_ns += r->cpu_cores;
		out->n++;
	}
	free(tids);

	if (!delta(&a->utime_ticks, b->utime_ticks, &du, &fl))
		du = 0;
	if (!delta(&a->stime_ticks, b->stime_ticks, &ds, &fl))
		ds = 0;
	out->cores_ticks = (double)(du + ds) / (double)clk / dt;
	out->cores_ns = ns_ok ? sum_ns : -1;
	/*
	 * Threads that lived between two samples (a thread per request) are in
	 * the process's ticks and in no thread's schedstat: ticks well above
	 * the sum mean the sum misses them.
	 */
	unseen = ns_ok && (double)(du + ds) - sum_ns * dt * (double)clk >
			  VT_RATES_UNSEEN_TICKS + VT_RATES_UNSEEN_SHARE * sum_ns * dt * (double)clk;
	if (unseen)
		ns_ok = false;
	if (ns_ok && out->exited == 0) {
		out->cores = out->cores_ns;
		out->cores_source = "schedstat";
	} else {
		out->cores = out->cores_ticks;
		out->cores_source = "stat";
	}
	if (du + ds > 0) {
		out->user_cores = out->cores * (double)du / (double)(du + ds);
		out->sys_cores = out->cores * (double)ds / (double)(du + ds);
	} else if (out->cores > 0) {
		out->user_cores = out->sys_cores = -1;  /* under one tick each: split unknown */
	}
	out->cpu_seconds = out->cores * dt;
	/* what the threads there at both ends did not use: those that came or went */
	if ((out->short_lived || unseen) && out->cores - whole > 0)
		out->short_lived_cores = out->cores - whole;
	elapsed = b->uptime_s - (double)b->start_ticks / (double)clk;
	if (b->uptime_s > 0 && elapsed > 0) {
		double d;

		out->since_start_cores = (double)(b->utime_ticks + b->stime_ticks) / (double)clk / elapsed;
		d = out->since_start_cores - out->cores;
		out->ps_differs = d > VT_RATES_PS_DIFF_CORES || d < -VT_RATES_PS_DIFF_CORES;
	} else {
		out->since_start_cores = -1;
	}
	return vt_threads_rates_group(out, err);
}

int vt_threads_rates_group(struct vt_threads_rates *r, struct vt_err *err)
{
	double sum_cores = 0;
	size_t i;

	for (i = 0; i < r->n; i++)
		sum_cores += r->threads[i].cpu_cores > 0 ? r->threads[i].cpu_cores : 0;
	/*
	 * Shares of the process: threads that came and went between two
	 * samples are in r->cores and in no row, and a row must not claim
	 * their part.  The sum only when ticks cut the process's figure below it.
	 */
	if (r->cores > sum_cores)
		sum_cores = r->cores;
	for (i = 0; i < r->n; i++)
		r->threads[i].cpu_share = sum_cores > 0 ? r->threads[i].cpu_cores / sum_cores : 0;
	r->short_lived_share = sum_cores > 0 ? r->short_lived_cores / sum_cores : 0;
	return make_pools(r, err);
}

void vt_threads_rates_set_quota(struct vt_threads_rates *r, double quota_cores, const char *dir)
{
	r->quota_cores = quota_cores > 0 ? quota_cores : -1;
	snprintf(r->quota_dir, sizeof(r->quota_dir), "%s", r->quota_cores > 0 && dir ? dir : "");
	r->usable_cores = r->ncpu > 0 ? r->ncpu : 0;
	if (r->quota_cores > 0 && (r->usable_cores <= 0 || r->quota_cores < r->usable_cores))
		r->usable_cores = r->quota_cores;
}

void vt_threads_rates_set_allowance(struct vt_threads_rates *r, const struct vt_cpu_allowance *a)
{
	r->ncpu = a->ncpu;
	vt_threads_rates_set_quota(r, a->quota_cores, a->quota_dir);
	r->periods = a->periods;
	r->throttled_periods = a->throttled_periods;
	r->throttled_s = a->throttled_s;
}

void vt_threads_rates_set_host(struct vt_threads_rates *r, const struct vt_interval_host *h)
{
	double dt = r->interval_s;

	r->load1 = h->load1;
	r->host_ncpu = h->ncpu_online;
	r->host_cpu_some = h->cpu_some_s >= 0 && dt > 0 ? fmin(1, h->cpu_some_s / dt) : -1;
	r->io_known = h->io_known && dt > 0;
	if (r->io_known) {
		r->syscr_per_s = (double)h->syscr / dt;
		r->syscw_per_s = (double)h->syscw / dt;
	}
}

void vt_threads_rates_release(struct vt_threads_rates *r)
{
	if (!r)
		return;
	free(r->threads);
	free(r->pools);
	r->threads = NULL;
	r->pools = NULL;
	r->n = r->npools = 0;
}

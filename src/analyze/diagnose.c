/*
 * diagnose.c — rules over interval rates (see diagnose.h).  Reads nothing,
 * writes no sentence: each finding keeps the figures its rule used.
 */
#include "analyze/diagnose.h"
#include "base/unknown.h"

#include "proc/procfs.h"

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

static void rule_contention(const struct vt_threads_rates *r, struct vt_diagnosis *d)
{
	double runnable = 0, runq = 0, vol = 0, nonvol = 0;
	struct vt_diag_finding *f;
	size_t i;

	if (r->usable_cores <= 0)
		return;
	for (i = 0; i < r->n; i++) {
		const struct vt_thread_rate *t = &r->threads[i];

		/* runnable = on a CPU or waiting for one, over the interval */
		runnable += pos(t->cpu_cores) + pos(t->runq_share);
		runq += pos(t->runq_share);
		vol += pos(t->vol_per_s);
		nonvol += pos(t->nonvol_per_s);
	}
	if (!(runnable > r->usable_cores + 0.25 && runq >= VT_DIAG_RUNQ_HIGH && nonvol > vol))
		return;
	f = add(d, VT_DIAG_CONTENTION);
	if (!f)
		return;
	f->contention.runnable = runnable;
	f->contention.usable_cores = r->usable_cores;
	f->contention.runq_per_s = runq;
	f->contention.nonvol_per_s = nonvol;
	f->contention.vol_per_s = vol;
}

static bool rule_convoy(const struct vt_threads_rates *r, struct vt_diagnosis *d)
{
	size_t p, i;

	for (p = 0; p < r->npools; p++) {
		const struct vt_thread_pool *pl = &r->pools[p];
		size_t klen = strlen(pl->name), members = 0;
		unsigned samples = 0, futex = 0;
		double vol = 0, off_cpu = 0, futex_share;
		struct vt_diag_finding *f;

		if (pl->count < VT_DIAG_CONVOY_MIN)
			continue;
		for (i = 0; i < r->n; i++) {
			const struct vt_thread_rate *t = &r->threads[i];

			if (strncmp(t->comm, pl->name, klen) || vt_threads_pool_key_len(t->comm) != klen)
				continue;
			members++;
			samples += t->nsamples;
			/* samples expected off a CPU: the thread ran cpu_cores of the time */
			off_cpu += t->nsamples * (1 - (t->cpu_cores < 1 ? pos(t->cpu_cores) : 1));
			if (futex_wchan(t))
				futex += t->wchan_count;
			vol += pos(t->vol_per_s);
		}
		if (!members || !samples)
			continue;
		vol /= (double)members;
		/* near-equal: spread within a quarter of the busiest, and they do use CPU */
		if (pl->max_cores < 0.01 || pl->max_cores - pl->min_cores > 0.25 * pl->max_cores + 0.02)
			continue;
		/*
		 * /proc shows R both on a CPU and queued for one, so the futex share
		 * is taken of the time off a CPU: in a convoy, whoever is not
		 * running the critical section waits on the lock.
		 */
		futex_share = off_cpu > 0 ? (double)futex / off_cpu : 0;
		if (futex_share > 1)
			futex_share = 1;
		if (futex_share < VT_DIAG_CONVOY_FUTEX || vol < VT_DIAG_CONVOY_VOL)
			continue;
		f = add(d, VT_DIAG_CONVOY);
		if (f) {
			snprintf(f->convoy.pool, sizeof(f->convoy.pool), "%s", pl->name);
			f->convoy.members = pl->count;
			f->convoy.min_cores = pl->min_cores;
			f->convoy.max_cores = pl->max_cores;
			f->convoy.futex_share = (double)futex / samples;
			f->convoy.futex_off_cpu_share = futex_share;
			f->convoy.vol_per_s = vol;
		}
		return true;
	}
	return false;
}

static void rule_busy_poll(const struct vt_threads_rates *r, struct vt_diagnosis *d)
{
	size_t i;

	for (i = 0; i < r->n; i++) {
		const struct vt_thread_rate *t = &r->threads[i];
		struct vt_diag_finding *f;
		double us;

		/* waking often to wait on a lock or a disk is not polling */
		if (t->vol_per_s < VT_DIAG_POLL_VOL || futex_wchan(t) || mostly_blocked(t))
			continue;
		us = pos(t->cpu_cores) / t->vol_per_s * 1e6;
		if (us >= VT_DIAG_POLL_US)
			continue;
		f = add(d, VT_DIAG_BUSY_POLL);
		if (f) {
			name_thread(t, &f->busy_poll.t);
			f->busy_poll.wchan_ok = t->wchan_ok;
			f->busy_poll.wakeups_per_s = t->vol_per_s;
			f->busy_poll.cpu_us = us;
			f->busy_poll.cores = pos(t->cpu_cores);
		}
		return;
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

void vt_diagnose(const struct vt_threads_rates *r, struct vt_diagnosis *out)
{
	struct vt_diag_finding *f;

	memset(out, 0, sizeof(*out));
	rule_io(r, out);
	if (r->cores < VT_DIAG_IDLE_CORES) {
		if (out->n)
			return;      /* blocked on I/O uses no CPU, but it is not idle */
		f = add(out, VT_DIAG_IDLE);
		f->idle.cores = r->cores;
		f->idle.cpu_s = r->cpu_seconds;
		f->idle.interval_s = r->interval_s;
		return;
	}
	rule_throttled(r, out);
	rule_contention(r, out);
	if (!rule_convoy(r, out))
		rule_busy_poll(r, out);
	if (out->n == 0)
		add(out, VT_DIAG_NONE);
}

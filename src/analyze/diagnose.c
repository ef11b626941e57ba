/*
 * diagnose.c — rules over interval rates (see diagnose.h).  Reads nothing.
 */
#include "analyze/diagnose.h"
#include "base/unknown.h"

#include "proc/procfs.h"

#include <stdio.h>
#include <string.h>

static struct vt_diag_finding *add(struct vt_diagnosis *d, enum vt_diag_kind kind,
				   const char *name)
{
	struct vt_diag_finding *f;

	if (d->n >= VT_DIAG_MAX)
		return NULL;
	f = &d->f[d->n++];
	f->kind = kind;
	f->name = name;
	f->evidence[0] = '\0';
	return f;
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
	f = add(d, VT_DIAG_CONTENTION, "core contention");
	if (f)
		snprintf(f->evidence, sizeof(f->evidence),
			 "%.2f threads runnable on average for %.2f usable cores; %.2f thread-seconds "
			 "per second waited on a run queue; nonvoluntary switches %.0f/s > voluntary "
			 "%.0f/s", runnable, r->usable_cores, runq, nonvol, vol);
}

static bool rule_convoy(const struct vt_threads_rates *r, struct vt_diagnosis *d,
			char *pool_out, size_t pool_cap)
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
		f = add(d, VT_DIAG_CONVOY, "lock convoy");
		if (f)
			snprintf(f->evidence, sizeof(f->evidence),
				 "%zu x %s: %.2f-%.2f cores each (near-equal); in futex wait in %.0f%% "
				 "of their samples, %.0f%% of their time off a CPU; %.0f voluntary "
				 "switches/s each on average",
				 pl->count, pl->name, pl->min_cores, pl->max_cores,
				 100.0 * futex / samples, 100.0 * futex_share, vol);
		snprintf(pool_out, pool_cap, "%s", pl->name);
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
		f = add(d, VT_DIAG_BUSY_POLL, "busy poll");
		if (f)
			snprintf(f->evidence, sizeof(f->evidence),
				 "thread %d (%s) wakes %.0f times/s and uses %.1f us of CPU per wakeup "
				 "(%.3f cores); sleeping in %s",
				 (int)t->tid, t->comm, t->vol_per_s, us, pos(t->cpu_cores),
				 t->wchan_count ? t->wchan : t->wchan_ok ? "-" : "(wchan not readable)");
		return;
	}
}

/* Threads in uninterruptible sleep for a good part of the interval. */
static void rule_io(const struct vt_threads_rates *r, struct vt_diagnosis *d)
{
	struct vt_diag_finding *f = NULL;
	size_t i, shown = 0, blocked = 0, used = 0;
	int w;

	for (i = 0; i < r->n; i++) {
		const struct vt_thread_rate *t = &r->threads[i];
		double share;

		if (!mostly_blocked(t))
			continue;
		share = (double)t->states[2] / t->nsamples;
		blocked++;
		if (!f) {
			f = add(d, VT_DIAG_IO, "blocked on I/O");
			if (!f)
				return;
			w = snprintf(f->evidence, sizeof(f->evidence),
				     "in uninterruptible sleep (state D, usually disk or network file "
				     "system I/O):");
			used = w > 0 ? (size_t)w : 0;
		}
		if (shown < 3 && used < sizeof(f->evidence)) {
			w = snprintf(f->evidence + used, sizeof(f->evidence) - used,
				     "%s thread %d (%s) %.0f%% of %u samples%s%s%s%s", shown ? ";" : "",
				     (int)t->tid, t->comm, 100 * share, t->nsamples,
				     t->wchan_count ? ", in " : "", t->wchan_count ? t->wchan : "",
				     t->syscall_count ? ", syscall " : "",
				     t->syscall_count ? t->syscall : "");
			used += w > 0 ? (size_t)w : 0;
			shown++;
		}
	}
	if (f && blocked > shown && used < sizeof(f->evidence))
		snprintf(f->evidence + used, sizeof(f->evidence) - used, "; %zu more", blocked - shown);
}

static void rule_throttled(const struct vt_threads_rates *r, struct vt_diagnosis *d)
{
	struct vt_diag_finding *f;

	if (!vt_known(r->periods) || !vt_known(r->throttled_periods) || r->periods == 0 ||
	    (double)r->throttled_periods / (double)r->periods < VT_DIAG_THROTTLED_SHARE)
		return;
	f = add(d, VT_DIAG_THROTTLED, "CPU throttled");
	if (f)
		snprintf(f->evidence, sizeof(f->evidence),
			 "its cgroup's quota of %.2f cores (%.80s) throttled it in %llu of %llu periods, "
			 "%.2f s held back over %.2f s; it used %.2f cores",
			 r->quota_cores, r->quota_dir[0] ? r->quota_dir : "?",
			 (unsigned long long)r->throttled_periods, (unsigned long long)r->periods,
			 r->throttled_s > 0 ? r->throttled_s : 0, r->interval_s, r->cores);
}

void vt_diagnose(const struct vt_threads_rates *r, struct vt_diagnosis *out)
{
	char pool[64] = "";
	struct vt_diag_finding *f;

	memset(out, 0, sizeof(*out));
	rule_io(r, out);
	if (r->cores < VT_DIAG_IDLE_CORES) {
		if (out->n)
			return;      /* blocked on I/O uses no CPU, but it is not idle */
		f = add(out, VT_DIAG_IDLE, "idle");
		snprintf(f->evidence, sizeof(f->evidence),
			 "the process used %.4f cores (%.1f ms of CPU) over %.2f s",
			 r->cores, r->cpu_seconds * 1e3, r->interval_s);
		return;
	}
	rule_throttled(r, out);
	rule_contention(r, out);
	if (!rule_convoy(r, out, pool, sizeof(pool)))
		rule_busy_poll(r, out);
	if (out->n == 0) {
		f = add(out, VT_DIAG_NONE, "no pattern");
		snprintf(f->evidence, sizeof(f->evidence),
			 "no rule's conditions all held (idle, blocked on I/O, CPU throttled, core "
			 "contention, lock convoy, busy poll)");
	}
}

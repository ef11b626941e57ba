/*
 * thread_view.c — a soak's threads as struct vt_threads_rates (see
 * thread_view.h), and its threads ranked by CPU.
 */
#include "analyze/thread_view.h"
#include "base/unknown.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double vt_thread_run_cores(const struct vt_thread_run *th)
{
	double dt = th->t_last - th->t_first;

	return dt > 0 ? (double)th->delta[VT_TC_CPU_NS] / 1e9 / dt : NAN;
}

/* Is th one of pid's threads (every thread is when match is 0: none is of pid)? */
static bool of_process(const struct vt_thread_run *th, pid_t pid, size_t match)
{
	return !match || th->pid == pid;
}

static size_t threads_of(const struct vt_series *s, pid_t pid)
{
	size_t i, match = 0;

	for (i = 0; i < s->nthreads; i++)
		match += s->threads[i].pid == pid;
	return match;
}

pid_t vt_soak_threads_pid(const struct vt_series *s, const struct vt_soak_verdict *v)
{
	return v->from < s->n && v->to > v->from ? s->pid[v->from] : 0;
}

/*
 * The value of the process's counter m at time t, from the point of
 * process pid around it (linear between its first and last sample); false
 * when not recorded there.
 */
static bool counter_at(const struct vt_series *s, pid_t pid, enum vt_metric m, double t, double *out)
{
	const struct vt_stat *c = s->m[m];
	size_t i;

	if (!c)
		return false;
	for (i = 0; i < s->n; i++) {
		double f;

		if ((pid && s->pid[i] != pid) || t < s->t0[i] || t > s->t1[i])
			continue;
		if (isnan(c[i].lo) || isnan(c[i].hi))
			return false;
		f = s->t1[i] > s->t0[i] ? (t - s->t0[i]) / (s->t1[i] - s->t0[i]) : 0;
		*out = c[i].lo + f * (c[i].hi - c[i].lo);
		return true;
	}
	return false;
}

/* The process's CPU seconds (user + system) at time t (counter_at). */
static bool cpu_at(const struct vt_series *s, pid_t pid, double t, double *out)
{
	double u, y;

	if (!counter_at(s, pid, VT_M_CPU_USER_S, t, &u) || !counter_at(s, pid, VT_M_CPU_SYS_S, t, &y))
		return false;
	*out = u + y;
	return true;
}

/* Counter m's rise per second over [t0, t1] (t1 > t0); false when not recorded at both ends or it fell. */
static bool counter_rate(const struct vt_series *s, pid_t pid, enum vt_metric m, double t0, double t1,
			 double *out)
{
	double a, b;

	if (!counter_at(s, pid, m, t0, &a) || !counter_at(s, pid, m, t1, &b) || b < a)
		return false;
	*out = (b - a) / (t1 - t0);
	return true;
}

/*
 * A thread's CPU within the span: all of it since it began when it came
 * after the span began (its counters started at 0), else since its first
 * record.
 */
static double span_cpu_s(const struct vt_soak_short_lived *sl, const struct vt_thread_run *th)
{
	uint64_t ns = th->delta[VT_TC_CPU_NS] + (th->t_first > sl->t0 ? th->cpu_ns_first : 0);

	return (double)ns / 1e9;
}

bool vt_soak_thread_short_lived(const struct vt_soak_short_lived *sl, const struct vt_thread_run *th)
{
	return !(th->t_last > th->t_first) || (th->t_first > sl->t0 && th->t_last < sl->t1);
}

void vt_soak_short_lived(const struct vt_series *s, pid_t pid, struct vt_soak_short_lived *out)
{
	size_t match = threads_of(s, pid), i;
	double t1_all = -INFINITY, c0, c1, other = 0, mine = 0;

	memset(out, 0, sizeof(*out));
	out->cores = out->process_cores = NAN;
	out->t0 = INFINITY;
	out->t1 = -INFINITY;
	for (i = 0; i < s->nthreads; i++) {
		if (of_process(&s->threads[i], pid, match))
			out->t0 = fmin(out->t0, s->threads[i].t_first);
	}
	/*
	 * The span ends at the last record of the threads there at its start
	 * (written at every per-thread tick while they live): a soak that was
	 * killed wrote no last tick, and a thread still running then must not
	 * count as gone.
	 */
	for (i = 0; i < s->nthreads; i++) {
		const struct vt_thread_run *th = &s->threads[i];

		if (!of_process(th, pid, match))
			continue;
		t1_all = fmax(t1_all, th->t_last);
		if (th->t_first == out->t0)
			out->t1 = fmax(out->t1, th->t_last);
	}
	if (!(out->t1 > out->t0))
		out->t1 = t1_all;
	if (!(out->t1 > out->t0)) {
		out->t0 = out->t1 = 0;
		return;
	}
	for (i = 0; i < s->nthreads; i++) {
		const struct vt_thread_run *th = &s->threads[i];

		if (!of_process(th, pid, match))
			continue;
		if (vt_soak_thread_short_lived(out, th)) {
			out->threads++;
			mine += span_cpu_s(out, th);
		} else {
			other += span_cpu_s(out, th);
		}
	}
	out->recorded_cores = mine / (out->t1 - out->t0);
	if (cpu_at(s, match ? pid : 0, out->t0, &c0) && cpu_at(s, match ? pid : 0, out->t1, &c1) && c1 >= c0) {
		out->process_cores = (c1 - c0) / (out->t1 - out->t0);
		out->cores = c1 - c0 - other > 0 ? (c1 - c0 - other) / (out->t1 - out->t0) : 0;
	}
}

/* Busiest first; a thread without a rate last; tid order among equals. */
static int by_cores_desc(const void *pa, const void *pb)
{
	const struct vt_thread_run *a = *(const struct vt_thread_run *const *)pa;
	const struct vt_thread_run *b = *(const struct vt_thread_run *const *)pb;
	double ca = vt_thread_run_cores(a), cb = vt_thread_run_cores(b);

	if (!isfinite(ca))
		ca = -1;
	if (!isfinite(cb))
		cb = -1;
	if (ca != cb)
		return ca < cb ? 1 : -1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

ssize_t vt_soak_threads_by_cpu(const struct vt_series *s, const struct vt_soak_verdict *v,
			      const struct vt_soak_short_lived *sl, const struct vt_thread_run ***out,
			      size_t *others)
{
	const struct vt_thread_run **list;
	pid_t pid = vt_soak_threads_pid(s, v);
	size_t i, n = 0, match = threads_of(s, pid);

	*out = NULL;
	*others = 0;
	list = malloc(sizeof(*list) * (s->nthreads ? s->nthreads : 1));
	if (!list)
		return -1;
	for (i = 0; i < s->nthreads; i++) {
		if (!of_process(&s->threads[i], pid, match)) {
			(*others)++;
			continue;
		}
		if (!vt_soak_thread_short_lived(sl, &s->threads[i]))
			list[n++] = &s->threads[i];
	}
	qsort(list, n, sizeof(*list), by_cores_desc);
	*out = list;
	return (ssize_t)n;
}

static void fill_thread(const struct vt_thread_run *th, struct vt_thread_rate *t)
{
	const struct vt_thread_doing *d = &th->doing;
	double dt = th->t_last - th->t_first;
	int k;

	memset(t, 0, sizeof(*t));
	t->tid = th->tid;
	snprintf(t->comm, sizeof(t->comm), "%s", th->name);
	t->user_cores = t->sys_cores = -1;       /* a soak records their sum */
	for (k = 0; k < VT_TC_COUNT; k++)
		t->rate[k] = -1;
	t->last_cpu = -1;
	if (dt > 0) {
		t->cpu_cores = vt_thread_run_cores(th);
		for (k = 0; k < VT_TC_COUNT; k++) {
			double r = k == VT_TC_CPU_NS ? t->cpu_cores : vt_thread_counter_rate(k, th->delta[k], dt);

			if (r >= 0)
				t->rate[k] = r;
		}
	} else {
		t->flags |= VT_THREAD_APPEARED;   /* one record: no rate */
	}
	t->nsamples = d->seen;
	t->states[0] = d->n_r;
	t->states[1] = d->n_s;
	t->states[2] = d->n_d;
	t->states[VT_NSTATES - 1] = d->seen - d->n_r - d->n_s - d->n_d;
	t->wchan_ok = t->syscall_ok = d->seen > 0;
	if (!d->seen) {
		snprintf(t->wchan_why, sizeof(t->wchan_why), "not sampled in this recording");
		snprintf(t->syscall_why, sizeof(t->syscall_why), "not sampled in this recording");
	}
	snprintf(t->wchan, sizeof(t->wchan), "%s", d->wchan);
	t->wchan_count = d->wchan_n;
	snprintf(t->syscall, sizeof(t->syscall), "%s", d->syscall);
	t->syscall_count = d->syscall_n;
	t->timed = d->timed;
	t->untimed = d->untimed;
	t->timeout_ms = d->timed ? d->timeout_ms : -1;
}

int vt_soak_thread_view(const struct vt_series *s, pid_t pid, const struct vt_stalls *stalls,
			const struct vt_locks *locks, struct vt_threads_rates *out, struct vt_diagnosis *diag,
			struct vt_err *err)
{
	struct vt_soak_short_lived sl;
	double t0 = INFINITY, t1 = -INFINITY;
	uint64_t cpu_ns = 0;
	size_t i, match = threads_of(s, pid);

	memset(out, 0, sizeof(*out));
	memset(diag, 0, sizeof(*diag));
	vt_soak_short_lived(s, pid, &sl);
	out->threads = calloc(s->nthreads ? s->nthreads : 1, sizeof(*out->threads));
	if (!out->threads)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
	for (i = 0; i < s->nthreads; i++) {
		const struct vt_thread_run *th = &s->threads[i];

		if (!of_process(th, pid, match))
			continue;
		fill_thread(th, &out->threads[out->n]);
		if (vt_soak_thread_short_lived(&sl, th)) {
			out->threads[out->n].flags |= VT_THREAD_APPEARED | VT_THREAD_EXITED;
			out->short_lived++;
		}
		out->n++;
		cpu_ns += th->delta[VT_TC_CPU_NS];
		t0 = fmin(t0, th->t_first);
		t1 = fmax(t1, th->t_last);
	}
	if (out->n == 0 || !(t1 > t0)) {
		vt_threads_rates_release(out);
		return vt_err_set(err, VT_E_NOTFOUND, 0, "no thread was recorded over a span");
	}
	out->pid = match ? pid : out->threads[0].tid;
	out->interval_s = t1 - t0;
	out->ncpu = s->info.ncpus;
	out->usable_cores = out->ncpu > 0 ? out->ncpu : 0;
	out->quota_cores = out->throttled_s = out->since_start_cores = out->self_cpu_s = -1;
	out->others_runnable = out->load1 = out->host_cpu_some = -1;   /* not recorded */
	out->periods = out->throttled_periods = VT_NA;
	out->cores = out->cores_ns = (double)cpu_ns / 1e9 / out->interval_s;
	out->cores_ticks = -1;
	out->cores_source = "schedstat";
	/* the process's own CPU, when recorded: shares are of it, and the short-lived hold the rest */
	if (isfinite(sl.cores) && isfinite(sl.process_cores)) {
		out->cores = out->cores_ticks = sl.process_cores;
		out->cores_source = "stat";
		out->short_lived_cores = sl.cores;
	}
	out->user_cores = out->sys_cores = -1;
	out->cpu_seconds = out->cores * out->interval_s;
	/* its read and write calls over the span: what tells data from a poll's timeout, as live */
	out->io_known = counter_rate(s, match ? pid : 0, VT_M_IO_SYSCR, t0, t1, &out->syscr_per_s) &&
			counter_rate(s, match ? pid : 0, VT_M_IO_SYSCW, t0, t1, &out->syscw_per_s);
	if (!out->io_known)
		out->syscr_per_s = out->syscw_per_s = 0;
	if (vt_threads_rates_group(out, err) != VT_OK) {
		vt_threads_rates_release(out);
		return VT_E_NOMEM;
	}
	/* the process's stalls over the span: a stalled process is never "idle" */
	for (i = 0; stalls && i < stalls->n; i++)
		if (!match || stalls->v[i].pid == pid) {
			out->recorded_stalls++;
			out->recorded_stall_s += stalls->v[i].length_s;
		}
	out->locks = locks && locks->samples ? locks : NULL;
	vt_diagnose(out, diag);
	return VT_OK;
}

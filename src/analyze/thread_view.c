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

	return dt > 0 ? (double)th->cpu_ns / 1e9 / dt : NAN;
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
			      const struct vt_thread_run ***out, size_t *others)
{
	const struct vt_thread_run **list;
	pid_t pid = v->from < s->n && v->to > v->from ? s->pid[v->from] : 0;
	size_t i, n = 0, match = 0;

	*out = NULL;
	*others = 0;
	for (i = 0; i < s->nthreads; i++)
		match += s->threads[i].pid == pid;
	list = malloc(sizeof(*list) * (s->nthreads ? s->nthreads : 1));
	if (!list)
		return -1;
	for (i = 0; i < s->nthreads; i++) {
		if (match && s->threads[i].pid != pid) {
			(*others)++;
			continue;
		}
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

	memset(t, 0, sizeof(*t));
	t->tid = th->tid;
	snprintf(t->comm, sizeof(t->comm), "%s", th->name);
	t->user_cores = t->sys_cores = -1;       /* a soak records their sum */
	t->runq_share = t->vol_per_s = t->nonvol_per_s = -1;
	t->last_cpu = -1;
	if (dt > 0) {
		t->cpu_cores = vt_thread_run_cores(th);
		if (th->wait_known)
			t->runq_share = (double)th->wait_ns / 1e9 / dt;
		if (th->csw_known) {
			t->vol_per_s = (double)th->vcsw / dt;
			t->nonvol_per_s = (double)th->nvcsw / dt;
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
}

int vt_soak_thread_view(const struct vt_series *s, pid_t pid, struct vt_threads_rates *out,
			struct vt_diagnosis *diag, struct vt_err *err)
{
	double t0 = INFINITY, t1 = -INFINITY;
	uint64_t cpu_ns = 0;
	size_t i, match = 0;

	memset(out, 0, sizeof(*out));
	memset(diag, 0, sizeof(*diag));
	for (i = 0; i < s->nthreads; i++)
		match += s->threads[i].pid == pid;
	out->threads = calloc(s->nthreads ? s->nthreads : 1, sizeof(*out->threads));
	if (!out->threads)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
	for (i = 0; i < s->nthreads; i++) {
		const struct vt_thread_run *th = &s->threads[i];

		if (match && th->pid != pid)
			continue;
		fill_thread(th, &out->threads[out->n++]);
		cpu_ns += th->cpu_ns;
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
	out->user_cores = out->sys_cores = -1;
	out->cpu_seconds = (double)cpu_ns / 1e9;
	if (vt_threads_rates_group(out, err) != VT_OK) {
		vt_threads_rates_release(out);
		return VT_E_NOMEM;
	}
	vt_diagnose(out, diag);
	return VT_OK;
}

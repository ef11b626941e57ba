/*
 * thread_sampler.c — an interval's thread samples, the step between them and
 * the cgroup CPU figures at its two ends (see thread_sampler.h).
 */
#include "sample/thread_sampler.h"

#include "base/buf.h"
#include "base/clock.h"
#include "base/unknown.h"
#include "proc/cgroup.h"
#include "proc/hostload.h"
#include "proc/io.h"
#include "proc/stat.h"
#include "proc/uptime.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

struct vt_thread_sampler {
	const struct vt_procfs *pfs;
	pid_t pid;
	struct vt_watch *w;                  /* its reader: directory, sockets */
	struct vt_proc_status status;        /* read at open */
	struct vt_thread_watch *watch;       /* the watch's */
	struct vt_buf buf;
	struct vt_threads_sample *samples;   /* n of cap; samples[0] opens the interval */
	size_t n, cap;
	uint64_t step_ns;                    /* between samples, on average */
	uint64_t step_min_ns;                /* the least step (VT_SAMPLER_STEP_MIN_NS unless set) */
	unsigned cost_factor;                /* the step is at least this times a sample's CPU */
	bool opened;                         /* the first sample (every file opened) was taken */
	uint64_t open_cpu_ns;                /* its CPU, until the interval it opened has paid for it */
	double step_scale;                   /* later steps, stretched to pay for it (1: nothing to pay) */
	uint64_t jitter;                     /* state of the step's jitter (xorshift) */
	struct vt_cgroup_cpu cg;             /* at the start of the interval */
	bool cg_ok;
	double load1;                        /* 1-minute load average at the last sample, < 0 unknown */
	uint64_t psi_us;                     /* host PSI cpu some at the start of the interval */
	bool psi_ok;
	struct vt_proc_io io;                /* the process's I/O counters at the start */
	bool io_ok;
	volatile sig_atomic_t *stop;
	struct vt_sampler_wait wait;
	struct vt_sampler_hook hook;
};

static bool stopping(const struct vt_thread_sampler *s)
{
	return s->stop && *s->stop;
}

static void sleep_until(void *ctx, uint64_t mono_ns)
{
	struct vt_thread_sampler *s = ctx;

	vt_sleep_until_ns(mono_ns, s->stop);
}

static void read_cgroup(struct vt_thread_sampler *s, struct vt_cgroup_cpu *cg, bool *ok)
{
	*ok = vt_cgroup_cpu_read(s->pfs, vt_watch_dirfd(s->w), cg, NULL) == VT_OK && cg->version;
}

int vt_thread_sampler_open(const struct vt_procfs *pfs, pid_t pid, volatile sig_atomic_t *stop,
			   struct vt_thread_sampler **out, struct vt_err *err)
{
	struct vt_thread_sampler *s = calloc(1, sizeof(*s));
	struct vt_watch_opts wo = { 0 };
	int rc;

	*out = NULL;
	if (!s)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
	s->pfs = pfs;
	s->pid = pid;
	s->buf = (struct vt_buf)VT_BUF_INIT(1u << 20);
	s->step_ns = s->step_min_ns = VT_SAMPLER_STEP_MIN_NS;
	s->cost_factor = VT_SAMPLER_COST_FACTOR;
	s->step_scale = 1;
	s->jitter = vt_mono_ns() | 1;
	s->stop = stop;
	vt_thread_sampler_set_wait(s, NULL);
	rc = vt_watch_open(pfs, pid, &wo, &s->w, NULL, &s->status, err);
	if (rc == VT_OK)
		rc = vt_watch_threads(s->w, &s->watch, err);
	if (rc != VT_OK) {
		vt_thread_sampler_close(s);
		return rc;
	}
	read_cgroup(s, &s->cg, &s->cg_ok);
	s->psi_ok = vt_host_cpu_pressure_read(pfs, &s->buf, &s->psi_us, NULL) == VT_OK;
	s->io_ok = vt_proc_io_read(vt_watch_dirfd(s->w), &s->buf, &s->io, NULL) == VT_OK;
	*out = s;
	return VT_OK;
}

void vt_thread_sampler_set_wait(struct vt_thread_sampler *s, const struct vt_sampler_wait *wait)
{
	if (wait)
		s->wait = *wait;
	else
		s->wait = (struct vt_sampler_wait){ sleep_until, s };
}

void vt_thread_sampler_set_hook(struct vt_thread_sampler *s, const struct vt_sampler_hook *hook)
{
	s->hook = hook ? *hook : (struct vt_sampler_hook){ 0 };
}

const struct vt_proc_status *vt_thread_sampler_status(const struct vt_thread_sampler *s)
{
	return &s->status;
}

int vt_thread_sampler_dirfd(const struct vt_thread_sampler *s)
{
	return vt_watch_dirfd(s->w);
}

struct vt_watch *vt_thread_sampler_watch(struct vt_thread_sampler *s)
{
	return s->w;
}

/* The host's runnable tasks right after the sample, and its load (one small read). */
static void host_runnable(struct vt_thread_sampler *s, struct vt_threads_sample *sample)
{
	struct vt_loadavg la;
	bool ok = vt_loadavg_read(s->pfs, &s->buf, &la, NULL) == VT_OK;

	sample->host_known = ok && la.runnable <= UINT32_MAX;
	sample->host_runnable = sample->host_known ? (uint32_t)la.runnable : 0;
	s->load1 = ok ? la.load1 : -1;
}

/*
 * The wait to the next sample: the step times a uniform 0.5 .. 1.5, so that
 * the samples of a periodic workload (a lock handed round in 10 ms turns)
 * do not fall at the same phase of its period sample after sample.
 */
static uint64_t jittered(struct vt_thread_sampler *s)
{
	s->jitter ^= s->jitter << 13;
	s->jitter ^= s->jitter >> 7;
	s->jitter ^= s->jitter << 17;
	return s->step_ns / 2 + s->jitter % (s->step_ns ? s->step_ns : 1);
}

void vt_thread_sampler_set_cost_factor(struct vt_thread_sampler *s, unsigned factor)
{
	s->cost_factor = factor ? factor : 1;
}

/* CPU this thread has used, ns (the sampler runs in one thread). */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return vt_mono_ns();
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void vt_thread_sampler_set_step_min(struct vt_thread_sampler *s, uint64_t ns)
{
	s->step_min_ns = ns;
	if (s->step_ns < ns || s->n == 0)
		s->step_ns = ns;
}

/* Take one sample into samples[n], growing the array; adapts the step. */
static int take(struct vt_thread_sampler *s, unsigned flags, struct vt_err *err)
{
	uint64_t t0, cost, step;
	int rc;

	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct vt_threads_sample *grown = realloc(s->samples, cap * sizeof(*grown));

		if (!grown)
			return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory sampling threads");
		s->samples = grown;
		s->cap = cap;
	}
	t0 = thread_cpu_ns();
	rc = vt_threads_sample_take(s->watch, flags, &s->samples[s->n], err);
	if (rc != VT_OK)
		return rc;
	host_runnable(s, &s->samples[s->n]);
	s->n++;
	if (s->hook.sample && (rc = s->hook.sample(s->hook.ctx, &s->samples[s->n - 1], err)) != VT_OK)
		return rc;
	cost = thread_cpu_ns() - t0;
	if (s->opened) {      /* the first one opened every file: not the cost of a step */
		step = (uint64_t)((double)cost * s->cost_factor * s->step_scale);
		s->step_ns = step > s->step_min_ns ? step : s->step_min_ns;
	} else {
		s->open_cpu_ns = cost;
	}
	s->opened = true;
	return VT_OK;
}

/*
 * What the interval of interval_ns that the sampler's first sample opened
 * may still spend: 1/cost_factor of a core over the interval, less that
 * sample.  Later steps are stretched so that the rest is spread over the
 * interval (*scale); false when nothing is left (only its end is sampled).
 * Intervals after the first have nothing to pay.
 */
static bool pay_for_opening(struct vt_thread_sampler *s, uint64_t interval_ns, double *scale)
{
	uint64_t budget = interval_ns / s->cost_factor, opening = s->open_cpu_ns;

	*scale = 1;
	s->open_cpu_ns = 0;
	if (opening == 0)
		return true;
	if (opening >= budget)
		return false;
	*scale = (double)budget / (double)(budget - opening);
	return true;
}

static int allowed_cpus(pid_t pid)
{
	cpu_set_t set;

	if (sched_getaffinity(pid, sizeof(set), &set) == 0)
		return CPU_COUNT(&set);
	return (int)sysconf(_SC_NPROCESSORS_ONLN);
}

/* CPU seconds this program has used so far, -1 unknown. */
static double own_cpu(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) == 0 ? vt_rusage_cpu_s(&ru) : -1;
}

/* counter b - a when both are known and it did not go backwards. */
static bool grew(uint64_t a, uint64_t b, uint64_t *d)
{
	if (!vt_known(a) || !vt_known(b) || b < a)
		return false;
	*d = b - a;
	return true;
}

/* The host's load at the last sample, and its PSI and the process's I/O between the interval's two ends. */
static void host_window(struct vt_thread_sampler *s, struct vt_interval_host *h)
{
	struct vt_proc_io io = { 0 };
	uint64_t psi = 0;
	bool ok;

	memset(h, 0, sizeof(*h));
	h->load1 = s->load1;
	h->ncpu_online = (int)sysconf(_SC_NPROCESSORS_ONLN);
	h->cpu_some_s = -1;
	ok = vt_host_cpu_pressure_read(s->pfs, &s->buf, &psi, NULL) == VT_OK;
	if (ok && s->psi_ok && psi >= s->psi_us)
		h->cpu_some_s = (double)(psi - s->psi_us) / 1e6;
	s->psi_us = psi;
	s->psi_ok = ok;
	ok = vt_proc_io_read(vt_watch_dirfd(s->w), &s->buf, &io, NULL) == VT_OK;
	if (ok && s->io_ok && grew(s->io.syscr, io.syscr, &h->syscr) && grew(s->io.syscw, io.syscw, &h->syscw))
		h->io_known = true;
	s->io = io;
	s->io_ok = ok;
}

/* The affinity mask, the quota and the throttling between the interval's two cgroup reads. */
static void allowance(struct vt_thread_sampler *s, struct vt_cpu_allowance *a)
{
	struct vt_cgroup_cpu now;
	uint64_t d;
	bool ok;

	memset(a, 0, sizeof(*a));
	a->ncpu = allowed_cpus(s->pid);
	a->quota_cores = -1;
	a->periods = a->throttled_periods = VT_NA;
	a->throttled_s = -1;
	if (!s->cg_ok)
		return;
	read_cgroup(s, &now, &ok);
	if (!ok)
		return;
	if (now.quota_cores > 0) {
		a->quota_cores = now.quota_cores;
		snprintf(a->quota_dir, sizeof(a->quota_dir), "%s/%s", s->pfs->sys_root, now.limit_dir);
		if (grew(s->cg.nr_periods, now.nr_periods, &a->periods) &&
		    grew(s->cg.nr_throttled, now.nr_throttled, &a->throttled_periods)) {
			if (grew(s->cg.throttled_usec, now.throttled_usec, &d))
				a->throttled_s = (double)d / 1e6;
		} else {
			a->periods = a->throttled_periods = VT_NA;
		}
	}
	s->cg = now;
}

int vt_thread_sampler_measure(struct vt_thread_sampler *s, double interval_s, unsigned flags,
			      struct vt_threads_interval *out, struct vt_err *err)
{
	double cpu0 = own_cpu(), cpu1;
	uint64_t start, end, next;
	bool room;
	int rc;

	memset(out, 0, sizeof(*out));
	if (s->n == 0 && (rc = take(s, flags, err)) != VT_OK)
		return rc;
	start = s->samples[0].mono_ns;
	end = start + (uint64_t)(interval_s * 1e9);
	room = pay_for_opening(s, end - start, &s->step_scale);
	for (next = start; !stopping(s);) {
		next = room ? next + jittered(s) : end;
		if (next > end)
			next = end;
		s->wait.until(s->wait.ctx, next);
		if (stopping(s))
			break;
		rc = take(s, flags, err);
		if (rc == VT_E_GONE || rc == VT_E_NOPROC) {
			out->exited = true;
			break;
		}
		if (rc != VT_OK)
			return rc;
		if (s->samples[s->n - 1].mono_ns >= end)
			break;
	}
	s->step_scale = 1;
	/* ps's since-start average needs the uptime at the last sample only */
	s->samples[s->n - 1].uptime_s = fmax(0, vt_uptime_read(s->pfs, &s->buf));
	out->samples = s->samples;
	out->n = s->n;
	out->interval_s = (double)(s->samples[s->n - 1].mono_ns - start) / 1e9;
	allowance(s, &out->allowance);
	host_window(s, &out->host);
	cpu1 = own_cpu();
	out->self_cpu_s = cpu0 >= 0 && cpu1 >= cpu0 ? cpu1 - cpu0 : -1;
	return VT_OK;
}

void vt_thread_sampler_next(struct vt_thread_sampler *s)
{
	size_t i;

	if (s->n == 0)
		return;
	for (i = 0; i + 1 < s->n; i++)
		vt_threads_sample_release(&s->samples[i]);
	s->samples[0] = s->samples[s->n - 1];
	s->n = 1;
}

void vt_thread_sampler_close(struct vt_thread_sampler *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->n; i++)
		vt_threads_sample_release(&s->samples[i]);
	free(s->samples);
	vt_watch_close(s->w);
	vt_buf_release(&s->buf);
	free(s);
}

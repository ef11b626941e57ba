/*
 * pprof_serve.c — profiles on /debug/pprof/ for `vitals serve` (see pprof_serve.h).
 */
#include "serve/pprof_serve.h"

#include "base/clock.h"
#include "render/allocs.h"
#include "render/profile_pprof.h"
#include "sample/allocs.h"
#include "sample/profiler.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PIDS_MAX 512

struct vt_pprof_serve {
	const struct vt_procfs *pfs;
	struct vt_exporter *x;
	pthread_mutex_t lock;
	double *busy_until;           /* per target: monotonic end of the profile running, 0 none */
	size_t ntargets;
};

struct pprof_job {
	struct vt_pprof_serve *ps;
	size_t target;
	pid_t pid;
	unsigned seconds;
	bool wall;
	bool allocs;                  /* an allocation profile (the agent's sampling) */
	char label[256];              /* the target's, copied on the server's thread */
	struct vt_http_job *j;        /* while it runs */
	volatile sig_atomic_t stop;
};

int vt_pprof_serve_open(const struct vt_procfs *pfs, struct vt_exporter *x, struct vt_pprof_serve **out,
			struct vt_err *err)
{
	struct vt_pprof_serve *ps = calloc(1, sizeof(*ps));

	*out = NULL;
	if (!ps)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory for the profiles");
	ps->pfs = pfs;
	ps->x = x;
	ps->ntargets = vt_exporter_target_count(x);
	ps->busy_until = calloc(ps->ntargets ? ps->ntargets : 1, sizeof(*ps->busy_until));
	if (!ps->busy_until) {
		free(ps);
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory for the profiles");
	}
	pthread_mutex_init(&ps->lock, NULL);
	*out = ps;
	return VT_OK;
}

void vt_pprof_serve_close(struct vt_pprof_serve *ps)
{
	if (!ps)
		return;
	pthread_mutex_destroy(&ps->lock);
	free(ps->busy_until);
	free(ps);
}

/* An answer at once: status and a line of text. */
static void answer(struct vt_http_answer *a, unsigned status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void answer(struct vt_http_answer *a, unsigned status, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	a->status = status;
	a->content_type = "text/plain; charset=utf-8";
	vt_buf_reset(&a->body);
	if (vt_buf_appendf(&a->body, "%s\n", line) != VT_OK)
		vt_buf_reset(&a->body);
}

/* The targets' labels, quoted and joined, for a 404 or 400. */
static void known_targets(const struct vt_pprof_serve *ps, char *out, size_t cap)
{
	size_t w = 0;

	out[0] = 0;
	for (size_t i = 0; i < ps->ntargets && w < cap; i++)
		w += (size_t)snprintf(out + w, cap - w, "%s'%s'", i ? ", " : "",
				      vt_exporter_target_label(ps->x, i));
}

/* seconds=N: 1 .. VT_PPROF_SECONDS_MAX, default 30; 0 and an answer when it is not. */
static unsigned parse_seconds(const char *v, struct vt_http_answer *a)
{
	char *end;
	long n;

	if (!v || !*v)
		return VT_PPROF_SECONDS_DEFAULT;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || *end || n <= 0) {
		answer(a, 400, "seconds '%s': a whole number of seconds, 1 to %d", v, VT_PPROF_SECONDS_MAX);
		return 0;
	}
	if (n > VT_PPROF_SECONDS_MAX) {
		answer(a, 400, "seconds %ld: at most %d (vitals serve caps a profile's length)", n,
		       VT_PPROF_SECONDS_MAX);
		return 0;
	}
	return (unsigned)n;
}

/* Which target and process: target=LABEL, pid=PID, or the only target.  false: answered. */
static bool pick_target(struct vt_pprof_serve *ps, void *req, struct vt_http_answer *a, size_t *ti, pid_t *pid)
{
	const char *label = vt_http_arg(req, "target"), *pidarg = vt_http_arg(req, "pid");
	char known[768];
	pid_t pids[PIDS_MAX];
	pid_t want = 0;
	size_t i, n, k;
	struct vt_err err;

	known_targets(ps, known, sizeof(known));
	if (pidarg) {
		char *end;
		long v;

		errno = 0;
		v = strtol(pidarg, &end, 10);
		if (errno || *end || v <= 0 || v > 0x7fffffff) {
			answer(a, 400, "pid '%s': a process id", pidarg);
			return false;
		}
		want = (pid_t)v;
	}
	if (!label && !pidarg && ps->ntargets != 1) {
		answer(a, 400, "several targets: say which with target=LABEL or pid=PID (targets: %s)", known);
		return false;
	}
	for (i = 0; i < ps->ntargets; i++) {
		if (label && strcmp(label, vt_exporter_target_label(ps->x, i)) != 0)
			continue;
		vt_err_clear(&err);
		if (vt_exporter_target_pids(ps->x, i, pids, PIDS_MAX, &n, &err) != VT_OK) {
			answer(a, 500, "vitals: %s", err.msg[0] ? err.msg : vt_code_str(err.code));
			return false;
		}
		if (!want) {
			if (n == 0) {
				answer(a, 404, "target '%s' has no process now", vt_exporter_target_label(ps->x, i));
				return false;
			}
			*ti = i;
			*pid = pids[0];
			return true;
		}
		for (k = 0; k < n; k++)
			if (pids[k] == want) {
				*ti = i;
				*pid = want;
				return true;
			}
	}
	if (label && want)
		answer(a, 404, "no process %d in target '%s' (targets: %s)", (int)want, label, known);
	else if (label)
		answer(a, 404, "no target '%s' (targets: %s)", label, known);
	else
		answer(a, 404, "process %d is not one of the targets' (targets: %s)", (int)want, known);
	return false;
}

void vt_pprof_serve_begin(struct vt_pprof_serve *ps, const char *path, void *req, struct vt_http_answer *a,
			  void **job)
{
	struct pprof_job *jb;
	unsigned seconds;
	bool wall = false, allocs = false;
	size_t ti = 0;
	pid_t pid = 0;
	double now;

	*job = NULL;
	if (strcmp(path, "/debug/pprof/profile") == 0)
		wall = false;
	else if (strcmp(path, "/debug/pprof/wall") == 0)
		wall = true;
	else if (strcmp(path, "/debug/pprof/allocs") == 0)
		allocs = true;
	else {
		answer(a, 404, "not found: vitals serves /debug/pprof/profile (CPU), /debug/pprof/wall "
		       "(wall clock) and /debug/pprof/allocs (allocations, with the agent), ?seconds=N "
		       "(default %d, at most %d)", VT_PPROF_SECONDS_DEFAULT, VT_PPROF_SECONDS_MAX);
		return;
	}
	if (!(seconds = parse_seconds(vt_http_arg(req, "seconds"), a)))
		return;
	if (!pick_target(ps, req, a, &ti, &pid))
		return;
	now = vt_mono_s();
	pthread_mutex_lock(&ps->lock);
	if (ps->busy_until[ti] > 0) {
		double left = ps->busy_until[ti] - now;

		pthread_mutex_unlock(&ps->lock);
		answer(a, 429, "a profile of target '%s' is running (one at a time): %.0f s left",
		       vt_exporter_target_label(ps->x, ti), left > 0 ? ceil(left) : 1);
		a->retry_after_s = left > 0 ? (unsigned)ceil(left) + 1 : 1;
		return;
	}
	jb = calloc(1, sizeof(*jb));
	if (!jb) {
		pthread_mutex_unlock(&ps->lock);
		answer(a, 503, "out of memory for a profile");
		return;
	}
	ps->busy_until[ti] = now + seconds;
	pthread_mutex_unlock(&ps->lock);
	jb->ps = ps;
	jb->target = ti;
	jb->pid = pid;
	jb->seconds = seconds;
	jb->wall = wall;
	jb->allocs = allocs;
	snprintf(jb->label, sizeof(jb->label), "%s", vt_exporter_target_label(ps->x, ti));
	*job = jb;
}

/* Every tick of the profiler: a client gone or a server stopping ends it with what it has. */
static void on_tick(void *ctx, double elapsed_s, double total_s, uint64_t samples)
{
	struct pprof_job *jb = ctx;

	(void)elapsed_s;
	(void)total_s;
	(void)samples;
	if (vt_http_job_over(jb->j))
		jb->stop = 1;
}

static double thread_cpu_s(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return NAN;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static unsigned status_of(int code)
{
	switch (code) {
	case VT_E_NOPROC:
	case VT_E_GONE:
	case VT_E_ZOMBIE:
		return 404;
	case VT_E_PERM:
		return 403;
	case VT_E_UNSUPPORTED:
	case VT_E_KTHREAD:
		return 501;
	default:
		return 500;
	}
}

/*
 * An allocation profile over the job's seconds, on the agent's path only
 * (libvitals-agent-allocs.so preloaded in the target: no probe, nothing
 * written to it); uprobes would put breakpoints in the target's code at a
 * client's request, which serve does not do.  Go's heap sample types.
 */
static void run_allocs(struct pprof_job *jb, struct vt_http_answer *a, int64_t time_nanos)
{
	struct vt_allocs_opts ao = { 0 };
	struct vt_allocs *al = NULL;
	struct vt_err err;
	char *mem = NULL;
	size_t len = 0;
	FILE *f;
	int rc;

	ao.duration_s = jb->seconds;
	ao.path = VT_ALLOCS_AGENT;
	ao.stop = &jb->stop;
	ao.progress = on_tick;
	ao.progress_ctx = jb;
	vt_err_clear(&err);
	rc = vt_allocs_run(jb->ps->pfs, jb->pid, &ao, &al, &err);
	jb->j = NULL;
	if (rc != VT_OK) {
		answer(a, rc == VT_E_NOTFOUND ? 501 : status_of(rc), "vitals: allocations of pid %d: %s — "
		       "serve reads them from the agent's sampling only (start the target with "
		       "LD_PRELOAD=libvitals-agent-allocs.so); it arms no uprobes",
		       (int)jb->pid, err.msg[0] ? err.msg : vt_code_str(rc));
		return;
	}
	f = open_memstream(&mem, &len);
	rc = f ? vt_render_allocs_pprof(f, al, time_nanos, &err) : VT_E_NOMEM;
	if (f && fclose(f) != 0 && rc == VT_OK)
		rc = VT_E_NOMEM;
	vt_allocs_free(&al);
	vt_buf_reset(&a->body);
	if (rc != VT_OK || vt_buf_append(&a->body, mem, len) != VT_OK) {
		free(mem);
		answer(a, 500, "vitals: writing the allocation profile failed");
		return;
	}
	free(mem);
	a->status = 200;
	a->content_type = "application/octet-stream";
}

void vt_pprof_serve_run(void *job, struct vt_http_job *j, struct vt_http_answer *a)
{
	struct pprof_job *jb = job;
	struct vt_profiler_opts po = { 0 };
	struct vt_pprof_opts out = { 0 };
	struct vt_profile *prof = NULL;
	struct vt_err err;
	struct timespec t0;
	char note[512];
	double cpu0 = thread_cpu_s(), w0 = vt_mono_s(), cpu, took;
	int rc;

	jb->j = j;
	if (vt_http_job_over(j)) {
		answer(a, 503, "the client left before the profile began");
		return;
	}
	clock_gettime(CLOCK_REALTIME, &t0);
	if (jb->allocs) {
		run_allocs(jb, a, (int64_t)t0.tv_sec * 1000000000 + t0.tv_nsec);
		return;
	}
	po.duration_s = jb->seconds;
	po.wall = jb->wall;
	po.stop = &jb->stop;
	po.progress = on_tick;
	po.progress_ctx = jb;
	vt_err_clear(&err);
	rc = vt_profiler_run(jb->ps->pfs, jb->pid, &po, &prof, &err);
	jb->j = NULL;
	if (rc != VT_OK) {
		answer(a, status_of(rc), "vitals: profile of pid %d: %s%s%s", (int)jb->pid,
		       err.msg[0] ? err.msg : vt_code_str(rc), err.hint[0] ? " — " : "", err.hint);
		return;
	}
	cpu = thread_cpu_s() - cpu0;
	took = vt_mono_s() - w0;
	snprintf(note, sizeof(note), "vitals serve's own CPU for this profile %.3f s over %.3f s (%.2f%% of one "
		 "core), on a thread of its own; target '%s'", cpu, took, took > 0 ? 100 * cpu / took : 0.0,
		 jb->label);
	out.wall = jb->wall;
	out.time_nanos = (int64_t)t0.tv_sec * 1000000000 + t0.tv_nsec;
	out.note = note;
	vt_buf_reset(&a->body);
	rc = vt_profile_pprof(prof, &out, &a->body, &err);
	vt_profile_free(&prof);
	if (rc != VT_OK) {
		answer(a, 500, "vitals: writing the profile: %s", err.msg[0] ? err.msg : vt_code_str(rc));
		return;
	}
	a->status = 200;
	a->content_type = "application/octet-stream";
}

void vt_pprof_serve_end(void *job)
{
	struct pprof_job *jb = job;

	if (!jb)
		return;
	pthread_mutex_lock(&jb->ps->lock);
	jb->ps->busy_until[jb->target] = 0;
	pthread_mutex_unlock(&jb->ps->lock);
	free(jb);
}

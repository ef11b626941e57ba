/*
 * tracer.c — the thread that makes a probe's ptrace requests: see tracer.h.
 */
#include "inject/tracer.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"

struct vt_tracer {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	/* the one job slot, under lock; posted and done are also read spinning */
	vt_tracer_job job;
	void *arg;
	bool posted, done, quit, retired;
	void (*last)(void *arg);   /* orphaned: run once the jobs end, then t is freed */
	void *last_arg;
	unsigned spin_us;
	int sigchld_fd;            /* the tracer thread's own; -1 when signalfd failed */
};

/* Yield until *flag or the tracer's quit is set, or spin_us passed. */
static void spin_for(const struct vt_tracer *t, const bool *flag, unsigned spin_us)
{
	uint64_t until = vt_mono_ns() + (uint64_t)spin_us * 1000;

	while (spin_us && !__atomic_load_n(flag, __ATOMIC_ACQUIRE) &&
	       !__atomic_load_n(&t->quit, __ATOMIC_ACQUIRE) && vt_mono_ns() < until)
		sched_yield();
}

static void tracer_free(struct vt_tracer *t)
{
	if (t->sigchld_fd >= 0)
		close(t->sigchld_fd);
	pthread_mutex_destroy(&t->lock);
	pthread_cond_destroy(&t->cond);
	free(t);
}

static void *tracer_main(void *arg)
{
	struct vt_tracer *t = arg;
	void *volatile warm;
	sigset_t chld;
	vt_tracer_job job;
	void *job_arg;
	bool retire = false;

	/*
	 * This thread's first malloc gives it an arena (an mmap and munmaps):
	 * made now, before any job, so that it never lands in a target's stop.
	 */
	warm = malloc(64);
	free(warm);
	/* Naps of tens of microseconds must be that short (the default slack is 50 us). */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	t->sigchld_fd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
	pthread_mutex_lock(&t->lock);
	while (!retire) {
		if (!t->job && !t->quit) {
			pthread_mutex_unlock(&t->lock);
			spin_for(t, &t->posted, t->spin_us);
			pthread_mutex_lock(&t->lock);
		}
		while (!t->job && !t->quit)
			pthread_cond_wait(&t->cond, &t->lock);
		if (!t->job)
			break;
		job = t->job;
		job_arg = t->arg;
		pthread_mutex_unlock(&t->lock);
		retire = job(t, job_arg);
		pthread_mutex_lock(&t->lock);
		t->job = NULL;
		t->retired = retire;
		__atomic_store_n(&t->posted, false, __ATOMIC_RELAXED);
		__atomic_store_n(&t->done, true, __ATOMIC_RELEASE);
		pthread_cond_broadcast(&t->cond);
	}
	pthread_mutex_unlock(&t->lock);
	/* A retired tracer exits at once: its tracees are let go now, not when the caller looks. */
	if (!retire && t->last) {
		t->last(t->last_arg);
		tracer_free(t);
	}
	/* Returning detaches whatever this thread still traces (the kernel's exit_ptrace). */
	return NULL;
}

int vt_tracer_start(unsigned spin_us, struct vt_tracer **out, struct vt_err *err)
{
	struct vt_tracer *t = calloc(1, sizeof(*t));
	sigset_t all, before;
	int rc;

	*out = NULL;
	if (!t)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory for the tracer thread");
	t->spin_us = spin_us;
	t->sigchld_fd = -1;
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->cond, NULL);
	/* The tracer thread takes no signal at all: created with all blocked. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &before);
	rc = pthread_create(&t->thread, NULL, tracer_main, t);
	pthread_sigmask(SIG_SETMASK, &before, NULL);
	if (rc) {
		tracer_free(t);
		return vt_err_set(err, rc == EAGAIN ? VT_E_NOMEM : VT_E_FAIL, rc,
				  "cannot start the tracer thread: %s", strerror(rc));
	}
	*out = t;
	return VT_OK;
}

bool vt_tracer_run(struct vt_tracer *t, vt_tracer_job job, void *arg)
{
	pthread_mutex_lock(&t->lock);
	if (t->retired) {
		pthread_mutex_unlock(&t->lock);
		return false;
	}
	t->job = job;
	t->arg = arg;
	t->done = false;
	__atomic_store_n(&t->posted, true, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&t->cond);
	pthread_mutex_unlock(&t->lock);
	spin_for(t, &t->done, t->spin_us);
	pthread_mutex_lock(&t->lock);
	while (!t->done)
		pthread_cond_wait(&t->cond, &t->lock);
	pthread_mutex_unlock(&t->lock);
	return true;
}

bool vt_tracer_retired(const struct vt_tracer *t)
{
	return __atomic_load_n(&t->retired, __ATOMIC_ACQUIRE);
}

static void tracer_quit(struct vt_tracer *t, void (*last)(void *), void *last_arg)
{
	pthread_mutex_lock(&t->lock);
	__atomic_store_n(&t->quit, true, __ATOMIC_RELEASE);   /* also read spinning */
	t->last = last;
	t->last_arg = last_arg;
	pthread_cond_broadcast(&t->cond);
	pthread_mutex_unlock(&t->lock);
}

void vt_tracer_end(struct vt_tracer *t)
{
	if (!t)
		return;
	tracer_quit(t, NULL, NULL);
	pthread_join(t->thread, NULL);
	tracer_free(t);
}

void vt_tracer_orphan(struct vt_tracer *t, void (*last)(void *arg), void *arg)
{
	pthread_t thread = t->thread;

	if (vt_tracer_retired(t)) {
		/* its thread has ended or is ending, and will run nothing more */
		vt_tracer_end(t);
		last(arg);
		return;
	}
	/* From the quit on, the thread frees t: read nothing of it after. */
	tracer_quit(t, last, arg);
	pthread_detach(thread);
}

void vt_tracer_nap(struct vt_tracer *t, uint64_t ns)
{
	struct signalfd_siginfo si[8];
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
	struct pollfd pfd = { t->sigchld_fd, POLLIN, 0 };

	if (!ns)
		return;
	if (t->sigchld_fd < 0) {
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
		return;
	}
	if (ppoll(&pfd, 1, &ts, NULL) > 0)
		while (read(t->sigchld_fd, si, sizeof(si)) > 0)
			;
}

bool vt_tracer_hears_stops(const struct vt_tracer *t)
{
	return t->sigchld_fd >= 0;
}

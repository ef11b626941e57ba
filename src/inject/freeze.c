/*
 * freeze.c — stop every thread of a process, and let them go (see freeze.h).
 */
#include "inject/freeze.h"
#include "inject/inject.h"
#include "inject/stop_guard.h"

#include "base/clock.h"
#include "proc/access.h"
#include "proc/task.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FREEZE_ROUNDS 16         /* task-list reads until no new thread appears */

struct frozen {
	pid_t tid;
	int sig;                     /* a signal it stopped with, handed back on release */
	bool stopped;
};

struct vt_freeze {
	struct frozen *t;
	size_t n, cap;
	double t0;                   /* when the first thread was taken */
	bool guarded;                /* the stop guard is armed and holds for us */
};

static struct frozen *find(struct vt_freeze *f, pid_t tid)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (f->t[i].tid == tid)
			return &f->t[i];
	return NULL;
}

/* Take tid: seize and interrupt.  0, -1 gone (exited meanwhile), or the errno of a refusal. */
static int take(struct vt_freeze *f, pid_t tid)
{
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 64;
		struct frozen *g = realloc(f->t, cap * sizeof(*g));

		if (!g)
			return ENOMEM;
		f->t = g;
		f->cap = cap;
	}
	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) < 0)
		return errno == ESRCH ? -1 : errno;
	if (!f->n)
		f->t0 = vt_mono_s();
	f->t[f->n++] = (struct frozen){ tid, 0, false };
	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) < 0 && errno != ESRCH)
		return errno;
	return 0;
}

/* Wait until every taken thread stopped (or exited), or the deadline passed. */
static bool wait_stopped(struct vt_freeze *f, double deadline)
{
	for (;;) {
		size_t i, waiting = 0;

		for (i = 0; i < f->n; i++) {
			struct frozen *t = &f->t[i];
			int status;
			pid_t r;

			if (t->stopped)
				continue;
			/* the stop's signal stays in the thread until the release, even if vitals dies */
			r = vt_inject_wait_keep(t->tid, &status);
			if (r == t->tid && WIFSTOPPED(status)) {
				t->stopped = true;
				if ((status >> 16) == 0 && WSTOPSIG(status) != SIGTRAP)
					t->sig = WSTOPSIG(status);   /* a signal on its way in: keep it */
			} else if (r == t->tid || (r < 0 && errno == ECHILD)) {
				t->stopped = true;   /* it exited: nothing to let go */
				t->tid = 0;
			} else {
				waiting++;
			}
		}
		if (!waiting)
			return true;
		if (vt_mono_s() > deadline)
			return false;
		nanosleep(&(struct timespec){ 0, 50000 }, NULL);
	}
}

unsigned vt_freeze_count(const struct vt_freeze *f)
{
	size_t i;
	unsigned n = 0;

	for (i = 0; f && i < f->n; i++)
		n += f->t[i].tid != 0;
	return n;
}

void vt_freeze_release(struct vt_freeze **fp, double *stopped_ms)
{
	struct vt_freeze *f = *fp;
	size_t i;

	if (!f)
		return;
	for (i = 0; i < f->n; i++)
		if (f->t[i].tid)
			ptrace(PTRACE_DETACH, f->t[i].tid, NULL, (void *)(long)f->t[i].sig);
	if (stopped_ms)
		*stopped_ms = f->n ? (vt_mono_s() - f->t0) * 1e3 : 0;
	if (f->guarded) {
		vt_stop_guard_release();
		vt_stop_guard_disarm();
	}
	free(f->t);
	free(f);
	*fp = NULL;
}

int vt_freeze_all(const struct vt_procfs *pfs, pid_t pid, int timeout_ms, struct vt_freeze **out,
		  struct vt_err *err)
{
	struct vt_freeze *f = calloc(1, sizeof(*f));
	double deadline = vt_mono_s() + timeout_ms / 1e3;
	int pid_fd = -1, rc = VT_OK, round;

	*out = NULL;
	if (!f)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
	if ((rc = vt_pid_open(pfs, pid, &pid_fd, err)))
		goto fail;
	/* Kept by a watchdog: a stopped vitals cannot keep the threads stopped. */
	if ((rc = vt_stop_guard_arm(err)))
		goto fail;
	vt_stop_guard_hold();
	f->guarded = true;
	for (round = 0; round < FREEZE_ROUNDS; round++) {
		pid_t *tids = NULL;
		size_t n = 0, i, added = 0;

		if ((rc = vt_task_list(pid_fd, &tids, &n, err)))
			goto fail;
		for (i = 0; i < n && rc == VT_OK; i++) {
			int e;

			if (find(f, tids[i]))
				continue;
			e = take(f, tids[i]);
			if (e > 0) {
				rc = e == EPERM ? VT_E_PERM : e == ENOMEM ? VT_E_NOMEM : VT_E_FAIL;
				vt_err_set(err, rc, e, "cannot stop thread %d of %d: %s", (int)tids[i], (int)pid,
					   strerror(e));
				if (e == EPERM) {
					char reason[VT_ERR_MSG_MAX / 2], hint[VT_ERR_MSG_MAX];

					vt_access_explain(pfs, "ptrace", -1, pid_fd, reason, sizeof(reason), hint,
							  sizeof(hint));
					vt_err_set(err, VT_E_PERM, e, "cannot stop thread %d of %d: %s", (int)tids[i],
						   (int)pid, reason);
					vt_err_hint(err, "%s", hint);
				}
			}
			added += e == 0;
		}
		free(tids);
		if (rc)
			goto fail;
		if (!wait_stopped(f, deadline)) {
			rc = vt_err_set(err, VT_E_TIMEOUT, 0, "a thread of %d did not stop within %d ms (uninterruptible "
					"sleep?): every thread let go, nothing read", (int)pid, timeout_ms);
			goto fail;
		}
		if (!added)
			break;          /* the task list held still: every thread is stopped */
	}
	if (!vt_freeze_count(f)) {
		rc = vt_err_set(err, VT_E_GONE, 0, "process %d exited", (int)pid);
		goto fail;
	}
	close(pid_fd);
	*out = f;
	return VT_OK;
fail:
	if (pid_fd >= 0)
		close(pid_fd);
	vt_freeze_release(&f, NULL);
	return rc;
}

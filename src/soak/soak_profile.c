/*
 * soak_profile.c — a profile in its own thread (see soak_profile.h).
 */
#include "soak/soak_profile.h"

#include "sample/profiler.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct vt_soak_prof {
	pthread_t thread;
	struct vt_procfs pfs;        /* the thread's own */
	pid_t pid;
	struct vt_profiler_opts opts;
	volatile sig_atomic_t stop;  /* the profiler's opts.stop */
	atomic_bool done;
	/* the thread's result, read after the join */
	int rc;
	struct vt_err err;
	struct vt_profile *profile;
};

static void *run(void *arg)
{
	struct vt_soak_prof *sp = arg;

	sp->rc = vt_profiler_run(&sp->pfs, sp->pid, &sp->opts, &sp->profile, &sp->err);
	atomic_store(&sp->done, true);
	return NULL;
}

int vt_soak_prof_start(const struct vt_procfs *pfs, pid_t pid, double duration_s, unsigned hz,
		       struct vt_soak_prof **out, struct vt_err *err)
{
	struct vt_soak_prof *sp;
	sigset_t all, old;
	int rc;

	*out = NULL;
	sp = calloc(1, sizeof(*sp));
	if (!sp)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
	if ((rc = vt_procfs_open(&sp->pfs, pfs->live ? NULL : pfs->proc_root, pfs->live ? NULL : pfs->sys_root,
				 err))) {
		free(sp);
		return rc;
	}
	sp->pid = pid;
	sp->opts.duration_s = duration_s;
	sp->opts.hz = hz;
	sp->opts.stop = &sp->stop;
	atomic_init(&sp->done, false);
	/* the thread starts with every signal blocked: a stop signal is the loop's */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&sp->thread, NULL, run, sp);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		vt_procfs_close(&sp->pfs);
		free(sp);
		return vt_err_set(err, VT_E_FAIL, rc, "cannot start the profiler's thread: %s", strerror(rc));
	}
	*out = sp;
	return VT_OK;
}

bool vt_soak_prof_done(const struct vt_soak_prof *sp)
{
	return atomic_load(&((struct vt_soak_prof *)sp)->done);
}

void vt_soak_prof_stop(struct vt_soak_prof *sp)
{
	sp->stop = 1;
}

pid_t vt_soak_prof_pid(const struct vt_soak_prof *sp)
{
	return sp->pid;
}

int vt_soak_prof_collect(struct vt_soak_prof **spp, struct vt_profile **out, bool *partial,
			 struct vt_err *err)
{
	struct vt_soak_prof *sp = *spp;
	int rc;

	*out = NULL;
	*partial = false;
	pthread_join(sp->thread, NULL);
	rc = sp->rc;
	if (rc == VT_OK) {
		*out = sp->profile;
		/* ended before its time by the stop, not by the target exiting */
		*partial = sp->stop && !sp->profile->meta.exited &&
			   sp->profile->meta.duration_s < sp->opts.duration_s - 0.05;
	} else if (err) {
		*err = sp->err;
	}
	vt_procfs_close(&sp->pfs);
	free(sp);
	*spp = NULL;
	return rc;
}

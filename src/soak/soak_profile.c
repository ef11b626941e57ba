/*
 * soak_profile.c — a profile in its own thread (see soak_profile.h).
 */
#include "soak/soak_profile.h"

#include "sample/allocs.h"
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
	enum vt_soak_prof_kind kind;
	double duration_s;
	struct vt_profiler_opts cpu;
	struct vt_allocs_opts allocs;
	volatile sig_atomic_t stop;  /* the profiler's opts.stop */
	volatile sig_atomic_t *probes_armed;   /* allocs: cleared when its run ends */
	atomic_bool done;
	/* the thread's result, read after the join */
	int rc;
	struct vt_err err;
	struct vt_soak_prof_result res;
};

static void *run(void *arg)
{
	struct vt_soak_prof *sp = arg;

	if (sp->kind == VT_SOAK_PROF_ALLOCS) {
		sp->rc = vt_allocs_run(&sp->pfs, sp->pid, &sp->allocs, &sp->res.allocs, &sp->err);
		/* its probes are out: a Ctrl-Z that came after its last look at the flag stops
		 * vitals now, not when the loop collects this */
		if (sp->probes_armed)
			*sp->probes_armed = 0;
		if (sp->allocs.pause && *sp->allocs.pause && sp->allocs.paused)
			sp->allocs.paused(sp->allocs.progress_ctx);
	} else {
		sp->rc = vt_profiler_run(&sp->pfs, sp->pid, &sp->cpu, &sp->res.profile, &sp->err);
	}
	atomic_store(&sp->done, true);
	return NULL;
}

int vt_soak_prof_start(const struct vt_procfs *pfs, pid_t pid, const struct vt_soak_prof_opts *opts,
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
	sp->kind = opts->kind;
	sp->duration_s = opts->duration_s;
	sp->cpu.duration_s = opts->duration_s;
	sp->cpu.hz = opts->hz;
	sp->cpu.stop = &sp->stop;
	sp->allocs.duration_s = opts->duration_s;
	sp->allocs.budget = opts->budget;
	sp->allocs.stop = &sp->stop;
	sp->allocs.pause = opts->pause;
	sp->allocs.paused = opts->paused;
	sp->allocs.progress_ctx = opts->pause_ctx;   /* what paused() is given */
	sp->probes_armed = opts->probes_armed;
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

int vt_soak_prof_collect(struct vt_soak_prof **spp, struct vt_soak_prof_result *out, struct vt_err *err)
{
	struct vt_soak_prof *sp = *spp;
	int rc;

	memset(out, 0, sizeof(*out));
	pthread_join(sp->thread, NULL);
	rc = sp->rc;
	if (rc == VT_OK) {
		bool exited = sp->res.allocs ? sp->res.allocs->meta.exited : sp->res.profile->meta.exited;
		double took = sp->res.allocs ? sp->res.allocs->meta.duration_s : sp->res.profile->meta.duration_s;

		*out = sp->res;
		/* ended before its time by the stop, not by the target exiting */
		out->partial = sp->stop && !exited && took < sp->duration_s - 0.05;
	} else if (err) {
		*err = sp->err;
	}
	vt_procfs_close(&sp->pfs);
	free(sp);
	*spp = NULL;
	return rc;
}

void vt_soak_prof_result_release(struct vt_soak_prof_result *r)
{
	vt_profile_free(&r->profile);
	vt_allocs_free(&r->allocs);
}

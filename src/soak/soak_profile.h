/*
 * soak_profile.h — one profile taken in its own thread while a soak goes on
 * sampling: a CPU profile (sample/profiler.h) for `vitals soak
 * --profile-every`, or an allocation profile (sample/allocs.h) for
 * `--allocs-every`.
 *
 * The soak's loop must not stall for the seconds a profile takes: the
 * profiler runs in a thread of its own, with its own procfs handle, and
 * every signal blocked (a Ctrl-C is the loop's to see).  The loop polls
 * whether it is done, and collects the profile to write it through the
 * store in the loop's own thread (one SQLite connection, one thread).
 * Stopping asks the profiler to end early; the profile so far is
 * collected as partial.
 */
#ifndef VT_SOAK_SOAK_PROFILE_H
#define VT_SOAK_SOAK_PROFILE_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "base/error.h"
#include "proc/procfs.h"
#include "sample/allocs.h"
#include "sample/profile.h"

enum vt_soak_prof_kind {
	VT_SOAK_PROF_CPU,        /* sample/profiler.h */
	VT_SOAK_PROF_ALLOCS,     /* sample/allocs.h */
};

struct vt_soak_prof_opts {
	enum vt_soak_prof_kind kind;
	double duration_s;
	unsigned hz;             /* CPU: sampling rate, 0 the profiler's default */
	double budget;           /* allocs: the slowdown allowed, 0 the default */
	/* allocs: set (by SIGTSTP) to be stopped: the window in progress is closed
	 * first, then paused(pause_ctx) is called from the profile's thread and
	 * returns when vitals is continued (sample/allocs.h); NULL not asked */
	volatile sig_atomic_t *pause;
	void (*paused)(void *ctx);
	void *pause_ctx;
	volatile sig_atomic_t *probes_armed;   /* allocs: cleared by its thread when its run
	                                        * ends (the probes out); NULL none */
};

/* What a profile thread took: one of the two, as its kind. */
struct vt_soak_prof_result {
	struct vt_profile *profile;   /* CPU (vt_profile_free) */
	struct vt_allocs *allocs;     /* allocs (vt_allocs_free) */
	bool partial;                 /* stopped before its duration */
};

struct vt_soak_prof;

/*
 * Start taking a profile of pid as opts says in a new thread.  pfs's roots
 * are opened again for the thread.  VT_E_NOMEM, VT_E_FAIL (no thread), or
 * the error opening the roots; the profiler's own errors come with
 * vt_soak_prof_collect.
 */
int vt_soak_prof_start(const struct vt_procfs *pfs, pid_t pid, const struct vt_soak_prof_opts *opts,
		       struct vt_soak_prof **out, struct vt_err *err);

/* Has the profiler finished (collect will not wait)? */
bool vt_soak_prof_done(const struct vt_soak_prof *sp);

/* Ask it to end now (the soak ends): the profile so far, marked partial. */
void vt_soak_prof_stop(struct vt_soak_prof *sp);

/* The pid it profiles. */
pid_t vt_soak_prof_pid(const struct vt_soak_prof *sp);

/*
 * Wait for the thread and free *sp.  VT_OK: *out holds the caller's
 * profile of sp's kind; else the profiler's error (VT_E_PERM with its hint,
 * VT_E_GONE, ...) and *out empty.
 */
int vt_soak_prof_collect(struct vt_soak_prof **sp, struct vt_soak_prof_result *out, struct vt_err *err);

/* Free what a result holds (either kind). */
void vt_soak_prof_result_release(struct vt_soak_prof_result *r);

#endif

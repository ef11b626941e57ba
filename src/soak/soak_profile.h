/*
 * soak_profile.h — one profile (sample/profiler.h) taken in its own thread
 * while a soak goes on sampling, for `vitals soak --profile-every`.
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

#include <stdbool.h>
#include <sys/types.h>

#include "base/error.h"
#include "proc/procfs.h"
#include "sample/profile.h"

struct vt_soak_prof;

/*
 * Start profiling pid for duration_s (hz: 0 default) in a new thread.
 * pfs's roots are opened again for the thread.  VT_E_NOMEM, VT_E_FAIL
 * (no thread), or the error opening the roots; the profiler's own errors
 * come with vt_soak_prof_collect.
 */
int vt_soak_prof_start(const struct vt_procfs *pfs, pid_t pid, double duration_s, unsigned hz,
		       struct vt_soak_prof **out, struct vt_err *err);

/* Has the profiler finished (collect will not wait)? */
bool vt_soak_prof_done(const struct vt_soak_prof *sp);

/* Ask it to end now (the soak ends): the profile so far, marked partial. */
void vt_soak_prof_stop(struct vt_soak_prof *sp);

/* The pid it profiles. */
pid_t vt_soak_prof_pid(const struct vt_soak_prof *sp);

/*
 * Wait for the thread and free *sp.  VT_OK: *out is the caller's profile
 * (vt_profile_free), *partial when it was stopped before its duration;
 * else the profiler's error (VT_E_PERM with its hint, VT_E_GONE, ...)
 * and *out NULL.
 */
int vt_soak_prof_collect(struct vt_soak_prof **sp, struct vt_profile **out, bool *partial,
			 struct vt_err *err);

#endif

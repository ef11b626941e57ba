/*
 * tracer.h — the thread that makes a probe's ptrace requests.
 *
 * The kernel ties a tracee to the thread that seized it, and detaches a
 * thread's tracees, a pending PTRACE_INTERRUPT included, when that thread
 * exits (exit_ptrace).  So every probe that stops a target's thread (an
 * injected call, inject/ptrace.c; a stack grab, inject/stack_grab.c) makes
 * its requests from a thread of its own, and that thread's end is the
 * last-resort release of whatever it still traces.
 *
 * A tracer thread takes no signal (it is created with all blocked), hears
 * its tracees' stops on a SIGCHLD signalfd (vt_tracer_nap), runs with a
 * timer slack of 1 ns (its naps are tens of microseconds), and runs one job
 * at a time for the thread that posts it, which waits for it.  A job bounds
 * its own time.  The caller must keep SIGCHLD blocked in every thread of
 * vitals while a tracer runs, or the kernel may deliver the stops'
 * SIGCHLD elsewhere (naps are then short, and a stop is still seen).
 *
 *	struct vt_tracer *t;
 *	vt_tracer_start(0, &t, &err);
 *	vt_tracer_run(t, job, &arg);    // job(t, &arg) on the tracer thread
 *	vt_tracer_end(t);               // joins it: everything it traced is let go
 *
 * Nothing here prints or reads /proc.
 */
#ifndef VT_INJECT_TRACER_H
#define VT_INJECT_TRACER_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"

struct vt_tracer;

/*
 * A job, run on the tracer thread.  It returns true when the thread must
 * end after it ("retire"): it may still trace a thread that only its exit
 * can let go.  A retired tracer's thread exits at once and runs no more
 * jobs; the caller then ends it (vt_tracer_end) to free it.
 */
typedef bool (*vt_tracer_job)(struct vt_tracer *t, void *arg);

/*
 * Start a tracer thread into *out.  spin_us: how long the poster and the
 * tracer yield waiting for each other before they sleep (jobs that follow
 * each other within microseconds while a thread stands stopped: a sleep
 * and a wake-up cost a scheduling round each); 0 sleeps at once.  Errors:
 * VT_E_NOMEM, VT_E_FAIL (pthread_create's reason).
 */
int vt_tracer_start(unsigned spin_us, struct vt_tracer **out, struct vt_err *err);

/* Run job(t, arg) on the tracer thread and wait for it.  false: the tracer had retired, nothing ran. */
bool vt_tracer_run(struct vt_tracer *t, vt_tracer_job job, void *arg);

/* Did the last job retire the tracer? */
bool vt_tracer_retired(const struct vt_tracer *t);

/* End the tracer thread and wait for it: whatever it still traces is let go.  Frees t; NULL is a no-op. */
void vt_tracer_end(struct vt_tracer *t);

/*
 * End the tracer without waiting: the thread runs last(arg) (a rescue that
 * may take minutes), then frees t and exits.  For a probe whose caller must
 * go on while a lost thread is still to be restored.  A retired tracer
 * runs no more: last(arg) then runs on the caller's thread.
 */
void vt_tracer_orphan(struct vt_tracer *t, void (*last)(void *arg), void *arg);

/*
 * On the tracer thread: sleep until one of its tracees reports (a SIGCHLD
 * on its signalfd) or ns pass.  Returns at once for ns 0.
 */
void vt_tracer_nap(struct vt_tracer *t, uint64_t ns);

/* Does the tracer hear its tracees' stops (its signalfd opened)?  If not, naps only sleep. */
bool vt_tracer_hears_stops(const struct vt_tracer *t);

#endif

/*
 * freeze.h — every thread of a process stopped for a moment, for a reading
 * that must not race with its writers (vitals census --consistent).
 *
 * Each thread is taken with PTRACE_SEIZE (no options: never
 * PTRACE_O_EXITKILL) and stopped with PTRACE_INTERRUPT; threads that appear
 * while the others stop are taken too, until the task list holds still.
 * Every wait is bounded by the caller's timeout: a thread that does not stop
 * in time (uninterruptible sleep) makes the whole freeze fail and every
 * thread is let go.  A signal that stops a thread on its way in is kept
 * and handed back when the thread is let go, so none is lost.
 *
 * If vitals dies while the threads are stopped (SIGKILL included) the
 * kernel detaches them and they run on: a seized thread in an interrupt
 * stop is woken when its tracer exits.  All requests come from the thread
 * that called vt_freeze_all, as ptrace requires.
 */
#ifndef VT_INJECT_FREEZE_H
#define VT_INJECT_FREEZE_H

#include <stddef.h>
#include <sys/types.h>

#include "base/error.h"
#include "proc/procfs.h"

struct vt_freeze;   /* opaque: the stopped threads */

/*
 * Stop every thread of pid within timeout_ms.  Errors (nothing is left
 * stopped): VT_E_NOPROC, VT_E_GONE, VT_E_PERM (ptrace refused: the message
 * says why), VT_E_TIMEOUT (a thread did not stop in time), VT_E_NOMEM.
 */
int vt_freeze_all(const struct vt_procfs *pfs, pid_t pid, int timeout_ms, struct vt_freeze **out,
		  struct vt_err *err);
/* Threads stopped. */
unsigned vt_freeze_count(const struct vt_freeze *f);
/* Let every thread go; *stopped_ms is how long the first one stood stopped.  NULL is a no-op. */
void vt_freeze_release(struct vt_freeze **f, double *stopped_ms);

#endif

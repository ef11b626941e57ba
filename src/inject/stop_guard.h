/*
 * stop_guard.h — a stopped vitals never keeps a target's thread stopped.
 *
 * A thread that vitals stops with ptrace waits for vitals to let it go.
 * Every wait of vitals is bounded, but a vitals that is itself stopped
 * (Ctrl-Z, SIGSTOP, a job controller, a debugger) keeps no bound: without
 * this guard the target's thread stood stopped for as long as vitals did.
 * Two things keep the bound, whatever happens to vitals:
 *
 *   SIGTSTP (Ctrl-Z)   handled while the guard is in use: while a thread of
 *                      another process is held, the stop is put off, and
 *                      vitals stops itself as soon as it lets the last one go.
 *   SIGSTOP, a         a watchdog process ("vitals-watch", started on first
 *   debugger           use, in its own process group so that Ctrl-Z and
 *                      Ctrl-C of the terminal never reach it) looks at vitals
 *                      every VT_STOP_GUARD_POLL_MS while a session is armed.
 *                      Found stopped (state T) while it holds a thread, vitals
 *                      is continued with SIGCONT, lets the thread go, and
 *                      stops itself again; still stopped at the next looks,
 *                      or held by a tracer (state t: a debugger on vitals),
 *                      it is killed with SIGKILL, and the kernel lets the
 *                      target's thread go (exit_ptrace), as for any death of
 *                      vitals.  The watchdog says so on vitals's stderr.
 *
 * So a stop of vitals lengthens a target's stop by at most about
 * VT_STOP_GUARD_POLL_MS (plus the watchdog's wake-up on a busy host); it
 * never makes it longer than the bound vitals states for it.  What remains:
 * a watchdog stopped or frozen together with vitals (a frozen cgroup, a
 * SIGSTOP sent to both pids) cannot act.  The watchdog exits when vitals
 * does (its socket reaches end of file) and holds none of vitals's other
 * files.
 *
 * Usage: a session that may stop threads arms the guard (this starts the
 * watchdog if needed, so it can fail); each stretch during which a thread
 * of the target is, or may become, stopped because of vitals is held;
 * hold and release are atomics only, cheap enough for every grab of a
 * sampling profiler.
 *
 *	if (vt_stop_guard_arm(&err)) return ...;    before anything is seized
 *	vt_stop_guard_hold();                       before PTRACE_INTERRUPT
 *	...                                         the thread stopped
 *	vt_stop_guard_release();                    after PTRACE_DETACH
 *	vt_stop_guard_disarm();
 *
 * Thread-safe: any number of sessions in any threads may be armed and hold
 * at once.  Nothing here prints, except the watchdog's one line before it
 * kills vitals.
 */
#ifndef VT_INJECT_STOP_GUARD_H
#define VT_INJECT_STOP_GUARD_H

#include "base/error.h"

/* How often the watchdog looks at vitals while a session is armed. */
#define VT_STOP_GUARD_POLL_MS 20
/* Looks that find vitals stopped, in a row, before the watchdog kills it. */
#define VT_STOP_GUARD_KILL_LOOKS 3

/*
 * A session that may stop a thread of another process begins: start the
 * watchdog if it is not running (fork), install the SIGTSTP handler, and
 * wake the watchdog to look.  Errors: VT_E_NOMEM (no process or descriptor
 * left for the watchdog: the message says which), VT_E_FAIL.  On error
 * nothing may be stopped.
 */
int vt_stop_guard_arm(struct vt_err *err);
/* The session ended.  Every arm is matched by one disarm. */
void vt_stop_guard_disarm(void);

/* A thread of the target is, or may become, stopped because of vitals. */
void vt_stop_guard_hold(void);
/*
 * It was let go.  When no thread is held any more, a Ctrl-Z that came
 * meanwhile, or a SIGSTOP the watchdog undid, stops vitals now.
 */
void vt_stop_guard_release(void);

/* ---- for tests ------------------------------------------------------- */

/* The watchdog's pid, 0 if none was started. */
int vt_stop_guard_watchdog_pid(void);

#endif

/*
 * stack_grab.h — the registers and top of stack of one running thread,
 * taken by stopping it for a few microseconds with ptrace: the profiler's
 * fallback where perf_event_open is refused (perf_event_paranoid 3, a
 * container without CAP_PERFMON).
 *
 * One grab: the thread is seized (PTRACE_SEIZE: no stop), interrupted
 * (PTRACE_INTERRUPT), its stop awaited for at most timeout_us, its general
 * registers read and up to VT_STACK_GRAB_BYTES of its stack copied from
 * its stack pointer up (process_vm_readv), and it is let go at once with
 * PTRACE_DETACH.  Only that thread stops, and only for the copy: the
 * unwind is done afterwards from the copy, as with a perf sample.  The
 * result is a struct vt_perf_sample (registers in perf's order, the stack
 * copy, no callchain), so the profiler unwinds it on the same path.
 *
 * The thread is traced only during its grab, never between grabs: a
 * thread left seized would hold every signal sent to it, and every
 * job-control stop and SIGCONT, until vitals came back to release it, and
 * would linger as a zombie after its exit until vitals reaped it.
 *
 * What the thread may be doing when it stops, and what is done:
 *   the interrupt stop (ours)          sample, detach: it goes on as it was,
 *                                      an interrupted system call restarts
 *   a signal-delivery-stop (a signal   sample, detach with that signal: it
 *     reached it first)                is delivered as if vitals were not
 *                                      there (its siginfo kept)
 *   a group stop (SIGSTOP, SIGTSTP)    detach without sampling: the kernel
 *                                      puts the thread back in the stop
 *                                      (state T), SIGCONT continues it
 *   no stop within timeout_us          the tracer thread that seized it
 *     (uninterruptible sleep, or       exits: the kernel drops the pending
 *     waiting for a CPU)               interrupt and detaches it, so the stop
 *                                      never lands later; a new tracer
 *                                      thread serves the next grab
 *   it exits                           its exit is collected
 * If vitals dies at any instant, even by SIGKILL, the kernel detaches it
 * (exit_ptrace): from the interrupt stop it runs on, from a
 * signal-delivery-stop the signal is delivered, from a group stop it stays
 * stopped.  Every wait is bounded.
 *
 * One known effect remains, the same a SIGSTOP/SIGCONT pair has
 * (signal(7), "Interruption of system calls ... by stop signals"): a
 * thread that is just entering epoll_wait, semop, sigtimedwait or a socket
 * call with a receive timeout when the interrupt arrives gets EINTR from
 * it.  Grab running threads only (state R, as `vitals profile` does): a
 * blocked thread's stack is read without stopping it (/proc/TID/syscall).
 * Stops that came back with EINTR are counted (vt_stack_grab_stats.eintr).
 *
 * Budget: each thread may be stopped at most a share of its wall time
 * (opts.max_pause_share: over any T seconds, at most share x (T + 1 s)
 * plus one grab), and the session makes at most opts.max_grabs_per_s
 * grabs a second; a grab the budget holds back stops nothing.  The pause
 * of every grab is measured and added up for the report.
 *
 * All ptrace requests are made by a tracer thread the session owns (the
 * kernel ties a tracee to the thread that seized it); the caller's thread
 * posts one grab at a time and waits.  Opening blocks SIGCHLD in the
 * calling thread (the tracer takes the stops' SIGCHLD on a signalfd), and
 * closing restores it; a multithreaded caller should block it in its other
 * threads too (else stops are noticed up to 100 us late).  Another thread
 * of vitals calling waitpid(-1, __WALL) could take a stop report first:
 * the grab then times out and the thread is released all the same.
 *
 * x86-64 only, live /proc only.  Nothing here prints.
 */
#ifndef VT_INJECT_STACK_GRAB_H
#define VT_INJECT_STACK_GRAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/error.h"
#include "perf/perf_events.h"
#include "proc/procfs.h"

/* Stack copied per grab, from the stack pointer up (less at the top of the stack). */
#define VT_STACK_GRAB_BYTES (16u * 1024)
/* Defaults of struct vt_stack_grab_opts. */
#define VT_STACK_GRAB_SHARE_DEFAULT 0.01
#define VT_STACK_GRAB_RATE_DEFAULT 1000u

struct vt_stack_grab;   /* opaque: the tracer thread, the budgets, the counters */

struct vt_stack_grab_opts {
	double max_pause_share;      /* of each thread's wall time; 0: 1 %, at most 0.5 */
	unsigned max_grabs_per_s;    /* all threads together; 0: VT_STACK_GRAB_RATE_DEFAULT */
	bool running_only;           /* stop a thread only if /proc shows it running (R): a
	                              * CPU profile, which must not break a sleep to look */
};

/* Why a grab did not stop the thread although nothing failed. */
enum vt_stack_grab_held {
	VT_GRAB_TAKEN = 0,           /* it did: the sample is filled */
	VT_GRAB_HELD_THREAD,         /* this thread used up its pause share for now */
	VT_GRAB_HELD_RATE,           /* the session used up its grabs per second for now */
	VT_GRAB_NOT_RUNNING,         /* running_only, and the thread was not in state R */
};

/*
 * One grab.  sample is a perf sample (pid, tid, time_ns, ip, regs_ok,
 * regs, stack, stack_len; callchain NULL, in_kernel false) whose stack
 * points into stack_copy: do not copy the struct, pass a pointer.
 */
struct vt_stack_grab_sample {
	enum vt_stack_grab_held held;
	struct vt_perf_sample sample;
	char state;                  /* the thread's state in /proc just before: R, S, D ... */
	long syscall;                /* the system call it stopped in or was leaving (orig_rax), -1 none */
	bool syscall_restarts;       /* that call was interrupted and restarts (-ERESTART*) */
	bool queued;                 /* running_only: switched in between the last look at it
	                              * and its stop (schedstat): it was waiting for a CPU, so
	                              * it stopped where it had been preempted, not at a moment
	                              * of its running; a CPU profile drops the sample */
	int signal;                  /* the signal it stopped to take, passed on to it; 0 none */
	double pause_us;             /* from PTRACE_INTERRUPT to its release: the most it stood still */
	double stopped_us;           /* from its stop seen to its release: the least */
	uint8_t stack_copy[VT_STACK_GRAB_BYTES];
};

struct vt_stack_grab_stats {
	uint64_t grabs;              /* samples taken */
	uint64_t held_thread;        /* grabs the per-thread share held back */
	uint64_t held_rate;          /* grabs the session's rate held back */
	uint64_t not_running;        /* running_only: threads found not running, not stopped */
	uint64_t queued;             /* running_only: samples of a thread found waiting for a CPU */
	uint64_t timeouts;           /* threads that did not stop in time, released */
	uint64_t stopped;            /* found in a job-control stop, left in it */
	uint64_t gone;               /* threads that exited before or during their grab */
	uint64_t signals;            /* signals met at the stop and passed on */
	uint64_t eintr;              /* stopped in a system call returning EINTR */
	uint64_t tracer_restarts;    /* tracer threads ended to release a thread */
	uint32_t threads;            /* distinct threads grabbed */
	double pause_total_us;       /* sum of pause_us over every stop */
	double pause_max_us;
	double max_thread_share;     /* the largest share of a thread's wall time it stood still */
};

struct vt_stack_grab_thread {
	uint64_t grabs;
	double pause_us;             /* its total pause */
	double seen_s;               /* wall time since the session first tried to grab it */
};

/*
 * Open a session on process pid (nothing is stopped or traced yet): checks
 * that pid exists, is not vitals, is an x86-64 process, and that vitals may
 * ptrace it.  pfs must be the live /proc and outlive the session.
 * Errors:
 *   VT_E_NOPROC, VT_E_KTHREAD, VT_E_ZOMBIE
 *   VT_E_PERM        ptrace access refused: the message says which rule (other
 *                    user, kernel.yama.ptrace_scope, no CAP_SYS_PTRACE), the hint
 *                    how to grant it
 *   VT_E_UNSUPPORTED a recorded /proc tree, another ABI
 *   VT_E_USAGE       pid is vitals itself, opts out of range
 *   VT_E_NOMEM, VT_E_FAIL
 */
int vt_stack_grab_open(const struct vt_procfs *pfs, pid_t pid, const struct vt_stack_grab_opts *opts,
		       struct vt_stack_grab **out, struct vt_err *err);

/*
 * Grab thread tid of the session's process (timeout_us: how long its stop
 * may take to come, 0: 2000).  VT_OK with out->held == VT_GRAB_TAKEN and
 * the sample filled, or with out->held saying which budget held it back
 * or (running_only) that the thread was not running: nothing stopped.  Errors (the thread is never left stopped or traced):
 *   VT_E_TIMEOUT     it did not stop within timeout_us; released untouched
 *   VT_E_UNSUPPORTED it is in a job-control stop (state T): left in it
 *   VT_E_GONE        it exited (or is exiting)
 *   VT_E_NOPROC      no such thread in the process
 *   VT_E_PERM        ptrace refused (traced by another tracer: the message names it)
 *   VT_E_NOMEM, VT_E_FAIL
 */
int vt_stack_grab(struct vt_stack_grab *g, pid_t tid, unsigned timeout_us,
		  struct vt_stack_grab_sample *out, struct vt_err *err);

void vt_stack_grab_get_stats(const struct vt_stack_grab *g, struct vt_stack_grab_stats *out);
/* One thread's pause so far; false if the session never tried it. */
bool vt_stack_grab_thread(const struct vt_stack_grab *g, pid_t tid, struct vt_stack_grab_thread *out);

/* End the tracer thread (no thread is traced between grabs), restore SIGCHLD; sets *g NULL. */
void vt_stack_grab_close(struct vt_stack_grab **g);

/* ---- exposed for tests ---------------------------------------------------- */

/*
 * Microseconds the tracer waits between PTRACE_SEIZE and PTRACE_INTERRUPT
 * (0, the default: none).  A signal that reaches the thread in that window
 * is met as a signal-delivery-stop, which the tests need to see often.
 */
extern unsigned vt_stack_grab_test_seize_delay_us;

#endif

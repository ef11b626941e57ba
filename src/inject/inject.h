/*
 * inject.h — call a function inside a running process through ptrace.
 *
 * One thread of the target is stopped (never the others), its registers,
 * extended state and signal mask are saved, and a call is set up on its
 * stack below the red zone together with its way back: a signal frame
 * holding the thread's own state, which libc's signal-return trampoline
 * (rt_sigreturn) restores when the callee returns, with vitals watching or
 * not.  vitals sees that rt_sigreturn as a system-call stop, reads the
 * return value, and puts the thread's state back itself ("parked"), so an
 * interrupted system call restarts as if nothing happened when it is let
 * go, and signals that arrived meanwhile are delivered, none lost.  vitals
 * may die (SIGKILL) at any instant: the thread carries on unharmed.
 * docs/inject.md explains why this cannot deadlock or corrupt the target,
 * and which risks remain.
 *
 * Usage (the alloc layer does this for mallinfo2 and friends):
 *
 *	vt_inject_pick_thread(pfs, pid, 0, &tid, why, sizeof(why), &err);
 *	vt_inject_resolve(pfs, pid, &maps, "libc.so.6", "mallinfo2", &fn, &err);
 *	vt_inject_attach(pfs, pid, tid, 0, 1000, &s, &err);
 *	vt_inject_save_errno(s, errno_location_fn, 1000, &err);   recommended
 *	call.func = fn; ...; vt_inject_run(s, &call, 2000, &err);
 *	vt_inject_detach(&s, &stopped_us, &err);                    always
 *
 * or, shortest for the stopped thread, the same in one piece on the
 * session's tracer thread (what vitals heap does):
 *
 *	vt_inject_probe(pfs, pid, tid, 0, 1000, body, &arg, &attached, &stopped_us, &err);
 *
 * A VT_E_BUSY from pick or attach means no thread was where a call is safe
 * at that moment (awake, or in an unsafe call): not right now, so retry after
 * a millisecond or so.  VT_E_UNSUPPORTED is lasting: never for this process.
 *
 * Every wait is bounded.  All ptrace requests of a session are made by one
 * tracer thread that the session owns: if the chosen thread cannot be
 * stopped in time, that thread exits and the kernel drops the pending stop,
 * so the target is never left stopped.  SIGINT, SIGTERM, SIGHUP and SIGQUIT
 * are blocked in the calling thread from attach until detach returns, so a
 * Ctrl-C lets the call finish or be abandoned and the thread be restored
 * before vitals exits (the signal is then delivered); SIGCHLD too, which
 * announces the tracee's stops to the tracer thread's signalfd.  A
 * multithreaded caller must block them in its other threads too (else the
 * tracer notices stops up to 1 ms late).
 *
 * Nothing here prints.  Architecture-specific code is in call_<arch>.c
 * behind the small interface at the end of this file.
 */
#ifndef VT_INJECT_INJECT_H
#define VT_INJECT_INJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ptrace.h>
#include <sys/types.h>

#include "base/error.h"
#include "proc/maps.h"
#include "proc/procfs.h"

/* Largest scratch area a call may copy onto the target's stack. */
#define VT_INJECT_SCRATCH_MAX (64u * 1024)

/*
 * A call still running after its timeout is inspected every timeout; it is
 * abandoned at the latest after this many timeouts (min. VT_INJECT_HARD_MIN_MS).
 */
#define VT_INJECT_HARD_FACTOR 10
#define VT_INJECT_HARD_MIN_MS 2000

/* One stopped thread of one process.  Opaque. */
struct vt_inject_session;

enum vt_inject_flags {
	/*
	 * Accept a thread that is running user code, not blocked in a system
	 * call.  It may be inside the allocator holding a lock: the measured
	 * deadlock risk is 3-22 % (docs/inject.md).  Off by default.  A thread
	 * in an unsafe system call (mmap, fork, rt_sigsuspend...) stays refused.
	 */
	VT_INJECT_ALLOW_RUNNING = 1 << 0,
};

/*
 * Choose the thread of pid to stop: one in interruptible sleep in a system
 * call, preferring those that restart transparently and hold no user-space
 * lock (nanosleep, poll, select, read, accept, wait, pause), then those that
 * return EINTR to the program when stopped (epoll_wait, sigtimedwait), then
 * futex waits, then other blocking calls; among equals the one with the
 * least CPU time.  Never a running thread, one in uninterruptible sleep, one
 * changing the memory map (mmap, brk, madvise: may hold an arena lock), one
 * in fork/clone (holds every arena lock), or one in a call that swapped its
 * signal mask (rt_sigsuspend, ppoll/pselect6/epoll_pwait with a mask).
 * With VT_INJECT_ALLOW_RUNNING and no such thread, the least busy of the
 * threads running user code.
 *
 * *tid gets the thread; why (why_cap bytes) says "thread 123 (sleeper):
 * blocked in nanosleep".  Errors: VT_E_NOPROC, VT_E_GONE, VT_E_PERM,
 * VT_E_BUSY when no thread qualifies right now (the message lists why not),
 * VT_E_UNSUPPORTED when none ever will (another ABI, a stopped process).
 */
int vt_inject_pick_thread(const struct vt_procfs *pfs, pid_t pid, unsigned flags, pid_t *tid,
			  char *why, size_t why_cap, struct vt_err *err);

/* A thread's user stack pointer, as the pick read it from its syscall file. */
struct vt_inject_thread_sp {
	uint64_t sp;
	pid_t tid;
};

/*
 * The same, and the stack pointer of every thread whose syscall file gave
 * one (blocked, or preempted outside a system call; not those on a CPU) in
 * *sps (malloc'd, *nsps entries; NULL and 0 on error or when none did), so
 * that a caller can tell the threads' stacks without reading /proc again.
 */
int vt_inject_pick_thread_sps(const struct vt_procfs *pfs, pid_t pid, unsigned flags, pid_t *tid,
			      char *why, size_t why_cap, struct vt_inject_thread_sp **sps, size_t *nsps,
			      struct vt_err *err);

/*
 * Stop thread tid of process pid and save its state: PTRACE_SEIZE (never
 * PTRACE_O_EXITKILL; PTRACE_O_SUSPEND_SECCOMP when the thread has a seccomp
 * filter, which needs CAP_SYS_ADMIN), PTRACE_INTERRUPT, a wait of at most
 * timeout_ms, then every register set (general, extended) and the signal
 * mask are saved.  A signal that reaches the thread before it stops is
 * delivered as usual.  The state of the thread when it stopped is checked
 * again against the rules of vt_inject_pick_thread.  pfs must be the live
 * /proc.
 *
 * Errors (nothing is left changed in the target):
 *   VT_E_NOPROC     no such process or thread, or tid is not a thread of pid
 *   VT_E_GONE       it exited meanwhile
 *   VT_E_ZOMBIE, VT_E_KTHREAD
 *   VT_E_PERM       ptrace refused: the message says why (other user, yama
 *                   ptrace_scope, no CAP_SYS_PTRACE, already traced by PID
 *                   (comm), seccomp without CAP_SYS_ADMIN)
 *   VT_E_UNSUPPORTED  the process is stopped, a shadow stack is enabled, or its
 *                   code lacks the way back of a call (vt_inject_find_tramp)
 *   VT_E_BUSY       the thread was not in a usable state when it stopped, or
 *                   the process is being stopped by job control (message says
 *                   which): not right now, released untouched
 *   VT_E_TIMEOUT    the thread did not stop within timeout_ms
 *                   (uninterruptible sleep); it was released untouched
 *   VT_E_NOMEM, VT_E_FAIL
 */
int vt_inject_attach(const struct vt_procfs *pfs, pid_t pid, pid_t tid, unsigned flags,
		     int timeout_ms, struct vt_inject_session **out, struct vt_err *err);

/* What to do with a call that outlives its timeout. */
enum vt_inject_abandon {
	/*
	 * Abandon it when the thread is found blocked in a system call (futex,
	 * nanosleep, read...): right for callees that hold no lock while they
	 * wait, which glibc's mallinfo2, malloc_trim and malloc_info guarantee
	 * (they take one arena mutex at a time).  A callee running user code
	 * is let run until VT_INJECT_HARD_FACTOR timeouts.
	 */
	VT_INJECT_ABANDON_BLOCKED = 0,
	/*
	 * Let it run until VT_INJECT_HARD_FACTOR timeouts even when blocked:
	 * for callees that may wait while holding a lock (jemalloc's mallctl
	 * holds ctl_mtx while it takes arena mutexes).
	 */
	VT_INJECT_ABANDON_LATE,
};

struct vt_inject_call {
	uint64_t func;             /* address in the target */
	uint64_t args[6];          /* integer/pointer arguments */
	uint32_t scratch_args;     /* bit i: args[i] is an offset into scratch, replaced by its address */
	const void *scratch_in;    /* copied below the red zone before the call; NULL: zeros */
	size_t scratch_len;        /* <= VT_INJECT_SCRATCH_MAX; 0 for none */
	void *scratch_out;         /* not NULL: scratch_len bytes copied back after the call */
	enum vt_inject_abandon abandon;
	/* results */
	uint64_t ret;              /* integer return register after the call */
	uint64_t scratch_addr;     /* where scratch was in the target (for pointers into it) */
	double call_us;            /* wall time the callee ran */
};

/*
 * Run one call on the attached thread.  While it runs, every signal is
 * blocked for the thread except the synchronous faults (SIGSEGV SIGBUS
 * SIGILL SIGFPE SIGTRAP SIGSYS: a fault while blocked would make the kernel
 * reset the target's handler to SIG_DFL), and the syscall restart logic is
 * off (orig_rax = -1 on x86-64).  Afterwards, whatever happened, the thread
 * is parked again with its own state; signals kept during the call (a
 * SIGSTOP, a SIGSEGV sent with kill) are sent to it again.
 * The session stays attached.  Errors:
 *   VT_E_TIMEOUT    the call outlived timeout_ms and was abandoned (the
 *                   message says where the thread was: futex, nanosleep...);
 *                   or it ran past the hard limit in uninterruptible sleep
 *                   and could not be stopped: only detach is left to do
 *   VT_E_FAULT      the callee faulted (SIGSEGV at a non-zero address, ...);
 *                   the signal was suppressed, the call abandoned
 *   VT_E_GONE       the thread or process exited
 *   VT_E_IO         the scratch area could not be written or read
 *   VT_E_USAGE      bad arguments (scratch too large, no function)
 */
int vt_inject_run(struct vt_inject_session *s, struct vt_inject_call *call, int timeout_ms,
		  struct vt_err *err);

/*
 * Save the thread's errno through its own __errno_location() (address
 * errno_location in the target), so that it is put back after every call:
 * a callee that fails sets errno, and a program that reads errno after a
 * successful call (readdir) would otherwise see ours.  Errors as
 * vt_inject_run.
 */
int vt_inject_save_errno(struct vt_inject_session *s, uint64_t errno_location, int timeout_ms,
			 struct vt_err *err);

/*
 * Let the parked thread go (restoring first whatever a failed call left:
 * errno if saved, extended and general registers including orig_rax/rax,
 * so an interrupted system call restarts normally, and the signal mask, so
 * pending signals are delivered).  If an abandoned callee clobbered the
 * kernel's restart block that the thread's own interrupted nanosleep or
 * poll was to restart through, that call is run again from its start (or
 * returns EINTR when that is impossible).  *stopped_us (may be NULL) gets
 * how long the thread was stopped, from PTRACE_INTERRUPT to PTRACE_DETACH,
 * including the callees' time.
 * Frees the session and sets *s to NULL, also on error; NULL is a no-op.
 * Errors:
 *   VT_E_GONE      the thread exited (nothing to restore)
 *   VT_E_TIMEOUT   a call was still running and the thread could not be
 *                  stopped to restore it (uninterruptible sleep): the
 *                  session's tracer thread keeps trying in the background
 *                  and restores it when it stops, while vitals lives
 *   VT_E_FAIL      a ptrace request failed (message says which)
 */
int vt_inject_detach(struct vt_inject_session **s, double *stopped_us, struct vt_err *err);

/*
 * A probe's calls, made while the thread stands stopped: vt_inject_run and
 * vt_inject_save_errno on s, nothing that waits for another thread.
 */
typedef int (*vt_inject_body)(struct vt_inject_session *s, void *arg, struct vt_err *err);

/*
 * vt_inject_attach, body(s, arg), vt_inject_detach as one piece of work on
 * the session's tracer thread: from PTRACE_INTERRUPT to PTRACE_DETACH no
 * thread of vitals waits for another (each hand-off costs the stopped
 * thread a scheduling round), and the caller's thread sleeps once, for the
 * whole probe.  The body runs on the tracer thread, with every signal
 * blocked; it must not print or take a lock that the caller's thread may
 * hold.  The guarantees are those of attach, run and detach: the thread is
 * restored exactly whatever the body returns, also if vitals dies.
 *
 * *attached says whether the thread was stopped (false: the attach's error,
 * VT_E_BUSY among them, nothing was called).  Returns the body's error if
 * it failed, else the detach's; *stopped_us as vt_inject_detach.  maps, when
 * not NULL, is the caller's recent read of pid's maps, used to find the code
 * calls return through (checked byte by byte in the target all the same)
 * instead of reading them again.
 */
int vt_inject_probe(const struct vt_procfs *pfs, pid_t pid, pid_t tid, unsigned flags, int timeout_ms,
		    const struct vt_region_list *maps, vt_inject_body body, void *arg, bool *attached,
		    double *stopped_us, struct vt_err *err);

/*
 * The address of function symbol in the first library mapped by pid whose
 * file name starts with lib_basename_prefix ("libc.so.6", "libjemalloc.so"),
 * from its .dynsym (else .symtab) and its load bias (start of its mapping at
 * file offset 0 minus the p_vaddr of its first PT_LOAD).  The file is the
 * target's own (<proc root>/PID/root/<path>, map_files/ for a deleted one),
 * and the first bytes of the function in the target's memory must equal the
 * file's, so a library replaced on disk is never trusted.  maps is the
 * target's /proc/PID/maps.  Errors: VT_E_NOTFOUND (library not mapped, or
 * symbol not defined; an IFUNC says so), VT_E_GONE, VT_E_PERM, VT_E_FAIL
 * (file does not match the mapping), VT_E_NOMEM.
 */
int vt_inject_resolve(const struct vt_procfs *pfs, pid_t pid, const struct vt_region_list *maps,
		      const char *lib_basename_prefix, const char *symbol, uint64_t *addr,
		      struct vt_err *err);
/*
 * The same for n symbols of one library, reading the file once: addrs[i]
 * for symbols[i].  Stops at the first symbol that fails (its error; the
 * addresses not reached stay 0).
 */
int vt_inject_resolve_many(const struct vt_procfs *pfs, pid_t pid, const struct vt_region_list *maps,
			   const char *lib_basename_prefix, const char *const *symbols,
			   uint64_t *addrs, size_t n, struct vt_err *err);

/* ---- exposed for tests ---------------------------------------------- */

/* /proc/PID/task/TID/syscall, parsed. */
struct vt_inject_syscall {
	bool running;              /* "running": on a CPU now */
	long nr;                   /* -1: blocked outside a system call */
	uint64_t args[6];
	uint64_t sp, pc;
};

/* Parse the syscall file text (buf need not be NUL-terminated).  False if malformed. */
bool vt_inject_syscall_parse(const char *buf, size_t len, struct vt_inject_syscall *out);

/* Register set number i as saved at attach (i = 0: general registers).  False if none. */
bool vt_inject_saved_regs(const struct vt_inject_session *s, unsigned i, const void **data,
			  size_t *len);

/* ---- shared inside src/inject ------------------------------------------ */

/* ptrace(req, tid, addr, data), again after EINTR; errno is the request's own. */
long vt_inject_ptrace(enum __ptrace_request req, pid_t tid, void *addr, void *data);

/*
 * waitpid(tid, status, __WALL | WNOHANG) that leaves a stop's report in the
 * thread (waitid WNOWAIT): a plain wait clears the signal a stop holds
 * (exit_code), and a tracer killed between that wait and its restart then
 * lets the thread go without the signal; left in place, the kernel
 * delivers it when it detaches a dead tracer's threads.  Only for a thread
 * that is let go (PTRACE_DETACH with the signal) before it is waited for
 * again.  An exit is collected as waitpid would.
 */
pid_t vt_inject_wait_keep(pid_t tid, int *status);

/* What /proc says about a thread before it is stopped (pick.c). */
struct vt_inject_precheck {
	bool seccomp;        /* the thread has a seccomp filter or strict mode */
	long uid;            /* the target's real uid, -1 if unknown */
};

/*
 * Refuse what /proc already rules out: no such thread (VT_E_NOPROC), kernel
 * thread, zombie, already traced (VT_E_PERM naming the tracer), stopped,
 * refused by the architecture (VT_E_UNSUPPORTED).  pid_fd is the process's directory.
 */
int vt_inject_precheck(const struct vt_procfs *pfs, int pid_fd, pid_t pid, pid_t tid,
		       struct vt_inject_precheck *pc, struct vt_err *err);
struct vt_arch_tramp;
/*
 * Find in pid's code (libc, else the dynamic linker, else its other code)
 * what calls return through (tramp.c).  VT_E_UNSUPPORTED when it lacks it.
 */
int vt_inject_find_tramp(int pid_fd, pid_t pid, struct vt_arch_tramp *t, struct vt_err *err);
/* The same with maps the caller read (NULL: read them). */
int vt_inject_find_tramp_in(int pid_fd, pid_t pid, const struct vt_region_list *maps, struct vt_arch_tramp *t,
			    struct vt_err *err);
/* How many vt_inject_find_tramp calls took a checked cache entry instead of scanning (tests). */
unsigned vt_inject_tramp_cache_hits(void);
/* Rewrite an EPERM from PTRACE_SEIZE in err with its reason (uid, yama, capability). */
void vt_inject_explain_perm(const struct vt_procfs *pfs, int pid_fd,
			    const struct vt_inject_precheck *pc, pid_t tid, struct vt_err *err);

/* ---- the per-architecture interface (call_<arch>.c) ----------------- */

/* How a thread stopped in a system call may be used. */
enum vt_sys_class {
	VT_SYS_NEVER = 0,   /* must not: maps memory, forks, exits, swapped its signal mask */
	VT_SYS_OTHER,       /* some other blocking call: may be inside a library holding a lock */
	VT_SYS_FUTEX,       /* a lock or condition wait: restarts; holds no arena lock in glibc */
	VT_SYS_EINTR,       /* returns EINTR to the program when stopped (signal(7)) */
	VT_SYS_SLEEP,       /* restarts transparently and is not inside a lock */
};

/* One register set saved and restored (PTRACE_GETREGSET note type). */
struct vt_arch_regset {
	unsigned type;      /* NT_PRSTATUS, NT_X86_XSTATE, ... */
	size_t max;         /* buffer size: the exact size, or an upper bound (a set that fills it is truncated) */
	bool exact;         /* the kernel returns exactly max bytes */
	int group;          /* of the sets in one group, the first that the kernel returns is used */
	const char *name;
};
extern const struct vt_arch_regset vt_arch_regsets[];
extern const unsigned vt_arch_nregsets;   /* vt_arch_regsets[0] is the general set */

/* What the general registers of a stopped thread say. */
struct vt_arch_stop {
	uint64_t pc, sp;
	long nr;            /* system call number, -1 when not in one */
	long ret;           /* return register: -ERESTART* while the call is to restart */
	bool restarting;    /* ret is -ERESTARTSYS/NOINTR/NOHAND/RESTART_RESTARTBLOCK */
	bool restart_block; /* ret is -ERESTART_RESTARTBLOCK (restart via restart_syscall) */
	uint64_t args[6];
};

/*
 * Code in the target that a call returns through, found in its libc before
 * any thread is stopped: the signal-return trampoline (glibc's __restore_rt,
 * rt_sigreturn), and a "store, pop, return" sequence that puts the callee's
 * return value into a slot of ours through a callee-saved register.
 */
enum vt_arch_reg { VT_REG_RBX, VT_REG_RBP, VT_REG_R12 };
struct vt_arch_tramp {
	uint64_t sigreturn;        /* 0: not found */
	uint64_t store;            /* 0: not found */
	enum vt_arch_reg store_reg;
	int64_t store_disp;
};
/* Look for what t lacks in len bytes of code mapped at addr. */
void vt_arch_tramp_scan(const unsigned char *code, size_t len, uint64_t addr, struct vt_arch_tramp *t);
/*
 * The registers a stopped thread is let go with: saved_gp with its
 * interrupted system call set to run again (as the kernel's signal code
 * does when no handler runs) and no restart logic left to the kernel, so
 * that any stop, and rt_sigreturn, lets it go the same way.  EXACT restarts
 * a call with a restart block (nanosleep) through restart_syscall, keeping
 * its remaining time; REEXEC runs it again from its start (rt_sigreturn
 * resets the restart block, and so does an abandoned callee's own sleep).
 */
enum vt_arch_resume { VT_RESUME_EXACT, VT_RESUME_REEXEC };
void vt_arch_resume_gp(const void *saved_gp, enum vt_arch_resume how, void *out_gp);

/* What a call is built from. */
struct vt_arch_call_in {
	const void *resume_gp;     /* the thread's registers to return to (vt_arch_resume_gp, REEXEC) */
	const void *fp;            /* its saved floating-point/extended state regset */
	size_t fp_len;
	uint64_t mask;             /* its signal mask, restored on the way back */
	const struct vt_arch_tramp *tramp;
	uint64_t func;
	uint64_t args[6];
	uint32_t scratch_args;     /* bit i: args[i] is an offset into scratch */
	size_t scratch_len;
};

/* A prepared call: where things go on the target's stack. */
struct vt_arch_frame {
	uint64_t scratch_addr;     /* 16-byte aligned, below the red zone */
	uint64_t ret_addr;         /* where the return value is stored */
	uint64_t write_addr;       /* first byte of the image */
	size_t image_len;          /* bytes of image from write_addr up to the end of scratch */
	uint64_t sigreturn_sp;     /* stack pointer at the trampoline's rt_sigreturn */
};

void vt_arch_stop_state(const void *gp, struct vt_arch_stop *out);
/* Ask once, before any thread is stopped, what the calls need from the CPU (slow in a VM). */
void vt_arch_prepare(void);
/* Upper bound of a call's image for these sizes. */
size_t vt_arch_image_max(size_t scratch_len, size_t fp_len);
/*
 * Lay out the call below the stack pointer of in->resume_gp, fill image
 * (frame->image_len bytes, to be written at frame->write_addr: the return
 * chain, a signal frame holding the thread's registers, floating-point
 * state and signal mask, the return-value slot, scratch zeroed) and build in
 * call_gp the registers for func(args).  The callee returns into the store,
 * the store into the trampoline, and rt_sigreturn restores the thread
 * whether or not vitals is still there.  VT_E_USAGE if the stack pointer
 * leaves no room.
 */
int vt_arch_setup_call(const struct vt_arch_call_in *in, void *call_gp, unsigned char *image,
		       struct vt_arch_frame *frame, struct vt_err *err);
/* gp, at a system-call stop, is the trampoline's rt_sigreturn of frame: the call returned. */
bool vt_arch_returned(const void *gp, const struct vt_arch_frame *frame);
/* Send gp straight to the trampoline's rt_sigreturn of frame (an abandoned call). */
void vt_arch_to_sigreturn(void *gp, const struct vt_arch_frame *frame, const struct vt_arch_tramp *t);
enum vt_sys_class vt_arch_syscall_class(long nr, const uint64_t args[6]);
const char *vt_arch_syscall_name(long nr);   /* "nanosleep", or NULL */
/* Refuse a thread the architecture cannot call into (from task status text); why filled. */
bool vt_arch_task_refused(const char *status, size_t len, char *why, size_t why_cap);

#endif

/*
 * ptrace.c — stop one thread, run calls on it, put it back exactly.
 *
 * A session owns a tracer thread (inject/tracer.h): it makes every ptrace
 * request, and its exit is the last-resort release.  The caller's thread
 * posts one job at a time and waits for it; every job is bounded in time.
 *
 * Between calls the thread is "parked": stopped, with its own extended
 * state, errno and signal mask in place and its registers set to let it go
 * on exactly (its interrupted system call made to run again, as the
 * kernel's signal code would).  A call changes them only while it runs, and
 * from the single request that starts it the thread's way back is a signal
 * frame on its stack that libc's rt_sigreturn trampoline restores: vitals
 * may die at any instant, the thread carries on (docs/inject.md).
 *
 * Stops are collected with waitpid(WNOHANG) after a short spin, then on the
 * tracer's SIGCHLD signalfd, always against a deadline.  During a call the
 * thread runs under PTRACE_SYSCALL.  The stops we
 * see and what we do:
 *   interrupt stop (PTRACE_EVENT_STOP, SIGTRAP)  ours: attached, or a slow call to inspect
 *   group stop (PTRACE_EVENT_STOP, SIGSTOP...)   someone stops the process: refuse
 *                                                at attach, let a call go on
 *   system-call stop, rt_sigreturn of our frame  the call returned
 *   system-call stop, any other                  the callee's own call: go on
 *   signal-delivery-stop, a fault of the callee  abandon the call, suppress it
 *   signal-delivery-stop, any other signal       outside a call: deliver it as
 *                                                usual; during one (SIGSTOP, a
 *                                                sent SIGSEGV): keep it, send it
 *                                                again when parking
 * Nothing here prints; the arch part is in call_<arch>.c.
 */
#include "inject/inject.h"
#include "inject/stop_guard.h"
#include "inject/tracer.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "proc/mem.h"

#define MAX_REGSETS 4
#define MAX_STASH 4
/* Waiting for the stop that a detach needs, and for a lost call in the background. */
#define DETACH_WAIT_MS 2000
#define RESCUE_WAIT_S 600
/* After the hard limit, how long an interrupt may take to be acknowledged. */
#define INTERRUPT_GRACE_MS 500
/* How long a thread that ptrace says is gone (ESRCH) may take to show its exit. */
#define EXIT_WAIT_MS 200

/* Signals a fault of the callee raises: never blocked during a call. */
static const int sync_signals[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS };
/* Signals to vitals that would kill it mid-call: held from attach to detach. */
static const int held_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
/*
 * Held too, so that the tracee's stops, which the kernel announces to the
 * tracer's process with SIGCHLD, wait for the tracer thread's signalfd
 * instead of being discarded (its default action is to ignore it).
 */
#define STOP_SIGNAL_HELD SIGCHLD

struct regbuf {
	unsigned type;
	const char *name;
	void *data;
	size_t len;
};

struct stash {
	int sig;
	siginfo_t info;
};

typedef int (*job_fn)(struct vt_inject_session *s, void *arg, struct vt_err *err);

struct vt_inject_session {
	pid_t pid, tid;
	unsigned flags;

	struct vt_tracer *tracer;      /* makes every ptrace request of the session */
	int pid_fd;                    /* the process's /proc directory, for task/TID reads */
	sigset_t caller_mask;          /* the calling thread's mask before attach */

	/* from here on, touched by the tracer thread only (or after it ended) */
	bool seized;
	bool stopped;                  /* in a ptrace stop we may act on */
	bool at_delivery;              /* that stop is a signal-delivery-stop */
	bool gone;                     /* the thread exited */
	bool lost;                     /* a call runs and the thread would not stop */
	bool clobbered_restart;        /* an abandoned callee left its own restart block */
	bool in_call;                  /* a callee runs: resume with PTRACE_SYSCALL */
	bool framed;                   /* frame holds the way back of the latest call */
	bool at_return;                /* stopped at that frame's rt_sigreturn */
	struct vt_arch_tramp tramp;    /* the code calls return through */
	struct vt_arch_frame frame;    /* the latest call's layout */
	unsigned char *image;          /* a call's bytes on the stack, image_cap of them */
	size_t image_cap;
	void *frame_gp;                /* the registers the signal frame returns to */
	struct regbuf regs[MAX_REGSETS];
	unsigned nregs;
	void *regdata[MAX_REGSETS];    /* one buffer per vt_arch_regsets entry, allocated before the stop */
	bool on_tracer;                /* a probe's body runs on the tracer thread: jobs run in place */
	void *work_gp;                 /* general registers of the latest stop / next call */
	uint64_t saved_mask;           /* kernel sigset, 64 signals */
	bool dirty;                    /* registers or mask differ from the saved ones */
	struct vt_arch_stop at_attach; /* the thread's state when it stopped */
	struct stash stash[MAX_STASH];
	unsigned nstash;
	bool errno_saved;
	uint64_t errno_addr;
	int32_t errno_value;
	double t_interrupt;
	double t_detached;
};

/* ---- small helpers ------------------------------------------------------ */

static double now_us(void)
{
	return (double)vt_mono_ns() / 1e3;
}

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static const char *sig_name(int sig)
{
	const char *n = sigabbrev_np(sig);

	return n ? n : "?";
}

long vt_inject_ptrace(enum __ptrace_request req, pid_t tid, void *addr, void *data)
{
	long r;

	do {
		errno = 0;
		r = ptrace(req, tid, addr, data);
	} while (r < 0 && errno == EINTR);
	return r;
}

pid_t vt_inject_wait_keep(pid_t tid, int *status)
{
	siginfo_t si;

	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)tid, &si, WSTOPPED | WEXITED | WNOHANG | WNOWAIT | __WALL) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (si.si_pid != tid)
			return 0;
		if (si.si_code == CLD_TRAPPED || si.si_code == CLD_STOPPED) {
			/* as waitpid reports it: the stop's signal and event, left for the restart */
			*status = (si.si_status << 8) | 0x7f;
			return tid;
		}
		/* an exit: collected, as waitpid would */
		return waitpid(tid, status, __WALL | WNOHANG);
	}
}

/*
 * Did the thread exit?  Its exit is collected (only an exit, never a stop);
 * a thread being killed takes a moment to become reapable, hence the wait.
 */
static bool thread_exited(struct vt_inject_session *s)
{
	char path[64], state = 0, buf[512], *p;
	siginfo_t si;
	int i, fd, r;
	ssize_t n;

	for (i = 0; i < EXIT_WAIT_MS; i++) {
		memset(&si, 0, sizeof(si));
		r = waitid(P_PID, (id_t)s->tid, &si, WEXITED | WNOHANG | __WALL);
		if ((r == 0 && si.si_pid == s->tid) || (r < 0 && errno == ECHILD))
			return true;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)s->pid, (int)s->tid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return true;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		buf[n > 0 ? n : 0] = '\0';
		p = strrchr(buf, ')');
		state = p && p[1] == ' ' ? p[2] : 0;
		if (state == 'Z' || state == 'X')
			return true;
		if (state == 't' || state == 'T')
			return false;   /* stopped: the request failed for another reason */
		sleep_us(1000);
	}
	return false;
}

/* A ptrace request failed with e: ESRCH means the thread is gone or no longer stopped. */
static int ptrace_failed(struct vt_inject_session *s, struct vt_err *err, int e, const char *what)
{
	/* ESRCH: exited or exiting (a SIGKILL wakes a stopped tracee), or not stopped. */
	if (e == ESRCH && thread_exited(s)) {
		s->gone = true;
		s->stopped = false;
		return vt_err_set(err, VT_E_GONE, e, "thread %d exited during %s", (int)s->tid,
				  what);
	}
	return vt_err_set(err, VT_E_FAIL, e, "%s of thread %d failed: %s", what, (int)s->tid,
			  strerror(e));
}

/* ---- memory ---------------------------------------------------------------- */

/*
 * For the PTRACE_PEEKDATA/POKEDATA fallbacks, which move aligned 8-byte
 * words: the word holding byte addr + off of a len-byte range, where that
 * byte sits in it (*skip) and how many bytes of the range it covers (*take).
 */
static uint64_t word_span(uint64_t addr, size_t off, size_t len, size_t *skip, size_t *take)
{
	uint64_t a = (addr + off) & ~(uint64_t)7;

	*skip = (size_t)(addr + off - a);
	*take = 8 - *skip;
	if (*take > len - off)
		*take = len - off;
	return a;
}

static int mem_write(struct vt_inject_session *s, uint64_t addr, const void *buf, size_t len,
		     struct vt_err *err)
{
	struct iovec local = { (void *)buf, len }, remote = { (void *)(uintptr_t)addr, len };
	const unsigned char *p = buf;
	size_t off;
	ssize_t n;
	int e, pe = 0;

	n = process_vm_writev(s->tid, &local, 1, &remote, 1, 0);
	if (n == (ssize_t)len)
		return VT_OK;
	e = n < 0 ? errno : EFAULT;
	/* PTRACE_POKEDATA: a word at a time, keeping the bytes around the ends. */
	for (off = 0; off < len;) {
		size_t skip, take;
		uint64_t a = word_span(addr, off, len, &skip, &take), word;
		long w;

		w = vt_inject_ptrace(PTRACE_PEEKDATA, s->tid, (void *)(uintptr_t)a, NULL);
		if (w == -1 && errno) {
			pe = errno;
			goto failed;
		}
		word = (uint64_t)w;
		memcpy((unsigned char *)&word + skip, p + off, take);
		if (vt_inject_ptrace(PTRACE_POKEDATA, s->tid, (void *)(uintptr_t)a, (void *)(uintptr_t)word) < 0) {
			pe = errno;
			goto failed;
		}
		off += take;
	}
	return VT_OK;
failed:
	if (e == ESRCH || pe == ESRCH)
		return ptrace_failed(s, err, ESRCH, "a memory write");
	return vt_err_set(err, VT_E_IO, e, "cannot write %zu bytes at 0x%" PRIx64 " in thread %d: %s",
			  len, addr, (int)s->tid, strerror(e));
}

static int mem_read(struct vt_inject_session *s, uint64_t addr, void *buf, size_t len,
		    struct vt_err *err)
{
	unsigned char *p = buf;
	size_t off;

	if (vt_mem_read(s->tid, addr, buf, len, NULL) == VT_OK)
		return VT_OK;
	for (off = 0; off < len;) {
		size_t skip, take;
		uint64_t a = word_span(addr, off, len, &skip, &take), word;
		long w;

		w = vt_inject_ptrace(PTRACE_PEEKDATA, s->tid, (void *)(uintptr_t)a, NULL);
		if (w == -1 && errno == ESRCH)
			return ptrace_failed(s, err, ESRCH, "a memory read");
		if (w == -1 && errno)
			return vt_err_set(err, VT_E_IO, errno, "cannot read %zu bytes at 0x%" PRIx64
					  " in thread %d: %s", len, addr, (int)s->tid, strerror(errno));
		word = (uint64_t)w;
		memcpy(p + off, (unsigned char *)&word + skip, take);
		off += take;
	}
	return VT_OK;
}

/* ---- registers ----------------------------------------------------------- */

static int regset_get(struct vt_inject_session *s, unsigned type, void *buf, size_t *len,
		      struct vt_err *err)
{
	struct iovec iov = { buf, *len };

	if (vt_inject_ptrace(PTRACE_GETREGSET, s->tid, (void *)(uintptr_t)type, &iov) < 0)
		return ptrace_failed(s, err, errno, "PTRACE_GETREGSET");
	*len = iov.iov_len;
	return VT_OK;
}

static int regset_set(struct vt_inject_session *s, unsigned type, void *buf, size_t len,
		      struct vt_err *err)
{
	struct iovec iov = { buf, len };

	if (vt_inject_ptrace(PTRACE_SETREGSET, s->tid, (void *)(uintptr_t)type, &iov) < 0)
		return ptrace_failed(s, err, errno, "PTRACE_SETREGSET");
	return VT_OK;
}

static int gp_get(struct vt_inject_session *s, struct vt_err *err)
{
	size_t len = vt_arch_regsets[0].max;
	int rc = regset_get(s, vt_arch_regsets[0].type, s->work_gp, &len, err);

	if (!rc && len != vt_arch_regsets[0].max)
		return vt_err_set(err, VT_E_FAIL, 0, "general registers of thread %d: %zu bytes, "
				  "expected %zu", (int)s->tid, len, vt_arch_regsets[0].max);
	return rc;
}

static int gp_set(struct vt_inject_session *s, struct vt_err *err)
{
	return regset_set(s, vt_arch_regsets[0].type, s->work_gp, vt_arch_regsets[0].max, err);
}

/* Save every register set: per group, the first the kernel returns. */
static int save_regs(struct vt_inject_session *s, struct vt_err *err)
{
	int done_group = -1;
	unsigned i;
	int rc;

	for (i = 0; i < vt_arch_nregsets && s->nregs < MAX_REGSETS; i++) {
		const struct vt_arch_regset *rs = &vt_arch_regsets[i];
		struct regbuf *b = &s->regs[s->nregs];
		size_t len = rs->max;
		struct vt_err e;

		if (rs->group == done_group)
			continue;
		b->data = s->regdata[i];
		vt_err_clear(&e);
		rc = regset_get(s, rs->type, b->data, &len, &e);
		if (rc == VT_E_GONE) {
			if (err)
				*err = e;
			return rc;
		}
		if (rc || (rs->exact ? len != rs->max : len >= rs->max) || len == 0) {
			b->data = NULL;
			if (i == 0)
				return vt_err_set(err, VT_E_FAIL, e.sys_errno, "cannot save the %s of "
						  "thread %d: %s", rs->name, (int)s->tid,
						  rc ? e.msg : "unexpected size");
			continue;   /* try the next set of the group */
		}
		b->type = rs->type;
		b->name = rs->name;
		b->len = len;
		s->nregs++;
		done_group = rs->group;
	}
	if (s->nregs < 2)
		return vt_err_set(err, VT_E_FAIL, 0, "cannot save the floating-point state of thread %d",
				  (int)s->tid);
	memcpy(s->work_gp, s->regs[0].data, s->regs[0].len);
	return VT_OK;
}

/* ---- waiting for stops ------------------------------------------------- */

enum stop_kind {
	STOP_NONE,        /* deadline passed */
	STOP_EXITED,
	STOP_INTERRUPT,   /* PTRACE_EVENT_STOP with SIGTRAP */
	STOP_GROUP,       /* PTRACE_EVENT_STOP with a stop signal */
	STOP_SIGNAL,      /* signal-delivery-stop */
	STOP_SYSCALL,     /* system-call-enter or -exit stop (PTRACE_SYSCALL) */
};

struct stop {
	enum stop_kind kind;
	int sig;
	int status;
};

/*
 * Wait for the next stop of the thread until deadline (now_us() clock):
 * yield for the first 100 microseconds (a mallinfo2 is about 20),
 * then block until the kernel announces a stop (SIGCHLD, through the
 * tracer thread's signalfd), at most 1 ms at a time, and look again.
 */
/* How long a wait for a stop yields before it blocks (a wake-up costs more than a short call). */
#define WAIT_SPIN_US 100

static int wait_stop(struct vt_inject_session *s, double deadline, struct stop *out,
		     struct vt_err *err)
{
	double start = now_us(), waited;
	long nap = 0, cap;
	bool hears;
	int st;
	pid_t r;

	memset(out, 0, sizeof(*out));
	for (;;) {
		r = waitpid(s->tid, &st, __WALL | WNOHANG);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			if (errno == ECHILD) {
				s->gone = true;
				s->stopped = false;
				out->kind = STOP_EXITED;
				return VT_OK;
			}
			return vt_err_set(err, VT_E_FAIL, errno, "waitpid for thread %d: %s",
					  (int)s->tid, strerror(errno));
		}
		if (r == s->tid)
			break;
		if (now_us() >= deadline) {
			out->kind = STOP_NONE;
			return VT_OK;
		}
		if (now_us() - start < WAIT_SPIN_US) {
			sched_yield();
			continue;
		}
		waited = now_us() - start;
		hears = vt_tracer_hears_stops(s->tracer);
		cap = hears ? 1000 : waited < 2000 ? 50 : waited < 20000 ? 200 : 1000;
		nap = nap ? nap * 2 : 5;
		if (nap > cap || hears)
			nap = cap;
		if (nap > deadline - now_us())
			nap = deadline - now_us() > 1 ? (long)(deadline - now_us()) : 1;
		vt_tracer_nap(s->tracer, (uint64_t)nap * 1000);
	}
	out->status = st;
	if (WIFEXITED(st) || WIFSIGNALED(st)) {
		s->gone = true;
		s->stopped = false;
		out->kind = STOP_EXITED;
		return VT_OK;
	}
	if (!WIFSTOPPED(st))
		return wait_stop(s, deadline, out, err);   /* WIFCONTINUED is not asked for */
	s->stopped = true;
	out->sig = WSTOPSIG(st);
	if (out->sig == (SIGTRAP | 0x80)) {
		s->at_delivery = false;
		out->kind = STOP_SYSCALL;
	} else if ((st >> 16) == PTRACE_EVENT_STOP) {
		s->at_delivery = false;
		out->kind = out->sig == SIGTRAP ? STOP_INTERRUPT : STOP_GROUP;
	} else {
		s->at_delivery = true;
		out->kind = STOP_SIGNAL;
	}
	return VT_OK;
}

/* Let the thread run: to its next system call during a call, else until the next stop. */
static int resume(struct vt_inject_session *s, int sig, struct vt_err *err)
{
	enum __ptrace_request req = s->in_call ? PTRACE_SYSCALL : PTRACE_CONT;

	if (vt_inject_ptrace(req, s->tid, NULL, (void *)(uintptr_t)sig) < 0)
		return ptrace_failed(s, err, errno, s->in_call ? "PTRACE_SYSCALL" : "PTRACE_CONT");
	s->stopped = false;
	s->at_delivery = false;
	s->at_return = false;
	return VT_OK;
}

static bool is_sync_signal(int sig)
{
	size_t i;

	for (i = 0; i < sizeof(sync_signals) / sizeof(sync_signals[0]); i++)
		if (sync_signals[i] == sig)
			return true;
	return false;
}

/* Keep a signal that arrived during a call, to deliver it at detach. */
static int stash_signal(struct vt_inject_session *s, int sig, struct vt_err *err)
{
	struct stash *st;

	if (s->nstash == MAX_STASH)
		return vt_err_set(err, VT_E_FAIL, 0, "too many signals for thread %d during the call",
				  (int)s->tid);
	st = &s->stash[s->nstash];
	memset(st, 0, sizeof(*st));
	st->sig = sig;
	if (vt_inject_ptrace(PTRACE_GETSIGINFO, s->tid, NULL, &st->info) < 0)
		return ptrace_failed(s, err, errno, "PTRACE_GETSIGINFO");
	s->nstash++;
	return VT_OK;
}

/* /proc/PID/task/TID/<name>, first line, for messages ("futex_wait_queue"). */
static void task_text(const struct vt_inject_session *s, const char *name, char *out, size_t cap)
{
	char path[64];
	ssize_t n;
	int fd;

	out[0] = '\0';
	snprintf(path, sizeof(path), "task/%d/%s", (int)s->tid, name);
	fd = openat(s->pid_fd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, out, cap - 1);
	close(fd);
	out[n > 0 ? n : 0] = '\0';
	out[strcspn(out, "\n")] = '\0';
}

/* "blocked in futex", "running user code at 0x...", for messages. */
static void describe_stop(const struct vt_arch_stop *st, char *out, size_t cap)
{
	const char *name = vt_arch_syscall_name(st->nr);

	if (st->nr < 0)
		snprintf(out, cap, "running user code at 0x%" PRIx64, st->pc);
	else if (name)
		snprintf(out, cap, "%s %s", st->restarting ? "blocked in" : "returning from", name);
	else
		snprintf(out, cap, "%s system call %ld", st->restarting ? "blocked in" : "returning from",
			 st->nr);
}

/* ---- the tracer thread ------------------------------------------------- */

static int job_detach(struct vt_inject_session *s, void *arg, struct vt_err *err);

/* After a detach that timed out: keep waiting for the thread, then restore it. */
static void rescue(struct vt_inject_session *s)
{
	struct stop st;
	struct vt_err e;

	vt_err_clear(&e);
	if (wait_stop(s, now_us() + RESCUE_WAIT_S * 1e6, &st, &e) == VT_OK &&
	    st.kind != STOP_NONE && st.kind != STOP_EXITED) {
		s->lost = false;
		job_detach(s, NULL, &e);
	}
	/* Else: leaving this thread lets the kernel detach; nothing more can be done. */
}

static void session_free(struct vt_inject_session *s)
{
	unsigned i;

	for (i = 0; i < MAX_REGSETS; i++)
		free(s->regdata[i]);
	free(s->work_gp);
	free(s->frame_gp);
	free(s->image);
	if (s->pid_fd >= 0)
		close(s->pid_fd);
	free(s);
}

/*
 * A probe's jobs follow each other within microseconds while the target's
 * thread is stopped: the two threads spin (yielding) this long for the
 * hand-off before they sleep on the condition variable, which would add a
 * wake-up to the thread's stop each time (hundreds of microseconds for an
 * idle CPU of a virtual machine).
 */
#define HANDOFF_SPIN_US 1000

/* The session's thread is let go (or its tracer thread ended): see stop_guard.h. */
static void unguard(void)
{
	vt_stop_guard_release();
	vt_stop_guard_disarm();
}

/* The last of an orphaned tracer: wait for the lost thread, restore it, free the session. */
static void orphan_last(void *arg)
{
	struct vt_inject_session *s = arg;

	rescue(s);
	session_free(s);
	unguard();
}

struct job_call {
	struct vt_inject_session *s;
	job_fn fn;
	void *arg;
	int rc;
	struct vt_err err;
};

static bool job_on_tracer(struct vt_tracer *t, void *arg)
{
	struct job_call *c = arg;

	(void)t;
	vt_err_clear(&c->err);
	c->rc = c->fn(c->s, c->arg, &c->err);
	return false;   /* the session's tracer ends only at detach */
}

/* Run job on the tracer thread and wait for it (jobs bound their own time). */
static int run_job(struct vt_inject_session *s, job_fn job, void *arg, struct vt_err *err)
{
	struct job_call c = { .s = s, .fn = job, .arg = arg };

	if (s->on_tracer)             /* a probe's body, already on the tracer thread */
		return job(s, arg, err);
	vt_tracer_run(s->tracer, job_on_tracer, &c);
	if (c.rc && err)
		*err = c.err;
	return c.rc;
}

/* Stop the tracer thread; orphan: let it go on rescuing, then free s. */
static void end_tracer(struct vt_inject_session *s, bool orphan)
{
	if (orphan)
		vt_tracer_orphan(s->tracer, orphan_last, s);
	else
		vt_tracer_end(s->tracer);
}

/* ---- attach -------------------------------------------------------------- */

struct attach_args {
	int timeout_ms;
	bool suspend_seccomp;
};

static void call_mask(uint64_t *mask)
{
	size_t i;

	*mask = ~(uint64_t)0;
	for (i = 0; i < sizeof(sync_signals) / sizeof(sync_signals[0]); i++)
		*mask &= ~((uint64_t)1 << (sync_signals[i] - 1));
}

/* The thread stopped where we may not call: detach untouched and say why. */
static int refuse_stop(struct vt_inject_session *s, struct vt_err *err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int refuse_stop(struct vt_inject_session *s, struct vt_err *err, const char *fmt, ...)
{
	char msg[VT_ERR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (vt_inject_ptrace(PTRACE_DETACH, s->tid, NULL, NULL) == 0)
		s->seized = false;
	s->stopped = false;
	return vt_err_set(err, VT_E_BUSY, 0, "%s", msg);
}

/* Wait for the stop PTRACE_INTERRUPT asked for; signals met first are delivered as usual. */
static int attach_wait(struct vt_inject_session *s, int timeout_ms, struct vt_err *err)
{
	double deadline = now_us() + timeout_ms * 1e3;
	struct stop st;
	int rc;

	for (;;) {
		rc = wait_stop(s, deadline, &st, err);
		if (rc)
			return rc;
		switch (st.kind) {
		case STOP_INTERRUPT:
			return VT_OK;
		case STOP_EXITED:
			return vt_err_set(err, VT_E_GONE, ESRCH, "thread %d exited as it was stopped",
					  (int)s->tid);
		case STOP_NONE:
			/* The tracer thread ends next; the kernel then drops the pending stop. */
			return vt_err_set(err, VT_E_TIMEOUT, 0, "thread %d did not stop within %d ms "
					  "(uninterruptible sleep?); it was released untouched",
					  (int)s->tid, timeout_ms);
		case STOP_GROUP:
			return refuse_stop(s, err, "process %d is being stopped (%s); continue it "
					   "first", (int)s->pid, sig_name(st.sig));
		case STOP_SIGNAL:
			/* Not ours yet: deliver it as if we were not there, then the trap comes. */
			rc = resume(s, st.sig, err);
			if (rc)
				return rc;
			break;
		case STOP_SYSCALL:   /* only during a call */
			rc = resume(s, 0, err);
			if (rc)
				return rc;
			break;
		}
	}
}

/* Is the state the thread stopped in one we may call from? */
static int check_stopped_state(struct vt_inject_session *s, struct vt_err *err)
{
	const struct vt_arch_stop *st = &s->at_attach;
	enum vt_sys_class cls = vt_arch_syscall_class(st->nr, st->args);
	const char *name = vt_arch_syscall_name(st->nr);
	char where[96];

	describe_stop(st, where, sizeof(where));
	if (st->nr < 0 && (s->flags & VT_INJECT_ALLOW_RUNNING))
		return VT_OK;
	if (st->nr < 0)
		return refuse_stop(s, err, "thread %d was %s when it stopped, not blocked in a "
				   "system call (it may hold an allocator lock)", (int)s->tid, where);
	if (cls == VT_SYS_NEVER)
		return refuse_stop(s, err, "thread %d was in %s when it stopped, where a call is "
				   "unsafe (memory map change, fork, exit, or a temporary signal "
				   "mask)", (int)s->tid, name ? name : "a system call");
	return VT_OK;
}

static int job_attach(struct vt_inject_session *s, void *arg, struct vt_err *err)
{
	const struct attach_args *a = arg;
	long opts = PTRACE_O_TRACESYSGOOD | (a->suspend_seccomp ? PTRACE_O_SUSPEND_SECCOMP : 0);
	int rc, e;

	if (vt_inject_ptrace(PTRACE_SEIZE, s->tid, NULL, (void *)(uintptr_t)opts) < 0) {
		e = errno;
		if (e == ESRCH)
			return vt_err_set(err, VT_E_GONE, e, "thread %d exited", (int)s->tid);
		if (e == EPERM && a->suspend_seccomp)
			return vt_err_set(err, VT_E_PERM, e, "thread %d runs under a seccomp filter, "
					  "and suspending it (PTRACE_O_SUSPEND_SECCOMP) was refused: "
					  "the call could get it killed", (int)s->tid);
		return vt_err_set(err, e == EPERM ? VT_E_PERM : VT_E_FAIL, e,
				  "cannot attach to thread %d: %s", (int)s->tid, strerror(e));
	}
	s->seized = true;
	s->t_interrupt = now_us();
	if (vt_inject_ptrace(PTRACE_INTERRUPT, s->tid, NULL, NULL) < 0)
		return ptrace_failed(s, err, errno, "PTRACE_INTERRUPT");
	rc = attach_wait(s, a->timeout_ms, err);
	if (rc)
		return rc;
	rc = save_regs(s, err);
	if (rc)
		return rc;
	vt_arch_stop_state(s->regs[0].data, &s->at_attach);
	rc = check_stopped_state(s, err);
	if (rc)
		return rc;
	if (vt_inject_ptrace(PTRACE_GETSIGMASK, s->tid, (void *)sizeof(uint64_t), &s->saved_mask) < 0)
		return ptrace_failed(s, err, errno, "PTRACE_GETSIGMASK");
	/* Where a call's signal frame returns the thread to (buffers from session_new). */
	vt_arch_resume_gp(s->regs[0].data, VT_RESUME_REEXEC, s->frame_gp);
	return VT_OK;
}

/* ---- one call ------------------------------------------------------------ */

static int park_after(struct vt_inject_session *s, int call_rc, struct vt_err *err);

struct run_args {
	struct vt_inject_call *call;
	int timeout_ms;
};

/* Write the call's image (return chain, signal frame, slot, scratch) in one go. */
static int write_frame(struct vt_inject_session *s, const struct vt_inject_call *c,
		       const struct vt_arch_frame *f, struct vt_err *err)
{
	int rc;

	if (c->scratch_in && c->scratch_len)
		memcpy(s->image + (f->scratch_addr - f->write_addr), c->scratch_in, c->scratch_len);
	rc = mem_write(s, f->write_addr, s->image, f->image_len, err);
	if (rc)
		vt_err_hint(err, "the stack of thread %d is not mapped that far below its stack "
			    "pointer (main thread with a short stack?); try another thread", (int)s->tid);
	return rc;
}

/* A system-call stop during the call: the trampoline's rt_sigreturn means it returned. */
static int on_syscall_stop(struct vt_inject_session *s, bool *returned, struct vt_err *err)
{
	int rc = gp_get(s, err);

	if (!rc)
		*returned = s->at_return = vt_arch_returned(s->work_gp, &s->frame);
	return rc;
}

/* A signal-delivery-stop during the call: a fault of the callee, or someone's signal. */
static int on_signal_stop(struct vt_inject_session *s, struct vt_inject_call *c, int sig,
			  bool *done, struct vt_err *err)
{
	siginfo_t si;
	int rc;

	memset(&si, 0, sizeof(si));
	if (vt_inject_ptrace(PTRACE_GETSIGINFO, s->tid, NULL, &si) < 0)
		return ptrace_failed(s, err, errno, "PTRACE_GETSIGINFO");
	if (is_sync_signal(sig) && si.si_code > 0) {
		struct vt_arch_stop st;

		rc = gp_get(s, err);
		if (rc)
			return rc;
		vt_arch_stop_state(s->work_gp, &st);
		*done = true;
		return vt_err_set(err, VT_E_FAULT, 0, "the call to 0x%" PRIx64 " faulted: %s "
				  "(code %d, address 0x%" PRIx64 ") at pc 0x%" PRIx64 "; the signal was "
				  "suppressed and the call abandoned", c->func, sig_name(sig),
				  si.si_code, (uint64_t)(uintptr_t)si.si_addr, st.pc);
	}
	/* Sent by someone (kill, tgkill) or SIGSTOP: deliver it at detach. */
	rc = stash_signal(s, sig, err);
	if (rc)
		return rc;
	return resume(s, 0, err);
}

/*
 * Our PTRACE_INTERRUPT stopped a slow call: abandon it, or let it go on.
 * wchan is where the thread waited in the kernel before we interrupted it.
 */
static int on_slow_call(struct vt_inject_session *s, struct vt_inject_call *c, double ran_ms,
			bool hard, const char *wchan, bool *done, struct vt_err *err)
{
	struct vt_arch_stop st;
	char where[96];
	bool blocked;
	int rc;

	rc = gp_get(s, err);
	if (rc)
		return rc;
	vt_arch_stop_state(s->work_gp, &st);
	blocked = st.nr >= 0 && st.restarting;
	if (!hard && !(blocked && c->abandon == VT_INJECT_ABANDON_BLOCKED))
		return resume(s, 0, err);
	/* The callee's interrupted call may have set the thread's restart block. */
	if (st.restart_block)
		s->clobbered_restart = true;
	describe_stop(&st, where, sizeof(where));
	*done = true;
	if (!wchan[0] || !strcmp(wchan, "0"))
		wchan = "";
	return vt_err_set(err, VT_E_TIMEOUT, 0, "the call to 0x%" PRIx64 " was abandoned after "
			  "%.0f ms: thread %d was %s%s%s%s%s", c->func, ran_ms, (int)s->tid, where,
			  wchan[0] ? " (wchan " : "", wchan, wchan[0] ? ")" : "",
			  hard && !blocked ? "; a lock it held may stay held" : "");
}

/*
 * Start the call: its image on the stack first (dead memory below the red
 * zone: harmless if we die now), then the registers in one request (from
 * here the thread returns through the signal frame by itself), then the
 * mask that keeps signals out of the callee while we watch (if we die
 * between the two, the callee runs under the thread's own mask, as if the
 * program had called it).
 */
static int start_call(struct vt_inject_session *s, struct vt_inject_call *c, struct vt_err *err)
{
	struct vt_arch_call_in in;
	uint64_t mask;
	int rc;

	memset(&in, 0, sizeof(in));
	in.resume_gp = s->frame_gp;
	in.fp = s->regs[1].data;
	in.fp_len = s->regs[1].len;
	in.mask = s->saved_mask;
	in.tramp = &s->tramp;
	in.func = c->func;
	memcpy(in.args, c->args, sizeof(in.args));
	in.scratch_args = c->scratch_args;
	in.scratch_len = c->scratch_len;
	rc = vt_arch_setup_call(&in, s->work_gp, s->image, &s->frame, err);
	if (rc)
		return rc;
	c->scratch_addr = s->frame.scratch_addr;
	rc = write_frame(s, c, &s->frame, err);
	if (rc)
		return rc;
	s->dirty = true;
	rc = gp_set(s, err);
	if (rc)
		return rc;
	s->framed = true;
	call_mask(&mask);
	if (vt_inject_ptrace(PTRACE_SETSIGMASK, s->tid, (void *)sizeof(uint64_t), &mask) < 0)
		return ptrace_failed(s, err, errno, "PTRACE_SETSIGMASK");
	s->in_call = true;
	return VT_OK;
}

static int job_run(struct vt_inject_session *s, void *arg, struct vt_err *err)
{
	struct run_args *ra = arg;
	struct vt_inject_call *c = ra->call;
	double t0, next_check, hard, deadline;
	bool interrupted = false, done = false;
	char wchan[64] = "";
	struct stop st;
	size_t len;
	int rc;

	if (s->gone)
		return vt_err_set(err, VT_E_GONE, ESRCH, "thread %d exited", (int)s->tid);
	if (s->lost || !s->stopped)
		return vt_err_set(err, VT_E_TIMEOUT, 0, "thread %d is still running an earlier call",
				  (int)s->tid);
	rc = start_call(s, c, err);
	if (rc)
		return park_after(s, rc, err);
	t0 = now_us();
	rc = resume(s, 0, err);
	if (rc)
		return park_after(s, rc, err);
	next_check = t0 + ra->timeout_ms * 1e3;
	hard = t0 + (ra->timeout_ms * VT_INJECT_HARD_FACTOR > VT_INJECT_HARD_MIN_MS
		     ? ra->timeout_ms * VT_INJECT_HARD_FACTOR : VT_INJECT_HARD_MIN_MS) * 1e3;
	while (!done) {
		deadline = interrupted ? hard + INTERRUPT_GRACE_MS * 1e3 : next_check;
		rc = wait_stop(s, deadline, &st, err);
		if (rc)
			return park_after(s, rc, err);
		switch (st.kind) {
		case STOP_EXITED:
			return vt_err_set(err, VT_E_GONE, ESRCH, "thread %d exited during the call",
					  (int)s->tid);
		case STOP_SYSCALL:
			rc = on_syscall_stop(s, &done, err);
			if (rc || done)
				break;
			if (!interrupted) {   /* one of the callee's own system calls */
				rc = resume(s, 0, err);
				break;
			}
			/* Any stop satisfies a pending PTRACE_INTERRUPT: this one is it. */
			/* fall through */
		case STOP_INTERRUPT:
			if (!interrupted) {   /* a late trap from attach */
				rc = resume(s, 0, err);
				break;
			}
			interrupted = false;
			rc = on_slow_call(s, c, (now_us() - t0) / 1e3, now_us() >= hard, wchan, &done,
					  err);
			next_check = now_us() + ra->timeout_ms * 1e3;
			break;
		case STOP_SIGNAL:
			rc = on_signal_stop(s, c, st.sig, &done, err);
			/* It took the place of our interrupt's stop: ask again. */
			if (!rc && !done && interrupted && vt_inject_ptrace(PTRACE_INTERRUPT, s->tid, NULL, NULL) < 0)
				rc = ptrace_failed(s, err, errno, "PTRACE_INTERRUPT");
			break;
		case STOP_GROUP:
			/* The process is being stopped: finish the call, detach re-enters the stop. */
			rc = resume(s, 0, err);
			break;
		case STOP_NONE:
			if (interrupted) {
				s->lost = true;
				return vt_err_set(err, VT_E_TIMEOUT, 0, "the call to 0x%" PRIx64 " ran "
						  "past its hard limit and thread %d cannot be stopped "
						  "(uninterruptible sleep?); it returns through its signal "
						  "frame by itself", c->func, (int)s->tid);
			}
			task_text(s, "wchan", wchan, sizeof(wchan));
			if (vt_inject_ptrace(PTRACE_INTERRUPT, s->tid, NULL, NULL) < 0)
				rc = ptrace_failed(s, err, errno, "PTRACE_INTERRUPT");
			interrupted = true;
			break;
		}
		if (rc)
			return park_after(s, rc, err);
	}
	c->call_us = now_us() - t0;
	/* The return slot and scratch in one read (the slot lies just below scratch). */
	len = (size_t)(s->frame.scratch_addr - s->frame.ret_addr) +
	      (c->scratch_out ? c->scratch_len : 0);
	rc = mem_read(s, s->frame.ret_addr, s->image, len, err);
	if (!rc) {
		memcpy(&c->ret, s->image, sizeof(c->ret));
		if (c->scratch_out && c->scratch_len)
			memcpy(c->scratch_out, s->image + (s->frame.scratch_addr - s->frame.ret_addr),
			       c->scratch_len);
	}
	return park_after(s, rc, err);
}

/* ---- detach -------------------------------------------------------------- */

/* Signals kept beyond the first: sent again (rt_tgsigqueueinfo keeps a sigqueue's value). */
static void resend_stashed(struct vt_inject_session *s, unsigned from)
{
	unsigned i;

	for (i = from; i < s->nstash; i++) {
		siginfo_t *si = &s->stash[i].info;

		if (si->si_code < 0 && si->si_code != SI_TKILL &&
		    syscall(SYS_rt_tgsigqueueinfo, s->pid, s->tid, s->stash[i].sig, si) == 0)
			continue;
		syscall(SYS_tgkill, s->pid, s->tid, s->stash[i].sig);
	}
}

/* Wait until the thread is in a stop we can restore from (after a call that ran away). */
static int detach_wait(struct vt_inject_session *s, struct vt_err *err)
{
	double deadline = now_us() + DETACH_WAIT_MS * 1e3;
	struct stop st;
	int rc;

	while (s->lost || !s->stopped) {
		rc = wait_stop(s, deadline, &st, err);
		if (rc)
			return rc;
		if (st.kind == STOP_EXITED)
			return vt_err_set(err, VT_E_GONE, ESRCH, "thread %d exited", (int)s->tid);
		if (st.kind == STOP_NONE)
			return vt_err_set(err, VT_E_TIMEOUT, 0, "thread %d is still running an "
					  "abandoned call and cannot be stopped; vitals restores it "
					  "when it stops", (int)s->tid);
		if (st.kind == STOP_SIGNAL && !is_sync_signal(st.sig)) {
			rc = stash_signal(s, st.sig, err);
			if (!rc)
				rc = resume(s, 0, err);
			if (rc)
				return rc;
			continue;
		}
		s->lost = false;
	}
	return VT_OK;
}

/* Keep the first error of a sequence of steps that are all tried. */
static void first_error(int *rc, struct vt_err *err, int r, const struct vt_err *e)
{
	if (r && !*rc) {
		*rc = r;
		if (err)
			*err = *e;
	}
}

/*
 * From the stop after a call (its return at the trampoline's rt_sigreturn,
 * a fault, an abandon) to a parked thread: stopped, with its own extended
 * state, signal mask, errno and registers back, and the kept signals sent
 * to it again.  Parked, it is let go exactly as it was: its interrupted
 * system call set to run again (vt_arch_resume_gp), which any stop (and
 * PTRACE_DETACH from it) lets happen.
 *
 * Every instant is safe if vitals dies: a callee stopped mid-way is first
 * pointed at the trampoline's rt_sigreturn (one request), so that from then
 * on the thread restores itself from the signal frame; the extended state
 * and the mask that follow are the frame's own; the general registers,
 * last, replace the way back with the exact state.  Every step is tried
 * even if one failed, the general registers above all; the first error is
 * reported.
 */
static int park(struct vt_inject_session *s, struct vt_err *err)
{
	int rc = VT_OK;
	struct vt_err e;
	unsigned i;
	void *gp;

	if (s->gone || !s->stopped)
		return s->gone ? vt_err_set(err, VT_E_GONE, ESRCH, "thread %d exited", (int)s->tid)
			       : VT_OK;
	vt_err_clear(&e);
	if (s->framed && !s->at_return && gp_get(s, &e) == VT_OK &&
	    !vt_arch_returned(s->work_gp, &s->frame)) {
		vt_arch_to_sigreturn(s->work_gp, &s->frame, &s->tramp);
		first_error(&rc, err, gp_set(s, &e), &e);
	}
	for (i = 1; i < s->nregs && !s->gone; i++) {
		vt_err_clear(&e);
		first_error(&rc, err, regset_set(s, s->regs[i].type, s->regs[i].data, s->regs[i].len,
						 &e), &e);
	}
	vt_err_clear(&e);
	if (!s->gone &&
	    vt_inject_ptrace(PTRACE_SETSIGMASK, s->tid, (void *)sizeof(uint64_t), &s->saved_mask) < 0)
		first_error(&rc, err, ptrace_failed(s, &e, errno, "PTRACE_SETSIGMASK"), &e);
	if (s->errno_saved && !s->gone)
		mem_write(s, s->errno_addr, &s->errno_value, sizeof(s->errno_value), NULL);
	gp = s->work_gp;
	vt_arch_resume_gp(s->regs[0].data, s->clobbered_restart ? VT_RESUME_REEXEC : VT_RESUME_EXACT,
			  gp);
	vt_err_clear(&e);
	if (!s->gone)
		first_error(&rc, err, gp_set(s, &e), &e);
	if (s->gone)
		return rc ? rc : vt_err_set(err, VT_E_GONE, ESRCH, "thread %d exited", (int)s->tid);
	s->in_call = false;
	s->framed = false;
	s->at_return = false;
	s->dirty = rc != VT_OK;
	resend_stashed(s, 0);
	s->nstash = 0;
	return rc;
}

/* After a call: park, and report the call's error if it had one, else park's. */
static int park_after(struct vt_inject_session *s, int call_rc, struct vt_err *err)
{
	struct vt_err e;
	int rc;

	if (s->lost)
		return call_rc;
	vt_err_clear(&e);
	rc = park(s, &e);
	if (call_rc)
		return call_rc;
	if (rc && err)
		*err = e;
	return rc;
}

static int job_detach(struct vt_inject_session *s, void *arg, struct vt_err *err)
{
	int rc;

	(void)arg;
	if (s->gone)
		return vt_err_set(err, VT_E_GONE, ESRCH, "thread %d exited", (int)s->tid);
	if (!s->seized)
		return VT_OK;
	rc = detach_wait(s, err);
	if (rc)
		return rc;
	if (s->dirty || s->nstash) {
		rc = park(s, err);
		if (s->gone || !s->stopped)
			return rc;
	}
	if (vt_inject_ptrace(PTRACE_DETACH, s->tid, NULL, NULL) < 0)
		return rc ? rc : ptrace_failed(s, err, errno, "PTRACE_DETACH");
	s->t_detached = now_us();
	s->seized = false;
	s->stopped = false;
	return rc;
}

/* ---- errno ----------------------------------------------------------------- */

struct errno_args {
	uint64_t fn;
	int timeout_ms;
};

static int job_save_errno(struct vt_inject_session *s, void *arg, struct vt_err *err)
{
	struct errno_args *ea = arg;
	struct vt_inject_call c;
	struct run_args ra = { &c, ea->timeout_ms };
	int rc;

	memset(&c, 0, sizeof(c));
	c.func = ea->fn;
	rc = job_run(s, &ra, err);
	if (rc)
		return rc;
	if (c.ret == 0)
		return vt_err_set(err, VT_E_FAIL, 0, "__errno_location returned NULL in thread %d",
				  (int)s->tid);
	rc = mem_read(s, c.ret, &s->errno_value, sizeof(s->errno_value), err);
	if (rc)
		return rc;
	s->errno_addr = c.ret;
	s->errno_saved = true;
	return VT_OK;
}

/* ---- public -------------------------------------------------------------- */

static void hold_signals(sigset_t *old)
{
	sigset_t set;
	size_t i;

	sigemptyset(&set);
	for (i = 0; i < sizeof(held_signals) / sizeof(held_signals[0]); i++)
		sigaddset(&set, held_signals[i]);
	sigaddset(&set, STOP_SIGNAL_HELD);
	pthread_sigmask(SIG_BLOCK, &set, old);
}

static struct vt_inject_session *session_new(pid_t pid, pid_t tid, unsigned flags)
{
	struct vt_inject_session *s = calloc(1, sizeof(*s));
	unsigned i;
	bool ok;

	if (!s)
		return NULL;
	s->pid_fd = -1;
	/*
	 * Every buffer the stop needs is allocated here, before it: a malloc
	 * on the tracer thread while the thread stands stopped could be its
	 * first, and give it an arena of its own (an mmap and two munmaps).
	 */
	s->work_gp = calloc(1, vt_arch_regsets[0].max);
	s->frame_gp = calloc(1, vt_arch_regsets[0].max);
	s->image_cap = vt_arch_image_max(VT_INJECT_SCRATCH_MAX, vt_arch_nregsets > 1 ? vt_arch_regsets[1].max : 0);
	s->image = malloc(s->image_cap);
	if (s->image)
		memset(s->image, 0, s->image_cap);   /* its pages faulted in now, not during the stop */
	ok = s->work_gp && s->frame_gp && s->image;
	for (i = 0; i < vt_arch_nregsets && i < MAX_REGSETS && ok; i++)
		ok = (s->regdata[i] = malloc(vt_arch_regsets[i].max)) != NULL;
	if (!ok) {
		session_free(s);
		return NULL;
	}
	s->pid = pid;
	s->tid = tid;
	s->flags = flags;
	return s;
}

/*
 * Everything before the stop, on the caller's thread: checks, the session,
 * the way back of every call (found before anything is stopped), the guard
 * (a stopped vitals cannot keep the thread stopped), the held signals and
 * the tracer thread.  On error nothing is left to undo.
 */
static int session_open(const struct vt_procfs *pfs, pid_t pid, pid_t tid, unsigned flags,
			unsigned spin_us, const struct vt_region_list *maps, struct vt_inject_session **out,
			struct vt_inject_precheck *pc, struct vt_err *err)
{
	struct vt_inject_session *s = NULL;
	int pid_fd = -1, rc;

	*out = NULL;
	if (!pfs->live)
		return vt_err_set(err, VT_E_UNSUPPORTED, 0, "cannot call into a process of a "
				  "recorded /proc tree");
	if (pid == getpid())
		return vt_err_set(err, VT_E_USAGE, 0, "cannot call into vitals itself");
	rc = vt_pid_open(pfs, pid, &pid_fd, err);
	if (rc)
		return rc;
	rc = vt_inject_precheck(pfs, pid_fd, pid, tid, pc, err);
	if (rc) {
		close(pid_fd);
		return rc;
	}
	s = session_new(pid, tid, flags);
	if (!s) {
		close(pid_fd);
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory for an injection session");
	}
	s->pid_fd = pid_fd;   /* the session's from here on */
	vt_arch_prepare();
	rc = maps ? vt_inject_find_tramp_in(s->pid_fd, pid, maps, &s->tramp, err)
		  : vt_inject_find_tramp(s->pid_fd, pid, &s->tramp, err);
	if (rc) {
		session_free(s);
		return rc;
	}
	rc = vt_stop_guard_arm(err);
	if (rc) {
		session_free(s);
		return rc;
	}
	vt_stop_guard_hold();
	hold_signals(&s->caller_mask);
	rc = vt_tracer_start(spin_us, &s->tracer, err);
	if (rc) {
		pthread_sigmask(SIG_SETMASK, &s->caller_mask, NULL);
		session_free(s);
		unguard();
		return rc;
	}
	*out = s;
	return VT_OK;
}

/*
 * After the last job: end the tracer thread (or, detach_rc VT_E_TIMEOUT,
 * let it go on rescuing the thread in the background, freeing s itself),
 * and give the caller its signals back (a Ctrl-C held meanwhile comes now).
 */
static void session_close(struct vt_inject_session *s, int detach_rc)
{
	sigset_t caller_mask = s->caller_mask;

	if (detach_rc == VT_E_TIMEOUT) {
		end_tracer(s, true);
	} else {
		end_tracer(s, false);
		session_free(s);
		unguard();
	}
	pthread_sigmask(SIG_SETMASK, &caller_mask, NULL);
}

int vt_inject_attach(const struct vt_procfs *pfs, pid_t pid, pid_t tid, unsigned flags,
		     int timeout_ms, struct vt_inject_session **out, struct vt_err *err)
{
	struct attach_args a = { timeout_ms > 0 ? timeout_ms : 1, false };
	struct vt_inject_session *s = NULL;
	struct vt_inject_precheck pc;
	int rc;

	*out = NULL;
	rc = session_open(pfs, pid, tid, flags, HANDOFF_SPIN_US, NULL, &s, &pc, err);
	if (rc)
		return rc;
	a.suspend_seccomp = pc.seccomp;
	rc = run_job(s, job_attach, &a, err);
	if (rc) {
		vt_inject_explain_perm(pfs, s->pid_fd, &pc, tid, err);
		/* A seized thread that never stopped is released by the tracer's exit. */
		session_close(s, VT_OK);
		return rc;
	}
	*out = s;
	return VT_OK;
}

struct probe_args {
	struct attach_args a;
	vt_inject_body body;
	void *arg;
	bool attached;
	int body_rc;
	struct vt_err body_err;
};

/* Attach, the caller's body, detach: one job, so no hand-off while the thread is stopped. */
static int job_probe(struct vt_inject_session *s, void *arg, struct vt_err *err)
{
	struct probe_args *pa = arg;
	int rc = job_attach(s, &pa->a, err);

	if (rc)
		return rc;
	pa->attached = true;
	vt_err_clear(&pa->body_err);
	s->on_tracer = true;
	pa->body_rc = pa->body(s, pa->arg, &pa->body_err);
	s->on_tracer = false;
	return job_detach(s, NULL, err);
}

int vt_inject_probe(const struct vt_procfs *pfs, pid_t pid, pid_t tid, unsigned flags, int timeout_ms,
		    const struct vt_region_list *maps, vt_inject_body body, void *arg, bool *attached,
		    double *stopped_us, struct vt_err *err)
{
	struct probe_args pa = { { timeout_ms > 0 ? timeout_ms : 1, false }, body, arg, false, VT_OK, { 0 } };
	struct vt_inject_session *s = NULL;
	struct vt_inject_precheck pc;
	struct vt_err derr;
	int rc;

	*attached = false;
	if (stopped_us)
		*stopped_us = 0;
	/* No spin: the caller waits once, for the whole probe, and nothing stands stopped for that wait. */
	rc = session_open(pfs, pid, tid, flags, 0, maps, &s, &pc, err);
	if (rc)
		return rc;
	pa.a.suspend_seccomp = pc.seccomp;
	vt_err_clear(&derr);
	rc = run_job(s, job_probe, &pa, &derr);
	if (!pa.attached) {
		if (err)
			*err = derr;
		vt_inject_explain_perm(pfs, s->pid_fd, &pc, tid, err);
		session_close(s, VT_OK);
		return rc;
	}
	*attached = true;
	if (stopped_us && s->t_detached > 0)
		*stopped_us = s->t_detached - s->t_interrupt;
	session_close(s, rc);
	if (pa.body_rc) {
		if (err)
			*err = pa.body_err;
		return pa.body_rc;
	}
	if (rc && err)
		*err = derr;
	return rc;
}

int vt_inject_run(struct vt_inject_session *s, struct vt_inject_call *call, int timeout_ms,
		  struct vt_err *err)
{
	struct run_args ra = { call, timeout_ms > 0 ? timeout_ms : 1 };

	call->ret = 0;
	call->call_us = 0;
	call->scratch_addr = 0;
	if (!call->func)
		return vt_err_set(err, VT_E_USAGE, 0, "no function to call");
	if (call->scratch_len > VT_INJECT_SCRATCH_MAX)
		return vt_err_set(err, VT_E_USAGE, 0, "scratch area of %zu bytes is over %u",
				  call->scratch_len, VT_INJECT_SCRATCH_MAX);
	return run_job(s, job_run, &ra, err);
}

int vt_inject_save_errno(struct vt_inject_session *s, uint64_t errno_location, int timeout_ms,
			 struct vt_err *err)
{
	struct errno_args ea = { errno_location, timeout_ms > 0 ? timeout_ms : 1 };

	if (!errno_location)
		return vt_err_set(err, VT_E_USAGE, 0, "no __errno_location address");
	return run_job(s, job_save_errno, &ea, err);
}

int vt_inject_detach(struct vt_inject_session **sp, double *stopped_us, struct vt_err *err)
{
	struct vt_inject_session *s;
	int rc;

	if (stopped_us)
		*stopped_us = 0;
	if (!sp || !*sp)
		return VT_OK;
	s = *sp;
	*sp = NULL;
	rc = run_job(s, job_detach, NULL, err);
	if (stopped_us && s->t_detached > 0)
		*stopped_us = s->t_detached - s->t_interrupt;
	/* VT_E_TIMEOUT: the tracer thread keeps waiting for the thread to stop, then frees s. */
	session_close(s, rc);
	return rc;
}

bool vt_inject_saved_regs(const struct vt_inject_session *s, unsigned i, const void **data,
			  size_t *len)
{
	if (!s || i >= s->nregs)
		return false;
	*data = s->regs[i].data;
	*len = s->regs[i].len;
	return true;
}

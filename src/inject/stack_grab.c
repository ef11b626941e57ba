/*
 * stack_grab.c — stop one thread for the copy of its registers and stack.
 *
 * Every ptrace request is made by a tracer thread (inject/tracer.h), which
 * bounds every wait and is itself the last-resort release: when a thread
 * does not stop in time the grab retires the tracer, whose thread ends, the
 * kernel detaches that thread, pending interrupt included (exit_ptrace),
 * and the next grab starts another.  Unlike an injected call, a grab changes
 * nothing in the thread: from its stop it is only read, then detached.
 *
 * A running_only grab (a CPU profile) leaves alone a thread that last ran
 * on the CPU the caller or the tracer is on: it is not running, vitals
 * preempted it there, and most often at the return from a system call that
 * updates its run time (clock_gettime of a CPU clock, a futex), where its
 * stop would land: a profile of a paced thread on a two-CPU box put 10% of
 * its samples in one such call, 0.1% of its time.  And a stop that finds
 * the thread was switched in since the look (schedstat) is flagged
 * (queued): it was waiting for a CPU then, preempted at such a point.
 * Pinning the tracer to a CPU of its own choosing was tried and dropped: on
 * a busy box it waited behind the thread that held that CPU, and the
 * thread it had stopped stood stopped until then (3 s of 6 s once).
 */
#include "inject/stack_grab.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "elf/elfsym.h"
#include "inject/inject.h"
#include "inject/stop_guard.h"
#include "inject/tracer.h"
#include "proc/schedstat.h"
#include "proc/stat.h"
#include "proc/status.h"

#if !defined(__x86_64__)
#error "stack_grab reads x86-64 registers (user_regs_struct)"
#endif

#define TIMEOUT_DEFAULT_US 2000u
/* Longest sleep between two looks when SIGCHLD does not come (another thread took it). */
#define NAP_MAX_NS 100000ull
/* How long an exiting thread (ESRCH while stopped) may take to be collected. */
#define EXIT_WAIT_NS 200000000ull
/* After a tracer thread ended, how long the kernel may take to show the thread untraced. */
#define RELEASE_WAIT_NS 20000000ull
/* Credit of a thread first seen (share x this), and the most it may save up (share x 1 s). */
#define CREDIT_START_US 100000.0
#define CREDIT_CAP_US 1000000.0
#define ERESTARTSYS 512
#define ERESTART_RESTARTBLOCK 516

unsigned vt_stack_grab_test_seize_delay_us;

/* What the tracer thread did with one grab. */
enum outcome {
	OUT_SAMPLE,       /* sampled and released */
	OUT_SEIZE_PERM,   /* PTRACE_SEIZE: EPERM (explained by the caller's thread) */
	OUT_STOPPED,      /* in a group stop: released into it */
	OUT_TIMEOUT,      /* did not stop: the tracer must end to release it */
	OUT_GONE,         /* exited */
	OUT_FAIL,         /* a request failed (errno in e) */
	OUT_NOT_RUNNING,  /* running_only: not in state R at the last look, left alone */
};

struct job {
	pid_t pid, tid;
	int pid_fd;          /* running_only: the process's /proc directory, else -1 */
	uint64_t timeout_ns;
	struct vt_stack_grab_sample *out;
	enum outcome outcome;
	int e;               /* errno of a failure */
	const char *what;    /* the request that failed */
	bool retire;         /* the tracer thread must end: a thread may still be traced by it */
	uint64_t last_look_ns;   /* a timeout: when it was last seen not stopped */
};

struct thread_slot {
	pid_t tid;           /* 0: free */
	uint64_t first_ns, last_ns;
	double credit_us;
	double pause_us;
	uint64_t grabs;
};

struct vt_stack_grab {
	const struct vt_procfs *pfs;
	pid_t pid;
	int pid_fd;
	double share;
	unsigned rate;
	bool running_only;
	double tokens;
	uint64_t tokens_ns;
	struct vt_tracer *tr;
	bool sigchld_was_blocked;
	struct thread_slot *slots;
	size_t cap, n;
	struct vt_stack_grab_stats st;
};

/* ---- on the tracer thread ------------------------------------------------ */

enum wait_result { W_STOPPED, W_EXITED, W_DEADLINE, W_ERROR };

/*
 * Wait for tid's next report until deadline, asleep on the tracer's SIGCHLD
 * signalfd (at most NAP_MAX_NS at a time, in case another thread of vitals
 * took the SIGCHLD).  No yield-polling: a tracer that slept is woken with
 * the scheduler's preference for a waking task, one that yielded waits its
 * turn behind the busy threads of a loaded box while the tracee is stopped.
 */
static enum wait_result wait_report(struct vt_tracer *t, pid_t tid, uint64_t deadline, int *status)
{
	uint64_t now;
	pid_t r;

	for (;;) {
		/* the stop's signal stays in the thread until its detach, even if vitals dies */
		r = vt_inject_wait_keep(tid, status);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return errno == ECHILD ? W_EXITED : W_ERROR;
		if (r == tid) {
			if (WIFEXITED(*status) || WIFSIGNALED(*status))
				return W_EXITED;
			if (WIFSTOPPED(*status))
				return W_STOPPED;
			continue;
		}
		now = vt_mono_ns();
		if (now >= deadline)
			return W_DEADLINE;
		vt_tracer_nap(t, deadline - now < NAP_MAX_NS ? deadline - now : NAP_MAX_NS);
	}
}

/* A request on a stopped thread failed with ESRCH: it is being killed.  Collect its exit. */
static enum outcome collect_exit(struct vt_tracer *t, struct job *j)
{
	uint64_t deadline = vt_mono_ns() + EXIT_WAIT_NS;
	int status;
	enum wait_result w;

	do
		w = wait_report(t, j->tid, deadline, &status);
	while (w == W_STOPPED);
	if (w != W_EXITED)
		j->retire = true;   /* still ours: the tracer's end releases it */
	return OUT_GONE;
}

static void regs_to_perf(const struct user_regs_struct *r, uint64_t *p)
{
	p[VT_PERF_REG_AX] = r->rax;
	p[VT_PERF_REG_BX] = r->rbx;
	p[VT_PERF_REG_CX] = r->rcx;
	p[VT_PERF_REG_DX] = r->rdx;
	p[VT_PERF_REG_SI] = r->rsi;
	p[VT_PERF_REG_DI] = r->rdi;
	p[VT_PERF_REG_BP] = r->rbp;
	p[VT_PERF_REG_SP] = r->rsp;
	p[VT_PERF_REG_IP] = r->rip;
	p[VT_PERF_REG_R8] = r->r8;
	p[VT_PERF_REG_R9] = r->r9;
	p[VT_PERF_REG_R10] = r->r10;
	p[VT_PERF_REG_R11] = r->r11;
	p[VT_PERF_REG_R12] = r->r12;
	p[VT_PERF_REG_R13] = r->r13;
	p[VT_PERF_REG_R14] = r->r14;
	p[VT_PERF_REG_R15] = r->r15;
}

/* At a stop: the registers and the stack, read only. */
static int copy_thread(struct job *j)
{
	struct vt_stack_grab_sample *o = j->out;
	struct user_regs_struct r;
	long ret;

	if (vt_inject_ptrace(PTRACE_GETREGS, j->tid, NULL, &r) < 0)
		return -1;
	regs_to_perf(&r, o->sample.regs);
	o->sample.regs_ok = true;
	o->sample.ip = r.rip;
	o->syscall = (long)r.orig_rax;
	ret = (long)r.rax;
	o->syscall_restarts = o->syscall >= 0 && ret <= -ERESTARTSYS && ret >= -ERESTART_RESTARTBLOCK;
	/* From the stack pointer up; a read that runs past the top of the stack stops there. */
	struct iovec local = { o->stack_copy, VT_STACK_GRAB_BYTES };
	struct iovec remote = { (void *)(uintptr_t)r.rsp, VT_STACK_GRAB_BYTES };
	ssize_t n = process_vm_readv(j->pid, &local, 1, &remote, 1, 0);

	o->sample.stack = o->stack_copy;
	o->sample.stack_len = n > 0 ? (uint32_t)n : 0;
	return 0;
}

/*
 * The state letter of thread tid from its task/TID/stat under pid_fd (0
 * when it is gone) and the CPU it last ran on (-1 unknown); -1 (errno set)
 * when it cannot be read.
 */
/* Read task/TID/NAME under pid_fd into buf (no allocation: the tracer reads it
 * mid-stop): its length, 0 when the thread is gone, -1 (errno set) when unopenable. */
static ssize_t read_task_file(int pid_fd, pid_t tid, const char *name, char *buf, size_t len)
{
	char rel[64];
	ssize_t n;
	int fd;

	snprintf(rel, sizeof(rel), "task/%d/%s", (int)tid, name);
	fd = openat(pid_fd, rel, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, len);
	close(fd);
	return n < 0 ? 0 : n;
}

static int read_task_state(int pid_fd, pid_t tid, char *state, int *cpu)
{
	char buf[1024];
	struct vt_proc_stat st;
	ssize_t n = read_task_file(pid_fd, tid, "stat", buf, sizeof(buf));

	if (n < 0)
		return -1;
	if (n == 0) {
		*state = 0;
		return 0;
	}
	if (vt_proc_stat_parse(buf, (size_t)n, &st, NULL) != VT_OK) {
		errno = EINVAL;
		return -1;
	}
	*state = st.state;
	*cpu = st.processor >= 0 && st.processor <= INT32_MAX ? (int)st.processor : -1;
	return 0;
}

/* Times thread tid was switched in (schedstat's third field), UINT64_MAX unknown. */
static uint64_t read_switch_ins(int pid_fd, pid_t tid)
{
	char buf[128];
	struct vt_schedstat ss;
	struct vt_err err;
	ssize_t n = read_task_file(pid_fd, tid, "schedstat", buf, sizeof(buf));

	if (n <= 0 || vt_schedstat_parse(buf, (size_t)n, &ss, &err) != VT_OK)
		return UINT64_MAX;
	return ss.timeslices;
}

/* The tracer's job: one grab.  Retires the tracer when a thread may still be traced. */
static bool grab(struct vt_tracer *t, void *arg)
{
	struct job *j = arg;
	struct vt_stack_grab_sample *o = j->out;
	uint64_t t0, t_stop = 0, t1;
	int status, sig = 0, e;
	enum wait_result w;
	char state;
	int cpu;
	uint64_t switch_ins = UINT64_MAX;

	/* The last look, from this thread just before the stop: a thread that was running
	 * when the caller looked may have gone to sleep while this thread was woken. */
	if (j->pid_fd >= 0 && read_task_state(j->pid_fd, j->tid, &state, &cpu) == 0) {
		o->state = state;
		if (state != 'R' || cpu == sched_getcpu()) {
			j->outcome = state == 0 ? OUT_GONE : OUT_NOT_RUNNING;
			return j->retire;
		}
		switch_ins = read_switch_ins(j->pid_fd, j->tid);
	}
	if (vt_inject_ptrace(PTRACE_SEIZE, j->tid, NULL, NULL) < 0) {
		e = errno;
		j->outcome = e == EPERM ? OUT_SEIZE_PERM : e == ESRCH ? OUT_GONE : OUT_FAIL;
		j->e = e;
		j->what = "PTRACE_SEIZE";
		return j->retire;
	}
	if (vt_stack_grab_test_seize_delay_us) {
		struct timespec ts = { 0, (long)vt_stack_grab_test_seize_delay_us * 1000 };

		nanosleep(&ts, NULL);
	}
	t0 = vt_mono_ns();
	if (vt_inject_ptrace(PTRACE_INTERRUPT, j->tid, NULL, NULL) < 0) {
		/* Seized but not interruptible: only the tracer's end lets it go. */
		j->e = errno;
		j->what = "PTRACE_INTERRUPT";
		j->retire = true;
		j->outcome = j->e == ESRCH ? OUT_GONE : OUT_FAIL;
		return j->retire;
	}
	w = wait_report(t, j->tid, t0 + j->timeout_ns, &status);
	if (w == W_DEADLINE || w == W_ERROR) {
		j->e = w == W_ERROR ? errno : 0;
		j->what = "waitpid";
		j->retire = true;
		j->outcome = w == W_DEADLINE ? OUT_TIMEOUT : OUT_FAIL;
		/* Not stopped at the last look: stopped at most from then to its release. */
		j->last_look_ns = vt_mono_ns() - NAP_MAX_NS;
		return j->retire;
	}
	if (w == W_EXITED) {
		j->outcome = OUT_GONE;
		return j->retire;
	}
	t_stop = vt_mono_ns();
	sig = WSTOPSIG(status);
	if ((status >> 16) == PTRACE_EVENT_STOP && sig != SIGTRAP) {
		/* A group stop: detached, the kernel puts it back in the stop. */
		j->outcome = OUT_STOPPED;
		sig = 0;
	} else {
		if ((status >> 16) == PTRACE_EVENT_STOP)
			sig = 0;   /* our interrupt's stop */
		/* else a signal-delivery-stop: sig is passed on at detach */
		if (copy_thread(j) < 0) {
			if (errno == ESRCH) {
				j->outcome = collect_exit(t, j);
				return j->retire;
			}
			j->e = errno;
			j->what = "PTRACE_GETREGS";
			j->outcome = OUT_FAIL;   /* released below all the same */
		} else {
			j->outcome = OUT_SAMPLE;
			o->signal = sig;
			o->sample.time_ns = t_stop;
			/* switched in since the look: it was waiting for a CPU then, and stopped
			 * where it had been preempted, not at a moment of its running */
			if (switch_ins != UINT64_MAX) {
				uint64_t now_ins = read_switch_ins(j->pid_fd, j->tid);
				o->queued = now_ins != UINT64_MAX && now_ins != switch_ins;
			}
		}
	}
	if (vt_inject_ptrace(PTRACE_DETACH, j->tid, NULL, (void *)(uintptr_t)sig) < 0) {
		if (errno == ESRCH) {
			j->outcome = collect_exit(t, j);
			return j->retire;
		}
		j->e = errno;
		j->what = "PTRACE_DETACH";
		j->retire = true;
		j->outcome = OUT_FAIL;
	}
	t1 = vt_mono_ns();
	o->pause_us = (double)(t1 - t0) / 1e3;
	o->stopped_us = (double)(t1 - t_stop) / 1e3;
	return j->retire;
}

/* ---- /proc ------------------------------------------------------------------ */

/* The thread's state letter; VT_E_GONE / VT_E_NOPROC when it is not there. */
static int task_state(struct vt_stack_grab *g, pid_t tid, char *state, int *cpu,
		      struct vt_err *err)
{
	if (read_task_state(g->pid_fd, tid, state, cpu) < 0) {
		if (errno == ENOENT || errno == ESRCH)
			return vt_err_set(err, VT_E_NOPROC, errno, "no thread %d in process %d",
					  (int)tid, (int)g->pid);
		if (errno == EINVAL)
			return vt_err_set(err, VT_E_FAIL, 0, "thread %d: malformed stat", (int)tid);
		return vt_err_set(err, VT_E_FAIL, errno, "cannot read thread %d: %s", (int)tid,
				  strerror(errno));
	}
	if (!*state)
		return vt_err_set(err, VT_E_GONE, ESRCH, "thread %d exited", (int)tid);
	return VT_OK;
}

/* Who traces the thread (TracerPid), 0 none, -1 unknown. */
static long task_tracer(struct vt_stack_grab *g, pid_t tid)
{
	struct vt_buf buf = VT_BUF_INIT(64 * 1024);
	struct vt_proc_status st;
	char rel[64];
	long tracer = -1;

	snprintf(rel, sizeof(rel), "task/%d/status", (int)tid);
	if (vt_read_at(g->pid_fd, rel, &buf, NULL) == VT_OK &&
	    vt_proc_status_parse(buf.data, buf.len, &st, NULL) == VT_OK)
		tracer = (long)st.tracer_pid;
	vt_buf_release(&buf);
	return tracer;
}

/* EPERM from PTRACE_SEIZE: traced by someone else, or which access rule refused it. */
static int explain_seize_perm(struct vt_stack_grab *g, pid_t tid, struct vt_err *err)
{
	struct vt_inject_precheck pc = { false, -1 };
	int rc;

	rc = vt_inject_precheck(g->pfs, g->pid_fd, g->pid, tid, &pc, err);
	if (rc == VT_E_PERM)
		return rc;   /* already traced: the message names the tracer */
	if (rc == VT_E_NOPROC || rc == VT_E_ZOMBIE || rc == VT_E_GONE)
		return vt_err_set(err, VT_E_GONE, ESRCH, "thread %d exited", (int)tid);
	vt_err_set(err, VT_E_PERM, EPERM, "cannot attach to thread %d", (int)tid);
	pc.seccomp = false;   /* no PTRACE_O_SUSPEND_SECCOMP asked: not the reason */
	vt_inject_explain_perm(g->pfs, g->pid_fd, &pc, tid, err);
	return VT_E_PERM;
}

/* ---- budget --------------------------------------------------------------- */

static struct thread_slot *slot_find(struct vt_stack_grab *g, pid_t tid, bool add)
{
	size_t i;

	if (add && (g->n + 1) * 2 > g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 64;
		struct thread_slot *n = calloc(cap, sizeof(*n));

		if (!n)
			return NULL;
		for (i = 0; i < g->cap; i++) {
			if (!g->slots[i].tid)
				continue;
			size_t s = (size_t)g->slots[i].tid & (cap - 1);
			while (n[s].tid)
				s = (s + 1) & (cap - 1);
			n[s] = g->slots[i];
		}
		free(g->slots);
		g->slots = n;
		g->cap = cap;
	}
	if (!g->cap)
		return NULL;
	i = (size_t)tid & (g->cap - 1);
	while (g->slots[i].tid && g->slots[i].tid != tid)
		i = (i + 1) & (g->cap - 1);
	if (g->slots[i].tid == tid)
		return &g->slots[i];
	if (!add)
		return NULL;
	g->slots[i].tid = tid;
	g->n++;
	return &g->slots[i];
}

/* May tid be stopped now?  Refills the credits up to now. */
static enum vt_stack_grab_held budget_check(struct vt_stack_grab *g, struct thread_slot *s,
					    uint64_t now)
{
	double cap_us = g->share * CREDIT_CAP_US, burst = g->rate / 10.0 > 1 ? g->rate / 10.0 : 1;

	if (!s->first_ns) {
		s->first_ns = s->last_ns = now;
		s->credit_us = g->share * CREDIT_START_US;
	}
	s->credit_us += g->share * (double)(now - s->last_ns) / 1e3;
	if (s->credit_us > cap_us)
		s->credit_us = cap_us;
	s->last_ns = now;
	g->tokens += g->rate * (double)(now - g->tokens_ns) / 1e9;
	if (g->tokens > burst)
		g->tokens = burst;
	g->tokens_ns = now;
	if (s->credit_us <= 0)
		return VT_GRAB_HELD_THREAD;
	if (g->tokens < 1)
		return VT_GRAB_HELD_RATE;
	return VT_GRAB_TAKEN;
}

static void budget_spend(struct vt_stack_grab *g, struct thread_slot *s, double pause_us, bool took)
{
	uint64_t now = vt_mono_ns();
	double share;

	g->tokens -= 1;
	s->credit_us -= pause_us;
	s->pause_us += pause_us;
	g->st.pause_total_us += pause_us;
	if (pause_us > g->st.pause_max_us)
		g->st.pause_max_us = pause_us;
	if (took) {
		if (!s->grabs)
			g->st.threads++;
		s->grabs++;
	}
	/* The share over at least one second, so that a first grab does not read as 100 %. */
	share = s->pause_us / fmax((double)(now - s->first_ns) / 1e3, CREDIT_CAP_US);
	if (share > g->st.max_thread_share)
		g->st.max_thread_share = share;
}

/* ---- public ------------------------------------------------------------------ */

static int check_process(struct vt_stack_grab *g, struct vt_err *err)
{
	struct vt_buf buf = VT_BUF_INIT(64 * 1024);
	struct vt_proc_stat ps;
	struct vt_proc_status st;
	struct vt_elfsym *ef;
	int rc, fd, cls, machine;
	char probe;

	rc = vt_read_at(g->pid_fd, "stat", &buf, err);
	if (rc == VT_E_GONE || rc == VT_E_NOTFOUND)
		rc = vt_err_set(err, VT_E_NOPROC, ESRCH, "process %d exited", (int)g->pid);
	if (rc || (rc = vt_proc_stat_parse(buf.data, buf.len, &ps, err)))
		goto out;
	if (ps.flags & VT_PF_KTHREAD) {
		rc = vt_err_set(err, VT_E_KTHREAD, 0, "%d is a kernel thread", (int)g->pid);
		goto out;
	}
	if (ps.state == 'Z' || ps.state == 'X') {
		rc = vt_err_set(err, VT_E_ZOMBIE, 0, "process %d has exited (state %c)", (int)g->pid,
				ps.state);
		goto out;
	}
	/*
	 * ptrace access, without attaching: process_vm_readv makes the same
	 * check (PTRACE_MODE_ATTACH_REALCREDS, Yama included) before it looks
	 * at the address, so address 0 gives EPERM or EFAULT.
	 */
	struct iovec local = { &probe, 1 }, remote = { NULL, 1 };

	if (process_vm_readv(g->pid, &local, 1, &remote, 1, 0) < 0 && errno == EPERM) {
		struct vt_inject_precheck pc = { false, -1 };

		if (vt_read_at(g->pid_fd, "status", &buf, NULL) == VT_OK &&
		    vt_proc_status_parse(buf.data, buf.len, &st, NULL) == VT_OK)
			pc.uid = (long)st.uid_real;
		vt_err_set(err, VT_E_PERM, EPERM, "cannot trace process %d", (int)g->pid);
		vt_inject_explain_perm(g->pfs, g->pid_fd, &pc, g->pid, err);
		rc = VT_E_PERM;
		goto out;
	}
	/* The registers read are x86-64's: refuse an i386 or x32 program. */
	fd = openat(g->pid_fd, "exe", O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && vt_elfsym_open_fd(fd, &ef, NULL) == VT_OK) {
		bool known = vt_elfsym_abi(ef, &cls, &machine);

		vt_elfsym_free(&ef);
		if (known && (cls != ELFCLASS64 || machine != EM_X86_64)) {
			rc = vt_err_set(err, VT_E_UNSUPPORTED, 0, "process %d is not an x86-64 "
					"program (ELF class %d, machine %d): its stacks cannot be "
					"read with ptrace", (int)g->pid, cls, machine);
			goto out;
		}
	} else if (fd >= 0) {
		close(fd);
	}
	rc = VT_OK;
out:
	vt_buf_release(&buf);
	return rc;
}

int vt_stack_grab_open(const struct vt_procfs *pfs, pid_t pid, const struct vt_stack_grab_opts *opts,
		       struct vt_stack_grab **out, struct vt_err *err)
{
	struct vt_stack_grab *g;
	sigset_t chld, old;
	int rc;

	*out = NULL;
	if (!pfs->live)
		return vt_err_set(err, VT_E_UNSUPPORTED, 0, "cannot stop threads of a recorded /proc tree");
	if (pid == getpid())
		return vt_err_set(err, VT_E_USAGE, 0, "cannot grab the stacks of vitals itself");
	if (opts && (opts->max_pause_share < 0 || opts->max_pause_share > 0.5 ||
		     isnan(opts->max_pause_share)))
		return vt_err_set(err, VT_E_USAGE, 0, "pause share %g is not between 0 and 0.5",
				  opts->max_pause_share);
	g = calloc(1, sizeof(*g));
	if (!g)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory for a stack grab session");
	g->pfs = pfs;
	g->pid = pid;
	g->share = opts && opts->max_pause_share > 0 ? opts->max_pause_share
						     : VT_STACK_GRAB_SHARE_DEFAULT;
	g->rate = opts && opts->max_grabs_per_s ? opts->max_grabs_per_s : VT_STACK_GRAB_RATE_DEFAULT;
	g->running_only = opts && opts->running_only;
	g->tokens = g->rate / 10.0 > 1 ? g->rate / 10.0 : 1;
	g->tokens_ns = vt_mono_ns();
	rc = vt_pid_open(pfs, pid, &g->pid_fd, err);
	if (rc) {
		free(g);
		return rc;
	}
	rc = check_process(g, err);
	/* Kept by a watchdog: a stopped vitals cannot keep a grabbed thread stopped. */
	if (!rc && !(rc = vt_stop_guard_arm(err)) && (rc = vt_tracer_start(0, &g->tr, err)))
		vt_stop_guard_disarm();
	if (rc) {
		close(g->pid_fd);
		free(g);
		return rc;
	}
	/* The stops' SIGCHLD waits for the tracer's signalfd instead of being discarded. */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &chld, &old);
	g->sigchld_was_blocked = sigismember(&old, SIGCHLD) == 1;
	*out = g;
	return VT_OK;
}

/* A tracer thread ended with a thread perhaps still traced: wait until the kernel let it go. */
static void await_release(struct vt_stack_grab *g, pid_t tid)
{
	uint64_t until = vt_mono_ns() + RELEASE_WAIT_NS;
	struct timespec ts = { 0, 200000 };

	while (task_tracer(g, tid) > 0 && vt_mono_ns() < until)
		nanosleep(&ts, NULL);
}

int vt_stack_grab(struct vt_stack_grab *g, pid_t tid, unsigned timeout_us,
		  struct vt_stack_grab_sample *out, struct vt_err *err)
{
	struct thread_slot *s;
	struct job j;
	char state;
	int cpu;
	int rc;

	out->held = VT_GRAB_TAKEN;
	memset(&out->sample, 0, sizeof(out->sample));
	out->sample.pid = g->pid;
	out->sample.tid = tid;
	out->state = 0;
	out->syscall = -1;
	out->syscall_restarts = false;
	out->queued = false;
	out->signal = 0;
	out->pause_us = out->stopped_us = 0;
	s = slot_find(g, tid, true);
	if (!s)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory for thread %d", (int)tid);
	out->held = budget_check(g, s, vt_mono_ns());
	if (out->held == VT_GRAB_HELD_THREAD) {
		g->st.held_thread++;
		return VT_OK;
	}
	if (out->held == VT_GRAB_HELD_RATE) {
		g->st.held_rate++;
		return VT_OK;
	}
	rc = task_state(g, tid, &state, &cpu, err);
	if (rc) {
		if (rc == VT_E_GONE)
			g->st.gone++;
		return rc;
	}
	out->state = state;
	if (state == 'Z' || state == 'X') {
		g->st.gone++;
		return vt_err_set(err, VT_E_GONE, ESRCH, "thread %d exited", (int)tid);
	}
	/* state R on this very CPU: queued behind vitals, not running */
	if (g->running_only && (state != 'R' || cpu == sched_getcpu())) {
		out->held = VT_GRAB_NOT_RUNNING;
		g->st.not_running++;
		return VT_OK;
	}
	if (state == 'T') {
		g->st.stopped++;
		return vt_err_set(err, VT_E_UNSUPPORTED, 0, "thread %d is stopped (state T): left so",
				  (int)tid);
	}
	if (!g->tr && (rc = vt_tracer_start(0, &g->tr, err)))
		return rc;
	memset(&j, 0, sizeof(j));
	j.pid = g->pid;
	j.tid = tid;
	j.pid_fd = g->running_only ? g->pid_fd : -1;
	j.timeout_ns = (uint64_t)(timeout_us ? timeout_us : TIMEOUT_DEFAULT_US) * 1000;
	j.out = out;
	vt_stop_guard_hold();
	vt_tracer_run(g->tr, grab, &j);
	if (j.retire) {
		vt_tracer_end(g->tr);
		g->tr = NULL;
		g->st.tracer_restarts++;
		await_release(g, tid);
		if (j.last_look_ns)
			out->pause_us = (double)(vt_mono_ns() - j.last_look_ns) / 1e3;
	}
	vt_stop_guard_release();
	if (j.outcome == OUT_SAMPLE || j.outcome == OUT_STOPPED || j.outcome == OUT_TIMEOUT ||
	    out->pause_us > 0)
		budget_spend(g, s, out->pause_us, j.outcome == OUT_SAMPLE);
	switch (j.outcome) {
	case OUT_NOT_RUNNING:
		out->held = VT_GRAB_NOT_RUNNING;
		g->st.not_running++;
		return VT_OK;
	case OUT_SAMPLE:
		g->st.grabs++;
		if (out->signal)
			g->st.signals++;
		if (out->queued)
			g->st.queued++;
		if (out->syscall >= 0 && (long)out->sample.regs[VT_PERF_REG_AX] == -EINTR)
			g->st.eintr++;
		return VT_OK;
	case OUT_SEIZE_PERM:
		return explain_seize_perm(g, tid, err);
	case OUT_STOPPED:
		g->st.stopped++;
		return vt_err_set(err, VT_E_UNSUPPORTED, 0, "process %d is being stopped (job control): "
				  "thread %d left in the stop", (int)g->pid, (int)tid);
	case OUT_TIMEOUT:
		g->st.timeouts++;
		return vt_err_set(err, VT_E_TIMEOUT, 0, "thread %d did not stop within %u us "
				  "(uninterruptible sleep, or no CPU for it); released untouched",
				  (int)tid, timeout_us ? timeout_us : TIMEOUT_DEFAULT_US);
	case OUT_GONE:
		g->st.gone++;
		return vt_err_set(err, VT_E_GONE, ESRCH, "thread %d exited", (int)tid);
	case OUT_FAIL:
	default:
		return vt_err_set(err, VT_E_FAIL, j.e, "%s of thread %d failed: %s", j.what,
				  (int)tid, strerror(j.e));
	}
}

void vt_stack_grab_get_stats(const struct vt_stack_grab *g, struct vt_stack_grab_stats *out)
{
	*out = g->st;
}

bool vt_stack_grab_thread(const struct vt_stack_grab *g, pid_t tid, struct vt_stack_grab_thread *out)
{
	struct thread_slot *s = slot_find((struct vt_stack_grab *)g, tid, false);

	if (!s || !s->first_ns)
		return false;
	out->grabs = s->grabs;
	out->pause_us = s->pause_us;
	out->seen_s = (double)(vt_mono_ns() - s->first_ns) / 1e9;
	return true;
}

void vt_stack_grab_close(struct vt_stack_grab **gp)
{
	struct vt_stack_grab *g;

	if (!gp || !*gp)
		return;
	g = *gp;
	*gp = NULL;
	vt_tracer_end(g->tr);
	vt_stop_guard_disarm();
	if (!g->sigchld_was_blocked) {
		sigset_t chld;

		sigemptyset(&chld);
		sigaddset(&chld, SIGCHLD);
		pthread_sigmask(SIG_UNBLOCK, &chld, NULL);
	}
	close(g->pid_fd);
	free(g->slots);
	free(g);
}

/*
 * pick.c — choose the one thread of a process to stop for a call.
 *
 * Reads /proc/PID/task/TID/{stat,syscall} for every thread and ranks them by
 * the class of the system call they are blocked in (vt_arch_syscall_class).
 * The measured facts behind the ranking are in docs/inject.md: stopping a
 * thread that is blocked in a system call and not inside the allocator
 * never deadlocked; one stopped inside malloc did, 3-22 % of the time.  The
 * choice is checked again once the thread is stopped (vt_inject_attach):
 * between here and there it may have woken up.  Nothing here stops anything.
 */
#include "inject/inject.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <elf.h>

#include "base/scan.h"
#include "elf/elfsym.h"
#include "proc/access.h"
#include "proc/mem.h"
#include "proc/stat.h"
#include "proc/status.h"
#include "proc/task.h"

#define TASK_FILE_MAX 4096
#define STATUS_MAX (64 * 1024)

/*
 * The ABI the call code of this build handles (call_<arch>.c): a process
 * built for another one (a 32-bit i386 or x32 program on x86-64) has other
 * registers, another stack layout and other system call numbers, so even
 * its /proc/PID/task/TID/syscall reads differently.
 */
#if defined(__x86_64__) && defined(__LP64__)
#define CALL_ELF_CLASS ELFCLASS64
#define CALL_ELF_MACHINE EM_X86_64
#define CALL_ABI_NAME "x86-64"
#else
#error "call injection has no architecture file for this target (see inject.h)"
#endif

bool vt_inject_syscall_parse(const char *buf, size_t len, struct vt_inject_syscall *out)
{
	struct vt_scan s = vt_scan_init(buf, len);
	const char *w;
	size_t wl, i;
	uint64_t v[9];
	int64_t nr;

	memset(out, 0, sizeof(*out));
	out->nr = -1;
	if (!vt_scan_word(&s, &w, &wl))
		return false;
	if (wl == 7 && memcmp(w, "running", 7) == 0) {
		out->running = true;
		return true;
	}
	s = vt_scan_init(buf, len);
	if (!vt_scan_i64(&s, &nr) || nr < -1)
		return false;
	/* "-1 sp pc" outside a system call, "nr a1 .. a6 sp pc" inside one. */
	for (i = 0; i < (nr < 0 ? 2u : 8u); i++) {
		vt_scan_blanks(&s);
		if (!vt_scan_char(&s, '0') || !vt_scan_char(&s, 'x') || !vt_scan_hex(&s, &v[i]))
			return false;
	}
	vt_scan_blanks(&s);
	if (!vt_scan_eof(&s) && *s.p != '\n')
		return false;
	out->nr = (long)nr;
	if (nr >= 0)
		memcpy(out->args, v, sizeof(out->args));
	out->sp = v[nr < 0 ? 0 : 6];
	out->pc = v[nr < 0 ? 1 : 7];
	return true;
}

/* A refusal compared by address in tally(). */
static const char unsafe_call[] = "in a system call where a call is unsafe";

struct candidate {
	pid_t tid;
	int rank;            /* vt_sys_class, or -1: not usable */
	uint64_t cpu_ticks;
	char comm[64];
	char state;
	long nr;
	const char *reason;  /* why not usable */
	bool user_mode;      /* running or preempted outside a system call */
	uint64_t sp;         /* its user stack pointer, 0 when the syscall file gave none */
	int64_t wait_ms;     /* how long its call may sleep (sleep_ms), WAIT_UNKNOWN_MS unknown */
};

#define WAIT_UNKNOWN_MS 1000          /* a read, an accept: woken by events, whenever */
#define WAIT_FOREVER_MS INT64_MAX     /* pause, poll with no timeout */

/*
 * How long the call thread tid is blocked in may sleep, from its arguments
 * (a nanosleep's request read from the thread's memory, without stopping
 * it): between threads of one class, the longest sleeper is stopped.  A
 * thread that sleeps a few hundred microseconds at a time may be pacing
 * itself inside a critical section (a worker sleeping with the program's
 * hot lock held, 499 threads waiting on it), where a process's idle main
 * thread sleeps for minutes.
 */
static int64_t sleep_ms(pid_t tid, long nr, const uint64_t args[6])
{
	struct timespec ts, now;
	uint64_t ptr = 0;
	bool absolute = false;

	if (nr == SYS_nanosleep)
		ptr = args[0];
	else if (nr == SYS_clock_nanosleep) {
		ptr = args[2];
		absolute = args[1] & TIMER_ABSTIME;
	}
#ifdef SYS_poll
	else if (nr == SYS_poll)
		return (int)args[2] < 0 ? WAIT_FOREVER_MS : (int)args[2];
#endif
#ifdef SYS_pause
	else if (nr == SYS_pause)
		return WAIT_FOREVER_MS;
#endif
	if (!ptr || vt_mem_read(tid, ptr, &ts, sizeof(ts), NULL) != VT_OK || ts.tv_sec < 0 || ts.tv_nsec < 0 ||
	    ts.tv_nsec >= 1000000000L)
		return WAIT_UNKNOWN_MS;
	if (absolute) {
		/* the system-wide clocks only (a CPU-time clock id would read vitals' own); the
		 * target's in a time namespace may be offset from vitals', which only the tie
		 * between two sleepers depends on */
		if ((args[0] != CLOCK_REALTIME && args[0] != CLOCK_MONOTONIC && args[0] != CLOCK_BOOTTIME &&
		     args[0] != CLOCK_TAI) || clock_gettime((clockid_t)args[0], &now))
			return WAIT_UNKNOWN_MS;
		ts.tv_sec -= now.tv_sec;
		ts.tv_nsec -= now.tv_nsec;
		if (ts.tv_nsec < 0) {
			ts.tv_sec--;
			ts.tv_nsec += 1000000000L;
		}
		if (ts.tv_sec < 0)
			return 0;
	}
	return ts.tv_sec > INT64_MAX / 1000 - 1 ? WAIT_FOREVER_MS : ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *class_note(enum vt_sys_class cls)
{
	switch (cls) {
	case VT_SYS_EINTR:
		return ", which returns EINTR to the program when stopped";
	case VT_SYS_FUTEX:
		return " (a lock or condition wait)";
	case VT_SYS_OTHER:
		return " (may be inside a library)";
	default:
		return "";
	}
}

/* Read one thread; VT_E_GONE for a thread that exited meanwhile (skipped). */
static int read_candidate(int pid_fd, pid_t tid, struct vt_buf *buf, struct candidate *c,
			  struct vt_err *err)
{
	struct vt_inject_syscall sc;
	struct vt_proc_stat st;
	char rel[64];
	int rc;

	memset(c, 0, sizeof(*c));
	c->tid = tid;
	c->rank = -1;
	c->nr = -1;
	snprintf(rel, sizeof(rel), "task/%d/stat", (int)tid);
	rc = vt_read_at(pid_fd, rel, buf, err);
	if (rc == VT_E_NOTFOUND)
		return VT_E_GONE;
	if (rc || (rc = vt_proc_stat_parse(buf->data, buf->len, &st, err)))
		return rc;
	c->state = st.state;
	c->cpu_ticks = st.utime_ticks + st.stime_ticks;
	snprintf(c->comm, sizeof(c->comm), "%s", st.comm);
	snprintf(rel, sizeof(rel), "task/%d/syscall", (int)tid);
	rc = vt_read_at(pid_fd, rel, buf, err);
	if (rc == VT_E_NOTFOUND)
		return VT_E_GONE;
	if (rc)
		return rc;
	if (!vt_inject_syscall_parse(buf->data, buf->len, &sc)) {
		c->reason = "unreadable syscall state";
		return VT_OK;
	}
	if (!sc.running)
		c->sp = sc.sp;
	if (sc.running || st.state == 'R') {
		c->reason = "running";
		c->user_mode = sc.running || sc.nr < 0;
		return VT_OK;
	}
	if (st.state != 'S') {
		c->reason = st.state == 'D' ? "in uninterruptible sleep" :
			    st.state == 'T' || st.state == 't' ? "stopped" : "not sleeping";
		return VT_OK;
	}
	if (sc.nr < 0) {
		c->reason = "not in a system call";
		c->user_mode = true;
		return VT_OK;
	}
	c->nr = sc.nr;
	c->rank = (int)vt_arch_syscall_class(sc.nr, sc.args);
	if (c->rank == VT_SYS_NEVER) {
		c->rank = -1;
		c->reason = unsafe_call;
	}
	c->wait_ms = c->rank >= 0 ? sleep_ms(tid, sc.nr, sc.args) : WAIT_UNKNOWN_MS;
	return VT_OK;
}

static bool better(const struct candidate *a, const struct candidate *b)
{
	if (a->rank != b->rank)
		return a->rank > b->rank;
	if (a->wait_ms != b->wait_ms)
		return a->wait_ms > b->wait_ms;
	if (a->cpu_ticks != b->cpu_ticks)
		return a->cpu_ticks < b->cpu_ticks;
	return a->tid < b->tid;
}

static void describe(const struct candidate *c, bool running, char *why, size_t cap)
{
	const char *name = vt_arch_syscall_name(c->nr);

	if (!why || !cap)
		return;
	if (running)
		snprintf(why, cap, "thread %d (%s): %s, the least busy thread (no thread is blocked "
			 "in a usable system call)", (int)c->tid, c->comm, c->reason ? c->reason : "");
	else if (name)
		snprintf(why, cap, "thread %d (%s): blocked in %s%s", (int)c->tid, c->comm, name,
			 class_note((enum vt_sys_class)c->rank));
	else
		snprintf(why, cap, "thread %d (%s): blocked in system call %ld%s", (int)c->tid,
			 c->comm, c->nr, class_note((enum vt_sys_class)c->rank));
}

static bool same_refusal(const struct candidate *a, const struct candidate *b)
{
	return a->reason == b->reason && (a->reason != unsafe_call || a->nr == b->nr);
}

/*
 * "3 running, 1 in rt_sigsuspend, where a call is unsafe" for the error
 * message; *may_pass says whether a thread may yet move on (all but unsafe calls).
 */
static void tally(const struct candidate *v, size_t n, char *out, size_t cap, bool *may_pass)
{
	size_t i, j, used = 0;
	int k;

	out[0] = '\0';
	*may_pass = false;
	for (i = 0; i < n; i++) {
		const char *name = vt_arch_syscall_name(v[i].nr);
		bool seen = false;
		unsigned count = 0;

		*may_pass |= v[i].reason && v[i].reason != unsafe_call;
		if (!v[i].reason)
			continue;
		for (j = 0; j < i && !seen; j++)
			seen = same_refusal(&v[j], &v[i]);
		if (seen)
			continue;
		for (j = i; j < n; j++)
			count += same_refusal(&v[j], &v[i]);
		if (v[i].reason == unsafe_call && name)
			k = snprintf(out + used, cap - used, "%s%u in %s, where a call is unsafe",
				     used ? ", " : "", count, name);
		else
			k = snprintf(out + used, cap - used, "%s%u %s", used ? ", " : "", count,
				     v[i].reason);
		if (k < 0 || (size_t)k >= cap - used)
			return;
		used += (size_t)k;
	}
}

/* ---- before stopping anything: what /proc says about the process -------- */

static const char *abi_name(int cls, int machine, char *buf, size_t cap)
{
	if (machine == EM_386)
		return "32-bit x86 (i386)";
	if (machine == EM_X86_64)
		return cls == ELFCLASS32 ? "x32 (32-bit pointers on x86-64)" : "x86-64";
	if (machine == EM_AARCH64)
		return cls == ELFCLASS32 ? "aarch64 ILP32" : "aarch64";
	if (machine == EM_ARM)
		return "32-bit ARM";
	snprintf(buf, cap, "%d-bit ELF for machine %d", cls == ELFCLASS32 ? 32 : 64, machine);
	return buf;
}

/*
 * Refuse a process whose executable (/proc/PID/exe, the file the kernel
 * chose its ABI from) is built for another ABI than the call code.  Not
 * checked when the file cannot be opened: no ptrace access (the attach says
 * why), a kernel thread or a process that just exited (checked elsewhere).
 */
static int check_abi(int pid_fd, pid_t pid, struct vt_err *err)
{
	struct vt_elfsym *ef;
	char other[64];
	int fd, cls, machine;
	bool known;

	fd = openat(pid_fd, "exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || vt_elfsym_open_fd(fd, &ef, NULL) != VT_OK)
		return VT_OK;
	known = vt_elfsym_abi(ef, &cls, &machine);
	vt_elfsym_free(&ef);
	if (!known || (cls == CALL_ELF_CLASS && machine == CALL_ELF_MACHINE))
		return VT_OK;
	vt_err_set(err, VT_E_UNSUPPORTED, 0, "process %d is built for %s: vitals calls functions "
		   "only in %s processes", (int)pid, abi_name(cls, machine, other, sizeof(other)),
		   CALL_ABI_NAME);
	vt_err_hint(err, "nothing was stopped; vitals snap, threads and soak read it from /proc");
	return VT_E_UNSUPPORTED;
}

static int stopped_error(struct vt_err *err, pid_t pid, const char *what, char state)
{
	vt_err_set(err, VT_E_BUSY, 0, "%s is stopped (state %c): resume it with kill -CONT %d",
		   what, state, (int)pid);
	vt_err_hint(err, "a stopped process cannot run a call until it is continued; vitals does not "
		    "continue it behind your back");
	return VT_E_BUSY;
}

/*
 * What rules out the whole process before a thread is chosen: stopped by
 * SIGSTOP/SIGTSTP (state T; its threads would all read as "stopped", and no
 * thread can run a call), or built for another ABI.
 */
static int process_refused(int pid_fd, pid_t pid, struct vt_buf *buf, struct vt_err *err)
{
	struct vt_proc_stat st;
	char what[32];
	int rc;

	rc = vt_read_at(pid_fd, "stat", buf, err);
	if (rc == VT_E_GONE || rc == VT_E_NOTFOUND)
		return vt_err_set(err, VT_E_GONE, ESRCH, "process %d exited", (int)pid);
	if (rc || (rc = vt_proc_stat_parse(buf->data, buf->len, &st, err)))
		return rc;
	if (st.state == 'T') {
		snprintf(what, sizeof(what), "process %d", (int)pid);
		return stopped_error(err, pid, what, st.state);
	}
	return check_abi(pid_fd, pid, err);
}

/* The syscall file needs ptrace access: say which rule refused it. */
static void explain_denied(const struct vt_procfs *pfs, int pid_fd, pid_t pid, struct vt_err *err)
{
	char reason[VT_ERR_MSG_MAX / 2], hint[VT_ERR_MSG_MAX];
	struct vt_buf buf = VT_BUF_INIT(STATUS_MAX);
	struct vt_proc_status st;
	long uid = -1;

	if (!err)
		return;
	if (vt_read_at(pid_fd, "status", &buf, NULL) == VT_OK &&
	    vt_proc_status_parse(buf.data, buf.len, &st, NULL) == VT_OK)
		uid = (long)st.uid_real;
	vt_buf_release(&buf);
	vt_access_explain(pfs, "ptrace", uid, pid_fd, reason, sizeof(reason), hint, sizeof(hint));
	vt_err_set(err, VT_E_PERM, err->sys_errno, "cannot see the threads of %d: %s", (int)pid,
		   reason);
	vt_err_hint(err, "%s", hint);
}

int vt_inject_pick_thread(const struct vt_procfs *pfs, pid_t pid, unsigned flags, pid_t *tid,
			  char *why, size_t why_cap, struct vt_err *err)
{
	return vt_inject_pick_thread_sps(pfs, pid, flags, tid, why, why_cap, NULL, NULL, err);
}

/* The stack pointers the candidates' syscall files gave, into *sps. */
static void keep_sps(const struct candidate *v, size_t m, struct vt_inject_thread_sp **sps, size_t *nsps)
{
	size_t i, n = 0;

	*sps = NULL;
	*nsps = 0;
	for (i = 0; i < m; i++)
		n += v[i].sp != 0;
	if (!n || !(*sps = malloc(n * sizeof(**sps))))
		return;
	for (i = 0; i < m; i++)
		if (v[i].sp)
			(*sps)[(*nsps)++] = (struct vt_inject_thread_sp){ v[i].sp, v[i].tid };
}

int vt_inject_pick_thread_sps(const struct vt_procfs *pfs, pid_t pid, unsigned flags, pid_t *tid,
			      char *why, size_t why_cap, struct vt_inject_thread_sp **sps, size_t *nsps,
			      struct vt_err *err)
{
	struct vt_buf buf = VT_BUF_INIT(TASK_FILE_MAX);
	struct candidate *v = NULL, *best = NULL, *idlest = NULL;
	char summary[256];
	pid_t *tids = NULL;
	size_t n = 0, i, m = 0;
	int pid_fd = -1, rc;

	*tid = 0;
	if (why && why_cap)
		why[0] = '\0';
	if (sps) {
		*sps = NULL;
		*nsps = 0;
	}
	rc = vt_pid_open(pfs, pid, &pid_fd, err);
	if (rc)
		return rc;
	rc = process_refused(pid_fd, pid, &buf, err);
	if (rc)
		goto out;
	rc = vt_task_list(pid_fd, &tids, &n, err);
	if (rc)
		goto out;
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v) {
		rc = vt_err_set(err, VT_E_NOMEM, 0, "out of memory choosing a thread");
		goto out;
	}
	for (i = 0; i < n; i++) {
		rc = read_candidate(pid_fd, tids[i], &buf, &v[m], err);
		if (rc == VT_E_GONE)
			continue;
		if (rc == VT_E_PERM)
			explain_denied(pfs, pid_fd, pid, err);
		if (rc)
			goto out;
		if (v[m].rank >= 0 && (!best || better(&v[m], best)))
			best = &v[m];
		m++;
	}
	rc = VT_OK;
	/* Running threads only: one in an unsafe system call stays unsafe when allowed to run. */
	for (i = 0; !best && i < m; i++)
		if (v[i].user_mode && (!idlest || v[i].cpu_ticks < idlest->cpu_ticks))
			idlest = &v[i];
	if (best) {
		*tid = best->tid;
		describe(best, false, why, why_cap);
	} else if ((flags & VT_INJECT_ALLOW_RUNNING) && idlest) {
		*tid = idlest->tid;
		describe(idlest, true, why, why_cap);
	} else if (m == 0) {
		rc = vt_err_set(err, VT_E_GONE, 0, "process %d exited: it has no threads left", (int)pid);
	} else {
		bool may_pass;

		tally(v, m, summary, sizeof(summary), &may_pass);
		rc = vt_err_set(err, VT_E_BUSY, 0, "no thread of process %d is blocked in a "
				"system call where a call is safe (%s)", (int)pid, summary);
		if (may_pass)
			vt_err_hint(err, "retry when the process is less busy; 'vitals census %d' "
				    "reads the heap without stopping a thread", (int)pid);
		else
			vt_err_hint(err, "a retry finds the same unless one of its threads moves on; "
				    "'vitals census %d' reads the heap without stopping a thread",
				    (int)pid);
	}
	if (rc == VT_OK && sps)
		keep_sps(v, m, sps, nsps);
out:
	free(v);
	free(tids);
	vt_buf_release(&buf);
	close(pid_fd);
	return rc;
}

/* ---- before stopping anything: what /proc says about the thread ---------- */

static int read_task_file(int pid_fd, pid_t tid, const char *name, struct vt_buf *buf,
			  struct vt_err *err)
{
	char rel[64];

	snprintf(rel, sizeof(rel), "task/%d/%s", (int)tid, name);
	return vt_read_at(pid_fd, rel, buf, err);
}

static void tracer_comm(const struct vt_procfs *pfs, int64_t tracer, char *out, size_t cap)
{
	struct vt_buf buf = VT_BUF_INIT(4096);
	char rel[48];

	snprintf(rel, sizeof(rel), "%lld/comm", (long long)tracer);
	snprintf(out, cap, "?");
	if (vt_procfs_read(pfs, rel, &buf, NULL) == VT_OK && buf.len) {
		buf.data[strcspn(buf.data, "\n")] = '\0';
		snprintf(out, cap, "%s", buf.data);
	}
	vt_buf_release(&buf);
}

int vt_inject_precheck(const struct vt_procfs *pfs, int pid_fd, pid_t pid, pid_t tid,
		       struct vt_inject_precheck *pc, struct vt_err *err)
{
	struct vt_buf buf = VT_BUF_INIT(STATUS_MAX);
	struct vt_proc_status st;
	struct vt_proc_stat ps;
	char why[160], comm[64];
	int rc;

	pc->seccomp = false;
	pc->uid = -1;
	rc = read_task_file(pid_fd, tid, "stat", &buf, err);
	if (rc == VT_E_NOTFOUND || rc == VT_E_GONE) {
		rc = vt_err_set(err, VT_E_NOPROC, ENOENT, "no thread %d in process %d", (int)tid,
				(int)pid);
		goto out;
	}
	if (rc || (rc = vt_proc_stat_parse(buf.data, buf.len, &ps, err)))
		goto out;
	if (ps.flags & VT_PF_KTHREAD) {
		rc = vt_err_set(err, VT_E_KTHREAD, 0, "%d is a kernel thread", (int)pid);
		goto out;
	}
	if (ps.state == 'Z' || ps.state == 'X') {
		rc = vt_err_set(err, VT_E_ZOMBIE, 0, "thread %d of %d has exited (state %c)", (int)tid,
				(int)pid, ps.state);
		goto out;
	}
	if ((rc = check_abi(pid_fd, pid, err)))
		goto out;
	rc = read_task_file(pid_fd, tid, "status", &buf, err);
	if (rc || (rc = vt_proc_status_parse(buf.data, buf.len, &st, err)))
		goto out;
	pc->uid = (long)st.uid_real;
	pc->seccomp = st.seccomp > 0;
	if (st.tracer_pid > 0) {
		tracer_comm(pfs, st.tracer_pid, comm, sizeof(comm));
		rc = vt_err_set(err, VT_E_PERM, EPERM, "thread %d of %d is already traced by %lld (%s)",
				(int)tid, (int)pid, (long long)st.tracer_pid, comm);
		vt_err_hint(err, "a process can have one tracer: detach the debugger first");
		goto out;
	}
	if (ps.state == 'T' || ps.state == 't') {
		snprintf(why, sizeof(why), "thread %d of %d", (int)tid, (int)pid);
		rc = stopped_error(err, pid, why, ps.state);
		goto out;
	}
	if (vt_arch_task_refused(buf.data, buf.len, why, sizeof(why))) {
		rc = vt_err_set(err, VT_E_UNSUPPORTED, 0, "%s", why);
		goto out;
	}
	rc = VT_OK;
out:
	vt_buf_release(&buf);
	return rc;
}

/* Give EPERM from PTRACE_SEIZE its reason: uid, yama scope, capability. */
void vt_inject_explain_perm(const struct vt_procfs *pfs, int pid_fd,
			    const struct vt_inject_precheck *pc, pid_t tid, struct vt_err *err)
{
	char reason[VT_ERR_MSG_MAX / 2], hint[VT_ERR_MSG_MAX];

	if (!err || err->sys_errno != EPERM || pc->seccomp)
		return;
	vt_access_explain(pfs, "ptrace", pc->uid, pid_fd, reason, sizeof(reason), hint,
			  sizeof(hint));
	vt_err_set(err, VT_E_PERM, EPERM, "cannot attach to thread %d: %s", (int)tid, reason);
	vt_err_hint(err, "%s", hint);
}

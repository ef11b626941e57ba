/*
 * stop_guard.c — the watchdog and the Ctrl-Z handler that keep a stopped
 * vitals from holding a target's thread (see stop_guard.h).
 */
#include "inject/stop_guard.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/futex.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

/* What vitals and its watchdog share (one anonymous shared page). */
struct shared {
	atomic_int armed;       /* sessions that may stop a thread: the watchdog looks */
	atomic_int holding;     /* threads held right now: the watchdog acts */
	atomic_int continued;   /* the watchdog undid a stop of vitals: stop again after */
};

static struct {
	pthread_mutex_t lock;   /* starting the watchdog */
	struct shared *sh;
	pid_t watchdog;         /* 0: none running */
	int sock;               /* our end; the watchdog sees end of file when vitals exits */
	bool tstp_handled;
	atomic_int deferred;    /* a SIGTSTP put off while a thread was held */
	void *stack;            /* the watchdog's stack (WATCH_SHARES_MEMORY), its guard page first */
	pid_t alive;            /* the watchdog's tid while it runs: the kernel zeroes it and wakes us at its exit */
	pid_t owner;            /* the process that started it (a fork of vitals inherits these fields) */
} g = { PTHREAD_MUTEX_INITIALIZER, NULL, 0, -1, false, 0, NULL, 0, 0 };

/*
 * ---- the watchdog ---------------------------------------------------------
 *
 * A process of its own (clone without CLONE_THREAD: a SIGKILL or SIGSTOP of
 * vitals does not reach it) that shares vitals's memory (CLONE_VM): starting
 * it copies no page table, and its exit unmaps nothing, where a fork did
 * both (about 0.3 ms of CPU for each vitals that stops a thread).  Sharing
 * the memory, it must touch none of vitals's state: it runs on a small stack
 * of its own, with its arguments copied there and its own thread pointer
 * (CLONE_SETTLS: nothing it runs may reach the TLS of a vitals thread, which
 * may exit and free it), and makes its system calls itself (raw_syscall)
 * because every libc wrapper may write errno or a cancellation flag, which
 * would be those of the vitals thread that started it.  Its code is built
 * without sanitizer or stack-protector checks (NOSAN), which read the TLS or
 * call a runtime.  It writes nothing but its own stack.  Signal handlers are not
 * shared (no CLONE_SIGHAND): it sets every signal to ignored or to the
 * default before unblocking any, so that no handler of vitals ever runs in
 * it.  Where raw_syscall has no code (other architectures) a fork does the
 * same.
 */
#if defined(__x86_64__)
#define WATCH_SHARES_MEMORY 1
__attribute__((no_sanitize("address", "undefined"), no_stack_protector))
static long raw_syscall(long nr, long a, long b, long c, long d)
{
	register long r10 __asm__("r10") = d;
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10)
			 : "rcx", "r11", "memory");
	return ret;
}
#elif defined(__aarch64__)
#define WATCH_SHARES_MEMORY 1
__attribute__((no_sanitize("address", "undefined"), no_stack_protector))
static long raw_syscall(long nr, long a, long b, long c, long d)
{
	register long x8 __asm__("x8") = nr, x0 __asm__("x0") = a, x1 __asm__("x1") = b,
		      x2 __asm__("x2") = c, x3 __asm__("x3") = d;

	__asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory");
	return x0;
}
#else
#define WATCH_SHARES_MEMORY 0
#endif

/* What the watchdog is given, copied onto its own stack's far end. */
struct watch_args {
	int sock;               /* its end of the socket pair */
	pid_t vitals;
	atomic_int *armed, *holding, *continued;   /* in the shared page */
	size_t note_len;
	char stat_path[64];
	char note[256];
	/* its thread pointer (CLONE_SETTLS) points here, not at a vitals thread's TLS: pointing to itself */
	_Alignas(64) uintptr_t tls[32];
};

#if WATCH_SHARES_MEMORY
#define WATCH_STACK (64u << 10)
/*
 * Nothing instrumented in the watchdog's code: a sanitizer's or the stack
 * protector's checks read the thread's TLS or call the runtime.
 */
#define NOSAN __attribute__((no_sanitize("address", "undefined"), no_stack_protector, noinline))

/* The kernel's struct sigaction for rt_sigaction (handler, flags, restorer, mask). */
struct ksigaction {
	unsigned long handler, flags, restorer, mask;
};

#define sys0(nr) raw_syscall(nr, 0, 0, 0, 0)
#define sys1(nr, a) raw_syscall(nr, (long)(a), 0, 0, 0)
#define sys2(nr, a, b) raw_syscall(nr, (long)(a), (long)(b), 0, 0)
#define sys3(nr, a, b, c) raw_syscall(nr, (long)(a), (long)(b), (long)(c), 0)
#define sys4(nr, a, b, c, d) raw_syscall(nr, (long)(a), (long)(b), (long)(c), (long)(d))

static NOSAN _Noreturn void watch_exit(long code)
{
	for (;;)
		sys1(SYS_exit_group, code);
}

/* vitals's state letter from its stat file; 0 when it cannot be read (gone). */
static NOSAN char state_of(int stat_fd)
{
	char buf[512];
	long n = sys4(SYS_pread64, stat_fd, buf, sizeof(buf) - 1, 0), i;

	for (i = n - 1; i >= 0 && buf[i] != ')'; i--)
		;
	return i >= 0 && i + 2 < n && buf[i + 1] == ' ' ? buf[i + 2] : 0;
}

static NOSAN int watch(void *arg)
{
	static const int ignored[] = { SIGINT, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU, SIGHUP, SIGPIPE };
	const struct watch_args *a = arg;
	struct ksigaction act;
	unsigned long none = 0;
	int sock, null_fd, stat_fd, looks = 0, sig;
	size_t i;

	/* Out of the terminal's process group: Ctrl-Z and Ctrl-C go to vitals alone. */
	sys2(SYS_setpgid, 0, 0);
	sys2(SYS_prctl, PR_SET_NAME, "vitals-watch");
	/* No handler of vitals may run here: every signal ignored or default, then unblocked. */
	for (sig = 1; sig < 65; sig++) {
		act = (struct ksigaction){ (unsigned long)SIG_DFL, 0, 0, 0 };
		for (i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
			if (ignored[i] == sig)
				act.handler = (unsigned long)SIG_IGN;
		if (sig != SIGKILL && sig != SIGSTOP)
			sys4(SYS_rt_sigaction, sig, &act, 0, sizeof(act.mask));
	}
	sys4(SYS_rt_sigprocmask, SIG_SETMASK, &none, 0, sizeof(none));
	/*
	 * None of vitals's files (its recording, its listening socket, its end
	 * of ours), closed first so that a vitals at its descriptor limit still
	 * has a watchdog.  A failure to start exits with its errno, for vitals.
	 */
	if (a->sock > 3)
		sys3(SYS_close_range, 3, a->sock - 1, 0);
	sys3(SYS_close_range, a->sock >= 3 ? a->sock + 1 : 3, ~0U, 0);
	sock = a->sock > 2 ? a->sock : (int)sys3(SYS_fcntl, a->sock, F_DUPFD, 3);
	null_fd = (int)sys3(SYS_openat, AT_FDCWD, "/dev/null", O_RDWR);
	if (sock < 0)
		watch_exit(-sock);
	if (null_fd < 0)
		watch_exit(-null_fd);
	sys3(SYS_dup3, null_fd, 0, 0);
	sys3(SYS_dup3, null_fd, 1, 0);
	if (a->sock == 2)
		sys3(SYS_dup3, null_fd, 2, 0);
	if (null_fd > 2)
		sys1(SYS_close, null_fd);
	stat_fd = (int)sys3(SYS_openat, AT_FDCWD, a->stat_path, O_RDONLY);
	/* vitals killed before this point: nothing to guard, and no error (nobody waits for one) */
	if (stat_fd < 0)
		watch_exit(sys0(SYS_getppid) != a->vitals ? 0 : -stat_fd);
	for (;;) {
		struct pollfd p = { sock, POLLIN, 0 };
		struct timespec poll_ts = { 0, VT_STOP_GUARD_POLL_MS * 1000000L };
		long n = sys4(SYS_ppoll, &p, 1, atomic_load(a->armed) > 0 ? &poll_ts : NULL, 0);
		char st;

		if (n > 0) {
			char b[64];
			long r = sys3(SYS_read, sock, b, sizeof(b));

			if (r == 0 || (r < 0 && r != -EINTR && r != -EAGAIN))
				watch_exit(0);   /* vitals is gone */
		} else if (n < 0 && n != -EINTR) {
			watch_exit(-n);
		}
		if (sys0(SYS_getppid) != a->vitals)
			watch_exit(0);
		if (atomic_load(a->holding) <= 0) {
			looks = 0;
			continue;
		}
		st = state_of(stat_fd);
		if (st != 'T' && st != 't') {
			looks = 0;
			continue;
		}
		if (++looks >= VT_STOP_GUARD_KILL_LOOKS) {
			/* Still stopped after SIGCONT, or a debugger holds it: only its death frees the thread. */
			sys3(SYS_write, 2, a->note, a->note_len);
			sys2(SYS_kill, a->vitals, SIGKILL);
			watch_exit(0);
		}
		if (st == 'T') {
			atomic_store(a->continued, 1);
			sys2(SYS_kill, a->vitals, SIGCONT);
		}
	}
}
#else
/* vitals's state letter from its stat file; 0 when it cannot be read (gone). */
static char state_of(int stat_fd)
{
	char buf[512];
	ssize_t n = pread(stat_fd, buf, sizeof(buf) - 1, 0);
	char *p;

	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/* Close every descriptor from 3 up except keep. */
static void close_others(int keep)
{
	if (keep > 3)
		close_range(3, (unsigned)keep - 1, 0);
	close_range(keep >= 3 ? (unsigned)keep + 1 : 3, ~0U, 0);
}

/* The same watchdog in a forked child (its own copy of the memory: libc is safe to call). */
static _Noreturn void watch_forked(const struct watch_args *a)
{
	static const int ignored[] = { SIGINT, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU, SIGHUP, SIGPIPE };
	struct sigaction ign = { .sa_handler = SIG_IGN };
	sigset_t none;
	int sock, null_fd, stat_fd, looks = 0;
	size_t i;

	setpgid(0, 0);
	prctl(PR_SET_NAME, "vitals-watch", 0, 0, 0);
	for (i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		sigaction(ignored[i], &ign, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	close_others(a->sock);
	sock = a->sock > 2 ? a->sock : fcntl(a->sock, F_DUPFD, 3);
	null_fd = open("/dev/null", O_RDWR);
	if (sock < 0 || null_fd < 0)
		_exit(errno);
	dup2(null_fd, 0);
	dup2(null_fd, 1);
	if (a->sock == 2)
		dup2(null_fd, 2);
	if (null_fd > 2)
		close(null_fd);
	stat_fd = open(a->stat_path, O_RDONLY);
	if (stat_fd < 0)
		_exit(getppid() != a->vitals ? 0 : errno);
	for (;;) {
		struct pollfd p = { sock, POLLIN, 0 };
		int n = poll(&p, 1, atomic_load(a->armed) > 0 ? VT_STOP_GUARD_POLL_MS : -1);
		char st;

		if (n > 0) {
			char b[64];
			ssize_t r = read(sock, b, sizeof(b));

			if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN))
				_exit(0);   /* vitals is gone */
		} else if (n < 0 && errno != EINTR) {
			_exit(errno);
		}
		if (getppid() != a->vitals)
			_exit(0);
		if (atomic_load(a->holding) <= 0) {
			looks = 0;
			continue;
		}
		st = state_of(stat_fd);
		if (st != 'T' && st != 't') {
			looks = 0;
			continue;
		}
		if (++looks >= VT_STOP_GUARD_KILL_LOOKS) {
			if (write(2, a->note, a->note_len) < 0) {
				/* nowhere to say it */
			}
			kill(a->vitals, SIGKILL);
			_exit(0);
		}
		if (st == 'T') {
			atomic_store(a->continued, 1);
			kill(a->vitals, SIGCONT);
		}
	}
}
#endif

/* ---- vitals's side -------------------------------------------------------- */

static void stop_self(int sig)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL }, mine;
	sigset_t set;

	sigaction(sig, &dfl, &mine);
	sigemptyset(&set);
	sigaddset(&set, sig);
	raise(sig);                                   /* pending: blocked in its handler */
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);     /* the default action stops us here */
	sigaction(sig, &mine, NULL);                  /* continued */
}

static void on_tstp(int sig)
{
	int saved = errno;

	if (atomic_load(&g.sh->holding) > 0) {
		atomic_store(&g.deferred, sig);
		/* The last thread was let go meanwhile: its release did not see this. */
		if (atomic_load(&g.sh->holding) > 0 || !atomic_exchange(&g.deferred, 0)) {
			errno = saved;
			return;
		}
	}
	stop_self(sig);
	errno = saved;
}

static void install_tstp(void)
{
	struct sigaction old, sa = { .sa_handler = on_tstp, .sa_flags = SA_RESTART };

	if (g.tstp_handled)
		return;
	g.tstp_handled = true;
	/* A Ctrl-Z that whoever started vitals chose to ignore stays ignored. */
	if (sigaction(SIGTSTP, NULL, &old) == 0 && old.sa_handler == SIG_DFL &&
	    !(old.sa_flags & SA_SIGINFO))
		sigaction(SIGTSTP, &sa, NULL);
}

/*
 * The watchdog was collected (or someone else reaped it): its stack is freed
 * once the kernel says it no longer runs on it (g.alive zeroed at its exit).
 */
static void watchdog_collected(void)
{
	g.watchdog = 0;
#if WATCH_SHARES_MEMORY
	if (g.stack && __atomic_load_n(&g.alive, __ATOMIC_ACQUIRE) == 0) {
		munmap(g.stack, WATCH_STACK);
		g.stack = NULL;
	}
#endif
}

/* The watchdog has exited (or was never started, or someone reaped it). */
static bool watchdog_gone(void)
{
	int status;
	pid_t r;

	if (!g.watchdog)
		return true;
	r = waitpid(g.watchdog, &status, WNOHANG);
	if (r == g.watchdog || (r < 0 && errno == ECHILD)) {
		watchdog_collected();
		return true;
	}
	return false;
}

/* At vitals's normal exit: the watchdog reads end of file and exits; collect it. */
static void end_watchdog(void)
{
	int status;

	if (!g.watchdog || g.sock < 0)
		return;
	close(g.sock);
	g.sock = -1;
	if (g.owner != getpid())      /* a fork of vitals: the watchdog is not its child */
		return;
#if WATCH_SHARES_MEMORY
	{
		/* half a second at most: it exits as soon as it reads the end of file */
		struct timespec left = { 0, 500000000L };
		pid_t tid;

		while ((tid = __atomic_load_n(&g.alive, __ATOMIC_ACQUIRE)) != 0) {
			struct timespec t0, t1;
			long gone_ns;

			clock_gettime(CLOCK_MONOTONIC, &t0);
			if (syscall(SYS_futex, &g.alive, FUTEX_WAIT, tid, &left, NULL, 0) < 0 &&
			    errno != EAGAIN && errno != EINTR)
				break;
			clock_gettime(CLOCK_MONOTONIC, &t1);
			gone_ns = (t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec);
			left.tv_nsec -= gone_ns;
			while (left.tv_nsec < 0 && left.tv_sec > 0) {
				left.tv_sec--;
				left.tv_nsec += 1000000000L;
			}
			if (left.tv_nsec <= 0 && left.tv_sec == 0)
				break;
		}
		/* off its stack and out of its memory: reaped at once, or left to init when it lingers */
		if (__atomic_load_n(&g.alive, __ATOMIC_ACQUIRE) == 0 && waitpid(g.watchdog, &status, 0) == g.watchdog)
			watchdog_collected();
	}
#else
	for (int i = 0; i < 500; i++) {   /* half a second at most: it exits on its next wake-up */
		pid_t r = waitpid(g.watchdog, &status, WNOHANG);

		if (r == g.watchdog || r < 0)
			break;
		usleep(1000);
	}
#endif
	g.watchdog = 0;
}

/* Start the watchdog on a (copied) a; its pid, or -1 with errno. */
static pid_t spawn_watchdog(const struct watch_args *a)
{
#if WATCH_SHARES_MEMORY
	long page = sysconf(_SC_PAGESIZE);
	struct watch_args *copy;
	sigset_t all, old;
	char *stack;
	pid_t w;
	int e;

	stack = mmap(NULL, WATCH_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED)
		return -1;
	if (mprotect(stack, (size_t)page, PROT_NONE)) {   /* an overrun faults, never writes past */
		e = errno;
		munmap(stack, WATCH_STACK);
		errno = e;
		return -1;
	}
	copy = (struct watch_args *)(stack + page);
	*copy = *a;
	copy->tls[0] = (uintptr_t)copy->tls;
	/* Blocked until it has set its own dispositions: no handler of ours may run in it. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	__atomic_store_n(&g.alive, -1, __ATOMIC_RELEASE);
	w = clone(watch, stack + WATCH_STACK, CLONE_VM | CLONE_SETTLS | CLONE_CHILD_CLEARTID | SIGCHLD, copy,
		  NULL, copy->tls, &g.alive);
	e = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (w < 0) {
		__atomic_store_n(&g.alive, 0, __ATOMIC_RELEASE);
		munmap(stack, WATCH_STACK);
		errno = e;
		return -1;
	}
	g.stack = stack;
	return w;
#else
	pid_t w = fork();

	if (w == 0)
		watch_forked(a);
	return w;
#endif
}

static int start_watchdog(struct vt_err *err)
{
	static bool at_exit;
	struct watch_args a = { .vitals = getpid() };
	int sv[2], e;
	pid_t w;

	if (!g.sh) {
		void *p = mmap(NULL, sizeof(*g.sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return vt_err_set(err, VT_E_NOMEM, errno, "cannot map the page shared with the "
					  "watchdog that bounds a stop: %s", strerror(errno));
		g.sh = p;
	}
	if (g.sock >= 0) {
		close(g.sock);
		g.sock = -1;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		e = errno;
		return vt_err_set(err, e == EMFILE || e == ENFILE || e == ENOMEM ? VT_E_NOMEM : VT_E_FAIL, e,
				  "cannot start the watchdog that bounds a stop: socketpair: %s", strerror(e));
	}
	a.sock = sv[1];
	a.armed = &g.sh->armed;
	a.holding = &g.sh->holding;
	a.continued = &g.sh->continued;
	snprintf(a.stat_path, sizeof(a.stat_path), "/proc/%d/stat", (int)a.vitals);
	a.note_len = (size_t)snprintf(a.note, sizeof(a.note), "vitals-watch: vitals (pid %d) stayed stopped "
				      "while it held a thread of another process stopped: killed it, so "
				      "that the kernel lets that thread go\n", (int)a.vitals);
	if (a.note_len >= sizeof(a.note))
		a.note_len = sizeof(a.note) - 1;
	w = spawn_watchdog(&a);
	e = errno;
	close(sv[1]);
	if (w < 0) {
		close(sv[0]);
		return vt_err_set(err, e == EAGAIN || e == ENOMEM ? VT_E_NOMEM : VT_E_FAIL, e,
				  "cannot start the watchdog that bounds a stop: %s: %s",
				  WATCH_SHARES_MEMORY ? "clone" : "fork", strerror(e));
	}
	setpgid(w, w);   /* as the child does: whichever runs first */
	g.watchdog = w;
	g.owner = a.vitals;
	g.sock = sv[0];
	if (!at_exit)
		at_exit = atexit(end_watchdog) == 0;
	return VT_OK;
}

/* The watchdog is gone (send failed with e): why, from its exit status when it could not start. */
static int watchdog_failed(int e, struct vt_err *err)
{
	int status;

	if (g.watchdog && waitpid(g.watchdog, &status, 0) == g.watchdog) {
		watchdog_collected();
		if (WIFEXITED(status) && WEXITSTATUS(status) > 0)
			e = WEXITSTATUS(status);   /* its errno */
		else if (WIFSIGNALED(status))
			return vt_err_set(err, VT_E_FAIL, 0, "the watchdog that bounds a stop was killed "
					  "(signal %d)", WTERMSIG(status));
	}
	return vt_err_set(err, VT_E_FAIL, e, "cannot start the watchdog that bounds a stop: %s",
			  strerror(e));
}

int vt_stop_guard_arm(struct vt_err *err)
{
	int rc = VT_OK;

	pthread_mutex_lock(&g.lock);
	if (watchdog_gone())
		rc = start_watchdog(err);
	if (rc == VT_OK) {
		install_tstp();
		atomic_fetch_add(&g.sh->armed, 1);
		/* Wake it to look every VT_STOP_GUARD_POLL_MS from now on. */
		if (send(g.sock, "a", 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 && errno != EAGAIN) {
			atomic_fetch_sub(&g.sh->armed, 1);
			rc = watchdog_failed(errno, err);
		}
	}
	pthread_mutex_unlock(&g.lock);
	if (rc)
		vt_err_hint(err, "nothing was stopped: vitals stops no thread it could not let go if it "
			    "were itself stopped");
	return rc;
}

void vt_stop_guard_disarm(void)
{
	atomic_fetch_sub(&g.sh->armed, 1);
}

void vt_stop_guard_hold(void)
{
	atomic_fetch_add(&g.sh->holding, 1);
}

void vt_stop_guard_release(void)
{
	if (atomic_fetch_sub(&g.sh->holding, 1) != 1)
		return;
	/* Nothing held any more: the stop that was put off, or undone, happens now. */
	{
	int undone = atomic_exchange(&g.sh->continued, 0), put_off = atomic_exchange(&g.deferred, 0);

	if (undone)
		kill(getpid(), SIGSTOP);
	else if (put_off)
		kill(getpid(), SIGTSTP);
	}
}

int vt_stop_guard_watchdog_pid(void)
{
	return (int)g.watchdog;
}

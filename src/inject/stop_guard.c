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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
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
} g = { PTHREAD_MUTEX_INITIALIZER, NULL, 0, -1, false, 0 };

/* ---- the watchdog (a forked child: async-signal-safe calls only) --------- */

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

static _Noreturn void watch(int sock_in, pid_t vitals, const char *stat_path, const char *note,
			    size_t note_len)
{
	static const int ignored[] = { SIGINT, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU, SIGHUP, SIGPIPE };
	struct sigaction ign = { .sa_handler = SIG_IGN };
	sigset_t none;
	int sock, null_fd, stat_fd, looks = 0;
	size_t i;

	/* Out of the terminal's process group: Ctrl-Z and Ctrl-C go to vitals alone. */
	setpgid(0, 0);
	prctl(PR_SET_NAME, "vitals-watch", 0, 0, 0);
	for (i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		sigaction(ignored[i], &ign, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/*
	 * None of vitals's files (its recording, its listening socket, its end
	 * of ours), closed first so that a vitals at its descriptor limit still
	 * has a watchdog.  A failure to start exits with its errno, for vitals.
	 */
	close_others(sock_in);
	sock = sock_in > 2 ? sock_in : fcntl(sock_in, F_DUPFD, 3);
	null_fd = open("/dev/null", O_RDWR);
	if (sock < 0 || null_fd < 0)
		_exit(errno);
	dup2(null_fd, 0);
	dup2(null_fd, 1);
	if (sock_in == 2)
		dup2(null_fd, 2);
	if (null_fd > 2)
		close(null_fd);
	stat_fd = open(stat_path, O_RDONLY);
	if (stat_fd < 0)
		_exit(errno);
	for (;;) {
		struct pollfd p = { sock, POLLIN, 0 };
		int n = poll(&p, 1, atomic_load(&g.sh->armed) > 0 ? VT_STOP_GUARD_POLL_MS : -1);
		char st;

		if (n > 0) {
			char b[64];
			ssize_t r = read(sock, b, sizeof(b));

			if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN))
				_exit(0);   /* vitals is gone */
		} else if (n < 0 && errno != EINTR) {
			_exit(errno);
		}
		if (getppid() != vitals)
			_exit(0);
		if (atomic_load(&g.sh->holding) <= 0) {
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
			if (write(2, note, note_len) < 0) {
				/* nowhere to say it */
			}
			kill(vitals, SIGKILL);
			_exit(0);
		}
		if (st == 'T') {
			atomic_store(&g.sh->continued, 1);
			kill(vitals, SIGCONT);
		}
	}
}

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

/* The watchdog has exited (or was never started, or someone reaped it). */
static bool watchdog_gone(void)
{
	int status;
	pid_t r;

	if (!g.watchdog)
		return true;
	r = waitpid(g.watchdog, &status, WNOHANG);
	return r == g.watchdog || (r < 0 && errno == ECHILD);
}

/* At vitals's normal exit: the watchdog reads end of file and exits; collect it. */
static void end_watchdog(void)
{
	int i, status;

	if (!g.watchdog || g.sock < 0)
		return;
	close(g.sock);
	g.sock = -1;
	for (i = 0; i < 500; i++) {   /* half a second at most: it exits on its next wake-up */
		pid_t r = waitpid(g.watchdog, &status, WNOHANG);

		if (r == g.watchdog || r < 0)
			break;
		usleep(1000);
	}
	g.watchdog = 0;
}

static int start_watchdog(struct vt_err *err)
{
	static bool at_exit;
	char stat_path[64], note[256];
	int sv[2], note_len, e;
	pid_t me = getpid(), w;

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
	snprintf(stat_path, sizeof(stat_path), "/proc/%d/stat", (int)me);
	note_len = snprintf(note, sizeof(note), "vitals-watch: vitals (pid %d) stayed stopped while it "
			    "held a thread of another process stopped: killed it, so that the kernel "
			    "lets that thread go\n", (int)me);
	w = fork();
	if (w == 0) {
		close(sv[0]);
		watch(sv[1], me, stat_path, note, (size_t)note_len);
	}
	e = errno;
	close(sv[1]);
	if (w < 0) {
		close(sv[0]);
		return vt_err_set(err, e == EAGAIN || e == ENOMEM ? VT_E_NOMEM : VT_E_FAIL, e,
				  "cannot start the watchdog that bounds a stop: fork: %s", strerror(e));
	}
	setpgid(w, w);   /* as the child does: whichever runs first */
	g.watchdog = w;
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
		g.watchdog = 0;
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

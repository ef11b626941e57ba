/*
 * test_stop_guard.c — a stopped vitals keeps no thread of a target stopped.
 *
 * A child process plays vitals: it arms the guard and holds (as while a
 * target's thread is stopped), then waits on a pipe for the word to
 * release.  This process stops it as a user or a debugger would, and
 * watches what the guard and its watchdog make of it.  Without the guard
 * the child stays stopped (SIGSTOP, SIGTSTP) or traced for as long as its
 * stopper wants, and so would the target's thread it holds.
 */
#include "harness.h"

#include "inject/stop_guard.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Generous for a busy 2-CPU host: the watchdog looks every 20 ms. */
#define ACT_WITHIN_MS 1500

struct child {
	pid_t pid;
	int cmd;        /* write: 'r' release, 'q' quit */
	int ready;      /* read: "w <watchdog pid>\n" once armed and holding */
	int watchdog;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void nap_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Set by the child's SIGUSR1 handler: in its memory, which its watchdog shares. */
static volatile sig_atomic_t got_usr1;

static void on_usr1(int sig)
{
	(void)sig;
	got_usr1 = 1;
}

/*
 * The child: arm (and hold, if hold), say so, release on 'r', say whether its
 * SIGUSR1 handler ran on 'u', exit 0 on 'q'.
 */
static _Noreturn void child_main(int cmd, int ready, bool hold)
{
	struct sigaction usr1 = { .sa_handler = on_usr1 };
	struct vt_err err;
	char c, line[32];
	int n;

	sigaction(SIGUSR1, &usr1, NULL);   /* before the watchdog starts, as vitals's own handlers are */
	/*
	 * A process group of its own, whose parent (the test) is in another:
	 * not orphaned, so the kernel lets SIGTSTP stop it even when the test
	 * runs detached from a terminal (CI), where it discards it.
	 */
	setpgid(0, 0);
	if (vt_stop_guard_arm(&err))
		_exit(2);
	if (hold)
		vt_stop_guard_hold();
	n = snprintf(line, sizeof(line), "w %d\n", vt_stop_guard_watchdog_pid());
	if (write(ready, line, (size_t)n) != n)
		_exit(3);
	for (;;) {
		ssize_t r = read(cmd, &c, 1);

		if (r < 0 && errno == EINTR)
			continue;
		if (r != 1 || c == 'q')
			break;
		if (c == 'u') {
			n = snprintf(line, sizeof(line), "u%d\n", (int)got_usr1);
			if (write(ready, line, (size_t)n) != n)
				_exit(3);
			continue;
		}
		if (c == 'r' && hold) {
			vt_stop_guard_release();
			hold = false;
		}
		if (write(ready, "k\n", 2) != 2)
			_exit(3);
	}
	vt_stop_guard_disarm();
	exit(0);   /* atexit: the watchdog is collected */
}

static bool child_start(struct child *c, bool hold)
{
	int to[2], from[2];
	char buf[32] = "";
	ssize_t n;

	if (pipe(to) || pipe(from))
		return false;
	fflush(stdout);
	c->pid = fork();
	if (c->pid == 0) {
		close(to[1]);
		close(from[0]);
		child_main(to[0], from[1], hold);
	}
	close(to[0]);
	close(from[1]);
	c->cmd = to[1];
	c->ready = from[0];
	n = read(c->ready, buf, sizeof(buf) - 1);
	c->watchdog = 0;
	return n > 2 && sscanf(buf, "w %d", &c->watchdog) == 1 && c->watchdog > 0;
}

/* Tell the child c ('r' or 'q'); for 'r', wait for its acknowledgement (it may stop first). */
static void child_say(struct child *c, char what)
{
	if (write(c->cmd, &what, 1) != 1)
		printf("#   cannot write to the child\n");
}

static bool child_acked(struct child *c)
{
	char buf[8];

	return read(c->ready, buf, sizeof(buf)) > 0;
}

/* Wait for a change of the child (WUNTRACED / WCONTINUED / exit) for up to ms; status in *st. */
static bool child_wait(pid_t pid, int flags, int ms, int *st)
{
	double until = now_ms() + ms;

	do {
		pid_t r = waitpid(pid, st, flags | WNOHANG);

		if (r == pid)
			return true;
		if (r < 0)
			return false;
		nap_ms(2);
	} while (now_ms() < until);
	return false;
}

static void child_end(struct child *c)
{
	int st;

	kill(c->pid, SIGCONT);
	child_say(c, 'q');
	if (!child_wait(c->pid, 0, 5000, &st)) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, &st, 0);
	}
	close(c->cmd);
	close(c->ready);
}

/* pid has exited (gone, or a zombie left to init) within ms. */
static bool gone_within(pid_t pid, int ms)
{
	double until = now_ms() + ms;
	char path[64], buf[256];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	do {
		FILE *f = fopen(path, "r");
		char *p = NULL;

		if (!f)
			return true;
		if (fgets(buf, sizeof(buf), f))
			p = strrchr(buf, ')');
		fclose(f);
		if (p && p[1] && p[2] == 'Z')
			return true;
		nap_ms(5);
	} while (now_ms() < until);
	return false;
}

/* The watchdog is out of the terminal's process group: Ctrl-Z and Ctrl-C never reach it. */
static void test_stop_guard__watchdog_apart(void)
{
	struct child c;
	char path[64], comm[32] = "";
	FILE *f;

	CHECK(child_start(&c, false));
	CHECK_EQ_I64(getpgid(c.watchdog), c.watchdog);
	snprintf(path, sizeof(path), "/proc/%d/comm", c.watchdog);
	for (int i = 0; i < 500 && strcmp(comm, "vitals-watch\n"); i++) {   /* it names itself */
		f = fopen(path, "r");
		if (f) {
			if (!fgets(comm, sizeof(comm), f))
				comm[0] = 0;
			fclose(f);
		}
		nap_ms(2);
	}
	CHECK_STR(comm, "vitals-watch\n");
	child_end(&c);
	/* It exits with its vitals (which collects it unless the host is slow to run it). */
	CHECK(gone_within(c.watchdog, 2000));
}

/* SIGSTOP of a holding vitals is undone within a few looks, and done again after the release. */
static void test_stop_guard__sigstop_undone(void)
{
	struct child c;
	double t0, undone_ms;
	int st = 0;

	CHECK(child_start(&c, true));
	t0 = now_ms();
	kill(c.pid, SIGSTOP);
	/* The stop's own report may be overtaken by the SIGCONT's: either comes first. */
	CHECK(child_wait(c.pid, WUNTRACED | WCONTINUED, ACT_WITHIN_MS, &st));
	if (WIFSTOPPED(st))
		CHECK(child_wait(c.pid, WCONTINUED, ACT_WITHIN_MS, &st));
	CHECK(WIFCONTINUED(st));
	undone_ms = now_ms() - t0;
	printf("# SIGSTOP undone after %.0f ms\n", undone_ms);
	CHECK(undone_ms < ACT_WITHIN_MS);
	/* Let go: the child stops itself, as its user asked. */
	child_say(&c, 'r');
	CHECK(child_wait(c.pid, WUNTRACED, ACT_WITHIN_MS, &st) && WIFSTOPPED(st) &&
	      WSTOPSIG(st) == SIGSTOP);
	kill(c.pid, SIGCONT);
	CHECK(child_acked(&c));
	child_end(&c);
}

/* Ctrl-Z of a holding vitals waits for the release, then stops it. */
static void test_stop_guard__tstp_put_off(void)
{
	struct child c;
	int st = 0;

	CHECK(child_start(&c, true));
	kill(c.pid, SIGTSTP);
	CHECK(!child_wait(c.pid, WUNTRACED, 300, &st));
	child_say(&c, 'r');
	CHECK(child_wait(c.pid, WUNTRACED, ACT_WITHIN_MS, &st) && WIFSTOPPED(st) &&
	      WSTOPSIG(st) == SIGTSTP);
	kill(c.pid, SIGCONT);
	CHECK(child_acked(&c));
	/* Holding nothing, Ctrl-Z stops it at once, as it would any program. */
	kill(c.pid, SIGTSTP);
	CHECK(child_wait(c.pid, WUNTRACED, ACT_WITHIN_MS, &st) && WIFSTOPPED(st) &&
	      WSTOPSIG(st) == SIGTSTP);
	child_end(&c);
}

/* Armed but holding nothing: a stop of vitals is its user's business, left alone. */
static void test_stop_guard__idle_stop_left_alone(void)
{
	struct child c;
	int st = 0;

	CHECK(child_start(&c, false));
	kill(c.pid, SIGSTOP);
	CHECK(child_wait(c.pid, WUNTRACED, ACT_WITHIN_MS, &st) && WIFSTOPPED(st));
	CHECK(!child_wait(c.pid, WCONTINUED, 300, &st));
	child_end(&c);
}

/* A debugger holding vitals (state t) while it holds a thread: the watchdog kills vitals. */
static void test_stop_guard__traced_killed(void)
{
	struct child c;
	double t0, ms;
	int st = 0;
	bool killed = false;

	CHECK(child_start(&c, true));
	CHECK(ptrace(PTRACE_SEIZE, c.pid, NULL, NULL) == 0);
	CHECK(ptrace(PTRACE_INTERRUPT, c.pid, NULL, NULL) == 0);
	t0 = now_ms();
	while (now_ms() - t0 < ACT_WITHIN_MS + 1000) {
		if (!child_wait(c.pid, __WALL, 100, &st))
			continue;
		if (WIFSIGNALED(st)) {
			killed = WTERMSIG(st) == SIGKILL;
			break;
		}
		/* a ptrace stop: stay stopped (the debugger does not continue it) */
	}
	ms = now_ms() - t0;
	printf("# traced vitals killed after %.0f ms\n", ms);
	CHECK(killed);
	close(c.cmd);
	close(c.ready);
}

/*
 * vitals killed (SIGKILL) while it holds a thread: the kernel lets the
 * thread go, and the watchdog, which shares vitals's memory, lives on to
 * read the end of file and exit by itself, cleanly (status 0, no fault):
 * this process takes it as a subreaper to see how it ended.
 */
static void test_stop_guard__vitals_killed_watchdog_exits(void)
{
	struct child c;
	int st = 0;

	CHECK(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
	CHECK(child_start(&c, true));
	kill(c.pid, SIGKILL);
	CHECK(waitpid(c.pid, &st, 0) == c.pid && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	CHECK(child_wait(c.watchdog, 0, ACT_WITHIN_MS, &st));
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	prctl(PR_SET_CHILD_SUBREAPER, 0);
	close(c.cmd);
	close(c.ready);
}

/*
 * A signal sent to the watchdog (pkill vitals finds it too) never runs a
 * handler of vitals there: the watchdog shares vitals's memory, so a handler
 * of vitals run in it would change vitals's state behind its back.  It takes
 * the default action (SIGUSR1: it ends) and vitals's flag stays unset.
 */
static void test_stop_guard__no_handler_of_vitals_in_watchdog(void)
{
	struct child c;
	char buf[8] = "";

	CHECK(child_start(&c, false));
	kill(c.watchdog, SIGUSR1);
	CHECK(gone_within(c.watchdog, 2000));
	child_say(&c, 'u');
	CHECK(read(c.ready, buf, sizeof(buf) - 1) >= 2);
	CHECK_STR(buf, "u0\n");
	child_end(&c);
}

VT_TEST_MAIN(test_stop_guard__watchdog_apart, test_stop_guard__sigstop_undone,
	     test_stop_guard__tstp_put_off, test_stop_guard__idle_stop_left_alone,
	     test_stop_guard__traced_killed, test_stop_guard__vitals_killed_watchdog_exits,
	     test_stop_guard__no_handler_of_vitals_in_watchdog)

/*
 * test_tracer.c — the thread that makes a probe's ptrace requests.
 *
 * Its promises, on a real child process: jobs run on the tracer thread,
 * one at a time, in order; a job that retires the tracer lets its tracee
 * go at once, before the caller ends it (the kernel's exit_ptrace on the
 * thread's exit), and no job runs after; an orphaned tracer runs its last
 * task on its own thread; a nap ends when a tracee stops, not at its end.
 */
#include "harness.h"

#include "inject/tracer.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static pid_t sleeper(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
		;
}

struct record {
	pid_t tid[3];
	int n;
};

static bool note_tid(struct vt_tracer *t, void *arg)
{
	struct record *r = arg;

	(void)t;
	r->tid[r->n++] = (pid_t)syscall(SYS_gettid);
	return false;
}

static void test_tracer__jobs_run_on_its_thread_in_order(void)
{
	struct record r = { { 0 }, 0 };
	struct vt_tracer *t;
	struct vt_err err;

	CHECK_EQ_I64(vt_tracer_start(0, &t, &err), VT_OK);
	for (int i = 0; i < 3; i++)
		CHECK(vt_tracer_run(t, note_tid, &r));
	CHECK(r.n == 3);
	CHECK(r.tid[0] != (pid_t)syscall(SYS_gettid));
	CHECK(r.tid[0] == r.tid[1] && r.tid[1] == r.tid[2]);
	CHECK(!vt_tracer_retired(t));
	vt_tracer_end(t);
	vt_tracer_end(NULL);   /* a no-op */
	/* spinning hand-offs run the same */
	r.n = 0;
	CHECK_EQ_I64(vt_tracer_start(1000, &t, &err), VT_OK);
	for (int i = 0; i < 3; i++)
		CHECK(vt_tracer_run(t, note_tid, &r));
	CHECK(r.n == 3 && r.tid[0] == r.tid[2]);
	vt_tracer_end(t);
}

struct seize {
	pid_t pid;
	int rc;
	double nap_ms;
};

/* Seize and interrupt the child, wait for its stop with naps; keep it traced and retire. */
static bool seize_and_retire(struct vt_tracer *t, void *arg)
{
	struct seize *s = arg;
	double t0;
	int st;

	s->rc = -1;
	if (ptrace(PTRACE_SEIZE, s->pid, NULL, NULL) < 0 || ptrace(PTRACE_INTERRUPT, s->pid, NULL, NULL) < 0)
		return false;
	t0 = now_ms();
	/* a nap of 5 s ends when the stop's SIGCHLD comes */
	while (waitpid(s->pid, &st, __WALL | WNOHANG) == 0 && now_ms() - t0 < 5000)
		vt_tracer_nap(t, 5000000000ull);
	s->nap_ms = now_ms() - t0;
	s->rc = WIFSTOPPED(st) ? 0 : -1;
	return true;   /* only the thread's exit lets it go */
}

static bool must_not_run(struct vt_tracer *t, void *arg)
{
	(void)t;
	*(int *)arg = 1;
	return false;
}

static void test_tracer__retire_lets_the_tracee_go_at_once(void)
{
	struct seize s = { sleeper(), -1, 0 };
	struct vt_tracer *t;
	struct vt_err err;
	sigset_t chld, old;
	long tracer = -2;
	int ran = 0;
	double t0;

	CHECK(s.pid > 0);
	/* the stops' SIGCHLD waits for the tracer's signalfd */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &chld, &old);
	CHECK_EQ_I64(vt_tracer_start(0, &t, &err), VT_OK);
	CHECK(vt_tracer_run(t, seize_and_retire, &s));
	CHECK(s.rc == 0);
	printf("# the stop ended a 5 s nap after %.1f ms\n", s.nap_ms);
	CHECK(s.nap_ms < 2500);
	CHECK(vt_tracer_retired(t));
	/* not ended yet: the thread's own exit has let the child go */
	t0 = now_ms();
	while (now_ms() - t0 < 2000 && (tracer = vt_test_tracer_pid(s.pid)) != 0)
		usleep(1000);
	printf("# untraced %.1f ms after the job\n", now_ms() - t0);
	CHECK(tracer == 0);
	CHECK(!vt_tracer_run(t, must_not_run, &ran));
	CHECK(ran == 0);
	vt_tracer_end(t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	reap(s.pid);
}

struct last {
	pid_t caller, ran_on;
	int calls;
};

static void last_task(void *arg)
{
	struct last *l = arg;

	l->ran_on = (pid_t)syscall(SYS_gettid);
	__atomic_add_fetch(&l->calls, 1, __ATOMIC_RELEASE);
}

static void test_tracer__orphan_runs_its_last_task(void)
{
	struct last l = { (pid_t)syscall(SYS_gettid), 0, 0 };
	struct record r = { { 0 }, 0 };
	struct vt_tracer *t;
	struct vt_err err;
	double t0;

	CHECK_EQ_I64(vt_tracer_start(0, &t, &err), VT_OK);
	CHECK(vt_tracer_run(t, note_tid, &r));
	vt_tracer_orphan(t, last_task, &l);
	t0 = now_ms();
	while (!__atomic_load_n(&l.calls, __ATOMIC_ACQUIRE) && now_ms() - t0 < 5000)
		usleep(1000);
	usleep(20000);
	CHECK(l.calls == 1);
	CHECK(l.ran_on == r.tid[0] && l.ran_on != l.caller);
}

VT_TEST_MAIN(test_tracer__jobs_run_on_its_thread_in_order,
	     test_tracer__retire_lets_the_tracee_go_at_once, test_tracer__orphan_runs_its_last_task)

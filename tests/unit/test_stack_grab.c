/*
 * test_stack_grab.c — registers and stacks of running threads through
 * ptrace (src/inject/stack_grab.c), and the target's safety.
 *
 * The target is a child forked here: spinning threads ("spin"), a thread
 * sleeping 200 us at a time with every signal blocked that counts EINTRs
 * from clock_nanosleep (an interrupt must restart it, never fail it), and
 * the main thread in pause().  Its counters (rounds per thread, SIGUSR1
 * and SIGRTMIN taken by handlers in every thread but the sleeper) live in
 * shared memory, so the test knows every signal it sent was taken exactly
 * once.  The SIGUSR1s are sent one at a time, each awaited (a standard
 * signal sent while one is pending would merge); the SIGRTMINs are queued.
 *
 * Last, a grabber child is SIGKILLed at random moments (VT_GRAB_KILLS,
 * default 200) while it grabs the loaded target's threads in a loop: after
 * each kill no thread may be left traced or stopped, and at the end no
 * signal may be lost and every thread must still work.
 * Figures (pause per grab, grabs per second) are printed as "# " lines.
 * Without ptrace permission (not root) the live tests skip.
 *
 * lane: solo — it counts the grabs that stop a spinning thread within 2 ms,
 * which fail when test_inject's children take the CPUs (tests/run)
 */
#include "harness.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "elf/unwind.h"
#include "inject/stack_grab.h"
#include "sample/profiler.h"
#include "proc/procfs.h"

#define MAX_THREADS 16
#define GRAB_US 2000

struct shared {
	_Atomic uint64_t usr1, rt;
	_Atomic uint64_t rounds[MAX_THREADS];
	_Atomic int tids[MAX_THREADS];
	_Atomic int nready;
	_Atomic uint64_t sleeper_eintr;
	_Atomic int vfork_tid;        /* the thread in vfork (timeout test) */
	_Atomic uint64_t vfork_rounds;
	/* the grabber child's progress (kill test) */
	_Atomic uint64_t grabs, grab_attempts;
	_Atomic int in_grab;
	_Atomic int grabber_ready;
};

static struct shared *sh;
static int nspin;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_ms(double ms)
{
	struct timespec ts = { (time_t)(ms / 1e3), (long)(fmod(ms, 1e3) * 1e6) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static bool can_ptrace(void)
{
	if (geteuid() == 0)
		return true;
	printf("# skip: not root\n");
	return false;
}

/* ---- the target ------------------------------------------------------------- */

static void on_usr1(int sig)
{
	(void)sig;
	atomic_fetch_add(&sh->usr1, 1);
}

static void on_rt(int sig)
{
	(void)sig;
	atomic_fetch_add(&sh->rt, 1);
}

__attribute__((noinline)) void grab_test_spin_work(_Atomic uint64_t *rounds);
__attribute__((noinline)) void grab_test_spin_work(_Atomic uint64_t *rounds)
{
	for (;;) {
		for (volatile int i = 0; i < 2000; i++)
			;
		atomic_fetch_add_explicit(rounds, 1, memory_order_relaxed);
	}
}

static void *spinner_main(void *arg)
{
	int i = (int)(intptr_t)arg;

	sh->tids[i] = (int)gettid();
	atomic_fetch_add(&sh->nready, 1);
	grab_test_spin_work(&sh->rounds[i]);
	return NULL;
}

/* Sleeps in 200 us steps with every signal blocked: only an interrupt could stop it. */
static void *sleeper_main(void *arg)
{
	int i = (int)(intptr_t)arg;
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	sh->tids[i] = (int)gettid();
	atomic_fetch_add(&sh->nready, 1);
	for (;;) {
		struct timespec ts = { 0, 200000 };
		int r = clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);

		if (r == EINTR)
			atomic_fetch_add(&sh->sleeper_eintr, 1);
		atomic_fetch_add(&sh->rounds[i], 1);
	}
	return NULL;
}

/* vfork()s a child that sleeps 300 ms: this thread waits uninterruptibly (state D). */
static void *vforker_main(void *arg)
{
	(void)arg;
	sh->vfork_tid = (int)gettid();
	for (;;) {
		pid_t c = vfork();

		if (c == 0) {
			struct timespec ts = { 0, 300000000 };

			syscall(SYS_nanosleep, &ts, NULL);
			_exit(0);
		}
		if (c > 0)
			waitpid(c, NULL, 0);
		atomic_fetch_add(&sh->vfork_rounds, 1);
	}
	return NULL;
}

static void setup(void)
{
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		printf("Bail out! mmap\n");
		exit(2);
	}
}

/* Fork the target: nspin spinners and a sleeper (its index nspin), plus a vforker if asked. */
static pid_t spawn_target(int spinners, bool vforker)
{
	pid_t pid;

	if (!sh)
		setup();
	memset(sh, 0, sizeof(*sh));
	nspin = spinners;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct sigaction sa;
		pthread_t th;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		memset(&sa, 0, sizeof(sa));
		sa.sa_flags = SA_RESTART;
		sa.sa_handler = on_usr1;
		sigaction(SIGUSR1, &sa, NULL);
		sa.sa_handler = on_rt;
		sigaction(SIGRTMIN, &sa, NULL);
		for (int i = 0; i < spinners; i++)
			pthread_create(&th, NULL, spinner_main, (void *)(intptr_t)i);
		pthread_create(&th, NULL, sleeper_main, (void *)(intptr_t)spinners);
		if (vforker)
			pthread_create(&th, NULL, vforker_main, NULL);
		for (;;)
			pause();
	}
	while (sh->nready < spinners + 1)
		sleep_ms(1);
	if (vforker)
		while (!sh->vfork_tid)
			sleep_ms(1);
	return pid;
}

static void end_target(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* The state letters of every thread of pid; counts those traced or stopped. */
static int count_states(pid_t pid, int *traced, int *stopped)
{
	char path[320], buf[512];
	int n = 0;

	*traced = *stopped = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	struct dirent *de;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", (int)pid, de->d_name);
		int fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		ssize_t r = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (r <= 0)
			continue;
		buf[r] = '\0';
		char *p = strrchr(buf, ')');
		if (!p || !p[1])
			continue;
		n++;
		if (p[2] == 't')
			(*traced)++;
		if (p[2] == 'T')
			(*stopped)++;
	}
	closedir(d);
	return n;
}

static void rounds_snapshot(uint64_t *out)
{
	for (int i = 0; i <= nspin; i++)
		out[i] = sh->rounds[i];
}

/* Every spinner and the sleeper moved on since before. */
static bool all_progressed(const uint64_t *before)
{
	for (int i = 0; i <= nspin; i++)
		if (sh->rounds[i] <= before[i])
			return false;
	return true;
}

/* ---- signals sent while grabbing -------------------------------------------- */

struct sender {
	pid_t pid;
	atomic_bool stop;
	uint64_t usr1_sent, rt_sent, usr1_lost;
	pthread_t th;
};

static void *sender_main(void *arg)
{
	struct sender *s = arg;
	sigset_t all;
	unsigned seed = 1;

	/* The tracer's SIGCHLD must not land here (it would be discarded). */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	while (!atomic_load(&s->stop)) {
		int tid = sh->tids[rand_r(&seed) % nspin];
		uint64_t before = sh->usr1;
		double until;

		if (syscall(SYS_tgkill, s->pid, tid, SIGUSR1) == 0) {
			s->usr1_sent++;
			until = now_s() + 2;
			while (sh->usr1 == before && now_s() < until)
				sched_yield();
			if (sh->usr1 == before)
				s->usr1_lost++;
		}
		for (int k = 0; k < 4; k++) {
			siginfo_t si;

			memset(&si, 0, sizeof(si));
			si.si_signo = SIGRTMIN;
			si.si_code = SI_QUEUE;
			si.si_pid = getpid();
			si.si_uid = getuid();
			tid = sh->tids[rand_r(&seed) % nspin];
			if (syscall(SYS_rt_tgsigqueueinfo, s->pid, tid, SIGRTMIN, &si) == 0)
				s->rt_sent++;
		}
		sleep_ms(0.5);
	}
	return NULL;
}

static void sender_start(struct sender *s, pid_t pid)
{
	memset(s, 0, sizeof(*s));
	s->pid = pid;
	pthread_create(&s->th, NULL, sender_main, s);
}

/* Stop sending; every signal sent must have been taken exactly once. */
static void sender_check(struct sender *s)
{
	double until = now_s() + 3;

	atomic_store(&s->stop, true);
	pthread_join(s->th, NULL);
	while ((sh->usr1 != s->usr1_sent || sh->rt != s->rt_sent) && now_s() < until)
		sleep_ms(1);
	printf("# signals: SIGUSR1 sent %" PRIu64 " taken %" PRIu64 ", SIGRTMIN sent %" PRIu64
	       " taken %" PRIu64 "\n", s->usr1_sent, (uint64_t)sh->usr1, s->rt_sent,
	       (uint64_t)sh->rt);
	CHECK(s->usr1_sent > 0);
	CHECK_EQ_U64(s->usr1_lost, 0);
	CHECK_EQ_U64(sh->usr1, s->usr1_sent);
	CHECK_EQ_U64(sh->rt, s->rt_sent);
}

/* ---- figures ------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double p)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	return v[(size_t)(p * (double)(n - 1) + 0.5)];
}

/* ---- tests ------------------------------------------------------------------------ */

static struct vt_stack_grab_sample smp;   /* 16 KiB: not on the stack */

/* A spinner's sample: its registers and stack unwind to grab_test_spin_work <- spinner_main. */
static void test_stack_grab__sample_unwinds(void)
{
	struct vt_stack_grab *g = NULL;
	struct vt_unwinder *uw = NULL;
	struct vt_procfs pfs;
	struct vt_err err;
	int ok = 0, named = 0, pfd = -1;
	pid_t pid;

	if (!can_ptrace())
		return;
	CHECK(vt_procfs_open(&pfs, NULL, NULL, &err) == VT_OK);
	pid = spawn_target(2, false);
	CHECK(pid > 0);
	CHECK_EQ_I64(vt_stack_grab_open(&pfs, pid, &(struct vt_stack_grab_opts){ 0.5, 100000 }, &g,
					&err), VT_OK);
	CHECK(vt_pid_open(&pfs, pid, &pfd, &err) == VT_OK);
	CHECK(vt_unwinder_open(pfd, pid, &uw, &err) == VT_OK);
	/* 40 grabs; on a loaded host a spinner may get no CPU within the 2 ms a grab waits
	 * (it is then released untouched, as it should): up to 200 tries for them */
	for (int k = 0; g && uw && k < 200 && ok < 40; k++) {
		pid_t tid = sh->tids[k % 2];
		uint64_t before = vt_mono_ns();

		int rc = vt_stack_grab(g, tid, GRAB_US, &smp, &err);
		if (rc) {
			printf("#   grab %d: %s\n", k, err.msg);
			continue;
		}
		if (smp.held)
			continue;
		ok++;
		CHECK(smp.sample.regs_ok);
		CHECK_EQ_I64(smp.sample.tid, tid);
		CHECK_EQ_I64(smp.sample.pid, pid);
		CHECK_EQ_U64(smp.sample.ip, smp.sample.regs[VT_PERF_REG_IP]);
		CHECK(smp.sample.time_ns >= before);
		CHECK(smp.sample.stack == smp.stack_copy);
		/* a thread's stack ends a few KiB above a shallow frame (its pthread struct) */
		CHECK(smp.sample.stack_len >= 1024 && smp.sample.stack_len <= VT_STACK_GRAB_BYTES);
		CHECK(smp.pause_us > 0 && smp.stopped_us <= smp.pause_us);
		CHECK(smp.sample.callchain == NULL && smp.sample.nchain == 0);
		/* the ip is in the spin loop */
		CHECK(smp.sample.ip - (uint64_t)(uintptr_t)grab_test_spin_work < 4096);

		struct vt_unwind_start st = { .stack = smp.sample.stack, .stack_len = smp.sample.stack_len,
					      .stack_addr = smp.sample.regs[VT_PERF_REG_SP] };
		struct vt_unwind_frame fr[32];
		enum vt_unwind_end why;
		struct vt_unwind_sym sym;
		bool saw_spin = false, saw_main = false;

		vt_profiler_regs_to_dwarf(smp.sample.regs, &st);
		size_t n = vt_unwind(uw, tid, &st, fr, 32, &why);
		for (size_t i = 0; i < n; i++) {
			if (!vt_unwind_symbolize(uw, fr[i].pc, !fr[i].activation, &sym) || !sym.func)
				continue;
			saw_spin |= !strcmp(sym.func, "grab_test_spin_work");
			saw_main |= !strcmp(sym.func, "spinner_main");
		}
		named += saw_spin && saw_main;
	}
	printf("# %d samples, %d unwound to grab_test_spin_work <- spinner_main\n", ok, named);
	CHECK(ok >= 30);
	CHECK(named >= ok - 2);
	struct vt_stack_grab_stats stats;
	vt_stack_grab_get_stats(g, &stats);
	CHECK_EQ_U64(stats.grabs, (uint64_t)ok);
	CHECK_EQ_U64(stats.threads, 2);
	vt_unwinder_free(&uw);
	vt_stack_grab_close(&g);
	CHECK(g == NULL);
	if (pfd >= 0)
		close(pfd);
	int traced, stopped;
	CHECK(count_states(pid, &traced, &stopped) >= 4);
	CHECK_EQ_I64(traced, 0);
	end_target(pid);
	vt_procfs_close(&pfs);
}

struct loop_result {
	uint64_t ok, held, timeout, stopped, stop_trap, gone, other;
	double *pause, *stopped_us;
	size_t n, cap;
};

/* Grab every spinner and the sleeper in turn for seconds, collecting pauses. */
static void grab_loop(struct vt_stack_grab *g, double seconds, unsigned timeout_us,
		      struct loop_result *r)
{
	double until = now_s() + seconds;
	struct vt_err err;
	int k = 0;

	while (now_s() < until) {
		pid_t tid = sh->tids[k++ % (nspin + 1)];
		int rc = vt_stack_grab(g, tid, timeout_us, &smp, &err);

		if (rc == VT_OK && smp.held) {
			r->held++;
		} else if (rc == VT_OK) {
			r->ok++;
			if (r->n < r->cap) {
				r->pause[r->n] = smp.pause_us;
				r->stopped_us[r->n++] = smp.stopped_us;
			}
		} else if (rc == VT_E_TIMEOUT) {
			r->timeout++;
		} else if (rc == VT_E_UNSUPPORTED) {
			r->stopped++;
			r->stop_trap += strstr(err.msg, "is being stopped") != NULL;
		} else if (rc == VT_E_GONE) {
			r->gone++;
		} else {
			if (r->other++ < 3)
				printf("#   grab: %s: %s\n", vt_code_name(rc), err.msg);
		}
	}
}

static void loop_init(struct loop_result *r, size_t cap)
{
	memset(r, 0, sizeof(*r));
	r->cap = cap;
	r->pause = calloc(cap, sizeof(double));
	r->stopped_us = calloc(cap, sizeof(double));
}

static void loop_free(struct loop_result *r)
{
	free(r->pause);
	free(r->stopped_us);
}

/*
 * A loaded box (two spinners per CPU) grabbed flat out while signals are
 * sent: every signal taken once, none lost; the sleeper's clock_nanosleep
 * never fails with EINTR; pauses measured.
 */
static void test_stack_grab__signals_and_pauses(void)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int spinners = ncpu * 2 < MAX_THREADS - 2 ? (int)ncpu * 2 : MAX_THREADS - 2;
	struct vt_stack_grab *g = NULL;
	struct vt_stack_grab_stats st;
	struct loop_result r;
	struct sender snd;
	struct vt_procfs pfs;
	struct vt_err err;
	uint64_t before[MAX_THREADS];
	int traced, stopped;
	pid_t pid;

	if (!can_ptrace())
		return;
	CHECK(vt_procfs_open(&pfs, NULL, NULL, &err) == VT_OK);
	pid = spawn_target(spinners, false);
	CHECK_EQ_I64(vt_stack_grab_open(&pfs, pid, &(struct vt_stack_grab_opts){ 0.5, 1000000 }, &g,
					&err), VT_OK);
	if (!g) {
		end_target(pid);
		return;
	}
	loop_init(&r, 1 << 20);
	sender_start(&snd, pid);
	double t0 = now_s();
	grab_loop(g, 3.0, GRAB_US, &r);
	double secs = now_s() - t0;
	sender_check(&snd);
	vt_stack_grab_get_stats(g, &st);
	printf("# loaded box (%d spinners on %ld CPUs + sleeper): %.0f grabs/s, %" PRIu64 " timeouts, "
	       "%" PRIu64 " signals met at the stop and passed on, %" PRIu64 " EINTR\n", spinners,
	       ncpu, (double)r.ok / secs, r.timeout, st.signals, st.eintr);
	size_t n = r.n;
	printf("# pause per grab (interrupt to release) us: median %.1f p90 %.1f p99 %.1f max %.1f\n",
	       pct(r.pause, n, 0.5), pct(r.pause, n, 0.9), pct(r.pause, n, 0.99),
	       pct(r.pause, n, 1.0));
	printf("# stopped per grab (stop seen to release) us: median %.1f p99 %.1f\n",
	       pct(r.stopped_us, n, 0.5), pct(r.stopped_us, n, 0.99));
	printf("# total pause %.1f ms over %.1f s, largest thread share %.2f %%\n",
	       st.pause_total_us / 1e3, secs, st.max_thread_share * 100);
	CHECK(r.ok > 100);   /* a few hundred a second even on a busy shared box */
	CHECK_EQ_U64(r.other, 0);
	CHECK_EQ_U64(sh->sleeper_eintr, 0);
	CHECK_EQ_U64(st.grabs, r.ok);
	vt_stack_grab_close(&g);
	rounds_snapshot(before);
	sleep_ms(100);
	CHECK(all_progressed(before));
	CHECK(count_states(pid, &traced, &stopped) > spinners);
	CHECK_EQ_I64(traced, 0);
	CHECK_EQ_I64(stopped, 0);
	loop_free(&r);
	end_target(pid);
	vt_procfs_close(&pfs);
}

/*
 * Signals that reach a seized thread before the interrupt (a window the
 * test widens to 1 ms): met as signal-delivery-stops, sampled there, and
 * delivered with the thread's release, each exactly once.
 */
static void test_stack_grab__signal_delivery_stop(void)
{
	struct vt_stack_grab *g = NULL;
	struct vt_stack_grab_stats st;
	struct vt_procfs pfs;
	struct vt_err err;
	struct sender snd;
	int met = 0, bad_sig = 0, k = 0;
	pid_t pid;

	if (!can_ptrace())
		return;
	CHECK(vt_procfs_open(&pfs, NULL, NULL, &err) == VT_OK);
	pid = spawn_target(2, false);
	CHECK_EQ_I64(vt_stack_grab_open(&pfs, pid, &(struct vt_stack_grab_opts){ 0.5, 1000000 }, &g,
					&err), VT_OK);
	if (!g) {
		end_target(pid);
		return;
	}
	vt_stack_grab_test_seize_delay_us = 1000;
	sender_start(&snd, pid);
	double until = now_s() + 1.5;
	while (now_s() < until) {
		int rc = vt_stack_grab(g, sh->tids[k++ % 2], GRAB_US, &smp, &err);

		if (rc == VT_OK && !smp.held && smp.signal) {
			met++;
			bad_sig += smp.signal != SIGUSR1 && smp.signal != SIGRTMIN;
			CHECK(smp.sample.regs_ok && smp.sample.stack_len > 0);
		}
	}
	vt_stack_grab_test_seize_delay_us = 0;
	sender_check(&snd);
	vt_stack_grab_get_stats(g, &st);
	printf("# %d grabs met a signal first (stats: %" PRIu64 "), each passed on\n", met, st.signals);
	CHECK(met >= 10);
	CHECK_EQ_I64(bad_sig, 0);
	CHECK_EQ_U64(st.signals, (uint64_t)met);
	vt_stack_grab_close(&g);
	end_target(pid);
	vt_procfs_close(&pfs);
}

struct bg_grab {
	struct vt_stack_grab *g;
	atomic_bool stop;
	struct loop_result r;
	pthread_t th;
};

static void *bg_grab_main(void *arg)
{
	struct bg_grab *b = arg;

	while (!atomic_load(&b->stop))
		grab_loop(b->g, 0.01, GRAB_US, &b->r);
	return NULL;
}

/*
 * SIGSTOP and SIGCONT while grabbing: every thread ends in the group stop
 * (T, never t), stays there, and all run again after SIGCONT.
 */
static void test_stack_grab__job_control(void)
{
	struct vt_procfs pfs;
	struct vt_err err;
	struct bg_grab b;
	uint64_t before[MAX_THREADS];
	int traced, stopped, n, bad_stop = 0, bad_cont = 0;
	pid_t pid;

	if (!can_ptrace())
		return;
	CHECK(vt_procfs_open(&pfs, NULL, NULL, &err) == VT_OK);
	pid = spawn_target(3, false);
	memset(&b, 0, sizeof(b));
	CHECK_EQ_I64(vt_stack_grab_open(&pfs, pid, &(struct vt_stack_grab_opts){ 0.5, 1000000 }, &b.g,
					&err), VT_OK);
	if (!b.g) {
		end_target(pid);
		return;
	}
	loop_init(&b.r, 0);
	/* the grabbing thread blocks SIGCHLD for its tracer as the opening one did */
	sigset_t chld, old;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &chld, &old);
	pthread_create(&b.th, NULL, bg_grab_main, &b);
	for (int cycle = 0; cycle < 30; cycle++) {
		sleep_ms(2 + cycle % 7);
		kill(pid, SIGSTOP);
		double until = now_s() + 1;
		do {
			sleep_ms(1);
			n = count_states(pid, &traced, &stopped);
		} while (stopped != n && now_s() < until);
		sleep_ms(20);   /* grabs meet the stop meanwhile */
		/* all in T; a t is one being released into the stop right now (a busy box may delay it) */
		until = now_s() + 1;
		do {
			n = count_states(pid, &traced, &stopped);
		} while ((stopped != n || traced) && now_s() < until && (sleep_ms(1), true));
		if (stopped != n || traced) {
			bad_stop++;
			printf("#   cycle %d after SIGSTOP: %d threads, %d T, %d t\n", cycle, n, stopped,
			       traced);
		}
		rounds_snapshot(before);
		kill(pid, SIGCONT);
		/* all run again: none left in T; a t is one being grabbed right now, not for long */
		until = now_s() + 1;
		do {
			sleep_ms(1);
			n = count_states(pid, &traced, &stopped);
		} while ((!all_progressed(before) || stopped || traced) && now_s() < until);
		if (!all_progressed(before) || stopped || traced) {
			bad_cont++;
			printf("#   cycle %d after SIGCONT: progressed %d, %d T, %d t\n", cycle,
			       all_progressed(before), stopped, traced);
		}
	}
	atomic_store(&b.stop, true);
	pthread_join(b.th, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	printf("# job control: %" PRIu64 " samples, %" PRIu64 " grabs found the stop (%" PRIu64
	       " of them met it as a group-stop trap and released the thread into it), %" PRIu64
	       " other\n", b.r.ok, b.r.stopped, b.r.stop_trap, b.r.other);
	CHECK_EQ_I64(bad_stop, 0);
	CHECK_EQ_I64(bad_cont, 0);
	CHECK(b.r.stopped > 0);
	CHECK(b.r.ok > 0);
	CHECK_EQ_U64(b.r.other, 0);
	vt_stack_grab_close(&b.g);
	loop_free(&b.r);
	end_target(pid);
	vt_procfs_close(&pfs);
}

/*
 * A thread waiting uninterruptibly in vfork() cannot stop: the grab times
 * out, the thread is released, and it is never seen stopped afterwards.
 */
static void test_stack_grab__timeout_releases(void)
{
	struct vt_stack_grab *g = NULL;
	struct vt_stack_grab_stats st;
	struct vt_procfs pfs;
	struct vt_err err;
	int timeouts = 0, traced, stopped;
	pid_t pid;

	if (!can_ptrace())
		return;
	CHECK(vt_procfs_open(&pfs, NULL, NULL, &err) == VT_OK);
	pid = spawn_target(1, true);
	CHECK_EQ_I64(vt_stack_grab_open(&pfs, pid, &(struct vt_stack_grab_opts){ 0.5, 1000000 }, &g,
					&err), VT_OK);
	for (int k = 0; g && k < 10; k++) {
		int rc = vt_stack_grab(g, sh->vfork_tid, GRAB_US, &smp, &err);

		if (rc == VT_E_TIMEOUT) {
			timeouts++;
			CHECK(strstr(err.msg, "released untouched") != NULL);
			CHECK(smp.state == 'D');
		}
		/* released at once: never traced, never stopped */
		count_states(pid, &traced, &stopped);
		CHECK_EQ_I64(traced, 0);
		sleep_ms(37);
	}
	uint64_t v0 = sh->vfork_rounds;
	sleep_ms(700);
	CHECK(sh->vfork_rounds > v0);   /* the vforker goes on */
	CHECK(count_states(pid, &traced, &stopped) > 0);
	CHECK_EQ_I64(traced, 0);
	if (g) {
		vt_stack_grab_get_stats(g, &st);
		CHECK_EQ_U64(st.timeouts, (uint64_t)timeouts);
		CHECK(st.tracer_restarts >= (uint64_t)timeouts);
		printf("# vfork: %d of 10 grabs timed out (state D), each released\n", timeouts);
	}
	CHECK(timeouts >= 5);
	vt_stack_grab_close(&g);
	end_target(pid);
	vt_procfs_close(&pfs);
}

/* The budgets: a thread's pause share, and the session's grabs per second. */
static void test_stack_grab__budget(void)
{
	struct vt_stack_grab *g = NULL;
	struct vt_stack_grab_stats st;
	struct vt_stack_grab_thread th;
	struct vt_procfs pfs;
	struct vt_err err;
	struct loop_result r;
	pid_t pid;

	if (!can_ptrace())
		return;
	CHECK(vt_procfs_open(&pfs, NULL, NULL, &err) == VT_OK);
	pid = spawn_target(2, false);
	/* 1 % of each thread's time: over 1.5 s at most 15 ms + 10 ms of saved credit + one grab */
	CHECK_EQ_I64(vt_stack_grab_open(&pfs, pid, &(struct vt_stack_grab_opts){ 0.01, 1000000 }, &g,
					&err), VT_OK);
	if (!g) {
		end_target(pid);
		return;
	}
	loop_init(&r, 0);
	grab_loop(g, 1.5, GRAB_US, &r);
	vt_stack_grab_get_stats(g, &st);
	CHECK(st.held_thread > 0);
	for (int i = 0; i <= nspin; i++) {
		CHECK(vt_stack_grab_thread(g, sh->tids[i], &th));
		printf("# thread %d: %" PRIu64 " grabs, paused %.2f ms in %.2f s (%.2f %%)\n", i,
		       th.grabs, th.pause_us / 1e3, th.seen_s, th.pause_us / th.seen_s / 1e4);
		CHECK(th.pause_us <= 0.01 * (th.seen_s + 1) * 1e6 + 2000);
		/* the budget is spent, not starved: many grabs, or few that each paused
		 * long (make test-loaded, ASan: 5 grabs of 3 ms each used the 15 ms) */
		CHECK(th.grabs > 10 || th.pause_us >= 0.5 * 0.01 * th.seen_s * 1e6);
	}
	/* share x (T + 0.1 s of starting credit), plus one grab's overshoot */
	CHECK(st.max_thread_share <= 0.01 * 1.1 + st.pause_max_us / 1e6);
	vt_stack_grab_close(&g);
	loop_free(&r);
	/* 200 grabs a second in all: over 1 s at most 200 + a burst of 20 */
	CHECK_EQ_I64(vt_stack_grab_open(&pfs, pid, &(struct vt_stack_grab_opts){ 0.5, 200 }, &g,
					&err), VT_OK);
	loop_init(&r, 0);
	double t0 = now_s();
	grab_loop(g, 1.0, GRAB_US, &r);
	double secs = now_s() - t0;
	vt_stack_grab_get_stats(g, &st);
	printf("# rate 200/s: %" PRIu64 " grabs in %.2f s, %" PRIu64 " held back\n", st.grabs, secs,
	       st.held_rate);
	CHECK(st.held_rate > 0);
	CHECK(st.grabs + st.timeouts <= (uint64_t)(200 * secs) + 21);
	CHECK(st.grabs >= (uint64_t)(150 * secs));
	vt_stack_grab_close(&g);
	loop_free(&r);
	end_target(pid);
	vt_procfs_close(&pfs);
}

struct perm_reply {
	int rc;
	char msg[VT_ERR_MSG_MAX], hint[VT_ERR_MSG_MAX];
};

/* Open a session on pid as user nobody, in a forked child. */
static void open_as_nobody(pid_t pid, struct perm_reply *out)
{
	int fds[2];
	pid_t c;

	memset(out, 0, sizeof(*out));
	out->rc = -1;
	if (pipe(fds))
		return;
	c = fork();
	if (c == 0) {
		struct perm_reply rep;
		struct vt_stack_grab *g = NULL;
		struct vt_procfs pfs;
		struct vt_err err;

		memset(&rep, 0, sizeof(rep));
		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534)) {
			rep.rc = -2;
		} else if (vt_procfs_open(&pfs, NULL, NULL, &err)) {
			rep.rc = -3;
		} else {
			rep.rc = vt_stack_grab_open(&pfs, pid, NULL, &g, &err);
			snprintf(rep.msg, sizeof(rep.msg), "%s", err.msg);
			snprintf(rep.hint, sizeof(rep.hint), "%s", err.hint);
			vt_stack_grab_close(&g);
		}
		if (write(fds[1], &rep, sizeof(rep)) != (ssize_t)sizeof(rep))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	if (c > 0 && read(fds[0], out, sizeof(*out)) != (ssize_t)sizeof(*out))
		out->rc = -4;
	close(fds[0]);
	if (c > 0)
		waitpid(c, NULL, 0);
}

/*
 * Refusals: user nobody on a root process gets VT_E_PERM saying why and
 * how to grant it; a thread another tracer holds is refused naming it.
 */
static void test_stack_grab__permission(void)
{
	struct vt_stack_grab *g = NULL;
	struct perm_reply rep;
	struct vt_procfs pfs;
	struct vt_err err;
	pid_t pid, tracer;
	int traced, stopped;

	if (!can_ptrace())
		return;
	CHECK(vt_procfs_open(&pfs, NULL, NULL, &err) == VT_OK);
	pid = spawn_target(1, false);
	open_as_nobody(pid, &rep);
	printf("# as nobody: %s: %s (hint: %s)\n", vt_code_name(rep.rc), rep.msg, rep.hint);
	CHECK_EQ_I64(rep.rc, VT_E_PERM);
	CHECK(strstr(rep.msg, "uid 0") != NULL);
	CHECK(strstr(rep.hint, "CAP_SYS_PTRACE") != NULL);
	if (access("/proc/sys/kernel/yama/ptrace_scope", F_OK) == 0)
		CHECK(strstr(rep.msg, "kernel.yama.ptrace_scope") != NULL ||
		      strstr(rep.msg, "uid") != NULL);

	/* another tracer holds the spinner */
	int sync[2];
	CHECK(pipe(sync) == 0);
	tracer = fork();
	if (tracer == 0) {
		char ok = ptrace(PTRACE_SEIZE, sh->tids[0], NULL, NULL) == 0 ? 'y' : 'n';
		if (write(sync[1], &ok, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	char ok = 0;
	CHECK(read(sync[0], &ok, 1) == 1 && ok == 'y');
	close(sync[0]);
	close(sync[1]);
	CHECK_EQ_I64(vt_stack_grab_open(&pfs, pid, NULL, &g, &err), VT_OK);
	if (g) {
		int rc = vt_stack_grab(g, sh->tids[0], GRAB_US, &smp, &err);
		printf("# traced by another: %s: %s\n", vt_code_name(rc), err.msg);
		CHECK_EQ_I64(rc, VT_E_PERM);
		CHECK(strstr(err.msg, "already traced by") != NULL);
		/* the other threads are still ours to grab (on a loaded box a spinner may
		 * wait for a CPU past GRAB_US: a timeout, which releases it; try again) */
		int tries = 0;
		do
			rc = vt_stack_grab(g, sh->tids[1], GRAB_US, &smp, &err);
		while (rc == VT_E_TIMEOUT && ++tries < 20);
		CHECK_EQ_I64(rc, VT_OK);
	}
	vt_stack_grab_close(&g);
	kill(tracer, SIGKILL);
	waitpid(tracer, NULL, 0);
	count_states(pid, &traced, &stopped);
	CHECK_EQ_I64(traced, 0);
	end_target(pid);
	/* nobody: not a process */
	CHECK_EQ_I64(vt_stack_grab_open(&pfs, getpid(), NULL, &g, &err), VT_E_USAGE);
	CHECK_EQ_I64(vt_stack_grab_open(&pfs, pid, NULL, &g, &err), VT_E_NOPROC);
	vt_procfs_close(&pfs);
}

/* The grabber child: grabs every thread in turn until it is killed. */
static void grabber_child(pid_t pid)
{
	struct vt_stack_grab *g = NULL;
	struct vt_procfs pfs;
	struct vt_err err;
	int k = 0;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (vt_procfs_open(&pfs, NULL, NULL, &err) ||
	    vt_stack_grab_open(&pfs, pid, &(struct vt_stack_grab_opts){ 0.5, 1000000 }, &g, &err))
		_exit(3);
	sh->grabber_ready = 1;
	for (;;) {
		pid_t tid = sh->tids[k++ % (nspin + 1)];

		sh->in_grab = 1;
		int rc = vt_stack_grab(g, tid, GRAB_US, &smp, &err);
		sh->in_grab = 0;
		atomic_fetch_add(&sh->grab_attempts, 1);
		if (rc == VT_OK && !smp.held)
			atomic_fetch_add(&sh->grabs, 1);
	}
}

/*
 * SIGKILL the grabber at random moments while it grabs a loaded target:
 * after each kill no thread is traced or stopped; no signal sent meanwhile
 * is lost; every thread still works; the sleeper never saw EINTR.
 */
static void test_stack_grab__sigkill_anytime(void)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int spinners = ncpu * 2 < MAX_THREADS - 2 ? (int)ncpu * 2 : MAX_THREADS - 2;
	const char *env = getenv("VT_GRAB_KILLS");
	int kills = env && atoi(env) > 0 ? atoi(env) : 200, in_grab = 0, left = 0, failed_start = 0, seen_traced = 0;
	uint64_t before[MAX_THREADS];
	unsigned seed = 12345;
	struct sender snd;
	int traced, stopped;
	pid_t pid;

	if (!can_ptrace())
		return;
	pid = spawn_target(spinners, false);
	sender_start(&snd, pid);
	double t0 = now_s();
	for (int k = 0; k < kills; k++) {
		sh->grabber_ready = 0;
		pid_t c = fork();

		if (c == 0)
			grabber_child(pid);
		double until = now_s() + 2;
		while (!sh->grabber_ready && now_s() < until)
			sched_yield();
		if (!sh->grabber_ready)
			failed_start++;
		/* a random moment 0-3 ms into its grabbing */
		struct timespec ts = { 0, (long)(rand_r(&seed) % 3000) * 1000 };
		nanosleep(&ts, NULL);
		in_grab += sh->in_grab;
		count_states(pid, &traced, &stopped);
		seen_traced += traced > 0;
		kill(c, SIGKILL);
		waitpid(c, NULL, 0);
		/* the kernel detached everything as the grabber died */
		count_states(pid, &traced, &stopped);
		if (traced || stopped) {
			left++;
			printf("#   kill %d: %d threads traced, %d stopped\n", k, traced, stopped);
		}
	}
	double secs = now_s() - t0;
	printf("# %d SIGKILLs in %.1f s, %d inside vt_stack_grab, %d with a thread seen stopped by "
	       "it just before; %" PRIu64 " grabs of %" PRIu64 " attempts (%.0f grabs/s while the "
	       "grabber ran)\n", kills, secs, in_grab, seen_traced,
	       (uint64_t)sh->grabs, (uint64_t)sh->grab_attempts, (double)sh->grabs / secs);
	CHECK_EQ_I64(failed_start, 0);
	CHECK_EQ_I64(left, 0);
	CHECK(in_grab > kills / 4);
	/* the grabber got on with it between kills: on a loaded box under ASan, 84 grabs in 200 0-3 ms windows */
	CHECK(sh->grabs >= (uint64_t)kills / 10);
	CHECK(seen_traced > 0);
	sender_check(&snd);
	rounds_snapshot(before);
	sleep_ms(100);
	CHECK(all_progressed(before));
	CHECK_EQ_U64(sh->sleeper_eintr, 0);
	count_states(pid, &traced, &stopped);
	CHECK_EQ_I64(traced, 0);
	CHECK_EQ_I64(stopped, 0);
	end_target(pid);
}

VT_TEST_MAIN(test_stack_grab__sample_unwinds,
	     test_stack_grab__signals_and_pauses, test_stack_grab__signal_delivery_stop,
	     test_stack_grab__job_control,
	     test_stack_grab__timeout_releases, test_stack_grab__budget,
	     test_stack_grab__permission, test_stack_grab__sigkill_anytime)

/*
 * inject_victim: a process to call into with ptrace, that notices any harm.
 *
 * Every thread does something a probe could disturb, and checks it:
 *
 *   sleeper   nanosleep(20 ms) in a loop: never EINTR, never short
 *   reader    read() of 8-byte records from a pipe: each in sequence, never EINTR
 *   waiter    pthread_cond_wait() for items the feeder posts: none lost
 *   signals   pause() while the feeder queues SIGRTMIN to it with sigqueue
 *             values 0, 1, 2...: the handler counts them and checks the order
 *   feeder    clock_nanosleep() on an absolute schedule: --signal-hz
 *             signals a second, a pipe record every 10 ms, an item every 5 ms
 *   churn-N   malloc/free flat out, 16 B - 64 KiB (and some 200 KiB), each
 *             block filled with a pattern that is checked before free;
 *             --churn-duty P: flat out for 1 ms, then asleep so that it
 *             churns P% of the time (the kill and stop tests need a thread
 *             in malloc often, not a core each)
 *   main      sigtimedwait() for SIGTERM/SIGINT, truth once a second
 *
 * Every thread also notes how long it was held up beyond its own rhythm
 * (the sleeper's oversleep, the feeder's lateness on its schedule, a
 * churn thread's gap between two steps, the reader's and the waiter's gap
 * beyond the feeder's period, the signals thread's gap between two
 * signals): the truth gives the longest such stall, whose thread it was,
 * and how many passed 100 ms, so tests see how long any thread stood
 * stopped (plus whatever the host's scheduling added).
 *
 * At the end the feeder stops, the program waits until every signal sent
 * was received, and the last truth line says "ok":true only if no check
 * failed and received == sent.  The truth also gives every thread's tid,
 * so tests can stop a chosen one.
 *
 * Unlike the other targets, one thread takes signals through a handler:
 * that is the point.  SIGRTMIN and SIGUSR1 are blocked everywhere else, the
 * handler only touches atomics, and the signals thread never allocates.
 *
 * --hold-kb N is a quiet mode for exact comparisons: one thread mallocs N
 * KiB in 1 KiB blocks, prints "pid N", then blocks in read() on stdin and
 * answers one-letter commands on stdout: m (its own mallinfo2: arena
 * ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost),
 * f (free all blocks but the first and last), e (set errno to 1234), E
 * (print errno), q (exit).  Self-contained: libc and libpthread only.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_CHURN	16
#define SLOTS		1024
#define SLEEP_NS	20000000L	/* the sleeper's nap */
#define PATTERN_SPAN	256		/* bytes checked at each end of a block */
#define ERRNO_MARK	1234

static struct {
	double seconds;
	const char *truth;
	int churn;
	double signal_hz;
	double churn_duty;	/* percent of the time a churn thread churns */
	long hold_kb;
} opt = {
	.seconds = 60,
	.churn = 2,
	.churn_duty = 100,
	.signal_hz = 1000,
};

static FILE *truth;
static double t0;
static atomic_int stop;
static int pipe_fd[2] = { -1, -1 };

static struct {
	atomic_int main, sleeper, reader, waiter, signals, feeder;
	atomic_int churn[MAX_CHURN];
} tids;

static struct {
	_Atomic uint64_t allocs, frees, checksum_errors;
	_Atomic int64_t live_bytes;
	_Atomic uint64_t sleeps, sleep_errors;
	_Atomic uint64_t reads, read_errors;
	_Atomic uint64_t cond_errors;
	_Atomic uint64_t signals_sent, signals_received, signal_order_errors;
	_Atomic int64_t signal_next;
	_Atomic uint64_t stall_max_us, stalls_over_100ms;
	_Atomic int stall_max_tid;
} cnt;

/* The waiter's queue: items posted by the feeder, taken one at a time. */
static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_cond = PTHREAD_COND_INITIALIZER;
static uint64_t q_items, q_posted, q_taken;

static pthread_t th_sleeper, th_reader, th_waiter, th_signals, th_feeder;
static pthread_t th_churn[MAX_CHURN];

static void die(const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", program_invocation_short_name, what, strerror(errno));
	exit(1);
}

static void check(int rc, const char *what)
{
	if (rc) {
		errno = rc;
		die(what);
	}
}

static double now(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts))
		die("clock_gettime");
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int my_tid(void)
{
	return (int)syscall(SYS_gettid);
}

/* ---- the threads ------------------------------------------------------ */

/* This thread was held up late_s beyond its rhythm (async-signal-safe). */
static void note_stall(double late_s)
{
	uint64_t us = late_s > 0 ? (uint64_t)(late_s * 1e6) : 0, max = atomic_load(&cnt.stall_max_us);

	if (us > 100000)
		atomic_fetch_add(&cnt.stalls_over_100ms, 1);
	while (us > max) {
		if (atomic_compare_exchange_weak(&cnt.stall_max_us, &max, us)) {
			atomic_store(&cnt.stall_max_tid, (int)syscall(SYS_gettid));
			break;
		}
	}
}

static void *sleeper_main(void *arg)
{
	struct timespec req = { 0, SLEEP_NS };
	double a, b;

	(void)arg;
	atomic_store(&tids.sleeper, my_tid());
	while (!atomic_load(&stop)) {
		a = now();
		if (nanosleep(&req, NULL) != 0) {
			atomic_fetch_add(&cnt.sleep_errors, 1);	/* EINTR: a restart failed */
			continue;
		}
		b = now();
		note_stall(b - a - SLEEP_NS / 1e9);
		if (b - a < SLEEP_NS / 1e9)
			atomic_fetch_add(&cnt.sleep_errors, 1);	/* woke early */
		atomic_fetch_add(&cnt.sleeps, 1);
	}
	return NULL;
}

static void *reader_main(void *arg)
{
	uint64_t rec, expect = 0;
	double last = 0, t;
	ssize_t n;

	(void)arg;
	atomic_store(&tids.reader, my_tid());
	for (;;) {
		n = read(pipe_fd[0], &rec, sizeof(rec));
		t = now();
		if (last)
			note_stall(t - last - 0.010);
		last = t;
		if (n != (ssize_t)sizeof(rec)) {
			atomic_fetch_add(&cnt.read_errors, 1);	/* EINTR or short */
			if (n == 0)
				return NULL;
			continue;
		}
		if (rec == UINT64_MAX)
			return NULL;
		if (rec != expect)
			atomic_fetch_add(&cnt.read_errors, 1);
		expect = rec + 1;
		atomic_fetch_add(&cnt.reads, 1);
	}
}

static void *waiter_main(void *arg)
{
	double last = 0;
	int rc;

	(void)arg;
	atomic_store(&tids.waiter, my_tid());
	check(pthread_mutex_lock(&q_lock), "pthread_mutex_lock");
	while (!atomic_load(&stop)) {
		while (q_items == 0 && !atomic_load(&stop)) {
			rc = pthread_cond_wait(&q_cond, &q_lock);
			if (rc)
				atomic_fetch_add(&cnt.cond_errors, 1);
		}
		if (q_items) {
			double t = now();

			if (last)
				note_stall(t - last - 0.005);
			last = t;
			q_items--;
			q_taken++;
		}
	}
	check(pthread_mutex_unlock(&q_lock), "pthread_mutex_unlock");
	return NULL;
}

/* Async-signal-safe: atomics only. */
static void on_rt(int sig, siginfo_t *si, void *uc)
{
	int64_t v = si->si_value.sival_int;

	(void)sig;
	(void)uc;
	if (si->si_code != SI_QUEUE || v != atomic_load(&cnt.signal_next))
		atomic_fetch_add(&cnt.signal_order_errors, 1);
	atomic_store(&cnt.signal_next, v + 1);
	atomic_fetch_add(&cnt.signals_received, 1);
	{
		static double last;   /* one signals thread */
		double t = now();

		if (last)
			note_stall(t - last - 1.0 / opt.signal_hz);
		last = t;
	}
}

static void on_wake(int sig)
{
	(void)sig;
}

static void *signals_main(void *arg)
{
	sigset_t set;

	(void)arg;
	atomic_store(&tids.signals, my_tid());
	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN);
	sigaddset(&set, SIGUSR1);
	check(pthread_sigmask(SIG_UNBLOCK, &set, NULL), "pthread_sigmask");
	while (!atomic_load(&stop))
		pause();
	return NULL;
}

static void timespec_add_ns(struct timespec *ts, long ns)
{
	ts->tv_nsec += ns;
	while (ts->tv_nsec >= 1000000000L) {
		ts->tv_nsec -= 1000000000L;
		ts->tv_sec++;
	}
}

static void feeder_tick(double t, double *next_rec, double *next_item, uint64_t *rec)
{
	union sigval v;

	v.sival_int = (int)atomic_load(&cnt.signals_sent);
	/* EAGAIN: the queue is full (RLIMIT_SIGPENDING): try again next tick. */
	if (pthread_sigqueue(th_signals, SIGRTMIN, v) == 0)
		atomic_fetch_add(&cnt.signals_sent, 1);
	if (t >= *next_rec) {
		if (write(pipe_fd[1], rec, sizeof(*rec)) == (ssize_t)sizeof(*rec))
			(*rec)++;
		*next_rec = t + 0.010;
	}
	if (t >= *next_item) {
		check(pthread_mutex_lock(&q_lock), "pthread_mutex_lock");
		q_items++;
		q_posted++;
		check(pthread_cond_signal(&q_cond), "pthread_cond_signal");
		check(pthread_mutex_unlock(&q_lock), "pthread_mutex_unlock");
		*next_item = t + 0.005;
	}
}

static void *feeder_main(void *arg)
{
	long period = (long)(1e9 / opt.signal_hz);
	double next_rec = 0, next_item = 0, t;
	struct timespec next;
	uint64_t rec = 0;
	int rc;

	(void)arg;
	atomic_store(&tids.feeder, my_tid());
	if (clock_gettime(CLOCK_MONOTONIC, &next))
		die("clock_gettime");
	while (!atomic_load(&stop)) {
		timespec_add_ns(&next, period);
		rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		if (rc && rc != EINTR)
			check(rc, "clock_nanosleep");
		t = now();
		note_stall(t - (next.tv_sec + next.tv_nsec / 1e9));
		feeder_tick(t, &next_rec, &next_item, &rec);
	}
	return NULL;
}

struct block {
	unsigned char *p;
	size_t size;
	unsigned seed;
};

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A pattern over the first PATTERN_SPAN bytes and, in larger blocks, the last. */
static void fill(struct block *b)
{
	size_t i, n = b->size < PATTERN_SPAN ? b->size : PATTERN_SPAN;

	for (i = 0; i < n; i++)
		b->p[i] = (unsigned char)(b->seed + i);
	for (i = 0; b->size >= 2 * PATTERN_SPAN && i < PATTERN_SPAN; i++)
		b->p[b->size - 1 - i] = (unsigned char)(b->seed ^ i);
}

static bool intact(const struct block *b)
{
	size_t i, n = b->size < PATTERN_SPAN ? b->size : PATTERN_SPAN;

	for (i = 0; i < n; i++)
		if (b->p[i] != (unsigned char)(b->seed + i))
			return false;
	for (i = 0; b->size >= 2 * PATTERN_SPAN && i < PATTERN_SPAN; i++)
		if (b->p[b->size - 1 - i] != (unsigned char)(b->seed ^ i))
			return false;
	return true;
}

static void churn_step(struct block *slots, uint64_t *rng)
{
	struct block *b = &slots[xorshift(rng) % SLOTS];
	uint64_t r = xorshift(rng);

	if (b->p) {
		if (!intact(b))
			atomic_fetch_add(&cnt.checksum_errors, 1);
		free(b->p);
		atomic_fetch_add(&cnt.frees, 1);
		atomic_fetch_sub(&cnt.live_bytes, (int64_t)b->size);
		b->p = NULL;
		return;
	}
	b->size = (r % 64 == 0) ? 200 * 1024 : 16 + (size_t)(r >> 8) % (64 * 1024);
	b->p = malloc(b->size);
	if (!b->p)
		die("malloc");
	b->seed = (unsigned)(r >> 32);
	fill(b);
	atomic_fetch_add(&cnt.allocs, 1);
	atomic_fetch_add(&cnt.live_bytes, (int64_t)b->size);
}

static void *churn_main(void *arg)
{
	int idx = (int)(intptr_t)arg;
	uint64_t rng = 0x9e3779b97f4a7c15ULL * (uint64_t)(idx + 1);
	struct block *slots = calloc(SLOTS, sizeof(*slots));
	size_t i;

	if (!slots)
		die("calloc");
	atomic_store(&tids.churn[idx], my_tid());
	double last = now(), t, burst = last;

	while (!atomic_load(&stop)) {
		churn_step(slots, &rng);
		t = now();
		note_stall(t - last);
		last = t;
		if (opt.churn_duty < 100 && t - burst >= 0.001) {
			/* asleep for the rest of the duty cycle; a stop while
			 * asleep shows as oversleep, not as the sleep itself */
			double want = fmin((t - burst) * (100 - opt.churn_duty) / opt.churn_duty, 0.05);
			struct timespec req = { 0, (long)(want * 1e9) };

			while (nanosleep(&req, &req) != 0 && errno == EINTR)
				;
			t = now();
			note_stall(t - last - want);
			last = burst = t;
		}
	}
	for (i = 0; i < SLOTS; i++) {
		if (!slots[i].p)
			continue;
		if (!intact(&slots[i]))
			atomic_fetch_add(&cnt.checksum_errors, 1);
		free(slots[i].p);
		atomic_fetch_add(&cnt.frees, 1);
		atomic_fetch_sub(&cnt.live_bytes, (int64_t)slots[i].size);
	}
	free(slots);
	return NULL;
}

/* ---- truth -------------------------------------------------------------- */

static uint64_t errors_total(void)
{
	return atomic_load(&cnt.checksum_errors) + atomic_load(&cnt.sleep_errors) +
	       atomic_load(&cnt.read_errors) + atomic_load(&cnt.cond_errors) +
	       atomic_load(&cnt.signal_order_errors);
}

static void truth_write(const char *phase)
{
	uint64_t sent = atomic_load(&cnt.signals_sent), got = atomic_load(&cnt.signals_received);
	uint64_t posted, taken, items;
	int i;

	if (!truth)
		return;
	check(pthread_mutex_lock(&q_lock), "pthread_mutex_lock");
	posted = q_posted;
	taken = q_taken;
	items = q_items;
	check(pthread_mutex_unlock(&q_lock), "pthread_mutex_unlock");
	fprintf(truth, "{\"t\":%.3f,\"phase\":\"%s\",\"allocs\":%" PRIu64 ",\"frees\":%" PRIu64
		",\"live_bytes\":%" PRId64 ",\"checksum_errors\":%" PRIu64 ",\"sleeps\":%" PRIu64
		",\"sleep_errors\":%" PRIu64 ",\"reads\":%" PRIu64 ",\"read_errors\":%" PRIu64
		",\"cond_posted\":%" PRIu64 ",\"cond_taken\":%" PRIu64 ",\"cond_queued\":%" PRIu64
		",\"cond_errors\":%" PRIu64 ",\"signals_sent\":%" PRIu64
		",\"signals_received\":%" PRIu64 ",\"signal_order_errors\":%" PRIu64
		",\"errors\":%" PRIu64 ",\"stall_max_ms\":%.1f,\"stall_max_tid\":%d"
		",\"stalls_over_100ms\":%" PRIu64,
		now() - t0, phase, atomic_load(&cnt.allocs), atomic_load(&cnt.frees),
		atomic_load(&cnt.live_bytes), atomic_load(&cnt.checksum_errors),
		atomic_load(&cnt.sleeps), atomic_load(&cnt.sleep_errors), atomic_load(&cnt.reads),
		atomic_load(&cnt.read_errors), posted, taken, items, atomic_load(&cnt.cond_errors),
		sent, got, atomic_load(&cnt.signal_order_errors), errors_total(),
		atomic_load(&cnt.stall_max_us) / 1e3, atomic_load(&cnt.stall_max_tid),
		atomic_load(&cnt.stalls_over_100ms));
	if (!strcmp(phase, "exit"))
		fprintf(truth, ",\"ok\":%s", errors_total() == 0 && sent == got &&
			posted == taken + items ? "true" : "false");
	fprintf(truth, ",\"tid_main\":%d,\"tid_sleeper\":%d,\"tid_reader\":%d,\"tid_waiter\":%d,"
		"\"tid_signals\":%d,\"tid_feeder\":%d,\"tid_churn\":[", atomic_load(&tids.main),
		atomic_load(&tids.sleeper), atomic_load(&tids.reader), atomic_load(&tids.waiter),
		atomic_load(&tids.signals), atomic_load(&tids.feeder));
	for (i = 0; i < opt.churn; i++)
		fprintf(truth, "%s%d", i ? "," : "", atomic_load(&tids.churn[i]));
	fprintf(truth, "]}\n");
	if (fflush(truth))
		die("write truth file");
}

/* ---- the busy mode ------------------------------------------------------ */

static void start_threads(void)
{
	struct sigaction sa;
	char name[32];
	int i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_rt;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	if (sigaction(SIGRTMIN, &sa, NULL))
		die("sigaction");
	sa.sa_handler = on_wake;
	sa.sa_flags = 0;
	if (sigaction(SIGUSR1, &sa, NULL))
		die("sigaction");
	if (pipe(pipe_fd))
		die("pipe");
	check(pthread_create(&th_sleeper, NULL, sleeper_main, NULL), "pthread_create");
	check(pthread_create(&th_reader, NULL, reader_main, NULL), "pthread_create");
	check(pthread_create(&th_waiter, NULL, waiter_main, NULL), "pthread_create");
	check(pthread_create(&th_signals, NULL, signals_main, NULL), "pthread_create");
	check(pthread_create(&th_feeder, NULL, feeder_main, NULL), "pthread_create");
	pthread_setname_np(th_sleeper, "sleeper");
	pthread_setname_np(th_reader, "reader");
	pthread_setname_np(th_waiter, "waiter");
	pthread_setname_np(th_signals, "signals");
	pthread_setname_np(th_feeder, "feeder");
	for (i = 0; i < opt.churn; i++) {
		check(pthread_create(&th_churn[i], NULL, churn_main, (void *)(intptr_t)i),
		      "pthread_create");
		snprintf(name, sizeof(name), "churn-%d", i);
		name[15] = '\0';	/* the kernel keeps 15 characters */
		pthread_setname_np(th_churn[i], name);
	}
	/* Every thread records its tid first thing: wait for them. */
	while (!atomic_load(&tids.sleeper) || !atomic_load(&tids.reader) ||
	       !atomic_load(&tids.waiter) || !atomic_load(&tids.signals) ||
	       !atomic_load(&tids.feeder) || (opt.churn && !atomic_load(&tids.churn[opt.churn - 1])))
		usleep(1000);
}

static void stop_threads(void)
{
	uint64_t end = UINT64_MAX;
	double until;
	int i;

	atomic_store(&stop, 1);
	check(pthread_join(th_feeder, NULL), "pthread_join");
	/* Every signal sent must arrive: wait for the queue to drain (a host
	 * loaded with sanitizer builds and fuzzers can hold a thread for seconds). */
	until = now() + 10;
	while (atomic_load(&cnt.signals_received) < atomic_load(&cnt.signals_sent) && now() < until)
		usleep(1000);
	check(pthread_kill(th_signals, SIGUSR1), "pthread_kill");
	if (write(pipe_fd[1], &end, sizeof(end)) != (ssize_t)sizeof(end))
		die("write");
	check(pthread_mutex_lock(&q_lock), "pthread_mutex_lock");
	check(pthread_cond_broadcast(&q_cond), "pthread_cond_broadcast");
	check(pthread_mutex_unlock(&q_lock), "pthread_mutex_unlock");
	check(pthread_join(th_sleeper, NULL), "pthread_join");
	check(pthread_join(th_reader, NULL), "pthread_join");
	check(pthread_join(th_waiter, NULL), "pthread_join");
	check(pthread_join(th_signals, NULL), "pthread_join");
	for (i = 0; i < opt.churn; i++)
		check(pthread_join(th_churn[i], NULL), "pthread_join");
}

static int run_busy(const sigset_t *waited)
{
	double end = t0 + opt.seconds, next = t0, left;
	struct timespec ts;
	int sig;

	start_threads();
	for (;;) {
		double t = now();

		if (t >= next) {
			truth_write("running");
			next = t + 1;
		}
		if (t >= end)
			break;
		left = (next < end ? next : end) - t;
		ts.tv_sec = (time_t)left;
		ts.tv_nsec = (long)((left - ts.tv_sec) * 1e9);
		sig = sigtimedwait(waited, NULL, &ts);
		if (sig > 0)
			break;
		if (sig < 0 && errno != EAGAIN && errno != EINTR)
			die("sigtimedwait");
	}
	stop_threads();
	truth_write("exit");
	return 0;
}

/* ---- the quiet mode ------------------------------------------------------ */

static void say(const char *text)
{
	size_t len = strlen(text);

	if (write(1, text, len) != (ssize_t)len)
		die("write stdout");
}

static void report_mallinfo(void)
{
	struct mallinfo2 mi = mallinfo2();
	char line[320];

	snprintf(line, sizeof(line), "mallinfo2 %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu\n",
		 mi.arena, mi.ordblks, mi.smblks, mi.hblks, mi.hblkhd, mi.usmblks, mi.fsmblks,
		 mi.uordblks, mi.fordblks, mi.keepcost);
	say(line);
}

static void on_alarm(int sig)
{
	(void)sig;
	atomic_store(&stop, 1);
}

static int run_quiet(const sigset_t *waited)
{
	long i, n = opt.hold_kb;
	unsigned char **blocks = calloc((size_t)n, sizeof(*blocks));
	struct sigaction sa;
	char cmd[64], line[64];
	ssize_t got, k;
	int e;

	if (!blocks)
		die("calloc");
	for (i = 0; i < n; i++) {
		blocks[i] = malloc(1024);
		if (!blocks[i])
			die("malloc");
		memset(blocks[i], (int)i, 1024);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;   /* no SA_RESTART: read() returns and we leave */
	if (sigaction(SIGALRM, &sa, NULL) || sigaction(SIGTERM, &sa, NULL) ||
	    sigaction(SIGINT, &sa, NULL))
		die("sigaction");
	/* One thread: SIGTERM/SIGINT interrupt its read() through the handler. */
	check(pthread_sigmask(SIG_UNBLOCK, waited, NULL), "pthread_sigmask");
	alarm(opt.seconds > 0 ? (unsigned)opt.seconds + 1 : 1);
	truth_write("holding");
	while (!atomic_load(&stop)) {
		got = read(0, cmd, sizeof(cmd));
		if (got <= 0)
			break;
		for (k = 0; k < got; k++) {
			switch (cmd[k]) {
			case 'm':
				report_mallinfo();
				break;
			case 'f':
				for (i = 1; i + 1 < n; i++) {
					free(blocks[i]);
					blocks[i] = NULL;
				}
				say("freed\n");
				break;
			case 'e':
				errno = ERRNO_MARK;
				say("ok\n");
				break;
			case 'E':
				e = errno;
				snprintf(line, sizeof(line), "errno %d\n", e);
				say(line);
				break;
			case 'q':
				atomic_store(&stop, 1);
				break;
			}
		}
	}
	for (i = 0; i < n; i++)
		free(blocks[i]);
	free(blocks);
	truth_write("exit");
	return 0;
}

/* ---- options, main ------------------------------------------------------- */

static void usage(FILE *out, int status)
{
	fprintf(out,
		"usage: inject_victim [options]\n"
		"  --seconds N        exit after N seconds (default 60)\n"
		"  --truth FILE       append ground truth as JSON lines\n"
		"  --churn-threads N  malloc/free threads (default 2, max %d)\n"
		"  --churn-duty P     percent of the time each churns (default 100: flat out)\n"
		"  --signal-hz N      SIGRTMIN signals queued per second (default 1000)\n"
		"  --hold-kb N        quiet mode: hold N KiB, answer commands on stdin\n",
		MAX_CHURN);
	exit(status);
}

static double parse_num(const char *name, const char *arg, double lo, double hi)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !(v >= lo && v <= hi)) {
		fprintf(stderr, "%s: bad value '%s' for --%s, expected %g..%g\n",
			program_invocation_short_name, arg, name, lo, hi);
		exit(64);
	}
	return v;
}

static void parse_options(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "truth", required_argument, NULL, 't' },
		{ "churn-threads", required_argument, NULL, 'c' },
		{ "churn-duty", required_argument, NULL, 'd' },
		{ "signal-hz", required_argument, NULL, 'z' },
		{ "hold-kb", required_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c, i = 0;

	while ((c = getopt_long(argc, argv, "", longopts, &i)) != -1) {
		const char *name = longopts[i].name;

		switch (c) {
		case 's':
			opt.seconds = parse_num(name, optarg, 0, 1e7);
			break;
		case 't':
			opt.truth = optarg;
			break;
		case 'c':
			opt.churn = (int)parse_num(name, optarg, 0, MAX_CHURN);
			break;
		case 'd':
			opt.churn_duty = parse_num(name, optarg, 1, 100);
			break;
		case 'z':
			opt.signal_hz = parse_num(name, optarg, 1, 20000);
			break;
		case 'k':
			opt.hold_kb = (long)parse_num(name, optarg, 1, 1 << 20);
			break;
		case 'h':
			usage(stdout, 0);
			break;
		default:
			usage(stderr, 64);
		}
	}
	if (optind < argc)
		usage(stderr, 64);
}

int main(int argc, char **argv)
{
	sigset_t waited;
	char line[32];
	int rc;

	parse_options(argc, argv);
	/* SIGTERM/SIGINT for main's sigtimedwait; SIGRTMIN and SIGUSR1 for the signals thread. */
	sigemptyset(&waited);
	sigaddset(&waited, SIGTERM);
	sigaddset(&waited, SIGINT);
	{
		sigset_t blocked = waited;

		if (!opt.hold_kb) {
			sigaddset(&blocked, SIGRTMIN);
			sigaddset(&blocked, SIGUSR1);
		}
		check(pthread_sigmask(SIG_BLOCK, &blocked, NULL), "pthread_sigmask");
	}
	if (opt.truth && !(truth = fopen(opt.truth, "a")))
		die(opt.truth);
	t0 = now();
	atomic_store(&tids.main, my_tid());
	snprintf(line, sizeof(line), "pid %d\n", (int)getpid());
	say(line);
	if (opt.hold_kb) {
		rc = run_quiet(&waited);
	} else {
		rc = run_busy(&waited);
	}
	if (truth && fclose(truth))
		die("close truth file");
	return rc;
}

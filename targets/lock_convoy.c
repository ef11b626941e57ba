/*
 * lock_convoy: a pool of workers taking turns on one contended mutex.
 *
 * --threads workers, named "worker-0" .., loop: lock one shared pthread
 * mutex, compute for --hold-us microseconds, unlock, compute for
 * --outside-us, then nap for --nap-us as a poll loop waits between
 * items.  The workers ask for more lock time than there is, so the lock
 * is always held: at any instant one worker computes and most others
 * sleep in futex_wait until their turn.  The workers show near-equal
 * CPU, a process total near one core however many cores there are, and
 * high voluntary context switch rates (field report 000, the cost of
 * MALLOC_ARENA_MAX=2).
 *
 * The nap matters: a glibc mutex is not fair, and a worker that came
 * straight back would usually take the lock again before the waiter it
 * woke got to run.  Napping hands the lock to that waiter, which gives
 * the turn-taking of a real convoy.  --nap-us 0 shows the unfair case.
 *
 * The truth gives the lock acquisitions in total and per worker, in
 * thread order (worker-N is acquisitions[N]).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS	256

static struct {
	double seconds;
	const char *truth;
	int threads;
	double hold_us;
	double outside_us;
	double nap_us;
} opt = {
	.seconds = 60,
	.threads = 4,
	.hold_us = 100,
	.outside_us = 10,
	.nap_us = 50,
};

static pthread_t workers[MAX_THREADS];
static _Atomic uint64_t acquisitions[MAX_THREADS];
static pthread_mutex_t convoy_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *truth;
static double t0;
static sigset_t waited;
static atomic_int stop;
static _Atomic uint64_t sink;	/* keeps the computation alive */

static void die(const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", program_invocation_short_name, what,
		strerror(errno));
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

/* Compute (a hash chain: pure CPU, never sleeps) for 'us' microseconds. */
static uint64_t compute(uint64_t h, double us)
{
	double until = now() + us / 1e6;
	int i;

	do {
		for (i = 0; i < 64; i++)
			h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ULL + i;
	} while (now() < until);
	return h;
}

/* Sleep --nap-us; the timer slack (50 us by default) comes on top. */
static void nap(void)
{
	struct timespec ts = { 0, (long)(opt.nap_us * 1000) };
	int rc;

	if (!ts.tv_nsec)
		return;
	rc = clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
	if (rc && rc != EINTR)
		check(rc, "clock_nanosleep");
}

static void *worker_main(void *arg)
{
	_Atomic uint64_t *count = arg;
	uint64_t h = 1;

	while (!atomic_load(&stop)) {
		check(pthread_mutex_lock(&convoy_lock), "pthread_mutex_lock");
		h = compute(h, opt.hold_us);
		atomic_fetch_add(count, 1);
		check(pthread_mutex_unlock(&convoy_lock),
		      "pthread_mutex_unlock");
		h = compute(h, opt.outside_us);
		nap();
	}
	atomic_fetch_xor(&sink, h);
	return NULL;
}

static void start_workers(void)
{
	int i;

	for (i = 0; i < opt.threads; i++) {
		char name[32];

		check(pthread_create(&workers[i], NULL, worker_main,
				     &acquisitions[i]), "pthread_create");
		snprintf(name, sizeof(name), "worker-%d", i);
		name[15] = '\0';	/* the kernel keeps 15 characters */
		check(pthread_setname_np(workers[i], name),
		      "pthread_setname_np");
	}
}

static void stop_workers(void)
{
	int i;

	atomic_store(&stop, 1);
	for (i = 0; i < opt.threads; i++)
		check(pthread_join(workers[i], NULL), "pthread_join");
}

static void truth_write(const char *phase)
{
	uint64_t total = 0;
	int i;

	if (!truth)
		return;
	fprintf(truth, "{\"t\":%.3f,\"phase\":\"%s\",\"threads\":%d,"
		"\"hold_us\":%.1f,\"outside_us\":%.1f,\"nap_us\":%.1f,"
		"\"acquisitions\":[", now() - t0, phase, opt.threads,
		opt.hold_us, opt.outside_us, opt.nap_us);
	for (i = 0; i < opt.threads; i++) {
		uint64_t n = atomic_load(&acquisitions[i]);

		fprintf(truth, "%s%" PRIu64, i ? "," : "", n);
		total += n;
	}
	fprintf(truth, "],\"lock_acquisitions\":%" PRIu64 "}\n", total);
	if (fflush(truth))
		die("write truth file");
}

/* Wait for one of the signals in 'waited' until 'until'; 0 on timeout. */
static int wait_signal(double until)
{
	double left = until - now();
	struct timespec ts;
	int sig;

	if (left < 0)
		left = 0;
	ts.tv_sec = (time_t)left;
	ts.tv_nsec = (long)((left - ts.tv_sec) * 1e9);
	sig = sigtimedwait(&waited, NULL, &ts);
	if (sig < 0 && errno != EAGAIN && errno != EINTR)
		die("sigtimedwait");
	return sig < 0 ? 0 : sig;
}

static void run(void)
{
	double end = t0 + opt.seconds, next = t0;

	for (;;) {
		double t = now();

		if (t >= next) {
			truth_write("running");
			next = t + 1;
		}
		if (t >= end || wait_signal(next < end ? next : end))
			return;
	}
}

static void usage(FILE *out, int status)
{
	fprintf(out,
		"usage: lock_convoy [options]\n"
		"  --seconds N     exit after N seconds (default 60)\n"
		"  --truth FILE    append ground truth as JSON lines\n"
		"  --threads N     workers sharing the lock (default 4, max 256)\n"
		"  --hold-us N     computation inside the lock (default 100)\n"
		"  --outside-us N  computation outside the lock (default 10)\n"
		"  --nap-us N      then sleep N us before the next turn (default 50)\n");
	exit(status);
}

static double parse_num(const char *name, const char *arg, double lo,
			double hi)
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
		{ "threads", required_argument, NULL, 'n' },
		{ "hold-us", required_argument, NULL, 'H' },
		{ "outside-us", required_argument, NULL, 'o' },
		{ "nap-us", required_argument, NULL, 'N' },
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
		case 'n':
			opt.threads = parse_num(name, optarg, 1, MAX_THREADS);
			break;
		case 'H':
			opt.hold_us = parse_num(name, optarg, 0, 1e6);
			break;
		case 'o':
			opt.outside_us = parse_num(name, optarg, 0, 1e6);
			break;
		case 'N':
			opt.nap_us = parse_num(name, optarg, 0, 999999);
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

/* Blocked here, inherited by every thread, taken by sigtimedwait(). */
static void block_signals(void)
{
	if (sigemptyset(&waited) || sigaddset(&waited, SIGTERM) ||
	    sigaddset(&waited, SIGINT))
		die("sigaddset");
	check(pthread_sigmask(SIG_BLOCK, &waited, NULL), "pthread_sigmask");
}

int main(int argc, char **argv)
{
	parse_options(argc, argv);
	block_signals();
	if (opt.truth && !(truth = fopen(opt.truth, "a")))
		die(opt.truth);
	t0 = now();
	printf("pid %d\n", (int)getpid());
	if (fflush(stdout))
		die("stdout");
	start_workers();
	run();
	stop_workers();
	truth_write("exit");
	if (truth && fclose(truth))
		die("close truth file");
	return 0;
}

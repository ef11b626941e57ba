/*
 * core_contention: more CPU-bound threads than cores, and no locks.
 *
 * --threads threads (default twice the CPUs we may run on), named
 * "spin-0" .., compute without ever blocking.  Every thread is always
 * runnable, so the scheduler has to preempt them to share the cores:
 * nonvoluntary context switches far outnumber voluntary ones, each thread
 * gets about ncpu/threads of a core, and the process as a whole uses
 * every core.  That is the signature that tells core contention apart
 * from a lock convoy (which sleeps voluntarily on a futex).
 *
 * The truth gives the thread count, the CPUs available (sched_getaffinity)
 * and how many rounds of computation each thread has done.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS	1024

static struct {
	double seconds;
	const char *truth;
	int threads;
} opt = {
	.seconds = 60,
};

static pthread_t spinners[MAX_THREADS];
static _Atomic uint64_t rounds[MAX_THREADS];
static int ncpu;
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

static int usable_cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		die("sched_getaffinity");
	return CPU_COUNT(&set);
}

/* One round is 4096 steps of a hash chain: pure CPU, no memory traffic. */
static void *spinner_main(void *arg)
{
	_Atomic uint64_t *count = arg;
	uint64_t h = 1;
	int i;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		for (i = 0; i < 4096; i++)
			h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ULL + i;
		atomic_fetch_add_explicit(count, 1, memory_order_relaxed);
	}
	atomic_fetch_xor(&sink, h);
	return NULL;
}

static void start_spinners(void)
{
	int i;

	for (i = 0; i < opt.threads; i++) {
		char name[32];

		check(pthread_create(&spinners[i], NULL, spinner_main,
				     &rounds[i]), "pthread_create");
		snprintf(name, sizeof(name), "spin-%d", i);
		name[15] = '\0';	/* the kernel keeps 15 characters */
		check(pthread_setname_np(spinners[i], name),
		      "pthread_setname_np");
	}
}

static void stop_spinners(void)
{
	int i;

	atomic_store(&stop, 1);
	for (i = 0; i < opt.threads; i++)
		check(pthread_join(spinners[i], NULL), "pthread_join");
}

static void truth_write(const char *phase)
{
	int i;

	if (!truth)
		return;
	fprintf(truth, "{\"t\":%.3f,\"phase\":\"%s\",\"threads\":%d,"
		"\"ncpu\":%d,\"rounds\":[", now() - t0, phase, opt.threads,
		ncpu);
	for (i = 0; i < opt.threads; i++)
		fprintf(truth, "%s%" PRIu64, i ? "," : "",
			atomic_load(&rounds[i]));
	fprintf(truth, "]}\n");
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
		"usage: core_contention [options]\n"
		"  --seconds N   exit after N seconds (default 60)\n"
		"  --truth FILE  append ground truth as JSON lines\n"
		"  --threads N   spinning threads (default 2 x usable CPUs)\n");
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
	ncpu = usable_cpus();
	if (!opt.threads)
		opt.threads = 2 * ncpu < MAX_THREADS ? 2 * ncpu : MAX_THREADS;
	block_signals();
	if (opt.truth && !(truth = fopen(opt.truth, "a")))
		die(opt.truth);
	t0 = now();
	printf("pid %d\n", (int)getpid());
	if (fflush(stdout))
		die("stdout");
	start_spinners();
	run();
	stop_spinners();
	truth_write("exit");
	if (truth && fclose(truth))
		die("close truth file");
	return 0;
}

/*
 * load_change: idle first, then busy, so that averages since start lie.
 *
 * For --idle-seconds every thread sleeps.  Then --busy-threads threads,
 * named "burn-0" .., compute without pause until exit.  ps's %CPU is CPU
 * time divided by time since start, so right after the change it reads
 * far below the current rate and only creeps towards it (field report
 * 002); a rate from two samples shows the change at once.  The burners
 * exist from the start, blocked on a condition variable, so the thread
 * count does not change with the load.
 *
 * The truth gives the phase ("idle", then "busy") and the time the busy
 * phase began.  While busy the process uses busy_threads cores, as far as
 * the machine has them.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
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
	double idle_seconds;
	int busy_threads;
} opt = {
	.seconds = 60,
	.idle_seconds = 10,
	.busy_threads = 1,
};

static pthread_t burners[MAX_THREADS];
static pthread_mutex_t phase_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t phase_cond = PTHREAD_COND_INITIALIZER;
static atomic_int busy;
static atomic_int stop;
static double busy_since = -1;
static FILE *truth;
static double t0;
static sigset_t waited;
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

/* Block until the busy phase (or the end), then compute until the end. */
static void *burner_main(void *arg)
{
	uint64_t h = 1;
	int i;

	(void)arg;
	check(pthread_mutex_lock(&phase_lock), "pthread_mutex_lock");
	while (!atomic_load(&busy) && !atomic_load(&stop))
		check(pthread_cond_wait(&phase_cond, &phase_lock),
		      "pthread_cond_wait");
	check(pthread_mutex_unlock(&phase_lock), "pthread_mutex_unlock");
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		for (i = 0; i < 4096; i++)
			h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ULL + i;
	atomic_fetch_xor(&sink, h);
	return NULL;
}

static void start_burners(void)
{
	int i;

	for (i = 0; i < opt.busy_threads; i++) {
		char name[32];

		check(pthread_create(&burners[i], NULL, burner_main, NULL),
		      "pthread_create");
		snprintf(name, sizeof(name), "burn-%d", i);
		name[15] = '\0';	/* the kernel keeps 15 characters */
		check(pthread_setname_np(burners[i], name),
		      "pthread_setname_np");
	}
}

/* Set 'flag' and wake every burner to look at it. */
static void announce(atomic_int *flag)
{
	check(pthread_mutex_lock(&phase_lock), "pthread_mutex_lock");
	atomic_store(flag, 1);
	check(pthread_cond_broadcast(&phase_cond), "pthread_cond_broadcast");
	check(pthread_mutex_unlock(&phase_lock), "pthread_mutex_unlock");
}

static void stop_burners(void)
{
	int i;

	announce(&stop);
	for (i = 0; i < opt.busy_threads; i++)
		check(pthread_join(burners[i], NULL), "pthread_join");
}

static void truth_write(const char *phase)
{
	char since[32] = "null";

	if (!truth)
		return;
	if (busy_since >= 0)
		snprintf(since, sizeof(since), "%.3f", busy_since);
	if (!phase)
		phase = busy_since >= 0 ? "busy" : "idle";
	fprintf(truth, "{\"t\":%.3f,\"phase\":\"%s\",\"idle_seconds\":%.3f,"
		"\"busy_threads\":%d,\"busy_since_t\":%s}\n", now() - t0,
		phase, opt.idle_seconds, opt.busy_threads, since);
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
	double change = t0 + opt.idle_seconds;

	for (;;) {
		double t = now(), until;

		if (t >= change && busy_since < 0) {
			busy_since = t - t0;
			announce(&busy);
			next = t;	/* report it at once */
		}
		if (t >= next) {
			truth_write(NULL);
			next = t + 1;
		}
		if (t >= end)
			return;
		until = next < end ? next : end;
		if (busy_since < 0 && change < until)
			until = change;
		if (wait_signal(until))
			return;
	}
}

static void usage(FILE *out, int status)
{
	fprintf(out,
		"usage: load_change [options]\n"
		"  --seconds N       exit after N seconds (default 60)\n"
		"  --truth FILE      append ground truth as JSON lines\n"
		"  --idle-seconds N  sleep for N seconds first (default 10)\n"
		"  --busy-threads N  then burn CPU on N threads (default 1)\n");
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
		{ "idle-seconds", required_argument, NULL, 'i' },
		{ "busy-threads", required_argument, NULL, 'n' },
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
		case 'i':
			opt.idle_seconds = parse_num(name, optarg, 0, 1e7);
			break;
		case 'n':
			opt.busy_threads = parse_num(name, optarg, 1,
						     MAX_THREADS);
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
	start_burners();
	run();
	stop_burners();
	truth_write("exit");
	if (truth && fclose(truth))
		die("close truth file");
	return 0;
}

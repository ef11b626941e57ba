/*
 * busy_poll: a thread that wakes thousands of times a second for nothing.
 *
 * One thread named "poller" wakes --hz times a second on an absolute
 * schedule, either in clock_nanosleep() or in ppoll() with a timeout on
 * an eventfd nobody writes (--mode), checks a queue that is always empty
 * and goes back to sleep.  --threads more threads, "idle-0" .., block on
 * a condition variable for the whole run.  The poller uses little CPU
 * per wakeup but shows a voluntary context switch rate equal to --hz:
 * the busy-poll signature, with no useful work behind it.
 *
 * The truth gives the configured rate, the wakeups counted so far and the
 * rate the program itself measured over the last interval.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS	1024

static struct {
	double seconds;
	const char *truth;
	double hz;
	int use_ppoll;
	int threads;
} opt = {
	.seconds = 60,
	.hz = 2000,
	.threads = 2,
};

/* The work queue the poller watches; nothing is ever put on it. */
static struct {
	pthread_mutex_t lock;
	int len;
} queue = { PTHREAD_MUTEX_INITIALIZER, 0 };

static pthread_t poller;
static pthread_t idlers[MAX_THREADS];
static pthread_mutex_t idle_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle_cond = PTHREAD_COND_INITIALIZER;
static int event_fd = -1;
static FILE *truth;
static double t0;
static sigset_t waited;
static atomic_int stop;
static _Atomic uint64_t wakeups;

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

static void timespec_add_ns(struct timespec *ts, long ns)
{
	ts->tv_nsec += ns;
	while (ts->tv_nsec >= 1000000000L) {
		ts->tv_nsec -= 1000000000L;
		ts->tv_sec++;
	}
}

static long timespec_diff_ns(const struct timespec *a,
			     const struct timespec *b)
{
	return (a->tv_sec - b->tv_sec) * 1000000000L + a->tv_nsec - b->tv_nsec;
}

/* Sleep until the absolute CLOCK_MONOTONIC time 'at'. */
static void sleep_until(const struct timespec *at)
{
	struct timespec cur, left = { 0, 0 };
	struct pollfd pfd = { .fd = event_fd, .events = POLLIN };
	long ns;
	int rc;

	if (!opt.use_ppoll) {
		rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, at, NULL);
		if (rc && rc != EINTR)
			check(rc, "clock_nanosleep");
		return;
	}
	if (clock_gettime(CLOCK_MONOTONIC, &cur))
		die("clock_gettime");
	ns = timespec_diff_ns(at, &cur);
	if (ns > 0)
		timespec_add_ns(&left, ns);
	if (ppoll(&pfd, 1, &left, NULL) < 0 && errno != EINTR)
		die("ppoll");
}

/* The poller's whole job: look at a queue that is always empty. */
static void check_queue(void)
{
	check(pthread_mutex_lock(&queue.lock), "pthread_mutex_lock");
	if (queue.len)
		queue.len--;
	check(pthread_mutex_unlock(&queue.lock), "pthread_mutex_unlock");
}

static void *poller_main(void *arg)
{
	long period = (long)(1e9 / opt.hz);
	struct timespec next, cur;

	(void)arg;
	if (clock_gettime(CLOCK_MONOTONIC, &next))
		die("clock_gettime");
	while (!atomic_load(&stop)) {
		timespec_add_ns(&next, period);
		sleep_until(&next);
		atomic_fetch_add(&wakeups, 1);
		check_queue();
		if (clock_gettime(CLOCK_MONOTONIC, &cur))
			die("clock_gettime");
		/* Fallen more than a period behind: skip, do not burst. */
		if (timespec_diff_ns(&cur, &next) > period)
			next = cur;
	}
	return NULL;
}

static void *idler_main(void *arg)
{
	(void)arg;
	check(pthread_mutex_lock(&idle_lock), "pthread_mutex_lock");
	while (!atomic_load(&stop))
		check(pthread_cond_wait(&idle_cond, &idle_lock),
		      "pthread_cond_wait");
	check(pthread_mutex_unlock(&idle_lock), "pthread_mutex_unlock");
	return NULL;
}

static void start_threads(void)
{
	int i;

	if (opt.use_ppoll) {
		event_fd = eventfd(0, EFD_CLOEXEC);
		if (event_fd < 0)
			die("eventfd");
	}
	check(pthread_create(&poller, NULL, poller_main, NULL),
	      "pthread_create");
	check(pthread_setname_np(poller, "poller"), "pthread_setname_np");
	for (i = 0; i < opt.threads; i++) {
		char name[32];

		check(pthread_create(&idlers[i], NULL, idler_main, NULL),
		      "pthread_create");
		snprintf(name, sizeof(name), "idle-%d", i);
		name[15] = '\0';	/* the kernel keeps 15 characters */
		check(pthread_setname_np(idlers[i], name),
		      "pthread_setname_np");
	}
}

static void stop_threads(void)
{
	int i;

	check(pthread_mutex_lock(&idle_lock), "pthread_mutex_lock");
	atomic_store(&stop, 1);
	check(pthread_cond_broadcast(&idle_cond), "pthread_cond_broadcast");
	check(pthread_mutex_unlock(&idle_lock), "pthread_mutex_unlock");
	check(pthread_join(poller, NULL), "pthread_join");
	for (i = 0; i < opt.threads; i++)
		check(pthread_join(idlers[i], NULL), "pthread_join");
	if (event_fd >= 0 && close(event_fd))
		die("close");
}

/* Report the wakeups and their rate since the previous report. */
static void truth_write(const char *phase)
{
	static double last_t;
	static uint64_t last_n;
	double t = now() - t0;
	uint64_t n = atomic_load(&wakeups);
	double rate = t > last_t ? (n - last_n) / (t - last_t) : 0;

	last_t = t;
	last_n = n;
	if (!truth)
		return;
	fprintf(truth, "{\"t\":%.3f,\"phase\":\"%s\",\"hz\":%.1f,"
		"\"mode\":\"%s\",\"idle_threads\":%d,\"wakeups\":%" PRIu64 ","
		"\"wakeups_per_s\":%.1f}\n", t, phase, opt.hz,
		opt.use_ppoll ? "ppoll" : "nanosleep", opt.threads, n,
		rate);
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
			truth_write("polling");
			next = t + 1;
		}
		if (t >= end || wait_signal(next < end ? next : end))
			return;
	}
}

static void usage(FILE *out, int status)
{
	fprintf(out,
		"usage: busy_poll [options]\n"
		"  --seconds N   exit after N seconds (default 60)\n"
		"  --truth FILE  append ground truth as JSON lines\n"
		"  --hz N        poller wakeups per second (default 2000)\n"
		"  --mode M      nanosleep (default) or ppoll\n"
		"  --threads N   idle threads besides the poller (default 2)\n");
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
		{ "hz", required_argument, NULL, 'z' },
		{ "mode", required_argument, NULL, 'm' },
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
		case 'z':
			opt.hz = parse_num(name, optarg, 0.1, 1e6);
			break;
		case 'm':
			if (strcmp(optarg, "nanosleep") &&
			    strcmp(optarg, "ppoll")) {
				fprintf(stderr, "%s: bad value '%s' for --mode, expected nanosleep or ppoll\n",
					program_invocation_short_name, optarg);
				exit(64);
			}
			opt.use_ppoll = !strcmp(optarg, "ppoll");
			break;
		case 'n':
			opt.threads = parse_num(name, optarg, 0, MAX_THREADS);
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
	start_threads();
	run();
	stop_threads();
	truth_write("exit");
	if (truth && fclose(truth))
		die("close truth file");
	return 0;
}

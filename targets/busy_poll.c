/*
 * busy_poll: a thread that wakes thousands of times a second for nothing.
 *
 * One thread named "poller" wakes --hz times a second on an absolute
 * schedule, either in clock_nanosleep() or in ppoll() with a timeout on
 * an eventfd nobody writes (--mode), checks a queue that is always empty
 * and goes back to sleep.  --mode poll is the loop of field report 000's
 * "idle CPU burn": poll() on that eventfd with a 1 ms timeout, again as
 * soon as it returns (about 900 wakeups a second, under 1% of a core;
 * --hz does not apply).  The timeout is poll()'s third argument, which
 * /proc/TID/syscall shows.  --threads more threads, "idle-0" .., block on
 * a condition variable for the whole run.  The poller uses little CPU
 * per wakeup but shows a voluntary context switch rate equal to --hz:
 * the busy-poll signature, with no useful work behind it.
 *
 * The truth gives the configured rate, the wakeups counted so far and the
 * rate the program itself measured over the last interval.
 */
#include <inttypes.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/eventfd.h>

#include "common.h"

#define MAX_THREADS	1024

enum mode { MODE_NANOSLEEP, MODE_PPOLL, MODE_POLL };
static const char *const mode_names[] = { "nanosleep", "ppoll", "poll" };

static struct {
	double hz;
	enum mode mode;
	int threads;
} opt = {
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
static atomic_int stop;
static _Atomic uint64_t wakeups;

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

	if (opt.mode == MODE_NANOSLEEP) {
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

/* --mode poll: a 1 ms poll() on an eventfd nobody writes, again at once. */
static void poll_loop(void)
{
	struct pollfd pfd = { .fd = event_fd, .events = POLLIN };

	while (!atomic_load(&stop)) {
		if (poll(&pfd, 1, 1) < 0 && errno != EINTR)
			die("poll");
		atomic_fetch_add(&wakeups, 1);
		check_queue();
	}
}

static void *poller_main(void *arg)
{
	long period = (long)(1e9 / opt.hz);
	struct timespec next, cur;

	(void)arg;
	if (opt.mode == MODE_POLL) {
		poll_loop();
		return NULL;
	}
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

	if (opt.mode != MODE_NANOSLEEP) {
		event_fd = eventfd(0, EFD_CLOEXEC);
		if (event_fd < 0)
			die("eventfd");
	}
	start_thread(&poller, NULL, poller_main, NULL, "poller", -1);
	for (i = 0; i < opt.threads; i++)
		start_thread(&idlers[i], NULL, idler_main, NULL, "idle", i);
}

static void stop_threads(void)
{
	check(pthread_mutex_lock(&idle_lock), "pthread_mutex_lock");
	atomic_store(&stop, 1);
	check(pthread_cond_broadcast(&idle_cond), "pthread_cond_broadcast");
	check(pthread_mutex_unlock(&idle_lock), "pthread_mutex_unlock");
	check(pthread_join(poller, NULL), "pthread_join");
	join_threads(idlers, opt.threads);
	if (event_fd >= 0 && close(event_fd))
		die("close");
}

/* Report the wakeups and their rate since the previous report. */
static void truth_write(const char *phase)
{
	static struct rate_since since;
	double t = elapsed();
	uint64_t n = atomic_load(&wakeups);
	double rate = rate_since(&since, t, n);
	FILE *f;

	f = truth_begin_at(t, phase);
	if (!f)
		return;
	fprintf(f, ",\"hz\":%.1f,\"mode\":\"%s\",\"idle_threads\":%d,"
		"\"wakeups\":%" PRIu64 ",\"wakeups_per_s\":%.1f", opt.hz,
		mode_names[opt.mode], opt.threads, n, rate);
	truth_end();
}

static void option(int val, const char *name, const char *arg)
{
	switch (val) {
	case 'z':
		opt.hz = parse_num(name, arg, 0.1, 1e6);
		break;
	case 'm':
		for (opt.mode = MODE_NANOSLEEP; opt.mode <= MODE_POLL; opt.mode++)
			if (!strcmp(arg, mode_names[opt.mode]))
				return;
		fprintf(stderr, "%s: bad value '%s' for --mode, expected nanosleep, ppoll or poll\n",
			program_invocation_short_name, arg);
		exit(EXIT_USAGE);
	case 'n':
		opt.threads = parse_num(name, arg, 0, MAX_THREADS);
		break;
	}
}

static const struct option options[] = {
	{ "hz", required_argument, NULL, 'z' },
	{ "mode", required_argument, NULL, 'm' },
	{ "threads", required_argument, NULL, 'n' },
	{ NULL, 0, NULL, 0 }
};

static const struct cli cli = {
	.usage =
	"usage: busy_poll [options]\n"
	"  --seconds N   exit after N seconds (default 60)\n"
	"  --truth FILE  append ground truth as JSON lines\n"
	"  --hz N        poller wakeups per second (default 2000)\n"
	"  --mode M      nanosleep (default), ppoll, or poll (a 1 ms timeout, again at once:\n"
	"                about 900 wakeups/s; --hz does not apply)\n"
	"  --threads N   idle threads besides the poller (default 2)\n",
	.options = options,
	.option = option,
};

int main(int argc, char **argv)
{
	parse_options(argc, argv, &cli);
	target_begin(NULL);
	start_threads();
	main_loop(&(struct main_loop){ .report = truth_write,
				       .phase = "polling" });
	stop_threads();
	truth_write("exit");
	truth_close();
	return 0;
}

/*
 * slow_leak: leak heap memory at a steady, known rate on top of churn.
 *
 * A "leaker" thread allocates 4 KiB blocks, fills them and never frees
 * them, at --rate-kb-per-s, until --max-leak-mb is reached.  The blocks
 * stay reachable through a chain (so LeakSanitizer keeps quiet), but the
 * program never looks at them again: to the allocator and the kernel
 * this is a leak.  Meanwhile --threads "churn-N" threads allocate and
 * free blocks of 64 B .. 16 KiB at --churn-per-s around a steady live
 * set of --churn-mb, so that the growth has noise around it.  A soak
 * should find a positive slope equal to the rate, not a plateau.
 *
 * live_bytes = leaked_bytes + churn_live_bytes, each the exact sum of
 * the sizes passed to malloc() for blocks still allocated.
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

#define LEAK_BLOCK	4096
#define TICK_NS		10000000L	/* threads wake every 10 ms */

/* A leaked block: a link to the previous one, then filler. */
struct leak {
	struct leak *prev;
};

struct churner {
	pthread_t thread;
	uint64_t rng;
	void **slot;		/* blocks held, random replacement */
	size_t *slot_size;
	size_t nslots;
};

static struct {
	double seconds;
	const char *truth;
	double rate;		/* bytes per second */
	size_t max_leak;
	int threads;
	size_t churn_bytes;
	double churn_per_s;
} opt = {
	.seconds = 60,
	.rate = 512 * 1024,
	.max_leak = (size_t)1024 << 20,
	.threads = 1,
	.churn_bytes = (size_t)16 << 20,
	.churn_per_s = 2000,
};

static struct churner *churners;
static pthread_barrier_t ready;	/* churners filled, main may start */
static pthread_t leaker;
static struct leak *leaked;	/* newest leaked block */
static FILE *truth;
static double t0;
static sigset_t waited;

static atomic_int stop;
static _Atomic uint64_t leaked_bytes, churn_live_bytes;

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

static void tick_sleep(void)
{
	struct timespec tick = { 0, TICK_NS };
	int rc = clock_nanosleep(CLOCK_MONOTONIC, 0, &tick, NULL);

	if (rc && rc != EINTR)
		check(rc, "clock_nanosleep");
}

static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

static void *alloc_filled(size_t size, int fill)
{
	void *p = malloc(size);

	if (!p)
		die("malloc");
	memset(p, fill, size);
	return p;
}

/* Leak whole blocks until we are on schedule or at the cap. */
static void leak_due(double t)
{
	double due = opt.rate * (t - t0);
	uint64_t n = atomic_load(&leaked_bytes);

	if (due > opt.max_leak)
		due = opt.max_leak;
	for (; n + LEAK_BLOCK <= due; n += LEAK_BLOCK) {
		struct leak *l = alloc_filled(LEAK_BLOCK, 0x4c);

		l->prev = leaked;
		leaked = l;
		atomic_store(&leaked_bytes, n + LEAK_BLOCK);
	}
}

static void *leaker_main(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		leak_due(now());
		tick_sleep();
	}
	return NULL;
}

/* Replace one random held block by a new one of 64 B .. 16 KiB. */
static void churn_one(struct churner *c)
{
	size_t i = next_rand(&c->rng) % c->nslots;
	size_t size = 64 + next_rand(&c->rng) % (16 << 10);

	free(c->slot[i]);
	atomic_fetch_sub(&churn_live_bytes, c->slot_size[i]);
	c->slot[i] = alloc_filled(size, 0x43);
	c->slot_size[i] = size;
	atomic_fetch_add(&churn_live_bytes, size);
}

/* Fill every slot first, so that the churn's live set starts steady. */
static void churn_fill(struct churner *c)
{
	size_t i;

	for (i = 0; i < c->nslots; i++) {
		c->slot_size[i] = 64 + next_rand(&c->rng) % (16 << 10);
		c->slot[i] = alloc_filled(c->slot_size[i], 0x43);
		atomic_fetch_add(&churn_live_bytes, c->slot_size[i]);
	}
}

static void *churner_main(void *arg)
{
	struct churner *c = arg;
	double per_tick = opt.churn_per_s / opt.threads * TICK_NS / 1e9;
	double credit = 0;
	int rc;

	churn_fill(c);
	rc = pthread_barrier_wait(&ready);
	if (rc && rc != PTHREAD_BARRIER_SERIAL_THREAD)
		check(rc, "pthread_barrier_wait");
	while (!atomic_load(&stop)) {
		for (credit += per_tick; credit >= 1; credit--)
			churn_one(c);
		tick_sleep();
	}
	return NULL;
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p)
		die("calloc");
	return p;
}

/* Start the churners and wait until their live sets are in place. */
static void start_churners(void)
{
	/* Mean block is about 8 KiB. */
	size_t nslots = opt.churn_bytes / opt.threads / (8 << 10) + 1;
	int i, rc;

	check(pthread_barrier_init(&ready, NULL, opt.threads + 1),
	      "pthread_barrier_init");
	churners = xcalloc(opt.threads, sizeof(*churners));
	for (i = 0; i < opt.threads; i++) {
		struct churner *c = &churners[i];
		char name[32];

		c->rng = 0x9e3779b97f4a7c15ULL * (i + 1);
		c->nslots = nslots;
		c->slot = xcalloc(nslots, sizeof(*c->slot));
		c->slot_size = xcalloc(nslots, sizeof(*c->slot_size));
		check(pthread_create(&c->thread, NULL, churner_main, c),
		      "pthread_create");
		snprintf(name, sizeof(name), "churn-%d", i);
		name[15] = '\0';	/* the kernel keeps 15 characters */
		check(pthread_setname_np(c->thread, name), "pthread_setname_np");
	}
	rc = pthread_barrier_wait(&ready);
	if (rc && rc != PTHREAD_BARRIER_SERIAL_THREAD)
		check(rc, "pthread_barrier_wait");
}

static void start_leaker(void)
{
	check(pthread_create(&leaker, NULL, leaker_main, NULL),
	      "pthread_create");
	check(pthread_setname_np(leaker, "leaker"), "pthread_setname_np");
}

static void stop_threads(void)
{
	int i;

	atomic_store(&stop, 1);
	check(pthread_join(leaker, NULL), "pthread_join");
	for (i = 0; i < opt.threads; i++)
		check(pthread_join(churners[i].thread, NULL), "pthread_join");
}

static void free_churn(void)
{
	int i;

	for (i = 0; i < opt.threads; i++) {
		struct churner *c = &churners[i];
		size_t j;

		for (j = 0; j < c->nslots; j++)
			free(c->slot[j]);
		free(c->slot);
		free(c->slot_size);
	}
	free(churners);
	check(pthread_barrier_destroy(&ready), "pthread_barrier_destroy");
}

static void truth_write(const char *phase)
{
	uint64_t leak = atomic_load(&leaked_bytes);
	uint64_t churn = atomic_load(&churn_live_bytes);

	if (!truth)
		return;
	if (!phase)
		phase = leak + LEAK_BLOCK > opt.max_leak ? "capped" : "leaking";
	fprintf(truth, "{\"t\":%.3f,\"phase\":\"%s\",\"rate_bytes_per_s\":%.0f,"
		"\"max_leak_bytes\":%zu,\"leak_block_bytes\":%d,"
		"\"leaked_bytes\":%" PRIu64 ",\"leaked_blocks\":%" PRIu64 ","
		"\"churn_live_bytes\":%" PRIu64 ",\"live_bytes\":%" PRIu64 ","
		"\"threads\":%d,\"churn_per_s\":%.0f}\n",
		now() - t0, phase, opt.rate, opt.max_leak, LEAK_BLOCK, leak,
		leak / LEAK_BLOCK, churn, leak + churn, opt.threads,
		opt.churn_per_s);
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
			truth_write(NULL);
			next = t + 1;
		}
		if (t >= end || wait_signal(next < end ? next : end))
			return;
	}
}

static void usage(FILE *out, int status)
{
	fprintf(out,
		"usage: slow_leak [options]\n"
		"  --seconds N        exit after N seconds (default 60)\n"
		"  --truth FILE       append ground truth as JSON lines\n"
		"  --rate-kb-per-s N  leak N KiB per second (default 512)\n"
		"  --max-leak-mb N    stop leaking at N MiB (default 1024)\n"
		"  --threads N        churn threads (default 1)\n"
		"  --churn-mb N       churn live set in MiB (default 16)\n"
		"  --churn-per-s N    churn allocations per second (default 2000)\n");
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
		{ "rate-kb-per-s", required_argument, NULL, 'r' },
		{ "max-leak-mb", required_argument, NULL, 'm' },
		{ "threads", required_argument, NULL, 'n' },
		{ "churn-mb", required_argument, NULL, 'c' },
		{ "churn-per-s", required_argument, NULL, 'C' },
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
		case 'r':
			opt.rate = parse_num(name, optarg, 0, 1 << 20) * 1024;
			break;
		case 'm':
			opt.max_leak = parse_num(name, optarg, 0, 1 << 16) *
				       (1 << 20);
			break;
		case 'n':
			opt.threads = parse_num(name, optarg, 1, 256);
			break;
		case 'c':
			opt.churn_bytes = parse_num(name, optarg, 0, 4096) *
					  (1 << 20);
			break;
		case 'C':
			opt.churn_per_s = parse_num(name, optarg, 0, 1e7);
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
	printf("pid %d\n", (int)getpid());
	if (fflush(stdout))
		die("stdout");
	start_churners();
	t0 = now();
	start_leaker();
	run();
	stop_threads();
	truth_write("exit");
	free_churn();	/* the leak stays reachable from 'leaked' */
	if (truth && fclose(truth))
		die("close truth file");
	return 0;
}

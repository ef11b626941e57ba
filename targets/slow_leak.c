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
#include <inttypes.h>
#include <stdatomic.h>
#include <stdint.h>

#include "common.h"

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
	double rate;		/* bytes per second */
	size_t max_leak;
	int threads;
	size_t churn_bytes;
	double churn_per_s;
} opt = {
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

static atomic_int stop;
static _Atomic uint64_t leaked_bytes, churn_live_bytes;

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

		c->rng = 0x9e3779b97f4a7c15ULL * (i + 1);
		c->nslots = nslots;
		c->slot = xcalloc(nslots, sizeof(*c->slot));
		c->slot_size = xcalloc(nslots, sizeof(*c->slot_size));
		start_thread(&c->thread, NULL, churner_main, c, "churn", i);
	}
	rc = pthread_barrier_wait(&ready);
	if (rc && rc != PTHREAD_BARRIER_SERIAL_THREAD)
		check(rc, "pthread_barrier_wait");
}

static void start_leaker(void)
{
	start_thread(&leaker, NULL, leaker_main, NULL, "leaker", -1);
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
	FILE *f;

	if (!phase)
		phase = leak + LEAK_BLOCK > opt.max_leak ? "capped" : "leaking";
	f = truth_begin(phase);
	if (!f)
		return;
	fprintf(f, ",\"rate_bytes_per_s\":%.0f,\"max_leak_bytes\":%zu,"
		"\"leak_block_bytes\":%d,\"leaked_bytes\":%" PRIu64 ","
		"\"leaked_blocks\":%" PRIu64 ",\"churn_live_bytes\":%" PRIu64
		",\"live_bytes\":%" PRIu64 ",\"threads\":%d,"
		"\"churn_per_s\":%.0f", opt.rate, opt.max_leak, LEAK_BLOCK,
		leak, leak / LEAK_BLOCK, churn, leak + churn, opt.threads,
		opt.churn_per_s);
	truth_end();
}

static void option(int val, const char *name, const char *arg)
{
	switch (val) {
	case 'r':
		opt.rate = parse_num(name, arg, 0, 1 << 20) * 1024;
		break;
	case 'm':
		opt.max_leak = parse_num(name, arg, 0, 1 << 16) * (1 << 20);
		break;
	case 'n':
		opt.threads = parse_num(name, arg, 1, 256);
		break;
	case 'c':
		opt.churn_bytes = parse_num(name, arg, 0, 4096) * (1 << 20);
		break;
	case 'C':
		opt.churn_per_s = parse_num(name, arg, 0, 1e7);
		break;
	}
}

static const struct option options[] = {
	{ "rate-kb-per-s", required_argument, NULL, 'r' },
	{ "max-leak-mb", required_argument, NULL, 'm' },
	{ "threads", required_argument, NULL, 'n' },
	{ "churn-mb", required_argument, NULL, 'c' },
	{ "churn-per-s", required_argument, NULL, 'C' },
	{ NULL, 0, NULL, 0 }
};

static const struct cli cli = {
	.usage =
	"usage: slow_leak [options]\n"
	"  --seconds N        exit after N seconds (default 60)\n"
	"  --truth FILE       append ground truth as JSON lines\n"
	"  --rate-kb-per-s N  leak N KiB per second (default 512)\n"
	"  --max-leak-mb N    stop leaking at N MiB (default 1024)\n"
	"  --threads N        churn threads (default 1)\n"
	"  --churn-mb N       churn live set in MiB (default 16)\n"
	"  --churn-per-s N    churn allocations per second (default 2000)\n",
	.options = options,
	.option = option,
};

int main(int argc, char **argv)
{
	parse_options(argc, argv, &cli);
	target_begin(NULL);
	start_churners();
	start_clock();	/* the leak's schedule starts with the churn in place */
	start_leaker();
	main_loop(&(struct main_loop){ .report = truth_write });
	stop_threads();
	truth_write("exit");
	free_churn();	/* the leak stays reachable from 'leaked' */
	truth_close();
	return 0;
}

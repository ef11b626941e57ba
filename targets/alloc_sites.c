/*
 * alloc_sites: allocation sites with known shares and fates, for vitals allocs.
 *
 * One worker thread ("alloc-worker") runs rounds.  Each round calls
 * churn_round() 9 times (malloc 256 B, written, freed at once) and
 * keep_block() once (malloc 4 KiB, kept in a ring of --keep blocks and
 * freed only when the ring comes round: seconds later), then sleeps
 * --pause-us.  So churn_round makes 90% of the calls and 2304 / 6400 =
 * 36% of the bytes, all freed within microseconds; keep_block makes 10%
 * of the calls and 64% of the bytes, none freed within a second.  Both
 * functions are noinline and call malloc directly.
 *
 * With --spin-us each round also spins on the CPU that long (a target whose
 * own CPU dwarfs the probes' cost, for counting calls).  With --aligned N
 * each round also calls aligned_round() N times: posix_memalign of 512 B
 * at an alignment of 16, freed at once (glibc's posix_memalign then calls
 * malloc itself, which is posix_memalign's call, not one more).
 *
 * With --busy-seconds S it does not pause for its first S seconds (a target
 * that allocates flat out, then slows down).
 *
 * Truth (JSON lines): rounds, churn, keep and aligned calls so far.
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "common.h"

static struct {
	double pause_us;
	double spin_us;
	long keep;
	long aligned;
	double busy_s;
} opt = { .pause_us = 200, .keep = 10000 };

static atomic_int stop;
static _Atomic uint64_t rounds;
static void **ring;
static long ring_pos;
static pthread_t worker;

void churn_round(void);
void keep_block(void);
void aligned_round(void);

__attribute__((noinline)) void churn_round(void)
{
	volatile char *p = malloc(256);

	if (!p)
		die("malloc");
	p[0] = 1;
	p[255] = 2;
	free((void *)p);
}

__attribute__((noinline)) void keep_block(void)
{
	char *p = malloc(4096);

	if (!p)
		die("malloc");
	memset(p, 0x5a, 64);
	free(ring[ring_pos]);   /* the block kept --keep rounds ago */
	ring[ring_pos] = p;
	ring_pos = (ring_pos + 1) % opt.keep;
}

__attribute__((noinline)) void aligned_round(void)
{
	void *p = NULL;

	if (posix_memalign(&p, 16, 512))
		die("posix_memalign");
	memset(p, 0x33, 64);
	free(p);
}

static void *work(void *arg)
{
	struct timespec ts = { 0, (long)(opt.pause_us * 1000) };
	double busy_until = now() + opt.busy_s;

	(void)arg;
	while (!atomic_load(&stop)) {
		for (int i = 0; i < 9; i++)
			churn_round();
		keep_block();
		for (long i = 0; i < opt.aligned; i++)
			aligned_round();
		atomic_fetch_add(&rounds, 1);
		if (opt.spin_us > 0) {   /* CPU of its own: probes cost a small share of it */
			double until = now() + opt.spin_us / 1e6;

			while (now() < until)
				;
		}
		if (ts.tv_nsec && now() >= busy_until)
			nanosleep(&ts, NULL);
	}
	return NULL;
}

static void truth_write(const char *phase)
{
	uint64_t n = atomic_load(&rounds);
	FILE *f = truth_begin(phase);

	if (!f)
		return;
	fprintf(f, ",\"rounds\":%" PRIu64 ",\"churn_calls\":%" PRIu64 ",\"keep_calls\":%" PRIu64
		",\"aligned_calls\":%" PRIu64 ",\"churn_bytes\":256,\"keep_bytes\":4096", n, 9 * n, n,
		(uint64_t)opt.aligned * n);
	truth_end();
}

static void option(int val, const char *name, const char *arg)
{
	if (val == 'p')
		opt.pause_us = parse_num(name, arg, 0, 1e6);
	else if (val == 'k')
		opt.keep = (long)parse_num(name, arg, 1, 1e7);
	else if (val == 'u')
		opt.spin_us = parse_num(name, arg, 0, 1e6);
	else if (val == 'a')
		opt.aligned = (long)parse_num(name, arg, 0, 1000);
	else if (val == 'b')
		opt.busy_s = parse_num(name, arg, 0, 3600);
}

static const struct option options[] = {
	{ "pause-us", required_argument, NULL, 'p' },
	{ "keep", required_argument, NULL, 'k' },
	{ "spin-us", required_argument, NULL, 'u' },
	{ "aligned", required_argument, NULL, 'a' },
	{ "busy-seconds", required_argument, NULL, 'b' },
	{ NULL, 0, NULL, 0 }
};

static const struct cli cli = {
	.usage =
	"usage: alloc_sites [options]\n"
	"  --seconds N    exit after N seconds (default 60)\n"
	"  --truth FILE   append ground truth as JSON lines\n"
	"  --pause-us N   sleep between rounds (default 200)\n"
	"  --keep N       blocks keep_block holds before freeing the oldest (default 10000)\n"
	"  --spin-us N    spin on the CPU for N us each round (default 0)\n"
	"  --aligned N    also N posix_memalign(16, 512) calls each round, freed at once (default 0)\n"
	"  --busy-seconds S  no pause for the first S seconds: flat out, then --pause-us (default 0)\n",
	.options = options,
	.option = option,
};

int main(int argc, char **argv)
{
	parse_options(argc, argv, &cli);
	ring = calloc((size_t)opt.keep, sizeof(*ring));
	if (!ring)
		die("calloc");
	target_begin(NULL);
	start_thread(&worker, NULL, work, NULL, "alloc-worker", -1);
	main_loop(&(struct main_loop){ .report = truth_write, .phase = "allocating" });
	atomic_store(&stop, 1);
	join_threads(&worker, 1);
	truth_write("exit");
	truth_close();
	return 0;
}

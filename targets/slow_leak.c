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
 *
 * With --workers N it is a service of one name in N + 1 processes, as
 * nginx runs: the parent forks N workers before any thread starts, each
 * leaking and churning as above (truth lines from each), and itself only
 * waits, small; SIGTERM to the parent ends the workers too.
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "churn.h"
#include "common.h"

#define LEAK_BLOCK	4096

/* A leaked block: a link to the previous one, then filler. */
struct leak {
	struct leak *prev;
};

static struct {
	double rate;		/* bytes per second */
	size_t max_leak;
	int threads;
	size_t churn_bytes;
	double churn_per_s;
	int workers;
} opt = {
	.rate = 512 * 1024,
	.max_leak = (size_t)1024 << 20,
	.threads = 1,
	.churn_bytes = (size_t)16 << 20,
	.churn_per_s = 2000,
};

static struct churn bg;		/* the background churn (churn.h) */
static pthread_t leaker;
static struct leak *leaked;	/* newest leaked block */

static atomic_int stop;
static _Atomic uint64_t leaked_bytes;

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
		churn_tick_sleep();
	}
	return NULL;
}

/* Start the churn with the options given and wait until it is in place. */
static void start_churners(void)
{
	bg.threads = opt.threads;
	bg.bytes = opt.churn_bytes;
	bg.per_s = opt.churn_per_s;
	churn_start(&bg);
}

static void start_leaker(void)
{
	start_thread(&leaker, NULL, leaker_main, NULL, "leaker", -1);
}

static void stop_threads(void)
{
	atomic_store(&stop, 1);
	check(pthread_join(leaker, NULL), "pthread_join");
	churn_stop(&bg);
}

static void free_churn(void)
{
	churn_free(&bg);
}

static void truth_write(const char *phase)
{
	uint64_t leak = atomic_load(&leaked_bytes);
	uint64_t churn = atomic_load(&bg.live_bytes);
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
	case 'w':
		opt.workers = parse_num(name, arg, 0, 64);
		break;
	}
}

static const struct option options[] = {
	{ "rate-kb-per-s", required_argument, NULL, 'r' },
	{ "max-leak-mb", required_argument, NULL, 'm' },
	{ "threads", required_argument, NULL, 'n' },
	{ "churn-mb", required_argument, NULL, 'c' },
	{ "churn-per-s", required_argument, NULL, 'C' },
	{ "workers", required_argument, NULL, 'w' },
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
	"  --churn-per-s N    churn allocations per second (default 2000)\n"
	"  --workers N        fork N same-named workers that do all the above;\n"
	"                     the parent only waits (default 0)\n",
	.options = options,
	.option = option,
};

static void no_report(const char *phase)
{
	(void)phase;
}

/*
 * --workers: fork them; in a worker return to do the work, in the parent
 * wait until the end, then stop and reap them and exit.
 */
static void fork_workers(void)
{
	pid_t pids[64];
	int i;

	for (i = 0; i < opt.workers; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			die("fork");
		if (pids[i] == 0) {
			prctl(PR_SET_PDEATHSIG, SIGTERM);	/* not left behind by a parent killed with -9 */
			return;
		}
	}
	main_loop(&(struct main_loop){ .report = no_report });
	for (i = 0; i < opt.workers; i++)
		kill(pids[i], SIGTERM);
	for (i = 0; i < opt.workers; i++)
		waitpid(pids[i], NULL, 0);
	truth_close();
	exit(0);
}

int main(int argc, char **argv)
{
	parse_options(argc, argv, &cli);
	target_begin(NULL);
	if (opt.workers)
		fork_workers();
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

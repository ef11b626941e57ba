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
#include <inttypes.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#include "common.h"

#define MAX_THREADS	1024

static struct {
	int threads;		/* 0: twice the usable CPUs */
} opt;

static pthread_t spinners[MAX_THREADS];
static _Atomic uint64_t rounds[MAX_THREADS];
static int ncpu;
static atomic_int stop;
static _Atomic uint64_t sink;	/* keeps the computation alive */

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

	for (i = 0; i < opt.threads; i++)
		start_thread(&spinners[i], NULL, spinner_main, &rounds[i],
			     "spin", i);
}

static void stop_spinners(void)
{
	atomic_store(&stop, 1);
	join_threads(spinners, opt.threads);
}

static void truth_write(const char *phase)
{
	FILE *f = truth_begin(phase);
	int i;

	if (!f)
		return;
	fprintf(f, ",\"threads\":%d,\"ncpu\":%d,\"rounds\":[", opt.threads,
		ncpu);
	for (i = 0; i < opt.threads; i++)
		fprintf(f, "%s%" PRIu64, i ? "," : "", atomic_load(&rounds[i]));
	fputc(']', f);
	truth_end();
}

static void option(int val, const char *name, const char *arg)
{
	if (val == 'n')
		opt.threads = parse_num(name, arg, 1, MAX_THREADS);
}

static const struct option options[] = {
	{ "threads", required_argument, NULL, 'n' },
	{ NULL, 0, NULL, 0 }
};

static const struct cli cli = {
	.usage =
	"usage: core_contention [options]\n"
	"  --seconds N   exit after N seconds (default 60)\n"
	"  --truth FILE  append ground truth as JSON lines\n"
	"  --threads N   spinning threads (default 2 x usable CPUs)\n",
	.options = options,
	.option = option,
};

int main(int argc, char **argv)
{
	parse_options(argc, argv, &cli);
	ncpu = usable_cpus();
	if (!opt.threads)
		opt.threads = 2 * ncpu < MAX_THREADS ? 2 * ncpu : MAX_THREADS;
	target_begin(NULL);
	start_spinners();
	main_loop(&(struct main_loop){ .report = truth_write,
				       .phase = "running" });
	stop_spinners();
	truth_write("exit");
	truth_close();
	return 0;
}

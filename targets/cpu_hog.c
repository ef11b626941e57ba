/*
 * cpu_hog: another process that keeps every core busy.
 *
 * --threads threads (default: the CPUs online), named "hog-0" ..,
 * compute without ever blocking, at the default priority, until
 * --seconds.  It loads the host so that a test can measure some other
 * process while the machine is busy: that process's threads then wait
 * in the run queue because of the hog, not because of each other, which
 * is "host busy" and not core contention of its own (issue 12).  It is
 * not itself a phenomenon to diagnose (core_contention is that).
 *
 * The truth gives the thread count, the CPUs online and how many rounds
 * of computation each thread has done.
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdint.h>

#include "common.h"

#define MAX_THREADS	1024

static struct {
	int threads;		/* 0: the CPUs online */
} opt;

static pthread_t hogs[MAX_THREADS];
static _Atomic uint64_t rounds[MAX_THREADS];
static int ncpu;
static atomic_int stop;
static _Atomic uint64_t sink;	/* keeps the computation alive */

/* One round is 4096 steps of a hash chain: pure CPU, no memory traffic. */
static void *hog_main(void *arg)
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

static void start_hogs(void)
{
	int i;

	for (i = 0; i < opt.threads; i++)
		start_thread(&hogs[i], NULL, hog_main, &rounds[i], "hog", i);
}

static void stop_hogs(void)
{
	atomic_store(&stop, 1);
	join_threads(hogs, opt.threads);
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
	"usage: cpu_hog [options]\n"
	"  --seconds N   exit after N seconds (default 60)\n"
	"  --truth FILE  append ground truth as JSON lines\n"
	"  --threads N   spinning threads (default: the CPUs online)\n",
	.options = options,
	.option = option,
};

int main(int argc, char **argv)
{
	long online;

	parse_options(argc, argv, &cli);
	online = sysconf(_SC_NPROCESSORS_ONLN);
	if (online < 1)
		die("sysconf _SC_NPROCESSORS_ONLN");
	ncpu = online;
	if (!opt.threads)
		opt.threads = ncpu < MAX_THREADS ? ncpu : MAX_THREADS;
	target_begin(NULL);
	start_hogs();
	main_loop(&(struct main_loop){ .report = truth_write,
				       .phase = "running" });
	stop_hogs();
	truth_write("exit");
	truth_close();
	return 0;
}

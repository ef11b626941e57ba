/*
 * inline_work: known work in functions the compiler inlined, for `vitals
 * profile`'s inlined frames and source lines (issue 25).
 *
 * One thread, "inline-worker", runs work_outer (noinline) in slices of
 * about --slice-ms of its own CPU time (0.5 to 1.5 times, at random), each
 * split in three:
 *
 *   inline_checksum   always_inline into work_outer: --checksum percent
 *   inline_scramble   always_inline into work_outer: --scramble percent;
 *                     it calls inline_rotate, always_inline into it (a
 *                     chain of two inlined functions at one address)
 *   work_outer        its own loop: the rest
 *
 * No symbol names the inlined functions (a static always_inline function
 * gets no code of its own): only the DWARF of the -g build knows them, as
 * DW_TAG_inlined_subroutine entries in work_outer.  Without that, a
 * profiler gives all the time to work_outer.
 *
 * The ground truth is the worker's CLOCK_THREAD_CPUTIME_ID read around each
 * part: "checksum_s", "scramble_s" and "outer_s" add up the parts,
 * "worker_cpu_s" is the thread's clock and "process_cpu_s" the process's.
 * A part's inclusive share of the on-CPU samples over a window is its
 * difference over the process_cpu_s difference.  SIGUSR1 writes a truth
 * line at once, with "mark" counting the SIGUSR1s taken: send one at each
 * end of a profile window.  Each part reads the clock every few tens of
 * microseconds (a system call, made from inside the part: its time is the
 * part's).
 */
#include "common.h"

#include <stdatomic.h>

#define BARRIER()	__asm__ __volatile__("" ::: "memory")

static struct {
	double slice_ms, checksum, scramble;
} opt = { .slice_ms = 10, .checksum = 50, .scramble = 30 };

static _Atomic uint64_t checksum_ns, scramble_ns, outer_ns;
static atomic_int stop;
static clockid_t worker_clock;
static unsigned marks;
static volatile uint64_t sink;

static uint64_t cpu_ns(clockid_t clock)
{
	struct timespec ts;

	if (clock_gettime(clock, &ts))
		die("clock_gettime");
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline __attribute__((always_inline)) uint64_t inline_checksum(uint64_t h, uint64_t until)
{
	do {
		for (int i = 0; i < 32768; i++) {
			h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ULL + (uint64_t)i;
			BARRIER();
		}
	} while (cpu_ns(CLOCK_THREAD_CPUTIME_ID) < until);
	return h;
}

static inline __attribute__((always_inline)) uint64_t inline_rotate(uint64_t h, int i)
{
	for (int k = 0; k < 4; k++) {
		h = (h << 13 | h >> 51) ^ (uint64_t)(i + k);
		BARRIER();
	}
	return h;
}

static inline __attribute__((always_inline)) uint64_t inline_scramble(uint64_t h, uint64_t until)
{
	do {
		for (int i = 0; i < 8192; i++) {
			h = inline_rotate(h, i) * 0x94d049bb133111ebULL;
			BARRIER();
		}
	} while (cpu_ns(CLOCK_THREAD_CPUTIME_ID) < until);
	return h;
}

/*
 * One slice: the three parts, each timed by the thread's own clock.  Its
 * length varies between half and one and a half --slice-ms, at random: a
 * sampler whose period is near a fixed slice's (99 Hz and 10 ms) would
 * otherwise meet the same part every time.
 */
static __attribute__((noinline, noclone)) uint64_t work_outer(uint64_t h)
{
	static uint64_t rng = 0x9e3779b97f4a7c15ULL;
	uint64_t slice, a, b;

	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	slice = (uint64_t)(opt.slice_ms * 1e6 * (0.5 + (double)(rng >> 11) / (double)(1ULL << 53)));

	a = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
	h = inline_checksum(h, a + (uint64_t)(slice * opt.checksum / 100));
	b = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
	atomic_fetch_add(&checksum_ns, b - a);
	h = inline_scramble(h, b + (uint64_t)(slice * opt.scramble / 100));
	a = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
	atomic_fetch_add(&scramble_ns, a - b);
	do {
		for (int i = 0; i < 32768; i++) {
			h = h * 6364136223846793005ULL + 1442695040888963407ULL;
			BARRIER();
		}
	} while (cpu_ns(CLOCK_THREAD_CPUTIME_ID) <
		 a + (uint64_t)(slice * (100 - opt.checksum - opt.scramble) / 100));
	b = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
	atomic_fetch_add(&outer_ns, b - a);
	BARRIER();
	return h;
}

static void *worker_main(void *arg)
{
	uint64_t h = 1;

	(void)arg;
	while (!atomic_load(&stop))
		h = work_outer(h);
	sink = h;
	return NULL;
}

static void truth_write(const char *phase)
{
	FILE *f = truth_begin(phase ? phase : "running");

	if (!f)
		return;
	fprintf(f, ",\"mark\":%u,\"checksum_s\":%.6f,\"scramble_s\":%.6f,\"outer_s\":%.6f,"
		"\"worker_cpu_s\":%.6f,\"process_cpu_s\":%.6f", marks,
		atomic_load(&checksum_ns) / 1e9, atomic_load(&scramble_ns) / 1e9,
		atomic_load(&outer_ns) / 1e9, cpu_ns(worker_clock) / 1e9,
		cpu_ns(CLOCK_PROCESS_CPUTIME_ID) / 1e9);
	truth_end();
}

static void on_signal(int sig)
{
	if (sig == SIGUSR1) {
		marks++;
		truth_write(NULL);
	}
}

static void option(int val, const char *name, const char *arg)
{
	switch (val) {
	case 'l': opt.slice_ms = parse_num(name, arg, 1, 1000); break;
	case 'c': opt.checksum = parse_num(name, arg, 0, 100); break;
	case 'r': opt.scramble = parse_num(name, arg, 0, 100); break;
	}
}

static const struct option options[] = {
	{ "slice-ms", required_argument, NULL, 'l' },
	{ "checksum", required_argument, NULL, 'c' },
	{ "scramble", required_argument, NULL, 'r' },
	{ NULL, 0, NULL, 0 }
};

static const struct cli cli = {
	.usage = "usage: inline_work [options]\n"
		 "  --seconds N      exit after N seconds (default 60)\n"
		 "  --truth FILE     append ground truth as JSON lines (SIGUSR1: one at once)\n"
		 "  --slice-ms N     a slice of the worker's CPU time, split in three (default 10)\n"
		 "  --checksum P     percent of a slice in inline_checksum (default 50)\n"
		 "  --scramble P     percent in inline_scramble (default 30); the rest is\n"
		 "                   work_outer's own loop\n",
	.options = options,
	.option = option,
};

int main(int argc, char **argv)
{
	static const int extra[] = { SIGUSR1, 0 };
	pthread_t worker;

	parse_options(argc, argv, &cli);
	if (opt.checksum + opt.scramble > 100) {
		fprintf(stderr, "inline_work: --checksum and --scramble add up to more than 100\n");
		return EXIT_USAGE;
	}
	target_begin(extra);
	start_thread(&worker, NULL, worker_main, NULL, "inline-worker", -1);
	check(pthread_getcpuclockid(worker, &worker_clock), "pthread_getcpuclockid");
	main_loop(&(struct main_loop){ .report = truth_write, .signal = on_signal });
	atomic_store(&stop, 1);
	join_threads(&worker, 1);
	truth_write("exit");
	truth_close();
	return 0;
}

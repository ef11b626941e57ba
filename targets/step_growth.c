/*
 * step_growth: hold a steady footprint, then grow by a known step.
 *
 * --threads "churn-N" threads allocate and free blocks of 64 B .. 16 KiB
 * at --churn-per-s around a steady live set of --churn-mb.  At --step-at
 * seconds the main thread allocates --step-mb more in chunks of
 * --step-chunk-kb, touches every byte and keeps it until exit.  With the
 * default 64 KiB chunks the step lands in the main heap; chunks at or
 * above the mmap threshold (128 KiB by default) become separate mappings.
 * A soak should report one step of that size at that time and a plateau
 * on either side, not a leak.
 *
 * live_bytes = step_held_bytes + churn_live_bytes, each the exact sum of
 * the sizes passed to malloc() for blocks still allocated; step_at_t is
 * when the step was complete (null before), step_at_s when it was due.
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdint.h>

#include "churn.h"
#include "common.h"


/* A chunk of the step: a link to the previous one, then filler. */
struct chunk {
	struct chunk *prev;
};

static struct {
	double step_at;
	size_t step_bytes;
	size_t chunk_bytes;
	int threads;
	size_t churn_bytes;
	double churn_per_s;
} opt = {
	.step_at = 20,
	.step_bytes = (size_t)64 << 20,
	.chunk_bytes = 64 << 10,
	.threads = 1,
	.churn_bytes = (size_t)16 << 20,
	.churn_per_s = 2000,
};

static struct churn bg;		/* the background churn (churn.h) */
static struct chunk *step;	/* newest chunk of the step */
static uint64_t step_held;
static double step_done_t = -1;
static double step_done_wall;	/* unix time it was complete: a recording's clock */


/* Start the churn with the options given and wait until it is in place. */
static void start_churners(void)
{
	bg.threads = opt.threads;
	bg.bytes = opt.churn_bytes;
	bg.per_s = opt.churn_per_s;
	churn_start(&bg);
}

static void stop_threads(void)
{
	churn_stop(&bg);
}

static void free_churn(void)
{
	churn_free(&bg);
}

/*
 * Allocate the step in chunks, touch it all, and keep it; it is complete
 * (step_at_t) once it is all in place, not when it was due ('due').
 */
static void take_step(double due)
{
	(void)due;
	while (step_held + opt.chunk_bytes <= opt.step_bytes) {
		struct chunk *c = alloc_filled(opt.chunk_bytes, 0x53);

		c->prev = step;
		step = c;
		step_held += opt.chunk_bytes;
	}
	step_done_t = elapsed();
	step_done_wall = wall_now();
}

static void free_step(void)
{
	while (step) {
		struct chunk *prev = step->prev;

		free(step);
		step = prev;
	}
}

static void truth_write(const char *phase)
{
	uint64_t churn = atomic_load(&bg.live_bytes);
	char done_t[32] = "null", done_wall[32] = "null";
	FILE *f;

	if (step_done_t >= 0) {
		snprintf(done_t, sizeof(done_t), "%.3f", step_done_t);
		snprintf(done_wall, sizeof(done_wall), "%.6f", step_done_wall);
	}
	if (!phase)
		phase = step_done_t >= 0 ? "after" : "before";
	f = truth_begin(phase);
	if (!f)
		return;
	fprintf(f, ",\"step_at_s\":%.3f,\"step_done\":%s,\"step_at_t\":%s,\"step_at_wall\":%s,"
		"\"step_bytes\":%zu,\"step_chunk_bytes\":%zu,"
		"\"step_held_bytes\":%" PRIu64 ",\"churn_live_bytes\":%" PRIu64
		",\"live_bytes\":%" PRIu64 ",\"threads\":%d,"
		"\"churn_per_s\":%.0f", opt.step_at,
		step_done_t >= 0 ? "true" : "false", done_t, done_wall, opt.step_bytes,
		opt.chunk_bytes, step_held, churn, step_held + churn,
		opt.threads, opt.churn_per_s);
	truth_end();
}

static void option(int val, const char *name, const char *arg)
{
	switch (val) {
	case 'a':
		opt.step_at = parse_num(name, arg, 0, 1e7);
		break;
	case 'm':
		opt.step_bytes = parse_num(name, arg, 0, 1 << 14) * (1 << 20);
		break;
	case 'k':
		opt.chunk_bytes = parse_num(name, arg, 1, 1 << 20) * 1024;
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
	{ "step-at", required_argument, NULL, 'a' },
	{ "step-mb", required_argument, NULL, 'm' },
	{ "step-chunk-kb", required_argument, NULL, 'k' },
	{ "threads", required_argument, NULL, 'n' },
	{ "churn-mb", required_argument, NULL, 'c' },
	{ "churn-per-s", required_argument, NULL, 'C' },
	{ NULL, 0, NULL, 0 }
};

static const struct cli cli = {
	.usage =
	"usage: step_growth [options]\n"
	"  --seconds N        exit after N seconds (default 60)\n"
	"  --truth FILE       append ground truth as JSON lines\n"
	"  --step-at S        take the step S seconds after start (default 20)\n"
	"  --step-mb N        grow by N MiB (default 64)\n"
	"  --step-chunk-kb N  in malloc() chunks of N KiB (default 64)\n"
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
	start_clock();	/* t counts from when the churn is in place */
	main_loop(&(struct main_loop){ .report = truth_write,
				       .change = take_step,
				       .change_at = opt.step_at });
	stop_threads();
	truth_write("exit");
	free_churn();
	free_step();
	truth_close();
	return 0;
}

/*
 * test_thread_sampler.c — the pace of sample/thread_sampler.c on this live
 * test process: the sampler's first sample (the one that opens every
 * thread's files) is paid for within the interval it opens, so sampling
 * stays within 1/cost_factor of a core over that interval; later
 * intervals pay nothing for it.
 *
 * A sample's cost is the CPU of the read and of the hook (thread_sampler.h),
 * so the hook here burns a chosen amount of this thread's CPU to stand for
 * a large process.
 */
#include "harness.h"

#include "proc/procfs.h"
#include "sample/thread_sampler.h"

#include <time.h>
#include <unistd.h>

#define MS 1000000ull

/* CPU this thread has used, ns. */
static uint64_t thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Burns opening_ns of CPU at the first sample, later_ns at each later one. */
struct burn {
	uint64_t opening_ns, later_ns;
	unsigned calls;
};

static int burn_hook(void *ctx, const struct vt_threads_sample *s, struct vt_err *err)
{
	struct burn *b = ctx;
	uint64_t want = b->calls++ ? b->later_ns : b->opening_ns, t0 = thread_cpu();
	volatile uint64_t spin = 0;

	(void)s;
	(void)err;
	while (thread_cpu() - t0 < want)
		spin++;
	return VT_OK;
}

static struct vt_thread_sampler *open_self(struct vt_procfs *pfs, struct burn *b)
{
	struct vt_sampler_hook hook = { burn_hook, b };
	struct vt_thread_sampler *s = NULL;
	struct vt_err err;

	CHECK(vt_procfs_open(pfs, NULL, NULL, &err) == VT_OK);
	CHECK(vt_thread_sampler_open(pfs, getpid(), NULL, &s, &err) == VT_OK);
	if (s) {
		vt_thread_sampler_set_cost_factor(s, 100);
		vt_thread_sampler_set_hook(s, &hook);
	}
	return s;
}

/*
 * An opening sample of 30 ms against a 1 s interval at factor 100 (10 ms of
 * CPU allowed): nothing is left, so only the interval's end is sampled.
 * The next interval owes nothing and samples every 100 ms or so again.
 */
static void test_thread_sampler__opening_paid_once(void)
{
	struct burn b = { .opening_ns = 30 * MS, .later_ns = 0 };
	struct vt_threads_interval iv;
	struct vt_thread_sampler *s;
	struct vt_procfs pfs;
	struct vt_err err;

	if (!(s = open_self(&pfs, &b)))
		return;
	CHECK(vt_thread_sampler_measure(s, 1.0, VT_TW_CSW, &iv, &err) == VT_OK);
	CHECK_EQ_U64(iv.n, 2);
	CHECK(iv.interval_s >= 0.99);
	vt_thread_sampler_next(s);
	CHECK(vt_thread_sampler_measure(s, 1.0, VT_TW_CSW, &iv, &err) == VT_OK);
	printf("# chained interval: %zu samples\n", iv.n);
	CHECK(iv.n >= 5);
	vt_thread_sampler_close(s);
	vt_procfs_close(&pfs);
}

/*
 * An opening sample of 12 ms against 2 s at factor 100 (20 ms allowed):
 * 8 ms are left for later samples of 2 ms each, so the steps stretch from
 * 200 ms to 500 ms on average: about 4 later samples, not about 10.
 */
static void test_thread_sampler__rest_spread(void)
{
	struct burn b = { .opening_ns = 12 * MS, .later_ns = 2 * MS };
	struct vt_threads_interval iv;
	struct vt_thread_sampler *s;
	struct vt_procfs pfs;
	struct vt_err err;
	uint64_t cpu0;

	if (!(s = open_self(&pfs, &b)))
		return;
	cpu0 = thread_cpu();
	CHECK(vt_thread_sampler_measure(s, 2.0, VT_TW_CSW, &iv, &err) == VT_OK);
	printf("# %zu samples, %.1f ms of CPU sampling over %.2f s\n", iv.n,
	       (double)(thread_cpu() - cpu0) / 1e6, iv.interval_s);
	CHECK(iv.n <= 7);
	CHECK(iv.n >= 3 || iv.interval_s > 2.2);   /* samples between the ends, unless a stall of this host took their time */
	vt_thread_sampler_close(s);
	vt_procfs_close(&pfs);
}

VT_TEST_MAIN(test_thread_sampler__opening_paid_once, test_thread_sampler__rest_spread)

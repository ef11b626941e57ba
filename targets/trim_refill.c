/*
 * trim_refill: a glibc heap that malloc_trim(0) can shrink, and that
 * refills at a known rate after each trim (issue 28: the trim experiment
 * that measures the refill).
 *
 * One arena (M_ARENA_MAX 1), so every thread's blocks come from the main
 * heap.  It holds --hole-mb of free 64 KiB chunks, each between two
 * small live blocks (so they never coalesce or reach the top, and only
 * malloc_trim's page release returns them), and --live-mb of live data.
 * Thread "refill" reads its own RssAnon every 10 ms (raw read(2) of
 * /proc/self/status: no malloc); a drop of more than a quarter of the hole
 * is a trim.  From that reading on it allocates the holes back at a
 * constant rate over --refill-seconds (--refill-share of them), writing
 * every page, then frees them all again: resident, free, and ready for the
 * next trim.  So committed returns linearly to its level, and the time to
 * regain half of what the trim returned is --refill-seconds / 2 (with
 * --refill-share 1).  The truth file says when each trim was seen, RssAnon
 * just before and at it, and when the target's own readings first showed
 * half of it back (half_back_s, measured every 10 ms).
 */
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>

#include "common.h"

#define BLOCK_BYTES	((64 << 10) - 16)	/* a 64 KiB chunk: a large bin, below the mmap threshold */
#define PIN_BYTES	64
#define TICK_NS		10000000L		/* 10 ms */

static struct {
	double hole_mb;
	double live_mb;
	double refill_seconds;
	double refill_share;
} opt = {
	.hole_mb = 64,
	.live_mb = 16,
	.refill_seconds = 10,
	.refill_share = 1,
};

static void **holes;		/* the hole blocks while allocated (mmap()ed array) */
static size_t nholes;
static void **pins;
static void **live;
static size_t nlive;

static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	const char *phase;	/* "waiting" (for a trim) or "refilling" */
	uint64_t trims_seen;
	double trim_t;		/* when the last one was seen, s since start; -1 none */
	uint64_t rss_before;	/* RssAnon at the reading before it */
	uint64_t rss_at;	/* and at the reading that saw it */
	double half_back_s;	/* since trim_t: the first reading with half of it back; -1 not yet */
	uint64_t refilled_bytes;/* hole blocks allocated now, in bytes */
	uint64_t rss_anon;	/* the last reading */
} st = { "waiting", 0, -1, 0, 0, -1, 0, 0 };
static atomic_int stop;

/* RssAnon in bytes, read without malloc; 0 when it cannot be read. */
static uint64_t rss_anon(void)
{
	char buf[4096];
	ssize_t n;
	char *p;
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strstr(buf, "RssAnon:");
	return p ? strtoull(p + 8, NULL, 10) * 1024 : 0;
}

static void touch(char *p, size_t len)
{
	size_t off;

	for (off = 0; off < len; off += 4096)
		p[off] = 0x5a;
	p[len - 1] = 0x5a;
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n);

	if (!p)
		die("malloc");
	return p;
}

static void *map_zeroed(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	return p;
}

/* hole, pin, hole, pin, ...: then the holes freed, resident and apart */
static void build(void)
{
	size_t i;

	nholes = (size_t)(opt.hole_mb * (1 << 20) / (BLOCK_BYTES + 16));
	nlive = (size_t)(opt.live_mb * (1 << 20) / (BLOCK_BYTES + 16));
	holes = map_zeroed((nholes + 1) * sizeof(*holes));
	pins = map_zeroed((nholes + 1) * sizeof(*pins));
	live = map_zeroed((nlive + 1) * sizeof(*live));
	for (i = 0; i < nlive; i++) {
		live[i] = xmalloc(BLOCK_BYTES);
		touch(live[i], BLOCK_BYTES);
	}
	for (i = 0; i < nholes; i++) {
		holes[i] = xmalloc(BLOCK_BYTES);
		touch(holes[i], BLOCK_BYTES);
		pins[i] = xmalloc(PIN_BYTES);
		memset(pins[i], 0x33, PIN_BYTES);
	}
	for (i = 0; i < nholes; i++) {
		free(holes[i]);
		holes[i] = NULL;
	}
}

static void *refill_main(void *arg)
{
	struct timespec tick = { 0, TICK_NS };
	uint64_t last = rss_anon();
	size_t allocated = 0, target_n = (size_t)((double)nholes * opt.refill_share);
	double ramp_t0 = 0;
	int refilling = 0;

	(void)arg;
	while (!atomic_load(&stop)) {
		uint64_t now_rss;
		double t;

		clock_nanosleep(CLOCK_MONOTONIC, 0, &tick, NULL);
		now_rss = rss_anon();
		t = elapsed();
		check(pthread_mutex_lock(&state_lock), "pthread_mutex_lock");
		st.rss_anon = now_rss;
		/* a trim: RssAnon fell by more than a quarter of the hole since the last reading */
		if (now_rss && last > now_rss && last - now_rss > (uint64_t)(opt.hole_mb * (1 << 20) / 4)) {
			st.trims_seen++;
			if (!refilling) {
				st.trim_t = t;
				st.rss_before = last;
				st.rss_at = now_rss;
				st.half_back_s = -1;
				st.phase = "refilling";
				refilling = 1;
				ramp_t0 = t;
			}
		}
		if (refilling && st.half_back_s < 0 && now_rss >= st.rss_at + (st.rss_before - st.rss_at) / 2)
			st.half_back_s = t - st.trim_t;
		check(pthread_mutex_unlock(&state_lock), "pthread_mutex_unlock");
		if (refilling) {
			double share = opt.refill_seconds > 0 ? (t - ramp_t0) / opt.refill_seconds : 1;
			size_t want = share >= 1 ? target_n : (size_t)(share * (double)target_n);

			for (; allocated < want; allocated++) {
				holes[allocated] = xmalloc(BLOCK_BYTES);
				touch(holes[allocated], BLOCK_BYTES);
			}
			check(pthread_mutex_lock(&state_lock), "pthread_mutex_lock");
			st.refilled_bytes = (uint64_t)allocated * BLOCK_BYTES;
			check(pthread_mutex_unlock(&state_lock), "pthread_mutex_unlock");
			if (allocated == target_n && share >= 1) {
				/* back at the level, and in use once: free again, resident, for the next trim */
				for (size_t i = 0; i < allocated; i++) {
					free(holes[i]);
					holes[i] = NULL;
				}
				allocated = 0;
				refilling = 0;
				check(pthread_mutex_lock(&state_lock), "pthread_mutex_lock");
				st.phase = "waiting";
				st.refilled_bytes = 0;
				check(pthread_mutex_unlock(&state_lock), "pthread_mutex_unlock");
			}
		}
		last = rss_anon();
	}
	for (size_t i = 0; i < allocated; i++)
		free(holes[i]);
	return NULL;
}

static void truth_write(const char *phase)
{
	FILE *f;

	check(pthread_mutex_lock(&state_lock), "pthread_mutex_lock");
	f = truth_begin(phase ? phase : st.phase);
	if (f) {
		fprintf(f, ",\"hole_bytes\":%zu,\"block_bytes\":%d,\"live_bytes\":%zu,\"refill_seconds\":%.3f,"
			"\"refill_share\":%.3f,\"trims_seen\":%" PRIu64 ",\"trim_t\":%.3f,"
			"\"rss_anon_before_trim\":%" PRIu64 ",\"rss_anon_at_trim\":%" PRIu64 ","
			"\"half_back_s\":%.3f,\"refilled_bytes\":%" PRIu64 ",\"rss_anon\":%" PRIu64,
			nholes * (size_t)BLOCK_BYTES, BLOCK_BYTES, nlive * (size_t)BLOCK_BYTES, opt.refill_seconds,
			opt.refill_share, st.trims_seen, st.trim_t, st.rss_before, st.rss_at, st.half_back_s,
			st.refilled_bytes, st.rss_anon);
		truth_end();
	}
	check(pthread_mutex_unlock(&state_lock), "pthread_mutex_unlock");
}

static void option(int val, const char *name, const char *arg)
{
	switch (val) {
	case 'H':
		opt.hole_mb = parse_num(name, arg, 4, 4096);
		break;
	case 'l':
		opt.live_mb = parse_num(name, arg, 0, 4096);
		break;
	case 'r':
		opt.refill_seconds = parse_num(name, arg, 0, 1e6);
		break;
	case 'S':
		opt.refill_share = parse_num(name, arg, 0, 1);
		break;
	}
}

static const struct option options[] = {
	{ "hole-mb", required_argument, NULL, 'H' },
	{ "live-mb", required_argument, NULL, 'l' },
	{ "refill-seconds", required_argument, NULL, 'r' },
	{ "refill-share", required_argument, NULL, 'S' },
	{ NULL, 0, NULL, 0 }
};

static const struct cli cli = {
	.usage =
	"usage: trim_refill [options]\n"
	"  --seconds N          exit after N seconds (default 60)\n"
	"  --truth FILE         append ground truth as JSON lines\n"
	"  --hole-mb N          free but resident memory a trim can return, MiB (default 64)\n"
	"  --live-mb N          live data beside it, MiB (default 16)\n"
	"  --refill-seconds T   after a trim, allocate the holes back over T s (default 10)\n"
	"  --refill-share F     ... this share of them (default 1; below 1 it settles lower)\n",
	.options = options,
	.option = option,
};

int main(int argc, char **argv)
{
	pthread_t thread;

	parse_options(argc, argv, &cli);
	target_begin(NULL);
	/* one arena: the refill thread's blocks reuse the main heap's holes */
	if (!mallopt(M_ARENA_MAX, 1))
		die("mallopt");
	build();
	st.rss_anon = rss_anon();
	start_thread(&thread, NULL, refill_main, NULL, "refill", -1);
	main_loop(&(struct main_loop){ .report = truth_write });
	atomic_store(&stop, 1);
	check(pthread_join(thread, NULL), "pthread_join");
	truth_write("exit");
	truth_close();
	return 0;
}

/*
 * arena_churn: reproduce glibc arena sprawl (field report 000).
 *
 * Every worker thread ("churn-N") allocates blocks of mixed sizes (64 B ..
 * 300 KiB), writes every page of them and hands each one to another
 * worker, which keeps it for a while and then frees it: memory is
 * allocated on one thread and freed on another.  The live set stays bounded (--live-mb), but the
 * arenas holding it change: --hot-threads workers do --hot-share of the
 * allocations and the hot role rotates every --epoch-ms.  Each arena
 * keeps its own high-water mark, and blocks that happen to live long pin
 * its top so that it cannot be trimmed.  Under default glibc (one arena
 * per thread, up to 8 x cores) RSS settles far above the live set;
 * MALLOC_ARENA_MAX=2 keeps it much closer.  Every block starts with the
 * text "vitals-arena-churn", for a content census to count.
 *
 * live_bytes is the exact sum of the sizes passed to malloc() for the
 * blocks currently allocated; the counters form one consistent snapshot
 * when phase is "paused" or "exit".  Our bookkeeping is mmap()ed, so the
 * allocator's in-use figure exceeds live_bytes only by chunk headers, the
 * chunks parked in per-thread tcaches and libc's own few KiB.  With
 * --pause-signal, SIGUSR1 brings every worker to a quiescent point (no
 * thread inside malloc or free) and SIGUSR2 resumes them.
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>

#include "common.h"

#define TICK_NS		1000000L	/* workers wake every millisecond */
#define MAX_TICK_S	0.01		/* never catch up more than this */

static const char marker[] = "vitals-arena-churn";

/* Header of every churned block; the rest of the block is filler. */
struct block {
	struct block *next;	/* inbox link while in flight */
	size_t size;		/* size passed to malloc(), header included */
};

struct worker {
	pthread_t thread;
	int id;
	uint64_t rng;
	pthread_mutex_t inbox_lock;
	struct block *inbox;	/* sent to us, not yet taken */
	struct block **held;	/* taken and kept, array in mmap()ed memory */
	size_t nheld;
	size_t held_cap;
	size_t held_bytes;
	double credit;		/* allocations owed to the rate */
} __attribute__((aligned(64)));

static struct {
	int threads;
	size_t live_target;
	double allocs_per_s;
	int hot_threads;
	double hot_share;
	double epoch_ms;
	double warmup_seconds;
	int pause_signal;
	size_t max_block;
} opt = {
	.threads = 8,
	.live_target = (size_t)32 << 20,
	.allocs_per_s = 20000,
	.hot_threads = 1,
	.hot_share = 0.75,
	.epoch_ms = 250,
	.max_block = 300 << 10,
};

static struct worker *workers;

static atomic_int stop;
static atomic_int pause_requested;
static _Atomic uint64_t live_bytes, live_blocks, allocs, frees;

static pthread_mutex_t pause_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t resume_cond = PTHREAD_COND_INITIALIZER;
static pthread_cond_t paused_cond = PTHREAD_COND_INITIALIZER;
static int npaused;

static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

static size_t rand_between(uint64_t *s, size_t lo, size_t hi)
{
	return lo + next_rand(s) % (hi - lo + 1);
}

/*
 * 70% small, 26% medium, 4% large; mean about 17 KiB.  The large ones
 * start above M_MMAP_THRESHOLD, but glibc raises the threshold when the
 * first of them is freed, and from then on they come from the arenas.
 * Their rare coincidences keep raising the arenas' high-water marks for a
 * long time: the floor creeps for many minutes before it settles.  With
 * --max-block-kb sizes above the bound are drawn again below it: with
 * small blocks only, the arenas reach their high water within seconds.
 */
static size_t pick_size(uint64_t *s)
{
	unsigned int r = next_rand(s) % 100;
	size_t size;

	if (r < 70)
		size = rand_between(s, 64, 1024);
	else if (r < 96)
		size = rand_between(s, 1025, 64 << 10);
	else
		size = rand_between(s, 100 << 10, 300 << 10);
	return size <= opt.max_block ? size : rand_between(s, 64, opt.max_block);
}

static void *map_zeroed(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	return p;
}

/*
 * Make every page of the block resident, as a program writing its data
 * would: one byte per page (and the last).  Filling every byte cost a
 * third of this target's CPU and changed nothing the tests look at: the
 * pages resident are the same.
 */
static void touch_pages(char *p, size_t len)
{
	size_t off;

	if (!len)
		return;
	for (off = 0; off < len; off += 4096)
		p[off] = 0x5a;
	p[len - 1] = 0x5a;
}

static struct block *block_new(uint64_t *rng)
{
	size_t size = pick_size(rng);
	struct block *b = malloc(size);

	if (!b)
		die("malloc");
	b->next = NULL;
	b->size = size;
	memcpy(b + 1, marker, sizeof(marker));
	touch_pages((char *)(b + 1) + sizeof(marker), size - sizeof(*b) - sizeof(marker));
	atomic_fetch_add(&live_bytes, size);
	atomic_fetch_add(&live_blocks, 1);
	atomic_fetch_add(&allocs, 1);
	return b;
}

static void block_free(struct block *b)
{
	atomic_fetch_sub(&live_bytes, b->size);
	atomic_fetch_sub(&live_blocks, 1);
	atomic_fetch_add(&frees, 1);
	free(b);
}

/* Hand a block to a random other worker, which will free it. */
static void send_block(struct worker *from, struct block *b)
{
	int to = from->id;
	struct worker *w;

	if (opt.threads > 1)
		to = (to + 1 + next_rand(&from->rng) % (opt.threads - 1)) %
		     opt.threads;
	w = &workers[to];
	check(pthread_mutex_lock(&w->inbox_lock), "pthread_mutex_lock");
	b->next = w->inbox;
	w->inbox = b;
	check(pthread_mutex_unlock(&w->inbox_lock), "pthread_mutex_unlock");
}

/* Random eviction: some blocks live long and pin their arena's top. */
static void evict_one(struct worker *w)
{
	size_t i = next_rand(&w->rng) % w->nheld;
	struct block *b = w->held[i];

	w->held[i] = w->held[--w->nheld];
	w->held_bytes -= b->size;
	block_free(b);
}

static void keep_block(struct worker *w, struct block *b)
{
	if (w->nheld == w->held_cap) {
		block_free(b);
		return;
	}
	w->held[w->nheld++] = b;
	w->held_bytes += b->size;
}

/* Take the inbox, then free until we hold no more than our share. */
static void receive(struct worker *w)
{
	size_t share = opt.live_target / opt.threads;
	struct block *b, *next;

	check(pthread_mutex_lock(&w->inbox_lock), "pthread_mutex_lock");
	b = w->inbox;
	w->inbox = NULL;
	check(pthread_mutex_unlock(&w->inbox_lock), "pthread_mutex_unlock");
	for (; b; b = next) {
		next = b->next;
		keep_block(w, b);
	}
	while (w->nheld && w->held_bytes > share)
		evict_one(w);
}

static int is_hot(const struct worker *w, double t)
{
	long epoch = (long)((t - t0) * 1000 / opt.epoch_ms);

	return (w->id + epoch) % opt.threads < opt.hot_threads;
}

/* Allocate this tick's part of --allocs-per-s and send it away. */
static void produce(struct worker *w, double dt, int hot)
{
	uint64_t limit = opt.live_target + opt.live_target / 8;
	double share;

	if (hot)
		share = opt.hot_share / opt.hot_threads;
	else
		share = (1 - opt.hot_share) / (opt.threads - opt.hot_threads);
	w->credit += opt.allocs_per_s * share * dt;
	while (w->credit >= 1 && atomic_load(&live_bytes) < limit) {
		send_block(w, block_new(&w->rng));
		w->credit -= 1;
	}
	if (w->credit > 1)
		w->credit = 1;
}

/*
 * The quiescent point, outside malloc and free and holding no inbox lock:
 * wait here while paused.  Returns 0 once the workers must stop.
 */
static int keep_going(void)
{
	if (!atomic_load(&pause_requested))
		return !atomic_load(&stop);
	check(pthread_mutex_lock(&pause_lock), "pthread_mutex_lock");
	npaused++;
	check(pthread_cond_signal(&paused_cond), "pthread_cond_signal");
	while (atomic_load(&pause_requested) && !atomic_load(&stop))
		check(pthread_cond_wait(&resume_cond, &pause_lock),
		      "pthread_cond_wait");
	npaused--;
	check(pthread_mutex_unlock(&pause_lock), "pthread_mutex_unlock");
	return !atomic_load(&stop);
}

static void *worker_main(void *arg)
{
	struct timespec tick = { 0, TICK_NS };
	struct worker *w = arg;
	double last = now();

	while (keep_going()) {
		double t, dt;
		int rc;

		t = now();
		dt = t - last < MAX_TICK_S ? t - last : MAX_TICK_S;
		last = t;
		receive(w);
		produce(w, dt, is_hot(w, t));
		rc = clock_nanosleep(CLOCK_MONOTONIC, 0, &tick, NULL);
		if (rc && rc != EINTR)
			check(rc, "clock_nanosleep");
	}
	return NULL;
}

static void start_workers(void)
{
	int i;

	workers = map_zeroed(opt.threads * sizeof(*workers));
	for (i = 0; i < opt.threads; i++) {
		struct worker *w = &workers[i];

		w->id = i;
		w->rng = 0x9e3779b97f4a7c15ULL * (i + 1);
		w->held_cap = opt.live_target / opt.threads / 64 + 1024;
		w->held = map_zeroed(w->held_cap * sizeof(*w->held));
		check(pthread_mutex_init(&w->inbox_lock, NULL),
		      "pthread_mutex_init");
	}
	for (i = 0; i < opt.threads; i++)
		start_thread(&workers[i].thread, NULL, worker_main, &workers[i],
			     "churn", i);
}

static void stop_workers(void)
{
	int i;

	atomic_store(&stop, 1);
	check(pthread_mutex_lock(&pause_lock), "pthread_mutex_lock");
	check(pthread_cond_broadcast(&resume_cond), "pthread_cond_broadcast");
	check(pthread_mutex_unlock(&pause_lock), "pthread_mutex_unlock");
	for (i = 0; i < opt.threads; i++)
		check(pthread_join(workers[i].thread, NULL), "pthread_join");
}

/* After the join: free every block still held or in flight. */
static void release_all(void)
{
	int i;

	for (i = 0; i < opt.threads; i++) {
		struct worker *w = &workers[i];
		struct block *b, *next;

		for (b = w->inbox; b; b = next) {
			next = b->next;
			block_free(b);
		}
		while (w->nheld)
			block_free(w->held[--w->nheld]);
		check(pthread_mutex_destroy(&w->inbox_lock),
		      "pthread_mutex_destroy");
		if (munmap(w->held, w->held_cap * sizeof(*w->held)))
			die("munmap");
	}
	if (munmap(workers, opt.threads * sizeof(*workers)))
		die("munmap");
}

static void pause_workers(void)
{
	atomic_store(&pause_requested, 1);
	check(pthread_mutex_lock(&pause_lock), "pthread_mutex_lock");
	while (npaused < opt.threads)
		check(pthread_cond_wait(&paused_cond, &pause_lock),
		      "pthread_cond_wait");
	check(pthread_mutex_unlock(&pause_lock), "pthread_mutex_unlock");
}

static void resume_workers(void)
{
	check(pthread_mutex_lock(&pause_lock), "pthread_mutex_lock");
	atomic_store(&pause_requested, 0);
	check(pthread_cond_broadcast(&resume_cond), "pthread_cond_broadcast");
	check(pthread_mutex_unlock(&pause_lock), "pthread_mutex_unlock");
}

static const char *phase_now(void)
{
	if (atomic_load(&pause_requested))
		return "paused";
	return elapsed() < opt.warmup_seconds ? "warmup" : "steady";
}

/* A truth line; phase NULL for the phase now. */
static void truth_write(const char *phase)
{
	FILE *f = truth_begin(phase ? phase : phase_now());

	if (!f)
		return;
	fprintf(f, ",\"threads\":%d,\"live_target_bytes\":%zu,"
		"\"allocs_per_s\":%.0f,\"hot_threads\":%d,\"hot_share\":%.3f,"
		"\"epoch_ms\":%.0f,\"live_bytes\":%" PRIu64 ","
		"\"live_blocks\":%" PRIu64 ",\"allocs\":%" PRIu64 ","
		"\"frees\":%" PRIu64, opt.threads, opt.live_target,
		opt.allocs_per_s, opt.hot_threads, opt.hot_share, opt.epoch_ms,
		atomic_load(&live_bytes), atomic_load(&live_blocks),
		atomic_load(&allocs), atomic_load(&frees));
	truth_end();
}

/* With --pause-signal: SIGUSR1 pauses every worker, SIGUSR2 resumes. */
static void on_pause_signal(int sig)
{
	if (sig == SIGUSR1 && !atomic_load(&pause_requested)) {
		pause_workers();
		truth_write("paused");
	} else if (sig == SIGUSR2 && atomic_load(&pause_requested)) {
		resume_workers();
		truth_write(NULL);
	}
}

static void option(int val, const char *name, const char *arg)
{
	switch (val) {
	case 'n':
		opt.threads = parse_num(name, arg, 1, 1024);
		break;
	case 'l':
		opt.live_target = parse_num(name, arg, 1, 1024) * (1 << 20);
		break;
	case 'r':
		opt.allocs_per_s = parse_num(name, arg, 1, 1e7);
		break;
	case 'H':
		opt.hot_threads = parse_num(name, arg, 1, 1024);
		break;
	case 'S':
		opt.hot_share = parse_num(name, arg, 0, 1);
		break;
	case 'e':
		opt.epoch_ms = parse_num(name, arg, 1, 1e6);
		break;
	case 'w':
		opt.warmup_seconds = parse_num(name, arg, 0, 1e7);
		break;
	case 'p':
		opt.pause_signal = 1;
		break;
	case 'm':
		opt.max_block = parse_num(name, arg, 1, 300) * 1024;
		break;
	}
}

static const struct option options[] = {
	{ "threads", required_argument, NULL, 'n' },
	{ "live-mb", required_argument, NULL, 'l' },
	{ "allocs-per-s", required_argument, NULL, 'r' },
	{ "hot-threads", required_argument, NULL, 'H' },
	{ "hot-share", required_argument, NULL, 'S' },
	{ "epoch-ms", required_argument, NULL, 'e' },
	{ "warmup-seconds", required_argument, NULL, 'w' },
	{ "pause-signal", no_argument, NULL, 'p' },
	{ "max-block-kb", required_argument, NULL, 'm' },
	{ NULL, 0, NULL, 0 }
};

static const struct cli cli = {
	.usage =
	"usage: arena_churn [options]\n"
	"  --seconds N         exit after N seconds (default 60)\n"
	"  --truth FILE        append ground truth as JSON lines\n"
	"  --threads N         worker threads (default 8)\n"
	"  --live-mb N         live set bound in MiB (default 32)\n"
	"  --allocs-per-s N    allocations per second, all workers (default 20000)\n"
	"  --hot-threads N     workers doing most allocations at a time (default 1)\n"
	"  --hot-share F       fraction of allocations they do (default 0.75)\n"
	"  --epoch-ms N        rotate the hot role every N ms (default 250)\n"
	"  --warmup-seconds N  report phase \"warmup\" for N seconds (default 0)\n"
	"  --pause-signal      SIGUSR1 pauses every worker, SIGUSR2 resumes\n"
	"  --max-block-kb N    no block above N KiB (default 300): with small blocks\n"
	"                      only, the floor settles within seconds\n",
	.options = options,
	.option = option,
};

int main(int argc, char **argv)
{
	static const int pause_signals[] = { SIGUSR1, SIGUSR2, 0 };

	parse_options(argc, argv, &cli);
	if (opt.hot_threads >= opt.threads) {
		opt.hot_threads = opt.threads;
		opt.hot_share = 1;
	}
	target_begin(opt.pause_signal ? pause_signals : NULL);
	start_workers();
	main_loop(&(struct main_loop){ .report = truth_write,
				       .signal = on_pause_signal });
	stop_workers();
	truth_write("exit");
	release_all();
	truth_close();
	return 0;
}

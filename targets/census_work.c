/*
 * census_work: a glibc heap whose contents are known exactly, for
 * `vitals census` (which walks malloc's chunk headers from outside and
 * counts content separately in live and free chunks).
 *
 * Every "marker object" is one malloc()ed block of one of the sizes in
 * sizes[] (72, 120, 264, 1000 or 5000 bytes: chunks of 80 and 128 bytes,
 * tcache and fastbin sizes; 272 and 1008, tcache and smallbin sizes; 5008,
 * a largebin size), filled with the byte FILL except for the --marker
 * string and its NUL at MARKER_OFFSET (32) from the start of the block.
 * Each size is a multiple of 16 less 8, so the chunk's usable size is the
 * size asked for and the whole of it is written.  Offset 32 survives
 * free(): a free chunk's links take offsets 0..15 of its user data (tcache
 * next and key, fastbin and bin fd and bk) and 16..31 in a large bin
 * (fd_nextsize, bk_nextsize).
 *
 * The main thread and --threads workers ("census-N", each in its own
 * arena while there are fewer than 8 x cores threads: glibc's default,
 * M_ARENA_MAX is left alone) each build their share of the heap: --big
 * mmapped blocks first (main thread only; 300 KiB .. 1 MiB, above the
 * 128 KiB mmap threshold, the marker at offset 32 too), then their share
 * of --live and --freed marker objects, allocated in a random interleaving
 * so that the freed ones lie between live ones.  Once all are allocated,
 * the doomed ones are freed: first the sizes above the fastbin limit
 * (into the tcache, 7 a size, then the unsorted bin, coalescing with
 * their free neighbours or into top), then the fastbin sizes (tcache, then
 * fastbins: freed last, no large free consolidates them).  Then one
 * 24-byte block ("sorter", no marker, kept live) is allocated: a size no
 * free list holds, so malloc sorts the unsorted bin into the small and
 * large bins on its way to a chunk it splits.  Nothing allocates after
 * that while the heap is still.  The main thread also keeps the --secret
 * block, if any (the string at offset 32 of a block of 48 + its length),
 * in main_arena.
 *
 * So when the heap is still (phase ready, paused, exit) exactly
 * live_markers = --live + --big live blocks hold the marker, once each,
 * at offset 32; the other live blocks (each arena's sorter and tcache,
 * stdio's and libc's own) hold none.  The freed_markers copies freed sit
 * in free chunks (tcache, fastbins, small, large and unsorted bins,
 * coalesced into bigger free chunks or into top), except those that a
 * later split overwrote (the sorter's split) or that went back to the
 * kernel with a trimmed top: a scan finds at least live_markers and at
 * most live_markers + freed_markers copies.
 *
 * --mode quiescent (default): after building, every worker waits on a
 * condition variable and the main thread in sigtimedwait(); nothing
 * calls malloc or free until the exit line is written, and every line
 * from "ready" on carries mallinfo2()'s ten fields, taken as it is
 * written (no truth line allocates: the truth file's buffer is ours, and
 * wiped after each line so that the marker the line names is not left in
 * memory).  --mode mutate: after the "ready" line (a still heap, with
 * mallinfo2), the workers churn: each of --churn-per-s steps frees one of
 * its worker's live marker objects at random and allocates a new one of
 * a random size in its place, so the live count stays within
 * live_markers - threads .. live_markers (a slot is empty only between
 * that free and that malloc) and freed_markers grows.  SIGUSR1 parks
 * every worker between two steps (phase "paused": the count is exact and
 * mallinfo2 is there), SIGUSR2 resumes; in quiescent mode either signal
 * just writes a line at once.  The exit line is written with the workers
 * parked, before any thread ends (a thread's exit frees its tcache).
 *
 * All our bookkeeping (the arrays of pointers) is mmap()ed, outside the
 * heap.  The marker itself is never copied anywhere but into the objects:
 * --marker is read in place in argv, on the stack.
 */
#include <inttypes.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>

#include "common.h"

#define MARKER_OFFSET	32	/* where the marker starts in an object */
#define MARKER_MAX	39	/* it and its NUL fit the smallest size */
#define SECRET_MAX	256
#define FILL		0xa5	/* every other byte of an object */
#define FAST_MAX	120	/* the largest request glibc puts in a fastbin */
#define SORTER_BYTES	24	/* a chunk size nothing else uses */
#define BIG_MIN		(300u << 10)
#define BIG_MAX		(1024u << 10)
#define MAX_THREADS	64
#define TICK_NS		1000000L	/* churning workers wake every ms */
#define MAX_TICK_S	0.01		/* never catch up more than this */

#define SMALLEST	72	/* sizes[0] */
static const size_t sizes[] = { SMALLEST, 120, 264, 1000, 5000 };
#define NSIZES		(sizeof(sizes) / sizeof(sizes[0]))
#define NSMALL		2	/* sizes[0..NSMALL-1] are fastbin sizes */
_Static_assert(MARKER_OFFSET + MARKER_MAX + 1 <= SMALLEST, "marker fits");

enum mode { QUIESCENT, MUTATE };

/* One thread's share of the heap: index 0 is main, then the workers. */
struct ctx {
	pthread_t thread;
	pid_t tid;
	uint64_t rng;
	size_t nlive;		/* its share of --live */
	size_t nfreed;		/* its share of --freed */
	char **held;		/* its live objects, mmap()ed */
	unsigned char *held_size;	/* index into sizes[] of each */
	size_t live_by_size[NSIZES];
	void *sorter;		/* the 24-byte block, no marker */
	double credit;		/* churn steps owed to the rate */
	_Atomic uint64_t churns;
} __attribute__((aligned(64)));

static struct {
	int threads;
	size_t live;
	size_t freed;
	size_t big;
	const char *marker;
	const char *secret;
	enum mode mode;
	double churn_per_s;
	int free_small;		/* --free-sizes small */
} opt = {
	.threads = 4,
	.live = 20000,
	.freed = 60000,
	.big = 4,
	.marker = "VITALS-CENSUS-MARKER-LIVE",
	.mode = QUIESCENT,
	.churn_per_s = 50000,
};

static size_t marker_len;
static struct ctx *ctxs;	/* threads + 1, mmap()ed */
static char **bigs;		/* the --big blocks */
static char *secret_block;
static _Atomic uint64_t freed_total;
static char truth_buf[1 << 16];	/* the truth file's stdio buffer */

static atomic_int stop;
static atomic_int pause_requested;
static pthread_mutex_t pause_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t resume_cond = PTHREAD_COND_INITIALIZER;
static pthread_cond_t paused_cond = PTHREAD_COND_INITIALIZER;
static int npaused;
static int ready;		/* the heap is built */

static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

static void *map_zeroed(size_t size)
{
	void *p;

	if (!size)
		return NULL;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("mmap");
	return p;
}

static void unmap(void *p, size_t size)
{
	if (p && munmap(p, size))
		die("munmap");
}

/* A block of 'size' bytes: filler, and the marker at MARKER_OFFSET. */
static char *new_marked(size_t size)
{
	char *p = malloc(size);

	if (!p)
		die("malloc");
	memset(p, FILL, size);
	memcpy(p + MARKER_OFFSET, opt.marker, marker_len + 1);
	return p;
}

/* A size index for a live object, or for a freed one. */
static unsigned pick_size(uint64_t *rng, int doomed)
{
	unsigned n = doomed && opt.free_small ? NSMALL : NSIZES;

	return next_rand(rng) % n;
}

/*
 * Allocate the share of live and doomed objects interleaved at random,
 * free the doomed ones (large sizes first, fastbin sizes last), then
 * allocate the sorter.  Nothing of ours in this arena allocates after.
 */
static void build(struct ctx *c)
{
	size_t total = c->nlive + c->nfreed, i, kept = 0, nf = 0;
	char **doomed = map_zeroed(c->nfreed * sizeof(*doomed));
	unsigned char *doomed_size = map_zeroed(c->nfreed);
	int pass;

	for (i = 0; i < total; i++) {
		int doom = next_rand(&c->rng) % (total - i) < c->nfreed - nf;
		unsigned k = pick_size(&c->rng, doom);

		if (doom) {
			doomed[nf] = new_marked(sizes[k]);
			doomed_size[nf++] = k;
		} else {
			c->held[kept] = new_marked(sizes[k]);
			c->held_size[kept++] = k;
			c->live_by_size[k]++;
		}
	}
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < nf; i++)
			if ((sizes[doomed_size[i]] <= FAST_MAX) == pass)
				free(doomed[i]);
	atomic_fetch_add(&freed_total, nf);
	c->sorter = malloc(SORTER_BYTES);
	if (!c->sorter)
		die("malloc");
	memset(c->sorter, 0, SORTER_BYTES);
	unmap(doomed, c->nfreed * sizeof(*doomed));
	unmap(doomed_size, c->nfreed);
}

/* Replace one live object at random by a new one of a random size. */
static void churn_step(struct ctx *c)
{
	size_t i = next_rand(&c->rng) % c->nlive;
	unsigned k = pick_size(&c->rng, 0);

	free(c->held[i]);
	c->live_by_size[c->held_size[i]]--;
	atomic_fetch_add(&freed_total, 1);
	c->held[i] = new_marked(sizes[k]);
	c->held_size[i] = k;
	c->live_by_size[k]++;
	atomic_fetch_add(&c->churns, 1);
}

/*
 * The quiescent point, outside malloc and free, every slot full: wait
 * here while paused.  Returns 0 once the workers must stop.
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
	struct ctx *c = arg;
	double last;

	c->tid = gettid();
	build(c);
	last = now();
	while (keep_going()) {
		double t = now(), dt;
		int rc;

		dt = t - last < MAX_TICK_S ? t - last : MAX_TICK_S;
		last = t;
		c->credit += opt.churn_per_s / opt.threads * dt;
		while (c->credit >= 1 && c->nlive) {
			churn_step(c);
			c->credit -= 1;
		}
		if (c->credit > 1)
			c->credit = 1;
		rc = clock_nanosleep(CLOCK_MONOTONIC, 0, &tick, NULL);
		if (rc && rc != EINTR)
			check(rc, "clock_nanosleep");
	}
	return NULL;
}

/* Wait until every worker is parked. */
static void wait_parked(void)
{
	check(pthread_mutex_lock(&pause_lock), "pthread_mutex_lock");
	while (npaused < opt.threads)
		check(pthread_cond_wait(&paused_cond, &pause_lock),
		      "pthread_cond_wait");
	check(pthread_mutex_unlock(&pause_lock), "pthread_mutex_unlock");
}

static void pause_workers(void)
{
	atomic_store(&pause_requested, 1);
	wait_parked();
}

static void resume_workers(void)
{
	check(pthread_mutex_lock(&pause_lock), "pthread_mutex_lock");
	atomic_store(&pause_requested, 0);
	check(pthread_cond_broadcast(&resume_cond), "pthread_cond_broadcast");
	check(pthread_mutex_unlock(&pause_lock), "pthread_mutex_unlock");
}

static void stop_workers(void)
{
	atomic_store(&stop, 1);
	check(pthread_mutex_lock(&pause_lock), "pthread_mutex_lock");
	check(pthread_cond_broadcast(&resume_cond), "pthread_cond_broadcast");
	check(pthread_mutex_unlock(&pause_lock), "pthread_mutex_unlock");
	for (int i = 1; i <= opt.threads; i++)
		check(pthread_join(ctxs[i].thread, NULL), "pthread_join");
}

/* Split --live and --freed over main and the workers; their arrays. */
static void plan(void)
{
	int n = opt.threads + 1;

	ctxs = map_zeroed(n * sizeof(*ctxs));
	for (int i = 0; i < n; i++) {
		struct ctx *c = &ctxs[i];

		c->rng = 0x9e3779b97f4a7c15ULL * (i + 1);
		c->nlive = opt.live / n + ((size_t)i < opt.live % n);
		c->nfreed = opt.freed / n + ((size_t)i < opt.freed % n);
		c->held = map_zeroed(c->nlive * sizeof(*c->held));
		c->held_size = map_zeroed(c->nlive);
	}
	bigs = map_zeroed(opt.big * sizeof(*bigs));
}

/* The main thread's own blocks: the big ones first, before any free. */
static void build_main(void)
{
	size_t i;

	ctxs[0].tid = getpid();
	for (i = 0; i < opt.big; i++) {
		size_t size = BIG_MIN;

		if (opt.big > 1)
			size += (BIG_MAX - BIG_MIN) / (opt.big - 1) * i;
		bigs[i] = new_marked(size);
	}
	if (opt.secret) {
		size_t len = strlen(opt.secret);

		secret_block = malloc(48 + len);
		if (!secret_block)
			die("malloc");
		memset(secret_block, FILL, 48 + len);
		memcpy(secret_block + MARKER_OFFSET, opt.secret, len + 1);
	}
	build(&ctxs[0]);
}

static void release_all(void)
{
	for (int i = 0; i <= opt.threads; i++) {
		struct ctx *c = &ctxs[i];

		for (size_t j = 0; j < c->nlive; j++)
			free(c->held[j]);
		free(c->sorter);
		unmap(c->held, c->nlive * sizeof(*c->held));
		unmap(c->held_size, c->nlive);
	}
	for (size_t j = 0; j < opt.big; j++)
		free(bigs[j]);
	free(secret_block);
	unmap(bigs, opt.big * sizeof(*bigs));
	unmap(ctxs, (opt.threads + 1) * sizeof(*ctxs));
}

/* ---- Truth ---- */

static const char *phase_now(void)
{
	if (!ready)
		return "building";
	if (opt.mode == QUIESCENT)
		return "ready";
	return atomic_load(&pause_requested) ? "paused" : "mutating";
}

static void write_mallinfo2(FILE *f)
{
	struct mallinfo2 mi = mallinfo2();

	fprintf(f, ",\"mallinfo2\":{\"arena\":%zu,\"ordblks\":%zu,"
		"\"smblks\":%zu,\"hblks\":%zu,\"hblkhd\":%zu,\"usmblks\":%zu,"
		"\"fsmblks\":%zu,\"uordblks\":%zu,\"fordblks\":%zu,"
		"\"keepcost\":%zu}", mi.arena, mi.ordblks, mi.smblks, mi.hblks,
		mi.hblkhd, mi.usmblks, mi.fsmblks, mi.uordblks, mi.fordblks,
		mi.keepcost);
}

/* A truth line; phase NULL for the phase now. */
static void truth_write(const char *phase)
{
	const char *p = phase ? phase : phase_now();
	/*
	 * Nothing allocates or frees once built with the workers parked
	 * (only this thread pauses them, and waits until they all are).
	 */
	int still = ready && atomic_load(&pause_requested);
	size_t live = opt.live + opt.big;
	uint64_t churns = 0;
	FILE *f = truth_begin(p);
	unsigned k;
	int i;

	if (!f)
		return;
	for (i = 1; i <= opt.threads; i++)
		churns += atomic_load(&ctxs[i].churns);
	fprintf(f, ",\"mode\":\"%s\",\"threads\":%d,\"marker\":\"%s\","
		"\"marker_offset\":%d,\"live_markers\":%zu,"
		"\"freed_markers\":%" PRIu64 ",\"big_markers\":%zu,"
		"\"secret_bytes\":%zu,\"free_sizes\":\"%s\",\"sizes\":[",
		opt.mode == QUIESCENT ? "quiescent" : "mutate", opt.threads,
		opt.marker, MARKER_OFFSET, live, atomic_load(&freed_total),
		opt.big, opt.secret ? strlen(opt.secret) : 0,
		opt.free_small ? "small" : "all");
	for (k = 0; k < NSIZES; k++)
		fprintf(f, "%s%zu", k ? "," : "", sizes[k]);
	fputc(']', f);
	if (opt.mode == MUTATE)
		fprintf(f, ",\"churn_per_s\":%.0f,\"churns\":%" PRIu64 ","
			"\"live_markers_min\":%zu,\"live_markers_max\":%zu",
			opt.churn_per_s, churns,
			still ? live : live - opt.threads, live);
	fprintf(f, ",\"main_live\":%zu,\"main_freed\":%zu,\"workers\":[",
		ctxs[0].nlive, ctxs[0].nfreed);
	for (i = 1; i <= opt.threads; i++)
		fprintf(f, "%s{\"name\":\"census-%d\",\"tid\":%d,"
			"\"live\":%zu,\"freed\":%zu}", i > 1 ? "," : "", i - 1,
			(int)ctxs[i].tid, ctxs[i].nlive, ctxs[i].nfreed);
	fputc(']', f);
	if (still) {
		size_t by_size[NSIZES] = { 0 };

		for (i = 0; i <= opt.threads; i++)
			for (k = 0; k < NSIZES; k++)
				by_size[k] += ctxs[i].live_by_size[k];
		fputs(",\"live_by_size\":[", f);
		for (k = 0; k < NSIZES; k++)
			fprintf(f, "%s%zu", k ? "," : "", by_size[k]);
		fputc(']', f);
		write_mallinfo2(f);
	}
	truth_end();
	/* The line named the marker: leave no copy of it in our memory. */
	memset(truth_buf, 0, sizeof(truth_buf));
}

/*
 * SIGUSR1 and SIGUSR2: in mutate mode, park every worker and resume
 * them; in quiescent mode, a line at once.
 */
static void on_signal(int sig)
{
	if (opt.mode == QUIESCENT) {
		truth_write(NULL);
	} else if (sig == SIGUSR1 && !atomic_load(&pause_requested)) {
		pause_workers();
		truth_write("paused");
	} else if (sig == SIGUSR2 && atomic_load(&pause_requested)) {
		resume_workers();
		truth_write(NULL);
	}
}

/* ---- Options ---- */

/* Printable ASCII but '"' and '\\' (written into JSON as it is). */
static const char *text_arg(const char *name, const char *arg, size_t max)
{
	size_t len = strlen(arg);
	const char *p;

	for (p = arg; *p; p++)
		if (*p < 0x20 || *p > 0x7e || *p == '"' || *p == '\\')
			break;
	if (!len || len > max || *p) {
		fprintf(stderr, "%s: bad value for --%s: 1..%zu printable "
			"characters, no '\"' or '\\'\n",
			program_invocation_short_name, name, max);
		exit(EXIT_USAGE);
	}
	return arg;
}

static void option(int val, const char *name, const char *arg)
{
	switch (val) {
	case 'n':
		opt.threads = parse_num(name, arg, 0, MAX_THREADS);
		break;
	case 'l':
		opt.live = parse_num(name, arg, 0, 1e6);
		break;
	case 'f':
		opt.freed = parse_num(name, arg, 0, 1e6);
		break;
	case 'b':
		opt.big = parse_num(name, arg, 0, 64);
		break;
	case 'm':
		opt.marker = text_arg(name, arg, MARKER_MAX);
		break;
	case 'S':
		opt.secret = text_arg(name, arg, SECRET_MAX);
		break;
	case 'M':
		if (!strcmp(arg, "quiescent")) {
			opt.mode = QUIESCENT;
		} else if (!strcmp(arg, "mutate")) {
			opt.mode = MUTATE;
		} else {
			fprintf(stderr, "%s: --mode is quiescent or mutate\n",
				program_invocation_short_name);
			exit(EXIT_USAGE);
		}
		break;
	case 'r':
		opt.churn_per_s = parse_num(name, arg, 0, 1e7);
		break;
	case 'F':
		if (!strcmp(arg, "all") || !strcmp(arg, "small")) {
			opt.free_small = arg[0] == 's';
		} else {
			fprintf(stderr, "%s: --free-sizes is all or small\n",
				program_invocation_short_name);
			exit(EXIT_USAGE);
		}
		break;
	}
}

static const struct option options[] = {
	{ "threads", required_argument, NULL, 'n' },
	{ "live", required_argument, NULL, 'l' },
	{ "freed", required_argument, NULL, 'f' },
	{ "big", required_argument, NULL, 'b' },
	{ "marker", required_argument, NULL, 'm' },
	{ "secret", required_argument, NULL, 'S' },
	{ "mode", required_argument, NULL, 'M' },
	{ "churn-per-s", required_argument, NULL, 'r' },
	{ "free-sizes", required_argument, NULL, 'F' },
	{ NULL, 0, NULL, 0 }
};

static const struct cli cli = {
	.usage =
	"usage: census_work [options]\n"
	"  --seconds N         exit after N seconds (default 60)\n"
	"  --truth FILE        append ground truth as JSON lines\n"
	"  --threads N         worker threads census-N, each in its own arena\n"
	"                      (default 4, at most 64)\n"
	"  --live N            marker objects kept live, over main and the\n"
	"                      workers (default 20000)\n"
	"  --freed N           marker objects written and then freed (default 60000)\n"
	"  --big N             live mmapped blocks of 300 KiB .. 1 MiB carrying the\n"
	"                      marker too, counted in live_markers (default 4)\n"
	"  --marker TEXT       the marker, at offset 32 of every object, up to 39\n"
	"                      characters (default VITALS-CENSUS-MARKER-LIVE)\n"
	"  --secret TEXT       keep one live block holding TEXT (never in the truth)\n"
	"  --mode M            quiescent: build, then nothing allocates (default);\n"
	"                      mutate: the workers keep replacing live objects\n"
	"  --churn-per-s N     mutate: replacements a second, all workers (default 50000)\n"
	"  --free-sizes S      all (default), or small: every freed object <= 120\n"
	"                      bytes (tcache, then fastbins)\n"
	"SIGUSR1 pauses the mutating workers, SIGUSR2 resumes them; in quiescent\n"
	"mode either writes a truth line at once.  \"ready\" follows the pid line\n"
	"once the heap is built.\n",
	.options = options,
	.option = option,
};

int main(int argc, char **argv)
{
	static const int signals[] = { SIGUSR1, SIGUSR2, 0 };

	parse_options(argc, argv, &cli);
	marker_len = strlen(opt.marker);
	target_begin(signals);
	/* Before the first line: the truth file's buffer is ours. */
	if (truth && setvbuf(truth, truth_buf, _IOFBF, sizeof(truth_buf)))
		die("setvbuf");
	plan();
	truth_write("building");

	/* Every worker parks once built: the whole heap is then still. */
	atomic_store(&pause_requested, 1);
	for (int i = 1; i <= opt.threads; i++)
		start_thread(&ctxs[i].thread, NULL, worker_main, &ctxs[i],
			     "census", i - 1);
	build_main();
	wait_parked();
	ready = 1;
	truth_write("ready");
	if (opt.mode == MUTATE)
		resume_workers();
	printf("ready\n");
	if (fflush(stdout))
		die("stdout");

	main_loop(&(struct main_loop){ .report = truth_write,
				       .signal = on_signal });
	if (opt.mode == MUTATE)
		pause_workers();
	truth_write("exit");
	stop_workers();
	release_all();
	truth_close();
	return 0;
}

/*
 * test_glibc_heap.c — the chunk walk (alloc/glibc_heap.c) on a real glibc
 * heap: a child builds a heap with every kind of chunk (live, in bins, in
 * fast bins, in tcaches, top, mmapped) in its main arena and in three
 * thread arenas, asks its own mallinfo2() and parks.  The walk from outside
 * (process_vm_readv) must add up to the same ten fields, find main_arena
 * from mallinfo2's code alone, and count the chunks the child knows it
 * freed into tcaches and fast bins.  Then the same walk over a copy of the
 * heap with one header torn: it must skip, not crash.
 *
 * Then long fast-bin lists (alloc/glibc_heap.c follows them a link of every
 * list a round, in one read_each call): a child with 121 arenas, nine fast
 * lists each (more lists than a round reads), and a main arena whose lists
 * hold tens of thousands of links freed in a shuffled order, each link to a
 * chunk megabytes away; the fast chunks must be exactly those mallinfo2
 * counts, with and without read_each, and every count the same both ways.
 */
#include "harness.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc/glibc_heap.h"
#include "base/buf.h"
#include "proc/maps.h"
#include "proc/mem.h"

#define THREADS 3
#define FREED_SMALL 20          /* 40-byte blocks freed per thread: 7 to tcache, 13 to a fast bin */

static void *volatile big[THREADS + 1];   /* kept where the compiler cannot drop them */
static volatile int nbig;

/* What one thread of the child does: keep some, free some of each kind. */
static void build(void)
{
	void *keep[400], *small[FREED_SMALL], *mid[64];
	int i;

	for (i = 0; i < 400; i++)
		keep[i] = malloc(16 + (size_t)(i % 50) * 24);
	for (i = 0; i < FREED_SMALL; i++)
		small[i] = malloc(40);
	for (i = 0; i < 64; i++)
		mid[i] = malloc(2000 + (size_t)i * 16);
	/* mmapped; before the frees: a large request would merge the fast bins */
	big[__atomic_fetch_add(&nbig, 1, __ATOMIC_RELAXED)] = malloc(300 << 10);
	for (i = 0; i < 64; i += 2)
		free(mid[i]);                  /* bins: too big for tcache */
	for (i = 0; i < FREED_SMALL; i++)
		free(small[i]);
	for (i = 0; i < 400; i += 3)
		free(keep[i]);
	for (i = 1; i < 400; i += 3)
		((char *volatile *)keep)[i][0] = 1;
}

static pthread_mutex_t park = PTHREAD_MUTEX_INITIALIZER;
static int built;

static void *worker(void *arg)
{
	(void)arg;
	build();
	pthread_mutex_lock(&park);
	built++;
	pthread_mutex_unlock(&park);
	for (;;)
		pause();
	return NULL;
}

/* The child: build, report mallinfo2 on fd, park.  Never returns. */
static void child(int fd)
{
	pthread_t t[THREADS];
	struct mallinfo2 mi;
	int i, n;

	build();
	for (i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	do {
		usleep(1000);
		pthread_mutex_lock(&park);
		n = built;
		pthread_mutex_unlock(&park);
	} while (n < THREADS);
	mi = mallinfo2();
	if (write(fd, &mi, sizeof(mi)) != (ssize_t)sizeof(mi))
		_exit(1);
	for (;;)
		pause();
}

static int pid_read(void *ctx, uint64_t addr, void *out, size_t len)
{
	pid_t pid = *(pid_t *)ctx;
	struct iovec l = { out, len }, r = { (void *)(uintptr_t)addr, len };

	return process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -1;
}

static void read_maps(pid_t pid, struct vt_region_list *maps)
{
	char path[64], *text;
	size_t len;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	CHECK(f != NULL);
	if (!f)
		return;
	text = malloc(1 << 20);
	len = fread(text, 1, (1 << 20) - 1, f);
	text[len] = 0;
	fclose(f);
	CHECK(vt_maps_parse(text, len, maps, NULL) == VT_OK);
	free(text);
}

struct tally {
	uint64_t pieces, bytes, first;
};

static void count_piece(void *ctx, const struct vt_chunk_piece *p)
{
	struct tally *t = ctx;

	t->pieces++;
	t->bytes += p->len;
	t->first += p->first;
}

/* An arena image in this process's memory: reads at its address come from it. */
#define MS_BYTES 2200
static uint64_t fake_ms[MS_BYTES / 8 + 1];

static int self_read(void *ctx, uint64_t addr, void *out, size_t len)
{
	(void)ctx;
	if (addr < (uintptr_t)fake_ms || addr + len > (uintptr_t)fake_ms + MS_BYTES)
		return -1;
	memcpy(out, (const void *)(uintptr_t)addr, len);
	return 0;
}

/* fake_ms as a one-arena ring: top set, bins 1..lists in use, the rest empty, 1..torn half-done. */
static void fake_arena(unsigned lists, unsigned torn)
{
	uint64_t a = (uintptr_t)fake_ms;
	unsigned i;

	memset(fake_ms, 0, sizeof(fake_ms));
	fake_ms[96 / 8] = 0x5555a0000010ULL;                        /* top */
	for (i = 1; i < 128; i++) {
		uint64_t *fdbk = &fake_ms[(112 + 16 * (i - 1)) / 8];
		uint64_t self = a + 112 - 16 + 16 * (i - 1);

		if (i <= lists) {
			fdbk[0] = 0x5555a0001000ULL + 0x100 * i;
			fdbk[1] = 0x5555a0801000ULL + 0x100 * i;
			if (i <= torn)
				fdbk[1] = self;                              /* bk back home, fd not yet */
		} else {
			fdbk[0] = fdbk[1] = self;
		}
	}
	fake_ms[2160 / 8] = a;                                      /* next: itself */
}

/*
 * A busy arena has almost no empty bin, and a read of it may catch a few
 * lists half-unlinked: it is an arena all the same.  The check wanted 16
 * empty bins and none half-done, and census failed on a busy glibc 2.36
 * target 1 time in 6, blaming the glibc version.
 */
static void test_glibc_heap__busy_arena_checks(void)
{
	struct vt_heap_mem m = { self_read, NULL, NULL };
	uint64_t a = (uintptr_t)fake_ms;
	size_t n = 0;

	fake_arena(127, 0);                      /* every bin in use */
	CHECK(vt_glibc_arena_check(&m, a, &n) && n == 1);
	fake_arena(120, 3);                      /* and three caught mid-unlink */
	CHECK(vt_glibc_arena_check(&m, a, &n) && n == 1);
	fake_arena(120, 9);                      /* nine: something else */
	CHECK(!vt_glibc_arena_check(&m, a, &n));
	fake_arena(10, 0);
	fake_ms[(112 + 16 * 20) / 8] = 0x5555a0001008ULL;   /* a link not 16-byte aligned */
	CHECK(!vt_glibc_arena_check(&m, a, &n));
	fake_arena(10, 0);
	fake_ms[(112 + 16 * 30) / 8] = 0;                   /* a NULL link */
	CHECK(!vt_glibc_arena_check(&m, a, &n));
	fake_arena(10, 0);
	fake_ms[(112 + 16 * 40) / 8] = 0xffff888000001000ULL; /* a kernel address */
	CHECK(!vt_glibc_arena_check(&m, a, &n));
	fake_arena(10, 0);
	fake_ms[96 / 8] = 0;                                /* no top chunk */
	CHECK(!vt_glibc_arena_check(&m, a, &n));
	fake_arena(10, 0);
	fake_ms[2160 / 8] = a + 4096;                       /* a ring that leads away */
	CHECK(!vt_glibc_arena_check(&m, a, &n));
	memset(fake_ms, 0, sizeof(fake_ms));
	CHECK(!vt_glibc_arena_check(&m, a, &n));
}

static void test_glibc_heap__walk_equals_mallinfo2(void)
{
	struct vt_region_list maps = { 0 };
	struct vt_heap_walk w;
	struct vt_mallinfo got;
	struct mallinfo2 want;
	struct tally tally = { 0 };
	uint64_t main_arena = 0, fast = 0, tcache = 0, chunks = 0;
	int fds[2];
	pid_t pid;
	size_t i, n;

#if defined(__SANITIZE_ADDRESS__)
	printf("# under AddressSanitizer malloc is the sanitizer's, not glibc's: nothing to walk\n");
	return;
#endif
	CHECK(pipe(fds) == 0);
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		child(fds[1]);
	}
	close(fds[1]);
	CHECK(read(fds[0], &want, sizeof(want)) == (ssize_t)sizeof(want));
	close(fds[0]);

	{
		struct vt_heap_mem m = { pid_read, NULL, &pid };
		struct vt_heap_walk_opts o = { .safe_linking = true, .maps = &maps, .visit = count_piece,
					       .visit_ctx = &tally };

		read_maps(pid, &maps);
		/* the child's libc is ours (fork): mallinfo2's code is the same bytes at the same address */
		CHECK(vt_glibc_find_main_arena(&m, (const uint8_t *)(uintptr_t)mallinfo2, 512,
					       (uint64_t)(uintptr_t)mallinfo2, &main_arena, NULL) == VT_OK);
		CHECK(vt_glibc_arena_check(&m, main_arena, &n) && n == THREADS + 1);
		{       /* code without a lea to an arena: not found, nothing guessed */
			static const uint8_t no_lea[64];
			uint64_t none = 1;

			CHECK(vt_glibc_find_main_arena(&m, no_lea, sizeof(no_lea), 0x1000, &none, NULL) ==
			      VT_E_NOTFOUND && none == 0);
		}
		o.main_arena = main_arena;
		CHECK(vt_heap_walk(&m, &o, &w, NULL) == VT_OK);
		vt_heap_walk_mallinfo(&w, &got);
	}
	CHECK_EQ_U64(got.arena, want.arena);
	CHECK_EQ_U64(got.ordblks, want.ordblks);
	CHECK_EQ_U64(got.smblks, want.smblks);
	CHECK_EQ_U64(got.hblks, want.hblks);
	CHECK_EQ_U64(got.hblkhd, want.hblkhd);
	CHECK_EQ_U64(got.usmblks, want.usmblks);
	CHECK_EQ_U64(got.fsmblks, want.fsmblks);
	CHECK_EQ_U64(got.uordblks, want.uordblks);
	CHECK_EQ_U64(got.fordblks, want.fordblks);
	CHECK_EQ_U64(got.keepcost, want.keepcost);
	CHECK(w.tcache_key_known);
	for (i = 0; i < w.narenas; i++) {
		const struct vt_arena_walk *a = &w.arenas[i];

		fast += a->chunks[VT_CHUNK_FAST];
		tcache += a->chunks[VT_CHUNK_TCACHE];
		for (n = 0; n < VT_CHUNK_KINDS; n++)
			chunks += a->chunks[n];
		CHECK_EQ_U64(a->skipped, 0);
		CHECK(a->free_resident <= a->bytes[VT_CHUNK_BIN] + a->bytes[VT_CHUNK_FAST] + a->bytes[VT_CHUNK_TCACHE] +
					   a->top_size);
		printf("# arena %zu%s: %" PRIu64 " live, %" PRIu64 " bin, %" PRIu64 " fast, %" PRIu64
		       " tcache chunks; top %" PRIu64 " B; %" PRIu64 " B free resident, %" PRIu64 " B trimmable\n",
		       i, a->main ? " (main)" : "", a->chunks[VT_CHUNK_LIVE], a->chunks[VT_CHUNK_BIN],
		       a->chunks[VT_CHUNK_FAST], a->chunks[VT_CHUNK_TCACHE], a->top_size, a->free_resident, a->trimmable);
	}
	/* each thread freed 20 40-byte blocks: 7 into its tcache and 13 into a fast bin, beside the 1-in-3 keeps */
	CHECK(fast >= (uint64_t)(THREADS + 1) * (FREED_SMALL - 7));
	CHECK(tcache >= (uint64_t)(THREADS + 1) * 7);
	CHECK_EQ_U64(tally.first, chunks + w.mmapped_chunks);
	CHECK_EQ_U64(w.mmapped_chunks, THREADS + 1);
	vt_heap_walk_release(&w);
	vt_region_list_release(&maps);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* ---- long fast-bin lists, in many arenas ------------------------------------ */

#define LISTS_THREADS 120        /* arenas beside main: 121 x 9 fast lists, more than a round's 1024 reads */
#define LISTS_SMALL 60000        /* fast-size blocks in the main arena; 2 in 3 freed, shuffled */
#define FAST_SIZES 9             /* requests of 24..152 bytes: chunks of 32..160, the fast bins M_MXFAST 160 allows */

static int lists_built;

static void *lists_worker(void *arg)
{
	void *v[FAST_SIZES * 12];
	int i;

	(void)arg;
	for (i = 0; i < FAST_SIZES * 12; i++)
		v[i] = malloc(24 + (size_t)(i % FAST_SIZES) * 16);
	for (i = 0; i < FAST_SIZES * 12; i++)
		free(v[i]);                    /* 7 of a size into the tcache, 5 into its fast bin */
	pthread_mutex_lock(&park);
	lists_built++;
	pthread_mutex_unlock(&park);
	for (;;)
		pause();
	return NULL;
}

/* The child: long shuffled lists in the main arena, short ones in 120 more; mallinfo2 on fd; park. */
static void lists_child(int fd)
{
	static void *small[LISTS_SMALL], *mid[LISTS_SMALL / 8];
	pthread_attr_t attr;
	pthread_t t;
	struct mallinfo2 mi;
	uint64_t x = 88172645463325252ull;
	int i, n;

	mallopt(M_MXFAST, 160);              /* nine fast bins: chunks up to 160 bytes */
	mallopt(M_ARENA_MAX, LISTS_THREADS + 8);
	for (i = 0; i < LISTS_SMALL; i++) {
		small[i] = malloc(24 + (size_t)(i % FAST_SIZES) * 16);
		if (i % 8 == 0)
			mid[i / 8] = malloc(1000);      /* kept: the fast chunks lie apart, lists cross windows */
	}
	for (i = LISTS_SMALL - 1; i > 0; i--) {     /* shuffle: each link leads anywhere in the heap */
		void *tmp;
		int j;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		j = (int)(x % (uint64_t)(i + 1));
		tmp = small[i];
		small[i] = small[j];
		small[j] = tmp;
	}
	for (i = 0; i < LISTS_SMALL; i++)
		if (i % 3)
			free(small[i]);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 << 10);
	for (i = 0; i < LISTS_THREADS; i++)
		if (pthread_create(&t, &attr, lists_worker, NULL))
			_exit(1);
	do {
		usleep(1000);
		pthread_mutex_lock(&park);
		n = lists_built;
		pthread_mutex_unlock(&park);
	} while (n < LISTS_THREADS);
	((void *volatile *)mid)[0] = mid[1];
	mi = mallinfo2();
	if (write(fd, &mi, sizeof(mi)) != (ssize_t)sizeof(mi))
		_exit(1);
	for (;;)
		pause();
}

static void test_glibc_heap__long_fast_lists(void)
{
	struct vt_region_list maps = { 0 };
	struct vt_heap_walk w[2];
	struct vt_mallinfo got;
	struct mallinfo2 want;
	struct tally tally[2] = { { 0 } };
	struct vt_mem_target t = { .pagemap_fd = -1 };
	uint64_t main_arena = 0, fast_main = 0;
	int fds[2], way;
	pid_t pid;
	size_t i, k, n;

#if defined(__SANITIZE_ADDRESS__)
	printf("# under AddressSanitizer malloc is the sanitizer's, not glibc's: nothing to walk\n");
	return;
#endif
	CHECK(pipe(fds) == 0);
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		lists_child(fds[1]);
	}
	close(fds[1]);
	CHECK(read(fds[0], &want, sizeof(want)) == (ssize_t)sizeof(want));
	close(fds[0]);
	t.pid = pid;
	read_maps(pid, &maps);
	for (way = 0; way < 2; way++) {    /* 0: read_each, a round in one call; 1: one read a link */
		struct vt_heap_mem m = { vt_mem_target_read, NULL, &t, way ? NULL : vt_mem_target_read_each };
		struct vt_heap_walk_opts o = { .safe_linking = true, .maps = &maps, .visit = count_piece,
					       .visit_ctx = &tally[way] };

		CHECK(vt_glibc_find_main_arena(&m, (const uint8_t *)(uintptr_t)mallinfo2, 512,
					       (uint64_t)(uintptr_t)mallinfo2, &main_arena, NULL) == VT_OK);
		o.main_arena = main_arena;
		CHECK(vt_heap_walk(&m, &o, &w[way], NULL) == VT_OK);
		CHECK_EQ_U64(w[way].narenas, LISTS_THREADS + 1);
		CHECK_EQ_U64(w[way].fast_bad, 0);
		vt_heap_walk_mallinfo(&w[way], &got);
		CHECK_EQ_U64(got.smblks, want.smblks);
		CHECK_EQ_U64(got.fsmblks, want.fsmblks);
		CHECK_EQ_U64(got.ordblks, want.ordblks);
		CHECK_EQ_U64(got.fordblks, want.fordblks);
		CHECK_EQ_U64(got.uordblks, want.uordblks);
	}
	for (i = 0; i < w[0].narenas && i < w[1].narenas; i++)
		for (k = 0; k < VT_CHUNK_KINDS; k++) {
			CHECK_EQ_U64(w[0].arenas[i].chunks[k], w[1].arenas[i].chunks[k]);
			CHECK_EQ_U64(w[0].arenas[i].bytes[k], w[1].arenas[i].bytes[k]);
		}
	CHECK_EQ_U64(tally[0].pieces, tally[1].pieces);
	CHECK_EQ_U64(tally[0].bytes, tally[1].bytes);
	CHECK_EQ_U64(tally[0].first, tally[1].first);
	/* the main arena: 2 in 3 of its 60,000 small blocks freed, all but 7 a size in fast bins */
	fast_main = w[0].arenas[0].chunks[VT_CHUNK_FAST];
	CHECK(fast_main >= LISTS_SMALL * 2 / 3 - 7 * FAST_SIZES - FAST_SIZES);
	for (i = 1, n = 0; i < w[0].narenas; i++) {
		n += w[0].arenas[i].chunks[VT_CHUNK_FAST] == 5 * FAST_SIZES;
		if (i == 1)
			printf("# arena 1: %" PRIu64 " fast chunks\n", w[0].arenas[i].chunks[VT_CHUNK_FAST]);
	}
	CHECK_EQ_U64(n, LISTS_THREADS);
	printf("# %" PRIu64 " fast chunks in the main arena, %zu arenas with 9 fast bins of 5; %" PRIu64
	       " B read with read_each, %" PRIu64 " B without\n", fast_main, n, w[0].read_bytes, w[1].read_bytes);
	vt_heap_walk_release(&w[0]);
	vt_heap_walk_release(&w[1]);
	vt_region_list_release(&maps);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

VT_TEST_MAIN(test_glibc_heap__busy_arena_checks, test_glibc_heap__walk_equals_mallinfo2,
	     test_glibc_heap__long_fast_lists)

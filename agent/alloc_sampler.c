/*
 * alloc_sampler.c — in-process allocation sampling, in
 * libvitals-agent-allocs.so only (built with VT_AGENT_ALLOCS=1; the plain
 * libvitals-agent.so has none of this and interposes nothing).
 *
 * malloc, free, calloc, realloc, memalign, posix_memalign, aligned_alloc,
 * valloc and pvalloc are defined here and forward every call to the NEXT
 * definition in the lookup order (dlsym(RTLD_NEXT)): glibc's, or a
 * jemalloc/tcmalloc preloaded after the agent, which keeps owning its
 * blocks.  malloc_usable_size, reallocarray and the rest are not
 * interposed: they reach the next allocator directly, which is right since
 * every block is that allocator's.  valloc and pvalloc are counted and
 * sampled as "memalign" (page-aligned memaligns).
 *
 * Disarmed (the default, and always with VITALS_AGENT=0, which starts no
 * listener to arm it), a wrapper costs the load of the forwarded pointer,
 * one relaxed atomic load of `armed` and a branch, then a tail call; free
 * also compares the pointer with the bootstrap arena.  A client arms it
 * over the socket ({"want":"allocs","start":true}, agent/protocol.h):
 *  - every thread counts its calls and bytes per entry point and its frees
 *    in a cache-line shard it owns (claimed by CAS, given back by a
 *    pthread key destructor when the thread exits), with plain loads and
 *    stores: no locked instruction per call.  Threads beyond NSHARDS share
 *    one more shard with atomic adds.  Counters are never reset (a late
 *    store of a thread preempted across a reset would undo it): a session
 *    reports their growth from a baseline taken at its start;
 *  - each thread has a byte countdown drawn from an exponential
 *    distribution of mean `every` (its own splitmix64 generator, no libc
 *    rand); an allocation that takes it to zero or below is sampled, and a
 *    fresh countdown is drawn.  So an allocation of s bytes is sampled with
 *    probability 1 - exp(-s/every), and sum(s / (1 - exp(-s/every))) over
 *    the samples estimates the bytes allocated (the countdown is rounded
 *    up to whole bytes, which keeps that probability exact);
 *  - a sample records size, entry point, pointer, tid (gettid, cached in
 *    TLS), CLOCK_MONOTONIC ns and up to MAX_FRAMES return addresses from
 *    _Unwind_Backtrace (libgcc_s), leaf first, the agent's own frames left
 *    out.  Allocations made while a thread samples (the unwinder's, a
 *    signal handler's) are neither sampled nor counted (TLS busy flag);
 *  - a sampled pointer goes in an open-addressing table so that its free,
 *    or the realloc that moves or frees it, while armed, stamps freed_ns
 *    and freed_tid in its sample.  A 4 KiB bitmap of the slots that keys
 *    hash to is read first, so the free of a block never sampled mostly
 *    touches nothing bigger;
 *  - the deadline given at start is checked on the sampling path and by the
 *    listener (agent_allocs_tick): past it, sampling disarms itself.
 *
 * Tables: MAX_SAMPLES samples of MAX_FRAMES frames and a live table of
 * LIVE_SLOTS pointers, one mmap (about 2.8 MiB of address space, touched as
 * used) made by the listener at the first start and kept for the life of
 * the process: a sampling thread may still read it after a stop.  8,192
 * samples, not 16,384: at 32 frames the reply's worst case (SAMPLE_JSON_MAX
 * a sample) must fit in VT_AGENT_REPLY_MAX, and 16,384 would need 13.6 MiB.
 * When the table is full, further samples are counted in "dropped".
 *
 * Cost (bench/agent_allocs: malloc(64)+free pairs, 5.7 or 11.7 ns a pair
 * alone on the 2-core build VM, whose vCPUs change speed): 1.06-1.12x
 * disarmed, 2.0x armed at every=524288 (the counting of every call), 4x at
 * every=4096; a sample 0.9-1.5 us (the unwinding).
 *
 * Concurrency: no locks on any allocation path.  Writers of the tables
 * (a sample, a free of a sampled block) enter a section: inflight++, then
 * check armed (both seq_cst); the listener disarms, then waits for
 * inflight to reach 0 (at most QUIET_WAIT_MS) before it reads or resets
 * anything.  Either the writer sees the disarm or the listener sees the
 * writer.  A sample is published by storing its session number in ready
 * last; the live table's entries carry the session too, so a straggler
 * from an earlier session cannot stamp a later one's sample.
 *
 * Bootstrap: dlsym may allocate.  While a thread resolves the next
 * functions (TLS resolving), its allocations come from a static bump arena
 * (BOOT_ARENA bytes, never reused) and free() ignores pointers inside it.
 * Resolution is lock-free and idempotent (racing threads store the same
 * pointers), so a fork() in the middle cannot leave a lock held; it runs
 * on the first call of any wrapper, which is usually ld.so's or another
 * library's constructor's, before this library's own constructor.
 *
 * fork: the child (pthread_atfork) is disarmed, forgets the session (it
 * has no listener to serve it) and its cached tid.  Never prints, never
 * aborts, never calls malloc from the listener.
 */
#include "core.h"
#include "protocol.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <unwind.h>

#define MAX_SAMPLES   8192u
#define MAX_FRAMES    32
#define LIVE_SLOTS    (4 * MAX_SAMPLES)      /* power of two; load <= 1/4 */
#define LIVE_PROBES   64
#define LIVE_TOMB     ((uintptr_t)1)
#define NSHARDS       256                    /* owned shards; one more is shared */
#define SHARD_SHARED  (NSHARDS + 1)          /* ts.shard of a thread without its own */
#define BOOT_ARENA    (64u << 10)
#define QUIET_WAIT_MS 500

#define EVERY_DEFAULT  524288
#define EVERY_MAX      1073741824
#define FOR_MS_DEFAULT 60000
#define FOR_MS_MAX     3600000

/*
 * Longest JSON of one sample: {"size":<20>,"fn":"posix_memalign","ptr":"0x<16>",
 * "tid":<10>,"t_ns":<20>,"freed_ns":<20>,"freed_tid":<10>,"pcs":[...]} and the
 * comma before it is 188 bytes; each frame "0x<16>", is 21.
 */
#define SAMPLE_JSON_MAX (200 + 21 * MAX_FRAMES)
_Static_assert((unsigned long long)MAX_SAMPLES * SAMPLE_JSON_MAX + 4096 <= VT_AGENT_REPLY_MAX,
	       "a full sample table must fit in one reply");
_Static_assert(MAX_SAMPLES <= 0xffff, "a live entry holds a 16-bit sample index");

#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

enum fn { FN_MALLOC, FN_CALLOC, FN_REALLOC, FN_MEMALIGN, FN_POSIX_MEMALIGN, FN_ALIGNED_ALLOC, FN_N };

static const char *const fn_name[FN_N] = {
	"malloc", "calloc", "realloc", "memalign", "posix_memalign", "aligned_alloc",
};

/* ---- the next allocator ------------------------------------------------ */

struct next_fns {
	void *(*malloc)(size_t);
	void (*free)(void *);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void *(*memalign)(size_t, size_t);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
};

static struct next_fns next;     /* each member stored and loaded atomically */

/* glibc's own entry points: the fallback when dlsym finds nothing. */
extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);

/* ---- per thread ---------------------------------------------------------- */

struct tstate {
	int64_t countdown;   /* bytes to the next sample, drawn for session gen */
	uint64_t rng;        /* splitmix64 state; 0: not seeded */
	uint32_t gen;        /* the session the countdown belongs to */
	int32_t tid;         /* gettid(), 0 until read */
	uint32_t shard;      /* 1 + its own counter shard, SHARD_SHARED, or 0 until given one */
	bool busy;           /* inside the sampler: allocations now are not ours to count */
	bool resolving;      /* inside dlsym: allocations come from the arena */
};

static __thread struct tstate ts __attribute__((tls_model("initial-exec")));

/* ---- shared state ---------------------------------------------------------- */

struct shard {
	_Atomic uint64_t calls[FN_N];
	_Atomic uint64_t bytes;
	_Atomic uint64_t frees;
};
_Static_assert(sizeof(struct shard) == 64, "one cache line a shard");

struct sample {
	_Atomic uint32_t ready;      /* session number once complete */
	uint8_t fn;
	uint8_t npcs;
	int32_t tid;
	uint64_t size;
	uintptr_t ptr;
	uint64_t t_ns;
	_Atomic uint64_t freed_ns;   /* 0 while live */
	_Atomic int32_t freed_tid;
	uintptr_t pcs[MAX_FRAMES];
};

struct tables {
	_Atomic uint64_t home[LIVE_SLOTS / 64];  /* bit h: some key hashed to slot h */
	struct sample samples[MAX_SAMPLES];
	/* 0 empty, LIVE_TOMB removed, else a pointer; page-aligned for MADV_DONTNEED */
	_Alignas(4096) _Atomic uintptr_t keys[LIVE_SLOTS];
	_Atomic uint32_t vals[LIVE_SLOTS];    /* session << 16 | sample index */
};

static struct shard shards[NSHARDS + 1] __attribute__((aligned(64)));
static atomic_int shard_owned[NSHARDS];   /* 1 while a live thread owns shards[k] */
static atomic_uint next_shard;
static pthread_key_t shard_key;           /* its destructor gives the shard back */
static bool shard_key_ok;

static atomic_int armed;                  /* the one thing the fast path reads */
static atomic_int inflight;               /* threads inside a table-writing section */
static _Atomic uint32_t session;          /* bumped at each start */
static _Atomic uint64_t every_bytes = EVERY_DEFAULT;
static _Atomic uint64_t deadline_ns;
static _Atomic uint64_t t1_ns;            /* when it disarmed */
static atomic_int expired;                /* it disarmed at the deadline */
static _Atomic uint64_t claimed;          /* sample slots handed out (may pass MAX_SAMPLES) */
static _Atomic uint64_t dropped;
static struct tables *_Atomic tab;

/* The listener's own (one request at a time). */
static bool started;                      /* a session exists to report */
static struct shard base;                 /* the counters when it started */
static struct shard counted;              /* their growth, taken at its first stop */
static bool counted_taken;
static uint64_t t0_ns;
static uint64_t t1_reported;
static bool expired_reported;
static uint64_t every_reported;

/* The agent's executable segment, whose frames a stack leaves out. */
static uintptr_t self_lo, self_hi;
static int interposing;                   /* 0 unknown, 1 malloc is ours, 2 it is not */

static unsigned char boot_arena[BOOT_ARENA] __attribute__((aligned(4096)));
static atomic_size_t boot_used;

/* ---- small helpers --------------------------------------------------------- */

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int32_t my_tid(void)
{
	if (!ts.tid)
		ts.tid = (int32_t)gettid();
	return ts.tid;
}

/*
 * A shard of the calling thread's own, or SHARD_SHARED.  Called with
 * ts.busy set: pthread_setspecific may allocate (keys past the first 32).
 */
__attribute__((noinline)) static uint32_t shard_claim(void)
{
	uint32_t start, i;

	if (!shard_key_ok)
		return SHARD_SHARED;
	start = atomic_fetch_add_explicit(&next_shard, 1, memory_order_relaxed);
	for (i = 0; i < NSHARDS; i++) {
		uint32_t k = (start + i) % NSHARDS;
		int free_ = 0;

		if (atomic_load_explicit(&shard_owned[k], memory_order_relaxed) == 0 &&
		    atomic_compare_exchange_strong_explicit(&shard_owned[k], &free_, 1, memory_order_acquire,
							    memory_order_relaxed)) {
			if (pthread_setspecific(shard_key, (void *)(uintptr_t)(k + 1)) == 0)
				return k + 1;
			atomic_store_explicit(&shard_owned[k], 0, memory_order_release);
			break;
		}
	}
	return SHARD_SHARED;
}

/* At thread exit: what it frees from now on goes to the shared shard. */
static void shard_release(void *v)
{
	uintptr_t k = (uintptr_t)v;

	ts.shard = SHARD_SHARED;
	if (k >= 1 && k <= NSHARDS)
		atomic_store_explicit(&shard_owned[k - 1], 0, memory_order_release);
}

/* Add v to a counter of the calling thread's shard: a plain add when it owns it. */
static inline void count(_Atomic uint64_t *c, uint64_t v)
{
	if (ts.shard != SHARD_SHARED)
		atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + v, memory_order_relaxed);
	else
		atomic_fetch_add_explicit(c, v, memory_order_relaxed);
}

static inline struct shard *my_shard(void)
{
	if (!ts.shard)
		ts.shard = shard_claim();
	return &shards[ts.shard - 1];
}

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* ln(u) for u in (0, 1], to about 1e-9 relative, without libm. */
static double ln_unit(double u)
{
	union { double d; uint64_t b; } x = { .d = u };
	int e = (int)((x.b >> 52) & 0x7ff) - 1023;
	double m, t, t2;

	x.b = (x.b & 0x000fffffffffffffull) | 0x3ff0000000000000ull;   /* m in [1, 2) */
	m = x.d;
	if (m > 1.4142135623730951) {
		m *= 0.5;
		e++;
	}
	t = (m - 1) / (m + 1);                  /* |t| <= 0.172 */
	t2 = t * t;
	return e * 0.6931471805599453 +
	       2 * t * (1 + t2 * (1.0 / 3 + t2 * (1.0 / 5 + t2 * (1.0 / 7 + t2 * (1.0 / 9)))));
}

/* A countdown: ceil of an exponential draw of mean every_bytes, at least 1. */
__attribute__((noinline)) static int64_t draw_countdown(void)
{
	double u, x;
	int64_t c;

	if (!ts.rng)
		ts.rng = (uint64_t)my_tid() * 0x9e3779b97f4a7c15ull ^ now_ns() ^ (uintptr_t)&ts;
	u = (double)((splitmix64(&ts.rng) >> 11) + 1) * 0x1.0p-53;      /* (0, 1] */
	x = -ln_unit(u) * (double)atomic_load_explicit(&every_bytes, memory_order_relaxed);
	if (x >= 4e18)
		return (int64_t)4e18;
	c = (int64_t)x;
	if ((double)c < x)
		c++;
	return c > 0 ? c : 1;
}

/* ---- bootstrap arena ------------------------------------------------------ */

static bool in_boot(const void *p)
{
	return (uintptr_t)p - (uintptr_t)boot_arena < sizeof(boot_arena);
}

/* Zeroed bytes that are never reused; the size sits in the 8 bytes before. */
static void *boot_alloc(size_t n, size_t align)
{
	size_t old = atomic_load_explicit(&boot_used, memory_order_relaxed), start, end;

	if (align < 16)
		align = 16;
	if (align > 4096 || (align & (align - 1)) || n > sizeof(boot_arena))
		return NULL;
	do {
		start = (old + sizeof(size_t) + align - 1) & ~(align - 1);
		end = start + ((n + 15) & ~(size_t)15);
		if (end > sizeof(boot_arena))
			return NULL;
	} while (!atomic_compare_exchange_weak(&boot_used, &old, end));
	memcpy(boot_arena + start - sizeof(size_t), &n, sizeof(n));
	return boot_arena + start;
}

static size_t boot_size(const void *p)
{
	size_t n;

	memcpy(&n, (const unsigned char *)p - sizeof(size_t), sizeof(n));
	return n;
}

/* ---- resolving the next definitions -------------------------------------- */

static int fallback_posix_memalign(void **pp, size_t align, size_t n)
{
	void *p;

	if (align < sizeof(void *) || (align & (align - 1)))
		return EINVAL;
	p = __libc_memalign(align, n);
	if (!p)
		return ENOMEM;
	*pp = p;
	return 0;
}

#define STORE(field, value) __atomic_store_n(&next.field, (value), __ATOMIC_RELEASE)
#define LOAD(field)         __atomic_load_n(&next.field, __ATOMIC_ACQUIRE)

/*
 * Look every next definition up (lock-free: racing threads store the same
 * values).  The caller's allocations meanwhile come from the arena.
 */
static void resolve(void)
{
	void *p;
	int saved = errno;

	ts.resolving = true;
#define ONE(field, name, fallback)                                   \
	p = dlsym(RTLD_NEXT, name);                                  \
	STORE(field, p ? (__typeof__(next.field))p : (fallback));
	ONE(free, "free", __libc_free);
	ONE(calloc, "calloc", __libc_calloc);
	ONE(realloc, "realloc", __libc_realloc);
	ONE(memalign, "memalign", __libc_memalign);
	ONE(posix_memalign, "posix_memalign", fallback_posix_memalign);
	ONE(aligned_alloc, "aligned_alloc", __libc_memalign);
	ONE(valloc, "valloc", __libc_valloc);
	ONE(pvalloc, "pvalloc", __libc_pvalloc);
	ONE(malloc, "malloc", __libc_malloc);
#undef ONE
	ts.resolving = false;
	errno = saved;
}

/* ---- the live table ------------------------------------------------------- */

static size_t live_hash(uintptr_t p)
{
	return (size_t)(((uint64_t)p >> 4) * 0x9e3779b97f4a7c15ull >> 49) & (LIVE_SLOTS - 1);
}

/* The slot holding p, or -1 (reads only: callable outside a section). */
static long live_find(struct tables *t, uintptr_t p)
{
	size_t h = live_hash(p), i;

	if (!(atomic_load_explicit(&t->home[h / 64], memory_order_relaxed) & (1ull << (h % 64))))
		return -1;

	for (i = 0; i < LIVE_PROBES; i++, h = (h + 1) & (LIVE_SLOTS - 1)) {
		uintptr_t k = atomic_load_explicit(&t->keys[h], memory_order_acquire);
		if (k == p)
			return (long)h;
		if (k == 0)
			return -1;
	}
	return -1;
}

/* In a section.  A table at its probe limit leaves p untracked. */
static void live_insert(struct tables *t, uintptr_t p, uint32_t val)
{
	size_t h = live_hash(p), i;

	/* Before the key: whoever frees p learnt of it after this (the host's own ordering). */
	atomic_fetch_or_explicit(&t->home[h / 64], 1ull << (h % 64), memory_order_relaxed);
	for (i = 0; i < LIVE_PROBES; i++, h = (h + 1) & (LIVE_SLOTS - 1)) {
		uintptr_t k = atomic_load_explicit(&t->keys[h], memory_order_relaxed);
		if (k != 0 && k != LIVE_TOMB)
			continue;
		atomic_store_explicit(&t->vals[h], val, memory_order_relaxed);
		if (atomic_compare_exchange_strong(&t->keys[h], &k, p))
			return;
	}
}

/* ---- sections -------------------------------------------------------------- */

/* Enter: false (and already left) when sampling is off. */
static bool section_enter(void)
{
	atomic_fetch_add(&inflight, 1);
	if (atomic_load(&armed))
		return true;
	atomic_fetch_sub(&inflight, 1);
	return false;
}

static void section_leave(void)
{
	atomic_fetch_sub(&inflight, 1);
}

/* Disarm at the deadline dl, unless something else disarmed first. */
static void expire(uint64_t dl)
{
	int one = 1;

	if (atomic_compare_exchange_strong(&armed, &one, 0)) {
		atomic_store(&t1_ns, dl);
		atomic_store(&expired, 1);
	}
}

/* In a section: stamp the sample a live entry names as freed now. */
static void mark_freed(struct tables *t, uint32_t val)
{
	uint32_t idx = val & 0xffff;
	struct sample *s;

	if ((val >> 16) != (atomic_load(&session) & 0xffff) || idx >= MAX_SAMPLES)
		return;
	s = &t->samples[idx];
	atomic_store_explicit(&s->freed_tid, my_tid(), memory_order_relaxed);
	atomic_store_explicit(&s->freed_ns, now_ns(), memory_order_release);
}

/* ---- stacks ------------------------------------------------------------------ */

struct bt {
	uintptr_t *pcs;
	int n;
};

static _Unwind_Reason_Code bt_step(struct _Unwind_Context *ctx, void *arg)
{
	struct bt *b = arg;
	uintptr_t pc = (uintptr_t)_Unwind_GetIP(ctx);

	if (pc == 0)
		return _URC_END_OF_STACK;
	if (b->n == 0 && pc >= self_lo && pc < self_hi)
		return _URC_NO_REASON;           /* the agent's own frames, above the caller's */
	b->pcs[b->n++] = pc;
	return b->n < MAX_FRAMES ? _URC_NO_REASON : _URC_END_OF_STACK;
}

/*
 * ---- the armed paths --------------------------------------------------------
 * on_alloc and on_free are inlined into the wrappers' _slow functions: off
 * the disarmed path, but not cold (optimised for size, nothing inlined),
 * since while armed they run on every call.  Taking a sample is cold.
 */

__attribute__((noinline, cold)) static void take_sample(enum fn fn, void *p, size_t n)
{
	struct tables *t;
	struct sample *s;
	struct bt b;
	uint64_t now, dl, idx;
	uint32_t gen;
	int saved = errno;

	if (!section_enter())
		return;
	now = now_ns();
	dl = atomic_load_explicit(&deadline_ns, memory_order_relaxed);
	if (now >= dl) {
		expire(dl);
		goto out;
	}
	t = atomic_load_explicit(&tab, memory_order_acquire);
	idx = atomic_fetch_add_explicit(&claimed, 1, memory_order_relaxed);
	if (!t || idx >= MAX_SAMPLES) {
		atomic_fetch_add_explicit(&dropped, 1, memory_order_relaxed);
		goto out;
	}
	gen = atomic_load(&session);
	s = &t->samples[idx];
	s->fn = (uint8_t)fn;
	s->tid = my_tid();
	s->size = n;
	s->ptr = (uintptr_t)p;
	s->t_ns = now;
	atomic_store_explicit(&s->freed_ns, 0, memory_order_relaxed);
	atomic_store_explicit(&s->freed_tid, 0, memory_order_relaxed);
	b.pcs = s->pcs;
	b.n = 0;
	_Unwind_Backtrace(bt_step, &b);
	s->npcs = (uint8_t)b.n;
	live_insert(t, (uintptr_t)p, (gen & 0xffff) << 16 | (uint32_t)idx);
	atomic_store_explicit(&s->ready, gen, memory_order_release);
out:
	section_leave();
	errno = saved;
}

/* Count an allocation of n bytes that returned p (NULL: failed); maybe sample it. */
static inline __attribute__((always_inline)) void on_alloc(enum fn fn, void *p, size_t n)
{
	struct shard *sh;
	uint32_t gen;

	if (ts.busy)
		return;
	ts.busy = true;
	sh = my_shard();
	count(&sh->calls[fn], 1);
	count(&sh->bytes, n);
	gen = atomic_load_explicit(&session, memory_order_relaxed);
	if (ts.gen != gen) {
		ts.gen = gen;
		ts.countdown = draw_countdown();
	}
	ts.countdown -= n > INT64_MAX / 2 ? INT64_MAX / 2 : (int64_t)n;
	if (ts.countdown <= 0) {
		ts.countdown = draw_countdown();
		if (p && n)
			take_sample(fn, p, n);
	}
	ts.busy = false;
}

/*
 * Count a free of p (not NULL); stamp its sample if it has one.  Before the
 * real free.  A nested free (busy: a signal handler's) is not counted but
 * still leaves the live table, which takes no lock.
 */
static inline __attribute__((always_inline)) void on_free(void *p)
{
	struct tables *t;
	uintptr_t k = (uintptr_t)p;
	bool was_busy = ts.busy;
	long h;

	ts.busy = true;
	if (!was_busy)
		count(&my_shard()->frees, 1);
	t = atomic_load_explicit(&tab, memory_order_acquire);
	h = t ? live_find(t, k) : -1;
	if (h >= 0 && section_enter()) {
		if (atomic_compare_exchange_strong(&t->keys[h], &k, LIVE_TOMB))
			mark_freed(t, atomic_load_explicit(&t->vals[h], memory_order_relaxed));
		section_leave();
	}
	ts.busy = was_busy;
}

/*
 * realloc, armed: the old block leaves the live table before the real call
 * (so that its address cannot be handed out and sampled again first), and
 * goes back if the call failed.
 */
__attribute__((noinline)) static void *realloc_armed(void *(*f)(void *, size_t), void *p, size_t n)
{
	struct tables *t = atomic_load_explicit(&tab, memory_order_acquire);
	uintptr_t k = (uintptr_t)p;
	uint32_t val = 0;
	bool taken = false;
	void *q;
	long h;

	if (p && t) {
		h = live_find(t, k);
		if (h >= 0 && section_enter()) {
			if (atomic_compare_exchange_strong(&t->keys[h], &k, LIVE_TOMB)) {
				val = atomic_load_explicit(&t->vals[h], memory_order_relaxed);
				taken = true;
			}
			section_leave();
		}
	}
	q = f(p, n);
	if (taken && section_enter()) {
		if (!q && n)
			live_insert(t, (uintptr_t)p, val);    /* failed: p is still live */
		else
			mark_freed(t, val);
		section_leave();
	}
	on_alloc(FN_REALLOC, q, n);
	return q;
}

/* ---- the interposed functions --------------------------------------------------- */

#define EXPORT __attribute__((visibility("default")))
#define ARMED() atomic_load_explicit(&armed, memory_order_relaxed)
#define SLOW    __attribute__((noinline)) static

/*
 * Each wrapper is a fast path with no stack frame (the forwarded pointer
 * loaded and tested, armed loaded and tested, a tail call) and a _slow
 * function for everything else: the first call (resolve, or the arena while
 * resolving) and the armed path, where the counting is inlined.
 */

SLOW void *malloc_slow(size_t n)
{
	void *(*f)(size_t) = LOAD(malloc);
	void *p;

	if (!f) {
		if (ts.resolving)
			return boot_alloc(n, 16);
		resolve();
		f = LOAD(malloc);
	}
	if (!ARMED())
		return f(n);
	p = f(n);
	on_alloc(FN_MALLOC, p, n);
	return p;
}

EXPORT void *malloc(size_t n)
{
	void *(*f)(size_t) = LOAD(malloc);

	if (likely(f != NULL) && likely(!ARMED()))
		return f(n);
	return malloc_slow(n);
}

/* This library's own malloc, whatever the process binds "malloc" to. */
extern __typeof__(malloc) agent_self_malloc
	__attribute__((alias("malloc"), visibility("hidden"), copy(malloc)));

SLOW void free_slow(void *p)
{
	void (*f)(void *) = LOAD(free);

	if (!f) {
		if (ts.resolving)
			return;           /* only arena blocks exist yet on this path */
		resolve();
		f = LOAD(free);
	}
	if (ARMED() && p)
		on_free(p);
	f(p);
}

EXPORT void free(void *p)
{
	void (*f)(void *) = LOAD(free);

	if (unlikely(in_boot(p)))
		return;
	if (likely(f != NULL) && likely(!ARMED()))
		return f(p);
	free_slow(p);
}

SLOW void *calloc_slow(size_t k, size_t n)
{
	void *(*f)(size_t, size_t) = LOAD(calloc);
	size_t bytes;
	void *p;

	if (!f) {
		if (ts.resolving)
			return __builtin_mul_overflow(k, n, &bytes) ? NULL : boot_alloc(bytes, 16);
		resolve();
		f = LOAD(calloc);
	}
	if (!ARMED())
		return f(k, n);
	p = f(k, n);
	if (__builtin_mul_overflow(k, n, &bytes))
		bytes = 0;
	on_alloc(FN_CALLOC, p, bytes);
	return p;
}

EXPORT void *calloc(size_t k, size_t n)
{
	void *(*f)(size_t, size_t) = LOAD(calloc);

	if (likely(f != NULL) && likely(!ARMED()))
		return f(k, n);
	return calloc_slow(k, n);
}

/* An arena block: move it to the real heap (the arena never frees). */
SLOW void *boot_realloc(void *p, size_t n)
{
	void *q;

	if (!n)
		return NULL;
	q = ts.resolving || !LOAD(malloc) ? boot_alloc(n, 16) : LOAD(malloc)(n);
	if (q)
		memcpy(q, p, boot_size(p) < n ? boot_size(p) : n);
	return q;
}

SLOW void *realloc_slow(void *p, size_t n)
{
	void *(*f)(void *, size_t) = LOAD(realloc);

	if (!f) {
		if (ts.resolving)
			return p ? NULL : boot_alloc(n, 16);
		resolve();
		f = LOAD(realloc);
	}
	if (!ARMED())
		return f(p, n);
	return realloc_armed(f, p, n);
}

EXPORT void *realloc(void *p, size_t n)
{
	void *(*f)(void *, size_t) = LOAD(realloc);

	if (unlikely(in_boot(p)))
		return boot_realloc(p, n);
	if (likely(f != NULL) && likely(!ARMED()))
		return f(p, n);
	return realloc_slow(p, n);
}

SLOW void *memalign_slow(enum fn fn, size_t align, size_t n)
{
	void *(*f)(size_t, size_t) = fn == FN_ALIGNED_ALLOC ? LOAD(aligned_alloc) : LOAD(memalign);
	void *p;

	if (!f) {
		if (ts.resolving)
			return boot_alloc(n, align);
		resolve();
		f = fn == FN_ALIGNED_ALLOC ? LOAD(aligned_alloc) : LOAD(memalign);
	}
	if (!ARMED())
		return f(align, n);
	p = f(align, n);
	on_alloc(fn, p, n);
	return p;
}

EXPORT void *memalign(size_t align, size_t n)
{
	void *(*f)(size_t, size_t) = LOAD(memalign);

	if (likely(f != NULL) && likely(!ARMED()))
		return f(align, n);
	return memalign_slow(FN_MEMALIGN, align, n);
}

EXPORT void *aligned_alloc(size_t align, size_t n)
{
	void *(*f)(size_t, size_t) = LOAD(aligned_alloc);

	if (likely(f != NULL) && likely(!ARMED()))
		return f(align, n);
	return memalign_slow(FN_ALIGNED_ALLOC, align, n);
}

SLOW int posix_memalign_slow(void **pp, size_t align, size_t n)
{
	int (*f)(void **, size_t, size_t) = LOAD(posix_memalign);
	int rc;

	if (!f) {
		if (ts.resolving) {
			void *p = boot_alloc(n, align);
			if (!p)
				return ENOMEM;
			*pp = p;
			return 0;
		}
		resolve();
		f = LOAD(posix_memalign);
	}
	if (!ARMED())
		return f(pp, align, n);
	rc = f(pp, align, n);
	on_alloc(FN_POSIX_MEMALIGN, rc == 0 ? *pp : NULL, n);
	return rc;
}

EXPORT int posix_memalign(void **pp, size_t align, size_t n)
{
	int (*f)(void **, size_t, size_t) = LOAD(posix_memalign);

	if (likely(f != NULL) && likely(!ARMED()))
		return f(pp, align, n);
	return posix_memalign_slow(pp, align, n);
}

/* valloc and pvalloc: page-aligned memaligns, counted and sampled as "memalign". */
SLOW void *page_alloc_slow(bool pv, size_t n)
{
	void *(*f)(size_t) = pv ? LOAD(pvalloc) : LOAD(valloc);
	void *p;

	if (!f) {
		if (ts.resolving)
			return boot_alloc(n, 4096);
		resolve();
		f = pv ? LOAD(pvalloc) : LOAD(valloc);
	}
	if (!ARMED())
		return f(n);
	p = f(n);
	on_alloc(FN_MEMALIGN, p, n);
	return p;
}

EXPORT void *valloc(size_t n)
{
	void *(*f)(size_t) = LOAD(valloc);

	if (likely(f != NULL) && likely(!ARMED()))
		return f(n);
	return page_alloc_slow(false, n);
}

EXPORT void *pvalloc(size_t n)
{
	void *(*f)(size_t) = LOAD(pvalloc);

	if (likely(f != NULL) && likely(!ARMED()))
		return f(n);
	return page_alloc_slow(true, n);
}

/* ---- set-up ------------------------------------------------------------------- */

static int self_range_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t me = (uintptr_t)&self_range_cb;
	int i;

	(void)size;
	(void)arg;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && me >= lo && me < lo + ph->p_memsz) {
			self_lo = lo;
			self_hi = lo + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

void *agent_allocs_forwarded_malloc(void)
{
	if (!interposing) {
		void *def = dlsym(RTLD_DEFAULT, "malloc");
		interposing = def == (void *)agent_self_malloc ? 1 : 2;
	}
	if (interposing != 1)
		return NULL;
	if (!LOAD(malloc))
		resolve();
	return (void *)LOAD(malloc);
}

/* In the child of a fork: no listener, so no session; its one thread's tid is new. */
static void sampler_atfork_child(void)
{
	atomic_store(&armed, 0);
	atomic_store(&inflight, 0);
	started = false;
	ts.tid = 0;
}

__attribute__((constructor)) static void sampler_init(void)
{
	if (!LOAD(malloc))
		resolve();
	dl_iterate_phdr(self_range_cb, NULL);
	agent_allocs_forwarded_malloc();
	pthread_atfork(NULL, NULL, sampler_atfork_child);
	shard_key_ok = pthread_key_create(&shard_key, shard_release) == 0;
}

/* ---- the listener's side -------------------------------------------------------- */

long long agent_allocs_tick(void)
{
	uint64_t now, dl;

	if (!atomic_load(&armed))
		return -1;
	now = now_ns();
	dl = atomic_load(&deadline_ns);
	if (now >= dl) {
		expire(dl);
		return -1;
	}
	return (long long)((dl - now + 999999) / 1000000);
}

/* Disarm now (or note that the deadline did), then wait for the sections to drain. */
static void disarm_and_drain(void)
{
	struct timespec nap = { 0, 200 * 1000 };
	uint64_t now = now_ns(), dl = atomic_load(&deadline_ns), until;
	int one = 1;

	if (atomic_compare_exchange_strong(&armed, &one, 0)) {
		atomic_store(&t1_ns, now < dl ? now : dl);
		atomic_store(&expired, now >= dl);
	}
	/*
	 * A thread stopped inside a section (a signal handler that blocks,
	 * a debugger) must not hang the listener: its sample is left out
	 * (not ready) and counted as dropped.
	 */
	until = now + (uint64_t)QUIET_WAIT_MS * 1000000u;
	while (atomic_load(&inflight) > 0 && now_ns() < until)
		nanosleep(&nap, NULL);
}

/* Writes into a fixed buffer; sized so that it cannot overflow (SAMPLE_JSON_MAX). */
struct wbuf {
	char *p;
	size_t len, cap;
};

static void w_str(struct wbuf *w, const char *s)
{
	size_t n = strlen(s);

	if (n > w->cap - w->len)
		n = w->cap - w->len;
	memcpy(w->p + w->len, s, n);
	w->len += n;
}

static void w_u64(struct wbuf *w, uint64_t v)
{
	char tmp[20];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n && w->len < w->cap)
		w->p[w->len++] = tmp[--n];
}

static void w_hex(struct wbuf *w, uintptr_t v)
{
	static const char hex[] = "0123456789abcdef";
	char tmp[16];
	int n = 0;

	do {
		tmp[n++] = hex[v & 15];
		v >>= 4;
	} while (v);
	w_str(w, "\"0x");
	while (n && w->len < w->cap)
		w->p[w->len++] = tmp[--n];
	w_str(w, "\"");
}

static void put_sample(struct agent_sink *out, const struct sample *s, bool first)
{
	char buf[SAMPLE_JSON_MAX];
	struct wbuf w = { buf, 0, sizeof(buf) };
	uint64_t freed_ns = atomic_load_explicit(&s->freed_ns, memory_order_acquire);
	int i;

	w_str(&w, first ? "{\"size\":" : ",{\"size\":");
	w_u64(&w, s->size);
	w_str(&w, ",\"fn\":\"");
	w_str(&w, s->fn < FN_N ? fn_name[s->fn] : "?");
	w_str(&w, "\",\"ptr\":");
	w_hex(&w, s->ptr);
	w_str(&w, ",\"tid\":");
	w_u64(&w, (uint64_t)(uint32_t)s->tid);
	w_str(&w, ",\"t_ns\":");
	w_u64(&w, s->t_ns);
	w_str(&w, ",\"freed_ns\":");
	w_u64(&w, freed_ns);
	w_str(&w, ",\"freed_tid\":");
	w_u64(&w, freed_ns ? (uint64_t)(uint32_t)atomic_load_explicit(&s->freed_tid, memory_order_relaxed) : 0);
	w_str(&w, ",\"pcs\":[");
	for (i = 0; i < s->npcs && i < MAX_FRAMES; i++) {
		if (i)
			w_str(&w, ",");
		w_hex(&w, s->pcs[i]);
	}
	w_str(&w, "]}");
	agent_sink_put(out, buf, w.len);
}

static void put_head(struct agent_sink *out, bool is_armed)
{
	char buf[256];
	struct wbuf w = { buf, 0, sizeof(buf) };

	w_str(&w, "{\"v\":");
	w_u64(&w, VT_AGENT_PROTO_VERSION);
	w_str(&w, ",\"pid\":");
	w_u64(&w, (uint64_t)getpid());
	w_str(&w, is_armed ? ",\"allocs\":{\"armed\":true,\"every\":" : ",\"allocs\":{\"armed\":false,\"every\":");
	w_u64(&w, every_reported);
	w_str(&w, ",\"t0_ns\":");
	w_u64(&w, t0_ns);
	agent_sink_put(out, buf, w.len);
}

/* The sum of every shard, into plain fields of out. */
static void shards_sum(struct shard *out)
{
	int f, k;

	memset((void *)out, 0, sizeof(*out));
	for (k = 0; k <= NSHARDS; k++) {
		for (f = 0; f < FN_N; f++)
			out->calls[f] += atomic_load_explicit(&shards[k].calls[f], memory_order_relaxed);
		out->bytes += atomic_load_explicit(&shards[k].bytes, memory_order_relaxed);
		out->frees += atomic_load_explicit(&shards[k].frees, memory_order_relaxed);
	}
}

static void stop_reply(struct agent_sink *out)
{
	struct tables *t = atomic_load(&tab);
	uint64_t calls[FN_N], bytes, frees, total = 0, lost = 0, n, i;
	uint32_t gen = atomic_load(&session);
	char buf[512];
	struct wbuf w = { buf, 0, sizeof(buf) };
	bool first = true;
	int f;

	for (f = 0; f < FN_N; f++) {
		calls[f] = counted.calls[f];
		total += calls[f];
	}
	bytes = counted.bytes;
	frees = counted.frees;
	n = atomic_load(&claimed);
	if (n > MAX_SAMPLES)
		n = MAX_SAMPLES;
	for (i = 0; i < n; i++)
		if (atomic_load_explicit(&t->samples[i].ready, memory_order_acquire) != gen)
			lost++;

	put_head(out, false);
	w_str(&w, ",\"t1_ns\":");
	w_u64(&w, t1_reported);
	if (expired_reported)
		w_str(&w, ",\"expired\":true");
	w_str(&w, ",\"calls\":");
	w_u64(&w, total);
	w_str(&w, ",\"bytes\":");
	w_u64(&w, bytes);
	w_str(&w, ",\"frees\":");
	w_u64(&w, frees);
	w_str(&w, ",\"dropped\":");
	w_u64(&w, atomic_load(&dropped) + lost);
	w_str(&w, ",\"fns\":{");
	for (f = 0; f < FN_N; f++) {
		w_str(&w, f ? ",\"" : "\"");
		w_str(&w, fn_name[f]);
		w_str(&w, "\":");
		w_u64(&w, calls[f]);
	}
	w_str(&w, "},\"samples\":[");
	agent_sink_put(out, buf, w.len);
	for (i = 0; i < n; i++) {
		const struct sample *s = &t->samples[i];

		if (atomic_load_explicit(&s->ready, memory_order_acquire) != gen)
			continue;
		put_sample(out, s, first);
		first = false;
	}
	agent_sink_put(out, "]}}\n", 4);
}

static bool tables_ready(void)
{
	void *p;

	if (atomic_load(&tab))
		return true;
	p = mmap(NULL, sizeof(struct tables), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return false;
	atomic_store(&tab, (struct tables *)p);
	return true;
}

/* Empty the live table; the samples need no reset (ready says which session wrote them). */
static void tables_reset(struct tables *t)
{
	if (madvise(t->keys, sizeof(t->keys), MADV_DONTNEED) != 0)
		memset(t->keys, 0, sizeof(t->keys));
	memset(t->home, 0, sizeof(t->home));
}

static void allocs_start(struct agent_sink *out, uint64_t every, uint64_t for_ms)
{
	struct tables *t;
	char buf[256];
	struct wbuf w = { buf, 0, sizeof(buf) };

	if (interposing != 1) {
		agent_core_error(out, "malloc in this process is not the agent's (the executable or a library "
				      "loaded before the agent defines it): preload libvitals-agent-allocs.so "
				      "before any other allocator");
		return;
	}
	if (!tables_ready()) {
		agent_core_error(out, "cannot map the sample tables (out of memory)");
		return;
	}
	if (self_hi == 0)
		dl_iterate_phdr(self_range_cb, NULL);
	t = atomic_load(&tab);
	/* A start while armed replaces the session. */
	disarm_and_drain();
	tables_reset(t);
	shards_sum(&base);
	counted_taken = false;
	atomic_store(&claimed, 0);
	atomic_store(&dropped, 0);
	atomic_store(&t1_ns, 0);
	atomic_store(&expired, 0);
	atomic_store(&every_bytes, every);
	atomic_fetch_add(&session, 1);
	every_reported = every;
	t0_ns = now_ns();
	atomic_store(&deadline_ns, t0_ns + for_ms * 1000000u);
	started = true;
	atomic_store(&armed, 1);

	put_head(out, true);
	w_str(&w, ",\"for_ms\":");
	w_u64(&w, for_ms);
	w_str(&w, ",\"max_samples\":");
	w_u64(&w, MAX_SAMPLES);
	w_str(&w, ",\"max_frames\":");
	w_u64(&w, MAX_FRAMES);
	w_str(&w, "}}\n");
	agent_sink_put(out, buf, w.len);
}

static void allocs_stop(struct agent_sink *out)
{
	if (!started) {
		agent_core_error(out, "allocation sampling was not started: send \"start\":true first");
		return;
	}
	disarm_and_drain();
	t1_reported = atomic_load(&t1_ns);
	expired_reported = atomic_load(&expired) != 0;
	if (!counted_taken) {
		/* Once: a second stop answers the same figures. */
		struct shard now;
		int f;

		shards_sum(&now);
		for (f = 0; f < FN_N; f++)
			counted.calls[f] = now.calls[f] - base.calls[f];
		counted.bytes = now.bytes - base.bytes;
		counted.frees = now.frees - base.frees;
		counted_taken = true;
	}
	stop_reply(out);
}

void agent_allocs_answer(const struct agent_allocs_req *r, struct agent_sink *out)
{
	long long every = EVERY_DEFAULT, for_ms = FOR_MS_DEFAULT;

	if (r->start == REQ_BAD || r->stop == REQ_BAD) {
		agent_core_error(out, r->start == REQ_BAD ? "request \"start\" must be true or false"
							  : "request \"stop\" must be true or false");
		return;
	}
	if ((r->start == REQ_TRUE) == (r->stop == REQ_TRUE)) {
		agent_core_error(out, "an \"allocs\" request needs either \"start\":true or \"stop\":true");
		return;
	}
	if (r->stop == REQ_TRUE) {
		allocs_stop(out);
		return;
	}
	if (r->has_every) {
		if (!r->every_int || r->every < 1 || r->every > EVERY_MAX) {
			agent_core_error(out, "request \"every\" must be an integer from 1 to 1073741824");
			return;
		}
		every = r->every;
	}
	if (r->has_for_ms) {
		if (!r->for_ms_int || r->for_ms < 1 || r->for_ms > FOR_MS_MAX) {
			agent_core_error(out, "request \"for_ms\" must be an integer from 1 to 3600000");
			return;
		}
		for_ms = r->for_ms;
	}
	allocs_start(out, (uint64_t)every, (uint64_t)for_ms);
}

/*
 * allocs.c — allocation sites and the fate of their blocks, from uprobes on
 * the allocator, armed in windows.
 *
 * During a window every probe hit is a perf sample.  An entry of an
 * allocating function keeps its registers and the top of its stack (the
 * copy lives only in the ring); when the window closes each entry is named:
 * the caller from the return address at the stack pointer (the function
 * has not moved it yet), and only when that caller is one of the
 * allocator's wrappers, or the site has no example stack yet, an unwind.
 * Then the hits are put in time order (threads write to different rings)
 * and replayed: an entry waits on its thread for its return, whose pointer
 * is the block; a free takes the block out of the live table.  A call made
 * inside another (realloc calling malloc, free inside realloc) belongs to
 * the outer one.  What is left in the live table when the window closes was
 * kept past it.
 *
 * Between windows the probes are closed, so the target runs untouched.  The
 * cost is the hits counted times one hit's cost (perf/uprobe.h times it on
 * vitals' own calls); each window is as long, and each gap so long, that
 * this stays within the budget of the CPU the target spends on its own
 * work.  A process of many threads has only those that ran since the last
 * window probed.
 */
#include "sample/allocs.h"

#include "alloc/agent_allocs.h"
#include "alloc/agent_client.h"
#include "alloc/thread_arena.h"
#include "sample/arena_threads.h"

#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/clock.h"
#include "elf/unwind.h"
#include "perf/perf_events.h"
#include "perf/uprobe.h"
#include "proc/schedstat.h"
#include "proc/stat.h"
#include "proc/task.h"
#include "proc/status.h"
#include "sample/profiler.h"
#include "sample/stack_namer.h"
#include "sample/target.h"

#define NO_IDX UINT32_MAX
#define DEFAULT_BUDGET 0.05
#define DEFAULT_WINDOW_S 0.1
#define DEFAULT_STACK_BYTES 1024u
#define RING_PAGES 512u          /* per CPU: a 100 ms pause of vitals fits */
#define MIN_RING_PAGES 16u
#define RING_BUDGET_PAGES 4096L   /* 16 MiB of rings in all, one per thread probed */
#define POLL_MS 5
#define SYNC_NS 20000000ull
#define PENDING_MAX 4
#define ACTIVE_MAX 64           /* past this many threads, only those that ran are probed */
#define SITE_FRAMES 16          /* frames unwound to find a site past the wrappers */
#define SNAPS_MAX (64u << 20)   /* entries' stacks kept in one window for naming after it */
#define BASELINE_S 0.3          /* unprobed, before the first window */
#define MAX_GAP_S 60.0
#define FIRST_WINDOW_S 0.01     /* the first window, short: its cost is not known yet */
#define MIN_WINDOW_S 0.005

enum ev_kind { EV_ENTRY, EV_RET, EV_FREE };

/* One probe hit, kept until the window is replayed in time order. */
struct ev {
	uint64_t t;
	uint64_t seq;               /* arrival order: ties of t keep it */
	pid_t tid;
	uint8_t kind;               /* enum ev_kind */
	uint8_t fn;                 /* enum vt_alloc_fn */
	uint32_t site;              /* entry: index in sites, NO_IDX unknown */
	uint64_t a, b;              /* entry: size, old pointer (realloc) or alignment
	                             * (posix_memalign); ret, free: pointer */
	uint64_t snap;              /* entry: 1 + its registers' and stack's offset in snaps,
	                             * named after the window; 0 named already */
};

/* An entry's registers and stack, copied from the ring during the window. */
struct snap {
	pid_t tid;
	uint32_t stack_len;
	uint64_t regs[VT_PERF_NREGS];
	/* then stack_len bytes, padded to 8 */
};

/* A block made in this window, by address (open addressing, tombstones). */
struct live {
	uint64_t addr;              /* 0 empty, 1 removed */
	uint64_t size, t;
	uint32_t site;
	pid_t tid;
};

/* A call in progress on a thread, waiting for its return. */
struct pending {
	uint8_t fn;
	bool nested;
	uint32_t site;
	uint64_t size, old, t;
};

/*
 * glibc's posix_memalign with an alignment malloc gives anyway (16 on
 * x86-64) calls malloc (_mid_memalign): that malloc is its, not the
 * program's, and its return is the block posix_memalign hands back through
 * its pointer argument, which its own return (0 or an errno) does not say.
 */
#define GLIBC_MALLOC_ALIGNMENT 16

/* A call inside another comes this soon after the outer one's entry. */
#define NESTED_NS 1000000ull

struct thread_state {
	pid_t tid;                  /* 0 empty */
	unsigned n;
	struct pending stack[PENDING_MAX];
};

struct run {
	const struct vt_procfs *pfs;
	pid_t pid;
	int dirfd;
	/* vt_mono_ns() when this window's probes were all in: calls and frees before
	 * (made while they went in one by one) are not counted, nor is that time armed */
	uint64_t armed_ns;
	const struct vt_allocs_opts *opts;
	struct vt_allocs *A;
	struct vt_unwinder *uw;
	struct vt_stack_namer names;
	struct vt_alloc_probe_plan plan;
	struct vt_uprobe_set *probes;
	struct vt_perf_opts perf_opts;   /* how the probes are opened on the threads */
	uint64_t calib_base_ns;     /* vitals' malloc and free rounds, unprobed */
	const struct vt_perf_event *events;
	uint8_t event_fn[VT_PERF_EVENTS_MAX];
	bool event_ret[VT_PERF_EVENTS_MAX];
	unsigned nevents;
	struct vt_buf buf;
	long threads, ncpus;        /* at the start: how the events are opened */
	/* a process of many threads: only those that ran since the last look are probed
	 * (a thread that does not run does not allocate); NULL want: all */
	struct thread_run { pid_t tid; uint64_t run_ns; } *runs;   /* the last look, by tid */
	size_t nruns;
	pid_t *wanted;              /* sorted */
	size_t nwanted;
	bool filter;
	struct vt_region_list maps; /* at the start, for warming the names */

	struct ev *evs;
	size_t nev, cap_ev;
	unsigned char *snaps;       /* struct snap records, back to back */
	size_t snaps_len, snaps_cap;
	uint64_t seq;
	uint32_t *site_of_func;     /* func index -> site + 1, 0 none (grown with funcs) */
	size_t cap_site_of_func;
	struct live *live;
	size_t live_cap, live_used;   /* used counts tombstones too */
	struct thread_state *ts;
	size_t ts_cap, ts_n;

	uint32_t locs[VT_PROFILE_MAX_DEPTH];
	struct vt_unwind_frame frames[VT_PROFILE_MAX_DEPTH];
	bool nomem;

	/* the agent's path: its socket, armed until stopped */
	char agent_sock[512];
	bool agent_armed;
	uint64_t rng;               /* rounds each sample's weight without bias */
};

static void refresh_active(struct run *r);
static bool want_thread(void *ctx, pid_t tid);

/* ---- names ---- */

bool vt_allocs_is_wrapper(const char *name)
{
	static const char *const wrappers[] = {
		"operator new*", "operator delete*", "__rust_alloc*", "__rust_realloc*",
		"__rdl_*", "__rg_*", "alloc::alloc::*", "alloc::raw_vec::*", "<alloc::alloc::Global*",
		"std::alloc::*", "*strdup", "*strndup", "g_malloc*", "g_realloc*", "g_try_malloc*",
		"xmalloc", "xcalloc", "xrealloc", "std::__new_allocator*", "__gnu_cxx::new_allocator*",
		"std::allocator*", "zmalloc*", "ztrymalloc*", "zcalloc*", "zrealloc*",
		"PyMem_*", "_PyMem_*", "PyObject_Malloc", "_PyObject_Malloc", "PyObject_Calloc",
		"_PyObject_Calloc", "PyObject_Realloc", "_PyObject_Realloc", "__libc_*",
		/* an interposer's entry points (vitals' own allocs agent, a profiler's), which
		 * call the allocator's */
		"malloc", "calloc", "realloc", "free", "memalign", "aligned_alloc", "posix_memalign",
		"valloc", "pvalloc",
		/* glibc's posix_memalign by its own names: the malloc it makes for the program (one
		 * seen without its posix_memalign, at a window's opening) is the program's call */
		"__posix_memalign", "_mid_memalign",
		/* the standard libraries' containers and strings (Rust's alloc, core and std,
		 * C++'s std::): the site is the program's code that uses them */
		"alloc::*", "<alloc::*", "<* as alloc::*", "core::*", "<core::*", "<* as core::*",
		"std::*", "<std::*", "<* as std::*", "hashbrown::*", "<hashbrown::*",
	};

	if (!name || !name[0])
		return false;
	for (size_t i = 0; i < sizeof(wrappers) / sizeof(wrappers[0]); i++)
		if (fnmatch(wrappers[i], name, 0) == 0)
			return true;
	return false;
}

uint64_t vt_allocs_size_bin_max(unsigned bin)
{
	static const uint64_t max[VT_ALLOCS_SIZE_BINS] = {
		16, 64, 256, 1024, 4096, 65536, 1048576, UINT64_MAX,
	};
	return bin < VT_ALLOCS_SIZE_BINS ? max[bin] : UINT64_MAX;
}

uint64_t vt_allocs_age_bin_max_ns(unsigned bin)
{
	static const uint64_t max[VT_ALLOCS_AGE_BINS] = {
		10000, 100000, 1000000, 10000000, 100000000, UINT64_MAX,
	};
	return bin < VT_ALLOCS_AGE_BINS ? max[bin] : UINT64_MAX;
}

static unsigned size_bin(uint64_t size)
{
	unsigned b = 0;

	while (b + 1 < VT_ALLOCS_SIZE_BINS && size > vt_allocs_size_bin_max(b))
		b++;
	return b;
}

static unsigned age_bin(uint64_t ns)
{
	unsigned b = 0;

	while (b + 1 < VT_ALLOCS_AGE_BINS && ns > vt_allocs_age_bin_max_ns(b))
		b++;
	return b;
}

static const char *func_name(const struct vt_profile *p, uint32_t loc)
{
	return vt_profile_str(p, p->funcs[p->locs[loc].func].name);
}

/* ---- sites ---- */

static uint32_t site_for_loc(struct run *r, uint32_t loc)
{
	struct vt_allocs *A = r->A;
	uint32_t func = A->p->locs[loc].func;

	if (func >= r->cap_site_of_func) {
		size_t cap = r->cap_site_of_func ? r->cap_site_of_func : 256;
		uint32_t *n;

		while (cap <= func)
			cap *= 2;
		n = realloc(r->site_of_func, cap * sizeof(*n));
		if (!n) {
			r->nomem = true;
			return NO_IDX;
		}
		memset(n + r->cap_site_of_func, 0, (cap - r->cap_site_of_func) * sizeof(*n));
		r->site_of_func = n;
		r->cap_site_of_func = cap;
	}
	if (r->site_of_func[func])
		return r->site_of_func[func] - 1;
	if (A->nsites == A->cap_sites) {
		size_t cap = A->cap_sites ? A->cap_sites * 2 : 64;
		struct vt_alloc_site *n = realloc(A->sites, cap * sizeof(*n));

		if (!n) {
			r->nomem = true;
			return NO_IDX;
		}
		A->sites = n;
		A->cap_sites = cap;
	}
	memset(&A->sites[A->nsites], 0, sizeof(A->sites[0]));
	A->sites[A->nsites].func = func;
	A->sites[A->nsites].loc = loc;
	r->site_of_func[func] = (uint32_t)++A->nsites;
	return (uint32_t)(A->nsites - 1);
}

/* The first location of locs[0..n) that is not a wrapper's, or NO_IDX. */
static uint32_t first_own(struct run *r, const uint32_t *locs, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (!vt_allocs_is_wrapper(func_name(r->A->p, locs[i])))
			return locs[i];
	return NO_IDX;
}

/* The caller's locations at pc (a return address), inlined ones first, into r->locs. */
static uint32_t caller_locs(struct run *r, uint64_t pc)
{
	uint32_t module, n = 0;
	uint32_t loc = vt_stack_namer_user(&r->names, pc, true, &module);

	if (loc == NO_IDX)
		return 0;
	r->locs[n++] = loc;
	while (r->A->p->locs[loc].inlined_into && n < VT_PROFILE_MAX_DEPTH)
		r->locs[n++] = loc = r->A->p->locs[loc].inlined_into - 1;
	return n;
}

/* The stack of an entry above the allocator's own frame, into r->locs: max_frames
 * deep (the site is seldom far above; the example stack goes to the root). */
static uint32_t unwind_locs(struct run *r, const struct vt_perf_sample *s, size_t max_frames)
{
	struct vt_unwind_start st = { .stack = s->stack, .stack_len = s->stack_len,
				      .stack_addr = s->regs[VT_PERF_REG_SP], .read_target = true };
	enum vt_unwind_end why;
	uint32_t depth = 0;
	size_t n;

	vt_profiler_regs_to_dwarf(s->regs, &st);
	n = vt_unwind(r->uw, s->tid, &st, r->frames, max_frames, &why);
	r->A->meta.unwound++;
	if (n <= 1) {
		r->A->meta.unwind_failed++;
		return 0;
	}
	vt_stack_namer_push(&r->names, r->frames + 1, n - 1, r->locs, &depth);
	return depth;
}

/* The site of an allocating call: from its caller when that is the program's own
 * code, else from the whole stack.  Keeps the site's first stack as its example. */
static uint32_t site_of(struct run *r, const struct vt_perf_sample *s)
{
	uint64_t ret;
	uint32_t n = 0, own = NO_IDX, site;

	if (!s->regs_ok)
		return NO_IDX;
	if (s->stack && s->stack_len >= 8) {
		memcpy(&ret, s->stack, 8);   /* at the entry, the return address is at sp */
		n = caller_locs(r, ret);
		own = first_own(r, r->locs, n);
	}
	if (own == NO_IDX) {
		n = unwind_locs(r, s, SITE_FRAMES);
		own = first_own(r, r->locs, n);
		if (own == NO_IDX && n)
			own = r->locs[n - 1];   /* all wrappers: the outermost seen */
	}
	if (own == NO_IDX)
		return NO_IDX;
	site = site_for_loc(r, own);
	if (site == NO_IDX)
		return NO_IDX;
	if (!r->A->sites[site].example_depth) {   /* its example: the whole stack, once */
		n = unwind_locs(r, s, VT_PROFILE_MAX_DEPTH);
		uint32_t i = 0, k = 0;

		while (i < n && r->locs[i] != own)
			i++;
		if (i == n)   /* the unwind did not reach it: the site alone */
			r->A->sites[site].example[k++] = own;
		for (; i < n && k < VT_ALLOCS_EXAMPLE_DEPTH; i++)
			r->A->sites[site].example[k++] = r->locs[i];
		r->A->sites[site].example_depth = k;
	}
	return site;
}

/* ---- the probe hits ---- */

static void push_ev(struct run *r, const struct ev *e)
{
	if (r->nev == r->cap_ev) {
		size_t cap = r->cap_ev ? r->cap_ev * 2 : 4096;
		struct ev *n = realloc(r->evs, cap * sizeof(*n));

		if (!n) {
			r->nomem = true;
			return;
		}
		r->evs = n;
		r->cap_ev = cap;
	}
	r->evs[r->nev] = *e;
	r->evs[r->nev++].seq = r->seq++;
}

/*
 * Keep an entry's registers and stack for naming after the window (naming
 * can take a while: a module's DWARF is read the first time one of its pcs
 * is named, and meanwhile the rings would overflow).  1 + its offset, or 0
 * past SNAPS_MAX bytes in the window or out of memory.
 */
static uint64_t keep_snap(struct run *r, const struct vt_perf_sample *s)
{
	uint32_t stack_len = s->stack ? s->stack_len : 0;
	size_t need = sizeof(struct snap) + ((stack_len + 7u) & ~7u);
	struct snap *k;

	if (!s->regs_ok || r->snaps_len + need > SNAPS_MAX)
		return 0;
	if (r->snaps_len + need > r->snaps_cap) {
		size_t cap = r->snaps_cap ? r->snaps_cap * 2 : 1u << 20;
		unsigned char *n;

		while (cap < r->snaps_len + need)
			cap *= 2;
		n = realloc(r->snaps, cap);
		if (!n)
			return 0;
		r->snaps = n;
		r->snaps_cap = cap;
	}
	k = (struct snap *)(void *)(r->snaps + r->snaps_len);
	k->tid = s->tid;
	k->stack_len = stack_len;
	memcpy(k->regs, s->regs, sizeof(k->regs));
	if (stack_len)
		memcpy(k + 1, s->stack, stack_len);
	r->snaps_len += need;
	return r->snaps_len - need + 1;
}

/* Name the entries kept during the window: their sites. */
static void name_snaps(struct run *r)
{
	for (size_t i = 0; i < r->nev && !r->nomem; i++) {
		struct ev *e = &r->evs[i];
		const struct snap *k;
		struct vt_perf_sample s;

		if (!e->snap)
			continue;
		k = (const struct snap *)(const void *)(r->snaps + e->snap - 1);
		memset(&s, 0, sizeof(s));
		s.tid = k->tid;
		s.regs_ok = true;
		memcpy(s.regs, k->regs, sizeof(s.regs));
		s.stack = k->stack_len ? (const uint8_t *)(k + 1) : NULL;
		s.stack_len = k->stack_len;
		e->site = site_of(r, &s);
		e->snap = 0;
	}
	r->snaps_len = 0;
}

static uint64_t mul_sat(uint64_t a, uint64_t b)
{
	uint64_t m;

	return __builtin_mul_overflow(a, b, &m) ? UINT64_MAX : m;
}

static void on_sample(void *ctx, const struct vt_perf_sample *s)
{
	struct run *r = ctx;
	struct ev e = { .t = s->time_ns, .tid = s->tid, .site = NO_IDX };
	const uint64_t *g = s->regs;

	if (s->event >= r->nevents || !s->regs_ok || r->nomem)
		return;
	e.fn = r->event_fn[s->event];
	if (r->event_ret[s->event]) {
		e.kind = EV_RET;
		e.a = g[VT_PERF_REG_AX];
	} else if (e.fn == VT_AFN_FREE) {
		e.kind = EV_FREE;
		e.a = g[VT_PERF_REG_DI];
		if (!e.a)
			return;
	} else {
		e.kind = EV_ENTRY;
		switch ((enum vt_alloc_fn)e.fn) {
		case VT_AFN_MALLOC: e.a = g[VT_PERF_REG_DI]; break;
		case VT_AFN_CALLOC: e.a = mul_sat(g[VT_PERF_REG_DI], g[VT_PERF_REG_SI]); break;
		case VT_AFN_REALLOC: e.a = g[VT_PERF_REG_SI]; e.b = g[VT_PERF_REG_DI]; break;
		case VT_AFN_MEMALIGN: e.a = g[VT_PERF_REG_SI]; break;
		case VT_AFN_POSIX_MEMALIGN: e.a = g[VT_PERF_REG_DX]; e.b = g[VT_PERF_REG_SI]; break;
		default: return;
		}
		e.snap = keep_snap(r, s);
		if (!e.snap)
			e.site = site_of(r, s);   /* past the copy limit: named now */
	}
	push_ev(r, &e);
}

/* ---- replay ---- */

static int ev_cmp(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static size_t hash64(uint64_t v, size_t cap)
{
	return (size_t)((v * 0x9e3779b97f4a7c15ull) >> 17) & (cap - 1);
}

static bool live_grow(struct run *r)
{
	size_t cap = r->live_cap ? r->live_cap * 2 : 4096;
	struct live *n;

	while ((r->live_used + 1) * 2 > cap)
		cap *= 2;
	n = calloc(cap, sizeof(*n));
	if (!n)
		return false;
	r->live_used = 0;
	for (size_t i = 0; i < r->live_cap; i++) {
		size_t s;

		if (r->live[i].addr <= 1)
			continue;
		s = hash64(r->live[i].addr, cap);
		while (n[s].addr)
			s = (s + 1) & (cap - 1);
		n[s] = r->live[i];
		r->live_used++;
	}
	free(r->live);
	r->live = n;
	r->live_cap = cap;
	return true;
}

static void live_put(struct run *r, const struct live *b)
{
	size_t s;

	if ((r->live_used + 1) * 2 > r->live_cap && !live_grow(r)) {
		r->nomem = true;
		return;
	}
	s = hash64(b->addr, r->live_cap);
	while (r->live[s].addr > 1 && r->live[s].addr != b->addr)
		s = (s + 1) & (r->live_cap - 1);
	if (r->live[s].addr != b->addr)
		r->live_used++;   /* an empty slot or a tombstone (counted already) reused */
	r->live[s] = *b;
}

/* Take the block at addr out; false when it was not made in this window. */
static bool live_take(struct run *r, uint64_t addr, struct live *out)
{
	size_t s;

	if (!r->live_cap)
		return false;
	s = hash64(addr, r->live_cap);
	while (r->live[s].addr) {
		if (r->live[s].addr == addr) {
			*out = r->live[s];
			r->live[s].addr = 1;
			return true;
		}
		s = (s + 1) & (r->live_cap - 1);
	}
	return false;
}

static struct thread_state *thread_of(struct run *r, pid_t tid)
{
	size_t s;

	if ((r->ts_n + 1) * 2 > r->ts_cap) {
		size_t cap = r->ts_cap ? r->ts_cap * 2 : 64;
		struct thread_state *n = calloc(cap, sizeof(*n));

		if (!n) {
			r->nomem = true;
			return NULL;
		}
		for (size_t i = 0; i < r->ts_cap; i++) {
			if (!r->ts[i].tid)
				continue;
			s = hash64((uint64_t)r->ts[i].tid, cap);
			while (n[s].tid)
				s = (s + 1) & (cap - 1);
			n[s] = r->ts[i];
		}
		free(r->ts);
		r->ts = n;
		r->ts_cap = cap;
	}
	s = hash64((uint64_t)tid, r->ts_cap);
	while (r->ts[s].tid && r->ts[s].tid != tid)
		s = (s + 1) & (r->ts_cap - 1);
	if (!r->ts[s].tid) {
		r->ts[s].tid = tid;
		r->ts[s].n = 0;
		r->ts_n++;
	}
	return &r->ts[s];
}

static void count_thread(struct vt_alloc_site *site, pid_t tid, uint64_t calls)
{
	for (unsigned i = 0; i < VT_ALLOCS_SITE_THREADS; i++) {
		if (site->threads[i].tid == tid || !site->threads[i].tid) {
			site->threads[i].tid = tid;
			site->threads[i].calls += calls;
			return;
		}
	}
	site->other_thread_calls += calls;
}

static void freed(struct run *r, uint64_t addr, uint64_t t, pid_t tid)
{
	struct live b;

	if (t < r->armed_ns)
		return;
	r->A->meta.frees++;
	if (!live_take(r, addr, &b) || b.site == NO_IDX)
		return;
	struct vt_alloc_site *site = &r->A->sites[b.site];
	site->freed++;
	site->freed_bytes += b.size;
	site->age_bins[age_bin(t > b.t ? t - b.t : 0)]++;
	if (tid != b.tid)
		site->freed_elsewhere++;
}

/* One allocation made (its return seen, or posix_memalign's entry). */
static void allocated(struct run *r, const struct pending *c, uint64_t ptr, uint64_t t, pid_t tid)
{
	struct vt_allocs_meta *m = &r->A->meta;

	if (c->t < r->armed_ns)
		return;   /* entered while the probes were still going in */
	if (c->fn == VT_AFN_REALLOC && c->old)
		freed(r, c->old, t, tid);
	if (c->fn == VT_AFN_REALLOC && c->old && c->size == 0)
		return;   /* realloc(p, 0): a free */
	m->calls++;
	m->bytes += c->size;
	if (c->site == NO_IDX)
		return;
	struct vt_alloc_site *site = &r->A->sites[c->site];
	site->calls++;
	site->bytes += c->size;
	site->size_bins[size_bin(c->size)]++;
	site->fn_calls[c->fn]++;
	count_thread(site, tid, 1);
	if (!ptr)
		return;   /* failed, or posix_memalign's block not seen (it made no malloc call) */
	site->linked++;
	live_put(r, &(struct live){ .addr = ptr, .size = c->size, .t = t, .site = c->site,
				    .tid = tid });
}

/*
 * Calls on th that cannot hold call e inside them: an entry whose return was
 * not recorded (made before the return probe was in, or lost) would make
 * every later call of the thread look nested.  Only realloc and the aligned
 * allocators call another entry point (malloc, free), at once.
 */
static void drop_stale(struct run *r, struct thread_state *th, const struct ev *e)
{
	while (th->n) {
		const struct pending *top = &th->stack[th->n - 1];
		bool outer = top->fn == VT_AFN_REALLOC || top->fn == VT_AFN_MEMALIGN ||
			     top->fn == VT_AFN_POSIX_MEMALIGN;

		if (outer && top->fn != e->fn && e->t >= top->t && e->t - top->t < NESTED_NS)
			return;
		th->n--;
		if (top->fn == VT_AFN_POSIX_MEMALIGN && !top->nested)
			allocated(r, top, 0, top->t, e->tid);   /* its malloc not seen: counted, not followed */
		else
			r->A->meta.unpaired++;
	}
}

static void replay(struct run *r)
{
	struct vt_allocs_meta *m = &r->A->meta;

	if (r->nev)
		qsort(r->evs, r->nev, sizeof(*r->evs), ev_cmp);
	for (size_t i = 0; i < r->nev && !r->nomem; i++) {
		const struct ev *e = &r->evs[i];
		struct thread_state *th = thread_of(r, e->tid);

		if (!th)
			break;
		switch (e->kind) {
		case EV_ENTRY: {
			struct pending c = { .fn = e->fn, .site = e->site, .size = e->a,
					     .old = e->fn == VT_AFN_REALLOC ? e->b : 0, .t = e->t };

			drop_stale(r, th, e);
			c.nested = th->n > 0;

			/* no return probe: counted now, or when the malloc it makes returns the block */
			if (c.fn == VT_AFN_POSIX_MEMALIGN &&
			    (r->plan.alloc.kind != VT_ALLOC_GLIBC || e->b > GLIBC_MALLOC_ALIGNMENT)) {
				if (!c.nested)
					allocated(r, &c, 0, e->t, e->tid);
				break;
			}
			if (th->n < PENDING_MAX)
				th->stack[th->n++] = c;
			else
				m->unpaired++;
			break;
		}
		case EV_RET: {
			while (th->n && th->stack[th->n - 1].fn != e->fn) {
				th->n--;
				m->unpaired++;
			}
			if (!th->n) {
				m->unpaired++;   /* armed between its entry and its return */
				break;
			}
			struct pending c = th->stack[--th->n];
			if (!c.nested)
				allocated(r, &c, e->a, e->t, e->tid);
			else if (c.fn == VT_AFN_MALLOC && th->n && th->stack[th->n - 1].fn == VT_AFN_POSIX_MEMALIGN) {
				struct pending pm = th->stack[--th->n];

				if (!pm.nested)
					allocated(r, &pm, e->a, e->t, e->tid);
			}
			break;
		}
		case EV_FREE:
			drop_stale(r, th, e);
			if (th->n == 0)   /* else inside realloc: realloc's own */
				freed(r, e->a, e->t, e->tid);
			break;
		}
	}
	/* what is still live was kept past the window */
	for (size_t i = 0; i < r->live_cap; i++) {
		struct live *b = &r->live[i];

		if (b->addr > 1 && b->site != NO_IDX) {
			r->A->sites[b->site].live++;
			r->A->sites[b->site].live_bytes += b->size;
		}
	}
	if (r->live)
		memset(r->live, 0, r->live_cap * sizeof(*r->live));
	r->live_used = 0;
	if (r->ts)
		memset(r->ts, 0, r->ts_cap * sizeof(*r->ts));
	r->ts_n = 0;
	r->nev = 0;
}

/* ---- the run ---- */

/* The target's utime and stime so far, in clock ticks; false when unreadable. */
static bool target_cpu(struct run *r, uint64_t *user, uint64_t *sys)
{
	struct vt_proc_stat st;

	if (vt_read_at(r->dirfd, "stat", &r->buf, NULL) != VT_OK ||
	    vt_proc_stat_parse(r->buf.data, r->buf.len, &st, NULL) != VT_OK)
		return false;
	*user = st.utime_ticks;
	*sys = st.stime_ticks;
	return true;
}

static double self_cpu_s(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return NAN;
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static int plan_events(struct run *r, struct vt_err *err)
{
	const struct vt_alloc_probe_plan *pl = &r->plan;
	struct vt_allocs_meta *m = &r->A->meta;
	struct vt_uprobe_spec specs[VT_PERF_EVENTS_MAX];
	int rc;

	/* return probes first: they open before the entries, so an entry recorded has
	 * its return recorded too */
	r->nevents = 0;
	for (int ret = 1; ret >= 0; ret--) {
		for (size_t i = 0; i < pl->n; i++) {
			const struct vt_alloc_probe_fn *f = &pl->fns[i];

			if ((ret && !f->ret) || r->nevents == VT_PERF_EVENTS_MAX)
				continue;
			specs[r->nevents] = (struct vt_uprobe_spec){
				.offset = f->offset, .ret = ret, .stack = !ret && f->fn != VT_AFN_FREE,
			};
			r->event_fn[r->nevents] = (uint8_t)f->fn;
			r->event_ret[r->nevents] = ret;
			r->nevents++;
		}
	}
	for (size_t i = 0; i < pl->n; i++) {
		size_t len = strlen(m->probed);

		snprintf(m->probed + len, sizeof(m->probed) - len, "%s%s", len ? ", " : "",
			 pl->fns[i].symbol);
	}
	/* vitals' own malloc before any probe is in it (the sets' anchors put them there) */
	r->calib_base_ns = vt_uprobe_calibration_base();
	if ((rc = vt_uprobe_set_open(pl->path, specs, r->nevents, true, &r->probes, err)))
		return rc;
	r->events = vt_uprobe_set_events(r->probes);
	r->perf_opts = (struct vt_perf_opts){
		.stack_bytes = r->opts->stack_bytes ? r->opts->stack_bytes : DEFAULT_STACK_BYTES,
		.ring_pages = RING_PAGES,
		/* one event per thread and probe, unless the threads outnumber the CPUs
		 * (inherit: per CPU, and threads born meanwhile are probed too) */
		.inherit = r->threads > r->ncpus && r->threads <= ACTIVE_MAX,
		.events = r->events,
		.nevents = r->nevents,
	};
	if (!r->perf_opts.inherit) {
		/* a ring per thread, made afresh each window (the kernel zeroes its pages):
		 * RING_BUDGET_PAGES among the threads probed */
		long probed = r->threads < ACTIVE_MAX ? (r->threads > 0 ? r->threads : 1) : ACTIVE_MAX;
		uint32_t pages = RING_PAGES;

		while (pages > MIN_RING_PAGES && (long)pages * probed > RING_BUDGET_PAGES)
			pages /= 2;
		r->perf_opts.ring_pages = pages;
	}
	if (r->threads > ACTIVE_MAX) {
		r->filter = true;
		r->perf_opts.want = want_thread;
		r->perf_opts.want_ctx = r;
	}
	snprintf(m->probes_how, sizeof(m->probes_how), "%s", vt_uprobe_set_how(r->probes));
	return VT_OK;
}

/* Arm the probes for one window, collect, disarm, replay.  VT_E_GONE when the target
 * exited. */
static int one_window(struct run *r, double window_s, struct vt_err *err)
{
	struct vt_allocs_meta *m = &r->A->meta;
	const struct vt_perf_opts *po = &r->perf_opts;
	struct vt_perf_stats ps;
	struct vt_perf *pf = NULL;
	uint64_t t0 = vt_mono_ns(), t_armed, end, t_closing = 0, last_sync = t0;
	int rc;

	if (r->filter)
		refresh_active(r);
	rc = vt_perf_open(r->pid, po, &pf, err);
	if (rc)
		return rc == VT_E_NOPROC ? VT_E_GONE : rc;
	t_armed = vt_mono_ns();
	r->armed_ns = t_armed;
	m->open_ms += (double)(t_armed - t0) / 1e6;
	end = t_armed + (uint64_t)(window_s * 1e9);
	while (vt_mono_ns() < end && !r->nomem && !(r->opts->stop && *r->opts->stop) &&
	       !(r->opts->pause && *r->opts->pause)) {
		rc = vt_perf_poll(pf, POLL_MS, on_sample, r, err);
		if (rc == VT_E_GONE)
			break;
		if (rc)
			goto out;
		/* threads born meanwhile: listed every SYNC_NS (a listing of a thousand
		 * threads is not free) */
		if (vt_mono_ns() - last_sync < SYNC_NS)
			continue;
		last_sync = vt_mono_ns();
		if (vt_perf_sync_threads(pf, NULL) == VT_E_GONE) {
			rc = VT_E_GONE;
			break;
		}
	}
	vt_perf_disable(pf);
	t_closing = vt_mono_ns();
	if (vt_perf_poll(pf, 0, on_sample, r, NULL) == VT_E_GONE)
		rc = VT_E_GONE;
	else if (rc != VT_E_GONE)
		rc = VT_OK;
out:
	vt_perf_get_stats(pf, &ps);
	m->lost += ps.lost;
	m->hits += ps.samples + ps.lost + ps.malformed;
	m->threads_missed += ps.threads_missed;
	if (ps.threads_opened > m->threads_probed_max)
		m->threads_probed_max = ps.threads_opened;
	if (!t_closing)
		t_closing = vt_mono_ns();
	vt_perf_close(&pf);   /* the breakpoints leave the target's code here */
	m->close_ms += (double)(vt_mono_ns() - t_closing) / 1e6;
	/* armed: from all probes in to the disable; arming and disarming are the cost line's */
	m->armed_s += (double)(t_closing - t_armed) / 1e9;
	m->windows++;
	name_snaps(r);
	replay(r);
	return rc;
}

static int tid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

static int run_cmp_delta(const void *a, const void *b)
{
	const struct thread_run *x = a, *y = b;   /* run_ns holds the delta here */

	return x->run_ns > y->run_ns ? -1 : x->run_ns < y->run_ns;
}

/*
 * Look at the threads again: those whose schedstat run time grew since the
 * last look (the busiest ACTIVE_MAX of them) are the ones probed next.
 */
static void refresh_active(struct run *r)
{
	pid_t *tids = NULL;
	size_t n = 0, nw = 0;
	struct thread_run *now, *delta;

	if (vt_task_list(r->dirfd, &tids, &n, NULL) != VT_OK)
		return;
	if (n)
		qsort(tids, n, sizeof(*tids), tid_cmp);
	now = calloc(n ? n : 1, sizeof(*now));
	delta = calloc(n ? n : 1, sizeof(*delta));
	if (!now || !delta) {
		free(now);
		free(delta);
		free(tids);
		return;
	}
	for (size_t i = 0, k = 0; i < n; i++) {
		char path[64];
		struct vt_schedstat ss;
		uint64_t before = UINT64_MAX;

		now[i].tid = tids[i];
		snprintf(path, sizeof(path), "task/%d/schedstat", (int)tids[i]);
		if (vt_read_at(r->dirfd, path, &r->buf, NULL) == VT_OK &&
		    vt_schedstat_parse(r->buf.data, r->buf.len, &ss, NULL) == VT_OK)
			now[i].run_ns = ss.run_ns;
		while (k < r->nruns && r->runs[k].tid < tids[i])
			k++;
		if (k < r->nruns && r->runs[k].tid == tids[i])
			before = r->runs[k].run_ns;
		if (before == UINT64_MAX || now[i].run_ns > before)
			delta[nw++] = (struct thread_run){ tids[i], before == UINT64_MAX ? UINT64_MAX
									: now[i].run_ns - before };
	}
	qsort(delta, nw, sizeof(*delta), run_cmp_delta);
	if (nw > ACTIVE_MAX)
		nw = ACTIVE_MAX;
	free(r->wanted);
	r->wanted = malloc((nw ? nw : 1) * sizeof(*r->wanted));
	r->nwanted = 0;
	for (size_t i = 0; r->wanted && i < nw; i++)
		r->wanted[r->nwanted++] = delta[i].tid;
	if (r->wanted)
		qsort(r->wanted, r->nwanted, sizeof(*r->wanted), tid_cmp);
	free(r->runs);
	r->runs = now;
	r->nruns = n;
	r->A->meta.threads_seen = n;
	free(delta);
	free(tids);
}

/* Probe this thread?  One that ran since the last look, or one born since. */
static bool want_thread(void *ctx, pid_t tid)
{
	struct run *r = ctx;
	size_t lo = 0, hi = r->nruns;

	if (r->wanted && bsearch(&tid, r->wanted, r->nwanted, sizeof(*r->wanted), tid_cmp))
		return true;
	while (lo < hi) {   /* listed at the last look: it did not run */
		size_t mid = lo + (hi - lo) / 2;

		if (r->runs[mid].tid < tid)
			lo = mid + 1;
		else if (r->runs[mid].tid > tid)
			hi = mid;
		else
			return false;
	}
	return true;
}

/* Sleep until `until` (ns), a stop, or (dirfd >= 0) the target's exit, looked at
 * every 50 ms: true when it exited. */
static bool rest_watching(const struct vt_allocs_opts *o, uint64_t until, int dirfd, pid_t pid,
			  struct vt_buf *buf)
{
	for (;;) {
		uint64_t now = vt_mono_ns();
		struct timespec ts;
		uint64_t ns;

		if (dirfd >= 0 && vt_target_exited(dirfd, pid, buf))
			return true;
		if (now >= until || (o->stop && *o->stop) || (o->pause && *o->pause))
			return false;
		ns = until - now < 50000000ull ? until - now : 50000000ull;
		ts.tv_sec = (time_t)(ns / 1000000000ull);
		ts.tv_nsec = (long)(ns % 1000000000ull);
		nanosleep(&ts, NULL);
	}
}

static void rest(const struct vt_allocs_opts *o, uint64_t until)
{
	rest_watching(o, until, -1, 0, NULL);
}

/*
 * Name one address of each code mapping of the target, so that its module's
 * symbols and DWARF are loaded before the probes are armed; stop at `until`.
 */
static void warm_names(struct run *r, uint64_t until)
{
	for (size_t i = 0; i < r->maps.n && vt_mono_ns() < until; i++) {
		const struct vt_region *g = &r->maps.v[i];
		uint32_t module;

		if (g->perms[2] == 'x' && g->path[0] == '/')
			vt_stack_namer_user(&r->names, g->start + 1, true, &module);
	}
	for (size_t i = 0; i < r->plan.n; i++) {
		uint32_t module;

		vt_stack_namer_user(&r->names, r->plan.fns[i].addr + 1, true, &module);
	}
}


static int site_cmp(const void *a, const void *b)
{
	const struct vt_alloc_site *x = a, *y = b;

	if (x->calls != y->calls)
		return x->calls > y->calls ? -1 : 1;
	return x->bytes > y->bytes ? -1 : x->bytes < y->bytes;
}

/*
 * One stack per site in the profile, its example (the site and its callers),
 * counting its calls: what --folded and --pprof write.  All threads are one
 * "(all threads)" there: a site's threads are in the site.
 */
static int site_stacks(struct vt_allocs *A, struct vt_err *err)
{
	uint32_t all = vt_profile_intern_thread(A->p, 0, "(all threads)");

	A->p->meta.pid = A->meta.pid;
	snprintf(A->p->meta.comm, sizeof(A->p->meta.comm), "%s", A->meta.comm);
	A->p->meta.duration_s = A->meta.duration_s;
	for (size_t i = 0; i < A->nsites; i++) {
		struct vt_alloc_site *s = &A->sites[i];
		uint32_t before = A->p->nstacks;
		int rc;

		s->stack = UINT32_MAX;
		if (!s->example_depth || !s->calls)
			continue;
		rc = vt_profile_add(A->p, s->example, s->example_depth, all, VT_PROF_RUNNING, 0,
				    s->example_depth == VT_ALLOCS_EXAMPLE_DEPTH, s->calls, err);
		if (rc)
			return rc;
		if (A->p->nstacks > before)
			s->stack = A->p->nstacks - 1;
	}
	return VT_OK;
}

/*
 * glibc: which arena each site's threads allocate from, read once at the end
 * (a thread keeps its arena once it has one) through each thread's
 * thread_arena (sample/arena_threads.h): nothing is stopped.
 */
static void site_arenas(struct run *r, const struct vt_alloc_info *alloc)
{
	struct vt_allocs *A = r->A;
	struct vt_arena_threads at = { 0 };

	for (size_t i = 0; i < A->nsites; i++)
		for (unsigned k = 0; k < VT_ALLOCS_SITE_THREADS; k++)
			A->sites[i].threads[k].arena = VT_THREAD_ARENA_UNKNOWN;
	if (alloc->kind != VT_ALLOC_GLIBC || !A->nsites)
		return;
	vt_arena_threads_read_live(r->pfs, r->dirfd, r->pid, &r->maps, &at);
	if (!at.known) {
		snprintf(A->meta.arenas_why, sizeof(A->meta.arenas_why), "%s",
			 at.why[0] ? at.why : "the thread-arena map could not be read");
		vt_arena_threads_release(&at);
		return;
	}
	A->meta.arenas_known = true;
	A->meta.narenas = at.narenas;
	for (size_t i = 0; i < A->nsites; i++)
		for (unsigned k = 0; k < VT_ALLOCS_SITE_THREADS && A->sites[i].threads[k].tid; k++)
			for (size_t t = 0; t < at.nthreads; t++)
				if (at.threads[t].tid == A->sites[i].threads[k].tid)
					A->sites[i].threads[k].arena = at.threads[t].arena;
	vt_arena_threads_release(&at);
}

static void name_threads(struct run *r)
{
	struct vt_allocs *A = r->A;

	for (size_t i = 0; i < A->nsites; i++) {
		for (unsigned k = 0; k < VT_ALLOCS_SITE_THREADS && A->sites[i].threads[k].tid; k++) {
			char path[64], comm[64] = "?";
			pid_t tid = A->sites[i].threads[k].tid;

			snprintf(path, sizeof(path), "task/%d/comm", (int)tid);
			if (vt_read_at(r->dirfd, path, &r->buf, NULL) == VT_OK) {
				snprintf(comm, sizeof(comm), "%s", r->buf.data);
				comm[strcspn(comm, "\n")] = '\0';
			}
			A->sites[i].threads[k].thread = vt_profile_intern_thread(A->p, tid, comm);
		}
	}
}

/*
 * What one probe hit costs a thread, timed on vitals' own calls: malloc and
 * free in a loop, then the same loop with the probes opened on vitals (each
 * round is three hits: malloc's entry and return, free's entry), the
 * records written as for the target.  NAN when it could not be timed.
 */
static int run_windows(struct run *r, struct vt_err *err)
{
	const struct vt_allocs_opts *o = r->opts;
	struct vt_allocs_meta *m = &r->A->meta;
	double budget = o->budget > 0 ? o->budget : DEFAULT_BUDGET;
	double max_window = o->window_s > 0 ? o->window_s : DEFAULT_WINDOW_S;
	double window = max_window < FIRST_WINDOW_S ? max_window : FIRST_WINDOW_S;
	double windows_s = 0;
	uint64_t start = vt_mono_ns(), stop_at = start + (uint64_t)(o->duration_s * 1e9);
	/* (stop_at moves on by the time vitals stood stopped by Ctrl-Z) */
	uint64_t stopped_ns = 0;
	uint64_t u0 = 0, s0 = 0, u1, s1, bu0 = 0, bs0 = 0;
	long hz = sysconf(_SC_CLK_TCK);
	bool cpu_ok = target_cpu(r, &u0, &s0);
	double base_rate = NAN;   /* the target's CPU rate unprobed, cores */
	int rc = VT_OK;

	m->budget = budget;
	m->window_s = max_window;
	if (hz <= 0)
		hz = 100;
	/*
	 * Before the first window: the target's CPU rate unprobed (what the traps
	 * are a share of), and the names of its code loaded (the first naming reads
	 * symbol tables and DWARF: done while armed, it stalls the drain and the
	 * rings overflow), and the cost of a hit timed.
	 */
	{
		uint64_t until = start + (uint64_t)(BASELINE_S * 1e9);

		bu0 = u0;
		bs0 = s0;
		m->trap_ns = vt_uprobe_hit_ns(r->calib_base_ns, r->perf_opts.stack_bytes);
		warm_names(r, until);
		rest(o, until);
		if (cpu_ok && target_cpu(r, &u1, &s1))
			base_rate = (double)(u1 + s1 - bu0 - bs0) / (double)hz /
				    ((double)(vt_mono_ns() - start) / 1e9);
		/*
		 * Naming the code past the baseline (libc's DWARF on a loaded host: seconds)
		 * is not taken from the run: --for 2s once ended there with no window at all.
		 */
		if (vt_mono_ns() > until)
			stop_at += vt_mono_ns() - until;
	}
	while (!(o->stop && *o->stop) && !r->nomem) {
		uint64_t t_begin = vt_mono_ns();
		double gap, trap_s, work_s, rate, this_window;

		if (t_begin >= stop_at)
			break;
		if (window > (double)(stop_at - t_begin) / 1e9)
			window = (double)(stop_at - t_begin) / 1e9;
		/*
		 * After the first: no window whose likely cost (at what an armed second has
		 * cost so far) the target's work so far does not pay for inside the
		 * budget.  No credit on work still to come (the rest of the run, or the
		 * window itself, at the rate before the first window): a target that
		 * works less than then (a burst, a load that moved to another worker)
		 * left nginx's runs at 9-14% for a budget of 5%.
		 * A window not paid for yet waits for the work that pays for the
		 * shortest one; a run too short for that is over.
		 */
		this_window = window;
		if (m->windows && m->armed_s > 0 && !isnan(m->trap_ns) && cpu_ok && target_cpu(r, &u1, &s1)) {
			double spent = (double)m->hits * m->trap_ns / 1e9;
			double per_armed_s = spent / m->armed_s;
			double work = (double)(u1 + s1 - u0 - s0) / (double)hz - spent;
			double rest_s = (double)(stop_at - t_begin) / 1e9;
			double cores = base_rate > 0.001 ? base_rate : 0.001;
			double allowed = budget * (work > 0 ? work : 0) - spent;

			if (per_armed_s > 0 && per_armed_s * this_window > allowed)
				this_window = allowed / per_armed_s;
			if (this_window < MIN_WINDOW_S) {
				double wait_s = (per_armed_s * MIN_WINDOW_S - allowed) / (budget * cores);

				if (wait_s >= rest_s) {
					m->budget_spent = true;
					break;
				}
				if (wait_s > MAX_GAP_S)
					wait_s = MAX_GAP_S;
				if (rest_watching(o, t_begin + (uint64_t)(wait_s * 1e9), r->dirfd, r->pid, &r->buf)) {
					m->exited = true;
					break;
				}
				goto between;   /* a Ctrl-Z meanwhile is honoured there */
			}
		}
		window = this_window;
		rc = one_window(r, window, err);
		windows_s += window;
		if (rc == VT_E_GONE) {
			m->exited = true;
			rc = VT_OK;
			break;
		}
		if (rc)
			break;
		/*
		 * The next window waits until the target's own work since the start
		 * (its CPU less the traps) is the traps' time over the budget: the
		 * traps cost at most budget of the CPU it spends on its work.
		 */
		trap_s = isnan(m->trap_ns) ? 0 : (double)m->hits * m->trap_ns / 1e9;
		work_s = 0;
		if (cpu_ok && target_cpu(r, &u1, &s1))
			work_s = (double)(u1 + s1 - u0 - s0) / (double)hz - trap_s;
		rate = base_rate > 0.001 ? base_rate : 0.001;
		/* the next window: as long as a second's share of the budget pays for, at
		 * what a second armed has cost so far */
		if (!isnan(m->trap_ns) && m->armed_s > 0 && trap_s > 0) {
			double per_armed_s = trap_s / m->armed_s;

			window = budget * (rate > base_rate ? rate : base_rate) / per_armed_s;
			if (window > max_window)
				window = max_window;
			if (window < MIN_WINDOW_S)
				window = MIN_WINDOW_S;
		} else {
			window = max_window;
		}
		gap = isnan(m->trap_ns) ? window / budget - window
					: (trap_s / budget - (work_s > 0 ? work_s : 0)) / rate;
		if (gap > MAX_GAP_S)
			gap = MAX_GAP_S;
		if (gap > 0) {
			uint64_t until = vt_mono_ns() + (uint64_t)(gap * 1e9);

			/* a target that exits meanwhile ends the run: the profile so far */
			if (rest_watching(o, until < stop_at ? until : stop_at, r->dirfd, r->pid, &r->buf)) {
				m->exited = true;
				break;
			}
		}
between:
		if (o->pause && *o->pause && o->paused) {
			/* Ctrl-Z: the probes are out (the window closed); stop here */
			uint64_t t = vt_mono_ns();

			o->paused(o->progress_ctx);
			stop_at += vt_mono_ns() - t;   /* the time stopped is not the run's */
			stopped_ns += vt_mono_ns() - t;
		}
		if (o->progress)
			o->progress(o->progress_ctx, (double)(vt_mono_ns() - start) / 1e9, o->duration_s,
				    m->calls);
	}
	m->duration_s = (double)(vt_mono_ns() - start - stopped_ns) / 1e9;
	m->interrupted = o->stop && *o->stop;
	if (m->windows)
		m->window_s = windows_s / m->windows;
	if (cpu_ok && target_cpu(r, &u1, &s1))
		m->target_cpu_s = (double)(u1 + s1 - u0 - s0) / (double)hz;
	m->target_base_rate = base_rate;
	if (!isnan(m->trap_ns)) {
		m->trap_s = (double)m->hits * m->trap_ns / 1e9;
		if (m->target_cpu_s > m->trap_s)
			m->slowdown = m->trap_s / (m->target_cpu_s - m->trap_s);
	}
	return rc;
}

/* ---- the agent's path ---- */

#define AGENT_SLACK_MS 10000    /* the agent's own deadline past a window: vitals may be late */
#define AGENT_WINDOW_S 1.0      /* its table holds 8,192 samples: one window's worth */
#define AGENT_WINDOW_MIN_S 0.05
#define AGENT_LIB "libvitals-agent-allocs.so"

/*
 * Arm the target's agent, when there is one that samples (opts->path not
 * uprobes).  false: take the uprobes' path (path_why says why), or, when
 * the agent's path was asked for, *rc is the error.
 */
static bool agent_arm(struct run *r, const struct vt_proc_status *status, int *rc, struct vt_err *err)
{
	const struct vt_allocs_opts *o = r->opts;
	struct vt_allocs_meta *m = &r->A->meta;
	uint64_t every = o->every ? o->every : VT_AGENT_ALLOC_EVERY_DEFAULT;
	uint64_t for_ms = (uint64_t)(fmin(o->duration_s, AGENT_WINDOW_S) * 1000) + AGENT_SLACK_MS;
	struct vt_err e;

	*rc = VT_OK;
	if (vt_agent_find(r->pfs, r->pid, (uid_t)status->uid_eff, r->agent_sock, sizeof(r->agent_sock)) != VT_OK) {
		if (o->path == VT_ALLOCS_AGENT) {
			*rc = vt_err_set(err, VT_E_NOTFOUND, 0, "process %d runs no vitals agent (no socket at %s)",
					 (int)r->pid, r->agent_sock);
			vt_err_hint(err, "start it with LD_PRELOAD=/path/to/" AGENT_LIB ", or leave --path out "
				    "for the uprobes (root)");
		} else {
			snprintf(m->path_why, sizeof(m->path_why), "no vitals agent in the process");
		}
		return false;
	}
	if (vt_agent_allocs_start(r->agent_sock, r->pid, every, for_ms, &e) != VT_OK) {
		if (o->path == VT_ALLOCS_AGENT) {
			*rc = e.code;
			if (err) {
				*err = e;
				vt_err_hint(err, "its agent must be " AGENT_LIB " (the plain libvitals-agent.so "
					    "does not sample); or leave --path out for the uprobes (root)");
			}
		} else {
			snprintf(m->path_why, sizeof(m->path_why), "its agent cannot sample allocations (%.200s)", e.msg);
		}
		return false;
	}
	r->agent_armed = true;
	m->agent = true;
	m->every = every;
	if (o->path != VT_ALLOCS_AGENT)
		snprintf(m->path_why, sizeof(m->path_why), "its agent samples allocations in-process (" AGENT_LIB
			 "): no probe, no trap");
	return true;
}

/* Disarm the agent if it still samples (an error on the way): it would stop at its deadline anyway. */
static void agent_disarm(struct run *r)
{
	struct vt_agent_allocs got;

	if (!r->agent_armed)
		return;
	r->agent_armed = false;
	if (vt_agent_allocs_stop(r->agent_sock, r->pid, &got, NULL) == VT_OK)
		vt_agent_allocs_release(&got);
}

/* A weight rounded up or down at random, so that counts come out unbiased. */
static uint64_t round_weight(struct run *r, double w)
{
	double whole = floor(w);

	r->rng = r->rng * 6364136223846793005ull + 1442695040888963407ull;
	return (uint64_t)whole + ((double)(r->rng >> 11) / 9007199254740992.0 < w - whole);
}

/* A sample's stack as locations into r->locs, the agent's own frames left out. */
static uint32_t agent_locs(struct run *r, const struct vt_agent_alloc_sample *s)
{
	const struct vt_profile *p = r->A->p;
	uint32_t n = 0;

	for (uint32_t i = 0; i < s->npcs && n < VT_PROFILE_MAX_DEPTH; i++) {
		uint32_t module, loc = vt_stack_namer_user(&r->names, s->pcs[i], true, &module);

		if (loc == NO_IDX)
			continue;
		if (n == 0 && strstr(vt_profile_str(p, p->funcs[p->locs[loc].func].module), "libvitals-agent"))
			continue;
		r->locs[n++] = loc;
		while (p->locs[loc].inlined_into && n < VT_PROFILE_MAX_DEPTH)
			r->locs[n++] = loc = p->locs[loc].inlined_into - 1;
	}
	return n;
}

/* One sample, standing for weight allocations at its site (times scale: its window's drops). */
static void agent_sample(struct run *r, const struct vt_agent_alloc_sample *s, uint64_t t_end, double scale)
{
	uint64_t w = round_weight(r, scale * vt_agent_alloc_weight(s->size, r->A->meta.every));
	uint32_t n = agent_locs(r, s), own = first_own(r, r->locs, n), site_i;
	struct vt_alloc_site *site;

	if (own == NO_IDX && n)
		own = r->locs[n - 1];   /* all wrappers: the outermost seen */
	if (own == NO_IDX || !w || (site_i = site_for_loc(r, own)) == NO_IDX)
		return;
	site = &r->A->sites[site_i];
	if (!site->example_depth) {
		uint32_t i = 0, k = 0;

		while (i < n && r->locs[i] != own)
			i++;
		for (; i < n && k < VT_ALLOCS_EXAMPLE_DEPTH; i++)
			site->example[k++] = r->locs[i];
		site->example_depth = k;
	}
	site->calls += w;
	site->bytes += w * s->size;
	site->size_bins[size_bin(s->size)] += w;
	site->fn_calls[s->fn] += w;
	count_thread(site, s->tid, w);
	site->linked += w;
	if (s->freed_ns) {
		site->freed += w;
		site->freed_bytes += w * s->size;
		site->age_bins[age_bin(s->freed_ns - s->t_ns)] += w;
		if (s->freed_tid && s->freed_tid != s->tid)
			site->freed_elsewhere += w;
	} else if (s->t_ns <= t_end) {
		site->live += w;
		site->live_bytes += w * s->size;
	}
}

/*
 * Wait on the agent's path until *wait_until (the target's exit, Ctrl-C and
 * Ctrl-Z watched: the sampling goes on while vitals is stopped, bounded by
 * its deadline, and the time stopped is added to *wait_until, *run_until and
 * *stopped_ns).  true: the target exited.
 */
static bool agent_wait(struct run *r, uint64_t *wait_until, uint64_t start, uint64_t *run_until,
		       uint64_t *stopped_ns)
{
	const struct vt_allocs_opts *o = r->opts;

	for (;;) {
		uint64_t step = vt_mono_ns() + 1000000000ull;

		if (rest_watching(o, step < *wait_until ? step : *wait_until, r->dirfd, r->pid, &r->buf))
			return true;
		if (o->pause && *o->pause && o->paused) {
			uint64_t t = vt_mono_ns();

			o->paused(o->progress_ctx);
			*wait_until += vt_mono_ns() - t;
			*run_until += vt_mono_ns() - t;
			*stopped_ns += vt_mono_ns() - t;
			continue;
		}
		if (o->progress)
			o->progress(o->progress_ctx, (double)(vt_mono_ns() - start - *stopped_ns) / 1e9, o->duration_s,
				    r->A->meta.calls);
		if (vt_mono_ns() >= *wait_until || (o->stop && *o->stop))
			return false;
	}
}

/* One window's samples counted in; a window whose table filled is scaled up by what it dropped. */
static void agent_absorb(struct run *r, const struct vt_agent_allocs *got)
{
	struct vt_allocs_meta *m = &r->A->meta;
	double scale = got->nsamples ? (double)(got->nsamples + got->dropped) / (double)got->nsamples : 1;

	m->armed_s += (double)(got->t1_ns - got->t0_ns) / 1e9;
	m->windows++;
	m->calls += got->calls;
	m->bytes += got->bytes;
	m->frees += got->frees;
	m->hits += got->nsamples;
	m->agent_samples += got->nsamples;
	m->agent_dropped += got->dropped;
	m->agent_late += got->late;
	m->agent_expired |= got->expired;
	r->rng ^= got->t0_ns;
	for (size_t i = 0; i < got->nsamples && !r->nomem && !r->names.nomem; i++)
		agent_sample(r, &got->samples[i], got->t1_ns, scale);
}

/*
 * The run on the agent's path: windows of up to AGENT_WINDOW_S, each ended
 * by taking its samples (the agent's table holds a few thousand: a window
 * that filled it is followed by a shorter one, and scaled up by what it
 * dropped) and the next armed at once.  A block's fate is seen to the end
 * of its window, as on the uprobes' path.
 */
static int run_agent(struct run *r, struct vt_err *err)
{
	const struct vt_allocs_opts *o = r->opts;
	struct vt_allocs_meta *m = &r->A->meta;
	uint64_t start = vt_mono_ns(), until = start + (uint64_t)(o->duration_s * 1e9), stopped_ns = 0;
	double window = AGENT_WINDOW_S;
	struct vt_agent_allocs got;
	int rc = VT_OK;

	m->budget = 0;
	m->trap_ns = NAN;
	m->target_base_rate = NAN;
	r->rng = 0x9e3779b97f4a7c15ull;
	snprintf(m->probes_how, sizeof(m->probes_how), "the agent's in-process sampling (" AGENT_LIB ")");
	for (;;) {
		uint64_t end = vt_mono_ns() + (uint64_t)(window * 1e9);
		bool last;

		if (end > until)
			end = until;
		if (agent_wait(r, &end, start, &until, &stopped_ns)) {
			m->exited = true;
			r->agent_armed = false;
			break;
		}
		r->agent_armed = false;
		if ((rc = vt_agent_allocs_stop(r->agent_sock, r->pid, &got, err)) != VT_OK) {
			if (vt_target_exited(r->dirfd, r->pid, &r->buf)) {
				m->exited = true;
				rc = VT_OK;
			}
			break;
		}
		agent_absorb(r, &got);
		if (got.dropped && got.nsamples)   /* the table filled: a shorter window next */
			window = fmax(AGENT_WINDOW_MIN_S, 0.8 * window * (double)got.nsamples /
							      (double)(got.nsamples + got.dropped));
		vt_agent_allocs_release(&got);
		last = vt_mono_ns() >= until || (o->stop && *o->stop) || r->nomem || r->names.nomem;
		if (last)
			break;
		if ((rc = vt_agent_allocs_start(r->agent_sock, r->pid, m->every,
						(uint64_t)(window * 1000) + AGENT_SLACK_MS, err)) != VT_OK) {
			if (vt_target_exited(r->dirfd, r->pid, &r->buf)) {
				m->exited = true;
				rc = VT_OK;
			}
			break;
		}
		r->agent_armed = true;
	}
	m->duration_s = (double)(vt_mono_ns() - start - stopped_ns) / 1e9;
	m->interrupted = o->stop && *o->stop;
	if (m->windows)
		m->window_s = m->armed_s / m->windows;
	if (rc == VT_OK && m->exited && !m->windows)
		return vt_err_set(err, VT_E_GONE, ESRCH, "process %d exited while its agent sampled: its samples went "
				  "with it", (int)r->pid);
	return rc;
}

int vt_allocs_run(const struct vt_procfs *pfs, pid_t pid, const struct vt_allocs_opts *opts,
		  struct vt_allocs **out, struct vt_err *err)
{
	struct run r = { .pfs = pfs, .pid = pid, .dirfd = -1, .opts = opts,
			 .buf = VT_BUF_INIT(1u << 20) };
	struct vt_alloc_info alloc;
	struct vt_proc_stat st;
	struct vt_proc_status status;
	double self0 = self_cpu_s();
	int rc;

	*out = NULL;
	if (!(opts->duration_s > 0) || opts->budget < 0 || opts->budget > 1)
		return vt_err_set(err, VT_E_USAGE, 0, "allocs needs a duration above 0 and a budget "
				  "from 0 to 1");
	r.A = calloc(1, sizeof(*r.A));
	if (!r.A)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
	r.A->meta.slowdown = NAN;
	if ((rc = vt_profile_new(&r.A->p, err)))
		goto out;
	if ((rc = vt_pid_open(pfs, pid, &r.dirfd, err)) ||
	    (rc = vt_target_check(r.dirfd, pid, &r.buf, &st, &status, err)) ||
	    (rc = vt_target_allocator(pfs, r.dirfd, pid, (long)status.uid_real, &r.buf, &r.maps,
				      &alloc, err)))
		goto out;
	if (opts->path != VT_ALLOCS_UPROBES && !agent_arm(&r, &status, &rc, err) && rc)
		goto out;
	if (!r.agent_armed &&
	    ((rc = vt_alloc_probe_plan(pfs, r.dirfd, pid, &r.maps, &alloc, &r.plan, err)) ||
	     (r.threads = st.num_threads, r.ncpus = sysconf(_SC_NPROCESSORS_ONLN), (rc = plan_events(&r, err)))))
		goto out;
	r.A->meta.pid = pid;
	snprintf(r.A->meta.comm, sizeof(r.A->meta.comm), "%s", st.comm);
	snprintf(r.A->meta.allocator, sizeof(r.A->meta.allocator), "%s%s%s",
		 vt_alloc_kind_name(alloc.kind), alloc.version[0] ? " " : "", alloc.version);
	snprintf(r.A->meta.file, sizeof(r.A->meta.file), "%s", alloc.path);
	snprintf(r.A->meta.skipped, sizeof(r.A->meta.skipped), "%s", r.plan.skipped);
	if ((rc = vt_unwinder_open(r.dirfd, pid, &r.uw, err)))
		goto out;
	vt_stack_namer_init(&r.names, r.A->p, r.uw, r.dirfd);
	rc = r.agent_armed ? run_agent(&r, err) : run_windows(&r, err);
	if (rc == VT_OK && r.A->meta.windows == 0 && r.A->meta.exited)
		rc = vt_err_set(err, VT_E_GONE, ESRCH, "process %d exited before the probes were "
				"armed", (int)pid);
	if (rc == VT_OK && (r.nomem || r.names.nomem))
		rc = vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory recording allocations");
	if (rc == VT_OK) {
		name_threads(&r);
		site_arenas(&r, &alloc);
		if (r.A->nsites)
			qsort(r.A->sites, r.A->nsites, sizeof(*r.A->sites), site_cmp);
		/* sites only nested calls were seen at (posix_memalign's malloc): none of their own */
		while (r.A->nsites && r.A->sites[r.A->nsites - 1].calls == 0)
			r.A->nsites--;
		rc = site_stacks(r.A, err);
		r.A->meta.self_cpu_s = self_cpu_s() - self0;
	}
out:
	agent_disarm(&r);
	vt_uprobe_set_close(&r.probes);   /* every perf event on them is closed */
	vt_stack_namer_release(&r.names);
	vt_unwinder_free(&r.uw);
	vt_region_list_release(&r.maps);
	vt_buf_release(&r.buf);
	free(r.evs);
	free(r.runs);
	free(r.wanted);
	free(r.snaps);
	free(r.site_of_func);
	free(r.live);
	free(r.ts);
	if (r.dirfd >= 0)
		close(r.dirfd);
	if (rc)
		vt_allocs_free(&r.A);
	*out = r.A;
	return rc;
}

void vt_allocs_free(struct vt_allocs **a)
{
	if (!a || !*a)
		return;
	vt_profile_free(&(*a)->p);
	free((*a)->sites);
	free(*a);
	*a = NULL;
}

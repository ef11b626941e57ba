/*
 * regions.c — classify mappings (see regions.h for the evidence order).
 *
 * glibc facts relied on (malloc/arena.c, malloc/malloc.c, nptl/allocatestack.c,
 * glibc 2.26–2.40):
 *   - new_heap() maps 2*HEAP_MAX_SIZE PROT_NONE, keeps the HEAP_MAX_SIZE
 *     aligned half and mprotects its first pages rw: maps shows rw-p then
 *     ---p, together 64 MiB, starting on a 64 MiB boundary;
 *   - the heap starts with heap_info { ar_ptr, prev, size, mprotect_size, ...};
 *     the first heap of an arena has prev == NULL and its malloc_state right
 *     after heap_info, so ar_ptr points a few bytes past the heap start;
 *   - an mmapped chunk starts with prev_size (alignment slack, normally 0) and
 *     size | IS_MMAPPED (0x2), and prev_size + size is the mapping length;
 *   - thread stacks are mapped with the guard at the low end (stacks grow down).
 * The kernel merges adjacent anonymous mappings with equal flags, so one
 * rw-p region may hold several mmapped chunks and other memory beside them:
 * alloc/mmap_blocks.c walks it page by page.
 */
#include "alloc/regions.h"
#include "alloc/cpython.h"
#include "alloc/mmap_blocks.h"
#include "base/clock.h"
#include "base/unknown.h"
#include "proc/procfs.h"

#include <stdlib.h>
#include <string.h>

#define GUARD_MAX (1ull << 20)          /* a ---p run this small below rw-p is a guard */
#define MAX_WHOLE_HEAPS 1024            /* 64 GiB of whole heaps checked per region */
#define WALK_FIRST_MAX (64ull << 20)    /* mappings walked in the first pass */

static bool is_anon(const struct vt_region *r)
{
	return r->inode == 0 && r->path[0] == '\0';
}

static bool perms_are(const struct vt_region *r, const char *perms)
{
	return memcmp(r->perms, perms, 4) == 0;
}

static void set_kind(struct vt_region *r, enum vt_region_kind kind, uint32_t flags)
{
	r->kind = kind;
	r->kind_flags |= flags;
}

/* Names the kernel or glibc put in brackets: [heap], [vdso], [anon: glibc: ...]. */
static bool classify_by_bracket_name(struct vt_region *r)
{
	const char *p = r->path;

	if (!strcmp(p, "[heap]"))
		set_kind(r, VT_REGION_MAIN_HEAP, VT_KIND_BY_NAME);
	else if (!strcmp(p, "[stack]"))
		set_kind(r, VT_REGION_MAIN_STACK, VT_KIND_BY_NAME);
	else if (!strcmp(p, "[vdso]") || !strcmp(p, "[vvar]") || !strcmp(p, "[vsyscall]") ||
		 !strncmp(p, "[vvar_", 6) || !strcmp(p, "[uprobes]"))
		set_kind(r, VT_REGION_SPECIAL, VT_KIND_BY_NAME);
	/* glibc >= 2.39 names its mappings when glibc.mem.decorate_maps=1 */
	else if (!strncmp(p, "[anon: glibc: malloc arena", 26))
		set_kind(r, VT_REGION_ARENA_HEAP, VT_KIND_BY_NAME);
	else if (!strncmp(p, "[anon: glibc: pthread stack", 27))
		set_kind(r, VT_REGION_THREAD_STACK, VT_KIND_BY_NAME);
	else if (!strncmp(p, "[anon: glibc: malloc", 20))
		set_kind(r, VT_REGION_MMAP_CHUNK, VT_KIND_BY_NAME);
	else
		return false;
	return true;
}

/* Kinds decided by the name alone (most mappings have none: only their first byte is looked at). */
static bool classify_by_name(struct vt_region *r)
{
	const char *p = r->path;

	if (p[0] == '[' && classify_by_bracket_name(r))
		return true;
	if (r->perms[3] == 's' ||
	    (p[0] == '/' && (!strncmp(p, "/dev/shm/", 9) || !strncmp(p, "/memfd:", 7) || !strncmp(p, "/SYSV", 5))))
		set_kind(r, VT_REGION_SHMEM, VT_KIND_BY_NAME);
	else if (r->inode != 0)
		set_kind(r, VT_REGION_FILE, VT_KIND_BY_NAME);
	else
		return false;
	return true;
}

/* heap_info fields we check (the rest differs between glibc versions). */
struct heap_info_head {
	uint64_t ar_ptr, prev, size, mprotect_size;
};

enum heap_verdict { HEAP_UNREAD, HEAP_NOT, HEAP_FIRST, HEAP_MORE };

static enum heap_verdict read_heap_info(const struct vt_classify_ctx *ctx, uint64_t start)
{
	struct heap_info_head h;

	if (!ctx->read_mem)
		return HEAP_UNREAD;
	if (ctx->read_mem(ctx->read_ctx, start, &h, sizeof(h)) != VT_OK)
		return HEAP_UNREAD;
	if (!h.ar_ptr || h.size == 0 || h.size > VT_HEAP_MAX_SIZE ||
	    h.mprotect_size > VT_HEAP_MAX_SIZE || h.size > h.mprotect_size ||
	    (h.prev % VT_HEAP_MAX_SIZE) != 0)
		return HEAP_NOT;
	if (h.prev == 0 && h.ar_ptr > start && h.ar_ptr < start + 256)
		return HEAP_FIRST;
	if (h.prev != 0)
		return HEAP_MORE;
	return HEAP_NOT;
}

static void add_heap(struct vt_arena_summary *a, enum heap_verdict v, uint64_t rw_len)
{
	a->heaps++;
	a->reserved_bytes += VT_HEAP_MAX_SIZE;
	a->mapped_bytes += rw_len;
	if (v == HEAP_FIRST && a->arenas >= 0)
		a->arenas++;
	if (v == HEAP_UNREAD)
		a->arenas = -1;
}

/* Resident figures are per region: add a heap region once, however many heaps it holds. */
static void add_region_rss(struct vt_arena_summary *a, const struct vt_region *r)
{
	if (vt_known(r->rss) && vt_known(a->rss_bytes)) {
		a->rss_bytes += r->rss;
		a->swap_bytes += r->swap;
	} else {
		a->rss_bytes = a->swap_bytes = VT_NA;
	}
}

/*
 * The heaps inside one anonymous rw-p region.  The kernel merges adjacent
 * mappings with equal flags, so a region may hold whole heaps, end in a
 * partial heap whose ---p reservation follows it, or start with unrelated
 * memory below the first boundary.  A partial heap is recognised by its
 * layout (confirmed by heap_info when memory is readable); a whole 64 MiB
 * heap has no ---p tail and is only counted when heap_info confirms it.
 */
static int heaps_in_region(const struct vt_region *rw, const struct vt_region *tail,
			   const struct vt_classify_ctx *ctx, struct vt_arena_summary *a,
			   uint32_t *flags, uint64_t (*at)[2], size_t *nat)
{
	uint64_t first = (rw->start + VT_HEAP_MAX_SIZE - 1) & ~(VT_HEAP_MAX_SIZE - 1);
	uint64_t last = rw->end & ~(VT_HEAP_MAX_SIZE - 1);   /* start of a partial heap */
	uint64_t addr;
	enum heap_verdict v;
	int found = 0, n = 0;

	if (first >= rw->end)
		return 0;
	/* Whole heaps only count when heap_info confirms them: without target
	 * memory there is nothing to read, and a bounded walk keeps a huge
	 * mapping from costing a read per 64 MiB. */
	for (addr = first; ctx->read_mem && addr < last && n < MAX_WHOLE_HEAPS; addr += VT_HEAP_MAX_SIZE, n++) {
		v = read_heap_info(ctx, addr);
		if (v != HEAP_FIRST && v != HEAP_MORE)
			continue;
		*flags |= VT_KIND_BY_MEMORY;
		add_heap(a, v, VT_HEAP_MAX_SIZE);
		at[*nat][0] = addr;
		at[(*nat)++][1] = addr + VT_HEAP_MAX_SIZE;
		found++;
	}
	/* A partial heap at the end, its ---p reservation right after.  Its
	 * heap_info is read after the maps: a busy arena may have grown into the
	 * reservation since (size past the read-write part we saw), and it is
	 * still the heap: its size is bounded by the reservation, not by the
	 * read-write part. */
	if (last >= first && last < rw->end && tail && is_anon(tail) && perms_are(tail, "---p") &&
	    tail->start == rw->end && tail->end - last >= VT_HEAP_MAX_SIZE) {
		v = read_heap_info(ctx, last);
		if (v != HEAP_NOT) {
			*flags |= VT_KIND_BY_LAYOUT | (v == HEAP_UNREAD ? 0 : VT_KIND_BY_MEMORY);
			add_heap(a, v, rw->end - last);
			at[*nat][0] = last;
			at[(*nat)++][1] = rw->end;
			found++;
		}
	}
	return found;
}

static bool find_blocks_in(const struct vt_classify_ctx *ctx, struct vt_region *r, const uint64_t (*excl)[2],
			   size_t nexcl);

static void find_arena_heaps(struct vt_region_list *list, const struct vt_classify_ctx *ctx,
			     struct vt_arena_summary *a)
{
	uint64_t at[MAX_WHOLE_HEAPS + 1][2];   /* the heaps of one region (16 KiB) */
	size_t i, nat;

	for (i = 0; i < list->n; i++) {
		struct vt_region *rw = &list->v[i], *tail = i + 1 < list->n ? &list->v[i + 1] : NULL;
		uint32_t flags = 0;

		if (!is_anon(rw) || !perms_are(rw, "rw-p") || rw->kind != VT_REGION_OTHER)
			continue;
		nat = 0;
		if (!heaps_in_region(rw, tail, ctx, a, &flags, at, &nat))
			continue;
		add_region_rss(a, rw);
		set_kind(rw, VT_REGION_ARENA_HEAP, flags);
		/* malloc'd blocks merged with the heaps: below the first, above a whole last one */
		if (ctx->find_blocks && nat && (at[0][0] > rw->start || at[nat - 1][1] < rw->end))
			find_blocks_in(ctx, rw, (const uint64_t (*)[2])at, nat);
		if (tail && tail->start == rw->end && is_anon(tail) && perms_are(tail, "---p") &&
		    tail->end % VT_HEAP_MAX_SIZE == 0)
			set_kind(tail, VT_REGION_ARENA_RESERVE, flags);
	}
	a->verified = a->heaps > 0 && a->arenas >= 0;
}

/*
 * The malloc'd blocks inside an anonymous region (alloc/mmap_blocks.h),
 * attached to it: true when there is at least one.
 */
static bool find_blocks(const struct vt_classify_ctx *ctx, struct vt_region *r)
{
	return find_blocks_in(ctx, r, NULL, 0);
}

/* The same, the ranges excl (sorted: arena heaps merged into the region) left out. */
static bool find_blocks_in(const struct vt_classify_ctx *ctx, struct vt_region *r, const uint64_t (*excl)[2],
			   size_t nexcl)
{
	const struct vt_heap_mem plain = { ctx->read_mem, NULL, ctx->read_ctx, NULL };
	struct vt_mmap_blocks_opts o = {
		.min_size = ctx->mmap_threshold ? ctx->mmap_threshold : VT_MMAP_THRESHOLD_MIN,
		.heads = ctx->find_blocks,
		.chained_only = !ctx->find_blocks,
		.deadline_s = ctx->deadline_s,
		.exclude = excl,
		.nexclude = nexcl,
	};
	struct vt_region_blocks *b;

	if (!ctx->read_mem && !ctx->mem)
		return false;
	b = calloc(1, sizeof(*b));
	if (!b)
		return false;
	/* a timeout keeps what was found, the rest counted unread */
	if (vt_mmap_blocks_walk(ctx->mem ? ctx->mem : &plain, r->start, r->end, &o, b, NULL) == VT_E_NOMEM ||
	    !b->n) {
		vt_region_blocks_free(b);
		return false;
	}
	vt_region_blocks_free(r->blocks);
	r->blocks = b;
	return true;
}

/*
 * CPython's object arenas inside an anonymous region of a Python process
 * (alloc/cpython.h), attached to it: true when there is at least one.  Only
 * with find_blocks: every resident page is read.
 */
static bool find_pyarenas(const struct vt_classify_ctx *ctx, struct vt_region *r)
{
	const struct vt_heap_mem plain = { ctx->read_mem, NULL, ctx->read_ctx, NULL };
	const struct vt_cpython *py = ctx->python;
	struct vt_region_pyarenas *a;
	unsigned alignment = py && py->major == 3 && py->minor > 0 && py->minor < 8 ? 8 : 16;

	if (!py || !py->is_python || !ctx->find_blocks || (!ctx->read_mem && !ctx->mem) ||
	    vt_region_size(r) < (256u << 10))
		return false;
	a = calloc(1, sizeof(*a));
	if (!a)
		return false;
	if (vt_cpython_arenas_walk(ctx->mem ? ctx->mem : &plain, r->start, r->end, alignment, ctx->deadline_s, a,
				   NULL) == VT_E_NOMEM || !a->arenas) {
		free(a);
		return false;
	}
	free(r->py);
	r->py = a;
	return true;
}

static int cmp_sp(const void *a, const void *b)
{
	const struct vt_thread_sp *x = a, *y = b;

	return x->sp < y->sp ? -1 : x->sp > y->sp;
}

void vt_thread_sp_sort(struct vt_thread_sp *threads, size_t n)
{
	if (n > 1)
		qsort(threads, n, sizeof(*threads), cmp_sp);
}

/* The thread whose stack pointer lies in r: binary search over sorted sps. */
static int thread_in(const struct vt_classify_ctx *ctx, const struct vt_region *r)
{
	size_t lo = 0, hi = ctx->n_threads;

	while (lo < hi) {            /* first sp >= r->start */
		size_t mid = lo + (hi - lo) / 2;
		if (ctx->threads[mid].sp < r->start)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < ctx->n_threads && ctx->threads[lo].sp < r->end)
		return ctx->threads[lo].tid > 0 ? (int)ctx->threads[lo].tid : -1;
	return 0;
}

static bool has_guard_below(const struct vt_region_list *list, size_t i)
{
	const struct vt_region *g = i ? &list->v[i - 1] : NULL;

	return g && is_anon(g) && perms_are(g, "---p") && g->end == list->v[i].start &&
	       vt_region_size(g) <= GUARD_MAX && g->kind == VT_REGION_OTHER;
}

/*
 * The largest mapping taken for a thread stack by its guard alone (no thread's
 * stack pointer in it: a stack glibc keeps cached for the next thread): as large
 * as the largest stack a thread is on, and at least glibc's default (8 MiB,
 * RLIMIT_STACK's usual).  Larger ones with a guard below are an allocator's:
 * mimalloc reserves address space PROT_NONE and commits a segment above it.
 */
#define LAYOUT_STACK_MIN ((8ull << 20) + (64ull << 10))

static uint64_t layout_stack_max(const struct vt_region_list *list, const struct vt_classify_ctx *ctx)
{
	uint64_t max = LAYOUT_STACK_MIN;

	for (size_t i = 0; ctx->n_threads && i < list->n; i++)   /* no thread's stack pointer: none is on a stack */
		if (list->v[i].kind == VT_REGION_OTHER && is_anon(&list->v[i]) &&
		    !perms_are(&list->v[i], "---p") && thread_in(ctx, &list->v[i]) &&
		    vt_region_size(&list->v[i]) > max)
			max = vt_region_size(&list->v[i]);
	return max;
}

static void classify_anon(struct vt_region_list *list, size_t i, const struct vt_classify_ctx *ctx,
			  uint64_t stack_max)
{
	struct vt_region *r = &list->v[i];
	bool blocks, py;
	int tid;

	if (perms_are(r, "---p")) {
		if (i + 1 < list->n && list->v[i + 1].start == r->end &&
		    list->v[i + 1].kind == VT_REGION_THREAD_STACK)
			set_kind(r, VT_REGION_GUARD, VT_KIND_BY_LAYOUT);
		return;
	}
	tid = thread_in(ctx, r);
	if (tid && (!ctx->stack_needs_guard || has_guard_below(list, i))) {
		set_kind(r, VT_REGION_THREAD_STACK, VT_KIND_BY_THREAD_SP |
			 (has_guard_below(list, i) ? VT_KIND_BY_LAYOUT : 0));
		r->owner_tid = tid > 0 ? tid : 0;
		return;
	}
	/* a region may hold malloc'd blocks and CPython's arenas both: merged mmaps */
	blocks = ctx->alloc == VT_ALLOC_GLIBC &&
		 vt_region_size(r) >= (ctx->mmap_threshold ? ctx->mmap_threshold : VT_MMAP_THRESHOLD_MIN) &&
		 find_blocks(ctx, r);
	py = find_pyarenas(ctx, r);
	if (blocks) {
		set_kind(r, VT_REGION_MMAP_CHUNK, VT_KIND_BY_MEMORY);
	} else if (py) {
		set_kind(r, VT_REGION_PY_ARENAS, VT_KIND_BY_MEMORY);
	} else if (has_guard_below(list, i) && vt_region_size(r) <= stack_max) {
		set_kind(r, VT_REGION_THREAD_STACK, VT_KIND_BY_LAYOUT);
	} else if (ctx->alloc == VT_ALLOC_JEMALLOC || ctx->alloc == VT_ALLOC_TCMALLOC ||
		   ctx->alloc == VT_ALLOC_MIMALLOC) {
		set_kind(r, VT_REGION_ALLOC_OTHER, VT_KIND_BY_LAYOUT);
	} else {
		set_kind(r, VT_REGION_ANON, 0);
	}
}

void vt_regions_classify(struct vt_region_list *list, const struct vt_classify_ctx *ctx,
			 struct vt_arena_summary *a)
{
	uint64_t stack_max;
	size_t i;

	memset(a, 0, sizeof(*a));
	a->main_heap_rss = VT_NA;
	for (i = 0; i < list->n; i++) {
		struct vt_region *r = &list->v[i];
		r->kind = VT_REGION_OTHER;
		r->kind_flags = 0;
		r->owner_tid = 0;
		vt_region_blocks_free(r->blocks);
		r->blocks = NULL;
		free(r->py);
		r->py = NULL;
		if (classify_by_name(r) && r->kind == VT_REGION_MAIN_HEAP) {
			a->main_heap_bytes += vt_region_size(r);
			a->main_heap_rss = r->rss;
		}
	}
	if (!list->has_smaps)
		a->rss_bytes = a->swap_bytes = VT_NA;
	if (ctx->alloc == VT_ALLOC_GLIBC)
		find_arena_heaps(list, ctx, a);
	/* Stacks first (their guards sit below them), then everything else. */
	stack_max = layout_stack_max(list, ctx);
	/*
	 * The smaller mappings first: the walks for blocks and arenas share one
	 * time bound, and one huge mapping walked first would leave none for
	 * the many small ones where CPython's arenas and most blocks live.
	 */
	for (i = 0; i < list->n; i++)
		if (list->v[i].kind == VT_REGION_OTHER && is_anon(&list->v[i]) &&
		    vt_region_size(&list->v[i]) <= WALK_FIRST_MAX)
			classify_anon(list, i, ctx, stack_max);
	for (i = 0; i < list->n; i++)
		if (list->v[i].kind == VT_REGION_OTHER && is_anon(&list->v[i]))
			classify_anon(list, i, ctx, stack_max);
	for (i = 0; ctx->deadline_s > 0 && i < list->n; i++)
		if ((list->v[i].blocks && list->v[i].blocks->unread_bytes) ||
		    (list->v[i].py && list->v[i].py->unread_bytes))
			a->walks_cut = true;
	if (ctx->deadline_s > 0 && vt_mono_s() > ctx->deadline_s)
		a->walks_cut = true;
	for (i = 0; i + 1 < list->n; i++) {
		struct vt_region *g = &list->v[i];
		if (g->kind == VT_REGION_OTHER && is_anon(g) && perms_are(g, "---p") &&
		    list->v[i + 1].kind == VT_REGION_THREAD_STACK && list->v[i + 1].start == g->end)
			set_kind(g, VT_REGION_GUARD, VT_KIND_BY_LAYOUT);
	}
}

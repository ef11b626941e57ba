/*
 * glibc_heap.c — glibc's chunks walked from outside (see glibc_heap.h).
 *
 * Offsets are those of malloc.c and arena.c for x86-64, glibc 2.27 and
 * later: struct malloc_state { int mutex, flags, have_fastchunks; mfastbinptr
 * fastbinsY[10]; mchunkptr top, last_remainder, bins[254]; unsigned
 * binmap[4]; mstate next, next_free; size_t attached_threads, system_mem,
 * max_system_mem; }, heap_info { mstate ar_ptr; heap_info *prev; size_t
 * size, ... }.
 */
#include "alloc/glibc_heap.h"
#include "alloc/mmap_blocks.h"

#include "base/clock.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MS_FASTBINS 16
#define MS_NFASTBINS 10
#define MS_TOP 96
#define MS_BINS 112
#define MS_NBINS 128
#define MS_NEXT 2160
#define MS_SYSTEM_MEM 2184
#define MS_SIZE 2200

#define HEAP_MAX (64ull << 20)      /* HEAP_MAX_SIZE: 2 * DEFAULT_MMAP_THRESHOLD_MAX */
#define HEAPS_MAX 1024              /* heaps of one arena followed */
#define CHUNK_HDR 16
#define MINSIZE 32
#define SIZE_BITS 7ull
#define PREV_INUSE 1ull
#define IS_MMAPPED 2ull
#define LARGE_MIN 1024              /* MIN_LARGE_SIZE: chunks this big keep nextsize links */
#define TCACHE_MAX_CHUNK 0x410      /* the largest chunk tcache holds (1032-byte requests) */
#define TCACHE_STRUCT_NEW 0x290     /* tcache_perthread_struct: uint16 counts[64] + entries[64] */
#define TCACHE_STRUCT_OLD 0x250     /* ... before 2.30: char counts[64] */
#define FAST_LIST_MAX (1u << 22)    /* links followed in one fast bin */

static uint64_t word(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

const char *vt_chunk_kind_name(enum vt_chunk_kind k)
{
	static const char *const names[VT_CHUNK_KINDS] = { "live", "bin", "fast", "tcache", "top", "mmapped" };

	return (unsigned)k < VT_CHUNK_KINDS ? names[k] : "?";
}

bool vt_chunk_kind_free(enum vt_chunk_kind k)
{
	return k == VT_CHUNK_BIN || k == VT_CHUNK_FAST || k == VT_CHUNK_TCACHE || k == VT_CHUNK_TOP;
}

static int mem_read(const struct vt_heap_mem *m, uint64_t addr, void *out, size_t len)
{
	if (addr + len < addr)
		return -1;
	return m->read(m->ctx, addr, out, len);
}

/* ---- arenas --------------------------------------------------------------- */

/*
 * Bins of one read that may be caught mid-update: a thread holding the
 * arena's lock unlinks the last chunk of a bin in two stores (bk, then fd
 * point back at the bin), and a copy of 2200 bytes that is not atomic can
 * see a few such half-done lists, or a thread stopped between the two
 * (census --consistent).
 */
#define ARENA_TORN_MAX 4
#define USER_ADDR_END (1ULL << 47)   /* x86-64, 4-level paging: user addresses are below */

/*
 * The arena at addr: its 2200 bytes look like a malloc_state.  Every one of
 * its 127 bins is empty (both links point at the bin itself) or a list
 * (both links 16-byte aligned user addresses outside the arena), but for a
 * few caught half-done.  How many are empty says nothing: a busy arena
 * that serves every size has almost no empty bin (8 of 127 seen with 6
 * threads churning 16 B - 64 KiB; census called such a process "glibc
 * older than 2.27" 1 time in 6 while this asked for 16).
 */
static bool arena_looks(const uint8_t *ms, uint64_t addr)
{
	unsigned torn = 0, i;
	uint64_t top = word(ms + MS_TOP);

	if (!top || (top & 15) || top >= USER_ADDR_END)
		return false;
	for (i = 1; i < MS_NBINS; i++) {
		uint64_t self = addr + MS_BINS - CHUNK_HDR + 16 * (i - 1);
		uint64_t fd = word(ms + MS_BINS + 16 * (i - 1)), bk = word(ms + MS_BINS + 16 * (i - 1) + 8);
		bool fd_home = fd >= addr && fd < addr + MS_SIZE, bk_home = bk >= addr && bk < addr + MS_SIZE;

		if (fd == self && bk == self)
			continue;         /* empty */
		if (!fd || !bk || (fd & 15) || (bk & 15) || fd >= USER_ADDR_END || bk >= USER_ADDR_END)
			return false;     /* not a list at all */
		if ((fd_home || bk_home) && ++torn > ARENA_TORN_MAX)
			return false;     /* lists that lead into the arena: more than half-done ones */
	}
	return true;
}

bool vt_glibc_arena_check(const struct vt_heap_mem *m, uint64_t addr, size_t *narenas)
{
	uint8_t ms[MS_SIZE];
	uint64_t a = addr;
	size_t n = 0;

	*narenas = 0;
	do {
		if (!a || (a & 7) || mem_read(m, a, ms, sizeof(ms)) || !arena_looks(ms, a))
			return false;
		a = word(ms + MS_NEXT);
		n++;
	} while (a != addr && n <= VT_HEAP_ARENAS_MAX);
	if (a != addr)
		return false;
	*narenas = n;
	return true;
}

bool vt_glibc_arena_ring(const struct vt_heap_mem *m, uint64_t main_arena, uint64_t *out, size_t max,
			 size_t *n)
{
	uint8_t ms[MS_SIZE];
	uint64_t a = main_arena;
	size_t k = 0;

	*n = 0;
	do {
		if (!a || (a & 7) || mem_read(m, a, ms, sizeof(ms)) || !arena_looks(ms, a))
			return false;
		if (k < max)
			out[(*n)++] = a;
		a = word(ms + MS_NEXT);
		k++;
	} while (a != main_arena && k <= VT_HEAP_ARENAS_MAX);
	return a == main_arena;
}

int vt_glibc_find_main_arena(const struct vt_heap_mem *m, const uint8_t *code, size_t len, uint64_t code_addr,
			     uint64_t *main_arena, struct vt_err *err)
{
	size_t i, n;

	*main_arena = 0;
	/* lea disp32(%rip), %reg: REX.W (0x48 or 0x4c) 0x8d, ModRM mod 00 r/m 101, disp32 */
	for (i = 0; i + 7 <= len; i++) {
		int32_t disp;
		uint64_t target;

		if ((code[i] != 0x48 && code[i] != 0x4c) || code[i + 1] != 0x8d || (code[i + 2] & 0xc7) != 0x05)
			continue;
		memcpy(&disp, code + i + 3, sizeof(disp));
		target = code_addr + i + 7 + (uint64_t)(int64_t)disp;
		if (vt_glibc_arena_check(m, target, &n)) {
			*main_arena = target;
			return VT_OK;
		}
	}
	return vt_err_set(err, VT_E_NOTFOUND, 0, "main_arena not found: no address that mallinfo2's code "
			  "loads checks as a malloc arena");
}

/* ---- a set of chunk addresses (fast-bin members) ------------------------------ */

struct addr_set {
	uint64_t *slot;              /* 0: empty */
	size_t cap, n;               /* cap a power of two */
};

static size_t addr_hash(uint64_t a, size_t cap)
{
	return (size_t)((a >> 4) * 0x9e3779b97f4a7c15ull >> 17) & (cap - 1);
}

/* Add a; false when out of memory or already there. */
static bool set_add(struct addr_set *s, uint64_t a)
{
	size_t i;

	if (2 * (s->n + 1) > s->cap) {
		struct addr_set g = { calloc(s->cap ? 2 * s->cap : 1024, sizeof(uint64_t)), s->cap ? 2 * s->cap : 1024, 0 };

		if (!g.slot)
			return false;
		for (i = 0; i < s->cap; i++)
			if (s->slot[i])
				set_add(&g, s->slot[i]);
		free(s->slot);
		*s = g;
	}
	for (i = addr_hash(a, s->cap); s->slot[i]; i = (i + 1) & (s->cap - 1))
		if (s->slot[i] == a)
			return false;
	s->slot[i] = a;
	s->n++;
	return true;
}

/* ---- the walker ------------------------------------------------------------ */

struct walker {
	const struct vt_heap_mem *m;
	const struct vt_heap_walk_opts *o;
	struct vt_heap_walk *w;
	struct addr_set fast;         /* the fast-bin members, while the lists are followed */
	/*
	 * ... then sorted, for the walk: it steps through a heap upwards, so a
	 * cursor that follows it finds a member without a probe into the set
	 * (a cache miss a chunk, nine tenths of the walk's own time on text)
	 */
	uint64_t *fast_sorted;
	size_t nfast, fast_at;
	uint64_t heaps[HEAPS_MAX];    /* the arenas' heaps seen, each HEAP_MAX long */
	size_t nheaps;
	uint64_t tcache_own[64];     /* 2.29-2.33: tcaches' own addresses (their entries' key) */
	size_t ntcache_own;
	/* the window: [start, end) read into buf; present[] per page */
	uint8_t *buf;
	uint64_t start, end;
	uint8_t present[VT_HEAP_WINDOW / VT_HEAP_PAGE];
	bool late;                   /* the deadline passed: every read from now on fails */
};

/* Past the caller's deadline?  Asked once a window (a megabyte), so it costs nothing. */
static bool late(struct walker *k)
{
	if (!k->late && k->o->deadline_s > 0 && vt_mono_s() > k->o->deadline_s)
		k->late = true;
	return k->late;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The members of k->fast, sorted; -1 when memory runs out. */
static int fast_sort(struct walker *k)
{
	size_t i;

	k->nfast = 0;
	if (!k->fast.n)
		return 0;
	k->fast_sorted = malloc(k->fast.n * sizeof(*k->fast_sorted));
	if (!k->fast_sorted)
		return -1;
	for (i = 0; i < k->fast.cap; i++)
		if (k->fast.slot[i])
			k->fast_sorted[k->nfast++] = k->fast.slot[i];
	qsort(k->fast_sorted, k->nfast, sizeof(*k->fast_sorted), cmp_u64);
	return 0;
}

/* The cursor to the first member at or after p (a heap's walk begins there). */
static void fast_seek(struct walker *k, uint64_t p)
{
	size_t lo = 0, hi = k->nfast;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->fast_sorted[mid] < p)
			lo = mid + 1;
		else
			hi = mid;
	}
	k->fast_at = lo;
}

/* Whether p is a fast-bin member; p never below the one asked before since fast_seek. */
static bool fast_has(struct walker *k, uint64_t p)
{
	while (k->fast_at < k->nfast && k->fast_sorted[k->fast_at] < p)
		k->fast_at++;
	return k->fast_at < k->nfast && k->fast_sorted[k->fast_at] == p;
}

/*
 * The end of the readable memory holding addr: its mapping and the ones
 * right after it (a heap grown after a fork is two mappings); 0 when none.
 */
static uint64_t mapping_end(const struct vt_region_list *maps, uint64_t addr)
{
	uint64_t end = 0;
	size_t i;

	for (i = 0; maps && i < maps->n; i++) {
		const struct vt_region *r = &maps->v[i];

		if (end ? r->start != end : addr < r->start || addr >= r->end)
			continue;
		if (r->perms[0] != 'r')
			break;
		end = r->end;
	}
	return end;
}

/* Read [addr & ~page, ...) into the window, up to limit: resident pages only. */
static int win_load(struct walker *k, uint64_t addr, uint64_t limit)
{
	uint64_t start = addr & ~(uint64_t)(VT_HEAP_PAGE - 1), end = start + VT_HEAP_WINDOW;
	size_t npages, i, run;

	if (limit < end)
		end = (limit + VT_HEAP_PAGE - 1) & ~(uint64_t)(VT_HEAP_PAGE - 1);
	if (end <= start || late(k))
		return -1;
	npages = (size_t)((end - start) / VT_HEAP_PAGE);
	if (!k->m->resident || k->m->resident(k->m->ctx, start, npages, k->present))
		memset(k->present, 1, npages);
	k->start = k->end = 0;
	for (i = 0; i < npages; i = run) {
		for (run = i; run < npages && k->present[run] == k->present[i]; run++)
			;
		if (!k->present[i]) {
			memset(k->buf + i * VT_HEAP_PAGE, 0, (run - i) * VT_HEAP_PAGE);
			continue;
		}
		if (mem_read(k->m, start + i * VT_HEAP_PAGE, k->buf + i * VT_HEAP_PAGE, (run - i) * VT_HEAP_PAGE))
			return -1;
		k->w->read_bytes += (run - i) * VT_HEAP_PAGE;
	}
	k->start = start;
	k->end = end;
	return 0;
}

static bool page_present(const struct walker *k, uint64_t addr)
{
	return addr >= k->start && addr < k->end && k->present[(addr - k->start) / VT_HEAP_PAGE];
}

/* The 16-byte header at p: from the window when it is there and resident, else read alone. */
static int header_at(struct walker *k, uint64_t p, uint64_t *prev_size, uint64_t *size)
{
	uint8_t h[16];

	if (p >= k->start && p + 16 <= k->end && page_present(k, p)) {
		memcpy(h, k->buf + (p - k->start), 16);
	} else {
		if (mem_read(k->m, p, h, 16))
			return -1;
		k->w->read_bytes += 16;
	}
	*prev_size = word(h);
	*size = word(h + 8);
	return 0;
}

/* The second word of the chunk at p's content (a tcache entry's key), when resident in the window. */
static bool key_word(const struct walker *k, uint64_t p, uint64_t *v)
{
	if (p + 32 > k->end || p < k->start || !page_present(k, p + 24))
		return false;
	*v = word(k->buf + (p + 24 - k->start));
	return true;
}

/* Hand [cs, ce) of chunk p to the visitor, resident pages only, window by window. */
static int visit_content(struct walker *k, const struct vt_chunk_piece *tmpl, uint64_t cs, uint64_t ce,
			 uint64_t limit)
{
	struct vt_chunk_piece piece = *tmpl;
	uint64_t a = cs;

	piece.first = true;
	piece.addr = cs;
	piece.bytes = NULL;
	piece.len = 0;
	while (a < ce) {
		uint64_t run_end;

		if (a < k->start || a >= k->end) {
			if (win_load(k, a, limit))
				return -1;
		}
		if (!page_present(k, a)) {
			a = (a | (VT_HEAP_PAGE - 1)) + 1;
			continue;
		}
		run_end = a;
		while (run_end < ce && run_end < k->end && page_present(k, run_end))
			run_end = (run_end | (VT_HEAP_PAGE - 1)) + 1;
		if (run_end > ce)
			run_end = ce;
		if (k->o->visit) {
			piece.addr = a;
			piece.bytes = k->buf + (a - k->start);
			piece.len = (size_t)(run_end - a);
			k->o->visit(k->o->visit_ctx, &piece);
			piece.first = false;
		}
		a = run_end;
	}
	if (piece.first && k->o->visit) {      /* nothing resident: the chunk is still counted */
		piece.addr = cs;
		piece.bytes = NULL;
		piece.len = 0;
		k->o->visit(k->o->visit_ctx, &piece);
	}
	return 0;
}

/* Whether the page at addr is resident: from the window when it holds it, else asked alone. */
static bool resident_page(struct walker *k, uint64_t addr)
{
	uint8_t present = 1;

	if (addr >= k->start && addr < k->end)
		return page_present(k, addr);
	if (k->m->resident && k->m->resident(k->m->ctx, addr & ~(uint64_t)(VT_HEAP_PAGE - 1), 1, &present))
		present = 1;
	return present;
}

/*
 * Bytes of [a, b) on resident pages, and (whole_from not NULL) the resident
 * whole pages from *whole_from up to b.  The data window stays where it is.
 */
static void resident_of(struct walker *k, uint64_t a, uint64_t b, uint64_t *bytes, const uint64_t *whole_from,
			uint64_t *whole)
{
	uint64_t x = a;

	*bytes = 0;
	*whole = 0;
	while (x < b) {
		uint64_t next = (x | (VT_HEAP_PAGE - 1)) + 1, e = next < b ? next : b;

		if (resident_page(k, x)) {
			*bytes += e - x;
			if (whole_from && x >= *whole_from && (x & (VT_HEAP_PAGE - 1)) == 0 && next <= b)
				*whole += VT_HEAP_PAGE;
		}
		x = next;
	}
}

/*
 * Learn the tcache key from a tcache_perthread_struct whose user bytes are
 * at u (csize its chunk size): the key in its first entry.  From glibc 2.34
 * one random key serves every thread; in 2.29-2.33 each entry holds its
 * tcache's own address, so each tcache found is remembered.
 */
static void learn_key(struct walker *k, uint64_t u, uint64_t csize)
{
	uint8_t t[TCACHE_STRUCT_NEW - CHUNK_HDR];
	size_t counts_len = csize == TCACHE_STRUCT_NEW ? 128 : 64, i;

	if ((k->w->tcache_key_known && !k->o->key_is_tcache) || mem_read(k->m, u, t, counts_len + 512))
		return;
	for (i = 0; i < 64; i++) {
		unsigned count = counts_len == 128 ? (unsigned)(t[2 * i] | t[2 * i + 1] << 8) : t[i];
		uint64_t e = word(t + counts_len + 8 * i), key;

		if (!count || !e || (e & 15))
			continue;
		if (mem_read(k->m, e + 8, &key, sizeof(key)) || !key)
			continue;
		if (k->o->key_is_tcache) {
			if (key != u || k->ntcache_own == sizeof(k->tcache_own) / sizeof(k->tcache_own[0]))
				continue;
			k->tcache_own[k->ntcache_own++] = u;
		}
		k->w->tcache_key = key;
		k->w->tcache_key_known = true;
		return;
	}
}

static bool is_tcache_entry(const struct walker *k, uint64_t p, uint64_t csize)
{
	uint64_t v;
	size_t i;

	if (csize > TCACHE_MAX_CHUNK || !key_word(k, p, &v) || !v)
		return false;
	if (!k->o->key_is_tcache)
		return k->w->tcache_key_known && v == k->w->tcache_key;
	for (i = 0; i < k->ntcache_own; i++)
		if (v == k->tcache_own[i])
			return true;
	return false;
}

/*
 * The fast-bin lists, followed before the walk (a fast chunk looks in use
 * to the walk): one 24-byte read (header and fd) per link, the links of
 * every list of every arena in one read_each call a round, so the calls
 * number the longest list's links, not all links, and no page is read
 * whole for one word of it.  Freed chunks of one size lie anywhere in the
 * heap, so a cache of pages saved few reads (30,475 pages for 60,000 links
 * on a 256 MiB heap) and read 1.6 times the heap.
 */
#define LINK_READ 24                /* prev_size, size, fd */
#define LINK_ROUND 1024             /* links read in one read_each call at most */

struct fast_cursor {
	uint64_t p;                  /* the next link to read; 0: the list ended */
	unsigned bin;                /* its fast bin: chunks of (bin + 2) * 16 bytes */
	size_t n;                    /* links followed */
};

/* n stretches of LINK_READ bytes: through read_each when there is one, else one read each. */
static void links_read(struct walker *k, const uint64_t *addrs, size_t n, uint8_t *out, uint8_t *ok)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (addrs[i] + LINK_READ < addrs[i])
			break;
	if (k->m->read_each && i == n) {
		k->m->read_each(k->m->ctx, addrs, n, LINK_READ, out, ok);
	} else {
		for (i = 0; i < n; i++)
			ok[i] = !mem_read(k->m, addrs[i], out + i * LINK_READ, LINK_READ);
	}
	for (i = 0; i < n; i++)
		k->w->read_bytes += ok[i] ? LINK_READ : 0;
}

/* One round's reads. */
struct link_round {
	uint64_t addrs[LINK_ROUND];
	size_t which[LINK_ROUND];    /* the cursor each is for */
	uint8_t data[LINK_ROUND][LINK_READ];
	uint8_t ok[LINK_ROUND];
};

/*
 * Follow the ncur lists of cur, a link of each in a round; members into
 * k->fast.  A list stops at a link that is misaligned, unreadable, of
 * another size, or seen already (a cycle): fast_bad counts them.  -1 when
 * memory runs out.
 */
static int fast_follow(struct walker *k, struct fast_cursor *cur, size_t ncur)
{
	struct link_round *r = malloc(sizeof(*r));
	size_t from = 0, i, j, n;

	if (!r)
		return -1;
	for (;;) {
		for (n = 0, i = 0; i < ncur && n < LINK_ROUND; i++) {
			struct fast_cursor *c = &cur[(from + i) % ncur];

			if (!c->p)
				continue;
			if (c->n++ >= FAST_LIST_MAX) {
				c->p = 0;
				continue;
			}
			if (c->p & 15) {
				k->w->fast_bad++;
				c->p = 0;
				continue;
			}
			r->which[n] = (from + i) % ncur;
			r->addrs[n++] = c->p;
		}
		if (!n)
			break;          /* every list ended */
		from = (from + i) % ncur;   /* more lists than a round takes: the rest go first next */
		links_read(k, r->addrs, n, &r->data[0][0], r->ok);
		for (j = 0; j < n; j++) {
			struct fast_cursor *c = &cur[r->which[j]];
			uint64_t size = word(r->data[j] + 8), fd = word(r->data[j] + 16);

			if (!r->ok[j] || ((size & ~SIZE_BITS) >> 4) - 2 != c->bin || !set_add(&k->fast, c->p)) {
				k->w->fast_bad++;   /* torn while being read, a cycle, or memory: stop this list */
				c->p = 0;
				continue;
			}
			c->p = k->o->safe_linking ? fd ^ ((c->p + 16) >> 12) : fd;
		}
	}
	free(r);
	return 0;
}

/* Count one chunk and hand its content over. */
static int take_chunk(struct walker *k, struct vt_arena_walk *aw, size_t ai, uint64_t p, uint64_t csize,
		      enum vt_chunk_kind kind, uint64_t limit)
{
	struct vt_chunk_piece tmpl = { .chunk = p, .size = csize, .kind = kind, .arena = ai };
	uint64_t meta = 0, cs, ce;

	aw->chunks[kind]++;
	aw->bytes[kind] += csize;
	aw->walked += csize;
	if (kind == VT_CHUNK_BIN || kind == VT_CHUNK_FAST || kind == VT_CHUNK_TCACHE)
		meta = kind == VT_CHUNK_BIN && csize >= LARGE_MIN ? 32 : 16;
	if (vt_chunk_kind_free(kind)) {
		uint64_t res, whole, from = (p + 48 + VT_HEAP_PAGE - 1) & ~(uint64_t)(VT_HEAP_PAGE - 1);

		resident_of(k, p, p + csize, &res, kind == VT_CHUNK_BIN || kind == VT_CHUNK_FAST ? &from : NULL, &whole);
		aw->free_resident += res;
		aw->trimmable += whole;
	}
	cs = p + CHUNK_HDR + meta;
	ce = kind == VT_CHUNK_LIVE ? p + csize + 8 : p + csize;
	if (ce > limit)
		ce = limit;
	if (cs > ce)
		cs = ce;
	return visit_content(k, &tmpl, cs, ce, limit);
}

/*
 * Walk chunks from p to end (exclusive) in one heap of arena ai; top (0: none
 * in this heap) ends it.  Returns the address reached.
 */
static uint64_t walk_heap(struct walker *k, size_t ai, uint64_t p, uint64_t end, uint64_t top)
{
	struct vt_arena_walk *aw = &k->w->arenas[ai];
	uint64_t limit = mapping_end(k->o->maps, p);
	unsigned tries = 0;

	if (!limit || limit < end)
		limit = end;
	fast_seek(k, p);
	while (p + CHUNK_HDR <= end) {
		uint64_t ps, sz, csize, nps, nsz;
		enum vt_chunk_kind kind;

		if (p == top) {
			csize = aw->top_size;
			if ((csize & 15) || csize > limit - p)
				break;              /* a top that does not fit its heap: torn or not a heap */
			if (take_chunk(k, aw, ai, p, csize, VT_CHUNK_TOP, limit))
				break;
			return p + csize;
		}
		if ((p < k->start || p + 32 > k->end) && win_load(k, p, limit))
			break;
		if (header_at(k, p, &ps, &sz))
			break;
		csize = sz & ~SIZE_BITS;
		if (csize == 0)
			return p;                       /* a heap's closing fencepost */
		/* csize > end - p, not p + csize > end: a size near 2^64 (torn or not a heap)
		 * would wrap p backwards, and the walk would go round for ever */
		if ((csize & 15) || csize > end - p || (csize < MINSIZE && p + csize + CHUNK_HDR < end) ||
		    header_at(k, p + csize, &nps, &nsz)) {
			if (++tries <= VT_HEAP_REREADS) {      /* torn by a writer: read it again */
				aw->rereads++;
				k->start = k->end = 0;
				continue;
			}
			break;
		}
		tries = 0;
		if (p + csize + CHUNK_HDR > k->end && csize + CHUNK_HDR + VT_HEAP_PAGE <= VT_HEAP_WINDOW &&
		    win_load(k, p, limit))
			break;              /* a chunk that fits a window is seen whole: strings stay in one piece */
		if (p + csize == top || (nsz & PREV_INUSE))
			kind = VT_CHUNK_LIVE;
		else
			kind = VT_CHUNK_BIN;
		if (p + csize == top && !(nsz & PREV_INUSE))
			kind = VT_CHUNK_BIN;
		if (kind == VT_CHUNK_LIVE) {
			if (fast_has(k, p))
				kind = VT_CHUNK_FAST;
			else if ((csize == TCACHE_STRUCT_NEW || csize == TCACHE_STRUCT_OLD) &&
				 (!k->w->tcache_key_known || k->o->key_is_tcache))
				learn_key(k, p + CHUNK_HDR, csize);
			if (kind == VT_CHUNK_LIVE && is_tcache_entry(k, p, csize))
				kind = VT_CHUNK_TCACHE;
		}
		if (take_chunk(k, aw, ai, p, csize, kind, limit))
			break;
		p += csize;
	}
	if (p < end)
		aw->skipped += end - p;
	return end;
}

/* The first chunk of the [heap] mapping: the main arena's. */
static uint64_t main_heap_start(const struct vt_region_list *maps)
{
	size_t i;

	for (i = 0; maps && i < maps->n; i++)
		if (maps->v[i].path && !strcmp(maps->v[i].path, "[heap]"))
			return maps->v[i].start;
	return 0;
}

/* A thread's tcache is its first chunk: learn the key from it before walking. */
static void learn_key_at(struct walker *k, uint64_t chunk)
{
	uint64_t hdr[2];

	if (!chunk || mem_read(k->m, chunk, hdr, sizeof(hdr)))
		return;
	hdr[1] &= ~SIZE_BITS;
	if (hdr[1] == TCACHE_STRUCT_NEW || hdr[1] == TCACHE_STRUCT_OLD)
		learn_key(k, chunk + CHUNK_HDR, hdr[1]);
}

static uint64_t first_chunk_after_arena(uint64_t arena)
{
	uint64_t p = arena + MS_SIZE;

	if ((p + CHUNK_HDR) & 15)
		p += 16 - ((p + CHUNK_HDR) & 15);
	return p;
}

/* Walk a non-main arena's heaps, oldest first: from the heap holding top back along prev. */
static void walk_arena_heaps(struct walker *k, size_t ai)
{
	struct vt_arena_walk *aw = &k->w->arenas[ai];
	uint64_t heaps[HEAPS_MAX], sizes[HEAPS_MAX], h = aw->top & ~(HEAP_MAX - 1), first, hi_size;
	size_t n = 0, i;

	while (h && n < HEAPS_MAX) {
		uint64_t hi[3];      /* heap_info: ar_ptr, prev, size */

		if (mem_read(k->m, h, hi, sizeof(hi)) || hi[0] != aw->addr || hi[2] > HEAP_MAX || (hi[1] & (HEAP_MAX - 1)))
			break;
		heaps[n] = h;
		sizes[n++] = hi[2];
		if (k->nheaps < HEAPS_MAX)
			k->heaps[k->nheaps++] = h;
		h = hi[1];
	}
	first = n ? heaps[n - 1] : 0;
	if (!n || h || aw->addr < first || aw->addr >= first + VT_HEAP_PAGE) {
		aw->skipped += aw->system_mem;     /* the chain does not lead back to the arena */
		return;
	}
	hi_size = aw->addr - first;                /* the arena follows the first heap's heap_info */
	for (i = n; i-- > 0;) {
		uint64_t start = i == n - 1 ? first_chunk_after_arena(aw->addr) : heaps[i] + hi_size;

		walk_heap(k, ai, start, heaps[i] + sizes[i], i == 0 ? aw->top : 0);
		aw->heaps++;
	}
}

static void walk_main(struct walker *k)
{
	struct vt_arena_walk *aw = &k->w->arenas[0];
	uint64_t start = main_heap_start(k->o->maps), limit = start ? mapping_end(k->o->maps, start) : 0;
	uint64_t end = aw->top + aw->top_size;

	if (!start || aw->top < start || aw->top >= limit || aw->top_size > limit - aw->top) {
		aw->skipped += aw->system_mem;     /* no [heap], or a main arena grown by mmap */
		return;
	}
	walk_heap(k, 0, start, end, aw->top);
	aw->heaps = 1;
}

static int cmp_range(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/*
 * Chunks mmapped alone, found by the one walker of alloc/mmap_blocks.h in
 * every anonymous read-write mapping, the arenas' heaps left out: any page
 * may start one (neighbouring mappings merge), and in a mapping larger than
 * VT_HEAP_MMAP_SCAN_MAX (a runtime's or a sanitizer's reservation of
 * terabytes) pages are stepped over up to that bound and only chained
 * headers followed past it.  Any page-multiple size counts here, as
 * mallinfo2's hblks does.
 */
static void walk_mmapped(struct walker *k)
{
	struct vt_heap_walk *w = k->w;
	uint64_t (*excl)[2] = k->nheaps ? calloc(k->nheaps, sizeof(*excl)) : NULL;
	struct vt_mmap_blocks_opts bo = { .min_size = VT_HEAP_PAGE, .deadline_s = k->o->deadline_s };
	size_t i, j;

	for (i = 0; excl && i < k->nheaps; i++) {
		excl[i][0] = k->heaps[i];
		excl[i][1] = k->heaps[i] + HEAP_MAX;
	}
	if (excl) {
		qsort(excl, k->nheaps, sizeof(*excl), cmp_range);
		bo.exclude = (const uint64_t (*)[2])excl;
		bo.nexclude = k->nheaps;
	}
	for (i = 0; k->o->maps && i < k->o->maps->n; i++) {
		const struct vt_region *r = &k->o->maps->v[i];
		struct vt_region_blocks b;
		int rc;

		if ((r->path && r->path[0]) || strncmp(r->perms, "rw", 2))
			continue;
		if (late(k))
			break;
		rc = vt_mmap_blocks_walk(k->m, r->start, r->end, &bo, &b, NULL);
		w->read_bytes += b.read_bytes;
		for (j = 0; j < b.n; j++) {
			struct vt_chunk_piece tmpl = { .chunk = b.v[j].addr, .size = b.v[j].size,
						       .kind = VT_CHUNK_MMAPPED, .arena = w->narenas };
			uint64_t res, whole, a = b.v[j].addr;

			w->mmapped_chunks++;
			w->mmapped_bytes += b.v[j].size;
			resident_of(k, a, a + b.v[j].size, &res, NULL, &whole);
			w->mmapped_resident += res;
			if (visit_content(k, &tmpl, a + CHUNK_HDR, a + b.v[j].size, r->end))
				break;
		}
		free(b.v);
		if (rc == VT_E_TIMEOUT)
			k->late = true;
	}
	free(excl);
}

void vt_heap_walk_release(struct vt_heap_walk *w)
{
	free(w->arenas);
	w->arenas = NULL;
	w->narenas = 0;
}

int vt_heap_walk(const struct vt_heap_mem *m, const struct vt_heap_walk_opts *o, struct vt_heap_walk *out,
		 struct vt_err *err)
{
	struct walker k = { .m = m, .o = o, .w = out };
	struct fast_cursor *cur;
	uint8_t ms[MS_SIZE];
	uint64_t a, hdr[2];
	size_t n, i, j;

	memset(out, 0, sizeof(*out));
	out->safe_linking = o->safe_linking;
	if (!vt_glibc_arena_check(m, o->main_arena, &n))
		return vt_err_set(err, VT_E_PARSE, 0, "no malloc arena at 0x%llx (its bins or its ring do not check)",
				  (unsigned long long)o->main_arena);
	out->arenas = calloc(n, sizeof(*out->arenas));
	k.buf = malloc(VT_HEAP_WINDOW);
	cur = calloc(n * MS_NFASTBINS, sizeof(*cur));
	if (!out->arenas || !k.buf || !cur) {
		free(k.buf);
		free(cur);
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory walking the heap");
	}
	out->narenas = n;
	for (i = 0, a = o->main_arena; i < n; i++) {
		struct vt_arena_walk *aw = &out->arenas[i];

		if (mem_read(m, a, ms, sizeof(ms))) {
			free(k.buf);
			free(cur);
			return vt_err_set(err, VT_E_GONE, 0, "arena 0x%llx went away while read", (unsigned long long)a);
		}
		aw->addr = a;
		aw->main = i == 0;
		aw->system_mem = word(ms + MS_SYSTEM_MEM);
		aw->top = word(ms + MS_TOP);
		if (aw->top != a + MS_BINS - CHUNK_HDR && !mem_read(m, aw->top, hdr, sizeof(hdr)))
			aw->top_size = hdr[1] & ~SIZE_BITS;
		for (j = 0; j < MS_NFASTBINS; j++) {
			cur[i * MS_NFASTBINS + j].p = word(ms + MS_FASTBINS + 8 * j);
			cur[i * MS_NFASTBINS + j].bin = (unsigned)j;
		}
		a = word(ms + MS_NEXT);
	}
	j = fast_follow(&k, cur, n * MS_NFASTBINS) || fast_sort(&k);
	free(cur);
	free(k.fast.slot);
	k.fast.slot = NULL;
	if (j) {
		free(k.buf);
		free(k.fast_sorted);
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory walking the heap");
	}
	/* a thread's tcache is its first chunk: the key first, so that no entry is walked as live */
	learn_key_at(&k, main_heap_start(o->maps));
	for (i = 1; i < n; i++)
		learn_key_at(&k, first_chunk_after_arena(out->arenas[i].addr));
	for (i = 0; i < n; i++) {
		if (out->arenas[i].top == out->arenas[i].addr + MS_BINS - CHUNK_HDR)
			continue;          /* malloc never ran in it: its top is the unsorted bin */
		if (i == 0)
			walk_main(&k);
		else
			walk_arena_heaps(&k, i);
	}
	if (!o->arenas_only)
		walk_mmapped(&k);
	free(k.fast_sorted);
	free(k.buf);
	if (k.late)
		return vt_err_set(err, VT_E_TIMEOUT, 0, "the walk outran its time limit: what it counted is incomplete");
	return VT_OK;
}

void vt_heap_walk_mallinfo(const struct vt_heap_walk *w, struct vt_mallinfo *mi)
{
	size_t i;

	memset(mi, 0, sizeof(*mi));
	mi->wide = true;
	for (i = 0; i < w->narenas; i++) {
		const struct vt_arena_walk *aw = &w->arenas[i];

		mi->arena += aw->system_mem;
		mi->ordblks += aw->chunks[VT_CHUNK_BIN] + 1;
		mi->smblks += aw->chunks[VT_CHUNK_FAST];
		mi->fsmblks += aw->bytes[VT_CHUNK_FAST];
		mi->fordblks += aw->top_size + aw->bytes[VT_CHUNK_BIN] + aw->bytes[VT_CHUNK_FAST];
		if (aw->main)
			mi->keepcost = aw->top_size;
	}
	mi->uordblks = mi->arena - mi->fordblks;
	mi->hblks = w->mmapped_chunks;
	mi->hblkhd = w->mmapped_bytes;
}

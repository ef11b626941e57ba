/*
 * fragment.c — the most repeated fragments of text (see fragment.h).
 *
 * A run of text is read once: each K-byte window is hashed whole (two loads
 * and a 128-bit multiply, no rolling state), the last WINDOW hashes kept in
 * a ring; the smallest of the ring is sampled each time it changes.  A
 * sampled piece new to the chunk updates the sketch and, when counted or
 * admitted, its counter and how far this copy agrees with the kept one.
 */
#include "sample/fragment.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sample/content.h"
#include "sample/spacesave.h"

#define K VT_FRAGMENT_K
#define W VT_FRAGMENT_WINDOW
#define CTX VT_FRAGMENT_CONTEXT
#define SKETCH_CELLS (1u << VT_FRAGMENT_SKETCH_LOG2)   /* counters in all */
#define SKETCH_LINES (SKETCH_CELLS / 16)
#define SET_CELLS (2u * VT_FRAGMENT_CHUNK_PIECES)

_Static_assert(VT_FRAGMENT_SKETCH_ROWS == 2 && VT_FRAGMENT_SKETCH_LOG2 <= 36, "a line's index is 32 bits of the hash");
_Static_assert((W & (W - 1)) == 0, "the ring of hashes is indexed with a mask");
_Static_assert(K > 8 && K <= 16, "a piece is one 64-bit load and one more");

/* What a counted piece keeps to grow into its fragment. */
struct grow {
	uint8_t piece[K];
	uint8_t left[CTX];                /* left[j]: the byte j + 1 before the piece */
	uint8_t right[CTX];               /* right[j]: the byte j after the piece */
	uint8_t nleft, nright;            /* kept (the run may end sooner) */
	uint32_t lagree[CTX + 1];         /* copies agreeing over exactly j bytes to the left */
	uint32_t ragree[CTX + 1];
};

struct vt_fragments {
	struct vt_ss ss;                  /* key: the piece's hash; aux: 0 */
	struct grow *grow;                /* by slot */
	uint32_t *sketch;                 /* SKETCH_CELLS, in sketch_mem on a 64-byte line */
	void *sketch_mem;
	struct cell {
		uint64_t key;
		uint64_t gen;             /* the cell is taken when it holds gen */
	} *set;                           /* this chunk's pieces: open addressing, SET_CELLS */
	uint64_t gen;
	size_t set_used;
	uint64_t sampled;
};

static inline uint64_t load_le(const uint8_t *p, size_t n)
{
	uint64_t w = 0;

	memcpy(&w, p, n);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	w = __builtin_bswap64(w) >> (8 * (8 - n));
#endif
	return w;
}

static inline uint64_t piece_hash(const uint8_t *p)
{
	__uint128_t r = (__uint128_t)(load_le(p, 8) ^ 0xa0761d6478bd642full) *
			(load_le(p + 8, K - 8) ^ 0xe7037ed1a0b428dbull);
	return (uint64_t)r ^ (uint64_t)(r >> 64);
}

int vt_fragments_new(size_t counters, struct vt_fragments **out)
{
	struct vt_fragments *f = calloc(1, sizeof(*f));

	*out = NULL;
	if (!counters)
		counters = VT_FRAGMENT_COUNTERS;
	if (!f)
		return -1;
	if (vt_ss_init(&f->ss, (uint32_t)counters) < 0)
		goto nomem;
	f->grow = calloc(counters, sizeof(*f->grow));
	/* calloc, not aligned_alloc and memset: pages never counted into stay the kernel's zero page */
	f->sketch_mem = calloc((size_t)SKETCH_CELLS + 16, sizeof(*f->sketch));
	if (f->sketch_mem)
		f->sketch = (uint32_t *)(((uintptr_t)f->sketch_mem + 63) & ~(uintptr_t)63);
	f->set = calloc(SET_CELLS, sizeof(*f->set));
	if (!f->grow || !f->sketch || !f->set)
		goto nomem;
	f->gen = 1;
	*out = f;
	return 0;
nomem:
	vt_fragments_free(f);
	return -1;
}

void vt_fragments_free(struct vt_fragments *f)
{
	if (!f)
		return;
	vt_ss_release(&f->ss);
	free(f->grow);
	free(f->sketch_mem);
	free(f->set);
	free(f);
}

size_t vt_fragments_memory(const struct vt_fragments *f)
{
	size_t cap = f->ss.cap, index = (size_t)f->ss.mask + 1;

	return sizeof(*f) + cap * (sizeof(struct vt_ss_entry) + sizeof(uint32_t) + sizeof(struct grow)) +
	       index * sizeof(uint32_t) + (size_t)SKETCH_CELLS * sizeof(uint32_t) +
	       SET_CELLS * sizeof(*f->set);
}

uint64_t vt_fragments_sampled(const struct vt_fragments *f)
{
	return f->sampled;
}

void vt_fragments_chunk(struct vt_fragments *f)
{
	if (!f->set_used)
		return;
	f->set_used = 0;
	f->gen++;   /* 64 bits: never wraps */
}

static inline uint32_t set_home(uint64_t h)
{
	return (uint32_t)(h >> 40) & (SET_CELLS - 1);
}

/*
 * The sketch's two counters of h lie in one 64-byte line (a blocked sketch:
 * one cache miss a piece, not two): the line from the low bits, a counter
 * of its 16 from each of two other nibbles (two different ones).
 */
static inline uint32_t *sketch_line(struct vt_fragments *f, uint64_t h)
{
	return &f->sketch[((uint32_t)h & (SKETCH_LINES - 1)) * 16];
}

/* true when h is new to this chunk (and now taken). */
static bool chunk_first(struct vt_fragments *f, uint64_t h)
{
	uint32_t i = set_home(h);

	if (f->set_used == VT_FRAGMENT_CHUNK_PIECES)
		vt_fragments_chunk(f);   /* a chunk this rich in text: counted once per so many pieces */
	while (f->set[i].gen == f->gen) {
		if (f->set[i].key == h)
			return false;
		i = (i + 1) & (SET_CELLS - 1);
	}
	f->set[i].gen = f->gen;
	f->set[i].key = h;
	f->set_used++;
	return true;
}

/* Count h in the sketch (conservative update); returns the upper bound of its count, this copy included. */
static uint32_t sketch_add(struct vt_fragments *f, uint64_t h)
{
	uint32_t *line = sketch_line(f, h), i = (uint32_t)(h >> 32) & 15, j = (uint32_t)(h >> 36) & 15;
	uint32_t *a = &line[i], *b = &line[j == i ? j ^ 1 : j];
	uint32_t v = (*a < *b ? *a : *b);

	if (v == UINT32_MAX)
		return v;
	v++;
	if (*a < v)
		*a = v;
	if (*b < v)
		*b = v;
	return v;
}

/* The piece at s[i..i+K) of the run s[0..n), this copy: how far it agrees with the kept one. */
static void agree(struct grow *g, const uint8_t *s, size_t n, size_t i)
{
	size_t l = 0, r = 0, lmax = i < g->nleft ? i : g->nleft, rmax = n - i - K;

	if (rmax > g->nright)
		rmax = g->nright;
	while (l < lmax && s[i - 1 - l] == g->left[l])
		l++;
	while (r < rmax && s[i + K + r] == g->right[r])
		r++;
	g->lagree[l]++;
	g->ragree[r]++;
}

static void keep(struct grow *g, const uint8_t *s, size_t n, size_t i)
{
	size_t j;

	memset(g, 0, sizeof(*g));
	memcpy(g->piece, s + i, K);
	g->nleft = (uint8_t)(i < CTX ? i : CTX);
	g->nright = (uint8_t)(n - i - K < CTX ? n - i - K : CTX);
	for (j = 0; j < g->nleft; j++)
		g->left[j] = s[i - 1 - j];
	memcpy(g->right, s + i + K, g->nright);
}

/* The piece at s[i..i+K), hash h, was sampled. */
static void sampled(struct vt_fragments *f, const uint8_t *s, size_t n, size_t i, uint64_t h)
{
	uint32_t est, slot;

	if (!chunk_first(f, h))
		return;
	f->sampled++;
	est = sketch_add(f, h);
	if (est < 2)
		return;   /* its first copy (the bound counts this one): neither counted nor to be admitted */
	/*
	 * Not admitted, as below, and not counted either: a counted piece's bound
	 * (this copy included) is above its count, which is at least the smallest
	 * (it was admitted at the bound, and each copy since raised both by one).
	 * So the counters' index is not looked up for it.
	 */
	if (f->ss.used == f->ss.cap && est <= vt_ss_min(&f->ss))
		return;
	slot = vt_ss_find(&f->ss, h, 0);
	if (slot != VT_SS_NONE) {
		vt_ss_bump(&f->ss, slot, 1);
		agree(&f->grow[slot], s, n, i);
		return;
	}
	slot = vt_ss_put(&f->ss, h, 0, est, est - 1);
	keep(&f->grow[slot], s, n, i);
	agree(&f->grow[slot], s, n, i);
}

/*
 * The pieces sampled from one run, handed over in batches: the cells they
 * will touch are asked for first (the sketch is megabytes, far from the
 * cache), then each is counted.
 */
#define BATCH 32

struct batch {
	size_t n;
	size_t at[BATCH];
	uint64_t hash[BATCH];
};

static void flush(struct vt_fragments *f, struct batch *b, const uint8_t *s, size_t n)
{
	size_t i;

	for (i = 0; i < b->n; i++) {
		__builtin_prefetch(sketch_line(f, b->hash[i]), 1);
		__builtin_prefetch(&f->set[set_home(b->hash[i])], 1);
	}
	for (i = 0; i < b->n; i++)
		sampled(f, s, n, b->at[i], b->hash[i]);
	b->n = 0;
}

static inline void take(struct vt_fragments *f, struct batch *b, const uint8_t *s, size_t n, size_t at, uint64_t h)
{
	b->at[b->n] = at;
	b->hash[b->n] = h;
	if (++b->n == BATCH)
		flush(f, b, s, n);
}

void vt_fragments_run(struct vt_fragments *f, const uint8_t *s, size_t n)
{
	uint64_t ring[W], best;
	size_t pieces, j, at, q;
	struct batch b;

	if (n < K)
		return;
	b.n = 0;
	pieces = n - K + 1;
	if (pieces <= W) {
		/* shorter than a window: its smallest piece (the last of equals) */
		at = 0;
		best = piece_hash(s);
		for (j = 1; j < pieces; j++) {
			uint64_t h = piece_hash(s + j);

			if (h <= best) {
				best = h;
				at = j;
			}
		}
		sampled(f, s, n, at, best);
		return;
	}
	for (j = 0; j < W; j++)
		ring[j] = piece_hash(s + j);
	at = 0;
	best = ring[0];
	for (j = 1; j < W; j++)
		if (ring[j] <= best) {
			best = ring[j];
			at = j;
		}
	take(f, &b, s, n, at, best);
	for (j = W; j < pieces; j++) {
		uint64_t h = piece_hash(s + j);

		ring[j & (W - 1)] = h;
		if (h <= best) {
			best = h;
			at = j;
			take(f, &b, s, n, at, best);
		} else if (at + W <= j) {
			/* the smallest left the window [j - W + 1, j]: the smallest of it now, the last of equals */
			at = j - W + 1;
			best = ring[at & (W - 1)];
			for (q = at + 1; q <= j; q++)
				if (ring[q & (W - 1)] <= best) {
					best = ring[q & (W - 1)];
					at = q;
				}
			take(f, &b, s, n, at, best);
		}
	}
	flush(f, &b, s, n);
}

/* ---- results ---- */

/* How far a counted piece grows each side: as far as HOLD of its copies agree. */
struct grown {
	uint32_t slot;
	size_t left, right;
	uint64_t count, lower;
	uint64_t hash;
};

static size_t reach(const uint32_t *agreeing, size_t kept, uint64_t copies, uint64_t *holding)
{
	uint64_t need = (uint64_t)ceil(VT_FRAGMENT_HOLD * (double)copies), at_least = 0;
	size_t j;

	/* at_least: copies agreeing over j bytes or more, from the farthest in */
	for (j = kept;; j--) {
		at_least += agreeing[j];
		if (at_least >= need) {
			*holding = at_least;
			return j;
		}
		if (!j)
			break;
	}
	*holding = copies;
	return 0;
}

static void grown_bytes(const struct grow *g, const struct grown *x, uint8_t *out)
{
	size_t j;

	for (j = 0; j < x->left; j++)
		out[j] = g->left[x->left - 1 - j];
	memcpy(out + x->left, g->piece, K);
	memcpy(out + x->left + K, g->right, x->right);
}

static int grown_order(const void *a, const void *b)
{
	const struct grown *x = a, *y = b;
	size_t lx = x->left + x->right, ly = y->left + y->right;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (lx != ly)
		return lx > ly ? -1 : 1;
	if (x->lower != y->lower)
		return x->lower > y->lower ? -1 : 1;
	return x->hash < y->hash ? -1 : x->hash > y->hash;
}

/* The longest run of bytes a and b share (at most VT_FRAGMENT_MAX each). */
static size_t common_run(const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
	uint8_t row[VT_FRAGMENT_MAX + 1] = { 0 };
	size_t i, j, best = 0;

	/* row[j + 1]: the run ending at a[i] and b[j], from the far end of b so the previous row is read first */
	for (i = 0; i < na; i++)
		for (j = nb; j-- > 0;) {
			row[j + 1] = a[i] == b[j] ? (uint8_t)(row[j] + 1) : 0;
			if (row[j + 1] > best)
				best = row[j + 1];
		}
	return best;
}

/*
 * a is not worth a line of its own beside b, shown before it (as repeated
 * or more): fewer than K of a's bytes lie outside the run they share (a
 * inside b, or b and a byte or two that come before or after some of its
 * copies, or a piece of b's edge with such bytes).
 */
static bool shadowed(const struct vt_fragment *a, const struct vt_fragment *b)
{
	return common_run(a->bytes, a->len, b->bytes, b->len) + K > a->len;
}

size_t vt_fragments_top(const struct vt_fragments *f, struct vt_fragment *out, size_t n)
{
	struct grown *all;
	size_t i, k, got = 0;

	if (!n || !f->ss.used)
		return 0;
	all = calloc(f->ss.used, sizeof(*all));
	if (!all)
		return 0;
	for (i = 0; i < f->ss.used; i++) {
		const struct vt_ss_entry *e = &f->ss.ent[i];
		const struct grow *g = &f->grow[i];
		uint64_t copies = e->count - e->err, lhold, rhold, both;
		uint8_t bytes[VT_FRAGMENT_MAX];
		struct grown *x = &all[i];

		x->slot = (uint32_t)i;
		x->left = reach(g->lagree, g->nleft, copies, &lhold);
		x->right = reach(g->ragree, g->nright, copies, &rhold);
		/* copies agreeing over both sides: at least those that agree each side less those that do not */
		both = lhold + rhold > copies ? lhold + rhold - copies : 0;
		x->count = e->count;
		x->lower = both;
		grown_bytes(g, x, bytes);
		x->hash = vt_content_hash(bytes, x->left + K + x->right);
	}
	qsort(all, f->ss.used, sizeof(*all), grown_order);
	for (i = 0; i < f->ss.used && got < n; i++) {
		const struct grown *x = &all[i];
		const struct grow *g = &f->grow[x->slot];
		struct vt_fragment *o = &out[got];
		bool dup = false;

		if (x->lower < 2)
			continue;   /* not shown to be in two chunks: a piece the sketch mistook, or one copy */
		memset(o, 0, sizeof(*o));
		o->hash = x->hash;
		o->len = x->left + K + x->right;
		o->count = x->count;
		o->count_err = x->count - x->lower;
		o->open_left = x->left == CTX;
		o->open_right = x->right == CTX;
		grown_bytes(g, x, o->bytes);
		for (k = 0; k < got && !dup; k++)
			dup = (out[k].hash == o->hash && out[k].len == o->len) || shadowed(o, &out[k]);
		if (!dup)
			got++;
	}
	free(all);
	return got;
}

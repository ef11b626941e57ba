/*
 * mmap_blocks.c — the walk of mmapped chunks through a range (see mmap_blocks.h).
 * Reads target memory only through struct vt_heap_mem; prints nothing.
 */
#include "alloc/mmap_blocks.h"

#include "base/clock.h"
#include "base/unknown.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PAGE ((uint64_t)VT_HEAP_PAGE)
#define HDR 16u
#define SIZE_BITS 7ull
#define IS_MMAPPED 2ull

uint64_t vt_mmap_block_size(const uint64_t hdr[2], uint64_t p, uint64_t end, uint64_t min_size)
{
	uint64_t size = hdr[1] & ~SIZE_BITS;

	if (min_size < PAGE)
		min_size = PAGE;
	if (hdr[0] != 0 || (hdr[1] & SIZE_BITS) != IS_MMAPPED || size < min_size || (size & (PAGE - 1)) ||
	    p >= end || size > end - p)
		return 0;
	return size;
}

/* One walk: the reader, the options and the window of pages being looked at. */
struct walk {
	const struct vt_heap_mem *m;
	const struct vt_mmap_blocks_opts *o;
	struct vt_region_blocks *out;
	uint64_t win;                        /* the window's first page */
	size_t npages;
	uint8_t present[VT_BLOCKS_BATCH];
	uint8_t tried[VT_BLOCKS_BATCH];      /* its header was asked for */
	uint8_t ok[VT_BLOCKS_BATCH];         /* ... and read */
	uint64_t hdr[VT_BLOCKS_BATCH][2];
};

static int read_one(const struct vt_heap_mem *m, struct vt_region_blocks *b, uint64_t addr, void *out,
		    size_t len)
{
	if (addr + len < addr)
		return -1;
	b->read_bytes += len;
	return m->read(m->ctx, addr, out, len);
}

static void read_each(const struct vt_heap_mem *m, struct vt_region_blocks *b, const uint64_t *addrs, size_t n,
		      size_t len, void *out, uint8_t *ok)
{
	size_t i;

	if (m->read_each) {
		b->read_bytes += n * len;
		m->read_each(m->ctx, addrs, n, len, out, ok);
		return;
	}
	for (i = 0; i < n; i++)
		ok[i] = read_one(m, b, addrs[i], (uint8_t *)out + i * len, len) == 0;
}

/* Inside one of the ranges not walked?  (sorted by lo: a binary search) */
static bool excluded(const struct walk *w, uint64_t p)
{
	const struct vt_mmap_blocks_opts *o = w->o;
	size_t lo = 0, hi = o->nexclude;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (o->exclude[mid][1] <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < o->nexclude && o->exclude[lo][0] <= p;
}

/*
 * Load the window of pages from a: which are resident, and the headers of
 * those (and of the page at expect, where a header is due whatever its
 * residency).  chained_only reads the expected page alone.
 */
static void window_load(struct walk *w, uint64_t a, uint64_t end, uint64_t expect)
{
	uint64_t addrs[VT_BLOCKS_BATCH], got[VT_BLOCKS_BATCH][2];
	uint8_t got_ok[VT_BLOCKS_BATCH];
	size_t idx[VT_BLOCKS_BATCH], n = 0, i;

	w->win = a;
	w->npages = (size_t)((end - a) / PAGE < VT_BLOCKS_BATCH ? (end - a) / PAGE : VT_BLOCKS_BATCH);
	if (w->o->chained_only)
		memset(w->present, 0, w->npages);
	else if (!w->m->resident || w->m->resident(w->m->ctx, a, w->npages, w->present))
		memset(w->present, 1, w->npages);
	memset(w->tried, 0, w->npages);
	memset(w->ok, 0, w->npages);
	for (i = 0; i < w->npages; i++) {
		uint64_t p = a + i * PAGE;

		if ((!w->present[i] && p != expect) || excluded(w, p))
			continue;
		idx[n] = i;
		addrs[n++] = p;
	}
	if (!n)
		return;
	read_each(w->m, w->out, addrs, n, HDR, got, got_ok);
	for (i = 0; i < n; i++) {
		w->tried[idx[i]] = 1;
		w->ok[idx[i]] = got_ok[i];
		memcpy(w->hdr[idx[i]], got[i], HDR);
	}
}

/* The header at page p of the window, read again alone when the batch missed it. */
static bool header_at(struct walk *w, uint64_t p, uint64_t hdr[2])
{
	size_t i = (size_t)((p - w->win) / PAGE);
	int r;

	if (!w->tried[i]) {
		w->tried[i] = 1;
		w->ok[i] = read_one(w->m, w->out, p, w->hdr[i], HDR) == 0;
	}
	for (r = 1; !w->ok[i] && r < VT_HEAP_REREADS; r++)
		w->ok[i] = read_one(w->m, w->out, p, w->hdr[i], HDR) == 0;
	if (!w->ok[i])
		return false;
	memcpy(hdr, w->hdr[i], HDR);
	return true;
}

static int push_block(struct vt_region_blocks *b, uint64_t p, uint64_t size)
{
	if (b->n == VT_BLOCKS_MAX) {
		b->dropped++;
		b->other_bytes += size;
		return 0;
	}
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 8;
		struct vt_region_block *v = realloc(b->v, cap * sizeof(*v));

		if (!v)
			return -1;
		b->v = v;
		b->cap = cap;
	}
	memset(&b->v[b->n], 0, sizeof(b->v[0]));
	b->v[b->n].addr = p;
	b->v[b->n].size = size;
	b->v[b->n].resident = VT_NA;
	b->n++;
	b->block_bytes += size;
	return 0;
}

/* Resident bytes of each block, from the pagemap bits. */
static void blocks_resident(const struct vt_heap_mem *m, struct vt_region_blocks *b)
{
	uint8_t present[VT_BLOCKS_BATCH];
	size_t i, j;

	b->resident_known = m->resident != NULL;
	for (i = 0; m->resident && i < b->n; i++) {
		struct vt_region_block *k = &b->v[i];
		uint64_t a = k->addr, end = k->addr + k->size, res = 0;

		while (a < end) {
			size_t n = (size_t)((end - a) / PAGE < VT_BLOCKS_BATCH ? (end - a) / PAGE : VT_BLOCKS_BATCH);

			if (m->resident(m->ctx, a, n, present)) {
				b->resident_known = false;
				res = VT_NA;
				break;
			}
			for (j = 0; j < n; j++)
				res += present[j] ? PAGE : 0;
			a += n * PAGE;
		}
		k->resident = res;
	}
	if (!b->resident_known)
		for (i = 0; i < b->n; i++)
			b->v[i].resident = VT_NA;
}

/*
 * Every header again, batched: one that changed since the walk read it
 * (read up to VT_HEAP_REREADS times) drops its block.  Then the first
 * bytes of those that stay.
 */
static void blocks_confirm(const struct vt_heap_mem *m, const struct vt_mmap_blocks_opts *o,
			   struct vt_region_blocks *b, uint64_t end)
{
	uint64_t addrs[VT_BLOCKS_BATCH], hdr[VT_BLOCKS_BATCH][2];
	uint8_t ok[VT_BLOCKS_BATCH];
	size_t i, j, kept = 0;

	for (i = 0; i < b->n; i += VT_BLOCKS_BATCH) {
		size_t n = b->n - i < VT_BLOCKS_BATCH ? b->n - i : VT_BLOCKS_BATCH;

		for (j = 0; j < n; j++)
			addrs[j] = b->v[i + j].addr;
		read_each(m, b, addrs, n, HDR, hdr, ok);
		for (j = 0; j < n; j++) {
			struct vt_region_block *k = &b->v[i + j];
			int r;

			for (r = 1; (!ok[j] || vt_mmap_block_size(hdr[j], k->addr, end, o->min_size) != k->size) &&
				    r < VT_HEAP_REREADS; r++)
				ok[j] = read_one(m, b, k->addr, hdr[j], HDR) == 0;
			if (!ok[j] || vt_mmap_block_size(hdr[j], k->addr, end, o->min_size) != k->size) {
				b->changed++;
				b->skipped_bytes += k->size;
				b->block_bytes -= k->size;
				k->size = 0;
			}
		}
	}
	for (i = 0; i < b->n; i++)
		if (b->v[i].size)
			b->v[kept++] = b->v[i];
	b->n = kept;
	for (i = 0; o->heads && i < b->n; i++) {
		struct vt_region_block *k = &b->v[i];
		size_t len = k->size - HDR < VT_BLOCK_HEAD ? (size_t)(k->size - HDR) : VT_BLOCK_HEAD;

		if (read_one(m, b, k->addr + HDR, k->head, len) == 0)
			k->head_len = (uint8_t)len;
	}
}

int vt_mmap_blocks_walk(const struct vt_heap_mem *m, uint64_t start, uint64_t end,
			const struct vt_mmap_blocks_opts *o, struct vt_region_blocks *out, struct vt_err *err)
{
	struct walk *w;
	uint64_t a, expect, scan_end;
	bool late = false;

	memset(out, 0, sizeof(*out));
	start = (start + PAGE - 1) & ~(PAGE - 1);
	end &= ~(PAGE - 1);
	if (end <= start)
		return VT_OK;
	w = calloc(1, sizeof(*w));
	if (!w)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory walking for mmapped chunks");
	w->m = m;
	w->o = o;
	w->out = out;
	scan_end = end - start > VT_HEAP_MMAP_SCAN_MAX ? start + VT_HEAP_MMAP_SCAN_MAX : end;
	a = expect = start;
	while (a < end) {
		uint64_t p, wend, next, hdr[2], size;

		if ((a >= scan_end || o->chained_only) && a != expect) {
			out->unread_bytes += end - a;       /* past the bound: only chained headers */
			break;
		}
		if (o->deadline_s > 0 && vt_mono_s() > o->deadline_s) {
			late = true;
			out->unread_bytes += end - a;
			break;
		}
		/* up to the bound page by page; past it, the one page where a header is due */
		window_load(w, a, a < scan_end ? scan_end : a + PAGE, expect);
		wend = w->win + w->npages * PAGE;
		next = wend;
		for (p = a; p < wend; p += PAGE) {
			size_t i = (size_t)((p - w->win) / PAGE);

			if (excluded(w, p)) {
				out->excluded_bytes += PAGE;
				continue;
			}
			if (!w->tried[i] && p != expect) {
				out->other_bytes += PAGE;   /* never touched: no header there */
				continue;
			}
			if (!header_at(w, p, hdr)) {
				/* resident a moment ago, unreadable now: the mapping went away under the walk */
				out->unread_bytes += end - p;
				next = end;
				break;
			}
			size = vt_mmap_block_size(hdr, p, end, o->min_size);
			if (!size) {
				out->other_bytes += PAGE;
				if (o->chained_only) {
					out->unread_bytes += end - p - PAGE;
					next = end;
					break;
				}
				continue;
			}
			if (push_block(out, p, size)) {
				free(w);
				return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory keeping mmapped chunks");
			}
			expect = p + size;
			if (expect < wend) {
				p = expect - PAGE;      /* on in this window, after the block */
				continue;
			}
			next = expect;                  /* the next window starts after the block */
			break;
		}
		a = next;
	}
	free(w);
	blocks_confirm(m, o, out, end);
	blocks_resident(m, out);
	if (late)
		return vt_err_set(err, VT_E_TIMEOUT, 0, "the walk for mmapped chunks outran its time limit");
	return VT_OK;
}

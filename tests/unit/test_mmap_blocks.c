/*
 * test_mmap_blocks.c — the walk for glibc mmapped chunks through a range,
 * on a fake target memory: a few pages with content, every other page
 * zero; which are resident; pages whose reads fail; a header that changes
 * between two reads.
 */
#include "harness.h"
#include "base/unknown.h"

#include "alloc/mmap_blocks.h"
#include "proc/maps.h"

#define KiB (1ull << 10)
#define MiB (1ull << 20)
#define PG 4096ull
#define BASE 0x7f0000000000ull

struct page {
	uint64_t addr;
	uint64_t w[4];        /* its first 32 bytes */
	bool resident;
	bool gone;            /* reads fail */
	uint64_t w1_later;    /* non-zero: the second word reads as this from the second read on */
	unsigned reads;
};

struct fake {
	struct page *p;
	size_t n;
	bool all_resident;    /* pages not listed: resident (zero) or not */
	unsigned reads, batches, nonresident_reads;
};

static struct page *find(struct fake *f, uint64_t page)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (f->p[i].addr == page)
			return &f->p[i];
	return NULL;
}

static int fake_read(void *ctx, uint64_t addr, void *out, size_t len)
{
	struct fake *f = ctx;
	uint8_t *o = out;
	size_t i;

	f->reads++;
	for (i = 0; i < len; i++) {
		uint64_t a = addr + i;
		struct page *p = find(f, a & ~(PG - 1));
		uint64_t off = a & (PG - 1), w[4];

		if (p && p->gone)
			return -1;
		if (i == 0 && p && !p->resident)
			f->nonresident_reads++;
		if (i == 0 && !p && !f->all_resident)
			f->nonresident_reads++;
		if (i == 0 && p)
			p->reads++;
		if (!p || off >= sizeof(w)) {
			o[i] = 0;
			continue;
		}
		memcpy(w, p->w, sizeof(w));
		if (p->w1_later && p->reads > 1)
			w[1] = p->w1_later;
		o[i] = ((uint8_t *)w)[off];
	}
	return 0;
}

static int fake_resident(void *ctx, uint64_t addr, size_t npages, uint8_t *present)
{
	struct fake *f = ctx;
	size_t i;

	for (i = 0; i < npages; i++) {
		struct page *p = find(f, addr + i * PG);

		present[i] = p ? p->resident : f->all_resident;
	}
	return 0;
}

static void fake_read_each(void *ctx, const uint64_t *addrs, size_t n, size_t len, void *out, uint8_t *ok)
{
	struct fake *f = ctx;
	size_t i;

	f->batches++;
	for (i = 0; i < n; i++)
		ok[i] = fake_read(ctx, addrs[i], (uint8_t *)out + i * len, len) == 0;
}

static int walk(struct fake *f, uint64_t start, uint64_t end, const struct vt_mmap_blocks_opts *o,
		struct vt_region_blocks *b)
{
	const struct vt_heap_mem m = { fake_read, fake_resident, f, fake_read_each };

	return vt_mmap_blocks_walk(&m, start, end, o, b, NULL);
}

static void test_mmap_blocks__merged_chunks_and_a_neighbour(void)
{
	/* 64 KiB of the program's own (one page written), then 1 MiB and 2 MiB
	 * blocks, then 8 KiB more of its own: one mapping */
	uint64_t a = BASE + 64 * KiB, b = a + 1 * MiB, end = b + 2 * MiB + 8 * KiB;
	struct page pages[] = {
		{ BASE, { 0x1234, 0x5678 }, true, false, 0, 0 },
		{ a, { 0, (1 * MiB) | 2, 0x6f6c6c6568, 0 }, true, false, 0, 0 },
		{ a + 8 * PG, { 0, (256 * KiB) | 2 }, true, false, 0, 0 },   /* inside a: its data */
		{ b, { 0, (2 * MiB) | 2 }, true, false, 0, 0 },
		{ b + 2 * MiB, { 0, 0 }, true, false, 0, 0 },
	};
	struct fake f = { pages, sizeof(pages) / sizeof(pages[0]), false, 0, 0, 0 };
	struct vt_mmap_blocks_opts o = { .min_size = 128 * KiB, .heads = true };
	struct vt_region_blocks bl;

	CHECK_EQ_I64(walk(&f, BASE, end, &o, &bl), VT_OK);
	CHECK_EQ_U64(bl.n, 2);
	CHECK_EQ_U64(bl.v[0].addr, a);
	CHECK_EQ_U64(bl.v[0].size, 1 * MiB);
	CHECK_EQ_U64(bl.v[1].addr, b);
	CHECK_EQ_U64(bl.v[1].size, 2 * MiB);
	CHECK_EQ_U64(bl.block_bytes, 3 * MiB);
	CHECK_EQ_U64(bl.other_bytes, 72 * KiB);
	CHECK_EQ_U64(bl.unread_bytes, 0);
	CHECK_EQ_U64(bl.other_bytes + bl.block_bytes, end - BASE);
	/* resident: the pages the fake lists inside each block */
	CHECK(bl.resident_known);
	CHECK_EQ_U64(bl.v[0].resident, 2 * PG);
	CHECK_EQ_U64(bl.v[1].resident, 1 * PG);
	/* its first bytes, after the header */
	CHECK_EQ_U64(bl.v[0].head_len, VT_BLOCK_HEAD);
	CHECK(!memcmp(bl.v[0].head, "hello", 5));
	/* only resident pages were read, in batches */
	CHECK_EQ_U64(f.nonresident_reads, 0);
	CHECK(f.batches > 0);
	free(bl.v);
}

static void test_mmap_blocks__near_headers_are_not_blocks(void)
{
	/* a neighbour's pages that look almost like a header, then one real block */
	uint64_t real = BASE + 8 * PG;
	struct page pages[] = {
		{ BASE + 0 * PG, { 0, (256 * KiB) | 3 }, true, false, 0, 0 },          /* PREV_INUSE */
		{ BASE + 1 * PG, { 16, (256 * KiB) | 2 }, true, false, 0, 0 },         /* prev_size */
		{ BASE + 2 * PG, { 0, (256 * KiB) | 6 }, true, false, 0, 0 },          /* NON_MAIN_ARENA */
		{ BASE + 3 * PG, { 0, (256 * KiB + 16) | 2 }, true, false, 0, 0 },     /* not whole pages */
		{ BASE + 4 * PG, { 0, (64 * KiB) | 2 }, true, false, 0, 0 },           /* under the floor */
		{ BASE + 5 * PG, { 0, 2 }, true, false, 0, 0 },                        /* size 0 */
		{ BASE + 6 * PG, { 0, (1ull << 40) | 2 }, true, false, 0, 0 },         /* runs past the mapping */
		{ BASE + 7 * PG, { 0, (1 * MiB) | 2 }, true, false, 0, 0 },            /* runs 4 KiB past it */
		{ real, { 0, (1 * MiB - 8 * PG) | 2 }, true, false, 0, 0 },
	};
	struct fake f = { pages, sizeof(pages) / sizeof(pages[0]), false, 0, 0, 0 };
	struct vt_mmap_blocks_opts o = { .min_size = 128 * KiB };
	struct vt_region_blocks bl;

	CHECK_EQ_I64(walk(&f, BASE, BASE + 1 * MiB, &o, &bl), VT_OK);
	CHECK_EQ_U64(bl.n, 1);
	CHECK_EQ_U64(bl.v[0].addr, real);
	CHECK_EQ_U64(bl.v[0].size, 1 * MiB - 8 * PG);
	CHECK_EQ_U64(bl.other_bytes, 8 * PG);
	free(bl.v);
	/* the header check alone */
	{
		uint64_t h[2] = { 0, (128 * KiB) | 2 };

		CHECK_EQ_U64(vt_mmap_block_size(h, BASE, BASE + 128 * KiB, 128 * KiB), 128 * KiB);
		CHECK_EQ_U64(vt_mmap_block_size(h, BASE, BASE + 128 * KiB - PG, 128 * KiB), 0);
		CHECK_EQ_U64(vt_mmap_block_size(h, BASE, BASE + 1 * MiB, 256 * KiB), 0);
	}
}

static void test_mmap_blocks__chunk_runs_past_the_mapping(void)
{
	/* a header whose size runs past the range: not a block, and the walk
	 * steps on from the next page instead of trusting it */
	uint64_t end = BASE + 512 * KiB;
	struct page pages[] = {
		{ BASE, { 0, (1 * MiB) | 2 }, true, false, 0, 0 },
		{ BASE + 128 * KiB, { 0, (384 * KiB) | 2 }, true, false, 0, 0 },
	};
	struct fake f = { pages, 2, false, 0, 0, 0 };
	struct vt_mmap_blocks_opts o = { .min_size = 128 * KiB };
	struct vt_region_blocks bl;

	CHECK_EQ_I64(walk(&f, BASE, end, &o, &bl), VT_OK);
	CHECK_EQ_U64(bl.n, 1);
	CHECK_EQ_U64(bl.v[0].addr, BASE + 128 * KiB);
	CHECK_EQ_U64(bl.v[0].size, 384 * KiB);
	CHECK_EQ_U64(bl.other_bytes, 128 * KiB);
	free(bl.v);
	/* the cheap walk follows headers from the start only: it stops at the first page that is none */
	o.chained_only = true;
	CHECK_EQ_I64(walk(&f, BASE, end, &o, &bl), VT_OK);
	CHECK_EQ_U64(bl.n, 0);
	CHECK_EQ_U64(bl.other_bytes, PG);
	CHECK_EQ_U64(bl.unread_bytes, end - BASE - PG);
	free(bl.v);
}

static void test_mmap_blocks__changed_under_the_walk(void)
{
	/* the second block's header changes after the walk read it (freed and
	 * the memory reused): read again, it is dropped and counted */
	struct page pages[] = {
		{ BASE, { 0, (128 * KiB) | 2 }, true, false, 0x4141414141414141ull, 0 },
		{ BASE + 128 * KiB, { 0, (128 * KiB) | 2 }, true, false, 0, 0 },
	};
	struct fake f = { pages, 2, false, 0, 0, 0 };
	struct vt_mmap_blocks_opts o = { .min_size = 128 * KiB };
	struct vt_region_blocks bl;

	CHECK_EQ_I64(walk(&f, BASE, BASE + 256 * KiB, &o, &bl), VT_OK);
	CHECK_EQ_U64(bl.n, 1);
	CHECK_EQ_U64(bl.v[0].addr, BASE + 128 * KiB);
	CHECK_EQ_U64(bl.changed, 1);
	CHECK_EQ_U64(bl.skipped_bytes, 128 * KiB);
	CHECK_EQ_U64(bl.block_bytes + bl.other_bytes + bl.unread_bytes + bl.skipped_bytes, 256 * KiB);
	CHECK_EQ_U64(pages[0].reads, 1 + VT_HEAP_REREADS);      /* the walk, then the confirmation, bounded */
	free(bl.v);
}

static void test_mmap_blocks__mapping_gone_mid_walk(void)
{
	/* a resident page that cannot be read any more: the rest is unread, said so */
	struct page pages[] = {
		{ BASE, { 0, (128 * KiB) | 2 }, true, false, 0, 0 },
		{ BASE + 192 * KiB, { 0, 0 }, true, true, 0, 0 },
	};
	struct fake f = { pages, 2, false, 0, 0, 0 };
	struct vt_mmap_blocks_opts o = { .min_size = 128 * KiB };
	struct vt_region_blocks bl;

	CHECK_EQ_I64(walk(&f, BASE, BASE + 512 * KiB, &o, &bl), VT_OK);
	CHECK_EQ_U64(bl.n, 1);
	CHECK_EQ_U64(bl.unread_bytes, 320 * KiB);
	CHECK_EQ_U64(bl.other_bytes, 64 * KiB);
	CHECK(pages[1].reads <= VT_HEAP_REREADS + 1);
	free(bl.v);
}

static void test_mmap_blocks__swapped_header_read_where_one_is_due(void)
{
	/* the page right after a block is read even when not resident (a
	 * swapped-out header); other non-resident pages are not read */
	struct page pages[] = {
		{ BASE, { 0, (128 * KiB) | 2 }, true, false, 0, 0 },
		{ BASE + 128 * KiB, { 0, (256 * KiB) | 2 }, false, false, 0, 0 },
	};
	struct fake f = { pages, 2, false, 0, 0, 0 };
	struct vt_mmap_blocks_opts o = { .min_size = 128 * KiB };
	struct vt_region_blocks bl;

	CHECK_EQ_I64(walk(&f, BASE, BASE + 1 * MiB, &o, &bl), VT_OK);
	CHECK_EQ_U64(bl.n, 2);
	CHECK_EQ_U64(bl.v[1].size, 256 * KiB);
	CHECK_EQ_U64(bl.v[1].resident, 0);
	CHECK_EQ_U64(bl.other_bytes, 1 * MiB - 384 * KiB);
	/* its header and its confirmation, and the page after it where the next is due */
	CHECK_EQ_U64(f.nonresident_reads, 3);
	free(bl.v);
}

static void test_mmap_blocks__huge_range_bounded(void)
{
	/* a reservation of 64 GiB: stepped page by page only up to the bound */
	uint64_t end = BASE + (64ull << 30);
	struct page pages[] = {
		{ BASE, { 0, (128 * KiB) | 2 }, true, false, 0, 0 },
	};
	struct fake f = { pages, 1, false, 0, 0, 0 };
	struct vt_mmap_blocks_opts o = { .min_size = 128 * KiB };
	struct vt_region_blocks bl;

	CHECK_EQ_I64(walk(&f, BASE, end, &o, &bl), VT_OK);
	CHECK_EQ_U64(bl.n, 1);
	CHECK_EQ_U64(bl.unread_bytes, end - BASE - VT_HEAP_MMAP_SCAN_MAX);
	CHECK_EQ_U64(bl.block_bytes + bl.other_bytes + bl.unread_bytes, end - BASE);
	free(bl.v);
}

static void test_mmap_blocks__excluded_ranges_not_read(void)
{
	/* an arena heap inside the range: a header-like page in it is not a block */
	struct page pages[] = {
		{ BASE + 64 * KiB, { 0, (128 * KiB) | 2 }, true, false, 0, 0 },
		{ BASE + 256 * KiB, { 0, (128 * KiB) | 2 }, true, false, 0, 0 },
	};
	const uint64_t excl[1][2] = { { BASE, BASE + 192 * KiB } };
	struct fake f = { pages, 2, false, 0, 0, 0 };
	struct vt_mmap_blocks_opts o = { .min_size = 128 * KiB, .exclude = excl, .nexclude = 1 };
	struct vt_region_blocks bl;

	CHECK_EQ_I64(walk(&f, BASE, BASE + 512 * KiB, &o, &bl), VT_OK);
	CHECK_EQ_U64(bl.n, 1);
	CHECK_EQ_U64(bl.v[0].addr, BASE + 256 * KiB);
	CHECK_EQ_U64(pages[0].reads, 0);
	free(bl.v);
}

VT_TEST_MAIN(test_mmap_blocks__merged_chunks_and_a_neighbour, test_mmap_blocks__near_headers_are_not_blocks,
	     test_mmap_blocks__chunk_runs_past_the_mapping, test_mmap_blocks__changed_under_the_walk,
	     test_mmap_blocks__mapping_gone_mid_walk, test_mmap_blocks__swapped_header_read_where_one_is_due,
	     test_mmap_blocks__huge_range_bounded, test_mmap_blocks__excluded_ranges_not_read)

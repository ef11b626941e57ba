/*
 * fuzz_chunk_walk.c — the glibc chunk walk (src/alloc/glibc_heap.c) on
 * arbitrary heaps.
 *
 * The walk reads a running process's memory, which may be torn by its
 * writers or corrupt.  Here the memory is the fuzzer's: a main_arena whose
 * bins check (so that the walk starts) with its top, fast bins and size
 * taken from the input, a [heap] mapping holding the input, and the same
 * bytes again as an anonymous mapping (mmapped chunks).  Every walk must end,
 * read nothing outside the mappings, and never crash.  The anonymous
 * mapping is also walked as snap walks it: for malloc'd blocks with their
 * first bytes (alloc/mmap_blocks.h) and for CPython's pool headers
 * (alloc/cpython.h), whose figures must add up to the mapping.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/cpython.h"
#include "alloc/glibc_heap.h"
#include "alloc/mmap_blocks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ARENA 0x10000000ull
#define HEAP 0x10010000ull
#define ANON 0x20000000ull

struct image {
	uint8_t arena[2200];
	const uint8_t *heap;
	size_t len;           /* of heap, also mapped at ANON */
	uint8_t resident;     /* page i is resident when bit (i % 8) is set */
};

static int img_read(void *ctx, uint64_t addr, void *out, size_t len)
{
	const struct image *m = ctx;

	if (addr >= ARENA && addr + len <= ARENA + sizeof(m->arena) && addr + len >= addr) {
		memcpy(out, m->arena + (addr - ARENA), len);
		return 0;
	}
	for (uint64_t base = HEAP; base <= ANON; base += ANON - HEAP) {
		uint64_t cap = (m->len + 4095) & ~4095ull;

		if (addr >= base && addr + len <= base + cap && addr + len >= addr) {
			size_t off = (size_t)(addr - base), n = off < m->len ? m->len - off : 0;

			memset(out, 0, len);
			memcpy(out, m->heap + off, n < len ? n : len);
			return 0;
		}
	}
	return -1;
}

static int img_resident(void *ctx, uint64_t addr, size_t npages, uint8_t *present)
{
	const struct image *m = ctx;

	for (size_t i = 0; i < npages; i++)
		present[i] = (m->resident >> ((addr / 4096 + i) % 8)) & 1;
	return 0;
}

static void visit(void *ctx, const struct vt_chunk_piece *p)
{
	volatile uint8_t sink = 0;

	(void)ctx;
	for (size_t i = 0; i < p->len; i += 512)
		sink ^= p->bytes[i];
	if (p->len)
		sink ^= p->bytes[p->len - 1];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct image m = { .resident = 0xff };
	struct vt_region regions[2] = { 0 };
	struct vt_region_list maps = { regions, 2, 2, false };
	struct vt_heap_walk_opts o = { .main_arena = ARENA, .maps = &maps, .visit = visit };
	struct vt_heap_mem mem = { img_read, img_resident, &m };
	struct vt_heap_walk w;
	uint64_t v[13] = { 0 };
	size_t i;

	if (size < sizeof(v) + 1)
		return 0;
	memcpy(v, data, sizeof(v));
	m.resident = data[sizeof(v)] | 1;
	o.safe_linking = v[0] & 1;
	o.key_is_tcache = v[0] & 2;
	m.heap = data + sizeof(v) + 1;
	m.len = size - sizeof(v) - 1;
	/* an arena whose bins are all empty, its ring itself, the rest from the input */
	for (i = 1; i < 128; i++) {
		uint64_t self = ARENA + 112 - 16 + 16 * (i - 1);

		memcpy(m.arena + 112 + 16 * (i - 1), &self, 8);
		memcpy(m.arena + 112 + 16 * (i - 1) + 8, &self, 8);
	}
	for (i = 0; i < 10; i++) {
		uint64_t fb = v[1 + i] ? HEAP + (v[1 + i] % (m.len + 64)) : 0;

		memcpy(m.arena + 16 + 8 * i, &fb, 8);
	}
	{
		uint64_t top = (HEAP + (v[11] % (m.len + 64))) & ~15ull, next = ARENA, sys = v[12];

		if (!top)
			top = HEAP;
		memcpy(m.arena + 96, &top, 8);
		memcpy(m.arena + 2160, &next, 8);
		memcpy(m.arena + 2184, &sys, 8);
	}
	regions[0] = (struct vt_region){ .start = HEAP, .end = HEAP + ((m.len + 4095) & ~4095ull), .perms = "rw-p",
					 .path = (char *)"[heap]" };
	regions[1] = (struct vt_region){ .start = ANON, .end = ANON + ((m.len + 4095) & ~4095ull), .perms = "rw-p",
					 .path = (char *)"" };
	if (vt_heap_walk(&mem, &o, &w, NULL) == VT_OK) {
		struct vt_mallinfo mi;

		vt_heap_walk_mallinfo(&w, &mi);
	}
	vt_heap_walk_release(&w);
	{
		struct vt_mmap_blocks_opts bo = { .min_size = 4096, .heads = true, .chained_only = v[0] & 4 };
		struct vt_region_pyarenas py;
		struct vt_region_blocks b;

		if (vt_mmap_blocks_walk(&mem, regions[1].start, regions[1].end, &bo, &b, NULL) == VT_OK &&
		    b.block_bytes + b.other_bytes + b.unread_bytes + b.skipped_bytes != regions[1].end - regions[1].start)
			abort();
		for (i = 0; i < b.n; i++)
			if (b.v[i].addr < regions[1].start || b.v[i].addr + b.v[i].size > regions[1].end)
				abort();
		free(b.v);
		if (vt_cpython_arenas_walk(&mem, regions[1].start, regions[1].end, v[0] & 8 ? 8 : 16, 0, &py, NULL) ==
			    VT_OK &&
		    py.pools + py.refused_pools > (regions[1].end - regions[1].start) / 4096)
			abort();
	}
	return 0;
}

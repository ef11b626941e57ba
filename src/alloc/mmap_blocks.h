/*
 * mmap_blocks.h — glibc's mmapped chunks found inside anonymous mappings.
 *
 * A malloc too large for an arena (at or above the mmap threshold) gets an
 * mmap of its own: a page-aligned chunk whose header is prev_size 0 and
 * size | IS_MMAPPED (0x2), PREV_INUSE (0x1) and NON_MAIN_ARENA (0x4) clear,
 * size a whole number of pages (malloc.c sysmalloc; on x86-64
 * MALLOC_ALIGNMENT equals the header size, so there is no alignment slack).
 * The kernel merges adjacent anonymous mappings with the same flags: one
 * region of maps may hold several such chunks, and other anonymous memory
 * (a small mmap of the program's own, another chunk's neighbour) before,
 * between or after them.  So the walk looks at every page of the range:
 * a page that starts a valid header is a block and the walk jumps past it,
 * any other page is stepped over.  A header must fit the range it is in: a
 * neighbour's bytes whose "size" runs past the mapping are not a block.
 *
 * What is read, and when:
 *   - which pages are resident (pagemap, through vt_heap_mem.resident):
 *     a page never touched cannot hold a header and is not read;
 *   - 16 bytes per resident page, batched (vt_heap_mem.read_each: one
 *     process_vm_readv for many pages);
 *   - the page where a header is expected (the range's first page, the page
 *     right after a block) is read even when swapped out: one page per
 *     block may come back from swap, no more;
 *   - ranges larger than VT_HEAP_MMAP_SCAN_MAX are stepped over only up to
 *     that bound (the blocks chained after it are still followed);
 *   - at the end every header found is read again: a block whose header
 *     changed in between (freed, remapped) is dropped, up to
 *     VT_HEAP_REREADS reads, and its bytes are counted as skipped.
 *
 * Blocks whose alignment slack puts the header off a page boundary
 * (posix_memalign with an alignment above 16 that glibc served by mmap)
 * are not found: their page starts with no header.
 */
#ifndef VT_ALLOC_MMAP_BLOCKS_H
#define VT_ALLOC_MMAP_BLOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc/glibc_heap.h"
#include "base/error.h"
#include "proc/maps.h"

#define VT_BLOCKS_MAX 4096           /* blocks kept per range; more are counted, not kept */
#define VT_BLOCKS_BATCH 256          /* pages per pagemap read and per batch of header reads */

struct vt_mmap_blocks_opts {
	uint64_t min_size;               /* smallest block (the mmap threshold floor); 0: one page */
	const uint64_t (*exclude)[2];    /* [lo, hi) ranges not walked (arena heaps: counted in
	                                  * excluded_bytes), sorted by lo, not overlapping; may be NULL */
	size_t nexclude;
	bool heads;                      /* read each block's first VT_BLOCK_HEAD bytes */
	bool chained_only;               /* only headers chained from the start: no page stepping (cheap) */
	double deadline_s;               /* vt_mono_s() past which the rest is left unread; 0: none */
};

/* The header at p (hdr: prev_size, size) makes a block inside [p, end): its size, else 0. */
uint64_t vt_mmap_block_size(const uint64_t hdr[2], uint64_t p, uint64_t end, uint64_t min_size);

/*
 * Walk [start, end) (page aligned) and fill *out (zeroed first; out->v
 * owned by the caller: free(out->v), or vt_region_blocks_free when out was
 * allocated).  VT_E_NOMEM; VT_E_TIMEOUT when the deadline passed, with what
 * was found so far and the rest counted as unread.
 */
int vt_mmap_blocks_walk(const struct vt_heap_mem *m, uint64_t start, uint64_t end,
			const struct vt_mmap_blocks_opts *o, struct vt_region_blocks *out, struct vt_err *err);

#endif

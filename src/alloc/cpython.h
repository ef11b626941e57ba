/*
 * cpython.h — CPython's object allocator (pymalloc), seen from outside.
 *
 * CPython serves requests of up to 512 bytes from its own arenas, not from
 * malloc: each arena is an anonymous mmap (256 KiB in 3.8/3.9, 1 MiB from
 * 3.10 on 64-bit, where the radix tree is built in), carved into pools
 * (4 KiB, or 16 KiB with the 1 MiB arenas) aligned on their size, each of
 * one size class and starting with a pool_header (Objects/obmalloc.c):
 *
 *     union { block *_padding; uint count; } ref;   blocks in use
 *     block *freeblock;                              free list head
 *     struct pool_header *nextpool, *prevpool;       ring of its size class
 *     uint arenaindex;                               its arena's index in arenas[]
 *     uint szidx;                                    size class: (szidx + 1) * ALIGNMENT bytes
 *     uint nextoffset;                               bytes to the first block never used
 *     uint maxnextoffset;                            POOL_SIZE - block size
 *
 * 48 bytes on 64-bit (POOL_OVERHEAD); ALIGNMENT is 16 from 3.8 on (32 size
 * classes), 8 before (64).  init_pool sets maxnextoffset to exactly
 * POOL_SIZE - size, which tells the pool size; nextoffset starts at
 * POOL_OVERHEAD + 2 * size and grows by size up to maxnextoffset + size.
 * A page is taken for a pool header only when all of that holds, its
 * count fits the pool, its freeblock is NULL or a block of it, and its
 * links are aligned user addresses; an arena is counted once per
 * arenaindex, and an index whose pools lie further apart than an arena is
 * refused (the structures do not agree).  Never-touched pools hold no
 * header and are not counted; empty pools kept in an arena (count 0) are.
 *
 * Nothing here stops the target; memory is read through struct vt_heap_mem
 * (pagemap first: only resident pages are read).
 */
#ifndef VT_ALLOC_CPYTHON_H
#define VT_ALLOC_CPYTHON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc/glibc_heap.h"
#include "base/error.h"
#include "proc/maps.h"

#define VT_PY_POOL_OVERHEAD 48

/* Is the process a CPython interpreter, and which version (from its maps). */
struct vt_cpython {
	bool is_python;
	int major, minor;            /* 0 when the name does not say */
	char evidence[200];          /* "libpython3.11.so.1.0 mapped" */
};

/*
 * From the mappings: a libpython3.N shared library mapped, or an executable
 * named python3.N (or python3 / python, version unknown) mapped.
 */
void vt_cpython_detect(const struct vt_region_list *maps, struct vt_cpython *out);

/* One pool header as read: its fields, for vt_cpython_pool_check. */
struct vt_py_pool {
	uint32_t count;
	uint64_t freeblock, nextpool, prevpool;
	uint32_t arenaindex, szidx, nextoffset, maxnextoffset;
};

void vt_py_pool_decode(const uint8_t raw[VT_PY_POOL_OVERHEAD], struct vt_py_pool *out);

/*
 * The pool at addr is a pool header of a pymalloc with this alignment (16,
 * or 8 before 3.8): its pool size (4096 or 16384), else 0.
 */
uint32_t vt_py_pool_check(const struct vt_py_pool *p, uint64_t addr, unsigned alignment);

/*
 * CPython's arenas inside [start, end): every resident page read for a
 * pool header (batched), the pools counted, the arenas by index.  *out
 * zeroed first; *out has arenas == 0 when none was found.  VT_E_TIMEOUT
 * past deadline_s (the rest counted unread), VT_E_NOMEM.
 */
int vt_cpython_arenas_walk(const struct vt_heap_mem *m, uint64_t start, uint64_t end, unsigned alignment,
			   double deadline_s, struct vt_region_pyarenas *out, struct vt_err *err);

#endif

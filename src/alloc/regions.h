/*
 * regions.h — what each mapping of a process is: glibc heaps and arenas,
 * thread stacks, mmapped malloc chunks, files, shared memory.
 *
 * Classification uses, strongest first:
 *   - names the kernel or glibc gave the mapping ([heap], [stack], [anon: ...]);
 *   - glibc's own headers read from target memory with process_vm_readv
 *     (never stopping it): heap_info at the start of each arena heap, the
 *     chunk header of an mmapped chunk;
 *   - a thread's user stack pointer (from /proc/PID/task/TID/syscall) inside
 *     the mapping;
 *   - layout: non-main arena heaps live in HEAP_MAX_SIZE (64 MiB on 64-bit)
 *     aligned reservations, a rw-p part followed by a ---p remainder; thread
 *     stacks are rw-p with a ---p guard directly below.
 * Each region's kind_flags records which of these decided it.
 */
#ifndef VT_ALLOC_REGIONS_H
#define VT_ALLOC_REGIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "alloc/detect.h"
#include "alloc/cpython.h"
#include "alloc/glibc_heap.h"
#include "base/error.h"
#include "proc/maps.h"

#define VT_HEAP_MAX_SIZE (64ull << 20)   /* glibc HEAP_MAX_SIZE on 64-bit */

struct vt_arena_summary {
	int heaps;                 /* non-main arena heaps found */
	int arenas;                /* distinct non-main arenas; -1 when memory was unreadable */
	bool verified;             /* heap_info headers read and checked */
	uint64_t reserved_bytes;   /* address space of the reservations (heaps x 64 MiB) */
	uint64_t mapped_bytes;     /* rw-p part */
	uint64_t rss_bytes;        /* resident, VT_NA without smaps */
	uint64_t swap_bytes;       /* swapped, VT_NA without smaps */
	uint64_t main_heap_bytes;  /* [heap] size, 0 if none */
	uint64_t main_heap_rss;    /* [heap] resident, VT_NA without smaps */
	bool walks_cut;            /* a walk for blocks or CPython arenas left pages unread (time or scan bound) */
};

/* Read target memory; NULL when memory may not be read (fixtures, no permission). */
typedef int (*vt_mem_reader)(void *ctx, uint64_t addr, void *out, size_t len);

/* A thread's user stack pointer (from /proc/PID/task/TID/syscall). */
struct vt_thread_sp {
	uint64_t sp;
	pid_t tid;
};

struct vt_classify_ctx {
	enum vt_alloc_kind alloc;      /* from vt_alloc_detect */
	vt_mem_reader read_mem;        /* may be NULL */
	void *read_ctx;
	const struct vt_thread_sp *threads;  /* sorted by sp (vt_thread_sp_sort), may be NULL */
	size_t n_threads;
	/*
	 * A thread's stack pointer makes its mapping a thread stack (not walked
	 * for blocks) only when a guard page lies right below it, as below every
	 * stack pthread makes; another mapping with a thread on it (a coroutine's
	 * stack, which may itself be a malloc'd block) is walked like any other.
	 */
	bool stack_needs_guard;
	/*
	 * Smallest mapping that may be a glibc mmapped chunk: glibc's mmap
	 * threshold floor (128 KiB) unless the environment sets a lower one.
	 * Smaller anonymous mappings are not probed.  0 means the default.
	 */
	uint64_t mmap_threshold;
	/*
	 * Malloc'd blocks (glibc mmapped chunks, alloc/mmap_blocks.h) inside
	 * anonymous mappings: with find_blocks every page of a candidate
	 * mapping is looked at (merged neighbours, blocks after other memory)
	 * and each block keeps its first bytes; without, only the headers
	 * chained from a mapping's start are read (a soak tick's cost).  The
	 * blocks are attached to their region (vt_region.blocks).  mem, when
	 * set, is how they are read (pagemap for resident pages, batched
	 * reads); else read_mem alone, every page taken for resident.
	 */
	bool find_blocks;
	const struct vt_heap_mem *mem;
	double deadline_s;             /* vt_mono_s() past which block walks stop; 0: none */
	/* a CPython interpreter: with find_blocks its object arenas are found too (alloc/cpython.h); may be NULL */
	const struct vt_cpython *python;
};

#define VT_MMAP_THRESHOLD_MIN (128u << 10)   /* glibc DEFAULT_MMAP_THRESHOLD_MIN */

void vt_thread_sp_sort(struct vt_thread_sp *threads, size_t n);

/* Set kind, kind_flags and owner_tid of every region; fill *arenas. */
void vt_regions_classify(struct vt_region_list *regions, const struct vt_classify_ctx *ctx,
			 struct vt_arena_summary *arenas);

#endif

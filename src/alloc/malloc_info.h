/*
 * malloc_info.h — glibc's malloc_info() XML, parsed (with expat).
 *
 * malloc_info(0, fp) prints, per arena, the free chunks by size class, the
 * fast-bin and other free totals (the "rest" total includes the top chunk),
 * the memory the arena got from the system (current and max), and the same
 * totals for the whole process plus mmapped chunks.  Format: glibc
 * malloc/malloc.c __malloc_info, "<malloc version="1">" since glibc 2.10.
 */
#ifndef VT_ALLOC_MALLOC_INFO_H
#define VT_ALLOC_MALLOC_INFO_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

/* One <size> or <unsorted> line: free chunks in [from, to] bytes. */
struct vt_mi_bin {
	uint64_t from, to;
	uint64_t total;            /* bytes in these free chunks */
	uint64_t count;            /* number of free chunks */
	int unsorted;              /* the unsorted bin */
};

struct vt_mi_totals {
	uint64_t fast_count, fast_bytes;   /* <total type="fast"> */
	uint64_t rest_count, rest_bytes;   /* <total type="rest">: other free chunks + top */
	uint64_t mmap_count, mmap_bytes;   /* <total type="mmap">: process totals only */
	uint64_t system_current;           /* <system type="current">: from the kernel now */
	uint64_t system_max;               /* <system type="max"> */
	uint64_t aspace_total;             /* <aspace type="total"> */
	uint64_t aspace_mprotect;          /* <aspace type="mprotect"> */
	uint64_t subheaps;                 /* <aspace type="subheaps">: non-main arenas */
};

struct vt_mi_arena {
	int nr;                            /* <heap nr="N">; 0 is the main arena */
	struct vt_mi_totals t;
	struct vt_mi_bin *bins;            /* owned by the vt_malloc_info */
	size_t n_bins;
};

struct vt_malloc_info {
	struct vt_mi_arena *arenas;        /* owned */
	size_t n_arenas;
	struct vt_mi_totals total;         /* the process-wide totals after the last heap */
};

/* Parse the XML.  VT_E_PARSE on anything that is not malloc_info version 1. */
/*
 * Open expat, which the parse needs (once; VT_OK at once after): a caller
 * about to stop a target to get the XML asks first, so that a missing
 * libexpat1 is said (VT_E_UNSUPPORTED, naming the package) before anything
 * stops.
 */
int vt_malloc_info_ready(struct vt_err *err);

int vt_malloc_info_parse(const char *xml, size_t len, struct vt_malloc_info *out,
			 struct vt_err *err);
void vt_malloc_info_release(struct vt_malloc_info *mi);

/* Free bytes held by an arena: fast bins + the rest (incl. top). */
static inline uint64_t vt_mi_free_bytes(const struct vt_mi_totals *t)
{
	return t->fast_bytes + t->rest_bytes;
}

/*
 * What malloc_trim(0) could give back in one arena, from its free chunks:
 * since glibc 2.8 it releases (MADV_DONTNEED) every whole page inside every
 * free chunk in the bins of every arena, and shrinks the top of the main
 * arena only (malloc.c mtrim: "av == &main_arena ? systrim (pad, av) : 0";
 * a thread arena's top is shrunk by free() once it passes the trim
 * threshold, never by malloc_trim).  A chunk of s
 * bytes holds at least s - 2 pages and at most s bytes of whole pages.  Pages
 * released before (an earlier trim) still count as free chunks but are no
 * longer resident: the estimate is of address space, the measured --trim
 * result is of memory.
 */
struct vt_trim_estimate {
	uint64_t low_bytes, high_bytes;
};
void vt_malloc_info_trim_estimate(const struct vt_mi_arena *a, uint64_t page_size,
				  struct vt_trim_estimate *out);

#endif

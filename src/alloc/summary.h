/*
 * summary.h — the figures every allocator vitals reads gives, in one shape:
 * what the program holds, what the allocator holds free, and what a trim
 * would return at once.  Each allocator module fills it from its own
 * figures (glibc.c from mallinfo2, another allocator's read from its own:
 * allocator.h); soak, serve and the verdict on another allocator read only
 * this, so a new allocator is one more filler, not a branch in each of
 * them.  (glibc's arena views and verdict read mallinfo2 and malloc_info,
 * which only glibc has.)
 */
#ifndef VT_ALLOC_SUMMARY_H
#define VT_ALLOC_SUMMARY_H

/* Bytes; NAN where this allocator has no such figure. */
struct vt_alloc_summary {
	double live;        /* in blocks the program holds */
	double free;        /* taken from the system and held free by the allocator */
	double held;        /* what the allocator holds from the system: live + free
			     * (jemalloc: resident, which counts its metadata too) */
	double trimmable;   /* free that a trim returns at once (glibc: the main
			     * arena's top chunk, keepcost) */
};

#endif

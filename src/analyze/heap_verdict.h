/*
 * heap_verdict.h — what the allocator's figures say, and which lever fits:
 * the data is live (look for retention), or the allocator holds free memory
 * (trim, fewer arenas, another allocator) — always with the numbers it rests
 * on, and "cannot tell" when they do not decide.  Reads a heap sample only.
 */
#ifndef VT_ANALYZE_HEAP_VERDICT_H
#define VT_ANALYZE_HEAP_VERDICT_H

#include "sample/heap.h"

enum vt_heap_lever {
	VT_LEVER_NONE = 0,          /* small heap or nothing held: nothing to act on */
	VT_LEVER_RETENTION,         /* mostly live data: find what keeps it */
	VT_LEVER_TRIM,              /* free memory in whole pages: malloc_trim returns it */
	VT_LEVER_FEWER_ARENAS,      /* free memory spread over many arenas */
	VT_LEVER_ALLOCATOR,         /* fragmented free memory trim cannot return */
	VT_LEVER_DECAY,             /* jemalloc: dirty/muzzy pages its decay returns */
	VT_LEVER_CANNOT_TELL,
};

#define VT_VERDICT_EVIDENCE 8

struct vt_heap_verdict {
	enum vt_heap_lever lever;
	char headline[256];
	char evidence[VT_VERDICT_EVIDENCE][256];
	int n_evidence;
	uint64_t trim_low, trim_high;   /* estimate over all arenas, bytes (glibc) */
};

const char *vt_heap_lever_name(enum vt_heap_lever lever);   /* "fewer_arenas" */
void vt_heap_judge(const struct vt_heap_sample *h, uint64_t page_size, struct vt_heap_verdict *v);

#endif

/*
 * free_mem.h — the free memory that costs RAM over a recording: glibc's
 * free bytes on resident pages (free_resident) and the resident whole pages
 * malloc_trim(0) could give back (trimmable), next to the allocator's own
 * free figure (heap_free, fordblks) when the recording has it, summed up
 * for analyze's views.  Reads a series, never /proc.
 */
#ifndef VT_ANALYZE_FREE_MEM_H
#define VT_ANALYZE_FREE_MEM_H

#include <stdbool.h>
#include <stddef.h>

#include "sample/series.h"

struct vt_free_mem {
	bool recorded;               /* the recording has the column (made by a vitals that measures it) */
	size_t points;               /* points with a free_resident figure */
	double t0, t1;               /* the first and last of them (soak seconds) */
	/* the last quarter of the known points (of the last incarnation): the mean of their means */
	double q4_t0;
	double q4_resident, q4_trimmable, q4_heap_free;   /* NAN unknown (heap_free: not recorded) */
	double lo, hi;               /* free_resident's lowest and highest sample over the recording */
	double last_resident, last_trimmable;   /* the last point's means */
	const char *why_none;        /* the recording's event that says why there are none, NULL */
};

/* Sum s up into *out. */
void vt_free_mem_summarize(const struct vt_series *s, struct vt_free_mem *out);

#endif

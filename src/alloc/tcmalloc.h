/*
 * tcmalloc.h — gperftools tcmalloc's own figures, asked of tcmalloc inside
 * the target (libtcmalloc.so.4, libtcmalloc_minimal.so.4, preloaded or
 * linked).
 *
 * The recipe, on one attached thread (alloc/calls.h): one call of
 * MallocExtension_GetNumericProperty per figure (generic.current_allocated_bytes,
 * generic.heap_size, tcmalloc.pageheap_free_bytes,
 * tcmalloc.pageheap_unmapped_bytes and the three caches' free bytes).  It
 * takes tcmalloc's spin locks one at a time, and may sleep on one while
 * holding another in older releases, so its calls are never abandoned while
 * blocked (VT_INJECT_ABANDON_LATE).  Its row is in allocator.c.
 */
#ifndef VT_ALLOC_TCMALLOC_H
#define VT_ALLOC_TCMALLOC_H

#include <stdint.h>

#include "alloc/allocator.h"

/*
 * Read the figures through MallocExtension_GetNumericProperty (resolved)
 * into *out, with the summary: live = allocated; held = heap_size -
 * pageheap_unmapped (what it has from the system and has not released);
 * free = held - live.  VT_E_FAIL when tcmalloc does not know a property
 * every release has.
 */
int vt_tcmalloc_read(struct vt_alloc_calls *cs, uint64_t get_numeric_property, struct vt_alloc_stats *out,
		     struct vt_err *err);

#endif

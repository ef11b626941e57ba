/*
 * jemalloc.h — jemalloc's own figures, asked of jemalloc inside the target.
 *
 * The recipe, on one attached thread (alloc/calls.h): mallctl("epoch") to
 * refresh the statistics, then stats.allocated, active, metadata,
 * resident, mapped, retained, arenas.narenas and version, one mallctl each.
 * mallctl may wait while it holds ctl_mtx, so its calls are never abandoned
 * while blocked (VT_INJECT_ABANDON_LATE).  Its row is in allocator.c.
 */
#ifndef VT_ALLOC_JEMALLOC_H
#define VT_ALLOC_JEMALLOC_H

#include <stdint.h>

#include "alloc/allocator.h"

/*
 * Refresh and read the statistics through mallctl (resolved) into *out:
 * the stats.* figures by their jemalloc names, the arena count, the
 * version and the summary (live: allocated; held: resident; free: resident
 * - allocated; nothing trimmable by a call: jemalloc purges on its own).
 * VT_E_FAIL when a mallctl returns an error.
 */
int vt_jemalloc_read(struct vt_alloc_calls *cs, uint64_t mallctl, struct vt_alloc_stats *out,
		     struct vt_err *err);

#endif

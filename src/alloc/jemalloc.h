/*
 * jemalloc.h — jemalloc's own figures, asked of jemalloc inside the target.
 *
 * The recipe, on one attached thread (alloc/calls.h): mallctl("epoch") to
 * refresh the statistics, then stats.allocated, active, metadata,
 * resident, mapped, retained, arenas.narenas and version, one mallctl each.
 * mallctl may wait while it holds ctl_mtx, so its calls are never abandoned
 * while blocked (VT_INJECT_ABANDON_LATE).
 */
#ifndef VT_ALLOC_JEMALLOC_H
#define VT_ALLOC_JEMALLOC_H

#include <stdint.h>
#include <sys/types.h>

#include "alloc/calls.h"
#include "alloc/summary.h"
#include "base/error.h"
#include "proc/maps.h"
#include "proc/procfs.h"

/* jemalloc stats.* after an epoch refresh (bytes). */
struct vt_jemalloc_stats {
	uint64_t allocated;  /* stats.allocated: live */
	uint64_t active;     /* stats.active: pages with live data */
	uint64_t metadata;   /* stats.metadata */
	uint64_t resident;   /* stats.resident */
	uint64_t mapped;     /* stats.mapped */
	uint64_t retained;   /* stats.retained: virtual, kept for reuse */
	uint64_t narenas;    /* arenas.narenas */
	char version[64];    /* version string */
};

/* mallctl in the target's libjemalloc.  Errors: those of vt_inject_resolve. */
int vt_jemalloc_resolve(const struct vt_procfs *pfs, pid_t pid, const struct vt_region_list *maps,
			uint64_t *mallctl, struct vt_err *err);

/* Refresh and read the statistics.  VT_E_FAIL when a mallctl returns an error. */
int vt_jemalloc_stats_read(struct vt_alloc_calls *cs, uint64_t mallctl, struct vt_jemalloc_stats *je,
			   struct vt_err *err);

/* The summary every allocator gives: live (allocated), free (resident - allocated),
 * held (resident); jemalloc purges on its own, so nothing is trimmable by a call. */
void vt_jemalloc_summary(const struct vt_jemalloc_stats *je, struct vt_alloc_summary *out);

#endif

/*
 * alloc_probes.h — where to probe a process's allocator: its entry points
 * (malloc, calloc, realloc, memalign/aligned_alloc, posix_memalign, free and
 * jemalloc's *allocx) in the file that provides malloc, as file offsets the
 * uprobe PMU takes (perf/uprobe.h).
 *
 * The file is the one allocator detection names (alloc/detect.h: libc, a
 * preloaded jemalloc, an allocator linked into the executable under a
 * prefix); each symbol is resolved as injection resolves it (the target's
 * own file, its first bytes compared with the target's memory).  Two names
 * of one address (aligned_alloc is memalign in glibc) are probed once.  The
 * path handed to the kernel is /proc/PID/root/<file> when that is the
 * inode the target maps, else its map_files entry.
 *
 * Errors:
 *   VT_E_UNSUPPORTED  no malloc or free symbol to probe (a stripped static
 *                     binary), or a sanitizer runtime owns malloc: why, in words
 *   VT_E_PERM, VT_E_GONE, VT_E_NOPROC, VT_E_NOMEM, VT_E_FAIL (file does not
 *                     match the mapping)
 */
#ifndef VT_ALLOC_ALLOC_PROBES_H
#define VT_ALLOC_ALLOC_PROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "alloc/detect.h"
#include "base/error.h"
#include "proc/maps.h"
#include "proc/procfs.h"

/* What an entry point does, by its arguments. */
enum vt_alloc_fn {
	VT_AFN_MALLOC,          /* (size) -> ptr; jemalloc's mallocx(size, flags) too */
	VT_AFN_CALLOC,          /* (n, size) -> ptr */
	VT_AFN_REALLOC,         /* (ptr, size) -> ptr; rallocx(ptr, size, flags) too */
	VT_AFN_MEMALIGN,        /* (align, size) -> ptr: memalign, aligned_alloc */
	VT_AFN_POSIX_MEMALIGN,  /* (&ptr, align, size) -> int: the pointer is not seen */
	VT_AFN_FREE,            /* (ptr); dallocx, sdallocx too */
	VT_AFN__COUNT
};
const char *vt_alloc_fn_name(enum vt_alloc_fn fn);   /* "malloc", ... */

#define VT_ALLOC_PROBES_MAX 12

struct vt_alloc_probe_fn {
	enum vt_alloc_fn fn;
	char symbol[48];          /* as probed: "malloc", "_rjem_mallocx" */
	uint64_t addr;            /* in the target */
	uint64_t offset;          /* in the file */
	bool ret;                 /* its return is probed too (the pointer it gives) */
};

struct vt_alloc_probe_plan {
	struct vt_alloc_info alloc;   /* the allocator detected */
	char path[64];            /* the file, as the kernel opens it */
	struct vt_alloc_probe_fn fns[VT_ALLOC_PROBES_MAX];
	size_t n;
	char skipped[256];        /* entry points not probed and why ("posix_memalign: not
	                           * defined"), "" none */
};

/* Plan the probes of process pid (directory dirfd, mappings maps). */
int vt_alloc_probe_plan(const struct vt_procfs *pfs, int dirfd, pid_t pid,
			const struct vt_region_list *maps, const struct vt_alloc_info *alloc,
			struct vt_alloc_probe_plan *out, struct vt_err *err);

#endif

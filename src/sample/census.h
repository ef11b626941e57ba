/*
 * census.h — what fills a process's heap, live and free told apart: the
 * glibc chunk walk (alloc/glibc_heap.h) with a content census
 * (sample/content.h) of the live chunks and of the free ones.
 *
 * Reads only, by default without stopping the process: process_vm_readv
 * for memory, /proc/PID/pagemap for which pages are resident.  With
 * consistent set, every thread is stopped for the walk (inject/freeze.h),
 * for at most stop_ms, and let go however the walk ends.
 *
 * Filled by vt_census_take; rendered by render/census_*.c.
 */
#ifndef VT_SAMPLE_CENSUS_H
#define VT_SAMPLE_CENSUS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "alloc/detect.h"
#include "alloc/glibc_heap.h"
#include "base/error.h"
#include "proc/procfs.h"
#include "sample/arena_threads.h"
#include "sample/content.h"

#define VT_CENSUS_TOP_MAX 1000         /* --top at most */

struct vt_census_opts {
	const char *const *needles;    /* nneedles strings (NUL-terminated) */
	size_t nneedles;               /* at most VT_CONTENT_NEEDLES_MAX */
	size_t top;                    /* strings, fragments and shapes kept for the report */
	bool no_fragments;             /* skip the most repeated fragments (sample/fragment.h) */
	bool consistent;               /* stop the process for the walk */
	int stop_ms;                   /* ... for at most this long */
};

/* A most repeated fragment, and whether it is a whole string shown already. */
struct vt_census_fragment {
	struct vt_fragment f;
	long string;                   /* index in its side's strings of one that holds it and occurs as
					  often as chunks hold it, or more (it may be all there is of
					  it); -1 when none */
};

/* One side of the census: live chunks, or free ones. */
struct vt_census_side {
	struct vt_content_totals totals;
	struct vt_content_string *strings;   /* nstrings, most repeated first; owned */
	size_t nstrings;
	struct vt_census_fragment *fragments;   /* nfragments, held by the most chunks first; owned */
	size_t nfragments;
	struct vt_content_shape *shapes;     /* nshapes, most bytes first; owned */
	size_t nshapes;
};

struct vt_census {
	pid_t pid;
	char comm[64];
	struct vt_alloc_info alloc;
	uint64_t main_arena;
	char main_arena_how[160];      /* how it was found */
	struct vt_heap_walk walk;      /* per arena; owned */
	struct vt_arena_threads threads;   /* which threads allocate from each arena of walk; owned */
	struct vt_mallinfo mi;         /* the walk's totals as mallinfo2 adds them up */
	struct vt_census_side live, freed;
	bool fragments;                /* fragments were looked for */
	size_t nneedles;
	char needles[VT_CONTENT_NEEDLES_MAX][VT_CONTENT_NEEDLE_LEN_MAX + 1];
	bool consistent;               /* the process was stopped for the walk */
	double stopped_ms;             /* ... for this long */
	unsigned threads_stopped;
	double took_s;                 /* end to end */
	double taken_at;               /* unix time */
};

/*
 * Take the census of pid.  Errors: VT_E_NOPROC, VT_E_KTHREAD, VT_E_ZOMBIE,
 * VT_E_GONE (exited meanwhile), VT_E_PERM (memory not readable: the hint
 * says what to grant), VT_E_UNSUPPORTED (not glibc malloc, a static or
 * sanitizer build, glibc older than 2.27, main_arena not found),
 * VT_E_TIMEOUT (--consistent could not stop every thread in time:
 * nothing was walked, every thread let go).  *out is released on error.
 */
int vt_census_take(const struct vt_procfs *pfs, pid_t pid, const struct vt_census_opts *opts,
		   struct vt_census *out, struct vt_err *err);
void vt_census_release(struct vt_census *c);

#endif

/*
 * free_walk.h — free memory that costs RAM, read again and again without
 * stopping the process: glibc's free chunks on resident pages
 * (free_resident) and the resident whole pages malloc_trim(0) could give
 * back (trimmable), from a counts-only walk of the arenas
 * (alloc/glibc_heap.h) through process_vm_readv and /proc/PID/pagemap.
 *
 * fordblks (mallinfo2's free bytes) is malloc's bookkeeping: a free chunk
 * whose pages the kernel never backed, or that a trim gave back, costs no
 * RAM.  What competes for memory is the part on resident pages, and only a
 * walk of the chunks says which part that is.
 *
 * A walk reads the arenas' resident pages (counts only: no content is
 * looked at) and costs vitals CPU in proportion to the heap: it is spaced
 * by struct vt_free_cadence so that its CPU stays within a budget.  A walk
 * that cannot finish cleanly (the process exits, a mapping changes under
 * it, a stretch of the heap is skipped) gives no figure, never a partial
 * one.  Mmapped chunks are live, never free: they are not walked.
 */
#ifndef VT_SAMPLE_FREE_WALK_H
#define VT_SAMPLE_FREE_WALK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "alloc/detect.h"
#include "base/error.h"
#include "proc/procfs.h"

#define VT_FREE_WALK_DEADLINE_S 10.0    /* a walk that takes longer is given up */

/* ---- the cadence: walks spaced so that their CPU stays within a budget ---- */

struct vt_free_cadence {
	double every_s;              /* at least this long between walks (> 0) */
	double budget;               /* share of one core the walks may use, (0, 1] */
	double next;                 /* monotonic seconds of the next walk; 0: at the first ask */
	unsigned walks;              /* walks taken (failed ones included: they cost too) */
	double cpu_s;                /* their CPU, summed */
	double last_cpu_s;           /* the last one's */
	double max_cpu_s;            /* the dearest */
};

/* A cadence of every_s (<= 0: 60 s) and budget (<= 0 or > 1: 1%). */
void vt_free_cadence_init(struct vt_free_cadence *c, double every_s, double budget);
/* Is a walk due at now? */
bool vt_free_cadence_due(const struct vt_free_cadence *c, double now);
/*
 * A walk started at now cost cpu_s of CPU: the next one is due
 * max(every_s - slack, cpu_s / budget) later, so that the walks' CPU over
 * any stretch of time is at most budget of a core (plus the one walk in
 * progress).  The slack, min(10% of every_s, 0.25 s), lets a walk be
 * taken at a caller's tick that comes a little early.
 */
void vt_free_cadence_done(struct vt_free_cadence *c, double now, double cpu_s);
/* The gap the last walk set: max(every_s - slack, last_cpu_s / budget). */
double vt_free_cadence_gap(const struct vt_free_cadence *c);

/* ---- the walk ---- */

struct vt_free_figures {
	double free_resident;        /* bytes of free chunks (bins, fast, tcache, top) on resident pages */
	double trimmable;            /* resident whole pages of free chunks malloc_trim(0) could give back */
	double free_bytes;           /* the free chunks' bytes, resident or not (fordblks + tcache) */
	unsigned arenas;
	double cpu_s;                /* this walk's CPU (vitals' thread) */
	double wall_s;               /* and its time */
	uint64_t read_bytes;         /* bytes read from the process */
};

struct vt_free_walk;

/*
 * Ready to walk process pid (dirfd: its /proc/PID, borrowed), whose
 * allocator is alloc.  VT_E_UNSUPPORTED with the reason when it is not a
 * glibc malloc this walk reads (another allocator, a sanitizer, a static
 * glibc, glibc older than 2.27); VT_E_NOMEM.  Nothing is read yet.
 */
int vt_free_walk_open(const struct vt_procfs *pfs, int dirfd, pid_t pid, const struct vt_alloc_info *alloc,
		      struct vt_free_walk **out, struct vt_err *err);
void vt_free_walk_close(struct vt_free_walk *fw);

/*
 * Walk (again, up to 3 times in all, when the heap changed under a walk):
 * maps read afresh, main_arena found at the first walk (and
 * again after a walk that failed), then the arenas counted.  VT_OK with
 * *out filled; else *out has only cpu_s and wall_s, and the error says
 * why: VT_E_GONE (exited), VT_E_PERM (its memory is not readable: lasting),
 * VT_E_UNSUPPORTED (main_arena not found: lasting), VT_E_BUSY (a stretch
 * of the heap changed under the walk and was skipped, or the walk took
 * longer than VT_FREE_WALK_DEADLINE_S: no figure this time), VT_E_NOMEM.
 */
int vt_free_walk_take(struct vt_free_walk *fw, struct vt_free_figures *out, struct vt_err *err);

/* Does a failure with this code last (no walk of this process will do better)? */
bool vt_free_walk_refusal_lasts(int code);

#endif

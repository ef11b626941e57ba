/*
 * trim_follow.h — after a malloc_trim(0), follow the target's committed
 * memory (RssAnon + VmSwap from its status, read through a held-open watch)
 * at a fixed interval for a given time: the curve its refill draws.  Reads
 * only: the trim has returned before the follow starts, and nothing here
 * stops or changes the target.
 *
 * Filled by src/sample/trim_follow.c; judged by analyze/refill.h; rendered
 * with the heap report (render/heap_*.c).
 */
#ifndef VT_SAMPLE_TRIM_FOLLOW_H
#define VT_SAMPLE_TRIM_FOLLOW_H

#include <signal.h>
#include <stddef.h>

#include "base/error.h"
#include "sample/watch.h"

/* Why a follow ended. */
enum vt_follow_end {
	VT_FOLLOW_DONE = 1,      /* it ran for as long as asked */
	VT_FOLLOW_STOPPED,       /* the stop flag (Ctrl-C, SIGTERM): the points so far are kept */
	VT_FOLLOW_GONE,          /* the target exited: the points before it are kept */
};

struct vt_trim_follow {
	double *t_s;             /* owned: seconds since the trim call returned; t_s[0] = 0 */
	double *committed;       /* owned: bytes at each t_s (RssAnon + VmSwap; NAN when a read
	                          * failed but the process was still there) */
	size_t n, cap;
	double every_s;          /* the interval asked for */
	double asked_s;          /* how long it was asked to follow */
	enum vt_follow_end end;
	double read_ms;          /* vitals' reads of the target over the follow, in all */
};

struct vt_trim_follow_opts {
	double for_s;            /* follow this long (> 0) */
	double every_s;          /* one reading this often (> 0) */
	volatile sig_atomic_t *stop;   /* set by a signal handler: end now, keep the points; may be NULL */
	/* After each reading: the follow so far and the seconds left; may be NULL. */
	void (*progress)(void *ctx, const struct vt_trim_follow *f, double left_s);
	void *ctx;
};

/*
 * Follow w's process from start_mono_s (CLOCK_MONOTONIC seconds: when the
 * reading committed_after was taken, right after the trim returned) for
 * opts->for_s, one reading every opts->every_s on that clock.  out is
 * filled (point 0 is committed_after) and released with
 * vt_trim_follow_release, also on error.  Returns VT_OK whatever ended it
 * (out->end says what); VT_E_NOMEM when the points cannot be kept.
 */
int vt_trim_follow_run(struct vt_watch *w, double start_mono_s, double committed_after,
		       const struct vt_trim_follow_opts *opts, struct vt_trim_follow *out, struct vt_err *err);
void vt_trim_follow_release(struct vt_trim_follow *f);

#endif

/*
 * mem_limit.h — a memory limit for the process's cgroup from a settled
 * soak (issue 16, part 2; field report 000 "resized mem_limit from the
 * settled measurement", by hand).
 *
 * The need is what the process holds in memory: its RSS (anonymous, the
 * file pages it maps, shared memory) and what it has in swap, i.e.
 * committed + RssFile + RssShmem.  The rule:
 *
 *   limit = peak need over the span
 *           + max(a fifth of that peak, the settled window's spread, 32 MiB),
 *           rounded up to a whole 16 MiB.
 *
 * The peak is taken over the whole span (the last incarnation), warm-up
 * included: a limit the start-up crosses kills every restart.  The
 * fifth is the margin for what the soak did not see (a busier hour, a
 * larger request); the spread (highest minus lowest need in the settled
 * window) covers an oscillation wider than that.
 *
 * It is given only when the soak settled and nothing held the process
 * down.  "Cannot tell yet", with the reason, when the verdict found no
 * settled window (a leak: no limit holds a floor that keeps rising; still
 * settling or too short: soak longer), or when the cgroup's limit bit the
 * process during the span: a process squeezed by its limit measures the
 * limit, not its need.  Bit means: an OOM kill (memory.events oom_kill,
 * or the soak's oom_kill event: the count had risen when the process
 * exited, which no sample of it can show),
 * or the cgroup reached its limit (memory.events max or high, v1
 * failcnt) while the recommendation would not fit under where the cgroup
 * was held (the lower of memory.max and memory.current's peak, which
 * stands for memory.high: the process itself was near it) or while reclaim stalled its
 * tasks for VT_LIMIT_PSI_NOTE % of the span or more (memory.pressure:
 * its pages were being taken).  A cgroup that reaches its limit only
 * because page cache fills it (any service that writes files does) or
 * other processes' memory is no reason: reclaim takes those first; the
 * count is kept (limit_reached) and the views say so.
 *
 * Pure: reads a series (sample/series.h) and its verdict; writes no
 * sentence (render/ words it).
 */
#ifndef VT_ANALYZE_MEM_LIMIT_H
#define VT_ANALYZE_MEM_LIMIT_H

#include <stdbool.h>
#include <stddef.h>

#include "analyze/soak.h"
#include "sample/series.h"

#define VT_LIMIT_HEADROOM_SHARE 0.20                 /* of the peak need */
#define VT_LIMIT_HEADROOM_MIN (32.0 * 1024 * 1024)   /* bytes */
#define VT_LIMIT_ROUND (16.0 * 1024 * 1024)          /* the limit is a whole number of these */
#define VT_LIMIT_PSI_NOTE 1.0                        /* % of the span stalled on memory worth a note */

enum vt_limit_why {
	VT_LIMIT_GIVEN = 0,          /* recommended holds the limit */
	VT_LIMIT_NOT_RECORDED,       /* the span has no RssAnon/RssFile/VmSwap figures */
	VT_LIMIT_NOT_SETTLED,        /* the verdict found no settled window: verdict and need_more_s say why */
	VT_LIMIT_WAS_HIT,            /* the cgroup's limit bit the process during the span: hit_by says how */
};

/* How the limit bit the process (VT_LIMIT_WAS_HIT). */
enum vt_limit_hit {
	VT_HIT_NONE = 0,
	VT_HIT_OOM_KILL,             /* ev_oom_kill rose */
	VT_HIT_NEAR_LIMIT,           /* the limit was reached, and the recommendation would not fit under it */
	VT_HIT_RECLAIM,              /* the limit was reached, and reclaim stalled it (psi_some_pct) */
};

/* Which term of the rule set the headroom. */
enum vt_limit_headroom {
	VT_HEADROOM_SHARE = 1,       /* a fifth of the peak */
	VT_HEADROOM_SPREAD,          /* the settled window's spread */
	VT_HEADROOM_MIN,             /* 32 MiB */
};

/* A figure over the window: median of the points' means, lowest low, highest high. */
struct vt_limit_level {
	double median, lo, hi;       /* bytes; NAN when not recorded */
};

struct vt_mem_limit {
	enum vt_limit_why why;
	enum vt_limit_hit hit_by;
	bool limit_reached;                  /* memory.events max or high rose in the span */
	enum vt_verdict_kind verdict;        /* the soak's verdict on its metric */
	double need_more_s;                  /* the verdict's, when it asks for a longer soak; else NAN */

	/*
	 * The window the levels are taken over: the settled window (settled
	 * true; after the step of a step growth), else the last half of the
	 * span (NAN when the span is empty).  The need and its parts in it.
	 */
	bool settled;
	double window_t0, window_t1;
	struct vt_limit_level need, committed, rss_file, rss_shmem;
	double spread;                       /* need.hi - need.lo */

	/* the span's peak need (its points' highest parts, summed) */
	double peak, peak_t;

	/*
	 * The rule: the figure, and the headroom in it.  NAN unless given or
	 * VT_LIMIT_WAS_HIT (then what the rule would give: not a recommendation).
	 */
	double headroom;
	enum vt_limit_headroom headroom_by;
	double recommended;                  /* bytes, a whole number of VT_LIMIT_ROUND */

	/* swap in the span */
	double swap_peak;                    /* VmSwap at its highest; NAN not recorded */

	/*
	 * The cgroup over the span: NAN where not recorded (no memory cgroup,
	 * or a recording older than these columns: cgroup_events false).
	 */
	bool cgroup;                         /* memory.current was recorded in the span */
	bool cgroup_events;                  /* memory.events (or v1 failcnt) was */
	double cg_limit;                     /* the limit at the span's last sample; NAN when none is set */
	double cg_current_median;            /* memory.current over the window */
	double cg_current_peak;              /* over the span */
	double ev_high, ev_max, ev_oom_kill; /* how much each count rose over the span */
	bool oom_at_exit;                    /* an oom_kill event: the count rose as the process exited */
	double psi_some_pct, psi_full_pct;   /* % of the span stalled on memory (v2 only) */
};

/*
 * The limit for s judged as v (vt_soak_analyze on it, any metric).  Never
 * fails: what cannot be told is out->why with its figures.
 */
void vt_mem_limit_recommend(const struct vt_series *s, const struct vt_soak_verdict *v,
			    struct vt_mem_limit *out);

#endif

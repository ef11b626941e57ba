/*
 * soak.h — is it a leak or a plateau?  The verdict on a soak recording,
 * with the evidence it rests on (field report 000: "FLOOR drift q1->q4",
 * a plateau that took 65–85 minutes to settle, one 178 MB step).
 *
 * Reads a struct vt_series (sample/series.h), never /proc.  The analysed
 * span is the last incarnation of the process (a restart starts the memory
 * story over); restarts before it are counted and reported.  Every figure
 * the verdict rests on is in struct vt_soak_verdict so that each view
 * prints the same evidence.  It writes no sentence: a reason code says
 * which finding applies, and render/soak.h (vt_soak_why) words it.
 */
#ifndef VT_ANALYZE_SOAK_H
#define VT_ANALYZE_SOAK_H

#include <stdbool.h>
#include <stddef.h>

#include "sample/series.h"

enum vt_verdict_kind {
	VT_VERDICT_CANNOT_TELL = 1,  /* too short or too noisy to decide: need_more_s says how long to go on */
	VT_VERDICT_SETTLING,         /* still growing, but slower and slower: not settled yet */
	VT_VERDICT_PLATEAU,          /* settled: the floor no longer moves beyond noise */
	VT_VERDICT_LEAK,             /* the floor rises steadily: slope with its uncertainty */
	VT_VERDICT_STEP,             /* flat, one jump, flat again: when and how much */
};

/*
 * Which finding the verdict rests on: one value per sentence that says why
 * (render/soak.h vt_soak_why writes it from the figures named here).
 */
enum vt_soak_reason {
	VT_SOAK_WHY_NONE = 0,          /* not analysed */
	VT_SOAK_WHY_NOT_RECORDED,      /* the metric is not in this recording: nothing to judge */
	VT_SOAK_WHY_NO_SAMPLES,        /* no sample of it yet: min_samples, min_span_s, need_more_s */
	VT_SOAK_WHY_TOO_FEW,           /* judged_samples over judged_span_s: under min_samples or min_span_s */
	VT_SOAK_WHY_NO_SPREAD,         /* every point at one time: no trend to judge */
	VT_SOAK_WHY_STEP,              /* step_t, step_bytes, step_before, step_after */
	VT_SOAK_WHY_FALLING,           /* slope (and interval) over slope_window_s: still falling */
	VT_SOAK_WHY_FLAT_FROM_START,   /* plateau from t0: settled_*, slope over slope_window_s, tolerance */
	VT_SOAK_WHY_SETTLED_AFTER,     /* plateau after settle_s: the same figures */
	VT_SOAK_WHY_LEVELLED_RECENTLY, /* settled_median over settled_window_s only: too recent */
	VT_SOAK_WHY_SLOWING,           /* rate_first_half_per_s, then slower rate_last_half_per_s */
	VT_SOAK_WHY_STEADY_TOO_SHORT,  /* rose at rate_first_half_per_s, then rate_last_half_per_s over steady_s only */
	VT_SOAK_WHY_LEAK,              /* slope (and interval) over slope_window_s, steadily */
	VT_SOAK_WHY_SLOW_TREND,        /* a trend whose drift over slope_window_s is within tolerance */
	VT_SOAK_WHY_TOO_NOISY,         /* settled, but the interval allows drift_not_ruled_out */
	VT_SOAK_WHY_NO_STEADY_TREND,   /* moves beyond the tolerance without a steady trend */
	VT_SOAK_WHY_SMALL_RISE,        /* slope over slope_window_s, steady but under material: cannot tell yet */
	VT_SOAK_WHY_RATCHET,           /* slope over slope_window_s in floor_records steps of floor_bins: cannot tell yet */
	VT_SOAK_WHY_FREE_LISTS,        /* slope over slope_window_s while heap_live stayed flat: free-list growth */
};

/*
 * What a settled window needs to be a plateau, one bit each: it covers a
 * third of the span, holds enough points, its floor moved within the
 * tolerance over the fitted window, and the slope interval rules out a
 * drift that matters over it.  struct vt_soak_verdict plateau_missing says
 * which of them a settled window that is not a plateau lacks.
 */
enum vt_plateau_need {
	VT_PLATEAU_NEEDS_LENGTH = 1 << 0,  /* settled_window_s under plateau_window_s */
	VT_PLATEAU_NEEDS_POINTS = 1 << 1,  /* settled_points under plateau_points */
	VT_PLATEAU_NEEDS_FLAT = 1 << 2,    /* the floor moved slope * slope_window_s, beyond the tolerance */
	VT_PLATEAU_NEEDS_BOUND = 1 << 3,   /* the interval allows drift_not_ruled_out, more than material */
};

/* "plateau", "leak", "step growth", "still settling", "cannot tell yet" */
const char *vt_verdict_name(enum vt_verdict_kind k);
/* "plateau", "leak", "step", "settling", "cannot_tell": for JSON and CSV */
const char *vt_verdict_key(enum vt_verdict_kind k);

/* One quarter of the analysed span (the report's q1..q4). */
struct vt_quarter {
	double t0, t1;               /* seconds since the soak began */
	size_t samples;
	double floor;                /* lowest value (robust: a lone outlier does not set it) */
	double median;
	double peak;
};

/* RssAnon falling while swap rises and committed stays flat. */
struct vt_swap_motion {
	bool seen;                   /* at least one episode (false too when swap was not recorded) */
	int episodes;                /* separate push/pull episodes in the span */
	double t0, t1;               /* the largest episode */
	double anon_delta;           /* RssAnon change over it (negative: pushed out) */
	double swap_delta;           /* VmSwap change over it */
	double committed_delta;      /* committed change over it (about 0: nothing was freed) */
	double anon_range_lo, anon_range_hi;   /* RssAnon oscillation in the settled window */
};

struct vt_soak_opts {
	enum vt_metric metric;       /* what the verdict is about: VT_M_COMMITTED by default */
	double min_span_s;           /* shortest span to decide on; 0: 20 intervals, at least 20 s */
	size_t min_samples;          /* fewest samples to decide on; 0: 20 */
};

struct vt_soak_verdict {
	enum vt_verdict_kind kind;
	enum vt_metric metric;
	enum vt_soak_reason reason;  /* which finding; the figures it quotes are below */

	/* the analysed span: the last incarnation */
	size_t from, to;             /* points [from, to) */
	double t0, t1;               /* its first and last sample times */
	size_t samples;
	int restarts;                /* restarts before it */
	int gaps;                    /* gaps inside it */
	bool running;                /* no STOP event, and a soak holds the file: still being written */
	bool died;                   /* no STOP event, and no soak holds it: the soak died (killed, disk full) */

	/* what a verdict needs (options resolved against the interval), and what it had */
	size_t min_samples;          /* fewest samples of the metric */
	double min_span_s;           /* shortest span, s */
	size_t judged_samples;       /* samples in the span where the metric is known */
	double judged_span_s;        /* from the first to the last of them, s */

	/* noise and what counts as movement */
	double noise;                /* robust sd of the metric around its local level */
	double tolerance;            /* a change smaller than this is "within noise" */

	/* quarters and floor drift */
	struct vt_quarter q[4];
	double floor_drift;          /* q4.floor - q1.floor */

	/* settling */
	bool settled;
	double settle_s;             /* from t0 to where the settled window begins */
	double settled_t0;           /* where it begins, s since the soak began (t0 + settle_s) */
	size_t settled_from;         /* point index of the settled window's start */
	double settled_lo, settled_hi, settled_median;   /* the metric in the settled window */
	double settled_window_s;     /* its duration, to the last sample with the metric, s */
	size_t settled_points;       /* its points (0 when none) */

	/*
	 * What a plateau needs (once the span is judged): a settled window of
	 * plateau_window_s (a third of the span) and plateau_points points,
	 * and over the fitted window a floor within the tolerance and a slope
	 * interval that rules out a drift of material.  plateau_missing: the
	 * enum vt_plateau_need bits the settled window lacks, when there is one
	 * and the verdict is neither plateau nor step (else 0); only the
	 * conditions judged on it (FLAT and BOUND when the trend was fitted on
	 * the settled window itself).
	 */
	double plateau_window_s;
	size_t plateau_points;
	double material;             /* metric unit */
	unsigned plateau_missing;

	/* trend of the floor: metric unit (bytes) per second, with a 90% interval */
	double slope, slope_lo, slope_hi;
	double slope_window_t0;      /* where the fitted window begins */
	double slope_window_s;       /* its duration, to the last sample with the metric, s */

	/*
	 * Growth that slows down: the rates of the first and the last half of
	 * the fitted window (metric unit per second; NAN unless the reason is
	 * VT_SOAK_WHY_SLOWING or VT_SOAK_WHY_STEADY_TOO_SHORT), and for the
	 * latter how long the steady last part lasts, s.
	 */
	double rate_first_half_per_s, rate_last_half_per_s;
	double steady_s;
	/*
	 * The largest drift over the fitted window its slope interval allows
	 * (metric unit; NAN without an interval): a plateau's confidence, what
	 * a too noisy recording cannot rule out
	 */
	double drift_not_ruled_out;

	/* step growth */
	double step_t;               /* when the new level was reached (NAN if no step) */
	double step_bytes;           /* size of the step */
	double step_before, step_after;   /* levels on either side */

	/*
	 * cannot tell / still settling: soak at least this much longer (NAN
	 * when not needed), rounded up to what base/units.h vt_fmt_span says
	 * exactly (vt_span_ceil), so that every view quotes this one figure
	 */
	double need_more_s;

	struct vt_swap_motion swap;

	/* a ratchet (VT_SOAK_WHY_RATCHET): fitted bins that set a new floor high, of floor_bins */
	size_t floor_records, floor_bins;

	/*
	 * The allocator's live bytes over the same span, when the soak recorded
	 * them (--heap, the agent; heap_live_kind 0 when not): their median,
	 * q1->q4 floor drift, their own verdict and, over the window the
	 * verdict's slope was fitted on, how far their floor moved.
	 */
	enum vt_verdict_kind heap_live_kind;
	double heap_live_median, heap_live_drift, heap_live_rise;

	/* process CPU over the span, in cores (NAN if not recorded) */
	double cpu_cores, cpu_user_cores, cpu_sys_cores;
};

void vt_soak_opts_default(struct vt_soak_opts *o);

/*
 * The smallest change of metric m that counts, at a level: 0.5% of the
 * level, and at least 1 MiB for bytes (heaps grow in 128 KiB..1 MiB
 * steps), 0.01 for cores and fractions, 0.5 for counts and seconds.  The
 * verdict's tolerance is the larger of this and 3 sd of its noise; compare
 * holds an A/B difference to the same floor.
 */
double vt_soak_change_floor(enum vt_metric m, double level);

/*
 * Analyse s into *v (o NULL: the defaults).  Never fails on data: an empty
 * or one-sample series gives VT_VERDICT_CANNOT_TELL with its reason; a
 * figure that does not apply is NAN.  Returns 0, or -1 only on out of
 * memory.
 */
int vt_soak_analyze(const struct vt_series *s, const struct vt_soak_opts *o,
		    struct vt_soak_verdict *v);

/*
 * The points [*a, *b) of s where the level v found holds: the settled
 * window of a plateau, what follows the step of a step growth.  True when
 * there is one; otherwise false and [*a, *b) is the last half of the span
 * (what an A/B sets side by side when a recording never settled).
 */
bool vt_soak_settled_window(const struct vt_series *s, const struct vt_soak_verdict *v, size_t *a,
			    size_t *b);

#endif

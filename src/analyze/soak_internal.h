/*
 * soak_internal.h — what the parts of the soak verdict share; included by
 * analyze/soak*.c only (the API is analyze/soak.h).
 *
 *   soak.c        the entry point: the span, its restarts, gaps and CPU
 *   soak_level.c  the robust level work: points, time bins and their
 *                 floors, noise and tolerance, quarters, the settled window
 *   soak_step.c   one step in the floor
 *   soak_swap.c   RssAnon pushed out to swap and pulled back in
 *   soak_judge.c  the trend, and the judgement that picks the verdict
 *
 * Every function here works on one struct vt_soak_work (vt_soak_analyze
 * owns it) and the verdict being filled; none allocates but
 * vt_soak_work_alloc.
 */
#ifndef VT_ANALYZE_SOAK_INTERNAL_H
#define VT_ANALYZE_SOAK_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "analyze/soak.h"
#include "analyze/stats.h"

#define DEFAULT_MIN_SAMPLES 20
#define MAX_BINS 160            /* Theil–Sen: 12,720 pairwise slopes at most */
#define RANGE_Q 0.05            /* ranges: 5th..95th percentile */

/* The span's points that have the metric, in time order (copies, for locality). */
struct vt_soak_pts {
	size_t n;
	size_t *idx;                    /* series index */
	double *t, *t0, *t1, *lo, *hi, *mean, *w;   /* w: samples in the point */
};

/* Equal-time bins over a run of points; empty bins are left out. */
struct vt_soak_bins {
	size_t n;
	double t[MAX_BINS];             /* count-weighted mean time of its points */
	double floor[MAX_BINS];         /* robust low of its points' lows */
	size_t first[MAX_BINS], end[MAX_BINS];   /* its points [first, end) in struct vt_soak_pts */
};

/* Everything one analysis allocates; vt_soak_analyze owns it. */
struct vt_soak_work {
	const struct vt_series *s;
	struct vt_soak_pts p;
	double *tmp;                    /* scratch, one value per point of the span */
	struct vt_wval *wv;             /* scratch pairs, same size */
	struct vt_soak_bins span, fit;
	bool bytes;                     /* the metric is in bytes (else a count) */
	double interval;                /* sampling interval, s (nominal, else measured) */
	double level;                   /* median of the metric over the span */
	double material;                /* the drift a plateau must rule out */
	size_t settled_pt;              /* settled window start in struct vt_soak_pts (p.n: none) */
	size_t settled_bin;             /* the span bin it begins in */
	size_t fit_pt;                  /* fit window start in p (its duration: v->slope_window_s) */
	double fit_b;                   /* the fitted line: floor = fit_b + slope * t */
};

/* ---- soak_level.c ---- */

/* w zeroed and its arrays for n points (one at least); -1 out of memory (free it all the same). */
int vt_soak_work_alloc(struct vt_soak_work *w, const struct vt_series *s, size_t n);
void vt_soak_work_free(struct vt_soak_work *w);
/* w->p: the points [from, to) of the series where metric m is known. */
void vt_soak_pts_load(struct vt_soak_work *w, enum vt_metric m, size_t from, size_t to);
/* Samples in points [a, b). */
double vt_soak_samples_of(const struct vt_soak_work *w, size_t a, size_t b);
/* First point at or after time t (p.n if none). */
size_t vt_soak_point_at(const struct vt_soak_work *w, double t);
/* Equal-time bins over points [a, b) into *out. */
void vt_soak_bins_make(struct vt_soak_work *w, size_t a, size_t b, struct vt_soak_bins *out);
/* Theil–Sen on the floors of bins [a, b) of bs, interval widened when they wander; -1 out of memory. */
int vt_soak_bins_fit(const struct vt_soak_bins *bs, size_t a, size_t b, struct vt_fit *fit);
/* Duration of bins [a, b), s. */
double vt_soak_bins_span(const struct vt_soak_work *w, const struct vt_soak_bins *bs, size_t a, size_t b);
/* Tolerance of metric m over series points [from, to), with its noise and level (NAN: not recorded). */
double vt_soak_tolerance_of(struct vt_soak_work *w, enum vt_metric m, size_t from, size_t to,
			    double *noise, double *level);
/* v->q[] and v->floor_drift from the points. */
void vt_soak_quarters(struct vt_soak_work *w, struct vt_soak_verdict *v);
/* The settled window (v->settled and its figures, w->settled_pt), from w->span; unsettle forgets it. */
void vt_soak_settle(struct vt_soak_work *w, struct vt_soak_verdict *v);
/* Begin it later, at point pt (a growth found inside it stopped by then). */
void vt_soak_settle_at(struct vt_soak_work *w, struct vt_soak_verdict *v, size_t pt);
void vt_soak_unsettle(struct vt_soak_work *w, struct vt_soak_verdict *v);
/* The settled window's duration, s (0 when none). */
double vt_soak_settled_s(const struct vt_soak_work *w);

/* ---- soak_step.c ---- */

/* One flat-jump-flat step in the span's bin floors: v->step_* and *found; -1 out of memory. */
int vt_soak_find_step(struct vt_soak_work *w, struct vt_soak_verdict *v, bool *found);

/* ---- soak_swap.c ---- */

/* v->swap: push/pull episodes over the span and RssAnon's range (untouched when not recorded). */
void vt_soak_swap(struct vt_soak_work *w, struct vt_soak_verdict *v);

/* ---- soak_judge.c ---- */

/*
 * Too little to decide on?  Fills v->min_samples, min_span_s and what the
 * span had; true with the reason and need_more_s when too short.
 */
bool vt_soak_too_short(struct vt_soak_work *w, const struct vt_soak_opts *o, struct vt_soak_verdict *v);
/* The verdict, its reason and figures on a span long enough; -1 out of memory. */
int vt_soak_judge(struct vt_soak_work *w, struct vt_soak_verdict *v);

#endif

/*
 * stats.h — robust statistics for the soak analysis: order statistics by
 * selection, the median absolute deviation, weighted quantiles and the
 * Theil–Sen slope with Sen's rank-based confidence interval.
 *
 * Robust on purpose: a soak's samples have lone spikes (a burst of
 * allocations caught mid-flight), steps (the heap grows by whole mappings)
 * and are never Gaussian; medians and ranks keep one odd value from moving
 * a verdict.  Inputs must be free of NAN (callers filter unknowns first).
 * Functions that take a non-const array reorder it.  Pure arithmetic: no
 * I/O, no printing.
 */
#ifndef VT_ANALYZE_STATS_H
#define VT_ANALYZE_STATS_H

#include <stddef.h>

/* Normal quantile for a two-sided 90% interval. */
#define VT_Z90 1.6448536269514722

/* Scale that turns a median absolute deviation into a Gaussian sd. */
#define VT_MAD_TO_SD 1.482602218505602

/* k-th smallest (0-based) of v[0..n); n > 0 and k < n.  Reorders v; O(n) expected. */
double vt_stat_select(double *v, size_t n, size_t k);

/*
 * q-quantile (0 <= q <= 1) of v[0..n), linear between the order statistics
 * around q*(n-1) (Hyndman–Fan type 7, what R and numpy give by default).
 * Reorders v.  NAN when n == 0.
 */
double vt_stat_quantile(double *v, size_t n, double q);
double vt_stat_median(double *v, size_t n);
double vt_stat_min(const double *v, size_t n);
double vt_stat_max(const double *v, size_t n);

/*
 * Robust sd of v[0..n) around its median: 1.4826 * median |v - median|.
 * When more than half the values tie (a metric that moves in whole pages
 * is often exactly flat), the MAD is 0 although the data does move; then
 * the mean absolute deviation of the inner 90% (scaled by sqrt(pi/2), its
 * Gaussian factor) stands in.  Reorders v.  0 when n < 2.
 */
double vt_stat_robust_sd(double *v, size_t n);

/* A value with a weight (samples summarised by a point). */
struct vt_wval {
	double v, w;
};

/*
 * Weighted q-quantile: the smallest value whose cumulative weight reaches
 * q of the total.  Sorts a.  NAN when n == 0 or all weights are 0.
 */
double vt_stat_wquantile(struct vt_wval *a, size_t n, double q);

/*
 * Theil–Sen line through (x[i], y[i]): slope = median of the pairwise
 * slopes; interval from Sen (1968): with N pairwise slopes ranked and
 * C = z * sqrt(n(n-1)(2n+5)/18) (the sd of Kendall's S, ties ignored,
 * which only widens the interval), the limits are the slopes of rank
 * (N - C)/2 and (N + C)/2 + 1.  It assumes independent residuals: fed the
 * floors of time bins, consecutive values are close to that.  Interval
 * limits are -INFINITY/INFINITY when n is too small to bound them.
 */
struct vt_fit {
	size_t n;                    /* points fitted */
	double slope, lo, hi;        /* y units per x unit; NAN when n < 2 */
	double intercept;            /* median of y - slope * x */
};

/* x ascending.  O(n^2) time and memory: fit bins, not raw samples.  0, or -1 out of memory. */
int vt_stat_theil_sen(const double *x, const double *y, size_t n, double z, struct vt_fit *fit);

#endif

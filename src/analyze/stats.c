/*
 * stats.c — robust statistics (see stats.h).  Arithmetic only: no I/O.
 */
#include "analyze/stats.h"

#include <math.h>
#include <stdlib.h>
#include <sys/types.h>

static inline void swap_d(double *a, double *b)
{
	double t = *a;

	*a = *b;
	*b = t;
}

/* Middle of three: a pivot that keeps sorted and reversed input linear. */
static double median3(double a, double b, double c)
{
	if (a > b)
		swap_d(&a, &b);
	if (b > c)
		swap_d(&b, &c);
	if (a > b)
		swap_d(&a, &b);
	return b;
}

double vt_stat_select(double *v, size_t n, size_t k)
{
	ssize_t lo = 0, hi = (ssize_t)n - 1, want = (ssize_t)k;

	while (lo < hi) {
		double pivot = median3(v[lo], v[lo + (hi - lo) / 2], v[hi]);
		ssize_t i = lo, j = hi;

		/* Hoare partition: the pivot is one of the values, so both scans stop in range. */
		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j)
				swap_d(&v[i++], &v[j--]);
		}
		if (want <= j)
			hi = j;
		else if (want >= i)
			lo = i;
		else
			return v[want];    /* between the partitions: equal to the pivot */
	}
	return v[want];
}

double vt_stat_min(const double *v, size_t n)
{
	double m = INFINITY;
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i] < m)
			m = v[i];
	return n ? m : NAN;
}

double vt_stat_max(const double *v, size_t n)
{
	double m = -INFINITY;
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i] > m)
			m = v[i];
	return n ? m : NAN;
}

double vt_stat_quantile(double *v, size_t n, double q)
{
	double h, lo;
	size_t k;

	if (n == 0)
		return NAN;
	q = q < 0 ? 0 : q > 1 ? 1 : q;
	h = q * (double)(n - 1);
	k = (size_t)h;
	if (k >= n - 1)
		return vt_stat_max(v, n);
	lo = vt_stat_select(v, n, k);
	if (h == (double)k)
		return lo;
	/* After selection everything above index k is >= v[k]: its minimum is order statistic k+1. */
	return lo + (h - (double)k) * (vt_stat_min(v + k + 1, n - k - 1) - lo);
}

double vt_stat_median(double *v, size_t n)
{
	return vt_stat_quantile(v, n, 0.5);
}

double vt_stat_robust_sd(double *v, size_t n)
{
	double med, mad, sum = 0;
	size_t i, inner;

	if (n < 2)
		return 0;
	med = vt_stat_median(v, n);
	for (i = 0; i < n; i++)
		v[i] = fabs(v[i] - med);
	mad = vt_stat_median(v, n);
	if (mad > 0)
		return VT_MAD_TO_SD * mad;
	/* Ties: mean absolute deviation of the inner 90%, so that a few steps
	 * (which belong to the signal, not the noise) do not count. */
	inner = n - n / 10;
	vt_stat_select(v, n, inner - 1);
	for (i = 0; i < inner; i++)
		sum += v[i];
	return sqrt(M_PI / 2) * sum / (double)inner;
}

static int cmp_wval(const void *a, const void *b)
{
	double x = ((const struct vt_wval *)a)->v, y = ((const struct vt_wval *)b)->v;

	return (x > y) - (x < y);
}

double vt_stat_wquantile(struct vt_wval *a, size_t n, double q)
{
	double total = 0, cum = 0, want;
	size_t i;

	for (i = 0; i < n; i++)
		total += a[i].w;
	if (n == 0 || !(total > 0))
		return NAN;
	qsort(a, n, sizeof(*a), cmp_wval);
	want = q * total;
	for (i = 0; i < n; i++) {
		cum += a[i].w;
		if (cum >= want && a[i].w > 0)
			return a[i].v;
	}
	return a[n - 1].v;
}

int vt_stat_theil_sen(const double *x, const double *y, size_t n, double z, struct vt_fit *fit)
{
	size_t i, j, npairs = 0;
	double *slopes, c, m1, m2;

	fit->n = n;
	fit->slope = fit->lo = fit->hi = fit->intercept = NAN;
	if (n < 2)
		return 0;
	slopes = malloc(sizeof(*slopes) * (n * (n - 1) / 2));
	if (!slopes)
		return -1;
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (x[j] > x[i])
				slopes[npairs++] = (y[j] - y[i]) / (x[j] - x[i]);
	if (npairs == 0) {
		free(slopes);
		return 0;
	}
	fit->slope = vt_stat_median(slopes, npairs);

	/* Sen's ranks, 1-based: lower limit rank floor(M1), upper ceil(M2) + 1. */
	c = z * sqrt((double)n * (double)(n - 1) * (double)(2 * n + 5) / 18.0);
	m1 = floor(((double)npairs - c) / 2);
	m2 = ceil(((double)npairs + c) / 2) + 1;
	fit->lo = m1 >= 1 ? vt_stat_select(slopes, npairs, (size_t)m1 - 1) : -INFINITY;
	fit->hi = m2 <= (double)npairs ? vt_stat_select(slopes, npairs, (size_t)m2 - 1) : INFINITY;

	/* Reuse the buffer (it holds at least n values when n >= 3; n == 2 has one pair). */
	if (n * (n - 1) / 2 >= n) {
		for (i = 0; i < n; i++)
			slopes[i] = y[i] - fit->slope * x[i];
		fit->intercept = vt_stat_median(slopes, n);
	} else {
		fit->intercept = (y[0] + y[1]) / 2 - fit->slope * (x[0] + x[1]) / 2;
	}
	free(slopes);
	return 0;
}

/*
 * compare.c — the A/B table (see compare.h): each arm summarised over the
 * window its verdict trusts, every arm set against arm 0.
 *
 * The window is the settled window when the arm's verdict is a plateau or
 * a step (after the step); otherwise the last half of its span, and the
 * table says the arm never settled.  A cell is the count-weighted median of
 * the point means in the window, its range the 5th percentile of the
 * points' lows to the 95th of their highs, and its noise the robust sd of
 * the point means around that median (how much the figure itself moves in
 * the window, oscillation included).
 *
 * A difference is within noise when |delta| <= 2 sqrt(noise_a^2 + noise_b^2)
 * and the two ranges overlap: the difference of two medians is not
 * established while it is inside the combined scatter of the two figures,
 * and ranges that do not even touch mean the arms differ whatever the
 * scatter says.  Both must hold; either failing is a real difference.
 * Under both, a difference smaller than what analyze counts as a change
 * (vt_soak_change_floor: 0.5% of the level, at least 1 MiB, 0.01 cores)
 * is within noise: two arms with no scatter at all are not 12 KiB apart
 * for real.  CPU's figure is the mean rate over the window, so its noise
 * is the scatter of the rates between points over sqrt(their number): the
 * scatter itself called a 14% change noise.
 */
#include "analyze/compare.h"

#include "analyze/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RANGE_Q 0.05
#define NOISE_K 2.0             /* within noise: |delta| <= NOISE_K combined sds */

/* Scratch for one arm's window; compare_arm owns it. */
struct scratch {
	double *lo, *hi, *mean;
	struct vt_wval *wv;
};

static int scratch_alloc(struct scratch *sc, size_t n)
{
	size_t cap = n ? n : 1;

	sc->lo = malloc(sizeof(double) * cap * 3);
	sc->wv = malloc(sizeof(*sc->wv) * cap);
	if (!sc->lo || !sc->wv)
		return -1;
	sc->hi = sc->lo + cap;
	sc->mean = sc->hi + cap;
	return 0;
}

static void scratch_free(struct scratch *sc)
{
	free(sc->lo);
	free(sc->wv);
}

static void cell_unknown(struct vt_cmp_cell *c)
{
	*c = (struct vt_cmp_cell){ false, NAN, NAN, NAN, NAN };
}

/* Fill a cell from n gathered points (lo, hi, mean and wv already set). */
static void cell_from(struct scratch *sc, size_t n, struct vt_cmp_cell *c)
{
	if (n == 0) {
		cell_unknown(c);
		return;
	}
	c->known = true;
	c->median = vt_stat_wquantile(sc->wv, n, 0.5);
	c->lo = vt_stat_quantile(sc->lo, n, RANGE_Q);
	c->hi = vt_stat_quantile(sc->hi, n, 1 - RANGE_Q);
	/* robust_sd works around its own median; the means are reordered, not needed after */
	c->noise = vt_stat_robust_sd(sc->mean, n);
}

static double weight(const struct vt_series *s, size_t i)
{
	return s->count[i] ? s->count[i] : 1;
}

static void metric_cell(const struct vt_series *s, enum vt_metric m, size_t a, size_t b,
			struct scratch *sc, struct vt_cmp_cell *c)
{
	const struct vt_stat *st = s->m[m];
	size_t i, n = 0;

	for (i = a; st && i < b; i++) {
		if (isnan(st[i].mean))
			continue;
		sc->mean[n] = st[i].mean;
		sc->lo[n] = isnan(st[i].lo) ? st[i].mean : st[i].lo;
		sc->hi[n] = isnan(st[i].hi) ? st[i].mean : st[i].hi;
		sc->wv[n] = (struct vt_wval){ st[i].mean, weight(s, i) };
		n++;
	}
	cell_from(sc, n, c);
}

/* live / allocator total per point (means: a ratio of lows is no point's ratio). */
static void live_fraction_cell(const struct vt_series *s, size_t a, size_t b, struct scratch *sc,
			       struct vt_cmp_cell *c)
{
	const struct vt_stat *live = s->m[VT_M_HEAP_LIVE], *total = s->m[VT_M_HEAP_TOTAL];
	size_t i, n = 0;

	for (i = a; live && total && i < b; i++) {
		double f;

		if (isnan(live[i].mean) || !(total[i].mean > 0))
			continue;
		f = live[i].mean / total[i].mean;
		sc->mean[n] = sc->lo[n] = sc->hi[n] = f;
		sc->wv[n] = (struct vt_wval){ f, weight(s, i) };
		n++;
	}
	cell_from(sc, n, c);
}

/* user + system CPU seconds of point i at its first (lo) or last (hi) sample. */
static double cpu_at(const struct vt_series *s, size_t i, bool last)
{
	const struct vt_stat *u = &s->m[VT_M_CPU_USER_S][i], *k = &s->m[VT_M_CPU_SYS_S][i];

	return last ? u->hi + k->hi : u->lo + k->lo;
}

/*
 * Cores over the window: the counters' delta from the first sample to the
 * last over the time between them.  Range and noise from the rate between
 * consecutive points (their first samples), which is what moves.
 */
static void cpu_cell(const struct vt_series *s, size_t a, size_t b, struct scratch *sc,
		     struct vt_cmp_cell *c)
{
	size_t i, first = b, last = b, n = 0;
	double prev_t = NAN, prev_v = NAN, d;

	cell_unknown(c);
	if (!s->m[VT_M_CPU_USER_S] || !s->m[VT_M_CPU_SYS_S])
		return;
	for (i = a; i < b; i++) {
		double v0 = cpu_at(s, i, false);

		if (isnan(v0) || isnan(cpu_at(s, i, true)))
			continue;
		if (first == b)
			first = i;
		last = i;
		if (!isnan(prev_v) && s->t0[i] > prev_t && v0 >= prev_v) {
			double r = (v0 - prev_v) / (s->t0[i] - prev_t);

			sc->mean[n] = sc->lo[n] = sc->hi[n] = r;
			sc->wv[n] = (struct vt_wval){ r, 1 };
			n++;
		}
		prev_t = s->t0[i];
		prev_v = v0;
	}
	if (first == b || !(s->t1[last] > s->t0[first]))
		return;
	d = cpu_at(s, last, true) - cpu_at(s, first, false);
	if (d < 0)
		return;     /* a counter that went backwards: no figure rather than a wrong one */
	cell_from(sc, n, c);
	c->known = true;
	c->median = d / (s->t1[last] - s->t0[first]);
	if (n == 0) {
		c->lo = c->hi = c->median;
		c->noise = 0;
	} else {
		c->noise /= sqrt((double)n);   /* the mean of n rates, not one of them */
	}
}

/* Where an arm is summarised: where its level holds, else the last half of the span. */
static void arm_window(const struct vt_series *s, struct vt_cmp_arm *arm, size_t *a, size_t *b)
{
	size_t i;

	arm->window_settled = vt_soak_settled_window(s, &arm->verdict, a, b);
	arm->window_t0 = *a < *b ? s->t0[*a] : NAN;
	arm->window_t1 = *a < *b ? s->t1[*b - 1] : NAN;
	arm->window_samples = 0;
	for (i = *a; i < *b; i++)
		arm->window_samples += s->count[i];
}

int vt_cmp_cells(const struct vt_series *s, size_t a, size_t b, struct vt_cmp_cell cell[VT_M_COUNT])
{
	struct scratch sc = { 0 };
	int m, rc = -1;

	if (b > s->n)
		b = s->n;
	if (scratch_alloc(&sc, b > a ? b - a : 0))
		goto out;
	for (m = 0; m < VT_M_COUNT; m++) {
		if (!(vt_metrics[m].flags & VT_MF_COMPARE))
			cell_unknown(&cell[m]);
		else if (m == VT_M_LIVE_FRACTION)
			live_fraction_cell(s, a, b, &sc, &cell[m]);
		else if (m == VT_M_CPU_CORES)
			cpu_cell(s, a, b, &sc, &cell[m]);
		else
			metric_cell(s, (enum vt_metric)m, a, b, &sc, &cell[m]);
	}
	rc = 0;
out:
	scratch_free(&sc);
	return rc;
}

/* The trims the soak made in the arm (experiment --trim-every), and those inside its window. */
static void count_trims(const struct vt_series *s, struct vt_cmp_arm *arm)
{
	size_t i;

	arm->trims = arm->window_trims = 0;
	for (i = 0; i < s->nevents; i++) {
		if (s->events[i].kind != VT_EV_TRIM)
			continue;
		arm->trims++;
		if (s->events[i].t >= arm->window_t0 && s->events[i].t <= arm->window_t1)
			arm->window_trims++;
	}
}

bool vt_cmp_arm_trimmed(const struct vt_cmp_arm *arm)
{
	return arm->trims >= VT_CMP_PERIODIC_TRIMS && arm->window_trims >= 1;
}

/* A memory row of an arm trimmed periodically swings between trims: no noise judgement. */
static void judge_trimmed(const struct vt_comparison *c, size_t i, enum vt_metric m, struct vt_cmp_diff *d)
{
	if (!d->known || vt_metrics[m].unit != VT_UNIT_BYTES ||
	    fabs(d->delta) < vt_soak_change_floor(m, c->arms[0].cell[m].median))
		return;
	if (!vt_cmp_arm_trimmed(&c->arms[0]) && !vt_cmp_arm_trimmed(&c->arms[i]))
		return;
	d->trimmed = true;
	d->within_noise = false;
}

static int compare_arm(const struct vt_series *s, const char *name, const struct vt_soak_opts *o,
		       struct vt_cmp_arm *arm)
{
	size_t a, b;

	arm->name = name;
	arm->series = s;
	if (vt_soak_analyze(s, o, &arm->verdict))
		return -1;
	arm_window(s, arm, &a, &b);
	count_trims(s, arm);
	vt_mem_limit_recommend(s, &arm->verdict, &arm->limit);
	return vt_cmp_cells(s, a, b, arm->cell);
}

void vt_cmp_diff_cells(enum vt_metric m, const struct vt_cmp_cell *base, const struct vt_cmp_cell *c,
		       struct vt_cmp_diff *d)
{
	double spread;

	*d = (struct vt_cmp_diff){ false, NAN, NAN, false, false };
	if (!base->known || !c->known)
		return;
	d->known = true;
	d->delta = c->median - base->median;
	d->pct = base->median != 0 ? d->delta / base->median * 100 : NAN;
	spread = NOISE_K * sqrt(base->noise * base->noise + c->noise * c->noise);
	d->within_noise = (fabs(d->delta) <= spread && base->lo <= c->hi && c->lo <= base->hi) ||
			  fabs(d->delta) < vt_soak_change_floor(m, base->median);
}

/*
 * The program a recording's target names: the first word after "-- " (a
 * command vitals started), or the name after "--name "; NULL when the
 * target was a pid or a pidfile, which names no program.  An experiment's
 * arms run one command, "{arm}" in its arguments aside: only the program
 * is compared.
 */
static const char *program_of(const char *target, size_t *len)
{
	const char *p;

	if (!strncmp(target, "-- ", 3))
		p = target + 3;
	else if (!strncmp(target, "--name ", 7))
		p = target + 7;
	else
		return NULL;
	*len = strcspn(p, " ");
	/* its base name: ./srv and /opt/app/srv are one program */
	for (size_t i = *len; i > 0; i--)
		if (p[i - 1] == '/') {
			*len -= i;
			p += i;
			break;
		}
	return *len ? p : NULL;
}

static size_t other_command(const struct vt_series *const *series, size_t n)
{
	size_t i, len0, len;
	const char *p0 = n ? program_of(series[0]->info.target, &len0) : NULL, *p;

	for (i = 1; p0 && i < n; i++)
		if ((p = program_of(series[i]->info.target, &len)) && (len != len0 || memcmp(p, p0, len)))
			return i;
	return 0;
}

int vt_compare(const struct vt_series *const *series, const char *const *names, size_t n,
	       const struct vt_soak_opts *opts, struct vt_comparison *out)
{
	size_t i, f;

	memset(out, 0, sizeof(*out));
	if (n == 0)
		return 0;
	out->arms = calloc(n, sizeof(*out->arms));
	out->diff = calloc(n, sizeof(*out->diff));
	if (!out->arms || !out->diff)
		goto fail;
	out->narms = n;
	for (i = 0; i < n; i++)
		if (compare_arm(series[i], names ? names[i] : NULL, opts, &out->arms[i]))
			goto fail;
	for (f = 0; f < VT_M_COUNT; f++)
		out->diff[0][f] = (struct vt_cmp_diff){ false, NAN, NAN, false, false };
	for (i = 1; i < n; i++)
		for (f = 0; f < VT_M_COUNT; f++) {
			vt_cmp_diff_cells((enum vt_metric)f, &out->arms[0].cell[f], &out->arms[i].cell[f],
				     &out->diff[i][f]);
			judge_trimmed(out, i, (enum vt_metric)f, &out->diff[i][f]);
		}
	out->other_command = other_command(series, n);
	return 0;
fail:
	vt_comparison_free(out);
	return -1;
}

void vt_comparison_free(struct vt_comparison *c)
{
	if (!c)
		return;
	free(c->arms);
	free(c->diff);
	memset(c, 0, sizeof(*c));
}

bool vt_cmp_row_recorded(const struct vt_comparison *c, enum vt_metric m)
{
	size_t i;

	if ((unsigned)m >= VT_M_COUNT || !(vt_metrics[m].flags & VT_MF_COMPARE))
		return false;
	for (i = 0; i < c->narms; i++)
		if (c->arms[i].cell[m].known)
			return true;
	return false;
}

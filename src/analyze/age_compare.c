/*
 * age_compare.c — incarnations side by side at matched age (see
 * age_compare.h): their arms, the windows of the ages they share, and
 * compare's cells and diffs on each.  Reads series, never /proc or a file.
 *
 * A point belongs to the window its age falls in, the age of a point being
 * its mean sample time less its process's start: windows are half-open
 * (age_from, age], the first closed [age_from, age], so a point on the
 * border of two tiled windows is counted once.
 */
#include "analyze/age_compare.h"

#include "base/units.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EPS 1e-9

static double age_of(const struct vt_age_arm *a, size_t i)
{
	return a->series->t[i] - a->started_t;
}

/* Did the process of points [from, to) exit within the recording? */
static bool exited(const struct vt_series *s, size_t to, pid_t pid)
{
	size_t i;

	if (to < s->n)
		return true;      /* another incarnation follows it */
	for (i = 0; i < s->nevents; i++)
		if (s->events[i].kind == VT_EV_EXIT && s->events[i].pid == pid)
			return true;
	return false;
}

int vt_age_arms_add(const struct vt_series *s, const char *label, struct vt_age_arm **arms, size_t *n)
{
	size_t from = 0, to, i;

	while (from < s->n) {
		const struct vt_process_start *ps;
		struct vt_age_arm *grown, *a;

		for (to = from + 1; to < s->n && s->incarnation[to] == s->incarnation[from]; to++)
			;
		grown = realloc(*arms, sizeof(**arms) * (*n + 1));
		if (!grown)
			return -1;
		*arms = grown;
		a = &grown[*n];
		memset(a, 0, sizeof(*a));
		if (label && *label)
			snprintf(a->name, sizeof(a->name), "%.50s #%u", label, (unsigned)s->incarnation[from] + 1);
		else
			snprintf(a->name, sizeof(a->name), "#%u", (unsigned)s->incarnation[from] + 1);
		a->series = s;
		a->incarnation = s->incarnation[from];
		a->from = from;
		a->to = to;
		a->pid = s->pid[from];
		ps = vt_series_start_of(s, from);
		a->start_recorded = ps != NULL;
		a->started_t = ps ? ps->started_t : s->t0[from];
		a->started_wall = ps ? ps->started_wall : s->wall[from];
		a->age_first = age_of(a, from);
		a->age_last = age_of(a, to - 1);
		for (i = from; i < to; i++)
			a->samples += s->count[i];
		a->exited = exited(s, to, a->pid);
		(*n)++;
		from = to;
	}
	return 0;
}

size_t vt_age_windows_plan(double from, double to, double width_s, double min_width_s,
			   double ends[VT_AGE_WINDOWS_MAX], double *width, bool *clamped)
{
	double span = to - from, w;
	size_t k, n;

	*width = 0;
	*clamped = false;
	if (!(span > 0) || !isfinite(span))
		return 0;
	if (width_s > 0) {
		w = width_s;
		if (w > span) {
			w = span;
			*clamped = true;
		}
	} else {
		w = span / VT_AGE_WINDOWS_MAX;
		if (w < min_width_s)
			w = fmin(min_width_s, span);
	}
	n = (size_t)floor(span / w + EPS);
	if (n < 1)
		n = 1;
	if (n > VT_AGE_WINDOWS_MAX)
		n = VT_AGE_WINDOWS_MAX;
	for (k = 0; k < n; k++)
		ends[k] = n == 1 ? to : from + w + (span - w) * (double)k / (double)(n - 1);
	ends[n - 1] = to;     /* exactly, whatever the rounding */
	*width = w;
	return n;
}

/* Seconds between an arm's points (its sampling interval, or its points' width). */
static double spacing(const struct vt_age_arm *a)
{
	const struct vt_series *s = a->series;

	if (a->to - a->from > 1)
		return (s->t[a->to - 1] - s->t[a->from]) / (double)(a->to - a->from - 1);
	return s->info.every_s > 0 ? s->info.every_s : 1;
}

/* "#1 t+0 s–2.0 min, #2 t+3.0 h–3.1 h" */
static void spans_text(const struct vt_age_arm *arms, size_t n, char *buf, size_t cap)
{
	char a[32], b[32];
	size_t i, len = 0;

	buf[0] = '\0';
	for (i = 0; i < n && len < cap; i++)
		len += (size_t)snprintf(buf + len, cap - len, "%s%s (pid %d) t+%s–%s", i ? ", " : "", arms[i].name,
					(int)arms[i].pid, vt_fmt_span(arms[i].age_first, a, sizeof(a)),
					vt_fmt_span(arms[i].age_last, b, sizeof(b)));
}

/* The points of arm a whose age is in (lo, hi], or [lo, hi] when closed: [*i0, *i1). */
static void points_in(const struct vt_age_arm *a, double lo, double hi, bool closed, size_t *i0, size_t *i1)
{
	size_t i = a->from;

	while (i < a->to && (closed ? age_of(a, i) < lo - EPS : age_of(a, i) <= lo + EPS))
		i++;
	*i0 = i;
	while (i < a->to && age_of(a, i) <= hi + EPS)
		i++;
	*i1 = i;
}

static int fill_window(const struct vt_age_comparison *c, struct vt_age_window *w, bool first)
{
	struct vt_comparison *cmp = &w->cmp;
	size_t i, k, f;

	cmp->arms = calloc(c->narms, sizeof(*cmp->arms));
	cmp->diff = calloc(c->narms, sizeof(*cmp->diff));
	if (!cmp->arms || !cmp->diff)
		return -1;
	cmp->narms = c->narms;
	for (i = 0; i < c->narms; i++) {
		const struct vt_age_arm *a = &c->arms[i];
		struct vt_cmp_arm *ca = &cmp->arms[i];
		size_t p0, p1;

		points_in(a, w->age_from, w->age, first, &p0, &p1);
		ca->name = a->name;
		ca->series = a->series;
		ca->verdict.metric = c->metric;
		ca->window_settled = false;
		ca->window_t0 = p0 < p1 ? a->series->t0[p0] : NAN;
		ca->window_t1 = p0 < p1 ? a->series->t1[p1 - 1] : NAN;
		for (k = p0; k < p1; k++)
			ca->window_samples += a->series->count[k];
		if (vt_cmp_cells(a->series, p0, p1, ca->cell))
			return -1;
	}
	for (f = 0; f < VT_M_COUNT; f++)
		cmp->diff[0][f] = (struct vt_cmp_diff){ false, NAN, NAN, false };
	for (i = 1; i < c->narms; i++)
		for (f = 0; f < VT_M_COUNT; f++)
			vt_cmp_diff_cells((enum vt_metric)f, &cmp->arms[0].cell[f], &cmp->arms[i].cell[f],
					  &cmp->diff[i][f]);
	return 0;
}

int vt_age_compare(const struct vt_age_arm *arms, size_t n, double width_s, enum vt_metric metric,
		   struct vt_age_comparison *out, struct vt_err *err)
{
	double ends[VT_AGE_WINDOWS_MAX], min_width = 0;
	char spans[640], a[32], b[32], m[32];
	size_t i, k;

	memset(out, 0, sizeof(*out));
	if (n < 2)
		return vt_err_set(err, VT_E_NOCOMPARE, 0, "%s", n ? "one incarnation: nothing to set against it at matched age"
							      : "no incarnation to compare");
	for (i = 0; i < n; i++)
		if (arms[i].to <= arms[i].from)
			return vt_err_set(err, VT_E_NOCOMPARE, 0, "%s holds no samples", arms[i].name);
	out->arms = malloc(sizeof(*out->arms) * n);
	if (!out->arms)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
	memcpy(out->arms, arms, sizeof(*out->arms) * n);
	out->narms = n;
	out->metric = metric;
	out->common_from = -INFINITY;
	out->common_to = INFINITY;
	for (i = 0; i < n; i++) {
		if (arms[i].age_first > out->common_from) {
			out->common_from = arms[i].age_first;
			out->starts_from = i;
		}
		if (arms[i].age_last < out->common_to) {
			out->common_to = arms[i].age_last;
			out->ends_with = i;
		}
		if (2 * spacing(&arms[i]) > min_width)
			min_width = 2 * spacing(&arms[i]);
	}
	spans_text(arms, n, spans, sizeof(spans));
	if (!(out->common_to > out->common_from)) {
		vt_err_set(err, VT_E_NOCOMPARE, 0, "the incarnations' ages since their start do not overlap: %s", spans);
		for (i = 0; i < n && arms[i].start_recorded; i++)
			;
		vt_err_hint(err, i < n ? "--incarnations picks which to compare; an incarnation whose start was not "
				   "recorded (a recording before schema 7) counts its age from its first sample"
				 : "--incarnations picks which to compare");
		vt_age_comparison_free(out);
		return VT_E_NOCOMPARE;
	}
	if (out->common_to - out->common_from < min_width) {
		vt_err_set(err, VT_E_NOCOMPARE, 0, "the ages the incarnations share, t+%s–%s, are shorter than two "
			   "sampling intervals (%s): %s", vt_fmt_span(out->common_from, a, sizeof(a)),
			   vt_fmt_span(out->common_to, b, sizeof(b)), vt_fmt_span(min_width, m, sizeof(m)), spans);
		vt_age_comparison_free(out);
		return VT_E_NOCOMPARE;
	}
	out->nwindows = vt_age_windows_plan(out->common_from, out->common_to, width_s, min_width, ends,
					    &out->width_s, &out->width_clamped);
	out->windows = calloc(out->nwindows ? out->nwindows : 1, sizeof(*out->windows));
	if (!out->windows)
		goto nomem;
	for (k = 0; k < out->nwindows; k++) {
		out->windows[k].age = ends[k];
		out->windows[k].age_from = ends[k] - out->width_s;
		if (fill_window(out, &out->windows[k], k == 0))
			goto nomem;
	}
	return VT_OK;
nomem:
	vt_age_comparison_free(out);
	return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory comparing incarnations");
}

void vt_age_comparison_free(struct vt_age_comparison *c)
{
	size_t k;

	if (!c)
		return;
	for (k = 0; c->windows && k < c->nwindows; k++)
		vt_comparison_free(&c->windows[k].cmp);
	free(c->windows);
	free(c->arms);
	memset(c, 0, sizeof(*c));
}

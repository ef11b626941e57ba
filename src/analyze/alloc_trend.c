/*
 * alloc_trend.c — allocation sites pooled over a recording, and two
 * recordings' sites side by side (see alloc_trend.h).
 */
#include "analyze/alloc_trend.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"

static struct vt_alloc_trend_site *find_site(struct vt_alloc_trend *t, const char *name, const char *module)
{
	for (size_t i = 0; i < t->nsites; i++)
		if (strcmp(t->sites[i].name, name) == 0 && strcmp(t->sites[i].module, module) == 0)
			return &t->sites[i];
	return NULL;
}

static double rate(uint64_t n, double s)
{
	return s > 0 ? (double)n / s : 0;
}

static int by_bytes_per_s(const void *x, const void *y)
{
	const struct vt_alloc_trend_site *a = x, *b = y;

	return a->bytes_per_s < b->bytes_per_s ? 1 : a->bytes_per_s > b->bytes_per_s ? -1 : strcmp(a->name, b->name);
}

/* Add look l's sites to t's; each one's bytes/s in l into first or last when l is that one. */
static int pool_look(struct vt_alloc_trend *t, const struct vt_alloc_look *l, bool first, bool last,
		     size_t *cap, struct vt_err *err)
{
	for (size_t i = 0; i < l->nsites; i++) {
		const struct vt_alloc_look_site *ls = &l->sites[i];
		struct vt_alloc_trend_site *s = find_site(t, ls->name, ls->module);

		if (!s) {
			if (t->nsites == *cap) {
				size_t n = *cap ? 2 * *cap : 64;
				void *grown = realloc(t->sites, n * sizeof(*t->sites));

				if (!grown)
					return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
				t->sites = grown;
				*cap = n;
			}
			s = &t->sites[t->nsites++];
			memset(s, 0, sizeof(*s));
			snprintf(s->name, sizeof(s->name), "%s", ls->name);
			snprintf(s->module, sizeof(s->module), "%s", ls->module);
		}
		s->calls += ls->calls;
		s->bytes += ls->bytes;
		s->linked += ls->linked;
		s->freed += ls->freed;
		s->freed_bytes += ls->freed_bytes;
		s->freed_1ms += ls->freed_1ms;
		s->live_bytes += ls->live_bytes;
		s->looks++;
		if (first)
			s->first_bytes_per_s = rate(ls->bytes, l->armed_s);
		if (last)
			s->last_bytes_per_s = rate(ls->bytes, l->armed_s);
	}
	return VT_OK;
}

int vt_alloc_trend_from(struct vt_alloc_looks *looks, struct vt_alloc_trend *out, struct vt_err *err)
{
	size_t cap = 0;
	int rc = VT_OK;

	memset(out, 0, sizeof(*out));
	out->looks = *looks;
	memset(looks, 0, sizeof(*looks));
	out->slowdown_max = NAN;
	snprintf(out->why, sizeof(out->why), "%s", out->looks.why);
	for (size_t i = 0; rc == VT_OK && i < out->looks.n; i++) {
		const struct vt_alloc_look *l = &out->looks.v[i];

		out->armed_s += l->armed_s;
		out->duration_s += l->duration_s;
		out->calls += l->calls;
		out->bytes += l->bytes;
		out->lost += l->lost;
		if (isfinite(l->slowdown) && !(l->slowdown <= out->slowdown_max))
			out->slowdown_max = l->slowdown;
		rc = pool_look(out, l, i == 0, i + 1 == out->looks.n, &cap, err);
	}
	for (size_t i = 0; i < out->nsites; i++) {
		struct vt_alloc_trend_site *s = &out->sites[i];

		s->calls_per_s = rate(s->calls, out->armed_s);
		s->bytes_per_s = rate(s->bytes, out->armed_s);
		s->churn_per_h = rate(s->freed_bytes, out->armed_s) * 3600;
	}
	if (out->nsites)
		qsort(out->sites, out->nsites, sizeof(*out->sites), by_bytes_per_s);
	if (rc == VT_OK && out->looks.n && out->armed_s <= 0) {
		snprintf(out->why, sizeof(out->why), "its %zu allocation profiles never had their probes armed",
			 out->looks.n);
	}
	return rc;
}

int vt_alloc_trend_load(const char *path, struct vt_alloc_trend *out, struct vt_err *err)
{
	struct vt_alloc_looks looks;
	int rc = vt_store_allocs_load(path, &looks, err);

	if (rc != VT_OK) {
		vt_alloc_looks_release(&looks);
		memset(out, 0, sizeof(*out));
		return rc;
	}
	return vt_alloc_trend_from(&looks, out, err);
}

void vt_alloc_trend_release(struct vt_alloc_trend *t)
{
	vt_alloc_looks_release(&t->looks);
	free(t->sites);
	t->sites = NULL;
	t->nsites = 0;
}

/* ---- two recordings ---- */

static double change_of(const struct vt_alloc_diff_row *r)
{
	return fabs(r->b_bytes_per_s - r->a_bytes_per_s);
}

static int by_change(const void *x, const void *y)
{
	double a = change_of(x), b = change_of(y);

	return a < b ? 1 : a > b ? -1 : strcmp(((const struct vt_alloc_diff_row *)x)->name,
					       ((const struct vt_alloc_diff_row *)y)->name);
}

/* Enough calls to judge: on the side that saw the site more. */
static bool judged(const struct vt_alloc_trend_site *a, const struct vt_alloc_trend_site *b)
{
	uint64_t ca = a ? a->calls : 0, cb = b ? b->calls : 0;

	return (ca > cb ? ca : cb) >= VT_ALLOC_DIFF_MIN_CALLS;
}

static void fill_row(struct vt_alloc_diff_row *r, const struct vt_alloc_trend_site *a,
		     const struct vt_alloc_trend_site *b)
{
	double hi;

	snprintf(r->name, sizeof(r->name), "%s", a ? a->name : b->name);
	r->a_bytes_per_s = a ? a->bytes_per_s : 0;
	r->b_bytes_per_s = b ? b->bytes_per_s : 0;
	r->a_churn_per_h = a ? a->churn_per_h : 0;
	r->b_churn_per_h = b ? b->churn_per_h : 0;
	r->a_calls_per_s = a ? a->calls_per_s : 0;
	r->b_calls_per_s = b ? b->calls_per_s : 0;
	hi = fmax(r->a_bytes_per_s, r->b_bytes_per_s);
	r->within_noise = !judged(a, b) || change_of(r) < VT_ALLOC_DIFF_NOISE * hi;
}

/* The headline: the judged site whose churn changed most. */
static void headline(struct vt_alloc_diff *d)
{
	const struct vt_alloc_diff_row *best = NULL;
	char x[32], y[32], z[32];

	for (size_t i = 0; i < d->nrows; i++) {
		const struct vt_alloc_diff_row *r = &d->rows[i];

		if (r->within_noise || fabs(r->b_churn_per_h - r->a_churn_per_h) <
					       VT_ALLOC_DIFF_NOISE * fmax(r->a_churn_per_h, r->b_churn_per_h))
			continue;
		if (!best || fabs(r->b_churn_per_h - r->a_churn_per_h) > fabs(best->b_churn_per_h - best->a_churn_per_h))
			best = r;
	}
	if (!best) {
		snprintf(d->headline, sizeof(d->headline), "no site's churn changed beyond %.0f%% (sites of fewer "
			 "than %d calls are not judged)", 100 * VT_ALLOC_DIFF_NOISE, VT_ALLOC_DIFF_MIN_CALLS);
		return;
	}
	vt_fmt_size(fabs(best->b_churn_per_h - best->a_churn_per_h), x, sizeof(x));
	vt_fmt_size(best->a_churn_per_h, y, sizeof(y));
	vt_fmt_size(best->b_churn_per_h, z, sizeof(z));
	snprintf(d->headline, sizeof(d->headline), "%s %s/h of churn %s %s (%s/h -> %s/h of armed time)",
		 best->b_churn_per_h < best->a_churn_per_h ? "the change removed" : "the change added", x,
		 best->b_churn_per_h < best->a_churn_per_h ? "from" : "to", best->name, y, z);
}

int vt_alloc_diff_sites(struct vt_alloc_diff *d, struct vt_err *err)
{
	d->why[0] = '\0';
	if (!d->a.looks.n || !d->b.looks.n || d->a.armed_s <= 0 || d->b.armed_s <= 0) {
		snprintf(d->why, sizeof(d->why), "%s", d->a.looks.n && d->a.armed_s > 0 ? d->b.why : d->a.why);
		return VT_OK;
	}
	d->rows = calloc(d->a.nsites + d->b.nsites + 1, sizeof(*d->rows));
	if (!d->rows)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
	for (size_t i = 0; i < d->a.nsites; i++) {
		const struct vt_alloc_trend_site *sa = &d->a.sites[i];

		fill_row(&d->rows[d->nrows++], sa, find_site(&d->b, sa->name, sa->module));
	}
	for (size_t i = 0; i < d->b.nsites; i++)
		if (!find_site(&d->a, d->b.sites[i].name, d->b.sites[i].module))
			fill_row(&d->rows[d->nrows++], NULL, &d->b.sites[i]);
	qsort(d->rows, d->nrows, sizeof(*d->rows), by_change);
	headline(d);
	return VT_OK;
}

int vt_alloc_diff_files(const char *a, const char *b, struct vt_alloc_diff *out, struct vt_err *err)
{
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = vt_alloc_trend_load(a, &out->a, err)) || (rc = vt_alloc_trend_load(b, &out->b, err)))
		return rc;
	return vt_alloc_diff_sites(out, err);
}

void vt_alloc_diff_release(struct vt_alloc_diff *d)
{
	vt_alloc_trend_release(&d->a);
	vt_alloc_trend_release(&d->b);
	free(d->rows);
	d->rows = NULL;
	d->nrows = 0;
}

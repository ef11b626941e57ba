/*
 * alloc_trend.c — stored allocation profiles over time and compared, as
 * text and JSON (see alloc_trend.h).
 */
#include "render/alloc_trend.h"

#include "base/units.h"
#include "render/json.h"
#include "render/svg_chart.h"
#include "render/table.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double per_s(uint64_t n, double s)
{
	return s > 0 ? (double)n / s : NAN;
}

static const char *rate_text(double bytes_per_s, char *buf, size_t cap)
{
	char size[32];

	if (isnan(bytes_per_s))
		return "n/a";
	snprintf(buf, cap, "%s/s", vt_fmt_size(bytes_per_s, size, sizeof(size)));
	return buf;
}

static const char *per_hour_text(double bytes_per_h, char *buf, size_t cap)
{
	char size[32];

	snprintf(buf, cap, "%s/h", vt_fmt_size(bytes_per_h, size, sizeof(size)));
	return buf;
}

/* Armed time is often under a second: milliseconds there. */
static const char *armed_text(double s, char *buf, size_t cap)
{
	if (s < 1)
		snprintf(buf, cap, "%.0f ms", 1000 * s);
	else
		vt_fmt_span(s, buf, cap);
	return buf;
}

static const struct vt_alloc_look_site *look_site(const struct vt_alloc_look *l, const struct vt_alloc_trend_site *s)
{
	for (size_t i = 0; i < l->nsites; i++)
		if (strcmp(l->sites[i].name, s->name) == 0 && strcmp(l->sites[i].module, s->module) == 0)
			return &l->sites[i];
	return NULL;
}

static uint64_t look_freed_bytes(const struct vt_alloc_look *l)
{
	uint64_t n = 0;

	for (size_t i = 0; i < l->nsites; i++)
		n += l->sites[i].freed_bytes;
	return n;
}

static void over_time(FILE *out, const struct vt_alloc_trend *t)
{
	size_t ncols = t->nsites < VT_ALLOC_TREND_COLUMNS ? t->nsites : VT_ALLOC_TREND_COLUMNS;
	struct vt_table tab;
	char a[48], b[48], name[64];

	vt_table_init(&tab, 6 + (int)ncols);
	for (int c = 1; c < 6 + (int)ncols; c++)
		vt_table_align(&tab, c, VT_RIGHT);
	vt_table_cell(&tab, "at");
	vt_table_cell(&tab, "pid");
	vt_table_cell(&tab, "armed");
	vt_table_cell(&tab, "calls/s");
	vt_table_cell(&tab, "bytes/s");
	vt_table_cell(&tab, "freed");
	for (size_t c = 0; c < ncols; c++)
		vt_table_cell(&tab, "%s", vt_text_printable(t->sites[c].name, name, sizeof(name)));
	for (size_t i = 0; i < t->looks.n; i++) {
		const struct vt_alloc_look *l = &t->looks.v[i];

		vt_table_cell(&tab, "%s%s", vt_fmt_span(l->t, a, sizeof(a)),
			      l->partial ? " (partial)" : l->exited ? " (exited)" : "");
		vt_table_cell(&tab, "%d", (int)l->pid);
		vt_table_cell(&tab, "%s", armed_text(l->armed_s, a, sizeof(a)));
		vt_table_cell(&tab, "%.0f", per_s(l->calls, l->armed_s));
		vt_table_cell(&tab, "%s", rate_text(per_s(l->bytes, l->armed_s), a, sizeof(a)));
		vt_table_cell(&tab, "%s", vt_fmt_pct(look_freed_bytes(l), l->bytes, b, sizeof(b)));
		for (size_t c = 0; c < ncols; c++) {
			const struct vt_alloc_look_site *s = look_site(l, &t->sites[c]);

			vt_table_cell(&tab, "%s", s ? rate_text(per_s(s->bytes, l->armed_s), a, sizeof(a)) : "-");
		}
	}
	vt_table_print(&tab, out, 2, true);
	vt_table_release(&tab);
}

static void pooled(FILE *out, const struct vt_alloc_trend *t)
{
	struct vt_table tab;
	char a[48], b[48], name[300];

	vt_table_init(&tab, 8);
	for (int c = 2; c < 8; c++)
		vt_table_align(&tab, c, VT_RIGHT);
	vt_table_cell(&tab, "site");
	vt_table_cell(&tab, "module");
	vt_table_cell(&tab, "bytes/s");
	vt_table_cell(&tab, "calls/s");
	vt_table_cell(&tab, "freed");
	vt_table_cell(&tab, "<=1ms");
	vt_table_cell(&tab, "churn");
	vt_table_cell(&tab, "first -> last");
	for (size_t i = 0; i < t->nsites && i < VT_ALLOC_TREND_SITES; i++) {
		const struct vt_alloc_trend_site *s = &t->sites[i];

		vt_table_cell(&tab, "%s", vt_text_printable(s->name, name, sizeof(name)));
		vt_table_cell(&tab, "%s", vt_text_printable(s->module, name, sizeof(name)));
		vt_table_cell(&tab, "%s", rate_text(s->bytes_per_s, a, sizeof(a)));
		vt_table_cell(&tab, "%.0f", s->calls_per_s);
		vt_table_cell(&tab, "%s", vt_fmt_pct(s->freed_bytes, s->bytes, a, sizeof(a)));
		vt_table_cell(&tab, "%s", vt_fmt_pct(s->freed_1ms, s->linked, a, sizeof(a)));
		vt_table_cell(&tab, "%s", per_hour_text(s->churn_per_h, a, sizeof(a)));
		rate_text(s->first_bytes_per_s, a, sizeof(a));
		vt_table_cell(&tab, "%s -> %s", a, rate_text(s->last_bytes_per_s, b, sizeof(b)));
	}
	vt_table_print(&tab, out, 2, true);
	vt_table_release(&tab);
	if (t->nsites > VT_ALLOC_TREND_SITES)
		fprintf(out, "  ... %zu more sites (--json lists them)\n", t->nsites - VT_ALLOC_TREND_SITES);
}

int vt_render_alloc_trend_text(FILE *out, const struct vt_alloc_trend *t)
{
	char a[48], b[48], c[48], name[300];

	if (!t || !t->looks.n)
		return 0;
	fprintf(out, "\nAllocation sites over time (%zu allocation profile%s, probes armed %s of %s; ",
		t->looks.n, t->looks.n == 1 ? "" : "s", armed_text(t->armed_s, a, sizeof(a)),
		vt_fmt_span(t->duration_s, b, sizeof(b)));
	if (isnan(t->slowdown_max))
		fputs("the slowdown not measured", out);
	else
		fprintf(out, "the target slowed by up to %.1f%%", 100 * t->slowdown_max);
	fputs("; rates per second of armed time)\n", out);
	if (t->armed_s <= 0) {
		fprintf(out, "  %s\n", t->why);
		return ferror(out) ? -1 : 0;
	}
	over_time(out, t);
	fputc('\n', out);
	pooled(out, t);
	if (t->nsites) {
		const struct vt_alloc_trend_site *s = &t->sites[0];

		fprintf(out, "  most bytes: %s, %s and %.0f calls/s while armed; %s of its bytes freed within their "
			"window (%s/h of churn)%s\n", vt_text_printable(s->name, name, sizeof(name)),
			rate_text(s->bytes_per_s, a, sizeof(a)), s->calls_per_s,
			vt_fmt_pct(s->freed_bytes, s->bytes, b, sizeof(b)),
			vt_fmt_size(s->churn_per_h, c, sizeof(c)),
			s->looks < t->looks.n ? " (not in every profile)" : "");
	}
	if (t->lost)
		fprintf(out, "  %llu probe records lost (the rings overflowed): the rates are low by that much\n",
			(unsigned long long)t->lost);
	return ferror(out) ? -1 : 0;
}

static json_t *look_site_json(const struct vt_alloc_look_site *s)
{
	return json_pack("{s:o s:o s:I s:I s:I s:I s:I s:I s:I s:I}", "name", vt_json_text(s->name), "module",
			 vt_json_text(s->module), "calls", (json_int_t)s->calls, "bytes", (json_int_t)s->bytes,
			 "linked", (json_int_t)s->linked, "freed", (json_int_t)s->freed, "freed_bytes",
			 (json_int_t)s->freed_bytes, "freed_1ms", (json_int_t)s->freed_1ms, "live",
			 (json_int_t)s->live, "live_bytes", (json_int_t)s->live_bytes);
}

static json_t *look_json(const struct vt_alloc_look *l)
{
	json_t *o = json_pack("{s:f s:o s:i s:b s:b s:o s:f s:f s:I s:o s:o s:o s:I s:I s:I s:I s:I s:o s:o s:I}",
			      "t", l->t, "wall", vt_json_real(l->wall), "pid", (int)l->pid, "partial", l->partial,
			      "exited", l->exited, "allocator", vt_json_text(l->allocator), "duration_s",
			      l->duration_s, "armed_s", l->armed_s, "windows", (json_int_t)l->windows, "window_s",
			      vt_json_real(l->window_s), "budget", vt_json_real(l->budget), "slowdown",
			      vt_json_real(l->slowdown), "hits", (json_int_t)l->hits, "calls", (json_int_t)l->calls,
			      "bytes", (json_int_t)l->bytes, "frees", (json_int_t)l->frees, "lost",
			      (json_int_t)l->lost, "calls_per_s", vt_json_real(per_s(l->calls, l->armed_s)),
			      "bytes_per_s", vt_json_real(per_s(l->bytes, l->armed_s)), "sites_total",
			      (json_int_t)l->sites_total);

	if (o && (json_object_set_new(o, "path", json_string(l->agent ? "agent" : "uprobes")) ||
		  json_object_set_new(o, "every", l->agent ? json_integer((json_int_t)l->every) : json_null()))) {
		json_decref(o);
		return NULL;
	}
	json_t *sites = json_array();

	for (size_t i = 0; o && sites && i < l->nsites; i++)
		if (json_array_append_new(sites, look_site_json(&l->sites[i])))
			break;
	if (!o || !sites || json_object_set_new(o, "sites", sites)) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *trend_site_json(const struct vt_alloc_trend_site *s)
{
	return json_pack("{s:o s:o s:I s:I s:I s:I s:I s:I s:f s:f s:f s:I s:f s:f}", "name", vt_json_text(s->name),
			 "module", vt_json_text(s->module), "calls", (json_int_t)s->calls, "bytes",
			 (json_int_t)s->bytes, "linked", (json_int_t)s->linked, "freed", (json_int_t)s->freed,
			 "freed_bytes", (json_int_t)s->freed_bytes, "freed_1ms", (json_int_t)s->freed_1ms,
			 "calls_per_s", s->calls_per_s, "bytes_per_s", s->bytes_per_s, "churn_per_h", s->churn_per_h,
			 "profiles", (json_int_t)s->looks, "first_bytes_per_s", s->first_bytes_per_s,
			 "last_bytes_per_s", s->last_bytes_per_s);
}

json_t *vt_render_alloc_trend_json(const struct vt_alloc_trend *t)
{
	json_t *o = json_object(), *looks = json_array(), *sites = json_array();
	bool ok = o && looks && sites;

	for (size_t i = 0; ok && i < t->looks.n; i++)
		ok = json_array_append_new(looks, look_json(&t->looks.v[i])) == 0;
	for (size_t i = 0; ok && i < t->nsites; i++)
		ok = json_array_append_new(sites, trend_site_json(&t->sites[i])) == 0;
	if (ok && json_object_set_new(o, "count", json_integer((json_int_t)t->looks.n)) == 0 &&
	    json_object_set_new(o, "why", t->looks.n ? json_null() : vt_json_text(t->why)) == 0 &&
	    json_object_set_new(o, "armed_s", json_real(t->armed_s)) == 0 &&
	    json_object_set_new(o, "duration_s", json_real(t->duration_s)) == 0 &&
	    json_object_set_new(o, "slowdown_max", vt_json_real(t->slowdown_max)) == 0 &&
	    json_object_set_new(o, "lost", json_integer((json_int_t)t->lost)) == 0 &&
	    json_object_set_new(o, "profiles", looks) == 0 && json_object_set_new(o, "sites", sites) == 0)
		return o;
	json_decref(o);
	json_decref(looks);
	json_decref(sites);
	return NULL;
}

int vt_render_alloc_diff_text(FILE *out, const struct vt_alloc_diff *d, const char *a, const char *b)
{
	struct vt_table tab;
	char x[48], y[48], name[300];

	if (!d || (!d->a.looks.n && !d->b.looks.n))
		return 0;
	fprintf(out, "\nAllocation sites, %s against %s (%zu and %zu allocation profiles; per second of armed "
		"time)\n", b, a, d->b.looks.n, d->a.looks.n);
	if (d->why[0]) {
		fprintf(out, "  not compared: %s\n", d->why);
		return ferror(out) ? -1 : 0;
	}
	fprintf(out, "  %s\n", d->headline);
	vt_table_init(&tab, 7);
	for (int c = 1; c < 7; c++)
		vt_table_align(&tab, c, VT_RIGHT);
	vt_table_cell(&tab, "site");
	vt_table_cell(&tab, "%s bytes/s", a);
	vt_table_cell(&tab, "%s bytes/s", b);
	vt_table_cell(&tab, "change");
	vt_table_cell(&tab, "%s churn", a);
	vt_table_cell(&tab, "%s churn", b);
	vt_table_cell(&tab, "%s", "");
	for (size_t i = 0; i < d->nrows && i < VT_ALLOC_TREND_SITES; i++) {
		const struct vt_alloc_diff_row *r = &d->rows[i];

		vt_table_cell(&tab, "%s", vt_text_printable(r->name, name, sizeof(name)));
		vt_table_cell(&tab, "%s", rate_text(r->a_bytes_per_s, x, sizeof(x)));
		vt_table_cell(&tab, "%s", rate_text(r->b_bytes_per_s, x, sizeof(x)));
		if (r->a_bytes_per_s > 0)
			vt_table_cell(&tab, "%s", vt_fmt_pct_change(100 * (r->b_bytes_per_s / r->a_bytes_per_s - 1), x,
								    sizeof(x)));
		else
			vt_table_cell(&tab, "new");
		vt_table_cell(&tab, "%s", per_hour_text(r->a_churn_per_h, x, sizeof(x)));
		vt_table_cell(&tab, "%s", per_hour_text(r->b_churn_per_h, y, sizeof(y)));
		vt_table_cell(&tab, "%s", r->within_noise ? "within noise" : "");
	}
	vt_table_print(&tab, out, 2, true);
	vt_table_release(&tab);
	if (d->nrows > VT_ALLOC_TREND_SITES)
		fprintf(out, "  ... %zu more sites (--json lists them)\n", d->nrows - VT_ALLOC_TREND_SITES);
	return ferror(out) ? -1 : 0;
}

json_t *vt_render_alloc_diff_json(const struct vt_alloc_diff *d, const char *a, const char *b)
{
	json_t *o = json_object(), *rows = json_array();
	bool ok = o && rows;

	for (size_t i = 0; ok && i < d->nrows; i++) {
		const struct vt_alloc_diff_row *r = &d->rows[i];

		ok = json_array_append_new(rows, json_pack("{s:o s:f s:f s:f s:f s:f s:f s:b}", "name",
							   vt_json_text(r->name), "a_bytes_per_s", r->a_bytes_per_s,
							   "b_bytes_per_s", r->b_bytes_per_s, "a_churn_per_h",
							   r->a_churn_per_h, "b_churn_per_h", r->b_churn_per_h,
							   "a_calls_per_s", r->a_calls_per_s, "b_calls_per_s",
							   r->b_calls_per_s, "within_noise", r->within_noise)) == 0;
	}
	if (ok && json_object_set_new(o, "a", vt_json_text(a)) == 0 && json_object_set_new(o, "b", vt_json_text(b)) == 0 &&
	    json_object_set_new(o, "a_profiles", json_integer((json_int_t)d->a.looks.n)) == 0 &&
	    json_object_set_new(o, "b_profiles", json_integer((json_int_t)d->b.looks.n)) == 0 &&
	    json_object_set_new(o, "why", d->why[0] ? vt_json_text(d->why) : json_null()) == 0 &&
	    json_object_set_new(o, "headline", d->why[0] ? json_null() : vt_json_text(d->headline)) == 0 &&
	    json_object_set_new(o, "sites", rows) == 0)
		return o;
	json_decref(o);
	json_decref(rows);
	return NULL;
}

/* ---- HTML ---- */

/* Sites drawn as lines: the most bytes first. */
#define CHART_SITES 6

static int trend_chart(FILE *out, const struct vt_alloc_trend *t, double x_min, double x_max)
{
	size_t n = t->looks.n, nl = t->nsites < CHART_SITES ? t->nsites : CHART_SITES;
	struct vt_chart_line lines[CHART_SITES];
	double *x = calloc(n, sizeof(double)), *y = calloc(n * (nl ? nl : 1), sizeof(double));
	struct vt_chart c;
	int rc;

	if (!x || !y) {
		free(x);
		free(y);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		x[i] = t->looks.v[i].t;
	for (size_t k = 0; k < nl; k++) {
		double *yv = y + k * n;

		for (size_t i = 0; i < n; i++) {
			const struct vt_alloc_look *l = &t->looks.v[i];
			const struct vt_alloc_look_site *s = look_site(l, &t->sites[k]);

			yv[i] = l->armed_s > 0 ? (s ? (double)s->bytes / l->armed_s : 0) : NAN;
		}
		lines[k] = (struct vt_chart_line){ .label = t->sites[k].name, .color = vt_chart_palette[k % 8],
						   .x = x, .y = yv, .n = n, .dots = true };
	}
	memset(&c, 0, sizeof(c));
	c.id = "allocs";
	c.title = "allocation sites over time — bytes allocated per second of armed time, at each profile";
	c.x_title = "time since the soak began";
	c.y_unit = VT_CHART_BYTES;
	c.x_min = x_min;
	c.x_max = x_max;
	c.y_zero = true;
	c.lines = lines;
	c.nlines = nl;
	rc = vt_svg_chart(out, &c);
	free(x);
	free(y);
	return rc;
}

int vt_render_alloc_trend_html(FILE *out, const struct vt_alloc_trend *t, double x_min, double x_max)
{
	char a[48], b[48];
	int rc = 0;

	if (!t || !t->looks.n)
		return 0;
	fprintf(out, "<h2>allocation sites over time</h2>\n<p>%zu allocation profile%s (vitals soak "
		"--allocs-every), probes armed ", t->looks.n, t->looks.n == 1 ? "" : "s");
	vt_html_text(out, armed_text(t->armed_s, a, sizeof(a)));
	fputs(" of ", out);
	vt_html_text(out, vt_fmt_span(t->duration_s, b, sizeof(b)));
	if (isnan(t->slowdown_max))
		fputs("; the slowdown not measured", out);
	else
		fprintf(out, "; the target slowed by up to %.1f%%", 100 * t->slowdown_max);
	fputs(". Rates are per second of armed time, when the allocating code ran slower.</p>\n", out);
	if (t->armed_s <= 0) {
		fputs("<p>", out);
		vt_html_text(out, t->why);
		fputs("</p>\n", out);
		return ferror(out) ? -1 : 0;
	}
	rc = trend_chart(out, t, x_min, x_max);
	fputs("<table>\n<tr><th>site</th><th>module</th><th class=\"n\">bytes/s</th><th class=\"n\">calls/s</th>"
	      "<th class=\"n\">freed</th><th class=\"n\">&lt;=1ms</th><th class=\"n\">churn</th>"
	      "<th class=\"n\">first &rarr; last</th></tr>\n", out);
	for (size_t i = 0; i < t->nsites && i < VT_ALLOC_TREND_SITES; i++) {
		const struct vt_alloc_trend_site *s = &t->sites[i];
		char cell[128];

		fputs("<tr>", out);
		vt_html_td(out, false, s->name);
		vt_html_td(out, false, s->module);
		vt_html_td(out, true, rate_text(s->bytes_per_s, a, sizeof(a)));
		snprintf(cell, sizeof(cell), "%.0f", s->calls_per_s);
		vt_html_td(out, true, cell);
		vt_html_td(out, true, vt_fmt_pct(s->freed_bytes, s->bytes, a, sizeof(a)));
		vt_html_td(out, true, vt_fmt_pct(s->freed_1ms, s->linked, a, sizeof(a)));
		vt_html_td(out, true, per_hour_text(s->churn_per_h, a, sizeof(a)));
		rate_text(s->first_bytes_per_s, a, sizeof(a));
		snprintf(cell, sizeof(cell), "%s \u2192 %s", a, rate_text(s->last_bytes_per_s, b, sizeof(b)));
		vt_html_td(out, true, cell);
		fputs("</tr>\n", out);
	}
	fputs("</table>\n", out);
	if (t->nsites > VT_ALLOC_TREND_SITES)
		fprintf(out, "<p class=\"small\">%zu more sites: analyze --json lists them.</p>\n",
			t->nsites - VT_ALLOC_TREND_SITES);
	return rc || ferror(out) ? -1 : 0;
}

int vt_render_alloc_diff_html(FILE *out, const struct vt_alloc_diff *d, const char *a, const char *b)
{
	char x[48];

	if (!d || (!d->a.looks.n && !d->b.looks.n))
		return 0;
	fputs("<h2>allocation sites: ", out);
	vt_html_text(out, b);
	fputs(" against ", out);
	vt_html_text(out, a);
	fprintf(out, "</h2>\n<p>%zu and %zu allocation profiles; rates per second of armed time.</p>\n",
		d->b.looks.n, d->a.looks.n);
	fputs("<p>", out);
	vt_html_text(out, d->why[0] ? d->why : d->headline);
	fputs("</p>\n", out);
	if (d->why[0])
		return ferror(out) ? -1 : 0;
	fputs("<table>\n<tr><th>site</th><th class=\"n\">", out);
	vt_html_text(out, a);
	fputs(" bytes/s</th><th class=\"n\">", out);
	vt_html_text(out, b);
	fputs(" bytes/s</th><th class=\"n\">change</th><th class=\"n\">", out);
	vt_html_text(out, a);
	fputs(" churn</th><th class=\"n\">", out);
	vt_html_text(out, b);
	fputs(" churn</th><th></th></tr>\n", out);
	for (size_t i = 0; i < d->nrows && i < VT_ALLOC_TREND_SITES; i++) {
		const struct vt_alloc_diff_row *r = &d->rows[i];

		fputs("<tr>", out);
		vt_html_td(out, false, r->name);
		vt_html_td(out, true, rate_text(r->a_bytes_per_s, x, sizeof(x)));
		vt_html_td(out, true, rate_text(r->b_bytes_per_s, x, sizeof(x)));
		vt_html_td(out, true, r->a_bytes_per_s > 0 ? vt_fmt_pct_change(100 * (r->b_bytes_per_s / r->a_bytes_per_s - 1), x,
								      sizeof(x))
						   : "new");
		vt_html_td(out, true, per_hour_text(r->a_churn_per_h, x, sizeof(x)));
		vt_html_td(out, true, per_hour_text(r->b_churn_per_h, x, sizeof(x)));
		vt_html_td(out, false, r->within_noise ? "within noise" : "");
		fputs("</tr>\n", out);
	}
	fputs("</table>\n", out);
	return ferror(out) ? -1 : 0;
}

/*
 * age_html.c — `vitals compare --by-age --html`: one self-contained page
 * with the headline, the incarnations, compare's table at the last age all
 * reached, the deciding metric at every matched age, and each memory
 * figure of every incarnation charted against its age since it started
 * (one colour each), the ages they share shaded and each window's end
 * marked.
 */
#include "render/age_compare.h"
#include "render/soak.h"
#include "render/soak_fmt.h"
#include "render/svg_chart.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MiB (1024.0 * 1024.0)

/* One arm's metric against its age, broken at gaps. */
struct age_xy {
	double *x, *y;
	size_t n;
};

static int age_xy(struct age_xy *xy, const struct vt_age_arm *a, enum vt_metric m)
{
	const struct vt_series *s = a->series;
	double gap = vt_series_gap_s(s->info.every_s);
	size_t i, cap = 2 * (a->to - a->from) + 1;

	xy->n = 0;
	xy->x = malloc(sizeof(double) * cap);
	xy->y = malloc(sizeof(double) * cap);
	if (!xy->x || !xy->y)
		return -1;
	for (i = a->from; i < a->to; i++) {
		if (i > a->from && s->t0[i] - s->t1[i - 1] > gap) {
			xy->x[xy->n] = s->t[i] - a->started_t;
			xy->y[xy->n++] = NAN;
		}
		xy->x[xy->n] = s->t[i] - a->started_t;
		xy->y[xy->n++] = s->m[m][i].mean;
	}
	return 0;
}

static int chart(FILE *out, const struct vt_age_comparison *c, enum vt_metric m, const char *id)
{
	struct vt_chart_line *lines = calloc(c->narms, sizeof(*lines));
	struct age_xy *xy = calloc(c->narms, sizeof(*xy));
	struct vt_chart_mark marks[VT_AGE_WINDOWS_MAX];
	char mark_labels[VT_AGE_WINDOWS_MAX][32], title[160];
	struct vt_chart_band band;
	double top = -INFINITY;
	size_t i, n = 0, k;
	struct vt_chart ch;
	int rc = 0;

	if (!lines || !xy) {
		rc = -1;
		goto out;
	}
	for (i = 0; i < c->narms; i++) {
		const struct vt_age_arm *a = &c->arms[i];

		if (!a->series->m[m])
			continue;
		if (age_xy(&xy[n], a, m)) {
			n++;
			rc = -1;
			goto out;
		}
		for (k = 0; k < xy[n].n; k++)
			if (isfinite(xy[n].y[k]) && xy[n].y[k] > top)
				top = xy[n].y[k];
		lines[n] = (struct vt_chart_line){ a->name, vt_chart_palette[i % 8], xy[n].x, xy[n].y, NULL, NULL,
						   xy[n].n, false, false };
		n++;
	}
	if (!n)
		goto out;
	for (k = 0; k < c->nwindows; k++) {
		vt_fmt_age(c->windows[k].age, mark_labels[k], sizeof(mark_labels[k]));
		marks[k] = (struct vt_chart_mark){ c->windows[k].age, mark_labels[k], "#888888" };
	}
	band = (struct vt_chart_band){ c->common_from, c->common_to, "ages all reached", "#999999" };
	memset(&ch, 0, sizeof(ch));
	ch.id = id;
	snprintf(title, sizeof(title), "%s — every incarnation against its age", vt_metrics[m].label);
	ch.title = title;
	ch.x_title = "age: time since the process started";
	ch.y_unit = VT_CHART_BYTES;
	ch.x_min = 0;
	ch.x_max = NAN;
	ch.y_min_span = isfinite(top) && 0.05 * top > MiB ? 0.05 * top : MiB;
	ch.lines = lines;
	ch.nlines = n;
	ch.bands = &band;
	ch.nbands = 1;
	ch.marks = marks;
	ch.nmarks = c->nwindows;
	rc = vt_svg_chart(out, &ch);
out:
	for (i = 0; xy && i < n; i++) {
		free(xy[i].x);
		free(xy[i].y);
	}
	free(xy);
	free(lines);
	return rc;
}

/* The deciding metric at every window: age, then each arm's figure (and its change). */
static void ages_table(FILE *out, const struct vt_age_comparison *c)
{
	enum vt_metric m = c->metric;
	char buf[128];
	size_t i, k;

	fputs("<table>\n<tr><th>age</th>", out);
	for (i = 0; i < c->narms; i++) {
		fputs("<th class=\"n\">", out);
		vt_html_text(out, c->arms[i].name);
		fputs(i ? "</th><th class=\"n\">Δ</th><th class=\"n\">%</th>" : " (baseline)</th>", out);
	}
	fputs("</tr>\n", out);
	for (k = 0; k < c->nwindows; k++) {
		const struct vt_comparison *w = &c->windows[k].cmp;

		fputs("<tr>", out);
		vt_html_td(out, false, vt_fmt_age(c->windows[k].age, buf, sizeof(buf)));
		for (i = 0; i < w->narms; i++) {
			const struct vt_cmp_diff *d = &w->diff[i][m];

			vt_html_td(out, true, vt_fmt_cmp_cell(m, &w->arms[i].cell[m], buf, sizeof(buf)));
			if (!i)
				continue;
			vt_html_td(out, true, d->known ? vt_fmt_value_delta(vt_metrics[m].unit, d->delta,
									    w->arms[0].cell[m].median, buf, sizeof(buf))
						       : "n/a");
			if (d->known && d->within_noise) {
				fputs("<td class=\"n noise\">", out);
				vt_html_text(out, vt_fmt_pct_change(d->pct, buf, sizeof(buf)));
				fputs(" (within noise)</td>", out);
			} else {
				vt_html_td(out, true, d->known ? vt_fmt_pct_change(d->pct, buf, sizeof(buf)) : "n/a");
			}
		}
		fputs("</tr>\n", out);
	}
	fputs("</table>\n", out);
}

int vt_render_age_html(FILE *out, const struct vt_age_report *r)
{
	static const struct {
		enum vt_metric m;
		const char *id;
	} charts[] = {
		{ VT_M_COMMITTED, "committed" }, { VT_M_RSS_ANON, "rssanon" }, { VT_M_VM_SWAP, "swap" },
		{ VT_M_HEAP_LIVE, "live" }, { VT_M_HEAP_FREE, "free" },
	};
	const struct vt_age_comparison *c = r->cmp;
	const struct vt_age_window *head;
	char line[1024], a[32], b[32], w[32];
	size_t i;
	int rc = 0;

	if (!c || c->narms < 2 || !c->nwindows)
		return -1;
	head = &c->windows[c->nwindows - 1];
	vt_html_begin(out, "vitals compare: incarnations at matched age");
	fputs("<h1>vitals compare: incarnations at matched age</h1>\n<div class=\"verdict\"><p><b>", out);
	vt_html_text(out, vt_age_headline(c, line, sizeof(line)));
	fputs("</b></p></div>\n<h2>incarnations</h2>\n<ul class=\"facts\">\n", out);
	for (i = 0; i < c->narms; i++) {
		fprintf(out, "<li><span style=\"color:%s\">■</span> <b>", vt_chart_palette[i % 8]);
		vt_html_text(out, c->arms[i].name);
		fputs(i ? "</b>: " : "</b> (baseline): ", out);
		vt_html_text(out, vt_age_arm_line(c, i, line, sizeof(line)));
		if (c->arms[i].recording < r->npaths && r->npaths > 1) {
			fputs(" <span class=\"small\">(", out);
			vt_html_text(out, r->paths[c->arms[i].recording]);
			fputs(")</span>", out);
		}
		fputs("</li>\n", out);
	}
	fputs("</ul>\n<p class=\"small\">", out);
	snprintf(line, sizeof(line), "Ages all reached: %s–%s; %zu window%s of %s, each named by the age it ends at. ",
		 vt_fmt_age(c->common_from, a, sizeof(a)), vt_fmt_span(c->common_to, b, sizeof(b)), c->nwindows,
		 c->nwindows == 1 ? "" : "s", vt_fmt_span(c->width_s, w, sizeof(w)));
	vt_html_text(out, line);
	vt_html_text(out, vt_age_basis(c, line, sizeof(line)));
	fputs(".</p>\n<h2>", out);
	snprintf(line, sizeof(line), "at %s, the last age all reached (window %s–%s)", vt_fmt_age(head->age, a, sizeof(a)),
		 vt_fmt_age(head->age_from, b, sizeof(b)), vt_fmt_span(head->age, w, sizeof(w)));
	vt_html_text(out, line);
	fputs("</h2>\n", out);
	vt_render_cmp_table_html(out, &head->cmp);
	fputs("<h2>", out);
	vt_html_text(out, vt_metrics[c->metric].label);
	fputs(" at each matched age</h2>\n", out);
	ages_table(out, c);
	fputs("<h2>charts</h2>\n", out);
	for (i = 0; i < sizeof(charts) / sizeof(charts[0]) && !rc; i++) {
		bool seen = false, zero = true;
		size_t k;

		for (k = 0; k < c->narms && zero; k++)
			zero = vt_series_zero_throughout(c->arms[k].series, charts[i].m, &seen);
		if (!seen && zero)
			continue;      /* recorded by none */
		if (zero) {
			fputs("<p>", out);
			vt_html_text(out, vt_metrics[charts[i].m].label);
			fputs(": 0 throughout in every incarnation.</p>\n", out);
			continue;
		}
		rc = chart(out, c, charts[i].m, charts[i].id);
	}
	vt_html_end(out);
	return rc || ferror(out) ? -1 : 0;
}

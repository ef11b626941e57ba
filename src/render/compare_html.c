/*
 * compare_html.c — `vitals compare --html`: one self-contained page with
 * the A/B table and each memory figure of every arm overlaid on one time
 * axis (time since that arm's soak began), one colour per arm, shaded in
 * its colour where its analysis calls it settled (else the window its
 * figures come from, said so); then, when the recordings hold profiles,
 * each arm's against the baseline's with a link to the differential flame
 * graph written beside the page.
 */
#include "render/alloc_trend.h"
#include "render/profile_trend.h"
#include "render/soak.h"
#include "render/soak_fmt.h"
#include "render/svg_chart.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MiB (1024.0 * 1024.0)

/* One arm's metric as chart arrays from its first point, broken at restarts and gaps. */
struct arm_xy {
	double *x, *y;
	size_t n;
};

static int arm_xy(struct arm_xy *a, const struct vt_series *s, enum vt_metric m)
{
	double every = s->info.every_s > 0 ? s->info.every_s : 0, start = s->n ? s->t0[0] : 0;
	size_t i;

	a->n = 0;
	a->x = malloc(sizeof(double) * (2 * s->n + 1));
	a->y = malloc(sizeof(double) * (2 * s->n + 1));
	if (!a->x || !a->y) {
		free(a->x);
		free(a->y);
		a->x = a->y = NULL;
		return -1;
	}
	for (i = 0; i < s->n; i++) {
		if (i > 0 && (s->incarnation[i] != s->incarnation[i - 1] ||
			      (every > 0 && s->t0[i] - s->t1[i - 1] > 3 * every))) {
			a->x[a->n] = s->t[i] - start;
			a->y[a->n++] = NAN;
		}
		a->x[a->n] = s->t[i] - start;
		a->y[a->n++] = s->m[m][i].mean;
	}
	return 0;
}

/*
 * Arm a's shaded stretch, in the time of its own soak (t0, t1) and words:
 * what follows a step; else the settled window its analysis found (a
 * plateau's as analyze shades it, or one that is not a plateau yet, whose
 * figures the table takes from the last half); else the last half the
 * table uses.
 */
static void arm_band(const struct vt_cmp_arm *a, double *t0, double *t1, char *label, size_t cap)
{
	const struct vt_soak_verdict *v = &a->verdict;
	const char *name = a->name ? a->name : "?";
	char at[32];

	*t0 = a->window_t0;
	*t1 = a->window_t1;
	if (a->window_settled && v->kind == VT_VERDICT_STEP) {
		snprintf(label, cap, "%s: after the step", name);
	} else if (v->settled && isfinite(v->settled_t0)) {
		*t0 = v->settled_t0;
		*t1 = v->t1;
		if (vt_soak_settled_not_yet(v))
			snprintf(label, cap, "%s: flat since t+%s but not a plateau yet (the table: last half)", name,
				 vt_fmt_span(v->settled_t0, at, sizeof(at)));
		else
			snprintf(label, cap, "%s: settled window", name);
	} else {
		snprintf(label, cap, "%s: never settled (the table: last half)", name);
	}
}

/* Did every arm that recorded m record it as 0 throughout (swap never used)? */
static bool all_zero(const struct vt_comparison *cmp, enum vt_metric m)
{
	bool seen = false;
	size_t i;

	for (i = 0; i < cmp->narms; i++)
		if (!vt_series_zero_throughout(cmp->arms[i].series, m, &seen))
			return false;
	return seen;
}

static int chart_arms(FILE *out, const struct vt_comparison *cmp, enum vt_metric m, const char *id)
{
	struct vt_chart_line *lines = calloc(cmp->narms, sizeof(*lines));
	struct vt_chart_band *bands = calloc(cmp->narms, sizeof(*bands));
	struct arm_xy *xy = calloc(cmp->narms, sizeof(*xy));
	char (*labels)[160] = calloc(cmp->narms, sizeof(*labels));
	char title[160];
	double top = -INFINITY;
	size_t i, n = 0, k;
	struct vt_chart c;
	int rc = 0;

	if (!lines || !bands || !xy || !labels) {
		rc = -1;
		goto out;
	}
	for (i = 0; i < cmp->narms; i++) {
		const struct vt_cmp_arm *a = &cmp->arms[i];
		const struct vt_series *s = a->series;
		const char *color = vt_chart_palette[i % 8];
		double start, t0, t1;

		if (!s || !s->m[m] || !s->n)
			continue;
		if (arm_xy(&xy[n], s, m)) {
			rc = -1;
			goto out;
		}
		start = s->t0[0];
		for (k = 0; k < xy[n].n; k++)
			if (isfinite(xy[n].y[k]) && xy[n].y[k] > top)
				top = xy[n].y[k];
		lines[n] = (struct vt_chart_line){ a->name ? a->name : "?", color, xy[n].x, xy[n].y, NULL, NULL,
						   xy[n].n, false };
		arm_band(a, &t0, &t1, labels[n], sizeof(labels[n]));
		bands[n] = (struct vt_chart_band){ t0 - start, t1 - start, labels[n], color };
		n++;
	}
	if (n) {
		memset(&c, 0, sizeof(c));
		c.id = id;
		snprintf(title, sizeof(title), "%s — every arm", vt_metrics[m].label);
		c.title = title;
		c.x_title = "time since each arm's soak began";
		c.y_unit = VT_CHART_BYTES;
		c.x_min = 0;
		c.x_max = NAN;
		c.y_min_span = isfinite(top) && 0.05 * top > MiB ? 0.05 * top : MiB;
		c.lines = lines;
		c.nlines = n;
		c.bands = bands;
		c.nbands = n;
		rc = vt_svg_chart(out, &c);
	}
out:
	if (xy)
		for (i = 0; i < n; i++) {
			free(xy[i].x);
			free(xy[i].y);
		}
	free(xy);
	free(lines);
	free(bands);
	free(labels);
	return rc;
}

void vt_render_cmp_table_html(FILE *out, const struct vt_comparison *cmp)
{
	char buf[128];
	size_t i;
	int f;

	fputs("<table>\n<tr><th></th>", out);
	for (i = 0; i < cmp->narms; i++) {
		fputs("<th class=\"n\">", out);
		vt_html_text(out, cmp->arms[i].name ? cmp->arms[i].name : "?");
		fputs(i ? "</th><th class=\"n\">Δ</th><th class=\"n\">%</th>" : " (baseline)</th>", out);
	}
	fputs("</tr>\n", out);
	for (f = 0; f < VT_M_COUNT; f++) {
		if (!vt_cmp_row_recorded(cmp, f))
			continue;
		fputs("<tr>", out);
		vt_html_td(out, false, vt_metrics[f].label);
		for (i = 0; i < cmp->narms; i++) {
			const struct vt_cmp_diff *d = i && cmp->diff ? &cmp->diff[i][f] : NULL;

			vt_html_td(out, true, vt_fmt_cmp_cell(f, &cmp->arms[i].cell[f], buf, sizeof(buf)));
			if (!i)
				continue;
			vt_html_td(out, true, d && d->known ? vt_fmt_value_delta(vt_metrics[f].unit, d->delta, cmp->arms[0].cell[f].median, buf, sizeof(buf)) : "n/a");
			if (d && d->known && d->within_noise) {
				fputs("<td class=\"n noise\">", out);
				vt_html_text(out, vt_fmt_pct_change(d->pct, buf, sizeof(buf)));
				fputs(" (within noise)</td>", out);
			} else if (d && d->known && d->trimmed) {
				fputs("<td class=\"n\">", out);
				vt_html_text(out, vt_fmt_pct_change(d->pct, buf, sizeof(buf)));
				fputs(" (trimmed: swing, not noise)</td>", out);
			} else {
				vt_html_td(out, true, d && d->known ? vt_fmt_pct_change(d->pct, buf, sizeof(buf)) : "n/a");
			}
		}
		fputs("</tr>\n", out);
	}
	fputs("</table>\n<p class=\"small\">Each figure is the median over the arm's window, with the 5th–95th "
	      "percentile of its points; Δ and % are against the baseline; within noise: the change is inside "
	      "both arms' noise and their ranges overlap.</p>\n", out);
}

int vt_render_compare_html(FILE *out, const struct vt_compare_report *r)
{
	static const struct {
		enum vt_metric m;
		const char *id;
	} charts[] = {
		{ VT_M_COMMITTED, "committed" }, { VT_M_RSS_ANON, "rssanon" }, { VT_M_VM_SWAP, "swap" },
		{ VT_M_HEAP_LIVE, "live" }, { VT_M_HEAP_FREE, "free" },
	};
	const struct vt_comparison *cmp = r->cmp;
	char line[1024];
	size_t i;
	int rc = 0;

	if (!cmp)
		return -1;
	vt_html_begin(out, r->title ? r->title : "vitals compare");
	fputs("<h1>", out);
	vt_html_text(out, r->title ? r->title : "vitals compare");
	fputs("</h1>\n", out);
	if (!cmp->narms) {
		fputs("<p>Nothing to compare.</p>\n", out);
		vt_html_end(out);
		return ferror(out) ? -1 : 0;
	}
	if (cmp->other_command) {
		const struct vt_cmp_arm *a = &cmp->arms[0], *b = &cmp->arms[cmp->other_command];

		fputs("<div class=\"verdict k-leak\"><p><b>warning:</b> the recordings ran different commands (", out);
		vt_html_text(out, a->name ? a->name : "arm 0");
		fputs(": ", out);
		vt_html_text(out, a->series ? a->series->info.target : "?");
		fputs("; ", out);
		vt_html_text(out, b->name ? b->name : "arm");
		fputs(": ", out);
		vt_html_text(out, b->series ? b->series->info.target : "?");
		fputs("): the table compares two programs, not one change.</p></div>\n", out);
	}
	vt_render_cmp_table_html(out, cmp);
	fputs("<h2>arms</h2>\n<ul class=\"facts\">\n", out);
	for (i = 0; i < cmp->narms; i++) {
		fprintf(out, "<li><span style=\"color:%s\">■</span> ", vt_chart_palette[i % 8]);
		vt_html_text(out, vt_compare_arm_line(&cmp->arms[i], line, sizeof(line)));
		fputs("<br><span class=\"small\">verdict: ", out);
		vt_html_text(out, vt_soak_headline(&cmp->arms[i].verdict, line, sizeof(line)));
		fputs("</span></li>\n", out);
	}
	fputs("</ul>\n<h2>charts</h2>\n", out);
	for (i = 0; i < sizeof(charts) / sizeof(charts[0]) && !rc; i++) {
		/* a chart of nothing but zeros says so in a line instead */
		if (all_zero(cmp, charts[i].m)) {
			fputs("<p>", out);
			vt_html_text(out, vt_metrics[charts[i].m].label);
			fputs(charts[i].m == VT_M_VM_SWAP ? ": 0 throughout in every arm — no swap.</p>\n"
							  : ": 0 throughout in every arm.</p>\n", out);
			continue;
		}
		rc = chart_arms(out, cmp, charts[i].m, charts[i].id);
	}
	for (i = 1; !rc && r->profile_diffs && i < cmp->narms; i++)
		rc = vt_render_prof_diff_html(out, &r->profile_diffs[i - 1], cmp->arms[0].name ? cmp->arms[0].name : "?",
					      cmp->arms[i].name ? cmp->arms[i].name : "?",
					      r->flame_pages ? r->flame_pages[i - 1] : NULL);
	for (i = 1; !rc && r->alloc_diffs && i < cmp->narms; i++)
		rc = vt_render_alloc_diff_html(out, &r->alloc_diffs[i - 1], cmp->arms[0].name ? cmp->arms[0].name : "?",
					       cmp->arms[i].name ? cmp->arms[i].name : "?");
	vt_html_end(out);
	return rc || ferror(out) ? -1 : 0;
}

/*
 * profile_trend_html.c — a soak's stored profiles in the HTML pages (see
 * profile_trend.h): analyze's CPU by bucket over time as a chart beside its
 * table and finding, and compare's bucket and function deltas with a link
 * to the differential flame graph.  The same figures and words as the text
 * view; every name from a recording is escaped.
 */
#include "render/profile_trend.h"

#include "base/units.h"
#include "render/svg_chart.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Buckets drawn as lines: the largest first, one palette colour left for the process's CPU. */
#define CHART_BUCKETS 7

static void td_share(FILE *out, double share, double pm)
{
	fprintf(out, "<td class=\"n\">%.1f%% &plusmn;%.1f</td>", 100 * share, 100 * pm);
}

/* ---- analyze: CPU by bucket over time ---- */


/* Can row r be drawn: read, with enough samples (and its CPU, when the chart is in cores)? */
static bool row_drawn(const struct vt_prof_trend_row *row, bool cores)
{
	return !row->error && !row->few_samples && row->cpu_samples > 0 && (!cores || isfinite(row->cores));
}

/*
 * The chart: each bucket's CPU at each profile (its share of the on-CPU
 * samples × the process's cores, the band its 95% interval) and the
 * process's CPU dashed; in shares when no profile knows the process's CPU.
 */
static int trend_chart(FILE *out, const struct vt_prof_trend *t, const uint32_t *cols, uint32_t ncols,
		       double x_min, double x_max)
{
	struct vt_chart_line lines[CHART_BUCKETS + 1];
	double *x = calloc(t->n ? t->n : 1, sizeof(double));
	double *y = calloc((ncols + 1) * 3 * (t->n ? t->n : 1), sizeof(double));
	bool cores = false;
	struct vt_chart c;
	size_t r, nl = 0;
	uint32_t k;
	int rc;

	if (!x || !y) {
		free(x);
		free(y);
		return -1;
	}
	for (r = 0; r < t->n; r++)
		cores |= row_drawn(&t->rows[r], false) && isfinite(t->rows[r].cores);
	for (r = 0; r < t->n; r++)
		x[r] = t->rows[r].at.t;
	for (k = 0; k <= ncols; k++) {
		double *yv = y + 3 * k * t->n, *lo = yv + t->n, *hi = lo + t->n;
		bool total = k == ncols;

		if (total && !cores)
			break;
		for (r = 0; r < t->n; r++) {
			const struct vt_prof_trend_row *row = &t->rows[r];
			const struct vt_prof_share *sh = total ? NULL : &row->share[cols[k]];
			double scale = cores ? row->cores : 100;

			yv[r] = lo[r] = hi[r] = NAN;
			if (!row_drawn(row, cores))
				continue;
			if (total) {
				yv[r] = row->cores;
				continue;
			}
			yv[r] = sh->share * scale;
			lo[r] = fmax(0, sh->share - sh->pm) * scale;
			hi[r] = (sh->share + sh->pm) * scale;
		}
		lines[nl++] = (struct vt_chart_line){
			.label = total ? "the process's CPU" : t->bucket_names[cols[k]],
			.color = total ? "#555" : vt_chart_palette[k % 8],
			.x = x, .y = yv, .ylo = total ? NULL : lo, .yhi = total ? NULL : hi,
			.n = t->n, .dashed = total, .dots = true,
		};
	}
	memset(&c, 0, sizeof(c));
	c.id = "profiles";
	c.title = cores ? "CPU by bucket over time — cores: each bucket's share of the on-CPU samples × the "
			  "process's CPU, at each profile"
			: "CPU by bucket over time — % of the on-CPU samples, at each profile";
	c.x_title = "time since the soak began";
	c.y_unit = cores ? VT_CHART_CORES : VT_CHART_COUNT;
	c.x_min = x_min;
	c.x_max = x_max;
	c.y_min_span = cores ? 0.05 : 5;
	c.y_zero = true;
	c.lines = lines;
	c.nlines = nl;
	rc = vt_svg_chart(out, &c);
	free(x);
	free(y);
	return rc;
}

/* The table under the chart: one row per profile, as the text view has it. */
static void trend_table(FILE *out, const struct vt_prof_trend *t, const uint32_t *cols, uint32_t ncols)
{
	char span[32];
	size_t r;
	uint32_t k;

	fputs("<table>\n<tr><th class=\"n\">at</th><th class=\"n\">pid</th><th class=\"n\">cores</th>"
	      "<th class=\"n\">samples</th>", out);
	for (k = 0; k < ncols; k++) {
		fputs("<th class=\"n\">", out);
		vt_html_text(out, t->bucket_names[cols[k]]);
		fputs("</th>", out);
	}
	fputs("<th></th></tr>\n", out);
	for (r = 0; r < t->n; r++) {
		const struct vt_prof_trend_row *row = &t->rows[r];
		char buf[64];

		fputs("<tr>", out);
		vt_html_td(out, true, vt_fmt_span(row->at.t, span, sizeof(span)));
		fprintf(out, "<td class=\"n\">%d</td>", (int)row->at.pid);
		if (row->error) {
			fprintf(out, "<td colspan=\"%u\">unreadable: ", ncols + 3);
			vt_html_text(out, row->err_msg);
			fputs("</td></tr>\n", out);
			continue;
		}
		if (isnan(row->cores))
			snprintf(buf, sizeof(buf), "n/a");
		else
			snprintf(buf, sizeof(buf), "%.2f", row->cores);
		vt_html_td(out, true, buf);
		fprintf(out, "<td class=\"n\">%llu</td>", (unsigned long long)row->cpu_samples);
		for (k = 0; k < ncols; k++)
			td_share(out, row->share[cols[k]].share, row->share[cols[k]].pm);
		vt_html_td(out, false, row->at.partial ? "partial: the soak ended"
				    : row->at.exited ? "the process exited"
				    : row->few_samples ? "too few samples" : "");
		fputs("</tr>\n", out);
	}
	fputs("</table>\n", out);
}

int vt_render_prof_trend_html(FILE *out, const struct vt_prof_trend *t, double x_min, double x_max)
{
	uint32_t cols[VT_BUCKET_MAX_BUCKETS], nseen, g;
	char span[32];

	if (!t || t->n == 0)
		return 0;
	nseen = vt_render_prof_trend_columns(t, cols, VT_BUCKET_MAX_BUCKETS);
	fprintf(out, "<h2>CPU by bucket over time (%zu profile%s)</h2>\n", t->n, t->n == 1 ? "" : "s");
	if (trend_chart(out, t, cols, nseen < CHART_BUCKETS ? nseen : CHART_BUCKETS, x_min, x_max))
		return -1;
	trend_table(out, t, cols, nseen < VT_PROF_TREND_COLUMNS ? nseen : VT_PROF_TREND_COLUMNS);
	fprintf(out, "<p class=\"small\">Share of the on-CPU samples by top of stack, &plusmn; 95%%; the process's "
		"CPU in cores from the soak's samples around each profile.%s</p>\n",
		nseen > VT_PROF_TREND_COLUMNS ? " More buckets in the chart and in --json." : "");
	fputs("<p><b>which bucket grew when CPU rose:</b> ", out);
	vt_html_text(out, t->verdict == VT_PT_GREW ? t->bucket_names[t->grew[0].bucket] : "cannot tell yet");
	fputs("<br>", out);
	vt_html_text(out, t->why);
	fputs("</p>\n", out);
	if (t->verdict == VT_PT_GREW) {
		fputs("<ul class=\"facts\">\n<li>compared: the profile at ", out);
		vt_html_text(out, vt_fmt_span(t->rows[t->from].at.t, span, sizeof(span)));
		fputs(" with the one at ", out);
		vt_html_text(out, vt_fmt_span(t->rows[t->to].at.t, span, sizeof(span)));
		fprintf(out, " (%s)</li>\n", t->by_cpu ? "lowest and highest CPU" : "first and last");
		for (g = 0; g < t->ngrew; g++) {
			const struct vt_prof_growth *x = &t->grew[g];

			fputs("<li><b>", out);
			vt_html_text(out, t->bucket_names[x->bucket]);
			fprintf(out, "</b> %.1f%% &rarr; %.1f%% of samples, %.2f &rarr; %.2f cores (%+.2f &plusmn; %.2f)</li>\n",
				100 * x->share_from, 100 * x->share_to, x->cores_from, x->cores_to, x->delta, x->pm);
		}
		fputs("</ul>\n", out);
	}
	return ferror(out) ? -1 : 0;
}

/* ---- compare: B's profiles against A's ---- */

/* A link to a file beside the page: its name, every byte but [A-Za-z0-9._~-] percent-encoded. */
static void href_of(FILE *out, const char *path)
{
	const char *base = strrchr(path, '/');
	const unsigned char *p = (const unsigned char *)(base ? base + 1 : path);

	for (; *p; p++)
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    strchr("._~-", *p))
			fputc(*p, out);
		else
			fprintf(out, "%%%02X", *p);
}

static void change_cells(FILE *out, double delta, double pm, bool changed)
{
	fprintf(out, "<td class=\"n%s\">%+.1f &plusmn;%.1f pt%s</td>", changed ? "" : " noise", 100 * delta, 100 * pm,
		changed ? "" : " (within noise)");
}

int vt_render_prof_diff_html(FILE *out, const struct vt_prof_diff *d, const char *a, const char *b,
			     const char *flame)
{
	uint32_t i;

	if (!d || !d->a_profiles || !d->b_profiles)
		return 0;
	fputs("<h2>CPU profiles: ", out);
	vt_html_text(out, b);
	fputs(" against ", out);
	vt_html_text(out, a);
	fputs("</h2>\n<p class=\"meta\">", out);
	fprintf(out, "<span>%zu and %zu profiles</span><span>%llu and %llu on-CPU samples</span>", d->b_profiles,
		d->a_profiles, (unsigned long long)d->b_samples, (unsigned long long)d->a_samples);
	if (flame) {
		fputs("<span>differential flame graph of all the profiles: <a href=\"", out);
		href_of(out, flame);
		fputs("\">", out);
		vt_html_text(out, strrchr(flame, '/') ? strrchr(flame, '/') + 1 : flame);
		fputs("</a></span>", out);
	}
	fputs("</p>\n", out);
	if (d->few_samples)
		fprintf(out, "<p>Too few samples on one side to rank anything (%d wanted): cannot tell yet.</p>\n",
			VT_PROF_FEW_SAMPLES);
	fputs("<table>\n<tr><th>bucket</th><th class=\"n\">", out);
	vt_html_text(out, a);
	fputs("</th><th class=\"n\">", out);
	vt_html_text(out, b);
	fputs("</th><th class=\"n\">change</th></tr>\n", out);
	for (i = 0; i < d->nbuckets; i++) {
		const struct vt_prof_diff_bucket *x = &d->buckets[i];

		fputs("<tr>", out);
		vt_html_td(out, false, x->name);
		fprintf(out, "<td class=\"n\">%.1f%%</td><td class=\"n\">%.1f%%</td>", 100 * x->a.share,
			100 * x->b.share);
		change_cells(out, x->delta, x->pm, x->changed);
		fputs("</tr>\n", out);
	}
	fputs("</table>\n", out);
	if (d->nfuncs) {
		fputs("<table>\n<tr><th>function (self)</th><th>module</th><th class=\"n\">", out);
		vt_html_text(out, a);
		fputs("</th><th class=\"n\">", out);
		vt_html_text(out, b);
		fputs("</th><th class=\"n\">change</th></tr>\n", out);
		for (i = 0; i < d->nfuncs; i++) {
			const struct vt_prof_diff_func *x = &d->funcs[i];

			fputs("<tr>", out);
			vt_html_td(out, false, x->label);
			vt_html_td(out, false, x->module);
			fprintf(out, "<td class=\"n\">%.1f%%</td><td class=\"n\">%.1f%%</td>", 100 * x->a, 100 * x->b);
			change_cells(out, x->delta, x->pm, x->changed);
			fputs("</tr>\n", out);
		}
		fputs("</table>\n", out);
	}
	fputs("<p class=\"small\">Shares of each side's on-CPU samples, all its profiles pooled; &plusmn; is 95%.</p>\n",
	      out);
	return ferror(out) ? -1 : 0;
}

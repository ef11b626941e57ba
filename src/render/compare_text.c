/*
 * compare_text.c — `vitals compare` as text: the report's A/B table (each
 * arm's figure over its window with the window's range, then the change
 * against the baseline, in units and percent, with "within noise" where the
 * change is inside both arms' noise), and one line per arm saying what its
 * window is.  Also the units of compare figures, shared with the HTML view.
 */
#include "render/alloc_trend.h"
#include "render/profile_trend.h"
#include "render/soak.h"
#include "render/table.h"

#include <math.h>
#include <string.h>

/* Arms after the baseline per table: 1 + 1 + 4 per arm columns must fit VT_TABLE_MAX_COLS. */
#define ARMS_PER_TABLE 3

const char *vt_fmt_cmp_cell(enum vt_metric f, const struct vt_cmp_cell *c, char *buf, size_t cap)
{
	char m[32], lo[32], hi[32];
	const char *um, *ul, *uh;

	if (!c->known || !isfinite(c->median)) {
		snprintf(buf, cap, "n/a");
		return buf;
	}
	vt_fmt_value(vt_metrics[f].unit, c->median, m, sizeof(m));
	if (!isfinite(c->lo) || !isfinite(c->hi)) {
		snprintf(buf, cap, "%s", m);
		return buf;
	}
	vt_fmt_value(vt_metrics[f].unit, c->lo, lo, sizeof(lo));
	vt_fmt_value(vt_metrics[f].unit, c->hi, hi, sizeof(hi));
	if (!strcmp(lo, m) && !strcmp(hi, m)) {
		snprintf(buf, cap, "%s", m);       /* no spread worth a range */
		return buf;
	}
	/* "611 MiB (598–624)": the range drops its unit when it is the figure's */
	um = strchr(m, ' ');
	ul = strchr(lo, ' ');
	uh = strchr(hi, ' ');
	if (um && ul && uh && !strcmp(um, ul) && !strcmp(um, uh))
		snprintf(buf, cap, "%s (%.*s–%.*s)", m, (int)(ul - lo), lo, (int)(uh - hi), hi);
	else
		snprintf(buf, cap, "%s (%s–%s)", m, lo, hi);
	return buf;
}

int vt_render_cmp_table_text(FILE *out, const struct vt_comparison *cmp, size_t first, size_t last,
			     const char *metric_label)
{
	struct vt_table t;
	char buf[96];
	size_t i;
	int f, col, ncols = 2 + 4 * (int)(last - first);

	vt_table_init(&t, ncols);
	for (col = 1; col < ncols; col++)
		vt_table_align(&t, col, (col - 2) % 4 == 3 ? VT_LEFT : VT_RIGHT);
	vt_table_cell(&t, "%s", "");
	vt_table_cell(&t, "%s (baseline)", cmp->arms[0].name ? cmp->arms[0].name : "arm 0");
	for (i = first; i < last; i++) {
		vt_table_cell(&t, "%s", cmp->arms[i].name ? cmp->arms[i].name : "?");
		vt_table_cell(&t, "Δ");
		vt_table_cell(&t, "%%");
		vt_table_cell(&t, "%s", "");
	}
	for (f = 0; f < VT_M_COUNT; f++) {
		if (!vt_cmp_row_recorded(cmp, f))
			continue;
		vt_table_cell(&t, "%s", metric_label && (int)cmp->arms[0].verdict.metric == f ? metric_label
					: vt_metrics[f].label);
		vt_table_cell(&t, "%s", vt_fmt_cmp_cell(f, &cmp->arms[0].cell[f], buf, sizeof(buf)));
		for (i = first; i < last; i++) {
			const struct vt_cmp_diff *d = cmp->diff ? &cmp->diff[i][f] : NULL;
			bool known = d && d->known;

			vt_table_cell(&t, "%s", vt_fmt_cmp_cell(f, &cmp->arms[i].cell[f], buf, sizeof(buf)));
			vt_table_cell(&t, "%s", known ? vt_fmt_value_delta(vt_metrics[f].unit, d->delta, cmp->arms[0].cell[f].median, buf, sizeof(buf)) : "n/a");
			vt_table_cell(&t, "%s", known ? vt_fmt_pct_change(d->pct, buf, sizeof(buf)) : "n/a");
			vt_table_cell(&t, "%s", known && d->within_noise ? "within noise"
						: known && d->trimmed ? "trimmed: swing, not noise" : "");
		}
	}
	if (t.oom) {
		vt_table_release(&t);
		return -1;
	}
	vt_table_print(&t, out, 2, true);
	vt_table_release(&t);
	return 0;
}

int vt_render_compare_text(FILE *out, const struct vt_compare_report *r)
{
	const struct vt_comparison *cmp = r->cmp;
	char line[1024];
	size_t i, first;
	int f, missing = 0;

	if (!cmp)
		return -1;
	if (r->title)
		fprintf(out, "%s\n", r->title);
	else
		fprintf(out, "vitals compare · %zu arm%s\n", cmp->narms, cmp->narms == 1 ? "" : "s");
	if (cmp->narms == 0) {
		fprintf(out, "  nothing to compare\n");
		return ferror(out) ? -1 : 0;
	}
	if (cmp->other_command) {
		const struct vt_cmp_arm *a = &cmp->arms[0], *b = &cmp->arms[cmp->other_command];
		char na[64], ta[160], nb[64], tb[160];

		fprintf(out, "warning: the recordings ran different commands (%s: %s; %s: %s): the table "
			"compares two programs, not one change\n",
			vt_text_printable(a->name ? a->name : "arm 0", na, sizeof(na)),
			vt_text_printable(a->series->info.target, ta, sizeof(ta)),
			vt_text_printable(b->name ? b->name : "arm", nb, sizeof(nb)),
			vt_text_printable(b->series->info.target, tb, sizeof(tb)));
	}
	fputc('\n', out);
	if (cmp->narms == 1) {
		if (vt_render_cmp_table_text(out, cmp, 1, 1, r->metric_label))
			return -1;
	}
	for (first = 1; first < cmp->narms; first += ARMS_PER_TABLE) {
		size_t last = first + ARMS_PER_TABLE < cmp->narms ? first + ARMS_PER_TABLE : cmp->narms;

		if (first > 1)
			fputc('\n', out);
		if (vt_render_cmp_table_text(out, cmp, first, last, r->metric_label))
			return -1;
	}
	fprintf(out, "  each figure: median over the arm's window (5th–95th percentile of its points);\n"
		"  Δ and %% against %s; within noise: the change is inside both arms' noise and their ranges overlap\n",
		cmp->arms[0].name ? cmp->arms[0].name : "arm 0");
	for (i = 0; i < cmp->narms; i++)
		if (vt_cmp_arm_trimmed(&cmp->arms[i]))
			fprintf(out, "  trimmed: %s's soak called malloc_trim(0) %u time%s in its window (%u in all; "
				"its trim events say what each returned and how long a thread was stopped): its memory "
				"swings between trims, so its range is that swing, not noise, and its median is "
				"compared without a noise judgement\n",
				cmp->arms[i].name ? cmp->arms[i].name : "an arm", cmp->arms[i].window_trims,
				cmp->arms[i].window_trims == 1 ? "" : "s", cmp->arms[i].trims);
	/* the rows a recording has: not said of series that are not recordings */
	for (f = 0; !r->metric_label && f < VT_M_COUNT; f++) {
		if (!(vt_metrics[f].flags & VT_MF_COMPARE) || vt_cmp_row_recorded(cmp, f))
			continue;
		fprintf(out, "%s%s", missing++ ? ", " : "  not recorded in any arm: ", vt_metrics[f].label);
	}
	if (missing)
		fputc('\n', out);
	/* rows another arm has: n/a in this one's column, and why */
	for (i = 0; !r->metric_label && i < cmp->narms; i++) {
		for (f = 0, missing = 0; f < VT_M_COUNT; f++) {
			if (!vt_cmp_row_recorded(cmp, f) || cmp->arms[i].cell[f].known)
				continue;
			if (!missing++)
				fprintf(out, "  not recorded in %s (n/a in its column): ",
					cmp->arms[i].name ? cmp->arms[i].name : "?");
			else
				fputs(", ", out);
			fputs(vt_metrics[f].label, out);
		}
		if (missing)
			fputc('\n', out);
	}
	fputc('\n', out);
	for (i = 0; i < cmp->narms; i++) {
		fprintf(out, "  %s\n", vt_compare_arm_line(&cmp->arms[i], line, sizeof(line)));
		fprintf(out, "    verdict: %s\n", vt_soak_headline(&cmp->arms[i].verdict, line, sizeof(line)));
	}
	if (r->limits)
		vt_render_compare_limits_text(out, cmp);
	for (i = 1; r->profile_diffs && i < cmp->narms; i++)
		if (vt_render_prof_diff_text(out, &r->profile_diffs[i - 1], cmp->arms[0].name, cmp->arms[i].name))
			return -1;
	for (i = 1; r->alloc_diffs && i < cmp->narms; i++)
		if (vt_render_alloc_diff_text(out, &r->alloc_diffs[i - 1], cmp->arms[0].name, cmp->arms[i].name))
			return -1;
	return ferror(out) ? -1 : 0;
}

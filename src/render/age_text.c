/*
 * age_text.c — `vitals compare --by-age` as text: the incarnations and the
 * ages they share, compare's table at the last age both reached (the
 * headline), then the deciding metric at every matched age.
 */
#include "render/age_compare.h"
#include "render/soak.h"
#include "render/table.h"

#include <math.h>
#include <string.h>

#define ARMS_PER_TABLE 3

/* The deciding metric at every window, for the baseline and arms [first, last). */
static int print_ages(FILE *out, const struct vt_age_comparison *c, size_t first, size_t last)
{
	enum vt_metric m = c->metric;
	struct vt_table t;
	char buf[96];
	size_t i, k;
	int col, ncols = 2 + 4 * (int)(last - first);

	vt_table_init(&t, ncols);
	for (col = 1; col < ncols; col++)
		vt_table_align(&t, col, (col - 2) % 4 == 3 ? VT_LEFT : VT_RIGHT);
	vt_table_cell(&t, "age");
	vt_table_cell(&t, "%s (baseline)", c->arms[0].name);
	for (i = first; i < last; i++) {
		vt_table_cell(&t, "%s", c->arms[i].name);
		vt_table_cell(&t, "Δ");
		vt_table_cell(&t, "%%");
		vt_table_cell(&t, "%s", "");
	}
	for (k = 0; k < c->nwindows; k++) {
		const struct vt_comparison *w = &c->windows[k].cmp;

		vt_table_cell(&t, "%s", vt_fmt_age(c->windows[k].age, buf, sizeof(buf)));
		vt_table_cell(&t, "%s", vt_fmt_cmp_cell(m, &w->arms[0].cell[m], buf, sizeof(buf)));
		for (i = first; i < last; i++) {
			const struct vt_cmp_diff *d = &w->diff[i][m];

			vt_table_cell(&t, "%s", vt_fmt_cmp_cell(m, &w->arms[i].cell[m], buf, sizeof(buf)));
			vt_table_cell(&t, "%s", d->known ? vt_fmt_value_delta(vt_metrics[m].unit, d->delta,
									      w->arms[0].cell[m].median, buf, sizeof(buf)) : "n/a");
			vt_table_cell(&t, "%s", d->known ? vt_fmt_pct_change(d->pct, buf, sizeof(buf)) : "n/a");
			vt_table_cell(&t, "%s", d->known && d->within_noise ? "within noise" : "");
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

int vt_render_age_text(FILE *out, const struct vt_age_report *r)
{
	const struct vt_age_comparison *c = r->cmp;
	const struct vt_age_window *head;
	char line[1024], safe[1024], name[96], a[32], b[32], w[32];
	size_t i, first, last;

	if (!c || c->narms < 2 || !c->nwindows)
		return -1;
	head = &c->windows[c->nwindows - 1];
	if (r->npaths == 1)
		fprintf(out, "vitals compare · %s: %zu incarnations at matched age since each process started\n",
			vt_text_printable(r->paths[0], name, sizeof(name)), c->narms);
	else
		fprintf(out, "vitals compare · %zu recordings, %zu incarnations at matched age since each process "
			"started\n", r->npaths, c->narms);
	fprintf(out, "%s\n\n", vt_text_printable(vt_age_headline(c, line, sizeof(line)), safe, sizeof(safe)));
	for (i = 0; i < c->narms; i++) {
		fprintf(out, "  %s%s: ", vt_text_printable(c->arms[i].name, name, sizeof(name)),
			i ? "" : " (baseline)");
		fprintf(out, "%s\n", vt_text_printable(vt_age_arm_line(c, i, line, sizeof(line)), safe, sizeof(safe)));
	}
	fprintf(out, "  ages all reached: %s–%s; %zu window%s of %s, each named by the age it ends at%s\n",
		vt_fmt_age(c->common_from, a, sizeof(a)), vt_fmt_span(c->common_to, b, sizeof(b)), c->nwindows,
		c->nwindows == 1 ? "" : "s", vt_fmt_span(c->width_s, w, sizeof(w)),
		c->width_clamped ? " (--age-window is longer than the ages they share: one window of them all)" : "");
	fprintf(out, "\nat %s, the last age all reached (window %s–%s):\n\n", vt_fmt_age(head->age, a, sizeof(a)),
		vt_fmt_age(head->age_from, b, sizeof(b)), vt_fmt_span(head->age, w, sizeof(w)));
	for (first = 1; first < c->narms; first += ARMS_PER_TABLE) {
		last = first + ARMS_PER_TABLE < c->narms ? first + ARMS_PER_TABLE : c->narms;
		if (first > 1)
			fputc('\n', out);
		if (vt_render_cmp_table_text(out, &head->cmp, first, last, NULL))
			return -1;
	}
	fprintf(out, "\n%s at each matched age:\n\n", vt_metrics[c->metric].label);
	for (first = 1; first < c->narms; first += ARMS_PER_TABLE) {
		last = first + ARMS_PER_TABLE < c->narms ? first + ARMS_PER_TABLE : c->narms;
		if (first > 1)
			fputc('\n', out);
		if (print_ages(out, c, first, last))
			return -1;
	}
	fprintf(out, "  each figure: median over the window (5th–95th percentile of its points); Δ and %% against "
		"%s;\n  within noise: the change is inside both incarnations' noise and their ranges overlap\n",
		vt_text_printable(c->arms[0].name, name, sizeof(name)));
	fprintf(out, "  %s\n", vt_age_basis(c, line, sizeof(line)));
	for (i = 0; i < c->narms; i++)
		if (!head->cmp.arms[i].window_samples)
			fprintf(out, "  note: %s has no sample in the last window (a gap in its recording)\n",
				vt_text_printable(c->arms[i].name, name, sizeof(name)));
	return ferror(out) ? -1 : 0;
}

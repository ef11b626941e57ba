/*
 * heap_html.c — `vitals heap --trim --follow --html FILE`: the refill after
 * the trim as one self-contained page: the curve of committed against the
 * level before the trim, the half-life and the level's time marked, the
 * verdict and its evidence in the words of the text view.
 */
#include "render/heap.h"
#include "render/svg_chart.h"

#include <math.h>
#include <stdlib.h>

int vt_render_heap_html(FILE *out, const struct vt_heap_sample *h, const struct vt_heap_refill *r)
{
	const struct vt_trim_follow *f = r->follow;
	const struct vt_refill_verdict *v = r->verdict;
	char line[VT_HEAP_LINE_MAX], title[160];
	double bx[2], by[2];
	struct vt_chart_line lines[2];
	struct vt_chart_mark marks[2];
	size_t nmarks = 0, e;
	int rc;

	snprintf(title, sizeof(title), "vitals heap --trim --follow · pid %d", (int)h->pid);
	vt_html_begin(out, title);
	fputs("<h1>", out);
	vt_html_text(out, title);
	fputs("</h1>\n", out);
	if (v) {
		fputs("<div class=\"verdict\"><p><b>", out);
		vt_html_text(out, vt_render_refill_headline(v, h, line, sizeof(line)));
		fputs("</b></p></div>\n<ul class=\"facts\">\n", out);
		for (e = 0; e < VT_REFILL_EVIDENCE; e++)
			if (vt_render_refill_evidence(v, h, f, (int)e, line, sizeof(line))[0]) {
				fputs("<li>", out);
				vt_html_text(out, line);
				fputs("</li>\n", out);
			}
		fputs("</ul>\n", out);
	}
	lines[0] = (struct vt_chart_line){ .label = "committed (RssAnon + VmSwap)", .color = vt_chart_palette[0],
					   .x = f->t_s, .y = f->committed, .n = f->n };
	bx[0] = 0;
	bx[1] = f->n ? f->t_s[f->n - 1] : 0;
	by[0] = by[1] = v ? v->before : NAN;
	lines[1] = (struct vt_chart_line){ .label = "before the trim", .color = vt_chart_palette[1], .x = bx, .y = by,
					   .n = v ? 2 : 0, .dashed = true };
	if (v && isfinite(v->half_life_s))
		marks[nmarks++] = (struct vt_chart_mark){ v->half_life_s, "half-life", "#d62728" };
	if (v && isfinite(v->level_at_s) && v->level_at_s > 0)
		marks[nmarks++] = (struct vt_chart_mark){ v->level_at_s, "at its level", "#2ca02c" };
	rc = vt_svg_chart(out, &(struct vt_chart){ .id = "refill", .title = "the refill after malloc_trim(0)",
						   .x_title = "time since the trim returned", .y_unit = VT_CHART_BYTES,
						   .x_min = NAN, .x_max = NAN, .y_zero = false, .lines = lines,
						   .nlines = 2, .marks = marks, .nmarks = nmarks });
	vt_html_end(out);
	return rc || ferror(out) ? -1 : 0;
}

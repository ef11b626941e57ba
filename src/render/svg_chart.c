/*
 * svg_chart.c — line charts as inline SVG (see svg_chart.h), and the HTML
 * page the soak and compare views put them in.
 */
#include "render/svg_chart.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define KiB 1024.0
#define MiB (1024.0 * 1024.0)
#define GiB (1024.0 * 1024.0 * 1024.0)

const char *const vt_chart_palette[8] = {
	"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2",
};

/* ---- HTML ----------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s, 0 if it is not one. */
size_t vt_utf8_len(const unsigned char *s)
{
	size_t n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	for (i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	/* overlong three-byte forms and UTF-16 surrogates */
	if (n == 3 && ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0)))
		return 0;
	if (n == 4 && ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90)))
		return 0;
	return n;
}

void vt_html_text(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	while (*p) {
		size_t n = vt_utf8_len(p);

		if (n == 0) {
			fputs("\xef\xbf\xbd", out);
			p++;
			continue;
		}
		switch (*p) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&#39;", out); break;
		default:
			if (*p < 0x20 && *p != '\n' && *p != '\t')
				fputs("\xef\xbf\xbd", out);
			else
				fwrite(p, 1, n, out);
		}
		p += n;
	}
}

void vt_html_td(FILE *out, bool num, const char *text)
{
	fputs(num ? "<td class=\"n\">" : "<td>", out);
	vt_html_text(out, text);
	fputs("</td>", out);
}

void vt_html_begin(FILE *out, const char *title)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>", out);
	vt_html_text(out, title);
	fputs("</title>\n<style>\n"
	      "body{font:14px/1.45 system-ui,-apple-system,\"Segoe UI\",sans-serif;color:#222;"
	      "margin:24px auto;max-width:1000px;padding:0 12px}\n"
	      "h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px}\n"
	      ".meta{color:#555;margin:0 0 12px}.meta span{margin-right:14px}\n"
	      ".verdict{border:1px solid #bbb;border-left:6px solid #888;border-radius:4px;"
	      "padding:10px 14px;margin:12px 0;background:#fafafa}\n"
	      ".verdict p{margin:4px 0}.verdict .line{font-size:17px}\n"
	      ".k-leak{border-left-color:#d62728}.k-plateau{border-left-color:#2ca02c}"
	      ".k-step{border-left-color:#ff7f0e}.k-settling{border-left-color:#1f77b4}"
	      ".k-cannot_tell{border-left-color:#999}\n"
	      "table{border-collapse:collapse;margin:6px 0}"
	      "th,td{padding:3px 10px;border-bottom:1px solid #e4e4e4;text-align:left;vertical-align:top}"
	      "th{font-weight:600;border-bottom:1px solid #999}"
	      "td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}td.n{white-space:nowrap}\n"
	      /* a table of many columns scrolls sideways in its box instead of wrapping its cells
	       * (a thread table of ten columns wrapped states, wchan and system call in 1000 px);
	       * a cell of names is cut to its width, its whole text in the tooltip */
	      ".wide{overflow-x:auto;max-width:100%}table.rows td,table.rows th{white-space:nowrap}"
	      "table.rows td.names{max-width:24em;overflow:hidden;text-overflow:ellipsis}\n"
	      ".noise{color:#777}.facts{margin:6px 0;padding-left:18px}.facts li{margin:2px 0}\n"
	      "svg{display:block;margin:8px 0 18px;max-width:100%;height:auto}\n"
	      "svg text{font:11px system-ui,sans-serif;fill:#333}svg .t{font-size:13px;font-weight:600}\n"
	      ".small{color:#666;font-size:12px}\n"
	      "</style>\n</head>\n<body>\n", out);
}

void vt_html_end(FILE *out)
{
	fputs("</body>\n</html>\n", out);
}

/* ---- axes ----------------------------------------------------------------- */

struct axis {
	double lo, hi;                /* data range shown */
	double step;                  /* tick step in data units */
	double div;                   /* data units per display unit */
	const char *unit;             /* display unit: "MiB", "min", "" */
	int prec;                     /* decimals on tick labels */
};

static double nice_step(double raw)
{
	double p, f;

	if (!(raw > 0) || !isfinite(raw))
		return 1;
	p = pow(10, floor(log10(raw)));
	f = raw / p;
	return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * p;
}

static int decimals(double step)
{
	int d = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);

	return d > 6 ? 6 : d;
}

static void y_axis(struct axis *a, enum vt_chart_unit unit, double lo, double hi)
{
	double mag = fmax(fabs(lo), fabs(hi));

	a->div = 1;
	a->unit = "";
	if (unit == VT_CHART_BYTES) {
		if (mag >= 10 * GiB)
			a->div = GiB, a->unit = "GiB";
		else if (mag >= MiB)
			a->div = MiB, a->unit = "MiB";
		else if (mag >= KiB)
			a->div = KiB, a->unit = "KiB";
		else
			a->unit = "B";
	} else if (unit == VT_CHART_CORES) {
		a->unit = "cores";
	}
	a->step = nice_step((hi - lo) / a->div / 5) * a->div;
	if (unit == VT_CHART_COUNT && a->step < 1)
		a->step = 1;
	a->lo = floor(lo / a->step) * a->step;
	a->hi = ceil(hi / a->step) * a->step;
	if (a->hi <= a->lo)
		a->hi = a->lo + a->step;
	a->prec = decimals(a->step / a->div);
}

static void x_axis(struct axis *a, double lo, double hi)
{
	static const double steps_min[] = { 1, 2, 5, 10, 15, 20, 30, 60 };
	static const double steps_h[] = { 0.5, 1, 2, 3, 4, 6, 12, 24 };
	double span = hi - lo, raw;
	size_t i;

	if (span < 180)
		a->div = 1, a->unit = "s";
	else if (span < 5 * 3600)
		a->div = 60, a->unit = "min";
	else if (span < 72 * 3600)
		a->div = 3600, a->unit = "h";
	else
		a->div = 86400, a->unit = "d";
	raw = span / a->div / 8;
	a->step = nice_step(raw);
	if (a->div == 60 || a->div == 3600) {
		const double *st = a->div == 60 ? steps_min : steps_h;

		for (i = 0; i < 8; i++)
			if (st[i] >= raw) {
				a->step = st[i];
				break;
			}
		if (i == 8)
			a->step = nice_step(raw);
	}
	a->step *= a->div;
	a->lo = lo;
	a->hi = hi > lo ? hi : lo + 1;
	a->prec = decimals(a->step / a->div);
}

/* ---- the chart ------------------------------------------------------------ */

struct frame {
	double left, top, w, h;       /* plot area in px */
	struct axis x, y;
};

static double px(const struct frame *f, double x)
{
	return f->left + (x - f->x.lo) / (f->x.hi - f->x.lo) * f->w;
}

static double py(const struct frame *f, double y)
{
	return f->top + f->h - (y - f->y.lo) / (f->y.hi - f->y.lo) * f->h;
}

/* A vertex of a path: "M" starts a piece, "L" continues it. */
static void vertex(FILE *out, const struct frame *f, bool *open, double x, double y)
{
	fprintf(out, "%s%.1f %.1f", *open ? " L" : (*open = true, " M"), px(f, x), py(f, y));
}

/*
 * The line squeezed into buckets along x: each bucket keeps its lowest and
 * highest point in time order.  A non-finite y (or x) ends a piece.
 */
/* The bucket of x, clamped to [0, buckets]. */
static long bucket_of(const struct frame *f, double x, size_t buckets)
{
	double b = (x - f->x.lo) / (f->x.hi - f->x.lo) * (double)buckets;

	return b < 0 ? 0 : b > (double)buckets ? (long)buckets : (long)b;
}

static void line_path(FILE *out, const struct frame *f, const struct vt_chart_line *l, size_t buckets)
{
	size_t i, lo_i = 0, hi_i = 0;
	long cur = -1;
	bool open = false, have = false;

	for (i = 0; i <= l->n; i++) {
		bool ok = i < l->n && isfinite(l->x[i]) && isfinite(l->y[i]);
		long b = ok ? bucket_of(f, l->x[i], buckets) : -1;

		if (have && (!ok || b != cur)) {
			size_t first = lo_i < hi_i ? lo_i : hi_i, second = lo_i < hi_i ? hi_i : lo_i;

			vertex(out, f, &open, l->x[first], l->y[first]);
			if (second != first)
				vertex(out, f, &open, l->x[second], l->y[second]);
			have = false;
		}
		if (!ok) {
			open = false;
			continue;
		}
		if (!have) {
			have = true;
			cur = b;
			lo_i = hi_i = i;
			continue;
		}
		if (l->y[i] < l->y[lo_i])
			lo_i = i;
		if (l->y[i] > l->y[hi_i])
			hi_i = i;
	}
}

/*
 * The band between ylo and yhi, bucketed like the line: each bucket spans
 * its first to last x at its lowest lo and highest hi.  One closed polygon
 * per unbroken piece.  Returns -1 out of memory.
 */
static int band_path(FILE *out, const struct frame *f, const struct vt_chart_line *l, size_t buckets)
{
	struct bk {
		double xa, xb, lo, hi;
	} *bk = malloc(sizeof(*bk) * (buckets + 2));
	size_t i, nb = 0, k;
	long cur = -1;

	if (!bk)
		return -1;
	for (i = 0; i <= l->n; i++) {
		bool ok = i < l->n && isfinite(l->x[i]) && isfinite(l->ylo[i]) && isfinite(l->yhi[i]);
		long b = ok ? bucket_of(f, l->x[i], buckets) : -1;

		if (nb && (!ok || (b != cur && nb == buckets + 2))) {
			/* flush the piece: upper edge forwards, lower edge back */
			bool open = false;

			for (k = 0; k < nb; k++) {
				vertex(out, f, &open, bk[k].xa, bk[k].hi);
				vertex(out, f, &open, bk[k].xb, bk[k].hi);
			}
			for (k = nb; k-- > 0;) {
				vertex(out, f, &open, bk[k].xb, bk[k].lo);
				vertex(out, f, &open, bk[k].xa, bk[k].lo);
			}
			fputs(" Z", out);
			nb = 0;
		}
		if (!ok)
			continue;
		if (nb && b == cur) {
			bk[nb - 1].xb = l->x[i];
			bk[nb - 1].lo = fmin(bk[nb - 1].lo, l->ylo[i]);
			bk[nb - 1].hi = fmax(bk[nb - 1].hi, l->yhi[i]);
			continue;
		}
		cur = b;
		bk[nb++] = (struct bk){ l->x[i], l->x[i], l->ylo[i], l->yhi[i] };
	}
	free(bk);
	return 0;
}

static const char *tick_label(const struct axis *a, double v, char *buf, size_t cap)
{
	double d = v / a->div;

	if (fabs(d) < 1e-9)
		d = 0;
	snprintf(buf, cap, "%.*f%s%s", a->prec, d, a->unit[0] ? " " : "", a->unit);
	return buf;
}

static void data_range(const struct vt_chart *c, double *xlo, double *xhi, double *ylo, double *yhi)
{
	size_t i, k;

	*xlo = *ylo = INFINITY;
	*xhi = *yhi = -INFINITY;
	for (k = 0; k < c->nlines; k++) {
		const struct vt_chart_line *l = &c->lines[k];

		for (i = 0; i < l->n; i++) {
			if (!isfinite(l->x[i]))
				continue;
			if (isfinite(l->y[i])) {
				*xlo = fmin(*xlo, l->x[i]);
				*xhi = fmax(*xhi, l->x[i]);
				*ylo = fmin(*ylo, l->y[i]);
				*yhi = fmax(*yhi, l->y[i]);
			}
			if (l->ylo && l->yhi && isfinite(l->ylo[i]) && isfinite(l->yhi[i])) {
				*ylo = fmin(*ylo, l->ylo[i]);
				*yhi = fmax(*yhi, l->yhi[i]);
			}
		}
	}
}

/*
 * Text widths are estimated, not measured (no fonts here): 6.6 px a
 * character of the 11 px labels is a little more than their average, so an
 * estimate errs towards room to spare.
 */
#define CHAR_PX 6.6
#define LEGEND_ROW_PX 15.0
#define MARK_ROWS 3             /* rows of mark labels before a label is left out */

static double text_px(const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t chars = 0;

	for (; *p; p++)
		chars += (*p & 0xc0) != 0x80;
	return CHAR_PX * (double)chars;
}

/* A legend entry: a line's stroke, or a band's swatch. */
struct legend_item {
	const char *label, *color;
	bool band, dashed;
};

/*
 * Lay the legend out in rows under the title, wrapping at the chart's
 * width: x[i] and row[i] of each item.  Returns the rows used (at least 1).
 */
static int legend_layout(const struct legend_item *it, size_t n, double left, double right, double *x, int *row)
{
	double lx = left;
	int r = 0;

	for (size_t i = 0; i < n; i++) {
		double w = 22 + text_px(it[i].label) + 18;

		if (lx > left && lx + w - 18 > right) {
			r++;
			lx = left;
		}
		x[i] = lx;
		row[i] = r;
		lx += w;
	}
	return r + 1;
}

static void legend_draw(FILE *out, const struct legend_item *it, size_t n, const double *x, const int *row)
{
	for (size_t i = 0; i < n; i++) {
		double y = 30 + LEGEND_ROW_PX * row[i];
		const char *color = it[i].color ? it[i].color : "#333";

		if (it[i].band)
			fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"18\" height=\"9\" fill=\"%s\" "
				"fill-opacity=\"0.3\" stroke=\"%s\" stroke-opacity=\"0.6\"/>", x[i], y - 5, color, color);
		else
			fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
				"stroke-width=\"3\"%s/>", x[i], y, x[i] + 18, y, color,
				it[i].dashed ? " stroke-dasharray=\"5 3\"" : "");
		fprintf(out, "<text x=\"%.1f\" y=\"%.1f\">", x[i] + 22, y + 4);
		vt_html_text(out, it[i].label);
		fputs("</text>\n", out);
	}
}

/*
 * The marks' labels along the foot of the plot, each in the lowest row
 * where it does not run into one already placed (a restart beside a step);
 * a label with no room in MARK_ROWS rows is left out, its line stays.
 */
static void mark_labels(FILE *out, const struct frame *f, const struct vt_chart_mark *marks, size_t n)
{
	double used_lo[MARK_ROWS][16], used_hi[MARK_ROWS][16];
	size_t nused[MARK_ROWS] = { 0 };

	for (size_t k = 0; k < n; k++) {
		const struct vt_chart_mark *m = &marks[k];
		double x, w, a, b;
		bool right;
		int r;

		if (!m->label || !isfinite(m->x) || m->x < f->x.lo || m->x > f->x.hi)
			continue;
		x = px(f, m->x);
		w = text_px(m->label);
		right = x + 4 + w > f->left + f->w;
		a = right ? x - 4 - w : x + 4;
		b = a + w;
		for (r = 0; r < MARK_ROWS; r++) {
			size_t j;

			for (j = 0; j < nused[r]; j++)
				if (a < used_hi[r][j] + 6 && used_lo[r][j] < b + 6)
					break;
			if (j == nused[r] && nused[r] < 16)
				break;
		}
		if (r == MARK_ROWS)
			continue;
		used_lo[r][nused[r]] = a;
		used_hi[r][nused[r]++] = b;
		fprintf(out, "<text x=\"%.1f\" y=\"%.1f\"%s>", right ? x - 4 : x + 4,
			f->top + f->h - 6 - 13.0 * r, right ? " text-anchor=\"end\"" : "");
		vt_html_text(out, m->label);
		fputs("</text>\n", out);
	}
}

int vt_svg_chart(FILE *out, const struct vt_chart *c)
{
	int width = c->width > 0 ? c->width : 960, height = c->height > 0 ? c->height : 280;
	/* the chart's vertices are shared by its lines: two per bucket, a band a quarter as fine */
	size_t budget = (c->max_vertices ? c->max_vertices : 1000) / (c->nlines ? c->nlines : 1);
	size_t buckets = budget / 2 ? budget / 2 : 1, k;
	const char *id = c->id ? c->id : "chart";
	size_t nlegend = 0;
	struct legend_item *legend = calloc(c->nlines + c->nbands + 1, sizeof(*legend));
	double *legend_x = calloc(c->nlines + c->nbands + 1, sizeof(*legend_x));
	int *legend_row = calloc(c->nlines + c->nbands + 1, sizeof(*legend_row)), rows;
	double xlo, xhi, ylo, yhi, t;
	struct frame f;
	char buf[64];
	int rc = 0;

	if (!legend || !legend_x || !legend_row) {
		free(legend);
		free(legend_x);
		free(legend_row);
		return -1;
	}
	/* the legend: the lines, then the shaded stretches (their labels never sit on the data) */
	for (k = 0; k < c->nlines; k++)
		legend[nlegend++] = (struct legend_item){ c->lines[k].label, c->lines[k].color, false,
							  c->lines[k].dashed };
	for (k = 0; k < c->nbands; k++)
		if (c->bands[k].label)
			legend[nlegend++] = (struct legend_item){ c->bands[k].label,
								  c->bands[k].color ? c->bands[k].color : "#2ca02c",
								  true, false };
	data_range(c, &xlo, &xhi, &ylo, &yhi);
	if (isfinite(c->x_min))
		xlo = c->x_min;
	if (isfinite(c->x_max))
		xhi = c->x_max;
	f.left = 78;
	f.w = width - f.left - 16;
	rows = legend_layout(legend, nlegend, f.left, f.left + f.w, legend_x, legend_row);
	/* each legend row past the first adds to the chart's height, not takes from the plot */
	height += (int)(LEGEND_ROW_PX * (rows - 1));
	f.top = 44 + LEGEND_ROW_PX * (rows - 1);
	f.h = height - f.top - 36;

	fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"", width, height, width, height);
	vt_html_text(out, c->title);
	fputs("\">\n", out);
	fputs("<text class=\"t\" x=\"4\" y=\"16\">", out);
	vt_html_text(out, c->title);
	fputs("</text>\n", out);

	if (!isfinite(xlo) || !isfinite(xhi) || !isfinite(ylo) || !isfinite(yhi)) {
		fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
			"stroke=\"#ccc\"/>\n<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">no data</text>\n"
			"</svg>\n", f.left, f.top, f.w, f.h, f.left + f.w / 2, f.top + f.h / 2);
		free(legend);
		free(legend_x);
		free(legend_row);
		return ferror(out) ? -1 : 0;
	}
	if (c->y_zero && ylo > 0)
		ylo = 0;
	if (yhi - ylo < c->y_min_span) {
		double mid = (yhi + ylo) / 2, half = c->y_min_span / 2;
		bool nonneg = ylo >= 0;

		ylo = mid - half;
		yhi = mid + half;
		if (nonneg && ylo < 0) {
			/* data that is never negative keeps the axis at 0 or above */
			yhi -= ylo;
			ylo = 0;
		}
	}
	if (yhi <= ylo)
		yhi = ylo + (c->y_unit == VT_CHART_BYTES ? MiB : 1);
	y_axis(&f.y, c->y_unit, ylo, yhi);
	x_axis(&f.x, xlo, xhi);

	legend_draw(out, legend, nlegend, legend_x, legend_row);
	free(legend);
	free(legend_x);
	free(legend_row);

	fprintf(out, "<defs><clipPath id=\"%s-plot\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
		"height=\"%.1f\"/></clipPath></defs>\n", id, f.left, f.top, f.w, f.h);

	/* bands under everything */
	for (k = 0; k < c->nbands; k++) {
		const struct vt_chart_band *b = &c->bands[k];
		double x0 = fmax(b->x0, f.x.lo), x1 = fmin(b->x1, f.x.hi);

		if (!isfinite(x0) || !isfinite(x1) || x1 <= x0)
			continue;
		fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
			"fill-opacity=\"0.12\"/>\n", px(&f, x0), f.top, px(&f, x1) - px(&f, x0), f.h,
			b->color ? b->color : "#2ca02c");
	}

	/* grid and ticks (at most 50 a side, whatever the arithmetic does at huge values) */
	for (t = f.y.lo, k = 0; t <= f.y.hi + f.y.step / 2 && k < 50; t += f.y.step, k++) {
		fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e6e6e6\"/>"
			"<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", f.left, py(&f, t),
			f.left + f.w, py(&f, t), f.left - 6, py(&f, t) + 4, tick_label(&f.y, t, buf, sizeof(buf)));
	}
	for (t = ceil(f.x.lo / f.x.step) * f.x.step, k = 0; t <= f.x.hi + 1e-9 && k < 50; t += f.x.step, k++) {
		fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\"/>"
			"<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", px(&f, t),
			f.top + f.h, px(&f, t), f.top + f.h + 4, px(&f, t), f.top + f.h + 16,
			tick_label(&f.x, t, buf, sizeof(buf)));
	}
	fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#999\"/>\n",
		f.left, f.top, f.w, f.h);
	if (c->x_title) {
		fprintf(out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" class=\"small\">",
			f.left + f.w / 2, height - 4);
		vt_html_text(out, c->x_title);
		fputs("</text>\n", out);
	}

	/* ranges, then lines, then marks on top */
	fprintf(out, "<g clip-path=\"url(#%s-plot)\">\n", id);
	for (k = 0; k < c->nlines && !rc; k++) {
		const struct vt_chart_line *l = &c->lines[k];

		if (!l->ylo || !l->yhi)
			continue;
		fputs("<path d=\"", out);
		rc = band_path(out, &f, l, buckets / 4 ? buckets / 4 : 1);
		fprintf(out, "\" fill=\"%s\" fill-opacity=\"0.15\" stroke=\"none\"/>\n", l->color ? l->color : "#333");
	}
	for (k = 0; k < c->nlines; k++) {
		const struct vt_chart_line *l = &c->lines[k];

		fputs("<path d=\"", out);
		line_path(out, &f, l, buckets);
		fprintf(out, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\" stroke-linejoin=\"round\"%s/>\n",
			l->color ? l->color : "#333", l->dashed ? " stroke-dasharray=\"6 4\"" : "");
		/* dots where points are few enough to tell apart */
		for (size_t i = 0; l->dots && l->n <= 200 && i < l->n; i++)
			if (isfinite(l->x[i]) && isfinite(l->y[i]))
				fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"/>\n", px(&f, l->x[i]),
					py(&f, l->y[i]), l->color ? l->color : "#333");
	}
	fputs("</g>\n", out);
	for (k = 0; k < c->nmarks; k++) {
		const struct vt_chart_mark *m = &c->marks[k];

		if (!isfinite(m->x) || m->x < f.x.lo || m->x > f.x.hi)
			continue;
		fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
			"stroke-width=\"1.5\"/>\n", px(&f, m->x), f.top, px(&f, m->x), f.top + f.h,
			m->color ? m->color : "#ff7f0e");
	}
	mark_labels(out, &f, c->marks, c->nmarks);
	fputs("</svg>\n", out);
	return rc || ferror(out) ? -1 : 0;
}

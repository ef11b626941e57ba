/*
 * svg_chart.h — a small line-chart writer for the HTML views: inline SVG,
 * no scripts, no external references.  x is time in seconds (ticks in s,
 * min, h or d), y is bytes (ticks in KiB/MiB/GiB), a count or cores.
 *
 * Lines of up to VT_SERIES_MAX_POINTS points are squeezed to about
 * max_vertices per chart, shared by its lines: the points are cut into
 * buckets along x, and each bucket keeps its lowest and its highest point,
 * in time order, so a spike survives.  A non-finite y breaks the line (a restart, a gap, unknown).
 *
 * Also the HTML the views share: escaped text, and the page around the charts.
 */
#ifndef VT_RENDER_SVG_CHART_H
#define VT_RENDER_SVG_CHART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum vt_chart_unit {
	VT_CHART_BYTES,
	VT_CHART_COUNT,
	VT_CHART_CORES,
};

struct vt_chart_line {
	const char *label;            /* legend text */
	const char *color;            /* CSS colour, "#1f77b4" */
	const double *x, *y;          /* n points, x ascending */
	const double *ylo, *yhi;      /* optional: the range of each point, drawn as a light band */
	size_t n;
	bool dashed;
	bool dots;                    /* a dot at each point (a few points apart, such as profiles) */
};

/* A shaded stretch of time, e.g. a settled window. */
struct vt_chart_band {
	double x0, x1;
	const char *label;
	const char *color;
};

/* A vertical line at one time, e.g. a step. */
struct vt_chart_mark {
	double x;
	const char *label;
	const char *color;
};

struct vt_chart {
	const char *id;               /* unique in the page (clip path); letters and digits */
	const char *title;
	const char *x_title;          /* "time since the soak began" */
	enum vt_chart_unit y_unit;
	int width, height;            /* 0: 960 x 280 */
	double x_min, x_max;          /* NAN: from the lines */
	double y_min_span;            /* the y axis spans at least this much, so noise does not fill it */
	bool y_zero;                  /* the y axis starts at 0 */
	size_t max_vertices;          /* per chart after squeezing (bands add half as many), 0: 1000 */
	const struct vt_chart_line *lines;
	size_t nlines;
	const struct vt_chart_band *bands;
	size_t nbands;
	const struct vt_chart_mark *marks;
	size_t nmarks;
};

/* Eight colours that tell apart on white, for lines and arms. */
extern const char *const vt_chart_palette[8];

/* Writes one <svg> element.  Returns 0, or -1 when out of memory or out fails. */
int vt_svg_chart(FILE *out, const struct vt_chart *c);

/* Length of the valid UTF-8 sequence at s (1 for ASCII), 0 when the byte at s does not start one. */
size_t vt_utf8_len(const unsigned char *s);
/* Text escaped for HTML content and attribute values; bytes that are not UTF-8 become U+FFFD. */
void vt_html_text(FILE *out, const char *s);
/* One table cell of escaped text; num: a figure, right-aligned (class "n"). */
void vt_html_td(FILE *out, bool num, const char *text);
/* <!DOCTYPE html> ... <body>, with the views' inline CSS and an escaped <title>. */
void vt_html_begin(FILE *out, const char *title);
void vt_html_end(FILE *out);

#endif

/*
 * alloc_trend.h (render) — a soak's stored allocation profiles in the
 * views of vitals analyze (each profile's rates and its top sites over
 * time, then every site pooled) and vitals compare (sites, B against A,
 * with the churn change that matters most), as text, JSON and HTML.
 */
#ifndef VT_RENDER_ALLOC_TREND_H
#define VT_RENDER_ALLOC_TREND_H

#include "base/json_lib.h"

#include <stdio.h>

#include "analyze/alloc_trend.h"

/* Sites shown as columns of the over-time table; sites listed in the pooled table. */
#define VT_ALLOC_TREND_COLUMNS 4
#define VT_ALLOC_TREND_SITES 12

/* The text section; nothing when t is NULL or holds no profiles.  -1 on a write error. */
int vt_render_alloc_trend_text(FILE *out, const struct vt_alloc_trend *t);
/* The JSON object ("allocs" of vitals.analyze), a new reference; NULL out of memory. */
json_t *vt_render_alloc_trend_json(const struct vt_alloc_trend *t);

/* B against A (labels a, b); nothing when neither side has profiles. */
int vt_render_alloc_diff_text(FILE *out, const struct vt_alloc_diff *d, const char *a, const char *b);
json_t *vt_render_alloc_diff_json(const struct vt_alloc_diff *d, const char *a, const char *b);

/*
 * The HTML sections.  analyze: a chart of the top
 * sites' bytes per second at each profile (x from x_min to x_max, the
 * page's other charts' time axis; NAN: the profiles'), then the pooled
 * table.  compare: the headline and the sites' table.  Nothing when there
 * are no profiles; -1 out of memory or on a write error.
 */
int vt_render_alloc_trend_html(FILE *out, const struct vt_alloc_trend *t, double x_min, double x_max);
int vt_render_alloc_diff_html(FILE *out, const struct vt_alloc_diff *d, const char *a, const char *b);

#endif

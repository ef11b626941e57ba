/*
 * profile_trend.h — a soak's stored profiles in the views of vitals analyze
 * ("CPU by bucket over time" and which bucket grew when CPU rose) and
 * vitals compare (bucket and function deltas), as text, JSON and HTML.
 */
#ifndef VT_RENDER_PROFILE_TREND_H
#define VT_RENDER_PROFILE_TREND_H

#include "base/json_lib.h"

#include <stdbool.h>
#include <stdio.h>

#include "analyze/profile_trend.h"

/* Buckets shown as columns of the text table, the largest first; the rest are in JSON. */
#define VT_PROF_TREND_COLUMNS 5

/* The text section; nothing when t is NULL or holds no profiles.  -1 on a write error. */
int vt_render_prof_trend_text(FILE *out, const struct vt_prof_trend *t);
/*
 * The buckets to show as columns: those seen, by their largest share in any
 * profile, largest first; at most max of them into cols.  Returns how many.
 */
uint32_t vt_render_prof_trend_columns(const struct vt_prof_trend *t, uint32_t *cols, uint32_t max);
/* The JSON object ("profiles" of vitals.analyze), a new reference; NULL out of memory. */
json_t *vt_render_prof_trend_json(const struct vt_prof_trend *t);

/* B against A (labels a, b); nothing when either side has no profiles. */
int vt_render_prof_diff_text(FILE *out, const struct vt_prof_diff *d, const char *a, const char *b);
json_t *vt_render_prof_diff_json(const struct vt_prof_diff *d, const char *a, const char *b);

/*
 * The HTML sections (profile_trend_html.c).  analyze: a chart of each
 * bucket's CPU at each profile (x from x_min to x_max, the page's other
 * charts' time axis; NAN: the profiles'), the table and the finding.
 * compare: the bucket and function tables, linking flame (a file beside
 * the page, by its name; NULL none).  Nothing when there are no profiles;
 * -1 out of memory or on a write error.
 */
int vt_render_prof_trend_html(FILE *out, const struct vt_prof_trend *t, double x_min, double x_max);
int vt_render_prof_diff_html(FILE *out, const struct vt_prof_diff *d, const char *a, const char *b,
			     const char *flame);

#endif

/*
 * profile_trend.h — a soak's stored profiles in the views of vitals analyze
 * ("CPU by bucket over time" and which bucket grew when CPU rose) and
 * vitals compare (bucket and function deltas), as text and as JSON.
 */
#ifndef VT_RENDER_PROFILE_TREND_H
#define VT_RENDER_PROFILE_TREND_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "analyze/profile_trend.h"

/* Buckets shown as columns of the text table, the largest first; the rest are in JSON. */
#define VT_PROF_TREND_COLUMNS 5

/* The text section; nothing when t is NULL or holds no profiles.  -1 on a write error. */
int vt_render_prof_trend_text(FILE *out, const struct vt_prof_trend *t);
/* The JSON object ("profiles" of vitals.analyze), a new reference; NULL out of memory. */
json_t *vt_render_prof_trend_json(const struct vt_prof_trend *t);

/* B against A (labels a, b); nothing when either side has no profiles. */
int vt_render_prof_diff_text(FILE *out, const struct vt_prof_diff *d, const char *a, const char *b);
json_t *vt_render_prof_diff_json(const struct vt_prof_diff *d, const char *a, const char *b);

#endif

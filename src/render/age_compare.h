/*
 * age_compare.h (render) — the views of incarnations compared at matched
 * age (analyze/age_compare.h): text, JSON (schema vitals.compare_age,
 * docs/json.md) and one self-contained HTML page whose charts put every
 * incarnation against its age since start.  All read one struct
 * vt_age_comparison; each window is rendered as compare renders its table.
 */
#ifndef VT_RENDER_AGE_COMPARE_H
#define VT_RENDER_AGE_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "analyze/age_compare.h"

struct vt_age_report {
	const struct vt_age_comparison *cmp;
	char *const *paths;           /* the recordings read, npaths */
	size_t npaths;
	bool utf8;
};

int vt_render_age_text(FILE *out, const struct vt_age_report *r);
int vt_render_age_json(FILE *out, const struct vt_age_report *r);
int vt_render_age_html(FILE *out, const struct vt_age_report *r);

/*
 * What every view says in the same words (age_words.c).
 * vt_age_arm_line: "pid 4101, started 2026-12-07 02:40:01 UTC (12 s before
 * the soak began), reached t+2.0 min, exited".  vt_age_headline: "at t+8.5
 * min: committed 40.1 MiB (#1) vs 72.3 MiB (#2), +32.2 MiB (+80%)".
 * vt_age_basis: where the ages count from.  Each returns buf.
 */
const char *vt_age_arm_line(const struct vt_age_comparison *c, size_t i, char *buf, size_t cap);
const char *vt_age_headline(const struct vt_age_comparison *c, char *buf, size_t cap);
const char *vt_age_basis(const struct vt_age_comparison *c, char *buf, size_t cap);
/* "t+8.5 min" */
const char *vt_fmt_age(double age_s, char *buf, size_t cap);

#endif

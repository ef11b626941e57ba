/*
 * census.h (render) — views of a heap census: text and JSON
 * ("vitals.census"), and how a string found in the target is shown.
 *
 * Strings from the target's memory are secrets until the user says
 * otherwise: by default they are shown as length, a short hash and their
 * first 4 characters (sample/content.h vt_content_redact); with reveal
 * their first VT_CONTENT_HEAD bytes, escaped.  Fragments likewise (all
 * their bytes, up to VT_FRAGMENT_MAX, with reveal).
 */
#ifndef VT_RENDER_CENSUS_H
#define VT_RENDER_CENSUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "sample/census.h"

struct vt_census_report {
	const struct vt_census *census;
	bool reveal;                 /* show strings, not their redacted form */
};

#define VT_CENSUS_SHOWN_MAX (4 * VT_CONTENT_HEAD + 64)   /* holds any shown string */

/* A string of the census as it may be shown, into buf (cap bytes); returns buf. */
const char *vt_render_census_string(const struct vt_content_string *s, bool reveal, char *buf, size_t cap);

#define VT_CENSUS_FRAGMENT_SHOWN_MAX (4 * VT_FRAGMENT_MAX + 64)   /* holds any shown fragment */

/* A fragment of the census as it may be shown (redacted as a string is), into buf (cap bytes); returns buf. */
const char *vt_render_census_fragment(const struct vt_fragment *f, bool reveal, char *buf, size_t cap);

/* Free chunks' bytes and chunks, all arenas (bins, fast, tcache, top). */
uint64_t vt_census_free_bytes(const struct vt_census *c);
/* Live chunks' bytes, all arenas and the mmapped chunks. */
uint64_t vt_census_live_bytes(const struct vt_census *c);

int vt_render_census_text(FILE *out, const struct vt_census_report *r);
int vt_render_census_json(FILE *out, const struct vt_census_report *r);

#endif

/*
 * profile_json.h — `vitals profile --json`, schema "vitals.profile"
 * version 1 (docs/json.md): the same summary the text view shows, every
 * figure with its unit in its key, unknown figures null, names from the
 * target as valid UTF-8 strings.
 */
#ifndef VT_RENDER_PROFILE_JSON_H
#define VT_RENDER_PROFILE_JSON_H

#include <stdbool.h>
#include <stdio.h>

#include "base/json_lib.h"

#include "analyze/profile_summary.h"

/* The document as a new reference (NULL out of memory): for views that embed it (HTML). */
json_t *vt_profile_json(const struct vt_prof_summary *s);

/* compact: one line.  0, or -1 when the output could not be written. */
int vt_render_profile_json(FILE *out, const struct vt_prof_summary *s, bool compact);

#endif

/*
 * allocs.h (render) — an allocation profile (sample/allocs.h) as text and
 * as JSON ("vitals.allocs" v1, docs/json.md).
 *
 * Rates are per second of armed time: what the target allocated while the
 * probes were in, when its allocating code ran slower.  Fates are within
 * one window (meta.window_s): "freed" means freed before the window closed,
 * "live" still live when it closed.  Return 0, or -1 when the output could
 * not be written.
 */
#ifndef VT_RENDER_ALLOCS_H
#define VT_RENDER_ALLOCS_H

#include <stdbool.h>
#include <stdio.h>

#include "sample/allocs.h"

/* The verdict on the site that allocates the most bytes: "churn", "retention",
 * "mixed" or "cannot tell yet", with its sentence into buf. */
const char *vt_render_allocs_verdict(const struct vt_allocs *a, char *buf, size_t cap);

int vt_render_allocs_text(FILE *out, const struct vt_allocs *a, size_t max_sites);
int vt_render_allocs_json(FILE *out, const struct vt_allocs *a, bool compact);

#endif

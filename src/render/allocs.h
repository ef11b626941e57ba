/*
 * allocs.h (render) — an allocation profile (sample/allocs.h) as text, as
 * JSON ("vitals.allocs" v1, docs/json.md), as exports (folded, pprof) and
 * as an HTML page.
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
#include <stdint.h>
#include <stdio.h>

#include "analyze/alloc_buckets.h"
#include "sample/allocs.h"

/* The verdict on the site that allocates the most bytes: "churn", "retention",
 * "mixed" or "cannot tell yet", with its sentence into buf. */
const char *vt_render_allocs_verdict(const struct vt_allocs *a, char *buf, size_t cap);
/* A span of the run: "350 ms" under 2 s, longer ones as vt_fmt_span writes them. */
const char *vt_render_allocs_span(double s, char *buf, size_t cap);

/* b: the sites by bucket (analyze/alloc_buckets.h), NULL none. */
int vt_render_allocs_text(FILE *out, const struct vt_allocs *a, const struct vt_alloc_buckets *b, size_t max_sites);
/* Folded stacks, one per site (its first stack seen), weighing its bytes or its calls. */
int vt_render_allocs_folded(FILE *out, const struct vt_allocs *a, bool bytes);
/* pprof with Go's heap sample types: alloc_objects, alloc_space (the default),
 * inuse_objects, inuse_space (live when the window closed).  VT_E_* with err. */
int vt_render_allocs_pprof(FILE *out, const struct vt_allocs *a, int64_t time_nanos, struct vt_err *err);
int vt_render_allocs_json(FILE *out, const struct vt_allocs *a, const struct vt_alloc_buckets *b, bool compact);
/*
 * One self-contained page (render/profile_html.h): the flame graph of the
 * sites' stacks, each weighing the bytes its site allocated, beside the
 * sites by bytes (each site's frame in its row's colour), under what was
 * probed, what it cost and the verdict.  VT_E_NOMEM or VT_E_IO with err.
 */
int vt_render_allocs_html(FILE *out, const struct vt_allocs *a, struct vt_err *err);

#endif

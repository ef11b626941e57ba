/*
 * render.h — the views of a snap (struct vt_sample, one or more processes)
 * and what they share; render/view.h puts them in the table of views.
 */
#ifndef VT_RENDER_RENDER_H
#define VT_RENDER_RENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sample/metric.h"
#include "sample/sample.h"

/* A pid that could not be sampled: reported, never rendered as zeros. */
struct vt_snap_failure {
	pid_t pid;
	struct vt_err err;
};

struct vt_snap_report {
	const struct vt_sample *samples;
	size_t n;
	const struct vt_snap_failure *failures;
	size_t n_failures;
	uint64_t min_region;          /* regions at or above this size are listed */
	bool all_regions;             /* list every region, guards included */
	const char *title;            /* optional heading, e.g. arm names in the demo */
	const char *const *labels;    /* optional column label per sample (n entries) */
};

int vt_render_snap_text(FILE *out, const struct vt_snap_report *report);
int vt_render_snap_json(FILE *out, const struct vt_snap_report *report);

/* Regions worth listing under the report's rules (asked of every mapping: inline). */
static inline bool vt_region_listed(const struct vt_region *r, const struct vt_snap_report *report)
{
	if (report->all_regions)
		return true;
	/* Reservations and guards hold no memory; the arena summary covers them. */
	if (r->kind == VT_REGION_ARENA_RESERVE || r->kind == VT_REGION_GUARD)
		return false;
	return vt_region_size(r) >= report->min_region;
}
/* "layout+memory" style evidence text for a region (static buffer per call site). */
const char *vt_region_evidence(const struct vt_region *r, char *buf, size_t cap);

#endif

/*
 * view.h — the one table of views: for each output format (text, json, csv,
 * html) the function that renders each report, NULL where that format does
 * not exist for it.  Every command renders through it, so adding a format to
 * a command is a cell here and a function in render/.  Each function returns
 * 0, or -1 when the output could not be written (or memory ran out).
 */
#ifndef VT_RENDER_VIEW_H
#define VT_RENDER_VIEW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "render/age_compare.h"
#include "render/caps.h"
#include "render/census.h"
#include "render/heap.h"
#include "render/render.h"
#include "render/soak.h"
#include "render/threads.h"

/* vitals heap: a sample and its verdict. */
struct vt_heap_report {
	const struct vt_heap_sample *sample;
	const struct vt_heap_verdict *verdict;
	uint64_t page_size;
	const struct vt_heap_refill *refill;   /* --trim --follow: the refill; NULL none */
};

/* vitals threads: one interval's rates and their diagnosis. */
struct vt_threads_report {
	const struct vt_threads_rates *rates;
	const struct vt_diagnosis *diagnosis;
	struct vt_threads_view view;     /* text: which threads, in which order */
	bool compact;                    /* json: one line (JSON Lines, for repeated reports) */
};

struct vt_view {
	const char *name;                /* "text", "json", "csv", "html" */
	int (*snap)(FILE *out, const struct vt_snap_report *r);
	int (*heap)(FILE *out, const struct vt_heap_report *r);
	int (*threads)(FILE *out, const struct vt_threads_report *r);
	int (*analyze)(FILE *out, const struct vt_analyze_report *r);   /* csv: the series, a row per point */
	int (*compare)(FILE *out, const struct vt_compare_report *r);
	int (*census)(FILE *out, const struct vt_census_report *r);
	int (*caps)(FILE *out, const struct vt_caps_report *r);
	int (*age)(FILE *out, const struct vt_age_report *r);           /* compare --by-age */
};

/* The view called name; NULL when there is none. */
const struct vt_view *vt_view(const char *name);

#endif

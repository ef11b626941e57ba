/*
 * profile_html.h — a profile as one self-contained HTML page: a flame
 * graph (inline SVG drawn by a small script, nothing fetched, opens
 * offline) beside the bucket table.
 *
 * The flame graph has its root at the bottom; a frame's width is its share
 * of the samples counted (or of what the caller weighs each stack by,
 * stack_weight in unit: vitals allocs draws the bytes each site asked for).
 * Clicking a frame zooms to it (its callers stay, faded), "reset zoom" goes
 * back; the search box highlights every frame whose name holds the text
 * (case-insensitive) and shows the share of samples under a match;
 * hovering shows the frame's name, samples and share; "#q=text" at the end
 * of the page's URL fills the search box when it opens.  Frames are
 * coloured by module (kernel frames apart), or by bucket when the caller
 * says which bucket each location's frame belongs to.
 *
 * Differential mode (a base profile given): the graph is drawn from the
 * profile and each frame is coloured by how its share of samples changed
 * from the base (red grew, blue shrank, grey the same), the tooltip giving
 * both shares; frames only in the base are not drawn.
 *
 * The table is written as HTML (readable without scripts); the stacks go
 * in a <script type="application/json"> block with every '<', '>' and '&'
 * written as \u003c, \u003e, \u0026, and the script puts names in the page
 * only as text (never as markup), so a symbol named "</script><script>..."
 * is shown, never run.  Nothing is printed; errors come back as VT_E_*
 * codes with details in err.
 */
#ifndef VT_RENDER_PROFILE_HTML_H
#define VT_RENDER_PROFILE_HTML_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/error.h"
#include "sample/profile.h"

/* One row of the bucket table, as the summary (analyze) worked it out. */
struct vt_html_bucket_row {
	const char *name;         /* "network send/recv" */
	double share;             /* of the samples counted, 0..1 */
	double ci;                /* ± half-width of its confidence interval, 0..1; < 0 unknown */
	uint64_t samples;         /* or the row's weight, in the page's unit */
};

struct vt_profile_html {
	const char *title;        /* heading and <title>; NULL: "vitals profile PID (comm)" */
	const char *source;       /* what was sampled, first under the heading (several
	                           * profiles pooled); NULL: "pid PID (comm)" */
	const struct vt_profile *profile;
	unsigned states;          /* which samples the graph counts: VT_PROF_STATE_BIT()s
	                           * (render/profile_folded.h), 0 all */
	const struct vt_html_bucket_row *buckets;   /* the table beside the graph, in order */
	size_t nbuckets;
	/* Optional: profile->nlocs entries, the bucket row (index into buckets) that
	 * claims each location's frame, -1 none.  Given: frames coloured by bucket. */
	const int32_t *loc_bucket;

	/* Differential mode: NULL for a plain flame graph. */
	const struct vt_profile *base;
	unsigned base_states;     /* which samples of base count, as states */
	const char *label;        /* what profile is, e.g. "after" (NULL: "this profile") */
	const char *base_label;   /* what base is, e.g. "before" (NULL: "base") */

	/* Weights other than samples, and the words around them (all NULL: a sampled
	 * profile's page, as above).  stack_weight: profile->nstacks entries, the weight
	 * each stack is drawn with instead of its count (graph totals, frame widths,
	 * search); 0 leaves a stack out.  Not for base. */
	const uint64_t *stack_weight;
	/* What the weights count, in the graph's total, note, tooltips and search, and
	 * the table's column: NULL "samples"; "bytes" written as sizes ("12.3 MiB"). */
	const char *unit;
	/* Spans said instead of how the profile was sampled (method, rate, duration,
	 * samples, lost, the states drawn, the target's exit), NULL-terminated, plain
	 * text; NULL: those.  The graph's total is said after them either way. */
	const char *const *about;
	const char *lead;         /* a sentence in a paragraph of its own under them, plain
	                           * text (allocs: its verdict); NULL none */
	const char *table_key;    /* the table's first column: NULL "bucket" */
	const char *table_note;   /* under the table, plain text: NULL "share of on-CPU
	                           * samples by top of stack" or the like for states */
};

/*
 * Write the page for r to out.  VT_E_NOMEM when memory runs out, VT_E_IO
 * when writing fails (out then holds part of a page).
 */
int vt_profile_html_write(FILE *out, const struct vt_profile_html *r, struct vt_err *err);

#endif

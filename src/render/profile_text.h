/*
 * profile_text.h — `vitals profile` as text: the bucket table with its ±
 * figures and the idle waits apart, in wall mode each bucket's wall time
 * split into running, runnable and waiting, the top functions by self and
 * by total, threads and pools beside their measured CPU, and how the
 * profile was taken (method, rate, samples kept and lost, kernel names,
 * overhead, the unwinding method per module).
 *
 * Honest about little data: with fewer than VT_PROF_FEW_SAMPLES on-CPU
 * samples it says it cannot tell yet which bucket leads, and a bucket
 * whose interval overlaps the next one's is marked.  Every name from the
 * target (thread names, symbols, modules, waits) is made safe for a
 * terminal.  Reads only the summary.
 */
#ifndef VT_RENDER_PROFILE_TEXT_H
#define VT_RENDER_PROFILE_TEXT_H

#include <stdint.h>
#include <stdio.h>

#include "analyze/profile_summary.h"

struct vt_profile_text_opts {
	uint32_t top;             /* rows per top-function list; 0: 10 (at most the summary's) */
	uint32_t max_threads;     /* thread rows; 0: 20; a line counts the rest */
	uint32_t columns;         /* the width the function tables keep to (a terminal's);
	                           * 0: 120.  Names are shortened to fit (vt_name_shorten) */
	bool wide;                /* names whole, however wide */
};

/* opts NULL: defaults.  0, or -1 when the output could not be written. */
int vt_render_profile_text(FILE *out, const struct vt_prof_summary *s,
			   const struct vt_profile_text_opts *opts);

#endif

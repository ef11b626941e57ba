/*
 * compare.h — did the change help?  The report's A/B table: each recording
 * summarised over its settled window (or, when it never settled, its last
 * half, said so), and every arm set against the first (the baseline).
 */
#ifndef VT_ANALYZE_COMPARE_H
#define VT_ANALYZE_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

#include "analyze/mem_limit.h"
#include "analyze/soak.h"
#include "base/error.h"
#include "sample/series.h"

/*
 * The rows of the table are the metrics flagged VT_MF_COMPARE
 * (sample/metric.h), in their order; cell[] and diff[] are indexed by
 * enum vt_metric and unknown for the others.
 */

/* One figure of one arm over its window. */
struct vt_cmp_cell {
	bool known;
	double median;               /* the figure shown */
	double lo, hi;               /* its range in the window (5th..95th percentile of points) */
	double noise;                /* robust sd in the window */
};

struct vt_cmp_arm {
	const char *name;            /* borrowed: arm name or file name */
	const struct vt_series *series;   /* borrowed */
	struct vt_soak_verdict verdict;
	bool window_settled;         /* false: the window is the last half, the arm never settled */
	double window_t0, window_t1;
	size_t window_samples;
	struct vt_cmp_cell cell[VT_M_COUNT];
	struct vt_mem_limit limit;   /* the memory limit its recording supports (analyze/mem_limit.h) */
	unsigned trims;              /* malloc_trim(0) calls the soak made in it (VT_EV_TRIM, experiment
	                              * --trim-every), over the whole recording */
	unsigned window_trims;       /* ... inside its window */
};

/* An arm against the baseline (arm 0), one field. */
struct vt_cmp_diff {
	bool known;
	double delta;                /* arm - baseline */
	double pct;                  /* delta / baseline * 100, NAN when the baseline is 0 */
	bool within_noise;           /* |delta| is within both arms' noise and ranges overlap */
	bool trimmed;                /* a memory row of an arm the soak trimmed periodically (either
	                              * side: vt_cmp_arm_trimmed): its range is the swing
	                              * between trims, not noise, so no noise judgement (within_noise
	                              * false); the medians are set side by side as they are */
};

/*
 * Did the soak trim the arm periodically: at least VT_CMP_PERIODIC_TRIMS
 * trims in the recording, one of them or more inside its window?  Its
 * memory then swings between trims: a sawtooth, not noise.
 */
#define VT_CMP_PERIODIC_TRIMS 2
bool vt_cmp_arm_trimmed(const struct vt_cmp_arm *arm);

struct vt_comparison {
	size_t narms;
	struct vt_cmp_arm *arms;             /* owned array, narms */
	struct vt_cmp_diff (*diff)[VT_M_COUNT];     /* owned, narms rows; row 0 is all unknown */
	size_t other_command;                /* the first arm whose recording ran another program
	                                      * than arm 0's (its target as recorded), 0 none */
};

/*
 * Compare n recordings; names[i] labels series[i].  Returns 0, or -1 on out
 * of memory.  Release with vt_comparison_free.
 */
int vt_compare(const struct vt_series *const *series, const char *const *names, size_t n,
	       const struct vt_soak_opts *opts, struct vt_comparison *out);
void vt_comparison_free(struct vt_comparison *c);

/*
 * The cells of every row over points [a, b) of s (what each arm's window
 * gets; compare by age uses it on windows of matched age).  Rows that are
 * not VT_MF_COMPARE, and rows with no point in the range, are unknown.
 * Returns 0, or -1 on out of memory.
 */
int vt_cmp_cells(const struct vt_series *s, size_t a, size_t b, struct vt_cmp_cell cell[VT_M_COUNT]);
/* c against base on metric m, with the noise judgement above (unknown when either is). */
void vt_cmp_diff_cells(enum vt_metric m, const struct vt_cmp_cell *base, const struct vt_cmp_cell *c,
		       struct vt_cmp_diff *d);

/* Is m a row of the table, and did any arm record it?  (A row no arm has is left out of the views.) */
bool vt_cmp_row_recorded(const struct vt_comparison *c, enum vt_metric m);

/* Recordings read for a comparison, their labels, and the comparison. */
struct vt_compare_set {
	size_t n;
	struct vt_series *series;        /* owned, n */
	char (*labels)[64];              /* owned, n */
	const char **label_ptrs;         /* owned, n: labels[i] */
	struct vt_comparison cmp;        /* its arms borrow series and labels */
};

/*
 * Read n recordings (store/store.h) and compare them on metric, the first
 * being the baseline.  Recording i is labelled by the i-th of the
 * comma-separated names (may be NULL or shorter), else by the experiment
 * arm it was recorded as, else by its file name without ".db"; labels that
 * would be the same get their folder ("a/run", "b/run"), then their
 * position ("run #2").  Errors: those of vt_store_load (the message names
 * the file), VT_E_NOMEM; *out is then empty.  Release with
 * vt_compare_set_release.
 */
int vt_compare_files(char *const *paths, size_t n, const char *names, enum vt_metric metric,
		     struct vt_compare_set *out, struct vt_err *err);
void vt_compare_set_release(struct vt_compare_set *s);

#endif

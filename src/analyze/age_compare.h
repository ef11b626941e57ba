/*
 * age_compare.h — a restart A/B at matched age: incarnations of a service
 * (the processes a soak followed across restarts, or the processes of two
 * recordings) side by side on windows of the same age since each process
 * started, "at t+83 min: committed 1458 vs 1488 MiB", with compare's cells
 * and noise judgement (compare.h) on each window.
 *
 * Age is since the process's start as the soak read it (series.h struct
 * vt_process_start); a recording made before vitals recorded starts counts
 * an incarnation's age from its first sample, and says so (start_recorded).
 *
 * The windows: the ages every incarnation compared reached (from the
 * latest first age to the earliest last age: the younger one's end) are
 * cut into at most VT_AGE_WINDOWS_MAX windows of one width, spread evenly,
 * the first beginning where the common ages begin and the last ending
 * where they end: the last is the headline, "at the last age both reached".
 * Each window is a struct vt_comparison over the points whose age falls in
 * it, so every view of compare's table renders it.
 */
#ifndef VT_ANALYZE_AGE_COMPARE_H
#define VT_ANALYZE_AGE_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "analyze/compare.h"
#include "base/error.h"
#include "sample/series.h"

#define VT_AGE_WINDOWS_MAX 5

/* One incarnation compared. */
struct vt_age_arm {
	char name[64];                /* its label: "#2", "v61", "before #1" */
	const struct vt_series *series;   /* borrowed: its recording */
	size_t recording;             /* which of the recordings compared (vt_age_compare_files), else 0 */
	uint32_t incarnation;         /* its number in its recording, 0 the first */
	size_t from, to;              /* its points [from, to) in series */
	pid_t pid;
	bool start_recorded;          /* started_t is the process's start; false: its first sample's time */
	double started_t;             /* seconds since its soak began (may be < 0: before the soak) */
	double started_wall;          /* unix time, NAN unknown */
	double age_first, age_last;   /* the age at its first and last point (a point's mean time) */
	size_t samples;
	bool exited;                  /* it exited within the recording (a later incarnation, or an exit event) */
};

/* One window of matched age. */
struct vt_age_window {
	double age_from, age;         /* the ages it covers, s; named "at t+age" */
	struct vt_comparison cmp;     /* the arms over it: cells, their points' span (window_t0, t1:
	                               * soak time) and samples, diffs against arm 0; no verdicts */
};

struct vt_age_comparison {
	size_t narms;
	struct vt_age_arm *arms;      /* owned; arm 0 the baseline */
	enum vt_metric metric;        /* the figure followed across the windows (committed by default) */
	double common_from, common_to;    /* the ages every arm reached */
	size_t starts_from, ends_with;    /* the arm whose first age begins them, whose last ends them (the younger) */
	double width_s;               /* each window's */
	bool width_clamped;           /* the width asked for was longer than the common ages: one window of them */
	size_t nwindows;
	struct vt_age_window *windows;    /* owned, by age; the last is the headline */
};

/*
 * The arms of one recording: one per incarnation, in order, each named
 * "<label> #k" (k from 1; label NULL or "": "#k"), its start from the
 * recording when it has it.  *arms is grown (realloc) and *n advanced:
 * the caller frees *arms.  Returns 0, or -1 on out of memory.
 */
int vt_age_arms_add(const struct vt_series *s, const char *label, struct vt_age_arm **arms, size_t *n);

/*
 * The windows of matched age over the common ages [from, to]: their end
 * ages into ends[] (ascending, the last at to, the first window beginning
 * at from) and their width into *width.  width_s > 0 asks for that width
 * (longer than the span: the span, *clamped set); 0 takes the span /
 * VT_AGE_WINDOWS_MAX, and never less than min_width_s (then fewer
 * windows).  Windows are spread evenly when fewer than fit tile the span.
 * Returns how many (at most VT_AGE_WINDOWS_MAX), 0 when to <= from.
 */
size_t vt_age_windows_plan(double from, double to, double width_s, double min_width_s,
			   double ends[VT_AGE_WINDOWS_MAX], double *width, bool *clamped);

/*
 * Compare arms (copied; arm 0 the baseline) at matched age: windows as
 * vt_age_windows_plan plans them on the ages all arms reached (width_s 0:
 * the default), each arm's points in a window summarised as compare
 * summarises a window.  Errors: VT_E_NOCOMPARE with the reason when there
 * are fewer than two arms, their ages do not overlap (the message gives
 * each arm's ages), or they overlap for less than two sampling intervals;
 * VT_E_NOMEM.  *out is then empty.  Release with vt_age_comparison_free.
 */
int vt_age_compare(const struct vt_age_arm *arms, size_t n, double width_s, enum vt_metric metric,
		   struct vt_age_comparison *out, struct vt_err *err);
void vt_age_comparison_free(struct vt_age_comparison *c);

/* Recordings read for an age comparison, and the comparison (its arms borrow the series). */
struct vt_age_set {
	size_t n;
	struct vt_series *series;     /* owned, n */
	struct vt_age_comparison cmp;
};

/*
 * Read n recordings (store/store.h) and compare their incarnations at
 * matched age: every incarnation of every recording, in order, or those
 * pick names ("1,3": numbered from 1 in that order; NULL all), the first
 * the baseline.  names labels them (comma-separated, in the order
 * compared; may be NULL or shorter); else one recording's are "#k", and a
 * recording's among several is labelled as compare labels it ("#k" added
 * when it holds several).  Errors: those of vt_store_load, VT_E_USAGE for
 * a pick that is not a list of incarnations it holds, those of
 * vt_age_compare (one recording of one incarnation says so); *out is then
 * empty.  Release with vt_age_set_release.
 */
int vt_age_compare_files(char *const *paths, size_t n, const char *names, const char *pick, double width_s,
			 enum vt_metric metric, struct vt_age_set *out, struct vt_err *err);
void vt_age_set_release(struct vt_age_set *s);

#endif

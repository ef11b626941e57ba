/*
 * soak.h (render) — the views of a soak analysis and of an A/B comparison:
 * text (with a sparkline), JSON (schema vitals.analyze v1, vitals.compare v1,
 * docs/json.md), CSV (one row per point) and one self-contained HTML file
 * with inline SVG charts.  All read the same structs: sample/series.h,
 * analyze/soak.h, analyze/compare.h.
 */
#ifndef VT_RENDER_SOAK_H
#define VT_RENDER_SOAK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "analyze/diagnose.h"

struct vt_prof_trend;        /* analyze/profile_trend.h */
struct vt_prof_diff;
struct vt_alloc_trend;       /* analyze/alloc_trend.h */
struct vt_alloc_diff;

#include "analyze/compare.h"
#include "analyze/mem_limit.h"
#include "base/units.h"
#include "analyze/soak.h"
#include "analyze/stalls.h"
#include "sample/locks.h"
#include "sample/series.h"
#include "soak/soak.h"

struct vt_analyze_report {
	const char *path;                    /* the recording's file name */
	const struct vt_series *series;
	const struct vt_soak_verdict *verdict;
	bool utf8;                           /* the terminal takes UTF-8 (sparkline blocks); else ASCII */
	size_t top_threads;                  /* threads listed by CPU, 0 = default (10) */
	const struct vt_diagnosis *thread_diag;   /* the threads' diagnosis over the run, NULL none */
	const struct vt_prof_trend *profiles;     /* the profiles it holds over time, NULL none */
	const struct vt_alloc_trend *allocs;      /* its allocation profiles over time, NULL none */
	/*
	 * What the judged metric is called when the series is not a recording
	 * (a Prometheus series: its metric name, process_resident_memory_bytes);
	 * NULL: the metric table's label.  The views print it instead of the
	 * label, and the JSON adds it as "metric_label".
	 */
	const char *metric_label;
	/* accept-queue stalls (analyze/stalls.h), NULL when not looked for */
	const struct vt_stalls *stalls;
	/* the memory limit it recommends (analyze --limit), NULL when not asked */
	const struct vt_mem_limit *limit;
	/* the locks its threads waited on over the soak (looks 0: why), NULL when not read */
	const struct vt_lock_history *locks;
};

struct vt_compare_report {
	const struct vt_comparison *cmp;
	const char *title;                   /* optional heading ("experiment: 3 arms of ./srv") */
	bool utf8;
	/* cmp->narms - 1 entries: each arm's profiles against the baseline's; NULL none */
	const struct vt_prof_diff *profile_diffs;
	/* the deciding metric's name when the arms are not recordings (soak.h vt_analyze_report), NULL: its label */
	const char *metric_label;
	bool limits;                         /* show each arm's memory limit (compare --limit) */
	/*
	 * HTML: cmp->narms - 1 entries, the differential flame graph written
	 * beside the page for each arm (a path in the page's folder, linked by
	 * its file name), NULL entries or NULL none.
	 */
	const char *const *flame_pages;
	/* cmp->narms - 1 entries: each arm's allocation sites against the baseline's; NULL none */
	const struct vt_alloc_diff *alloc_diffs;
};

int vt_render_analyze_text(FILE *out, const struct vt_analyze_report *r);
int vt_render_analyze_json(FILE *out, const struct vt_analyze_report *r);
int vt_render_analyze_html(FILE *out, const struct vt_analyze_report *r);
/* One row per point: time, wall time, pid, then lo/mean/hi of every recorded metric. */
int vt_render_series_csv(FILE *out, const struct vt_series *s);

int vt_render_compare_text(FILE *out, const struct vt_compare_report *r);
int vt_render_compare_json(FILE *out, const struct vt_compare_report *r);
int vt_render_compare_html(FILE *out, const struct vt_compare_report *r);
/*
 * compare's table as text for the baseline and arms [first, last) of cmp
 * (at most 3 of them), the deciding metric's row named metric_label (NULL:
 * its label).  0, or -1 on out of memory.
 */
int vt_render_cmp_table_text(FILE *out, const struct vt_comparison *cmp, size_t first, size_t last,
			     const char *metric_label);
/* compare's table as an HTML <table> with its note, every arm of cmp. */
void vt_render_cmp_table_html(FILE *out, const struct vt_comparison *cmp);
/* One row per arm and field: arm, field, median, lo, hi, delta, pct, within_noise. */
int vt_render_compare_csv(FILE *out, const struct vt_compare_report *r);

/* "R 40% S 60%": the states a thread was seen in, "" when never sampled. */
const char *vt_thread_doing_states(const struct vt_thread_doing *d, char *buf, size_t cap);

/*
 * A sparkline of v[0..n) (NAN skipped) squeezed into width cells, written
 * NUL-terminated to out (cap bytes; UTF-8 blocks take 3 bytes a cell).  A
 * series whose range is within resolution (0: exactly constant) is a flat
 * line of the lowest cell.  Returns the cells written.
 */
size_t vt_sparkline(char *out, size_t cap, const double *v, size_t n, size_t width, bool utf8,
		    double resolution);

/*
 * What every view of a soak says in the same words (soak_words.c).
 *
 * vt_soak_headline: the verdict line without "verdict: ", e.g. "leak — floor
 * rising 1.84 MiB/h (90% interval 1.61–2.07)".  vt_compare_arm_line: one
 * arm's verdict and window, "cap2: plateau, settled window 22 min, 137
 * samples".  Both return buf.
 */
const char *vt_soak_headline(const struct vt_soak_verdict *v, char *buf, size_t cap);
const char *vt_compare_arm_line(const struct vt_cmp_arm *a, char *buf, size_t cap);
/*
 * Why the verdict is what it is: one or two sentences from v->reason and
 * the figures it names, e.g. "floor rose 18.0 MiB over 36 s (0.50 MiB/s ±
 * 0.01), steadily: q1 floor 100 MiB, q4 floor 118 MiB"; "" for
 * VT_SOAK_WHY_NONE.  buf of cap bytes (VT_SOAK_WHY_MAX holds any); returns
 * buf.
 */
#define VT_SOAK_WHY_MAX 600
const char *vt_soak_why(const struct vt_soak_verdict *v, char *buf, size_t cap);
/* The same, naming the metric label instead of the table's label (NULL: the table's). */
const char *vt_soak_why_as(const struct vt_soak_verdict *v, const char *label, char *buf, size_t cap);
/*
 * How much longer to soak, in the same words wherever a view says it (the
 * verdict line, why, the evidence): "soak at least 2.1 min more", from
 * v->need_more_s through vt_fmt_span (the analysis rounded the figure up
 * to what that says exactly); "" when no figure applies.  Returns buf.
 */
const char *vt_soak_go_on(const struct vt_soak_verdict *v, char *buf, size_t cap);
/*
 * What a settled window lacks to be a plateau, from v->plateau_missing
 * (enum vt_plateau_need), joined by "; ": "a plateau needs a third of the span (2 min), this window is
 * 114 s", "the slope interval allows a drift of 9.52 MiB over 2.9 min, more
 * than the 4.70 MiB a plateau must rule out"; "" when none.  Returns buf.
 */
const char *vt_soak_plateau_missing(const struct vt_soak_verdict *v, char *buf, size_t cap);
/* A settled window is left standing under a verdict that is not plateau or step: "not yet" a plateau. */
bool vt_soak_settled_not_yet(const struct vt_soak_verdict *v);
/*
 * The evidence under a verdict as label and sentence ("slope", "+0.02 MiB/h
 * (90% interval -0.31–0.35), floor fitted from t+41 min"), the same in the
 * text and the HTML view (soak_facts.c); a continuation line has an empty label.  Fills at
 * most max facts and returns how many.
 */
#define VT_SOAK_FACTS_MAX 16
struct vt_soak_fact {
	char label[16];
	char text[480];
};
int vt_soak_facts(const struct vt_analyze_report *r, struct vt_soak_fact *f, int max);

/*
 * A recommended memory limit (analyze/mem_limit.h) in the same words in
 * every view (soak_limit.c).  vt_mem_limit_rule: the rule, one line.
 * vt_mem_limit_headline: "448 MiB", or "cannot tell yet — " and why.
 * vt_mem_limit_why: why it cannot tell ("" when it is given).
 * vt_mem_limit_setting: the limit as each tool takes it ("memory.max
 * 469762048 · systemd MemoryMax=448M · docker --memory 448m · k8s 448Mi";
 * "" when not given).  Each returns buf.
 */
const char *vt_mem_limit_rule(void);
const char *vt_mem_limit_headline(const struct vt_mem_limit *l, char *buf, size_t cap);
const char *vt_mem_limit_why(const struct vt_mem_limit *l, char *buf, size_t cap);
const char *vt_mem_limit_setting(const struct vt_mem_limit *l, char *buf, size_t cap);
/* The "memory limit" section of analyze's text, and compare's one line per arm. */
void vt_render_mem_limit_text(FILE *out, const struct vt_mem_limit *l);
void vt_render_compare_limits_text(FILE *out, const struct vt_comparison *cmp);

/* An event's kind for people and JSON: "start", "restart", "gap", "clock_jump", ... */
const char *vt_soak_event_name(enum vt_event_kind k);

/* A value of metric m in its unit (base/units.h vt_fmt_value: sizes, counts, seconds, cores). */
const char *vt_fmt_metric(enum vt_metric m, double v, char *buf, size_t cap);
/*
 * A cell of the A/B table: metric m's figure with its window's range,
 * "611 MiB (598–624)"; "n/a" for unknown (compare_text.c).
 */
const char *vt_fmt_cmp_cell(enum vt_metric m, const struct vt_cmp_cell *c, char *buf, size_t cap);

/* How a soak ended, for people: "--for reached", "the target exited with status 3". */
const char *vt_soak_end_words(const struct vt_soak_result *res, char *buf, size_t cap);

#endif

/*
 * prom_series.h — a Prometheus range-query answer read into soak series:
 * one struct vt_series per series the query returned, so that the soak
 * verdicts (analyze/soak.h) and the A/B table (analyze/compare.h) judge
 * Prometheus data as they judge a recording.
 *
 * Reads the body of GET /api/v1/query_range (Prometheus' HTTP API, JSON:
 * {"status":"success","data":{"resultType":"matrix","result":[{"metric":
 * {...},"values":[[<unix float>,"<number>"],...]},...]}}) from a buffer;
 * never does I/O (prom_client.h fetches it), so tests and the fuzzer feed
 * it bytes.
 *
 * How Prometheus data becomes a series (the store's rules, src/store/store.c):
 *   - one point per returned value (a range query returns at most 11,000
 *     per series, under VT_SERIES_MAX_POINTS): points never straddle a gap;
 *   - a hole longer than 3 steps (Prometheus leaves out the steps where the
 *     series had no sample) is a VT_EV_GAP event at the point that resumes;
 *   - a counter (a name ending in _total, Prometheus' naming rule) that
 *     goes down was reset (its process restarted): a new incarnation and a
 *     VT_EV_RESTART event, so the verdict is on the last incarnation, as a
 *     recording's is after a restart.  A gauge that goes down just went
 *     down: no series but a counter is ever cut;
 *   - "NaN", "+Inf", "-Inf" and anything not a finite number are unknown
 *     (NAN), never 0;
 *   - a series whose name ends in _bytes is judged in bytes (metric slot
 *     VT_M_COMMITTED, whose unit is bytes), any other as a plain number
 *     (VT_M_ARENAS, whose unit is a count; both are rows of the A/B table):
 *     the slot picks the unit, the tolerance (at least 1 MiB for bytes, 0.5
 *     for a count: analyze/soak_level.c) and how figures print; the views
 *     name the series, never the slot (render/soak.h metric_label).
 * Times: t is seconds since the series' own first value (t = 0 there), so
 * two time ranges compare side by side; wall is the value's unix time.
 */
#ifndef VT_SERVE_PROM_SERIES_H
#define VT_SERVE_PROM_SERIES_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "sample/metric.h"
#include "sample/series.h"

/* One series of the answer. */
struct vt_prom_series {
	char name[256];              /* its metric name (__name__), "" when the query dropped it (sum, rate) */
	char labels[1024];           /* as Prometheus writes it: name{a="x",b="y"}, labels sorted; "{}" bare */
	enum vt_metric metric;       /* the slot of series holding its values: VT_M_COMMITTED or VT_M_ARENAS */
	bool bytes;                  /* judged in bytes (name ends in _bytes) */
	bool counter;                /* a counter (name ends in _total): a drop is a reset */
	size_t resets;               /* counter resets: incarnations after the first */
	size_t gaps;                 /* holes longer than 3 steps */
	size_t unknown;              /* values that were NaN or infinite (NAN in the series) */
	struct vt_series series;     /* owned; info.target is labels, info.every_s the step */
};

/* The whole answer: every series, in the order Prometheus returned them. */
struct vt_prom_answer {
	size_t n;
	struct vt_prom_series *series;   /* owned, n */
	char warnings[512];          /* Prometheus' "warnings", joined by "; ", "" none */
};

/*
 * Bodies larger than this are refused (prom_client.c stops the download
 * there).  A range query's answer is at most 11,000 points a series
 * (Prometheus' own limit), about 0.4 MiB: 32 MiB is some 80 such series,
 * and parsing it takes about ten times that in memory.
 */
#define VT_PROM_BODY_MAX (32u << 20)
/* Series in one answer at most: a verdict each is for reading, not for a whole fleet's labels. */
#define VT_PROM_SERIES_MAX 1000

/*
 * Parse body (len bytes, need not be NUL-terminated) as the answer to a
 * range query at step_s (> 0: what a gap is measured in) into *out.
 * http_status is the HTTP status it came with (0: unknown); a Prometheus
 * error body is recognised whatever the status.
 *
 * Errors (err->msg says which, quoting Prometheus' own error text):
 *   VT_E_USAGE    Prometheus refused the query or its parameters
 *                 (errorType bad_data: a syntax error, "exceeded maximum
 *                 resolution of 11,000 points per timeseries", ...)
 *   VT_E_TIMEOUT  Prometheus gave up on it (errorType timeout, canceled)
 *   VT_E_FAIL     Prometheus failed evaluating it (execution, internal,
 *                 unavailable, or another errorType)
 *   VT_E_UNSUPPORTED the answer is a vector, scalar or string (an instant
 *                 query's), not the matrix of a range query
 *   VT_E_PARSE    not a Prometheus API answer: not JSON, not its shape, a
 *                 value that is not a number written as a string, times
 *                 that do not increase
 *   VT_E_NOMEM
 * An answer with no series is VT_OK with out->n == 0: the caller decides
 * what that means.  On error *out is empty.  Release with
 * vt_prom_answer_release (safe on an empty answer).
 */
int vt_prom_parse_range(const char *body, size_t len, long http_status, double step_s,
			struct vt_prom_answer *out, struct vt_err *err);
void vt_prom_answer_release(struct vt_prom_answer *a);

#endif

/*
 * soak_fmt.h — figures of metric m as the soak views print them, on top of
 * base/units.h: a value, a change, a pair and a growth rate per hour (how
 * much longer to soak is render/soak.h vt_soak_go_on).  Each returns buf
 * (cap bytes, NUL-terminated); an unknown figure (NAN) prints as "n/a".  vt_fmt_metric itself is declared
 * in render/soak.h.  Render-internal: no other module includes this.
 */
#ifndef VT_RENDER_SOAK_FMT_H
#define VT_RENDER_SOAK_FMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "analyze/soak.h"
#include "analyze/thread_view.h"
#include "sample/metric.h"
#include "sample/series.h"

/* Metric m is a size in bytes (else a count, seconds, ...). */
bool vt_metric_is_bytes(enum vt_metric m);

/*
 * Whose values a recording's target and environment hide ("--requirepass,
 * MYSQL_PWD"), read back from them (soak/redact.h); returns how many.
 */
size_t vt_recording_redacted_names(const struct vt_recording_info *in, char *out, size_t cap);

/*
 * No recorded point of metric m in s is other than 0 (its mean, and its
 * high where known: swap never used); *seen is set when s has a point of
 * it at all.  A series without m is zero throughout and sees nothing.
 */
bool vt_series_zero_throughout(const struct vt_series *s, enum vt_metric m, bool *seen);

/* A change of m with its sign, in the unit of `like` (a level it changes from): "+0.40 MiB". */
const char *vt_fmt_metric_delta(enum vt_metric m, double v, double like, char *buf, size_t cap);

/* Two figures of m joined by sep, the unit said once when both have it: "1402–1491 MiB". */
const char *vt_fmt_metric_pair(enum vt_metric m, double a, double b, const char *sep, char *buf,
			       size_t cap);

/*
 * A growth rate per hour without its unit, "1.84" (MiB per hour for sizes,
 * units per hour otherwise; three significant digits, a sign only when
 * negative); vt_per_h_unit gives the unit, "MiB/h" or "/h".
 */
const char *vt_fmt_per_h(enum vt_metric m, double per_s, char *buf, size_t cap);
const char *vt_per_h_unit(enum vt_metric m);

/*
 * Whether the views give short-lived threads (analyze/thread_view.h) a row:
 * some were recorded, or the process used well over what the threads listed
 * did (0.01 cores and 5% of it: threads that lived between two ticks).
 */
bool vt_render_soak_short_row(const struct vt_soak_short_lived *sl);

/* "14 x python3": the names of sl's threads in s (v's process), grouped; buf of cap bytes. */
const char *vt_render_soak_short_names(const struct vt_series *s, const struct vt_soak_verdict *v,
				       const struct vt_soak_short_lived *sl, char *buf, size_t cap);

/*
 * Words wrapped at width columns, each line indented; the first line starts
 * at column `at` (something is already printed before it) or 0.
 */
void vt_print_wrapped(FILE *out, const char *text, int indent, int width, int at);

#endif

/*
 * units.h — figures for people, one way each, and the figures people type.
 *
 * Every view (text tables, sentences, progress lines, HTML) writes sizes,
 * durations and percentages through these functions, so one quantity reads
 * the same everywhere.  Unknown figures (NAN, or VT_NA for counters) print
 * as "n/a".  Each returns buf (cap bytes, NUL-terminated, cut if short).
 *
 * Sizes are binary: "512 B", "4.0 KiB", "62.0 MiB", "1458 MiB" (MiB up to
 * 10 GiB, so that the figures of one report compare at a glance; the field
 * reports speak in MB), "12.3 GiB".  Durations: "0.25 s", "41 s",
 * "3.3 min", "12 min", "3.4 h", "2.1 d".  Microseconds are "µs" in text;
 * JSON keys spell it "us".
 */
#ifndef VT_BASE_UNITS_H
#define VT_BASE_UNITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VT_KiB 1024.0
#define VT_MiB (1024.0 * 1024.0)
#define VT_GiB (1024.0 * 1024.0 * 1024.0)

/* What a figure measures: how it is printed, and the "unit" JSON gives for it. */
enum vt_unit {
	VT_UNIT_BYTES,
	VT_UNIT_COUNT,
	VT_UNIT_SECONDS,          /* an amount of time, e.g. CPU seconds */
	VT_UNIT_FRACTION,         /* 0..1 */
	VT_UNIT_CORES,            /* CPU seconds per second */
};

/* "bytes", "count", "s", "fraction", "cores". */
const char *vt_unit_name(enum vt_unit u);

/* A size in bytes (double: NAN unknown). */
const char *vt_fmt_size(double bytes, char *buf, size_t cap);
/* A size from a counter (VT_NA unknown). */
const char *vt_fmt_bytes(uint64_t bytes, char *buf, size_t cap);
/* A change with its sign, "-847 MiB". */
const char *vt_fmt_size_delta(double bytes, char *buf, size_t cap);
/*
 * A change said in the unit of `like`, the level it is a change of ("+0.20
 * MiB" beside 44.3 MiB, "+0 MiB"); a change that would read as 0.00 there
 * is said in its own unit; NAN like: its own unit.
 */
const char *vt_fmt_size_delta_like(double bytes, double like, char *buf, size_t cap);

/* A duration in seconds (negative or NAN: n/a). */
const char *vt_fmt_span(double seconds, char *buf, size_t cap);
/* seconds in the unit vt_fmt_span picks for like: a progress line's elapsed and
 * left in one unit ("2.0 min elapsed, 2.0 min left", not "2 min elapsed, 118 s left") */
const char *vt_fmt_span_like(double seconds, double like, char *buf, size_t cap);
/*
 * The shortest duration of at least s seconds that vt_fmt_span writes
 * exactly: whole seconds under 2 min, tenths of a minute under 10 min,
 * whole minutes under 2 h, tenths of an hour under 2 d, then tenths of a
 * day.  For a figure that is a lower bound ("soak at least 2.1 min more"
 * is 126 s, in every view and in the JSON).  NAN, infinities and s <= 0
 * come back as they are.
 */
double vt_span_ceil(double s);

/* "97%" of part/whole (n/a when either is unknown or whole is 0). */
const char *vt_fmt_pct(uint64_t part, uint64_t whole, char *buf, size_t cap);
/* A change in percent with its sign: "-58%", "+0.5%". */
const char *vt_fmt_pct_change(double pct, char *buf, size_t cap);

/* "2026-09-06 17:37:08 UTC", or "2026-09-06T17:37:08Z" when iso. */
const char *vt_fmt_utc(double unix_s, bool iso, char *buf, size_t cap);

/*
 * A figure in its unit: sizes as above, counts whole when they are ("5",
 * "2.5"), seconds "12.3 s", fractions "0.0729", cores "0.57" (the label
 * names the unit).  vt_fmt_value_delta: the same with a sign, sizes in the
 * unit of `like`.
 */
const char *vt_fmt_value(enum vt_unit u, double v, char *buf, size_t cap);
const char *vt_fmt_value_delta(enum vt_unit u, double v, double like, char *buf, size_t cap);
/*
 * Two figures joined by sep, the unit said once when both have it:
 * "1402–1491 MiB", "771 → 969 MiB", else "980 MiB–12.1 GiB".
 */
const char *vt_fmt_value_pair(enum vt_unit u, double a, double b, const char *sep, char *buf, size_t cap);

/* "1", "2 samples": a count and its noun, singular for one ("sample"/"samples"). */
const char *vt_fmt_count_of(uint64_t n, const char *one, const char *many, char *buf, size_t cap);

/* "8M", "8MiB", "512k", "1G", "4096" -> bytes.  false on garbage or overflow. */
bool vt_parse_size(const char *text, uint64_t *bytes);
/* "30", "30s", "250ms", "5m", "2h", "2d" -> seconds.  false on garbage or a negative. */
bool vt_parse_duration(const char *text, double *seconds);

#endif

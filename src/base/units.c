/*
 * units.c — figures for people (see units.h).
 */
#include "base/units.h"

#include "base/unknown.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

const char *vt_unit_name(enum vt_unit u)
{
	switch (u) {
	case VT_UNIT_BYTES: return "bytes";
	case VT_UNIT_COUNT: return "count";
	case VT_UNIT_SECONDS: return "s";
	case VT_UNIT_FRACTION: return "fraction";
	case VT_UNIT_CORES: return "cores";
	}
	return "count";
}

static const char *na(char *buf, size_t cap)
{
	snprintf(buf, cap, "n/a");
	return buf;
}

const char *vt_fmt_size(double b, char *buf, size_t cap)
{
	double a = fabs(b);

	if (!isfinite(b))
		return na(buf, cap);
	if (a < VT_KiB)
		snprintf(buf, cap, "%.0f B", b);
	else if (a < VT_MiB)
		snprintf(buf, cap, a < 10 * VT_KiB ? "%.1f KiB" : "%.0f KiB", b / VT_KiB);
	else if (a < 10 * VT_GiB)
		snprintf(buf, cap, a < 10 * VT_MiB ? "%.2f MiB" : a < 100 * VT_MiB ? "%.1f MiB" : "%.0f MiB",
			 b / VT_MiB);
	else
		snprintf(buf, cap, a < 100 * VT_GiB ? "%.1f GiB" : "%.0f GiB", b / VT_GiB);
	return buf;
}

const char *vt_fmt_bytes(uint64_t bytes, char *buf, size_t cap)
{
	return vt_fmt_size(vt_known(bytes) ? (double)bytes : NAN, buf, cap);
}

/* The unit vt_fmt_size says a of |a| bytes in. */
static void size_unit(double a, double *div, const char **name)
{
	if (a < VT_KiB)
		*div = 1, *name = "B";
	else if (a < VT_MiB)
		*div = VT_KiB, *name = "KiB";
	else if (a < 10 * VT_GiB)
		*div = VT_MiB, *name = "MiB";
	else
		*div = VT_GiB, *name = "GiB";
}

const char *vt_fmt_size_delta_like(double b, double like, char *buf, size_t cap)
{
	const char *name;
	double div, v, a;

	if (!isfinite(b))
		return na(buf, cap);
	size_unit(fabs(isfinite(like) ? like : b), &div, &name);
	if (b != 0 && fabs(b) / div < 0.01)
		size_unit(fabs(b), &div, &name);        /* would read as 0.00: its own unit */
	v = b / div;
	a = fabs(v);
	if (b == 0)
		snprintf(buf, cap, "+0 %s", name);
	else if (div == 1)
		snprintf(buf, cap, "%+.0f B", v);
	else
		snprintf(buf, cap, a < 10 ? "%+.2f %s" : a < 100 ? "%+.1f %s" : "%+.0f %s", v, name);
	return buf;
}

const char *vt_fmt_size_delta(double b, char *buf, size_t cap)
{
	return vt_fmt_size_delta_like(b, NAN, buf, cap);
}

/* Whole when within a twentieth of a whole number: "4 min", not "4.0 min". */
static bool whole(double v)
{
	return fabs(v - round(v)) < 0.05;
}

const char *vt_fmt_span(double s, char *buf, size_t cap)
{
	if (!isfinite(s) || s < 0)
		return na(buf, cap);
	if (s < 10 && !whole(s))
		snprintf(buf, cap, "%.2g s", s);      /* a sub-second interval: "0.25 s" */
	else if (s < 120)
		snprintf(buf, cap, "%.0f s", s);
	else if (s < 600 && !whole(s / 60))
		snprintf(buf, cap, "%.1f min", s / 60);
	else if (s < 120 * 60)
		snprintf(buf, cap, "%.0f min", s / 60);
	else if (s < 48 * 3600)
		snprintf(buf, cap, "%.1f h", s / 3600);
	else
		snprintf(buf, cap, "%.1f d", s / 86400);
	return buf;
}

const char *vt_fmt_span_like(double s, double like, char *buf, size_t cap)
{
	if (!isfinite(s) || s < 0)
		return na(buf, cap);
	if (!isfinite(like) || like < 120)
		return vt_fmt_span(s, buf, cap);
	if (like < 120 * 60)
		snprintf(buf, cap, like < 600 ? "%.1f min" : "%.0f min", s / 60);
	else if (like < 48 * 3600)
		snprintf(buf, cap, "%.1f h", s / 3600);
	else
		snprintf(buf, cap, "%.1f d", s / 86400);
	return buf;
}

/* Up to a multiple of step (a hair over one, from a division, stays one). */
static double ceil_to(double s, double step)
{
	return ceil(s / step - 1e-9) * step;
}

double vt_span_ceil(double s)
{
	if (!isfinite(s) || s <= 0)
		return s;
	if (s <= 120)
		return ceil_to(s, 1);
	if (s <= 600)
		return ceil_to(s, 6);
	if (s <= 120 * 60)
		return ceil_to(s, 60);
	if (s <= 48 * 3600)
		return ceil_to(s, 360);
	return ceil_to(s, 8640);
}

const char *vt_fmt_pct(uint64_t part, uint64_t whole_, char *buf, size_t cap)
{
	if (!vt_known(part) || !vt_known(whole_) || whole_ == 0)
		return na(buf, cap);
	snprintf(buf, cap, "%.0f%%", 100.0 * (double)part / (double)whole_);
	return buf;
}

const char *vt_fmt_pct_change(double pct, char *buf, size_t cap)
{
	if (!isfinite(pct))
		return na(buf, cap);
	snprintf(buf, cap, fabs(pct) < 10 ? "%+.1f%%" : "%+.0f%%", pct);
	return buf;
}

const char *vt_fmt_utc(double unix_s, bool iso, char *buf, size_t cap)
{
	time_t t;
	struct tm tm;

	if (!isfinite(unix_s) || unix_s <= 0)
		return na(buf, cap);
	t = (time_t)unix_s;
	if (!gmtime_r(&t, &tm) ||
	    !strftime(buf, cap, iso ? "%Y-%m-%dT%H:%M:%SZ" : "%Y-%m-%d %H:%M:%S UTC", &tm))
		return na(buf, cap);
	return buf;
}

/*
 * The precision of each unit, in one place: plain and with a sign.  Sizes
 * go through vt_fmt_size; counts drop the decimal when they are whole.
 */
static const char *fmt_number(enum vt_unit u, double v, bool sign, char *buf, size_t cap)
{
	int prec = u == VT_UNIT_SECONDS ? 1 : u == VT_UNIT_FRACTION ? 4 : u == VT_UNIT_CORES ? 2 : whole(v) ? 0 : 1;
	const char *suffix = u == VT_UNIT_SECONDS ? " s" : "";

	if (sign)
		snprintf(buf, cap, "%+.*f%s", prec, v, suffix);
	else
		snprintf(buf, cap, "%.*f%s", prec, v, suffix);
	return buf;
}

const char *vt_fmt_value(enum vt_unit u, double v, char *buf, size_t cap)
{
	if (!isfinite(v))
		return na(buf, cap);
	return u == VT_UNIT_BYTES ? vt_fmt_size(v, buf, cap) : fmt_number(u, v, false, buf, cap);
}

const char *vt_fmt_value_delta(enum vt_unit u, double v, double like, char *buf, size_t cap)
{
	if (!isfinite(v))
		return na(buf, cap);
	return u == VT_UNIT_BYTES ? vt_fmt_size_delta_like(v, like, buf, cap) : fmt_number(u, v, true, buf, cap);
}

const char *vt_fmt_value_pair(enum vt_unit u, double lo, double hi, const char *sep, char *buf, size_t cap)
{
	char a[32], b[32];
	const char *ua, *ub;

	vt_fmt_value(u, lo, a, sizeof(a));
	vt_fmt_value(u, hi, b, sizeof(b));
	ua = strchr(a, ' ');
	ub = strchr(b, ' ');
	if (ua && ub && !strcmp(ua, ub) && isfinite(lo) && isfinite(hi))
		snprintf(buf, cap, "%.*s%s%s", (int)(ua - a), a, sep, b);
	else
		snprintf(buf, cap, "%s%s%s", a, sep, b);
	return buf;
}

const char *vt_fmt_count_of(uint64_t n, const char *one, const char *many, char *buf, size_t cap)
{
	snprintf(buf, cap, "%llu %s", (unsigned long long)n, n == 1 ? one : many);
	return buf;
}

bool vt_parse_size(const char *text, uint64_t *bytes)
{
	static const struct {
		const char *suffix;
		uint64_t mult;
	} units[] = {
		{ "", 1 }, { "b", 1 },
		{ "k", 1ull << 10 }, { "kb", 1ull << 10 }, { "kib", 1ull << 10 },
		{ "m", 1ull << 20 }, { "mb", 1ull << 20 }, { "mib", 1ull << 20 },
		{ "g", 1ull << 30 }, { "gb", 1ull << 30 }, { "gib", 1ull << 30 },
	};
	unsigned long long v;
	char *end;
	size_t i;

	if (!text || !*text || *text == '-')
		return false;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno || end == text)
		return false;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcasecmp(end, units[i].suffix))
			continue;
		if (v > UINT64_MAX / units[i].mult)
			return false;
		*bytes = v * units[i].mult;
		return true;
	}
	return false;
}

bool vt_parse_duration(const char *text, double *seconds)
{
	double v, mult = 1;
	char *end;

	if (!text || !*text || *text == '-')
		return false;
	errno = 0;
	v = strtod(text, &end);
	if (errno || end == text || v != v || isinf(v))
		return false;
	if (!strcmp(end, "") || !strcmp(end, "s"))
		mult = 1;
	else if (!strcmp(end, "ms"))
		mult = 0.001;
	else if (!strcmp(end, "m"))
		mult = 60;
	else if (!strcmp(end, "h"))
		mult = 3600;
	else if (!strcmp(end, "d"))
		mult = 86400;
	else
		return false;
	*seconds = v * mult;
	return true;
}

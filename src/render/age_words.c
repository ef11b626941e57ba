/*
 * age_words.c — what the text, JSON and HTML views of an age comparison
 * say in the same words (see render/age_compare.h).
 */
#include "render/age_compare.h"
#include "render/soak.h"

#include "base/units.h"

#include <math.h>
#include <string.h>

const char *vt_fmt_age(double age_s, char *buf, size_t cap)
{
	char span[32];

	snprintf(buf, cap, "t+%s", vt_fmt_span(age_s < 0 ? 0 : age_s, span, sizeof(span)));
	return buf;
}

const char *vt_age_arm_line(const struct vt_age_comparison *c, size_t i, char *buf, size_t cap)
{
	const struct vt_age_arm *a = &c->arms[i];
	char when[48], rel[32], age[32];
	size_t len;

	if (isfinite(a->started_wall) && a->started_wall > 0)
		vt_fmt_utc(a->started_wall, false, when, sizeof(when));
	else
		snprintf(when, sizeof(when), "t=%.1f s", a->started_t);
	if (a->start_recorded && fabs(a->started_t) < 1)
		len = (size_t)snprintf(buf, cap, "pid %d, started %s (as the soak began), reached %s", (int)a->pid,
				       when, vt_fmt_age(a->age_last, age, sizeof(age)));
	else if (a->start_recorded)
		len = (size_t)snprintf(buf, cap, "pid %d, started %s (%s %s), reached %s", (int)a->pid, when,
				       vt_fmt_span(fabs(a->started_t), rel, sizeof(rel)),
				       a->started_t < 0 ? "before the soak began" : "into the soak",
				       vt_fmt_age(a->age_last, age, sizeof(age)));
	else
		len = (size_t)snprintf(buf, cap, "pid %d, start not recorded: ages from its first sample (%s), "
				       "reached %s", (int)a->pid, when, vt_fmt_age(a->age_last, age, sizeof(age)));
	if (len < cap)
		len += (size_t)snprintf(buf + len, cap - len, ", %s", a->exited ? "exited" : "still running at the end");
	if (len < cap && i == c->ends_with)
		snprintf(buf + len, cap - len, " — the younger: the ages compared end at its last");
	return buf;
}

const char *vt_age_headline(const struct vt_age_comparison *c, char *buf, size_t cap)
{
	const struct vt_age_window *w;
	char age[32], v[32], d[32], p[32];
	enum vt_metric m = c->metric;
	size_t i, len;

	buf[0] = '\0';
	if (!c->nwindows)
		return buf;
	w = &c->windows[c->nwindows - 1];
	len = (size_t)snprintf(buf, cap, "at %s: %s", vt_fmt_age(w->age, age, sizeof(age)), vt_metrics[m].label);
	for (i = 0; i < w->cmp.narms && len < cap; i++)
		len += (size_t)snprintf(buf + len, cap - len, "%s %s (%s)", i ? " vs" : "",
					w->cmp.arms[i].cell[m].known ? vt_fmt_value(vt_metrics[m].unit,
						w->cmp.arms[i].cell[m].median, v, sizeof(v)) : "n/a",
					c->arms[i].name);
	if (w->cmp.narms == 2 && w->cmp.diff[1][m].known && len < cap) {
		const struct vt_cmp_diff *df = &w->cmp.diff[1][m];

		snprintf(buf + len, cap - len, ", %s (%s)%s",
			 vt_fmt_value_delta(vt_metrics[m].unit, df->delta, w->cmp.arms[0].cell[m].median, d, sizeof(d)),
			 vt_fmt_pct_change(df->pct, p, sizeof(p)), df->within_noise ? ", within noise" : "");
	}
	return buf;
}

const char *vt_age_basis(const struct vt_age_comparison *c, char *buf, size_t cap)
{
	size_t i, recorded = 0;

	for (i = 0; i < c->narms; i++)
		recorded += c->arms[i].start_recorded;
	if (recorded == c->narms)
		snprintf(buf, cap, "ages: since each process started (its start time, read by the soak)");
	else if (recorded == 0)
		snprintf(buf, cap, "ages: since each incarnation's first sample (its start was not recorded: a "
			 "recording before schema 7); a process found long after it started is older than it says");
	else
		snprintf(buf, cap, "ages: since each process started where the soak recorded it, else since its "
			 "first sample (marked \"start not recorded\")");
	return buf;
}

/*
 * soak_limit.c — a recommended memory limit (analyze/mem_limit.h) in
 * words and as text: `vitals analyze --limit` and `vitals compare --limit`.
 * The JSON is in soak_json.c and quotes the same words.
 */
#include "render/soak.h"
#include "render/soak_fmt.h"
#include "render/table.h"

#include "analyze/mem_limit.h"
#include "base/units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* A limit is a whole number of MiB: "448 MiB", "1232 MiB (1.20 GiB)". */
static const char *limit_size(double bytes, char *buf, size_t cap)
{
	double mib = bytes / (1024.0 * 1024.0);

	if (mib >= 1024)
		snprintf(buf, cap, "%.0f MiB (%.2f GiB)", mib, mib / 1024);
	else
		snprintf(buf, cap, "%.0f MiB", mib);
	return buf;
}

const char *vt_mem_limit_rule(void)
{
	return "the peak need + max(20% of it, the settled spread, 32 MiB), rounded up to 16 MiB";
}

/* "high +0, max +2": the memory.events counts the recording has; "" when none. */
static const char *event_counts(const struct vt_mem_limit *l, char *buf, size_t cap)
{
	const struct {
		const char *name;
		double rise;
	} ev[] = { { "high", l->ev_high }, { "max", l->ev_max }, { "oom_kill", l->ev_oom_kill } };
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < sizeof(ev) / sizeof(*ev) && n < cap; i++)
		if (isfinite(ev[i].rise))
			n += (size_t)snprintf(buf + n, cap - n, "%s%s +%.0f", n ? ", " : "", ev[i].name, ev[i].rise);
	return buf;
}

/* "the soak never settled: ..." from the verdict that found no settled window. */
static void not_settled(const struct vt_mem_limit *l, char *buf, size_t cap)
{
	char more[48], span[32];

	more[0] = '\0';
	if (isfinite(l->need_more_s) && l->need_more_s > 0)
		snprintf(more, sizeof(more), "; soak at least %s more", vt_fmt_span(l->need_more_s, span, sizeof(span)));
	switch (l->verdict) {
	case VT_VERDICT_LEAK:
		snprintf(buf, cap, "its floor keeps rising (leak): no limit holds it, a limit only sets when the "
			 "OOM killer comes");
		break;
	case VT_VERDICT_SETTLING:
		snprintf(buf, cap, "it is still settling: its peak is not known yet%s", more);
		break;
	case VT_VERDICT_CANNOT_TELL:
		snprintf(buf, cap, "the soak could not yet decide whether it settled%s", more);
		break;
	default:
		snprintf(buf, cap, "the soak found no settled window%s", more);
	}
}

const char *vt_mem_limit_why(const struct vt_mem_limit *l, char *buf, size_t cap)
{
	char counts[96], a[32], b[32];
	size_t n;

	if (!cap)
		return buf;
	buf[0] = '\0';
	switch (l->why) {
	case VT_LIMIT_GIVEN:
		break;
	case VT_LIMIT_NOT_RECORDED:
		snprintf(buf, cap, "the recording holds no memory figures (committed, RssFile) for the analysed process");
		break;
	case VT_LIMIT_NOT_SETTLED:
		not_settled(l, buf, cap);
		break;
	case VT_LIMIT_WAS_HIT:
		event_counts(l, counts, sizeof(counts));
		if (l->hit_by == VT_HIT_OOM_KILL && l->oom_at_exit)
			snprintf(buf, cap, "the OOM killer struck in its cgroup as the process exited (memory.events "
				 "oom_kill rose: see the oom_kill event)");
		else if (l->hit_by == VT_HIT_OOM_KILL)
			snprintf(buf, cap, "the OOM killer struck in its cgroup during the run (memory.events %s)",
				 counts);
		else if (l->hit_by == VT_HIT_NEAR_LIMIT)
			snprintf(buf, cap, "its cgroup reached its limit during the run (memory.events %s), and the "
				 "rule's %s would not fit under the %s it was held at", counts,
				 limit_size(l->recommended, a, sizeof(a)),
				 vt_fmt_size(fmin(l->cg_limit, l->cg_current_peak), b, sizeof(b)));
		else
			snprintf(buf, cap, "its cgroup reached its limit during the run (memory.events %s), and "
				 "reclaim stalled its tasks %.1f%% of the time (memory.pressure)", counts,
				 l->psi_some_pct);
		n = strlen(buf);
		snprintf(buf + n, cap - n, ": a process held down by its limit measures "
			 "the limit, not its need; soak it under a higher limit, or none");
		break;
	}
	return buf;
}

const char *vt_mem_limit_headline(const struct vt_mem_limit *l, char *buf, size_t cap)
{
	char a[48], why[400];

	if (l->why == VT_LIMIT_GIVEN)
		snprintf(buf, cap, "%s", limit_size(l->recommended, a, sizeof(a)));
	else
		snprintf(buf, cap, "cannot tell yet — %s", vt_mem_limit_why(l, why, sizeof(why)));
	return buf;
}

const char *vt_mem_limit_setting(const struct vt_mem_limit *l, char *buf, size_t cap)
{
	double mib = l->recommended / (1024.0 * 1024.0);

	if (l->why != VT_LIMIT_GIVEN || !isfinite(mib))
		snprintf(buf, cap, "%s", "");
	else
		snprintf(buf, cap, "memory.max %.0f · systemd MemoryMax=%.0fM · docker --memory %.0fm · "
			 "k8s %.0fMi", l->recommended, mib, mib, mib);
	return buf;
}

/* One labelled line of the section, wrapped under its label. */
static void line(FILE *out, const char *label, const char *text)
{
	fprintf(out, "  %-9s  ", label);
	vt_print_wrapped(out, text, 13, 100, 13);
}

static void print_cgroup(FILE *out, const struct vt_mem_limit *l)
{
	char a[32], b[32], c[32], counts[96], text[400];
	size_t n = 0;

	if (!l->cgroup) {
		line(out, "cgroup", "not recorded (no memory cgroup, or not readable)");
		return;
	}
	if (isfinite(l->cg_limit)) {
		n += (size_t)snprintf(text, sizeof(text), "limit %s now", vt_fmt_size(l->cg_limit, a, sizeof(a)));
		if (l->why == VT_LIMIT_GIVEN && l->cg_limit > 0)
			n += (size_t)snprintf(text + n, sizeof(text) - n, ": %s (%s)",
					      vt_fmt_size_delta(l->recommended - l->cg_limit, b, sizeof(b)),
					      vt_fmt_pct_change((l->recommended - l->cg_limit) / l->cg_limit * 100,
								c, sizeof(c)));
	} else {
		/* a recording older than the limit's column has no memory.events either */
		n += (size_t)snprintf(text, sizeof(text), "%s", l->cgroup_events ? "no limit set" : "limit not recorded");
	}
	snprintf(text + n, sizeof(text) - n, "; memory.current %s (peak %s)",
		 vt_fmt_size(l->cg_current_median, b, sizeof(b)), vt_fmt_size(l->cg_current_peak, c, sizeof(c)));
	line(out, "cgroup", text);
	/* the cgroup charges more than the process holds: page cache, kernel memory, other processes */
	if (isfinite(l->peak) && l->cg_current_peak > l->peak + VT_LIMIT_HEADROOM_MIN) {
		snprintf(text, sizeof(text), "the cgroup's peak is %s above the process's: page cache, kernel "
			 "memory or other processes in it; a limit on the cgroup must hold those too (page cache "
			 "is reclaimed first)", vt_fmt_size(l->cg_current_peak - l->peak, a, sizeof(a)));
		line(out, "", text);
	}
	if (!l->cgroup_events)
		return;
	snprintf(text, sizeof(text), "memory.events over the run: %s%s", event_counts(l, counts, sizeof(counts)),
		 l->oom_at_exit ? "; and oom_kill rose as the process exited" : "");
	line(out, "events", text);
	if (l->why == VT_LIMIT_GIVEN && l->limit_reached)
		line(out, "", isfinite(l->psi_some_pct)
			      ? "the cgroup reached its limit, but not for this process: the rule's figure fits "
				"under where it was held, and reclaim took page cache or other processes' memory "
				"without stalling it"
			      : "the cgroup reached its limit, but not for this process: the rule's figure fits "
				"under where it was held (reclaim takes page cache and other processes' memory first; "
				"cgroup v1 has no memory.pressure to tell whether it stalled the process)");
}

static void print_pressure(FILE *out, const struct vt_mem_limit *l)
{
	char text[300];

	if (!isfinite(l->psi_some_pct))
		return;
	snprintf(text, sizeof(text), "memory stalled some task %.2f%% and all tasks %.2f%% of the run (memory.pressure)",
		 l->psi_some_pct, isfinite(l->psi_full_pct) ? l->psi_full_pct : 0.0);
	line(out, "pressure", text);
	if (l->psi_some_pct >= VT_LIMIT_PSI_NOTE)
		line(out, "", "reclaim took pages from it meanwhile: what it needs may be more than it held");
}

void vt_render_mem_limit_text(FILE *out, const struct vt_mem_limit *l)
{
	char head[600], text[400], a[32], b[32], c[32], d[32], e[32], f[32];

	if (l->why == VT_LIMIT_GIVEN) {
		fprintf(out, "\nmemory limit: %s\n", vt_mem_limit_headline(l, head, sizeof(head)));
	} else {
		fprintf(out, "\nmemory limit: cannot tell yet\n");
		line(out, "why", vt_mem_limit_why(l, head, sizeof(head)));
	}
	if (l->why == VT_LIMIT_NOT_RECORDED)
		return;
	if (l->why == VT_LIMIT_GIVEN) {
		line(out, "rule", vt_mem_limit_rule());
		snprintf(text, sizeof(text), "%s + %s (%s) → %s", vt_fmt_size(l->peak, a, sizeof(a)),
			 vt_fmt_size(l->headroom, b, sizeof(b)),
			 l->headroom_by == VT_HEADROOM_SHARE ? "20% of the peak"
			 : l->headroom_by == VT_HEADROOM_SPREAD ? "the settled spread" : "the 32 MiB floor",
			 limit_size(l->recommended, c, sizeof(c)));
		line(out, "", text);
		line(out, "set", vt_mem_limit_setting(l, text, sizeof(text)));
	}
	snprintf(text, sizeof(text), "%s %s (%s), t+%s → t+%s; peak %s at t+%s",
		 vt_fmt_size(l->need.median, a, sizeof(a)), l->settled ? "settled" : "over the last half",
		 vt_fmt_value_pair(VT_UNIT_BYTES, l->need.lo, l->need.hi, "–", b, sizeof(b)),
		 vt_fmt_span(l->window_t0, c, sizeof(c)), vt_fmt_span(l->window_t1, d, sizeof(d)),
		 vt_fmt_size(l->peak, e, sizeof(e)), vt_fmt_span(l->peak_t, f, sizeof(f)));
	line(out, "need", text);
	snprintf(text, sizeof(text), "committed %s (%s) + RssFile %s + RssShmem %s: RSS + swap",
		 vt_fmt_size(l->committed.median, a, sizeof(a)),
		 vt_fmt_value_pair(VT_UNIT_BYTES, l->committed.lo, l->committed.hi, "–", b, sizeof(b)),
		 vt_fmt_size(l->rss_file.median, c, sizeof(c)), vt_fmt_size(l->rss_shmem.median, d, sizeof(d)));
	line(out, "parts", text);
	if (!isfinite(l->swap_peak))
		line(out, "swap", "not recorded");
	else if (l->swap_peak <= 0)
		line(out, "swap", "none used");
	else {
		snprintf(text, sizeof(text), "up to %s in swap, counted in the need: the limit that keeps it all in "
			 "memory", vt_fmt_size(l->swap_peak, a, sizeof(a)));
		line(out, "swap", text);
	}
	print_cgroup(out, l);
	print_pressure(out, l);
}

/* An arm's name as the terminal may show it (a file name can hold escape sequences). */
static const char *arm_name(const struct vt_comparison *cmp, size_t i, char *buf, size_t cap)
{
	return vt_text_printable(cmp->arms[i].name ? cmp->arms[i].name : "?", buf, cap);
}

void vt_render_compare_limits_text(FILE *out, const struct vt_comparison *cmp)
{
	const struct vt_mem_limit *base;
	char a[32], b[32], c[600], pct[32], name[128];
	size_t i, w = 4;

	if (!cmp->narms)
		return;
	base = &cmp->arms[0].limit;
	fprintf(out, "\nmemory limit (%s)\n", vt_mem_limit_rule());
	for (i = 0; i < cmp->narms; i++)
		if (strlen(arm_name(cmp, i, name, sizeof(name))) > w)
			w = strlen(name);
	for (i = 0; i < cmp->narms; i++) {
		const struct vt_mem_limit *l = &cmp->arms[i].limit;

		arm_name(cmp, i, name, sizeof(name));

		if (l->why != VT_LIMIT_GIVEN) {
			fprintf(out, "  %-*s  %s\n", (int)w, name, vt_mem_limit_headline(l, c, sizeof(c)));
			continue;
		}
		pct[0] = '\0';
		if (i > 0 && base->why == VT_LIMIT_GIVEN && base->recommended > 0)
			snprintf(pct, sizeof(pct), "  %s", vt_fmt_pct_change((l->recommended - base->recommended) /
									    base->recommended * 100, a, sizeof(a)));
		fprintf(out, "  %-*s  %9s  peak need %s%s\n", (int)w, name, limit_size(l->recommended, a, sizeof(a)),
			vt_fmt_size(l->peak, b, sizeof(b)), pct);
	}
	for (i = 1; base->why == VT_LIMIT_GIVEN && i < cmp->narms; i++) {
		const struct vt_mem_limit *l = &cmp->arms[i].limit;

		if (l->why != VT_LIMIT_GIVEN || l->recommended == base->recommended)
			continue;
		fprintf(out, "  %s %s from %s to %s\n", arm_name(cmp, i, name, sizeof(name)),
			l->recommended < base->recommended ? "lets the limit drop" : "needs the limit raised",
			limit_size(base->recommended, a, sizeof(a)), limit_size(l->recommended, b, sizeof(b)));
	}
}

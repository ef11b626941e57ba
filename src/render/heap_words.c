/*
 * heap_words.c — the heap verdict in words (see heap.h): the headline for
 * its lever and one line per evidence it cites, from the figures the
 * verdict holds.  vitals heap (text and JSON) and the demo print these.
 */
#include "render/heap.h"
#include "base/units.h"

#include <math.h>
#include <string.h>
#include <stdio.h>

#define MiB (1024.0 * 1024.0)

static double mib(uint64_t bytes)
{
	return (double)bytes / MiB;
}

const char *vt_render_heap_headline(const struct vt_heap_verdict *v, char *buf, size_t cap)
{
	double free_pct = (1 - v->live_fraction) * 100;
	char rss[48] = "";

	switch (v->lever) {
	case VT_LEVER_NONE:
		snprintf(buf, cap, "small heap (%.1f MiB %s): nothing here to act on", mib(v->held),
			 v->other ? "resident" : "held");
		break;
	case VT_LEVER_RETENTION:
		/* A snapshot cannot tell growth: what retains the data is a question
		 * only if it keeps growing, and a soak answers that. */
		if (v->rss_anon && v->live <= v->rss_anon)
			snprintf(rss, sizeof(rss), ", %.0f%% of RssAnon", 100.0 * (double)v->live / (double)v->rss_anon);
		snprintf(buf, cap, "this is live data the program holds (%.0f%% of %s%s%s%s): %sif it keeps "
			 "growing, vitals soak tells a leak from a plateau", v->live_fraction * 100,
			 v->other ? "what " : "what malloc holds", v->other ? vt_alloc_kind_name(v->other->kind) : "",
			 v->other ? " has resident" : "", rss,
			 v->other ? "" : "trim or fewer arenas would return little; ");
		break;
	case VT_LEVER_FEWER_ARENAS:
		snprintf(buf, cap, "%.0f%% is free memory spread over %llu arenas: fewer arenas "
			 "(MALLOC_ARENA_MAX=2) or another allocator keeps it from multiplying", free_pct,
			 (unsigned long long)v->narenas);
		break;
	case VT_LEVER_TRIM:
		snprintf(buf, cap, "%.0f%% is free and most of it in whole pages: malloc_trim(0) would return "
			 "at least %.1f MiB (measure with --trim)", free_pct, mib(v->trim_low));
		break;
	case VT_LEVER_ALLOCATOR:
		snprintf(buf, cap, "%.0f%% is free but fragmented (trim returns at most %.1f MiB): an "
			 "allocator that returns memory (jemalloc, mimalloc) or less churn", free_pct,
			 mib(v->trim_high));
		break;
	case VT_LEVER_DECAY:
		snprintf(buf, cap, "%.1f MiB resident is not live: %s; if it stays, %s",
			 mib(v->held > v->live ? v->held - v->live : 0),
			 v->other ? v->other->gives_back : "the allocator returns free pages on its own",
			 v->other ? v->other->if_it_stays : "look at its own settings");
		break;
	case VT_LEVER_CANNOT_TELL:
	default:
		snprintf(buf, cap, "%.0f%% of what malloc holds is free, but the per-arena figures are "
			 "missing: cannot tell which lever fits", free_pct);
	}
	return buf;
}

const char *vt_render_heap_evidence(const struct vt_heap_verdict *v, int i, char *buf, size_t cap)
{
	if (i < 0 || i >= v->n_evidence) {
		snprintf(buf, cap, "%s", "");
		return buf;
	}
	switch (v->evidence[i]) {
	case VT_HEAP_EV_LIVE:
		snprintf(buf, cap, "live (uordblks + hblkhd) %.1f MiB of %.1f MiB held (arena + hblkhd): "
			 "live_fraction %.3f", mib(v->live), mib(v->held), v->live_fraction);
		break;
	case VT_HEAP_EV_FREE_HELD:
		snprintf(buf, cap, "free but held (fordblks) %.1f MiB in %llu free chunks; top of the main "
			 "arena (keepcost) %.1f MiB", mib(v->free_bytes), (unsigned long long)v->free_chunks,
			 mib(v->keepcost));
		break;
	case VT_HEAP_EV_ARENAS:
		snprintf(buf, cap, "%llu arena%s; the one holding most free memory (arena %d) has %.0f%% of it",
			 (unsigned long long)v->narenas, v->narenas == 1 ? "" : "s", v->top_arena,
			 v->top_arena_share * 100);
		break;
	case VT_HEAP_EV_TRIM_ESTIMATE: {
		char range[48];

		/* "0.3-0.3 MiB" is one figure */
		if (lround(mib(v->trim_low) * 10) == lround(mib(v->trim_high) * 10))
			snprintf(range, sizeof(range), "about %.1f", mib(v->trim_low));
		else
			snprintf(range, sizeof(range), "%.1f-%.1f", mib(v->trim_low), mib(v->trim_high));
		snprintf(buf, cap, "malloc_trim(0) could return %s MiB now (whole pages inside free "
			 "chunks plus the main arena's top, at most RssAnon - live%s = %.1f MiB resident)",
			 range, v->py_arenas ? " - CPython's pools" : "", mib(v->trim_cap));
		break;
	}
	case VT_HEAP_EV_TRIM_MEASURED:
		snprintf(buf, cap, "measured: malloc_trim(0) took RssAnon from %.1f to %.1f MiB in %.0f ms",
			 mib(v->trim_rss_before), mib(v->trim_rss_after), v->trim_ms);
		break;
	case VT_HEAP_EV_MALLINFO_32:
		snprintf(buf, cap, "figures from 32-bit mallinfo() (glibc < 2.33): sizes above 4 GiB wrap");
		break;
	case VT_HEAP_EV_TRIM_ONCE:
		snprintf(buf, cap, "a trim would return about %.1f MiB once; continued churn refills every "
			 "arena, so it is relief, not the fix", mib(v->trim_low));
		break;
	case VT_HEAP_EV_RUNTIME:
		snprintf(buf, cap, "CPython's %llu object arenas hold %.1f MiB of pools (RssAnon %.1f MiB) that are "
			 "not malloc's: no trim or arena cap reaches them; the interpreter frees an arena only "
			 "when every object in it is gone", (unsigned long long)v->py_arenas, mib(v->py_pool_bytes),
			 mib(v->rss_anon));
		break;
	case VT_HEAP_EV_FIGURES: {
		size_t len = 0;
		int f;

		buf[0] = '\0';
		for (f = 0; f < v->stats.n_fig && len < cap; f++) {
			const struct vt_alloc_figure *fig = &v->stats.fig[f];

			if (fig->bytes)
				len += (size_t)snprintf(buf + len, cap - len, "%s%s %.1f MiB", f ? ", " : "",
							fig->label, mib(fig->value));
			else
				len += (size_t)snprintf(buf + len, cap - len, "%s%s %llu", f ? ", " : "",
							fig->label, (unsigned long long)fig->value);
		}
		if (v->narenas && len < cap)
			snprintf(buf + len, cap - len, "%s%llu arena%s", len ? ", " : "",
				 (unsigned long long)v->narenas, v->narenas == 1 ? "" : "s");
		break;
	}
	}
	return buf;
}

/* ---- the refill after a trim (analyze/refill.h) ---- */

const char *vt_refill_kind_name(enum vt_refill_kind k)
{
	switch (k) {
	case VT_REFILL_NOTHING: return "returned_nothing";
	case VT_REFILL_WITHIN_TICK: return "refills_within_a_tick";
	case VT_REFILL_BACK: return "back_at_its_level";
	case VT_REFILL_SETTLED_LOWER: return "settled_lower";
	case VT_REFILL_CANNOT_TELL: return "cannot_tell_yet";
	}
	return "unknown";
}

/* A time after the trim: tenths of a second under two minutes, else as spans are written. */
static const char *after_s(double s, char *buf, size_t cap)
{
	if (isfinite(s) && s >= 0 && s < 1)
		snprintf(buf, cap, "%.2f s", s);
	else if (isfinite(s) && s >= 0 && s < 120)
		snprintf(buf, cap, "%.1f s", s);
	else
		vt_fmt_span(s, buf, cap);
	return buf;
}

/* How long one trim costs: the stopped thread's whole stop (ptrace), or the call (agent). */
static double per_trim_ms(const struct vt_heap_sample *h)
{
	return h->method == VT_HEAP_PTRACE ? h->stopped_us / 1000 : h->trim.took_ms;
}

static const char *cost_words(const struct vt_heap_sample *h, char *buf, size_t cap)
{
	if (h->method == VT_HEAP_PTRACE)
		snprintf(buf, cap, "at this stop time (%.1f ms per trim)", per_trim_ms(h));
	else
		snprintf(buf, cap, "at %.1f ms of malloc_trim per trim (in the agent's thread: none stopped)",
			 per_trim_ms(h));
	return buf;
}

const char *vt_render_refill_headline(const struct vt_refill_verdict *v, const struct vt_heap_sample *h,
				      char *buf, size_t cap)
{
	char a[32], b[32], c[32], cost[128], more[256] = "";

	cost_words(h, cost, sizeof(cost));
	if (isfinite(v->relief) && (v->kind == VT_REFILL_SETTLED_LOWER || v->kind == VT_REFILL_CANNOT_TELL))
		snprintf(more, sizeof(more), "; over the %s after a trim it held %s less on average",
			 after_s(v->period_s, a, sizeof(a)), vt_fmt_size(v->relief, b, sizeof(b)));
	switch (v->kind) {
	case VT_REFILL_NOTHING:
		snprintf(buf, cap, "the trim returned %s (%.1f%% of committed): not a lever",
			 vt_fmt_size(v->returned, a, sizeof(a)),
			 v->before > 0 ? 100 * v->returned / v->before : 0.0);
		break;
	case VT_REFILL_WITHIN_TICK:
		snprintf(buf, cap, "it refills within a tick (half of the %s returned was back %s after the "
			 "trim): not a lever", vt_fmt_size(v->returned, a, sizeof(a)),
			 after_s(v->half_life_s, b, sizeof(b)));
		break;
	case VT_REFILL_BACK:
		if (isfinite(v->relief))
			snprintf(buf, cap, "a trim every %s would hold about %s less, %s",
				 after_s(v->period_s, a, sizeof(a)), vt_fmt_size(v->relief, b, sizeof(b)), cost);
		else
			snprintf(buf, cap, "back at its level %s after the trim; a trim every %s is longer than "
				 "the follow: follow longer to know what it holds", after_s(v->level_at_s, a, sizeof(a)),
				 after_s(v->period_s, b, sizeof(b)));
		break;
	case VT_REFILL_SETTLED_LOWER:
		snprintf(buf, cap, "one trim holds %s less for good (it settled at %s, %s after the trim)%s",
			 vt_fmt_size(v->held_for_good, a, sizeof(a)), vt_fmt_size(v->level, b, sizeof(b)),
			 after_s(v->level_at_s, c, sizeof(c)), more);
		break;
	case VT_REFILL_CANNOT_TELL:
	default:
		snprintf(buf, cap, "cannot tell yet: not back to its level after %s (%.0f%% refilled)%s",
			 after_s(v->followed_s, a, sizeof(a)),
			 isfinite(v->refilled_share) ? 100 * v->refilled_share : 0.0, more);
		break;
	}
	/* a curve that is partly growth: the verdict stands on less than it seems */
	if ((v->growing || v->overshot) && v->kind != VT_REFILL_NOTHING) {
		size_t len = strlen(buf);

		if (len < cap)
			snprintf(buf + len, cap - len, " — but it was still growing: follow again once it has settled");
	}
	return buf;
}

const char *vt_render_refill_evidence(const struct vt_refill_verdict *v, const struct vt_heap_sample *h,
				      const struct vt_trim_follow *f, int i, char *buf, size_t cap)
{
	char a[32], b[32], c[32], d[32];

	buf[0] = '\0';
	switch (i) {
	case 0:
		snprintf(buf, cap, "returned %s: committed %s -> %s (RssAnon + VmSwap, read just before and "
			 "after the call)", vt_fmt_size(v->returned, a, sizeof(a)), vt_fmt_size(v->before, b, sizeof(b)),
			 vt_fmt_size(v->after, c, sizeof(c)));
		break;
	case 1:
		if (v->kind == VT_REFILL_NOTHING)
			break;
		if (isfinite(v->half_life_s))
			snprintf(buf, cap, "half-life %s (read every %s: within one interval): half of it was "
				 "back (%s) at %s after the trim", after_s(v->half_life_s, a, sizeof(a)),
				 vt_fmt_span(f->every_s, b, sizeof(b)),
				 vt_fmt_size(v->after + v->returned / 2, c, sizeof(c)), after_s(v->half_life_s, d, sizeof(d)));
		else
			snprintf(buf, cap, "half of it was not back in the %s followed", after_s(v->followed_s, a, sizeof(a)));
		break;
	case 2:
		if (v->kind == VT_REFILL_BACK)
			snprintf(buf, cap, "back at its level: %s (median of the last points), within 10%% of what "
				 "was returned from %s after the trim", vt_fmt_size(v->level, a, sizeof(a)),
				 after_s(v->level_at_s, b, sizeof(b)));
		else if (v->kind == VT_REFILL_SETTLED_LOWER)
			snprintf(buf, cap, "flat again at %s, %s below where it was, from %s after the trim",
				 vt_fmt_size(v->level, a, sizeof(a)), vt_fmt_size(v->held_for_good, b, sizeof(b)),
				 after_s(v->level_at_s, c, sizeof(c)));
		else if (v->kind == VT_REFILL_CANNOT_TELL && isfinite(v->level))
			snprintf(buf, cap, "still on its way back when the follow ended: %s (median of the last "
				 "points), %.0f%% of what was returned", vt_fmt_size(v->level, a, sizeof(a)),
				 100 * v->refilled_share);
		break;
	case 3:
		if (isfinite(v->relief))
			snprintf(buf, cap, "relief over a %s period: %s on average (the mean of %s - committed "
				 "over the %s after the trim, read off the curve; a trim every %s repeats it if each "
				 "brings it back to %s and it refills the same way)", after_s(v->period_s, a, sizeof(a)),
				 vt_fmt_size(v->relief, b, sizeof(b)), vt_fmt_size(v->before, c, sizeof(c)), a, a,
				 vt_fmt_size(v->after, d, sizeof(d)));
		else if (isfinite(v->period_s))
			snprintf(buf, cap, "a %s period is longer than the %s followed: no relief figure for it",
				 after_s(v->period_s, a, sizeof(a)), after_s(v->followed_s, b, sizeof(b)));
		break;
	case 4:
		if (h->method == VT_HEAP_PTRACE) {
			char share[96] = "";

			if (isfinite(v->period_s) && v->period_s > 0 && v->kind != VT_REFILL_NOTHING)
				snprintf(share, sizeof(share), "; one trim every %s stops it %.3f%% of the time",
					 after_s(v->period_s, a, sizeof(a)), per_trim_ms(h) / 10 / v->period_s);
			snprintf(buf, cap, "the trim stopped one thread for %.1f ms, malloc_trim ran %.1f ms of it%s "
				 "(threads that allocate meanwhile wait on malloc's locks)%s", per_trim_ms(h),
				 h->trim.took_ms, h->has_info ? " (malloc_info too: --no-arenas leaves it out)" : "",
				 share);
		} else {
			snprintf(buf, cap, "the agent ran malloc_trim for %.1f ms in its own thread (none stopped; "
				 "threads that allocate meanwhile wait on malloc's locks)", h->trim.took_ms);
		}
		break;
	case 5:
		if (f->end == VT_FOLLOW_STOPPED)
			snprintf(buf, cap, "the follow was stopped on request after %s of %s: the curve so far",
				 after_s(v->followed_s, a, sizeof(a)), vt_fmt_span(f->asked_s, b, sizeof(b)));
		else if (f->end == VT_FOLLOW_GONE)
			snprintf(buf, cap, "the process exited during the follow, after %s: the curve up to then",
				 after_s(v->followed_s, a, sizeof(a)));
		break;
	case 6:
		if (v->overshot && !v->growing)
			snprintf(buf, cap, "it rose past where the trim found it (%s, then %s): the process was still "
				 "growing, so the curve is growth as much as refill%s",
				 vt_fmt_size(v->before, a, sizeof(a)), vt_fmt_size(v->level, b, sizeof(b)),
				 isfinite(v->lead_slope) ? " (the lead-in before the trim was too short to see it)" : "");
		else if (!isfinite(v->lead_slope))
			break;
		else if (v->growing)
			snprintf(buf, cap, "before the trim committed was still growing, %s/s over the %s read: at that "
				 "pace growth alone brings back %.0f%% of what was returned by %s, so the curve is growth "
				 "as much as refill", vt_fmt_size(v->lead_slope, a, sizeof(a)),
				 vt_fmt_span(v->lead_s, b, sizeof(b)), 100 * v->growth_share,
				 after_s(isfinite(v->half_life_s) ? v->half_life_s : v->followed_s, c, sizeof(c)));
		else
			snprintf(buf, cap, "before the trim committed moved %s/s over the %s read: the refill is not "
				 "growth that was going on anyway", vt_fmt_size_delta(v->lead_slope, a, sizeof(a)),
				 vt_fmt_span(v->lead_s, b, sizeof(b)));
		break;
	}
	return buf;
}

/*
 * heap_words.c — the heap verdict in words (see heap.h): the headline for
 * its lever and one line per evidence it cites, from the figures the
 * verdict holds.  vitals heap (text and JSON) and the demo print these.
 */
#include "render/heap.h"

#include <math.h>
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
			 "chunks plus the main arena's top, at most RssAnon - live = %.1f MiB resident)",
			 range, mib(v->trim_cap));
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

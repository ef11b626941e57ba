/*
 * heap_verdict.c — rules that turn allocator figures into a lever.
 *
 * Thresholds (ours, stated in the output): below 8 MiB held there is nothing
 * worth acting on; live >= 70% of held is live data; free memory in 3+
 * arenas with no arena holding 60% of it is arena sprawl (a trim only
 * relieves it once); a trim that returns at least half the free memory is
 * the cheap lever; otherwise the free memory is fragmented and only another
 * allocator (or less churn) helps.
 */
#include "analyze/heap_verdict.h"
#include "base/unknown.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MiB (1024.0 * 1024.0)
#define SMALL_HEAP (8ull << 20)

const char *vt_heap_lever_name(enum vt_heap_lever lever)
{
	static const char *names[] = {
		[VT_LEVER_NONE] = "none", [VT_LEVER_RETENTION] = "retention",
		[VT_LEVER_TRIM] = "trim", [VT_LEVER_FEWER_ARENAS] = "fewer_arenas",
		[VT_LEVER_ALLOCATOR] = "allocator", [VT_LEVER_DECAY] = "decay",
		[VT_LEVER_CANNOT_TELL] = "cannot_tell",
	};
	return (unsigned)lever < sizeof(names) / sizeof(names[0]) ? names[lever] : "cannot_tell";
}

static void __attribute__((format(printf, 2, 3))) evidence(struct vt_heap_verdict *v,
							     const char *fmt, ...)
{
	va_list ap;

	if (v->n_evidence >= VT_VERDICT_EVIDENCE)
		return;
	va_start(ap, fmt);
	vsnprintf(v->evidence[v->n_evidence++], sizeof(v->evidence[0]), fmt, ap);
	va_end(ap);
}

static void __attribute__((format(printf, 3, 4))) headline(struct vt_heap_verdict *v,
							     enum vt_heap_lever lever,
							     const char *fmt, ...)
{
	va_list ap;

	v->lever = lever;
	va_start(ap, fmt);
	vsnprintf(v->headline, sizeof(v->headline), fmt, ap);
	va_end(ap);
}

/* Share of all arenas' free memory held by the arena holding most. */
static double top_arena_share(const struct vt_malloc_info *info, int *top_nr)
{
	uint64_t total = 0, best = 0;
	size_t i;

	*top_nr = -1;
	for (i = 0; i < info->n_arenas; i++) {
		uint64_t f = vt_mi_free_bytes(&info->arenas[i].t);
		total += f;
		if (f > best) {
			best = f;
			*top_nr = info->arenas[i].nr;
		}
	}
	return total ? (double)best / (double)total : 0;
}

static void judge_glibc(const struct vt_heap_sample *h, uint64_t page, struct vt_heap_verdict *v)
{
	const struct vt_mallinfo *mi = &h->mi;
	uint64_t held = mi->arena + mi->hblkhd, free_held = mi->fordblks;
	double live = vt_mallinfo_live_fraction(mi), share = 0;
	int top_nr = -1;
	size_t i, narenas = h->has_info ? h->info.n_arenas : 0;

	for (i = 0; i < narenas; i++) {
		struct vt_trim_estimate e;
		vt_malloc_info_trim_estimate(&h->info.arenas[i], page, &e);
		v->trim_low += e.low_bytes;
		v->trim_high += e.high_bytes;
	}
	/* Trim returns resident pages only: never more than the resident
	 * anonymous memory that is not live. */
	if (vt_known(h->status.rss_anon)) {
		uint64_t cap = h->status.rss_anon > mi->uordblks ? h->status.rss_anon - mi->uordblks : 0;
		if (v->trim_high > cap) {
			v->trim_high = cap;
			if (v->trim_low > cap)
				v->trim_low = cap;
		}
	}
	evidence(v, "live (uordblks) %.1f MiB of %.1f MiB held (arena + mmapped): live_fraction %.3f",
		 (double)mi->uordblks / MiB, (double)held / MiB, live);
	evidence(v, "free but held (fordblks) %.1f MiB in %llu free chunks; top of the main arena "
		 "(keepcost) %.1f MiB", (double)free_held / MiB,
		 (unsigned long long)(mi->ordblks + mi->smblks), (double)mi->keepcost / MiB);
	if (narenas) {
		share = top_arena_share(&h->info, &top_nr);
		evidence(v, "%zu arenas; the one holding most free memory (arena %d) has %.0f%% of it",
			 narenas, top_nr, share * 100);
		evidence(v, "malloc_trim(0) could return %.1f-%.1f MiB now (whole pages inside free "
			 "chunks plus the tops, at most RssAnon - live = %.1f MiB resident)",
			 (double)v->trim_low / MiB, (double)v->trim_high / MiB,
			 vt_known(h->status.rss_anon) && h->status.rss_anon > mi->uordblks
				 ? (double)(h->status.rss_anon - mi->uordblks) / MiB : 0.0);
	}
	if (h->trim.done && vt_known(h->trim.rss_anon_before) && vt_known(h->trim.rss_anon_after))
		evidence(v, "measured: malloc_trim(0) took RssAnon from %.1f to %.1f MiB in %.0f ms",
			 (double)h->trim.rss_anon_before / MiB, (double)h->trim.rss_anon_after / MiB,
			 h->trim.took_ms);
	if (!mi->wide)
		evidence(v, "figures from 32-bit mallinfo() (glibc < 2.33): sizes above 4 GiB wrap");

	if (held < SMALL_HEAP) {
		headline(v, VT_LEVER_NONE, "small heap (%.1f MiB held): nothing here to act on",
			 (double)held / MiB);
	} else if (live >= 0.7) {
		headline(v, VT_LEVER_RETENTION, "this is live data (%.0f%% of what malloc holds): "
			 "look for what retains it; trim or fewer arenas would return little", live * 100);
	} else if (!narenas) {
		headline(v, VT_LEVER_CANNOT_TELL, "%.0f%% of what malloc holds is free, but the "
			 "per-arena figures are missing: cannot tell which lever fits", (1 - live) * 100);
	} else if (narenas >= 3 && share < 0.6) {
		headline(v, VT_LEVER_FEWER_ARENAS, "%.0f%% is free memory spread over %zu arenas: "
			 "fewer arenas (MALLOC_ARENA_MAX=2) or another allocator keeps it from "
			 "multiplying", (1 - live) * 100, narenas);
		if (v->trim_low)
			evidence(v, "a trim would return about %.1f MiB once; continued churn refills "
				 "every arena, so it is relief, not the fix", (double)v->trim_low / MiB);
	} else if (v->trim_low * 2 >= free_held) {
		headline(v, VT_LEVER_TRIM, "%.0f%% is free and most of it in whole pages: "
			 "malloc_trim(0) would return at least %.1f MiB (measure with --trim)",
			 (1 - live) * 100, (double)v->trim_low / MiB);
	} else {
		headline(v, VT_LEVER_ALLOCATOR, "%.0f%% is free but fragmented (trim returns at most "
			 "%.1f MiB): an allocator that returns memory (jemalloc, mimalloc) or less churn",
			 (1 - live) * 100, (double)v->trim_high / MiB);
	}
}

static void judge_jemalloc(const struct vt_heap_sample *h, struct vt_heap_verdict *v)
{
	const struct vt_jemalloc_stats *je = &h->je;
	double live = je->resident ? (double)je->allocated / (double)je->resident : 0;

	evidence(v, "allocated (live) %.1f MiB, active %.1f MiB, resident %.1f MiB, mapped %.1f MiB, "
		 "retained %.1f MiB, %llu arenas", (double)je->allocated / MiB, (double)je->active / MiB,
		 (double)je->resident / MiB, (double)je->mapped / MiB, (double)je->retained / MiB,
		 (unsigned long long)je->narenas);
	if (je->resident < SMALL_HEAP)
		headline(v, VT_LEVER_NONE, "small heap (%.1f MiB resident): nothing here to act on",
			 (double)je->resident / MiB);
	else if (live >= 0.7)
		headline(v, VT_LEVER_RETENTION, "this is live data (%.0f%% of resident): look for what "
			 "retains it", live * 100);
	else
		headline(v, VT_LEVER_DECAY, "%.1f MiB resident is not live: jemalloc returns dirty "
			 "pages on its decay timer (opt.dirty_decay_ms); if it stays, lower the decay "
			 "time or the arena count", (double)(je->resident - je->allocated) / MiB);
}

void vt_heap_judge(const struct vt_heap_sample *h, uint64_t page_size, struct vt_heap_verdict *v)
{
	memset(v, 0, sizeof(*v));
	if (h->has_je)
		judge_jemalloc(h, v);
	else
		judge_glibc(h, page_size ? page_size : 4096, v);
}

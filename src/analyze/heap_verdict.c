/*
 * heap_verdict.c — rules that turn allocator figures into a lever.
 *
 * Thresholds (ours, stated in the output): below 8 MiB held there is nothing
 * worth acting on; live >= 70% of held is live data; free memory in 3+
 * arenas with no arena holding 60% of it is arena sprawl (a trim only
 * relieves it once); a trim that returns at least half the free memory is
 * the cheap lever; otherwise the free memory is fragmented and only another
 * allocator (or less churn) helps.  No sentence is written here: the verdict
 * holds the lever, the evidence it cites and their figures (render/heap.h).
 */
#include "analyze/heap_verdict.h"
#include "base/unknown.h"

#include <math.h>
#include <string.h>

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

static void cite(struct vt_heap_verdict *v, enum vt_heap_evidence e)
{
	if (v->n_evidence < VT_VERDICT_EVIDENCE)
		v->evidence[v->n_evidence++] = e;
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
	size_t i, narenas = h->has_info ? h->info.n_arenas : 0;

	/* mmapped chunks (hblkhd) are in use and outside uordblks (alloc/glibc.h) */
	v->live = vt_mallinfo_live(mi);
	v->held = vt_mallinfo_held(mi);
	v->live_fraction = vt_mallinfo_live_fraction(mi);
	v->free_bytes = mi->fordblks;
	v->free_chunks = mi->ordblks + mi->smblks;
	v->keepcost = mi->keepcost;
	v->wide = mi->wide;
	v->narenas = narenas;
	for (i = 0; i < narenas; i++) {
		struct vt_trim_estimate e;
		vt_malloc_info_trim_estimate(&h->info.arenas[i], page, &e);
		v->trim_low += e.low_bytes;
		v->trim_high += e.high_bytes;
	}
	/* CPython's arenas are resident anonymous memory malloc does not hold */
	for (i = 0; h->blocks_walked && i < h->maps.n; i++)
		if (h->maps.v[i].py) {
			v->py_arenas += h->maps.v[i].py->arenas;
			v->py_pool_bytes += h->maps.v[i].py->pools * h->maps.v[i].py->pool_size;
		}
	/* Trim returns resident pages only: never more than the resident
	 * anonymous memory that is neither live nor the runtime's own. */
	if (vt_known(h->status.rss_anon)) {
		v->trim_cap = h->status.rss_anon > v->live + v->py_pool_bytes
			      ? h->status.rss_anon - v->live - v->py_pool_bytes : 0;
		if (v->trim_high > v->trim_cap) {
			v->trim_high = v->trim_cap;
			if (v->trim_low > v->trim_cap)
				v->trim_low = v->trim_cap;
		}
	}
	cite(v, VT_HEAP_EV_LIVE);
	cite(v, VT_HEAP_EV_FREE_HELD);
	if (narenas) {
		v->top_arena_share = top_arena_share(&h->info, &v->top_arena);
		cite(v, VT_HEAP_EV_ARENAS);
		cite(v, VT_HEAP_EV_TRIM_ESTIMATE);
	}
	if (h->trim.done && vt_known(h->trim.rss_anon_before) && vt_known(h->trim.rss_anon_after)) {
		v->trim_rss_before = h->trim.rss_anon_before;
		v->trim_rss_after = h->trim.rss_anon_after;
		v->trim_ms = h->trim.took_ms;
		cite(v, VT_HEAP_EV_TRIM_MEASURED);
	}
	if (!mi->wide)
		cite(v, VT_HEAP_EV_MALLINFO_32);
	if (v->py_arenas)
		cite(v, VT_HEAP_EV_RUNTIME);

	if (v->held < SMALL_HEAP) {
		v->lever = VT_LEVER_NONE;
	} else if (v->live_fraction >= 0.7) {
		v->lever = VT_LEVER_RETENTION;
	} else if (!narenas) {
		v->lever = VT_LEVER_CANNOT_TELL;
	} else if (narenas >= 3 && v->top_arena_share < 0.6) {
		v->lever = VT_LEVER_FEWER_ARENAS;
		if (v->trim_low)
			cite(v, VT_HEAP_EV_TRIM_ONCE);
	} else if (v->trim_low * 2 >= v->free_bytes) {
		v->lever = VT_LEVER_TRIM;
	} else {
		v->lever = VT_LEVER_ALLOCATOR;
	}
}

/* A summary figure as bytes: 0 when the allocator has no such figure (NAN). */
static uint64_t bytes_or_0(double bytes)
{
	return isnan(bytes) || bytes < 0 ? 0 : (uint64_t)bytes;
}

/* Another allocator: its summary decides; its own figures are the evidence. */
static void judge_other(const struct vt_heap_sample *h, struct vt_heap_verdict *v)
{
	const struct vt_alloc_summary *sum = &h->stats.sum;

	v->other = h->other;
	v->stats = h->stats;
	v->live = bytes_or_0(sum->live);
	v->held = bytes_or_0(sum->held);
	v->live_fraction = v->held ? (double)v->live / (double)v->held : 0;
	v->narenas = h->stats.narenas;
	cite(v, VT_HEAP_EV_FIGURES);
	if (v->held < SMALL_HEAP)
		v->lever = VT_LEVER_NONE;
	else if (v->live_fraction >= 0.7)
		v->lever = VT_LEVER_RETENTION;
	else
		v->lever = VT_LEVER_DECAY;
}

void vt_heap_judge(const struct vt_heap_sample *h, uint64_t page_size, struct vt_heap_verdict *v)
{
	memset(v, 0, sizeof(*v));
	v->top_arena = -1;
	if (vt_known(h->status.rss_anon))
		v->rss_anon = h->status.rss_anon;
	if (h->other)
		judge_other(h, v);
	else
		judge_glibc(h, page_size ? page_size : 4096, v);
}

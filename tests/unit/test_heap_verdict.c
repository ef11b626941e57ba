/*
 * test_heap_verdict.c — which lever the heap figures point to, on
 * synthetic samples built like the field report's (1.2 GB held, 44 MB live,
 * 8 arenas) and its opposites.
 */
#include "harness.h"
#include "base/unknown.h"

#include "analyze/heap_verdict.h"
#include "render/heap.h"

#include <math.h>
#include <string.h>

#define MiB (1ull << 20)

/* The verdict's headline and its i-th evidence, as the views word them (one buffer each). */
static const char *headline(const struct vt_heap_verdict *v)
{
	static char buf[VT_HEAP_LINE_MAX];

	return vt_render_heap_headline(v, buf, sizeof(buf));
}

static const char *evidence(const struct vt_heap_verdict *v, int i)
{
	static char buf[VT_HEAP_LINE_MAX];

	return vt_render_heap_evidence(v, i, buf, sizeof(buf));
}

static struct vt_mi_bin big_free_bins[] = { { 1 << 20, 1 << 22, 0, 0, 0 } };
static struct vt_mi_bin small_free_bins[] = { { 64, 512, 0, 0, 0 } };

/* n arenas sharing free_bytes as chunks of chunk bytes (big: whole pages inside) */
static void make(struct vt_heap_sample *h, struct vt_mi_arena *arenas, size_t n, uint64_t live,
		 uint64_t free_bytes, const double *share, bool big)
{
	size_t i;

	memset(h, 0, sizeof(*h));
	h->alloc.kind = VT_ALLOC_GLIBC;
	h->mi.wide = true;
	h->mi.uordblks = live;
	h->mi.fordblks = free_bytes;
	h->mi.arena = live + free_bytes;
	h->mi.ordblks = 1000;
	h->status.rss_anon = live + free_bytes;
	for (i = 0; i < n; i++) {
		uint64_t f = (uint64_t)((double)free_bytes * share[i]);
		memset(&arenas[i], 0, sizeof(arenas[i]));
		arenas[i].nr = (int)i;
		arenas[i].t.rest_bytes = f;
		arenas[i].t.system_current = f + live / n;
		arenas[i].bins = big ? big_free_bins : small_free_bins;
		arenas[i].n_bins = 1;
		arenas[i].bins[0].total = f;
		arenas[i].bins[0].count = big ? f / (2 * MiB) + 1 : f / 256 + 1;
	}
	h->info.arenas = arenas;
	h->info.n_arenas = n;
	h->has_info = true;
}

static void test_heap_verdict__field_report_arena_sprawl(void)
{
	static const double even8[] = { .125, .125, .125, .125, .125, .125, .125, .125 };
	struct vt_mi_arena arenas[8];
	struct vt_heap_sample h;
	struct vt_heap_verdict v;

	make(&h, arenas, 8, 44 * MiB, 1200 * MiB, even8, true);
	vt_heap_judge(&h, 4096, &v);
	CHECK(v.lever == VT_LEVER_FEWER_ARENAS);
	CHECK(strstr(headline(&v), "8 arenas") != NULL);
	CHECK(v.narenas == 8 && v.top_arena_share < 0.6);
	CHECK(v.n_evidence >= 3);
	CHECK(v.evidence[0] == VT_HEAP_EV_LIVE && v.evidence[2] == VT_HEAP_EV_ARENAS);
	CHECK(strstr(evidence(&v, 0), "live_fraction 0.035") != NULL);
	CHECK(strstr(evidence(&v, 2), "8 arenas; the one holding most free memory (arena 0) has 12% of it") != NULL);
	CHECK(v.evidence[v.n_evidence - 1] == VT_HEAP_EV_TRIM_ONCE);
	CHECK(strstr(evidence(&v, v.n_evidence - 1), "relief, not the fix") != NULL);
	CHECK_STR(evidence(&v, v.n_evidence), "");
	CHECK(v.trim_low > 1000 * MiB && v.trim_low <= v.trim_high);
}

static void test_heap_verdict__live_data_is_retention(void)
{
	static const double one[] = { 1 };
	struct vt_mi_arena arenas[1];
	struct vt_heap_sample h;
	struct vt_heap_verdict v;

	make(&h, arenas, 1, 900 * MiB, 100 * MiB, one, true);
	vt_heap_judge(&h, 4096, &v);
	CHECK(v.lever == VT_LEVER_RETENTION);
	/* held data, not a hunt for what retains it: that is a question only if it grows */
	CHECK_STR(headline(&v), "this is live data the program holds (90% of what malloc holds, 90% of "
				"RssAnon): trim or fewer arenas would return little; if it keeps growing, "
				"vitals soak tells a leak from a plateau");
	CHECK(strstr(headline(&v), "retains") == NULL);
	/* RssAnon unknown: no share of it */
	h.status.rss_anon = VT_NA;
	vt_heap_judge(&h, 4096, &v);
	CHECK(strstr(headline(&v), "(90% of what malloc holds): ") != NULL);
}

static void test_heap_verdict__one_arena_whole_pages_is_trim(void)
{
	static const double one[] = { 1 };
	struct vt_mi_arena arenas[1];
	struct vt_heap_sample h;
	struct vt_heap_verdict v;

	make(&h, arenas, 1, 50 * MiB, 500 * MiB, one, true);
	vt_heap_judge(&h, 4096, &v);
	CHECK(v.lever == VT_LEVER_TRIM);
	CHECK(strstr(headline(&v), "91% is free and most of it in whole pages: malloc_trim(0) would "
				   "return at least") != NULL);
	/* the estimate never exceeds the resident memory that is not live */
	h.status.rss_anon = 50 * MiB + 10 * MiB;
	vt_heap_judge(&h, 4096, &v);
	CHECK(v.trim_high <= 10 * MiB && v.trim_cap == 10 * MiB);
	CHECK(strstr(evidence(&v, 3), "at most RssAnon - live = 10.0 MiB resident") != NULL);
}

static void test_heap_verdict__fragmented_is_allocator(void)
{
	static const double one[] = { 1 };
	struct vt_mi_arena arenas[1];
	struct vt_heap_sample h;
	struct vt_heap_verdict v;

	make(&h, arenas, 1, 50 * MiB, 500 * MiB, one, false);
	vt_heap_judge(&h, 4096, &v);
	CHECK(v.lever == VT_LEVER_ALLOCATOR);
	CHECK(strstr(headline(&v), "is free but fragmented") != NULL);
}

static void test_heap_verdict__small_and_unknown(void)
{
	static const double one[] = { 1 };
	struct vt_mi_arena arenas[1];
	struct vt_heap_sample h;
	struct vt_heap_verdict v;

	make(&h, arenas, 1, 1 * MiB, 2 * MiB, one, true);
	vt_heap_judge(&h, 4096, &v);
	CHECK(v.lever == VT_LEVER_NONE);
	CHECK_STR(headline(&v), "small heap (3.0 MiB held): nothing here to act on");
	make(&h, arenas, 1, 50 * MiB, 500 * MiB, one, true);
	h.has_info = false;
	h.info.n_arenas = 0;
	vt_heap_judge(&h, 4096, &v);
	CHECK(v.lever == VT_LEVER_CANNOT_TELL);
	CHECK_STR(vt_heap_lever_name(v.lever), "cannot_tell");
	CHECK(strstr(headline(&v), "per-arena figures are missing") != NULL);
}

/* jemalloc's figures as vt_jemalloc_read fills them (active, mapped, retained, metadata 0). */
static void jemalloc_stats(struct vt_heap_sample *h, uint64_t allocated, uint64_t resident)
{
	struct vt_alloc_stats *st = &h->stats;

	h->alloc.kind = VT_ALLOC_JEMALLOC;
	h->other = vt_allocator_of(VT_ALLOC_JEMALLOC);
	memset(st, 0, sizeof(*st));
	vt_alloc_stats_add(st, "allocated", "allocated (live)", allocated, true);
	vt_alloc_stats_add(st, "active", "active", 0, true);
	vt_alloc_stats_add(st, "resident", "resident", resident, true);
	st->narenas = 4;
	st->sum.live = (double)allocated;
	st->sum.held = (double)resident;
	st->sum.free = (double)(resident - allocated);
	st->sum.trimmable = NAN;
}

static void test_heap_verdict__jemalloc(void)
{
	struct vt_heap_sample h;
	struct vt_heap_verdict v;

	memset(&h, 0, sizeof(h));
	CHECK(vt_allocator_of(VT_ALLOC_JEMALLOC) != NULL && vt_allocator_of(VT_ALLOC_MUSL) == NULL);
	jemalloc_stats(&h, 100 * MiB, 400 * MiB);
	vt_heap_judge(&h, 4096, &v);
	CHECK(v.lever == VT_LEVER_DECAY && v.other == h.other);
	CHECK_STR(headline(&v), "300.0 MiB resident is not live: jemalloc returns dirty pages on its decay "
				"timer (opt.dirty_decay_ms); if it stays, lower the decay time or the arena count");
	CHECK(v.n_evidence == 1 && v.evidence[0] == VT_HEAP_EV_FIGURES);
	CHECK_STR(evidence(&v, 0), "allocated (live) 100.0 MiB, active 0.0 MiB, resident 400.0 MiB, 4 arenas");
	jemalloc_stats(&h, 380 * MiB, 400 * MiB);
	vt_heap_judge(&h, 4096, &v);
	CHECK(v.lever == VT_LEVER_RETENTION);
	CHECK_STR(headline(&v), "this is live data the program holds (95% of what jemalloc has resident): "
				"if it keeps growing, vitals soak tells a leak from a plateau");
	/* a database holding its data: most of RssAnon is jemalloc's live data */
	h.status.rss_anon = 400 * MiB;
	vt_heap_judge(&h, 4096, &v);
	CHECK_STR(headline(&v), "this is live data the program holds (95% of what jemalloc has resident, "
				"95% of RssAnon): if it keeps growing, vitals soak tells a leak from a plateau");
	CHECK(strstr(headline(&v), "trim") == NULL && strstr(headline(&v), "arena") == NULL);
	/* a small resident set: nothing to act on, whatever the fraction */
	jemalloc_stats(&h, 1 * MiB, 4 * MiB);
	vt_heap_judge(&h, 4096, &v);
	CHECK(v.lever == VT_LEVER_NONE);
	CHECK(strstr(headline(&v), "4.0 MiB resident") != NULL);
}

/*
 * 50 live 1 MiB blocks, each above the mmap threshold and so a chunk of its
 * own (mallinfo2 of `step_growth --step-at 0 --step-mb 50 --step-chunk-kb
 * 1024 --churn-mb 0` on glibc 2.36): hblkhd holds them, in use and outside
 * uordblks; the two arenas (main, the churn thread's) are their tops.
 */
#define MMAPPED_HBLKHD (50 * (MiB + 4096))   /* each chunk: header, rounded up to pages */
#define MMAPPED_ARENA 270336ull               /* two arenas of 132 KiB */
#define MMAPPED_UORD 15360ull
#define MMAPPED_MAIN_TOP 124928ull
#define MMAPPED_T1_TOP 120832ull

static void mmapped_sample(struct vt_heap_sample *h, struct vt_mi_arena *arenas)
{
	memset(h, 0, sizeof(*h));
	memset(arenas, 0, 2 * sizeof(*arenas));
	h->alloc.kind = VT_ALLOC_GLIBC;
	h->mi.wide = true;
	h->mi.arena = MMAPPED_ARENA;
	h->mi.ordblks = 2;
	h->mi.hblks = 50;
	h->mi.hblkhd = MMAPPED_HBLKHD;
	h->mi.uordblks = MMAPPED_UORD;
	h->mi.fordblks = MMAPPED_ARENA - MMAPPED_UORD - 8192;
	h->mi.keepcost = MMAPPED_MAIN_TOP;
	h->status.rss_anon = MMAPPED_HBLKHD + MMAPPED_UORD + 300 * 1024;
	arenas[0].nr = 0;
	arenas[0].t.rest_count = 1;
	arenas[0].t.rest_bytes = MMAPPED_MAIN_TOP;
	arenas[0].t.system_current = MMAPPED_ARENA / 2;
	arenas[1].nr = 1;
	arenas[1].t.rest_count = 1;
	arenas[1].t.rest_bytes = MMAPPED_T1_TOP;
	arenas[1].t.system_current = MMAPPED_ARENA / 2;
	arenas[1].t.subheaps = 1;
	h->info.arenas = arenas;
	h->info.n_arenas = 2;
	h->has_info = true;
	h->info.total.mmap_count = 50;
	h->info.total.mmap_bytes = MMAPPED_HBLKHD;
}

/* live and held count the mmapped chunks: live = uordblks + hblkhd */
static void test_heap_verdict__mmapped_chunks_are_live(void)
{
	struct vt_mi_arena arenas[2];
	struct vt_heap_sample h;
	struct vt_heap_verdict v;

	mmapped_sample(&h, arenas);
	CHECK_EQ_U64(vt_mallinfo_live(&h.mi), MMAPPED_UORD + MMAPPED_HBLKHD);
	CHECK_EQ_U64(vt_mallinfo_held(&h.mi), MMAPPED_ARENA + MMAPPED_HBLKHD);
	vt_heap_judge(&h, 4096, &v);
	CHECK_EQ_U64(v.live, MMAPPED_UORD + MMAPPED_HBLKHD);
	CHECK_EQ_U64(v.held, MMAPPED_ARENA + MMAPPED_HBLKHD);
	CHECK_EQ_U64(v.free_bytes, h.mi.fordblks);
	CHECK(v.live_fraction > 0.99 && v.live_fraction < 1);
	CHECK(vt_mallinfo_live_fraction(&h.mi) == v.live_fraction);
	CHECK(strstr(evidence(&v, 0), "live (uordblks + hblkhd) 50.2 MiB of 50.5 MiB held (arena + hblkhd): "
				      "live_fraction 0.995") != NULL);
}

/* ... so they are not "free", and no trim is offered for them, before or after a --trim */
static void test_heap_verdict__mmapped_chunks_no_trim_lever(void)
{
	struct vt_mi_arena arenas[2];
	struct vt_heap_sample h;
	struct vt_heap_verdict v;

	mmapped_sample(&h, arenas);
	vt_heap_judge(&h, 4096, &v);
	CHECK(v.lever == VT_LEVER_RETENTION);
	CHECK(strstr(headline(&v), "is free") == NULL);
	CHECK(strstr(headline(&v), "--trim") == NULL);
	CHECK(strstr(headline(&v), "would return at least") == NULL);
	/* a measured trim that changed nothing */
	h.trim.done = true;
	h.trim.returned = 1;
	h.trim.rss_anon_before = h.trim.rss_anon_after = h.status.rss_anon;
	vt_heap_judge(&h, 4096, &v);
	CHECK(v.lever == VT_LEVER_RETENTION);
	CHECK(v.evidence[v.n_evidence - 1] == VT_HEAP_EV_TRIM_MEASURED);
}

/* what a trim could return is resident and not live: RssAnon - (uordblks + hblkhd) */
static void test_heap_verdict__trim_cap_leaves_out_mmapped(void)
{
	struct vt_mi_arena arenas[2];
	struct vt_heap_sample h;
	struct vt_heap_verdict v;

	mmapped_sample(&h, arenas);
	vt_heap_judge(&h, 4096, &v);
	CHECK_EQ_U64(v.trim_cap, 300 * 1024);
	CHECK(v.trim_high <= v.trim_cap);
	CHECK(strstr(evidence(&v, 3), "at most RssAnon - live = 0.3 MiB resident") != NULL);
}

/* malloc_trim shrinks the main arena's top, never a thread arena's */
static void test_heap_verdict__trim_estimate_main_top_only(void)
{
	struct vt_mi_arena arenas[2];
	struct vt_heap_sample h;
	struct vt_heap_verdict v;

	mmapped_sample(&h, arenas);
	vt_heap_judge(&h, 4096, &v);
	CHECK_EQ_U64(v.trim_low, MMAPPED_MAIN_TOP - 4096);
	CHECK_EQ_U64(v.trim_high, MMAPPED_MAIN_TOP);
}

/* free memory in an arena is still seen beside live mmapped chunks */
static void test_heap_verdict__arena_free_beside_mmapped(void)
{
	static const double one[] = { 1 };
	struct vt_mi_arena arenas[1];
	struct vt_heap_sample h;
	struct vt_heap_verdict v;

	make(&h, arenas, 1, 20 * MiB, 80 * MiB, one, true);
	h.mi.hblks = 100;
	h.mi.hblkhd = 100 * MiB;
	h.status.rss_anon += 100 * MiB;
	vt_heap_judge(&h, 4096, &v);
	CHECK(v.lever == VT_LEVER_TRIM);
	CHECK(v.live_fraction > 0.59 && v.live_fraction < 0.61);
	CHECK_EQ_U64(v.trim_cap, 80 * MiB);
	CHECK(strstr(headline(&v), "40% is free") != NULL);
}

VT_TEST_MAIN(test_heap_verdict__field_report_arena_sprawl, test_heap_verdict__live_data_is_retention,
	     test_heap_verdict__one_arena_whole_pages_is_trim, test_heap_verdict__fragmented_is_allocator,
	     test_heap_verdict__small_and_unknown, test_heap_verdict__jemalloc,
	     test_heap_verdict__mmapped_chunks_are_live, test_heap_verdict__mmapped_chunks_no_trim_lever,
	     test_heap_verdict__trim_cap_leaves_out_mmapped, test_heap_verdict__trim_estimate_main_top_only,
	     test_heap_verdict__arena_free_beside_mmapped)

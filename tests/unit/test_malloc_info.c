/*
 * test_malloc_info.c — malloc_info() XML recorded from a 3-thread glibc
 * 2.36 process, checked against that process's own mallinfo2().
 */
#include "harness.h"

#include "alloc/malloc_info.h"

static void test_malloc_info__recorded_three_arenas(void)
{
	struct vt_malloc_info mi;
	size_t len, i;
	char *xml = vt_fixture("heap/malloc_info_3threads.xml", &len);
	uint64_t system = 0, free_bytes = 0;

	CHECK_EQ_I64(vt_malloc_info_parse(xml, len, &mi, NULL), VT_OK);
	CHECK_EQ_U64(mi.n_arenas, 4);                 /* main + one per thread */
	CHECK_EQ_I64(mi.arenas[0].nr, 0);
	CHECK_EQ_U64(mi.arenas[0].n_bins, 0);
	CHECK_EQ_U64(mi.arenas[1].t.subheaps, 1);
	CHECK_EQ_U64(mi.arenas[1].t.fast_bytes, 1744);
	CHECK_EQ_U64(mi.arenas[1].t.rest_count, 980);
	CHECK(mi.arenas[1].bins[mi.arenas[1].n_bins - 1].unsorted);
	for (i = 0; i < mi.n_arenas; i++) {
		system += mi.arenas[i].t.system_current;
		free_bytes += vt_mi_free_bytes(&mi.arenas[i].t);
	}
	/* the process totals are the sums of the arenas */
	CHECK_EQ_U64(mi.total.system_current, system);
	CHECK_EQ_U64(vt_mi_free_bytes(&mi.total), free_bytes);
	/* ... and agree with mallinfo2() taken right after (arena=15163392,
	 * fordblks=7630064; printing the XML itself allocated a little) */
	CHECK_EQ_U64(mi.total.system_current, 15163392);
	CHECK(free_bytes > 7630064 - 76300 && free_bytes < 7630064 + 76300);
	vt_malloc_info_release(&mi);
	free(xml);
}

static void test_malloc_info__trim_estimate_bounds(void)
{
	struct vt_mi_bin bins[] = {
		{ 17, 32, 96, 3, 0 },                    /* small: nothing to release */
		{ 1 << 20, 1 << 21, 3 << 20, 2, 0 },     /* two big free chunks, 3 MiB */
	};
	struct vt_mi_arena a = { 0, { 0 }, bins, 2 };   /* the main arena */
	struct vt_trim_estimate e;

	a.t.fast_bytes = 96;
	a.t.rest_bytes = (3 << 20) + 65536;          /* + a 64 KiB top chunk */
	vt_malloc_info_trim_estimate(&a, 4096, &e);
	CHECK_EQ_U64(e.low_bytes, (3 << 20) - 2 * 2 * 4096 + 65536 - 4096);
	CHECK_EQ_U64(e.high_bytes, (3 << 20) + 65536);
	CHECK(e.low_bytes <= e.high_bytes);
}

/* malloc_trim(0) shrinks the main arena's top only (malloc.c mtrim): a
 * thread arena's top stays, its free chunks in the bins are released */
static void test_malloc_info__trim_estimate_thread_arena_keeps_top(void)
{
	struct vt_mi_bin bins[] = {
		{ 1 << 20, 1 << 21, 3 << 20, 2, 0 },     /* two big free chunks, 3 MiB */
	};
	struct vt_mi_arena a = { 1, { 0 }, bins, 1 };
	struct vt_trim_estimate e;

	a.t.rest_bytes = (3 << 20) + 120832;         /* + a 118 KiB top chunk */
	vt_malloc_info_trim_estimate(&a, 4096, &e);
	CHECK_EQ_U64(e.low_bytes, (3 << 20) - 2 * 2 * 4096);
	CHECK_EQ_U64(e.high_bytes, 3 << 20);
	/* a thread arena that is all top: nothing malloc_trim returns */
	a.n_bins = 0;
	a.t.rest_bytes = 120832;
	vt_malloc_info_trim_estimate(&a, 4096, &e);
	CHECK_EQ_U64(e.low_bytes, 0);
	CHECK_EQ_U64(e.high_bytes, 0);
}

static void test_malloc_info__rejects_other_documents(void)
{
	static const char *bad[] = {
		"",
		"<malloc version=\"2\"></malloc>",
		"<html/>",
		"<malloc version=\"1\"><heap nr=\"x\"></heap></malloc>",
		"<malloc version=\"1\"><heap nr=\"0\"><heap nr=\"1\"></heap></heap></malloc>",
		"<malloc version=\"1\"><heap nr=\"0\"><sizes><size from=\"1\" to=\"2\" total=\"-3\" count=\"1\"/></sizes></heap></malloc>",
		"<malloc version=\"1\"><heap nr=\"0\">",
	};
	struct vt_malloc_info mi;
	struct vt_err err;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_EQ_I64(vt_malloc_info_parse(bad[i], strlen(bad[i]), &mi, &err), VT_E_PARSE);
		CHECK(mi.arenas == NULL && mi.n_arenas == 0);
	}
}

VT_TEST_MAIN(test_malloc_info__recorded_three_arenas, test_malloc_info__trim_estimate_bounds,
	     test_malloc_info__trim_estimate_thread_arena_keeps_top, test_malloc_info__rejects_other_documents)

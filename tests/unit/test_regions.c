/*
 * test_regions.c — classification of mappings and the arena cap, on the
 * recorded arena_churn fixtures and on synthetic layouts with a fake
 * target memory.
 */
#include "harness.h"
#include "base/unknown.h"

#include "alloc/arena_cap.h"
#include "alloc/regions.h"
#include "proc/maps.h"

#define MiB (1ull << 20)

static void load(const char *rel, struct vt_region_list *list)
{
	size_t len;
	char *buf = vt_fixture(rel, &len);

	memset(list, 0, sizeof(*list));
	CHECK_EQ_I64(vt_maps_parse(buf, len, list, NULL), VT_OK);
	free(buf);
}

static size_t count_kind(const struct vt_region_list *l, enum vt_region_kind k)
{
	size_t i, n = 0;

	for (i = 0; i < l->n; i++)
		n += l->v[i].kind == k;
	return n;
}

static void test_regions__arena_sprawl_by_layout(void)
{
	struct vt_classify_ctx ctx = { .alloc = VT_ALLOC_GLIBC };
	struct vt_region_list list;
	struct vt_arena_summary a;

	load("proc/arena_default/proc/9277/smaps", &list);
	vt_regions_classify(&list, &ctx, &a);
	/* recorded with 8 worker threads under the default cap of 16 */
	CHECK_EQ_I64(a.heaps, 8);
	CHECK_EQ_I64(a.arenas, -1);             /* not verified without memory */
	CHECK(!a.verified);
	CHECK_EQ_U64(count_kind(&list, VT_REGION_ARENA_HEAP), 8);
	CHECK_EQ_U64(count_kind(&list, VT_REGION_ARENA_RESERVE), 8);
	CHECK_EQ_U64(count_kind(&list, VT_REGION_MAIN_HEAP), 1);
	CHECK_EQ_U64(count_kind(&list, VT_REGION_MAIN_STACK), 1);
	CHECK_EQ_U64(count_kind(&list, VT_REGION_THREAD_STACK), 8);
	CHECK_EQ_U64(count_kind(&list, VT_REGION_GUARD), 8);
	CHECK_EQ_U64(a.reserved_bytes, 8 * 64 * MiB);
	CHECK(vt_known(a.rss_bytes) && a.rss_bytes > 100 * MiB);
	CHECK(a.mapped_bytes >= a.rss_bytes);
	vt_region_list_release(&list);
}

static void test_regions__capped_process_has_one_arena_heap(void)
{
	struct vt_classify_ctx ctx = { .alloc = VT_ALLOC_GLIBC };
	struct vt_region_list list;
	struct vt_arena_summary a;

	load("proc/arena_max2/proc/9278/smaps", &list);
	vt_regions_classify(&list, &ctx, &a);
	CHECK_EQ_I64(a.heaps, 1);               /* MALLOC_ARENA_MAX=2: main + 1 */
	vt_region_list_release(&list);
}

static void test_regions__not_glibc_has_no_arenas(void)
{
	struct vt_classify_ctx ctx = { .alloc = VT_ALLOC_JEMALLOC };
	struct vt_region_list list;
	struct vt_arena_summary a;

	load("proc/arena_default/proc/9277/maps", &list);
	vt_regions_classify(&list, &ctx, &a);
	CHECK_EQ_I64(a.heaps, 0);
	CHECK(count_kind(&list, VT_REGION_ALLOC_OTHER) > 0);
	CHECK(!vt_known(a.rss_bytes));          /* maps only: unknown, not 0 */
	vt_region_list_release(&list);
}

/* ---- synthetic layouts with a fake target memory ---- */

struct fake_word {
	uint64_t addr, value;
};
struct fake_mem {
	const struct fake_word *w;
	size_t n;
};

static int fake_read(void *ctx, uint64_t addr, void *out, size_t len)
{
	const struct fake_mem *m = ctx;
	uint64_t *words = out;
	size_t i, j;

	for (j = 0; j < len / 8; j++) {
		words[j] = 0;
		for (i = 0; i < m->n; i++)
			if (m->w[i].addr == addr + j * 8)
				words[j] = m->w[i].value;
	}
	return VT_OK;
}

static void parse_text(const char *text, struct vt_region_list *list)
{
	memset(list, 0, sizeof(*list));
	CHECK_EQ_I64(vt_maps_parse(text, strlen(text), list, NULL), VT_OK);
}

static void test_regions__heap_info_counts_arenas(void)
{
	/* arena A: one heap; arena B: two heaps (second has prev = first) */
	const char *text =
		"7f0000000000-7f0000100000 rw-p 00000000 00:00 0 \n"
		"7f0000100000-7f0004000000 ---p 00000000 00:00 0 \n"
		"7f0004000000-7f0008000000 rw-p 00000000 00:00 0 \n"   /* full heap, B first */
		"7f0008000000-7f0008200000 rw-p 00000000 00:00 0 \n"   /* B second... merged? no: own VMA */
		"7f0008200000-7f000c000000 ---p 00000000 00:00 0 \n";
	const struct fake_word words[] = {
		{ 0x7f0000000000, 0x7f0000000030 }, { 0x7f0000000008, 0 },
		{ 0x7f0000000010, 0x100000 }, { 0x7f0000000018, 0x100000 },
		{ 0x7f0004000000, 0x7f0004000030 }, { 0x7f0004000008, 0 },
		{ 0x7f0004000010, 0x4000000 }, { 0x7f0004000018, 0x4000000 },
		{ 0x7f0008000000, 0x7f0004000030 }, { 0x7f0008000008, 0x7f0004000000 },
		{ 0x7f0008000010, 0x200000 }, { 0x7f0008000018, 0x200000 },
	};
	struct fake_mem mem = { words, sizeof(words) / sizeof(words[0]) };
	struct vt_classify_ctx ctx = { .alloc = VT_ALLOC_GLIBC, .read_mem = fake_read, .read_ctx = &mem };
	struct vt_region_list list;
	struct vt_arena_summary a;

	parse_text(text, &list);
	vt_regions_classify(&list, &ctx, &a);
	CHECK_EQ_I64(a.heaps, 3);
	CHECK_EQ_I64(a.arenas, 2);
	CHECK(a.verified);
	CHECK(list.v[0].kind == VT_REGION_ARENA_HEAP);
	CHECK(list.v[0].kind_flags & VT_KIND_BY_MEMORY);
	CHECK(list.v[1].kind == VT_REGION_ARENA_RESERVE);
	CHECK(list.v[2].kind == VT_REGION_ARENA_HEAP);
	CHECK(list.v[3].kind == VT_REGION_ARENA_HEAP);
	vt_region_list_release(&list);
}

static void test_regions__merged_full_and_partial_heaps(void)
{
	/* a full heap and the next (partial) heap of the same arena, merged into
	 * one VMA by the kernel, with unrelated memory below the boundary */
	const char *text =
		"7f0003f00000-7f0008200000 rw-p 00000000 00:00 0 \n"
		"7f0008200000-7f000c000000 ---p 00000000 00:00 0 \n";
	const struct fake_word words[] = {
		{ 0x7f0004000000, 0x7f0004000030 }, { 0x7f0004000008, 0 },
		{ 0x7f0004000010, 0x4000000 }, { 0x7f0004000018, 0x4000000 },
		{ 0x7f0008000000, 0x7f0004000030 }, { 0x7f0008000008, 0x7f0004000000 },
		{ 0x7f0008000010, 0x200000 }, { 0x7f0008000018, 0x200000 },
	};
	struct fake_mem mem = { words, sizeof(words) / sizeof(words[0]) };
	struct vt_classify_ctx ctx = { .alloc = VT_ALLOC_GLIBC, .read_mem = fake_read, .read_ctx = &mem };
	struct vt_region_list list;
	struct vt_arena_summary a;

	parse_text(text, &list);
	vt_regions_classify(&list, &ctx, &a);
	CHECK_EQ_I64(a.heaps, 2);
	CHECK_EQ_I64(a.arenas, 1);
	CHECK_EQ_U64(a.mapped_bytes, 64 * MiB + 2 * MiB);
	CHECK(list.v[0].kind == VT_REGION_ARENA_HEAP);
	CHECK(list.v[1].kind == VT_REGION_ARENA_RESERVE);
	vt_region_list_release(&list);
}

/*
 * Two races of a busy allocator against a snap (one counted 4 + main arenas
 * where there were 6 + main, and listed one region twice):
 *  - maps is written a kernel buffer at a time; a heap that grew between
 *    two of them comes out again, from its start, after the part written
 *    before: the older line is dropped, the list stays sorted;
 *  - heap_info is read after maps: a heap that grew in between says a size
 *    past the read-write part maps showed, and is still the arena's heap.
 */
static void test_regions__busy_arena_races(void)
{
	const char *text =
		"7f0000000000-7f0000100000 rw-p 00000000 00:00 0 \n"   /* written in one buffer... */
		"7f0000000000-7f0000300000 rw-p 00000000 00:00 0 \n"   /* ...grown, in the next */
		"7f0000300000-7f0004000000 ---p 00000000 00:00 0 \n"
		"7f0004000000-7f0004100000 rw-p 00000000 00:00 0 \n"   /* maps says 1 MiB... */
		"7f0004100000-7f0008000000 ---p 00000000 00:00 0 \n";
	const struct fake_word words[] = {
		{ 0x7f0000000000, 0x7f0000000030 }, { 0x7f0000000008, 0 },
		{ 0x7f0000000010, 0x300000 }, { 0x7f0000000018, 0x300000 },
		{ 0x7f0004000000, 0x7f0004000030 }, { 0x7f0004000008, 0 },
		{ 0x7f0004000010, 0x180000 }, { 0x7f0004000018, 0x200000 },  /* ...heap_info 1.5 MiB */
	};
	struct fake_mem mem = { words, sizeof(words) / sizeof(words[0]) };
	struct vt_classify_ctx ctx = { .alloc = VT_ALLOC_GLIBC, .read_mem = fake_read, .read_ctx = &mem };
	struct vt_region_list list;
	struct vt_arena_summary a;

	parse_text(text, &list);
	CHECK_EQ_U64(list.n, 4);
	CHECK_EQ_U64(list.stale, 1);
	CHECK_EQ_U64(list.v[0].end, 0x7f0000300000);
	vt_regions_classify(&list, &ctx, &a);
	CHECK_EQ_I64(a.heaps, 2);
	CHECK_EQ_I64(a.arenas, 2);
	CHECK(a.verified);
	CHECK_EQ_U64(a.mapped_bytes, 4 * MiB);
	CHECK(list.v[0].kind == VT_REGION_ARENA_HEAP && list.v[2].kind == VT_REGION_ARENA_HEAP);
	vt_region_list_release(&list);
}

static void test_regions__aligned_mapping_that_is_not_a_heap(void)
{
	/* the same layout, but the memory holds no heap_info */
	const char *text =
		"7f0000000000-7f0000100000 rw-p 00000000 00:00 0 \n"
		"7f0000100000-7f0004000000 ---p 00000000 00:00 0 \n";
	struct fake_mem mem = { NULL, 0 };
	struct vt_classify_ctx ctx = { .alloc = VT_ALLOC_GLIBC, .read_mem = fake_read, .read_ctx = &mem };
	struct vt_region_list list;
	struct vt_arena_summary a;

	parse_text(text, &list);
	vt_regions_classify(&list, &ctx, &a);
	CHECK_EQ_I64(a.heaps, 0);
	CHECK(list.v[0].kind != VT_REGION_ARENA_HEAP);
	vt_region_list_release(&list);
}

static void test_regions__merged_mmapped_chunks(void)
{
	/* two mmapped chunks (3 MiB + 1 MiB) merged by the kernel into one VMA,
	 * and a 2 MiB mapping whose header is not a chunk's */
	const char *text =
		"7f1000000000-7f1000400000 rw-p 00000000 00:00 0 \n"
		"7f2000000000-7f2000200000 rw-p 00000000 00:00 0 \n"
		"7f3000000000-7f3000010000 rw-p 00000000 00:00 0 \n";   /* 64 KiB: below the threshold */
	const struct fake_word words[] = {
		{ 0x7f1000000008, (3 * MiB) | 2 },
		{ 0x7f1000300008, (1 * MiB) | 2 },
		{ 0x7f2000000008, 12345 },
		{ 0x7f3000000008, 0x10000 | 2 },
	};
	struct fake_mem mem = { words, sizeof(words) / sizeof(words[0]) };
	struct vt_classify_ctx ctx = { .alloc = VT_ALLOC_GLIBC, .read_mem = fake_read, .read_ctx = &mem };
	struct vt_region_list list;
	struct vt_arena_summary a;

	parse_text(text, &list);
	vt_regions_classify(&list, &ctx, &a);
	CHECK(list.v[0].kind == VT_REGION_MMAP_CHUNK);
	CHECK(list.v[1].kind == VT_REGION_ANON);
	CHECK(list.v[2].kind == VT_REGION_ANON);       /* not probed */
	vt_region_list_release(&list);
	/* a lower threshold from the environment makes it a candidate */
	ctx.mmap_threshold = 4096;
	parse_text(text, &list);
	vt_regions_classify(&list, &ctx, &a);
	CHECK(list.v[2].kind == VT_REGION_MMAP_CHUNK);
	vt_region_list_release(&list);
}

static void test_regions__block_merged_below_an_arena_heap(void)
{
	/* a 1 MiB mmapped chunk right below a partial arena heap: the kernel
	 * merged the two; the heap is not walked, the block is found */
	const char *text =
		"7f0003f00000-7f0004200000 rw-p 00000000 00:00 0 \n"
		"7f0004200000-7f0008000000 ---p 00000000 00:00 0 \n";
	const struct fake_word words[] = {
		{ 0x7f0003f00008, (1 * MiB) | 2 },
		{ 0x7f0004000000, 0x7f0004000030 }, { 0x7f0004000008, 0 },
		{ 0x7f0004000010, 0x200000 }, { 0x7f0004000018, 0x200000 },
		{ 0x7f0004100008, (512 << 10) | 2 },      /* inside the heap: a chunk's bytes, not walked */
	};
	struct fake_mem mem = { words, sizeof(words) / sizeof(words[0]) };
	struct vt_classify_ctx ctx = { .alloc = VT_ALLOC_GLIBC, .read_mem = fake_read, .read_ctx = &mem,
				       .find_blocks = true };
	struct vt_region_list list;
	struct vt_arena_summary a;

	parse_text(text, &list);
	vt_regions_classify(&list, &ctx, &a);
	CHECK_EQ_I64(a.heaps, 1);
	CHECK(list.v[0].kind == VT_REGION_ARENA_HEAP);
	CHECK(list.v[0].blocks != NULL);
	if (list.v[0].blocks) {
		CHECK_EQ_U64(list.v[0].blocks->n, 1);
		CHECK_EQ_U64(list.v[0].blocks->v[0].addr, 0x7f0003f00000);
		CHECK_EQ_U64(list.v[0].blocks->v[0].size, 1 * MiB);
		CHECK_EQ_U64(list.v[0].blocks->excluded_bytes, 2 * MiB);
		CHECK_EQ_U64(list.v[0].blocks->other_bytes, 0);
	}
	vt_region_list_release(&list);
	/* a light sample does not look there */
	ctx.find_blocks = false;
	parse_text(text, &list);
	vt_regions_classify(&list, &ctx, &a);
	CHECK(list.v[0].blocks == NULL);
	vt_region_list_release(&list);
}

static void test_regions__thread_stack_by_sp(void)
{
	const char *text =
		"7f3000000000-7f3000001000 ---p 00000000 00:00 0 \n"
		"7f3000001000-7f3000800000 rw-p 00000000 00:00 0 \n"
		"7f4000000000-7f4000800000 rw-p 00000000 00:00 0 \n";
	struct vt_thread_sp threads[] = { { 0x7f40007ff000, 102 }, { 0x7f30007ff000, 101 },
					   { 0x7fff00000000, 1 } };
	struct vt_classify_ctx ctx = { .alloc = VT_ALLOC_GLIBC, .threads = threads, .n_threads = 3 };
	struct vt_region_list list;
	struct vt_arena_summary a;

	vt_thread_sp_sort(threads, 3);
	parse_text(text, &list);
	vt_regions_classify(&list, &ctx, &a);
	CHECK(list.v[0].kind == VT_REGION_GUARD);
	CHECK(list.v[1].kind == VT_REGION_THREAD_STACK);
	CHECK(list.v[1].kind_flags & VT_KIND_BY_THREAD_SP);
	CHECK(list.v[1].kind_flags & VT_KIND_BY_LAYOUT);
	CHECK_EQ_I64(list.v[1].owner_tid, 101);
	/* no guard, but a thread runs on it (e.g. a user-supplied stack) */
	CHECK(list.v[2].kind == VT_REGION_THREAD_STACK);
	CHECK_EQ_I64(list.v[2].owner_tid, 102);
	vt_region_list_release(&list);
}

/*
 * vitals heap gives the threads' stack pointers with stack_needs_guard: a
 * thread's stack made by pthread (a guard page right below) is not walked for
 * blocks, even where a word in it looks like a chunk's header; a mapping a
 * thread runs on without a guard below (a coroutine's stack, here a malloc'd
 * block of its own) is walked, and its block found.
 */
static void test_regions__stack_needs_guard(void)
{
	const char *text =
		"7f3000000000-7f3000001000 ---p 00000000 00:00 0 \n"
		"7f3000001000-7f3000801000 rw-p 00000000 00:00 0 \n"
		"7f4000000000-7f4000100000 rw-p 00000000 00:00 0 \n";
	const struct fake_word words[] = {
		{ 0x7f3000400008, (256 << 10) | 2 },      /* a stack's bytes that look like a header */
		{ 0x7f4000000008, (1 * MiB) | 2 },        /* the coroutine's stack: a mmapped chunk */
	};
	struct fake_mem mem = { words, sizeof(words) / sizeof(words[0]) };
	struct vt_thread_sp threads[] = { { 0x7f30007ff000, 101 }, { 0x7f40000ff000, 102 } };
	struct vt_classify_ctx ctx = { .alloc = VT_ALLOC_GLIBC, .read_mem = fake_read, .read_ctx = &mem,
				       .threads = threads, .n_threads = 2, .stack_needs_guard = true,
				       .find_blocks = true };
	struct vt_region_list list;
	struct vt_arena_summary a;

	vt_thread_sp_sort(threads, 2);
	parse_text(text, &list);
	vt_regions_classify(&list, &ctx, &a);
	CHECK(list.v[0].kind == VT_REGION_GUARD);
	CHECK(list.v[1].kind == VT_REGION_THREAD_STACK);
	CHECK_EQ_I64(list.v[1].owner_tid, 101);
	CHECK(list.v[1].blocks == NULL);
	CHECK(list.v[2].kind == VT_REGION_MMAP_CHUNK);
	CHECK(list.v[2].blocks != NULL);
	if (list.v[2].blocks) {
		CHECK_EQ_U64(list.v[2].blocks->n, 1);
		CHECK_EQ_U64(list.v[2].blocks->v[0].addr, 0x7f4000000000);
		CHECK_EQ_U64(list.v[2].blocks->v[0].size, 1 * MiB);
	}
	vt_region_list_release(&list);
}

/* mimalloc reserves address space PROT_NONE and commits a segment above it: a guard-like
 * run below a 28 MiB rw-p region no thread runs on is an allocator's, not a cached stack;
 * an 8 MiB one is still a stack glibc keeps for its next thread (a mimalloc process's
 * threads are glibc's all the same). */
static void test_regions__big_region_over_guard_is_not_a_stack(void)
{
	const char *text =
		"053000000000-053000001000 ---p 00000000 00:00 0 \n"
		"053000001000-053001c01000 rw-p 00000000 00:00 0 \n"
		"7f3000000000-7f3000001000 ---p 00000000 00:00 0 \n"
		"7f3000001000-7f3000801000 rw-p 00000000 00:00 0 \n";
	struct vt_classify_ctx ctx = { .alloc = VT_ALLOC_MIMALLOC };
	struct vt_region_list list;
	struct vt_arena_summary a;

	parse_text(text, &list);
	vt_regions_classify(&list, &ctx, &a);
	CHECK(list.v[1].kind == VT_REGION_ALLOC_OTHER);
	CHECK(list.v[0].kind != VT_REGION_GUARD);
	CHECK(list.v[3].kind == VT_REGION_THREAD_STACK);
	CHECK(list.v[2].kind == VT_REGION_GUARD);
	vt_region_list_release(&list);
}

static void test_regions__names(void)
{
	const char *text =
		"55d000000000-55d000021000 rw-p 00000000 00:00 0 [heap]\n"
		"7f5000000000-7f5000001000 rw-s 00000000 00:05 77 /dev/shm/x\n"
		"7f5000001000-7f5000002000 r-xp 00000000 08:01 99 /usr/lib/libc.so.6\n"
		"7f5000002000-7f5000003000 rw-p 00000000 00:00 0 [anon: glibc: malloc arena]\n"
		"7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0 [stack]\n"
		"7ffd00100000-7ffd00102000 r-xp 00000000 00:00 0 [vdso]\n";
	struct vt_classify_ctx ctx = { .alloc = VT_ALLOC_GLIBC };
	struct vt_region_list list;
	struct vt_arena_summary a;

	parse_text(text, &list);
	vt_regions_classify(&list, &ctx, &a);
	CHECK(list.v[0].kind == VT_REGION_MAIN_HEAP);
	CHECK(list.v[1].kind == VT_REGION_SHMEM);
	CHECK(list.v[2].kind == VT_REGION_FILE);
	CHECK(list.v[3].kind == VT_REGION_ARENA_HEAP);
	CHECK(list.v[4].kind == VT_REGION_MAIN_STACK);
	CHECK(list.v[5].kind == VT_REGION_SPECIAL);
	CHECK_EQ_U64(a.main_heap_bytes, 0x21000);
	vt_region_list_release(&list);
}

/* Every name that decides a kind, and names that look like one but do not (most mappings are looked at by their first byte only). */
static void test_regions__every_name(void)
{
	static const struct {
		const char *line;
		enum vt_region_kind kind;
	} cases[] = {
		{ "1000-2000 rw-p 00000000 00:00 0 [heap]", VT_REGION_MAIN_HEAP },
		{ "1000-2000 rw-p 00000000 00:00 0 [stack]", VT_REGION_MAIN_STACK },
		{ "1000-2000 r--p 00000000 00:00 0 [vvar]", VT_REGION_SPECIAL },
		{ "1000-2000 r--p 00000000 00:00 0 [vvar_vclock]", VT_REGION_SPECIAL },
		{ "1000-2000 r-xp 00000000 00:00 0 [vdso]", VT_REGION_SPECIAL },
		{ "1000-2000 --xp 00000000 00:00 0 [vsyscall]", VT_REGION_SPECIAL },
		{ "1000-2000 r-xp 00000000 00:00 0 [uprobes]", VT_REGION_SPECIAL },
		{ "1000-2000 rw-p 00000000 00:00 0 [anon: glibc: malloc arena]", VT_REGION_ARENA_HEAP },
		{ "1000-2000 rw-p 00000000 00:00 0 [anon: glibc: pthread stack: 77]", VT_REGION_THREAD_STACK },
		{ "1000-2000 rw-p 00000000 00:00 0 [anon: glibc: malloc]", VT_REGION_MMAP_CHUNK },
		{ "1000-2000 rw-p 00000000 00:00 0 [anon: mine]", VT_REGION_OTHER },
		{ "1000-2000 rw-p 00000000 00:00 0 [heapx]", VT_REGION_OTHER },
		{ "1000-2000 rw-s 00000000 00:01 0 [anon: mine]", VT_REGION_SHMEM },
		{ "1000-2000 rw-s 00000000 00:01 5 ", VT_REGION_SHMEM },
		{ "1000-2000 rw-p 00000000 00:05 9 /dev/shm/x", VT_REGION_SHMEM },
		{ "1000-2000 rw-p 00000000 00:01 9 /memfd:buf (deleted)", VT_REGION_SHMEM },
		{ "1000-2000 rw-p 00000000 00:01 0 /SYSV00000001", VT_REGION_SHMEM },
		{ "1000-2000 r--p 00000000 08:01 9 /usr/lib/libc.so.6", VT_REGION_FILE },
		{ "1000-2000 r--p 00000000 08:01 9 dev/shm/x", VT_REGION_FILE },
		{ "1000-2000 rw-p 00000000 00:00 0 ", VT_REGION_ANON },   /* no name: decided by layout */
	};
	struct vt_classify_ctx ctx = { .alloc = VT_ALLOC_UNKNOWN };
	struct vt_region_list list;
	struct vt_arena_summary a;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		parse_text(cases[i].line, &list);
		CHECK_EQ_U64(list.n, 1);
		vt_regions_classify(&list, &ctx, &a);
		if (list.v[0].kind != cases[i].kind)
			printf("#   %s: %s, want %s\n", cases[i].line, vt_region_kind_name(list.v[0].kind),
			       vt_region_kind_name(cases[i].kind));
		CHECK(list.v[0].kind == cases[i].kind);
		vt_region_list_release(&list);
	}
}

static void test_arena_cap__sources(void)
{
	static const char env_max[] = "PATH=/bin\0MALLOC_ARENA_MAX=2";
	static const char env_both[] = "MALLOC_ARENA_MAX=2\0GLIBC_TUNABLES=glibc.malloc.arena_max=3";
	static const char env_bad[] = "MALLOC_ARENA_MAX=lots";
	static const char env_none[] = "PATH=/bin";
	struct vt_arena_cap cap;

	vt_arena_cap_decide(env_max, sizeof(env_max) - 1, 2, &cap);
	CHECK(cap.source == VT_CAP_ENV);
	CHECK_EQ_U64(cap.value, 2);
	vt_arena_cap_decide(env_both, sizeof(env_both) - 1, 2, &cap);
	CHECK(cap.source == VT_CAP_TUNABLE);
	CHECK_EQ_U64(cap.value, 3);
	CHECK(strstr(cap.note, "MALLOC_ARENA_MAX") != NULL);
	vt_arena_cap_decide(env_bad, sizeof(env_bad) - 1, 4, &cap);
	CHECK(cap.source == VT_CAP_DEFAULT);
	CHECK_EQ_U64(cap.value, 32);
	CHECK(strstr(cap.note, "ignores") != NULL);
	vt_arena_cap_decide(env_none, sizeof(env_none) - 1, 2, &cap);
	CHECK(cap.source == VT_CAP_DEFAULT);
	CHECK_EQ_U64(cap.value, 16);
	vt_arena_cap_decide(NULL, 0, 2, &cap);
	CHECK(cap.source == VT_CAP_UNKNOWN);
	CHECK_EQ_U64(cap.value, 0);
}

VT_TEST_MAIN(test_regions__arena_sprawl_by_layout, test_regions__capped_process_has_one_arena_heap,
	     test_regions__not_glibc_has_no_arenas, test_regions__heap_info_counts_arenas,
	     test_regions__merged_full_and_partial_heaps, test_regions__busy_arena_races,
	     test_regions__aligned_mapping_that_is_not_a_heap, test_regions__merged_mmapped_chunks,
	     test_regions__block_merged_below_an_arena_heap,
	     test_regions__thread_stack_by_sp, test_regions__stack_needs_guard,
	     test_regions__big_region_over_guard_is_not_a_stack,
	     test_regions__names, test_regions__every_name, test_arena_cap__sources)

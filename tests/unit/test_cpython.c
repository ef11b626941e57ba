/*
 * test_cpython.c — CPython's interpreter found from its maps, and its pool
 * headers told from other memory, on literal headers and a fake memory.
 */
#include "harness.h"

#include "alloc/cpython.h"
#include "proc/maps.h"

#define KiB (1ull << 10)
#define MiB (1ull << 20)
#define BASE 0x7f0000000000ull

static void parse_text(const char *text, struct vt_region_list *list)
{
	memset(list, 0, sizeof(*list));
	CHECK_EQ_I64(vt_maps_parse(text, strlen(text), list, NULL), VT_OK);
}

static void test_cpython__detect(void)
{
	struct vt_region_list l;
	struct vt_cpython py;

	parse_text("7f1000000000-7f1000100000 r-xp 00000000 08:01 42 /usr/lib/libpython3.11.so.1.0\n", &l);
	vt_cpython_detect(&l, &py);
	CHECK(py.is_python);
	CHECK_EQ_I64(py.major, 3);
	CHECK_EQ_I64(py.minor, 11);
	vt_region_list_release(&l);
	parse_text("55d000000000-55d000100000 r-xp 00000000 08:01 42 /usr/bin/python3.9\n", &l);
	vt_cpython_detect(&l, &py);
	CHECK(py.is_python && py.major == 3 && py.minor == 9);
	vt_region_list_release(&l);
	parse_text("55d000000000-55d000100000 r-xp 00000000 08:01 42 /usr/bin/python3\n", &l);
	vt_cpython_detect(&l, &py);
	CHECK(py.is_python && py.major == 0 && py.minor == 0);   /* version unknown */
	vt_region_list_release(&l);
	/* not an interpreter: a name that only starts like one */
	parse_text("55d000000000-55d000100000 r-xp 00000000 08:01 42 /usr/bin/python-config-tool\n"
		   "7f1000000000-7f1000100000 r-xp 00000000 08:01 43 /usr/lib/libpythonic.so\n", &l);
	vt_cpython_detect(&l, &py);
	CHECK(!py.is_python);
	vt_region_list_release(&l);
}

/* A pool header as init_pool leaves it, then after n allocations. */
static void pool(uint8_t raw[VT_PY_POOL_OVERHEAD], uint32_t count, uint64_t freeblock, uint64_t next, uint64_t prev,
		 uint32_t index, uint32_t szidx, uint32_t nextoffset, uint32_t maxnext)
{
	memset(raw, 0, VT_PY_POOL_OVERHEAD);
	memcpy(raw, &count, 4);
	memcpy(raw + 8, &freeblock, 8);
	memcpy(raw + 16, &next, 8);
	memcpy(raw + 24, &prev, 8);
	memcpy(raw + 32, &index, 4);
	memcpy(raw + 36, &szidx, 4);
	memcpy(raw + 40, &nextoffset, 4);
	memcpy(raw + 44, &maxnext, 4);
}

static void test_cpython__pool_check(void)
{
	uint8_t raw[VT_PY_POOL_OVERHEAD];
	struct vt_py_pool p;
	uint64_t at = BASE + 16 * KiB, ring = 0x7f5000001000ull;

	/* 3.11: a 16 KiB pool of 32-byte blocks (szidx 1), 10 in use */
	pool(raw, 10, at + 48 + 32 * 10, ring, ring, 3, 1, 48 + 32 * 11, 16384 - 32);
	vt_py_pool_decode(raw, &p);
	CHECK_EQ_U64(vt_py_pool_check(&p, at, 16), 16384);
	/* the same at an address that is not 16 KiB aligned: no pool */
	CHECK_EQ_U64(vt_py_pool_check(&p, at + 4096, 16), 0);
	/* 3.9: a 4 KiB pool */
	pool(raw, 1, 0, ring, ring, 7, 0, 48 + 32, 4096 - 16);
	vt_py_pool_decode(raw, &p);
	CHECK_EQ_U64(vt_py_pool_check(&p, at + 4096, 16), 4096);
	/* near misses: each one field off */
	pool(raw, 10, at + 48 + 32 * 10, ring, ring, 3, 32, 48 + 32 * 11, 16384 - 32);   /* szidx past 31 */
	vt_py_pool_decode(raw, &p);
	CHECK_EQ_U64(vt_py_pool_check(&p, at, 16), 0);
	pool(raw, 10, at + 48 + 32 * 10, ring, ring, 3, 1, 48 + 32 * 11, 16384 - 48);    /* maxnextoffset */
	vt_py_pool_decode(raw, &p);
	CHECK_EQ_U64(vt_py_pool_check(&p, at, 16), 0);
	pool(raw, 600, at + 48 + 32 * 10, ring, ring, 3, 1, 48 + 32 * 11, 16384 - 32);   /* count past capacity */
	vt_py_pool_decode(raw, &p);
	CHECK_EQ_U64(vt_py_pool_check(&p, at, 16), 0);
	pool(raw, 10, at + 48 + 32 * 10 + 8, ring, ring, 3, 1, 48 + 32 * 11, 16384 - 32); /* freeblock off a block */
	vt_py_pool_decode(raw, &p);
	CHECK_EQ_U64(vt_py_pool_check(&p, at, 16), 0);
	pool(raw, 10, at + 16384, ring, ring, 3, 1, 48 + 32 * 11, 16384 - 32);           /* freeblock past the pool */
	vt_py_pool_decode(raw, &p);
	CHECK_EQ_U64(vt_py_pool_check(&p, at, 16), 0);
	pool(raw, 10, 0, ring, ring, 3, 1, 48 + 32 * 11 + 4, 16384 - 32);                 /* nextoffset off a block */
	vt_py_pool_decode(raw, &p);
	CHECK_EQ_U64(vt_py_pool_check(&p, at, 16), 0);
	pool(raw, 10, 0, ring | 3, ring, 3, 1, 48 + 32 * 11, 16384 - 32);                 /* a link not aligned */
	vt_py_pool_decode(raw, &p);
	CHECK_EQ_U64(vt_py_pool_check(&p, at, 16), 0);
	pool(raw, 10, 0, 0, 0, 3, 1, 48 + 32 * 11, 16384 - 32);                           /* in use, in no ring */
	vt_py_pool_decode(raw, &p);
	CHECK_EQ_U64(vt_py_pool_check(&p, at, 16), 0);
	/* zeros (a pool never touched) are no pool */
	memset(raw, 0, sizeof(raw));
	vt_py_pool_decode(raw, &p);
	CHECK_EQ_U64(vt_py_pool_check(&p, at, 16), 0);
}

/* A fake memory: pools at given addresses, zeros elsewhere, all resident. */
struct fake {
	const uint64_t *addrs;
	const uint8_t (*raw)[VT_PY_POOL_OVERHEAD];
	size_t n;
};

static int fake_read(void *ctx, uint64_t addr, void *out, size_t len)
{
	const struct fake *f = ctx;
	size_t i;

	memset(out, 0, len);
	for (i = 0; i < f->n; i++)
		if (f->addrs[i] == addr)
			memcpy(out, f->raw[i], len < VT_PY_POOL_OVERHEAD ? len : VT_PY_POOL_OVERHEAD);
	return 0;
}

static void test_cpython__arenas_by_index(void)
{
	/* two arenas (indexes 0 and 1) of 1 MiB, two pools each; a pool whose
	 * index says arena 0 but lies 2 MiB from the others is refused */
	uint64_t ring = 0x7f5000001000ull;
	uint64_t addrs[5] = { BASE, BASE + 16 * KiB, BASE + 1 * MiB, BASE + 1 * MiB + 32 * KiB, BASE + 3 * MiB };
	uint8_t raw[5][VT_PY_POOL_OVERHEAD];
	struct fake f = { addrs, (const uint8_t (*)[VT_PY_POOL_OVERHEAD])raw, 5 };
	const struct vt_heap_mem m = { fake_read, NULL, &f, NULL };
	struct vt_region_pyarenas a;

	pool(raw[0], 10, 0, ring, ring, 0, 1, 48 + 32 * 11, 16384 - 32);    /* 320 bytes in use */
	pool(raw[1], 0, 0, ring, 0, 0, 3, 48 + 64 * 2, 16384 - 64);         /* empty */
	pool(raw[2], 2, 0, ring, ring, 1, 31, 48 + 512 * 3, 16384 - 512);   /* 1024 */
	pool(raw[3], 1, 0, ring, ring, 1, 0, 48 + 16 * 2, 16384 - 16);      /* 16 */
	pool(raw[4], 1, 0, ring, ring, 0, 0, 48 + 16 * 2, 16384 - 16);
	CHECK_EQ_I64(vt_cpython_arenas_walk(&m, BASE, BASE + 4 * MiB, 16, 0, &a, NULL), VT_OK);
	CHECK_EQ_U64(a.pool_size, 16384);
	CHECK_EQ_U64(a.arena_size, 1 * MiB);
	CHECK_EQ_U64(a.arenas, 1);              /* index 0 refused: its pools lie 3 MiB apart */
	CHECK_EQ_U64(a.refused_pools, 3);
	CHECK_EQ_U64(a.pools, 2);
	CHECK_EQ_U64(a.used_bytes, 1024 + 16);
	/* without the stray pool both arenas count */
	f.n = 4;
	CHECK_EQ_I64(vt_cpython_arenas_walk(&m, BASE, BASE + 4 * MiB, 16, 0, &a, NULL), VT_OK);
	CHECK_EQ_U64(a.arenas, 2);
	CHECK_EQ_U64(a.pools, 4);
	CHECK_EQ_U64(a.used_pools, 3);
	CHECK_EQ_U64(a.used_bytes, 320 + 1024 + 16);
	CHECK_EQ_U64(a.unread_bytes, 0);
}

VT_TEST_MAIN(test_cpython__detect, test_cpython__pool_check, test_cpython__arenas_by_index)

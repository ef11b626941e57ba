/*
 * cpython.c — CPython's arenas found from their pool headers (see cpython.h).
 * Reads target memory only through struct vt_heap_mem; prints nothing.
 */
#include "alloc/cpython.h"

#include "base/clock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGE 4096ull
#define BATCH 256
#define USER_END (1ull << 47)
#define INDEX_MAX (1u << 24)       /* arenas[] grows by doubling: far fewer */

/* "libpython3.11.so.1.0" or "python3.11": 3 and 11; false when the name is neither. */
static bool name_version(const char *base, const char *prefix, int *major, int *minor)
{
	size_t n = strlen(prefix);
	int a = 0, b = 0, used = 0;

	if (strncmp(base, prefix, n))
		return false;
	*major = *minor = 0;
	if (sscanf(base + n, "%d.%d%n", &a, &b, &used) == 2 && a >= 2 && a <= 9 && b >= 0 && b < 100) {
		*major = a;
		*minor = b;
		return base[n + (size_t)used] == '\0' || base[n + (size_t)used] == '.' || base[n + (size_t)used] == 'd' ||
		       base[n + (size_t)used] == 'm' || base[n + (size_t)used] == 't';
	}
	return false;
}

void vt_cpython_detect(const struct vt_region_list *maps, struct vt_cpython *out)
{
	size_t i;

	memset(out, 0, sizeof(*out));
	for (i = 0; maps && i < maps->nfiles; i++) {
		const char *path = maps->v[maps->files[i]].path, *base;
		int major = 0, minor = 0;

		if (!path || !(base = strrchr(path, '/')))
			continue;
		base++;
		if (name_version(base, "libpython", &major, &minor)) {
			out->is_python = true;
			out->major = major;
			out->minor = minor;
			snprintf(out->evidence, sizeof(out->evidence), "%.120s mapped", base);
			return;
		}
		if (!out->is_python && (name_version(base, "python", &major, &minor) || !strcmp(base, "python3") ||
					!strcmp(base, "python"))) {
			out->is_python = true;
			out->major = major;      /* 0: "python3" says no minor version */
			out->minor = minor;
			snprintf(out->evidence, sizeof(out->evidence), "its executable is %.120s", base);
		}
	}
}

static uint32_t u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

void vt_py_pool_decode(const uint8_t raw[VT_PY_POOL_OVERHEAD], struct vt_py_pool *out)
{
	out->count = u32(raw);
	out->freeblock = u64(raw + 8);
	out->nextpool = u64(raw + 16);
	out->prevpool = u64(raw + 24);
	out->arenaindex = u32(raw + 32);
	out->szidx = u32(raw + 36);
	out->nextoffset = u32(raw + 40);
	out->maxnextoffset = u32(raw + 44);
}

static bool link_ok(uint64_t v, bool may_be_null)
{
	if (!v)
		return may_be_null;
	return !(v & 7) && v >= PAGE && v < USER_END;
}

uint32_t vt_py_pool_check(const struct vt_py_pool *p, uint64_t addr, unsigned alignment)
{
	uint32_t classes = 512 / alignment, size, pool_size, cap;

	if (p->szidx >= classes || p->arenaindex >= INDEX_MAX)
		return 0;
	size = (p->szidx + 1) * alignment;
	if (p->maxnextoffset == 16384 - size && !(addr & (16384 - 1)))
		pool_size = 16384;
	else if (p->maxnextoffset == 4096 - size && !(addr & (4096 - 1)))
		pool_size = 4096;
	else
		return 0;
	cap = (pool_size - VT_PY_POOL_OVERHEAD) / size;
	if (p->count > cap || p->nextoffset < VT_PY_POOL_OVERHEAD + size ||
	    p->nextoffset > p->maxnextoffset + size || (p->nextoffset - VT_PY_POOL_OVERHEAD) % size)
		return 0;
	if (p->freeblock && (p->freeblock < addr + VT_PY_POOL_OVERHEAD || p->freeblock >= addr + pool_size ||
			     (p->freeblock - addr - VT_PY_POOL_OVERHEAD) % size))
		return 0;
	if (!link_ok(p->nextpool, true) || !link_ok(p->prevpool, true) || (!p->nextpool && !p->prevpool && p->count))
		return 0;
	return pool_size;
}

struct pool_rec {
	uint64_t addr;
	uint32_t index;
	uint32_t used;        /* bytes of blocks in use */
};

static int rec_cmp(const void *a, const void *b)
{
	const struct pool_rec *x = a, *y = b;

	if (x->index != y->index)
		return x->index < y->index ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void read_batch(const struct vt_heap_mem *m, const uint64_t *addrs, size_t n, uint8_t (*out)[VT_PY_POOL_OVERHEAD],
		       uint8_t *ok)
{
	size_t i;

	if (m->read_each) {
		m->read_each(m->ctx, addrs, n, VT_PY_POOL_OVERHEAD, out, ok);
		return;
	}
	for (i = 0; i < n; i++)
		ok[i] = m->read(m->ctx, addrs[i], out[i], VT_PY_POOL_OVERHEAD) == 0;
}

/* Pools to arenas: by index; an index whose pools lie further apart than an arena is refused. */
static void count_arenas(struct pool_rec *r, size_t n, struct vt_region_pyarenas *out)
{
	size_t i = 0, j;

	qsort(r, n, sizeof(*r), rec_cmp);
	while (i < n) {
		uint64_t used = 0, used_pools = 0;

		for (j = i; j < n && r[j].index == r[i].index; j++) {
			used += r[j].used;
			used_pools += r[j].used > 0;
		}
		if (r[j - 1].addr - r[i].addr >= out->arena_size) {
			out->refused_pools += j - i;
		} else {
			out->arenas++;
			out->pools += j - i;
			out->used_pools += used_pools;
			out->used_bytes += used;
		}
		i = j;
	}
}

int vt_cpython_arenas_walk(const struct vt_heap_mem *m, uint64_t start, uint64_t end, unsigned alignment,
			   double deadline_s, struct vt_region_pyarenas *out, struct vt_err *err)
{
	uint64_t addrs[BATCH], a, scan_end;
	uint8_t present[BATCH], ok[BATCH], (*raw)[VT_PY_POOL_OVERHEAD];
	struct pool_rec *rec = NULL;
	size_t nrec = 0, cap = 0, i, n;
	int rc = VT_OK;

	memset(out, 0, sizeof(*out));
	start = (start + PAGE - 1) & ~(PAGE - 1);
	end &= ~(PAGE - 1);
	if (end <= start)
		return VT_OK;
	raw = malloc(BATCH * VT_PY_POOL_OVERHEAD);
	if (!raw)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory reading CPython's pools");
	scan_end = end - start > VT_HEAP_MMAP_SCAN_MAX ? start + VT_HEAP_MMAP_SCAN_MAX : end;
	for (a = start; a < scan_end; a += n * PAGE) {
		size_t npages = (size_t)((scan_end - a) / PAGE < BATCH ? (scan_end - a) / PAGE : BATCH), k = 0;

		n = npages;
		if (deadline_s > 0 && vt_mono_s() > deadline_s) {
			rc = vt_err_set(err, VT_E_TIMEOUT, 0, "the walk of CPython's pools outran its time limit");
			break;
		}
		if (!m->resident || m->resident(m->ctx, a, npages, present))
			memset(present, 1, npages);
		for (i = 0; i < npages; i++)
			if (present[i])
				addrs[k++] = a + i * PAGE;
		if (!k)
			continue;
		read_batch(m, addrs, k, raw, ok);
		for (i = 0; i < k; i++) {
			struct vt_py_pool p;
			uint32_t ps;

			if (!ok[i]) {
				out->unread_bytes += PAGE;
				continue;
			}
			vt_py_pool_decode(raw[i], &p);
			if (!(ps = vt_py_pool_check(&p, addrs[i], alignment)))
				continue;
			if (nrec == cap) {
				size_t c = cap ? cap * 2 : 64;
				struct pool_rec *r = realloc(rec, c * sizeof(*r));

				if (!r) {
					free(rec);
					free(raw);
					return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory counting CPython's pools");
				}
				rec = r;
				cap = c;
			}
			if (!out->pool_size) {
				out->pool_size = ps;
				out->arena_size = ps == 16384 ? (1u << 20) : (256u << 10);
			}
			if (ps != out->pool_size)
				continue;     /* one interpreter, one pool size */
			rec[nrec].addr = addrs[i];
			rec[nrec].index = p.arenaindex;
			rec[nrec++].used = p.count * (p.szidx + 1) * alignment;
		}
	}
	if (a < end)
		out->unread_bytes += end - a;
	if (nrec)
		count_arenas(rec, nrec, out);
	free(rec);
	free(raw);
	return rc;
}

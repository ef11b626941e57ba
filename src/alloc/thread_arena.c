/*
 * thread_arena.c — each thread's glibc malloc arena, from its thread pointer
 * and its static TLS (see thread_arena.h).
 */
#include "alloc/thread_arena.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define TCB_CANDIDATES_MAX 8192
#define REGIONS_MAX 4096

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/* Index of tid in the sorted tids, -1 when it is none of them. */
static long tid_index(const pid_t *sorted, size_t n, int32_t tid)
{
	const pid_t *p;

	if (tid <= 0)
		return -1;
	p = bsearch(&(pid_t){ tid }, sorted, n, sizeof(*sorted), cmp_pid);
	return p ? p - sorted : -1;
}

/* Thread pointers in [start, end): 8-aligned X with *X == X and *(X + 16) == X. */
static void scan(const struct vt_heap_mem *m, uint64_t start, uint64_t end, uint64_t *cand, size_t *n)
{
	static uint64_t buf[VT_TCB_SCAN / 8];
	uint64_t at;
	size_t i;

	for (at = start; at < end && *n < TCB_CANDIDATES_MAX; at += VT_TCB_SCAN) {
		size_t len = end - at < VT_TCB_SCAN ? (size_t)(end - at) : VT_TCB_SCAN;

		if (m->read(m->ctx, at, buf, len))
			continue;
		for (i = 0; i + 2 < len / 8 && *n < TCB_CANDIDATES_MAX; i++)
			if (buf[i] == at + i * 8 && buf[i + 2] == at + i * 8)
				cand[(*n)++] = at + i * 8;
	}
}

/*
 * The VT_TLS_SPAN bytes below thread pointer tp into tls, those below the
 * start of its mapping as zeros: a thread pointer near the bottom of its
 * mapping (the main thread's, which the loader allocates: nginx's sits
 * 0x740 bytes up a 20 KiB mapping) has its static TLS all the same, and a
 * read of the whole span would fail on the page below.  False when nothing
 * reads.
 */
static bool tls_below(const struct vt_heap_mem *m, const struct vt_region_list *maps, uint64_t tp,
		      uint64_t tls[VT_TLS_SPAN / 8])
{
	uint64_t lo = tp - VT_TLS_SPAN;
	size_t i;

	if (!tp || tp < VT_TLS_SPAN || tp % 8)
		return false;
	if (!m->read(m->ctx, lo, tls, VT_TLS_SPAN))
		return true;
	for (i = 0; i < maps->n; i++) {
		const struct vt_region *r = &maps->v[i];

		if (r->start < tp && tp <= r->end && r->start > lo) {
			memset(tls, 0, VT_TLS_SPAN);
			return !m->read(m->ctx, r->start, tls + (r->start - lo) / 8, (size_t)(tp - r->start));
		}
	}
	return false;
}

/* The offset in [0, span) (step step) at which most of the n blocks hold a match; -1 none. */
struct vote {
	unsigned *count;
	size_t nslots;
};

static long best_slot(const struct vote *v, unsigned need)
{
	long best = -1;
	size_t i;

	for (i = 0; i < v->nslots; i++)
		if (v->count[i] >= need && (best < 0 || v->count[i] > v->count[best]))
			best = (long)i;
	return best;
}

int vt_glibc_thread_arenas(const struct vt_heap_mem *m, const struct vt_region_list *maps, const pid_t *tids,
			   size_t ntids, const uint64_t *arenas, size_t narenas, int *arena_of, struct vt_err *err)
{
	uint64_t *cand = NULL, *tp = NULL;
	pid_t *sorted = NULL;
	unsigned tid_count[VT_TCB_TID_SPAN / 4] = { 0 }, tls_count[VT_TLS_SPAN / 8] = { 0 };
	struct vote tv = { tid_count, VT_TCB_TID_SPAN / 4 }, av = { tls_count, VT_TLS_SPAN / 8 };
	int32_t block[VT_TCB_TID_SPAN / 4];
	uint64_t tls[VT_TLS_SPAN / 8];
	size_t ncand = 0, i, k, regions = 0, found = 0;
	long tid_slot, arena_slot;
	int rc = VT_OK;

	for (i = 0; i < ntids; i++)
		arena_of[i] = VT_THREAD_ARENA_UNKNOWN;
	cand = malloc(TCB_CANDIDATES_MAX * sizeof(*cand));
	tp = calloc(ntids ? ntids : 1, sizeof(*tp));
	sorted = malloc((ntids ? ntids : 1) * sizeof(*sorted));
	if (!cand || !tp || !sorted) {
		rc = vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory finding the threads' arenas");
		goto out;
	}
	memcpy(sorted, tids, ntids * sizeof(*sorted));
	qsort(sorted, ntids, sizeof(*sorted), cmp_pid);

	/* 1. thread pointers: the tops of anonymous mappings (thread stacks), small ones whole
	 * (the loader's allocations: the main thread's), and the loader's own data */
	for (i = 0; i < maps->n && regions < REGIONS_MAX; i++) {
		const struct vt_region *r = &maps->v[i];
		uint64_t size = r->end - r->start;
		bool loader = r->path && strstr(r->path, "/ld-linux");

		if (r->perms[0] != 'r' || r->perms[1] != 'w' || (!vt_region_is_anon(r) && !loader) ||
		    (r->path && !strcmp(r->path, "[stack]")))
			continue;
		regions++;
		if (size <= VT_TCB_SMALL || loader)
			scan(m, r->start, r->end, cand, &ncand);
		else
			scan(m, r->end - VT_TCB_SCAN, r->end, cand, &ncand);
	}
	if (ncand == 0) {
		rc = vt_err_set(err, VT_E_NOTFOUND, 0, "no thread pointer (a struct pthread pointing at itself) "
				"was found in the process's memory");
		goto out;
	}

	/* 2. the tid's offset in struct pthread: where most candidates hold a tid of the process */
	for (i = 0; i < ncand; i++) {
		if (m->read(m->ctx, cand[i], block, sizeof(block)))
			continue;
		for (k = 64 / 4; k < VT_TCB_TID_SPAN / 4; k++)     /* past tcb, dtv, self */
			if (tid_index(sorted, ntids, block[k]) >= 0)
				tid_count[k]++;
	}
	if ((tid_slot = best_slot(&tv, 1)) < 0) {
		rc = vt_err_set(err, VT_E_NOTFOUND, 0, "no struct pthread found holds a tid of the process");
		goto out;
	}
	for (i = 0; i < ncand; i++) {
		int32_t tid;
		long at;

		if (m->read(m->ctx, cand[i] + (uint64_t)tid_slot * 4, &tid, sizeof(tid)))
			continue;
		if ((at = tid_index(sorted, ntids, tid)) >= 0 && !tp[at]) {
			tp[at] = cand[i];
			found++;
		}
	}

	/* 3. thread_arena's offset below the thread pointer: where most threads hold an arena */
	for (i = 0; i < ntids; i++) {
		if (!tls_below(m, maps, tp[i], tls))
			continue;
		for (k = 0; k < VT_TLS_SPAN / 8; k++)
			for (size_t a = 0; a < narenas; a++)
				if (tls[k] == arenas[a]) {
					tls_count[k]++;
					break;
				}
	}
	if ((arena_slot = best_slot(&av, found >= 2 ? 2 : 1)) < 0) {
		rc = vt_err_set(err, VT_E_NOTFOUND, 0, "%zu thread pointer%s found, but no TLS word that %s an "
				"arena's address", found, found == 1 ? "" : "s", found >= 2 ? "two of them hold as" : "holds");
		goto out;
	}
	/* each thread's value there, by the tid it sorted to */
	for (i = 0; i < ntids; i++) {
		long at = tid_index(sorted, ntids, tids[i]);
		uint64_t v;

		if (at < 0 || !tp[at] ||
		    m->read(m->ctx, tp[at] - VT_TLS_SPAN + (uint64_t)arena_slot * 8, &v, sizeof(v)))
			continue;
		if (v == 0) {
			arena_of[i] = VT_THREAD_ARENA_NONE;
			continue;
		}
		for (k = 0; k < narenas; k++)
			if (v == arenas[k])
				arena_of[i] = (int)k;
	}
out:
	free(cand);
	free(tp);
	free(sorted);
	return rc;
}

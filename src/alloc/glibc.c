/*
 * glibc.c — the glibc malloc recipes (see glibc.h).
 */
#include "alloc/glibc.h"
#include "alloc/glibc_heap.h"

#include "proc/mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Where each call's results land in the session's scratch area. */
#define OFF_MALLINFO 0           /* struct mallinfo2: 10 x size_t = 80 bytes */
#define OFF_MS_PTR 128           /* open_memstream's char *ptr */
#define OFF_MS_SIZE 136          /* ... and size_t size */

_Static_assert(OFF_MS_SIZE + 8 <= VT_ALLOC_SCRATCH_LEN, "the recipes' results fit the scratch area");

void vt_mallinfo_set(struct vt_mallinfo *mi, const uint64_t v[10], bool wide)
{
	mi->arena = v[0];
	mi->ordblks = v[1];
	mi->smblks = v[2];
	mi->hblks = v[3];
	mi->hblkhd = v[4];
	mi->usmblks = v[5];
	mi->fsmblks = v[6];
	mi->uordblks = v[7];
	mi->fordblks = v[8];
	mi->keepcost = v[9];
	mi->wide = wide;
}

uint64_t vt_mallinfo_live(const struct vt_mallinfo *mi)
{
	return mi->uordblks + mi->hblkhd;
}

uint64_t vt_mallinfo_held(const struct vt_mallinfo *mi)
{
	return mi->arena + mi->hblkhd;
}

void vt_mallinfo_summary(const struct vt_mallinfo *mi, struct vt_alloc_summary *out)
{
	out->live = (double)vt_mallinfo_live(mi);
	out->free = (double)mi->fordblks;
	out->held = (double)vt_mallinfo_held(mi);
	out->trimmable = (double)mi->keepcost;
}

double vt_mallinfo_live_fraction(const struct vt_mallinfo *mi)
{
	uint64_t held = vt_mallinfo_held(mi);

	return held ? (double)vt_mallinfo_live(mi) / (double)held : 0.0;
}

int vt_glibc_resolve(const struct vt_procfs *pfs, pid_t pid, const struct vt_region_list *maps,
		     struct vt_glibc_fns *f, struct vt_err *err)
{
	/* mallinfo2 first: glibc < 2.33 has only the 32-bit mallinfo() */
	static const char *const names[] = { "mallinfo2", "malloc_info", "open_memstream", "fclose", "free",
					     "malloc_trim", "__errno_location" };
	uint64_t addrs[7];
	int rc;

	memset(f, 0, sizeof(*f));
	/* One read of libc's symbols when mallinfo2 is there (2.33 and later)... */
	rc = vt_inject_resolve_many(pfs, pid, maps, "libc.so.6", names, addrs, 7, NULL);
	if (rc == VT_OK) {
		f->mallinfo2 = addrs[0];
	} else {
		/* ... else mallinfo, then the others (the error said is theirs) */
		if ((rc = vt_inject_resolve(pfs, pid, maps, "libc.so.6", "mallinfo", &f->mallinfo, err)))
			return rc;
		rc = vt_inject_resolve_many(pfs, pid, maps, "libc.so.6", names + 1, addrs + 1, 6, err);
		if (rc)
			return rc;
	}
	f->malloc_info = addrs[1];
	f->open_memstream = addrs[2];
	f->fclose = addrs[3];
	f->free = addrs[4];
	f->malloc_trim = addrs[5];
	f->errno_location = addrs[6];
	return VT_OK;
}

int vt_glibc_main_arena_locate(const struct vt_procfs *pfs, pid_t pid, const struct vt_region_list *maps,
			       const struct vt_heap_mem *m, unsigned tries, uint64_t *main_arena,
			       struct vt_err *err)
{
	uint8_t code[VT_GLIBC_MALLINFO2_CODE];
	uint64_t fn;
	unsigned t;
	int rc;

	*main_arena = 0;
	rc = vt_inject_resolve(pfs, pid, maps, "libc.so.6", "mallinfo2", &fn, err);
	if (rc == VT_E_NOTFOUND)
		rc = vt_inject_resolve(pfs, pid, maps, "libc.so.6", "mallinfo", &fn, err);
	if (rc)
		return rc;
	if (m->read(m->ctx, fn, code, sizeof(code)))
		return vt_err_set(err, VT_E_IO, 0, "cannot read mallinfo2's code in %d", (int)pid);
	rc = VT_E_NOTFOUND;
	for (t = 0; t < tries && rc == VT_E_NOTFOUND; t++) {
		if (t)
			nanosleep(&(struct timespec){ 0, 2000000 }, NULL);
		rc = vt_glibc_find_main_arena(m, code, sizeof(code), fn, main_arena, err);
	}
	return rc;
}

int vt_glibc_mallinfo(struct vt_alloc_calls *cs, const struct vt_glibc_fns *f, struct vt_mallinfo *mi,
		      struct vt_err *err)
{
	uint64_t v[10];
	uint32_t v32[10];
	int rc, i;

	/* Both return their struct through a hidden pointer (the first argument). */
	rc = vt_alloc_call2(cs, f->mallinfo2 ? f->mallinfo2 : f->mallinfo, OFF_MALLINFO, 0, 1, NULL, err);
	if (rc)
		return rc;
	if (f->mallinfo2) {
		memcpy(v, cs->scratch + OFF_MALLINFO, sizeof(v));
	} else {
		memcpy(v32, cs->scratch + OFF_MALLINFO, sizeof(v32));   /* 10 x int */
		for (i = 0; i < 10; i++)
			v[i] = v32[i];
	}
	vt_mallinfo_set(mi, v, f->mallinfo2 != 0);
	return VT_OK;
}

int vt_glibc_malloc_info(struct vt_alloc_calls *cs, const struct vt_glibc_fns *f, char **xml, size_t *len,
			 struct vt_err *err)
{
	uint64_t fp, ptr, size, ret;
	char *text = NULL;
	int rc;

	*xml = NULL;
	*len = 0;
	if ((rc = vt_alloc_call2(cs, f->open_memstream, OFF_MS_PTR, OFF_MS_SIZE, 3, &fp, err)))
		return rc;
	if (!fp)
		return vt_err_set(err, VT_E_FAIL, 0, "open_memstream failed in the target");
	if ((rc = vt_alloc_call2(cs, f->malloc_info, 0, fp, 0, &ret, err)) ||
	    (rc = vt_alloc_call2(cs, f->fclose, fp, 0, 0, &ret, err)))
		return rc;
	memcpy(&ptr, cs->scratch + OFF_MS_PTR, sizeof(ptr));
	memcpy(&size, cs->scratch + OFF_MS_SIZE, sizeof(size));
	if (!ptr)
		return vt_err_set(err, VT_E_FAIL, 0, "malloc_info wrote nothing");
	rc = VT_OK;
	text = size <= VT_MALLOC_INFO_MAX ? malloc(size + 1) : NULL;
	if (!text)
		rc = vt_err_set(err, VT_E_NOMEM, 0, "malloc_info output of %llu bytes is too large",
				(unsigned long long)size);
	else if ((rc = vt_mem_read(cs->pid, ptr, text, size, err)) == VT_OK)
		text[size] = '\0';
	/* The buffer is the target's: give it back whatever happened above. */
	if (vt_alloc_call2(cs, f->free, ptr, 0, 0, NULL, NULL) != VT_OK && rc == VT_OK)
		rc = vt_err_set(err, VT_E_FAIL, 0, "could not free the malloc_info buffer in the target");
	if (rc) {
		free(text);
		return rc;
	}
	*xml = text;
	*len = size;
	return VT_OK;
}

int vt_glibc_malloc_trim(struct vt_alloc_calls *cs, const struct vt_glibc_fns *f, int *returned,
			 struct vt_err *err)
{
	uint64_t ret;
	int rc = vt_alloc_call2(cs, f->malloc_trim, 0, 0, 0, &ret, err);

	if (rc == VT_OK)
		*returned = (int)ret;
	return rc;
}

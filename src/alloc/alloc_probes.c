/*
 * alloc_probes.c — the allocator's entry points of a process, as uprobe
 * offsets in its own file.
 */
#include "alloc/alloc_probes.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "inject/inject.h"
#include "proc/mapped_file.h"

static const char *const fn_names[VT_AFN__COUNT] = {
	"malloc", "calloc", "realloc", "memalign", "posix_memalign", "free",
};

const char *vt_alloc_fn_name(enum vt_alloc_fn fn)
{
	return (unsigned)fn < VT_AFN__COUNT ? fn_names[fn] : "?";
}

/* The entry points looked for, in this order (the first name of an address wins). */
static const struct want {
	const char *name;
	enum vt_alloc_fn fn;
	bool ret;
	bool jemalloc_only;
} wants[] = {
	{ "malloc", VT_AFN_MALLOC, true, false },
	{ "free", VT_AFN_FREE, false, false },
	{ "calloc", VT_AFN_CALLOC, true, false },
	{ "realloc", VT_AFN_REALLOC, true, false },
	{ "memalign", VT_AFN_MEMALIGN, true, false },
	{ "aligned_alloc", VT_AFN_MEMALIGN, true, false },
	{ "posix_memalign", VT_AFN_POSIX_MEMALIGN, false, false },
	{ "mallocx", VT_AFN_MALLOC, true, true },
	{ "rallocx", VT_AFN_REALLOC, true, true },
	{ "dallocx", VT_AFN_FREE, false, true },
	{ "sdallocx", VT_AFN_FREE, false, true },
};

static const struct vt_region *region_of(const struct vt_region_list *maps, uint64_t addr)
{
	for (size_t i = 0; i < maps->n; i++)
		if (addr >= maps->v[i].start && addr < maps->v[i].end)
			return &maps->v[i];
	return NULL;
}

static void note_skipped(struct vt_alloc_probe_plan *out, const char *what)
{
	size_t len = strlen(out->skipped);

	snprintf(out->skipped + len, sizeof(out->skipped) - len, "%s%s", len ? "; " : "", what);
}

int vt_alloc_probe_plan(const struct vt_procfs *pfs, int dirfd, pid_t pid,
			const struct vt_region_list *maps, const struct vt_alloc_info *alloc,
			struct vt_alloc_probe_plan *out, struct vt_err *err)
{
	const struct vt_region *text = NULL;
	const char *base;
	bool have_malloc = false, have_free = false;

	(void)dirfd;
	memset(out, 0, sizeof(*out));
	out->alloc = *alloc;
	if (alloc->sanitizer[0])
		return vt_err_set(err, VT_E_UNSUPPORTED, 0, "process %d's malloc is %s's: its "
				  "allocations are not probed (the sanitizer reports its own)",
				  (int)pid, alloc->sanitizer);
	if (!alloc->path[0])
		return vt_err_set(err, VT_E_UNSUPPORTED, 0, "no file of process %d provides malloc "
				  "(%s): nothing to probe", (int)pid, alloc->evidence);
	base = strrchr(alloc->path, '/');
	base = base ? base + 1 : alloc->path;
	for (size_t i = 0; i < sizeof(wants) / sizeof(wants[0]); i++) {
		const struct want *w = &wants[i];
		struct vt_alloc_probe_fn *f;
		const struct vt_region *r;
		char symbol[48], why[VT_ERR_MSG_MAX + 64];
		struct vt_err one;
		uint64_t addr;
		bool dup = false;
		int rc;

		if (w->jemalloc_only && alloc->kind != VT_ALLOC_JEMALLOC)
			continue;
		snprintf(symbol, sizeof(symbol), "%s%s", alloc->prefix, w->name);
		vt_err_clear(&one);
		rc = vt_inject_resolve(pfs, pid, maps, base, symbol, &addr, &one);
		if (rc == VT_E_NOTFOUND) {
			snprintf(why, sizeof(why), "%s: %s", symbol, one.msg);
			note_skipped(out, why);
			continue;
		}
		if (rc) {
			if (err)
				*err = one;
			return rc;
		}
		for (size_t k = 0; k < out->n; k++)
			dup |= out->fns[k].addr == addr;
		if (dup || out->n == VT_ALLOC_PROBES_MAX)
			continue;
		r = region_of(maps, addr);
		if (!r)
			return vt_err_set(err, VT_E_GONE, 0, "%s of process %d is no longer mapped",
					  symbol, (int)pid);
		if (text && (r->inode != text->inode || strcmp(r->path, text->path)))
			continue;   /* all probes in one file */
		text = r;
		f = &out->fns[out->n++];
		f->fn = w->fn;
		snprintf(f->symbol, sizeof(f->symbol), "%s", symbol);
		f->addr = addr;
		f->offset = addr - r->start + r->offset;
		f->ret = w->ret;
		have_malloc |= w->fn == VT_AFN_MALLOC;
		have_free |= w->fn == VT_AFN_FREE;
	}
	if (!have_malloc || !have_free) {
		vt_err_set(err, VT_E_UNSUPPORTED, 0, "%s of process %d has no %s%s symbol to probe "
			   "(%s)", alloc->path, (int)pid, alloc->prefix, have_malloc ? "free" : "malloc",
			   out->skipped);
		vt_err_hint(err, "a stripped binary with its allocator linked in cannot be probed "
			    "by name; an allocator in a shared library can");
		return VT_E_UNSUPPORTED;
	}
	vt_mapped_file_kernel_path(pid, text, out->path, sizeof(out->path));
	return VT_OK;
}

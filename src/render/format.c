/*
 * format.c — the format table and what all views share: the memory field
 * list and the region selection rules.
 */
#include "render/render.h"

#include <string.h>

static const struct vt_format formats[] = {
	{ "text", vt_render_snap_text },
	{ "json", vt_render_snap_json },
};

const struct vt_format *vt_format_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (!strcmp(formats[i].name, name))
			return &formats[i];
	return NULL;
}

#define GETTER(fn, expr) \
	static uint64_t fn(const struct vt_sample *s) { return (expr); }
GETTER(get_vm_rss, s->status.vm_rss)
GETTER(get_rss_anon, s->status.rss_anon)
GETTER(get_rss_file, s->status.rss_file)
GETTER(get_rss_shmem, s->status.rss_shmem)
GETTER(get_vm_swap, s->status.vm_swap)
GETTER(get_committed, s->committed)
GETTER(get_vm_size, s->status.vm_size)
GETTER(get_vm_peak, s->status.vm_peak)
GETTER(get_vm_hwm, s->status.vm_hwm)
#undef GETTER

const struct vt_mem_field vt_mem_fields[] = {
	{ "VmRSS", "vm_rss", "resident now (anon + file + shmem)", get_vm_rss },
	{ "RssAnon", "rss_anon", "resident anonymous: heap, arenas, stacks", get_rss_anon },
	{ "RssFile", "rss_file", "resident file-backed: binaries, libraries, mapped files", get_rss_file },
	{ "RssShmem", "rss_shmem", "resident shared memory (shm, memfd, tmpfs)", get_rss_shmem },
	{ "VmSwap", "vm_swap", "anonymous memory pushed out to swap", get_vm_swap },
	{ "committed", "committed", "RssAnon + VmSwap: anonymous memory the process holds", get_committed },
	{ "VmSize", "vm_size", "virtual address space (mostly reservations, not memory)", get_vm_size },
	{ "VmPeak", "vm_peak", "largest VmSize so far", get_vm_peak },
	{ "VmHWM", "vm_hwm", "largest VmRSS so far (high-water mark)", get_vm_hwm },
};
const size_t vt_mem_fields_count = sizeof(vt_mem_fields) / sizeof(vt_mem_fields[0]);

bool vt_region_listed(const struct vt_region *r, const struct vt_snap_report *report)
{
	if (report->all_regions)
		return true;
	/* Reservations and guards hold no memory; the arena summary covers them. */
	if (r->kind == VT_REGION_ARENA_RESERVE || r->kind == VT_REGION_GUARD)
		return false;
	return vt_region_size(r) >= report->min_region;
}

const char *vt_region_evidence(const struct vt_region *r, char *buf, size_t cap)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} names[] = {
		{ VT_KIND_BY_NAME, "name" },
		{ VT_KIND_BY_MEMORY, "memory" },
		{ VT_KIND_BY_THREAD_SP, "thread-sp" },
		{ VT_KIND_BY_LAYOUT, "layout" },
	};
	size_t i, o = 0;

	buf[0] = '\0';
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(r->kind_flags & names[i].bit))
			continue;
		o += (size_t)snprintf(buf + o, o < cap ? cap - o : 0, "%s%s", o ? "+" : "",
				      names[i].name);
		if (o >= cap)
			break;
	}
	return buf;
}

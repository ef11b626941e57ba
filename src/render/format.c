/*
 * format.c — the format table and what all views of a snap share: the
 * region selection rules.
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

/*
 * allocator.c — the table of allocators vitals calls into (allocator.h).
 */
#include "alloc/allocator.h"
#include "alloc/jemalloc.h"
#include "alloc/tcmalloc.h"

#include <stdio.h>
#include <string.h>

static const struct vt_allocator allocators[] = {
	{ .kind = VT_ALLOC_GLIBC, .library = "libc.so.6", .entry = "mallinfo2" },
	{
		.kind = VT_ALLOC_JEMALLOC,
		.library = "libjemalloc.so",
		.entry = "mallctl",
		.gives_back = "jemalloc returns dirty pages on its decay timer (opt.dirty_decay_ms)",
		.if_it_stays = "lower the decay time or the arena count",
		.read = vt_jemalloc_read,
	},
	{
		.kind = VT_ALLOC_TCMALLOC,
		.library = "libtcmalloc",
		.entry = "MallocExtension_GetNumericProperty",
		.gives_back = "tcmalloc releases free page-heap spans to the system gradually "
			      "(TCMALLOC_RELEASE_RATE)",
		.if_it_stays = "raise TCMALLOC_RELEASE_RATE, or have the program call "
			       "MallocExtension::ReleaseFreeMemory()",
		.read = vt_tcmalloc_read,
	},
};

const struct vt_allocator *vt_allocator_of(enum vt_alloc_kind kind)
{
	size_t i;

	for (i = 0; i < sizeof(allocators) / sizeof(allocators[0]); i++)
		if (allocators[i].kind == kind)
			return &allocators[i];
	return NULL;
}

const struct vt_allocator *vt_allocator_at(int i)
{
	return i >= 0 && (size_t)i < sizeof(allocators) / sizeof(allocators[0]) ? &allocators[i] : NULL;
}

const char *vt_allocators_read(char *buf, size_t cap)
{
	size_t i, len = 0;

	buf[0] = '\0';
	for (i = 0; i < sizeof(allocators) / sizeof(allocators[0]) && len < cap; i++)
		len += (size_t)snprintf(buf + len, cap - len, "%s%s%s", i ? ", " : "",
					vt_alloc_kind_name(allocators[i].kind),
					allocators[i].kind == VT_ALLOC_GLIBC ? " malloc" : "");
	return buf;
}

void vt_alloc_stats_add(struct vt_alloc_stats *s, const char *key, const char *label, uint64_t value,
			bool bytes)
{
	if (s->n_fig >= VT_ALLOC_FIGURES_MAX)
		return;
	s->fig[s->n_fig++] = (struct vt_alloc_figure){ key, label, value, bytes };
}

const struct vt_alloc_figure *vt_alloc_stats_get(const struct vt_alloc_stats *s, const char *key)
{
	int i;

	for (i = 0; i < s->n_fig; i++)
		if (strcmp(s->fig[i].key, key) == 0)
			return &s->fig[i];
	return NULL;
}

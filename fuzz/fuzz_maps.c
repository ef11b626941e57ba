/*
 * fuzz_maps.c — maps/smaps parser and region classification on arbitrary
 * bytes (classification without target memory, as on a recorded tree).
 */
#include "alloc/regions.h"
#include "proc/maps.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vt_classify_ctx ctx = { .alloc = VT_ALLOC_GLIBC };
	struct vt_region_list list = { 0 };
	struct vt_arena_summary arenas;
	char *copy = malloc(size ? size : 1);
	size_t i;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (vt_maps_parse(copy, size, &list, NULL) == VT_OK) {
		for (i = 0; i < list.n; i++)
			assert(list.v[i].end >= list.v[i].start && list.v[i].path);
		vt_regions_classify(&list, &ctx, &arenas);
		assert(arenas.heaps >= 0);
	}
	vt_region_list_release(&list);
	free(copy);
	return 0;
}

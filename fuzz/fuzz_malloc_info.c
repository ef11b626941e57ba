/*
 * fuzz_malloc_info.c — the malloc_info() XML parser and trim estimate on
 * arbitrary bytes (in production the XML comes out of the target process).
 */
#include "alloc/malloc_info.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vt_malloc_info mi;
	struct vt_trim_estimate e;
	char *copy = malloc(size ? size : 1);
	size_t i;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (vt_malloc_info_parse(copy, size, &mi, NULL) == VT_OK) {
		for (i = 0; i < mi.n_arenas; i++) {
			vt_malloc_info_trim_estimate(&mi.arenas[i], 4096, &e);
			(void)e;
		}
		vt_malloc_info_release(&mi);
	}
	free(copy);
	return 0;
}

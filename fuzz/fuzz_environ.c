/*
 * fuzz_environ.c — environ/GLIBC_TUNABLES look-ups and the arena cap decision.
 */
#include "alloc/arena_cap.h"
#include "proc/environ.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vt_arena_cap cap;
	char *copy = malloc(size ? size : 1);
	const char *v;
	size_t vl;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (vt_environ_get(copy, size, "GLIBC_TUNABLES", &v, &vl)) {
		assert(v >= copy && v + vl <= copy + size);
		vt_tunables_get(v, vl, "glibc.malloc.arena_max", &v, &vl);
	}
	vt_arena_cap_decide(copy, size, 2, &cap);
	assert(cap.source != VT_CAP_UNKNOWN && cap.value > 0);
	free(copy);
	return 0;
}

/*
 * fuzz_mountinfo.c — finding a cgroup mount (src/proc/mountinfo.c) in
 * arbitrary bytes.
 *
 * The input is copied to a buffer of exactly its size (no NUL after it), so
 * ASan sees any read past the end.  The caps are small so that decoded paths
 * that do not fit are exercised; what is found must fit them.  Seeds:
 * fuzz/corpus/mountinfo/ (hybrid v1, a v2 host, a v2 subtree bind mount).
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proc/mountinfo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* cgroup2, then the v1 hierarchies cgroup.c asks for. */
	static const char *const controllers[] = { NULL, "memory", "cpu" };
	char mp[128], root[16];
	char *buf = malloc(size ? size : 1);
	size_t i;

	if (!buf)
		return 0;
	if (size)
		memcpy(buf, data, size);
	for (i = 0; i < sizeof(controllers) / sizeof(controllers[0]); i++)
		if (vt_mountinfo_find_cgroup_of(buf, size, controllers[i], mp, sizeof(mp), root,
						sizeof(root)))
			assert(strlen(mp) < sizeof(mp) && strlen(root) < sizeof(root));
	if (vt_mountinfo_find_cgroup(buf, size, true, mp, sizeof(mp), root, sizeof(root)))
		assert(strlen(mp) < sizeof(mp) && strlen(root) < sizeof(root));
	free(buf);
	return 0;
}

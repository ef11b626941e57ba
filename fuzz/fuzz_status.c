/*
 * fuzz_status.c — /proc/PID/status parser on arbitrary bytes.
 */
#include "proc/procfs.h"
#include "base/unknown.h"
#include "proc/status.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vt_proc_status st;
	char *copy = malloc(size ? size : 1);

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (vt_proc_status_parse(copy, size, &st, NULL) == VT_OK) {
		assert(st.pid >= 0 && st.state);
		assert(!vt_known(st.vm_rss) || st.vm_rss % 1024 == 0);
	}
	free(copy);
	return 0;
}

/*
 * fuzz_stat.c — /proc/PID/stat and task/TID/syscall parsers on arbitrary bytes.
 */
#include "proc/stat.h"
#include "proc/task.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vt_proc_stat st;
	char *copy = malloc(size ? size : 1);
	uint64_t sp;

	if (!copy)
		return 0;
	memcpy(copy, data, size);        /* exact size, no NUL: parsers must not read past */
	if (vt_proc_stat_parse(copy, size, &st, NULL) == VT_OK)
		assert(strlen(st.comm) < sizeof(st.comm));
	vt_syscall_parse_sp(copy, size, &sp);
	free(copy);
	return 0;
}

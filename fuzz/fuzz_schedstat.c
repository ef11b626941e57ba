/*
 * fuzz_schedstat.c — the task/TID/schedstat parser on arbitrary bytes.
 */
#include "proc/schedstat.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vt_schedstat ss;
	struct vt_err err;
	char *copy = malloc(size ? size : 1);

	if (!copy)
		return 0;
	memcpy(copy, data, size);        /* exact size, no NUL: the parser must not read past */
	vt_schedstat_parse(copy, size, &ss, &err);
	free(copy);
	return 0;
}

/*
 * fuzz_wchan_syscall.c — the task/TID/wchan and task/TID/syscall parsers on
 * arbitrary bytes.
 */
#include "proc/wchan_syscall.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char wchan[48];
	struct vt_err err;
	long nr;
	uint64_t args[VT_SYSCALL_ARGS];
	char *copy = malloc(size ? size : 1);

	if (!copy)
		return 0;
	memcpy(copy, data, size);        /* exact size, no NUL: the parsers must not read past */
	vt_wchan_parse(copy, size, wchan, sizeof(wchan));
	if (strlen(wchan) >= sizeof(wchan))
		abort();
	if (vt_syscall_parse(copy, size, &nr, NULL, &err) == VT_OK && nr < VT_SYSCALL_RUNNING)
		abort();
	if (vt_syscall_parse(copy, size, &nr, args, &err) == VT_OK && nr < VT_SYSCALL_RUNNING)
		abort();
	free(copy);
	return 0;
}

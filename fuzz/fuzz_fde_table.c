/*
 * fuzz_fde_table.c — the .eh_frame_hdr index (src/elf/fde_table.c) of
 * arbitrary bytes.  The unwinder reads it from every module a profiled
 * process maps, which may be truncated, corrupt or crafted: the parse and
 * every lookup must stay inside the bytes and answer a start at or below
 * the address asked.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elf/fde_table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vt_fde_table t;
	uint64_t start, addr;
	uint8_t *copy = malloc(size ? size : 1);   /* exactly size bytes: ASan sees any overrun */

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (vt_fde_table_parse(copy, size, 0x10000, &t)) {
		for (addr = 0; addr < 0x20000; addr += 0x777)
			if (vt_fde_table_start(&t, addr, &start) && start > addr)
				abort();
		(void)vt_fde_table_start(&t, UINT64_MAX, &start);
	}
	free(copy);
	return 0;
}

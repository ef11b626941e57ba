/*
 * fuzz_psi.c — the PSI parser (src/proc/psi.c) on arbitrary bytes.
 *
 * The input is copied to a buffer of exactly its size (no NUL after it), so
 * ASan sees any read past the end.  On success the parser's promises are
 * asserted: a "some" line, and every average a percentage.  Seeds:
 * fuzz/corpus/psi/ (/proc/pressure/memory and cgroup memory.pressure).
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proc/psi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_psi(const struct vt_psi_line *psi)
{
	if (!psi->present)
		return;
	assert(psi->avg10 >= 0 && psi->avg10 <= 100);
	assert(psi->avg60 >= 0 && psi->avg60 <= 100);
	assert(psi->avg300 >= 0 && psi->avg300 <= 100);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vt_psi_line some, full;
	struct vt_err err;
	char *buf = malloc(size ? size : 1);

	if (!buf)
		return 0;
	if (size)
		memcpy(buf, data, size);
	if (vt_psi_parse(buf, size, &some, &full, &err) == VT_OK) {
		assert(some.present);
		check_psi(&some);
		check_psi(&full);
	} else {
		assert(err.code == VT_E_PARSE && err.msg[0]);
	}
	free(buf);
	return 0;
}

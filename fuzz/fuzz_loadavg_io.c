/*
 * fuzz_loadavg_io.c — the /proc/loadavg and /proc/PID/io parsers
 * (src/proc/hostload.c, src/proc/io.c) on arbitrary bytes.
 *
 * The input is copied to a buffer of exactly its size (no NUL after it), so
 * ASan sees any read past the end.  On success the promises are asserted
 * (load averages are hundredths, never negative); on failure a parse error
 * with a message.  Seeds: fuzz/corpus/loadavg_io/.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proc/hostload.h"
#include "proc/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vt_loadavg la;
	struct vt_proc_io io;
	struct vt_err err;
	char *buf = malloc(size ? size : 1);

	if (!buf)
		return 0;
	if (size)
		memcpy(buf, data, size);
	if (vt_loadavg_parse(buf, size, &la, &err) == VT_OK)
		assert(la.load1 >= 0 && la.load5 >= 0 && la.load15 >= 0);
	else
		assert(err.code == VT_E_PARSE && err.msg[0]);
	if (vt_proc_io_parse(buf, size, &io, &err) != VT_OK)
		assert(err.code == VT_E_PARSE && err.msg[0]);
	free(buf);
	return 0;
}

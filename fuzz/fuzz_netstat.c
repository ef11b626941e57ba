/*
 * fuzz_netstat.c — the net/netstat parser (src/proc/netstat.c) on
 * arbitrary bytes.
 *
 * The input is copied to a buffer of exactly its size (no NUL after it), so
 * ASan sees any read past the end.  On success each counter is a number or
 * VT_NA, and the same text parses the same; on failure a parse error with a
 * message that starts "netstat: ".  Seeds: fuzz/corpus/netstat/.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proc/netstat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vt_listen_counters c, again;
	struct vt_err err;
	char *buf = malloc(size ? size : 1);

	if (!buf)
		return 0;
	if (size)
		memcpy(buf, data, size);
	if (vt_netstat_parse(buf, size, &c, &err) == VT_OK) {
		assert(vt_netstat_parse(buf, size, &again, NULL) == VT_OK);
		assert(again.overflows == c.overflows && again.drops == c.drops);
	} else {
		assert(err.code == VT_E_PARSE && strncmp(err.msg, "netstat: ", 9) == 0);
	}
	free(buf);
	return 0;
}

/*
 * fuzz_listen.c — the listening-socket parsers (src/proc/listen.c) on
 * arbitrary bytes: the first byte picks /proc/net/tcp (0), tcp6 (1) or a
 * sock_diag reply (2), modulo 3; the rest is the input, copied to a buffer
 * of exactly its size (no NUL after it) so ASan sees any read past the end.
 * On success the parser's promises are asserted: at most cap rows, each a
 * LISTEN socket with a printable "address:port".  Seeds: fuzz/corpus/listen/.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proc/listen.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CAP 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vt_listen_sock out[CAP];
	size_t n = 0, dropped = 0, i;
	struct vt_err err;
	bool done = false;
	char *buf;
	int mode, rc;

	if (size == 0)
		return 0;
	mode = data[0] % 3;
	size--;
	if (!(buf = malloc(size ? size : 1)))
		return 0;
	if (size)
		memcpy(buf, data + 1, size);
	if (mode < 2)
		rc = vt_listen_parse(buf, size, mode == 1, NULL, 0, out, CAP, &n, &dropped, &err);
	else
		rc = vt_listen_diag_parse(buf, size, NULL, 0, out, CAP, &n, &dropped, &done, &err);
	assert(n <= CAP);
	if (rc != VT_OK)
		assert((rc == VT_E_PARSE || rc == VT_E_IO || rc == vt_code_resource(err.sys_errno)) &&
		       err.code == rc && err.msg[0]);
	for (i = 0; i < n; i++) {
		const char *colon = strrchr(out[i].address, ':');

		assert(memchr(out[i].address, '\0', sizeof(out[i].address)));
		assert(colon && colon[1] >= '0' && colon[1] <= '9');
	}
	free(buf);
	return 0;
}

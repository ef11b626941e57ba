/*
 * gzip.c — see gzip.h.
 */
#include "base/gzip.h"

#include <stdint.h>
#include <string.h>
#include <zlib.h>

int vt_gzip_append(struct vt_buf *out, const void *data, size_t len, int level, struct vt_err *err)
{
	z_stream z;
	unsigned char chunk[1 << 16];
	int zrc;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return vt_err_set(err, VT_E_FAIL, 0, "zlib: %s", z.msg ? z.msg : "deflateInit2 failed");
	z.next_in = (Bytef *)(uintptr_t)data;
	z.avail_in = 0;
	do {
		/* feed at most 1 GiB at a time: avail_in is 32 bits */
		if (!z.avail_in && len) {
			size_t step = len > (1u << 30) ? (1u << 30) : len;
			z.avail_in = (uInt)step;
			len -= step;
		}
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		zrc = deflate(&z, len || z.avail_in ? Z_NO_FLUSH : Z_FINISH);
		if (zrc == Z_STREAM_ERROR) {
			deflateEnd(&z);
			return vt_err_set(err, VT_E_FAIL, 0, "zlib: deflate failed");
		}
		if (vt_buf_append(out, chunk, sizeof(chunk) - z.avail_out)) {
			deflateEnd(&z);
			return vt_err_set(err, VT_E_NOMEM, 0, "gzip: %zu bytes compressed", out->len);
		}
	} while (zrc != Z_STREAM_END);
	deflateEnd(&z);
	return VT_OK;
}

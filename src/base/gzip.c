/*
 * gzip.c — see gzip.h.  zlib is opened on first use (base/dynlib.h says
 * why): a snapshot or a heap probe neither compresses nor checks a CRC.
 */
#include "base/gzip.h"

#include "base/dynlib.h"

#include <stdint.h>
#include <string.h>

struct zlib_api {
	__typeof__(&deflateInit2_) deflate_init2;
	__typeof__(&deflate) deflate;
	__typeof__(&deflateEnd) deflate_end;
	__typeof__(&crc32) crc32;
};

static struct zlib_api zlib;

#define ZLIB_SYM(member, name) { name, offsetof(struct zlib_api, member) }
static const struct vt_dynsym zlib_syms[] = {
	ZLIB_SYM(deflate_init2, "deflateInit2_"),
	ZLIB_SYM(deflate, "deflate"),
	ZLIB_SYM(deflate_end, "deflateEnd"),
	ZLIB_SYM(crc32, "crc32"),
};
#undef ZLIB_SYM

static struct vt_dynlib zlib_lib = VT_DYNLIB("libz.so.1", "zlib1g", "gzip and CRC32", zlib_syms, &zlib);

int vt_zlib_load(struct vt_err *err)
{
	return vt_dynlib_load(&zlib_lib, err);
}

uint32_t vt_crc32(uint32_t crc, const void *data, size_t len)
{
	const unsigned char *p = data;

	while (len) {
		uInt step = len > (1u << 30) ? (1u << 30) : (uInt)len;

		crc = (uint32_t)zlib.crc32(crc, p, step);
		p += step;
		len -= step;
	}
	return crc;
}

int vt_gzip_append(struct vt_buf *out, const void *data, size_t len, int level, struct vt_err *err)
{
	z_stream z;
	unsigned char chunk[1 << 16];
	int zrc;

	if ((zrc = vt_zlib_load(err)))
		return zrc;
	memset(&z, 0, sizeof(z));
	if (zlib.deflate_init2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
			       (int)sizeof(z)) != Z_OK)
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
		zrc = zlib.deflate(&z, len || z.avail_in ? Z_NO_FLUSH : Z_FINISH);
		if (zrc == Z_STREAM_ERROR) {
			zlib.deflate_end(&z);
			return vt_err_set(err, VT_E_FAIL, 0, "zlib: deflate failed");
		}
		if (vt_buf_append(out, chunk, sizeof(chunk) - z.avail_out)) {
			zlib.deflate_end(&z);
			return vt_err_set(err, VT_E_NOMEM, 0, "gzip: %zu bytes compressed", out->len);
		}
	} while (zrc != Z_STREAM_END);
	zlib.deflate_end(&z);
	return VT_OK;
}

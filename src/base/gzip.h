/*
 * gzip.h — zlib, the one place vitals calls it: compressing a buffer into
 * gzip (RFC 1952) for pprof files (render/profile_pprof.c) and the
 * exporter's compressed answers (serve/http.c), and the CRC32 that checks a
 * separate debug file (elf/unwind.c).  zlib is opened on first use.
 */
#ifndef VT_BASE_GZIP_H
#define VT_BASE_GZIP_H

#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#include "base/buf.h"
#include "base/error.h"

/*
 * Append the gzip of data[0..len) to out, at zlib level (Z_BEST_SPEED 1 ..
 * Z_BEST_COMPRESSION 9, or -1 for zlib's default).  Any length: zlib is fed
 * at most 1 GiB at a time.  VT_E_NOMEM when out would pass its max (out then
 * holds a partial stream: the caller drops it); VT_E_FAIL when zlib fails.
 */
int vt_gzip_append(struct vt_buf *out, const void *data, size_t len, int level, struct vt_err *err);

/* Open zlib (once): VT_E_UNSUPPORTED naming zlib1g when it is not installed. */
int vt_zlib_load(struct vt_err *err);

/* zlib's crc32 of data[0..len) continued from crc (0 to start); only after vt_zlib_load succeeded. */
uint32_t vt_crc32(uint32_t crc, const void *data, size_t len);

#endif

/*
 * gzip.h — compressing a buffer into gzip (RFC 1952) with zlib, the one
 * place vitals does it: pprof files (render/profile_pprof.c) and the
 * exporter's compressed answers (serve/http.c).
 */
#ifndef VT_BASE_GZIP_H
#define VT_BASE_GZIP_H

#include <stddef.h>

#include "base/buf.h"
#include "base/error.h"

/*
 * Append the gzip of data[0..len) to out, at zlib level (Z_BEST_SPEED 1 ..
 * Z_BEST_COMPRESSION 9, or -1 for zlib's default).  Any length: zlib is fed
 * at most 1 GiB at a time.  VT_E_NOMEM when out would pass its max (out then
 * holds a partial stream: the caller drops it); VT_E_FAIL when zlib fails.
 */
int vt_gzip_append(struct vt_buf *out, const void *data, size_t len, int level, struct vt_err *err);

#endif

/*
 * buf.h — a growable byte buffer with a hard cap.
 *
 * Invariants: data is NULL or NUL-terminated at data[len]; len < cap; growth
 * never passes max (then VT_E_NOMEM), so a 2 GB smaps or a hostile file fails
 * cleanly instead of eating the machine.  The buffer owns data; release it
 * with vt_buf_release().
 */
#ifndef VT_BASE_BUF_H
#define VT_BASE_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct vt_buf {
	char *data;
	size_t len;
	size_t cap;
	size_t max;   /* largest len allowed */
};

#define VT_BUF_INIT(max_bytes) { NULL, 0, 0, (max_bytes) }

/* Make room for extra more bytes (plus the NUL). VT_OK or VT_E_NOMEM. */
int vt_buf_reserve(struct vt_buf *b, size_t extra);
int vt_buf_append(struct vt_buf *b, const void *bytes, size_t n);
int vt_buf_appendf(struct vt_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int vt_buf_vappendf(struct vt_buf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* Empty the buffer, keeping its memory for reuse. */
void vt_buf_reset(struct vt_buf *b);
/* Free the memory; the buffer can be reused (it keeps its max). */
void vt_buf_release(struct vt_buf *b);

#endif

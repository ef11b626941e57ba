/*
 * buf.c — capped growable buffer.
 */
#include "base/buf.h"
#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int vt_buf_reserve(struct vt_buf *b, size_t extra)
{
	size_t need, cap;
	char *p;

	if (extra > b->max || b->len > b->max - extra)
		return VT_E_NOMEM;
	need = b->len + extra + 1;
	if (need <= b->cap)
		return VT_OK;
	cap = b->cap ? b->cap : 256;
	while (cap < need)
		cap *= 2;
	if (cap > b->max + 1)
		cap = b->max + 1;
	p = realloc(b->data, cap);
	if (!p)
		return VT_E_NOMEM;
	b->data = p;
	b->cap = cap;
	return VT_OK;
}

int vt_buf_append(struct vt_buf *b, const void *bytes, size_t n)
{
	int rc = vt_buf_reserve(b, n);

	if (rc)
		return rc;
	if (n)
		memcpy(b->data + b->len, bytes, n);
	b->len += n;
	b->data[b->len] = '\0';
	return VT_OK;
}

int vt_buf_vappendf(struct vt_buf *b, const char *fmt, va_list ap)
{
	va_list again;
	int n, rc;

	va_copy(again, ap);
	n = vsnprintf(NULL, 0, fmt, again);
	va_end(again);
	if (n < 0)
		return VT_E_FAIL;
	rc = vt_buf_reserve(b, (size_t)n);
	if (rc)
		return rc;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return VT_OK;
}

int vt_buf_appendf(struct vt_buf *b, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vt_buf_vappendf(b, fmt, ap);
	va_end(ap);
	return rc;
}

void vt_buf_reset(struct vt_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

void vt_buf_release(struct vt_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}

/*
 * census_words.c — what text and JSON views of a census share (see render/census.h).
 */
#include "render/census.h"

#include <stdio.h>
#include <string.h>

/* head_len bytes kept of len, shown redacted or, with reveal, escaped in quotes ("…" when cut). */
static const char *shown(const uint8_t *head, size_t head_len, uint64_t len, uint64_t hash, bool reveal, char *buf,
			 size_t cap)
{
	size_t i, o = 0;

	if (!cap)
		return buf;
	if (!reveal) {
		vt_content_redact(head, len, head_len, hash, buf, cap);
		return buf;
	}
	buf[o++] = '"';
	for (i = 0; i < head_len && o + 6 < cap; i++) {
		unsigned char c = head[i];

		if (c == '"' || c == '\\')
			o += (size_t)snprintf(buf + o, cap - o, "\\%c", c);
		else if (c >= 0x20 && c < 0x7f)
			buf[o++] = (char)c;
		else
			o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", c);
	}
	if (o + 5 < cap) {
		if (len > head_len)
			o += (size_t)snprintf(buf + o, cap - o, "\xe2\x80\xa6");   /* … */
		buf[o++] = '"';
	}
	buf[o < cap ? o : cap - 1] = 0;
	return buf;
}

const char *vt_render_census_string(const struct vt_content_string *s, bool reveal, char *buf, size_t cap)
{
	return shown(s->head, s->head_len, s->len, s->hash, reveal, buf, cap);
}

const char *vt_render_census_fragment(const struct vt_fragment *f, bool reveal, char *buf, size_t cap)
{
	return shown(f->bytes, f->len, f->len, f->hash, reveal, buf, cap);
}

uint64_t vt_census_free_bytes(const struct vt_census *c)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < c->walk.narenas; i++) {
		const struct vt_arena_walk *a = &c->walk.arenas[i];

		sum += a->bytes[VT_CHUNK_BIN] + a->bytes[VT_CHUNK_FAST] + a->bytes[VT_CHUNK_TCACHE] +
		       a->bytes[VT_CHUNK_TOP];
	}
	return sum;
}

uint64_t vt_census_live_bytes(const struct vt_census *c)
{
	uint64_t sum = c->walk.mmapped_bytes;
	size_t i;

	for (i = 0; i < c->walk.narenas; i++)
		sum += c->walk.arenas[i].bytes[VT_CHUNK_LIVE];
	return sum;
}

/*
 * scan.c — cursor parsing primitives and helpers for a field already cut out.
 */
#include "base/scan.h"

#include <string.h>

void vt_scan_blanks(struct vt_scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t'))
		s->p++;
}

bool vt_scan_u64(struct vt_scan *s, uint64_t *out)
{
	struct vt_scan t = *s;
	uint64_t v = 0;

	vt_scan_blanks(&t);
	if (t.p >= t.end || *t.p < '0' || *t.p > '9')
		return false;
	while (t.p < t.end && *t.p >= '0' && *t.p <= '9') {
		unsigned d = (unsigned)(*t.p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
		t.p++;
	}
	*out = v;
	*s = t;
	return true;
}

bool vt_scan_i64(struct vt_scan *s, int64_t *out)
{
	struct vt_scan t = *s;
	bool neg = false;
	uint64_t v;

	vt_scan_blanks(&t);
	if (t.p < t.end && (*t.p == '-' || *t.p == '+')) {
		neg = *t.p == '-';
		t.p++;
	}
	if (t.p < t.end && (*t.p == ' ' || *t.p == '\t'))
		return false;
	if (!vt_scan_u64(&t, &v))
		return false;
	if (neg ? v > (uint64_t)INT64_MAX + 1 : v > (uint64_t)INT64_MAX)
		return false;
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	*s = t;
	return true;
}

/* 1 + a hex digit's value, 0 for any other byte: one load per character (maps has ~35 a line). */
static const unsigned char hex_value1[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7, ['7'] = 8,
	['8'] = 9, ['9'] = 10,
	['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
	['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

static int hex_digit(char c)
{
	return (int)hex_value1[(unsigned char)c] - 1;
}

bool vt_scan_hex(struct vt_scan *s, uint64_t *out)
{
	const char *p = s->p;
	uint64_t v = 0;
	int d;

	if (p >= s->end || hex_digit(*p) < 0)
		return false;
	while (p < s->end && (d = hex_digit(*p)) >= 0) {
		if (v >> 60)
			return false;
		v = (v << 4) | (uint64_t)d;
		p++;
	}
	*out = v;
	s->p = p;
	return true;
}

bool vt_scan_char(struct vt_scan *s, char c)
{
	if (s->p >= s->end || *s->p != c)
		return false;
	s->p++;
	return true;
}

bool vt_scan_word(struct vt_scan *s, const char **word, size_t *len)
{
	struct vt_scan t = *s;
	const char *start;

	vt_scan_blanks(&t);
	start = t.p;
	while (t.p < t.end && *t.p != ' ' && *t.p != '\t' && *t.p != '\n')
		t.p++;
	if (t.p == start)
		return false;
	*word = start;
	*len = (size_t)(t.p - start);
	*s = t;
	return true;
}

bool vt_scan_line(struct vt_scan *s, const char **line, size_t *len)
{
	const char *nl;

	if (s->p >= s->end)
		return false;
	nl = memchr(s->p, '\n', (size_t)(s->end - s->p));
	*line = s->p;
	if (nl) {
		*len = (size_t)(nl - s->p);
		s->p = nl + 1;
	} else {
		*len = (size_t)(s->end - s->p);
		s->p = s->end;
	}
	return true;
}

void vt_scan_rest(struct vt_scan *s, const char **text, size_t *len)
{
	const char *nl;

	vt_scan_blanks(s);
	nl = memchr(s->p, '\n', (size_t)(s->end - s->p));
	*text = s->p;
	*len = (size_t)((nl ? nl : s->end) - s->p);
	s->p = nl ? nl : s->end;
}

void vt_copy_str(char *dst, size_t cap, const char *src, size_t len)
{
	if (!cap)
		return;
	if (len >= cap)
		len = cap - 1;
	memcpy(dst, src, len);
	dst[len] = '\0';
}

bool vt_word_is(const char *word, size_t len, const char *want)
{
	return strlen(want) == len && memcmp(word, want, len) == 0;
}

bool vt_word_u64(const char *word, size_t len, uint64_t *out)
{
	struct vt_scan s = vt_scan_init(word, len);

	return vt_scan_u64(&s, out) && vt_scan_eof(&s);
}

bool vt_list_has(const char *list, size_t len, const char *want)
{
	const char *end = list + len, *comma;

	while (list < end) {
		comma = memchr(list, ',', (size_t)(end - list));
		if (!comma)
			comma = end;
		if (vt_word_is(list, (size_t)(comma - list), want))
			return true;
		list = comma + 1;
	}
	return false;
}

void vt_snippet(char *dst, size_t cap, const char *src, size_t len)
{
	size_t i;

	if (len > cap - 1)
		len = cap - 1;
	for (i = 0; i < len; i++)
		dst[i] = src[i] >= 0x20 && src[i] < 0x7f ? src[i] : '?';
	dst[len] = '\0';
}

/*
 * fuzz_content.c — the content census (src/sample/content.c) on arbitrary
 * chunks.
 *
 * The input is read as: one byte of flags (needle count mod 17; 0x20: two
 * address ranges follow the needles; 0x40: the most repeated fragments too), one byte for the number of string
 * counters (16 + byte: small, so that they are evicted), the needles (a
 * length byte, 1 + b % 32, then the bytes), the ranges (4 little-endian
 * 32-bit values), then chunks (a 16-bit little-endian length, mod 4096, then
 * the bytes: the last one takes what is left).  Every chunk is exactly its
 * own allocation, so ASan sees any read past its end.  The figures must hold
 * together: zero and text bytes and needle hits (overlapping, within each
 * chunk) as a byte-by-byte count finds them, blobs
 * and strings inside text, top lists sorted with errors below counts;
 * every fragment reported is K to VT_FRAGMENT_MAX text bytes that occur in
 * at least count - count_err of the chunks (and in none across two).
 */
#include <assert.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sample/content.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t le(const uint8_t *p, size_t n)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* The chunks kept for the fragment check: copies, freed at the end. */
struct kept {
	uint8_t **chunk;
	size_t *len;
	size_t n;
};

static bool is_text(uint8_t b)
{
	return (b >= 0x20 && b < 0x7f) || b == '\t' || b == '\n' || b == '\r';
}

static void check_fragments(const struct vt_content *c, const struct kept *k)
{
	struct vt_fragment frags[8];
	size_t i, j, n = vt_content_top_fragments(c, frags, 8);
	struct vt_content_totals t;

	vt_content_totals(c, &t);
	assert(!n || t.fragment_pieces > 0);
	for (i = 0; i < n; i++) {
		const struct vt_fragment *f = &frags[i];
		uint64_t holding = 0;

		assert(f->len >= VT_FRAGMENT_K && f->len <= VT_FRAGMENT_MAX);
		assert(f->count >= f->count_err && f->count - f->count_err >= 2);
		assert(f->hash == vt_content_hash(f->bytes, f->len));
		assert(i == 0 || f->count <= frags[i - 1].count);
		for (j = 0; j < f->len; j++)
			assert(is_text(f->bytes[j]));
		for (j = 0; j < k->n; j++)
			holding += k->len[j] >= f->len && memmem(k->chunk[j], k->len[j], f->bytes, f->len) != NULL;
		/* the lower bound holds: at least that many chunks hold it (the upper may be a sketch's) */
		assert(holding >= f->count - f->count_err);
	}
}

static void check_results(const struct vt_content *c, uint64_t zero, uint64_t text, const uint64_t *hits)
{
	struct vt_content_string strings[8];
	struct vt_content_shape shapes[8];
	struct vt_content_totals t;
	uint64_t chunks = 0;
	size_t i, n;
	char shown[64];

	vt_content_totals(c, &t);
	assert(t.zero_bytes == zero && t.text_bytes == text);
	for (i = 0; i < t.nneedles; i++)
		assert(t.needle_hits[i] == hits[i]);
	assert(t.string_bytes <= t.text_bytes && t.base64_bytes + t.hex_bytes <= t.string_bytes);
	assert(t.string_count * VT_CONTENT_STRING_MIN <= t.string_bytes);
	for (i = 0; i < VT_CONTENT_SIZE_BUCKETS; i++)
		chunks += t.size_chunks[i];
	assert(chunks == t.chunks);
	n = vt_content_top_strings(c, strings, 8);
	for (i = 0; i < n; i++) {
		assert(strings[i].count > strings[i].count_err && strings[i].len >= VT_CONTENT_STRING_MIN);
		assert(i == 0 || strings[i].count <= strings[i - 1].count);
		vt_content_redact(strings[i].head, strings[i].len, strings[i].head_len, strings[i].hash, shown,
				  sizeof(shown) - i * 7);
		assert(strlen(shown) < sizeof(shown) - i * 7);
	}
	n = vt_content_top_shapes(c, shapes, 8);
	for (i = 0; i < n; i++) {
		assert(shapes[i].bytes >= shapes[i].bytes_err);
		assert(i == 0 || shapes[i].bytes <= shapes[i - 1].bytes);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *needles[VT_CONTENT_NEEDLES_MAX];
	size_t lens[VT_CONTENT_NEEDLES_MAX], pos = 2, k;
	uint64_t ranges[2][2], zero = 0, text = 0, hits[VT_CONTENT_NEEDLES_MAX] = { 0 };
	struct vt_content_opts o = { .needles = needles, .needle_lens = lens };
	struct vt_content *c;
	struct kept kept = { 0 };

	if (size < 2)
		return 0;
	o.counters = 16 + data[1];
	o.fragments = (data[0] & 0x40) != 0;
	for (k = 0; k < (size_t)(data[0] & 0x1f) % 17 && pos < size; k++) {
		size_t n = 1 + data[pos++] % 32;

		if (n > size - pos)
			break;
		needles[k] = (const char *)data + pos;
		lens[k] = n;
		pos += n;
	}
	o.nneedles = k;
	if ((data[0] & 0x20) && size - pos >= 16) {
		ranges[0][0] = le(data + pos, 4);
		ranges[0][1] = ranges[0][0] + 1 + le(data + pos + 4, 4);
		ranges[1][0] = le(data + pos + 8, 4) << 12;
		ranges[1][1] = ranges[1][0] + 1 + le(data + pos + 12, 4);
		o.ranges = (const uint64_t (*)[2])ranges;
		o.nranges = 2;
		pos += 16;
	}
	if (vt_content_new(&o, &c, NULL) != VT_OK)
		return 0;
	kept.chunk = calloc(size, sizeof(*kept.chunk));
	kept.len = calloc(size, sizeof(*kept.len));
	if (!kept.chunk || !kept.len)
		goto out;
	while (pos < size) {
		size_t n = size - pos, i;
		uint8_t *chunk;

		if (n >= 2) {
			n = le(data + pos, 2) % 4096;
			pos += 2;
			if (n > size - pos)
				n = size - pos;
		} else {
			pos = size - n;
		}
		chunk = malloc(n ? n : 1);
		if (!chunk)
			break;
		memcpy(chunk, data + pos, n);
		for (i = 0; i < n; i++) {
			zero += chunk[i] == 0;
			text += (chunk[i] >= 0x20 && chunk[i] < 0x7f) || chunk[i] == '\t' || chunk[i] == '\n' ||
				chunk[i] == '\r';
		}
		for (k = 0; k < o.nneedles; k++)
			for (i = 0; i + lens[k] <= n; i++)
				hits[k] += memcmp(chunk + i, needles[k], lens[k]) == 0;
		vt_content_add(c, chunk, n, n * 3 + 16);
		kept.chunk[kept.n] = chunk;
		kept.len[kept.n++] = n;
		pos += n;
	}
	check_results(c, zero, text, hits);
	check_fragments(c, &kept);
out:
	for (k = 0; k < kept.n; k++)
		free(kept.chunk[k]);
	free(kept.chunk);
	free(kept.len);
	vt_content_free(c);
	return 0;
}

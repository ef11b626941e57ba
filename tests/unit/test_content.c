/*
 * test_content.c — the content census of heap chunks (src/sample/content.c):
 * exact counts on crafted chunks, the word-at-a-time scan against a byte-at-a-
 * time reference on mixed content cut at every alignment, heavy hitters
 * within their error bound, needles (overlapping, at a chunk's end, never
 * across chunks), the blob rules, size buckets, shapes and redaction.  Prints
 * the scan's speed on heap-like content ("# ... MB/s"); asserts none.
 */
#include "harness.h"
#include "rand.h"

#include <stdbool.h>
#include <time.h>

#include "sample/content.h"

static struct vt_content *census(const struct vt_content_opts *o)
{
	struct vt_content *c = NULL;
	struct vt_err err;
	int rc = vt_content_new(o, &c, &err);

	CHECK_EQ_I64(rc, VT_OK);
	if (rc != VT_OK) {
		printf("Bail out! %s\n", err.msg);
		exit(2);
	}
	return c;
}

static void add_str(struct vt_content *c, const char *s, uint64_t chunk_size)
{
	vt_content_add(c, (const uint8_t *)s, strlen(s), chunk_size);
}

static uint64_t rnd(uint64_t n)
{
	return (uint64_t)(uniform() * (double)n);
}

/* ---- a byte-at-a-time reference ---- */

static bool is_text(uint8_t b)
{
	return (b >= 0x20 && b <= 0x7e) || b == '\t' || b == '\n' || b == '\r';
}

static bool is_b64(uint8_t b)
{
	return (b >= 'A' && b <= 'Z') || (b >= 'a' && b <= 'z') || (b >= '0' && b <= '9') || b == '+' || b == '/';
}

static bool is_hex(uint8_t b)
{
	return (b >= 'a' && b <= 'f') || (b >= 'A' && b <= 'F') || (b >= '0' && b <= '9');
}

struct ref {
	uint64_t zero, text, strings, string_bytes, base64, hex;
};

static void ref_blobs(struct ref *r, const uint8_t *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		size_t j = i, digits = 0, up = 0, low = 0, hex = 0;

		while (j < n && is_b64(s[j])) {
			digits += s[j] >= '0' && s[j] <= '9';
			up += s[j] >= 'A' && s[j] <= 'Z';
			low += s[j] >= 'a' && s[j] <= 'z';
			hex += is_hex(s[j]);
			j++;
		}
		if (j - i >= 32) {
			size_t len = j - i;

			if (hex == len) {
				r->hex += len;
			} else if (digits || (up * 4 >= len && low * 4 >= len)) {
				size_t pad = 0;

				while (pad < 2 && j < n && s[j] == '=')
					pad++, j++;
				r->base64 += len + pad;
			}
		}
		i = j > i ? j : i + 1;
	}
}

static void ref_chunk(struct ref *r, const uint8_t *p, size_t len)
{
	size_t i = 0;

	for (i = 0; i < len; i++) {
		r->zero += p[i] == 0;
		r->text += is_text(p[i]);
	}
	for (i = 0; i < len;) {
		size_t j = i;

		while (j < len && is_text(p[j]))
			j++;
		if (j - i >= 8) {
			r->strings++;
			r->string_bytes += j - i;
			ref_blobs(r, p + i, j - i);
		}
		i = j > i ? j : i + 1;
	}
}

/* Overlapping occurrences of a needle in one chunk. */
static uint64_t ref_needle(const uint8_t *p, size_t len, const char *needle, size_t n)
{
	uint64_t hits = 0;
	size_t i;

	for (i = 0; i + n <= len; i++)
		hits += memcmp(p + i, needle, n) == 0;
	return hits;
}

/* Heap-like bytes: zeros, pointers, small ints, words, base64, hex, noise, needles. */
static void fill_heap_like(uint8_t *buf, size_t size)
{
	static const char *words[] = { "GET /index.html HTTP/1.1\r\n", "session_id=", "vitals", "password",
				       "Content-Type: application/json", "\t<key>value</key>\n", "aaaa" };
	size_t i = 0;

	while (i < size) {
		size_t n = 1 + rnd(120), k;

		if (n > size - i)
			n = size - i;
		switch (rnd(8)) {
		case 0:
		case 1:
			memset(buf + i, 0, n);
			break;
		case 2:
			for (k = 0; k < n; k++)
				buf[i + k] = (uint8_t)(k % 8 < 6 ? (k % 8 == 5 ? 0x7f : rnd(256)) : 0);
			break;
		case 3:
			for (k = 0; k < n; k++)
				buf[i + k] = (uint8_t)(k % 8 == 0 ? rnd(40) : 0);
			break;
		case 4: {
			const char *w = words[rnd(sizeof(words) / sizeof(words[0]))];

			for (k = 0; k < n; k++)
				buf[i + k] = (uint8_t)w[k % strlen(w)];
			break;
		}
		case 5: {
			static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=";

			for (k = 0; k < n; k++)
				buf[i + k] = (uint8_t)b64[rnd(65)];
			break;
		}
		case 6:
			for (k = 0; k < n; k++)
				buf[i + k] = (uint8_t)"0123456789abcdef"[rnd(16)];
			break;
		default:
			for (k = 0; k < n; k++)
				buf[i + k] = (uint8_t)rnd(256);
			break;
		}
		i += n;
	}
}

/* Mixed content cut into chunks of every length and alignment: the totals are the reference's. */
static void check_reference(const char *const *needles, size_t nneedles)
{
	size_t lens[VT_CONTENT_NEEDLES_MAX], k, size = 1 << 18, off = 0, nchunks = 0;
	struct vt_content_opts o = { .needles = needles, .needle_lens = lens, .nneedles = nneedles };
	uint64_t hits[VT_CONTENT_NEEDLES_MAX] = { 0 };
	uint8_t *buf = malloc(size);
	struct vt_content_totals t;
	struct ref r = { 0 };
	struct vt_content *c;

	for (k = 0; k < nneedles; k++)
		lens[k] = strlen(needles[k]);
	seed(7);
	fill_heap_like(buf, size);
	c = census(&o);
	while (off < size) {
		size_t n = nchunks < 300 ? nchunks % 40 : rnd(nchunks % 3 ? 200 : 3000);

		if (n > size - off)
			n = size - off;
		vt_content_add(c, buf + off, n, n + 8);
		ref_chunk(&r, buf + off, n);
		for (k = 0; k < nneedles; k++)
			hits[k] += ref_needle(buf + off, n, needles[k], lens[k]);
		off += n;
		nchunks++;
	}
	vt_content_totals(c, &t);
	CHECK_EQ_U64(t.chunks, nchunks);
	CHECK_EQ_U64(t.bytes, size);
	CHECK_EQ_U64(t.zero_bytes, r.zero);
	CHECK_EQ_U64(t.text_bytes, r.text);
	CHECK_EQ_U64(t.string_count, r.strings);
	CHECK_EQ_U64(t.string_bytes, r.string_bytes);
	CHECK_EQ_U64(t.base64_bytes, r.base64);
	CHECK_EQ_U64(t.hex_bytes, r.hex);
	CHECK(r.base64 > 1000 && r.hex > 1000 && r.strings > 1000);
	CHECK_EQ_U64(t.nneedles, nneedles);
	for (k = 0; k < nneedles; k++) {
		CHECK_EQ_U64(t.needle_hits[k], hits[k]);
		CHECK(hits[k] > 0);
	}
	vt_content_free(c);
	free(buf);
}

static void test_content__scan_matches_reference(void)
{
	static const char *const any[] = { "aa", "vitals", "password", "x", "\r\n", "GET /index.html HTTP/1.1" };
	/* all text and >= 8 bytes: looked for inside strings only */
	static const char *const text[] = { "password", "aaaaaaaa", "Content-Type: app", "\t<key>value" };

	check_reference(any, 6);
	check_reference(text, 4);
	check_reference(NULL, 0);
}

static void test_content__zero_and_text(void)
{
	uint8_t buf[100];
	struct vt_content *c = census(NULL);
	struct vt_content_totals t;
	size_t i;

	memset(buf, 0, 40);
	memset(buf + 40, 'a', 30);
	memcpy(buf + 70, "\t\n\r\x0b\x7f", 5);            /* 3 text, \v and DEL are not */
	for (i = 75; i < 100; i++)
		buf[i] = (uint8_t)(0x80 + i);
	vt_content_add(c, buf, sizeof(buf), 112);
	vt_content_add(c, buf, 3, 32);                     /* shorter than a word */
	vt_content_add(c, buf + 40, 0, 32);                /* no bytes */
	vt_content_totals(c, &t);
	CHECK_EQ_U64(t.chunks, 3);
	CHECK_EQ_U64(t.bytes, 103);
	CHECK_EQ_U64(t.zero_bytes, 43);
	CHECK_EQ_U64(t.text_bytes, 33);
	CHECK_EQ_U64(t.string_count, 1);                   /* the 30 'a' and "\t\n\r": one run of 33 */
	CHECK_EQ_U64(t.string_bytes, 33);
	vt_content_free(c);
}

static void test_content__strings_exact(void)
{
	struct vt_content *c = census(NULL);
	struct vt_content_string top[8];
	char longer[200];
	size_t n, i;

	for (i = 0; i < 5; i++)
		add_str(c, "hello world", 32);
	for (i = 0; i < 3; i++)
		add_str(c, "\x01" "abcdefgh" "\x02" "1234567" "\x03" "ZZZZZZZZ", 48);  /* 1234567 is too short */
	memset(longer, 'q', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	add_str(c, longer, 224);
	longer[150] = 'r';                                  /* differs after the kept head */
	add_str(c, longer, 224);
	add_str(c, longer, 224);
	n = vt_content_top_strings(c, top, 8);
	CHECK_EQ_U64(n, 5);
	CHECK_EQ_U64(top[0].count, 5);
	CHECK_EQ_U64(top[0].len, 11);
	CHECK_EQ_U64(top[0].bytes, 55);
	CHECK_EQ_U64(top[0].count_err, 0);
	CHECK_EQ_U64(top[0].head_len, 11);
	CHECK(memcmp(top[0].head, "hello world", 11) == 0);
	CHECK_EQ_U64(top[0].hash, vt_content_hash((const uint8_t *)"hello world", 11));
	CHECK_EQ_U64(top[1].count, 3);
	CHECK_EQ_U64(top[2].count, 3);
	CHECK_EQ_U64(top[1].len, 8);
	CHECK(memcmp(top[1].head, "abcdefgh", 8) == 0 || memcmp(top[1].head, "ZZZZZZZZ", 8) == 0);
	CHECK(memcmp(top[2].head, "abcdefgh", 8) == 0 || memcmp(top[2].head, "ZZZZZZZZ", 8) == 0);
	CHECK(memcmp(top[1].head, top[2].head, 8) != 0);
	/* the 199-byte strings: two, told apart by the hash of all their bytes */
	CHECK_EQ_U64(top[3].len, 199);
	CHECK_EQ_U64(top[3].count, 2);
	CHECK_EQ_U64(top[3].head_len, 64);
	CHECK_EQ_U64(top[3].hash, vt_content_hash((const uint8_t *)longer, 199));
	CHECK_EQ_U64(top[4].count, 1);
	CHECK_EQ_U64(vt_content_top_strings(c, top, 2), 2);
	CHECK_EQ_U64(vt_content_top_strings(c, top, 0), 0);
	/* a hash depends on every byte and on the length */
	CHECK(vt_content_hash((const uint8_t *)"abcdefgh", 8) != vt_content_hash((const uint8_t *)"abcdefgi", 8));
	CHECK(vt_content_hash((const uint8_t *)"abcdefgh\0", 9) != vt_content_hash((const uint8_t *)"abcdefgh", 8));
	vt_content_free(c);
}

/* 100k distinct strings and 3 strings 10k times each: the 3 come first, within the error bound. */
static void test_content__heavy_hitters(void)
{
	static const char *heavy[3] = { "the first heavy string", "Second-Heavy-String!",
					"3rd heavy one, longer than the others" };
	struct vt_content_opts o = { .counters = 4096 };
	uint64_t left[4] = { 100000, 10000, 10000, 10000 }, total = 130000, i;
	struct vt_content *c = census(&o);
	struct vt_content_string top[3];
	char s[40];
	size_t k, n;

	seed(11);
	for (i = 0; i < total; i++) {
		uint64_t pick = rnd(total - i), which = 0;

		while (pick >= left[which])
			pick -= left[which++];
		left[which]--;
		if (which == 0) {
			for (k = 0; k < 16; k++)
				s[k] = (char)('a' + rnd(26));
			s[16] = '\0';
			add_str(c, s, 32);
		} else {
			add_str(c, heavy[which - 1], 48);
		}
	}
	n = vt_content_top_strings(c, top, 3);
	CHECK_EQ_U64(n, 3);
	for (k = 0; k < n; k++) {
		size_t j, found = 3;

		for (j = 0; j < 3; j++)
			if (top[k].len == strlen(heavy[j]) && memcmp(top[k].head, heavy[j], top[k].len) == 0)
				found = j;
		CHECK(found < 3);
		/* true count 10000: count is an upper bound, count - err a lower one, err <= N / counters */
		CHECK(top[k].count >= 10000);
		CHECK(top[k].count - top[k].count_err <= 10000);
		CHECK(top[k].count_err <= total / 4096);
		printf("# heavy %zu: count %" PRIu64 " err %" PRIu64 "\n", k, top[k].count, top[k].count_err);
	}
	vt_content_free(c);
}

static void test_content__needles(void)
{
	static const char *needles[] = { "aa", "end!", "abc", "q", "spanning" };
	size_t lens[] = { 2, 4, 3, 1, 8 };
	struct vt_content_opts o = { .needles = needles, .needle_lens = lens, .nneedles = 5 };
	struct vt_content *c = census(&o);
	struct vt_content_totals t;

	add_str(c, "aaaa", 32);                   /* overlapping: 3 */
	add_str(c, "xx aa end!", 32);             /* at the very end of a chunk */
	add_str(c, "end!", 32);                   /* the whole chunk */
	add_str(c, "end", 32);                    /* shorter than the needle */
	add_str(c, "xxxx span", 32);              /* "spanning" across two chunks: not counted */
	add_str(c, "ning abcabc qq", 32);
	add_str(c, "", 32);
	vt_content_totals(c, &t);
	CHECK_EQ_U64(t.needle_hits[0], 4);
	CHECK_EQ_U64(t.needle_hits[1], 2);
	CHECK_EQ_U64(t.needle_hits[2], 2);
	CHECK_EQ_U64(t.needle_hits[3], 2);
	CHECK_EQ_U64(t.needle_hits[4], 0);
	vt_content_free(c);
}

static void test_content__needle_binary_and_long(void)
{
	char longest[256], chunk[600];
	const char *needles[] = { longest, "\0\0\0\x01" };
	size_t lens[] = { sizeof(longest), 4 };
	struct vt_content_opts o = { .needles = needles, .needle_lens = lens, .nneedles = 2 };
	struct vt_content_totals t;
	struct vt_content *c;
	size_t i;

	for (i = 0; i < sizeof(longest); i++)
		longest[i] = (char)(i * 7);
	c = census(&o);   /* it copies the needles */
	memset(chunk, 0, sizeof(chunk));
	memcpy(chunk + 40, longest, sizeof(longest));
	memcpy(chunk + sizeof(chunk) - sizeof(longest), longest, sizeof(longest));
	chunk[20] = 1;
	vt_content_add(c, (const uint8_t *)chunk, sizeof(chunk), 608);
	vt_content_totals(c, &t);
	CHECK_EQ_U64(t.needle_hits[0], 2);
	CHECK_EQ_U64(t.needle_hits[1], ref_needle((const uint8_t *)chunk, sizeof(chunk), needles[1], 4));
	CHECK(t.needle_hits[1] >= 1);
	vt_content_free(c);
}

static void test_content__blobs(void)
{
	struct vt_content *c = census(NULL);
	struct vt_content_totals t;

	/* 32 hex digits: hex, not base64 */
	add_str(c, "id 0123456789abcdef0123456789ABCDEF end", 48);
	vt_content_totals(c, &t);
	CHECK_EQ_U64(t.hex_bytes, 32);
	CHECK_EQ_U64(t.base64_bytes, 0);
	/* 31 hex digits: nothing */
	add_str(c, "id 0123456789abcdef0123456789ABCDE end", 48);
	vt_content_totals(c, &t);
	CHECK_EQ_U64(t.hex_bytes, 32);
	/* base64 with a digit and padding: 40 + "==" */
	add_str(c, "k=QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0MTIz==;", 64);
	vt_content_totals(c, &t);
	CHECK_EQ_U64(t.base64_bytes, 42);
	/* only two '=' count */
	add_str(c, "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0MTIz===", 64);
	vt_content_totals(c, &t);
	CHECK_EQ_U64(t.base64_bytes, 84);
	/* a long plain word and a CamelCase name: not base64 */
	add_str(c, "supercalifragilisticexpialidociousness", 64);
	add_str(c, "AbstractSingletonProxyFactoryBean/Impl", 64);
	vt_content_totals(c, &t);
	CHECK_EQ_U64(t.base64_bytes, 84);
	/* no digit, but both cases make a quarter each: base64 */
	add_str(c, "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo", 48);
	vt_content_totals(c, &t);
	CHECK_EQ_U64(t.base64_bytes, 84 + 35);
	/* a blob is text: not inside binary */
	vt_content_add(c, (const uint8_t *)"0123456789abcdef\x01" "0123456789abcdef", 33, 48);
	vt_content_totals(c, &t);
	CHECK_EQ_U64(t.hex_bytes, 32);
	/* hex then a non-hex letter: one run, base64 (it has digits) */
	add_str(c, "0123456789abcdef0123456789abcdefg", 48);
	vt_content_totals(c, &t);
	CHECK_EQ_U64(t.hex_bytes, 32);
	CHECK_EQ_U64(t.base64_bytes, 84 + 35 + 33);
	vt_content_free(c);
}

static void test_content__size_buckets(void)
{
	static const struct {
		uint64_t size;
		unsigned bucket;
	} cases[] = {
		{ 0, 0 }, { 1, 0 }, { 15, 3 }, { 16, 4 }, { 31, 4 }, { 32, 5 }, { 4095, 11 }, { 4096, 12 },
		{ (1ull << 40) - 1, 39 }, { 1ull << 40, 40 }, { 1ull << 63, 40 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct vt_content *c = census(NULL);
		struct vt_content_totals t;
		unsigned b;

		vt_content_add(c, (const uint8_t *)"x", 1, cases[i].size);
		vt_content_totals(c, &t);
		for (b = 0; b < VT_CONTENT_SIZE_BUCKETS; b++) {
			CHECK_EQ_U64(t.size_chunks[b], b == cases[i].bucket);
			CHECK_EQ_U64(t.size_bytes[b], b == cases[i].bucket ? cases[i].size : 0);
		}
		vt_content_free(c);
	}
}

static void put64(uint8_t *p, uint64_t v)
{
	size_t i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void test_content__shapes(void)
{
	struct vt_content *c = census(NULL);
	struct vt_content_shape top[8];
	uint8_t b[48];
	size_t i, n;

	memset(b, 0, sizeof(b));
	for (i = 0; i < 10; i++)
		vt_content_add(c, b, 24, 32);                        /* zero */
	put64(b, 0x00007f0012345670ull);
	for (i = 0; i < 4; i++)
		vt_content_add(c, b, 40, 48);                        /* pointer */
	put64(b, 0x00007f0012345671ull);
	vt_content_add(c, b, 40, 48);                                /* unaligned: binary */
	put64(b, 0x0000800000000000ull);
	vt_content_add(c, b, 40, 48);                                /* not user space: binary */
	put64(b, 300);
	vt_content_add(c, b, 40, 48);                                /* small-int */
	put64(b, 0);
	b[15] = 1;
	vt_content_add(c, b, 40, 48);                                /* zero then not: binary */
	add_str(c, "0123456789abcdef and more", 1000);                /* text */
	vt_content_add(c, (const uint8_t *)"abc\0", 4, 1001);        /* short, a zero: binary */
	vt_content_add(c, (const uint8_t *)"abc", 3, 1002);          /* short, all text */
	n = vt_content_top_shapes(c, top, 8);
	CHECK_EQ_U64(n, 7);
	CHECK_EQ_U64(top[0].chunk_size, 1002);
	CHECK_STR(vt_content_kind_name(top[0].kind), "text");
	CHECK_EQ_U64(top[1].chunk_size, 1001);
	CHECK_STR(vt_content_kind_name(top[1].kind), "binary");
	CHECK_EQ_U64(top[2].chunk_size, 1000);
	CHECK_STR(vt_content_kind_name(top[2].kind), "text");
	CHECK_EQ_U64(top[3].chunk_size, 32);
	CHECK_STR(vt_content_kind_name(top[3].kind), "zero");
	CHECK_EQ_U64(top[3].bytes, 320);
	CHECK_EQ_U64(top[3].chunks, 10);
	CHECK_EQ_U64(top[3].bytes_err, 0);
	CHECK_EQ_U64(top[4].chunk_size, 48);
	CHECK_STR(vt_content_kind_name(top[4].kind), "pointer");
	CHECK_EQ_U64(top[4].chunks, 4);
	CHECK_EQ_U64(top[5].chunk_size, 48);
	CHECK_STR(vt_content_kind_name(top[5].kind), "binary");
	CHECK_EQ_U64(top[5].chunks, 3);
	CHECK_STR(vt_content_kind_name(top[6].kind), "small-int");
	CHECK_EQ_U64(top[6].chunks, 1);
	CHECK_STR(vt_content_kind_name((enum vt_content_kind)99), "?");
	vt_content_free(c);
}

static void test_content__shapes_with_ranges(void)
{
	const uint64_t ranges[][2] = { { 0x5000, 0x6000 }, { 0x1000, 0x2000 }, { 0x1800, 0x3000 } };
	struct vt_content_opts o = { .ranges = ranges, .nranges = 3 };
	struct vt_content *c = census(&o);
	struct vt_content_shape top[4];
	uint8_t b[24] = { 0 };
	size_t n;

	put64(b, 0x2fff);                               /* in the merged [0x1000, 0x3000), unaligned */
	vt_content_add(c, b, 24, 32);
	vt_content_add(c, b, 24, 32);
	vt_content_add(c, b, 24, 32);
	put64(b, 0x3000);                               /* outside, < 65536: small-int */
	vt_content_add(c, b, 24, 48);
	vt_content_add(c, b, 24, 48);
	put64(b, 0x00007f0012345670ull);                /* canonical, but not in a range: binary */
	vt_content_add(c, b, 24, 80);
	n = vt_content_top_shapes(c, top, 4);
	CHECK_EQ_U64(n, 3);
	CHECK_STR(vt_content_kind_name(top[0].kind), "pointer");
	CHECK_EQ_U64(top[0].chunks, 3);
	CHECK_STR(vt_content_kind_name(top[1].kind), "small-int");
	CHECK_STR(vt_content_kind_name(top[2].kind), "binary");
	vt_content_free(c);
}

/* More shapes than counters: the shapes holding a large share of the bytes stay, with bounds that hold. */
static void test_content__shapes_bounded(void)
{
	struct vt_content *c = census(NULL);
	struct vt_content_shape top[2];
	uint8_t b[16] = { 0 };
	uint64_t i;

	seed(3);
	for (i = 0; i < 200000; i++) {
		if (i % 10 == 0)
			vt_content_add(c, b, 16, (1 << 20) + 8);
		else if (i % 10 == 1)
			vt_content_add(c, b, 16, (1 << 19) + 8);
		else
			vt_content_add(c, b, 16, 16 + 16 * rnd(50000));
	}
	CHECK_EQ_U64(vt_content_top_shapes(c, top, 2), 2);
	CHECK_EQ_U64(top[0].chunk_size, (1 << 20) + 8);
	CHECK_EQ_U64(top[1].chunk_size, (1 << 19) + 8);
	CHECK(top[0].bytes >= 20000ull * top[0].chunk_size);
	CHECK(top[0].bytes - top[0].bytes_err <= 20000ull * top[0].chunk_size);
	CHECK(top[1].bytes >= 20000ull * top[1].chunk_size);
	CHECK(top[1].bytes - top[1].bytes_err <= 20000ull * top[1].chunk_size);
	printf("# shapes: %" PRIu64 " chunks err %" PRIu64 ", %" PRIu64 " chunks err %" PRIu64 "\n", top[0].chunks,
	       top[0].bytes_err, top[1].chunks, top[1].bytes_err);
	vt_content_free(c);
}

static void test_content__redact(void)
{
	char out[64];
	uint64_t h = 0x3fa2c1d000000000ull;

	vt_content_redact((const uint8_t *)"vitals census", 37, 13, h, out, sizeof(out));
	CHECK_STR(out, "len=37 #3fa2c1d0 \"vita\xe2\x80\xa6\"");
	vt_content_redact((const uint8_t *)"a\"\\\tbcd", 8, 8, 0xabcdef0123456789ull, out, sizeof(out));
	CHECK_STR(out, "len=8 #abcdef01 \"a\\\"\\\\\\t\xe2\x80\xa6\"");
	vt_content_redact((const uint8_t *)"\x1b[2J", 4, 4, 0, out, sizeof(out));
	CHECK_STR(out, "len=4 #00000000 \"\\x1b[2J\"");
	vt_content_redact((const uint8_t *)"ab", 100, 2, 0, out, sizeof(out));
	CHECK_STR(out, "len=100 #00000000 \"ab\xe2\x80\xa6\"");
	/* cut: never half an ellipsis */
	vt_content_redact((const uint8_t *)"vitals", 37, 6, h, out, 24);
	CHECK_STR(out, "len=37 #3fa2c1d0 \"vita");
	vt_content_redact((const uint8_t *)"vitals", 37, 6, h, out, 25);
	CHECK_STR(out, "len=37 #3fa2c1d0 \"vita");
	vt_content_redact((const uint8_t *)"vitals", 37, 6, h, out, 26);
	CHECK_STR(out, "len=37 #3fa2c1d0 \"vita\xe2\x80\xa6");
	vt_content_redact((const uint8_t *)"vitals", 37, 6, h, out, 1);
	CHECK_STR(out, "");
	vt_content_redact((const uint8_t *)"vitals", 37, 6, h, NULL, 0);
}

static void test_content__bad_options(void)
{
	static const char *needles[] = { "ok", "" };
	size_t lens[] = { 2, 0 }, big[] = { 257 };
	const uint64_t empty[][2] = { { 10, 10 } };
	struct vt_content_opts o = { .needles = needles, .needle_lens = lens, .nneedles = 2 };
	struct vt_content *c = (struct vt_content *)&o;
	struct vt_err err;

	CHECK_EQ_I64(vt_content_new(&o, &c, &err), VT_E_USAGE);
	CHECK(c == NULL);
	CHECK(strstr(err.msg, "needle 2") != NULL);
	o.needle_lens = big;
	o.nneedles = 1;
	CHECK_EQ_I64(vt_content_new(&o, &c, &err), VT_E_USAGE);
	o.nneedles = 17;
	CHECK_EQ_I64(vt_content_new(&o, &c, &err), VT_E_USAGE);
	o = (struct vt_content_opts){ .counters = 8 };
	CHECK_EQ_I64(vt_content_new(&o, &c, &err), VT_E_USAGE);
	o.counters = VT_CONTENT_COUNTERS_MAX + 1;
	CHECK_EQ_I64(vt_content_new(&o, &c, &err), VT_E_USAGE);
	o = (struct vt_content_opts){ .ranges = empty, .nranges = 1 };
	CHECK_EQ_I64(vt_content_new(&o, &c, &err), VT_E_USAGE);
	o = (struct vt_content_opts){ .nranges = 1 };
	CHECK_EQ_I64(vt_content_new(&o, &c, &err), VT_E_USAGE);
	o = (struct vt_content_opts){ .counters = VT_CONTENT_COUNTERS_MAX };
	CHECK_EQ_I64(vt_content_new(&o, &c, &err), VT_OK);
	vt_content_free(c);
	vt_content_free(NULL);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Speed on heap-like content in heap-like chunks, with and without needles (printed, not asserted). */
static void test_content__speed(void)
{
	static const char *needles[] = { "password", "session_id=", "Bearer ey", "-----BEGIN" };
	size_t lens[] = { 8, 11, 9, 10 }, size = 8 << 20, passes = 4, with;
	uint8_t *buf = malloc(size);

	seed(5);
	fill_heap_like(buf, size);
	for (with = 0; with < 2; with++) {
		struct vt_content_opts o = { .needles = needles, .needle_lens = lens, .nneedles = with ? 4 : 0 };
		struct vt_content *c = census(&o);
		double t0 = now_s(), dt;
		size_t pass, chunks = 0;

		for (pass = 0; pass < passes; pass++) {
			size_t off = 0;

			while (off < size) {
				/* glibc-like sizes: mostly small, some large */
				size_t n = rnd(10) < 8 ? 24 + 16 * rnd(16) : 264 + 16 * rnd(512);

				if (n > size - off)
					n = size - off;
				vt_content_add(c, buf + off, n, n + 8);
				off += n;
				chunks++;
			}
		}
		dt = now_s() - t0;
		printf("# content scan, %s needles: %.0f MB/s (%zu chunks, %.1f MB)\n", with ? "4" : "no",
		       (double)(size * passes) / dt / 1e6, chunks, (double)(size * passes) / 1e6);
		vt_content_free(c);
	}
	free(buf);
}

/*
 * Long runs of text where alphabet breaks often (records of letters, digits
 * and a few signs): the words of a run are looked at 62 at a time, and runs
 * of 24..31 alphabet bytes (3 whole words only when aligned) must count
 * exactly as the reference counts them, across every group's edge.
 */
static void test_content__blobs_in_long_runs(void)
{
	static const char alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ,.:;_-/";
	struct vt_content *c = census(NULL);
	struct vt_content_totals t;
	struct ref r = { 0 };
	uint8_t buf[1300];
	uint64_t x = 0x9e3779b97f4a7c15ull;
	int i;

	for (i = 0; i < 4000; i++) {
		size_t n, k;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		n = 500 + (size_t)(x % 800);
		for (k = 0; k < n; k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[k] = (uint8_t)alphabet[(x >> 20) % (sizeof(alphabet) - 1)];
		}
		vt_content_add(c, buf, n, n + 16);
		ref_chunk(&r, buf, n);
	}
	vt_content_totals(c, &t);
	CHECK(r.base64 > 10000);
	CHECK_EQ_U64(t.base64_bytes, r.base64);
	CHECK_EQ_U64(t.hex_bytes, r.hex);
	vt_content_free(c);
}

VT_TEST_MAIN(test_content__scan_matches_reference, test_content__zero_and_text, test_content__strings_exact,
	     test_content__heavy_hitters, test_content__needles, test_content__needle_binary_and_long,
	     test_content__blobs, test_content__blobs_in_long_runs, test_content__size_buckets, test_content__shapes, test_content__shapes_with_ranges,
	     test_content__shapes_bounded, test_content__redact, test_content__bad_options, test_content__speed)

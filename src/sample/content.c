/*
 * content.c — the content census of heap chunks (see content.h).
 *
 * One pass over a chunk reads it 16 bytes at a time with SSE2 on x86-64
 * (scan16(): byte masks turned into 16-bit masks, runs of text found with
 * bit tricks on them), and the bytes after the last whole block, or all of
 * them elsewhere, 8 bytes at a time (SWAR: plain 64-bit arithmetic, no
 * intrinsics): a stretch of zero words is counted 32 bytes a step; any other
 * word gets two byte masks computed in registers (which bytes are zero, which
 * are text), and since a string is at least 8 bytes, only the text run a word
 * continues and the one it starts can be strings: a run is hashed and
 * counted only when it ends, and looked at for base64 and hex only when it
 * is at least VT_CONTENT_BLOB_MIN long, again a word at a time.
 * Needles are found with Wu–Manber (bigram shift table over the shortest
 * needle), or with SSE2 on x86-64 in stretches of 64 bytes or more when there
 * are at most NEEDLES_SSE2 of them (one pass a needle, 16 offsets a step),
 * only inside strings when every needle is text of 8 bytes or more.
 * The heavy hitters are space-saving counters (spacesave.h: a min-heap, the
 * evicted counter at the root, with an open-addressing index).  With
 * opts.fragments every string is also handed to the fragment finder
 * (fragment.h), and each chunk's start told to it.
 */
#include "sample/content.h"
#include "sample/spacesave.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define ONES 0x0101010101010101ull
#define HIGH 0x8080808080808080ull
#define LOW7 0x7f7f7f7f7f7f7f7full
#define NO_RUN SIZE_MAX
#define NEEDLES_SSE2 8   /* up to this many needles, one SSE2 pass each rather than Wu–Manber */

/* ---- bytes and words ---- */

static inline uint64_t load64le(const uint8_t *p)
{
	uint64_t w;

	memcpy(&w, p, sizeof(w));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	w = __builtin_bswap64(w);
#endif
	return w;
}

/* The first n (< 8) bytes of p as a little-endian word, zero above. */
static uint64_t load_short(const uint8_t *p, size_t n)
{
	uint64_t w = 0;
	size_t i;

	for (i = 0; i < n; i++)
		w |= (uint64_t)p[i] << (8 * i);
	return w;
}

/* 0x80 in each byte of w that is zero, 0 in the others (exact: no borrow between bytes). */
static inline uint64_t zero_marks(uint64_t w)
{
	return ~(((w & LOW7) + LOW7) | w | LOW7);
}

/*
 * 0x80 in each byte of w that is text: 0x20..0x7e, \t, \n or \r.  On the low
 * 7 bits x of a byte, x + (0x80 - k) cannot carry out of the byte and has its
 * top bit set exactly when x >= k.
 */
static inline uint64_t text_marks(uint64_t w)
{
	uint64_t x = w & LOW7;
	uint64_t ge20 = x + ONES * (0x80 - 0x20), ge7f = x + ONES * (0x80 - 0x7f);
	uint64_t ge09 = x + ONES * (0x80 - 0x09), ge0b = x + ONES * (0x80 - 0x0b);
	uint64_t ge0d = x + ONES * (0x80 - 0x0d), ge0e = x + ONES * (0x80 - 0x0e);
	uint64_t printable = ge20 & ~ge7f;
	uint64_t space = ge09 & ~ge0e & (~ge0b | ge0d);   /* 9, 10, 13 */

	return (printable | space) & ~w & HIGH;
}

/* How many bytes carry a mark (marks are 0x80 bits). */
static inline unsigned count_marks(uint64_t m)
{
	return (unsigned)(((m >> 7) * ONES) >> 56);
}

/* ---- the string hash ---- */

#define K0 0xa0761d6478bd642full
#define K1 0xe7037ed1a0b428dbull
#define K2 0x8ebc6af09c88c6e3ull

static inline uint64_t mum(uint64_t a, uint64_t b)
{
	__uint128_t r = (__uint128_t)a * b;

	return (uint64_t)r ^ (uint64_t)(r >> 64);
}

uint64_t vt_content_hash(const uint8_t *s, size_t len)
{
	uint64_t h = K0 ^ (uint64_t)len;
	size_t i = 0, rest;

	for (; i + 8 <= len; i += 8)
		h = mum(load64le(s + i) ^ K1, h ^ K2);
	rest = len - i;
	if (rest) {
		/* The last bytes: a word ending at the end (it overlaps bytes already mixed) shifted down. */
		uint64_t w = len >= 8 ? load64le(s + len - 8) >> (8 * (8 - rest)) : load_short(s, rest);

		h = mum(w ^ K1, h ^ K2);
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

/* ---- the census ---- */

struct vt_content {
	struct vt_content_totals t;
	struct vt_ss strings;
	uint8_t (*heads)[VT_CONTENT_HEAD];     /* by string slot */
	struct vt_ss shapes;
	uint32_t *order;                       /* scratch for the top lists: max(counters, shapes) slots */
	uint8_t *needle[VT_CONTENT_NEEDLES_MAX];
	size_t needle_len[VT_CONTENT_NEEDLES_MAX];
	uint16_t needle_tail[VT_CONTENT_NEEDLES_MAX];   /* bigram ending the needle's first window bytes */
	size_t window;                         /* shortest needle of 2 bytes or more; 0 when none */
	size_t needle_max;                     /* longest needle */
	bool needles_in_text;                  /* all needles are text of >= 8 bytes: look in strings only */
	uint8_t *shift;                        /* Wu–Manber shifts by bigram (65536) when window */
	uint64_t (*ranges)[2];                 /* sorted, merged */
	size_t nranges;
	struct vt_fragments *fragments;        /* NULL: not asked for */
};

/*
 * 0x80 in each byte of w in [A-Za-z0-9+/] (the base64 alphabet).  Setting
 * bit 0x20 folds upper case onto lower case; it also folds some control bytes
 * onto digits and '+' '/', and none of those is text.
 */
static inline uint64_t alphabet_marks(uint64_t w)
{
	uint64_t x = w & LOW7, y = x | ONES * 0x20;
	uint64_t letter = (y + ONES * (0x80 - 'a')) & ~(y + ONES * (0x80 - 'z' - 1));
	uint64_t digit = (y + ONES * (0x80 - '0')) & ~(y + ONES * (0x80 - '9' - 1));
	uint64_t sign = zero_marks((y & ~(ONES * 0x04)) ^ (ONES * '+'));   /* '+' or '/' */

	return (letter | digit | sign) & ~w & HIGH;
}

/*
 * Runs of the bytes marked 0x80 in words read 8 at a time.  A word either
 * continues the open run (*open; NO_RUN when none) or ends it at its first
 * unmarked byte, and opens a run at its last marked bytes when they reach its
 * end.  Runs inside one word are shorter than 8 bytes, shorter than anything
 * asked for, and are let go.  Returns true when the open run ended: it was
 * [*start, *end).
 */
static inline bool run_step(uint64_t marks, size_t i, size_t *open, size_t *start, size_t *end)
{
	uint64_t other = ~marks & HIGH;
	unsigned top;
	bool ended = false;

	if (!other) {
		if (*open == NO_RUN)
			*open = i;
		return false;
	}
	if (*open != NO_RUN) {
		*start = *open;
		*end = i + ((unsigned)__builtin_ctzll(other) >> 3);
		ended = true;
	}
	top = (unsigned)__builtin_clzll(other) >> 3;
	*open = top ? i + 8 - top : NO_RUN;
	return ended;
}

enum { C_B64 = 1, C_HEX = 2, C_DIGIT = 4, C_UPPER = 8, C_LOWER = 16 };

static const uint8_t blob_class[256] = {
	['0' ... '9'] = C_B64 | C_HEX | C_DIGIT,
	['A' ... 'F'] = C_B64 | C_HEX | C_UPPER,
	['G' ... 'Z'] = C_B64 | C_UPPER,
	['a' ... 'f'] = C_B64 | C_HEX | C_LOWER,
	['g' ... 'z'] = C_B64 | C_LOWER,
	['+'] = C_B64,
	['/'] = C_B64,
};

/* A run [a, b) of base64 alphabet in the text s[0..n): hex, base64 or neither (see content.h). */
static void count_blob(struct vt_content *c, const uint8_t *s, size_t a, size_t b, size_t n)
{
	size_t i, len = b - a, digits = 0, upper = 0, lower = 0, pad = 0;
	unsigned all = C_HEX;

	for (i = a; i < b; i++) {
		unsigned cls = blob_class[s[i]];

		all &= cls;
		digits += (cls & C_DIGIT) != 0;
		upper += (cls & C_UPPER) != 0;
		lower += (cls & C_LOWER) != 0;
	}
	if (all & C_HEX) {
		c->t.hex_bytes += len;
		return;
	}
	if (!digits && (upper * 4 < len || lower * 4 < len))
		return;
	while (pad < 2 && b + pad < n && s[b + pad] == '=')
		pad++;
	c->t.base64_bytes += len + pad;
}

#if defined(__SSE2__)
/* 0xff in each byte of v that alphabet_marks marks (the same bytes, 16 at a time). */
static inline __m128i alphabet16(__m128i v)
{
	__m128i y = _mm_or_si128(v, _mm_set1_epi8(0x20));   /* bytes 0x80.. stay negative: none matches */

	return _mm_or_si128(
		_mm_or_si128(_mm_and_si128(_mm_cmpgt_epi8(y, _mm_set1_epi8('a' - 1)), _mm_cmplt_epi8(y, _mm_set1_epi8('z' + 1))),
			     _mm_and_si128(_mm_cmpgt_epi8(y, _mm_set1_epi8('0' - 1)), _mm_cmplt_epi8(y, _mm_set1_epi8('9' + 1)))),
		_mm_cmpeq_epi8(_mm_andnot_si128(_mm_set1_epi8(0x04), y), _mm_set1_epi8('+')));
}
#endif

/* Bit k set when the word s[8k..8k+8) is all alphabet (alphabet_marks), for nw <= 62 words. */
static uint64_t alphabet_words(const uint8_t *s, size_t nw)
{
	uint64_t f = 0;
	size_t k = 0;

#if defined(__SSE2__)
	for (; k + 2 <= nw; k += 2) {
		unsigned m = (unsigned)_mm_movemask_epi8(alphabet16(_mm_loadu_si128((const __m128i *)(s + 8 * k))));

		f |= (uint64_t)((m & 0xff) == 0xff) << k | (uint64_t)((m >> 8) == 0xff) << (k + 1);
	}
#endif
	for (; k < nw; k++)
		f |= (uint64_t)(alphabet_marks(load64le(s + 8 * k)) == HIGH) << k;
	return f;
}

#define BLOB_GROUP 62               /* words flagged at a time: with 2 before them, 64 bits */

/*
 * Base64 and hex bytes in a run of text s[0..n).  A run of alphabet of 32
 * bytes or more holds at least 3 whole words (of 8 bytes from s) of alphabet:
 * only where 3 follow one another is the run looked for, byte by byte.  The
 * words are flagged BLOB_GROUP at a time, and a bit trick finds where three
 * flagged words follow one another.
 */
static void count_blobs(struct vt_content *c, const uint8_t *s, size_t n)
{
	size_t i = 0, whole = 0;    /* whole: words of alphabet right before s + i (0..2) */

	while (i + 8 <= n) {
		size_t nw = (n - i) / 8 < BLOB_GROUP ? (n - i) / 8 : BLOB_GROUP, a, b, k;
		/* bit j + 2: word j from i; bits 1 and 0: the words before i */
		uint64_t ext = alphabet_words(s + i, nw) << 2 | (whole >= 2 ? 3 : whole == 1 ? 2 : 0);
		uint64_t three = ext & ext >> 1 & ext >> 2 & ((1ull << nw) - 1);   /* bit k: words k-2..k */

		if (!three) {
			/* the words of alphabet that reach the group's end, fewer than 3 */
			uint64_t inv = ~ext & (nw + 2 < 64 ? (1ull << (nw + 2)) - 1 : ~0ull);
			unsigned top = inv ? 63 - (unsigned)__builtin_clzll(inv) : 0;

			whole = nw + 1 - top;
			if (whole > 2)
				whole = 2;
			i += 8 * nw;
			continue;
		}
		k = i + 8 * (size_t)__builtin_ctzll(three);   /* the word where the third in a row is */
		for (a = k - 16; a > 0 && (blob_class[s[a - 1]] & C_B64); a--)
			;
		for (b = k + 8; b < n && (blob_class[s[b]] & C_B64); b++)
			;
		if (b - a >= VT_CONTENT_BLOB_MIN)
			count_blob(c, s, a, b, n);
		whole = 0;
		i = (b & ~(size_t)7) + 8;   /* the word holding s[b] is not all alphabet: go on after it */
	}
}

#if defined(__SSE2__)
/*
 * Every offset where a needle of n bytes (2 or more) matches in p[0..len),
 * len >= n + 15, 16 offsets a step: a candidate has the needle's first and
 * last bytes where they belong, then its middle is compared.  The last step
 * ends at the last offset (it overlaps the one before, whose offsets it
 * leaves out).
 */
static uint64_t find_needle16(const uint8_t *p, size_t len, const uint8_t *needle, size_t n)
{
	const __m128i first = _mm_set1_epi8((char)needle[0]), last = _mm_set1_epi8((char)needle[n - 1]);
	size_t s = 0, ends = len - n + 1;   /* offsets 0..ends-1 */
	unsigned skip = 0;
	uint64_t hits = 0;

	for (;;) {
		/* bit j set when offset s + j starts with the needle's first byte and ends with its last */
		unsigned cand = (unsigned)_mm_movemask_epi8(
			_mm_and_si128(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + s)), first),
				      _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + s + n - 1)), last)));

		for (cand &= ~skip; cand; cand &= cand - 1) {
			size_t j = s + (unsigned)__builtin_ctz(cand);

			hits += memcmp(p + j + 1, needle + 1, n - 2) == 0;
		}
		if (s + 16 >= ends)
			return hits;
		s += 16;
		if (s + 16 > ends) {
			skip = (1u << (s + 16 - ends)) - 1;   /* offsets the step before has seen */
			s = ends - 16;
		}
	}
}
#endif

/* Every offset where a needle matches (Wu–Manber with bigrams, or SSE2; 1-byte needles by memchr). */
static void find_needles(struct vt_content *c, const uint8_t *p, size_t len)
{
	size_t k, m = c->window, pos;

	for (k = 0; k < c->t.nneedles; k++) {
		const uint8_t *q = p, *end = p + len;

		if (c->needle_len[k] != 1)
			continue;
		while (q < end && (q = memchr(q, c->needle[k][0], (size_t)(end - q))) != NULL) {
			c->t.needle_hits[k]++;
			q++;
		}
	}
	if (!m || len < m)
		return;
#if defined(__SSE2__)
	if (c->t.nneedles <= NEEDLES_SSE2 && len >= 64 && len >= c->needle_max + 15) {
		for (k = 0; k < c->t.nneedles; k++)
			if (c->needle_len[k] >= 2)
				c->t.needle_hits[k] += find_needle16(p, len, c->needle[k], c->needle_len[k]);
		return;
	}
#endif
	for (pos = m - 1; pos < len;) {
		unsigned bigram = p[pos - 1] | (unsigned)p[pos] << 8;
		unsigned shift = c->shift[bigram];
		size_t start;

		if (shift) {
			pos += shift;
			continue;
		}
		start = pos + 1 - m;
		for (k = 0; k < c->t.nneedles; k++)
			if (c->needle_len[k] >= 2 && c->needle_tail[k] == bigram && c->needle_len[k] <= len - start &&
			    memcmp(p + start, c->needle[k], c->needle_len[k]) == 0)
				c->t.needle_hits[k]++;
		pos++;
	}
}

/* A run of text [a, b) of a chunk has ended. */
static void end_run(struct vt_content *c, const uint8_t *p, size_t a, size_t b)
{
	size_t n = b - a;
	uint64_t hash;
	uint32_t slot;
	bool fresh;

	c->t.string_count++;
	c->t.string_bytes += n;
	hash = vt_content_hash(p + a, n);
	slot = vt_ss_add(&c->strings, hash, n, 1, &fresh);
	if (fresh)
		memcpy(c->heads[slot], p + a, n < VT_CONTENT_HEAD ? n : VT_CONTENT_HEAD);
	if (n >= VT_CONTENT_BLOB_MIN)
		count_blobs(c, p + a, n);
	if (c->fragments && n >= VT_FRAGMENT_K)
		vt_fragments_run(c->fragments, p + a, n);
	if (c->needles_in_text)
		find_needles(c, p + a, n);
}

#if defined(__SSE2__)
/* 0xff in each text byte of v: 0x20..0x7e (signed: 0x80..0xff are below 0x1f), \t, \n, \r */
static inline __m128i text16(__m128i v)
{
	return _mm_or_si128(_mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8(0x1f)), _mm_cmplt_epi8(v, _mm_set1_epi8(0x7f))),
			    _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\t')),
					 _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\n')),
						      _mm_cmpeq_epi8(v, _mm_set1_epi8('\r')))));
}

/*
 * The whole 16-byte blocks of p[0..len) with SSE2: adds their zero and text
 * bytes to *zero and *text, ends the strings that end in them and returns
 * where it stopped (a multiple of 16), with *open where the run of text that
 * reaches there starts (NO_RUN when none does).
 */
static size_t scan16(struct vt_content *c, const uint8_t *p, size_t len, size_t *open_out, uint64_t *zero,
		     uint64_t *text)
{
	const __m128i nul = _mm_setzero_si128();
	/* the start of the run of text that reaches i, i itself when the byte before i is not text */
	size_t i = 0, open = 0;

	while (i + 16 <= len) {
		/* Per-byte counts of zero and text bytes, summed every 255 blocks at most (a byte holds 255). */
		__m128i zacc = nul, tacc = nul;
		size_t stop = len - i > 255 * 16 ? i + 255 * 16 : len;

		for (; i + 16 <= stop; i += 16) {
			__m128i v, z, t;

			if (i + 64 <= stop) {
				/* 64 bytes with no text (binary data, zeros): only zeros to count */
				__m128i v0 = _mm_loadu_si128((const __m128i *)(p + i)),
					v1 = _mm_loadu_si128((const __m128i *)(p + i + 16)),
					v2 = _mm_loadu_si128((const __m128i *)(p + i + 32)),
					v3 = _mm_loadu_si128((const __m128i *)(p + i + 48));

				if (!_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(text16(v0), text16(v1)),
								    _mm_or_si128(text16(v2), text16(v3))))) {
					if (i - open >= VT_CONTENT_STRING_MIN)
						end_run(c, p, open, i);   /* the run that reached them ends */
					zacc = _mm_sub_epi8(zacc, _mm_cmpeq_epi8(v0, nul));
					zacc = _mm_sub_epi8(zacc, _mm_cmpeq_epi8(v1, nul));
					zacc = _mm_sub_epi8(zacc, _mm_cmpeq_epi8(v2, nul));
					zacc = _mm_sub_epi8(zacc, _mm_cmpeq_epi8(v3, nul));
					open = i + 64;
					i += 48;
					continue;
				}
			}
			v = _mm_loadu_si128((const __m128i *)(p + i));
			/* 0xff in each byte that is zero */
			z = _mm_cmpeq_epi8(v, nul);
			t = text16(v);
			/* bit k set when byte i + k is zero (zmask), is text (tmask), is not text (other) */
			unsigned zmask = (unsigned)_mm_movemask_epi8(z), tmask = (unsigned)_mm_movemask_epi8(t);
			unsigned other = ~tmask & 0xffff, top, inner, win;
			size_t end;

			zacc = _mm_sub_epi8(zacc, z);
			tacc = _mm_sub_epi8(tacc, t);
			if (!other)
				continue;   /* all text: the run goes on */
			/* the run that reaches the block ends at its first byte that is not text */
			end = i + (unsigned)__builtin_ctz(other);
			if (end - open >= VT_CONTENT_STRING_MIN)
				end_run(c, p, open, end);
			/* the run that reaches the block's end starts after its last byte that is not text */
			top = 31 - (unsigned)__builtin_clz(other);
			open = i + top + 1;
			/*
			 * inner: the text bytes between the first and the last byte that is not text, runs that
			 * start and end in the block.  They lie in 14 bits: at most one is 8 long or more.
			 * win: bit k set when bytes k..k+7 are all inner text.
			 */
			inner = tmask & ~((other & -other) - 1) & ((1u << top) - 1);
			win = inner & inner >> 1;
			win &= win >> 2;
			win &= win >> 4;
			if (win) {
				unsigned a = (unsigned)__builtin_ctz(win), b = a + (unsigned)__builtin_ctz(~(inner >> a));

				end_run(c, p, i + a, i + b);
			}
			if (zmask == 0xffff) {
				/* a stretch of zeros (free chunks, fresh pages): 64 bytes a step, counted here */
				while (i + 80 <= stop) {
					__m128i any = _mm_or_si128(
						_mm_or_si128(_mm_loadu_si128((const __m128i *)(p + i + 16)),
							     _mm_loadu_si128((const __m128i *)(p + i + 32))),
						_mm_or_si128(_mm_loadu_si128((const __m128i *)(p + i + 48)),
							     _mm_loadu_si128((const __m128i *)(p + i + 64))));

					if (_mm_movemask_epi8(_mm_cmpeq_epi8(any, nul)) != 0xffff)
						break;
					i += 64;
					*zero += 64;
				}
				open = i + 16;
			}
		}
		zacc = _mm_sad_epu8(zacc, nul);
		tacc = _mm_sad_epu8(tacc, nul);
		*zero += (uint64_t)_mm_cvtsi128_si32(zacc) + (uint64_t)_mm_cvtsi128_si32(_mm_unpackhi_epi64(zacc, zacc));
		*text += (uint64_t)_mm_cvtsi128_si32(tacc) + (uint64_t)_mm_cvtsi128_si32(_mm_unpackhi_epi64(tacc, tacc));
	}
	*open_out = open < i ? open : NO_RUN;
	return i;
}
#endif

static void scan(struct vt_content *c, const uint8_t *p, size_t len)
{
	uint64_t zero = 0, text = 0;
	size_t i = 0, open = NO_RUN, start, end, rest = len % 8;

#if defined(__SSE2__)
	/* whole 16-byte blocks with SSE2; the words after them below */
	i = scan16(c, p, len, &open, &zero, &text);
#endif
	for (; i + 8 <= len; i += 8) {
		uint64_t w = load64le(p + i), marks;

		if (!w) {
			if (open != NO_RUN && i - open >= VT_CONTENT_STRING_MIN)
				end_run(c, p, open, i);
			open = NO_RUN;
			/* a stretch of zeros (free chunks, fresh pages): 32 bytes a step */
			while (i + 40 <= len && !(load64le(p + i + 8) | load64le(p + i + 16) | load64le(p + i + 24) |
						  load64le(p + i + 32))) {
				i += 32;
				zero += 32;
			}
			zero += 8;
			continue;
		}
		marks = text_marks(w);
		if (marks == HIGH) {
			text += 8;
			if (open == NO_RUN)
				open = i;
			continue;
		}
		zero += count_marks(zero_marks(w));
		text += count_marks(marks);
		if (open == NO_RUN && !(marks >> 63))
			continue;   /* no run goes on, none starts at the word's end */
		if (run_step(marks, i, &open, &start, &end) && end - start >= VT_CONTENT_STRING_MIN)
			end_run(c, p, start, end);
	}
	if (rest) {
		/* The last bytes, from a word that ends at len (or all of them when len < 8). */
		uint64_t valid = HIGH & ((1ull << (8 * rest)) - 1);
		uint64_t w = len >= 8 ? load64le(p + len - 8) >> (8 * (8 - rest)) : load_short(p, rest);
		uint64_t marks = text_marks(w) & valid;

		zero += count_marks(zero_marks(w) & valid);
		text += count_marks(marks);
		if (run_step(marks, i, &open, &start, &end) && end - start >= VT_CONTENT_STRING_MIN)
			end_run(c, p, start, end);
	}
	if (open != NO_RUN && len - open >= VT_CONTENT_STRING_MIN)
		end_run(c, p, open, len);
	c->t.zero_bytes += zero;
	c->t.text_bytes += text;
}

static bool in_ranges(const struct vt_content *c, uint64_t v)
{
	size_t lo = 0, hi = c->nranges;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v < c->ranges[mid][0])
			hi = mid;
		else if (v >= c->ranges[mid][1])
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

static enum vt_content_kind head_kind(const struct vt_content *c, const uint8_t *p, size_t len)
{
	size_t n = len < 16 ? len : 16;
	uint64_t w0, w1, v0, v1;

	if (n == 16) {
		w0 = load64le(p);
		w1 = load64le(p + 8);
		v0 = v1 = HIGH;
	} else {
		size_t n1 = n > 8 ? n - 8 : 0;

		w0 = n >= 8 ? load64le(p) : load_short(p, n);
		w1 = load_short(p + 8, n1);
		v0 = n >= 8 ? HIGH : HIGH & ((1ull << (8 * n)) - 1);
		v1 = HIGH & ((1ull << (8 * n1)) - 1);
	}
	if (!w0 && !w1)
		return VT_CONTENT_ZERO;
	if ((text_marks(w0) & v0) == v0 && (text_marks(w1) & v1) == v1)
		return VT_CONTENT_TEXT;
	if (n < 8)
		return VT_CONTENT_BINARY;
	if (c->nranges ? in_ranges(c, w0) : (w0 >= 0x1000 && w0 < 0x0000800000000000ull && !(w0 & 7)))
		return VT_CONTENT_POINTER;
	if (w0 && w0 < 65536)
		return VT_CONTENT_SMALL_INT;
	return VT_CONTENT_BINARY;
}

enum vt_content_kind vt_content_head_kind(const uint8_t *p, size_t len)
{
	const struct vt_content none = { 0 };

	return head_kind(&none, p, len);
}

void vt_content_add(struct vt_content *c, const uint8_t *bytes, size_t len, uint64_t chunk_size)
{
	unsigned bucket = chunk_size ? 63 - (unsigned)__builtin_clzll(chunk_size) : 0;
	bool fresh;

	if (bucket >= VT_CONTENT_SIZE_BUCKETS)
		bucket = VT_CONTENT_SIZE_BUCKETS - 1;
	c->t.chunks++;
	c->t.bytes += len;
	if (c->fragments)
		vt_fragments_chunk(c->fragments);
	c->t.size_chunks[bucket]++;
	c->t.size_bytes[bucket] += chunk_size;
	(void)vt_ss_add(&c->shapes, chunk_size, head_kind(c, bytes, len), chunk_size, &fresh);
	if (!len)
		return;
	scan(c, bytes, len);
	if (c->t.nneedles && !c->needles_in_text)
		find_needles(c, bytes, len);
}

void vt_content_add_more(struct vt_content *c, const uint8_t *bytes, size_t len)
{
	if (!len)
		return;
	c->t.bytes += len;
	scan(c, bytes, len);
	if (c->t.nneedles && !c->needles_in_text)
		find_needles(c, bytes, len);
}

/* ---- setup ---- */

static int check_opts(const struct vt_content_opts *o, struct vt_err *err)
{
	size_t i;

	if (o->nneedles > VT_CONTENT_NEEDLES_MAX)
		return vt_err_set(err, VT_E_USAGE, 0, "%zu needles, at most %d", o->nneedles, VT_CONTENT_NEEDLES_MAX);
	for (i = 0; i < o->nneedles; i++) {
		size_t n = o->needle_lens ? o->needle_lens[i] : 0;

		if (!o->needles || !o->needles[i] || n < 1 || n > VT_CONTENT_NEEDLE_LEN_MAX)
			return vt_err_set(err, VT_E_USAGE, 0, "needle %zu is %zu bytes, not 1 to %d", i + 1, n,
					  VT_CONTENT_NEEDLE_LEN_MAX);
	}
	if (o->counters && (o->counters < 16 || o->counters > VT_CONTENT_COUNTERS_MAX))
		return vt_err_set(err, VT_E_USAGE, 0, "%zu string counters, not 16 to %d", o->counters,
				  VT_CONTENT_COUNTERS_MAX);
	if (o->nranges && !o->ranges)
		return vt_err_set(err, VT_E_USAGE, 0, "%zu address ranges but no array", o->nranges);
	for (i = 0; i < o->nranges; i++)
		if (o->ranges[i][0] >= o->ranges[i][1])
			return vt_err_set(err, VT_E_USAGE, 0, "address range %zu is empty: [%#llx, %#llx)", i + 1,
					  (unsigned long long)o->ranges[i][0], (unsigned long long)o->ranges[i][1]);
	return VT_OK;
}

static int range_cmp(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

static int set_needles(struct vt_content *c, const struct vt_content_opts *o)
{
	size_t k, q;

	for (k = 0; k < o->nneedles; k++) {
		size_t n = o->needle_lens[k];

		c->needle[k] = malloc(n);
		if (!c->needle[k])
			return -1;
		memcpy(c->needle[k], o->needles[k], n);
		c->needle_len[k] = n;
		if (n >= 2 && (!c->window || n < c->window))
			c->window = n;
		if (n > c->needle_max)
			c->needle_max = n;
	}
	c->t.nneedles = o->nneedles;
	c->needles_in_text = o->nneedles > 0;
	for (k = 0; k < o->nneedles; k++) {
		uint64_t marks = 0;

		for (q = 0; q < c->needle_len[k]; q++)
			marks |= ~text_marks(c->needle[k][q]) & 0x80;
		if (c->needle_len[k] < VT_CONTENT_STRING_MIN || marks)
			c->needles_in_text = false;
	}
	if (!c->window)
		return 0;
	/* The window is at most 256 bytes: every shift fits a byte. */
	c->shift = malloc(65536);
	if (!c->shift)
		return -1;
	memset(c->shift, (int)(c->window - 1), 65536);
	for (k = 0; k < o->nneedles; k++) {
		const uint8_t *s = c->needle[k];

		if (c->needle_len[k] < 2)
			continue;
		for (q = 2; q <= c->window; q++) {
			unsigned bigram = s[q - 2] | (unsigned)s[q - 1] << 8;

			if (c->shift[bigram] > c->window - q)
				c->shift[bigram] = (uint8_t)(c->window - q);
		}
		c->needle_tail[k] = (uint16_t)(s[c->window - 2] | (unsigned)s[c->window - 1] << 8);
	}
	return 0;
}

static int set_ranges(struct vt_content *c, const struct vt_content_opts *o)
{
	size_t i, n = 0;

	if (!o->nranges)
		return 0;
	c->ranges = malloc(o->nranges * sizeof(*c->ranges));
	if (!c->ranges)
		return -1;
	memcpy(c->ranges, o->ranges, o->nranges * sizeof(*c->ranges));
	qsort(c->ranges, o->nranges, sizeof(*c->ranges), range_cmp);
	for (i = 0; i < o->nranges; i++) {
		if (n && c->ranges[i][0] <= c->ranges[n - 1][1]) {
			if (c->ranges[i][1] > c->ranges[n - 1][1])
				c->ranges[n - 1][1] = c->ranges[i][1];
			continue;
		}
		c->ranges[n][0] = c->ranges[i][0];
		c->ranges[n][1] = c->ranges[i][1];
		n++;
	}
	c->nranges = n;
	return 0;
}

int vt_content_new(const struct vt_content_opts *opts, struct vt_content **out, struct vt_err *err)
{
	static const struct vt_content_opts none;
	const struct vt_content_opts *o = opts ? opts : &none;
	size_t counters = o->counters ? o->counters : VT_CONTENT_COUNTERS;
	struct vt_content *c;
	int rc;

	*out = NULL;
	rc = check_opts(o, err);
	if (rc != VT_OK)
		return rc;
	c = calloc(1, sizeof(*c));
	if (!c)
		return vt_err_set(err, VT_E_NOMEM, 0, "cannot allocate a content census");
	if (vt_ss_init(&c->strings, (uint32_t)counters) < 0 || vt_ss_init(&c->shapes, VT_CONTENT_SHAPES) < 0)
		goto nomem;
	c->heads = malloc(counters * sizeof(*c->heads));
	c->order = malloc((counters > VT_CONTENT_SHAPES ? counters : VT_CONTENT_SHAPES) * sizeof(*c->order));
	if (!c->heads || !c->order || set_needles(c, o) < 0 || set_ranges(c, o) < 0)
		goto nomem;
	if (o->fragments && vt_fragments_new(0, &c->fragments) < 0)
		goto nomem;
	*out = c;
	return VT_OK;
nomem:
	vt_content_free(c);
	return vt_err_set(err, VT_E_NOMEM, 0, "cannot allocate a content census of %zu counters", counters);
}

void vt_content_free(struct vt_content *c)
{
	size_t k;

	if (!c)
		return;
	vt_ss_release(&c->strings);
	vt_ss_release(&c->shapes);
	free(c->heads);
	free(c->order);
	for (k = 0; k < VT_CONTENT_NEEDLES_MAX; k++)
		free(c->needle[k]);
	free(c->shift);
	free(c->ranges);
	vt_fragments_free(c->fragments);
	free(c);
}

/* ---- results ---- */

void vt_content_totals(const struct vt_content *c, struct vt_content_totals *out)
{
	*out = c->t;
	out->fragment_pieces = c->fragments ? vt_fragments_sampled(c->fragments) : 0;
	out->fragment_memory = c->fragments ? vt_fragments_memory(c->fragments) : 0;
}

size_t vt_content_top_fragments(const struct vt_content *c, struct vt_fragment *out, size_t n)
{
	return c->fragments ? vt_fragments_top(c->fragments, out, n) : 0;
}

/* Strings: count, then bytes, highest first; then hash for a stable order. */
static int string_order(const void *a, const void *b, void *arg)
{
	const struct vt_ss_entry *x = &((const struct vt_ss_entry *)arg)[*(const uint32_t *)a];
	const struct vt_ss_entry *y = &((const struct vt_ss_entry *)arg)[*(const uint32_t *)b];

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->aux != y->aux)
		return x->aux > y->aux ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

/* Shapes: bytes, most first; then chunk size, kind. */
static int shape_order(const void *a, const void *b, void *arg)
{
	const struct vt_ss_entry *x = &((const struct vt_ss_entry *)arg)[*(const uint32_t *)a];
	const struct vt_ss_entry *y = &((const struct vt_ss_entry *)arg)[*(const uint32_t *)b];

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->aux < y->aux ? -1 : x->aux > y->aux;
}

/* The slots of s in order, into c's scratch (the census is not const in spirit: one thread). */
static uint32_t *sorted_slots(const struct vt_content *c, const struct vt_ss *s,
			      int (*order)(const void *, const void *, void *))
{
	uint32_t i;

	for (i = 0; i < s->used; i++)
		c->order[i] = i;
	qsort_r(c->order, s->used, sizeof(*c->order), order, s->ent);
	return c->order;
}

size_t vt_content_top_strings(const struct vt_content *c, struct vt_content_string *out, size_t n)
{
	const uint32_t *slots = sorted_slots(c, &c->strings, string_order);
	size_t i;

	if (n > c->strings.used)
		n = c->strings.used;
	for (i = 0; i < n; i++) {
		const struct vt_ss_entry *e = &c->strings.ent[slots[i]];
		struct vt_content_string *o = &out[i];

		o->hash = e->key;
		o->len = e->aux;
		o->count = e->count;
		o->count_err = e->err;
		o->bytes = e->count * e->aux;
		o->head_len = e->aux < VT_CONTENT_HEAD ? (size_t)e->aux : VT_CONTENT_HEAD;
		memcpy(o->head, c->heads[slots[i]], o->head_len);
		memset(o->head + o->head_len, 0, VT_CONTENT_HEAD - o->head_len);
	}
	return n;
}

size_t vt_content_top_shapes(const struct vt_content *c, struct vt_content_shape *out, size_t n)
{
	const uint32_t *slots = sorted_slots(c, &c->shapes, shape_order);
	size_t i;

	if (n > c->shapes.used)
		n = c->shapes.used;
	for (i = 0; i < n; i++) {
		const struct vt_ss_entry *e = &c->shapes.ent[slots[i]];

		out[i] = (struct vt_content_shape){
			.chunk_size = e->key,
			.kind = (enum vt_content_kind)e->aux,
			.bytes = e->count,
			.bytes_err = e->err,
			.chunks = e->key ? e->count / e->key : 0,
		};
	}
	return n;
}

const char *vt_content_kind_name(enum vt_content_kind kind)
{
	switch (kind) {
	case VT_CONTENT_ZERO:
		return "zero";
	case VT_CONTENT_TEXT:
		return "text";
	case VT_CONTENT_POINTER:
		return "pointer";
	case VT_CONTENT_SMALL_INT:
		return "small-int";
	case VT_CONTENT_BINARY:
		return "binary";
	}
	return "?";
}

void vt_content_redact(const uint8_t *s, size_t len, size_t kept_len, uint64_t hash, char *out, size_t cap)
{
	char shown[4 * 4 + 1], text[96];
	size_t i, n = 0, show = kept_len < len ? kept_len : len, cut;

	if (show > 4)
		show = 4;
	for (i = 0; i < show; i++) {
		uint8_t b = s[i];

		if (b == '"' || b == '\\') {
			shown[n++] = '\\';
			shown[n++] = (char)b;
		} else if (b == '\t' || b == '\n' || b == '\r') {
			shown[n++] = '\\';
			shown[n++] = b == '\t' ? 't' : b == '\n' ? 'n' : 'r';
		} else if (b >= 0x20 && b < 0x7f) {
			shown[n++] = (char)b;
		} else {
			n += (size_t)snprintf(shown + n, sizeof(shown) - n, "\\x%02x", b);
		}
	}
	shown[n] = '\0';
	snprintf(text, sizeof(text), "len=%llu #%08x \"%s%s\"", (unsigned long long)len, (unsigned)(hash >> 32), shown,
		 len > show ? "\xe2\x80\xa6" : "");
	if (!cap)
		return;
	cut = strlen(text);
	if (cut >= cap) {
		/* Never end in half of the ellipsis: back up to the byte that starts it. */
		cut = cap - 1;
		while (cut > 0 && ((uint8_t)text[cut] & 0xc0) == 0x80)
			cut--;
	}
	memcpy(out, text, cut);
	out[cut] = '\0';
}

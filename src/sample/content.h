/*
 * content.h — what a heap holds: a census of the bytes of its chunks.
 *
 * `vitals census` walks a process's malloc chunks and feeds each one's user
 * bytes here, live chunks to one census and free chunks to another.  A
 * census turns them into figures, in one pass over each chunk and in memory
 * that does not grow with the input (under a megabyte at the defaults):
 *
 *   totals      chunks and bytes; zero bytes; text bytes (printable ASCII,
 *               0x20..0x7e plus \t \n \r); base64 and hex blob bytes; hits
 *               of each needle; chunks and bytes by log2 of the chunk size
 *   strings     the most repeated strings: maximal runs of text bytes of at
 *               least VT_CONTENT_STRING_MIN bytes, cut at any other byte and
 *               at the chunk's end (a string never spans two chunks).  Kept
 *               by space-saving (Metwally et al., 2005): a fixed number of
 *               counters; a string not counted evicts the one with the
 *               smallest count and takes over that count plus one, which it
 *               records as its error.  So a reported count is an upper bound
 *               and count - count_err a lower bound of the true count, and
 *               every string seen more than strings/counters times is
 *               reported.  While there are fewer distinct strings than
 *               counters every count is exact (count_err 0).  A string is
 *               known by a 64-bit hash of all its bytes and its length (two
 *               strings with the same length and hash are counted as one);
 *               its first VT_CONTENT_HEAD bytes are kept to be shown, and
 *               vt_content_redact() is how to show them.
 *   fragments   with opts.fragments: the most repeated fragments of text,
 *               pieces of VT_FRAGMENT_K bytes or more shared by many chunks,
 *               whole strings or not, counted once per chunk holding them
 *               (sample/fragment.h: sampled pieces grown into the fragment
 *               their copies share; about 10 MiB more, fixed)
 *   shapes      allocation shapes: (chunk size, kind of its first 16 user
 *               bytes), by bytes, with space-saving weighted by the chunk
 *               size over VT_CONTENT_SHAPES counters (bytes an upper bound,
 *               bytes - bytes_err a lower bound).
 *
 * Blob rules, applied inside each maximal run of text bytes: a maximal run of
 * [A-Za-z0-9+/] of at least VT_CONTENT_BLOB_MIN characters is
 *   hex     when all of it is [0-9a-fA-F];
 *   base64  otherwise, when it holds a digit, or when upper-case and
 *           lower-case letters each make at least a quarter of it (so long
 *           plain words and CamelCase names are not base64); up to two '='
 *           right after it count as base64 bytes too;
 *   neither otherwise.
 * Needles are counted at every offset where they match, overlapping ones
 * included ("aa" is found 3 times in "aaaa"), and never across two chunks.
 * When every needle is text and at least VT_CONTENT_STRING_MIN bytes long
 * (the usual case), they are looked for only inside strings, where they can
 * be, which costs nothing on zeros and pointers.
 *
 * Kinds of a chunk's head, its first 16 user bytes (fewer when the chunk is
 * shorter), the first that applies:
 *   zero       all zero (or no bytes at all)
 *   text       all text bytes
 *   pointer    the first 8 bytes, read little-endian, are a pointer: inside
 *              one of opts.ranges when the caller gave ranges (the target's
 *              mappings), else a canonical user-space address: 8-aligned,
 *              0x1000 <= v < 0x0000800000000000
 *   small-int  the first 8 bytes, little-endian, are 1..65535
 *   binary     anything else
 *
 * Pure computation: bytes in, figures out; no I/O, no printing.  Not thread
 * safe: one census, one thread.
 */
#ifndef VT_SAMPLE_CONTENT_H
#define VT_SAMPLE_CONTENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "sample/fragment.h"

#define VT_CONTENT_NEEDLES_MAX    16     /* needles one census counts */
#define VT_CONTENT_NEEDLE_LEN_MAX 256    /* bytes of one needle */
#define VT_CONTENT_STRING_MIN     8      /* shortest run of text that is a string */
#define VT_CONTENT_HEAD           64     /* bytes of a string kept to be shown */
#define VT_CONTENT_BLOB_MIN       32     /* shortest base64 or hex run */
#define VT_CONTENT_COUNTERS       4096   /* string counters by default */
#define VT_CONTENT_COUNTERS_MAX   32768  /* at most (about 4 MB) */
#define VT_CONTENT_SHAPES         1024   /* shape counters */
#define VT_CONTENT_SIZE_BUCKETS   41     /* bucket k: chunk sizes in [2^k, 2^(k+1)); 0 holds 0, 40 all >= 2^40 */

struct vt_content_opts {
	const char *const *needles;       /* nneedles strings of needle_lens[i] bytes (1..256), any bytes */
	const size_t *needle_lens;
	size_t nneedles;                  /* 0..VT_CONTENT_NEEDLES_MAX */
	size_t counters;                  /* string counters, 16..VT_CONTENT_COUNTERS_MAX; 0: VT_CONTENT_COUNTERS */
	const uint64_t (*ranges)[2];      /* [lo, hi) address ranges a pointer must fall in, any order; NULL: none */
	size_t nranges;
	bool fragments;                   /* find the most repeated fragments too */
};

/* One census.  Opaque; the caller owns it: vt_content_new(), vt_content_free(). */
struct vt_content;

/*
 * A census with these options (NULL: no needles, default counters, no
 * ranges).  The census keeps its own copies of the needles and ranges.
 * VT_E_USAGE for bad options, VT_E_NOMEM.
 */
int vt_content_new(const struct vt_content_opts *opts, struct vt_content **out, struct vt_err *err);
void vt_content_free(struct vt_content *c);

/* Count one chunk: len of its user bytes (all or some of them) and its size as the allocator sees it. */
void vt_content_add(struct vt_content *c, const uint8_t *bytes, size_t len, uint64_t chunk_size);
/*
 * More bytes of the chunk last added (the rest of a chunk handed over in
 * pieces): scanned and counted as bytes, not as another chunk.  Strings and
 * needles do not span two pieces.
 */
void vt_content_add_more(struct vt_content *c, const uint8_t *bytes, size_t len);

struct vt_content_totals {
	uint64_t chunks;                  /* vt_content_add calls */
	uint64_t bytes;                   /* bytes scanned (sum of len) */
	uint64_t zero_bytes;
	uint64_t text_bytes;              /* printable ASCII and \t \n \r */
	uint64_t string_count;            /* strings (runs of >= 8 text bytes) */
	uint64_t string_bytes;            /* their bytes */
	uint64_t base64_bytes;
	uint64_t hex_bytes;
	uint64_t fragment_pieces;         /* (chunk, piece) pairs sampled for fragments; 0 without them */
	uint64_t fragment_memory;         /* bytes the fragment finder holds; 0 without it */
	size_t nneedles;
	uint64_t needle_hits[VT_CONTENT_NEEDLES_MAX];        /* in the order given */
	uint64_t size_chunks[VT_CONTENT_SIZE_BUCKETS];       /* by floor(log2(chunk_size)) */
	uint64_t size_bytes[VT_CONTENT_SIZE_BUCKETS];        /* sum of chunk_size */
};

void vt_content_totals(const struct vt_content *c, struct vt_content_totals *out);

struct vt_content_string {
	uint64_t hash;                    /* vt_content_hash() of the whole string */
	uint64_t len;                     /* the whole string's length */
	uint64_t count;                   /* occurrences, an upper bound */
	uint64_t count_err;               /* count - count_err is a lower bound */
	uint64_t bytes;                   /* count * len */
	size_t head_len;                  /* min(len, VT_CONTENT_HEAD) */
	uint8_t head[VT_CONTENT_HEAD];    /* the first head_len bytes: redact before showing */
};

/* The n (or fewer) strings with the highest counts into out, highest first; returns how many. */
size_t vt_content_top_strings(const struct vt_content *c, struct vt_content_string *out, size_t n);

/*
 * The n (or fewer) fragments held by the most chunks into out, most first
 * (fragment.h); returns how many, 0 without opts.fragments.
 */
size_t vt_content_top_fragments(const struct vt_content *c, struct vt_fragment *out, size_t n);

enum vt_content_kind {
	VT_CONTENT_ZERO,
	VT_CONTENT_TEXT,
	VT_CONTENT_POINTER,
	VT_CONTENT_SMALL_INT,
	VT_CONTENT_BINARY,
};

/*
 * The kind of a head of len bytes as a census without ranges names it (the
 * rules above; a pointer is any canonical user-space address).
 */
enum vt_content_kind vt_content_head_kind(const uint8_t *p, size_t len);

/* "zero", "text", "pointer", "small-int", "binary"; "?" for anything else. */
const char *vt_content_kind_name(enum vt_content_kind kind);

struct vt_content_shape {
	uint64_t chunk_size;
	enum vt_content_kind kind;        /* of the first 16 user bytes */
	uint64_t bytes;                   /* chunk bytes of this shape, an upper bound */
	uint64_t bytes_err;               /* bytes - bytes_err is a lower bound */
	uint64_t chunks;                  /* bytes / chunk_size (0 for chunk_size 0) */
};

/* The n (or fewer) shapes holding the most bytes into out, most first; returns how many. */
size_t vt_content_top_shapes(const struct vt_content *c, struct vt_content_shape *out, size_t n);

/* The hash strings are known by (stable across runs and builds). */
uint64_t vt_content_hash(const uint8_t *s, size_t len);

/*
 * A string as it may be shown: its length, the first 8 hex digits of its
 * hash and its first 4 bytes, then "…" when it is longer than 4 bytes:
 *   len=37 #3fa2c1d0 "vita…"
 * s holds kept_len bytes of a string of len bytes.  '"' and '\' are escaped
 * with '\'; \t \n \r as \t \n \r; any other byte outside 0x20..0x7e as \xHH,
 * so the text is safe on a terminal and valid UTF-8.  out (cap bytes) is
 * always terminated, cut when too short.
 */
void vt_content_redact(const uint8_t *s, size_t len, size_t kept_len, uint64_t hash, char *out, size_t cap);

#endif

/*
 * fragment.h — the most repeated fragments of text: pieces shared by many
 * chunks that need not be whole strings (an identity string copied into
 * records that are each unique), found without being told what to look for.
 *
 * Fed the runs of text of each chunk (content.c hands over every string),
 * it counts, per chunk, the sampled pieces the chunk holds, and grows each
 * counted piece into the whole fragment its copies share:
 *
 *   pieces      every VT_FRAGMENT_K-byte window of a run of text is hashed;
 *               of each VT_FRAGMENT_WINDOW windows in a row, the one with the
 *               smallest hash is sampled (winnowing: Schleimer, Wilkerson and
 *               Aiken, 2003).  What is sampled depends on the bytes alone, so
 *               a fragment of at least VT_FRAGMENT_SURE bytes has the same
 *               piece sampled in every copy, wherever it lies in its chunk;
 *               a shorter one (VT_FRAGMENT_K bytes and more) is found when
 *               one of its pieces is sampled, which its neighbours decide.
 *               A run shorter than a window samples its smallest piece.
 *   unit        chunks: a piece found twice in one chunk counts once (a
 *               chunk of more than VT_FRAGMENT_CHUNK_PIECES distinct pieces
 *               counts once per that many).  Never across two chunks, nor
 *               across a byte that is not text.
 *   counting    a count-min sketch (2^VT_FRAGMENT_SKETCH_LOG2 32-bit
 *               counters, VT_FRAGMENT_SKETCH_ROWS of them a piece in one
 *               cache line, conservative update) holds an upper bound of
 *               every piece's count; a
 *               piece enters the space-saving counters (spacesave.h) once
 *               that bound reaches 2 and beats the smallest counted, with
 *               the bound as its count and the bound less one as its error.
 *               So pieces seen in one chunk only never take a counter, a
 *               count is an upper bound and count - count_err a lower bound
 *               of the chunks holding the piece, and every piece held by
 *               more chunks than the smallest count is counted.
 *   growing     a counted piece keeps VT_FRAGMENT_CONTEXT bytes each side
 *               from the copy that gave it its counter, and for each later
 *               copy how far its bytes agree each side.  The fragment is
 *               the piece grown each side as far as VT_FRAGMENT_HOLD of the
 *               copies agree; its lower bound is the copies that agree over
 *               all of it.  Pieces of one fragment grow into the same bytes
 *               and are shown once; a fragment inside another with an
 *               overlapping count is not shown.
 *
 * Memory is fixed: about 8 MiB of sketch, VT_FRAGMENT_CHUNK_PIECES * 24
 * bytes for one chunk's pieces, and about 700 bytes a counter
 * (vt_fragments_memory() says how much).  Pure computation; one thread.
 */
#ifndef VT_SAMPLE_FRAGMENT_H
#define VT_SAMPLE_FRAGMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VT_FRAGMENT_K             12     /* bytes of a piece: the shortest fragment */
#define VT_FRAGMENT_WINDOW        8      /* pieces in a row of which one is sampled */
#define VT_FRAGMENT_SURE          (VT_FRAGMENT_K + VT_FRAGMENT_WINDOW - 1)   /* 19: always found */
#define VT_FRAGMENT_CONTEXT       64     /* bytes kept each side of a piece */
#define VT_FRAGMENT_MAX           (VT_FRAGMENT_K + 2 * VT_FRAGMENT_CONTEXT)  /* 140: longest shown */
#define VT_FRAGMENT_HOLD          0.98   /* share of the copies a fragment grows over */
#define VT_FRAGMENT_COUNTERS      2048   /* by default */
#define VT_FRAGMENT_COUNTERS_MAX  32768
#define VT_FRAGMENT_SKETCH_ROWS   2
#define VT_FRAGMENT_SKETCH_LOG2   21     /* counters in all, 2 of them in one 64-byte line a piece */
#define VT_FRAGMENT_CHUNK_PIECES  16384  /* distinct pieces of one chunk told apart */

struct vt_fragments;

/* A finder with counters (16..VT_FRAGMENT_COUNTERS_MAX; 0: the default); -1 when memory runs out. */
int vt_fragments_new(size_t counters, struct vt_fragments **out);
void vt_fragments_free(struct vt_fragments *f);

/* A new chunk begins: the runs given from now on are its. */
void vt_fragments_chunk(struct vt_fragments *f);

/* A run of text of the current chunk: s[0..n), every byte text (content.h); runs under K bytes are let go. */
void vt_fragments_run(struct vt_fragments *f, const uint8_t *s, size_t n);

struct vt_fragment {
	uint64_t hash;                    /* vt_content_hash() of the fragment's bytes */
	uint64_t len;                     /* its bytes, VT_FRAGMENT_K..VT_FRAGMENT_MAX */
	uint64_t count;                   /* chunks holding it, an upper bound */
	uint64_t count_err;               /* count - count_err is a lower bound */
	bool open_left, open_right;       /* the copies agree as far as kept: it may go on that side */
	uint8_t bytes[VT_FRAGMENT_MAX];   /* len of them: redact before showing */
};

/* The n (or fewer) fragments held by the most chunks into out, most first; returns how many. */
size_t vt_fragments_top(const struct vt_fragments *f, struct vt_fragment *out, size_t n);

/* (chunk, piece) pairs counted: the pieces sampled, each once per chunk. */
uint64_t vt_fragments_sampled(const struct vt_fragments *f);

/* Bytes the finder holds (fixed when it is made). */
size_t vt_fragments_memory(const struct vt_fragments *f);

#endif

/*
 * heap.h (render) — views of a heap sample: text and JSON ("vitals.heap"), and
 * the words of its verdict.
 */
#ifndef VT_RENDER_HEAP_H
#define VT_RENDER_HEAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyze/heap_verdict.h"
#include "analyze/refill.h"
#include "sample/heap.h"
#include "sample/trim_follow.h"

/* A trim's refill, followed (vitals heap --trim --follow): the curve and its verdict. */
struct vt_heap_refill {
	const struct vt_trim_follow *follow;
	const struct vt_refill_verdict *verdict;   /* NULL: the curve could not be judged */
	bool utf8;                                  /* text: the sparkline in blocks, else ASCII */
};

/* refill: NULL when there was no follow. */
int vt_render_heap_text(FILE *out, const struct vt_heap_sample *h, const struct vt_heap_verdict *v,
			uint64_t page_size, const struct vt_heap_refill *refill);
int vt_render_heap_json(FILE *out, const struct vt_heap_sample *h, const struct vt_heap_verdict *v,
			uint64_t page_size, const struct vt_heap_refill *refill);

/* The refill (r->follow set) as one self-contained HTML page with its chart (heap_html.c). */
int vt_render_heap_html(FILE *out, const struct vt_heap_sample *h, const struct vt_heap_refill *r);

/*
 * The verdict in words (heap_words.c): the headline of its lever ("96% is
 * free memory spread over 8 arenas: fewer arenas (MALLOC_ARENA_MAX=2) or
 * another allocator keeps it from multiplying") and the i-th evidence it
 * cites ("" outside 0..n_evidence-1), each in buf of cap bytes
 * (VT_HEAP_LINE_MAX holds any); both return buf.
 */
#define VT_HEAP_LINE_MAX 320
const char *vt_render_heap_headline(const struct vt_heap_verdict *v, char *buf, size_t cap);
const char *vt_render_heap_evidence(const struct vt_heap_verdict *v, int i, char *buf, size_t cap);

/*
 * The refill's verdict in words (heap_words.c): its headline ("a trim every
 * 40 s would hold about 120.3 MiB less, at this stop time (12.1 ms per
 * trim)") and its i-th evidence line, "" past the last
 * (VT_REFILL_EVIDENCE lines at most; an empty one in between is skipped).
 * h gives the trim's own figures (what it stopped, for how long).
 */
#define VT_REFILL_EVIDENCE 7
const char *vt_render_refill_headline(const struct vt_refill_verdict *v, const struct vt_heap_sample *h,
				      char *buf, size_t cap);
const char *vt_render_refill_evidence(const struct vt_refill_verdict *v, const struct vt_heap_sample *h,
				      const struct vt_trim_follow *f, int i, char *buf, size_t cap);
/* "refills_within_a_tick", "back", ...: the verdict's kind for JSON. */
const char *vt_refill_kind_name(enum vt_refill_kind k);

#endif

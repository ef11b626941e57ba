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
#include "sample/heap.h"

int vt_render_heap_text(FILE *out, const struct vt_heap_sample *h, const struct vt_heap_verdict *v,
			uint64_t page_size);
int vt_render_heap_json(FILE *out, const struct vt_heap_sample *h, const struct vt_heap_verdict *v,
			uint64_t page_size);

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

#endif

/*
 * heap.h (render) — views of a heap sample: text and JSON ("vitals.heap").
 */
#ifndef VT_RENDER_HEAP_H
#define VT_RENDER_HEAP_H

#include <stdint.h>
#include <stdio.h>

#include "analyze/heap_verdict.h"
#include "sample/heap.h"

int vt_render_heap_text(FILE *out, const struct vt_heap_sample *h, const struct vt_heap_verdict *v,
			uint64_t page_size);
int vt_render_heap_json(FILE *out, const struct vt_heap_sample *h, const struct vt_heap_verdict *v,
			uint64_t page_size);

#endif

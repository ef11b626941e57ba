/*
 * blocks.h — how a malloc'd block found in a region (proc/maps.h struct
 * vt_region_block) is shown: its shape, as census reads an allocation's
 * head, redacted as census redacts by default.  Shared by snap and heap,
 * text and JSON.
 */
#ifndef VT_RENDER_BLOCKS_H
#define VT_RENDER_BLOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "alloc/cpython.h"
#include "proc/maps.h"

#include "base/json_lib.h"

struct vt_block_shape {
	const char *kind;         /* census's kind of its first 16 bytes; "unread" when not read */
	bool json;                /* text that opens a JSON object or array ({" [{ [" [digit) */
	char head[96];            /* vt_content_redact of its leading text (or, binary, bytes) within
	                           * the VT_BLOCK_HEAD bytes read; "" for zero, pointer, small-int */
};

void vt_block_shape(const struct vt_region_block *b, struct vt_block_shape *out);

/* "text, JSON: len=48 #3fa2c1d0 \"{\\\"us…\"" — what the text views print. */
const char *vt_block_shape_text(const struct vt_block_shape *s, char *buf, size_t cap);

/*
 * {"count", "bytes", "mappings": [{"start", "end", "size_bytes", "blocks":
 * [{"addr", "size_bytes", "rss_bytes", "shape": {"kind", "json", "head"}}],
 * "other_bytes", "unread_bytes", "changed", "skipped_bytes",
 * "not_kept"}]} of every region of list that holds blocks (docs/json.md).
 */
json_t *vt_blocks_json(const struct vt_region_list *list);

/*
 * The blocks found held against mallinfo2's hblks and hblkhd, in words:
 * "all 7 blocks found: ..." or what does not match and what may explain it.
 * True when count and bytes both match.
 */
bool vt_blocks_match(uint64_t found, uint64_t found_bytes, uint64_t hblks, uint64_t hblkhd, uint64_t min_size,
		     char *buf, size_t cap);

/* CPython's object arenas over all regions of a list (vt_region.py). */
struct vt_py_totals {
	uint64_t arenas, arena_bytes;     /* arena_bytes: arenas x arena size */
	uint64_t pools, used_pools, used_bytes, refused_pools, unread_bytes;
	uint32_t pool_size, arena_size;
	size_t mappings;
};

void vt_py_totals(const struct vt_region_list *list, struct vt_py_totals *out);

/* The bytes of a region's rest that are CPython's arenas (at most other_bytes). */
uint64_t vt_region_py_bytes(const struct vt_region *r);

/*
 * {"version", "evidence", "arenas", "arena_bytes", "arena_size_bytes",
 * "pool_size_bytes", "pools", "used_pools", "used_bytes", "refused_pools",
 * "mappings", "not_counted"} for a CPython process, null for any other.
 * why_not: why the arenas were not looked for (NULL when they were).
 */
/*
 * The CPYTHON section of snap and heap: a CPython interpreter's object
 * arenas (alloc/cpython.h), which are not malloc's, counted from their pool
 * headers in list's regions; or why_not ("" or NULL when they were looked
 * for).  Nothing for another process.
 */
void vt_render_cpython_text(FILE *out, pid_t pid, const struct vt_cpython *py, const struct vt_region_list *list,
			    const char *why_not);

json_t *vt_cpython_json(const struct vt_cpython *py, const struct vt_region_list *list, const char *why_not);

#endif

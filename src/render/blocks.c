/*
 * blocks.c — a malloc'd block's shape (see blocks.h).
 */
#include "render/blocks.h"

#include "base/unknown.h"
#include "render/json.h"
#include "sample/content.h"
#include "base/units.h"

#include <stdio.h>
#include <string.h>

static bool is_text(uint8_t c)
{
	return (c >= 0x20 && c <= 0x7e) || c == '\t' || c == '\n' || c == '\r';
}

static bool opens_json(const uint8_t *p, size_t n)
{
	size_t i = 0;

	if (!n || (p[0] != '{' && p[0] != '['))
		return false;
	for (i = 1; i < n && (p[i] == ' ' || p[i] == '\n' || p[i] == '\r' || p[i] == '\t'); i++)
		;
	if (i == n)
		return false;
	return p[i] == '"' || p[i] == '}' || p[i] == ']' || p[i] == '{' || p[i] == '[' ||
	       (p[0] == '[' && ((p[i] >= '0' && p[i] <= '9') || p[i] == '-'));
}

void vt_block_shape(const struct vt_region_block *b, struct vt_block_shape *out)
{
	enum vt_content_kind k;
	size_t run = 0;

	memset(out, 0, sizeof(*out));
	if (!b->head_len) {
		out->kind = "unread";
		return;
	}
	k = vt_content_head_kind(b->head, b->head_len);
	out->kind = vt_content_kind_name(k);
	if (k == VT_CONTENT_TEXT) {
		while (run < b->head_len && is_text(b->head[run]))
			run++;
		out->json = opens_json(b->head, run);
	} else if (k == VT_CONTENT_BINARY) {
		run = b->head_len < 16 ? b->head_len : 16;
	} else {
		return;
	}
	vt_content_redact(b->head, run, run, vt_content_hash(b->head, run), out->head, sizeof(out->head));
}

const char *vt_block_shape_text(const struct vt_block_shape *s, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s%s%s%s", s->kind, s->json ? ", JSON" : "", s->head[0] ? ": " : "", s->head);
	return buf;
}

static json_t *known(uint64_t v)
{
	return vt_known(v) ? json_integer((json_int_t)v) : json_null();
}

static json_t *block_json(const struct vt_region_block *b)
{
	struct vt_block_shape sh;
	char addr[24];

	vt_block_shape(b, &sh);
	snprintf(addr, sizeof(addr), "0x%llx", (unsigned long long)b->addr);
	return json_pack("{s:s, s:I, s:o, s:{s:s, s:b, s:o}}", "addr", addr, "size_bytes", (json_int_t)b->size,
			 "rss_bytes", known(b->resident), "shape", "kind", sh.kind, "json", sh.json,
			 "head", sh.head[0] ? json_string(sh.head) : json_null());
}

json_t *vt_blocks_json(const struct vt_region_list *list)
{
	json_t *maps = json_array(), *blocks;
	uint64_t count = 0, bytes = 0;
	char addr[2][24];
	size_t i, j;

	for (i = 0; i < list->n; i++) {
		const struct vt_region *g = &list->v[i];
		const struct vt_region_blocks *b = g->blocks;

		if (!b)
			continue;
		blocks = json_array();
		for (j = 0; j < b->n; j++)
			json_array_append_new(blocks, block_json(&b->v[j]));
		count += b->n;
		bytes += b->block_bytes;
		snprintf(addr[0], sizeof(addr[0]), "0x%llx", (unsigned long long)g->start);
		snprintf(addr[1], sizeof(addr[1]), "0x%llx", (unsigned long long)g->end);
		json_array_append_new(maps, json_pack("{s:s, s:s, s:I, s:o, s:I, s:I, s:I, s:i, s:I, s:I, s:I}", "start",
			addr[0], "end", addr[1], "size_bytes", (json_int_t)vt_region_size(g), "blocks", blocks,
			"other_bytes", (json_int_t)(b->other_bytes - vt_region_py_bytes(g)),
			"cpython_arena_bytes", (json_int_t)vt_region_py_bytes(g),
			"arena_heap_bytes", (json_int_t)b->excluded_bytes, "changed", (int)b->changed,
			"unread_bytes", (json_int_t)b->unread_bytes, "skipped_bytes", (json_int_t)b->skipped_bytes,
			"not_kept", (json_int_t)b->dropped));
	}
	return json_pack("{s:I, s:I, s:o}", "count", (json_int_t)count, "bytes", (json_int_t)bytes, "mappings", maps);
}

bool vt_blocks_match(uint64_t found, uint64_t found_bytes, uint64_t hblks, uint64_t hblkhd, uint64_t min_size,
		     char *buf, size_t cap)
{
	char a[32], b[32], m[32];

	vt_fmt_bytes(found_bytes, a, sizeof(a));
	vt_fmt_bytes(hblkhd, b, sizeof(b));
	vt_fmt_bytes(min_size, m, sizeof(m));
	if (!found && !hblks) {
		snprintf(buf, cap, "no malloc'd block, and mallinfo2 counts none (hblks 0)");
		return true;
	}
	if (found == hblks && found_bytes == hblkhd) {
		snprintf(buf, cap, "all %llu blocks found: %s, as mallinfo2 counts them (hblks %llu, hblkhd %s)",
			 (unsigned long long)found, a, (unsigned long long)hblks, b);
		return true;
	}
	if (found <= hblks)
		snprintf(buf, cap, "found %llu blocks, %s; mallinfo2 counts %llu, %s: the rest may be blocks "
			 "under %s (a lower mmap threshold), a posix_memalign block whose header is off its page "
			 "start, or blocks malloc'd or freed between mallinfo2 and the walk",
			 (unsigned long long)found, a, (unsigned long long)hblks, b, m);
	else
		snprintf(buf, cap, "found %llu blocks, %s; mallinfo2 counts %llu, %s: %llu more than it counts, "
			 "malloc'd between mallinfo2 and the walk, or memory that reads as a block header",
			 (unsigned long long)found, a, (unsigned long long)hblks, b,
			 (unsigned long long)(found - hblks));
	return false;
}

void vt_py_totals(const struct vt_region_list *list, struct vt_py_totals *out)
{
	size_t i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < list->n; i++) {
		const struct vt_region_pyarenas *p = list->v[i].py;

		if (!p)
			continue;
		out->mappings++;
		out->arenas += p->arenas;
		out->arena_bytes += p->arenas * p->arena_size;
		out->pools += p->pools;
		out->used_pools += p->used_pools;
		out->used_bytes += p->used_bytes;
		out->refused_pools += p->refused_pools;
		out->unread_bytes += p->unread_bytes;
		out->pool_size = p->pool_size;
		out->arena_size = p->arena_size;
	}
}

uint64_t vt_region_py_bytes(const struct vt_region *r)
{
	uint64_t b;

	if (!r->py)
		return 0;
	b = r->py->arenas * r->py->arena_size;
	if (r->blocks && b > r->blocks->other_bytes)
		b = r->blocks->other_bytes;
	if (b > vt_region_size(r))
		b = vt_region_size(r);
	return b;
}

json_t *vt_cpython_json(const struct vt_cpython *py, const struct vt_region_list *list, const char *why_not)
{
	struct vt_py_totals t;
	char version[16];

	if (!py->is_python)
		return json_null();
	vt_py_totals(list, &t);
	snprintf(version, sizeof(version), "%d.%d", py->major, py->minor);
	return json_pack("{s:o, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o}",
			 "version", py->major ? json_string(version) : json_null(), "evidence", py->evidence,
			 "arenas", (json_int_t)t.arenas, "arena_bytes", (json_int_t)t.arena_bytes,
			 "arena_size_bytes", (json_int_t)t.arena_size, "pool_size_bytes", (json_int_t)t.pool_size,
			 "pools", (json_int_t)t.pools, "used_pools", (json_int_t)t.used_pools,
			 "used_bytes", (json_int_t)t.used_bytes, "refused_pools", (json_int_t)t.refused_pools,
			 "mappings", (json_int_t)t.mappings, "not_counted", why_not ? json_string(why_not) : json_null());
}

void vt_render_cpython_text(FILE *out, pid_t pid, const struct vt_cpython *py, const struct vt_region_list *list,
			    const char *why_not)
{
	char bufs[3][32], version[16] = "";
	struct vt_py_totals t;
	size_t i;

	if (!py->is_python)
		return;
	if (py->major)
		snprintf(version, sizeof(version), " %d.%d", py->major, py->minor);
	fprintf(out, "CPYTHON%s · pid %d · %s\n", version, (int)pid, py->evidence);
	if (why_not && why_not[0]) {
		fprintf(out, "  its object arenas (not malloc's: CPython's allocator, mmapped by itself) not counted: %s\n\n",
			why_not);
		return;
	}
	vt_py_totals(list, &t);
	vt_fmt_bytes(t.arena_bytes, bufs[0], sizeof(bufs[0]));
	vt_fmt_bytes(t.used_bytes, bufs[1], sizeof(bufs[1]));
	vt_fmt_bytes(t.pool_size, bufs[2], sizeof(bufs[2]));
	fprintf(out, "  CPython object arenas: %llu arenas, %s, %s in use by objects (used blocks x size class) "
		"in %llu of %llu pools of %s\n", (unsigned long long)t.arenas, bufs[0], bufs[1],
		(unsigned long long)t.used_pools, (unsigned long long)t.pools, bufs[2]);
	fprintf(out, "  not malloc's: CPython's allocator maps them itself, so mallinfo2 and census do not count them\n");
	if (t.refused_pools)
		fprintf(out, "  %llu pool headers left out: their arena index disagrees with the others'\n",
			(unsigned long long)t.refused_pools);
	fprintf(out, "  in %zu mapping%s:", t.mappings, t.mappings == 1 ? "" : "s");
	for (i = 0; i < list->n; i++)
		if (list->v[i].py)
			fprintf(out, " %012llx (%llu)", (unsigned long long)list->v[i].start,
				(unsigned long long)list->v[i].py->arenas);
	fprintf(out, "\n\n");
}

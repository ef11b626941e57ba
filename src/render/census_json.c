/*
 * census_json.c — `vitals census --json` (schema vitals.census, docs/json.md).
 */
#include "render/census.h"
#include "render/arena_threads.h"
#include "render/json.h"

#include <inttypes.h>

static json_t *kinds(const uint64_t *v)
{
	json_t *o = json_object();
	int k;

	for (k = 0; k < VT_CHUNK_KINDS; k++)
		if (k != VT_CHUNK_MMAPPED)
			json_object_set_new(o, vt_chunk_kind_name((enum vt_chunk_kind)k), json_integer((json_int_t)v[k]));
	return o;
}

static json_t *arena(const struct vt_arena_walk *a, json_t *threads)
{
	char addr[32];

	snprintf(addr, sizeof(addr), "0x%" PRIx64, a->addr);
	return json_pack("{s:s, s:b, s:o, s:i, s:I, s:I, s:o, s:o, s:I, s:I, s:I, s:I, s:i}", "addr", addr, "main",
			 a->main, "threads", threads, "heaps", (int)a->heaps, "system_mem", (json_int_t)a->system_mem, "top_bytes",
			 (json_int_t)a->top_size, "chunks", kinds(a->chunks), "bytes", kinds(a->bytes),
			 "free_resident_bytes", (json_int_t)a->free_resident, "trimmable_bytes", (json_int_t)a->trimmable,
			 "walked_bytes", (json_int_t)a->walked, "skipped_bytes", (json_int_t)a->skipped, "rereads",
			 (int)a->rereads);
}

static json_t *side(const struct vt_census *c, const struct vt_census_side *s, bool reveal)
{
	const struct vt_content_totals *t = &s->totals;
	json_t *needles = json_array(), *strs = json_array(), *shapes = json_array(), *hist = json_array();
	json_t *frags = json_array(), *o;
	char shown[VT_CENSUS_SHOWN_MAX], hash[24];
	size_t i;
	int k;

	for (i = 0; i < c->nneedles; i++)
		json_array_append_new(needles, json_pack("{s:o, s:I, s:f}", "needle", vt_json_text(c->needles[i]), "hits",
							 (json_int_t)t->needle_hits[i], "per_mb",
							 t->bytes ? t->needle_hits[i] / (t->bytes / 1048576.0) : 0.0));
	for (i = 0; i < s->nstrings; i++) {
		const struct vt_content_string *x = &s->strings[i];

		snprintf(hash, sizeof(hash), "%016" PRIx64, x->hash);
		json_array_append_new(strs, json_pack("{s:I, s:I, s:I, s:I, s:s, s:o}", "count", (json_int_t)x->count,
						      "count_err", (json_int_t)x->count_err, "len", (json_int_t)x->len,
						      "bytes", (json_int_t)x->bytes, "hash", hash, "shown",
						      vt_json_text(vt_render_census_string(x, reveal, shown, sizeof(shown)))));
	}
	for (i = 0; i < s->nfragments; i++) {
		const struct vt_fragment *x = &s->fragments[i].f;
		char fshown[VT_CENSUS_FRAGMENT_SHOWN_MAX];

		snprintf(hash, sizeof(hash), "%016" PRIx64, x->hash);
		json_array_append_new(frags, json_pack("{s:I, s:I, s:I, s:s, s:o, s:b, s:b, s:o}", "count",
						       (json_int_t)x->count, "count_err", (json_int_t)x->count_err, "len",
						       (json_int_t)x->len, "hash", hash, "shown",
						       vt_json_text(vt_render_census_fragment(x, reveal, fshown, sizeof(fshown))),
						       "open_left", x->open_left, "open_right", x->open_right, "inside_string",
						       s->fragments[i].string >= 0 ? json_integer(s->fragments[i].string)
										   : json_null()));
	}
	for (i = 0; i < s->nshapes; i++) {
		const struct vt_content_shape *x = &s->shapes[i];

		json_array_append_new(shapes, json_pack("{s:I, s:s, s:I, s:I, s:I}", "chunk_size",
							(json_int_t)x->chunk_size, "head", vt_content_kind_name(x->kind),
							"chunks", (json_int_t)x->chunks, "bytes", (json_int_t)x->bytes,
							"bytes_err", (json_int_t)x->bytes_err));
	}
	for (k = 0; k < VT_CONTENT_SIZE_BUCKETS; k++)
		if (t->size_chunks[k])
			json_array_append_new(hist, json_pack("{s:I, s:I, s:I}", "size_from",
							      (json_int_t)(k ? 1ull << k : 0), "chunks",
							      (json_int_t)t->size_chunks[k], "bytes",
							      (json_int_t)t->size_bytes[k]));
	o = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o, s:o, s:o}", "chunks",
		      (json_int_t)t->chunks, "bytes", (json_int_t)t->bytes, "zero_bytes", (json_int_t)t->zero_bytes,
		      "text_bytes", (json_int_t)t->text_bytes, "string_count", (json_int_t)t->string_count,
		      "string_bytes", (json_int_t)t->string_bytes, "base64_bytes", (json_int_t)t->base64_bytes,
		      "hex_bytes", (json_int_t)t->hex_bytes, "needles", needles, "top_strings", strs, "top_shapes",
		      shapes, "size_histogram", hist);
	if (o && c->fragments) {
		json_object_set_new(o, "fragment_pieces", json_integer((json_int_t)t->fragment_pieces));
		json_object_set_new(o, "top_fragments", frags);
	} else {
		json_decref(frags);
	}
	return o;
}

int vt_render_census_json(FILE *out, const struct vt_census_report *r)
{
	const struct vt_census *c = r->census;
	const struct vt_mallinfo *mi = &c->mi;
	json_t *root = vt_json_envelope(VT_SCHEMA_CENSUS), *arenas = json_array(), *head;
	uint64_t resident = 0, trim = 0, skipped = 0;
	unsigned rereads = 0;
	char addr[32];
	size_t i;
	bool failed = !root || !arenas;

	for (i = 0; !failed && i < c->walk.narenas; i++) {
		const struct vt_arena_walk *a = &c->walk.arenas[i];

		resident += a->free_resident;
		trim += a->trimmable;
		skipped += a->skipped;
		rereads += a->rereads;
		failed |= json_array_append_new(arenas, arena(a, vt_json_arena_threads_of(&c->threads, i))) != 0;
	}
	if (failed) {
		json_decref(arenas);
		return vt_json_write(out, root, false, true);
	}
	snprintf(addr, sizeof(addr), "0x%" PRIx64, c->main_arena);
	head = json_pack("{s:i, s:o, s:s, s:s, s:s, s:s, s:b, s:f, s:i, s:f, s:I, s:b}",
			"pid", (int)c->pid, "comm", vt_json_text(c->comm), "allocator", vt_alloc_kind_name(c->alloc.kind),
			"glibc_version", c->alloc.version, "main_arena", addr, "main_arena_how", c->main_arena_how,
			"consistent", c->consistent, "stopped_ms", c->stopped_ms, "threads_stopped",
			(int)c->threads_stopped, "took_s", c->took_s, "read_bytes", (json_int_t)c->walk.read_bytes,
			"redacted", !r->reveal);
	failed |= !head || json_object_update(root, head) != 0;
	json_decref(head);
	failed |= json_object_set_new(root, "arenas", arenas) != 0;
	failed |= json_object_set_new(root, "arena_threads", vt_json_arena_threads(&c->threads)) != 0;
	failed |= json_object_set_new(root, "mmapped",
				      json_pack("{s:I, s:I, s:I}", "chunks", (json_int_t)c->walk.mmapped_chunks, "bytes",
						(json_int_t)c->walk.mmapped_bytes, "resident_bytes",
						(json_int_t)c->walk.mmapped_resident)) != 0;
	failed |= json_object_set_new(root, "totals",
				      json_pack("{s:I, s:I, s:I, s:I, s:I, s:i, s:b, s:i}", "live_bytes",
						(json_int_t)vt_census_live_bytes(c), "free_bytes",
						(json_int_t)vt_census_free_bytes(c), "free_resident_bytes",
						(json_int_t)resident, "trimmable_bytes", (json_int_t)trim, "skipped_bytes",
						(json_int_t)skipped, "rereads", (int)rereads, "tcache_key_known",
						c->walk.tcache_key_known, "fast_links_cut", (int)c->walk.fast_bad)) != 0;
	failed |= json_object_set_new(root, "mallinfo2",
				      json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "arena",
						(json_int_t)mi->arena, "ordblks", (json_int_t)mi->ordblks, "smblks",
						(json_int_t)mi->smblks, "hblks", (json_int_t)mi->hblks, "hblkhd",
						(json_int_t)mi->hblkhd, "usmblks", (json_int_t)mi->usmblks, "fsmblks",
						(json_int_t)mi->fsmblks, "uordblks", (json_int_t)mi->uordblks, "fordblks",
						(json_int_t)mi->fordblks, "keepcost", (json_int_t)mi->keepcost)) != 0;
	failed |= json_object_set_new(root, "fragments",
				      c->fragments
					      ? json_pack("{s:s, s:i, s:i, s:i, s:i, s:f, s:I}", "unit", "chunks",
							  "piece_bytes", VT_FRAGMENT_K, "window", VT_FRAGMENT_WINDOW,
							  "always_found_from", VT_FRAGMENT_SURE, "longest", VT_FRAGMENT_MAX,
							  "hold", VT_FRAGMENT_HOLD, "memory_bytes",
							  (json_int_t)(c->live.totals.fragment_memory +
								       c->freed.totals.fragment_memory))
					      : json_null()) != 0;
	failed |= json_object_set_new(root, "content",
				      json_pack("{s:o, s:o}", "live", side(c, &c->live, r->reveal), "free",
						side(c, &c->freed, r->reveal))) != 0;
	return vt_json_write(out, root, false, failed);
}

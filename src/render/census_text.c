/*
 * census_text.c — `vitals census` for people: where the heap's bytes are
 * (live or free, per arena), what malloc_trim could give back, and what
 * the live and the free chunks hold.
 */
#include "render/census.h"
#include "render/arena_threads.h"
#include "render/table.h"

#include <inttypes.h>
#include <string.h>

#define MB (1024.0 * 1024.0)

static const char *sz(uint64_t b, char *buf, size_t cap)
{
	return vt_fmt_bytes(b, buf, cap);
}

static void arena_row(struct vt_table *t, const char *name, const char *threads, const struct vt_arena_walk *a)
{
	char b[6][32];

	vt_table_cell(t, "%s", name);
	vt_table_cell(t, "%s", threads);
	vt_table_cell(t, "%u", a->heaps);
	vt_table_cell(t, "%" PRIu64, a->chunks[VT_CHUNK_LIVE]);
	vt_table_cell(t, "%s", sz(a->bytes[VT_CHUNK_LIVE], b[0], sizeof(b[0])));
	vt_table_cell(t, "%s", sz(a->bytes[VT_CHUNK_BIN], b[1], sizeof(b[1])));
	vt_table_cell(t, "%s", sz(a->bytes[VT_CHUNK_FAST], b[2], sizeof(b[2])));
	vt_table_cell(t, "%s", sz(a->bytes[VT_CHUNK_TCACHE], b[3], sizeof(b[3])));
	vt_table_cell(t, "%s", sz(a->top_size, b[4], sizeof(b[4])));
	vt_table_cell(t, "%s", sz(a->free_resident, b[5], sizeof(b[5])));
	vt_table_cell(t, "%s", sz(a->trimmable, b[0], sizeof(b[0])));
	vt_table_cell(t, "%s", a->skipped ? sz(a->skipped, b[1], sizeof(b[1])) : "-");
}

static void arenas(FILE *out, const struct vt_census *c)
{
	struct vt_arena_walk sum = { 0 };
	struct vt_table t;
	char name[40], b[32], count[32], note[VT_ARENA_THREADS_LINE_MAX];
	size_t i, k;

	vt_table_init(&t, 12);
	for (k = 1; k < 12; k++)
		vt_table_align(&t, (int)k, VT_RIGHT);
	vt_table_cell(&t, "arena");
	vt_table_cell(&t, "threads");
	vt_table_cell(&t, "heaps");
	vt_table_cell(&t, "live chunks");
	vt_table_cell(&t, "live");
	vt_table_cell(&t, "bins");
	vt_table_cell(&t, "fast");
	vt_table_cell(&t, "tcache");
	vt_table_cell(&t, "top");
	vt_table_cell(&t, "free resident");
	vt_table_cell(&t, "trimmable");
	vt_table_cell(&t, "skipped");
	for (i = 0; i < c->walk.narenas; i++) {
		const struct vt_arena_walk *a = &c->walk.arenas[i];

		snprintf(name, sizeof(name), "%s0x%" PRIx64, a->main ? "main " : "", a->addr);
		arena_row(&t, name, vt_render_arena_threads_count(&c->threads, i, count, sizeof(count)), a);
		sum.heaps += a->heaps;
		for (k = 0; k < VT_CHUNK_KINDS; k++) {
			sum.chunks[k] += a->chunks[k];
			sum.bytes[k] += a->bytes[k];
		}
		sum.top_size += a->top_size;
		sum.free_resident += a->free_resident;
		sum.trimmable += a->trimmable;
		sum.skipped += a->skipped;
	}
	vt_table_cell(&t, "mmapped chunks");
	vt_table_cell(&t, "-");
	vt_table_cell(&t, "-");
	vt_table_cell(&t, "%" PRIu64, c->walk.mmapped_chunks);
	vt_table_cell(&t, "%s", sz(c->walk.mmapped_bytes, b, sizeof(b)));
	for (k = 0; k < 7; k++)
		vt_table_cell(&t, "-");
	sum.chunks[VT_CHUNK_LIVE] += c->walk.mmapped_chunks;
	sum.bytes[VT_CHUNK_LIVE] += c->walk.mmapped_bytes;
	arena_row(&t, "total", vt_render_arena_threads_total(&c->threads, count, sizeof(count)), &sum);
	vt_table_print(&t, out, 2, true);
	vt_table_release(&t);
	if (vt_render_arena_threads_note(&c->threads, note, sizeof(note))[0])
		fprintf(out, "  %s\n", note);
}

/* share of whole as "12.3%", "-" when whole is 0 */
static const char *pct(uint64_t part, uint64_t whole, char *buf, size_t cap)
{
	if (!whole)
		return "-";
	return vt_fmt_pct(part, whole, buf, cap);
}

static void content_row(struct vt_table *t, const char *what, uint64_t live, uint64_t live_of, uint64_t freed,
			uint64_t freed_of)
{
	char b[2][32];

	vt_table_cell(t, "%s", what);
	vt_table_cell(t, "%s", pct(live, live_of, b[0], sizeof(b[0])));
	vt_table_cell(t, "%s", pct(freed, freed_of, b[1], sizeof(b[1])));
}

static void content(FILE *out, const struct vt_census *c)
{
	const struct vt_content_totals *l = &c->live.totals, *f = &c->freed.totals;
	struct vt_table t;
	char b[2][32];
	size_t i;

	vt_table_init(&t, 3);
	vt_table_align(&t, 1, VT_RIGHT);
	vt_table_align(&t, 2, VT_RIGHT);
	vt_table_cell(&t, "content (resident bytes read)");
	vt_table_cell(&t, "live chunks");
	vt_table_cell(&t, "free chunks");
	vt_table_cell(&t, "bytes");
	vt_table_cell(&t, "%s", sz(l->bytes, b[0], sizeof(b[0])));
	vt_table_cell(&t, "%s", sz(f->bytes, b[1], sizeof(b[1])));
	content_row(&t, "zero bytes", l->zero_bytes, l->bytes, f->zero_bytes, f->bytes);
	content_row(&t, "text bytes", l->text_bytes, l->bytes, f->text_bytes, f->bytes);
	content_row(&t, "in strings (>= 8 chars)", l->string_bytes, l->bytes, f->string_bytes, f->bytes);
	content_row(&t, "base64 blobs", l->base64_bytes, l->bytes, f->base64_bytes, f->bytes);
	content_row(&t, "hex blobs", l->hex_bytes, l->bytes, f->hex_bytes, f->bytes);
	for (i = 0; i < c->nneedles; i++) {
		char what[VT_CONTENT_NEEDLE_LEN_MAX + 32], safe[VT_CONTENT_NEEDLE_LEN_MAX + 1];

		snprintf(safe, sizeof(safe), "%s", c->needles[i]);
		vt_text_sanitize(safe);
		snprintf(what, sizeof(what), "needle \"%s\"", safe);
		vt_table_cell(&t, "%s", what);
		vt_table_cell(&t, "%" PRIu64 " (%.1f/MB)", l->needle_hits[i], l->bytes ? l->needle_hits[i] / (l->bytes / MB) : 0);
		vt_table_cell(&t, "%" PRIu64 " (%.1f/MB)", f->needle_hits[i], f->bytes ? f->needle_hits[i] / (f->bytes / MB) : 0);
	}
	vt_table_print(&t, out, 2, true);
	vt_table_release(&t);
}

static void strings(FILE *out, const char *side, const struct vt_census_side *s, bool reveal)
{
	struct vt_table t;
	char shown[VT_CENSUS_SHOWN_MAX], b[2][32];
	size_t i;

	if (!s->nstrings)
		return;
	fprintf(out, "\nmost repeated strings in %s chunks%s:\n", side,
		reveal ? "" : " (shown as length, hash and first 4 characters; --reveal shows them)");
	vt_table_init(&t, 4);
	vt_table_align(&t, 0, VT_RIGHT);
	vt_table_align(&t, 1, VT_RIGHT);
	vt_table_align(&t, 2, VT_RIGHT);
	vt_table_cell(&t, "count");
	vt_table_cell(&t, "bytes");
	vt_table_cell(&t, "of %s", side);
	vt_table_cell(&t, "string");
	for (i = 0; i < s->nstrings; i++) {
		const struct vt_content_string *x = &s->strings[i];

		if (x->count_err)
			vt_table_cell(&t, "%" PRIu64 "-%" PRIu64, x->count - x->count_err, x->count);
		else
			vt_table_cell(&t, "%" PRIu64, x->count);
		vt_table_cell(&t, "%s", sz(x->bytes, b[0], sizeof(b[0])));
		vt_table_cell(&t, "%s", pct(x->bytes, s->totals.bytes, b[1], sizeof(b[1])));
		vt_table_cell(&t, "%s", vt_render_census_string(x, reveal, shown, sizeof(shown)));
	}
	vt_table_print(&t, out, 2, true);
	vt_table_release(&t);
}

static void fragments(FILE *out, const char *side, const struct vt_census_side *s, bool reveal)
{
	struct vt_table t;
	char shown[VT_CENSUS_FRAGMENT_SHOWN_MAX], b[32];
	size_t i, strings = 0, rows = 0;

	for (i = 0; i < s->nfragments; i++)
		strings += s->fragments[i].string >= 0;
	if (s->nfragments == strings) {
		if (strings)
			fprintf(out, "\nmost repeated fragments in %s chunks: none but inside the whole strings shown "
				"above\n", side);
		return;
	}
	fprintf(out, "\nmost repeated fragments in %s chunks (%d+ bytes that many chunks share, inside longer text or not; "
		"count: chunks holding it%s):\n", side, VT_FRAGMENT_K,
		reveal ? "" : "; shown as length, hash and first 4 characters, --reveal shows them");
	vt_table_init(&t, 3);
	vt_table_align(&t, 0, VT_RIGHT);
	vt_table_align(&t, 1, VT_RIGHT);
	vt_table_cell(&t, "chunks");
	vt_table_cell(&t, "of %s", side);
	vt_table_cell(&t, "fragment");
	for (i = 0; i < s->nfragments; i++) {
		const struct vt_fragment *x = &s->fragments[i].f;

		if (s->fragments[i].string >= 0)
			continue;
		rows++;
		if (x->count_err)
			vt_table_cell(&t, "%" PRIu64 "-%" PRIu64, x->count - x->count_err, x->count);
		else
			vt_table_cell(&t, "%" PRIu64, x->count);
		vt_table_cell(&t, "%s", pct(x->count, s->totals.chunks, b, sizeof(b)));
		vt_table_cell(&t, "%s%s", vt_render_census_fragment(x, reveal, shown, sizeof(shown)),
			      x->open_left || x->open_right ? " (its copies agree further: longer)" : "");
	}
	vt_table_print(&t, out, 2, true);
	vt_table_release(&t);
	if (strings)
		fprintf(out, "  (and %zu %s inside whole strings shown above, which occur as often or more)\n",
			strings, strings == 1 ? "fragment" : "fragments");
}

static void shapes(FILE *out, const char *side, const struct vt_census_side *s)
{
	struct vt_table t;
	char b[2][32];
	size_t i;

	if (!s->nshapes)
		return;
	fprintf(out, "\ntop allocation shapes in %s chunks (chunk size x what its first 16 bytes hold):\n", side);
	vt_table_init(&t, 4);
	vt_table_align(&t, 0, VT_RIGHT);
	vt_table_align(&t, 2, VT_RIGHT);
	vt_table_align(&t, 3, VT_RIGHT);
	vt_table_cell(&t, "chunk size");
	vt_table_cell(&t, "head");
	vt_table_cell(&t, "chunks");
	vt_table_cell(&t, "bytes");
	for (i = 0; i < s->nshapes; i++) {
		const struct vt_content_shape *x = &s->shapes[i];

		vt_table_cell(&t, "%s", sz(x->chunk_size, b[0], sizeof(b[0])));
		vt_table_cell(&t, "%s", vt_content_kind_name(x->kind));
		vt_table_cell(&t, "%" PRIu64, x->chunks);
		vt_table_cell(&t, "%s", sz(x->bytes, b[1], sizeof(b[1])));
	}
	vt_table_print(&t, out, 2, true);
	vt_table_release(&t);
}

static void sizes(FILE *out, const struct vt_census *c)
{
	const struct vt_content_totals *l = &c->live.totals, *f = &c->freed.totals;
	struct vt_table t;
	char b[4][32];
	int k;

	fprintf(out, "\nchunk sizes:\n");
	vt_table_init(&t, 5);
	for (k = 0; k < 5; k++)
		vt_table_align(&t, k, VT_RIGHT);
	vt_table_cell(&t, "size from");
	vt_table_cell(&t, "live chunks");
	vt_table_cell(&t, "live bytes");
	vt_table_cell(&t, "free chunks");
	vt_table_cell(&t, "free bytes");
	for (k = 0; k < VT_CONTENT_SIZE_BUCKETS; k++) {
		if (!l->size_chunks[k] && !f->size_chunks[k])
			continue;
		vt_table_cell(&t, "%s", sz(k ? 1ull << k : 0, b[0], sizeof(b[0])));
		vt_table_cell(&t, "%" PRIu64, l->size_chunks[k]);
		vt_table_cell(&t, "%s", sz(l->size_bytes[k], b[1], sizeof(b[1])));
		vt_table_cell(&t, "%" PRIu64, f->size_chunks[k]);
		vt_table_cell(&t, "%s", sz(f->size_bytes[k], b[2], sizeof(b[2])));
	}
	vt_table_print(&t, out, 2, true);
	vt_table_release(&t);
}

int vt_render_census_text(FILE *out, const struct vt_census_report *r)
{
	const struct vt_census *c = r->census;
	const struct vt_mallinfo *mi = &c->mi;
	uint64_t live = vt_census_live_bytes(c), freed = vt_census_free_bytes(c), resident = 0, trim = 0, skipped = 0;
	unsigned rereads = 0;
	char b[6][32], comm[128];
	size_t i;

	for (i = 0; i < c->walk.narenas; i++) {
		resident += c->walk.arenas[i].free_resident;
		trim += c->walk.arenas[i].trimmable;
		skipped += c->walk.arenas[i].skipped;
		rereads += c->walk.arenas[i].rereads;
	}
	fprintf(out, "census of %d (%s): glibc %s malloc, %zu arena%s; main_arena 0x%" PRIx64 " %s\n", (int)c->pid,
		vt_text_printable(c->comm, comm, sizeof(comm)), c->alloc.version[0] ? c->alloc.version : "?",
		c->walk.narenas, c->walk.narenas == 1 ? "" : "s", c->main_arena, c->main_arena_how);
	fprintf(out, "read %s of its memory in %.2f s (%s/s); %s\n", sz(c->walk.read_bytes, b[0], sizeof(b[0])),
		c->took_s, sz(c->took_s > 0 ? (uint64_t)(c->walk.read_bytes / c->took_s) : 0, b[1], sizeof(b[1])),
		c->consistent ? "" : "the process ran on: nothing was stopped");
	if (c->consistent)
		fprintf(out, "  (--consistent: its %u threads stood stopped for %.1f ms)\n", c->threads_stopped,
			c->stopped_ms);
	fprintf(out, "\n%s live in chunks, %s free in chunks (%s of it on resident pages); malloc_trim(0) could "
		"give back about %s of resident pages\n",
		sz(live, b[0], sizeof(b[0])), sz(freed, b[1], sizeof(b[1])), sz(resident, b[2], sizeof(b[2])),
		sz(trim, b[3], sizeof(b[3])));
	fprintf(out, "  tcache entries: %s; fast-bin links cut: %u; headers re-read: %u; bytes skipped: %s\n\n",
		c->walk.tcache_key_known ? "recognised by the tcache key" : "key not learned: counted as live",
		c->walk.fast_bad, rereads, sz(skipped, b[4], sizeof(b[4])));
	arenas(out, c);
	fprintf(out, "\nmallinfo2 as the walk adds it up: arena %" PRIu64 " ordblks %" PRIu64 " smblks %" PRIu64
		" hblks %" PRIu64 " hblkhd %" PRIu64 " usmblks %" PRIu64 " fsmblks %" PRIu64 " uordblks %" PRIu64
		" fordblks %" PRIu64 " keepcost %" PRIu64 "\n  (fordblks leaves out the tcache: malloc counts its "
		"chunks as in use)\n\n",
		mi->arena, mi->ordblks, mi->smblks, mi->hblks, mi->hblkhd, mi->usmblks, mi->fsmblks, mi->uordblks,
		mi->fordblks, mi->keepcost);
	content(out, c);
	strings(out, "live", &c->live, r->reveal);
	strings(out, "free", &c->freed, r->reveal);
	fragments(out, "live", &c->live, r->reveal);
	fragments(out, "free", &c->freed, r->reveal);
	shapes(out, "live", &c->live);
	sizes(out, c);
	return ferror(out) ? -1 : 0;
}

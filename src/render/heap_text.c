/*
 * heap_text.c — `vitals heap` as text: the allocator's own figures, the
 * arenas side by side, what a trim could return, and the verdict with its
 * evidence.
 */
#include "render/heap.h"
#include "render/arena_threads.h"
#include "render/blocks.h"
#include "render/table.h"

#include "render/soak.h"

#include <ctype.h>
#include <math.h>
#include <time.h>

/* One buffer per call site: never two B() with the same slot in one statement. */
#define B(v) vt_fmt_bytes((v), bufs[(slot++) % 8], 32)
#define BN(v, n) vt_fmt_bytes((v), bufs[n], 32)

static void print_header(FILE *out, const struct vt_heap_sample *h)
{
	char when[64], comm[sizeof(h->comm)], detail[sizeof(h->method_detail)];
	time_t t = (time_t)h->taken_at;

	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", gmtime(&t));
	vt_text_printable(h->method_detail, detail, sizeof(detail));
	fprintf(out, "vitals heap · %s · pid %d (%s) · %s%s%s\n", when, (int)h->pid,
		vt_text_printable(h->comm, comm, sizeof(comm)),
		vt_alloc_kind_name(h->alloc.kind), h->alloc.version[0] ? " " : "", h->alloc.version);
	if (h->method == VT_HEAP_PTRACE)
		fprintf(out, "read with ptrace from %s: that thread was stopped %.0f µs (%d calls "
			"ran %.0f µs of it), no other thread was stopped; %.1f ms end to end\n\n",
			detail, h->stopped_us, h->calls, h->callee_us, h->total_ms);
	else
		fprintf(out, "read from the in-process agent at %s; %.1f ms end to end\n\n", detail, h->total_ms);
}

static void print_mallinfo(FILE *out, const struct vt_mallinfo *mi)
{
	char bufs[8][32];
	unsigned slot = 0;
	struct vt_table t;

	vt_table_init(&t, 4);
	vt_table_align(&t, 2, VT_RIGHT);
	vt_table_cell(&t, mi->wide ? "MALLINFO2" : "MALLINFO (32-bit)");
	vt_table_cell(&t, "%s", "");
	vt_table_cell(&t, "value");
	vt_table_cell(&t, "meaning");
#define ROW(field, name, value, meaning)                              \
	do {                                                          \
		vt_table_cell(&t, field);                             \
		vt_table_cell(&t, name);                              \
		vt_table_cell(&t, "%s", value);                       \
		vt_table_cell(&t, meaning);                           \
	} while (0)
	ROW("uordblks", "live in arenas", B(mi->uordblks), "bytes in chunks the program holds, in the arenas");
	ROW("hblkhd", "live mmapped", B(mi->hblkhd), "bytes in mmapped chunks (big allocations): all in use");
	ROW("fordblks", "free-held", B(mi->fordblks), "free chunks malloc keeps (incl. the tops)");
	ROW("arena", "from system", B(mi->arena), "heap memory from the system, all arenas");
	ROW("keepcost", "top pad", B(mi->keepcost), "top chunk of the main arena");
	vt_table_cell(&t, "ordblks");
	vt_table_cell(&t, "free chunks");
	vt_table_cell(&t, "%llu", (unsigned long long)mi->ordblks);
	vt_table_cell(&t, "free chunks outside fast bins: scattered free memory");
	vt_table_cell(&t, "smblks");
	vt_table_cell(&t, "fast chunks");
	vt_table_cell(&t, "%llu (%s)", (unsigned long long)mi->smblks, B(mi->fsmblks));
	vt_table_cell(&t, "free fast-bin chunks and their bytes (fsmblks)");
	vt_table_cell(&t, "hblks");
	vt_table_cell(&t, "mmapped chunks");
	vt_table_cell(&t, "%llu", (unsigned long long)mi->hblks);
	vt_table_cell(&t, "%s", "");
	vt_table_cell(&t, "live_fraction");
	vt_table_cell(&t, "%s", "");
	vt_table_cell(&t, "%.3f", vt_mallinfo_live_fraction(mi));
	vt_table_cell(&t, "(uordblks + hblkhd) / (arena + hblkhd)");
#undef ROW
	vt_table_print(&t, out, 0, true);
	vt_table_release(&t);
	fputc('\n', out);
}

static void print_arenas(FILE *out, const struct vt_heap_sample *h, uint64_t page)
{
	const struct vt_arena_threads *th = &h->threads;
	bool threads = th->known || th->why[0];     /* the THREADS columns were asked for */
	int ncols = threads ? 9 : 7;
	char bufs[8][32], count[32], names[VT_ARENA_THREADS_LINE_MAX], note[VT_ARENA_THREADS_LINE_MAX];
	unsigned slot = 0;
	struct vt_table t;
	size_t i;

	vt_table_init(&t, ncols);
	for (i = 1; i < (size_t)ncols - (threads ? 1 : 0); i++)     /* the names are text */
		vt_table_align(&t, (int)i, VT_RIGHT);
	vt_table_cell(&t, "ARENA");
	if (threads)
		vt_table_cell(&t, "THREADS");
	vt_table_cell(&t, "SYSTEM");
	vt_table_cell(&t, "IN USE");
	vt_table_cell(&t, "FREE");
	vt_table_cell(&t, "FREE CHUNKS");
	vt_table_cell(&t, "TRIM COULD RETURN");
	vt_table_cell(&t, "HEAPS");
	if (threads)
		vt_table_cell(&t, "USED BY");
	for (i = 0; i < h->info.n_arenas; i++) {
		const struct vt_mi_arena *a = &h->info.arenas[i];
		uint64_t free_b = vt_mi_free_bytes(&a->t);
		struct vt_trim_estimate e;
		vt_malloc_info_trim_estimate(a, page, &e);
		vt_table_cell(&t, a->nr ? "%d" : "%d (main)", a->nr);
		if (threads)
			vt_table_cell(&t, "%s", vt_render_arena_threads_count(th, i, count, sizeof(count)));
		vt_table_cell(&t, "%s", B(a->t.system_current));
		vt_table_cell(&t, "%s", B(a->t.system_current > free_b ? a->t.system_current - free_b : 0));
		vt_table_cell(&t, "%s", B(free_b));
		vt_table_cell(&t, "%llu", (unsigned long long)(a->t.fast_count + a->t.rest_count));
		vt_table_cell(&t, "%s–%s", BN(e.low_bytes, 6), BN(e.high_bytes, 7));
		vt_table_cell(&t, a->nr ? "%llu" : "brk", (unsigned long long)a->t.subheaps);
		if (threads)
			vt_table_cell(&t, "%s", vt_render_arena_threads_names(th, i, names, sizeof(names)));
	}
	vt_table_cell(&t, "total");
	if (threads)
		vt_table_cell(&t, "%s", vt_render_arena_threads_total(th, count, sizeof(count)));
	vt_table_cell(&t, "%s", B(h->info.total.system_current));
	vt_table_cell(&t, "%s", "");
	vt_table_cell(&t, "%s", B(vt_mi_free_bytes(&h->info.total)));
	vt_table_cell(&t, "%llu", (unsigned long long)(h->info.total.fast_count + h->info.total.rest_count));
	vt_table_cell(&t, "%s", "");
	vt_table_cell(&t, "%s", "");
	if (threads)
		vt_table_cell(&t, "%s", "");
	fprintf(out, "ARENAS (malloc_info)  +  %llu mmapped chunks, %s\n",
		(unsigned long long)h->info.total.mmap_count, BN(h->info.total.mmap_bytes, 7));
	vt_table_print(&t, out, 0, true);
	vt_table_release(&t);
	if (threads)
		fprintf(out, "  %s\n", vt_render_arena_threads_note(th, note, sizeof(note)));
	fprintf(out, "  in use = system - free (includes malloc's own chunk headers); trim estimate: "
		"whole pages inside free chunks\n  plus the main arena's top (malloc_trim leaves a thread "
		"arena's top), as address space: pages an earlier\n  trim released are counted but no "
		"longer resident\n\n");
}

/* Another allocator: its own figures under its name, as it names them. */
static void print_other(FILE *out, const struct vt_heap_sample *h)
{
	const struct vt_alloc_stats *st = &h->stats;
	char name[32], version[sizeof(st->version)], value[32];
	size_t i;
	int f;

	snprintf(name, sizeof(name), "%s", vt_alloc_kind_name(h->alloc.kind));
	for (i = 0; name[i]; i++)
		name[i] = (char)toupper((unsigned char)name[i]);
	fprintf(out, "%s%s%s\n ", name, st->version[0] ? " " : "",
		vt_text_printable(st->version, version, sizeof(version)));
	for (f = 0; f < st->n_fig; f++) {
		if (st->fig[f].bytes)
			vt_fmt_bytes(st->fig[f].value, value, sizeof(value));
		else
			snprintf(value, sizeof(value), "%llu", (unsigned long long)st->fig[f].value);
		fprintf(out, "%s%s %s", f ? "   " : " ", st->fig[f].label, value);
	}
	if (st->narenas)
		fprintf(out, "   arenas %llu", (unsigned long long)st->narenas);
	fprintf(out, "\n\n");
}

/* The malloc'd blocks found in its mappings, held against hblks and hblkhd. */
static void print_blocks(FILE *out, const struct vt_heap_sample *h)
{
	char bufs[8][32], words[512], shape[160], mapping[32];
	unsigned slot = 0;
	struct vt_table t;
	size_t i, j;

	if (!h->blocks_walked) {
		if (h->blocks_why[0])
			fprintf(out, "MALLOC'D BLOCKS  not looked for: %s\n\n", h->blocks_why);
		return;
	}
	vt_blocks_match(h->blocks_count, h->blocks_bytes, h->mi.hblks, h->mi.hblkhd, h->blocks_min, words,
			sizeof(words));
	fprintf(out, "MALLOC'D BLOCKS  mmapped chunks found header by header in its mappings, after mallinfo2\n"
		"  %s\n", words);
	if (!h->blocks_count) {
		fputc('\n', out);
		return;
	}
	vt_table_init(&t, 5);
	vt_table_align(&t, 1, VT_RIGHT);
	vt_table_align(&t, 2, VT_RIGHT);
	vt_table_cell(&t, "BLOCK");
	vt_table_cell(&t, "SIZE");
	vt_table_cell(&t, "RSS");
	vt_table_cell(&t, "IN MAPPING");
	vt_table_cell(&t, "FIRST BYTES (census shape, redacted)");
	for (i = 0; i < h->maps.n; i++) {
		const struct vt_region *g = &h->maps.v[i];

		for (j = 0; g->blocks && j < g->blocks->n; j++) {
			const struct vt_region_block *k = &g->blocks->v[j];
			struct vt_block_shape sh;

			vt_block_shape(k, &sh);
			vt_table_cell(&t, "%012llx", (unsigned long long)k->addr);
			vt_table_cell(&t, "malloc'd block, %s", B(k->size));
			vt_table_cell(&t, "%s", B(k->resident));
			vt_fmt_bytes(vt_region_size(g), mapping, sizeof(mapping));
			vt_table_cell(&t, "%012llx (%s, %s other)", (unsigned long long)g->start, mapping,
				      B(g->blocks->other_bytes));
			vt_table_cell(&t, "%s", vt_block_shape_text(&sh, shape, sizeof(shape)));
		}
	}
	vt_table_print(&t, out, 2, true);
	vt_table_release(&t);
	fputc('\n', out);
}

static void print_trim(FILE *out, const struct vt_heap_trim *tr)
{
	char bufs[8][32];

	fprintf(out, "TRIM  malloc_trim(0) returned %d in %.1f ms (measured, /proc status before and after)\n",
		tr->returned, tr->took_ms);
	fprintf(out, "  RssAnon    %s -> %s\n", BN(tr->rss_anon_before, 0), BN(tr->rss_anon_after, 1));
	fprintf(out, "  committed  %s -> %s\n", BN(tr->committed_before, 0),
		BN(tr->committed_after, 1));
	fprintf(out, "  fordblks   %s -> %s   (free-held: trim releases pages, the chunks stay free)\n",
		BN(tr->before.fordblks, 0), BN(tr->after.fordblks, 1));
	fprintf(out, "  uordblks   %s -> %s\n\n", BN(tr->before.uordblks, 0),
		BN(tr->after.uordblks, 1));
}

/* The refill after the trim: the curve as a sparkline, its evidence, its verdict. */
static void print_refill(FILE *out, const struct vt_heap_sample *h, const struct vt_heap_refill *r)
{
	const struct vt_trim_follow *f = r->follow;
	char line[VT_HEAP_LINE_MAX], spark[64 * 3 + 1], lo[32], hi[32], every[32], span[32];
	double min = INFINITY, max = -INFINITY;
	size_t i, width = f->n < 60 ? f->n : 60;
	int e;

	for (i = 0; i < f->n; i++)
		if (isfinite(f->committed[i])) {
			min = fmin(min, f->committed[i]);
			max = fmax(max, f->committed[i]);
		}
	fprintf(out, "REFILL  committed (RssAnon + VmSwap) every %s for %s after the trim: %zu points "
		"(reading them took %.1f ms of vitals' time, nothing of the target's)\n",
		vt_fmt_span(f->every_s, every, sizeof(every)),
		vt_fmt_span(f->n ? f->t_s[f->n - 1] : 0, span, sizeof(span)), f->n, f->read_ms);
	if (isfinite(min)) {
		vt_sparkline(spark, sizeof(spark), f->committed, f->n, width, r->utf8, 0.1 * 1024 * 1024);
		fprintf(out, "  %s %s %s   (from the trim on, %s a cell)\n", vt_fmt_size(min, lo, sizeof(lo)), spark,
			vt_fmt_size(max, hi, sizeof(hi)),
			vt_fmt_span((double)f->n / (double)width * f->every_s, span, sizeof(span)));
	}
	if (!r->verdict) {
		fprintf(out, "  the curve cannot be judged: committed was not read just before and after the trim\n\n");
		return;
	}
	for (e = 0; e < VT_REFILL_EVIDENCE; e++)
		if (vt_render_refill_evidence(r->verdict, h, f, e, line, sizeof(line))[0])
			fprintf(out, "  - %s\n", line);
	fprintf(out, "REFILL VERDICT  %s\n\n", vt_render_refill_headline(r->verdict, h, line, sizeof(line)));
}

int vt_render_heap_text(FILE *out, const struct vt_heap_sample *h, const struct vt_heap_verdict *v,
			uint64_t page, const struct vt_heap_refill *refill)
{
	char line[VT_HEAP_LINE_MAX];
	int i;

	print_header(out, h);
	if (h->other) {
		print_other(out, h);
	} else {
		print_mallinfo(out, &h->mi);
		if (h->has_info)
			print_arenas(out, h, page);
		print_blocks(out, h);
		if (h->blocks_walked)
			vt_render_cpython_text(out, h->pid, &h->python, &h->maps, h->python_why);
	}
	if (h->trim.done)
		print_trim(out, &h->trim);
	if (refill && refill->follow)
		print_refill(out, h, refill);
	fprintf(out, "VERDICT  %s\n", vt_render_heap_headline(v, line, sizeof(line)));
	for (i = 0; i < v->n_evidence; i++)
		fprintf(out, "  - %s\n", vt_render_heap_evidence(v, i, line, sizeof(line)));
	return ferror(out) ? -1 : 0;
}

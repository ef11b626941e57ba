/*
 * heap_json.c — `vitals heap --json`, schema "vitals.heap" version 1
 * (docs/json.md).  Bytes are integers; what was not measured is null.
 */
#include "render/heap.h"
#include "render/arena_threads.h"
#include "render/blocks.h"
#include "render/json.h"
#include "base/json_lib.h"

#include <math.h>
#include <time.h>

static json_t *mallinfo_json(const struct vt_mallinfo *mi)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:b}",
			 "arena", (json_int_t)mi->arena, "ordblks", (json_int_t)mi->ordblks,
			 "smblks", (json_int_t)mi->smblks, "hblks", (json_int_t)mi->hblks,
			 "hblkhd", (json_int_t)mi->hblkhd, "usmblks", (json_int_t)mi->usmblks,
			 "fsmblks", (json_int_t)mi->fsmblks, "uordblks", (json_int_t)mi->uordblks,
			 "fordblks", (json_int_t)mi->fordblks, "keepcost", (json_int_t)mi->keepcost,
			 "wide", mi->wide);
}

static json_t *arenas_json(const struct vt_heap_sample *h, uint64_t page)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; i < h->info.n_arenas; i++) {
		const struct vt_mi_arena *a = &h->info.arenas[i];
		uint64_t free_b = vt_mi_free_bytes(&a->t);
		struct vt_trim_estimate e;
		vt_malloc_info_trim_estimate(a, page, &e);
		json_array_append_new(arr, json_pack("{s:i, s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
			"nr", a->nr, "threads", vt_json_arena_threads_of(&h->threads, i),
			"system_bytes", (json_int_t)a->t.system_current,
			"system_max_bytes", (json_int_t)a->t.system_max,
			"in_use_bytes", (json_int_t)(a->t.system_current > free_b ? a->t.system_current - free_b : 0),
			"free_bytes", (json_int_t)free_b,
			"free_chunks", (json_int_t)(a->t.fast_count + a->t.rest_count),
			"fast_bytes", (json_int_t)a->t.fast_bytes, "heaps", (json_int_t)a->t.subheaps,
			"trim_low_bytes", (json_int_t)e.low_bytes, "trim_high_bytes", (json_int_t)e.high_bytes));
	}
	return arr;
}

static json_t *trim_json(const struct vt_heap_trim *tr)
{
	if (!tr->done)
		return json_null();
	return json_pack("{s:i, s:f, s:o, s:o, s:I, s:I, s:I, s:I}", "returned", tr->returned,
			 "took_ms", tr->took_ms, "before", mallinfo_json(&tr->before),
			 "after", mallinfo_json(&tr->after),
			 "rss_anon_before", (json_int_t)tr->rss_anon_before,
			 "rss_anon_after", (json_int_t)tr->rss_anon_after,
			 "committed_before", (json_int_t)tr->committed_before,
			 "committed_after", (json_int_t)tr->committed_after);
}

/* Another allocator's own figures by its names, with its version and arena count. */
static json_t *other_json(const struct vt_alloc_stats *st)
{
	json_t *o = json_object();
	int f;

	json_object_set_new(o, "version", vt_json_text(st->version));
	for (f = 0; f < st->n_fig; f++)
		json_object_set_new(o, st->fig[f].key, json_integer((json_int_t)st->fig[f].value));
	json_object_set_new(o, "narenas", st->narenas ? json_integer((json_int_t)st->narenas) : json_null());
	return o;
}

static const char *follow_end_name(enum vt_follow_end e)
{
	switch (e) {
	case VT_FOLLOW_DONE: return "done";
	case VT_FOLLOW_STOPPED: return "stopped";
	case VT_FOLLOW_GONE: return "target_exited";
	}
	return "unknown";
}

/* The follow's points and the refill's verdict (--trim --follow). */
static json_t *follow_json(const struct vt_trim_follow *f)
{
	json_t *o = json_object(), *pts = json_array();
	size_t i;

	for (i = 0; i < f->n; i++)
		json_array_append_new(pts, json_pack("[f, o]", f->t_s[i], isfinite(f->committed[i])
						     ? json_integer((json_int_t)f->committed[i]) : json_null()));
	json_object_set_new(o, "every_s", json_real(f->every_s));
	json_object_set_new(o, "asked_s", json_real(f->asked_s));
	json_object_set_new(o, "followed_s", json_real(f->n ? f->t_s[f->n - 1] : 0));
	json_object_set_new(o, "end", json_string(follow_end_name(f->end)));
	json_object_set_new(o, "read_ms", json_real(f->read_ms));
	json_object_set_new(o, "points", pts);
	return o;
}

static json_t *refill_json(const struct vt_heap_sample *h, const struct vt_heap_refill *r)
{
	const struct vt_refill_verdict *v = r->verdict;
	json_t *o, *ev = json_array();
	char line[VT_HEAP_LINE_MAX];
	int e;

	if (!v)
		return json_null();
	for (e = 0; e < VT_REFILL_EVIDENCE; e++)
		if (vt_render_refill_evidence(v, h, r->follow, e, line, sizeof(line))[0])
			json_array_append_new(ev, json_string(line));
	o = json_object();
	json_object_set_new(o, "kind", json_string(vt_refill_kind_name(v->kind)));
	json_object_set_new(o, "headline", json_string(vt_render_refill_headline(v, h, line, sizeof(line))));
	json_object_set_new(o, "evidence", ev);
	json_object_set_new(o, "before_bytes", vt_json_real(v->before));
	json_object_set_new(o, "after_bytes", vt_json_real(v->after));
	json_object_set_new(o, "returned_bytes", vt_json_real(v->returned));
	json_object_set_new(o, "half_life_s", vt_json_real(v->half_life_s));
	json_object_set_new(o, "level_bytes", vt_json_real(v->level));
	json_object_set_new(o, "level_at_s", vt_json_real(v->level_at_s));
	json_object_set_new(o, "refilled_share", vt_json_real(v->refilled_share));
	json_object_set_new(o, "held_for_good_bytes", json_real(v->held_for_good));
	json_object_set_new(o, "period_s", vt_json_real(v->period_s));
	json_object_set_new(o, "relief_bytes", vt_json_real(v->relief));
	json_object_set_new(o, "tick_s", json_real(v->tick_s));
	json_object_set_new(o, "lead_s", isfinite(v->lead_slope) ? json_real(v->lead_s) : json_null());
	json_object_set_new(o, "lead_slope_bytes_per_s", vt_json_real(v->lead_slope));
	json_object_set_new(o, "growth_share", vt_json_real(v->growth_share));
	json_object_set_new(o, "growing", json_boolean(v->growing));
	json_object_set_new(o, "overshot", json_boolean(v->overshot));
	json_object_set_new(o, "stop_ms_per_trim", json_real(h->method == VT_HEAP_PTRACE ? h->stopped_us / 1000
								 : h->trim.took_ms));
	return o;
}

/* The malloc'd blocks found, held against hblks and hblkhd; null when not looked for. */
static json_t *blocks_json(const struct vt_heap_sample *h)
{
	char words[512];
	json_t *b;
	bool all;

	if (!h->blocks_walked)
		return h->blocks_why[0] ? json_pack("{s:s}", "not_looked_for", h->blocks_why) : json_null();
	all = vt_blocks_match(h->blocks_count, h->blocks_bytes, h->mi.hblks, h->mi.hblkhd, h->blocks_min, words,
			      sizeof(words));
	b = vt_blocks_json(&h->maps);
	json_object_set_new(b, "min_size_bytes", json_integer((json_int_t)h->blocks_min));
	json_object_set_new(b, "all_found", json_boolean(all));
	json_object_set_new(b, "match", json_string(words));
	return b;
}

int vt_render_heap_json(FILE *out, const struct vt_heap_sample *h, const struct vt_heap_verdict *v,
			uint64_t page, const struct vt_heap_refill *refill)
{
	json_t *root, *evidence = json_array();
	char when[64], line[VT_HEAP_LINE_MAX];
	time_t t = (time_t)h->taken_at;
	const struct vt_allocator *a;
	int i, rc;

	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
	for (i = 0; i < v->n_evidence; i++)
		json_array_append_new(evidence, json_string(vt_render_heap_evidence(v, i, line, sizeof(line))));
	root = vt_json_envelope(VT_SCHEMA_HEAP);
	rc = json_object_update_new(root, json_pack("{s:s, s:i, s:o, s:s, s:s, s:s, s:f, s:f}",
			 "taken_at", when, "pid", (int)h->pid, "comm", vt_json_text(h->comm),
			 "allocator", vt_alloc_kind_name(h->alloc.kind), "allocator_version",
			 h->alloc.version, "method", h->method == VT_HEAP_PTRACE ? "ptrace" : "agent",
			 "stopped_us", h->method == VT_HEAP_PTRACE ? h->stopped_us : 0.0,
			 "total_ms", h->total_ms));
	if (!root || rc) {
		json_decref(root);
		return -1;
	}
	json_object_set_new(root, "method_detail", vt_json_text(h->method_detail));
	json_object_set_new(root, "callee_us", json_real(h->callee_us));
	json_object_set_new(root, "calls", json_integer(h->calls));
	json_object_set_new(root, "mallinfo2", h->other ? json_null() : mallinfo_json(&h->mi));
	json_object_set_new(root, "live_fraction", h->other ? json_null()
				: json_real(vt_mallinfo_live_fraction(&h->mi)));
	json_object_set_new(root, "arenas", h->has_info ? arenas_json(h, page) : json_null());
	json_object_set_new(root, "arena_threads", h->has_info ? vt_json_arena_threads(&h->threads) : json_null());
	json_object_set_new(root, "mmapped", h->has_info ? json_pack("{s:I, s:I}", "count",
				(json_int_t)h->info.total.mmap_count, "bytes",
				(json_int_t)h->info.total.mmap_bytes) : json_null());
	/* one key per allocator vitals reads besides glibc: its figures, or null */
	for (i = 0; (a = vt_allocator_at(i)); i++)
		if (a->read)
			json_object_set_new(root, vt_alloc_kind_name(a->kind), a == h->other
					    ? other_json(&h->stats) : json_null());
	json_object_set_new(root, "trim", trim_json(&h->trim));
	json_object_set_new(root, "follow", refill && refill->follow ? follow_json(refill->follow) : json_null());
	json_object_set_new(root, "refill", refill && refill->follow ? refill_json(h, refill) : json_null());
	json_object_set_new(root, "malloc_blocks", blocks_json(h));
	json_object_set_new(root, "cpython", h->blocks_walked ? vt_cpython_json(&h->python, &h->maps, h->python_why[0]
										      ? h->python_why : NULL)
							    : json_null());
	json_object_set_new(root, "verdict", json_pack("{s:s, s:s, s:o, s:I, s:I}",
				"lever", vt_heap_lever_name(v->lever),
				"headline", vt_render_heap_headline(v, line, sizeof(line)),
				"evidence", evidence, "trim_low_bytes", (json_int_t)v->trim_low,
				"trim_high_bytes", (json_int_t)v->trim_high));
	return vt_json_write(out, root, false, false);
}

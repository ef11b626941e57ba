/*
 * allocs_json.c — an allocation profile as "vitals.allocs" v1 (docs/json.md).
 */
#include "render/allocs.h"

#include <math.h>

#include "base/json_lib.h"

#include "render/json.h"

static json_t *real_or_null(double v)
{
	return isnan(v) || isinf(v) ? json_null() : json_real(v);
}

static json_t *bins(const uint64_t *v, unsigned n)
{
	json_t *a = json_array();

	for (unsigned i = 0; i < n; i++)
		json_array_append_new(a, json_integer((json_int_t)v[i]));
	return a;
}

static json_t *site_json(const struct vt_allocs *a, const struct vt_alloc_site *s)
{
	json_t *o = json_object(), *threads = json_array(), *stack = json_array(), *fns = json_object();
	char name[256];

	vt_profile_loc_label(a->p, s->loc, name, sizeof(name));
	json_object_set_new(o, "site", vt_json_text(name));
	json_object_set_new(o, "calls", json_integer((json_int_t)s->calls));
	json_object_set_new(o, "bytes", json_integer((json_int_t)s->bytes));
	json_object_set_new(o, "calls_per_s", real_or_null(a->meta.armed_s > 0 ? (double)s->calls / a->meta.armed_s : NAN));
	json_object_set_new(o, "bytes_per_s", real_or_null(a->meta.armed_s > 0 ? (double)s->bytes / a->meta.armed_s : NAN));
	json_object_set_new(o, "size_bins", bins(s->size_bins, VT_ALLOCS_SIZE_BINS));
	json_object_set_new(o, "linked", json_integer((json_int_t)s->linked));
	json_object_set_new(o, "freed", json_integer((json_int_t)s->freed));
	json_object_set_new(o, "freed_bytes", json_integer((json_int_t)s->freed_bytes));
	json_object_set_new(o, "freed_age_bins", bins(s->age_bins, VT_ALLOCS_AGE_BINS));
	json_object_set_new(o, "live", json_integer((json_int_t)s->live));
	json_object_set_new(o, "live_bytes", json_integer((json_int_t)s->live_bytes));
	json_object_set_new(o, "freed_by_other_thread", json_integer((json_int_t)s->freed_elsewhere));
	for (unsigned k = 0; k < VT_AFN__COUNT; k++)
		if (s->fn_calls[k])
			json_object_set_new(fns, vt_alloc_fn_name((enum vt_alloc_fn)k),
					    json_integer((json_int_t)s->fn_calls[k]));
	json_object_set_new(o, "by_function", fns);
	for (unsigned k = 0; k < VT_ALLOCS_SITE_THREADS && s->threads[k].tid; k++) {
		json_t *t = json_object();

		json_object_set_new(t, "tid", json_integer(s->threads[k].tid));
		json_object_set_new(t, "name", vt_json_text(vt_profile_str(a->p,
					a->p->threads[s->threads[k].thread].name)));
		json_object_set_new(t, "calls", json_integer((json_int_t)s->threads[k].calls));
		json_object_set_new(t, "arena", a->meta.arenas_known && s->threads[k].arena >= 0
							? json_integer(s->threads[k].arena) : json_null());
		json_array_append_new(threads, t);
	}
	json_object_set_new(o, "threads", threads);
	json_object_set_new(o, "other_threads_calls", json_integer((json_int_t)s->other_thread_calls));
	for (uint32_t i = 0; i < s->example_depth; i++) {
		vt_profile_loc_label(a->p, s->example[i], name, sizeof(name));
		json_array_append_new(stack, vt_json_text(name));
	}
	json_object_set_new(o, "stack", stack);
	return o;
}

/* The sites by bucket (analyze/alloc_buckets.h), by bytes. */
static json_t *buckets_json(const struct vt_allocs *a, const struct vt_alloc_buckets *b)
{
	json_t *arr = json_array();
	char name[256];

	for (size_t i = 0; arr && i < b->n; i++) {
		const struct vt_alloc_bucket *k = &b->v[i];

		vt_profile_loc_label(a->p, a->sites[k->top_site].loc, name, sizeof(name));
		json_array_append_new(arr, json_pack("{s:o s:I s:I s:o s:o s:I s:I s:I s:I s:o}", "bucket",
						     vt_json_text(k->name), "calls", (json_int_t)k->calls, "bytes",
						     (json_int_t)k->bytes, "calls_per_s",
						     real_or_null(a->meta.armed_s > 0 ? (double)k->calls / a->meta.armed_s : NAN),
						     "bytes_per_s",
						     real_or_null(a->meta.armed_s > 0 ? (double)k->bytes / a->meta.armed_s : NAN),
						     "linked", (json_int_t)k->linked, "freed_bytes", (json_int_t)k->freed_bytes,
						     "live_bytes", (json_int_t)k->live_bytes, "sites", (json_int_t)k->sites,
						     "top_site", vt_json_text(name)));
	}
	return arr ? arr : json_null();
}

int vt_render_allocs_json(FILE *out, const struct vt_allocs *a, const struct vt_alloc_buckets *b, bool compact)
{
	const struct vt_allocs_meta *m = &a->meta;
	json_t *root = vt_json_envelope(VT_SCHEMA_ALLOCS), *sites = json_array(), *size_max = json_array(),
	       *age_max = json_array(), *cost = json_object();
	char verdict[768];
	const char *kind = vt_render_allocs_verdict(a, verdict, sizeof(verdict));

	if (!root || !sites || !size_max || !age_max || !cost) {
		json_decref(sites);
		json_decref(size_max);
		json_decref(age_max);
		json_decref(cost);
		return vt_json_write(out, root, compact, true);
	}
	json_object_set_new(root, "pid", json_integer(m->pid));
	json_object_set_new(root, "comm", vt_json_text(m->comm));
	json_object_set_new(root, "allocator", vt_json_text(m->allocator));
	json_object_set_new(root, "file", vt_json_text(m->file));
	json_object_set_new(root, "probed", vt_json_text(m->probed));
	json_object_set_new(root, "not_probed", vt_json_text(m->skipped));
	json_object_set_new(root, "duration_s", json_real(m->duration_s));
	json_object_set_new(cost, "armed_s", json_real(m->armed_s));
	json_object_set_new(cost, "windows", json_integer(m->windows));
	json_object_set_new(cost, "window_s", json_real(m->window_s));
	json_object_set_new(cost, "budget", json_real(m->budget));
	json_object_set_new(cost, "hits", json_integer((json_int_t)m->hits));
	json_object_set_new(cost, "hit_ns", real_or_null(m->trap_ns));
	json_object_set_new(cost, "hits_s", real_or_null(m->trap_s));
	json_object_set_new(cost, "target_cpu_s", real_or_null(m->target_cpu_s));
	json_object_set_new(cost, "target_cpu_rate_before", real_or_null(m->target_base_rate));
	json_object_set_new(cost, "slowdown", real_or_null(m->slowdown));
	json_object_set_new(cost, "arm_ms", real_or_null(m->windows ? m->open_ms / m->windows : NAN));
	json_object_set_new(cost, "disarm_ms", real_or_null(m->windows ? m->close_ms / m->windows : NAN));
	json_object_set_new(cost, "self_cpu_s", real_or_null(m->self_cpu_s));
	json_object_set_new(root, "probes_how", vt_json_text(m->probes_how));
	json_object_set_new(root, "path", json_string(m->agent ? "agent" : "uprobes"));
	json_object_set_new(root, "path_why", m->path_why[0] ? vt_json_text(m->path_why) : json_null());
	json_object_set_new(root, "agent", m->agent ? json_pack("{s:I s:I s:I s:I s:b}", "every", (json_int_t)m->every,
								 "samples", (json_int_t)m->agent_samples, "dropped",
								 (json_int_t)m->agent_dropped, "late", (json_int_t)m->agent_late,
								 "expired", m->agent_expired)
						    : json_null());
	json_object_set_new(root, "cost", cost);
	json_object_set_new(root, "calls", json_integer((json_int_t)m->calls));
	json_object_set_new(root, "bytes", json_integer((json_int_t)m->bytes));
	json_object_set_new(root, "frees", json_integer((json_int_t)m->frees));
	json_object_set_new(root, "lost", json_integer((json_int_t)m->lost));
	json_object_set_new(root, "unpaired", json_integer((json_int_t)m->unpaired));
	json_object_set_new(root, "threads_missed", json_integer((json_int_t)m->threads_missed));
	json_object_set_new(root, "threads_seen", json_integer((json_int_t)m->threads_seen));
	json_object_set_new(root, "threads_probed_max", json_integer((json_int_t)m->threads_probed_max));
	json_object_set_new(root, "exited", json_boolean(m->exited));
	json_object_set_new(root, "interrupted", json_boolean(m->interrupted));
	json_object_set_new(root, "budget_spent", json_boolean(m->budget_spent));
	json_object_set_new(root, "arenas", a->meta.arenas_known ? json_integer((json_int_t)a->meta.narenas)
								  : json_null());
	json_object_set_new(root, "arenas_why", a->meta.arenas_why[0] ? vt_json_text(a->meta.arenas_why)
								      : json_null());
	json_object_set_new(root, "verdict", json_string(kind));
	json_object_set_new(root, "verdict_text", vt_json_text(verdict));
	for (unsigned k = 0; k < VT_ALLOCS_SIZE_BINS; k++) {
		uint64_t v = vt_allocs_size_bin_max(k);
		json_array_append_new(size_max, v == UINT64_MAX ? json_null() : json_integer((json_int_t)v));
	}
	for (unsigned k = 0; k < VT_ALLOCS_AGE_BINS; k++) {
		uint64_t v = vt_allocs_age_bin_max_ns(k);
		json_array_append_new(age_max, v == UINT64_MAX ? json_null() : json_integer((json_int_t)v));
	}
	json_object_set_new(root, "size_bin_max", size_max);
	json_object_set_new(root, "age_bin_max_ns", age_max);
	for (size_t i = 0; i < a->nsites; i++) {
		json_t *s = site_json(a, &a->sites[i]);

		if (b && i < b->nsites)
			json_object_set_new(s, "bucket", vt_json_text(b->v[b->site_bucket[i]].name));
		json_array_append_new(sites, s);
	}
	json_object_set_new(root, "sites", sites);
	json_object_set_new(root, "buckets", b ? buckets_json(a, b) : json_null());
	return vt_json_write(out, root, compact, false);
}

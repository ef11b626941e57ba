/*
 * snap_json.c — `vitals snap --json`, schema "vitals.snap" (docs/json.md).
 *
 * Bytes are integers; a figure that could not be read is null, never 0.
 * Built with jansson and dumped once, so output is all or nothing.
 */
#include "render/render.h"
#include "base/unknown.h"
#include "render/blocks.h"
#include "render/json.h"
#include "base/json_lib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static json_t *bytes_or_null(uint64_t v)
{
	return vt_known(v) ? json_integer((json_int_t)v) : json_null();
}

static json_t *count_or_null(uint64_t v)
{
	return bytes_or_null(v);
}

static json_t *section_json(const char *name, const struct vt_section *s)
{
	return json_pack("{s:s, s:s, s:o, s:o}", "section", name, "code", vt_code_name(s->code),
			 "reason", vt_json_text(s->reason), "hint", vt_json_text(s->hint));
}

static json_t *memory_json(const struct vt_sample *s)
{
	json_t *m = json_object();
	int f;

	for (f = 0; f < VT_M_COUNT; f++) {
		double v;

		if (!(vt_metrics[f].flags & VT_MF_SNAP))
			continue;
		v = vt_metrics[f].of_sample(s);
		json_object_set_new(m, vt_metrics[f].key, isfinite(v) ? json_integer((json_int_t)v) : json_null());
	}
	return m;
}

static json_t *threads_json(const struct vt_sample *s)
{
	const struct vt_thread_states *t = &s->threads;

	if (!s->threads_st.available)
		return json_pack("{s:I, s:n}", "total", (json_int_t)s->num_threads, "by_state");
	return json_pack("{s:I, s:{s:i, s:i, s:i, s:i, s:i, s:i, s:i}}", "total",
			 (json_int_t)s->num_threads, "by_state", "running", t->running, "sleeping",
			 t->sleeping, "disk", t->disk, "stopped", t->stopped, "zombie", t->zombie,
			 "idle", t->idle, "other", t->other);
}

static json_t *arenas_json(const struct vt_sample *s)
{
	const struct vt_arena_summary *a = &s->arenas;
	json_t *o;

	if (!s->regions_st.available || s->alloc.kind != VT_ALLOC_GLIBC)
		/* the same keys, null: a script reads one shape whatever the allocator */
		o = json_pack("{s:n, s:n, s:b, s:n, s:n, s:n, s:n, s:n, s:n}", "heaps", "arenas", "verified", 0,
			      "reserved_bytes", "mapped_bytes", "rss_bytes", "swap_bytes", "main_heap_bytes",
			      "main_heap_rss");
	else
		o = json_pack("{s:i, s:o, s:b, s:I, s:I, s:o, s:o, s:I, s:o}", "heaps", a->heaps,
			      "arenas", a->arenas >= 0 ? json_integer(a->arenas) : json_null(),
			      "verified", a->verified, "reserved_bytes", (json_int_t)a->reserved_bytes,
			      "mapped_bytes", (json_int_t)a->mapped_bytes, "rss_bytes",
			      a->heaps ? bytes_or_null(a->rss_bytes) : json_integer(0), "swap_bytes",
			      a->heaps ? bytes_or_null(a->swap_bytes) : json_integer(0),
			      "main_heap_bytes", (json_int_t)a->main_heap_bytes, "main_heap_rss",
			      bytes_or_null(a->main_heap_rss));
	/* glibc's cap means nothing to another allocator (vt_sample_maybe_glibc) */
	json_object_set_new(o, "cap", !vt_sample_maybe_glibc(s) ? json_null() :
		json_pack("{s:o, s:s, s:s, s:s}", "value",
		s->cap.source == VT_CAP_UNKNOWN ? json_null() : json_integer((json_int_t)s->cap.value),
		"source", vt_cap_source_name(s->cap.source), "detail", s->cap.source_text,
		"note", s->cap.note));
	json_object_set_new(o, "ncpus", json_integer(s->ncpus));
	return o;
}

static json_t *allocator_json(const struct vt_sample *s)
{
	if (!s->alloc_st.available)
		return json_null();
	return json_pack("{s:s, s:o, s:b, s:o, s:o, s:o}", "name", vt_alloc_kind_name(s->alloc.kind),
			 "version", vt_json_text(s->alloc.version), "static", s->alloc.is_static, "path",
			 vt_json_text(s->alloc.path), "prefix",
			 s->alloc.prefix[0] ? vt_json_text(s->alloc.prefix) : json_null(),
			 "evidence", vt_json_text(s->alloc.evidence));
}

static json_t *psi_json(const struct vt_psi_line *p)
{
	if (!p->present)
		return json_null();
	return json_pack("{s:f, s:f, s:f, s:I}", "avg10", p->avg10, "avg60", p->avg60, "avg300",
			 p->avg300, "total_us", (json_int_t)p->total_us);
}

static json_t *cgroup_json(const struct vt_sample *s)
{
	const struct vt_cgroup_mem *c = &s->cgroup;

	if (!s->cgroup_st.available || !c->version)
		return json_null();
	return json_pack("{s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:{s:o, s:o, s:o, s:o, s:o}, "
			 "s:{s:o, s:o}}",
			 "version", c->version, "path", vt_json_text(c->path), "dir", vt_json_text(c->dir),
			 "usage_bytes", bytes_or_null(c->usage),
			 "limit_bytes", c->limit_is_max ? json_null() : bytes_or_null(c->limit),
			 "peak_bytes", bytes_or_null(c->peak),
			 "swap_bytes", bytes_or_null(c->swap_usage),
			 "swap_limit_bytes", c->swap_limit_is_max ? json_null() : bytes_or_null(c->swap_limit),
			 "events", "low", count_or_null(c->events_low), "high", count_or_null(c->events_high),
			 "max", count_or_null(c->events_max), "oom", count_or_null(c->events_oom),
			 "oom_kill", count_or_null(c->events_oom_kill),
			 "pressure", "some", psi_json(&c->psi_some), "full", psi_json(&c->psi_full));
}

static json_t *regions_json(const struct vt_sample *s, const struct vt_snap_report *r)
{
	json_t *arr = json_array();
	char addr[2][24], ev[64];
	size_t i;

	for (i = 0; i < s->regions.n; i++) {
		const struct vt_region *g = &s->regions.v[i];
		json_t *touched;
		if (!vt_region_listed(g, r))
			continue;
		snprintf(addr[0], sizeof(addr[0]), "0x%llx", (unsigned long long)g->start);
		snprintf(addr[1], sizeof(addr[1]), "0x%llx", (unsigned long long)g->end);
		touched = vt_known(g->rss) && vt_region_size(g)
				  ? json_real((double)g->rss / (double)vt_region_size(g)) : json_null();
		json_array_append_new(arr, json_pack("{s:s, s:s, s:I, s:o, s:o, s:o, s:s, s:s, s:s, s:s, s:o, s:o}",
			"start", addr[0], "end", addr[1], "size_bytes", (json_int_t)vt_region_size(g),
			"rss_bytes", bytes_or_null(g->rss), "touched", touched,
			"swap_bytes", bytes_or_null(g->swap), "perms", g->perms,
			"kind", vt_region_kind_name(g->kind), "kind_label", vt_region_kind_label(g->kind),
			"basis", vt_region_evidence(g, ev, sizeof(ev)), "path", vt_json_text(g->path),
			"owner_tid", g->owner_tid ? json_integer(g->owner_tid) : json_null()));
	}
	return arr;
}

static json_t *listen_json(const struct vt_sample *s)
{
	const struct vt_sample_listen *l = &s->listen;
	json_t *socks = json_array();
	size_t i;

	if (!s->listen_st.available) {
		json_decref(socks);
		return json_null();
	}
	for (i = 0; i < l->n; i++) {
		const struct vt_listen_sock *k = &l->v[i];

		json_array_append_new(socks, json_pack("{s:s, s:I, s:o}", "address", k->address,
			"queue", (json_int_t)k->queue, "backlog", k->backlog == VT_LISTEN_UNKNOWN
			? json_null() : json_integer((json_int_t)k->backlog)));
	}
	return json_pack("{s:o, s:I, s:o, s:I, s:o, s:o}", "via", l->via ? json_string(l->via) : json_null(),
			 "open_fds", (json_int_t)l->open_fds, "sockets", socks,
			 "sockets_not_listed", (json_int_t)l->dropped,
			 "namespace_listen_overflows", count_or_null(l->counters.overflows),
			 "namespace_listen_drops", count_or_null(l->counters.drops));
}

static json_t *unavailable_json(const struct vt_sample *s)
{
	json_t *arr = json_array();

	if (!s->regions_st.available && !s->regions_st.skipped)
		json_array_append_new(arr, section_json("regions", &s->regions_st));
	if (!s->environ_st.available && !s->environ_st.skipped)
		json_array_append_new(arr, section_json("environ", &s->environ_st));
	if (!s->alloc_st.available && !s->alloc_st.skipped)
		json_array_append_new(arr, section_json("allocator", &s->alloc_st));
	if (!s->cgroup_st.available && !s->cgroup_st.skipped)
		json_array_append_new(arr, section_json("cgroup", &s->cgroup_st));
	if (!s->threads_st.available && !s->threads_st.skipped)
		json_array_append_new(arr, section_json("threads", &s->threads_st));
	if (!s->memory_st.available && !s->memory_st.skipped)
		json_array_append_new(arr, section_json("memory", &s->memory_st));
	if (!s->listen_st.available && !s->listen_st.skipped)
		json_array_append_new(arr, section_json("listen", &s->listen_st));
	return arr;
}

static json_t *process_json(const struct vt_sample *s, const struct vt_snap_report *r)
{
	json_t *p = json_pack("{s:i, s:o, s:o, s:o, s:i}", "pid", (int)s->pid, "comm",
			      vt_json_text(s->comm), "cmdline", vt_json_text(s->cmdline),
			      "uptime_s", s->uptime_s >= 0 ? json_real(s->uptime_s) : json_null(),
			      "uid", (int)s->uid);

	json_object_set_new(p, "threads", threads_json(s));
	json_object_set_new(p, "memory", memory_json(s));
	json_object_set_new(p, "arenas", arenas_json(s));
	json_object_set_new(p, "allocator", allocator_json(s));
	json_object_set_new(p, "cgroup", cgroup_json(s));
	json_object_set_new(p, "listen", listen_json(s));
	json_object_set_new(p, "regions_light", json_boolean(s->light));
	json_object_set_new(p, "regions_total", s->regions_st.available
				? json_integer((json_int_t)s->regions.n) : json_null());
	json_object_set_new(p, "regions", s->regions_st.available ? regions_json(s, r) : json_null());
	json_object_set_new(p, "malloc_blocks", s->regions_st.available ? vt_blocks_json(&s->regions) : json_null());
	json_object_set_new(p, "cpython", s->regions_st.available
				? vt_cpython_json(&s->python, &s->regions, s->python_why[0] ? s->python_why : NULL)
				: json_null());
	json_object_set_new(p, "memory_read", json_boolean(s->memory_read));
	json_object_set_new(p, "unavailable", unavailable_json(s));
	json_object_set_new(p, "read_ms", json_real(s->read_ms));
	return p;
}

int vt_render_snap_json(FILE *out, const struct vt_snap_report *r)
{
	json_t *root, *procs = json_array(), *errors = json_array();
	char when[64];
	time_t now = r->n ? (time_t)r->samples[0].taken_at : time(NULL);
	size_t i;
	int rc;

	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	for (i = 0; i < r->n; i++) {
		json_t *p = process_json(&r->samples[i], r);
		if (r->labels && r->labels[i])
			json_object_set_new(p, "label", json_string(r->labels[i]));
		json_array_append_new(procs, p);
	}
	for (i = 0; i < r->n_failures; i++) {
		const struct vt_snap_failure *f = &r->failures[i];
		json_array_append_new(errors, json_pack("{s:i, s:s, s:i, s:o, s:o}", "pid", (int)f->pid,
			"code", vt_code_name(f->err.code), "exit_status", vt_code_exit(f->err.code),
			"message", vt_json_text(f->err.msg), "hint", vt_json_text(f->err.hint)));
	}
	root = vt_json_envelope(VT_SCHEMA_SNAP);
	rc = json_object_update_new(root, json_pack("{s:s, s:I, s:o, s:o}", "taken_at", when, "min_region_bytes",
						    (json_int_t)r->min_region, "processes", procs,
						    "errors", errors));
	return vt_json_write(out, root, false, rc != 0);
}

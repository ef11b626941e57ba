/*
 * profile_json.c — `vitals profile --json`, schema "vitals.profile" version 1
 * (see profile_json.h and docs/json.md).
 *
 * Shares are fractions 0..1; each comes with its 95% interval as
 * ci95_low/ci95_high and plus_minus (half the interval's width).  Unknown
 * figures are null.
 */
#include "render/profile_json.h"

#include "render/json.h"
#include "render/locks.h"

#include <math.h>

static json_t *num_or_null(double v)
{
	return v < 0 || !isfinite(v) ? json_null() : json_real(v);
}

static json_t *count(uint64_t v)
{
	return json_integer((json_int_t)v);
}

/* samples, share, ci95_low, ci95_high, plus_minus into o. */
static void share_into(json_t *o, const struct vt_prof_share *sh)
{
	json_object_set_new(o, "samples", count(sh->samples));
	json_object_set_new(o, "share", json_real(sh->share));
	json_object_set_new(o, "ci95_low", json_real(sh->lo));
	json_object_set_new(o, "ci95_high", json_real(sh->hi));
	json_object_set_new(o, "plus_minus", json_real(sh->pm));
}

static json_t *bucket_json(const struct vt_prof_summary *s, const struct vt_prof_bucket_row *b)
{
	json_t *o = json_object();

	json_object_set_new(o, "name", vt_json_text(b->name));
	json_object_set_new(o, "builtin", json_boolean(b->builtin));
	json_object_set_new(o, "runtime", json_boolean(b->runtime));
	share_into(o, &b->cpu);
	json_object_set_new(o, "tied_with_next", json_boolean(b->tied_next));
	if (s->meta.wall) {
		json_t *w = json_object(), *waits = json_array();
		share_into(w, &b->wall);
		json_object_set_new(w, "running", count(b->wall_running));
		json_object_set_new(w, "runnable", count(b->wall_runnable));
		json_object_set_new(w, "waiting", count(b->wall_waiting));
		json_object_set_new(w, "idle", count(b->wall_idle));
		for (uint32_t i = 0; i < b->nwaits; i++)
			json_array_append_new(waits, json_pack("{s:o, s:I}", "on",
							       vt_json_text(b->waits[i].what), "samples",
							       (json_int_t)b->waits[i].samples));
		json_object_set_new(w, "waiting_on", waits);
		json_object_set_new(o, "wall", w);
	}
	return o;
}

static json_t *funcs_json(const struct vt_prof_func_row *rows, uint32_t n)
{
	json_t *a = json_array();

	for (uint32_t i = 0; i < n; i++) {
		json_t *o = json_object();
		json_object_set_new(o, "function", vt_json_text(rows[i].label));
		json_object_set_new(o, "module", rows[i].module[0] ? vt_json_text(rows[i].module)
								   : json_null());
		/* the symbol as in the file when "function" is its demangling (Rust's hash kept) */
		json_object_set_new(o, "system_name", rows[i].system_name[0] ? vt_json_text(rows[i].system_name)
									     : json_null());
		/* where it is defined, from debug information; whether it ran only inlined */
		json_object_set_new(o, "file", rows[i].file[0] ? vt_json_text(rows[i].file) : json_null());
		json_object_set_new(o, "line", rows[i].line ? json_integer(rows[i].line) : json_null());
		json_object_set_new(o, "inlined", json_boolean(rows[i].inlined));
		json_object_set_new(o, "kernel", json_boolean(rows[i].kernel));
		json_object_set_new(o, "self", count(rows[i].self));
		json_object_set_new(o, "total", count(rows[i].total));
		json_object_set_new(o, "self_share", json_real(rows[i].self_share));
		json_object_set_new(o, "total_share", json_real(rows[i].total_share));
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *threads_json(const struct vt_prof_summary *s)
{
	json_t *a = json_array();

	for (uint32_t i = 0; i < s->nthreads; i++) {
		const struct vt_prof_thread_row *t = &s->threads[i];
		json_t *o = json_object();
		json_object_set_new(o, "tid", json_integer(t->tid));
		json_object_set_new(o, "name", vt_json_text(t->name));
		json_object_set_new(o, "pool", vt_json_text(t->pool));
		share_into(o, &t->cpu);
		json_object_set_new(o, "samples_all_states", count(t->samples));
		json_object_set_new(o, "cpu_s", num_or_null(t->cpu_s));
		json_object_set_new(o, "cpu_s_share", num_or_null(t->cpu_s_share));
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *pools_json(const struct vt_prof_summary *s)
{
	json_t *a = json_array();

	for (uint32_t i = 0; i < s->npools; i++) {
		const struct vt_prof_pool_row *pl = &s->pools[i];
		json_t *o = json_object();
		json_object_set_new(o, "name", vt_json_text(pl->name));
		json_object_set_new(o, "threads", json_integer(pl->threads));
		share_into(o, &pl->cpu);
		json_object_set_new(o, "cpu_s", num_or_null(pl->cpu_s));
		json_object_set_new(o, "cpu_s_share", num_or_null(pl->cpu_s_share));
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *modules_json(const struct vt_prof_summary *s)
{
	static const char *const keys[VT_UNWIND__COUNT] = {
		[VT_UNWIND_NONE] = "none", [VT_UNWIND_DWARF] = "dwarf",
		[VT_UNWIND_FP] = "frame_pointers", [VT_UNWIND_KERNEL] = "kernel",
	};
	static const char *const symbols[] = {
		[VT_SYMS_NONE] = "none", [VT_SYMS_DYNSYM] = "dynsym", [VT_SYMS_SYMTAB] = "symtab",
		[VT_SYMS_MINIDEBUG] = "minidebuginfo", [VT_SYMS_DEBUGFILE] = "debugfile",
		[VT_SYMS_KALLSYMS] = "kallsyms",
	};
	static const char *const lines[] = {
		[VT_LINES_UNKNOWN] = "unknown", [VT_LINES_NONE] = "none", [VT_LINES_OWN] = "own",
		[VT_LINES_DEBUGFILE] = "debugfile", [VT_LINES_SPLIT] = "split",
	};
	json_t *a = json_array();

	for (uint32_t i = 0; i < s->nmodules; i++) {
		const struct vt_prof_module_row *m = &s->modules[i];
		json_t *o = json_object(), *steps = json_object();
		json_object_set_new(o, "name", vt_json_text(m->name));
		json_object_set_new(o, "path", vt_json_text(m->path));
		json_object_set_new(o, "symbols",
				    json_string(m->symbols < sizeof(symbols) / sizeof(symbols[0])
						? symbols[m->symbols] : "unknown"));
		json_object_set_new(o, "lines", json_string(m->lines < sizeof(lines) / sizeof(lines[0])
							    ? lines[m->lines] : "unknown"));
		json_object_set_new(o, "debug_file", m->debug_file ? vt_json_text(m->debug_file) : json_null());
		if (m->debug_ignored) {
			json_t *ig = json_object();

			json_object_set_new(ig, "path", vt_json_text(m->debug_ignored));
			json_object_set_new(ig, "why", vt_json_text(m->debug_ignored_why ? m->debug_ignored_why : ""));
			json_object_set_new(o, "debug_ignored", ig);
		} else {
			json_object_set_new(o, "debug_ignored", json_null());
		}
		for (int k = 0; k < VT_UNWIND__COUNT; k++)
			json_object_set_new(steps, keys[k], count(m->frames[k]));
		json_object_set_new(o, "unwind_steps", steps);
		json_array_append_new(a, o);
	}
	return a;
}

/* What the on-CPU samples missed of the CPU measured, and why and what to do when it is most of it. */
static json_t *unsampled_json(const struct vt_prof_summary *s)
{
	static const char *const causes[] = {
		[VT_PROF_UNSAMPLED_SHORT_THREADS] = "short_lived_threads",
		[VT_PROF_UNSAMPLED_UNLISTED_THREADS] = "unlisted_threads",
		[VT_PROF_UNSAMPLED_THIN_THREADS] = "threads_under_one_period",
	};
	json_t *o = json_object();
	char advice[160] = "";

	if ((s->unsampled_cause == VT_PROF_UNSAMPLED_SHORT_THREADS ||
	     s->unsampled_cause == VT_PROF_UNSAMPLED_THIN_THREADS) && s->hz_advice)
		snprintf(advice, sizeof(advice), "--hz %u samples threads that use 1/%u s of CPU; "
			 "`vitals threads` counts their CPU", s->hz_advice, s->hz_advice);
	else if (s->unsampled_cause)
		snprintf(advice, sizeof(advice), "`vitals threads` counts their CPU");
	json_object_set_new(o, "used_cpu_s", num_or_null(s->used_cpu_s));
	json_object_set_new(o, "unlisted_cpu_s", num_or_null(s->unlisted_cpu_s));
	json_object_set_new(o, "threads_started", json_integer(s->meta.threads_started));
	json_object_set_new(o, "threads_ended", json_integer(s->meta.threads_ended));
	json_object_set_new(o, "cause", s->unsampled_cause ? json_string(causes[s->unsampled_cause])
							   : json_null());
	json_object_set_new(o, "hz_advice", s->hz_advice ? json_integer(s->hz_advice) : json_null());
	json_object_set_new(o, "advice", advice[0] ? json_string(advice) : json_null());
	return o;
}

json_t *vt_profile_json(const struct vt_prof_summary *s)
{
	const struct vt_prof_meta *m = &s->meta;
	json_t *root = vt_json_envelope(VT_SCHEMA_PROFILE);
	json_t *samples = json_object(), *buckets = json_array(), *idle = json_object();
	json_t *by_class = json_object(), *overhead = json_object();

	if (!root || !samples || !buckets || !idle || !by_class || !overhead) {
		json_decref(root);
		json_decref(samples);
		json_decref(buckets);
		json_decref(idle);
		json_decref(by_class);
		json_decref(overhead);
		return NULL;
	}
	json_object_set_new(root, "pid", json_integer(m->pid));
	json_object_set_new(root, "name", vt_json_text(m->comm));
	json_object_set_new(root, "method", vt_json_text(m->method));
	json_object_set_new(root, "method_note", m->method_note[0] ? vt_json_text(m->method_note)
								   : json_null());
	json_object_set_new(root, "paused_s", json_real(m->paused_s));
	json_object_set_new(root, "paused_max_share", json_real(m->paused_max_share));
	json_object_set_new(root, "hz", json_real(m->hz));
	json_object_set_new(root, "duration_s", json_real(m->duration_s));
	json_object_set_new(root, "wall", json_boolean(m->wall));
	json_object_set_new(root, "wall_hz", m->wall ? json_real(m->wall_hz) : json_null());
	json_object_set_new(root, "exited", json_boolean(m->exited));
	json_object_set_new(root, "interrupted", json_boolean(m->interrupted));
	json_object_set_new(root, "kernel_symbols", json_boolean(m->kernel_symbols));
	json_object_set_new(root, "kernel_refused", json_boolean(m->kernel_refused));
	json_object_set_new(root, "threads_inherited", json_boolean(m->threads_inherited));
	json_object_set_new(root, "threads_glob", m->threads_glob[0] ? vt_json_text(m->threads_glob)
								   : json_null());

	json_object_set_new(samples, "kept", count(m->samples));
	json_object_set_new(samples, "lost", count(m->lost));
	json_object_set_new(samples, "stops", count(m->stops));
	json_object_set_new(samples, "unwind_failed", count(m->unwind_failed));
	json_object_set_new(samples, "other_threads", count(m->filtered));
	json_object_set_new(samples, "on_cpu", count(s->cpu_samples));
	json_object_set_new(samples, "on_cpu_truncated", count(s->truncated_samples));
	json_object_set_new(samples, "runnable", count(s->runnable_samples));
	json_object_set_new(samples, "waiting", count(s->waiting_samples));
	json_object_set_new(samples, "idle", count(s->idle_samples));
	json_object_set_new(samples, "wall", count(s->wall_samples));
	json_object_set_new(root, "samples", samples);
	json_object_set_new(root, "few_samples", json_boolean(s->few_samples));
	json_object_set_new(root, "runtime_seen", json_boolean(s->runtime_seen));

	json_object_set_new(root, "process_cpu_s", num_or_null(m->process_cpu_s));
	/* the CPU the on-CPU samples stand for, and the share of the measured CPU they missed */
	json_object_set_new(root, "sampled_cpu_s", num_or_null(s->sampled_cpu_s));
	json_object_set_new(root, "unsampled_share", num_or_null(s->unsampled_share));
	json_object_set_new(root, "unsampled", unsampled_json(s));
	json_object_set_new(root, "vitals_cpu_s", num_or_null(m->self_cpu_s));
	json_object_set_new(overhead, "fraction", num_or_null(m->overhead));
	json_object_set_new(overhead, "how", m->overhead_how[0] ? vt_json_text(m->overhead_how)
								: json_null());
	json_object_set_new(root, "overhead", overhead);

	for (uint32_t i = 0; i < s->nbuckets; i++)
		json_array_append_new(buckets, bucket_json(s, &s->buckets[i]));
	json_object_set_new(root, "buckets", buckets);

	/* waits: sampled in wall mode only; the idle classes are left out of the buckets' wall */
	json_t *idle_classes = json_array();
	json_object_set_new(idle, "sampled", json_boolean(m->wall));
	json_object_set_new(idle, "waiting", count(s->waiting_samples));
	json_object_set_new(idle, "idle", count(s->idle_samples));
	for (int c = 0; c < VT_WAITC__COUNT; c++) {
		if (s->waits[c])
			json_object_set_new(by_class, vt_wait_class_name(c), count(s->waits[c]));
		if (vt_wait_class_idle(c))
			json_array_append_new(idle_classes, json_string(vt_wait_class_name(c)));
	}
	json_object_set_new(idle, "by_class", by_class);
	json_object_set_new(idle, "idle_classes", idle_classes);
	json_object_set_new(root, "waits", idle);

	json_object_set_new(root, "functions_seen", json_integer(s->nfuncs_seen));
	json_object_set_new(root, "top_self", funcs_json(s->top_self, s->ntop_self));
	json_object_set_new(root, "top_total", funcs_json(s->top_total, s->ntop_total));
	json_object_set_new(root, "threads", threads_json(s));
	json_object_set_new(root, "threads_cpu_s", num_or_null(s->threads_cpu_s));
	json_object_set_new(root, "pools", pools_json(s));
	json_object_set_new(root, "modules", modules_json(s));
	if (s->calls) {
		const struct vt_call_counts *k = s->calls->counts;
		json_t *calls = json_object(), *fns = json_array();

		json_object_set_new(calls, "armed_s", json_real(k->armed_s));
		json_object_set_new(calls, "duration_s", json_real(k->duration_s));
		json_object_set_new(calls, "windows", json_integer(k->windows));
		json_object_set_new(calls, "hits", json_integer((json_int_t)k->hits));
		json_object_set_new(calls, "lost", json_integer((json_int_t)k->lost));
		json_object_set_new(calls, "cost", num_or_null(isnan(k->cost) ? -1 : k->cost));
		json_object_set_new(calls, "how", vt_json_text(k->how));
		json_object_set_new(calls, "stopped_why", k->why[0] ? vt_json_text(k->why) : json_null());
		for (size_t i = 0; i < s->calls->n; i++) {
			const struct vt_prof_call_row *r = &s->calls->rows[i];

			json_array_append_new(fns, json_pack("{s:o,s:o,s:o,s:I,s:o,s:I,s:o,s:o,s:o}",
				"query", vt_json_text(r->fn->query), "function", vt_json_text(r->fn->name),
				"module", vt_json_text(r->fn->module), "calls", (json_int_t)r->fn->calls,
				"calls_per_s", num_or_null(isnan(r->calls_per_s) ? -1 : r->calls_per_s),
				"samples", (json_int_t)r->samples,
				"share", num_or_null(isnan(r->share) ? -1 : r->share),
				"cores", num_or_null(isnan(r->cores) ? -1 : r->cores),
				"cpu_per_call_s", num_or_null(isnan(r->cpu_per_call_s) ? -1 : r->cpu_per_call_s)));
		}
		json_object_set_new(calls, "functions", fns);
		json_object_set_new(root, "calls", calls);
	} else {
		json_object_set_new(root, "calls", json_null());
	}
	if (s->locks && s->locks->samples)
		json_object_set_new(root, "locks", vt_render_locks_json_value(s->locks));
	else if (s->locks)
		json_object_set_new(root, "locks", json_pack("{s:s}", "why", s->locks->probe_why[0] ? s->locks->probe_why
								     : "no wall tick counted them"));
	else
		json_object_set_new(root, "locks", json_null());
	return root;
}

int vt_render_profile_json(FILE *out, const struct vt_prof_summary *s, bool compact)
{
	json_t *root = vt_profile_json(s);

	return vt_json_write(out, root, compact, root == NULL);
}

/*
 * threads_json.c — `vitals threads --json`, schema "vitals.threads" version 1.
 *
 * Unknown figures are null.  Rates are per second over interval_s; cores
 * are CPU-seconds per second.
 */
#include "render/threads.h"
#include "base/unknown.h"

#include "proc/procfs.h"
#include "render/json.h"
#include "render/locks.h"
#include "base/json_lib.h"

#include <string.h>

static json_t *num_or_null(double v)
{
	return v < 0 ? json_null() : json_real(v);
}

static json_t *pool_json(const struct vt_thread_pool *p)
{
	json_t *o = json_object();

	json_object_set_new(o, "name", vt_json_text(p->label));
	json_object_set_new(o, "indexed", json_boolean(p->indexed));
	json_object_set_new(o, "uneven", json_boolean(p->uneven));
	json_object_set_new(o, "count", json_integer((json_int_t)p->count));
	json_object_set_new(o, "min_cores", num_or_null(p->min_cores));
	json_object_set_new(o, "max_cores", num_or_null(p->max_cores));
	json_object_set_new(o, "min_share", num_or_null(p->min_share));
	json_object_set_new(o, "max_share", num_or_null(p->max_share));
	json_object_set_new(o, "total_cores", json_real(p->total_cores));
	return o;
}

static json_t *thread_json(const struct vt_thread_rate *t)
{
	json_t *o = json_object(), *states = json_object();
	int k;

	json_object_set_new(o, "tid", json_integer(t->tid));
	json_object_set_new(o, "name", vt_json_text(t->comm));
	json_object_set_new(o, "appeared", json_boolean(t->flags & VT_THREAD_APPEARED));
	json_object_set_new(o, "exited", json_boolean(t->flags & VT_THREAD_EXITED));
	json_object_set_new(o, "counter_reset", json_boolean(t->flags & VT_THREAD_COUNTER_RESET));
	json_object_set_new(o, "cores", json_real(t->cpu_cores));
	json_object_set_new(o, "user_cores", num_or_null(t->user_cores));
	json_object_set_new(o, "system_cores", num_or_null(t->sys_cores));
	json_object_set_new(o, "cpu_share", num_or_null(t->cpu_share));
	for (k = 0; k < VT_TC_COUNT; k++)
		if (!(vt_thread_counters[k].flags & VT_TCF_OWN_COLUMN))
			json_object_set_new(o, vt_thread_counters[k].rate_key, num_or_null(t->rate[k]));
	json_object_set_new(o, "last_cpu", json_integer(t->last_cpu));
	json_object_set_new(o, "samples", json_integer(t->nsamples));
	for (k = 0; k < VT_NSTATES; k++) {
		char key[2] = { VT_STATE_KINDS[k], '\0' };

		if (t->states[k])
			json_object_set_new(states, key, json_integer(t->states[k]));
	}
	json_object_set_new(o, "states", states);
	if (!t->wchan_ok) {
		json_object_set_new(o, "wchan", json_null());
		json_object_set_new(o, "wchan_unavailable", vt_json_text(t->wchan_why));
	} else {
		json_object_set_new(o, "wchan", t->wchan_count ? vt_json_text(t->wchan) : json_null());
		json_object_set_new(o, "wchan_samples", json_integer(t->wchan_count));
	}
	if (!t->syscall_ok) {
		json_object_set_new(o, "syscall", json_null());
		json_object_set_new(o, "syscall_unavailable", vt_json_text(t->syscall_why));
	} else {
		json_object_set_new(o, "syscall", t->syscall_count ? vt_json_text(t->syscall) : json_null());
		json_object_set_new(o, "syscall_samples", json_integer(t->syscall_count));
	}
	return o;
}

/* Its listening sockets' accept queues over the interval; null when none was read. */
static json_t *listen_json(const struct vt_threads_rates *r)
{
	json_t *socks;
	size_t i;

	if (!r->nlisten)
		return json_null();
	socks = json_array();
	for (i = 0; i < r->nlisten; i++) {
		const struct vt_rates_listener *l = &r->listen[i];

		json_array_append_new(socks, json_pack("{s:s, s:I, s:I, s:o}", "address", l->address,
			"min_queue", (json_int_t)l->min_queue, "max_queue", (json_int_t)l->max_queue,
			"backlog", l->backlog == UINT32_MAX ? json_null() : json_integer((json_int_t)l->backlog)));
	}
	return json_pack("{s:I, s:o}", "reads", (json_int_t)r->listen_reads, "sockets", socks);
}

int vt_render_threads_json(FILE *out, const struct vt_threads_rates *r, const struct vt_diagnosis *d,
			   bool compact)
{
	json_t *root = vt_json_envelope(VT_SCHEMA_THREADS), *proc = json_object(), *threads = json_array();
	json_t *pools = json_array();
	size_t i;

	json_object_set_new(root, "pid", json_integer(r->pid));
	json_object_set_new(root, "name", vt_json_text(r->comm));
	json_object_set_new(root, "interval_s", json_real(r->interval_s));
	json_object_set_new(root, "samples", json_integer(r->nsamples));
	if (r->reads.stat_read || r->reads.stat_carried)
		json_object_set_new(root, "sampled", json_pack("{s:I, s:I, s:I, s:I, s:I}",
			"states_read", (json_int_t)r->reads.stat_read,
			"states_carried", (json_int_t)r->reads.stat_carried,
			"waits_read", (json_int_t)r->reads.doing_read,
			"waits_carried", (json_int_t)r->reads.doing_carried,
			"waits_none_running", (json_int_t)r->reads.doing_running));
	else
		json_object_set_new(root, "sampled", json_null());
	json_object_set_new(root, "process_exited", json_boolean(r->process_exited));
	json_object_set_new(root, "ncpu", r->ncpu > 0 ? json_integer(r->ncpu) : json_null());
	json_object_set_new(root, "cgroup_quota_cores", num_or_null(r->quota_cores));
	json_object_set_new(root, "cgroup_quota_dir", r->quota_cores > 0 ? vt_json_text(r->quota_dir)
									 : json_null());
	json_object_set_new(root, "usable_cores", r->usable_cores > 0 ? json_real(r->usable_cores)
								      : json_null());

	json_object_set_new(proc, "cores", json_real(r->cores));
	json_object_set_new(proc, "cores_source", json_string(r->cores_source ? r->cores_source : "stat"));
	json_object_set_new(proc, "cores_schedstat", num_or_null(r->cores_ns));
	json_object_set_new(proc, "cores_stat", json_real(r->cores_ticks));
	json_object_set_new(proc, "user_cores", num_or_null(r->user_cores));
	json_object_set_new(proc, "system_cores", num_or_null(r->sys_cores));
	json_object_set_new(proc, "cpu_share_of_allowed",
			    r->usable_cores > 0 ? json_real(r->cores / r->usable_cores) : json_null());
	json_object_set_new(proc, "throttled_periods", vt_known(r->throttled_periods)
			    ? json_integer((json_int_t)r->throttled_periods) : json_null());
	json_object_set_new(proc, "quota_periods", vt_known(r->periods)
			    ? json_integer((json_int_t)r->periods) : json_null());
	json_object_set_new(proc, "throttled_s", num_or_null(r->throttled_s));
	json_object_set_new(proc, "cpu_seconds", json_real(r->cpu_seconds));
	json_object_set_new(root, "vitals_cpu_seconds", num_or_null(r->self_cpu_s));
	json_object_set_new(proc, "ps_since_start_cores", num_or_null(r->since_start_cores));
	json_object_set_new(proc, "ps_differs", json_boolean(r->ps_differs));
	json_object_set_new(proc, "threads_appeared", json_integer((json_int_t)r->appeared));
	json_object_set_new(proc, "threads_exited", json_integer((json_int_t)r->exited));
	json_object_set_new(root, "process", proc);
	json_object_set_new(root, "short_lived",
			    json_pack("{s:f, s:f, s:I}", "cores", r->short_lived_cores, "cpu_share",
				      r->short_lived_share, "threads", (json_int_t)r->short_lived));

	for (i = 0; i < r->n; i++)
		json_array_append_new(threads, thread_json(&r->threads[i]));
	json_object_set_new(root, "threads", threads);
	for (i = 0; i < r->npools; i++)
		json_array_append_new(pools, pool_json(&r->pools[i]));
	json_object_set_new(root, "pools", pools);
	json_object_set_new(root, "diagnosis", vt_render_diagnosis_json(d));
	json_object_set_new(root, "locks", r->locks ? vt_render_locks_json_value(r->locks) : json_null());
	json_object_set_new(root, "listen", listen_json(r));
	return vt_json_write(out, root, compact, false);
}

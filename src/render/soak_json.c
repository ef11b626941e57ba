/*
 * soak_json.c — `vitals analyze --json` (schema "vitals.analyze") and
 * `vitals compare --json` ("vitals.compare"), docs/json.md.  Sizes are
 * integers in bytes, times seconds since the soak began (monotonic) unless
 * the key says wall; what is unknown is null, never 0 and never "nan".
 */
#include "render/soak.h"
#include "render/soak_fmt.h"
#include "render/threads.h"

#include "analyze/thread_view.h"

#include "render/json.h"
#include "render/locks.h"
#include "render/alloc_trend.h"
#include "render/profile_trend.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

#include "analyze/free_mem.h"

#define MiB (1024.0 * 1024.0)

/* Reals with 12 significant digits: a unix time keeps its milliseconds, 0.57 stays 0.57. */

static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* Bytes (and counts) as integers. */
static json_t *whole(double v)
{
	return isfinite(v) && fabs(v) < 9e18 ? json_integer((json_int_t)llround(v)) : json_null();
}

/* A value of a metric: whole bytes; counts (a median may fall between two) and seconds as reals. */
static json_t *metric_value(enum vt_metric m, double v)
{
	if ((unsigned)m >= VT_M_COUNT || vt_metrics[m].unit == VT_UNIT_BYTES)
		return whole(v);
	return num(v);
}

static json_t *iso(double wall)
{
	char buf[40];

	if (!isfinite(wall) || wall <= 0)
		return json_null();
	return json_string(vt_fmt_utc(wall, true, buf, sizeof(buf)));
}

/* Collects one failure (out of memory) over many json_object_set_new calls. */
struct put {
	json_t *o;
	bool failed;
};

/* Both steal v, as json_object_set_new does, also when they fail. */
static void put(struct put *p, const char *key, json_t *v)
{
	if (!p->o) {
		json_decref(v);
		p->failed = true;
	} else if (!v || json_object_set_new(p->o, key, v)) {
		p->failed = true;
	}
}

static void append(json_t *arr, json_t *v, bool *failed)
{
	if (!arr) {
		json_decref(v);
		*failed = true;
	} else if (!v || json_array_append_new(arr, v)) {
		*failed = true;
	}
}

/* arr, or NULL (arr released) when one of its elements could not be made. */
static json_t *array_or_null(json_t *arr, bool failed)
{
	if (failed) {
		json_decref(arr);
		return NULL;
	}
	return arr;
}

/* Returns 0 or -1; the document is printed only when it was built in full. */
/* ---- vitals.analyze ----------------------------------------------------- */

static json_t *recording_json(const struct vt_analyze_report *r)
{
	const struct vt_series *s = r->series;
	const struct vt_recording_info *in = &s->info;
	struct put p = { json_object(), false };
	json_t *metrics = json_array();
	size_t m;

	put(&p, "path", vt_json_text(r->path));
	put(&p, "target", vt_json_text(in->target));
	put(&p, "arm", in->arm[0] ? vt_json_text(in->arm) : json_null());
	put(&p, "env", in->env[0] ? vt_json_text(in->env) : json_null());
	put(&p, "host", in->host[0] ? vt_json_text(in->host) : json_null());
	put(&p, "ncpus", in->ncpus > 0 ? json_integer(in->ncpus) : json_null());
	put(&p, "recorded_by", in->vitals_version[0] ? vt_json_text(in->vitals_version) : json_null());
	put(&p, "store_schema", json_integer(in->schema));
	put(&p, "every_s", in->every_s > 0 ? num(in->every_s) : json_null());
	put(&p, "smaps_every_s", in->smaps_every_s > 0 ? num(in->smaps_every_s) : json_null());
	put(&p, "planned_s", in->planned_s > 0 ? num(in->planned_s) : json_null());
	put(&p, "started_wall", iso(in->started_wall));
	put(&p, "started_unix", in->started_wall > 0 ? num(in->started_wall) : json_null());
	put(&p, "heap", json_boolean(in->heap));
	put(&p, "finished", json_boolean(in->finished));
	put(&p, "writing", json_boolean(in->writing));
	put(&p, "redacted", in->redacted == VT_REDACTED_SECRETS ? json_string("secrets")
			    : in->redacted == VT_REDACTED_ARGS ? json_string("arguments") : json_null());
	{
		char names[256], *tok, *save = NULL;
		json_t *list = json_array();

		vt_recording_redacted_names(in, names, sizeof(names));
		for (tok = strtok_r(names, ",", &save); tok && list; tok = strtok_r(NULL, ",", &save))
			json_array_append_new(list, vt_json_text(tok + (*tok == ' ')));
		put(&p, "redacted_names", list);
	}
	put(&p, "wal_unread", json_boolean(in->wal_unread));
	put(&p, "samples", json_integer((json_int_t)s->samples));
	put(&p, "points", json_integer((json_int_t)s->n));
	put(&p, "rollups", json_integer((json_int_t)in->rollups));
	put(&p, "rollups_damaged", json_boolean(in->rollups_damaged));
	for (m = 0; m < VT_M_COUNT; m++)
		if (s->m[m])
			append(metrics, json_string(vt_metrics[m].key), &p.failed);
	put(&p, "metrics", metrics);
	if (p.failed) {
		json_decref(p.o);
		return NULL;
	}
	return p.o;
}

static json_t *span_json(const struct vt_analyze_report *r)
{
	const struct vt_soak_verdict *v = r->verdict;
	const struct vt_series *s = r->series;
	bool any = v->to > v->from && v->from < s->n;
	struct put p = { json_object(), false };

	put(&p, "t0", any ? num(v->t0) : json_null());
	put(&p, "t1", any ? num(v->t1) : json_null());
	put(&p, "duration_s", any ? num(v->t1 - v->t0) : json_null());
	put(&p, "wall_start", any ? iso(s->wall[v->from]) : json_null());
	put(&p, "pid", any && s->pid[v->from] > 0 ? json_integer(s->pid[v->from]) : json_null());
	put(&p, "from_point", json_integer((json_int_t)v->from));
	put(&p, "to_point", json_integer((json_int_t)v->to));
	put(&p, "samples", json_integer((json_int_t)v->samples));
	put(&p, "restarts", json_integer(v->restarts));
	put(&p, "gaps", json_integer(v->gaps));
	put(&p, "running", json_boolean(v->running));
	put(&p, "died", json_boolean(v->died));
	if (p.failed) {
		json_decref(p.o);
		return NULL;
	}
	return p.o;
}

static json_t *quarters_json(const struct vt_soak_verdict *v)
{
	json_t *arr = json_array();
	bool failed = false;
	int i;

	for (i = 0; i < 4; i++) {
		const struct vt_quarter *q = &v->q[i];
		struct put p = { json_object(), false };

		put(&p, "t0", num(q->t0));
		put(&p, "t1", num(q->t1));
		put(&p, "samples", json_integer((json_int_t)q->samples));
		put(&p, "floor_bytes", metric_value(v->metric, q->floor));
		put(&p, "median_bytes", metric_value(v->metric, q->median));
		put(&p, "peak_bytes", metric_value(v->metric, q->peak));
		failed |= p.failed;
		append(arr, p.o, &failed);
	}
	return array_or_null(arr, failed);
}

/* What a settled window lacks to be a plateau: "length", "points", "flat", "bound" (soak.h enum vt_plateau_need). */
static json_t *plateau_missing_json(unsigned bits, bool *failed)
{
	static const char *const names[] = { "length", "points", "flat", "bound" };
	json_t *arr = json_array();
	size_t k;

	for (k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		if (bits & (1u << k))
			append(arr, json_string(names[k]), failed);
	return arr;
}

static json_t *verdict_json(const struct vt_analyze_report *r)
{
	const struct vt_soak_verdict *v = r->verdict;
	enum vt_metric m = v->metric;
	struct put p = { json_object(), false };
	char line[640], why[VT_SOAK_WHY_MAX];
	const char *key = vt_verdict_key(v->kind), *name = vt_verdict_name(v->kind);

	put(&p, "kind", json_string(key ? key : "unknown"));
	put(&p, "name", json_string(name ? name : "unknown"));
	put(&p, "headline", json_string(vt_soak_headline(v, line, sizeof(line))));
	put(&p, "why", vt_json_text(vt_soak_why_as(v, r->metric_label, why, sizeof(why))));
	put(&p, "metric", json_string((unsigned)m < VT_M_COUNT ? vt_metrics[m].key : "unknown"));
	if (r->metric_label)
		put(&p, "metric_label", vt_json_text(r->metric_label));
	put(&p, "unit", json_string(vt_unit_name((unsigned)m < VT_M_COUNT ? vt_metrics[m].unit : VT_UNIT_BYTES)));
	put(&p, "span", span_json(r));
	put(&p, "noise_bytes", metric_value(m, v->noise));
	put(&p, "tolerance_bytes", metric_value(m, v->tolerance));
	put(&p, "quarters", quarters_json(v));
	put(&p, "floor_drift_bytes", metric_value(m, v->floor_drift));

	if (v->settled) {
		struct put q = { json_object(), false };
		put(&q, "settle_s", num(v->settle_s));
		put(&q, "t0", num(v->settled_t0));
		put(&q, "from_point", json_integer((json_int_t)v->settled_from));
		put(&q, "lo_bytes", metric_value(m, v->settled_lo));
		put(&q, "hi_bytes", metric_value(m, v->settled_hi));
		put(&q, "median_bytes", metric_value(m, v->settled_median));
		put(&q, "window_s", num(v->settled_window_s));
		put(&q, "points", json_integer((json_int_t)v->settled_points));
		put(&q, "plateau", json_boolean(!vt_soak_settled_not_yet(v)));
		put(&q, "missing", plateau_missing_json(v->plateau_missing, &q.failed));
		p.failed |= q.failed;
		put(&p, "settled", q.o);
	} else {
		put(&p, "settled", json_null());
	}

	{
		struct put q = { json_object(), false };

		put(&q, "bytes_per_s", num(v->slope));
		put(&q, "lo", num(v->slope_lo));
		put(&q, "hi", num(v->slope_hi));
		put(&q, "mib_per_h", num(v->slope * 3600 / MiB));
		put(&q, "mib_per_h_lo", num(v->slope_lo * 3600 / MiB));
		put(&q, "mib_per_h_hi", num(v->slope_hi * 3600 / MiB));
		put(&q, "interval", json_real(0.90));
		put(&q, "window_t0", num(v->slope_window_t0));
		put(&q, "window_s", num(v->slope_window_s));
		put(&q, "drift_bound_bytes", metric_value(m, v->drift_not_ruled_out));
		p.failed |= q.failed;
		put(&p, "slope", q.o);
	}

	if (isfinite(v->step_t)) {
		struct put q = { json_object(), false };

		put(&q, "t", num(v->step_t));
		put(&q, "bytes", metric_value(m, v->step_bytes));
		put(&q, "before", metric_value(m, v->step_before));
		put(&q, "after", metric_value(m, v->step_after));
		p.failed |= q.failed;
		put(&p, "step", q.o);
	} else {
		put(&p, "step", json_null());
	}

	put(&p, "need_more_s", isfinite(v->need_more_s) && v->need_more_s > 0 ? num(v->need_more_s)
									  : json_null());
	{
		struct put q = { json_object(), false };

		put(&q, "window_s", num(v->plateau_window_s));
		put(&q, "points", json_integer((json_int_t)v->plateau_points));
		put(&q, "material_bytes", metric_value(m, v->material));
		p.failed |= q.failed;
		put(&p, "plateau_needs", q.o);
	}
	{
		const struct vt_swap_motion *w = &v->swap;
		struct put q = { json_object(), false };

		put(&q, "seen", json_boolean(w->seen));
		put(&q, "episodes", json_integer(w->seen ? w->episodes : 0));
		put(&q, "t0", w->seen ? num(w->t0) : json_null());
		put(&q, "t1", w->seen ? num(w->t1) : json_null());
		put(&q, "anon_delta_bytes", w->seen ? whole(w->anon_delta) : json_null());
		put(&q, "swap_delta_bytes", w->seen ? whole(w->swap_delta) : json_null());
		put(&q, "committed_delta_bytes", w->seen ? whole(w->committed_delta) : json_null());
		put(&q, "anon_range_lo_bytes", whole(w->anon_range_lo));
		put(&q, "anon_range_hi_bytes", whole(w->anon_range_hi));
		p.failed |= q.failed;
		put(&p, "swap", q.o);
	}
	if (v->heap_live_kind) {
		struct put q = { json_object(), false };

		put(&q, "median_bytes", whole(v->heap_live_median));
		put(&q, "floor_drift_bytes", whole(v->heap_live_drift));
		put(&q, "window_rise_bytes", whole(v->heap_live_rise));
		put(&q, "kind", json_string(vt_verdict_key(v->heap_live_kind)));
		p.failed |= q.failed;
		put(&p, "heap_live", q.o);
	} else {
		put(&p, "heap_live", json_null());
	}
	if (v->reason == VT_SOAK_WHY_RATCHET) {
		struct put q = { json_object(), false };

		put(&q, "records", json_integer((json_int_t)v->floor_records));
		put(&q, "stretches", json_integer((json_int_t)(v->floor_bins ? v->floor_bins - 1 : 0)));
		p.failed |= q.failed;
		put(&p, "ratchet", q.o);
	} else {
		put(&p, "ratchet", json_null());
	}
	{
		struct put q = { json_object(), false };

		put(&q, "cores", num(v->cpu_cores));
		put(&q, "user_cores", num(v->cpu_user_cores));
		put(&q, "sys_cores", num(v->cpu_sys_cores));
		p.failed |= q.failed;
		put(&p, "cpu", q.o);
	}
	if (p.failed) {
		json_decref(p.o);
		return NULL;
	}
	return p.o;
}

/* What a thread was doing, tallied at the per-thread cadence; null if never sampled. */
static json_t *doing_json(const struct vt_thread_doing *d)
{
	if (!d->seen)
		return json_null();
	return json_pack("{s:I, s:{s:I, s:I, s:I, s:I}, s:o, s:I, s:o, s:I}",
			 "samples", (json_int_t)d->seen,
			 "states", "R", (json_int_t)d->n_r, "S", (json_int_t)d->n_s, "D", (json_int_t)d->n_d,
			 "other", (json_int_t)(d->seen - d->n_r - d->n_s - d->n_d),
			 "wchan", d->wchan_n ? vt_json_text(d->wchan) : json_null(),
			 "wchan_samples", (json_int_t)d->wchan_n,
			 "syscall", d->syscall_n ? vt_json_text(d->syscall) : json_null(),
			 "syscall_samples", (json_int_t)d->syscall_n);
}

static json_t *threads_json(const struct vt_series *s, pid_t pid, const struct vt_soak_short_lived *sl)
{
	json_t *arr = json_array();
	bool failed = false;
	size_t i, match = 0;

	for (i = 0; i < s->nthreads; i++)
		match += s->threads[i].pid == pid;
	for (i = 0; i < s->nthreads; i++) {
		const struct vt_thread_run *th = &s->threads[i];
		double dt = th->t_last - th->t_first;
		struct put p = { json_object(), false };
		int k;

		put(&p, "pid", json_integer(th->pid));
		put(&p, "tid", json_integer(th->tid));
		put(&p, "name", vt_json_text(th->name));
		put(&p, "t_first", num(th->t_first));
		put(&p, "t_last", num(th->t_last));
		put(&p, "cpu_s", json_real((double)th->delta[VT_TC_CPU_NS] / 1e9));
		for (k = 0; k < VT_TC_COUNT; k++)
			put(&p, vt_thread_counters[k].rate_key,
			    num(vt_thread_counter_rate(k, th->delta[k], dt)));
		put(&p, "doing", doing_json(&th->doing));
		put(&p, "short_lived", json_boolean((!match || th->pid == pid) && vt_soak_thread_short_lived(sl, th)));
		failed |= p.failed;
		append(arr, p.o, &failed);
	}
	return array_or_null(arr, failed);
}

static json_t *events_json(const struct vt_series *s)
{
	json_t *arr = json_array();
	bool failed = false;
	size_t i;

	for (i = 0; i < s->nevents; i++) {
		const struct vt_event *e = &s->events[i];
		struct put p = { json_object(), false };

		put(&p, "t", num(e->t));
		put(&p, "wall", iso(e->wall));
		put(&p, "wall_unix", e->wall > 0 ? num(e->wall) : json_null());
		put(&p, "kind", json_string(vt_soak_event_name(e->kind)));
		put(&p, "pid", e->pid > 0 ? json_integer(e->pid) : json_null());
		put(&p, "detail", vt_json_text(e->detail));
		failed |= p.failed;
		append(arr, p.o, &failed);
	}
	return array_or_null(arr, failed);
}

static json_t *stalls_json(const struct vt_stalls *st)
{
	json_t *arr;
	size_t i;

	if (!st || !st->recorded)
		return json_null();
	arr = json_array();
	for (i = 0; i < st->n; i++) {
		const struct vt_stall *s = &st->v[i];

		json_array_append_new(arr, json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:b, s:i}", "t0", s->t0,
						     "t1", s->t1, "wall0", s->wall0, "wall1", s->wall1,
						     "length_s", s->length_s, "depth", s->depth, "ongoing",
						     s->ongoing, "pid", (int)s->pid));
	}
	return json_pack("{s:b, s:f, s:f, s:o, s:o}", "listening", st->listening, "threshold_s",
			 st->threshold_s, "resolution_s", st->resolution_s, "deepest", num(st->deepest),
			 "stalls", arr);
}

static json_t *level_json(const struct vt_limit_level *lv)
{
	return json_pack("{s:o, s:o, s:o}", "median", whole(lv->median), "lo", whole(lv->lo), "hi", whole(lv->hi));
}

/* A recommended memory limit (analyze/mem_limit.h): the figure, or why not, and its evidence. */
static json_t *limit_json(const struct vt_mem_limit *l)
{
	static const char *const why_key[] = {
		[VT_LIMIT_GIVEN] = "given", [VT_LIMIT_NOT_RECORDED] = "not_recorded",
		[VT_LIMIT_NOT_SETTLED] = "not_settled", [VT_LIMIT_WAS_HIT] = "limit_hit",
	};
	static const char *const headroom_key[] = {
		[VT_HEADROOM_SHARE] = "share_of_peak", [VT_HEADROOM_SPREAD] = "settled_spread",
		[VT_HEADROOM_MIN] = "minimum",
	};
	struct put p = { json_object(), false };
	struct put c = { json_object(), false };
	char buf[600];
	bool given = l->why == VT_LIMIT_GIVEN;

	put(&p, "recommended_bytes", given ? whole(l->recommended) : json_null());
	put(&p, "outcome", json_string(why_key[l->why]));
	put(&p, "headline", json_string(vt_mem_limit_headline(l, buf, sizeof(buf))));
	put(&p, "why", given ? json_null() : json_string(vt_mem_limit_why(l, buf, sizeof(buf))));
	put(&p, "rule", json_string(vt_mem_limit_rule()));
	put(&p, "setting", given ? json_string(vt_mem_limit_setting(l, buf, sizeof(buf))) : json_null());
	put(&p, "need_more_s", isfinite(l->need_more_s) && l->need_more_s > 0 ? num(l->need_more_s) : json_null());
	put(&p, "verdict", json_string(vt_verdict_key(l->verdict) ? vt_verdict_key(l->verdict) : "unknown"));
	put(&p, "peak_bytes", whole(l->peak));
	put(&p, "peak_t", num(l->peak_t));
	put(&p, "headroom_bytes", given ? whole(l->headroom) : json_null());
	put(&p, "headroom_by", given ? json_string(headroom_key[l->headroom_by]) : json_null());
	put(&p, "settled", json_boolean(l->settled));
	put(&p, "window_t0", num(l->window_t0));
	put(&p, "window_t1", num(l->window_t1));
	put(&p, "need", level_json(&l->need));
	put(&p, "spread_bytes", whole(l->spread));
	put(&p, "committed", level_json(&l->committed));
	put(&p, "rss_file", level_json(&l->rss_file));
	put(&p, "rss_shmem", level_json(&l->rss_shmem));
	put(&p, "swap_peak_bytes", whole(l->swap_peak));
	put(&c, "recorded", json_boolean(l->cgroup));
	put(&c, "limit_bytes", whole(l->cg_limit));
	put(&c, "current_median_bytes", whole(l->cg_current_median));
	put(&c, "current_peak_bytes", whole(l->cg_current_peak));
	put(&c, "events_high", whole(l->ev_high));
	put(&c, "events_max", whole(l->ev_max));
	put(&c, "events_oom_kill", whole(l->ev_oom_kill));
	put(&c, "oom_kill_at_exit", json_boolean(l->oom_at_exit));
	put(&c, "psi_some_pct", num(l->psi_some_pct));
	put(&c, "psi_full_pct", num(l->psi_full_pct));
	p.failed |= c.failed;
	put(&p, "cgroup", c.o);
	if (p.failed) {
		json_decref(p.o);
		return NULL;
	}
	return p.o;
}

/* Free memory that costs RAM over the recording (analyze/free_mem.h). */
static json_t *free_memory_json(const struct vt_series *s)
{
	struct vt_free_mem fm;
	struct put q = { json_object(), false };

	vt_free_mem_summarize(s, &fm);
	put(&q, "recorded", json_boolean(fm.recorded && fm.points > 0));
	put(&q, "points", json_integer((json_int_t)fm.points));
	put(&q, "t0", num(fm.t0));
	put(&q, "t1", num(fm.t1));
	put(&q, "last_quarter_t0", num(fm.q4_t0));
	put(&q, "free_resident_bytes", whole(fm.q4_resident));
	put(&q, "trimmable_bytes", whole(fm.q4_trimmable));
	put(&q, "heap_free_bytes", whole(fm.q4_heap_free));
	put(&q, "lo_bytes", whole(fm.lo));
	put(&q, "hi_bytes", whole(fm.hi));
	put(&q, "last_free_resident_bytes", whole(fm.last_resident));
	put(&q, "last_trimmable_bytes", whole(fm.last_trimmable));
	put(&q, "why_not", fm.points ? json_null()
		: json_string(fm.why_none ? fm.why_none : fm.recorded ? "no walk of the heap gave a figure"
		: "not in this recording (made before vitals measured it, or with --free-every 0)"));
	return q.failed ? (json_decref(q.o), NULL) : q.o;
}

int vt_render_analyze_json(FILE *out, const struct vt_analyze_report *r)
{
	struct put p = { vt_json_envelope(VT_SCHEMA_ANALYZE), false };
	struct vt_soak_short_lived sl;
	pid_t pid;

	if (!r->series || !r->verdict) {
		json_decref(p.o);
		return -1;
	}
	pid = vt_soak_threads_pid(r->series, r->verdict);
	put(&p, "recording", recording_json(r));
	put(&p, "verdict", verdict_json(r));
	vt_soak_short_lived(r->series, pid, &sl);
	put(&p, "threads", threads_json(r->series, pid, &sl));
	put(&p, "short_lived_threads",
	    sl.t1 > sl.t0 ? json_pack("{s:I, s:o, s:f, s:o, s:f, s:f}", "threads", (json_int_t)sl.threads,
				     "cores", num(sl.cores), "recorded_cores", sl.recorded_cores,
				     "process_cores", num(sl.process_cores), "t0", sl.t0, "t1", sl.t1)
			  : json_null());
	put(&p, "threads_diagnosis", r->thread_diag ? vt_render_diagnosis_json(r->thread_diag) : json_null());
	put(&p, "locks", r->locks ? vt_render_lock_history_json(r->locks) : json_null());
	put(&p, "profiles", r->profiles ? vt_render_prof_trend_json(r->profiles) : json_null());
	put(&p, "allocs", r->allocs ? vt_render_alloc_trend_json(r->allocs) : json_null());
	put(&p, "accept_queue", stalls_json(r->stalls));
	put(&p, "free_memory", free_memory_json(r->series));
	if (r->limit)
		put(&p, "memory_limit", limit_json(r->limit));
	put(&p, "events", events_json(r->series));
	return vt_json_write(out, p.o, false, p.failed);
}

/* ---- vitals.compare ----------------------------------------------------- */

/* Values of a compare row: bytes whole, counts (a median may fall between two), fractions and cores real. */
static json_t *field_value(enum vt_metric f, double v)
{
	return vt_metrics[f].unit == VT_UNIT_BYTES ? whole(v) : num(v);
}

static json_t *arm_json(const struct vt_cmp_arm *a, bool limit)
{
	const struct vt_recording_info *in = a->series ? &a->series->info : NULL;
	const char *key = vt_verdict_key(a->verdict.kind), *name = vt_verdict_name(a->verdict.kind);
	struct put p = { json_object(), false };
	struct put v = { json_object(), false };
	struct put w = { json_object(), false };
	struct put c = { json_object(), false };
	char line[640], why[VT_SOAK_WHY_MAX];
	int f;

	put(&p, "name", vt_json_text(a->name));
	put(&p, "target", in ? vt_json_text(in->target) : json_null());
	put(&p, "env", in && in->env[0] ? vt_json_text(in->env) : json_null());
	put(&p, "started_wall", in ? iso(in->started_wall) : json_null());
	put(&p, "samples", a->series ? json_integer((json_int_t)a->series->samples) : json_null());

	put(&v, "kind", json_string(key ? key : "unknown"));
	put(&v, "name", json_string(name ? name : "unknown"));
	put(&v, "headline", json_string(vt_soak_headline(&a->verdict, line, sizeof(line))));
	put(&v, "why", vt_json_text(vt_soak_why(&a->verdict, why, sizeof(why))));
	put(&v, "need_more_s", isfinite(a->verdict.need_more_s) && a->verdict.need_more_s > 0
				       ? num(a->verdict.need_more_s) : json_null());
	p.failed |= v.failed;
	put(&p, "verdict", v.o);

	put(&w, "settled", json_boolean(a->window_settled));
	put(&w, "t0", num(a->window_t0));
	put(&w, "t1", num(a->window_t1));
	put(&w, "duration_s", num(a->window_t1 - a->window_t0));
	put(&w, "samples", json_integer((json_int_t)a->window_samples));
	p.failed |= w.failed;
	put(&p, "window", w.o);

	for (f = 0; f < VT_M_COUNT; f++) {
		const struct vt_cmp_cell *cl = &a->cell[f];
		struct put x = { json_object(), false };

		if (!(vt_metrics[f].flags & VT_MF_COMPARE)) {
			json_decref(x.o);
			continue;
		}
		put(&x, "median", cl->known ? field_value(f, cl->median) : json_null());
		put(&x, "lo", cl->known ? field_value(f, cl->lo) : json_null());
		put(&x, "hi", cl->known ? field_value(f, cl->hi) : json_null());
		put(&x, "noise", cl->known ? field_value(f, cl->noise) : json_null());
		c.failed |= x.failed;
		put(&c, vt_metrics[f].key, x.o);
	}
	p.failed |= c.failed;
	put(&p, "cells", c.o);
	if (limit)
		put(&p, "memory_limit", limit_json(&a->limit));
	line[0] = '\0';
	put(&p, "summary", json_string(vt_compare_arm_line(a, line, sizeof(line))));
	if (p.failed) {
		json_decref(p.o);
		return NULL;
	}
	return p.o;
}

static json_t *field_json(const struct vt_comparison *cmp, enum vt_metric f, const char *metric_label)
{
	struct put p = { json_object(), false };
	json_t *arms = json_array();
	size_t i;

	put(&p, "key", json_string(vt_metrics[f].key));
	/* the deciding metric under its own name when the arms are not recordings */
	if (metric_label && cmp->narms && cmp->arms[0].verdict.metric == f)
		put(&p, "label", vt_json_text(metric_label));
	else
		put(&p, "label", json_string(vt_metrics[f].label));
	put(&p, "unit", json_string(vt_unit_name(vt_metrics[f].unit)));
	for (i = 0; i < cmp->narms; i++) {
		const struct vt_cmp_cell *cl = &cmp->arms[i].cell[f];
		const struct vt_cmp_diff *d = cmp->diff ? &cmp->diff[i][f] : NULL;
		bool dk = i > 0 && d && d->known;
		struct put x = { json_object(), false };

		put(&x, "arm", vt_json_text(cmp->arms[i].name));
		put(&x, "median", cl->known ? field_value(f, cl->median) : json_null());
		put(&x, "lo", cl->known ? field_value(f, cl->lo) : json_null());
		put(&x, "hi", cl->known ? field_value(f, cl->hi) : json_null());
		put(&x, "noise", cl->known ? field_value(f, cl->noise) : json_null());
		put(&x, "delta", dk ? field_value(f, d->delta) : json_null());
		put(&x, "pct", dk ? num(d->pct) : json_null());
		put(&x, "within_noise", dk ? json_boolean(d->within_noise) : json_null());
		p.failed |= x.failed;
		append(arms, x.o, &p.failed);
	}
	put(&p, "arms", arms);
	if (p.failed) {
		json_decref(p.o);
		return NULL;
	}
	return p.o;
}

int vt_render_compare_json(FILE *out, const struct vt_compare_report *r)
{
	const struct vt_comparison *cmp = r->cmp;
	struct put p = { vt_json_envelope(VT_SCHEMA_COMPARE), false };
	json_t *arms = json_array(), *fields = json_array();
	size_t i;
	int f;

	if (!cmp) {
		json_decref(p.o);
		json_decref(arms);
		json_decref(fields);
		return -1;
	}
	put(&p, "title", r->title ? vt_json_text(r->title) : json_null());
	put(&p, "baseline", cmp->narms ? vt_json_text(cmp->arms[0].name) : json_null());
	/* the first arm whose recording ran another program than the baseline's */
	put(&p, "other_command", cmp->other_command ? vt_json_text(cmp->arms[cmp->other_command].name)
						    : json_null());
	for (i = 0; i < cmp->narms; i++)
		append(arms, arm_json(&cmp->arms[i], r->limits), &p.failed);
	for (f = 0; f < VT_M_COUNT; f++)
		if (vt_metrics[f].flags & VT_MF_COMPARE)
			append(fields, field_json(cmp, f, r->metric_label), &p.failed);
	put(&p, "arms", arms);
	put(&p, "fields", fields);
	if (r->profile_diffs) {
		json_t *profiles = json_array();

		for (i = 1; profiles && i < cmp->narms; i++)
			append(profiles, vt_render_prof_diff_json(&r->profile_diffs[i - 1], cmp->arms[0].name,
								  cmp->arms[i].name), &p.failed);
		put(&p, "profiles", profiles ? profiles : json_null());
	} else {
		put(&p, "profiles", json_null());
	}
	if (r->alloc_diffs) {
		json_t *allocs = json_array();

		for (i = 1; allocs && i < cmp->narms; i++)
			append(allocs, vt_render_alloc_diff_json(&r->alloc_diffs[i - 1], cmp->arms[0].name,
								 cmp->arms[i].name), &p.failed);
		put(&p, "allocs", allocs ? allocs : json_null());
	} else {
		put(&p, "allocs", json_null());
	}
	return vt_json_write(out, p.o, false, p.failed);
}

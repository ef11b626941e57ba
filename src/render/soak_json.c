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
#include "base/json_lib.h"

#include <math.h>
#include <string.h>

#include "analyze/free_mem.h"

#define MiB (1024.0 * 1024.0)

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
	struct vt_json_put p = { json_object(), false };
	json_t *metrics = json_array();
	size_t m;

	vt_json_put(&p, "path", vt_json_text(r->path));
	vt_json_put(&p, "target", vt_json_text(in->target));
	vt_json_put(&p, "arm", in->arm[0] ? vt_json_text(in->arm) : json_null());
	vt_json_put(&p, "env", in->env[0] ? vt_json_text(in->env) : json_null());
	vt_json_put(&p, "host", in->host[0] ? vt_json_text(in->host) : json_null());
	vt_json_put(&p, "ncpus", in->ncpus > 0 ? json_integer(in->ncpus) : json_null());
	vt_json_put(&p, "recorded_by", in->vitals_version[0] ? vt_json_text(in->vitals_version) : json_null());
	vt_json_put(&p, "store_schema", json_integer(in->schema));
	vt_json_put(&p, "every_s", in->every_s > 0 ? vt_json_real(in->every_s) : json_null());
	vt_json_put(&p, "smaps_every_s", in->smaps_every_s > 0 ? vt_json_real(in->smaps_every_s) : json_null());
	vt_json_put(&p, "planned_s", in->planned_s > 0 ? vt_json_real(in->planned_s) : json_null());
	vt_json_put(&p, "started_wall", vt_json_utc(in->started_wall));
	vt_json_put(&p, "started_unix", in->started_wall > 0 ? vt_json_real(in->started_wall) : json_null());
	vt_json_put(&p, "heap", json_boolean(in->heap));
	vt_json_put(&p, "finished", json_boolean(in->finished));
	vt_json_put(&p, "writing", json_boolean(in->writing));
	vt_json_put(&p, "redacted", in->redacted == VT_REDACTED_SECRETS ? json_string("secrets")
			    : in->redacted == VT_REDACTED_ARGS ? json_string("arguments") : json_null());
	{
		char names[256], *tok, *save = NULL;
		json_t *list = json_array();

		vt_recording_redacted_names(in, names, sizeof(names));
		for (tok = strtok_r(names, ",", &save); tok && list; tok = strtok_r(NULL, ",", &save))
			json_array_append_new(list, vt_json_text(tok + (*tok == ' ')));
		vt_json_put(&p, "redacted_names", list);
	}
	vt_json_put(&p, "wal_unread", json_boolean(in->wal_unread));
	vt_json_put(&p, "samples", json_integer((json_int_t)s->samples));
	vt_json_put(&p, "points", json_integer((json_int_t)s->n));
	vt_json_put(&p, "rollups", json_integer((json_int_t)in->rollups));
	vt_json_put(&p, "rollups_damaged", json_boolean(in->rollups_damaged));
	for (m = 0; m < VT_M_COUNT; m++)
		if (s->m[m])
			vt_json_append(metrics, json_string(vt_metrics[m].key), &p.failed);
	vt_json_put(&p, "metrics", metrics);
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
	struct vt_json_put p = { json_object(), false };

	vt_json_put(&p, "t0", any ? vt_json_real(v->t0) : json_null());
	vt_json_put(&p, "t1", any ? vt_json_real(v->t1) : json_null());
	vt_json_put(&p, "duration_s", any ? vt_json_real(v->t1 - v->t0) : json_null());
	vt_json_put(&p, "wall_start", any ? vt_json_utc(s->wall[v->from]) : json_null());
	vt_json_put(&p, "pid", any && s->pid[v->from] > 0 ? json_integer(s->pid[v->from]) : json_null());
	vt_json_put(&p, "from_point", json_integer((json_int_t)v->from));
	vt_json_put(&p, "to_point", json_integer((json_int_t)v->to));
	vt_json_put(&p, "samples", json_integer((json_int_t)v->samples));
	vt_json_put(&p, "restarts", json_integer(v->restarts));
	vt_json_put(&p, "gaps", json_integer(v->gaps));
	vt_json_put(&p, "running", json_boolean(v->running));
	vt_json_put(&p, "died", json_boolean(v->died));
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
		struct vt_json_put p = { json_object(), false };

		vt_json_put(&p, "t0", vt_json_real(q->t0));
		vt_json_put(&p, "t1", vt_json_real(q->t1));
		vt_json_put(&p, "samples", json_integer((json_int_t)q->samples));
		vt_json_put(&p, "floor_bytes", vt_json_metric(v->metric, q->floor));
		vt_json_put(&p, "median_bytes", vt_json_metric(v->metric, q->median));
		vt_json_put(&p, "peak_bytes", vt_json_metric(v->metric, q->peak));
		failed |= p.failed;
		vt_json_append(arr, p.o, &failed);
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
			vt_json_append(arr, json_string(names[k]), failed);
	return arr;
}

static json_t *verdict_json(const struct vt_analyze_report *r)
{
	const struct vt_soak_verdict *v = r->verdict;
	enum vt_metric m = v->metric;
	struct vt_json_put p = { json_object(), false };
	char line[640], why[VT_SOAK_WHY_MAX];
	const char *key = vt_verdict_key(v->kind), *name = vt_verdict_name(v->kind);

	vt_json_put(&p, "kind", json_string(key ? key : "unknown"));
	vt_json_put(&p, "name", json_string(name ? name : "unknown"));
	vt_json_put(&p, "headline", json_string(vt_soak_headline(v, line, sizeof(line))));
	vt_json_put(&p, "why", vt_json_text(vt_soak_why_as(v, r->metric_label, why, sizeof(why))));
	vt_json_put(&p, "metric", json_string((unsigned)m < VT_M_COUNT ? vt_metrics[m].key : "unknown"));
	if (r->metric_label)
		vt_json_put(&p, "metric_label", vt_json_text(r->metric_label));
	vt_json_put(&p, "unit", json_string(vt_unit_name((unsigned)m < VT_M_COUNT ? vt_metrics[m].unit : VT_UNIT_BYTES)));
	vt_json_put(&p, "span", span_json(r));
	vt_json_put(&p, "noise_bytes", vt_json_metric(m, v->noise));
	vt_json_put(&p, "tolerance_bytes", vt_json_metric(m, v->tolerance));
	vt_json_put(&p, "quarters", quarters_json(v));
	vt_json_put(&p, "floor_drift_bytes", vt_json_metric(m, v->floor_drift));

	if (v->settled) {
		struct vt_json_put q = { json_object(), false };
		vt_json_put(&q, "settle_s", vt_json_real(v->settle_s));
		vt_json_put(&q, "t0", vt_json_real(v->settled_t0));
		vt_json_put(&q, "from_point", json_integer((json_int_t)v->settled_from));
		vt_json_put(&q, "lo_bytes", vt_json_metric(m, v->settled_lo));
		vt_json_put(&q, "hi_bytes", vt_json_metric(m, v->settled_hi));
		vt_json_put(&q, "median_bytes", vt_json_metric(m, v->settled_median));
		vt_json_put(&q, "window_s", vt_json_real(v->settled_window_s));
		vt_json_put(&q, "points", json_integer((json_int_t)v->settled_points));
		vt_json_put(&q, "plateau", json_boolean(!vt_soak_settled_not_yet(v)));
		vt_json_put(&q, "missing", plateau_missing_json(v->plateau_missing, &q.failed));
		p.failed |= q.failed;
		vt_json_put(&p, "settled", q.o);
	} else {
		vt_json_put(&p, "settled", json_null());
	}

	{
		struct vt_json_put q = { json_object(), false };

		vt_json_put(&q, "bytes_per_s", vt_json_real(v->slope));
		vt_json_put(&q, "lo", vt_json_real(v->slope_lo));
		vt_json_put(&q, "hi", vt_json_real(v->slope_hi));
		vt_json_put(&q, "mib_per_h", vt_json_real(v->slope * 3600 / MiB));
		vt_json_put(&q, "mib_per_h_lo", vt_json_real(v->slope_lo * 3600 / MiB));
		vt_json_put(&q, "mib_per_h_hi", vt_json_real(v->slope_hi * 3600 / MiB));
		vt_json_put(&q, "interval", json_real(0.90));
		vt_json_put(&q, "window_t0", vt_json_real(v->slope_window_t0));
		vt_json_put(&q, "window_s", vt_json_real(v->slope_window_s));
		vt_json_put(&q, "drift_bound_bytes", vt_json_metric(m, v->drift_not_ruled_out));
		p.failed |= q.failed;
		vt_json_put(&p, "slope", q.o);
	}

	if (isfinite(v->step_t)) {
		struct vt_json_put q = { json_object(), false };

		vt_json_put(&q, "t", vt_json_real(v->step_t));
		vt_json_put(&q, "bytes", vt_json_metric(m, v->step_bytes));
		vt_json_put(&q, "before", vt_json_metric(m, v->step_before));
		vt_json_put(&q, "after", vt_json_metric(m, v->step_after));
		p.failed |= q.failed;
		vt_json_put(&p, "step", q.o);
	} else {
		vt_json_put(&p, "step", json_null());
	}

	vt_json_put(&p, "need_more_s", isfinite(v->need_more_s) && v->need_more_s > 0 ? vt_json_real(v->need_more_s)
									  : json_null());
	{
		struct vt_json_put q = { json_object(), false };

		vt_json_put(&q, "window_s", vt_json_real(v->plateau_window_s));
		vt_json_put(&q, "points", json_integer((json_int_t)v->plateau_points));
		vt_json_put(&q, "material_bytes", vt_json_metric(m, v->material));
		p.failed |= q.failed;
		vt_json_put(&p, "plateau_needs", q.o);
	}
	{
		const struct vt_swap_motion *w = &v->swap;
		struct vt_json_put q = { json_object(), false };

		vt_json_put(&q, "seen", json_boolean(w->seen));
		vt_json_put(&q, "episodes", json_integer(w->seen ? w->episodes : 0));
		vt_json_put(&q, "t0", w->seen ? vt_json_real(w->t0) : json_null());
		vt_json_put(&q, "t1", w->seen ? vt_json_real(w->t1) : json_null());
		vt_json_put(&q, "anon_delta_bytes", w->seen ? vt_json_whole(w->anon_delta) : json_null());
		vt_json_put(&q, "swap_delta_bytes", w->seen ? vt_json_whole(w->swap_delta) : json_null());
		vt_json_put(&q, "committed_delta_bytes", w->seen ? vt_json_whole(w->committed_delta) : json_null());
		vt_json_put(&q, "anon_range_lo_bytes", vt_json_whole(w->anon_range_lo));
		vt_json_put(&q, "anon_range_hi_bytes", vt_json_whole(w->anon_range_hi));
		p.failed |= q.failed;
		vt_json_put(&p, "swap", q.o);
	}
	if (v->heap_live_kind) {
		struct vt_json_put q = { json_object(), false };

		vt_json_put(&q, "median_bytes", vt_json_whole(v->heap_live_median));
		vt_json_put(&q, "floor_drift_bytes", vt_json_whole(v->heap_live_drift));
		vt_json_put(&q, "window_rise_bytes", vt_json_whole(v->heap_live_rise));
		vt_json_put(&q, "kind", json_string(vt_verdict_key(v->heap_live_kind)));
		p.failed |= q.failed;
		vt_json_put(&p, "heap_live", q.o);
	} else {
		vt_json_put(&p, "heap_live", json_null());
	}
	if (v->reason == VT_SOAK_WHY_RATCHET) {
		struct vt_json_put q = { json_object(), false };

		vt_json_put(&q, "records", json_integer((json_int_t)v->floor_records));
		vt_json_put(&q, "stretches", json_integer((json_int_t)(v->floor_bins ? v->floor_bins - 1 : 0)));
		p.failed |= q.failed;
		vt_json_put(&p, "ratchet", q.o);
	} else {
		vt_json_put(&p, "ratchet", json_null());
	}
	{
		struct vt_json_put q = { json_object(), false };

		vt_json_put(&q, "cores", vt_json_real(v->cpu_cores));
		vt_json_put(&q, "user_cores", vt_json_real(v->cpu_user_cores));
		vt_json_put(&q, "sys_cores", vt_json_real(v->cpu_sys_cores));
		p.failed |= q.failed;
		vt_json_put(&p, "cpu", q.o);
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
		struct vt_json_put p = { json_object(), false };
		int k;

		vt_json_put(&p, "pid", json_integer(th->pid));
		vt_json_put(&p, "tid", json_integer(th->tid));
		vt_json_put(&p, "name", vt_json_text(th->name));
		vt_json_put(&p, "t_first", vt_json_real(th->t_first));
		vt_json_put(&p, "t_last", vt_json_real(th->t_last));
		vt_json_put(&p, "cpu_s", json_real((double)th->delta[VT_TC_CPU_NS] / 1e9));
		for (k = 0; k < VT_TC_COUNT; k++)
			vt_json_put(&p, vt_thread_counters[k].rate_key,
			    vt_json_real(vt_thread_counter_rate(k, th->delta[k], dt)));
		vt_json_put(&p, "doing", doing_json(&th->doing));
		vt_json_put(&p, "short_lived", json_boolean((!match || th->pid == pid) && vt_soak_thread_short_lived(sl, th)));
		failed |= p.failed;
		vt_json_append(arr, p.o, &failed);
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
		struct vt_json_put p = { json_object(), false };

		vt_json_put(&p, "t", vt_json_real(e->t));
		vt_json_put(&p, "wall", vt_json_utc(e->wall));
		vt_json_put(&p, "wall_unix", e->wall > 0 ? vt_json_real(e->wall) : json_null());
		vt_json_put(&p, "kind", json_string(vt_soak_event_name(e->kind)));
		vt_json_put(&p, "pid", e->pid > 0 ? json_integer(e->pid) : json_null());
		vt_json_put(&p, "detail", vt_json_text(e->detail));
		failed |= p.failed;
		vt_json_append(arr, p.o, &failed);
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
			 st->threshold_s, "resolution_s", st->resolution_s, "deepest", vt_json_real(st->deepest),
			 "stalls", arr);
}

static json_t *level_json(const struct vt_limit_level *lv)
{
	return json_pack("{s:o, s:o, s:o}", "median", vt_json_whole(lv->median), "lo", vt_json_whole(lv->lo), "hi", vt_json_whole(lv->hi));
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
	struct vt_json_put p = { json_object(), false };
	struct vt_json_put c = { json_object(), false };
	char buf[600];
	bool given = l->why == VT_LIMIT_GIVEN;

	vt_json_put(&p, "recommended_bytes", given ? vt_json_whole(l->recommended) : json_null());
	vt_json_put(&p, "outcome", json_string(why_key[l->why]));
	vt_json_put(&p, "headline", json_string(vt_mem_limit_headline(l, buf, sizeof(buf))));
	vt_json_put(&p, "why", given ? json_null() : json_string(vt_mem_limit_why(l, buf, sizeof(buf))));
	vt_json_put(&p, "rule", json_string(vt_mem_limit_rule()));
	vt_json_put(&p, "setting", given ? json_string(vt_mem_limit_setting(l, buf, sizeof(buf))) : json_null());
	vt_json_put(&p, "need_more_s", isfinite(l->need_more_s) && l->need_more_s > 0 ? vt_json_real(l->need_more_s) : json_null());
	vt_json_put(&p, "verdict", json_string(vt_verdict_key(l->verdict) ? vt_verdict_key(l->verdict) : "unknown"));
	vt_json_put(&p, "peak_bytes", vt_json_whole(l->peak));
	vt_json_put(&p, "peak_t", vt_json_real(l->peak_t));
	vt_json_put(&p, "headroom_bytes", given ? vt_json_whole(l->headroom) : json_null());
	vt_json_put(&p, "headroom_by", given ? json_string(headroom_key[l->headroom_by]) : json_null());
	vt_json_put(&p, "settled", json_boolean(l->settled));
	vt_json_put(&p, "window_t0", vt_json_real(l->window_t0));
	vt_json_put(&p, "window_t1", vt_json_real(l->window_t1));
	vt_json_put(&p, "need", level_json(&l->need));
	vt_json_put(&p, "spread_bytes", vt_json_whole(l->spread));
	vt_json_put(&p, "committed", level_json(&l->committed));
	vt_json_put(&p, "rss_file", level_json(&l->rss_file));
	vt_json_put(&p, "rss_shmem", level_json(&l->rss_shmem));
	vt_json_put(&p, "swap_peak_bytes", vt_json_whole(l->swap_peak));
	vt_json_put(&c, "recorded", json_boolean(l->cgroup));
	vt_json_put(&c, "limit_bytes", vt_json_whole(l->cg_limit));
	vt_json_put(&c, "current_median_bytes", vt_json_whole(l->cg_current_median));
	vt_json_put(&c, "current_peak_bytes", vt_json_whole(l->cg_current_peak));
	vt_json_put(&c, "events_high", vt_json_whole(l->ev_high));
	vt_json_put(&c, "events_max", vt_json_whole(l->ev_max));
	vt_json_put(&c, "events_oom_kill", vt_json_whole(l->ev_oom_kill));
	vt_json_put(&c, "oom_kill_at_exit", json_boolean(l->oom_at_exit));
	vt_json_put(&c, "psi_some_pct", vt_json_real(l->psi_some_pct));
	vt_json_put(&c, "psi_full_pct", vt_json_real(l->psi_full_pct));
	p.failed |= c.failed;
	vt_json_put(&p, "cgroup", c.o);
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
	struct vt_json_put q = { json_object(), false };

	vt_free_mem_summarize(s, &fm);
	vt_json_put(&q, "recorded", json_boolean(fm.recorded && fm.points > 0));
	vt_json_put(&q, "points", json_integer((json_int_t)fm.points));
	vt_json_put(&q, "t0", vt_json_real(fm.t0));
	vt_json_put(&q, "t1", vt_json_real(fm.t1));
	vt_json_put(&q, "last_quarter_t0", vt_json_real(fm.q4_t0));
	vt_json_put(&q, "free_resident_bytes", vt_json_whole(fm.q4_resident));
	vt_json_put(&q, "trimmable_bytes", vt_json_whole(fm.q4_trimmable));
	vt_json_put(&q, "heap_free_bytes", vt_json_whole(fm.q4_heap_free));
	vt_json_put(&q, "lo_bytes", vt_json_whole(fm.lo));
	vt_json_put(&q, "hi_bytes", vt_json_whole(fm.hi));
	vt_json_put(&q, "last_free_resident_bytes", vt_json_whole(fm.last_resident));
	vt_json_put(&q, "last_trimmable_bytes", vt_json_whole(fm.last_trimmable));
	vt_json_put(&q, "why_not", fm.points ? json_null()
		: json_string(fm.why_none ? fm.why_none : fm.recorded ? "no walk of the heap gave a figure"
		: "not in this recording (made before vitals measured it, or with --free-every 0)"));
	return q.failed ? (json_decref(q.o), NULL) : q.o;
}

int vt_render_analyze_json(FILE *out, const struct vt_analyze_report *r)
{
	struct vt_json_put p = { vt_json_envelope(VT_SCHEMA_ANALYZE), false };
	struct vt_soak_short_lived sl;
	pid_t pid;

	if (!r->series || !r->verdict) {
		json_decref(p.o);
		return -1;
	}
	pid = vt_soak_threads_pid(r->series, r->verdict);
	vt_json_put(&p, "recording", recording_json(r));
	vt_json_put(&p, "verdict", verdict_json(r));
	vt_soak_short_lived(r->series, pid, &sl);
	vt_json_put(&p, "threads", threads_json(r->series, pid, &sl));
	vt_json_put(&p, "short_lived_threads",
	    sl.t1 > sl.t0 ? json_pack("{s:I, s:o, s:f, s:o, s:f, s:f}", "threads", (json_int_t)sl.threads,
				     "cores", vt_json_real(sl.cores), "recorded_cores", sl.recorded_cores,
				     "process_cores", vt_json_real(sl.process_cores), "t0", sl.t0, "t1", sl.t1)
			  : json_null());
	vt_json_put(&p, "threads_diagnosis", r->thread_diag ? vt_render_diagnosis_json(r->thread_diag) : json_null());
	vt_json_put(&p, "locks", r->locks ? vt_render_lock_history_json(r->locks) : json_null());
	vt_json_put(&p, "profiles", r->profiles ? vt_render_prof_trend_json(r->profiles) : json_null());
	vt_json_put(&p, "allocs", r->allocs ? vt_render_alloc_trend_json(r->allocs) : json_null());
	vt_json_put(&p, "accept_queue", stalls_json(r->stalls));
	vt_json_put(&p, "free_memory", free_memory_json(r->series));
	if (r->limit)
		vt_json_put(&p, "memory_limit", limit_json(r->limit));
	vt_json_put(&p, "events", events_json(r->series));
	return vt_json_write(out, p.o, false, p.failed);
}

/* ---- vitals.compare ----------------------------------------------------- */

/* Values of a compare row: bytes whole, counts (a median may fall between two), fractions and cores real. */
static json_t *field_value(enum vt_metric f, double v)
{
	return vt_metrics[f].unit == VT_UNIT_BYTES ? vt_json_whole(v) : vt_json_real(v);
}

static json_t *arm_json(const struct vt_cmp_arm *a, bool limit)
{
	const struct vt_recording_info *in = a->series ? &a->series->info : NULL;
	const char *key = vt_verdict_key(a->verdict.kind), *name = vt_verdict_name(a->verdict.kind);
	struct vt_json_put p = { json_object(), false };
	struct vt_json_put v = { json_object(), false };
	struct vt_json_put w = { json_object(), false };
	struct vt_json_put c = { json_object(), false };
	char line[640], why[VT_SOAK_WHY_MAX];
	int f;

	vt_json_put(&p, "name", vt_json_text(a->name));
	vt_json_put(&p, "target", in ? vt_json_text(in->target) : json_null());
	vt_json_put(&p, "env", in && in->env[0] ? vt_json_text(in->env) : json_null());
	vt_json_put(&p, "started_wall", in ? vt_json_utc(in->started_wall) : json_null());
	vt_json_put(&p, "samples", a->series ? json_integer((json_int_t)a->series->samples) : json_null());

	vt_json_put(&v, "kind", json_string(key ? key : "unknown"));
	vt_json_put(&v, "name", json_string(name ? name : "unknown"));
	vt_json_put(&v, "headline", json_string(vt_soak_headline(&a->verdict, line, sizeof(line))));
	vt_json_put(&v, "why", vt_json_text(vt_soak_why(&a->verdict, why, sizeof(why))));
	vt_json_put(&v, "need_more_s", isfinite(a->verdict.need_more_s) && a->verdict.need_more_s > 0
				       ? vt_json_real(a->verdict.need_more_s) : json_null());
	p.failed |= v.failed;
	vt_json_put(&p, "verdict", v.o);

	vt_json_put(&w, "settled", json_boolean(a->window_settled));
	vt_json_put(&w, "t0", vt_json_real(a->window_t0));
	vt_json_put(&w, "t1", vt_json_real(a->window_t1));
	vt_json_put(&w, "duration_s", vt_json_real(a->window_t1 - a->window_t0));
	vt_json_put(&w, "samples", json_integer((json_int_t)a->window_samples));
	p.failed |= w.failed;
	vt_json_put(&p, "window", w.o);

	for (f = 0; f < VT_M_COUNT; f++) {
		const struct vt_cmp_cell *cl = &a->cell[f];
		struct vt_json_put x = { json_object(), false };

		if (!(vt_metrics[f].flags & VT_MF_COMPARE)) {
			json_decref(x.o);
			continue;
		}
		vt_json_put(&x, "median", cl->known ? field_value(f, cl->median) : json_null());
		vt_json_put(&x, "lo", cl->known ? field_value(f, cl->lo) : json_null());
		vt_json_put(&x, "hi", cl->known ? field_value(f, cl->hi) : json_null());
		vt_json_put(&x, "noise", cl->known ? field_value(f, cl->noise) : json_null());
		c.failed |= x.failed;
		vt_json_put(&c, vt_metrics[f].key, x.o);
	}
	p.failed |= c.failed;
	vt_json_put(&p, "cells", c.o);
	if (limit)
		vt_json_put(&p, "memory_limit", limit_json(&a->limit));
	line[0] = '\0';
	vt_json_put(&p, "summary", json_string(vt_compare_arm_line(a, line, sizeof(line))));
	if (p.failed) {
		json_decref(p.o);
		return NULL;
	}
	return p.o;
}

static json_t *field_json(const struct vt_comparison *cmp, enum vt_metric f, const char *metric_label)
{
	struct vt_json_put p = { json_object(), false };
	json_t *arms = json_array();
	size_t i;

	vt_json_put(&p, "key", json_string(vt_metrics[f].key));
	/* the deciding metric under its own name when the arms are not recordings */
	if (metric_label && cmp->narms && cmp->arms[0].verdict.metric == f)
		vt_json_put(&p, "label", vt_json_text(metric_label));
	else
		vt_json_put(&p, "label", json_string(vt_metrics[f].label));
	vt_json_put(&p, "unit", json_string(vt_unit_name(vt_metrics[f].unit)));
	for (i = 0; i < cmp->narms; i++) {
		const struct vt_cmp_cell *cl = &cmp->arms[i].cell[f];
		const struct vt_cmp_diff *d = cmp->diff ? &cmp->diff[i][f] : NULL;
		bool dk = i > 0 && d && d->known;
		struct vt_json_put x = { json_object(), false };

		vt_json_put(&x, "arm", vt_json_text(cmp->arms[i].name));
		vt_json_put(&x, "median", cl->known ? field_value(f, cl->median) : json_null());
		vt_json_put(&x, "lo", cl->known ? field_value(f, cl->lo) : json_null());
		vt_json_put(&x, "hi", cl->known ? field_value(f, cl->hi) : json_null());
		vt_json_put(&x, "noise", cl->known ? field_value(f, cl->noise) : json_null());
		vt_json_put(&x, "delta", dk ? field_value(f, d->delta) : json_null());
		vt_json_put(&x, "pct", dk ? vt_json_real(d->pct) : json_null());
		vt_json_put(&x, "within_noise", dk ? json_boolean(d->within_noise) : json_null());
		vt_json_put(&x, "trimmed", dk ? json_boolean(d->trimmed) : json_null());
		p.failed |= x.failed;
		vt_json_append(arms, x.o, &p.failed);
	}
	vt_json_put(&p, "arms", arms);
	if (p.failed) {
		json_decref(p.o);
		return NULL;
	}
	return p.o;
}

int vt_render_compare_json(FILE *out, const struct vt_compare_report *r)
{
	const struct vt_comparison *cmp = r->cmp;
	struct vt_json_put p = { vt_json_envelope(VT_SCHEMA_COMPARE), false };
	json_t *arms = json_array(), *fields = json_array();
	size_t i;
	int f;

	if (!cmp) {
		json_decref(p.o);
		json_decref(arms);
		json_decref(fields);
		return -1;
	}
	vt_json_put(&p, "title", r->title ? vt_json_text(r->title) : json_null());
	vt_json_put(&p, "baseline", cmp->narms ? vt_json_text(cmp->arms[0].name) : json_null());
	/* the first arm whose recording ran another program than the baseline's */
	vt_json_put(&p, "other_command", cmp->other_command ? vt_json_text(cmp->arms[cmp->other_command].name)
						    : json_null());
	for (i = 0; i < cmp->narms; i++)
		vt_json_append(arms, arm_json(&cmp->arms[i], r->limits), &p.failed);
	for (f = 0; f < VT_M_COUNT; f++)
		if (vt_metrics[f].flags & VT_MF_COMPARE)
			vt_json_append(fields, field_json(cmp, f, r->metric_label), &p.failed);
	vt_json_put(&p, "arms", arms);
	vt_json_put(&p, "fields", fields);
	if (r->profile_diffs) {
		json_t *profiles = json_array();

		for (i = 1; profiles && i < cmp->narms; i++)
			vt_json_append(profiles, vt_render_prof_diff_json(&r->profile_diffs[i - 1], cmp->arms[0].name,
								  cmp->arms[i].name), &p.failed);
		vt_json_put(&p, "profiles", profiles ? profiles : json_null());
	} else {
		vt_json_put(&p, "profiles", json_null());
	}
	if (r->alloc_diffs) {
		json_t *allocs = json_array();

		for (i = 1; allocs && i < cmp->narms; i++)
			vt_json_append(allocs, vt_render_alloc_diff_json(&r->alloc_diffs[i - 1], cmp->arms[0].name,
								 cmp->arms[i].name), &p.failed);
		vt_json_put(&p, "allocs", allocs ? allocs : json_null());
	} else {
		vt_json_put(&p, "allocs", json_null());
	}
	return vt_json_write(out, p.o, false, p.failed);
}

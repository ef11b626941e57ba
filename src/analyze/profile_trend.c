/*
 * profile_trend.c — stored profiles over time, and two recordings'
 * profiles compared (see profile_trend.h).
 */
#include "analyze/profile_trend.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A sample of the soak this near a profile's start or end counts as taken there (seconds). */
#define NEAR_S 0.5

/* The process's cumulative CPU (user + system) at the ends of point i; false when unknown. */
static bool point_cpu(const struct vt_series *s, size_t i, double *at_t0, double *at_t1)
{
	const struct vt_stat *u = s->m[VT_M_CPU_USER_S], *y = s->m[VT_M_CPU_SYS_S];

	if (!u || !y || isnan(u[i].lo) || isnan(y[i].lo) || isnan(u[i].hi) || isnan(y[i].hi))
		return false;
	*at_t0 = u[i].lo + y[i].lo;
	*at_t1 = u[i].hi + y[i].hi;
	return true;
}

/*
 * Cores the process used from t0 to t1, from the soak's samples of pid:
 * its CPU at the last sample at or before t0 (else the first after) and
 * at the first at or after t1 (else the last before).  NAN when it cannot
 * be told (no samples of it, or the two are the same sample).
 */
static double cores_from_series(const struct vt_series *s, pid_t pid, double t0, double t1)
{
	double best0_t = NAN, best0_v = 0, best1_t = NAN, best1_v = 0;
	double after0_t = NAN, after0_v = 0, before1_t = NAN, before1_v = 0;
	size_t i;
	int k;

	if (!s)
		return NAN;
	for (i = 0; i < s->n; i++) {
		double cpu[2], at[2] = { s->t0[i], s->t1[i] };

		if (s->pid[i] != pid || !point_cpu(s, i, &cpu[0], &cpu[1]))
			continue;
		for (k = 0; k < 2; k++) {
			double t = at[k], v = cpu[k];

			if (t <= t0 + NEAR_S && (isnan(best0_t) || t > best0_t))
				best0_t = t, best0_v = v;
			if (t > t0 + NEAR_S && (isnan(after0_t) || t < after0_t))
				after0_t = t, after0_v = v;
			if (t >= t1 - NEAR_S && (isnan(best1_t) || t < best1_t))
				best1_t = t, best1_v = v;
			if (t < t1 - NEAR_S && (isnan(before1_t) || t > before1_t))
				before1_t = t, before1_v = v;
		}
	}
	if (isnan(best0_t))
		best0_t = after0_t, best0_v = after0_v;
	if (isnan(best1_t))
		best1_t = before1_t, best1_v = before1_v;
	if (isnan(best0_t) || isnan(best1_t) || best1_t - best0_t < 0.1 || best1_v < best0_v)
		return NAN;
	return (best1_v - best0_v) / (best1_t - best0_t);
}

static void row_from_summary(struct vt_prof_trend_row *row, const struct vt_prof_summary *sum, uint32_t nbuckets,
			     bool *seen)
{
	uint32_t b, k;

	row->cpu_samples = sum->cpu_samples;
	row->few_samples = sum->few_samples;
	for (b = 0; b < nbuckets; b++)
		vt_prof_share_of(0, sum->cpu_samples, &row->share[b]);
	for (k = 0; k < sum->nbuckets; k++) {
		b = sum->buckets[k].bucket;
		if (b >= nbuckets)
			continue;
		row->share[b] = sum->buckets[k].cpu;
		if (sum->buckets[k].cpu.samples)
			seen[b] = true;
	}
}

/* The rules to use: the caller's, else the built-ins made here (*own, freed by the caller). */
static int rules_or_builtin(const struct vt_bucket_rules *rules, struct vt_bucket_rules **own,
			    const struct vt_bucket_rules **use, struct vt_err *err)
{
	int rc;

	*own = NULL;
	*use = rules;
	if (rules)
		return VT_OK;
	if ((rc = vt_bucket_rules_builtin(own, err)))
		return rc;
	*use = *own;
	return VT_OK;
}

int vt_prof_trend_load(const char *path, const struct vt_series *s, const struct vt_bucket_rules *rules,
		       struct vt_prof_trend *out, struct vt_err *err)
{
	const struct vt_bucket_rules *r;
	struct vt_bucket_rules *own;
	struct vt_store_profiles *sp = NULL;
	size_t i, n;
	uint32_t b;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = rules_or_builtin(rules, &own, &r, err)))
		return rc;
	out->nbuckets = r->nbuckets < VT_BUCKET_MAX_BUCKETS ? r->nbuckets : VT_BUCKET_MAX_BUCKETS;
	for (b = 0; b < out->nbuckets; b++)
		snprintf(out->bucket_names[b], sizeof(out->bucket_names[b]), "%s", r->buckets[b].name);
	if ((rc = vt_store_profiles_open(path, &sp, err)))
		goto done;
	n = vt_store_profiles_count(sp);
	if (n && !(out->rows = calloc(n, sizeof(*out->rows)))) {
		rc = vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
		goto done;
	}
	for (i = 0; i < n; i++) {
		struct vt_prof_trend_row *row = &out->rows[out->n++];
		struct vt_prof_summary *sum = NULL;
		struct vt_profile *p = NULL;
		struct vt_err e;

		row->at = *vt_store_profiles_at(sp, i);
		row->cores = NAN;
		rc = vt_store_profiles_read(sp, i, &p, &e);
		if (rc == VT_OK)
			rc = vt_prof_summarize(p, r, NULL, &sum, &e);
		if (rc == VT_E_NOMEM) {
			vt_profile_free(&p);
			*err = e;
			goto done;
		}
		if (rc != VT_OK) {
			row->error = true;
			snprintf(row->err_msg, sizeof(row->err_msg), "%s", e.msg);
			vt_profile_free(&p);
			continue;
		}
		row_from_summary(row, sum, out->nbuckets, out->seen);
		row->cores = cores_from_series(s, row->at.pid, row->at.t, row->at.t + row->at.duration_s);
		row->cores_from_samples = !isnan(row->cores);
		if (isnan(row->cores) && p->meta.process_cpu_s >= 0 && p->meta.duration_s > 0)
			row->cores = p->meta.process_cpu_s / p->meta.duration_s;
		vt_prof_summary_free(&sum);
		vt_profile_free(&p);
	}
	rc = VT_OK;
	vt_prof_trend_judge(out);
done:
	vt_store_profiles_close(&sp);
	vt_bucket_rules_free(&own);
	if (rc != VT_OK)
		vt_prof_trend_release(out);
	return rc;
}

void vt_prof_trend_release(struct vt_prof_trend *t)
{
	free(t->rows);
	t->rows = NULL;
	t->n = 0;
}

static int by_delta(const void *a, const void *b)
{
	const struct vt_prof_growth *x = a, *y = b;

	return x->delta < y->delta ? 1 : x->delta > y->delta ? -1 : (int)x->bucket - (int)y->bucket;
}

void vt_prof_trend_judge(struct vt_prof_trend *t)
{
	struct vt_prof_growth all[VT_BUCKET_MAX_BUCKETS];
	size_t i, usable = 0, from = 0, to = 0, first = SIZE_MAX, last = 0;
	bool cores_known = true;
	const struct vt_prof_trend_row *f, *l;
	double cf, ct;
	uint32_t b, nall = 0;

	t->ngrew = 0;
	t->why[0] = '\0';
	if (t->n == 0) {
		t->verdict = VT_PT_NONE;
		snprintf(t->why, sizeof(t->why), "no profiles in this recording (vitals soak --profile-every takes them)");
		return;
	}
	for (i = 0; i < t->n; i++) {
		const struct vt_prof_trend_row *row = &t->rows[i];

		if (row->error || row->few_samples)
			continue;
		usable++;
		if (first == SIZE_MAX)
			first = i;
		last = i;
		if (isnan(row->cores))
			cores_known = false;
	}
	t->verdict = VT_PT_CANNOT_TELL;
	if (usable < 2) {
		snprintf(t->why, sizeof(t->why), "%zu profile%s with at least %d on-CPU samples: two are needed",
			 usable, usable == 1 ? "" : "s", VT_PROF_FEW_SAMPLES);
		return;
	}
	t->by_cpu = cores_known;
	if (cores_known) {
		from = to = first;
		for (i = first; i <= last; i++) {
			const struct vt_prof_trend_row *row = &t->rows[i];

			if (row->error || row->few_samples)
				continue;
			if (row->cores < t->rows[from].cores)
				from = i;
			if (row->cores > t->rows[to].cores)
				to = i;
		}
	} else {
		from = first;
		to = last;
	}
	t->from = from;
	t->to = to;
	f = &t->rows[from];
	l = &t->rows[to];
	cf = cores_known ? f->cores : 1;
	ct = cores_known ? l->cores : 1;
	if (cores_known && (ct - cf < VT_PROF_TREND_RISE_ABS || ct - cf < VT_PROF_TREND_RISE_REL * cf)) {
		snprintf(t->why, sizeof(t->why), "CPU did not rise between the profiles (%.2f to %.2f cores): "
			 "no bucket to blame", cf, ct);
		return;
	}
	for (b = 0; b < t->nbuckets; b++) {
		struct vt_prof_growth *g = &all[nall];

		if (!t->seen[b])
			continue;
		g->bucket = b;
		g->share_from = f->share[b].share;
		g->share_to = l->share[b].share;
		g->cores_from = g->share_from * cf;
		g->cores_to = g->share_to * ct;
		g->delta = g->cores_to - g->cores_from;
		g->pm = sqrt(f->share[b].pm * cf * f->share[b].pm * cf + l->share[b].pm * ct * l->share[b].pm * ct);
		nall++;
	}
	qsort(all, nall, sizeof(all[0]), by_delta);
	for (b = 0; b < nall && t->ngrew < VT_PROF_TREND_GREW_MAX; b++)
		if (all[b].delta > 0 && all[b].delta > all[b].pm)
			t->grew[t->ngrew++] = all[b];
	if (t->ngrew == 0) {
		if (nall)
			snprintf(t->why, sizeof(t->why),
				 "no bucket grew beyond its ± (the most: %s %+.2f ± %.2f %s)",
				 t->bucket_names[all[0].bucket], all[0].delta, all[0].pm,
				 cores_known ? "cores" : "of the samples");
		else
			snprintf(t->why, sizeof(t->why), "no on-CPU samples to compare");
		return;
	}
	t->verdict = VT_PT_GREW;
	if (cores_known)
		snprintf(t->why, sizeof(t->why), "CPU rose from %.2f to %.2f cores; %s grew most: %.2f to %.2f cores "
			 "(%+.2f ± %.2f)", cf, ct, t->bucket_names[t->grew[0].bucket], t->grew[0].cores_from,
			 t->grew[0].cores_to, t->grew[0].delta, t->grew[0].pm);
	else
		snprintf(t->why, sizeof(t->why), "CPU unknown; between the first and last profile %s grew most: "
			 "%.1f%% to %.1f%% of the samples", t->bucket_names[t->grew[0].bucket],
			 100 * t->grew[0].share_from, 100 * t->grew[0].share_to);
}

/* ---- two recordings compared ---- */

/* One side's pooled counts. */
struct side {
	size_t profiles;
	uint64_t cpu;                        /* on-CPU samples */
	uint64_t bucket[VT_BUCKET_MAX_BUCKETS];
	struct fcount {
		char label[160], module[96];
		uint64_t self;
	} *funcs;
	size_t nfuncs, cap;
	struct vt_profile *pooled;           /* every profile's stacks */
};

static int add_func(struct side *sd, const struct vt_prof_func_row *f)
{
	size_t i;

	for (i = 0; i < sd->nfuncs; i++)
		if (!strcmp(sd->funcs[i].label, f->label) && !strcmp(sd->funcs[i].module, f->module)) {
			sd->funcs[i].self += f->self;
			return 0;
		}
	if (sd->nfuncs == sd->cap) {
		size_t cap = sd->cap ? 2 * sd->cap : 64;
		struct fcount *n = realloc(sd->funcs, cap * sizeof(*n));

		if (!n)
			return -1;
		sd->funcs = n;
		sd->cap = cap;
	}
	snprintf(sd->funcs[sd->nfuncs].label, sizeof(sd->funcs[0].label), "%s", f->label);
	snprintf(sd->funcs[sd->nfuncs].module, sizeof(sd->funcs[0].module), "%s", f->module);
	sd->funcs[sd->nfuncs++].self = f->self;
	return 0;
}

static uint64_t func_self(const struct side *sd, const char *label, const char *module)
{
	size_t i;

	for (i = 0; i < sd->nfuncs; i++)
		if (!strcmp(sd->funcs[i].label, label) && !strcmp(sd->funcs[i].module, module))
			return sd->funcs[i].self;
	return 0;
}

static int pool_side(const char *path, const struct vt_bucket_rules *r, struct side *sd, struct vt_err *err)
{
	struct vt_prof_summary_opts so = { .top = 200 };
	struct vt_store_profiles *sp;
	size_t i;
	uint32_t k;
	int rc;

	if ((rc = vt_store_profiles_open(path, &sp, err)))
		return rc;
	for (i = 0; i < vt_store_profiles_count(sp) && rc == VT_OK; i++) {
		struct vt_prof_summary *sum = NULL;
		struct vt_profile *p = NULL;

		if ((rc = vt_store_profiles_read(sp, i, &p, err)) || (rc = vt_prof_summarize(p, r, &so, &sum, err))) {
			vt_profile_free(&p);
			break;
		}
		sd->profiles++;
		sd->cpu += sum->cpu_samples;
		for (k = 0; k < sum->nbuckets; k++)
			if (sum->buckets[k].bucket < VT_BUCKET_MAX_BUCKETS)
				sd->bucket[sum->buckets[k].bucket] += sum->buckets[k].cpu.samples;
		for (k = 0; k < sum->ntop_self && rc == VT_OK; k++)
			if (add_func(sd, &sum->top_self[k]))
				rc = vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
		vt_prof_summary_free(&sum);
		/* the flame graph's: every profile, as the tables pool them */
		if (rc == VT_OK && !sd->pooled)
			rc = vt_profile_new(&sd->pooled, err);
		if (rc == VT_OK)
			rc = vt_profile_merge(sd->pooled, p, err);
		vt_profile_free(&p);
	}
	vt_store_profiles_close(&sp);
	return rc;
}

static void diff_of(uint64_t ka, uint64_t na, uint64_t kb, uint64_t nb, struct vt_prof_share *a,
		    struct vt_prof_share *b, double *delta, double *pm)
{
	vt_prof_share_of(ka, na, a);
	vt_prof_share_of(kb, nb, b);
	*delta = b->share - a->share;
	*pm = sqrt(a->pm * a->pm + b->pm * b->pm);
}

static int by_abs_bucket(const void *x, const void *y)
{
	double a = fabs(((const struct vt_prof_diff_bucket *)x)->delta);
	double b = fabs(((const struct vt_prof_diff_bucket *)y)->delta);

	return a < b ? 1 : a > b ? -1 : strcmp(((const struct vt_prof_diff_bucket *)x)->name,
					      ((const struct vt_prof_diff_bucket *)y)->name);
}

static int by_abs_func(const void *x, const void *y)
{
	double a = fabs(((const struct vt_prof_diff_func *)x)->delta);
	double b = fabs(((const struct vt_prof_diff_func *)y)->delta);

	return a < b ? 1 : a > b ? -1 : strcmp(((const struct vt_prof_diff_func *)x)->label,
					      ((const struct vt_prof_diff_func *)y)->label);
}

/* Functions of both sides by |delta|, the top VT_PROF_DIFF_FUNCS into d. */
static int diff_funcs(const struct side *a, const struct side *b, struct vt_prof_diff *d)
{
	size_t n = a->nfuncs + b->nfuncs, k = 0, i;
	struct vt_prof_diff_func *all = calloc(n ? n : 1, sizeof(*all));
	struct vt_prof_share sa, sb;

	if (!all)
		return -1;
	for (i = 0; i < n; i++) {
		const struct fcount *f = i < a->nfuncs ? &a->funcs[i] : &b->funcs[i - a->nfuncs];
		struct vt_prof_diff_func *o = &all[k];

		/* each function once: b's that a also has were counted with a's */
		if (i >= a->nfuncs && func_self(a, f->label, f->module))
			continue;
		snprintf(o->label, sizeof(o->label), "%s", f->label);
		snprintf(o->module, sizeof(o->module), "%s", f->module);
		diff_of(func_self(a, f->label, f->module), a->cpu, func_self(b, f->label, f->module), b->cpu, &sa, &sb,
			&o->delta, &o->pm);
		o->a = sa.share;
		o->b = sb.share;
		o->changed = fabs(o->delta) > o->pm;
		k++;
	}
	qsort(all, k, sizeof(*all), by_abs_func);
	d->nfuncs = k < VT_PROF_DIFF_FUNCS ? (uint32_t)k : VT_PROF_DIFF_FUNCS;
	memcpy(d->funcs, all, d->nfuncs * sizeof(*all));
	free(all);
	return 0;
}

int vt_prof_diff_files(const char *a, const char *b, const struct vt_bucket_rules *rules,
		       struct vt_prof_diff *out, struct vt_err *err)
{
	struct side sa = { 0 }, sb = { 0 };
	const struct vt_bucket_rules *r;
	struct vt_bucket_rules *own;
	uint32_t k;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = rules_or_builtin(rules, &own, &r, err)))
		return rc;
	if ((rc = pool_side(a, r, &sa, err)) || (rc = pool_side(b, r, &sb, err)))
		goto done;
	out->a_profiles = sa.profiles;
	out->b_profiles = sb.profiles;
	out->a_samples = sa.cpu;
	out->b_samples = sb.cpu;
	if (!sa.profiles || !sb.profiles)
		goto done;
	out->few_samples = sa.cpu < VT_PROF_FEW_SAMPLES || sb.cpu < VT_PROF_FEW_SAMPLES;
	out->buckets = calloc(r->nbuckets ? r->nbuckets : 1, sizeof(*out->buckets));
	if (!out->buckets || diff_funcs(&sa, &sb, out)) {
		rc = vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
		goto done;
	}
	for (k = 0; k < r->nbuckets && k < VT_BUCKET_MAX_BUCKETS; k++) {
		struct vt_prof_diff_bucket *o = &out->buckets[out->nbuckets];

		if (!sa.bucket[k] && !sb.bucket[k])
			continue;
		snprintf(o->name, sizeof(o->name), "%s", r->buckets[k].name);
		diff_of(sa.bucket[k], sa.cpu, sb.bucket[k], sb.cpu, &o->a, &o->b, &o->delta, &o->pm);
		o->changed = fabs(o->delta) > o->pm;
		out->nbuckets++;
	}
	qsort(out->buckets, out->nbuckets, sizeof(*out->buckets), by_abs_bucket);
	out->a_pooled = sa.pooled;
	out->b_pooled = sb.pooled;
	sa.pooled = sb.pooled = NULL;
done:
	free(sa.funcs);
	free(sb.funcs);
	vt_profile_free(&sa.pooled);
	vt_profile_free(&sb.pooled);
	vt_bucket_rules_free(&own);
	if (rc != VT_OK)
		vt_prof_diff_release(out);
	return rc;
}

void vt_prof_diff_release(struct vt_prof_diff *d)
{
	free(d->buckets);
	d->buckets = NULL;
	d->nbuckets = 0;
	vt_profile_free(&d->a_pooled);
	vt_profile_free(&d->b_pooled);
}

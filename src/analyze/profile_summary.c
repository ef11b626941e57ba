/*
 * profile_summary.c — the summary every profile view renders (see
 * profile_summary.h): one pass over the stacks, then sorting.
 */
#include "analyze/profile_summary.h"
#include "sample/profiler.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_TOP 20
#define Z95 1.959963984540054

void vt_prof_share_of(uint64_t k, uint64_t n, struct vt_prof_share *out)
{
	memset(out, 0, sizeof(*out));
	out->samples = k;
	if (!n)
		return;
	double p = (double)k / (double)n, nn = (double)n, z2 = Z95 * Z95;
	double denom = 1 + z2 / nn;
	double center = (p + z2 / (2 * nn)) / denom;
	double half = Z95 * sqrt(p * (1 - p) / nn + z2 / (4 * nn * nn)) / denom;
	out->share = p;
	out->lo = center - half < 0 ? 0 : center - half;
	out->hi = center + half > 1 ? 1 : center + half;
	out->pm = (out->hi - out->lo) / 2;
}

/* ---- per-bucket accumulation ---- */

struct wait_tally {
	char what[VT_PROF_WAIT_MAX];
	uint64_t n;
};

struct bucket_acc {
	uint64_t cpu, running, runnable, waiting, idle;
	struct wait_tally *waits;
	uint32_t nwaits, cap_waits;
};

static bool tally_wait(struct bucket_acc *b, const char *what, uint64_t n)
{
	for (uint32_t i = 0; i < b->nwaits; i++)
		if (strcmp(b->waits[i].what, what) == 0) {
			b->waits[i].n += n;
			return true;
		}
	if (b->nwaits == b->cap_waits) {
		uint32_t cap = b->cap_waits ? b->cap_waits * 2 : 8;
		struct wait_tally *w = realloc(b->waits, cap * sizeof(*w));
		if (!w)
			return false;
		b->waits = w;
		b->cap_waits = cap;
	}
	snprintf(b->waits[b->nwaits].what, sizeof(b->waits[b->nwaits].what), "%s", what);
	b->waits[b->nwaits++].n = n;
	return true;
}

static int cmp_wait(const void *a, const void *b)
{
	const struct wait_tally *x = a, *y = b;
	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return strcmp(x->what, y->what);
}

static int cmp_bucket_row(const void *a, const void *b)
{
	const struct vt_prof_bucket_row *x = a, *y = b;
	if (x->cpu.samples != y->cpu.samples)
		return x->cpu.samples > y->cpu.samples ? -1 : 1;
	uint64_t wx = x->wall_running + x->wall_runnable + x->wall_waiting;
	uint64_t wy = y->wall_running + y->wall_runnable + y->wall_waiting;
	if (wx != wy)
		return wx > wy ? -1 : 1;
	if (x->wall_idle != y->wall_idle)
		return x->wall_idle > y->wall_idle ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* ---- functions ---- */

struct func_acc {
	uint64_t self, total;
	uint32_t stamp;           /* the last stack that counted it in total, + 1 */
	uint32_t loc;             /* a location of it, for its label */
	bool seen_inlined, seen_own;   /* met inlined into another function; as a frame of its own */
};

/* The function key of a location: its function when named, else the location itself. */
static uint32_t func_key(const struct vt_profile *p, uint32_t loc)
{
	if (loc < p->nlocs) {
		uint32_t f = p->locs[loc].func;
		if (f < p->nfuncs && p->funcs[f].name)
			return f;
	}
	return p->nfuncs + (loc < p->nlocs ? loc : p->nlocs);
}

struct func_order {
	const struct func_acc *funcs;
	bool by_self;
};

static int cmp_func_key(const void *a, const void *b, void *ctx)
{
	const struct func_order *o = ctx;
	bool sort_by_self = o->by_self;
	const struct func_acc *x = &o->funcs[*(const uint32_t *)a];
	const struct func_acc *y = &o->funcs[*(const uint32_t *)b];
	uint64_t vx = sort_by_self ? x->self : x->total, vy = sort_by_self ? y->self : y->total;
	if (vx != vy)
		return vx > vy ? -1 : 1;
	uint64_t ox = sort_by_self ? x->total : x->self, oy = sort_by_self ? y->total : y->self;
	if (ox != oy)
		return ox > oy ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static bool fill_func_row(const struct vt_profile *p, const struct func_acc *f, uint64_t n,
			  struct vt_prof_func_row *row)
{
	char label[512];
	const struct vt_prof_loc *l = f->loc < p->nlocs ? &p->locs[f->loc] : NULL;
	const struct vt_prof_func *fn = l && l->func < p->nfuncs ? &p->funcs[l->func] : NULL;
	const char *module = fn ? vt_profile_str(p, fn->module) : "";

	vt_profile_loc_label(p, f->loc, label, sizeof(label));
	row->label = strdup(label);
	row->module = strdup(module);
	row->system_name = strdup(fn ? vt_profile_str(p, fn->system_name) : "");
	row->file = strdup(fn ? vt_profile_str(p, fn->file) : "");
	row->line = fn && fn->file ? fn->line : 0;
	row->inlined = f->seen_inlined && !f->seen_own;
	row->kernel = l && l->kernel;
	row->self = f->self;
	row->total = f->total;
	row->self_share = n ? (double)f->self / (double)n : 0;
	row->total_share = n ? (double)f->total / (double)n : 0;
	return row->label && row->module && row->system_name && row->file;
}

/* The top `top` keys of funcs (nkeys of them, those with total > 0) by self or total. */
static int top_funcs(const struct vt_profile *p, const struct func_acc *funcs, uint32_t *keys,
		     uint32_t nkeys, bool by_self, uint32_t top, uint64_t n,
		     struct vt_prof_func_row **out, uint32_t *nout)
{
	struct func_order order = { funcs, by_self };
	qsort_r(keys, nkeys, sizeof(*keys), cmp_func_key, &order);
	uint32_t k = 0;
	while (k < nkeys && k < top && (by_self ? funcs[keys[k]].self : funcs[keys[k]].total))
		k++;
	*out = calloc(k ? k : 1, sizeof(**out));
	if (!*out)
		return -1;
	*nout = k;
	for (uint32_t i = 0; i < k; i++)
		if (!fill_func_row(p, &funcs[keys[i]], n, &(*out)[i]))
			return -1;
	return 0;
}

/* ---- threads and pools ---- */

static int cmp_thread_row(const void *a, const void *b)
{
	const struct vt_prof_thread_row *x = a, *y = b;
	if (x->cpu.samples != y->cpu.samples)
		return x->cpu.samples > y->cpu.samples ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int cmp_pool_row(const void *a, const void *b)
{
	const struct vt_prof_pool_row *x = a, *y = b;
	if (x->cpu.samples != y->cpu.samples)
		return x->cpu.samples > y->cpu.samples ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int cmp_module_row(const void *a, const void *b)
{
	const struct vt_prof_module_row *x = a, *y = b;
	if (x->frames_total != y->frames_total)
		return x->frames_total > y->frames_total ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int summarize_threads(const struct vt_profile *p, const uint64_t *thread_cpu,
			     struct vt_prof_summary *s)
{
	bool all_known = p->nthreads > 0;
	double total = 0;

	s->threads = calloc(p->nthreads ? p->nthreads : 1, sizeof(*s->threads));
	if (!s->threads)
		return -1;
	for (uint32_t i = 0; i < p->nthreads; i++) {
		const struct vt_prof_thread *t = &p->threads[i];
		struct vt_prof_thread_row *row = &s->threads[s->nthreads++];
		row->tid = t->tid;
		row->name = strdup(vt_profile_str(p, t->name));
		row->pool = strdup(vt_profile_str(p, t->pool ? t->pool : t->name));
		if (!row->name || !row->pool)
			return -1;
		vt_prof_share_of(thread_cpu[i], s->cpu_samples, &row->cpu);
		row->cpu_s = t->cpu_s;
		row->samples = t->samples;
		if (t->cpu_s < 0)
			all_known = false;
		else
			total += t->cpu_s;
	}
	s->threads_cpu_s = all_known ? total : -1;
	for (uint32_t i = 0; i < s->nthreads; i++)
		s->threads[i].cpu_s_share = s->threads[i].cpu_s >= 0 && s->threads_cpu_s > 0
					    ? s->threads[i].cpu_s / s->threads_cpu_s : -1;

	/* pools: threads sharing a pool name, two or more */
	s->pools = calloc(s->nthreads ? s->nthreads : 1, sizeof(*s->pools));
	if (!s->pools)
		return -1;
	for (uint32_t i = 0; i < s->nthreads; i++) {
		const struct vt_prof_thread_row *t = &s->threads[i];
		uint32_t j;
		for (j = 0; j < s->npools && strcmp(s->pools[j].name, t->pool) != 0; j++)
			;
		if (j == s->npools) {
			s->pools[j].name = strdup(t->pool);
			if (!s->pools[j].name)
				return -1;
			s->npools++;
		}
		struct vt_prof_pool_row *pl = &s->pools[j];
		pl->threads++;
		pl->cpu.samples += t->cpu.samples;
		if (pl->cpu_s >= 0 && t->cpu_s >= 0)
			pl->cpu_s += t->cpu_s;
		else
			pl->cpu_s = -1;
	}
	uint32_t kept = 0;
	for (uint32_t j = 0; j < s->npools; j++) {
		struct vt_prof_pool_row *pl = &s->pools[j];
		if (pl->threads < 2) {
			free(pl->name);
			continue;
		}
		vt_prof_share_of(pl->cpu.samples, s->cpu_samples, &pl->cpu);
		pl->cpu_s_share = pl->cpu_s >= 0 && s->threads_cpu_s > 0 ? pl->cpu_s / s->threads_cpu_s
									  : -1;
		s->pools[kept++] = *pl;
	}
	s->npools = kept;
	qsort(s->threads, s->nthreads, sizeof(*s->threads), cmp_thread_row);
	qsort(s->pools, s->npools, sizeof(*s->pools), cmp_pool_row);
	return 0;
}

/* *out a copy of string index i of p, NULL for none; false when out of memory. */
static bool dup_str_or_null(const struct vt_profile *p, uint32_t i, char **out)
{
	*out = i ? strdup(vt_profile_str(p, i)) : NULL;
	return !i || *out;
}

static int summarize_modules(const struct vt_profile *p, struct vt_prof_summary *s)
{
	s->modules = calloc(p->nmodules ? p->nmodules : 1, sizeof(*s->modules));
	if (!s->modules)
		return -1;
	for (uint32_t i = 0; i < p->nmodules; i++) {
		const struct vt_prof_module *m = &p->modules[i];
		struct vt_prof_module_row *row = &s->modules[s->nmodules++];
		row->name = strdup(vt_profile_str(p, m->name));
		row->path = strdup(vt_profile_str(p, m->path));
		if (!row->name || !row->path)
			return -1;
		for (int k = 0; k < VT_UNWIND__COUNT; k++) {
			row->frames[k] = m->frames[k];
			row->frames_total += m->frames[k];
		}
		row->symbols = m->symbols;
		row->lines = m->lines;
		if (!dup_str_or_null(p, m->debug_file, &row->debug_file) ||
		    !dup_str_or_null(p, m->debug_ignored, &row->debug_ignored) ||
		    !dup_str_or_null(p, m->debug_ignored ? m->debug_ignored_why : 0, &row->debug_ignored_why))
			return -1;
	}
	qsort(s->modules, s->nmodules, sizeof(*s->modules), cmp_module_row);
	return 0;
}

/* ---- the CPU the samples missed ---- */

/*
 * Threads came and went: listings or samples found threads that started or
 * ended, or a tenth of the process's CPU (beyond a clock tick's rounding) was
 * used by threads no listing saw.
 */
static bool threads_came_and_went(const struct vt_prof_summary *s)
{
	const struct vt_prof_meta *m = &s->meta;
	return m->threads_started + m->threads_ended > 0 ||
	       s->unlisted_cpu_s > 0.02 + 0.1 * s->used_cpu_s;
}

static void summarize_unsampled(struct vt_prof_summary *s)
{
	const struct vt_prof_meta *m = &s->meta;
	bool kept = m->threads_glob[0] != '\0';

	s->used_cpu_s = kept ? s->threads_cpu_s : m->process_cpu_s;
	s->sampled_cpu_s = m->hz > 0 ? (double)s->cpu_samples / m->hz : -1;
	s->unlisted_cpu_s = !kept && m->process_cpu_s >= 0 && s->threads_cpu_s >= 0
				    ? fmax(0, m->process_cpu_s - s->threads_cpu_s) : -1;
	s->unsampled_share = -1;
	if (s->used_cpu_s < VT_PROF_UNSAMPLED_MIN_CPU_S || s->sampled_cpu_s < 0)
		return;
	s->unsampled_share = fmax(0, 1 - s->sampled_cpu_s / s->used_cpu_s);
	if (m->kernel_refused || strcmp(m->method, "perf cpu-clock") != 0)
		return;
	if (s->unsampled_share > VT_PROF_UNSAMPLED_THIN && !threads_came_and_went(s)) {
		/* threads that stayed, each under a period: where the missed CPU went */
		double thin_cpu_s = 0;

		for (uint32_t i = 0; i < s->nthreads; i++)
			if (s->threads[i].cpu.samples == 0 && s->threads[i].cpu_s > 0) {
				thin_cpu_s += s->threads[i].cpu_s;
				s->thin_threads++;
			}
		if (s->thin_threads && thin_cpu_s >= 0.5 * (s->used_cpu_s - s->sampled_cpu_s)) {
			s->unsampled_cause = VT_PROF_UNSAMPLED_THIN_THREADS;
			if (m->hz < VT_PROFILER_HZ_MAX)
				s->hz_advice = (unsigned)fmin(10 * m->hz, VT_PROFILER_HZ_MAX);
		} else {
			s->thin_threads = 0;
		}
		return;
	}
	if (s->unsampled_share <= VT_PROF_UNSAMPLED_MOST || !threads_came_and_went(s))
		return;
	if (!m->threads_inherited) {
		s->unsampled_cause = VT_PROF_UNSAMPLED_UNLISTED_THREADS;
		return;
	}
	s->unsampled_cause = VT_PROF_UNSAMPLED_SHORT_THREADS;
	if (m->hz < VT_PROFILER_HZ_MAX)
		s->hz_advice = (unsigned)fmin(10 * m->hz, VT_PROFILER_HZ_MAX);
}

/* ---- the whole ---- */

static int summarize_buckets(const struct vt_bucket_rules *r, struct bucket_acc *acc,
			     struct vt_prof_summary *s)
{
	s->buckets = calloc(r->nbuckets, sizeof(*s->buckets));
	if (!s->buckets)
		return -1;
	for (uint32_t b = 0; b < r->nbuckets; b++) {
		struct bucket_acc *a = &acc[b];
		if (!a->cpu && !a->running && !a->runnable && !a->waiting && !a->idle)
			continue;
		struct vt_prof_bucket_row *row = &s->buckets[s->nbuckets++];
		row->bucket = b;
		snprintf(row->name, sizeof(row->name), "%s", r->buckets[b].name);
		row->builtin = r->buckets[b].builtin;
		row->runtime = r->buckets[b].runtime;
		if (row->runtime)
			s->runtime_seen = true;
		vt_prof_share_of(a->cpu, s->cpu_samples, &row->cpu);
		row->wall_running = a->running;
		row->wall_runnable = a->runnable;
		row->wall_waiting = a->waiting;
		row->wall_idle = a->idle;
		vt_prof_share_of(a->running + a->runnable + a->waiting, s->wall_samples, &row->wall);
		if (a->nwaits)
			qsort(a->waits, a->nwaits, sizeof(*a->waits), cmp_wait);
		for (uint32_t w = 0; w < a->nwaits && w < VT_PROF_TOP_WAITS; w++) {
			snprintf(row->waits[w].what, sizeof(row->waits[w].what), "%s", a->waits[w].what);
			row->waits[w].samples = a->waits[w].n;
			row->nwaits++;
		}
	}
	qsort(s->buckets, s->nbuckets, sizeof(*s->buckets), cmp_bucket_row);
	for (uint32_t i = 0; i + 1 < s->nbuckets; i++)
		s->buckets[i].tied_next = s->buckets[i + 1].cpu.samples &&
					  s->buckets[i].cpu.lo <= s->buckets[i + 1].cpu.hi;
	return 0;
}

int vt_prof_summarize(const struct vt_profile *p, const struct vt_bucket_rules *r,
		      const struct vt_prof_summary_opts *opts, struct vt_prof_summary **out,
		      struct vt_err *err)
{
	uint32_t top = opts && opts->top ? opts->top : DEFAULT_TOP;
	uint32_t nkeys_max = p->nfuncs + p->nlocs + 1;
	struct vt_prof_summary *s = calloc(1, sizeof(*s));
	struct bucket_acc *acc = calloc(r->nbuckets, sizeof(*acc));
	struct func_acc *funcs = calloc(nkeys_max, sizeof(*funcs));
	uint64_t *thread_cpu = calloc(p->nthreads ? p->nthreads : 1, sizeof(*thread_cpu));
	uint32_t *keys = NULL;
	struct vt_bucket_classifier *cls = NULL;
	uint32_t nkeys = 0;
	int rc = -1;

	*out = NULL;
	if (!s || !acc || !funcs || !thread_cpu ||
	    vt_bucket_classifier_new(r, p, &cls, err) != VT_OK)
		goto done;
	s->meta = p->meta;

	for (uint32_t i = 0; i < p->nstacks; i++) {
		const struct vt_prof_stack *st = &p->stacks[i];
		const uint32_t *locs = vt_profile_stack_locs(p, st);
		uint32_t b = vt_bucket_classify(cls, st, NULL, NULL);
		struct bucket_acc *a = &acc[b];

		if (st->state == VT_PROF_RUNNING) {
			s->cpu_samples += st->count;
			a->cpu += st->count;
			a->running += st->count;
			s->wall_samples += st->count;
			if (st->thread < p->nthreads)
				thread_cpu[st->thread] += st->count;
			if (st->truncated)
				s->truncated_samples += st->count;
			for (uint32_t d = 0; d < st->depth; d++) {
				uint32_t k = func_key(p, locs[d]);
				struct func_acc *f = &funcs[k];
				if (!f->total && !f->self)
					f->loc = locs[d];
				if (locs[d] < p->nlocs && p->locs[locs[d]].inlined_into)
					f->seen_inlined = true;
				else
					f->seen_own = true;
				if (d == 0)
					f->self += st->count;
				if (f->stamp != i + 1) {   /* once a sample, however deep it recurses */
					f->stamp = i + 1;
					f->total += st->count;
				}
			}
		} else if (st->state == VT_PROF_RUNNABLE) {
			s->runnable_samples += st->count;
			s->wall_samples += st->count;
			a->runnable += st->count;
		} else {
			enum vt_wait_class wc = vt_bucket_wait_class(p, st);
			const char *what = st->wait ? vt_profile_str(p, st->wait) : vt_wait_class_name(wc);
			s->waiting_samples += st->count;
			s->waits[wc] += st->count;
			if (vt_wait_class_idle(wc)) {
				s->idle_samples += st->count;
				a->idle += st->count;
			} else {
				s->wall_samples += st->count;
				a->waiting += st->count;
				if (!tally_wait(a, what, st->count))
					goto done;
			}
		}
	}
	s->few_samples = s->cpu_samples < VT_PROF_FEW_SAMPLES;
	if (summarize_buckets(r, acc, s) != 0)
		goto done;

	keys = malloc(nkeys_max * sizeof(*keys));
	if (!keys)
		goto done;
	for (uint32_t k = 0; k < nkeys_max; k++)
		if (funcs[k].total) {
			keys[nkeys++] = k;
			if (funcs[k].self)
				s->nfuncs_leaf++;
		}
	s->nfuncs_seen = nkeys;
	if (top_funcs(p, funcs, keys, nkeys, true, top, s->cpu_samples, &s->top_self,
		      &s->ntop_self) != 0 ||
	    top_funcs(p, funcs, keys, nkeys, false, top, s->cpu_samples, &s->top_total,
		      &s->ntop_total) != 0 ||
	    summarize_threads(p, thread_cpu, s) != 0 || summarize_modules(p, s) != 0)
		goto done;
	summarize_unsampled(s);
	rc = VT_OK;
done:
	if (acc)
		for (uint32_t b = 0; b < r->nbuckets; b++)
			free(acc[b].waits);
	free(acc);
	free(funcs);
	free(thread_cpu);
	free(keys);
	vt_bucket_classifier_free(&cls);
	if (rc != VT_OK) {
		vt_prof_summary_free(&s);
		return vt_err_set(err, VT_E_NOMEM, 0, "profile summary");
	}
	*out = s;
	return VT_OK;
}

static void free_func_rows(struct vt_prof_func_row *rows, uint32_t n)
{
	for (uint32_t i = 0; rows && i < n; i++) {
		free(rows[i].label);
		free(rows[i].module);
		free(rows[i].system_name);
		free(rows[i].file);
	}
	free(rows);
}

void vt_prof_summary_free(struct vt_prof_summary **sp)
{
	struct vt_prof_summary *s = sp ? *sp : NULL;

	if (!s)
		return;
	free(s->buckets);
	free_func_rows(s->top_self, s->ntop_self);
	free_func_rows(s->top_total, s->ntop_total);
	for (uint32_t i = 0; s->threads && i < s->nthreads; i++) {
		free(s->threads[i].name);
		free(s->threads[i].pool);
	}
	free(s->threads);
	for (uint32_t i = 0; s->pools && i < s->npools; i++)
		free(s->pools[i].name);
	free(s->pools);
	for (uint32_t i = 0; s->modules && i < s->nmodules; i++) {
		free(s->modules[i].name);
		free(s->modules[i].path);
		free(s->modules[i].debug_file);
		free(s->modules[i].debug_ignored);
		free(s->modules[i].debug_ignored_why);
	}
	free(s->modules);
	free(s);
	*sp = NULL;
}

void vt_prof_calls_compute(const struct vt_profile *p, const struct vt_call_counts *counts,
			   struct vt_prof_calls *out)
{
	uint64_t cpu = 0;

	memset(out, 0, sizeof(*out));
	out->counts = counts;
	out->n = counts->n;
	for (uint32_t i = 0; i < p->nstacks; i++)
		if (p->stacks[i].state == VT_PROF_RUNNING)
			cpu += p->stacks[i].count;
	for (size_t k = 0; k < counts->n; k++) {
		const struct vt_call_fn *fn = &counts->fns[k];
		struct vt_prof_call_row *r = &out->rows[k];
		uint64_t hi = fn->addr + (fn->size ? fn->size : 1);

		r->fn = fn;
		r->calls_per_s = counts->armed_s > 0 ? (double)fn->calls / counts->armed_s : NAN;
		for (uint32_t i = 0; i < p->nstacks; i++) {
			const struct vt_prof_stack *st = &p->stacks[i];
			const uint32_t *locs = vt_profile_stack_locs(p, st);

			if (st->state != VT_PROF_RUNNING)
				continue;
			for (uint32_t d = 0; d < st->depth; d++) {
				const struct vt_prof_loc *l = &p->locs[locs[d]];

				if (!l->kernel && l->pc >= fn->addr && l->pc < hi) {
					r->samples += st->count;
					break;
				}
			}
		}
		r->share = cpu ? (double)r->samples / (double)cpu : NAN;
		r->cores = cpu && p->meta.process_cpu_s >= 0 && p->meta.duration_s > 0
				   ? r->share * p->meta.process_cpu_s / p->meta.duration_s : NAN;
		r->cpu_per_call_s = r->calls_per_s > 0 ? r->cores / r->calls_per_s : NAN;
	}
}

/*
 * profile.c — the profile data model: interning tables and sample counts.
 *
 * Each table is a growable array plus an open-addressing hash of indices
 * into it (struct intern_map).  Keys are compared through the arrays, so the
 * maps hold only uint32_t indices and grow at 50% load.
 */
#include "sample/profile.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_SLOT UINT32_MAX

/* Hash of indices; the key of index i lives in the profile's arrays. */
struct intern_map {
	uint32_t *slots;          /* index + 1, 0 empty */
	uint32_t cap;             /* power of two */
	uint32_t n;
};

struct vt_profile_index {
	struct intern_map strings, funcs, locs, stacks, threads, modules;
};

static uint64_t mix64(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	h *= 0xff51afd7ed558ccdull;
	return h ^ (h >> 33);
}

static uint64_t hash_bytes(const void *data, size_t len)
{
	const unsigned char *b = data;
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return mix64(h, len);
}

static bool map_grow(const struct vt_profile *p, struct intern_map *m,
		     uint64_t (*hash_of)(const struct vt_profile *, uint32_t))
{
	uint32_t cap = m->cap ? m->cap * 2 : 64;
	uint32_t *slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return false;
	for (uint32_t i = 0; i < m->cap; i++) {
		if (!m->slots[i])
			continue;
		uint32_t idx = m->slots[i] - 1;
		uint32_t s = (uint32_t)hash_of(p, idx) & (cap - 1);
		while (slots[s])
			s = (s + 1) & (cap - 1);
		slots[s] = idx + 1;
	}
	free(m->slots);
	m->slots = slots;
	m->cap = cap;
	return true;
}

/*
 * The slot where a key with this hash is, or would go: probe until an empty
 * slot or one whose index `same` says is equal.  *found tells which.
 */
static uint32_t map_probe(const struct vt_profile *p, const struct intern_map *m, uint64_t h,
			  bool (*same)(const struct vt_profile *, uint32_t, const void *),
			  const void *key, bool *found)
{
	uint32_t s = (uint32_t)h & (m->cap - 1);
	for (;;) {
		if (!m->slots[s]) {
			*found = false;
			return s;
		}
		if (same(p, m->slots[s] - 1, key)) {
			*found = true;
			return s;
		}
		s = (s + 1) & (m->cap - 1);
	}
}

/* Make room for one more entry in array *arr of *cap elements of size sz. */
static bool reserve(void **arr, uint32_t *cap, uint32_t need, size_t sz)
{
	if (need <= *cap)
		return true;
	uint32_t ncap = *cap ? *cap : 16;
	while (ncap < need) {
		if (ncap > UINT32_MAX / 2)
			return false;
		ncap *= 2;
	}
	void *n = realloc(*arr, (size_t)ncap * sz);
	if (!n)
		return false;
	*arr = n;
	*cap = ncap;
	return true;
}
#define RESERVE(arr, cap, need) reserve((void **)&(arr), &(cap), (need), sizeof(*(arr)))

/* Look key up in m (hash h); when absent, reserve a slot for index `next`. */
static uint32_t map_find_or_add(struct vt_profile *p, struct intern_map *m, uint64_t h,
				uint64_t (*hash_of)(const struct vt_profile *, uint32_t),
				bool (*same)(const struct vt_profile *, uint32_t, const void *),
				const void *key, uint32_t next, bool *added)
{
	*added = false;
	if ((m->n + 1) * 2 > m->cap && !map_grow(p, m, hash_of))
		return NO_SLOT;
	bool found;
	uint32_t s = map_probe(p, m, h, same, key, &found);
	if (found)
		return m->slots[s] - 1;
	m->slots[s] = next + 1;
	m->n++;
	*added = true;
	return next;
}

/* ---- strings ---- */

static uint64_t str_hash_of(const struct vt_profile *p, uint32_t i)
{
	return hash_bytes(p->strings[i], strlen(p->strings[i]));
}

static bool str_same(const struct vt_profile *p, uint32_t i, const void *key)
{
	return strcmp(p->strings[i], key) == 0;
}

uint32_t vt_profile_intern_str(struct vt_profile *p, const char *s)
{
	if (!s || !*s)
		return 0;
	if (!RESERVE(p->strings, p->cap_strings, p->nstrings + 1))
		return NO_SLOT;
	char *copy = strdup(s);   /* before the map takes the slot: a failure leaves it untouched */
	if (!copy)
		return NO_SLOT;
	p->strings[p->nstrings] = copy;   /* so a probe of the new slot compares against it */
	bool added;
	uint32_t i = map_find_or_add(p, &p->index->strings, hash_bytes(s, strlen(s)), str_hash_of,
				     str_same, s, p->nstrings, &added);
	if (added)
		p->nstrings++;
	else
		free(copy);
	return i;
}

const char *vt_profile_str(const struct vt_profile *p, uint32_t i)
{
	return i < p->nstrings ? p->strings[i] : "";
}

/* ---- functions ---- */

static uint64_t func_hash(uint32_t name, uint32_t module)
{
	return mix64(mix64(0, name), module);
}

static uint64_t func_hash_of(const struct vt_profile *p, uint32_t i)
{
	return func_hash(p->funcs[i].name, p->funcs[i].module);
}

static bool func_same(const struct vt_profile *p, uint32_t i, const void *key)
{
	const struct vt_prof_func *k = key;
	return p->funcs[i].name == k->name && p->funcs[i].module == k->module;
}

uint32_t vt_profile_intern_func_sym(struct vt_profile *p, uint32_t name, uint32_t system_name,
				    uint32_t module)
{
	if (!RESERVE(p->funcs, p->cap_funcs, p->nfuncs + 1))
		return NO_SLOT;
	struct vt_prof_func key = { .name = name, .module = module, .system_name = system_name };
	bool added;
	uint32_t i = map_find_or_add(p, &p->index->funcs, func_hash(name, module), func_hash_of,
				     func_same, &key, p->nfuncs, &added);
	if (i != NO_SLOT && added)
		p->funcs[p->nfuncs++] = key;
	else if (i != NO_SLOT && !p->funcs[i].system_name)
		p->funcs[i].system_name = system_name;
	return i;
}

uint32_t vt_profile_intern_func(struct vt_profile *p, uint32_t name, uint32_t module)
{
	return vt_profile_intern_func_sym(p, name, 0, module);
}

/* ---- locations ---- */

static uint64_t loc_hash(uint64_t pc, bool kernel)
{
	return mix64(pc, kernel);
}

static uint64_t loc_hash_of(const struct vt_profile *p, uint32_t i)
{
	return loc_hash(p->locs[i].pc, p->locs[i].kernel);
}

/* A location is its address and what it was named: after an exec or a
 * dlopen the same address can hold other code, and is another location. */
static bool loc_same(const struct vt_profile *p, uint32_t i, const void *key)
{
	const struct vt_prof_loc *k = key;
	const struct vt_prof_loc *l = &p->locs[i];
	return l->pc == k->pc && l->kernel == k->kernel && l->func == k->func &&
	       l->module_off == k->module_off && l->file == k->file && l->line == k->line &&
	       l->inlined_into == k->inlined_into;
}

uint32_t vt_profile_intern_loc_full(struct vt_profile *p, const struct vt_prof_loc *key)
{
	if (!RESERVE(p->locs, p->cap_locs, p->nlocs + 1))
		return NO_SLOT;
	bool added;
	uint32_t i = map_find_or_add(p, &p->index->locs, loc_hash(key->pc, key->kernel),
				     loc_hash_of, loc_same, key, p->nlocs, &added);
	if (i != NO_SLOT && added)
		p->locs[p->nlocs++] = *key;
	return i;
}

uint32_t vt_profile_intern_loc(struct vt_profile *p, uint64_t pc, uint64_t module_off,
			       uint32_t func, bool kernel)
{
	return vt_profile_intern_loc_full(p, &(struct vt_prof_loc){
		.pc = pc, .module_off = module_off, .func = func, .kernel = kernel });
}

void vt_profile_func_set_source(struct vt_profile *p, uint32_t func, uint32_t file, uint32_t line)
{
	if (func < p->nfuncs && !p->funcs[func].file && file) {
		p->funcs[func].file = file;
		p->funcs[func].line = line;
	}
}

/* ---- threads and modules ---- */

static uint64_t thread_hash_of(const struct vt_profile *p, uint32_t i)
{
	return mix64(1, (uint64_t)p->threads[i].tid);
}

static bool thread_same(const struct vt_profile *p, uint32_t i, const void *key)
{
	return p->threads[i].tid == *(const pid_t *)key;
}

/* The pool of a thread name: its digits folded ("worker-12" -> "worker-#"), "" when it has none. */
static void pool_of(const char *comm, char *out, size_t cap)
{
	size_t o = 0;
	bool digits = false, in_run = false;
	for (const char *c = comm; *c && o + 1 < cap; c++) {
		if (*c >= '0' && *c <= '9') {
			digits = true;
			if (!in_run)
				out[o++] = '#';
			in_run = true;
		} else {
			out[o++] = *c;
			in_run = false;
		}
	}
	out[o] = '\0';
	if (!digits)
		out[0] = '\0';
}

uint32_t vt_profile_intern_thread(struct vt_profile *p, pid_t tid, const char *comm)
{
	if (!RESERVE(p->threads, p->cap_threads, p->nthreads + 1))
		return NO_SLOT;
	bool added;
	uint32_t i = map_find_or_add(p, &p->index->threads, mix64(1, (uint64_t)tid), thread_hash_of,
				     thread_same, &tid, p->nthreads, &added);
	if (i == NO_SLOT || !added)
		return i;
	char pool[64];
	pool_of(comm ? comm : "", pool, sizeof(pool));
	uint32_t name = vt_profile_intern_str(p, comm);
	uint32_t pool_s = vt_profile_intern_str(p, pool);
	p->threads[p->nthreads++] = (struct vt_prof_thread){
		.tid = tid,
		.name = name == NO_SLOT ? 0 : name,
		.pool = pool_s == NO_SLOT ? 0 : pool_s,
		.cpu_s = -1,
	};
	return i;
}

static uint64_t module_hash_of(const struct vt_profile *p, uint32_t i)
{
	return mix64(2, p->modules[i].name);
}

static bool module_same(const struct vt_profile *p, uint32_t i, const void *key)
{
	return p->modules[i].name == *(const uint32_t *)key;
}

uint32_t vt_profile_intern_module(struct vt_profile *p, const char *name, const char *path)
{
	uint32_t n = vt_profile_intern_str(p, name);
	if (n == NO_SLOT || !RESERVE(p->modules, p->cap_modules, p->nmodules + 1))
		return NO_SLOT;
	bool added;
	uint32_t i = map_find_or_add(p, &p->index->modules, mix64(2, n), module_hash_of,
				     module_same, &n, p->nmodules, &added);
	if (i == NO_SLOT || !added)
		return i;
	uint32_t ps = vt_profile_intern_str(p, path);
	p->modules[p->nmodules++] = (struct vt_prof_module){
		.name = n,
		.path = ps == NO_SLOT ? 0 : ps,
	};
	return i;
}

int vt_profile_module_set_debug(struct vt_profile *p, uint32_t k, uint8_t lines, const char *debug_file,
				const char *ignored, const char *ignored_why)
{
	const char *text[3] = { debug_file, ignored, ignored_why };
	uint32_t idx[3] = { 0, 0, 0 };

	if (k >= p->nmodules)
		return VT_E_FAIL;
	for (int i = 0; i < 3; i++)
		if (text[i] && text[i][0] && (idx[i] = vt_profile_intern_str(p, text[i])) == NO_SLOT)
			return VT_E_NOMEM;
	p->modules[k].lines = lines;
	p->modules[k].debug_file = idx[0];
	p->modules[k].debug_ignored = idx[1];
	p->modules[k].debug_ignored_why = idx[1] ? idx[2] : 0;
	return VT_OK;
}

/* ---- stacks ---- */

struct stack_key {
	const uint32_t *locs;
	uint32_t depth, thread, wait;
	uint8_t state;
};

static uint64_t stack_hash(const uint32_t *locs, uint32_t depth, uint32_t thread, uint8_t state,
			   uint32_t wait)
{
	uint64_t h = mix64(mix64(mix64(3, thread), state), wait);
	for (uint32_t i = 0; i < depth; i++)
		h = mix64(h, locs[i]);
	return h;
}

static uint64_t stack_hash_of(const struct vt_profile *p, uint32_t i)
{
	const struct vt_prof_stack *s = &p->stacks[i];
	return stack_hash(p->stack_locs + s->first, s->depth, s->thread, s->state, s->wait);
}

static bool stack_same(const struct vt_profile *p, uint32_t i, const void *key)
{
	const struct stack_key *k = key;
	const struct vt_prof_stack *s = &p->stacks[i];
	return s->depth == k->depth && s->thread == k->thread && s->state == k->state &&
	       s->wait == k->wait &&
	       (k->depth == 0 ||
		memcmp(p->stack_locs + s->first, k->locs, k->depth * sizeof(*k->locs)) == 0);
}

int vt_profile_add(struct vt_profile *p, const uint32_t *locs, uint32_t depth, uint32_t thread,
		   enum vt_prof_state state, uint32_t wait, bool truncated, uint64_t count,
		   struct vt_err *err)
{
	if (depth > VT_PROFILE_MAX_DEPTH) {
		depth = VT_PROFILE_MAX_DEPTH;
		truncated = true;
	}
	if (!RESERVE(p->stacks, p->cap_stacks, p->nstacks + 1) ||
	    !RESERVE(p->stack_locs, p->cap_stack_locs, p->nstack_locs + depth))
		return vt_err_set(err, VT_E_NOMEM, 0, "profile: %u stacks", p->nstacks);
	struct stack_key key = { .locs = locs, .depth = depth, .thread = thread, .wait = wait,
				 .state = (uint8_t)state };
	bool added;
	uint32_t i = map_find_or_add(p, &p->index->stacks,
				     stack_hash(locs, depth, thread, (uint8_t)state, wait),
				     stack_hash_of, stack_same, &key, p->nstacks, &added);
	if (i == NO_SLOT)
		return vt_err_set(err, VT_E_NOMEM, 0, "profile: %u stacks", p->nstacks);
	if (added) {
		if (depth)
			memcpy(p->stack_locs + p->nstack_locs, locs, depth * sizeof(*locs));
		p->stacks[p->nstacks++] = (struct vt_prof_stack){
			.first = p->nstack_locs,
			.depth = depth,
			.thread = thread,
			.state = (uint8_t)state,
			.truncated = truncated,
			.wait = wait,
		};
		p->nstack_locs += depth;
	}
	p->stacks[i].count += count;
	if (truncated)
		p->stacks[i].truncated = 1;
	if (thread < p->nthreads)
		p->threads[thread].samples += count;
	p->meta.samples += count;
	return VT_OK;
}

/* ---- pooling ---- */

/* src's string i in p (0 stays 0). */
static uint32_t str_into(struct vt_profile *p, const struct vt_profile *src, uint32_t i)
{
	return i ? vt_profile_intern_str(p, vt_profile_str(src, i)) : 0;
}

/* What adding src's stacks does not count: its meta's other sums, and its modules' frames. */
static int merge_meta(struct vt_profile *p, const struct vt_profile *src)
{
	struct vt_prof_meta *m = &p->meta;
	const struct vt_prof_meta *s = &src->meta;

	if (p->nstacks == 0 && !m->method[0]) {      /* a new profile: what src was sampled by */
		*m = *s;
		m->samples = 0;           /* counted as the stacks are added */
	} else {
		m->duration_s += s->duration_s;
		m->lost += s->lost;
		m->unwind_failed += s->unwind_failed;
		m->filtered += s->filtered;
		m->stops += s->stops;
		m->paused_s += s->paused_s;
		m->process_cpu_s = m->process_cpu_s >= 0 && s->process_cpu_s >= 0 ? m->process_cpu_s + s->process_cpu_s : -1;
		m->self_cpu_s = m->self_cpu_s >= 0 && s->self_cpu_s >= 0 ? m->self_cpu_s + s->self_cpu_s : -1;
		m->exited |= s->exited;
		m->interrupted |= s->interrupted;
		m->kernel_refused |= s->kernel_refused;
	}
	for (uint32_t i = 0; i < src->nmodules; i++) {
		const struct vt_prof_module *sm = &src->modules[i];
		uint32_t k = vt_profile_intern_module(p, vt_profile_str(src, sm->name), vt_profile_str(src, sm->path));

		if (k == NO_SLOT)
			return -1;
		for (int u = 0; u < VT_UNWIND__COUNT; u++)
			p->modules[k].frames[u] += sm->frames[u];
		if (!p->modules[k].symbols)
			p->modules[k].symbols = sm->symbols;
		if (!p->modules[k].lines && sm->lines &&
		    vt_profile_module_set_debug(p, k, sm->lines, vt_profile_str(src, sm->debug_file),
						vt_profile_str(src, sm->debug_ignored),
						vt_profile_str(src, sm->debug_ignored_why)) != VT_OK)
			return -1;
	}
	return 0;
}

int vt_profile_merge(struct vt_profile *p, const struct vt_profile *src, struct vt_err *err)
{
	uint32_t *func = calloc(src->nfuncs ? src->nfuncs : 1, sizeof(*func));
	uint32_t *loc = calloc(src->nlocs ? src->nlocs : 1, sizeof(*loc));
	uint32_t *thread = calloc(src->nthreads ? src->nthreads : 1, sizeof(*thread));
	uint32_t frames[VT_PROFILE_MAX_DEPTH];
	int rc = VT_E_NOMEM;

	if (!func || !loc || !thread || merge_meta(p, src))
		goto out;
	for (uint32_t i = 0; i < src->nfuncs; i++) {
		uint32_t name = str_into(p, src, src->funcs[i].name), mod = str_into(p, src, src->funcs[i].module);
		uint32_t sys = str_into(p, src, src->funcs[i].system_name);

		if (name == NO_SLOT || mod == NO_SLOT || sys == NO_SLOT ||
		    (func[i] = vt_profile_intern_func_sym(p, name, sys, mod)) == NO_SLOT)
			goto out;
	}
	for (uint32_t i = 0; i < src->nlocs; i++) {
		const struct vt_prof_loc *l = &src->locs[i];

		loc[i] = vt_profile_intern_loc(p, l->pc, l->module_off, l->func < src->nfuncs ? func[l->func] : 0,
					       l->kernel);
		if (loc[i] == NO_SLOT)
			goto out;
	}
	for (uint32_t i = 0; i < src->nthreads; i++) {
		const struct vt_prof_thread *t = &src->threads[i];
		struct vt_prof_thread *to;

		if ((thread[i] = vt_profile_intern_thread(p, t->tid, vt_profile_str(src, t->name))) == NO_SLOT)
			goto out;
		to = &p->threads[thread[i]];
		if (t->cpu_s >= 0)
			to->cpu_s = to->cpu_s >= 0 ? to->cpu_s + t->cpu_s : t->cpu_s;
	}
	for (uint32_t i = 0; i < src->nstacks; i++) {
		const struct vt_prof_stack *s = &src->stacks[i];
		const uint32_t *from = vt_profile_stack_locs(src, s);
		uint32_t depth = s->depth < VT_PROFILE_MAX_DEPTH ? s->depth : VT_PROFILE_MAX_DEPTH, wait;

		for (uint32_t d = 0; d < depth; d++)
			frames[d] = from[d] < src->nlocs ? loc[from[d]] : from[d];
		if ((wait = str_into(p, src, s->wait)) == NO_SLOT ||
		    vt_profile_add(p, frames, depth, s->thread < src->nthreads ? thread[s->thread] : s->thread,
				   (enum vt_prof_state)s->state, wait, s->truncated, s->count, err))
			goto out;
	}
	rc = VT_OK;
out:
	free(func);
	free(loc);
	free(thread);
	if (rc != VT_OK)
		return vt_err_set(err, VT_E_NOMEM, 0, "profile: pooling %u stacks", src->nstacks);
	return VT_OK;
}

/* ---- life ---- */

int vt_profile_new(struct vt_profile **out, struct vt_err *err)
{
	*out = NULL;
	struct vt_profile *p = calloc(1, sizeof(*p));
	if (p)
		p->index = calloc(1, sizeof(*p->index));
	if (p && p->index && RESERVE(p->strings, p->cap_strings, 16)) {
		p->strings[0] = strdup("");
		if (p->strings[0]) {
			p->nstrings = 1;
			p->meta.overhead = -1;
			p->meta.process_cpu_s = -1;
			p->meta.self_cpu_s = -1;
			*out = p;
			return VT_OK;
		}
	}
	vt_profile_free(&p);
	return vt_err_set(err, VT_E_NOMEM, 0, "profile");
}

void vt_profile_free(struct vt_profile **pp)
{
	struct vt_profile *p = pp ? *pp : NULL;
	if (!p)
		return;
	for (uint32_t i = 0; i < p->nstrings; i++)
		free(p->strings[i]);
	free(p->strings);
	free(p->funcs);
	free(p->locs);
	free(p->stack_locs);
	free(p->stacks);
	free(p->threads);
	free(p->modules);
	if (p->index) {
		free(p->index->strings.slots);
		free(p->index->funcs.slots);
		free(p->index->locs.slots);
		free(p->index->stacks.slots);
		free(p->index->threads.slots);
		free(p->index->modules.slots);
		free(p->index);
	}
	free(p);
	*pp = NULL;
}

void vt_profile_loc_label(const struct vt_profile *p, uint32_t loc, char *out, size_t cap)
{
	if (loc >= p->nlocs) {
		snprintf(out, cap, "[unknown]");
		return;
	}
	const struct vt_prof_loc *l = &p->locs[loc];
	const struct vt_prof_func *f = l->func < p->nfuncs ? &p->funcs[l->func] : NULL;
	if (f && f->name) {
		snprintf(out, cap, "%s", vt_profile_str(p, f->name));
	} else if (f && f->module) {
		snprintf(out, cap, "%s+0x%" PRIx64, vt_profile_str(p, f->module), l->module_off);
	} else {
		snprintf(out, cap, "[unknown]");
	}
}

const char *vt_prof_state_name(enum vt_prof_state s)
{
	static const char *const names[VT_PROF_STATE__COUNT] = {
		[VT_PROF_RUNNING] = "running",
		[VT_PROF_RUNNABLE] = "runnable",
		[VT_PROF_SLEEPING] = "sleeping",
		[VT_PROF_DISK] = "disk",
		[VT_PROF_OTHER] = "other",
	};
	return (unsigned)s < VT_PROF_STATE__COUNT ? names[s] : "?";
}

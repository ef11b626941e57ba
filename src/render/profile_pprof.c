/*
 * profile_pprof.c — the pprof export (see profile_pprof.h).
 *
 * The message is built in a few flat arrays (every Location, Line, Sample,
 * Label... of one kind in one allocation) that point into each other, packed
 * by protobuf-c, then gzipped with zlib.  The string table is the profile's
 * own (same indices, strings[0] = "", copied with any byte that is not UTF-8
 * made U+FFFD: proto3 readers may reject a string that is not) followed by
 * the strings only pprof needs, so no index has to be translated.
 */
#include "render/profile_pprof.h"

#include "base/gzip.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "profile.pb-c.h"
#include "render/pprof_lib.h"
#include "render/svg_chart.h"

#define LABEL_MAX 4096
#define LABELS_PER_SAMPLE 5      /* thread, tid, pool, state, wait */
#define PPROF_FILE_MAX ((size_t)1 << 32)

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__ValueType pb_value_type;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;

/* Everything the message points to; freed in one place. */
struct build {
	const struct vt_profile *p;
	char **strings;           /* the table: copies of the profile's strings, then pprof's */
	size_t nstrings, cap_strings;

	pb_value_type types[VT_PPROF_TYPES_MAX + 1];   /* the last is period_type */
	pb_value_type *type_ptrs[VT_PPROF_TYPES_MAX];
	pb_mapping *maps;
	pb_mapping **map_ptrs;
	size_t nmaps;
	uint64_t *map_of_str;     /* module name (string index) -> mapping id, 0 none */
	pb_function *funcs;
	pb_function **func_ptrs;
	size_t nfuncs;
	pb_location *locs;
	pb_location **loc_ptrs;
	pb_line *lines;
	pb_line **line_ptrs;
	size_t nlocs;
	pb_sample *samples;
	pb_sample **sample_ptrs;
	size_t nsamples;
	uint64_t *loc_ids;
	int64_t *values;
	pb_label *labels;
	pb_label **label_ptrs;
	int64_t *comments;
	size_t ncomments;
};

/* strings pprof needs that the profile may not have */
struct keys {
	int64_t samples, count, cpu, wall, nanoseconds, thread, tid, pool, state, wait, truncated;
	int64_t states[VT_PROF_STATE__COUNT];
};

/* A copy of s where every byte that does not start valid UTF-8 is U+FFFD (proto3 strings are UTF-8). */
static char *utf8_dup(const char *s)
{
	size_t len = strlen(s), o = 0;
	char *out = malloc(len * 3 + 1);

	if (!out)
		return NULL;
	for (const unsigned char *c = (const unsigned char *)s; *c;) {
		size_t n = vt_utf8_len(c);

		if (n == 0) {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			c++;
		} else {
			memcpy(out + o, c, n);
			o += n;
			c += n;
		}
	}
	out[o] = '\0';
	return out;
}

/* Add a copy of s to the table (no lookup: every caller adds a string once).  -1 out of memory. */
static int64_t str_add(struct build *b, const char *s)
{
	if (b->nstrings == b->cap_strings) {
		size_t cap = b->cap_strings * 2;
		char **n = realloc(b->strings, cap * sizeof(*n));

		if (!n)
			return -1;
		b->strings = n;
		b->cap_strings = cap;
	}
	b->strings[b->nstrings] = utf8_dup(s);
	if (!b->strings[b->nstrings])
		return -1;
	return (int64_t)b->nstrings++;
}

static int64_t str_addf(struct build *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int64_t str_addf(struct build *b, const char *fmt, ...)
{
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	return str_add(b, text);
}

static void build_free(struct build *b)
{
	if (b->strings)
		for (size_t i = 0; i < b->nstrings; i++)
			free(b->strings[i]);
	free(b->strings);
	free(b->maps);
	free(b->map_ptrs);
	free(b->map_of_str);
	free(b->funcs);
	free(b->func_ptrs);
	free(b->locs);
	free(b->loc_ptrs);
	free(b->lines);
	free(b->line_ptrs);
	free(b->samples);
	free(b->sample_ptrs);
	free(b->loc_ids);
	free(b->values);
	free(b->labels);
	free(b->label_ptrs);
	free(b->comments);
}

static int strings_init(struct build *b, struct keys *k)
{
	const struct vt_profile *p = b->p;
	bool ok;

	b->cap_strings = (size_t)p->nstrings + 64;
	b->strings = malloc(b->cap_strings * sizeof(*b->strings));
	if (!b->strings)
		return -1;
	/* the profile's strings at their own indices, as UTF-8 */
	for (uint32_t i = 0; i < p->nstrings; i++)
		if (str_add(b, p->strings[i]) < 0)
			return -1;
	if (!b->nstrings && str_add(b, "") < 0)   /* string_table[0] = "" always */
		return -1;
	k->samples = str_add(b, "samples");
	k->count = str_add(b, "count");
	k->cpu = str_add(b, "cpu");
	k->wall = str_add(b, "wall");
	k->nanoseconds = str_add(b, "nanoseconds");
	k->thread = str_add(b, "thread");
	k->tid = str_add(b, "tid");
	k->pool = str_add(b, "pool");
	k->state = str_add(b, "state");
	k->wait = str_add(b, "wait");
	k->truncated = str_add(b, "[truncated]");
	ok = k->samples >= 0 && k->count >= 0 && k->cpu >= 0 && k->wall >= 0 &&
	     k->nanoseconds >= 0 && k->thread >= 0 && k->tid >= 0 && k->pool >= 0 &&
	     k->state >= 0 && k->wait >= 0 && k->truncated >= 0;
	for (int s = 0; s < VT_PROF_STATE__COUNT; s++) {
		k->states[s] = str_add(b, vt_prof_state_name((enum vt_prof_state)s));
		ok = ok && k->states[s] >= 0;
	}
	return ok ? 0 : -1;
}

/*
 * The program's own module: the one whose path is the process's executable;
 * without that (a profile read from a recording), the first that is a file
 * (its path absolute), neither the kernel ("[kernel]", /proc/kallsyms) nor a
 * shared object.  pprof takes the first Mapping for the main binary ("File:"
 * in its header): kallsyms came first.  UINT32_MAX: none.
 */
static uint32_t main_module(const struct vt_profile *p)
{
	for (uint32_t i = 0; p->meta.program && i < p->nmodules; i++)
		if (p->modules[i].path == p->meta.program)   /* interned: equal strings, equal indices */
			return i;
	for (uint32_t i = 0; !p->meta.program && i < p->nmodules; i++) {
		const struct vt_prof_module *m = &p->modules[i];
		const char *path = m->path && m->path < p->nstrings ? vt_profile_str(p, m->path) : "";
		const char *name = m->name && m->name < p->nstrings ? vt_profile_str(p, m->name) : "";

		if (path[0] == '/' && name[0] != '[' && !strstr(name, ".so"))
			return i;
	}
	return UINT32_MAX;
}

/*
 * One Mapping per module, the program's first (a mapping of its own with no
 * address range when no sample was in its code: a JVM's launcher), then one
 * per module name a function names that the table lacks.
 */
static int mappings_build(struct build *b)
{
	const struct vt_profile *p = b->p;
	size_t cap = (size_t)p->nmodules + p->nfuncs + 1;
	uint32_t first = main_module(p);
	size_t from_funcs;

	b->map_of_str = calloc(p->nstrings ? p->nstrings : 1, sizeof(*b->map_of_str));
	b->maps = calloc(cap, sizeof(*b->maps));
	b->map_ptrs = calloc(cap, sizeof(*b->map_ptrs));
	if (!b->map_of_str || !b->maps || !b->map_ptrs)
		return -1;
	if (first == UINT32_MAX && p->meta.program && p->meta.program < p->nstrings) {
		pb_mapping *pm = &b->maps[b->nmaps];

		perftools__profiles__mapping__init(pm);
		pm->id = b->nmaps + 1;
		pm->filename = p->meta.program;
		b->map_ptrs[b->nmaps++] = pm;
	}
	for (uint32_t k = 0; k < p->nmodules; k++) {
		/* the main module first, then the others in their order */
		uint32_t i = first == UINT32_MAX ? k : k == 0 ? first : k <= first ? k - 1 : k;
		const struct vt_prof_module *m = &p->modules[i];
		pb_mapping *pm;

		if (!m->name || m->name >= p->nstrings || b->map_of_str[m->name])
			continue;
		pm = &b->maps[b->nmaps];
		perftools__profiles__mapping__init(pm);
		pm->id = b->nmaps + 1;
		pm->filename = m->path ? m->path : m->name;
		pm->has_functions = m->symbols != VT_SYMS_NONE;
		if (m->limit > m->start) {
			pm->memory_start = m->start;
			pm->memory_limit = m->limit;
			pm->file_offset = m->offset;
		}
		b->map_ptrs[b->nmaps++] = pm;
		b->map_of_str[m->name] = pm->id;
	}
	from_funcs = b->nmaps;
	for (uint32_t i = 0; i < p->nfuncs; i++) {
		const struct vt_prof_func *f = &p->funcs[i];
		pb_mapping *pm;

		if (!f->module || f->module >= p->nstrings)
			continue;
		if (b->map_of_str[f->module]) {
			pm = &b->maps[b->map_of_str[f->module] - 1];
			if (f->name && pm->id > from_funcs)
				pm->has_functions = true;
			continue;
		}
		pm = &b->maps[b->nmaps];
		perftools__profiles__mapping__init(pm);
		pm->id = b->nmaps + 1;
		pm->filename = f->module;
		pm->has_functions = f->name != 0;
		b->map_ptrs[b->nmaps++] = pm;
		b->map_of_str[f->module] = pm->id;
	}
	return 0;
}

/* system_name: the symbol as in the file (mangled), name when the same */
static pb_function *func_add(struct build *b, uint64_t id, int64_t name, int64_t system_name, int64_t file)
{
	pb_function *f = &b->funcs[b->nfuncs];

	perftools__profiles__function__init(f);
	f->id = id;
	f->name = name;
	f->system_name = system_name;
	f->filename = file;
	b->func_ptrs[b->nfuncs++] = f;
	return f;
}

/* The Line of location i: its function (an address no symbol covers gets a
 * function of its own, next_func) and source line. */
static int line_of(struct build *b, uint32_t i, pb_line *line, uint64_t *next_func)
{
	const struct vt_profile *p = b->p;
	const struct vt_prof_loc *l = &p->locs[i];
	const struct vt_prof_func *f = l->func < p->nfuncs ? &p->funcs[l->func] : NULL;
	uint64_t map = f && f->module < p->nstrings ? b->map_of_str[f->module] : 0;
	char label[LABEL_MAX];

	perftools__profiles__line__init(line);
	line->line = l->line;
	if (f && f->name && f->name < p->nstrings) {
		line->function_id = (uint64_t)l->func + 1;
	} else {
		int64_t name;

		vt_profile_loc_label(p, i, label, sizeof(label));
		name = str_add(b, label);
		if (name < 0)
			return -1;
		line->function_id = *next_func;
		func_add(b, (*next_func)++, name, name, map ? b->maps[map - 1].filename : 0);
	}
	return 0;
}

/* Functions inlined at one address, followed in a location at most (a damaged
 * recording's chain may loop). */
#define INLINE_CHAIN_MAX 64

/* The next location of location i's inline chain (the function it was inlined
 * into), or UINT32_MAX. */
static uint32_t inlined_into(const struct vt_profile *p, uint32_t i)
{
	uint32_t to = p->locs[i].inlined_into;
	return to && to - 1 < p->nlocs && to - 1 != i ? to - 1 : UINT32_MAX;
}

/*
 * Named functions keep their index + 1 as id.  A location is an address: its
 * Lines are the functions inlined there, innermost first, and last the
 * function whose code it is (pprof's order), each with its source line.
 */
static int locations_build(struct build *b, const struct keys *k)
{
	const struct vt_profile *p = b->p;
	size_t nloc = (size_t)p->nlocs + 1, nfn, nlines = 1, li = 0;
	uint64_t next_func = (uint64_t)p->nfuncs + 1;

	for (uint32_t i = 0; i < p->nlocs; i++)
		for (uint32_t j = i, d = 0; j != UINT32_MAX && d < INLINE_CHAIN_MAX; j = inlined_into(p, j), d++)
			nlines++;
	/* the named functions, a function of its own for each Line no symbol names (a
	 * location can be in several chains), and the "[truncated]" root's */
	nfn = (size_t)p->nfuncs + nlines + 1;
	b->funcs = calloc(nfn, sizeof(*b->funcs));
	b->func_ptrs = calloc(nfn, sizeof(*b->func_ptrs));
	b->locs = calloc(nloc, sizeof(*b->locs));
	b->loc_ptrs = calloc(nloc, sizeof(*b->loc_ptrs));
	b->lines = calloc(nlines, sizeof(*b->lines));
	b->line_ptrs = calloc(nlines, sizeof(*b->line_ptrs));
	if (!b->funcs || !b->func_ptrs || !b->locs || !b->loc_ptrs || !b->lines || !b->line_ptrs)
		return -1;
	for (uint32_t i = 0; i < p->nfuncs; i++) {
		const struct vt_prof_func *f = &p->funcs[i];
		uint64_t map = f->module < p->nstrings ? b->map_of_str[f->module] : 0;
		pb_function *pf;

		if (!f->name || f->name >= p->nstrings)
			continue;
		pf = func_add(b, (uint64_t)i + 1, f->name,
			      f->system_name && f->system_name < p->nstrings ? f->system_name : f->name,
			      f->file && f->file < p->nstrings ? f->file
			      : map ? b->maps[map - 1].filename : f->module);
		pf->start_line = f->line;
	}
	for (uint32_t i = 0; i < p->nlocs; i++) {
		const struct vt_prof_loc *l = &p->locs[i];
		const struct vt_prof_func *f = l->func < p->nfuncs ? &p->funcs[l->func] : NULL;
		pb_location *pl = &b->locs[i];

		perftools__profiles__location__init(pl);
		pl->id = (uint64_t)i + 1;
		pl->mapping_id = f && f->module < p->nstrings ? b->map_of_str[f->module] : 0;
		pl->address = l->pc;
		pl->line = &b->line_ptrs[li];
		for (uint32_t j = i; j != UINT32_MAX && pl->n_line < INLINE_CHAIN_MAX; j = inlined_into(p, j)) {
			if (line_of(b, j, &b->lines[li], &next_func))
				return -1;
			b->line_ptrs[li] = &b->lines[li];
			li++;
			pl->n_line++;
		}
		b->loc_ptrs[i] = pl;
	}
	/* the synthetic root of truncated stacks: location nlocs + 1 */
	b->nlocs = p->nlocs;
	{
		pb_location *pl = &b->locs[b->nlocs];
		pb_line *line = &b->lines[li];

		perftools__profiles__location__init(pl);
		perftools__profiles__line__init(line);
		pl->id = (uint64_t)b->nlocs + 1;
		line->function_id = next_func;
		func_add(b, next_func, k->truncated, k->truncated, 0);
		b->line_ptrs[li] = line;
		pl->n_line = 1;
		pl->line = &b->line_ptrs[li];
		b->loc_ptrs[b->nlocs] = pl;
		b->nlocs++;
	}
	return 0;
}

/* Stack i is a sample: with the caller's types, any value not 0; else a count, on a CPU
 * unless wall. */
static bool sample_kept(const struct vt_profile *p, uint32_t i, bool wall, const struct vt_pprof_types *ty)
{
	if (ty) {
		for (unsigned v = 0; v < ty->n; v++)
			if (ty->values[(size_t)i * ty->n + v])
				return true;
		return false;
	}
	return p->stacks[i].count && (wall || p->stacks[i].state == VT_PROF_RUNNING);
}

static int samples_build(struct build *b, const struct keys *k, bool wall,
			 const struct vt_pprof_types *ty)
{
	const struct vt_profile *p = b->p;
	unsigned nv = ty ? ty->n : 2;
	/* every stack's count is in samples of 1/hz s, a wall look's too (it counts hz / wall_hz of them) */
	double hz = p->meta.hz;
	size_t nids = 0, n = 0, id = 0, nl = 0;

	for (uint32_t i = 0; i < p->nstacks; i++) {
		const struct vt_prof_stack *s = &p->stacks[i];

		if (sample_kept(p, i, wall, ty)) {
			n++;
			nids += (size_t)s->depth + 1;
		}
	}
	b->samples = calloc(n ? n : 1, sizeof(*b->samples));
	b->sample_ptrs = calloc(n ? n : 1, sizeof(*b->sample_ptrs));
	b->loc_ids = calloc(nids ? nids : 1, sizeof(*b->loc_ids));
	b->values = calloc(nv * (n ? n : 1), sizeof(*b->values));
	b->labels = calloc(LABELS_PER_SAMPLE * (n ? n : 1), sizeof(*b->labels));
	b->label_ptrs = calloc(LABELS_PER_SAMPLE * (n ? n : 1), sizeof(*b->label_ptrs));
	if (!b->samples || !b->sample_ptrs || !b->loc_ids || !b->values || !b->labels || !b->label_ptrs)
		return -1;
	for (uint32_t i = 0; i < p->nstacks; i++) {
		const struct vt_prof_stack *s = &p->stacks[i];
		const uint32_t *locs = vt_profile_stack_locs(p, s);
		const struct vt_prof_thread *t = s->thread < p->nthreads ? &p->threads[s->thread] : NULL;
		pb_sample *ps = &b->samples[b->nsamples];
		pb_label **lp = &b->label_ptrs[nl];

		if (!sample_kept(p, i, wall, ty))
			continue;
		perftools__profiles__sample__init(ps);
		ps->location_id = &b->loc_ids[id];
		for (uint32_t d = 0; d < s->depth; d++)
			/* a function another was inlined into is a Line of the location before */
			if (d == 0 || inlined_into(p, locs[d - 1]) != locs[d])
				b->loc_ids[id++] = (uint64_t)locs[d] + 1;
		if (s->truncated)
			b->loc_ids[id++] = b->nlocs;   /* the "[truncated]" location */
		ps->n_location_id = (size_t)(&b->loc_ids[id] - ps->location_id);
		ps->value = &b->values[nv * b->nsamples];
		ps->n_value = nv;
		if (ty) {
			memcpy(ps->value, &ty->values[(size_t)i * nv], nv * sizeof(*ps->value));
		} else {
			ps->value[0] = (int64_t)s->count;
			ps->value[1] = hz > 0 ? (int64_t)llround((double)s->count * 1e9 / hz) : 0;
		}
		ps->label = lp;
#define LABEL(k_, str_, num_)                                                         \
		do {                                                                  \
			pb_label *l_ = &b->labels[nl];                                \
			perftools__profiles__label__init(l_);                         \
			l_->key = (k_);                                               \
			l_->str = (str_);                                             \
			l_->num = (num_);                                             \
			b->label_ptrs[nl++] = l_;                                     \
			ps->n_label++;                                                \
		} while (0)
		if (t) {
			if (t->name)
				LABEL(k->thread, t->name, 0);
			LABEL(k->tid, 0, t->tid);
			if (t->pool)
				LABEL(k->pool, t->pool, 0);
		}
		if (wall && !ty) {
			LABEL(k->state, s->state < VT_PROF_STATE__COUNT ? k->states[s->state] : 0, 0);
			if (s->wait && s->wait < p->nstrings)
				LABEL(k->wait, s->wait, 0);
		}
#undef LABEL
		b->sample_ptrs[b->nsamples++] = ps;
	}
	return 0;
}

static const char *const sym_names[] = { "none", "dynsym", "symtab", "minidebuginfo",
					 "debug file", "kallsyms" };
static const char *const unwind_names[VT_UNWIND__COUNT] = { "leaf", "dwarf", "frame pointers",
							    "kernel" };

/* How the profile was taken, for people: pprof -comments shows these. */
static int comments_build(struct build *b, bool wall, const struct vt_pprof_types *ty, const char *note)
{
	const struct vt_profile *p = b->p;
	const struct vt_prof_meta *m = &p->meta;
	int64_t *c = calloc((size_t)p->nmodules + 8, sizeof(*c));
	size_t n = 0;

	if (!c)
		return -1;
	b->comments = c;
	if (ty) {
		if (ty->comment)
			c[n++] = str_add(b, ty->comment);
		goto modules;
	}
	c[n++] = str_addf(b, "vitals profile of pid %d (%s), %s", (int)m->pid, m->comm,
			  wall ? "wall clock: every thread, every state" : "CPU: threads on a CPU");
	c[n++] = str_addf(b, "sampled with %s at %g Hz per thread for %.3f s: %" PRIu64
			  " samples kept, %" PRIu64 " lost, %" PRIu64 " not unwound past the leaf",
			  m->method[0] ? m->method : "?", m->hz, m->duration_s, m->samples, m->lost,
			  m->unwind_failed);
	if (m->wall)
		c[n++] = str_addf(b, "blocked threads looked at %.3g times a second, each look counting "
				  "%.3g samples of 1/%g s", m->wall_hz, m->hz / m->wall_hz, m->hz);
	if (!m->kernel_symbols)
		c[n++] = str_add(b, "no kernel symbols (/proc/kallsyms not readable)");
	if (m->exited)
		c[n++] = str_add(b, "the target exited before the end: the profile so far");
	if (m->overhead >= 0 && !isnan(m->overhead))
		c[n++] = str_addf(b, "overhead on the target %.2f%% (%s)", 100 * m->overhead,
				  m->overhead_how[0] ? m->overhead_how : "measured");
	if (note)
		c[n++] = str_add(b, note);
modules:
	/* symbols and unwinding method, module by module */
	for (uint32_t i = 0; i < p->nmodules; i++) {
		const struct vt_prof_module *md = &p->modules[i];
		char line[512];
		size_t w = (size_t)snprintf(line, sizeof(line), "%s: symbols %s",
					    vt_profile_str(p, md->name),
					    md->symbols < sizeof(sym_names) / sizeof(*sym_names) ?
						    sym_names[md->symbols] : "?");

		for (int u = 1; u < VT_UNWIND__COUNT && w < sizeof(line); u++)
			if (md->frames[u])
				w += (size_t)snprintf(line + w, sizeof(line) - w, ", %s %" PRIu64
						      " frames", unwind_names[u], md->frames[u]);
		c[n++] = str_add(b, line);
	}
	for (size_t i = 0; i < n; i++)
		if (c[i] < 0)
			return -1;
	b->ncomments = n;
	return 0;
}

int vt_profile_pprof(const struct vt_profile *p, const struct vt_pprof_opts *opts,
		     struct vt_buf *out, struct vt_err *err)
{
	struct vt_pprof_opts none = { 0 };
	struct build b = { .p = p };
	struct keys k;
	pb_profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	uint8_t *packed = NULL;
	size_t size;
	int rc;

	if (!opts)
		opts = &none;
	if (opts->types && (opts->types->n == 0 || opts->types->n > VT_PPROF_TYPES_MAX))
		return vt_err_set(err, VT_E_USAGE, 0, "pprof: %u sample types (1 to %d)", opts->types->n,
				  VT_PPROF_TYPES_MAX);
	if (strings_init(&b, &k) || mappings_build(&b) || locations_build(&b, &k) ||
	    samples_build(&b, &k, opts->wall, opts->types) || comments_build(&b, opts->wall, opts->types, opts->note)) {
		rc = vt_err_set(err, VT_E_NOMEM, 0, "pprof: %u stacks, %u locations", p->nstacks,
				p->nlocs);
		goto out_build;
	}
	unsigned ntypes = opts->types ? opts->types->n : 2;

	for (unsigned i = 0; i <= VT_PPROF_TYPES_MAX; i++)
		perftools__profiles__value_type__init(&b.types[i]);
	if (opts->types) {
		const struct vt_pprof_types *ty = opts->types;

		for (unsigned i = 0; i < ntypes; i++) {
			b.types[i].type = str_add(&b, ty->type[i]);
			b.types[i].unit = str_add(&b, ty->unit[i]);
		}
		b.types[VT_PPROF_TYPES_MAX].type = str_add(&b, ty->period_type);
		b.types[VT_PPROF_TYPES_MAX].unit = str_add(&b, ty->period_unit);
	} else {
		b.types[0].type = k.samples;
		b.types[0].unit = k.count;
		b.types[1].type = opts->wall ? k.wall : k.cpu;
		b.types[1].unit = k.nanoseconds;
		b.types[VT_PPROF_TYPES_MAX] = b.types[1];   /* period_type */
	}
	for (unsigned i = 0; i < ntypes; i++)
		b.type_ptrs[i] = &b.types[i];

	prof.n_sample_type = ntypes;
	prof.sample_type = b.type_ptrs;
	prof.n_sample = b.nsamples;
	prof.sample = b.sample_ptrs;
	prof.n_mapping = b.nmaps;
	prof.mapping = b.map_ptrs;
	prof.n_location = b.nlocs;
	prof.location = b.loc_ptrs;
	prof.n_function = b.nfuncs;
	prof.function = b.func_ptrs;
	prof.n_string_table = b.nstrings;
	prof.string_table = b.strings;
	prof.time_nanos = opts->time_nanos;
	prof.duration_nanos = p->meta.duration_s > 0 ? (int64_t)llround(p->meta.duration_s * 1e9) : 0;
	prof.period_type = &b.types[VT_PPROF_TYPES_MAX];
	prof.period = opts->types ? opts->types->period
				  : p->meta.hz > 0 ? (int64_t)llround(1e9 / p->meta.hz) : 0;
	prof.n_comment = b.ncomments;
	prof.comment = b.comments;
	prof.default_sample_type = opts->types ? b.types[opts->types->default_type < ntypes
							 ? opts->types->default_type : 0].type
					       : b.types[1].type;

	if ((rc = vt_protobuf_load(err)))
		goto out_build;
	size = perftools__profiles__profile__get_packed_size(&prof);
	packed = malloc(size ? size : 1);
	if (!packed) {
		rc = vt_err_set(err, VT_E_NOMEM, 0, "pprof: %zu bytes", size);
		goto out_build;
	}
	if (perftools__profiles__profile__pack(&prof, packed) != size) {
		rc = vt_err_set(err, VT_E_FAIL, 0, "pprof: protobuf-c packed a size it did not announce");
		goto out_packed;
	}
	rc = vt_gzip_append(out, packed, size, Z_DEFAULT_COMPRESSION, err);
out_packed:
	free(packed);
out_build:
	build_free(&b);
	return rc;
}

int vt_profile_pprof_write(FILE *out, const struct vt_profile *p,
			   const struct vt_pprof_opts *opts, struct vt_err *err)
{
	struct vt_buf b = VT_BUF_INIT(PPROF_FILE_MAX);
	int rc = vt_profile_pprof(p, opts, &b, err);

	if (!rc && b.len && fwrite(b.data, 1, b.len, out) != b.len)
		rc = vt_err_set(err, VT_E_IO, errno, "cannot write the pprof profile");
	if (!rc && fflush(out) != 0)
		rc = vt_err_set(err, VT_E_IO, errno, "cannot write the pprof profile");
	vt_buf_release(&b);
	return rc;
}

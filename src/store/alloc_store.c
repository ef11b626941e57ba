/*
 * alloc_store.c — a soak's allocation profiles, written to and read from its
 * recording (store/alloc_store.h).
 */
#include "store/alloc_store.h"

#include "store/store_internal.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char vt_store_alloc_schema_sql[] =
	"CREATE TABLE alloc_profiles(id INTEGER PRIMARY KEY, t REAL NOT NULL, wall REAL, pid INTEGER,"
	" partial INTEGER, exited INTEGER, comm TEXT, allocator TEXT, file TEXT, duration_s REAL,"
	" armed_s REAL, windows INTEGER, window_s REAL, budget REAL, trap_ns REAL, slowdown REAL,"
	" hits INTEGER, calls INTEGER, bytes INTEGER, frees INTEGER, lost INTEGER, nsites INTEGER,"
	" sites_total INTEGER, path TEXT, every INTEGER);"
	"CREATE TABLE alloc_sites(profile_id INTEGER, idx INTEGER, name TEXT, module TEXT, calls INTEGER,"
	" bytes INTEGER, linked INTEGER, freed INTEGER, freed_bytes INTEGER, freed_1ms INTEGER,"
	" live INTEGER, live_bytes INTEGER, stack TEXT, PRIMARY KEY(profile_id, idx)) WITHOUT ROWID;";

/* The longest folded stack stored for a site. */
#define STACK_TEXT_MAX 8192

/* ---- writing ---- */

static void bind_real(sqlite3_stmt *q, int i, double v)
{
	if (isfinite(v))
		sqlite3_bind_double(q, i, v);
	else
		sqlite3_bind_null(q, i);
}

static int write_profile(sqlite3 *db, const char *path, double t, double wall, bool partial,
			 const struct vt_allocs *a, size_t nsites, sqlite3_int64 *id, struct vt_err *err)
{
	const struct vt_allocs_meta *m = &a->meta;
	sqlite3_stmt *q;
	int rc;

	if ((rc = vt_store_prepare_on(db, path, "INSERT INTO alloc_profiles(t, wall, pid, partial, exited, comm,"
				      " allocator, file, duration_s, armed_s, windows, window_s, budget, trap_ns,"
				      " slowdown, hits, calls, bytes, frees, lost, nsites, sites_total, path, every)"
				      " VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
				      &q, err)))
		return rc;
	sqlite3_bind_double(q, 1, t);
	sqlite3_bind_double(q, 2, wall);
	sqlite3_bind_int64(q, 3, m->pid);
	sqlite3_bind_int(q, 4, partial);
	sqlite3_bind_int(q, 5, m->exited);
	sqlite3_bind_text(q, 6, m->comm, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 7, m->allocator, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 8, m->file, -1, SQLITE_STATIC);
	bind_real(q, 9, m->duration_s);
	bind_real(q, 10, m->armed_s);
	vt_store_bind_count(q, 11, m->windows);
	bind_real(q, 12, m->window_s);
	bind_real(q, 13, m->budget);
	bind_real(q, 14, m->trap_ns);
	bind_real(q, 15, m->slowdown);
	vt_store_bind_count(q, 16, m->hits);
	vt_store_bind_count(q, 17, m->calls);
	vt_store_bind_count(q, 18, m->bytes);
	vt_store_bind_count(q, 19, m->frees);
	vt_store_bind_count(q, 20, m->lost);
	vt_store_bind_count(q, 21, nsites);
	vt_store_bind_count(q, 22, a->nsites);
	sqlite3_bind_text(q, 23, m->agent ? "agent" : "uprobes", -1, SQLITE_STATIC);
	vt_store_bind_count(q, 24, m->every);
	rc = vt_store_insert_step(db, path, q, "writing an allocation profile to", err);
	sqlite3_finalize(q);
	*id = sqlite3_last_insert_rowid(db);
	return rc;
}

/* A site's first stack, root first, frames joined by ';' (a frame's own ';' made ':'). */
static void folded_stack(const struct vt_allocs *a, const struct vt_alloc_site *s, char *out, size_t cap)
{
	size_t len = 0;

	out[0] = '\0';
	for (uint32_t d = s->example_depth; d-- > 0 && len + 1 < cap;) {
		char name[512];

		vt_profile_loc_label(a->p, s->example[d], name, sizeof(name));
		for (char *c = name; *c; c++)
			if (*c == ';')
				*c = ':';
		len += (size_t)snprintf(out + len, cap - len, "%s%s", name, d ? ";" : "");
	}
}

/* Blocks freed within 1 ms: the first three age bins (sample/allocs.h). */
static uint64_t freed_within_1ms(const struct vt_alloc_site *s)
{
	uint64_t n = 0;

	for (unsigned b = 0; b < VT_ALLOCS_AGE_BINS && vt_allocs_age_bin_max_ns(b) <= 1000000; b++)
		n += s->age_bins[b];
	return n;
}

/* Sites by bytes, most first (a's own order is by calls). */
static int by_bytes(const void *x, const void *y)
{
	const struct vt_alloc_site *a = *(const struct vt_alloc_site *const *)x, *b = *(const struct vt_alloc_site *const *)y;

	return a->bytes < b->bytes ? 1 : a->bytes > b->bytes ? -1 : 0;
}

static int write_sites(sqlite3 *db, const char *path, sqlite3_int64 id, const struct vt_allocs *a,
		       const struct vt_alloc_site **order, size_t n, struct vt_err *err)
{
	char *stack = malloc(STACK_TEXT_MAX);
	sqlite3_stmt *q = NULL;
	int rc;

	if (!stack)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
	rc = vt_store_prepare_on(db, path, "INSERT INTO alloc_sites(profile_id, idx, name, module, calls, bytes,"
				 " linked, freed, freed_bytes, freed_1ms, live, live_bytes, stack)"
				 " VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", &q, err);
	for (size_t i = 0; rc == VT_OK && i < n; i++) {
		const struct vt_alloc_site *s = order[i];
		const struct vt_prof_func *f = s->func < a->p->nfuncs ? &a->p->funcs[s->func] : NULL;
		char name[256];

		vt_profile_loc_label(a->p, s->loc, name, sizeof(name));
		folded_stack(a, s, stack, STACK_TEXT_MAX);
		sqlite3_bind_int64(q, 1, id);
		sqlite3_bind_int64(q, 2, (sqlite3_int64)i);
		sqlite3_bind_text(q, 3, name, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(q, 4, f ? vt_profile_str(a->p, f->module) : "", -1, SQLITE_STATIC);
		vt_store_bind_count(q, 5, s->calls);
		vt_store_bind_count(q, 6, s->bytes);
		vt_store_bind_count(q, 7, s->linked);
		vt_store_bind_count(q, 8, s->freed);
		vt_store_bind_count(q, 9, s->freed_bytes);
		vt_store_bind_count(q, 10, freed_within_1ms(s));
		vt_store_bind_count(q, 11, s->live);
		vt_store_bind_count(q, 12, s->live_bytes);
		sqlite3_bind_text(q, 13, stack, -1, SQLITE_TRANSIENT);
		rc = vt_store_insert_step(db, path, q, "writing an allocation profile to", err);
	}
	sqlite3_finalize(q);
	free(stack);
	return rc;
}

int vt_store_allocs_append(struct vt_store *st, double t, double wall, bool partial, const struct vt_allocs *a,
			   struct vt_err *err)
{
	sqlite3 *db = vt_store_db(st);
	const char *path = vt_store_path(st);
	const struct vt_alloc_site **order = calloc(a->nsites ? a->nsites : 1, sizeof(*order));
	size_t n = a->nsites < VT_STORE_ALLOC_SITES ? a->nsites : VT_STORE_ALLOC_SITES;
	sqlite3_int64 id = 0;
	int rc;

	if (!order)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
	for (size_t i = 0; i < a->nsites; i++)
		order[i] = &a->sites[i];
	qsort(order, a->nsites, sizeof(*order), by_bytes);
	if ((rc = vt_store_exec(st, "BEGIN", err, "writing to")) == VT_OK) {
		if ((rc = write_profile(db, path, t, wall, partial, a, n, &id, err)) == VT_OK)
			rc = write_sites(db, path, id, a, order, n, err);
		if (rc == VT_OK)
			rc = vt_store_exec(st, "COMMIT", err, "writing to");
		if (rc != VT_OK)
			sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	}
	free(order);
	return rc;
}

/* ---- reading ---- */

struct reader {
	sqlite3 *db;
	const char *path;
	sqlite3_int64 id;
	struct vt_err *err;
};

static int damaged(struct reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int damaged(struct reader *r, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vt_store_damaged(r->err, r->path, "allocation profile", (long long)r->id, fmt, ap);
	va_end(ap);
	return rc;
}

/* Column i as a real in [lo, hi]; NULL is NAN when nullable. */
static bool col_real(sqlite3_stmt *q, int i, double lo, double hi, bool nullable, double *v)
{
	int type = sqlite3_column_type(q, i);

	if (type == SQLITE_NULL) {
		*v = NAN;
		return nullable;
	}
	if (type != SQLITE_FLOAT && type != SQLITE_INTEGER)
		return false;
	*v = sqlite3_column_double(q, i);
	return isfinite(*v) && *v >= lo && *v <= hi;
}

#define REAL(q, i, lo, hi, nullable, field, what)                                            \
	do {                                                                                     \
		if (!col_real(q, i, lo, hi, nullable, &field))                                   \
			return damaged(r, "%s is out of range", what);                          \
	} while (0)

static int read_profile(struct reader *r, sqlite3_stmt *q, struct vt_alloc_look *l)
{
	char path[24];
	uint64_t v;

	r->id = l->id = sqlite3_column_int64(q, 0);
	REAL(q, 1, 0, 1e12, false, l->t, "t");
	REAL(q, 2, 0, 1e12, true, l->wall, "wall");
	VT_STORE_COUNT(q, 3, INT32_MAX, v, "pid");
	l->pid = (pid_t)v;
	VT_STORE_COUNT(q, 4, 1, v, "partial");
	l->partial = v;
	VT_STORE_COUNT(q, 5, 1, v, "exited");
	l->exited = v;
	vt_store_col_text(q, 6, l->comm, sizeof(l->comm));
	vt_store_col_text(q, 7, l->allocator, sizeof(l->allocator));
	REAL(q, 8, 0, 1e9, false, l->duration_s, "duration_s");
	REAL(q, 9, 0, l->duration_s + 1, false, l->armed_s, "armed_s");
	VT_STORE_COUNT(q, 10, UINT32_MAX, l->windows, "windows");
	REAL(q, 11, 0, 1e9, true, l->window_s, "window_s");
	REAL(q, 12, 0, 1, true, l->budget, "budget");
	REAL(q, 13, 0, 1e9, true, l->trap_ns, "trap_ns");
	REAL(q, 14, 0, 1e6, true, l->slowdown, "slowdown");
	VT_STORE_COUNT(q, 15, INT64_MAX, l->hits, "hits");
	VT_STORE_COUNT(q, 16, INT64_MAX, l->calls, "calls");
	VT_STORE_COUNT(q, 17, INT64_MAX, l->bytes, "bytes");
	VT_STORE_COUNT(q, 18, INT64_MAX, l->frees, "frees");
	VT_STORE_COUNT(q, 19, INT64_MAX, l->lost, "lost");
	VT_STORE_COUNT(q, 20, VT_STORE_ALLOC_SITES, l->nsites, "nsites");
	VT_STORE_COUNT(q, 21, INT64_MAX, l->sites_total, "sites_total");
	vt_store_col_text(q, 22, path, sizeof(path));
	if (strcmp(path, "agent") && strcmp(path, "uprobes"))
		return damaged(r, "its path '%.20s' is neither uprobes nor agent", path);
	l->agent = !strcmp(path, "agent");
	VT_STORE_COUNT(q, 23, 1ull << 40, l->every, "every");
	if (l->nsites > l->sites_total)
		return damaged(r, "it keeps %zu sites of %llu", l->nsites, (unsigned long long)l->sites_total);
	return VT_OK;
}

static int read_site(struct reader *r, sqlite3_stmt *q, const struct vt_alloc_look *l, size_t i,
		     struct vt_alloc_look_site *s)
{
	uint64_t idx;

	VT_STORE_COUNT(q, 0, VT_STORE_ALLOC_SITES, idx, "a site's idx");
	if (idx != i)
		return damaged(r, "site %zu is missing", i);
	vt_store_col_text(q, 1, s->name, sizeof(s->name));
	vt_store_col_text(q, 2, s->module, sizeof(s->module));
	VT_STORE_COUNT(q, 3, l->calls, s->calls, "a site's calls");
	VT_STORE_COUNT(q, 4, l->bytes, s->bytes, "a site's bytes");
	VT_STORE_COUNT(q, 5, s->calls, s->linked, "a site's linked calls");
	VT_STORE_COUNT(q, 6, s->linked, s->freed, "a site's freed calls");
	VT_STORE_COUNT(q, 7, s->bytes, s->freed_bytes, "a site's freed bytes");
	VT_STORE_COUNT(q, 8, s->freed, s->freed_1ms, "a site's calls freed within 1 ms");
	VT_STORE_COUNT(q, 9, s->linked - s->freed, s->live, "a site's live calls");
	VT_STORE_COUNT(q, 10, s->bytes, s->live_bytes, "a site's live bytes");
	return VT_OK;
}

static int read_sites(struct reader *r, sqlite3_stmt *q, struct vt_alloc_look *l)
{
	size_t i = 0;
	int step, rc = VT_OK;

	sqlite3_reset(q);
	sqlite3_bind_int64(q, 1, l->id);
	if (l->nsites && !(l->sites = calloc(l->nsites, sizeof(*l->sites))))
		return vt_err_set(r->err, VT_E_NOMEM, ENOMEM, "out of memory");
	while (rc == VT_OK && (step = sqlite3_step(q)) == SQLITE_ROW) {
		if (i >= l->nsites)
			return damaged(r, "it has more sites than its %zu", l->nsites);
		rc = read_site(r, q, l, i, &l->sites[i]);
		i++;
	}
	if (rc != VT_OK)
		return rc;
	if (step != SQLITE_DONE)
		return vt_store_db_err(r->db, step, r->err, r->path, "reading");
	if (i != l->nsites)
		return damaged(r, "it has %zu sites of its %zu", i, l->nsites);
	return VT_OK;
}

int vt_store_allocs_load(const char *path, struct vt_alloc_looks *out, struct vt_err *err)
{
	struct reader r = { .path = path, .err = err };
	sqlite3_stmt *profiles = NULL, *sites = NULL;
	bool wal_unread;
	int rc, schema, step = SQLITE_DONE;

	memset(out, 0, sizeof(*out));
	if ((rc = vt_store_open_read(path, &r.db, &schema, &wal_unread, err)))
		return rc;
	if (!vt_store_has_table(r.db, "alloc_profiles")) {
		snprintf(out->why, sizeof(out->why), "the recording has no allocation profiles (schema %d: recorded "
			 "by a vitals before they were recorded)", schema);
		goto out;
	}
	if (sqlite3_prepare_v2(r.db, "SELECT id, t, wall, pid, partial, exited, comm, allocator, duration_s,"
			       " armed_s, windows, window_s, budget, trap_ns, slowdown, hits, calls, bytes, frees,"
			       " lost, nsites, sites_total, path, every FROM alloc_profiles ORDER BY id", -1,
			       &profiles, NULL) ||
	    sqlite3_prepare_v2(r.db, "SELECT idx, name, module, calls, bytes, linked, freed, freed_bytes,"
			       " freed_1ms, live, live_bytes FROM alloc_sites WHERE profile_id = ? ORDER BY idx", -1,
			       &sites, NULL)) {
		rc = vt_store_db_err(r.db, SQLITE_ERROR, err, path, "reading");
		goto out;
	}
	while (rc == VT_OK && (step = sqlite3_step(profiles)) == SQLITE_ROW) {
		struct vt_alloc_look *l;

		if (out->n % 16 == 0) {
			void *grown = realloc(out->v, (out->n + 16) * sizeof(*out->v));

			if (!grown) {
				rc = vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
				break;
			}
			out->v = grown;
		}
		l = &out->v[out->n++];
		memset(l, 0, sizeof(*l));
		if ((rc = read_profile(&r, profiles, l)) == VT_OK)
			rc = read_sites(&r, sites, l);
	}
	if (rc == VT_OK && step != SQLITE_DONE)
		rc = vt_store_db_err(r.db, step, err, path, "reading");
	if (rc == VT_OK && !out->n)
		snprintf(out->why, sizeof(out->why), "no allocation profiles in this recording (vitals soak "
			 "--allocs-every takes them)");
out:
	sqlite3_finalize(profiles);
	sqlite3_finalize(sites);
	vt_store_close_read(r.db);
	return rc;
}

void vt_alloc_looks_release(struct vt_alloc_looks *l)
{
	for (size_t i = 0; l->v && i < l->n; i++)
		free(l->v[i].sites);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

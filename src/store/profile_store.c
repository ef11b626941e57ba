/*
 * profile_store.c — profiles in a recording (see profile_store.h).
 *
 * Reading rebuilds the profile through its own interning calls, table by
 * table in index order, so the profile read has the indices the one
 * written had and its hash index is whole (it can be added to); an entry
 * interned at another index than its row says is a duplicate, and the
 * recording is damaged.
 */
#include "store/profile_store.h"
#include "store/store_internal.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char vt_store_profile_schema_sql[] =
	"CREATE TABLE profiles(id INTEGER PRIMARY KEY, t REAL NOT NULL, wall REAL, pid INTEGER,"
	" partial INTEGER, comm TEXT, method TEXT, hz REAL, duration_s REAL, wall_mode INTEGER,"
	" wall_hz REAL, samples INTEGER, lost INTEGER, unwind_failed INTEGER, kernel_symbols INTEGER,"
	" exited INTEGER, process_cpu_s REAL, self_cpu_s REAL, overhead REAL, overhead_how TEXT,"
	" nstrings INTEGER, nfuncs INTEGER, nlocs INTEGER, nstacks INTEGER, nthreads INTEGER,"
	" nmodules INTEGER);"
	"CREATE TABLE profile_strings(profile_id INTEGER, idx INTEGER, s TEXT,"
	" PRIMARY KEY(profile_id, idx)) WITHOUT ROWID;"
	"CREATE TABLE profile_funcs(profile_id INTEGER, idx INTEGER, name INTEGER, module INTEGER,"
	" system_name INTEGER, file INTEGER, line INTEGER, PRIMARY KEY(profile_id, idx)) WITHOUT ROWID;"
	"CREATE TABLE profile_locs(profile_id INTEGER, idx INTEGER, pc INTEGER, module_off INTEGER,"
	" func INTEGER, kernel INTEGER, file INTEGER, line INTEGER, inlined_into INTEGER,"
	" PRIMARY KEY(profile_id, idx)) WITHOUT ROWID;"
	"CREATE TABLE profile_stacks(profile_id INTEGER, idx INTEGER, thread INTEGER, state INTEGER,"
	" wait INTEGER, count INTEGER, truncated INTEGER, locs BLOB,"
	" PRIMARY KEY(profile_id, idx)) WITHOUT ROWID;"
	"CREATE TABLE profile_threads(profile_id INTEGER, idx INTEGER, tid INTEGER, name INTEGER,"
	" pool INTEGER, cpu_s REAL, samples INTEGER, PRIMARY KEY(profile_id, idx)) WITHOUT ROWID;"
	"CREATE TABLE profile_modules(profile_id INTEGER, idx INTEGER, name INTEGER, path INTEGER,"
	" symbols INTEGER, frames BLOB, lines INTEGER, debug_file INTEGER, debug_ignored INTEGER,"
	" debug_ignored_why INTEGER, PRIMARY KEY(profile_id, idx)) WITHOUT ROWID;";

/* The last symbol source and line source this vitals knows (elf/unwind.h). */
#define SYMS_LAST VT_SYMS_KALLSYMS
#define LINES_LAST VT_LINES_SPLIT
/* Module frame counts kept per method at most (a newer vitals may know more methods). */
#define FRAMES_BLOB_MAX (16 * 8)

/* ---- writing ---- */

struct writer {
	sqlite3 *db;
	const char *path;
	sqlite3_int64 id;
	struct vt_err *err;
};

static int w_prepare(struct writer *w, const char *sql, sqlite3_stmt **q)
{
	return vt_store_prepare_on(w->db, w->path, sql, q, w->err);
}

static int w_step(struct writer *w, sqlite3_stmt *q)
{
	return vt_store_insert_step(w->db, w->path, q, "writing a profile to", w->err);
}

/* A figure that may be unknown: NULL when not finite (or below lo). */
static void bind_figure(sqlite3_stmt *q, int i, double v, double lo)
{
	if (isfinite(v) && v >= lo)
		sqlite3_bind_double(q, i, v);
	else
		sqlite3_bind_null(q, i);
}

static int write_head(struct writer *w, const struct vt_store_profile *at, const struct vt_profile *p)
{
	const struct vt_prof_meta *m = &p->meta;
	sqlite3_stmt *q;
	int rc;

	if ((rc = w_prepare(w, "INSERT INTO profiles(t, wall, pid, partial, comm, method, hz, duration_s,"
			       " wall_mode, wall_hz, samples, lost, unwind_failed, kernel_symbols, exited,"
			       " process_cpu_s, self_cpu_s, overhead, overhead_how, nstrings, nfuncs, nlocs,"
			       " nstacks, nthreads, nmodules) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
			       " ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", &q)))
		return rc;
	sqlite3_bind_double(q, 1, at->t);
	sqlite3_bind_double(q, 2, at->wall);
	sqlite3_bind_int64(q, 3, m->pid);
	sqlite3_bind_int(q, 4, at->partial);
	sqlite3_bind_text(q, 5, m->comm, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 6, m->method, -1, SQLITE_STATIC);
	sqlite3_bind_double(q, 7, m->hz);
	sqlite3_bind_double(q, 8, m->duration_s);
	sqlite3_bind_int(q, 9, m->wall);
	sqlite3_bind_double(q, 10, m->wall_hz);
	vt_store_bind_count(q, 11, m->samples);
	vt_store_bind_count(q, 12, m->lost);
	vt_store_bind_count(q, 13, m->unwind_failed);
	sqlite3_bind_int(q, 14, m->kernel_symbols);
	sqlite3_bind_int(q, 15, m->exited);
	bind_figure(q, 16, m->process_cpu_s, 0);
	bind_figure(q, 17, m->self_cpu_s, 0);
	bind_figure(q, 18, m->overhead, -INFINITY);
	sqlite3_bind_text(q, 19, m->overhead_how, -1, SQLITE_STATIC);
	sqlite3_bind_int64(q, 20, p->nstrings);
	sqlite3_bind_int64(q, 21, p->nfuncs);
	sqlite3_bind_int64(q, 22, p->nlocs);
	sqlite3_bind_int64(q, 23, p->nstacks);
	sqlite3_bind_int64(q, 24, p->nthreads);
	sqlite3_bind_int64(q, 25, p->nmodules);
	rc = w_step(w, q);
	sqlite3_finalize(q);
	w->id = sqlite3_last_insert_rowid(w->db);
	return rc;
}

static int write_strings(struct writer *w, const struct vt_profile *p)
{
	sqlite3_stmt *q;
	uint32_t i;
	int rc;

	if ((rc = w_prepare(w, "INSERT INTO profile_strings(profile_id, idx, s) VALUES(?, ?, ?)", &q)))
		return rc;
	for (i = 0; i < p->nstrings && rc == VT_OK; i++) {
		sqlite3_bind_int64(q, 1, w->id);
		sqlite3_bind_int64(q, 2, i);
		sqlite3_bind_text(q, 3, p->strings[i] ? p->strings[i] : "", -1, SQLITE_STATIC);
		rc = w_step(w, q);
	}
	sqlite3_finalize(q);
	return rc;
}

static int write_funcs(struct writer *w, const struct vt_profile *p)
{
	sqlite3_stmt *q;
	uint32_t i;
	int rc;

	if ((rc = w_prepare(w, "INSERT INTO profile_funcs(profile_id, idx, name, module, system_name,"
			    " file, line) VALUES(?, ?, ?, ?, ?, ?, ?)", &q)))
		return rc;
	for (i = 0; i < p->nfuncs && rc == VT_OK; i++) {
		sqlite3_bind_int64(q, 1, w->id);
		sqlite3_bind_int64(q, 2, i);
		sqlite3_bind_int64(q, 3, p->funcs[i].name);
		sqlite3_bind_int64(q, 4, p->funcs[i].module);
		sqlite3_bind_int64(q, 5, p->funcs[i].system_name);
		sqlite3_bind_int64(q, 6, p->funcs[i].file);
		sqlite3_bind_int64(q, 7, p->funcs[i].line);
		rc = w_step(w, q);
	}
	sqlite3_finalize(q);
	return rc;
}

static int write_locs(struct writer *w, const struct vt_profile *p)
{
	sqlite3_stmt *q;
	uint32_t i;
	int rc;

	if ((rc = w_prepare(w, "INSERT INTO profile_locs(profile_id, idx, pc, module_off, func, kernel,"
			       " file, line, inlined_into) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)", &q)))
		return rc;
	for (i = 0; i < p->nlocs && rc == VT_OK; i++) {
		const struct vt_prof_loc *l = &p->locs[i];

		sqlite3_bind_int64(q, 1, w->id);
		sqlite3_bind_int64(q, 2, i);
		sqlite3_bind_int64(q, 3, (sqlite3_int64)l->pc);          /* the 64 bits, as they are */
		sqlite3_bind_int64(q, 4, (sqlite3_int64)l->module_off);
		sqlite3_bind_int64(q, 5, l->func);
		sqlite3_bind_int(q, 6, l->kernel);
		sqlite3_bind_int64(q, 7, l->file);
		sqlite3_bind_int64(q, 8, l->line);
		sqlite3_bind_int64(q, 9, l->inlined_into);
		rc = w_step(w, q);
	}
	sqlite3_finalize(q);
	return rc;
}

static void put_le32(unsigned char *b, uint32_t v)
{
	b[0] = (unsigned char)v;
	b[1] = (unsigned char)(v >> 8);
	b[2] = (unsigned char)(v >> 16);
	b[3] = (unsigned char)(v >> 24);
}

static uint32_t get_le32(const unsigned char *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static int write_stacks(struct writer *w, const struct vt_profile *p)
{
	unsigned char blob[VT_PROFILE_MAX_DEPTH * 4];
	sqlite3_stmt *q;
	uint32_t i, k;
	int rc;

	if ((rc = w_prepare(w, "INSERT INTO profile_stacks(profile_id, idx, thread, state, wait, count,"
			       " truncated, locs) VALUES(?, ?, ?, ?, ?, ?, ?, ?)", &q)))
		return rc;
	for (i = 0; i < p->nstacks && rc == VT_OK; i++) {
		const struct vt_prof_stack *s = &p->stacks[i];
		const uint32_t *locs = vt_profile_stack_locs(p, s);
		uint32_t depth = s->depth < VT_PROFILE_MAX_DEPTH ? s->depth : VT_PROFILE_MAX_DEPTH;

		for (k = 0; k < depth; k++)
			put_le32(blob + 4 * k, locs[k]);
		sqlite3_bind_int64(q, 1, w->id);
		sqlite3_bind_int64(q, 2, i);
		sqlite3_bind_int64(q, 3, s->thread);
		sqlite3_bind_int(q, 4, s->state);
		sqlite3_bind_int64(q, 5, s->wait);
		vt_store_bind_count(q, 6, s->count);
		sqlite3_bind_int(q, 7, s->truncated ? 1 : 0);
		if (depth)
			sqlite3_bind_blob(q, 8, blob, (int)(4 * depth), SQLITE_TRANSIENT);
		else
			sqlite3_bind_zeroblob(q, 8, 0);
		rc = w_step(w, q);
	}
	sqlite3_finalize(q);
	return rc;
}

static int write_threads(struct writer *w, const struct vt_profile *p)
{
	sqlite3_stmt *q;
	uint32_t i;
	int rc;

	if ((rc = w_prepare(w, "INSERT INTO profile_threads(profile_id, idx, tid, name, pool, cpu_s, samples)"
			       " VALUES(?, ?, ?, ?, ?, ?, ?)", &q)))
		return rc;
	for (i = 0; i < p->nthreads && rc == VT_OK; i++) {
		const struct vt_prof_thread *t = &p->threads[i];

		sqlite3_bind_int64(q, 1, w->id);
		sqlite3_bind_int64(q, 2, i);
		sqlite3_bind_int64(q, 3, t->tid);
		sqlite3_bind_int64(q, 4, t->name);
		sqlite3_bind_int64(q, 5, t->pool);
		bind_figure(q, 6, t->cpu_s, 0);
		vt_store_bind_count(q, 7, t->samples);
		rc = w_step(w, q);
	}
	sqlite3_finalize(q);
	return rc;
}

static int write_modules(struct writer *w, const struct vt_profile *p)
{
	unsigned char blob[VT_UNWIND__COUNT * 8];
	sqlite3_stmt *q;
	uint32_t i;
	int rc, k, b;

	if ((rc = w_prepare(w, "INSERT INTO profile_modules(profile_id, idx, name, path, symbols, frames,"
			       " lines, debug_file, debug_ignored, debug_ignored_why)"
			       " VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", &q)))
		return rc;
	for (i = 0; i < p->nmodules && rc == VT_OK; i++) {
		const struct vt_prof_module *m = &p->modules[i];

		for (k = 0; k < VT_UNWIND__COUNT; k++)
			for (b = 0; b < 8; b++)
				blob[8 * k + b] = (unsigned char)(m->frames[k] >> (8 * b));
		sqlite3_bind_int64(q, 1, w->id);
		sqlite3_bind_int64(q, 2, i);
		sqlite3_bind_int64(q, 3, m->name);
		sqlite3_bind_int64(q, 4, m->path);
		sqlite3_bind_int(q, 5, m->symbols);
		sqlite3_bind_blob(q, 6, blob, (int)sizeof(blob), SQLITE_TRANSIENT);
		sqlite3_bind_int(q, 7, m->lines);
		sqlite3_bind_int64(q, 8, m->debug_file);
		sqlite3_bind_int64(q, 9, m->debug_ignored);
		sqlite3_bind_int64(q, 10, m->debug_ignored_why);
		rc = w_step(w, q);
	}
	sqlite3_finalize(q);
	return rc;
}

int vt_store_profile_append(struct vt_store *st, const struct vt_store_profile *at,
			    const struct vt_profile *p, int64_t *id, struct vt_err *err)
{
	struct writer w = { .db = vt_store_db(st), .path = vt_store_path(st), .err = err };
	int rc;

	if (sqlite3_exec(w.db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		return vt_store_db_err(w.db, SQLITE_ERROR, err, w.path, "writing a profile to");
	if ((rc = write_head(&w, at, p)) || (rc = write_strings(&w, p)) || (rc = write_funcs(&w, p)) ||
	    (rc = write_locs(&w, p)) || (rc = write_stacks(&w, p)) || (rc = write_threads(&w, p)) ||
	    (rc = write_modules(&w, p))) {
		sqlite3_exec(w.db, "ROLLBACK", NULL, NULL, NULL);
		return rc;
	}
	rc = sqlite3_exec(w.db, "COMMIT", NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		rc = vt_store_db_err(w.db, rc, err, w.path, "writing a profile to");
		sqlite3_exec(w.db, "ROLLBACK", NULL, NULL, NULL);
		return rc;
	}
	if (id)
		*id = w.id;
	return VT_OK;
}

/* ---- reading ---- */

struct vt_store_profiles {
	sqlite3 *db;
	char path[4096];
	struct vt_store_profile *v;
	size_t n;
};

/* The per-profile counts its head row promises. */
struct counts {
	uint32_t strings, funcs, locs, stacks, threads, modules;
};

/* Reading one profile: where, and what went wrong. */
struct reader {
	struct vt_store_profiles *r;
	sqlite3_int64 id;
	struct vt_profile *p;
	struct counts n;
	struct vt_err *err;
};

static int damaged(const struct reader *rd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int damaged(const struct reader *rd, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return vt_err_set(rd->err, VT_E_RECORDING, 0, "'%s' is damaged: profile %lld: %s", rd->r->path,
			  (long long)rd->id, what);
}

/* An INTEGER column within [lo, hi]. */
static bool col_int(sqlite3_stmt *q, int col, int64_t lo, int64_t hi, int64_t *out)
{
	int64_t v;

	if (sqlite3_column_type(q, col) != SQLITE_INTEGER)
		return false;
	v = sqlite3_column_int64(q, col);
	if (v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

/* An index into a table of n entries. */
static bool col_index(sqlite3_stmt *q, int col, uint32_t n, uint32_t *out)
{
	int64_t v;

	if (!col_int(q, col, 0, (int64_t)n - 1, &v))
		return false;
	*out = (uint32_t)v;
	return true;
}

/* A number within [lo, hi]; NULL is unknown_value when unknown_ok. */
static bool col_real(sqlite3_stmt *q, int col, double lo, double hi, bool unknown_ok, double unknown_value,
		     double *out)
{
	int type = sqlite3_column_type(q, col);
	double v;

	if (type == SQLITE_NULL && unknown_ok) {
		*out = unknown_value;
		return true;
	}
	if (type != SQLITE_INTEGER && type != SQLITE_FLOAT)
		return false;
	v = sqlite3_column_double(q, col);
	if (!isfinite(v) || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

/* Text (NULL: "") without a NUL inside, into out[cap] (cut to fit). */
static bool col_text(sqlite3_stmt *q, int col, char *out, size_t cap)
{
	int type = sqlite3_column_type(q, col);
	const char *s;

	if (type == SQLITE_NULL) {
		out[0] = '\0';
		return true;
	}
	if (type != SQLITE_TEXT)
		return false;
	s = (const char *)sqlite3_column_text(q, col);
	if (!s || strlen(s) != (size_t)sqlite3_column_bytes(q, col))
		return false;
	snprintf(out, cap, "%s", s);
	return true;
}

#define MAX_S 1e9        /* seconds: 31 years */
#define MAX_WALL 1e11    /* unix time: the year 5138 */
#define MAX_HZ 1e6
#define MAX_COUNT ((int64_t)INT64_MAX)

/* One profiles row (columns as the list query has them) into *info and, when m, the meta. */
static int read_head(struct reader *rd, sqlite3_stmt *q, struct vt_store_profile *info,
		     struct vt_prof_meta *m, struct counts *n)
{
	struct vt_prof_meta mm = { 0 };
	int64_t v[16];
	uint32_t c[6];
	double d[8];
	int k;

	if (!col_real(q, 1, 0, MAX_S, false, 0, &d[0]))
		return damaged(rd, "its time is not a number of seconds");
	if (!col_real(q, 2, 0, MAX_WALL, true, 0, &d[1]))
		return damaged(rd, "its wall time is not a time");
	if (!col_int(q, 3, 0, INT32_MAX, &v[0]))
		return damaged(rd, "its pid is not a pid");
	if (!col_int(q, 4, 0, 1, &v[1]) || !col_int(q, 9, 0, 1, &v[2]) || !col_int(q, 14, 0, 1, &v[3]) ||
	    !col_int(q, 15, 0, 1, &v[4]))
		return damaged(rd, "a flag (partial, wall_mode, kernel_symbols, exited) is not 0 or 1");
	if (!col_text(q, 5, mm.comm, sizeof(mm.comm)) || !col_text(q, 6, mm.method, sizeof(mm.method)) ||
	    !col_text(q, 19, mm.overhead_how, sizeof(mm.overhead_how)))
		return damaged(rd, "comm, method or overhead_how is not text");
	if (!col_real(q, 7, 0, MAX_HZ, false, 0, &d[2]) || !col_real(q, 10, 0, MAX_HZ, false, 0, &d[3]))
		return damaged(rd, "its sampling rate is not a number from 0 to %g", MAX_HZ);
	if (!col_real(q, 8, 0, MAX_S, false, 0, &d[4]))
		return damaged(rd, "its duration is not a number of seconds");
	if (!col_int(q, 11, 0, MAX_COUNT, &v[5]) || !col_int(q, 12, 0, MAX_COUNT, &v[6]) ||
	    !col_int(q, 13, 0, MAX_COUNT, &v[7]))
		return damaged(rd, "a sample count is not a count");
	if (!col_real(q, 16, 0, MAX_S, true, -1, &d[5]) || !col_real(q, 17, 0, MAX_S, true, -1, &d[6]))
		return damaged(rd, "a CPU time is not a number of seconds");
	if (!col_real(q, 18, -MAX_HZ, MAX_HZ, true, NAN, &d[7]))
		return damaged(rd, "its overhead is not a number");
	for (k = 0; k < 6; k++)
		if (!col_index(q, 20 + k, VT_STORE_PROFILE_ROWS_MAX + 1, &c[k]))
			return damaged(rd, "a table size is not a count up to %u", VT_STORE_PROFILE_ROWS_MAX);
	if (c[0] < 1)
		return damaged(rd, "it has no string table");
	info->id = rd->id;
	info->t = d[0];
	info->wall = d[1];
	info->pid = (pid_t)v[0];
	info->partial = v[1];
	info->duration_s = d[4];
	info->exited = v[4];
	info->samples = (uint64_t)v[5];
	*n = (struct counts){ c[0], c[1], c[2], c[3], c[4], c[5] };
	if (!m)
		return VT_OK;
	mm.pid = (pid_t)v[0];
	mm.hz = d[2];
	mm.duration_s = d[4];
	mm.wall = v[2];
	mm.wall_hz = d[3];
	mm.samples = (uint64_t)v[5];
	mm.lost = (uint64_t)v[6];
	mm.unwind_failed = (uint64_t)v[7];
	mm.kernel_symbols = v[3];
	mm.exited = v[4];
	mm.process_cpu_s = d[5];
	mm.self_cpu_s = d[6];
	mm.overhead = d[7];
	*m = mm;
	return VT_OK;
}

static const char head_columns[] =
	"id, t, wall, pid, partial, comm, method, hz, duration_s, wall_mode, wall_hz, samples, lost,"
	" unwind_failed, kernel_symbols, exited, process_cpu_s, self_cpu_s, overhead, overhead_how,"
	" nstrings, nfuncs, nlocs, nstacks, nthreads, nmodules";

/* A query over one table of profile rd->id, in index order. */
static int rows_prepare(struct reader *rd, const char *columns, const char *table, sqlite3_stmt **q)
{
	char sql[512];
	int rc;

	snprintf(sql, sizeof(sql), "SELECT idx, %s FROM %s WHERE profile_id = ? ORDER BY idx", columns, table);
	rc = sqlite3_prepare_v2(rd->r->db, sql, -1, q, NULL);
	if (rc != SQLITE_OK) {
		if ((sqlite3_extended_errcode(rd->r->db) & 0xff) == SQLITE_ERROR)
			return damaged(rd, "table %s is not as vitals writes it: %s", table,
				       sqlite3_errmsg(rd->r->db));
		return vt_store_db_err(rd->r->db, rc, rd->err, rd->r->path, "reading");
	}
	sqlite3_bind_int64(*q, 1, rd->id);
	return VT_OK;
}

/*
 * Step to row `expect` of a table that should have `want` rows: VT_OK with
 * *row true on the next row (its idx checked), *row false at the end
 * (every row there), else the error.
 */
static int rows_next(struct reader *rd, sqlite3_stmt *q, const char *table, uint32_t expect, uint32_t want,
		     bool *row)
{
	int rc = sqlite3_step(q);
	int64_t idx;

	*row = false;
	if (rc == SQLITE_DONE) {
		if (expect != want)
			return damaged(rd, "%s has %u of its %u rows", table, expect, want);
		return VT_OK;
	}
	if (rc != SQLITE_ROW)
		return vt_store_db_err(rd->r->db, rc, rd->err, rd->r->path, "reading");
	if (!col_int(q, 0, 0, INT64_MAX, &idx) || idx != (int64_t)expect)
		return damaged(rd, "%s row %u is missing or out of order", table, expect);
	if (expect >= want)
		return damaged(rd, "%s has more than its %u rows", table, want);
	*row = true;
	return VT_OK;
}

static int nomem(const struct reader *rd)
{
	return vt_err_set(rd->err, VT_E_NOMEM, ENOMEM, "out of memory reading profile %lld of '%s'",
			  (long long)rd->id, rd->r->path);
}

static int read_strings(struct reader *rd)
{
	sqlite3_stmt *q;
	uint32_t i;
	bool row;
	int rc;

	if ((rc = rows_prepare(rd, "s", "profile_strings", &q)))
		return rc;
	for (i = 0; (rc = rows_next(rd, q, "profile_strings", i, rd->n.strings, &row)) == VT_OK && row; i++) {
		int type = sqlite3_column_type(q, 1);
		const char *s = (const char *)sqlite3_column_text(q, 1);
		size_t len = (size_t)sqlite3_column_bytes(q, 1);
		uint32_t got;

		if (type != SQLITE_TEXT || !s || strlen(s) != len || len > VT_STORE_PROFILE_STR_MAX) {
			rc = damaged(rd, "string %u is not text of at most %d bytes", i, VT_STORE_PROFILE_STR_MAX);
			break;
		}
		if (i == 0) {
			if (len != 0) {
				rc = damaged(rd, "string 0 is not empty");
				break;
			}
			continue;
		}
		got = vt_profile_intern_str(rd->p, s);
		if (got == UINT32_MAX) {
			rc = nomem(rd);
			break;
		}
		if (got != i) {
			rc = damaged(rd, "string %u is empty or the same as string %u", i, got);
			break;
		}
	}
	sqlite3_finalize(q);
	return rc;
}

/* Whether table has column col: recordings before demangled names have no
 * profile_funcs.system_name, before source lines no file, line, inlined_into. */
static bool has_column(struct reader *rd, const char *table, const char *col)
{
	char sql[128];
	sqlite3_stmt *q = NULL;
	bool has;

	snprintf(sql, sizeof(sql), "SELECT %s FROM %s LIMIT 0", col, table);
	has = sqlite3_prepare_v2(rd->r->db, sql, -1, &q, NULL) == SQLITE_OK;
	sqlite3_finalize(q);
	return has;
}

/* Optional columns from first on: a string index, then a line (0..UINT32_MAX). */
static bool col_source(struct reader *rd, sqlite3_stmt *q, int first, uint32_t *file, uint32_t *line)
{
	int64_t v;

	if (!col_index(q, first, rd->p->nstrings, file) || !col_int(q, first + 1, 0, UINT32_MAX, &v))
		return false;
	*line = (uint32_t)v;
	return true;
}

static int read_funcs(struct reader *rd)
{
	sqlite3_stmt *q;
	uint32_t i, name, module, sys = 0, file = 0, line = 0, got;
	bool row, has_sys = has_column(rd, "profile_funcs", "system_name"),
	     has_src = has_sys && has_column(rd, "profile_funcs", "file");
	int rc;

	if ((rc = rows_prepare(rd, has_src ? "name, module, system_name, file, line"
				   : has_sys ? "name, module, system_name" : "name, module",
			       "profile_funcs", &q)))
		return rc;
	for (i = 0; (rc = rows_next(rd, q, "profile_funcs", i, rd->n.funcs, &row)) == VT_OK && row; i++) {
		if (!col_index(q, 1, rd->p->nstrings, &name) || !col_index(q, 2, rd->p->nstrings, &module) ||
		    (has_sys && !col_index(q, 3, rd->p->nstrings, &sys)) ||
		    (has_src && !col_source(rd, q, 4, &file, &line))) {
			rc = damaged(rd, "function %u names a string beyond its %u, or a line out of range",
				     i, rd->p->nstrings);
			break;
		}
		got = vt_profile_intern_func_sym(rd->p, name, sys, module);
		if (got == UINT32_MAX) {
			rc = nomem(rd);
			break;
		}
		if (got != i) {
			rc = damaged(rd, "function %u is the same as function %u", i, got);
			break;
		}
		vt_profile_func_set_source(rd->p, i, file, line);
	}
	sqlite3_finalize(q);
	return rc;
}

static int read_locs(struct reader *rd)
{
	sqlite3_stmt *q;
	uint32_t i, func, got;
	int64_t kernel, into = 0;
	struct vt_prof_loc key = { 0 };
	bool row, has_src = has_column(rd, "profile_locs", "inlined_into");
	int rc;

	if ((rc = rows_prepare(rd, has_src ? "pc, module_off, func, kernel, file, line, inlined_into"
				   : "pc, module_off, func, kernel", "profile_locs", &q)))
		return rc;
	for (i = 0; (rc = rows_next(rd, q, "profile_locs", i, rd->n.locs, &row)) == VT_OK && row; i++) {
		if (sqlite3_column_type(q, 1) != SQLITE_INTEGER || sqlite3_column_type(q, 2) != SQLITE_INTEGER) {
			rc = damaged(rd, "location %u's address is not an integer", i);
			break;
		}
		if (!col_index(q, 3, rd->p->nfuncs, &func) || !col_int(q, 4, 0, 1, &kernel)) {
			rc = damaged(rd, "location %u names a function beyond its %u, or its kernel flag is not 0 or 1",
				     i, rd->p->nfuncs);
			break;
		}
		/* a location is inlined into one before it (the profiler names the
		 * outermost function first): no chain can loop */
		if (has_src && (!col_source(rd, q, 5, &key.file, &key.line) || !col_int(q, 7, 0, i, &into))) {
			rc = damaged(rd, "location %u names a file beyond its %u strings, a line out of range"
				     " or a caller that is not an earlier location", i, rd->p->nstrings);
			break;
		}
		key.pc = (uint64_t)sqlite3_column_int64(q, 1);
		key.module_off = (uint64_t)sqlite3_column_int64(q, 2);
		key.func = func;
		key.kernel = kernel != 0;
		key.inlined_into = (uint32_t)into;
		got = vt_profile_intern_loc_full(rd->p, &key);
		if (got == UINT32_MAX) {
			rc = nomem(rd);
			break;
		}
		if (got != i) {
			rc = damaged(rd, "location %u repeats location %u", i, got);
			break;
		}
	}
	sqlite3_finalize(q);
	return rc;
}

/*
 * Threads come before stacks (a stack counts into its thread).  Interning a
 * thread interns its name and its pool (the name with digits folded): both
 * are in the strings already when the profile is one vitals wrote; the
 * stored pool stands either way.
 */
static int read_threads(struct reader *rd)
{
	sqlite3_stmt *q;
	uint32_t i, name, pool, got;
	int64_t tid, samples;
	double cpu;
	bool row;
	int rc;

	if ((rc = rows_prepare(rd, "tid, name, pool, cpu_s, samples", "profile_threads", &q)))
		return rc;
	for (i = 0; (rc = rows_next(rd, q, "profile_threads", i, rd->n.threads, &row)) == VT_OK && row; i++) {
		uint32_t nstrings = rd->p->nstrings;

		if (!col_int(q, 1, 1, INT32_MAX, &tid) || !col_index(q, 2, nstrings, &name) ||
		    !col_index(q, 3, nstrings, &pool) || !col_real(q, 4, 0, MAX_S, true, -1, &cpu) ||
		    !col_int(q, 5, 0, MAX_COUNT, &samples)) {
			rc = damaged(rd, "thread %u has a bad tid, string, CPU time or count", i);
			break;
		}
		got = vt_profile_intern_thread(rd->p, (pid_t)tid, vt_profile_str(rd->p, name));
		if (got == UINT32_MAX) {
			rc = nomem(rd);
			break;
		}
		if (got != i) {
			rc = damaged(rd, "thread %u has the tid of thread %u", i, got);
			break;
		}
		rd->p->threads[i].name = name;
		rd->p->threads[i].pool = pool;
		rd->p->threads[i].cpu_s = cpu;
		rd->p->threads[i].samples = (uint64_t)samples;   /* restored after the stacks count */
	}
	sqlite3_finalize(q);
	return rc;
}

static int read_stacks(struct reader *rd)
{
	uint32_t locs[VT_PROFILE_MAX_DEPTH];
	sqlite3_stmt *q;
	uint32_t i, k, thread, wait, depth, nlocs = rd->p->nlocs;
	int64_t state, count, truncated;
	bool row;
	int rc;

	if ((rc = rows_prepare(rd, "thread, state, wait, count, truncated, locs", "profile_stacks", &q)))
		return rc;
	for (i = 0; (rc = rows_next(rd, q, "profile_stacks", i, rd->n.stacks, &row)) == VT_OK && row; i++) {
		const unsigned char *blob;
		size_t bytes;

		if (!col_index(q, 1, rd->p->nthreads, &thread) || !col_int(q, 2, 0, VT_PROF_STATE__COUNT - 1, &state) ||
		    !col_index(q, 3, rd->p->nstrings, &wait) || !col_int(q, 4, 0, MAX_COUNT, &count) ||
		    !col_int(q, 5, 0, 1, &truncated)) {
			rc = damaged(rd, "stack %u has a bad thread, state, wait, count or truncated flag", i);
			break;
		}
		if (sqlite3_column_type(q, 6) != SQLITE_BLOB) {
			rc = damaged(rd, "stack %u's frames are not a BLOB", i);
			break;
		}
		blob = sqlite3_column_blob(q, 6);
		bytes = (size_t)sqlite3_column_bytes(q, 6);
		if (bytes % 4 || bytes / 4 > VT_PROFILE_MAX_DEPTH || (bytes && !blob)) {
			rc = damaged(rd, "stack %u's frames are %zu bytes: not 4 per frame, up to %d frames", i, bytes,
				     VT_PROFILE_MAX_DEPTH);
			break;
		}
		depth = (uint32_t)(bytes / 4);
		for (k = 0; k < depth; k++) {
			locs[k] = get_le32(blob + 4 * k);
			if (locs[k] >= nlocs)
				break;
		}
		if (k < depth) {
			rc = damaged(rd, "stack %u's frame %u is location %u, beyond its %u", i, k, locs[k], nlocs);
			break;
		}
		if ((rc = vt_profile_add(rd->p, locs, depth, thread, (enum vt_prof_state)state, wait, truncated != 0,
					 (uint64_t)count, rd->err)) != VT_OK)
			break;
		if (rd->p->nstacks != i + 1) {
			rc = damaged(rd, "stack %u is the same as an earlier one", i);
			break;
		}
	}
	sqlite3_finalize(q);
	return rc;
}

static int read_modules(struct reader *rd)
{
	sqlite3_stmt *q;
	uint32_t i, name, path, got, dbg[3] = { 0, 0, 0 };
	int64_t symbols, lines = VT_LINES_UNKNOWN;
	bool row, has_debug = has_column(rd, "profile_modules", "debug_ignored_why");
	int rc;

	/* recordings before debug information per module have no lines .. debug_ignored_why */
	if ((rc = rows_prepare(rd, has_debug ? "name, path, symbols, frames, lines, debug_file, debug_ignored,"
				   " debug_ignored_why" : "name, path, symbols, frames", "profile_modules", &q)))
		return rc;
	for (i = 0; (rc = rows_next(rd, q, "profile_modules", i, rd->n.modules, &row)) == VT_OK && row; i++) {
		const unsigned char *blob;
		size_t bytes, k, b;
		struct vt_prof_module *m;

		if (!col_index(q, 1, rd->p->nstrings, &name) || !col_index(q, 2, rd->p->nstrings, &path) ||
		    !col_int(q, 3, 0, SYMS_LAST, &symbols) || sqlite3_column_type(q, 4) != SQLITE_BLOB) {
			rc = damaged(rd, "module %u has a bad name, path, symbol source or frames", i);
			break;
		}
		if (has_debug && (!col_int(q, 5, 0, LINES_LAST, &lines) || !col_index(q, 6, rd->p->nstrings, &dbg[0]) ||
				  !col_index(q, 7, rd->p->nstrings, &dbg[1]) ||
				  !col_index(q, 8, rd->p->nstrings, &dbg[2]))) {
			rc = damaged(rd, "module %u has a bad line source or debug file", i);
			break;
		}
		blob = sqlite3_column_blob(q, 4);
		bytes = (size_t)sqlite3_column_bytes(q, 4);
		if (bytes % 8 || bytes > FRAMES_BLOB_MAX || (bytes && !blob)) {
			rc = damaged(rd, "module %u's frame counts are %zu bytes: not 8 per method", i, bytes);
			break;
		}
		got = vt_profile_intern_module(rd->p, vt_profile_str(rd->p, name), vt_profile_str(rd->p, path));
		if (got == UINT32_MAX) {
			rc = nomem(rd);
			break;
		}
		if (got != i) {
			rc = damaged(rd, "module %u has the name of module %u", i, got);
			break;
		}
		m = &rd->p->modules[i];
		m->path = path;
		m->symbols = (uint8_t)symbols;
		m->lines = (uint8_t)lines;
		m->debug_file = dbg[0];
		m->debug_ignored = dbg[1];
		m->debug_ignored_why = dbg[1] ? dbg[2] : 0;
		/* methods a newer vitals knows and this one does not are left out */
		for (k = 0; k < VT_UNWIND__COUNT && 8 * k < bytes; k++)
			for (m->frames[k] = 0, b = 0; b < 8; b++)
				m->frames[k] |= (uint64_t)blob[8 * k + b] << (8 * b);
	}
	sqlite3_finalize(q);
	return rc;
}

static int list_profiles(struct vt_store_profiles *r, struct vt_err *err)
{
	struct reader rd = { .r = r, .err = err };
	struct vt_store_profile *v;
	sqlite3_stmt *q;
	char sql[768];
	size_t cap = 0;
	struct counts n;
	int rc;

	snprintf(sql, sizeof(sql), "SELECT %s FROM profiles ORDER BY id", head_columns);
	rc = sqlite3_prepare_v2(r->db, sql, -1, &q, NULL);
	if (rc != SQLITE_OK) {
		if ((sqlite3_extended_errcode(r->db) & 0xff) == SQLITE_ERROR)
			return vt_err_set(err, VT_E_RECORDING, 0, "'%s' has a profiles table vitals did not write: %s",
					  r->path, sqlite3_errmsg(r->db));
		return vt_store_db_err(r->db, rc, err, r->path, "reading");
	}
	for (;;) {
		struct vt_store_profile info;
		int step = sqlite3_step(q);

		if (step == SQLITE_DONE)
			break;
		if (step != SQLITE_ROW) {
			rc = vt_store_db_err(r->db, step, err, r->path, "reading");
			break;
		}
		rd.id = sqlite3_column_int64(q, 0);
		if ((rc = read_head(&rd, q, &info, NULL, &n)) != VT_OK)
			break;
		if (r->n == cap) {
			cap = cap ? cap * 2 : 16;
			v = realloc(r->v, cap * sizeof(*v));
			if (!v) {
				rc = nomem(&rd);
				break;
			}
			r->v = v;
		}
		r->v[r->n++] = info;
	}
	sqlite3_finalize(q);
	return rc;
}

int vt_store_profiles_open(const char *path, struct vt_store_profiles **out, struct vt_err *err)
{
	struct vt_store_profiles *r;
	bool wal_unread;
	int rc, schema;

	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
	snprintf(r->path, sizeof(r->path), "%s", path);
	if ((rc = vt_store_open_read(path, &r->db, &schema, &wal_unread, err))) {
		free(r);
		return rc;
	}
	if (vt_store_has_table(r->db, "profiles") && (rc = list_profiles(r, err)) != VT_OK) {
		vt_store_profiles_close(&r);
		return rc;
	}
	*out = r;
	return VT_OK;
}

void vt_store_profiles_close(struct vt_store_profiles **rp)
{
	struct vt_store_profiles *r = rp ? *rp : NULL;

	if (!r)
		return;
	vt_store_close_read(r->db);
	free(r->v);
	free(r);
	*rp = NULL;
}

size_t vt_store_profiles_count(const struct vt_store_profiles *r)
{
	return r->n;
}

const struct vt_store_profile *vt_store_profiles_at(const struct vt_store_profiles *r, size_t i)
{
	return i < r->n ? &r->v[i] : NULL;
}

int vt_store_profiles_read(struct vt_store_profiles *r, size_t i, struct vt_profile **out, struct vt_err *err)
{
	struct reader rd = { .r = r, .err = err };
	struct vt_store_profile info;
	struct vt_prof_meta meta;
	sqlite3_stmt *q;
	char sql[768];
	uint32_t t;
	int rc;

	*out = NULL;
	if (i >= r->n)
		return vt_err_set(err, VT_E_USAGE, 0, "'%s' has %zu profiles, not %zu", r->path, r->n, i + 1);
	rd.id = r->v[i].id;
	snprintf(sql, sizeof(sql), "SELECT %s FROM profiles WHERE id = ?", head_columns);
	if ((rc = sqlite3_prepare_v2(r->db, sql, -1, &q, NULL)) != SQLITE_OK)
		return vt_store_db_err(r->db, rc, err, r->path, "reading");
	sqlite3_bind_int64(q, 1, rd.id);
	rc = sqlite3_step(q);
	if (rc == SQLITE_ROW)
		rc = read_head(&rd, q, &info, &meta, &rd.n);
	else
		rc = rc == SQLITE_DONE ? damaged(&rd, "its row is gone") : vt_store_db_err(r->db, rc, err, r->path, "reading");
	sqlite3_finalize(q);
	if (rc != VT_OK)
		return rc;
	if ((rc = vt_profile_new(&rd.p, err)))
		return rc;
	if ((rc = read_strings(&rd)) || (rc = read_funcs(&rd)) || (rc = read_locs(&rd)) ||
	    (rc = read_threads(&rd))) {
		vt_profile_free(&rd.p);
		return rc;
	}
	/* the stacks count into their threads: keep the stored counts */
	{
		uint64_t *samples = calloc(rd.p->nthreads + 1, sizeof(*samples));

		if (!samples) {
			vt_profile_free(&rd.p);
			return nomem(&rd);
		}
		for (t = 0; t < rd.p->nthreads; t++)
			samples[t] = rd.p->threads[t].samples;
		rc = read_stacks(&rd);
		for (t = 0; t < rd.p->nthreads; t++)
			rd.p->threads[t].samples = samples[t];
		free(samples);
	}
	if (rc == VT_OK)
		rc = read_modules(&rd);
	if (rc != VT_OK) {
		vt_profile_free(&rd.p);
		return rc;
	}
	rd.p->meta = meta;
	*out = rd.p;
	return VT_OK;
}

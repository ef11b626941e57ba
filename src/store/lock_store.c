/*
 * lock_store.c — a soak's looks at its process's locks, written to and read
 * from its recording (store/lock_store.h).
 */
#include "store/lock_store.h"

#include "store/store_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char vt_store_lock_schema_sql[] =
	"CREATE TABLE lock_looks(id INTEGER PRIMARY KEY, t REAL NOT NULL, pid INTEGER, samples INTEGER,"
	" thread_samples INTEGER, futex_waits INTEGER, untracked INTEGER, unwinds INTEGER,"
	" unwinds_skipped INTEGER, syscall_unread INTEGER, syscall_why TEXT, stacks_why TEXT,"
	" arenas_why TEXT, narenas INTEGER);"
	"CREATE INDEX lock_looks_pid ON lock_looks(pid, id);"
	"CREATE TABLE lock_rows(look_id INTEGER, idx INTEGER, addr INTEGER, kind INTEGER, kind_votes BLOB,"
	" layout_votes INTEGER, place INTEGER, arena INTEGER, narenas INTEGER, symbol TEXT,"
	" symbol_off INTEGER, module TEXT, stack_tid INTEGER, mapping TEXT, python_gil INTEGER,"
	" users_more INTEGER, users_why TEXT, samples INTEGER, waits INTEGER, peak INTEGER,"
	" sites_other INTEGER, sites_unknown INTEGER, owner_reads INTEGER, owner_free INTEGER,"
	" owner_foreign INTEGER, foreign_tid INTEGER, readers INTEGER, readers_sum INTEGER,"
	" holder_why TEXT, layout_why TEXT, chunk INTEGER, chunk_size INTEGER, chunk_why TEXT, rust_std INTEGER,"
	" PRIMARY KEY(look_id, idx)) WITHOUT ROWID;"
	"CREATE TABLE lock_threads(look_id INTEGER, idx INTEGER, role INTEGER, tid INTEGER, comm TEXT,"
	" n INTEGER, running INTEGER);"
	"CREATE INDEX lock_threads_look ON lock_threads(look_id);"
	"CREATE TABLE lock_sites(look_id INTEGER, idx INTEGER, site TEXT, n INTEGER);"
	"CREATE INDEX lock_sites_look ON lock_sites(look_id);";

enum { ROLE_WAITER, ROLE_HOLDER, ROLE_USER, ROLES };

/* ---- writing ---- */

struct writer {
	sqlite3 *db;
	const char *path;
	sqlite3_int64 look;
	struct vt_err *err;
};

static int w_prepare(struct writer *w, const char *sql, sqlite3_stmt **q)
{
	return vt_store_prepare_on(w->db, w->path, sql, q, w->err);
}

static int w_step(struct writer *w, sqlite3_stmt *q)
{
	return vt_store_insert_step(w->db, w->path, q, "writing locks to", w->err);
}

static int write_look(struct writer *w, double t, const struct vt_locks *l)
{
	sqlite3_stmt *q;
	int rc;

	if ((rc = w_prepare(w, "INSERT INTO lock_looks(t, pid, samples, thread_samples, futex_waits, untracked,"
			       " unwinds, unwinds_skipped, syscall_unread, syscall_why, stacks_why, arenas_why,"
			       " narenas) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", &q)))
		return rc;
	sqlite3_bind_double(q, 1, t);
	sqlite3_bind_int64(q, 2, l->pid);
	sqlite3_bind_int64(q, 3, l->samples);
	vt_store_bind_count(q, 4, l->thread_samples);
	vt_store_bind_count(q, 5, l->futex_waits);
	vt_store_bind_count(q, 6, l->untracked);
	vt_store_bind_count(q, 7, l->unwinds);
	vt_store_bind_count(q, 8, l->unwinds_skipped);
	vt_store_bind_count(q, 9, l->syscall_unread);
	sqlite3_bind_text(q, 10, l->syscall_why, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 11, l->stacks_why, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 12, l->arenas_why, -1, SQLITE_STATIC);
	vt_store_bind_count(q, 13, l->narenas);
	rc = w_step(w, q);
	sqlite3_finalize(q);
	w->look = sqlite3_last_insert_rowid(w->db);
	return rc;
}

static int write_row(struct writer *w, sqlite3_stmt *q, size_t idx, const struct vt_lock *k)
{
	unsigned char votes[VT_LOCK_KINDS * 4];
	size_t i;

	for (i = 0; i < VT_LOCK_KINDS; i++) {
		votes[i * 4] = (unsigned char)k->kind_votes[i];
		votes[i * 4 + 1] = (unsigned char)(k->kind_votes[i] >> 8);
		votes[i * 4 + 2] = (unsigned char)(k->kind_votes[i] >> 16);
		votes[i * 4 + 3] = (unsigned char)(k->kind_votes[i] >> 24);
	}
	sqlite3_bind_int64(q, 1, w->look);
	sqlite3_bind_int64(q, 2, (sqlite3_int64)idx);
	sqlite3_bind_int64(q, 3, (sqlite3_int64)k->addr);
	sqlite3_bind_int(q, 4, (int)k->kind);
	sqlite3_bind_blob(q, 5, votes, sizeof(votes), SQLITE_TRANSIENT);
	sqlite3_bind_int64(q, 6, k->layout_votes);
	sqlite3_bind_int(q, 7, (int)k->place);
	sqlite3_bind_int64(q, 8, k->arena);
	sqlite3_bind_int64(q, 9, k->narenas);
	sqlite3_bind_text(q, 10, k->symbol, -1, SQLITE_STATIC);
	vt_store_bind_count(q, 11, k->symbol_off);
	sqlite3_bind_text(q, 12, k->module, -1, SQLITE_STATIC);
	sqlite3_bind_int64(q, 13, k->stack_tid);
	sqlite3_bind_text(q, 14, k->mapping, -1, SQLITE_STATIC);
	sqlite3_bind_int(q, 15, k->python_gil);
	sqlite3_bind_int64(q, 16, k->users_more);
	sqlite3_bind_text(q, 17, k->users_why, -1, SQLITE_STATIC);
	sqlite3_bind_int64(q, 18, k->samples);
	vt_store_bind_count(q, 19, k->waits);
	sqlite3_bind_int64(q, 20, k->peak);
	sqlite3_bind_int64(q, 21, k->sites_other);
	sqlite3_bind_int64(q, 22, k->sites_unknown);
	sqlite3_bind_int64(q, 23, k->owner_reads);
	sqlite3_bind_int64(q, 24, k->owner_free);
	sqlite3_bind_int64(q, 25, k->owner_foreign);
	sqlite3_bind_int64(q, 26, k->foreign_tid);
	sqlite3_bind_int64(q, 27, k->readers);
	vt_store_bind_count(q, 28, k->readers_sum);
	sqlite3_bind_text(q, 29, k->holder_why, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 30, k->layout_why, -1, SQLITE_STATIC);
	sqlite3_bind_int64(q, 31, (sqlite3_int64)k->chunk);
	vt_store_bind_count(q, 32, k->chunk_size);
	sqlite3_bind_text(q, 33, k->chunk_why, -1, SQLITE_STATIC);
	sqlite3_bind_int(q, 34, k->rust_std);
	return w_step(w, q);
}

static int write_threads(struct writer *w, sqlite3_stmt *q, size_t idx, int role, const struct vt_lock_thread *v,
			 size_t n)
{
	size_t i;
	int rc = VT_OK;

	for (i = 0; i < n && rc == VT_OK; i++) {
		sqlite3_bind_int64(q, 1, w->look);
		sqlite3_bind_int64(q, 2, (sqlite3_int64)idx);
		sqlite3_bind_int(q, 3, role);
		sqlite3_bind_int64(q, 4, v[i].tid);
		sqlite3_bind_text(q, 5, v[i].comm, -1, SQLITE_STATIC);
		sqlite3_bind_int64(q, 6, v[i].n);
		sqlite3_bind_int64(q, 7, v[i].running);
		rc = w_step(w, q);
	}
	return rc;
}

static int write_rows(struct writer *w, const struct vt_locks *l)
{
	sqlite3_stmt *rows = NULL, *threads = NULL, *sites = NULL;
	size_t i, k;
	int rc;

	if ((rc = w_prepare(w, "INSERT INTO lock_rows VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
			       " ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", &rows)) ||
	    (rc = w_prepare(w, "INSERT INTO lock_threads VALUES(?, ?, ?, ?, ?, ?, ?)", &threads)) ||
	    (rc = w_prepare(w, "INSERT INTO lock_sites VALUES(?, ?, ?, ?)", &sites)))
		goto out;
	for (i = 0; i < l->n && rc == VT_OK; i++) {
		const struct vt_lock *r = &l->v[i];

		if ((rc = write_row(w, rows, i, r)) ||
		    (rc = write_threads(w, threads, i, ROLE_WAITER, r->waiters, r->nwaiters)) ||
		    (rc = write_threads(w, threads, i, ROLE_HOLDER, r->holders, r->nholders)) ||
		    (rc = write_threads(w, threads, i, ROLE_USER, r->users, r->nusers)))
			break;
		for (k = 0; k < r->nsites && rc == VT_OK; k++) {
			sqlite3_bind_int64(sites, 1, w->look);
			sqlite3_bind_int64(sites, 2, (sqlite3_int64)i);
			sqlite3_bind_text(sites, 3, r->sites[k].where, -1, SQLITE_STATIC);
			sqlite3_bind_int64(sites, 4, r->sites[k].n);
			rc = w_step(w, sites);
		}
	}
out:
	sqlite3_finalize(rows);
	sqlite3_finalize(threads);
	sqlite3_finalize(sites);
	return rc;
}

int vt_store_locks_append(struct vt_store *st, double t, const struct vt_locks *look, struct vt_err *err)
{
	struct writer w = { vt_store_db(st), vt_store_path(st), 0, err };
	int rc;

	if ((rc = vt_store_exec(st, "BEGIN", err, "writing to")))
		return rc;
	if ((rc = write_look(&w, t, look)) == VT_OK)
		rc = write_rows(&w, look);
	if (rc == VT_OK)
		rc = vt_store_exec(st, "COMMIT", err, "writing to");
	if (rc != VT_OK)
		sqlite3_exec(w.db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

/* ---- reading ---- */

struct reader {
	sqlite3 *db;
	const char *path;
	sqlite3_int64 look;
	struct vt_err *err;
	sqlite3_stmt *rows, *threads, *sites;
};

static int damaged(struct reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int damaged(struct reader *r, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vt_store_damaged(r->err, r->path, "lock look", (long long)r->look, fmt, ap);
	va_end(ap);
	return rc;
}

static int read_row(struct reader *r, const struct vt_locks *look, struct vt_lock *k)
{
	sqlite3_stmt *q = r->rows;
	const unsigned char *votes;
	uint64_t kind, place, v;
	size_t i;

	memset(k, 0, sizeof(*k));
	k->addr = (uint64_t)sqlite3_column_int64(q, 1);
	if (!vt_store_col_count(q, 2, VT_LOCK_KINDS - 1, &kind))
		return damaged(r, "a lock's kind is not one this vitals knows");
	k->kind = (enum vt_lock_kind)kind;
	votes = sqlite3_column_blob(q, 3);
	if (sqlite3_column_bytes(q, 3) != VT_LOCK_KINDS * 4 || !votes)
		return damaged(r, "a lock's kind votes are not %d counts", VT_LOCK_KINDS);
	for (i = 0; i < VT_LOCK_KINDS; i++)
		k->kind_votes[i] = (unsigned)votes[i * 4] | (unsigned)votes[i * 4 + 1] << 8 |
				   (unsigned)votes[i * 4 + 2] << 16 | (unsigned)votes[i * 4 + 3] << 24;
	VT_STORE_COUNT(q, 4, UINT32_MAX, k->layout_votes, "layout_votes");
	if (!vt_store_col_count(q, 5, VT_LOCK_AT_HEAP, &place))
		return damaged(r, "a lock's place is not one this vitals knows");
	k->place = (enum vt_lock_place)place;
	VT_STORE_COUNT(q, 6, UINT32_MAX, k->arena, "arena");
	VT_STORE_COUNT(q, 7, UINT32_MAX, k->narenas, "narenas");
	vt_store_col_text(q, 8, k->symbol, sizeof(k->symbol));
	k->symbol_off = (uint64_t)sqlite3_column_int64(q, 9);
	vt_store_col_text(q, 10, k->module, sizeof(k->module));
	VT_STORE_COUNT(q, 11, INT32_MAX, v, "stack_tid");
	k->stack_tid = (pid_t)v;
	vt_store_col_text(q, 12, k->mapping, sizeof(k->mapping));
	k->python_gil = sqlite3_column_int(q, 13) != 0;
	VT_STORE_COUNT(q, 14, UINT32_MAX, k->users_more, "users_more");
	vt_store_col_text(q, 15, k->users_why, sizeof(k->users_why));
	VT_STORE_COUNT(q, 16, look->samples, k->samples, "samples (more than its look's)");
	VT_STORE_COUNT(q, 17, look->futex_waits, k->waits, "waits (more than its look's futex waits)");
	VT_STORE_COUNT(q, 18, look->futex_waits, k->peak, "peak");
	VT_STORE_COUNT(q, 19, k->waits, k->sites_other, "sites_other");
	VT_STORE_COUNT(q, 20, k->waits, k->sites_unknown, "sites_unknown");
	VT_STORE_COUNT(q, 21, k->samples, k->owner_reads, "owner_reads");
	VT_STORE_COUNT(q, 22, k->owner_reads, k->owner_free, "owner_free");
	VT_STORE_COUNT(q, 23, k->owner_reads, k->owner_foreign, "owner_foreign");
	VT_STORE_COUNT(q, 24, INT32_MAX, v, "foreign_tid");
	k->foreign_tid = (pid_t)v;
	VT_STORE_COUNT(q, 25, k->samples, k->readers, "readers");
	VT_STORE_COUNT(q, 26, UINT32_MAX * (uint64_t)k->samples, k->readers_sum, "readers_sum");
	vt_store_col_text(q, 27, k->holder_why, sizeof(k->holder_why));
	vt_store_col_text(q, 28, k->layout_why, sizeof(k->layout_why));
	k->chunk = (uint64_t)sqlite3_column_int64(q, 29);
	VT_STORE_COUNT(q, 30, INT64_MAX, k->chunk_size, "chunk_size");
	vt_store_col_text(q, 31, k->chunk_why, sizeof(k->chunk_why));
	k->rust_std = sqlite3_column_int(q, 32) != 0;
	if (k->chunk && (k->addr < k->chunk || k->addr - k->chunk >= k->chunk_size))
		return damaged(r, "a lock's chunk does not hold it");
	return VT_OK;
}

static int read_threads(struct reader *r, struct vt_locks *look)
{
	sqlite3_stmt *q = r->threads;
	int rc = VT_OK, step = SQLITE_DONE;

	sqlite3_bind_int64(q, 1, r->look);
	while (rc == VT_OK && (step = sqlite3_step(q)) == SQLITE_ROW) {
		uint64_t idx = 0, role = 0, tid = 0, n = 0, running = 0;
		struct vt_lock_thread *v;
		struct vt_lock *k;
		size_t *count;

		if (!vt_store_col_count(q, 0, look->n ? look->n - 1 : 0, &idx) || !look->n)
			rc = damaged(r, "a thread of a lock it does not hold");
		else if (!vt_store_col_count(q, 1, ROLES - 1, &role))
			rc = damaged(r, "a lock thread's role is not one this vitals knows");
		else if (!vt_store_col_count(q, 2, INT32_MAX, &tid) || !vt_store_col_count(q, 4, look->samples, &n) ||
			 !vt_store_col_count(q, 5, n, &running))
			rc = damaged(r, "a lock thread's tid or counts are not counts");
		if (rc != VT_OK)
			break;
		k = &look->v[idx];
		v = role == ROLE_WAITER ? k->waiters : role == ROLE_HOLDER ? k->holders : k->users;
		count = role == ROLE_WAITER ? &k->nwaiters : role == ROLE_HOLDER ? &k->nholders : &k->nusers;
		if (*count == VT_LOCK_THREADS_MAX) {
			rc = damaged(r, "a lock has more than %d threads in one table", VT_LOCK_THREADS_MAX);
			break;
		}
		v[*count].tid = (pid_t)tid;
		vt_store_col_text(q, 3, v[*count].comm, sizeof(v[0].comm));
		v[*count].n = (unsigned)n;
		v[(*count)++].running = (unsigned)running;
	}
	if (rc == VT_OK && step != SQLITE_DONE)
		rc = vt_store_db_err(r->db, step, r->err, r->path, "reading");
	sqlite3_reset(q);
	return rc;
}

static int read_sites(struct reader *r, struct vt_locks *look)
{
	sqlite3_stmt *q = r->sites;
	int rc = VT_OK, step = SQLITE_DONE;

	sqlite3_bind_int64(q, 1, r->look);
	while (rc == VT_OK && (step = sqlite3_step(q)) == SQLITE_ROW) {
		uint64_t idx, n;
		struct vt_lock *k;

		if (!look->n || !vt_store_col_count(q, 0, look->n - 1, &idx) || !vt_store_col_count(q, 2, UINT32_MAX, &n)) {
			rc = damaged(r, "a call site of a lock it does not hold, or not a count");
			break;
		}
		k = &look->v[idx];
		if (k->nsites == VT_LOCK_SITES_MAX) {
			rc = damaged(r, "a lock has more than %d call sites", VT_LOCK_SITES_MAX);
			break;
		}
		vt_store_col_text(q, 1, k->sites[k->nsites].where, sizeof(k->sites[0].where));
		k->sites[k->nsites++].n = (unsigned)n;
	}
	if (rc == VT_OK && step != SQLITE_DONE)
		rc = vt_store_db_err(r->db, step, r->err, r->path, "reading");
	sqlite3_reset(q);
	return rc;
}

/* The rows of look r->look into look (its head read), checked. */
static int read_rows(struct reader *r, struct vt_locks *look)
{
	sqlite3_stmt *q = r->rows;
	int rc = VT_OK, step = SQLITE_DONE;

	sqlite3_bind_int64(q, 1, r->look);
	while (rc == VT_OK && (step = sqlite3_step(q)) == SQLITE_ROW) {
		struct vt_lock *v;

		if (sqlite3_column_int64(q, 0) != (sqlite3_int64)look->n || look->n >= VT_LOCKS_MAX) {
			rc = damaged(r, "its lock rows are not numbered 0 to at most %d", VT_LOCKS_MAX - 1);
			break;
		}
		if (look->n == look->cap) {
			size_t cap = look->cap ? look->cap * 2 : 8;

			if (!(v = realloc(look->v, cap * sizeof(*v)))) {
				rc = vt_err_set(r->err, VT_E_NOMEM, ENOMEM, "out of memory");
				break;
			}
			look->v = v;
			look->cap = cap;
		}
		if ((rc = read_row(r, look, &look->v[look->n])) == VT_OK)
			look->n++;
	}
	if (rc == VT_OK && step != SQLITE_DONE)
		rc = vt_store_db_err(r->db, step, r->err, r->path, "reading");
	sqlite3_reset(q);
	if (rc == VT_OK && (rc = read_threads(r, look)) == VT_OK)
		rc = read_sites(r, look);
	return rc;
}

/* One look's head from the row of q, its rows read and checked. */
static int read_look(struct reader *r, sqlite3_stmt *q, struct vt_locks *look, double *t)
{
	memset(look, 0, sizeof(*look));
	r->look = sqlite3_column_int64(q, 0);
	*t = sqlite3_column_double(q, 1);
	look->pid = (pid_t)sqlite3_column_int64(q, 2);
	VT_STORE_COUNT(q, 3, UINT32_MAX, look->samples, "samples");
	VT_STORE_COUNT(q, 4, INT64_MAX, look->thread_samples, "thread_samples");
	VT_STORE_COUNT(q, 5, look->thread_samples, look->futex_waits, "futex_waits (more than its threads)");
	VT_STORE_COUNT(q, 6, look->futex_waits, look->untracked, "untracked");
	VT_STORE_COUNT(q, 7, INT64_MAX, look->unwinds, "unwinds");
	VT_STORE_COUNT(q, 8, INT64_MAX, look->unwinds_skipped, "unwinds_skipped");
	VT_STORE_COUNT(q, 9, look->thread_samples, look->syscall_unread, "syscall_unread");
	vt_store_col_text(q, 10, look->syscall_why, sizeof(look->syscall_why));
	vt_store_col_text(q, 11, look->stacks_why, sizeof(look->stacks_why));
	vt_store_col_text(q, 12, look->arenas_why, sizeof(look->arenas_why));
	VT_STORE_COUNT(q, 13, UINT32_MAX, look->narenas, "narenas");
	return read_rows(r, look);
}

int vt_store_locks_load(const char *path, pid_t pid, struct vt_lock_history *out, struct vt_err *err)
{
	struct reader r = { .path = path, .err = err };
	sqlite3_stmt *looks = NULL, *count = NULL;
	struct vt_locks look = { 0 };
	sqlite3_int64 nlooks = 0;
	bool wal_unread;
	int rc, schema, step = SQLITE_DONE;
	size_t i = 0;

	memset(out, 0, sizeof(*out));
	out->pid = pid;
	if ((rc = vt_store_open_read(path, &r.db, &schema, &wal_unread, err)))
		return rc;
	if (!vt_store_has_table(r.db, "lock_looks")) {
		snprintf(out->why, sizeof(out->why), "the recording has no lock looks (schema %d: recorded by a "
			 "vitals before they were recorded)", schema);
		goto out;
	}
	if (sqlite3_prepare_v2(r.db, "SELECT count(*) FROM lock_looks WHERE pid = ?", -1, &count, NULL) ||
	    sqlite3_prepare_v2(r.db, "SELECT id, t, pid, samples, thread_samples, futex_waits, untracked, unwinds,"
			       " unwinds_skipped, syscall_unread, syscall_why, stacks_why, arenas_why, narenas"
			       " FROM lock_looks WHERE pid = ? ORDER BY id", -1, &looks, NULL) ||
	    sqlite3_prepare_v2(r.db, "SELECT idx, addr, kind, kind_votes, layout_votes, place, arena, narenas,"
			       " symbol, symbol_off, module, stack_tid, mapping, python_gil, users_more, users_why,"
			       " samples, waits, peak, sites_other, sites_unknown, owner_reads, owner_free,"
			       " owner_foreign, foreign_tid, readers, readers_sum, holder_why, layout_why, chunk, chunk_size,"
			       " chunk_why, rust_std FROM lock_rows WHERE look_id = ? ORDER BY idx", -1, &r.rows, NULL) ||
	    sqlite3_prepare_v2(r.db, "SELECT idx, role, tid, comm, n, running FROM lock_threads WHERE look_id = ?"
			       " ORDER BY rowid", -1, &r.threads, NULL) ||
	    sqlite3_prepare_v2(r.db, "SELECT idx, site, n FROM lock_sites WHERE look_id = ? ORDER BY rowid", -1,
			       &r.sites, NULL)) {
		rc = vt_store_db_err(r.db, SQLITE_ERROR, err, path, "reading");
		goto out;
	}
	sqlite3_bind_int64(count, 1, pid);
	if (sqlite3_step(count) == SQLITE_ROW)
		nlooks = sqlite3_column_int64(count, 0);
	sqlite3_bind_int64(looks, 1, pid);
	while (rc == VT_OK && (step = sqlite3_step(looks)) == SQLITE_ROW) {
		double t;

		if ((rc = read_look(&r, looks, &look, &t)) != VT_OK)
			break;
		if (i == 0)
			out->t_first = t;
		if (i == (size_t)nlooks / 2)
			out->t_split = t;
		out->t_last = t;
		if ((rc = vt_locks_merge(&out->all, &look, err)) == VT_OK)
			rc = vt_locks_merge(i < (size_t)nlooks / 2 ? &out->early : &out->late, &look, err);
		vt_locks_release(&look);
		i++;
	}
	if (rc == VT_OK && step != SQLITE_DONE)
		rc = vt_store_db_err(r.db, step, err, path, "reading");
	out->looks = i;
	/* the looks' own clocks were of the soak's process: the span is the soak's seconds */
	out->all.first_ns = (uint64_t)(out->t_first * 1e9);
	out->all.last_ns = (uint64_t)(out->t_last * 1e9);
	if (rc == VT_OK && !i)
		snprintf(out->why, sizeof(out->why), "no lock looks of process %d: its threads' system calls "
			 "were never read at the threads cadence", (int)pid);
out:
	vt_locks_release(&look);
	sqlite3_finalize(count);
	sqlite3_finalize(looks);
	sqlite3_finalize(r.rows);
	sqlite3_finalize(r.threads);
	sqlite3_finalize(r.sites);
	vt_store_close_read(r.db);
	return rc;
}

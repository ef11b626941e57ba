/*
 * store_read.c — a recording read back (see store.h): opened read-only in
 * one transaction, checked, its samples streamed into points (raw or from
 * the rollups), its events and threads; and the rollups rebuilt.
 */
#include "store/store.h"
#include "store/store_internal.h"

#include "base/unknown.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * A statement reading a recording failed: a missing table or column
 * (SQLITE_ERROR) means the file is not a recording this vitals can read,
 * "'<path>' <what>: <SQLite's words>"; an I/O, lock or memory failure is
 * that failure, not a verdict on the file.
 */
static int read_failed(sqlite3 *db, int rc, const char *path, const char *what, struct vt_err *err)
{
	if ((sqlite3_extended_errcode(db) & 0xff) != SQLITE_ERROR)
		return vt_store_db_err(db, rc, err, path, "reading");
	return vt_err_set(err, VT_E_RECORDING, 0, "'%s' %s: %s", path, what, sqlite3_errmsg(db));
}

/*
 * Builds points from samples or rollups streamed in order (see series.h and
 * rollup.h): each one either joins the open point or closes it and begins
 * the next.
 */
struct loader {
	struct vt_series *s;
	struct vt_store *rollups_to;    /* not NULL: the points are rollups, written there (a rebuild) */
	double width;           /* seconds a point may cover; 0: one sample per point */
	double gap;             /* a step longer than this between samples is a gap */
	struct vt_point_acc open;       /* the point being built */
	uint32_t incarnation;
	int col[VT_M_COUNT];            /* metric m's column in the samples query, -1: not in this recording */
	int rcol[VT_M_COUNT];           /* its first column (lo; hi, mean, n follow) in the rollups query, or -1 */
};

/* The open point into the series (nothing when it is empty). */
static int emit(struct loader *ld)
{
	const struct vt_point_acc *a = &ld->open;
	struct vt_series *s = ld->s;
	size_t i = s->n;
	int m;

	if (a->count == 0)
		return 0;
	if (ld->rollups_to) {
		int rc = vt_store_write_rollup(ld->rollups_to, a, NULL);

		ld->open.count = 0;
		return rc == VT_OK ? 0 : -1;
	}
	if (s->n == s->cap && vt_series_reserve(s, s->cap ? s->cap * 2 : 1024))
		return -1;
	if (s->n > 0 && a->pid != s->pid[s->n - 1])
		ld->incarnation++;
	s->t[i] = a->t_sum / a->count;
	s->t0[i] = a->t0;
	s->t1[i] = a->t1;
	s->wall[i] = a->wall;
	s->count[i] = a->count;
	s->pid[i] = a->pid;
	s->incarnation[i] = ld->incarnation;
	for (m = 0; m < VT_M_COUNT; m++) {
		struct vt_stat *st;

		if (a->known[m] == 0)
			continue;
		if (!(st = vt_series_stat(s, (enum vt_metric)m)))
			return -1;
		st[i] = a->m[m];
	}
	s->n++;
	s->samples += a->count;
	ld->open.count = 0;
	return 0;
}

/* One row of the samples query (t, wall, pid, id, then the metrics). */
static int add_sample(struct loader *ld, sqlite3_stmt *q)
{
	double t = sqlite3_column_double(q, 0), v[VT_M_COUNT];
	pid_t pid = (pid_t)sqlite3_column_int64(q, 2);
	int m;

	for (m = 0; m < VT_M_COUNT; m++)
		v[m] = ld->col[m] < 0 || sqlite3_column_type(q, ld->col[m]) == SQLITE_NULL
		       ? NAN : sqlite3_column_double(q, ld->col[m]);
	if (vt_point_acc_ends(&ld->open, t, pid, ld->width, ld->gap) && emit(ld))
		return -1;
	vt_point_acc_add(&ld->open, sqlite3_column_int64(q, 3), t, sqlite3_column_double(q, 1), pid, v);
	return 0;
}

bool vt_store_has_table(sqlite3 *db, const char *table)
{
	sqlite3_stmt *q = NULL;
	bool found = false;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", -1, &q,
			       NULL) == SQLITE_OK) {
		sqlite3_bind_text(q, 1, table, -1, SQLITE_STATIC);
		found = sqlite3_step(q) == SQLITE_ROW;
	}
	sqlite3_finalize(q);
	return found;
}

/* Check it is a vitals recording this vitals can read. */
static int check_identity(sqlite3 *db, const char *path, int *schema, struct vt_err *err)
{
	sqlite3_stmt *q;
	int rc, app = 0, version = 0;

	rc = sqlite3_prepare_v2(db, "PRAGMA application_id", -1, &q, NULL);
	if (rc == SQLITE_OK && (rc = sqlite3_step(q)) == SQLITE_ROW)
		app = sqlite3_column_int(q, 0);
	sqlite3_finalize(q);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return vt_store_db_err(db, rc, err, path, "reading");
	if (app != VT_STORE_APP_ID) {
		vt_err_set(err, VT_E_RECORDING, 0, "'%s' is a SQLite database, but not a vitals recording", path);
		vt_err_hint(err, "vitals soak -o FILE writes recordings");
		return VT_E_RECORDING;
	}
	rc = sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &q, NULL);
	if (rc == SQLITE_OK && (rc = sqlite3_step(q)) == SQLITE_ROW)
		version = sqlite3_column_int(q, 0);
	sqlite3_finalize(q);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return vt_store_db_err(db, rc, err, path, "reading");
	if (version > VT_STORE_SCHEMA) {
		vt_err_set(err, VT_E_RECORDING, 0,
			   "'%s' was written by a newer vitals (recording schema %d; this vitals reads up to %d)",
			   path, version, VT_STORE_SCHEMA);
		vt_err_hint(err, "analyse it with the vitals that recorded it, or upgrade");
		return VT_E_RECORDING;
	}
	if (version < 1)
		return vt_err_set(err, VT_E_RECORDING, 0, "'%s' has no recording schema version", path);
	*schema = version;
	return VT_OK;
}

static int load_meta(sqlite3 *db, const char *path, struct vt_series *s, struct vt_err *err)
{
	sqlite3_stmt *q;
	int rc, bad = VT_OK;

	s->info.schema = VT_STORE_SCHEMA;
	rc = sqlite3_prepare_v2(db, "SELECT key, value FROM meta", -1, &q, NULL);
	if (rc != SQLITE_OK)
		return read_failed(db, rc, path, "is not a complete vitals recording", err);
	while (bad == VT_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
		/* the type first: reading a blob as text converts it */
		int type = sqlite3_column_type(q, 0);
		const char *key = (const char *)sqlite3_column_text(q, 0);

		if (type != SQLITE_TEXT || !key)
			bad = vt_err_set(err, VT_E_RECORDING, 0, "'%s' is damaged: a meta key is not text", path);
		else
			bad = vt_store_read_meta_value(&s->info, path, key, q, 1, err);
	}
	sqlite3_finalize(q);
	if (bad != VT_OK)
		return bad;
	return rc == SQLITE_DONE ? VT_OK : vt_store_db_err(db, rc, err, path, "reading");
}

/* Does table have column?  (A query naming a missing column does not compile.) */
static bool has_column(sqlite3 *db, const char *table, const char *column)
{
	char sql[256];
	sqlite3_stmt *q = NULL;
	bool ok;

	snprintf(sql, sizeof(sql), "SELECT %s FROM %s LIMIT 0", column, table);
	ok = sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK;
	sqlite3_finalize(q);
	return ok;
}

/* A rollup row, checked against the one before it; false when it cannot be one vitals wrote. */
static bool read_rollup(const struct loader *ld, sqlite3_stmt *q, const struct vt_point_acc *prev,
			struct vt_point_acc *r)
{
	int m, c;

	r->first_id = sqlite3_column_int64(q, 0);
	r->last_id = sqlite3_column_int64(q, 1);
	r->t0 = sqlite3_column_double(q, 2);
	r->t1 = sqlite3_column_double(q, 3);
	r->t_sum = sqlite3_column_double(q, 4);
	r->wall = sqlite3_column_double(q, 5);
	r->pid = (pid_t)sqlite3_column_int64(q, 6);
	r->count = (uint32_t)sqlite3_column_int64(q, 7);
	/* ids have no holes: a rollup of n samples spans n ids, after the previous one's */
	if (sqlite3_column_int64(q, 7) < 1 || sqlite3_column_int64(q, 7) > UINT32_MAX ||
	    r->last_id < r->first_id || (uint64_t)r->last_id - (uint64_t)r->first_id + 1 != r->count ||
	    (prev->count > 0 && (r->first_id <= prev->last_id || r->t0 < prev->t1)) ||
	    !(r->t0 <= r->t_sum && r->t_sum <= r->t1))
		return false;
	r->t_sum *= r->count;
	for (m = 0; m < VT_M_COUNT; m++) {
		sqlite3_int64 known;

		r->known[m] = 0;
		r->m[m] = (struct vt_stat){ NAN, NAN, NAN };
		if ((c = ld->rcol[m]) < 0 || (known = sqlite3_column_int64(q, c + 3)) == 0)
			continue;
		if (known < 0 || known > (sqlite3_int64)r->count || sqlite3_column_type(q, c) == SQLITE_NULL ||
		    sqlite3_column_type(q, c + 1) == SQLITE_NULL || sqlite3_column_type(q, c + 2) == SQLITE_NULL)
			return false;
		r->known[m] = (uint32_t)known;
		r->m[m] = (struct vt_stat){ sqlite3_column_double(q, c), sqlite3_column_double(q, c + 1),
					    sqlite3_column_double(q, c + 2) };
	}
	return true;
}

/*
 * The points from the rollups, in *last_id the last sample they hold.
 * VT_OK; VT_E_RECORDING when a row cannot be one vitals wrote (the caller
 * reads the samples instead); another code on a failed read.
 */
static int load_rollups(sqlite3 *db, const char *path, struct loader *ld, sqlite3_int64 *last_id,
			struct vt_err *err)
{
	struct vt_point_acc prev = { 0 }, r;
	sqlite3_stmt *q;
	char sql[ROLLUP_SQL_MAX], col[96];
	size_t len;
	int m, k, rc, next = 8;

	len = (size_t)snprintf(sql, sizeof(sql), "SELECT first_id, last_id, t0, t1, t, wall, pid, n");
	for (m = 0; m < VT_M_COUNT; m++) {
		ld->rcol[m] = -1;
		snprintf(col, sizeof(col), "%s_n", vt_metrics[m].key);
		if (!vt_store_recorded(m) || !has_column(db, "rollups", col))
			continue;
		for (k = 0; k < ROLLUP_PARTS; k++)
			len += (size_t)snprintf(sql + len, sizeof(sql) - len, ", %s_%s", vt_metrics[m].key,
						vt_store_rollup_parts[k]);
		ld->rcol[m] = next;
		next += ROLLUP_PARTS;
	}
	snprintf(sql + len, sizeof(sql) - len, " FROM rollups ORDER BY id");
	if ((rc = sqlite3_prepare_v2(db, sql, -1, &q, NULL)) != SQLITE_OK)
		return read_failed(db, rc, path, "has an unexpected rollups table", err);
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		if (!read_rollup(ld, q, &prev, &r)) {
			sqlite3_finalize(q);
			return vt_err_set(err, VT_E_RECORDING, 0, "'%s' has a damaged rollups table", path);
		}
		/* a point holds whole rollups, and is never wider than asked (the samples' rule) */
		if ((vt_point_acc_ends(&ld->open, r.t0, r.pid, ld->width, ld->gap) ||
		     (ld->open.count > 0 && r.t1 - ld->open.t0 >= ld->width)) && emit(ld)) {
			sqlite3_finalize(q);
			return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory reading '%s'", path);
		}
		vt_point_acc_merge(&ld->open, &r);
		prev = r;
		ld->s->info.rollups++;
	}
	sqlite3_finalize(q);
	*last_id = prev.last_id;
	return rc == SQLITE_DONE ? VT_OK : vt_store_db_err(db, rc, err, path, "reading");
}

/* Forget the points read so far (damaged rollups: the samples are read instead). */
static void drop_points(struct vt_series *s, struct loader *ld)
{
	struct vt_recording_info info = s->info;
	struct vt_series fresh;

	vt_series_free(s);
	vt_series_init(&fresh);
	*s = fresh;
	s->info = info;
	s->info.rollups = 0;
	ld->open.count = 0;
	ld->incarnation = 0;
}

/* The samples with ids above after_id into points. */
static int load_raw(sqlite3 *db, const char *path, struct loader *ld, sqlite3_int64 after_id, struct vt_err *err)
{
	sqlite3_stmt *q;
	char sql[2048];
	size_t len;
	int m, rc, col;

	/* every metric this vitals records that the file has: an older recording lacks the newer ones */
	len = (size_t)snprintf(sql, sizeof(sql), "SELECT t, wall, pid, id");
	for (m = 0, col = 4; m < VT_M_COUNT; m++) {
		ld->col[m] = -1;
		if (!vt_store_recorded(m) || !has_column(db, "samples", vt_metrics[m].key))
			continue;
		len += (size_t)snprintf(sql + len, sizeof(sql) - len, ", %s", vt_metrics[m].key);
		ld->col[m] = col++;
	}
	snprintf(sql + len, sizeof(sql) - len, " FROM samples WHERE id > ? ORDER BY id");
	rc = sqlite3_prepare_v2(db, sql, -1, &q, NULL);
	if (rc != SQLITE_OK)
		return read_failed(db, rc, path, "has an unexpected samples table", err);
	sqlite3_bind_int64(q, 1, after_id);
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		if (add_sample(ld, q)) {
			sqlite3_finalize(q);
			return ld->rollups_to ? vt_store_db_err(db, SQLITE_ERROR, err, path, "writing to")
					      : vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory reading '%s'", path);
		}
	}
	sqlite3_finalize(q);
	return rc == SQLITE_DONE ? VT_OK : vt_store_db_err(db, rc, err, path, "reading");
}

/* Rows of a table whose rowids have no holes, from the ends of its rowid tree (no scan); 0 when empty. */
static int count_rows(sqlite3 *db, const char *table, sqlite3_int64 *n)
{
	char sql[160];
	sqlite3_stmt *q;
	int rc;

	*n = 0;
	snprintf(sql, sizeof(sql), "SELECT (SELECT max(id) FROM %s) - (SELECT min(id) FROM %s) + 1", table, table);
	rc = sqlite3_prepare_v2(db, sql, -1, &q, NULL);
	if (rc == SQLITE_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
		*n = sqlite3_column_int64(q, 0);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(q);
	return rc;
}

static int load_samples(sqlite3 *db, const char *path, size_t max_points, struct vt_series *s,
			struct vt_err *err)
{
	struct loader ld = { .s = s };
	sqlite3_stmt *q = NULL;
	sqlite3_int64 count = 0, rollups = 0, after_id = INT64_MIN;
	double tmin = 0, tmax = 0, step, expect;
	bool use_rollups;
	int rc;

	/* Rows are appended with growing ids and times: the ends of the rowid
	 * tree give both without a scan (ids have no holes: a failed append
	 * rolls back and the next one takes its id). */
	rc = count_rows(db, "samples", &count);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, "SELECT (SELECT t FROM samples ORDER BY id LIMIT 1),"
					" (SELECT t FROM samples ORDER BY id DESC LIMIT 1)", -1, &q, NULL);
	if (rc == SQLITE_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
		tmin = sqlite3_column_double(q, 0);
		tmax = sqlite3_column_double(q, 1);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(q);
	if (rc != SQLITE_OK)
		return read_failed(db, rc, path, "has no readable samples", err);
	ld.width = (size_t)count > max_points ? (tmax - tmin) / (double)max_points : 0;
	ld.gap = vt_series_gap_s(s->info.every_s);
	vt_point_acc_clear(&ld.open);

	/*
	 * Points a minute wide or wider come from the rollups (schema 4 on),
	 * when they are fewer than half the samples: 30 days at 1 s are 43,200
	 * rows instead of 2.6 million.  The samples after the last rollup (the
	 * minute a soak was killed in, or is still writing) are read as such.
	 */

	use_rollups = s->info.schema >= 4 && vt_store_has_table(db, "rollups") &&
		      count_rows(db, "rollups", &rollups) == SQLITE_OK && rollups > 0 && rollups * 2 <= count;
	/*
	 * A recording of at least a quarter as many minutes as the points asked
	 * for (3.5 days at the default 20,000) is read in minute points: a
	 * verdict needs a few thousand points, not 20,000, and a week at 1 s is
	 * then 10,080 rows instead of 604,800.  More --points gives finer ones.
	 */
	if (use_rollups && ld.width > 0 && ld.width < VT_ROLLUP_S &&
	    (tmax - tmin) / VT_ROLLUP_S >= (double)max_points / 4)
		ld.width = VT_ROLLUP_S;
	use_rollups = use_rollups && ld.width >= VT_ROLLUP_S;
	/* room for the points at once: growing 30 MiB of arrays step by step costs a tenth of the read */
	step = use_rollups ? VT_ROLLUP_S * floor(ld.width / VT_ROLLUP_S) : ld.width;
	expect = step > 0 ? (tmax - tmin) / step + 64 : (double)count;
	if (vt_series_reserve(s, (size_t)fmax(1, fmin(expect, (double)count))))
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory reading '%s'", path);
	if (use_rollups) {
		rc = load_rollups(db, path, &ld, &after_id, err);
		if (rc == VT_E_RECORDING) {
			drop_points(s, &ld);
			s->info.rollups_damaged = true;
			after_id = INT64_MIN;
		} else if (rc != VT_OK) {
			return rc;
		}
	}
	if ((rc = load_raw(db, path, &ld, after_id, err)) != VT_OK)
		return rc;
	return emit(&ld) ? vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory reading '%s'", path) : VT_OK;
}

static int load_events(sqlite3 *db, const char *path, struct vt_series *s, struct vt_err *err)
{
	sqlite3_stmt *q;
	int rc;

	rc = sqlite3_prepare_v2(db, "SELECT t, wall, kind, pid, detail FROM events ORDER BY id", -1, &q, NULL);
	if (rc != SQLITE_OK)
		return vt_store_db_err(db, rc, err, path, "reading");
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		struct vt_event ev = { 0 };
		const unsigned char *d = sqlite3_column_text(q, 4);

		ev.t = sqlite3_column_double(q, 0);
		ev.wall = sqlite3_column_double(q, 1);
		ev.kind = (enum vt_event_kind)sqlite3_column_int(q, 2);
		ev.pid = (pid_t)sqlite3_column_int64(q, 3);
		snprintf(ev.detail, sizeof(ev.detail), "%s", d ? (const char *)d : "");
		if (ev.kind == VT_EV_STOP)
			s->info.finished = true;
		if (vt_series_add_event(s, &ev)) {
			sqlite3_finalize(q);
			return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory reading '%s'", path);
		}
	}
	sqlite3_finalize(q);
	return rc == SQLITE_DONE ? VT_OK : vt_store_db_err(db, rc, err, path, "reading");
}

/* The processes it sampled and their starts (schema 7; older files have none). */
static int load_starts(sqlite3 *db, const char *path, struct vt_series *s, struct vt_err *err)
{
	sqlite3_stmt *q;
	int rc;

	if (!vt_store_has_table(db, "processes"))
		return VT_OK;
	rc = sqlite3_prepare_v2(db, "SELECT pid, start_ticks, started_t, started_wall FROM processes"
				" ORDER BY started_t", -1, &q, NULL);
	if (rc != SQLITE_OK)
		return read_failed(db, rc, path, "has an unexpected processes table", err);
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		struct vt_process_start ps;

		if (sqlite3_column_type(q, 2) == SQLITE_NULL)
			continue;
		ps.pid = (pid_t)sqlite3_column_int64(q, 0);
		ps.start_ticks = (uint64_t)sqlite3_column_int64(q, 1);
		ps.started_t = sqlite3_column_double(q, 2);
		ps.started_wall = sqlite3_column_type(q, 3) == SQLITE_NULL ? NAN : sqlite3_column_double(q, 3);
		if (!isfinite(ps.started_t))
			continue;
		if (vt_series_add_start(s, &ps)) {
			sqlite3_finalize(q);
			return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory reading '%s'", path);
		}
	}
	sqlite3_finalize(q);
	return rc == SQLITE_DONE ? VT_OK : vt_store_db_err(db, rc, err, path, "reading");
}

/* A counter from first to last, or unknown when either end is missing or it went backwards. */
static bool counter_delta(sqlite3_stmt *first, sqlite3_stmt *last, int col, uint64_t *out)
{
	sqlite3_int64 a, b;

	if (sqlite3_column_type(first, col) == SQLITE_NULL || sqlite3_column_type(last, col) == SQLITE_NULL)
		return false;
	a = sqlite3_column_int64(first, col);
	b = sqlite3_column_int64(last, col);
	if (b < a)
		return false;
	*out = (uint64_t)(b - a);
	return true;
}

/*
 * The thread_samples row query, its counters in vt_thread_counters order
 * from column 1 (NULL for a column the recording predates) into sql[cap].
 */
static void thread_row_sql(sqlite3 *db, char *sql, size_t cap)
{
	size_t len;
	int k;

	len = (size_t)snprintf(sql, cap, "SELECT s.t");
	for (k = 0; k < VT_TC_COUNT && len < cap; k++)
		len += (size_t)snprintf(sql + len, cap - len, has_column(db, "thread_samples",
					vt_thread_counters[k].column) ? ", ts.%s" : ", NULL AS %s",
					vt_thread_counters[k].column);
	if (len < cap)
		snprintf(sql + len, cap - len, " FROM thread_samples ts JOIN samples s ON s.id = ts.sample_id"
			 " WHERE ts.sample_id = ? AND ts.tid = ?");
}

/* Per thread: its counters from the first to the last time they were recorded. */
/*
 * Columns 5.. of the threads query (schema 2 on): the tally of what it was
 * doing; with timed, columns 13..15 too (a recording made before they were
 * added has none: its waits with a timeout are unknown, timed and untimed 0).
 */
static void load_doing(sqlite3_stmt *q, bool timed, struct vt_thread_doing *d)
{
	const unsigned char *w = sqlite3_column_text(q, 9), *c = sqlite3_column_text(q, 11);

	if (sqlite3_column_type(q, 5) == SQLITE_NULL)
		return;
	d->seen = (unsigned)sqlite3_column_int64(q, 5);
	d->n_r = (unsigned)sqlite3_column_int64(q, 6);
	d->n_s = (unsigned)sqlite3_column_int64(q, 7);
	d->n_d = (unsigned)sqlite3_column_int64(q, 8);
	snprintf(d->wchan, sizeof(d->wchan), "%s", w ? (const char *)w : "");
	d->wchan_n = (unsigned)sqlite3_column_int64(q, 10);
	snprintf(d->syscall, sizeof(d->syscall), "%s", c ? (const char *)c : "");
	d->syscall_n = (unsigned)sqlite3_column_int64(q, 12);
	if (timed) {
		d->timed = (unsigned)sqlite3_column_int64(q, 13);
		d->untimed = (unsigned)sqlite3_column_int64(q, 14);
		d->timeout_ms = sqlite3_column_int64(q, 15);
		if (sqlite3_column_type(q, 15) == SQLITE_NULL || d->timeout_ms < 0)
			d->timed = 0;     /* no timeout to go with them */
	}
	/* untrusted file: counts that cannot be are dropped, not shown */
	if (d->n_r > d->seen || d->n_s > d->seen || d->n_d > d->seen ||
	    (uint64_t)d->n_r + d->n_s + d->n_d > d->seen || d->wchan_n > d->seen ||
	    d->syscall_n > d->seen || (uint64_t)d->timed + d->untimed > d->seen)
		memset(d, 0, sizeof(*d));
}

static int load_threads(sqlite3 *db, const char *path, int schema, struct vt_series *s,
			struct vt_err *err)
{
	sqlite3_stmt *groups, *row[2] = { NULL, NULL };
	char row_sql[1024];
	bool timed = schema >= 2 && has_column(db, "threads", "timed");
	int rc, k, c;

	thread_row_sql(db, row_sql, sizeof(row_sql));

	rc = sqlite3_prepare_v2(db, timed
				? "SELECT pid, tid, first_sample, last_sample, name, seen, n_r, n_s, n_d,"
				  " wchan, wchan_n, syscall, syscall_n, timed, untimed, timeout_ms FROM threads"
				: schema >= 2
				? "SELECT pid, tid, first_sample, last_sample, name, seen, n_r, n_s, n_d,"
				  " wchan, wchan_n, syscall, syscall_n FROM threads"
				: "SELECT pid, tid, first_sample, last_sample, name FROM threads", -1, &groups,
				NULL);
	if (rc != SQLITE_OK)
		return vt_store_db_err(db, rc, err, path, "reading");
	for (k = 0; k < 2 && rc == SQLITE_OK; k++)
		rc = sqlite3_prepare_v2(db, row_sql, -1, &row[k], NULL);
	while (rc == SQLITE_OK && (rc = sqlite3_step(groups)) == SQLITE_ROW) {
		struct vt_thread_run tr = { 0 };
		const unsigned char *name = sqlite3_column_text(groups, 4);
		bool ok = true;

		rc = SQLITE_OK;
		tr.pid = (pid_t)sqlite3_column_int64(groups, 0);
		tr.tid = (pid_t)sqlite3_column_int64(groups, 1);
		snprintf(tr.name, sizeof(tr.name), "%s", name ? (const char *)name : "");
		if (schema >= 2)
			load_doing(groups, timed, &tr.doing);
		for (k = 0; k < 2; k++) {
			sqlite3_bind_int64(row[k], 1, sqlite3_column_int64(groups, 2 + k));
			sqlite3_bind_int64(row[k], 2, tr.tid);
			ok = ok && sqlite3_step(row[k]) == SQLITE_ROW;
		}
		if (ok) {
			tr.t_first = sqlite3_column_double(row[0], 0);
			tr.t_last = sqlite3_column_double(row[1], 0);
			for (c = 0; c < VT_TC_COUNT; c++)
				if (!counter_delta(row[0], row[1], 1 + c, &tr.delta[c]))
					tr.delta[c] = c == VT_TC_CPU_NS ? 0 : VT_NA;
			if (sqlite3_column_type(row[0], 1 + VT_TC_CPU_NS) != SQLITE_NULL &&
			    sqlite3_column_int64(row[0], 1 + VT_TC_CPU_NS) > 0)
				tr.cpu_ns_first = (uint64_t)sqlite3_column_int64(row[0], 1 + VT_TC_CPU_NS);
			if (vt_series_add_thread(s, &tr))
				rc = SQLITE_NOMEM;
		}
		for (k = 0; k < 2; k++)
			sqlite3_reset(row[k]);
	}
	for (k = 0; k < 2; k++)
		sqlite3_finalize(row[k]);
	sqlite3_finalize(groups);
	if (rc == SQLITE_NOMEM)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory reading '%s'", path);
	return rc == SQLITE_DONE ? VT_OK : vt_store_db_err(db, rc, err, path, "reading");
}

/* Is path a SQLite file in WAL mode with no -wal beside it (a WAL recording whose writer has ended)? */
static bool wal_mode_without_wal(const char *path)
{
	unsigned char hdr[20];
	char side[4096 + 8];
	struct stat sb;
	int fd = open(path, O_RDONLY | O_NOCTTY | O_CLOEXEC);
	bool wal;

	if (fd < 0)
		return false;
	wal = pread(fd, hdr, sizeof(hdr), 0) == (ssize_t)sizeof(hdr) && !memcmp(hdr, "SQLite format 3", 16) &&
	      hdr[18] == 2;
	close(fd);
	snprintf(side, sizeof(side), "%s-wal", path);
	return wal && lstat(side, &sb) != 0 && errno == ENOENT;
}

/* Has path a -wal with something in it? */
static bool wal_has_frames(const char *path)
{
	char side[4096 + 8];
	struct stat sb;

	snprintf(side, sizeof(side), "%s-wal", path);
	return stat(side, &sb) == 0 && sb.st_size > 0;
}

/*
 * Open path for reading only, and read its header: SQLITE_OK, or the
 * SQLite error.  immutable: as the URI file:PATH?immutable=1, which takes
 * no lock and creates nothing (no -shm), and reads no WAL.
 */
static int open_reading(const char *path, bool immutable, sqlite3 **db)
{
	static const char keep[] = "-._~/";
	char uri[3 * 4096 + 32];
	size_t len, i;
	int rc;

	*db = NULL;
	if (immutable) {
		len = (size_t)snprintf(uri, sizeof(uri), "file:%s", path[0] == '/' ? "//" : "");
		for (i = 0; path[i] && len + 4 < sizeof(uri); i++) {
			unsigned char c = (unsigned char)path[i];

			if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr(keep, c))
				uri[len++] = (char)c;
			else
				len += (size_t)snprintf(uri + len, sizeof(uri) - len, "%%%02X", c);
		}
		snprintf(uri + len, sizeof(uri) - len, "?immutable=1");
	}
	rc = sqlite3_open_v2(immutable ? uri : path, db,
			     SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | (immutable ? SQLITE_OPEN_URI : 0), NULL);
	if (rc == SQLITE_OK) {
		sqlite3_busy_timeout(*db, 5000);
		rc = sqlite3_exec(*db, "PRAGMA schema_version", NULL, NULL, NULL);
	}
	return rc;
}

int vt_store_open_read(const char *path, sqlite3 **out, int *schema, bool *wal_unread,
		       struct vt_err *err)
{
	sqlite3 *db = NULL;
	struct stat sb;
	bool immutable;
	int rc;

	*out = NULL;
	*schema = 0;
	*wal_unread = false;
	if ((rc = vt_sqlite_load(err)))
		return rc;
	if (stat(path, &sb) != 0) {
		int e = errno;

		return vt_err_set(err, e == EACCES ? VT_E_PERM : VT_E_NOTFOUND, e, "cannot open '%s': %s",
				  path, strerror(e));
	}
	if (!S_ISREG(sb.st_mode))
		return vt_err_set(err, VT_E_RECORDING, 0, "'%s' is not a regular file", path);
	if (sb.st_size == 0)
		return vt_err_set(err, VT_E_RECORDING, 0, "'%s' is empty: not a vitals recording", path);
	/*
	 * Read only: a recording on a read-only mount, or another user's, reads
	 * as well as one's own, and reading never changes it.  A WAL recording
	 * whose writer has ended is read immutable (a read-only WAL reader
	 * would leave -wal and -shm behind); one whose -shm cannot be made
	 * here (a directory not ours) is too, without the samples still in its
	 * WAL, and the series says so.
	 */
	immutable = wal_mode_without_wal(path);
	rc = open_reading(path, immutable, &db);
	if (!immutable && ((rc & 0xff) == SQLITE_READONLY || (rc & 0xff) == SQLITE_CANTOPEN)) {
		sqlite3_close(db);
		*wal_unread = wal_has_frames(path);
		rc = open_reading(path, true, &db);
	}
	if (rc != SQLITE_OK) {
		rc = vt_store_db_err(db, rc, err, path, "opening");
		sqlite3_close(db);
		return rc;
	}
	/* One read transaction: a soak writing meanwhile does not tear the view. */
	rc = check_identity(db, path, schema, err);
	if (rc != VT_OK && *wal_unread) {
		/* a soak killed before its first checkpoint: all of it is in the WAL */
		vt_err_set(err, VT_E_PERM, EACCES,
			   "'%s' keeps its samples in '%s-wal', which cannot be read without making '%s-shm' there",
			   path, path, path);
		vt_err_hint(err, "copy the file and its -wal to a folder you can write, and analyse the copy");
		rc = VT_E_PERM;
	}
	if (rc == VT_OK && sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		rc = vt_store_db_err(db, SQLITE_ERROR, err, path, "reading");
	if (rc != VT_OK) {
		sqlite3_close(db);
		return rc;
	}
	*out = db;
	return VT_OK;
}

void vt_store_close_read(sqlite3 *db)
{
	if (!db)
		return;
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	sqlite3_close(db);
}

/* A soak holds path's lock (flock, exclusive) while it writes it. */
static bool writer_holds(const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	bool held;

	if (fd < 0)
		return false;
	held = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
	close(fd);                   /* and our shared lock with it */
	return held;
}

/*
 * SQLite's quick_check of the whole file, for files up to this size (a
 * day at 1 s is about 60 MiB and checks in ~0.3 s); a larger one is
 * checked when a read of it fails.
 */
#define QUICK_CHECK_MAX_BYTES (128ull << 20)

/* A damaged file (quick_check finds what a read may not) is exit 9, naming the damage. */
static int check_whole(sqlite3 *db, const char *path, struct vt_err *err)
{
	sqlite3_stmt *q = NULL;
	const unsigned char *first;
	char what[200] = "";
	int rc, problems = 0;

	if (sqlite3_prepare_v2(db, "PRAGMA quick_check(10)", -1, &q, NULL) != SQLITE_OK)
		return vt_store_db_err(db, sqlite3_errcode(db), err, path, "checking");
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		first = sqlite3_column_text(q, 0);
		if (first && strcmp((const char *)first, "ok") != 0 && !problems++) {
			const char *p = (const char *)first;
			char *nl;

			if (!strncmp(p, "*** in database main ***\n", 25))
				p += 25;
			snprintf(what, sizeof(what), "%s", p);
			while ((nl = strchr(what, '\n')) != NULL)
				*nl = ';';
		}
	}
	sqlite3_finalize(q);
	if (rc != SQLITE_DONE)
		return vt_store_db_err(db, rc, err, path, "checking");
	if (!problems)
		return VT_OK;
	vt_err_set(err, VT_E_RECORDING, 0, "'%s' is damaged: %s%s", path, what,
		   problems > 1 ? " (and more: SQLite's quick_check)" : " (SQLite's quick_check)");
	vt_err_hint(err, "its figures cannot be trusted; a copy taken while the soak ran, or its -wal, may "
		    "be whole");
	return VT_E_RECORDING;
}

int vt_store_load(const char *path, size_t max_points, struct vt_series *out, struct vt_err *err)
{
	sqlite3 *db = NULL;
	struct stat sb;
	bool wal_unread;
	int rc, schema = 0;

	rc = vt_store_open_read(path, &db, &schema, &wal_unread, err);
	out->info.wal_unread = wal_unread;
	if (rc != VT_OK)
		return rc;
	if (!max_points)
		max_points = VT_SERIES_MAX_POINTS;
	if (stat(path, &sb) == 0 && (uint64_t)sb.st_size <= QUICK_CHECK_MAX_BYTES &&
	    (rc = check_whole(db, path, err)) != VT_OK) {
		vt_store_close_read(db);
		return rc;
	}
	rc = load_meta(db, path, out, err);
	out->info.schema = schema;
	if (rc == VT_OK)
		rc = load_samples(db, path, max_points, out, err);
	if (rc == VT_OK)
		rc = load_events(db, path, out, err);
	if (rc == VT_OK)
		rc = load_threads(db, path, schema, out, err);
	if (rc == VT_OK)
		rc = load_starts(db, path, out, err);
	/* a read that failed on a large file: was it damage?  (Its own error stands if not.) */
	if (rc != VT_OK && rc != VT_E_RECORDING && rc != VT_E_NOMEM) {
		struct vt_err damage;

		vt_err_clear(&damage);
		if (check_whole(db, path, &damage) == VT_E_RECORDING) {
			rc = VT_E_RECORDING;
			if (err)
				*err = damage;
		}
	}
	vt_store_close_read(db);
	if (rc != VT_OK)
		vt_series_free(out);
	else if (!out->info.finished)
		out->info.writing = writer_holds(path);
	return rc;
}

int vt_store_rebuild_rollups(const char *path, struct vt_err *err)
{
	struct vt_store st = { .lock_fd = -1 };
	struct vt_series meta;
	struct loader ld = { .s = &meta, .rollups_to = &st, .width = VT_ROLLUP_S };
	char sql[64];
	int rc, schema = 0;

	vt_series_init(&meta);
	if ((rc = vt_sqlite_load(err)) || (rc = vt_store_check_no_writer(path, err)))
		return rc;
	snprintf(st.path, sizeof(st.path), "%s", path);
	rc = sqlite3_open_v2(path, &st.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, NULL);
	if (rc != SQLITE_OK) {
		rc = vt_store_db_err(st.db, rc, err, path, "opening");
		goto out;
	}
	sqlite3_busy_timeout(st.db, 2000);
	if ((rc = vt_store_exec(&st, "BEGIN IMMEDIATE", err, "writing to")) ||
	    (rc = check_identity(st.db, path, &schema, err)) || (rc = load_meta(st.db, path, &meta, err)))
		goto out;
	ld.gap = vt_series_gap_s(meta.info.every_s);
	vt_point_acc_clear(&ld.open);
	if (vt_store_has_table(st.db, "rollups") && (rc = vt_store_exec(&st, "DROP TABLE rollups", err, "writing to")))
		goto out;
	if ((rc = vt_store_create_rollups_table(&st, err)) || (rc = vt_store_prepare_rollup_insert(&st, err)) ||
	    (rc = load_raw(st.db, path, &ld, INT64_MIN, err)))
		goto out;
	if (emit(&ld))
		rc = vt_store_db_err(st.db, SQLITE_ERROR, err, path, "writing to");
	else if (schema < VT_STORE_SCHEMA) {
		snprintf(sql, sizeof(sql), "PRAGMA user_version=%d", VT_STORE_SCHEMA);
		rc = vt_store_exec(&st, sql, err, "writing to");
	}
	if (rc == VT_OK)
		rc = vt_store_exec(&st, "COMMIT", err, "writing to");
out:
	sqlite3_finalize(st.ins_rollup);
	sqlite3_close(st.db);
	vt_series_free(&meta);
	return rc;
}

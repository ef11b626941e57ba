/*
 * store_internal.h — what the files of src/store share and nothing else
 * sees: the writer (struct vt_store) and the schema helpers its three
 * files (store.c, store_meta.c, store_read.c) share, SQLite errors as
 * vitals errors, and a recording opened for reading.  Only src/store includes this (and with
 * it <sqlite3.h>, whose functions go through store/sqlite_lib.h's table).
 */
#ifndef VT_STORE_STORE_INTERNAL_H
#define VT_STORE_STORE_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>

#include "base/error.h"
#include "store/rollup.h"
#include "store/sqlite_lib.h"
#include "store/store.h"

/* PRAGMA application_id: 'VTLS' */
#define VT_STORE_APP_ID 0x56544c53

struct vt_store {
	sqlite3 *db;
	sqlite3_stmt *ins_sample, *ins_event, *ins_process, *ins_thread, *ins_tsample, *ins_rollup;
	char path[4096];
	uint64_t samples;
	int lock_fd;             /* the file as created, flock'ed for the writer's lifetime; -1 none */
	double gap_s;            /* a step longer than this between samples is a gap (3 intervals) */
	struct vt_point_acc minute;   /* the rollup being filled; written when the next one begins */
};

/* The rollups' columns of metric m: "<key>_lo", "_hi", "_mean" and "_n" (samples that had it). */
#define ROLLUP_PARTS 4
#define ROLLUP_SQL_MAX 8192
extern const char *const vt_store_rollup_parts[ROLLUP_PARTS];

/* Run sql (no rows) / prepare a statement kept for the writer's life, on st; errors as vt_store_db_err. */
int vt_store_exec(struct vt_store *st, const char *sql, struct vt_err *err, const char *doing);
int vt_store_prepare(struct vt_store *st, const char *sql, sqlite3_stmt **out, struct vt_err *err);

/* Metric m is a column of a recording; and one stored as an integer. */
bool vt_store_recorded(int m);
bool vt_store_metric_is_integer(int m);

/* The rollups table, its insert statement (st->ins_rollup), and one rollup written with it. */
int vt_store_create_rollups_table(struct vt_store *st, struct vt_err *err);
int vt_store_prepare_rollup_insert(struct vt_store *st, struct vt_err *err);
int vt_store_write_rollup(struct vt_store *st, const struct vt_point_acc *a, struct vt_err *err);

/* No soak writes path (its flock): VT_OK, or VT_E_USAGE naming the writer. */
int vt_store_check_no_writer(const char *path, struct vt_err *err);

/* The meta rows (store_meta.c): info written; one row's value read into info, checked. */
int vt_store_write_meta(struct vt_store *st, const struct vt_recording_info *info, struct vt_err *err);
int vt_store_read_meta_value(struct vt_recording_info *info, const char *path, const char *key,
			     sqlite3_stmt *q, int col, struct vt_err *err);

/* The writer's connection and its path (valid until vt_store_close). */
sqlite3 *vt_store_db(struct vt_store *st);
const char *vt_store_path(const struct vt_store *st);

/* A SQLite failure (rc, and what db says about it) as a vitals error: "... while <doing> '<path>'". */
int vt_store_db_err(sqlite3 *db, int rc, struct vt_err *err, const char *path, const char *doing);

/*
 * Open the recording at path for reading only, check it is one this vitals
 * reads (*schema its version), and begin one read transaction, so that a
 * soak writing meanwhile does not tear the view.  *wal_unread: read
 * without its WAL (no -shm could be made beside it).  Errors as
 * vt_store_load.  Close with vt_store_close_read.
 */
int vt_store_open_read(const char *path, sqlite3 **db, int *schema, bool *wal_unread,
		       struct vt_err *err);
void vt_store_close_read(sqlite3 *db);

/* The profile tables (profile_store.c), created with the others (schema 3 on). */
extern const char vt_store_profile_schema_sql[];

/* For the writers of store/profile_store.c and store/lock_store.c, which prepare their inserts
 * for one transaction: prepare sql on db; step an insert and make it ready for the next row
 * (doing: "writing a profile to"); a count into column i (INT64_MAX when larger).  Errors as
 * vt_store_db_err. */
int vt_store_prepare_on(sqlite3 *db, const char *path, const char *sql, sqlite3_stmt **q, struct vt_err *err);
int vt_store_insert_step(sqlite3 *db, const char *path, sqlite3_stmt *q, const char *doing, struct vt_err *err);
void vt_store_bind_count(sqlite3_stmt *q, int i, uint64_t v);

/* For the readers: VT_E_RECORDING "'PATH': THING ID is damaged: what fmt says". */
int vt_store_damaged(struct vt_err *err, const char *path, const char *thing, long long id, const char *fmt,
		     va_list ap) __attribute__((format(printf, 5, 0)));
/* For the readers: column i as a count in [0, max] (false, *v untouched, when it is not one);
 * column i as text into out ("" when NULL). */
bool vt_store_col_count(sqlite3_stmt *q, int i, uint64_t max, uint64_t *v);
void vt_store_col_text(sqlite3_stmt *q, int i, char *out, size_t cap);
/* Column i of q as a count in [0, max] into field, else return damaged(r, "WHAT is not a
 * count"): for readers with a reader r and a damaged(r, fmt, ...) of their own. */
#define VT_STORE_COUNT(q, i, max, field, what)                                           \
	do {                                                                             \
		uint64_t v_;                                                             \
		if (!vt_store_col_count(q, i, max, &v_))                                 \
			return damaged(r, "%s is not a count", what);                    \
		field = v_;                                                              \
	} while (0)

/* The lock tables (lock_store.c), created with the others (schema 5 on). */
extern const char vt_store_lock_schema_sql[];

/* The allocation-profile tables (alloc_store.c), created with the others (schema 6 on). */
extern const char vt_store_alloc_schema_sql[];

/* Does the recording have this table?  (Older ones lack the newer tables.) */
bool vt_store_has_table(sqlite3 *db, const char *table);

#endif

/*
 * store_internal.h — what the files of src/store share and nothing else
 * sees: the writer's SQLite handle, SQLite errors as vitals errors, and a
 * recording opened for reading.  Only src/store includes this (and with
 * it <sqlite3.h>).
 */
#ifndef VT_STORE_STORE_INTERNAL_H
#define VT_STORE_STORE_INTERNAL_H

#include <sqlite3.h>
#include <stdbool.h>

#include "base/error.h"
#include "store/store.h"

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

/* Does the recording have this table?  (Older ones lack the newer tables.) */
bool vt_store_has_table(sqlite3 *db, const char *table);

#endif

/*
 * sqlite_lib.c — SQLite opened on first use (see sqlite_lib.h).
 *
 * The soname is that of the library <sqlite3.h> comes from: Debian's
 * libsqlite3-0, which libsqlite3-dev pulls in and the package Depends on.
 */
#include "store/sqlite_lib.h"

#include "base/dynlib.h"

#include <stddef.h>

struct vt_sqlite_api vt_sqlite;

static const struct vt_dynsym sqlite_syms[] = {
	{ "sqlite3_bind_blob", offsetof(struct vt_sqlite_api, sqlite3_bind_blob) },
	{ "sqlite3_bind_double", offsetof(struct vt_sqlite_api, sqlite3_bind_double) },
	{ "sqlite3_bind_int", offsetof(struct vt_sqlite_api, sqlite3_bind_int) },
	{ "sqlite3_bind_int64", offsetof(struct vt_sqlite_api, sqlite3_bind_int64) },
	{ "sqlite3_bind_null", offsetof(struct vt_sqlite_api, sqlite3_bind_null) },
	{ "sqlite3_bind_text", offsetof(struct vt_sqlite_api, sqlite3_bind_text) },
	{ "sqlite3_bind_zeroblob", offsetof(struct vt_sqlite_api, sqlite3_bind_zeroblob) },
	{ "sqlite3_busy_timeout", offsetof(struct vt_sqlite_api, sqlite3_busy_timeout) },
	{ "sqlite3_clear_bindings", offsetof(struct vt_sqlite_api, sqlite3_clear_bindings) },
	{ "sqlite3_close", offsetof(struct vt_sqlite_api, sqlite3_close) },
	{ "sqlite3_column_blob", offsetof(struct vt_sqlite_api, sqlite3_column_blob) },
	{ "sqlite3_column_bytes", offsetof(struct vt_sqlite_api, sqlite3_column_bytes) },
	{ "sqlite3_column_double", offsetof(struct vt_sqlite_api, sqlite3_column_double) },
	{ "sqlite3_column_int", offsetof(struct vt_sqlite_api, sqlite3_column_int) },
	{ "sqlite3_column_int64", offsetof(struct vt_sqlite_api, sqlite3_column_int64) },
	{ "sqlite3_column_text", offsetof(struct vt_sqlite_api, sqlite3_column_text) },
	{ "sqlite3_column_type", offsetof(struct vt_sqlite_api, sqlite3_column_type) },
	{ "sqlite3_errcode", offsetof(struct vt_sqlite_api, sqlite3_errcode) },
	{ "sqlite3_errmsg", offsetof(struct vt_sqlite_api, sqlite3_errmsg) },
	{ "sqlite3_errstr", offsetof(struct vt_sqlite_api, sqlite3_errstr) },
	{ "sqlite3_exec", offsetof(struct vt_sqlite_api, sqlite3_exec) },
	{ "sqlite3_extended_errcode", offsetof(struct vt_sqlite_api, sqlite3_extended_errcode) },
	{ "sqlite3_finalize", offsetof(struct vt_sqlite_api, sqlite3_finalize) },
	{ "sqlite3_last_insert_rowid", offsetof(struct vt_sqlite_api, sqlite3_last_insert_rowid) },
	{ "sqlite3_open_v2", offsetof(struct vt_sqlite_api, sqlite3_open_v2) },
	{ "sqlite3_prepare_v2", offsetof(struct vt_sqlite_api, sqlite3_prepare_v2) },
	{ "sqlite3_prepare_v3", offsetof(struct vt_sqlite_api, sqlite3_prepare_v3) },
	{ "sqlite3_reset", offsetof(struct vt_sqlite_api, sqlite3_reset) },
	{ "sqlite3_step", offsetof(struct vt_sqlite_api, sqlite3_step) },
	{ "sqlite3_system_errno", offsetof(struct vt_sqlite_api, sqlite3_system_errno) },
	{ "sqlite3_wal_checkpoint_v2", offsetof(struct vt_sqlite_api, sqlite3_wal_checkpoint_v2) },
};

static struct vt_dynlib sqlite_lib = VT_DYNLIB("libsqlite3.so.0", "libsqlite3-0", "reading or writing a recording",
					sqlite_syms, &vt_sqlite);

int vt_sqlite_load(struct vt_err *err)
{
	return vt_dynlib_load(&sqlite_lib, err);
}

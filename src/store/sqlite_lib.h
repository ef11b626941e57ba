/*
 * sqlite_lib.h — SQLite, opened when a recording is first opened
 * (base/dynlib.h says why): snap, heap, threads and the other one-shot
 * commands never map or relocate it.
 *
 * The functions src/store calls, in a table typed from <sqlite3.h>; the
 * macros below send each call by its SQLite name through the table, so the
 * store's code reads as plain SQLite.  Every way into SQLite starts with
 * sqlite3_open_v2, and each of those is preceded by vt_sqlite_load.  A
 * SQLite function not in this table does not link into vitals (add it here).
 * Only src/store includes this (through store_internal.h).
 */
#ifndef VT_STORE_SQLITE_LIB_H
#define VT_STORE_SQLITE_LIB_H

#include <sqlite3.h>

#include "base/error.h"

struct vt_sqlite_api {
	__typeof__(&sqlite3_bind_blob) sqlite3_bind_blob;
	__typeof__(&sqlite3_bind_double) sqlite3_bind_double;
	__typeof__(&sqlite3_bind_int) sqlite3_bind_int;
	__typeof__(&sqlite3_bind_int64) sqlite3_bind_int64;
	__typeof__(&sqlite3_bind_null) sqlite3_bind_null;
	__typeof__(&sqlite3_bind_text) sqlite3_bind_text;
	__typeof__(&sqlite3_bind_zeroblob) sqlite3_bind_zeroblob;
	__typeof__(&sqlite3_busy_timeout) sqlite3_busy_timeout;
	__typeof__(&sqlite3_clear_bindings) sqlite3_clear_bindings;
	__typeof__(&sqlite3_close) sqlite3_close;
	__typeof__(&sqlite3_column_blob) sqlite3_column_blob;
	__typeof__(&sqlite3_column_bytes) sqlite3_column_bytes;
	__typeof__(&sqlite3_column_double) sqlite3_column_double;
	__typeof__(&sqlite3_column_int) sqlite3_column_int;
	__typeof__(&sqlite3_column_int64) sqlite3_column_int64;
	__typeof__(&sqlite3_column_text) sqlite3_column_text;
	__typeof__(&sqlite3_column_type) sqlite3_column_type;
	__typeof__(&sqlite3_errcode) sqlite3_errcode;
	__typeof__(&sqlite3_errmsg) sqlite3_errmsg;
	__typeof__(&sqlite3_errstr) sqlite3_errstr;
	__typeof__(&sqlite3_exec) sqlite3_exec;
	__typeof__(&sqlite3_extended_errcode) sqlite3_extended_errcode;
	__typeof__(&sqlite3_finalize) sqlite3_finalize;
	__typeof__(&sqlite3_last_insert_rowid) sqlite3_last_insert_rowid;
	__typeof__(&sqlite3_open_v2) sqlite3_open_v2;
	__typeof__(&sqlite3_prepare_v2) sqlite3_prepare_v2;
	__typeof__(&sqlite3_prepare_v3) sqlite3_prepare_v3;
	__typeof__(&sqlite3_reset) sqlite3_reset;
	__typeof__(&sqlite3_step) sqlite3_step;
	__typeof__(&sqlite3_system_errno) sqlite3_system_errno;
	__typeof__(&sqlite3_wal_checkpoint_v2) sqlite3_wal_checkpoint_v2;
};

/* Filled by vt_sqlite_load; call nothing in it before a load returned VT_OK. */
extern struct vt_sqlite_api vt_sqlite;

/* Open libsqlite3.so.0 (once) and fill the table; VT_E_UNSUPPORTED naming the package when it is missing. */
int vt_sqlite_load(struct vt_err *err);

#define sqlite3_bind_blob(...)         (vt_sqlite.sqlite3_bind_blob(__VA_ARGS__))
#define sqlite3_bind_double(...)       (vt_sqlite.sqlite3_bind_double(__VA_ARGS__))
#define sqlite3_bind_int(...)          (vt_sqlite.sqlite3_bind_int(__VA_ARGS__))
#define sqlite3_bind_int64(...)        (vt_sqlite.sqlite3_bind_int64(__VA_ARGS__))
#define sqlite3_bind_null(...)         (vt_sqlite.sqlite3_bind_null(__VA_ARGS__))
#define sqlite3_bind_text(...)         (vt_sqlite.sqlite3_bind_text(__VA_ARGS__))
#define sqlite3_bind_zeroblob(...)     (vt_sqlite.sqlite3_bind_zeroblob(__VA_ARGS__))
#define sqlite3_busy_timeout(...)      (vt_sqlite.sqlite3_busy_timeout(__VA_ARGS__))
#define sqlite3_clear_bindings(...)    (vt_sqlite.sqlite3_clear_bindings(__VA_ARGS__))
#define sqlite3_close(...)             (vt_sqlite.sqlite3_close(__VA_ARGS__))
#define sqlite3_column_blob(...)       (vt_sqlite.sqlite3_column_blob(__VA_ARGS__))
#define sqlite3_column_bytes(...)      (vt_sqlite.sqlite3_column_bytes(__VA_ARGS__))
#define sqlite3_column_double(...)     (vt_sqlite.sqlite3_column_double(__VA_ARGS__))
#define sqlite3_column_int(...)        (vt_sqlite.sqlite3_column_int(__VA_ARGS__))
#define sqlite3_column_int64(...)      (vt_sqlite.sqlite3_column_int64(__VA_ARGS__))
#define sqlite3_column_text(...)       (vt_sqlite.sqlite3_column_text(__VA_ARGS__))
#define sqlite3_column_type(...)       (vt_sqlite.sqlite3_column_type(__VA_ARGS__))
#define sqlite3_errcode(...)           (vt_sqlite.sqlite3_errcode(__VA_ARGS__))
#define sqlite3_errmsg(...)            (vt_sqlite.sqlite3_errmsg(__VA_ARGS__))
#define sqlite3_errstr(...)            (vt_sqlite.sqlite3_errstr(__VA_ARGS__))
#define sqlite3_exec(...)              (vt_sqlite.sqlite3_exec(__VA_ARGS__))
#define sqlite3_extended_errcode(...)  (vt_sqlite.sqlite3_extended_errcode(__VA_ARGS__))
#define sqlite3_finalize(...)          (vt_sqlite.sqlite3_finalize(__VA_ARGS__))
#define sqlite3_last_insert_rowid(...) (vt_sqlite.sqlite3_last_insert_rowid(__VA_ARGS__))
#define sqlite3_open_v2(...)           (vt_sqlite.sqlite3_open_v2(__VA_ARGS__))
#define sqlite3_prepare_v2(...)        (vt_sqlite.sqlite3_prepare_v2(__VA_ARGS__))
#define sqlite3_prepare_v3(...)        (vt_sqlite.sqlite3_prepare_v3(__VA_ARGS__))
#define sqlite3_reset(...)             (vt_sqlite.sqlite3_reset(__VA_ARGS__))
#define sqlite3_step(...)              (vt_sqlite.sqlite3_step(__VA_ARGS__))
#define sqlite3_system_errno(...)      (vt_sqlite.sqlite3_system_errno(__VA_ARGS__))
#define sqlite3_wal_checkpoint_v2(...) (vt_sqlite.sqlite3_wal_checkpoint_v2(__VA_ARGS__))

#endif

/*
 * store.c — soak recordings in SQLite (see store.h).
 */
#include "store/store.h"
#include "store/rollup.h"
#include "store/store_internal.h"
#include "base/outfile.h"
#include "base/unknown.h"

#include "proc/procfs.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* PRAGMA application_id: 'VTLS' */
#define VT_STORE_APP_ID 0x56544c53

struct vt_store {
	sqlite3 *db;
	sqlite3_stmt *ins_sample, *ins_event, *ins_thread, *ins_tsample, *ins_rollup;
	char path[4096];
	uint64_t samples;
	int lock_fd;             /* the file as created, flock'ed for the writer's lifetime; -1 none */
	double gap_s;            /* a step longer than this between samples is a gap (3 intervals) */
	struct vt_point_acc minute;   /* the rollup being filled; written when the next one begins */
};

static const char *const schema_sql =
	"CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;"
	"CREATE TABLE events(id INTEGER PRIMARY KEY, t REAL, wall REAL, kind INTEGER,"
	" pid INTEGER, detail TEXT);"
	"CREATE TABLE threads(pid INTEGER, tid INTEGER, name TEXT, first_sample INTEGER,"
	" last_sample INTEGER, seen INTEGER, n_r INTEGER, n_s INTEGER, n_d INTEGER, wchan TEXT,"
	" wchan_n INTEGER, syscall TEXT, syscall_n INTEGER, timed INTEGER, untimed INTEGER,"
	" timeout_ms INTEGER, PRIMARY KEY(pid, tid)) WITHOUT ROWID;"
	"CREATE TABLE thread_samples(sample_id INTEGER, tid INTEGER, pid INTEGER, cpu_ns INTEGER,"
	" wait_ns INTEGER, vcsw INTEGER, nvcsw INTEGER, PRIMARY KEY(sample_id, tid)) WITHOUT ROWID;";

/* A SQLite failure as a vitals error: what was being done, and why. */
static int db_err(sqlite3 *db, int rc, struct vt_err *err, const char *path, const char *doing)
{
	int ext = db ? sqlite3_extended_errcode(db) : rc;
	int sys = db ? sqlite3_system_errno(db) : 0;
	const char *why = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);

	switch (ext & 0xff) {
	case SQLITE_NOMEM:
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory while %s '%s'", doing, path);
	case SQLITE_FULL:
		vt_err_set(err, VT_E_IO, ENOSPC, "disk full while %s '%s'", doing, path);
		vt_err_hint(err, "free space on that file system; the samples already in the file are intact");
		return VT_E_IO;
	case SQLITE_NOTADB:
		return vt_err_set(err, VT_E_RECORDING, 0, "'%s' is not a vitals recording (not a SQLite file)", path);
	case SQLITE_CORRUPT:
		return vt_err_set(err, VT_E_RECORDING, 0, "'%s' is damaged: %s", path, why);
	case SQLITE_READONLY:
	case SQLITE_PERM:
	case SQLITE_AUTH:
		vt_err_set(err, VT_E_PERM, sys, "cannot write '%s' while %s: %s%s%s", path, doing, why,
			   sys ? ": " : "", sys ? strerror(sys) : "");
		vt_err_hint(err, "choose a path on a writable file system with -o");
		return VT_E_PERM;
	case SQLITE_CANTOPEN:
		if (sys == EACCES || sys == EPERM || sys == EROFS) {
			vt_err_set(err, VT_E_PERM, sys, "cannot open '%s': %s", path, strerror(sys));
			vt_err_hint(err, "choose a path on a writable file system with -o");
			return VT_E_PERM;
		}
		return vt_err_set(err, VT_E_IO, sys, "cannot open '%s': %s", path,
				  sys ? strerror(sys) : why);
	default:
		return vt_err_set(err, VT_E_IO, sys, "SQLite error while %s '%s': %s", doing, path, why);
	}
}

int vt_store_db_err(sqlite3 *db, int rc, struct vt_err *err, const char *path, const char *doing)
{
	return db_err(db, rc, err, path, doing);
}

sqlite3 *vt_store_db(struct vt_store *st)
{
	return st->db;
}

const char *vt_store_path(const struct vt_store *st)
{
	return st->path;
}

static int exec(struct vt_store *st, const char *sql, struct vt_err *err, const char *doing)
{
	int rc = sqlite3_exec(st->db, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? VT_OK : db_err(st->db, rc, err, st->path, doing);
}

/*
 * A statement reading a recording failed: a missing table or column
 * (SQLITE_ERROR) means the file is not a recording this vitals can read,
 * "'<path>' <what>: <SQLite's words>"; an I/O, lock or memory failure is
 * that failure, not a verdict on the file.
 */
static int read_failed(sqlite3 *db, int rc, const char *path, const char *what, struct vt_err *err)
{
	if ((sqlite3_extended_errcode(db) & 0xff) != SQLITE_ERROR)
		return db_err(db, rc, err, path, "reading");
	return vt_err_set(err, VT_E_RECORDING, 0, "'%s' %s: %s", path, what, sqlite3_errmsg(db));
}

static int prepare(struct vt_store *st, const char *sql, sqlite3_stmt **out, struct vt_err *err)
{
	int rc = sqlite3_prepare_v3(st->db, sql, -1, SQLITE_PREPARE_PERSISTENT, out, NULL);

	return rc == SQLITE_OK ? VT_OK : db_err(st->db, rc, err, st->path, "preparing");
}

static bool recorded(int m)
{
	return (vt_metrics[m].flags & VT_MF_RECORDED) != 0;
}

static bool metric_is_integer(int m)
{
	return vt_metrics[m].unit != VT_UNIT_SECONDS;
}

static int create_samples_table(struct vt_store *st, struct vt_err *err)
{
	char sql[2048];
	size_t len;
	int m;

	len = (size_t)snprintf(sql, sizeof(sql),
			       "CREATE TABLE samples(id INTEGER PRIMARY KEY, t REAL NOT NULL, wall REAL,"
			       " pid INTEGER, read_ms REAL");
	for (m = 0; m < VT_M_COUNT; m++)
		if (recorded(m))
			len += (size_t)snprintf(sql + len, sizeof(sql) - len, ", %s %s", vt_metrics[m].key,
						metric_is_integer(m) ? "INTEGER" : "REAL");
	snprintf(sql + len, sizeof(sql) - len, ")");
	return exec(st, sql, err, "creating");
}

/* The rollups' columns of metric m: "<key>_lo", "_hi", "_mean" and "_n" (samples that had it). */
static const char *const rollup_parts[] = { "lo", "hi", "mean", "n" };
#define ROLLUP_PARTS 4
#define ROLLUP_SQL_MAX 8192

static int create_rollups_table(struct vt_store *st, struct vt_err *err)
{
	char sql[ROLLUP_SQL_MAX];
	size_t len;
	int m, k;

	len = (size_t)snprintf(sql, sizeof(sql),
			       "CREATE TABLE rollups(id INTEGER PRIMARY KEY, first_id INTEGER NOT NULL,"
			       " last_id INTEGER NOT NULL, t0 REAL NOT NULL, t1 REAL NOT NULL, t REAL NOT NULL,"
			       " wall REAL, pid INTEGER, n INTEGER NOT NULL");
	for (m = 0; m < VT_M_COUNT; m++)
		for (k = 0; recorded(m) && k < ROLLUP_PARTS; k++)
			len += (size_t)snprintf(sql + len, sizeof(sql) - len, ", %s_%s %s", vt_metrics[m].key,
						rollup_parts[k], k == 3 || (k < 2 && metric_is_integer(m))
						? "INTEGER" : "REAL");
	snprintf(sql + len, sizeof(sql) - len, ")");
	return exec(st, sql, err, "creating");
}

static int prepare_rollup_insert(struct vt_store *st, struct vt_err *err)
{
	char sql[ROLLUP_SQL_MAX];
	size_t len;
	int m, k, n = 9;

	len = (size_t)snprintf(sql, sizeof(sql), "INSERT INTO rollups(first_id, last_id, t0, t1, t, wall, pid, n");
	for (m = 0; m < VT_M_COUNT; m++)
		for (k = 0; recorded(m) && k < ROLLUP_PARTS; k++, n++)
			len += (size_t)snprintf(sql + len, sizeof(sql) - len, ", %s_%s", vt_metrics[m].key,
						rollup_parts[k]);
	len += (size_t)snprintf(sql + len, sizeof(sql) - len, ") VALUES(?");
	while (--n > 1)
		len += (size_t)snprintf(sql + len, sizeof(sql) - len, ", ?");
	snprintf(sql + len, sizeof(sql) - len, ")");
	return prepare(st, sql, &st->ins_rollup, err);
}

/* Bind v to column col as metric m's values are stored: NULL when unknown, an integer for counts and bytes. */
static void bind_value(sqlite3_stmt *q, int col, int m, double v)
{
	if (isnan(v))
		sqlite3_bind_null(q, col);
	else if (metric_is_integer(m))
		sqlite3_bind_int64(q, col, (sqlite3_int64)llround(v));
	else
		sqlite3_bind_double(q, col, v);
}

/* Write rollup a, inside the caller's transaction. */
static int write_rollup(struct vt_store *st, const struct vt_point_acc *a, struct vt_err *err)
{
	sqlite3_stmt *q = st->ins_rollup;
	int m, rc, col = 9;

	if (a->count == 0)
		return VT_OK;
	sqlite3_bind_int64(q, 1, a->first_id);
	sqlite3_bind_int64(q, 2, a->last_id);
	sqlite3_bind_double(q, 3, a->t0);
	sqlite3_bind_double(q, 4, a->t1);
	sqlite3_bind_double(q, 5, a->t_sum / a->count);
	sqlite3_bind_double(q, 6, a->wall);
	sqlite3_bind_int64(q, 7, a->pid);
	sqlite3_bind_int64(q, 8, a->count);
	for (m = 0; m < VT_M_COUNT; m++) {
		if (!recorded(m))
			continue;
		bind_value(q, col++, m, a->m[m].lo);
		bind_value(q, col++, m, a->m[m].hi);
		if (isnan(a->m[m].mean))
			sqlite3_bind_null(q, col++);
		else
			sqlite3_bind_double(q, col++, a->m[m].mean);
		sqlite3_bind_int64(q, col++, a->known[m]);
	}
	rc = sqlite3_step(q);
	sqlite3_reset(q);
	sqlite3_clear_bindings(q);
	return rc == SQLITE_DONE ? VT_OK : db_err(st->db, rc, err, st->path, "writing to");
}

static int prepare_inserts(struct vt_store *st, struct vt_err *err)
{
	char sql[2048];
	size_t len;
	int m, rc;

	len = (size_t)snprintf(sql, sizeof(sql), "INSERT INTO samples(t, wall, pid, read_ms");
	for (m = 0; m < VT_M_COUNT; m++)
		if (recorded(m))
			len += (size_t)snprintf(sql + len, sizeof(sql) - len, ", %s", vt_metrics[m].key);
	len += (size_t)snprintf(sql + len, sizeof(sql) - len, ") VALUES(?, ?, ?, ?");
	for (m = 0; m < VT_M_COUNT; m++)
		if (recorded(m))
			len += (size_t)snprintf(sql + len, sizeof(sql) - len, ", ?");
	snprintf(sql + len, sizeof(sql) - len, ")");
	if ((rc = prepare(st, sql, &st->ins_sample, err)) ||
	    (rc = prepare(st, "INSERT INTO events(t, wall, kind, pid, detail) VALUES(?, ?, ?, ?, ?)",
			  &st->ins_event, err)) ||
	    /* first and last sample of each thread are kept here, so that reading
	     * a recording back never scans the per-thread rows */
	    /* what it was doing (states, wchan, syscall) is a running tally the
	     * soak keeps; a row without one (NULL) leaves the last one standing */
	    (rc = prepare(st, "INSERT INTO threads(pid, tid, name, first_sample, last_sample, seen, n_r,"
			      " n_s, n_d, wchan, wchan_n, syscall, syscall_n, timed, untimed, timeout_ms)"
			      " VALUES(?1, ?2, ?3, ?4, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)"
			      " ON CONFLICT(pid, tid) DO UPDATE SET"
			      " name = excluded.name, last_sample = excluded.last_sample,"
			      " seen = coalesce(excluded.seen, seen), n_r = coalesce(excluded.n_r, n_r),"
			      " n_s = coalesce(excluded.n_s, n_s), n_d = coalesce(excluded.n_d, n_d),"
			      " wchan = coalesce(excluded.wchan, wchan),"
			      " wchan_n = coalesce(excluded.wchan_n, wchan_n),"
			      " syscall = coalesce(excluded.syscall, syscall),"
			      " syscall_n = coalesce(excluded.syscall_n, syscall_n),"
			      " timed = coalesce(excluded.timed, timed),"
			      " untimed = coalesce(excluded.untimed, untimed),"
			      " timeout_ms = coalesce(excluded.timeout_ms, timeout_ms)",
			  &st->ins_thread, err)) ||
	    (rc = prepare(st, "INSERT OR REPLACE INTO thread_samples(sample_id, tid, pid, cpu_ns, wait_ns,"
			      " vcsw, nvcsw) VALUES(?, ?, ?, ?, ?, ?, ?)", &st->ins_tsample, err)) ||
	    (rc = prepare_rollup_insert(st, err)))
		return rc;
	return VT_OK;
}

/* ---- meta: struct vt_recording_info as key/value rows ---- */

enum meta_type { META_STR, META_INT, META_DBL, META_BOOL };

/*
 * One meta row: its key, its type and, for numbers, the range a recording
 * can hold.  The file may come from anyone: a value outside these (NULL,
 * a blob, text that is not a number, NaN, a negative interval) is a damaged
 * recording, never a crash or an absurd figure further on.
 */
struct meta_field {
	const char *key;
	enum meta_type type;
	size_t off, size;
	double lo, hi;           /* META_INT, META_DBL: the values allowed */
};

#define META(k, type, member, lo, hi) \
	{ k, type, offsetof(struct vt_recording_info, member), \
	  sizeof(((struct vt_recording_info *)0)->member), lo, hi }
/* 1e9 s is 31 years: longer than any soak; 1e11 s since 1970 is the year 5138 */
static const struct meta_field meta_fields[] = {
	META("vitals_version", META_STR, vitals_version, 0, 0),
	META("target", META_STR, target, 0, 0),
	META("arm", META_STR, arm, 0, 0),
	META("env", META_STR, env, 0, 0),
	META("host", META_STR, host, 0, 0),
	META("ncpus", META_INT, ncpus, -1, 1 << 20),
	META("every_s", META_DBL, every_s, 0, 1e9),
	META("smaps_every_s", META_DBL, smaps_every_s, 0, 1e9),
	META("planned_s", META_DBL, planned_s, 0, 1e9),
	META("started_wall", META_DBL, started_wall, 0, 1e11),
	META("heap", META_BOOL, heap, 0, 1),
	META("redacted", META_INT, redacted, VT_REDACTED_NONE, VT_REDACTED_ARGS),
};
#undef META

static int write_meta(struct vt_store *st, const struct vt_recording_info *info, struct vt_err *err)
{
	sqlite3_stmt *ins;
	char text[64];
	size_t i;
	int rc;

	if ((rc = prepare(st, "INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)", &ins, err)))
		return rc;
	for (i = 0; i < sizeof(meta_fields) / sizeof(meta_fields[0]) && rc == VT_OK; i++) {
		const struct meta_field *f = &meta_fields[i];
		const char *p = (const char *)info + f->off;
		const char *value = text;

		switch (f->type) {
		case META_STR:
			value = p;
			break;
		case META_INT:
			snprintf(text, sizeof(text), "%d", *(const int *)(const void *)p);
			break;
		case META_DBL:
			snprintf(text, sizeof(text), "%.17g", *(const double *)(const void *)p);
			break;
		case META_BOOL:
			snprintf(text, sizeof(text), "%d", *(const bool *)(const void *)p ? 1 : 0);
			break;
		}
		sqlite3_bind_text(ins, 1, f->key, -1, SQLITE_STATIC);
		sqlite3_bind_text(ins, 2, value, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(ins) != SQLITE_DONE)
			rc = db_err(st->db, SQLITE_ERROR, err, st->path, "writing the header of");
		sqlite3_reset(ins);
	}
	sqlite3_bind_text(ins, 1, "format", -1, SQLITE_STATIC);
	sqlite3_bind_text(ins, 2, "vitals-recording", -1, SQLITE_STATIC);
	if (rc == VT_OK && sqlite3_step(ins) != SQLITE_DONE)
		rc = db_err(st->db, SQLITE_ERROR, err, st->path, "writing the header of");
	sqlite3_finalize(ins);
	return rc;
}

/* A number in a meta row: an INTEGER or REAL, or text that is one number and nothing else. */
static bool meta_number(sqlite3_stmt *q, int col, double *out)
{
	const char *text;
	char *end;

	switch (sqlite3_column_type(q, col)) {
	case SQLITE_INTEGER:
	case SQLITE_FLOAT:
		*out = sqlite3_column_double(q, col);
		return true;
	case SQLITE_TEXT:
		text = (const char *)sqlite3_column_text(q, col);
		if (!text || !*text)
			return false;
		errno = 0;
		*out = strtod(text, &end);
		return errno == 0 && end != text && *end == '\0';
	default:
		return false;
	}
}

/*
 * Column col of q into the field key names, checked: VT_OK, or
 * VT_E_RECORDING naming the key and what is wrong with its value.  Keys
 * this vitals does not know are left alone (a newer vitals may add some).
 */
static int read_meta_value(struct vt_recording_info *info, const char *path, const char *key,
			   sqlite3_stmt *q, int col, struct vt_err *err)
{
	const struct meta_field *f = NULL;
	int type = sqlite3_column_type(q, col);   /* before any sqlite3_column_text converts it */
	const char *text;
	double v = 0;
	size_t i;
	char *p;

	for (i = 0; i < sizeof(meta_fields) / sizeof(meta_fields[0]) && !f; i++)
		if (strcmp(meta_fields[i].key, key) == 0)
			f = &meta_fields[i];
	if (!f) {
		if (strcmp(key, "format") != 0)
			return VT_OK;
		text = (const char *)sqlite3_column_text(q, col);
		if (type == SQLITE_TEXT && text && strcmp(text, "vitals-recording") == 0)
			return VT_OK;
		return vt_err_set(err, VT_E_RECORDING, 0, "'%s' is damaged: meta 'format' is not \"vitals-recording\"",
				  path);
	}
	p = (char *)info + f->off;
	if (type == SQLITE_NULL)
		return vt_err_set(err, VT_E_RECORDING, 0, "'%s' is damaged: meta '%s' is NULL", path, f->key);
	switch (f->type) {
	case META_STR:
		text = (const char *)sqlite3_column_text(q, col);
		/* text, and all of it: a NUL inside would hide the rest */
		if (type != SQLITE_TEXT || !text ||
		    strlen(text) != (size_t)sqlite3_column_bytes(q, col))
			return vt_err_set(err, VT_E_RECORDING, 0, "'%s' is damaged: meta '%s' is not text", path,
					  f->key);
		snprintf(p, f->size, "%s", text);
		return VT_OK;
	case META_INT:
	case META_BOOL:
		if (!meta_number(q, col, &v) || v != floor(v) || v < f->lo || v > f->hi)
			return vt_err_set(err, VT_E_RECORDING, 0,
					  "'%s' is damaged: meta '%s' is not a whole number from %.0f to %.0f", path,
					  f->key, f->lo, f->hi);
		if (f->type == META_BOOL)
			*(bool *)(void *)p = v != 0;
		else
			*(int *)(void *)p = v < 0 ? 0 : (int)v;    /* -1: the writer could not tell */
		return VT_OK;
	case META_DBL:
		if (!meta_number(q, col, &v) || !isfinite(v) || v < f->lo || v > f->hi)
			return vt_err_set(err, VT_E_RECORDING, 0,
					  "'%s' is damaged: meta '%s' is not a number from %g to %g", path, f->key,
					  f->lo, f->hi);
		*(double *)(void *)p = v;
		return VT_OK;
	}
	return VT_OK;
}

/* ---- writing ---- */

static void store_free(struct vt_store *st)
{
	sqlite3_finalize(st->ins_sample);
	sqlite3_finalize(st->ins_event);
	sqlite3_finalize(st->ins_thread);
	sqlite3_finalize(st->ins_tsample);
	sqlite3_finalize(st->ins_rollup);
	sqlite3_close(st->db);
	if (st->lock_fd >= 0)
		close(st->lock_fd);      /* and with it the lock */
	free(st);
}

/* The files SQLite keeps beside a database while it is open, or after a crash. */
static const char *const side_suffixes[] = { "-wal", "-shm", "-journal" };

static void remove_side_files(const char *path)
{
	char side[4096 + 16];
	size_t i;

	for (i = 0; i < sizeof(side_suffixes) / sizeof(side_suffixes[0]); i++) {
		snprintf(side, sizeof(side), "%s%s", path, side_suffixes[i]);
		unlink(side);
	}
}

/*
 * The process holding a flock on the file (dev, ino), from /proc/locks
 * ("1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"); 0 when it cannot be told.
 */
static pid_t flock_holder(dev_t dev, ino_t ino)
{
	char line[256], kind[16];
	unsigned maj, min;
	unsigned long long i;
	pid_t found = 0;
	int pid;
	FILE *f = fopen("/proc/locks", "re");

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*d: %15s %*s %*s %d %x:%x:%llu", kind, &pid, &maj, &min, &i) == 5 &&
		    strcmp(kind, "FLOCK") == 0 && maj == major(dev) && min == minor(dev) && i == (unsigned long long)ino)
			found = (pid_t)pid;
	fclose(f);
	return found;
}

/*
 * A soak writing path holds an exclusive flock on it for as long as it
 * runs (flock(2) locks are the file's, apart from the POSIX locks SQLite
 * takes).  VT_OK when no one does (or path is not there); else VT_E_USAGE
 * naming the writer.
 */
static int check_no_writer(const char *path, struct vt_err *err)
{
	struct stat sb;
	pid_t holder;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

	if (fd < 0)
		return VT_OK;
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || flock(fd, LOCK_EX | LOCK_NB) == 0 ||
	    errno != EWOULDBLOCK) {
		close(fd);               /* and the probe's lock with it */
		return VT_OK;
	}
	close(fd);
	holder = flock_holder(sb.st_dev, sb.st_ino);
	if (holder > 0)
		vt_err_set(err, VT_E_USAGE, EBUSY, "'%s' is being written by another vitals soak (process %d)", path,
			   (int)holder);
	else
		vt_err_set(err, VT_E_USAGE, EBUSY, "'%s' is being written by another vitals soak", path);
	vt_err_hint(err, "give another -o, or stop that soak first (--force does not replace a recording being written)");
	return VT_E_USAGE;
}

/* Is path still the file fd was created as?  (Not removed, not replaced.) */
/* 0: path is still the file fd holds; -1: it was removed or replaced; else the errno of a stat that failed. */
static int file_check(const char *path, int fd)
{
	struct stat a, b;

	if (fd < 0)
		return -1;
	if (lstat(path, &a) < 0)
		return errno == ENOENT || errno == ENOTDIR ? -1 : errno;
	if (fstat(fd, &b) < 0)
		return errno;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino ? 0 : -1;
}

static bool still_ours(const char *path, int fd)
{
	return file_check(path, fd) == 0;
}

/* file_check's answer why (not 0) as an error: a stat that failed (out of memory) is said as such. */
static int not_ours(const char *path, int why, int code, const char *what, struct vt_err *err)
{
	if (why > 0)
		return vt_err_set(err, VT_E_IO, why, "cannot check '%s': %s", path, strerror(why));
	return vt_err_set(err, code, 0, "'%s' %s", path, what);
}

/*
 * SQLite's own error for a directory it may not write in names the wrong
 * errno (it retries read-only): ask the directory first.
 */
static int check_writable_dir(const char *path, struct vt_err *err)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	int e;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	if (access(dir, W_OK) == 0)
		return VT_OK;
	e = errno;
	if (e == ENOENT || e == ENOTDIR)
		return vt_err_set(err, VT_E_IO, e, "cannot create '%s': no directory '%s'", path, dir);
	vt_err_set(err, e == EACCES || e == EROFS || e == EPERM ? VT_E_PERM : VT_E_IO, e,
		   "cannot create '%s': %s", path, strerror(e));
	vt_err_hint(err, "choose a path on a writable file system with -o");
	return err ? err->code : VT_E_IO;
}

int vt_store_create(const char *path, const struct vt_recording_info *info, bool overwrite,
		    struct vt_store **out, struct vt_err *err)
{
	struct vt_store *st;
	char sql[160];
	int rc, fd, why;

	*out = NULL;
	if ((rc = check_no_writer(path, err)))
		return rc;
	if ((rc = check_writable_dir(path, err)))
		return rc;
	/* made here, never through a link, and locked before SQLite opens it */
	if ((rc = vt_out_create(path, 0644, overwrite ? VT_OUT_REPLACE : 0, &fd, err))) {
		if (rc == VT_E_USAGE && err && err->sys_errno == EEXIST)
			vt_err_hint(err, "give another -o, or --force to overwrite it");
		return rc;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		/* another soak replaced it and locked the new file first: its file now, not ours */
		close(fd);
		return vt_err_set(err, VT_E_USAGE, EBUSY, "'%s' is being written by another vitals soak", path);
	}
	/* a WAL or journal left beside it belongs to an earlier file: never replay it into this one */
	remove_side_files(path);
	st = calloc(1, sizeof(*st));
	if (!st) {
		close(fd);
		unlink(path);
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
	}
	st->lock_fd = fd;
	snprintf(st->path, sizeof(st->path), "%s", path);
	st->gap_s = vt_series_gap_s(info->every_s);
	vt_point_acc_clear(&st->minute);
	rc = sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK || (why = file_check(path, fd))) {
		rc = rc != SQLITE_OK ? db_err(st->db, rc, err, path, "creating")
				     : not_ours(path, why, VT_E_USAGE, "was replaced while it was being created", err);
		store_free(st);
		return rc;
	}
	sqlite3_busy_timeout(st->db, 2000);
	snprintf(sql, sizeof(sql), "PRAGMA application_id=%d; PRAGMA user_version=%d;",
		 VT_STORE_APP_ID, VT_STORE_SCHEMA);
	/* WAL + synchronous=NORMAL: a crash of vitals loses nothing committed;
	 * a power cut may lose the last few samples, never the file. */
	if ((rc = exec(st, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", err, "creating")) ||
	    (rc = exec(st, "BEGIN", err, "creating")) || (rc = exec(st, sql, err, "creating")) ||
	    (rc = exec(st, schema_sql, err, "creating")) ||
	    (rc = exec(st, vt_store_profile_schema_sql, err, "creating")) || (rc = create_samples_table(st, err)) ||
	    (rc = create_rollups_table(st, err)) ||
	    (rc = write_meta(st, info, err)) || (rc = exec(st, "COMMIT", err, "creating")) ||
	    (rc = prepare_inserts(st, err))) {
		bool ours = still_ours(path, fd);

		store_free(st);
		if (ours) {
			unlink(path);
			remove_side_files(path);
		}
		return rc;
	}
	*out = st;
	return VT_OK;
}

static void bind_u64(sqlite3_stmt *q, int i, uint64_t v)
{
	if (v == VT_NA || v > (uint64_t)INT64_MAX)
		sqlite3_bind_null(q, i);
	else
		sqlite3_bind_int64(q, i, (sqlite3_int64)v);
}

/* Parameters 5..15 of the threads upsert: NULLs when nothing was tallied (the timeout: none seen). */
static void bind_doing(sqlite3_stmt *q, const struct vt_thread_doing *d)
{
	int k;

	if (!d->seen) {
		for (k = 5; k <= 15; k++)
			sqlite3_bind_null(q, k);
		return;
	}
	sqlite3_bind_int64(q, 5, d->seen);
	sqlite3_bind_int64(q, 6, d->n_r);
	sqlite3_bind_int64(q, 7, d->n_s);
	sqlite3_bind_int64(q, 8, d->n_d);
	sqlite3_bind_text(q, 9, d->wchan, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(q, 10, d->wchan_n);
	sqlite3_bind_text(q, 11, d->syscall, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(q, 12, d->syscall_n);
	sqlite3_bind_int64(q, 13, d->timed);
	sqlite3_bind_int64(q, 14, d->untimed);
	if (d->timed && d->timeout_ms >= 0)
		sqlite3_bind_int64(q, 15, d->timeout_ms);
	else
		sqlite3_bind_null(q, 15);
}

static int insert_threads(struct vt_store *st, sqlite3_int64 sample_id, pid_t pid,
			  const struct vt_store_thread *th, size_t n, struct vt_err *err)
{
	size_t i;

	for (i = 0; i < n; i++) {
		sqlite3_bind_int64(st->ins_thread, 1, pid);
		sqlite3_bind_int64(st->ins_thread, 2, th[i].tid);
		sqlite3_bind_text(st->ins_thread, 3, th[i].name ? th[i].name : "", -1, SQLITE_STATIC);
		sqlite3_bind_int64(st->ins_thread, 4, sample_id);
		bind_doing(st->ins_thread, &th[i].doing);
		if (sqlite3_step(st->ins_thread) != SQLITE_DONE)
			return db_err(st->db, SQLITE_ERROR, err, st->path, "writing to");
		sqlite3_reset(st->ins_thread);

		sqlite3_bind_int64(st->ins_tsample, 1, sample_id);
		sqlite3_bind_int64(st->ins_tsample, 2, th[i].tid);
		sqlite3_bind_int64(st->ins_tsample, 3, pid);
		bind_u64(st->ins_tsample, 4, th[i].cpu_ns);
		bind_u64(st->ins_tsample, 5, th[i].wait_ns);
		bind_u64(st->ins_tsample, 6, th[i].vcsw);
		bind_u64(st->ins_tsample, 7, th[i].nvcsw);
		if (sqlite3_step(st->ins_tsample) != SQLITE_DONE)
			return db_err(st->db, SQLITE_ERROR, err, st->path, "writing to");
		sqlite3_reset(st->ins_tsample);
	}
	return VT_OK;
}

int vt_store_append(struct vt_store *st, const struct vt_store_sample *s,
		    const struct vt_store_thread *threads, size_t nthreads, struct vt_err *err)
{
	sqlite3_stmt *q = st->ins_sample;
	sqlite3_int64 id = 0;
	bool minute_done = vt_point_acc_ends(&st->minute, s->t, s->pid, VT_ROLLUP_S, st->gap_s);
	int m, rc, col;

	if ((rc = exec(st, "BEGIN", err, "writing to")))
		return rc;
	sqlite3_bind_double(q, 1, s->t);
	sqlite3_bind_double(q, 2, s->wall);
	sqlite3_bind_int64(q, 3, s->pid);
	sqlite3_bind_double(q, 4, s->read_ms);
	for (m = 0, col = 5; m < VT_M_COUNT; m++)
		if (recorded(m))
			bind_value(q, col++, m, s->v[m]);
	rc = sqlite3_step(q);
	sqlite3_reset(q);
	sqlite3_clear_bindings(q);
	if (rc != SQLITE_DONE) {
		rc = db_err(st->db, rc, err, st->path, "writing to");
	} else {
		id = sqlite3_last_insert_rowid(st->db);
		rc = insert_threads(st, id, s->pid, threads, nthreads, err);
	}
	/* the minute this sample does not belong to is done: its rollup goes in with the sample */
	if (rc == VT_OK && minute_done)
		rc = write_rollup(st, &st->minute, err);
	if (rc == VT_OK)
		rc = exec(st, "COMMIT", err, "writing to");
	if (rc != VT_OK) {
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
		return rc;
	}
	if (minute_done)
		vt_point_acc_clear(&st->minute);
	vt_point_acc_add(&st->minute, id, s->t, s->wall, s->pid, s->v);
	st->samples++;
	return VT_OK;
}

int vt_store_event(struct vt_store *st, const struct vt_event *ev, struct vt_err *err)
{
	sqlite3_stmt *q = st->ins_event;
	int rc;

	sqlite3_bind_double(q, 1, ev->t);
	sqlite3_bind_double(q, 2, ev->wall);
	sqlite3_bind_int(q, 3, (int)ev->kind);
	sqlite3_bind_int64(q, 4, ev->pid);
	sqlite3_bind_text(q, 5, ev->detail, -1, SQLITE_STATIC);
	rc = sqlite3_step(q);
	sqlite3_reset(q);
	return rc == SQLITE_DONE ? VT_OK : db_err(st->db, rc, err, st->path, "writing an event to");
}

uint64_t vt_store_samples(const struct vt_store *st)
{
	return st->samples;
}

uint64_t vt_store_file_bytes(const char *path)
{
	char side[4096 + 8];
	struct stat sb;
	uint64_t total = 0;

	if (stat(path, &sb) == 0)
		total += (uint64_t)sb.st_size;
	snprintf(side, sizeof(side), "%s-wal", path);
	if (stat(side, &sb) == 0)
		total += (uint64_t)sb.st_size;
	return total;
}

uint64_t vt_store_bytes(const struct vt_store *st)
{
	return vt_store_file_bytes(st->path);
}

int vt_store_close(struct vt_store *st, struct vt_err *err)
{
	int rc = VT_OK, ck, why;

	if (!st)
		return VT_OK;
	/*
	 * The last minute's rollup.  Its samples are safe already: if it cannot
	 * be written (a full disk), a reader sums them up itself, as after a kill.
	 */
	if (st->minute.count > 0 && exec(st, "BEGIN", NULL, "closing") == VT_OK &&
	    (write_rollup(st, &st->minute, NULL) != VT_OK || exec(st, "COMMIT", NULL, "closing") != VT_OK))
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	/*
	 * Everything into the one file, and the file back to a rollback
	 * journal: a finished recording then needs no -wal or -shm beside it,
	 * and reads on a read-only mount or as another user.  A reader still
	 * in the file (vitals analyze, meanwhile) keeps the WAL: busy is not an
	 * error, the samples are safe in it and the next writer checkpoints.
	 */
	ck = sqlite3_wal_checkpoint_v2(st->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
	if (ck != SQLITE_OK && ck != SQLITE_BUSY && ck != SQLITE_LOCKED)
		rc = db_err(st->db, ck, err, st->path, "closing");
	else if (ck == SQLITE_OK)
		sqlite3_exec(st->db, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL);
	if (rc == VT_OK && (why = file_check(st->path, st->lock_fd))) {
		rc = not_ours(st->path, why, VT_E_IO, "was removed or replaced while it was being "
			      "written", err);
		if (!err || !err->sys_errno)
			vt_err_hint(err, "the samples went into the file that was there at the start; "
					 "do not remove a recording before its soak ends");
	}
	store_free(st);
	return rc;
}

/* ---- reading ---- */

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
		int rc = write_rollup(ld->rollups_to, a, NULL);

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
		return db_err(db, rc, err, path, "reading");
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
		return db_err(db, rc, err, path, "reading");
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
			bad = read_meta_value(&s->info, path, key, q, 1, err);
	}
	sqlite3_finalize(q);
	if (bad != VT_OK)
		return bad;
	return rc == SQLITE_DONE ? VT_OK : db_err(db, rc, err, path, "reading");
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
		if (!recorded(m) || !has_column(db, "rollups", col))
			continue;
		for (k = 0; k < ROLLUP_PARTS; k++)
			len += (size_t)snprintf(sql + len, sizeof(sql) - len, ", %s_%s", vt_metrics[m].key,
						rollup_parts[k]);
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
	return rc == SQLITE_DONE ? VT_OK : db_err(db, rc, err, path, "reading");
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
		if (!recorded(m) || !has_column(db, "samples", vt_metrics[m].key))
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
			return ld->rollups_to ? db_err(db, SQLITE_ERROR, err, path, "writing to")
					      : vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory reading '%s'", path);
		}
	}
	sqlite3_finalize(q);
	return rc == SQLITE_DONE ? VT_OK : db_err(db, rc, err, path, "reading");
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
		return db_err(db, rc, err, path, "reading");
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
	return rc == SQLITE_DONE ? VT_OK : db_err(db, rc, err, path, "reading");
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
	const char *row_sql =
		"SELECT s.t, ts.cpu_ns, ts.wait_ns, ts.vcsw, ts.nvcsw FROM thread_samples ts"
		" JOIN samples s ON s.id = ts.sample_id WHERE ts.sample_id = ? AND ts.tid = ?";
	bool timed = schema >= 2 && has_column(db, "threads", "timed");
	int rc, k;

	rc = sqlite3_prepare_v2(db, timed
				? "SELECT pid, tid, first_sample, last_sample, name, seen, n_r, n_s, n_d,"
				  " wchan, wchan_n, syscall, syscall_n, timed, untimed, timeout_ms FROM threads"
				: schema >= 2
				? "SELECT pid, tid, first_sample, last_sample, name, seen, n_r, n_s, n_d,"
				  " wchan, wchan_n, syscall, syscall_n FROM threads"
				: "SELECT pid, tid, first_sample, last_sample, name FROM threads", -1, &groups,
				NULL);
	if (rc != SQLITE_OK)
		return db_err(db, rc, err, path, "reading");
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
			if (!counter_delta(row[0], row[1], 1, &tr.cpu_ns))
				tr.cpu_ns = 0;
			if (sqlite3_column_type(row[0], 1) != SQLITE_NULL && sqlite3_column_int64(row[0], 1) > 0)
				tr.cpu_ns_first = (uint64_t)sqlite3_column_int64(row[0], 1);
			tr.wait_known = counter_delta(row[0], row[1], 2, &tr.wait_ns);
			tr.csw_known = counter_delta(row[0], row[1], 3, &tr.vcsw) &&
				       counter_delta(row[0], row[1], 4, &tr.nvcsw);
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
	return rc == SQLITE_DONE ? VT_OK : db_err(db, rc, err, path, "reading");
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
		rc = db_err(db, rc, err, path, "opening");
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
		rc = db_err(db, SQLITE_ERROR, err, path, "reading");
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
		return db_err(db, sqlite3_errcode(db), err, path, "checking");
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
		return db_err(db, rc, err, path, "checking");
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
	if ((rc = check_no_writer(path, err)))
		return rc;
	snprintf(st.path, sizeof(st.path), "%s", path);
	rc = sqlite3_open_v2(path, &st.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, NULL);
	if (rc != SQLITE_OK) {
		rc = db_err(st.db, rc, err, path, "opening");
		goto out;
	}
	sqlite3_busy_timeout(st.db, 2000);
	if ((rc = exec(&st, "BEGIN IMMEDIATE", err, "writing to")) ||
	    (rc = check_identity(st.db, path, &schema, err)) || (rc = load_meta(st.db, path, &meta, err)))
		goto out;
	ld.gap = vt_series_gap_s(meta.info.every_s);
	vt_point_acc_clear(&ld.open);
	if (vt_store_has_table(st.db, "rollups") && (rc = exec(&st, "DROP TABLE rollups", err, "writing to")))
		goto out;
	if ((rc = create_rollups_table(&st, err)) || (rc = prepare_rollup_insert(&st, err)) ||
	    (rc = load_raw(st.db, path, &ld, INT64_MIN, err)))
		goto out;
	if (emit(&ld))
		rc = db_err(st.db, SQLITE_ERROR, err, path, "writing to");
	else if (schema < VT_STORE_SCHEMA) {
		snprintf(sql, sizeof(sql), "PRAGMA user_version=%d", VT_STORE_SCHEMA);
		rc = exec(&st, sql, err, "writing to");
	}
	if (rc == VT_OK)
		rc = exec(&st, "COMMIT", err, "writing to");
out:
	sqlite3_finalize(st.ins_rollup);
	sqlite3_close(st.db);
	vt_series_free(&meta);
	return rc;
}

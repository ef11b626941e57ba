/*
 * store.c — soak recordings in SQLite (see store.h): the schema, and the
 * writer (create, append, events, close).  The meta rows are store_meta.c,
 * the reader store_read.c.
 */
#include "store/store.h"
#include "store/store_internal.h"
#include "base/outfile.h"
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
#include <sys/sysmacros.h>
#include <unistd.h>

static const char *const schema_sql =
	"CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;"
	"CREATE TABLE events(id INTEGER PRIMARY KEY, t REAL, wall REAL, kind INTEGER,"
	" pid INTEGER, detail TEXT);"
	"CREATE TABLE threads(pid INTEGER, tid INTEGER, name TEXT, first_sample INTEGER,"
	" last_sample INTEGER, seen INTEGER, n_r INTEGER, n_s INTEGER, n_d INTEGER, wchan TEXT,"
	" wchan_n INTEGER, syscall TEXT, syscall_n INTEGER, timed INTEGER, untimed INTEGER,"
	" timeout_ms INTEGER, PRIMARY KEY(pid, tid)) WITHOUT ROWID;"
	"CREATE TABLE processes(pid INTEGER, start_ticks INTEGER, started_t REAL, started_wall REAL,"
	" PRIMARY KEY(pid, start_ticks)) WITHOUT ROWID;";

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
		vt_err_hint(err, strcmp(doing, "creating") ? "free space on that file system; the samples already in "
							 "the file are intact"
							 : "free space on that file system, or choose a path on "
							   "another with -o");
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

int vt_store_exec(struct vt_store *st, const char *sql, struct vt_err *err, const char *doing)
{
	int rc = sqlite3_exec(st->db, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? VT_OK : db_err(st->db, rc, err, st->path, doing);
}

int vt_store_prepare(struct vt_store *st, const char *sql, sqlite3_stmt **out, struct vt_err *err)
{
	int rc = sqlite3_prepare_v3(st->db, sql, -1, SQLITE_PREPARE_PERSISTENT, out, NULL);

	return rc == SQLITE_OK ? VT_OK : db_err(st->db, rc, err, st->path, "preparing");
}

bool vt_store_recorded(int m)
{
	return (vt_metrics[m].flags & VT_MF_RECORDED) != 0;
}

bool vt_store_metric_is_integer(int m)
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
		if (vt_store_recorded(m))
			len += (size_t)snprintf(sql + len, sizeof(sql) - len, ", %s %s", vt_metrics[m].key,
						vt_store_metric_is_integer(m) ? "INTEGER" : "REAL");
	snprintf(sql + len, sizeof(sql) - len, ")");
	return vt_store_exec(st, sql, err, "creating");
}

/* thread_samples: a thread's counters at a sample, one column per row of vt_thread_counters. */
static int create_thread_samples_table(struct vt_store *st, struct vt_err *err)
{
	char sql[1024];
	size_t len;
	int k;

	len = (size_t)snprintf(sql, sizeof(sql), "CREATE TABLE thread_samples(sample_id INTEGER, tid INTEGER,"
			       " pid INTEGER");
	for (k = 0; k < VT_TC_COUNT; k++)
		len += (size_t)snprintf(sql + len, sizeof(sql) - len, ", %s INTEGER", vt_thread_counters[k].column);
	snprintf(sql + len, sizeof(sql) - len, ", PRIMARY KEY(sample_id, tid)) WITHOUT ROWID");
	return vt_store_exec(st, sql, err, "creating");
}

/* The rollups' columns of metric m: "<key>_lo", "_hi", "_mean" and "_n" (samples that had it). */
const char *const vt_store_rollup_parts[ROLLUP_PARTS] = { "lo", "hi", "mean", "n" };

int vt_store_create_rollups_table(struct vt_store *st, struct vt_err *err)
{
	char sql[ROLLUP_SQL_MAX];
	size_t len;
	int m, k;

	len = (size_t)snprintf(sql, sizeof(sql),
			       "CREATE TABLE rollups(id INTEGER PRIMARY KEY, first_id INTEGER NOT NULL,"
			       " last_id INTEGER NOT NULL, t0 REAL NOT NULL, t1 REAL NOT NULL, t REAL NOT NULL,"
			       " wall REAL, pid INTEGER, n INTEGER NOT NULL");
	for (m = 0; m < VT_M_COUNT; m++)
		for (k = 0; vt_store_recorded(m) && k < ROLLUP_PARTS; k++)
			len += (size_t)snprintf(sql + len, sizeof(sql) - len, ", %s_%s %s", vt_metrics[m].key,
						vt_store_rollup_parts[k], k == 3 || (k < 2 && vt_store_metric_is_integer(m))
						? "INTEGER" : "REAL");
	snprintf(sql + len, sizeof(sql) - len, ")");
	return vt_store_exec(st, sql, err, "creating");
}

int vt_store_prepare_rollup_insert(struct vt_store *st, struct vt_err *err)
{
	char sql[ROLLUP_SQL_MAX];
	size_t len;
	int m, k, n = 9;

	len = (size_t)snprintf(sql, sizeof(sql), "INSERT INTO rollups(first_id, last_id, t0, t1, t, wall, pid, n");
	for (m = 0; m < VT_M_COUNT; m++)
		for (k = 0; vt_store_recorded(m) && k < ROLLUP_PARTS; k++, n++)
			len += (size_t)snprintf(sql + len, sizeof(sql) - len, ", %s_%s", vt_metrics[m].key,
						vt_store_rollup_parts[k]);
	len += (size_t)snprintf(sql + len, sizeof(sql) - len, ") VALUES(?");
	while (--n > 1)
		len += (size_t)snprintf(sql + len, sizeof(sql) - len, ", ?");
	snprintf(sql + len, sizeof(sql) - len, ")");
	return vt_store_prepare(st, sql, &st->ins_rollup, err);
}

/* Bind v to column col as metric m's values are stored: NULL when unknown, an integer for counts and bytes. */
static void bind_value(sqlite3_stmt *q, int col, int m, double v)
{
	if (isnan(v))
		sqlite3_bind_null(q, col);
	else if (vt_store_metric_is_integer(m))
		sqlite3_bind_int64(q, col, (sqlite3_int64)llround(v));
	else
		sqlite3_bind_double(q, col, v);
}

/* Write rollup a, inside the caller's transaction. */
int vt_store_write_rollup(struct vt_store *st, const struct vt_point_acc *a, struct vt_err *err)
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
		if (!vt_store_recorded(m))
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

static int prepare_thread_sample_insert(struct vt_store *st, struct vt_err *err)
{
	char sql[1024];
	size_t len;
	int k;

	len = (size_t)snprintf(sql, sizeof(sql), "INSERT OR REPLACE INTO thread_samples(sample_id, tid, pid");
	for (k = 0; k < VT_TC_COUNT; k++)
		len += (size_t)snprintf(sql + len, sizeof(sql) - len, ", %s", vt_thread_counters[k].column);
	len += (size_t)snprintf(sql + len, sizeof(sql) - len, ") VALUES(?, ?, ?");
	for (k = 0; k < VT_TC_COUNT; k++)
		len += (size_t)snprintf(sql + len, sizeof(sql) - len, ", ?");
	snprintf(sql + len, sizeof(sql) - len, ")");
	return vt_store_prepare(st, sql, &st->ins_tsample, err);
}

static int prepare_inserts(struct vt_store *st, struct vt_err *err)
{
	char sql[2048];
	size_t len;
	int m, rc;

	len = (size_t)snprintf(sql, sizeof(sql), "INSERT INTO samples(t, wall, pid, read_ms");
	for (m = 0; m < VT_M_COUNT; m++)
		if (vt_store_recorded(m))
			len += (size_t)snprintf(sql + len, sizeof(sql) - len, ", %s", vt_metrics[m].key);
	len += (size_t)snprintf(sql + len, sizeof(sql) - len, ") VALUES(?, ?, ?, ?");
	for (m = 0; m < VT_M_COUNT; m++)
		if (vt_store_recorded(m))
			len += (size_t)snprintf(sql + len, sizeof(sql) - len, ", ?");
	snprintf(sql + len, sizeof(sql) - len, ")");
	if ((rc = vt_store_prepare(st, sql, &st->ins_sample, err)) ||
	    (rc = vt_store_prepare(st, "INSERT INTO events(t, wall, kind, pid, detail) VALUES(?, ?, ?, ?, ?)",
			  &st->ins_event, err)) ||
	    (rc = vt_store_prepare(st, "INSERT OR IGNORE INTO processes(pid, start_ticks, started_t, started_wall)"
			      " VALUES(?, ?, ?, ?)", &st->ins_process, err)) ||
	    /* first and last sample of each thread are kept here, so that reading
	     * a recording back never scans the per-thread rows */
	    /* what it was doing (states, wchan, syscall) is a running tally the
	     * soak keeps; a row without one (NULL) leaves the last one standing */
	    (rc = vt_store_prepare(st, "INSERT INTO threads(pid, tid, name, first_sample, last_sample, seen, n_r,"
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
	    (rc = prepare_thread_sample_insert(st, err)) ||
	    (rc = vt_store_prepare_rollup_insert(st, err)))
		return rc;
	return VT_OK;
}

/* ---- writing ---- */

static void store_free(struct vt_store *st)
{
	sqlite3_finalize(st->ins_sample);
	sqlite3_finalize(st->ins_event);
	sqlite3_finalize(st->ins_process);
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
int vt_store_check_no_writer(const char *path, struct vt_err *err)
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
	int e;

	(void)vt_out_dir(path, dir, sizeof(dir));   /* longer than PATH_MAX: access says so */
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
	if ((rc = vt_sqlite_load(err)))
		return rc;
	if ((rc = vt_store_check_no_writer(path, err)))
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
	if ((rc = vt_store_exec(st, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", err, "creating")) ||
	    (rc = vt_store_exec(st, "BEGIN", err, "creating")) || (rc = vt_store_exec(st, sql, err, "creating")) ||
	    (rc = vt_store_exec(st, schema_sql, err, "creating")) ||
	    (rc = vt_store_exec(st, vt_store_profile_schema_sql, err, "creating")) ||
	    (rc = vt_store_exec(st, vt_store_lock_schema_sql, err, "creating")) ||
	    (rc = vt_store_exec(st, vt_store_alloc_schema_sql, err, "creating")) || (rc = create_samples_table(st, err)) ||
	    (rc = create_thread_samples_table(st, err)) ||
	    (rc = vt_store_create_rollups_table(st, err)) ||
	    (rc = vt_store_write_meta(st, info, err)) || (rc = vt_store_exec(st, "COMMIT", err, "creating")) ||
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

int vt_store_prepare_on(sqlite3 *db, const char *path, const char *sql, sqlite3_stmt **q, struct vt_err *err)
{
	int rc = sqlite3_prepare_v2(db, sql, -1, q, NULL);

	return rc == SQLITE_OK ? VT_OK : vt_store_db_err(db, rc, err, path, "preparing");
}

int vt_store_insert_step(sqlite3 *db, const char *path, sqlite3_stmt *q, const char *doing, struct vt_err *err)
{
	int rc = sqlite3_step(q);

	sqlite3_reset(q);
	sqlite3_clear_bindings(q);
	return rc == SQLITE_DONE ? VT_OK : vt_store_db_err(db, rc, err, path, doing);
}

void vt_store_bind_count(sqlite3_stmt *q, int i, uint64_t v)
{
	sqlite3_bind_int64(q, i, v > (uint64_t)INT64_MAX ? INT64_MAX : (sqlite3_int64)v);
}

int vt_store_damaged(struct vt_err *err, const char *path, const char *thing, long long id, const char *fmt,
		     va_list ap)
{
	char what[160];

	vsnprintf(what, sizeof(what), fmt, ap);
	return vt_err_set(err, VT_E_RECORDING, 0, "'%s': %s %lld is damaged: %s", path, thing, id, what);
}

bool vt_store_col_count(sqlite3_stmt *q, int i, uint64_t max, uint64_t *v)
{
	sqlite3_int64 x;

	if (sqlite3_column_type(q, i) != SQLITE_INTEGER)
		return false;
	x = sqlite3_column_int64(q, i);
	if (x < 0 || (uint64_t)x > max)
		return false;
	*v = (uint64_t)x;
	return true;
}

void vt_store_col_text(sqlite3_stmt *q, int i, char *out, size_t cap)
{
	const unsigned char *s = sqlite3_column_text(q, i);

	snprintf(out, cap, "%s", s ? (const char *)s : "");
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
	int k;

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
		for (k = 0; k < VT_TC_COUNT; k++)
			bind_u64(st->ins_tsample, 4 + k, th[i].counter[k]);
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

	if ((rc = vt_store_exec(st, "BEGIN", err, "writing to")))
		return rc;
	sqlite3_bind_double(q, 1, s->t);
	sqlite3_bind_double(q, 2, s->wall);
	sqlite3_bind_int64(q, 3, s->pid);
	sqlite3_bind_double(q, 4, s->read_ms);
	for (m = 0, col = 5; m < VT_M_COUNT; m++)
		if (vt_store_recorded(m))
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
		rc = vt_store_write_rollup(st, &st->minute, err);
	if (rc == VT_OK)
		rc = vt_store_exec(st, "COMMIT", err, "writing to");
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

int vt_store_process(struct vt_store *st, const struct vt_process_start *p, struct vt_err *err)
{
	sqlite3_stmt *q = st->ins_process;
	int rc;

	sqlite3_bind_int64(q, 1, p->pid);
	sqlite3_bind_int64(q, 2, (sqlite3_int64)p->start_ticks);
	sqlite3_bind_double(q, 3, p->started_t);
	if (isfinite(p->started_wall))
		sqlite3_bind_double(q, 4, p->started_wall);
	else
		sqlite3_bind_null(q, 4);
	rc = sqlite3_step(q);
	sqlite3_reset(q);
	return rc == SQLITE_DONE ? VT_OK : db_err(st->db, rc, err, st->path, "writing a process to");
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
	if (st->minute.count > 0 && vt_store_exec(st, "BEGIN", NULL, "closing") == VT_OK &&
	    (vt_store_write_rollup(st, &st->minute, NULL) != VT_OK || vt_store_exec(st, "COMMIT", NULL, "closing") != VT_OK))
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

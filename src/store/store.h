/*
 * store.h — a soak recording on disk: one SQLite file, the only code in
 * vitals that sees SQLite.
 *
 * Durability: the file is in WAL mode and every sample is one transaction,
 * so a vitals killed with -9 loses at most the sample it was taking and
 * the file opens and analyses afterwards.  A recording can be read while it
 * is being written (WAL readers do not block the writer).  When the writer
 * closes it, it is checkpointed and returned to a rollback journal: a
 * finished recording is one file.
 *
 * Identity: PRAGMA application_id is 'VTLS' and PRAGMA user_version the
 * schema; meta holds the recording's struct vt_recording_info.  A file
 * that is not SQLite, a SQLite file of something else and a recording of a
 * newer schema are each VT_E_RECORDING with a message that says which.
 *
 * Layout (schema 7):
 *   meta(key PRIMARY KEY, value)
 *   samples(id INTEGER PRIMARY KEY, t, wall, pid, read_ms, <one column per vt_metric key>)
 *   rollups(id INTEGER PRIMARY KEY, first_id, last_id, t0, t1, t, wall, pid, n,
 *           <key>_lo, <key>_hi, <key>_mean, <key>_n for each metric)
 *           the samples first_id..last_id (n of them, one process, no gap, at
 *           most a minute) summed up: each metric's low, high (a counter's
 *           first and last value), mean, and how many samples had it; written
 *           as the next minute begins, so a reader sums up the samples after
 *           the last one itself (store/rollup.h; schema 4: older files, without
 *           them, load from their samples)
 *   events(id, t, wall, kind, pid, detail)
 *   processes(pid, start_ticks, started_t, started_wall, PRIMARY KEY(pid, start_ticks))
 *           each process the soak sampled (an incarnation) and when it started:
 *           stat (22), and that moment in the soak's seconds (negative: before
 *           the soak began) and in unix time (schema 7; older files, without
 *           it, load with none: an incarnation's age is then counted from its
 *           first sample; so do older files whose rollups a rebuild brought to
 *           schema 7)
 *   threads(pid, tid, name, first_sample, last_sample, seen, n_r, n_s, n_d, wchan, wchan_n,
 *           syscall, syscall_n, timed, untimed, timeout_ms, PRIMARY KEY(pid, tid))
 *           seen..syscall_n: what the thread was doing when its state, wchan and
 *           system call were sampled (at the threads cadence): samples, how
 *           many in R, S, D, the most frequent wchan and system call and how
 *           often each was seen (schema 2; schema 1 files, without them, load);
 *           timed, untimed: of those samples, in a wait with a timeout
 *           argument and with none, timeout_ms the median timeout (NULL when
 *           none was timed): what `vitals threads` tells a poll's timeout from
 *           events by (files without the columns load with them unknown)
 *   thread_samples(sample_id, tid, pid, <one column per vt_thread_counters row: cpu_ns, wait_ns,
 *           vcsw, nvcsw>, PRIMARY KEY(sample_id, tid))
 *   profiles, profile_strings, profile_funcs, profile_locs, profile_stacks, profile_threads,
 *   profile_modules: the profiles a soak took (schema 3; store/profile_store.h; schema 1
 *           and 2 files, without them, load with none)
 *   lock_looks, lock_rows, lock_threads, lock_sites: the locks its threads waited on, looked
 *           at at the threads cadence (schema 5; store/lock_store.h; older files, without
 *           them, load with none)
 *   alloc_profiles, alloc_sites: the allocation profiles a soak took (schema 6;
 *           store/alloc_store.h; older files, without them, load with none)
 * Unknown figures are NULL.
 */
#ifndef VT_STORE_STORE_H
#define VT_STORE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/error.h"
#include "sample/series.h"

#define VT_STORE_SCHEMA 7

struct vt_store;

/* One row of samples.  v[] is NAN where unknown. */
struct vt_store_sample {
	double t;                /* seconds since the soak began (monotonic) */
	double wall;             /* unix time */
	pid_t pid;
	double read_ms;          /* what taking it cost vitals */
	double v[VT_M_COUNT];
};

/* One thread's cumulative counters at a sample; VT_NA where unknown. */
struct vt_store_thread {
	pid_t tid;
	const char *name;
	uint64_t counter[VT_TC_COUNT];  /* sample/thread_metric.h; VT_NA unknown */
	struct vt_thread_doing doing;   /* tally so far; seen 0: none (the last one stands) */
};

/*
 * Create path as a new recording described by info.  The file is made by
 * vitals (O_EXCL, never through a symbolic link; see base/outfile.h) and
 * flock'ed until vt_store_close: a second writer is refused (VT_E_USAGE,
 * naming the process that writes it), even with overwrite.  Otherwise an
 * existing file is refused (VT_E_USAGE) unless overwrite, which unlinks it
 * (and a WAL left beside it) first.  A path that cannot be written
 * (read-only file system, no such directory, permission) is VT_E_IO or
 * VT_E_PERM with the reason.
 */
int vt_store_create(const char *path, const struct vt_recording_info *info, bool overwrite,
		    struct vt_store **out, struct vt_err *err);

/*
 * Append one sample and, when threads is not NULL, its threads' counters,
 * in one transaction.  A full disk is VT_E_IO ("disk full"); the recording
 * keeps every sample before it.
 */
int vt_store_append(struct vt_store *st, const struct vt_store_sample *s,
		    const struct vt_store_thread *threads, size_t nthreads, struct vt_err *err);

/* Record an event (its own transaction). */
int vt_store_event(struct vt_store *st, const struct vt_event *ev, struct vt_err *err);

/* Record a process the soak samples and its start (its own transaction; once per pid and start). */
int vt_store_process(struct vt_store *st, const struct vt_process_start *p, struct vt_err *err);

/* Samples appended so far. */
uint64_t vt_store_samples(const struct vt_store *st);
/* Bytes the file (and its WAL) take on disk now. */
uint64_t vt_store_bytes(const struct vt_store *st);
/* The same for the recording at path (its WAL counted while there is one). */
uint64_t vt_store_file_bytes(const char *path);

/*
 * Close: checkpoint the WAL into the file and return the file to a rollback
 * journal, so that a finished recording is one file that reads anywhere (a
 * reader still in it keeps the WAL, which is no error).  A NULL st is a
 * no-op.  Returns the first error of the final checkpoint, or VT_E_IO when
 * the file was removed or replaced meanwhile (its samples are not there).
 */
int vt_store_close(struct vt_store *st, struct vt_err *err);

/*
 * Read a recording into *out (vt_series_init'ed by the caller; released
 * with vt_series_free), summarised into at most about max_points points
 * (0: VT_SERIES_MAX_POINTS).  Points a minute wide or more are built from
 * the rollups where the file has them (out->info.rollups says how many;
 * rollups that cannot be what vitals wrote are passed over for the samples,
 * out->info.rollups_damaged).  Works on a recording still being written.
 * The file is opened for reading only and never changed: one on a
 * read-only mount or owned by another user reads too.  Where SQLite cannot
 * make the -shm a WAL needs, the file is read without its WAL
 * (out->info.wal_unread), or, when everything is still in the WAL,
 * refused (VT_E_PERM, saying so).  Meta values of the wrong type or out of
 * range are VT_E_RECORDING naming the key.
 */
int vt_store_load(const char *path, size_t max_points, struct vt_series *out, struct vt_err *err);

/*
 * Write the rollups of the recording at path afresh from its samples,
 * exactly as a soak writes them as it goes: for a file made before
 * schema 4 (it becomes schema 4) or loaded in bulk (bench/soak_gen.c).  One
 * transaction: it fails whole (VT_E_IO on a full disk) or succeeds whole.
 * Not for a recording a soak still writes.
 */
int vt_store_rebuild_rollups(const char *path, struct vt_err *err);

#endif

/*
 * profile_store.h — the profiles a soak takes (vitals soak --profile-every),
 * kept in its recording beside the samples, and read back whole.
 *
 * A profile (sample/profile.h) is stored relationally, one row per entry
 * of each of its tables, so that a recording stays one SQLite file any
 * sqlite3 shell can query:
 *   profiles(id, t, wall, pid, partial, comm, method, hz, duration_s, wall_mode, wall_hz,
 *            samples, lost, unwind_failed, kernel_symbols, exited, process_cpu_s,
 *            self_cpu_s, overhead, overhead_how, nstrings, nfuncs, nlocs, nstacks,
 *            nthreads, nmodules)
 *   profile_strings(profile_id, idx, s)
 *   profile_funcs(profile_id, idx, name, module, system_name, file, line)
 *   profile_locs(profile_id, idx, pc, module_off, func, kernel, file, line, inlined_into)
 *   profile_stacks(profile_id, idx, thread, state, wait, count, truncated, locs)
 *   profile_threads(profile_id, idx, tid, name, pool, cpu_s, samples)
 *   profile_modules(profile_id, idx, name, path, symbols, frames, lines, debug_file,
 *                   debug_ignored, debug_ignored_why)
 * idx is the entry's index in the profile (strings[0] is ""); a stack's
 * locs is a BLOB of uint32 little-endian location indices, leaf first; a
 * module's frames a BLOB of uint64 little-endian counts by unwind method;
 * pc is the address's 64 bits as a signed integer (kernel addresses read
 * negative in SQL).  Unknown figures (CPU < 0, overhead NaN) are NULL.
 * The tables came with recording schema 3; an older recording has none and
 * holds no profiles.
 *
 * Each profile is written in one transaction: a soak killed while writing
 * one leaves the recording without it, never with half of it.
 *
 * Reading trusts nothing: a recording may come from anyone.  Every index
 * is checked against its table, every table against the count its
 * profiles row gives, every BLOB's length and every depth; a damaged
 * profile is VT_E_RECORDING saying which profile and what is wrong, never
 * a crash or a profile that points outside itself.
 */
#ifndef VT_STORE_PROFILE_STORE_H
#define VT_STORE_PROFILE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/error.h"
#include "sample/profile.h"
#include "store/store.h"

/* Longest string a stored profile may hold (a demangled C++ name is long; this is absurd). */
#define VT_STORE_PROFILE_STR_MAX 65536
/* Most entries a stored profile's table may hold. */
#define VT_STORE_PROFILE_ROWS_MAX (1u << 24)

/* A stored profile as listed: where it sits in the soak. */
struct vt_store_profile {
	int64_t id;               /* its row in profiles */
	double t;                 /* when it began, seconds since the soak began (the samples' t) */
	double wall;              /* when it began, unix time */
	double duration_s;        /* how long it sampled */
	pid_t pid;                /* the process profiled */
	bool partial;             /* cut short: the soak ended while it was being taken */
	bool exited;              /* the process exited while it was being taken */
	uint64_t samples;         /* samples in it, all states */
};

/*
 * Append profile p to the recording, taken from at->t (at->wall) and
 * marked at->partial (the other fields of *at are ignored: they are p's).
 * One transaction; *id (may be NULL) gets its row.  Errors as
 * vt_store_append (VT_E_IO "disk full": the recording keeps everything
 * before it, without this profile).
 */
int vt_store_profile_append(struct vt_store *st, const struct vt_store_profile *at,
			    const struct vt_profile *p, int64_t *id, struct vt_err *err);

/* A recording open for reading its profiles (one read transaction: a soak writing meanwhile
 * adds none to this view). */
struct vt_store_profiles;

/*
 * Open path and list its profiles in the order they were taken.  A
 * recording of schema 1 or 2 (no profile tables) opens with none.  Errors
 * as vt_store_load, and VT_E_RECORDING when a profiles row is damaged.
 */
int vt_store_profiles_open(const char *path, struct vt_store_profiles **out, struct vt_err *err);
void vt_store_profiles_close(struct vt_store_profiles **r);

size_t vt_store_profiles_count(const struct vt_store_profiles *r);
/* The i-th profile as listed (i < count), owned by r. */
const struct vt_store_profile *vt_store_profiles_at(const struct vt_store_profiles *r, size_t i);

/*
 * Read the i-th profile whole into *out (the caller's: vt_profile_free).
 * VT_E_RECORDING naming the profile and what is wrong; VT_E_NOMEM;
 * VT_E_IO for a read error.  Nothing in *out on error.
 */
int vt_store_profiles_read(struct vt_store_profiles *r, size_t i, struct vt_profile **out,
			   struct vt_err *err);

#endif

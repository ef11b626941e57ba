/*
 * lock_store.h — the locks a soak's threads waited on (sample/locks.h),
 * kept in its recording and read back as one count per process, with how
 * the waiting changed from the first half of the soak to the second.
 *
 * A soak looks at the locks at the threads cadence (the samples that read
 * every thread's system call): each look is the struct vt_locks of that one
 * sample, stored relationally so that a recording stays one SQLite file
 * any sqlite3 shell can query (schema 5):
 *   lock_looks(id INTEGER PRIMARY KEY, t, pid, samples, thread_samples, futex_waits,
 *              untracked, unwinds, unwinds_skipped, syscall_unread, syscall_why,
 *              stacks_why, arenas_why, narenas)
 *   lock_rows(look_id, idx, addr, kind, kind_votes BLOB, layout_votes, place, arena,
 *             narenas, symbol, symbol_off, module, stack_tid, mapping, python_gil,
 *             users_more, users_why, samples, waits, peak, sites_other, sites_unknown,
 *             owner_reads, owner_free, owner_foreign, foreign_tid, readers, readers_sum,
 *             holder_why, layout_why, chunk, chunk_size, chunk_why, rust_std)
 *   lock_threads(look_id, idx, role, tid, comm, n, running)
 *             role 0: a waiter, 1: a holder, 2: a user of the arena
 *   lock_sites(look_id, idx, site, n)
 * idx is the row's index in its look; kind and place are the numbers of
 * enum vt_lock_kind and enum vt_lock_place; kind_votes a BLOB of
 * VT_LOCK_KINDS uint32 little-endian counts; addr the address's 64 bits as
 * a signed integer.  A look is written in one transaction after its sample.
 * Older recordings (schema 4 and before) have no lock tables and hold no
 * looks, which is said.
 *
 * Reading trusts nothing: every kind, place, count and string is checked
 * (a count larger than its look's samples, a thread table past its size, a
 * row index past VT_LOCKS_MAX), and a damaged look is VT_E_RECORDING that
 * says which look and what is wrong.
 */
#ifndef VT_STORE_LOCK_STORE_H
#define VT_STORE_LOCK_STORE_H

#include <stddef.h>
#include <sys/types.h>

#include "base/error.h"
#include "sample/locks.h"
#include "store/store.h"

/*
 * Append look (the locks of one sample of the soak's process) taken at t,
 * seconds since the soak began (the samples' t).  One transaction.  Errors
 * as vt_store_append.
 */
int vt_store_locks_append(struct vt_store *st, double t, const struct vt_locks *look, struct vt_err *err);

/*
 * Read the looks at process pid's locks in recording path into *out.  No
 * look (a recording made before schema 5, a soak that read no system
 * calls) is VT_OK with looks 0 and why saying so.  Errors: VT_E_RECORDING
 * (damaged), those of vt_store_load opening it, VT_E_NOMEM.  Release with
 * vt_lock_history_release (sample/locks.h), whatever it returned.
 */
int vt_store_locks_load(const char *path, pid_t pid, struct vt_lock_history *out, struct vt_err *err);

#endif

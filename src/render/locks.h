/*
 * locks.h (render) — the locks a process's threads waited on (sample/locks.h)
 * as text and as JSON ("vitals.locks" v1, docs/json.md), and the words that
 * say what a lock is and what waiting on it means, which `vitals threads`
 * uses for the lock its convoy verdict names.
 *
 * Figures over the samples: WAITING is the threads waiting on it on
 * average, which is thread-seconds of waiting per second; SHARE is that
 * over the process's threads (the share of its thread time spent waiting
 * there); holders are shares of the samples whose owner field was read.
 * Return 0, or -1 when the output could not be written.
 */
#ifndef VT_RENDER_LOCKS_H
#define VT_RENDER_LOCKS_H

#include <stdbool.h>
#include <stdio.h>

#include "base/json_lib.h"

#include "sample/locks.h"

/* "arena 2 of 8", "convoy_lock (lock_convoy)", "the Python GIL (_PyRuntime+0x1a8, python3.11)", ... */
const char *vt_render_lock_what(const struct vt_lock *k, char *buf, size_t cap);
/* What waiting on it means and the lever: "allocator contention: ...". */
const char *vt_render_lock_meaning(const struct vt_lock *k, char *buf, size_t cap);
/* "worker-2 (1236) 61%, worker-0 (1234) 20%", "free when read (a handoff)", "not known: why";
 * at most max threads named (0: all), the others as one share. */
const char *vt_render_lock_holders(const struct vt_lock *k, size_t max, char *buf, size_t cap);

/* Waiters on average over the samples: thread-seconds waiting per second. */
double vt_lock_waiting(const struct vt_locks *l, const struct vt_lock *k);

/* The table alone, the max_locks most waited-on (0: all), indented by 2; threads prints it too. */
void vt_render_locks_table(FILE *out, const struct vt_locks *l, size_t max_locks);
int vt_render_locks_text(FILE *out, const struct vt_locks *l, size_t max_locks);
json_t *vt_render_locks_json_value(const struct vt_locks *l);

/*
 * The locks over a soak (analyze): the table of all its looks, then each
 * lock's waiting in the first half of the looks and in the second, and the
 * top lock's account (holders, call sites).  Text: nothing when h is NULL;
 * a line saying why when it has no looks.
 */
void vt_render_lock_history_text(FILE *out, const struct vt_lock_history *h, size_t max_locks);
/* {"looks", "t_first", "t_split", "t_last", "why", "locks": as vitals.locks, "halves": [...]}. */
json_t *vt_render_lock_history_json(const struct vt_lock_history *h);
int vt_render_locks_json(FILE *out, const struct vt_locks *l, bool compact);

#endif

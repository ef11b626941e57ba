/*
 * arena_threads.h (render) — the THREADS column of the per-arena tables of
 * vitals heap and vitals census, in words and in JSON, from the one model
 * (sample/arena_threads.h): each view prints what the model holds and
 * computes nothing.
 */
#ifndef VT_RENDER_ARENA_THREADS_H
#define VT_RENDER_ARENA_THREADS_H

#include <stddef.h>

#include "base/json_lib.h"

#include "sample/arena_threads.h"

#define VT_ARENA_THREADS_LINE_MAX 512   /* holds any note */
#define VT_ARENA_THREADS_NAMES 2        /* threads named in a text cell before "+N" */

/* The count of arena i's threads ("3"), or "?" when the map is not known or the arena is
 * later than it; buf of cap bytes. */
const char *vt_render_arena_threads_count(const struct vt_arena_threads *t, size_t i, char *buf, size_t cap);
/* The count of all the threads on an arena, for a total row; "?" when not known. */
const char *vt_render_arena_threads_total(const struct vt_arena_threads *t, char *buf, size_t cap);
/*
 * Arena i's threads named, the first VT_ARENA_THREADS_NAMES as "name (tid)",
 * then "+N" ("worker-1 (1235), worker-2 (1236) +6"); "" when none or not known.
 */
const char *vt_render_arena_threads_names(const struct vt_arena_threads *t, size_t i, char *buf, size_t cap);
/*
 * The one line under a table that says what THREADS is, or why it is "?",
 * and how many threads have not allocated yet or could not be placed; ""
 * when the map was not asked for.  No newline.
 */
const char *vt_render_arena_threads_note(const struct vt_arena_threads *t, char *buf, size_t cap);

/* Arena i's threads as [{"tid", "name"}], json_null() when the map is not known or the
 * arena is later than it. */
json_t *vt_json_arena_threads_of(const struct vt_arena_threads *t, size_t i);
/*
 * The map as a whole: {"known", "why", "threads" (listed), "on_arenas",
 * "not_allocated": [...], "unknown": [...], "later_arenas"}; json_null()
 * when it was not asked for.
 */
json_t *vt_json_arena_threads(const struct vt_arena_threads *t);

#endif

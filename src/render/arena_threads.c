/*
 * arena_threads.c — the THREADS column in words and in JSON (see arena_threads.h).
 */
#include "render/arena_threads.h"
#include "render/json.h"
#include "render/table.h"

#include <stdio.h>
#include <string.h>

#define NOTE_NAMES 3             /* threads named in the note, per kind, before "..." */

static bool asked(const struct vt_arena_threads *t)
{
	return t->known || t->why[0];
}

const char *vt_render_arena_threads_count(const struct vt_arena_threads *t, size_t i, char *buf, size_t cap)
{
	if (!t->known || i >= t->narenas || t->arenas[i].later)
		snprintf(buf, cap, "?");
	else
		snprintf(buf, cap, "%zu", t->arenas[i].n);
	return buf;
}

const char *vt_render_arena_threads_total(const struct vt_arena_threads *t, char *buf, size_t cap)
{
	if (!t->known)
		snprintf(buf, cap, "?");
	else
		snprintf(buf, cap, "%zu", t->on_arenas);
	return buf;
}

/* "name (tid)" for the first max of u's threads, ", " between, then " +N" for the rest. */
static void name_list(const struct vt_arena_threads *t, const struct vt_arena_users *u, size_t max, char *buf,
		      size_t cap)
{
	size_t i, at = 0;
	char comm[64];

	buf[0] = 0;
	for (i = 0; i < u->n && i < max && at < cap; i++) {
		const struct vt_arena_thread *x = &t->threads[u->first + i];

		at += (size_t)snprintf(buf + at, cap - at, "%s%s (%d)", i ? ", " : "",
				       x->comm[0] ? vt_text_printable(x->comm, comm, sizeof(comm)) : "?", (int)x->tid);
	}
	if (u->n > max && at < cap)
		snprintf(buf + at, cap - at, " +%zu", u->n - max);
}

const char *vt_render_arena_threads_names(const struct vt_arena_threads *t, size_t i, char *buf, size_t cap)
{
	buf[0] = 0;
	if (t->known && i < t->narenas)
		name_list(t, &t->arenas[i], VT_ARENA_THREADS_NAMES, buf, cap);
	return buf;
}

const char *vt_render_arena_threads_note(const struct vt_arena_threads *t, char *buf, size_t cap)
{
	char why[sizeof(t->why)], names[256];
	size_t at;

	buf[0] = 0;
	if (!asked(t))
		return buf;
	if (!t->known) {
		snprintf(buf, cap, "THREADS ?: which arena each thread uses is not known: %s",
			 vt_text_printable(t->why, why, sizeof(why)));
		return buf;
	}
	at = (size_t)snprintf(buf, cap, "THREADS: how many of its %zu thread%s allocate from that arena (glibc's "
			      "thread_arena, read from each thread's memory; none stopped)", t->nthreads,
			      t->nthreads == 1 ? "" : "s");
	if (t->none.n && at < cap) {
		name_list(t, &t->none, NOTE_NAMES, names, sizeof(names));
		at += (size_t)snprintf(buf + at, cap - at, "; %zu %s not allocated yet: %s", t->none.n,
				       t->none.n == 1 ? "has" : "have", names);
	}
	if (t->unknown.n && at < cap) {
		name_list(t, &t->unknown, NOTE_NAMES, names, sizeof(names));
		at += (size_t)snprintf(buf + at, cap - at, "; %zu whose arena could not be told: %s", t->unknown.n,
				       names);
	}
	if (t->later && at < cap)
		snprintf(buf + at, cap - at, "; ? on %zu arena%s made after the threads were read", t->later,
			 t->later == 1 ? "" : "s");
	return buf;
}

static json_t *users_json(const struct vt_arena_threads *t, const struct vt_arena_users *u)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && i < u->n; i++) {
		const struct vt_arena_thread *x = &t->threads[u->first + i];

		json_array_append_new(a, json_pack("{s:i, s:o}", "tid", (int)x->tid, "name", vt_json_text(x->comm)));
	}
	return a;
}

json_t *vt_json_arena_threads_of(const struct vt_arena_threads *t, size_t i)
{
	if (!t->known || i >= t->narenas || t->arenas[i].later)
		return json_null();
	return users_json(t, &t->arenas[i]);
}

json_t *vt_json_arena_threads(const struct vt_arena_threads *t)
{
	if (!asked(t))
		return json_null();
	if (!t->known)
		return json_pack("{s:b, s:o, s:n, s:n, s:n, s:n, s:n}", "known", 0, "why", vt_json_text(t->why),
				 "threads", "on_arenas", "not_allocated", "unknown", "later_arenas");
	return json_pack("{s:b, s:n, s:I, s:I, s:o, s:o, s:I}", "known", 1, "why", "threads", (json_int_t)t->nthreads,
			 "on_arenas", (json_int_t)t->on_arenas, "not_allocated", users_json(t, &t->none), "unknown",
			 users_json(t, &t->unknown), "later_arenas", (json_int_t)t->later);
}

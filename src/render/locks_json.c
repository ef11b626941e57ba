/*
 * locks_json.c — `vitals locks --json`, schema "vitals.locks" version 1
 * (docs/json.md); the same object is the "locks" member of vitals.threads.
 *
 * Shares are fractions (0..1); "waiting" is threads on average, which is
 * thread-seconds of waiting per second.  Unknown figures are null, and a
 * "why" says what could not be read.
 */
#include "render/locks.h"
#include "render/json.h"
#include "base/json_lib.h"

#include <inttypes.h>
#include <string.h>

static const char *const place_keys[] = {
	[VT_LOCK_AT_UNKNOWN] = "unmapped", [VT_LOCK_AT_ARENA] = "malloc_arena",
	[VT_LOCK_AT_SYMBOL] = "symbol", [VT_LOCK_AT_STACK] = "stack",
	[VT_LOCK_AT_SHARED] = "shared", [VT_LOCK_AT_FILE] = "file", [VT_LOCK_AT_HEAP] = "heap",
};

static const char *const kind_keys[VT_LOCK_KINDS] = {
	[VT_LOCK_RAW] = "raw", [VT_LOCK_MUTEX] = "mutex", [VT_LOCK_RWLOCK] = "rwlock",
	[VT_LOCK_LIBC] = "glibc_lock", [VT_LOCK_CONDVAR] = "condvar", [VT_LOCK_SEMAPHORE] = "semaphore",
	[VT_LOCK_BARRIER] = "barrier", [VT_LOCK_JOIN] = "join",
};

static double frac(uint64_t part, uint64_t whole)
{
	return whole ? (double)part / (double)whole : 0;
}

static json_t *why_or_null(const char *why)
{
	return why && why[0] ? json_string(why) : json_null();
}

static json_t *threads_json(const struct vt_lock_thread *v, size_t n, uint64_t of)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, json_pack("{s:i, s:o, s:i, s:f, s:f}", "tid", (int)v[i].tid,
						   "name", vt_json_text(v[i].comm), "samples", (int)v[i].n,
						   "share", frac(v[i].n, of),
						   "running_share", frac(v[i].running, v[i].n)));
	return a;
}

/* profile --wall: what the holders ran, [{where, samples, share}]; null elsewhere. */
static json_t *holder_frames_json(const struct vt_lock *k)
{
	json_t *a;
	unsigned all = k->holder_frames_other;
	size_t i;

	if (!k->nholder_frames)
		return json_null();
	for (i = 0; i < k->nholder_frames; i++)
		all += k->holder_frames[i].n;
	a = json_array();
	for (i = 0; i < k->nholder_frames; i++)
		json_array_append_new(a, json_pack("{s:o, s:i, s:f}", "where", vt_json_text(k->holder_frames[i].where),
						   "samples", (int)k->holder_frames[i].n,
						   "share", frac(k->holder_frames[i].n, all)));
	return a;
}

static json_t *place_json(const struct vt_lock *k)
{
	json_t *o = json_pack("{s:s}", "kind", place_keys[k->place]);

	switch (k->place) {
	case VT_LOCK_AT_ARENA:
		json_object_set_new(o, "arena", json_integer(k->arena));
		json_object_set_new(o, "arenas", json_integer(k->narenas));
		json_object_set_new(o, "users", k->users_why[0] ? json_null() : threads_json(k->users, k->nusers, 0));
		json_object_set_new(o, "users_more", json_integer(k->users_more));
		json_object_set_new(o, "users_why", why_or_null(k->users_why));
		break;
	case VT_LOCK_AT_SYMBOL:
		json_object_set_new(o, "symbol", vt_json_text(k->symbol));
		json_object_set_new(o, "offset", json_integer((json_int_t)k->symbol_off));
		json_object_set_new(o, "module", vt_json_text(k->module));
		break;
	case VT_LOCK_AT_STACK:
		json_object_set_new(o, "tid", json_integer(k->stack_tid));
		break;
	case VT_LOCK_AT_HEAP:
		if (k->chunk) {
			char a[32];

			snprintf(a, sizeof(a), "0x%" PRIx64, k->chunk);
			json_object_set_new(o, "chunk", json_pack("{s:s, s:I, s:I}", "address", a, "size",
								  (json_int_t)k->chunk_size, "offset",
								  (json_int_t)(k->addr - k->chunk >= 16 ? k->addr - k->chunk - 16 : 0)));
		} else {
			json_object_set_new(o, "chunk", json_null());
		}
		json_object_set_new(o, "chunk_why", why_or_null(k->chunk ? "" : k->chunk_why));
		/* fall through */
	case VT_LOCK_AT_SHARED:
		json_object_set_new(o, "mapping", vt_json_text(k->mapping));
		break;
	case VT_LOCK_AT_FILE:
		json_object_set_new(o, "mapping", vt_json_text(k->mapping));
		/* the file's virtual address, where the module is known (older recordings: null) */
		json_object_set_new(o, "module", k->module[0] ? vt_json_text(k->module) : json_null());
		json_object_set_new(o, "offset", k->module[0] ? json_integer((json_int_t)k->symbol_off) : json_null());
		break;
	default:
		break;
	}
	return o;
}

static json_t *lock_json(const struct vt_locks *l, const struct vt_lock *k)
{
	char what[256], meaning[256], addr[24];
	json_t *o = json_object(), *sites = json_array(), *votes = json_object(), *holder;
	size_t i;

	snprintf(addr, sizeof(addr), "0x%llx", (unsigned long long)k->addr);
	json_object_set_new(o, "address", json_string(addr));
	json_object_set_new(o, "what", vt_json_text(vt_render_lock_what(k, what, sizeof(what))));
	json_object_set_new(o, "place", place_json(k));
	json_object_set_new(o, "kind", json_string(kind_keys[k->kind]));
	json_object_set_new(o, "contention", json_boolean(vt_lock_kind_contended(k->kind) || k->python_gil));
	json_object_set_new(o, "python_gil", json_boolean(k->python_gil));
	json_object_set_new(o, "rust_std", json_boolean(k->rust_std));
	for (i = 0; i < VT_LOCK_KINDS; i++)
		if (k->kind_votes[i])
			json_object_set_new(votes, kind_keys[i], json_integer(k->kind_votes[i]));
	json_object_set_new(o, "kind_votes", votes);
	json_object_set_new(o, "kind_from_layout", json_integer(k->layout_votes));
	json_object_set_new(o, "meaning", json_string(vt_render_lock_meaning(k, meaning, sizeof(meaning))));
	json_object_set_new(o, "waiting", json_real(vt_lock_waiting(l, k)));
	json_object_set_new(o, "peak_waiters", json_integer(k->peak));
	json_object_set_new(o, "thread_time_share", json_real(frac(k->waits, l->thread_samples)));
	json_object_set_new(o, "samples", json_integer(k->samples));
	json_object_set_new(o, "waits", json_integer((json_int_t)k->waits));
	json_object_set_new(o, "waiters", threads_json(k->waiters, k->nwaiters, l->samples));
	holder = json_pack("{s:i, s:f, s:f, s:o}", "reads", (int)k->owner_reads,
			   "free_share", frac(k->owner_free, k->owner_reads),
			   "readers_share", frac(k->readers, k->owner_reads),
			   "threads", threads_json(k->holders, k->nholders, k->owner_reads));
	json_object_set_new(holder, "foreign_share", json_real(frac(k->owner_foreign, k->owner_reads)));
	json_object_set_new(holder, "running", holder_frames_json(k));
	json_object_set_new(holder, "foreign_tid", k->owner_foreign ? json_integer(k->foreign_tid) : json_null());
	json_object_set_new(holder, "why", why_or_null(k->owner_reads ? "" : k->holder_why[0] ? k->holder_why
										: k->layout_why));
	json_object_set_new(o, "holder", holder);
	json_object_set_new(o, "layout_why", why_or_null(k->layout_why));
	for (i = 0; i < k->nsites; i++)
		json_array_append_new(sites, json_pack("{s:o, s:i, s:f}", "where", vt_json_text(k->sites[i].where),
						       "waits", (int)k->sites[i].n,
						       "share", frac(k->sites[i].n, k->waits)));
	json_object_set_new(o, "call_sites", sites);
	json_object_set_new(o, "call_sites_other", json_integer(k->sites_other));
	json_object_set_new(o, "call_sites_unread", json_integer(k->sites_unknown));
	return o;
}

json_t *vt_render_locks_json_value(const struct vt_locks *l)
{
	json_t *o = json_object(), *rows = json_array();
	size_t i;

	json_object_set_new(o, "pid", json_integer(l->pid));
	json_object_set_new(o, "samples", json_integer(l->samples));
	json_object_set_new(o, "interval_s", json_real((double)(l->last_ns - l->first_ns) / 1e9));
	json_object_set_new(o, "futex_waiting", json_real(l->samples ? (double)l->futex_waits / l->samples : 0));
	json_object_set_new(o, "threads", json_real(l->samples ? (double)l->thread_samples / l->samples : 0));
	json_object_set_new(o, "unwinds", json_integer((json_int_t)l->unwinds));
	json_object_set_new(o, "waits_without_stack_read", json_integer((json_int_t)l->unwinds_skipped));
	json_object_set_new(o, "untracked_waits", json_integer((json_int_t)l->untracked));
	json_object_set_new(o, "syscall_unread_share", json_real(frac(l->syscall_unread, l->thread_samples)));
	json_object_set_new(o, "syscall_why", why_or_null(l->syscall_why));
	json_object_set_new(o, "stacks_why", why_or_null(l->stacks_why));
	json_object_set_new(o, "arenas", l->narenas ? json_integer((json_int_t)l->narenas) : json_null());
	json_object_set_new(o, "arenas_why", why_or_null(l->arenas_why));
	for (i = 0; i < l->n; i++)
		json_array_append_new(rows, lock_json(l, &l->v[i]));
	json_object_set_new(o, "locks", rows);
	return o;
}

int vt_render_locks_json(FILE *out, const struct vt_locks *l, bool compact)
{
	json_t *root = vt_json_envelope(VT_SCHEMA_LOCKS), *v = vt_render_locks_json_value(l);
	bool failed = !root || !v;

	if (root && v)
		json_object_update(root, v);
	json_decref(v);
	return vt_json_write(out, root, compact, failed);
}

json_t *vt_render_lock_history_json(const struct vt_lock_history *h)
{
	json_t *o = json_object(), *halves = json_array();
	size_t i, k;

	json_object_set_new(o, "looks", json_integer((json_int_t)h->looks));
	json_object_set_new(o, "why", why_or_null(h->why));
	if (!h->looks) {
		json_decref(halves);
		return o;
	}
	json_object_set_new(o, "t_first", json_real(h->t_first));
	json_object_set_new(o, "t_split", json_real(h->t_split));
	json_object_set_new(o, "t_last", json_real(h->t_last));
	json_object_set_new(o, "locks", vt_render_locks_json_value(&h->all));
	for (i = 0; i < h->all.n; i++) {
		const struct vt_lock *row = &h->all.v[i];
		double w[2] = { 0, 0 };
		const struct vt_locks *half[2] = { &h->early, &h->late };
		char addr[32];
		int j;

		for (j = 0; j < 2; j++)
			for (k = 0; k < half[j]->n; k++)
				if (half[j]->v[k].addr == row->addr && half[j]->samples)
					w[j] = (double)half[j]->v[k].waits / half[j]->samples;
		snprintf(addr, sizeof(addr), "0x%" PRIx64, row->addr);
		json_array_append_new(halves, json_pack("{s:s, s:f, s:f}", "address", addr, "first_waiting", w[0],
							 "second_waiting", w[1]));
	}
	json_object_set_new(o, "halves", halves);
	return o;
}

/*
 * test_lock_store.c — a soak's looks at its process's locks in a recording:
 * what is written reads back the same and counts up over the looks (the
 * halves split where they should); another process's looks are not mixed
 * in; a recording from before the lock tables holds none and says why; a
 * damaged look is refused with VT_E_RECORDING naming what is wrong.
 */
#include "harness.h"

#include "store/lock_store.h"
#include "store/store.h"

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

static char dir[] = "/tmp/vitals-test-lock-store-XXXXXX";

static const char *path_of(const char *name)
{
	static char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

static struct vt_store *create(const char *name)
{
	struct vt_recording_info info = { 0 };
	struct vt_store *st = NULL;
	struct vt_err err;

	snprintf(info.target, sizeof(info.target), "pid 42");
	info.every_s = 1;
	info.ncpus = 2;
	info.started_wall = 1.7e9;
	CHECK(vt_store_create(path_of(name), &info, true, &st, &err) == VT_OK);
	return st;
}

static void thread(struct vt_lock_thread *t, pid_t tid, const char *comm, unsigned n, unsigned running)
{
	t->tid = tid;
	snprintf(t->comm, sizeof(t->comm), "%s", comm);
	t->n = n;
	t->running = running;
}

/*
 * One look of process pid: a contended mutex (g_pool_lock) waited on by
 * waiters threads and held by 101, and, when with_arena, arena 1 of 4's lock
 * with a user and an address above INT64_MAX's sign bit.
 */
static void look(struct vt_locks *l, pid_t pid, unsigned waiters, bool with_arena)
{
	struct vt_lock *k;
	unsigned i;

	memset(l, 0, sizeof(*l));
	l->pid = pid;
	l->samples = 1;
	l->thread_samples = 8;
	l->futex_waits = waiters + (with_arena ? 1 : 0);
	l->unwinds = 3;
	l->narenas = 4;
	snprintf(l->stacks_why, sizeof(l->stacks_why), "a why");
	l->v = calloc(2, sizeof(*l->v));
	CHECK(l->v != NULL);
	l->cap = 2;
	k = &l->v[l->n++];
	k->addr = 0x55550000a010ull;
	k->kind = VT_LOCK_MUTEX;
	k->kind_votes[VT_LOCK_MUTEX] = waiters;
	k->kind_votes[VT_LOCK_RAW] = 1;
	k->place = VT_LOCK_AT_SYMBOL;
	snprintf(k->symbol, sizeof(k->symbol), "g_pool_lock");
	snprintf(k->module, sizeof(k->module), "app");
	k->symbol_off = 0;
	k->samples = 1;
	k->waits = waiters;
	k->peak = waiters;
	for (i = 0; i < waiters; i++)
		thread(&k->waiters[k->nwaiters++], 102 + (pid_t)i, "worker", 1, 0);
	thread(&k->holders[k->nholders++], 101, "worker-h", 1, 1);
	k->owner_reads = 1;
	snprintf(k->sites[0].where, sizeof(k->sites[0].where), "take+0x2f (app) app.c:102 < worker_main");
	k->sites[0].n = waiters;
	k->nsites = 1;
	if (!with_arena)
		return;
	k = &l->v[l->n++];
	k->addr = 0xffff800000001000ull;
	k->kind = VT_LOCK_LIBC;
	k->kind_votes[VT_LOCK_LIBC] = 1;
	k->place = VT_LOCK_AT_ARENA;
	k->arena = 1;
	k->narenas = 4;
	k->samples = 1;
	k->waits = 1;
	k->peak = 1;
	thread(&k->waiters[k->nwaiters++], 110, "alloc", 1, 0);
	thread(&k->users[k->nusers++], 110, "alloc", 0, 0);
	k->sites_unknown = 1;
	snprintf(k->holder_why, sizeof(k->holder_why), "glibc's internal locks do not record their holder");
}

static void append(struct vt_store *st, double t, pid_t pid, unsigned waiters, bool with_arena)
{
	struct vt_locks l;
	struct vt_err err;

	look(&l, pid, waiters, with_arena);
	CHECK(vt_store_locks_append(st, t, &l, &err) == VT_OK);
	vt_locks_release(&l);
}

static const struct vt_lock *row_at(const struct vt_locks *l, uint64_t addr)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->v[i].addr == addr)
			return &l->v[i];
	return NULL;
}

/* Four looks of 42 (2, 2, 3, 3 waiters; the arena lock in the last two) and one of 43. */
static void make_good(const char *name)
{
	struct vt_store *st = create(name);
	struct vt_err err;

	append(st, 1, 42, 2, false);
	append(st, 2, 42, 2, false);
	append(st, 3, 43, 4, true);
	append(st, 4, 42, 3, true);
	append(st, 5, 42, 3, true);
	CHECK(vt_store_close(st, &err) == VT_OK);
}

static void test_lock_store__round_trip(void)
{
	struct vt_lock_history h;
	const struct vt_lock *k, *a;
	struct vt_err err;

	make_good("good.db");
	CHECK(vt_store_locks_load(path_of("good.db"), 42, &h, &err) == VT_OK);
	CHECK_EQ_U64(h.looks, 4);
	CHECK(h.t_first == 1 && h.t_split == 4 && h.t_last == 5);
	CHECK_EQ_U64(h.all.samples, 4);
	CHECK_EQ_U64(h.all.thread_samples, 32);
	CHECK_EQ_U64(h.all.futex_waits, 2 + 2 + 4 + 4);
	CHECK_EQ_U64(h.all.narenas, 4);
	CHECK_STR(h.all.stacks_why, "a why");
	CHECK_EQ_U64(h.all.n, 2);
	k = row_at(&h.all, 0x55550000a010ull);
	CHECK(k != NULL);
	if (!k)
		goto out;
	CHECK(k->kind == VT_LOCK_MUTEX && k->place == VT_LOCK_AT_SYMBOL);
	CHECK_STR(k->symbol, "g_pool_lock");
	CHECK_STR(k->module, "app");
	CHECK_EQ_U64(k->samples, 4);
	CHECK_EQ_U64(k->waits, 10);
	CHECK_EQ_U64(k->peak, 3);
	CHECK_EQ_U64(k->kind_votes[VT_LOCK_MUTEX], 10);
	CHECK_EQ_U64(k->kind_votes[VT_LOCK_RAW], 4);
	/* 102 and 103 waited at every look, 104 at the last two */
	CHECK_EQ_U64(vt_lock_waits_of(k, 102), 4);
	CHECK_EQ_U64(vt_lock_waits_of(k, 104), 2);
	CHECK_EQ_U64(k->nholders, 1);
	CHECK(k->holders[0].tid == 101 && k->holders[0].n == 4 && k->holders[0].running == 4);
	CHECK_STR(k->holders[0].comm, "worker-h");
	CHECK_EQ_U64(k->owner_reads, 4);
	CHECK_EQ_U64(k->nsites, 1);
	CHECK_EQ_U64(k->sites[0].n, 10);
	CHECK_STR(k->sites[0].where, "take+0x2f (app) app.c:102 < worker_main");
	a = row_at(&h.all, 0xffff800000001000ull);
	CHECK(a != NULL);
	if (a) {
		CHECK(a->place == VT_LOCK_AT_ARENA && a->arena == 1 && a->narenas == 4 && a->kind == VT_LOCK_LIBC);
		CHECK(a->nusers == 1 && a->users[0].tid == 110);
		CHECK_EQ_U64(a->sites_unknown, 2);
		CHECK_STR(a->holder_why, "glibc's internal locks do not record their holder");
	}
	/* the halves: two looks each; the arena lock only in the second */
	CHECK_EQ_U64(h.early.samples, 2);
	CHECK_EQ_U64(h.late.samples, 2);
	CHECK(row_at(&h.early, 0xffff800000001000ull) == NULL);
	CHECK(row_at(&h.early, 0x55550000a010ull) && row_at(&h.early, 0x55550000a010ull)->waits == 4);
	CHECK(row_at(&h.late, 0x55550000a010ull) && row_at(&h.late, 0x55550000a010ull)->waits == 6);
out:
	vt_lock_history_release(&h);
	/* process 43's one look is its own */
	CHECK(vt_store_locks_load(path_of("good.db"), 43, &h, &err) == VT_OK);
	CHECK_EQ_U64(h.looks, 1);
	CHECK_EQ_U64(h.all.futex_waits, 5);
	CHECK_EQ_U64(h.early.samples, 0);
	CHECK_EQ_U64(h.late.samples, 1);
	vt_lock_history_release(&h);
	/* a process never looked at: none, and why */
	CHECK(vt_store_locks_load(path_of("good.db"), 44, &h, &err) == VT_OK);
	CHECK(h.looks == 0 && strstr(h.why, "no lock looks of process 44"));
	vt_lock_history_release(&h);
}

/* A recording written before the lock tables (schema 4) holds no looks, and says why. */
static void test_lock_store__old_recording_has_none(void)
{
	struct vt_lock_history h;
	struct vt_err err;
	sqlite3 *db;

	make_good("v4.db");
	CHECK(sqlite3_open(path_of("v4.db"), &db) == SQLITE_OK);
	CHECK(sqlite3_exec(db, "DROP TABLE lock_looks; DROP TABLE lock_rows; DROP TABLE lock_threads;"
			       " DROP TABLE lock_sites; PRAGMA user_version=4", NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(db);
	CHECK(vt_store_locks_load(path_of("v4.db"), 42, &h, &err) == VT_OK);
	CHECK(h.looks == 0 && strstr(h.why, "schema 4"));
	vt_lock_history_release(&h);
	CHECK(vt_store_locks_load(path_of("nothing-here.db"), 42, &h, &err) == VT_E_NOTFOUND);
	vt_lock_history_release(&h);
}

static void damage(const char *name, const char *sql, const char *said)
{
	struct vt_lock_history h;
	struct vt_err err;
	sqlite3 *db;
	int rc;

	make_good(name);
	CHECK(sqlite3_open(path_of(name), &db) == SQLITE_OK);
	CHECK(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(db);
	vt_err_clear(&err);
	rc = vt_store_locks_load(path_of(name), 42, &h, &err);
	if (rc != VT_E_RECORDING || !strstr(err.msg, said))
		fprintf(stderr, "  %s: rc %d, '%s' (wanted '%s')\n", sql, rc, err.msg, said);
	CHECK(rc == VT_E_RECORDING && strstr(err.msg, said));
	vt_lock_history_release(&h);
}

static void test_lock_store__damage_is_refused(void)
{
	damage("d1.db", "UPDATE lock_rows SET kind = 99", "kind is not one this vitals knows");
	damage("d2.db", "UPDATE lock_rows SET place = -1", "place is not one");
	damage("d3.db", "UPDATE lock_rows SET waits = 1000", "waits");
	damage("d4.db", "UPDATE lock_rows SET kind_votes = x'0102'", "kind votes");
	damage("d5.db", "UPDATE lock_threads SET idx = 7", "a thread of a lock it does not hold");
	damage("d6.db", "UPDATE lock_threads SET role = 5", "role");
	damage("d7.db", "UPDATE lock_sites SET idx = 9", "call site of a lock it does not hold");
	damage("d8.db", "UPDATE lock_rows SET idx = idx + 3", "numbered");
	damage("d9.db", "UPDATE lock_looks SET samples = 'many'", "samples is not a count");
	damage("d10.db", "UPDATE lock_threads SET n = 50", "counts");
	damage("d11.db", "INSERT INTO lock_sites SELECT look_id, idx, site || 'x', n FROM lock_sites;"
			 " INSERT INTO lock_sites SELECT look_id, idx, site || 'y', n FROM lock_sites;"
			 " INSERT INTO lock_sites SELECT look_id, idx, site || 'z', n FROM lock_sites;"
			 " INSERT INTO lock_sites SELECT look_id, idx, site || 'w', n FROM lock_sites",
	       "call sites");
}

static void test_lock_store__setup(void)
{
	if (!mkdtemp(dir))
		abort();
}

static void test_lock_store__teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

VT_TEST_MAIN(test_lock_store__setup, test_lock_store__round_trip, test_lock_store__old_recording_has_none,
	     test_lock_store__damage_is_refused, test_lock_store__teardown)

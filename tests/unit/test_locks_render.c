/*
 * test_locks_render.c — the words and the documents of `vitals locks`
 * (render/locks.h) on lock rows as the probe fills them: what each place is
 * called, which kinds are contention, the holders' shares, the table and
 * the vitals.locks document; and the waits a thread has on contended locks
 * (sample/locks.h), which core contention's demand leaves out.
 */
#include "harness.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "render/locks.h"
#include "sample/locks.h"

static struct vt_lock row(uint64_t addr, enum vt_lock_kind kind, enum vt_lock_place place)
{
	struct vt_lock k;

	memset(&k, 0, sizeof(k));
	k.addr = addr;
	k.kind = kind;
	k.place = place;
	k.kind_votes[kind] = 10;
	return k;
}

static void waiter(struct vt_lock *k, pid_t tid, const char *comm, unsigned n)
{
	k->waiters[k->nwaiters].tid = tid;
	snprintf(k->waiters[k->nwaiters].comm, sizeof(k->waiters[0].comm), "%s", comm);
	k->waiters[k->nwaiters++].n = n;
	k->waits += n;
}

static void test_locks_render__what_each_place_is(void)
{
	struct vt_lock k;
	char buf[256];

	k = row(0x7f0000000c60, VT_LOCK_LIBC, VT_LOCK_AT_ARENA);
	k.narenas = 8;
	CHECK_STR(vt_render_lock_what(&k, buf, sizeof(buf)), "glibc malloc arena 0 of 8 (main_arena)");
	k.arena = 3;
	CHECK_STR(vt_render_lock_what(&k, buf, sizeof(buf)), "glibc malloc arena 3 of 8");
	CHECK(strstr(vt_render_lock_meaning(&k, buf, sizeof(buf)), "MALLOC_ARENA_MAX is the lever") != NULL);

	k = row(0x1000, VT_LOCK_MUTEX, VT_LOCK_AT_SYMBOL);
	snprintf(k.symbol, sizeof(k.symbol), "convoy_lock");
	snprintf(k.module, sizeof(k.module), "lock_convoy");
	CHECK_STR(vt_render_lock_what(&k, buf, sizeof(buf)), "convoy_lock (lock_convoy)");
	k.symbol_off = 0x28;
	CHECK_STR(vt_render_lock_what(&k, buf, sizeof(buf)), "convoy_lock+0x28 (lock_convoy)");
	CHECK(strstr(vt_render_lock_meaning(&k, buf, sizeof(buf)), "contention on an application lock") != NULL);

	/* the target's names may hold escapes: they never reach the terminal */
	snprintf(k.symbol, sizeof(k.symbol), "evil\033[2J");
	snprintf(k.module, sizeof(k.module), "mod\033]0;x\a");
	vt_render_lock_what(&k, buf, sizeof(buf));
	CHECK(strchr(buf, '\033') == NULL && strchr(buf, '\a') == NULL);

	k = row(0xa5b8c8, VT_LOCK_CONDVAR, VT_LOCK_AT_SYMBOL);
	snprintf(k.symbol, sizeof(k.symbol), "_PyRuntime");
	snprintf(k.module, sizeof(k.module), "python3.11");
	k.symbol_off = 0x188;
	k.python_gil = true;
	CHECK_STR(vt_render_lock_what(&k, buf, sizeof(buf)), "the Python GIL (_PyRuntime+0x188 in python3.11)");
	CHECK(strstr(vt_render_lock_meaning(&k, buf, sizeof(buf)), "GIL") != NULL);

	k = row(0x7f00, VT_LOCK_SEMAPHORE, VT_LOCK_AT_SHARED);
	snprintf(k.mapping, sizeof(k.mapping), "/dev/shm/sem.x");
	CHECK_STR(vt_render_lock_what(&k, buf, sizeof(buf)), "memory shared with other processes (/dev/shm/sem.x)");
	CHECK(strstr(vt_render_lock_meaning(&k, buf, sizeof(buf)), "not contention") != NULL);

	k = row(0x7ffd00, VT_LOCK_CONDVAR, VT_LOCK_AT_STACK);
	k.stack_tid = 42;
	CHECK_STR(vt_render_lock_what(&k, buf, sizeof(buf)), "on thread 42's stack");

	k = row(0x5000, VT_LOCK_RAW, VT_LOCK_AT_HEAP);
	snprintf(k.mapping, sizeof(k.mapping), "[heap]");
	CHECK_STR(vt_render_lock_what(&k, buf, sizeof(buf)), "a heap object ([heap])");
	CHECK(strstr(vt_render_lock_meaning(&k, buf, sizeof(buf)), "cannot be told") != NULL);
}

static void test_locks_render__kinds_that_are_contention(void)
{
	CHECK(vt_lock_kind_contended(VT_LOCK_MUTEX));
	CHECK(vt_lock_kind_contended(VT_LOCK_RWLOCK));
	CHECK(vt_lock_kind_contended(VT_LOCK_LIBC));
	CHECK(!vt_lock_kind_contended(VT_LOCK_CONDVAR));
	CHECK(!vt_lock_kind_contended(VT_LOCK_SEMAPHORE));
	CHECK(!vt_lock_kind_contended(VT_LOCK_BARRIER));
	CHECK(!vt_lock_kind_contended(VT_LOCK_JOIN));
	CHECK(!vt_lock_kind_contended(VT_LOCK_RAW));
	CHECK_STR(vt_lock_kind_name(VT_LOCK_RAW), "raw futex");
}

static void test_locks_render__holders(void)
{
	struct vt_lock k = row(0x1000, VT_LOCK_MUTEX, VT_LOCK_AT_SYMBOL);
	char buf[512];
	int i;

	CHECK(strncmp(vt_render_lock_holders(&k, 0, buf, sizeof(buf)), "not known", 9) == 0);
	k.owner_reads = 100;
	for (i = 0; i < 4; i++) {
		k.holders[i].tid = 10 + i;
		snprintf(k.holders[i].comm, sizeof(k.holders[i].comm), "worker-%d", 3 - i);
		k.holders[i].n = (unsigned)(40 - 10 * i);
	}
	k.nholders = 4;
	k.owner_free = 0;
	CHECK_STR(vt_render_lock_holders(&k, 2, buf, sizeof(buf)),
		  "worker-3 (10) 40%, worker-2 (11) 30%, 2 others 30%");
	k.owner_free = 5;
	CHECK(strstr(vt_render_lock_holders(&k, 0, buf, sizeof(buf)), "free when read 5% (a handoff)") != NULL);
}

static void test_locks_render__documents(void)
{
	struct vt_lock v[2];
	struct vt_locks l;
	char *text = NULL;
	size_t len = 0;
	json_t *j;
	FILE *mem;

	memset(&l, 0, sizeof(l));
	v[0] = row(0x1000, VT_LOCK_MUTEX, VT_LOCK_AT_SYMBOL);
	snprintf(v[0].symbol, sizeof(v[0].symbol), "held_lock");
	snprintf(v[0].module, sizeof(v[0].module), "app");
	waiter(&v[0], 11, "worker-1", 80);
	waiter(&v[0], 12, "worker-2", 70);
	v[0].samples = 90;
	v[0].peak = 2;
	v[1] = row(0x2000, VT_LOCK_CONDVAR, VT_LOCK_AT_SYMBOL);
	snprintf(v[1].symbol, sizeof(v[1].symbol), "idle_cond");
	snprintf(v[1].module, sizeof(v[1].module), "app");
	waiter(&v[1], 13, "pool-0", 100);
	v[1].samples = 100;
	v[1].peak = 1;
	l.pid = 10;
	l.samples = 100;
	l.thread_samples = 400;
	l.futex_waits = 250;
	l.first_ns = 0;
	l.last_ns = 2000000000ull;
	l.v = v;
	l.n = 2;

	CHECK(vt_locks_top(&l, false) == &v[0]);
	CHECK(vt_locks_top(&l, true) == &v[0]);
	CHECK_EQ_U64(vt_locks_contended_waits_of(&l, 11), 80);
	CHECK_EQ_U64(vt_locks_contended_waits_of(&l, 13), 0);     /* a condvar is no contention */
	CHECK(vt_lock_waiting(&l, &v[0]) == 1.5);

	mem = open_memstream(&text, &len);
	CHECK(mem && vt_render_locks_text(mem, &l, 0) == 0);
	fclose(mem);
	CHECK(strstr(text, "locks of process 10: 100 samples over 2.0 s") != NULL);
	CHECK(strstr(text, "held_lock (app)  mutex") != NULL);
	CHECK(strstr(text, "lock 1: held_lock (app), a mutex at 0x1000") != NULL);
	CHECK(strstr(text, "lock 2: idle_cond (app), a condition variable") != NULL);
	free(text);

	j = vt_render_locks_json_value(&l);
	CHECK(j && json_array_size(json_object_get(j, "locks")) == 2);
	CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(j, "locks"), 0), "kind")), "mutex");
	CHECK(json_is_false(json_object_get(json_array_get(json_object_get(j, "locks"), 1), "contention")));
	CHECK(json_real_value(json_object_get(json_array_get(json_object_get(j, "locks"), 0), "waiting")) == 1.5);
	json_decref(j);
}

VT_TEST_MAIN(test_locks_render__what_each_place_is, test_locks_render__kinds_that_are_contention,
	     test_locks_render__holders, test_locks_render__documents)

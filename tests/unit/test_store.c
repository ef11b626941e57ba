/*
 * test_store.c — soak recordings: what is written reads back the same;
 * many samples fold into bounded points without losing floors, peaks or
 * counter ends; restarts and gaps split points; files that are not
 * recordings, or are newer, are refused with VT_E_RECORDING.
 */
#include "harness.h"
#include "base/unknown.h"

#include "proc/procfs.h"
#include "store/store.h"

#include <math.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MiB (1024.0 * 1024.0)

static char dir[] = "/tmp/vitals-test-store-XXXXXX";

static const char *path_of(const char *name)
{
	static char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

static struct vt_store *create(const char *name, double every)
{
	struct vt_recording_info info = { 0 };
	struct vt_store *st = NULL;
	struct vt_err err;

	snprintf(info.target, sizeof(info.target), "pid 42");
	snprintf(info.arm, sizeof(info.arm), "cap2");
	info.every_s = every;
	info.ncpus = 2;
	info.started_wall = 1.7e9;
	CHECK(vt_store_create(path_of(name), &info, true, &st, &err) == VT_OK);
	return st;
}

static void row(struct vt_store *st, double t, pid_t pid, double committed, double cpu)
{
	struct vt_store_sample s = { .t = t, .wall = 1.7e9 + t, .pid = pid };
	struct vt_err err;
	int m;

	for (m = 0; m < VT_M_COUNT; m++)
		s.v[m] = NAN;
	s.v[VT_M_COMMITTED] = committed;
	s.v[VT_M_RSS_ANON] = committed;
	s.v[VT_M_CPU_USER_S] = cpu;
	CHECK(vt_store_append(st, &s, NULL, 0, &err) == VT_OK);
}

static void test_store__round_trip(void)
{
	struct vt_store *st = create("rt.db", 1);
	struct vt_store_thread th[2] = { { 10, "worker-0", { 1000, 5, 3, 1 } }, { 11, "worker-1", { 2000, VT_NA, 4, 2 } } };
	struct vt_store_sample s = { .t = 0, .wall = 1.7e9, .pid = 42 };
	struct vt_event ev = { .t = 0.5, .wall = 1.7e9, .kind = VT_EV_NOTE, .pid = 42 };
	struct vt_series ser;
	struct vt_err err;
	int m;

	for (m = 0; m < VT_M_COUNT; m++)
		s.v[m] = NAN;
	s.v[VT_M_COMMITTED] = 100 * MiB;
	s.v[VT_M_CPU_USER_S] = 1.25;
	CHECK(vt_store_append(st, &s, th, 2, &err) == VT_OK);
	snprintf(ev.detail, sizeof(ev.detail), "hello");
	CHECK(vt_store_event(st, &ev, &err) == VT_OK);
	th[0].counter[VT_TC_CPU_NS] = 5000;
	th[0].counter[VT_TC_VCSW] = 13;
	th[0].counter[VT_TC_NVCSW] = 2;
	s.t = 1;
	s.v[VT_M_COMMITTED] = 101 * MiB;
	s.v[VT_M_CPU_USER_S] = 1.5;
	CHECK(vt_store_append(st, &s, th, 1, &err) == VT_OK);
	CHECK_EQ_U64(vt_store_samples(st), 2);
	CHECK(vt_store_bytes(st) > 0);
	CHECK(vt_store_close(st, &err) == VT_OK);

	vt_series_init(&ser);
	CHECK(vt_store_load(path_of("rt.db"), 0, &ser, &err) == VT_OK);
	CHECK_EQ_U64(ser.n, 2);
	CHECK_EQ_U64(ser.samples, 2);
	CHECK_STR(ser.info.target, "pid 42");
	CHECK_STR(ser.info.arm, "cap2");
	CHECK(ser.info.every_s == 1);
	CHECK(ser.info.ncpus == 2);
	CHECK(!ser.info.finished);
	CHECK(ser.m[VT_M_COMMITTED] && ser.m[VT_M_COMMITTED][1].mean == 101 * MiB);
	CHECK(ser.m[VT_M_CPU_USER_S] && ser.m[VT_M_CPU_USER_S][1].mean == 1.5);
	CHECK(ser.m[VT_M_HEAP_LIVE] == NULL);       /* never recorded: absent, not zeros */
	CHECK_EQ_U64(ser.nevents, 1);
	CHECK_STR(ser.events[0].detail, "hello");
	CHECK_EQ_U64(ser.nthreads, 2);
	if (ser.nthreads == 2) {
		const struct vt_thread_run *w0 = ser.threads[0].tid == 10 ? &ser.threads[0] : &ser.threads[1];

		CHECK_STR(w0->name, "worker-0");
		CHECK_EQ_U64(w0->delta[VT_TC_CPU_NS], 4000);
		CHECK_EQ_U64(w0->cpu_ns_first, 1000);     /* its counter at its first record */
		CHECK(vt_known(w0->delta[VT_TC_VCSW]));
		CHECK_EQ_U64(w0->delta[VT_TC_VCSW], 10);
		CHECK_EQ_U64(w0->delta[VT_TC_NVCSW], 1);
		CHECK(w0->t_first == 0 && w0->t_last == 1);
	}
	vt_series_free(&ser);
}

/* The processes sampled and their starts (schema 7): written once each, read back in start order. */
static void test_store__process_starts(void)
{
	struct vt_store *st = create("starts.db", 1);
	struct vt_store_sample s = { .t = 0, .wall = 1.7e9, .pid = 42 };
	struct vt_series ser;
	struct vt_err err;
	int m;

	for (m = 0; m < VT_M_COUNT; m++)
		s.v[m] = NAN;
	CHECK(vt_store_append(st, &s, NULL, 0, &err) == VT_OK);
	CHECK(vt_store_process(st, &(struct vt_process_start){ 42, 5000, -12.5, 1.7e9 - 12.5 }, &err) == VT_OK);
	CHECK(vt_store_process(st, &(struct vt_process_start){ 42, 5000, -12.5, 1.7e9 - 12.5 }, &err) == VT_OK);
	s.t = 5;
	s.pid = 43;
	CHECK(vt_store_append(st, &s, NULL, 0, &err) == VT_OK);
	CHECK(vt_store_process(st, &(struct vt_process_start){ 43, 6500, 4.75, NAN }, &err) == VT_OK);
	CHECK(vt_store_close(st, &err) == VT_OK);

	vt_series_init(&ser);
	CHECK(vt_store_load(path_of("starts.db"), 0, &ser, &err) == VT_OK);
	CHECK_EQ_U64(ser.nstarts, 2);
	if (ser.nstarts == 2) {
		CHECK(ser.starts[0].pid == 42 && ser.starts[0].start_ticks == 5000 && ser.starts[0].started_t == -12.5);
		CHECK(ser.starts[1].pid == 43 && ser.starts[1].started_t == 4.75 && isnan(ser.starts[1].started_wall));
		CHECK(vt_series_start_of(&ser, 0) == &ser.starts[0]);
		CHECK(vt_series_start_of(&ser, 1) == &ser.starts[1]);
	}
	vt_series_free(&ser);
}

/* What a thread was doing: written as a running tally, a row without one keeps it. */
static void test_store__thread_doing(void)
{
	struct vt_store *st = create("doing.db", 1);
	struct vt_store_thread th = { 10, "worker-0", { 1000, 5, 3, 1 } };
	struct vt_store_sample s = { .t = 0, .wall = 1.7e9, .pid = 42 };
	struct vt_thread_doing want = { 4, 1, 2, 1, "do_sys_poll", 3, "poll", 3, 3, 1, 1 };
	struct vt_series ser;
	struct vt_err err;
	sqlite3 *db;
	int m;

	for (m = 0; m < VT_M_COUNT; m++)
		s.v[m] = NAN;
	th.doing = (struct vt_thread_doing){ 1, 1, 0, 0, "", 0, "", 0 };
	CHECK(vt_store_append(st, &s, &th, 1, &err) == VT_OK);
	th.doing = want;
	s.t = 1;
	CHECK(vt_store_append(st, &s, &th, 1, &err) == VT_OK);
	memset(&th.doing, 0, sizeof(th.doing));       /* an exit row between cadences */
	th.counter[VT_TC_CPU_NS] = 2000;
	s.t = 2;
	CHECK(vt_store_append(st, &s, &th, 1, &err) == VT_OK);
	CHECK(vt_store_close(st, &err) == VT_OK);

	vt_series_init(&ser);
	CHECK(vt_store_load(path_of("doing.db"), 0, &ser, &err) == VT_OK);
	CHECK_EQ_U64(ser.info.schema, VT_STORE_SCHEMA);
	CHECK_EQ_U64(ser.nthreads, 1);
	if (ser.nthreads == 1) {
		const struct vt_thread_doing *d = &ser.threads[0].doing;

		CHECK(d->seen == 4 && d->n_r == 1 && d->n_s == 2 && d->n_d == 1);
		CHECK_STR(d->wchan, "do_sys_poll");
		CHECK_STR(d->syscall, "poll");
		CHECK(d->wchan_n == 3 && d->syscall_n == 3);
		/* the waits with a timeout and its median: what tells a poll's timeout from events */
		CHECK(d->timed == 3 && d->untimed == 1 && d->timeout_ms == 1);
		CHECK_EQ_U64(ser.threads[0].delta[VT_TC_CPU_NS], 1000);
	}
	vt_series_free(&ser);

	/* a recording made before the timeout columns: the rest of the tally loads, no timeout */
	CHECK(sqlite3_open(path_of("doing.db"), &db) == SQLITE_OK);
	CHECK(sqlite3_exec(db, "ALTER TABLE threads DROP COLUMN timeout_ms; ALTER TABLE threads DROP COLUMN timed;"
			       " ALTER TABLE threads DROP COLUMN untimed", NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(db);
	vt_series_init(&ser);
	CHECK(vt_store_load(path_of("doing.db"), 0, &ser, &err) == VT_OK);
	CHECK(ser.nthreads == 1 && ser.threads[0].doing.seen == 4);
	CHECK(ser.nthreads == 1 && ser.threads[0].doing.timed == 0 && ser.threads[0].doing.untimed == 0);
	vt_series_free(&ser);

	/* counts that cannot be (more in a state than seen): dropped, not shown */
	CHECK(sqlite3_open(path_of("doing.db"), &db) == SQLITE_OK);
	sqlite3_exec(db, "UPDATE threads SET n_r = 99", NULL, NULL, NULL);
	sqlite3_close(db);
	vt_series_init(&ser);
	CHECK(vt_store_load(path_of("doing.db"), 0, &ser, &err) == VT_OK);
	CHECK(ser.nthreads == 1 && ser.threads[0].doing.seen == 0);
	vt_series_free(&ser);
}

/* A recording of schema 1 (no tally columns) still loads: the tally is empty. */
static void test_store__schema_1_loads(void)
{
	struct vt_store *st = create("v1.db", 1);
	struct vt_store_thread th = { 10, "worker-0", { 1000, 5, 3, 1 } };
	struct vt_store_sample s = { .t = 0, .wall = 1.7e9, .pid = 42 };
	struct vt_series ser;
	struct vt_err err;
	sqlite3 *db;
	int m;

	for (m = 0; m < VT_M_COUNT; m++)
		s.v[m] = NAN;
	CHECK(vt_store_append(st, &s, &th, 1, &err) == VT_OK);
	s.t = 1;
	th.counter[VT_TC_CPU_NS] = 3000;
	CHECK(vt_store_append(st, &s, &th, 1, &err) == VT_OK);
	CHECK(vt_store_close(st, &err) == VT_OK);
	/* rewrite it as schema 1 wrote it */
	CHECK(sqlite3_open(path_of("v1.db"), &db) == SQLITE_OK);
	CHECK(sqlite3_exec(db, "CREATE TABLE t1(pid INTEGER, tid INTEGER, name TEXT, first_sample INTEGER,"
			       " last_sample INTEGER, PRIMARY KEY(pid, tid)) WITHOUT ROWID;"
			       "INSERT INTO t1 SELECT pid, tid, name, first_sample, last_sample FROM threads;"
			       "DROP TABLE threads; ALTER TABLE t1 RENAME TO threads; PRAGMA user_version=1",
			       NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(db);
	vt_series_init(&ser);
	CHECK(vt_store_load(path_of("v1.db"), 0, &ser, &err) == VT_OK);
	CHECK_EQ_U64(ser.info.schema, 1);
	CHECK(ser.nthreads == 1 && ser.threads[0].delta[VT_TC_CPU_NS] == 2000 && ser.threads[0].doing.seen == 0);
	vt_series_free(&ser);
}

/* 10,000 samples into at most 1,000 points: floors, peaks and counter ends survive. */
static void test_store__binning_keeps_extremes(void)
{
	struct vt_store *st = create("bin.db", 1);
	struct vt_series ser;
	struct vt_err err;
	double lo = INFINITY, hi = -INFINITY, last_cpu = 0;
	size_t i;

	for (i = 0; i < 10000; i++) {
		double v = 200 * MiB + (double)((i * 7919) % 1000) * 1024;

		if (i == 5000)
			v = 150 * MiB;       /* one dip */
		lo = fmin(lo, v);
		hi = fmax(hi, v);
		last_cpu = (double)i * 0.01;
		row(st, (double)i, 42, v, last_cpu);
	}
	CHECK(vt_store_close(st, &err) == VT_OK);
	vt_series_init(&ser);
	CHECK(vt_store_load(path_of("bin.db"), 1000, &ser, &err) == VT_OK);
	CHECK(ser.n <= 1010 && ser.n >= 800 && ser.info.rollups == 0);
	CHECK_EQ_U64(ser.samples, 10000);
	{
		double plo = INFINITY, phi = -INFINITY;
		uint64_t count = 0;

		for (i = 0; i < ser.n; i++) {
			plo = fmin(plo, ser.m[VT_M_COMMITTED][i].lo);
			phi = fmax(phi, ser.m[VT_M_COMMITTED][i].hi);
			count += ser.count[i];
			CHECK(ser.t0[i] <= ser.t[i] && ser.t[i] <= ser.t1[i]);
		}
		CHECK(plo == lo);
		CHECK(phi == hi);
		CHECK_EQ_U64(count, 10000);
		CHECK(ser.m[VT_M_CPU_USER_S][0].lo == 0);
		CHECK(fabs(ser.m[VT_M_CPU_USER_S][ser.n - 1].hi - last_cpu) < 1e-9);
	}
	vt_series_free(&ser);
}

/* A new pid is a new incarnation; a gap ends a point even when bins are wide. */
static void test_store__restart_and_gap_split_points(void)
{
	struct vt_store *st = create("rs.db", 1);
	struct vt_series ser;
	struct vt_err err;
	size_t i, from, to;

	for (i = 0; i < 100; i++)
		row(st, (double)i, 42, 100 * MiB, 0);
	for (i = 100; i < 200; i++)
		row(st, (double)i, 43, 50 * MiB, 0);
	for (i = 260; i < 300; i++)      /* a 60 s gap */
		row(st, (double)i, 43, 50 * MiB, 0);
	CHECK(vt_store_close(st, &err) == VT_OK);
	vt_series_init(&ser);
	CHECK(vt_store_load(path_of("rs.db"), 10, &ser, &err) == VT_OK);
	for (i = 0; i < ser.n; i++) {
		CHECK(ser.pid[i] == (ser.incarnation[i] ? 43 : 42));
		CHECK(!(ser.t0[i] < 200 && ser.t1[i] >= 260));
	}
	vt_series_last_incarnation(&ser, &from, &to);
	CHECK(ser.pid[from] == 43 && to == ser.n);
	CHECK(from > 0 && ser.pid[from - 1] == 42);
	vt_series_free(&ser);
}

/*
 * Three hours at 10 s: a restart at 1 h, a 5 min gap at 2 h, Pss in one
 * sample of 7 (a metric some samples lack), a counter, a 20 MiB step.
 */
static void long_recording(const char *name)
{
	struct vt_store *st = create(name, 10);
	struct vt_err err;
	size_t i;
	int m;

	for (i = 0; i < 1080; i++) {
		double t = (double)i * 10;
		struct vt_store_sample s = { .t = t, .wall = 1.7e9 + t, .pid = t < 3600 ? 42 : 43 };

		if (t >= 7200 && t < 7500)
			continue;
		for (m = 0; m < VT_M_COUNT; m++)
			s.v[m] = NAN;
		s.v[VT_M_COMMITTED] = 300 * MiB + (double)((i * 7919) % 1000) * 1024 + (t > 5000 ? 20 * MiB : 0);
		s.v[VT_M_RSS_ANON] = s.v[VT_M_COMMITTED] - 4096;
		s.v[VT_M_CPU_USER_S] = (t < 3600 ? t : t - 3600) * 0.013;
		if (i % 7 == 0)
			s.v[VT_M_PSS] = 200 * MiB + (double)i * 4096;
		CHECK(vt_store_append(st, &s, NULL, 0, &err) == VT_OK);
	}
	CHECK(vt_store_close(st, &err) == VT_OK);
}

static void sql_or_fail(const char *name, const char *sql)
{
	sqlite3 *db;

	CHECK(sqlite3_open(path_of(name), &db) == SQLITE_OK);
	CHECK(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(db);
}

/* A copy of recording from as to. */
static void copy_recording(const char *from, const char *to)
{
	char sql[512];

	unlink(path_of(to));
	snprintf(sql, sizeof(sql), "VACUUM INTO '%s'", path_of(to));
	sql_or_fail(from, sql);
}

/* The same points, figure for figure (means to rounding). */
static void check_same_points(const struct vt_series *a, const struct vt_series *b)
{
	size_t i;
	int m;

	CHECK_EQ_U64(a->n, b->n);
	CHECK_EQ_U64(a->samples, b->samples);
	for (i = 0; i < a->n && i < b->n; i++) {
		CHECK(a->t0[i] == b->t0[i] && a->t1[i] == b->t1[i] && a->count[i] == b->count[i]);
		CHECK(a->pid[i] == b->pid[i] && a->incarnation[i] == b->incarnation[i] && a->wall[i] == b->wall[i]);
		CHECK(fabs(a->t[i] - b->t[i]) < 1e-6);
		for (m = 0; m < VT_M_COUNT; m++) {
			const struct vt_stat *x, *y;

			CHECK(!a->m[m] == !b->m[m]);
			if (!a->m[m] || !b->m[m])
				continue;
			x = &a->m[m][i];
			y = &b->m[m][i];
			CHECK((isnan(x->lo) && isnan(y->lo)) || x->lo == y->lo);
			CHECK((isnan(x->hi) && isnan(y->hi)) || x->hi == y->hi);
			CHECK((isnan(x->mean) && isnan(y->mean)) || fabs(x->mean - y->mean) <= 1e-9 * fabs(x->mean));
		}
	}
}

static void load_ok(const char *name, size_t max_points, struct vt_series *s)
{
	struct vt_err err;

	vt_series_init(s);
	CHECK(vt_store_load(path_of(name), max_points, s, &err) == VT_OK);
}

/*
 * Points a minute wide or more come from the rollups, and are the points
 * the samples give: across a restart, a gap, a metric some samples lack;
 * with the last minutes never rolled up (a soak killed); and from the
 * samples alone when a rollup is damaged.
 */
static void test_store__rollups_give_the_samples_points(void)
{
	struct vt_series raw, ru, tail, bad;
	size_t i;
	bool stepped = false;

	long_recording("ru.db");
	copy_recording("ru.db", "raw.db");
	sql_or_fail("raw.db", "DELETE FROM rollups");
	copy_recording("ru.db", "tail.db");
	sql_or_fail("tail.db", "DELETE FROM rollups WHERE id > (SELECT max(id) - 10 FROM rollups)");
	copy_recording("ru.db", "bad.db");
	sql_or_fail("bad.db", "UPDATE rollups SET n = n + 1 WHERE id = 30");

	load_ok("raw.db", 60, &raw);
	load_ok("ru.db", 60, &ru);
	load_ok("tail.db", 60, &tail);
	load_ok("bad.db", 60, &bad);
	CHECK(raw.info.rollups == 0 && !raw.info.rollups_damaged);
	/* 1,050 samples: 180 minutes but the 5 of the gap (the restart falls on a minute) */
	CHECK_EQ_U64(ru.info.rollups, 175);
	CHECK_EQ_U64(tail.info.rollups, ru.info.rollups - 10);
	CHECK(bad.info.rollups == 0 && bad.info.rollups_damaged);
	CHECK(raw.n > 40 && raw.n < 80);
	check_same_points(&raw, &ru);
	check_same_points(&raw, &tail);
	check_same_points(&raw, &bad);
	for (i = 0; i < ru.n; i++) {
		CHECK(!(ru.t0[i] < 7200 && ru.t1[i] >= 7500));
		CHECK(ru.pid[i] == (ru.t0[i] < 3600 ? 42 : 43));
		stepped = stepped || ru.m[VT_M_COMMITTED][i].lo >= 320 * MiB;
	}
	CHECK(stepped);
	CHECK(ru.m[VT_M_PSS] != NULL);
	/* 2.5 min points hold whole minutes, never more than the 2.5 min asked */
	vt_series_free(&ru);
	load_ok("ru.db", 72, &ru);
	CHECK(ru.info.rollups == 175 && ru.samples == 1050);
	for (i = 0; i < ru.n; i++)
		CHECK(ru.t1[i] - ru.t0[i] < 10790.0 / 72);
	/* asked for no more than 4 points a minute: minute points, from the rollups */
	vt_series_free(&ru);
	load_ok("ru.db", 600, &ru);
	CHECK(ru.info.rollups == 175 && ru.n == 175);
	/* more than that: the samples, rollups or not */
	vt_series_free(&ru);
	load_ok("ru.db", 800, &ru);
	CHECK(ru.info.rollups == 0 && ru.n > 400);
	vt_series_free(&ru);
	load_ok("ru.db", 0, &ru);
	CHECK(ru.info.rollups == 0 && ru.n == 1050);
	vt_series_free(&raw);
	vt_series_free(&ru);
	vt_series_free(&tail);
	vt_series_free(&bad);
}

/* Rows of table rollups in a that b lacks, and the other way round. */
static long rollups_differ(const char *a, const char *b)
{
	sqlite3 *db;
	sqlite3_stmt *q;
	char sql[512];
	long n = -1;

	CHECK(sqlite3_open(path_of(a), &db) == SQLITE_OK);
	snprintf(sql, sizeof(sql), "ATTACH '%s' AS other", path_of(b));
	CHECK(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK);
	CHECK(sqlite3_prepare_v2(db, "SELECT (SELECT count(*) FROM (SELECT * FROM main.rollups EXCEPT"
				 " SELECT * FROM other.rollups)) + (SELECT count(*) FROM (SELECT * FROM"
				 " other.rollups EXCEPT SELECT * FROM main.rollups)), (SELECT count(*) FROM"
				 " main.rollups)", -1, &q, NULL) == SQLITE_OK);
	if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int64(q, 1) > 0)
		n = (long)sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	sqlite3_close(db);
	return n;
}

/* A rebuild writes the rollups a soak writes as it goes; a file from before them (schema 3) gets them. */
static void test_store__rebuilt_rollups_are_the_soaks(void)
{
	struct vt_series s;
	struct vt_err err;

	long_recording("soak.db");
	copy_recording("soak.db", "again.db");
	CHECK(vt_store_rebuild_rollups(path_of("again.db"), &err) == VT_OK);
	CHECK(rollups_differ("soak.db", "again.db") == 0);

	copy_recording("soak.db", "v3.db");
	sql_or_fail("v3.db", "DROP TABLE rollups; PRAGMA user_version=3");
	load_ok("v3.db", 60, &s);
	CHECK(s.info.schema == 3 && s.info.rollups == 0 && s.n > 40);
	vt_series_free(&s);
	CHECK(vt_store_rebuild_rollups(path_of("v3.db"), &err) == VT_OK);
	CHECK(rollups_differ("soak.db", "v3.db") == 0);
	load_ok("v3.db", 60, &s);
	CHECK(s.info.schema == VT_STORE_SCHEMA && s.info.rollups > 0);
	vt_series_free(&s);

	/* not a recording: refused, untouched */
	sql_or_fail("foreign.db", "CREATE TABLE x(a)");
	CHECK(vt_store_rebuild_rollups(path_of("foreign.db"), &err) == VT_E_RECORDING);
}

static void test_store__refuses_what_is_not_a_recording(void)
{
	struct vt_series ser;
	struct vt_err err;
	sqlite3 *db;
	FILE *f;

	f = fopen(path_of("text.db"), "w");
	fputs("this is not a database, but it is long enough to look like a file header...........\n", f);
	fclose(f);
	vt_series_init(&ser);
	CHECK(vt_store_load(path_of("text.db"), 0, &ser, &err) == VT_E_RECORDING);
	CHECK(strstr(err.msg, "not a SQLite file") != NULL);

	CHECK(sqlite3_open(path_of("other.db"), &db) == SQLITE_OK);
	sqlite3_exec(db, "CREATE TABLE x(y)", NULL, NULL, NULL);
	sqlite3_close(db);
	CHECK(vt_store_load(path_of("other.db"), 0, &ser, &err) == VT_E_RECORDING);
	CHECK(strstr(err.msg, "not a vitals recording") != NULL);

	vt_store_close(create("newer.db", 1), &err);
	CHECK(sqlite3_open(path_of("newer.db"), &db) == SQLITE_OK);
	sqlite3_exec(db, "PRAGMA user_version=99", NULL, NULL, NULL);
	sqlite3_close(db);
	CHECK(vt_store_load(path_of("newer.db"), 0, &ser, &err) == VT_E_RECORDING);
	CHECK(strstr(err.msg, "newer vitals") != NULL);

	CHECK(vt_store_load(path_of("missing.db"), 0, &ser, &err) == VT_E_NOTFOUND);
	CHECK(ser.n == 0 && ser.m[VT_M_COMMITTED] == NULL);
}

static void test_store__existing_file_needs_overwrite(void)
{
	struct vt_recording_info info = { 0 };
	struct vt_store *st = NULL;
	struct vt_err err;
	FILE *f = fopen(path_of("keep.db"), "w");

	fputs("precious", f);
	fclose(f);
	CHECK(vt_store_create(path_of("keep.db"), &info, false, &st, &err) == VT_E_USAGE);
	CHECK(st == NULL);
	CHECK(access(path_of("keep.db"), F_OK) == 0);
	CHECK(vt_store_create(path_of("no/such/dir.db"), &info, false, &st, &err) != VT_OK);
	CHECK(st == NULL);
}

/* An empty recording loads as zero points, not an error. */
static void test_store__empty_recording_loads(void)
{
	struct vt_series ser;
	struct vt_err err;

	CHECK(vt_store_close(create("empty.db", 1), &err) == VT_OK);
	vt_series_init(&ser);
	CHECK(vt_store_load(path_of("empty.db"), 0, &ser, &err) == VT_OK);
	CHECK_EQ_U64(ser.n, 0);
	vt_series_free(&ser);
}

/* Set meta key to a raw SQL value in a copy of a good recording; load it. */
static int load_with_meta(const char *key, const char *sql_value, struct vt_err *err)
{
	struct vt_series ser;
	char sql[256];
	sqlite3 *db;
	int rc;

	vt_store_close(create("meta.db", 1), err);
	CHECK(sqlite3_open(path_of("meta.db"), &db) == SQLITE_OK);
	snprintf(sql, sizeof(sql), "UPDATE meta SET value = %s WHERE key = '%s'", sql_value, key);
	CHECK(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK);
	CHECK(sqlite3_changes(db) == 1);
	sqlite3_close(db);
	vt_series_init(&ser);
	rc = vt_store_load(path_of("meta.db"), 0, &ser, err);
	vt_series_free(&ser);
	return rc;
}

/*
 * A meta value that cannot be (NULL: fuzz_store crashed on it; a blob, text
 * that is not a number, a number out of range) is a damaged recording that
 * names the key; the values written by vt_store_create read back.
 */
static void test_store__meta_values_are_checked(void)
{
	static const struct {
		const char *key, *value;
	} bad[] = {
		{ "ncpus", "NULL" }, { "target", "NULL" }, { "every_s", "NULL" }, { "heap", "NULL" },
		{ "host", "x'00ff'" }, { "arm", "'a' || char(0) || 'b'" }, { "ncpus", "'two'" },
		{ "ncpus", "'2.5'" }, { "ncpus", "-7" }, { "ncpus", "'99999999999'" }, { "every_s", "'nan'" },
		{ "every_s", "'inf'" }, { "every_s", "-1" }, { "every_s", "''" }, { "planned_s", "'1e300'" },
		{ "started_wall", "'-5'" }, { "smaps_every_s", "'10 s'" }, { "heap", "2" },
		{ "format", "'something-else'" },
	};
	struct vt_series ser;
	struct vt_err err;
	size_t i;
	sqlite3 *db;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = load_with_meta(bad[i].key, bad[i].value, &err);

		if (rc != VT_E_RECORDING || !strstr(err.msg, bad[i].key))
			printf("#   meta %s = %s: rc %d, \"%s\"\n", bad[i].key, bad[i].value, rc, err.msg);
		CHECK(rc == VT_E_RECORDING);
		CHECK(strstr(err.msg, bad[i].key) != NULL && strstr(err.msg, "damaged") != NULL);
	}
	/* a key that is not text */
	vt_store_close(create("meta.db", 1), &err);
	CHECK(sqlite3_open(path_of("meta.db"), &db) == SQLITE_OK);
	CHECK(sqlite3_exec(db, "INSERT INTO meta(key, value) VALUES(x'01', '1')", NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(db);
	vt_series_init(&ser);
	CHECK(vt_store_load(path_of("meta.db"), 0, &ser, &err) == VT_E_RECORDING);
	CHECK(strstr(err.msg, "meta key") != NULL);
	/* numbers stored as numbers, and keys a newer vitals may add, are fine */
	CHECK(load_with_meta("ncpus", "4", &err) == VT_OK);
	CHECK(load_with_meta("every_s", "0.25", &err) == VT_OK);
	vt_store_close(create("meta.db", 1), &err);
	CHECK(sqlite3_open(path_of("meta.db"), &db) == SQLITE_OK);
	CHECK(sqlite3_exec(db, "INSERT INTO meta(key, value) VALUES('from_the_future', NULL)", NULL, NULL, NULL) ==
	      SQLITE_OK);
	sqlite3_close(db);
	CHECK(vt_store_load(path_of("meta.db"), 0, &ser, &err) == VT_OK);
	CHECK(ser.info.ncpus == 2 && ser.info.every_s == 1 && !strcmp(ser.info.target, "pid 42") &&
	      ser.info.started_wall == 1.7e9);
	vt_series_free(&ser);
}

static bool exists(const char *name)
{
	struct stat sb;

	return lstat(path_of(name), &sb) == 0;
}

static void write_file(const char *name, const char *text)
{
	FILE *f = fopen(path_of(name), "w");

	fputs(text, f);
	fclose(f);
}

static bool file_says(const char *name, const char *text)
{
	char buf[64] = "";
	FILE *f = fopen(path_of(name), "r");

	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return strcmp(buf, text) == 0;
}

/*
 * A symbolic link planted where the recording goes is never written
 * through: refused without overwrite (a dangling one used to be followed,
 * creating its target), replaced with it (the link goes, not its target).
 */
static void test_store__symlinks_are_not_followed(void)
{
	struct vt_recording_info info = { 0 };
	struct vt_store *st = NULL;
	struct vt_err err;
	struct stat sb;
	char target[256];

	write_file("victim", "precious");
	snprintf(target, sizeof(target), "%s", path_of("victim"));
	CHECK(symlink(target, path_of("link.db")) == 0);
	CHECK(vt_store_create(path_of("link.db"), &info, false, &st, &err) == VT_E_USAGE && st == NULL);
	CHECK(file_says("victim", "precious"));

	snprintf(target, sizeof(target), "%s", path_of("made-through-link"));
	CHECK(symlink(target, path_of("dangling.db")) == 0);
	CHECK(vt_store_create(path_of("dangling.db"), &info, false, &st, &err) == VT_E_USAGE && st == NULL);
	CHECK(!exists("made-through-link"));

	CHECK(vt_store_create(path_of("link.db"), &info, true, &st, &err) == VT_OK);
	CHECK(vt_store_close(st, &err) == VT_OK);
	CHECK(file_says("victim", "precious"));
	CHECK(lstat(path_of("link.db"), &sb) == 0 && S_ISREG(sb.st_mode));

	/* a -wal planted beside a new recording is not replayed into it, nor written through */
	snprintf(target, sizeof(target), "%s", path_of("victim"));
	CHECK(symlink(target, path_of("side.db-wal")) == 0);
	st = create("side.db", 1);
	row(st, 0, 42, 1, 0);
	CHECK(vt_store_close(st, &err) == VT_OK);
	CHECK(file_says("victim", "precious"));
}

/* A recording being written is locked: a second writer is refused, overwrite or not, and told who writes it. */
static void test_store__one_writer_at_a_time(void)
{
	struct vt_recording_info info = { 0 };
	struct vt_store *st = create("busy.db", 1), *st2 = NULL;
	struct vt_series ser;
	struct vt_err err;
	char pid[32];

	row(st, 0, 42, 100 * MiB, 0);
	CHECK(vt_store_create(path_of("busy.db"), &info, true, &st2, &err) == VT_E_USAGE && st2 == NULL);
	CHECK(strstr(err.msg, "being written") != NULL);
	snprintf(pid, sizeof(pid), "process %d", (int)getpid());
	CHECK(strstr(err.msg, pid) != NULL);
	CHECK(vt_store_create(path_of("busy.db"), &info, false, &st2, &err) == VT_E_USAGE && st2 == NULL);
	CHECK(strstr(err.msg, "being written") != NULL);
	/* and it still holds what was written */
	row(st, 1, 42, 100 * MiB, 0);
	CHECK(vt_store_close(st, &err) == VT_OK);
	vt_series_init(&ser);
	CHECK(vt_store_load(path_of("busy.db"), 0, &ser, &err) == VT_OK);
	CHECK_EQ_U64(ser.samples, 2);
	vt_series_free(&ser);
	/* once it is closed, overwrite may replace it */
	CHECK(vt_store_create(path_of("busy.db"), &info, true, &st2, &err) == VT_OK);
	CHECK(vt_store_close(st2, &err) == VT_OK);
}

/* A recording removed while it is written is an error at close, not a success. */
static void test_store__removed_while_written(void)
{
	struct vt_store *st = create("gone.db", 1);
	struct vt_err err;

	row(st, 0, 42, 1, 0);
	CHECK(unlink(path_of("gone.db")) == 0);
	CHECK(vt_store_close(st, &err) == VT_E_IO);
	CHECK(strstr(err.msg, "removed or replaced") != NULL);
}

/* Bytes 18 and 19 of a SQLite header: 2 in WAL mode, 1 with a rollback journal. */
static int header_mode(const char *name)
{
	unsigned char hdr[20] = { 0 };
	FILE *f = fopen(path_of(name), "rb");

	if (!f)
		return -1;
	if (fread(hdr, 1, sizeof(hdr), f) != sizeof(hdr))
		hdr[18] = 0;
	fclose(f);
	return hdr[18];
}

/*
 * A finished recording is one file that reads with no -wal or -shm (so on a
 * read-only mount, or as another user), and reading it creates none, not
 * even for a WAL-mode file of an older vitals.
 */
static void test_store__finished_recording_is_one_file(void)
{
	struct vt_store *st = create("one.db", 1);
	struct vt_series ser;
	struct vt_err err;
	sqlite3 *db;

	row(st, 0, 42, 1, 0);
	row(st, 1, 42, 2, 0);
	CHECK(vt_store_close(st, &err) == VT_OK);
	CHECK(!exists("one.db-wal") && !exists("one.db-shm"));
	CHECK(header_mode("one.db") == 1);
	vt_series_init(&ser);
	CHECK(vt_store_load(path_of("one.db"), 0, &ser, &err) == VT_OK);
	CHECK_EQ_U64(ser.samples, 2);
	CHECK(!ser.info.wal_unread);
	vt_series_free(&ser);
	CHECK(!exists("one.db-wal") && !exists("one.db-shm") && !exists("one.db-journal"));

	/* as an older vitals left it: WAL mode, no -wal */
	CHECK(sqlite3_open(path_of("one.db"), &db) == SQLITE_OK);
	CHECK(sqlite3_exec(db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(db);
	CHECK(header_mode("one.db") == 2 && !exists("one.db-wal"));
	CHECK(vt_store_load(path_of("one.db"), 0, &ser, &err) == VT_OK);
	CHECK_EQ_U64(ser.samples, 2);
	vt_series_free(&ser);
	CHECK(!exists("one.db-wal") && !exists("one.db-shm"));
}

/* Load name in a child that may not write in its folder (nobody, when we are root); its exit status. */
static int load_unprivileged(const char *name, bool want_wal_unread, size_t min, size_t max, int want_rc)
{
	pid_t child = fork();
	int status;

	if (child == 0) {
		struct vt_series ser;
		struct vt_err err;
		int rc;

		if (getuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
			_exit(10);
		vt_series_init(&ser);
		rc = vt_store_load(path_of(name), 0, &ser, &err);
		if (rc != want_rc) {
			printf("#   %s: rc %d: %s\n", name, rc, err.msg);
			_exit(11);
		}
		if (rc != VT_OK)
			_exit(strstr(err.msg, "-wal") ? 0 : 12);
		if (ser.info.wal_unread != want_wal_unread)
			_exit(13);
		if (ser.samples < min || ser.samples > max) {
			printf("#   %s: %zu samples\n", name, ser.samples);
			_exit(14);
		}
		vt_series_free(&ser);
		_exit(0);
	}
	if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* A soak killed with -9 after n samples: its WAL and -shm are left. */
static void killed_soak(const char *name, int n)
{
	pid_t child = fork();
	int i, status;

	if (child == 0) {
		struct vt_store *st = create(name, 1);

		for (i = 0; i < n; i++)
			row(st, i, 42, 100 * MiB, 0);
		_exit(0);
	}
	CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status));
}

/*
 * A recording in a folder the reader may not write (another user's, a
 * read-only mount) reads: a finished one in full; a WAL one left without
 * its -shm (none can be made there) without its WAL, saying so; one whose
 * samples are all still in the WAL (a soak killed early) is refused with
 * the reason.
 */
static void test_store__read_in_a_folder_not_ours(void)
{
	struct vt_err err;
	char cmd[1200];

	CHECK(chmod(dir, 0755) == 0);      /* mkdtemp's 0700 would keep nobody out altogether */
	vt_store_close(create("done.db", 1), &err);
	killed_soak("killed.db", 3000);     /* the WAL checkpoints every 1000 pages: part is in the file */
	CHECK(exists("killed.db-wal"));
	killed_soak("early.db", 1);
	snprintf(cmd, sizeof(cmd), "mkdir %s/ro && cp %s/done.db %s/killed.db %s/killed.db-wal %s/early.db "
		 "%s/early.db-wal %s/ro/ && chmod 0644 %s/ro/* && chmod 0555 %s/ro", dir, dir, dir, dir, dir, dir, dir,
		 dir, dir);
	CHECK(system(cmd) == 0);
	CHECK(load_unprivileged("ro/done.db", false, 0, 0, VT_OK) == 0);
	CHECK(load_unprivileged("ro/killed.db", true, 1, 2999, VT_OK) == 0);
	CHECK(load_unprivileged("ro/early.db", false, 0, 0, VT_E_PERM) == 0);
	/* nothing was left there, and beside its -shm the killed one reads in full */
	CHECK(!exists("ro/done.db-wal") && !exists("ro/done.db-shm") && !exists("ro/killed.db-shm"));
	CHECK(load_unprivileged("killed.db", false, 3000, 3000, VT_OK) == 0 || getuid() != 0);
	snprintf(cmd, sizeof(cmd), "chmod -R u+w %s", dir);
	CHECK(system(cmd) == 0);
}

static void setup(void)
{
	if (!mkdtemp(dir))
		abort();
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

static void test_store__setup(void)
{
	setup();
}

static void test_store__teardown(void)
{
	teardown();
}

/*
 * Every row of the per-thread counter table is a thread_samples column and
 * comes back as its delta; a recording made before a counter existed (its
 * column missing) loads with that counter unknown, the others intact.
 */
static void test_store__thread_counters_from_the_table(void)
{
	struct vt_store_sample s = { .t = 0, .wall = 1.7e9, .pid = 42 };
	struct vt_store_thread th = { .tid = 10, .name = "w" };
	struct vt_series ser;
	struct vt_err err;
	struct vt_store *st;
	char sql[128];
	sqlite3 *db;
	int m, k, pass;

	for (pass = 0; pass < 2; pass++) {
		const char *name = pass ? "tc-old.db" : "tc.db";

		st = create(name, 1);
		for (m = 0; m < VT_M_COUNT; m++)
			s.v[m] = NAN;
		for (k = 0; k < VT_TC_COUNT; k++)
			th.counter[k] = 1000 * (uint64_t)(k + 1);
		s.t = 0;
		CHECK(vt_store_append(st, &s, &th, 1, &err) == VT_OK);
		for (k = 0; k < VT_TC_COUNT; k++)
			th.counter[k] += 7 * (uint64_t)(k + 1);
		s.t = 2;
		CHECK(vt_store_append(st, &s, &th, 1, &err) == VT_OK);
		CHECK(vt_store_close(st, &err) == VT_OK);
		if (pass) {
			/* as if written before the table's last row existed */
			CHECK(sqlite3_open(path_of(name), &db) == SQLITE_OK);
			CHECK(sqlite3_exec(db, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL) == SQLITE_OK);
			snprintf(sql, sizeof(sql), "ALTER TABLE thread_samples DROP COLUMN %s",
				 vt_thread_counters[VT_TC_COUNT - 1].column);
			CHECK(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK);
			sqlite3_close(db);
		}
		vt_series_init(&ser);
		CHECK(vt_store_load(path_of(name), 0, &ser, &err) == VT_OK);
		CHECK_EQ_U64(ser.nthreads, 1);
		for (k = 0; ser.nthreads == 1 && k < VT_TC_COUNT; k++) {
			if (pass && k == VT_TC_COUNT - 1)
				CHECK(!vt_known(ser.threads[0].delta[k]));
			else
				CHECK_EQ_U64(ser.threads[0].delta[k], 7 * (uint64_t)(k + 1));
		}
		vt_series_free(&ser);
	}
}

VT_TEST_MAIN(test_store__setup, test_store__round_trip, test_store__thread_counters_from_the_table,
	     test_store__thread_doing, test_store__process_starts,
	     test_store__schema_1_loads, test_store__binning_keeps_extremes,
	     test_store__restart_and_gap_split_points, test_store__rollups_give_the_samples_points,
	     test_store__rebuilt_rollups_are_the_soaks, test_store__refuses_what_is_not_a_recording,
	     test_store__existing_file_needs_overwrite, test_store__empty_recording_loads,
	     test_store__meta_values_are_checked, test_store__symlinks_are_not_followed,
	     test_store__one_writer_at_a_time, test_store__removed_while_written,
	     test_store__finished_recording_is_one_file, test_store__read_in_a_folder_not_ours,
	     test_store__teardown)

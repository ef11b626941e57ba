/*
 * soak_gen — a synthetic soak recording, for timing `vitals analyze` on a
 * long one (bench/soak).
 *
 *   soak_gen [--samples N] [--threads N] [--threads-every N] [--restarts N] FILE
 *
 * Defaults: 2,592,000 samples (30 days at 1 s), 32 threads whose counters
 * are written every 60 samples (as `vitals soak` does by default), one
 * restart 5 % into the span (at most on day 2: day 1.5 of 30).  FILE is
 * overwritten.
 *
 * The file is made by vt_store_create (src/store/store.h), so the schema,
 * application_id, user_version and meta are exactly those of a recording;
 * it is closed, then reopened with plain SQLite and the rows are inserted in
 * ONE transaction through prepared statements (vt_store_append commits
 * every sample: minutes for 2.6 million).  Column names come from
 * vt_metrics[].key (the recorded ones), values are bound the way store.c binds them
 * (integers for bytes and counts, reals for seconds, NULL where unknown).
 * The per-minute rollups a soak writes as it goes are then written by
 * vt_store_rebuild_rollups, the store's own code for them.
 *
 * The shape, per incarnation of the process:
 *   committed  a start that settles over about 3 hours onto a plateau of
 *              about 1.2 GiB, a daily load cycle of +-2 %, noise, and rare
 *              short spikes;
 *   swap       every 5 days a push/pull episode: up to 150 MiB of RssAnon
 *              paged out over 2 hours and back in over 6, committed flat;
 *   arenas     1 at the start, 9 within the first 10 minutes; 64 MiB
 *              regions twice the non-main arenas;
 *   threads    32, plus 4 short-lived workers for 30 s every 10 minutes;
 *   CPU        cumulative user and system seconds at 100 Hz resolution;
 *   Pss        only every 600 samples (the default smaps cadence);
 *   heap_*     NULL (no agent).
 * A restart is a gap of 5 s, a new pid and counters starting over, with the
 * EXIT and RESTART events vitals records; a STOP event ends the recording.
 *
 * Prints "samples N", "thread_rows N", "seconds S" (the generation's wall
 * time, rollups included), "rollup_seconds S" (the rollups' part) and
 * "bytes N" (the file's size).  Built and run by bench/soak.
 */
#include "sample/series.h"
#include "store/store.h"

#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define MIB (1024.0 * 1024.0)

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* xorshift64*: deterministic, fast */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static double urand(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (double)((rng_state * 0x2545f4914f6cdd1dull) >> 11) / 9007199254740992.0;
}

/* roughly normal, mean 0, sd 1 (sum of 4 uniforms) */
static double nrand(void)
{
	return (urand() + urand() + urand() + urand() - 2.0) * 1.7320508;
}

static void die_db(sqlite3 *db, const char *what)
{
	fprintf(stderr, "soak_gen: %s: %s\n", what, db ? sqlite3_errmsg(db) : "?");
	exit(2);
}

static void exec_or_die(sqlite3 *db, const char *sql)
{
	if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
		die_db(db, sql);
}

static sqlite3_stmt *prep(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *q;

	if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
		die_db(db, sql);
	return q;
}

static void step_or_die(sqlite3 *db, sqlite3_stmt *q, const char *what)
{
	if (sqlite3_step(q) != SQLITE_DONE)
		die_db(db, what);
	sqlite3_reset(q);
}

static void add_event(sqlite3 *db, sqlite3_stmt *q, double t, double wall, enum vt_event_kind kind,
		      int pid, const char *detail)
{
	sqlite3_bind_double(q, 1, t);
	sqlite3_bind_double(q, 2, wall);
	sqlite3_bind_int(q, 3, (int)kind);
	sqlite3_bind_int64(q, 4, pid);
	sqlite3_bind_text(q, 5, detail, -1, SQLITE_TRANSIENT);
	step_or_die(db, q, "inserting an event");
}

/* One thread's cumulative counters in the current incarnation. */
struct gen_thread {
	int tid;
	double cpu_ns, wait_ns, vcsw, nvcsw;
	double cpu_rate;             /* ns of CPU per second */
};

static void usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: soak_gen [--samples N] [--threads N] [--threads-every N] [--restarts N] FILE\n");
	exit(status);
}

int main(int argc, char **argv)
{
	long long nsamples = 2592000, threads_every = 60;
	int nthreads = 32, restarts = 1, i, m, col;
	const char *path = NULL;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--samples") && i + 1 < argc)
			nsamples = atoll(argv[++i]);
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			nthreads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--threads-every") && i + 1 < argc)
			threads_every = atoll(argv[++i]);
		else if (!strcmp(argv[i], "--restarts") && i + 1 < argc)
			restarts = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			usage(0);
		else if (argv[i][0] != '-' && !path)
			path = argv[i];
		else
			usage(64);
	}
	if (!path || nsamples < 10 || nthreads < 0 || nthreads > 10000 || threads_every < 1 || restarts < 0)
		usage(64);

	double t_start = mono();
	const double every = 1.0;
	const double span = (double)nsamples * every;
	const double started_wall = (double)time(NULL) - span;

	/* ---- the file, as vitals makes it ---- */
	struct vt_recording_info info = { 0 };
	struct vt_store *st;
	struct vt_err err;

	info.schema = VT_STORE_SCHEMA;
	snprintf(info.vitals_version, sizeof(info.vitals_version), "bench-soak-gen");
	snprintf(info.target, sizeof(info.target), "--name synthetic-service");
	snprintf(info.host, sizeof(info.host), "bench-synthetic");
	info.ncpus = 8;
	info.every_s = every;
	info.smaps_every_s = 600;
	info.planned_s = span;
	info.started_wall = started_wall;
	if (vt_store_create(path, &info, true, &st, &err) != VT_OK) {
		fprintf(stderr, "soak_gen: %s\n", err.msg);
		return 2;
	}
	if (vt_store_close(st, &err) != VT_OK) {
		fprintf(stderr, "soak_gen: %s\n", err.msg);
		return 2;
	}

	/* ---- the rows, in bulk ---- */
	sqlite3 *db;
	char sql[2048];
	size_t len;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
		die_db(db, "opening");
	/* No journal to speak of during the load (a new file: nothing to roll
	 * back to that matters); WAL again afterwards, as vitals leaves it. */
	exec_or_die(db, "PRAGMA journal_mode=DELETE; PRAGMA synchronous=OFF; PRAGMA cache_size=-65536;");

	len = (size_t)snprintf(sql, sizeof(sql), "INSERT INTO samples(id, t, wall, pid, read_ms");
	for (m = 0; m < VT_M_COUNT; m++)
		if (vt_metrics[m].flags & VT_MF_RECORDED)
			len += (size_t)snprintf(sql + len, sizeof(sql) - len, ", %s", vt_metrics[m].key);
	len += (size_t)snprintf(sql + len, sizeof(sql) - len, ") VALUES(?, ?, ?, ?, ?");
	for (m = 0; m < VT_M_COUNT; m++)
		if (vt_metrics[m].flags & VT_MF_RECORDED)
			len += (size_t)snprintf(sql + len, sizeof(sql) - len, ", ?");
	snprintf(sql + len, sizeof(sql) - len, ")");
	sqlite3_stmt *ins = prep(db, sql);
	sqlite3_stmt *ins_ev = prep(db, "INSERT INTO events(t, wall, kind, pid, detail) VALUES(?, ?, ?, ?, ?)");
	sqlite3_stmt *ins_th = prep(db, "INSERT OR REPLACE INTO threads(pid, tid, name) VALUES(?, ?, ?)");
	sqlite3_stmt *ins_ts = prep(db, "INSERT INTO thread_samples(sample_id, tid, pid, cpu_ns, wait_ns,"
				    " vcsw, nvcsw) VALUES(?, ?, ?, ?, ?, ?, ?)");

	struct gen_thread *th = calloc((size_t)nthreads + 1, sizeof(*th));
	if (!th)
		return 2;

	/* restarts: the first 5 % in (at most on day 2), the others spread after it */
	long long restart_at[64];
	int nrestart = restarts > 63 ? 63 : restarts, r = 0;

	for (i = 0; i < nrestart; i++)
		restart_at[i] = i == 0 ? (long long)fmin(2 * 86400 / every, (double)nsamples * 0.05)
				       : restart_at[0] + (nsamples - restart_at[0]) * i / (nrestart + 1);
	restart_at[nrestart] = -1;

	exec_or_die(db, "BEGIN");
	int pid = 4242;
	double t = 0, inc_t0 = 0, cpu_user = 0, cpu_sys = 0;
	long long thread_rows = 0, s;
	char detail[200];

	add_event(db, ins_ev, 0, started_wall, VT_EV_START, pid, "sampling process 4242 every 1 s");
	for (s = 0; s < nsamples; s++) {
		bool restart = r < nrestart && s == restart_at[r];
		bool last_of_inc = s == nsamples - 1 || (r < nrestart && s + 1 == restart_at[r]);

		if (restart) {
			add_event(db, ins_ev, t + 0.5, started_wall + t + 0.5, VT_EV_EXIT, pid,
				  "process exited");
			t += 5.0;       /* the service was down for 5 s */
			pid += 1000;
			snprintf(detail, sizeof(detail), "followed: process %d after 5 s", pid);
			add_event(db, ins_ev, t, started_wall + t, VT_EV_RESTART, pid, detail);
			inc_t0 = t;
			cpu_user = cpu_sys = 0;
			r++;
		}
		if (s == 0 || restart) {
			for (i = 0; i < nthreads; i++) {
				th[i] = (struct gen_thread){ .tid = pid + i,
							      .cpu_rate = 1e6 * (1 + 60 * urand() * urand()) };
				sqlite3_bind_int64(ins_th, 1, pid);
				sqlite3_bind_int64(ins_th, 2, th[i].tid);
				snprintf(detail, sizeof(detail), i == 0 ? "service" : "worker-%d", i);
				sqlite3_bind_text(ins_th, 3, detail, -1, SQLITE_TRANSIENT);
				step_or_die(db, ins_th, "inserting a thread");
			}
		}

		double x = t - inc_t0;                  /* seconds into this incarnation */
		double day = fmod(t / 86400.0, 1.0);
		double committed = 80 * MIB + 1100 * MIB * (1 - exp(-x / 10800.0)) +
				   1100 * MIB * 0.02 * sin(2 * M_PI * day) + 6 * MIB * nrand();
		if (urand() < 1e-4)
			committed += 40 * MIB * urand();  /* a short spike */
		/* swap push/pull: every 5 days from day 1, 2 h out, 6 h back */
		double swap = 0, ep = fmod(t - 86400.0, 5 * 86400.0);
		if (t >= 86400.0 && ep < 2 * 3600.0)
			swap = 150 * MIB * ep / (2 * 3600.0);
		else if (t >= 86400.0 && ep < 8 * 3600.0)
			swap = 150 * MIB * (1 - (ep - 2 * 3600.0) / (6 * 3600.0));
		swap = swap > committed * 0.5 ? committed * 0.5 : swap;
		double anon = committed - swap;
		double file = 24 * MIB + 0.2 * MIB * nrand();
		double arenas = x < 600 ? 1 + floor(8 * x / 600) : 9;
		double nthr = nthreads + (fmod(x, 600) < 30 ? 4 : 0);

		cpu_user += 0.04 * (1 + 0.5 * sin(2 * M_PI * day)) * every * (1 + 0.2 * nrand());
		cpu_sys += 0.008 * every * (1 + 0.2 * nrand());
		if (cpu_user < 0)
			cpu_user = 0;
		if (cpu_sys < 0)
			cpu_sys = 0;

		double v[VT_M_COUNT];
		for (m = 0; m < VT_M_COUNT; m++)
			v[m] = NAN;
		v[VT_M_COMMITTED] = anon + swap;
		v[VT_M_RSS_ANON] = anon;
		v[VT_M_RSS_FILE] = file;
		v[VT_M_RSS_SHMEM] = 0;
		v[VT_M_VM_RSS] = anon + file;
		v[VT_M_VM_SWAP] = swap;
		v[VT_M_VM_SIZE] = 2560 * MIB + arenas * 64 * MIB;
		v[VT_M_ARENAS] = arenas;
		v[VT_M_REGIONS_64M] = 2 * (arenas - 1);
		v[VT_M_THREADS] = nthr;
		v[VT_M_CPU_USER_S] = floor(cpu_user * 100) / 100;
		v[VT_M_CPU_SYS_S] = floor(cpu_sys * 100) / 100;
		v[VT_M_CG_CURRENT] = anon + file + 200 * MIB;
		v[VT_M_CG_SWAP] = swap;
		bool smaps = s % 600 == 0 || restart;
		if (smaps)
			v[VT_M_PSS] = (anon + file) * 0.98;

		sqlite3_bind_int64(ins, 1, s + 1);
		sqlite3_bind_double(ins, 2, t + 0.002 * urand());
		sqlite3_bind_double(ins, 3, started_wall + t + 0.002 * urand());
		sqlite3_bind_int64(ins, 4, pid);
		sqlite3_bind_double(ins, 5, smaps ? 25 + 5 * urand() : 0.6 + 0.3 * urand());
		for (m = 0, col = 6; m < VT_M_COUNT; m++) {
			if (!(vt_metrics[m].flags & VT_MF_RECORDED))
				continue;
			if (isnan(v[m]))
				sqlite3_bind_null(ins, col++);
			else if (vt_metrics[m].unit != VT_UNIT_SECONDS)
				sqlite3_bind_int64(ins, col++, (sqlite3_int64)llround(v[m]));
			else
				sqlite3_bind_double(ins, col++, v[m]);
		}
		step_or_die(db, ins, "inserting a sample");

		for (i = 0; i < nthreads; i++) {
			th[i].cpu_ns += th[i].cpu_rate * every * (1 + 0.3 * nrand());
			th[i].wait_ns += th[i].cpu_rate * 0.05 * every * urand();
			th[i].vcsw += 20 * urand();
			th[i].nvcsw += urand() < 0.1 ? 1 : 0;
		}
		if (nthreads && (s % threads_every == 0 || last_of_inc)) {
			for (i = 0; i < nthreads; i++) {
				sqlite3_bind_int64(ins_ts, 1, s + 1);
				sqlite3_bind_int64(ins_ts, 2, th[i].tid);
				sqlite3_bind_int64(ins_ts, 3, pid);
				sqlite3_bind_int64(ins_ts, 4, (sqlite3_int64)th[i].cpu_ns);
				sqlite3_bind_int64(ins_ts, 5, (sqlite3_int64)th[i].wait_ns);
				sqlite3_bind_int64(ins_ts, 6, (sqlite3_int64)th[i].vcsw);
				sqlite3_bind_int64(ins_ts, 7, (sqlite3_int64)th[i].nvcsw);
				step_or_die(db, ins_ts, "inserting a thread sample");
				thread_rows++;
			}
		}
		t += every;
	}
	snprintf(detail, sizeof(detail), "--for %g s reached", span);
	add_event(db, ins_ev, t, started_wall + t, VT_EV_STOP, pid, detail);
	exec_or_die(db, "COMMIT");
	sqlite3_finalize(ins);
	sqlite3_finalize(ins_ev);
	sqlite3_finalize(ins_th);
	sqlite3_finalize(ins_ts);
	exec_or_die(db, "PRAGMA journal_mode=WAL;");
	if (sqlite3_close(db) != SQLITE_OK)
		die_db(db, "closing");
	free(th);

	double t_rollups = mono();
	if (vt_store_rebuild_rollups(path, &err) != VT_OK) {
		fprintf(stderr, "soak_gen: %s\n", err.msg);
		return 2;
	}
	t_rollups = mono() - t_rollups;

	struct stat sb;
	if (stat(path, &sb) != 0) {
		perror(path);
		return 2;
	}
	printf("samples %lld\nthread_rows %lld\nseconds %.2f\nrollup_seconds %.2f\nbytes %lld\n", nsamples,
	       thread_rows, mono() - t_start, t_rollups, (long long)sb.st_size);
	return 0;
}

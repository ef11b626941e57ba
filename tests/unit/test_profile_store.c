/*
 * test_profile_store.c — profiles in a recording: what is written reads
 * back the same, field by field; a recording from before profiles opens
 * with none; a damaged profile is refused with VT_E_RECORDING saying what
 * is wrong, never read as something else.
 */
#include "harness.h"

#include "store/profile_store.h"
#include "store/store.h"

#include <math.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[] = "/tmp/vitals-test-profile-store-XXXXXX";

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

static uint32_t frame(struct vt_profile *p, const char *module, const char *fn, uint64_t pc, bool kernel)
{
	/* a C++ name keeps the symbol it was demangled from (a name of its own, as the profiler does) */
	char sym[96];
	uint32_t s = 0;
	if (strstr(fn, "::")) {
		snprintf(sym, sizeof(sym), "_ZN%s", fn);
		s = vt_profile_intern_str(p, sym);
	}
	uint32_t f = vt_profile_intern_func_sym(p, vt_profile_intern_str(p, fn), s, vt_profile_intern_str(p, module));

	return vt_profile_intern_loc(p, pc, pc & 0xfffff, f, kernel);
}

/* A profile with something in every field, every table and every corner: a
 * kernel address above INT64_MAX, a stack as deep as allowed, a truncated
 * one, one of no frames, a wall-mode wait, a thread never sampled. */
static struct vt_profile *build(int variant)
{
	struct vt_profile *p;
	struct vt_err err;
	uint32_t deep[VT_PROFILE_MAX_DEPTH], s3[3], k[2], inl[3], t1, t2, t3, mod, file;
	int i;

	CHECK(vt_profile_new(&p, &err) == VT_OK);
	p->meta.pid = 4242;
	snprintf(p->meta.comm, sizeof(p->meta.comm), "server");
	snprintf(p->meta.method, sizeof(p->meta.method), "perf cpu-clock");
	p->meta.hz = 99;
	p->meta.duration_s = 3.25 + variant;
	p->meta.wall = true;
	p->meta.wall_hz = 19.8;
	p->meta.lost = 7;
	p->meta.unwind_failed = 3;
	p->meta.kernel_symbols = true;
	p->meta.exited = variant == 1;
	p->meta.process_cpu_s = 1.5;
	p->meta.self_cpu_s = 0.02;
	p->meta.overhead = variant ? NAN : 0.004;
	snprintf(p->meta.overhead_how, sizeof(p->meta.overhead_how), "%s", variant ? "" : "cpu-clock ratio");

	mod = vt_profile_intern_module(p, "[kernel]", "/proc/kallsyms");
	p->modules[mod].symbols = VT_SYMS_KALLSYMS;
	p->modules[mod].frames[VT_UNWIND_KERNEL] = 1234;
	mod = vt_profile_intern_module(p, "libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6");
	p->modules[mod].symbols = VT_SYMS_DYNSYM;
	p->modules[mod].frames[VT_UNWIND_DWARF] = 99;
	p->modules[mod].frames[VT_UNWIND_FP] = (uint64_t)1 << 40;
	CHECK(vt_profile_module_set_debug(p, mod, VT_LINES_DEBUGFILE,
					  "/usr/lib/debug/.build-id/93/ac61ec5a8e.debug", NULL, NULL) == VT_OK);
	mod = vt_profile_intern_module(p, "app", "/srv/app");
	CHECK(vt_profile_module_set_debug(p, mod, VT_LINES_NONE, NULL, "/srv/.debug/app.debug",
					  "its build ID is not the module's") == VT_OK);

	t1 = vt_profile_intern_thread(p, 4242, "server");
	t2 = vt_profile_intern_thread(p, 4250, "worker-12");
	t3 = vt_profile_intern_thread(p, 4251, "worker-13");
	p->threads[t1].cpu_s = 0.75;
	p->threads[t2].cpu_s = 0.5;
	p->threads[t3].cpu_s = -1;            /* unknown */

	s3[0] = frame(p, "libc.so.6", "send", 0x7f0000001000ull, false);
	s3[1] = frame(p, "app", "json::dump(Value const&)", 0x401000, false);
	s3[2] = frame(p, "app", "main", 0x400500, false);
	k[0] = frame(p, "[kernel]", "tcp_sendmsg", 0xffffffff81000000ull, true);
	k[1] = s3[0];
	for (i = 0; i < VT_PROFILE_MAX_DEPTH; i++)
		deep[i] = frame(p, "app", "", 0x500000 + (uint64_t)i * 8, false);   /* no symbol */
	/* an address where the compiler inlined parse_number into parse_value, with source lines */
	file = vt_profile_intern_str(p, "/src/app/parse.c");
	inl[1] = frame(p, "app", "parse_value", 0x402000, false);
	p->locs[inl[1]].file = file;
	p->locs[inl[1]].line = 88;
	vt_profile_func_set_source(p, p->locs[inl[1]].func, file, 80);
	inl[0] = vt_profile_intern_loc_full(p, &(struct vt_prof_loc){
		.pc = 0x402000, .module_off = 0x2000, .file = file, .line = 31, .inlined_into = inl[1] + 1,
		.func = vt_profile_intern_func(p, vt_profile_intern_str(p, "parse_number"),
					       vt_profile_intern_str(p, "app")) });
	vt_profile_func_set_source(p, p->locs[inl[0]].func, file, 27);
	inl[2] = s3[2];
	CHECK(vt_profile_add(p, s3, 3, t1, VT_PROF_RUNNING, 0, false, 40 + (uint64_t)variant, &err) == VT_OK);
	CHECK(vt_profile_add(p, k, 2, t2, VT_PROF_RUNNING, 0, false, 12, &err) == VT_OK);
	CHECK(vt_profile_add(p, deep, VT_PROFILE_MAX_DEPTH, t2, VT_PROF_RUNNING, 0, true, 5, &err) == VT_OK);
	CHECK(vt_profile_add(p, s3 + 1, 2, t1, VT_PROF_SLEEPING, vt_profile_intern_str(p, "futex_wait_queue"),
			     false, 25, &err) == VT_OK);
	CHECK(vt_profile_add(p, s3, 0, t1, VT_PROF_DISK, 0, true, 1, &err) == VT_OK);   /* no frames */
	CHECK(vt_profile_add(p, inl, 3, t1, VT_PROF_RUNNING, 0, false, 9, &err) == VT_OK);
	return p;
}

/* Every field of a and b equal (the hash index aside). */
static void check_same(const struct vt_profile *a, const struct vt_profile *b)
{
	const struct vt_prof_meta *ma = &a->meta, *mb = &b->meta;
	uint32_t i;

	CHECK_EQ_I64(ma->pid, mb->pid);
	CHECK_STR(ma->comm, mb->comm);
	CHECK_STR(ma->method, mb->method);
	CHECK(ma->hz == mb->hz && ma->duration_s == mb->duration_s && ma->wall_hz == mb->wall_hz);
	CHECK(ma->wall == mb->wall && ma->kernel_symbols == mb->kernel_symbols && ma->exited == mb->exited);
	CHECK_EQ_U64(ma->samples, mb->samples);
	CHECK_EQ_U64(ma->lost, mb->lost);
	CHECK_EQ_U64(ma->unwind_failed, mb->unwind_failed);
	CHECK(ma->process_cpu_s == mb->process_cpu_s && ma->self_cpu_s == mb->self_cpu_s);
	CHECK(ma->overhead == mb->overhead || (isnan(ma->overhead) && isnan(mb->overhead)));
	CHECK_STR(ma->overhead_how, mb->overhead_how);

	CHECK_EQ_U64(a->nstrings, b->nstrings);
	for (i = 0; i < a->nstrings && i < b->nstrings; i++)
		CHECK_STR(a->strings[i], b->strings[i]);
	CHECK_EQ_U64(a->nfuncs, b->nfuncs);
	for (i = 0; i < a->nfuncs && i < b->nfuncs; i++)
		CHECK(a->funcs[i].name == b->funcs[i].name && a->funcs[i].module == b->funcs[i].module &&
		      a->funcs[i].system_name == b->funcs[i].system_name &&
		      a->funcs[i].file == b->funcs[i].file && a->funcs[i].line == b->funcs[i].line);
	CHECK_EQ_U64(a->nlocs, b->nlocs);
	for (i = 0; i < a->nlocs && i < b->nlocs; i++)
		CHECK(a->locs[i].pc == b->locs[i].pc && a->locs[i].module_off == b->locs[i].module_off &&
		      a->locs[i].func == b->locs[i].func && a->locs[i].kernel == b->locs[i].kernel &&
		      a->locs[i].file == b->locs[i].file && a->locs[i].line == b->locs[i].line &&
		      a->locs[i].inlined_into == b->locs[i].inlined_into);
	CHECK_EQ_U64(a->nstack_locs, b->nstack_locs);
	for (i = 0; i < a->nstack_locs && i < b->nstack_locs; i++)
		CHECK_EQ_U64(a->stack_locs[i], b->stack_locs[i]);
	CHECK_EQ_U64(a->nstacks, b->nstacks);
	for (i = 0; i < a->nstacks && i < b->nstacks; i++) {
		const struct vt_prof_stack *x = &a->stacks[i], *y = &b->stacks[i];

		CHECK(x->first == y->first && x->depth == y->depth && x->thread == y->thread &&
		      x->state == y->state && x->truncated == y->truncated && x->wait == y->wait &&
		      x->count == y->count);
	}
	CHECK_EQ_U64(a->nthreads, b->nthreads);
	for (i = 0; i < a->nthreads && i < b->nthreads; i++) {
		const struct vt_prof_thread *x = &a->threads[i], *y = &b->threads[i];

		CHECK(x->tid == y->tid && x->name == y->name && x->pool == y->pool && x->cpu_s == y->cpu_s &&
		      x->samples == y->samples);
	}
	CHECK_EQ_U64(a->nmodules, b->nmodules);
	for (i = 0; i < a->nmodules && i < b->nmodules; i++) {
		const struct vt_prof_module *x = &a->modules[i], *y = &b->modules[i];

		CHECK(x->name == y->name && x->path == y->path && x->symbols == y->symbols &&
		      memcmp(x->frames, y->frames, sizeof(x->frames)) == 0);
		CHECK(x->lines == y->lines && x->debug_file == y->debug_file &&
		      x->debug_ignored == y->debug_ignored && x->debug_ignored_why == y->debug_ignored_why);
	}
}

/* Two profiles in a recording with samples around them: listed in order, each read back the same. */
static void test_profile_store__round_trip(void)
{
	struct vt_store *st = create("rt.db");
	struct vt_profile *p[2] = { build(0), build(1) }, *q = NULL;
	struct vt_store_profile at = { .t = 12.5, .wall = 1.7e9 + 12.5 };
	struct vt_store_profiles *r = NULL;
	struct vt_store_sample s = { .t = 0, .wall = 1.7e9, .pid = 4242 };
	struct vt_series ser;
	struct vt_err err;
	int64_t id[2] = { 0, 0 };
	int m, i;

	for (m = 0; m < VT_M_COUNT; m++)
		s.v[m] = NAN;
	CHECK(vt_store_append(st, &s, NULL, 0, &err) == VT_OK);
	CHECK(vt_store_profile_append(st, &at, p[0], &id[0], &err) == VT_OK);
	/* readable while the soak goes on: the WAL holds it */
	CHECK(vt_store_profiles_open(path_of("rt.db"), &r, &err) == VT_OK);
	CHECK_EQ_U64(vt_store_profiles_count(r), 1);
	vt_store_profiles_close(&r);
	at.t = 22.5;
	at.wall += 10;
	at.partial = true;
	CHECK(vt_store_profile_append(st, &at, p[1], &id[1], &err) == VT_OK);
	CHECK(id[1] > id[0]);
	s.t = 30;
	CHECK(vt_store_append(st, &s, NULL, 0, &err) == VT_OK);
	CHECK(vt_store_close(st, &err) == VT_OK);

	CHECK(vt_store_profiles_open(path_of("rt.db"), &r, &err) == VT_OK);
	if (!r)
		return;
	CHECK_EQ_U64(vt_store_profiles_count(r), 2);
	for (i = 0; i < 2 && (size_t)i < vt_store_profiles_count(r); i++) {
		const struct vt_store_profile *info = vt_store_profiles_at(r, (size_t)i);

		CHECK_EQ_I64(info->id, id[i]);
		CHECK(info->t == (i ? 22.5 : 12.5) && info->wall == 1.7e9 + info->t);
		CHECK(info->partial == (i == 1) && info->exited == (i == 1));
		CHECK(info->duration_s == p[i]->meta.duration_s);
		CHECK_EQ_I64(info->pid, 4242);
		CHECK_EQ_U64(info->samples, p[i]->meta.samples);
		CHECK(vt_store_profiles_read(r, (size_t)i, &q, &err) == VT_OK);
		if (q)
			check_same(p[i], q);
		/* the profile read is a whole one: interning finds what is there */
		if (q) {
			uint32_t n = q->nstrings;

			CHECK_EQ_U64(vt_profile_intern_str(q, "json::dump(Value const&)"), vt_profile_intern_str(p[i], "json::dump(Value const&)"));
			CHECK_EQ_U64(q->nstrings, n);
		}
		vt_profile_free(&q);
	}
	CHECK(vt_store_profiles_read(r, 2, &q, &err) == VT_E_USAGE && !q);
	CHECK(vt_store_profiles_at(r, 2) == NULL);
	vt_store_profiles_close(&r);
	CHECK(r == NULL);
	/* the samples are untouched by the profiles beside them */
	vt_series_init(&ser);
	CHECK(vt_store_load(path_of("rt.db"), 0, &ser, &err) == VT_OK);
	CHECK_EQ_U64(ser.samples, 2);
	CHECK_EQ_U64(ser.info.schema, VT_STORE_SCHEMA);
	vt_series_free(&ser);
	vt_profile_free(&p[0]);
	vt_profile_free(&p[1]);
}

/* A recording written before profiles (schema 2: no profile tables) opens with none, and loads. */
static void test_profile_store__old_recording_has_none(void)
{
	struct vt_store *st = create("v2.db");
	struct vt_store_sample s = { .t = 0, .wall = 1.7e9, .pid = 42 };
	struct vt_store_profiles *r = NULL;
	struct vt_series ser;
	struct vt_err err;
	sqlite3 *db;
	int m;

	for (m = 0; m < VT_M_COUNT; m++)
		s.v[m] = NAN;
	CHECK(vt_store_append(st, &s, NULL, 0, &err) == VT_OK);
	CHECK(vt_store_close(st, &err) == VT_OK);
	CHECK(sqlite3_open(path_of("v2.db"), &db) == SQLITE_OK);
	CHECK(sqlite3_exec(db, "DROP TABLE profiles; DROP TABLE profile_strings; DROP TABLE profile_funcs;"
			       " DROP TABLE profile_locs; DROP TABLE profile_stacks; DROP TABLE profile_threads;"
			       " DROP TABLE profile_modules; PRAGMA user_version=2", NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(db);
	CHECK(vt_store_profiles_open(path_of("v2.db"), &r, &err) == VT_OK);
	CHECK(r && vt_store_profiles_count(r) == 0);
	vt_store_profiles_close(&r);
	vt_series_init(&ser);
	CHECK(vt_store_load(path_of("v2.db"), 0, &ser, &err) == VT_OK);
	CHECK_EQ_U64(ser.info.schema, 2);
	CHECK_EQ_U64(ser.samples, 1);
	vt_series_free(&ser);
	/* and what is not a recording is not read for profiles either */
	CHECK(vt_store_profiles_open(path_of("nothing-here.db"), &r, &err) == VT_E_NOTFOUND && !r);
}

/* A recording with one good profile to damage: its path. */
static void make_good(const char *name)
{
	struct vt_store *st = create(name);
	struct vt_profile *p = build(0);
	struct vt_store_profile at = { .t = 1, .wall = 1.7e9 };
	struct vt_err err;

	CHECK(vt_store_profile_append(st, &at, p, NULL, &err) == VT_OK);
	CHECK(vt_store_close(st, &err) == VT_OK);
	vt_profile_free(&p);
}

/* A recording from before source lines and debug files per module (no such
 * columns) is read: names, modules and stacks as written, no lines known. */
static void test_profile_store__older_columns_are_optional(void)
{
	struct vt_store_profiles *r = NULL;
	struct vt_profile *want = build(0), *got = NULL;
	struct vt_err err = { 0 };
	sqlite3 *db;

	make_good("older.db");
	CHECK(sqlite3_open(path_of("older.db"), &db) == SQLITE_OK);
	CHECK(sqlite3_exec(db, "ALTER TABLE profile_modules DROP COLUMN lines;"
			       " ALTER TABLE profile_modules DROP COLUMN debug_file;"
			       " ALTER TABLE profile_modules DROP COLUMN debug_ignored;"
			       " ALTER TABLE profile_modules DROP COLUMN debug_ignored_why;"
			       " ALTER TABLE profile_locs DROP COLUMN file; ALTER TABLE profile_locs DROP COLUMN line;"
			       " ALTER TABLE profile_locs DROP COLUMN inlined_into;"
			       " ALTER TABLE profile_funcs DROP COLUMN system_name;"
			       " ALTER TABLE profile_funcs DROP COLUMN file; ALTER TABLE profile_funcs DROP COLUMN line",
			   NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(db);
	CHECK(vt_store_profiles_open(path_of("older.db"), &r, &err) == VT_OK);
	CHECK(vt_store_profiles_read(r, 0, &got, &err) == VT_OK);
	if (got) {
		CHECK_EQ_U64(got->nmodules, want->nmodules);
		CHECK_EQ_U64(got->nstacks, want->nstacks);
		for (uint32_t i = 0; i < got->nmodules && i < want->nmodules; i++) {
			CHECK(strcmp(vt_profile_str(got, got->modules[i].name),
				     vt_profile_str(want, want->modules[i].name)) == 0);
			CHECK(got->modules[i].lines == VT_LINES_UNKNOWN && !got->modules[i].debug_file &&
			      !got->modules[i].debug_ignored);
		}
		for (uint32_t i = 0; i < got->nlocs; i++)
			CHECK(!got->locs[i].file && !got->locs[i].line && !got->locs[i].inlined_into);
	}
	vt_profile_free(&got);
	vt_profile_free(&want);
	vt_store_profiles_close(&r);
	unlink(path_of("older.db"));
}

/*
 * Each damage, done to a good recording, is refused with VT_E_RECORDING
 * (when it is listed or when the profile is read) and a message holding
 * `says`; never a profile.
 */
static void check_refused(const char *sql, const char *says)
{
	struct vt_store_profiles *r = NULL;
	struct vt_profile *p = NULL;
	struct vt_err err = { 0 };
	sqlite3 *db;
	int rc;

	make_good("bad.db");
	CHECK(sqlite3_open(path_of("bad.db"), &db) == SQLITE_OK);
	rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		printf("#   cannot damage it with \"%s\": %s\n", sql, sqlite3_errmsg(db));
	CHECK(rc == SQLITE_OK);
	sqlite3_close(db);
	rc = vt_store_profiles_open(path_of("bad.db"), &r, &err);
	if (rc == VT_OK) {
		CHECK_EQ_U64(vt_store_profiles_count(r), 1);
		rc = vt_store_profiles_read(r, 0, &p, &err);
		CHECK(p == NULL);
		vt_profile_free(&p);
		vt_store_profiles_close(&r);
	}
	if (rc != VT_E_RECORDING || !strstr(err.msg, says))
		printf("#   after \"%s\": rc %d, \"%s\" (wanted \"%s\")\n", sql, rc, err.msg, says);
	CHECK_EQ_I64(rc, VT_E_RECORDING);
	CHECK(strstr(err.msg, says) != NULL);
	unlink(path_of("bad.db"));
}

static void test_profile_store__damage_is_refused(void)
{
	/* the stacks' frames: length, depth, indices, type */
	check_refused("UPDATE profile_stacks SET locs = X'01020304050607' WHERE idx = 0", "not 4 per frame");
	check_refused("UPDATE profile_stacks SET locs = zeroblob(4 * 257) WHERE idx = 0", "up to 256 frames");
	check_refused("UPDATE profile_stacks SET locs = X'00000000FFFFFF7F' WHERE idx = 0", "frame 1 is location");
	check_refused("UPDATE profile_stacks SET locs = NULL WHERE idx = 1", "not a BLOB");
	check_refused("UPDATE profile_stacks SET locs = 'abcd' WHERE idx = 1", "not a BLOB");
	/* the stacks' other columns */
	check_refused("UPDATE profile_stacks SET thread = 3 WHERE idx = 0", "stack 0 has a bad");
	check_refused("UPDATE profile_stacks SET state = 5 WHERE idx = 0", "stack 0 has a bad");
	check_refused("UPDATE profile_stacks SET wait = 100000 WHERE idx = 3", "stack 3 has a bad");
	check_refused("UPDATE profile_stacks SET count = -1 WHERE idx = 0", "stack 0 has a bad");
	check_refused("UPDATE profile_stacks SET truncated = 2 WHERE idx = 0", "stack 0 has a bad");
	check_refused("UPDATE profile_stacks SET thread = 1.5 WHERE idx = 0", "stack 0 has a bad");
	check_refused("UPDATE profile_stacks SET locs = (SELECT locs FROM profile_stacks WHERE idx = 0),"
		      " thread = 0, state = 0 WHERE idx = 1", "same as an earlier");
	/* indices of the other tables */
	check_refused("UPDATE profile_funcs SET name = 9999 WHERE idx = 0", "function 0 names a string");
	check_refused("UPDATE profile_funcs SET module = -1 WHERE idx = 0", "function 0 names a string");
	check_refused("UPDATE profile_locs SET func = 99999 WHERE idx = 2", "location 2 names a function");
	check_refused("UPDATE profile_locs SET kernel = 7 WHERE idx = 2", "location 2 names");
	check_refused("UPDATE profile_locs SET pc = 'abc' WHERE idx = 0", "address is not an integer");
	/* source lines and inline chains: a chain can only go to an earlier location (no loop) */
	check_refused("UPDATE profile_locs SET inlined_into = idx + 1 WHERE idx = 2", "not an earlier location");
	check_refused("UPDATE profile_locs SET inlined_into = -1 WHERE idx = 2", "not an earlier location");
	check_refused("UPDATE profile_locs SET file = 99999 WHERE idx = 2", "names a file beyond");
	check_refused("UPDATE profile_locs SET line = -3 WHERE idx = 2", "line out of range");
	check_refused("UPDATE profile_funcs SET line = 'x' WHERE idx = 1", "line out of range");
	check_refused("UPDATE profile_threads SET name = 4000 WHERE idx = 1", "thread 1 has a bad");
	check_refused("UPDATE profile_threads SET tid = 0 WHERE idx = 1", "thread 1 has a bad");
	check_refused("UPDATE profile_threads SET cpu_s = 'fast' WHERE idx = 1", "thread 1 has a bad");
	check_refused("UPDATE profile_modules SET frames = X'0102' WHERE idx = 1", "not 8 per method");
	check_refused("UPDATE profile_modules SET symbols = 77 WHERE idx = 1", "module 1 has a bad");
	check_refused("UPDATE profile_modules SET path = 123456 WHERE idx = 1", "module 1 has a bad");
	check_refused("UPDATE profile_modules SET lines = 9 WHERE idx = 1", "bad line source or debug file");
	check_refused("UPDATE profile_modules SET debug_file = 99999 WHERE idx = 1", "bad line source or debug file");
	check_refused("UPDATE profile_modules SET debug_ignored = 'x' WHERE idx = 2", "bad line source or debug file");
	/* duplicates, holes, counts that do not match */
	check_refused("UPDATE profile_strings SET s = (SELECT s FROM profile_strings WHERE idx = 1) WHERE idx = 2",
		      "same as string 1");
	check_refused("UPDATE profile_strings SET s = '' WHERE idx = 2", "string 2 is empty");
	check_refused("UPDATE profile_strings SET s = 'x' WHERE idx = 0", "string 0 is not empty");
	check_refused("UPDATE profile_strings SET s = X'41424344' WHERE idx = 2", "not text");
	check_refused("UPDATE profile_strings SET s = CAST(X'4100424344' AS TEXT) WHERE idx = 2", "not text");
	check_refused("DELETE FROM profile_strings WHERE idx = 2", "row 2 is missing");
	check_refused("DELETE FROM profile_stacks WHERE idx = 5", "has 5 of its 6 rows");
	check_refused("UPDATE profiles SET nlocs = nlocs - 1", "more than its");
	check_refused("UPDATE profile_threads SET tid = 4242 WHERE idx = 2", "tid of thread 0");
	check_refused("UPDATE profile_locs SET (pc, module_off, func, kernel) = (SELECT pc, module_off,"
		      " func, kernel FROM profile_locs WHERE idx = 0) WHERE idx = 1", "repeats location 0");
	check_refused("UPDATE profile_modules SET name = (SELECT name FROM profile_modules WHERE idx = 0)"
		      " WHERE idx = 2", "name of module 0");
	/* the profile's own row */
	check_refused("UPDATE profiles SET hz = 'x'", "sampling rate");
	check_refused("UPDATE profiles SET duration_s = -1", "duration");
	check_refused("UPDATE profiles SET t = 'soon'", "time");
	check_refused("UPDATE profiles SET pid = -5", "pid");
	check_refused("UPDATE profiles SET partial = 3", "flag");
	check_refused("UPDATE profiles SET samples = 1.5", "sample count");
	check_refused("UPDATE profiles SET nstrings = 0", "no string table");
	check_refused("UPDATE profiles SET nstacks = 100000000", "table size");
	check_refused("UPDATE profiles SET comm = X'00'", "not text");
	check_refused("UPDATE profiles SET process_cpu_s = 'x'", "CPU time");
	/* a table gone or not as written */
	check_refused("DROP TABLE profile_locs", "profile_locs is not as vitals writes it");
	check_refused("ALTER TABLE profiles DROP COLUMN lost", "profiles table vitals did not write");
}

/* A soak killed mid-write leaves no half profile: an open transaction is not in the file. */
static void test_profile_store__a_write_is_all_or_nothing(void)
{
	struct vt_store *st = create("kill.db");
	struct vt_profile *p = build(0);
	struct vt_store_profile at = { .t = 1, .wall = 1.7e9 };
	struct vt_store_profiles *r = NULL;
	struct vt_err err;
	pid_t child;
	int status;

	CHECK(vt_store_profile_append(st, &at, p, NULL, &err) == VT_OK);
	fflush(stdout);
	child = fork();
	if (child == 0) {
		/* a second profile begun and never committed: the writer dies in the middle */
		sqlite3 *db;

		if (sqlite3_open(path_of("kill.db"), &db) != SQLITE_OK)
			_exit(1);
		sqlite3_exec(db, "BEGIN; INSERT INTO profiles(t, pid, nstrings) VALUES(2, 1, 9);", NULL, NULL, NULL);
		_exit(0);
	}
	CHECK(waitpid(child, &status, 0) == child);
	CHECK(vt_store_close(st, &err) == VT_OK);
	CHECK(vt_store_profiles_open(path_of("kill.db"), &r, &err) == VT_OK);
	CHECK(r && vt_store_profiles_count(r) == 1);
	vt_store_profiles_close(&r);
	vt_profile_free(&p);
}

static void test_profile_store__setup(void)
{
	if (!mkdtemp(dir))
		abort();
}

static void test_profile_store__teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

VT_TEST_MAIN(test_profile_store__setup, test_profile_store__round_trip, test_profile_store__old_recording_has_none,
	     test_profile_store__older_columns_are_optional, test_profile_store__damage_is_refused,
	     test_profile_store__a_write_is_all_or_nothing,
	     test_profile_store__teardown)

/*
 * test_profile_export.c — the exports of a profile (render/profile_*.h) on a
 * profile built by hand: folded stacks exact, byte for byte; pprof read back
 * three ways (protobuf-c's own unpack here, tests/unit/pprof_check.py — an
 * independent reader, Python standard library only — and `go tool pprof`
 * when go is installed); the HTML page escaped (a symbol named
 * "</script><script>alert(1)" never ends the data block) and, when chromium
 * is installed, opened headless: the script ran, drew frames, searched,
 * raised nothing.  The same page weighing bytes (vitals allocs --html,
 * render/allocs.h) on allocation sites built by hand over the profile.
 *
 * lane: long — started first among the unit tests (tests/run)
 */
#include "harness.h"
#include "browser.h"

#include "render/allocs.h"
#include "render/profile_folded.h"
#include "render/profile_html.h"
#include "render/profile_pprof.h"

#include "profile.pb-c.h"

#include <math.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define EVIL "</script><script>alert(1)"

/* The hand-built profile: its threads, and the locations tests look for. */
struct fixture {
	struct vt_profile *p;
	uint32_t t_app, t_w1, t_w2;
	uint32_t main_, parse, parse2, send, sendto_k, anon, weird, evil;
};

static uint32_t loc(struct vt_profile *p, uint64_t pc, uint64_t off, const char *name,
		    const char *module, bool kernel)
{
	uint32_t f = vt_profile_intern_func(p, vt_profile_intern_str(p, name),
					    vt_profile_intern_str(p, module));
	return vt_profile_intern_loc(p, pc, off, f, kernel);
}

static void add(struct fixture *x, uint32_t thread, enum vt_prof_state st, const char *wait,
		bool truncated, uint64_t count, int depth, ...)
{
	uint32_t locs[16];
	struct vt_err err;
	va_list ap;

	va_start(ap, depth);
	for (int i = 0; i < depth; i++)
		locs[i] = va_arg(ap, uint32_t);
	va_end(ap);
	CHECK(vt_profile_add(x->p, locs, (uint32_t)depth, thread, st,
			     vt_profile_intern_str(x->p, wait), truncated, count, &err) == VT_OK);
}

/*
 * Stacks (leaf first), 12 running samples and 7 sleeping:
 *   worker-1  parse<main x3, parse2<main x1 (another pc in parse), sendto[k]<send<main x4,
 *             parse<main sleeping on futex x7
 *   worker-2  parse<main x2
 *   app       libc.so.6+0x1234<main x1, "a;b\nc"<main x1 truncated
 */
static struct fixture build(void)
{
	struct fixture x = { 0 };
	struct vt_err err;

	if (vt_profile_new(&x.p, &err) != VT_OK) {
		printf("Bail out! vt_profile_new\n");
		exit(2);
	}
	struct vt_profile *p = x.p;
	p->meta.pid = 4242;
	snprintf(p->meta.comm, sizeof(p->meta.comm), "app");
	snprintf(p->meta.method, sizeof(p->meta.method), "perf cpu-clock");
	p->meta.hz = 100;
	p->meta.wall = true;
	p->meta.wall_hz = 50;
	p->meta.duration_s = 2.5;
	p->meta.kernel_symbols = true;
	p->meta.program = vt_profile_intern_str(p, "/usr/bin/app");
	/* the kernel first, as the profiler interns it; then libc before the program */
	uint32_t m_kernel = vt_profile_intern_module(p, "[kernel]", "/proc/kallsyms");
	uint32_t m_libc = vt_profile_intern_module(p, "libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6");
	uint32_t m_app = vt_profile_intern_module(p, "app", "/usr/bin/app");
	p->modules[m_kernel].symbols = VT_SYMS_KALLSYMS;
	p->modules[m_app].start = 0x401000;
	p->modules[m_app].limit = 0x402000;
	p->modules[m_app].offset = 0x1000;
	p->modules[m_libc].start = 0x7f0000000000;
	p->modules[m_libc].limit = 0x7f0000100000;
	p->modules[m_libc].offset = 0x26000;
	p->modules[m_app].symbols = VT_SYMS_SYMTAB;
	p->modules[m_app].frames[VT_UNWIND_DWARF] = 9;
	p->modules[m_libc].symbols = VT_SYMS_DYNSYM;
	p->modules[m_libc].frames[VT_UNWIND_FP] = 4;
	x.t_app = vt_profile_intern_thread(p, 100, "app");
	x.t_w1 = vt_profile_intern_thread(p, 101, "worker-1");
	x.t_w2 = vt_profile_intern_thread(p, 102, "worker-2");
	x.main_ = loc(p, 0x401000, 0x1000, "main", "app", false);
	x.parse = loc(p, 0x401100, 0x1100, "parse", "app", false);
	x.parse2 = loc(p, 0x401120, 0x1120, "parse", "app", false);
	x.send = loc(p, 0x7f0000001000, 0x1000, "send", "libc.so.6", false);
	x.sendto_k = loc(p, 0xffffffff81000000, 0, "__x64_sys_sendto", "[kernel]", true);
	x.anon = loc(p, 0x7f0000001234, 0x1234, "", "libc.so.6", false);
	x.weird = loc(p, 0x401200, 0x1200, "a;b\nc", "app", false);
	x.evil = loc(p, 0x401300, 0x1300, EVIL, "app", false);

	add(&x, x.t_w1, VT_PROF_RUNNING, NULL, false, 3, 2, x.parse, x.main_);
	add(&x, x.t_w1, VT_PROF_RUNNING, NULL, false, 1, 2, x.parse2, x.main_);
	add(&x, x.t_w1, VT_PROF_RUNNING, NULL, false, 4, 3, x.sendto_k, x.send, x.main_);
	add(&x, x.t_w1, VT_PROF_SLEEPING, "futex", false, 7, 2, x.parse, x.main_);
	add(&x, x.t_w2, VT_PROF_RUNNING, NULL, false, 2, 2, x.parse, x.main_);
	add(&x, x.t_app, VT_PROF_RUNNING, NULL, false, 1, 2, x.anon, x.main_);
	add(&x, x.t_app, VT_PROF_RUNNING, NULL, true, 1, 2, x.weird, x.main_);
	return x;
}

static char *folded(const struct vt_profile *p, enum vt_folded_root root, unsigned states)
{
	struct vt_folded_opts o = { .root = root, .states = states };
	struct vt_buf b = VT_BUF_INIT(1 << 20);
	struct vt_err err;

	CHECK(vt_profile_folded(p, &o, &b, &err) == VT_OK);
	return b.data ? b.data : strdup("");
}

/* ---- folded ---------------------------------------------------------------- */

static void test_folded__cpu_merged_exact(void)
{
	struct fixture x = build();
	char *s = folded(x.p, VT_FOLDED_MERGED, VT_PROF_STATES_CPU);

	CHECK_STR(s, "[truncated];main;a:b?c 1\n"
		     "main;libc.so.6+0x1234 1\n"
		     "main;parse 6\n"
		     "main;send;__x64_sys_sendto_[k] 4\n");
	free(s);
	vt_profile_free(&x.p);
}

static void test_folded__every_state_and_one_state(void)
{
	struct fixture x = build();
	char *all = folded(x.p, VT_FOLDED_MERGED, VT_PROF_STATES_ALL);
	char *sleeping = folded(x.p, VT_FOLDED_MERGED, VT_PROF_STATE_BIT(VT_PROF_SLEEPING));
	char *none = folded(x.p, VT_FOLDED_MERGED, VT_PROF_STATE_BIT(VT_PROF_DISK));

	CHECK_STR(all, "[truncated];main;a:b?c 1\n"
		       "main;libc.so.6+0x1234 1\n"
		       "main;parse 13\n"
		       "main;send;__x64_sys_sendto_[k] 4\n");
	CHECK_STR(sleeping, "main;parse 7\n");
	CHECK_STR(none, "");
	free(all);
	free(sleeping);
	free(none);
	vt_profile_free(&x.p);
}

static void test_folded__per_thread_and_pool_roots(void)
{
	struct fixture x = build();
	char *thr = folded(x.p, VT_FOLDED_BY_THREAD, VT_PROF_STATES_CPU);
	char *pool = folded(x.p, VT_FOLDED_BY_POOL, VT_PROF_STATES_CPU);

	CHECK_STR(thr, "app-100;[truncated];main;a:b?c 1\n"
		       "app-100;main;libc.so.6+0x1234 1\n"
		       "worker-1-101;main;parse 4\n"
		       "worker-1-101;main;send;__x64_sys_sendto_[k] 4\n"
		       "worker-2-102;main;parse 2\n");
	CHECK_STR(pool, "app;[truncated];main;a:b?c 1\n"
			"app;main;libc.so.6+0x1234 1\n"
			"worker-#;main;parse 6\n"
			"worker-#;main;send;__x64_sys_sendto_[k] 4\n");
	free(thr);
	free(pool);
	vt_profile_free(&x.p);
}

/* The stream version writes the same bytes; a full buffer is an error, not a cut line. */
static void test_folded__stream_and_cap(void)
{
	struct fixture x = build();
	struct vt_buf small = VT_BUF_INIT(16);
	struct vt_err err;
	char *mem = NULL, *want = folded(x.p, VT_FOLDED_MERGED, VT_PROF_STATES_CPU);
	size_t len = 0;
	FILE *f = open_memstream(&mem, &len);
	struct vt_folded_opts cpu = { .states = VT_PROF_STATES_CPU };

	CHECK(f != NULL);
	CHECK(vt_profile_folded_write(f, x.p, &cpu, &err) == VT_OK);
	fclose(f);
	CHECK_STR(mem, want);
	CHECK(vt_profile_folded(x.p, &cpu, &small, &err) == VT_E_NOMEM);
	vt_buf_release(&small);
	free(mem);
	free(want);
	vt_profile_free(&x.p);
}

/* ---- pprof ----------------------------------------------------------------- */

/* gunzip data into *out (malloc'd). */
static bool gunzip(const char *data, size_t len, uint8_t **out, size_t *out_len)
{
	z_stream z;
	size_t cap = len * 8 + 1024, n = 0;
	uint8_t *buf = malloc(cap);
	int rc;

	memset(&z, 0, sizeof(z));
	if (!buf || inflateInit2(&z, 15 + 16) != Z_OK) {
		free(buf);
		return false;
	}
	z.next_in = (Bytef *)(uintptr_t)data;
	z.avail_in = (uInt)len;
	do {
		if (n == cap) {
			uint8_t *nb = realloc(buf, cap * 2);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		z.next_out = buf + n;
		z.avail_out = (uInt)(cap - n);
		rc = inflate(&z, Z_NO_FLUSH);
		n = cap - z.avail_out;
	} while (rc == Z_OK);
	inflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(buf);
		return false;
	}
	*out = buf;
	*out_len = n;
	return true;
}

static Perftools__Profiles__Profile *pprof_of(const struct vt_profile *p, bool wall,
					      struct vt_buf *gz)
{
	struct vt_pprof_opts o = { .wall = wall, .time_nanos = 1788716228000000000LL };
	struct vt_err err;
	uint8_t *raw = NULL;
	size_t raw_len = 0;
	Perftools__Profiles__Profile *pp = NULL;

	CHECK(vt_profile_pprof(p, &o, gz, &err) == VT_OK);
	CHECK(gz->len > 18 && (unsigned char)gz->data[0] == 0x1f && (unsigned char)gz->data[1] == 0x8b);
	if (gz->len && gunzip(gz->data, gz->len, &raw, &raw_len))
		pp = perftools__profiles__profile__unpack(NULL, raw_len, raw);
	free(raw);
	CHECK(pp != NULL);
	return pp;
}

static const char *pstr(const Perftools__Profiles__Profile *pp, int64_t i)
{
	return i >= 0 && (size_t)i < pp->n_string_table ? pp->string_table[i] : "<out of range>";
}

static const Perftools__Profiles__Location *ploc(const Perftools__Profiles__Profile *pp, uint64_t id)
{
	for (size_t i = 0; i < pp->n_location; i++)
		if (pp->location[i]->id == id)
			return pp->location[i];
	return NULL;
}

static const Perftools__Profiles__Function *pfunc(const Perftools__Profiles__Profile *pp, uint64_t id)
{
	for (size_t i = 0; i < pp->n_function; i++)
		if (pp->function[i]->id == id)
			return pp->function[i];
	return NULL;
}

static const Perftools__Profiles__Mapping *pmap(const Perftools__Profiles__Profile *pp, uint64_t id)
{
	for (size_t i = 0; i < pp->n_mapping; i++)
		if (pp->mapping[i]->id == id)
			return pp->mapping[i];
	return NULL;
}

/* The name of a location's (only) function. */
static const char *loc_name(const Perftools__Profiles__Profile *pp, uint64_t id)
{
	const Perftools__Profiles__Location *l = ploc(pp, id);
	const Perftools__Profiles__Function *f = l && l->n_line ? pfunc(pp, l->line[0]->function_id) : NULL;
	return f ? pstr(pp, f->name) : "<no function>";
}

static const char *label_str(const Perftools__Profiles__Profile *pp,
			     const Perftools__Profiles__Sample *s, const char *key)
{
	for (size_t i = 0; i < s->n_label; i++)
		if (strcmp(pstr(pp, s->label[i]->key), key) == 0)
			return pstr(pp, s->label[i]->str);
	return NULL;
}

/* Every reference resolves; returns the sum of value[0] and of value[1]. */
static void pprof_references(const Perftools__Profiles__Profile *pp, uint64_t *count, int64_t *ns)
{
	*count = 0;
	*ns = 0;
	CHECK(pp->n_string_table > 0 && strcmp(pp->string_table[0], "") == 0);
	for (size_t i = 0; i < pp->n_location; i++) {
		const Perftools__Profiles__Location *l = pp->location[i];
		CHECK(l->id != 0);
		CHECK(l->mapping_id == 0 || pmap(pp, l->mapping_id) != NULL);
		CHECK(l->n_line == 1 && pfunc(pp, l->line[0]->function_id) != NULL);
	}
	for (size_t i = 0; i < pp->n_function; i++) {
		CHECK(pp->function[i]->id != 0);
		CHECK((size_t)pp->function[i]->name < pp->n_string_table);
		CHECK((size_t)pp->function[i]->filename < pp->n_string_table);
	}
	for (size_t i = 0; i < pp->n_sample; i++) {
		const Perftools__Profiles__Sample *s = pp->sample[i];
		CHECK_EQ_U64(s->n_value, pp->n_sample_type);
		for (size_t j = 0; j < s->n_location_id; j++)
			CHECK(ploc(pp, s->location_id[j]) != NULL);
		for (size_t j = 0; j < s->n_label; j++)
			CHECK((size_t)s->label[j]->key < pp->n_string_table &&
			      (size_t)s->label[j]->str < pp->n_string_table);
		if (s->n_value == 2) {
			*count += (uint64_t)s->value[0];
			*ns += s->value[1];
		}
	}
}

static void test_pprof__cpu_round_trip(void)
{
	struct fixture x = build();
	struct vt_buf gz = VT_BUF_INIT(1 << 20);
	Perftools__Profiles__Profile *pp = pprof_of(x.p, false, &gz);
	uint64_t count;
	int64_t ns;

	if (!pp)
		goto out;
	CHECK_EQ_U64(pp->n_sample_type, 2);
	CHECK_STR(pstr(pp, pp->sample_type[0]->type), "samples");
	CHECK_STR(pstr(pp, pp->sample_type[0]->unit), "count");
	CHECK_STR(pstr(pp, pp->sample_type[1]->type), "cpu");
	CHECK_STR(pstr(pp, pp->sample_type[1]->unit), "nanoseconds");
	/* pprof names the first mapping as the profile's "File:": the program, not kallsyms (the
	 * first module) nor libc (the first file), with the address range of its code */
	CHECK(pp->n_mapping > 0 && strcmp(pstr(pp, pp->mapping[0]->filename), "/usr/bin/app") == 0);
	if (pp->n_mapping > 0) {
		CHECK_EQ_U64(pp->mapping[0]->memory_start, 0x401000);
		CHECK_EQ_U64(pp->mapping[0]->memory_limit, 0x402000);
		CHECK_EQ_U64(pp->mapping[0]->file_offset, 0x1000);
	}
	CHECK(pp->period_type && strcmp(pstr(pp, pp->period_type->type), "cpu") == 0);
	CHECK_EQ_I64(pp->period, 10000000);
	CHECK_EQ_I64(pp->duration_nanos, 2500000000LL);
	CHECK_EQ_I64(pp->time_nanos, 1788716228000000000LL);
	CHECK_STR(pstr(pp, pp->default_sample_type), "cpu");
	CHECK(pp->n_comment >= 2);
	CHECK(strstr(pstr(pp, pp->comment[1]), "perf cpu-clock at 100 Hz") != NULL);
	pprof_references(pp, &count, &ns);
	CHECK_EQ_U64(count, 12);                  /* running only */
	CHECK_EQ_I64(ns, 12 * 10000000LL);        /* count * 1e9 / hz */
	CHECK_EQ_U64(pp->n_sample, 6);            /* one per stack kept: not merged across threads */

	bool saw_kernel = false, saw_trunc = false, saw_anon = false;
	for (size_t i = 0; i < pp->n_sample; i++) {
		const Perftools__Profiles__Sample *s = pp->sample[i];
		const char *leaf = loc_name(pp, s->location_id[0]);
		const char *root = loc_name(pp, s->location_id[s->n_location_id - 1]);

		CHECK(label_str(pp, s, "state") == NULL);   /* wall mode only */
		CHECK(label_str(pp, s, "thread") != NULL);
		if (strcmp(leaf, "__x64_sys_sendto") == 0) {
			const Perftools__Profiles__Location *l = ploc(pp, s->location_id[0]);
			const Perftools__Profiles__Mapping *m = l ? pmap(pp, l->mapping_id) : NULL;
			saw_kernel = true;
			CHECK_EQ_U64(s->value[0], 4);
			CHECK(l && l->address == 0xffffffff81000000ull);
			CHECK(m && strcmp(pstr(pp, m->filename), "/proc/kallsyms") == 0);
			CHECK(m && m->memory_limit == 0);   /* no range: not the program's */
			CHECK_STR(loc_name(pp, s->location_id[1]), "send");
			CHECK_STR(label_str(pp, s, "thread"), "worker-1");
			CHECK_STR(label_str(pp, s, "pool"), "worker-#");
		}
		if (strcmp(leaf, "a;b\nc") == 0) {
			saw_trunc = true;
			CHECK_STR(root, "[truncated]");
			CHECK_EQ_U64(s->n_location_id, 3);
		}
		if (strcmp(leaf, "libc.so.6+0x1234") == 0) {
			const Perftools__Profiles__Location *l = ploc(pp, s->location_id[0]);
			const Perftools__Profiles__Mapping *m = l ? pmap(pp, l->mapping_id) : NULL;
			saw_anon = true;
			CHECK(m && strcmp(pstr(pp, m->filename), "/lib/x86_64-linux-gnu/libc.so.6") == 0);
			CHECK(m && m->memory_start == 0x7f0000000000ull && m->file_offset == 0x26000);
		}
		if (strcmp(leaf, "parse") == 0) {
			const Perftools__Profiles__Location *l = ploc(pp, s->location_id[0]);
			const Perftools__Profiles__Function *f = l ? pfunc(pp, l->line[0]->function_id) : NULL;
			CHECK(f && strcmp(pstr(pp, f->filename), "/usr/bin/app") == 0);
			CHECK(f && strcmp(pstr(pp, f->system_name), "parse") == 0);
		}
	}
	CHECK(saw_kernel && saw_trunc && saw_anon);
	perftools__profiles__profile__free_unpacked(pp, NULL);
out:
	vt_buf_release(&gz);
	vt_profile_free(&x.p);
}

static void test_pprof__wall_states_and_weights(void)
{
	struct fixture x = build();
	struct vt_buf gz = VT_BUF_INIT(1 << 20);
	Perftools__Profiles__Profile *pp = pprof_of(x.p, true, &gz);
	uint64_t count;
	int64_t ns;
	bool saw_futex = false;

	if (!pp)
		goto out;
	CHECK_STR(pstr(pp, pp->sample_type[1]->type), "wall");
	pprof_references(pp, &count, &ns);
	CHECK_EQ_U64(count, 19);
	/* every count is a sample of 1/hz (10 ms), a sleeping one's too: a wall look counts
	 * hz / wall_hz of them (weighing them 1/wall_hz made a 4 s wall profile of one
	 * sleeping thread 19.9 s in go tool pprof) */
	CHECK_EQ_I64(ns, 19 * 10000000LL);
	for (size_t i = 0; i < pp->n_sample; i++) {
		const Perftools__Profiles__Sample *s = pp->sample[i];
		const char *state = label_str(pp, s, "state");
		CHECK(state != NULL);
		if (state && strcmp(state, "sleeping") == 0) {
			saw_futex = true;
			CHECK_STR(label_str(pp, s, "wait"), "futex");
			CHECK_EQ_U64(s->value[0], 7);
		}
	}
	CHECK(saw_futex);
	perftools__profiles__profile__free_unpacked(pp, NULL);
out:
	vt_buf_release(&gz);
	vt_profile_free(&x.p);
}

/* A scratch file path under a fresh directory; the caller removes both. */
static void scratch(char *dir, size_t cap, char *path, size_t pcap, const char *name)
{
	snprintf(dir, cap, "/tmp/vt-profile-export-XXXXXX");
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, pcap, "%s/%s", dir, name);
}

/*
 * The program no sample was in (a JVM's launcher: every thread in libjvm and JIT code) is
 * still pprof's "File:", a mapping of its own with no range; a profile that does not know
 * its program (read from a recording) puts the first executable file first.
 */
static void test_pprof__program_first(void)
{
	struct fixture x = build();
	struct vt_buf gz = VT_BUF_INIT(1 << 20);
	Perftools__Profiles__Profile *pp;

	x.p->meta.program = vt_profile_intern_str(x.p, "/usr/lib/jvm/bin/java");
	pp = pprof_of(x.p, false, &gz);
	CHECK(pp && pp->n_mapping > 3);
	if (pp && pp->n_mapping > 3) {
		CHECK_STR(pstr(pp, pp->mapping[0]->filename), "/usr/lib/jvm/bin/java");
		CHECK_EQ_U64(pp->mapping[0]->memory_limit, 0);
		CHECK_STR(pstr(pp, pp->mapping[1]->filename), "/proc/kallsyms");
		CHECK_STR(pstr(pp, pp->mapping[3]->filename), "/usr/bin/app");
		for (size_t i = 0; i < pp->n_location; i++)
			CHECK(pp->location[i]->mapping_id != pp->mapping[0]->id);
	}
	if (pp)
		perftools__profiles__profile__free_unpacked(pp, NULL);
	vt_buf_release(&gz);

	x.p->meta.program = 0;
	gz = (struct vt_buf)VT_BUF_INIT(1 << 20);
	pp = pprof_of(x.p, false, &gz);
	CHECK(pp && pp->n_mapping > 0);
	if (pp && pp->n_mapping > 0)
		CHECK_STR(pstr(pp, pp->mapping[0]->filename), "/usr/bin/app");
	if (pp)
		perftools__profiles__profile__free_unpacked(pp, NULL);
	vt_buf_release(&gz);
	vt_profile_free(&x.p);
}

/*
 * Inlined frames: one Location per address whose Lines are the chain,
 * innermost first, with their line numbers; the function a frame was inlined
 * into is no location of its own in a sample; an address in two chains (two
 * inner functions at one pc, as after a module's names changed) is named in
 * each, and one no symbol names gets a function of its own in each Line.
 */
static void test_pprof__inline_chains(void)
{
	struct fixture x = build();
	struct vt_profile *p = x.p;
	struct vt_buf gz = VT_BUF_INIT(1 << 20);
	Perftools__Profiles__Profile *pp;
	uint32_t outer = loc(p, 0x9000, 0x9000, "", "app", false), inner[2];
	const char *names[2] = { "json::scan_string", "json::scan_number" };
	int seen = 0;

	for (int i = 0; i < 2; i++) {
		inner[i] = vt_profile_intern_loc_full(p, &(struct vt_prof_loc){
			.pc = 0x9000, .module_off = 0x9000, .line = 40 + (uint32_t)i,
			.file = vt_profile_intern_str(p, "/src/json.rs"), .inlined_into = outer + 1,
			.func = vt_profile_intern_func(p, vt_profile_intern_str(p, names[i]),
						       vt_profile_intern_str(p, "app")) });
		add(&x, x.t_w1, VT_PROF_RUNNING, NULL, false, 5, 3, inner[i], outer, x.main_);
	}
	pp = pprof_of(p, false, &gz);
	CHECK(pp != NULL);
	for (size_t i = 0; pp && i < pp->n_sample; i++) {
		const Perftools__Profiles__Location *l = ploc(pp, pp->sample[i]->location_id[0]);

		if (!l || l->address != 0x9000)
			continue;
		/* [inner, main]: the outer function is a Line of inner's Location */
		seen++;
		CHECK_EQ_U64(pp->sample[i]->n_location_id, 2);
		CHECK_EQ_U64(l->n_line, 2);
		if (l->n_line == 2) {
			const Perftools__Profiles__Function *f0 = pfunc(pp, l->line[0]->function_id);
			const Perftools__Profiles__Function *f1 = pfunc(pp, l->line[1]->function_id);

			CHECK(f0 && (!strcmp(pstr(pp, f0->name), names[0]) || !strcmp(pstr(pp, f0->name), names[1])));
			CHECK(l->line[0]->line == 40 || l->line[0]->line == 41);
			CHECK(f1 && strstr(pstr(pp, f1->name), "app") != NULL);   /* "app+0x9000" */
		}
	}
	CHECK_EQ_I64(seen, 2);
	if (pp)
		perftools__profiles__profile__free_unpacked(pp, NULL);
	vt_buf_release(&gz);
	vt_profile_free(&x.p);
}

/* Written to a file, the profile is read by an independent reader (and go tool pprof when there). */
static void test_pprof__independent_readers(void)
{
	struct fixture x = build();
	/* a comm that is not UTF-8: proto3 strings must be (Python's reader decodes strictly) */
	uint32_t bad = vt_profile_intern_thread(x.p, 103, "bad\xffname");
	add(&x, bad, VT_PROF_RUNNING, NULL, false, 1, 2, x.parse, x.main_);
	char dir[64], path[128], cmd[512];
	struct vt_err err;
	FILE *f;

	if (!vt_test_on_path("python3")) {
		printf("# skip: no python3 for tests/unit/pprof_check.py\n");
		vt_profile_free(&x.p);
		return;
	}
	scratch(dir, sizeof(dir), path, sizeof(path), "cpu.pb.gz");
	f = fopen(path, "wb");
	CHECK(f != NULL);
	if (f) {
		struct vt_pprof_opts cpu = { 0 }, wall = { .wall = true };
		const char *self = getenv("VT_SRC");   /* tests run from the repository root */

		CHECK(vt_profile_pprof_write(f, x.p, &cpu, &err) == VT_OK);
		fclose(f);
		snprintf(cmd, sizeof(cmd), "python3 %s/tests/unit/pprof_check.py %s 13 cpu /usr/bin/app",
			 self ? self : ".", path);
		CHECK(vt_test_system(cmd) == 0);
		snprintf(cmd, sizeof(cmd), "python3 %s/tests/unit/pprof_check.py %s 14 cpu >/dev/null",
			 self ? self : ".", path);
		CHECK(vt_test_system(cmd) != 0);   /* the checker can fail */
		if (vt_test_on_path("go")) {
			/* go tool pprof -raw prints every sample: 7 rows, counts 3 1 4 2 1 1 1 */
			snprintf(cmd, sizeof(cmd),
				 "HOME=%s go tool pprof -raw %s 2>&1 | awk '/^Samples:/{s=1;next} "
				 "/^Locations/{s=0} s && $1 ~ /^[0-9]+$/ {n+=$1} END{exit n!=13}'",
				 dir, path);
			CHECK(vt_test_system(cmd) == 0);
			snprintf(cmd, sizeof(cmd), "HOME=%s go tool pprof -top %s 2>&1 | "
				 "grep -q '__x64_sys_sendto'", dir, path);
			CHECK(vt_test_system(cmd) == 0);
		} else {
			printf("# skip: no go for go tool pprof\n");
		}
		f = fopen(path, "wb");
		CHECK(f != NULL);
		if (f) {
			CHECK(vt_profile_pprof_write(f, x.p, &wall, &err) == VT_OK);
			fclose(f);
			snprintf(cmd, sizeof(cmd), "python3 %s/tests/unit/pprof_check.py %s 20 wall",
				 self ? self : ".", path);
			CHECK(vt_test_system(cmd) == 0);
		}
	}
	unlink(path);
	rmdir(dir);
	vt_profile_free(&x.p);
}

/* ---- html ------------------------------------------------------------------ */

static char *html(const struct vt_profile_html *r)
{
	char *mem = NULL;
	size_t len = 0;
	struct vt_err err;
	FILE *f = open_memstream(&mem, &len);

	CHECK(f != NULL);
	CHECK(vt_profile_html_write(f, r, &err) == VT_OK);
	fclose(f);
	return mem;
}

/* Where needle first is in hay, -1 nowhere. */
static long pos_of(const char *hay, const char *needle)
{
	const char *s = strstr(hay, needle);
	return s ? s - hay : -1;
}

static size_t count_of(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *s = strstr(hay, needle); s; s = strstr(s + 1, needle))
		n++;
	return n;
}

static const struct vt_html_bucket_row rows[] = {
	{ "network send/recv", 0.5, 0.08, 4 },
	{ "<b>json</b> & co", 0.25, -1, 2 },
	{ "other", 0.25, 0.05, 2 },
};

static void test_html__escaped_and_self_contained(void)
{
	struct fixture x = build();
	struct vt_err err;
	add(&x, x.t_w2, VT_PROF_RUNNING, NULL, false, 2, 2, x.evil, x.main_);
	int32_t *lb = calloc(x.p->nlocs, sizeof(*lb));
	for (uint32_t i = 0; i < x.p->nlocs; i++)
		lb[i] = -1;
	lb[x.send] = 0;
	lb[x.sendto_k] = 0;
	lb[x.evil] = 1;
	struct vt_profile_html r = {
		.profile = x.p, .states = VT_PROF_STATES_CPU,
		.buckets = rows, .nbuckets = 3, .loc_bucket = lb,
	};
	char *page = html(&r);

	CHECK(page != NULL);
	if (page) {
		/* our two script blocks end; nothing from the data does */
		CHECK_EQ_U64(count_of(page, "</script"), 2);
		CHECK_EQ_U64(count_of(page, "<script"), 2);
		CHECK(strstr(page, "alert(1)") != NULL);
		CHECK(strstr(page, "\\u003c/script\\u003e\\u003cscript\\u003ealert(1)") != NULL);
		CHECK(strstr(page, "&lt;b&gt;json&lt;/b&gt; &amp; co") != NULL);
		CHECK(strstr(page, "<b>json") == NULL);
		CHECK(strstr(page, "<title>vitals profile 4242 (app)</title>") != NULL);
		CHECK(strstr(page, "50.0% &plusmn; 8.0") != NULL);
		CHECK(strstr(page, "share of on-CPU samples by top of stack</p>") != NULL);
		CHECK(strstr(page, "\"color\":\"bucket\"") != NULL);
		CHECK(strstr(page, "__x64_sys_sendto") != NULL);
		/* nothing fetched: no external scripts, styles, images */
		CHECK(strstr(page, "src=") == NULL);
		CHECK(strstr(page, "href=") == NULL);
		CHECK(strstr(page, "http://") == NULL || count_of(page, "http://") ==
							   count_of(page, "http://www.w3.org/2000/svg"));
	}
	free(page);

	/* wall: the table beside the graph says it counts wall samples, idle waits left out */
	r.states = VT_PROF_STATES_ALL;
	page = html(&r);
	CHECK(page && strstr(page, "share of wall samples (running, runnable and waiting) by top of "
				   "stack; idle waits left out</p>") != NULL);
	CHECK(page && strstr(page, "graph: 14 samples (wall: running, runnable and waiting; idle "
				   "waits left out, as the tables leave them)") != NULL);
	free(page);

	/* differential: the same profile against itself, then against one with more parse */
	struct fixture base = build();
	struct vt_profile_html d = { .profile = x.p, .base = base.p, .label = "after",
				     .base_label = "</script>before" };
	page = html(&d);
	CHECK(page != NULL);
	if (page) {
		CHECK(strstr(page, "\"color\":\"diff\"") != NULL);
		CHECK_EQ_U64(count_of(page, "</script"), 2);
		CHECK(strstr(page, "&lt;/script&gt;before") != NULL);
	}
	free(page);
	/* pooled profiles (vitals compare): the page says what they are, not one pid */
	d.title = "vitals compare: CPU profiles of after against before";
	d.source = "3 profiles of after pooled against 4 profiles of <before>";
	page = html(&d);
	CHECK(page != NULL);
	if (page) {
		CHECK(strstr(page, "<title>vitals compare: CPU profiles of after against before</title>") != NULL);
		CHECK(strstr(page, "<span>3 profiles of after pooled against 4 profiles of &lt;before&gt;</span>") != NULL);
		CHECK(strstr(page, "<span>pid ") == NULL);
	}
	free(page);
	(void)err;
	free(lb);
	vt_profile_free(&base.p);
	vt_profile_free(&x.p);
}

/*
 * vitals allocs' page: the sites' stacks weigh their bytes (stacks no site
 * has weigh nothing, so the profile's idle futex wait is not there either),
 * the table is the sites by bytes, the words are bytes and sites, never
 * samples, and a site named "</script><script>..." is text.
 */
static struct vt_allocs allocs_of(struct fixture *x, struct vt_alloc_site sites[3])
{
	struct vt_allocs a = { .p = x->p, .sites = sites, .nsites = 3 };

	add(x, x->t_w2, VT_PROF_RUNNING, NULL, false, 10, 2, x->evil, x->main_);   /* stack 7 */
	/* as vt_allocs_run orders them, by calls: the most bytes second */
	sites[0] = (struct vt_alloc_site){ .loc = x->send, .calls = 50, .bytes = 1536, .stack = 2 };
	sites[1] = (struct vt_alloc_site){ .loc = x->evil, .calls = 10, .bytes = 3 << 20, .stack = 7,
					   .linked = 100, .freed = 100 };
	sites[2] = (struct vt_alloc_site){ .loc = x->parse, .calls = 5, .bytes = 512, .stack = UINT32_MAX };
	a.meta = (struct vt_allocs_meta){
		.pid = 4242, .duration_s = 4, .armed_s = 0.5, .windows = 5, .window_s = 0.1,
		.budget = 0.05, .slowdown = NAN, .trap_ns = NAN, .calls = 65, .bytes = (3 << 20) + 2048,
		.frees = 60, .lost = 3, .exited = true,
	};
	snprintf(a.meta.comm, sizeof(a.meta.comm), "app");
	snprintf(a.meta.allocator, sizeof(a.meta.allocator), "glibc 2.36");
	snprintf(a.meta.file, sizeof(a.meta.file), "/lib/x86_64-linux-gnu/libc.so.6");
	snprintf(a.meta.probed, sizeof(a.meta.probed), "malloc, free");
	return a;
}

/* not inlined: gcc 12 then takes the page for a pointer to mem (-Wdangling-pointer) */
__attribute__((noinline)) static char *allocs_html(const struct vt_allocs *a)
{
	char *mem = NULL;
	size_t len = 0;
	struct vt_err err;
	FILE *f = open_memstream(&mem, &len);

	CHECK(f != NULL);
	CHECK(vt_render_allocs_html(f, a, &err) == VT_OK);
	fclose(f);
	return mem;
}

static void test_html__allocs_weighs_bytes(void)
{
	struct fixture x = build();
	struct vt_alloc_site sites[3];
	struct vt_allocs a = allocs_of(&x, sites);
	char *page = allocs_html(&a);

	CHECK(page != NULL);
	if (page) {
		long data = pos_of(page, "<script id=\"vt-data\"");
		long evil_row = pos_of(page, "\"></span>&lt;/script&gt;&lt;script&gt;alert(1)</td>");
		long send_row = pos_of(page, "\"></span>send</td>");

		CHECK(data >= 0);
		CHECK_EQ_U64(count_of(page, "</script"), 2);
		CHECK(strstr(page, "<title>vitals allocs 4242 (app)</title>") != NULL);
		CHECK(strstr(page, "\"unit\":\"bytes\"") != NULL);
		CHECK(strstr(page, "\"color\":\"bucket\"") != NULL);
		/* stack 7 (3 MiB) and stack 2 (1536): the graph's total; the rest weigh nothing */
		CHECK(strstr(page, "\"total\":3147264,\"idle\":0") != NULL);
		CHECK(strstr(page, "<span>graph: 3.00 MiB (3147264 bytes)</span>") != NULL);
		CHECK(strstr(page, "show idle waits") == NULL);
		CHECK(strstr(page, "a frame's width is its share of the bytes; click") != NULL);
		CHECK(strstr(page, "<span>glibc 2.36: probes on malloc, free in "
				   "/lib/x86_64-linux-gnu/libc.so.6</span>") != NULL);
		CHECK(strstr(page, "<span>probes armed 500 ms of 4 s in 5 windows (budget 5% slowdown)</span>") != NULL);
		CHECK(strstr(page, "<span>slowdown, measured: unknown</span>") != NULL);
		CHECK(strstr(page, "<span>65 allocations, 3.00 MiB, 60 frees seen; 3 probe hits lost</span>") != NULL);
		CHECK(strstr(page, "<span>the target exited: the profile so far</span>") != NULL);
		CHECK(strstr(page, "<p>churn: &lt;/script&gt;&lt;script&gt;alert(1) allocates 6.00 MiB/s") != NULL);
		/* the table: sites by bytes, in sizes, each site's frame coloured as its row */
		CHECK(strstr(page, "<tr><th>site</th><th class=\"n\">share</th><th class=\"n\">bytes</th></tr>") != NULL);
		CHECK(evil_row >= 0 && send_row > evil_row);
		CHECK(strstr(page, "alert(1)</td><td class=\"n\">99.9%</td><td class=\"n\">3.00 MiB</td>") != NULL);
		CHECK(strstr(page, "send</td><td class=\"n\">0.0%</td><td class=\"n\">1.5 KiB</td>") != NULL);
		CHECK(strstr(page, "parse</td><td class=\"n\">0.0%</td><td class=\"n\">512 B</td>") != NULL);
		CHECK(strstr(page, "<p class=\"small\">share of the bytes allocated while the probes "
				   "were armed, by site") != NULL);
		/* every word a reader sees is of bytes: "samples" only in the script */
		long samples = pos_of(page, "samples");
		CHECK(samples < 0 || samples > data);
	}
	free(page);
	vt_profile_free(&x.p);
}

/*
 * Opened in headless chromium (when installed): the script parsed its data,
 * drew frames (data-frames), hit no error (data-error), ran the search the
 * URL asked for (#q=PARSE), and the evil name is text in a frame's tooltip,
 * not a script.
 */
static void test_html__opens_in_headless_chromium(void)
{
	const char *browser = vt_test_browser();
	struct fixture x;
	char dir[64], path[128], url[160], *dom = NULL;
	FILE *f;

	if (!browser) {
		printf("# skip: no chromium (apt-get install chromium) or VT_NO_BROWSER set\n");
		return;
	}
	x = build();
	add(&x, x.t_w2, VT_PROF_RUNNING, NULL, false, 2, 2, x.evil, x.main_);
	struct vt_profile_html r = { .profile = x.p, .buckets = rows, .nbuckets = 3 };
	scratch(dir, sizeof(dir), path, sizeof(path), "profile.html");
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		struct vt_err err;
		CHECK(vt_profile_html_write(f, &r, &err) == VT_OK);
		fclose(f);
	}
	snprintf(url, sizeof(url), "file://%s#q=PARSE", path);
	dom = vt_test_dump_dom(browser, dir, url, 1280);
	CHECK(dom != NULL);
	if (dom) {
		char *frames = strstr(dom, "data-frames=\"");
		CHECK(frames != NULL && atoi(frames + 13) >= 8);
		CHECK(strstr(dom, "data-error=\"") == NULL);
		CHECK(strstr(dom, "<script>alert(1)") == NULL);
		/* the tooltips: the evil name as text, "all" at the root */
		CHECK(strstr(dom, "&lt;/script&gt;&lt;script&gt;alert(1)") != NULL);
		CHECK(strstr(dom, "<title>all") != NULL);
		CHECK(strstr(dom, "<title>__x64_sys_sendto [kernel]") != NULL);
		/* the search from the URL ran: parse holds 6 of the 14 samples, highlighted; its
		 * 7 samples asleep on a futex are an idle wait, left out as the tables leave them
		 * (a wall flame graph was 55% idle epoll_wait), and a box shows them */
		CHECK(strstr(dom, "matched: 42.86% (6 of 14 samples)") != NULL);
		CHECK(strstr(dom, "show idle waits (7 samples)") != NULL);
		CHECK(strstr(dom, "fill=\"#d040d0\"") != NULL);
	}
	free(dom);
	dom = NULL;
	CHECK(vt_test_scratch_end(dir, path) == 0);
	vt_profile_free(&x.p);

	/* allocs' page: sizes in the tooltips and the search, not samples */
	struct vt_alloc_site sites[3];
	x = build();
	struct vt_allocs a = allocs_of(&x, sites);
	scratch(dir, sizeof(dir), path, sizeof(path), "allocs.html");
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		struct vt_err err;
		CHECK(vt_render_allocs_html(f, &a, &err) == VT_OK);
		fclose(f);
	}
	snprintf(url, sizeof(url), "file://%s#q=alert", path);
	dom = vt_test_dump_dom(browser, dir, url, 1280);
	CHECK(dom != NULL);
	if (dom) {
		char *frames = strstr(dom, "data-frames=\"");
		CHECK(frames != NULL && atoi(frames + 13) >= 3);
		CHECK(strstr(dom, "data-error=\"") == NULL);
		CHECK(strstr(dom, "<script>alert(1)") == NULL);
		CHECK(strstr(dom, "<title>all\n3.00 MiB, 100.00%") != NULL);
		CHECK(strstr(dom, "matched: 99.95% (3.00 MiB of 3.00 MiB)") != NULL);
		long samples = pos_of(dom, "samples");
		CHECK(samples < 0 || samples > pos_of(dom, "<script"));   /* in the script only */
	}
	free(dom);
	CHECK(vt_test_scratch_end(dir, path) == 0);
	vt_profile_free(&x.p);
}

VT_TEST_MAIN(test_folded__cpu_merged_exact, test_folded__every_state_and_one_state,
	     test_folded__per_thread_and_pool_roots, test_folded__stream_and_cap,
	     test_pprof__cpu_round_trip, test_pprof__wall_states_and_weights,
	     test_pprof__program_first, test_pprof__inline_chains, test_pprof__independent_readers,
	     test_html__escaped_and_self_contained, test_html__allocs_weighs_bytes,
	     test_html__opens_in_headless_chromium)

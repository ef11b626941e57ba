/*
 * test_profile.c — the profile data model: interning and counting.
 */
#include "harness.h"

#include "profile_build.h"
#include "sample/profile.h"

static void test_profile__interning_is_stable(void)
{
	struct vt_profile *p;
	struct vt_err err;
	CHECK(vt_profile_new(&p, &err) == VT_OK);
	uint32_t a = vt_profile_intern_str(p, "send");
	uint32_t b = vt_profile_intern_str(p, "libc.so.6");
	CHECK(a != 0 && b != 0 && a != b);
	CHECK_EQ_U64(vt_profile_intern_str(p, "send"), a);
	CHECK_EQ_U64(vt_profile_intern_str(p, ""), 0);
	CHECK_EQ_U64(vt_profile_intern_str(p, NULL), 0);
	uint32_t f = vt_profile_intern_func(p, a, b);
	CHECK_EQ_U64(vt_profile_intern_func(p, a, b), f);
	CHECK(vt_profile_intern_func(p, b, a) != f);
	uint32_t l = vt_profile_intern_loc(p, 0x1000, 0x100, f, false);
	CHECK_EQ_U64(vt_profile_intern_loc(p, 0x1000, 0x100, f, false), l);
	CHECK(vt_profile_intern_loc(p, 0x1000, 0x100, f, true) != l);
	/* the same address named anew (an exec, a dlopen since): another location */
	uint32_t g = vt_profile_intern_func(p, b, b);
	uint32_t l2 = vt_profile_intern_loc(p, 0x1000, 0x200, g, false);
	CHECK(l2 != l && p->locs[l2].func == g && p->locs[l2].module_off == 0x200);
	CHECK_EQ_U64(p->locs[l].func, f);
	/* thousands of strings: the maps grow and every index still resolves */
	char name[32];
	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "fn_%d", i);
		uint32_t s = vt_profile_intern_str(p, name);
		CHECK_STR(vt_profile_str(p, s), name);
	}
	for (int i = 0; i < 5000; i += 997) {
		snprintf(name, sizeof(name), "fn_%d", i);
		CHECK_STR(vt_profile_str(p, vt_profile_intern_str(p, name)), name);
	}
	CHECK_EQ_U64(p->nstrings, 5003);
	CHECK_STR(vt_profile_str(p, 999999), "");
	vt_profile_free(&p);
	CHECK(p == NULL);
}

static void test_profile__equal_stacks_share_a_row(void)
{
	struct vt_profile *p;
	struct vt_err err;
	CHECK(vt_profile_new(&p, &err) == VT_OK);
	uint32_t mod = vt_profile_intern_str(p, "app");
	uint32_t t1 = vt_profile_intern_thread(p, 101, "worker-1");
	uint32_t t2 = vt_profile_intern_thread(p, 102, "worker-2");
	CHECK_STR(vt_profile_str(p, p->threads[t1].pool), "worker-#");
	CHECK_EQ_U64(p->threads[t1].pool, p->threads[t2].pool);
	uint32_t main_thr = vt_profile_intern_thread(p, 100, "app");
	CHECK_EQ_U64(p->threads[main_thr].pool, 0);
	uint32_t locs[3];
	const char *names[3] = { "leaf", "mid", "main" };
	for (int i = 0; i < 3; i++)
		locs[i] = vt_profile_intern_loc(
			p, 0x400000 + (uint64_t)i * 16, (uint64_t)i * 16,
			vt_profile_intern_func(p, vt_profile_intern_str(p, names[i]), mod), false);
	CHECK(vt_profile_add(p, locs, 3, t1, VT_PROF_RUNNING, 0, false, 1, &err) == VT_OK);
	CHECK(vt_profile_add(p, locs, 3, t1, VT_PROF_RUNNING, 0, false, 2, &err) == VT_OK);
	CHECK(vt_profile_add(p, locs, 3, t2, VT_PROF_RUNNING, 0, false, 1, &err) == VT_OK);
	CHECK(vt_profile_add(p, locs + 1, 2, t1, VT_PROF_RUNNING, 0, false, 1, &err) == VT_OK);
	uint32_t futex = vt_profile_intern_str(p, "futex");
	CHECK(vt_profile_add(p, locs, 3, t1, VT_PROF_SLEEPING, futex, false, 4, &err) == VT_OK);
	CHECK_EQ_U64(p->nstacks, 4);
	CHECK_EQ_U64(p->stacks[0].count, 3);
	CHECK_EQ_U64(p->threads[t1].samples, 8);
	CHECK_EQ_U64(p->meta.samples, 9);
	CHECK_EQ_U64(vt_profile_stack_locs(p, &p->stacks[3])[0], locs[0]);
	char label[64];
	vt_profile_loc_label(p, locs[1], label, sizeof(label));
	CHECK_STR(label, "mid");
	uint32_t anon = vt_profile_intern_loc(p, 0x7f00, 0x1234,
					      vt_profile_intern_func(p, 0, mod), false);
	vt_profile_loc_label(p, anon, label, sizeof(label));
	CHECK_STR(label, "app+0x1234");
	vt_profile_loc_label(p, 12345, label, sizeof(label));
	CHECK_STR(label, "[unknown]");
	vt_profile_free(&p);
}

static void test_profile__deep_stacks_are_cut_and_marked(void)
{
	struct vt_profile *p;
	struct vt_err err;
	CHECK(vt_profile_new(&p, &err) == VT_OK);
	uint32_t t = vt_profile_intern_thread(p, 1, "t");
	uint32_t locs[VT_PROFILE_MAX_DEPTH + 10];
	for (uint32_t i = 0; i < VT_PROFILE_MAX_DEPTH + 10; i++)
		locs[i] = vt_profile_intern_loc(p, i + 1, i, 0, false);
	CHECK(vt_profile_add(p, locs, VT_PROFILE_MAX_DEPTH + 10, t, VT_PROF_RUNNING, 0, false, 1,
			     &err) == VT_OK);
	CHECK_EQ_U64(p->stacks[0].depth, VT_PROFILE_MAX_DEPTH);
	CHECK_EQ_U64(p->stacks[0].truncated, 1);
	vt_profile_free(&p);

	/* a stack with no frames (nothing could be read) is a row of its own */
	CHECK(vt_profile_new(&p, &err) == VT_OK);
	t = vt_profile_intern_thread(p, 1, "t");
	CHECK(vt_profile_add(p, NULL, 0, t, VT_PROF_SLEEPING, 0, true, 2, &err) == VT_OK);
	CHECK(vt_profile_add(p, NULL, 0, t, VT_PROF_SLEEPING, 0, true, 1, &err) == VT_OK);
	CHECK_EQ_U64(p->nstacks, 1);
	CHECK_EQ_U64(p->stacks[0].count, 3);
	vt_profile_free(&p);
}

/*
 * Pooling: src's stacks counted in p under p's own indices (its strings,
 * functions, locations and threads interned anew), waits and states kept,
 * equal stacks of one thread sharing a row; the first pooled gives the meta.
 */
static void test_profile__pooling(void)
{
	struct vt_profile *p, *a, *b;
	struct vt_err err;
	char label[64];

	CHECK(vt_profile_new(&p, &err) == VT_OK);
	CHECK(vt_profile_new(&a, &err) == VT_OK);
	CHECK(vt_profile_new(&b, &err) == VT_OK);
	snprintf(a->meta.method, sizeof(a->meta.method), "perf cpu-clock");
	a->meta.pid = 100;
	a->meta.duration_s = 5;
	a->meta.lost = 2;
	a->meta.process_cpu_s = 1.5;
	b->meta = a->meta;
	b->meta.pid = 200;
	b->meta.process_cpu_s = -1;
	uint32_t ta = vt_profile_intern_thread(a, 7, "worker-1"), tb = vt_profile_intern_thread(b, 7, "worker-1");
	a->threads[ta].cpu_s = 0.5;
	b->threads[tb].cpu_s = 0.25;
	/* b interns other strings first: its indices differ from a's */
	vt_profile_intern_str(b, "zzz");
	CHECK(pb_stack(a, ta, VT_PROF_RUNNING, NULL, 3, "app!parse", "app!main", NULL) == VT_OK);
	CHECK(pb_stack(b, tb, VT_PROF_RUNNING, NULL, 4, "app!parse", "app!main", NULL) == VT_OK);
	CHECK(pb_stack(b, tb, VT_PROF_SLEEPING, "futex", 5, "libc.so.6!wait", "app!main", NULL) == VT_OK);
	CHECK(vt_profile_merge(p, a, &err) == VT_OK);
	CHECK(vt_profile_merge(p, b, &err) == VT_OK);
	CHECK_EQ_U64(p->meta.samples, 12);
	CHECK_EQ_U64(p->meta.pid, 100);
	CHECK(p->meta.duration_s == 10 && p->meta.lost == 4 && p->meta.process_cpu_s < 0);
	CHECK_EQ_U64(p->nstacks, 2);
	CHECK_EQ_U64(p->stacks[0].count, 7);
	vt_profile_loc_label(p, vt_profile_stack_locs(p, &p->stacks[0])[0], label, sizeof(label));
	CHECK_STR(label, "parse");
	CHECK_EQ_U64(p->stacks[1].state, VT_PROF_SLEEPING);
	CHECK_STR(vt_profile_str(p, p->stacks[1].wait), "futex");
	vt_profile_loc_label(p, vt_profile_stack_locs(p, &p->stacks[1])[1], label, sizeof(label));
	CHECK_STR(label, "main");
	CHECK_EQ_U64(p->nthreads, 1);
	CHECK(p->threads[0].cpu_s == 0.75 && p->threads[0].samples == 12);
	vt_profile_free(&p);
	vt_profile_free(&a);
	vt_profile_free(&b);
}

VT_TEST_MAIN(test_profile__interning_is_stable, test_profile__equal_stacks_share_a_row,
	     test_profile__deep_stacks_are_cut_and_marked, test_profile__pooling)

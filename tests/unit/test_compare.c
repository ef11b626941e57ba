/*
 * test_compare.c — the A/B table on synthetic arms built like the field
 * report's MALLOC_ARENA_MAX=2 experiment (1458 MiB committed against
 * 611 MiB, live unchanged at ~44 MiB), arms equal up to noise, and arms
 * without allocator figures.
 */
#include "harness.h"
#include "rand.h"

#include <math.h>

#include "analyze/compare.h"

#define MiB (1024.0 * 1024.0)


/* What an arm settles at (every figure flat after a warm-up of `warm` s). */
struct arm_spec {
	double committed, anon, live, free_held, keepcost, arenas, regions, cores;
	double noise;            /* sd of committed, bytes */
	bool heap;               /* allocator figures recorded */
	bool leak;               /* committed grows 0.5 MiB/s instead of settling */
};

static void set(struct vt_stat *st, size_t i, double v)
{
	st[i] = (struct vt_stat){ v, v, v };
}

/* n single samples at 1 s: a warm-up ramp over the first 100 s, then flat (or a leak). */
static void build_arm(struct vt_series *s, const struct arm_spec *a, size_t n, uint64_t sd)
{
	struct vt_stat *c, *an, *sw, *ar, *rg, *u, *k;
	size_t i;

	seed(sd);
	vt_series_init(s);
	CHECK(vt_series_reserve(s, n) == 0);
	c = vt_series_stat(s, VT_M_COMMITTED);
	an = vt_series_stat(s, VT_M_RSS_ANON);
	sw = vt_series_stat(s, VT_M_VM_SWAP);
	ar = vt_series_stat(s, VT_M_ARENAS);
	rg = vt_series_stat(s, VT_M_REGIONS_64M);
	u = vt_series_stat(s, VT_M_CPU_USER_S);
	k = vt_series_stat(s, VT_M_CPU_SYS_S);
	for (i = 0; i < n; i++) {
		double t = (double)i, warm = fmin(t / 100, 1), noise = a->noise * gauss();
		double com = a->committed * (0.5 + 0.5 * warm) + noise + (a->leak ? 0.5 * MiB * t : 0);

		s->t[i] = s->t0[i] = s->t1[i] = t;
		s->count[i] = 1;
		s->pid[i] = 100;
		s->incarnation[i] = 0;
		set(c, i, com);
		set(an, i, a->anon * (0.5 + 0.5 * warm) + noise);
		set(sw, i, com - (a->anon * (0.5 + 0.5 * warm) + noise));
		set(ar, i, a->arenas);
		set(rg, i, a->regions);
		set(u, i, 10 + a->cores * 0.8 * t);
		set(k, i, 2 + a->cores * 0.2 * t);
		if (a->heap) {
			double live = a->live + 0.1 * MiB * gauss(), held = a->free_held * (0.5 + 0.5 * warm);

			set(vt_series_stat(s, VT_M_HEAP_LIVE), i, live);
			set(vt_series_stat(s, VT_M_HEAP_FREE), i, held);
			set(vt_series_stat(s, VT_M_HEAP_TOTAL), i, live + held);
			set(vt_series_stat(s, VT_M_HEAP_KEEPCOST), i, a->keepcost);
			/* a heap walk's figures: part of the free-held on resident pages */
			set(vt_series_stat(s, VT_M_FREE_RESIDENT), i, 0.6 * held);
			set(vt_series_stat(s, VT_M_TRIMMABLE), i, 0.5 * held);
		}
	}
	s->n = n;
	s->samples = n;
	s->info.every_s = 1;
	s->info.finished = true;
}

static bool near(double x, double want, double tol)
{
	return fabs(x - want) <= tol;
}

static void test_compare__arena_max_two(void)
{
	static const struct arm_spec before = { 1458 * MiB, 1122 * MiB, 44.3 * MiB, 1413 * MiB,
						3.1 * MiB, 8, 6, 0.57, 2 * MiB, true, false };
	static const struct arm_spec after = { 611 * MiB, 575 * MiB, 44.5 * MiB, 565 * MiB,
					       0.1 * MiB, 2, 1, 0.57, 1 * MiB, true, false };
	const char *names[] = { "default", "MALLOC_ARENA_MAX=2" };
	struct vt_series a, b;
	const struct vt_series *arms[] = { &a, &b };
	struct vt_comparison cmp;
	const struct vt_cmp_diff *d;
	size_t f;

	build_arm(&a, &before, 600, 1);
	build_arm(&b, &after, 900, 2);
	CHECK(vt_compare(arms, names, 2, NULL, &cmp) == 0);
	CHECK(cmp.narms == 2);
	CHECK_STR(cmp.arms[1].name, "MALLOC_ARENA_MAX=2");
	CHECK(cmp.arms[0].series == &a);
	CHECK(cmp.arms[0].verdict.kind == VT_VERDICT_PLATEAU && cmp.arms[1].verdict.kind == VT_VERDICT_PLATEAU);
	CHECK(cmp.arms[0].window_settled && cmp.arms[1].window_settled);
	CHECK(cmp.arms[0].window_t0 >= 80 && cmp.arms[0].window_t0 <= 110);
	CHECK(cmp.arms[1].window_samples > 700);

	d = &cmp.diff[1][VT_M_COMMITTED];
	printf("# committed %.1f -> %.1f MiB: %.1f MiB (%.1f%%)\n", cmp.arms[0].cell[VT_M_COMMITTED].median / MiB,
	       cmp.arms[1].cell[VT_M_COMMITTED].median / MiB, d->delta / MiB, d->pct);
	CHECK(d->known && near(d->delta, -847 * MiB, 2 * MiB));
	CHECK(near(d->pct, -58.1, 0.3));
	CHECK(!d->within_noise);
	CHECK(near(cmp.arms[0].cell[VT_M_COMMITTED].noise, 2 * MiB, 0.5 * MiB));
	CHECK(cmp.arms[0].cell[VT_M_COMMITTED].lo < cmp.arms[0].cell[VT_M_COMMITTED].median);
	CHECK(cmp.arms[0].cell[VT_M_COMMITTED].hi > cmp.arms[0].cell[VT_M_COMMITTED].median);

	/* live is the same in both arms: within noise; free-held is the difference */
	d = &cmp.diff[1][VT_M_HEAP_LIVE];
	CHECK(d->known && d->within_noise && near(d->delta, 0.2 * MiB, 0.1 * MiB));
	d = &cmp.diff[1][VT_M_HEAP_FREE];
	CHECK(d->known && !d->within_noise && near(d->delta, -848 * MiB, 1 * MiB));
	/* arenas 8 -> 2 with no noise at all is a difference */
	d = &cmp.diff[1][VT_M_ARENAS];
	CHECK(d->known && !d->within_noise && d->delta == -6 && near(d->pct, -75, 1e-9));
	CHECK(cmp.arms[1].cell[VT_M_REGIONS_64M].median == 1);
	/* live fraction 44.3/1457 -> 44.5/610 */
	CHECK(near(cmp.arms[0].cell[VT_M_LIVE_FRACTION].median, 0.0304, 0.001));
	CHECK(near(cmp.arms[1].cell[VT_M_LIVE_FRACTION].median, 0.0729, 0.002));
	/* CPU is a counter delta over the window: the same 0.57 cores, within noise */
	CHECK(near(cmp.arms[0].cell[VT_M_CPU_CORES].median, 0.57, 1e-6));
	CHECK(cmp.diff[1][VT_M_CPU_CORES].known && cmp.diff[1][VT_M_CPU_CORES].within_noise);
	/* the baseline row is all unknown */
	for (f = 0; f < VT_M_COUNT; f++)
		CHECK(!cmp.diff[0][f].known && isnan(cmp.diff[0][f].delta));
	/* a row the table does not have stays unknown in every arm */
	CHECK(!cmp.arms[1].cell[VT_M_VM_RSS].known && !cmp.diff[1][VT_M_VM_RSS].known);
	CHECK(!vt_cmp_row_recorded(&cmp, VT_M_VM_RSS) && vt_cmp_row_recorded(&cmp, VT_M_COMMITTED));
	CHECK_STR(vt_metrics[VT_M_COMMITTED].label, "committed");
	CHECK_STR(vt_unit_name(vt_metrics[VT_M_CPU_CORES].unit), "cores");
	vt_comparison_free(&cmp);
	CHECK(cmp.arms == NULL && cmp.narms == 0);
	vt_comparison_free(&cmp);       /* twice is harmless */
	vt_series_free(&a);
	vt_series_free(&b);
}

static void test_compare__equal_arms_within_noise(void)
{
	static const struct arm_spec same = { 500 * MiB, 400 * MiB, 40 * MiB, 300 * MiB, 1 * MiB,
					      4, 3, 0.2, 2 * MiB, true, false };
	struct vt_series a, b;
	const struct vt_series *arms[] = { &a, &b };
	struct vt_comparison cmp;
	size_t f;

	build_arm(&a, &same, 600, 3);
	build_arm(&b, &same, 600, 4);
	CHECK(vt_compare(arms, NULL, 2, NULL, &cmp) == 0);
	for (f = 0; f < VT_M_COUNT; f++) {
		const struct vt_cmp_diff *d = &cmp.diff[1][f];

		if (!(vt_metrics[f].flags & VT_MF_COMPARE))
			continue;
		CHECK(d->known);
		if (!d->within_noise)
			printf("#   %s: delta %g not within noise\n", vt_metrics[f].key, d->delta);
		CHECK(d->within_noise);
	}
	CHECK(fabs(cmp.diff[1][VT_M_COMMITTED].pct) < 0.5);
	vt_comparison_free(&cmp);
	vt_series_free(&a);
	vt_series_free(&b);
}

/*
 * 3 sd apart (noise 2 MiB): the 5..95% ranges still overlap (they part at
 * 3.3 sd), but the medians differ by more than 2 combined sds.
 */
static void test_compare__three_sd_apart_is_a_difference(void)
{
	static const struct arm_spec base = { 500 * MiB, 400 * MiB, 40 * MiB, 300 * MiB, 1 * MiB,
					      4, 3, 0.2, 2 * MiB, true, false };
	struct arm_spec apart = base;
	struct vt_series a, b;
	const struct vt_series *arms[] = { &a, &b };
	struct vt_comparison cmp;

	apart.committed += 6 * MiB;
	build_arm(&a, &base, 600, 3);
	build_arm(&b, &apart, 600, 4);
	CHECK(vt_compare(arms, NULL, 2, NULL, &cmp) == 0);
	CHECK(cmp.arms[0].cell[VT_M_COMMITTED].hi > cmp.arms[1].cell[VT_M_COMMITTED].lo);
	CHECK(!cmp.diff[1][VT_M_COMMITTED].within_noise);
	CHECK(near(cmp.diff[1][VT_M_COMMITTED].delta, 6 * MiB, 0.5 * MiB));
	CHECK(cmp.diff[1][VT_M_HEAP_LIVE].within_noise);
	vt_comparison_free(&cmp);
	vt_series_free(&a);
	vt_series_free(&b);
}

static void test_compare__unknown_heap_and_unsettled_arm(void)
{
	static const struct arm_spec plain = { 500 * MiB, 400 * MiB, 0, 0, 0, 4, 3, 0.2, 1 * MiB,
					       false, false };
	static const struct arm_spec leaking = { 500 * MiB, 400 * MiB, 0, 0, 0, 4, 3, 0.2, 1 * MiB,
						 false, true };
	struct vt_series a, b;
	const struct vt_series *arms[] = { &a, &b };
	struct vt_comparison cmp;

	build_arm(&a, &plain, 600, 5);
	build_arm(&b, &leaking, 600, 6);
	CHECK(vt_compare(arms, NULL, 2, NULL, &cmp) == 0);
	CHECK(!cmp.arms[0].cell[VT_M_HEAP_LIVE].known && isnan(cmp.arms[0].cell[VT_M_HEAP_LIVE].median));
	CHECK(!cmp.arms[0].cell[VT_M_HEAP_FREE].known && !cmp.arms[0].cell[VT_M_HEAP_KEEPCOST].known);
	/* a recording without a heap walk (older, or not glibc): the free rows unknown, no delta */
	CHECK(!cmp.arms[0].cell[VT_M_FREE_RESIDENT].known && !cmp.diff[1][VT_M_FREE_RESIDENT].known);
	CHECK(!cmp.arms[1].cell[VT_M_TRIMMABLE].known);
	CHECK(!cmp.arms[1].cell[VT_M_LIVE_FRACTION].known);
	CHECK(!cmp.diff[1][VT_M_HEAP_LIVE].known && isnan(cmp.diff[1][VT_M_HEAP_LIVE].pct));
	CHECK(cmp.arms[0].cell[VT_M_COMMITTED].known);
	/* the leaking arm never settled: its window is the last half, said so */
	CHECK(cmp.arms[1].verdict.kind == VT_VERDICT_LEAK);
	CHECK(!cmp.arms[1].window_settled);
	CHECK(near(cmp.arms[1].window_t0, 300, 1) && near(cmp.arms[1].window_t1, 599, 1e-9));
	CHECK(cmp.diff[1][VT_M_COMMITTED].delta > 100 * MiB && !cmp.diff[1][VT_M_COMMITTED].within_noise);
	vt_comparison_free(&cmp);

	/* an empty recording compares too: everything unknown, no crash */
	vt_series_free(&b);
	vt_series_init(&b);
	CHECK(vt_compare(arms, NULL, 2, NULL, &cmp) == 0);
	CHECK(cmp.arms[1].verdict.kind == VT_VERDICT_CANNOT_TELL);
	CHECK(!cmp.arms[1].cell[VT_M_COMMITTED].known && !cmp.diff[1][VT_M_COMMITTED].known);
	CHECK(!cmp.arms[1].cell[VT_M_CPU_CORES].known);
	vt_comparison_free(&cmp);
	CHECK(vt_compare(arms, NULL, 0, NULL, &cmp) == 0 && cmp.narms == 0);
	vt_series_free(&a);
	vt_series_free(&b);
}

/*
 * One materiality rule for every metric (issue 22): two arms with no
 * scatter at all 12 KiB apart were a "real" change; a CPU 14% higher was
 * "within noise" because the scatter of the per-interval rates, not of
 * their mean, was held against it.
 */
static void test_compare__materiality(void)
{
	static const struct arm_spec flat = { 200 * MiB, 200 * MiB, 40 * MiB, 10 * MiB, 1 * MiB,
					      2, 1, 0.5, 0, false, false };
	struct arm_spec more = flat;
	struct vt_series a, b;
	const struct vt_series *arms[] = { &a, &b };
	struct vt_comparison cmp;
	struct vt_stat *u, *k;
	double cpu_a = 0, cpu_b = 0;
	size_t i;

	more.committed += 12 * 1024;
	more.anon += 12 * 1024;
	build_arm(&a, &flat, 600, 5);
	build_arm(&b, &more, 600, 6);
	/* CPU 0.50 against 0.57 cores, each second's rate scattered by 0.15 cores */
	seed(7);
	u = vt_series_stat(&a, VT_M_CPU_USER_S);
	k = vt_series_stat(&b, VT_M_CPU_USER_S);
	for (i = 0; i < 600; i++) {
		cpu_a += fmax(0, 0.50 + 0.15 * gauss());
		cpu_b += fmax(0, 0.57 + 0.15 * gauss());
		u[i] = (struct vt_stat){ cpu_a, cpu_a, cpu_a };
		k[i] = (struct vt_stat){ cpu_b, cpu_b, cpu_b };
	}
	u = vt_series_stat(&a, VT_M_CPU_SYS_S);
	k = vt_series_stat(&b, VT_M_CPU_SYS_S);
	for (i = 0; i < 600; i++)
		u[i] = k[i] = (struct vt_stat){ 0, 0, 0 };
	CHECK(vt_compare(arms, NULL, 2, NULL, &cmp) == 0);
	printf("# committed: delta %.0f B, within noise %d; cpu: %+.1f%%, within noise %d\n",
	       cmp.diff[1][VT_M_COMMITTED].delta, cmp.diff[1][VT_M_COMMITTED].within_noise,
	       cmp.diff[1][VT_M_CPU_CORES].pct, cmp.diff[1][VT_M_CPU_CORES].within_noise);
	CHECK(cmp.diff[1][VT_M_COMMITTED].known && cmp.diff[1][VT_M_COMMITTED].within_noise);
	CHECK(cmp.diff[1][VT_M_CPU_CORES].known && !cmp.diff[1][VT_M_CPU_CORES].within_noise);
	CHECK(cmp.diff[1][VT_M_CPU_CORES].pct > 8 && cmp.diff[1][VT_M_CPU_CORES].pct < 20);
	vt_comparison_free(&cmp);
	vt_series_free(&a);
	vt_series_free(&b);
}

/* Recordings of different programs are said to be (the table then compares programs, not a change). */
static void test_compare__different_commands(void)
{
	static const struct arm_spec flat = { 200 * MiB, 200 * MiB, 40 * MiB, 10 * MiB, 1 * MiB,
					      2, 1, 0.5, 0, false, false };
	struct vt_series a, b;
	const struct vt_series *arms[] = { &a, &b };
	struct vt_comparison cmp;

	build_arm(&a, &flat, 200, 8);
	build_arm(&b, &flat, 200, 9);
	snprintf(a.info.target, sizeof(a.info.target), "-- ./server --port 8080 --log /tmp/default.log");
	snprintf(b.info.target, sizeof(b.info.target), "-- /opt/app/server --port 8080 --log /tmp/cap2.log");
	CHECK(vt_compare(arms, NULL, 2, NULL, &cmp) == 0);
	CHECK(cmp.other_command == 0);   /* one program, its arguments aside */
	vt_comparison_free(&cmp);
	snprintf(b.info.target, sizeof(b.info.target), "-- ./other-server --port 8080");
	CHECK(vt_compare(arms, NULL, 2, NULL, &cmp) == 0);
	CHECK(cmp.other_command == 1);
	vt_comparison_free(&cmp);
	snprintf(a.info.target, sizeof(a.info.target), "pid 4242");   /* names no program: not judged */
	CHECK(vt_compare(arms, NULL, 2, NULL, &cmp) == 0);
	CHECK(cmp.other_command == 0);
	vt_comparison_free(&cmp);
	vt_series_free(&a);
	vt_series_free(&b);
}

VT_TEST_MAIN(test_compare__arena_max_two, test_compare__equal_arms_within_noise,
	     test_compare__three_sd_apart_is_a_difference, test_compare__unknown_heap_and_unsettled_arm,
	     test_compare__materiality, test_compare__different_commands)

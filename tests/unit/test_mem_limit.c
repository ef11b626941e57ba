/*
 * test_mem_limit.c — a memory limit from a settled soak
 * (src/analyze/mem_limit.c): the rule's figure, and "cannot tell yet"
 * when the soak never settled or the cgroup's limit bit.
 */
#include "harness.h"

#include <math.h>

#include "analyze/mem_limit.h"

#define MiB (1024.0 * 1024.0)
#define N 300

/* One single-sample point every second; committed = c(i), RssFile 20 MiB, no shmem or swap. */
struct shape {
	double (*committed)(size_t i);
	double limit;                    /* cgroup memory.max, NAN: none */
	bool cgroup;
};

static void put(struct vt_series *s, enum vt_metric m, size_t i, double v)
{
	struct vt_stat *st = vt_series_stat(s, m);

	CHECK(st != NULL);
	if (st)
		st[i] = (struct vt_stat){ v, v, v };
}

static void build(struct vt_series *s, const struct shape *sh)
{
	vt_series_init(s);
	CHECK(vt_series_reserve(s, N) == 0);
	for (size_t i = 0; i < N; i++) {
		s->t[i] = s->t0[i] = s->t1[i] = (double)i;
		s->wall[i] = 1.7e9 + (double)i;
		s->count[i] = 1;
		s->pid[i] = 100;
		s->incarnation[i] = 0;
		if (sh->committed)
			put(s, VT_M_COMMITTED, i, sh->committed(i));
		put(s, VT_M_RSS_FILE, i, 20 * MiB);
		put(s, VT_M_RSS_SHMEM, i, 0);
		put(s, VT_M_VM_SWAP, i, 0);
		if (sh->cgroup) {
			put(s, VT_M_CG_CURRENT, i, (sh->committed ? sh->committed(i) : 0) + 30 * MiB);
			put(s, VT_M_CG_LIMIT, i, sh->limit);
			put(s, VT_M_CG_HIGH_EVENTS, i, 0);
			put(s, VT_M_CG_MAX_EVENTS, i, 5);   /* from before the soak: no rise */
			put(s, VT_M_CG_OOM_KILLS, i, 0);
			put(s, VT_M_CG_PSI_SOME_S, i, 10 + 0.01 * (double)i);
			put(s, VT_M_CG_PSI_FULL_S, i, 4);
		}
	}
	s->n = N;
	s->samples = N;
	s->info.every_s = 1;
	s->info.finished = true;
}

static void judge(const struct vt_series *s, struct vt_soak_verdict *v, struct vt_mem_limit *l)
{
	CHECK(vt_soak_analyze(s, NULL, v) == 0);
	vt_mem_limit_recommend(s, v, l);
}

/* Up from 100 MiB over the first 30 s, then 200 MiB with a wobble of 0.1 MiB. */
static double settles(size_t i)
{
	if (i < 30)
		return (100 + (double)i * 100 / 30) * MiB;
	return (200 + (i % 2 ? 0.1 : 0)) * MiB;
}

static void test_mem_limit__plateau(void)
{
	struct vt_series s;
	struct vt_soak_verdict v;
	struct vt_mem_limit l;

	build(&s, &(struct shape){ settles, 1024 * MiB, true });
	judge(&s, &v, &l);
	CHECK(v.kind == VT_VERDICT_PLATEAU);
	CHECK(l.why == VT_LIMIT_GIVEN && l.settled);
	/* peak 200.1 + 20 MiB; headroom a fifth of it (44.02 MiB); 264.12 MiB up to 272 */
	CHECK(fabs(l.peak - 220.1 * MiB) < 1);
	CHECK(l.headroom_by == VT_HEADROOM_SHARE && fabs(l.headroom - 0.2 * 220.1 * MiB) < 1);
	CHECK(l.recommended == 272 * MiB);
	CHECK(fabs(l.need.median - 220 * MiB) < 0.2 * MiB && fabs(l.spread - 0.1 * MiB) < 1);
	CHECK(l.committed.hi == 200.1 * MiB && l.rss_file.median == 20 * MiB && l.rss_shmem.median == 0);
	CHECK(l.swap_peak == 0);
	CHECK(l.cgroup && l.cgroup_events && l.cg_limit == 1024 * MiB);
	CHECK(fabs(l.cg_current_peak - 230.1 * MiB) < 1);
	CHECK(l.ev_high == 0 && l.ev_max == 0 && l.ev_oom_kill == 0);
	/* 2.99 s stalled over a 299 s span */
	CHECK(fabs(l.psi_some_pct - 1.0) < 1e-9 && l.psi_full_pct == 0);
	CHECK(isnan(l.need_more_s));
	vt_series_free(&s);
}

/* A square wave between 100 and 200 MiB: a flat floor, a spread wider than a fifth of the peak. */
static double swings(size_t i)
{
	return ((i / 10) % 2 ? 200 : 100) * MiB;
}

static void test_mem_limit__spread_sets_headroom(void)
{
	struct vt_series s;
	struct vt_soak_verdict v;
	struct vt_mem_limit l;

	build(&s, &(struct shape){ swings, NAN, false });
	judge(&s, &v, &l);
	CHECK(v.kind == VT_VERDICT_PLATEAU);
	CHECK(l.why == VT_LIMIT_GIVEN);
	CHECK(l.headroom_by == VT_HEADROOM_SPREAD && l.spread == 100 * MiB);
	CHECK(l.recommended == 320 * MiB);    /* 220 + 100 */
	CHECK(!l.cgroup && !l.cgroup_events && isnan(l.cg_limit) && isnan(l.ev_max) && isnan(l.psi_some_pct));
	vt_series_free(&s);
}

static double small(size_t i)
{
	return (4 + (i % 3) * 0.01) * MiB;
}

static void test_mem_limit__minimum_headroom(void)
{
	struct vt_series s;
	struct vt_soak_verdict v;
	struct vt_mem_limit l;

	build(&s, &(struct shape){ small, NAN, true });
	judge(&s, &v, &l);
	CHECK(l.why == VT_LIMIT_GIVEN);
	CHECK(l.headroom_by == VT_HEADROOM_MIN && l.headroom == 32 * MiB);
	CHECK(l.recommended == 64 * MiB);     /* 24.02 + 32, up to a whole 16 MiB */
	CHECK(l.cgroup && isnan(l.cg_limit)); /* memory.current known, no limit set */
	vt_series_free(&s);
}

static double leaks(size_t i)
{
	return (100 + (double)i) * MiB;
}

static void test_mem_limit__leak_cannot_tell(void)
{
	struct vt_series s;
	struct vt_soak_verdict v;
	struct vt_mem_limit l;

	build(&s, &(struct shape){ leaks, NAN, true });
	judge(&s, &v, &l);
	CHECK(v.kind == VT_VERDICT_LEAK);
	CHECK(l.why == VT_LIMIT_NOT_SETTLED && l.verdict == VT_VERDICT_LEAK && !l.settled);
	CHECK(isnan(l.recommended) && isnan(l.headroom));
	/* the figures still say what it held: over the last half */
	CHECK(l.peak == (100 + N - 1 + 20) * MiB && l.window_t0 >= N / 2 - 1);
	vt_series_free(&s);
}

static void test_mem_limit__short_asks_for_more(void)
{
	struct vt_series s;
	struct vt_soak_verdict v;
	struct vt_mem_limit l;

	build(&s, &(struct shape){ settles, NAN, false });
	s.n = 8;
	judge(&s, &v, &l);
	CHECK(v.kind == VT_VERDICT_CANNOT_TELL);
	CHECK(l.why == VT_LIMIT_NOT_SETTLED && l.need_more_s > 0 && l.need_more_s == v.need_more_s);
	vt_series_free(&s);
}

static void test_mem_limit__limit_hit(void)
{
	struct vt_series s;
	struct vt_soak_verdict v;
	struct vt_mem_limit l;
	struct vt_stat *ev;

	build(&s, &(struct shape){ settles, 256 * MiB, true });
	ev = s.m[VT_M_CG_MAX_EVENTS];
	/* hit twice at t 200, then the cgroup is made anew (0) and hit once more */
	for (size_t i = 200; i < N; i++)
		ev[i] = (struct vt_stat){ 7, 7, 7 };
	for (size_t i = 250; i < N; i++)
		ev[i] = (struct vt_stat){ i < 260 ? 0 : 1, i < 260 ? 0 : 1, i < 260 ? 0 : 1 };
	judge(&s, &v, &l);
	CHECK(v.kind == VT_VERDICT_PLATEAU);
	/* the rule's 272 MiB does not fit under the 230 MiB the cgroup was held at */
	CHECK(l.why == VT_LIMIT_WAS_HIT && l.hit_by == VT_HIT_NEAR_LIMIT && l.limit_reached);
	CHECK(l.ev_max == 3 && l.ev_high == 0 && l.ev_oom_kill == 0);
	CHECK(l.recommended == 272 * MiB);    /* what the rule would give: not a recommendation */
	CHECK(isnan(l.need_more_s));
	/* an OOM kill alone is a hit too */
	for (size_t i = 200; i < N; i++)
		ev[i] = (struct vt_stat){ 5, 5, 5 };
	s.m[VT_M_CG_OOM_KILLS][N - 1] = (struct vt_stat){ 0, 1, 0.5 };
	vt_mem_limit_recommend(&s, &v, &l);
	CHECK(l.why == VT_LIMIT_WAS_HIT && l.hit_by == VT_HIT_OOM_KILL && l.ev_max == 0 && l.ev_oom_kill == 1);
	CHECK(!l.limit_reached);
	vt_series_free(&s);
}

/*
 * Page cache fills the cgroup to its 400 MiB limit again and again (any
 * service that writes files): the process's 272 MiB fits under it, and
 * nothing stalled, so the limit did not bite the process.  With reclaim
 * stalling its tasks 2% of the time, it did.
 */
static void test_mem_limit__limit_reached_by_page_cache(void)
{
	struct vt_series s;
	struct vt_soak_verdict v;
	struct vt_mem_limit l;

	build(&s, &(struct shape){ settles, 400 * MiB, true });
	for (size_t i = 0; i < N; i++) {
		s.m[VT_M_CG_CURRENT][i] = (struct vt_stat){ 399 * MiB, 400 * MiB, 399.5 * MiB };
		s.m[VT_M_CG_MAX_EVENTS][i] = (struct vt_stat){ (double)i, (double)i, (double)i };
		s.m[VT_M_CG_PSI_SOME_S][i] = (struct vt_stat){ 10, 10, 10 };
	}
	judge(&s, &v, &l);
	CHECK(l.why == VT_LIMIT_GIVEN && l.limit_reached && l.hit_by == VT_HIT_NONE);
	CHECK(l.ev_max == N - 1);
	CHECK(l.recommended == 272 * MiB);
	for (size_t i = 0; i < N; i++)
		s.m[VT_M_CG_PSI_SOME_S][i] = (struct vt_stat){ 0.02 * (double)i, 0.02 * (double)i, 0.02 * (double)i };
	vt_mem_limit_recommend(&s, &v, &l);
	CHECK(l.why == VT_LIMIT_WAS_HIT && l.hit_by == VT_HIT_RECLAIM && fabs(l.psi_some_pct - 2) < 1e-9);
	vt_series_free(&s);
}

static void test_mem_limit__not_recorded(void)
{
	struct vt_series s;
	struct vt_soak_verdict v;
	struct vt_mem_limit l;

	build(&s, &(struct shape){ NULL, NAN, false });
	judge(&s, &v, &l);
	CHECK(l.why == VT_LIMIT_NOT_RECORDED && isnan(l.peak) && isnan(l.recommended));
	vt_series_free(&s);
}

/* After a restart only the last incarnation counts: the first one's peak does not. */
static void test_mem_limit__last_incarnation(void)
{
	struct vt_series s;
	struct vt_soak_verdict v;
	struct vt_mem_limit l;

	build(&s, &(struct shape){ settles, NAN, false });
	s.m[VT_M_COMMITTED][3] = (struct vt_stat){ 900 * MiB, 900 * MiB, 900 * MiB };
	for (size_t i = 0; i < 10; i++)
		s.pid[i] = 99;
	for (size_t i = 10; i < N; i++)
		s.incarnation[i] = 1;
	judge(&s, &v, &l);
	CHECK(l.why == VT_LIMIT_GIVEN && l.peak < 300 * MiB);
	vt_series_free(&s);
}

VT_TEST_MAIN(test_mem_limit__plateau, test_mem_limit__spread_sets_headroom, test_mem_limit__minimum_headroom,
	     test_mem_limit__leak_cannot_tell, test_mem_limit__short_asks_for_more, test_mem_limit__limit_hit,
	     test_mem_limit__limit_reached_by_page_cache, test_mem_limit__not_recorded, test_mem_limit__last_incarnation)

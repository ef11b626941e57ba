/*
 * test_age_compare.c — incarnations at matched age on synthetic series:
 * the window plan, a recording of two incarnations whose figures follow
 * their age (a step 60 s after each start) and differ by a known 10 MiB,
 * ages from the recorded start against ages from the first sample, each
 * point in one window, and the refusals (one incarnation, ages that do not
 * overlap, an overlap shorter than two sampling intervals).
 */
#include "harness.h"

#include <math.h>

#include "analyze/age_compare.h"

#define MiB (1024.0 * 1024.0)

static bool near(double x, double want, double tol)
{
	return fabs(x - want) <= tol;
}

static void test_age__plan(void)
{
	double ends[VT_AGE_WINDOWS_MAX], w;
	bool clamped;

	/* default: a fifth of the span, tiled */
	CHECK_EQ_U64(vt_age_windows_plan(0, 100, 0, 2, ends, &w, &clamped), 5);
	CHECK(near(w, 20, 1e-9) && !clamped);
	CHECK(near(ends[0], 20, 1e-9) && near(ends[2], 60, 1e-9) && ends[4] == 100);
	/* a width asked for: as many as fit, spread from the first age to the last */
	CHECK_EQ_U64(vt_age_windows_plan(10, 110, 30, 2, ends, &w, &clamped), 3);
	CHECK(near(w, 30, 1e-9) && near(ends[0], 40, 1e-9) && near(ends[1], 75, 1e-9) && ends[2] == 110);
	/* narrow windows: never more than VT_AGE_WINDOWS_MAX, spread over the span */
	CHECK_EQ_U64(vt_age_windows_plan(0, 100, 1, 2, ends, &w, &clamped), VT_AGE_WINDOWS_MAX);
	CHECK(near(ends[0], 1, 1e-9) && near(ends[1], 25.75, 1e-9) && ends[4] == 100);
	/* longer than the span: one window of it, said so */
	CHECK_EQ_U64(vt_age_windows_plan(0, 100, 500, 2, ends, &w, &clamped), 1);
	CHECK(w == 100 && clamped && ends[0] == 100);
	/* the default never under the minimum: fewer windows */
	CHECK_EQ_U64(vt_age_windows_plan(0, 100, 0, 40, ends, &w, &clamped), 2);
	CHECK(w == 40 && near(ends[0], 40, 1e-9) && ends[1] == 100);
	/* nothing shared */
	CHECK_EQ_U64(vt_age_windows_plan(50, 50, 0, 2, ends, &w, &clamped), 0);
	CHECK_EQ_U64(vt_age_windows_plan(60, 50, 0, 2, ends, &w, &clamped), 0);
}

/*
 * Incarnation 0 (pid 100) started at t = start0 and sampled every second at
 * t = 0..99; incarnation 1 (pid 200) started at t = 100 and sampled at
 * t = 101..300.  committed: 100 MiB, 20 MiB more from 60 s after the
 * process started, and 10 MiB more in the second incarnation throughout.
 */
static void build(struct vt_series *s, double start0, bool starts_recorded)
{
	struct vt_stat *c;
	size_t i, n = 300;

	vt_series_init(s);
	CHECK(vt_series_reserve(s, n) == 0);
	c = vt_series_stat(s, VT_M_COMMITTED);
	for (i = 0; i < n; i++) {
		bool second = i >= 100;
		double t = second ? (double)i + 1 : (double)i;
		double age = t - (second ? 100 : start0);
		double v = 100 * MiB + (age >= 60 ? 20 * MiB : 0) + (second ? 10 * MiB : 0);

		s->t[i] = s->t0[i] = s->t1[i] = t;
		s->wall[i] = 1.8e9 + t;
		s->count[i] = 1;
		s->pid[i] = second ? 200 : 100;
		s->incarnation[i] = second;
		c[i] = (struct vt_stat){ v, v, v };
	}
	s->n = n;
	s->samples = n;
	s->info.every_s = 1;
	if (starts_recorded) {
		CHECK(vt_series_add_start(s, &(struct vt_process_start){ 100, 1000, start0, 1.8e9 + start0 }) == 0);
		CHECK(vt_series_add_start(s, &(struct vt_process_start){ 200, 9000, 100, 1.8e9 + 100 }) == 0);
	}
}

static void test_age__matched_age_finds_the_known_difference(void)
{
	struct vt_series s;
	struct vt_age_arm *arms = NULL;
	struct vt_age_comparison c;
	struct vt_err err;
	size_t n = 0, k, counted = 0, in_common = 0, i;

	/* the first process started 50 s before the soak: at t = 0 it is 50 s old */
	build(&s, -50, true);
	CHECK(vt_age_arms_add(&s, NULL, &arms, &n) == 0);
	CHECK_EQ_U64(n, 2);
	CHECK_STR(arms[0].name, "#1");
	CHECK_STR(arms[1].name, "#2");
	CHECK(arms[0].start_recorded && arms[1].start_recorded);
	CHECK(near(arms[0].age_first, 50, 1e-9) && near(arms[0].age_last, 149, 1e-9));
	CHECK(near(arms[1].age_first, 1, 1e-9) && near(arms[1].age_last, 200, 1e-9));
	CHECK(arms[0].exited && !arms[1].exited);
	if (vt_age_compare(arms, n, 0, VT_M_COMMITTED, &c, &err) != VT_OK || c.nwindows != 5) {
		CHECK(!"compared at matched age, in 5 windows");
		goto out;
	}
	CHECK(near(c.common_from, 50, 1e-9) && near(c.common_to, 149, 1e-9));
	CHECK_EQ_U64(c.starts_from, 0);
	CHECK_EQ_U64(c.ends_with, 0);          /* the first, at 149 s, is the younger */
	CHECK_EQ_U64(c.nwindows, 5);
	CHECK(c.windows[c.nwindows - 1].age == 149);
	for (k = 0; k < c.nwindows; k++) {
		const struct vt_comparison *w = &c.windows[k].cmp;
		const struct vt_cmp_diff *d = &w->diff[1][VT_M_COMMITTED];

		/* at every matched age, step included, the second holds 10 MiB more; beyond noise
		 * where no step is inside the window (the first window's points straddle it) */
		CHECK(d->known && near(d->delta, 10 * MiB, 1));
		CHECK(k == 0 || !d->within_noise);
		CHECK(w->arms[0].window_samples == w->arms[1].window_samples);
		counted += w->arms[0].window_samples;
	}
	/* the headline is after the step in both: 120 and 130 MiB */
	CHECK(near(c.windows[4].cmp.arms[0].cell[VT_M_COMMITTED].median, 120 * MiB, 1));
	CHECK(near(c.windows[4].cmp.arms[1].cell[VT_M_COMMITTED].median, 130 * MiB, 1));
	/* tiled windows count every point of the shared ages once */
	for (i = arms[0].from; i < arms[0].to; i++)
		in_common += s.t[i] + 50 >= c.common_from - 1e-9 && s.t[i] + 50 <= c.common_to + 1e-9;
	CHECK_EQ_U64(counted, in_common);
	vt_age_comparison_free(&c);
out:
	free(arms);
	vt_series_free(&s);
}

static void test_age__whole_span_would_mislead(void)
{
	struct vt_series s;
	struct vt_age_arm *arms = NULL;
	struct vt_age_comparison c;
	struct vt_err err;
	size_t n = 0;

	/*
	 * Started 40 s before the soak, the first incarnation is past its step
	 * for most of its samples; its start recorded, the matched windows still
	 * find +10 MiB.  Without the starts (an older recording) ages count from
	 * each first sample: the first looks 40 s younger than it is, and the
	 * early windows compare it after its step with the second before its.
	 */
	build(&s, -40, true);
	CHECK(vt_age_arms_add(&s, NULL, &arms, &n) == 0);
	CHECK(vt_age_compare(arms, n, 0, VT_M_COMMITTED, &c, &err) == VT_OK);
	CHECK(c.nwindows > 0 && near(c.windows[0].cmp.diff[1][VT_M_COMMITTED].delta, 10 * MiB, 1));
	vt_age_comparison_free(&c);
	free(arms);
	vt_series_free(&s);

	arms = NULL;
	n = 0;
	build(&s, -40, false);
	CHECK(vt_age_arms_add(&s, "old", &arms, &n) == 0);
	CHECK_STR(arms[0].name, "old #1");
	CHECK(!arms[0].start_recorded && arms[0].age_first == 0 && arms[1].age_first == 0);
	CHECK(vt_age_compare(arms, n, 0, VT_M_COMMITTED, &c, &err) == VT_OK);
	CHECK(near(c.common_from, 0, 1e-9) && near(c.common_to, 99, 1e-9));
	CHECK(c.nwindows > 1 && near(c.windows[1].cmp.diff[1][VT_M_COMMITTED].delta, -10 * MiB, 1));
	vt_age_comparison_free(&c);
	free(arms);
	vt_series_free(&s);
}

static void test_age__refusals(void)
{
	struct vt_series s;
	struct vt_age_arm *arms = NULL;
	struct vt_age_comparison c;
	struct vt_err err;
	size_t n = 0;

	/* one incarnation */
	build(&s, -50, true);
	CHECK(vt_age_arms_add(&s, NULL, &arms, &n) == 0);
	CHECK(vt_age_compare(arms, 1, 0, VT_M_COMMITTED, &c, &err) == VT_E_NOCOMPARE);
	CHECK(strstr(err.msg, "one incarnation") != NULL);
	CHECK(c.narms == 0 && c.windows == NULL);
	/* ages that do not overlap: the first is 1000 s old when the soak begins */
	arms[0].started_t = -1000;
	arms[0].age_first = 1000;
	arms[0].age_last = 1099;
	CHECK(vt_age_compare(arms, n, 0, VT_M_COMMITTED, &c, &err) == VT_E_NOCOMPARE);
	CHECK(strstr(err.msg, "do not overlap: #1 (pid 100) t+") != NULL);
	CHECK(strstr(err.msg, "#2 (pid 200) t+1 s") != NULL);
	/* an overlap of one second at one sample a second */
	arms[0].age_first = 199;
	arms[0].age_last = 200.5;
	CHECK(vt_age_compare(arms, n, 0, VT_M_COMMITTED, &c, &err) == VT_E_NOCOMPARE);
	CHECK(strstr(err.msg, "shorter than two sampling intervals") != NULL);
	free(arms);
	vt_series_free(&s);
}

VT_TEST_MAIN(test_age__plan, test_age__matched_age_finds_the_known_difference, test_age__whole_span_would_mislead,
	     test_age__refusals)

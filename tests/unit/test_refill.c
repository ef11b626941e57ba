/*
 * test_refill.c — the curve after a trim (analyze/refill.h) on synthetic
 * curves whose half-life, level and relief are known in closed form: a
 * linear ramp back, an exponential one, one back within a tick, a trim that
 * returned nothing, a follow too short to tell, a curve that settles lower,
 * and noise on a plateau.
 */
#include "harness.h"

#include "analyze/refill.h"

#include <math.h>
#include <stdlib.h>

#define MiB (1024.0 * 1024.0)
#define MAXP 2000

static double t[MAXP], c[MAXP];

/* A curve sampled every every_s over for_s: c(t) = f(t). */
static size_t sample(double every_s, double for_s, double (*f)(double))
{
	size_t n = 0;

	for (double x = 0; x <= for_s + 1e-9 && n < MAXP; x += every_s, n++) {
		t[n] = x;
		c[n] = f(x);
	}
	return n;
}

static bool near(double a, double b, double tol)
{
	return fabs(a - b) <= tol;
}

/* 512 MiB before, 334 after, back linearly over 30 s, then flat */
static double linear30(double x)
{
	return x >= 30 ? 512 * MiB : 334 * MiB + 178 * MiB * x / 30;
}

static void test_refill__linear_back(void)
{
	size_t n = sample(1, 120, linear30);
	struct vt_refill_input in = { t, c, n, 512 * MiB, 1, 0 };
	struct vt_refill_verdict v;

	CHECK(vt_refill_judge(&in, &v) == 0);
	CHECK(v.kind == VT_REFILL_BACK);
	CHECK(near(v.returned, 178 * MiB, 1));
	CHECK(near(v.half_life_s, 15, 0.01));
	CHECK(near(v.level, 512 * MiB, 1));
	CHECK(near(v.level_at_s, 27, 0.01));     /* within 10% of 178 MiB of the level */
	CHECK(near(v.refilled_share, 1, 1e-6));
	CHECK(near(v.period_s, 15, 1e-9));
	/* mean of (512 - curve) over [0, 15]: 178 - 178 * 7.5 / 30 */
	CHECK(near(v.relief, 133.5 * MiB, 0.01 * MiB));
	CHECK(v.held_for_good == 0);
}

static double expo20(double x)
{
	return 1000 * MiB - 200 * MiB * exp(-x * log(2) / 20);
}

static void test_refill__exponential_half_life(void)
{
	size_t n = sample(1, 180, expo20);
	struct vt_refill_input in = { t, c, n, 1000 * MiB, 1, 0 };
	struct vt_refill_verdict v;

	CHECK(vt_refill_judge(&in, &v) == 0);
	CHECK(v.kind == VT_REFILL_BACK);
	CHECK(near(v.half_life_s, 20, 0.1));
	CHECK(near(v.period_s, 20, 1e-9));
	/* mean of 200 e^-kt over [0, 20] = 200 (1 - 1/2) / (k 20) = 100 / ln 2 */
	CHECK(near(v.relief, 100 / log(2) * MiB, 0.5 * MiB));
}

/* most of it back by the first sample */
static double fast(double x)
{
	return x == 0 ? 300 * MiB : 500 * MiB - 20 * MiB * exp(-x);   /* 90% back at 1 s */
}

static void test_refill__within_a_tick(void)
{
	size_t n = sample(1, 60, fast);
	struct vt_refill_input in = { t, c, n, 500 * MiB, 1, 0 };
	struct vt_refill_verdict v;

	CHECK(vt_refill_judge(&in, &v) == 0);
	CHECK(v.kind == VT_REFILL_WITHIN_TICK);
	CHECK(v.half_life_s <= 1);
	CHECK(isnan(v.relief) && isnan(v.period_s));
	/* sampled faster than a second, the tick is still a second */
	n = sample(0.1, 10, fast);
	in = (struct vt_refill_input){ t, c, n, 500 * MiB, 0.1, 0 };
	CHECK(vt_refill_judge(&in, &v) == 0);
	CHECK(v.kind == VT_REFILL_WITHIN_TICK);
	CHECK(v.tick_s == 1);
	/* half back a hair after the first reading (arena_churn at 1,500 allocations a second):
	 * a trim every second is no lever either */
	n = sample(1, 60, fast);
	c[1] = 300 * MiB + 95 * MiB;
	in = (struct vt_refill_input){ t, c, n, 500 * MiB, 1, 0 };
	CHECK(vt_refill_judge(&in, &v) == 0);
	CHECK(v.half_life_s > 1 && v.half_life_s < 2);
	CHECK(v.kind == VT_REFILL_WITHIN_TICK);
}

static double flat_400(double x)
{
	(void)x;
	return 400 * MiB;
}

static void test_refill__nothing_returned(void)
{
	size_t n = sample(1, 30, flat_400);
	struct vt_refill_input in = { t, c, n, 400.5 * MiB, 1, 0 };
	struct vt_refill_verdict v;

	CHECK(vt_refill_judge(&in, &v) == 0);
	CHECK(v.kind == VT_REFILL_NOTHING);
	CHECK(near(v.returned, 0.5 * MiB, 1));
	/* 1% of a large process is not "something" either */
	in.before = 400 * MiB + 3.9 * MiB;
	c[0] = 400 * MiB;
	in.before = 400 * MiB / 0.995;
	CHECK(vt_refill_judge(&in, &v) == 0 && v.kind == VT_REFILL_NOTHING);
}

/* back linearly over 600 s, followed 120 s */
static double slow(double x)
{
	return 100 * MiB + 100 * MiB * fmin(x / 600, 1);
}

static void test_refill__cannot_tell_yet(void)
{
	size_t n = sample(1, 120, slow);
	struct vt_refill_input in = { t, c, n, 200 * MiB, 1, 0 };
	struct vt_refill_verdict v;

	CHECK(vt_refill_judge(&in, &v) == 0);
	CHECK(v.kind == VT_REFILL_CANNOT_TELL);
	CHECK(isnan(v.half_life_s));
	CHECK(v.refilled_share > 0.15 && v.refilled_share < 0.21);
	CHECK(isnan(v.level_at_s));
	CHECK(isnan(v.relief));        /* no half-life: no period picked */
	/* a period the user asks for, inside the follow, is measured all the same */
	in.period_s = 60;
	CHECK(vt_refill_judge(&in, &v) == 0);
	CHECK(v.kind == VT_REFILL_CANNOT_TELL);
	CHECK(near(v.relief, 100 * MiB - 5 * MiB, 0.01 * MiB));
	/* and one beyond it is not */
	in.period_s = 121;
	CHECK(vt_refill_judge(&in, &v) == 0 && isnan(v.relief));
}

/* 40% back over 10 s, then flat */
static double lower(double x)
{
	return 600 * MiB + 80 * MiB * fmin(x / 10, 1);
}

static void test_refill__settled_lower(void)
{
	size_t n = sample(1, 60, lower);
	struct vt_refill_input in = { t, c, n, 800 * MiB, 1, 0 };
	struct vt_refill_verdict v;

	CHECK(vt_refill_judge(&in, &v) == 0);
	CHECK(v.kind == VT_REFILL_SETTLED_LOWER);
	CHECK(isnan(v.half_life_s));
	CHECK(near(v.level, 680 * MiB, 1));
	CHECK(near(v.held_for_good, 120 * MiB, 1));
	CHECK(near(v.refilled_share, 0.4, 1e-6));
	CHECK(near(v.level_at_s, 7.5, 0.01));    /* 680 - 20 MiB, on the ramp */
}

/* the linear ramp with +-3 MiB of noise: the plateau is still a plateau */
static void test_refill__noise_on_the_plateau(void)
{
	size_t n = sample(1, 120, linear30), i;
	struct vt_refill_input in = { t, c, n, 512 * MiB, 1, 0 };
	struct vt_refill_verdict v;
	unsigned seed = 7;

	for (i = 1; i < n; i++)
		c[i] += ((double)(rand_r(&seed) % 601) / 100 - 3) * MiB;
	CHECK(vt_refill_judge(&in, &v) == 0);
	CHECK(v.kind == VT_REFILL_BACK);
	CHECK(near(v.half_life_s, 15, 1));
	CHECK(near(v.level, 512 * MiB, 3 * MiB));
}

/* a follow stopped mid-ramp (Ctrl-C): what it has, and cannot tell */
static void test_refill__stopped_mid_ramp(void)
{
	size_t n = sample(1, 3, linear30);
	struct vt_refill_input in = { t, c, n, 512 * MiB, 1, 0 };
	struct vt_refill_verdict v;

	CHECK(vt_refill_judge(&in, &v) == 0);
	CHECK(v.kind == VT_REFILL_CANNOT_TELL);
	CHECK(near(v.refilled_share, 2.0 / 30, 1e-6));    /* the median of its last three points */
	CHECK(isnan(v.level_at_s));
	CHECK(near(v.followed_s, 3, 1e-9));
	CHECK(isnan(v.half_life_s));
	/* nothing judged without a reading after the trim */
	in.committed = (double[]){ NAN };
	in.n = 1;
	CHECK(vt_refill_judge(&in, &v) == -1);
}

static void test_refill__round_period(void)
{
	CHECK(vt_refill_round_period(17.3, 1) == 17);
	CHECK(vt_refill_round_period(43, 1) == 45);
	CHECK(vt_refill_round_period(0.4, 1) == 1);
	CHECK(vt_refill_round_period(130, 1) == 120);
	CHECK(vt_refill_round_period(1000, 1) == 1020);
}

static void test_refill__relief_needs_the_start(void)
{
	double tt[] = { 1, 2 }, cc[] = { 1, 2 };

	CHECK(isnan(vt_refill_relief(tt, cc, 2, 5, 1.5)));
	CHECK(isnan(vt_refill_relief(tt, cc, 2, 5, 0)));
}

/* 100 MiB before the trim and rising 4 MiB/s all along: 40 MiB returned, the ramp is growth too */
static double growing(double x)
{
	return 60 * MiB + 4 * MiB * x;
}

static void test_refill__growth_before_the_trim(void)
{
	size_t n = sample(0.5, 30, growing);
	struct vt_refill_input in = { t, c, n, 100 * MiB, 0.5, 0, 5, 4 * MiB };
	struct vt_refill_verdict v;
	double lt[] = { 0, 1, 2, 3, 4, 5 }, lc[] = { 80, 84, 88, 92, 96, 100 };

	for (int i = 0; i < 6; i++)
		lc[i] *= MiB;
	CHECK(near(vt_refill_slope(lt, lc, 6), 4 * MiB, 1));
	CHECK(isnan(vt_refill_slope(lt, lc, 1)));
	CHECK(vt_refill_judge(&in, &v) == 0);
	CHECK(near(v.half_life_s, 5, 0.01));
	CHECK(near(v.lead_slope, 4 * MiB, 1));
	/* 4 MiB/s over the 5 s half-life is half of the 40 MiB returned */
	CHECK(near(v.growth_share, 0.5, 1e-6));
	CHECK(v.growing);
	CHECK(v.overshot);          /* it ended at 180 MiB, far past the 100 it was at */
	/* the same curve seen flat before the trim: not growth, though it overshot */
	in.lead_slope = 0;
	CHECK(vt_refill_judge(&in, &v) == 0);
	CHECK(!v.growing && near(v.growth_share, 0, 1e-9) && v.overshot);
	/* no lead-in: nothing said of growth before */
	in.lead_s = 0;
	CHECK(vt_refill_judge(&in, &v) == 0);
	CHECK(isnan(v.lead_slope) && isnan(v.growth_share) && !v.growing);
	/* the linear refill back to its level neither grew before nor overshot */
	n = sample(1, 120, linear30);
	in = (struct vt_refill_input){ t, c, n, 512 * MiB, 1, 0, 5, 0 };
	CHECK(vt_refill_judge(&in, &v) == 0);
	CHECK(!v.growing && !v.overshot);
}

/* 60 MiB returned and nothing back yet: flat at the bottom for 3 s of a follow cut short */
static double bottom(double x)
{
	(void)x;
	return 20 * MiB;
}

static void test_refill__flat_bottom_too_short_to_settle(void)
{
	size_t n = sample(0.5, 3, bottom);
	struct vt_refill_input in = { t, c, n, 80 * MiB, 0.5, 0 };
	struct vt_refill_verdict v;

	CHECK(vt_refill_judge(&in, &v) == 0);
	CHECK(v.kind == VT_REFILL_CANNOT_TELL);
	CHECK(v.held_for_good == 0);
	/* the same bottom held for 10 s is settled: the trim's relief stays */
	n = sample(0.5, 10, bottom);
	in.n = n;
	CHECK(vt_refill_judge(&in, &v) == 0);
	CHECK(v.kind == VT_REFILL_SETTLED_LOWER);
	CHECK(near(v.held_for_good, 60 * MiB, 1));
}

VT_TEST_MAIN(test_refill__linear_back, test_refill__exponential_half_life, test_refill__within_a_tick,
	     test_refill__nothing_returned, test_refill__cannot_tell_yet, test_refill__settled_lower,
	     test_refill__noise_on_the_plateau, test_refill__stopped_mid_ramp, test_refill__round_period,
	     test_refill__relief_needs_the_start, test_refill__growth_before_the_trim,
	     test_refill__flat_bottom_too_short_to_settle)

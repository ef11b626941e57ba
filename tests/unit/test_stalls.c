/*
 * test_stalls.c — accept-queue stalls found in a series (src/analyze/stalls.c).
 */
#include "harness.h"

#include <math.h>

#include "analyze/stalls.h"

/* n single-sample points every second, accept_queue = q[i] (NAN: not read). */
static void build(struct vt_series *s, const double *q, size_t n)
{
	struct vt_stat *st;

	vt_series_init(s);
	CHECK(vt_series_reserve(s, n) == 0);
	st = vt_series_stat(s, VT_M_ACCEPT_QUEUE);
	CHECK(st != NULL);
	for (size_t i = 0; i < n; i++) {
		s->t[i] = s->t0[i] = s->t1[i] = (double)i;
		s->wall[i] = 1.7e9 + (double)i;
		s->count[i] = 1;
		s->pid[i] = 100;
		s->incarnation[i] = 0;
		st[i] = (struct vt_stat){ q[i], q[i], q[i] };
	}
	s->n = n;
	s->samples = n;
	s->info.every_s = 1;
}

static void test_stalls__ends_and_threshold(void)
{
	/* a 1-sample blip, a 4 s stall (t 3..7), a 2 s run (not longer than 2 s), one at the end */
	const double q[] = { 0, 1, 0, 2, 5, 3, 1, 0, 0, 1, 1, 0, 0, 2, 2, 2, 2 };
	struct vt_series s;
	struct vt_stalls st;

	build(&s, q, sizeof(q) / sizeof(*q));
	CHECK(vt_stalls_find(&s, 2, &st) == 0);
	CHECK(st.recorded && st.listening);
	CHECK(st.deepest == 5 && st.resolution_s == 1);
	CHECK_EQ_U64(st.n, 2);
	if (st.n == 2) {
		CHECK(st.v[0].t0 == 3 && st.v[0].t1 == 7 && st.v[0].length_s == 4 && st.v[0].depth == 5);
		CHECK(!st.v[0].ongoing && st.v[0].wall0 == 1.7e9 + 3 && st.v[0].wall1 == 1.7e9 + 7);
		CHECK(st.v[1].t0 == 13 && st.v[1].t1 == 16 && st.v[1].ongoing && st.v[1].pid == 100);
	}
	vt_stalls_free(&st);
	CHECK(vt_stalls_find(&s, 10, &st) == 0 && st.n == 0 && st.deepest == 5);
	vt_stalls_free(&st);
	vt_series_free(&s);
}

static void test_stalls__breaks(void)
{
	const double q[] = { 1, 1, 1, NAN, 1, 1, 1, 1, 1, 1, 1, 1, 1 };
	struct vt_series s;
	struct vt_stalls st;

	build(&s, q, sizeof(q) / sizeof(*q));
	/* a restart at t 6: a new process, a new run; a gap before t 10 */
	for (size_t i = 6; i < s.n; i++) {
		s.incarnation[i] = 1;
		s.pid[i] = 200;
	}
	for (size_t i = 10; i < s.n; i++)
		s.t[i] = s.t0[i] = s.t1[i] = (double)i + 60;
	CHECK(vt_stalls_find(&s, 1.5, &st) == 0);
	/* t 0..2 (unread at 3: not seen to empty), 4..5 (its process ended: 1 s, too
	 * short), 6..9 (the gap: not seen to empty), 70..72 (the end) */
	CHECK_EQ_U64(st.n, 3);
	if (st.n == 3) {
		CHECK(st.v[0].t0 == 0 && st.v[0].t1 == 2 && st.v[0].ongoing && st.v[0].pid == 100);
		CHECK(st.v[1].t0 == 6 && st.v[1].t1 == 9 && st.v[1].ongoing && st.v[1].pid == 200);
		CHECK(st.v[2].t0 == 70 && st.v[2].t1 == 72 && st.v[2].ongoing);
	}
	vt_stalls_free(&st);
	vt_series_free(&s);
}

static void test_stalls__not_recorded(void)
{
	struct vt_series s;
	struct vt_stalls st;

	vt_series_init(&s);
	CHECK(vt_stalls_find(&s, 2, &st) == 0);
	CHECK(!st.recorded && !st.listening && isnan(st.deepest) && st.n == 0);
	vt_stalls_free(&st);
	vt_series_free(&s);
}

VT_TEST_MAIN(test_stalls__ends_and_threshold, test_stalls__breaks, test_stalls__not_recorded)

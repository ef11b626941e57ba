/*
 * test_alloc_trend.c — a soak's allocation profiles pooled and compared
 * (analyze/alloc_trend.h): a site's rates are its bytes and calls over the
 * armed time of every profile, its first and last rates those of the first
 * and last profile; B against A names the site whose churn changed most,
 * calls a change under 10% or a site of too few calls within noise, and
 * says why when a side holds no profile.
 */
#include "harness.h"

#include "analyze/alloc_trend.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void site(struct vt_alloc_look_site *s, const char *name, uint64_t calls, uint64_t bytes, double freed)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name);
	snprintf(s->module, sizeof(s->module), "app");
	s->calls = s->linked = calls;
	s->bytes = bytes;
	s->freed = (uint64_t)(freed * (double)calls);
	s->freed_1ms = s->freed;
	s->freed_bytes = (uint64_t)(freed * (double)bytes);
	s->live = calls - s->freed;
	s->live_bytes = bytes - s->freed_bytes;
}

/*
 * looks: n profiles of armed_s each; in profile i, poll_round makes
 * poll_calls calls of 256 bytes (all freed), cache_fill 100 calls of 4 KiB
 * (kept), and a rare site 5 calls in the last profile only.
 */
static void looks(struct vt_alloc_looks *l, size_t n, double armed_s, uint64_t poll_calls)
{
	memset(l, 0, sizeof(*l));
	l->v = calloc(n, sizeof(*l->v));
	CHECK(l->v != NULL);
	l->n = n;
	for (size_t i = 0; i < n; i++) {
		struct vt_alloc_look *k = &l->v[i];

		k->id = (int64_t)i + 1;
		k->t = 600.0 * (double)i;
		k->pid = 42;
		k->duration_s = 10;
		k->armed_s = armed_s;
		k->slowdown = 0.01 * (double)(i + 1);
		k->nsites = i + 1 == n ? 3 : 2;
		k->sites_total = k->nsites;
		k->sites = calloc(k->nsites, sizeof(*k->sites));
		CHECK(k->sites != NULL);
		site(&k->sites[0], "poll_round", poll_calls * (i + 1), 256 * poll_calls * (i + 1), 1.0);
		site(&k->sites[1], "cache_fill", 100, 100 * 4096, 0.0);
		if (k->nsites == 3)
			site(&k->sites[2], "rare", 5, 5 * 64, 1.0);
		for (size_t j = 0; j < k->nsites; j++) {
			k->calls += k->sites[j].calls;
			k->bytes += k->sites[j].bytes;
		}
	}
}

static const struct vt_alloc_trend_site *find(const struct vt_alloc_trend *t, const char *name)
{
	for (size_t i = 0; i < t->nsites; i++)
		if (strcmp(t->sites[i].name, name) == 0)
			return &t->sites[i];
	return NULL;
}

static void test_alloc_trend__pooled_over_armed_time(void)
{
	struct vt_alloc_looks l;
	struct vt_alloc_trend t;
	struct vt_err err;
	const struct vt_alloc_trend_site *p, *c;

	looks(&l, 2, 0.5, 1000);   /* poll_round: 1000 then 2000 calls */
	CHECK(vt_alloc_trend_from(&l, &t, &err) == VT_OK);
	CHECK(l.v == NULL);          /* taken over */
	CHECK(t.looks.n == 2);
	CHECK(fabs(t.armed_s - 1.0) < 1e-9);
	CHECK(fabs(t.slowdown_max - 0.02) < 1e-9);
	p = find(&t, "poll_round");
	c = find(&t, "cache_fill");
	CHECK(p && c && find(&t, "rare"));
	CHECK(p->calls == 3000);
	CHECK(fabs(p->calls_per_s - 3000) < 1e-6);
	CHECK(fabs(p->bytes_per_s - 3000 * 256) < 1e-6);
	CHECK(fabs(p->churn_per_h - 3000 * 256 * 3600.0) < 1e-3);
	CHECK(fabs(p->first_bytes_per_s - 1000 * 256 / 0.5) < 1e-6);
	CHECK(fabs(p->last_bytes_per_s - 2000 * 256 / 0.5) < 1e-6);
	CHECK(p->looks == 2 && find(&t, "rare")->looks == 1);
	CHECK(c->churn_per_h == 0);
	/* by bytes/s, most first: cache_fill 200 x 4 KiB = 819,200 B/s, poll_round 3000 x 256 = 768,000 */
	CHECK(strcmp(t.sites[0].name, "cache_fill") == 0 && strcmp(t.sites[1].name, "poll_round") == 0);
	vt_alloc_trend_release(&t);
}

static void test_alloc_trend__diff_names_the_churn_removed(void)
{
	struct vt_alloc_looks la, lb;
	struct vt_alloc_diff d;
	struct vt_err err;

	memset(&d, 0, sizeof(d));
	looks(&la, 2, 0.5, 1000);
	looks(&lb, 2, 0.5, 100);    /* the fix: a tenth of the churn */
	CHECK(vt_alloc_trend_from(&la, &d.a, &err) == VT_OK);
	CHECK(vt_alloc_trend_from(&lb, &d.b, &err) == VT_OK);
	CHECK(vt_alloc_diff_sites(&d, &err) == VT_OK);
	CHECK(d.why[0] == '\0');
	CHECK(d.nrows == 3);
	CHECK(strcmp(d.rows[0].name, "poll_round") == 0);   /* the largest change first */
	CHECK(!d.rows[0].within_noise);
	CHECK(strstr(d.headline, "the change removed") && strstr(d.headline, "from poll_round"));
	for (size_t i = 0; i < d.nrows; i++) {
		if (strcmp(d.rows[i].name, "cache_fill") == 0)
			CHECK(d.rows[i].within_noise);      /* the same on both sides */
		if (strcmp(d.rows[i].name, "rare") == 0)
			CHECK(d.rows[i].within_noise);      /* 5 calls: too few to judge */
	}
	vt_alloc_diff_release(&d);
}

static void test_alloc_trend__small_change_is_noise(void)
{
	struct vt_alloc_looks la, lb;
	struct vt_alloc_diff d;
	struct vt_err err;

	memset(&d, 0, sizeof(d));
	looks(&la, 1, 1.0, 1000);
	looks(&lb, 1, 1.0, 1050);   /* +5% */
	CHECK(vt_alloc_trend_from(&la, &d.a, &err) == VT_OK);
	CHECK(vt_alloc_trend_from(&lb, &d.b, &err) == VT_OK);
	CHECK(vt_alloc_diff_sites(&d, &err) == VT_OK);
	for (size_t i = 0; i < d.nrows; i++)
		CHECK(d.rows[i].within_noise);
	CHECK(strstr(d.headline, "no site's churn changed") != NULL);
	vt_alloc_diff_release(&d);
}

static void test_alloc_trend__a_side_without_profiles_says_why(void)
{
	struct vt_alloc_looks la, lb;
	struct vt_alloc_diff d;
	struct vt_err err;

	memset(&d, 0, sizeof(d));
	looks(&la, 1, 1.0, 1000);
	memset(&lb, 0, sizeof(lb));
	snprintf(lb.why, sizeof(lb.why), "no allocation profiles in this recording");
	CHECK(vt_alloc_trend_from(&la, &d.a, &err) == VT_OK);
	CHECK(vt_alloc_trend_from(&lb, &d.b, &err) == VT_OK);
	CHECK(vt_alloc_diff_sites(&d, &err) == VT_OK);
	CHECK(d.nrows == 0);
	CHECK(strstr(d.why, "no allocation profiles") != NULL);
	vt_alloc_diff_release(&d);
}

VT_TEST_MAIN(test_alloc_trend__pooled_over_armed_time, test_alloc_trend__diff_names_the_churn_removed,
	     test_alloc_trend__small_change_is_noise, test_alloc_trend__a_side_without_profiles_says_why)

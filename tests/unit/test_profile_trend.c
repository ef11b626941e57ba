/*
 * test_profile_trend.c — which bucket grew when CPU rose: named with its
 * figures when the growth is beyond the intervals, "cannot tell yet" with
 * fewer than two usable profiles, CPU that did not rise, or growth inside
 * the noise.
 */
#include "harness.h"

#include "analyze/profile_trend.h"
#include "profile_build.h"
#include "store/profile_store.h"
#include "store/store.h"

#include <math.h>
#include <stdlib.h>
#include <unistd.h>

/* A trend of n rows over buckets "a", "b", "c"; row i: cores, then samples of a, b, c. */
static void make(struct vt_prof_trend *t, size_t n, const double (*rows)[4])
{
	size_t i;
	uint32_t b;

	memset(t, 0, sizeof(*t));
	t->nbuckets = 3;
	snprintf(t->bucket_names[0], sizeof(t->bucket_names[0]), "a");
	snprintf(t->bucket_names[1], sizeof(t->bucket_names[1]), "b");
	snprintf(t->bucket_names[2], sizeof(t->bucket_names[2]), "c");
	t->rows = calloc(n, sizeof(*t->rows));
	t->n = n;
	for (i = 0; i < n; i++) {
		struct vt_prof_trend_row *r = &t->rows[i];
		uint64_t total = (uint64_t)(rows[i][1] + rows[i][2] + rows[i][3]);

		r->at.t = 10.0 * (double)i;
		r->at.pid = 42;
		r->cores = rows[i][0];
		r->cpu_samples = total;
		r->few_samples = total < VT_PROF_FEW_SAMPLES;
		for (b = 0; b < 3; b++) {
			vt_prof_share_of((uint64_t)rows[i][1 + b], total, &r->share[b]);
			t->seen[b] = t->seen[b] || rows[i][1 + b] > 0;
		}
	}
	vt_prof_trend_judge(t);
}

static void test_profile_trend__the_bucket_that_grew_is_named(void)
{
	/* CPU 0.5 -> 1.5 cores; b goes from 20% to 60% of the samples: 0.1 -> 0.9 cores */
	static const double rows[][4] = { { 0.5, 600, 200, 200 }, { 0.8, 550, 300, 150 }, { 1.5, 300, 600, 100 } };
	struct vt_prof_trend t;

	make(&t, 3, rows);
	CHECK_EQ_I64(t.verdict, VT_PT_GREW);
	CHECK(t.by_cpu && t.from == 0 && t.to == 2);
	CHECK(t.ngrew >= 1 && t.grew[0].bucket == 1);
	CHECK(fabs(t.grew[0].cores_from - 0.1) < 1e-9 && fabs(t.grew[0].cores_to - 0.9) < 1e-9);
	CHECK(t.grew[0].pm > 0 && t.grew[0].pm < t.grew[0].delta);
	CHECK(strstr(t.why, "b grew most") != NULL);
	vt_prof_trend_release(&t);
}

static void test_profile_trend__cannot_tell(void)
{
	static const double one[][4] = { { 1.0, 100, 100, 100 } };
	static const double few[][4] = { { 0.5, 100, 100, 100 }, { 1.5, 10, 10, 10 } };
	static const double flat[][4] = { { 1.0, 100, 100, 100 }, { 1.01, 100, 200, 100 } };
	static const double noise[][4] = { { 0.5, 30, 30, 30 }, { 0.6, 30, 33, 30 } };
	struct vt_prof_trend t;

	make(&t, 1, one);
	CHECK_EQ_I64(t.verdict, VT_PT_CANNOT_TELL);
	CHECK(strstr(t.why, "two are needed") != NULL);
	vt_prof_trend_release(&t);

	make(&t, 2, few);             /* the second has too few samples to count */
	CHECK_EQ_I64(t.verdict, VT_PT_CANNOT_TELL);
	vt_prof_trend_release(&t);

	make(&t, 2, flat);
	CHECK_EQ_I64(t.verdict, VT_PT_CANNOT_TELL);
	CHECK(strstr(t.why, "did not rise") != NULL);
	vt_prof_trend_release(&t);

	make(&t, 2, noise);           /* CPU rose, but each bucket's rise is within its ± */
	CHECK_EQ_I64(t.verdict, VT_PT_CANNOT_TELL);
	CHECK(strstr(t.why, "beyond its") != NULL);
	vt_prof_trend_release(&t);

	make(&t, 0, NULL);
	CHECK_EQ_I64(t.verdict, VT_PT_NONE);
	vt_prof_trend_release(&t);
}

/* Without CPU figures the first and last profiles are compared by share alone, and it says so. */
static void test_profile_trend__without_cpu_first_and_last(void)
{
	static const double rows[][4] = { { NAN, 600, 200, 200 }, { NAN, 200, 200, 600 } };
	struct vt_prof_trend t;

	make(&t, 2, rows);
	CHECK_EQ_I64(t.verdict, VT_PT_GREW);
	CHECK(!t.by_cpu && t.from == 0 && t.to == 1 && t.grew[0].bucket == 2);
	CHECK(strstr(t.why, "CPU unknown") != NULL);
	vt_prof_trend_release(&t);
}

/* ---- two recordings' profiles ---- */

/* A recording at path holding n profiles of one stack each: samples[i] of leaf[i], taken at 10 s apart. */
static void recording(const char *path, size_t n, const char *const *leaf, const uint64_t *samples, pid_t pid)
{
	struct vt_recording_info info = { 0 };
	struct vt_store_profile at = { 0 };
	struct vt_store *st = NULL;
	struct vt_err err;

	snprintf(info.target, sizeof(info.target), "-- ./srv");
	info.every_s = 1;
	info.started_wall = 1.7e9;
	CHECK(vt_store_create(path, &info, true, &st, &err) == VT_OK);
	for (size_t i = 0; st && i < n; i++) {
		struct vt_profile *p = NULL;

		CHECK(vt_profile_new(&p, &err) == VT_OK);
		p->meta.pid = pid;
		snprintf(p->meta.comm, sizeof(p->meta.comm), "srv");
		snprintf(p->meta.method, sizeof(p->meta.method), "perf cpu-clock");
		p->meta.hz = 99;
		p->meta.duration_s = 5;
		CHECK(pb_stack(p, vt_profile_intern_thread(p, pid + (pid_t)i, "srv"), VT_PROF_RUNNING, NULL, samples[i],
			       leaf[i], "srv!main", NULL) == VT_OK);
		at.t = 10.0 * (double)i;
		at.wall = 1.7e9 + at.t;
		CHECK(vt_store_profile_append(st, &at, p, NULL, &err) == VT_OK);
		vt_profile_free(&p);
	}
	CHECK(st && vt_store_close(st, &err) == VT_OK);
}

static uint64_t samples_of(const struct vt_profile *p, const char *fn)
{
	uint64_t n = 0;
	char label[64];

	for (uint32_t i = 0; p && i < p->nstacks; i++) {
		vt_profile_loc_label(p, vt_profile_stack_locs(p, &p->stacks[i])[0], label, sizeof(label));
		if (!strcmp(label, fn))
			n += p->stacks[i].count;
	}
	return n;
}

/*
 * The differential flame graph's profiles are each side's profiles pooled,
 * as the tables pool them: every profile's stacks, not the last one's (a
 * side of three profiles showed only its third).
 */
static void test_profile_trend__diff_pools_every_profile(void)
{
	static const char *const a_leaf[3] = { "srv!parse", "srv!hash", "srv!parse" };
	static const uint64_t a_n[3] = { 100, 200, 300 };
	static const char *const b_leaf[2] = { "srv!hash", "srv!send" };
	static const uint64_t b_n[2] = { 50, 70 };
	char dir[] = "/tmp/vitals-test-profile-trend-XXXXXX", a[64], b[64];
	struct vt_prof_diff d;
	struct vt_err err;

	if (!mkdtemp(dir))
		abort();
	snprintf(a, sizeof(a), "%s/a.db", dir);
	snprintf(b, sizeof(b), "%s/b.db", dir);
	recording(a, 3, a_leaf, a_n, 100);
	recording(b, 2, b_leaf, b_n, 200);
	CHECK(vt_prof_diff_files(a, b, NULL, &d, &err) == VT_OK);
	CHECK_EQ_U64(d.a_profiles, 3);
	CHECK_EQ_U64(d.b_profiles, 2);
	CHECK(d.a_pooled != NULL && d.b_pooled != NULL);
	if (d.a_pooled && d.b_pooled) {
		CHECK_EQ_U64(d.a_pooled->meta.samples, 600);
		CHECK_EQ_U64(samples_of(d.a_pooled, "parse"), 400);
		CHECK_EQ_U64(samples_of(d.a_pooled, "hash"), 200);
		CHECK_EQ_U64(d.b_pooled->meta.samples, 120);
		CHECK_EQ_U64(samples_of(d.b_pooled, "send"), 70);
		CHECK_EQ_U64(samples_of(d.b_pooled, "hash"), 50);
		CHECK(d.a_pooled->meta.duration_s == 15);     /* sampled 3 x 5 s */
		CHECK_EQ_U64(d.a_pooled->nthreads, 3);        /* each profile's thread */
		CHECK_STR(d.a_pooled->meta.method, "perf cpu-clock");
	}
	vt_prof_diff_release(&d);
	unlink(a);
	unlink(b);
	rmdir(dir);
}

VT_TEST_MAIN(test_profile_trend__the_bucket_that_grew_is_named, test_profile_trend__cannot_tell,
	     test_profile_trend__without_cpu_first_and_last, test_profile_trend__diff_pools_every_profile)

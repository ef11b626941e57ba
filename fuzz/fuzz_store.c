/*
 * fuzz_store.c — reading a recording that may be damaged or hostile: the
 * bytes become a file that vt_store_load opens.  A recording is a file a
 * user may receive from someone else ("show the curves to a colleague"),
 * so a corrupt page, a foreign schema or absurd values in meta must end in
 * an error or a series, never a crash.  It is loaded twice: into points
 * of samples, and into points wide enough to come from its per-minute
 * rollups (rollups that do not add up are passed over for the samples).
 * Every series loaded is also
 * analysed, so the analysis sees whatever the loader lets through.  The
 * profiles a soak stored in it are read too, each whole, and every stack
 * of one read is walked and labelled: whatever the reader lets through
 * must point inside the profile.  The lock looks of the last sample's
 * process are read, counted up and rendered as analyze shows them; its
 * allocation profiles are read, pooled and rendered, and set against
 * themselves as compare would.  Its incarnations (with the process starts
 * it records) are compared at matched age and rendered as compare --by-age
 * renders them, when there are two.
 */
#include "analyze/age_compare.h"
#include "analyze/alloc_trend.h"
#include "analyze/soak.h"
#include "render/age_compare.h"
#include "render/alloc_trend.h"
#include "render/locks.h"
#include "store/lock_store.h"
#include "store/profile_store.h"
#include "store/store.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every stack's frames labelled: an index out of range would read outside the arrays. */
static void walk(const struct vt_profile *p)
{
	char label[256];
	uint64_t total = 0;
	uint32_t i, k;

	for (i = 0; i < p->nstacks; i++) {
		const struct vt_prof_stack *s = &p->stacks[i];
		const uint32_t *locs = vt_profile_stack_locs(p, s);

		for (k = 0; k < s->depth; k++)
			vt_profile_loc_label(p, locs[k], label, sizeof(label));
		total += p->threads[s->thread].samples + (uint64_t)vt_profile_str(p, s->wait)[0];
	}
	for (i = 0; i < p->nmodules; i++)
		total += (uint64_t)vt_profile_str(p, p->modules[i].path)[0];
	if (total == 42)
		label[0] = 0;
}

/* The looks at process pid's locks, rendered as text and JSON to nowhere. */
static void read_locks(const char *path, pid_t pid)
{
	struct vt_lock_history h;
	struct vt_err err;
	FILE *null = fopen("/dev/null", "w");

	if (vt_store_locks_load(path, pid, &h, &err) == VT_OK && null) {
		json_t *j = vt_render_lock_history_json(&h);

		vt_render_lock_history_text(null, &h, 5);
		json_decref(j);
	}
	vt_lock_history_release(&h);
	if (null)
		fclose(null);
}

/* The allocation profiles pooled, and compared with themselves, rendered to nowhere. */
static void read_allocs(const char *path)
{
	struct vt_alloc_trend t;
	struct vt_alloc_diff d;
	struct vt_err err;
	FILE *null = fopen("/dev/null", "w");

	if (vt_alloc_trend_load(path, &t, &err) == VT_OK && null) {
		json_t *j = vt_render_alloc_trend_json(&t);

		vt_render_alloc_trend_text(null, &t);
		json_decref(j);
	}
	vt_alloc_trend_release(&t);
	if (vt_alloc_diff_files(path, path, &d, &err) == VT_OK && null) {
		json_t *j = vt_render_alloc_diff_json(&d, "a", "b");

		vt_render_alloc_diff_text(null, &d, "a", "b");
		json_decref(j);
	}
	vt_alloc_diff_release(&d);
	if (null)
		fclose(null);
}

/* Its incarnations at matched age, rendered to nowhere. */
static void by_age(const struct vt_series *s, char *path)
{
	struct vt_age_arm *arms = NULL;
	struct vt_age_comparison c;
	struct vt_err err;
	size_t n = 0;
	FILE *null;

	if (vt_age_arms_add(s, NULL, &arms, &n) || vt_age_compare(arms, n, 0, VT_M_COMMITTED, &c, &err) != VT_OK) {
		free(arms);
		return;
	}
	null = fopen("/dev/null", "w");
	if (null) {
		struct vt_age_report r = { &c, &path, 1, true };

		vt_render_age_text(null, &r);
		vt_render_age_json(null, &r);
		vt_render_age_html(null, &r);
		fclose(null);
	}
	vt_age_comparison_free(&c);
	free(arms);
}

static void read_profiles(const char *path)
{
	struct vt_store_profiles *r;
	struct vt_profile *p;
	struct vt_err err;
	size_t i;

	if (vt_store_profiles_open(path, &r, &err) != VT_OK)
		return;
	for (i = 0; i < vt_store_profiles_count(r); i++) {
		if (vt_store_profiles_read(r, i, &p, &err) != VT_OK)
			continue;
		walk(p);
		vt_profile_free(&p);
	}
	vt_store_profiles_close(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/vitals-fuzz-store-XXXXXX";
	struct vt_soak_opts opts;
	struct vt_soak_verdict v;
	struct vt_series s;
	struct vt_err err;
	size_t k;
	pid_t pid = 0;
	int fd = mkstemp(path);
	FILE *f;

	if (fd < 0)
		return 0;
	f = fdopen(fd, "wb");
	if (!f) {
		close(fd);
		unlink(path);
		return 0;
	}
	if (size)
		fwrite(data, 1, size, f);
	fclose(f);
	/* 200 points: a short recording's samples; 20: its rollups, when they are a minute wide */
	for (k = 0; k < 2; k++) {
		vt_series_init(&s);
		if (vt_store_load(path, k ? 20 : 200, &s, &err) == VT_OK) {
			vt_soak_opts_default(&opts);
			vt_soak_analyze(&s, &opts, &v);
			if (k == 0)
				pid = s.n ? s.pid[s.n - 1] : 0;
			by_age(&s, path);
			vt_series_free(&s);
		}
	}
	read_profiles(path);
	read_locks(path, pid);
	read_allocs(path);
	unlink(path);
	/* an input whose header says WAL leaves SQLite's side files after a read */
	for (k = 0; k < 2; k++) {
		char side[sizeof(path) + 4];

		snprintf(side, sizeof(side), "%s%s", path, k ? "-shm" : "-wal");
		unlink(side);
	}
	return 0;
}

/*
 * compare_files.c — recordings read from disk, labelled and compared (see
 * vt_compare_files in compare.h), or their incarnations at matched age
 * (vt_age_compare_files in age_compare.h).
 */
#include "analyze/compare.h"
#include "analyze/age_compare.h"

#include "base/units.h"
#include "store/store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The label of recording i before duplicates are told apart. */
static void base_label(const char *names, const struct vt_series *s, const char *path, size_t i, char *buf,
		       size_t cap)
{
	const char *p, *base;
	size_t k = 0;

	if (names) {
		for (p = names; *p && k < i; p++)
			k += *p == ',';
		if (k == i && *p && *p != ',') {
			snprintf(buf, cap, "%.*s", (int)strcspn(p, ","), p);
			return;
		}
	}
	if (s->info.arm[0]) {
		snprintf(buf, cap, "%s", s->info.arm);
		return;
	}
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	snprintf(buf, cap, "%s", base);
	if ((p = strrchr(buf, '.')) && strcmp(p, ".db") == 0)
		buf[p - buf] = '\0';
}

/* The folder path is in, "" when none ("run.db", "/run.db"). */
static void parent_of(const char *path, char *buf, size_t cap)
{
	const char *slash = strrchr(path, '/'), *start;

	buf[0] = '\0';
	if (!slash || slash == path)
		return;
	for (start = slash; start > path && start[-1] != '/'; start--)
		;
	snprintf(buf, cap, "%.*s", (int)(slash - start), start);
}

static bool label_taken(char (*labels)[64], size_t n, size_t self)
{
	size_t j;

	for (j = 0; j < n; j++)
		if (j != self && !strcmp(labels[j], labels[self]))
			return true;
	return false;
}

/* Labels that would be the same: the folder first ("a/run", "b/run"), then the position. */
static void tell_apart(char *const *paths, char (*labels)[64], size_t n)
{
	char parent[64], tmp[64];
	bool *dup = calloc(n ? n : 1, sizeof(*dup));
	size_t i;

	if (!dup)
		return;
	for (i = 0; i < n; i++)
		dup[i] = label_taken(labels, n, i);
	for (i = 0; i < n; i++) {
		if (!dup[i])
			continue;
		parent_of(paths[i], parent, sizeof(parent));
		if (parent[0]) {
			snprintf(tmp, sizeof(tmp), "%.24s/%.38s", parent, labels[i]);
			memcpy(labels[i], tmp, sizeof(tmp));
		}
	}
	for (i = 0; i < n; i++) {
		if (!label_taken(labels, n, i))
			continue;
		snprintf(tmp, sizeof(tmp), "%.40s #%u", labels[i], (unsigned)(i + 1) % 1000000u);
		memcpy(labels[i], tmp, sizeof(tmp));
	}
	free(dup);
}

int vt_compare_files(char *const *paths, size_t n, const char *names, enum vt_metric metric,
		     struct vt_compare_set *out, struct vt_err *err)
{
	struct vt_soak_opts so;
	const struct vt_series **sp = NULL;
	size_t i;
	int rc = VT_OK;

	memset(out, 0, sizeof(*out));
	out->series = calloc(n ? n : 1, sizeof(*out->series));
	out->labels = calloc(n ? n : 1, sizeof(*out->labels));
	out->label_ptrs = calloc(n ? n : 1, sizeof(*out->label_ptrs));
	sp = calloc(n ? n : 1, sizeof(*sp));
	if (!out->series || !out->labels || !out->label_ptrs || !sp) {
		rc = vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		vt_series_init(&out->series[i]);
		out->n++;
		if ((rc = vt_store_load(paths[i], 0, &out->series[i], err)) != VT_OK)
			goto out;
		sp[i] = &out->series[i];
		base_label(names, &out->series[i], paths[i], i, out->labels[i], sizeof(out->labels[i]));
	}
	tell_apart(paths, out->labels, n);
	for (i = 0; i < n; i++)
		out->label_ptrs[i] = out->labels[i];
	vt_soak_opts_default(&so);
	so.metric = metric;
	if (vt_compare(sp, out->label_ptrs, n, &so, &out->cmp) != 0)
		rc = vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory comparing recordings");
out:
	free(sp);
	if (rc != VT_OK)
		vt_compare_set_release(out);
	return rc;
}

void vt_compare_set_release(struct vt_compare_set *s)
{
	size_t i;

	vt_comparison_free(&s->cmp);
	for (i = 0; s->series && i < s->n; i++)
		vt_series_free(&s->series[i]);
	free(s->series);
	free(s->labels);
	free(s->label_ptrs);
	memset(s, 0, sizeof(*s));
}

/* ---- incarnations at matched age (age_compare.h) ---- */

/* The i-th of the comma-separated names into buf; false when there is none. */
static bool nth_name(const char *names, size_t i, char *buf, size_t cap)
{
	const char *p;
	size_t k = 0;

	if (!names)
		return false;
	for (p = names; *p && k < i; p++)
		k += *p == ',';
	if (k != i || !*p || *p == ',')
		return false;
	snprintf(buf, cap, "%.*s", (int)strcspn(p, ","), p);
	return true;
}

/*
 * Keep the arms pick lists ("1,3", numbered from 1), in its order.  A pick
 * that is not such a list, names one that is not there or one twice is
 * VT_E_USAGE.
 */
static int pick_arms(const char *pick, struct vt_age_arm *arms, size_t *n, struct vt_err *err)
{
	struct vt_age_arm *kept;
	const char *p = pick;
	size_t k = 0, j;

	kept = malloc(sizeof(*kept) * (*n ? *n : 1));
	if (!kept)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
	while (*p) {
		char *end;
		unsigned long v;

		errno = 0;
		v = *p >= '0' && *p <= '9' ? strtoul(p, &end, 10) : 0;
		if (!v || errno || (*end && *end != ',')) {
			free(kept);
			return vt_err_set(err, VT_E_USAGE, 0, "--incarnations '%s' is not a list of incarnations "
					  "numbered from 1 (1,3)", pick);
		}
		if (v > *n) {
			free(kept);
			return vt_err_set(err, VT_E_USAGE, 0, "--incarnations %lu: the recordings hold %zu incarnation%s",
					  v, *n, *n == 1 ? "" : "s");
		}
		for (j = 0; j < k; j++)
			if (kept[j].from == arms[v - 1].from && kept[j].series == arms[v - 1].series) {
				free(kept);
				return vt_err_set(err, VT_E_USAGE, 0, "--incarnations names %lu twice", v);
			}
		if (k < *n)
			kept[k++] = arms[v - 1];
		p = *end ? end + 1 : end;
	}
	memcpy(arms, kept, sizeof(*arms) * k);
	*n = k;
	free(kept);
	return VT_OK;
}

/* One recording of one incarnation (or none): say so, and what would compare. */
static int too_few(const char *path, const struct vt_series *s, size_t narms, struct vt_err *err)
{
	char span[32];

	if (narms == 0)
		return vt_err_set(err, VT_E_NOCOMPARE, 0, "'%s' holds no samples: nothing to compare at matched age",
				  path);
	vt_err_set(err, VT_E_NOCOMPARE, 0, "'%s' holds one incarnation of its process (pid %d, %s of samples): "
		   "no restart in it to compare at matched age", path, (int)s->pid[0],
		   vt_fmt_span(s->t1[s->n - 1] - s->t0[0], span, sizeof(span)));
	vt_err_hint(err, "a soak that follows a service (--name, --pidfile, or a pid whose command line it can "
		    "read) records each restart as a new incarnation; two recordings of one service compare at "
		    "matched age with vitals compare --by-age A.db B.db");
	return VT_E_NOCOMPARE;
}

int vt_age_compare_files(char *const *paths, size_t n, const char *names, const char *pick, double width_s,
			 enum vt_metric metric, struct vt_age_set *out, struct vt_err *err)
{
	struct vt_age_arm *arms = NULL;
	char (*labels)[64] = NULL;
	size_t i, narms = 0, before;
	int rc = VT_OK;

	memset(out, 0, sizeof(*out));
	out->series = calloc(n ? n : 1, sizeof(*out->series));
	labels = calloc(n ? n : 1, sizeof(*labels));
	if (!out->series || !labels) {
		rc = vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		vt_series_init(&out->series[i]);
		out->n++;
		if ((rc = vt_store_load(paths[i], 0, &out->series[i], err)) != VT_OK)
			goto out;
		if (n > 1)
			base_label(NULL, &out->series[i], paths[i], i, labels[i], sizeof(labels[i]));
	}
	if (n > 1)
		tell_apart(paths, labels, n);
	for (i = 0; i < n; i++) {
		const struct vt_series *s = &out->series[i];
		uint32_t incarnations = s->n ? s->incarnation[s->n - 1] + 1 : 0;

		before = narms;
		/* a recording of one incarnation among several is named by its label alone */
		if (vt_age_arms_add(s, incarnations > 1 ? labels[i] : NULL, &arms, &narms)) {
			rc = vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
			goto out;
		}
		for (size_t j = before; j < narms; j++)
			arms[j].recording = i;
		if (n > 1 && incarnations == 1)
			snprintf(arms[before].name, sizeof(arms[before].name), "%s", labels[i]);
		if (n == 1 && narms - before < 2 && !pick) {
			rc = too_few(paths[i], s, narms - before, err);
			goto out;
		}
	}
	if (pick && (rc = pick_arms(pick, arms, &narms, err)) != VT_OK)
		goto out;
	for (i = 0; i < narms; i++)
		nth_name(names, i, arms[i].name, sizeof(arms[i].name));
	rc = vt_age_compare(arms, narms, width_s, metric, &out->cmp, err);
out:
	free(arms);
	free(labels);
	if (rc != VT_OK)
		vt_age_set_release(out);
	return rc;
}

void vt_age_set_release(struct vt_age_set *s)
{
	size_t i;

	vt_age_comparison_free(&s->cmp);
	for (i = 0; s->series && i < s->n; i++)
		vt_series_free(&s->series[i]);
	free(s->series);
	memset(s, 0, sizeof(*s));
}

/*
 * compare_files.c — recordings read from disk, labelled and compared (see
 * vt_compare_files in compare.h).
 */
#include "analyze/compare.h"

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

/*
 * alloc_buckets.c — allocation sites by bucket (see alloc_buckets.h).
 */
#include "analyze/alloc_buckets.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_bytes(const void *x, const void *y)
{
	const struct vt_alloc_bucket *a = x, *b = y;

	return a->bytes < b->bytes ? 1 : a->bytes > b->bytes ? -1 : strcmp(a->name, b->name);
}

int vt_alloc_buckets_compute(const struct vt_allocs *a, const struct vt_bucket_rules *rules,
			     struct vt_alloc_buckets *out, struct vt_err *err)
{
	struct vt_bucket_classifier *c = NULL;
	uint32_t *of_rule = NULL;   /* rules' bucket -> index in out->v + 1 */
	uint32_t *by_rule = NULL;   /* per site: its rules' bucket */
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = vt_bucket_classifier_new(rules, a->p, &c, err)))
		return rc;
	out->v = calloc(rules->nbuckets ? rules->nbuckets : 1, sizeof(*out->v));
	of_rule = calloc(rules->nbuckets ? rules->nbuckets : 1, sizeof(*of_rule));
	by_rule = calloc(a->nsites ? a->nsites : 1, sizeof(*by_rule));
	out->site_bucket = calloc(a->nsites ? a->nsites : 1, sizeof(*out->site_bucket));
	if (!out->v || !of_rule || !by_rule || !out->site_bucket) {
		rc = vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
		goto out;
	}
	out->nsites = a->nsites;
	for (size_t i = 0; i < a->nsites; i++) {
		const struct vt_alloc_site *s = &a->sites[i];
		uint32_t b = s->stack < a->p->nstacks ? vt_bucket_classify(c, &a->p->stacks[s->stack], NULL, NULL)
						       : VT_BK_OTHER;
		struct vt_alloc_bucket *row;

		if (b >= rules->nbuckets)
			b = VT_BK_OTHER;
		by_rule[i] = b;
		if (!of_rule[b]) {
			row = &out->v[out->n];
			snprintf(row->name, sizeof(row->name), "%s", rules->buckets[b].name);
			row->top_site = i;
			of_rule[b] = (uint32_t)++out->n;
		}
		row = &out->v[of_rule[b] - 1];
		row->calls += s->calls;
		row->bytes += s->bytes;
		row->linked += s->linked;
		row->freed += s->freed;
		row->freed_bytes += s->freed_bytes;
		row->live_bytes += s->live_bytes;
		row->sites++;
		if (s->bytes > a->sites[row->top_site].bytes)
			row->top_site = i;
	}
	/* sorted by bytes: each site's row found again by its name */
	qsort(out->v, out->n, sizeof(*out->v), by_bytes);
	for (size_t i = 0; i < a->nsites; i++)
		for (size_t k = 0; k < out->n; k++)
			if (strcmp(out->v[k].name, rules->buckets[by_rule[i]].name) == 0)
				out->site_bucket[i] = (uint32_t)k;
out:
	free(of_rule);
	free(by_rule);
	vt_bucket_classifier_free(&c);
	return rc;
}

void vt_alloc_buckets_release(struct vt_alloc_buckets *b)
{
	free(b->v);
	free(b->site_bucket);
	memset(b, 0, sizeof(*b));
}

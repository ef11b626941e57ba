/*
 * allocs_export.c — an allocation profile for the tools people already
 * run: folded stacks (flamegraph.pl, speedscope) and pprof with the sample
 * types of Go's heap profiles, so `go tool pprof` reads it as one.
 *
 * One stack per site: its example, the first stack seen at it (the site
 * and its callers), carrying all of the site's figures.
 */
#include "render/allocs.h"

#include <stdio.h>
#include <stdlib.h>

#include "render/profile_pprof.h"

int vt_render_allocs_folded(FILE *out, const struct vt_allocs *a, bool bytes)
{
	const struct vt_profile *p = a->p;

	for (size_t i = 0; i < a->nsites; i++) {
		const struct vt_alloc_site *s = &a->sites[i];
		uint64_t v = bytes ? s->bytes : s->calls;

		if (!s->example_depth || !v)
			continue;
		for (uint32_t d = s->example_depth; d-- > 0;) {   /* root first */
			char name[512];

			vt_profile_loc_label(p, s->example[d], name, sizeof(name));
			for (char *c = name; *c; c++)
				if (*c == ';' || *c == '\n')
					*c = ':';   /* the format's separators */
			fprintf(out, "%s%s", name, d ? ";" : "");
		}
		fprintf(out, " %llu\n", (unsigned long long)v);
	}
	return ferror(out) ? -1 : 0;
}

int vt_render_allocs_pprof(FILE *out, const struct vt_allocs *a, int64_t time_nanos, struct vt_err *err)
{
	const struct vt_profile *p = a->p;
	int64_t *values = calloc((size_t)(p->nstacks ? p->nstacks : 1) * 4, sizeof(*values));
	char comment[512];
	int rc;

	if (!values)
		return vt_err_set(err, VT_E_NOMEM, 0, "pprof: %u stacks", p->nstacks);
	for (size_t i = 0; i < a->nsites; i++) {
		const struct vt_alloc_site *s = &a->sites[i];
		int64_t *v;

		if (s->stack >= p->nstacks)
			continue;
		v = &values[(size_t)s->stack * 4];
		v[0] = (int64_t)s->calls;
		v[1] = (int64_t)s->bytes;
		v[2] = (int64_t)s->live;
		v[3] = (int64_t)s->live_bytes;
	}
	snprintf(comment, sizeof(comment), "vitals allocs of pid %d (%s): %.3f s armed of %.3f s; "
		 "inuse is what was still live when its window closed; one stack per site, the first seen",
		 (int)a->meta.pid, a->meta.comm, a->meta.armed_s, a->meta.duration_s);
	struct vt_pprof_types ty = {
		.n = 4,
		.type = { "alloc_objects", "alloc_space", "inuse_objects", "inuse_space" },
		.unit = { "count", "bytes", "count", "bytes" },
		.values = values,
		.default_type = 1,
		.period_type = "space",
		.period_unit = "bytes",
		.period = 1,
		.comment = comment,
	};
	struct vt_pprof_opts po = { .time_nanos = time_nanos, .types = &ty };
	rc = vt_profile_pprof_write(out, p, &po, err);
	free(values);
	return rc;
}

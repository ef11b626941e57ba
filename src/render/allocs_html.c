/*
 * allocs_html.c — an allocation profile as one HTML page: the flame graph
 * of profile_html.c drawn from the sites' stacks (one per site, its first
 * seen), each weighing its site's bytes, beside the sites by bytes, under
 * what was probed, what it cost (the words of allocs_text.c) and the
 * verdict.
 */
#include "render/allocs.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "base/units.h"
#include "render/profile_folded.h"
#include "render/profile_html.h"

#define ABOUT_MAX 8
#define NAME_MAX_LEN 256
#define LINE_MAX_LEN 1024

/* Sites (indices into ctx's) by bytes, most first; then as vt_allocs_run ordered them (calls). */
static int by_bytes(const void *x, const void *y, void *ctx)
{
	const struct vt_allocs *all = ctx;
	const struct vt_alloc_site *a = &all->sites[*(const size_t *)x];
	const struct vt_alloc_site *b = &all->sites[*(const size_t *)y];

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	return *(const size_t *)x < *(const size_t *)y ? -1 : 1;
}

/* The lines under the heading: what was probed, the windows, their cost, what was seen. */
static void about(const struct vt_allocs_meta *m, char lines[ABOUT_MAX][LINE_MAX_LEN],
		  const char *about[ABOUT_MAX + 1])
{
	char armed[32], dur[32], size[32];
	size_t n = 0;

	if (m->agent) {
		snprintf(lines[n++], sizeof(lines[0]), "%s: %s, one sample every %s "
			 "allocated on average; no probe, no trap", m->allocator, m->probes_how,
			 vt_fmt_bytes(m->every, size, sizeof(size)));
		snprintf(lines[n++], sizeof(lines[0]), "%" PRIu64 " samples over %s of %s in %u window%s; the "
			 "sites' figures are estimates from them", m->agent_samples,
			 vt_render_allocs_span(m->armed_s, armed, sizeof(armed)),
			 vt_render_allocs_span(m->duration_s, dur, sizeof(dur)), m->windows, m->windows == 1 ? "" : "s");
		snprintf(lines[n++], sizeof(lines[0]), "cost: in the target's own calls, not measured from outside");
		goto seen;
	}
	snprintf(lines[n++], sizeof(lines[0]), "%s: probes on %s in %s", m->allocator, m->probed, m->file);
	if (m->skipped[0])
		snprintf(lines[n++], sizeof(lines[0]), "not probed: %s", m->skipped);
	snprintf(lines[n++], sizeof(lines[0]), "probes armed %s of %s in %u window%s (budget %.0f%% slowdown)",
		 vt_render_allocs_span(m->armed_s, armed, sizeof(armed)),
		 vt_render_allocs_span(m->duration_s, dur, sizeof(dur)), m->windows,
		 m->windows == 1 ? "" : "s", m->budget * 100);
	if (isnan(m->slowdown))
		snprintf(lines[n++], sizeof(lines[0]), "slowdown, measured: unknown");
	else
		snprintf(lines[n++], sizeof(lines[0]), "slowdown, measured: %.1f%%", 100 * m->slowdown);
seen:
	snprintf(lines[n++], sizeof(lines[0]), "%" PRIu64 " allocations, %s, %" PRIu64 " frees seen; "
		 "%" PRIu64 " probe hits lost", m->calls, vt_fmt_bytes(m->bytes, size, sizeof(size)),
		 m->frees, m->lost);
	if (m->exited)
		snprintf(lines[n++], sizeof(lines[0]), "the target exited: the profile so far");
	else if (m->interrupted)
		snprintf(lines[n++], sizeof(lines[0]), "stopped early: the profile so far");
	for (size_t i = 0; i < n; i++)
		about[i] = lines[i];
	about[n] = NULL;
}

int vt_render_allocs_html(FILE *out, const struct vt_allocs *a, struct vt_err *err)
{
	const struct vt_profile *p = a->p;
	size_t *order = calloc(a->nsites ? a->nsites : 1, sizeof(*order));
	struct vt_html_bucket_row *rows = calloc(a->nsites ? a->nsites : 1, sizeof(*rows));
	uint64_t *weight = calloc(p->nstacks ? p->nstacks : 1, sizeof(*weight));
	int32_t *loc_row = malloc((p->nlocs ? p->nlocs : 1) * sizeof(*loc_row));
	char (*names)[NAME_MAX_LEN] = calloc(a->nsites ? a->nsites : 1, sizeof(*names));
	char lines[ABOUT_MAX][LINE_MAX_LEN], verdict[768], lead[800], title[160], source[160];
	const char *about_lines[ABOUT_MAX + 1];
	int rc;

	if (!order || !rows || !weight || !loc_row || !names) {
		rc = vt_err_set(err, VT_E_NOMEM, 0, "html: %zu sites", a->nsites);
		goto out;
	}
	for (uint32_t i = 0; i < p->nlocs; i++)
		loc_row[i] = -1;
	for (size_t i = 0; i < a->nsites; i++)
		order[i] = i;
	if (a->nsites > 1)
		qsort_r(order, a->nsites, sizeof(*order), by_bytes, (void *)a);
	for (size_t r = 0; r < a->nsites; r++) {
		const struct vt_alloc_site *s = &a->sites[order[r]];

		vt_profile_loc_label(p, s->loc, names[r], sizeof(names[r]));
		rows[r] = (struct vt_html_bucket_row){
			.name = names[r],
			.share = a->meta.bytes ? (double)s->bytes / (double)a->meta.bytes : 0,
			.ci = -1,
			.samples = s->bytes,
		};
		if (s->loc < p->nlocs)
			loc_row[s->loc] = (int32_t)r;
		if (s->stack < p->nstacks)
			weight[s->stack] += s->bytes;
	}
	about(&a->meta, lines, about_lines);
	snprintf(lead, sizeof(lead), "%s: %s", vt_render_allocs_verdict(a, verdict, sizeof(verdict)), verdict);
	snprintf(title, sizeof(title), "vitals allocs %d (%s)", (int)a->meta.pid, a->meta.comm);
	snprintf(source, sizeof(source), "pid %d (%s)", (int)a->meta.pid, a->meta.comm);
	struct vt_profile_html h = {
		.title = title,
		.source = source,
		.profile = p,
		.states = VT_PROF_STATES_ALL,
		.buckets = rows,
		.nbuckets = a->nsites,
		.loc_bucket = loc_row,
		.stack_weight = weight,
		.unit = "bytes",
		.about = about_lines,
		.lead = lead,
		.table_key = "site",
		.table_note = "share of the bytes allocated while the probes were armed, by site (the first "
			      "function above the allocator); the graph draws one stack per site, the "
			      "first seen at it",
	};
	rc = vt_profile_html_write(out, &h, err);
out:
	free(order);
	free(rows);
	free(weight);
	free(loc_row);
	free(names);
	return rc;
}

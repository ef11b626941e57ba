/*
 * profile_trend.c — stored profiles over time and compared, as text and
 * JSON (see profile_trend.h).
 */
#include "render/profile_trend.h"

#include "base/units.h"
#include "render/json.h"
#include "render/table.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

uint32_t vt_render_prof_trend_columns(const struct vt_prof_trend *t, uint32_t *cols, uint32_t max)
{
	double top[VT_BUCKET_MAX_BUCKETS] = { 0 };
	uint32_t b, n = 0, i, j;

	for (b = 0; b < t->nbuckets && b < VT_BUCKET_MAX_BUCKETS; b++) {
		size_t r;

		if (!t->seen[b])
			continue;
		for (r = 0; r < t->n; r++)
			if (!t->rows[r].error)
				top[b] = fmax(top[b], t->rows[r].share[b].share);
		cols[n++] = b;
	}
	/* insertion sort, largest first (a few dozen at most) */
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && top[cols[j]] > top[cols[j - 1]]; j--) {
			uint32_t x = cols[j];

			cols[j] = cols[j - 1];
			cols[j - 1] = x;
		}
	return n < max ? n : max;
}

int vt_render_prof_trend_text(FILE *out, const struct vt_prof_trend *t)
{
	uint32_t cols[VT_BUCKET_MAX_BUCKETS], ncols, nseen, c, g;
	char span[32], name[VT_BUCKET_NAME_MAX * 4 + 1];
	int width[VT_PROF_TREND_COLUMNS];
	size_t r;

	if (!t || t->n == 0)
		return 0;
	nseen = vt_render_prof_trend_columns(t, cols, VT_BUCKET_MAX_BUCKETS);
	ncols = nseen < VT_PROF_TREND_COLUMNS ? nseen : VT_PROF_TREND_COLUMNS;
	fprintf(out, "\nCPU by bucket over time (%zu profile%s; share of on-CPU samples by top of stack, ± 95%%)\n",
		t->n, t->n == 1 ? "" : "s");
	fprintf(out, "  %-9s %8s %6s %8s", "at", "pid", "cores", "samples");
	for (c = 0; c < ncols; c++) {
		size_t len = strlen(t->bucket_names[cols[c]]);

		width[c] = len < 12 ? 12 : len > 19 ? 19 : (int)len;
		fprintf(out, "  %*.*s", width[c], width[c], vt_text_printable(t->bucket_names[cols[c]], name, sizeof(name)));
	}
	fputc('\n', out);
	for (r = 0; r < t->n; r++) {
		const struct vt_prof_trend_row *row = &t->rows[r];

		fprintf(out, "  %-9s %8d ", vt_fmt_span(row->at.t, span, sizeof(span)), (int)row->at.pid);
		if (row->error) {
			fprintf(out, "unreadable: %s\n", vt_text_printable(row->err_msg, name, sizeof(name)));
			continue;
		}
		if (isnan(row->cores))
			fprintf(out, "%6s", "n/a");
		else
			fprintf(out, "%6.2f", row->cores);
		fprintf(out, " %8llu", (unsigned long long)row->cpu_samples);
		for (c = 0; c < ncols; c++) {
			const struct vt_prof_share *s = &row->share[cols[c]];
			char cell[32];

			snprintf(cell, sizeof(cell), "%.1f%% ±%.1f", 100 * s->share, 100 * s->pm);
			fprintf(out, "  %*s", width[c], cell);
		}
		if (row->at.partial)
			fputs("  (partial: the soak ended)", out);
		else if (row->at.exited)
			fputs("  (the process exited)", out);
		if (row->few_samples)
			fputs("  (too few samples)", out);
		fputc('\n', out);
	}
	if (nseen > ncols)
		fprintf(out, "  %u more bucket%s in --json\n", nseen - ncols, nseen - ncols == 1 ? "" : "s");
	fprintf(out, "which bucket grew when CPU rose: %s\n",
		t->verdict == VT_PT_GREW ? t->bucket_names[t->grew[0].bucket] : "cannot tell yet");
	fprintf(out, "  %s\n", t->why);
	if (t->verdict == VT_PT_GREW) {
		fprintf(out, "  compared: the profile at %s", vt_fmt_span(t->rows[t->from].at.t, span, sizeof(span)));
		fprintf(out, " with the one at %s (%s)\n", vt_fmt_span(t->rows[t->to].at.t, span, sizeof(span)),
			t->by_cpu ? "lowest and highest CPU" : "first and last");
		for (g = 0; g < t->ngrew; g++) {
			const struct vt_prof_growth *x = &t->grew[g];

			fprintf(out, "  %-22s %5.1f%% -> %5.1f%% of samples, %.2f -> %.2f cores (%+.2f ± %.2f)\n",
				vt_text_printable(t->bucket_names[x->bucket], name, sizeof(name)), 100 * x->share_from,
				100 * x->share_to, x->cores_from, x->cores_to, x->delta, x->pm);
		}
	}
	return ferror(out) ? -1 : 0;
}

static json_t *share_json(const struct vt_prof_share *s)
{
	return json_pack("{s:I, s:f, s:f, s:f, s:f}", "samples", (json_int_t)s->samples, "share", s->share, "lo", s->lo,
			 "hi", s->hi, "pm", s->pm);
}

json_t *vt_render_prof_trend_json(const struct vt_prof_trend *t)
{
	json_t *o, *rows, *grew, *names;
	const char *verdict;
	size_t r;
	uint32_t b, g;

	if (!t)
		return json_null();
	o = json_object();
	rows = json_array();
	grew = json_array();
	names = json_array();
	if (!o || !rows || !grew || !names)
		goto fail;
	for (b = 0; b < t->nbuckets; b++)
		if (t->seen[b])
			json_array_append_new(names, vt_json_text(t->bucket_names[b]));
	for (r = 0; r < t->n; r++) {
		const struct vt_prof_trend_row *row = &t->rows[r];
		json_t *shares = json_object(), *x;

		x = json_pack("{s:I, s:f, s:f, s:f, s:i, s:b, s:b}", "id", (json_int_t)row->at.id, "t", row->at.t,
			      "wall", row->at.wall, "duration_s", row->at.duration_s, "pid", (int)row->at.pid, "partial",
			      row->at.partial, "exited", row->at.exited);
		if (!x || !shares) {
			json_decref(x);
			json_decref(shares);
			goto fail;
		}
		if (row->error) {
			json_object_set_new(x, "error", vt_json_text(row->err_msg));
			json_decref(shares);
		} else {
			json_object_set_new(x, "cores", vt_json_real(row->cores));
			json_object_set_new(x, "cores_from", isnan(row->cores) ? json_null()
							     : json_string(row->cores_from_samples ? "samples" : "profile"));
			json_object_set_new(x, "cpu_samples", json_integer((json_int_t)row->cpu_samples));
			json_object_set_new(x, "few_samples", json_boolean(row->few_samples));
			for (b = 0; b < t->nbuckets; b++)
				if (t->seen[b])
					json_object_set_new(shares, t->bucket_names[b], share_json(&row->share[b]));
			json_object_set_new(x, "buckets", shares);
		}
		json_array_append_new(rows, x);
	}
	for (g = 0; g < t->ngrew; g++) {
		const struct vt_prof_growth *x = &t->grew[g];

		json_array_append_new(grew, json_pack("{s:o, s:f, s:f, s:f, s:f, s:f, s:f}", "bucket",
						      vt_json_text(t->bucket_names[x->bucket]), "share_from",
						      x->share_from, "share_to", x->share_to, "cores_from", x->cores_from,
						      "cores_to", x->cores_to, "delta_cores", x->delta, "pm_cores", x->pm));
	}
	verdict = t->verdict == VT_PT_GREW ? "grew" : t->verdict == VT_PT_NONE ? "no profiles" : "cannot tell yet";
	json_object_set_new(o, "count", json_integer((json_int_t)t->n));
	json_object_set_new(o, "buckets", names);
	json_object_set_new(o, "rows", rows);
	json_object_set_new(o, "grew_when_cpu_rose",
			    json_pack("{s:s, s:o, s:o, s:o, s:o, s:o}", "verdict", verdict, "why", vt_json_text(t->why),
				      "from", t->n >= 2 && t->verdict == VT_PT_GREW ? json_integer((json_int_t)t->from) : json_null(),
				      "to", t->n >= 2 && t->verdict == VT_PT_GREW ? json_integer((json_int_t)t->to) : json_null(),
				      "by", t->verdict == VT_PT_GREW ? json_string(t->by_cpu ? "cpu" : "time") : json_null(),
				      "buckets", grew));
	return o;
fail:
	json_decref(o);
	json_decref(rows);
	json_decref(grew);
	json_decref(names);
	return NULL;
}

int vt_render_prof_diff_text(FILE *out, const struct vt_prof_diff *d, const char *a, const char *b)
{
	char name[VT_BUCKET_NAME_MAX * 4 + 1], label[640];
	uint32_t i;

	if (!d || !d->a_profiles || !d->b_profiles)
		return 0;
	fprintf(out, "\nCPU profiles: %s against %s (%zu and %zu profiles, %llu and %llu on-CPU samples)\n", b, a,
		d->b_profiles, d->a_profiles, (unsigned long long)d->b_samples, (unsigned long long)d->a_samples);
	if (d->few_samples)
		fprintf(out, "  too few samples on one side to rank anything (%d wanted): cannot tell yet\n",
			VT_PROF_FEW_SAMPLES);
	fprintf(out, "  %-24s %8s %8s %16s\n", "bucket", a, b, "change");
	for (i = 0; i < d->nbuckets; i++) {
		const struct vt_prof_diff_bucket *x = &d->buckets[i];

		fprintf(out, "  %-24.24s %7.1f%% %7.1f%% %+8.1f ±%4.1f pt%s\n",
			vt_text_printable(x->name, name, sizeof(name)), 100 * x->a.share, 100 * x->b.share,
			100 * x->delta, 100 * x->pm, x->changed ? "" : "  (within noise)");
	}
	if (d->nfuncs) {
		fprintf(out, "  %-40s %8s %8s %16s\n", "function (self)", a, b, "change");
		for (i = 0; i < d->nfuncs; i++) {
			const struct vt_prof_diff_func *x = &d->funcs[i];
			char both[512];

			snprintf(both, sizeof(both), "%s%s%s%s", x->label, x->module[0] ? " (" : "", x->module,
				 x->module[0] ? ")" : "");
			fprintf(out, "  %-40.40s %7.1f%% %7.1f%% %+8.1f ±%4.1f pt%s\n",
				vt_text_printable(both, label, sizeof(label)), 100 * x->a, 100 * x->b, 100 * x->delta,
				100 * x->pm, x->changed ? "" : "  (within noise)");
		}
	}
	fprintf(out, "  shares of each side's on-CPU samples, all its profiles pooled; ± is 95%%\n");
	return ferror(out) ? -1 : 0;
}

json_t *vt_render_prof_diff_json(const struct vt_prof_diff *d, const char *a, const char *b)
{
	json_t *o, *buckets, *funcs;
	uint32_t i;

	if (!d || !d->a_profiles || !d->b_profiles)
		return json_null();
	buckets = json_array();
	funcs = json_array();
	for (i = 0; buckets && i < d->nbuckets; i++) {
		const struct vt_prof_diff_bucket *x = &d->buckets[i];

		json_array_append_new(buckets, json_pack("{s:o, s:o, s:o, s:f, s:f, s:b}", "bucket", vt_json_text(x->name),
							 "a", share_json(&x->a), "b", share_json(&x->b), "delta",
							 x->delta, "pm", x->pm, "changed", x->changed));
	}
	for (i = 0; funcs && i < d->nfuncs; i++) {
		const struct vt_prof_diff_func *x = &d->funcs[i];

		json_array_append_new(funcs, json_pack("{s:o, s:o, s:f, s:f, s:f, s:f, s:b}", "function",
						       vt_json_text(x->label), "module", vt_json_text(x->module), "a",
						       x->a, "b", x->b, "delta", x->delta, "pm", x->pm, "changed",
						       x->changed));
	}
	o = json_pack("{s:o, s:o, s:I, s:I, s:I, s:I, s:b, s:o, s:o}", "a", vt_json_text(a), "b", vt_json_text(b),
		      "a_profiles", (json_int_t)d->a_profiles, "b_profiles", (json_int_t)d->b_profiles,
		      "a_cpu_samples", (json_int_t)d->a_samples, "b_cpu_samples", (json_int_t)d->b_samples,
		      "few_samples", d->few_samples, "buckets", buckets ? buckets : json_null(),
		      "functions_self", funcs ? funcs : json_null());
	return o;
}

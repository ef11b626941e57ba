/*
 * soak_csv.c — a recording and a comparison as CSV for spreadsheets and
 * plotting tools: a header row, then rows with the same number of columns.
 * An unknown figure is an empty cell, never 0.  Text cells are quoted as
 * RFC 4180 says when they hold a comma, a quote or a line break; lines end
 * in \n.
 */
#include "render/soak.h"

#include <math.h>
#include <string.h>

/* A text cell, quoted when it must be. */
static void csv_text(FILE *out, const char *s)
{
	const char *p;

	if (!s)
		s = "";
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (p = s; *p; p++) {
		if (*p == '"')
			fputc('"', out);
		fputc(*p, out);
	}
	fputc('"', out);
}

/* A number: whole for bytes and counts, else 10 significant digits; empty when unknown. */
static void csv_num(FILE *out, double v, bool whole)
{
	if (!isfinite(v))
		return;
	if (whole)
		fprintf(out, "%.0f", v);
	else
		fprintf(out, "%.10g", v);
}

int vt_render_series_csv(FILE *out, const struct vt_series *s)
{
	size_t i, m;
	char wall[40];

	if (!s)
		return -1;
	fputs("t_s,wall,pid,incarnation,samples", out);
	for (m = 0; m < VT_M_COUNT; m++)
		if (s->m[m])
			fprintf(out, ",%s_mean,%s_lo,%s_hi", vt_metrics[m].key, vt_metrics[m].key,
				vt_metrics[m].key);
	fputc('\n', out);
	for (i = 0; i < s->n; i++) {
		fprintf(out, "%.3f,", s->t[i]);
		if (isfinite(s->wall[i]) && s->wall[i] > 0)
			fputs(vt_fmt_utc(s->wall[i], true, wall, sizeof(wall)), out);
		fprintf(out, ",%d,%u,%u", (int)s->pid[i], (unsigned)s->incarnation[i], (unsigned)s->count[i]);
		for (m = 0; m < VT_M_COUNT; m++) {
			const struct vt_stat *st;
			bool whole;

			if (!s->m[m])
				continue;
			st = &s->m[m][i];
			whole = vt_metrics[m].unit != VT_UNIT_SECONDS;
			fputc(',', out);
			/* a mean of counts over several samples keeps its fraction */
			csv_num(out, st->mean, whole && (s->count[i] <= 1 ||
							 vt_metrics[m].unit == VT_UNIT_BYTES));
			fputc(',', out);
			csv_num(out, st->lo, whole);
			fputc(',', out);
			csv_num(out, st->hi, whole);
		}
		fputc('\n', out);
	}
	return ferror(out) ? -1 : 0;
}

int vt_render_compare_csv(FILE *out, const struct vt_compare_report *r)
{
	const struct vt_comparison *cmp = r->cmp;
	size_t i;
	int f;

	if (!cmp)
		return -1;
	fputs("arm,field,unit,median,lo,hi,noise,delta,pct,within_noise\n", out);
	for (i = 0; i < cmp->narms; i++) {
		for (f = 0; f < VT_M_COUNT; f++) {
			const struct vt_cmp_cell *c = &cmp->arms[i].cell[f];
			const struct vt_cmp_diff *d = i > 0 && cmp->diff ? &cmp->diff[i][f] : NULL;
			bool whole = vt_metrics[f].unit == VT_UNIT_BYTES;

			if (!(vt_metrics[f].flags & VT_MF_COMPARE))
				continue;

			csv_text(out, cmp->arms[i].name);
			fputc(',', out);
			csv_text(out, vt_metrics[f].key);
			fputc(',', out);
			csv_text(out, vt_unit_name(vt_metrics[f].unit));
			fputc(',', out);
			csv_num(out, c->known ? c->median : NAN, whole);
			fputc(',', out);
			csv_num(out, c->known ? c->lo : NAN, whole);
			fputc(',', out);
			csv_num(out, c->known ? c->hi : NAN, whole);
			fputc(',', out);
			csv_num(out, c->known ? c->noise : NAN, whole);
			fputc(',', out);
			csv_num(out, d && d->known ? d->delta : NAN, whole);
			fputc(',', out);
			csv_num(out, d && d->known ? d->pct : NAN, false);
			fputc(',', out);
			if (d && d->known)
				fputs(d->within_noise ? "true" : "false", out);
			fputc('\n', out);
		}
	}
	return ferror(out) ? -1 : 0;
}

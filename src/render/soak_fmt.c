/*
 * soak_fmt.c — figures of a metric as the soak views print them (see
 * soak_fmt.h): every soak view goes through these, so one figure reads
 * the same in the text, the JSON's sentences and the HTML.
 */
#include "render/soak_fmt.h"

#include "render/soak.h"
#include "render/threads.h"
#include "soak/redact.h"

#include <string.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static enum vt_unit unit_of(enum vt_metric m)
{
	return (unsigned)m < VT_M_COUNT ? vt_metrics[m].unit : VT_UNIT_BYTES;
}

bool vt_metric_is_bytes(enum vt_metric m)
{
	return unit_of(m) == VT_UNIT_BYTES;
}

const char *vt_fmt_metric(enum vt_metric m, double v, char *buf, size_t cap)
{
	return vt_fmt_value(unit_of(m), v, buf, cap);
}

const char *vt_fmt_metric_delta(enum vt_metric m, double v, double like, char *buf, size_t cap)
{
	return vt_fmt_value_delta(unit_of(m), v, like, buf, cap);
}

const char *vt_fmt_metric_pair(enum vt_metric m, double a, double b, const char *sep, char *buf,
			       size_t cap)
{
	return vt_fmt_value_pair(unit_of(m), a, b, sep, buf, cap);
}

const char *vt_fmt_per_h(enum vt_metric m, double per_s, char *buf, size_t cap)
{
	double v = per_s * 3600 / (vt_metric_is_bytes(m) ? VT_MiB : 1), a = fabs(v);

	if (!isfinite(v))
		snprintf(buf, cap, "n/a");
	else
		snprintf(buf, cap, a < 10 ? "%.2f" : a < 100 ? "%.1f" : "%.0f", v);
	return buf;
}

const char *vt_per_h_unit(enum vt_metric m)
{
	return vt_metric_is_bytes(m) ? "MiB/h" : "/h";
}

/*
 * Whether the short-lived threads get their row: some were recorded, or the
 * process used a good deal more than the threads listed (threads that lived
 * between two ticks).
 */
bool vt_render_soak_short_row(const struct vt_soak_short_lived *sl)
{
	return sl->threads > 0 || (isfinite(sl->cores) && sl->cores >= 0.01 && sl->cores >= 0.05 * sl->process_cores);
}

/* "14 x python3": the names of sl's threads among s's, grouped (buf of cap bytes). */
const char *vt_render_soak_short_names(const struct vt_series *s, const struct vt_soak_verdict *v,
				       const struct vt_soak_short_lived *sl, char *buf, size_t cap)
{
	const char **names = malloc(sizeof(*names) * (s->nthreads ? s->nthreads : 1));
	pid_t pid = vt_soak_threads_pid(s, v);
	size_t i, n = 0, match = 0;

	buf[0] = '\0';
	if (!names)
		return buf;
	for (i = 0; i < s->nthreads; i++)
		match += s->threads[i].pid == pid;
	for (i = 0; i < s->nthreads; i++)
		if ((!match || s->threads[i].pid == pid) && vt_soak_thread_short_lived(sl, &s->threads[i]))
			names[n++] = s->threads[i].name;
	if (n)
		vt_render_thread_names(names, n, 3, buf, cap);
	else
		snprintf(buf, cap, "none recorded");
	free(names);
	return buf;
}

void vt_print_wrapped(FILE *out, const char *text, int indent, int width, int at)
{
	const char *p = text;
	int col = at;
	bool line_empty = true;        /* nothing of text on this line yet */

	while (*p) {
		const char *w = p, *q;
		int len = 0;

		while (*w == ' ')
			w++;
		if (!*w)
			break;
		for (q = w; *q && *q != ' '; q++)
			if (((unsigned char)*q & 0xc0) != 0x80)
				len++;
		if (!line_empty && col + 1 + len > width) {
			fputc('\n', out);
			col = 0;
			line_empty = true;
		}
		if (line_empty && col == 0)
			col = fprintf(out, "%*s", indent, "");
		else if (!line_empty)
			col += fprintf(out, " ");
		fwrite(w, 1, (size_t)(q - w), out);
		col += len;
		line_empty = false;
		p = q;
	}
	if (!line_empty || at)
		fputc('\n', out);
}

size_t vt_recording_redacted_names(const struct vt_recording_info *in, char *out, size_t cap)
{
	const char *const redacted[] = { in->target, in->env };

	return vt_redact_names(redacted, 2, out, cap);
}

bool vt_series_zero_throughout(const struct vt_series *s, enum vt_metric m, bool *seen)
{
	size_t i;

	for (i = 0; s && s->m[m] && i < s->n; i++) {
		const struct vt_stat *st = &s->m[m][i];

		if (isnan(st->mean))
			continue;
		if (st->mean != 0 || (isfinite(st->hi) && st->hi != 0))
			return false;
		*seen = true;
	}
	return true;
}

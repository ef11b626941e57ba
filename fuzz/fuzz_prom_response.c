/*
 * fuzz_prom_response.c — the Prometheus range-query answer parser
 * (src/serve/prom_series.c) on arbitrary bytes.
 *
 * The first byte picks the HTTP status and the step the answer is read
 * at (so the gap rule sees steps from a millisecond to a day); the rest is
 * the body, copied to a buffer of exactly its size (no NUL after it), so
 * ASan sees any read past the end.  On success the parser's promises are
 * asserted: every series has a name that fits and labels, points in
 * increasing time from 0, one sample each, unknown values NAN (never an
 * infinity), incarnations that only grow and match its resets, and as
 * many gap events as gaps.  On failure: a code and a message.  Seeds:
 * fuzz/corpus/prom_response/ (tests/fixtures/prometheus/).
 */
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "serve/prom_series.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_series(const struct vt_prom_series *ps, double step_s)
{
	const struct vt_series *s = &ps->series;
	const struct vt_stat *st = s->m[ps->metric];
	size_t i, gaps = 0, restarts = 0, unknown = 0;

	assert(memchr(ps->name, 0, sizeof(ps->name)) && memchr(ps->labels, 0, sizeof(ps->labels)));
	assert(ps->labels[0]);
	assert(ps->metric == VT_M_COMMITTED || ps->metric == VT_M_ARENAS);
	assert(ps->bytes == (ps->metric == VT_M_COMMITTED));
	assert(st != NULL);
	assert(s->n == s->samples && s->n <= VT_SERIES_MAX_POINTS);
	assert(s->info.finished && s->info.every_s == step_s);
	for (i = 0; i < s->n; i++) {
		assert(s->count[i] == 1 && s->t0[i] == s->t[i] && s->t1[i] == s->t[i]);
		assert(i == 0 ? s->t[i] == 0 : s->t[i] > s->t[i - 1]);
		assert(isfinite(s->wall[i]) && s->wall[i] > 0);
		assert(!isinf(st[i].mean) && (isnan(st[i].mean) || (st[i].lo == st[i].mean && st[i].hi == st[i].mean)));
		unknown += isnan(st[i].mean);
		assert(i == 0 ? s->incarnation[i] == 0
			      : s->incarnation[i] == s->incarnation[i - 1] ||
					s->incarnation[i] == s->incarnation[i - 1] + 1);
	}
	assert(unknown == ps->unknown);
	assert(s->n == 0 || s->incarnation[s->n - 1] == ps->resets);
	assert(ps->counter || ps->resets == 0);
	for (i = 0; i < s->nevents; i++) {
		gaps += s->events[i].kind == VT_EV_GAP;
		restarts += s->events[i].kind == VT_EV_RESTART;
	}
	assert(gaps == ps->gaps && restarts == ps->resets);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const long status[4] = { 200, 400, 422, 503 };
	static const double steps[8] = { 0.001, 1, 15, 30, 60, 300, 3600, 86400 };
	struct vt_prom_answer a;
	struct vt_err err;
	double step_s;
	long http;
	char *buf;
	size_t i;

	if (size < 1)
		return 0;
	http = status[data[0] & 3];
	step_s = steps[(data[0] >> 2) & 7];
	data++;
	size--;
	buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	if (size)
		memcpy(buf, data, size);
	if (vt_prom_parse_range(buf, size, http, step_s, &a, &err) == VT_OK) {
		assert(a.n == 0 || a.series != NULL);
		assert(memchr(a.warnings, 0, sizeof(a.warnings)));
		for (i = 0; i < a.n; i++)
			check_series(&a.series[i], step_s);
		vt_prom_answer_release(&a);
		assert(a.n == 0 && a.series == NULL);
	} else {
		assert(err.code != VT_OK && err.msg[0]);
		assert(a.n == 0 && a.series == NULL);
	}
	free(buf);
	return 0;
}

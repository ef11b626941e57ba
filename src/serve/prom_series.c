/*
 * prom_series.c — a Prometheus range-query answer into soak series (see
 * prom_series.h for the rules).  Parses a buffer with jansson; never does
 * I/O and never prints.
 */
#include "serve/prom_series.h"
#include "base/json_lib.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A hole longer than this many steps is a gap (the store's rule, store.c). */
#define GAP_STEPS 3

void vt_prom_answer_release(struct vt_prom_answer *a)
{
	size_t i;

	for (i = 0; a->series && i < a->n; i++)
		vt_series_free(&a->series[i].series);
	free(a->series);
	memset(a, 0, sizeof(*a));
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Append text to buf (cap bytes) at *len, cut if short; returns false when cut. */
static bool put_text(char *buf, size_t cap, size_t *len, const char *text)
{
	size_t k = strlen(text);

	if (*len >= cap - 1)
		return false;
	if (k > cap - 1 - *len) {
		memcpy(buf + *len, text, cap - 1 - *len);
		*len = cap - 1;
		buf[*len] = '\0';
		return false;
	}
	memcpy(buf + *len, text, k);
	*len += k;
	buf[*len] = '\0';
	return true;
}

/* A label value quoted as Prometheus writes it: backslash, quote and newline escaped. */
static void put_quoted(char *buf, size_t cap, size_t *len, const char *v)
{
	char one[3];

	put_text(buf, cap, len, "\"");
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			snprintf(one, sizeof(one), "\\%c", *v);
		else if (*v == '\n')
			snprintf(one, sizeof(one), "\\n");
		else
			snprintf(one, sizeof(one), "%c", *v);
		if (!put_text(buf, cap, len, one))
			return;
	}
	put_text(buf, cap, len, "\"");
}

static int cmp_keys(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The series' name and labels (name{a="x",b="y"}, sorted) from its "metric" object. */
static int name_series(json_t *metric, struct vt_prom_series *ps, struct vt_err *err)
{
	const char **keys;
	const char *key;
	json_t *val;
	size_t n = 0, i, len = 0;

	if (!json_is_object(metric))
		return vt_err_set(err, VT_E_PARSE, 0, "not a Prometheus API answer: a series without its "
			"\"metric\" labels");
	keys = calloc(json_object_size(metric) + 1, sizeof(*keys));
	if (!keys)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory reading the Prometheus answer");
	json_object_foreach(metric, key, val) {
		if (!json_is_string(val)) {
			free(keys);
			return vt_err_set(err, VT_E_PARSE, 0, "not a Prometheus API answer: label '%.64s' is "
				"not a string", key);
		}
		if (strcmp(key, "__name__") == 0)
			snprintf(ps->name, sizeof(ps->name), "%s", json_string_value(val));
		else
			keys[n++] = key;
	}
	qsort(keys, n, sizeof(*keys), cmp_keys);
	put_text(ps->labels, sizeof(ps->labels), &len, ps->name);
	if (n || !ps->name[0])
		put_text(ps->labels, sizeof(ps->labels), &len, "{");
	for (i = 0; i < n; i++) {
		if (i)
			put_text(ps->labels, sizeof(ps->labels), &len, ",");
		put_text(ps->labels, sizeof(ps->labels), &len, keys[i]);
		put_text(ps->labels, sizeof(ps->labels), &len, "=");
		put_quoted(ps->labels, sizeof(ps->labels), &len, json_string_value(json_object_get(metric, keys[i])));
	}
	if (n || !ps->name[0])
		put_text(ps->labels, sizeof(ps->labels), &len, "}");
	free(keys);
	return VT_OK;
}

/*
 * A value as Prometheus writes it: a string holding a Go float ("1.5e+09",
 * "NaN", "+Inf", "-Inf").  Returns false when it is not one; *v is NAN for
 * NaN and the infinities (unknown, never 0).
 */
static bool parse_value(json_t *j, double *v)
{
	const char *text;
	char *end;
	double x;

	if (!json_is_string(j))
		return false;
	text = json_string_value(j);
	if (strcmp(text, "NaN") == 0 || strcmp(text, "+Inf") == 0 || strcmp(text, "-Inf") == 0 ||
	    strcmp(text, "Inf") == 0) {
		*v = NAN;
		return true;
	}
	/* decimal only: strtod would also take hex floats, "infinity" and leading space */
	if (!*text || strspn(text, "+-0123456789.eE") != strlen(text))
		return false;
	errno = 0;
	x = strtod(text, &end);
	if (end == text || *end)
		return false;
	*v = isfinite(x) ? x : NAN;
	return true;
}

static int add_event(struct vt_series *s, enum vt_event_kind kind, double t, double wall, const char *detail,
		     struct vt_err *err)
{
	struct vt_event ev = { .t = t, .wall = wall, .kind = kind, .pid = 0 };

	snprintf(ev.detail, sizeof(ev.detail), "%s", detail);
	if (vt_series_add_event(s, &ev))
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory reading the Prometheus answer");
	return VT_OK;
}

/* The "values" of one series into ps->series, one point per value. */
static int read_values(json_t *values, double step_s, struct vt_prom_series *ps, struct vt_err *err)
{
	struct vt_series *s = &ps->series;
	struct vt_stat *st;
	double first = NAN, prev_wall = NAN, prev_known = NAN;
	uint32_t incarnation = 0;
	char detail[160];
	size_t i, n;

	if (!json_is_array(values))
		return vt_err_set(err, VT_E_PARSE, 0, "not a Prometheus API answer: series '%.200s' has no "
			"\"values\" array", ps->labels);
	n = json_array_size(values);
	if (n > VT_SERIES_MAX_POINTS)
		return vt_err_set(err, VT_E_PARSE, 0, "series '%.200s' has %zu values, more than the %d a "
			"range query returns", ps->labels, n, VT_SERIES_MAX_POINTS);
	if (n && vt_series_reserve(s, n))
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory reading the Prometheus answer");
	if (!(st = vt_series_stat(s, ps->metric)))
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory reading the Prometheus answer");
	for (i = 0; i < n; i++) {
		json_t *pair = json_array_get(values, i);
		double wall, v, t;

		if (!json_is_array(pair) || json_array_size(pair) != 2 || !json_is_number(json_array_get(pair, 0)))
			return vt_err_set(err, VT_E_PARSE, 0, "not a Prometheus API answer: value %zu of '%.200s' "
				"is not [<time>, \"<number>\"]", i, ps->labels);
		wall = json_number_value(json_array_get(pair, 0));
		if (!isfinite(wall) || wall <= 0 || !parse_value(json_array_get(pair, 1), &v))
			return vt_err_set(err, VT_E_PARSE, 0, "not a Prometheus API answer: value %zu of '%.200s' "
				"is not [<time>, \"<number>\"]", i, ps->labels);
		if (i == 0) {
			first = wall;
			snprintf(detail, sizeof(detail), "%.150s", ps->labels);
			if (add_event(s, VT_EV_START, 0, wall, detail, err))
				return VT_E_NOMEM;
		} else if (!(wall > prev_wall)) {
			return vt_err_set(err, VT_E_PARSE, 0, "not a Prometheus API answer: the times of '%.200s' "
				"do not increase at value %zu", ps->labels, i);
		}
		t = wall - first;
		/* Prometheus leaves out the steps without a sample: a hole of more than 3 is a gap */
		if (i > 0 && step_s > 0 && wall - prev_wall > GAP_STEPS * step_s) {
			snprintf(detail, sizeof(detail), "no value for %.0f s (%.0f steps)", wall - prev_wall,
				 (wall - prev_wall) / step_s - 1);
			if (add_event(s, VT_EV_GAP, t, wall, detail, err))
				return VT_E_NOMEM;
			ps->gaps++;
		}
		/* a counter only goes down when it starts over */
		if (ps->counter && !isnan(v) && !isnan(prev_known) && v < prev_known) {
			incarnation++;
			ps->resets++;
			snprintf(detail, sizeof(detail), "counter reset: %.6g -> %.6g", prev_known, v);
			if (add_event(s, VT_EV_RESTART, t, wall, detail, err))
				return VT_E_NOMEM;
		}
		if (isnan(v))
			ps->unknown++;
		else
			prev_known = v;
		s->t[i] = s->t0[i] = s->t1[i] = t;
		s->wall[i] = wall;
		s->count[i] = 1;
		s->pid[i] = 0;
		s->incarnation[i] = incarnation;
		st[i].lo = st[i].hi = st[i].mean = v;
		prev_wall = wall;
		s->n++;
		s->samples++;
	}
	s->info.started_wall = n ? first : 0;
	return VT_OK;
}

static int read_series(json_t *item, double step_s, struct vt_prom_series *ps, struct vt_err *err)
{
	struct vt_recording_info *in = &ps->series.info;
	int rc;

	if (!json_is_object(item))
		return vt_err_set(err, VT_E_PARSE, 0, "not a Prometheus API answer: a result that is not a series");
	if ((rc = name_series(json_object_get(item, "metric"), ps, err)))
		return rc;
	ps->bytes = ends_with(ps->name, "_bytes");
	ps->counter = ends_with(ps->name, "_total");
	ps->metric = ps->bytes ? VT_M_COMMITTED : VT_M_ARENAS;
	snprintf(in->target, sizeof(in->target), "%.*s", (int)sizeof(in->target) - 1, ps->labels);
	in->every_s = step_s > 0 ? step_s : 0;
	in->finished = true;         /* a range is over: nothing more will come */
	return read_values(json_object_get(item, "values"), step_s, ps, err);
}

/* Prometheus' error body: {"status":"error","errorType":"bad_data","error":"..."}. */
static int answer_error(json_t *root, long http_status, struct vt_err *err)
{
	const char *type = json_string_value(json_object_get(root, "errorType"));
	const char *text = json_string_value(json_object_get(root, "error"));
	int code = VT_E_FAIL;

	if (!type)
		type = "";
	if (!text)
		text = "(no error text)";
	if (strcmp(type, "bad_data") == 0)
		code = VT_E_USAGE;
	else if (strcmp(type, "timeout") == 0 || strcmp(type, "canceled") == 0)
		code = VT_E_TIMEOUT;
	if (http_status > 0)
		vt_err_set(err, code, 0, "Prometheus refused the query (HTTP %ld, %s): %.300s", http_status,
			   type[0] ? type : "error", text);
	else
		vt_err_set(err, code, 0, "Prometheus refused the query (%s): %.300s", type[0] ? type : "error",
			   text);
	if (strstr(text, "exceeded maximum resolution"))
		vt_err_hint(err, "give a longer --step: Prometheus returns at most 11,000 points per series");
	else if (code == VT_E_TIMEOUT)
		vt_err_hint(err, "a shorter --range or a longer --step asks for less work");
	return code;
}

static void keep_warnings(json_t *root, struct vt_prom_answer *out)
{
	json_t *w = json_object_get(root, "warnings");
	size_t i, len = 0;

	for (i = 0; json_is_array(w) && i < json_array_size(w); i++) {
		const char *text = json_string_value(json_array_get(w, i));

		if (!text)
			continue;
		if (len)
			put_text(out->warnings, sizeof(out->warnings), &len, "; ");
		put_text(out->warnings, sizeof(out->warnings), &len, text);
	}
}

int vt_prom_parse_range(const char *body, size_t len, long http_status, double step_s,
			struct vt_prom_answer *out, struct vt_err *err)
{
	json_t *root, *data, *result;
	json_error_t jerr;
	const char *status, *type;
	size_t i, n;
	int rc = VT_OK;

	memset(out, 0, sizeof(*out));
	vt_err_clear(err);
	if (len > VT_PROM_BODY_MAX)
		return vt_err_set(err, VT_E_PARSE, 0, "the Prometheus answer is over %u MiB", VT_PROM_BODY_MAX >> 20);
	vt_json_alloc_watch();
	root = json_loadb(body ? body : "", len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		/*
		 * jansson's tree takes about ten times the text: a large answer can
		 * run out.  Some of its allocation failures leave the error empty
		 * (2.14), others call it an invalid token (a string's buffer), while
		 * every parse error names itself.
		 */
		if (vt_json_alloc_failed() || json_error_code(&jerr) == json_error_out_of_memory || !jerr.text[0])
			return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory parsing the Prometheus answer "
					  "(%zu KiB of JSON)", len >> 10);
		if (http_status >= 300)
			return vt_err_set(err, VT_E_PARSE, 0, "not a Prometheus API answer: HTTP %ld with a body "
				"that is not JSON", http_status);
		return vt_err_set(err, VT_E_PARSE, 0, "not a Prometheus API answer: not JSON (%.100s at "
			"byte %d)", jerr.text, jerr.position);
	}
	status = json_string_value(json_object_get(root, "status"));
	if (!json_is_object(root) || !status) {
		rc = vt_err_set(err, VT_E_PARSE, 0, "not a Prometheus API answer: JSON without its \"status\"");
		goto out;
	}
	if (strcmp(status, "error") == 0) {
		rc = answer_error(root, http_status, err);
		goto out;
	}
	data = json_object_get(root, "data");
	type = json_string_value(json_object_get(data, "resultType"));
	result = json_object_get(data, "result");
	if (strcmp(status, "success") != 0 || !type || !result) {
		rc = vt_err_set(err, VT_E_PARSE, 0, "not a Prometheus API answer: no \"data\" with its "
			"\"resultType\" and \"result\"");
		goto out;
	}
	if (strcmp(type, "matrix") != 0) {
		rc = vt_err_set(err, VT_E_UNSUPPORTED, 0, "Prometheus answered with a %.20s, not the matrix "
			"of a range query", type);
		vt_err_hint(err, "the URL must be the server's (or its prefix), not a query endpoint");
		goto out;
	}
	if (!json_is_array(result)) {
		rc = vt_err_set(err, VT_E_PARSE, 0, "not a Prometheus API answer: its \"result\" is not an array");
		goto out;
	}
	keep_warnings(root, out);
	n = json_array_size(result);
	if (n > VT_PROM_SERIES_MAX) {
		rc = vt_err_set(err, VT_E_USAGE, 0, "the query returned %zu series; vitals gives a verdict on "
				"%d at most", n, VT_PROM_SERIES_MAX);
		vt_err_hint(err, "narrow it with labels ({job=\"api\"}) or aggregate (max by (instance) (...))");
		goto out;
	}
	if (n && !(out->series = calloc(n, sizeof(*out->series)))) {
		rc = vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory reading the Prometheus answer");
		goto out;
	}
	for (i = 0; i < n; i++) {
		vt_series_init(&out->series[i].series);
		out->n = i + 1;
		if ((rc = read_series(json_array_get(result, i), step_s, &out->series[i], err)))
			goto out;
	}
out:
	json_decref(root);
	if (rc != VT_OK)
		vt_prom_answer_release(out);
	return rc;
}

/*
 * test_prom_client.c — Prometheus range-query answers read into soak
 * series (serve/prom_series.h) and the client's pieces that need no server
 * (serve/prom_client.h): fixtures in Prometheus' exact answer format
 * (tests/fixtures/prometheus/, the long ones from gen.py there) for the
 * points, gaps, counter resets, NaN and Inf, names and labels, every kind
 * of error body and shape that is not an answer; then the verdicts on a
 * leak, a plateau and a step read that way, and the text view naming the
 * series instead of the slot it was judged in.
 */
#include "harness.h"
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <math.h>

#include "analyze/soak.h"
#include "render/soak.h"
#include "serve/prom_client.h"
#include "serve/prom_series.h"

/* Parse fixture name at step_s (HTTP status http); returns the code, *a filled on success. */
static int parse_fixture(const char *name, long http, double step_s, struct vt_prom_answer *a, struct vt_err *err)
{
	char rel[256];
	size_t len;
	char *body;
	int rc;

	snprintf(rel, sizeof(rel), "prometheus/%s", name);
	body = vt_fixture(rel, &len);
	rc = vt_prom_parse_range(body, len, http, step_s, a, err);
	free(body);
	return rc;
}

static size_t count_events(const struct vt_series *s, enum vt_event_kind k)
{
	size_t i, n = 0;

	for (i = 0; i < s->nevents; i++)
		n += s->events[i].kind == k;
	return n;
}

/* ---- reading ---- */

static void test_prom__leak_fixture_points(void)
{
	struct vt_prom_answer a;
	struct vt_err err;
	const struct vt_series *s;

	CHECK_EQ_I64(parse_fixture("leak.json", 200, 30, &a, &err), VT_OK);
	CHECK_EQ_U64(a.n, 1);
	if (a.n != 1)
		return;
	s = &a.series[0].series;
	CHECK_STR(a.series[0].name, "process_resident_memory_bytes");
	CHECK_STR(a.series[0].labels, "process_resident_memory_bytes{instance=\"status-1:9100\",job=\"status\"}");
	CHECK(a.series[0].bytes);
	CHECK(!a.series[0].counter);
	CHECK_EQ_I64(a.series[0].metric, VT_M_COMMITTED);
	CHECK_EQ_U64(s->n, 240);
	CHECK_EQ_U64(s->samples, 240);
	CHECK(s->m[VT_M_COMMITTED] != NULL);
	CHECK(s->m[VT_M_RSS_ANON] == NULL);
	CHECK(s->t[0] == 0 && s->t[239] == 239 * 30);
	CHECK(s->wall[0] == 1764806400.0);
	CHECK(s->m[VT_M_COMMITTED][0].mean == 104652800.0);
	CHECK(s->info.every_s == 30);
	CHECK(s->info.started_wall == 1764806400.0);
	CHECK(s->info.finished);
	CHECK_STR(s->info.target, a.series[0].labels);
	CHECK_EQ_U64(count_events(s, VT_EV_START), 1);
	CHECK_EQ_U64(count_events(s, VT_EV_GAP), 0);
	CHECK_EQ_U64(a.series[0].gaps, 0);
	CHECK_EQ_U64(a.series[0].resets, 0);
	CHECK(s->pid[0] == 0 && s->incarnation[239] == 0);
	vt_prom_answer_release(&a);
	CHECK(a.n == 0 && a.series == NULL);
}

static void test_prom__every_series_of_the_answer(void)
{
	struct vt_prom_answer a;
	struct vt_err err;

	CHECK_EQ_I64(parse_fixture("two_series.json", 200, 30, &a, &err), VT_OK);
	CHECK_EQ_U64(a.n, 2);
	if (a.n == 2) {
		CHECK_STR(a.series[0].labels, "process_resident_memory_bytes{instance=\"status-1:9100\",job=\"status\"}");
		CHECK_STR(a.series[1].labels, "process_resident_memory_bytes{instance=\"status-2:9100\",job=\"status\"}");
		CHECK_EQ_U64(a.series[1].series.n, 240);
	}
	vt_prom_answer_release(&a);
}

/* A hole over 3 steps is a gap event where the values resume; one of exactly 3 steps is not. */
static void test_prom__gaps_become_events(void)
{
	struct vt_prom_answer a;
	struct vt_err err;
	const struct vt_series *s;
	size_t i;

	CHECK_EQ_I64(parse_fixture("gap.json", 200, 15, &a, &err), VT_OK);
	if (a.n != 1)
		return;
	s = &a.series[0].series;
	CHECK_EQ_U64(s->n, 8);
	CHECK_EQ_U64(a.series[0].gaps, 1);
	CHECK_EQ_U64(count_events(s, VT_EV_GAP), 1);
	for (i = 0; i < s->nevents; i++)
		if (s->events[i].kind == VT_EV_GAP) {
			CHECK(s->events[i].t == 150);            /* at the value that resumes */
			CHECK(s->events[i].wall == 1764806550.0);
		}
	/* points never straddle it: one value per point, each point's span is its own time */
	for (i = 0; i < s->n; i++)
		CHECK(s->count[i] == 1 && s->t0[i] == s->t1[i]);
	CHECK(fabs(s->t[7] - 180.5) < 1e-9);             /* a fractional time is kept */
	vt_prom_answer_release(&a);

	/* the same answer at a 20 s step: the 60 s hole is 3 steps, not a gap */
	CHECK_EQ_I64(parse_fixture("gap.json", 200, 20, &a, &err), VT_OK);
	if (a.n == 1)
		CHECK_EQ_U64(a.series[0].gaps, 0);
	vt_prom_answer_release(&a);
}

/* A _total counter that drops was reset: a new incarnation each time, and the verdict is on the last. */
static void test_prom__counter_resets_are_restarts(void)
{
	struct vt_prom_answer a;
	struct vt_err err;
	const struct vt_series *s;
	struct vt_soak_verdict v;
	size_t from, to;

	CHECK_EQ_I64(parse_fixture("counter_reset.json", 200, 15, &a, &err), VT_OK);
	if (a.n != 1)
		return;
	s = &a.series[0].series;
	CHECK(a.series[0].counter);
	CHECK(!a.series[0].bytes);
	CHECK_EQ_I64(a.series[0].metric, VT_M_ARENAS);
	CHECK_EQ_U64(a.series[0].resets, 2);
	CHECK_EQ_U64(count_events(s, VT_EV_RESTART), 2);
	CHECK_EQ_U64(s->incarnation[2], 0);
	CHECK_EQ_U64(s->incarnation[3], 1);
	CHECK_EQ_U64(s->incarnation[5], 1);
	CHECK_EQ_U64(s->incarnation[6], 2);
	vt_series_last_incarnation(s, &from, &to);
	CHECK_EQ_U64(from, 6);
	CHECK_EQ_U64(to, 8);
	CHECK_EQ_I64(vt_soak_analyze(s, &(struct vt_soak_opts){ .metric = VT_M_ARENAS }, &v), 0);
	CHECK_EQ_I64(v.restarts, 2);
	CHECK_EQ_U64(v.from, 6);
	vt_prom_answer_release(&a);
}

/* A gauge that drops just dropped: never cut into incarnations. */
static void test_prom__gauge_drop_is_not_a_reset(void)
{
	struct vt_prom_answer a;
	struct vt_err err;

	CHECK_EQ_I64(parse_fixture("gauge_drop.json", 200, 15, &a, &err), VT_OK);
	if (a.n != 1)
		return;
	CHECK(!a.series[0].counter);
	CHECK_EQ_U64(a.series[0].resets, 0);
	CHECK_EQ_U64(count_events(&a.series[0].series, VT_EV_RESTART), 0);
	CHECK_EQ_U64(a.series[0].series.incarnation[4], 0);
	CHECK(a.series[0].series.m[VT_M_ARENAS][3].mean == 12);
	vt_prom_answer_release(&a);
}

static void test_prom__nan_and_inf_are_unknown(void)
{
	struct vt_prom_answer a;
	struct vt_err err;
	const struct vt_stat *st;

	CHECK_EQ_I64(parse_fixture("nan_inf.json", 200, 15, &a, &err), VT_OK);
	if (a.n != 1)
		return;
	st = a.series[0].series.m[VT_M_COMMITTED];
	CHECK_EQ_U64(a.series[0].unknown, 3);
	CHECK(st[0].mean == 1048576);
	CHECK(isnan(st[1].mean) && isnan(st[1].lo) && isnan(st[1].hi));
	CHECK(isnan(st[2].mean));
	CHECK(isnan(st[3].mean));
	CHECK(st[4].mean == 2500000);
	CHECK(st[5].mean == 0 && !isnan(st[5].mean));   /* a real 0 stays 0 */
	vt_prom_answer_release(&a);
}

/* No __name__ (sum(), rate()): the labels alone; quotes and backslashes escaped as Prometheus does. */
static void test_prom__labels_without_a_name(void)
{
	struct vt_prom_answer a;
	struct vt_err err;

	CHECK_EQ_I64(parse_fixture("no_name.json", 200, 15, &a, &err), VT_OK);
	CHECK_EQ_U64(a.n, 2);
	if (a.n == 2) {
		CHECK_STR(a.series[0].name, "");
		CHECK_STR(a.series[0].labels, "{job=\"api\",path=\"/say \\\"hi\\\"\\\\now\"}");
		CHECK_STR(a.series[1].labels, "{}");
		CHECK(!a.series[0].bytes);
		CHECK(a.series[0].series.m[VT_M_ARENAS][0].mean == 0.25);
	}
	CHECK(strstr(a.warnings, "might not be a counter") != NULL);
	vt_prom_answer_release(&a);
}

/* ---- errors ---- */

static void test_prom__error_bodies(void)
{
	struct vt_prom_answer a;
	struct vt_err err;

	CHECK_EQ_I64(parse_fixture("error_bad_data.json", 400, 15, &a, &err), VT_E_USAGE);
	CHECK(strstr(err.msg, "parse error: unexpected end of input inside braces") != NULL);
	CHECK(strstr(err.msg, "HTTP 400") != NULL);
	CHECK(strstr(err.msg, "bad_data") != NULL);
	CHECK(a.n == 0 && a.series == NULL);

	CHECK_EQ_I64(parse_fixture("error_resolution.json", 400, 0.001, &a, &err), VT_E_USAGE);
	CHECK(strstr(err.msg, "exceeded maximum resolution of 11,000 points") != NULL);
	CHECK(strstr(err.hint, "--step") != NULL);

	CHECK_EQ_I64(parse_fixture("error_timeout.json", 503, 15, &a, &err), VT_E_TIMEOUT);
	CHECK(strstr(err.msg, "query timed out in expression evaluation") != NULL);

	CHECK_EQ_I64(parse_fixture("error_execution.json", 422, 15, &a, &err), VT_E_FAIL);
	CHECK(strstr(err.msg, "found duplicate series") != NULL);
}

static void test_prom__not_a_range_answer(void)
{
	struct vt_prom_answer a;
	struct vt_err err;

	CHECK_EQ_I64(parse_fixture("vector.json", 200, 15, &a, &err), VT_E_UNSUPPORTED);
	CHECK(strstr(err.msg, "vector") != NULL);
	CHECK_EQ_I64(parse_fixture("scalar.json", 200, 15, &a, &err), VT_E_UNSUPPORTED);
	CHECK(strstr(err.msg, "scalar") != NULL);
}

static void test_prom__empty_result_is_no_series(void)
{
	struct vt_prom_answer a;
	struct vt_err err;

	CHECK_EQ_I64(parse_fixture("empty.json", 200, 15, &a, &err), VT_OK);
	CHECK_EQ_U64(a.n, 0);
	vt_prom_answer_release(&a);
}

/* More series than a verdict each is meant for: refused before anything is allocated for them. */
static void test_prom__too_many_series(void)
{
	static const char head[] = "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[";
	static const char one[] = "{\"metric\":{},\"values\":[]}";
	size_t cap = sizeof(head) + (VT_PROM_SERIES_MAX + 1) * sizeof(one) + 8, len = 0;
	char *body = malloc(cap);
	struct vt_prom_answer a;
	struct vt_err err;

	CHECK(body != NULL);
	len += (size_t)snprintf(body + len, cap - len, "%s", head);
	for (int i = 0; i <= VT_PROM_SERIES_MAX; i++)
		len += (size_t)snprintf(body + len, cap - len, "%s%s", i ? "," : "", one);
	len += (size_t)snprintf(body + len, cap - len, "]}}");
	CHECK_EQ_I64(vt_prom_parse_range(body, len, 200, 15, &a, &err), VT_E_USAGE);
	CHECK(strstr(err.msg, "1001 series") != NULL);
	CHECK(a.n == 0);
	vt_prom_answer_release(&a);
	free(body);
}

/*
 * Out of memory while parsing is said as such (issue 23): a 24 MiB answer
 * parsed under a 96 MiB address-space limit ran out inside jansson and was
 * reported as "not JSON at byte 0".
 */
static void test_prom__out_of_memory_is_said(void)
{
	static const char head[] = "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":["
				   "{\"metric\":{\"__name__\":\"x\"},\"values\":[";
	size_t cap = 24u << 20, len = 0;
	char *body;
	int status = 0;
	pid_t c;

#if defined(__SANITIZE_ADDRESS__)
	printf("# skipped under AddressSanitizer: its shadow memory does not fit an address-space limit\n");
	return;
#endif
	body = malloc(cap);
	CHECK(body != NULL);
	if (!body)
		return;
	len += (size_t)snprintf(body + len, cap - len, "%s", head);
	for (int i = 0; len + 64 < cap; i++)
		len += (size_t)snprintf(body + len, cap - len, "%s[%d,\"%d\"]", i ? "," : "", 1700000000 + i, i);
	len += (size_t)snprintf(body + len, cap - len, "]}]}}");
	fflush(stdout);
	c = fork();
	if (c == 0) {
		struct rlimit rl = { 96u << 20, 96u << 20 };
		struct vt_prom_answer a;
		struct vt_err err;
		int rc;

		setrlimit(RLIMIT_AS, &rl);
		rc = vt_prom_parse_range(body, len, 200, 15, &a, &err);
		printf("# %zu MiB under ulimit -v 96 MiB: %s: %s\n", len >> 20, vt_code_name(rc), err.msg);
		fflush(stdout);
		_exit(rc == VT_E_NOMEM || rc == VT_OK ? 0 : 1);
	}
	CHECK(c > 0 && waitpid(c, &status, 0) == c);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	free(body);
}

static void test_prom__not_prometheus(void)
{
	static const char *const names[] = { "truncated.json", "not_prometheus.html", "wrong_shape.json",
					     "times_backwards.json" };
	struct vt_prom_answer a;
	struct vt_err err;
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		CHECK_EQ_I64(parse_fixture(names[i], 200, 15, &a, &err), VT_E_PARSE);
		CHECK(strstr(err.msg, "not a Prometheus API answer") != NULL);
		CHECK(a.n == 0 && a.series == NULL);
	}
	CHECK_EQ_I64(parse_fixture("not_prometheus.html", 404, 15, &a, &err), VT_E_PARSE);
	CHECK(strstr(err.msg, "HTTP 404") != NULL);
	/* JSON, but not the API's */
	CHECK_EQ_I64(vt_prom_parse_range("[1,2]", 5, 200, 15, &a, &err), VT_E_PARSE);
	CHECK_EQ_I64(vt_prom_parse_range("{\"status\":\"success\"}", 20, 200, 15, &a, &err), VT_E_PARSE);
	CHECK_EQ_I64(vt_prom_parse_range("", 0, 200, 15, &a, &err), VT_E_PARSE);
	CHECK_EQ_I64(vt_prom_parse_range(NULL, 0, 0, 15, &a, &err), VT_E_PARSE);
	/* a value that is not a decimal number */
	{
		const char *hex = "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":"
				  "[{\"metric\":{},\"values\":[[1764806400,\"0x10\"]]}]}}";

		CHECK_EQ_I64(vt_prom_parse_range(hex, strlen(hex), 200, 15, &a, &err), VT_E_PARSE);
	}
}

/* ---- verdicts on series read from Prometheus ---- */

static enum vt_verdict_kind verdict_of(const char *fixture, struct vt_soak_verdict *v)
{
	struct vt_prom_answer a;
	struct vt_err err;
	struct vt_soak_opts so;

	v->kind = 0;
	if (parse_fixture(fixture, 200, 30, &a, &err) != VT_OK || a.n != 1)
		return 0;
	vt_soak_opts_default(&so);
	so.metric = a.series[0].metric;
	CHECK_EQ_I64(vt_soak_analyze(&a.series[0].series, &so, v), 0);
	vt_prom_answer_release(&a);
	return v->kind;
}

static void test_prom__leak_is_leak(void)
{
	struct vt_soak_verdict v;

	CHECK_EQ_I64(verdict_of("leak.json", &v), VT_VERDICT_LEAK);
	/* 10 MiB/h in the fixture */
	CHECK(v.slope * 3600 > 9 * 1048576.0 && v.slope * 3600 < 11 * 1048576.0);
	CHECK(!v.running);
}

static void test_prom__plateau_is_plateau(void)
{
	struct vt_soak_verdict v;

	CHECK_EQ_I64(verdict_of("plateau.json", &v), VT_VERDICT_PLATEAU);
}

static void test_prom__step_is_step(void)
{
	struct vt_soak_verdict v;

	CHECK_EQ_I64(verdict_of("step.json", &v), VT_VERDICT_STEP);
	CHECK(v.step_bytes > 35 * 1048576.0 && v.step_bytes < 45 * 1048576.0);
}

/* The text view names the series, never the slot's "committed", and no pid. */
static void test_prom__text_names_the_series(void)
{
	struct vt_prom_answer a;
	struct vt_err err;
	struct vt_soak_verdict v;
	struct vt_analyze_report r = { 0 };
	struct vt_soak_opts so;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	CHECK_EQ_I64(parse_fixture("leak.json", 200, 30, &a, &err), VT_OK);
	if (a.n != 1)
		return;
	vt_soak_opts_default(&so);
	so.metric = a.series[0].metric;
	CHECK_EQ_I64(vt_soak_analyze(&a.series[0].series, &so, &v), 0);
	r.path = a.series[0].labels;
	r.series = &a.series[0].series;
	r.verdict = &v;
	r.metric_label = a.series[0].name;
	f = open_memstream(&text, &len);
	CHECK(f && vt_render_analyze_text(f, &r) == 0);
	fclose(f);
	CHECK(strstr(text, "evidence (process_resident_memory_bytes)") != NULL);
	CHECK(strstr(text, "committed") == NULL);
	CHECK(strstr(text, "pid 0") == NULL);
	CHECK(strstr(text, "verdict: leak") != NULL);
	free(text);
	text = NULL;
	f = open_memstream(&text, &len);
	CHECK(f && vt_render_analyze_json(f, &r) == 0);
	fclose(f);
	CHECK(strstr(text, "\"metric_label\": \"process_resident_memory_bytes\"") != NULL);
	CHECK(strstr(text, "\"pid\": null") != NULL);
	free(text);
	vt_prom_answer_release(&a);
}

/* ---- the client's pieces that need no server ---- */

static void test_prom__default_step(void)
{
	CHECK(vt_prom_default_step(6 * 3600) == 22);     /* 21.6 s rounded up */
	CHECK(vt_prom_default_step(120) == 1);           /* at least 1 s */
	CHECK(vt_prom_default_step(1000) == 1);
	CHECK(vt_prom_default_step(30 * 86400) == 2592);
	/* every default stays under Prometheus' 11,000 points */
	CHECK(30 * 86400 / vt_prom_default_step(30 * 86400) + 1 <= VT_PROM_MAX_POINTS);
}

static void test_prom__url_shown_hides_the_password(void)
{
	char buf[256];

	CHECK_STR(vt_prom_url_shown("http://user:s3cret@host:9090/prom/", buf, sizeof(buf)),
		  "http://user@host:9090/prom/");
	CHECK_STR(vt_prom_url_shown("http://host:9090", buf, sizeof(buf)), "http://host:9090");
	CHECK_STR(vt_prom_url_shown("https://user@host", buf, sizeof(buf)), "https://user@host");
	CHECK_STR(vt_prom_url_shown("http://u:p@ss@host/x", buf, sizeof(buf)), "http://u@host/x");
	CHECK_STR(vt_prom_url_shown("http://host/a@b:c", buf, sizeof(buf)), "http://host/a@b:c");
	/* a password with an unescaped '?', '#' or '/' is no URL, and still never shown */
	CHECK_STR(vt_prom_url_shown("http://admin:se?cret@127.0.0.1:1", buf, sizeof(buf)), "http://admin@127.0.0.1:1");
	CHECK_STR(vt_prom_url_shown("http://admin:se#c/ret@h:9090/p", buf, sizeof(buf)), "http://admin@h:9090/p");
	CHECK_STR(vt_prom_url_shown("admin:pw@host", buf, sizeof(buf)), "admin@host");
}

static void test_prom__bad_urls_are_usage(void)
{
	struct vt_prom_answer a;
	struct vt_err err;
	static const char *const bad[] = { "ftp://host", "host:9090", "http://", "http:///x",
					   "http://host:9090/?x=1", "http://host#f" };
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct vt_prom_range q = { bad[i], "up", 1764806400, 1764810000, 15, 1 };

		CHECK_EQ_I64(vt_prom_query_range(&q, &a, &err), VT_E_USAGE);
	}
	{
		struct vt_prom_range q = { "ftp://me:hunter2@host", "up", 1764806400, 1764810000, 15, 1 };

		CHECK_EQ_I64(vt_prom_query_range(&q, &a, &err), VT_E_USAGE);
		CHECK(strstr(err.msg, "hunter2") == NULL);
	}
}

/* Port 1 on loopback: nothing listens, the connection is refused at once. */
static void test_prom__refused_is_unreachable(void)
{
	struct vt_prom_answer a;
	struct vt_err err;
	struct vt_prom_range q = { "http://me:hunter2@127.0.0.1:1", "up", 1764806400, 1764810000, 15, 5 };

	CHECK_EQ_I64(vt_prom_query_range(&q, &a, &err), VT_E_UNREACHABLE);
	CHECK(strstr(err.msg, "127.0.0.1:1") != NULL);
	CHECK(strstr(err.msg, "hunter2") == NULL);
	CHECK(a.n == 0);
}

VT_TEST_MAIN(test_prom__out_of_memory_is_said, test_prom__leak_fixture_points, test_prom__every_series_of_the_answer, test_prom__gaps_become_events,
	     test_prom__counter_resets_are_restarts, test_prom__gauge_drop_is_not_a_reset,
	     test_prom__nan_and_inf_are_unknown, test_prom__labels_without_a_name, test_prom__error_bodies,
	     test_prom__not_a_range_answer, test_prom__empty_result_is_no_series, test_prom__too_many_series,
	     test_prom__not_prometheus,
	     test_prom__leak_is_leak, test_prom__plateau_is_plateau, test_prom__step_is_step,
	     test_prom__text_names_the_series, test_prom__default_step, test_prom__url_shown_hides_the_password,
	     test_prom__bad_urls_are_usage, test_prom__refused_is_unreachable)

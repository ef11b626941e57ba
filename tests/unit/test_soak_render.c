/*
 * test_soak_render.c — the views of a soak analysis and of an A/B
 * comparison (render/soak.h), on series and verdicts built by hand like the
 * field report's: a 1458 MiB plateau, a 611 MiB arm under MALLOC_ARENA_MAX=2,
 * live 44 MiB in both.  Each view is rendered to memory and read back: the
 * verdict line, aligned tables, JSON that parses with nulls for unknowns,
 * CSV with a constant column count, HTML that is self-contained and escaped.
 */
#include "harness.h"
#include "browser.h"

#include "analyze/profile_trend.h"
#include "analyze/thread_view.h"
#include "render/profile_trend.h"
#include "render/soak.h"
#include "render/svg_chart.h"
#include "render/table.h"

#include <jansson.h>
#include <math.h>

#define MiB (1024.0 * 1024.0)
#define WALL0 1788716228.0          /* 2026-09-06T17:37:08Z */
#define EVIL "<script>alert(1)</script> --name srv"

/* ---- building inputs ------------------------------------------------------ */

static void set(struct vt_series *s, enum vt_metric m, size_t i, double v)
{
	struct vt_stat *st = vt_series_stat(s, m);

	st[i] = (struct vt_stat){ v, v, v };
}

/* n points one sample each, every `every` seconds, around a 1458 MiB plateau. */
static void build_series(struct vt_series *s, size_t n, double every)
{
	size_t i;

	vt_series_init(s);
	if (vt_series_reserve(s, n)) {
		printf("Bail out! out of memory\n");
		exit(2);
	}
	snprintf(s->info.target, sizeof(s->info.target), "%s", EVIL);
	snprintf(s->info.arm, sizeof(s->info.arm), "default");
	snprintf(s->info.host, sizeof(s->info.host), "node1");
	s->info.writing = true;                     /* no STOP event, a soak holds it */
	snprintf(s->info.vitals_version, sizeof(s->info.vitals_version), "0.1.0");
	s->info.schema = 1;
	s->info.ncpus = 4;
	s->info.every_s = every;
	s->info.started_wall = WALL0;
	s->info.heap = true;
	for (i = 0; i < n; i++) {
		double wave = sin((double)i / 7.0), anon = (1122 + 80 * wave) * MiB, committed = (1458 + 30 * wave) * MiB;

		s->t[i] = s->t0[i] = s->t1[i] = (double)i * every;
		s->wall[i] = WALL0 + (double)i * every;
		s->count[i] = 1;
		s->pid[i] = 4242;
		s->incarnation[i] = 0;
		set(s, VT_M_COMMITTED, i, committed);
		set(s, VT_M_RSS_ANON, i, anon);
		set(s, VT_M_VM_SWAP, i, committed - anon);
		set(s, VT_M_HEAP_LIVE, i, 44.3 * MiB);
		set(s, VT_M_HEAP_FREE, i, 1413 * MiB);
		set(s, VT_M_ARENAS, i, 5);
		set(s, VT_M_REGIONS_64M, i, 5);
		set(s, VT_M_CPU_USER_S, i, 0.50 * (double)i * every);
		set(s, VT_M_CPU_SYS_S, i, 0.07 * (double)i * every);
	}
	s->n = n;
	s->samples = n;
	/* one point nobody could read: unknown, never 0 */
	if (n > 10)
		s->m[VT_M_HEAP_LIVE][10] = (struct vt_stat){ NAN, NAN, NAN };
}

static void add_events_threads(struct vt_series *s, size_t nthreads, size_t nerrors)
{
	struct vt_event ev = { 0 };
	struct vt_thread_run th;
	size_t i;

	ev.kind = VT_EV_START;
	ev.wall = WALL0;
	ev.pid = 4242;
	snprintf(ev.detail, sizeof(ev.detail), "found by --name");
	vt_series_add_event(s, &ev);
	for (i = 0; i < nerrors; i++) {
		ev.kind = VT_EV_ERROR;
		ev.t = 60.0 * (double)(i + 1);
		ev.wall = WALL0 + ev.t;
		snprintf(ev.detail, sizeof(ev.detail), "smaps <b>unreadable</b> \xff");
		vt_series_add_event(s, &ev);
	}
	for (i = 0; i < nthreads; i++) {
		memset(&th, 0, sizeof(th));
		th.pid = 4242;
		th.tid = 4242 + (pid_t)i;
		snprintf(th.name, sizeof(th.name), i == 1 ? "w\xff%zu" : "worker-%zu", i);
		th.t_first = 0;
		th.t_last = 3600;
		th.delta[VT_TC_CPU_NS] = (uint64_t)(3600e9 * 0.05 * (double)(i + 1));
		th.delta[VT_TC_WAIT_NS] = (uint64_t)(3600e9 * 0.01);
		th.delta[VT_TC_VCSW] = 3600 * 12;
		th.delta[VT_TC_NVCSW] = 3600;
		vt_series_add_thread(s, &th);
	}
}

/* A plateau verdict over the whole series, like the report's .61 arm. */
static void plateau_verdict(const struct vt_series *s, struct vt_soak_verdict *v)
{
	double t1 = s->t1[s->n - 1];
	int q;

	memset(v, 0, sizeof(*v));
	v->kind = VT_VERDICT_PLATEAU;
	v->metric = VT_M_COMMITTED;
	v->reason = VT_SOAK_WHY_SETTLED_AFTER;
	v->from = 0;
	v->to = s->n;
	v->t0 = 0;
	v->t1 = t1;
	v->samples = s->samples;
	v->running = true;
	v->noise = 4.2 * MiB;
	v->tolerance = 12 * MiB;
	for (q = 0; q < 4; q++) {
		v->q[q].t0 = t1 * q / 4;
		v->q[q].t1 = t1 * (q + 1) / 4;
		v->q[q].samples = s->n / 4;
		v->q[q].floor = 1402 * MiB;
		v->q[q].median = 1458 * MiB;
		v->q[q].peak = 1491 * MiB;
	}
	v->q[3].floor = 1402.4 * MiB;
	v->q[2].peak = NAN;          /* unknown shows as n/a */
	v->floor_drift = 0.4 * MiB;
	v->settled = true;
	v->settle_s = 41 * 60;
	v->settled_t0 = 41 * 60;
	v->settled_from = 41;
	v->settled_lo = 1402 * MiB;
	v->settled_hi = 1491 * MiB;
	v->settled_median = 1458 * MiB;
	v->slope = 0.02 * MiB / 3600;
	v->slope_lo = NAN;
	v->slope_hi = NAN;
	v->slope_window_t0 = 41 * 60;
	v->slope_window_s = t1 - 41 * 60;
	v->step_t = NAN;
	v->step_bytes = v->step_before = v->step_after = NAN;
	v->need_more_s = NAN;
	v->swap.seen = true;
	v->swap.episodes = 3;
	v->swap.t0 = 50 * 60;
	v->swap.t1 = 58 * 60;
	v->swap.anon_delta = -62 * MiB;
	v->swap.swap_delta = 91 * MiB;
	v->swap.committed_delta = 1 * MiB;
	v->swap.anon_range_lo = 966 * MiB;
	v->swap.anon_range_hi = 1127 * MiB;
	v->cpu_cores = 0.57;
	v->cpu_user_cores = 0.50;
	v->cpu_sys_cores = 0.07;
}

typedef int (*analyze_fn)(FILE *, const struct vt_analyze_report *);
typedef int (*compare_fn)(FILE *, const struct vt_compare_report *);

static char *render_analyze(analyze_fn fn, const struct vt_analyze_report *r, int *rc)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f) {
		printf("Bail out! open_memstream\n");
		exit(2);
	}
	*rc = fn(f, r);
	fclose(f);
	return buf;
}

static char *render_compare(compare_fn fn, const struct vt_compare_report *r, int *rc)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f) {
		printf("Bail out! open_memstream\n");
		exit(2);
	}
	*rc = fn(f, r);
	fclose(f);
	return buf;
}

/* ---- reading outputs back ------------------------------------------------- */

/* Display width of one line (to '\n'): UTF-8 lead bytes. */
static size_t line_width(const char *p)
{
	size_t w = 0;

	for (; *p && *p != '\n'; p++)
		if (((unsigned char)*p & 0xc0) != 0x80)
			w++;
	return w;
}

/* The display column where the n-th occurrence... of needle begins in the line at p, or -1. */
static long col_of(const char *line, const char *needle)
{
	const char *hit = strstr(line, needle), *eol = strchr(line, '\n'), *p;
	long col = 0;

	if (!hit || (eol && hit > eol))
		return -1;
	for (p = line; p < hit; p++)
		if (((unsigned char)*p & 0xc0) != 0x80)
			col++;
	return col;
}

/* The character (first byte) at display column col of the line at p; 0 past its end. */
static char char_at(const char *line, long col)
{
	const char *p;
	long c = -1;

	for (p = line; *p && *p != '\n'; p++) {
		if (((unsigned char)*p & 0xc0) != 0x80)
			c++;
		if (c == col)
			return *p;
	}
	return 0;
}

static const char *next_line(const char *p)
{
	const char *e = strchr(p, '\n');

	return e ? e + 1 : p + strlen(p);
}

static size_t count_str(const char *hay, const char *needle)
{
	size_t n = 0;

	for (; (hay = strstr(hay, needle)); hay += strlen(needle))
		n++;
	return n;
}

/* "nan" or "inf" standing alone (a number printed from a NAN): never in any view. */
static bool has_nan_token(const char *s)
{
	const char *p;

	for (p = s; *p; p++) {
		bool start = p == s || !((p[-1] >= 'a' && p[-1] <= 'z') || (p[-1] >= 'A' && p[-1] <= 'Z'));

		if (start && (!strncasecmp(p, "nan", 3) || !strncasecmp(p, "inf", 3)) &&
		    !((p[3] >= 'a' && p[3] <= 'z') || (p[3] >= 'A' && p[3] <= 'Z')))
			return true;
	}
	return false;
}

/* Cells of one CSV record (RFC 4180); *p moves past it.  Returns the count. */
static int csv_record(const char **p)
{
	const char *s = *p;
	int cells = 1;
	bool quoted = false;

	for (; *s; s++) {
		if (quoted) {
			if (*s == '"' && s[1] == '"')
				s++;
			else if (*s == '"')
				quoted = false;
		} else if (*s == '"') {
			quoted = true;
		} else if (*s == ',') {
			cells++;
		} else if (*s == '\n') {
			s++;
			break;
		}
	}
	*p = s;
	return cells;
}

/* ---- analyze: text -------------------------------------------------------- */

static void test_soak_render__text_plateau(void)
{
	struct vt_series s;
	struct vt_soak_verdict v;
	struct vt_analyze_report r = { "run.db", &s, &v, true, 0 };
	const char *q, *p;
	char *out;
	size_t w;
	int rc, rows = 0;

	build_series(&s, 200, 60);
	add_events_threads(&s, 14, 12);
	plateau_verdict(&s, &v);
	out = render_analyze(vt_render_analyze_text, &r, &rc);
	CHECK(rc == 0);
	CHECK(strstr(out, "vitals analyze · run.db") != NULL);
	CHECK(strstr(out, "2026-09-06 17:37:08 UTC") != NULL);
	CHECK(strstr(out, "still being written") != NULL);
	CHECK(strstr(out, "verdict: plateau — settled after 41 min; 1458 MiB (oscillating 1402–1491 MiB)\n") != NULL);
	CHECK(strstr(out, "floor drift q1→q4: +0.40 MiB (within noise: tolerance 12.0 MiB)") != NULL);
	CHECK(strstr(out, "RssAnon fell 62.0 MiB while swap rose 91.0 MiB and committed stayed flat:") != NULL);
	CHECK(strstr(out, "paged out,") != NULL);
	CHECK(strstr(out, "0.57 cores (user 0.50, sys 0.07)") != NULL);
	CHECK(strstr(out, "(90% interval") == NULL);      /* unknown interval: not printed as nan */
	CHECK(strstr(out, "\n  settled after 41 min at 1458 MiB (1402 to 1491 MiB); over the last 2.6 h "
			  "the floor") != NULL);
	CHECK(!has_nan_token(out));
	/* every line of the quarters table (header, rule, q1..q4) has one width */
	q = strstr(out, "  QUARTER");
	CHECK(q != NULL);
	if (q) {
		w = line_width(q);
		for (p = q; *p && strncmp(p, "  floor drift", 13) && rows < 8; p = next_line(p), rows++)
			CHECK_EQ_U64(line_width(p), w);
		CHECK_EQ_I64(rows, 6);
		CHECK(strstr(q, "  q3 ") != NULL && strstr(q, "n/a") != NULL);
	}
	/* sparklines: 60 cells each, the span's min and max labelled */
	p = strstr(out, "  committed ");
	CHECK(p != NULL && strstr(out, "min 1428 MiB") != NULL && strstr(out, "max 1488 MiB") != NULL);
	CHECK(strstr(out, "  VmSwap ") != NULL && strstr(out, "  RssAnon ") != NULL);
	/* threads: the busiest first, 10 of 14, the rest summed */
	CHECK(strstr(out, "threads by CPU over the run (10 of 14 shown)") != NULL);
	CHECK(col_of(strstr(out, "  TID"), "TID") == 2);
	CHECK(strstr(out, "4255  worker-13  0.700") != NULL);
	CHECK(strstr(out, "4 other threads: 0.500 cores together") != NULL);
	CHECK(strstr(out, "unreadable</b> ?\n") != NULL);  /* bytes that are not UTF-8: '?' */
	/* events: capped at 10 */
	CHECK(strstr(out, "events (13: 0 restarts, 0 gaps, 12 errors)") != NULL);
	CHECK(strstr(out, "… 3 more") != NULL);
	free(out);

	/* ASCII terminals get the ASCII ramp */
	r.utf8 = false;
	out = render_analyze(vt_render_analyze_text, &r, &rc);
	CHECK(rc == 0);
	p = strstr(out, "over the span");
	CHECK(p && !strstr(p, "▁") && !strstr(p, "█"));
	free(out);
	vt_series_free(&s);
}

/*
 * A thread per request (http.server) over a soak: nine request threads
 * written once each (they lived a tick), two that came and went with a
 * rate, a worker that came and stayed, and the main thread.  The views list
 * the main thread and the worker, and one row for the short-lived: their
 * names counted, their CPU the process's minus the listed threads'.
 */
static void test_soak_render__short_lived_threads(void)
{
	struct vt_series s;
	struct vt_soak_verdict v;
	struct vt_analyze_report r = { "run.db", &s, &v, true, 0 };
	struct vt_soak_short_lived sl;
	struct vt_threads_rates tr;
	struct vt_diagnosis d;
	struct vt_thread_run th;
	json_t *root, *o;
	const char *p;
	char *out;
	double end, expect;
	int rc, i, rows = 0;

	build_series(&s, 200, 60);                   /* the process: 0.57 cores */
	end = s.t1[s.n - 1];
	memset(&th, 0, sizeof(th));
	th.pid = 4242;
	th.tid = 4242;
	snprintf(th.name, sizeof(th.name), "python3");
	th.t_last = end;
	th.delta[VT_TC_CPU_NS] = (uint64_t)(0.1 * end * 1e9);
	vt_series_add_thread(&s, &th);
	th.tid = 4300;                              /* came at 120 s, still there */
	snprintf(th.name, sizeof(th.name), "worker-3");
	th.t_first = 120;
	th.delta[VT_TC_CPU_NS] = (uint64_t)(0.05 * (end - 120) * 1e9);
	th.cpu_ns_first = 2000000000ull;            /* its first 2 s, before its first record */
	vt_series_add_thread(&s, &th);
	th.cpu_ns_first = 0;
	snprintf(th.name, sizeof(th.name), "python3");
	for (i = 0; i < 11; i++) {
		th.tid = 5000 + i;
		th.t_first = 600 + 60 * i;
		th.t_last = th.t_first + (i < 2 ? 60 : 0);      /* two with a rate, nine written once */
		th.delta[VT_TC_CPU_NS] = i < 2 ? 1000000000ull : 0;
		vt_series_add_thread(&s, &th);
	}
	plateau_verdict(&s, &v);
	expect = 0.57 - 0.1 - (0.05 * (end - 120) + 2) / end;

	vt_soak_short_lived(&s, 4242, &sl);
	CHECK_EQ_U64(sl.threads, 11);
	CHECK(fabs(sl.cores - expect) < 1e-6);
	CHECK(fabs(sl.process_cores - 0.57) < 1e-6);
	CHECK(fabs(sl.recorded_cores - 2 / end) < 1e-9);

	out = render_analyze(vt_render_analyze_text, &r, &rc);
	CHECK(rc == 0);
	CHECK(strstr(out, "threads by CPU over the run (2 of 2 shown)") != NULL);
	p = strstr(out, "\n  +-");
	CHECK(p && strstr(p, "short-lived") && strstr(p, "0.420") && strstr(p, "0.420") < strchr(p + 1, '\n'));
	CHECK(strstr(out, "+- short-lived: 11 x python3, threads that came and went") != NULL);
	/* one row for the short-lived: "python3" is the main thread's row alone */
	for (p = strstr(out, "threads by CPU"); p && (p = strstr(p, "  python3 ")); p++)
		rows++;
	CHECK_EQ_I64(rows, 1);
	CHECK(!has_nan_token(out));
	free(out);

	out = render_analyze(vt_render_analyze_html, &r, &rc);
	CHECK(rc == 0);
	CHECK(strstr(out, "short-lived: 11 x python3") != NULL);
	free(out);

	out = render_analyze(vt_render_analyze_json, &r, &rc);
	CHECK(rc == 0);
	root = json_loads(out, 0, NULL);
	CHECK(root != NULL);
	o = root ? json_object_get(root, "short_lived_threads") : NULL;
	CHECK(o && json_integer_value(json_object_get(o, "threads")) == 11);
	CHECK(o && fabs(json_real_value(json_object_get(o, "cores")) - expect) < 1e-6);
	json_decref(root);
	free(out);

	/* the diagnosis's view: shares of the process, the short-lived flagged and summed */
	CHECK(vt_soak_thread_view(&s, 4242, NULL, NULL, &tr, &d, NULL) == VT_OK);
	CHECK(fabs(tr.cores - 0.57) < 1e-6);
	CHECK_EQ_U64(tr.short_lived, 11);
	CHECK(fabs(tr.short_lived_cores - expect) < 1e-6);
	CHECK(tr.n == 13 && fabs(tr.threads[0].cpu_share - 0.1 / 0.57) < 1e-6);
	vt_threads_rates_release(&tr);
	vt_series_free(&s);
}

static void test_soak_render__headlines(void)
{
	struct vt_soak_verdict v;
	char buf[640];

	memset(&v, 0, sizeof(v));
	v.metric = VT_M_COMMITTED;
	v.need_more_s = NAN;
	v.kind = VT_VERDICT_LEAK;
	v.slope = 1.84 * MiB / 3600;
	v.slope_lo = 1.61 * MiB / 3600;
	v.slope_hi = 2.07 * MiB / 3600;
	CHECK_STR(vt_soak_headline(&v, buf, sizeof(buf)),
		  "leak — floor rising 1.84 MiB/h (90% interval 1.61–2.07)");

	v.kind = VT_VERDICT_STEP;
	v.step_t = 32 * 60;
	v.step_bytes = 178 * MiB;
	v.step_before = 771 * MiB;
	v.step_after = 969 * MiB;
	CHECK_STR(vt_soak_headline(&v, buf, sizeof(buf)),
		  "step growth — +178 MiB at t+32 min (771 → 969 MiB), flat on both sides");

	v.kind = VT_VERDICT_SETTLING;
	v.slope = NAN;
	v.need_more_s = 25 * 60;     /* the analysis rounds up to what the words say (vt_span_ceil) */
	CHECK_STR(vt_soak_headline(&v, buf, sizeof(buf)), "still settling — soak at least 25 min more");

	v.kind = VT_VERDICT_CANNOT_TELL;
	v.samples = 12;
	v.t0 = 0;
	v.t1 = 240;
	v.need_more_s = 16 * 60;
	CHECK_STR(vt_soak_headline(&v, buf, sizeof(buf)),
		  "cannot tell yet — 12 samples over 4 min; soak at least 16 min more");
	v.samples = 0;
	v.need_more_s = NAN;
	CHECK_STR(vt_soak_headline(&v, buf, sizeof(buf)), "cannot tell yet — no samples");

	v.kind = VT_VERDICT_PLATEAU;
	v.settled = true;
	v.settle_s = 41 * 60;
	v.tolerance = 12 * MiB;
	v.settled_median = 1458 * MiB;
	v.settled_lo = 1402 * MiB;
	v.settled_hi = 1491 * MiB;
	CHECK_STR(vt_soak_headline(&v, buf, sizeof(buf)),
		  "plateau — settled after 41 min; 1458 MiB (oscillating 1402–1491 MiB)");
	/* the headline and the why agree on when it settled: the analysis's reason decides */
	v.settle_s = 0.99;
	v.reason = VT_SOAK_WHY_SETTLED_AFTER;
	CHECK(strstr(vt_soak_headline(&v, buf, sizeof(buf)), "settled after 1 s") != NULL);
	v.reason = VT_SOAK_WHY_FLAT_FROM_START;
	CHECK(strstr(vt_soak_headline(&v, buf, sizeof(buf)), "flat from the start") != NULL);
	v.settle_s = 41 * 60;
	v.reason = VT_SOAK_WHY_NONE;
}

/* Every reason words its sentence; unknown figures read n/a, never nan. */
static void test_soak_render__why(void)
{
	struct vt_soak_verdict v;
	char buf[VT_SOAK_WHY_MAX];
	int k;

	memset(&v, 0, sizeof(v));
	v.metric = VT_M_COMMITTED;
	CHECK_STR(vt_soak_why(&v, buf, sizeof(buf)), "");
	v.reason = VT_SOAK_WHY_TOO_FEW;
	v.judged_samples = 10;
	v.judged_span_s = 9;
	v.min_samples = 20;
	v.min_span_s = 20;
	v.need_more_s = 11;
	CHECK_STR(vt_soak_why(&v, buf, sizeof(buf)),
		  "only 10 committed samples over 9 s: a verdict needs 20 samples over 20 s; "
		  "soak at least 11 s more");

	v.reason = VT_SOAK_WHY_LEAK;
	v.slope = 0.5 * MiB;
	v.slope_lo = 0.49 * MiB;
	v.slope_hi = 0.51 * MiB;
	v.slope_window_s = 36;
	v.q[0].floor = 100 * MiB;
	v.q[3].floor = 118 * MiB;
	CHECK_STR(vt_soak_why(&v, buf, sizeof(buf)),
		  "floor rose 18.0 MiB over 36 s (0.50 MiB/s ± 0.01), steadily: q1 floor 100 MiB, "
		  "q4 floor 118 MiB");
	v.slope_window_s = 3 * 3600;            /* a long window: per hour */
	v.slope = v.slope_lo = v.slope_hi = 1.84 * MiB / 3600;
	v.q[3].floor = NAN;                     /* a quarter lost to a gap: no floors said */
	CHECK_STR(vt_soak_why(&v, buf, sizeof(buf)),
		  "floor rose 5.52 MiB over 3.0 h (1.84 MiB/h ± 0.00), steadily");

	v.metric = VT_M_ARENAS;                 /* a count: no MiB */
	v.reason = VT_SOAK_WHY_STEP;
	v.step_t = 100;
	v.step_bytes = 3;
	v.step_before = 5;
	v.step_after = 8;
	CHECK_STR(vt_soak_why(&v, buf, sizeof(buf)),
		  "floor stepped up 3 at 100 s (from 5 to 8) and was flat before and after");

	/* every reason says something, with every figure unknown */
	v.metric = VT_M_COMMITTED;
	v.min_span_s = v.judged_span_s = v.need_more_s = v.step_t = v.step_bytes = NAN;
	v.step_before = v.step_after = v.slope = v.slope_lo = v.slope_hi = v.slope_window_s = NAN;
	v.settle_s = v.settled_lo = v.settled_hi = v.settled_median = v.settled_window_s = NAN;
	v.rate_first_half_per_s = v.rate_last_half_per_s = v.steady_s = v.drift_not_ruled_out = NAN;
	v.tolerance = v.noise = v.q[0].floor = v.q[3].floor = NAN;
	for (k = VT_SOAK_WHY_NOT_RECORDED; k <= VT_SOAK_WHY_NO_STEADY_TREND; k++) {
		v.reason = (enum vt_soak_reason)k;
		vt_soak_why(&v, buf, sizeof(buf));
		CHECK(buf[0] != '\0' && !has_nan_token(buf));
	}
}

static void test_soak_render__units(void)
{
	char b[32];
	double x;

	CHECK_STR(vt_fmt_size(NAN, b, sizeof(b)), "n/a");
	CHECK_STR(vt_fmt_size(512, b, sizeof(b)), "512 B");
	CHECK_STR(vt_fmt_size(104 * 1024, b, sizeof(b)), "104 KiB");
	CHECK_STR(vt_fmt_size(44.3 * MiB, b, sizeof(b)), "44.3 MiB");
	CHECK_STR(vt_fmt_size(1458 * MiB, b, sizeof(b)), "1458 MiB");
	CHECK_STR(vt_fmt_size(12.3 * 1024 * MiB, b, sizeof(b)), "12.3 GiB");
	CHECK_STR(vt_fmt_size_delta_like(-847 * MiB, 1458 * MiB, b, sizeof(b)), "-847 MiB");
	CHECK_STR(vt_fmt_size_delta_like(0.2 * MiB, 44.3 * MiB, b, sizeof(b)), "+0.20 MiB");
	CHECK_STR(vt_fmt_size_delta_like(0, 1402 * MiB, b, sizeof(b)), "+0 MiB");
	CHECK_STR(vt_fmt_size_delta_like(5 * MiB, 12.0 * 1024 * MiB, b, sizeof(b)), "+5.00 MiB");
	CHECK_STR(vt_fmt_size_delta_like(410 * 1024, NAN, b, sizeof(b)), "+410 KiB");
	CHECK_STR(vt_fmt_size_delta(-1.5 * MiB, b, sizeof(b)), "-1.50 MiB");
	CHECK_STR(vt_fmt_span(41, b, sizeof(b)), "41 s");
	CHECK_STR(vt_fmt_span(12 * 60, b, sizeof(b)), "12 min");
	CHECK_STR(vt_fmt_span(3.4 * 3600, b, sizeof(b)), "3.4 h");
	CHECK_STR(vt_fmt_span(NAN, b, sizeof(b)), "n/a");
	/* a progress line's two figures in one unit: not "2 min elapsed, 118 s left" */
	CHECK_STR(vt_fmt_span_like(120, 238, b, sizeof(b)), "2.0 min");
	CHECK_STR(vt_fmt_span_like(118, 238, b, sizeof(b)), "2.0 min");
	CHECK_STR(vt_fmt_span_like(30, 3600, b, sizeof(b)), "0 min");
	CHECK_STR(vt_fmt_span_like(30, 60, b, sizeof(b)), "30 s");
	CHECK_STR(vt_fmt_span_like(1800, 4 * 3600, b, sizeof(b)), "0.5 h");
	CHECK_STR(vt_fmt_span(vt_span_ceil(123), b, sizeof(b)), "2.1 min");   /* not "2 min": at least */
	CHECK_STR(vt_fmt_span(vt_span_ceil(606), b, sizeof(b)), "11 min");
	CHECK_STR(vt_fmt_span(vt_span_ceil(7.5), b, sizeof(b)), "8 s");
	CHECK_STR(vt_fmt_span(vt_span_ceil(0.25), b, sizeof(b)), "1 s");
	CHECK_STR(vt_fmt_span(vt_span_ceil(2.01 * 3600), b, sizeof(b)), "2.1 h");
	CHECK(isnan(vt_span_ceil(NAN)) && vt_span_ceil(0) == 0 && vt_span_ceil(126) == 126);
	/* rounded up to what the words say exactly, by less than one step of them (at most a tenth) */
	for (x = 0.1; x < 30 * 86400; x *= 1.013) {
		double c = vt_span_ceil(x), said;
		char unit[8];

		vt_fmt_span(c, b, sizeof(b));
		CHECK(sscanf(b, "%lf %7s", &said, unit) == 2);
		said *= !strcmp(unit, "min") ? 60 : !strcmp(unit, "h") ? 3600 : !strcmp(unit, "d") ? 86400 : 1;
		if (!(c >= x && fabs(said - c) < 1e-6 * c && c - x <= fmax(1, c / 10))) {
			printf("#   %.3f s: rounded to %.3f, said \"%s\"\n", x, c, b);
			CHECK(!"vt_span_ceil");
			break;
		}
	}
	CHECK_STR(vt_fmt_utc(WALL0, true, b, sizeof(b)), "2026-09-06T17:37:08Z");
	CHECK_STR(vt_fmt_metric(VT_M_ARENAS, 5, b, sizeof(b)), "5");
}

/* ---- analyze: JSON -------------------------------------------------------- */

static void test_soak_render__json(void)
{
	struct vt_series s;
	struct vt_soak_verdict v;
	struct vt_analyze_report r = { "run.db", &s, &v, true, 0 };
	json_error_t err;
	json_t *root, *verdict, *q, *th;
	char *out;
	int rc;

	build_series(&s, 200, 60);
	add_events_threads(&s, 3, 2);
	plateau_verdict(&s, &v);
	out = render_analyze(vt_render_analyze_json, &r, &rc);
	CHECK(rc == 0);
	CHECK(strstr(out, "nan") == NULL && strstr(out, "NaN") == NULL && strstr(out, "inf") == NULL);
	root = json_loads(out, 0, &err);
	CHECK(root != NULL);
	if (!root) {
		printf("#   %s\n", err.text);
		free(out);
		vt_series_free(&s);
		return;
	}
	CHECK_STR(json_string_value(json_object_get(root, "schema")), "vitals.analyze");
	CHECK_STR(json_string_value(json_object_get(json_object_get(root, "recording"), "target")), EVIL);
	CHECK_STR(json_string_value(json_object_get(json_object_get(root, "recording"), "started_wall")),
		  "2026-09-06T17:37:08Z");
	CHECK(json_is_null(json_object_get(json_object_get(root, "recording"), "env")));
	verdict = json_object_get(root, "verdict");
	CHECK_STR(json_string_value(json_object_get(verdict, "kind")), "plateau");
	CHECK_STR(json_string_value(json_object_get(verdict, "name")), "plateau");
	CHECK(json_is_true(json_object_get(json_object_get(verdict, "span"), "running")));
	CHECK(json_is_null(json_object_get(verdict, "step")));
	CHECK_STR(json_string_value(json_object_get(verdict, "why")),
		  "settled after 41 min at 1458 MiB (1402 to 1491 MiB); over the last 2.6 h the floor moved "
		  "+0.05 MiB, within the tolerance of 12.0 MiB");
	CHECK(json_is_null(json_object_get(verdict, "need_more_s")));
	CHECK(json_is_null(json_object_get(json_object_get(verdict, "slope"), "lo")));
	CHECK(json_is_real(json_object_get(json_object_get(verdict, "slope"), "bytes_per_s")));
	CHECK_EQ_I64(json_integer_value(json_object_get(verdict, "floor_drift_bytes")), (int64_t)(0.4 * MiB));
	CHECK_EQ_I64(json_integer_value(json_object_get(json_object_get(verdict, "settled"), "median_bytes")),
		     (int64_t)(1458 * MiB));
	q = json_object_get(verdict, "quarters");
	CHECK_EQ_U64(json_array_size(q), 4);
	CHECK(json_is_null(json_object_get(json_array_get(q, 2), "peak_bytes")));
	CHECK(json_is_integer(json_object_get(json_array_get(q, 2), "floor_bytes")));
	CHECK(json_is_true(json_object_get(json_object_get(verdict, "swap"), "seen")));
	th = json_object_get(root, "threads");
	CHECK_EQ_U64(json_array_size(th), 3);
	CHECK_STR(json_string_value(json_object_get(json_array_get(th, 1), "name")), "w\xef\xbf\xbd" "1");
	CHECK_EQ_U64(json_array_size(json_object_get(root, "events")), 3);
	CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(root, "events"), 1), "kind")),
		  "error");
	json_decref(root);
	free(out);
	vt_series_free(&s);
}

/* ---- CSV ------------------------------------------------------------------ */

static void test_soak_render__series_csv(void)
{
	struct vt_series s;
	const char *p;
	char *out = NULL;
	size_t len = 0, rows = 0;
	FILE *f;
	int rc, cols;

	build_series(&s, 50, 5);
	f = open_memstream(&out, &len);
	rc = vt_render_series_csv(f, &s);
	fclose(f);
	CHECK(rc == 0);
#define CSV_HEAD "t_s,wall,pid,incarnation,samples,committed_mean,committed_lo,committed_hi,rss_anon_mean,"
	CHECK(!strncmp(out, CSV_HEAD, strlen(CSV_HEAD)));
	p = out;
	cols = csv_record(&p);
	CHECK_EQ_I64(cols, 5 + 3 * 9);
	while (*p) {
		CHECK_EQ_I64(csv_record(&p), cols);
		rows++;
	}
	CHECK_EQ_U64(rows, 50);
	CHECK(strstr(out, "\n0.000,2026-09-06T17:37:08Z,4242,0,1,1528823808,") != NULL);
	/* point 10 has no heap_live: three empty cells, not zeros */
	p = strstr(out, "\n50.000,");
	CHECK(p && strstr(p, ",,,") && strstr(p, ",,,") < strchr(p + 1, '\n'));
	CHECK(!has_nan_token(out));
	free(out);
	vt_series_free(&s);
}

/* ---- HTML ----------------------------------------------------------------- */

static void test_soak_render__html(void)
{
	struct vt_series s;
	struct vt_soak_verdict v;
	struct vt_analyze_report r = { "a&b.db", &s, &v, true, 0 };
	char *out;
	int rc;

	build_series(&s, 200, 60);
	add_events_threads(&s, 3, 2);
	plateau_verdict(&s, &v);
	v.step_t = 32 * 60;
	v.step_bytes = 178 * MiB;
	out = render_analyze(vt_render_analyze_html, &r, &rc);
	CHECK(rc == 0);
	CHECK(!strncmp(out, "<!DOCTYPE html>", 15));
	CHECK(strstr(out, "</html>\n") != NULL);
	CHECK_EQ_U64(count_str(out, "<svg"), 5);   /* committed, anon+swap, heap, arenas, CPU */
	CHECK_EQ_U64(count_str(out, "</svg>"), 5);
	/* nothing fetched: the only URL is the SVG namespace */
	CHECK_EQ_U64(count_str(out, "http"), count_str(out, "xmlns=\"http://www.w3.org/2000/svg\""));
	CHECK(strstr(out, "<script") == NULL && strstr(out, "src=") == NULL && strstr(out, "@import") == NULL);
	CHECK(strstr(out, "&lt;script&gt;alert(1)&lt;/script&gt;") != NULL);
	CHECK(strstr(out, "a&amp;b.db") != NULL);
	CHECK(strstr(out, "smaps &lt;b&gt;unreadable&lt;/b&gt; \xef\xbf\xbd") != NULL);
	CHECK(strstr(out, "<b>unreadable") == NULL);
	CHECK(strstr(out, "verdict: plateau — settled after 41 min") != NULL);
	CHECK(strstr(out, "<p>settled after 41 min at 1458 MiB (1402 to 1491 MiB); over the last 2.6 h") != NULL);
	CHECK(strstr(out, "settled window") != NULL);
	CHECK(strstr(out, "step +178 MiB at t+32 min") != NULL);
	CHECK(strstr(out, "floor trend") != NULL && strstr(out, "stroke-dasharray") != NULL);
	CHECK(strstr(out, " MiB</text>") != NULL && strstr(out, " min</text>") != NULL);
	CHECK(!has_nan_token(out));
	free(out);
	vt_series_free(&s);
}

/*
 * The thread table of analyze --html, laid out by a browser at 1280 px: ten
 * columns of states, kernel functions and system calls as a busy server's
 * threads have them.  No cell may wrap onto a second line (they wrapped in
 * the page's 1000 px: "R 3% S 97%" over two lines, "futex_wait_queue_me"
 * cut at its underscores); the table scrolls sideways in its box instead,
 * and a long list of short-lived names is cut with its whole text in the
 * tooltip.  A script added after the page counts, for every cell of that
 * table, the lines its text takes.
 */
static void test_soak_render__html_thread_table_does_not_wrap(void)
{
	static const char *const wchans[] = { "futex_wait_queue_me", "do_epoll_wait", "inet_csk_accept",
					      "hrtimer_nanosleep" };
	static const char *const calls[] = { "futex", "epoll_wait", "accept4", "clock_nanosleep" };
	const char *browser = vt_test_browser();
	struct vt_series s;
	struct vt_soak_verdict v;
	struct vt_analyze_report r = { "threads.db", &s, &v, true, 0 };
	struct vt_thread_run th;
	struct vt_event ev = { 0 };
	char dir[64], path[128], url[160], *out, *dom, *p;
	size_t i;
	FILE *f;
	int rc;

	if (!browser) {
		printf("# skip: no chromium (apt-get install chromium) or VT_NO_BROWSER set\n");
		return;
	}
	build_series(&s, 200, 60);
	ev.kind = VT_EV_START;
	ev.wall = WALL0;
	ev.pid = 4242;
	vt_series_add_event(&s, &ev);
	for (i = 0; i < 12; i++) {
		memset(&th, 0, sizeof(th));
		th.pid = 4242;
		th.tid = 4242 + (pid_t)i;
		snprintf(th.name, sizeof(th.name), "tokio-rt-work%zu", i);
		th.t_first = 0;
		th.t_last = i == 11 ? 90 : 3600;     /* one short-lived thread */
		th.delta[VT_TC_CPU_NS] = (uint64_t)(3600e9 * 0.01 * (double)(i + 1));
		th.delta[VT_TC_WAIT_NS] = (uint64_t)(3600e9 * 0.013);
		th.delta[VT_TC_VCSW] = 3600 * 1234;
		th.delta[VT_TC_NVCSW] = 3600 * 56;
		th.doing.seen = 3600;
		th.doing.n_r = 108;
		th.doing.n_s = 3420;
		th.doing.n_d = 36;
		snprintf(th.doing.wchan, sizeof(th.doing.wchan), "%s", wchans[i % 4]);
		th.doing.wchan_n = 3000;
		snprintf(th.doing.syscall, sizeof(th.doing.syscall), "%s", calls[i % 4]);
		th.doing.syscall_n = 3000;
		vt_series_add_thread(&s, &th);
	}
	plateau_verdict(&s, &v);
	out = render_analyze(vt_render_analyze_html, &r, &rc);
	CHECK(rc == 0 && out != NULL);
	snprintf(dir, sizeof(dir), "/tmp/vt-soak-render-XXXXXX");
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/analyze.html", dir);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f && out) {
		fputs(out, f);
		/* the thread table is the first table after its heading */
		fputs("<script>(function () {\n"
		      "  var h = [].filter.call(document.querySelectorAll('h2'), function (e) {\n"
		      "    return e.textContent.indexOf('threads by CPU') === 0; })[0], t = null, e, cells = 0, wrapped = 0;\n"
		      "  for (e = h && h.nextElementSibling; e && !t; e = e.nextElementSibling)\n"
		      "    t = e.tagName === 'TABLE' ? e : e.querySelector('table');\n"
		      "  if (t) [].forEach.call(t.querySelectorAll('td'), function (c) {\n"
		      "    var rg = document.createRange(), tops = {};\n"
		      "    rg.selectNodeContents(c);\n"
		      "    [].forEach.call(rg.getClientRects(), function (q) { if (q.height > 0) tops[Math.round(q.top)] = 1; });\n"
		      "    cells++; if (Object.keys(tops).length > 1) wrapped++; });\n"
		      "  document.body.setAttribute('data-cells', cells);\n"
		      "  document.body.setAttribute('data-wrapped', wrapped);\n"
		      "})();</script>\n", f);
		fclose(f);
	}
	free(out);
	snprintf(url, sizeof(url), "file://%s", path);
	dom = vt_test_dump_dom(browser, dir, url, 1280);
	CHECK(dom != NULL);
	if (dom) {
		p = strstr(dom, "data-cells=\"");
		CHECK(p != NULL && atoi(p + 12) >= 100);
		p = strstr(dom, "data-wrapped=\"");
		CHECK(p != NULL && atoi(p + 14) == 0);
		if (p && atoi(p + 14) != 0)
			printf("# %d cells of the thread table wrap\n", atoi(p + 14));
	}
	free(dom);
	CHECK(vt_test_scratch_end(dir, path) == 0);
	vt_series_free(&s);
}

/* 20,000 points squeeze to about 1,000 vertices and a one-point spike survives. */
static void test_soak_render__svg_downsample_keeps_spike(void)
{
	enum { N = 20000 };
	static double x[N], y[N];
	struct vt_chart_line line = { "spiky", "#000", x, y, NULL, NULL, N, false };
	struct vt_chart c;
	char *out = NULL, *d;
	size_t len = 0, i, vertices = 0;
	FILE *f;

	for (i = 0; i < N; i++) {
		x[i] = (double)i;
		y[i] = 0;
	}
	y[12345] = 100;
	y[777] = NAN;                 /* a break */
	memset(&c, 0, sizeof(c));
	c.id = "t";
	c.title = "t";
	c.y_unit = VT_CHART_COUNT;
	c.x_min = c.x_max = NAN;
	c.lines = &line;
	c.nlines = 1;
	f = open_memstream(&out, &len);
	CHECK(vt_svg_chart(f, &c) == 0);
	fclose(f);
	d = strstr(out, "<path d=\"");
	CHECK(d != NULL);
	if (d) {
		char *end = strchr(d + 9, '"');
		*end = '\0';
		vertices = count_str(d, " L") + count_str(d, " M");
		CHECK(vertices >= 500 && vertices <= 1004);
		CHECK_EQ_U64(count_str(d, " M"), 2);          /* broken once at the NAN */
		/* the spike reaches the top of the plot (y = 44.0 px) */
		CHECK(strstr(d, " 44.0") != NULL);
	}
	free(out);
}

static void test_soak_render__sparkline(void)
{
	double v[200], flat[5] = { 3, 3, 3, 3, 3 }, gap[4] = { 1, NAN, 2, 3 };
	double wobble[6] = { 12.06, 12.1, 12.14, 12.08, 12.12, 12.1 };
	char buf[256];
	size_t i, n;

	for (i = 0; i < 200; i++)
		v[i] = (double)i;
	n = vt_sparkline(buf, sizeof(buf), v, 200, 60, true, 0);
	CHECK_EQ_U64(n, 60);
	CHECK_EQ_U64(strlen(buf), 180);
	CHECK(!strncmp(buf, "▁", 3) && !strcmp(buf + 177, "█"));
	n = vt_sparkline(buf, sizeof(buf), v, 200, 60, false, 0);
	CHECK_EQ_U64(n, 60);
	CHECK_EQ_U64(strlen(buf), 60);
	CHECK(buf[0] == '.' && buf[59] == '@');
	CHECK(strspn(buf, ".:-=+*#%@") == 60);
	/* fewer values than cells: one cell each */
	CHECK_EQ_U64(vt_sparkline(buf, sizeof(buf), v, 10, 60, false, 0), 10);
	/* a constant is a line along the floor (a constant 0 B of swap is not at mid-height) */
	vt_sparkline(buf, sizeof(buf), flat, 5, 60, false, 0);
	CHECK_STR(buf, ".....");
	vt_sparkline(buf, sizeof(buf), flat, 5, 60, true, 0);
	CHECK_STR(buf, "▁▁▁▁▁");
	/* moving less than the resolution (12.06..12.14 MiB all print 12.1 MiB) is flat too */
	vt_sparkline(buf, sizeof(buf), wobble, 6, 60, true, 0.1);
	CHECK_STR(buf, "▁▁▁▁▁▁");
	vt_sparkline(buf, sizeof(buf), wobble, 6, 60, true, 0);
	CHECK(strcmp(buf, "▁▁▁▁▁▁") != 0);
	vt_sparkline(buf, sizeof(buf), gap, 4, 60, false, 0);
	CHECK_STR(buf, ". +@");
	/* a small buffer limits the cells, never overflows */
	CHECK_EQ_U64(vt_sparkline(buf, 10, v, 200, 60, true, 0), 3);
	CHECK_EQ_U64(strlen(buf), 9);
	CHECK_EQ_U64(vt_sparkline(buf, sizeof(buf), v, 0, 60, true, 0), 0);
	CHECK_STR(buf, "");
}


/* ---- edge cases and the analysis itself ----------------------------------- */

/* Every analyze view of (s, v): rc 0, JSON that parses, never a printed NAN. */
static void all_views_clean(const struct vt_series *s, const struct vt_soak_verdict *v)
{
	struct vt_analyze_report r = { "x.db", s, v, false, 3 };
	analyze_fn fns[] = { vt_render_analyze_text, vt_render_analyze_json, vt_render_analyze_html };
	char *out = NULL;
	size_t len = 0, i;
	json_t *root;
	FILE *f;
	int rc;

	for (i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		out = render_analyze(fns[i], &r, &rc);
		CHECK(rc == 0);
		CHECK(out && !has_nan_token(out));
		if (fns[i] == vt_render_analyze_json) {
			root = json_loads(out, 0, NULL);
			CHECK(root != NULL);
			json_decref(root);
		}
		free(out);
	}
	f = open_memstream(&out, &len);
	CHECK(vt_render_series_csv(f, s) == 0);
	fclose(f);
	CHECK(!has_nan_token(out));
	free(out);
}

static void test_soak_render__empty_series(void)
{
	struct vt_series s;
	struct vt_soak_verdict v;

	vt_series_init(&s);
	memset(&v, 0, sizeof(v));
	v.kind = VT_VERDICT_CANNOT_TELL;
	v.metric = VT_M_COMMITTED;
	v.noise = v.tolerance = v.floor_drift = v.slope = v.slope_lo = v.slope_hi = NAN;
	v.step_t = v.need_more_s = v.cpu_cores = v.cpu_user_cores = v.cpu_sys_cores = NAN;
	v.slope_window_t0 = v.swap.anon_range_lo = v.swap.anon_range_hi = NAN;
	v.reason = VT_SOAK_WHY_NOT_RECORDED;
	v.min_span_s = v.judged_span_s = v.settled_window_s = v.slope_window_s = NAN;
	v.rate_first_half_per_s = v.rate_last_half_per_s = v.steady_s = v.drift_not_ruled_out = NAN;
	all_views_clean(&s, &v);
	vt_series_free(&s);
}

/* A restart and a gap: the charts break there and mark the restart; a step is marked. */
static void test_soak_render__restart_gap_step(void)
{
	struct vt_series s;
	struct vt_soak_verdict v;
	struct vt_analyze_report r = { "x.db", &s, &v, true, 0 };
	struct vt_event ev = { 0 };
	char *out, *svg, *end;
	size_t i;
	int rc;

	build_series(&s, 120, 30);
	for (i = 0; i < s.n; i++) {
		if (i >= 40) {
			s.incarnation[i] = 1;
			s.pid[i] = 5151;
		}
		if (i >= 80) {                        /* 20 minutes without samples */
			s.t[i] = s.t0[i] = s.t1[i] = s.t[i] + 1200;
			s.wall[i] += 1200;
		}
		if (i >= 100)                         /* a step of 178 MiB */
			set(&s, VT_M_COMMITTED, i, s.m[VT_M_COMMITTED][i].mean + 178 * MiB);
	}
	ev.kind = VT_EV_RESTART;
	ev.t = s.t0[40];
	ev.wall = s.wall[40];
	ev.pid = 5151;
	snprintf(ev.detail, sizeof(ev.detail), "new pid after exit");
	vt_series_add_event(&s, &ev);
	plateau_verdict(&s, &v);
	v.kind = VT_VERDICT_STEP;
	v.from = 40;
	v.restarts = 1;
	v.gaps = 1;
	v.running = false;
	v.t0 = s.t0[40];
	v.settled = false;
	v.step_t = s.t[100];
	v.step_bytes = 178 * MiB;
	v.step_before = 1458 * MiB;
	v.step_after = 1636 * MiB;
	all_views_clean(&s, &v);

	out = render_analyze(vt_render_analyze_text, &r, &rc);
	CHECK(strstr(out, "verdict: step growth — +178 MiB at t+") != NULL);
	CHECK(strstr(out, "(1458 → 1636 MiB), flat on both sides") != NULL);
	CHECK(strstr(out, "restarts   1 before the span · gaps 1 inside it") != NULL);
	CHECK(strstr(out, "pid 5151") != NULL && strstr(out, "status     finished") != NULL);
	CHECK(strstr(out, "events (1: 1 restart, 0 gaps, 0 errors)") != NULL);
	free(out);

	out = render_analyze(vt_render_analyze_html, &r, &rc);
	CHECK(rc == 0);
	svg = strstr(out, "<svg");
	CHECK(svg != NULL);
	if (svg) {
		end = strstr(svg, "</svg>");
		*end = '\0';
		CHECK(strstr(svg, ">restart</text>") != NULL);
		CHECK(strstr(svg, ">step +178 MiB at t+") != NULL);
		/* the committed line: three pieces (first process, second before and after the gap) */
		svg = strstr(svg, "stroke-width=\"1.6\"");
		CHECK(svg != NULL);
		if (svg) {
			while (svg > out && strncmp(svg, "<path d=\"", 9))
				svg--;
			*strstr(svg, "\" fill=") = '\0';
			CHECK_EQ_U64(count_str(svg, " M"), 3);
		}
	}
	free(out);
	vt_series_free(&s);
}

/* What vt_soak_analyze says about a series renders in every view. */
static void test_soak_render__from_the_analysis(void)
{
	struct vt_series s;
	struct vt_soak_verdict v;
	struct vt_soak_opts o;
	struct vt_analyze_report r = { "x.db", &s, &v, true, 0 };
	char *out, line[640];
	int rc;

	build_series(&s, 400, 30);
	add_events_threads(&s, 4, 1);
	vt_soak_opts_default(&o);
	CHECK(vt_soak_analyze(&s, &o, &v) == 0);
	all_views_clean(&s, &v);
	out = render_analyze(vt_render_analyze_text, &r, &rc);
	snprintf(line, sizeof(line), "verdict: %s", vt_soak_headline(&v, (char[640]){ 0 }, 640));
	CHECK(strstr(out, line) != NULL);
	CHECK(strstr(out, "  q4 ") != NULL);
	free(out);
	vt_series_free(&s);
}

/* ---- compare -------------------------------------------------------------- */

struct ab {
	struct vt_series s[2];
	struct vt_cmp_arm arms[2];
	struct vt_cmp_diff diff[2][VT_M_COUNT];
	struct vt_comparison cmp;
};

/* Rows of the A/B table: the metrics flagged for it. */
static size_t compare_rows(void)
{
	size_t n = 0;
	int m;

	for (m = 0; m < VT_M_COUNT; m++)
		n += (vt_metrics[m].flags & VT_MF_COMPARE) != 0;
	return n;
}

/* The row of a vitals.compare document's fields array with that key. */
static json_t *field_of(json_t *fields, const char *key)
{
	size_t i;

	for (i = 0; i < json_array_size(fields); i++)
		if (!strcmp(json_string_value(json_object_get(json_array_get(fields, i), "key")), key))
			return json_array_get(fields, i);
	return NULL;
}

static void cellv(struct vt_cmp_cell *c, double med, double lo, double hi, double noise)
{
	*c = (struct vt_cmp_cell){ true, med, lo, hi, noise };
}

/* The report's A/B: default arenas against MALLOC_ARENA_MAX=2. */
static void build_ab(struct ab *ab)
{
	int f;

	memset(ab, 0, sizeof(*ab));
	build_series(&ab->s[0], 78, 60);
	build_series(&ab->s[1], 205, 60);
	snprintf(ab->s[1].info.arm, sizeof(ab->s[1].info.arm), "cap2");
	snprintf(ab->s[1].info.env, sizeof(ab->s[1].info.env), "MALLOC_ARENA_MAX=2");
	ab->arms[0].name = "default";
	ab->arms[0].series = &ab->s[0];
	plateau_verdict(&ab->s[0], &ab->arms[0].verdict);
	ab->arms[0].window_settled = false;
	ab->arms[0].window_t0 = 39 * 60;
	ab->arms[0].window_t1 = 78 * 60;
	ab->arms[0].window_samples = 14;
	ab->arms[1].name = "cap2";
	ab->arms[1].series = &ab->s[1];
	plateau_verdict(&ab->s[1], &ab->arms[1].verdict);
	ab->arms[1].window_settled = true;
	ab->arms[1].window_t0 = 0;
	ab->arms[1].window_t1 = 3.4 * 3600;
	ab->arms[1].window_samples = 43;
	cellv(&ab->arms[0].cell[VT_M_COMMITTED], 1458 * MiB, 1402 * MiB, 1491 * MiB, 4 * MiB);
	cellv(&ab->arms[1].cell[VT_M_COMMITTED], 611 * MiB, 598 * MiB, 624 * MiB, 2 * MiB);
	cellv(&ab->arms[0].cell[VT_M_RSS_ANON], 1122 * MiB, 966 * MiB, 1127 * MiB, 30 * MiB);
	cellv(&ab->arms[1].cell[VT_M_RSS_ANON], 575 * MiB, 570 * MiB, 580 * MiB, 2 * MiB);
	cellv(&ab->arms[0].cell[VT_M_HEAP_LIVE], 44.3 * MiB, 43.9 * MiB, 44.6 * MiB, 0.3 * MiB);
	cellv(&ab->arms[1].cell[VT_M_HEAP_LIVE], 44.5 * MiB, 44.4 * MiB, 44.5 * MiB, 0.1 * MiB);
	cellv(&ab->arms[0].cell[VT_M_REGIONS_64M], 6, 5, 8, 1);
	cellv(&ab->arms[1].cell[VT_M_REGIONS_64M], 1, 1, 1, 0);
	cellv(&ab->arms[0].cell[VT_M_LIVE_FRACTION], 0.0304, 0.0300, 0.0357, 0.001);
	cellv(&ab->arms[1].cell[VT_M_LIVE_FRACTION], 0.0729, 0.0720, 0.0731, 0.0005);
	for (f = 0; f < VT_M_COUNT; f++) {
		const struct vt_cmp_cell *a = &ab->arms[0].cell[f], *b = &ab->arms[1].cell[f];

		ab->diff[1][f].known = a->known && b->known;
		ab->diff[1][f].delta = b->median - a->median;
		ab->diff[1][f].pct = (b->median - a->median) / a->median * 100;
	}
	ab->diff[1][VT_M_HEAP_LIVE].within_noise = true;
	ab->cmp.narms = 2;
	ab->cmp.arms = ab->arms;
	ab->cmp.diff = ab->diff;
}

static void free_ab(struct ab *ab)
{
	vt_series_free(&ab->s[0]);
	vt_series_free(&ab->s[1]);
}

static void test_soak_render__compare_text(void)
{
	static struct ab ab;
	struct vt_compare_report r = { &ab.cmp, "experiment: 2 arms of ./srv", true };
	const char *hdr, *p;
	char *out, row[128];
	long pct_col, rows = 0;
	int rc;

	build_ab(&ab);
	out = render_compare(vt_render_compare_text, &r, &rc);
	CHECK(rc == 0);
	CHECK(!strncmp(out, "experiment: 2 arms of ./srv\n", 28));
	CHECK(strstr(out, "1458 MiB (1402–1491)") != NULL);
	CHECK(strstr(out, "611 MiB (598–624)") != NULL);
	CHECK(strstr(out, "-847 MiB") != NULL && strstr(out, "-58%") != NULL);
	CHECK(strstr(out, "+0.20 MiB") != NULL && strstr(out, "+0.5%") != NULL);
	CHECK(strstr(out, "0.0729 (0.0720–0.0731)") != NULL);
	snprintf(row, sizeof(row), "\n  %s  ", vt_metrics[VT_M_HEAP_LIVE].label);
	p = strstr(out, row);
	CHECK(p && strstr(p + 1, "within noise") && strstr(p + 1, "within noise") < strchr(p + 1, '\n'));
	snprintf(row, sizeof(row), "\n  %s  ", vt_metrics[VT_M_COMMITTED].label);
	p = strstr(out, row);
	CHECK(p && !(strstr(p + 1, "within noise") && strstr(p + 1, "within noise") < strchr(p + 1, '\n')));
	CHECK(strstr(out, "not recorded in any arm: ") != NULL);
	CHECK(strstr(out, "cap2 (MALLOC_ARENA_MAX=2): plateau, settled window 3.4 h, 43 samples") != NULL);
	CHECK(strstr(out, "default: plateau, never settled: last half used (39 min, 14 samples)") != NULL);
	CHECK(!has_nan_token(out));
	/* aligned: the % column ends in the same display column on every row */
	hdr = strstr(out, "default (baseline)");
	CHECK(hdr != NULL);
	if (hdr) {
		while (hdr > out && hdr[-1] != '\n')
			hdr--;
		pct_col = col_of(hdr, "%");
		CHECK(pct_col > 0);
		for (p = next_line(next_line(hdr)); *p && *p != '\n' && strncmp(p, "  each", 6); p = next_line(p)) {
			char c = char_at(p, pct_col);

			CHECK(c == '%' || c == 'a');
			rows++;
		}
		CHECK_EQ_I64(rows, 5);   /* the fields known in some arm */
	}
	free(out);
	free_ab(&ab);
}

static void test_soak_render__compare_json_csv_html(void)
{
	static struct ab ab;
	struct vt_compare_report r = { &ab.cmp, NULL, true };
	json_error_t err;
	json_t *root, *fields, *live;
	const char *p;
	char *out;
	int rc, cols;
	size_t i, rows = 0;

	build_ab(&ab);
	out = render_compare(vt_render_compare_json, &r, &rc);
	CHECK(rc == 0);
	CHECK(strstr(out, "nan") == NULL);
	root = json_loads(out, 0, &err);
	CHECK(root != NULL);
	if (root) {
		CHECK_STR(json_string_value(json_object_get(root, "schema")), "vitals.compare");
		CHECK_EQ_U64(json_array_size(json_object_get(root, "arms")), 2);
		fields = json_object_get(root, "fields");
		CHECK_EQ_U64(json_array_size(fields), compare_rows());
		live = json_array_get(json_object_get(field_of(fields, "heap_live"), "arms"), 1);
		CHECK(json_is_true(json_object_get(live, "within_noise")));
		CHECK(json_is_null(json_object_get(json_array_get(json_object_get(field_of(fields, "heap_live"), "arms"), 0), "delta")));
		CHECK(json_is_null(json_object_get(json_array_get(json_object_get(field_of(fields, "heap_keepcost"), "arms"), 1), "median")));
		CHECK_EQ_I64(json_integer_value(json_object_get(json_array_get(json_object_get(field_of(fields, "committed"), "arms"), 1), "delta")), (int64_t)(-847 * MiB));
		CHECK(json_is_true(json_object_get(json_object_get(json_array_get(json_object_get(root, "arms"), 1),
								   "window"), "settled")));
		CHECK(json_is_false(json_object_get(json_object_get(json_array_get(json_object_get(root, "arms"), 0),
								    "window"), "settled")));
		json_decref(root);
	}
	free(out);

	/* CSV: a name with a comma and a quote stays one cell */
	ab.arms[1].name = "cap \"2\", tuned";
	out = render_compare(vt_render_compare_csv, &r, &rc);
	CHECK(rc == 0);
#define CMP_HEAD "arm,field,unit,median,lo,hi,noise,delta,pct,within_noise\n"
	CHECK(!strncmp(out, CMP_HEAD, strlen(CMP_HEAD)));
	CHECK(strstr(out, "\n\"cap \"\"2\"\", tuned\",committed,bytes,") != NULL);
	p = out;
	cols = csv_record(&p);
	while (*p) {
		CHECK_EQ_I64(csv_record(&p), cols);
		rows++;
	}
	CHECK_EQ_U64(rows, 2 * compare_rows());
	CHECK(strstr(out, "\ndefault,heap_keepcost,bytes,,,,,,,\n") != NULL);
	free(out);

	/* HTML: overlaid arms, escaped names */
	ab.arms[1].name = "<i>cap2</i>";
	out = render_compare(vt_render_compare_html, &r, &rc);
	CHECK(rc == 0);
	CHECK(count_str(out, "<svg") >= 3);
	CHECK(strstr(out, "&lt;i&gt;cap2&lt;/i&gt;") != NULL && strstr(out, "<i>") == NULL);
	CHECK(strstr(out, "within noise") != NULL);
	CHECK_EQ_U64(count_str(out, "http"), count_str(out, "xmlns=\"http://www.w3.org/2000/svg\""));
	for (i = 0; i < 2; i++)
		CHECK(strstr(out, vt_chart_palette[i]) != NULL);
	CHECK(!has_nan_token(out));
	free(out);
	free_ab(&ab);
}


/* ---- one "how much longer" figure in every view ---------------------------- */

/*
 * Every "soak [at least|about] X more" in out: X must read want each time
 * (one figure, one formatter: never "3 more minutes" beside "2.0 min more").
 * Returns how many there were.
 */
static size_t more_figures(const char *text, const char *want, const char *view)
{
	char *out = malloc(strlen(text) + 1), *o = out;
	const char *p, *q, *end;
	size_t n = 0;

	/* a sentence wrapped over lines reads as one: a line break and its indent are a space */
	for (p = text; *p; p++) {
		if (*p == '\n') {
			while (p[1] == ' ')
				p++;
			*o++ = ' ';
		} else {
			*o++ = *p;
		}
	}
	*o = '\0';
	p = out;
	while ((p = strstr(p, "soak "))) {
		p += 5;
		if (!strncmp(p, "at least ", 9))
			p += 9;
		else if (!strncmp(p, "about ", 6))
			p += 6;
		end = strstr(p, " more");
		if (!end || end - p > 24 || !((*p >= '0' && *p <= '9') || *p == 'n'))
			continue;
		for (q = p; q < end && *q != '<' && *q != '"'; q++)
			;
		if (q < end)
			continue;
		n++;
		if ((size_t)(end - p) != strlen(want) || strncmp(p, want, (size_t)(end - p))) {
			printf("#   %s: \"%.*s more\", want \"%s more\"\n", view, (int)(end - p), p, want);
			CHECK(!"every view says the same figure");
		}
	}
	free(out);
	return n;
}

/*
 * One verdict, every view of it (analyze text, JSON, HTML; compare text, JSON,
 * HTML): each says how much longer to soak with the same figure, and the
 * JSON's need_more_s is that figure.  Before, the headline and the "go on"
 * line rounded up to whole minutes ("soak at least 3 more minutes") while the
 * sentence said "soak 2.0 min more" (issue 12 item 6).
 */
static void test_soak_render__one_figure_for_how_much_longer(void)
{
	static const struct { enum vt_verdict_kind kind; enum vt_soak_reason reason; double need; } cases[] = {
		{ VT_VERDICT_SETTLING, VT_SOAK_WHY_LEVELLED_RECENTLY, 123 },
		{ VT_VERDICT_CANNOT_TELL, VT_SOAK_WHY_TOO_NOISY, 606 },
		{ VT_VERDICT_CANNOT_TELL, VT_SOAK_WHY_SLOW_TREND, 126 },
		{ VT_VERDICT_CANNOT_TELL, VT_SOAK_WHY_NO_STEADY_TREND, 7.5 },
		{ VT_VERDICT_CANNOT_TELL, VT_SOAK_WHY_TOO_FEW, 11 },
		{ VT_VERDICT_CANNOT_TELL, VT_SOAK_WHY_STEADY_TOO_SHORT, 19 },
		{ VT_VERDICT_SETTLING, VT_SOAK_WHY_SLOWING, 24.2 * 60 },
		{ VT_VERDICT_SETTLING, VT_SOAK_WHY_FALLING, 3.3 * 3600 },
	};
	analyze_fn afns[] = { vt_render_analyze_text, vt_render_analyze_json, vt_render_analyze_html };
	compare_fn cfns[] = { vt_render_compare_text, vt_render_compare_json, vt_render_compare_html };
	static const char *const aname[] = { "analyze text", "analyze JSON", "analyze HTML" };
	static const char *const cname[] = { "compare text", "compare JSON", "compare HTML" };
	size_t c, i, n;

	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		static struct ab ab;
		struct vt_soak_verdict *v = &ab.arms[1].verdict;
		struct vt_analyze_report r = { "x.db", &ab.s[1], v, true, 0 };
		struct vt_compare_report cr = { &ab.cmp, NULL, true };
		char want[32];
		json_t *root;
		char *out;
		int rc;

		build_ab(&ab);
		v->kind = cases[c].kind;
		v->reason = cases[c].reason;
		v->need_more_s = vt_span_ceil(cases[c].need);   /* as vt_soak_analyze leaves it */
		v->settled = cases[c].reason == VT_SOAK_WHY_LEVELLED_RECENTLY ||
			     cases[c].reason == VT_SOAK_WHY_TOO_NOISY || cases[c].reason == VT_SOAK_WHY_SLOW_TREND;
		v->settled_window_s = 110;
		v->slope = 0.3 * MiB / 3600;
		v->slope_lo = 0.1 * MiB / 3600;
		v->slope_hi = 0.5 * MiB / 3600;
		v->drift_not_ruled_out = 30 * MiB;
		v->rate_first_half_per_s = 2 * MiB;
		v->rate_last_half_per_s = 0.4 * MiB;
		v->steady_s = 15;
		v->judged_samples = 10;
		v->judged_span_s = 9;
		v->min_samples = 20;
		v->min_span_s = 20;
		ab.arms[1].window_settled = false;
		vt_fmt_span(v->need_more_s, want, sizeof(want));
		printf("# %s, %.1f s more: \"%s\"\n", vt_verdict_key(v->kind), v->need_more_s, want);
		for (i = 0; i < 3; i++) {
			out = render_analyze(afns[i], &r, &rc);
			CHECK(rc == 0 && out);
			/* text and HTML: the verdict line, why, and the evidence's "go on"; JSON: headline and why */
			n = more_figures(out, want, aname[i]);
			CHECK(n >= (afns[i] == vt_render_analyze_json ? 2u : 3u));
			if (afns[i] == vt_render_analyze_json) {
				root = json_loads(out, 0, NULL);
				CHECK(root != NULL);
				CHECK(json_number_value(json_object_get(json_object_get(root, "verdict"), "need_more_s")) ==
				      v->need_more_s);
				json_decref(root);
			}
			free(out);
		}
		for (i = 0; i < 3; i++) {
			out = render_compare(cfns[i], &cr, &rc);
			CHECK(rc == 0 && out);
			CHECK(more_figures(out, want, cname[i]) >= 1);
			free(out);
		}
		free_ab(&ab);
	}
}

/* The "settled" line of the evidence (text and HTML views). */
static const char *settled_fact(const struct vt_analyze_report *r)
{
	static struct vt_soak_fact f[VT_SOAK_FACTS_MAX];
	int n = vt_soak_facts(r, f, VT_SOAK_FACTS_MAX), i;

	for (i = 0; i < n; i++)
		if (!strcmp(f[i].label, "settled"))
			return f[i].text;
	return "";
}

/*
 * A settled window under a verdict that is not a plateau: no view calls it
 * settled as a fact, each says what it lacks, and the JSON names it.
 */
static void test_soak_render__settled_window_not_yet_a_plateau(void)
{
	static struct ab ab;
	struct vt_soak_verdict *v = &ab.arms[1].verdict;
	struct vt_analyze_report r = { "x.db", &ab.s[1], v, true, 0 };
	struct vt_compare_report cr = { &ab.cmp, NULL, true };
	json_t *root, *settled;
	char *out, why[VT_SOAK_WHY_MAX];
	int rc;

	build_ab(&ab);
	v->kind = VT_VERDICT_CANNOT_TELL;
	v->reason = VT_SOAK_WHY_SLOW_TREND;
	v->need_more_s = 126;
	v->settle_s = v->settled_t0 = 120;
	v->settled_lo = 235 * MiB;
	v->settled_hi = 236 * MiB;
	v->settled_median = 235.5 * MiB;
	v->settled_window_s = 120;
	v->settled_points = 120;
	v->slope_window_s = 120;
	v->slope = 1.2 * MiB / 120;
	v->slope_lo = 0.2 * MiB / 120;
	v->slope_hi = 6 * MiB / 120;
	v->drift_not_ruled_out = 6 * MiB;
	v->material = 4.7 * MiB;
	v->plateau_window_s = 80;
	v->plateau_points = 10;
	v->plateau_missing = VT_PLATEAU_NEEDS_BOUND;
	ab.arms[1].window_settled = false;

	CHECK_STR(settled_fact(&r), "not yet: flat since t+2 min (235–236 MiB, median 236 MiB), but the slope "
		  "interval allows a drift of 6.00 MiB over 2 min, more than the 4.70 MiB a plateau must rule out");
	out = render_analyze(vt_render_analyze_text, &r, &rc);
	CHECK(rc == 0);
	CHECK(strstr(out, "  settled    not yet: flat since t+2 min") != NULL && strstr(out, "settled    from") == NULL);
	CHECK(strstr(out, "not a plateau yet: the slope interval allows") != NULL);
	CHECK(strstr(out, "RssAnon oscillates 966–1127 MiB since t+2 min") != NULL);
	free(out);
	out = render_analyze(vt_render_analyze_html, &r, &rc);
	CHECK(rc == 0 && strstr(out, "not yet: flat since t+2 min") != NULL);
	free(out);
	out = render_analyze(vt_render_analyze_json, &r, &rc);
	root = json_loads(out, 0, NULL);
	CHECK(rc == 0 && root != NULL);
	settled = json_object_get(json_object_get(root, "verdict"), "settled");
	CHECK(json_is_false(json_object_get(settled, "plateau")));
	CHECK_STR(json_string_value(json_array_get(json_object_get(settled, "missing"), 0)), "bound");
	CHECK_EQ_U64(json_array_size(json_object_get(settled, "missing")), 1);
	CHECK_EQ_I64(json_integer_value(json_object_get(json_object_get(json_object_get(root, "verdict"),
								       "plateau_needs"), "material_bytes")),
		     (int64_t)(4.7 * MiB));
	json_decref(root);
	free(out);
	out = render_compare(vt_render_compare_text, &cr, &rc);
	CHECK(rc == 0 && strstr(out, "cap2 (MALLOC_ARENA_MAX=2): cannot tell yet, flat since t+2 min but not a plateau "
				     "yet: last half used") != NULL);
	free(out);

	/* too short: the window's length against the third of the span it needs */
	v->kind = VT_VERDICT_SETTLING;
	v->reason = VT_SOAK_WHY_LEVELLED_RECENTLY;
	v->settled_window_s = 114;
	v->plateau_window_s = 120;
	v->plateau_missing = VT_PLATEAU_NEEDS_LENGTH;
	CHECK(strstr(settled_fact(&r), ", but a plateau needs a third of the span (2 min), this window is 114 s") != NULL);
	CHECK(strstr(vt_soak_why(v, why, sizeof(why)), "too recently to call a plateau: a plateau needs a third of the "
			  "span (2 min), this window is 114 s; soak at least 2.1 min more") != NULL);
	CHECK(strstr(vt_soak_headline(v, why, sizeof(why)), "rising") == NULL);   /* it levelled off */
	free_ab(&ab);
}

/* What vt_compare says about two recordings renders in every compare view. */
static void test_soak_render__from_the_comparison(void)
{
	struct vt_series a, b;
	const struct vt_series *series[2] = { &a, &b };
	const char *names[2] = { "default", "cap2" };
	struct vt_comparison cmp;
	struct vt_soak_opts o;
	struct vt_compare_report r = { &cmp, NULL, true };
	compare_fn fns[] = { vt_render_compare_text, vt_render_compare_json, vt_render_compare_csv,
			     vt_render_compare_html };
	json_t *root;
	char *out;
	size_t i;
	int rc;

	build_series(&a, 300, 30);
	build_series(&b, 300, 30);
	for (i = 0; i < b.n; i++)
		set(&b, VT_M_COMMITTED, i, 611 * MiB + 2 * MiB * sin((double)i));
	vt_soak_opts_default(&o);
	memset(&cmp, 0, sizeof(cmp));
	CHECK(vt_compare(series, names, 2, &o, &cmp) == 0);
	for (i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		out = render_compare(fns[i], &r, &rc);
		CHECK(rc == 0);
		CHECK(out && !has_nan_token(out));
		if (fns[i] == vt_render_compare_json) {
			root = json_loads(out, 0, NULL);
			CHECK(root != NULL);
			json_decref(root);
		}
		if (fns[i] == vt_render_compare_text)
			CHECK(strstr(out, "default (baseline)") != NULL && strstr(out, "cap2: ") != NULL);
		free(out);
	}
	vt_comparison_free(&cmp);
	vt_series_free(&a);
	vt_series_free(&b);
}

/*
 * A thread may name itself "\033[2J": the text views print such names as
 * '?', in tables and outside them, and keep what is printable (UTF-8 too).
 */
static void test_soak_render__target_text_cannot_drive_the_terminal(void)
{
	struct vt_table t;
	char buf[64], *out = NULL;
	size_t len = 0;
	FILE *f;

	CHECK_STR(vt_text_printable("\033[2Jx\tok", buf, sizeof(buf)), "?[2Jx?ok");
	CHECK_STR(vt_text_printable("a\xc2\x9b" "b\x7f\xff", buf, sizeof(buf)), "a??b??");   /* C1 CSI, DEL, not UTF-8 */
	CHECK_STR(vt_text_printable("worker─µs", buf, sizeof(buf)), "worker─µs");
	vt_table_init(&t, 2);
	vt_table_cell(&t, "%s", "\033[31mevil1");
	vt_table_cell(&t, "%d", 7);
	f = open_memstream(&out, &len);
	vt_table_print(&t, f, 0, false);
	fclose(f);
	CHECK(out && !strchr(out, '\033') && strstr(out, "?[31mevil1") != NULL);
	free(out);
	vt_table_release(&t);
}

/* ---- what the HTML pages show (issue 22) ------------------------------------ */

/*
 * The x and width of the first band rect of colour in out (a shaded
 * stretch: fill-opacity 0.12); false when there is none.
 */
static bool band_rect(const char *out, const char *color, double *x, double *w)
{
	char needle[96];
	const char *p, *r;

	snprintf(needle, sizeof(needle), "fill=\"%s\" fill-opacity=\"0.12\"", color);
	if (!(p = strstr(out, needle)))
		return false;
	for (r = p; r > out && strncmp(r, "<rect ", 6); r--)
		;
	return sscanf(r, "<rect x=\"%lf\" y=\"%*f\" width=\"%lf\"", x, w) == 2;
}

/* The first chart's plot: left 78, 866 wide (960 - 78 - 16); x from 0 to the data's last. */
static double chart_px(double t, double t_max)
{
	return 78 + t / t_max * 866;
}

/*
 * compare --html shades where each arm's analysis calls it settled: cap2's
 * table window runs from 0 (a start-up ramp) while its analysis settled at
 * 41 min; default is flat since t+10 min but not a plateau yet (its table
 * takes the last half), which is not "never settled".
 */
static void test_soak_render__compare_html_shades_the_settled_window(void)
{
	static struct ab ab;
	struct vt_compare_report r = { &ab.cmp, NULL, true };
	double x, w, t_max;
	char *out;
	int rc;

	build_ab(&ab);
	ab.arms[0].verdict.kind = VT_VERDICT_CANNOT_TELL;
	ab.arms[0].verdict.settled_t0 = ab.arms[0].verdict.settle_s = 10 * 60;
	t_max = ab.s[1].t[ab.s[1].n - 1];
	out = render_compare(vt_render_compare_html, &r, &rc);
	CHECK(rc == 0);
	CHECK(strstr(out, "cap2: settled window") != NULL);
	CHECK(strstr(out, "default: flat since t+10 min but not a plateau yet") != NULL);
	CHECK(strstr(out, "never settled") == NULL);
	CHECK(band_rect(out, vt_chart_palette[1], &x, &w));
	CHECK(fabs(x - chart_px(41 * 60, t_max)) < 2);
	CHECK(band_rect(out, vt_chart_palette[0], &x, &w));
	CHECK(fabs(x - chart_px(10 * 60, t_max)) < 2);
	CHECK(fabs(x + w - chart_px(ab.arms[0].verdict.t1, t_max)) < 2);
	free(out);
	free_ab(&ab);
}

/* One <text> of an SVG: where it is drawn (its box estimated from its characters) and what it says. */
struct svg_text {
	double x0, x1, y0, y1;
	char s[160];
};

static size_t svg_texts(const char *svg, struct svg_text *t, size_t max)
{
	const char *p = svg;
	size_t n = 0;

	while (n < max && (p = strstr(p, "<text "))) {
		const char *gt = strchr(p, '>'), *end = gt ? strstr(gt, "</text>") : NULL, *anchor;
		double x, y, w;
		size_t len, chars = 0, i;

		if (!end || sscanf(p, "<text x=\"%lf\" y=\"%lf\"", &x, &y) != 2) {
			p += 6;
			continue;
		}
		len = (size_t)(end - gt - 1) < sizeof(t[n].s) - 1 ? (size_t)(end - gt - 1) : sizeof(t[n].s) - 1;
		memcpy(t[n].s, gt + 1, len);
		t[n].s[len] = '\0';
		for (i = 0; i < len; i++)
			chars += ((unsigned char)t[n].s[i] & 0xc0) != 0x80;
		w = 6.0 * (double)chars;
		anchor = strstr(p, "text-anchor=\"");
		if (anchor && anchor < gt && !strncmp(anchor + 13, "end", 3))
			x -= w;
		else if (anchor && anchor < gt && !strncmp(anchor + 13, "middle", 6))
			x -= w / 2;
		t[n] = (struct svg_text){ x, x + w, y - 9, y + 2, "" };
		memcpy(t[n].s, gt + 1, len);
		t[n].s[len] = '\0';
		n++;
		p = end;
	}
	return n;
}

/*
 * A chart's words never sit on each other nor on its data: long legends
 * wrap inside the chart, the shaded stretches are named in the legend
 * (never inside the plot, where the curves run), and marks a few pixels
 * apart put their labels on rows of their own.
 */
static void test_soak_render__chart_labels_do_not_overlap(void)
{
	static double x[3] = { 0, 500, 1000 }, y[3] = { 1 * MiB, 2 * MiB, 3 * MiB };
	struct vt_chart_line lines[3] = {
		{ "default (MALLOC_ARENA_MAX unset, glibc 2.39, 8 workers)", "#1f77b4", x, y, NULL, NULL, 3, false },
		{ "cap2 (MALLOC_ARENA_MAX=2, glibc 2.39, 8 workers)", "#d62728", x, y, NULL, NULL, 3, false },
		{ "jemalloc (LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2)", "#2ca02c", x, y, NULL, NULL, 3,
		  false },
	};
	struct vt_chart_band bands[3] = {
		{ 100, 1000, "default: settled window", "#1f77b4" },
		{ 100, 1000, "cap2: settled window", "#d62728" },
		{ 120, 1000, "jemalloc: flat since t+2.0 min but not a plateau yet (the table: last half)", "#2ca02c" },
	};
	struct vt_chart_mark marks[3] = {
		{ 400, "restart", "#888" }, { 402, "step +178 MiB at t+6.7 min", "#ff7f0e" }, { 405, "restart", "#888" },
	};
	struct vt_chart c = { .id = "lab", .title = "committed — every arm", .x_title = "time", .y_unit = VT_CHART_BYTES,
			      .x_min = NAN, .x_max = NAN, .lines = lines, .nlines = 3, .bands = bands, .nbands = 3,
			      .marks = marks, .nmarks = 3 };
	struct svg_text t[128];
	double left, top, w, h;
	char *out = NULL;
	size_t len = 0, n, i, j;
	int width = 960;
	const char *plot;
	FILE *f = open_memstream(&out, &len);

	CHECK(f && vt_svg_chart(f, &c) == 0);
	fclose(f);
	plot = strstr(out, "fill=\"none\" stroke=\"#999\"/>");
	CHECK(plot != NULL);
	while (plot && plot > out && strncmp(plot, "<rect ", 6))
		plot--;
	CHECK(plot && sscanf(plot, "<rect x=\"%lf\" y=\"%lf\" width=\"%lf\" height=\"%lf\"", &left, &top, &w, &h) == 4);
	n = svg_texts(out, t, 128);
	CHECK(n > 10);
	for (i = 0; i < n; i++) {
		bool band = strstr(t[i].s, "settled") || strstr(t[i].s, "plateau");
		bool mark = strstr(t[i].s, "restart") || strstr(t[i].s, "step");

		if (t[i].x0 < 0 || t[i].x1 > width)
			printf("# outside the chart: '%s' %.0f..%.0f\n", t[i].s, t[i].x0, t[i].x1);
		CHECK(t[i].x0 >= 0 && t[i].x1 <= width);
		if (band)
			CHECK(t[i].y1 <= top);          /* named above the plot, not on the curves */
		if (mark)
			CHECK(t[i].y0 >= top && t[i].y1 <= top + h);
		for (j = i + 1; j < n; j++) {
			bool apart = t[i].x1 <= t[j].x0 || t[j].x1 <= t[i].x0 || t[i].y1 <= t[j].y0 || t[j].y1 <= t[i].y0;

			if (!apart)
				printf("# overlap: '%s' and '%s'\n", t[i].s, t[j].s);
			CHECK(apart);
		}
	}
	free(out);
}

/* Swap never used: no chart of zeros, a line that says so (compare), a title that says so (analyze). */
static void test_soak_render__no_swap_no_chart_of_zeros(void)
{
	static struct ab ab;
	struct vt_compare_report r = { &ab.cmp, NULL, true };
	struct vt_analyze_report ar = { "run.db", &ab.s[0], &ab.arms[0].verdict, true, 0 };
	char *out, title[128];
	size_t i, k;
	int rc;

	build_ab(&ab);
	for (i = 0; i < 2; i++)
		for (k = 0; k < ab.s[i].n; k++)
			set(&ab.s[i], VT_M_VM_SWAP, k, 0);
	out = render_compare(vt_render_compare_html, &r, &rc);
	CHECK(rc == 0);
	snprintf(title, sizeof(title), "%s — every arm", vt_metrics[VT_M_VM_SWAP].label);
	CHECK(strstr(out, title) == NULL);
	snprintf(title, sizeof(title), "<p>%s: 0 throughout in every arm — no swap.</p>", vt_metrics[VT_M_VM_SWAP].label);
	CHECK(strstr(out, title) != NULL);
	snprintf(title, sizeof(title), "%s — every arm", vt_metrics[VT_M_RSS_ANON].label);
	CHECK(strstr(out, title) != NULL);       /* the others stay */
	free(out);
	out = render_analyze(vt_render_analyze_html, &ar, &rc);
	CHECK(rc == 0);
	CHECK(strstr(out, "RssAnon — resident anonymous memory (VmSwap 0 throughout: no swap)") != NULL);
	CHECK(strstr(out, ">VmSwap</text>") == NULL);
	free(out);
	free_ab(&ab);
}

/*
 * compare --html with profiles: the bucket and function tables the terminal
 * prints, a link to the differential flame graph beside the page, and the
 * warning when the recordings ran different commands.
 */
static void test_soak_render__compare_html_profiles_and_warning(void)
{
	static struct ab ab;
	static struct vt_prof_diff d;
	const char *flames[1] = { "/tmp/out dir/ab #1.flame.html" };
	struct vt_compare_report r = { &ab.cmp, NULL, true, &d, NULL, false, flames };
	char *out;
	int rc;

	build_ab(&ab);
	memset(&d, 0, sizeof(d));
	d.a_profiles = 4;
	d.b_profiles = 3;
	d.a_samples = 1417;
	d.b_samples = 1152;
	d.buckets = calloc(2, sizeof(*d.buckets));
	d.nbuckets = 2;
	snprintf(d.buckets[0].name, sizeof(d.buckets[0].name), "hashing");
	vt_prof_share_of(170, 1417, &d.buckets[0].a);
	vt_prof_share_of(374, 1152, &d.buckets[0].b);
	d.buckets[0].delta = d.buckets[0].b.share - d.buckets[0].a.share;
	d.buckets[0].pm = 0.031;
	d.buckets[0].changed = true;
	snprintf(d.buckets[1].name, sizeof(d.buckets[1].name), "<b>rules</b>");
	d.buckets[1].pm = 0.01;
	d.nfuncs = 1;
	snprintf(d.funcs[0].label, sizeof(d.funcs[0].label), "hash_fnv1a_block");
	snprintf(d.funcs[0].module, sizeof(d.funcs[0].module), "profile_work");
	d.funcs[0].a = 0.119;
	d.funcs[0].b = 0.318;
	d.funcs[0].delta = 0.199;
	d.funcs[0].pm = 0.031;
	d.funcs[0].changed = true;
	snprintf(ab.s[1].info.target, sizeof(ab.s[1].info.target), "-- ./other --port 1");
	ab.cmp.other_command = 1;
	out = render_compare(vt_render_compare_html, &r, &rc);
	CHECK(rc == 0);
	CHECK(strstr(out, "<h2>CPU profiles: cap2 against default</h2>") != NULL);
	CHECK(strstr(out, "<td>hashing</td><td class=\"n\">12.0%</td><td class=\"n\">32.5%</td>") != NULL);
	CHECK(strstr(out, "+20.5 &plusmn;3.1 pt") != NULL);
	CHECK(strstr(out, "&lt;b&gt;rules&lt;/b&gt;") != NULL && strstr(out, "<b>rules") == NULL);
	CHECK(strstr(out, "(within noise)") != NULL);
	CHECK(strstr(out, "<td>hash_fnv1a_block</td><td>profile_work</td>") != NULL);
	CHECK(strstr(out, "<a href=\"ab%20%231.flame.html\">ab #1.flame.html</a>") != NULL);
	CHECK(strstr(out, "the recordings ran different commands") != NULL);
	CHECK(strstr(out, "-- ./other --port 1") != NULL);
	CHECK(!has_nan_token(out));
	free(out);
	/* no profiles: no section */
	d.b_profiles = 0;
	out = render_compare(vt_render_compare_html, &r, &rc);
	CHECK(rc == 0 && strstr(out, "CPU profiles") == NULL);
	free(out);
	free(d.buckets);
	free_ab(&ab);
}

/* analyze --html of a soak with profiles: CPU by bucket over time as a chart, the table and the finding. */
static void test_soak_render__analyze_html_profiles_over_time(void)
{
	static struct vt_prof_trend t;
	static const double rows[3][3] = { { 0.50, 400, 100 }, { 0.52, 380, 120 }, { 0.95, 300, 400 } };
	struct vt_series s;
	struct vt_soak_verdict v;
	struct vt_analyze_report r = { "run.db", &s, &v, true, 0 };
	char *out;
	size_t i;
	int rc;

	build_series(&s, 200, 60);
	plateau_verdict(&s, &v);
	memset(&t, 0, sizeof(t));
	t.nbuckets = 2;
	snprintf(t.bucket_names[0], sizeof(t.bucket_names[0]), "network send/recv");
	snprintf(t.bucket_names[1], sizeof(t.bucket_names[1]), "<i>json</i>");
	t.seen[0] = t.seen[1] = true;
	t.rows = calloc(3, sizeof(*t.rows));
	t.n = 3;
	for (i = 0; i < 3; i++) {
		t.rows[i].at.t = 3000.0 * (double)(i + 1);
		t.rows[i].at.pid = 4242;
		t.rows[i].cores = rows[i][0];
		t.rows[i].cpu_samples = (uint64_t)(rows[i][1] + rows[i][2]);
		vt_prof_share_of((uint64_t)rows[i][1], t.rows[i].cpu_samples, &t.rows[i].share[0]);
		vt_prof_share_of((uint64_t)rows[i][2], t.rows[i].cpu_samples, &t.rows[i].share[1]);
	}
	vt_prof_trend_judge(&t);
	r.profiles = &t;
	out = render_analyze(vt_render_analyze_html, &r, &rc);
	CHECK(rc == 0);
	CHECK(strstr(out, "<h2>CPU by bucket over time (3 profiles)</h2>") != NULL);
	CHECK(strstr(out, "clip-path=\"url(#profiles-plot)\"") != NULL);
	CHECK_EQ_U64(count_str(out, "<svg"), 6);
	CHECK_EQ_U64(count_str(out, "<circle"), 3 * 3);     /* two buckets and the process's CPU at 3 profiles */
	CHECK(strstr(out, "&lt;i&gt;json&lt;/i&gt;") != NULL && strstr(out, "<i>json") == NULL);
	CHECK(strstr(out, "which bucket grew when CPU rose:</b> &lt;i&gt;json&lt;/i&gt;") != NULL);
	CHECK(strstr(out, "lowest and highest CPU") != NULL);
	CHECK(!has_nan_token(out));
	free(out);
	vt_prof_trend_release(&t);
	vt_series_free(&s);
}

VT_TEST_MAIN(test_soak_render__target_text_cannot_drive_the_terminal, test_soak_render__text_plateau, test_soak_render__short_lived_threads, test_soak_render__headlines, test_soak_render__why, test_soak_render__units,
	     test_soak_render__json, test_soak_render__series_csv, test_soak_render__html,
	     test_soak_render__html_thread_table_does_not_wrap,
	     test_soak_render__svg_downsample_keeps_spike, test_soak_render__sparkline,
	     test_soak_render__empty_series, test_soak_render__restart_gap_step,
	     test_soak_render__from_the_analysis, test_soak_render__compare_text,
	     test_soak_render__compare_json_csv_html, test_soak_render__from_the_comparison,
	     test_soak_render__one_figure_for_how_much_longer, test_soak_render__settled_window_not_yet_a_plateau,
	     test_soak_render__compare_html_shades_the_settled_window, test_soak_render__chart_labels_do_not_overlap,
	     test_soak_render__no_swap_no_chart_of_zeros, test_soak_render__compare_html_profiles_and_warning,
	     test_soak_render__analyze_html_profiles_over_time)

/*
 * test_threads.c — schedstat parsing and the rate arithmetic of analyze/rates.c
 * on constructed sample pairs: churn, counters going backwards, unknown
 * counters, too-short intervals, pools and the diagnosis rules.
 */
#include "harness.h"
#include "base/unknown.h"

#include "analyze/diagnose.h"
#include "render/threads.h"
#include "analyze/rates.h"
#include "proc/procfs.h"
#include "proc/schedstat.h"

#include <math.h>

#define NS 1000000000ull

static int near(double a, double b)
{
	return fabs(a - b) < 1e-6;
}

static struct vt_thread_snap th(pid_t tid, const char *comm, char state, uint64_t run_ns,
				uint64_t wait_ns, uint64_t ut, uint64_t st, uint64_t vol, uint64_t nonvol)
{
	struct vt_thread_counts c = { .run_ns = run_ns, .wait_ns = wait_ns, .utime_ticks = ut,
				      .stime_ticks = st, .vcsw = vol, .nvcsw = nonvol };
	struct vt_thread_snap t;

	memset(&t, 0, sizeof(t));
	t.tid = tid;
	snprintf(t.comm, sizeof(t.comm), "%s", comm);
	t.state = state;
	vt_thread_counters_of(&c, 100, t.counter);   /* as a read of a thread watch gives them */
	t.cpu_schedstat = vt_known(run_ns);
	t.utime_ticks = ut;
	t.stime_ticks = st;
	t.start_ticks = 1000;
	t.processor = 1;
	t.wchan_ok = true;
	return t;
}

static void sample(struct vt_threads_sample *s, uint64_t mono_ns, uint64_t ut, uint64_t st,
		   struct vt_thread_snap *threads, size_t n)
{
	memset(s, 0, sizeof(*s));
	s->pid = 100;
	snprintf(s->comm, sizeof(s->comm), "proc");
	s->mono_ns = mono_ns;
	s->utime_ticks = ut;
	s->stime_ticks = st;
	s->start_ticks = 1000;   /* started 10 s after boot */
	s->uptime_s = 110;       /* 100 s ago */
	s->clk_tck = 100;
	s->threads = threads;
	s->n = n;
}

static void test_schedstat__parse(void)
{
	struct vt_schedstat ss;
	struct vt_err err;

	CHECK(vt_schedstat_parse("123 456 7\n", 10, &ss, &err) == VT_OK);
	CHECK_EQ_U64(ss.run_ns, 123);
	CHECK_EQ_U64(ss.wait_ns, 456);
	CHECK_EQ_U64(ss.timeslices, 7);
	CHECK(vt_schedstat_parse("1 2", 3, &ss, &err) == VT_E_PARSE);
	CHECK(vt_schedstat_parse("1 2 3 4\n", 8, &ss, &err) == VT_E_PARSE);
	CHECK(vt_schedstat_parse("18446744073709551616 1 1\n", 25, &ss, &err) == VT_E_PARSE);
	CHECK(vt_schedstat_parse("", 0, &ss, &err) == VT_E_PARSE);
}

/* Two threads over 2 s: one busy 1.5 s, one at 0.5 s with 1 s of run-queue wait. */
static void test_rates__steady_pair(void)
{
	struct vt_thread_snap a[2] = { th(101, "worker-0", 'R', 0, 0, 0, 0, 10, 5),
				       th(102, "worker-1", 'S', 1 * NS, 0, 100, 0, 0, 0) };
	struct vt_thread_snap b[2] = { th(101, "worker-0", 'R', 3 * NS / 2, 0, 140, 10, 210, 45),
				       th(102, "worker-1", 'S', 3 * NS / 2, 1 * NS, 150, 0, 0, 0) };
	struct vt_threads_sample s[2];
	struct vt_threads_rates r;
	struct vt_err err;

	sample(&s[0], 10 * NS, 1000, 100, a, 2);
	sample(&s[1], 12 * NS, 1190, 110, b, 2);
	CHECK(vt_threads_rates_compute(s, 2, 2, &r, &err) == VT_OK);
	CHECK(near(r.interval_s, 2.0));
	CHECK_STR(r.cores_source, "schedstat");
	CHECK(near(r.cores_ns, 1.0));             /* (1.5 + 0.5) s / 2 s */
	CHECK(near(r.cores_ticks, 1.0));          /* 200 ticks / 100 / 2 s */
	CHECK(near(r.cores, 1.0));
	CHECK(near(r.user_cores, 0.95));
	CHECK(near(r.sys_cores, 0.05));
	CHECK(near(r.cpu_seconds, 2.0));
	CHECK(near(r.since_start_cores, 13.0 / 100));  /* 1300 ticks over 100 s */
	CHECK(r.ps_differs);
	CHECK_EQ_U64(r.n, 2);
	CHECK(near(r.threads[0].cpu_cores, 0.75));
	CHECK(near(r.threads[0].cpu_share, 0.75));
	CHECK(near(r.threads[0].rate[VT_TC_VCSW], 100));
	CHECK(near(r.threads[0].rate[VT_TC_NVCSW], 20));
	CHECK(near(r.threads[1].rate[VT_TC_WAIT_NS], 0.5));
	CHECK_EQ_U64(r.threads[0].flags, 0);
	CHECK_EQ_U64(r.npools, 1);
	CHECK_STR(r.pools[0].name, "worker-");
	CHECK(near(r.pools[0].min_cores, 0.25));
	CHECK(near(r.pools[0].max_cores, 0.75));
	CHECK(near(r.pools[0].min_share, 0.25));
	CHECK(near(r.pools[0].max_share, 0.75));
	CHECK(near(r.pools[0].total_cores, 1.0));
	vt_threads_rates_release(&r);
}

/* A thread that appeared, one that exited, one whose tid was reused. */
static void test_rates__thread_churn(void)
{
	struct vt_thread_snap a[3] = { th(101, "main", 'S', 5 * NS, 0, 500, 0, 9, 9),
				       th(102, "gone", 'R', 5 * NS, 0, 500, 0, 100, 100),
				       th(103, "old", 'S', 9 * NS, 0, 900, 0, 1000, 1000) };
	struct vt_thread_snap m[3] = { th(101, "main", 'S', 5 * NS, 0, 500, 0, 9, 9),
				       th(102, "gone", 'R', 5 * NS + NS / 2, 0, 550, 0, 110, 100),
				       th(104, "new", 'R', NS / 10, 0, 10, 0, 3, 0) };
	struct vt_thread_snap b[3] = { th(101, "main", 'S', 5 * NS, 0, 500, 0, 9, 9),
				       th(103, "reused", 'R', NS / 10, 0, 10, 0, 1, 1),
				       th(104, "new", 'R', NS / 2, 0, 50, 0, 5, 0) };
	struct vt_threads_sample s[3];
	struct vt_threads_rates r;
	struct vt_err err;
	size_t i;

	b[1].start_ticks = 5000;   /* a different thread under tid 103 */
	sample(&s[0], 0, 1900, 0, a, 3);
	sample(&s[1], NS / 2, 1960, 0, m, 3);
	sample(&s[2], 1 * NS, 2000, 0, b, 3);
	CHECK(vt_threads_rates_compute(s, 3, 2, &r, &err) == VT_OK);
	CHECK_STR(r.cores_source, "stat");        /* threads exited: stat includes them */
	CHECK(near(r.cores, 1.0));
	CHECK(r.exited >= 2);
	for (i = 0; i < r.n; i++) {
		const struct vt_thread_rate *t = &r.threads[i];

		CHECK(t->cpu_cores >= 0 && t->cpu_cores <= 1.0 + 1e-9);
		CHECK(t->rate[VT_TC_VCSW] >= 0 && t->rate[VT_TC_NVCSW] >= 0);
		if (t->tid == 102) {
			CHECK(t->flags & VT_THREAD_EXITED);
			CHECK(near(t->cpu_cores, 0.5));
			CHECK(near(t->rate[VT_TC_VCSW], 10));
		}
		if (t->tid == 103) {     /* the old thread: seen once, exited, no rate */
			CHECK(t->flags & VT_THREAD_EXITED);
			CHECK(near(t->cpu_cores, 0));
		}
		if (t->tid == 104) {
			CHECK(t->flags & VT_THREAD_APPEARED);
			CHECK(!(t->flags & VT_THREAD_EXITED));
			CHECK(near(t->cpu_cores, 0.5));
			CHECK_EQ_U64(t->nsamples, 2);
			CHECK_EQ_U64(t->states[0], 2);
		}
	}
	vt_threads_rates_release(&r);
}

/* Render r as text (view NULL) or JSON into a malloc'd string. */
static char *render(const struct vt_threads_rates *r, bool json)
{
	struct vt_diagnosis d;
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);

	memset(&d, 0, sizeof(d));
	if (!mem)
		return NULL;
	if (json)
		vt_render_threads_json(mem, r, &d, false);
	else
		vt_render_threads_text(mem, r, &d, NULL);
	fclose(mem);
	return text;
}

/*
 * A thread per request (http.server): one thread there throughout uses 0.1
 * cores; three threads seen come or go, and the process's ticks hold 1.2 s
 * more that no sample saw.  Their CPU is the process's minus the main
 * thread's, as one figure; shares are of the process.
 */
static void test_rates__short_lived(void)
{
	struct vt_thread_snap x0[2] = { th(101, "python3", 'S', 0, 0, 0, 0, 0, 0),
					th(203, "python3", 'R', 1 * NS, 0, 100, 0, 0, 0) };
	struct vt_thread_snap x1[3] = { th(101, "python3", 'S', NS / 20, 0, 5, 0, 0, 0),
					th(201, "python3", 'R', NS / 100, 0, 1, 0, 0, 0),
					th(203, "python3", 'R', NS + NS / 10, 0, 110, 0, 0, 0) };
	struct vt_thread_snap x2[2] = { th(101, "python3", 'S', NS / 10, 0, 10, 0, 0, 0),
					th(202, "python3", 'R', NS / 50, 0, 2, 0, 0, 0) };
	struct vt_thread_snap x3[2] = { th(101, "python3", 'S', 3 * NS / 20, 0, 15, 0, 0, 0),
					th(202, "python3", 'R', NS / 25, 0, 4, 0, 0, 0) };
	struct vt_thread_snap x4[2] = { th(101, "python3", 'S', NS / 5, 0, 20, 0, 0, 0),
					th(202, "python3", 'S', NS / 20, 0, 5, 0, 0, 0) };
	struct vt_threads_sample s[5];
	struct vt_threads_rates r;
	struct vt_err err;
	double rows = 0;
	char *text;
	const char *row;
	size_t i;

	sample(&s[0], 0, 1000, 100, x0, 2);
	sample(&s[1], NS / 2, 1040, 110, x1, 3);
	sample(&s[2], NS, 1080, 120, x2, 2);
	sample(&s[3], 3 * NS / 2, 1110, 130, x3, 2);
	sample(&s[4], 2 * NS, 1130, 130, x4, 2);      /* +160 ticks: 0.8 cores over 2 s */
	CHECK(vt_threads_rates_compute(s, 5, 2, &r, &err) == VT_OK);
	CHECK_STR(r.cores_source, "stat");
	CHECK(near(r.cores, 0.8));
	CHECK_EQ_U64(r.short_lived, 3);                /* 201 seen once, 202 appeared, 203 exited */
	CHECK(near(r.short_lived_cores, 0.7));        /* 0.8 - the main thread's 0.1 */
	CHECK(near(r.short_lived_share, 0.875));
	for (i = 0; i < r.n; i++) {
		const struct vt_thread_rate *t = &r.threads[i];

		if (!(t->flags & (VT_THREAD_APPEARED | VT_THREAD_EXITED)))
			rows += t->cpu_cores;
		if (t->tid == 101) {
			CHECK(near(t->cpu_cores, 0.1));
			CHECK(near(t->cpu_share, 0.125));   /* of the process, not of the rows */
		}
	}
	CHECK(near(rows + r.short_lived_cores, r.cores));
	CHECK_EQ_U64(r.npools, 0);                   /* came and went: no spread to measure */
	text = render(&r, false);
	CHECK(text && strstr(text, "short-lived threads: 0.700 cores, 3 threads = 87.5% of the process"));
	row = text ? strstr(text, "\n  +-") : NULL;      /* the row of the short-lived */
	CHECK(row && strstr(row, "short-lived") && strstr(row, "0.700") && strstr(row, "87.5%"));
	CHECK(row && strstr(row, "0.700") < strchr(row + 1, '\n'));
	CHECK(text && strstr(text, "short-lived: 3 x python3"));
	CHECK(text && !strstr(text, "\n  203"));     /* one row for those that came or went */
	free(text);
	text = render(&r, true);
	CHECK(text && strstr(text, "\"short_lived\": {"));
	CHECK(text && strstr(text, "\"threads\": 3"));
	free(text);
	vt_threads_rates_release(&r);

	/* no thread seen to come or go, but the ticks hold 1.4 s no thread's schedstat does */
	sample(&s[1], 2 * NS, 1150, 130, x4, 1);
	CHECK(vt_threads_rates_compute(s + 1, 1, 2, &r, &err) == VT_E_USAGE);
	sample(&s[0], 0, 0, 0, x0, 1);
	sample(&s[1], 2 * NS, 150, 10, x4, 1);        /* 160 ticks, 0.2 s of schedstat */
	CHECK(vt_threads_rates_compute(s, 2, 2, &r, &err) == VT_OK);
	CHECK_STR(r.cores_source, "stat");
	CHECK(near(r.cores, 0.8));
	CHECK_EQ_U64(r.short_lived, 0);
	CHECK(near(r.short_lived_cores, 0.7));
	CHECK(near(r.threads[0].cpu_share, 0.125));
	text = render(&r, false);
	CHECK(text && strstr(text, "short-lived threads: 0.700 cores, none seen by a sample"));
	free(text);
	vt_threads_rates_release(&r);

	/* within tick resolution: schedstat stands, nothing short-lived */
	sample(&s[1], 2 * NS, 20 + VT_RATES_UNSEEN_TICKS, 0, x4, 1);
	CHECK(vt_threads_rates_compute(s, 2, 2, &r, &err) == VT_OK);
	CHECK_STR(r.cores_source, "schedstat");
	CHECK(near(r.cores, 0.1));
	CHECK(near(r.short_lived_cores, 0));
	CHECK(near(r.threads[0].cpu_share, 1));
	text = render(&r, false);
	CHECK(text && !strstr(text, "short-lived"));
	free(text);
	vt_threads_rates_release(&r);

	/* a thread that appeared and lives on: its schedstat is whole, the sum stands */
	sample(&s[0], 0, 0, 0, x2, 1);
	sample(&s[1], 2 * NS, 15, 0, x4, 2);          /* 101: +0.1 s, 202: 0.05 s since it began */
	CHECK(vt_threads_rates_compute(s, 2, 2, &r, &err) == VT_OK);
	CHECK_STR(r.cores_source, "schedstat");
	CHECK(near(r.cores, 0.075));
	CHECK_EQ_U64(r.short_lived, 1);
	CHECK(near(r.short_lived_cores, 0.025));
	vt_threads_rates_release(&r);
}

/* Counters going backwards give 0 and a flag; unknown ones give "unknown". */
static void test_rates__counter_edges(void)
{
	struct vt_thread_snap a[1] = { th(101, "t", 'R', 5 * NS, 3 * NS, 500, 0, 1000, 1000) };
	struct vt_thread_snap b[1] = { th(101, "t", 'R', 4 * NS, VT_NA, 400, 0, UINT64_MAX - 1, 900) };
	struct vt_threads_sample s[2];
	struct vt_threads_rates r;
	struct vt_err err;

	sample(&s[0], 0, 500, 0, a, 1);
	sample(&s[1], NS, 400, 0, b, 1);   /* process counter backwards too */
	CHECK(vt_threads_rates_compute(s, 2, 1, &r, &err) == VT_OK);
	CHECK(r.threads[0].flags & VT_THREAD_COUNTER_RESET);
	CHECK(near(r.threads[0].cpu_cores, 0));
	CHECK(r.threads[0].rate[VT_TC_WAIT_NS] < 0);        /* wait_ns unknown at the end */
	CHECK(near(r.threads[0].rate[VT_TC_NVCSW], 0));
	CHECK(near(r.threads[0].rate[VT_TC_VCSW], 0));     /* absurd jump: dropped, not shown */
	CHECK(near(r.cores_ticks, 0));
	CHECK(r.cores >= 0);
	vt_threads_rates_release(&r);
}

static void test_rates__zero_and_short_interval(void)
{
	struct vt_thread_snap a[1] = { th(101, "t", 'R', 0, 0, 0, 0, 0, 0) };
	struct vt_threads_sample s[2];
	struct vt_threads_rates r;
	struct vt_err err;

	sample(&s[0], 5 * NS, 0, 0, a, 1);
	sample(&s[1], 5 * NS, 0, 0, a, 1);
	CHECK(vt_threads_rates_compute(s, 2, 1, &r, &err) == VT_E_USAGE);
	CHECK(strstr(err.msg, "minimum is 0.2") != NULL);
	sample(&s[1], 5 * NS + NS / 10, 0, 0, a, 1);
	CHECK(vt_threads_rates_compute(s, 2, 1, &r, &err) == VT_E_USAGE);
	sample(&s[1], 4 * NS, 0, 0, a, 1);         /* clock order reversed */
	CHECK(vt_threads_rates_compute(s, 2, 1, &r, &err) == VT_E_USAGE);
	CHECK(vt_threads_rates_compute(s, 1, 1, &r, &err) == VT_E_USAGE);
}

static void test_rates__pool_key(void)
{
	CHECK_EQ_U64(vt_threads_pool_key_len("worker-12"), 7);
	CHECK_EQ_U64(vt_threads_pool_key_len("main"), 4);
	CHECK_EQ_U64(vt_threads_pool_key_len("1234"), 0);
	CHECK_EQ_U64(vt_threads_pool_key_len(""), 0);
}

/*
 * "python3" x 3 is one name whose digit belongs to the program, not an index;
 * worker-0/1 are a pool of equals; a busy main thread and idle helpers that
 * share a name are one name but not a pool of equals.
 */
static void test_rates__pool_names(void)
{
	struct vt_thread_snap a[6] = { th(101, "python3", 'R', 0, 0, 0, 0, 0, 0),
				       th(102, "python3", 'S', 0, 0, 0, 0, 0, 0),
				       th(103, "python3", 'S', 0, 0, 0, 0, 0, 0),
				       th(104, "worker-0", 'R', 0, 0, 0, 0, 0, 0),
				       th(105, "worker-1", 'R', 0, 0, 0, 0, 0, 0),
				       th(106, "main", 'S', 0, 0, 0, 0, 0, 0) };
	struct vt_thread_snap b[6] = { th(101, "python3", 'R', 9 * NS / 10, 0, 90, 0, 0, 0),
				       th(102, "python3", 'S', NS / 100, 0, 1, 0, 0, 0),
				       th(103, "python3", 'S', 0, 0, 0, 0, 0, 0),
				       th(104, "worker-0", 'R', NS / 2, 0, 50, 0, 0, 0),
				       th(105, "worker-1", 'R', NS / 2, 0, 50, 0, 0, 0),
				       th(106, "main", 'S', 0, 0, 0, 0, 0, 0) };
	struct vt_threads_sample s[2];
	struct vt_threads_rates r;
	struct vt_err err;
	const struct vt_thread_pool *py = NULL, *wk = NULL;
	size_t i;

	sample(&s[0], 0, 0, 0, a, 6);
	sample(&s[1], NS, 191, 0, b, 6);
	CHECK(vt_threads_rates_compute(s, 2, 2, &r, &err) == VT_OK);
	CHECK_EQ_U64(r.npools, 2);
	for (i = 0; i < r.npools; i++) {
		if (!strcmp(r.pools[i].name, "python"))
			py = &r.pools[i];
		if (!strcmp(r.pools[i].name, "worker-"))
			wk = &r.pools[i];
	}
	CHECK(py && wk);
	if (py) {
		CHECK_STR(py->label, "python3");
		CHECK(!py->indexed && py->uneven);
		CHECK_EQ_U64(py->count, 3);
	}
	if (wk) {
		CHECK_STR(wk->label, "worker-");
		CHECK(wk->indexed && !wk->uneven);
	}
	vt_threads_rates_release(&r);
}

/* Tokio names every worker "tokio-runtime-worker" (15 characters kept: no digits at all):
 * they are one pool, by their whole name; a lone name is no pool. */
static void test_rates__pool_of_one_name_without_digits(void)
{
	struct vt_thread_snap a[4] = { th(201, "svc", 'S', 0, 0, 0, 0, 0, 0),
				       th(202, "tokio-runtime-w", 'R', 0, 0, 0, 0, 0, 0),
				       th(203, "tokio-runtime-w", 'R', 0, 0, 0, 0, 0, 0),
				       th(204, "tokio-runtime-w", 'R', 0, 0, 0, 0, 0, 0) };
	struct vt_thread_snap b[4] = { th(201, "svc", 'S', 0, 0, 0, 0, 0, 0),
				       th(202, "tokio-runtime-w", 'R', 3 * NS / 10, 0, 30, 0, 0, 0),
				       th(203, "tokio-runtime-w", 'R', 3 * NS / 10, 0, 30, 0, 0, 0),
				       th(204, "tokio-runtime-w", 'R', 3 * NS / 10, 0, 30, 0, 0, 0) };
	struct vt_threads_sample s[2];
	struct vt_threads_rates r;
	struct vt_err err;

	sample(&s[0], 0, 0, 0, a, 4);
	sample(&s[1], NS, 90, 0, b, 4);
	CHECK(vt_threads_rates_compute(s, 2, 2, &r, &err) == VT_OK);
	CHECK_EQ_U64(r.npools, 1);
	if (r.npools) {
		CHECK_STR(r.pools[0].label, "tokio-runtime-w");
		CHECK_EQ_U64(r.pools[0].count, 3);
		CHECK(!r.pools[0].indexed && !r.pools[0].uneven);
		CHECK(near(r.pools[0].total_cores, 0.9));
	}
	vt_threads_rates_release(&r);
}

/* A finding's evidence as the views word it (one buffer: one call per statement). */
static const char *evidence(const struct vt_diag_finding *f)
{
	static char buf[VT_DIAG_EVIDENCE_MAX];

	return vt_render_diag_evidence(f, buf, sizeof(buf));
}

static void test_diagnose__rules(void)
{
	struct vt_threads_rates r;
	struct vt_thread_rate t[4];
	struct vt_thread_pool pool = { .name = "worker-", .label = "worker-", .indexed = true, .count = 3,
				       .min_cores = 0.30, .max_cores = 0.32 };
	struct vt_diagnosis d;
	int i;

	memset(&r, 0, sizeof(r));
	memset(t, 0, sizeof(t));
	r.ncpu = 2;
	r.usable_cores = 2;
	r.interval_s = 1;
	r.threads = t;
	r.n = 4;
	r.cores = 0.001;
	vt_diagnose(&r, &d);
	CHECK_EQ_U64(d.n, 1);
	CHECK(d.f[0].kind == VT_DIAG_IDLE);
	CHECK_STR(vt_diag_name(d.f[0].kind), "idle");
	CHECK(strstr(evidence(&d.f[0]), "the process used 0.0010 cores") != NULL);

	/* 4 spinners on 2 CPUs */
	r.cores = 2;
	for (i = 0; i < 4; i++) {
		snprintf(t[i].comm, sizeof(t[i].comm), "spin-%d", i);
		t[i].cpu_cores = 0.5;
		t[i].rate[VT_TC_WAIT_NS] = 0.5;
		t[i].rate[VT_TC_VCSW] = 0;
		t[i].rate[VT_TC_NVCSW] = 300;
		t[i].nsamples = 10;
	}
	vt_diagnose(&r, &d);
	CHECK(d.f[0].kind == VT_DIAG_CONTENTION);
	CHECK(d.f[0].contention.runnable > 2 && d.f[0].contention.nonvol_per_s == 1200);
	CHECK(strstr(evidence(&d.f[0]), "its threads want 4.00 CPUs (each one's CPU over its time not queued) for 2.00 usable cores") != NULL);

	/* 3 workers taking turns on a futex, plus main */
	r.cores = 0.95;
	r.pools = &pool;
	r.npools = 1;
	for (i = 0; i < 4; i++) {
		snprintf(t[i].comm, sizeof(t[i].comm), i < 3 ? "worker-%d" : "main", i);
		t[i].cpu_cores = i < 3 ? 0.31 : 0;
		t[i].rate[VT_TC_WAIT_NS] = 0;
		t[i].rate[VT_TC_VCSW] = i < 3 ? 2000 : 1;
		t[i].rate[VT_TC_NVCSW] = 10;
		snprintf(t[i].wchan, sizeof(t[i].wchan), "futex_wait_queue");
		t[i].wchan_count = 7;
		t[i].wchan_ok = true;
		t[i].states[VT_STATE_S] = 7;
	}
	vt_diagnose(&r, &d);
	CHECK(d.f[0].kind == VT_DIAG_CONVOY);
	CHECK(d.f[0].convoy.members == 3 && !strcmp(d.f[0].convoy.pool, "worker-"));
	CHECK(strstr(evidence(&d.f[0]), "3 x worker-") != NULL);

	/* a poller: 2000 wakeups/s at 10 us each */
	r.npools = 0;
	r.cores = 0.02;
	for (i = 0; i < 4; i++) {
		t[i].cpu_cores = i == 0 ? 0.02 : 0;
		t[i].rate[VT_TC_VCSW] = i == 0 ? 2000 : 0;
		snprintf(t[i].wchan, sizeof(t[i].wchan), "hrtimer_nanosleep");
	}
	vt_diagnose(&r, &d);
	CHECK(d.f[0].kind == VT_DIAG_BUSY_POLL);
	CHECK(d.f[0].wake.wakeups_per_s == 2000 && fabs(d.f[0].wake.cpu_us - 10) < 1e-9);
	CHECK(strstr(evidence(&d.f[0]), "2000 times/s") != NULL);
	CHECK(strstr(evidence(&d.f[0]), "10.0 µs") != NULL);
	CHECK(strstr(evidence(&d.f[0]), "sleeping in hrtimer_nanosleep") != NULL);

	/* nothing stands out */
	t[0].rate[VT_TC_VCSW] = 10;
	r.cores = 0.5;
	t[0].cpu_cores = 0.5;
	vt_diagnose(&r, &d);
	CHECK(d.f[0].kind == VT_DIAG_NONE);
	CHECK_STR(vt_diag_name(d.f[0].kind), "no pattern");
	CHECK(strstr(evidence(&d.f[0]), "no rule's conditions all held") != NULL);
}

/* n zeroed threads t over 5 s of a process that may use 2 cores. */
static void io_rates(struct vt_threads_rates *r, struct vt_thread_rate *t, size_t n)
{
	memset(r, 0, sizeof(*r));
	memset(t, 0, sizeof(*t) * n);
	r->usable_cores = 2;
	r->interval_s = 5;
	r->threads = t;
	r->n = n;
}

/* Every thread stopped (SIGSTOP, Ctrl-Z, a debugger): "stopped", not idle; one that runs: not. */
static void test_diagnose__stopped(void)
{
	struct vt_threads_rates r;
	struct vt_thread_rate t[3];
	struct vt_diagnosis d;
	int i;

	io_rates(&r, t, 3);
	r.cores = 0;
	for (i = 0; i < 3; i++) {
		snprintf(t[i].comm, sizeof(t[i].comm), "worker-%d", i);
		t[i].tid = 20 + i;
		t[i].nsamples = 10;
		t[i].states[VT_STATE_T] = i ? 10 : 6;     /* the first stopped 0.4 s into the interval */
		t[i].states[VT_STATE_S] = i ? 0 : 4;
	}
	vt_diagnose(&r, &d);
	CHECK_EQ_U64(d.n, 1);
	CHECK(d.f[0].kind == VT_DIAG_STOPPED);
	CHECK_STR(vt_diag_name(d.f[0].kind), "stopped");
	CHECK(d.f[0].stopped.threads == 3 && d.f[0].stopped.samples == 30);
	CHECK(strstr(evidence(&d.f[0]), "all 3 threads were stopped (state T) in 87% of 30 thread samples") != NULL);
	CHECK(strstr(evidence(&d.f[0]), "SIGCONT") != NULL);

	/* one thread of the three not stopped most of the time: the process is not stopped */
	t[0].states[VT_STATE_T] = 4;
	t[0].states[VT_STATE_S] = 6;
	vt_diagnose(&r, &d);
	CHECK(d.f[0].kind == VT_DIAG_IDLE);

	/* one thread */
	io_rates(&r, t, 1);
	t[0].nsamples = 7;
	t[0].states[VT_STATE_T] = 7;
	vt_diagnose(&r, &d);
	CHECK(d.f[0].kind == VT_DIAG_STOPPED);
	CHECK(strstr(evidence(&d.f[0]), "its one thread was stopped (state T) in 100% of 7") != NULL);

	/* no thread seen: nothing said of it */
	io_rates(&r, t, 0);
	vt_diagnose(&r, &d);
	CHECK(d.f[0].kind != VT_DIAG_STOPPED);
}

/* Threads in D state most of the time: blocked on I/O, and not "idle". */
static void test_diagnose__io(void)
{
	struct vt_threads_rates r;
	struct vt_thread_rate t[3];
	struct vt_diagnosis d;
	int i;

	io_rates(&r, t, 3);
	r.cores = 0.002;
	for (i = 0; i < 3; i++) {
		snprintf(t[i].comm, sizeof(t[i].comm), i ? "writer-%d" : "main", i - 1);
		t[i].tid = 10 + i;
		t[i].nsamples = 50;
		t[i].states[1] = i ? 10 : 50;            /* S */
		t[i].states[2] = i ? 40 : 0;             /* D */
		snprintf(t[i].wchan, sizeof(t[i].wchan), i ? "folio_wait_bit" : "do_wait");
		t[i].wchan_count = 40;
		snprintf(t[i].syscall, sizeof(t[i].syscall), i ? "fsync" : "wait4");
		t[i].syscall_count = 40;
	}
	vt_diagnose(&r, &d);
	CHECK_EQ_U64(d.n, 1);
	CHECK(d.f[0].kind == VT_DIAG_IO);
	CHECK(d.f[0].io.blocked == 2 && d.f[0].io.shown == 2);
	CHECK(strstr(evidence(&d.f[0]), "thread 11 (writer-0) 80% of 50 samples, in folio_wait_bit, "
					"syscall fsync") != NULL);
	CHECK(strstr(evidence(&d.f[0]), "thread 12") != NULL);
	CHECK(strstr(evidence(&d.f[0]), "main") == NULL);

	/* a writer that wakes often, mostly in D: blocked on I/O, not a busy poll */
	r.cores = 0.03;
	t[1].cpu_cores = 0.015;
	t[1].rate[VT_TC_VCSW] = 800;
	vt_diagnose(&r, &d);
	CHECK_EQ_U64(d.n, 1);
	CHECK(d.f[0].kind == VT_DIAG_IO);
	r.cores = 0.002;
	t[1].cpu_cores = 0;
	t[1].rate[VT_TC_VCSW] = 0;

	/* under the share, or too few samples: not blocked, so idle */
	t[1].states[2] = t[2].states[2] = 10;
	vt_diagnose(&r, &d);
	CHECK(d.f[0].kind == VT_DIAG_IDLE);
	t[1].states[2] = 4;
	t[1].nsamples = 4;
	vt_diagnose(&r, &d);
	CHECK(d.f[0].kind == VT_DIAG_IDLE);
}

/* Five writers blocked: the evidence names three and counts the rest. */
static void test_diagnose__io_many(void)
{
	struct vt_threads_rates r;
	struct vt_thread_rate t[5];
	struct vt_diagnosis d;
	int i;

	io_rates(&r, t, 5);
	for (i = 0; i < 5; i++) {
		snprintf(t[i].comm, sizeof(t[i].comm), "writer-%d", i);
		t[i].tid = 20 + i;
		t[i].nsamples = 10;
		t[i].states[2] = 10;
	}
	vt_diagnose(&r, &d);
	CHECK(d.f[0].kind == VT_DIAG_IO && d.f[0].io.blocked == 5 && d.f[0].io.shown == VT_DIAG_IO_SHOWN);
	CHECK(strstr(evidence(&d.f[0]), "I/O): thread 20 (writer-0) 100% of 10 samples; thread 21") != NULL);
	CHECK(strstr(evidence(&d.f[0]), "thread 23") == NULL);
	CHECK(strstr(evidence(&d.f[0]), "(writer-2) 100% of 10 samples; 2 more") != NULL);
}

/* A quota narrows what the process may use; throttling is a finding. */
static void test_rates__quota_and_throttling(void)
{
	struct vt_thread_snap a[1] = { th(101, "t", 'R', 0, 0, 0, 0, 0, 0) };
	struct vt_thread_snap b[1] = { th(101, "t", 'R', NS / 2, 0, 50, 0, 0, 0) };
	struct vt_threads_sample s[2];
	struct vt_threads_rates r;
	struct vt_diagnosis d;
	struct vt_err err;

	sample(&s[0], 0, 0, 0, a, 1);
	sample(&s[1], NS, 50, 0, b, 1);
	CHECK(vt_threads_rates_compute(s, 2, 2, &r, &err) == VT_OK);
	CHECK(near(r.usable_cores, 2));
	CHECK(r.quota_cores < 0);
	CHECK(!vt_known(r.periods));
	vt_threads_rates_set_quota(&r, 0.5, "/limited");
	CHECK(near(r.usable_cores, 0.5));
	CHECK_STR(r.quota_dir, "/limited");
	vt_threads_rates_set_quota(&r, 4, "/loose");       /* above the CPUs: they bound it */
	CHECK(near(r.usable_cores, 2));
	CHECK(near(r.quota_cores, 4));
	vt_threads_rates_set_quota(&r, -1, "/none");
	CHECK(r.quota_cores < 0);
	CHECK_STR(r.quota_dir, "");

	vt_threads_rates_set_quota(&r, 0.5, "/limited");
	r.periods = 10;
	r.throttled_periods = 9;
	r.throttled_s = 0.45;
	vt_diagnose(&r, &d);
	CHECK(d.f[0].kind == VT_DIAG_THROTTLED);
	CHECK(d.f[0].throttled.throttled_periods == 9 && d.f[0].throttled.periods == 10);
	CHECK(strstr(evidence(&d.f[0]), "0.50 cores (/limited)") != NULL);
	CHECK(strstr(evidence(&d.f[0]), "9 of 10 periods") != NULL);
	r.throttled_periods = 0;
	vt_diagnose(&r, &d);
	CHECK(d.f[0].kind != VT_DIAG_THROTTLED);
	vt_threads_rates_release(&r);
}

/* The system call most often seen, and why it is missing when it is. */
static void test_rates__syscall_tally(void)
{
	struct vt_thread_snap x[4][2];
	struct vt_threads_sample s[4];
	struct vt_threads_rates r;
	struct vt_err err;
	static const char *const calls[4][2] = {
		{ "futex", "" }, { "futex", "read" }, { "", "read" }, { "futex", "" },
	};
	int i, k;

	for (i = 0; i < 4; i++) {
		for (k = 0; k < 2; k++) {
			x[i][k] = th(101 + k, k ? "io" : "lock", 'S', 0, 0, 0, 0, 0, 0);
			x[i][k].syscall_ok = true;
			snprintf(x[i][k].syscall, sizeof(x[i][k].syscall), "%s", calls[i][k]);
		}
		sample(&s[i], (uint64_t)i * NS / 2, 0, 0, x[i], 2);
	}
	x[3][1].syscall_ok = false;
	snprintf(x[3][1].syscall_why, sizeof(x[3][1].syscall_why), "needs ptrace attach access");
	CHECK(vt_threads_rates_compute(s, 4, 2, &r, &err) == VT_OK);
	CHECK_STR(r.threads[0].syscall, "futex");
	CHECK_EQ_U64(r.threads[0].syscall_count, 3);
	CHECK(r.threads[0].syscall_ok);
	CHECK_STR(r.threads[1].syscall, "read");
	CHECK_EQ_U64(r.threads[1].syscall_count, 2);
	CHECK(r.threads[1].syscall_ok);      /* seen in some samples */
	CHECK_STR(r.threads[1].syscall_why, "needs ptrace attach access");
	vt_threads_rates_release(&r);
}

VT_TEST_MAIN(test_schedstat__parse, test_rates__steady_pair, test_rates__thread_churn, test_rates__short_lived,
	     test_rates__counter_edges, test_rates__zero_and_short_interval, test_rates__pool_key,
	     test_rates__pool_names, test_rates__pool_of_one_name_without_digits, test_diagnose__rules,
	     test_diagnose__io, test_diagnose__io_many, test_diagnose__stopped, test_rates__quota_and_throttling,
	     test_rates__syscall_tally)

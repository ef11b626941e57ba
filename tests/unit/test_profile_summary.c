/*
 * test_profile_summary.c — the profile summary on hand-built profiles:
 * bucket shares and their Wilson intervals, recursion counted once in a
 * function's total, the wall-mode split with idle waits apart, threads and
 * pools beside their measured CPU, modules; and the text view of a small
 * profile against the expected table.
 */
#include "harness.h"
#include "profile_build.h"

#include <math.h>

#include "analyze/profile_summary.h"
#include "render/profile_json.h"
#include "render/profile_text.h"

#define NEAR(a, b, eps) (fabs((double)(a) - (double)(b)) <= (eps))

static const struct vt_prof_bucket_row *row_of(const struct vt_prof_summary *s, const char *name)
{
	for (uint32_t i = 0; i < s->nbuckets; i++)
		if (strcmp(s->buckets[i].name, name) == 0)
			return &s->buckets[i];
	return NULL;
}

static const struct vt_prof_func_row *func_of(const struct vt_prof_func_row *rows, uint32_t n,
					      const char *label)
{
	for (uint32_t i = 0; i < n; i++)
		if (strcmp(rows[i].label, label) == 0)
			return &rows[i];
	return NULL;
}

static void test_summary__wilson(void)
{
	struct vt_prof_share sh;
	vt_prof_share_of(50, 100, &sh);
	CHECK(NEAR(sh.share, 0.5, 1e-12));
	CHECK(NEAR(sh.lo, 0.40383, 1e-4));
	CHECK(NEAR(sh.hi, 0.59617, 1e-4));
	CHECK(NEAR(sh.pm, 0.09617, 1e-4));
	vt_prof_share_of(0, 10, &sh);   /* none seen: the interval still says "up to 28%" */
	CHECK(sh.lo == 0);
	CHECK(NEAR(sh.hi, 0.27753, 1e-4));
	vt_prof_share_of(3436, 7552, &sh);   /* report 002's network row: ±1.1 points */
	CHECK(NEAR(sh.share, 0.455, 0.001));
	CHECK(NEAR(sh.pm, 0.0112, 0.0002));
	vt_prof_share_of(0, 0, &sh);
	CHECK(sh.share == 0 && sh.pm == 0);
}

/* A profile of worker-1, worker-2 and main with known work. */
static struct vt_profile *work_profile(void)
{
	struct vt_profile *p;
	struct vt_err err;
	CHECK(vt_profile_new(&p, &err) == VT_OK);
	uint32_t w1 = vt_profile_intern_thread(p, 101, "worker-1");
	uint32_t w2 = vt_profile_intern_thread(p, 102, "worker-2");
	uint32_t mt = vt_profile_intern_thread(p, 100, "app");
	p->threads[w1].cpu_s = 0.6;
	p->threads[w2].cpu_s = 0.3;
	p->threads[mt].cpu_s = 0.1;
	/* 60 network (w1), 30 json with a recursive walk (w2), 10 other (main) */
	CHECK(pb_stack(p, w1, VT_PROF_RUNNING, NULL, 60, "[kernel]!tcp_sendmsg", "libc.so.6!send",
		       "app!flush", "app!main", NULL) == VT_OK);
	CHECK(pb_stack(p, w2, VT_PROF_RUNNING, NULL, 20, "app!json_value", "app!json_walk",
		       "app!json_value", "app!json_walk", "app!json_value", "app!main", NULL) == VT_OK);
	CHECK(pb_stack(p, w2, VT_PROF_RUNNING, NULL, 10, "libc.so.6!memcpy", "app!json_value",
		       "app!main", NULL) == VT_OK);
	CHECK(pb_stack(p, mt, VT_PROF_RUNNING, NULL, 10, "app!", "app!main", NULL) == VT_OK);
	uint32_t m = vt_profile_intern_module(p, "app", "/usr/bin/app");
	p->modules[m].frames[VT_UNWIND_DWARF] = 90;
	p->modules[m].frames[VT_UNWIND_FP] = 10;
	p->modules[m].symbols = VT_SYMS_SYMTAB;
	CHECK(vt_profile_module_set_debug(p, m, VT_LINES_NONE, NULL, "/usr/lib/debug/.build-id/ab/cdef.debug",
					  "its build ID is not the module's") == VT_OK);
	m = vt_profile_intern_module(p, "libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6");
	p->modules[m].frames[VT_UNWIND_DWARF] = 70;
	p->modules[m].symbols = VT_SYMS_DYNSYM;
	CHECK(vt_profile_module_set_debug(p, m, VT_LINES_DEBUGFILE, "/usr/lib/debug/.build-id/93/ac61.debug",
					  NULL, NULL) == VT_OK);
	snprintf(p->meta.comm, sizeof(p->meta.comm), "app");
	snprintf(p->meta.method, sizeof(p->meta.method), "perf cpu-clock");
	p->meta.pid = 100;
	p->meta.hz = 99;
	p->meta.duration_s = 10;
	p->meta.lost = 2;
	p->meta.kernel_symbols = true;
	p->meta.process_cpu_s = 1.0;
	p->meta.self_cpu_s = 0.02;
	p->meta.overhead = 0.004;
	snprintf(p->meta.overhead_how, sizeof(p->meta.overhead_how), "a spinner's loop rate");
	return p;
}

static void test_summary__buckets_functions_threads(void)
{
	struct vt_profile *p = work_profile();
	struct vt_bucket_rules *r;
	struct vt_prof_summary *s;
	struct vt_err err;
	CHECK(vt_bucket_rules_builtin(&r, &err) == VT_OK);
	CHECK(vt_prof_summarize(p, r, NULL, &s, &err) == VT_OK);
	vt_profile_free(&p);   /* the summary stands alone */
	vt_bucket_rules_free(&r);

	CHECK_EQ_U64(s->cpu_samples, 100);
	CHECK(!s->few_samples);
	CHECK_EQ_U64(s->nbuckets, 3);
	CHECK_STR(s->buckets[0].name, "network send/recv");
	CHECK_EQ_U64(s->buckets[0].cpu.samples, 60);
	CHECK(NEAR(s->buckets[0].cpu.share, 0.60, 1e-12));
	CHECK_STR(s->buckets[1].name, "JSON/serialization");
	CHECK_EQ_U64(s->buckets[1].cpu.samples, 30);
	CHECK_STR(s->buckets[2].name, "other");
	CHECK(!s->buckets[0].tied_next);   /* 60 vs 30 of 100: told apart */
	CHECK(!s->buckets[1].tied_next);   /* 30 vs 10 of 100: [22%, 40%] and [6%, 17%] */

	/* total counts a sample once however deep the recursion */
	const struct vt_prof_func_row *f = func_of(s->top_total, s->ntop_total, "json_value");
	CHECK(f != NULL);
	if (f) {
		CHECK_EQ_U64(f->total, 30);
		CHECK_EQ_U64(f->self, 20);
		CHECK_STR(f->module, "app");
	}
	f = func_of(s->top_total, s->ntop_total, "main");
	CHECK(f && f->total == 100 && f->self == 0 && NEAR(f->total_share, 1.0, 1e-12));
	CHECK_STR(s->top_total[0].label, "main");
	CHECK_STR(s->top_self[0].label, "tcp_sendmsg");
	CHECK(s->top_self[0].kernel);
	f = func_of(s->top_self, s->ntop_self, "app+0x");
	CHECK(f == NULL);
	bool unnamed = false;
	for (uint32_t i = 0; i < s->ntop_self; i++)
		unnamed |= strncmp(s->top_self[i].label, "app+0x", 6) == 0 && s->top_self[i].self == 10;
	CHECK(unnamed);
	/* nothing in main itself: no self row for it */
	CHECK(func_of(s->top_self, s->ntop_self, "main") == NULL);
	CHECK_EQ_U64(s->nfuncs_seen, 8);

	CHECK_EQ_U64(s->nthreads, 3);
	CHECK_EQ_I64(s->threads[0].tid, 101);
	CHECK(NEAR(s->threads[0].cpu.share, 0.6, 1e-12));
	CHECK(NEAR(s->threads[0].cpu_s_share, 0.6, 1e-12));
	CHECK(NEAR(s->threads_cpu_s, 1.0, 1e-12));
	CHECK_STR(s->threads[2].pool, "app");
	CHECK_EQ_U64(s->npools, 1);
	CHECK_STR(s->pools[0].name, "worker-#");
	CHECK_EQ_U64(s->pools[0].threads, 2);
	CHECK_EQ_U64(s->pools[0].cpu.samples, 90);
	CHECK(NEAR(s->pools[0].cpu_s, 0.9, 1e-12));

	CHECK_EQ_U64(s->nmodules, 2);
	CHECK_STR(s->modules[0].name, "app");
	CHECK_EQ_U64(s->modules[0].frames_total, 100);
	vt_prof_summary_free(&s);
	CHECK(s == NULL);
}

static void test_summary__few_samples_and_ties(void)
{
	struct vt_profile *p;
	struct vt_bucket_rules *r;
	struct vt_prof_summary *s;
	struct vt_err err;
	CHECK(vt_profile_new(&p, &err) == VT_OK);
	uint32_t t = vt_profile_intern_thread(p, 7, "one");
	CHECK(pb_stack(p, t, VT_PROF_RUNNING, NULL, 12, "libc.so.6!malloc", NULL) == VT_OK);
	CHECK(pb_stack(p, t, VT_PROF_RUNNING, NULL, 10, "app!xxh3_64", NULL) == VT_OK);
	CHECK(vt_bucket_rules_builtin(&r, &err) == VT_OK);
	CHECK(vt_prof_summarize(p, r, NULL, &s, &err) == VT_OK);
	CHECK(s->few_samples);
	CHECK_EQ_U64(s->nbuckets, 2);
	CHECK(s->buckets[0].tied_next);
	CHECK(!s->buckets[1].tied_next);
	CHECK(s->threads_cpu_s < 0);   /* the thread's CPU was not measured */
	CHECK(s->threads[0].cpu_s_share < 0);
	vt_prof_summary_free(&s);
	vt_bucket_rules_free(&r);
	vt_profile_free(&p);
}

static void test_summary__wall_split(void)
{
	struct vt_profile *p;
	struct vt_bucket_rules *r;
	struct vt_prof_summary *s;
	struct vt_err err;
	CHECK(vt_profile_new(&p, &err) == VT_OK);
	p->meta.wall = true;
	uint32_t t = vt_profile_intern_thread(p, 7, "client");
	/* network: 10 running, 5 runnable, 30 blocked in recv (waiting, not idle) */
	CHECK(pb_stack(p, t, VT_PROF_RUNNING, NULL, 10, "[kernel]!tcp_recvmsg", "libc.so.6!recv",
		       "app!call", NULL) == VT_OK);
	CHECK(pb_stack(p, t, VT_PROF_RUNNABLE, NULL, 5, "[kernel]!tcp_recvmsg", "libc.so.6!recv",
		       "app!call", NULL) == VT_OK);
	CHECK(pb_stack(p, t, VT_PROF_SLEEPING, "sk_wait_data", 30, "[kernel]!sk_wait_data",
		       "[kernel]!tcp_recvmsg", "libc.so.6!recv", "app!call", NULL) == VT_OK);
	/* other: 5 running; idle: 40 parked in a condition variable, 10 in epoll */
	CHECK(pb_stack(p, t, VT_PROF_RUNNING, NULL, 5, "app!compute", NULL) == VT_OK);
	CHECK(pb_stack(p, t, VT_PROF_SLEEPING, "futex_wait_queue", 40, "libc.so.6!pthread_cond_wait",
		       "app!pool_wait", NULL) == VT_OK);
	CHECK(pb_stack(p, t, VT_PROF_SLEEPING, "ep_poll", 10, "libc.so.6!epoll_wait", "app!loop",
		       NULL) == VT_OK);
	/* locks: 20 blocked taking a mutex (not idle) */
	CHECK(pb_stack(p, t, VT_PROF_SLEEPING, "futex_wait_queue", 20, "libc.so.6!__lll_lock_wait",
		       "libc.so.6!pthread_mutex_lock", "app!take", NULL) == VT_OK);
	CHECK(vt_bucket_rules_builtin(&r, &err) == VT_OK);
	CHECK(vt_prof_summarize(p, r, NULL, &s, &err) == VT_OK);

	CHECK_EQ_U64(s->cpu_samples, 15);
	CHECK_EQ_U64(s->runnable_samples, 5);
	CHECK_EQ_U64(s->waiting_samples, 100);
	CHECK_EQ_U64(s->idle_samples, 50);
	CHECK_EQ_U64(s->wall_samples, 70);   /* 120 in all, less the 50 idle */
	CHECK_EQ_U64(s->waits[VT_WAITC_FUTEX], 40);
	CHECK_EQ_U64(s->waits[VT_WAITC_EPOLL], 10);
	CHECK_EQ_U64(s->waits[VT_WAITC_IO], 30);
	CHECK_EQ_U64(s->waits[VT_WAITC_LOCK], 20);

	const struct vt_prof_bucket_row *net = row_of(s, "network send/recv");
	CHECK(net != NULL);
	if (net) {
		CHECK_EQ_U64(net->wall_running, 10);
		CHECK_EQ_U64(net->wall_runnable, 5);
		CHECK_EQ_U64(net->wall_waiting, 30);
		CHECK_EQ_U64(net->wall_idle, 0);
		CHECK(NEAR(net->wall.share, 45.0 / 70, 1e-12));
		CHECK(NEAR(net->cpu.share, 10.0 / 15, 1e-12));
		CHECK_EQ_U64(net->nwaits, 1);
		CHECK_STR(net->waits[0].what, "sk_wait_data");
	}
	const struct vt_prof_bucket_row *locks = row_of(s, "locks/futex");
	CHECK(locks && locks->wall_waiting == 20 && locks->wall_idle == 40 && locks->cpu.samples == 0);
	const struct vt_prof_bucket_row *poll = row_of(s, "poll/sleep");
	CHECK(poll && poll->wall_idle == 10 && poll->wall.samples == 0);
	CHECK_STR(s->buckets[0].name, "network send/recv");
	vt_prof_summary_free(&s);
	vt_bucket_rules_free(&r);
	vt_profile_free(&p);
}

static void test_summary__text_view(void)
{
	struct vt_profile *p = work_profile();
	struct vt_bucket_rules *r;
	struct vt_prof_summary *s;
	struct vt_err err;
	char *text = NULL;
	size_t len = 0;
	/* a name from the target that would clear the screen */
	uint32_t evil = vt_profile_intern_thread(p, 103, "evil\x1b[2J");
	p->threads[evil].cpu_s = 0;
	CHECK(vt_bucket_rules_builtin(&r, &err) == VT_OK);
	CHECK(vt_prof_summarize(p, r, NULL, &s, &err) == VT_OK);
	FILE *out = open_memstream(&text, &len);
	struct vt_profile_text_opts opts = { .top = 3, .max_threads = 4 };
	CHECK(vt_render_profile_text(out, s, &opts) == 0);
	fclose(out);
	const char *want =
		"vitals profile · pid 100 (app) · 10 s at 99 Hz per thread · perf cpu-clock\n"
		"\n"
		"where the CPU went: 100 on-CPU samples, bucketed by top of stack\n"
		"  bucket              share      ±  samples\n"
		"  ─────────────────────────────────────────\n"
		"  network send/recv   60.0%  ±9.4%       60\n"
		"  JSON/serialization  30.0%  ±8.8%       30\n"
		"  other               10.0%  ±6.0%       10\n"
		"  idle waits: none sampled (CPU mode: a sleeping thread takes no CPU samples; "
		"--wall samples them)\n"
		"\n"
		"top functions by self (on-CPU samples with it at the leaf)\n"
		"  function     module     self  share\n"
		"  ───────────────────────────────────\n"
		"  tcp_sendmsg  [kernel]     60  60.0%\n"
		"  json_value   app          20  20.0%\n"
		"  memcpy       libc.so.6    10  10.0%\n"
		"  (1 more function)\n"
		"\n"
		"top functions by total (on-CPU samples with it anywhere on the stack)\n"
		"  function     module     total   share\n"
		"  ─────────────────────────────────────\n"
		"  main         app          100  100.0%\n"
		"  tcp_sendmsg  [kernel]      60   60.0%\n"
		"  send         libc.so.6     60   60.0%\n"
		"  (5 more functions)\n"
		"\n"
		"threads (share of on-CPU samples beside each thread's measured CPU)\n"
		"  tid  thread    samples  share  measured CPU  of measured\n"
		"  ────────────────────────────────────────────────────────\n"
		"  101  worker-1       60  60.0%         0.6 s        60.0%\n"
		"  102  worker-2       30  30.0%         0.3 s        30.0%\n"
		"  100  app            10  10.0%         0.1 s        10.0%\n"
		"  103  evil?[2J        0   0.0%         0.0 s         0.0%\n"
		"pools\n"
		"  pool      threads  samples  share  measured CPU  of measured\n"
		"  ────────────────────────────────────────────────────────────\n"
		"  worker-#        2       90  90.0%         0.9 s        90.0%\n"
		"\n"
		"how it was sampled\n"
		"  method     perf cpu-clock at 99 Hz per thread for 10 s\n"
		"  samples    100 kept, 2 lost\n"
		"  kernel     frames named from /proc/kallsyms\n"
		"  CPU        the target used 1.00 s of CPU; the samples account for 1.01 s at 99 Hz\n"
		"  overhead   the target ran 0.4% slower (a spinner's loop rate); vitals used "
		"0.02 s of CPU\n"
		"  unwinding  module     steps  dwarf  frame pointers  kernel  symbols  lines\n"
		"             app          100    90%             10%      0%  symtab   none\n"
		"             libc.so.6     70   100%              0%      0%  dynsym   debug file\n"
		"  debug files  libc.so.6: /usr/lib/debug/.build-id/93/ac61.debug\n"
		"  not used     app: /usr/lib/debug/.build-id/ab/cdef.debug (its build ID is not the module's)\n";
	CHECK_STR(text, want);
	if (text && strcmp(text, want) != 0)
		printf("# got:\n%s", text);
	CHECK(strchr(text, '\x1b') == NULL);
	free(text);
	vt_prof_summary_free(&s);
	vt_bucket_rules_free(&r);
	vt_profile_free(&p);
}

static void test_summary__json_and_wall_text(void)
{
	struct vt_profile *p = work_profile();
	struct vt_bucket_rules *r;
	struct vt_prof_summary *s;
	struct vt_err err;
	char *text = NULL;
	size_t len = 0;
	p->meta.wall = true;
	p->meta.wall_hz = 99;
	CHECK(pb_stack(p, 0, VT_PROF_SLEEPING, "sk_wait_data", 40, "[kernel]!sk_wait_data",
		       "libc.so.6!recv", NULL) == VT_OK);
	CHECK(pb_stack(p, 0, VT_PROF_SLEEPING, "futex_wait_queue", 25,
		       "libc.so.6!pthread_cond_wait", NULL) == VT_OK);
	CHECK(vt_bucket_rules_builtin(&r, &err) == VT_OK);
	CHECK(vt_prof_summarize(p, r, NULL, &s, &err) == VT_OK);

	FILE *out = open_memstream(&text, &len);
	CHECK(vt_render_profile_json(out, s, false) == 0);
	fclose(out);
	json_error_t jerr;
	json_t *doc = json_loads(text, 0, &jerr);
	CHECK(doc != NULL);
	CHECK_STR(json_string_value(json_object_get(doc, "schema")), "vitals.profile");
	json_t *b0 = json_array_get(json_object_get(doc, "buckets"), 0);
	CHECK_STR(json_string_value(json_object_get(b0, "name")), "network send/recv");
	CHECK_EQ_U64(json_integer_value(json_object_get(b0, "samples")), 60);
	json_t *wall = json_object_get(b0, "wall");
	CHECK_EQ_U64(json_integer_value(json_object_get(wall, "waiting")), 40);
	CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(wall, "waiting_on"), 0),
						     "on")), "sk_wait_data");
	json_t *waits = json_object_get(doc, "waits");
	CHECK_EQ_U64(json_integer_value(json_object_get(waits, "idle")), 25);
	CHECK_EQ_U64(json_integer_value(json_object_get(json_object_get(waits, "by_class"), "futex")), 25);
	CHECK(NEAR(json_real_value(json_object_get(json_array_get(json_object_get(doc, "threads"), 0),
						   "cpu_s")), 0.6, 1e-9));
	CHECK(json_real_value(json_object_get(json_object_get(doc, "overhead"), "fraction")) > 0);
	json_decref(doc);
	free(text);

	text = NULL;
	out = open_memstream(&text, &len);
	CHECK(vt_render_profile_text(out, s, NULL) == 0);
	fclose(out);
	CHECK(strstr(text, "idle waits: 25 samples of threads with nothing to do, left out (futex 25)") != NULL);
	CHECK(strstr(text, "where the wall time went: 140 samples") != NULL);
	CHECK(strstr(text, "sk_wait_data 40") != NULL);
	free(text);
	vt_prof_summary_free(&s);
	vt_bucket_rules_free(&r);
	vt_profile_free(&p);
}

/*
 * A thread-per-request server at 99 Hz: 5 samples for 0.45 s of CPU, threads coming
 * and going.  Most of the CPU was not sampled: said, with the rate that samples them;
 * not said when little was missed, when no thread came or went, for ptrace, or for
 * too little CPU to judge.
 */
static struct vt_profile *request_profile(void)
{
	struct vt_profile *p;
	struct vt_err err;
	CHECK(vt_profile_new(&p, &err) == VT_OK);
	uint32_t t = vt_profile_intern_thread(p, 200, "req-17");
	p->threads[t].cpu_s = 0.04;
	CHECK(pb_stack(p, t, VT_PROF_RUNNING, NULL, 5, "app!handle", "app!main", NULL) == VT_OK);
	snprintf(p->meta.comm, sizeof(p->meta.comm), "server");
	snprintf(p->meta.method, sizeof(p->meta.method), "perf cpu-clock");
	p->meta.hz = 99;
	p->meta.duration_s = 5;
	p->meta.process_cpu_s = 0.45;
	p->meta.threads_inherited = true;
	p->meta.threads_started = 12;
	p->meta.threads_ended = 11;
	return p;
}

static struct vt_prof_summary *summary_of(struct vt_profile *p)
{
	struct vt_bucket_rules *r;
	struct vt_prof_summary *s = NULL;
	struct vt_err err;
	CHECK(vt_bucket_rules_builtin(&r, &err) == VT_OK);
	CHECK(vt_prof_summarize(p, r, NULL, &s, &err) == VT_OK);
	vt_bucket_rules_free(&r);
	return s;
}

/* s as the text view prints it (the caller frees it). */
static char *text_of(const struct vt_prof_summary *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	CHECK(vt_render_profile_text(out, s, NULL) == 0);
	fclose(out);
	return text;
}

/* s as the JSON view writes it, parsed (the caller json_decrefs it). */
static json_t *json_of(const struct vt_prof_summary *s)
{
	char *text = NULL;
	size_t len = 0;
	json_error_t jerr;
	FILE *out = open_memstream(&text, &len);

	CHECK(vt_render_profile_json(out, s, false) == 0);
	fclose(out);
	json_t *doc = json_loads(text, 0, &jerr);
	free(text);
	return doc;
}

static void test_summary__unsampled_short_threads(void)
{
	struct vt_profile *p = request_profile();
	struct vt_prof_summary *s = summary_of(p);
	char *text;

	CHECK(NEAR(s->used_cpu_s, 0.45, 1e-9));
	CHECK(NEAR(s->sampled_cpu_s, 5 / 99.0, 1e-9));
	CHECK(NEAR(s->unsampled_share, 1 - 5 / 99.0 / 0.45, 1e-9));   /* 89% */
	CHECK(NEAR(s->unlisted_cpu_s, 0.41, 1e-9));
	CHECK(s->unsampled_cause == VT_PROF_UNSAMPLED_SHORT_THREADS);
	CHECK_EQ_U64(s->hz_advice, 990);
	text = text_of(s);
	CHECK(strstr(text, "  CPU        the target used 0.45 s of CPU; the samples account for "
			   "0.05 s at 99 Hz\n"
			   "             89% of it was not sampled, and threads came and went (at "
			   "least 12 started and 11\n") != NULL);
	CHECK(strstr(text, "--hz 990 samples those that use 1/990 s (1.0 ms)") != NULL);
	free(text);
	json_t *doc = json_of(s);
	json_t *u = json_object_get(doc, "unsampled");
	CHECK(NEAR(json_real_value(json_object_get(doc, "unsampled_share")), 0.8878, 1e-4));
	CHECK_STR(json_string_value(json_object_get(u, "cause")), "short_lived_threads");
	CHECK_EQ_U64(json_integer_value(json_object_get(u, "hz_advice")), 990);
	CHECK_EQ_U64(json_integer_value(json_object_get(u, "threads_started")), 12);
	const char *advice = json_string_value(json_object_get(u, "advice"));
	CHECK(advice && strstr(advice, "--hz 990") != NULL);
	json_decref(doc);
	vt_prof_summary_free(&s);

	/* at the highest rate already: named, no rate to advise */
	p->meta.hz = 10000;
	s = summary_of(p);
	CHECK(s->unsampled_cause == VT_PROF_UNSAMPLED_SHORT_THREADS);   /* 5 samples: 0.0005 s */
	CHECK_EQ_U64(s->hz_advice, 0);
	vt_prof_summary_free(&s);
	/* events per thread (too many threads x CPUs to inherit): no rate helps */
	p->meta.hz = 99;
	p->meta.threads_inherited = false;
	s = summary_of(p);
	CHECK(s->unsampled_cause == VT_PROF_UNSAMPLED_UNLISTED_THREADS);
	CHECK_EQ_U64(s->hz_advice, 0);
	vt_prof_summary_free(&s);
	vt_profile_free(&p);
}

static void test_summary__unsampled_not_named(void)
{
	struct vt_profile *p = request_profile();
	struct vt_prof_summary *s;
	char *text = NULL;
	size_t len = 0;

	/* no thread came or went, and the threads listed account for the process's CPU: the
	 * gap is not short-lived threads (samples lost, say), and no cause is named */
	p->meta.threads_started = p->meta.threads_ended = 0;
	p->threads[0].cpu_s = 0.45;
	s = summary_of(p);
	CHECK(s->unsampled_share > 0.8);
	CHECK(s->unsampled_cause == VT_PROF_UNSAMPLED_NONE);
	FILE *out = open_memstream(&text, &len);
	CHECK(vt_render_profile_text(out, s, NULL) == 0);
	fclose(out);
	CHECK(strstr(text, "not sampled") == NULL);
	free(text);
	vt_prof_summary_free(&s);
	/* none came or went that a listing saw, but most of the CPU is of threads none saw */
	p->threads[0].cpu_s = 0.04;
	s = summary_of(p);
	CHECK(s->unsampled_cause == VT_PROF_UNSAMPLED_SHORT_THREADS);
	vt_prof_summary_free(&s);
	/* under half missed: 20 samples of 1/99 s of 0.3 s */
	p->meta.threads_started = 3;
	p->meta.process_cpu_s = 0.3;
	CHECK(pb_stack(p, 0, VT_PROF_RUNNING, NULL, 15, "app!handle", "app!main", NULL) == VT_OK);
	s = summary_of(p);
	CHECK(NEAR(s->unsampled_share, 1 - 20 / 99.0 / 0.3, 1e-9));
	CHECK(s->unsampled_cause == VT_PROF_UNSAMPLED_NONE);
	vt_prof_summary_free(&s);
	/* ptrace weighs stops by CPU: not this gap */
	snprintf(p->meta.method, sizeof(p->meta.method), "ptrace");
	p->meta.process_cpu_s = 2;
	s = summary_of(p);
	CHECK(s->unsampled_share > 0.5 && s->unsampled_cause == VT_PROF_UNSAMPLED_NONE);
	vt_prof_summary_free(&s);
	/* too little CPU to judge */
	snprintf(p->meta.method, sizeof(p->meta.method), "perf cpu-clock");
	p->meta.process_cpu_s = 0.04;
	s = summary_of(p);
	CHECK(s->unsampled_share < 0 && s->unsampled_cause == VT_PROF_UNSAMPLED_NONE);
	vt_prof_summary_free(&s);
	vt_profile_free(&p);
}

/*
 * A pool of 500 workers there throughout, each using 2 ms of CPU over the profile (under
 * one 1/99 s period: no sample), beside one busy thread: the 1 s they use is missed, and
 * the buckets stand for the busy thread only.  Said, with the rate that samples them.
 */
static void test_summary__unsampled_thin_threads(void)
{
	struct vt_profile *p;
	struct vt_prof_summary *s;
	struct vt_err err;
	char *text, name[32];

	CHECK(vt_profile_new(&p, &err) == VT_OK);
	uint32_t busy = vt_profile_intern_thread(p, 100, "busy");
	p->threads[busy].cpu_s = 2.0;
	CHECK(pb_stack(p, busy, VT_PROF_RUNNING, NULL, 198, "app!crunch", "app!main", NULL) == VT_OK);
	for (int i = 0; i < 500; i++) {
		snprintf(name, sizeof(name), "worker-%d", i);
		uint32_t t = vt_profile_intern_thread(p, 200 + i, name);   /* may move p->threads */

		p->threads[t].cpu_s = 0.002;
	}
	snprintf(p->meta.comm, sizeof(p->meta.comm), "pool");
	snprintf(p->meta.method, sizeof(p->meta.method), "perf cpu-clock");
	p->meta.hz = 99;
	p->meta.duration_s = 5;
	p->meta.process_cpu_s = 3.0;
	p->meta.threads_inherited = true;
	s = summary_of(p);
	CHECK(NEAR(s->unsampled_share, 1 - 2.0 / 3.0, 1e-9));
	CHECK(s->unsampled_cause == VT_PROF_UNSAMPLED_THIN_THREADS);
	CHECK_EQ_U64(s->thin_threads, 500);
	CHECK_EQ_U64(s->hz_advice, 990);
	text = text_of(s);
	CHECK(strstr(text, "33% of it was not sampled: 500 threads used CPU but under 1/99 s each") != NULL);
	CHECK(strstr(text, "--hz 990 samples those that use 1/990 s") != NULL);
	free(text);
	json_t *doc = json_of(s);
	CHECK_STR(json_string_value(json_object_get(json_object_get(doc, "unsampled"), "cause")),
		  "threads_under_one_period");
	json_decref(doc);
	vt_prof_summary_free(&s);
	/* under a tenth missed: nothing said */
	p->meta.process_cpu_s = 2.1;
	for (int i = 0; i < 500; i++)
		p->threads[1 + i].cpu_s = 0.0002;
	s = summary_of(p);
	CHECK(s->unsampled_cause == VT_PROF_UNSAMPLED_NONE && s->thin_threads == 0);
	vt_prof_summary_free(&s);
	vt_profile_free(&p);
}

VT_TEST_MAIN(test_summary__wilson, test_summary__buckets_functions_threads,
	     test_summary__few_samples_and_ties, test_summary__wall_split, test_summary__text_view,
	     test_summary__json_and_wall_text, test_summary__unsampled_short_threads,
	     test_summary__unsampled_not_named, test_summary__unsampled_thin_threads)

/*
 * profile_text.c — `vitals profile` as text (see profile_text.h).
 */
#include "render/profile_text.h"
#include "render/locks.h"

#include "render/soak_fmt.h"
#include "render/table.h"

#include <limits.h>
#include <math.h>
#include <string.h>

#define DEFAULT_TOP 10
#define DEFAULT_THREADS 20
#define MAX_MODULES 15
#define DEFAULT_COLUMNS 120   /* the width the function tables keep to, unless told */
#define FUNC_COLS_MIN 24     /* a function's name gets at least this many */
#define SOURCE_COLS_MAX 24   /* "file.c:123", cut in its middle beyond */

/* A module's symbol and line sources as the modules table says them (elf/unwind.h's
 * names, but for what stands out: no symbols at all, and not looked for). */
static const char *symbols_name(uint8_t s)
{
	return s == VT_SYMS_NONE ? "none (addresses)" : vt_sym_source_name(s);
}

static const char *lines_name(uint8_t s)
{
	return s == VT_LINES_UNKNOWN ? "-" : vt_line_source_name(s);
}

/* "60.0%" of a fraction. */
static const char *pct(double f, char *buf, size_t cap)
{
	snprintf(buf, cap, "%.1f%%", 100.0 * f);
	return buf;
}

static void print_header(FILE *out, const struct vt_prof_summary *s)
{
	const struct vt_prof_meta *m = &s->meta;
	char comm[sizeof(m->comm)], method[sizeof(m->method)], span[32];

	fprintf(out, "vitals profile · pid %d (%s) · %s at %.0f Hz per thread · %s\n", (int)m->pid,
		vt_text_printable(m->comm, comm, sizeof(comm)),
		vt_fmt_span(m->duration_s, span, sizeof(span)), m->hz,
		vt_text_printable(m->method, method, sizeof(method)));
	if (m->exited)
		fprintf(out, "the target exited before the end: this is the profile so far\n");
	if (m->interrupted)
		fprintf(out, "stopped early (Ctrl-C): this is the profile so far\n");
}

/* "sk_wait_data 30, read/recv 2" */
static const char *waits_text(const struct vt_prof_bucket_row *b, char *buf, size_t cap)
{
	size_t used = 0;

	buf[0] = '\0';
	for (uint32_t i = 0; i < b->nwaits; i++) {
		int w = snprintf(buf + used, cap - used, "%s%s %llu", i ? ", " : "", b->waits[i].what,
				 (unsigned long long)b->waits[i].samples);
		if (w < 0 || (size_t)w >= cap - used)
			break;
		used += (size_t)w;
	}
	return buf;
}

static void print_idle(FILE *out, const struct vt_prof_summary *s)
{
	char buf[256];
	size_t used = 0;

	if (!s->meta.wall) {
		fprintf(out, "  idle waits: none sampled (CPU mode: a sleeping thread takes no CPU "
			"samples; --wall samples them)\n");
		return;
	}
	buf[0] = '\0';
	for (int c = 0; c < VT_WAITC__COUNT; c++) {
		if (!vt_wait_class_idle(c) || !s->waits[c])
			continue;
		int w = snprintf(buf + used, sizeof(buf) - used, "%s%s %llu", used ? ", " : "",
				 vt_wait_class_name(c), (unsigned long long)s->waits[c]);
		if (w < 0 || (size_t)w >= sizeof(buf) - used)
			break;
		used += (size_t)w;
	}
	fprintf(out, "  idle waits: %llu samples of threads with nothing to do, left out%s%s%s\n",
		(unsigned long long)s->idle_samples, used ? " (" : "", buf, used ? ")" : "");
}

static void print_buckets(FILE *out, const struct vt_prof_summary *s)
{
	struct vt_table t;
	char a[32], b[32];
	bool tied = false;

	for (uint32_t i = 0; i < s->nbuckets; i++)
		tied |= s->buckets[i].tied_next && !s->few_samples;
	fprintf(out, "\nwhere the CPU went: %llu on-CPU samples, bucketed by top of stack\n",
		(unsigned long long)s->cpu_samples);
	if (s->meta.kernel_refused && s->meta.process_cpu_s > 0 && s->meta.hz > 0) {
		double missed = 1 - (double)s->cpu_samples / s->meta.hz / s->meta.process_cpu_s;
		fprintf(out, "  user-space time only: the kernel refused kernel samples "
			"(perf_event_paranoid), so about %.0f%% of the\n  target's CPU, its time in "
			"system calls, is not in this table (threads below: sampled vs measured)\n",
			missed > 0 ? 100 * missed : 0);
	}
	if (!strcmp(s->meta.method, "ptrace") && s->meta.stops < VT_PROFILE_FEW_STOPS)
		fprintf(out, "  cannot tell yet: only %llu stops of running threads (a busy box), too "
			"few to split each\n  thread's CPU between its stacks; the threads' shares "
			"below hold, the buckets may not:\n  profile longer (--for)\n",
			(unsigned long long)s->meta.stops);
	/* a fifth column, "≈ next", only when a row needs it (the underline spans every column) */
	vt_table_init(&t, tied ? 5 : 4);
	for (int c = 1; c < 4; c++)
		vt_table_align(&t, c, VT_RIGHT);
	vt_table_cell(&t, "bucket");
	vt_table_cell(&t, "share");
	vt_table_cell(&t, "±");
	vt_table_cell(&t, "samples");
	if (tied)
		vt_table_cell(&t, "%s", "");
	for (uint32_t i = 0; i < s->nbuckets; i++) {
		const struct vt_prof_bucket_row *r = &s->buckets[i];
		if (!r->cpu.samples)
			continue;
		vt_table_cell(&t, "%s", r->name);
		vt_table_cell(&t, "%s", pct(r->cpu.share, a, sizeof(a)));
		vt_table_cell(&t, "±%s", pct(r->cpu.pm, b, sizeof(b)));
		vt_table_cell(&t, "%llu", (unsigned long long)r->cpu.samples);
		if (tied)
			vt_table_cell(&t, "%s", r->tied_next ? "≈ next" : "");
	}
	vt_table_print(&t, out, 2, true);
	vt_table_release(&t);
	print_idle(out, s);
	char glob[sizeof(s->meta.threads_glob)];
	if (!s->cpu_samples) {
		if (s->meta.threads_glob[0])
			fprintf(out, "  no on-CPU samples of threads named like '%s' (%llu samples of "
				"the others left out)\n",
				vt_text_printable(s->meta.threads_glob, glob, sizeof(glob)),
				(unsigned long long)s->meta.filtered);
		else
			fprintf(out, "  no on-CPU samples: the target did not run while it was "
				"sampled\n");
	} else if (s->few_samples) {
		fprintf(out, "  only %llu on-CPU samples: cannot tell yet which bucket leads (the ± "
			"figures overlap); sample longer (--for) or faster (--hz)\n",
			(unsigned long long)s->cpu_samples);
	} else if (tied) {
		fprintf(out, "  ≈ next: its share cannot be told apart from the next bucket's at "
			"this many samples\n");
	}
	for (uint32_t i = 0; i < s->nbuckets; i++)
		if (s->buckets[i].runtime && s->buckets[i].cpu.samples)
			fprintf(out, "  %s: the runtime's own code; the functions of the program it runs "
				"are not named here (a runtime-aware profiler names them)\n",
				s->buckets[i].name);
}

static void print_wall(FILE *out, const struct vt_prof_summary *s)
{
	struct vt_table t;
	char a[32], b[32], waits[256];

	fprintf(out, "\nwhere the wall time went: %llu samples of threads running, runnable or "
		"blocked (idle waits left out)\n", (unsigned long long)s->wall_samples);
	vt_table_init(&t, 7);
	for (int c = 1; c < 6; c++)
		vt_table_align(&t, c, VT_RIGHT);
	vt_table_cell(&t, "bucket");
	vt_table_cell(&t, "wall");
	vt_table_cell(&t, "±");
	vt_table_cell(&t, "running");
	vt_table_cell(&t, "runnable");
	vt_table_cell(&t, "waiting");
	vt_table_cell(&t, "waiting on");
	for (uint32_t i = 0; i < s->nbuckets; i++) {
		const struct vt_prof_bucket_row *r = &s->buckets[i];
		if (!r->wall.samples)
			continue;
		vt_table_cell(&t, "%s", r->name);
		vt_table_cell(&t, "%s", pct(r->wall.share, a, sizeof(a)));
		vt_table_cell(&t, "±%s", pct(r->wall.pm, b, sizeof(b)));
		vt_table_cell(&t, "%llu", (unsigned long long)r->wall_running);
		vt_table_cell(&t, "%llu", (unsigned long long)r->wall_runnable);
		vt_table_cell(&t, "%llu", (unsigned long long)r->wall_waiting);
		vt_table_cell(&t, "%s", waits_text(r, waits, sizeof(waits)));
	}
	vt_table_print(&t, out, 2, true);
	vt_table_release(&t);
}

/* "file.c:123" of a row, cut in its middle to SOURCE_COLS_MAX; "" without one. */
static const char *defined_at(const struct vt_prof_func_row *row, char *buf, size_t cap)
{
	char where[SOURCE_COLS_MAX * 4 + 24];
	const char *base = strrchr(row->file, '/');

	if (!row->file[0])
		return buf[0] = '\0', buf;
	snprintf(where, sizeof(where), "%s:%u", base ? base + 1 : row->file, row->line);
	return vt_text_clip_middle(where, SOURCE_COLS_MAX, buf, cap);
}

/*
 * The top functions.  A function's name gets the columns the others leave
 * of the width (a C++ or Rust name with its generics spelled out runs to
 * hundreds): shortened by vt_name_shorten, whole with wide.
 */
static void print_funcs(FILE *out, const struct vt_prof_func_row *rows, uint32_t n, uint32_t top,
			bool self, uint32_t seen, const struct vt_profile_text_opts *o)
{
	static const char inlined[] = " (inlined)";
	struct vt_table t;
	char a[32], where[SOURCE_COLS_MAX * 4 + 8];
	uint32_t shown = n < top ? n : top;
	size_t module_w = strlen("module"), count_w = strlen(self ? "self" : "total"), where_w = 0;
	size_t columns = o && o->columns ? o->columns : DEFAULT_COLUMNS, others, budget;

	if (!n)
		return;
	for (uint32_t i = 0; i < shown; i++) {
		size_t m = strlen(rows[i].module[0] ? rows[i].module : "?"), w;
		uint64_t v = self ? rows[i].self : rows[i].total;

		module_w = m > module_w ? m : module_w;
		for (w = 1; v >= 10; v /= 10)
			w++;
		count_w = w > count_w ? w : count_w;
		w = strlen(defined_at(&rows[i], where, sizeof(where)));
		if (w && w < strlen("defined at"))
			w = strlen("defined at");
		where_w = w > where_w ? w : where_w;
	}
	/* indent 2, then each other column and the two spaces before it */
	others = 2 + (2 + module_w) + (2 + count_w) + (2 + strlen("100.0%")) + (where_w ? 2 + where_w : 0);
	budget = columns > others + FUNC_COLS_MIN ? columns - others : FUNC_COLS_MIN;
	fprintf(out, self ? "\ntop functions by self (on-CPU samples with it at the leaf)\n"
			  : "\ntop functions by total (on-CPU samples with it anywhere on the stack)\n");
	vt_table_init(&t, where_w ? 5 : 4);
	vt_table_align(&t, 2, VT_RIGHT);
	vt_table_align(&t, 3, VT_RIGHT);
	vt_table_cell(&t, "function");
	vt_table_cell(&t, "module");
	vt_table_cell(&t, self ? "self" : "total");
	vt_table_cell(&t, "share");
	if (where_w)
		vt_table_cell(&t, "defined at");
	for (uint32_t i = 0; i < shown; i++) {
		char name[4200];
		/* "(inlined)": it never ran as a function of its own, as perf --inline says */
		size_t cols = budget - (rows[i].inlined ? sizeof(inlined) - 1 : 0);

		vt_table_cell(&t, "%s%s", o && o->wide ? rows[i].label
					   : vt_name_shorten(rows[i].label, cols, name, sizeof(name)),
			      rows[i].inlined ? inlined : "");
		vt_table_cell(&t, "%s", rows[i].module[0] ? rows[i].module : "?");
		vt_table_cell(&t, "%llu", (unsigned long long)(self ? rows[i].self : rows[i].total));
		vt_table_cell(&t, "%s", pct(self ? rows[i].self_share : rows[i].total_share, a, sizeof(a)));
		if (where_w)
			vt_table_cell(&t, "%s", defined_at(&rows[i], where, sizeof(where)));
	}
	vt_table_print(&t, out, 2, true);
	vt_table_release(&t);
	if (seen > shown)
		fprintf(out, "  (%u more function%s)\n", seen - shown, seen - shown == 1 ? "" : "s");
}

static void measured_cells(struct vt_table *t, double cpu_s, double share)
{
	char a[32];

	vt_table_cell(t, "%s", vt_fmt_value(VT_UNIT_SECONDS, cpu_s >= 0 ? cpu_s : NAN, a, sizeof(a)));
	if (share >= 0)
		vt_table_cell(t, "%.1f%%", 100.0 * share);
	else
		vt_table_cell(t, "n/a");
}

static void print_threads(FILE *out, const struct vt_prof_summary *s, uint32_t max)
{
	struct vt_table t;
	char a[32];
	uint32_t shown = s->nthreads < max ? s->nthreads : max;

	if (!s->nthreads)
		return;
	fprintf(out, "\nthreads (share of on-CPU samples beside each thread's measured CPU)\n");
	vt_table_init(&t, 6);
	vt_table_align(&t, 0, VT_RIGHT);
	for (int c = 2; c < 6; c++)
		vt_table_align(&t, c, VT_RIGHT);
	vt_table_cell(&t, "tid");
	vt_table_cell(&t, "thread");
	vt_table_cell(&t, "samples");
	vt_table_cell(&t, "share");
	vt_table_cell(&t, "measured CPU");
	vt_table_cell(&t, "of measured");
	for (uint32_t i = 0; i < shown; i++) {
		const struct vt_prof_thread_row *th = &s->threads[i];
		vt_table_cell(&t, "%d", (int)th->tid);
		vt_table_cell(&t, "%s", th->name);
		vt_table_cell(&t, "%llu", (unsigned long long)th->cpu.samples);
		vt_table_cell(&t, "%s", pct(th->cpu.share, a, sizeof(a)));
		measured_cells(&t, th->cpu_s, th->cpu_s_share);
	}
	vt_table_print(&t, out, 2, true);
	vt_table_release(&t);
	if (s->nthreads > shown)
		fprintf(out, "  (%u more thread%s)\n", s->nthreads - shown,
			s->nthreads - shown == 1 ? "" : "s");
	if (!s->npools)
		return;
	fprintf(out, "pools\n");
	vt_table_init(&t, 6);
	for (int c = 1; c < 6; c++)
		vt_table_align(&t, c, VT_RIGHT);
	vt_table_cell(&t, "pool");
	vt_table_cell(&t, "threads");
	vt_table_cell(&t, "samples");
	vt_table_cell(&t, "share");
	vt_table_cell(&t, "measured CPU");
	vt_table_cell(&t, "of measured");
	for (uint32_t i = 0; i < s->npools; i++) {
		const struct vt_prof_pool_row *pl = &s->pools[i];
		vt_table_cell(&t, "%s", pl->name);
		vt_table_cell(&t, "%u", pl->threads);
		vt_table_cell(&t, "%llu", (unsigned long long)pl->cpu.samples);
		vt_table_cell(&t, "%s", pct(pl->cpu.share, a, sizeof(a)));
		measured_cells(&t, pl->cpu_s, pl->cpu_s_share);
	}
	vt_table_print(&t, out, 2, true);
	vt_table_release(&t);
}

/* The separate debug files read, and those refused (a stale -dbgsym package, another
 * build's file under the same name): why a module has no source lines. */
static void print_debug_files(FILE *out, const struct vt_prof_summary *s)
{
	static const char *const label[2] = { "  debug files", "  not used" };
	char name[256], path[PATH_MAX + 64];
	bool said[2] = { false, false };

	for (int kind = 0; kind < 2; kind++)
		for (uint32_t i = 0, shown = 0; i < s->nmodules && shown < MAX_MODULES; i++) {
			const struct vt_prof_module_row *m = &s->modules[i];
			const char *file = kind ? m->debug_ignored : m->debug_file;

			if (!m->frames_total)
				continue;
			shown++;
			if (!file)
				continue;
			fprintf(out, "%-13s  %s: %s", said[kind] ? "" : label[kind],
				vt_text_printable(m->name, name, sizeof(name)),
				vt_text_printable(file, path, sizeof(path)));
			if (kind)
				fprintf(out, " (%s)", m->debug_ignored_why ? m->debug_ignored_why : "not its own");
			fputc('\n', out);
			said[kind] = true;
		}
}

static void print_modules(FILE *out, const struct vt_prof_summary *s)
{
	struct vt_table t;
	uint32_t shown = 0, with_steps = 0;

	for (uint32_t i = 0; i < s->nmodules; i++)
		with_steps += s->modules[i].frames_total > 0;
	if (!with_steps) {
		fprintf(out, "  unwinding  no caller steps recorded\n");
		return;
	}
	vt_table_init(&t, 8);
	for (int c = 2; c < 6; c++)
		vt_table_align(&t, c, VT_RIGHT);
	vt_table_cell(&t, "  unwinding");
	vt_table_cell(&t, "module");
	vt_table_cell(&t, "steps");
	vt_table_cell(&t, "%s", vt_unwind_method_name(VT_UNWIND_DWARF));
	vt_table_cell(&t, "%s", vt_unwind_method_name(VT_UNWIND_FP));
	vt_table_cell(&t, "%s", vt_unwind_method_name(VT_UNWIND_KERNEL));
	vt_table_cell(&t, "symbols");
	vt_table_cell(&t, "lines");
	for (uint32_t i = 0; i < s->nmodules && shown < MAX_MODULES; i++) {
		const struct vt_prof_module_row *m = &s->modules[i];
		if (!m->frames_total)
			continue;
		shown++;
		vt_table_cell(&t, "%s", "");
		vt_table_cell(&t, "%s", m->name);
		vt_table_cell(&t, "%llu", (unsigned long long)m->frames_total);
		for (int k = VT_UNWIND_DWARF; k <= VT_UNWIND_KERNEL; k++)
			vt_table_cell(&t, "%.0f%%", 100.0 * (double)m->frames[k] / (double)m->frames_total);
		vt_table_cell(&t, "%s", symbols_name(m->symbols));
		vt_table_cell(&t, "%s", lines_name(m->lines));
	}
	vt_table_print(&t, out, 0, false);
	vt_table_release(&t);
	if (with_steps > shown)
		fprintf(out, "             (%u more modules)\n", with_steps - shown);
	print_debug_files(out, s);
}

/* Short-lived threads are sampled less, or not at all: say what that hides, and what to do. */
static void print_unsampled(FILE *out, const struct vt_prof_summary *s)
{
	const struct vt_prof_meta *m = &s->meta;
	char churn[96], text[640];
	size_t w;

	if (s->unsampled_cause == VT_PROF_UNSAMPLED_NONE)
		return;
	if (s->unsampled_cause == VT_PROF_UNSAMPLED_THIN_THREADS) {
		w = (size_t)snprintf(text, sizeof(text), "%.0f%% of it was not sampled: %u threads used CPU "
				     "but under 1/%.0f s each (cpu-clock counts each thread's period from "
				     "zero), so none of it is in the buckets, whose shares are of the "
				     "rest", 100 * s->unsampled_share, s->thin_threads, m->hz);
		if (s->hz_advice)
			snprintf(text + w, sizeof(text) - w, "; --hz %u samples those that use 1/%u s (%.1f ms)",
				 s->hz_advice, s->hz_advice, 1e3 / s->hz_advice);
		vt_print_wrapped(out, text, 13, 100, 0);
		return;
	}
	/* what was seen of the churn: threads that lived between two listings and got no
	 * sample are in neither count */
	snprintf(churn, sizeof(churn), "at least %u started and %u ended", m->threads_started,
		 m->threads_ended);
	if (m->threads_started + m->threads_ended == 0)
		snprintf(churn, sizeof(churn), "%.2f s of CPU is of threads no listing saw",
			 s->unlisted_cpu_s);
	w = (size_t)snprintf(text, sizeof(text), "%.0f%% of it was not sampled, and threads came "
			     "and went (%s): ", 100 * s->unsampled_share, churn);
	if (s->unsampled_cause == VT_PROF_UNSAMPLED_UNLISTED_THREADS)
		snprintf(text + w, sizeof(text) - w, "threads that live less than the 0.1 s between "
			 "two listings get no perf events (a thread per request), at any rate; "
			 "`vitals threads` counts their CPU");
	else if (s->hz_advice)
		snprintf(text + w, sizeof(text) - w, "each thread is first sampled after 1/%.0f s of "
			 "its own CPU (cpu-clock counts every thread's period from zero), so a thread "
			 "that uses less in its whole life, one per request, is never sampled; --hz %u "
			 "samples those that use 1/%u s (%.1f ms); `vitals threads` counts their CPU",
			 m->hz, s->hz_advice, s->hz_advice, 1e3 / s->hz_advice);
	else
		snprintf(text + w, sizeof(text) - w, "each thread is first sampled after 1/%.0f s of "
			 "its own CPU, so a thread that uses less in its whole life is never sampled, "
			 "and no higher rate is allowed; `vitals threads` counts their CPU", m->hz);
	vt_print_wrapped(out, text, 13, 100, 0);
}

static void print_how(FILE *out, const struct vt_prof_summary *s)
{
	const struct vt_prof_meta *m = &s->meta;
	char method[sizeof(m->method)], span[32], how[sizeof(m->overhead_how)];

	fprintf(out, "\nhow it was sampled\n");
	fprintf(out, "  method     %s at %.0f Hz per thread for %s",
		vt_text_printable(m->method, method, sizeof(method)), m->hz,
		vt_fmt_span(m->duration_s, span, sizeof(span)));
	if (m->wall)
		fprintf(out, "; every thread, blocked or not (wall): looked at %.3g times a second, "
			"each look counting %.3g samples of 1/%.0f s", m->wall_hz, m->hz / m->wall_hz, m->hz);
	if (m->method_note[0]) {
		char note[sizeof(m->method_note)];
		fprintf(out, "\n  why        %s", vt_text_printable(m->method_note, note, sizeof(note)));
	}
	if (m->paused_s > 0)
		fprintf(out, "\n  stopped    the target's threads stood stopped %.1f ms in all, at most "
			"%.2f%% of one thread's time", m->paused_s * 1e3, 100.0 * m->paused_max_share);
	if (!strcmp(m->method, "ptrace")) {
		fprintf(out, "\n  samples    %llu kept from %llu stops, %llu looks the pause budget "
			"held back or that timed out", (unsigned long long)m->samples,
			(unsigned long long)m->stops, (unsigned long long)m->lost);
	}
	else
		fprintf(out, "\n  samples    %llu kept, %llu lost", (unsigned long long)m->samples,
			(unsigned long long)m->lost);
	if (m->unwind_failed)
		fprintf(out, ", %llu not unwound past the leaf", (unsigned long long)m->unwind_failed);
	if (s->truncated_samples)
		fprintf(out, ", %llu on-CPU with stacks cut short of the root",
			(unsigned long long)s->truncated_samples);
	fprintf(out, "\n");
	if (m->kernel_refused)
		fprintf(out, "  kernel     not sampled: perf_event_paranoid allows user space only, so "
			"time in system calls is missing\n             from the samples (CPU below "
			"counts it); kernel.perf_event_paranoid=1 or CAP_PERFMON samples it\n");
	else if (!strcmp(m->method, "ptrace"))
		fprintf(out, "  kernel     frames named by the system call in progress\n");
	else
		fprintf(out, m->kernel_symbols ? "  kernel     frames named from /proc/kallsyms\n"
					       : "  kernel     frames not named: /proc/kallsyms shows no "
						 "addresses (kernel.kptr_restrict, or\n             "
						 "perf_event_paranoid > 1 without CAP_SYSLOG); they show as "
						 "[kernel]+0x...\n");
	if (s->used_cpu_s >= 0 && s->sampled_cpu_s >= 0)
		fprintf(out, "  CPU        %s used %.2f s of CPU; the samples account for %.2f s at "
			"%.0f Hz\n", m->threads_glob[0] ? "the threads kept" : "the target",
			s->used_cpu_s, s->sampled_cpu_s, m->hz);
	print_unsampled(out, s);
	if (isfinite(m->overhead) && m->overhead >= 0)
		fprintf(out, "  overhead   the target ran %.1f%% slower%s%s%s", 100.0 * m->overhead,
			m->overhead_how[0] ? " (" : "",
			vt_text_printable(m->overhead_how, how, sizeof(how)),
			m->overhead_how[0] ? ")" : "");
	else
		fprintf(out, "  overhead   on the target not measured");
	if (m->self_cpu_s >= 0)
		fprintf(out, "; vitals used %.2f s of CPU", m->self_cpu_s);
	fprintf(out, "\n");
	print_modules(out, s);
}

/* Wall mode: the locks the blocked threads waited on, as vitals locks counts them. */
static void print_locks(FILE *out, const struct vt_prof_summary *s)
{
	const struct vt_locks *l = s->locks;

	if (!l)
		return;
	if (!l->samples) {
		fprintf(out, "\nlocks: not read (%s)\n", l->probe_why[0] ? l->probe_why : "no wall tick counted them");
		return;
	}
	fprintf(out, "\nlocks its threads waited on (%u wall ticks; vitals locks %d tells each one's holders "
		"and call sites):\n", l->samples, (int)l->pid);
	if (!l->n) {
		fprintf(out, "  none: no thread waited on a lock at any tick\n");
		return;
	}
	vt_render_locks_table(out, l, 5);
	for (size_t i = 0; i < l->n; i++) {
		const struct vt_lock *k = &l->v[i];
		char what[256], where[160];
		unsigned all = k->holder_frames_other;

		if (!k->nholder_frames)
			continue;
		for (size_t f = 0; f < k->nholder_frames; f++)
			all += k->holder_frames[f].n;
		fprintf(out, "  %s: its holders ran", vt_render_lock_what(k, what, sizeof(what)));
		for (size_t f = 0; f < k->nholder_frames && f < 3; f++)
			fprintf(out, "%s %s %.0f%%", f ? "," : "",
				vt_text_printable(k->holder_frames[f].where, where, sizeof(where)),
				100.0 * k->holder_frames[f].n / all);
		fputc('\n', out);
	}
	if (l->n)
		fprintf(out, "  (what a holder ran: the top of its last stack sampled on a CPU when it was read "
			"holding the lock)\n");
}

/* --count: each function's calls per second beside its CPU: size x rate. */
static void print_calls(FILE *out, const struct vt_prof_summary *s)
{
	const struct vt_prof_calls *c = s->calls;
	const struct vt_call_counts *k;

	if (!c)
		return;
	k = c->counts;
	fprintf(out, "\ncalls (uprobes on their entry, armed %.1f s of %.1f s in %u window%s; ",
		k->armed_s, k->duration_s, k->windows, k->windows == 1 ? "" : "s");
	if (isnan(k->cost))
		fprintf(out, "cost not measured)\n");
	else
		fprintf(out, "cost, measured: %.1f%% on top of the target's CPU)\n", 100 * k->cost);
	if (k->why[0])
		fprintf(out, "  counting stopped early: %s\n", k->why);
	if (!isnan(k->hit_ns))
		fprintf(out, "  (each counted call traps into the kernel, about %.0f us here, and that time is "
			"in the function's CPU below)\n", k->hit_ns / 1e3);
	for (size_t i = 0; i < c->n; i++) {
		const struct vt_prof_call_row *r = &c->rows[i];
		char name[160];

		vt_text_printable(r->fn->name, name, sizeof(name));
		fprintf(out, "  %s (%s): %.1f calls/s", name, r->fn->module, r->calls_per_s);
		if (!isnan(r->cpu_per_call_s) && r->samples)
			fprintf(out, " x %.3g %s = %.1f%% of a core (in %.1f%% of the CPU samples)\n",
				r->cpu_per_call_s < 1e-3 ? 1e6 * r->cpu_per_call_s : 1e3 * r->cpu_per_call_s,
				r->cpu_per_call_s < 1e-3 ? "us" : "ms", 100 * r->cores, 100 * r->share);
		else if (r->calls_per_s > 0)
			fprintf(out, "; in no CPU sample: under %.3g us of CPU a call\n",
				s->meta.hz > 0 ? 1e6 / (s->meta.hz * r->calls_per_s *
							(s->meta.duration_s > 0 ? s->meta.duration_s : 1))
					       : NAN);
		else
			fprintf(out, "; in %.1f%% of the CPU samples\n", 100 * r->share);
	}
}

int vt_render_profile_text(FILE *out, const struct vt_prof_summary *s,
			   const struct vt_profile_text_opts *opts)
{
	uint32_t top = opts && opts->top ? opts->top : DEFAULT_TOP;
	uint32_t max_threads = opts && opts->max_threads ? opts->max_threads : DEFAULT_THREADS;

	print_header(out, s);
	print_buckets(out, s);
	if (s->meta.wall)
		print_wall(out, s);
	print_locks(out, s);
	print_calls(out, s);
	print_funcs(out, s->top_self, s->ntop_self, top, true, s->nfuncs_leaf, opts);
	print_funcs(out, s->top_total, s->ntop_total, top, false, s->nfuncs_seen, opts);
	print_threads(out, s, max_threads);
	print_how(out, s);
	return ferror(out) ? -1 : 0;
}

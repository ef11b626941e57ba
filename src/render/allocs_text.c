/*
 * allocs_text.c — an allocation profile as text: what was probed and what
 * it cost, the verdict, the sites table, and each top site's stack.
 */
#include "render/allocs.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "base/units.h"
#include "render/table.h"

/* Below this many followed blocks, the top site's fate is not judged. */
#define VERDICT_MIN_LINKED 50

static double per_s(uint64_t n, double s)
{
	return s > 0 ? (double)n / s : NAN;
}

static const char *site_name(const struct vt_allocs *a, const struct vt_alloc_site *s, char *buf,
			     size_t cap)
{
	vt_profile_loc_label(a->p, s->loc, buf, cap);
	return buf;
}

/* Blocks freed within 1 ms (the first three age bins). */
static uint64_t freed_fast(const struct vt_alloc_site *s)
{
	return s->age_bins[0] + s->age_bins[1] + s->age_bins[2];
}

static const struct vt_alloc_site *top_by_bytes(const struct vt_allocs *a)
{
	const struct vt_alloc_site *top = NULL;

	for (size_t i = 0; i < a->nsites; i++)
		if (!top || a->sites[i].bytes > top->bytes)
			top = &a->sites[i];
	return top;
}

const char *vt_render_allocs_verdict(const struct vt_allocs *a, char *buf, size_t cap)
{
	const struct vt_alloc_site *s = top_by_bytes(a);
	char name[256], rate[32], pct[16], fast[16];
	double armed = a->meta.armed_s;

	if (!s || s->linked < VERDICT_MIN_LINKED) {
		snprintf(buf, cap, "%" PRIu64 " allocations followed to their fate (%u needed at the "
			 "top site); profile for longer", s ? s->linked : 0, VERDICT_MIN_LINKED);
		return "cannot tell yet";
	}
	site_name(a, s, name, sizeof(name));
	vt_fmt_size(per_s(s->bytes, armed), rate, sizeof(rate));
	vt_fmt_pct(s->freed, s->linked, pct, sizeof(pct));
	vt_fmt_pct(freed_fast(s), s->linked, fast, sizeof(fast));
	if (s->freed * 10 >= s->linked * 9) {
		snprintf(buf, cap, "%s allocates %s/s in %.0f calls/s, %s freed within the window (%s "
			 "within 1 ms): churn, not retention; reusing its buffers is the lever",
			 name, rate, per_s(s->calls, armed), pct, fast);
		return "churn";
	}
	if (s->live * 2 >= s->linked) {
		snprintf(buf, cap, "%s allocates %s/s in %.0f calls/s and %s of its blocks outlive "
			 "the %.0f ms window: retention (a cache, a queue or a leak; a soak tells "
			 "which)", name, rate, per_s(s->calls, armed),
			 vt_fmt_pct(s->live, s->linked, pct, sizeof(pct)), a->meta.window_s * 1e3);
		return "retention";
	}
	snprintf(buf, cap, "%s allocates %s/s in %.0f calls/s; %s freed within the window, the "
		 "rest outlives it: mixed", name, rate, per_s(s->calls, armed), pct);
	return "mixed";
}

const char *vt_render_allocs_span(double s, char *buf, size_t cap)
{
	if (s < 2)
		snprintf(buf, cap, "%.0f ms", s * 1e3);
	else
		vt_fmt_span(s, buf, cap);
	return buf;
}

/* The agent's path: what it sampled, and what that cost, in words. */
static void print_agent_cost(FILE *out, const struct vt_allocs_meta *m)
{
	char every[32], armed[32];

	fprintf(out, "  path: %s, one sample every %s allocated on average: %" PRIu64 " samples over %s in "
		"%u window%s%s; no probe, no trap\n", m->probes_how, vt_fmt_bytes(m->every, every, sizeof(every)),
		m->agent_samples, vt_render_allocs_span(m->armed_s, armed, sizeof(armed)), m->windows,
		m->windows == 1 ? "" : "s", m->agent_expired ? " (it disarmed itself at its deadline first)" : "");
	fprintf(out, "  the sites' calls and bytes are estimated from the samples (each stands for the "
		"allocations it was drawn from); the totals are the agent's exact counts; a block's fate is "
		"seen to the end of its window\n");
	fprintf(out, "  cost: in the target's own calls (a counter each, an unwind per sample), not measured "
		"from outside; bench/allocs measures it; vitals used %.2f s of CPU\n", m->self_cpu_s);
	if (m->agent_dropped)
		fprintf(out, "  %" PRIu64 " samples dropped (the agent's table filled): each such window's samples "
			"were scaled up by what it dropped, and the windows shortened\n", m->agent_dropped);
}

static void print_cost(FILE *out, const struct vt_allocs_meta *m)
{
	char armed[32], dur[32];

	if (m->path_why[0] && !m->agent)
		fprintf(out, "  path: uprobes (%s)\n", m->path_why);
	if (m->agent) {
		print_agent_cost(out, m);
		return;
	}

	fprintf(out, "  probes armed %s of %s in %u window%s of %.0f ms on average (%.1f%% of the time; "
		"budget %.0f%% slowdown)\n", vt_render_allocs_span(m->armed_s, armed, sizeof(armed)),
		vt_render_allocs_span(m->duration_s, dur, sizeof(dur)), m->windows,
		m->windows == 1 ? "" : "s", m->window_s * 1e3, m->duration_s > 0 ? 100.0 * m->armed_s / m->duration_s : 0.0,
		m->budget * 100);
	if (m->windows < 3 && m->duration_s > 1)
		fprintf(out, "  few windows fit the budget: profile --for longer, or allow more with "
			"--budget, for figures over more of the target's time\n");
	if (isnan(m->trap_ns))
		fprintf(out, "  cost: a probe hit could not be timed here; %" PRIu64 " hits in the target\n",
			m->hits);
	else if (isnan(m->slowdown))
		fprintf(out, "  cost, measured: %" PRIu64 " probe hits x %.1f us (timed on vitals' own "
			"calls) = %.0f ms of the target's time, which used no CPU vitals could see\n",
			m->hits, m->trap_ns / 1e3, m->trap_s * 1e3);
	else
		fprintf(out, "  cost, measured: %" PRIu64 " probe hits x %.1f us (timed on vitals' own "
			"calls) = %.0f ms of the target's time: %.1f%% on top of the %.2f s of CPU "
			"it spent otherwise\n", m->hits, m->trap_ns / 1e3, m->trap_s * 1e3,
			100 * m->slowdown, m->target_cpu_s - m->trap_s);
	fprintf(out, "  probes through %s; arming took %.1f ms a window, disarming %.1f ms; vitals "
		"used %.2f s of CPU\n", m->probes_how, m->windows ? m->open_ms / m->windows : 0.0,
		m->windows ? m->close_ms / m->windows : 0.0, m->self_cpu_s);
	if (m->threads_seen > m->threads_probed_max)
		fprintf(out, "  %" PRIu64 " threads: each window probed those that ran since the last "
			"one (at most %" PRIu64 "; a thread that does not run does not allocate)\n",
			m->threads_seen, m->threads_probed_max);
	if (m->lost || m->unpaired || m->threads_missed)
		fprintf(out, "  missed: %" PRIu64 " probe hits dropped by the kernel (ring full), "
			"%" PRIu64 " calls without their return, %" PRIu64 " thread%s that could not be "
			"probed: fates are approximate\n", m->lost, m->unpaired, m->threads_missed,
			m->threads_missed == 1 ? "" : "s");
}

static void print_table(FILE *out, const struct vt_allocs *a, size_t max_sites)
{
	struct vt_table t;
	double armed = a->meta.armed_s;
	size_t n = max_sites && max_sites < a->nsites ? max_sites : a->nsites;

	vt_table_init(&t, 9);
	for (int c = 1; c < 9; c++)
		vt_table_align(&t, c, VT_RIGHT);
	vt_table_align(&t, 8, VT_LEFT);
	vt_table_cell(&t, "SITE");
	vt_table_cell(&t, "CALLS/S");
	vt_table_cell(&t, "SHARE");
	vt_table_cell(&t, "BYTES/S");
	vt_table_cell(&t, "SHARE");
	vt_table_cell(&t, "FREED");
	vt_table_cell(&t, "<=1MS");
	vt_table_cell(&t, "LIVE");
	vt_table_cell(&t, "THREADS");
	for (size_t i = 0; i < n; i++) {
		const struct vt_alloc_site *s = &a->sites[i];
		char name[256], clip[64], b[32], p1[16], p2[16], p3[16], p4[16], p5[16], th[128];
		size_t len = 0;

		site_name(a, s, name, sizeof(name));
		vt_table_cell(&t, "%s", vt_text_clip_middle(name, 48, clip, sizeof(clip)));
		vt_table_cell(&t, "%.0f", per_s(s->calls, armed));
		vt_table_cell(&t, "%s", vt_fmt_pct(s->calls, a->meta.calls, p1, sizeof(p1)));
		vt_table_cell(&t, "%s", vt_fmt_size(per_s(s->bytes, armed), b, sizeof(b)));
		vt_table_cell(&t, "%s", vt_fmt_pct(s->bytes, a->meta.bytes, p2, sizeof(p2)));
		vt_table_cell(&t, "%s", s->linked ? vt_fmt_pct(s->freed, s->linked, p3, sizeof(p3)) : "-");
		vt_table_cell(&t, "%s", s->linked ? vt_fmt_pct(freed_fast(s), s->linked, p4, sizeof(p4)) : "-");
		vt_table_cell(&t, "%s", s->linked ? vt_fmt_pct(s->live, s->linked, p5, sizeof(p5)) : "-");
		th[0] = '\0';
		for (unsigned k = 0; k < VT_ALLOCS_SITE_THREADS && s->threads[k].tid; k++) {
			char arena[24] = "";

			if (a->meta.arenas_known && s->threads[k].arena >= 0)
				snprintf(arena, sizeof(arena), " (arena %d)", s->threads[k].arena);
			len += (size_t)snprintf(th + len, len < sizeof(th) ? sizeof(th) - len : 0, "%s%s %s%s",
						k ? ", " : "",
						vt_profile_str(a->p, a->p->threads[s->threads[k].thread].name),
						vt_fmt_pct(s->threads[k].calls, s->calls, p1, sizeof(p1)), arena);
		}
		if (s->other_thread_calls && len < sizeof(th))
			snprintf(th + len, sizeof(th) - len, ", others %s",
				 vt_fmt_pct(s->other_thread_calls, s->calls, p1, sizeof(p1)));
		vt_table_cell(&t, "%s", th);
	}
	vt_table_print(&t, out, 2, true);
	vt_table_release(&t);
	if (a->nsites > n)
		fprintf(out, "  (%zu more sites; --top 0 shows all)\n", a->nsites - n);
}

static void print_site(FILE *out, const struct vt_allocs *a, const struct vt_alloc_site *s)
{
	char name[256], loc[256], b[32];

	fprintf(out, "\n  %s: %" PRIu64 " calls, %s", site_name(a, s, name, sizeof(name)), s->calls,
		vt_fmt_size((double)s->bytes, b, sizeof(b)));
	fprintf(out, "; sizes");
	for (unsigned k = 0; k < VT_ALLOCS_SIZE_BINS; k++) {
		char lim[32], pct[16];

		if (!s->size_bins[k])
			continue;
		if (vt_allocs_size_bin_max(k) == UINT64_MAX)
			snprintf(lim, sizeof(lim), ">1 MiB");
		else
			vt_fmt_size((double)vt_allocs_size_bin_max(k), lim, sizeof(lim));
		fprintf(out, " <=%s %s", lim, vt_fmt_pct(s->size_bins[k], s->calls, pct, sizeof(pct)));
	}
	fprintf(out, "\n");
	if (s->freed_elsewhere)
		fprintf(out, "    %" PRIu64 " of its blocks were freed by another thread\n", s->freed_elsewhere);
	for (uint32_t i = 0; i < s->example_depth; i++) {
		vt_profile_loc_label(a->p, s->example[i], loc, sizeof(loc));
		fprintf(out, "    %s %s\n", i ? "<-" : "  ", loc);
	}
}

/* The sites by bucket: what kind of work allocates. */
static void print_buckets(FILE *out, const struct vt_allocs *a, const struct vt_alloc_buckets *b)
{
	struct vt_table t;
	double armed = a->meta.armed_s;

	vt_table_init(&t, 8);
	for (int c = 1; c < 7; c++)
		vt_table_align(&t, c, VT_RIGHT);
	vt_table_cell(&t, "BUCKET");
	vt_table_cell(&t, "CALLS/S");
	vt_table_cell(&t, "SHARE");
	vt_table_cell(&t, "BYTES/S");
	vt_table_cell(&t, "SHARE");
	vt_table_cell(&t, "FREED");
	vt_table_cell(&t, "SITES");
	vt_table_cell(&t, "TOP SITE");
	for (size_t i = 0; i < b->n; i++) {
		const struct vt_alloc_bucket *k = &b->v[i];
		char name[256], clip[64], s[32], p1[16], p2[16], p3[16];

		vt_table_cell(&t, "%s", k->name);
		vt_table_cell(&t, "%.0f", per_s(k->calls, armed));
		vt_table_cell(&t, "%s", vt_fmt_pct(k->calls, a->meta.calls, p1, sizeof(p1)));
		vt_table_cell(&t, "%s", vt_fmt_size(per_s(k->bytes, armed), s, sizeof(s)));
		vt_table_cell(&t, "%s", vt_fmt_pct(k->bytes, a->meta.bytes, p2, sizeof(p2)));
		vt_table_cell(&t, "%s", vt_fmt_pct(k->freed, k->linked, p3, sizeof(p3)));
		vt_table_cell(&t, "%zu", k->sites);
		site_name(a, &a->sites[k->top_site], name, sizeof(name));
		vt_table_cell(&t, "%s", vt_text_clip_middle(name, 48, clip, sizeof(clip)));
	}
	vt_table_print(&t, out, 2, true);
	vt_table_release(&t);
	fputc('\n', out);
}

int vt_render_allocs_text(FILE *out, const struct vt_allocs *a, const struct vt_alloc_buckets *buckets, size_t max_sites)
{
	const struct vt_allocs_meta *m = &a->meta;
	char verdict[768], b[32];
	const char *kind = vt_render_allocs_verdict(a, verdict, sizeof(verdict));
	size_t top = max_sites && max_sites < a->nsites ? max_sites : a->nsites;

	if (m->agent)
		fprintf(out, "allocations of process %d (%s), %s: sampled in the process by its agent\n",
			(int)m->pid, m->comm, m->allocator);
	else
		fprintf(out, "allocations of process %d (%s), %s: probes on %s in %s\n", (int)m->pid, m->comm,
			m->allocator, m->probed, m->file);
	if (m->skipped[0] && !m->agent)
		fprintf(out, "  not probed: %s\n", m->skipped);
	print_cost(out, m);
	if (m->agent)
		fprintf(out, "  %" PRIu64 " allocations, %s, %" PRIu64 " frees in the process over the run (the "
			"agent's counts)\n", m->calls, vt_fmt_size((double)m->bytes, b, sizeof(b)), m->frees);
	else
		fprintf(out, "  %" PRIu64 " allocations, %s, %" PRIu64 " frees seen; rates are per second "
			"armed (the target's allocating code ran slower then)\n", m->calls,
			vt_fmt_size((double)m->bytes, b, sizeof(b)), m->frees);
	if (m->exited)
		fprintf(out, "  the process exited during the run: the profile so far\n");
	if (m->interrupted)
		fprintf(out, "  stopped early: the profile so far\n");
	if (m->budget_spent)
		fprintf(out, "  ended after %.1f s: another window would not have fit the budget over the "
			"rest of the run (--budget, --window)\n", m->duration_s);
	fprintf(out, "\n%s: %s\n\n", kind, verdict);
	if (!a->nsites) {
		fprintf(out, "  no allocation was seen while armed\n");
		return ferror(out) ? -1 : 0;
	}
	if (buckets && buckets->n)
		print_buckets(out, a, buckets);
	print_table(out, a, max_sites);
	for (size_t i = 0; i < top && i < 5; i++)
		print_site(out, a, &a->sites[i]);
	fprintf(out, "\n  FREED: blocks freed before their window closed; <=1MS: within 1 ms; LIVE: still "
		"live when it closed (%.0f ms windows)\n", m->window_s * 1e3);
	if (m->arenas_known)
		fprintf(out, "  (arena N: which of the %zu glibc arenas the thread allocates from, 0 is "
			"main_arena; read at the end)\n", m->narenas);
	else if (m->arenas_why[0])
		fprintf(out, "  the threads' glibc arenas: not known (%s)\n", m->arenas_why);
	return ferror(out) ? -1 : 0;
}

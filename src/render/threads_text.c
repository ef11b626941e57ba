/*
 * threads_text.c — `vitals threads PID`: the process's CPU over the interval,
 * beside what ps would say, then the diagnosis, pools and threads (last, so
 * that a view cut to a terminal's height loses only its quietest rows).
 * Threads there throughout the interval have a row each; those that started
 * or ended in it share one, "short-lived", which holds the CPU of the
 * threads no sample saw too: the rows add up to the process.
 */
#include "render/threads.h"
#include "base/unknown.h"

#include "proc/procfs.h"
#include "render/locks.h"
#include "render/table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *vt_render_state_shares(const unsigned *counts, const char *const *labels, size_t n,
				   unsigned total, char *buf, size_t cap)
{
	size_t used = 0, k;
	int w;

	buf[0] = '\0';
	for (k = 0; k < n && total; k++) {
		if (!counts[k])
			continue;
		w = snprintf(buf + used, cap - used, "%s%s %.0f%%", used ? " " : "", labels[k],
			     100.0 * counts[k] / total);
		if (w < 0 || (size_t)w >= cap - used)
			break;
		used += (size_t)w;
	}
	return buf;
}

const char *vt_render_thread_states(const struct vt_thread_rate *t, char *buf, size_t cap)
{
	char letters[VT_NSTATES][2];
	const char *labels[VT_NSTATES];
	int k;

	for (k = 0; k < VT_NSTATES; k++) {
		letters[k][0] = VT_STATE_KINDS[k];
		letters[k][1] = '\0';
		labels[k] = letters[k];
	}
	return vt_render_state_shares(t->states, labels, VT_NSTATES, t->nsamples, buf, cap);
}

static const char *fmt_rate(double v, int prec, char *buf, size_t cap)
{
	if (v < 0)
		snprintf(buf, cap, "n/a");
	else
		snprintf(buf, cap, "%.*f", prec, v);
	return buf;
}

static void print_share(FILE *out, const struct vt_threads_rates *r)
{
	if (r->quota_cores > 0 && r->usable_cores == r->quota_cores)
		fprintf(out, " = %.1f%% of its %.2f-core cgroup quota (%s)",
			100.0 * r->cores / r->quota_cores, r->quota_cores, r->quota_dir);
	else if (r->usable_cores > 0)
		fprintf(out, " = %.1f%% of the %d CPUs it may use", 100.0 * r->cores / r->usable_cores,
			r->ncpu);
}

/* "4 x worker-: 0.248-0.263 cores each (24.6-26.1% of the process), 1.008 together" */
static void print_pool(FILE *out, const struct vt_thread_pool *p)
{
	char name[sizeof(p->label)];

	fprintf(out, "  %zu x %s: ", p->count, vt_text_printable(p->label, name, sizeof(name)));
	if (p->min_cores < 0) {
		fprintf(out, "rates not known\n");
		return;
	}
	/* one name is not a pool of equals when the rates are far apart: say so */
	fprintf(out, p->uneven ? "one name, rates far apart: %.3f-%.3f cores" : "%.3f-%.3f cores each",
		p->min_cores, p->max_cores);
	if (p->min_share >= 0)
		fprintf(out, " (%.1f-%.1f%% of the process)", 100 * p->min_share, 100 * p->max_share);
	fprintf(out, ", %.3f cores together\n", p->total_cores);
}

/*
 * What the state and wait counts rest on: of the thread samples, how many
 * read their state (all) and how many of those had not run since the sample
 * before; how many read wchan and the system call and how many carried them.
 */
static void print_reads(FILE *out, const struct vt_threads_rates *r)
{
	const struct vt_thread_reads *k = &r->reads;
	uint64_t doing = k->doing_read + k->doing_carried + k->doing_running;

	if (!k->stat_read && !k->stat_carried)
		return;     /* a recording: not known */
	fprintf(out, "  sampled    thread states from %u samples over %.2f s: %llu read, %llu of them had not\n"
		"             run since the sample before", r->nsamples, r->interval_s,
		(unsigned long long)k->stat_read, (unsigned long long)k->stat_carried);
	if (doing)
		fprintf(out, "; wait channels and system\n             calls: %llu read, %llu carried (asleep in "
			"the same wait), %llu none (in state R)",
			(unsigned long long)k->doing_read, (unsigned long long)k->doing_carried,
			(unsigned long long)k->doing_running);
	fprintf(out, "\n");
}

static void print_summary(FILE *out, const struct vt_threads_rates *r)
{
	char threads[32], samples[32], comm[sizeof(r->comm)];

	fprintf(out, "process %d (%s): %s, measured over %.2f s (%s)\n", (int)r->pid,
		vt_text_printable(r->comm, comm, sizeof(comm)),
		vt_fmt_count_of(r->n, "thread", "threads", threads, sizeof(threads)), r->interval_s,
		vt_fmt_count_of(r->nsamples, "sample", "samples", samples, sizeof(samples)));
	print_reads(out, r);
	fprintf(out, "  CPU        %.3f cores", r->cores);
	print_share(out, r);
	fprintf(out, "  (from %s deltas)\n", r->cores_source);
	if (r->quota_cores > 0 && r->usable_cores != r->quota_cores)
		fprintf(out, "  quota      %.2f cores (%s), above the %d CPUs it may use\n",
			r->quota_cores, r->quota_dir, r->ncpu);
	if (vt_known(r->periods) && vt_known(r->throttled_periods))
		fprintf(out, "  throttled  in %llu of %llu quota periods (%.2f s held back)\n",
			(unsigned long long)r->throttled_periods, (unsigned long long)r->periods,
			r->throttled_s > 0 ? r->throttled_s : 0);
	if (r->user_cores >= 0)
		fprintf(out, "  user/sys   %.3f / %.3f cores\n", r->user_cores, r->sys_cores);
	else
		fprintf(out, "  user/sys   n/a (under one clock tick in the interval)\n");
	fprintf(out, "  consumed   %.3f s of CPU while vitals watched", r->cpu_seconds);
	if (r->self_cpu_s >= 0)
		fprintf(out, " (vitals itself used %.3f s)", r->self_cpu_s);
	fprintf(out, "\n");
	if (r->since_start_cores >= 0) {
		fprintf(out, "  ps shows   %.3f cores (%.1f%%): its since-start average, not the current rate\n",
			r->since_start_cores, 100.0 * r->since_start_cores);
		if (r->ps_differs)
			fprintf(out, "  note: ps's since-start average differs from the rate over this interval "
				"by %.0f points; the load changed since the process started\n",
				100.0 * (r->since_start_cores > r->cores ? r->since_start_cores - r->cores
									 : r->cores - r->since_start_cores));
	}
	if (r->process_exited)
		fprintf(out, "  note: the process exited before the interval ended; this is the part measured\n");
	if (r->appeared || r->exited)
		fprintf(out, "  churn      %zu thread%s appeared, %zu exited during the interval\n", r->appeared,
			r->appeared == 1 ? "" : "s", r->exited);
	if (r->short_lived || r->short_lived_cores > 0) {
		fprintf(out, "  short-lived threads: %.3f cores, ", r->short_lived_cores);
		if (r->short_lived)
			fprintf(out, "%zu thread%s", r->short_lived, r->short_lived == 1 ? "" : "s");
		else
			fprintf(out, "none seen by a sample");
		fprintf(out, " = %.1f%% of the process\n", 100.0 * r->short_lived_share);
		fprintf(out, "             (started or ended in the interval: their CPU is the process's minus "
			"the threads' there\n"
			"             throughout, their count those a sample saw; one that lived between two "
			"samples adds CPU, no count)\n");
	}
}

/* Ranks the names of vt_render_thread_names: most members first, then by label. */
struct name_group {
	char key[64];          /* the name without trailing digits, or the whole name */
	const char *first;     /* the first member's name */
	bool indexed;          /* members' names differ */
	size_t count;
};

static int cmp_group(const void *a, const void *b)
{
	const struct name_group *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->key, y->key);
}

const char *vt_render_thread_names(const char *const *names, size_t n, size_t max_names, char *buf,
				   size_t cap)
{
	struct name_group *g = calloc(n ? n : 1, sizeof(*g));
	size_t ng = 0, i, j, used = 0, len;
	char label[64];
	int w;

	buf[0] = '\0';
	if (!g)
		return buf;
	for (i = 0; i < n; i++) {
		len = vt_threads_pool_key_len(names[i]);
		if (len == 0)
			len = strlen(names[i]);       /* all digits: the name itself */
		if (len >= sizeof(g->key))
			len = sizeof(g->key) - 1;
		for (j = 0; j < ng; j++)
			if (strlen(g[j].key) == len && !strncmp(g[j].key, names[i], len))
				break;
		if (j == ng) {
			memcpy(g[j].key, names[i], len);
			g[j].key[len] = '\0';
			g[j].first = names[i];
			ng++;
		}
		if (strcmp(g[j].first, names[i]))
			g[j].indexed = true;
		g[j].count++;
	}
	qsort(g, ng, sizeof(*g), cmp_group);
	for (i = 0; i < ng && i < max_names; i++) {
		vt_text_printable(g[i].indexed ? g[i].key : g[i].first, label, sizeof(label));
		w = snprintf(buf + used, cap - used, "%s%zu x %s", i ? ", " : "", g[i].count,
			     label[0] ? label : "?");
		if (w < 0 || (size_t)w >= cap - used)
			break;
		used += (size_t)w;
	}
	if (ng > max_names)
		snprintf(buf + used, cap - used, " and %zu other name%s", ng - max_names,
			 ng - max_names == 1 ? "" : "s");
	free(g);
	return buf;
}

const char *vt_render_seen(bool ok, const char *why, const char *name, unsigned count, unsigned n,
			   char *buf, size_t cap)
{
	if (!ok && why)
		snprintf(buf, cap, "n/a (%s)", why);
	else if (!ok)
		snprintf(buf, cap, "n/a");
	else if (count && n)
		snprintf(buf, cap, "%s (%.0f%%)", name, 100.0 * count / n);
	else
		snprintf(buf, cap, "-");
	return buf;
}

static int cmp_busiest(const void *a, const void *b)
{
	const struct vt_thread_rate *x = *(const struct vt_thread_rate *const *)a;
	const struct vt_thread_rate *y = *(const struct vt_thread_rate *const *)b;

	if (x->cpu_cores != y->cpu_cores)
		return x->cpu_cores < y->cpu_cores ? 1 : -1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

static void print_threads(FILE *out, const struct vt_threads_rates *r, const struct vt_threads_view *v)
{
	const struct vt_thread_rate **order;
	struct vt_table t;
	char b1[32], b2[32], b3[32], b4[32], st[96], wb[128], sb[96];
	size_t i, rows;
	int k;

	const char **names;
	size_t n = 0, nshort = 0;
	bool short_row = r->short_lived || r->short_lived_cores > 0;
	char nb[256];

	order = malloc((r->n ? r->n : 1) * sizeof(*order));
	names = malloc((r->n ? r->n : 1) * sizeof(*names));
	if (!order || !names) {
		free(order);
		free(names);
		fprintf(out, "  (out of memory listing threads)\n");
		return;
	}
	/* the threads there throughout, one row each; those that came or went, one row together */
	for (i = 0; i < r->n; i++) {
		if (r->threads[i].flags & (VT_THREAD_APPEARED | VT_THREAD_EXITED))
			names[nshort++] = r->threads[i].comm;
		else
			order[n++] = &r->threads[i];
	}
	if (v && v->by_cpu)
		qsort(order, n, sizeof(*order), cmp_busiest);
	rows = v && v->max_rows && v->max_rows < n ? v->max_rows : n;

	vt_table_init(&t, 12);
	for (i = 2; i < 9; i++)
		vt_table_align(&t, (int)i, VT_RIGHT);
	vt_table_cell(&t, "TID");
	vt_table_cell(&t, "NAME");
	vt_table_cell(&t, "CORES");
	vt_table_cell(&t, "USR/SYS");
	vt_table_cell(&t, "SHARE");
	for (k = 0; k < VT_TC_COUNT; k++)
		if (!(vt_thread_counters[k].flags & VT_TCF_OWN_COLUMN))
			vt_table_cell(&t, "%s", vt_thread_counters[k].head);
	vt_table_cell(&t, "CPU");
	vt_table_cell(&t, "STATES");
	vt_table_cell(&t, "WCHAN");
	vt_table_cell(&t, "SYSCALL");
	for (i = 0; i < rows; i++) {
		const struct vt_thread_rate *th = order[i];

		vt_table_cell(&t, "%d", (int)th->tid);
		vt_table_cell(&t, "%s", th->comm);
		vt_table_cell(&t, "%.3f", th->cpu_cores);
		vt_table_cell(&t, "%s/%s", fmt_rate(th->user_cores, 2, b1, sizeof(b1)),
			      fmt_rate(th->sys_cores, 2, b2, sizeof(b2)));
		vt_table_cell(&t, "%s", th->cpu_share >= 0
			      ? (snprintf(b3, sizeof(b3), "%.1f%%", 100 * th->cpu_share), b3) : "n/a");
		for (k = 0; k < VT_TC_COUNT; k++)
			if (!(vt_thread_counters[k].flags & VT_TCF_OWN_COLUMN))
				vt_table_cell(&t, "%s", vt_thread_counter_cell(k, th->rate[k], b4, sizeof(b4)));
		vt_table_cell(&t, "%lld", (long long)th->last_cpu);
		vt_table_cell(&t, "%s", vt_render_thread_states(th, st, sizeof(st)));
		vt_table_cell(&t, "%s", vt_render_seen(th->wchan_ok, th->wchan_why, th->wchan, th->wchan_count,
					    th->nsamples, wb, sizeof(wb)));
		vt_table_cell(&t, "%s", vt_render_seen(th->syscall_ok, th->syscall_why, th->syscall,
					    th->syscall_count, th->nsamples, sb, sizeof(sb)));
	}
	if (short_row) {
		vt_table_cell(&t, "+-");
		vt_table_cell(&t, "short-lived");
		vt_table_cell(&t, "%.3f", r->short_lived_cores);
		vt_table_cell(&t, "-");
		vt_table_cell(&t, "%.1f%%", 100 * r->short_lived_share);
		for (i = 0; i < 7; i++)
			vt_table_cell(&t, "-");
	}
	vt_table_print(&t, out, 2, true);
	vt_table_release(&t);
	if (rows < n)
		fprintf(out, "  ... %zu more threads (%s; --top N shows more)\n", n - rows,
			v && v->by_cpu ? "the busiest are shown" : "in tid order");
	if (short_row)
		fprintf(out, "  +- short-lived: %s, the threads that started or ended during the interval "
			"(--json lists those seen)\n",
			nshort ? vt_render_thread_names(names, nshort, 3, nb, sizeof(nb)) : "none seen by a sample");
	free(order);
	free(names);
}

int vt_render_threads_text(FILE *out, const struct vt_threads_rates *r, const struct vt_diagnosis *d,
			   const struct vt_threads_view *view)
{
	size_t i;

	print_summary(out, r);
	fprintf(out, "\ndiagnosis:\n");
	vt_render_diagnosis_text(out, d);
	if (r->nlisten) {
		fprintf(out, "\nlistening (connections waiting for accept(), over %u reads):\n", r->listen_reads);
		for (i = 0; i < r->nlisten; i++) {
			const struct vt_rates_listener *l = &r->listen[i];

			fprintf(out, "  %-24s %u–%u", l->address, l->min_queue, l->max_queue);
			if (l->backlog != UINT32_MAX)
				fprintf(out, " of %u", l->backlog);
			fputc('\n', out);
		}
	}
	if (r->locks && r->locks->n) {
		fprintf(out, "\nlocks waited on (vitals locks %d: each one's holder and call sites):\n", (int)r->pid);
		vt_render_locks_table(out, r->locks, 3);
	}
	if (r->npools) {
		fprintf(out, "\npools (same name but trailing digits):\n");
		for (i = 0; i < r->npools; i++)
			print_pool(out, &r->pools[i]);
	}
	fprintf(out, "\n");
	print_threads(out, r, view);
	return ferror(out) ? -1 : 0;
}

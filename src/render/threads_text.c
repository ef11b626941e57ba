/*
 * threads_text.c — `vitals threads PID`: the process's CPU over the interval,
 * beside what ps would say, then pools, threads and the diagnosis.
 */
#include "render/threads.h"

#include "render/table.h"

#include <stdio.h>
#include <string.h>

const char *vt_render_thread_states(const struct vt_thread_rate *t, char *buf, size_t cap)
{
	size_t used = 0;
	int k;

	buf[0] = '\0';
	for (k = 0; k < VT_NSTATES && t->nsamples; k++) {
		int w;

		if (!t->states[k])
			continue;
		w = snprintf(buf + used, cap - used, "%s%c %.0f%%", used ? " " : "",
			     VT_STATE_KINDS[k], 100.0 * t->states[k] / t->nsamples);
		if (w < 0 || (size_t)w >= cap - used)
			break;
		used += (size_t)w;
	}
	return buf;
}

static const char *fmt_rate(double v, int prec, char *buf, size_t cap)
{
	if (v < 0)
		snprintf(buf, cap, "n/a");
	else
		snprintf(buf, cap, "%.*f", prec, v);
	return buf;
}

int vt_render_threads_text(FILE *out, const struct vt_threads_rates *r, const struct vt_diagnosis *d)
{
	struct vt_table t;
	char b1[32], b2[32], b3[32], b4[32], b5[32], st[96];
	size_t i;

	fprintf(out, "process %d (%s): %zu threads, measured over %.2f s (%u samples)\n",
		(int)r->pid, r->comm, r->n, r->interval_s, r->nsamples);
	fprintf(out, "  CPU        %.3f cores", r->cores);
	if (r->ncpu > 0)
		fprintf(out, " = %.1f%% of the %d CPUs it may use", 100.0 * r->cores / r->ncpu, r->ncpu);
	fprintf(out, "  (from %s deltas)\n", r->cores_source);
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
		fprintf(out, "  churn      %zu threads appeared, %zu exited during the interval "
			"(their rates cover only the part they lived)\n", r->appeared, r->exited);

	if (r->npools) {
		fprintf(out, "\npools (same name but trailing digits):\n");
		for (i = 0; i < r->npools; i++)
			fprintf(out, "  %zu x %s: %.3f-%.3f cores each\n", r->pools[i].count,
				r->pools[i].name, r->pools[i].min_cores, r->pools[i].max_cores);
	}

	fprintf(out, "\n");
	vt_table_init(&t, 11);
	for (i = 2; i < 8; i++)
		vt_table_align(&t, (int)i, VT_RIGHT);
	vt_table_align(&t, 8, VT_RIGHT);
	vt_table_cell(&t, "TID");
	vt_table_cell(&t, "NAME");
	vt_table_cell(&t, "CORES");
	vt_table_cell(&t, "USR/SYS");
	vt_table_cell(&t, "SHARE");
	vt_table_cell(&t, "RUNQ");
	vt_table_cell(&t, "VOL/s");
	vt_table_cell(&t, "NONVOL/s");
	vt_table_cell(&t, "CPU");
	vt_table_cell(&t, "STATES");
	vt_table_cell(&t, "WCHAN");
	for (i = 0; i < r->n; i++) {
		const struct vt_thread_rate *th = &r->threads[i];

		vt_table_cell(&t, "%d%s", (int)th->tid,
			      (th->flags & VT_THREAD_APPEARED) ? "+" : (th->flags & VT_THREAD_EXITED) ? "-" : "");
		vt_table_cell(&t, "%s", th->comm);
		vt_table_cell(&t, "%.3f", th->cpu_cores);
		vt_table_cell(&t, "%s/%s", fmt_rate(th->user_cores, 2, b1, sizeof(b1)),
			      fmt_rate(th->sys_cores, 2, b2, sizeof(b2)));
		vt_table_cell(&t, "%s", th->cpu_share >= 0
			      ? (snprintf(b3, sizeof(b3), "%.1f%%", 100 * th->cpu_share), b3) : "n/a");
		vt_table_cell(&t, "%s", th->runq_share >= 0
			      ? (snprintf(b4, sizeof(b4), "%.1f%%", 100 * th->runq_share), b4) : "n/a");
		vt_table_cell(&t, "%s", fmt_rate(th->vol_per_s, 0, b5, sizeof(b5)));
		vt_table_cell(&t, "%s", fmt_rate(th->nonvol_per_s, 0, b1, sizeof(b1)));
		vt_table_cell(&t, "%lld", (long long)th->last_cpu);
		vt_table_cell(&t, "%s", vt_render_thread_states(th, st, sizeof(st)));
		if (!th->wchan_ok)
			vt_table_cell(&t, "n/a (%s)", th->wchan_why);
		else if (th->wchan_count)
			vt_table_cell(&t, "%s (%.0f%%)", th->wchan, 100.0 * th->wchan_count / th->nsamples);
		else
			vt_table_cell(&t, "-");
	}
	vt_table_print(&t, out, 2, true);
	vt_table_release(&t);
	if (r->appeared || r->exited)
		fprintf(out, "  (+ appeared, - exited during the interval)\n");

	fprintf(out, "\ndiagnosis:\n");
	for (i = 0; d && i < d->n; i++)
		fprintf(out, "  %s: %s\n", d->f[i].name, d->f[i].evidence);
	return ferror(out) ? -1 : 0;
}

/*
 * thread_metric.c — the per-thread counter table (thread_metric.h).
 */
#include "sample/thread_metric.h"

#include <math.h>
#include <stdio.h>

#include "base/unknown.h"

static uint64_t cpu_ns(const struct vt_thread_counts *c, long clk_tck)
{
	uint64_t tick_ns = 1000000000ull / (uint64_t)(clk_tck > 0 ? clk_tck : 100);

	return vt_known(c->run_ns) ? c->run_ns : (c->utime_ticks + c->stime_ticks) * tick_ns;
}

#define FIELD(name, field)                                                      \
	static uint64_t name(const struct vt_thread_counts *c, long clk_tck)    \
	{                                                                       \
		(void)clk_tck;                                                  \
		return c->field;                                                \
	}
FIELD(wait_ns, wait_ns)
FIELD(vcsw, vcsw)
FIELD(nvcsw, nvcsw)
#undef FIELD

const struct vt_thread_counter_info vt_thread_counters[VT_TC_COUNT] = {
	[VT_TC_CPU_NS] = {
		.column = "cpu_ns", .rate_key = "cores", .head = "CORES", .label = "cores", .rate_scale = 1e-9, .rate_max = 1.05,
		.flags = VT_TCF_OWN_COLUMN,
		.meaning = "time on a CPU (schedstat run time, else user + system ticks)",
		.of_counts = cpu_ns,
	},
	[VT_TC_WAIT_NS] = {
		.column = "wait_ns", .rate_key = "runq_delay_share", .head = "RUNQ", .label = "run-queue wait", .rate_scale = 1e-9, .rate_max = 1.05,
		.flags = VT_TCF_SHARE,
		.meaning = "time runnable but waiting for a CPU (schedstat)",
		.of_counts = wait_ns,
	},
	[VT_TC_VCSW] = {
		.column = "vcsw", .rate_key = "voluntary_per_s", .head = "VOL/s", .label = "voluntary/s", .rate_scale = 1, .rate_max = 1e7,
		.meaning = "voluntary context switches: it gave the CPU up to sleep or wait",
		.of_counts = vcsw,
		.prom = "vitals_process_context_switches", .prom_label = "ctxswitchtype",
		.prom_label_value = "voluntary",
	},
	[VT_TC_NVCSW] = {
		.column = "nvcsw", .rate_key = "nonvoluntary_per_s", .head = "NONVOL/s", .label = "nonvoluntary/s", .rate_scale = 1, .rate_max = 1e7,
		.meaning = "nonvoluntary context switches: preempted while it wanted to run",
		.of_counts = nvcsw,
		.prom = "vitals_process_context_switches", .prom_label = "ctxswitchtype",
		.prom_label_value = "nonvoluntary",
	},
};

void vt_thread_counters_of(const struct vt_thread_counts *c, long clk_tck, uint64_t *out)
{
	int k;

	for (k = 0; k < VT_TC_COUNT; k++)
		out[k] = vt_thread_counters[k].of_counts(c, clk_tck);
}

double vt_thread_counter_rate(enum vt_thread_counter k, uint64_t delta, double seconds)
{
	if (!vt_known(delta) || !(seconds > 0))
		return NAN;
	return (double)delta * vt_thread_counters[k].rate_scale / seconds;
}

const char *vt_thread_counter_cell(enum vt_thread_counter k, double rate, char *buf, size_t cap)
{
	unsigned flags = vt_thread_counters[k].flags;

	if (!(rate >= 0))
		snprintf(buf, cap, "n/a");
	else if (flags & VT_TCF_SHARE)
		snprintf(buf, cap, "%.1f%%", 100 * rate);
	else if (flags & VT_TCF_OWN_COLUMN)
		snprintf(buf, cap, "%.3f", rate);
	else
		snprintf(buf, cap, "%.*f", rate < 100 ? 1 : 0, rate);
	return buf;
}

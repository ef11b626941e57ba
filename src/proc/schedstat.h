/*
 * schedstat.h — /proc/PID/task/TID/schedstat: "run_ns wait_ns timeslices".
 *
 * The scheduler's own nanosecond counters (kernel/sched/stats.c, proc(5)
 * "schedstat"): time spent on a CPU, time spent runnable on a run queue but
 * waiting for a CPU, and the number of timeslices run.  Pure parser; it never
 * reads a file.  The kernel prints them only with CONFIG_SCHED_INFO.
 */
#ifndef VT_PROC_SCHEDSTAT_H
#define VT_PROC_SCHEDSTAT_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

struct vt_schedstat {
	uint64_t run_ns;       /* schedstat (1): time on a CPU, ns */
	uint64_t wait_ns;      /* schedstat (2): time runnable, waiting on a run queue, ns */
	uint64_t timeslices;   /* schedstat (3): timeslices run on a CPU */
};

/*
 * Parse the text of a schedstat file (buf need not be NUL-terminated).
 * VT_OK, or VT_E_PARSE (err filled) when fewer than three decimal numbers
 * are present or one overflows.
 */
int vt_schedstat_parse(const char *buf, size_t len, struct vt_schedstat *out,
		       struct vt_err *err);

#endif

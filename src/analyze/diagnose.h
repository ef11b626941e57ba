/*
 * diagnose.h — name the pattern in a process's thread rates, with evidence.
 *
 * Each rule states the figures it used, so a user can check it.  A rule
 * fires only when every condition holds; otherwise the answer is "no
 * pattern", never a guess.  Pure: works on struct vt_threads_rates.
 */
#ifndef VT_CPU_DIAGNOSE_H
#define VT_CPU_DIAGNOSE_H

#include <stddef.h>

#include "analyze/rates.h"

enum vt_diag_kind {
	VT_DIAG_NONE,            /* "no pattern" */
	VT_DIAG_IDLE,
	VT_DIAG_CONTENTION,
	VT_DIAG_CONVOY,
	VT_DIAG_BUSY_POLL,
	VT_DIAG_IO,              /* threads in D state: blocked on I/O */
	VT_DIAG_THROTTLED        /* its cgroup's CPU quota held it back */
};

/* Thresholds, in one place (the help text quotes them). */
#define VT_DIAG_IDLE_CORES 0.01          /* process below this: idle */
#define VT_DIAG_RUNQ_HIGH 0.20           /* run-queue delay share of a core, summed */
#define VT_DIAG_CONVOY_MIN 3             /* pool members */
#define VT_DIAG_CONVOY_FUTEX 0.5         /* share of members' off-CPU samples in futex wait */
#define VT_DIAG_CONVOY_VOL 100.0         /* voluntary switches/s per member, mean */
#define VT_DIAG_POLL_VOL 500.0           /* wakeups/s of a poller */
#define VT_DIAG_POLL_US 100.0            /* CPU per wakeup below this, µs: "does little"; 13 µs
                                           * measured on the busy_poll target, 30+ when the
                                           * machine is loaded, so the rule keeps a margin */

#define VT_DIAG_IO_SHARE 0.30           /* a thread's samples in D state */
#define VT_DIAG_IO_MIN_SAMPLES 5         /* samples a thread needs before its D share counts */
#define VT_DIAG_THROTTLED_SHARE 0.10     /* quota periods throttled */

#define VT_DIAG_MAX 6

struct vt_diag_finding {
	enum vt_diag_kind kind;
	const char *name;        /* "idle", "core contention", "lock convoy", "busy poll",
	                          * "blocked on I/O", "CPU throttled", "no pattern" */
	char evidence[320];
};

struct vt_diagnosis {
	struct vt_diag_finding f[VT_DIAG_MAX];
	size_t n;                /* >= 1: "no pattern" when nothing fired */
};

void vt_diagnose(const struct vt_threads_rates *r, struct vt_diagnosis *out);

#endif

/*
 * diagnose.h — name the pattern in a process's thread rates, with evidence.
 *
 * Each rule keeps the figures it used, so a user can check it (the views
 * word them: render/threads.h).  A rule fires only when every condition
 * holds; otherwise the answer is "no pattern", never a guess.  Pure: works
 * on struct vt_threads_rates.
 */
#ifndef VT_CPU_DIAGNOSE_H
#define VT_CPU_DIAGNOSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

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
#define VT_DIAG_IO_SHOWN 3               /* threads a blocked-on-I/O finding names */

/* A thread a finding names, copied: the finding outlives the rates. */
struct vt_diag_thread {
	pid_t tid;
	char comm[64];
	char wchan[64];          /* the wchan it was seen in most, "" none seen */
	char syscall[32];        /* the system call it was seen in most, "" none seen */
};

/*
 * What a rule found, with the figures it rests on: one member of the union
 * per kind (none for VT_DIAG_NONE).  No sentence: render/threads.h
 * vt_render_diag_evidence words it.
 */
struct vt_diag_finding {
	enum vt_diag_kind kind;
	union {
		struct {                         /* VT_DIAG_IDLE */
			double cores;            /* the process's CPU over the interval */
			double cpu_s;            /* CPU-seconds in it */
			double interval_s;
		} idle;
		struct {                         /* VT_DIAG_CONTENTION */
			double runnable;         /* threads on a CPU or queued for one, on average */
			double usable_cores;
			double runq_per_s;       /* thread-seconds per second waited on a run queue */
			double nonvol_per_s;     /* switches per second, all threads together */
			double vol_per_s;
		} contention;
		struct {                         /* VT_DIAG_CONVOY */
			char pool[64];           /* the pool's shared name ("worker-") */
			size_t members;
			double min_cores, max_cores;   /* the spread of its members' CPU, cores each */
			double futex_share;      /* of their samples, in futex wait (0..1) */
			double futex_off_cpu_share;    /* of their time off a CPU (0..1) */
			double vol_per_s;        /* voluntary switches per second, a member on average */
		} convoy;
		struct {                         /* VT_DIAG_BUSY_POLL */
			struct vt_diag_thread t;
			bool wchan_ok;           /* false: its wchan could not be read */
			double wakeups_per_s;    /* voluntary switches per second */
			double cpu_us;           /* CPU per wakeup, µs */
			double cores;
		} busy_poll;
		struct {                         /* VT_DIAG_IO */
			size_t blocked;          /* threads in state D in VT_DIAG_IO_SHARE of their samples */
			size_t shown;            /* the first of them, in t[] */
			struct {
				struct vt_diag_thread t;
				double d_share;  /* of its samples, in state D (0..1) */
				unsigned samples;
			} t[VT_DIAG_IO_SHOWN];
		} io;
		struct {                         /* VT_DIAG_THROTTLED */
			double quota_cores;
			char quota_dir[VT_QUOTA_DIR_MAX];   /* the cgroup that sets it, "" unknown */
			uint64_t throttled_periods, periods;
			double throttled_s;      /* CPU time held back */
			double interval_s;
			double cores;            /* what it used */
		} throttled;
	};
};

struct vt_diagnosis {
	struct vt_diag_finding f[VT_DIAG_MAX];
	size_t n;                /* >= 1: "no pattern" when nothing fired */
};

/* "idle", "core contention", "lock convoy", "busy poll", "blocked on I/O", "CPU throttled", "no pattern" */
const char *vt_diag_name(enum vt_diag_kind k);

/* Run every rule over r into *out (the findings copy what they name). */
void vt_diagnose(const struct vt_threads_rates *r, struct vt_diagnosis *out);

#endif

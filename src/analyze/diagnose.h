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
#include "analyze/wait_kind.h"

enum vt_diag_kind {
	VT_DIAG_NONE,            /* "no pattern" */
	VT_DIAG_IDLE,
	VT_DIAG_CONTENTION,
	VT_DIAG_CONVOY,
	VT_DIAG_BUSY_POLL,
	VT_DIAG_IO,              /* threads in D state: blocked on I/O */
	VT_DIAG_THROTTLED,       /* its cgroup's CPU quota held it back */
	VT_DIAG_HOST_BUSY,       /* its threads waited for CPUs other processes held */
	VT_DIAG_SERVING,         /* threads woken often by data or connections: work, not a fault */
	VT_DIAG_WAKEUPS,         /* woken often, and why cannot be told: cannot tell yet */
	VT_DIAG_ACCEPT_STALL,    /* a listening socket's queue never empty over the interval */
	VT_DIAG_STOPPED          /* every thread stopped (state T or t): it cannot run */
};

/* Thresholds, in one place (the help text quotes them). */
#define VT_DIAG_IDLE_CORES 0.01          /* process below this: idle */
#define VT_DIAG_RUNQ_HIGH 0.20           /* run-queue delay share of a core, summed */
#define VT_DIAG_CONTENTION_MARGIN 0.25   /* CPUs wanted beyond the usable cores by this */
#define VT_DIAG_CONVOY_MIN 3             /* pool members */
#define VT_DIAG_CONVOY_FUTEX 0.5         /* share of members' sleeping samples in futex wait */
#define VT_DIAG_CONVOY_FUTEX_ACTIVE 0.2  /* ... and of their time not queued for a CPU */
#define VT_DIAG_CONVOY_VOL 100.0         /* voluntary switches/s per member, mean */
#define VT_DIAG_LOCK_BOUND 0.5           /* share of a thread's samples off a CPU on a contended
                                          * lock that leaves it out of core contention's demand */
#define VT_DIAG_POLL_VOL 500.0           /* wakeups/s of a poller */
#define VT_DIAG_POLL_US 100.0            /* CPU per wakeup below this, µs: "does little"; 13 µs
                                           * measured on the busy_poll target, 30+ when the
                                           * machine is loaded, so the rule keeps a margin */
#define VT_DIAG_POLL_IO_PER_WAKEUP 0.01  /* read/write calls per wakeup below this: "moved nothing" */
#define VT_DIAG_SERVING_SHOWN 3          /* threads a serving note names */

#define VT_DIAG_IO_SHARE 0.30           /* a thread's samples in D state */
#define VT_DIAG_IO_MIN_SAMPLES 5         /* samples a thread needs before its D share counts */
#define VT_DIAG_STOPPED_SHARE 0.5        /* a thread's samples in state T or t: it is stopped */
#define VT_DIAG_THROTTLED_SHARE 0.10     /* quota periods throttled */

#define VT_DIAG_STALL_READS 3            /* reads of the accept queues an accept stall needs */
#define VT_DIAG_STALL_MIN_S 1.0          /* ... over at least this long */

#define VT_DIAG_MAX 8
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
			double demand;           /* CPUs its threads want: each one's CPU over its time not queued */
			double usable_cores;
			double runq_per_s;       /* thread-seconds per second waited on a run queue */
			double own_runq_per_s;   /* ... of it behind its own threads, < 0 unknown */
			double others_runnable;  /* other tasks runnable host-wide, < 0 unknown */
			double nonvol_per_s;     /* switches per second, all threads together */
			double vol_per_s;
		} contention;
		struct {                         /* VT_DIAG_CONVOY */
			char pool[64];           /* the pool's shared name ("worker-") */
			size_t members;
			double min_cores, max_cores;   /* the spread of its members' CPU, cores each */
			double futex_share;      /* of their samples, in futex wait (0..1) */
			double futex_sleep_share;      /* of their samples asleep (state S), in futex wait */
			double vol_per_s;        /* voluntary switches per second, a member on average */
			const struct vt_lock *lock;    /* the lock they wait on most (r->locks), NULL unknown */
			double lock_share;       /* of the members' lock waits, on that lock (0..1) */
			double lock_waiting;     /* threads waiting on it on average (thread-seconds/s) */
		} convoy;
		struct {                         /* VT_DIAG_BUSY_POLL, VT_DIAG_SERVING, VT_DIAG_WAKEUPS */
			struct vt_diag_thread t; /* the busiest such thread */
			bool wchan_ok;           /* false: its wchan could not be read */
			bool syscall_ok;         /* false: its system call could not be read */
			enum vt_wait_kind wait;  /* what woke it (wait_kind.h) */
			int64_t timeout_ms;      /* the median timeout its waits were given, < 0 none seen */
			double wakeups_per_s;    /* voluntary switches per second */
			double cpu_us;           /* CPU per wakeup, µs */
			double cores;
			bool io_known;           /* the process's read/write calls were counted */
			double io_calls_per_s;   /* the process's read+write calls per second */
			size_t threads;          /* threads that fit (serving: all of them) */
			unsigned samples;        /* the thread's samples */
			unsigned asleep;         /* of them in state S or D */
		} wake;
		struct {                         /* VT_DIAG_IO */
			size_t blocked;          /* threads in state D in VT_DIAG_IO_SHARE of their samples */
			size_t shown;            /* the first of them, in t[] */
			struct {
				struct vt_diag_thread t;
				double d_share;  /* of its samples, in state D (0..1) */
				unsigned samples;
			} t[VT_DIAG_IO_SHOWN];
		} io;
		struct {                         /* VT_DIAG_HOST_BUSY */
			double runq_per_s;       /* thread-seconds per second its threads waited, in all */
			double host_runq_per_s;  /* ... of it for other processes' tasks */
			double own_runnable;     /* its threads running or queued, on average */
			double others_runnable;  /* other tasks running or queued host-wide, on average */
			double load1;            /* < 0 unknown */
			int host_ncpu;
			double cpu_some;         /* PSI cpu some over the interval (0..1), < 0 unknown */
			double cores;            /* what it used */
		} host_busy;
		struct {                         /* VT_DIAG_THROTTLED */
			double quota_cores;
			char quota_dir[VT_QUOTA_DIR_MAX];   /* the cgroup that sets it, "" unknown */
			uint64_t throttled_periods, periods;
			double throttled_s;      /* CPU time held back */
			double interval_s;
			double cores;            /* what it used */
		} throttled;
		struct {                         /* VT_DIAG_ACCEPT_STALL */
			struct vt_rates_listener l;     /* the deepest such listener */
			size_t listeners;        /* listeners whose queue never emptied */
			unsigned reads;
			double interval_s;
			size_t recorded;         /* over a recording: the stalls found (l unset), 0 live */
			double recorded_s;       /* ... their length, all together */
		} stall;
		struct {                         /* VT_DIAG_STOPPED */
			size_t threads;          /* threads seen */
			double share;            /* of their samples in state T or t */
			unsigned samples;        /* their samples */
		} stopped;
	};
};

struct vt_diagnosis {
	struct vt_diag_finding f[VT_DIAG_MAX];
	size_t n;                /* >= 1: "no pattern" when nothing fired */
};

/*
 * "idle", "core contention", "lock convoy", "busy poll", "blocked on I/O", "CPU throttled",
 * "host busy", "serving", "frequent wakeups", "accept stall", "no pattern"
 */
const char *vt_diag_name(enum vt_diag_kind k);

/* Run every rule over r into *out (the findings copy what they name). */
void vt_diagnose(const struct vt_threads_rates *r, struct vt_diagnosis *out);

#endif

/*
 * rates.h — CPU rates, switch rates and states of a process and its threads
 * over an interval, from samples taken by sample/threads.h.
 *
 * Every rate is a delta of a cumulative counter divided by the interval
 * between the first and the last sample; never a since-start average (that
 * one is computed too, only to show what ps would print).  Pure arithmetic:
 * reads no files.
 */
#ifndef VT_CPU_RATES_H
#define VT_CPU_RATES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/error.h"
#include "sample/thread_sampler.h"
#include "sample/locks.h"
#include "sample/threads.h"

/* Shortest interval measured: stat ticks are 10 ms, 20 ticks keep the error ~5%. */
#define VT_RATES_MIN_INTERVAL_S 0.2
/* since-start average and the interval rate differ "materially" beyond this (cores). */
#define VT_RATES_PS_DIFF_CORES 0.10
/*
 * The process's stat ticks above the threads' schedstat sum by more than
 * this many ticks (each end's utime and stime are cut to whole ticks) plus
 * VT_RATES_UNSEEN_SHARE of the sum: CPU of threads no sample saw, which
 * only the process's counters hold.
 */
#define VT_RATES_UNSEEN_TICKS 3
#define VT_RATES_UNSEEN_SHARE 0.02
/* More context switches per second than any thread can make: a corrupt counter. */

enum vt_thread_flags {
	VT_THREAD_APPEARED = 1 << 0,     /* not in the first sample: started in the interval */
	VT_THREAD_EXITED = 1 << 1,       /* not in the last sample: exited in the interval */
	VT_THREAD_COUNTER_RESET = 1 << 2 /* a counter went backwards: that delta taken as 0 */
};

struct vt_thread_rate {
	pid_t tid;
	char comm[64];
	unsigned flags;                 /* enum vt_thread_flags */
	double cpu_cores;               /* Δrun_ns / Δt (Δticks if no schedstat) */
	double user_cores, sys_cores;   /* Δutime, Δstime ticks / Δt; < 0 unknown */
	double cpu_share;               /* of the process's CPU in the interval, 0..1; < 0 unknown */
	double rate[VT_TC_COUNT];       /* each counter's rate (sample/thread_metric.h), < 0 unknown:
	                                 * [VT_TC_CPU_NS] is cpu_cores, [VT_TC_WAIT_NS] the share of
	                                 * the interval runnable but not running, the switches per s */
	int64_t last_cpu;               /* processor in the last sample it was seen in */
	char last_state;
	unsigned states[VT_NSTATES];    /* samples in each state of VT_STATE_KINDS */
	unsigned nsamples;              /* samples the thread was seen in */
	char wchan[64];                 /* most frequent non-empty wchan, "" none */
	unsigned wchan_count;           /* samples it was seen in */
	bool wchan_ok;                  /* false: unreadable, see wchan_why */
	char wchan_why[48];
	char syscall[32];               /* most frequent system call in progress, "" none */
	unsigned syscall_count;         /* samples it was seen in */
	bool syscall_ok;                /* false: unreadable, see syscall_why */
	char syscall_why[48];
	unsigned timed, untimed;        /* samples in a wait with a timeout argument, and with none */
	int64_t timeout_ms;             /* the median such timeout (timed > 0) */
};

/*
 * Threads named alike: the same name up to trailing digits, or the same
 * name with none (tokio's workers are all "tokio-runtime-w").  When the
 * digits differ (worker-0, worker-1) they are an index and the pool is
 * "worker-"; when every member has the same digits (all "python3") they are
 * part of the program's name and the pool is "python3".
 */
struct vt_thread_pool {
	char name[64];                  /* the shared name without trailing digits ("worker-"): the key */
	char label[64];                 /* what to call it: name, or the full name when not indexed */
	bool indexed;                   /* the trailing digits differ between members */
	bool uneven;                    /* members' rates differ widely: one name, not a pool of equals
	                                 * (spread over VT_POOL_EVEN_SPREAD of the busiest, and 0.02 cores) */
	size_t count;                   /* members: threads there throughout the interval */
	double min_cores, max_cores;    /* the spread of its members' rates */
	double min_share, max_share;    /* ... as shares of the process's CPU (0..1) */
	double total_cores;             /* the members together */
};

/* Listening sockets a rates struct keeps (the deepest queues first). */
#define VT_RATES_LISTEN_MAX 8

/* A listening socket's accept queue over the interval, read at every tick. */
struct vt_rates_listener {
	char address[56];           /* "127.0.0.1:8080", "[::1]:8080" */
	uint32_t min_queue, max_queue;   /* connections waiting for accept(), over the reads */
	uint32_t backlog;           /* its limit; UINT32_MAX unknown (net/tcp) */
};

struct vt_threads_rates {
	pid_t pid;
	char comm[64];
	double interval_s;              /* last.mono - first.mono */
	unsigned nsamples;
	struct vt_thread_reads reads;   /* what the samples' reads read and carried, summed over
	                                 * all of them (zero: not known, a recording) */
	int ncpu;                       /* CPUs the process may run on (affinity; 0 unknown) */
	double quota_cores;             /* its cgroup's CPU quota in cores, < 0 none (set by the caller) */
	char quota_dir[VT_QUOTA_DIR_MAX]; /* the cgroup that sets it (set by the caller) */
	double usable_cores;            /* min(ncpu, quota): what "share" divides by; 0 unknown */
	uint64_t throttled_periods;     /* quota periods throttled in the interval, VT_NA unknown */
	uint64_t periods;               /* quota periods in the interval, VT_NA unknown */
	double throttled_s;             /* time throttled in the interval, < 0 unknown */
	double cores_ticks;             /* process stat Δ(utime+stime) / Δt */
	double cores_ns;                /* Σ thread Δrun_ns / Δt; < 0 without schedstat */
	double cores;                   /* the figure shown: ns unless unavailable, threads exited, or
	                                 * ticks hold CPU the ns do not (VT_RATES_UNSEEN_TICKS) */
	const char *cores_source;       /* "schedstat" or "stat" */
	double user_cores, sys_cores;   /* cores split by the process stat tick deltas */
	double cpu_seconds;             /* CPU consumed in the interval = cores * interval_s */
	double since_start_cores;       /* what ps shows: (utime+stime) / elapsed since start; < 0 unknown */
	bool ps_differs;                /* |since_start - cores| > VT_RATES_PS_DIFF_CORES */
	bool process_exited;            /* it exited before the interval ended (set by the caller) */
	double self_cpu_s;              /* vitals' own CPU in the window; < 0 not measured (set by the caller) */
	size_t appeared, exited;
	/* The host over the interval: who else wanted a CPU (rates), set_host the rest. */
	double others_runnable;         /* other tasks running or queued host-wide, mean; < 0 unknown */
	double load1;                   /* 1-minute load average at the end, < 0 unknown */
	int host_ncpu;                  /* the host's online CPUs, 0 unknown */
	double host_cpu_some;           /* PSI: share of the interval some task waited for a CPU, < 0 unknown */
	/* Its listening sockets over the interval (set by the caller; nlisten 0: none, or not read). */
	struct vt_rates_listener listen[VT_RATES_LISTEN_MAX];
	size_t nlisten;
	unsigned listen_reads;          /* how often their queues were read over the interval */
	/* The locks its threads waited on over the interval (set by the caller; NULL: not read).
	 * Not owned: the caller keeps it alive as long as the rates and their diagnosis. */
	const struct vt_locks *locks;
	/* Over a recording (analyze): the accept-queue stalls analyze/stalls.c found, and their length */
	size_t recorded_stalls;
	double recorded_stall_s;
	bool io_known;                  /* the process's read/write calls below were counted */
	double syscr_per_s, syscw_per_s; /* read- and write-family calls (not recv/send) per second */
	struct vt_thread_rate *threads; /* owned, n, tid order */
	size_t n;
	struct vt_thread_pool *pools;   /* owned, npools */
	size_t npools;
	/*
	 * Threads that started or ended during the interval, as one figure:
	 * the process's CPU (cores) minus that of the threads present at both
	 * ends, >= 0.  It holds the threads no sample saw (a thread per
	 * request lives a few ms between two samples) and the part of the
	 * seen ones' lives that fell between samples.  Every thread's
	 * cpu_share is of cores, so the rows of the threads present at both
	 * ends and this one add up to the process (within tick resolution).
	 */
	double short_lived_cores;
	double short_lived_share;       /* of cores, 0..1 */
	size_t short_lived;             /* threads seen that appeared or exited (flags), a lower bound */
};

/*
 * Compute the rates over samples[0..n-1] (n >= 2, taken in time order from
 * one process).  Rates use samples[0] and samples[n-1]; states and wchans
 * are counted over all n.  ncpu is stored as given and is usable_cores;
 * self_cpu_s, quota_cores and throttled_s are set to -1, the periods to
 * VT_NA (vt_threads_rates_set_quota applies a quota).
 * Errors: VT_E_USAGE when the interval is below VT_RATES_MIN_INTERVAL_S
 * (the message states the minimum) or fewer than 2 samples; VT_E_NOMEM.
 * On success release *out with vt_threads_rates_release.
 */
int vt_threads_rates_compute(const struct vt_threads_sample *samples, size_t n, int ncpu,
			     struct vt_threads_rates *out, struct vt_err *err);

/*
 * Fill r->pools from r->threads, and each thread's cpu_share: of r->cores,
 * or of the threads' sum when that is larger (r->cores set first), for a
 * caller that filled the threads itself.  VT_E_NOMEM.
 */
int vt_threads_rates_group(struct vt_threads_rates *r, struct vt_err *err);

/*
 * Record a cgroup CPU quota of quota_cores (< 0: none) set by cgroup dir;
 * usable_cores becomes the smaller of it and the CPUs of the affinity mask.
 */
void vt_threads_rates_set_quota(struct vt_threads_rates *r, double quota_cores, const char *dir);

/*
 * Apply what the process was allowed over the interval: the CPUs of its
 * affinity mask, its cgroup quota and the periods it was throttled in.
 */
void vt_threads_rates_set_allowance(struct vt_threads_rates *r, const struct vt_cpu_allowance *a);

/* Apply the host's load and the process's I/O over the interval (sample/thread_sampler.h). */
void vt_threads_rates_set_host(struct vt_threads_rates *r, const struct vt_interval_host *h);

void vt_threads_rates_release(struct vt_threads_rates *r);

/* Members of a pool run within this share of the busiest one's rate (and 0.02 cores). */
#define VT_POOL_EVEN_SPREAD 0.25

/* Length of name without its trailing digits (the pool key). */
size_t vt_threads_pool_key_len(const char *name);

#endif

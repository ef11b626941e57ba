/*
 * thread_sampler.h — every thread of one process sampled over an interval,
 * interval after interval: the loop behind `vitals threads`.
 *
 * The sampler holds the process's thread files open (a thread watch) and
 * takes a thread sample (sample/threads.h) at the start of the interval,
 * every step in between (each wait jittered, 0.5 to 1.5 steps, so that a
 * periodic workload is not seen at one phase) and at its end.  The step is
 * 100 ms, or 20 times (vt_thread_sampler_set_cost_factor) the CPU the last
 * sample cost this thread when that is longer, so that sampling stays under
 * 5% of a core (1% at factor 100) on a process with thousands of threads.
 * The first sample of a sampler, which opens every thread's files, costs
 * several later ones and does not set the step; it is paid for within the
 * interval it opens, which may spend 1/factor of a core in all: the later
 * steps of that interval are stretched so that what is left is spread over
 * it, and when nothing is left (1,000 threads over 1 s at factor 100) only
 * the interval's end is sampled.  Later intervals owe nothing for it.
 * Rates come from the
 * first and the last sample, states, wchans and system calls from all of
 * them (analyze/rates.h).  Intervals chain: the last sample of one opens
 * the next (vt_thread_sampler_next), so no CPU falls between two of them.
 *
 * Beside the samples, an interval carries what the process may use: the
 * CPUs of its affinity mask and its cgroup's CPU quota with the quota
 * periods it was throttled in (cgroup cpu.stat read at both ends).
 *
 * Reads only; the target is never stopped.  One sampler is used by one
 * thread at a time.
 */
#ifndef VT_SAMPLE_THREAD_SAMPLER_H
#define VT_SAMPLE_THREAD_SAMPLER_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/error.h"
#include "proc/procfs.h"
#include "proc/status.h"
#include "sample/threads.h"
#include "sample/watch.h"

/* Time between samples: at least this, and at least VT_SAMPLER_COST_FACTOR times one sample's CPU. */
#define VT_SAMPLER_STEP_MIN_NS 100000000ull
#define VT_SAMPLER_COST_FACTOR 20

/* A cgroup directory with the sys root before it (proc/cgroup.h limit_dir). */
#define VT_QUOTA_DIR_MAX (256 + 512 + 2)

/* What a process may use over an interval (the denominators of its shares). */
struct vt_cpu_allowance {
	int ncpu;                       /* CPUs of its affinity mask, 0 unknown */
	double quota_cores;             /* tightest cgroup CPU quota on its path, < 0 none */
	char quota_dir[VT_QUOTA_DIR_MAX];  /* the cgroup that sets it (sys root/dir), "" none */
	uint64_t periods;               /* quota periods in the interval, VT_NA unknown */
	uint64_t throttled_periods;     /* of them throttled, VT_NA unknown */
	double throttled_s;             /* time held back in the interval, < 0 unknown */
};

/*
 * The host and the process's I/O over an interval, for telling a run-queue
 * wait caused by other processes from one caused by its own threads, and a
 * thread that wakes for nothing from one that serves (analyze/diagnose.h).
 */
struct vt_interval_host {
	double load1;                   /* 1-minute load average at the end, < 0 unknown */
	int ncpu_online;                /* the host's CPUs, 0 unknown */
	double cpu_some_s;              /* PSI: wall time some task waited for a CPU, < 0 unknown */
	bool io_known;                  /* the process's I/O counters were read at both ends */
	uint64_t syscr, syscw;          /* read- and write-family calls in the interval */
};

/* One measured interval; the samples belong to the sampler. */
struct vt_threads_interval {
	const struct vt_threads_sample *samples;   /* n, in time order; samples[0] opens it */
	size_t n;
	double interval_s;              /* samples[n-1] - samples[0], 0 when n < 2 */
	bool exited;                    /* the process exited after samples[n-1] */
	struct vt_cpu_allowance allowance;
	struct vt_interval_host host;
	double self_cpu_s;              /* this program's CPU while measuring, < 0 unknown */
};

struct vt_thread_sampler;   /* opaque; owns the watch, the samples and the process dirfd */

/*
 * Between two samples the sampler waits until a CLOCK_MONOTONIC time: by
 * default with clock_nanosleep, ended early when *stop is set; a caller
 * that must also watch its terminal gives its own wait.
 */
struct vt_sampler_wait {
	void (*until)(void *ctx, uint64_t mono_ns);
	void *ctx;
};

/*
 * Start sampling pid: open its watch (sample/watch.h: its directory, a
 * check that it may be sampled, its thread files held open) and read its
 * cgroup's CPU figures.  stop (may be NULL) ends a measure early when set.
 * Errors: those of vt_watch_open and vt_watch_threads.
 * On success close *out with vt_thread_sampler_close.
 */
int vt_thread_sampler_open(const struct vt_procfs *pfs, pid_t pid, volatile sig_atomic_t *stop,
			   struct vt_thread_sampler **out, struct vt_err *err);

/* Sample at least every ns instead of VT_SAMPLER_STEP_MIN_NS (vitals locks: more samples
 * of a few threads); the step still grows to VT_SAMPLER_COST_FACTOR x a sample's cost. */
void vt_thread_sampler_set_step_min(struct vt_thread_sampler *s, uint64_t ns);

/* The step is at least factor times the CPU of the last sample (VT_SAMPLER_COST_FACTOR unless set). */
void vt_thread_sampler_set_cost_factor(struct vt_thread_sampler *s, unsigned factor);

/* Wait with wait instead of clock_nanosleep (NULL: back to the default). */
void vt_thread_sampler_set_wait(struct vt_thread_sampler *s, const struct vt_sampler_wait *wait);

/*
 * Called with each sample as it is taken (each once: the sample that opens
 * an interval was the last of the one before), before the next wait; its
 * time counts in the sample's cost, so the step grows with it.  An error
 * it returns ends the measure with that error.
 */
struct vt_sampler_hook {
	int (*sample)(void *ctx, const struct vt_threads_sample *s, struct vt_err *err);
	void *ctx;
};

/* Call hook with every sample (NULL: none). */
void vt_thread_sampler_set_hook(struct vt_thread_sampler *s, const struct vt_sampler_hook *hook);

/* The process's status read at open (owner, for explaining refused reads), and its directory fd. */
const struct vt_proc_status *vt_thread_sampler_status(const struct vt_thread_sampler *s);
int vt_thread_sampler_dirfd(const struct vt_thread_sampler *s);
/* Its watch, for the parts of the process a sampler does not read itself (its listeners). */
struct vt_watch *vt_thread_sampler_watch(struct vt_thread_sampler *s);

/*
 * Sample until interval_s has passed since the interval's first sample,
 * or *stop is set.  flags as for vt_thread_watch_read.  Fills *out; the
 * last sample carries /proc/uptime.  VT_OK also when the process exited
 * after the first sample (out->exited; what was measured stays).
 * Errors: those of the first sample (VT_E_GONE: it exited before), and
 * VT_E_NOMEM, VT_E_PERM, VT_E_PARSE.
 */
int vt_thread_sampler_measure(struct vt_thread_sampler *s, double interval_s, unsigned flags,
			      struct vt_threads_interval *out, struct vt_err *err);

/* Keep only the last sample of the interval measured: it opens the next one. */
void vt_thread_sampler_next(struct vt_thread_sampler *s);

/* NULL is a no-op. */
void vt_thread_sampler_close(struct vt_thread_sampler *s);

#endif

/*
 * profile_summary.h — one summary of a profile that every view renders
 * (text, JSON, the HTML beside its flame graph, a soak's stored profile):
 * the bucket table with its confidence, the idle waits apart, the top
 * functions by self and total, threads and pools beside their measured
 * CPU, and how each module was unwound.
 *
 * Shares are of on-CPU samples (state running).  The ± figure is the 95%
 * Wilson score interval of a share, treating samples as independent draws:
 * samples of one thread close in time are not quite independent, so read
 * it as a lower bound on the uncertainty.  With fewer than
 * VT_PROF_FEW_SAMPLES on-CPU samples the views say they cannot tell yet.
 *
 * Wall mode (meta.wall): every thread was sampled, blocked or not, at one
 * rate (meta.wall_hz — the profiler's promise), so counts of different
 * states add up to wall time.  Each bucket's wall samples split into
 * running, runnable and waiting; waits that are idle (vt_wait_class_idle:
 * parked on a futex, epoll, poll, sleep) are counted apart and left out of
 * the buckets' wall shares.
 *
 * The summary owns copies of every string it shows: it outlives the
 * profile and the rules.  Free with vt_prof_summary_free.  Pure.
 */
#ifndef VT_ANALYZE_PROFILE_SUMMARY_H
#define VT_ANALYZE_PROFILE_SUMMARY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "analyze/profile_buckets.h"
#include "sample/call_count.h"
#include "sample/locks.h"
#include "sample/profile.h"

#define VT_PROF_FEW_SAMPLES 50   /* on-CPU samples below which no ranking is trusted */
#define VT_PROF_TOP_WAITS 3      /* waits named per bucket (wall mode) */
#define VT_PROF_WAIT_MAX 64      /* bytes of a wait's name */
#define VT_PROF_UNSAMPLED_MIN_CPU_S 0.05   /* CPU used below which no share of it is judged */
#define VT_PROF_UNSAMPLED_MOST 0.5         /* a share not sampled above which its cause is named */
#define VT_PROF_UNSAMPLED_THIN 0.1         /* ... when threads that stayed used it: a tenth */

/* A share of n samples with its 95% Wilson interval. */
struct vt_prof_share {
	uint64_t samples;
	double share;             /* samples / n, 0..1 (0 when n is 0) */
	double lo, hi;            /* the interval, 0..1 */
	double pm;                /* ± half its width, (hi - lo) / 2 */
};

/* Fill *out for k of n (n 0: all zero). */
void vt_prof_share_of(uint64_t k, uint64_t n, struct vt_prof_share *out);

struct vt_prof_wait_count {
	char what[VT_PROF_WAIT_MAX];   /* the wait string ("futex_wait_queue"), else its class */
	uint64_t samples;
};

struct vt_prof_bucket_row {
	uint32_t bucket;          /* index into the rules' buckets */
	char name[VT_BUCKET_NAME_MAX + 1];
	bool builtin, runtime;    /* as struct vt_bucket */
	struct vt_prof_share cpu; /* of on-CPU samples */
	bool tied_next;           /* its interval overlaps the next row's: which is larger is
	                           * not established (rows are sorted by cpu.samples) */
	/* wall mode */
	uint64_t wall_running, wall_runnable, wall_waiting;   /* waiting: not idle */
	uint64_t wall_idle;       /* idle waits whose stack lands here: not in wall */
	struct vt_prof_share wall;   /* running + runnable + waiting of the non-idle wall samples */
	struct vt_prof_wait_count waits[VT_PROF_TOP_WAITS];   /* most seen first */
	uint32_t nwaits;
};

/* A function: "name" (module) or "module+0xoff" where no symbol covers it. */
struct vt_prof_func_row {
	char *label;              /* as vt_profile_loc_label */
	char *module;             /* "" unknown */
	char *system_name;        /* the symbol its name was demangled from; "" none */
	char *file;               /* the source file it is defined in (DWARF); "" unknown */
	uint32_t line;            /* ... its line; 0 unknown */
	bool inlined;             /* every sample met it inlined into another function */
	bool kernel;
	uint64_t self, total;     /* on-CPU samples with it at the leaf / anywhere (once a sample) */
	double self_share, total_share;   /* of on-CPU samples */
};

struct vt_prof_thread_row {
	pid_t tid;
	char *name;
	char *pool;               /* its pool's name (the thread's own name when in none) */
	struct vt_prof_share cpu; /* of on-CPU samples */
	double cpu_s;             /* measured CPU over the profile, < 0 unknown */
	double cpu_s_share;       /* cpu_s of the threads' measured total, < 0 unknown: the truth
	                           * cpu.share estimates */
	uint64_t samples;         /* all states */
};

struct vt_prof_pool_row {
	char *name;
	uint32_t threads;
	struct vt_prof_share cpu;
	double cpu_s, cpu_s_share;   /* < 0 when a member's is unknown */
};

struct vt_prof_module_row {
	char *name, *path;
	uint64_t frames[VT_UNWIND__COUNT];   /* caller steps out of it, by method */
	uint64_t frames_total;
	uint8_t symbols;          /* enum vt_sym_source */
	uint8_t lines;            /* enum vt_line_source */
	char *debug_file;         /* the separate debug file read; NULL none */
	char *debug_ignored;      /* a debug file under its name that is not its own; NULL none */
	char *debug_ignored_why;  /* what differs; NULL with debug_ignored */
};

/*
 * Why the on-CPU samples missed most of the CPU measured, named only when
 * threads came and went (a thread-per-request server at 99 Hz: 5 samples for
 * 0.45 s of CPU).  perf's cpu-clock samples a thread after each 1/hz s of its
 * own CPU, counted from zero in every thread: one that uses less in its whole
 * life is never sampled.  (ptrace stops weigh a thread's CPU since the last,
 * and kernel samples refused is a gap of its own, said apart: neither is named.)
 */
enum vt_prof_unsampled_cause {
	VT_PROF_UNSAMPLED_NONE = 0,
	VT_PROF_UNSAMPLED_SHORT_THREADS,     /* events inherited: threads using under 1/hz s each;
	                                      * a higher --hz samples them */
	VT_PROF_UNSAMPLED_UNLISTED_THREADS,  /* events per thread, opened at each 0.1 s listing:
	                                      * threads that live less get none, at any rate */
	VT_PROF_UNSAMPLED_THIN_THREADS,      /* threads there throughout, each under 1/hz s of CPU
	                                      * over the profile (a pool of 500 mostly idle
	                                      * workers): a higher --hz samples them */
};

struct vt_prof_summary {
	struct vt_prof_meta meta;        /* a copy of the profile's */
	uint64_t cpu_samples;            /* state running */
	uint64_t runnable_samples;       /* wall mode */
	uint64_t waiting_samples;        /* wall mode: sleeping, disk, other */
	uint64_t waits[VT_WAITC__COUNT]; /* waiting samples by class */
	uint64_t idle_samples;           /* waits of an idle class */
	uint64_t wall_samples;           /* wall mode: every state but the idle waits */
	uint64_t truncated_samples;      /* on-CPU samples whose unwind stopped before the root */
	bool few_samples;                /* cpu_samples < VT_PROF_FEW_SAMPLES */
	bool runtime_seen;               /* a runtime bucket has samples: say what that hides */

	struct vt_prof_bucket_row *buckets;   /* buckets with any sample; by on-CPU samples,
	                                       * then wall samples, then name */
	uint32_t nbuckets;
	struct vt_prof_func_row *top_self;    /* by self, at most opts.top */
	uint32_t ntop_self;
	struct vt_prof_func_row *top_total;   /* by total */
	uint32_t ntop_total;
	uint32_t nfuncs_seen;                 /* distinct functions in on-CPU samples */
	uint32_t nfuncs_leaf;                 /* of them, those seen at the leaf */
	struct vt_prof_thread_row *threads;   /* every thread, by on-CPU samples */
	uint32_t nthreads;
	struct vt_prof_pool_row *pools;       /* pools of two or more threads, by on-CPU samples */
	uint32_t npools;
	double threads_cpu_s;                 /* the threads' measured CPU added up, < 0 unknown */
	/* the CPU the samples missed */
	double used_cpu_s;        /* what the on-CPU samples should stand for: the process's CPU
	                           * (the kept threads' with --threads), < 0 unknown */
	double sampled_cpu_s;     /* what they stand for: on-CPU samples / hz, < 0 unknown */
	double unsampled_share;   /* 1 - sampled / used (0 when more), < 0 unknown or under
	                           * VT_PROF_UNSAMPLED_MIN_CPU_S used */
	double unlisted_cpu_s;    /* the process's CPU that no thread of the profile accounts for
	                           * (threads that lived between two listings), < 0 unknown */
	enum vt_prof_unsampled_cause unsampled_cause;   /* over VT_PROF_UNSAMPLED_MOST missed and
	                                                 * threads came and went, or over
	                                                 * VT_PROF_UNSAMPLED_THIN used by threads
	                                                 * that got no sample */
	uint32_t thin_threads;    /* THIN_THREADS: threads with CPU measured and no on-CPU sample */
	unsigned hz_advice;       /* SHORT_THREADS: a --hz that samples a thread once it used
	                           * 1/hz_advice s; 0 none (the rate is the highest already) */
	struct vt_prof_module_row *modules;   /* by frames unwound */
	uint32_t nmodules;
	/* wall mode: the locks its threads waited on (sample/profiler.h opts.locks), set by the
	 * caller and not owned; NULL when not read */
	const struct vt_locks *locks;
	/* --count: the named functions' calls beside their CPU (vt_prof_calls_compute), set
	 * by the caller and not owned; NULL when not counted */
	const struct vt_prof_calls *calls;
};

/* A counted function: its calls (sample/call_count.h) beside its inclusive CPU in the
 * profile (the on-CPU samples with one of its addresses anywhere in the stack). */
struct vt_prof_call_row {
	const struct vt_call_fn *fn;
	double calls_per_s;       /* calls / armed time */
	uint64_t samples;         /* on-CPU samples in it (inclusive) */
	double share;             /* of the on-CPU samples */
	double cores;             /* its CPU: share x the process's CPU / duration; NAN unknown */
	double cpu_per_call_s;    /* cores / calls_per_s; NAN unknown */
};

struct vt_prof_calls {
	const struct vt_call_counts *counts;
	struct vt_prof_call_row rows[VT_CALLS_MAX];
	size_t n;
};

/* Put the counts beside profile p's CPU. */
void vt_prof_calls_compute(const struct vt_profile *p, const struct vt_call_counts *counts,
			   struct vt_prof_calls *out);

struct vt_prof_summary_opts {
	uint32_t top;             /* functions per top list; 0: 20 */
};

/*
 * Summarize p with rules r (opts NULL: defaults) into *out.
 * VT_E_NOMEM (nothing in *out).
 */
int vt_prof_summarize(const struct vt_profile *p, const struct vt_bucket_rules *r,
		      const struct vt_prof_summary_opts *opts, struct vt_prof_summary **out,
		      struct vt_err *err);

void vt_prof_summary_free(struct vt_prof_summary **s);

#endif

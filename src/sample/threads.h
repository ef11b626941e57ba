/*
 * threads.h — every thread of a process at one moment, and what each was
 * seen doing over many such moments.
 *
 * A sample is one read of a thread watch (proc/thread_watch.h: files held
 * open, re-read with pread) turned into plain rows that outlive the watch's
 * next read: the threads that are there, and those that left since the
 * previous read with their last counters.  A tally counts, thread by
 * thread, the states, wchans and system calls seen over samples: `vitals
 * threads` tallies the samples of one interval, a soak those of hours.  It
 * only reads; rates over two or more samples are analysis
 * (analyze/rates.h).  A thread that exits while it is being read is left
 * out, not an error.
 */
#ifndef VT_SAMPLE_THREADS_H
#define VT_SAMPLE_THREADS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/error.h"
#include "proc/thread_watch.h"
#include "sample/thread_metric.h"

struct vt_thread_snap {
	pid_t tid;
	char comm[64];              /* task stat (2) */
	char state;                 /* task stat (3) */
	uint64_t utime_ticks;       /* task stat (14) */
	uint64_t stime_ticks;       /* task stat (15) */
	uint64_t start_ticks;       /* task stat (22): tells a reused tid from the old thread */
	int64_t processor;          /* task stat (39): CPU last run on, -1 unknown */
	uint64_t counter[VT_TC_COUNT];  /* its counters (sample/thread_metric.h), VT_NA not read */
	bool cpu_schedstat;         /* counter[VT_TC_CPU_NS] is schedstat's run time, not ticks */
	bool wchan_ok;              /* wchan was read */
	char wchan[48];             /* task wchan: kernel function slept in; "" when running ("0") */
	char wchan_why[48];         /* why it is unavailable when !wchan_ok */
	bool syscall_ok;            /* syscall was read */
	char syscall[32];           /* name of the system call in progress, "" none or on a CPU,
	                             * "#N" for a number this build does not name */
	char syscall_why[48];       /* why it is unavailable when !syscall_ok */
	uint64_t futex_addr;        /* the futex word a thread in futex(2) waits on, 0 none */
	uint32_t futex_op;          /* and the operation (FUTEX_WAIT, ... with its flags) */
	uint64_t sp, pc;            /* user stack pointer and pc of a blocked thread, 0 unknown:
	                             * where its stack is unwound from without stopping it */
	int64_t timeout_ms;         /* the timeout argument of the wait in progress (poll,
	                             * epoll_wait): ms, VT_TIMEOUT_NONE none (waits until woken),
	                             * VT_TIMEOUT_UNKNOWN not such a wait or not readable */
};

#define VT_TIMEOUT_NONE (-1)
#define VT_TIMEOUT_UNKNOWN INT64_MIN

/*
 * What the reads behind samples read and carried, row by row (the watch's
 * vt_thread_watch_stats): a thread's state read from its stat or carried
 * from the read before (it had not run since, VT_TW_CARRY), and its wchan
 * and system call read, carried (asleep in the same wait) or known none
 * without a read (state R).  Summed over the samples of an interval it is
 * the evidence of what the state and wait counts rest on.
 */
struct vt_thread_reads {
	uint64_t stat_read;
	uint64_t stat_carried;
	uint64_t doing_read;
	uint64_t doing_carried;
	uint64_t doing_running;
};

/* Add b's counts to a. */
void vt_thread_reads_add(struct vt_thread_reads *a, const struct vt_thread_reads *b);

struct vt_threads_sample {
	pid_t pid;
	char comm[64];              /* stat (2) */
	uint64_t mono_ns;           /* CLOCK_MONOTONIC when the sample began */
	uint64_t utime_ticks;       /* process stat (14): all threads, exited ones included */
	uint64_t stime_ticks;       /* process stat (15) */
	uint64_t start_ticks;       /* process stat (22), clock ticks since boot */
	double uptime_s;            /* /proc/uptime (1) at the sample, 0 if not read (the
	                             * interval sampler reads it for the last sample only) */
	long clk_tck;               /* ticks per second */
	bool host_known;            /* host_runnable was read (the interval sampler reads it) */
	uint32_t host_runnable;     /* tasks running or queued host-wide (/proc/loadavg), the
	                             * reader itself included */
	struct vt_thread_snap *threads;   /* owned, n entries, in tid order */
	size_t n;
	struct vt_thread_snap *gone;      /* owned, ngone: threads that left since the watch's
	                                   * previous read, with their last counters */
	size_t ngone;
	struct vt_thread_reads reads;     /* what the read read and carried for the n rows */
};

/*
 * Read process w once (flags as for vt_thread_watch_read; VT_TW_CSW,
 * VT_TW_WCHAN and VT_TW_SYSCALL for the full view) and fill *out with its
 * rows.  A read that is partial (one thread unreadable) still gives a
 * sample.  Errors: VT_E_GONE (the process exited, or is a zombie),
 * VT_E_PERM, VT_E_PARSE, VT_E_NOMEM.
 * On success the caller releases *out with vt_threads_sample_release.
 */
int vt_threads_sample_take(struct vt_thread_watch *w, unsigned flags,
			   struct vt_threads_sample *out, struct vt_err *err);

/*
 * Fill *out from the last read of w without reading anything: the threads
 * that left since the previous read, and the live ones too when live (a
 * soak writes the rows of exited threads every tick one exits, and the live
 * ones only at its per-thread cadence).  Errors: VT_E_NOMEM; VT_E_GONE when
 * live rows were asked for and the read had none.
 */
int vt_threads_sample_from_watch(const struct vt_thread_watch *w, bool live, struct vt_threads_sample *out,
				 struct vt_err *err);

/* Free the thread arrays; safe on a zeroed or already released sample. */
void vt_threads_sample_release(struct vt_threads_sample *s);

/* The thread tid in s (its rows are in tid order), NULL when it is not there. */
const struct vt_thread_snap *vt_threads_sample_find(const struct vt_threads_sample *s, pid_t tid);

/* ---- what threads were seen doing ---- */

/* State letters counted: R S D T (T,t) Z (Z,X) I, other. */
#define VT_STATE_KINDS "RSDTZI?"
#define VT_NSTATES 7
enum { VT_STATE_R, VT_STATE_S, VT_STATE_D, VT_STATE_T };   /* indexes into VT_STATE_KINDS */

/* Index of a state letter (task stat field 3) in VT_STATE_KINDS. */
int vt_state_index(char state);

#define VT_WCHAN_SLOTS 6

/*
 * The most frequent names a thread was seen with (wchans, system calls):
 * VT_WCHAN_SLOTS slots, the first names seen; a name past them is not
 * counted (a thread that sleeps in more than six places has no "usual" one).
 */
struct vt_name_tally {
	char name[48];
	unsigned count;
};

/* Count name ("" is not counted) in slots[VT_WCHAN_SLOTS]. */
void vt_name_tally_add(struct vt_name_tally *slots, const char *name);
/*
 * The name seen most often (the first of a tie) into out[cap] and its count
 * into *count; false, leaving both, when none was counted.
 */
bool vt_name_tally_top(const struct vt_name_tally *slots, char *out, size_t cap,
		       unsigned *count);

/*
 * The timeouts a thread was seen waiting with, by octave: [0] holds 0 ms,
 * [k] holds [2^(k-1), 2^k) ms, the last one everything longer.  An event
 * loop passes the time to its next timer, anything from 0 to its period, so
 * the shortest timeout seen falls as more samples are taken; the median does
 * not.
 */
#define VT_TIMEOUT_OCTAVES 24
struct vt_timeout_tally {
	unsigned n[VT_TIMEOUT_OCTAVES];      /* timeouts counted in each octave */
	int64_t sum_ms[VT_TIMEOUT_OCTAVES];  /* and their sum */
};

/* Count one timeout (ms >= 0). */
void vt_timeout_tally_add(struct vt_timeout_tally *t, int64_t ms);
/*
 * The median timeout, as the mean of the octave that holds it (exact when
 * the timeouts are all alike); -1 when none was counted.
 */
int64_t vt_timeout_tally_median(const struct vt_timeout_tally *t);

/* One thread over the samples it was seen in. */
struct vt_thread_tally {
	pid_t tid;
	uint64_t start_ticks;                         /* of the thread counted */
	unsigned seen;                                /* samples counted */
	unsigned states[VT_NSTATES];                  /* of them in each state of VT_STATE_KINDS */
	struct vt_name_tally wchans[VT_WCHAN_SLOTS];  /* the wchans read */
	struct vt_name_tally calls[VT_WCHAN_SLOTS];   /* the system calls read */
	unsigned timed;                               /* samples in a wait with a timeout argument */
	unsigned untimed;                             /* ... with none (VT_TIMEOUT_NONE) */
	struct vt_timeout_tally timeouts;             /* the timed ones' timeouts */
};

/* Count one sample of a thread (the first one sets tid and start_ticks). */
void vt_thread_tally_add(struct vt_thread_tally *t, const struct vt_thread_snap *s);

/*
 * What a thread was doing, the form a recording keeps (store/store.h):
 * samples, how many in R, S and D, the most frequent wchan and system call
 * with their counts, and the waits with a timeout argument and without one
 * with the median timeout (what tells a poll its timeout woke from one
 * woken by events: analyze/wait_kind.h).  seen 0: none.
 */
struct vt_thread_doing {
	unsigned seen;               /* samples */
	unsigned n_r, n_s, n_d;      /* of them in state R (running or runnable), S, D */
	char wchan[48];              /* most frequent kernel function slept in, "" none */
	unsigned wchan_n;
	char syscall[32];            /* most frequent system call in progress, "" none */
	unsigned syscall_n;
	unsigned timed, untimed;     /* samples in a wait with a timeout argument, with none */
	int64_t timeout_ms;          /* the median such timeout (timed > 0) */
};

void vt_thread_tally_doing(const struct vt_thread_tally *t, struct vt_thread_doing *out);

/* The tallies of every live thread of a process, in tid order. */
struct vt_thread_tallies {
	struct vt_thread_tally *t;   /* owned, n */
	size_t n;
};

/*
 * Count the threads of s into a new set that replaces the old one: a thread
 * still there keeps its counts (tid and start time both match), one gone
 * since is dropped, a new one starts at zero.  VT_E_NOMEM leaves set as it
 * was.
 */
int vt_thread_tallies_count(struct vt_thread_tallies *set, const struct vt_threads_sample *s,
			    struct vt_err *err);
/* The tally of thread tid started at start_ticks, NULL when there is none. */
const struct vt_thread_tally *vt_thread_tallies_find(const struct vt_thread_tallies *set, pid_t tid,
						     uint64_t start_ticks);
void vt_thread_tallies_release(struct vt_thread_tallies *set);

#endif

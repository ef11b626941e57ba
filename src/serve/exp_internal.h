/*
 * exp_internal.h — what the exporter keeps between scrapes, shared by its
 * files: exporter.c (scrape and exposition), exp_targets.c (which
 * processes a target is), exp_proc.c (reading one process) and exp_pools.c
 * (thread pools and the counters that must not fall).  Not an interface:
 * only src/serve and its unit test include it.
 *
 * Counters never fall while the exporter runs: a thread that exits leaves
 * its last CPU and context switches in its pool's and process's base, and a
 * process that leaves its target leaves its last counters in the target's
 * base (process-exporter does the same for a name group).  So
 * process_cpu_seconds of a target is the CPU of every process it has been
 * since the exporter started, up to each one's last scrape.
 */
#ifndef VT_SERVE_EXP_INTERNAL_H
#define VT_SERVE_EXP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "alloc/detect.h"
#include "base/buf.h"
#include "proc/listen.h"
#include "proc/status.h"
#include "proc/thread_watch.h"
#include "sample/heap.h"
#include "sample/sample.h"
#include "sample/thread_metric.h"
#include "sample/watch.h"
#include "serve/exporter.h"
#include "soak/follow.h"

#define EXP_MAX_POOLS 64              /* distinct pool labels per target; the rest go to "other" */
#define EXP_MAX_LISTEN 32             /* listen addresses per target */
#define EXP_MAX_PROCS 512             /* processes per target (a name group, a cgroup) */
#define EXP_RESOLVE_EVERY_S 10.0      /* /proc scans for name, cgroup and pid-follow targets */
#define EXP_SLOW_EVERY_S 60.0         /* fd links (which sockets listen) and limits */
#define EXP_CSW_MANY_THREADS 256      /* above this, context switches are read every EXP_CSW_EVERY scrapes */
#define EXP_CSW_EVERY 4
#define EXP_HEAP_EVERY_DEFAULT_S 60.0 /* heap_every_s <= 0 */
#define EXP_FREE_EVERY_DEFAULT_S 60.0 /* free_every_s <= 0 */
#define EXP_FREE_BUDGET_DEFAULT 0.01  /* free_budget <= 0 */
#define EXP_REDETECT 10               /* scrapes to retry allocator detection of a fresh process */

/* A pool of threads of one target: threads named alike (exp_pool_name). */
struct exp_pool {
	char name[64];                /* the label: "worker" for worker-1, worker-2; "other" past the cap */
	uint64_t gone_utime, gone_stime;   /* ticks of threads that left it (exited, renamed, process gone) */
	uint64_t utime, stime;        /* this scrape: gone + live members (ticks) */
	unsigned threads;             /* live members at this scrape */
};

/* One thread of a process as last read. */
struct exp_thread {
	pid_t tid;
	uint64_t start_ticks;         /* with tid, identifies it */
	uint64_t utime, stime;        /* ticks, cumulative */
	uint64_t off_utime, off_stime;   /* of them, counted in pools it was in before (renamed) */
	uint64_t counter[VT_TC_COUNT];   /* last read (sample/thread_metric.h), 0 before the first
	                                  * read that had it (context switches: VT_TW_CSW) */
	int pool;                     /* index into the target's pools */
};

/* One process of a target, and what is held open for it. */
/* Parts of a process that may be refused to vitals, each left out of the scrape then. */
enum exp_part {
	EXP_PART_FDS,                 /* fd/: open fds, listening sockets (ptrace read access) */
	EXP_PART_MAPS,                /* maps: arenas, 64 MiB heaps, the allocator (ptrace read access) */
	EXP_PART_HEAP,                /* the allocator's figures, by the agent or a ptrace probe */
	EXP_PART_FREE,                /* the free walk (free memory on resident pages, glibc) */
	EXP_PART_COUNT
};

struct exp_proc {
	pid_t pid;
	uint64_t start_ticks;         /* stat (22) */
	struct vt_watch *watch;       /* its reader (sample/watch.h): /proc/PID held, status,
	                               * threads, sockets, allocator figures */
	struct exp_thread *threads;   /* owned, nthreads, tid order */
	size_t nthreads;
	uint64_t gone_counter[VT_TC_COUNT];   /* exited threads' last counters */
	unsigned reads;               /* scrapes that read it */
	bool read_now;                /* read in this scrape */

	/* the last read */
	struct vt_proc_status st;
	char comm[64];
	uint64_t utime, stime;        /* stat: all threads, exited ones included (ticks) */
	long clk_tck;
	struct vt_thread_states states;
	double open_fds;              /* NAN unknown (fd/ needs ptrace access) */
	double max_fds;               /* limits "Max open files" soft; NAN unknown or unlimited */
	double next_limits;           /* monotonic time to read its limits again */
	struct vt_listen_sock listen[EXP_MAX_LISTEN];
	size_t nlisten;

	/* maps: read again only when VmSize changed */
	uint64_t maps_vmsize;         /* VmSize when maps were read; VT_NA never */
	double arenas;                /* glibc arenas, main included; NAN unknown */
	double heaps_64m;             /* 64 MiB arena heap reservations; NAN unknown */
	struct vt_alloc_info alloc;
	int redetect_left;

	/* allocator figures, at most every heap_every_s */
	bool heap_have;
	double heap_at;               /* monotonic time of the figures */
	enum vt_heap_method heap_method;
	struct vt_alloc_summary heap;   /* the allocator's summary; NAN unknown */

	/* free memory on resident pages: the last walk that gave a figure (sample/free_walk.h) */
	bool free_have;
	double free_at;               /* monotonic time of that walk */
	double free_resident, trimmable;

	const char *unread[EXP_PART_COUNT];   /* why that part could not be read (exp_reason);
	                                       * NULL: read, or not tried */
};

struct exp_target {
	enum vt_exp_kind kind;
	char *arg;                    /* owned copy: name, pidfile, cgroup path */
	char label[256];
	struct vt_follow_key key;     /* VT_EXP_PID: its command line, to follow a restart */
	pid_t pidfile_pid;            /* VT_EXP_PIDFILE: the pid last read from the file */
	struct exp_proc **procs;      /* owned, nprocs */
	size_t nprocs;
	double next_resolve;          /* monotonic */
	bool lost;                    /* a process left since the last resolution */
	unsigned lost_pending;        /* processes lost not yet replaced */
	uint64_t restarts;
	const char *reason;           /* why it has no process: a fixed word */
	/* bases of the counters of processes that left */
	double gone_user_s, gone_sys_s;
	uint64_t gone_counter[VT_TC_COUNT];   /* of threads of processes that left */
	struct exp_pool pools[EXP_MAX_POOLS + 1];   /* the last one is "other" once used */
	size_t npools;
	double took_s;                /* this scrape's time on it */
};

struct vt_exporter {
	const struct vt_procfs *pfs;
	bool heap_ptrace;
	double heap_every_s;
	double free_every_s, free_budget;
	pid_t self;
	struct exp_target *targets;   /* owned, ntargets */
	size_t ntargets;
	struct vt_buf buf;            /* scratch for reads */
	uint64_t scrapes;
	double boot_s;                /* unix time of boot (/proc/stat btime), 0 unknown */
};

/* ---- exp_pools.c ---- */

/* The pool of a thread name: without trailing digits, then separators ("worker-12" → "worker"). */
void exp_pool_name(const char *comm, char *out, size_t cap);

/* Index of pool name in t, added if new; past EXP_MAX_POOLS the "other" pool. */
int exp_pool_index(struct exp_target *t, const char *name);

/*
 * Take the rows of the watch's last read into p->threads: threads gone
 * since (by tid and start time) leave their counters in the bases, new
 * ones join their pool, a renamed one moves; a counter the read did not
 * have (VT_NA: context switches without VT_TW_CSW) keeps its last value.
 * VT_OK or VT_E_NOMEM (p->threads unchanged).
 */
int exp_threads_update(struct exp_target *t, struct exp_proc *p, const struct vt_thread_counts *rows,
		       size_t n, struct vt_err *err);

/* A process leaves t: its threads' counters go to the pools' bases, its own to t's. */
void exp_threads_retire(struct exp_target *t, struct exp_proc *p);

/* ---- exp_proc.c ---- */

/*
 * Open process pid for t: directory, status, thread watch.  VT_E_NOPROC,
 * VT_E_KTHREAD, VT_E_ZOMBIE, VT_E_PERM, VT_E_USAGE (a thread id), VT_E_NOMEM.
 */
int exp_proc_open(struct vt_exporter *x, pid_t pid, struct exp_proc **out, struct vt_err *err);
/* Read it for this scrape.  VT_E_GONE (exited, or a zombie now), VT_E_NOMEM. */
int exp_proc_read(struct vt_exporter *x, struct exp_target *t, struct exp_proc *p, double now,
		  struct vt_err *err);
void exp_proc_close(struct exp_proc *p);

/* ---- exp_targets.c ---- */

/* Set up t from spec (copies; checks as vt_exporter_open says). */
int exp_target_init(struct vt_exporter *x, const struct vt_exp_target *spec, struct exp_target *t,
		    struct vt_err *err);
/* Find t's processes again when due (or forced), adopting new ones and dropping gone ones. */
int exp_target_resolve(struct vt_exporter *x, struct exp_target *t, double now, bool force,
		       struct vt_err *err);
/* Drop process i of t (it is gone, or no longer the target's). */
void exp_target_drop(struct exp_target *t, size_t i, bool lost);
void exp_target_release(struct exp_target *t);

/* Why something of a process could not be read, as a fixed word for a label value:
 * permission, kernel_thread, zombie, not_a_process, gone, unsupported, error. */
const char *exp_reason(int code);

#endif

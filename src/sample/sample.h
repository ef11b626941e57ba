/*
 * sample.h — the one data model: everything vitals knows about a process at
 * one moment.  Probes fill it (sample.c); the JSON, text and (later) store
 * and analysis read it.  Unknown numbers are VT_NA, never 0; a section that
 * could not be read says why in its struct vt_section.
 *
 * Schema: docs/json.md describes the JSON rendering; bump its version in
 * render/json.c when a field changes meaning or is removed (adding fields is
 * compatible).
 */
#ifndef VT_SAMPLE_SAMPLE_H
#define VT_SAMPLE_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "alloc/arena_cap.h"
#include "alloc/detect.h"
#include "alloc/regions.h"
#include "base/error.h"
#include "proc/cgroup.h"
#include "proc/listen.h"
#include "proc/maps.h"
#include "proc/netstat.h"
#include "proc/procfs.h"
#include "proc/status.h"


/* Why a part of the sample is missing. */
struct vt_section {
	bool available;
	bool skipped;           /* not read on purpose (e.g. --light); not a failure */
	int code;               /* VT_E_* when not available */
	char reason[VT_ERR_MSG_MAX];
	char hint[VT_ERR_MSG_MAX];
};

struct vt_thread_states {
	int total;
	int running;            /* R */
	int sleeping;           /* S */
	int disk;               /* D uninterruptible */
	int stopped;            /* T t */
	int zombie;             /* Z X */
	int idle;               /* I */
	int other;
};

/* Count one thread of stat state letter state. */
void vt_thread_states_count(struct vt_thread_states *t, char state);

/* Most listening sockets a sample keeps; the rest are counted. */
#define VT_SAMPLE_MAX_LISTEN 64

/* The TCP sockets the process listens on, and their accept queues. */
struct vt_sample_listen {
	struct vt_listen_sock v[VT_SAMPLE_MAX_LISTEN];
	size_t n;
	size_t dropped;                  /* listeners beyond VT_SAMPLE_MAX_LISTEN */
	const char *via;                 /* "sock_diag" or "net/tcp" (no backlog limits) */
	uint64_t open_fds;
	struct vt_listen_counters counters;   /* its network namespace's, since boot */
};

struct vt_sample {
	/* identity */
	pid_t pid;
	char comm[64];
	char *cmdline;                   /* owned; args joined by spaces, non-printables escaped */
	double uptime_s;                 /* since the process started */
	uid_t uid;
	int64_t num_threads;
	struct vt_thread_states threads;
	struct vt_section threads_st;

	/* kernel memory counters (status) */
	struct vt_proc_status status;
	uint64_t committed;              /* RssAnon + VmSwap: anonymous memory the process holds */

	/* mappings */
	bool light;                      /* from maps only (no smaps): no Rss per region */
	bool regions_reused;             /* maps not read: the figures below are a memo's
					  * (vt_maps_memo), regions is empty */
	struct vt_region_list regions;
	struct vt_section regions_st;
	struct vt_arena_summary arenas;
	bool memory_read;                /* glibc headers were read from target memory */
	struct vt_cpython python;        /* a CPython interpreter? (alloc/cpython.h); its arenas are on the regions */
	char python_why[200];            /* why its arenas were not counted, "" when they were */
	struct vt_section memory_st;     /* why target memory could not be read */

	/* allocator */
	struct vt_alloc_info alloc;
	struct vt_section alloc_st;
	struct vt_arena_cap cap;
	struct vt_section environ_st;
	int ncpus;
	uint64_t mmap_threshold;         /* lowest mmap threshold the environment allows (classification) */
	/* free memory that costs RAM (sample/free_walk.h): set by a caller that walked the heap;
	 * free_known false leaves both unknown (a sample never walks by itself) */
	bool free_known;
	double free_resident;            /* bytes of free chunks on resident pages */
	double trimmable;                /* resident whole pages of free chunks malloc_trim(0) could give back */

	/* cgroup */
	struct vt_cgroup_mem cgroup;
	struct vt_section cgroup_st;

	/* listening sockets (only when asked: vt_sample_opts.listeners) */
	struct vt_sample_listen listen;
	struct vt_section listen_st;

	/* when and at what cost */
	double taken_at;                 /* unix time, seconds */
	double read_ms;                  /* wall time vitals spent reading */
};

/*
 * What a light sample got from maps, kept by a caller that samples one
 * process over and over (a soak tick) so that maps are read and classified
 * again only when they can have changed: on a process with thousands of
 * mappings that is most of a tick's cost, and classification may read
 * glibc's heap_info headers from target memory.
 *
 * The key is the process (pid, start) and its VmSize from status, which a
 * sample reads anyway.  A new arena heap is a fresh 64 MiB mmap and a heap
 * deleted is a munmap: both change VmSize.  A heap growing or trimmed is
 * mprotect or MAP_FIXED over its own reservation: VmSize stays, and so do
 * the arena and heap counts.  VmData is not in the key: it moves with every
 * such mprotect and brk, which would make the memo useless on a busy heap;
 * the figures that move with it (arenas.mapped_bytes, main_heap_bytes) are
 * VT_NA in a sample filled from the memo.  An munmap and an mmap of the same
 * size between two samples leave VmSize as it was, hence the caller's
 * maximum age (vt_sample_opts.maps_max_age_s), after which maps are read
 * whatever the key says.
 *
 * Only light samples use it or refresh it (smaps' Rss moves without
 * VmSize), and only those with reused static parts take from it (allocator
 * detection needs the regions).  A memo zeroed is empty; the caller owns
 * it, one per process.
 */
struct vt_maps_memo {
	bool valid;
	double read_at;                  /* CLOCK_MONOTONIC seconds of the maps read */
	pid_t pid;                       /* the key: whose */
	uint64_t start_ticks;
	uint64_t vm_size;                /* ... and its VmSize then */
	enum vt_alloc_kind alloc;        /* the allocator it was classified for */
	struct vt_section regions_st;    /* what the read gave */
	struct vt_arena_summary arenas;
	bool memory_read;
	struct vt_section memory_st;
};

struct vt_sample_opts {
	bool light;                      /* maps + status only, no smaps */
	bool no_memory;                  /* do not read target memory at all */
	bool listeners;                  /* walk the fds for listening sockets (snap) */
	/*
	 * An earlier sample of the same process (a soak tick): its command
	 * line, environment-derived arena cap, CPU count and allocator are
	 * taken from it instead of being read and detected again.
	 */
	const struct vt_sample *reuse;
	/*
	 * In and out, may be NULL: maps and their classification are taken
	 * from it while its key holds and it is younger than maps_max_age_s
	 * seconds (s->regions_reused), and refreshed by every read of maps
	 * (emptied by one that fails).  See struct vt_maps_memo.
	 */
	struct vt_maps_memo *maps_memo;
	double maps_max_age_s;
};

/*
 * Take a sample of pid.  Fatal conditions return an error and leave *out
 * released: VT_E_NOPROC, VT_E_GONE (exited during the read), VT_E_KTHREAD,
 * VT_E_ZOMBIE, VT_E_PERM (status itself unreadable).  Parts that cannot be
 * read (smaps, environ without permission) are marked in their section and
 * the call succeeds.  A thread id that is not its process's id is
 * VT_E_USAGE, with the process id in the hint.  *out is owned by the caller: vt_sample_release().
 */
int vt_sample_take(const struct vt_procfs *pfs, pid_t pid, const struct vt_sample_opts *opts,
		   struct vt_sample *out, struct vt_err *err);

/*
 * The same, through the process's held watch (sample/watch.h), for a
 * reader that samples it again and again: no directory is opened, and
 * which of its fds are sockets is the watch's to know (walked when due).
 * Its exit, whenever the read notices it, is VT_E_GONE.
 */
struct vt_watch;
int vt_sample_take_from(struct vt_watch *w, const struct vt_sample_opts *opts, struct vt_sample *out,
			struct vt_err *err);
void vt_sample_release(struct vt_sample *s);

/* Set its status and what follows from it alone (uid, committed); st may be &s->status. */
void vt_sample_set_status(struct vt_sample *s, const struct vt_proc_status *st);

/* True when some section could not be read (the CLI exits 1: partial). */
bool vt_sample_partial(const struct vt_sample *s);

/*
 * True when glibc's arena figures and arena cap may concern the process: it
 * runs glibc malloc, or its allocator could not be told.  False for a known
 * other allocator (jemalloc, tcmalloc, mimalloc, musl, a sanitizer's, an
 * unknown static one): its views show no glibc arenas, cap or lever.
 */
bool vt_sample_maybe_glibc(const struct vt_sample *s);

#endif

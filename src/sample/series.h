/*
 * series.h — a soak recording read back into memory: what the analysis,
 * the comparison and every view of them (text, JSON, CSV, HTML) read.
 *
 * A recording holds one row per sample (src/soak/store.c).  Read back, the
 * samples become points: a point summarises one or more consecutive samples
 * of the same process incarnation (low, high and mean of each metric), so
 * that a 30-day recording at 1 s cadence (2.6 million samples) analyses in a
 * bounded number of points.  A short recording has one sample per point.
 * Points never straddle a restart or a gap in the recording.
 *
 * Times: t is seconds since the soak began on CLOCK_MONOTONIC (intervals
 * and rates use it; a wall-clock jump cannot bend them); wall is unix time
 * for display only.  Unknown figures are NAN, never 0.
 */
#ifndef VT_SAMPLE_SERIES_H
#define VT_SAMPLE_SERIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sample/metric.h"
#include "sample/thread_metric.h"
#include "sample/threads.h"

/*
 * Samples further apart than this many sampling intervals have a gap
 * between them: a point never spans one, and the analysis counts them.
 */
#define VT_GAP_INTERVALS 3.0

/* The gap of a recording sampled every every_s (0: unknown, taken as 1 s), s. */
static inline double vt_series_gap_s(double every_s)
{
	return VT_GAP_INTERVALS * (every_s > 0 ? every_s : 1);
}

/* Points a recording is read back into at most (vt_store_load). */
#define VT_SERIES_MAX_POINTS 20000

/*
 * One metric over one point.  For a cumulative counter lo is its value at
 * the point's first sample and hi at its last.  All NAN when not measured.
 */
struct vt_stat {
	double lo, hi, mean;
};

enum vt_event_kind {
	VT_EV_START = 1,     /* the soak began sampling a process (detail: pid, how found) */
	VT_EV_RESTART,       /* the followed service came back with a new pid */
	VT_EV_EXIT,          /* the target exited (detail: status when vitals launched it) */
	VT_EV_GAP,           /* no sample for longer than 3 intervals (vitals stopped, machine suspended) */
	VT_EV_CLOCK_JUMP,    /* wall clock moved against the monotonic clock */
	VT_EV_STOP,          /* the soak ended normally (detail: why) */
	VT_EV_ERROR,         /* a sample failed (detail: why); the soak went on */
	VT_EV_NOTE,
	VT_EV_OOM_KILL,      /* after the target exited, its cgroup's oom_kill count had risen (detail: the counts) */
	VT_EV_TRIM,          /* the soak called malloc_trim(0) in it (--trim-every; detail: what it returned,
	                      * committed before and after, how long a thread was stopped) */
};

struct vt_event {
	double t;            /* seconds since the soak began (monotonic) */
	double wall;         /* unix time */
	enum vt_event_kind kind;
	pid_t pid;
	char detail[200];
};

/* One thread over the whole recording (or one incarnation of it). */
struct vt_thread_run {
	pid_t pid, tid;
	char name[64];
	double t_first, t_last;      /* when its counters were first and last recorded */
	uint64_t delta[VT_TC_COUNT]; /* each counter (sample/thread_metric.h) between t_first and
	                              * t_last, VT_NA unknown; [VT_TC_CPU_NS] is 0 when unknown */
	struct vt_thread_doing doing;
	uint64_t cpu_ns_first;       /* its CPU counter at t_first: all it used since it began */
};

/*
 * A process the soak sampled (an incarnation) and when it started, as the
 * soak read it at its first sample: stat (22), and the start in the soak's
 * seconds (uptime_s before that sample; negative when it started before
 * the soak) and in unix time.  Recordings before schema 7 have none.
 */
struct vt_process_start {
	pid_t pid;
	uint64_t start_ticks;        /* stat (22): clock ticks after boot */
	double started_t;            /* seconds since the soak began (monotonic), may be < 0 */
	double started_wall;         /* unix time, NAN unknown */
};

/* What the recording says about itself (the store's meta table). */
struct vt_recording_info {
	int schema;                  /* store schema version it was written with */
	char vitals_version[32];
	char target[512];            /* how the target was named: "pid 123", "--name redis", "-- ./srv -p 1" */
	char arm[64];                /* experiment arm, "" outside an experiment */
	char env[512];               /* arm environment, "MALLOC_ARENA_MAX=2" */
	char host[128];
	int ncpus;
	double every_s;              /* nominal sampling interval */
	double smaps_every_s;        /* full smaps cadence, 0 = never */
	double planned_s;            /* --for, 0 = until stopped */
	double started_wall;         /* unix time of the first sample */
	bool heap;                   /* allocator figures were asked for */
	bool finished;               /* a STOP event is there: the soak ended; else still running or killed */
	bool writing;                /* not finished, and a soak holds the file's lock: still being written
	                              * (not finished and not writing: the soak died, killed or its disk full) */
	int redacted;                /* enum vt_redacted: what of the command line was not recorded */
	bool wal_unread;             /* read without its -wal (no write access for the -shm): the
	                              * samples still in the WAL, if any, are missing */
	uint64_t rollups;            /* per-minute rollups the points were built from (0: from the
	                              * samples alone; store/rollup.h) */
	bool rollups_damaged;        /* its rollups could not be what vitals wrote: read from the samples */
};

/* What a recording left out of the target's command line (meta "redacted"). */
enum vt_redacted {
	VT_REDACTED_NONE = 0,
	VT_REDACTED_SECRETS = 1,     /* the values of arguments that look like secrets */
	VT_REDACTED_ARGS = 2,        /* every argument (soak --redact-args): the command's name only */
};

struct vt_series {
	struct vt_recording_info info;
	size_t n;                    /* points */
	size_t cap;                  /* points allocated (vt_series_reserve) */
	size_t samples;              /* samples the points summarise */
	double *t;                   /* mean sample time of the point */
	double *t0, *t1;             /* first and last sample time in the point */
	double *wall;                /* unix time of the point's first sample */
	uint32_t *count;             /* samples in the point */
	pid_t *pid;
	uint32_t *incarnation;       /* 0 for the first process, +1 at each restart */
	struct vt_stat *m[VT_M_COUNT];   /* n entries each; NULL when never recorded */
	struct vt_event *events;
	size_t nevents;
	struct vt_thread_run *threads;
	size_t nthreads;
	size_t events_cap, threads_cap;
	struct vt_process_start *starts;  /* in the order they started; none in older recordings */
	size_t nstarts, starts_cap;
};

/*
 * Building a series in memory (the store's loader and tests use these).
 * vt_series_init zeroes; vt_series_reserve grows every array to cap points
 * (metrics allocated on first use by vt_series_stat); vt_series_free
 * releases everything.  All return 0 or -1 (out of memory).
 */
void vt_series_init(struct vt_series *s);
int vt_series_reserve(struct vt_series *s, size_t cap);
/* The stat array of metric m, allocated (NAN-filled) on first call. NULL: out of memory. */
struct vt_stat *vt_series_stat(struct vt_series *s, enum vt_metric m);
int vt_series_add_event(struct vt_series *s, const struct vt_event *ev);
int vt_series_add_thread(struct vt_series *s, const struct vt_thread_run *tr);
int vt_series_add_start(struct vt_series *s, const struct vt_process_start *ps);
void vt_series_free(struct vt_series *s);

/* Points [*from, *to) of the last incarnation (the process now running). */
void vt_series_last_incarnation(const struct vt_series *s, size_t *from, size_t *to);

/*
 * The start of the incarnation whose points begin at point from: the
 * recorded start of its pid that is at or before that point's first sample
 * (the latest such, should a pid be reused); NULL when none was recorded.
 */
const struct vt_process_start *vt_series_start_of(const struct vt_series *s, size_t from);

#endif

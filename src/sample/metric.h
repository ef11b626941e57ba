/*
 * metric.h — the one table of what vitals measures over time or side by
 * side: every memory counter, allocator figure and CPU counter, with its
 * key, label, unit and meaning, which views show it, and how it is read
 * from a memory sample.
 *
 * Every view and the store read this table: snap's memory table and its
 * JSON (VT_MF_SNAP), the recording's columns, the series read back, the
 * CSV and `analyze --metric` (VT_MF_RECORDED), and the A/B table of
 * `vitals compare` (VT_MF_COMPARE).  A new memory field is one row here (and
 * its getter, when struct vt_sample holds it): the views, the store and
 * the comparison pick it up; recordings made before it load with the
 * column empty.
 */
#ifndef VT_SAMPLE_METRIC_H
#define VT_SAMPLE_METRIC_H

#include <stdbool.h>

#include "base/units.h"

struct vt_sample;

/* Rows of the table.  Print order is enum order in every view. */
enum vt_metric {
	VT_M_COMMITTED,      /* RssAnon + VmSwap: anonymous memory held */
	VT_M_RSS_ANON,
	VT_M_RSS_FILE,
	VT_M_RSS_SHMEM,
	VT_M_VM_RSS,         /* RssAnon + RssFile + RssShmem */
	VT_M_VM_SWAP,
	VT_M_VM_SIZE,
	VT_M_VM_PEAK,
	VT_M_VM_HWM,
	VT_M_ARENAS,         /* glibc arenas (count), from maps */
	VT_M_REGIONS_64M,    /* 64 MiB heap reservations (count), from maps */
	VT_M_THREADS,        /* count */
	VT_M_CPU_USER_S,     /* process CPU seconds since it started, cumulative */
	VT_M_CPU_SYS_S,
	VT_M_HEAP_LIVE,      /* allocator: bytes in use (mallinfo2 uordblks+hblkhd, jemalloc allocated) */
	VT_M_HEAP_FREE,      /* allocator: free but held (fordblks) */
	VT_M_HEAP_TOTAL,     /* allocator: from the system (arena+hblkhd, jemalloc resident) */
	VT_M_LIVE_FRACTION,  /* heap_live / heap_total (derived, not recorded) */
	VT_M_HEAP_KEEPCOST,  /* glibc keepcost: what a plain trim would return */
	VT_M_FREE_RESIDENT,  /* glibc: bytes of free chunks on resident pages (a heap walk, sample/free_walk.h) */
	VT_M_TRIMMABLE,      /* glibc: resident whole pages of free chunks malloc_trim(0) could give back */
	VT_M_CG_CURRENT,     /* cgroup memory.current (v2) / usage (v1) */
	VT_M_CG_SWAP,        /* cgroup memory.swap.current */
	VT_M_PSS,            /* smaps_rollup Pss, only at the smaps cadence */
	VT_M_CPU_CORES,      /* process CPU over a window (derived from cpu_*_s, not recorded) */
	VT_M_ACCEPT_QUEUE,   /* connections waiting for accept() on its fullest listener (count) */
	VT_M_CG_LIMIT,       /* cgroup memory.max (v2) / limit_in_bytes (v1); unknown when none is set */
	VT_M_CG_HIGH_EVENTS, /* cgroup memory.events high: times memory.high throttled it (cumulative) */
	VT_M_CG_MAX_EVENTS,  /* cgroup memory.events max (v1 failcnt): times usage hit the limit (cumulative) */
	VT_M_CG_OOM_KILLS,   /* cgroup memory.events oom_kill (v1 oom_control): processes killed (cumulative) */
	VT_M_CG_PSI_SOME_S,  /* cgroup memory.pressure some total: s a task stalled on memory (cumulative) */
	VT_M_CG_PSI_FULL_S,  /* cgroup memory.pressure full total: s all tasks stalled at once (cumulative) */
	VT_M_IO_SYSCR,       /* /proc/PID/io syscr: read-family calls since it started (cumulative) */
	VT_M_IO_SYSCW,       /* /proc/PID/io syscw: write-family calls since it started (cumulative) */
	VT_M_COUNT
};

enum vt_metric_flags {
	VT_MF_RECORDED = 1 << 0,     /* a column of a recording: store, series, CSV, --metric */
	VT_MF_CUMULATIVE = 1 << 1,   /* a counter that only grows within one incarnation */
	VT_MF_SNAP = 1 << 2,         /* a row of snap's memory table */
	VT_MF_COMPARE = 1 << 3,      /* a row of the A/B table */
};

struct vt_metric_info {
	const char *key;             /* "rss_anon": store column, JSON and CSV key, --metric */
	const char *label;           /* "RssAnon": tables and charts (the kernel's name if it has one) */
	enum vt_unit unit;
	unsigned flags;              /* enum vt_metric_flags */
	const char *meaning;         /* for people */
	/* Its value in a memory sample (NAN unknown); NULL when another probe fills it. */
	double (*of_sample)(const struct vt_sample *s);
	/*
	 * Where vitals serve exports it, summed over a target's processes:
	 * the family (declared in serve/exporter.c's family table, which
	 * test_exporter checks) and the value of its one label prom_label,
	 * both NULL when it has none.  The exporter reads each process's
	 * status at every scrape and hands of_sample a sample holding it:
	 * a figure from another source needs its read in serve/exp_proc.c.
	 */
	const char *prom;
	const char *prom_label;         /* "memtype" */
	const char *prom_label_value;   /* "rss_anon" */
};

extern const struct vt_metric_info vt_metrics[VT_M_COUNT];

/* Metric index by key ("rss_anon"); -1 if unknown. */
int vt_metric_find(const char *key);

/* m is a level that a soak can judge (recorded, not a counter). */
bool vt_metric_judgeable(int m);

#endif

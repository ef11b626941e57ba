/*
 * thread_metric.h — the one table of what vitals counts per thread: each
 * cumulative counter a thread watch reads (proc/thread_watch.h), with its
 * store column, the rate every view shows from it and the Prometheus
 * family it adds to.
 *
 * The per-thread twin of sample/metric.h.  A thread row carries its
 * counters as one array indexed by this enum (struct vt_thread_snap, a
 * recording's thread row, the exporter's threads), and every consumer
 * loops over the table: the recording's thread_samples columns and the
 * spans read back from them, the rates of `vitals threads` and of a
 * soak's analysis with their JSON keys and table columns, and the
 * exporter's process-wide sums.  A new per-thread counter is one row here
 * (its getter reads the watch's field) and its read in proc/thread_watch:
 * recordings made before it load with the column empty.
 */
#ifndef VT_SAMPLE_THREAD_METRIC_H
#define VT_SAMPLE_THREAD_METRIC_H

#include <stdbool.h>
#include <stdint.h>

#include "proc/thread_watch.h"

/* Rows of the table.  Columns and keys come in enum order in every view. */
enum vt_thread_counter {
	VT_TC_CPU_NS,   /* time on a CPU: schedstat run_ns, else (utime + stime) ticks */
	VT_TC_WAIT_NS,  /* time runnable, waiting for a CPU: schedstat wait_ns */
	VT_TC_VCSW,     /* voluntary context switches: gave the CPU up (slept, waited) */
	VT_TC_NVCSW,    /* nonvoluntary: preempted while it wanted to run */
	VT_TC_COUNT
};

enum vt_thread_counter_flags {
	/* Shown as a share of the interval (a rate of ns/s over 1e9) with a
	 * percent sign in tables; otherwise a rate per second. */
	VT_TCF_SHARE = 1 << 0,
	/* Not a column of the views' rate lists: the CPU rate, which every view
	 * shows first, in cores, with its own arithmetic (analyze/rates.h). */
	VT_TCF_OWN_COLUMN = 1 << 1,
};

struct vt_thread_counter_info {
	const char *column;          /* "vcsw": the recording's thread_samples column */
	const char *rate_key;        /* "voluntary_per_s": the rate's JSON key in every view */
	const char *head;            /* "VOL/s": its text table column */
	const char *label;           /* "voluntary/s": its column in HTML, for people */
	double rate_scale;           /* rate = delta * rate_scale / seconds */
	/* The most a thread can do: more is a corrupt or reset counter, taken as
	 * 0 and flagged (one core; switches as often as a scheduler could). */
	double rate_max;
	unsigned flags;              /* enum vt_thread_counter_flags */
	const char *meaning;         /* for people (docs, --help) */
	/* Its value in a thread watch's row, VT_NA when it was not read. */
	uint64_t (*of_counts)(const struct vt_thread_counts *c, long clk_tck);
	/*
	 * Where vitals serve exports it, summed over a target's threads and
	 * the threads that have exited (a counter of the process): the family
	 * (declared in serve/exporter.c's family table) and its one label and
	 * value; prom NULL when it is not exported so.  The value is the sum
	 * times rate_scale: ns become seconds, Prometheus's base unit.
	 */
	const char *prom, *prom_label, *prom_label_value;
};

extern const struct vt_thread_counter_info vt_thread_counters[VT_TC_COUNT];

/* Every counter of one thread watch row into out[VT_TC_COUNT] (VT_NA unknown). */
void vt_thread_counters_of(const struct vt_thread_counts *c, long clk_tck, uint64_t *out);

/*
 * The rate of counter k from a delta over seconds: what the views show
 * (per second, or a share of the interval); NAN when the delta is
 * unknown (VT_NA) or seconds is not positive.
 */
double vt_thread_counter_rate(enum vt_thread_counter k, uint64_t delta, double seconds);

/*
 * A rate of counter k as its table cell into buf[cap]: "12.5%" for a
 * share, cores to three places, switches to one place under 100 and whole
 * above; "n/a" when unknown (NAN or < 0).  Returns buf.
 */
const char *vt_thread_counter_cell(enum vt_thread_counter k, double rate, char *buf, size_t cap);

#endif

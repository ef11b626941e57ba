/*
 * exporter.h — what `vitals serve` measures at each scrape: for every
 * target the user named, the kernel's figures of its processes, what no
 * exporter gives for an unmodified binary (glibc arenas and 64 MiB heap
 * regions from maps, the allocator's own figures, listen-socket queue
 * depth, CPU per thread pool), its cgroup's memory events and pressure,
 * and the exporter's own cost.
 *
 * Targets are named once and resolved again whenever their process is gone:
 * a restarted service is found by name, pidfile, command line or cgroup.
 * Files are held open between scrapes where the kernel allows it (the same
 * per-thread readers as soak: proc/thread_watch.h).  It reads only; the
 * allocator probe by ptrace runs only when asked for, at a bounded rate.
 *
 * The figures go into a struct vt_prom (render/prom.h) under names that
 * follow node_exporter and process-exporter: *_bytes, *_seconds_total with
 * a mode label, context switches with ctxswitchtype, threads by state.
 * Every sample of a target carries target="<its label>"; no label is ever
 * a pid or a thread id (their churn would grow the server's series).
 */
#ifndef VT_SERVE_EXPORTER_H
#define VT_SERVE_EXPORTER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/error.h"
#include "proc/procfs.h"
#include "render/prom.h"

enum vt_exp_kind {
	VT_EXP_PID = 1,       /* that process; after it exits, one with the same command line */
	VT_EXP_NAME,          /* every process of that name (comm or argv[0] basename) */
	VT_EXP_PIDFILE,       /* the pid written in that file, read again when it is gone */
	VT_EXP_CGROUP,        /* every process in that cgroup (v2 path under the cgroup mount) */
};

struct vt_exp_target {
	enum vt_exp_kind kind;
	pid_t pid;            /* VT_EXP_PID */
	const char *arg;      /* the name, pidfile or cgroup path */
	const char *label;    /* the target label; NULL: the name, the pidfile's base name, the
	                       * cgroup path, or the process's comm for a pid */
};

struct vt_exporter_config {
	const struct vt_exp_target *targets;
	size_t ntargets;
	/*
	 * Allocator figures: from the in-process agent when it answers; with
	 * heap_ptrace also by a ptrace probe of glibc (it stops the process a
	 * few ms), at most once per heap_every_s per process, the figures
	 * between probes being the last ones read.
	 */
	bool heap_ptrace;
	double heap_every_s;
	/*
	 * Free memory on resident pages (glibc): a walk of the heap that does
	 * not stop the process (sample/free_walk.h), at most once per
	 * free_every_s per process (0: 60 s, < 0: never) and spaced further so that
	 * the walks' CPU stays within free_budget of a core (<= 0: 1%); a
	 * scrape between walks exports the last figures, with their age.
	 */
	double free_every_s;
	double free_budget;
};

struct vt_exporter;

/*
 * Check the targets (a pid that does not exist now is an error here, a name
 * that matches nothing yet is not: it is up 0 until it appears).  Errors:
 * VT_E_NOPROC, VT_E_KTHREAD, VT_E_USAGE (a cgroup that does not exist, two targets with one label),
 * VT_E_NOMEM.
 */
int vt_exporter_open(const struct vt_procfs *pfs, const struct vt_exporter_config *cfg,
		     struct vt_exporter **out, struct vt_err *err);

/*
 * Collect one scrape into p.  A target whose process is gone or unreadable
 * is reported as vitals_target_up 0 (with the reason in
 * vitals_target_error_info), never as an error of the scrape.  VT_OK, or
 * VT_E_NOMEM.  Not thread-safe: one scrape at a time.
 */
int vt_exporter_scrape(struct vt_exporter *x, struct vt_prom *p, struct vt_err *err);

void vt_exporter_close(struct vt_exporter *x);

/* The targets, by their label (as in target="LABEL"). */
size_t vt_exporter_target_count(const struct vt_exporter *x);
const char *vt_exporter_target_label(const struct vt_exporter *x, size_t i);
/*
 * The processes target i is now (found again when due, as a scrape does):
 * up to cap pids into pids, *n how many.  Same thread rules as a scrape.
 * VT_OK or VT_E_NOMEM.
 */
int vt_exporter_target_pids(struct vt_exporter *x, size_t i, pid_t *pids, size_t cap, size_t *n,
			    struct vt_err *err);

/*
 * The families a scrape declares, in order, for the documentation's check
 * (tools/vitals_doc.c: docs/metrics.md lists each once, with its type):
 * family i < vt_exporter_family_count() is *name (as declared: a counter's
 * samples add "_total") of *type.
 */
size_t vt_exporter_family_count(void);
void vt_exporter_family(size_t i, const char **name, enum vt_prom_type *type);

#endif

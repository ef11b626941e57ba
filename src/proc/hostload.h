/*
 * hostload.h — how busy the whole host's CPUs are, from files every
 * process may read:
 *
 *   /proc/loadavg         "0.52 0.58 0.59 3/412 12345": the 1, 5 and 15
 *                         minute load averages, then the tasks runnable
 *                         right now (running or queued) over all tasks,
 *                         then the last pid (proc(5))
 *   /proc/pressure/cpu    PSI: the wall time in which at least one task
 *                         waited for a CPU ("some", cumulative µs)
 *
 * A process's threads wait on a run queue for its own other threads or
 * for other processes' tasks; the runnable count tells the two apart
 * (analyze/diagnose.h).  The parser is pure; the readers read pfs.
 */
#ifndef VT_PROC_HOSTLOAD_H
#define VT_PROC_HOSTLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/error.h"
#include "proc/procfs.h"

struct vt_loadavg {
	double load1, load5, load15;
	uint64_t runnable;      /* tasks running or queued for a CPU now, host-wide */
	uint64_t tasks;         /* all tasks (threads) */
};

/* Parse /proc/loadavg text (need not be NUL-terminated).  VT_E_PARSE when malformed. */
int vt_loadavg_parse(const char *buf, size_t len, struct vt_loadavg *out, struct vt_err *err);

/* pfs's /proc/loadavg into *out; buf is scratch.  Errors: the read's, VT_E_PARSE. */
int vt_loadavg_read(const struct vt_procfs *pfs, struct vt_buf *buf, struct vt_loadavg *out,
		    struct vt_err *err);

/*
 * Cumulative µs in which some task waited for a CPU, host-wide (PSI
 * "some" of /proc/pressure/cpu).  Errors: VT_E_NOTFOUND without PSI
 * (kernel option off, or psi=0), the read's, VT_E_PARSE.
 */
int vt_host_cpu_pressure_read(const struct vt_procfs *pfs, struct vt_buf *buf, uint64_t *some_us,
			      struct vt_err *err);

#endif

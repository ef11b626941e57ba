/*
 * psi.h — pressure stall information (PSI): how much of the wall time tasks
 * were stalled waiting for a resource.
 *
 * "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull ..." is the format
 * of /proc/pressure/{cpu,io,memory} and of a v2 cgroup's memory.pressure,
 * cpu.pressure and io.pressure (Documentation/accounting/psi.rst).  Pure
 * parser; it never reads a file.  cgroup v1 has no PSI.
 */
#ifndef VT_PROC_PSI_H
#define VT_PROC_PSI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

struct vt_psi_line {
	bool present;
	double avg10, avg60, avg300;   /* percent of wall time stalled */
	uint64_t total_us;             /* cumulative stall time */
};

/*
 * "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull ..." (PSI).  A line
 * needs all four keys; "some" is required, "full" optional (present false).
 */
int vt_psi_parse(const char *buf, size_t len, struct vt_psi_line *some, struct vt_psi_line *full,
		 struct vt_err *err);

#endif

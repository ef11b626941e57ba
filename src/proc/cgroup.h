/*
 * cgroup.h — the memory and cpu cgroups a process is in, v1 or v2.
 *
 * Finds the process's cgroup of a controller from /proc/PID/cgroup and the
 * mounts in <proc root>/self/mountinfo, then reads the controller files under
 * the sys root:
 *   v2: memory.current memory.max memory.peak memory.swap.current
 *       memory.swap.max memory.events memory.pressure
 *       cpu.max (every level up to the mount) cpu.stat
 *   v1: memory.usage_in_bytes memory.limit_in_bytes memory.max_usage_in_bytes
 *       memory.memsw.usage_in_bytes memory.memsw.limit_in_bytes memory.failcnt
 *       memory.oom_control
 *       cpu.cfs_quota_us cpu.cfs_period_us (every level up to the mount) cpu.stat
 * A file that is absent or unreadable leaves its figure VT_NA; nothing is
 * guessed.  v1 has no PSI: psi_some/psi_full stay not present.  The
 * parsers of the files' text are in cgroup_parse.h (included here), of
 * mountinfo in mountinfo.h and of memory.pressure in psi.h.
 */
#ifndef VT_PROC_CGROUP_H
#define VT_PROC_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "proc/cgroup_parse.h"
#include "proc/procfs.h"
#include "proc/psi.h"

struct vt_cgroup_mem {
	int version;                /* 1 or 2; 0 when no memory cgroup was found */
	char path[512];             /* as listed in /proc/PID/cgroup ("/system.slice/x") */
	char dir[512];              /* directory read, relative to the sys root */
	uint64_t usage;             /* v2 memory.current, v1 memory.usage_in_bytes */
	uint64_t limit;             /* v2 memory.max, v1 memory.limit_in_bytes; VT_NA if max */
	bool limit_is_max;          /* no limit ("max", or v1 at or above VT_CGROUP_V1_UNLIMITED) */
	uint64_t peak;              /* v2 memory.peak, v1 memory.max_usage_in_bytes */
	uint64_t swap_usage;        /* v2 memory.swap.current; v1 memsw.usage - usage */
	uint64_t swap_limit;        /* v2 memory.swap.max; v1 memsw.limit - limit; VT_NA if max */
	bool swap_limit_is_max;
	/* v2 memory.events; v1: max = memory.failcnt, oom_kill from memory.oom_control */
	uint64_t events_low, events_high, events_max, events_oom, events_oom_kill;
	struct vt_psi_line psi_some, psi_full;  /* v2 memory.pressure */
};

/*
 * The CPU bandwidth limit (CFS quota) a process runs under.  A cgroup's quota
 * caps its whole subtree, so the limit in force is the tightest quota/period
 * on the path from the process's cgroup up to the top of the mounted
 * hierarchy (limits set above a namespace's mount are not visible).
 */
struct vt_cgroup_cpu {
	int version;                /* 1 or 2; 0 when no cpu controller files were found */
	double quota_cores;         /* tightest quota/period on the path; < 0 no limit ("max", v1 -1) */
	char limit_dir[512];        /* directory setting it, relative to the sys root; "" none */
	uint64_t quota_us, period_us;   /* of that limit; VT_NA when none */
	/* cpu.stat of the process's own cgroup; v1 throttled_time (ns) is converted to us */
	uint64_t nr_periods, nr_throttled, throttled_usec;
};

/*
 * v1 reports "no limit" as the page counter's maximum (PAGE_COUNTER_MAX *
 * PAGE_SIZE, 9223372036854771712 with 4 KiB pages); anything at or above
 * 2^62 is treated as that.
 */
#define VT_CGROUP_V1_UNLIMITED (UINT64_C(1) << 62)

/*
 * Fill *out for the process whose directory is pid_fd.  VT_OK with
 * version 0 (and empty path/dir) when the process has no memory cgroup: no
 * /proc/PID/cgroup, no mounted memory hierarchy, or a v2 cgroup without
 * memory.current (the root, or memory not enabled).  Errors: VT_E_GONE (the
 * process exited), VT_E_NOTFOUND (its cgroup is not reachable under the sys
 * root: mounted outside /sys, or outside the mounted part of the hierarchy;
 * or no <proc root>/self/mountinfo), VT_E_PARSE (a malformed file, named in
 * err).  Missing or unreadable controller files are not errors.  On error
 * *out is left as for version 0.
 */
int vt_cgroup_read(const struct vt_procfs *pfs, int pid_fd, struct vt_cgroup_mem *out,
		   struct vt_err *err);

/*
 * Read the cgroup `was` describes (an earlier vt_cgroup_read's result,
 * version 1 or 2) again by its directory: after its process exited, when
 * its /proc/PID/cgroup is gone but the cgroup is not (what the OOM killer
 * did to it shows in memory.events).  VT_E_NOTFOUND when the directory is
 * gone (the cgroup was removed with its last process); errors otherwise
 * as vt_cgroup_read.
 */
int vt_cgroup_reread(const struct vt_procfs *pfs, const struct vt_cgroup_mem *was, struct vt_cgroup_mem *out,
		     struct vt_err *err);

/*
 * Fill *out for the process whose directory is pid_fd: the v1 hierarchy
 * carrying the cpu controller if it is mounted, else cgroup2.  Walks from the
 * process's cgroup up to the mount point reading cpu.max (v2) or
 * cpu.cfs_quota_us + cpu.cfs_period_us (v1) at each level; a level without
 * them is skipped, and on a tie the level nearest the process is named.
 * cpu.stat is read from the process's own cgroup.  VT_OK with version 0 and
 * no limit when there is no cpu controller on the path (no /proc/PID/cgroup,
 * no mounted hierarchy, the v2 root cgroup, cpu not enabled).  Errors and
 * *out on error as vt_cgroup_read.
 */
int vt_cgroup_cpu_read(const struct vt_procfs *pfs, int pid_fd, struct vt_cgroup_cpu *out,
		       struct vt_err *err);

#endif

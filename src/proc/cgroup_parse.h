/*
 * cgroup_parse.h — the pure parsers of cgroup files, on text already read.
 *
 * cgroup.c reads the files and calls these; tests and fuzzers call them on
 * strings.  None reads a file.  The structs they fill are in cgroup.h, which
 * includes this header.
 */
#ifndef VT_PROC_CGROUP_PARSE_H
#define VT_PROC_CGROUP_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

struct vt_cgroup_mem;
struct vt_cgroup_cpu;

/*
 * From /proc/PID/cgroup text, the v2 path ("0::/path") and the path of the
 * v1 hierarchy whose controller list has controller ("N:...memory...:/path"
 * for "memory").  Either may be absent (empty); of two lines that qualify the
 * first wins.  VT_E_PARSE on a malformed line or a path that does not fit
 * its cap.
 */
int vt_cgroup_parse_membership_of(const char *buf, size_t len, const char *controller,
				  char *v2_path, size_t v2_cap, char *v1_path, size_t v1_cap,
				  struct vt_err *err);

/* vt_cgroup_parse_membership_of for the memory controller. */
int vt_cgroup_parse_membership(const char *buf, size_t len, char *v2_path, size_t v2_cap,
			       char *v1_mem_path, size_t v1_cap, struct vt_err *err);

/*
 * "low 0\nhigh 3\nmax 7\noom 1\noom_kill 1\n" (v2 memory.events).  Sets the
 * five events_* fields (VT_NA for a key the file lacks); unknown keys such as
 * oom_group_kill are ignored.  VT_E_PARSE on a malformed line or no known key.
 */
int vt_cgroup_parse_events(const char *buf, size_t len, struct vt_cgroup_mem *out,
			   struct vt_err *err);
/*
 * v1 memory.oom_control: "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n".
 * Sets only events_oom_kill (VT_NA before Linux 4.13, which lacks the line).
 */
int vt_cgroup_parse_oom_control(const char *buf, size_t len, struct vt_cgroup_mem *out,
				struct vt_err *err);
/*
 * A single number or "max", with an optional trailing newline; for "max"
 * *is_max is set and *value is VT_NA.
 */
int vt_cgroup_parse_limit(const char *buf, size_t len, uint64_t *value, bool *is_max,
			  struct vt_err *err);
/*
 * A single number (memory.current, memory.usage_in_bytes...): as
 * vt_cgroup_parse_limit, but "max" is VT_E_PARSE.
 */
int vt_cgroup_parse_counter(const char *buf, size_t len, uint64_t *value, struct vt_err *err);

/*
 * v2 cpu.max: "max 100000\n" or "150000 100000\n" (quota, period, in us);
 * the newline is optional.  *quota_us is VT_NA for "max"; *period_us is never
 * 0.  VT_E_PARSE otherwise, with both left VT_NA.
 */
int vt_cgroup_parse_cpu_max(const char *buf, size_t len, uint64_t *quota_us, uint64_t *period_us,
			    struct vt_err *err);
/*
 * v1 cpu.cfs_quota_us: a number, or -1 for no limit (*quota_us VT_NA).
 * VT_E_PARSE otherwise, with *quota_us VT_NA.
 */
int vt_cgroup_parse_cfs_quota(const char *buf, size_t len, uint64_t *quota_us,
			      struct vt_err *err);
/*
 * cpu.stat: sets nr_periods, nr_throttled and throttled_usec (VT_NA for a key
 * the file lacks, as in a v2 cgroup without the cpu controller, whose cpu.stat
 * has only usage_usec and friends).  v1 has throttled_time in ns instead of
 * throttled_usec.  Other keys are ignored.  VT_E_PARSE on a malformed line,
 * with all three left VT_NA.
 */
int vt_cgroup_parse_cpu_stat(const char *buf, size_t len, bool v1, struct vt_cgroup_cpu *out,
			     struct vt_err *err);

#endif

/*
 * mountinfo.h — where a cgroup hierarchy is mounted, from mountinfo text.
 *
 * "36 35 98:0 /root /mnt opts [optional...] - fstype source super-opts"
 * (proc(5) /proc/PID/mountinfo): the mount point and the mount's root (the
 * part of the hierarchy it shows, relative to the reader's cgroup namespace)
 * of the cgroup2 filesystem or of the v1 hierarchy carrying a controller.
 * Pure parser; it never reads a file.
 */
#ifndef VT_PROC_MOUNTINFO_H
#define VT_PROC_MOUNTINFO_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The mount point and the mount's root of the cgroup2 filesystem
 * (v1_controller NULL) or of the v1 hierarchy whose super options list
 * v1_controller ("memory", "cpu").  The first such mount under /sys/ wins,
 * else the first one.  Octal escapes (\040) are decoded.  false when there is
 * none, or it does not fit the caps.  Malformed lines are skipped.
 */
bool vt_mountinfo_find_cgroup_of(const char *buf, size_t len, const char *v1_controller,
				 char *mount_point, size_t mp_cap, char *mount_root, size_t root_cap);

/* vt_mountinfo_find_cgroup_of for the memory controller (want_v1_memory) or cgroup2. */
bool vt_mountinfo_find_cgroup(const char *buf, size_t len, bool want_v1_memory, char *mount_point,
			      size_t mp_cap, char *mount_root, size_t root_cap);

#endif

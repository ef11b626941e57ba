/*
 * mapped_file.h — opening a file that a process maps, as the process sees it.
 *
 * A process in a container maps its own copies of its libraries, which the
 * host may not have at the same path, or may have in another version.  So a
 * mapped file is opened through the process's directory:
 * <proc root>/PID/root/<path> (its mount namespace), PID/map_files/START-END
 * for a file deleted since it was mapped (an upgrade: the only way left to
 * reach it), and PID/exe for the executable.  Only after EACCES is the
 * host's path tried, and only when its device and inode are those of the
 * mapping.  Nothing here parses the file: elf/ does (symbols), alloc/
 * decides what it means.
 */
#ifndef VT_PROC_MAPPED_FILE_H
#define VT_PROC_MAPPED_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/error.h"
#include "proc/maps.h"
#include "proc/procfs.h"

/* What maps appends to the path of a file deleted since it was mapped. */
#define VT_MAPS_DELETED_SUFFIX " (deleted)"

/* path ends in VT_MAPS_DELETED_SUFFIX. */
bool vt_maps_path_deleted(const char *path);

/* maps_path names the first len bytes of path, also after the file was deleted. */
bool vt_maps_path_is(const char *maps_path, const char *path, size_t len);

/* The first region of l whose path is path (deleted or not), NULL when none. */
const struct vt_region *vt_maps_find_path(const struct vt_region_list *l, const char *path);

/*
 * Open the file behind mapping r of process pid (directory pid_fd).  *fd is
 * O_RDONLY|O_CLOEXEC|O_NONBLOCK, owned by the caller; or -1 with why (why_cap
 * bytes) saying why when the file cannot be read, which is not an error.
 * Errors: VT_E_GONE (the process exited), VT_E_NOFILE / VT_E_NOMEM (vitals
 * ran out of descriptors or memory opening it).
 */
int vt_mapped_file_open(const struct vt_procfs *pfs, int pid_fd, pid_t pid, const struct vt_region *r,
			int *fd, char *why, size_t why_cap, struct vt_err *err);

/*
 * Open the executable of process pid: PID/exe (a deleted one too); in a
 * recorded tree, where exe is a symlink, root/<its target>.  exe_path gets
 * its path (readlink of exe, "" unknown); regions (may be NULL) give the
 * mapping the host fallback is checked against.  *fd and errors as
 * vt_mapped_file_open.
 */
/*
 * A path to the file behind mapping r that the kernel can open on vitals'
 * behalf (a uprobe's file: uprobe_events, the uprobe PMU): the target's own
 * view, /proc/PID/root/<path>, when that is the inode it maps, else
 * /proc/PID/map_files/<range> (a deleted or replaced file).  Live only (the
 * kernel opens it).  Into out (cap bytes).
 */
void vt_mapped_file_kernel_path(pid_t pid, const struct vt_region *r, char *out, size_t cap);

int vt_mapped_exe_open(const struct vt_procfs *pfs, int pid_fd, pid_t pid,
		       const struct vt_region_list *regions, char *exe_path, size_t exe_cap, int *fd,
		       char *why, size_t why_cap, struct vt_err *err);

#endif

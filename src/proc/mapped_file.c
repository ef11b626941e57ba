/*
 * mapped_file.c — a mapped file opened as its process sees it (see
 * mapped_file.h).
 */
#include "proc/mapped_file.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define OPEN_FLAGS (O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)

bool vt_maps_path_deleted(const char *path)
{
	size_t n = strlen(path), s = sizeof(VT_MAPS_DELETED_SUFFIX) - 1;

	return n > s && strcmp(path + n - s, VT_MAPS_DELETED_SUFFIX) == 0;
}

bool vt_maps_path_is(const char *maps_path, const char *path, size_t len)
{
	return strncmp(maps_path, path, len) == 0 &&
	       (maps_path[len] == '\0' || strcmp(maps_path + len, VT_MAPS_DELETED_SUFFIX) == 0);
}

const struct vt_region *vt_maps_find_path(const struct vt_region_list *l, const char *path)
{
	size_t i, len = strlen(path);

	for (i = 0; l && len && i < l->n; i++)
		if (vt_maps_path_is(l->v[i].path, path, len))
			return &l->v[i];
	return NULL;
}

/* ENOENT under PID/ means the file is missing, unless PID itself is gone. */
static bool pid_gone(int pid_fd)
{
	struct stat st;

	return fstatat(pid_fd, "stat", &st, 0) < 0 && (errno == ENOENT || errno == ESRCH);
}

static int open_failed(int pid_fd, pid_t pid, int e, char *why, size_t why_cap, struct vt_err *err)
{
	if ((e == ENOENT || e == ESRCH) && pid_gone(pid_fd))
		return vt_err_set(err, VT_E_GONE, e, "process %d exited while its files were read",
				  (int)pid);
	if (vt_code_resource(e))   /* vitals's own shortage, not the file's */
		return vt_err_set(err, VT_E_FAIL, e, "cannot open a file of process %d: %s", (int)pid,
				  strerror(e));
	snprintf(why, why_cap, "%s", strerror(e));
	return VT_OK;
}

/*
 * The host's path to r's file, when we may not look through PID/root: used
 * only if it is the very file mapped (device and inode as in maps).
 */
static int open_host_copy(const struct vt_procfs *pfs, const struct vt_region *r, bool *other)
{
	struct stat st;
	int fd;

	*other = false;
	if (!pfs->live || r->path[0] != '/' || vt_maps_path_deleted(r->path))
		return -1;
	fd = open(r->path, OPEN_FLAGS);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) == 0 && st.st_ino == r->inode && major(st.st_dev) == r->dev_major &&
	    minor(st.st_dev) == r->dev_minor)
		return fd;
	close(fd);
	*other = true;
	return -1;
}

/* *fd: rel under PID/, or the host's copy of r's file (r may be NULL); -1 with why when unreadable. */
static int open_or_fallback(const struct vt_procfs *pfs, int pid_fd, pid_t pid, const struct vt_region *r,
			    const char *rel, int *fd, char *why, size_t why_cap, struct vt_err *err)
{
	bool other = false;
	int e;

	*fd = openat(pid_fd, rel, OPEN_FLAGS);
	if (*fd >= 0)
		return VT_OK;
	e = errno;
	if ((e == EACCES || e == EPERM) && r) {
		*fd = open_host_copy(pfs, r, &other);
		if (*fd >= 0)
			return VT_OK;
		if (other) {
			snprintf(why, why_cap, "%s, and the host's %s is another file", strerror(e), r->path);
			return VT_OK;
		}
	}
	return open_failed(pid_fd, pid, e, why, why_cap, err);
}

int vt_mapped_file_open(const struct vt_procfs *pfs, int pid_fd, pid_t pid, const struct vt_region *r,
			int *fd, char *why, size_t why_cap, struct vt_err *err)
{
	char rel[PATH_MAX + 8];

	*fd = -1;
	if (why_cap)
		why[0] = '\0';
	if (vt_maps_path_deleted(r->path)) {
		snprintf(rel, sizeof(rel), "map_files/%" PRIx64 "-%" PRIx64, r->start, r->end);
		*fd = openat(pid_fd, rel, OPEN_FLAGS);
		if (*fd < 0)
			snprintf(why, why_cap, "deleted since it was mapped");
		return VT_OK;
	}
	if (r->path[0] != '/') {
		snprintf(why, why_cap, "not an absolute path");
		return VT_OK;
	}
	if (strlen(r->path) + sizeof("root") > sizeof(rel)) {
		snprintf(why, why_cap, "path too long");
		return VT_OK;
	}
	snprintf(rel, sizeof(rel), "root%s", r->path);
	return open_or_fallback(pfs, pid_fd, pid, r, rel, fd, why, why_cap, err);
}

int vt_mapped_exe_open(const struct vt_procfs *pfs, int pid_fd, pid_t pid,
		       const struct vt_region_list *regions, char *exe_path, size_t exe_cap, int *fd,
		       char *why, size_t why_cap, struct vt_err *err)
{
	char rel[PATH_MAX + 8] = "exe";
	ssize_t n;

	*fd = -1;
	if (why_cap)
		why[0] = '\0';
	n = exe_cap > 1 ? readlinkat(pid_fd, "exe", exe_path, exe_cap - 1) : -1;
	if (exe_cap)
		exe_path[n > 0 ? n : 0] = '\0';
	if (!pfs->live && exe_path[0] == '/')
		snprintf(rel, sizeof(rel), "root%s", exe_path);
	return open_or_fallback(pfs, pid_fd, pid, vt_maps_find_path(regions, exe_path), rel, fd, why,
				why_cap, err);
}

void vt_mapped_file_kernel_path(pid_t pid, const struct vt_region *r, char *out, size_t cap)
{
	char root[4200];
	struct stat st;

	snprintf(root, sizeof(root), "/proc/%d/root%s", (int)pid, r->path);
	size_t len = strlen(root);

	if (len < cap && stat(root, &st) == 0 && (uint64_t)st.st_ino == r->inode &&
	    major(st.st_dev) == r->dev_major && minor(st.st_dev) == r->dev_minor) {
		memcpy(out, root, len + 1);
		return;
	}
	snprintf(out, cap, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, r->start, r->end);
}


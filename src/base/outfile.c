/*
 * outfile.c — creating output files without following links (see outfile.h).
 */
#include "base/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool vt_out_dir(const char *path, char *dir, size_t cap)
{
	const char *slash = strrchr(path, '/');
	int n;

	if (!slash)
		n = snprintf(dir, cap, ".");
	else if (slash == path)
		n = snprintf(dir, cap, "/");
	else
		n = snprintf(dir, cap, "%.*s", (int)(slash - path), path);
	return n >= 0 && (size_t)n < cap;
}

/* Whether the directory path would be made in exists. */
static bool parent_is_dir(const char *path)
{
	char dir[4096];
	struct stat sb;

	return vt_out_dir(path, dir, sizeof(dir)) && stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static int create_failed(const char *path, int e, struct vt_err *err)
{
	if (e == EEXIST || e == ELOOP) {
		/* made (or linked) there between our look and our open */
		vt_err_set(err, VT_E_USAGE, EEXIST, "'%s' already exists", path);
		vt_err_hint(err, "give another name, or --force to replace it");
		return VT_E_USAGE;
	}
	if (e == ENOENT || e == ENOTDIR) {
		if (parent_is_dir(path)) {   /* /proc, /sys: a directory that makes no new files */
			vt_err_set(err, VT_E_IO, e, "cannot create '%s': its directory takes no new files "
				   "(a virtual file system such as /proc or /sys)", path);
			vt_err_hint(err, "choose a path on a writable file system");
		} else {
			vt_err_set(err, VT_E_IO, e, "cannot create '%s': no such directory", path);
		}
		return VT_E_IO;
	}
	vt_err_set(err, e == EACCES || e == EPERM || e == EROFS ? VT_E_PERM : VT_E_IO, e, "cannot create '%s': %s",
		   path, strerror(e));
	if (e == EACCES || e == EPERM || e == EROFS)
		vt_err_hint(err, "choose a path on a writable file system");
	return err ? err->code : VT_E_IO;
}

int vt_out_create(const char *path, mode_t mode, unsigned flags, int *fd, struct vt_err *err)
{
	struct stat sb;
	int e;

	*fd = -1;
	if (!path[0])
		return vt_err_set(err, VT_E_USAGE, 0, "an empty file name: give the file to write");
	if (lstat(path, &sb) == 0) {
		if (S_ISCHR(sb.st_mode) && (flags & VT_OUT_DEVICE)) {
			*fd = open(path, O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
			if (*fd >= 0)
				return VT_OK;
			e = errno;
			return vt_err_set(err, vt_code_from_errno(e) == VT_E_PERM ? VT_E_PERM : VT_E_IO, e,
					  "cannot open '%s': %s", path, strerror(e));
		}
		if (!S_ISREG(sb.st_mode) && !S_ISLNK(sb.st_mode))
			return vt_err_set(err, VT_E_USAGE, 0, "'%s' is not a regular file", path);
		if (!(flags & VT_OUT_REPLACE)) {
			vt_err_set(err, VT_E_USAGE, EEXIST, "'%s' already exists", path);
			vt_err_hint(err, "give another name, or --force to replace it");
			return VT_E_USAGE;
		}
		/* the name, never what a link there points to */
		if (unlink(path) != 0 && errno != ENOENT)
			return create_failed(path, errno, err);
	}
	*fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, mode);
	if (*fd < 0)
		return create_failed(path, errno, err);
	return VT_OK;
}

int vt_out_fopen(const char *path, mode_t mode, unsigned flags, FILE **out, struct vt_err *err)
{
	int fd, rc;

	*out = NULL;
	if ((rc = vt_out_create(path, mode, flags, &fd, err)))
		return rc;
	*out = fdopen(fd, "w");
	if (!*out) {
		int e = errno;

		close(fd);
		return vt_err_set(err, VT_E_NOMEM, e, "cannot write '%s': %s", path, strerror(e));
	}
	return VT_OK;
}

/*
 * procfs.c — roots, pid directories and whole-file reads.
 */
#include "proc/procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int vt_procfs_open(struct vt_procfs *pfs, const char *proc_root, const char *sys_root,
		   struct vt_err *err)
{
	memset(pfs, 0, sizeof(*pfs));
	pfs->live = !proc_root && !sys_root;
	snprintf(pfs->proc_root, sizeof(pfs->proc_root), "%s", proc_root ? proc_root : "/proc");
	snprintf(pfs->sys_root, sizeof(pfs->sys_root), "%s", sys_root ? sys_root : "/sys");
	pfs->page_size = sysconf(_SC_PAGESIZE);
	pfs->clk_tck = sysconf(_SC_CLK_TCK);
	pfs->proc_fd = open(pfs->proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfs->proc_fd < 0)
		return vt_err_set(err, VT_E_IO, errno, "cannot open proc root '%s': %s",
				  pfs->proc_root, strerror(errno));
	pfs->sys_fd = open(pfs->sys_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return VT_OK;
}

void vt_procfs_close(struct vt_procfs *pfs)
{
	if (pfs->proc_fd >= 0)
		close(pfs->proc_fd);
	if (pfs->sys_fd >= 0)
		close(pfs->sys_fd);
	pfs->proc_fd = pfs->sys_fd = -1;
}

int vt_pid_open(const struct vt_procfs *pfs, pid_t pid, int *dirfd, struct vt_err *err)
{
	char name[32];
	int fd, e;

	*dirfd = -1;
	if (pid <= 0)
		return vt_err_set(err, VT_E_NOPROC, 0, "'%d' is not a process id", (int)pid);
	snprintf(name, sizeof(name), "%d", (int)pid);
	fd = openat(pfs->proc_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		if (e == ENOENT || e == ESRCH)   /* ESRCH: exiting as we open it */
			return vt_err_set(err, VT_E_NOPROC, e, "no process %d", (int)pid);
		if (e == EACCES || e == EPERM) {
			vt_err_set(err, VT_E_PERM, e, "cannot open %s/%d: %s", pfs->proc_root,
				   (int)pid, strerror(e));
			vt_err_hint(err, "%s is mounted with hidepid; run as the process's user or root",
				    pfs->proc_root);
			return VT_E_PERM;
		}
		return vt_err_set(err, VT_E_IO, e, "cannot open %s/%d: %s", pfs->proc_root,
				  (int)pid, strerror(e));
	}
	*dirfd = fd;
	return VT_OK;
}

/* What read_fd asks room for before each read: 64 KiB less the NUL vt_buf keeps. */
#define READ_STEP (64u * 1024 - 1)

/* read() until EOF; /proc files must be read in one pass, not stat'ed for size. */
static int read_fd(int fd, struct vt_buf *buf, int *sys_errno)
{
	ssize_t n;
	int rc;

	for (;;) {
		/*
		 * 64 KiB with its NUL at first, under malloc's mmap threshold so
		 * that it needs no mmap of its own; twice as much each time it fills.
		 */
		size_t want = buf->cap <= READ_STEP ? READ_STEP - buf->len : buf->cap - 1 == buf->len ? buf->len : 0;

		rc = vt_buf_reserve(buf, want < buf->max - buf->len ? want : buf->max - buf->len);
		if (rc)
			return rc;
		if (buf->cap - 1 - buf->len == 0)
			return VT_E_NOMEM;
		n = read(fd, buf->data + buf->len, buf->cap - 1 - buf->len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			*sys_errno = errno;
			return vt_code_from_errno(errno);
		}
		if (n == 0)
			break;
		buf->len += (size_t)n;
		buf->data[buf->len] = '\0';
	}
	return VT_OK;
}

/* Open dirfd/name for reading: the fd, or -1 with err set (vt_read_at's errors) and *rc. */
static int open_at(int dirfd, const char *name, int *rc, struct vt_err *err)
{
	struct stat st;
	int fd, e;

	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	e = errno;
	if (e == ENOENT) {
		/* A missing file under a vanished process reads as ENOENT too. */
		if (fstatat(dirfd, "stat", &st, 0) < 0 && (errno == ENOENT || errno == ESRCH))
			*rc = vt_err_set(err, VT_E_GONE, e, "process exited while reading '%s'", name);
		else
			*rc = vt_err_set(err, VT_E_NOTFOUND, e, "'%s' does not exist", name);
		return -1;
	}
	*rc = vt_code_from_errno(e);
	if (*rc == VT_E_GONE)
		vt_err_set(err, *rc, e, "process exited while reading '%s'", name);
	else
		vt_err_set(err, *rc, e, "cannot open '%s': %s", name, strerror(e));
	return -1;
}

/* A read that failed (rc from read_fd, e its errno), worded as vt_read_at words it. */
static int read_failed(const char *name, const struct vt_buf *buf, int rc, int e, struct vt_err *err)
{
	if (rc == VT_E_NOMEM && !e)
		return vt_err_set(err, rc, 0, "'%s' is larger than %zu bytes", name, buf->max);
	return vt_err_set(err, rc, e, rc == VT_E_GONE ? "process exited while reading '%s'" : "cannot read '%s'",
			  name);
}

int vt_read_at(int dirfd, const char *name, struct vt_buf *buf, struct vt_err *err)
{
	int fd, rc, e = 0;

	vt_buf_reset(buf);
	if (vt_buf_reserve(buf, 0))
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory reading '%s'", name);
	fd = open_at(dirfd, name, &rc, err);
	if (fd < 0)
		return rc;
	rc = read_fd(fd, buf, &e);
	close(fd);
	return rc ? read_failed(name, buf, rc, e, err) : VT_OK;
}

/*
 * The piece read: whole lines at [0, used) go to take, the rest (a line cut
 * by the end of the buffer) moves to the front for the next read.
 */
static int take_lines(struct vt_buf *buf, bool last, vt_lines_fn take, void *ctx, struct vt_err *err)
{
	const char *nl;
	size_t used;
	int rc;

	if (last) {
		used = buf->len;
	} else {
		nl = memrchr(buf->data, '\n', buf->len);
		used = nl ? (size_t)(nl - buf->data) + 1 : 0;
	}
	if (used && (rc = take(ctx, buf->data, used, err)))
		return rc;
	memmove(buf->data, buf->data + used, buf->len - used);
	buf->len -= used;
	buf->data[buf->len] = '\0';
	return VT_OK;
}

int vt_read_lines_at(int dirfd, const char *name, struct vt_buf *buf, vt_lines_fn take, void *ctx,
		     struct vt_err *err)
{
	size_t total = 0, grow;
	ssize_t n;
	int fd, rc = VT_OK, e = 0;

	vt_buf_reset(buf);
	if (vt_buf_reserve(buf, VT_READ_LINES_PIECE - 1 < buf->max ? VT_READ_LINES_PIECE - 1 : buf->max))
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory reading '%s'", name);
	fd = open_at(dirfd, name, &rc, err);
	if (fd < 0)
		return rc;
	for (;;) {
		if (buf->cap - 1 == buf->len) {
			/* a line longer than the buffer: let it grow, within max */
			grow = buf->len < buf->max - buf->len ? buf->len : buf->max - buf->len;
			if (!grow || vt_buf_reserve(buf, grow)) {
				rc = read_failed(name, buf, VT_E_NOMEM, grow ? ENOMEM : 0, err);
				break;
			}
		}
		n = read(fd, buf->data + buf->len, buf->cap - 1 - buf->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			e = errno;
			rc = read_failed(name, buf, vt_code_from_errno(e), e, err);
			break;
		}
		total += (size_t)n;
		if (total > buf->max) {
			rc = read_failed(name, buf, VT_E_NOMEM, 0, err);
			break;
		}
		buf->len += (size_t)n;
		buf->data[buf->len] = '\0';
		if ((rc = take_lines(buf, n == 0, take, ctx, err)) || n == 0)
			break;
	}
	close(fd);
	return rc;
}

int vt_pread_fd(int fd, const char *what, struct vt_buf *buf, struct vt_err *err)
{
	size_t space;
	ssize_t n;
	int e;

	vt_buf_reset(buf);
	for (;;) {
		space = buf->max - buf->len < 4096 ? buf->max - buf->len : 4096;
		if (space == 0)
			return vt_err_set(err, VT_E_NOMEM, 0, "'%s' is larger than %zu bytes", what,
					  buf->max);
		if (vt_buf_reserve(buf, space))
			return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory reading '%s'", what);
		space = buf->cap - 1 - buf->len;
		n = pread(fd, buf->data + buf->len, space, (off_t)buf->len);
		if (n < 0) {
			e = errno;
			if (e == EINTR)
				continue;
			return vt_err_set(err, vt_code_from_errno(e), e,
					  e == ESRCH || e == ENOENT ? "exited while reading '%s'"
								    : "cannot read '%s'", what);
		}
		buf->len += (size_t)n;
		buf->data[buf->len] = '\0';
		if ((size_t)n < space)
			return VT_OK;
	}
}

int vt_procfs_read(const struct vt_procfs *pfs, const char *name, struct vt_buf *buf,
		   struct vt_err *err)
{
	int rc = vt_read_at(pfs->proc_fd, name, buf, err);

	/* Not a process file: a missing one is just missing. */
	if (rc == VT_E_GONE)
		rc = vt_err_set(err, VT_E_NOTFOUND, err ? err->sys_errno : 0,
				"'%s/%s' does not exist", pfs->proc_root, name);
	return rc;
}

int vt_sysfs_read(const struct vt_procfs *pfs, const char *name, struct vt_buf *buf,
		  struct vt_err *err)
{
	int rc;

	if (pfs->sys_fd < 0)
		return vt_err_set(err, VT_E_NOTFOUND, ENOENT, "'%s' is not available", pfs->sys_root);
	rc = vt_read_at(pfs->sys_fd, name, buf, err);
	if (rc == VT_E_GONE)
		rc = vt_err_set(err, VT_E_NOTFOUND, err ? err->sys_errno : 0,
				"'%s/%s' does not exist", pfs->sys_root, name);
	return rc;
}

bool vt_procfs_read_small(const struct vt_procfs *pfs, pid_t pid, const char *file, char *out, size_t cap,
			  size_t *len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%d/%s", (int)pid, file);
	fd = openat(pfs->proc_fd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, out, cap - 1);
	close(fd);
	if (n < 0)
		return false;
	out[n] = '\0';
	*len = (size_t)n;
	return true;
}

bool vt_procfs_name_matches(const struct vt_procfs *pfs, pid_t pid, const char *comm, const char *name)
{
	char argv0[512];
	const char *base;
	size_t len;

	if (strncmp(comm, name, 15) == 0 && (strlen(name) <= 15 || strlen(comm) == 15))
		return true;
	if (!vt_procfs_read_small(pfs, pid, "cmdline", argv0, sizeof(argv0), &len) || len == 0)
		return false;
	base = strrchr(argv0, '/');
	base = base ? base + 1 : argv0;
	return strcmp(base, name) == 0;
}

/*
 * outfile.h — creating a file vitals writes (a recording, the output of the
 * command a soak runs, a report), safely even in a directory other users
 * may write to (/tmp), and even as root.
 *
 * The file is made with O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC: never through
 * a symbolic link, never into a file that was there.  A name that exists is
 * refused (VT_E_USAGE, EEXIST, "already exists") unless VT_OUT_REPLACE:
 * then a regular file or a symbolic link there is unlinked (the link, never
 * what it points to) and a new file made, so a link planted in its place is
 * never written through.  A directory, fifo or socket is always refused.
 */
#ifndef VT_BASE_OUTFILE_H
#define VT_BASE_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "base/error.h"

enum vt_out_flags {
	VT_OUT_REPLACE = 1 << 0,     /* --force: an existing file (or link) is replaced */
	VT_OUT_DEVICE = 1 << 1,      /* an existing character device (/dev/null) is written as it is */
};

/*
 * Create path (mode before the umask) and return its descriptor in *fd.
 * VT_E_USAGE: it exists (and may not be replaced), or is not a regular
 * file; VT_E_PERM: the directory may not be written (EACCES, EROFS);
 * VT_E_IO: no such directory, or another failure, with errno.  The hint
 * says what to do; callers may replace it with their own option names.
 */
int vt_out_create(const char *path, mode_t mode, unsigned flags, int *fd, struct vt_err *err);

/*
 * The directory path names its file in, into dir[cap]: "." for a bare name,
 * "/" for one at the root.  False when it did not fit (dir holds what did).
 */
bool vt_out_dir(const char *path, char *dir, size_t cap);

/* The same as a stdio stream for writing; *out is NULL on failure. */
int vt_out_fopen(const char *path, mode_t mode, unsigned flags, FILE **out, struct vt_err *err);

#endif

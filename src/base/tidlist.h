/*
 * tidlist.h — the numeric entries of a directory held open (/proc/PID/task,
 * /proc), listed again and again through the same fd: no new descriptor is
 * needed, so a listing works at the fd limit.  The thread watch and the perf
 * sampler both keep their process's task/ this way.
 */
#ifndef VT_BASE_TIDLIST_H
#define VT_BASE_TIDLIST_H

#include <stddef.h>
#include <sys/types.h>

#include "base/error.h"

struct vt_tid_list {
	pid_t *tids;              /* sorted ascending; owned */
	size_t n, cap;
};

/*
 * Rewind dir_fd and list its entries that are positive decimal numbers below
 * 2^31 into l (emptied first), sorted.  dents (dents_len bytes, at least
 * 4 KiB) is the caller's scratch for getdents64.  pid names the process in
 * messages.  VT_E_NOMEM (l keeps what it had listed), or the error of lseek
 * or getdents64 (ESRCH/ENOENT: the process is gone).
 */
int vt_tid_list_read(int dir_fd, char *dents, size_t dents_len, pid_t pid, struct vt_tid_list *l,
		     struct vt_err *err);

/* Free the array; l can be read into again. */
void vt_tid_list_release(struct vt_tid_list *l);

#endif

/*
 * target.h — may vitals inspect this pid?  The checks every command makes
 * before it reads a process: it exists, it is not a kernel thread, not a
 * zombie, and it is a process rather than one of its threads.
 */
#ifndef VT_SAMPLE_TARGET_H
#define VT_SAMPLE_TARGET_H

#include <stdbool.h>
#include <sys/types.h>

#include "base/buf.h"
#include "base/error.h"
#include "alloc/detect.h"
#include "proc/maps.h"
#include "proc/procfs.h"
#include "proc/stat.h"
#include "proc/status.h"

/*
 * Read and check stat and status through the process directory dirfd.
 * Errors: VT_E_NOPROC (gone before we looked), VT_E_KTHREAD, VT_E_ZOMBIE,
 * VT_E_USAGE (a thread id: the hint names its process), VT_E_PARSE.
 * buf is scratch space for the reads.
 */
int vt_target_check(int dirfd, pid_t pid, struct vt_buf *buf, struct vt_proc_stat *st,
		    struct vt_proc_status *status, struct vt_err *err);

/*
 * Has the process behind dirfd exited since it was checked?  Its stat can
 * no longer be read through dirfd (ESRCH: reaped; dirfd keeps naming that
 * process even if the pid is reused), or it is a zombie, dead, or exiting
 * (its memory already released).  Any other failure to read or parse stat
 * (EIO, EMFILE, a torn read) says nothing about it: false.  A read that failed with ENOENT, ESRCH or
 * EACCES against such a process is VT_E_GONE, not what errno suggests.
 */
bool vt_target_exited(int dirfd, struct vt_buf *buf);

/*
 * Read the process's mappings into *maps (a refusal says which setting or
 * capability is missing, in the hint) and decide its allocator into
 * *alloc, with its environ for LD_PRELOAD when readable.  uid is the
 * target's real uid (for the explanation).  maps is the caller's to release.
 */
int vt_target_allocator(const struct vt_procfs *pfs, int dirfd, pid_t pid, long uid, struct vt_buf *buf,
			struct vt_region_list *maps, struct vt_alloc_info *alloc, struct vt_err *err);

#endif

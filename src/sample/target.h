/*
 * target.h — may vitals inspect this pid?  The checks every command makes
 * before it reads a process: it exists, it is not a kernel thread, not a
 * zombie, and it is a process rather than one of its threads.  And which
 * processes a name is: the one resolver behind --name in soak, serve, snap
 * and threads, so that a name gets the same answer from each.
 */
#ifndef VT_SAMPLE_TARGET_H
#define VT_SAMPLE_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
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
 * Has the process behind dirfd (opened as pid) exited since it was checked?
 * Its stat can no longer be read through dirfd (ESRCH: reaped; dirfd keeps
 * naming that process even if the pid is reused), or it is a zombie, dead,
 * or exiting (its memory already released).  Any other failure to read or
 * parse stat (EIO, EMFILE, a torn read) says nothing about it: false.  A
 * read that failed with ENOENT, ESRCH or EACCES against such a process is
 * VT_E_GONE, not what errno suggests.  The state and flags are the main
 * thread's, which task/PID/stat gives without adding up every thread's
 * times as stat does (16 us on 1,000 threads, and cache misses on each).
 */
bool vt_target_exited(int dirfd, pid_t pid, struct vt_buf *buf);

/*
 * Read the process's mappings into *maps (a refusal says which setting or
 * capability is missing, in the hint) and decide its allocator into
 * *alloc, with its environ for LD_PRELOAD when readable.  uid is the
 * target's real uid (for the explanation).  maps is the caller's to release.
 */
int vt_target_allocator(const struct vt_procfs *pfs, int dirfd, pid_t pid, long uid, struct vt_buf *buf,
			struct vt_region_list *maps, struct vt_alloc_info *alloc, struct vt_err *err);

/* A process a name matched, and where it stands among the others that did. */
struct vt_name_proc {
	pid_t pid;
	pid_t ppid;                  /* stat (4) */
	pid_t root;                  /* the match at the top of its same-named ancestry: itself
	                              * when its parent is no match */
	size_t children;             /* matches whose parent it is */
	uint64_t start_ticks;        /* stat (22) */
	uint64_t root_start_ticks;   /* its root's: the trees are listed oldest first */
	uint64_t rss_bytes;          /* stat (24) rss × page size */
	char cmdline[80];            /* argv joined with spaces, cut; "" when unreadable */
};

/*
 * Every process a name matches.  A service that forks workers under its own
 * name (nginx, php-fpm, postgres) is one tree: the parent and its same-named
 * descendants.  Processes whose parent is no match start a tree each.
 */
struct vt_name_set {
	struct vt_name_proc *procs;  /* owned, n; tree by tree (the oldest root first), each
	                              * root first, then the rest of its tree by pid */
	size_t n;
	size_t trees;                /* roots among them */
	const char *skipped;         /* why a process of that name was left out: "kernel_thread"
	                              * or "zombie"; NULL when none was */
};

/*
 * Fill *set with the live, non-kernel processes called name (its comm, at
 * most 15 bytes, or the base name of its argv[0]: vt_procfs_name_matches),
 * never exclude (vitals itself), only those started at or after
 * min_start_ticks (0: any), at most max of them (0: no limit).  The caller
 * releases *set, also after an error (VT_E_IO: /proc cannot be listed;
 * VT_E_NOMEM).
 */
int vt_target_name_find(const struct vt_procfs *pfs, const char *name, pid_t exclude, uint64_t min_start_ticks,
			size_t max, struct vt_name_set *set, struct vt_err *err);
void vt_name_set_release(struct vt_name_set *set);

/*
 * The one process name stands for in a command that reads one process
 * (soak, snap, threads): *pid the only match, 0 when there is none.  Several
 * matches are VT_E_USAGE whether they are one tree (a parent and its
 * same-named workers: which of them the user means cannot be guessed, and
 * the parent alone is seldom it, the workers doing the work) or unrelated
 * processes;
 * the message lists them (cut when long), the hint says to give a pid.
 */
int vt_target_name_one(const struct vt_name_set *set, const char *name, pid_t *pid, struct vt_err *err);

/* "parent", "child of 123", or "" for a process alone: its place in the set. */
const char *vt_name_proc_role(const struct vt_name_proc *p, char *buf, size_t cap);

#endif

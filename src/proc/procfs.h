/*
 * procfs.h — where /proc and /sys are, and reading files from them.
 *
 * Every reader takes a struct vt_procfs, so tests point vitals at a recorded
 * tree (tests/fixtures/...) by opening it with other roots; nothing else in
 * the code names "/proc".  A process is read through a directory fd opened
 * once (vt_pid_open): if the process exits and its pid is reused, reads
 * through the old fd fail instead of silently describing the new process.
 */
#ifndef VT_PROC_PROCFS_H
#define VT_PROC_PROCFS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/buf.h"
#include "base/error.h"

/* Largest /proc file we accept (smaps of a 100k-mapping process is ~30 MB). */
#define VT_PROC_FILE_MAX (256u << 20)

struct vt_procfs {
	int proc_fd;          /* directory fd of the proc root */
	int sys_fd;           /* directory fd of the sys root, -1 if absent */
	bool live;            /* roots are the real /proc and /sys of this machine */
	long page_size;
	long clk_tck;
	char proc_root[256];
	char sys_root[256];
};

/*
 * Open the roots.  NULL means the real /proc or /sys.  On a recorded tree
 * (live == false) nothing reads target memory or calls ptrace.
 */
int vt_procfs_open(struct vt_procfs *pfs, const char *proc_root, const char *sys_root,
		   struct vt_err *err);
void vt_procfs_close(struct vt_procfs *pfs);

/*
 * Open the directory of one process.  VT_E_NOPROC when it does not exist (or
 * is hidden by hidepid=2/invisible), VT_E_PERM when hidden by hidepid=1.
 * The caller closes *dirfd.
 */
int vt_pid_open(const struct vt_procfs *pfs, pid_t pid, int *dirfd, struct vt_err *err);

/*
 * Read the whole file dirfd/name into buf (reset first).  Errors:
 *   VT_E_GONE      the process exited (ESRCH, or ENOENT while its stat is gone)
 *   VT_E_NOTFOUND  the file does not exist although the process does (old kernel)
 *   VT_E_PERM      EACCES/EPERM
 *   VT_E_NOMEM     file larger than buf->max
 */
int vt_read_at(int dirfd, const char *name, struct vt_buf *buf, struct vt_err *err);

/*
 * Read dirfd/name a piece at a time (VT_READ_LINES_PIECE bytes, more for a
 * longer line), handing each run of whole lines to take, the last line
 * without its newline too: a large file (maps, smaps) parsed as it comes
 * costs one small buffer, not a copy of the whole file.  take returns VT_OK
 * or an error that ends the read, returned as is.  Errors as vt_read_at,
 * VT_E_NOMEM when the file is larger than buf->max.
 */
#define VT_READ_LINES_PIECE (64u << 10)
typedef int (*vt_lines_fn)(void *ctx, const char *text, size_t len, struct vt_err *err);
int vt_read_lines_at(int dirfd, const char *name, struct vt_buf *buf, vt_lines_fn take, void *ctx,
		     struct vt_err *err);

/*
 * Read again, from offset 0, a file held open as fd (pread: the fd's offset
 * does not matter) into buf (reset first).  For files kept open across
 * samples: a /proc seq_file (stat, status, schedstat) regenerates its text on
 * a read at offset 0.  A read shorter than the space offered is taken as the
 * end, true of seq_file and of regular files, so a small file costs one
 * syscall.  what names the file in messages.  Errors as vt_read_at; a thread
 * or process that exited shows as VT_E_GONE (ESRCH).
 */
int vt_pread_fd(int fd, const char *what, struct vt_buf *buf, struct vt_err *err);

/* Read a small file under the proc root ("uptime", "self/mountinfo"). */
int vt_procfs_read(const struct vt_procfs *pfs, const char *name, struct vt_buf *buf,
		   struct vt_err *err);
/*
 * Read a small file of process pid ("cmdline", "stat") into out, NUL-terminated,
 * in one read of at most cap - 1 bytes (a longer file is cut); *len its length.
 * false when it cannot be opened or read: the process is gone or hidden.  For
 * the scans over every process, where an error per pid would be noise.
 */
bool vt_procfs_read_small(const struct vt_procfs *pfs, pid_t pid, const char *file, char *out, size_t cap,
			  size_t *len);
/*
 * Whether process pid, whose comm is comm, is called name: its comm (at most 15
 * bytes, so compared that far) or the base name of its argv[0].
 */
bool vt_procfs_name_matches(const struct vt_procfs *pfs, pid_t pid, const char *comm, const char *name);
/* Read a small file under the sys root ("fs/cgroup/memory.max"). */
int vt_sysfs_read(const struct vt_procfs *pfs, const char *name, struct vt_buf *buf,
		  struct vt_err *err);

#endif

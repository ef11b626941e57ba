/*
 * io.h — /proc/PID/io and /proc/PID/task/TID/io: the bytes a process (or a
 * thread) passed through read and write system calls, and how many such
 * calls it made (proc(5)):
 *
 *   rchar: 323934931        bytes read(2)-family calls returned (sockets and
 *   wchar: 323929600        pipes included; recv/send/recvmsg are not counted)
 *   syscr: 632687           read(2)-family calls
 *   syscw: 632675           write(2)-family calls
 *   read_bytes: 0           bytes fetched from storage
 *   write_bytes: 0          bytes sent towards storage
 *   cancelled_write_bytes: 0
 *
 * Reading it needs ptrace read access (PTRACE_MODE_READ_FSCREDS).  A
 * thread that sleeps thousands of times a second and moves no byte does
 * no work per wakeup; one that reads what woke it does (analyze/diagnose.h).
 */
#ifndef VT_PROC_IO_H
#define VT_PROC_IO_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/error.h"

struct vt_proc_io {
	uint64_t rchar, wchar;          /* bytes */
	uint64_t syscr, syscw;          /* calls */
	uint64_t read_bytes, write_bytes;
};

/*
 * Parse the text (need not be NUL-terminated).  rchar, wchar, syscr and
 * syscw are required; unknown keys are skipped, a missing storage figure is
 * 0.  VT_E_PARSE when malformed.
 */
int vt_proc_io_parse(const char *buf, size_t len, struct vt_proc_io *out, struct vt_err *err);

/* dirfd's "io" (a /proc/PID directory) into *out.  Errors: vt_read_at's (VT_E_PERM), VT_E_PARSE. */
int vt_proc_io_read(int dirfd, struct vt_buf *buf, struct vt_proc_io *out, struct vt_err *err);

#endif

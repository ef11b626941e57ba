/*
 * error.h — the one table of vitals error codes.
 *
 * Every library function that can fail returns an int: VT_OK (0) or one of the
 * VT_E_* codes below, and fills a caller-owned struct vt_err with the details
 * (errno, what was being read, a hint on what to do).  Libraries never print;
 * only src/cli turns an error into a message and an exit status.
 *
 * The X-macro keeps the code, its process exit status and its one-line meaning
 * together, so docs/exit-codes and the man page cannot drift from the code.
 */
#ifndef VT_BASE_ERROR_H
#define VT_BASE_ERROR_H

#include <stdarg.h>
#include <stddef.h>

/*        name         exit  meaning */
#define VT_ERRORS(X)                                                        \
	X(OK,          0,  "success")                                       \
	X(FAIL,        2,  "failed")                                        \
	X(IO,          2,  "read error")                                    \
	X(PARSE,       2,  "unexpected format")                             \
	X(NOTFOUND,    2,  "not available")                                 \
	X(NOPROC,      3,  "no such process")                               \
	X(GONE,        4,  "process exited while being read")               \
	X(PERM,        5,  "permission denied")                             \
	X(KTHREAD,     6,  "kernel thread")                                 \
	X(ZOMBIE,      7,  "zombie process")                                \
	X(UNSUPPORTED, 8,  "not supported")                                 \
	X(RECORDING,   9,  "not a valid vitals recording")                  \
	X(TIMEOUT,     10, "timed out")                                     \
	X(FAULT,       11, "injected call faulted")                         \
	X(UNREACHABLE, 12, "server unreachable")                            \
	X(NOMEM,       13, "out of memory")                                 \
	X(NOFILE,      13, "too many open files")                           \
	X(BUSY,        14, "not possible right now")                        \
	X(NOCOMPARE,   15, "nothing to compare")                            \
	X(USAGE,       64, "usage error")

enum vt_code {
#define VT_ERR_ENUM(name, exitc, msg) VT_E_##name,
	VT_ERRORS(VT_ERR_ENUM)
#undef VT_ERR_ENUM
	VT_E__COUNT
};
#define VT_OK VT_E_OK

/* Exit status used by the CLI when it stops on this code. */
int vt_code_exit(int code);
/* Short meaning of the code ("no such process"). Never NULL. */
const char *vt_code_str(int code);
/* Stable identifier for scripts ("NOPROC"). Never NULL. */
const char *vt_code_name(int code);

#define VT_ERR_MSG_MAX 384

/* Details of the last failure.  Owned by the caller, no heap memory inside. */
struct vt_err {
	int code;                   /* VT_E_* */
	int sys_errno;              /* errno of the failed call, 0 if none */
	char msg[VT_ERR_MSG_MAX];   /* what failed, lowercase, no full stop */
	char hint[VT_ERR_MSG_MAX];  /* what to do about it, may be empty */
};

void vt_err_clear(struct vt_err *err);

/*
 * Record a failure and return its code, so a failure path is one statement:
 *     return vt_err_set(err, VT_E_PERM, errno, "cannot read '%s'", path);
 * err may be NULL (the caller does not want details).
 *
 * A failure whose errno says vitals ran out of a resource of its own
 * (EMFILE, ENFILE: VT_E_NOFILE; ENOMEM: VT_E_NOMEM) is that, whatever code
 * the caller meant: a process that cannot be opened for want of a file
 * descriptor did not exit and did not refuse.  The returned code and
 * err->code say so, and a hint names the limit (ulimit -n, ulimit -v)
 * unless the caller gives its own.
 */
int vt_err_set(struct vt_err *err, int code, int sys_errno, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Attach or replace the hint of an already-set error. */
void vt_err_hint(struct vt_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Map an errno from a /proc read to a code: ENOENT/ESRCH gone, EACCES/EPERM
 * perm, EMFILE/ENFILE nofile, ENOMEM nomem, else io.
 */
int vt_code_from_errno(int e);
/* The resource code errno e means (VT_E_NOFILE, VT_E_NOMEM), or VT_OK when it means none. */
int vt_code_resource(int e);

#endif

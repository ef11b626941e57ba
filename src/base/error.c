/*
 * error.c — code table lookups and the vt_err setters.
 */
#include "base/error.h"

#include <errno.h>
#include <sys/resource.h>
#include <stdio.h>
#include <string.h>

static const struct {
	const char *name;
	int exit_status;
	const char *meaning;
} code_table[] = {
#define VT_ERR_ROW(name, exitc, msg) { #name, exitc, msg },
	VT_ERRORS(VT_ERR_ROW)
#undef VT_ERR_ROW
};

static int code_valid(int code)
{
	return code >= 0 && code < VT_E__COUNT;
}

int vt_code_exit(int code)
{
	return code_valid(code) ? code_table[code].exit_status : 2;
}

const char *vt_code_str(int code)
{
	return code_valid(code) ? code_table[code].meaning : "unknown error";
}

const char *vt_code_name(int code)
{
	return code_valid(code) ? code_table[code].name : "UNKNOWN";
}

void vt_err_clear(struct vt_err *err)
{
	if (!err)
		return;
	err->code = VT_OK;
	err->sys_errno = 0;
	err->msg[0] = '\0';
	err->hint[0] = '\0';
}

int vt_code_resource(int e)
{
	return e == EMFILE || e == ENFILE ? VT_E_NOFILE : e == ENOMEM ? VT_E_NOMEM : VT_OK;
}

/* What to do when vitals itself ran out: the limit that bit, with its value. */
static void resource_hint(struct vt_err *err)
{
	struct rlimit rl;
	int e = err->sys_errno;

	if (err->code == VT_E_NOMEM && !vt_code_resource(e))
		e = ENOMEM;
	if (e == EMFILE && getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		vt_err_hint(err, "vitals ran out of file descriptors (ulimit -n is %llu): raise it; "
			    "vitals needs about 20, and one per thread to profile",
			    (unsigned long long)rl.rlim_cur);
	else if (e == ENFILE)
		vt_err_hint(err, "the system ran out of file descriptors (fs.file-max): close some, or raise it");
	else if (e == ENOMEM && getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		vt_err_hint(err, "vitals ran out of memory under an address-space limit (ulimit -v is %llu KiB): "
			    "raise it", (unsigned long long)rl.rlim_cur / 1024);
	else if (e == ENOMEM)
		vt_err_hint(err, "vitals ran out of memory: free some, or raise the limit it runs under");
}

int vt_err_set(struct vt_err *err, int code, int sys_errno, const char *fmt, ...)
{
	va_list ap;

	if (vt_code_resource(sys_errno) && code != VT_E_USAGE)
		code = vt_code_resource(sys_errno);
	if (!err)
		return code;
	err->code = code;
	err->sys_errno = sys_errno;
	err->hint[0] = '\0';
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	resource_hint(err);
	return code;
}

void vt_err_hint(struct vt_err *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(err->hint, sizeof(err->hint), fmt, ap);
	va_end(ap);
}

int vt_code_from_errno(int e)
{
	switch (e) {
	case ENOENT:
	case ESRCH:
		return VT_E_GONE;
	case EACCES:
	case EPERM:
		return VT_E_PERM;
	case ENOMEM:
		return VT_E_NOMEM;
	case EMFILE:
	case ENFILE:
		return VT_E_NOFILE;
	default:
		return VT_E_IO;
	}
}

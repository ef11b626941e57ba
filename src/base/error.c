/*
 * error.c — code table lookups and the vt_err setters.
 */
#include "base/error.h"

#include <errno.h>
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

int vt_err_set(struct vt_err *err, int code, int sys_errno, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	err->code = code;
	err->sys_errno = sys_errno;
	err->hint[0] = '\0';
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
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
	default:
		return VT_E_IO;
	}
}

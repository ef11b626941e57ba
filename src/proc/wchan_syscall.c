/*
 * wchan_syscall.c — see wchan_syscall.h.  Text is untrusted and not
 * NUL-terminated.
 */
#include "proc/wchan_syscall.h"

#include "base/scan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void vt_wchan_parse(const char *buf, size_t len, char *out, size_t cap)
{
	struct vt_scan sc = vt_scan_init(buf, len);
	const char *word;
	size_t wlen;

	if (!vt_scan_word(&sc, &word, &wlen) || (wlen == 1 && word[0] == '0'))
		wlen = 0;
	vt_copy_str(out, cap, wlen ? word : "", wlen);
}

/* " 0x1f" into *out. */
static bool scan_arg(struct vt_scan *sc, uint64_t *out)
{
	struct vt_scan at = *sc;

	vt_scan_blanks(&at);
	if (!vt_scan_char(&at, '0') || !vt_scan_char(&at, 'x') || !vt_scan_hex(&at, out))
		return false;
	*sc = at;
	return true;
}

int vt_syscall_parse(const char *buf, size_t len, long *nr, uint64_t args[VT_SYSCALL_ARGS],
		     struct vt_err *err)
{
	struct vt_scan sc = vt_scan_init(buf, len);
	const char *word;
	size_t wlen;
	char num[24];
	char *end;

	if (args)
		memset(args, 0, VT_SYSCALL_ARGS * sizeof(args[0]));
	if (!vt_scan_word(&sc, &word, &wlen))
		return vt_err_set(err, VT_E_PARSE, 0, "empty syscall file");
	if (wlen == 7 && !memcmp(word, "running", 7)) {
		*nr = VT_SYSCALL_RUNNING;
		return VT_OK;
	}
	if (wlen >= sizeof(num))
		return vt_err_set(err, VT_E_PARSE, 0, "syscall file: number too long");
	memcpy(num, word, wlen);
	num[wlen] = '\0';
	errno = 0;
	*nr = strtol(num, &end, 10);
	if (errno || *end || end == num || *nr < VT_SYSCALL_NONE)
		return vt_err_set(err, VT_E_PARSE, 0, "syscall file: '%s' is not a system call number",
				  num);
	if (args && *nr >= 0) {
		size_t i;

		for (i = 0; i < VT_SYSCALL_ARGS; i++)
			if (!scan_arg(&sc, &args[i])) {
				memset(args, 0, VT_SYSCALL_ARGS * sizeof(args[0]));
				return vt_err_set(err, VT_E_PARSE, 0, "syscall file: argument %zu malformed",
						  i + 1);
			}
	}
	return VT_OK;
}

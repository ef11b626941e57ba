/*
 * common.c — error printing and argument parsing shared by subcommands.
 */
#include "cli/cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *vt_cli_proc_root;
const char *vt_cli_sys_root;

int vt_cli_error(const struct vt_err *err)
{
	fprintf(stderr, "vitals: %s\n", err->msg[0] ? err->msg : vt_code_str(err->code));
	if (err->hint[0])
		fprintf(stderr, "  hint: %s\n", err->hint);
	return vt_code_exit(err->code);
}

int vt_cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "vitals %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n  see 'vitals %s --help'\n", cmd);
	return vt_code_exit(VT_E_USAGE);
}

int vt_cli_open_procfs(struct vt_procfs *pfs, struct vt_err *err)
{
	const char *proc_root = vt_cli_proc_root ? vt_cli_proc_root : getenv("VITALS_PROC_ROOT");
	const char *sys_root = vt_cli_sys_root ? vt_cli_sys_root : getenv("VITALS_SYS_ROOT");

	if (proc_root && !*proc_root)
		proc_root = NULL;
	if (sys_root && !*sys_root)
		sys_root = NULL;
	return vt_procfs_open(pfs, proc_root, sys_root, err);
}

bool vt_cli_parse_pid(const char *text, int *pid)
{
	char *end;
	long v;

	if (!text || *text < '0' || *text > '9')
		return false;
	errno = 0;
	v = strtol(text, &end, 10);
	if (errno || *end || v <= 0 || v > 0x3fffffff)
		return false;
	*pid = (int)v;
	return true;
}

/* ---- Ctrl-C ends a long command cleanly -------------------------------- */

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

void vt_cli_catch_stop(volatile sig_atomic_t **flag)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	stop_requested = 0;
	*flag = &stop_requested;
}

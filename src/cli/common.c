/*
 * common.c — error printing and argument parsing shared by subcommands.
 */
#include "cli/cli.h"
#include "base/outfile.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <langinfo.h>
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <unistd.h>

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

int vt_cli_duration(const struct vt_command *cmd, const char *opt, const char *arg, double min_s,
		    double max_s, double *out)
{
	char limit[32];

	if (!vt_parse_duration(arg, out))
		return vt_cli_usage_error(cmd->name, "--%s '%s' is not a duration (try 30s, 5m, 2h, 2d, 0.5)", opt, arg);
	if (*out < min_s)
		return vt_cli_usage_error(cmd->name, "--%s '%s' is too short: the minimum is %s", opt, arg,
					  vt_fmt_span(min_s, limit, sizeof(limit)));
	if (max_s > 0 && *out > max_s)
		return vt_cli_usage_error(cmd->name, "--%s '%s' is over the maximum of %s", opt, arg,
					  vt_fmt_span(max_s, limit, sizeof(limit)));
	return 0;
}

int vt_cli_size(const struct vt_command *cmd, const char *opt, const char *arg, uint64_t *out)
{
	if (!vt_parse_size(arg, out))
		return vt_cli_usage_error(cmd->name, "--%s '%s' is not a size (try 8M, 512K, 1G)", opt, arg);
	return 0;
}

int vt_cli_count(const struct vt_command *cmd, const char *opt, const char *arg, long min, long max,
		 long *out)
{
	char *end;

	errno = 0;
	*out = strtol(arg, &end, 10);
	if (errno || end == arg || *end || *out < min || *out > max) {
		if (min == 1 && !(errno == 0 && end != arg && !*end && *out > max))
			return vt_cli_usage_error(cmd->name, "--%s '%s' is not a positive count", opt, arg);
		return vt_cli_usage_error(cmd->name, "--%s takes a whole number from %ld to %ld, not '%s'", opt,
					  min, max, arg);
	}
	return 0;
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

FILE *vt_cli_open_out(const char *cmd, const char *path, bool force, int *status)
{
	struct vt_err err;
	FILE *f;

	*status = 0;
	if (strcmp(path, "-") == 0)
		return stdout;
	/* made afresh, never through a link; an existing file only with --force */
	if (vt_out_fopen(path, 0644, VT_OUT_DEVICE | (force ? VT_OUT_REPLACE : 0), &f, &err) != VT_OK) {
		fprintf(stderr, "vitals %s: %s\n", cmd, err.msg);
		if (err.code == VT_E_USAGE && err.sys_errno == EEXIST)
			fprintf(stderr, "  hint: give another name, or --force to overwrite it\n");
		*status = vt_code_exit(err.code == VT_E_USAGE ? VT_E_USAGE : VT_E_IO);
		return NULL;
	}
	return f;
}

int vt_cli_close_out(const char *cmd, FILE *f, const char *path, int render_rc)
{
	int why = render_rc ? errno : 0;   /* the failed write's, before anything else sets it */
	bool out = f == stdout;

	if ((out ? fflush(f) : fclose(f)) != 0) {
		if (!why)
			why = errno;
	} else if (!render_rc) {
		return VT_EXIT_OK;
	}
	if (out)
		fprintf(stderr, "vitals %s: cannot write the output: %s\n", cmd, why ? strerror(why) : "write error");
	else
		fprintf(stderr, "vitals %s: writing '%s' failed: %s\n", cmd, path, why ? strerror(why) : "write error");
	return vt_code_exit(VT_E_IO);
}

int vt_cli_write_out(const char *cmd, const char *path, bool force, vt_cli_write_fn fn,
		     const void *ctx)
{
	struct vt_err err;
	struct stat sb;
	int status, rc;
	FILE *f = vt_cli_open_out(cmd, path, force, &status);

	if (!f)
		return status;
	bool made = f != stdout && fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode);
	vt_err_clear(&err);
	rc = fn(f, ctx, &err);
	if (rc && err.msg[0])
		fprintf(stderr, "vitals %s: %s\n", cmd, err.msg);
	status = vt_cli_close_out(cmd, f, path, rc);
	if (status && made)
		unlink(path);
	return status;
}

int vt_cli_stdout_done(const char *cmd, int render_rc)
{
	return vt_cli_close_out(cmd, stdout, "-", render_rc);
}

int vt_cli_nomem(const char *cmd)
{
	fprintf(stderr, "vitals %s: %s\n", cmd, vt_code_str(VT_E_NOMEM));
	return vt_code_exit(VT_E_NOMEM);
}

bool vt_cli_utf8(void)
{
	const char *cs;

	setlocale(LC_CTYPE, "");
	cs = nl_langinfo(CODESET);
	return cs && strcmp(cs, "UTF-8") == 0;
}

bool vt_cli_terminal_size(size_t *rows, size_t *cols)
{
	struct winsize ws;

	if (!isatty(STDOUT_FILENO) || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != 0)
		return false;
	*rows = ws.ws_row;
	*cols = ws.ws_col;
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

int vt_cli_budget(const char *cmd, const char *opt, const char *arg, double *share)
{
	char *end;
	double pct;

	errno = 0;
	pct = strtod(arg, &end);
	if (end == arg || (*end && strcmp(end, "%")) || !(pct >= 0.1 && pct <= 100))
		return vt_cli_usage_error(cmd, "--%s '%s': a percentage from 0.1 to 100", opt, arg);
	*share = pct / 100;
	return 0;
}

/* ---- Ctrl-Z closes the probes' window before vitals stops ------------- */

static volatile sig_atomic_t tstp_requested;
static volatile sig_atomic_t *tstp_busy;   /* NULL: always busy */

/* Stop now, as SIGTSTP's default would; the handler is back when continued. */
static void stop_self(void)
{
	struct sigaction sa, old;
	sigset_t tstp, mask;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTSTP, &sa, &old);
	sigemptyset(&tstp);
	sigaddset(&tstp, SIGTSTP);
	pthread_sigmask(SIG_UNBLOCK, &tstp, &mask);  /* blocked in its own handler, and in a probing thread */
	raise(SIGTSTP);          /* stopped here until SIGCONT */
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	sigaction(SIGTSTP, &old, NULL);
}

static void on_tstp(int sig)
{
	(void)sig;
	if (tstp_busy && !*tstp_busy)
		stop_self();     /* nothing armed: stop at once */
	else
		tstp_requested = 1;
}

void vt_cli_catch_tstp(volatile sig_atomic_t **flag, volatile sig_atomic_t *busy)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_tstp;
	sigemptyset(&sa.sa_mask);
	tstp_busy = busy;
	tstp_requested = 0;
	sigaction(SIGTSTP, &sa, NULL);
	*flag = &tstp_requested;
}

void vt_cli_tstp_paused(void *ctx)
{
	(void)ctx;
	stop_self();
	tstp_requested = 0;
}

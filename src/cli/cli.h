/*
 * cli.h — what the subcommands share.  Only src/cli prints errors and picks
 * exit statuses; everything below returns codes.
 */
#ifndef VT_CLI_CLI_H
#define VT_CLI_CLI_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/error.h"
#include "base/units.h"
#include "cli/command.h"
#include "proc/procfs.h"

/* The subcommands (cmd_<name>.c). */
extern const struct vt_command vt_cmd_snap, vt_cmd_heap, vt_cmd_census, vt_cmd_threads, vt_cmd_profile, vt_cmd_soak,
	vt_cmd_analyze, vt_cmd_compare, vt_cmd_experiment, vt_cmd_serve, vt_cmd_caps, vt_cmd_demo,
	vt_cmd_locks, vt_cmd_allocs;

/* Print "vitals: <msg>" and the hint on stderr; return the exit status. */
int vt_cli_error(const struct vt_err *err);
/* Print a usage error for cmd on stderr; return 64. */
int vt_cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * An option's argument as a duration of min_s to max_s (max_s <= 0: no
 * upper bound), a size, or a whole number of min to max: 0, or a usage
 * error printed for option opt of cmd and 64.
 */
int vt_cli_duration(const struct vt_command *cmd, const char *opt, const char *arg, double min_s,
		    double max_s, double *out);
int vt_cli_size(const struct vt_command *cmd, const char *opt, const char *arg, uint64_t *out);
int vt_cli_count(const struct vt_command *cmd, const char *opt, const char *arg, long min, long max,
		 long *out);

/* Open /proc and /sys, or the roots given by --proc-root/--sys-root or
 * VITALS_PROC_ROOT/VITALS_SYS_ROOT (recorded trees, for tests). */
int vt_cli_open_procfs(struct vt_procfs *pfs, struct vt_err *err);
/* Global options, set by main before the subcommand runs. */
extern const char *vt_cli_proc_root;
extern const char *vt_cli_sys_root;

/* SIGINT/SIGTERM/SIGHUP set *flag (returned) instead of killing vitals. */
void vt_cli_catch_stop(volatile sig_atomic_t **flag);
/*
 * Ctrl-Z (SIGTSTP) with uprobes armed: the handler sets *flag, and the
 * probing code closes its window, then calls vt_cli_tstp_paused (any ctx),
 * which stops vitals until SIGCONT and clears the flag.  busy (NULL:
 * always) says whether anything is armed: while it is 0 the handler stops
 * vitals at once.
 */
void vt_cli_catch_tstp(volatile sig_atomic_t **flag, volatile sig_atomic_t *busy);
void vt_cli_tstp_paused(void *ctx);

/* A slowdown budget "PCT" or "PCT%" (0.1 to 100) into *share (0.001 to 1); else the usage error. */
int vt_cli_budget(const char *cmd, const char *opt, const char *arg, double *share);

/* A pid argument: a positive decimal that fits pid_t. */
bool vt_cli_parse_pid(const char *text, int *pid);

/*
 * Open FILE for a view's output ("-" is stdout).  The file is made afresh,
 * never through a symbolic link (base/outfile.h): one that exists is
 * refused unless force (--force), with *status 64; other failures are the
 * error table's status for an I/O error.  The error is printed here.
 */
FILE *vt_cli_open_out(const char *cmd, const char *path, bool force, int *status);

/*
 * The one end of every view's output: render_rc is what the view returned
 * (non-zero: a write failed).  stdout is flushed, a file closed; a write
 * that did not reach it (a full disk, a closed pipe) is said once, with the
 * reason and the file's name, and gives the error table's exit status for
 * an I/O error; 0 when everything was written.
 */
int vt_cli_close_out(const char *cmd, FILE *f, const char *path, int render_rc);
/* The same for stdout. */
int vt_cli_stdout_done(const char *cmd, int render_rc);

/*
 * One output file of a view, whole: opened as vt_cli_open_out does, written
 * by fn (0, or non-zero with err set when it can say why, which is printed),
 * closed as vt_cli_close_out does.  A failure removes the file when it is a
 * regular file made here (a device written as it is, /dev/full, is never
 * removed).  The exit status.
 */
typedef int (*vt_cli_write_fn)(FILE *f, const void *ctx, struct vt_err *err);
int vt_cli_write_out(const char *cmd, const char *path, bool force, vt_cli_write_fn fn,
		     const void *ctx);

/* Out of memory in the command itself: said, and the error table's exit status for it. */
int vt_cli_nomem(const char *cmd);

/* The terminal takes UTF-8 (sparkline blocks); else the views use ASCII. */
bool vt_cli_utf8(void);

/* The size of the terminal stdout is (rows and columns as the kernel has them, 0
 * when it does not say); false when stdout is no terminal. */
bool vt_cli_terminal_size(size_t *rows, size_t *cols);

#endif

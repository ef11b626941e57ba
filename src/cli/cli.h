/*
 * cli.h — what the subcommands share.  Only src/cli prints errors and picks
 * exit statuses; everything below returns codes.
 */
#ifndef VT_CLI_CLI_H
#define VT_CLI_CLI_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "base/units.h"
#include "proc/procfs.h"

#define VT_EXIT_OK 0
#define VT_EXIT_PARTIAL 1

/* Print "vitals: <msg>" and the hint on stderr; return the exit status. */
int vt_cli_error(const struct vt_err *err);
/* Print a usage error for cmd on stderr; return 64. */
int vt_cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Open /proc and /sys, or the roots given by --proc-root/--sys-root or
 * VITALS_PROC_ROOT/VITALS_SYS_ROOT (recorded trees, for tests). */
int vt_cli_open_procfs(struct vt_procfs *pfs, struct vt_err *err);
/* Global options, set by main before the subcommand runs. */
extern const char *vt_cli_proc_root;
extern const char *vt_cli_sys_root;

/* SIGINT/SIGTERM/SIGHUP set *flag (returned) instead of killing vitals. */
void vt_cli_catch_stop(volatile sig_atomic_t **flag);

/* A pid argument: a positive decimal that fits pid_t. */
bool vt_cli_parse_pid(const char *text, int *pid);

int cmd_snap(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_heap(int argc, char **argv);
int cmd_threads(int argc, char **argv);
int cmd_soak(int argc, char **argv);
int cmd_analyze(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_experiment(int argc, char **argv);

#endif

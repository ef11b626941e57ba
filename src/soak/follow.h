/*
 * follow.h — finding the process a soak is about, again after a restart,
 * and launching and stopping the command vitals runs itself.
 */
#ifndef VT_SOAK_FOLLOW_H
#define VT_SOAK_FOLLOW_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/error.h"
#include "proc/procfs.h"

/* What identifies the service across restarts. */
struct vt_follow_key {
	const char *name;            /* comm (first 15 bytes) or basename of argv[0] */
	const char *pidfile;
	char cmdline[1024];          /* argv joined by NUL→' ' (the pid target's, captured at the start) */
	uint64_t min_start_ticks;    /* only processes started at or after this (a restart, not a sibling) */
	pid_t exclude;               /* never this pid (vitals itself) */
};

/*
 * Look for the process.  VT_OK with *pid set, VT_OK with *pid 0 when there
 * is none (yet).  A name is resolved as every command resolves it
 * (vt_target_name_find): with ambiguous_is_error, a name that is several
 * processes, a parent and its same-named children or unrelated ones, is
 * VT_E_USAGE (the message lists them), as is a command line that several
 * unrelated processes run; without, the oldest tree's root is taken and
 * *tree_n (may be NULL) is how many processes its tree holds, itself
 * included (1 for a process alone; 0 for a pid, a pidfile or none found).
 */
int vt_follow_find(const struct vt_procfs *pfs, const struct vt_follow_key *key,
		   bool ambiguous_is_error, pid_t *pid, size_t *tree_n, struct vt_err *err);

/* The command line of pid joined with spaces into out; false when unreadable. */
bool vt_follow_cmdline(const struct vt_procfs *pfs, pid_t pid, char *out, size_t cap);
/* Its start time in clock ticks since boot; 0 when unreadable. */
uint64_t vt_follow_start_ticks(const struct vt_procfs *pfs, pid_t pid);

/*
 * Start argv with env_add added to this environment ("K=V" sets K, a bare
 * "K" removes it), its stdout and
 * stderr to output_fd (-1: /dev/null; the caller made the file and closes
 * it after), in its own process group (a Ctrl-C
 * at the terminal stops vitals, which then stops the command).  Returns once
 * exec has succeeded; a command that cannot be run is VT_E_NOPROC with the
 * reason.
 */
int vt_launch(char *const *argv, char *const *env_add, int output_fd, pid_t *child,
	      struct vt_err *err);

/* Has the child exited?  Reaps it: *status is its wait status. */
bool vt_launch_reap(pid_t child, int *status);

/* SIGTERM, up to grace_s, then SIGKILL; reaps.  *status its wait status. */
void vt_launch_stop(pid_t child, double grace_s, int *status);

#endif

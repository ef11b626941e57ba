/*
 * name_cli.h — --name NAME at the command line: the one answer soak, snap,
 * threads and serve give for a name (the resolver is sample/target.h).
 *
 * A name that is one process is that process.  A name that is several (a
 * parent and its same-named workers, as nginx, php-fpm or postgres run, or
 * unrelated processes) is refused by the commands that read one process,
 * before anything is printed or any file is made, with the processes (pid,
 * parent, role, RSS, command line) and the commands to type instead; serve,
 * which sums a target's processes, says at start which ones it sums.
 */
#ifndef VT_CLI_NAME_CLI_H
#define VT_CLI_NAME_CLI_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "proc/procfs.h"

/*
 * The one process --name name is, for command cmd ("soak", "snap",
 * "threads").  one_pid is how to type cmd for one pid, the pid left out
 * ("vitals threads": the pid goes after it).  Returns 0 with *pid set, 0
 * with *pid 0 when no process has the name and !none_is_error (soak waits
 * for it), or the exit status after printing the refusal or the error on
 * stderr (no such process: 3).
 */
int vt_cli_name_pid(const struct vt_procfs *pfs, const char *cmd, const char *name, const char *one_pid,
		    bool none_is_error, pid_t *pid);

/*
 * One line on out: which processes --name name is now, as serve sums
 * them ("vitals serve: --name nginx is 3 processes, summed: 4100 parent,
 * 4101 child of 4100, ...").
 */
void vt_cli_name_describe(FILE *out, const struct vt_procfs *pfs, const char *cmd, const char *name);

#endif

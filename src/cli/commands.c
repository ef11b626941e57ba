/*
 * commands.c — the table of subcommands: `vitals --help` lists them in this
 * order, and the man page and bash completion are written from it.
 */
#include "cli/cli.h"

const struct vt_command *const vt_commands[] = {
	&vt_cmd_snap,
	&vt_cmd_heap,
	&vt_cmd_census,
	&vt_cmd_threads,
	&vt_cmd_locks,
	&vt_cmd_profile,
	&vt_cmd_allocs,
	&vt_cmd_soak,
	&vt_cmd_analyze,
	&vt_cmd_compare,
	&vt_cmd_experiment,
	&vt_cmd_serve,
	&vt_cmd_demo,
	&vt_cmd_caps,
};
const size_t vt_ncommands = sizeof(vt_commands) / sizeof(vt_commands[0]);

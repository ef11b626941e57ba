/*
 * main.c — `vitals`: dispatch to one subcommand (cli/commands.c).
 */
#include "cli/cli.h"
#include "base/json_lib.h"
#include "base/version.h"
#include "elf/elf_libs.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *out)
{
	char meaning[256];
	int statuses[32];
	size_t i, n;

	fprintf(out, "usage: vitals <command> [options] [args]\n\n"
		"What a running process's memory and CPU are really doing: measured, without a\n"
		"restart, without gdb.\n\ncommands:\n");
	for (i = 0; i < vt_ncommands; i++)
		fprintf(out, "  %-10s %s\n", vt_commands[i]->name, vt_commands[i]->summary);
	fprintf(out, "  %-10s %s\n", "help", "help on a command (vitals help snap)");
	fprintf(out, "  %-10s %s\n", "version", "print the version");
	fprintf(out, "\nexit status:\n");
	n = vt_exit_statuses(statuses, sizeof(statuses) / sizeof(statuses[0]));
	for (i = 0; i < n; i++)
		fprintf(out, "  %2d  %s\n", statuses[i], vt_exit_meaning(NULL, statuses[i], meaning, sizeof(meaning)));
	fprintf(out, "\nSee vitals(1) (man -l man/vitals.1 in the source tree).\n");
}

/*
 * What a command left in stdout's buffer is written now.  A write that
 * fails here (a full disk, and the command said nothing of it) fails the
 * command with the I/O status; a command that failed already keeps its own.
 */
/*
 * The libraries a command will use, opened before it opens anything else:
 * a dlopen needs a descriptor and address space, which a command that
 * holds one fd per thread may no longer have when it first asks.  Errors
 * are left for the first use to report (a command may do without).
 */
static void preload(unsigned libs)
{
	if (libs & VT_CMD_LIBDW)
		(void)vt_libdw_load(NULL);
	else if (libs & VT_CMD_LIBELF)
		(void)vt_libelf_load(NULL);
}

static int finish(const struct vt_command *cmd, int status)
{
	bool failed = fflush(stdout) != 0 || ferror(stdout);

	if (failed && (status == VT_EXIT_OK || status == VT_EXIT_PARTIAL))
		return vt_cli_stdout_done(cmd->name, 1);
	return status;
}

/* jansson could not be opened at the first JSON call: said as any error, and the end of it
 * (what stdout holds unwritten is dropped: no half report) */
static void jansson_missing(const struct vt_err *err)
{
	_exit(vt_cli_error(err));
}

int main(int argc, char **argv)
{
	const struct vt_command *cmd;
	int i = 1;

	vt_jansson_on_missing(jansson_missing);

	/* Global options before the command (hidden: for recorded /proc trees). */
	while (i + 1 < argc && (!strcmp(argv[i], "--proc-root") || !strcmp(argv[i], "--sys-root"))) {
		if (!strcmp(argv[i], "--proc-root"))
			vt_cli_proc_root = argv[i + 1];
		else
			vt_cli_sys_root = argv[i + 1];
		i += 2;
	}
	if (i >= argc) {
		usage(stderr);
		return VT_EXIT_USAGE;
	}
	if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
		usage(stdout);
		return VT_EXIT_OK;
	}
	if (!strcmp(argv[i], "version") || !strcmp(argv[i], "--version")) {
		printf("vitals %s\n", VT_VERSION);
		return VT_EXIT_OK;
	}
	if (!strcmp(argv[i], "help")) {
		if (i + 1 >= argc) {
			usage(stdout);
			return VT_EXIT_OK;
		}
		cmd = vt_command_find(argv[i + 1]);
		if (!cmd) {
			fprintf(stderr, "vitals: no command '%s'\n", argv[i + 1]);
			return VT_EXIT_USAGE;
		}
		vt_cli_help(cmd, stdout);
		return VT_EXIT_OK;
	}
	cmd = vt_command_find(argv[i]);
	if (!cmd) {
		fprintf(stderr, "vitals: '%s' is not a vitals command\n", argv[i]);
		usage(stderr);
		return VT_EXIT_USAGE;
	}
	preload(cmd->libs);
	return finish(cmd, cmd->run(cmd, argc - i, argv + i));
}

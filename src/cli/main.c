/*
 * main.c — `vitals`: dispatch to one subcommand.
 */
#include "cli/cli.h"
#include "base/version.h"

#include <stdio.h>
#include <string.h>

static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{ "snap", cmd_snap, "what a running process's memory is made of" },
	{ "heap", cmd_heap, "the allocator's own figures from a running process, without gdb" },
	{ "threads", cmd_threads, "CPU of a process and its threads now (deltas), states, diagnosis" },
	{ "soak", cmd_soak, "record memory and CPU durably for hours (SQLite), following restarts" },
	{ "analyze", cmd_analyze, "leak, plateau, step or still settling: a soak's verdict with its evidence" },
	{ "compare", cmd_compare, "A/B of recordings on their settled windows" },
	{ "experiment", cmd_experiment, "run a command under several arms (env), soak each, compare" },
	{ "demo", cmd_demo, "reproduce glibc arena sprawl on a bundled target, default vs capped" },
};

static void usage(FILE *out)
{
	size_t i;

	fprintf(out, "usage: vitals <command> [options] [args]\n\n"
		"What a running process's memory and CPU are really doing: measured, without a\n"
		"restart, without gdb.\n\ncommands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "  %-10s %s\n", "help", "help on a command (vitals help snap)");
	fprintf(out, "  %-10s %s\n", "version", "print the version");
	fprintf(out, "\nexit status: 0 ok, 1 partial (some parts unreadable, listed), 2 failed,\n"
		"3 no such process, 4 process exited while being read, 5 permission denied,\n"
		"6 kernel thread, 7 zombie, 8 not supported, 9 bad recording, 10 timed out,\n"
		"11 injected call faulted, 64 usage.\n"
		"See vitals(1).\n");
}

static const struct command *find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	const struct command *cmd;
	int i = 1;

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
		return 64;
	}
	if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[i], "version") || !strcmp(argv[i], "--version")) {
		printf("vitals %s\n", VT_VERSION);
		return 0;
	}
	if (!strcmp(argv[i], "help")) {
		char *help_argv[] = { argv[i + 1 < argc ? i + 1 : i], "--help", NULL };
		if (i + 1 >= argc) {
			usage(stdout);
			return 0;
		}
		cmd = find(argv[i + 1]);
		if (!cmd) {
			fprintf(stderr, "vitals: no command '%s'\n", argv[i + 1]);
			return 64;
		}
		return cmd->run(2, help_argv);
	}
	cmd = find(argv[i]);
	if (!cmd) {
		fprintf(stderr, "vitals: '%s' is not a vitals command\n", argv[i]);
		usage(stderr);
		return 64;
	}
	return cmd->run(argc - i, argv + i);
}

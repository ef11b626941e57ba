/*
 * command.h — what a subcommand is, declared once: its name, synopsis,
 * description, options, exit statuses and examples.
 *
 * From one struct vt_command come the getopt table that parses its command
 * line, its --help, its part of the man page (SYNOPSIS, COMMANDS, OPTIONS,
 * EXIT STATUS, EXAMPLES: tools/vitals-doc writes man/vitals.1 from
 * man/vitals.1.in) and bash completion.  Options and operands may come in
 * any order; only "--" ends the options (soak -- CMD, experiment -- CMD).
 */
#ifndef VT_CLI_COMMAND_H
#define VT_CLI_COMMAND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Exit statuses a command has beside those of base/error.h's codes. */
#define VT_EXIT_OK 0
#define VT_EXIT_PARTIAL 1
#define VT_EXIT_USAGE 64
#define VT_EXIT_STOPPED 130      /* stopped on request (Ctrl-C), what was done kept: 128 + SIGINT */

/* What the parser hands back for --help (the help is already printed). */
#define VT_CLI_HELP (-1)

struct vt_option {
	const char *name;          /* long name without "--": "interval" */
	int short_name;            /* 'i', or 0 */
	const char *arg;           /* its argument's name ("DURATION"), NULL for a flag */
	const char *help;          /* what it does; may hold "\n" (continued lines) */
	int id;                    /* handed to the command's handler; > 0 */
};

/* An exit status and what it means for this command (NULL: the table's meaning). */
struct vt_exit_note {
	int status;
	const char *meaning;
};

/* The libraries opened on demand (base/dynlib.h) that a command will use. */
enum vt_command_libs {
	VT_CMD_LIBELF = 1 << 0,   /* ELF files: allocator detection, symbols */
	VT_CMD_LIBDW = 1 << 1,    /* unwinding and symbolising stacks (libelf too) */
};

struct vt_command {
	const char *name;                       /* "threads" */
	const char *summary;                    /* one line, for `vitals --help` */
	const char *synopsis;                   /* after "vitals NAME ": lines separated by "\n" */
	const char *description;                /* paragraphs; lines indented by two spaces are kept as they are */
	const struct vt_option *options;        /* ends with a zeroed entry; --help is added */
	const char *after;                      /* printed after the options, may be NULL */
	const struct vt_exit_note *exits;       /* ends with status -1; 0 and 64 are implied */
	const char *const *examples;            /* command lines, NULL-terminated (PID, FILE, ... stand for the user's) */
	bool takes_command;                     /* what follows "--" is a command to run (soak, experiment);
	                                         * for the others it is more operands ("snap -- -5") */
	unsigned libs;                          /* enum vt_command_libs: opened before run, while
	                                         * descriptors are plenty (best effort: a library that
	                                         * cannot be opened is said where it is first needed) */
	int (*run)(const struct vt_command *cmd, int argc, char **argv);
};

/* Every command, in the order `vitals --help` lists them (commands.c). */
extern const struct vt_command *const vt_commands[];
extern const size_t vt_ncommands;

const struct vt_command *vt_command_find(const char *name);

/* What a command line holds once its options are taken out. */
struct vt_args {
	char **operands;           /* in order; points into argv (those after "--" too, unless
	                            * the command takes_command) */
	size_t noperands;
	char **after;              /* with takes_command: after "--", NULL-terminated; NULL when
	                            * there was no "--" */
};

/*
 * Parse argv (argv[0] is the command's name) against cmd's options, calling
 * handle(ctx, id, arg) for each in order; arg is NULL for a flag.  handle
 * returns 0, or an exit status after printing its own usage error (see
 * vt_cli_usage_error).  Returns 0 with *out filled; VT_CLI_HELP after
 * printing --help to stdout; or 64 after a usage error (unknown option,
 * missing argument), printed.  argv is permuted.
 */
int vt_cli_parse(const struct vt_command *cmd, int argc, char **argv,
		 int (*handle)(void *ctx, int id, const char *arg), void *ctx, struct vt_args *out);

/* The command's --help. */
void vt_cli_help(const struct vt_command *cmd, FILE *out);

/* The text of exit status status (meaning from cmd's notes, else from base/error.h's table). */
const char *vt_exit_meaning(const struct vt_command *cmd, int status, char *buf, size_t cap);

/*
 * The statuses cmd ends with, ascending, into out[cap]: those it names,
 * and three any command can end with unless it says otherwise (its output
 * not written, out of memory, a usage error); a NULL meaning is
 * vt_exit_meaning's.
 * 0 when cmd names none.
 */
size_t vt_exit_notes(const struct vt_command *cmd, struct vt_exit_note *out, size_t cap);

/* The exit statuses that exist, ascending (0, 1, 2, 3, ..., 64); returns how many (<= cap). */
size_t vt_exit_statuses(int *out, size_t cap);

#endif

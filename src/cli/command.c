/*
 * command.c — parsing a command line and writing --help from a command's
 * declaration (see command.h).
 */
#include "cli/command.h"

#include "base/error.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OPTIONS 40
#define HELP_COLUMN 27           /* where option help starts in --help */
#define WRAP 79

static const struct vt_option help_option = { "help", 'h', NULL, "this help", 'h' };

static size_t count_options(const struct vt_command *cmd)
{
	size_t n = 0;

	while (cmd->options && cmd->options[n].name)
		n++;
	return n;
}

static const struct vt_option *short_option(const struct vt_command *cmd, int c)
{
	size_t i, n = count_options(cmd);

	for (i = 0; i < n; i++)
		if (cmd->options[i].short_name == c)
			return &cmd->options[i];
	return c == 'h' ? &help_option : NULL;
}

static int usage_error(const struct vt_command *cmd, const char *what, const char *arg)
{
	fprintf(stderr, "vitals %s: %s '%s'\n  see 'vitals %s --help'\n", cmd->name, what, arg, cmd->name);
	return VT_EXIT_USAGE;
}

/*
 * getopt_long in "return in order" mode ("-" first in optstring): every
 * operand comes back as code 1, wherever it stands, so options and operands
 * mix freely whatever POSIXLY_CORRECT says, and "--" ends the options.  The
 * operands are gathered at the front of argv as they come (into slots
 * getopt has already passed).
 */
int vt_cli_parse(const struct vt_command *cmd, int argc, char **argv,
		 int (*handle)(void *ctx, int id, const char *arg), void *ctx, struct vt_args *out)
{
	struct option longopts[MAX_OPTIONS + 2];
	char shortopts[2 * MAX_OPTIONS + 4] = "-:";
	size_t i, n = count_options(cmd), s = 2, nops = 0;
	int c, rc, idx, last = 1;

	memset(out, 0, sizeof(*out));
	if (n > MAX_OPTIONS)
		n = MAX_OPTIONS;
	for (i = 0; i <= n; i++) {
		const struct vt_option *o = i < n ? &cmd->options[i] : &help_option;

		longopts[i] = (struct option){ o->name, o->arg ? required_argument : no_argument, NULL, 1000 + (int)i };
		if (o->short_name) {
			shortopts[s++] = (char)o->short_name;
			if (o->arg)
				shortopts[s++] = ':';
		}
	}
	memset(&longopts[n + 1], 0, sizeof(longopts[0]));
	shortopts[s] = '\0';
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, &idx)) != -1) {
		const struct vt_option *o;
		char opt[3] = { '-', (char)optopt, '\0' };

		last = optind;
		if (c == 1) {
			argv[1 + nops++] = optarg;
			continue;
		}
		if (c == '?')
			return usage_error(cmd, "unknown option", optopt && optopt < 256 ? opt : argv[optind - 1]);
		if (c == ':')
			return usage_error(cmd, "this option needs an argument:",
					   optopt && optopt < 256 ? opt : argv[optind - 1]);
		o = c >= 1000 ? (c - 1000 < (int)n ? &cmd->options[c - 1000] : &help_option) : short_option(cmd, c);
		if (!o)
			return usage_error(cmd, "unknown option", argv[optind - 1]);
		if (o == &help_option) {
			vt_cli_help(cmd, stdout);
			return VT_CLI_HELP;
		}
		if ((rc = handle(ctx, o->id, o->arg ? optarg : NULL)) != 0)
			return rc;
	}
	out->operands = argv + 1;
	out->noperands = nops;
	/* getopt stepped over a "--" after the last element it returned: the rest is the command's */
	if (optind == last + 1 && last < argc && !strcmp(argv[last], "--")) {
		if (cmd->takes_command) {
			out->after = argv + optind;
			return 0;
		}
		while (optind < argc)                /* operands too, that may start with "-" */
			argv[1 + out->noperands++] = argv[optind++];
	}
	return 0;
}

/* ---- --help ---- */

/* Print text filled into lines of at most WRAP columns. */
static void wrap(FILE *out, const char *text)
{
	const char *p = text;
	int col = 0;

	while (*p) {
		size_t word = strcspn(p, " \n");

		if (col > 0 && col + 1 + (int)word > WRAP) {
			fputc('\n', out);
			col = 0;
		} else if (col > 0) {
			fputc(' ', out);
			col++;
		}
		fwrite(p, 1, word, out);
		col += (int)word;
		p += word;
		while (*p == ' ' || *p == '\n')
			p++;
	}
	fputc('\n', out);
}

/* "  -i, --interval DURATION" or "  --for DURATION"; returns its length. */
static int option_head(const struct vt_option *o, char *buf, size_t cap)
{
	char shortform[8] = "";

	if (o->short_name)
		snprintf(shortform, sizeof(shortform), "-%c, ", o->short_name);
	return snprintf(buf, cap, "  %s--%s%s%s", shortform, o->name, o->arg ? " " : "", o->arg ? o->arg : "");
}

static void print_option(FILE *out, const struct vt_option *o)
{
	char head[96];
	const char *line = o->help, *nl;
	int len = option_head(o, head, sizeof(head));

	fputs(head, out);
	if (len + 2 > HELP_COLUMN)
		fprintf(out, "\n%*s", HELP_COLUMN, "");
	else
		fprintf(out, "%*s", HELP_COLUMN - len, "");
	/* each "\n"-separated line of the help on its own line, at the help column */
	for (;;) {
		nl = strchr(line, '\n');
		fprintf(out, "%.*s\n", nl ? (int)(nl - line) : (int)strlen(line), line);
		if (!nl)
			break;
		line = nl + 1;
		fprintf(out, "%*s", HELP_COLUMN, "");
	}
}

/* The synopsis, "usage: vitals NAME LINE" and "       vitals NAME LINE". */
static void print_synopsis(FILE *out, const struct vt_command *cmd)
{
	const char *line = cmd->synopsis;
	bool first = true;

	while (line && *line) {
		size_t len = strcspn(line, "\n");

		fprintf(out, "%s vitals %s %.*s\n", first ? "usage:" : "      ", cmd->name, (int)len, line);
		first = false;
		line += len;
		if (*line)
			line++;
	}
}

const char *vt_exit_meaning(const struct vt_command *cmd, int status, char *buf, size_t cap)
{
	size_t i, used = 0, n = 0;
	bool generic = false;
	int code;

	for (i = 0; cmd && cmd->exits && cmd->exits[i].status >= 0; i++)
		if (cmd->exits[i].status == status && cmd->exits[i].meaning)
			return cmd->exits[i].meaning;
	if (status == VT_EXIT_OK)
		return "ok";
	if (status == VT_EXIT_PARTIAL)
		return "partial: some part could not be read; a note says which and why";
	if (status == VT_EXIT_USAGE)
		return "usage error";
	/*
	 * "failed (read error, ...)": the generic code's meaning, then the
	 * others'; codes that share a status as equals: "out of memory or too
	 * many open files".
	 */
	buf[0] = '\0';
	for (code = 0; code < VT_E__COUNT && used < cap; code++) {
		if (vt_code_exit(code) != status || code == VT_OK || code == VT_E_USAGE)
			continue;
		if (!used)
			generic = code == VT_E_FAIL;
		used += (size_t)snprintf(buf + used, cap - used, "%s%s",
					 used == 0 ? "" : !generic ? " or " : n++ ? ", " : " (", vt_code_str(code));
	}
	if (n && used < cap)
		snprintf(buf + used, cap - used, ")");
	return buf;
}

size_t vt_exit_statuses(int *out, size_t cap)
{
	size_t n = 0;
	int status, code;

	for (status = 0; status <= VT_EXIT_USAGE; status++) {
		bool exists = status == VT_EXIT_OK || status == VT_EXIT_PARTIAL;

		for (code = 0; code < VT_E__COUNT && !exists; code++)
			exists = code != VT_OK && vt_code_exit(code) == status;
		if (exists && n < cap)
			out[n++] = status;
	}
	return n;
}

static int by_status(const void *a, const void *b)
{
	return ((const struct vt_exit_note *)a)->status - ((const struct vt_exit_note *)b)->status;
}

size_t vt_exit_notes(const struct vt_command *cmd, struct vt_exit_note *out, size_t cap)
{
	int short_status = vt_code_exit(VT_E_NOMEM);    /* any command can run out */
	int write_status = vt_code_exit(VT_E_IO);       /* ... or fail to write its output */
	bool short_noted = false, write_noted = false, usage_noted = false;
	size_t i, n = 0;

	if (!cmd->exits || cap < 3)
		return 0;
	for (i = 0; cmd->exits[i].status >= 0 && n < cap - 3; i++) {
		short_noted |= cmd->exits[i].status == short_status;
		write_noted |= cmd->exits[i].status == write_status;
		usage_noted |= cmd->exits[i].status == VT_EXIT_USAGE;
		out[n++] = cmd->exits[i];
	}
	if (!write_noted)
		out[n++] = (struct vt_exit_note){ write_status, "its output could not be written (a note says why)" };
	if (!short_noted)
		out[n++] = (struct vt_exit_note){ short_status, NULL };
	if (!usage_noted)
		out[n++] = (struct vt_exit_note){ VT_EXIT_USAGE, "usage error" };
	qsort(out, n, sizeof(out[0]), by_status);
	return n;
}

/* "exit status: 0 ok; 1 ...; 64 usage error." for the statuses cmd ends with (vt_exit_notes). */
static void print_exits(FILE *out, const struct vt_command *cmd)
{
	struct vt_exit_note notes[64];
	char text[2048], buf[256];
	size_t used, i, n = vt_exit_notes(cmd, notes, sizeof(notes) / sizeof(notes[0]));
	bool own_zero = n && notes[0].status == 0;   /* a command may say what its 0 means */

	used = (size_t)snprintf(text, sizeof(text), "exit status:%s", own_zero ? "" : " 0 ok");
	for (i = 0; i < n && used < sizeof(text); i++)
		used += (size_t)snprintf(text + used, sizeof(text) - used, "%s %d %s", i || !own_zero ? ";" : "",
					 notes[i].status,
					 notes[i].meaning ? notes[i].meaning
							  : vt_exit_meaning(cmd, notes[i].status, buf, sizeof(buf)));
	if (used < sizeof(text))
		snprintf(text + used, sizeof(text) - used, "%s.", n ? "" : "; 64 usage error");
	wrap(out, text);
}

void vt_cli_help(const struct vt_command *cmd, FILE *out)
{
	size_t i, n = count_options(cmd);

	print_synopsis(out, cmd);
	fputc('\n', out);
	fputs(cmd->description, out);
	fputs("\noptions:\n", out);
	for (i = 0; i < n; i++)
		print_option(out, &cmd->options[i]);
	print_option(out, &help_option);
	if (cmd->after) {
		fputc('\n', out);
		fputs(cmd->after, out);
	}
	fputc('\n', out);
	print_exits(out, cmd);
	if (cmd->examples && cmd->examples[0]) {
		fputs("\nexamples:\n", out);
		for (i = 0; cmd->examples[i]; i++)
			fprintf(out, "  %s\n", cmd->examples[i]);
	}
	fputs("\nSee vitals(1) (man -l man/vitals.1 in the source tree) and docs/json.md.\n", out);
}

const struct vt_command *vt_command_find(const char *name)
{
	size_t i;

	for (i = 0; i < vt_ncommands; i++)
		if (!strcmp(vt_commands[i]->name, name))
			return vt_commands[i];
	return NULL;
}

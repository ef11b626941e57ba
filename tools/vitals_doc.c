/*
 * vitals_doc.c — `vitals-doc`: the documents written from the commands'
 * declarations (src/cli/commands.c), so that they cannot drift from what
 * the program parses.
 *
 *   vitals-doc man TEMPLATE   the man page: TEMPLATE (man/vitals.1.in) with
 *                             @SYNOPSIS@, @COMMANDS@, @OPTIONS@, @EXIT_STATUS@
 *                             and @EXAMPLES@ lines replaced
 *   vitals-doc completion     a bash completion script for vitals
 *   vitals-doc options        "COMMAND --OPTION" per line, for the test that
 *                             every option is in --help and in the man page
 *   vitals-doc examples       every example command line
 *
 * `make man` runs the first into man/vitals.1 (checked in, so that
 * `man -l man/vitals.1` works in a fresh clone); the test suite checks that
 * the checked-in page is what the declarations give.
 */
#include "cli/cli.h"
#include "base/version.h"
#include "serve/exporter.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Text for troff: backslashes and dashes escaped, a leading dot or quote made harmless. */
static void roff(FILE *out, const char *s, size_t len)
{
	size_t i;

	if (len && (s[0] == '.' || s[0] == '\''))
		fputs("\\&", out);
	for (i = 0; i < len; i++) {
		if (s[i] == '\\')
			fputs("\\e", out);
		else if (s[i] == '-')
			fputs("\\-", out);
		else
			fputc(s[i], out);
	}
}

static void roff_line(FILE *out, const char *s)
{
	roff(out, s, strlen(s));
	fputc('\n', out);
}

/*
 * A description: paragraphs filled by troff, a blank line a new (indented)
 * paragraph, lines indented by two spaces kept as they are (.nf).
 */
static void roff_text(FILE *out, const char *text)
{
	const char *p = text;
	bool nofill = false;

	while (*p) {
		size_t len = strcspn(p, "\n");
		bool pre = len >= 2 && !strncmp(p, "  ", 2);

		if (pre != nofill) {
			fputs(pre ? ".nf\n" : ".fi\n", out);
			nofill = pre;
		}
		if (len == 0)
			fputs(".IP\n", out);
		else {
			roff(out, p, len);
			fputc('\n', out);
		}
		p += len;
		if (*p)
			p++;
	}
	if (nofill)
		fputs(".fi\n", out);
}

static void synopsis(FILE *out)
{
	size_t i;

	for (i = 0; i < vt_ncommands; i++) {
		const char *line = vt_commands[i]->synopsis;

		while (*line) {
			size_t len = strcspn(line, "\n");

			fprintf(out, ".B vitals %s\n", vt_commands[i]->name);
			roff(out, line, len);
			fputs("\n.br\n", out);
			line += len;
			if (*line)
				line++;
		}
	}
	fputs(".B vitals help\n.RI [ command ]\n", out);
}

static void commands(FILE *out)
{
	size_t i;

	for (i = 0; i < vt_ncommands; i++) {
		fprintf(out, ".TP\n.B %s\n", vt_commands[i]->name);
		roff_text(out, vt_commands[i]->description);
		if (vt_commands[i]->after) {
			fputs(".IP\n", out);
			roff_text(out, vt_commands[i]->after);
		}
	}
}

static void option(FILE *out, const struct vt_option *o)
{
	const char *h = o->help;

	fputs(".TP\n", out);
	if (o->short_name)
		fprintf(out, "\\fB\\-%c\\fR, ", o->short_name);
	fputs("\\fB\\-\\-", out);
	roff(out, o->name, strlen(o->name));
	fputs("\\fR", out);
	if (o->arg) {
		fputs(" \\fI", out);
		roff(out, o->arg, strlen(o->arg));
		fputs("\\fR", out);
	}
	fputc('\n', out);
	while (*h) {
		size_t len = strcspn(h, "\n");

		roff(out, h, len);
		fputc('\n', out);
		h += len;
		if (*h)
			h++;
	}
}

static void options(FILE *out)
{
	static const struct vt_option help = { "help", 'h', NULL, "this help", 'h' };
	struct vt_exit_note notes[64];
	char meaning[512];
	size_t i, k, nnotes;

	for (i = 0; i < vt_ncommands; i++) {
		const struct vt_command *c = vt_commands[i];

		fprintf(out, ".SS vitals %s\n", c->name);
		for (k = 0; c->options[k].name; k++)
			option(out, &c->options[k]);
		option(out, &help);
		nnotes = vt_exit_notes(c, notes, sizeof(notes) / sizeof(notes[0]));
		if (nnotes) {
			fputs(".PP\nExit status of\n.BR \"vitals ", out);
			fprintf(out, "%s\" :\n", c->name);
			for (k = 0; k < nnotes; k++) {
				const char *m = notes[k].meaning ? notes[k].meaning
								 : vt_exit_meaning(c, notes[k].status, meaning, sizeof(meaning));

				fprintf(out, "%d ", notes[k].status);
				roff(out, m, strlen(m));
				fputs(k + 1 < nnotes ? ";\n" : ".\n", out);
			}
		}
	}
}

static void exit_status(FILE *out)
{
	char meaning[512];
	int statuses[32];
	size_t i, n = vt_exit_statuses(statuses, sizeof(statuses) / sizeof(statuses[0]));

	for (i = 0; i < n; i++) {
		fprintf(out, ".TP\n.B %d\n", statuses[i]);
		roff_line(out, vt_exit_meaning(NULL, statuses[i], meaning, sizeof(meaning)));
	}
}

static void examples(FILE *out, bool troff)
{
	size_t i, k;

	if (troff)
		fputs(".nf\n", out);
	for (i = 0; i < vt_ncommands; i++)
		for (k = 0; vt_commands[i]->examples && vt_commands[i]->examples[k]; k++) {
			if (troff)
				roff_line(out, vt_commands[i]->examples[k]);
			else
				printf("%s\n", vt_commands[i]->examples[k]);
		}
	if (troff)
		fputs(".fi\n", out);
}

static int man(const char *template)
{
	char line[4096];
	FILE *in = fopen(template, "r");

	if (!in) {
		perror(template);
		return 2;
	}
	while (fgets(line, sizeof(line), in)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strcmp(line, "@SYNOPSIS@"))
			synopsis(stdout);
		else if (!strcmp(line, "@COMMANDS@"))
			commands(stdout);
		else if (!strcmp(line, "@OPTIONS@"))
			options(stdout);
		else if (!strcmp(line, "@EXIT_STATUS@"))
			exit_status(stdout);
		else if (!strcmp(line, "@EXAMPLES@"))
			examples(stdout, true);
		else if (!strncmp(line, ".TH ", 4))
			printf(".TH VITALS 1 \"\" \"vitals %s\" \"User Commands\"\n", VT_VERSION);
		else
			printf("%s\n", line);
	}
	fclose(in);
	return ferror(stdout) ? 2 : 0;
}

/* What completes an option's argument: files, directories, or nothing to offer. */
static const char *arg_kind(const char *arg)
{
	if (!arg)
		return "";
	if (!strcmp(arg, "FILE") || !strcmp(arg, "PIDFILE"))
		return "file";
	if (!strcmp(arg, "DIR"))
		return "dir";
	return "value";
}

static int completion(void)
{
	size_t i, k;

	printf("# bash completion for vitals %s, written by vitals-doc from the commands' option tables\n"
	       "_vitals()\n{\n"
	       "\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd=${COMP_WORDS[1]}\n"
	       "\tif [ \"$COMP_CWORD\" -eq 1 ]; then\n\t\tCOMPREPLY=($(compgen -W \"", VT_VERSION);
	for (i = 0; i < vt_ncommands; i++)
		printf("%s ", vt_commands[i]->name);
	printf("help version\" -- \"$cur\"))\n\t\treturn\n\tfi\n\tcase \"$cmd $prev\" in\n");
	for (i = 0; i < vt_ncommands; i++)
		for (k = 0; vt_commands[i]->options[k].name; k++) {
			const struct vt_option *o = &vt_commands[i]->options[k];
			const char *kind = arg_kind(o->arg);

			if (!*kind)
				continue;
			printf("\t\"%s --%s\"", vt_commands[i]->name, o->name);
			if (o->short_name)
				printf("|\"%s -%c\"", vt_commands[i]->name, o->short_name);
			printf(")\n");
			if (!strcmp(kind, "file"))
				printf("\t\tCOMPREPLY=($(compgen -f -- \"$cur\")); return;;\n");
			else if (!strcmp(kind, "dir"))
				printf("\t\tCOMPREPLY=($(compgen -d -- \"$cur\")); return;;\n");
			else
				printf("\t\treturn;;\n");
		}
	printf("\tesac\n\tif [[ $cur == -* ]]; then\n\t\tcase $cmd in\n");
	for (i = 0; i < vt_ncommands; i++) {
		printf("\t\t%s) COMPREPLY=($(compgen -W \"--help", vt_commands[i]->name);
		for (k = 0; vt_commands[i]->options[k].name; k++)
			printf(" --%s", vt_commands[i]->options[k].name);
		printf("\" -- \"$cur\"));;\n");
	}
	printf("\t\tesac\n\t\treturn\n\tfi\n\tcase $cmd in\n"
	       "\tsnap|heap|threads|soak) COMPREPLY=($(compgen -W \"$(ls /proc | grep -E '^[0-9]+$')\" -- \"$cur\"));;\n"
	       "\tanalyze|compare) COMPREPLY=($(compgen -f -X '!*.db' -- \"$cur\") $(compgen -d -- \"$cur\"));;\n"
	       "\thelp) COMPREPLY=($(compgen -W \"");
	for (i = 0; i < vt_ncommands; i++)
		printf("%s ", vt_commands[i]->name);
	printf("\" -- \"$cur\"));;\n\tesac\n}\ncomplete -F _vitals vitals\n");
	return ferror(stdout) ? 2 : 0;
}

static int list_options(void)
{
	size_t i, k;

	for (i = 0; i < vt_ncommands; i++)
		for (k = 0; vt_commands[i]->options[k].name; k++)
			printf("%s --%s\n", vt_commands[i]->name, vt_commands[i]->options[k].name);
	return ferror(stdout) ? 2 : 0;
}

/* "NAME TYPE" for each family vitals serve writes (a counter's name with _total). */
static int list_metrics(void)
{
	for (size_t i = 0; i < vt_exporter_family_count(); i++) {
		const char *name;
		enum vt_prom_type type;

		vt_exporter_family(i, &name, &type);
		size_t len = strlen(name);
		bool total = type == VT_PROM_COUNTER && !(len > 6 && !strcmp(name + len - 6, "_total"));
		printf("%s%s %s\n", name, total ? "_total" : "", type == VT_PROM_COUNTER ? "counter" : "gauge");
	}
	return ferror(stdout) ? 2 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "man"))
		return man(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "completion"))
		return completion();
	if (argc == 2 && !strcmp(argv[1], "options"))
		return list_options();
	if (argc == 2 && !strcmp(argv[1], "examples")) {
		examples(stdout, false);
		return ferror(stdout) ? 2 : 0;
	}
	if (argc == 2 && !strcmp(argv[1], "metrics"))
		return list_metrics();
	fprintf(stderr, "usage: vitals-doc man TEMPLATE | completion | options | examples | metrics\n");
	return 64;
}

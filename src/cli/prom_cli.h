/*
 * prom_cli.h — `vitals analyze --prometheus URL` and `vitals compare
 * --prometheus URL`: series read from a Prometheus server (serve/
 * prom_client.h) judged and shown as a recording's are (cmd_analyze.c
 * parses the options into struct vt_cli_prom and calls these).
 */
#ifndef VT_CLI_PROM_CLI_H
#define VT_CLI_PROM_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "cli/command.h"

/* Queries compare takes at most (each one arm). */
#define VT_CLI_PROM_MAX_QUERIES 8

/* What the command line asked of Prometheus. */
struct vt_cli_prom {
	const char *url;             /* --prometheus, NULL: not asked */
	const char *query[VT_CLI_PROM_MAX_QUERIES];   /* --query, in order */
	size_t nquery;
	double range_s;              /* --range, 0: VT_CLI_PROM_RANGE_S */
	double step_s;               /* --step, 0: vt_prom_default_step(range) */
	double end;                  /* --end as unix time, 0: now */
	double offset_s;             /* --offset (compare), 0: none */
	double timeout_s;            /* --timeout, 0: prom_client's default */
	bool json;
	const char *names;           /* --names A,B (compare), NULL: made up */
};

/* The range read when --range is not given, s. */
#define VT_CLI_PROM_RANGE_S 3600.0

/*
 * --end's argument as unix time: "now", unix seconds ("1733300000",
 * "1733300000.5") or RFC 3339 ("2026-12-04T10:00:00Z", "...+01:00",
 * fractions allowed).  false when it is none of them.
 */
bool vt_cli_parse_time(const char *text, double *unix_s);

/*
 * Run analyze or compare on p (options already checked for what they
 * mean alone): print the views on stdout, errors on stderr, and return
 * the exit status.
 */
int vt_cli_prom_analyze(const struct vt_command *cmd, const struct vt_cli_prom *p);
int vt_cli_prom_compare(const struct vt_command *cmd, const struct vt_cli_prom *p);

#endif

/*
 * soak_cli.h — what soak, experiment and demo share at the command line:
 * the progress line, the end-of-soak summary, and the comparison written
 * to stdout and files.
 */
#ifndef VT_CLI_SOAK_CLI_H
#define VT_CLI_SOAK_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "analyze/compare.h"
#include "soak/soak.h"

struct vt_cli_progress {
	const char *prefix;          /* printed before the line ("  ", "cap2: ") */
	double last_line;            /* elapsed_s of the last line (non-terminals: one a minute) */
	unsigned lines;              /* lines printed so far */
	bool drawn;                  /* a line is on the terminal without its newline */
};

/* A vt_soak_config.progress callback; ctx is a struct vt_cli_progress. */
void vt_cli_soak_progress(void *ctx, const struct vt_soak_progress *p);
/* A vt_soak_config.notice callback: the text on stderr, on its own line; ctx is a struct vt_cli_progress. */
void vt_cli_soak_notice(void *ctx, const char *text);
/* End the progress line. */
void vt_cli_progress_end(struct vt_cli_progress *pr);
/* "recorded N samples over ... into FILE (size, per sample); why it ended" and what next. */
void vt_cli_soak_summary(FILE *out, const char *path, const struct vt_soak_result *res);

/* How the comparison is shown: on stdout as text or JSON, and as CSV and HTML files (NULL: none). */
struct vt_cli_compare_out {
	bool json;
	const char *csv, *html;
	const char *title;           /* heading, NULL: "vitals compare · N arms" */
	bool force;                  /* the CSV and HTML files may replace existing ones */
	/* each arm's stored profiles against the baseline's (narms - 1), NULL none */
	const struct vt_prof_diff *profile_diffs;
	size_t nprofile_diffs;
	const char *metric_label;    /* the deciding metric's name when the arms are not recordings, NULL */
	bool limits;                 /* each arm's recommended memory limit (--limit) */
	/* each arm's stored allocation sites against the baseline's (narms - 1), NULL none */
	const struct vt_alloc_diff *alloc_diffs;
};

/* Write set's comparison as o says; returns the exit status (errors printed). */
int vt_cli_compare_write(const char *cmd, const struct vt_compare_set *set, const struct vt_cli_compare_out *o);

#endif

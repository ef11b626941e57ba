/*
 * soak_cli.h — what soak, experiment and demo share at the command line:
 * stopping on Ctrl-C, the progress line and the end-of-soak summary.
 */
#ifndef VT_CLI_SOAK_CLI_H
#define VT_CLI_SOAK_CLI_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "soak/soak.h"

struct vt_cli_progress {
	const char *prefix;          /* printed before the line ("  ", "cap2: ") */
	double last_line;            /* elapsed_s of the last line (non-terminals: one a minute) */
	unsigned lines;              /* lines printed so far */
	bool drawn;                  /* a line is on the terminal without its newline */
};

/* A vt_soak_config.progress callback; ctx is a struct vt_cli_progress. */
void vt_cli_soak_progress(void *ctx, const struct vt_soak_progress *p);
/* End the progress line. */
void vt_cli_progress_end(struct vt_cli_progress *pr);
/* "recorded N samples over ... into FILE (size, per sample)" and what next. */
void vt_cli_soak_summary(FILE *out, const char *path, const struct vt_soak_result *res);

/*
 * Load n recordings, compare them (the first is the baseline) and print the
 * table (text, or JSON), plus CSV/HTML files when given.  Returns the exit status.
 */
int vt_cli_compare_files(char *const *paths, size_t n, const char *names, bool json, const char *csv,
			 const char *html, int metric, const char *title);

#endif

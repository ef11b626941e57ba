/*
 * soak_cli.c — the progress line, the summary of a soak and the written
 * comparison (see soak_cli.h).
 */
#include "cli/soak_cli.h"

#include "cli/cli.h"
#include "analyze/profile_trend.h"
#include "render/profile_folded.h"
#include "render/profile_html.h"
#include "render/view.h"
#include "render/soak.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The progress line: rewritten in place on a terminal, one line a minute otherwise. */
void vt_cli_soak_progress(void *ctx, const struct vt_soak_progress *p)
{
	struct vt_cli_progress *pr = ctx;
	char el[32], left[32], size[32], tr[64] = "", win[32], bar[24] = "", count[32];
	bool tty = isatty(STDERR_FILENO);

	if (!tty && pr->lines && p->elapsed_s - pr->last_line < 60)
		return;
	pr->last_line = p->elapsed_s;
	pr->lines++;
	/* elapsed and left in one unit, the planned span's */
	vt_fmt_span_like(p->elapsed_s, p->planned_s > 0 ? p->planned_s : p->elapsed_s, el, sizeof(el));
	if (!isnan(p->trend) && p->trend_window_s > 0) {
		char d[32];

		snprintf(tr, sizeof(tr), " · trend %s/h over %s", vt_fmt_size_delta(p->trend * 3600, d, sizeof(d)),
			 vt_fmt_span(p->trend_window_s, win, sizeof(win)));
	}
	if (p->planned_s > 0) {
		int filled = (int)fmin(10, floor(10 * p->elapsed_s / p->planned_s));

		snprintf(bar, sizeof(bar), "[%.*s%.*s] ", filled, "##########", 10 - filled, "..........");
		snprintf(left, sizeof(left), ", %s left",
			 vt_fmt_span_like(fmax(0, p->planned_s - p->elapsed_s), p->planned_s, win, sizeof(win)));
	} else {
		left[0] = '\0';
	}
	fprintf(stderr, "%s%s%s%s elapsed%s · %s · ", tty ? "\r\033[K" : "", pr->prefix, bar, el, left,
		vt_fmt_count_of(p->samples, "sample", "samples", count, sizeof(count)));
	if (p->pid)
		fprintf(stderr, "pid %d · committed %s%s", (int)p->pid,
			isnan(p->committed) ? "n/a" : vt_fmt_size(p->committed, size, sizeof(size)), tr);
	else
		fprintf(stderr, "%s", p->state);
	if (p->restarts)
		fprintf(stderr, " · %d restart%s", p->restarts, p->restarts == 1 ? "" : "s");
	if (p->profiles || p->profiling)
		fprintf(stderr, " · %s%s", vt_fmt_count_of(p->profiles, "profile", "profiles", count, sizeof(count)),
			p->profiling ? " (profiling)" : "");
	if (p->allocs || p->allocs_armed)
		fprintf(stderr, " · %s%s", vt_fmt_count_of(p->allocs, "allocation profile", "allocation profiles",
							  count, sizeof(count)),
			p->allocs_armed ? " (probing)" : "");
	fputs(tty ? "" : "\n", stderr);
	pr->drawn = tty;
}

void vt_cli_soak_notice(void *ctx, const char *text)
{
	struct vt_cli_progress *pr = ctx;

	vt_cli_progress_end(pr);
	fprintf(stderr, "vitals: %s\n", text);
}

void vt_cli_progress_end(struct vt_cli_progress *pr)
{
	if (pr->drawn)
		fputs("\n", stderr);
	pr->drawn = false;
}

void vt_cli_soak_summary(FILE *out, const char *path, const struct vt_soak_result *res)
{
	char el[32], size[32], per[32], count[32], why[96];

	fprintf(out, "recorded %s over %s into %s (%s, %s per sample); %s\n",
		vt_fmt_count_of(res->samples, "sample", "samples", count, sizeof(count)),
		vt_fmt_span(res->elapsed_s, el, sizeof(el)), path,
		vt_fmt_size((double)res->file_bytes, size, sizeof(size)),
		res->samples ? vt_fmt_size((double)res->file_bytes / (double)res->samples, per, sizeof(per)) : "n/a",
		vt_soak_end_words(res, why, sizeof(why)));
	if (res->missing[0])
		fprintf(out, "not recorded (the target could not be read in full): %s\n", res->missing);
	if (res->profiles)
		fprintf(out, "%s stored beside the samples\n",
			vt_fmt_count_of(res->profiles, "profile", "profiles", count, sizeof(count)));
	if (res->allocs)
		fprintf(out, "%s stored beside the samples\n",
			vt_fmt_count_of(res->allocs, "allocation profile", "allocation profiles", count, sizeof(count)));
	if (res->restarts)
		fprintf(out, "the target restarted %d time%s; each restart is in the recording\n", res->restarts,
			res->restarts == 1 ? "" : "s");
	if (res->redacted == VT_REDACTED_SECRETS)
		fprintf(out, "values that look like secrets were redacted in the recording: %s\n",
			res->redacted_names[0] ? res->redacted_names : "(see its target)");
	else if (res->redacted == VT_REDACTED_ARGS)
		fprintf(out, "the command's arguments were not recorded (--redact-args)\n");
	if (res->elapsed_s > 0)
		fprintf(out, "vitals used %.2f s of CPU (%.2f%% of one core) and %s of memory\n", res->own_cpu_s,
			100.0 * res->own_cpu_s / res->elapsed_s,
			vt_fmt_size((double)res->own_maxrss, size, sizeof(size)));
	if (res->free_walks && res->elapsed_s > 0)
		fprintf(out, "free-memory walks (free_resident, trimmable): %u%s, %.1f ms of CPU each on average, "
			"%.1f ms the dearest: %.3f%% of one core over the soak (budget %g%%)\n", res->free_walks,
			res->free_failed ? " (some gave no figure: see the events)" : "",
			1e3 * res->free_cpu_s / res->free_walks, 1e3 * res->free_max_cpu_s,
			100.0 * res->free_cpu_s / res->elapsed_s, 100.0 * res->free_budget);
	if (res->free_off[0])
		fprintf(out, "free_resident and trimmable not recorded: %s\n", res->free_off);
	fprintf(out, "next: vitals analyze %s\n", path);
}

/*
 * Beside the charts, a differential flame graph of arm i's profiles against
 * the baseline's, each side's pooled (ab.html -> ab.flame.html,
 * ab.flame-2.html for the second arm, ...): frames red where their share
 * grew, blue where it shrank.  path gets the file written, "" when none.
 */
static int write_flame_diff(const char *cmd, const struct vt_compare_set *set, const struct vt_cli_compare_out *o,
			    size_t i, char *path, size_t cap)
{
	const struct vt_prof_diff *d = &o->profile_diffs[i];
	const char *a = set->cmp.arms[0].name ? set->cmp.arms[0].name : "the baseline";
	const char *b = i + 1 < set->cmp.narms && set->cmp.arms[i + 1].name ? set->cmp.arms[i + 1].name : "the other";
	char title[256], source[320], na[32], nb[32];
	struct vt_err err;
	int rc;
	struct stat sb;

	path[0] = '\0';
	if (!d->a_pooled || !d->b_pooled)
		return 0;
	if (stat(o->html, &sb) == 0 && !S_ISREG(sb.st_mode))
		return 0;   /* --html /dev/null: no file beside a device */
	size_t stem = strlen(o->html);
	if (stem > 5 && !strcmp(o->html + stem - 5, ".html"))
		stem -= 5;
	if (i == 0)
		snprintf(path, cap, "%.*s.flame.html", (int)stem, o->html);
	else
		snprintf(path, cap, "%.*s.flame-%zu.html", (int)stem, o->html, i + 1);
	FILE *f = vt_cli_open_out(cmd, path, o->force, &rc);
	if (!f) {
		path[0] = '\0';
		return rc;
	}
	snprintf(title, sizeof(title), "vitals compare: CPU profiles of %s against %s", b, a);
	snprintf(source, sizeof(source), "%s of %s pooled against %s of %s",
		 vt_fmt_count_of(d->b_profiles, "profile", "profiles", nb, sizeof(nb)), b,
		 vt_fmt_count_of(d->a_profiles, "profile", "profiles", na, sizeof(na)), a);
	struct vt_profile_html h = {
		.title = title,
		.source = source,
		.profile = d->b_pooled,
		.states = VT_PROF_STATES_CPU,
		.base = d->a_pooled,
		.base_states = VT_PROF_STATES_CPU,
		.label = b,
		.base_label = a,
	};
	vt_err_clear(&err);
	int wrc = vt_profile_html_write(f, &h, &err);
	bool made = fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode);
	rc = vt_cli_close_out(cmd, f, path, wrc);
	if (rc) {
		if (made)
			unlink(path);
		path[0] = '\0';
	}
	return rc;
}

int vt_cli_compare_write(const char *cmd, const struct vt_compare_set *set, const struct vt_cli_compare_out *o)
{
	struct vt_compare_report r = { &set->cmp, o->title, vt_cli_utf8(), o->profile_diffs, o->metric_label,
					o->limits, .alloc_diffs = o->alloc_diffs };
	bool csv_stdout = o->csv && !strcmp(o->csv, "-");
	FILE *f_csv = NULL, *f_html = NULL;
	int rc = 0, rc2;

	/* the files first: one that may not be written stops it before anything is printed */
	if (o->csv && !(f_csv = vt_cli_open_out(cmd, o->csv, o->force, &rc)))
		return rc;
	if (o->html && !(f_html = vt_cli_open_out(cmd, o->html, o->force, &rc))) {
		if (f_csv)
			vt_cli_close_out(cmd, f_csv, o->csv, 0);
		return rc;
	}
	if (o->json)
		rc = vt_cli_stdout_done(cmd, vt_view("json")->compare(stdout, &r));
	else if (!csv_stdout)
		rc = vt_cli_stdout_done(cmd, vt_view("text")->compare(stdout, &r));
	if (f_csv) {
		rc2 = vt_cli_close_out(cmd, f_csv, o->csv, rc ? 0 : vt_view("csv")->compare(f_csv, &r));
		rc = rc ? rc : rc2;
	}
	if (f_html) {
		/* the flame graphs first, so that the page links those written */
		char (*flames)[4096] = o->nprofile_diffs ? calloc(o->nprofile_diffs, sizeof(*flames)) : NULL;
		const char **links = o->nprofile_diffs ? calloc(o->nprofile_diffs, sizeof(*links)) : NULL;
		size_t i;

		if (o->nprofile_diffs && (!flames || !links)) {
			int nomem = vt_cli_nomem(cmd);

			rc = rc ? rc : nomem;
		}
		for (i = 0; rc == 0 && i < o->nprofile_diffs; i++)
			if ((rc = write_flame_diff(cmd, set, o, i, flames[i], sizeof(flames[i]))) == 0)
				links[i] = flames[i][0] ? flames[i] : NULL;
		r.flame_pages = links;
		rc2 = vt_cli_close_out(cmd, f_html, o->html, rc ? 0 : vt_view("html")->compare(f_html, &r));
		rc = rc ? rc : rc2;
		if (rc == 0 && !o->json) {
			printf("charts: %s\n", o->html);
			for (i = 0; i < o->nprofile_diffs; i++)
				if (links[i])
					printf("flame graph (difference of all profiles, linked from the charts): %s\n",
					       links[i]);
		}
		free(links);
		free(flames);
	}
	return rc;
}

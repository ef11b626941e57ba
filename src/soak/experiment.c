/*
 * experiment.c — running the arms of an experiment (see experiment.h).
 */
#include "soak/experiment.h"

#include "base/clock.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static bool is_assignment(const char *p)
{
	if (!isalpha((unsigned char)*p) && *p != '_')
		return false;
	while (isalnum((unsigned char)*p) || *p == '_')
		p++;
	return *p == '=';
}

static bool name_ok(const char *name, size_t len, size_t cap)
{
	size_t i;

	if (len == 0 || len >= cap)
		return false;
	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr("-_.+", name[i]))
			return false;   /* the name is also a file name */
	return true;
}

static void join_env(struct vt_experiment_arm *arm)
{
	size_t i, used = 0;

	arm->env_text[0] = '\0';
	for (i = 0; i < arm->nenv && used < sizeof(arm->env_text); i++)
		used += (size_t)snprintf(arm->env_text + used, sizeof(arm->env_text) - used, "%s%s", i ? " " : "",
					 arm->env[i]);
}

int vt_experiment_parse_arm(const char *spec, struct vt_experiment_arm *arm)
{
	const char *colon = strchr(spec, ':'), *p;
	size_t len = colon ? (size_t)(colon - spec) : strlen(spec);

	memset(arm, 0, sizeof(*arm));
	if (!name_ok(spec, len, sizeof(arm->name)))
		return -1;
	memcpy(arm->name, spec, len);
	p = colon ? colon + 1 : NULL;
	/* a ':' starts another KEY=VALUE only where one follows; else it is part of the value */
	while (p && *p) {
		const char *end;

		if (!is_assignment(p) || arm->nenv == VT_EXPERIMENT_MAX_ENV)
			goto bad;
		for (end = strchr(p, ':'); end && !is_assignment(end + 1); end = strchr(end + 1, ':'))
			;
		len = end ? (size_t)(end - p) : strlen(p);
		if (!(arm->env[arm->nenv] = strndup(p, len)))
			goto bad;
		arm->nenv++;
		p = end ? end + 1 : NULL;
	}
	join_env(arm);
	return 0;
bad:
	vt_experiment_arm_release(arm);
	return -1;
}

int vt_experiment_arm_set(struct vt_experiment_arm *arm, const char *name, const char *const *env,
			  const char *env_text)
{
	memset(arm, 0, sizeof(*arm));
	if (!name_ok(name, strlen(name), sizeof(arm->name)))
		return -1;
	snprintf(arm->name, sizeof(arm->name), "%s", name);
	for (; env && *env; env++) {
		if (arm->nenv == VT_EXPERIMENT_MAX_ENV || !(arm->env[arm->nenv] = strdup(*env))) {
			vt_experiment_arm_release(arm);
			return -1;
		}
		arm->nenv++;
	}
	if (env_text)
		snprintf(arm->env_text, sizeof(arm->env_text), "%s", env_text);
	else
		join_env(arm);
	return 0;
}

void vt_experiment_arm_release(struct vt_experiment_arm *arm)
{
	size_t i;

	for (i = 0; i < arm->nenv; i++) {
		free(arm->env[i]);
		arm->env[i] = NULL;
	}
	arm->nenv = 0;
}

void vt_experiment_result_release(struct vt_experiment_result *r)
{
	size_t i;

	for (i = 0; r->arms && i < r->narms; i++)
		free(r->arms[i].path);
	free(r->arms);
	memset(r, 0, sizeof(*r));
}

/* One arm while it runs: its command line, its soak's configuration and the soak. */
struct arm_run {
	const struct vt_experiment *ex;
	size_t index;
	char **argv;                   /* owned: the command with {arm} replaced; the strings too */
	size_t argc;
	char *log;                     /* owned: ARM.db.out */
	struct vt_soak_config cfg;
	struct vt_soak *soak;
	double next;
	bool running;
};

/* s with every "{arm}" replaced by name, or NULL when out of memory. */
static char *substitute(const char *s, const char *name)
{
	size_t len = strlen(s) + 1, nlen = strlen(name), i = 0;
	const char *p;
	char *out;

	for (p = s; (p = strstr(p, "{arm}")); p += 5)
		len += nlen;
	if (!(out = malloc(len)))
		return NULL;
	for (p = s; *p;) {
		if (!strncmp(p, "{arm}", 5)) {
			memcpy(out + i, name, nlen);
			i += nlen;
			p += 5;
		} else {
			out[i++] = *p++;
		}
	}
	out[i] = '\0';
	return out;
}

static void arm_free(struct arm_run *a)
{
	size_t i;

	for (i = 0; a->argv && i < a->argc; i++)
		free(a->argv[i]);
	free(a->argv);
	free(a->log);
	memset(a, 0, sizeof(*a));
}

static void forward_progress(void *ctx, const struct vt_soak_progress *p)
{
	struct arm_run *a = ctx;

	a->ex->progress(a->ex->ctx, a->index, p);
}

/* Everything arm i's soak needs; out->arms[i].path set.  0, or VT_E_NOMEM. */
static int arm_prepare(const struct vt_experiment *ex, size_t i, struct arm_run *a,
		       struct vt_experiment_result *out, struct vt_err *err)
{
	const struct vt_experiment_arm *arm = &ex->arms[i];
	struct vt_soak_config *cfg = &a->cfg;
	char *path;
	size_t k;

	memset(a, 0, sizeof(*a));
	a->ex = ex;
	a->index = i;
	while (ex->argv[a->argc])
		a->argc++;
	a->argv = calloc(a->argc + 1, sizeof(*a->argv));
	for (k = 0; a->argv && k < a->argc; k++)
		if (!(a->argv[k] = substitute(ex->argv[k], arm->name)))
			break;
	if (!a->argv || k < a->argc || asprintf(&path, "%s/%s.db", ex->dir, arm->name) < 0) {
		arm_free(a);
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
	}
	if (asprintf(&a->log, "%s/%s.db.out", ex->dir, arm->name) < 0) {
		a->log = NULL;       /* asprintf leaves it undefined on failure */
		free(path);
		arm_free(a);
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
	}
	out->arms[i].path = path;
	vt_soak_config_default(cfg);
	cfg->target.kind = VT_SOAK_COMMAND;
	cfg->target.argv = a->argv;
	cfg->target.env_add = (char *const *)arm->env;
	cfg->target.output = a->log;
	cfg->out_path = out->arms[i].path;
	cfg->overwrite = ex->overwrite;
	cfg->keep_command = ex->keep_commands;
	cfg->every_s = ex->every_s;
	cfg->for_s = ex->for_s;
	cfg->heap = ex->heap;
	cfg->trim_every_s = arm->trim_every_s;
	if (ex->heap_every_s > 0)
		cfg->heap_every_s = ex->heap_every_s;
	cfg->smaps_every_s = ex->smaps_every_s > 0 ? ex->smaps_every_s : ex->for_s / 4;
	cfg->arm = arm->name;
	cfg->env_text = arm->env_text;
	cfg->stop = ex->stop;
	if (ex->progress) {
		cfg->progress = forward_progress;
		cfg->progress_ctx = a;
	}
	return VT_OK;
}

/* Start arm i's soak; its failure is recorded in out (not an error of the run). */
static void arm_start(const struct vt_procfs *pfs, struct arm_run *a, struct vt_experiment_result *out)
{
	struct vt_experiment_arm_result *r = &out->arms[a->index];

	if (a->ex->arm_started)
		a->ex->arm_started(a->ex->ctx, a->index, r->path);
	r->rc = vt_soak_start(pfs, &a->cfg, &a->soak, &r->err);
	a->running = r->rc == VT_OK;
	a->next = vt_mono_s();
}

static void arm_end(struct arm_run *a, struct vt_experiment_result *out)
{
	struct vt_experiment_arm_result *r = &out->arms[a->index];
	int rc = vt_soak_finish(a->soak, &r->soak, &r->err);

	a->soak = NULL;
	a->running = false;
	if (r->rc == VT_OK)
		r->rc = rc;
	r->recorded = r->soak.samples > 0;
	if (a->ex->arm_ended)
		a->ex->arm_ended(a->ex->ctx, a->index, &r->soak);
}

/* Does dir hold nothing?  (One that cannot be listed: making the arms' files there says why.) */
static bool dir_is_empty(const char *dir)
{
	struct dirent *de;
	bool empty = true;
	DIR *d = opendir(dir);

	if (!d)
		return true;
	while (empty && (de = readdir(d)))
		empty = !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..");
	closedir(d);
	return empty;
}

/* Step every running arm that is due; false when none runs any more. */
static bool step_due(struct arm_run *runs, size_t n, struct vt_experiment_result *out)
{
	double now = vt_mono_s();
	bool any = false;
	size_t i;

	for (i = 0; i < n; i++) {
		struct arm_run *a = &runs[i];
		bool done = false;

		if (!a->running)
			continue;
		if (a->next <= now || (a->ex->stop && *a->ex->stop)) {
			int rc = vt_soak_step(a->soak, &a->next, &done, &out->arms[i].err);

			if (rc != VT_OK)
				out->arms[i].rc = rc;
			if (done) {
				arm_end(a, out);
				continue;
			}
		}
		any = true;
	}
	return any;
}

/* Sleep until the earliest arm is due, or the stop flag. */
static void sleep_to_next(struct arm_run *runs, size_t n, volatile sig_atomic_t *stop)
{
	double next = INFINITY;
	size_t i;

	for (i = 0; i < n; i++)
		if (runs[i].running)
			next = fmin(next, runs[i].next);
	if (isfinite(next) && next > vt_mono_s())
		vt_sleep_until_ns((uint64_t)(next * 1e9), stop);
}

int vt_experiment_run(const struct vt_procfs *pfs, const struct vt_experiment *ex,
		      struct vt_experiment_result *out, struct vt_err *err)
{
	struct arm_run *runs;
	size_t i, first_error = ex->narms;
	int rc = VT_OK;

	memset(out, 0, sizeof(*out));
	out->arms = calloc(ex->narms ? ex->narms : 1, sizeof(*out->arms));
	runs = calloc(ex->narms ? ex->narms : 1, sizeof(*runs));
	if (!out->arms || !runs) {
		free(runs);
		free(out->arms);
		out->arms = NULL;
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
	}
	out->narms = ex->narms;
	if (mkdir(ex->dir, 0755) != 0 && errno != EEXIST) {
		free(runs);
		return vt_err_set(err, VT_E_IO, errno, "cannot create '%s': %s", ex->dir, strerror(errno));
	}
	{
		/* Recordings are never made through a link (vt_out_create): the folder is not one either. */
		struct stat st;

		if (lstat(ex->dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
			free(runs);
			vt_err_set(err, VT_E_USAGE, 0, "'%s' is %s, not a folder", ex->dir,
				   S_ISLNK(st.st_mode) ? "a symbolic link" : "a file");
			vt_err_hint(err, "give the folder itself with -o (links are refused, as for every "
				    "file vitals writes)");
			return VT_E_USAGE;
		}
	}
	if (!ex->overwrite && !dir_is_empty(ex->dir)) {
		free(runs);
		vt_err_set(err, VT_E_USAGE, ENOTEMPTY, "'%s' is not empty: an earlier experiment's recordings would be "
			   "overwritten", ex->dir);
		vt_err_hint(err, "give another -o, or --force to replace the arms' files in it");
		return VT_E_USAGE;
	}
	for (i = 0; i < ex->narms && rc == VT_OK; i++)
		rc = arm_prepare(ex, i, &runs[i], out, err);
	if (rc != VT_OK) {
		for (i = 0; i < ex->narms; i++)
			arm_free(&runs[i]);
		free(runs);
		return rc;
	}
	if (ex->side_by_side) {
		for (i = 0; i < ex->narms; i++)
			arm_start(pfs, &runs[i], out);
		while (step_due(runs, ex->narms, out))
			sleep_to_next(runs, ex->narms, ex->stop);
	} else {
		for (i = 0; i < ex->narms && !(ex->stop && *ex->stop); i++) {
			arm_start(pfs, &runs[i], out);
			while (step_due(runs, ex->narms, out))
				sleep_to_next(runs, ex->narms, ex->stop);
			/* an arm that failed, or recorded and then failed, ends the experiment */
			if (out->arms[i].rc != VT_OK)
				break;
		}
	}
	for (i = 0; i < ex->narms; i++) {
		if (out->arms[i].rc != VT_OK && first_error == ex->narms)
			first_error = i;
		arm_free(&runs[i]);
	}
	free(runs);
	/* the recorded arms, in order, up to the first without a recording */
	while (out->recorded < out->narms && out->arms[out->recorded].recorded)
		out->recorded++;
	out->stopped = ex->stop && *ex->stop;
	if (out->recorded == 0 && first_error < ex->narms) {
		if (err)
			*err = out->arms[first_error].err;
		return out->arms[first_error].rc;
	}
	return VT_OK;
}

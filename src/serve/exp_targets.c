/*
 * exp_targets.c — which processes a target is, found again when one is
 * gone (see exporter.h):
 *   pid      that process; once it exits, the oldest process started after
 *            it with the same command line (soak/follow.h), so a sibling
 *            running the same command is not taken for its restart;
 *   name     every process whose comm (15 bytes) or argv[0] basename is the
 *            name, vitals itself excepted: a parent and its same-named
 *            workers all, as sample/target.h resolves a name for every
 *            command;
 *   pidfile  the pid in that file, read at every scrape (cheap) and
 *            followed when it changes;
 *   cgroup   every process in cgroup.procs of that v2 directory.
 * A /proc scan (name, pid follow) or a cgroup.procs read happens at most
 * every EXP_RESOLVE_EVERY_S, and at once when a known process vanished.
 * Kernel threads and zombies are never a target's processes.
 */
#include "serve/exp_internal.h"

#include "sample/target.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct pidset {
	pid_t *v;     /* owned */
	size_t n, cap;
};

static int pidset_add(struct pidset *s, pid_t pid, struct vt_err *err)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		pid_t *grown = realloc(s->v, cap * sizeof(*grown));

		if (!grown)
			return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
		s->v = grown;
		s->cap = cap;
	}
	s->v[s->n++] = pid;
	return VT_OK;
}

static bool pidset_has(const struct pidset *s, pid_t pid)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->v[i] == pid)
			return true;
	return false;
}

/*
 * Every live, non-kernel process named name, resolved as every command
 * resolves a name (sample/target.h): a parent and its same-named workers
 * are all of them.  *skipped: why a match was left out.
 */
static int scan_name(struct vt_exporter *x, const char *name, struct pidset *out, const char **skipped,
		     struct vt_err *err)
{
	struct vt_name_set set;
	size_t i;
	int rc = vt_target_name_find(x->pfs, name, x->self, 0, EXP_MAX_PROCS, &set, err);

	if (set.skipped)
		*skipped = set.skipped;
	for (i = 0; rc == VT_OK && i < set.n; i++)
		rc = pidset_add(out, set.procs[i].pid, err);
	vt_name_set_release(&set);
	return rc;
}

/* cgroup.procs of the target's directory (relative to the sys root). */
static int scan_cgroup(struct vt_exporter *x, const char *dir, struct pidset *out, struct vt_err *err)
{
	char path[700];
	const char *p, *end;
	int rc;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	if ((rc = vt_sysfs_read(x->pfs, path, &x->buf, err)) != VT_OK)
		return rc;
	for (p = x->buf.data, end = p + x->buf.len; p < end && out->n < EXP_MAX_PROCS;) {
		char *next;
		long v = strtol(p, &next, 10);

		if (next == p)
			break;
		if (v > 0 && (pid_t)v != 0 && (rc = pidset_add(out, (pid_t)v, err)) != VT_OK)
			return rc;
		p = next;
		while (p < end && isspace((unsigned char)*p))
			p++;
	}
	return VT_OK;
}

/*
 * The pid in a pidfile: a regular file (a symlink is followed: services
 * link theirs) holding a decimal pid and optional blanks, nothing else.
 * Opened non-blocking so that a FIFO put in its place cannot hang the
 * scrape.  0 with *why set when there is none.
 */
static pid_t pidfile_read(const char *path, const char **why)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	char text[32];
	struct stat sb;
	ssize_t n;
	long v;
	char *end;

	if (fd < 0) {
		*why = errno == EACCES || errno == EPERM ? "permission" : "not_found";
		return 0;
	}
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || (n = read(fd, text, sizeof(text) - 1)) <= 0) {
		close(fd);
		*why = "bad_pidfile";
		return 0;
	}
	close(fd);
	text[n] = '\0';
	errno = 0;
	v = strtol(text, &end, 10);
	while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r')
		end++;
	if (errno || end == text || *end || !isdigit((unsigned char)text[strspn(text, " \t")]) || v <= 0 ||
	    v > 0x3fffffff) {
		*why = "bad_pidfile";   /* garbage, or half-written: looked at again next scrape */
		return 0;
	}
	return (pid_t)v;
}

const char *exp_reason(int code)
{
	switch (code) {
	case VT_E_PERM: return "permission";
	case VT_E_UNSUPPORTED: return "unsupported";
	case VT_E_BUSY: return "busy";
	case VT_E_KTHREAD: return "kernel_thread";
	case VT_E_ZOMBIE: return "zombie";
	case VT_E_USAGE: return "not_a_process";
	case VT_E_NOPROC: case VT_E_GONE: return "gone";
	default: return "error";
	}
}

/* Take pid into t (not yet one of its processes).  VT_E_NOMEM only; else *why. */
static int adopt(struct vt_exporter *x, struct exp_target *t, pid_t pid, const char **why, struct vt_err *err)
{
	struct exp_proc *p, **grown;
	struct vt_err e;
	int rc;

	if ((rc = exp_proc_open(x, pid, &p, &e)) != VT_OK) {
		if (rc == VT_E_NOMEM)
			return vt_err_set(err, rc, ENOMEM, "%s", e.msg);
		*why = exp_reason(rc);
		return VT_OK;
	}
	if (!(grown = realloc(t->procs, (t->nprocs + 1) * sizeof(*grown)))) {
		exp_proc_close(p);
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
	}
	t->procs = grown;
	t->procs[t->nprocs++] = p;
	if (t->lost_pending > 0) {
		t->lost_pending--;
		t->restarts++;       /* a process left, another one came */
	}
	if (t->kind == VT_EXP_PID) {
		/* a later restart is a process started after this one */
		t->key.min_start_ticks = p->start_ticks + 1;
		if (!t->key.cmdline[0])
			vt_follow_cmdline(x->pfs, pid, t->key.cmdline, sizeof(t->key.cmdline));
	}
	return VT_OK;
}

void exp_target_drop(struct exp_target *t, size_t i, bool lost)
{
	exp_threads_retire(t, t->procs[i]);
	exp_proc_close(t->procs[i]);
	memmove(&t->procs[i], &t->procs[i + 1], (t->nprocs - i - 1) * sizeof(t->procs[0]));
	t->nprocs--;
	if (lost) {
		t->lost = true;
		t->lost_pending++;
	}
}

static bool has_pid(const struct exp_target *t, pid_t pid)
{
	size_t i;

	for (i = 0; i < t->nprocs; i++)
		if (t->procs[i]->pid == pid)
			return true;
	return false;
}

/* Make t's processes the set s: drop the others, adopt the new ones. */
static int take_set(struct vt_exporter *x, struct exp_target *t, const struct pidset *s, const char **why,
		    struct vt_err *err)
{
	size_t i;
	int rc;

	for (i = t->nprocs; i-- > 0;)
		if (!pidset_has(s, t->procs[i]->pid))
			exp_target_drop(t, i, true);
	for (i = 0; i < s->n; i++)
		if (!has_pid(t, s->v[i]) && (rc = adopt(x, t, s->v[i], why, err)) != VT_OK)
			return rc;
	return VT_OK;
}

int exp_target_resolve(struct vt_exporter *x, struct exp_target *t, double now, bool force,
		       struct vt_err *err)
{
	struct pidset s = { 0 };
	const char *why = NULL;
	pid_t pid = 0;
	int rc = VT_OK;

	switch (t->kind) {
	case VT_EXP_PIDFILE:
		pid = pidfile_read(t->arg, &why);
		if (pid && t->nprocs == 1 && t->procs[0]->pid == pid)
			break;
		if (pid && (rc = pidset_add(&s, pid, err)) != VT_OK)
			break;
		rc = take_set(x, t, &s, &why, err);
		break;
	case VT_EXP_PID:
		if (t->nprocs > 0 || (!force && !t->lost && now < t->next_resolve))
			break;
		t->next_resolve = now + EXP_RESOLVE_EVERY_S;
		why = "gone";
		if (!t->key.cmdline[0])
			break;             /* its command line was never read: nothing to follow */
		if ((rc = vt_follow_find(x->pfs, &t->key, false, &pid, NULL, err)) == VT_OK && pid)
			rc = adopt(x, t, pid, &why, err);
		break;
	case VT_EXP_NAME:
	case VT_EXP_CGROUP:
		if (!force && !t->lost && now < t->next_resolve)
			break;
		t->next_resolve = now + EXP_RESOLVE_EVERY_S;
		rc = t->kind == VT_EXP_NAME ? scan_name(x, t->arg, &s, &why, err) : scan_cgroup(x, t->arg, &s, err);
		if (rc == VT_OK)
			rc = take_set(x, t, &s, &why, err);
		else if (rc != VT_E_NOMEM) {
			why = t->kind == VT_EXP_CGROUP ? "cgroup_gone" : "error";
			rc = VT_OK;
		}
		break;
	}
	t->lost = false;
	free(s.v);
	if (t->nprocs == 0)
		t->reason = why ? why : "not_found";
	return rc;
}

/* The cgroup's directory relative to the sys root: unified mount, or the hybrid one. */
static int cgroup_dir(struct vt_exporter *x, const char *path, char **out, struct vt_err *err)
{
	static const char *const mounts[] = { "fs/cgroup", "fs/cgroup/unified" };
	char dir[600], file[700];
	size_t i;

	while (*path == '/')
		path++;
	if (strstr(path, "..") || strlen(path) > 500)
		return vt_err_set(err, VT_E_USAGE, 0, "bad cgroup path '%s'", path);
	for (i = 0; i < 2; i++) {
		struct stat sb;

		snprintf(dir, sizeof(dir), "%s%s%s", mounts[i], *path ? "/" : "", path);
		snprintf(file, sizeof(file), "%s/cgroup.procs", dir);
		if (x->pfs->sys_fd >= 0 && fstatat(x->pfs->sys_fd, file, &sb, 0) == 0) {
			if (!(*out = strdup(dir)))
				return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
			return VT_OK;
		}
	}
	vt_err_set(err, VT_E_USAGE, 0, "no cgroup '%s' under %s/fs/cgroup", path, x->pfs->sys_root);
	vt_err_hint(err, "give the path as in /proc/PID/cgroup after '0::', e.g. /system.slice/nginx.service");
	return VT_E_USAGE;
}

static const char *basename_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

int exp_target_init(struct vt_exporter *x, const struct vt_exp_target *spec, struct exp_target *t,
		    struct vt_err *err)
{
	const char *why = NULL;
	int rc;

	memset(t, 0, sizeof(*t));
	t->kind = spec->kind;
	t->key.exclude = x->self;
	switch (spec->kind) {
	case VT_EXP_PID:
		if (spec->pid <= 0)
			return vt_err_set(err, VT_E_USAGE, 0, "bad pid %d", (int)spec->pid);
		break;
	case VT_EXP_NAME:
	case VT_EXP_PIDFILE:
		if (!spec->arg || !*spec->arg)
			return vt_err_set(err, VT_E_USAGE, 0, "a %s target needs a %s",
					  spec->kind == VT_EXP_NAME ? "name" : "pidfile",
					  spec->kind == VT_EXP_NAME ? "name" : "path");
		if (!(t->arg = strdup(spec->arg)))
			return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
		break;
	case VT_EXP_CGROUP:
		if (!spec->arg)
			return vt_err_set(err, VT_E_USAGE, 0, "a cgroup target needs a path");
		if ((rc = cgroup_dir(x, spec->arg, &t->arg, err)) != VT_OK)
			return rc;
		break;
	default:
		return vt_err_set(err, VT_E_USAGE, 0, "unknown target kind %d", (int)spec->kind);
	}
	if (spec->kind == VT_EXP_PID) {
		struct exp_proc *p;

		/* the initial pid must be there and be a process vitals can read */
		if ((rc = exp_proc_open(x, spec->pid, &p, err)) != VT_OK)
			return rc;
		exp_proc_close(p);
		if ((rc = adopt(x, t, spec->pid, &why, err)) != VT_OK)
			return rc;
		if (t->nprocs == 0)
			return vt_err_set(err, VT_E_NOPROC, 0, "process %d exited", (int)spec->pid);
	} else if ((rc = exp_target_resolve(x, t, 0, true, err)) != VT_OK) {
		exp_target_release(t);
		return rc;
	}
	if (spec->label && *spec->label)
		snprintf(t->label, sizeof(t->label), "%s", spec->label);
	else if (spec->kind == VT_EXP_PID)
		snprintf(t->label, sizeof(t->label), "%s", t->procs[0]->comm);
	else if (spec->kind == VT_EXP_PIDFILE)
		snprintf(t->label, sizeof(t->label), "%s", basename_of(spec->arg));
	else
		snprintf(t->label, sizeof(t->label), "%s", spec->arg);
	return VT_OK;
}

void exp_target_release(struct exp_target *t)
{
	size_t i;

	for (i = 0; i < t->nprocs; i++)
		exp_proc_close(t->procs[i]);
	free(t->procs);
	free(t->arg);
	memset(t, 0, sizeof(*t));
}

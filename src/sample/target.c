/*
 * target.c — the checks before inspecting a process (see target.h).
 */
#include "sample/target.h"
#include "proc/access.h"
#include "proc/procfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int check_target(const struct vt_proc_stat *st, struct vt_err *err)
{
	if (st->flags & VT_PF_KTHREAD) {
		vt_err_set(err, VT_E_KTHREAD, 0, "%d (%s) is a kernel thread: it has no user memory "
			   "or allocator to inspect", st->pid, st->comm);
		vt_err_hint(err, "pick a user-space process (ps -e --ppid 2 -N lists them)");
		return VT_E_KTHREAD;
	}
	if (st->state == 'Z' || st->state == 'X') {
		vt_err_set(err, VT_E_ZOMBIE, 0, "%d (%s) is a zombie: it has exited and holds no "
			   "memory; its parent %d has not reaped it yet", st->pid, st->comm, st->ppid);
		vt_err_hint(err, "look at the parent process, or at the restarted service's new pid");
		return VT_E_ZOMBIE;
	}
	return VT_OK;
}

int vt_target_check(int dirfd, pid_t pid, struct vt_buf *buf, struct vt_proc_stat *st,
		    struct vt_proc_status *status, struct vt_err *err)
{
	int rc = vt_read_at(dirfd, "stat", buf, err);

	if (rc == VT_E_GONE)
		return vt_err_set(err, VT_E_NOPROC, err ? err->sys_errno : 0, "no process %d",
				  (int)pid);
	if (rc || (rc = vt_proc_stat_parse(buf->data, buf->len, st, err)))
		return rc;
	if ((rc = check_target(st, err)))
		return rc;
	if ((rc = vt_read_at(dirfd, "status", buf, err)) ||
	    (rc = vt_proc_status_parse(buf->data, buf->len, status, err)))
		return rc;
	if (status->tgid > 0 && status->tgid != pid) {
		vt_err_set(err, VT_E_USAGE, 0, "%d is a thread of process %lld, not a process",
			   (int)pid, (long long)status->tgid);
		vt_err_hint(err, "give the process id, %lld", (long long)status->tgid);
		return VT_E_USAGE;
	}
	return VT_OK;
}

bool vt_target_exited(int dirfd, pid_t pid, struct vt_buf *buf)
{
	struct vt_proc_stat st;
	char main_thread[40];
	int rc;

	snprintf(main_thread, sizeof(main_thread), "task/%d/stat", (int)pid);
	rc = vt_read_at(dirfd, main_thread, buf, NULL);
	if (rc == VT_E_NOTFOUND)     /* a recorded tree without task/ */
		rc = vt_read_at(dirfd, "stat", buf, NULL);

	/* stat needs no permission: only a process that is gone fails to give it (ESRCH) */
	if (rc == VT_E_GONE)
		return true;
	if (rc != VT_OK || vt_proc_stat_parse(buf->data, buf->len, &st, NULL) != VT_OK)
		return false;
	return st.state == 'Z' || st.state == 'X' || (st.flags & VT_PF_EXITING);
}

int vt_target_allocator(const struct vt_procfs *pfs, int dirfd, pid_t pid, long uid, struct vt_buf *buf,
			struct vt_region_list *maps, struct vt_alloc_info *alloc, struct vt_err *err)
{
	int rc = vt_read_at(dirfd, "maps", buf, err);
	char *env = NULL;
	size_t env_len = 0;

	if (rc == VT_E_PERM) {
		char reason[VT_ERR_MSG_MAX], hint[VT_ERR_MSG_MAX];

		vt_access_explain(pfs, "maps", uid, dirfd, reason, sizeof(reason), hint, sizeof(hint));
		vt_err_set(err, VT_E_PERM, 0, "%s", reason);
		vt_err_hint(err, "%s", hint);
		return VT_E_PERM;
	}
	if (rc || (rc = vt_maps_parse(buf->data, buf->len, maps, err)))
		return rc;
	if (vt_read_at(dirfd, "environ", buf, NULL) == VT_OK && (env = malloc(buf->len + 1))) {
		memcpy(env, buf->data, buf->len + 1);
		env_len = buf->len;
	}
	rc = vt_alloc_detect(pfs, dirfd, pid, maps, env, env_len, alloc, err);
	free(env);
	return rc;
}

/* ---- which processes a name is ---- */

static int name_add(struct vt_name_set *set, size_t *cap, const struct vt_name_proc *p, struct vt_err *err)
{
	if (set->n == *cap) {
		size_t grown_cap = *cap ? *cap * 2 : 16;
		struct vt_name_proc *grown = realloc(set->procs, grown_cap * sizeof(*grown));

		if (!grown)
			return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
		set->procs = grown;
		*cap = grown_cap;
	}
	set->procs[set->n++] = *p;
	return VT_OK;
}

static const struct vt_name_proc *name_by_pid(const struct vt_name_set *set, pid_t pid)
{
	size_t i;

	for (i = 0; i < set->n; i++)
		if (set->procs[i].pid == pid)
			return &set->procs[i];
	return NULL;
}

/* Tree by tree, the oldest root's first; within a tree the root, then by pid. */
static int name_order(const void *a, const void *b)
{
	const struct vt_name_proc *x = a, *y = b;

	if (x->root_start_ticks != y->root_start_ticks)
		return x->root_start_ticks < y->root_start_ticks ? -1 : 1;
	if (x->root != y->root)
		return x->root < y->root ? -1 : 1;
	if ((x->pid == x->root) != (y->pid == y->root))
		return x->pid == x->root ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Each match's root (parent links among the matches), its children, and the trees. */
static void name_link(struct vt_name_set *set)
{
	size_t i, j, depth;

	for (i = 0; i < set->n; i++) {
		const struct vt_name_proc *up = &set->procs[i], *parent;

		/* bounded: a torn /proc read must not make a loop of it */
		for (depth = 0; depth < set->n && (parent = name_by_pid(set, up->ppid)); depth++)
			up = parent;
		set->procs[i].root = up->pid;
		set->procs[i].root_start_ticks = up->start_ticks;
		set->procs[i].children = 0;
		for (j = 0; j < set->n; j++)
			set->procs[i].children += set->procs[j].ppid == set->procs[i].pid;
	}
	for (i = 0, set->trees = 0; i < set->n; i++)
		set->trees += set->procs[i].pid == set->procs[i].root;
	if (set->n > 1)
		qsort(set->procs, set->n, sizeof(*set->procs), name_order);
}

int vt_target_name_find(const struct vt_procfs *pfs, const char *name, pid_t exclude, uint64_t min_start_ticks,
			size_t max, struct vt_name_set *set, struct vt_err *err)
{
	int fd = openat(pfs->proc_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	size_t cap = 0;
	struct dirent *de;
	DIR *dir;
	int rc = VT_OK;

	memset(set, 0, sizeof(*set));
	if (fd < 0 || !(dir = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return vt_err_set(err, VT_E_IO, errno, "cannot list %s: %s", pfs->proc_root, strerror(errno));
	}
	while ((de = readdir(dir)) && rc == VT_OK && (max == 0 || set->n < max)) {
		struct vt_name_proc p = { 0 };
		struct vt_proc_stat st;
		char text[1024], *end;
		size_t len;
		long v = strtol(de->d_name, &end, 10);

		if (*end || v <= 0 || (pid_t)v == exclude ||
		    !vt_procfs_read_small(pfs, (pid_t)v, "stat", text, sizeof(text), &len) ||
		    vt_proc_stat_parse(text, len, &st, NULL) != VT_OK)
			continue;
		if (st.flags & VT_PF_KTHREAD) {
			if (strncmp(st.comm, name, 15) == 0)
				set->skipped = "kernel_thread";
			continue;
		}
		if (st.start_ticks < min_start_ticks || !vt_procfs_name_matches(pfs, (pid_t)v, st.comm, name))
			continue;
		if (st.state == 'Z' || st.state == 'X') {
			set->skipped = "zombie";
			continue;
		}
		p.pid = (pid_t)v;
		p.ppid = (pid_t)st.ppid;
		p.start_ticks = st.start_ticks;
		p.rss_bytes = st.rss_pages * (uint64_t)pfs->page_size;
		if (vt_procfs_read_small(pfs, p.pid, "cmdline", text, sizeof(p.cmdline), &len)) {
			size_t i;

			while (len > 0 && text[len - 1] == '\0')
				len--;
			for (i = 0; i < len; i++)
				p.cmdline[i] = text[i] ? text[i] : ' ';
			p.cmdline[len] = '\0';
		}
		rc = name_add(set, &cap, &p, err);
	}
	closedir(dir);
	if (rc == VT_OK)
		name_link(set);
	return rc;
}

void vt_name_set_release(struct vt_name_set *set)
{
	free(set->procs);
	memset(set, 0, sizeof(*set));
}

const char *vt_name_proc_role(const struct vt_name_proc *p, char *buf, size_t cap)
{
	if (p->pid != p->root)
		snprintf(buf, cap, "child of %d", (int)p->ppid);
	else
		snprintf(buf, cap, "%s", p->children ? "parent" : "alone");
	return buf;
}

int vt_target_name_one(const struct vt_name_set *set, const char *name, pid_t *pid, struct vt_err *err)
{
	char list[VT_ERR_MSG_MAX], role[32];
	size_t i, len = 0;

	*pid = set->n == 1 ? set->procs[0].pid : 0;
	if (set->n <= 1)
		return VT_OK;
	for (i = 0; i < set->n && len + 48 < sizeof(list); i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%d (%s)", i ? ", " : "",
					(int)set->procs[i].pid, vt_name_proc_role(&set->procs[i], role, sizeof(role)));
	if (i < set->n)
		snprintf(list + len, sizeof(list) - len, ", ...");
	if (set->trees == 1)
		vt_err_set(err, VT_E_USAGE, 0, "'%s' is %zu processes, a parent and its same-named children: %s",
			   name, set->n, list);
	else
		vt_err_set(err, VT_E_USAGE, 0, "'%s' is %zu processes, %zu of them unrelated: %s", name, set->n,
			   set->trees, list);
	vt_err_hint(err, "give the pid of the one you mean");
	return VT_E_USAGE;
}

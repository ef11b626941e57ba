/*
 * target.c — the checks before inspecting a process (see target.h).
 */
#include "sample/target.h"
#include "proc/access.h"
#include "proc/procfs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

bool vt_target_exited(int dirfd, struct vt_buf *buf)
{
	struct vt_proc_stat st;
	int rc = vt_read_at(dirfd, "stat", buf, NULL);

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

/*
 * access.c — which ptrace access rule refused a read.
 */
#include "proc/access.h"
#include "base/scan.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CAP_SYS_PTRACE_BIT 19

static bool have_cap_sys_ptrace(const struct vt_procfs *pfs)
{
	struct vt_buf buf = VT_BUF_INIT(64 * 1024);
	const char *p;
	uint64_t caps = 0;
	bool yes = false;

	if (vt_procfs_read(pfs, "self/status", &buf, NULL) == VT_OK &&
	    (p = strstr(buf.data, "CapEff:")) != NULL) {
		struct vt_scan s = vt_scan_init(p + 7, strlen(p + 7));
		vt_scan_blanks(&s);
		if (vt_scan_hex(&s, &caps))
			yes = (caps >> CAP_SYS_PTRACE_BIT) & 1;
	}
	vt_buf_release(&buf);
	return yes;
}

static int yama_scope(const struct vt_procfs *pfs)
{
	struct vt_buf buf = VT_BUF_INIT(64);
	struct vt_scan s;
	uint64_t v;
	int scope = -1;

	if (vt_procfs_read(pfs, "sys/kernel/yama/ptrace_scope", &buf, NULL) == VT_OK) {
		s = vt_scan_init(buf.data, buf.len);
		if (vt_scan_u64(&s, &v) && v <= 3)
			scope = (int)v;
	}
	vt_buf_release(&buf);
	return scope;
}

void vt_access_explain(const struct vt_procfs *pfs, const char *what, long target_uid,
		       int pid_fd, char *reason, size_t reason_cap, char *hint, size_t hint_cap)
{
	long me = (long)geteuid();
	int scope = yama_scope(pfs);
	bool cap = have_cap_sys_ptrace(pfs);
	struct stat st;

	if (target_uid >= 0 && target_uid != me && !cap) {
		snprintf(reason, reason_cap, "%s: the process belongs to uid %ld and vitals runs as uid %ld",
			 what, target_uid, me);
		snprintf(hint, hint_cap, "run vitals as uid %ld or as root (CAP_SYS_PTRACE)", target_uid);
		return;
	}
	if (scope >= 2 && !cap) {
		snprintf(reason, reason_cap, "%s: kernel.yama.ptrace_scope is %d", what, scope);
		snprintf(hint, hint_cap, scope == 3 ? "ptrace is disabled on this host (scope 3); "
			 "preload the vitals agent instead" : "run as root or grant CAP_SYS_PTRACE");
		return;
	}
	if (scope == 1 && !cap) {
		snprintf(reason, reason_cap, "%s: kernel.yama.ptrace_scope is 1 (only descendants)", what);
		snprintf(hint, hint_cap, "run as root, grant CAP_SYS_PTRACE, or set "
			 "kernel.yama.ptrace_scope=0");
		return;
	}
	/* A non-dumpable process (setuid, prctl PR_SET_DUMPABLE 0) has root-owned files. */
	if (fstatat(pid_fd, "environ", &st, 0) == 0 && st.st_uid == 0 && target_uid > 0) {
		snprintf(reason, reason_cap, "%s: the process is not dumpable (setuid or "
			 "PR_SET_DUMPABLE 0), so its files belong to root", what);
		snprintf(hint, hint_cap, "run as root (CAP_SYS_PTRACE)");
		return;
	}
	snprintf(reason, reason_cap, "%s: access denied%s", what,
		 cap ? " although vitals has CAP_SYS_PTRACE (an LSM such as AppArmor or SELinux?)" : "");
	snprintf(hint, hint_cap, "run as root or as the process's user");
}

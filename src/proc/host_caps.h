/*
 * host_caps.h — the settings of this host and of vitals itself that decide
 * what vitals may do to other processes: kernel.yama.ptrace_scope,
 * kernel.perf_event_paranoid, kernel.kptr_restrict, vitals' own effective
 * capabilities (CapEff), seccomp mode and no_new_privs (/proc/self/status),
 * the cgroup version, whether PSI is there, hidepid on /proc, the kernel.
 *
 * Everything is read through struct vt_procfs, so a recorded tree
 * (tests/fixtures/caps/...) stands for a host; the parsers are pure.
 * Nothing here judges: sample/caps.c says what each setting allows.
 */
#ifndef VT_PROC_HOST_CAPS_H
#define VT_PROC_HOST_CAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proc/procfs.h"

/* Capability bit numbers (linux/capability.h) that vitals cares about. */
#define VT_CAP_DAC_READ_SEARCH 2
#define VT_CAP_IPC_LOCK 14
#define VT_CAP_SYS_PTRACE 19
#define VT_CAP_SYS_ADMIN 21
#define VT_CAP_SYSLOG 34
#define VT_CAP_PERFMON 38
#define VT_CAP_LAST 40          /* CAP_CHECKPOINT_RESTORE, the highest in Linux 6.x */

#define VT_SYSCTL_ABSENT (-1000)   /* the sysctl file does not exist (Yama not built in) */
#define VT_SYSCTL_UNREADABLE (-1001)

/* "cap_sys_ptrace" for bit 19; NULL past VT_CAP_LAST. */
const char *vt_cap_name(int bit);

/* Is bit set in mask. */
static inline bool vt_cap_has(uint64_t mask, int bit)
{
	return bit >= 0 && bit < 64 && ((mask >> bit) & 1);
}

/*
 * mask as words into out (cap bytes): "none"; "all" (every capability up
 * to VT_CAP_LAST); "all but cap_sys_resource, cap_bpf" (when at most 8 are
 * missing); else the names joined by ", " (an unknown bit as "cap_41").
 * Returns out.
 */
const char *vt_caps_decode(uint64_t mask, char *out, size_t cap);

/* What /proc/self/status says about the caller's privileges. */
struct vt_self_status {
	bool caps_known;             /* CapEff: was there */
	uint64_t cap_eff, cap_prm, cap_bnd;
	int seccomp;                 /* Seccomp: 0 off, 1 strict, 2 filter; -1 absent */
	int no_new_privs;            /* NoNewPrivs: 0/1; -1 absent */
	long uid_real, uid_eff;      /* Uid: first two; -1 absent */
	long gid_real, gid_eff;      /* Gid: first two; -1 absent */
};

/* Parse status text (need not be NUL-terminated).  Fields not found stay unknown. */
void vt_self_status_parse(const char *buf, size_t len, struct vt_self_status *out);

/*
 * A sysctl under <proc root>/sys ("kernel/perf_event_paranoid"): its
 * integer, VT_SYSCTL_ABSENT when the file does not exist, or
 * VT_SYSCTL_UNREADABLE.
 */
long vt_sysctl_read(const struct vt_procfs *pfs, const char *name);

enum vt_cgroup_kind { VT_CGROUPS_NONE, VT_CGROUPS_V1, VT_CGROUPS_V2, VT_CGROUPS_HYBRID };
const char *vt_cgroup_kind_name(enum vt_cgroup_kind k);   /* "none", "v1", "v2", "hybrid" */

/* From mountinfo text: which cgroup filesystems are mounted. */
enum vt_cgroup_kind vt_mountinfo_cgroup_kind(const char *buf, size_t len);

/*
 * From mountinfo text: the hidepid= option of the proc mount at
 * mount_point ("/proc"), into out ("" when none; "2" or "invisible" as
 * written), and its gid= when given (-1 if not).  False when no proc
 * filesystem is mounted there.
 */
bool vt_mountinfo_proc_hidepid(const char *buf, size_t len, const char *mount_point, char *out,
			       size_t cap, long *gid);

struct vt_host_caps {
	char kernel[65];             /* sys/kernel/osrelease, "" if unreadable */
	long ptrace_scope;           /* kernel.yama.ptrace_scope, or VT_SYSCTL_* */
	long perf_event_paranoid;    /* kernel.perf_event_paranoid, or VT_SYSCTL_* */
	long kptr_restrict;          /* kernel.kptr_restrict, or VT_SYSCTL_* */
	struct vt_self_status self;  /* vitals itself */
	enum vt_cgroup_kind cgroups;
	bool psi;                    /* pressure/cpu reads and parses */
	long uprobe_pmu;             /* the uprobe PMU's perf type (sysfs), -1 none */
	bool tracefs;                /* a tracefs is mounted (allocs' fast probes) */
	bool proc_mounted;           /* the proc root is a proc mount in self/mountinfo */
	char hidepid[16];            /* its hidepid= ("" none) */
	long hidepid_gid;            /* its gid=, -1 none */
};

/* Fill *out from pfs (never fails: what cannot be read stays unknown). */
void vt_host_caps_read(const struct vt_procfs *pfs, struct vt_host_caps *out);

#endif

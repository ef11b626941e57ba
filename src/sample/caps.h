/*
 * caps.h — what works here, and what to grant: for this host and
 * optionally one process, each way vitals reads a process (snap's files,
 * heap by ptrace or by the agent, threads' wchan/syscall, profile by perf
 * events or by ptrace, census), whether it works, and if not the exact
 * reason (ptrace_scope, uid, a missing capability, perf_event_paranoid,
 * seccomp, hidepid, no agent) and the command or setting that grants it.
 *
 * Every check leaves the target as it was: files are read, one page of
 * memory is read (process_vm_readv), one disabled perf event is opened and
 * closed, and ptrace is tried with PTRACE_SEIZE from a thread that exits
 * at once (inject/seize_probe.h): the target is never stopped nor
 * signalled, also if vitals is killed meanwhile.  The agent, when there is
 * one, is asked for its read-only heap figures.
 *
 * Filled by sample/caps.c, rendered by render/caps_*.c (schema vitals.caps).
 */
#ifndef VT_SAMPLE_CAPS_H
#define VT_SAMPLE_CAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/error.h"
#include "proc/host_caps.h"
#include "proc/procfs.h"

enum vt_caps_status {
	VT_CAPS_WORKS,
	VT_CAPS_REFUSED,             /* a rule refuses it: reason and grant say which and how */
	VT_CAPS_NOT_APPLICABLE,      /* not for this process (no agent, not glibc, stopped) */
	VT_CAPS_UNKNOWN,             /* could not be checked (a recorded /proc tree, ...) */
};

#define VT_CAPS_FEATURES(X)                                                                        \
	X(SNAP_STATUS, "snap.status", "vitals snap", "status and stat: memory totals, state, threads") \
	X(SNAP_MAPS, "snap.maps", "vitals snap", "maps: the regions and what they are")                 \
	X(SNAP_SMAPS, "snap.smaps", "vitals snap", "smaps: resident, swapped and dirty per region")     \
	X(SNAP_ENVIRON, "snap.environ", "vitals snap", "environ: the arena cap (MALLOC_ARENA_MAX), LD_PRELOAD") \
	X(SNAP_CGROUP, "snap.cgroup", "vitals snap", "the cgroup's memory limit and usage")             \
	X(FILES, "files", "vitals heap, profile, census", "the target's own files via /proc/PID/root: symbols") \
	X(HEAP_PTRACE, "heap.ptrace", "vitals heap", "the allocator's figures by a call made with ptrace") \
	X(HEAP_AGENT, "heap.agent", "vitals heap", "the allocator's figures from the in-process agent") \
	X(THREADS_WCHAN, "threads.wchan_syscall", "vitals threads", "each thread's wchan and system call") \
	X(PROFILE_PERF, "profile.perf", "vitals profile", "sampling with perf events (cpu-clock)")     \
	X(PROFILE_PTRACE, "profile.ptrace", "vitals profile", "sampling by ptrace, the fallback")       \
	X(CENSUS, "census", "vitals census", "process_vm_readv of the heap, pagemap for resident pages")

enum vt_caps_feature_id {
#define VT_CAPS_ENUM(id, name, command, what) VT_CAPS_##id,
	VT_CAPS_FEATURES(VT_CAPS_ENUM)
#undef VT_CAPS_ENUM
	VT_CAPS__FEATURES
};

const char *vt_caps_status_name(enum vt_caps_status s);     /* "works", "refused", "not_applicable", "unknown" */
const char *vt_caps_feature_name(enum vt_caps_feature_id f);  /* "heap.ptrace" */
const char *vt_caps_feature_command(enum vt_caps_feature_id f);  /* "vitals heap" */
const char *vt_caps_feature_what(enum vt_caps_feature_id f);  /* what it gives */

#define VT_CAPS_TEXT 512

struct vt_caps_feature {
	enum vt_caps_feature_id id;
	enum vt_caps_status status;
	int sys_errno;                   /* of the refused call, 0 if none */
	char how[VT_CAPS_TEXT];          /* what was tried, e.g. "PTRACE_SEIZE of thread 12 ..." */
	char reason[VT_CAPS_TEXT];       /* why not; or, when it works, a limit worth knowing ("" none) */
	char grant[VT_CAPS_TEXT];        /* the command or setting that grants it ("" none) */
};

/* A host setting, its value as words, and what it means for vitals. */
struct vt_caps_setting {
	char name[48];                   /* "kernel.yama.ptrace_scope" */
	char value[160];                 /* "1", "absent (no Yama)", "all but cap_sys_resource" */
	char meaning[VT_CAPS_TEXT];
};

#define VT_CAPS_SETTINGS_MAX 16

/* What was read of the target. */
struct vt_caps_target {
	pid_t pid;
	char comm[64];
	char state;                      /* status State: letter */
	long uid_real, uid_eff;          /* its Uid: */
	long tracer_pid;                 /* TracerPid:, 0 none */
	int seccomp;                     /* its Seccomp: (0, 1, 2; -1 absent) */
	bool dumpable;                   /* false: its /proc files belong to root (setuid, PR_SET_DUMPABLE 0) */
	bool descendant;                 /* vitals is one of its ancestors (Yama scope 1) */
	char allocator[24];              /* "glibc", "jemalloc", ...; "" when unknown */
	bool agent_mapped;               /* libvitals-agent.so is in its maps */
};

struct vt_caps_opts {
	const char *agent_path;          /* where libvitals-agent.so is, for the grant; NULL unknown */
};

struct vt_caps_report {
	struct vt_host_caps host;
	struct vt_caps_setting settings[VT_CAPS_SETTINGS_MAX];
	size_t nsettings;
	bool has_target;
	bool live;                       /* the probes ran on the real /proc (else: rules only) */
	struct vt_caps_target target;
	struct vt_caps_feature features[VT_CAPS__FEATURES];   /* in enum order, when has_target */
};

/*
 * Fill *out for this host and, when pid > 0, for that process.  Errors
 * (for the pid only): VT_E_NOPROC, VT_E_KTHREAD, VT_E_ZOMBIE, VT_E_USAGE
 * (a thread id), VT_E_GONE.  A refusal is not an error: it is a feature's
 * status.
 */
int vt_caps_take(const struct vt_procfs *pfs, pid_t pid, const struct vt_caps_opts *opts,
		 struct vt_caps_report *out, struct vt_err *err);

/* Some feature is refused. */
bool vt_caps_partial(const struct vt_caps_report *r);

/* The host's settings with their meaning, into r->settings (vt_caps_take calls it). */
void vt_caps_describe_host(struct vt_caps_report *r);

/*
 * Fill f's reason and grant for a refused access to t: attach is the
 * ptrace mode the kernel checks (true: ATTACH, e.g. PTRACE_SEIZE,
 * process_vm_readv, task/TID/syscall; false: READ, e.g. maps, smaps,
 * environ, pagemap, where Yama does not apply).  what names what was
 * refused.  Pure: decided from h and t alone.
 */
void vt_caps_explain_ptrace(const struct vt_host_caps *h, const struct vt_caps_target *t, bool attach,
			    const char *what, struct vt_caps_feature *f);

/* The same for perf_event_open refused with errno e (EACCES, EPERM). */
void vt_caps_explain_perf(const struct vt_host_caps *h, const struct vt_caps_target *t, int e,
			  struct vt_caps_feature *f);

#endif

/*
 * caps_rules.c — the words of vitals caps: what each host setting means
 * for vitals, and for a refused access which rule refused it and what
 * grants it.  Pure: decided from struct vt_host_caps and struct
 * vt_caps_target alone, so tests give both by hand (sample/caps.c probes).
 *
 * The rules are the kernel's (ptrace(2) "Ptrace access mode checking",
 * Documentation/admin-guide/LSM/Yama.rst, perf_event_open(2), proc(5)):
 * a process of another uid needs CAP_SYS_PTRACE; Yama (ATTACH mode only:
 * ptrace, process_vm_readv, /proc/PID/mem and syscall, not maps or
 * smaps) 1 lets only ancestors attach, 2 only CAP_SYS_PTRACE, 3 nobody; a
 * non-dumpable process needs CAP_SYS_PTRACE; perf events need
 * perf_event_paranoid <= 2 (user space) or <= 1 (kernel too), or
 * CAP_PERFMON, plus ptrace read access to the thread.
 */
#include "sample/caps.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define VITALS_BIN "\"$(command -v vitals)\""

static const struct {
	const char *name, *command, *what;
} features[VT_CAPS__FEATURES] = {
#define VT_CAPS_ROW(id, name, command, what) [VT_CAPS_##id] = { name, command, what },
	VT_CAPS_FEATURES(VT_CAPS_ROW)
#undef VT_CAPS_ROW
};

const char *vt_caps_feature_name(enum vt_caps_feature_id f)
{
	return f < VT_CAPS__FEATURES ? features[f].name : "?";
}

const char *vt_caps_feature_command(enum vt_caps_feature_id f)
{
	return f < VT_CAPS__FEATURES ? features[f].command : "?";
}

const char *vt_caps_feature_what(enum vt_caps_feature_id f)
{
	return f < VT_CAPS__FEATURES ? features[f].what : "?";
}

const char *vt_caps_status_name(enum vt_caps_status s)
{
	switch (s) {
	case VT_CAPS_WORKS: return "works";
	case VT_CAPS_REFUSED: return "refused";
	case VT_CAPS_NOT_APPLICABLE: return "not_applicable";
	default: return "unknown";
	}
}

static bool has_cap(const struct vt_host_caps *h, int bit)
{
	return h->self.caps_known && vt_cap_has(h->self.cap_eff, bit);
}

/*
 * How to give vitals capabilities caps ("cap_sys_ptrace" or
 * "cap_perfmon,cap_sys_ptrace"), whose docker names are docker ("SYS_PTRACE"):
 * setcap, unless no_new_privs ignores file capabilities or the bounding set
 * lacks one of bits (a container).
 */
static void cap_grant(const struct vt_host_caps *h, const char *caps, const char *docker, int bit1,
		      int bit2, char *out, size_t cap)
{
	bool bounded = h->self.caps_known &&
		       (!vt_cap_has(h->self.cap_bnd, bit1) || (bit2 >= 0 && !vt_cap_has(h->self.cap_bnd, bit2)));

	if (bounded)
		snprintf(out, cap, "%s is outside vitals' bounding set (a container): start the container "
			 "with --cap-add %s", caps, docker);
	else if (h->self.no_new_privs == 1)
		snprintf(out, cap, "%s (file capabilities are ignored here: vitals runs with no_new_privs, "
			 "so run it as root instead)", caps);
	else
		snprintf(out, cap, "%s: sudo setcap %s+ep " VITALS_BIN, caps, caps);
}

static bool other_user(const struct vt_host_caps *h, const struct vt_caps_target *t)
{
	long me = h->self.uid_eff;

	return t->uid_real >= 0 && me >= 0 && (t->uid_real != me || t->uid_eff != me);
}

void vt_caps_explain_ptrace(const struct vt_host_caps *h, const struct vt_caps_target *t, bool attach,
			    const char *what, struct vt_caps_feature *f)
{
	bool cap = has_cap(h, VT_CAP_SYS_PTRACE);
	long scope = h->ptrace_scope;
	char grant[VT_CAPS_TEXT / 2];

	f->status = VT_CAPS_REFUSED;
	cap_grant(h, "cap_sys_ptrace", "SYS_PTRACE", VT_CAP_SYS_PTRACE, -1, grant, sizeof(grant));
	if (other_user(h, t) && !cap) {
		snprintf(f->reason, sizeof(f->reason), "%s: the process runs as uid %ld and vitals as uid %ld, "
			 "without CAP_SYS_PTRACE", what, t->uid_real, h->self.uid_eff);
		snprintf(f->grant, sizeof(f->grant), "run vitals as the target's user (uid %ld: sudo -u '#%ld' "
			 "vitals ...) or as root, or grant %s", t->uid_real, t->uid_real, grant);
	} else if (attach && scope == 3) {
		snprintf(f->reason, sizeof(f->reason), "%s: kernel.yama.ptrace_scope is 3: no process may "
			 "attach, root included", what);
		snprintf(f->grant, sizeof(f->grant), "none until a reboot (scope 3 cannot be lowered); for "
			 "vitals heap, start the target with the agent (LD_PRELOAD=libvitals-agent.so)");
	} else if (attach && scope == 2 && !cap) {
		snprintf(f->reason, sizeof(f->reason), "%s: kernel.yama.ptrace_scope is 2: only "
			 "CAP_SYS_PTRACE may attach", what);
		snprintf(f->grant, sizeof(f->grant), "run vitals as root, or grant %s; or sudo sysctl "
			 "kernel.yama.ptrace_scope=0 (any process of your uid)", grant);
	} else if (attach && scope == 1 && !cap && !t->descendant) {
		snprintf(f->reason, sizeof(f->reason), "%s: kernel.yama.ptrace_scope is 1: only an "
			 "ancestor of the process may attach, and vitals is not one", what);
		snprintf(f->grant, sizeof(f->grant), "sudo sysctl kernel.yama.ptrace_scope=0, or run vitals "
			 "as root, or grant %s", grant);
	} else if (!t->dumpable && !cap) {
		snprintf(f->reason, sizeof(f->reason), "%s: the process is not dumpable (a setuid or setgid "
			 "program, or prctl(PR_SET_DUMPABLE, 0)): only CAP_SYS_PTRACE may look inside", what);
		snprintf(f->grant, sizeof(f->grant), "run vitals as root, or grant %s", grant);
	} else if (h->self.seccomp == 2) {
		snprintf(f->reason, sizeof(f->reason), "%s: refused although uid, Yama and capabilities "
			 "allow it, and vitals runs under a seccomp filter (Seccomp: 2)", what);
		snprintf(f->grant, sizeof(f->grant), "run vitals without that filter or with one that allows "
			 "ptrace, process_vm_readv and perf_event_open (docker run --security-opt "
			 "seccomp=unconfined; systemd: SystemCallFilter=)");
	} else {
		snprintf(f->reason, sizeof(f->reason), "%s: refused although uid, Yama%s and capabilities "
			 "allow it: a security module (AppArmor, SELinux) or a user namespace the target "
			 "is outside of", what, scope == VT_SYSCTL_ABSENT ? " (absent)" : "");
		snprintf(f->grant, sizeof(f->grant), "find the denial in the kernel log (journalctl -k | grep "
			 "-i denied), or run vitals in the target's own namespace (docker exec, nsenter)");
	}
}

void vt_caps_explain_perf(const struct vt_host_caps *h, const struct vt_caps_target *t, int e,
			  struct vt_caps_feature *f)
{
	bool perfmon = has_cap(h, VT_CAP_PERFMON) || has_cap(h, VT_CAP_SYS_ADMIN);
	long para = h->perf_event_paranoid;
	char grant[VT_CAPS_TEXT / 2];

	f->status = VT_CAPS_REFUSED;
	f->sys_errno = e;
	if (other_user(h, t) && !has_cap(h, VT_CAP_SYS_PTRACE)) {
		cap_grant(h, "cap_perfmon,cap_sys_ptrace", "PERFMON --cap-add SYS_PTRACE", VT_CAP_PERFMON,
			  VT_CAP_SYS_PTRACE, grant, sizeof(grant));
		snprintf(f->reason, sizeof(f->reason), "perf_event_open: the process runs as uid %ld and "
			 "vitals as uid %ld: another user's threads need CAP_SYS_PTRACE as well as "
			 "CAP_PERFMON", t->uid_real, h->self.uid_eff);
		snprintf(f->grant, sizeof(f->grant), "run vitals as the target's user (uid %ld) or as root, "
			 "or grant %s", t->uid_real, grant);
		return;
	}
	cap_grant(h, "cap_perfmon", "PERFMON", VT_CAP_PERFMON, -1, grant, sizeof(grant));
	if (h->self.seccomp == 2 && e == EPERM) {
		snprintf(f->reason, sizeof(f->reason), "perf_event_open: EPERM, and vitals runs under a "
			 "seccomp filter (Seccomp: 2); container runtimes' default profiles refuse it");
		snprintf(f->grant, sizeof(f->grant), "run vitals with a seccomp profile that allows "
			 "perf_event_open (docker run --security-opt seccomp=unconfined --cap-add PERFMON)");
	} else if (perfmon) {
		snprintf(f->reason, sizeof(f->reason), "perf_event_open: %s although vitals has "
			 "CAP_PERFMON or CAP_SYS_ADMIN: a security module or the container's runtime refuses it",
			 strerror(e));
		snprintf(f->grant, sizeof(f->grant), "find the denial in the kernel log (journalctl -k | grep "
			 "-i denied); vitals profile falls back to ptrace");
	} else if (para >= 3) {
		snprintf(f->reason, sizeof(f->reason), "perf_event_open: kernel.perf_event_paranoid is %ld: "
			 "no perf events for users without CAP_PERFMON", para);
		snprintf(f->grant, sizeof(f->grant), "sudo sysctl kernel.perf_event_paranoid=2 (your own "
			 "processes, user space; 1 adds kernel frames), or run vitals as root, or grant %s", grant);
	} else {
		snprintf(f->reason, sizeof(f->reason), "perf_event_open: %s with kernel.perf_event_paranoid "
			 "%ld, which allows your own processes: a security module refuses it",
			 strerror(e), para);
		snprintf(f->grant, sizeof(f->grant), "run vitals as root, or grant %s", grant);
	}
}

/* ---- the host's settings --------------------------------------------------- */

static struct vt_caps_setting *setting(struct vt_caps_report *r, const char *name)
{
	static struct vt_caps_setting spare;   /* never used: the table below fits */
	struct vt_caps_setting *s;

	if (r->nsettings == VT_CAPS_SETTINGS_MAX)
		return &spare;
	s = &r->settings[r->nsettings++];
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name);
	return s;
}

static void sysctl_value(long v, char *out, size_t cap)
{
	if (v == VT_SYSCTL_ABSENT)
		snprintf(out, cap, "absent");
	else if (v == VT_SYSCTL_UNREADABLE)
		snprintf(out, cap, "unreadable");
	else
		snprintf(out, cap, "%ld", v);
}

static const char *scope_meaning(long v)
{
	switch (v) {
	case VT_SYSCTL_ABSENT:
		return "no Yama here: attaching follows only uid, dumpable and CAP_SYS_PTRACE";
	case 0:
		return "classic: any process of vitals' uid may be attached";
	case 1:
		return "restricted: only a process's ancestors may attach, or CAP_SYS_PTRACE; "
		       "heap, census and threads' syscall on a process vitals did not start need root, "
		       "CAP_SYS_PTRACE, or sudo sysctl kernel.yama.ptrace_scope=0";
	case 2:
		return "admin-only: attaching needs CAP_SYS_PTRACE (root, or setcap cap_sys_ptrace+ep on vitals)";
	case 3:
		return "no attach: ptrace, process_vm_readv and /proc/PID/syscall are refused to everyone "
		       "until reboot; heap only through the agent";
	default:
		return "unknown value";
	}
}

static const char *paranoid_meaning(long v)
{
	if (v == VT_SYSCTL_ABSENT)
		return "no perf events in this kernel: profile uses ptrace";
	if (v == VT_SYSCTL_UNREADABLE)
		return "cannot be read";
	if (v <= 0)
		return "perf events allowed to every user (own processes), kernel frames included";
	if (v == 1)
		return "your own processes, user and kernel frames";
	if (v == 2)
		return "your own processes, user space only: profile samples no kernel frames unless "
		       "vitals has CAP_PERFMON (or sudo sysctl kernel.perf_event_paranoid=1)";
	return "no perf events without CAP_PERFMON (a distribution's setting above 2): profile "
	       "falls back to ptrace";
}

static const char *kptr_meaning(long v)
{
	switch (v) {
	case 0: return "kernel symbol addresses visible: kernel frames are named";
	case 1: return "kernel addresses shown only to CAP_SYSLOG: kernel frames are named only "
		       "when vitals has it (root)";
	case 2: return "kernel addresses hidden from everyone: kernel frames stay unnamed";
	default: return "unknown";
	}
}

static void caps_meaning(const struct vt_host_caps *h, char *out, size_t cap)
{
	static const struct {
		int bit;
		const char *gives;
	} relevant[] = {
		{ VT_CAP_SYS_PTRACE, "other users' processes and any ptrace_scope below 3" },
		{ VT_CAP_PERFMON, "perf events whatever perf_event_paranoid says" },
		{ VT_CAP_SYS_ADMIN, "physical frames in pagemap; suspending a target's seccomp filter for heap" },
		{ VT_CAP_SYSLOG, "kernel symbol addresses under kptr_restrict 1" },
	};
	size_t i, o = 0;

	out[0] = '\0';
	for (i = 0; i < sizeof(relevant) / sizeof(relevant[0]) && o < cap; i++) {
		bool yes = has_cap(h, relevant[i].bit);
		bool bounded = h->self.caps_known && !vt_cap_has(h->self.cap_bnd, relevant[i].bit);
		int n = snprintf(out + o, cap - o, "%s%s: %s%s", o ? "; " : "", vt_cap_name(relevant[i].bit),
				 yes ? "yes: " : "no", yes ? relevant[i].gives : bounded ? " (outside the bounding set)" : "");
		if (n > 0)
			o += (size_t)n;
	}
}

void vt_caps_describe_host(struct vt_caps_report *r)
{
	const struct vt_host_caps *h = &r->host;
	struct vt_caps_setting *s;

	r->nsettings = 0;
	s = setting(r, "kernel");
	snprintf(s->value, sizeof(s->value), "%s", h->kernel[0] ? h->kernel : "unknown");
	snprintf(s->meaning, sizeof(s->meaning), "the running kernel's release");

	s = setting(r, "kernel.yama.ptrace_scope");
	sysctl_value(h->ptrace_scope, s->value, sizeof(s->value));
	snprintf(s->meaning, sizeof(s->meaning), "%s", scope_meaning(h->ptrace_scope));

	s = setting(r, "kernel.perf_event_paranoid");
	sysctl_value(h->perf_event_paranoid, s->value, sizeof(s->value));
	snprintf(s->meaning, sizeof(s->meaning), "%s", paranoid_meaning(h->perf_event_paranoid));

	s = setting(r, "uprobes");
	snprintf(s->value, sizeof(s->value), "%s%s", h->uprobe_pmu >= 0 ? "PMU" : "no PMU",
		 h->tracefs ? ", tracefs mounted" : ", tracefs not mounted");
	snprintf(s->meaning, sizeof(s->meaning), "%s", h->uprobe_pmu < 0 && !h->tracefs
		 ? "allocs: no uprobes here (a kernel without CONFIG_UPROBE_EVENTS, or a container without "
		   "the host's /sys): it cannot probe the allocator"
		 : !(has_cap(h, VT_CAP_PERFMON) || has_cap(h, VT_CAP_SYS_ADMIN))
		 ? "allocs: probes need CAP_PERFMON or CAP_SYS_ADMIN, whatever perf_event_paranoid says "
		   "(run as root)"
		 : h->tracefs ? "allocs: probes are defined in tracefs and close in a millisecond"
		 : "allocs: vitals mounts tracefs at /sys/kernel/tracing for its probes (as perf does); "
		   "where it cannot, the PMU's probes take about 50 ms each to close");

	s = setting(r, "kernel.kptr_restrict");
	sysctl_value(h->kptr_restrict, s->value, sizeof(s->value));
	snprintf(s->meaning, sizeof(s->meaning), "%s", kptr_meaning(h->kptr_restrict));

	s = setting(r, "vitals.uid");
	snprintf(s->value, sizeof(s->value), "%ld", h->self.uid_eff);
	snprintf(s->meaning, sizeof(s->meaning), "%s", h->self.uid_eff == 0
		 ? "root: every process is its own, if its capabilities allow"
		 : "processes of this uid are vitals' own; others need CAP_SYS_PTRACE");

	s = setting(r, "vitals.capabilities");
	if (h->self.caps_known)
		vt_caps_decode(h->self.cap_eff, s->value, sizeof(s->value));
	else
		snprintf(s->value, sizeof(s->value), "unknown");
	caps_meaning(h, s->meaning, sizeof(s->meaning));

	s = setting(r, "vitals.no_new_privs");
	snprintf(s->value, sizeof(s->value), "%d", h->self.no_new_privs);
	snprintf(s->meaning, sizeof(s->meaning), "%s", h->self.no_new_privs == 1
		 ? "set: file capabilities (setcap) on vitals are ignored; only running as root grants them"
		 : "not set: capabilities given to the vitals binary with setcap take effect");

	s = setting(r, "vitals.seccomp");
	snprintf(s->value, sizeof(s->value), "%s", h->self.seccomp == 0 ? "0 (off)" : h->self.seccomp == 1
		 ? "1 (strict)" : h->self.seccomp == 2 ? "2 (filter)" : "unknown");
	snprintf(s->meaning, sizeof(s->meaning), "%s", h->self.seccomp == 2
		 ? "a filter (a container's profile?) may refuse ptrace, process_vm_readv or perf_event_open; "
		   "and heap cannot suspend a target's own filter"
		 : h->self.seccomp == 0 ? "no system call is filtered" : "cannot tell");

	s = setting(r, "cgroups");
	snprintf(s->value, sizeof(s->value), "%s", vt_cgroup_kind_name(h->cgroups));
	snprintf(s->meaning, sizeof(s->meaning), "%s", h->cgroups == VT_CGROUPS_V2
		 ? "cgroup v2: memory.max, memory.current and pressure per cgroup"
		 : h->cgroups == VT_CGROUPS_HYBRID ? "both mounted: v1 controllers are read where they are"
		 : h->cgroups == VT_CGROUPS_V1 ? "cgroup v1: memory.limit_in_bytes and usage; no pressure per cgroup"
		 : "no cgroup filesystem mounted: no limits are shown");

	s = setting(r, "psi");
	snprintf(s->value, sizeof(s->value), "%s", h->psi ? "available" : "unavailable");
	snprintf(s->meaning, sizeof(s->meaning), "%s", h->psi
		 ? "/proc/pressure: stall time for threads and soak"
		 : "no /proc/pressure (a kernel without CONFIG_PSI, or booted with psi=0): no stall figures");

	s = setting(r, "proc.hidepid");
	if (!h->proc_mounted)
		snprintf(s->value, sizeof(s->value), "unknown");
	else
		snprintf(s->value, sizeof(s->value), "%s", h->hidepid[0] ? h->hidepid : "0");
	if (!h->hidepid[0] || !strcmp(h->hidepid, "0") || !strcmp(h->hidepid, "off"))
		snprintf(s->meaning, sizeof(s->meaning), "every process's /proc directory is visible");
	else
		snprintf(s->meaning, sizeof(s->meaning), "other users' /proc/PID %s to vitals%s; root and "
			 "CAP_SYS_PTRACE see them", !strcmp(h->hidepid, "1") || !strcmp(h->hidepid, "noaccess")
			 ? "cannot be entered" : "are hidden", h->hidepid_gid >= 0 ? " unless it is in the gid= group" : "");
}

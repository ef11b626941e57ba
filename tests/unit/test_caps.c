/*
 * test_caps.c — vitals caps' pure parts: CapEff decoding, the self status,
 * sysctls and mountinfo read from the recorded hosts under
 * tests/fixtures/caps/ (see its README), the rules that word a refusal and
 * its grant (sample/caps_rules.c), and vt_caps_take on a recorded tree.
 */
#include "harness.h"

#include "proc/host_caps.h"
#include "sample/caps.h"

#include <errno.h>

#define TEXT(s) s, sizeof(s) - 1

static bool has(const char *text, const char *part)
{
	if (strstr(text, part))
		return true;
	printf("#   \"%s\" lacks \"%s\"\n", text, part);
	return false;
}

static int open_host(const char *host, struct vt_procfs *pfs)
{
	char rel[128], proc[1100];

	snprintf(rel, sizeof(rel), "caps/%s/proc", host);
	snprintf(proc, sizeof(proc), "%s", vt_fixture_path(rel));
	return vt_procfs_open(pfs, proc, "/nonexistent", NULL);
}

/* ---- capabilities ---- */

static void test_caps__decode_none_all_and_root_minus_one(void)
{
	char out[512];

	CHECK_STR(vt_caps_decode(0, out, sizeof(out)), "none");
	CHECK_STR(vt_caps_decode(0x1ffffffffffull, out, sizeof(out)), "all");
	/* this container's root: everything but CAP_SYS_RESOURCE (24) */
	CHECK_STR(vt_caps_decode(0x1fffeffffffull, out, sizeof(out)), "all but cap_sys_resource");
	CHECK_STR(vt_caps_decode(0x1fffeffffffull & ~(1ull << 38), out, sizeof(out)),
		  "all but cap_sys_resource, cap_perfmon");
}

static void test_caps__decode_docker_default(void)
{
	char out[512];

	CHECK_STR(vt_caps_decode(0xa80425fbull, out, sizeof(out)),
		  "cap_chown, cap_dac_override, cap_fowner, cap_fsetid, cap_kill, cap_setgid, cap_setuid, "
		  "cap_setpcap, cap_net_bind_service, cap_net_raw, cap_sys_chroot, cap_mknod, "
		  "cap_audit_write, cap_setfcap");
	CHECK_STR(vt_caps_decode((1ull << 19) | (1ull << 38), out, sizeof(out)), "cap_sys_ptrace, cap_perfmon");
	/* a bit a newer kernel may add */
	CHECK_STR(vt_caps_decode(1ull << 41, out, sizeof(out)), "cap_41");
	/* cut short, never overrun */
	vt_caps_decode(0xa80425fbull, out, 16);
	CHECK(strlen(out) < 16);
}

static void test_caps__names(void)
{
	CHECK_STR(vt_cap_name(VT_CAP_SYS_PTRACE), "cap_sys_ptrace");
	CHECK_STR(vt_cap_name(VT_CAP_PERFMON), "cap_perfmon");
	CHECK_STR(vt_cap_name(VT_CAP_SYS_ADMIN), "cap_sys_admin");
	CHECK_STR(vt_cap_name(VT_CAP_LAST), "cap_checkpoint_restore");
	CHECK(vt_cap_name(VT_CAP_LAST + 1) == NULL);
	CHECK(vt_cap_name(-1) == NULL);
}

static void test_caps__self_status(void)
{
	struct vt_self_status s;

	vt_self_status_parse(TEXT("Name:\tx\nUid:\t1000\t0\t0\t0\nGid:\t5\t6\t6\t6\nCapPrm:\t0000000000080000\n"
				  "CapEff:\t0000000000080000\nCapBnd:\t000001ffffffffff\nNoNewPrivs:\t1\n"
				  "Seccomp:\t2\nSeccomp_filters:\t3\n"), &s);
	CHECK(s.caps_known);
	CHECK_EQ_U64(s.cap_eff, 1ull << 19);
	CHECK_EQ_U64(s.cap_bnd, 0x1ffffffffffull);
	CHECK_EQ_I64(s.uid_real, 1000);
	CHECK_EQ_I64(s.uid_eff, 0);
	CHECK_EQ_I64(s.gid_eff, 6);
	CHECK_EQ_I64(s.seccomp, 2);
	CHECK_EQ_I64(s.no_new_privs, 1);
	/* Seccomp_filters: is not Seccomp: (prefix) */
	vt_self_status_parse(TEXT("Seccomp_filters:\t3\n"), &s);
	CHECK_EQ_I64(s.seccomp, -1);
	CHECK(!s.caps_known);
	CHECK_EQ_I64(s.uid_real, -1);
	/* an old kernel without NoNewPrivs/Seccomp lines; garbage */
	vt_self_status_parse(TEXT("CapEff:\tzz\nSeccomp:\t9\n"), &s);
	CHECK(!s.caps_known);
	CHECK_EQ_I64(s.seccomp, -1);
	CHECK_EQ_I64(s.no_new_privs, -1);
}

/* ---- mountinfo ---- */

static void test_caps__mountinfo_cgroups_and_hidepid(void)
{
	static const char v1[] = "30 25 0:26 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n";
	static const char both[] = "30 25 0:26 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
				   "31 25 0:27 / /sys/fs/cgroup/unified rw shared:5 - cgroup2 cgroup2 rw\n";
	static const char proc2[] = "22 28 0:21 / /proc rw,relatime shared:12 - proc proc rw,hidepid=2\n"
				    "23 28 0:21 / /proc rw,relatime - proc proc rw,hidepid=1,gid=27\n"
				    "40 28 0:50 / /other/proc rw - proc proc rw,hidepid=2\n";
	char hp[16];
	long gid;

	CHECK_EQ_U64(vt_mountinfo_cgroup_kind(TEXT(v1)), VT_CGROUPS_V1);
	CHECK_EQ_U64(vt_mountinfo_cgroup_kind(TEXT(both)), VT_CGROUPS_HYBRID);
	CHECK_EQ_U64(vt_mountinfo_cgroup_kind(TEXT("garbage\n\n1 2\n")), VT_CGROUPS_NONE);
	CHECK_STR(vt_cgroup_kind_name(VT_CGROUPS_HYBRID), "hybrid");
	/* the last mount at /proc is the one in effect */
	CHECK(vt_mountinfo_proc_hidepid(TEXT(proc2), "/proc", hp, sizeof(hp), &gid));
	CHECK_STR(hp, "1");
	CHECK_EQ_I64(gid, 27);
	CHECK(!vt_mountinfo_proc_hidepid(TEXT(v1), "/proc", hp, sizeof(hp), &gid));
	CHECK_STR(hp, "");
	CHECK_EQ_I64(gid, -1);
}

/* ---- hosts read from fixture trees ---- */

static void test_caps__host_desktop(void)
{
	struct vt_procfs pfs;
	struct vt_host_caps h;

	if (open_host("desktop", &pfs)) {
		CHECK(!"desktop fixture opens");
		return;
	}
	vt_host_caps_read(&pfs, &h);
	CHECK_STR(h.kernel, "6.1.0-28-amd64");
	CHECK_EQ_I64(h.ptrace_scope, 1);
	CHECK_EQ_I64(h.perf_event_paranoid, 3);
	CHECK_EQ_I64(h.kptr_restrict, 1);
	CHECK(h.self.caps_known);
	CHECK_EQ_U64(h.self.cap_eff, 0);
	CHECK_EQ_I64(h.self.uid_eff, 1000);
	CHECK_EQ_I64(h.self.seccomp, 0);
	CHECK_EQ_U64(h.cgroups, VT_CGROUPS_V2);
	CHECK(h.psi);
	CHECK(h.proc_mounted);
	CHECK_STR(h.hidepid, "invisible");
	CHECK_EQ_I64(h.hidepid_gid, 27);
	CHECK_EQ_I64(vt_sysctl_read(&pfs, "kernel/no_such_sysctl"), VT_SYSCTL_ABSENT);
	vt_procfs_close(&pfs);
}

static void test_caps__host_container(void)
{
	struct vt_caps_report r;
	struct vt_procfs pfs;
	const struct vt_host_caps *h = &r.host;
	size_t i;
	bool saw_scope = false, saw_caps = false;

	if (open_host("container", &pfs)) {
		CHECK(!"container fixture opens");
		return;
	}
	CHECK_EQ_I64(vt_caps_take(&pfs, 0, NULL, &r, NULL), VT_OK);
	vt_procfs_close(&pfs);
	CHECK(!r.has_target);
	CHECK(!vt_caps_partial(&r));
	CHECK_EQ_I64(h->ptrace_scope, VT_SYSCTL_ABSENT);   /* no Yama */
	CHECK_EQ_I64(h->perf_event_paranoid, 2);
	CHECK_EQ_U64(h->self.cap_eff, 0xa80425fbull);
	CHECK_EQ_I64(h->self.seccomp, 2);
	CHECK_EQ_I64(h->self.no_new_privs, 1);
	CHECK_EQ_U64(h->cgroups, VT_CGROUPS_V1);
	CHECK(!h->psi);
	CHECK_STR(h->hidepid, "");
	for (i = 0; i < r.nsettings; i++) {
		const struct vt_caps_setting *s = &r.settings[i];
		if (!strcmp(s->name, "kernel.yama.ptrace_scope")) {
			saw_scope = true;
			CHECK_STR(s->value, "absent");
			CHECK(has(s->meaning, "no Yama"));
		}
		if (!strcmp(s->name, "vitals.capabilities")) {
			saw_caps = true;
			CHECK(has(s->value, "cap_chown, cap_dac_override"));
			CHECK(has(s->meaning, "cap_sys_ptrace: no (outside the bounding set)"));
		}
		if (!strcmp(s->name, "vitals.seccomp"))
			CHECK(has(s->value, "2 (filter)"));
		if (!strcmp(s->name, "psi"))
			CHECK_STR(s->value, "unavailable");
	}
	CHECK(saw_scope && saw_caps);
}

/* ---- the rules ---- */

static struct vt_host_caps user_host(long scope, long paranoid)
{
	struct vt_host_caps h;

	memset(&h, 0, sizeof(h));
	h.ptrace_scope = scope;
	h.perf_event_paranoid = paranoid;
	h.self.caps_known = true;
	h.self.cap_bnd = 0x1ffffffffffull;
	h.self.uid_real = h.self.uid_eff = 1000;
	h.self.no_new_privs = 0;
	return h;
}

static struct vt_caps_target target_of(long uid)
{
	struct vt_caps_target t;

	memset(&t, 0, sizeof(t));
	t.pid = 4242;
	t.uid_real = t.uid_eff = uid;
	t.dumpable = true;
	return t;
}

static void test_caps__rule_other_uid(void)
{
	struct vt_host_caps h = user_host(0, 2);
	struct vt_caps_target t = target_of(0);
	struct vt_caps_feature f = { 0 };

	vt_caps_explain_ptrace(&h, &t, true, "ptrace", &f);
	CHECK_EQ_U64(f.status, VT_CAPS_REFUSED);
	CHECK(has(f.reason, "runs as uid 0 and vitals as uid 1000, without CAP_SYS_PTRACE"));
	CHECK(has(f.grant, "sudo setcap cap_sys_ptrace+ep \"$(command -v vitals)\""));
	CHECK(has(f.grant, "uid 0"));
	/* with CAP_SYS_PTRACE the uid is not the reason */
	h.self.cap_eff = 1ull << VT_CAP_SYS_PTRACE;
	memset(&f, 0, sizeof(f));
	vt_caps_explain_ptrace(&h, &t, true, "ptrace", &f);
	CHECK(!strstr(f.reason, "runs as uid"));
	/* in a container whose bounding set lacks it, setcap cannot help */
	h.self.cap_eff = 0;
	h.self.cap_bnd = 0xa80425fbull;
	vt_caps_explain_ptrace(&h, &t, true, "ptrace", &f);
	CHECK(has(f.grant, "--cap-add SYS_PTRACE"));
	CHECK(!strstr(f.grant, "setcap"));
	/* no_new_privs: file capabilities are ignored */
	h.self.cap_bnd = 0x1ffffffffffull;
	h.self.no_new_privs = 1;
	vt_caps_explain_ptrace(&h, &t, true, "ptrace", &f);
	CHECK(has(f.grant, "no_new_privs"));
}

static void test_caps__rule_yama(void)
{
	struct vt_caps_target t = target_of(1000);
	struct vt_caps_feature f = { 0 };
	struct vt_host_caps h;

	h = user_host(1, 2);
	vt_caps_explain_ptrace(&h, &t, true, "ptrace", &f);
	CHECK(has(f.reason, "kernel.yama.ptrace_scope is 1"));
	CHECK(has(f.grant, "sudo sysctl kernel.yama.ptrace_scope=0"));
	h = user_host(2, 2);
	vt_caps_explain_ptrace(&h, &t, true, "ptrace", &f);
	CHECK(has(f.reason, "kernel.yama.ptrace_scope is 2"));
	CHECK(has(f.grant, "setcap cap_sys_ptrace+ep"));
	h = user_host(3, 2);
	h.self.cap_eff = 1ull << VT_CAP_SYS_PTRACE;   /* scope 3 binds root too */
	vt_caps_explain_ptrace(&h, &t, true, "ptrace", &f);
	CHECK(has(f.reason, "kernel.yama.ptrace_scope is 3"));
	CHECK(has(f.grant, "reboot"));
	/* Yama judges attaching only: a refused smaps read is not its doing */
	h = user_host(3, 2);
	t.dumpable = false;
	vt_caps_explain_ptrace(&h, &t, false, "smaps", &f);
	CHECK(has(f.reason, "not dumpable"));
	/* scope 1, an ancestor, dumpable: then something else refused it */
	h = user_host(1, 2);
	t.dumpable = true;
	t.descendant = true;
	vt_caps_explain_ptrace(&h, &t, true, "ptrace", &f);
	CHECK(has(f.reason, "security module"));
	h.self.seccomp = 2;
	vt_caps_explain_ptrace(&h, &t, true, "ptrace", &f);
	CHECK(has(f.reason, "seccomp filter"));
	CHECK(has(f.grant, "seccomp=unconfined"));
}

static void test_caps__rule_perf(void)
{
	struct vt_caps_target own = target_of(1000), roots = target_of(0);
	struct vt_caps_feature f = { 0 };
	struct vt_host_caps h = user_host(0, 3);

	vt_caps_explain_perf(&h, &own, EACCES, &f);
	CHECK_EQ_U64(f.status, VT_CAPS_REFUSED);
	CHECK(has(f.reason, "kernel.perf_event_paranoid is 3"));
	CHECK(has(f.grant, "sudo sysctl kernel.perf_event_paranoid=2"));
	CHECK(has(f.grant, "setcap cap_perfmon+ep"));
	vt_caps_explain_perf(&h, &roots, EACCES, &f);
	CHECK(has(f.reason, "another user's threads need CAP_SYS_PTRACE"));
	CHECK(has(f.grant, "cap_perfmon,cap_sys_ptrace+ep"));
	h.self.seccomp = 2;
	vt_caps_explain_perf(&h, &own, EPERM, &f);
	CHECK(has(f.reason, "seccomp"));
	h.self.seccomp = 0;
	h.self.cap_eff = 1ull << VT_CAP_PERFMON;
	vt_caps_explain_perf(&h, &own, EACCES, &f);
	CHECK(has(f.reason, "although vitals has CAP_PERFMON"));
}

/* ---- vt_caps_take on a recorded tree: the files, no probe ---- */

static void test_caps__take_recorded(void)
{
	static struct vt_caps_report r;
	struct vt_procfs pfs;
	struct vt_err err;
	int i;

	if (open_host("desktop", &pfs)) {
		CHECK(!"desktop fixture opens");
		return;
	}
	CHECK_EQ_I64(vt_caps_take(&pfs, 4242, NULL, &r, &err), VT_OK);
	CHECK_EQ_I64(vt_caps_take(&pfs, 4243, NULL, &r, &err), VT_E_NOPROC);
	CHECK_EQ_I64(vt_caps_take(&pfs, 4242, NULL, &r, &err), VT_OK);
	vt_procfs_close(&pfs);
	CHECK(r.has_target);
	CHECK(!r.live);
	CHECK_STR(r.target.comm, "server");
	CHECK_EQ_I64(r.target.uid_real, 1000);
	CHECK_EQ_U64(r.features[VT_CAPS_SNAP_STATUS].status, VT_CAPS_WORKS);
	CHECK_EQ_U64(r.features[VT_CAPS_SNAP_MAPS].status, VT_CAPS_WORKS);
	CHECK_EQ_U64(r.features[VT_CAPS_SNAP_SMAPS].status, VT_CAPS_WORKS);
	CHECK_EQ_U64(r.features[VT_CAPS_SNAP_ENVIRON].status, VT_CAPS_WORKS);
	CHECK_EQ_U64(r.features[VT_CAPS_THREADS_WCHAN].status, VT_CAPS_WORKS);
	/* nothing is tried on a recorded process: never "works" by guess */
	CHECK_EQ_U64(r.features[VT_CAPS_HEAP_PTRACE].status, VT_CAPS_UNKNOWN);
	CHECK_EQ_U64(r.features[VT_CAPS_PROFILE_PERF].status, VT_CAPS_UNKNOWN);
	CHECK_EQ_U64(r.features[VT_CAPS_CENSUS].status, VT_CAPS_UNKNOWN);
	CHECK(has(r.features[VT_CAPS_CENSUS].reason, "recorded"));
	CHECK(!vt_caps_partial(&r));
	for (i = 0; i < VT_CAPS__FEATURES; i++)
		CHECK_EQ_U64(r.features[i].id, i);
	CHECK_STR(vt_caps_feature_name(VT_CAPS_HEAP_PTRACE), "heap.ptrace");
	CHECK_STR(vt_caps_status_name(VT_CAPS_NOT_APPLICABLE), "not_applicable");
}

VT_TEST_MAIN(test_caps__decode_none_all_and_root_minus_one, test_caps__decode_docker_default, test_caps__names,
	     test_caps__self_status, test_caps__mountinfo_cgroups_and_hidepid, test_caps__host_desktop,
	     test_caps__host_container, test_caps__rule_other_uid, test_caps__rule_yama, test_caps__rule_perf,
	     test_caps__take_recorded)

/*
 * host_caps.c — the host's and vitals' own settings (see host_caps.h).
 */
#include "proc/host_caps.h"
#include "base/scan.h"
#include "proc/psi.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const cap_names[VT_CAP_LAST + 1] = {
	"cap_chown", "cap_dac_override", "cap_dac_read_search", "cap_fowner", "cap_fsetid",
	"cap_kill", "cap_setgid", "cap_setuid", "cap_setpcap", "cap_linux_immutable",
	"cap_net_bind_service", "cap_net_broadcast", "cap_net_admin", "cap_net_raw",
	"cap_ipc_lock", "cap_ipc_owner", "cap_sys_module", "cap_sys_rawio", "cap_sys_chroot",
	"cap_sys_ptrace", "cap_sys_pacct", "cap_sys_admin", "cap_sys_boot", "cap_sys_nice",
	"cap_sys_resource", "cap_sys_time", "cap_sys_tty_config", "cap_mknod", "cap_lease",
	"cap_audit_write", "cap_audit_control", "cap_setfcap", "cap_mac_override",
	"cap_mac_admin", "cap_syslog", "cap_wake_alarm", "cap_block_suspend", "cap_audit_read",
	"cap_perfmon", "cap_bpf", "cap_checkpoint_restore",
};

const char *vt_cap_name(int bit)
{
	return bit >= 0 && bit <= VT_CAP_LAST ? cap_names[bit] : NULL;
}

/* Append "name" (with ", " before all but the first) to out at *o. */
static void add_name(char *out, size_t cap, size_t *o, int bit)
{
	const char *name = vt_cap_name(bit);
	char unknown[16];
	int n;

	if (!name) {
		snprintf(unknown, sizeof(unknown), "cap_%d", bit);
		name = unknown;
	}
	if (*o >= cap)
		return;
	n = snprintf(out + *o, cap - *o, "%s%s", *o ? ", " : "", name);
	if (n > 0)
		*o += (size_t)n;
}

const char *vt_caps_decode(uint64_t mask, char *out, size_t cap)
{
	uint64_t known = (UINT64_C(1) << (VT_CAP_LAST + 1)) - 1;
	int bit, missing = 0;
	size_t o = 0;

	if (!cap)
		return out;
	out[0] = '\0';
	if (!mask) {
		snprintf(out, cap, "none");
		return out;
	}
	for (bit = 0; bit <= VT_CAP_LAST; bit++)
		missing += !vt_cap_has(mask, bit);
	if (missing == 0 && !(mask & ~known)) {
		snprintf(out, cap, "all");
		return out;
	}
	if (missing <= 8 && !(mask & ~known)) {
		o = (size_t)snprintf(out, cap, "all but ");
		for (bit = 0; bit <= VT_CAP_LAST; bit++) {
			if (vt_cap_has(mask, bit))
				continue;
			if (o > strlen("all but ") && o < cap)
				o += (size_t)snprintf(out + o, cap - o, ", ");
			if (o < cap)
				o += (size_t)snprintf(out + o, cap - o, "%s", vt_cap_name(bit));
		}
		return out;
	}
	for (bit = 0; bit < 64; bit++)
		if (vt_cap_has(mask, bit))
			add_name(out, cap, &o, bit);
	return out;
}

/* The value after "key:" at the start of a line, or NULL. */
static const char *field(const char *buf, size_t len, const char *key, size_t *vlen)
{
	struct vt_scan s = vt_scan_init(buf, len);
	size_t klen = strlen(key);
	const char *line;
	size_t n;

	while (vt_scan_line(&s, &line, &n)) {
		if (n > klen && !memcmp(line, key, klen) && line[klen] == ':') {
			*vlen = n - klen - 1;
			return line + klen + 1;
		}
	}
	return NULL;
}

static bool field_hex(const char *buf, size_t len, const char *key, uint64_t *out)
{
	size_t vlen;
	const char *v = field(buf, len, key, &vlen);
	struct vt_scan s;

	if (!v)
		return false;
	s = vt_scan_init(v, vlen);
	vt_scan_blanks(&s);
	return vt_scan_hex(&s, out);
}

/* The first two numbers of key's value into a, b (left as they are when absent). */
static void field_two(const char *buf, size_t len, const char *key, long *a, long *b)
{
	size_t vlen;
	const char *v = field(buf, len, key, &vlen);
	struct vt_scan s;
	uint64_t x, y;

	if (!v)
		return;
	s = vt_scan_init(v, vlen);
	vt_scan_blanks(&s);
	if (!vt_scan_u64(&s, &x))
		return;
	vt_scan_blanks(&s);
	if (b && vt_scan_u64(&s, &y))
		*b = (long)y;
	*a = (long)x;
}

void vt_self_status_parse(const char *buf, size_t len, struct vt_self_status *out)
{
	long v;

	memset(out, 0, sizeof(*out));
	out->seccomp = out->no_new_privs = -1;
	out->uid_real = out->uid_eff = out->gid_real = out->gid_eff = -1;
	out->caps_known = field_hex(buf, len, "CapEff", &out->cap_eff);
	field_hex(buf, len, "CapPrm", &out->cap_prm);
	field_hex(buf, len, "CapBnd", &out->cap_bnd);
	v = -1;
	field_two(buf, len, "Seccomp", &v, NULL);
	out->seccomp = v >= 0 && v <= 2 ? (int)v : -1;
	v = -1;
	field_two(buf, len, "NoNewPrivs", &v, NULL);
	out->no_new_privs = v == 0 || v == 1 ? (int)v : -1;
	field_two(buf, len, "Uid", &out->uid_real, &out->uid_eff);
	field_two(buf, len, "Gid", &out->gid_real, &out->gid_eff);
}

long vt_sysctl_read(const struct vt_procfs *pfs, const char *name)
{
	struct vt_buf buf = VT_BUF_INIT(256);
	struct vt_err e;
	struct vt_scan s;
	char rel[128];
	int64_t v;
	long out = VT_SYSCTL_UNREADABLE;
	int rc;

	snprintf(rel, sizeof(rel), "sys/%s", name);
	rc = vt_procfs_read(pfs, rel, &buf, &e);
	if (rc == VT_OK) {
		s = vt_scan_init(buf.data, buf.len);
		vt_scan_blanks(&s);
		if (vt_scan_i64(&s, &v) && v > -1000 && v < 1000000)
			out = (long)v;
	} else if (rc == VT_E_NOTFOUND || (rc != VT_E_PERM && e.sys_errno == ENOENT)) {
		out = VT_SYSCTL_ABSENT;
	}
	vt_buf_release(&buf);
	return out;
}

const char *vt_cgroup_kind_name(enum vt_cgroup_kind k)
{
	switch (k) {
	case VT_CGROUPS_V1: return "v1";
	case VT_CGROUPS_V2: return "v2";
	case VT_CGROUPS_HYBRID: return "hybrid";
	default: return "none";
	}
}

/*
 * One mountinfo line split: the mount point, the filesystem type and the
 * super options (the fields after " - ").  False for a malformed line.
 */
struct mount_line {
	const char *point, *fstype, *super;
	size_t point_len, fstype_len, super_len;
};

static bool split_mount(const char *line, size_t n, struct mount_line *m)
{
	struct vt_scan s = vt_scan_init(line, n);
	const char *w;
	size_t wl;
	int i;

	/* id parent major:minor root mount-point */
	for (i = 0; i < 5; i++) {
		vt_scan_blanks(&s);
		if (!vt_scan_word(&s, &w, &wl))
			return false;
	}
	m->point = w;
	m->point_len = wl;
	for (;;) {
		vt_scan_blanks(&s);
		if (!vt_scan_word(&s, &w, &wl))
			return false;
		if (wl == 1 && w[0] == '-')
			break;
	}
	vt_scan_blanks(&s);
	if (!vt_scan_word(&s, &m->fstype, &m->fstype_len))
		return false;
	vt_scan_blanks(&s);
	if (!vt_scan_word(&s, &w, &wl))   /* source */
		return false;
	vt_scan_blanks(&s);
	if (!vt_scan_word(&s, &m->super, &m->super_len)) {
		m->super = "";
		m->super_len = 0;
	}
	return true;
}

static bool word_is(const char *w, size_t n, const char *want)
{
	return n == strlen(want) && !memcmp(w, want, n);
}

enum vt_cgroup_kind vt_mountinfo_cgroup_kind(const char *buf, size_t len)
{
	struct vt_scan s = vt_scan_init(buf, len);
	struct mount_line m;
	bool v1 = false, v2 = false;
	const char *line;
	size_t n;

	while (vt_scan_line(&s, &line, &n)) {
		if (!split_mount(line, n, &m))
			continue;
		if (word_is(m.fstype, m.fstype_len, "cgroup2"))
			v2 = true;
		else if (word_is(m.fstype, m.fstype_len, "cgroup"))
			v1 = true;
	}
	return v1 && v2 ? VT_CGROUPS_HYBRID : v2 ? VT_CGROUPS_V2 : v1 ? VT_CGROUPS_V1 : VT_CGROUPS_NONE;
}

/* The value of option key= in a comma-separated list, into out; false when absent. */
static bool option(const char *opts, size_t len, const char *key, char *out, size_t cap)
{
	size_t klen = strlen(key), i = 0;

	while (i < len) {
		size_t j = i;
		while (j < len && opts[j] != ',')
			j++;
		if (j - i > klen && !memcmp(opts + i, key, klen) && opts[i + klen] == '=') {
			size_t vl = j - i - klen - 1;
			if (vl >= cap)
				vl = cap - 1;
			memcpy(out, opts + i + klen + 1, vl);
			out[vl] = '\0';
			return true;
		}
		i = j + 1;
	}
	return false;
}

bool vt_mountinfo_proc_hidepid(const char *buf, size_t len, const char *mount_point, char *out,
			       size_t cap, long *gid)
{
	struct vt_scan s = vt_scan_init(buf, len);
	struct mount_line m;
	bool found = false;
	const char *line;
	char g[24];
	size_t n;

	if (cap)
		out[0] = '\0';
	*gid = -1;
	/* The last proc mount at that point is the one in effect. */
	while (vt_scan_line(&s, &line, &n)) {
		if (!split_mount(line, n, &m) || !word_is(m.fstype, m.fstype_len, "proc") ||
		    !word_is(m.point, m.point_len, mount_point))
			continue;
		found = true;
		if (cap)
			out[0] = '\0';
		*gid = -1;
		option(m.super, m.super_len, "hidepid", out, cap);
		if (option(m.super, m.super_len, "gid", g, sizeof(g)))
			*gid = strtol(g, NULL, 10);
	}
	return found;
}

void vt_host_caps_read(const struct vt_procfs *pfs, struct vt_host_caps *out)
{
	struct vt_buf buf = VT_BUF_INIT(4u << 20);
	struct vt_psi_line some, full;

	memset(out, 0, sizeof(*out));
	out->hidepid_gid = -1;
	if (vt_procfs_read(pfs, "sys/kernel/osrelease", &buf, NULL) == VT_OK)
		snprintf(out->kernel, sizeof(out->kernel), "%.*s", (int)strcspn(buf.data, "\n"), buf.data);
	out->ptrace_scope = vt_sysctl_read(pfs, "kernel/yama/ptrace_scope");
	out->perf_event_paranoid = vt_sysctl_read(pfs, "kernel/perf_event_paranoid");
	out->kptr_restrict = vt_sysctl_read(pfs, "kernel/kptr_restrict");
	if (vt_procfs_read(pfs, "self/status", &buf, NULL) == VT_OK)
		vt_self_status_parse(buf.data, buf.len, &out->self);
	else
		vt_self_status_parse("", 0, &out->self);
	if (vt_procfs_read(pfs, "self/mountinfo", &buf, NULL) == VT_OK) {
		out->cgroups = vt_mountinfo_cgroup_kind(buf.data, buf.len);
		out->proc_mounted = vt_mountinfo_proc_hidepid(buf.data, buf.len, "/proc", out->hidepid,
							      sizeof(out->hidepid), &out->hidepid_gid);
	}
	out->psi = vt_procfs_read(pfs, "pressure/cpu", &buf, NULL) == VT_OK &&
		   vt_psi_parse(buf.data, buf.len, &some, &full, NULL) == VT_OK;
	out->uprobe_pmu = -1;
	if (vt_sysfs_read(pfs, "bus/event_source/devices/uprobe/type", &buf, NULL) == VT_OK) {
		char *end;
		long v = strtol(buf.data, &end, 10);

		if (end != buf.data && v >= 0)
			out->uprobe_pmu = v;
	}
	out->tracefs = vt_procfs_read(pfs, "self/mounts", &buf, NULL) == VT_OK &&
		       memmem(buf.data, buf.len, " tracefs ", 9) != NULL;
	vt_buf_release(&buf);
}

/*
 * cgroup.c — the memory and cpu cgroups of a process: where they are and what
 * they say.
 *
 * Resolves /proc/PID/cgroup (cgroups(7)) against the reader's mountinfo
 * (proc(5)) to a directory under the sys root, then reads the v1 or v2
 * memory controller files there, or walks from that directory up to the
 * mount for the tightest CPU quota (Documentation/admin-guide/cgroup-v2.rst,
 * cgroup-v1/memory.rst, scheduler/sched-bwc.rst).  It only reads: it never
 * writes a cgroup file and never guesses a figure — an absent or unreadable
 * file leaves VT_NA.  Parsing the text is not its job: that is
 * cgroup_parse.c, mountinfo.c and psi.c, each fuzzed on its own
 * (fuzz/fuzz_cgroup.c, fuzz_mountinfo.c, fuzz_psi.c).
 */
#include "proc/cgroup.h"
#include "proc/mountinfo.h"
#include "base/unknown.h"
#include "base/scan.h"

#include <stdio.h>
#include <string.h>

/* cgroup files are a line or two; /proc/PID/cgroup and mountinfo can be long. */
#define CG_FILE_MAX (16u << 20)
/* A mountinfo path field, decoded (PATH_MAX). */
#define CG_MOUNT_PATH_MAX 4096

/* ---- reading a cgroup directory ---- */

struct cg_dir {
	const struct vt_procfs *pfs;
	const char *dir;          /* relative to the sys root */
	struct vt_buf *buf;       /* holds the last file read */
	struct vt_err *err;
	char rel[sizeof(((struct vt_cgroup_mem *)0)->dir) + 64];   /* dir/name */
};

enum cg_file { CG_FILE_READ, CG_FILE_ABSENT, CG_FILE_UNREADABLE };

/*
 * Read dir/name into cd->buf.  A missing file (older kernel, no swap
 * accounting, PSI off) or an unreadable one (EACCES, EOPNOTSUPP) is not an
 * error: *state says which, and the caller leaves its figure VT_NA.
 */
static int cg_file_read(struct cg_dir *cd, const char *name, enum cg_file *state)
{
	int rc;

	*state = CG_FILE_READ;
	snprintf(cd->rel, sizeof(cd->rel), "%s/%s", cd->dir, name);
	rc = vt_sysfs_read(cd->pfs, cd->rel, cd->buf, cd->err);
	if (rc == VT_E_NOTFOUND || rc == VT_E_PERM || rc == VT_E_IO) {
		*state = rc == VT_E_NOTFOUND ? CG_FILE_ABSENT : CG_FILE_UNREADABLE;
		vt_err_clear(cd->err);
		return VT_OK;
	}
	return rc;
}

/* Put the file's name in front of a parser's message. */
static int cg_parse_failed(struct cg_dir *cd, int rc)
{
	char why[VT_ERR_MSG_MAX];

	if (!cd->err)
		return rc;
	memcpy(why, cd->err->msg, sizeof(why));
	return vt_err_set(cd->err, rc, 0, "'%s/%s': %s", cd->pfs->sys_root, cd->rel, why);
}

static int cg_read_counter(struct cg_dir *cd, const char *name, uint64_t *value,
			   enum cg_file *state)
{
	int rc = cg_file_read(cd, name, state);

	if (rc || *state != CG_FILE_READ)
		return rc;
	rc = vt_cgroup_parse_counter(cd->buf->data, cd->buf->len, value, cd->err);
	return rc ? cg_parse_failed(cd, rc) : VT_OK;
}

static int cg_read_limit(struct cg_dir *cd, const char *name, uint64_t *value, bool *is_max)
{
	enum cg_file state;
	int rc = cg_file_read(cd, name, &state);

	if (rc || state != CG_FILE_READ)
		return rc;
	rc = vt_cgroup_parse_limit(cd->buf->data, cd->buf->len, value, is_max, cd->err);
	return rc ? cg_parse_failed(cd, rc) : VT_OK;
}

typedef int (*cg_parser)(const char *buf, size_t len, struct vt_cgroup_mem *out,
			 struct vt_err *err);

static int cg_read_parsed(struct cg_dir *cd, const char *name, cg_parser parse,
			  struct vt_cgroup_mem *out)
{
	enum cg_file state;
	int rc = cg_file_read(cd, name, &state);

	if (rc || state != CG_FILE_READ)
		return rc;
	rc = parse(cd->buf->data, cd->buf->len, out, cd->err);
	return rc ? cg_parse_failed(cd, rc) : VT_OK;
}

static int parse_memory_pressure(const char *buf, size_t len, struct vt_cgroup_mem *out,
				 struct vt_err *err)
{
	return vt_psi_parse(buf, len, &out->psi_some, &out->psi_full, err);
}

static void v1_unlimited(uint64_t *value, bool *is_max)
{
	if (vt_known(*value) && *value >= VT_CGROUP_V1_UNLIMITED) {
		*value = VT_NA;
		*is_max = true;
	}
}

/*
 * v1 counts memory+swap together (memsw); swap is the difference.  The two
 * files are read at different instants, so a memsw below usage is a race,
 * not negative swap: it stays unknown.
 */
static void v1_swap_from_memsw(struct vt_cgroup_mem *out, uint64_t memsw_usage,
			       uint64_t memsw_limit, bool memsw_limit_is_max)
{
	if (vt_known(memsw_usage) && vt_known(out->usage) && memsw_usage >= out->usage)
		out->swap_usage = memsw_usage - out->usage;
	if (memsw_limit_is_max)
		out->swap_limit_is_max = true;
	else if (vt_known(memsw_limit) && vt_known(out->limit) && memsw_limit >= out->limit)
		out->swap_limit = memsw_limit - out->limit;
}

static int read_v1(struct cg_dir *cd, struct vt_cgroup_mem *out)
{
	uint64_t memsw_usage = VT_NA, memsw_limit = VT_NA;
	bool memsw_limit_is_max = false;
	const struct { const char *name; uint64_t *value; } counters[] = {
		{ "memory.max_usage_in_bytes", &out->peak },
		{ "memory.failcnt", &out->events_max },
		{ "memory.memsw.usage_in_bytes", &memsw_usage },
	};
	enum cg_file state;
	size_t i;
	int rc;

	rc = cg_read_counter(cd, "memory.usage_in_bytes", &out->usage, &state);
	if (rc)
		return rc;
	if (state == CG_FILE_ABSENT)
		return vt_err_set(cd->err, VT_E_NOTFOUND, 0, "no memory cgroup at '%s/%s'",
				  cd->pfs->sys_root, cd->dir);
	out->version = 1;
	for (i = 0; i < sizeof(counters) / sizeof(counters[0]); i++) {
		rc = cg_read_counter(cd, counters[i].name, counters[i].value, &state);
		if (rc)
			return rc;
	}
	rc = cg_read_limit(cd, "memory.limit_in_bytes", &out->limit, &out->limit_is_max);
	if (rc)
		return rc;
	rc = cg_read_limit(cd, "memory.memsw.limit_in_bytes", &memsw_limit, &memsw_limit_is_max);
	if (rc)
		return rc;
	v1_unlimited(&out->limit, &out->limit_is_max);
	v1_unlimited(&memsw_limit, &memsw_limit_is_max);
	v1_swap_from_memsw(out, memsw_usage, memsw_limit, memsw_limit_is_max);
	return cg_read_parsed(cd, "memory.oom_control", vt_cgroup_parse_oom_control, out);
}

static int read_v2(struct cg_dir *cd, struct vt_cgroup_mem *out)
{
	enum cg_file state;
	int rc;

	/* No memory.current: the root cgroup, or memory not enabled for it. */
	rc = cg_read_counter(cd, "memory.current", &out->usage, &state);
	if (rc || state == CG_FILE_ABSENT)
		return rc;
	out->version = 2;
	rc = cg_read_limit(cd, "memory.max", &out->limit, &out->limit_is_max);
	if (!rc)
		rc = cg_read_counter(cd, "memory.peak", &out->peak, &state);   /* Linux 5.19+ */
	if (!rc)
		rc = cg_read_counter(cd, "memory.swap.current", &out->swap_usage, &state);
	if (!rc)
		rc = cg_read_limit(cd, "memory.swap.max", &out->swap_limit,
				   &out->swap_limit_is_max);
	if (!rc)
		rc = cg_read_parsed(cd, "memory.events", vt_cgroup_parse_events, out);
	if (!rc)
		rc = cg_read_parsed(cd, "memory.pressure", parse_memory_pressure, out);
	return rc;
}

/* ---- locating the directory ---- */

/* Where a process's cgroup of one controller is. */
struct cg_where {
	int version;                                      /* 1 or 2; 0 none */
	char path[sizeof(((struct vt_cgroup_mem *)0)->path)];   /* as in /proc/PID/cgroup */
	char dir[sizeof(((struct vt_cgroup_mem *)0)->dir)];     /* relative to the sys root */
	size_t top_len;           /* dir[0, top_len) is the mount point: the top of the hierarchy */
};

/*
 * The path in /proc/PID/cgroup and the mount's root (mountinfo field 4) are
 * both relative to the reader's cgroup namespace, so a mount of a subtree
 * (root "/docker/ID") serves exactly the paths below that root.
 */
static const char *path_below_root(const char *path, const char *root)
{
	size_t n = strlen(root);

	while (n && root[n - 1] == '/')
		n--;
	if (strncmp(path, root, n) != 0 || (path[n] != '\0' && path[n] != '/'))
		return NULL;
	return path + n;
}

static int cgroup_locate(const char *mount_point, const char *mount_root, const char *path,
			 int version, struct cg_where *w, struct vt_err *err)
{
	const char *rel = path_below_root(path, mount_root);
	int n;

	if (strncmp(mount_point, "/sys/", 5) != 0 || !mount_point[5]) {
		vt_err_set(err, VT_E_NOTFOUND, 0,
			   "cgroup filesystem is mounted at '%s', not under /sys", mount_point);
		vt_err_hint(err, "vitals reads cgroups under the sys root; "
			    "mount them at /sys/fs/cgroup");
		return VT_E_NOTFOUND;
	}
	if (!rel)
		return vt_err_set(err, VT_E_NOTFOUND, 0,
				  "cgroup '%s' is outside the part mounted at '%s' (root '%s')",
				  path, mount_point, mount_root);
	if (!strcmp(rel, "/"))
		rel = "";
	n = snprintf(w->dir, sizeof(w->dir), "%s%s", mount_point + 5, rel);
	if (n < 0 || (size_t)n >= sizeof(w->dir))
		return vt_err_set(err, VT_E_NOTFOUND, 0, "cgroup directory of '%s' is too long",
				  path);
	w->top_len = strlen(mount_point + 5);
	vt_copy_str(w->path, sizeof(w->path), path, strlen(path));
	w->version = version;
	return VT_OK;
}

/* Both paths empty when the kernel has no cgroups (no /proc/PID/cgroup). */
static int read_membership(int pid_fd, struct vt_buf *buf, const char *controller, char *v2_path,
			   char *v1_path, size_t cap, struct vt_err *err)
{
	int rc = vt_read_at(pid_fd, "cgroup", buf, err);

	v2_path[0] = v1_path[0] = '\0';
	if (rc == VT_E_NOTFOUND) {
		vt_err_clear(err);
		return VT_OK;
	}
	if (rc)
		return rc;
	return vt_cgroup_parse_membership_of(buf->data, buf->len, controller, v2_path, cap, v1_path,
					     cap, err);
}

/*
 * The process's cgroup of controller ("memory", "cpu"); w->version 0 when it
 * has none (no cgroups, or no mounted hierarchy for it).
 */
static int cgroup_find(const struct vt_procfs *pfs, int pid_fd, struct vt_buf *buf,
		       const char *controller, struct cg_where *w, struct vt_err *err)
{
	char v2_path[sizeof(w->path)], v1_path[sizeof(w->path)];
	char mount_point[CG_MOUNT_PATH_MAX], mount_root[CG_MOUNT_PATH_MAX];
	int rc;

	w->version = 0;
	w->path[0] = w->dir[0] = '\0';
	w->top_len = 0;
	rc = read_membership(pid_fd, buf, controller, v2_path, v1_path, sizeof(v2_path), err);
	if (rc || (!v2_path[0] && !v1_path[0]))
		return rc;
	rc = vt_procfs_read(pfs, "self/mountinfo", buf, err);
	if (rc)
		return rc;
	/* Hybrid systems mount cgroup2 too, but the controller then lives in v1. */
	if (v1_path[0] && vt_mountinfo_find_cgroup_of(buf->data, buf->len, controller, mount_point,
						      sizeof(mount_point), mount_root,
						      sizeof(mount_root)))
		return cgroup_locate(mount_point, mount_root, v1_path, 1, w, err);
	if (v2_path[0] && vt_mountinfo_find_cgroup_of(buf->data, buf->len, NULL, mount_point,
						      sizeof(mount_point), mount_root,
						      sizeof(mount_root)))
		return cgroup_locate(mount_point, mount_root, v2_path, 2, w, err);
	return VT_OK;
}

/* ---- vt_cgroup_read ---- */

static void cgroup_mem_init(struct vt_cgroup_mem *out)
{
	memset(out, 0, sizeof(*out));
	out->usage = out->limit = out->peak = VT_NA;
	out->swap_usage = out->swap_limit = VT_NA;
	out->events_low = out->events_high = out->events_max = VT_NA;
	out->events_oom = out->events_oom_kill = VT_NA;
}

int vt_cgroup_read(const struct vt_procfs *pfs, int pid_fd, struct vt_cgroup_mem *out,
		   struct vt_err *err)
{
	struct vt_buf buf = VT_BUF_INIT(CG_FILE_MAX);
	struct cg_dir cd = { .pfs = pfs, .dir = out->dir, .buf = &buf, .err = err };
	struct cg_where w;
	int rc;

	cgroup_mem_init(out);
	rc = cgroup_find(pfs, pid_fd, &buf, "memory", &w, err);
	if (rc || !w.version)
		goto release_buf;
	memcpy(out->path, w.path, sizeof(out->path));
	memcpy(out->dir, w.dir, sizeof(out->dir));
	rc = w.version == 1 ? read_v1(&cd, out) : read_v2(&cd, out);
	if (!rc && !out->version)
		cgroup_mem_init(out);   /* a v2 directory without memory */
release_buf:
	if (rc)
		cgroup_mem_init(out);   /* no half-read figures next to an error */
	vt_buf_release(&buf);
	return rc;
}

int vt_cgroup_reread(const struct vt_procfs *pfs, const struct vt_cgroup_mem *was, struct vt_cgroup_mem *out,
		     struct vt_err *err)
{
	struct vt_buf buf = VT_BUF_INIT(CG_FILE_MAX);
	struct cg_dir cd = { .pfs = pfs, .dir = out->dir, .buf = &buf, .err = err };
	int rc;

	cgroup_mem_init(out);
	if (was->version != 1 && was->version != 2)
		return vt_err_set(err, VT_E_NOTFOUND, 0, "no memory cgroup to read again");
	memcpy(out->path, was->path, sizeof(out->path));
	memcpy(out->dir, was->dir, sizeof(out->dir));
	/* a directory that is gone reads as one without memory.current (v1: VT_E_NOTFOUND) */
	rc = was->version == 1 ? read_v1(&cd, out) : read_v2(&cd, out);
	if (rc || !out->version)
		cgroup_mem_init(out);
	if (!rc && !out->version)
		rc = vt_err_set(err, VT_E_NOTFOUND, 0, "cgroup '%s' has no memory figures any more", was->path);
	vt_buf_release(&buf);
	return rc;
}

/* ---- vt_cgroup_cpu_read ---- */

static void cgroup_cpu_init(struct vt_cgroup_cpu *out)
{
	memset(out, 0, sizeof(*out));
	out->quota_cores = -1;
	out->quota_us = out->period_us = VT_NA;
	out->nr_periods = out->nr_throttled = out->throttled_usec = VT_NA;
}

/*
 * The quota and period set in cd->dir (VT_NA when none); *found when the
 * directory has the cpu controller's limit file.
 */
static int cpu_level_limit(struct cg_dir *cd, bool v1, uint64_t *quota, uint64_t *period,
			   bool *found)
{
	enum cg_file state;
	int rc;

	*quota = *period = VT_NA;
	rc = cg_file_read(cd, v1 ? "cpu.cfs_quota_us" : "cpu.max", &state);
	*found = !rc && state != CG_FILE_ABSENT;
	if (rc || state != CG_FILE_READ)
		return rc;
	if (!v1) {
		rc = vt_cgroup_parse_cpu_max(cd->buf->data, cd->buf->len, quota, period, cd->err);
		return rc ? cg_parse_failed(cd, rc) : VT_OK;
	}
	rc = vt_cgroup_parse_cfs_quota(cd->buf->data, cd->buf->len, quota, cd->err);
	if (rc)
		return cg_parse_failed(cd, rc);
	if (!vt_known(*quota))
		return VT_OK;
	rc = cg_read_counter(cd, "cpu.cfs_period_us", period, &state);
	if (!rc && *period == 0) {
		rc = vt_err_set(cd->err, VT_E_PARSE, 0, "cgroup: a period of 0");
		return cg_parse_failed(cd, rc);
	}
	if (!vt_known(*period))
		*quota = VT_NA;   /* a quota without its period limits nothing we can say */
	return rc;
}

/* Keep quota/period of dir if it is tighter than the limit so far (ties: the nearer one). */
static void cpu_tighten(struct vt_cgroup_cpu *out, const char *dir, uint64_t quota,
			uint64_t period)
{
	double cores;

	if (!vt_known(quota) || !vt_known(period))
		return;
	cores = (double)quota / (double)period;
	if (out->quota_cores >= 0 && cores >= out->quota_cores)
		return;
	out->quota_cores = cores;
	out->quota_us = quota;
	out->period_us = period;
	vt_copy_str(out->limit_dir, sizeof(out->limit_dir), dir, strlen(dir));
}

/* dir becomes its parent; false when it is already the top of the mount. */
static bool cg_dir_up(char *dir, size_t top_len)
{
	char *slash;

	if (strlen(dir) <= top_len)
		return false;
	slash = strrchr(dir + top_len, '/');
	if (!slash)
		return false;
	*slash = '\0';
	return true;
}

static int read_cpu(const struct vt_procfs *pfs, struct vt_buf *buf, const struct cg_where *w,
		    struct vt_cgroup_cpu *out, struct vt_err *err)
{
	char level[sizeof(w->dir)];
	struct cg_dir cd = { .pfs = pfs, .dir = level, .buf = buf, .err = err };
	bool v1 = w->version == 1, found, any = false;
	uint64_t quota, period;
	enum cg_file state;
	int rc;

	memcpy(level, w->dir, sizeof(level));
	do {
		rc = cpu_level_limit(&cd, v1, &quota, &period, &found);
		if (rc)
			return rc;
		any = any || found;
		cpu_tighten(out, level, quota, period);
	} while (cg_dir_up(level, w->top_len));
	if (!any)
		return VT_OK;   /* the v2 root, or cpu not enabled on the path: version 0 */
	out->version = w->version;
	cd.dir = w->dir;
	rc = cg_file_read(&cd, "cpu.stat", &state);
	if (rc || state != CG_FILE_READ)
		return rc;
	rc = vt_cgroup_parse_cpu_stat(buf->data, buf->len, v1, out, err);
	return rc ? cg_parse_failed(&cd, rc) : VT_OK;
}

int vt_cgroup_cpu_read(const struct vt_procfs *pfs, int pid_fd, struct vt_cgroup_cpu *out,
		       struct vt_err *err)
{
	struct vt_buf buf = VT_BUF_INIT(CG_FILE_MAX);
	struct cg_where w;
	int rc;

	cgroup_cpu_init(out);
	rc = cgroup_find(pfs, pid_fd, &buf, "cpu", &w, err);
	if (!rc && w.version)
		rc = read_cpu(pfs, &buf, &w, out, err);
	if (rc)
		cgroup_cpu_init(out);   /* no half-read figures next to an error */
	vt_buf_release(&buf);
	return rc;
}

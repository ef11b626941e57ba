/*
 * test_cgroup.c — memory and cpu cgroup lookup (src/proc/cgroup.c) and the
 * parsers under it (cgroup_parse.c, mountinfo.c, psi.c).
 *
 * End-to-end cases read the trees under tests/fixtures/cgroup/ (see its
 * README for what was recorded on a real hybrid v1 machine and what was
 * built from the kernel's documented v2 formats); parser cases feed strings.
 */
#include "harness.h"
#include "base/unknown.h"

#include "proc/cgroup.h"
#include "proc/cgroup_parse.h"
#include "proc/mountinfo.h"
#include "proc/psi.h"

#include <unistd.h>

#define TEXT(s) s, sizeof(s) - 1

#define V1_REC_PID 2724
#define V1_REC_PATH "/process_api/37e7c0f45076c9a135aee595c3269f82"

/*
 * vt_procfs_open + vt_pid_open + vt_cgroup_read (cg) or vt_cgroup_cpu_read
 * (cpu) on tests/fixtures/cgroup/<tree>.
 */
static int read_tree_of(const char *tree, pid_t pid, struct vt_cgroup_mem *cg,
			struct vt_cgroup_cpu *cpu, struct vt_err *err)
{
	char rel[256], proc[1100], sys[1100];
	struct vt_procfs pfs;
	int fd, rc;

	snprintf(rel, sizeof(rel), "cgroup/%s", tree);
	snprintf(proc, sizeof(proc), "%s/proc", vt_fixture_path(rel));
	snprintf(sys, sizeof(sys), "%s/sys", vt_fixture_path(rel));
	vt_err_clear(err);
	rc = vt_procfs_open(&pfs, proc, sys, err);
	if (rc)
		return rc;
	rc = vt_pid_open(&pfs, pid, &fd, err);
	if (!rc) {
		rc = cg ? vt_cgroup_read(&pfs, fd, cg, err) : vt_cgroup_cpu_read(&pfs, fd, cpu, err);
		close(fd);
	}
	vt_procfs_close(&pfs);
	return rc;
}

static int read_tree(const char *tree, pid_t pid, struct vt_cgroup_mem *cg, struct vt_err *err)
{
	return read_tree_of(tree, pid, cg, NULL, err);
}

static int read_cpu_tree(const char *tree, pid_t pid, struct vt_cgroup_cpu *cpu,
			 struct vt_err *err)
{
	return read_tree_of(tree, pid, NULL, cpu, err);
}

/* quota_cores is quota/period: exact for the fixtures' values, but compare with slack. */
static bool cores_are(double got, double want)
{
	return got > want - 1e-9 && got < want + 1e-9;
}

static void check_no_cpu_limit(const struct vt_cgroup_cpu *cpu)
{
	CHECK(cpu->quota_cores < 0);
	CHECK_STR(cpu->limit_dir, "");
	CHECK_EQ_U64(cpu->quota_us, VT_NA);
	CHECK_EQ_U64(cpu->period_us, VT_NA);
}

static void check_no_cpu_stat(const struct vt_cgroup_cpu *cpu)
{
	CHECK_EQ_U64(cpu->nr_periods, VT_NA);
	CHECK_EQ_U64(cpu->nr_throttled, VT_NA);
	CHECK_EQ_U64(cpu->throttled_usec, VT_NA);
}

static void check_no_psi(const struct vt_cgroup_mem *cg)
{
	CHECK(!cg->psi_some.present);
	CHECK(!cg->psi_full.present);
}

/* ---- end to end on fixture trees ---- */

static void test_cgroup__v1_hybrid_layout(void)
{
	struct vt_cgroup_mem cg;
	struct vt_err err;

	CHECK_EQ_I64(read_tree("v1", V1_REC_PID, &cg, &err), VT_OK);
	CHECK_EQ_I64(cg.version, 1);
	CHECK_STR(cg.path, V1_REC_PATH);
	CHECK_STR(cg.dir, "fs/cgroup/memory" V1_REC_PATH);
	CHECK_EQ_U64(cg.usage, 4898816);
	CHECK(cg.limit_is_max);              /* 9223372036854771712 */
	CHECK_EQ_U64(cg.limit, VT_NA);
	CHECK_EQ_U64(cg.peak, 8052736);
	CHECK_EQ_U64(cg.swap_usage, 5062656 - 4898816);
	CHECK(cg.swap_limit_is_max);
	CHECK_EQ_U64(cg.swap_limit, VT_NA);
	CHECK_EQ_U64(cg.events_max, 0);      /* memory.failcnt */
	CHECK_EQ_U64(cg.events_oom_kill, 0);
	CHECK_EQ_U64(cg.events_low, VT_NA);
	CHECK_EQ_U64(cg.events_high, VT_NA);
	CHECK_EQ_U64(cg.events_oom, VT_NA);
	check_no_psi(&cg);
}

static void test_cgroup__v1_limited_with_memsw(void)
{
	struct vt_cgroup_mem cg;
	struct vt_err err;

	CHECK_EQ_I64(read_tree("v1_limited", 3100, &cg, &err), VT_OK);
	CHECK_EQ_I64(cg.version, 1);
	CHECK_STR(cg.dir, "fs/cgroup/memory/batch/job-7");
	CHECK_EQ_U64(cg.usage, 402653184);
	CHECK(!cg.limit_is_max);
	CHECK_EQ_U64(cg.limit, 536870912);
	CHECK_EQ_U64(cg.peak, 536870912);
	CHECK_EQ_U64(cg.swap_usage, 419430400 - 402653184);
	CHECK(!cg.swap_limit_is_max);
	CHECK_EQ_U64(cg.swap_limit, 1073741824 - 536870912);
	CHECK_EQ_U64(cg.events_max, 12);
	CHECK_EQ_U64(cg.events_oom_kill, 2);
}

/* swapaccount=0 (no memsw files), pre-4.13 oom_control, limit exactly 2^62. */
static void test_cgroup__v1_no_memsw_old_kernel(void)
{
	struct vt_cgroup_mem cg;
	struct vt_err err;

	CHECK_EQ_I64(read_tree("v1_noswap", 3200, &cg, &err), VT_OK);
	CHECK_EQ_I64(cg.version, 1);
	CHECK_EQ_U64(cg.usage, 104857600);
	CHECK(cg.limit_is_max);
	CHECK_EQ_U64(cg.limit, VT_NA);
	CHECK_EQ_U64(cg.swap_usage, VT_NA);
	CHECK_EQ_U64(cg.swap_limit, VT_NA);
	CHECK(!cg.swap_limit_is_max);
	CHECK_EQ_U64(cg.events_max, 0);
	CHECK_EQ_U64(cg.events_oom_kill, VT_NA);
}

static void test_cgroup__v2_layout(void)
{
	struct vt_cgroup_mem cg;
	struct vt_err err;

	CHECK_EQ_I64(read_tree("v2", 4242, &cg, &err), VT_OK);
	CHECK_EQ_I64(cg.version, 2);
	CHECK_STR(cg.path, "/system.slice/demo.service");
	CHECK_STR(cg.dir, "fs/cgroup/system.slice/demo.service");
	CHECK_EQ_U64(cg.usage, 734003200);
	CHECK(!cg.limit_is_max);
	CHECK_EQ_U64(cg.limit, 1073741824);
	CHECK_EQ_U64(cg.peak, 901775360);
	CHECK_EQ_U64(cg.swap_usage, 16777216);
	CHECK(cg.swap_limit_is_max);
	CHECK_EQ_U64(cg.swap_limit, VT_NA);
	CHECK_EQ_U64(cg.events_low, 0);
	CHECK_EQ_U64(cg.events_high, 0);
	CHECK_EQ_U64(cg.events_max, 7);
	CHECK_EQ_U64(cg.events_oom, 1);
	CHECK_EQ_U64(cg.events_oom_kill, 1);
	CHECK(cg.psi_some.present);
	CHECK(cg.psi_some.avg10 > 1.229 && cg.psi_some.avg10 < 1.231);
	CHECK_EQ_U64(cg.psi_some.total_us, 1234567);
	CHECK(cg.psi_full.present);
	CHECK(cg.psi_full.avg60 > 0.249 && cg.psi_full.avg60 < 0.251);
	CHECK_EQ_U64(cg.psi_full.total_us, 654321);
}

/* Before 5.19 (no memory.peak), PSI off, swap.current unreadable (a directory). */
static void test_cgroup__v2_old_kernel_missing_files(void)
{
	struct vt_cgroup_mem cg;
	struct vt_err err;

	CHECK_EQ_I64(read_tree("v2_old", 5000, &cg, &err), VT_OK);
	CHECK_EQ_I64(cg.version, 2);
	CHECK_EQ_U64(cg.usage, 52428800);
	CHECK(cg.limit_is_max);
	CHECK_EQ_U64(cg.limit, VT_NA);
	CHECK_EQ_U64(cg.peak, VT_NA);
	CHECK_EQ_U64(cg.swap_usage, VT_NA);
	CHECK_EQ_U64(cg.swap_limit, VT_NA);
	CHECK(!cg.swap_limit_is_max);
	CHECK_EQ_U64(cg.events_max, 0);
	check_no_psi(&cg);
	CHECK_EQ_I64(err.code, VT_OK);   /* tolerated failures leave no error behind */
}

static void test_cgroup__v2_namespace_root_stripped(void)
{
	struct vt_cgroup_mem cg;
	struct vt_err err;

	CHECK_EQ_I64(read_tree("v2_ns", 10, &cg, &err), VT_OK);
	CHECK_EQ_I64(cg.version, 2);
	CHECK_STR(cg.path, "/docker/4f1c9d2e7a3b");
	CHECK_STR(cg.dir, "fs/cgroup");
	CHECK_EQ_U64(cg.usage, 268435456);
	CHECK_EQ_U64(cg.limit, 536870912);

	CHECK_EQ_I64(read_tree("v2_ns", 11, &cg, &err), VT_OK);
	CHECK_STR(cg.dir, "fs/cgroup/worker");
	CHECK_EQ_U64(cg.usage, 1048576);
	CHECK(cg.limit_is_max);
}

static void test_cgroup__v2_outside_mounted_subtree(void)
{
	struct vt_cgroup_mem cg;
	struct vt_err err;

	CHECK_EQ_I64(read_tree("v2_ns", 12, &cg, &err), VT_E_NOTFOUND);
	CHECK(strstr(err.msg, "outside") != NULL);
	CHECK_EQ_I64(cg.version, 0);
	/* "/docker/<id>x" shares the string prefix but not the directory. */
	CHECK_EQ_I64(read_tree("v2_ns", 13, &cg, &err), VT_E_NOTFOUND);
}

static void test_cgroup__mount_outside_sys(void)
{
	struct vt_cgroup_mem cg;
	struct vt_err err;

	CHECK_EQ_I64(read_tree("v2_elsewhere", 20, &cg, &err), VT_E_NOTFOUND);
	CHECK(strstr(err.msg, "'/cgroup2', not under /sys") != NULL);
	CHECK(err.hint[0] != '\0');
}

static void test_cgroup__no_memory_cgroup(void)
{
	struct vt_cgroup_mem cg;
	struct vt_err err;

	/* v2 root cgroup: no memory.current there. */
	CHECK_EQ_I64(read_tree("none", 1, &cg, &err), VT_OK);
	CHECK_EQ_I64(cg.version, 0);
	CHECK_STR(cg.path, "");
	CHECK_STR(cg.dir, "");
	CHECK_EQ_U64(cg.usage, VT_NA);
	CHECK_EQ_U64(cg.limit, VT_NA);
	check_no_psi(&cg);
	/* Kernel without cgroups: no /proc/PID/cgroup at all. */
	CHECK_EQ_I64(read_tree("none", 2, &cg, &err), VT_OK);
	CHECK_EQ_I64(cg.version, 0);
}

static void test_cgroup__process_gone(void)
{
	struct vt_cgroup_mem cg;
	struct vt_err err;

	CHECK_EQ_I64(read_tree("none", 3, &cg, &err), VT_E_GONE);
	CHECK_EQ_I64(cg.version, 0);
}

static void test_cgroup__corrupt_file_named(void)
{
	struct vt_cgroup_mem cg;
	struct vt_err err;

	CHECK_EQ_I64(read_tree("v2", 4243, &cg, &err), VT_E_PARSE);
	CHECK(strstr(err.msg, "broken.service/memory.max") != NULL);
	CHECK(strstr(err.msg, "'12abc'") != NULL);
	CHECK_EQ_I64(cg.version, 0);
	CHECK_EQ_U64(cg.usage, VT_NA);
}

/* ---- /proc/PID/cgroup ---- */

static void test_cgroup__membership_recorded(void)
{
	char v2[64], v1[128];
	size_t len;
	char *text = vt_fixture("cgroup/v1/proc/2724/cgroup", &len);

	CHECK_EQ_I64(vt_cgroup_parse_membership(text, len, v2, sizeof(v2), v1, sizeof(v1), NULL),
		     VT_OK);
	CHECK_STR(v2, "/");
	CHECK_STR(v1, V1_REC_PATH);
	free(text);
}

static void test_cgroup__membership_variants(void)
{
	char v2[64], v1[64];

	CHECK_EQ_I64(vt_cgroup_parse_membership(TEXT("0::/a.slice/b:c.scope\n"), v2, sizeof(v2), v1,
						sizeof(v1), NULL), VT_OK);
	CHECK_STR(v2, "/a.slice/b:c.scope");
	CHECK_STR(v1, "");
	/* memory co-mounted with other controllers; no trailing newline */
	CHECK_EQ_I64(vt_cgroup_parse_membership(TEXT("5:cpu,memory:/x\n2:memoryx:/no"), v2,
						sizeof(v2), v1, sizeof(v1), NULL), VT_OK);
	CHECK_STR(v1, "/x");
	CHECK_STR(v2, "");
	CHECK_EQ_I64(vt_cgroup_parse_membership(TEXT(""), v2, sizeof(v2), v1, sizeof(v1), NULL),
		     VT_OK);
	CHECK_STR(v1, "");
}

static void test_cgroup__membership_garbage_rejected(void)
{
	static const char *const bad[] = {
		"garbage\n", "4:memory\n", "x:memory:/a\n", "4:memory:relative\n", "4:memory:\n",
		"0::/ok\n:memory:/a\n", "4memory:/a\n",
	};
	char v2[16], v1[16];
	struct vt_err err;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		vt_err_clear(&err);
		CHECK_EQ_I64(vt_cgroup_parse_membership(bad[i], strlen(bad[i]), v2, sizeof(v2), v1,
							sizeof(v1), &err), VT_E_PARSE);
		CHECK(strstr(err.msg, "is not 'id:controllers:/path'") != NULL);
	}
	CHECK_EQ_I64(vt_cgroup_parse_membership(TEXT("4:memory:/a/very/long/cgroup/path\n"), v2,
						sizeof(v2), v1, sizeof(v1), &err), VT_E_PARSE);
	CHECK(strstr(err.msg, "longer than 15 bytes") != NULL);
}

/* ---- mountinfo ---- */

static void test_cgroup__mountinfo_hybrid(void)
{
	char mp[256], root[256];
	size_t len;
	char *text = vt_fixture("cgroup/v1/proc/self/mountinfo", &len);

	CHECK(vt_mountinfo_find_cgroup(text, len, true, mp, sizeof(mp), root, sizeof(root)));
	CHECK_STR(mp, "/sys/fs/cgroup/memory");
	CHECK_STR(root, "/");
	CHECK(vt_mountinfo_find_cgroup(text, len, false, mp, sizeof(mp), root, sizeof(root)));
	CHECK_STR(mp, "/sys/fs/cgroup/unified");
	/* Caps too small: not found rather than truncated. */
	CHECK(!vt_mountinfo_find_cgroup(text, len, true, mp, 8, root, sizeof(root)));
	free(text);
}

static void test_cgroup__mountinfo_pure_v2(void)
{
	char mp[256], root[256];
	size_t len;
	char *text = vt_fixture("cgroup/v2/proc/self/mountinfo", &len);

	CHECK(!vt_mountinfo_find_cgroup(text, len, true, mp, sizeof(mp), root, sizeof(root)));
	CHECK(vt_mountinfo_find_cgroup(text, len, false, mp, sizeof(mp), root, sizeof(root)));
	CHECK_STR(mp, "/sys/fs/cgroup");
	free(text);
}

static void test_cgroup__mountinfo_escapes_and_preference(void)
{
	static const char text[] =
		"bad line\n"
		"40 31 0:37 / /mnt/cg\\040two rw - cgroup2 cgroup2 rw\n"
		"41 31 0:38 /a\\134b /sys/fs/cgroup rw shared:4 master:1 - cgroup2 cgroup2 rw\n"
		"42 31 0:39 / /sys/other rw - cgroup2 cgroup2 rw\n"
		"43 31 0:40 / /sys/fs/cgroup/memory rw - cgroup none rw,name=memory\n";
	char mp[64], root[64];

	/* The /sys one wins over the earlier mount elsewhere; the first /sys one is kept. */
	CHECK(vt_mountinfo_find_cgroup(TEXT(text), false, mp, sizeof(mp), root, sizeof(root)));
	CHECK_STR(mp, "/sys/fs/cgroup");
	CHECK_STR(root, "/a\\b");
	/* Without a /sys mount, the first one, decoded. */
	CHECK(vt_mountinfo_find_cgroup(text, (size_t)(strstr(text, "41 31") - text), false, mp,
				       sizeof(mp), root, sizeof(root)));
	CHECK_STR(mp, "/mnt/cg two");
	/* name=memory is a named hierarchy, not the memory controller. */
	CHECK(!vt_mountinfo_find_cgroup(TEXT(text), true, mp, sizeof(mp), root, sizeof(root)));
}

/* ---- single values ---- */

static void test_cgroup__limit_max_vs_number(void)
{
	uint64_t v;
	bool is_max;

	CHECK_EQ_I64(vt_cgroup_parse_limit(TEXT("max\n"), &v, &is_max, NULL), VT_OK);
	CHECK(is_max);
	CHECK_EQ_U64(v, VT_NA);
	CHECK_EQ_I64(vt_cgroup_parse_limit(TEXT("536870912\n"), &v, &is_max, NULL), VT_OK);
	CHECK(!is_max);
	CHECK_EQ_U64(v, 536870912);
	CHECK_EQ_I64(vt_cgroup_parse_limit(TEXT("9223372036854771712"), &v, &is_max, NULL), VT_OK);
	CHECK_EQ_U64(v, 9223372036854771712u);
	CHECK(!is_max);   /* the v1 sentinel is the reader's business, not the parser's */
}

static void test_cgroup__limit_garbage_rejected(void)
{
	static const char *const bad[] = {
		"", "\n", "12abc\n", "-1\n", "max2\n", "ma", "1 2\n", "12\n\n",
		"99999999999999999999\n", "18446744073709551615\n", "maxx", "MAX\n",
	};
	struct vt_err err;
	uint64_t v;
	bool is_max;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_EQ_I64(vt_cgroup_parse_limit(bad[i], strlen(bad[i]), &v, &is_max, &err),
			     VT_E_PARSE);
		CHECK_EQ_U64(v, VT_NA);
		CHECK(!is_max);
	}
	CHECK(strstr(err.msg, "expected a number or 'max'") != NULL);
}

/* ---- memory.events, memory.oom_control ---- */

static void test_cgroup__events_parse(void)
{
	static const char events[] = "low 1\nhigh 22\nmax 333\noom 4\noom_kill 5\n"
				     "oom_group_kill 9\nsock_throttled 8\n";
	struct vt_cgroup_mem cg;

	memset(&cg, 0, sizeof(cg));
	CHECK_EQ_I64(vt_cgroup_parse_events(TEXT(events), &cg, NULL), VT_OK);
	CHECK_EQ_U64(cg.events_low, 1);
	CHECK_EQ_U64(cg.events_high, 22);
	CHECK_EQ_U64(cg.events_max, 333);
	CHECK_EQ_U64(cg.events_oom, 4);
	CHECK_EQ_U64(cg.events_oom_kill, 5);
	/* An older kernel's shorter file: what is missing is unknown, not 0. */
	CHECK_EQ_I64(vt_cgroup_parse_events(TEXT("low 0\nhigh 0\nmax 2\noom 0\n"), &cg, NULL),
		     VT_OK);
	CHECK_EQ_U64(cg.events_max, 2);
	CHECK_EQ_U64(cg.events_oom_kill, VT_NA);
}

static void test_cgroup__events_garbage_rejected(void)
{
	static const char *const bad[] = {
		"", "\n", "low\n", "low x\n", "low 1 2\n", "low -1\n", "foo 1\n",
		"low 0\nhigh 3\nma", "low 0\nhigh 3\nmax 99999999999999999999\n", "low 1x\n",
	};
	struct vt_cgroup_mem cg;
	struct vt_err err;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_EQ_I64(vt_cgroup_parse_events(bad[i], strlen(bad[i]), &cg, &err), VT_E_PARSE);
	CHECK_EQ_I64(vt_cgroup_parse_events(TEXT("low 0\nhigh 3\nma"), &cg, &err), VT_E_PARSE);
	CHECK(strstr(err.msg, "memory.events: line is not 'key number': 'ma'") != NULL);
}

static void test_cgroup__oom_control_parse(void)
{
	struct vt_cgroup_mem cg;
	struct vt_err err;

	CHECK_EQ_I64(vt_cgroup_parse_oom_control(TEXT("oom_kill_disable 0\nunder_oom 1\n"
						      "oom_kill 3\n"), &cg, NULL), VT_OK);
	CHECK_EQ_U64(cg.events_oom_kill, 3);
	CHECK_EQ_I64(vt_cgroup_parse_oom_control(TEXT("oom_kill_disable 0\nunder_oom 0\n"), &cg,
						 NULL), VT_OK);
	CHECK_EQ_U64(cg.events_oom_kill, VT_NA);
	CHECK_EQ_I64(vt_cgroup_parse_oom_control(TEXT("oom_kill_disable 0\nunder_oom"), &cg, &err),
		     VT_E_PARSE);
	CHECK_EQ_I64(vt_cgroup_parse_oom_control(TEXT("low 1\n"), &cg, &err), VT_E_PARSE);
	CHECK(strstr(err.msg, "memory.oom_control") != NULL);
}

/* ---- PSI ---- */

static void test_cgroup__psi_parse(void)
{
	struct vt_psi_line some, full;

	CHECK_EQ_I64(vt_psi_parse(TEXT("some avg10=12.34 avg60=0.05 avg300=100.00 total=987654321\n"
				       "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"),
				  &some, &full, NULL), VT_OK);
	CHECK(some.present);
	CHECK(some.avg10 > 12.339 && some.avg10 < 12.341);
	CHECK(some.avg60 > 0.049 && some.avg60 < 0.051);
	CHECK(some.avg300 > 99.99 && some.avg300 <= 100.0);
	CHECK_EQ_U64(some.total_us, 987654321);
	CHECK(full.present);
	CHECK_EQ_U64(full.total_us, 0);
	/* cpu.pressure before 5.13 had no "full" line; unknown keys are skipped. */
	CHECK_EQ_I64(vt_psi_parse(TEXT("some avg10=1 avg60=2.5 avg300=3.25 total=4 extra=x"),
				  &some, &full, NULL), VT_OK);
	CHECK(some.present);
	CHECK(!full.present);
	CHECK_EQ_U64(some.total_us, 4);
}

static void test_cgroup__psi_garbage_rejected(void)
{
	static const char *const bad[] = {
		"",
		"full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
		"some avg10=0.00 avg60=0.00 avg300=0.00\n",
		"some avg10=0.00 avg60=0.0",
		"some avg10=abc avg60=0.00 avg300=0.00 total=0\n",
		"some avg10=100.01 avg60=0.00 avg300=0.00 total=0\n",
		"some avg10=1. avg60=0.00 avg300=0.00 total=0\n",
		"some avg10=.5 avg60=0.00 avg300=0.00 total=0\n",
		"some avg10=0.00 avg60=0.00 avg300=0.00 total=-1\n",
		"some avg10=0.00 avg60=0.00 avg300=0.00 total\n",
		"some avg10=0.1234567891 avg60=0.00 avg300=0.00 total=0\n",
		"some avg10=0 avg60=0 avg300=0 total=0\nsome avg10=0 avg60=0 avg300=0 total=0\n",
	};
	struct vt_psi_line some, full;
	struct vt_err err;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		vt_err_clear(&err);
		CHECK_EQ_I64(vt_psi_parse(bad[i], strlen(bad[i]), &some, &full, &err), VT_E_PARSE);
		CHECK(strncmp(err.msg, "psi: ", 5) == 0);
	}
}

/* ---- cpu: end to end on fixture trees ---- */

/*
 * task.scope 2 cores, job.slice max, tenant.slice 0.5, batch.slice 3 (with
 * the smallest quota, 30000 over a 10000 period): the tightest is two levels
 * up, neither the nearest nor the last limit met, nor the smallest quota.
 */
static void test_cgroup__cpu_v2_tightest_ancestor(void)
{
	struct vt_cgroup_cpu cpu;
	struct vt_err err;

	CHECK_EQ_I64(read_cpu_tree("v2_cpu", 6000, &cpu, &err), VT_OK);
	CHECK_EQ_I64(cpu.version, 2);
	CHECK(cores_are(cpu.quota_cores, 0.5));
	CHECK_STR(cpu.limit_dir, "fs/cgroup/batch.slice/tenant.slice");
	CHECK_EQ_U64(cpu.quota_us, 50000);
	CHECK_EQ_U64(cpu.period_us, 100000);
	CHECK_EQ_U64(cpu.nr_periods, 4197);
	CHECK_EQ_U64(cpu.nr_throttled, 1210);
	CHECK_EQ_U64(cpu.throttled_usec, 93312456);
	CHECK_EQ_I64(err.code, VT_OK);
}

static void test_cgroup__cpu_v2_max_everywhere(void)
{
	struct vt_cgroup_cpu cpu;
	struct vt_err err;

	CHECK_EQ_I64(read_cpu_tree("v2_cpu", 6001, &cpu, &err), VT_OK);
	CHECK_EQ_I64(cpu.version, 2);
	check_no_cpu_limit(&cpu);
	CHECK_EQ_U64(cpu.nr_periods, 0);
	CHECK_EQ_U64(cpu.nr_throttled, 0);
	CHECK_EQ_U64(cpu.throttled_usec, 0);
}

/* cpu enabled at user.slice only: the levels below have no cpu.max, cpu.stat no throttling. */
static void test_cgroup__cpu_v2_limit_above_controller_end(void)
{
	struct vt_cgroup_cpu cpu;
	struct vt_err err;

	CHECK_EQ_I64(read_cpu_tree("v2_cpu", 6003, &cpu, &err), VT_OK);
	CHECK_EQ_I64(cpu.version, 2);
	CHECK(cores_are(cpu.quota_cores, 1.0));
	CHECK_STR(cpu.limit_dir, "fs/cgroup/user.slice");
	check_no_cpu_stat(&cpu);
}

static void test_cgroup__cpu_v2_corrupt_cpu_max_named(void)
{
	struct vt_cgroup_cpu cpu;
	struct vt_err err;

	CHECK_EQ_I64(read_cpu_tree("v2_cpu", 6002, &cpu, &err), VT_E_PARSE);
	CHECK(strstr(err.msg, "system.slice/bad.service/cpu.max': ") != NULL);
	CHECK(strstr(err.msg, "'150000'") != NULL);
	CHECK_EQ_I64(cpu.version, 0);
	check_no_cpu_limit(&cpu);
	check_no_cpu_stat(&cpu);
}

/* The container's limit sits at its mount root; nothing above it is visible. */
static void test_cgroup__cpu_v2_namespace_mount_root(void)
{
	struct vt_cgroup_cpu cpu;
	struct vt_err err;

	CHECK_EQ_I64(read_cpu_tree("v2_ns", 11, &cpu, &err), VT_OK);
	CHECK_EQ_I64(cpu.version, 2);
	CHECK(cores_are(cpu.quota_cores, 2.0));
	CHECK_STR(cpu.limit_dir, "fs/cgroup");
	CHECK_EQ_U64(cpu.quota_us, 200000);
	check_no_cpu_stat(&cpu);
	CHECK_EQ_I64(read_cpu_tree("v2_ns", 12, &cpu, &err), VT_E_NOTFOUND);
	CHECK_EQ_I64(cpu.version, 0);
}

/* cpu,cpuacct co-mounted; the leaf has -1, its parent 150000/100000. */
static void test_cgroup__cpu_v1_cpu_cpuacct(void)
{
	struct vt_cgroup_cpu cpu;
	struct vt_err err;

	CHECK_EQ_I64(read_cpu_tree("v1_cpu", 7000, &cpu, &err), VT_OK);
	CHECK_EQ_I64(cpu.version, 1);
	CHECK(cores_are(cpu.quota_cores, 1.5));
	CHECK_STR(cpu.limit_dir, "fs/cgroup/cpu,cpuacct/batch");
	CHECK_EQ_U64(cpu.quota_us, 150000);
	CHECK_EQ_U64(cpu.period_us, 100000);
	CHECK_EQ_U64(cpu.nr_periods, 20);
	CHECK_EQ_U64(cpu.nr_throttled, 15);
	CHECK_EQ_U64(cpu.throttled_usec, 620737);   /* throttled_time 620737458 ns */
	/* In the limited cgroup itself, which has no cpu.stat. */
	CHECK_EQ_I64(read_cpu_tree("v1_cpu", 7001, &cpu, &err), VT_OK);
	CHECK_EQ_I64(cpu.version, 1);
	CHECK(cores_are(cpu.quota_cores, 1.5));
	CHECK_STR(cpu.limit_dir, "fs/cgroup/cpu,cpuacct/batch");
	check_no_cpu_stat(&cpu);
}

/* Recorded: the root of the v1 cpu hierarchy has the files, quota -1. */
static void test_cgroup__cpu_v1_root_unlimited(void)
{
	struct vt_cgroup_cpu cpu;
	struct vt_err err;

	CHECK_EQ_I64(read_cpu_tree("v1", V1_REC_PID, &cpu, &err), VT_OK);
	CHECK_EQ_I64(cpu.version, 1);
	check_no_cpu_limit(&cpu);
	CHECK_EQ_U64(cpu.nr_periods, 0);
	CHECK_EQ_U64(cpu.throttled_usec, 0);
}

static void test_cgroup__cpu_none(void)
{
	struct vt_cgroup_cpu cpu;
	struct vt_err err;

	/* v2 root: a cpu.stat without throttling, no cpu.max. */
	CHECK_EQ_I64(read_cpu_tree("none", 1, &cpu, &err), VT_OK);
	CHECK_EQ_I64(cpu.version, 0);
	check_no_cpu_limit(&cpu);
	check_no_cpu_stat(&cpu);
	/* v2 without any cpu file (the memory fixture). */
	CHECK_EQ_I64(read_cpu_tree("v2", 4242, &cpu, &err), VT_OK);
	CHECK_EQ_I64(cpu.version, 0);
	CHECK_EQ_I64(read_cpu_tree("none", 2, &cpu, &err), VT_OK);
	CHECK_EQ_I64(cpu.version, 0);
	CHECK_EQ_I64(read_cpu_tree("none", 3, &cpu, &err), VT_E_GONE);
	CHECK_EQ_I64(cpu.version, 0);
	CHECK_EQ_I64(read_cpu_tree("v2_elsewhere", 20, &cpu, &err), VT_E_NOTFOUND);
}

/* ---- cpu: parsers ---- */

static void test_cgroup__cpu_max_parse(void)
{
	uint64_t quota, period;

	CHECK_EQ_I64(vt_cgroup_parse_cpu_max(TEXT("max 100000\n"), &quota, &period, NULL), VT_OK);
	CHECK_EQ_U64(quota, VT_NA);
	CHECK_EQ_U64(period, 100000);
	CHECK_EQ_I64(vt_cgroup_parse_cpu_max(TEXT("150000 100000\n"), &quota, &period, NULL),
		     VT_OK);
	CHECK_EQ_U64(quota, 150000);
	CHECK_EQ_U64(period, 100000);
	CHECK_EQ_I64(vt_cgroup_parse_cpu_max(TEXT("1000 1000"), &quota, &period, NULL), VT_OK);
	CHECK_EQ_U64(quota, 1000);
}

static void test_cgroup__cpu_max_garbage_rejected(void)
{
	static const char *const bad[] = {
		"", "\n", "max\n", "150000\n", "max 0\n", "150000 0\n", "max 100000 5\n",
		"MAX 100000\n", "maxx 100000\n", "-1 100000\n", "15o000 100000\n", "max 1e5\n",
		"150000 100000\n\n", "max\n100000\n", "18446744073709551615 100000\n",
		"1 18446744073709551615\n", "1 99999999999999999999\n",
	};
	struct vt_err err;
	uint64_t quota, period;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		vt_err_clear(&err);
		CHECK_EQ_I64(vt_cgroup_parse_cpu_max(bad[i], strlen(bad[i]), &quota, &period, &err),
			     VT_E_PARSE);
		CHECK_EQ_U64(quota, VT_NA);
		CHECK_EQ_U64(period, VT_NA);
		CHECK(strncmp(err.msg, "cpu.max: expected", 17) == 0);
	}
}

static void test_cgroup__cfs_quota_parse(void)
{
	static const char *const bad[] = { "", "-2\n", "-1 \n", "x\n", "1.5\n", "--1\n" };
	struct vt_err err;
	uint64_t quota;
	size_t i;

	CHECK_EQ_I64(vt_cgroup_parse_cfs_quota(TEXT("-1\n"), &quota, NULL), VT_OK);
	CHECK_EQ_U64(quota, VT_NA);
	CHECK_EQ_I64(vt_cgroup_parse_cfs_quota(TEXT("150000\n"), &quota, NULL), VT_OK);
	CHECK_EQ_U64(quota, 150000);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_EQ_I64(vt_cgroup_parse_cfs_quota(bad[i], strlen(bad[i]), &quota, &err),
			     VT_E_PARSE);
		CHECK_EQ_U64(quota, VT_NA);
	}
	CHECK(strstr(err.msg, "cpu.cfs_quota_us: expected a number or -1") != NULL);
}

static void test_cgroup__cpu_stat_parse(void)
{
	struct vt_cgroup_cpu cpu;
	struct vt_err err;

	CHECK_EQ_I64(vt_cgroup_parse_cpu_stat(TEXT("usage_usec 9\nnr_periods 7\nnr_throttled 3\n"
						   "throttled_usec 4500\nnr_bursts 0\n"),
					      false, &cpu, NULL), VT_OK);
	CHECK_EQ_U64(cpu.nr_periods, 7);
	CHECK_EQ_U64(cpu.nr_throttled, 3);
	CHECK_EQ_U64(cpu.throttled_usec, 4500);
	/* v1: ns, and throttled_usec is not a v1 key */
	CHECK_EQ_I64(vt_cgroup_parse_cpu_stat(TEXT("nr_periods 7\nnr_throttled 3\n"
						   "throttled_time 4500999\n"),
					      true, &cpu, NULL), VT_OK);
	CHECK_EQ_U64(cpu.throttled_usec, 4500);
	CHECK_EQ_I64(vt_cgroup_parse_cpu_stat(TEXT("throttled_usec 5\n"), true, &cpu, NULL),
		     VT_OK);
	CHECK_EQ_U64(cpu.throttled_usec, VT_NA);
	/* v2 without the cpu controller: no throttling keys is not an error */
	CHECK_EQ_I64(vt_cgroup_parse_cpu_stat(TEXT("usage_usec 0\nuser_usec 0\n"), false, &cpu,
					      NULL), VT_OK);
	check_no_cpu_stat(&cpu);
	CHECK_EQ_I64(vt_cgroup_parse_cpu_stat(TEXT("nr_periods 7\nnr_throttled x\n"), false, &cpu,
					      &err), VT_E_PARSE);
	check_no_cpu_stat(&cpu);
	CHECK(strstr(err.msg, "cpu.stat: line is not 'key number': 'nr_throttled x'") != NULL);
}

VT_TEST_MAIN(test_cgroup__v1_hybrid_layout, test_cgroup__v1_limited_with_memsw,
	     test_cgroup__v1_no_memsw_old_kernel, test_cgroup__v2_layout,
	     test_cgroup__v2_old_kernel_missing_files, test_cgroup__v2_namespace_root_stripped,
	     test_cgroup__v2_outside_mounted_subtree, test_cgroup__mount_outside_sys,
	     test_cgroup__no_memory_cgroup, test_cgroup__process_gone,
	     test_cgroup__corrupt_file_named, test_cgroup__membership_recorded,
	     test_cgroup__membership_variants, test_cgroup__membership_garbage_rejected,
	     test_cgroup__mountinfo_hybrid, test_cgroup__mountinfo_pure_v2,
	     test_cgroup__mountinfo_escapes_and_preference, test_cgroup__limit_max_vs_number,
	     test_cgroup__limit_garbage_rejected, test_cgroup__events_parse,
	     test_cgroup__events_garbage_rejected, test_cgroup__oom_control_parse,
	     test_cgroup__psi_parse, test_cgroup__psi_garbage_rejected,
	     test_cgroup__cpu_v2_tightest_ancestor, test_cgroup__cpu_v2_max_everywhere,
	     test_cgroup__cpu_v2_limit_above_controller_end,
	     test_cgroup__cpu_v2_corrupt_cpu_max_named, test_cgroup__cpu_v2_namespace_mount_root,
	     test_cgroup__cpu_v1_cpu_cpuacct, test_cgroup__cpu_v1_root_unlimited,
	     test_cgroup__cpu_none, test_cgroup__cpu_max_parse,
	     test_cgroup__cpu_max_garbage_rejected, test_cgroup__cfs_quota_parse,
	     test_cgroup__cpu_stat_parse)

/*
 * fuzz_cgroup.c — the parsers under src/proc/cgroup.c (cgroup_parse.c,
 * mountinfo.c, psi.c) on arbitrary bytes.
 *
 * The input is copied to a buffer of exactly its size (no NUL after it), so
 * ASan sees any read past the end.  Besides not crashing, each parser must
 * keep its promises on success; those are asserted so the fuzzer finds
 * broken invariants too.  Seeds: fuzz/corpus/cgroup/ (real file contents:
 * memory, cpu.max, cpu.cfs_quota_us, cpu.stat of both versions).
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proc/cgroup.h"
#include "proc/cgroup_parse.h"
#include "proc/mountinfo.h"
#include "proc/psi.h"
#include "base/unknown.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_psi(const struct vt_psi_line *psi)
{
	if (!psi->present)
		return;
	assert(psi->avg10 >= 0 && psi->avg10 <= 100);
	assert(psi->avg60 >= 0 && psi->avg60 <= 100);
	assert(psi->avg300 >= 0 && psi->avg300 <= 100);
}

static void fuzz_membership(const char *buf, size_t size)
{
	char v2[64], v1[64];
	struct vt_err err;

	if (vt_cgroup_parse_membership(buf, size, v2, sizeof(v2), v1, sizeof(v1), &err) == VT_OK) {
		assert(!v2[0] || v2[0] == '/');
		assert(!v1[0] || v1[0] == '/');
	} else {
		assert(err.code == VT_E_PARSE && err.msg[0]);
	}
}

static void fuzz_mountinfo(const char *buf, size_t size)
{
	char mp[128], root[16];
	bool v1;

	for (v1 = false; ; v1 = true) {
		if (vt_mountinfo_find_cgroup(buf, size, v1, mp, sizeof(mp), root, sizeof(root)))
			assert(strlen(mp) < sizeof(mp) && strlen(root) < sizeof(root));
		if (v1)
			break;
	}
}

static void fuzz_values(const char *buf, size_t size)
{
	struct vt_cgroup_mem cg;
	struct vt_err err;
	uint64_t value;
	bool is_max;

	if (vt_cgroup_parse_limit(buf, size, &value, &is_max, &err) == VT_OK)
		assert(is_max ? value == VT_NA : value != VT_NA);
	else
		assert(err.code == VT_E_PARSE && value == VT_NA && !is_max);
	memset(&cg, 0, sizeof(cg));
	vt_cgroup_parse_events(buf, size, &cg, NULL);
	vt_cgroup_parse_oom_control(buf, size, &cg, &err);
	if (vt_psi_parse(buf, size, &cg.psi_some, &cg.psi_full, &err) == VT_OK) {
		assert(cg.psi_some.present);
		check_psi(&cg.psi_some);
		check_psi(&cg.psi_full);
	}
}

static void fuzz_cpu(const char *buf, size_t size)
{
	struct vt_cgroup_cpu cpu;
	struct vt_err err;
	uint64_t quota, period;
	bool v1;

	if (vt_cgroup_parse_cpu_max(buf, size, &quota, &period, &err) == VT_OK)
		assert(period != VT_NA && period > 0);
	else
		assert(err.code == VT_E_PARSE && quota == VT_NA && period == VT_NA);
	if (vt_cgroup_parse_cfs_quota(buf, size, &quota, &err) != VT_OK)
		assert(err.code == VT_E_PARSE && quota == VT_NA);
	for (v1 = false; ; v1 = true) {
		if (vt_cgroup_parse_cpu_stat(buf, size, v1, &cpu, &err) == VT_OK)
			assert(!v1 || cpu.throttled_usec == VT_NA ||
			       cpu.throttled_usec <= UINT64_MAX / 1000);
		else
			assert(err.code == VT_E_PARSE && cpu.nr_periods == VT_NA &&
			       cpu.nr_throttled == VT_NA && cpu.throttled_usec == VT_NA);
		if (v1)
			break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size ? size : 1);

	if (!buf)
		return 0;
	if (size)
		memcpy(buf, data, size);
	fuzz_membership(buf, size);
	fuzz_mountinfo(buf, size);
	fuzz_values(buf, size);
	fuzz_cpu(buf, size);
	free(buf);
	return 0;
}

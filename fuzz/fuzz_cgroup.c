/*
 * fuzz_cgroup.c — every parser of src/proc/cgroup_parse.c on arbitrary bytes.
 *
 * The input is copied to a buffer of exactly its size (no NUL after it), so
 * ASan sees any read past the end.  Besides not crashing, each parser must
 * keep its promises on success; those are asserted so the fuzzer finds
 * broken invariants too.  Seeds: fuzz/corpus/cgroup/ (real file contents:
 * /proc/PID/cgroup, memory, cpu.max, cpu.cfs_quota_us, cpu.stat of both
 * versions).  mountinfo and PSI have their own targets (fuzz_mountinfo.c,
 * fuzz_psi.c).
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proc/cgroup.h"
#include "proc/cgroup_parse.h"
#include "base/unknown.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* controller NULL: the memory controller's wrapper; "cpu" as cgroup.c asks for it. */
static void fuzz_membership(const char *buf, size_t size, const char *controller)
{
	char v2[64], v1[64];
	struct vt_err err;
	int rc;

	if (controller)
		rc = vt_cgroup_parse_membership_of(buf, size, controller, v2, sizeof(v2), v1,
						   sizeof(v1), &err);
	else
		rc = vt_cgroup_parse_membership(buf, size, v2, sizeof(v2), v1, sizeof(v1), &err);
	if (rc == VT_OK) {
		assert(!v2[0] || v2[0] == '/');
		assert(!v1[0] || v1[0] == '/');
	} else {
		assert(err.code == VT_E_PARSE && err.msg[0]);
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
	if (vt_cgroup_parse_counter(buf, size, &value, &err) == VT_OK)
		assert(value != VT_NA);
	else
		assert(err.code == VT_E_PARSE);
	memset(&cg, 0, sizeof(cg));
	vt_cgroup_parse_events(buf, size, &cg, NULL);
	vt_cgroup_parse_oom_control(buf, size, &cg, &err);
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
	fuzz_membership(buf, size, NULL);
	fuzz_membership(buf, size, "cpu");
	fuzz_values(buf, size);
	fuzz_cpu(buf, size);
	free(buf);
	return 0;
}

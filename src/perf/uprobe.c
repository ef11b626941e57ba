/*
 * uprobe.c — the uprobe PMU read from sysfs, and probe events built.
 */
#include "perf/uprobe.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PMU_DIR "/bus/event_source/devices/uprobe"

/* A small sysfs file into buf (NUL-terminated); its length, or -1. */
static ssize_t read_small(const char *path, char *buf, size_t cap)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	do
		n = read(fd, buf, cap - 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

bool vt_uprobe_parse_format(const char *text, size_t len, unsigned *bit)
{
	static const char prefix[] = "config:";
	size_t i = sizeof(prefix) - 1;
	unsigned v = 0;

	if (len < i + 1 || memcmp(text, prefix, i) != 0)
		return false;
	for (; i < len && text[i] >= '0' && text[i] <= '9'; i++) {
		v = v * 10 + (unsigned)(text[i] - '0');
		if (v > 63)
			return false;
	}
	if (i == sizeof(prefix) - 1)
		return false;
	/* one bit: nothing but a newline after the number (no "-63" range) */
	if (i < len && !(text[i] == '\n' && i + 1 == len))
		return false;
	*bit = v;
	return true;
}

int vt_uprobe_pmu_read(const char *sysfs_root, struct vt_uprobe_pmu *out, struct vt_err *err)
{
	char path[512], buf[64], *end;
	unsigned long type;
	ssize_t n;

	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "%s" PMU_DIR "/type", sysfs_root ? sysfs_root : "/sys");
	n = read_small(path, buf, sizeof(buf));
	if (n < 0) {
		vt_err_set(err, VT_E_UNSUPPORTED, errno, "this kernel has no uprobe PMU (%s: %s)",
			   path, strerror(errno));
		vt_err_hint(err, "probes need Linux 4.17 or later built with CONFIG_UPROBE_EVENTS; "
			    "in a container, /sys must be the host's");
		return VT_E_UNSUPPORTED;
	}
	errno = 0;
	type = strtoul(buf, &end, 10);
	if (errno || end == buf || (*end && *end != '\n') || type > UINT32_MAX)
		return vt_err_set(err, VT_E_UNSUPPORTED, 0, "%s does not hold a PMU type", path);
	snprintf(path, sizeof(path), "%s" PMU_DIR "/format/retprobe", sysfs_root ? sysfs_root : "/sys");
	n = read_small(path, buf, sizeof(buf));
	if (n < 0 || !vt_uprobe_parse_format(buf, (size_t)n, &out->retprobe_bit))
		return vt_err_set(err, VT_E_UNSUPPORTED, n < 0 ? errno : 0,
				  "the uprobe PMU does not say how a return probe is asked for (%s)",
				  path);
	out->type = (uint32_t)type;
	return VT_OK;
}

void vt_uprobe_event(const struct vt_uprobe_pmu *pmu, const char *path, uint64_t offset, bool ret,
		     bool stack, struct vt_perf_event *out)
{
	memset(out, 0, sizeof(*out));
	out->type = pmu->type;
	out->config = ret ? 1ull << pmu->retprobe_bit : 0;
	out->config1 = (uint64_t)(uintptr_t)path;   /* uprobe_path */
	out->config2 = offset;                     /* probe_offset */
	out->stack = stack;
}

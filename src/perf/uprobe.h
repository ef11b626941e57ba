/*
 * uprobe.h — probes on a function of a file, through the kernel's uprobe
 * PMU and perf_event_open: no BPF, no tracefs.
 *
 * The PMU's type and the bit that makes a probe a return probe are read from
 * sysfs (/sys/bus/event_source/devices/uprobe/type and format/retprobe).  A
 * probe names a file by path (the kernel resolves it to an inode once, so a
 * /proc/PID/root/... or map_files path reaches the target's own file) and
 * an offset in that file.  vt_perf_open (perf/perf_events.h) opens it on
 * every thread of a process; only that process's threads record hits, but
 * the breakpoint sits in its code and every call traps into the kernel,
 * recorded or not, from the open to the close of the last event.
 *
 * Permission: the uprobe PMU needs CAP_PERFMON (or CAP_SYS_ADMIN) whatever
 * kernel.perf_event_paranoid says.
 */
#ifndef VT_PERF_UPROBE_H
#define VT_PERF_UPROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "perf/perf_events.h"

struct vt_uprobe_pmu {
	uint32_t type;            /* perf_event_attr.type of the uprobe PMU */
	unsigned retprobe_bit;    /* the config bit of a return probe */
};

/*
 * Read the PMU from sysfs_root ("/sys"; tests pass a fixture tree).  Errors:
 *   VT_E_UNSUPPORTED  no uprobe PMU (a kernel before 4.17, or without
 *                     CONFIG_UPROBE_EVENTS), or its files do not parse
 */
int vt_uprobe_pmu_read(const char *sysfs_root, struct vt_uprobe_pmu *out, struct vt_err *err);

/* Parse a format file's text ("config:0\n") into *bit.  False unless it names one
 * bit of config.  Exposed for tests and the fuzzer. */
bool vt_uprobe_parse_format(const char *text, size_t len, unsigned *bit);

/*
 * The event of a probe at offset in the file at path (which must outlive the
 * vt_perf_open that uses the event: the kernel reads it then), an entry probe
 * or with ret a return probe; stack: its samples carry the stack.
 */
void vt_uprobe_event(const struct vt_uprobe_pmu *pmu, const char *path, uint64_t offset, bool ret,
		     bool stack, struct vt_perf_event *out);

#endif

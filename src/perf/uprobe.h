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

/*
 * A set of probes on one file, for a run that arms and disarms them many
 * times.  Taking a probe out costs the kernel a grace period (about 50 ms,
 * one at a time, the breakpoint still in) for each uprobe-PMU event closed,
 * so windows of the PMU's events cost threads x probes x 50 ms each to
 * close.  Where tracefs is there (or can be mounted, as perf does) the set
 * defines its probes there instead (group vitals_<pid>_<n>, removed at the end;
 * those of a vitals that died are removed by the next) and holds one
 * disabled "anchor" event of each on a kernel thread (kthreadd: no memory
 * map, so no breakpoint is placed for it; vitals itself where kthreadd is not
 * visible, whose own calls then trap): a target's events then close in
 * microseconds, taking the breakpoints out of the target's code at once,
 * while the probes stay defined.
 */
struct vt_uprobe_spec {
	uint64_t offset;          /* in the file */
	bool ret;                 /* a return probe */
	bool stack;               /* its samples carry the stack */
};

struct vt_uprobe_set;

/*
 * Define n (<= VT_PERF_EVENTS_MAX) probes on the file at path (kept by the set).
 * With allow_mount, tracefs is mounted at /sys/kernel/tracing when no
 * tracefs is.  Falls back to the uprobe PMU, saying why (vt_uprobe_set_how).
 * Errors: those of vt_uprobe_pmu_read when neither way is possible, VT_E_NOMEM.
 */
int vt_uprobe_set_open(const char *path, const struct vt_uprobe_spec *specs, size_t n,
		       bool allow_mount, struct vt_uprobe_set **out, struct vt_err *err);
/* The events for vt_perf_open (specs' order), valid while the set lives. */
const struct vt_perf_event *vt_uprobe_set_events(const struct vt_uprobe_set *s);
/* "tracefs (/sys/kernel/tracing), anchored", or "uprobe PMU (tracefs: why not)". */
const char *vt_uprobe_set_how(const struct vt_uprobe_set *s);
/* True when closing a target's events is cheap (tracefs with anchors). */
bool vt_uprobe_set_cheap_close(const struct vt_uprobe_set *s);
/* Close the anchors and remove the definitions; sets *s to NULL.  Every perf
 * event on the set's probes must be closed first. */
void vt_uprobe_set_close(struct vt_uprobe_set **s);

/*
 * What one probe hit costs a thread here, in ns: vitals' own malloc and free
 * in a loop (the fastest of three), first unprobed (calibration_base, taken
 * before any probe is placed in vitals), then with the kinds of probe an
 * allocation profile uses placed on them (malloc's entry with stack_bytes
 * of stack, its return, free's entry), records written as for a target.
 * The trap, not the function, is what costs, so whichever allocator vitals
 * runs will do.  NAN when it cannot be timed (no probes allowed here).
 */
uint64_t vt_uprobe_calibration_base(void);
double vt_uprobe_hit_ns(uint64_t base_ns, uint32_t stack_bytes);

/* Remove the probe groups of vitals processes that no longer run from the
 * tracefs at dir.  Exposed for tests; vt_uprobe_set_open calls it. */
void vt_uprobe_remove_stale(const char *tracefs_dir);

#endif

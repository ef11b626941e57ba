/*
 * metric.c — the metric table (see metric.h).
 */
#include "sample/metric.h"

#include "base/unknown.h"
#include "sample/sample.h"

#include <math.h>
#include <string.h>

static double u64(uint64_t v)
{
	return vt_known(v) ? (double)v : NAN;
}

#define STATUS_GETTER(fn, field) \
	static double fn(const struct vt_sample *s) { return u64(s->status.field); }
STATUS_GETTER(vm_rss, vm_rss)
STATUS_GETTER(rss_anon, rss_anon)
STATUS_GETTER(rss_file, rss_file)
STATUS_GETTER(rss_shmem, rss_shmem)
STATUS_GETTER(vm_swap, vm_swap)
STATUS_GETTER(vm_size, vm_size)
STATUS_GETTER(vm_peak, vm_peak)
STATUS_GETTER(vm_hwm, vm_hwm)
#undef STATUS_GETTER

static double committed(const struct vt_sample *s)
{
	return u64(s->committed);
}

/* From maps, for glibc only: without target memory the arena count is unknown, heaps are not. */
static double arenas(const struct vt_sample *s)
{
	if (!s->regions_st.available || s->alloc.kind != VT_ALLOC_GLIBC || s->arenas.arenas < 0)
		return NAN;
	return s->arenas.arenas + 1;    /* the main arena too */
}

static double regions_64m(const struct vt_sample *s)
{
	if (!s->regions_st.available || s->alloc.kind != VT_ALLOC_GLIBC)
		return NAN;
	return s->arenas.heaps;
}

static double threads(const struct vt_sample *s)
{
	return s->num_threads >= 0 ? (double)s->num_threads : NAN;
}

static double cg_current(const struct vt_sample *s)
{
	return s->cgroup_st.available && s->cgroup.version ? u64(s->cgroup.usage) : NAN;
}

static double cg_swap(const struct vt_sample *s)
{
	return s->cgroup_st.available && s->cgroup.version ? u64(s->cgroup.swap_usage) : NAN;
}

/* Of the free walk, when the caller walked (sample/free_walk.h). */
static double free_resident(const struct vt_sample *s)
{
	return s->free_known ? s->free_resident : NAN;
}

static double trimmable(const struct vt_sample *s)
{
	return s->free_known ? s->trimmable : NAN;
}

/* A figure of the process's memory cgroup, unknown when it has none. */
#define CGROUP_GETTER(fn, expr) \
	static double fn(const struct vt_sample *s) \
	{ \
		return s->cgroup_st.available && s->cgroup.version ? (expr) : NAN; \
	}
CGROUP_GETTER(cg_limit, s->cgroup.limit_is_max ? NAN : u64(s->cgroup.limit))
CGROUP_GETTER(cg_high_events, u64(s->cgroup.events_high))
CGROUP_GETTER(cg_max_events, u64(s->cgroup.events_max))
CGROUP_GETTER(cg_oom_kills, u64(s->cgroup.events_oom_kill))
CGROUP_GETTER(cg_psi_some_s, s->cgroup.psi_some.present ? (double)s->cgroup.psi_some.total_us / 1e6 : NAN)
CGROUP_GETTER(cg_psi_full_s, s->cgroup.psi_full.present ? (double)s->cgroup.psi_full.total_us / 1e6 : NAN)
#undef CGROUP_GETTER

#define REC VT_MF_RECORDED
#define CUM VT_MF_CUMULATIVE
#define SNAP VT_MF_SNAP
#define CMP VT_MF_COMPARE
/* a series of vitals serve's vitals_process_memory_bytes */
#define MEMTYPE(v) .prom = "vitals_process_memory_bytes", .prom_label = "memtype", .prom_label_value = v

const struct vt_metric_info vt_metrics[VT_M_COUNT] = {
	[VT_M_VM_RSS]        = { "vm_rss", "VmRSS", VT_UNIT_BYTES, REC | SNAP,
				 "resident now (anon + file + shmem): what ps RSS shows", vm_rss,
				 .prom = "process_resident_memory_bytes" },
	[VT_M_RSS_ANON]      = { "rss_anon", "RssAnon", VT_UNIT_BYTES, REC | SNAP | CMP,
				 "resident anonymous: heap, arenas, stacks", rss_anon, MEMTYPE("rss_anon") },
	[VT_M_RSS_FILE]      = { "rss_file", "RssFile", VT_UNIT_BYTES, REC | SNAP,
				 "resident file-backed: binaries, libraries, mapped files", rss_file, MEMTYPE("rss_file") },
	[VT_M_RSS_SHMEM]     = { "rss_shmem", "RssShmem", VT_UNIT_BYTES, REC | SNAP,
				 "resident shared memory (shm, memfd, tmpfs)", rss_shmem, MEMTYPE("rss_shmem") },
	[VT_M_VM_SWAP]       = { "vm_swap", "VmSwap", VT_UNIT_BYTES, REC | SNAP | CMP,
				 "anonymous memory pushed out to swap", vm_swap, MEMTYPE("swap") },
	[VT_M_COMMITTED]     = { "committed", "committed", VT_UNIT_BYTES, REC | SNAP | CMP,
				 "RssAnon + VmSwap: anonymous memory the process holds, resident or swapped",
				 committed, MEMTYPE("committed") },
	[VT_M_VM_SIZE]       = { "vm_size", "VmSize", VT_UNIT_BYTES, REC | SNAP,
				 "virtual address space (mostly reservations, not memory)", vm_size,
				 .prom = "process_virtual_memory_bytes" },
	[VT_M_VM_PEAK]       = { "vm_peak", "VmPeak", VT_UNIT_BYTES, SNAP, "largest VmSize so far", vm_peak,
				 .prom = "vitals_process_virtual_memory_peak_bytes" },
	[VT_M_VM_HWM]        = { "vm_hwm", "VmHWM", VT_UNIT_BYTES, SNAP,
				 "largest VmRSS so far (high-water mark)", vm_hwm },
	[VT_M_ARENAS]        = { "arenas", "arenas", VT_UNIT_COUNT, REC | CMP,
				 "glibc malloc arenas seen in maps", arenas },
	[VT_M_REGIONS_64M]   = { "regions_64m", "64 MiB regions", VT_UNIT_COUNT, REC | CMP,
				 "64 MiB heap reservations (one per non-main arena heap)", regions_64m },
	[VT_M_THREADS]       = { "threads", "threads", VT_UNIT_COUNT, REC, "threads of the process", threads },
	[VT_M_CPU_USER_S]    = { "cpu_user_s", "CPU user", VT_UNIT_SECONDS, REC | VT_MF_CUMULATIVE,
				 "user CPU seconds since the process started", NULL },
	[VT_M_CPU_SYS_S]     = { "cpu_sys_s", "CPU system", VT_UNIT_SECONDS, REC | VT_MF_CUMULATIVE,
				 "system CPU seconds since the process started", NULL },
	[VT_M_HEAP_LIVE]     = { "heap_live", "live", VT_UNIT_BYTES, REC | CMP,
				 "allocator: bytes in use by the program", NULL },
	[VT_M_HEAP_FREE]     = { "heap_free", "free-held", VT_UNIT_BYTES, REC | CMP,
				 "allocator: free but not returned to the kernel", NULL },
	[VT_M_HEAP_TOTAL]    = { "heap_total", "allocator total", VT_UNIT_BYTES, REC,
				 "allocator: obtained from the kernel", NULL },
	[VT_M_LIVE_FRACTION] = { "live_fraction", "live fraction", VT_UNIT_FRACTION, CMP,
				 "live / allocator total: the share of the allocator's memory in use", NULL },
	[VT_M_HEAP_KEEPCOST] = { "heap_keepcost", "keepcost", VT_UNIT_BYTES, REC | CMP,
				 "glibc: top of the main arena, what a plain trim returns", NULL },
	[VT_M_FREE_RESIDENT] = { "free_resident", "free resident", VT_UNIT_BYTES, REC | CMP,
				 "glibc: free chunks' bytes on resident pages, the free memory that costs RAM "
				 "(fordblks counts pages the kernel never backed or took back too)", free_resident,
				 .prom = "vitals_heap_free_resident_bytes" },
	[VT_M_TRIMMABLE]     = { "trimmable", "trimmable", VT_UNIT_BYTES, REC | CMP,
				 "glibc: resident whole pages of free chunks, what malloc_trim(0) could give back",
				 trimmable, .prom = "vitals_heap_trimmable_bytes" },
	[VT_M_CG_CURRENT]    = { "cg_current", "cgroup memory", VT_UNIT_BYTES, REC,
				 "the cgroup's memory use (memory.current)", cg_current },
	[VT_M_CG_SWAP]       = { "cg_swap", "cgroup swap", VT_UNIT_BYTES, REC,
				 "the cgroup's swap use (memory.swap.current)", cg_swap },
	[VT_M_PSS]           = { "pss", "Pss", VT_UNIT_BYTES, REC,
				 "proportional set size from smaps_rollup, at the smaps cadence", NULL },
	[VT_M_CPU_CORES]     = { "cpu_cores", "CPU (cores)", VT_UNIT_CORES, CMP,
				 "process CPU over the window, in cores", NULL },
	[VT_M_ACCEPT_QUEUE]  = { "accept_queue", "accept queue", VT_UNIT_COUNT, REC,
				 "connections waiting for accept() on its fullest listening TCP socket",
				 NULL },
	[VT_M_CG_LIMIT]      = { "cg_limit", "cgroup limit", VT_UNIT_BYTES, REC,
				 "the cgroup's memory limit (memory.max); none when it has none", cg_limit },
	[VT_M_CG_HIGH_EVENTS] = { "cg_high_events", "memory.high events", VT_UNIT_COUNT, REC | CUM,
				  "times the cgroup went over memory.high and was throttled (memory.events)",
				  cg_high_events },
	[VT_M_CG_MAX_EVENTS] = { "cg_max_events", "memory.max events", VT_UNIT_COUNT, REC | CUM,
				 "times the cgroup's use hit its limit (memory.events max, v1 failcnt)",
				 cg_max_events },
	[VT_M_CG_OOM_KILLS]  = { "cg_oom_kills", "OOM kills", VT_UNIT_COUNT, REC | CUM,
				 "processes of the cgroup the OOM killer killed (memory.events oom_kill)",
				 cg_oom_kills },
	[VT_M_CG_PSI_SOME_S] = { "cg_psi_some_s", "memory pressure (some)", VT_UNIT_SECONDS, REC | CUM,
				 "seconds a task of the cgroup stalled waiting for memory (memory.pressure)",
				 cg_psi_some_s },
	[VT_M_CG_PSI_FULL_S] = { "cg_psi_full_s", "memory pressure (full)", VT_UNIT_SECONDS, REC | CUM,
				 "seconds all its tasks stalled on memory at once (memory.pressure)",
				 cg_psi_full_s },
	[VT_M_IO_SYSCR]      = { "io_syscr", "read calls", VT_UNIT_COUNT, REC | CUM,
				 "read-family system calls since the process started (/proc/PID/io syscr; "
				 "not recv)", NULL },
	[VT_M_IO_SYSCW]      = { "io_syscw", "write calls", VT_UNIT_COUNT, REC | CUM,
				 "write-family system calls since the process started (/proc/PID/io syscw; "
				 "not send)", NULL },
};

int vt_metric_find(const char *key)
{
	int m;

	for (m = 0; key && m < VT_M_COUNT; m++)
		if (!strcmp(vt_metrics[m].key, key))
			return m;
	return -1;
}

bool vt_metric_judgeable(int m)
{
	return m >= 0 && m < VT_M_COUNT && (vt_metrics[m].flags & VT_MF_RECORDED) &&
	       !(vt_metrics[m].flags & VT_MF_CUMULATIVE);
}

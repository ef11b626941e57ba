/*
 * status.h — /proc/PID/status: identity and the kernel's memory counters.
 *
 * Byte fields are converted from kB; a field the kernel did not print stays
 * VT_NA (e.g. RssAnon before 4.5, VmSwap for kernel threads).
 */
#ifndef VT_PROC_STATUS_H
#define VT_PROC_STATUS_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

struct vt_proc_status {
	char name[64];               /* Name: */
	char state;                  /* State: first letter */
	int64_t tgid, pid, ppid;     /* Tgid: Pid: PPid: */
	int64_t tracer_pid;          /* TracerPid: */
	int64_t uid_real, uid_eff;   /* Uid: first two */
	int64_t threads;             /* Threads: */
	int64_t seccomp;             /* Seccomp: 0 none, 1 strict, 2 filter; -1 absent */
	uint64_t vm_peak;            /* VmPeak: peak virtual size */
	uint64_t vm_size;            /* VmSize: virtual size */
	uint64_t vm_hwm;             /* VmHWM: peak resident */
	uint64_t vm_rss;             /* VmRSS: resident = anon + file + shmem */
	uint64_t rss_anon;           /* RssAnon: resident anonymous (heap, stacks) */
	uint64_t rss_file;           /* RssFile: resident file-backed */
	uint64_t rss_shmem;          /* RssShmem: resident shared memory */
	uint64_t vm_swap;            /* VmSwap: anonymous memory swapped out */
	uint64_t vm_data;            /* VmData: */
	uint64_t vm_stk;             /* VmStk: */
	uint64_t ctxt_vol;           /* voluntary_ctxt_switches: */
	uint64_t ctxt_nonvol;        /* nonvoluntary_ctxt_switches: */
};

int vt_proc_status_parse(const char *buf, size_t len, struct vt_proc_status *out,
			 struct vt_err *err);

#endif

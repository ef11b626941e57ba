/*
 * perf_probe.h — may this process open perf events on a thread?  Asked of
 * the kernel itself: a software cpu-clock event is opened disabled (it
 * never counts nor samples) and closed at once.  The target notices
 * nothing.  The kernel applies the rules vitals profile meets:
 * kernel.perf_event_paranoid, CAP_PERFMON (or CAP_SYS_ADMIN), ptrace
 * access to the thread (PTRACE_MODE_READ_REALCREDS), seccomp, LSMs.
 */
#ifndef VT_PERF_PERF_PROBE_H
#define VT_PERF_PERF_PROBE_H

#include <stdbool.h>
#include <sys/types.h>

/* 0 when an event with (kernel) or without kernel samples opens on tid, else the errno. */
int vt_perf_probe(pid_t tid, bool kernel);

#endif

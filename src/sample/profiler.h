/*
 * profiler.h — a running process sampled for a while into a profile
 * (sample/profile.h): `vitals profile` and the soak's periodic profiles.
 *
 * CPU samples come from perf events (perf/perf_events.h): every thread is
 * interrupted hz times per second of CPU it uses, and each sample's user
 * stack is walked with call frame information (elf/unwind.h) from the
 * registers and stack copy the kernel took, or along the kernel's
 * frame-pointer chain when that walk gets no further; kernel frames are
 * named from /proc/kallsyms.
 *
 * Every tick (100 ms, or 1/wall_hz in wall mode) the profiler reads the
 * threads' counters (proc/thread_watch.h): which threads there are and
 * their names (new ones get perf events), and each thread's own CPU over
 * the profile, the truth beside which the sample shares are read.  In CPU
 * mode with perf events every thread is read at the start and the end
 * only, and a tick reads the threads sampled since the one before (an idle
 * thread's counters do not move: 1,000 idle threads cost nothing a tick),
 * the main thread's stat (has the process exited?), and the module list
 * only when a pc outside it was sampled, or a second has passed.  Threads
 * started and ended are counted from perf's records.  In
 * wall mode it also samples the threads that are not running: their state,
 * what they wait in (wchan, else the system call), and their user stack,
 * unwound from the stack pointer and program counter /proc/TID/syscall
 * gives and a copy of the stack read with process_vm_readv — without
 * stopping them.  Time a thread spent runnable (schedstat) is counted
 * against the last stack it was seen running.  Every count is in units of
 * 1/hz seconds: a wall sample taken at wall_hz counts hz/wall_hz.
 *
 * Threads born during the profile inherit the perf events of the thread
 * that made them (perf/perf_events.h, opts.inherit), so a thread that lives
 * a few milliseconds is sampled as soon as it has used one period of CPU.
 *
 * Where perf events are refused (or with opts->ptrace), running threads are
 * stopped one at a time instead (inject/stack_grab.h): 3 x hz times a
 * second, at jittered instants, the threads that ran lately are looked at, and one
 * found running is stopped for a copy of its registers and stack.  A stop
 * that finds it was waiting for a CPU (switched in since the look) is
 * dropped: it landed where the thread had been preempted.  Finding a thread
 * running is luck, so each stop counts for the CPU the thread used since
 * its previous one (schedstat): every thread's samples add up to its
 * measured CPU, and its stops split that CPU between its stacks.  Each
 * thread stands stopped at most VT_PROFILER_PAUSE_SHARE of its time.
 *
 * The target is never stopped in perf mode and nothing is written to it.
 * A target that exits mid-profile yields the profile so far (meta.exited).
 */
#ifndef VT_SAMPLE_PROFILER_H
#define VT_SAMPLE_PROFILER_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/error.h"
#include "proc/procfs.h"
#include "elf/unwind.h"
#include "sample/locks.h"
#include "sample/profile.h"

#define VT_PROFILER_HZ_DEFAULT 99
#define VT_PROFILER_HZ_MAX 10000
#define VT_PROFILER_STACK_BYTES 16384
/* Without perf events: running threads stopped by ptrace at most this often, each for at
 * most this share of its time, at most this many stops a second in all. */
#define VT_PROFILER_PTRACE_HZ 99
#define VT_PROFILER_PAUSE_SHARE 0.01
#define VT_PROFILER_GRABS_MAX 500
/* A thread that does not stop this soon after the interrupt was waiting for a CPU (a
 * running one stops at once): it is released untouched instead of stopped when it runs. */
#define VT_PROFILER_GRAB_TIMEOUT_US 300
/* Wall samples of blocked threads at most this often per thread (each costs an unwind). */
#define VT_PROFILER_WALL_HZ_MAX 20

struct vt_profiler_opts {
	double duration_s;          /* how long to sample, > 0 */
	unsigned hz;                /* CPU samples per second of CPU per thread; 0 = default */
	bool wall;                  /* sample blocked threads too */
	const char *threads_glob;   /* only threads whose name matches (fnmatch), NULL all */
	bool no_kernel;             /* leave kernel frames out */
	/* wall mode: the locks its threads wait on, counted at every wall tick as vitals locks
	 * counts them (sample/locks.h; every thread's system call is read for it), into this
	 * zeroed struct; probe_why says why when they cannot be read.  NULL: not read */
	struct vt_locks *locks;
	bool ptrace;                /* sample by ptrace even where perf events are allowed */
	volatile sig_atomic_t *stop;   /* set (by a signal) to end early with what was taken */
	/* called every tick: seconds so far, of total, samples so far */
	void (*progress)(void *ctx, double elapsed_s, double total_s, uint64_t samples);
	void *progress_ctx;
};

/*
 * Profile process pid (its directory in pfs) for opts->duration_s.  On
 * VT_OK *out is the caller's (vt_profile_free).  Errors:
 *   VT_E_NOPROC, VT_E_KTHREAD, VT_E_ZOMBIE, VT_E_USAGE (a thread id)
 *   VT_E_PERM         perf events refused, or the process's maps unreadable:
 *                     err->hint names the setting or capability and the command
 *   VT_E_UNSUPPORTED  no perf events on this kernel
 *   VT_E_GONE         the process exited before the first sample
 *   VT_E_NOMEM
 */
int vt_profiler_run(const struct vt_procfs *pfs, pid_t pid, const struct vt_profiler_opts *opts,
		    struct vt_profile **out, struct vt_err *err);

/* A sample's user registers (perf order, enum vt_perf_reg) into st in DWARF order,
 * all marked known: where the unwinder starts (perf samples and ptrace grabs alike). */
void vt_profiler_regs_to_dwarf(const uint64_t *perf_regs, struct vt_unwind_start *st);

#endif

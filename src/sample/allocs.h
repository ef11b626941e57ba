/*
 * allocs.h — which code allocates in a running process: every call of its
 * allocator's entry points while the probes are armed, by site, with what
 * became of each block.
 *
 * The probes are uprobes (perf/uprobe.h) on the entry points alloc_probes.h
 * finds, entry and return, so each block's address links the call that made
 * it to the free that ends it.  Every call traps into the kernel, recorded
 * or not, so the probes are armed in windows (opened, then closed: a closed
 * probe leaves the target's code), sized and spaced so that their cost stays
 * inside a budget, measured: the hits counted times one hit's cost timed on
 * vitals' own calls, against the CPU the target spends on its own work.
 * Ctrl-Z (opts->pause) closes the window in progress first.
 *
 * A site is the first function above the allocator that is not one of its
 * wrappers (operator new, strdup, redis' zmalloc, Rust's alloc, core and
 * std, C++'s std::), from the return address at the call, else the stack
 * unwound (CFI from the registers and a copy of the top of the stack).  A block's fate: freed within
 * its window (and how soon), or still live when the window closed (kept
 * past it: what happens next is not seen).
 *
 * Where the target runs the agent with allocation sampling
 * (libvitals-agent-allocs.so preloaded, alloc/agent_allocs.h), the cheap
 * path: no probe, no trap, no root; it samples one allocation every
 * opts->every bytes on average for the whole run, and each sample's fate is
 * seen up to the run's end (the "window" is the run).  opts->path chooses;
 * meta.agent says which was taken and meta.path_why why.
 *
 * Live only.  Errors: those of vt_perf_open with probes (VT_E_PERM with
 * the capability to grant, VT_E_UNSUPPORTED without the uprobe PMU), of
 * vt_alloc_probe_plan, VT_E_NOPROC/KTHREAD/ZOMBIE, VT_E_NOMEM; with
 * VT_ALLOCS_AGENT, VT_E_NOTFOUND (no agent) or VT_E_UNSUPPORTED (an agent
 * that cannot sample), saying which library to preload.
 */
#ifndef VT_SAMPLE_ALLOCS_H
#define VT_SAMPLE_ALLOCS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "alloc/alloc_probes.h"
#include "base/error.h"
#include "proc/procfs.h"
#include "sample/profile.h"

/* Block sizes: <= 16, 64, 256, 1 Ki, 4 Ki, 64 Ki, 1 Mi, more. */
#define VT_ALLOCS_SIZE_BINS 8
/* Freed after: <= 10 us, 100 us, 1 ms, 10 ms, 100 ms, more (within the window). */
#define VT_ALLOCS_AGE_BINS 6
#define VT_ALLOCS_SITE_THREADS 4
#define VT_ALLOCS_EXAMPLE_DEPTH 32

uint64_t vt_allocs_size_bin_max(unsigned bin);   /* upper bound of a bin, UINT64_MAX last */
uint64_t vt_allocs_age_bin_max_ns(unsigned bin);

struct vt_alloc_site {
	uint32_t func;            /* the site's function in the profile (its funcs[]) */
	uint32_t loc;             /* the site frame's location (its first pc seen) */
	uint64_t calls, bytes;    /* allocations (calloc, realloc, memalign count as one) */
	uint64_t size_bins[VT_ALLOCS_SIZE_BINS];
	uint64_t linked;          /* calls whose block could be followed (posix_memalign's only
	                           * when glibc's made a malloc call: alignment 16 or less) */
	uint64_t freed, freed_bytes;          /* of those, freed within the window */
	uint64_t age_bins[VT_ALLOCS_AGE_BINS];
	uint64_t live, live_bytes;            /* still live when the window closed */
	uint64_t fn_calls[VT_AFN__COUNT];     /* by entry point */
	struct {
		pid_t tid;
		uint32_t thread;      /* in the profile's threads */
		uint64_t calls;
		int arena;            /* its glibc arena at the end (0: main_arena), or
		                       * VT_THREAD_ARENA_NONE / _UNKNOWN (alloc/thread_arena.h) */
	} threads[VT_ALLOCS_SITE_THREADS];
	uint64_t other_thread_calls;
	uint64_t freed_elsewhere; /* freed by another thread than the one that allocated */
	uint32_t example[VT_ALLOCS_EXAMPLE_DEPTH];   /* its first stack, site first (locs) */
	uint32_t example_depth;
	uint32_t stack;           /* that stack's row in the profile (p->stacks), UINT32_MAX none */
};

struct vt_allocs_meta {
	pid_t pid;
	char comm[64];
	char allocator[64];       /* "glibc 2.36" */
	char file[512];           /* the file probed */
	char probed[160];         /* "malloc, free, calloc, realloc, memalign, posix_memalign" */
	char skipped[256];        /* entry points not probed and why */
	double duration_s;        /* wall time of the run */
	double armed_s;           /* of it, probes armed */
	unsigned windows;
	double window_s;          /* the windows' mean length: the horizon of "freed" (each is
	                           * as long as the budget pays for, up to --window) */
	double budget;            /* the slowdown allowed */
	double trap_ns;           /* one probe hit's cost to a thread, timed on vitals' own
	                           * calls; NAN unknown */
	uint64_t hits;            /* probe hits in the target (recorded or dropped) */
	double trap_s;            /* hits x trap_ns: the target's time taken by the probes */
	double target_cpu_s;      /* the target's CPU over the run (/proc/PID/stat) */
	double target_base_rate;  /* its CPU rate before the probes, cores; NAN unknown */
	double slowdown;          /* trap_s over the rest of its CPU; NAN unknown */
	char probes_how[256];     /* how the probes were placed (perf/uprobe.h) */
	double open_ms;           /* time spent arming (opening the probes on every thread) */
	double close_ms;          /* time spent disarming (the probes still trap meanwhile) */
	double self_cpu_s;        /* vitals' own CPU */
	uint64_t calls, bytes, frees, unpaired, lost, unwound, unwind_failed;
	uint64_t threads_missed;
	uint64_t threads_seen;    /* at the last look */
	uint64_t threads_probed_max;   /* the most threads probed in one window: in a process of
	                           * more than 64, only those that ran since the last window */
	bool arenas_known;        /* glibc: the site threads' arenas were read (at the end) */
	size_t narenas;
	char arenas_why[256];     /* why not, "" when they were or the allocator is not glibc's */
	bool budget_spent;        /* ended before the duration: another window would not fit
	                           * the budget over what was left of it */
	/* how the calls were seen: uprobes (the windows above), or the agent's in-process
	 * sampling (libvitals-agent-allocs.so preloaded): one sample every `every` bytes on
	 * average, each standing for the calls it was drawn from (sites' figures are
	 * estimates; calls, bytes and frees above are the agent's exact counts) */
	bool agent;
	uint64_t every;           /* agent: mean bytes between samples */
	uint64_t agent_samples, agent_dropped;
	uint64_t agent_late;      /* agent: samples made as it disarmed, after its window: left out */
	bool agent_expired;       /* agent: it disarmed itself at its deadline first */
	char path_why[256];       /* why this path and not the other ("" when asked for) */
	bool exited;              /* the target exited: the profile so far */
	bool interrupted;
};

struct vt_allocs {
	struct vt_allocs_meta meta;
	struct vt_profile *p;     /* names: functions, locations, threads; and one stack per
	                           * site, its example, counting its calls (owned) */
	struct vt_alloc_site *sites;   /* by calls, most first after vt_allocs_run */
	size_t nsites, cap_sites;
};

enum vt_allocs_path {
	VT_ALLOCS_AUTO,           /* the agent's sampling when it can, else uprobes */
	VT_ALLOCS_UPROBES,
	VT_ALLOCS_AGENT,
};

struct vt_allocs_opts {
	double duration_s;        /* > 0 */
	enum vt_allocs_path path;
	uint64_t every;           /* agent: mean bytes between samples; 0 = 512 KiB */
	double budget;            /* slowdown allowed, (0, 1]; 0 = 0.05 */
	double window_s;          /* armed window; 0 = 0.1 s */
	uint32_t stack_bytes;     /* stack copied per allocation; 0 = 1024 */
	volatile sig_atomic_t *stop;
	/* set (by SIGTSTP) to be stopped: the window in progress is closed first (its
	 * probes out of the target), then paused(ctx) is called, which returns when
	 * vitals is continued; NULL: not asked */
	volatile sig_atomic_t *pause;
	void (*paused)(void *ctx);
	void (*progress)(void *ctx, double elapsed_s, double total_s, uint64_t calls);
	void *progress_ctx;
};

int vt_allocs_run(const struct vt_procfs *pfs, pid_t pid, const struct vt_allocs_opts *opts,
		  struct vt_allocs **out, struct vt_err *err);
void vt_allocs_free(struct vt_allocs **a);

/* Is this demangled function name one of an allocator's wrappers (skipped for the
 * site)?  Exposed for tests. */
bool vt_allocs_is_wrapper(const char *name);

#endif

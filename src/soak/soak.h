/*
 * soak.h — the sampler loop of `vitals soak`: find (or launch) the target,
 * sample it at a fixed cadence on the monotonic clock, write every sample
 * to the store as it is taken, follow a restarted service, and stop at
 * --for, on request, or when the target is gone for good.
 *
 * Per tick: status and maps (memory counters, arenas, 64 MiB regions),
 * the cgroup's figures and every thread's cumulative CPU and context-switch
 * counters (files held open).  At their own, lower cadences: smaps_rollup
 * (it holds the target's mmap lock while it walks), per-thread rows in the
 * store, the allocator's figures (agent, or ptrace with heap set), and its
 * free memory on resident pages (a walk of glibc's arenas without stopping
 * it, spaced so that its CPU stays within free_budget).
 * With profile_every_s, a profile of profile_for_s (soak/soak_profile.h)
 * at that cadence, in a thread of its own so that sampling never waits
 * for it; each is stored in the recording when it is done (a soak that
 * ends meanwhile stops it and stores it, marked partial), and the next
 * one is of whichever process the soak follows then.
 * Reads only, except for the heap probe the user asked for and the command
 * vitals launched itself, which it stops at the end.
 */
#ifndef VT_SOAK_SOAK_H
#define VT_SOAK_SOAK_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/error.h"
#include "proc/procfs.h"

enum vt_soak_target_kind {
	VT_SOAK_PID = 1,         /* that process; when it exits, one with the same command line is followed */
	VT_SOAK_NAME,            /* the process of that name (comm or argv[0] basename) */
	VT_SOAK_PIDFILE,         /* the pid written in that file */
	VT_SOAK_COMMAND,         /* vitals launches argv (with env_add) and stops it at the end */
};

struct vt_soak_target {
	enum vt_soak_target_kind kind;
	pid_t pid;
	const char *name;
	const char *pidfile;
	char *const *argv;       /* NULL-terminated */
	char *const *env_add;    /* NULL-terminated "KEY=VALUE" added to the command's environment */
	const char *output;      /* the command's stdout and stderr go here (NULL: /dev/null) */
};

struct vt_soak_progress {
	double elapsed_s;
	double planned_s;        /* 0: until stopped */
	uint64_t samples;
	pid_t pid;               /* 0 while waiting for the target */
	int restarts;
	double committed;        /* bytes, NAN before the first sample */
	double trend;            /* bytes per second over the recent samples, NAN while too few */
	double trend_window_s;   /* what the trend covers */
	uint64_t file_bytes;
	const char *state;       /* "sampling", "waiting for the target", "stopping" */
	uint64_t profiles;       /* profiles stored so far */
	bool profiling;          /* one is being taken */
	uint64_t allocs;         /* allocation profiles stored so far */
	bool allocs_armed;       /* one is being taken */
};

struct vt_soak_config {
	struct vt_soak_target target;
	const char *out_path;
	bool overwrite;
	bool keep_command;       /* leave the launched command running at the end; res->child
	                          * says which, and the caller stops it (vt_launch_stop) */
	double every_s;          /* sampling interval */
	double for_s;            /* 0: until stopped */
	double smaps_every_s;    /* full smaps cadence; 0: never */
	double threads_every_s;  /* per-thread rows written this often (read every tick) */
	double heap_every_s;     /* allocator figures this often */
	double trim_every_s;     /* call malloc_trim(0) in it this often (changes the target: the
	                          * user asked for it), the first one this long after it is found;
	                          * each is a VT_EV_TRIM event with what it returned and how long a
	                          * thread was stopped; glibc only (a lasting refusal is one error
	                          * event and no more tries); 0: never */
	bool heap;               /* probe the allocator with ptrace when no agent answers */
	double free_every_s;     /* free memory on resident pages (sample/free_walk.h): a walk at
	                          * most this often, glibc only; 0: never */
	double free_budget;      /* the share of a core the walks may use (they are spaced
	                          * further when one costs more); 0: 1% */
	bool redact_args;        /* record a command's name only, not its arguments (those that
	                          * look like secrets never are: soak/redact.h) */
	double wait_s;           /* how long the target may take to appear at the start */
	double wait_back_s;      /* how long a followed target that exited may take to come
	                          * back before the soak ends (VT_SOAK_END_GONE); 0: for ever */
	double profile_every_s;  /* a profile (sample/profiler.h) this often, stored in the
	                          * recording; 0: none.  Taken in a thread of its own while
	                          * sampling goes on; the first at the start */
	double profile_for_s;    /* each one this long (< profile_every_s) */
	unsigned profile_hz;     /* its sampling rate; 0: the profiler's default */
	double allocs_every_s;   /* an allocation profile (sample/allocs.h) this often, stored
	                          * in the recording; 0: none.  Taken in a thread of its own,
	                          * never while a CPU profile is (its probes slow the target):
	                          * one due meanwhile waits for the other to end */
	double allocs_for_s;     /* each one this long (< allocs_every_s) */
	double allocs_budget;    /* the slowdown its probes may cost; 0: allocs' default */
	/* Ctrl-Z: set by the caller's SIGTSTP handler while an allocation profile is
	 * taken; its window is closed (the probes out of the target), then
	 * paused(pause_ctx) is called from its thread to stop vitals (sample/allocs.h) */
	volatile sig_atomic_t *pause;
	void (*paused)(void *ctx);
	void *pause_ctx;
	volatile sig_atomic_t *probes_armed;   /* set here while one is taken (the caller's
	                          * handler stops vitals at once while it is clear); may be NULL */
	const char *arm;         /* experiment arm name and its environment, for the record */
	const char *env_text;
	volatile sig_atomic_t *stop;     /* set by a signal handler: stop after this tick */
	void (*progress)(void *ctx, const struct vt_soak_progress *p);
	void *progress_ctx;
	/* Said once, when it happens (parts of the target that cannot be read); may be NULL. */
	void (*notice)(void *ctx, const char *text);
	void *notice_ctx;
};

/* Why a soak ended. */
enum vt_soak_end {
	VT_SOAK_END_FOR = 1,         /* --for was reached */
	VT_SOAK_END_STOPPED,         /* stopped on request (Ctrl-C, SIGTERM, the stop flag) */
	VT_SOAK_END_TARGET_EXITED,   /* the target exited and was not to be followed (a
	                              * launched command, or a pid without a command line) */
	VT_SOAK_END_ERROR,           /* the recording or the process could not be read: see err */
	VT_SOAK_END_GONE,            /* the target exited and did not come back within wait_back_s */
};

struct vt_soak_result {
	uint64_t samples;
	uint64_t profiles;       /* profiles stored (with --profile-every) */
	uint64_t allocs;         /* allocation profiles stored (with --allocs-every) */
	int restarts;
	double elapsed_s;
	uint64_t file_bytes;
	double own_cpu_s;        /* vitals' own CPU over the soak */
	uint64_t own_maxrss;     /* vitals' peak RSS, bytes */
	enum vt_soak_end end;
	int child_status;        /* wait status of the launched command, -1 if none or still ran */
	pid_t child;             /* with keep_command: the command, still running; 0 none */
	char end_detail[200];    /* why it ended, as the recording's stop event says */
	char missing[320];       /* what could not be read of the target and is not recorded, "" */
	int redacted;            /* enum vt_redacted (sample/series.h): what the recording leaves
	                          * out of the target's command line */
	char redacted_names[256];/* with secrets redacted: whose values ("--requirepass, MYSQL_PWD") */
	/* the free walks (free_resident, trimmable): their count, those that gave no figure,
	 * their CPU summed and the dearest one's, and the budget they kept to */
	unsigned free_walks, free_failed;
	double free_cpu_s, free_max_cpu_s, free_budget;
	char free_off[200];      /* why there are none (not glibc, memory not readable), "" */
};

/*
 * Defaults: every 10 s, smaps every 10 min, threads every 60 s, heap every
 * 60 s, free walk every 60 s within 1% of a core, wait 30 s, wait back
 * 5 min; no profiles (each 10 s when asked for).
 */
void vt_soak_config_default(struct vt_soak_config *cfg);

/*
 * Run the soak to its end, sleeping between ticks: vt_soak_start, then
 * vt_soak_step until done, then vt_soak_finish.  Errors before the first
 * sample (no such process, a kernel thread, a command that does not start,
 * a path that cannot be written) leave no recording behind.  Errors after
 * it (a full disk) stop the soak; the recording keeps every sample before,
 * *res says how many.
 */
int vt_soak_run(const struct vt_procfs *pfs, const struct vt_soak_config *cfg,
		struct vt_soak_result *res, struct vt_err *err);

/*
 * The same in steps, for a caller that runs several soaks in one thread (an
 * experiment's arms side by side) or has its own loop.  cfg and pfs must
 * outlive the soak.
 */
struct vt_soak;

/* Find or launch the target and create the recording (errors as vt_soak_run). */
int vt_soak_start(const struct vt_procfs *pfs, const struct vt_soak_config *cfg, struct vt_soak **out,
		  struct vt_err *err);
/*
 * Take the sample that is due (call it at *next, CLOCK_MONOTONIC seconds),
 * follow a restart, and say when the next one is due; *done when the soak
 * has ended (--for reached, stop requested, the target gone for good).
 * VT_OK, or the error that ended it (the recording could not be written;
 * *done is set).
 */
int vt_soak_step(struct vt_soak *sk, double *next, bool *done, struct vt_err *err);
/*
 * End the soak (also one not done: it counts as stopped), stop the command
 * it launched unless keep_command, close the recording and free sk.
 * Returns the error that ended it, or one closing the recording.
 */
int vt_soak_finish(struct vt_soak *sk, struct vt_soak_result *res, struct vt_err *err);

#endif

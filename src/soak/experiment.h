/*
 * experiment.h — the same command under several arms (each its own
 * environment), each soaked into its own recording: `vitals experiment`
 * runs the arms one after the other, `vitals demo` side by side.
 *
 * Nothing here prints: progress and each arm's start and end are reported
 * through callbacks; the caller compares the recordings (analyze/compare.h).
 */
#ifndef VT_SOAK_EXPERIMENT_H
#define VT_SOAK_EXPERIMENT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "proc/procfs.h"
#include "soak/soak.h"

#define VT_EXPERIMENT_MAX_ARMS 8
#define VT_EXPERIMENT_MAX_ENV 8

struct vt_experiment_arm {
	char name[32];                         /* also the recording's file name: letters, digits, - _ . + */
	char *env[VT_EXPERIMENT_MAX_ENV + 1];  /* owned "KEY=VALUE" (added) or "KEY" (removed), NULL-terminated */
	size_t nenv;
	char env_text[512];                    /* "KEY=VALUE KEY2=VALUE2" for people, "" none */
	double trim_every_s;                   /* its soak calls malloc_trim(0) in the command this
	                                        * often (soak.h trim_every_s); 0: never */
};

/* "cap2:MALLOC_ARENA_MAX=2[:KEY=VALUE...]" -> arm.  0, or -1 when malformed. */
int vt_experiment_parse_arm(const char *spec, struct vt_experiment_arm *arm);
/*
 * An arm from its parts: env entries are copied; env_text is what people
 * see of them (NULL: the entries joined).  0, or -1 (bad name, too many
 * entries, out of memory).
 */
int vt_experiment_arm_set(struct vt_experiment_arm *arm, const char *name, const char *const *env,
			  const char *env_text);
void vt_experiment_arm_release(struct vt_experiment_arm *arm);

struct vt_experiment {
	const struct vt_experiment_arm *arms;
	size_t narms;
	char *const *argv;                     /* the command, NULL-terminated; "{arm}" in an
	                                        * argument becomes the arm's name */
	const char *dir;                       /* where ARM.db (and ARM.db.out, its output) go */
	double for_s, every_s, heap_every_s;   /* heap_every_s 0: the soak's default */
	double smaps_every_s;                  /* 0: for_s / 4 */
	bool heap;                             /* allocator figures by ptrace too */
	bool side_by_side;                     /* all arms at once (in one thread), else one after another */
	bool overwrite;                        /* dir may hold files already: an arm's recording and
	                                        * output replace their own (never a recording a soak
	                                        * is writing); else a dir that is not empty is refused */
	bool keep_commands;                    /* leave each arm's command running at the end (its pid
	                                        * is in the result; the caller stops it) */
	volatile sig_atomic_t *stop;           /* set by a signal handler: end the arm(s) running now */
	/* Each arm's soak progress, and its start and end; may be NULL. */
	void (*progress)(void *ctx, size_t arm, const struct vt_soak_progress *p);
	void (*arm_started)(void *ctx, size_t arm, const char *path);
	void (*arm_ended)(void *ctx, size_t arm, const struct vt_soak_result *res);
	void *ctx;
};

struct vt_experiment_arm_result {
	char *path;                            /* owned: the recording, NULL when none was made */
	bool recorded;                         /* it holds samples */
	int rc;                                /* VT_OK, or why it failed (err) */
	struct vt_err err;
	struct vt_soak_result soak;
};

struct vt_experiment_result {
	struct vt_experiment_arm_result *arms; /* owned, narms */
	size_t narms;
	size_t recorded;                       /* arms with a recording, the first ones in order */
	bool stopped;                          /* the stop flag ended it */
};

/*
 * Run every arm (the directory is created if needed; one that is not empty
 * is VT_E_USAGE unless overwrite).  Arms run until
 * for_s, the stop flag, or an arm's failure: one after the other, the
 * first failure ends the experiment; side by side, every arm runs its
 * course.  Returns VT_OK, or the first arm's error (in err) when no arm
 * could record; out is filled in both cases and released with
 * vt_experiment_result_release.
 */
int vt_experiment_run(const struct vt_procfs *pfs, const struct vt_experiment *ex,
		      struct vt_experiment_result *out, struct vt_err *err);
void vt_experiment_result_release(struct vt_experiment_result *r);

#endif

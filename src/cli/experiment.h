/*
 * experiment.h — arms of `vitals experiment` (and of `vitals demo`): the
 * same command under several environments, soaked one after the other.
 */
#ifndef VT_CLI_EXPERIMENT_H
#define VT_CLI_EXPERIMENT_H

#include <stdbool.h>
#include <stddef.h>

#define VT_EXPERIMENT_MAX_ARMS 8
#define VT_EXPERIMENT_MAX_ENV 8

struct vt_experiment_arm {
	char name[32];                         /* also the recording's file name */
	char *env[VT_EXPERIMENT_MAX_ENV + 1];  /* owned "KEY=VALUE", NULL-terminated */
	size_t nenv;
	char env_text[512];                    /* "KEY=VALUE KEY2=VALUE2" for people */
};

struct vt_experiment {
	const struct vt_experiment_arm *arms;
	size_t narms;
	char *const *argv;                     /* the command, NULL-terminated */
	const char *dir;                       /* where ARM.db go */
	double for_s, every_s, heap_every_s;
	bool heap, quiet;
};

/* "cap2:MALLOC_ARENA_MAX=2[:KEY=VALUE...]" -> arm.  0, or -1 when malformed. */
int vt_experiment_parse_arm(const char *spec, struct vt_experiment_arm *arm);
void vt_experiment_arm_release(struct vt_experiment_arm *arm);

/*
 * Soak every arm in turn.  *paths_out (owned, narms entries, NULL where not
 * recorded) and *n_out the arms recorded, in order; *stopped when Ctrl-C
 * ended it early.  Returns the exit status (errors already printed).
 */
int vt_experiment_run(const struct vt_experiment *ex, char ***paths_out, size_t *n_out, bool *stopped);

#endif

/*
 * calls.h — the one place the allocator recipes (glibc.h, jemalloc.h) call
 * a function inside the target: one stopped thread (an inject session), the
 * scratch area every call of the session shares, and what the calls cost.
 *
 * Every call of a session uses the same scratch size, so each callee's
 * stack frames stay below the scratch area and never overwrite what an
 * earlier call left there for a later one (open_memstream's ptr and size,
 * filled only when fclose runs).
 */
#ifndef VT_ALLOC_CALLS_H
#define VT_ALLOC_CALLS_H

#include <stdint.h>
#include <sys/types.h>

#include "base/error.h"
#include "inject/inject.h"

#define VT_ALLOC_SCRATCH_LEN 256

struct vt_alloc_calls {
	struct vt_inject_session *s;   /* attached by the caller, borrowed */
	pid_t pid;                     /* the process, for reading what a call left in its memory */
	int timeout_ms;                /* per call */
	unsigned char scratch[VT_ALLOC_SCRATCH_LEN];   /* the scratch area after the last call */
	double callee_us;              /* time the called functions ran, summed */
	int calls;                     /* functions called */
};

/*
 * Run c (its scratch fields are set here: scratch_len, scratch_out) and
 * count its cost; *ret (may be NULL) gets the return value.  Errors: those
 * of vt_inject_run.
 */
int vt_alloc_call(struct vt_alloc_calls *cs, struct vt_inject_call *c, uint64_t *ret, struct vt_err *err);

/* func(a0, a1) with the scratch_args bits of vt_inject_call; *ret may be NULL. */
int vt_alloc_call2(struct vt_alloc_calls *cs, uint64_t func, uint64_t a0, uint64_t a1,
		   uint32_t scratch_args, uint64_t *ret, struct vt_err *err);

#endif

/*
 * profile_folded.h — a profile as collapsed stacks, the text format that
 * flame-graph tools read (flamegraph.pl, speedscope, inferno, Pyroscope's
 * importer): one line per distinct stack,
 *
 *     root;caller;...;leaf COUNT
 *
 * root first (the profile stores stacks leaf first), COUNT in samples,
 * lines sorted by their text so that two runs over one profile give the
 * same bytes.
 *
 * A frame is named as vt_profile_loc_label names it ("json_parse",
 * "libfoo.so+0x1234", "[unknown]"); a kernel frame gets the suffix "_[k]"
 * (flamegraph.pl colours those as kernel); a stack the unwinder did not
 * finish gets the synthetic root "[truncated]", so its frames are never
 * mistaken for a root's.  Bytes that would break a line are replaced: ';'
 * by ':', control characters (newline included) and DEL by '?'.  Names
 * longer than 4095 bytes are cut there.
 *
 * Stacks of every thread are merged unless asked to put each thread (or
 * pool) at the root, as perf's per-thread folded output does.  Nothing is
 * printed; errors come back as VT_E_* codes with details in err.
 */
#ifndef VT_RENDER_PROFILE_FOLDED_H
#define VT_RENDER_PROFILE_FOLDED_H

#include <stdio.h>

#include "base/buf.h"
#include "base/error.h"
#include "sample/profile.h"

/* A set of thread states (enum vt_prof_state) as a bit mask; 0 means every state. */
#define VT_PROF_STATES_ALL 0u
#define VT_PROF_STATE_BIT(s) (1u << (s))
/* A CPU profile: only the samples of threads on a CPU. */
#define VT_PROF_STATES_CPU VT_PROF_STATE_BIT(VT_PROF_RUNNING)

/* True when a stack in state `state` is in the set `states`. */
static inline int vt_prof_states_has(unsigned states, unsigned state)
{
	return states == VT_PROF_STATES_ALL || (state < 32 && (states & (1u << state)));
}

/* What goes at the root of each line. */
enum vt_folded_root {
	VT_FOLDED_MERGED = 0,     /* nothing: stacks of all threads merged */
	VT_FOLDED_BY_THREAD,      /* "comm-tid" of the thread, e.g. "worker-3-4121" */
	VT_FOLDED_BY_POOL,        /* the thread's pool ("worker-#"), or its comm when it has none */
};

struct vt_folded_opts {
	enum vt_folded_root root;
	unsigned states;          /* which samples: VT_PROF_STATE_BIT()s, VT_PROF_STATES_ALL (0) all,
	                           * VT_PROF_STATES_CPU on-CPU only */
};

/*
 * Append the folded stacks of p to out (opts NULL: merged, every state).
 * out keeps its cap (out->max): VT_E_NOMEM when the text would pass it or
 * memory runs out; out then holds a prefix and must not be used.
 */
int vt_profile_folded(const struct vt_profile *p, const struct vt_folded_opts *opts,
		      struct vt_buf *out, struct vt_err *err);

/* The same written to a stream (the caller opens it, e.g. with vt_out_fopen); VT_E_IO when
 * writing fails. */
int vt_profile_folded_write(FILE *out, const struct vt_profile *p,
			    const struct vt_folded_opts *opts, struct vt_err *err);

#endif

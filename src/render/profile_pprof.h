/*
 * profile_pprof.h — a profile as a gzipped profile.proto, the pprof format
 * that `go tool pprof`, Pyroscope and Parca read (schema: proto/profile.proto,
 * encoded with protobuf-c, compressed with zlib).
 *
 * What the file holds:
 *   - sample_type [samples/count, cpu/nanoseconds] (a CPU profile: running
 *     samples only, cpu = count * 1e9 / hz), or in wall mode
 *     [samples/count, wall/nanoseconds] over every state (a blocked sample
 *     weighs 1e9 / wall_hz); default_sample_type the second;
 *   - one Mapping per module (filename its path in the target, else its
 *     name; no address range: vitals keeps none), one Location per
 *     vt_prof_loc (address = pc), one Function per named vt_prof_func (name
 *     and system_name the symbol, filename the module's path); an address
 *     no symbol covers gets a function of its own named as
 *     vt_profile_loc_label names it ("libfoo.so+0x1234"), so pprof shows
 *     what the folded stacks show;
 *   - one Sample per stack kept, labelled thread (comm), tid, pool (when the
 *     thread has one) and, in wall mode, state and wait; a truncated stack
 *     ends in the synthetic root frame "[truncated]";
 *   - period_type cpu (or wall) nanoseconds, period 1e9 / hz, duration_nanos,
 *     time_nanos, and comments saying how it was sampled.
 *
 * Nothing is printed; errors come back as VT_E_* codes with details in err.
 */
#ifndef VT_RENDER_PROFILE_PPROF_H
#define VT_RENDER_PROFILE_PPROF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/buf.h"
#include "base/error.h"
#include "sample/profile.h"

#define VT_PPROF_TYPES_MAX 4

/* Sample types of the caller's own, in place of CPU or wall: an allocation
 * profile's alloc_objects/count, alloc_space/bytes, ... */
struct vt_pprof_types {
	unsigned n;                               /* <= VT_PPROF_TYPES_MAX */
	const char *type[VT_PPROF_TYPES_MAX], *unit[VT_PPROF_TYPES_MAX];
	const int64_t *values;    /* n per stack of the profile, in its order; every stack with
	                           * a value not 0 is a sample, whatever its state */
	unsigned default_type;
	const char *period_type, *period_unit;
	int64_t period;
	const char *comment;      /* the first comment (what the profile is), NULL: none */
};

struct vt_pprof_opts {
	bool wall;                /* every state, wall time; else running samples, CPU time */
	int64_t time_nanos;       /* when sampling began, ns since the epoch (UTC); 0 unknown */
	const struct vt_pprof_types *types;   /* NULL: CPU or wall as above */
	const char *note;         /* one more comment (the caller's cost, say), NULL none */
};

/*
 * Append the gzipped profile.proto of p to out (opts NULL: CPU, time
 * unknown).  VT_E_NOMEM when memory runs out or out->max would be passed;
 * VT_E_FAIL when zlib fails.  On failure out holds a prefix, not a profile.
 */
int vt_profile_pprof(const struct vt_profile *p, const struct vt_pprof_opts *opts,
		     struct vt_buf *out, struct vt_err *err);

/* The same written to a stream opened for binary writing; VT_E_IO when writing fails. */
int vt_profile_pprof_write(FILE *out, const struct vt_profile *p,
			   const struct vt_pprof_opts *opts, struct vt_err *err);

#endif

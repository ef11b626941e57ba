/*
 * alloc_store.h — the allocation profiles a soak takes (vitals soak
 * --allocs-every, sample/allocs.h), kept in its recording and read back
 * as looks: each profile's figures and its sites by name.
 *
 * Stored relationally (schema 6), so that a recording stays one SQLite
 * file any sqlite3 shell can query:
 *   alloc_profiles(id INTEGER PRIMARY KEY, t, wall, pid, partial, exited, comm, allocator,
 *                  file, duration_s, armed_s, windows, window_s, budget, trap_ns, slowdown,
 *                  hits, calls, bytes, frees, lost, nsites, sites_total, path, every)
 *   alloc_sites(profile_id, idx, name, module, calls, bytes, linked, freed, freed_bytes,
 *               freed_1ms, live, live_bytes, stack, PRIMARY KEY(profile_id, idx))
 * A profile keeps its VT_STORE_ALLOC_SITES sites that allocated the most
 * bytes (sites_total says how many it had); a site's stack is its first
 * stack seen, folded (root first, frames joined by ';').  path is how the calls
 * were seen: "uprobes", or "agent" (the agent's sampling, one sample every
 * `every` bytes: the sites' figures are estimates).  Counts are over
 * the probes' armed time (armed_s); unknown figures are NULL.  Each profile
 * is written in one transaction.  Recordings of schema 5 and before have no
 * allocation tables and hold none, which is said.
 *
 * Reading trusts nothing: every count is checked against its profile's
 * (a site that allocated more than its profile, freed more than it
 * followed), every figure's range, every index against the site count; a
 * damaged profile is VT_E_RECORDING saying which one and what is wrong.
 */
#ifndef VT_STORE_ALLOC_STORE_H
#define VT_STORE_ALLOC_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/error.h"
#include "sample/allocs.h"
#include "store/store.h"

/* Most sites a stored profile keeps (those of the most bytes). */
#define VT_STORE_ALLOC_SITES 128

/* One site of a stored allocation profile. */
struct vt_alloc_look_site {
	char name[256];           /* the site's function (vt_profile_loc_label) */
	char module[128];
	uint64_t calls, bytes;    /* while armed */
	uint64_t linked;          /* calls whose block could be followed */
	uint64_t freed, freed_bytes;  /* of those, freed within their window */
	uint64_t freed_1ms;       /* ... within 1 ms */
	uint64_t live, live_bytes;    /* still live when their window closed */
};

/* One stored allocation profile. */
struct vt_alloc_look {
	int64_t id;
	double t, wall;           /* when it began: soak seconds, unix time */
	pid_t pid;
	bool partial;             /* the soak ended while it was taken */
	bool exited;              /* the target exited while it was taken */
	char comm[64];
	char allocator[64];
	double duration_s, armed_s, window_s, budget;
	double trap_ns, slowdown; /* NAN unknown */
	uint64_t windows, hits, calls, bytes, frees, lost;
	uint64_t sites_total;     /* sites it had; the first nsites are kept */
	bool agent;               /* seen by the agent's sampling, not by uprobes */
	uint64_t every;           /* agent: mean bytes between samples */
	struct vt_alloc_look_site *sites;   /* by bytes, most first */
	size_t nsites;
};

struct vt_alloc_looks {
	struct vt_alloc_look *v;  /* in the order taken */
	size_t n;
	char why[200];            /* when n is 0: why there are none */
};

/*
 * Append allocation profile a, begun at t (soak seconds) and wall, marked
 * partial when the soak cut it short.  One transaction.  Errors as
 * vt_store_append.
 */
int vt_store_allocs_append(struct vt_store *st, double t, double wall, bool partial, const struct vt_allocs *a,
			   struct vt_err *err);

/*
 * Read every allocation profile in recording path into *out.  None (a
 * recording before schema 6, a soak without --allocs-every) is VT_OK with
 * n 0 and why saying so.  Errors: VT_E_RECORDING (damaged), those of
 * vt_store_load opening it, VT_E_NOMEM.  Release with
 * vt_alloc_looks_release, whatever it returned.
 */
int vt_store_allocs_load(const char *path, struct vt_alloc_looks *out, struct vt_err *err);
void vt_alloc_looks_release(struct vt_alloc_looks *l);

#endif

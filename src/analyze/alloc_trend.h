/*
 * alloc_trend.h — a soak's stored allocation profiles (store/alloc_store.h)
 * read as a whole: each site pooled over every profile, for vitals analyze;
 * and two recordings' sites set side by side, for vitals compare ("the fix
 * removed 1.1 GiB/h of churn from adapter::poll_round").
 *
 * Rates are per second of armed time (the probes' windows) pooled over the
 * profiles: a site's bytes over all of them divided by their armed time.
 * Churn is what a site allocated and freed within a window, per hour of
 * armed time.  While armed, the target's allocating code runs slower (each
 * call traps): the rates are a floor of its unprobed rates, comparable
 * between recordings taken at similar budgets.
 */
#ifndef VT_ANALYZE_ALLOC_TREND_H
#define VT_ANALYZE_ALLOC_TREND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "store/alloc_store.h"

/* A site pooled over a recording's allocation profiles. */
struct vt_alloc_trend_site {
	char name[256], module[128];
	uint64_t calls, bytes, linked, freed, freed_bytes, freed_1ms, live_bytes;
	double calls_per_s, bytes_per_s;   /* over the armed time of every profile */
	double churn_per_h;                /* bytes freed within their window, per armed hour */
	size_t looks;                      /* profiles it was seen in */
	double first_bytes_per_s;          /* in the first profile (0 when not seen there) */
	double last_bytes_per_s;           /* in the last one */
};

struct vt_alloc_trend {
	struct vt_alloc_looks looks;       /* owned */
	double armed_s, duration_s;        /* summed over the profiles */
	uint64_t calls, bytes, lost;
	double slowdown_max;               /* the largest measured slowdown; NAN none known */
	struct vt_alloc_trend_site *sites; /* by bytes, most first */
	size_t nsites;
	char why[200];                     /* no profiles: why */
};

/* A row of two recordings' sites, B against A. */
struct vt_alloc_diff_row {
	char name[256];
	double a_bytes_per_s, b_bytes_per_s;   /* 0 where the site was not seen */
	double a_churn_per_h, b_churn_per_h;
	double a_calls_per_s, b_calls_per_s;
	bool within_noise;                     /* the change is under VT_ALLOC_DIFF_NOISE of the larger,
	                                        * or a side saw too few calls to tell */
};

/* A change in a site's rate smaller than this share of the larger is within noise. */
#define VT_ALLOC_DIFF_NOISE 0.10
/* Calls a site needs (on the side that saw it more) to be judged. */
#define VT_ALLOC_DIFF_MIN_CALLS 50

struct vt_alloc_diff {
	struct vt_alloc_trend a, b;            /* owned */
	struct vt_alloc_diff_row *rows;        /* by the size of the change in bytes/s, largest first */
	size_t nrows;
	char headline[512];                    /* the churn change that matters most, or why none */
	char why[200];                         /* a side without profiles: why ("" when both have) */
};

/*
 * Read recording path's allocation profiles and pool their sites.  None is
 * VT_OK with looks.n 0 and why saying so.  Errors as vt_store_allocs_load.
 * Release with vt_alloc_trend_release, whatever it returned.
 */
int vt_alloc_trend_load(const char *path, struct vt_alloc_trend *out, struct vt_err *err);
/* The same from looks already read (taken over: released with the trend). */
int vt_alloc_trend_from(struct vt_alloc_looks *looks, struct vt_alloc_trend *out, struct vt_err *err);
void vt_alloc_trend_release(struct vt_alloc_trend *t);

/* Recording b's sites against baseline a's (both read).  Errors as vt_alloc_trend_load. */
int vt_alloc_diff_files(const char *a, const char *b, struct vt_alloc_diff *out, struct vt_err *err);
/* The rows and headline of d from its a and b, already pooled (exposed for tests).  VT_E_NOMEM. */
int vt_alloc_diff_sites(struct vt_alloc_diff *d, struct vt_err *err);
void vt_alloc_diff_release(struct vt_alloc_diff *d);

#endif

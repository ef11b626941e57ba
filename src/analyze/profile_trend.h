/*
 * profile_trend.h — the profiles a soak stored (store/profile_store.h),
 * over time: CPU by bucket at each, and which bucket grew when CPU rose;
 * and two recordings' profiles set against each other (vitals compare).
 *
 * Each stored profile is summarized (analyze/profile_summary.h) with the
 * same bucket rules; its row gives the process's CPU over the profile in
 * cores, from the soak's own samples around it (the cumulative user and
 * system CPU at the last sample at or before its start and the first at or
 * after its end, of the same process), else from the profile's reading.
 *
 * The finding compares the profile of lowest CPU with that of highest
 * (profiles with too few samples left out; first and last when CPU is
 * unknown).  A bucket's CPU at each is its share × the cores; it grew when
 * the increase is larger than its ± (the shares' 95% intervals scaled by
 * the cores, added in quadrature).  Fewer than two usable profiles, CPU
 * that did not rise, or increases all inside their ± give "cannot tell
 * yet" with the reason.
 *
 * Pure apart from reading the recording: nothing here reads /proc.
 */
#ifndef VT_ANALYZE_PROFILE_TREND_H
#define VT_ANALYZE_PROFILE_TREND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyze/profile_buckets.h"
#include "analyze/profile_summary.h"
#include "sample/series.h"
#include "store/profile_store.h"

#define VT_PROF_TREND_GREW_MAX 3      /* buckets named in the finding */
#define VT_PROF_DIFF_FUNCS 15         /* functions in a comparison */
/* CPU rose when the highest is this much above the lowest (relative) and ... */
#define VT_PROF_TREND_RISE_REL 0.10
/* ... this many cores above it */
#define VT_PROF_TREND_RISE_ABS 0.02

/* One stored profile, summarized. */
struct vt_prof_trend_row {
	struct vt_store_profile at;   /* when, of which process, partial */
	double cores;                 /* the process's CPU over it, cores; NAN unknown */
	bool cores_from_samples;      /* from the soak's samples (else the profile's own reading) */
	uint64_t cpu_samples;         /* on-CPU samples */
	bool few_samples;             /* under VT_PROF_FEW_SAMPLES: shown, never compared */
	struct vt_prof_share share[VT_BUCKET_MAX_BUCKETS];   /* by bucket index of the rules */
	bool error;                   /* the profile could not be read: err_msg says why */
	char err_msg[VT_ERR_MSG_MAX];
};

/* A bucket whose CPU grew between two profiles. */
struct vt_prof_growth {
	uint32_t bucket;
	double share_from, share_to;  /* of on-CPU samples, 0..1 */
	double cores_from, cores_to;  /* share × the process's cores */
	double delta, pm;             /* cores_to - cores_from, and its ± */
};

enum vt_prof_trend_verdict {
	VT_PT_NONE = 0,               /* no profiles in the recording */
	VT_PT_CANNOT_TELL,            /* why says why */
	VT_PT_GREW,                   /* grew[] names the buckets */
};

struct vt_prof_trend {
	char bucket_names[VT_BUCKET_MAX_BUCKETS][VT_BUCKET_NAME_MAX + 1];
	uint32_t nbuckets;            /* the rules' */
	bool seen[VT_BUCKET_MAX_BUCKETS];   /* buckets with on-CPU samples in some profile */
	struct vt_prof_trend_row *rows;     /* in the order they were taken */
	size_t n;
	enum vt_prof_trend_verdict verdict;
	char why[256];                /* the finding in words (cannot tell: the reason) */
	size_t from, to;              /* rows compared (VT_PT_GREW, and CANNOT_TELL past 2 rows) */
	bool by_cpu;                  /* from/to are the lowest and highest CPU (else first, last) */
	struct vt_prof_growth grew[VT_PROF_TREND_GREW_MAX];
	uint32_t ngrew;
};

/*
 * The profiles of the recording at path, with the soak's samples s (its
 * vt_store_load; may be NULL: CPU from the profiles alone) and rules
 * (NULL: the built-ins), into *out (the caller's: vt_prof_trend_release).
 * A recording without profiles gives n 0 and VT_PT_NONE.  A profile that
 * cannot be read is a row with error set; opening the recording failing
 * is the error (as vt_store_profiles_open).  VT_E_NOMEM.
 */
int vt_prof_trend_load(const char *path, const struct vt_series *s, const struct vt_bucket_rules *rules,
		       struct vt_prof_trend *out, struct vt_err *err);
void vt_prof_trend_release(struct vt_prof_trend *t);

/* The same from rows already made (rows owned by t: malloc'ed), the finding filled in. */
void vt_prof_trend_judge(struct vt_prof_trend *t);

/* ---- two recordings' profiles, set against each other (vitals compare) ---- */

struct vt_prof_diff_bucket {
	char name[VT_BUCKET_NAME_MAX + 1];
	struct vt_prof_share a, b;    /* share of each side's on-CPU samples */
	double delta, pm;             /* b - a, and its ± (the intervals' half-widths in quadrature) */
	bool changed;                 /* |delta| > pm */
};

struct vt_prof_diff_func {
	char label[160];              /* "json_parse" or "libfoo.so+0x1234" */
	char module[96];
	double a, b;                  /* self share of each side's on-CPU samples, 0..1 */
	double delta, pm;
	bool changed;
};

struct vt_prof_diff {
	size_t a_profiles, b_profiles;        /* profiles pooled on each side */
	uint64_t a_samples, b_samples;        /* on-CPU samples pooled */
	bool few_samples;                     /* one side under VT_PROF_FEW_SAMPLES */
	struct vt_prof_diff_bucket *buckets;  /* every bucket with samples, by |delta| */
	uint32_t nbuckets;
	struct vt_prof_diff_func funcs[VT_PROF_DIFF_FUNCS];   /* by |delta| */
	uint32_t nfuncs;
	/*
	 * For a differential flame graph (render/profile_html.h, base mode):
	 * each side's profiles pooled into one (sample/profile.h
	 * vt_profile_merge), as the tables pool them; owned here.
	 */
	struct vt_profile *a_pooled, *b_pooled;
};

/*
 * Pool the profiles of recordings a and b (each side's on-CPU samples
 * added up by bucket and by function) and set b against a.  VT_OK with
 * a_profiles or b_profiles 0 when one holds none (nothing to compare);
 * errors as vt_store_profiles_open, VT_E_RECORDING for a damaged profile.
 */
int vt_prof_diff_files(const char *a, const char *b, const struct vt_bucket_rules *rules,
		       struct vt_prof_diff *out, struct vt_err *err);
void vt_prof_diff_release(struct vt_prof_diff *d);

#endif

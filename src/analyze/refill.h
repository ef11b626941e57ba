/*
 * refill.h — what a malloc_trim(0) bought, from the curve of committed
 * memory (RssAnon + VmSwap) followed after it: how much it returned, how
 * fast the program took it back (the half-life), the level it went back to
 * and when, and the verdict a user acts on: a periodic trim holds about so
 * much less, or it refills within a tick (not a lever), or the follow ended
 * before the curve could tell.
 *
 * Reads numbers only (the points vitals heap --trim --follow took); never
 * /proc, never the target.  Every figure is NAN when the curve cannot say it.
 */
#ifndef VT_ANALYZE_REFILL_H
#define VT_ANALYZE_REFILL_H

#include <stdbool.h>
#include <stddef.h>

/* A trim that returned less than this share of committed (or less than 1 MiB) is nothing to follow. */
#define VT_REFILL_MIN_SHARE 0.01
#define VT_REFILL_MIN_BYTES (1024.0 * 1024.0)
/* "Back at its level": within this share of what the trim returned. */
#define VT_REFILL_LEVEL_TOL 0.10
/*
 * A tick is max(VT_REFILL_MIN_PERIOD_S, the sampling interval): the shortest
 * trim period worth a verdict.  A refill whose half-life is under
 * VT_REFILL_TICKS ticks is "within a tick": a trim would have to run about
 * every tick to hold anything, and the curve cannot resolve it anyway (one
 * reading after the trim already shows half of it back).
 */
#define VT_REFILL_MIN_PERIOD_S 1.0
#define VT_REFILL_TICKS 2.0
/*
 * "Settled lower" needs the curve flat for at least this many ticks after
 * it came to its level: a follow cut short (Ctrl-C, a target slow to start
 * its refill) that saw only the bottom for a moment cannot tell "for good".
 */
#define VT_REFILL_SETTLE_TICKS 5.0

struct vt_refill_input {
	const double *t;          /* s since the trim call returned, ascending; t[0] = 0 (the
	                           * reading right after it) */
	const double *committed;  /* bytes at each t (NAN: not read) */
	size_t n;
	double before;            /* committed right before the trim, bytes */
	double every_s;           /* the sampling interval of the follow */
	double period_s;          /* the trim period to compute the relief for; 0: picked (near the
	                           * half-life) */
	double lead_s;            /* committed was read this long before the trim (0: it was not) */
	double lead_slope;        /* ... and rose this fast meanwhile, bytes/s (least squares) */
};

/*
 * Growth the lead-in saw counts against the refill when, at its pace, it
 * alone would bring back at least this share of what the trim returned by
 * the half-life (or by the end of the follow when half never came back).
 */
#define VT_REFILL_GROWTH_SHARE 0.25

enum vt_refill_kind {
	VT_REFILL_NOTHING = 1,    /* the trim returned too little to follow: not a lever */
	VT_REFILL_WITHIN_TICK,    /* half of it was back within VT_REFILL_TICKS ticks: not a lever */
	VT_REFILL_BACK,           /* back at its level within the follow: a periodic trim holds relief */
	VT_REFILL_SETTLED_LOWER,  /* flat again below where it was: part of it stays returned */
	VT_REFILL_CANNOT_TELL,    /* still on its way back when the follow ended */
};

struct vt_refill_verdict {
	enum vt_refill_kind kind;
	double before, after;     /* committed right before and right after the trim, bytes */
	double returned;          /* before - after, bytes */
	double followed_s;        /* the last point's t */
	double tick_s;            /* the shortest period judged: max(every_s, VT_REFILL_MIN_PERIOD_S) */
	double half_life_s;       /* first time half of returned was back (interpolated), NAN never */
	double level;             /* where it went back to: median of the last points, bytes; NAN
	                           * when too few points */
	double level_at_s;        /* when it came within VT_REFILL_LEVEL_TOL of returned of level, NAN */
	double refilled_share;    /* (level - after) / returned: 1 all back, 0 none */
	double held_for_good;     /* SETTLED_LOWER: before - level, bytes; else 0 */
	double period_s;          /* the trim period the relief is for, NAN none */
	double relief;            /* mean of (before - committed(t)) over t in [0, period_s], bytes;
	                           * NAN when the follow did not cover period_s */
	double lead_s, lead_slope;   /* as given; lead_slope NAN without a lead-in */
	double growth_share;      /* lead_slope x (half-life, or followed_s) / returned: how much of
	                           * the refill the growth before the trim explains; NAN unknown */
	bool growing;             /* growth_share >= VT_REFILL_GROWTH_SHARE: the curve is growth as
	                           * much as refill, and its half-life flatters the trim less than it seems */
	bool overshot;            /* the level ended above before by half of returned or more: the
	                           * process grew past where the trim found it (growth, not only refill) */
};

/* Least-squares slope of committed over t (points with both finite); NAN with fewer than 2. */
double vt_refill_slope(const double *t, const double *committed, size_t n);

/*
 * Judge the curve.  Needs in->n >= 1 and a finite in->before and
 * in->committed[0]; returns 0, or -1 (out->kind 0) when it cannot be judged at all.
 */
int vt_refill_judge(const struct vt_refill_input *in, struct vt_refill_verdict *out);

/*
 * Mean of (before - committed(t)) over t in [0, period_s], committed taken
 * linearly between the points: NAN when period_s <= 0 or beyond the last point.
 */
double vt_refill_relief(const double *t, const double *committed, size_t n, double before, double period_s);

/* A trim period near x seconds, in steps a person would choose (1 s under 20 s, 5 s, 30 s, 1 min), at least min_s. */
double vt_refill_round_period(double x, double min_s);

#endif

/*
 * soak_swap.c — RssAnon pushed out to swap and pulled back in over a soak
 * (see soak_internal.h): memory paged out is not memory freed, and a
 * committed figure that stays flat through it says so.
 */
#include "analyze/soak_internal.h"

#include <math.h>

struct swap_scan {
	const struct vt_stat *anon, *swap, *committed;
	double tol;
};

static bool swap_known(const struct swap_scan *sc, size_t i)
{
	return !isnan(sc->anon[i].mean) && !isnan(sc->swap[i].mean);
}

static double committed_at(const struct swap_scan *sc, size_t i)
{
	if (sc->committed && !isnan(sc->committed[i].mean))
		return sc->committed[i].mean;
	return sc->anon[i].mean + sc->swap[i].mean;
}

/* Median of one of anon (0), swap (1), committed (2) over the known points [a, b]. */
static double swap_level(struct vt_soak_work *w, const struct swap_scan *sc, int which, size_t a, size_t b)
{
	size_t i, n = 0;

	for (i = a; i <= b; i++) {
		if (!swap_known(sc, i))
			continue;
		w->tmp[n++] = which == 0 ? sc->anon[i].mean : which == 1 ? sc->swap[i].mean
						: committed_at(sc, i);
	}
	return vt_stat_median(w->tmp, n);
}

/*
 * A falling swing of RssAnon from its high at a to its low at b.  The
 * extremes are noise peaks on flat stretches: the motion itself runs from
 * the last point within 10% of the drop from the high to the first within
 * 10% of the low, and the levels either side are the medians of those
 * flat stretches.  An episode when swap took about what RssAnon lost
 * (50%..150%) and committed stayed within the tolerance (nothing freed).
 */
static void swap_leg(struct vt_soak_work *w, const struct swap_scan *sc, size_t a, size_t b,
		     struct vt_soak_verdict *v)
{
	struct vt_swap_motion *sw = &v->swap;
	double drop = sc->anon[a].mean - sc->anon[b].mean, edge = 0.1 * drop, da, ds, dc;
	size_t i, start = a, end = b;

	for (i = a; i <= b; i++) {
		if (!swap_known(sc, i))
			continue;
		if (sc->anon[i].mean < sc->anon[a].mean - edge)
			break;
		start = i;
	}
	for (i = start; i <= b; i++)
		if (swap_known(sc, i) && sc->anon[i].mean <= sc->anon[b].mean + edge)
			break;
	end = i <= b ? i : b;
	da = swap_level(w, sc, 0, end, b) - swap_level(w, sc, 0, a, start);
	ds = swap_level(w, sc, 1, end, b) - swap_level(w, sc, 1, a, start);
	dc = swap_level(w, sc, 2, end, b) - swap_level(w, sc, 2, a, start);
	if (!(-da > sc->tol) || !(ds >= 0.5 * -da && ds <= 1.5 * -da) || !(fabs(dc) < sc->tol))
		return;
	sw->episodes++;
	if (sw->episodes == 1 || da < sw->anon_delta) {
		sw->t0 = w->s->t1[start];
		sw->t1 = w->s->t0[end];
		sw->anon_delta = da;
		sw->swap_delta = ds;
		sw->committed_delta = dc;
	}
}

/*
 * RssAnon's swings, found with hysteresis (a turn counts once the value
 * moved back by more than the tolerance), so noise does not split one
 * push into many; each falling swing is checked by swap_leg.  seen: at
 * least one episode (what the views key on); the tolerance is committed's.
 */
static void swap_motion(struct vt_soak_work *w, struct vt_soak_verdict *v)
{
	const struct vt_series *s = w->s;
	struct vt_swap_motion *sw = &v->swap;
	struct swap_scan sc = { s->m[VT_M_RSS_ANON], s->m[VT_M_VM_SWAP], s->m[VT_M_COMMITTED], 0 };
	size_t i, ext = v->to, start = v->to;
	double noise, level;
	bool falling = false;

	if (!sc.anon || !sc.swap)
		return;
	sc.tol = v->metric == VT_M_COMMITTED ? v->tolerance
		 : vt_soak_tolerance_of(w, VT_M_COMMITTED, v->from, v->to, &noise, &level);
	if (isnan(sc.tol))
		sc.tol = vt_soak_tolerance_of(w, VT_M_RSS_ANON, v->from, v->to, &noise, &level);
	if (isnan(sc.tol))
		return;
	for (i = v->from; i < v->to; i++) {
		double a = sc.anon[i].mean;

		if (!swap_known(&sc, i))
			continue;
		if (ext == v->to) {
			ext = start = i;
			continue;
		}
		if (!falling) {
			if (a > sc.anon[ext].mean) {
				ext = i;
			} else if (sc.anon[ext].mean - a > sc.tol) {
				start = ext;
				ext = i;
				falling = true;
			}
		} else if (a < sc.anon[ext].mean) {
			ext = i;
		} else if (a - sc.anon[ext].mean > sc.tol) {
			swap_leg(w, &sc, start, ext, v);
			start = ext;
			ext = i;
			falling = false;
		}
	}
	if (falling)
		swap_leg(w, &sc, start, ext, v);
	sw->seen = sw->episodes > 0;
}

/* RssAnon's range in the settled window, else the span (5th..95th percentile). */
static void anon_range(struct vt_soak_work *w, struct vt_soak_verdict *v)
{
	const struct vt_stat *st = w->s->m[VT_M_RSS_ANON];
	size_t i, from = v->settled ? v->settled_from : v->from, n = 0;

	if (!st)
		return;
	for (i = from; i < v->to; i++)
		if (!isnan(st[i].lo))
			w->tmp[n++] = st[i].lo;
	v->swap.anon_range_lo = vt_stat_quantile(w->tmp, n, RANGE_Q);
	for (i = from, n = 0; i < v->to; i++)
		if (!isnan(st[i].hi))
			w->tmp[n++] = st[i].hi;
	v->swap.anon_range_hi = vt_stat_quantile(w->tmp, n, 1 - RANGE_Q);
}

void vt_soak_swap(struct vt_soak_work *w, struct vt_soak_verdict *v)
{
	swap_motion(w, v);
	anon_range(w, v);
}

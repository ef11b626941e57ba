/*
 * trim_follow.c — the refill after a trim, read point by point (see
 * trim_follow.h).  One pread of the held-open status per point: a few
 * microseconds of vitals' time, nothing of the target's.
 */
#include "sample/trim_follow.h"

#include "base/clock.h"
#include "base/unknown.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int append(struct vt_trim_follow *f, double t, double committed, struct vt_err *err)
{
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 256;
		double *nt = realloc(f->t_s, cap * sizeof(*nt)), *nc;

		if (!nt)
			return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory for the refill's points");
		f->t_s = nt;
		if (!(nc = realloc(f->committed, cap * sizeof(*nc))))
			return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory for the refill's points");
		f->committed = nc;
		f->cap = cap;
	}
	f->t_s[f->n] = t;
	f->committed[f->n] = committed;
	f->n++;
	return VT_OK;
}

void vt_trim_follow_release(struct vt_trim_follow *f)
{
	free(f->t_s);
	free(f->committed);
	memset(f, 0, sizeof(*f));
}

int vt_trim_follow_run(struct vt_watch *w, double start_mono_s, double committed_after,
		       const struct vt_trim_follow_opts *o, struct vt_trim_follow *out, struct vt_err *err)
{
	uint64_t k;
	int rc;

	memset(out, 0, sizeof(*out));
	out->every_s = o->every_s;
	out->asked_s = o->for_s;
	if ((rc = append(out, 0, committed_after, err)))
		return rc;
	for (k = 1;; k++) {
		double due = start_mono_s + (double)k * o->every_s, t0, committed = NAN;
		struct vt_proc_status st;
		struct vt_err e;

		if (due > start_mono_s + o->for_s + 1e-9) {
			out->end = VT_FOLLOW_DONE;
			break;
		}
		if (o->stop && *o->stop) {
			out->end = VT_FOLLOW_STOPPED;
			break;
		}
		if (due > vt_mono_s())
			vt_sleep_until_ns((uint64_t)(due * 1e9), o->stop);
		if (o->stop && *o->stop) {
			out->end = VT_FOLLOW_STOPPED;
			break;
		}
		if (vt_mono_s() > due + o->every_s)
			continue;       /* vitals was stopped or starved: skip the points missed, never burst */
		t0 = vt_mono_s();
		rc = vt_watch_status(w, &st, &e);
		out->read_ms += (vt_mono_s() - t0) * 1000;
		/* a zombie's status still reads, without its memory: it is gone all the same */
		if (rc == VT_E_GONE || rc == VT_E_NOPROC || (rc == VT_OK && (st.state == 'Z' || st.state == 'X'))) {
			out->end = VT_FOLLOW_GONE;
			break;
		}
		if (rc == VT_OK && vt_known(st.rss_anon) && vt_known(st.vm_swap))
			committed = (double)(st.rss_anon + st.vm_swap);
		if ((rc = append(out, (double)k * o->every_s, committed, err)))
			return rc;
		if (o->progress)
			o->progress(o->ctx, out, o->for_s - (double)k * o->every_s);
	}
	return VT_OK;
}

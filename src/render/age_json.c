/*
 * age_json.c — `vitals compare --by-age --json` (schema
 * "vitals.compare_age", docs/json.md): the incarnations, the ages they
 * share and every window with compare's fields.  Sizes are integers in
 * bytes, ages and times seconds; what is unknown is null.
 */
#include "render/age_compare.h"
#include "render/json.h"
#include "render/soak.h"

#include "base/units.h"
#include "base/json_lib.h"

#include <math.h>
#include <string.h>

static json_t *done(struct vt_json_put *p)
{
	if (p->failed) {
		json_decref(p->o);
		return NULL;
	}
	return p->o;
}

static json_t *arm_json(const struct vt_age_report *r, size_t i, const char *recording)
{
	const struct vt_age_comparison *c = r->cmp;
	const struct vt_age_arm *a = &c->arms[i];
	struct vt_json_put p = { json_object(), false };
	char line[640];

	vt_json_put(&p, "name", vt_json_text(a->name));
	vt_json_put(&p, "recording", recording ? vt_json_text(recording) : json_null());
	vt_json_put(&p, "incarnation", json_integer((json_int_t)a->incarnation + 1));
	vt_json_put(&p, "pid", json_integer(a->pid));
	vt_json_put(&p, "start_recorded", json_boolean(a->start_recorded));
	vt_json_put(&p, "started_t", vt_json_real(a->started_t));
	vt_json_put(&p, "started_wall", vt_json_utc(a->started_wall));
	vt_json_put(&p, "age_first_s", vt_json_real(a->age_first));
	vt_json_put(&p, "age_last_s", vt_json_real(a->age_last));
	vt_json_put(&p, "samples", json_integer((json_int_t)a->samples));
	vt_json_put(&p, "exited", json_boolean(a->exited));
	vt_json_put(&p, "younger", json_boolean(i == c->ends_with));
	vt_json_put(&p, "summary", vt_json_text(vt_age_arm_line(c, i, line, sizeof(line))));
	return done(&p);
}

static json_t *field_json(const struct vt_comparison *w, enum vt_metric f)
{
	struct vt_json_put p = { json_object(), false };
	json_t *arms = json_array();
	size_t i;

	vt_json_put(&p, "key", json_string(vt_metrics[f].key));
	vt_json_put(&p, "label", json_string(vt_metrics[f].label));
	vt_json_put(&p, "unit", json_string(vt_unit_name(vt_metrics[f].unit)));
	for (i = 0; i < w->narms; i++) {
		const struct vt_cmp_cell *cl = &w->arms[i].cell[f];
		const struct vt_cmp_diff *d = &w->diff[i][f];
		bool dk = i > 0 && d->known;
		struct vt_json_put x = { json_object(), false };

		vt_json_put(&x, "arm", vt_json_text(w->arms[i].name));
		vt_json_put(&x, "median", cl->known ? vt_json_metric(f, cl->median) : json_null());
		vt_json_put(&x, "lo", cl->known ? vt_json_metric(f, cl->lo) : json_null());
		vt_json_put(&x, "hi", cl->known ? vt_json_metric(f, cl->hi) : json_null());
		vt_json_put(&x, "noise", cl->known ? vt_json_metric(f, cl->noise) : json_null());
		vt_json_put(&x, "delta", dk ? vt_json_metric(f, d->delta) : json_null());
		vt_json_put(&x, "pct", dk ? vt_json_real(d->pct) : json_null());
		vt_json_put(&x, "within_noise", dk ? json_boolean(d->within_noise) : json_null());
		p.failed |= x.failed;
		vt_json_append(arms, x.o, &p.failed);
	}
	vt_json_put(&p, "arms", arms);
	return done(&p);
}

static json_t *window_json(const struct vt_age_comparison *c, size_t k)
{
	const struct vt_age_window *w = &c->windows[k];
	struct vt_json_put p = { json_object(), false };
	json_t *fields = json_array(), *samples = json_array();
	size_t i;
	int f;

	vt_json_put(&p, "age_s", vt_json_real(w->age));
	vt_json_put(&p, "age_from_s", vt_json_real(w->age_from));
	vt_json_put(&p, "headline", json_boolean(k + 1 == c->nwindows));
	for (i = 0; i < w->cmp.narms; i++)
		vt_json_append(samples, json_integer((json_int_t)w->cmp.arms[i].window_samples), &p.failed);
	vt_json_put(&p, "samples", samples);
	for (f = 0; f < VT_M_COUNT; f++)
		if (vt_metrics[f].flags & VT_MF_COMPARE)
			vt_json_append(fields, field_json(&w->cmp, (enum vt_metric)f), &p.failed);
	vt_json_put(&p, "fields", fields);
	return done(&p);
}

int vt_render_age_json(FILE *out, const struct vt_age_report *r)
{
	const struct vt_age_comparison *c = r->cmp;
	struct vt_json_put p = { vt_json_envelope(VT_SCHEMA_COMPARE_AGE), false };
	json_t *recs = json_array(), *arms = json_array(), *windows = json_array();
	struct vt_json_put common = { json_object(), false };
	char line[1024];
	size_t i, recorded = 0;

	if (!c) {
		json_decref(p.o);
		json_decref(recs);
		json_decref(arms);
		json_decref(windows);
		json_decref(common.o);
		return -1;
	}
	for (i = 0; i < r->npaths; i++)
		vt_json_append(recs, vt_json_text(r->paths[i]), &p.failed);
	vt_json_put(&p, "recordings", recs);
	vt_json_put(&p, "metric", json_string(vt_metrics[c->metric].key));
	vt_json_put(&p, "headline", vt_json_text(vt_age_headline(c, line, sizeof(line))));
	for (i = 0; i < c->narms; i++)
		recorded += c->arms[i].start_recorded;
	vt_json_put(&p, "ages_from", json_string(recorded == c->narms ? "start" : recorded ? "mixed" : "first_sample"));
	vt_json_put(&p, "baseline", c->narms ? vt_json_text(c->arms[0].name) : json_null());
	for (i = 0; i < c->narms; i++)
		vt_json_append(arms, arm_json(r, i, c->arms[i].recording < r->npaths ? r->paths[c->arms[i].recording] : NULL),
		       &p.failed);
	vt_json_put(&p, "arms", arms);
	vt_json_put(&common, "from_s", vt_json_real(c->common_from));
	vt_json_put(&common, "to_s", vt_json_real(c->common_to));
	p.failed |= common.failed;
	vt_json_put(&p, "common_ages", common.o);
	vt_json_put(&p, "window_s", vt_json_real(c->width_s));
	vt_json_put(&p, "window_clamped", json_boolean(c->width_clamped));
	for (i = 0; i < c->nwindows; i++)
		vt_json_append(windows, window_json(c, i), &p.failed);
	vt_json_put(&p, "windows", windows);
	return vt_json_write(out, p.o, false, p.failed);
}

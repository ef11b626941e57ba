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

#include <jansson.h>
#include <math.h>
#include <string.h>

static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* A figure of metric m: bytes whole, the rest real. */
static json_t *value(enum vt_metric m, double v)
{
	if (vt_metrics[m].unit == VT_UNIT_BYTES)
		return isfinite(v) && fabs(v) < 9e18 ? json_integer((json_int_t)llround(v)) : json_null();
	return num(v);
}

static json_t *iso(double wall)
{
	char buf[40];

	if (!isfinite(wall) || wall <= 0)
		return json_null();
	return json_string(vt_fmt_utc(wall, true, buf, sizeof(buf)));
}

/* Collects one failure over many sets; both steal v. */
struct put {
	json_t *o;
	bool failed;
};

static void put(struct put *p, const char *key, json_t *v)
{
	if (!p->o) {
		json_decref(v);
		p->failed = true;
	} else if (!v || json_object_set_new(p->o, key, v)) {
		p->failed = true;
	}
}

static void append(json_t *arr, json_t *v, bool *failed)
{
	if (!arr) {
		json_decref(v);
		*failed = true;
	} else if (!v || json_array_append_new(arr, v)) {
		*failed = true;
	}
}

static json_t *done(struct put *p)
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
	struct put p = { json_object(), false };
	char line[640];

	put(&p, "name", vt_json_text(a->name));
	put(&p, "recording", recording ? vt_json_text(recording) : json_null());
	put(&p, "incarnation", json_integer((json_int_t)a->incarnation + 1));
	put(&p, "pid", json_integer(a->pid));
	put(&p, "start_recorded", json_boolean(a->start_recorded));
	put(&p, "started_t", num(a->started_t));
	put(&p, "started_wall", iso(a->started_wall));
	put(&p, "age_first_s", num(a->age_first));
	put(&p, "age_last_s", num(a->age_last));
	put(&p, "samples", json_integer((json_int_t)a->samples));
	put(&p, "exited", json_boolean(a->exited));
	put(&p, "younger", json_boolean(i == c->ends_with));
	put(&p, "summary", vt_json_text(vt_age_arm_line(c, i, line, sizeof(line))));
	return done(&p);
}

static json_t *field_json(const struct vt_comparison *w, enum vt_metric f)
{
	struct put p = { json_object(), false };
	json_t *arms = json_array();
	size_t i;

	put(&p, "key", json_string(vt_metrics[f].key));
	put(&p, "label", json_string(vt_metrics[f].label));
	put(&p, "unit", json_string(vt_unit_name(vt_metrics[f].unit)));
	for (i = 0; i < w->narms; i++) {
		const struct vt_cmp_cell *cl = &w->arms[i].cell[f];
		const struct vt_cmp_diff *d = &w->diff[i][f];
		bool dk = i > 0 && d->known;
		struct put x = { json_object(), false };

		put(&x, "arm", vt_json_text(w->arms[i].name));
		put(&x, "median", cl->known ? value(f, cl->median) : json_null());
		put(&x, "lo", cl->known ? value(f, cl->lo) : json_null());
		put(&x, "hi", cl->known ? value(f, cl->hi) : json_null());
		put(&x, "noise", cl->known ? value(f, cl->noise) : json_null());
		put(&x, "delta", dk ? value(f, d->delta) : json_null());
		put(&x, "pct", dk ? num(d->pct) : json_null());
		put(&x, "within_noise", dk ? json_boolean(d->within_noise) : json_null());
		p.failed |= x.failed;
		append(arms, x.o, &p.failed);
	}
	put(&p, "arms", arms);
	return done(&p);
}

static json_t *window_json(const struct vt_age_comparison *c, size_t k)
{
	const struct vt_age_window *w = &c->windows[k];
	struct put p = { json_object(), false };
	json_t *fields = json_array(), *samples = json_array();
	size_t i;
	int f;

	put(&p, "age_s", num(w->age));
	put(&p, "age_from_s", num(w->age_from));
	put(&p, "headline", json_boolean(k + 1 == c->nwindows));
	for (i = 0; i < w->cmp.narms; i++)
		append(samples, json_integer((json_int_t)w->cmp.arms[i].window_samples), &p.failed);
	put(&p, "samples", samples);
	for (f = 0; f < VT_M_COUNT; f++)
		if (vt_metrics[f].flags & VT_MF_COMPARE)
			append(fields, field_json(&w->cmp, (enum vt_metric)f), &p.failed);
	put(&p, "fields", fields);
	return done(&p);
}

int vt_render_age_json(FILE *out, const struct vt_age_report *r)
{
	const struct vt_age_comparison *c = r->cmp;
	struct put p = { vt_json_envelope(VT_SCHEMA_COMPARE_AGE), false };
	json_t *recs = json_array(), *arms = json_array(), *windows = json_array();
	struct put common = { json_object(), false };
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
		append(recs, vt_json_text(r->paths[i]), &p.failed);
	put(&p, "recordings", recs);
	put(&p, "metric", json_string(vt_metrics[c->metric].key));
	put(&p, "headline", vt_json_text(vt_age_headline(c, line, sizeof(line))));
	for (i = 0; i < c->narms; i++)
		recorded += c->arms[i].start_recorded;
	put(&p, "ages_from", json_string(recorded == c->narms ? "start" : recorded ? "mixed" : "first_sample"));
	put(&p, "baseline", c->narms ? vt_json_text(c->arms[0].name) : json_null());
	for (i = 0; i < c->narms; i++)
		append(arms, arm_json(r, i, c->arms[i].recording < r->npaths ? r->paths[c->arms[i].recording] : NULL),
		       &p.failed);
	put(&p, "arms", arms);
	put(&common, "from_s", num(c->common_from));
	put(&common, "to_s", num(c->common_to));
	p.failed |= common.failed;
	put(&p, "common_ages", common.o);
	put(&p, "window_s", num(c->width_s));
	put(&p, "window_clamped", json_boolean(c->width_clamped));
	for (i = 0; i < c->nwindows; i++)
		append(windows, window_json(c, i), &p.failed);
	put(&p, "windows", windows);
	return vt_json_write(out, p.o, false, p.failed);
}

/*
 * json.c — the schemas, the envelope, target text and writing (see json.h).
 */
#include "render/json.h"

#include "base/units.h"
#include "base/version.h"

#include <math.h>

#include <stdlib.h>
#include <string.h>

const struct vt_schema_info vt_schemas[VT_SCHEMA__COUNT] = {
	[VT_SCHEMA_SNAP] = { "vitals.snap", 1 },
	[VT_SCHEMA_HEAP] = { "vitals.heap", 1 },
	[VT_SCHEMA_THREADS] = { "vitals.threads", 1 },
	[VT_SCHEMA_ANALYZE] = { "vitals.analyze", 1 },
	[VT_SCHEMA_COMPARE] = { "vitals.compare", 2 },
	[VT_SCHEMA_PROFILE] = { "vitals.profile", 1 },
	[VT_SCHEMA_CENSUS] = { "vitals.census", 1 },
	[VT_SCHEMA_CAPS] = { "vitals.caps", 1 },
	[VT_SCHEMA_LOCKS] = { "vitals.locks", 1 },
	[VT_SCHEMA_ALLOCS] = { "vitals.allocs", 1 },
	[VT_SCHEMA_COMPARE_AGE] = { "vitals.compare_age", 1 },
};

json_t *vt_json_envelope(enum vt_schema s)
{
	return json_pack("{s:s, s:i, s:s}", "schema", vt_schemas[s].name, "schema_version",
			 vt_schemas[s].version, "vitals_version", VT_VERSION);
}

int vt_json_write(FILE *out, json_t *root, bool compact, bool failed)
{
	int rc = -1;

	if (root && !failed &&
	    json_dumpf(root, out, (compact ? JSON_COMPACT : JSON_INDENT(2)) | JSON_PRESERVE_ORDER |
				     JSON_REAL_PRECISION(12)) == 0) {
		fputc('\n', out);
		rc = ferror(out) ? -1 : 0;
	}
	json_decref(root);
	return rc;
}

json_t *vt_json_text(const char *text)
{
	json_t *j = json_string(text ? text : "");
	size_t len, i, o = 0;
	char *clean;

	if (j)
		return j;
	len = strlen(text);
	clean = malloc(len * 3 + 1);
	if (!clean)
		return json_null();
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];
		if (c < 0x80)
			clean[o++] = (char)c;
		else {
			memcpy(clean + o, "\xef\xbf\xbd", 3);
			o += 3;
		}
	}
	clean[o] = '\0';
	j = json_string(clean);
	free(clean);
	return j ? j : json_null();
}

json_t *vt_json_real(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

json_t *vt_json_whole(double v)
{
	return isfinite(v) && fabs(v) < 9e18 ? json_integer((json_int_t)llround(v)) : json_null();
}

json_t *vt_json_metric(enum vt_metric m, double v)
{
	if ((unsigned)m >= VT_M_COUNT || vt_metrics[m].unit == VT_UNIT_BYTES)
		return vt_json_whole(v);
	return vt_json_real(v);
}

json_t *vt_json_utc(double wall)
{
	char buf[40];

	if (!isfinite(wall) || wall <= 0)
		return json_null();
	return json_string(vt_fmt_utc(wall, true, buf, sizeof(buf)));
}

void vt_json_put(struct vt_json_put *p, const char *key, json_t *v)
{
	if (!p->o) {
		json_decref(v);
		p->failed = true;
	} else if (!v || json_object_set_new(p->o, key, v)) {
		p->failed = true;
	}
}

void vt_json_append(json_t *arr, json_t *v, bool *failed)
{
	if (!arr) {
		json_decref(v);
		*failed = true;
	} else if (!v || json_array_append_new(arr, v)) {
		*failed = true;
	}
}

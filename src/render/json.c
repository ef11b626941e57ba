/*
 * json.c — the schemas, the envelope, target text and writing (see json.h).
 */
#include "render/json.h"

#include "base/version.h"

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

/*
 * json.h — what every JSON view shares: the schemas and their versions (one
 * table), the envelope every document starts with, text from a target as a
 * valid JSON string, and writing a document out.
 *
 * docs/json.md describes each schema.  Adding keys is compatible; removing
 * one or changing its meaning or unit bumps the schema's version here.
 */
#ifndef VT_RENDER_JSON_H
#define VT_RENDER_JSON_H

#include <stdbool.h>
#include <stdio.h>

#include "base/json_lib.h"

#include "sample/metric.h"

enum vt_schema {
	VT_SCHEMA_SNAP,              /* vitals snap --json */
	VT_SCHEMA_HEAP,              /* vitals heap --json */
	VT_SCHEMA_THREADS,           /* vitals threads --json */
	VT_SCHEMA_ANALYZE,           /* vitals analyze --json */
	VT_SCHEMA_COMPARE,           /* vitals compare, experiment, demo --json */
	VT_SCHEMA_PROFILE,           /* vitals profile --json */
	VT_SCHEMA_CENSUS,            /* vitals census --json */
	VT_SCHEMA_CAPS,              /* vitals caps --json */
	VT_SCHEMA_LOCKS,             /* vitals locks --json */
	VT_SCHEMA_ALLOCS,            /* vitals allocs --json */
	VT_SCHEMA_COMPARE_AGE,       /* vitals compare --by-age --json (incarnations at matched age) */
	VT_SCHEMA__COUNT
};

struct vt_schema_info {
	const char *name;            /* "vitals.snap" */
	int version;
};
extern const struct vt_schema_info vt_schemas[VT_SCHEMA__COUNT];

/*
 * A new object holding "schema", "schema_version" and "vitals_version": the
 * start of every document.  NULL when out of memory.
 */
json_t *vt_json_envelope(enum vt_schema s);

/*
 * Text from a target (comm, cmdline, paths, wchan) as a JSON string.  It
 * may be any bytes; JSON needs UTF-8: invalid bytes become U+FFFD, so a
 * strange name never drops a key or a whole document.  A new reference;
 * json_null() only when out of memory.  NULL text is "".
 */
json_t *vt_json_text(const char *text);

/*
 * Write root (consumed, also on failure) indented, or on one line when
 * compact (JSON Lines), and a newline; reals with 12 significant digits.  failed: an earlier step ran out of
 * memory, so nothing is written.  0, or -1 when nothing or not all could be
 * written.
 */
int vt_json_write(FILE *out, json_t *root, bool compact, bool failed);

/* A real, or null when it is not finite (unknown is null, never 0 or "nan"). */
json_t *vt_json_real(double v);
/* Bytes and counts as integers, or null when not finite. */
json_t *vt_json_whole(double v);
/* A figure of metric m: whole bytes; counts (a median may fall between two) and seconds as reals. */
json_t *vt_json_metric(enum vt_metric m, double v);
/* A unix time as ISO 8601 UTC, or null when unknown (not finite, or 0). */
json_t *vt_json_utc(double wall);

/*
 * Many sets into one object, one failure (out of memory) remembered over
 * all of them.  Both steal v, as json_object_set_new does, also when they
 * fail; a NULL object or value is a failure.
 */
struct vt_json_put {
	json_t *o;
	bool failed;
};
void vt_json_put(struct vt_json_put *p, const char *key, json_t *v);
void vt_json_append(json_t *arr, json_t *v, bool *failed);

#endif

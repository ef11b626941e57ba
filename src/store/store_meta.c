/*
 * store_meta.c — a recording's struct vt_recording_info as key/value rows
 * of its meta table, written once and read back checked (see store.h).
 */
#include "store/store.h"
#include "store/store_internal.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum meta_type { META_STR, META_INT, META_DBL, META_BOOL };

/*
 * One meta row: its key, its type and, for numbers, the range a recording
 * can hold.  The file may come from anyone: a value outside these (NULL,
 * a blob, text that is not a number, NaN, a negative interval) is a damaged
 * recording, never a crash or an absurd figure further on.
 */
struct meta_field {
	const char *key;
	enum meta_type type;
	size_t off, size;
	double lo, hi;           /* META_INT, META_DBL: the values allowed */
};

#define META(k, type, member, lo, hi) \
	{ k, type, offsetof(struct vt_recording_info, member), \
	  sizeof(((struct vt_recording_info *)0)->member), lo, hi }
/* 1e9 s is 31 years: longer than any soak; 1e11 s since 1970 is the year 5138 */
static const struct meta_field meta_fields[] = {
	META("vitals_version", META_STR, vitals_version, 0, 0),
	META("target", META_STR, target, 0, 0),
	META("arm", META_STR, arm, 0, 0),
	META("env", META_STR, env, 0, 0),
	META("host", META_STR, host, 0, 0),
	META("ncpus", META_INT, ncpus, -1, 1 << 20),
	META("every_s", META_DBL, every_s, 0, 1e9),
	META("smaps_every_s", META_DBL, smaps_every_s, 0, 1e9),
	META("planned_s", META_DBL, planned_s, 0, 1e9),
	META("started_wall", META_DBL, started_wall, 0, 1e11),
	META("heap", META_BOOL, heap, 0, 1),
	META("redacted", META_INT, redacted, VT_REDACTED_NONE, VT_REDACTED_ARGS),
};
#undef META

int vt_store_write_meta(struct vt_store *st, const struct vt_recording_info *info, struct vt_err *err)
{
	sqlite3_stmt *ins;
	char text[64];
	size_t i;
	int rc;

	if ((rc = vt_store_prepare(st, "INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)", &ins, err)))
		return rc;
	for (i = 0; i < sizeof(meta_fields) / sizeof(meta_fields[0]) && rc == VT_OK; i++) {
		const struct meta_field *f = &meta_fields[i];
		const char *p = (const char *)info + f->off;
		const char *value = text;

		switch (f->type) {
		case META_STR:
			value = p;
			break;
		case META_INT:
			snprintf(text, sizeof(text), "%d", *(const int *)(const void *)p);
			break;
		case META_DBL:
			snprintf(text, sizeof(text), "%.17g", *(const double *)(const void *)p);
			break;
		case META_BOOL:
			snprintf(text, sizeof(text), "%d", *(const bool *)(const void *)p ? 1 : 0);
			break;
		}
		sqlite3_bind_text(ins, 1, f->key, -1, SQLITE_STATIC);
		sqlite3_bind_text(ins, 2, value, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(ins) != SQLITE_DONE)
			rc = vt_store_db_err(st->db, SQLITE_ERROR, err, st->path, "writing the header of");
		sqlite3_reset(ins);
	}
	sqlite3_bind_text(ins, 1, "format", -1, SQLITE_STATIC);
	sqlite3_bind_text(ins, 2, "vitals-recording", -1, SQLITE_STATIC);
	if (rc == VT_OK && sqlite3_step(ins) != SQLITE_DONE)
		rc = vt_store_db_err(st->db, SQLITE_ERROR, err, st->path, "writing the header of");
	sqlite3_finalize(ins);
	return rc;
}

/* A number in a meta row: an INTEGER or REAL, or text that is one number and nothing else. */
static bool meta_number(sqlite3_stmt *q, int col, double *out)
{
	const char *text;
	char *end;

	switch (sqlite3_column_type(q, col)) {
	case SQLITE_INTEGER:
	case SQLITE_FLOAT:
		*out = sqlite3_column_double(q, col);
		return true;
	case SQLITE_TEXT:
		text = (const char *)sqlite3_column_text(q, col);
		if (!text || !*text)
			return false;
		errno = 0;
		*out = strtod(text, &end);
		return errno == 0 && end != text && *end == '\0';
	default:
		return false;
	}
}

/*
 * Column col of q into the field key names, checked: VT_OK, or
 * VT_E_RECORDING naming the key and what is wrong with its value.  Keys
 * this vitals does not know are left alone (a newer vitals may add some).
 */
int vt_store_read_meta_value(struct vt_recording_info *info, const char *path, const char *key,
			   sqlite3_stmt *q, int col, struct vt_err *err)
{
	const struct meta_field *f = NULL;
	int type = sqlite3_column_type(q, col);   /* before any sqlite3_column_text converts it */
	const char *text;
	double v = 0;
	size_t i;
	char *p;

	for (i = 0; i < sizeof(meta_fields) / sizeof(meta_fields[0]) && !f; i++)
		if (strcmp(meta_fields[i].key, key) == 0)
			f = &meta_fields[i];
	if (!f) {
		if (strcmp(key, "format") != 0)
			return VT_OK;
		text = (const char *)sqlite3_column_text(q, col);
		if (type == SQLITE_TEXT && text && strcmp(text, "vitals-recording") == 0)
			return VT_OK;
		return vt_err_set(err, VT_E_RECORDING, 0, "'%s' is damaged: meta 'format' is not \"vitals-recording\"",
				  path);
	}
	p = (char *)info + f->off;
	if (type == SQLITE_NULL)
		return vt_err_set(err, VT_E_RECORDING, 0, "'%s' is damaged: meta '%s' is NULL", path, f->key);
	switch (f->type) {
	case META_STR:
		text = (const char *)sqlite3_column_text(q, col);
		/* text, and all of it: a NUL inside would hide the rest */
		if (type != SQLITE_TEXT || !text ||
		    strlen(text) != (size_t)sqlite3_column_bytes(q, col))
			return vt_err_set(err, VT_E_RECORDING, 0, "'%s' is damaged: meta '%s' is not text", path,
					  f->key);
		snprintf(p, f->size, "%s", text);
		return VT_OK;
	case META_INT:
	case META_BOOL:
		if (!meta_number(q, col, &v) || v != floor(v) || v < f->lo || v > f->hi)
			return vt_err_set(err, VT_E_RECORDING, 0,
					  "'%s' is damaged: meta '%s' is not a whole number from %.0f to %.0f", path,
					  f->key, f->lo, f->hi);
		if (f->type == META_BOOL)
			*(bool *)(void *)p = v != 0;
		else
			*(int *)(void *)p = v < 0 ? 0 : (int)v;    /* -1: the writer could not tell */
		return VT_OK;
	case META_DBL:
		if (!meta_number(q, col, &v) || !isfinite(v) || v < f->lo || v > f->hi)
			return vt_err_set(err, VT_E_RECORDING, 0,
					  "'%s' is damaged: meta '%s' is not a number from %g to %g", path, f->key,
					  f->lo, f->hi);
		*(double *)(void *)p = v;
		return VT_OK;
	}
	return VT_OK;
}

/*
 * prom.h — the Prometheus exposition of a scrape: metric families and their
 * samples, written as the text format 0.0.4 that every Prometheus reads, or
 * as OpenMetrics 1.0.0 when the scraper asks for it by Accept.
 *
 * A scrape is built first (families declared, samples added in any order)
 * and written last, so that the samples of a family always come out
 * together under its HELP and TYPE, as both formats require.  A family is
 * named without its counter suffix: "process_cpu_seconds" is a counter
 * whose samples are "process_cpu_seconds_total".  Unknown figures (NAN) are
 * left out: a missing series is honest, a 0 is not.  Label values are
 * copied and escaped; names are checked against the exposition's grammar,
 * so a bad one is a bug that fails the add, not a scrape Prometheus refuses.
 */
#ifndef VT_RENDER_PROM_H
#define VT_RENDER_PROM_H

#include <stddef.h>

#include "base/buf.h"

enum vt_prom_type {
	VT_PROM_GAUGE = 1,
	VT_PROM_COUNTER,         /* samples get "_total" */
};

enum vt_prom_format {
	VT_PROM_TEXT = 1,        /* text/plain; version=0.0.4 */
	VT_PROM_OPENMETRICS,     /* application/openmetrics-text; version=1.0.0 */
};

struct vt_prom_label {
	const char *name;
	const char *value;
};

/* Labels a sample carries at most. */
#define VT_PROM_MAX_LABELS 8

/* A scrape being built; owns copies of everything added to it. */
struct vt_prom;

struct vt_prom *vt_prom_new(void);
void vt_prom_free(struct vt_prom *p);

/*
 * Declare a family.  unit: "bytes", "seconds", or NULL; when given, the name
 * must end with "_" unit (OpenMetrics' rule).  Declaring a name again with
 * the same type is a no-op.  VT_OK, VT_E_USAGE (a bad name, a unit that is
 * not its suffix, a second declaration with another type), VT_E_NOMEM.
 */
int vt_prom_family(struct vt_prom *p, const char *name, enum vt_prom_type type, const char *unit,
		   const char *help);

/*
 * Add a sample of a declared family: its value and nlabels labels (names
 * checked; values any bytes, escaped when written).  A NAN value adds
 * nothing and is VT_OK.  VT_E_USAGE for an undeclared family or a bad
 * label name, VT_E_NOMEM.
 */
int vt_prom_add(struct vt_prom *p, const char *family, double value, size_t nlabels,
		const struct vt_prom_label *labels);

/*
 * The same with labels given as name, value pairs ended by NULL:
 * vt_prom_addl(p, "process_cpu_seconds", 1.5, "target", "redis", "mode", "user", NULL).
 */
int vt_prom_addl(struct vt_prom *p, const char *family, double value, ...)
	__attribute__((sentinel));

/* Families declared, samples added (for the exporter's own figures and tests). */
size_t vt_prom_nfamilies(const struct vt_prom *p);
size_t vt_prom_nsamples(const struct vt_prom *p);

/*
 * Write the scrape in format f to out (appended).  Families in the order
 * they were declared, a family's samples in the order they were added;
 * families without samples are left out.  OpenMetrics ends with "# EOF".
 * VT_OK or VT_E_NOMEM (out's cap reached).
 */
int vt_prom_write(const struct vt_prom *p, enum vt_prom_format f, struct vt_buf *out);

/*
 * The format a scraper asked for in its Accept header (NULL: none):
 * OpenMetrics when it lists application/openmetrics-text with a q above
 * that of text/plain (or text/plain is absent), else the text format.
 */
enum vt_prom_format vt_prom_negotiate(const char *accept);

/* The Content-Type of a format. */
const char *vt_prom_content_type(enum vt_prom_format f);

/* True when s is a valid metric (or, with label, label) name. */
int vt_prom_valid_name(const char *s, int label);

#endif

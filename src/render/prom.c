/*
 * prom.c — the Prometheus exposition (see prom.h).
 *
 * Formats: https://prometheus.io/docs/instrumenting/exposition_formats/
 * (text 0.0.4) and the OpenMetrics 1.0 specification.  The differences
 * that matter here: OpenMetrics names a counter family without "_total"
 * in its TYPE and HELP lines, has UNIT lines, escapes '"' in HELP, and
 * ends with "# EOF".  Label values must be UTF-8 in both: a process name
 * is any bytes, so a byte that is not part of valid UTF-8 is written as
 * U+FFFD rather than making the server refuse the whole scrape.
 */
#include "render/prom.h"

#include "base/error.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct prom_sample {
	double value;
	char *labels;                /* "{a=\"b\",c=\"d\"}" escaped, or "" */
};

struct prom_family {
	char *name;
	char *help;
	char *unit;                  /* NULL none */
	enum vt_prom_type type;
	struct prom_sample *samples;
	size_t n, cap;
};

struct vt_prom {
	struct prom_family *fam;
	size_t n, cap;
	size_t nsamples;
	size_t last;                 /* the family added to last: most adds follow each other */
};

int vt_prom_valid_name(const char *s, int label)
{
	size_t i;

	if (!s || !*s)
		return 0;
	for (i = 0; s[i]; i++) {
		char c = s[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
			  (!label && c == ':') || (i > 0 && c >= '0' && c <= '9');
		if (!ok)
			return 0;
	}
	/* names beginning with "__" are reserved for the server's own labels */
	return !(label && s[0] == '_' && s[1] == '_');
}

struct vt_prom *vt_prom_new(void)
{
	return calloc(1, sizeof(struct vt_prom));
}

void vt_prom_free(struct vt_prom *p)
{
	size_t i, k;

	if (!p)
		return;
	for (i = 0; i < p->n; i++) {
		for (k = 0; k < p->fam[i].n; k++)
			free(p->fam[i].samples[k].labels);
		free(p->fam[i].samples);
		free(p->fam[i].name);
		free(p->fam[i].help);
		free(p->fam[i].unit);
	}
	free(p->fam);
	free(p);
}

static struct prom_family *find(struct vt_prom *p, const char *name)
{
	size_t i;

	if (p->last < p->n && strcmp(p->fam[p->last].name, name) == 0)
		return &p->fam[p->last];
	for (i = 0; i < p->n; i++)
		if (strcmp(p->fam[i].name, name) == 0) {
			p->last = i;
			return &p->fam[i];
		}
	return NULL;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && strcmp(s + n - k, suffix) == 0;
}

int vt_prom_family(struct vt_prom *p, const char *name, enum vt_prom_type type, const char *unit,
		   const char *help)
{
	struct prom_family *f;
	char suffix[64];

	if (!vt_prom_valid_name(name, 0) || (type != VT_PROM_GAUGE && type != VT_PROM_COUNTER))
		return VT_E_USAGE;
	if (type == VT_PROM_COUNTER && ends_with(name, "_total"))
		return VT_E_USAGE;    /* the writer adds it */
	if (unit) {
		if ((size_t)snprintf(suffix, sizeof(suffix), "_%s", unit) >= sizeof(suffix) ||
		    !vt_prom_valid_name(unit, 1) || !ends_with(name, suffix))
			return VT_E_USAGE;
	}
	if ((f = find(p, name)))
		return f->type == type ? VT_OK : VT_E_USAGE;
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 32;
		struct prom_family *nf = realloc(p->fam, cap * sizeof(*nf));
		if (!nf)
			return VT_E_NOMEM;
		p->fam = nf;
		p->cap = cap;
	}
	f = &p->fam[p->n];
	memset(f, 0, sizeof(*f));
	f->type = type;
	f->name = strdup(name);
	f->help = strdup(help ? help : "");
	f->unit = unit ? strdup(unit) : NULL;
	if (!f->name || !f->help || (unit && !f->unit)) {
		free(f->name);
		free(f->help);
		free(f->unit);
		return VT_E_NOMEM;
	}
	p->n++;
	return VT_OK;
}

/* The length of the valid UTF-8 sequence at s (n bytes left), 0 if none starts there. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	uint32_t cp;
	size_t len, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates and beyond U+10FFFF are not UTF-8 */
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/*
 * s as the exposition writes a label value (and OpenMetrics a HELP text):
 * backslash, quote and newline escaped, invalid UTF-8 as U+FFFD.
 * quote false: a text-format HELP, where '"' stays as it is.
 */
static int append_escaped(struct vt_buf *b, const char *s, bool quote)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s), i = 0, len;
	int rc = VT_OK;

	while (i < n && rc == VT_OK) {
		if (u[i] == '\\')
			rc = vt_buf_append(b, "\\\\", 2), len = 1;
		else if (u[i] == '\n')
			rc = vt_buf_append(b, "\\n", 2), len = 1;
		else if (u[i] == '"' && quote)
			rc = vt_buf_append(b, "\\\"", 2), len = 1;
		else if ((len = utf8_len(u + i, n - i)) > 0)
			rc = vt_buf_append(b, u + i, len);
		else
			rc = vt_buf_append(b, "\xef\xbf\xbd", 3), len = 1;
		i += len;
	}
	return rc;
}

int vt_prom_add(struct vt_prom *p, const char *family, double value, size_t nlabels,
		const struct vt_prom_label *labels)
{
	struct vt_buf b = VT_BUF_INIT(1u << 20);
	struct prom_family *f = find(p, family);
	size_t i, k;
	int rc = VT_OK;

	if (!f || nlabels > VT_PROM_MAX_LABELS)
		return VT_E_USAGE;
	for (i = 0; i < nlabels; i++) {
		if (!vt_prom_valid_name(labels[i].name, 1) || !labels[i].value)
			return VT_E_USAGE;
		for (k = 0; k < i; k++)
			if (strcmp(labels[k].name, labels[i].name) == 0)
				return VT_E_USAGE;
	}
	if (isnan(value))
		return VT_OK;
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 8;
		struct prom_sample *ns = realloc(f->samples, cap * sizeof(*ns));
		if (!ns)
			return VT_E_NOMEM;
		f->samples = ns;
		f->cap = cap;
	}
	rc = vt_buf_append(&b, "", 0);    /* an empty label block is "", not NULL */
	for (i = 0; i < nlabels && rc == VT_OK; i++) {
		rc = vt_buf_appendf(&b, "%s%s=\"", i ? "," : "{", labels[i].name);
		if (rc == VT_OK)
			rc = append_escaped(&b, labels[i].value, true);
		if (rc == VT_OK)
			rc = vt_buf_append(&b, i + 1 == nlabels ? "\"}" : "\"", i + 1 == nlabels ? 2 : 1);
	}
	if (rc != VT_OK) {
		vt_buf_release(&b);
		return VT_E_NOMEM;
	}
	f->samples[f->n].value = value;
	f->samples[f->n].labels = b.data;    /* owned by the sample now */
	f->n++;
	p->nsamples++;
	return VT_OK;
}

int vt_prom_addl(struct vt_prom *p, const char *family, double value, ...)
{
	struct vt_prom_label labels[VT_PROM_MAX_LABELS];
	const char *name;
	size_t n = 0;
	va_list ap;

	va_start(ap, value);
	while ((name = va_arg(ap, const char *))) {
		if (n == VT_PROM_MAX_LABELS) {
			va_end(ap);
			return VT_E_USAGE;
		}
		labels[n].name = name;
		labels[n].value = va_arg(ap, const char *);
		n++;
	}
	va_end(ap);
	return vt_prom_add(p, family, value, n, labels);
}

size_t vt_prom_nfamilies(const struct vt_prom *p)
{
	return p->n;
}

size_t vt_prom_nsamples(const struct vt_prom *p)
{
	return p->nsamples;
}

/*
 * A value as both formats write it: integers exactly, infinities by name, others
 * in the fewest digits that read back as the same double (0.08, not
 * 0.080000000000000002), as Prometheus' own client libraries write them.
 */
static int append_value(struct vt_buf *b, double v)
{
	char text[32];

	if (isinf(v))
		return vt_buf_append(b, v > 0 ? "+Inf" : "-Inf", 4);
	if (v == floor(v) && fabs(v) < 9007199254740992.0)
		return vt_buf_appendf(b, "%.0f", v);
	for (int digits = 15; digits <= 17; digits++) {
		snprintf(text, sizeof(text), "%.*g", digits, v);
		if (strtod(text, NULL) == v)
			break;
	}
	return vt_buf_appendf(b, "%s", text);
}

int vt_prom_write(const struct vt_prom *p, enum vt_prom_format fmt, struct vt_buf *out)
{
	bool om = fmt == VT_PROM_OPENMETRICS;
	size_t i, k;
	int rc = VT_OK;

	for (i = 0; i < p->n && rc == VT_OK; i++) {
		const struct prom_family *f = &p->fam[i];
		const char *total = f->type == VT_PROM_COUNTER ? "_total" : "";
		/* the text format names a counter family by its samples' name */
		const char *head = om ? "" : total;

		if (f->n == 0)
			continue;
		if (f->help[0]) {
			rc = vt_buf_appendf(out, "# HELP %s%s ", f->name, head);
			if (rc == VT_OK)
				rc = append_escaped(out, f->help, om);
			if (rc == VT_OK)
				rc = vt_buf_append(out, "\n", 1);
		}
		if (rc == VT_OK)
			rc = vt_buf_appendf(out, "# TYPE %s%s %s\n", f->name, head,
					    f->type == VT_PROM_COUNTER ? "counter" : "gauge");
		if (rc == VT_OK && om && f->unit)
			rc = vt_buf_appendf(out, "# UNIT %s %s\n", f->name, f->unit);
		for (k = 0; k < f->n && rc == VT_OK; k++) {
			rc = vt_buf_appendf(out, "%s%s%s ", f->name, total, f->samples[k].labels);
			if (rc == VT_OK)
				rc = append_value(out, f->samples[k].value);
			if (rc == VT_OK)
				rc = vt_buf_append(out, "\n", 1);
		}
	}
	if (rc == VT_OK && om)
		rc = vt_buf_append(out, "# EOF\n", 6);
	return rc == VT_OK ? VT_OK : VT_E_NOMEM;
}

/*
 * The q of one media range of an Accept header ("type/sub;version=1;q=0.5"):
 * 1 unless a q parameter says otherwise.
 */
static double media_q(const char *range, size_t len)
{
	const char *p = range, *end = range + len;

	while ((p = memchr(p, ';', (size_t)(end - p)))) {
		p++;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (end - p >= 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=')
			return strtod(p + 2, NULL);
	}
	return 1.0;
}

static bool media_is(const char *range, size_t len, const char *type)
{
	size_t k = strlen(type);

	while (len > 0 && (*range == ' ' || *range == '\t'))
		range++, len--;
	return len >= k && strncasecmp(range, type, k) == 0 &&
	       (len == k || range[k] == ';' || range[k] == ' ' || range[k] == '\t');
}

enum vt_prom_format vt_prom_negotiate(const char *accept)
{
	double q_om = -1, q_text = -1;
	const char *p = accept;

	if (!accept)
		return VT_PROM_TEXT;
	while (*p) {
		size_t len = strcspn(p, ",");
		double q = media_q(p, len);

		if (media_is(p, len, "application/openmetrics-text"))
			q_om = fmax(q_om, q);
		else if (media_is(p, len, "text/plain"))
			q_text = fmax(q_text, q);
		p += len;
		if (*p == ',')
			p++;
	}
	return q_om > 0 && q_om > q_text ? VT_PROM_OPENMETRICS : VT_PROM_TEXT;
}

const char *vt_prom_content_type(enum vt_prom_format f)
{
	return f == VT_PROM_OPENMETRICS ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
					: "text/plain; version=0.0.4; charset=utf-8";
}

/*
 * psi.c — pressure stall information: the "some" and "full" lines that the
 * files in /proc/pressure/ and a cgroup's *.pressure files share
 * (Documentation/accounting/psi.rst); vitals reads a cgroup's memory.pressure.
 * Pure parser: it never reads a file.  The text is untrusted, needs no NUL
 * and is fuzzed (fuzz/fuzz_psi.c); an average above 100% is malformed, not
 * clamped.
 */
#include "proc/psi.h"
#include "base/scan.h"

#include <string.h>

/* "12.34": the kernel prints LOAD_INT.LOAD_FRAC with two decimals; 0..100. */
static bool parse_percent(const char *text, size_t len, double *out)
{
	struct vt_scan s = vt_scan_init(text, len);
	uint64_t whole, frac = 0, scale = 1;

	if (!vt_scan_u64(&s, &whole) || whole > 100)
		return false;
	if (vt_scan_char(&s, '.')) {
		if (vt_scan_eof(&s))
			return false;
		while (!vt_scan_eof(&s) && *s.p >= '0' && *s.p <= '9' && scale < 1000000000) {
			frac = frac * 10 + (uint64_t)(*s.p - '0');
			scale *= 10;
			s.p++;
		}
	}
	if (!vt_scan_eof(&s))
		return false;
	*out = (double)whole + (double)frac / (double)scale;
	return *out <= 100.0;
}

/* One "key=value" of a PSI line; unknown keys are skipped. *seen gets a bit per key. */
static bool psi_field(const char *tok, size_t tok_len, struct vt_psi_line *out, unsigned *seen)
{
	static const char *const avg_keys[] = { "avg10", "avg60", "avg300" };
	double *avgs[] = { &out->avg10, &out->avg60, &out->avg300 };
	const char *eq = memchr(tok, '=', tok_len), *val;
	size_t key_len, val_len, i;

	if (!eq)
		return false;
	key_len = (size_t)(eq - tok);
	val = eq + 1;
	val_len = tok_len - key_len - 1;
	for (i = 0; i < 3; i++)
		if (vt_word_is(tok, key_len, avg_keys[i])) {
			*seen |= 1u << i;
			return parse_percent(val, val_len, avgs[i]);
		}
	if (vt_word_is(tok, key_len, "total")) {
		*seen |= 1u << 3;
		return vt_word_u64(val, val_len, &out->total_us);
	}
	return true;
}

static int psi_parse_line(struct vt_scan *s, const char *kind, struct vt_psi_line *out,
			  struct vt_err *err)
{
	const char *tok;
	size_t tok_len;
	unsigned seen = 0;
	char text[48];

	if (out->present)
		return vt_err_set(err, VT_E_PARSE, 0, "psi: more than one '%s' line", kind);
	while (vt_scan_word(s, &tok, &tok_len)) {
		if (!psi_field(tok, tok_len, out, &seen)) {
			vt_snippet(text, sizeof(text), tok, tok_len);
			return vt_err_set(err, VT_E_PARSE, 0, "psi: bad '%s' field '%s'", kind,
					  text);
		}
	}
	if (seen != 0xf)
		return vt_err_set(err, VT_E_PARSE, 0,
				  "psi: '%s' line lacks one of avg10, avg60, avg300, total", kind);
	out->present = true;
	return VT_OK;
}

int vt_psi_parse(const char *buf, size_t len, struct vt_psi_line *some, struct vt_psi_line *full,
		 struct vt_err *err)
{
	struct vt_scan file = vt_scan_init(buf, len), s;
	const char *line, *kind;
	size_t line_len, kind_len;
	int rc;

	memset(some, 0, sizeof(*some));
	memset(full, 0, sizeof(*full));
	while (vt_scan_line(&file, &line, &line_len)) {
		s = vt_scan_init(line, line_len);
		if (!vt_scan_word(&s, &kind, &kind_len))
			continue;
		rc = VT_OK;
		if (vt_word_is(kind, kind_len, "some"))
			rc = psi_parse_line(&s, "some", some, err);
		else if (vt_word_is(kind, kind_len, "full"))
			rc = psi_parse_line(&s, "full", full, err);
		if (rc)
			return rc;
	}
	if (!some->present)
		return vt_err_set(err, VT_E_PARSE, 0, "psi: no 'some' line");
	return VT_OK;
}

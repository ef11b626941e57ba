/*
 * scan.h — cursor parsing of untrusted text (/proc files, recordings).
 *
 * A struct vt_scan walks [p, end); the input need not be NUL-terminated.
 * Every vt_scan_* call advances the cursor only when it succeeds, so calls
 * chain with && and a failed field leaves the cursor where it was.  Numbers
 * are checked for overflow.  The vt_word_* and vt_list_* helpers judge a
 * field already cut out, and vt_snippet makes one fit for an error message.
 */
#ifndef VT_BASE_SCAN_H
#define VT_BASE_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vt_scan {
	const char *p;
	const char *end;
};

static inline struct vt_scan vt_scan_init(const char *buf, size_t len)
{
	struct vt_scan s = { buf, buf + len };
	return s;
}

static inline bool vt_scan_eof(const struct vt_scan *s)
{
	return s->p >= s->end;
}

/* Skip blanks (space, tab). Always succeeds. */
void vt_scan_blanks(struct vt_scan *s);
/* Decimal unsigned, after optional blanks. */
bool vt_scan_u64(struct vt_scan *s, uint64_t *out);
/* Decimal signed, after optional blanks. */
bool vt_scan_i64(struct vt_scan *s, int64_t *out);
/* Hexadecimal unsigned without 0x, no leading blanks. */
bool vt_scan_hex(struct vt_scan *s, uint64_t *out);
/* Exactly the character c. */
bool vt_scan_char(struct vt_scan *s, char c);
/* A run of non-blank, non-newline bytes after optional blanks; not NUL-terminated. */
bool vt_scan_word(struct vt_scan *s, const char **word, size_t *len);
/*
 * The next line without its '\n' (the last line may lack one); false at end.
 * Used to split a file before parsing each line with its own cursor.
 */
bool vt_scan_line(struct vt_scan *s, const char **line, size_t *len);
/* Rest of the current line (after optional blanks) up to but excluding '\n'. */
void vt_scan_rest(struct vt_scan *s, const char **text, size_t *len);

/* Copy at most cap-1 bytes of [src, src+len) into dst and NUL-terminate. */
void vt_copy_str(char *dst, size_t cap, const char *src, size_t len);

/* ---- a field already cut out: [word, word+len), not NUL-terminated ---- */

/* Is the field exactly want? */
bool vt_word_is(const char *word, size_t len, const char *want);
/* The whole field is a decimal unsigned (after optional blanks), checked for overflow. */
bool vt_word_u64(const char *word, size_t len, uint64_t *out);
/* Is want one of the comma-separated items of list ("rw,memory")? */
bool vt_list_has(const char *list, size_t len, const char *want);
/*
 * A printable excerpt of untrusted text for an error message: at most cap-1
 * bytes (cap > 0), anything outside printable ASCII shown as '?'.
 */
void vt_snippet(char *dst, size_t cap, const char *src, size_t len);

#endif

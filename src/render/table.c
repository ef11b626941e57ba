/*
 * table.c — aligned text tables and unit formatting.
 */
#include "render/table.h"
#include "render/svg_chart.h"
#include "base/unknown.h"
#include "proc/procfs.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void vt_table_init(struct vt_table *t, int ncols)
{
	memset(t, 0, sizeof(*t));
	t->ncols = ncols > VT_TABLE_MAX_COLS ? VT_TABLE_MAX_COLS : ncols;
}

void vt_table_align(struct vt_table *t, int col, enum vt_align align)
{
	if (col >= 0 && col < t->ncols)
		t->align[col] = align;
}

/* fmt formatted into a string of its own (NULL out of memory): most cells are
 * short, formatted once on the stack and copied, without vasprintf's growing. */
__attribute__((format(printf, 1, 0))) static char *cell_text(const char *fmt, va_list ap)
{
	char small[128], *text = NULL;
	va_list again;
	int n;

	va_copy(again, ap);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	if (n >= 0 && (size_t)n < sizeof(small)) {
		if ((text = malloc((size_t)n + 1)))
			memcpy(text, small, (size_t)n + 1);
	} else if (n >= 0 && vasprintf(&text, fmt, again) < 0) {
		text = NULL;
	}
	va_end(again);
	return text;
}

/* n spaces. */
static void pad_out(FILE *out, size_t n)
{
	static const char spaces[] = "                                ";

	while (n > 0) {
		size_t k = n < sizeof(spaces) - 1 ? n : sizeof(spaces) - 1;

		fwrite(spaces, 1, k, out);
		n -= k;
	}
}

void vt_table_cell(struct vt_table *t, const char *fmt, ...)
{
	va_list ap;
	char *text = NULL;
	size_t idx;

	if (t->oom)
		return;
	if (t->cur_col == 0) {
		if (t->nrows == t->cap_rows) {
			size_t cap = t->cap_rows ? t->cap_rows * 2 : 16;
			char **cells = realloc(t->cells, cap * (size_t)t->ncols * sizeof(*cells));
			if (!cells) {
				t->oom = true;
				return;
			}
			t->cells = cells;
			t->cap_rows = cap;
		}
		memset(t->cells + t->nrows * (size_t)t->ncols, 0, (size_t)t->ncols * sizeof(char *));
		t->nrows++;
	}
	va_start(ap, fmt);
	if (!strcmp(fmt, "%s")) {     /* most cells: text formatted already */
		const char *arg = va_arg(ap, const char *);

		text = strdup(arg ? arg : "(null)");
	} else {
		text = cell_text(fmt, ap);
	}
	va_end(ap);
	if (text)
		vt_text_sanitize(text);
	idx = (t->nrows - 1) * (size_t)t->ncols + (size_t)t->cur_col;
	t->cells[idx] = text;
	t->cur_col = (t->cur_col + 1) % t->ncols;
}

void vt_text_sanitize(char *text)
{
	size_t i = 0, n;

	while (text[i]) {
		n = vt_utf8_len((const unsigned char *)text + i);
		if (n == 0 || (unsigned char)text[i] < 0x20 || text[i] == 0x7f ||
		    /* C1 controls, U+0080..U+009F, which some terminals obey as ESC [ ... */
		    ((unsigned char)text[i] == 0xc2 && (unsigned char)text[i + 1] < 0xa0)) {
			text[i++] = '?';
			continue;
		}
		i += n;
	}
}

const char *vt_text_printable(const char *text, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s", text ? text : "");
	vt_text_sanitize(buf);
	return buf;
}

/* Display width: count UTF-8 lead bytes only. */
static size_t text_width(const char *s)
{
	size_t w = 0;

	for (; s && *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

/* The byte offset after the first cols characters of s (at its end when shorter). */
static size_t cols_bytes(const char *s, size_t cols)
{
	size_t i = 0;

	while (s[i] && cols > 0) {
		i++;
		while (((unsigned char)s[i] & 0xc0) == 0x80)
			i++;
		cols--;
	}
	return i;
}

const char *vt_text_clip_middle(const char *text, size_t max_cols, char *buf, size_t cap)
{
	static const char ellipsis[] = "\xe2\x80\xa6";   /* U+2026 */
	size_t w, head, tail_from;

	if (!text)
		text = "";
	w = text_width(text);
	if (w <= max_cols || max_cols < 5) {
		snprintf(buf, cap, "%s", text);
		return buf;
	}
	head = cols_bytes(text, (max_cols - 1) / 2);
	tail_from = cols_bytes(text, w - (max_cols - 1 - (max_cols - 1) / 2));
	snprintf(buf, cap, "%.*s%s%s", (int)head, text, ellipsis, text + tail_from);
	return buf;
}

/* Is name[i] a '<' that opens a generic's arguments (after an identifier, not in
 * "operator<" or "operator<<")? */
static bool opens_generic(const char *name, size_t i)
{
	unsigned char prev = i ? (unsigned char)name[i - 1] : 0;

	if (name[i] == '<' && prev == ' ') {
		/* C++ "operator< <char>" or "operator<< <T>": an operator template's arguments */
		size_t j = i - 1;

		while (j > 0 && strchr("<>=", name[j - 1]))
			j--;
		return j < i - 1 && j >= 8 && strncmp(name + j - 8, "operator", 8) == 0;
	}
	/* (the second '<' of "operator<<" follows a '<': no generic) */
	if (name[i] != '<' || !(isalnum(prev) || prev == '_' || prev == ':' || prev == '>'))
		return false;
	return !(i >= 8 && strncmp(name + i - 8, "operator", 8) == 0);
}

/* The end of the brackets opened at name[i] (open, closed by close): the index
 * after the matching close, or 0 when they do not close ("->" is an arrow, not
 * a '>'). */
static size_t bracket_end(const char *name, size_t i, char open, char close)
{
	size_t depth = 0;

	for (; name[i]; i++) {
		if (name[i] == open)
			depth++;
		else if (name[i] == close && !(close == '>' && i > 0 && name[i - 1] == '-') &&
			 --depth == 0)
			return i + 1;
	}
	return 0;
}

/*
 * name with every generic's arguments left out ("<…>"), and with params every
 * parameter list ("(…)"), in out (cap bytes).  A bracket that does not close (a
 * name cut short) is left out to the end ("<…").
 */
static void drop_generics(const char *name, bool params, char *out, size_t cap)
{
	static const char generic[] = "<\xe2\x80\xa6>", param[] = "(\xe2\x80\xa6)";
	size_t o = 0, i = 0, end, n;

	while (name[i] && o + 1 < cap) {
		bool g = opens_generic(name, i), p = params && name[i] == '(' && name[i + 1] != ')';

		if (g || p) {
			end = g ? bracket_end(name, i, '<', '>') : bracket_end(name, i, '(', ')');
			n = end ? sizeof(generic) - 1 : sizeof(generic) - 2;   /* without the closing one */
			if (o + n + 1 > cap)
				break;
			memcpy(out + o, g ? generic : param, n);
			o += n;
			if (!end)
				break;
			i = end;
			continue;
		}
		out[o++] = name[i++];
	}
	out[o] = '\0';
}

/* The byte offsets where name's top-level "::" separators are (outside <>, (), []);
 * at most max; their count. */
static size_t path_separators(const char *name, size_t *at, size_t max)
{
	size_t n = 0, depth = 0;

	for (size_t i = 0; name[i] && n < max; i++) {
		char c = name[i];

		if (c == '<' || c == '(' || c == '[')
			depth++;
		else if ((c == '>' && !(i > 0 && name[i - 1] == '-')) || c == ')' || c == ']')
			depth -= depth > 0;
		else if (c == ':' && name[i + 1] == ':' && depth == 0) {
			at[n++] = i;
			i++;
		}
	}
	return n;
}

const char *vt_name_shorten(const char *name, size_t max_cols, char *buf, size_t cap)
{
	char *short_generics, *mid;
	size_t seps[64], n, len;

	if (!name)
		name = "";
	if (text_width(name) <= max_cols || cap == 0) {
		snprintf(buf, cap, "%s", name);
		return buf;
	}
	len = strlen(name) + 8;
	short_generics = malloc(len);
	mid = malloc(len + 8);
	if (!short_generics || !mid) {
		free(short_generics);
		free(mid);
		return vt_text_clip_middle(name, max_cols, buf, cap);
	}
	drop_generics(name, false, short_generics, len);
	if (text_width(short_generics) > max_cols)
		drop_generics(name, true, short_generics, len);
	if (text_width(short_generics) <= max_cols) {
		snprintf(buf, cap, "%s", short_generics);
		goto out;
	}
	/* the first part, "::…", and the fewest last parts that still tell it apart,
	 * as many as fit */
	n = path_separators(short_generics, seps, sizeof(seps) / sizeof(seps[0]));
	for (size_t k = 1; k < n; k++) {   /* parts from separator k on are kept */
		snprintf(mid, len + 8, "%.*s::\xe2\x80\xa6%s", (int)seps[0], short_generics,
			 short_generics + seps[k]);
		if (text_width(mid) <= max_cols) {
			snprintf(buf, cap, "%s", mid);
			goto out;
		}
	}
	if (n >= 2) {
		snprintf(mid, len + 8, "%.*s::\xe2\x80\xa6%s", (int)seps[0], short_generics,
			 short_generics + seps[n - 1]);
		vt_text_clip_middle(mid, max_cols, buf, cap);
	} else {
		vt_text_clip_middle(short_generics, max_cols, buf, cap);
	}
out:
	free(short_generics);
	free(mid);
	return buf;
}

void vt_table_print(const struct vt_table *t, FILE *out, int indent, bool underline)
{
	size_t width[VT_TABLE_MAX_COLS] = { 0 }, r, w;
	int c;

	for (r = 0; r < t->nrows; r++)
		for (c = 0; c < t->ncols; c++) {
			w = text_width(t->cells[r * (size_t)t->ncols + (size_t)c]);
			if (w > width[c])
				width[c] = w;
		}
	for (r = 0; r < t->nrows; r++) {
		int last = t->ncols - 1;
		/* drop trailing empty cells so lines do not end in spaces */
		while (last > 0 && !*(t->cells[r * (size_t)t->ncols + (size_t)last] ?
				      t->cells[r * (size_t)t->ncols + (size_t)last] : ""))
			last--;
		pad_out(out, indent > 0 ? (size_t)indent : 0);
		for (c = 0; c <= last; c++) {
			const char *cell = t->cells[r * (size_t)t->ncols + (size_t)c];
			size_t pad;
			cell = cell ? cell : "";
			pad = width[c] - text_width(cell);
			if (c)
				fputs("  ", out);
			if (t->align[c] == VT_RIGHT)
				pad_out(out, pad);
			fputs(cell, out);
			if (t->align[c] != VT_RIGHT && c != last)
				pad_out(out, pad);
		}
		fputc('\n', out);
		if (r == 0 && underline) {
			size_t total = 0;
			for (c = 0; c < t->ncols; c++)
				total += width[c] + (c ? 2 : 0);
			fprintf(out, "%*s", indent, "");
			for (w = 0; w < total; w++)
				fputs("─", out);
			fputc('\n', out);
		}
	}
}

void vt_table_release(struct vt_table *t)
{
	size_t i;

	for (i = 0; i < t->nrows * (size_t)t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	t->cells = NULL;
	t->nrows = t->cap_rows = 0;
}

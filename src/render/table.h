/*
 * table.h — aligned text tables and human units for the text renderers.
 *
 * A table collects rows of cells (copied, owned by the table) and prints them
 * with each column padded to its widest cell: numbers right-aligned, text
 * left-aligned.  The last column is never padded, so long paths do not make
 * lines trail spaces.
 */
#ifndef VT_RENDER_TABLE_H
#define VT_RENDER_TABLE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/units.h"

#define VT_TABLE_MAX_COLS 16

enum vt_align { VT_LEFT, VT_RIGHT };

struct vt_table {
	int ncols;
	enum vt_align align[VT_TABLE_MAX_COLS];
	char **cells;             /* row-major, nrows * ncols, owned */
	size_t nrows, cap_rows;
	int cur_col;              /* next cell of the row being built */
	bool oom;
};

void vt_table_init(struct vt_table *t, int ncols);
void vt_table_align(struct vt_table *t, int col, enum vt_align align);
/* Append a cell to the current row; a row ends after ncols cells. */
void vt_table_cell(struct vt_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Print with an indent; a header row (row 0) is underlined when underline. */
void vt_table_print(const struct vt_table *t, FILE *out, int indent, bool underline);
void vt_table_release(struct vt_table *t);

/*
 * Text from the target (a thread's name, a path, a recording's meta) made
 * safe for a terminal in place: control bytes and invalid UTF-8 become '?',
 * so a name cannot move the cursor, clear the screen or recolour what
 * follows.  Every table cell goes through it; text printed outside a table
 * uses vt_text_printable, which copies into buf (cap bytes) and returns it.
 */
void vt_text_sanitize(char *text);

/*
 * text cut in its middle to at most max_cols display columns ("…" standing
 * for what was left out), in buf (cap bytes), returned: a C++ or Rust
 * function's name keeps its namespace and its last parts, the ones that
 * tell it apart, and the table stays within a terminal.  Shorter text is
 * copied as it is.
 */
const char *vt_text_clip_middle(const char *text, size_t max_cols, char *buf, size_t cap);

/*
 * A C++ or Rust function's name made to fit max_cols display columns, in
 * buf (cap bytes), returned, by what a reader can spare first: the
 * arguments of generics ("BTreeMap<K,V,A>::insert" is "BTreeMap<…>::insert";
 * a qualified "<T as Trait>::f" keeps its brackets' text until the last
 * step), then C++ parameter lists ("(…)"), then the middle of the path ("serde_json::de::…::deserialize_map":
 * the first part and as many last ones as fit), then the middle of the
 * text (vt_text_clip_middle).  A name that fits is copied as it is.
 */
const char *vt_name_shorten(const char *name, size_t max_cols, char *buf, size_t cap);
const char *vt_text_printable(const char *text, char *buf, size_t cap);

#endif

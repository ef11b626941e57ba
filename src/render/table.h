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

/* Human units, binary: "512 B", "4.0 KiB", "62.0 MiB", "1.12 GiB"; "n/a" for VT_NA. */
const char *vt_fmt_bytes(uint64_t bytes, char *buf, size_t cap);
/* "97%" of part/whole; "n/a" when either is unknown or whole is 0. */
const char *vt_fmt_pct(uint64_t part, uint64_t whole, char *buf, size_t cap);
/* "3d 04h", "2h 05m", "4m 03s", "12s". */
const char *vt_fmt_duration(double seconds, char *buf, size_t cap);

#endif

/*
 * fde_table.h — where a function starts, from the unwind table's index.
 *
 * A stripped library names none of its internal functions (libz's
 * deflate_slow, longest_match), so a profile showed one row per
 * instruction address.  Every function still has an FDE in .eh_frame (the
 * unwinder needs it), and .eh_frame_hdr indexes them: a table of (start of
 * the function, its FDE) sorted by start, which the runtime's own unwinder
 * binary-searches.  The FDE that covers a pc holds the greatest start at
 * or below it; its start names every pc of that function alike.
 *
 * libdw answers which CFA rule holds at a pc, but not where its FDE
 * begins, so the index is read here: its 4-byte header and the table, in
 * the one encoding linkers write for it (DW_EH_PE_datarel | sdata4); any
 * other answers "not known".  The bytes are untrusted: every read is
 * bounded.  Pure: no file, no libelf.
 */
#ifndef VT_ELF_FDE_TABLE_H
#define VT_ELF_FDE_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vt_fde_table {
	const uint8_t *entries;   /* n pairs of int32: start, FDE; relative to hdr_addr (borrowed) */
	size_t n;
	uint64_t hdr_addr;        /* the link-time address of .eh_frame_hdr */
};

/* The index in .eh_frame_hdr (len bytes at link-time address hdr_addr); false when it has none. */
bool vt_fde_table_parse(const uint8_t *hdr, size_t len, uint64_t hdr_addr, struct vt_fde_table *t);

/* The greatest function start at or below addr (link-time addresses); false when none. */
bool vt_fde_table_start(const struct vt_fde_table *t, uint64_t addr, uint64_t *start);

#endif

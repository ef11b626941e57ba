/*
 * code_map.h — the code a process maps, from /proc/PID/maps text: one
 * module per mapped file that has an executable mapping (the extent of all
 * its consecutive mappings, starting at the mapping of file offset 0), and
 * [vdso].  This is what elf/unwind.c reports to libdw.  Beside them, the
 * executable mappings of no file (anonymous memory, named or not, the heap):
 * where a JIT puts its code, told apart from an address mapped by nothing.
 *
 * A parser on a buffer: nothing here reads /proc.  src/proc/maps.h is the
 * full maps parser; elf/ cannot include proc/ (same layer) and needs only
 * these few fields.  The text is untrusted: every line is checked, a
 * malformed one fails the parse, and the module count is capped.
 */
#ifndef VT_ELF_CODE_MAP_H
#define VT_ELF_CODE_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

/* Most modules kept; a maps file with more code files fails with VT_E_PARSE. */
#define VT_CODE_MAP_MAX 65536

struct vt_code_module {
	uint64_t low, high;            /* [low, high): all its consecutive mappings */
	uint64_t map_start, map_end;   /* its first mapping (offset 0): map_files/<start>-<end> */
	uint64_t inode;
	unsigned dev_major, dev_minor;
	bool vdso;                     /* [vdso]: no file, read from the target's memory */
	bool deleted;                  /* maps says " (deleted)": only map_files reaches it */
	char *path;                    /* as in maps, without " (deleted)"; owned */
};

/* An executable mapping of no module: [start, end). */
struct vt_code_range {
	uint64_t start, end;
};

struct vt_code_map {
	struct vt_code_module *v;      /* by address, as maps lists them */
	size_t n, cap;
	struct vt_code_range *anon;    /* by address; at most VT_CODE_MAP_MAX */
	size_t nanon, anon_cap;
	uint64_t fingerprint;          /* hash of every executable mapping (range, offset,
	                                * inode, path): equal fingerprints, same code */
	size_t exec_mappings;
};

/*
 * Parse maps text (len bytes, need not be NUL-terminated) into m, which must
 * be zeroed or released.  Errors: VT_E_PARSE (a malformed line: err says
 * which), VT_E_NOMEM.  On failure m is released.
 */
int vt_code_map_parse(const char *buf, size_t len, struct vt_code_map *m, struct vt_err *err);

/* Free the paths and the array; m is zeroed and can be reused. */
void vt_code_map_release(struct vt_code_map *m);

/* The executable mapping of no module that holds addr, or NULL. */
const struct vt_code_range *vt_code_map_anon_at(const struct vt_code_map *m, uint64_t addr);

/* The basename of a path ("libc.so.6" of "/usr/lib/x86_64-linux-gnu/libc.so.6"). */
const char *vt_code_basename(const char *path);

#endif

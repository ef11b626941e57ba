/*
 * arena_cap.h — the most arenas glibc malloc will create in a process, and
 * where that number comes from.
 *
 * glibc reads it once at start-up from the environment: the tunable
 * glibc.malloc.arena_max in GLIBC_TUNABLES, or its alias MALLOC_ARENA_MAX.
 * When both are set the tunable string wins (an alias is skipped once the
 * tunable is set, and GLIBC_TUNABLES overwrites an alias set before it).
 * Unset, the limit is 8 x the number of CPUs (64-bit), counted when the
 * limit is first needed.  A mallopt(M_ARENA_MAX) call in the program cannot
 * be seen from outside; the note says so.
 */
#ifndef VT_ALLOC_ARENA_CAP_H
#define VT_ALLOC_ARENA_CAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum vt_cap_source {
	VT_CAP_UNKNOWN = 0,       /* environ unreadable */
	VT_CAP_TUNABLE,           /* GLIBC_TUNABLES glibc.malloc.arena_max */
	VT_CAP_ENV,               /* MALLOC_ARENA_MAX */
	VT_CAP_DEFAULT,           /* 8 x CPUs */
};

struct vt_arena_cap {
	enum vt_cap_source source;
	uint64_t value;           /* 0 when unknown */
	char source_text[96];     /* "MALLOC_ARENA_MAX=2 in environ" */
	char note[160];           /* caveats, may be empty */
};

/*
 * Decide from the environ block (NULL when unreadable) and the CPU count
 * glibc would see (online CPUs).
 */
void vt_arena_cap_decide(const char *environ, size_t len, int ncpus, struct vt_arena_cap *out);

const char *vt_cap_source_name(enum vt_cap_source s);   /* "tunable", "env", "default" */

/*
 * The smallest mapping glibc may serve as an mmapped chunk: its threshold
 * floor (128 KiB), or a lower MALLOC_MMAP_THRESHOLD_ / glibc.malloc.
 * mmap_threshold from the environ block (NULL: the floor).  Used to skip
 * probing small mappings.
 */
uint64_t vt_mmap_threshold_floor(const char *environ, size_t len);

#endif

/*
 * glibc.h — glibc malloc's own figures, asked of glibc inside the target.
 *
 * The recipes, on one attached thread (alloc/calls.h):
 *   mallinfo2(&scratch)                    -> the ten figures (mallinfo() on
 *                                             glibc < 2.33: 32-bit, may wrap)
 *   fp = open_memstream(&ptr, &size)       \
 *   malloc_info(0, fp); fclose(fp)          > the per-arena XML, copied out
 *   ... process_vm_readv(ptr, size) ...    /  with process_vm_readv, then
 *   free(ptr)                                 freed in the target
 *   malloc_trim(0)                         -> 1 when memory went back
 * Symbols are resolved before the thread is stopped (vt_glibc_resolve), so
 * the thread waits only for the calls themselves.  glibc's mallinfo2,
 * malloc_info and malloc_trim take one arena mutex at a time, which is what
 * makes abandoning a blocked call safe (inject.h).
 */
#ifndef VT_ALLOC_GLIBC_H
#define VT_ALLOC_GLIBC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "alloc/calls.h"
#include "alloc/summary.h"
#include "base/error.h"
#include "proc/maps.h"
#include "proc/procfs.h"

/*
 * glibc struct mallinfo2 (malloc.h), in bytes/counts, as malloc.c's
 * int_mallinfo fills it: per arena, avail = the top + fast-bin chunks + the
 * chunks in every bin; fordblks += avail, uordblks += system_mem - avail,
 * arena += system_mem; hblks/hblkhd are mp_.n_mmaps/mmapped_mem, the chunks
 * too big for an arena, each mmapped alone and unmapped when freed: every
 * byte of hblkhd is in use.  So live = uordblks + hblkhd (what malloc_stats()
 * prints as "in use bytes"), held = arena + hblkhd, free-held = fordblks
 * (fsmblks is a part of it, not an addition).
 */
struct vt_mallinfo {
	uint64_t arena;      /* non-mmapped space from the system (all arenas) */
	uint64_t ordblks;    /* free chunks not in fast bins, one top per arena included */
	uint64_t smblks;     /* free fast-bin chunks */
	uint64_t hblks;      /* mmapped chunks (all in use) */
	uint64_t hblkhd;     /* bytes in mmapped chunks: in use, outside uordblks */
	uint64_t usmblks;    /* always 0 since glibc 2.?; kept for completeness */
	uint64_t fsmblks;    /* bytes in free fast-bin chunks (part of fordblks) */
	uint64_t uordblks;   /* bytes in use in the arenas (mmapped chunks: hblkhd) */
	uint64_t fordblks;   /* bytes free but held in the arenas (incl. tops and fsmblks) */
	uint64_t keepcost;   /* top chunk of the main arena: what a plain sbrk trim returns */
	bool wide;           /* from mallinfo2; false: 32-bit mallinfo(), fields may wrap */
};

/* The ten fields in their <malloc.h> order (the agent's reply has the same order). */
void vt_mallinfo_set(struct vt_mallinfo *mi, const uint64_t v[10], bool wide);

/* Bytes the program holds: in the arenas and in mmapped chunks (uordblks + hblkhd). */
uint64_t vt_mallinfo_live(const struct vt_mallinfo *mi);
/* Bytes malloc got from the kernel: the arenas and the mmapped chunks (arena + hblkhd). */
uint64_t vt_mallinfo_held(const struct vt_mallinfo *mi);
/* The summary every allocator gives: live, free (fordblks), held, trimmable (keepcost). */
void vt_mallinfo_summary(const struct vt_mallinfo *mi, struct vt_alloc_summary *out);
/* live / held, (uordblks + hblkhd) / (arena + hblkhd): the share in use (0 when nothing is held). */
double vt_mallinfo_live_fraction(const struct vt_mallinfo *mi);

/*
 * main_arena of process pid (maps: its mappings), found without debug
 * symbols and without stopping it: the RIP-relative lea targets in the
 * first bytes of mallinfo2's code (mallinfo's before glibc 2.33), read
 * through m, checked as a malloc arena (vt_glibc_find_main_arena).  A busy
 * arena can be read mid-update, so the check is tried up to tries times,
 * 2 ms apart.  Errors: those of vt_inject_resolve; VT_E_IO when the code
 * cannot be read through m (the caller knows why); VT_E_NOTFOUND when no
 * lea target checked as an arena.
 */
struct vt_heap_mem;
int vt_glibc_main_arena_locate(const struct vt_procfs *pfs, pid_t pid, const struct vt_region_list *maps,
			       const struct vt_heap_mem *m, unsigned tries, uint64_t *main_arena,
			       struct vt_err *err);

/* Bytes of mallinfo2's code searched for main_arena. */
#define VT_GLIBC_MALLINFO2_CODE 512

/* Largest malloc_info() text copied out of the target. */
#define VT_MALLOC_INFO_MAX (16u << 20)

/* Addresses in the target; mallinfo2 0 on glibc < 2.33 (then mallinfo is set). */
struct vt_glibc_fns {
	uint64_t mallinfo2, mallinfo, malloc_info, open_memstream, fclose, free, malloc_trim,
		errno_location;
};

/*
 * Resolve the functions in libc.so.6 of process pid (maps: its mappings).
 * Errors: those of vt_inject_resolve (VT_E_NOTFOUND for a missing symbol).
 */
int vt_glibc_resolve(const struct vt_procfs *pfs, pid_t pid, const struct vt_region_list *maps,
		     struct vt_glibc_fns *f, struct vt_err *err);

/* mallinfo2() (or mallinfo()) into *mi. */
int vt_glibc_mallinfo(struct vt_alloc_calls *cs, const struct vt_glibc_fns *f, struct vt_mallinfo *mi,
		      struct vt_err *err);

/*
 * malloc_info(0, fp) into an open_memstream buffer in the target, copied
 * into *xml (owned by the caller, NUL-terminated, *len bytes) and freed in
 * the target whatever happened.  VT_E_NOMEM when it is over
 * VT_MALLOC_INFO_MAX; VT_E_FAIL when the target's open_memstream failed.
 */
int vt_glibc_malloc_info(struct vt_alloc_calls *cs, const struct vt_glibc_fns *f, char **xml, size_t *len,
			 struct vt_err *err);

/* malloc_trim(0): *returned is its return value (1: memory went back to the kernel). */
int vt_glibc_malloc_trim(struct vt_alloc_calls *cs, const struct vt_glibc_fns *f, int *returned,
			 struct vt_err *err);

#endif

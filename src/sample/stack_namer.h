/*
 * stack_namer.h — code addresses of one process named as a profile's
 * locations (sample/profile.h), with a cache so a pc is symbolized once.
 *
 * A user pc is named by the unwinder's symbols (elf/unwind.h): its function
 * demangled (the symbol kept beside it), its module, and with DWARF one
 * location per function inlined at it, chained by inlined_into, each with
 * its source line.  A kernel pc gets a location of the "[kernel]" module,
 * named later from kallsyms by whoever loads them.  A module's executable
 * mapping (pprof's Mapping) is noted from /proc/PID/maps, read again only
 * after the module list changed.
 *
 * Used by the CPU profiler and the allocation sampler, so both name frames
 * alike.  Not thread-safe.  An allocation failure sets nomem and the call
 * returns UINT32_MAX: the caller ends its run with VT_E_NOMEM.
 */
#ifndef VT_SAMPLE_STACK_NAMER_H
#define VT_SAMPLE_STACK_NAMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "elf/unwind.h"
#include "proc/maps.h"
#include "sample/profile.h"

/* pc (with the kernel bit) -> location index. */
struct vt_namer_slot {
	uint64_t key;               /* pc << 1 | kernel, 0 empty (pc 0 is never cached) */
	uint32_t loc;
	uint32_t module;            /* its module in the profile, UINT32_MAX none */
};

struct vt_stack_namer {
	struct vt_profile *p;       /* the profile named into (not owned) */
	struct vt_unwinder *uw;     /* the process's unwinder (not owned) */
	int dirfd;                  /* its /proc directory (not owned) */
	struct vt_namer_slot *pcs;  /* open addressing */
	size_t pc_cap, pc_n;
	struct vt_region_list maps; /* the process's mappings, for the modules' ranges */
	struct vt_buf maps_buf;
	bool maps_stale;            /* the module list changed since maps was read */
	uint64_t unnamed;           /* user pcs looked up in no known module (each once until
	                             * a refresh forgets them): a reason to refresh */
	bool nomem;                 /* an allocation failed */
};

void vt_stack_namer_init(struct vt_stack_namer *nm, struct vt_profile *p, struct vt_unwinder *uw,
			 int dirfd);
void vt_stack_namer_release(struct vt_stack_namer *nm);

/* Re-read the unwinder's module list; when it changed, forget the cached names. */
void vt_stack_namer_refresh(struct vt_stack_namer *nm);

/* The location of a user pc (a return address, is_return, named at pc - 1): the
 * innermost inlined function's when there are some.  *module: its profile module,
 * UINT32_MAX none.  UINT32_MAX on allocation failure. */
uint32_t vt_stack_namer_user(struct vt_stack_namer *nm, uint64_t pc, bool is_return,
			     uint32_t *module);

/* The location of a kernel pc in module kernel_module (named later). */
uint32_t vt_stack_namer_kernel(struct vt_stack_namer *nm, uint64_t pc, uint32_t kernel_module);

/* Append the locations of frames[0..n) (leaf first; inlined callers follow their
 * callee) to locs from *depth on, up to VT_PROFILE_MAX_DEPTH, tallying each step's
 * unwind method against its module. */
void vt_stack_namer_push(struct vt_stack_namer *nm, const struct vt_unwind_frame *frames, size_t n,
			 uint32_t *locs, uint32_t *depth);

#endif

/*
 * maps.h — /proc/PID/maps and /proc/PID/smaps as a list of regions.
 *
 * One parser reads both: smaps is maps with "Key: N kB" lines after each
 * header.  From maps alone the smaps figures stay VT_NA.  The list owns the
 * path strings; free it with vt_region_list_release().
 */
#ifndef VT_PROC_MAPS_H
#define VT_PROC_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

/* What a region is, as far as vitals can tell.  Set by src/alloc/regions.c. */
enum vt_region_kind {
	VT_REGION_OTHER = 0,       /* not classified (small, special, ...) */
	VT_REGION_MAIN_HEAP,       /* [heap]: glibc main arena (brk) */
	VT_REGION_ARENA_HEAP,      /* glibc non-main arena heap (HEAP_MAX_SIZE aligned) */
	VT_REGION_ARENA_RESERVE,   /* ---p tail of an arena heap reservation */
	VT_REGION_THREAD_STACK,    /* a thread's stack */
	VT_REGION_MAIN_STACK,      /* [stack] */
	VT_REGION_GUARD,           /* ---p guard page(s) */
	VT_REGION_MMAP_CHUNK,      /* glibc mmapped chunk (header verified) */
	VT_REGION_ANON,            /* large anonymous mapping, owner unknown */
	VT_REGION_ALLOC_OTHER,     /* anonymous memory of another allocator */
	VT_REGION_FILE,            /* file-backed (binary, library, data file) */
	VT_REGION_SHMEM,           /* shared memory: memfd, /dev/shm, SysV */
	VT_REGION_SPECIAL,         /* [vdso] [vvar] [vsyscall] */
	VT_REGION__COUNT
};

const char *vt_region_kind_name(enum vt_region_kind kind);   /* "arena_heap" */
const char *vt_region_kind_label(enum vt_region_kind kind);  /* "glibc arena heap" */

struct vt_region {
	uint64_t start, end;         /* [start, end) virtual addresses */
	char perms[5];               /* "rw-p" */
	uint64_t offset;             /* file offset */
	uint64_t inode;
	unsigned dev_major, dev_minor;
	char *path;                  /* pathname or pseudo name, "" for anonymous; owned */
	/* smaps figures in bytes, VT_NA when read from maps only */
	uint64_t rss;                /* Rss: */
	uint64_t pss;                /* Pss: */
	uint64_t private_dirty;      /* Private_Dirty: */
	uint64_t anonymous;          /* Anonymous: */
	uint64_t swap;               /* Swap: */
	uint64_t locked;             /* Locked: */
	enum vt_region_kind kind;
	uint32_t kind_flags;         /* VT_KIND_* evidence bits */
	int owner_tid;               /* thread whose stack this is, 0 if unknown */
};

/* How a kind was decided (kind_flags), so the report can state its basis. */
enum vt_kind_evidence {
	VT_KIND_BY_NAME      = 1 << 0,   /* kernel or glibc named it ([heap], [anon: ...]) */
	VT_KIND_BY_LAYOUT    = 1 << 1,   /* alignment and adjacent mappings */
	VT_KIND_BY_MEMORY    = 1 << 2,   /* header read from target memory matched */
	VT_KIND_BY_THREAD_SP = 1 << 3,   /* a thread's stack pointer lies inside */
};

struct vt_region_list {
	struct vt_region *v;
	size_t n, cap;
	bool has_smaps;              /* figures came from smaps */
	size_t stale;                /* regions dropped as read twice (see vt_maps_parse) */
};

static inline uint64_t vt_region_size(const struct vt_region *r)
{
	return r->end - r->start;
}
static inline bool vt_region_is_anon(const struct vt_region *r)
{
	return r->inode == 0 && (r->path[0] == '\0' || r->path[0] == '[');
}

/*
 * Parse maps or smaps text; appends to list (which must be empty or reset).
 * The kernel writes the file a buffer at a time, taking the address-space
 * lock for each and going on after the last address it wrote: a mapping that
 * grew or merged with its neighbour in between comes out a second time (a
 * glibc heap growing under a busy allocator).  The list stays sorted and
 * without overlaps: a region covered by a later line of the same text is the
 * older view of that memory and is dropped (counted in list->stale).
 */
int vt_maps_parse(const char *buf, size_t len, struct vt_region_list *list, struct vt_err *err);
void vt_region_list_release(struct vt_region_list *list);

#endif

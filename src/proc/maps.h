/*
 * maps.h — /proc/PID/maps and /proc/PID/smaps as a list of regions.
 *
 * One parser reads both: smaps is maps with "Key: N kB" lines after each
 * header.  From maps alone the smaps figures stay VT_NA.  The list owns the
 * path strings (kept together in its names, one block for many mappings,
 * not one allocation each); free it with vt_region_list_release().
 */
#ifndef VT_PROC_MAPS_H
#define VT_PROC_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
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
	VT_REGION_PY_ARENAS,       /* CPython's object arenas (pymalloc): not malloc's */
	VT_REGION_FILE,            /* file-backed (binary, library, data file) */
	VT_REGION_SHMEM,           /* shared memory: memfd, /dev/shm, SysV */
	VT_REGION_SPECIAL,         /* [vdso] [vvar] [vsyscall] */
	VT_REGION__COUNT
};

const char *vt_region_kind_name(enum vt_region_kind kind);   /* "arena_heap" */
const char *vt_region_kind_label(enum vt_region_kind kind);  /* "glibc arena heap" */

#define VT_BLOCK_HEAD 48            /* bytes of a block's start kept for its shape */

/*
 * One allocation that a header read from the region names (a glibc
 * mmapped chunk found by alloc/mmap_blocks.c): a sub-range of its region.
 */
struct vt_region_block {
	uint64_t addr;               /* its chunk header, page aligned */
	uint64_t size;               /* bytes from the header, a whole number of pages */
	uint64_t resident;           /* bytes of it on resident pages (pagemap), VT_NA unknown */
	uint8_t head[VT_BLOCK_HEAD]; /* its first bytes after the 16-byte header: redact before showing */
	uint8_t head_len;            /* 0: not read (its page not resident) */
};

/*
 * The blocks found in a region, and what the rest of it is.  The bytes of
 * the region are blocks + other + unread + skipped + excluded.
 */
struct vt_region_blocks {
	size_t n, cap;
	struct vt_region_block *v;   /* owned, by address */
	uint64_t block_bytes;        /* sum of v[].size */
	uint64_t other_bytes;        /* pages looked at that hold no block header nor lie in a block */
	uint64_t unread_bytes;       /* pages never looked at: past the scan bound, or a read that failed */
	uint64_t skipped_bytes;      /* blocks whose header changed under the walk, dropped */
	uint64_t excluded_bytes;     /* glibc arena heaps merged into the region: not walked */
	unsigned changed;            /* how many such */
	size_t dropped;              /* blocks past VT_BLOCKS_MAX, counted in other_bytes */
	bool resident_known;         /* v[].resident came from pagemap */
	uint64_t read_bytes;         /* bytes the walk read from the target's memory */
};

void vt_region_blocks_free(struct vt_region_blocks *b);

/*
 * CPython's object arenas found inside a region (alloc/cpython.h): pools
 * read from their headers, arenas counted by their index.
 */
struct vt_region_pyarenas {
	uint32_t pool_size;          /* 4096 or 16384 */
	uint32_t arena_size;         /* 256 KiB or 1 MiB */
	uint64_t arenas;             /* distinct arena indexes whose pools lie here */
	uint64_t pools;              /* pool headers found, in use or empty */
	uint64_t used_pools;         /* of which with blocks in use */
	uint64_t used_bytes;         /* blocks in use x their size class */
	uint64_t refused_pools;      /* headers whose arena index the others contradict */
	uint64_t unread_bytes;       /* not looked at: past the scan bound, the deadline, a read that failed */
};

/*
 * One line of maps (and its smaps figures).  A process can have tens of
 * thousands, and a light snapshot's cost grows with the pages the list
 * touches: the members are ordered to leave 2 bytes of padding (104 in
 * all), and smaps figures nothing reads are not kept.
 */
struct vt_region {
	uint64_t start, end;         /* [start, end) virtual addresses */
	uint64_t offset;             /* file offset */
	uint64_t inode;
	const char *path;            /* pathname or pseudo name, "" for anonymous; the list's */
	/* smaps figures in bytes, VT_NA when read from maps only */
	uint64_t rss;                /* Rss: */
	uint64_t pss;                /* Pss: (smaps_rollup) */
	uint64_t swap;               /* Swap: */
	struct vt_region_blocks *blocks;   /* allocations found inside it, NULL: none looked for
	                                    * or none found; owned (vt_region_list_release) */
	struct vt_region_pyarenas *py;     /* CPython's arenas inside it, NULL: none; owned */
	unsigned dev_major, dev_minor;
	enum vt_region_kind kind;
	int owner_tid;               /* thread whose stack this is, 0 if unknown */
	char perms[5];               /* "rw-p" */
	uint8_t kind_flags;          /* VT_KIND_* evidence bits */
};

/* How a kind was decided (kind_flags), so the report can state its basis. */
enum vt_kind_evidence {
	VT_KIND_BY_NAME      = 1 << 0,   /* kernel or glibc named it ([heap], [anon: ...]) */
	VT_KIND_BY_LAYOUT    = 1 << 1,   /* alignment and adjacent mappings */
	VT_KIND_BY_MEMORY    = 1 << 2,   /* header read from target memory matched */
	VT_KIND_BY_THREAD_SP = 1 << 3,   /* a thread's stack pointer lies inside */
};

struct vt_maps_names;           /* the text of the paths (maps.c) */

struct vt_region_list {
	struct vt_region *v;
	size_t n, cap;
	bool has_smaps;              /* figures came from smaps */
	size_t stale;                /* regions dropped as read twice (see vt_maps_parse) */
	struct vt_maps_names *names; /* where v[].path point; owned */
	size_t *files;               /* indexes in v of the file-backed mappings (inode set), in
	                              * order: what looks for libraries walks these alone; owned */
	size_t nfiles, files_cap;
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

/*
 * The same text given a piece at a time, each piece whole lines but the
 * last (vt_read_lines_at hands them so): start, then more for each piece.
 * The result is that of vt_maps_parse on the pieces joined.
 */
struct vt_maps_parser {
	struct vt_region_list *list;
	int lineno;                  /* lines seen, for the error message */
};
void vt_maps_parse_start(struct vt_maps_parser *p, struct vt_region_list *list);
int vt_maps_parse_more(struct vt_maps_parser *p, const char *text, size_t len, struct vt_err *err);

/* Read maps or smaps (name) of the process whose /proc directory is dirfd into list, parsed as it is read. */
int vt_maps_read_at(int dirfd, const char *name, struct vt_buf *buf, struct vt_region_list *list,
		    struct vt_err *err);
void vt_region_list_release(struct vt_region_list *list);

#endif

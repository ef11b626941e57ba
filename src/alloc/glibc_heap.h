/*
 * glibc_heap.h — glibc malloc's chunks, walked from outside the process.
 *
 * glibc keeps a header before every chunk (malloc.c: prev_size, size with
 * the bits PREV_INUSE 1, IS_MMAPPED 2, NON_MAIN_ARENA 4).  Chunks tile each
 * heap from its first chunk to the arena's top chunk, so reading the memory
 * in order and stepping by size visits all of them.  A chunk is free in the
 * bins when the next chunk's PREV_INUSE bit is clear; fast-bin and tcache
 * chunks keep that bit set (malloc treats them as in use), so they are
 * found otherwise: the fast bins by following each arena's fastbinsY lists
 * (with glibc >= 2.32 the links are mangled, fd ^ (&fd >> 12)), and tcache
 * entries by the key glibc writes into each one's second word (a random
 * tcache_key from 2.34, the owning tcache's address in 2.29-2.33), learned
 * from a thread's tcache_perthread_struct.
 *
 * Where the arenas are:
 *   - main_arena is static in libc.  mallinfo2's code loads its address
 *     with a RIP-relative lea (`lea main_arena(%rip), %reg`, REX.W 8d /r
 *     with ModRM mod 00 r/m 101); every such target is tried, and one is
 *     main_arena when it passes vt_glibc_arena_check: its empty bins point
 *     at themselves and its next pointers form a ring that comes back.
 *   - the main arena's chunks start at the [heap] mapping and end with its
 *     top chunk; every other arena lives in 64 MiB-aligned heaps
 *     (heap_info: ar_ptr, prev, size, ...) chained from the heap holding
 *     its top back to the one holding the arena itself.
 *   - chunks too large for an arena are mmapped one by one: an anonymous
 *     mapping that starts with a header (prev_size 0, IS_MMAPPED set,
 *     a whole number of pages).
 * The layout is glibc 2.27 and later on x86-64 (struct malloc_state with
 * have_fastchunks, 2200 bytes); anything else fails the arena check and
 * is refused rather than misread.
 *
 * Reading a heap that changes: each header is checked (aligned, large
 * enough, inside its heap); a bad one makes the walk read that stretch
 * again (up to VT_HEAP_REREADS times) before skipping the rest of that heap,
 * and the counts say how many reads were repeated and how many bytes were
 * skipped.  Memory is read through struct vt_heap_mem, so the walk runs on
 * a live process (process_vm_readv), a recorded image, or a fuzzer's bytes.
 *
 * Pages that are not resident are not read for content: their chunks are
 * counted from their headers, and a header on a swapped-out page is the
 * only read that brings one back.
 */
#ifndef VT_ALLOC_GLIBC_HEAP_H
#define VT_ALLOC_GLIBC_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc/glibc.h"
#include "base/error.h"
#include "proc/maps.h"

#define VT_HEAP_ARENAS_MAX 1024       /* arenas followed in the ring */
#define VT_HEAP_REREADS 3             /* reads of one stretch before it is skipped */
#define VT_HEAP_WINDOW (1u << 20)     /* bytes read at a time */
#define VT_HEAP_PAGE 4096u
#define VT_HEAP_MMAP_SCAN_MAX (4ull << 30)   /* anonymous mappings searched page by page for mmapped chunks */

/* How memory is read: by the caller's callbacks (a process, an image, a fuzzer's bytes). */
struct vt_heap_mem {
	/* exactly len bytes at addr into out: 0, or -1 when any is unreadable */
	int (*read)(void *ctx, uint64_t addr, void *out, size_t len);
	/*
	 * whether each of npages pages from addr (page-aligned) is resident:
	 * present[i] 1 or 0; 0, or -1 when unknown (then all are read)
	 */
	int (*resident)(void *ctx, uint64_t addr, size_t npages, uint8_t *present);
	void *ctx;
	/*
	 * may be NULL (read is called for each): n stretches of len bytes, the
	 * i-th at addrs[i] into out + i * len, in one go; ok[i] 1 when it was
	 * read, 0 when not
	 */
	void (*read_each)(void *ctx, const uint64_t *addrs, size_t n, size_t len, void *out, uint8_t *ok);
};

enum vt_chunk_kind {
	VT_CHUNK_LIVE = 0,    /* in use by the program */
	VT_CHUNK_BIN,         /* free in a bin (unsorted, small, large) */
	VT_CHUNK_FAST,        /* free in a fast bin */
	VT_CHUNK_TCACHE,      /* free in a thread's tcache */
	VT_CHUNK_TOP,         /* an arena's top chunk */
	VT_CHUNK_MMAPPED,     /* mmapped alone: in use */
	VT_CHUNK_KINDS
};

const char *vt_chunk_kind_name(enum vt_chunk_kind k);   /* "live", "bin", ... */
/* Free as the program sees it: bins, fast bins, tcache, top. */
bool vt_chunk_kind_free(enum vt_chunk_kind k);

/*
 * A stretch of one chunk's content, handed to the caller's visitor.  The
 * content is what the program can hold there: the bytes after the header
 * (and after the links malloc keeps in a free chunk), up to the next
 * chunk's header (its prev_size word belongs to an in-use chunk).  Only
 * resident pages are handed over, so one chunk may come in several pieces:
 * the first has first set (and may be empty), the rest follow in order.
 */
struct vt_chunk_piece {
	uint64_t chunk;              /* the chunk's address (its header) */
	uint64_t size;               /* its size from the header, flags cleared */
	enum vt_chunk_kind kind;
	size_t arena;                /* index into the walk's arenas; mmapped: narenas */
	bool first;                  /* the first piece of this chunk */
	uint64_t addr;               /* where these bytes are */
	const uint8_t *bytes;
	size_t len;
};

typedef void (*vt_chunk_visit)(void *ctx, const struct vt_chunk_piece *p);

/* One arena's chunks by kind. */
struct vt_arena_walk {
	uint64_t addr;               /* its struct malloc_state */
	bool main;
	uint64_t system_mem;         /* av->system_mem */
	uint64_t top;                /* its top chunk */
	uint64_t top_size;
	unsigned heaps;              /* heaps walked (main: 1) */
	uint64_t chunks[VT_CHUNK_KINDS], bytes[VT_CHUNK_KINDS];   /* MMAPPED unused */
	uint64_t free_resident;      /* bytes of free chunks (bins, fast, tcache, top) on resident pages */
	uint64_t trimmable;          /* resident whole pages malloc_trim(0) could give back */
	uint64_t walked;             /* bytes of chunks walked */
	uint64_t skipped;            /* bytes not walked: a header kept failing */
	unsigned rereads;            /* stretches read again after a bad header */
};

struct vt_heap_walk {
	struct vt_arena_walk *arenas;   /* narenas, main first; owned (vt_heap_walk_release) */
	size_t narenas;
	uint64_t mmapped_chunks, mmapped_bytes, mmapped_resident;
	uint64_t read_bytes;         /* bytes read from the target's memory */
	uint64_t tcache_key;         /* learned, 0: none found */
	bool tcache_key_known;
	bool safe_linking;
	unsigned fast_bad;           /* fast-bin links that failed a check (the list was cut there) */
};

struct vt_heap_walk_opts {
	uint64_t main_arena;
	bool safe_linking;           /* glibc >= 2.32 */
	bool key_is_tcache;          /* glibc 2.29-2.33: the key is the tcache's own address */
	const struct vt_region_list *maps;   /* the process's mappings: [heap], mmapped chunks */
	vt_chunk_visit visit;        /* may be NULL: counts only */
	void *visit_ctx;
	double deadline_s;           /* vt_mono_s() past which the walk gives up (VT_E_TIMEOUT); 0: none */
	bool arenas_only;            /* the arenas alone: no search for mmapped chunks (never free) */
};

/*
 * Whether addr holds a struct malloc_state whose ring (next) comes back to
 * it within VT_HEAP_ARENAS_MAX arenas; *narenas is the ring's length.
 */
bool vt_glibc_arena_check(const struct vt_heap_mem *m, uint64_t addr, size_t *narenas);

/*
 * main_arena from mallinfo2's code: code[len] read at code_addr.  Every
 * RIP-relative lea target is checked with vt_glibc_arena_check; the first
 * that passes is *main_arena.  VT_E_NOTFOUND when none does.
 */
int vt_glibc_find_main_arena(const struct vt_heap_mem *m, const uint8_t *code, size_t len, uint64_t code_addr,
			     uint64_t *main_arena, struct vt_err *err);

/*
 * The arenas of the ring that starts at main_arena, main first: up to max
 * addresses into out (an arena's address is that of its mutex, the first
 * field of struct malloc_state), *n of them.  False when an arena does not
 * check (vt_glibc_arena_check's test) or the ring does not close within
 * VT_HEAP_ARENAS_MAX; true with *n == max when the ring is longer.
 */
bool vt_glibc_arena_ring(const struct vt_heap_mem *m, uint64_t main_arena, uint64_t *out, size_t max,
			 size_t *n);

/*
 * Walk every arena and the mmapped chunks, calling o->visit with each
 * chunk's resident content.  *out is filled (release it with
 * vt_heap_walk_release, also after an error).  VT_E_PARSE when main_arena
 * does not check, VT_E_TIMEOUT when o->deadline_s passed; a heap that
 * cannot be walked is counted as skipped.
 */
int vt_heap_walk(const struct vt_heap_mem *m, const struct vt_heap_walk_opts *o, struct vt_heap_walk *out,
		 struct vt_err *err);
void vt_heap_walk_release(struct vt_heap_walk *w);

/* The ten mallinfo2 fields as glibc's int_mallinfo would add up this walk. */
void vt_heap_walk_mallinfo(const struct vt_heap_walk *w, struct vt_mallinfo *mi);

#endif

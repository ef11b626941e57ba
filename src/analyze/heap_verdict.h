/*
 * heap_verdict.h — what the allocator's figures say, and which lever fits:
 * the data is live (the program holds it: only if it keeps growing is there
 * a retention to find, a soak's question), or the allocator holds free memory
 * (trim, fewer arenas, another allocator) — always with the numbers it rests
 * on, and "cannot tell" when they do not decide.  Reads a heap sample only,
 * and writes no sentence: the lever, the evidence it cites (codes) and
 * their figures are the verdict; render/heap.h words them.
 */
#ifndef VT_ANALYZE_HEAP_VERDICT_H
#define VT_ANALYZE_HEAP_VERDICT_H

#include <stdbool.h>
#include <stdint.h>

#include "sample/heap.h"

enum vt_heap_lever {
	VT_LEVER_NONE = 0,          /* small heap or nothing held: nothing to act on */
	VT_LEVER_RETENTION,         /* mostly live data the program holds; no allocator lever */
	VT_LEVER_TRIM,              /* free memory in whole pages: malloc_trim returns it */
	VT_LEVER_FEWER_ARENAS,      /* free memory spread over many arenas */
	VT_LEVER_ALLOCATOR,         /* fragmented free memory trim cannot return */
	VT_LEVER_DECAY,             /* another allocator returns free pages on its own (jemalloc: its decay) */
	VT_LEVER_CANNOT_TELL,
};

/* A fact the verdict cites, in the order it cites them; each names the figures it quotes. */
enum vt_heap_evidence {
	VT_HEAP_EV_LIVE,            /* live of held, live_fraction */
	VT_HEAP_EV_FREE_HELD,       /* free_bytes in free_chunks; keepcost (glibc) */
	VT_HEAP_EV_ARENAS,          /* narenas; top_arena holds top_arena_share of the free memory */
	VT_HEAP_EV_TRIM_ESTIMATE,   /* trim_low..trim_high, at most trim_cap resident */
	VT_HEAP_EV_TRIM_MEASURED,   /* a trim took RssAnon from trim_rss_before to trim_rss_after */
	VT_HEAP_EV_MALLINFO_32,     /* the figures come from 32-bit mallinfo(): sizes wrap at 4 GiB */
	VT_HEAP_EV_TRIM_ONCE,       /* fewer arenas: a trim returns about trim_low once, churn refills */
	VT_HEAP_EV_FIGURES,         /* another allocator's own figures, arenas (jemalloc: stats.*) */
	VT_HEAP_EV_RUNTIME,         /* CPython's object arenas: py_pool_bytes of RssAnon are not malloc's */
};

#define VT_VERDICT_EVIDENCE 9

struct vt_heap_verdict {
	enum vt_heap_lever lever;
	const struct vt_allocator *other;   /* judged on this allocator's figures (NULL: glibc's mallinfo) */
	enum vt_heap_evidence evidence[VT_VERDICT_EVIDENCE];
	int n_evidence;

	/* what the allocator holds, bytes (glibc: mallinfo; another: its summary) */
	uint64_t live;                  /* uordblks + hblkhd; jemalloc allocated */
	uint64_t held;                  /* arena + hblkhd; jemalloc resident */
	double live_fraction;           /* live / held (0 when nothing is held) */
	uint64_t rss_anon;              /* RssAnon right before the probe, bytes (0 unknown) */
	uint64_t free_bytes;            /* fordblks (free but held; fsmblks is part of it) */
	uint64_t free_chunks;           /* ordblks + smblks */
	uint64_t keepcost;              /* the top of the main arena */
	bool wide;                      /* from mallinfo2 (64-bit), not mallinfo */
	uint64_t narenas;               /* arenas (malloc_info; another allocator's own count) */
	int top_arena;                  /* the arena holding most free memory (-1 none) */
	double top_arena_share;         /* its share of the arenas' free memory, 0..1 */

	/* a trim: the estimate over all arenas, and the measure when --trim ran (glibc), bytes */
	uint64_t trim_low, trim_high;
	uint64_t trim_cap;              /* RssAnon - live - py_pool_bytes: resident, not live, malloc's (0 unknown) */
	uint64_t py_arenas;             /* CPython's object arenas found (heap_sample.python), 0 none */
	uint64_t py_pool_bytes;         /* ... their pools found on resident pages x the pool size */
	uint64_t trim_rss_before, trim_rss_after;   /* RssAnon around the measured trim */
	double trim_ms;                 /* how long the measured trim took */

	/* another allocator: its own figures, as read */
	struct vt_alloc_stats stats;
};

const char *vt_heap_lever_name(enum vt_heap_lever lever);   /* "fewer_arenas" */
/* The verdict on heap sample h (page_size 0: 4096) into *v. */
void vt_heap_judge(const struct vt_heap_sample *h, uint64_t page_size, struct vt_heap_verdict *v);

#endif

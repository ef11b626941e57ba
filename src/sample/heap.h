/*
 * heap.h — the allocator's own figures for one process at one moment:
 * glibc mallinfo2() and malloc_info() per arena, or another allocator's
 * own figures (alloc/allocator.h: jemalloc's stats.*), read from the
 * running process (ptrace call injection or the in-process
 * agent), plus what malloc_trim(0) did when the user asked for it.
 *
 * Filled by src/sample/heap.c; rendered by src/render/heap_*.c; judged by
 * src/analyze/heap_verdict.c.  Unknown figures are VT_NA.
 */
#ifndef VT_SAMPLE_HEAP_H
#define VT_SAMPLE_HEAP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "alloc/allocator.h"
#include "alloc/cpython.h"
#include "alloc/detect.h"
#include "alloc/glibc.h"
#include "alloc/malloc_info.h"
#include "base/error.h"
#include "proc/maps.h"
#include "proc/procfs.h"
#include "proc/status.h"
#include "sample/arena_threads.h"

enum vt_heap_method { VT_HEAP_PTRACE = 1, VT_HEAP_AGENT };

struct vt_heap_trim {
	bool done;
	int returned;                 /* malloc_trim's return: 1 if memory was released */
	struct vt_mallinfo before, after;
	uint64_t rss_anon_before, rss_anon_after;     /* /proc status, bytes */
	uint64_t committed_before, committed_after;
	double took_ms;               /* the malloc_trim call itself */
	double after_mono_s;          /* CLOCK_MONOTONIC when the "after" figures were read: where
	                               * a follow of the refill (sample/trim_follow.h) starts */
};

struct vt_heap_sample {
	pid_t pid;
	char comm[64];
	struct vt_alloc_info alloc;
	enum vt_heap_method method;
	char method_detail[600];      /* "thread 123 (blocked in nanosleep)" or the agent socket */
	struct vt_proc_status status; /* read right before the probe */
	/* glibc */
	struct vt_mallinfo mi;
	struct vt_malloc_info info;   /* per arena; owned */
	bool has_info;
	struct vt_arena_threads threads;   /* which threads allocate from each arena of info, read
	                                    * before the calls, indexed as info; owned (all zero
	                                    * unless asked for) */
	/* another allocator (alloc/allocator.h): its row and its figures */
	const struct vt_allocator *other;   /* NULL: glibc's figures above */
	struct vt_alloc_stats stats;
	struct vt_heap_trim trim;
	/*
	 * glibc: the malloc'd blocks (mmapped chunks, alloc/mmap_blocks.h)
	 * found in its anonymous mappings right after the calls, attached to
	 * the regions of maps (vt_region.blocks), to hold against mallinfo2's
	 * hblks and hblkhd.  blocks_why says why they were not looked for.
	 */
	struct vt_region_list maps;   /* owned */
	bool blocks_walked;
	uint64_t blocks_count, blocks_bytes;
	uint64_t blocks_min;          /* smallest block looked for (the mmap threshold floor) */
	char blocks_why[160];
	/* a CPython interpreter: its object arenas, found with the blocks
	 * (vt_region.py), or why they were not (python_why, "" when they were) */
	struct vt_cpython python;
	char python_why[200];
	struct vt_alloc_summary sum;  /* of whichever allocator: what consumers read */
	/* cost */
	double stopped_us;            /* the probed thread was stopped this long (ptrace) */
	double callee_us;             /* of which the called functions ran this long */
	int calls;                    /* functions called in the target */
	double total_ms;              /* end to end */
	double taken_at;              /* unix time */
};

struct vt_heap_opts {
	bool trim;                    /* call malloc_trim(0): changes the target */
	bool arenas;                  /* per-arena figures too (glibc: malloc_info, 4 more calls) */
	bool thread_arenas;           /* with arenas: which threads use each arena (reads their
	                               * memory with process_vm_readv, stops nothing) */
	bool blocks;                  /* glibc: look for malloc'd blocks in its mappings too (reads its memory
	                               * with process_vm_readv, stops nothing) */
	bool no_agent;                /* use ptrace even if an agent answers */
	bool no_ptrace;               /* agent only */
	int timeout_ms;               /* per injected call */
};

/*
 * Probe pid; out->sum is filled whichever the allocator.  Errors: VT_E_NOPROC,
 * VT_E_GONE, VT_E_KTHREAD, VT_E_ZOMBIE, VT_E_UNSUPPORTED (never for this
 * process: not glibc or jemalloc, the message names the allocator; another
 * ABI), VT_E_PERM (ptrace refused and no agent: the message says why),
 * VT_E_BUSY (not right now: no thread where a call is safe, or the process
 * is stopped), VT_E_TIMEOUT, VT_E_NOTFOUND (no agent, with no_ptrace).
 */
int vt_heap_take(const struct vt_procfs *pfs, pid_t pid, const struct vt_heap_opts *opts,
		 struct vt_heap_sample *out, struct vt_err *err);
void vt_heap_release(struct vt_heap_sample *h);

/*
 * The one refusal policy of every reader that probes a process again and
 * again (soak, serve): true when vt_heap_take's error code will be the same
 * at every later try for this process (permission, an allocator or ABI
 * vitals does not call into, no agent when ptrace is not allowed), so stop
 * asking; false when a later try may work (VT_E_BUSY, a timeout).
 */
bool vt_heap_refusal_lasts(int code, bool ptrace_allowed);

/* Does vt_heap_take read this allocator's figures (it has a row in alloc/allocator.c)?
 * The others are VT_E_UNSUPPORTED. */
bool vt_heap_reads(enum vt_alloc_kind kind);

#endif

/*
 * allocator.h — the allocators vitals calls into, one row each: where the
 * function it calls lives, how its figures are read, how it gives free
 * memory back.  Everything past alloc/ asks this table and reads what the
 * row's recipe fills, never an allocator's own struct:
 *
 *   - glibc's row has no read: glibc has a richer path of its own
 *     (mallinfo2, per-arena malloc_info, malloc_trim, the agent; glibc.h
 *     and sample/heap.c) whose figures every view shows;
 *   - every other allocator's read fills a vt_alloc_stats: its own figures
 *     by name (rendered as they are, keys for scripts, labels for people)
 *     and the summary (summary.h) that soak, serve and the verdict use.
 *
 * Adding an allocator is its recipe (alloc/NAME.c and .h), one row in
 * allocator.c and, if detect.c does not know it yet, its recognition.
 */
#ifndef VT_ALLOC_ALLOCATOR_H
#define VT_ALLOC_ALLOCATOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc/calls.h"
#include "alloc/detect.h"
#include "alloc/summary.h"
#include "base/error.h"

#define VT_ALLOC_FIGURES_MAX 12

/* One figure in the allocator's own terms. */
struct vt_alloc_figure {
	const char *key;        /* for scripts, the allocator's name for it: "allocated" (static) */
	const char *label;      /* for people: "allocated (live)" (static) */
	uint64_t value;
	bool bytes;             /* else a count */
};

/* What one read of an allocator other than glibc gives. */
struct vt_alloc_stats {
	char version[64];       /* "" when it does not say */
	struct vt_alloc_figure fig[VT_ALLOC_FIGURES_MAX];
	int n_fig;
	uint64_t narenas;       /* 0 when it has none or does not say */
	struct vt_alloc_summary sum;
};

struct vt_allocator {
	enum vt_alloc_kind kind;
	const char *library;    /* the shared object exporting entry: "libjemalloc.so" */
	const char *entry;      /* the one function every call goes through: "mallctl" */
	const char *gives_back; /* the verdict's words: "jemalloc returns dirty pages on its
				 * decay timer (opt.dirty_decay_ms)" */
	const char *if_it_stays;/* "lower the decay time or the arena count" */
	/*
	 * On one attached thread (calls.h), entry resolved: fill *out, summary
	 * included.  NULL for glibc.  Errors: those of vt_alloc_call, VT_E_FAIL
	 * when the allocator answers with an error.
	 */
	int (*read)(struct vt_alloc_calls *cs, uint64_t entry, struct vt_alloc_stats *out,
		    struct vt_err *err);
};

/* The row of kind; NULL for an allocator vitals does not call into. */
const struct vt_allocator *vt_allocator_of(enum vt_alloc_kind kind);

/* Row i of the table (0 first), NULL past the last: to list them all. */
const struct vt_allocator *vt_allocator_at(int i);

/* "glibc malloc, jemalloc" into buf: the allocators with a row, for messages. */
const char *vt_allocators_read(char *buf, size_t cap);

/* Append a figure (key and label static); a full list drops it. */
void vt_alloc_stats_add(struct vt_alloc_stats *s, const char *key, const char *label, uint64_t value,
			bool bytes);
/* The figure named key, or NULL. */
const struct vt_alloc_figure *vt_alloc_stats_get(const struct vt_alloc_stats *s, const char *key);

#endif

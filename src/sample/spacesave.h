/*
 * spacesave.h — heavy hitters in fixed memory: space-saving counters
 * (Metwally, Agrawal and El Abbadi, 2005).
 *
 * A table of cap counters, each holding an item (a 128-bit identity: key
 * and aux), its count and its error.  vt_ss_add() is the algorithm: an item
 * not counted evicts the one with the smallest count and takes over that
 * count plus its weight, and records the count it took over as its error.
 * So count is an upper bound of the item's true weight and count - err a
 * lower bound; every item heavier than total / cap is in the table.
 * vt_ss_find(), vt_ss_bump() and vt_ss_put() let a caller admit items by a
 * rule of its own (sample/fragment.c: an upper bound from a sketch) while
 * keeping the eviction of the smallest.
 *
 * The counters sit in a min-heap on count (the one to evict at its root)
 * with an open-addressing index on the identity.  Pure computation; the
 * caller owns the table (vt_ss_init, vt_ss_release).
 */
#ifndef VT_SAMPLE_SPACESAVE_H
#define VT_SAMPLE_SPACESAVE_H

#include <stdbool.h>
#include <stdint.h>

#define VT_SS_NONE UINT32_MAX

struct vt_ss_entry {
	uint64_t key, aux;    /* identity */
	uint64_t count, err;
	uint32_t pos;         /* in heap */
};

struct vt_ss {
	uint32_t cap, used;
	uint32_t mask;        /* index size - 1 */
	struct vt_ss_entry *ent;   /* by slot, used of them */
	uint32_t *heap;       /* slots, a min-heap on count: the root is the one to evict */
	uint32_t *index;      /* slot + 1, 0 when empty; linear probing */
};

/* A table of cap (>= 1) counters; -1 when memory runs out (release it all the same). */
int vt_ss_init(struct vt_ss *s, uint32_t cap);
void vt_ss_release(struct vt_ss *s);

/* Count weight for (key, aux); returns its slot, *fresh when the slot was just given to it. */
uint32_t vt_ss_add(struct vt_ss *s, uint64_t key, uint64_t aux, uint64_t weight, bool *fresh);

/* The slot of (key, aux), VT_SS_NONE when it is not counted. */
uint32_t vt_ss_find(const struct vt_ss *s, uint64_t key, uint64_t aux);

/* Add weight to the count of the item in slot. */
void vt_ss_bump(struct vt_ss *s, uint32_t slot, uint64_t weight);

/* The smallest count when every counter is taken, else 0. */
uint64_t vt_ss_min(const struct vt_ss *s);

/*
 * Count (key, aux), not counted yet, as count with error err: in a free
 * slot, or in the smallest's, which is evicted.  Returns the slot.
 */
uint32_t vt_ss_put(struct vt_ss *s, uint64_t key, uint64_t aux, uint64_t count, uint64_t err);

#endif

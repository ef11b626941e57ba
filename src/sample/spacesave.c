/*
 * spacesave.c — space-saving counters (see spacesave.h).
 */
#include "sample/spacesave.h"

#include <stdlib.h>

#define K1 0xe7037ed1a0b428dbull

int vt_ss_init(struct vt_ss *s, uint32_t cap)
{
	uint32_t size = 16;

	while (size < 2 * cap)
		size <<= 1;
	s->cap = cap;
	s->used = 0;
	s->mask = size - 1;
	s->ent = calloc(cap, sizeof(*s->ent));
	s->heap = calloc(cap, sizeof(*s->heap));
	s->index = calloc(size, sizeof(*s->index));
	return s->ent && s->heap && s->index ? 0 : -1;
}

void vt_ss_release(struct vt_ss *s)
{
	free(s->ent);
	free(s->heap);
	free(s->index);
}

static inline uint32_t ss_home(const struct vt_ss *s, uint64_t key, uint64_t aux)
{
	uint64_t h = (key ^ (aux * K1)) * 0x9e3779b97f4a7c15ull;

	return (uint32_t)(h >> 32) & s->mask;
}

/* The index cell holding (key, aux), or the empty cell where it would go. */
static uint32_t *ss_cell(struct vt_ss *s, uint64_t key, uint64_t aux)
{
	uint32_t h = ss_home(s, key, aux);

	while (s->index[h]) {
		const struct vt_ss_entry *e = &s->ent[s->index[h] - 1];

		if (e->key == key && e->aux == aux)
			break;
		h = (h + 1) & s->mask;
	}
	return &s->index[h];
}

/* Empty an index cell, moving later entries of its probe chain back (no tombstones). */
static void ss_unindex(struct vt_ss *s, uint32_t *cell)
{
	uint32_t hole = (uint32_t)(cell - s->index), j = hole;

	for (;;) {
		const struct vt_ss_entry *e;

		j = (j + 1) & s->mask;
		if (!s->index[j])
			break;
		e = &s->ent[s->index[j] - 1];
		/* It may fill the hole unless its home lies after the hole, up to j. */
		if (((j - ss_home(s, e->key, e->aux)) & s->mask) >= ((j - hole) & s->mask)) {
			s->index[hole] = s->index[j];
			hole = j;
		}
	}
	s->index[hole] = 0;
}

static inline void heap_put(struct vt_ss *s, uint32_t i, uint32_t slot)
{
	s->heap[i] = slot;
	s->ent[slot].pos = i;
}

static void heap_down(struct vt_ss *s, uint32_t i)
{
	uint32_t slot = s->heap[i];
	uint64_t count = s->ent[slot].count;

	for (;;) {
		uint32_t m = 2 * i + 1;

		if (m >= s->used)
			break;
		if (m + 1 < s->used && s->ent[s->heap[m + 1]].count < s->ent[s->heap[m]].count)
			m++;
		if (s->ent[s->heap[m]].count >= count)
			break;
		heap_put(s, i, s->heap[m]);
		i = m;
	}
	heap_put(s, i, slot);
}

static void heap_up(struct vt_ss *s, uint32_t i)
{
	uint32_t slot = s->heap[i];
	uint64_t count = s->ent[slot].count;

	while (i > 0 && s->ent[s->heap[(i - 1) / 2]].count > count) {
		heap_put(s, i, s->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	heap_put(s, i, slot);
}

uint32_t vt_ss_add(struct vt_ss *s, uint64_t key, uint64_t aux, uint64_t weight, bool *fresh)
{
	uint32_t *cell = ss_cell(s, key, aux), slot;
	struct vt_ss_entry *e;
	uint64_t min;

	if (*cell) {
		slot = *cell - 1;
		s->ent[slot].count += weight;
		heap_down(s, s->ent[slot].pos);
		*fresh = false;
		return slot;
	}
	*fresh = true;
	if (s->used < s->cap) {
		slot = s->used++;
		*cell = slot + 1;
		s->ent[slot] = (struct vt_ss_entry){ .key = key, .aux = aux, .count = weight };
		heap_put(s, slot, slot);
		heap_up(s, slot);
		return slot;
	}
	slot = s->heap[0];
	e = &s->ent[slot];
	min = e->count;
	ss_unindex(s, ss_cell(s, e->key, e->aux));
	*e = (struct vt_ss_entry){ .key = key, .aux = aux, .count = min + weight, .err = min };
	*ss_cell(s, key, aux) = slot + 1;   /* looked up again: the removal may have moved cells */
	heap_down(s, 0);
	return slot;
}


uint32_t vt_ss_find(const struct vt_ss *s, uint64_t key, uint64_t aux)
{
	uint32_t h = ss_home(s, key, aux);

	while (s->index[h]) {
		const struct vt_ss_entry *e = &s->ent[s->index[h] - 1];

		if (e->key == key && e->aux == aux)
			return s->index[h] - 1;
		h = (h + 1) & s->mask;
	}
	return VT_SS_NONE;
}

void vt_ss_bump(struct vt_ss *s, uint32_t slot, uint64_t weight)
{
	s->ent[slot].count += weight;
	heap_down(s, s->ent[slot].pos);
}

uint64_t vt_ss_min(const struct vt_ss *s)
{
	return s->used == s->cap ? s->ent[s->heap[0]].count : 0;
}

uint32_t vt_ss_put(struct vt_ss *s, uint64_t key, uint64_t aux, uint64_t count, uint64_t err)
{
	uint32_t slot;

	if (s->used < s->cap) {
		slot = s->used++;
		*ss_cell(s, key, aux) = slot + 1;
		s->ent[slot] = (struct vt_ss_entry){ .key = key, .aux = aux, .count = count, .err = err };
		heap_put(s, slot, slot);
		heap_up(s, slot);
		return slot;
	}
	slot = s->heap[0];
	ss_unindex(s, ss_cell(s, s->ent[slot].key, s->ent[slot].aux));
	s->ent[slot] = (struct vt_ss_entry){ .key = key, .aux = aux, .count = count, .err = err };
	*ss_cell(s, key, aux) = slot + 1;
	heap_down(s, 0);
	heap_up(s, s->ent[slot].pos);
	return slot;
}

/*
 * churn.h — steady background malloc/free traffic for the targets whose
 * phenomenon sits on top of it (slow_leak, step_growth).
 *
 * Each of `threads` churners holds about bytes/threads in blocks of 64 B to
 * 16 KiB and replaces random ones at per_s allocations a second in all,
 * waking every CHURN_TICK_NS.  churn_start() returns once every churner has
 * filled its live set, so the phenomenon starts on a steady heap;
 * live_bytes is the exact sum of the sizes the churners hold.
 *
 * Header-only like common.h (each target is one translation unit).
 */
#ifndef TARGETS_CHURN_H
#define TARGETS_CHURN_H

#include <stdatomic.h>
#include <stdint.h>

#include "common.h"

#define CHURN_TICK_NS	10000000L	/* threads wake every 10 ms */

struct churner {
	pthread_t thread;
	uint64_t rng;
	void **slot;		/* blocks held, random replacement */
	size_t *slot_size;
	size_t nslots;
	struct churn *owner;
};

struct churn {
	int threads;
	size_t bytes;			/* live set, all churners */
	double per_s;			/* allocations per second, all churners */
	struct churner *c;
	pthread_barrier_t ready;	/* churners filled, main may go on */
	atomic_int stop;
	_Atomic uint64_t live_bytes;
};

static inline void churn_tick_sleep(void)
{
	struct timespec tick = { 0, CHURN_TICK_NS };
	int rc = clock_nanosleep(CLOCK_MONOTONIC, 0, &tick, NULL);

	if (rc && rc != EINTR)
		check(rc, "clock_nanosleep");
}

static inline uint64_t churn_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

/* malloc and touch every byte, so the block is resident. */
static inline void *alloc_filled(size_t size, int fill)
{
	void *p = malloc(size);

	if (!p)
		die("malloc");
	memset(p, fill, size);
	return p;
}

static inline void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p)
		die("calloc");
	return p;
}

/* Replace one random held block by a new one of 64 B .. 16 KiB. */
static inline void churn_one(struct churner *c)
{
	size_t i = churn_rand(&c->rng) % c->nslots;
	size_t size = 64 + churn_rand(&c->rng) % (16 << 10);

	free(c->slot[i]);
	atomic_fetch_sub(&c->owner->live_bytes, c->slot_size[i]);
	c->slot[i] = alloc_filled(size, 0x43);
	c->slot_size[i] = size;
	atomic_fetch_add(&c->owner->live_bytes, size);
}

/* Fill every slot first, so that the churn's live set starts steady. */
static inline void churn_fill(struct churner *c)
{
	size_t i;

	for (i = 0; i < c->nslots; i++) {
		c->slot_size[i] = 64 + churn_rand(&c->rng) % (16 << 10);
		c->slot[i] = alloc_filled(c->slot_size[i], 0x43);
		atomic_fetch_add(&c->owner->live_bytes, c->slot_size[i]);
	}
}

static inline void churn_barrier(struct churn *ch)
{
	int rc = pthread_barrier_wait(&ch->ready);

	if (rc && rc != PTHREAD_BARRIER_SERIAL_THREAD)
		check(rc, "pthread_barrier_wait");
}

static inline void *churner_main(void *arg)
{
	struct churner *c = arg;
	struct churn *ch = c->owner;
	double per_tick = ch->per_s / ch->threads * CHURN_TICK_NS / 1e9;
	double credit = 0;

	churn_fill(c);
	churn_barrier(ch);
	while (!atomic_load(&ch->stop)) {
		for (credit += per_tick; credit >= 1; credit--)
			churn_one(c);
		churn_tick_sleep();
	}
	return NULL;
}

/* Start the churners and wait until their live sets are in place. */
static inline void churn_start(struct churn *ch)
{
	/* Mean block is about 8 KiB. */
	size_t nslots = ch->bytes / ch->threads / (8 << 10) + 1;
	int i;

	check(pthread_barrier_init(&ch->ready, NULL, ch->threads + 1), "pthread_barrier_init");
	ch->c = xcalloc(ch->threads, sizeof(*ch->c));
	for (i = 0; i < ch->threads; i++) {
		struct churner *c = &ch->c[i];

		c->owner = ch;
		c->rng = 0x9e3779b97f4a7c15ULL * (i + 1);
		c->nslots = nslots;
		c->slot = xcalloc(nslots, sizeof(*c->slot));
		c->slot_size = xcalloc(nslots, sizeof(*c->slot_size));
		start_thread(&c->thread, NULL, churner_main, c, "churn", i);
	}
	churn_barrier(ch);
}

static inline void churn_stop(struct churn *ch)
{
	int i;

	atomic_store(&ch->stop, 1);
	for (i = 0; i < ch->threads; i++)
		check(pthread_join(ch->c[i].thread, NULL), "pthread_join");
}

/* After churn_stop: free what the churners held. */
static inline void churn_free(struct churn *ch)
{
	int i;

	for (i = 0; i < ch->threads; i++) {
		struct churner *c = &ch->c[i];
		size_t j;

		for (j = 0; j < c->nslots; j++)
			free(c->slot[j]);
		free(c->slot);
		free(c->slot_size);
	}
	free(ch->c);
	check(pthread_barrier_destroy(&ch->ready), "pthread_barrier_destroy");
}

#endif

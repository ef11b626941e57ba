/*
 * exp_pools.c — threads grouped into pools by name, and the per-thread
 * bookkeeping that keeps the exporter's CPU and context-switch counters
 * from falling when a thread exits or is renamed (see exp_internal.h).
 */
#include "serve/exp_internal.h"

#include "analyze/rates.h"
#include "base/unknown.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_separator(char c)
{
	return c == '-' || c == '_' || c == '.' || c == ':' || c == '/' || c == ' ' || c == '#';
}

void exp_pool_name(const char *comm, char *out, size_t cap)
{
	/* the pool key of `vitals threads` (trailing digits), then the separator before them */
	size_t len = vt_threads_pool_key_len(comm);

	while (len > 0 && is_separator(comm[len - 1]))
		len--;
	if (len == 0)                       /* nothing but digits and separators: the name itself */
		len = strlen(comm);
	if (len >= cap)
		len = cap - 1;
	memcpy(out, comm, len);
	out[len] = '\0';
}

int exp_pool_index(struct exp_target *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->npools && i < EXP_MAX_POOLS; i++)
		if (!strcmp(t->pools[i].name, name))
			return (int)i;
	if (t->npools < EXP_MAX_POOLS) {
		struct exp_pool *p = &t->pools[t->npools];

		memset(p, 0, sizeof(*p));
		snprintf(p->name, sizeof(p->name), "%s", name);
		return (int)t->npools++;
	}
	if (t->npools == EXP_MAX_POOLS) {
		memset(&t->pools[EXP_MAX_POOLS], 0, sizeof(t->pools[0]));
		snprintf(t->pools[EXP_MAX_POOLS].name, sizeof(t->pools[0].name), "other");
		t->npools++;
	}
	return EXP_MAX_POOLS;
}

/* What a thread leaves behind when it stops counting in its pool. */
static void thread_leaves_pool(struct exp_target *t, const struct exp_thread *th)
{
	struct exp_pool *pool = &t->pools[th->pool];

	pool->gone_utime += th->utime - th->off_utime;
	pool->gone_stime += th->stime - th->off_stime;
}

static void thread_retire(struct exp_target *t, struct exp_proc *p, const struct exp_thread *th)
{
	int k;

	thread_leaves_pool(t, th);
	for (k = 0; k < VT_TC_COUNT; k++)
		p->gone_counter[k] += th->counter[k];
}

int exp_threads_update(struct exp_target *t, struct exp_proc *p, const struct vt_thread_counts *rows,
		       size_t n, struct vt_err *err)
{
	struct exp_thread *next = calloc(n ? n : 1, sizeof(*next));
	uint64_t counter[VT_TC_COUNT];
	size_t i, j = 0;
	char name[64];
	int k;

	if (!next)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		const struct vt_thread_counts *r = &rows[i];
		struct exp_thread *th = &next[i];
		int pool;

		/* both lists are in tid order: the old ones before r are gone */
		while (j < p->nthreads && p->threads[j].tid < r->tid)
			thread_retire(t, p, &p->threads[j++]);
		if (j < p->nthreads && p->threads[j].tid == r->tid && p->threads[j].start_ticks == r->start_ticks) {
			*th = p->threads[j++];
		} else {
			if (j < p->nthreads && p->threads[j].tid == r->tid)
				thread_retire(t, p, &p->threads[j++]);   /* the tid was reused */
			th->tid = r->tid;
			th->start_ticks = r->start_ticks;
			th->pool = -1;
		}
		/* a counter that went back (a torn read) is not taken */
		if (r->utime_ticks >= th->utime)
			th->utime = r->utime_ticks;
		if (r->stime_ticks >= th->stime)
			th->stime = r->stime_ticks;
		vt_thread_counters_of(r, p->clk_tck, counter);
		for (k = 0; k < VT_TC_COUNT; k++)
			if (vt_known(counter[k]) && counter[k] >= th->counter[k])
				th->counter[k] = counter[k];
		exp_pool_name(r->comm, name, sizeof(name));
		pool = th->pool;
		if (pool < 0 || strcmp(t->pools[pool].name, name) != 0) {
			int to = exp_pool_index(t, name);

			if (pool >= 0 && to != pool) {
				/* renamed: what it ran so far stays with the old pool */
				thread_leaves_pool(t, th);
				th->off_utime = th->utime;
				th->off_stime = th->stime;
			} else if (pool < 0) {
				/* new: its whole CPU counts in its pool (it ran only there) */
				th->off_utime = th->off_stime = 0;
			}
			th->pool = to;
		}
	}
	while (j < p->nthreads)
		thread_retire(t, p, &p->threads[j++]);
	free(p->threads);
	p->threads = next;
	p->nthreads = n;
	return VT_OK;
}

void exp_threads_retire(struct exp_target *t, struct exp_proc *p)
{
	size_t i;
	int k;

	for (i = 0; i < p->nthreads; i++)
		thread_retire(t, p, &p->threads[i]);
	p->nthreads = 0;
	if (p->clk_tck > 0) {
		t->gone_user_s += (double)p->utime / (double)p->clk_tck;
		t->gone_sys_s += (double)p->stime / (double)p->clk_tck;
	}
	for (k = 0; k < VT_TC_COUNT; k++) {
		t->gone_counter[k] += p->gone_counter[k];
		p->gone_counter[k] = 0;
	}
	p->utime = p->stime = 0;
}

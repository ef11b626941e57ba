/*
 * exp_proc.c — one process of a target, read at each scrape as cheaply as
 * the figures allow, through its watch (sample/watch.h, the soak's reader
 * too):
 *   every scrape   process and thread stat (the watch's thread watch, with
 *                  status for context switches every scrape up to
 *                  EXP_CSW_MANY_THREADS threads, every EXP_CSW_EVERY-th
 *                  above), its status, the count of its fds, the accept
 *                  queues of the sockets it listens on;
 *   on change      maps and the arena classification, when VmSize moved;
 *   slowly         which of its fds are sockets, and its limits, every
 *                  EXP_SLOW_EVERY_S; the allocator's figures every
 *                  heap_every_s, with the watch's one refusal policy; the
 *                  free walk (glibc) at the watch's cadence, within its
 *                  CPU budget.
 */
#include "serve/exp_internal.h"

#include "alloc/regions.h"
#include "base/clock.h"
#include "base/unknown.h"
#include "proc/mem.h"
#include "sample/target.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int exp_proc_open(struct vt_exporter *x, pid_t pid, struct exp_proc **out, struct vt_err *err)
{
	struct exp_proc *p = calloc(1, sizeof(*p));
	struct vt_watch_opts wo = { .sockets_every_s = EXP_SLOW_EVERY_S, .heap_every_s = x->heap_every_s,
				    .heap_ptrace = x->heap_ptrace, .free_every_s = x->free_every_s,
				    .free_budget = x->free_budget };
	struct vt_thread_watch *tw;
	struct vt_proc_stat st;
	int rc;

	*out = NULL;
	if (!p)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
	p->pid = pid;
	p->maps_vmsize = VT_NA;
	p->arenas = p->heaps_64m = NAN;
	p->open_fds = p->max_fds = NAN;
	p->heap = (struct vt_alloc_summary){ NAN, NAN, NAN, NAN };
	p->redetect_left = EXP_REDETECT;
	if ((rc = vt_watch_open(x->pfs, pid, &wo, &p->watch, &st, &p->st, err)) != VT_OK ||
	    (rc = vt_watch_threads(p->watch, &tw, err)) != VT_OK)
		goto fail;
	p->start_ticks = st.start_ticks;
	snprintf(p->comm, sizeof(p->comm), "%s", st.comm);
	*out = p;
	return VT_OK;
fail:
	exp_proc_close(p);
	return rc == VT_E_GONE ? VT_E_NOPROC : rc;
}

void exp_proc_close(struct exp_proc *p)
{
	if (!p)
		return;
	vt_watch_close(p->watch);
	free(p->threads);
	free(p);
}

/* "Max open files            1024                 1048576              files" */
static double max_open_files(const char *text)
{
	const char *line = strstr(text, "\nMax open files");
	char soft[32];

	if (!line || sscanf(line + 15, " %31s", soft) != 1 || !strcmp(soft, "unlimited"))
		return NAN;
	return strtod(soft, NULL);
}

/* Its fd limit: it seldom changes. */
static void read_limits(struct vt_exporter *x, struct exp_proc *p, double now)
{
	if (now < p->next_limits)
		return;
	p->next_limits = now + EXP_SLOW_EVERY_S;
	if (vt_read_at(vt_watch_dirfd(p->watch), "limits", &x->buf, NULL) == VT_OK)
		p->max_fds = max_open_files(x->buf.data);
}

/* Its open fds, and the accept queues of the sockets it listens on (what a failed read leaves out is
 * simply not exported). */
static void read_fds(struct exp_proc *p, double now)
{
	size_t nfds, dropped;
	const char *via;
	int rc = vt_watch_fds(p->watch, now, &nfds, NULL);

	p->unread[EXP_PART_FDS] = rc == VT_OK || rc == VT_E_GONE ? NULL : exp_reason(rc);
	if (rc == VT_OK)
		p->open_fds = (double)nfds;
	if (vt_watch_listen(p->watch, now, p->listen, EXP_MAX_LISTEN, &p->nlisten, &dropped, &via, NULL) != VT_OK)
		p->nlisten = 0;
}

static int mem_reader(void *ctx, uint64_t addr, void *out, size_t len)
{
	return vt_mem_read(*(pid_t *)ctx, addr, out, len, NULL);
}

/* Arenas and 64 MiB heaps from maps, when the address space changed since they were counted. */
static void read_maps(struct vt_exporter *x, struct exp_proc *p)
{
	struct vt_region_list maps = { 0 };
	struct vt_classify_ctx ctx = { 0 };
	struct vt_arena_summary arenas;
	bool detect = p->alloc.kind == VT_ALLOC_UNKNOWN && p->redetect_left > 0;
	int rc;

	if (!vt_known(p->st.vm_size) || (p->st.vm_size == p->maps_vmsize && !detect))
		return;
	if (detect) {
		p->redetect_left--;
		rc = vt_target_allocator(x->pfs, vt_watch_dirfd(p->watch), p->pid, (long)p->st.uid_real, &x->buf, &maps, &p->alloc,
					 NULL);
	} else {
		rc = vt_read_at(vt_watch_dirfd(p->watch), "maps", &x->buf, NULL);
		if (rc == VT_OK)
			rc = vt_maps_parse(x->buf.data, x->buf.len, &maps, NULL);
	}
	p->unread[EXP_PART_MAPS] = rc == VT_OK || rc == VT_E_GONE ? NULL : exp_reason(rc);
	if (rc != VT_OK) {
		vt_region_list_release(&maps);
		p->maps_vmsize = p->st.vm_size;   /* refused: not again until it changes */
		return;
	}
	ctx.alloc = p->alloc.kind;
	if (x->pfs->live) {
		ctx.read_mem = mem_reader;
		ctx.read_ctx = &p->pid;
	}
	vt_regions_classify(&maps, &ctx, &arenas);
	vt_region_list_release(&maps);
	p->maps_vmsize = p->st.vm_size;
	p->heaps_64m = arenas.heaps;
	p->arenas = p->alloc.kind == VT_ALLOC_GLIBC && arenas.arenas >= 0 ? arenas.arenas + 1.0 : NAN;
}

static void read_heap(struct vt_exporter *x, struct exp_proc *p, double now)
{
	struct vt_heap_sample h;
	struct vt_err e;
	bool taken;

	if (vt_watch_heap(p->watch, now, p->alloc.kind, &h, &taken, &e) != VT_OK) {
		/* without --heap-ptrace, no agent is no refusal: heap_source_info says none */
		if (x->heap_ptrace)
			p->unread[EXP_PART_HEAP] = exp_reason(e.code);
		return;
	}
	if (!taken)
		return;
	p->unread[EXP_PART_HEAP] = NULL;
	p->heap_have = true;
	p->heap_at = vt_mono_s();
	p->heap_method = h.method;
	p->heap = h.sum;
	vt_heap_release(&h);
}

/*
 * Free memory on resident pages, when a walk is due (the watch's cadence:
 * at most every free_every_s, within free_budget of a core).  A walk that
 * gives no figure keeps the last one (its age says how old); a lasting
 * refusal other than "not glibc" is a part not read.
 */
static void read_free(struct exp_proc *p, double now)
{
	struct vt_free_figures f;
	struct vt_err e;
	bool taken;
	int rc = vt_watch_free(p->watch, now, &p->alloc, &f, &taken, &e);

	if (rc == VT_OK && taken) {
		p->free_have = true;
		p->free_at = now;
		p->free_resident = f.free_resident;
		p->trimmable = f.trimmable;
		p->unread[EXP_PART_FREE] = NULL;
	} else if (rc != VT_OK && rc != VT_E_GONE && rc != VT_E_BUSY &&
		   !(rc == VT_E_UNSUPPORTED && p->alloc.kind != VT_ALLOC_GLIBC)) {
		p->unread[EXP_PART_FREE] = exp_reason(rc);
	}
}

int exp_proc_read(struct vt_exporter *x, struct exp_target *t, struct exp_proc *p, double now,
		  struct vt_err *err)
{
	bool csw = p->reads == 0 || p->nthreads <= EXP_CSW_MANY_THREADS || p->reads % EXP_CSW_EVERY == 0;
	const struct vt_thread_watch_proc *proc;
	const struct vt_thread_counts *rows;
	struct vt_thread_watch *tw;
	size_t n, i;
	int rc;

	p->read_now = true;
	if ((rc = vt_watch_threads(p->watch, &tw, err)) != VT_OK)
		return rc;     /* opened with the process: cannot fail here */
	rc = vt_thread_watch_read(tw, csw ? VT_TW_CSW : 0, err);
	if (rc == VT_E_GONE || rc == VT_E_NOMEM)
		return rc;
	if (rc != VT_OK && vt_thread_watch_process(tw)->pid == 0)
		return VT_E_GONE;      /* not even the process stat was read, ever */
	p->reads++;
	proc = vt_thread_watch_process(tw);
	if (proc->state == 'Z' || proc->state == 'X')
		return vt_err_set(err, VT_E_GONE, 0, "process %d is a zombie", (int)p->pid);
	snprintf(p->comm, sizeof(p->comm), "%s", proc->comm);
	if (proc->utime_ticks >= p->utime)
		p->utime = proc->utime_ticks;
	if (proc->stime_ticks >= p->stime)
		p->stime = proc->stime_ticks;
	p->clk_tck = proc->clk_tck;
	rows = vt_thread_watch_rows(tw, &n);
	memset(&p->states, 0, sizeof(p->states));
	for (i = 0; i < n; i++)
		vt_thread_states_count(&p->states, rows[i].state);
	if ((rc = exp_threads_update(t, p, rows, n, err)) != VT_OK)
		return rc;

	if ((rc = vt_watch_status(p->watch, &p->st, err)) == VT_E_GONE)
		return rc;
	read_limits(x, p, now);
	read_fds(p, now);
	read_maps(x, p);
	read_heap(x, p, now);
	read_free(p, now);
	return VT_OK;
}

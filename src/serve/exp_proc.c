/*
 * exp_proc.c — one process of a target, read at each scrape as cheaply as
 * the figures allow (see exp_internal.h):
 *   every scrape   process and thread stat (held-open thread watch, with
 *                  status for context switches every scrape up to
 *                  EXP_CSW_MANY_THREADS threads, every EXP_CSW_EVERY-th
 *                  above), its status (held open, pread), the count of its
 *                  fds, the accept queues of the sockets it listens on;
 *   on change      maps and the arena classification, when VmSize moved;
 *   slowly         which of its fds are listening sockets, and its limits,
 *                  every EXP_SLOW_EVERY_S; the allocator's figures every
 *                  heap_every_s, and never again once a refusal lasts
 *                  (vt_heap_refusal_lasts: the soak's policy too).
 */
#include "serve/exp_internal.h"

#include "alloc/regions.h"
#include "base/clock.h"
#include "base/unknown.h"
#include "proc/mem.h"
#include "sample/target.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int exp_proc_open(struct vt_exporter *x, pid_t pid, struct exp_proc **out, struct vt_err *err)
{
	struct exp_proc *p = calloc(1, sizeof(*p));
	struct vt_proc_stat st;
	int rc;

	*out = NULL;
	if (!p)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
	p->pid = pid;
	p->dirfd = p->status_fd = -1;
	p->maps_vmsize = VT_NA;
	p->arenas = p->heaps_64m = NAN;
	p->open_fds = p->max_fds = NAN;
	p->heap = (struct vt_alloc_summary){ NAN, NAN, NAN, NAN };
	p->redetect_left = EXP_REDETECT;
	if ((rc = vt_pid_open(x->pfs, pid, &p->dirfd, err)) != VT_OK)
		goto fail;
	if ((rc = vt_target_check(p->dirfd, pid, &x->buf, &st, &p->st, err)) != VT_OK)
		goto fail;
	p->start_ticks = st.start_ticks;
	snprintf(p->comm, sizeof(p->comm), "%s", st.comm);
	p->status_fd = openat(p->dirfd, "status", O_RDONLY | O_CLOEXEC);
	if (p->status_fd < 0) {
		rc = vt_err_set(err, vt_code_from_errno(errno), errno, "cannot open status of %d", (int)pid);
		goto fail;
	}
	if ((rc = vt_thread_watch_open(x->pfs, p->dirfd, pid, &p->watch, err)) != VT_OK)
		goto fail;
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
	vt_thread_watch_close(p->watch);
	if (p->status_fd >= 0)
		close(p->status_fd);
	if (p->dirfd >= 0)
		close(p->dirfd);
	free(p->threads);
	free(p->sock_inodes);
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

/* Which fds are sockets, and the fd limit: they seldom change. */
static void read_slow(struct vt_exporter *x, struct exp_proc *p, double now)
{
	uint64_t *inodes;
	size_t n, nfds;
	struct vt_err e;
	int rc;

	p->next_slow = now + EXP_SLOW_EVERY_S;
	if (vt_read_at(p->dirfd, "limits", &x->buf, NULL) == VT_OK)
		p->max_fds = max_open_files(x->buf.data);
	rc = vt_proc_fds(p->dirfd, true, &inodes, &n, &nfds, &e);
	p->unread[EXP_PART_FDS] = rc == VT_OK || rc == VT_E_GONE ? NULL : exp_reason(rc);
	if (rc == VT_OK) {
		free(p->sock_inodes);
		p->sock_inodes = inodes;
		p->nsock_inodes = n;
		p->open_fds = (double)nfds;
		p->same_netns = x->pfs->live && vt_listen_same_netns(x->pfs->proc_fd, p->dirfd);
	}
}

/* The accept queues of the sockets it listened on at the last fd walk. */
static void read_listen(struct vt_exporter *x, struct exp_proc *p)
{
	size_t dropped = 0;
	const char *via;

	p->nlisten = 0;
	if (p->nsock_inodes == 0)
		return;
	/* what a failed read leaves out is simply not exported */
	vt_listen_read(p->dirfd, p->same_netns, p->sock_inodes, p->nsock_inodes, p->listen,
		       EXP_MAX_LISTEN, &p->nlisten, &dropped, &via, &x->buf, NULL);
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
		rc = vt_target_allocator(x->pfs, p->dirfd, p->pid, (long)p->st.uid_real, &x->buf, &maps, &p->alloc,
					 NULL);
	} else {
		rc = vt_read_at(p->dirfd, "maps", &x->buf, NULL);
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
	struct vt_heap_opts ho = { .no_ptrace = !x->heap_ptrace, .timeout_ms = 1000 };
	struct vt_heap_sample h;
	struct vt_err e;

	if (p->heap_off || now < p->next_heap || p->alloc.kind == VT_ALLOC_UNKNOWN)
		return;
	if (!x->pfs->live || (p->alloc.kind != VT_ALLOC_GLIBC && p->alloc.kind != VT_ALLOC_JEMALLOC)) {
		p->heap_off = true;     /* a recorded tree, or an allocator vitals does not read */
		return;
	}
	p->next_heap = now + x->heap_every_s;
	if (vt_heap_take(x->pfs, p->pid, &ho, &h, &e) != VT_OK) {
		/* no agent without ptrace, refused, or never for this process: lasting; the rest
		 * (no thread where a call is safe right now: VT_E_BUSY, a timeout) is tried at the
		 * next heap time, as the soak does */
		if (vt_heap_refusal_lasts(e.code, x->heap_ptrace))
			p->heap_off = true;
		/* without --heap-ptrace, no agent is no refusal: heap_source_info says none */
		if (x->heap_ptrace)
			p->unread[EXP_PART_HEAP] = exp_reason(e.code);
		return;
	}
	p->unread[EXP_PART_HEAP] = NULL;
	p->heap_have = true;
	p->heap_at = vt_mono_s();
	p->heap_method = h.method;
	p->heap = h.sum;
	vt_heap_release(&h);
}

int exp_proc_read(struct vt_exporter *x, struct exp_target *t, struct exp_proc *p, double now,
		  struct vt_err *err)
{
	bool csw = p->reads == 0 || p->nthreads <= EXP_CSW_MANY_THREADS || p->reads % EXP_CSW_EVERY == 0;
	const struct vt_thread_watch_proc *proc;
	const struct vt_thread_counts *rows;
	uint64_t *inodes;
	size_t n, i, ninodes, nfds;
	int rc;

	p->read_now = true;
	rc = vt_thread_watch_read(p->watch, csw ? VT_TW_CSW : 0, err);
	if (rc == VT_E_GONE || rc == VT_E_NOMEM)
		return rc;
	if (rc != VT_OK && vt_thread_watch_process(p->watch)->pid == 0)
		return VT_E_GONE;      /* not even the process stat was read, ever */
	p->reads++;
	proc = vt_thread_watch_process(p->watch);
	if (proc->state == 'Z' || proc->state == 'X')
		return vt_err_set(err, VT_E_GONE, 0, "process %d is a zombie", (int)p->pid);
	snprintf(p->comm, sizeof(p->comm), "%s", proc->comm);
	if (proc->utime_ticks >= p->utime)
		p->utime = proc->utime_ticks;
	if (proc->stime_ticks >= p->stime)
		p->stime = proc->stime_ticks;
	p->clk_tck = proc->clk_tck;
	rows = vt_thread_watch_rows(p->watch, &n);
	memset(&p->states, 0, sizeof(p->states));
	for (i = 0; i < n; i++)
		vt_thread_states_count(&p->states, rows[i].state);
	if ((rc = exp_threads_update(t, p, rows, n, csw, err)) != VT_OK)
		return rc;

	rc = vt_pread_fd(p->status_fd, "status", &x->buf, err);
	if (rc == VT_OK)
		rc = vt_proc_status_parse(x->buf.data, x->buf.len, &p->st, err);
	if (rc == VT_E_GONE)
		return rc;

	if (now >= p->next_slow) {
		read_slow(x, p, now);
	} else if (vt_proc_fds(p->dirfd, false, &inodes, &ninodes, &nfds, NULL) == VT_OK) {
		p->open_fds = (double)nfds;
	}
	read_listen(x, p);
	read_maps(x, p);
	read_heap(x, p, now);
	return VT_OK;
}

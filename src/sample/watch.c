/*
 * watch.c — one held-open reader of one process (see watch.h).
 */
#include "sample/watch.h"

#include "sample/sample.h"
#include "sample/target.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#define SOCKETS_EVERY_S_DEFAULT 10.0

struct vt_watch {
	const struct vt_procfs *pfs;
	pid_t pid;
	struct vt_watch_opts opts;
	int dirfd;                    /* /proc/PID, held */
	int status_fd;                /* /proc/PID/status, held once opened; -1 not yet */
	struct vt_thread_watch *threads;   /* NULL until asked */
	struct vt_buf buf;            /* scratch for reads */
	struct vt_maps_memo maps_memo;

	/* sockets: which fds are sockets, at the last walk */
	bool walked;                  /* a walk succeeded */
	double next_walk;             /* monotonic seconds; 0: at the first ask */
	uint64_t *sock_inodes;        /* sorted; owned */
	size_t nsock_inodes;
	bool same_netns;              /* in vitals's network namespace: sock_diag can answer */

	/* allocator */
	double next_heap;             /* 0: at the first ask with a known allocator */
	bool heap_off;                /* a lasting refusal, or nothing to read: never asked again */

	/* free memory on resident pages */
	struct vt_free_walk *free_walk;   /* opened at the first walk; NULL before */
	struct vt_free_cadence free_cadence;
	bool free_off;                /* a lasting refusal: never walked again */
};

int vt_watch_open(const struct vt_procfs *pfs, pid_t pid, const struct vt_watch_opts *opts,
		  struct vt_watch **out, struct vt_proc_stat *stat, struct vt_proc_status *status,
		  struct vt_err *err)
{
	struct vt_watch *w = calloc(1, sizeof(*w));
	struct vt_proc_stat st;
	struct vt_proc_status sts;
	int rc;

	*out = NULL;
	if (!w)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
	w->pfs = pfs;
	w->pid = pid;
	w->opts = *opts;
	if (w->opts.sockets_every_s <= 0)
		w->opts.sockets_every_s = SOCKETS_EVERY_S_DEFAULT;
	w->dirfd = w->status_fd = -1;
	vt_free_cadence_init(&w->free_cadence, w->opts.free_every_s, w->opts.free_budget);
	w->buf = (struct vt_buf)VT_BUF_INIT(VT_PROC_FILE_MAX);
	rc = vt_pid_open(pfs, pid, &w->dirfd, err);
	if (rc == VT_OK)
		rc = vt_target_check(w->dirfd, pid, &w->buf, &st, &sts, err);
	if (rc != VT_OK) {
		vt_watch_close(w);
		return rc;
	}
	if (stat)
		*stat = st;
	if (status)
		*status = sts;
	*out = w;
	return VT_OK;
}

void vt_watch_close(struct vt_watch *w)
{
	if (!w)
		return;
	vt_thread_watch_close(w->threads);
	vt_free_walk_close(w->free_walk);
	if (w->status_fd >= 0)
		close(w->status_fd);
	if (w->dirfd >= 0)
		close(w->dirfd);
	free(w->sock_inodes);
	vt_buf_release(&w->buf);
	free(w);
}

pid_t vt_watch_pid(const struct vt_watch *w)
{
	return w->pid;
}

const struct vt_procfs *vt_watch_procfs(const struct vt_watch *w)
{
	return w->pfs;
}

int vt_watch_dirfd(const struct vt_watch *w)
{
	return w->dirfd;
}

struct vt_maps_memo *vt_watch_maps_memo(struct vt_watch *w)
{
	return &w->maps_memo;
}

int vt_watch_status(struct vt_watch *w, struct vt_proc_status *st, struct vt_err *err)
{
	int rc;

	if (w->status_fd < 0) {
		w->status_fd = openat(w->dirfd, "status", O_RDONLY | O_CLOEXEC);
		if (w->status_fd < 0) {
			int e = errno;

			rc = e == ENOENT || e == ESRCH ? VT_E_GONE : vt_code_from_errno(e);
			return vt_err_set(err, rc, e, "cannot open status of %d", (int)w->pid);
		}
	}
	rc = vt_pread_fd(w->status_fd, "status", &w->buf, err);
	if (rc == VT_OK)
		rc = vt_proc_status_parse(w->buf.data, w->buf.len, st, err);
	return rc;
}

int vt_watch_threads(struct vt_watch *w, struct vt_thread_watch **tw, struct vt_err *err)
{
	int rc;

	*tw = NULL;
	if (!w->threads && (rc = vt_thread_watch_open(w->pfs, w->dirfd, w->pid, &w->threads, err)) != VT_OK)
		return rc;
	*tw = w->threads;
	return VT_OK;
}

/* Which fds are sockets, when the last walk is old enough; its count of fds too. */
static int walk_sockets(struct vt_watch *w, double now, size_t *nfds, bool *walked, struct vt_err *err)
{
	uint64_t *inodes;
	size_t n;
	int rc;

	*walked = false;
	if (w->next_walk > 0 && now < w->next_walk)
		return VT_OK;   /* walked, or refused, not long ago */
	w->next_walk = now + w->opts.sockets_every_s;
	rc = vt_proc_fds(w->dirfd, true, &inodes, &n, nfds, err);
	if (rc != VT_OK)
		return rc;
	free(w->sock_inodes);
	w->sock_inodes = inodes;
	w->nsock_inodes = n;
	w->same_netns = w->pfs->live && vt_listen_same_netns(w->pfs->proc_fd, w->dirfd);
	w->walked = *walked = true;
	return VT_OK;
}

int vt_watch_fds(struct vt_watch *w, double now, size_t *nfds, struct vt_err *err)
{
	uint64_t *inodes;
	size_t n;
	bool walked;
	int rc = walk_sockets(w, now, nfds, &walked, err);

	if (rc != VT_OK || walked)
		return rc;
	return vt_proc_fds(w->dirfd, false, &inodes, &n, nfds, err);
}

int vt_watch_listen(struct vt_watch *w, double now, struct vt_listen_sock *out, size_t cap, size_t *n,
		    size_t *dropped, const char **via, struct vt_err *err)
{
	size_t nfds;
	bool walked;
	int rc = walk_sockets(w, now, &nfds, &walked, err);

	*n = *dropped = 0;
	*via = NULL;
	if (!w->walked)
		return rc;
	if (!w->nsock_inodes)
		return VT_OK;
	return vt_listen_read(w->dirfd, w->same_netns, w->sock_inodes, w->nsock_inodes, out, cap, n, dropped,
			      via, &w->buf, err);
}

int vt_watch_heap(struct vt_watch *w, double now, enum vt_alloc_kind kind, struct vt_heap_sample *h,
		  bool *taken, struct vt_err *err)
{
	struct vt_heap_opts ho = { .no_ptrace = !w->opts.heap_ptrace, .timeout_ms = 1000 };
	int rc;

	*taken = false;
	/* not before the allocator is known: a process just started may not have mapped it */
	if (w->heap_off || w->opts.heap_every_s <= 0 || kind == VT_ALLOC_UNKNOWN || now < w->next_heap)
		return VT_OK;
	if (!w->pfs->live || !vt_heap_reads(kind)) {
		w->heap_off = true;     /* a recorded tree, or an allocator vitals does not read */
		return VT_OK;
	}
	w->next_heap = now + w->opts.heap_every_s;
	rc = vt_heap_take(w->pfs, w->pid, &ho, h, err);
	if (rc != VT_OK) {
		/* a lasting refusal stops the asking; "not right now" (VT_E_BUSY, a
		 * timeout) is tried again when it is due */
		if (vt_heap_refusal_lasts(rc, w->opts.heap_ptrace))
			w->heap_off = true;
		return rc;
	}
	*taken = true;
	return VT_OK;
}

bool vt_watch_heap_off(const struct vt_watch *w)
{
	return w->heap_off;
}

int vt_watch_free(struct vt_watch *w, double now, const struct vt_alloc_info *alloc, struct vt_free_figures *f,
		  bool *taken, struct vt_err *err)
{
	int rc;

	*taken = false;
	if (w->free_off || w->opts.free_every_s <= 0 || alloc->kind == VT_ALLOC_UNKNOWN ||
	    !vt_free_cadence_due(&w->free_cadence, now))
		return VT_OK;
	if (!w->free_walk &&
	    (rc = vt_free_walk_open(w->pfs, w->dirfd, w->pid, alloc, &w->free_walk, err)) != VT_OK) {
		if (rc != VT_E_NOMEM)
			w->free_off = true;
		return rc;
	}
	rc = vt_free_walk_take(w->free_walk, f, err);
	vt_free_cadence_done(&w->free_cadence, now, f->cpu_s);
	*taken = true;
	if (rc != VT_OK && vt_free_walk_refusal_lasts(rc))
		w->free_off = true;
	return rc;
}

bool vt_watch_free_off(const struct vt_watch *w)
{
	return w->free_off;
}

const struct vt_free_cadence *vt_watch_free_cadence(const struct vt_watch *w)
{
	return &w->free_cadence;
}

/*
 * arena_threads.c — the thread ↔ arena map of one process (see arena_threads.h).
 */
#include "sample/arena_threads.h"

#include "alloc/glibc.h"
#include "alloc/thread_arena.h"
#include "base/buf.h"
#include "base/tidlist.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define DENTS_BYTES 16384
#define MAIN_ARENA_TRIES 3       /* reads of a busy arena before main_arena is called not found */
#define RING_TRIES 3             /* reads of the ring before it is called torn */

void vt_arena_threads_release(struct vt_arena_threads *t)
{
	free(t->threads);
	free(t->arenas);
	free(t->ring);
	t->threads = NULL;
	t->arenas = NULL;
	t->ring = NULL;
	t->nthreads = t->narenas = t->on_arenas = t->later = 0;
	t->none = t->unknown = (struct vt_arena_users){ 0 };
}

void vt_arena_threads_not_known(struct vt_arena_threads *out, const char *fmt, ...)
{
	va_list ap;

	vt_arena_threads_release(out);
	out->known = false;
	va_start(ap, fmt);
	vsnprintf(out->why, sizeof(out->why), fmt, ap);
	va_end(ap);
}

/* task/TID/comm into comm (cap bytes), without its newline; "" when the thread is gone. */
static void thread_comm(int dirfd, pid_t tid, struct vt_buf *buf, char *comm, size_t cap)
{
	char path[48];
	size_t len;

	comm[0] = 0;
	snprintf(path, sizeof(path), "task/%d/comm", (int)tid);
	if (vt_read_at(dirfd, path, buf, NULL) != VT_OK)
		return;
	for (len = buf->len; len && buf->data[len - 1] == '\n'; len--)
		;
	snprintf(comm, cap, "%.*s", (int)len, buf->data);
}

/* The tids of task/, sorted, into *tids (owned by the caller). */
static int list_tids(int dirfd, pid_t pid, struct vt_tid_list *l, struct vt_err *err)
{
	char *dents = malloc(DENTS_BYTES);
	int fd = openat(dirfd, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc;

	if (fd < 0) {
		int e = errno;

		free(dents);
		return vt_err_set(err, vt_code_from_errno(e), e, "cannot open task/ of %d: %s", (int)pid,
				  strerror(e));
	}
	rc = dents ? vt_tid_list_read(fd, dents, DENTS_BYTES, pid, l, err)
		   : vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory listing threads");
	close(fd);
	free(dents);
	return rc;
}

/* Where a thread sorts: by its arena's index, then those not allocated yet, then the unknown. */
static long group_key(const struct vt_arena_thread *t)
{
	if (t->arena >= 0)
		return t->arena;
	return t->arena == VT_THREAD_ARENA_NONE ? (long)INT_MAX + 1 : (long)INT_MAX + 2;
}

static int cmp_thread(const void *a, const void *b)
{
	const struct vt_arena_thread *x = a, *y = b;
	long kx = group_key(x), ky = group_key(y);

	if (kx != ky)
		return kx < ky ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

/*
 * Sort t->threads by arena (then tid) and count them into arenas[narenas]
 * (the caller's, zeroed; taken over), none and unknown.  A thread whose
 * arena is past narenas counts as unknown.
 */
static void group(struct vt_arena_threads *t, struct vt_arena_users *arenas, size_t narenas)
{
	size_t i;

	for (i = 0; i < t->nthreads; i++)
		if (t->threads[i].arena >= 0 && (size_t)t->threads[i].arena >= narenas)
			t->threads[i].arena = VT_THREAD_ARENA_UNKNOWN;
	qsort(t->threads, t->nthreads, sizeof(*t->threads), cmp_thread);
	t->none = t->unknown = (struct vt_arena_users){ 0 };
	for (i = 0; i < narenas; i++)
		arenas[i].n = 0;
	for (i = t->nthreads; i-- > 0;) {
		const struct vt_arena_thread *x = &t->threads[i];
		struct vt_arena_users *u = x->arena >= 0 ? &arenas[x->arena]
				       : x->arena == VT_THREAD_ARENA_NONE ? &t->none : &t->unknown;

		u->first = i;      /* walking down: the last set is the first */
		u->n++;
	}
	for (i = 0; i < narenas; i++)
		if (!arenas[i].n)
			arenas[i].first = t->nthreads;
	free(t->arenas);
	t->arenas = arenas;
	t->narenas = narenas;
	t->on_arenas = t->nthreads - t->none.n - t->unknown.n;
}

int vt_arena_threads_read(int dirfd, pid_t pid, const struct vt_heap_mem *m, const struct vt_region_list *maps,
			  const uint64_t *arenas, size_t narenas, struct vt_arena_threads *out)
{
	struct vt_tid_list l = { 0 };
	struct vt_buf buf = VT_BUF_INIT(256);
	struct vt_arena_users *users = NULL;
	int *arena_of = NULL;
	struct vt_err err;
	size_t i;
	int rc;

	vt_arena_threads_release(out);
	out->known = false;
	out->why[0] = 0;
	vt_err_clear(&err);
	if (!narenas) {
		vt_arena_threads_not_known(out, "no arena to map the threads to");
		return VT_E_NOTFOUND;
	}
	if ((rc = list_tids(dirfd, pid, &l, &err))) {
		vt_arena_threads_not_known(out, "%s", err.msg);
		goto out;
	}
	arena_of = calloc(l.n ? l.n : 1, sizeof(*arena_of));
	users = calloc(narenas, sizeof(*users));
	out->threads = calloc(l.n ? l.n : 1, sizeof(*out->threads));
	out->ring = malloc(narenas * sizeof(*out->ring));
	if (!arena_of || !users || !out->threads || !out->ring) {
		vt_arena_threads_not_known(out, "out of memory");
		rc = VT_E_NOMEM;
		goto out;
	}
	if ((rc = vt_glibc_thread_arenas(m, maps, l.tids, l.n, arenas, narenas, arena_of, &err))) {
		vt_arena_threads_not_known(out, "%s", err.msg);
		goto out;
	}
	for (i = 0; i < l.n; i++) {
		struct vt_arena_thread *t = &out->threads[i];

		t->tid = l.tids[i];
		t->arena = arena_of[i];
		thread_comm(dirfd, l.tids[i], &buf, t->comm, sizeof(t->comm));
	}
	out->nthreads = l.n;
	memcpy(out->ring, arenas, narenas * sizeof(*out->ring));
	group(out, users, narenas);
	users = NULL;
	out->known = true;
out:
	free(users);
	free(arena_of);
	vt_tid_list_release(&l);
	vt_buf_release(&buf);
	return rc;
}

/* ---- a live process, through process_vm_readv ---- */

struct live_mem {
	pid_t pid;
	int last_errno;              /* of the last failed read */
};

static int live_read(void *ctx, uint64_t addr, void *out, size_t len)
{
	struct live_mem *lm = ctx;
	struct iovec local = { out, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t got = process_vm_readv(lm->pid, &local, 1, &remote, 1, 0);

	if (got == (ssize_t)len)
		return 0;
	lm->last_errno = got < 0 ? errno : EFAULT;
	return -1;
}

static void nap_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000L };

	nanosleep(&ts, NULL);
}

int vt_arena_threads_read_live(const struct vt_procfs *pfs, int dirfd, pid_t pid, const struct vt_region_list *maps,
			       struct vt_arena_threads *out)
{
	struct live_mem lm = { pid, 0 };
	const struct vt_heap_mem m = { live_read, NULL, &lm };
	uint64_t main_arena = 0, *ring = NULL;
	struct vt_err err;
	size_t n = 0;
	int rc, tries;

	vt_err_clear(&err);
	rc = vt_glibc_main_arena_locate(pfs, pid, maps, &m, MAIN_ARENA_TRIES, &main_arena, &err);
	if (rc == VT_E_IO && (lm.last_errno == EPERM || lm.last_errno == EACCES)) {
		vt_arena_threads_not_known(out, "reading process %d's memory was refused (process_vm_readv needs "
					   "ptrace access: the same user and kernel.yama.ptrace_scope 0, or "
					   "CAP_SYS_PTRACE)", (int)pid);
		return VT_E_PERM;
	}
	if (rc == VT_E_IO) {
		vt_arena_threads_not_known(out, "process %d's memory could not be read (%s)", (int)pid,
					   strerror(lm.last_errno ? lm.last_errno : EFAULT));
		return lm.last_errno == ESRCH ? VT_E_GONE : rc;
	}
	if (rc) {
		vt_arena_threads_not_known(out, "main_arena: %s", err.msg);
		return rc;
	}
	if (!(ring = malloc(VT_HEAP_ARENAS_MAX * sizeof(*ring)))) {
		vt_arena_threads_not_known(out, "out of memory");
		return VT_E_NOMEM;
	}
	for (tries = 1; !vt_glibc_arena_ring(&m, main_arena, ring, VT_HEAP_ARENAS_MAX, &n); tries++) {
		if (tries == RING_TRIES) {
			free(ring);
			vt_arena_threads_not_known(out, "the ring of arenas from main_arena did not read as malloc "
						   "arenas on %d reads", RING_TRIES);
			return VT_E_NOTFOUND;
		}
		nap_ms(2);
	}
	rc = vt_arena_threads_read(dirfd, pid, &m, maps, ring, n, out);
	free(ring);
	return rc;
}

int vt_arena_threads_ring_now(pid_t pid, struct vt_arena_threads *t)
{
	struct live_mem lm = { pid, 0 };
	const struct vt_heap_mem m = { live_read, NULL, &lm };
	struct vt_arena_users *users = NULL;
	uint64_t *ring = NULL;
	size_t n = 0, i, k;
	int tries;

	if (!t->known)
		return VT_E_NOTFOUND;
	ring = malloc(VT_HEAP_ARENAS_MAX * sizeof(*ring));
	if (!ring) {
		vt_arena_threads_not_known(t, "out of memory");
		return VT_E_NOMEM;
	}
	for (tries = 1; !vt_glibc_arena_ring(&m, t->ring[0], ring, VT_HEAP_ARENAS_MAX, &n); tries++) {
		if (tries == RING_TRIES) {
			free(ring);
			vt_arena_threads_not_known(t, "the ring of arenas could not be read again (%s)",
						   lm.last_errno ? strerror(lm.last_errno) : "it did not read as malloc arenas");
			return VT_E_NOTFOUND;
		}
		nap_ms(2);
	}
	if (!(users = calloc(n ? n : 1, sizeof(*users)))) {
		free(ring);
		vt_arena_threads_not_known(t, "out of memory");
		return VT_E_NOMEM;
	}
	/* each thread's arena by address: glibc never frees an arena, so each is still there */
	for (i = 0; i < t->nthreads; i++) {
		struct vt_arena_thread *x = &t->threads[i];
		uint64_t addr;

		if (x->arena < 0)
			continue;
		addr = t->ring[x->arena];
		x->arena = VT_THREAD_ARENA_UNKNOWN;
		for (k = 0; k < n; k++)
			if (ring[k] == addr)
				x->arena = (int)k;
	}
	t->later = 0;
	for (k = 0; k < n; k++) {
		users[k].later = true;
		for (i = 0; i < t->narenas; i++)
			if (t->ring[i] == ring[k])
				users[k].later = false;
		t->later += users[k].later;
	}
	free(t->ring);
	t->ring = ring;
	group(t, users, n);
	return VT_OK;
}

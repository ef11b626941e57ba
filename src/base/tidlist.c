/*
 * tidlist.c — numeric directory entries through a held fd (getdents64).
 */
#include "base/tidlist.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmp_tid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return (x > y) - (x < y);
}

static int push(struct vt_tid_list *l, pid_t tid, struct vt_err *err)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		pid_t *nt = realloc(l->tids, cap * sizeof(*nt));
		if (!nt)
			return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory listing threads");
		l->tids = nt;
		l->cap = cap;
	}
	l->tids[l->n++] = tid;
	return VT_OK;
}

int vt_tid_list_read(int dir_fd, char *dents, size_t dents_len, pid_t pid, struct vt_tid_list *l,
		     struct vt_err *err)
{
	bool sorted = true;
	int e;

	l->n = 0;
	if (lseek(dir_fd, 0, SEEK_SET) < 0) {
		e = errno;
		return vt_err_set(err, vt_code_from_errno(e), e, "cannot rewind task/ of %d: %s",
				  (int)pid, strerror(e));
	}
	for (;;) {
		ssize_t got = getdents64(dir_fd, dents, dents_len);
		if (got < 0) {
			e = errno;
			if (e == EINTR)
				continue;
			return vt_err_set(err, vt_code_from_errno(e), e, "cannot list task/ of %d: %s",
					  (int)pid, strerror(e));
		}
		if (got == 0)
			break;
		for (ssize_t off = 0; off < got;) {
			const struct dirent64 *d = (const struct dirent64 *)(void *)(dents + off);
			const char *p = d->d_name;
			long tid = 0;

			if (d->d_reclen == 0)
				break;
			off += d->d_reclen;
			if (*p < '1' || *p > '9')
				continue;     /* ".", "..", anything not a tid */
			while (*p >= '0' && *p <= '9' && tid < 1L << 31)
				tid = tid * 10 + (*p++ - '0');
			if (*p || tid >= 1L << 31)
				continue;
			if (l->n && l->tids[l->n - 1] >= (pid_t)tid)
				sorted = false;
			if (push(l, (pid_t)tid, err) != VT_OK)
				return VT_E_NOMEM;
		}
	}
	if (!sorted)
		qsort(l->tids, l->n, sizeof(*l->tids), cmp_tid);
	return VT_OK;
}

void vt_tid_list_release(struct vt_tid_list *l)
{
	free(l->tids);
	l->tids = NULL;
	l->n = l->cap = 0;
}

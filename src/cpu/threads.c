/*
 * threads.c — a sample of all threads of a process from a thread watch (see
 * threads.h).  Reads only /proc/uptime itself; the watch reads the rest.
 */
#include "cpu/threads.h"

#include "base/scan.h"
#include "cpu/syscall_names.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

uint64_t vt_threads_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

double vt_threads_uptime(const struct vt_procfs *pfs, struct vt_buf *buf)
{
	char text[64];
	double v;

	if (vt_procfs_read(pfs, "uptime", buf, NULL) != VT_OK)
		return 0;
	vt_copy_str(text, sizeof(text), buf->data, buf->len);
	v = strtod(text, NULL);
	return v > 0 ? v : 0;
}

/* Why a wchan or syscall read gave rc, for the column that shows it. */
static void unavailable(int rc, const char *access, char *why, size_t cap)
{
	if (rc == VT_TW_UNREAD)
		snprintf(why, cap, "not read");
	else if (rc == VT_E_PERM)
		snprintf(why, cap, "needs ptrace %s access", access);
	else if (rc == VT_E_NOTFOUND)
		snprintf(why, cap, "not in this kernel");
	else
		snprintf(why, cap, "%s", vt_code_str(rc));
}

static void snap_from_counts(const struct vt_thread_counts *c, struct vt_thread_snap *t)
{
	memset(t, 0, sizeof(*t));
	t->tid = c->tid;
	memcpy(t->comm, c->comm, sizeof(t->comm));
	t->state = c->state;
	t->utime_ticks = c->utime_ticks;
	t->stime_ticks = c->stime_ticks;
	t->start_ticks = c->start_ticks;
	t->processor = c->processor;
	t->run_ns = c->run_ns;
	t->wait_ns = c->wait_ns;
	t->ctxt_vol = c->vcsw;
	t->ctxt_nonvol = c->nvcsw;

	t->wchan_ok = c->wchan_rc == VT_OK;
	if (t->wchan_ok)
		snprintf(t->wchan, sizeof(t->wchan), "%s", c->wchan);
	else
		unavailable(c->wchan_rc, "read", t->wchan_why, sizeof(t->wchan_why));

	t->syscall_ok = c->syscall_rc == VT_OK;
	if (!t->syscall_ok)
		unavailable(c->syscall_rc, "attach", t->syscall_why, sizeof(t->syscall_why));
	else
		vt_syscall_label(c->syscall, t->syscall, sizeof(t->syscall));
}

int vt_threads_sample_from_watch(const struct vt_thread_watch *w, double uptime_s,
				 struct vt_threads_sample *out, struct vt_err *err)
{
	const struct vt_thread_watch_proc *p = vt_thread_watch_process(w);
	const struct vt_thread_counts *rows = vt_thread_watch_rows(w, &out->n);
	size_t i;

	out->threads = NULL;
	if (out->n == 0)
		return vt_err_set(err, VT_E_GONE, 0, "process %d has no thread left", (int)p->pid);
	out->pid = p->pid;
	memcpy(out->comm, p->comm, sizeof(out->comm));
	out->mono_ns = p->mono_ns;
	out->utime_ticks = p->utime_ticks;
	out->stime_ticks = p->stime_ticks;
	out->start_ticks = p->start_ticks;
	out->clk_tck = p->clk_tck > 0 ? p->clk_tck : 100;
	out->uptime_s = uptime_s;
	out->threads = calloc(out->n, sizeof(*out->threads));
	if (!out->threads) {
		out->n = 0;
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory sampling threads");
	}
	for (i = 0; i < out->n; i++)
		snap_from_counts(&rows[i], &out->threads[i]);
	return VT_OK;
}

int vt_threads_sample_take(struct vt_thread_watch *w, unsigned flags,
			   const struct vt_procfs *pfs, struct vt_buf *buf,
			   struct vt_threads_sample *out, struct vt_err *err)
{
	struct vt_thread_watch_stats before, after;
	struct vt_err rerr;
	int rc;

	memset(out, 0, sizeof(*out));
	vt_thread_watch_stats(w, &before);
	rc = vt_thread_watch_read(w, flags, &rerr);
	vt_thread_watch_stats(w, &after);
	/* A read that completed with one thread unreadable is still a sample. */
	if (rc != VT_OK && after.reads == before.reads) {
		if (err)
			*err = rerr;
		return rc;
	}
	return vt_threads_sample_from_watch(w, vt_threads_uptime(pfs, buf), out, err);
}

void vt_threads_sample_release(struct vt_threads_sample *s)
{
	if (!s)
		return;
	free(s->threads);
	s->threads = NULL;
	s->n = 0;
}

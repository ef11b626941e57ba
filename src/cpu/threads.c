/*
 * threads.c — read one sample of all threads of a process (see threads.h).
 *
 * Reads only; never stops or signals the target.  Every task file is read
 * through a directory fd of task/TID so a thread that exits mid-read fails
 * cleanly (ENOENT/ESRCH) and is skipped.
 */
#include "cpu/threads.h"

#include "base/scan.h"
#include "proc/schedstat.h"
#include "proc/stat.h"
#include "proc/status.h"
#include "proc/task.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

uint64_t vt_threads_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_tid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

static double read_uptime(const struct vt_procfs *pfs, struct vt_buf *buf)
{
	char text[64];
	double v;

	if (vt_procfs_read(pfs, "uptime", buf, NULL) != VT_OK)
		return 0;
	vt_copy_str(text, sizeof(text), buf->data, buf->len);
	v = strtod(text, NULL);
	return v > 0 ? v : 0;
}

static void read_wchan(int task_fd, struct vt_buf *buf, struct vt_thread_snap *t)
{
	struct vt_err e;
	const char *w;
	size_t len;
	struct vt_scan s;

	if (vt_read_at(task_fd, "wchan", buf, &e) != VT_OK) {
		t->wchan_ok = false;
		snprintf(t->wchan_why, sizeof(t->wchan_why), "%s",
			 e.code == VT_E_PERM ? "permission denied (ptrace access needed)"
			 : e.code == VT_E_NOTFOUND ? "no wchan file (kernel config)"
			 : vt_code_str(e.code));
		return;
	}
	t->wchan_ok = true;
	s = vt_scan_init(buf->data, buf->len);
	if (!vt_scan_word(&s, &w, &len) || (len == 1 && w[0] == '0'))
		len = 0;
	vt_copy_str(t->wchan, sizeof(t->wchan), len ? w : "", len);
}

/* VT_OK, or VT_E_GONE when the thread vanished (the caller skips it). */
static int read_thread(int pid_fd, pid_t tid, struct vt_buf *buf, struct vt_thread_snap *t,
		       struct vt_err *err)
{
	struct vt_proc_stat st;
	struct vt_proc_status status;
	struct vt_schedstat ss;
	char path[32];
	int fd, rc, e;

	memset(t, 0, sizeof(*t));
	snprintf(path, sizeof(path), "task/%d", (int)tid);
	fd = openat(pid_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		if (e == ENOENT || e == ESRCH)
			return VT_E_GONE;
		return vt_err_set(err, vt_code_from_errno(e), e, "cannot open '%s': %s", path,
				  strerror(e));
	}
	rc = vt_read_at(fd, "stat", buf, err);
	if (rc == VT_OK)
		rc = vt_proc_stat_parse(buf->data, buf->len, &st, err);
	if (rc != VT_OK)
		goto out;
	t->tid = tid;
	memcpy(t->comm, st.comm, sizeof(t->comm));
	t->state = st.state;
	t->utime_ticks = st.utime_ticks;
	t->stime_ticks = st.stime_ticks;
	t->start_ticks = st.start_ticks;
	t->processor = st.processor;

	t->ctxt_vol = t->ctxt_nonvol = VT_NA;
	rc = vt_read_at(fd, "status", buf, err);
	if (rc == VT_OK && vt_proc_status_parse(buf->data, buf->len, &status, NULL) == VT_OK) {
		t->ctxt_vol = status.ctxt_vol;
		t->ctxt_nonvol = status.ctxt_nonvol;
	}
	if (rc == VT_E_GONE)
		goto out;

	t->run_ns = t->wait_ns = VT_NA;
	rc = vt_read_at(fd, "schedstat", buf, err);
	if (rc == VT_OK && vt_schedstat_parse(buf->data, buf->len, &ss, NULL) == VT_OK) {
		t->run_ns = ss.run_ns;
		t->wait_ns = ss.wait_ns;
	}
	if (rc == VT_E_GONE)
		goto out;
	read_wchan(fd, buf, t);
	rc = VT_OK;
out:
	close(fd);
	/* A thread that is already exiting reads as gone, or its files as missing. */
	if (rc == VT_E_GONE || rc == VT_E_NOTFOUND || rc == VT_E_NOPROC)
		return VT_E_GONE;
	return rc;
}

int vt_threads_sample_take(const struct vt_procfs *pfs, int pid_fd, pid_t pid,
			   struct vt_buf *buf, struct vt_threads_sample *out,
			   struct vt_err *err)
{
	struct vt_proc_stat st;
	pid_t *tids = NULL;
	size_t ntids = 0, i;
	int rc;

	memset(out, 0, sizeof(*out));
	out->pid = pid;
	out->clk_tck = pfs->clk_tck > 0 ? pfs->clk_tck : 100;
	out->mono_ns = vt_threads_now_ns();
	rc = vt_read_at(pid_fd, "stat", buf, err);
	if (rc == VT_OK)
		rc = vt_proc_stat_parse(buf->data, buf->len, &st, err);
	if (rc != VT_OK)
		return rc;
	if (st.state == 'Z' || st.state == 'X')
		return vt_err_set(err, VT_E_GONE, 0, "process %d exited (it is a zombie now)", (int)pid);
	memcpy(out->comm, st.comm, sizeof(out->comm));
	out->utime_ticks = st.utime_ticks;
	out->stime_ticks = st.stime_ticks;
	out->start_ticks = st.start_ticks;
	out->uptime_s = read_uptime(pfs, buf);

	rc = vt_task_list(pid_fd, &tids, &ntids, err);
	if (rc != VT_OK)
		return rc;
	qsort(tids, ntids, sizeof(*tids), cmp_tid);
	out->threads = calloc(ntids ? ntids : 1, sizeof(*out->threads));
	if (!out->threads) {
		free(tids);
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory sampling threads");
	}
	for (i = 0; i < ntids; i++) {
		struct vt_err terr;

		rc = read_thread(pid_fd, tids[i], buf, &out->threads[out->n], &terr);
		if (rc == VT_E_GONE)
			continue;      /* exited between the listing and the read */
		if (rc != VT_OK) {
			if (err)
				*err = terr;
			free(tids);
			vt_threads_sample_release(out);
			return rc;
		}
		out->n++;
	}
	free(tids);
	if (out->n == 0) {
		vt_threads_sample_release(out);
		return vt_err_set(err, VT_E_GONE, 0, "process %d exited while being read", (int)pid);
	}
	return VT_OK;
}

void vt_threads_sample_release(struct vt_threads_sample *s)
{
	if (!s)
		return;
	free(s->threads);
	s->threads = NULL;
	s->n = 0;
}

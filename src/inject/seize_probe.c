/*
 * seize_probe.c — PTRACE_SEIZE from a short-lived thread (see seize_probe.h).
 */
#include "inject/seize_probe.h"
#include "inject/inject.h"
#include "proc/status.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct seize_job {
	pid_t tid;
	pid_t tracer;        /* the thread that seized */
	int err;
};

static void *seize_main(void *arg)
{
	struct seize_job *j = arg;

	j->tracer = (pid_t)syscall(SYS_gettid);
	/* No options: no PTRACE_O_EXITKILL, nothing traced, no stop asked for. */
	if (vt_inject_ptrace(PTRACE_SEIZE, j->tid, NULL, NULL) < 0)
		j->err = errno;
	/* Returning ends the thread: the kernel detaches tid. */
	return NULL;
}

/* TracerPid of task tid: -1 when it cannot be read. */
static long tracer_of(const struct vt_procfs *pfs, pid_t pid, pid_t tid)
{
	struct vt_buf buf = VT_BUF_INIT(64 * 1024);
	struct vt_proc_status st;
	char rel[64];
	long out = -1;

	snprintf(rel, sizeof(rel), "%d/task/%d/status", (int)pid, (int)tid);
	if (vt_procfs_read(pfs, rel, &buf, NULL) == VT_OK &&
	    vt_proc_status_parse(buf.data, buf.len, &st, NULL) == VT_OK)
		out = (long)st.tracer_pid;
	vt_buf_release(&buf);
	return out;
}

int vt_inject_seize_probe(const struct vt_procfs *pfs, pid_t pid, pid_t tid, bool *released)
{
	struct seize_job j = { tid, 0, 0 };
	sigset_t all, before;
	pthread_t th;
	int rc, i;

	*released = false;
	/* The thread takes no signal: created with all of them blocked. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &before);
	rc = pthread_create(&th, NULL, seize_main, &j);
	pthread_sigmask(SIG_SETMASK, &before, NULL);
	if (rc)
		return rc;
	pthread_join(th, NULL);
	if (j.err)
		return j.err;
	/* join returns as the thread's tid is cleared, a moment before the kernel detaches. */
	for (i = 0; i < 200; i++) {
		long t = tracer_of(pfs, pid, tid);
		if (t >= 0 && t != j.tracer) {
			*released = true;
			break;
		}
		nanosleep(&(struct timespec){ 0, 1000 * 1000 }, NULL);
	}
	return 0;
}

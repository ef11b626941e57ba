/*
 * test_lock_maps.c — a lock probe reads the process's maps once to place its
 * first locks: the text its unwinder read when the probe was opened serves
 * (sample/locks.c first_maps), and a fresh read is made only for an address
 * those maps do not hold.  On a process of thousands of mappings each read
 * of maps costs about a millisecond of `vitals threads`.
 *
 * This program is linked with -Wl,--wrap=openat (Makefile), so every
 * openat of libvitals.a is counted here; the target is this test process,
 * with threads waiting on a condition variable.
 */
#include "harness.h"

#include "proc/procfs.h"
#include "sample/locks.h"
#include "sample/thread_sampler.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#define WAITERS 3

static unsigned maps_opens;

int __real_openat(int dirfd, const char *path, int flags, ...);
int __wrap_openat(int dirfd, const char *path, int flags, ...);

int __wrap_openat(int dirfd, const char *path, int flags, ...)
{
	size_t len = strlen(path);
	mode_t mode = 0;
	va_list ap;

	va_start(ap, flags);
	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE)
		mode = (mode_t)va_arg(ap, int);
	va_end(ap);
	if (len >= 4 && !strcmp(path + len - 4, "maps") && (len == 4 || path[len - 5] == '/'))
		maps_opens++;
	return __real_openat(dirfd, path, flags, mode);
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int done;

static void *waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	while (!done)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	return NULL;
}

struct probe_run {
	struct vt_lock_probe *lp;
	struct vt_locks locks;
};

static int count_locks(void *ctx, const struct vt_threads_sample *s, struct vt_err *err)
{
	struct probe_run *run = ctx;

	return vt_lock_probe_sample(run->lp, s, &run->locks, err);
}

static void test_lock_maps__first_sample_reads_maps_once(void)
{
	struct probe_run run = { 0 };
	struct vt_sampler_hook hook = { count_locks, &run };
	struct vt_thread_sampler *s = NULL;
	struct vt_threads_interval iv;
	pthread_t th[WAITERS];
	struct vt_procfs pfs;
	struct vt_err err;
	unsigned before;
	size_t i, waits = 0;

	for (i = 0; i < WAITERS; i++)
		CHECK(pthread_create(&th[i], NULL, waiter, NULL) == 0);
	usleep(200000);     /* all asleep in pthread_cond_wait */
	CHECK(vt_procfs_open(&pfs, NULL, NULL, &err) == VT_OK);
	CHECK(vt_thread_sampler_open(&pfs, getpid(), NULL, &s, &err) == VT_OK);
	if (!s)
		return;
	before = maps_opens;
	CHECK(vt_lock_probe_open(&pfs, getpid(), vt_thread_sampler_dirfd(s), &run.lp, &err) == VT_OK);
	if (run.lp) {
		vt_thread_sampler_set_hook(s, &hook);
		CHECK(vt_thread_sampler_measure(s, 0.3, VT_TW_SYSCALL, &iv, &err) == VT_OK);
		for (i = 0; i < run.locks.n; i++)
			waits += run.locks.v[i].waits;
		printf("# %zu lock rows, %zu waits over %zu samples; maps opened %u times\n", run.locks.n, waits,
		       iv.n, maps_opens - before);
		CHECK(run.locks.n >= 1 && waits >= WAITERS);   /* the condition variable was placed */
		CHECK_EQ_U64(maps_opens - before, 1);          /* by the unwinder, at open */
	}
	vt_lock_probe_close(run.lp);
	vt_locks_release(&run.locks);
	vt_thread_sampler_close(s);
	vt_procfs_close(&pfs);
	pthread_mutex_lock(&mu);
	done = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	for (i = 0; i < WAITERS; i++)
		pthread_join(th[i], NULL);
}

VT_TEST_MAIN(test_lock_maps__first_sample_reads_maps_once)

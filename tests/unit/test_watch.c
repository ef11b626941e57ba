/*
 * test_watch.c — the held-open reader of a process (sample/watch.h), on
 * live processes: this test itself and children it controls.  Time is a
 * parameter of every read, so each schedule is checked without sleeping.
 */
#include "harness.h"

#include "base/error.h"
#include "proc/procfs.h"
#include "sample/sample.h"
#include "sample/watch.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static struct vt_procfs pfs;

static struct vt_watch *watch_self(const struct vt_watch_opts *wo)
{
	struct vt_watch *w = NULL;
	struct vt_err err;

	if (vt_procfs_open(&pfs, NULL, NULL, &err) != VT_OK)
		return NULL;
	if (vt_watch_open(&pfs, getpid(), wo, &w, NULL, NULL, &err) != VT_OK)
		printf("#   open: %s\n", err.msg);
	return w;
}

/* A listening TCP socket on 127.0.0.1 and a free port; its port in *port. */
static int listener(unsigned *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 8) ||
	    getsockname(fd, (struct sockaddr *)&a, &len))
		return -1;
	*port = ntohs(a.sin_port);
	return fd;
}

static int connect_to(unsigned port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
				 .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The queue of the listener on port among out[n], or -1 when it is not there. */
static long queue_of(const struct vt_listen_sock *out, size_t n, unsigned port)
{
	char want[16];
	size_t i, k;

	snprintf(want, sizeof(want), ":%u", port);
	for (i = 0; i < n; i++) {
		k = strlen(out[i].address);
		if (k >= strlen(want) && !strcmp(out[i].address + k - strlen(want), want))
			return (long)out[i].queue;
	}
	return -1;
}

/* Which fds are sockets is walked at the first ask, then only when due; queues at every ask. */
static void test_watch__sockets_walked_when_due(void)
{
	struct vt_watch_opts wo = { .sockets_every_s = 10 };
	struct vt_watch *w = watch_self(&wo);
	struct vt_listen_sock out[16];
	size_t n, dropped;
	const char *via;
	unsigned port;
	int lfd, cfd;

	CHECK(w != NULL);
	if (!w)
		return;
	CHECK_EQ_I64(vt_watch_listen(w, 100, out, 16, &n, &dropped, &via, NULL), VT_OK);
	lfd = listener(&port);
	CHECK(lfd >= 0);
	/* opened after the walk: not seen before the next one is due */
	CHECK_EQ_I64(vt_watch_listen(w, 109, out, 16, &n, &dropped, &via, NULL), VT_OK);
	CHECK_EQ_I64(queue_of(out, n, port), -1);
	CHECK_EQ_I64(vt_watch_listen(w, 110, out, 16, &n, &dropped, &via, NULL), VT_OK);
	CHECK_EQ_I64(queue_of(out, n, port), 0);
	CHECK(via != NULL);
	/* a connection not accepted yet is in its queue at the next ask, no walk needed */
	cfd = connect_to(port);
	CHECK(cfd >= 0);
	CHECK_EQ_I64(vt_watch_listen(w, 111, out, 16, &n, &dropped, &via, NULL), VT_OK);
	CHECK_EQ_I64(queue_of(out, n, port), 1);
	close(cfd);
	close(lfd);
	vt_watch_close(w);
	vt_procfs_close(&pfs);
}

/* The fds are counted at every ask, whatever the walk's schedule. */
static void test_watch__fds_counted_every_ask(void)
{
	struct vt_watch_opts wo = { .sockets_every_s = 1000 };
	struct vt_watch *w = watch_self(&wo);
	size_t before = 0, after = 0;
	int fd;

	CHECK(w != NULL);
	if (!w)
		return;
	CHECK_EQ_I64(vt_watch_fds(w, 1, &before, NULL), VT_OK);
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	CHECK_EQ_I64(vt_watch_fds(w, 2, &after, NULL), VT_OK);
	CHECK_EQ_U64(after, before + 1);
	close(fd);
	vt_watch_close(w);
	vt_procfs_close(&pfs);
}

/* Nothing is asked of an allocator not known yet, or of none vitals reads; off for good then. */
static void test_watch__heap_schedule(void)
{
	struct vt_watch_opts wo = { .heap_every_s = 60 };
	struct vt_watch *w = watch_self(&wo);
	struct vt_heap_sample h;
	bool taken = true;

	CHECK(w != NULL);
	if (!w)
		return;
	CHECK_EQ_I64(vt_watch_heap(w, 1, VT_ALLOC_UNKNOWN, &h, &taken, NULL), VT_OK);
	CHECK(!taken && !vt_watch_heap_off(w));
	CHECK_EQ_I64(vt_watch_heap(w, 2, VT_ALLOC_MUSL, &h, &taken, NULL), VT_OK);
	CHECK(!taken && vt_watch_heap_off(w));
	CHECK_EQ_I64(vt_watch_heap(w, 3, VT_ALLOC_GLIBC, &h, &taken, NULL), VT_OK);
	CHECK(!taken);
	vt_watch_close(w);
	vt_procfs_close(&pfs);

	/* heap_every_s 0: never asked, never off */
	wo.heap_every_s = 0;
	w = watch_self(&wo);
	CHECK(w != NULL);
	if (!w)
		return;
	CHECK_EQ_I64(vt_watch_heap(w, 1, VT_ALLOC_GLIBC, &h, &taken, NULL), VT_OK);
	CHECK(!taken && !vt_watch_heap_off(w));
	vt_watch_close(w);
	vt_procfs_close(&pfs);
}

/* Without ptrace and without an agent, glibc's figures are refused for good: asked once. */
static void test_watch__lasting_refusal_asked_once(void)
{
	struct vt_watch_opts wo = { .heap_every_s = 1, .heap_ptrace = false };
	struct vt_watch *w;
	struct vt_heap_sample h;
	struct vt_err err;
	bool taken = true;
	int rc;

	unsetenv("LD_PRELOAD");
	w = watch_self(&wo);
	CHECK(w != NULL);
	if (!w)
		return;
	rc = vt_watch_heap(w, 10, VT_ALLOC_GLIBC, &h, &taken, &err);
	CHECK(rc != VT_OK && !taken);
	CHECK(vt_watch_heap_off(w));
	/* due again, but off: no second try */
	CHECK_EQ_I64(vt_watch_heap(w, 20, VT_ALLOC_GLIBC, &h, &taken, &err), VT_OK);
	CHECK(!taken);
	vt_watch_close(w);
	vt_procfs_close(&pfs);
}

/* A process that exits is gone for every read through its watch, even once its pid is free again. */
static void test_watch__exited_is_gone(void)
{
	struct vt_watch_opts wo = { 0 };
	struct vt_watch *w = NULL;
	struct vt_proc_status st;
	struct vt_listen_sock out[4];
	struct vt_sample s;
	size_t n, dropped;
	const char *via;
	struct vt_err err;
	int pipefd[2];
	pid_t child;
	char c;

	CHECK(pipe(pipefd) == 0);
	child = fork();
	if (child == 0) {
		close(pipefd[1]);
		while (read(pipefd[0], &c, 1) < 0)
			;
		_exit(0);
	}
	close(pipefd[0]);
	CHECK_EQ_I64(vt_procfs_open(&pfs, NULL, NULL, &err), VT_OK);
	CHECK_EQ_I64(vt_watch_open(&pfs, child, &wo, &w, NULL, NULL, &err), VT_OK);
	CHECK_EQ_I64(vt_watch_status(w, &st, &err), VT_OK);
	close(pipefd[1]);
	CHECK(waitpid(child, NULL, 0) == child);
	CHECK_EQ_I64(vt_watch_status(w, &st, &err), VT_E_GONE);
	CHECK_EQ_I64(vt_watch_listen(w, 1, out, 4, &n, &dropped, &via, &err), VT_E_GONE);
	CHECK_EQ_I64(vt_sample_take_from(w, &(struct vt_sample_opts){ .light = true }, &s, &err), VT_E_GONE);
	vt_watch_close(w);
	vt_procfs_close(&pfs);
}

/* No such process, and a zombie: refused at open, as a sample refuses them. */
static void test_watch__open_refusals(void)
{
	struct vt_watch_opts wo = { 0 };
	struct vt_watch *w = NULL;
	struct vt_err err;
	pid_t child;

	CHECK_EQ_I64(vt_procfs_open(&pfs, NULL, NULL, &err), VT_OK);
	CHECK_EQ_I64(vt_watch_open(&pfs, 0x3ffffff0, &wo, &w, NULL, NULL, &err), VT_E_NOPROC);
	CHECK(w == NULL);
	child = fork();
	if (child == 0)
		_exit(0);
	/* a zombie until reaped */
	for (int i = 0; i < 200; i++) {
		char path[64], state = 0;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/stat", (int)child);
		f = fopen(path, "r");
		if (f && fscanf(f, "%*d (%*[^)]) %c", &state) == 1 && state == 'Z') {
			fclose(f);
			break;
		}
		if (f)
			fclose(f);
		usleep(10000);
	}
	CHECK_EQ_I64(vt_watch_open(&pfs, child, &wo, &w, NULL, NULL, &err), VT_E_ZOMBIE);
	CHECK(w == NULL);
	waitpid(child, NULL, 0);
	vt_procfs_close(&pfs);
}

/* A sample through a held watch is the sample of that process, listeners from the watch's walk. */
static void test_watch__sample_through_watch(void)
{
	struct vt_watch_opts wo = { 0 };
	struct vt_sample_opts so = { .light = true, .listeners = true };
	struct vt_watch *w = watch_self(&wo);
	struct vt_sample s;
	struct vt_err err;
	unsigned port;
	int lfd = listener(&port);

	CHECK(w != NULL && lfd >= 0);
	if (!w)
		return;
	CHECK_EQ_I64(vt_sample_take_from(w, &so, &s, &err), VT_OK);
	CHECK_EQ_I64(s.pid, getpid());
	CHECK(s.listen_st.available);
	CHECK_EQ_I64(queue_of(s.listen.v, s.listen.n, port), 0);
	CHECK(s.listen.open_fds > 0);
	vt_sample_release(&s);
	close(lfd);
	vt_watch_close(w);
	vt_procfs_close(&pfs);
}

VT_TEST_MAIN(test_watch__sockets_walked_when_due, test_watch__fds_counted_every_ask, test_watch__heap_schedule,
	     test_watch__lasting_refusal_asked_once, test_watch__exited_is_gone, test_watch__open_refusals,
	     test_watch__sample_through_watch)

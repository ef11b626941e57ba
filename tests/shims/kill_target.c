/*
 * kill_target.c — LD_PRELOAD shim for tests: the target exits mid-probe.
 *
 * Put under vitals.  The first time vitals opens a path that contains
 * VT_KILL_ON_OPEN, or makes the call named by VT_KILL_ON_CALL ("ptrace"
 * for its first ptrace request, "process_vm_readv"), the process
 * VT_KILL_PID is sent SIGKILL and the shim waits (at most 2 s) until it
 * has exited, zombie or reaped; then the call goes ahead, against a
 * process that is no more.  Only for tests; never linked into vitals.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

long ptrace(int request, ...);   /* <sys/ptrace.h> declares it with an enum */

static atomic_int fired;

typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);
typedef long (*ptrace_fn)(int, ...);
typedef ssize_t (*readv_fn)(pid_t, const struct iovec *, unsigned long, const struct iovec *,
			    unsigned long, unsigned long);

/* The next definition of name, looked up once. */
#define REAL(type, name)                                                       \
	static type real_##name;                                               \
	if (!real_##name)                                                      \
		real_##name = (type)dlsym(RTLD_NEXT, #name)

/* Exited: no /proc/PID/stat any more, or it says zombie. */
static int exited(pid_t pid)
{
	char path[64], text[512], *paren;
	ssize_t n;
	int fd;
	REAL(open_fn, open);

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = real_open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 1;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return 1;
	text[n] = '\0';
	paren = strrchr(text, ')');
	return paren && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X');
}

static void kill_now(void)
{
	struct timespec nap = { 0, 2 * 1000 * 1000 };
	const char *v = getenv("VT_KILL_PID");
	pid_t pid = v ? (pid_t)atoi(v) : 0;
	int i;

	if (pid <= 0 || atomic_exchange(&fired, 1))
		return;
	kill(pid, SIGKILL);
	for (i = 0; i < 1000 && !exited(pid); i++)
		nanosleep(&nap, NULL);
}

static void on_open(const char *path)
{
	const char *want = getenv("VT_KILL_ON_OPEN");

	if (want && *want && path && strstr(path, want))
		kill_now();
}

static void on_call(const char *name)
{
	const char *want = getenv("VT_KILL_ON_CALL");

	if (want && strcmp(want, name) == 0)
		kill_now();
}


int open(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	REAL(open_fn, open);
	va_start(ap, flags);
	mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, mode_t) : 0;
	va_end(ap);
	on_open(path);
	return real_open(path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	REAL(open_fn, open64);
	va_start(ap, flags);
	mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, mode_t) : 0;
	va_end(ap);
	on_open(path);
	return real_open64(path, flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	REAL(openat_fn, openat);
	va_start(ap, flags);
	mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, mode_t) : 0;
	va_end(ap);
	on_open(path);
	return real_openat(dirfd, path, flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	REAL(openat_fn, openat64);
	va_start(ap, flags);
	mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, mode_t) : 0;
	va_end(ap);
	on_open(path);
	return real_openat64(dirfd, path, flags, mode);
}

long ptrace(int request, ...)
{
	va_list ap;
	pid_t pid;
	void *addr, *data;

	REAL(ptrace_fn, ptrace);
	va_start(ap, request);
	pid = va_arg(ap, pid_t);
	addr = va_arg(ap, void *);
	data = va_arg(ap, void *);
	va_end(ap);
	on_call("ptrace");
	return real_ptrace(request, pid, addr, data);
}

ssize_t process_vm_readv(pid_t pid, const struct iovec *local, unsigned long liovcnt,
			 const struct iovec *remote, unsigned long riovcnt, unsigned long flags)
{
	REAL(readv_fn, process_vm_readv);
	on_call("process_vm_readv");
	return real_process_vm_readv(pid, local, liovcnt, remote, riovcnt, flags);
}

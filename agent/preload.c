/*
 * preload.c — the LD_PRELOAD entry of libvitals-agent.so: a constructor
 * that opens a Unix socket and starts one listener thread serving the core
 * (agent/core.c) over agent/protocol.h.
 *
 *   LD_PRELOAD=/path/to/libvitals-agent.so  some-service ...
 *   vitals heap $(pidof some-service)
 *
 * The socket is $XDG_RUNTIME_DIR/vitals-agent/<pid>.sock when the process
 * starts with an XDG_RUNTIME_DIR of its own (owned by the euid, mode 0700),
 * else /tmp/vitals-agent-<euid>/<pid>.sock (agent/protocol.h gives the
 * rule vitals follows too).  The directory is mode 0700 and owned by the
 * euid (created if missing; refused if it is a symbolic link or exists with
 * another owner or any group/other bit), the socket mode 0600, and only the
 * euid and root are served (SO_PEERCRED).  No TCP.
 *
 * What this file must never do to its host:
 *  - crash it, block it, or print: every failure leaves the agent silent and
 *    the host untouched (VITALS_AGENT_DEBUG=1 says why on stderr);
 *  - let a client stall it: one connection at a time, a request of at most
 *    4 KiB (4,096 bytes ended by EOF, or 4,095 and a newline), read and
 *    send deadlines (SO_RCVTIMEO/SO_SNDTIMEO plus poll), and MSG_NOSIGNAL
 *    so a client that hangs up raises no SIGPIPE;
 *  - take its signals: the thread blocks every signal (glibc keeps its
 *    internal setxid/cancel signals deliverable, so setuid() still works);
 *  - call malloc from the listener thread (see core.c);
 *  - touch a descriptor it does not own: the listening socket is checked by
 *    inode before each accept.  A daemon that closes every descriptor at
 *    start closes ours too; the agent then binds a fresh socket (at most
 *    MAX_RECREATE times) and never closes a number that is no longer its.
 *
 * fork: the child of a fork() has no listener thread.  The pthread_atfork
 * child handler notes that and closes the inherited sockets; the child does
 * NOT start a listener of its own (a thread started between fork and exec
 * would bind and leave a socket for a short-lived pid, and starting one
 * after fork in a multithreaded process is not safe).  A child that execs
 * loads the agent afresh through the inherited LD_PRELOAD; a pre-forked
 * worker that does not exec is not served (use vitals' ptrace path, or
 * vitals_agent_json() on its own route).  Only the process that created the
 * socket removes it: the exit handlers compare getpid().
 *
 * libvitals-agent-allocs.so (VT_AGENT_ALLOCS) is this same entry plus
 * agent/alloc_sampler.c: while a client has sampling armed, the listener
 * waits for clients in poll() with a timeout and disarms sampling at its
 * deadline itself, in case the process stops allocating.  With
 * VITALS_AGENT=0 there is no listener, so nothing ever arms it.
 *
 * Known limits: the thread exists before main(), so a host that must be
 * single-threaded (unshare(CLONE_NEWUSER), some sandboxes) should run with
 * VITALS_AGENT=0.  A host that drops privileges after start keeps serving
 * from its first euid's directory (vitals also looks in root's) but can no
 * longer unlink its socket at exit; the stale file is harmless (the next
 * process with that pid replaces it, and clients get ECONNREFUSED).  So is
 * the socket of a process killed by a signal (SIGTERM, SIGKILL: no exit
 * handler runs, and the agent installs no signal handler in its host):
 * the next agent to start in that directory removes it (sweep_gone).  In a
 * user namespace that does not map the host's root (rootless containers),
 * host root is the overflow uid to the agent and is refused: run vitals as
 * the host uid that the process's user maps to.  The library is linked
 * against the build machine's glibc and needs at least that symbol version
 * set (2.34 for pthread_create).
 */
#include "core.h"
#include "protocol.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define LISTEN_BACKLOG 8
#define MAX_RECREATE   8
#define MAX_ACCEPT_FAILURES 50
#define THREAD_STACK   (256u << 10)

static struct {
	int lfd;                 /* listening socket, -1 when none */
	dev_t dev;               /* its identity, to recognise it later */
	ino_t ino;
	pid_t owner;             /* the process that bound path */
	char xdg[PATH_MAX];      /* $XDG_RUNTIME_DIR at start, "" if unset or relative */
	char path[PATH_MAX];     /* the socket, for unlink at exit */
	bool debug;
	int recreated;
} L = { .lfd = -1 };

static atomic_int path_bound;        /* 1 while path is ours to unlink */
static atomic_int conn_fd = -1;      /* the connection being served */

/*
 * Debug lines go to stderr only with VITALS_AGENT_DEBUG=1.  DBG tests that
 * before evaluating its arguments: strerror() may allocate (unknown errno,
 * translated messages), and the listener thread must not call malloc.
 */
#define DBG(...)                          \
	do {                              \
		if (L.debug)              \
			dbg(__VA_ARGS__); \
	} while (0)

static void dbg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say_line(const char *fmt, va_list ap);

static void dbg(const char *fmt, ...)
{
	va_list ap;

	if (!L.debug)
		return;
	va_start(ap, fmt);
	say_line(fmt, ap);
	va_end(ap);
}

/*
 * Said on the host's stderr even without VITALS_AGENT_DEBUG, once: the one
 * thing that silently turns the agent off and that its user can undo.
 */
static void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say_line(fmt, ap);
	va_end(ap);
}

static void say_line(const char *fmt, va_list ap)
{
	char line[512];
	int n, saved = errno;

	n = snprintf(line, sizeof(line), "vitals-agent[%d]: ", (int)getpid());
	if (n > 0 && (size_t)n < sizeof(line))
		n += vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	if (n > 0) {
		if ((size_t)n >= sizeof(line) - 1)
			n = (int)sizeof(line) - 2;
		line[n++] = '\n';
		if (write(STDERR_FILENO, line, (size_t)n) < 0) {
			/* nothing to do: nowhere else to say it */
		}
	}
	errno = saved;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the socket -------------------------------------------------------- */

static bool lfd_is_ours(void)
{
	struct stat st;

	return L.lfd >= 0 && fstat(L.lfd, &st) == 0 && S_ISSOCK(st.st_mode) &&
	       st.st_dev == L.dev && st.st_ino == L.ino;
}

static void unlink_socket(void)
{
	if (L.owner != getpid())
		return;            /* a forked child: the socket is its parent's */
	if (atomic_exchange(&path_bound, 0))
		unlink(L.path);
}

/*
 * The directory the socket goes in (agent/protocol.h, "Where the socket
 * is"), opened and checked.  base is $XDG_RUNTIME_DIR as the process got it
 * when the base it names is a directory owned by euid with no group/other
 * bit, else /tmp; the agent's own directory in it (VT_AGENT_XDG_SUBDIR or
 * vitals-agent-<euid>) is created 0700 if missing, opened without following
 * a symbolic link, and must be a directory owned by euid with no
 * group/other bit.  Anything else is refused: a directory another user
 * created in /tmp cannot be taken over (the sticky bit), so the agent stays
 * silent there rather than serve from it.  Returns the directory's fd, or
 * -1; sets L.path to the socket's full path.
 */
static int dir_open(uid_t euid, const char *name)
{
	char sub[64];
	const char *base = "/tmp";
	struct stat st = { 0 };
	int bfd = -1, dfd, n;

	if (L.xdg[0]) {
		bfd = open(L.xdg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (bfd >= 0 && fstat(bfd, &st) == 0 && st.st_uid == euid && (st.st_mode & 077) == 0) {
			base = L.xdg;
			snprintf(sub, sizeof(sub), "%s", VT_AGENT_XDG_SUBDIR);
		} else {
			DBG("not using " VT_AGENT_ENV_XDG " '%s': %s%s", L.xdg,
			    bfd < 0 ? strerror(errno) : "not owned by the euid with mode 700",
			    "; using /tmp");
			if (bfd >= 0)
				close(bfd);
			bfd = -1;
		}
	}
	if (bfd < 0) {
		bfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		snprintf(sub, sizeof(sub), VT_AGENT_TMP_SUBDIR_FMT, (unsigned)euid);
	}
	n = snprintf(L.path, sizeof(L.path), "%s/%s/%s", base, sub, name);
	if (n < 0 || (size_t)n >= sizeof(L.path)) {
		DBG("socket path too long");
		goto fail;
	}
	if (bfd < 0) {
		DBG("cannot open '%s': %s", base, strerror(errno));
		return -1;
	}
	if (mkdirat(bfd, sub, 0700) < 0 && errno != EEXIST) {
		DBG("cannot create '%s/%s': %s", base, sub, strerror(errno));
		goto fail;
	}
	dfd = openat(bfd, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		DBG("cannot open '%s/%s' (a symbolic link is refused): %s", base, sub, strerror(errno));
		goto fail;
	}
	if (fstat(dfd, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != euid ||
	    (st.st_mode & 077) != 0) {
		/* Someone else made it (in /tmp anyone can): the agent stays off, and says so once. */
		static atomic_int warned;

		if (!atomic_exchange(&warned, 1))
			warn("not serving heap figures: '%s/%s' has owner %u and mode %03o, not %u and 700 "
			     "(another user may have created it); remove it, or give this process an "
			     "XDG_RUNTIME_DIR", base, sub, (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777),
			     (unsigned)euid);
		close(dfd);
		goto fail;
	}
	close(bfd);
	return dfd;
fail:
	if (bfd >= 0)
		close(bfd);
	return -1;
}

/*
 * Bind fd to name in the directory dfd: through /proc/self/fd/<dfd>/<name>,
 * so the directory bound in is the one checked (and a long $XDG_RUNTIME_DIR
 * still fits sun_path); by the full path when /proc is not mounted.
 */
static int bind_at(int fd, int dfd, const char *name)
{
	struct sockaddr_un sa;
	int n;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	n = snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", dfd, name);
	if (n > 0 && (size_t)n < sizeof(sa.sun_path)) {
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			return 0;
		if (errno != ENOENT && errno != ENOTDIR)
			return -1;
	}
	if (strlen(L.path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(sa.sun_path, L.path, strlen(L.path) + 1);
	return bind(fd, (struct sockaddr *)&sa, sizeof(sa));
}

/*
 * Remove the sockets of processes that are gone.  A process killed by a
 * signal (SIGTERM's default action, SIGKILL) runs no exit handler, and
 * the agent never installs a handler of its own in its host: its socket
 * stays.  Harmless (clients get ECONNREFUSED), but they pile up: each
 * agent that starts sweeps the directory, which only this user writes.
 * Names other than PID.sock, and pids that exist, are left alone.
 */
static void sweep_gone(int dfd)
{
	int dup_fd = fcntl(dfd, F_DUPFD_CLOEXEC, 0);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	struct dirent *e;

	if (!d) {
		if (dup_fd >= 0)
			close(dup_fd);
		return;
	}
	while ((e = readdir(d)) != NULL) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);

		if (end == e->d_name || strcmp(end, ".sock") != 0 || pid <= 0 || pid == (long)getpid() ||
		    e->d_name[0] == '0' || e->d_name[0] == '-' || e->d_name[0] == '+')
			continue;
		if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
			unlinkat(dfd, e->d_name, 0);
	}
	closedir(d);
}

/* Create the directory if needed, check it, bind and listen.  0 or -1. */
static int socket_open(void)
{
	uid_t euid = geteuid();
	struct stat st;
	char name[32];
	int dfd, fd = -1;

	snprintf(name, sizeof(name), VT_AGENT_SOCK_FMT, (int)getpid());
	dfd = dir_open(euid, name);
	if (dfd < 0)
		return -1;
	/* Before our socket appears, so that whoever sees it finds the gone ones swept. */
	sweep_gone(dfd);
	/* A socket left by an earlier process with our pid is stale: it is named for us. */
	if (unlinkat(dfd, name, 0) < 0 && errno != ENOENT) {
		DBG("cannot remove stale '%s': %s", L.path, strerror(errno));
		goto fail;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		DBG("socket: %s", strerror(errno));
		goto fail;
	}
	if (bind_at(fd, dfd, name) < 0) {
		DBG("cannot bind '%s': %s", L.path, strerror(errno));
		goto fail;
	}
	L.owner = getpid();
	atomic_store(&path_bound, 1);
	/* The 0700 directory already keeps others out; 0600 says so on the socket too. */
	if (fchmodat(dfd, name, 0600, 0) < 0 || listen(fd, LISTEN_BACKLOG) < 0 ||
	    fstat(fd, &st) < 0) {
		DBG("cannot listen on '%s': %s", L.path, strerror(errno));
		unlink_socket();
		goto fail;
	}
	L.dev = st.st_dev;
	L.ino = st.st_ino;
	L.lfd = fd;
	close(dfd);
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	close(dfd);
	return -1;
}

/* ---- one connection ------------------------------------------------------ */

static void set_timeouts(int c)
{
	struct timeval rt = { VT_AGENT_READ_TIMEOUT_MS / 1000, (VT_AGENT_READ_TIMEOUT_MS % 1000) * 1000 };
	struct timeval st = { VT_AGENT_SEND_TIMEOUT_MS / 1000, (VT_AGENT_SEND_TIMEOUT_MS % 1000) * 1000 };

	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &rt, sizeof(rt));
	setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &st, sizeof(st));
}

/* Wait for ev on c until deadline; 1 ready, 0 timed out or failed. */
static int wait_fd(int c, short ev, long long deadline)
{
	for (;;) {
		long long left = deadline - now_ms();
		struct pollfd p = { .fd = c, .events = ev };
		int r;

		if (left <= 0)
			return 0;
		r = poll(&p, 1, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		return r > 0;
	}
}

static void send_all(int c, const char *p, size_t n)
{
	long long deadline = now_ms() + VT_AGENT_SEND_TIMEOUT_MS;

	while (n > 0) {
		ssize_t k;

		if (!wait_fd(c, POLLOUT, deadline))
			return;
		k = send(c, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (k < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return;          /* EPIPE, ECONNRESET: the client left */
		}
		p += k;
		n -= (size_t)k;
	}
}

enum req_end { REQ_LINE, REQ_TOO_LONG, REQ_SILENT, REQ_EMPTY };

/*
 * Read the request into req[cap]: a line ended by '\n' or by the end of the
 * stream, of at most cap bytes with the '\n'.  When req fills up without a
 * '\n', one more read decides: the end of the stream means exactly cap bytes
 * (a line), anything else (even a '\n') makes it too long.
 */
static enum req_end read_request(int c, char *req, size_t cap, size_t *len)
{
	long long deadline = now_ms() + VT_AGENT_READ_TIMEOUT_MS;
	size_t n = 0;
	char extra;

	*len = 0;
	for (;;) {
		char *dst = n < cap ? req + n : &extra;
		size_t room = n < cap ? cap - n : 1;
		char *nl;
		ssize_t k;

		if (!wait_fd(c, POLLIN, deadline))
			break;
		k = recv(c, dst, room, MSG_DONTWAIT);
		if (k < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			break;
		}
		if (k == 0) {
			*len = n;
			return n > 0 ? REQ_LINE : REQ_EMPTY;
		}
		if (n >= cap)
			return REQ_TOO_LONG;
		nl = memchr(dst, '\n', (size_t)k);
		if (nl) {
			*len = (size_t)(nl - req);
			return REQ_LINE;
		}
		n += (size_t)k;
	}
	return n >= cap ? REQ_TOO_LONG : REQ_SILENT;
}

/*
 * Only the process's own euid and root are served.  The 0700 directory
 * keeps other users from connecting; this holds even if a socket path
 * leaked (a bind mount, an fd passed on).  SO_PEERCRED gives the client's
 * euid in our user namespace (an unmapped uid shows as the overflow uid).
 */
static bool peer_allowed(int c, char *why, size_t cap)
{
	struct ucred cr;
	socklen_t cl = sizeof(cr);
	uid_t euid = geteuid();

	if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cr, &cl) < 0) {
		snprintf(why, cap, "cannot tell who the client is");
		return false;
	}
	if (cr.uid == 0 || cr.uid == euid)
		return true;
	snprintf(why, cap, "permission denied: uid %u is neither the process's (%u) nor root",
		 (unsigned)cr.uid, (unsigned)euid);
	return false;
}

static void serve(int c)
{
	static const char oom[] = "{\"v\":1,\"error\":\"agent out of memory\"}\n";
	char req[VT_AGENT_REQ_MAX], why[128];
	struct agent_sink out;
	size_t n = 0;

	set_timeouts(c);
	agent_sink_init(&out, VT_AGENT_REPLY_MAX);
	if (!peer_allowed(c, why, sizeof(why))) {
		DBG("refused a client: %s", why);
		agent_core_error(&out, why);
		goto send;
	}
	switch (read_request(c, req, sizeof(req), &n)) {
	case REQ_LINE:
		agent_core_answer(req, n, agent_core_trim_allowed(), &out);
		break;
	case REQ_TOO_LONG:
		agent_core_error(&out, "request longer than 4096 bytes");
		break;
	case REQ_EMPTY:
		agent_core_error(&out, "empty request");
		break;
	case REQ_SILENT:
		agent_core_error(&out, "no request line within 1000 ms");
		break;
	}
send:
	if (out.failed || !out.p)
		send_all(c, oom, sizeof(oom) - 1);
	else
		send_all(c, out.p, out.len);
	agent_sink_release(&out);
}

/* ---- the listener thread --------------------------------------------------- */

static void *listener_main(void *arg)
{
	sigset_t all;
	int failures = 0;

	(void)arg;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, NULL);
	pthread_setname_np(pthread_self(), "vitals-agent");

	for (;;) {
		struct timespec pause = { 0, 100 * 1000 * 1000 };
		int c;

		if (failures > MAX_ACCEPT_FAILURES) {
			DBG("accept keeps failing: %s; agent stops", strerror(errno));
			break;
		}

		if (!lfd_is_ours()) {
			/* The host closed our socket (and may reuse the number): never touch it. */
			L.lfd = -1;
			if (++L.recreated > MAX_RECREATE || socket_open() < 0) {
				DBG("listening socket lost; agent stops");
				break;
			}
			DBG("listening socket was closed by the process; bound a new one");
		}
#if VT_AGENT_ALLOCS
		{
			/*
			 * While allocation sampling is armed, wake up at its
			 * deadline to disarm it: a client that armed it and went
			 * away must not leave it on in a process that has
			 * stopped allocating (the sampling path checks too).
			 */
			long long left = agent_allocs_tick();

			if (left >= 0) {
				struct pollfd p = { .fd = L.lfd, .events = POLLIN };
				int r = poll(&p, 1, left >= INT_MAX ? INT_MAX : (int)left + 1);

				if (r == 0 || (r < 0 && errno == EINTR))
					continue;
			}
		}
#endif
		c = accept4(L.lfd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0) {
			switch (errno) {
			case EINTR: case ECONNABORTED: case EPROTO: case EAGAIN:
				continue;
			case EMFILE: case ENFILE: case ENOBUFS: case ENOMEM:
				nanosleep(&pause, NULL);    /* the host is short; back off */
				continue;
			default:                             /* EBADF, ENOTSOCK, EINVAL */
				failures++;
				nanosleep(&pause, NULL);
				continue;                    /* the identity check decides */
			}
		}
		failures = 0;
		atomic_store(&conn_fd, c);
		serve(c);
		atomic_store(&conn_fd, -1);
		close(c);
	}
	return NULL;
}

/* ---- process hooks ------------------------------------------------------------ */

/*
 * In the child: no listener thread exists.  Close the copies of the parent's
 * sockets (async-signal-safe calls only) and stay silent; the exit handlers
 * leave the parent's socket alone because getpid() differs from L.owner.
 */
static void atfork_child(void)
{
	int c = atomic_exchange(&conn_fd, -1);

	if (c >= 0)
		close(c);
	if (lfd_is_ours())
		close(L.lfd);
	L.lfd = -1;
}

static void agent_exit(void)
{
	unlink_socket();
}

__attribute__((constructor)) static void agent_start(void)
{
	const char *on = getenv(VT_AGENT_ENV_ENABLE);
	const char *debug = getenv(VT_AGENT_ENV_DEBUG);
	const char *xdg = getenv(VT_AGENT_ENV_XDG);
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t t;
	int rc;

	L.debug = debug && strcmp(debug, "1") == 0;
	/* Read once: the client finds the directory from the environment the process started with. */
	if (xdg && xdg[0] == '/' && strlen(xdg) < sizeof(L.xdg))
		memcpy(L.xdg, xdg, strlen(xdg) + 1);
	/* The core is set up even when disabled: vitals_agent_json() still works. */
	if (agent_core_init() < 0)
		DBG("cannot create the malloc_info stream; requests will get an error");
	if (on && strcmp(on, "0") == 0) {
		DBG("disabled by " VT_AGENT_ENV_ENABLE "=0");
		return;
	}
	if (socket_open() < 0)
		return;
	if (pthread_atfork(NULL, NULL, atfork_child) != 0 ||
	    atexit(agent_exit) != 0) {
		DBG("cannot register fork/exit handlers; agent not started");
		goto fail;
	}
	if (pthread_attr_init(&attr) != 0)
		goto fail;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, THREAD_STACK);
	/* The thread inherits this mask: no host signal is ever delivered to it. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&t, &attr, listener_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		DBG("cannot start the listener thread: %s", strerror(rc));
		goto fail;
	}
	DBG("listening on %s", L.path);
	return;
fail:
	close(L.lfd);
	L.lfd = -1;
	unlink_socket();
}

__attribute__((destructor)) static void agent_stop(void)
{
	unlink_socket();
}

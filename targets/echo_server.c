/*
 * echo_server: a thread-per-connection TCP server on blocking sockets.
 *
 * It listens on 127.0.0.1 (--port, 0 for a port the kernel picks, which
 * is printed as "port N" on the line after "pid N" and kept in the
 * truth).  One thread, "acceptor", blocks in accept(); each connection
 * gets a thread, "conn-0", "conn-1" .., that blocks in recv(), computes
 * for --work-us microseconds on what it read, as a request handler does,
 * and sends it back.  Under a client such as echo_client the connection
 * threads wake thousands of times a second, each time because data came
 * in, and spend most of their time asleep in recv(): a server serving,
 * whose high voluntary switch rate is not a busy poll (issue 12: a recv()
 * thread with ~3,900 wakeups/s, 46-71 us each).
 *
 * A request is what one recv() returned; a client that waits for each
 * reply before it sends again (echo_client) gets one recv() per message.
 * With --stall-for D the acceptor stops accepting for D seconds from
 * --stall-at S: it waits in poll() for the time to come, then sleeps
 * through the stall while new connections pile up in the listen queue
 * (the accept-queue stall of field report 000, issue 16), then accepts
 * them all.  The truth gives when it began and ended, in seconds since
 * start and unix time.
 *
 * The truth gives the connections accepted and open, and the requests
 * served and bytes echoed so far, with the rate of requests over the
 * last interval.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/socket.h>

#include "common.h"

#define MAX_CONNS	256

static struct {
	int port;
	double work_us;
	double stall_at, stall_for;
} opt = {
	.work_us = 50,
	.stall_at = 5,
};

/* The stall, as it happened: -1 until then. */
static _Atomic double stall_began = -1, stall_ended = -1;
static _Atomic double stall_began_wall = -1, stall_ended_wall = -1;

static int listen_fd = -1;
static int port;			/* the one bound */
static pthread_t acceptor;
static pthread_t conn_threads[MAX_CONNS];
static int conn_fds[MAX_CONNS];
static int nconns;			/* threads started, under conns_lock */
static pthread_mutex_t conns_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int stop;
static _Atomic uint64_t requests, bytes, refused;
static atomic_int open_conns;
static _Atomic uint64_t sink;		/* keeps the computation alive */

/* Compute (a hash chain over the request: pure CPU) for 'us' microseconds. */
static uint64_t compute(uint64_t h, const unsigned char *buf, size_t n,
			double us)
{
	double until = now() + us / 1e6;
	size_t i;

	do {
		for (i = 0; i < n; i++)
			h = (h ^ buf[i] ^ (h >> 29)) * 0xbf58476d1ce4e5b9ULL;
		for (i = 0; i < 64; i++)
			h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ULL + i;
	} while (now() < until);
	return h;
}

/* Send all 'n' bytes; 0 when the peer is gone. */
static int send_all(int fd, const unsigned char *buf, size_t n)
{
	while (n) {
		ssize_t w = send(fd, buf, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EPIPE || errno == ECONNRESET ||
			      atomic_load(&stop)))
			return 0;
		if (w < 0)
			die("send");
		buf += w;
		n -= w;
	}
	return 1;
}

/* One connection: block in recv(), work, echo, until the peer closes. */
static void *conn_main(void *arg)
{
	int fd = *(int *)arg;
	unsigned char buf[65536];
	uint64_t h = 1;

	atomic_fetch_add(&open_conns, 1);
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != ECONNRESET && !atomic_load(&stop))
			die("recv");
		if (n <= 0)
			break;
		h = compute(h, buf, n, opt.work_us);
		if (!send_all(fd, buf, n))
			break;
		atomic_fetch_add(&requests, 1);
		atomic_fetch_add(&bytes, n);
	}
	atomic_fetch_sub(&open_conns, 1);
	atomic_fetch_xor(&sink, h);
	return NULL;
}

/*
 * With --stall-for, before each accept(): until --stall-at, wait in poll()
 * for a connection or that time, whichever comes first; once it has come,
 * sleep through the stall (once) and note when it ran.
 */
static void stall_if_due(void)
{
	double wait = opt.stall_at - elapsed();
	struct pollfd p = { .fd = listen_fd, .events = POLLIN };

	if (opt.stall_for <= 0 || atomic_load(&stall_began) >= 0)
		return;
	if (wait > 0 && poll(&p, 1, (int)(wait * 1000) + 1) != 0)
		return;   /* a connection (or EINTR) before the stall: accept it */
	if (elapsed() < opt.stall_at)
		return;
	atomic_store(&stall_began_wall, wall_now());
	atomic_store(&stall_began, elapsed());
	while (elapsed() < opt.stall_at + opt.stall_for && !atomic_load(&stop))
		usleep(10000);
	atomic_store(&stall_ended_wall, wall_now());
	atomic_store(&stall_ended, elapsed());
}

/* Block in accept(); give each connection its thread. */
static void *acceptor_main(void *arg)
{
	int one = 1;

	(void)arg;
	for (;;) {
		int fd;

		stall_if_due();
		fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0 && atomic_load(&stop))
			break;
		if (fd < 0 && (errno == EINTR || errno == ECONNABORTED))
			continue;
		if (fd < 0)
			die("accept");
		if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
			die("setsockopt TCP_NODELAY");
		check(pthread_mutex_lock(&conns_lock), "pthread_mutex_lock");
		if (nconns == MAX_CONNS || atomic_load(&stop)) {
			check(pthread_mutex_unlock(&conns_lock),
			      "pthread_mutex_unlock");
			atomic_fetch_add(&refused, 1);
			if (close(fd))
				die("close");
			continue;
		}
		conn_fds[nconns] = fd;
		start_thread(&conn_threads[nconns], NULL, conn_main,
			     &conn_fds[nconns], "conn", nconns);
		nconns++;
		check(pthread_mutex_unlock(&conns_lock), "pthread_mutex_unlock");
	}
	return NULL;
}

static void start_listening(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int one = 1;

	listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (listen_fd < 0)
		die("socket");
	if (setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)))
		die("setsockopt SO_REUSEADDR");
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons(opt.port);
	if (bind(listen_fd, (struct sockaddr *)&sa, sizeof(sa)))
		die("bind");
	if (listen(listen_fd, 128))
		die("listen");
	if (getsockname(listen_fd, (struct sockaddr *)&sa, &len))
		die("getsockname");
	port = ntohs(sa.sin_port);
	printf("port %d\n", port);
	if (fflush(stdout))
		die("stdout");
	start_thread(&acceptor, NULL, acceptor_main, NULL, "acceptor", -1);
}

/*
 * Shutting a socket down wakes the thread blocked on it: accept() fails
 * with EINVAL, recv() returns 0.  The acceptor is joined first, so no
 * connection thread starts after the others are woken.
 */
static void stop_serving(void)
{
	int i;

	atomic_store(&stop, 1);
	if (shutdown(listen_fd, SHUT_RDWR) && errno != ENOTCONN)
		die("shutdown");
	check(pthread_join(acceptor, NULL), "pthread_join");
	for (i = 0; i < nconns; i++)
		if (shutdown(conn_fds[i], SHUT_RDWR) && errno != ENOTCONN)
			die("shutdown");
	join_threads(conn_threads, nconns);
	for (i = 0; i < nconns; i++)
		if (close(conn_fds[i]))
			die("close");
	if (close(listen_fd))
		die("close");
}

/* Report the counts and the request rate since the previous report. */
static void truth_write(const char *phase)
{
	static struct rate_since since;
	double t = elapsed();
	uint64_t n = atomic_load(&requests);
	double rate = rate_since(&since, t, n);
	int accepted;
	FILE *f;

	f = truth_begin_at(t, phase);
	if (!f)
		return;
	check(pthread_mutex_lock(&conns_lock), "pthread_mutex_lock");
	accepted = nconns;
	check(pthread_mutex_unlock(&conns_lock), "pthread_mutex_unlock");
	fprintf(f, ",\"port\":%d,\"work_us\":%.1f,\"connections\":%d,"
		"\"open_connections\":%d,\"refused\":%" PRIu64 ","
		"\"requests\":%" PRIu64 ",\"bytes\":%" PRIu64 ","
		"\"requests_per_s\":%.1f", port, opt.work_us, accepted,
		atomic_load(&open_conns), atomic_load(&refused), n,
		atomic_load(&bytes), rate);
	if (opt.stall_for > 0)
		fprintf(f, ",\"stall_at\":%.3f,\"stall_for\":%.3f,\"stall_began\":%.3f,"
			"\"stall_ended\":%.3f,\"stall_began_wall\":%.3f,\"stall_ended_wall\":%.3f",
			opt.stall_at, opt.stall_for, atomic_load(&stall_began), atomic_load(&stall_ended),
			atomic_load(&stall_began_wall), atomic_load(&stall_ended_wall));
	truth_end();
}

static void option(int val, const char *name, const char *arg)
{
	switch (val) {
	case 'p':
		opt.port = parse_num(name, arg, 0, 65535);
		break;
	case 'w':
		opt.work_us = parse_num(name, arg, 0, 1e6);
		break;
	case 'a':
		opt.stall_at = parse_num(name, arg, 0, 1e6);
		break;
	case 'f':
		opt.stall_for = parse_num(name, arg, 0, 1e6);
		break;
	}
}

static const struct option options[] = {
	{ "port", required_argument, NULL, 'p' },
	{ "work-us", required_argument, NULL, 'w' },
	{ "stall-at", required_argument, NULL, 'a' },
	{ "stall-for", required_argument, NULL, 'f' },
	{ NULL, 0, NULL, 0 }
};

static const struct cli cli = {
	.usage =
	"usage: echo_server [options]\n"
	"  --seconds N   exit after N seconds (default 60)\n"
	"  --truth FILE  append ground truth as JSON lines\n"
	"  --port N      TCP port on 127.0.0.1 (default 0: the kernel picks;\n"
	"                printed as \"port N\" after the pid line)\n"
	"  --work-us N   computation per request before the echo (default 50)\n"
	"  --stall-for D stop accepting for D seconds (default 0: never) ...\n"
	"  --stall-at S  ... from S seconds after start (default 5)\n",
	.options = options,
	.option = option,
};

int main(int argc, char **argv)
{
	parse_options(argc, argv, &cli);
	target_begin(NULL);
	start_listening();
	main_loop(&(struct main_loop){ .report = truth_write,
				       .phase = "serving" });
	stop_serving();
	truth_write("exit");
	truth_close();
	return 0;
}

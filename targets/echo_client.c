/*
 * echo_client: load for echo_server, so its threads are woken by data.
 *
 * --conns connections to 127.0.0.1:--port, one thread each ("client-0"
 * ..), send a message of --size bytes and wait for the whole of it to
 * come back before sending the next: one request in flight per
 * connection.  With --rate R the connections together send R messages a
 * second on an absolute schedule (R / conns each; one that falls behind
 * skips ahead rather than bursting); with --rate 0 each sends again as
 * soon as the reply is in.  The default, 4000 a second over 2
 * connections, is the load of issue 12 (a recv() thread woken ~3,900
 * times a second).
 *
 * The truth gives the replies received so far, their rate over the last
 * interval and the connections the server has closed.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/socket.h>

#include "common.h"

#define MAX_CONNS	256
#define MAX_SIZE	65536

static struct {
	int port;
	int conns;
	double rate;
	int size;
} opt = {
	.conns = 2,
	.rate = 4000,
	.size = 64,
};

static pthread_t clients[MAX_CONNS];
static int fds[MAX_CONNS];
static atomic_int stop;
static _Atomic uint64_t replies;
static atomic_int closed;

static void timespec_add_ns(struct timespec *ts, long ns)
{
	ts->tv_nsec += ns;
	while (ts->tv_nsec >= 1000000000L) {
		ts->tv_nsec -= 1000000000L;
		ts->tv_sec++;
	}
}

static long timespec_diff_ns(const struct timespec *a,
			     const struct timespec *b)
{
	return (a->tv_sec - b->tv_sec) * 1000000000L + a->tv_nsec - b->tv_nsec;
}

/* Send the message and read its echo; 0 when the connection is gone. */
static int round_trip(int fd, unsigned char *buf)
{
	size_t off = 0;

	while (off < (size_t)opt.size) {
		ssize_t w = send(fd, buf + off, opt.size - off, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EPIPE || errno == ECONNRESET ||
			      atomic_load(&stop)))
			return 0;
		if (w < 0)
			die("send");
		off += w;
	}
	for (off = 0; off < (size_t)opt.size;) {
		ssize_t n = recv(fd, buf + off, opt.size - off, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != ECONNRESET && !atomic_load(&stop))
			die("recv");
		if (n <= 0)
			return 0;
		off += n;
	}
	return 1;
}

static void *client_main(void *arg)
{
	int fd = *(int *)arg;
	long period = opt.rate > 0 ? (long)(1e9 * opt.conns / opt.rate) : 0;
	unsigned char buf[MAX_SIZE];
	struct timespec next, cur;
	int rc;

	memset(buf, 'x', opt.size);
	if (clock_gettime(CLOCK_MONOTONIC, &next))
		die("clock_gettime");
	while (!atomic_load(&stop)) {
		if (!round_trip(fd, buf)) {
			if (!atomic_load(&stop))
				atomic_fetch_add(&closed, 1);
			break;
		}
		atomic_fetch_add(&replies, 1);
		if (!period)
			continue;
		timespec_add_ns(&next, period);
		rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		if (rc && rc != EINTR)
			check(rc, "clock_nanosleep");
		if (clock_gettime(CLOCK_MONOTONIC, &cur))
			die("clock_gettime");
		/* Fallen more than a period behind: skip, do not burst. */
		if (timespec_diff_ns(&cur, &next) > period)
			next = cur;
	}
	return NULL;
}

static void start_clients(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int i, one = 1;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons(opt.port);
	for (i = 0; i < opt.conns; i++) {
		fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fds[i] < 0)
			die("socket");
		if (connect(fds[i], (struct sockaddr *)&sa, sizeof(sa)))
			die("connect");
		if (setsockopt(fds[i], IPPROTO_TCP, TCP_NODELAY, &one,
			       sizeof(one)))
			die("setsockopt TCP_NODELAY");
	}
	for (i = 0; i < opt.conns; i++)
		start_thread(&clients[i], NULL, client_main, &fds[i], "client",
			     i);
}

/* Shutting a socket down wakes a thread waiting for its reply. */
static void stop_clients(void)
{
	int i;

	atomic_store(&stop, 1);
	for (i = 0; i < opt.conns; i++)
		if (shutdown(fds[i], SHUT_RDWR) && errno != ENOTCONN)
			die("shutdown");
	join_threads(clients, opt.conns);
	for (i = 0; i < opt.conns; i++)
		if (close(fds[i]))
			die("close");
}

/* Report the replies and their rate since the previous report. */
static void truth_write(const char *phase)
{
	static struct rate_since since;
	double t = elapsed();
	uint64_t n = atomic_load(&replies);
	double rate = rate_since(&since, t, n);
	FILE *f;

	f = truth_begin_at(t, phase);
	if (!f)
		return;
	fprintf(f, ",\"port\":%d,\"conns\":%d,\"rate\":%.1f,\"size\":%d,"
		"\"replies\":%" PRIu64 ",\"replies_per_s\":%.1f,\"closed\":%d",
		opt.port, opt.conns, opt.rate, opt.size, n, rate,
		atomic_load(&closed));
	truth_end();
}

static void option(int val, const char *name, const char *arg)
{
	switch (val) {
	case 'p':
		opt.port = parse_num(name, arg, 1, 65535);
		break;
	case 'c':
		opt.conns = parse_num(name, arg, 1, MAX_CONNS);
		break;
	case 'r':
		opt.rate = parse_num(name, arg, 0, 1e7);
		break;
	case 'z':
		opt.size = parse_num(name, arg, 1, MAX_SIZE);
		break;
	}
}

static const struct option options[] = {
	{ "port", required_argument, NULL, 'p' },
	{ "conns", required_argument, NULL, 'c' },
	{ "rate", required_argument, NULL, 'r' },
	{ "size", required_argument, NULL, 'z' },
	{ NULL, 0, NULL, 0 }
};

static const struct cli cli = {
	.usage =
	"usage: echo_client --port N [options]\n"
	"  --seconds N   exit after N seconds (default 60)\n"
	"  --truth FILE  append ground truth as JSON lines\n"
	"  --port N      echo_server's port on 127.0.0.1 (required)\n"
	"  --conns N     connections, one thread each (default 2, max 256)\n"
	"  --rate N      messages a second, all connections together\n"
	"                (default 4000; 0: each sends as soon as its reply is in)\n"
	"  --size N      bytes per message (default 64)\n",
	.options = options,
	.option = option,
};

int main(int argc, char **argv)
{
	parse_options(argc, argv, &cli);
	if (!opt.port)
		usage_exit(cli.usage, stderr, EXIT_USAGE);
	target_begin(NULL);
	start_clients();
	main_loop(&(struct main_loop){ .report = truth_write,
				       .phase = "sending" });
	stop_clients();
	truth_write("exit");
	truth_close();
	return 0;
}

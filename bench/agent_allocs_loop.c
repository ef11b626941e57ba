/*
 * agent_allocs_loop.c — bench/agent_allocs' timed loop: ROUNDS rounds of
 * PAIRS malloc(64)/free pairs, each round timed on the thread's own CPU
 * clock (CLOCK_THREAD_CPUTIME_ID: time the box gave to other work is not
 * counted).  Prints one line: the median ns per pair, the mean samples and
 * dropped samples per round.
 *
 *   agent_allocs_loop PAIRS ROUNDS [EVERY]
 *
 * With EVERY, the process must run with libvitals-agent-allocs.so preloaded
 * (and no XDG_RUNTIME_DIR): before each round it arms its own agent over
 * /tmp/vitals-agent-<euid>/<pid>.sock ({"want":"allocs","start":true,
 * "every":EVERY}), after it stops it and reads the reply; neither exchange
 * is timed.  A fresh start each round keeps the sample table from filling,
 * so the figure is the cost of sampling, not of dropping.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static void *volatile sink;   /* keeps the compiler from pairing malloc with free away */

static char reply[16 << 20];

/* One exchange with our own agent; the reply in reply[], its length, or -1. */
static long ask(const char *req)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n = 0;
	ssize_t k;
	int fd;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "/tmp/vitals-agent-%u/%d.sock", (unsigned)geteuid(),
		 (int)getpid());
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    send(fd, req, strlen(req), MSG_NOSIGNAL) != (ssize_t)strlen(req)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while (n + 1 < sizeof(reply) && (k = recv(fd, reply + n, sizeof(reply) - 1 - n, 0)) > 0)
		n += (size_t)k;
	reply[n] = '\0';
	close(fd);
	return (long)n;
}

static long long count_of(const char *key)
{
	const char *p = strstr(reply, key);

	return p ? strtoll(p + strlen(key), NULL, 10) : -1;
}

static long long samples_in_reply(void)
{
	long long n = 0;
	const char *p = reply;

	while ((p = strstr(p, "{\"size\":")) != NULL) {
		n++;
		p++;
	}
	return n;
}

static double thread_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* The timed loop. */
static double timed_pairs(long pairs)
{
	double t0 = thread_ns();
	long i;

	for (i = 0; i < pairs; i++) {
		void *p = malloc(64);

		sink = p;
		free(p);
	}
	return (thread_ns() - t0) / (double)pairs;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	long pairs = argc > 1 ? atol(argv[1]) : 400000, rounds = argc > 2 ? atol(argv[2]) : 15, r, i;
	long every = argc > 3 ? atol(argv[3]) : 0;
	long long samples = 0, dropped = 0;
	double *ns;
	char req[160];
	int tries;

	if (pairs <= 0 || rounds <= 0 || !(ns = calloc((size_t)rounds, sizeof(*ns)))) {
		fprintf(stderr, "usage: agent_allocs_loop PAIRS ROUNDS [EVERY]\n");
		return 64;
	}
	for (i = 0; i < pairs; i++) {          /* warm: glibc's tcache, the page tables */
		sink = malloc(64);
		free(sink);
	}
	for (r = 0; r < rounds; r++) {
		if (every) {
			snprintf(req, sizeof(req),
				 "{\"v\":1,\"want\":\"allocs\",\"start\":true,\"every\":%ld,\"for_ms\":600000}\n", every);
			/* the listener may still be starting in a process this young */
			for (tries = 0; ask(req) <= 0 || !strstr(reply, "\"armed\":true"); tries++) {
				if (tries == 200) {
					fprintf(stderr, "agent_allocs_loop: cannot arm the agent: %s\n", reply);
					return 1;
				}
				usleep(10000);
			}
		}
		ns[r] = timed_pairs(pairs);
		if (every) {
			if (ask("{\"v\":1,\"want\":\"allocs\",\"stop\":true}\n") <= 0 || count_of("\"dropped\":") < 0) {
				fprintf(stderr, "agent_allocs_loop: no stop reply: %.200s\n", reply);
				return 1;
			}
			samples += samples_in_reply();
			dropped += count_of("\"dropped\":");
		}
	}
	qsort(ns, (size_t)rounds, sizeof(*ns), cmp_double);
	printf("%.2f %lld %lld\n", ns[rounds / 2], samples / rounds, dropped / rounds);
	free(ns);
	return 0;
}

/*
 * profile_work: known work in named functions, each kind on its own
 * thread at a set share of a core, for `vitals profile` (issue 13).
 *
 * One thread per kind of work, named after it, runs its work function
 * for a set share of a core (--share): busy for that share of every
 * --period-ms, then asleep until the next period starts:
 *
 *   thread  top function        under it
 *   net     work_net            work_net_send -> send(), work_net_recv ->
 *                               recv(): 256-byte messages over a loopback
 *                               TCP connection, each sent on one end and
 *                               read back on the other (kernel time)
 *   fs      work_fs_syscalls    fs_read_file -> open, fstat, pread,
 *                               close of a small temp file in --dir;
 *                               fs_stat_path -> stat (kernel time)
 *   parse   work_parse_json     json_parse_document -> json_parse_object
 *                               -> json_parse_value -> json_parse_string,
 *                               json_parse_number: a tokenizer over a
 *                               ~20 KiB in-memory document (user time,
 *                               self time mostly in the leaves)
 *   hash    work_hash_fnv       hash_fnv1a -> hash_fnv1a_block: FNV-1a
 *                               over a 4 KiB buffer, 256 bytes a call
 *   malloc  work_malloc_churn   churn_step -> malloc(), free(): 16 B to
 *                               32 KiB blocks through a ring of 512, the
 *                               time in glibc's allocator
 *
 * and two idle threads that never run: "idle-epoll" blocked in
 * epoll_wait() and "idle-futex" in a condition variable's futex wait.
 * With --sleepers N, N more threads ("sleeper-0" ..., 64 KiB stacks) wait
 * in the same futex wait until the end: a big, mostly idle process, for
 * what a profiler's bookkeeping costs per thread (bench/profile
 * --threads).  They never run after they start, so the truth carries only
 * their count; their CPU (their start) is in process_cpu_s.
 *
 * The ground truth is each thread's own CPU time, its
 * CLOCK_THREAD_CPUTIME_ID read through pthread_getcpuclockid() ("cpu_s"),
 * and for a work thread the part of it inside its top function
 * ("function_cpu_s": the thread's clock read before and after each call,
 * about 97% of cpu_s; the rest is the pacing's sleep and wakeup).  With
 * every thread's CPU in the truth, over a window between two truth
 * lines a thread's share of the process's CPU is its cpu_s difference
 * over the sum of every thread's, and its top function's inclusive share
 * of the on-CPU samples should be the function_cpu_s difference over
 * that same sum (tests/integration/profile_truth.py does the sums).  The
 * functions under a top function share its time in proportions the
 * truth does not give.
 *
 * Every named function is noinline and noclone, with a compiler barrier
 * after its calls so that no call becomes a tail call (which would take
 * the caller out of the stack) and no two functions are merged.
 *
 * Frame pointers: gcc -O1 omits them on x86-64, so the plain build has
 * none and only DWARF CFI unwinds it; the -fp build (targets/README.md)
 * keeps them, but not in a leaf that needs no stack frame (gcc 12 omits
 * it there even with -mno-omit-leaf-frame-pointer: hash_fnv1a_block,
 * json_parse_number), and glibc keeps none.  A frame-pointer walk from a
 * sample in such a function, or in the kernel under one of glibc's
 * system call wrappers that leaves rbp alone (fstat, stat, pread,
 * close), skips the function's caller.  So each top function reaches
 * glibc and the frameless leaves only through a function of its own
 * (work_net_send, fs_read_file, churn_step, hash_fnv1a, json_parse_value
 * ..), the frame that may be skipped, and the top function itself is
 * found.  Where glibc uses rbp as a general register the walk ends at
 * glibc's frame: the cancellable wrappers send, recv and open, and
 * malloc's insides (_int_malloc, _int_free).  perf --call-graph fp on
 * the -fp build then finds work_net in almost none of its thread's
 * samples, work_malloc_churn in a quarter and work_fs_syscalls in two
 * thirds; no frame-pointer unwinder can do better there, DWARF CFI for
 * glibc's frames can.
 *
 * After "pid N" it prints "ready" once every thread runs; the truth
 * lines start then.  SIGUSR1 writes a truth line at once, with "mark"
 * counting the SIGUSR1s taken: send one at each end of a profile window
 * and read the lines whose "mark" went up.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "common.h"

/* A function that must stay itself: in the stack, by its own name. */
#define WORK	__attribute__((noinline, noclone))
/* After a call: keeps it from being a tail call. */
#define BARRIER()	__asm__ volatile("" ::: "memory")

#define MSG_BYTES	256		/* net: one message */
#define FS_BYTES	4096		/* fs: the temp file's size */
#define HASH_BYTES	4096		/* hash: the buffer hashed */
#define HASH_BLOCK	256		/* hash: a block of it */
#define RING		512		/* malloc: blocks held at a time */
#define DOC_OBJECTS	200		/* parse: objects in the document */

enum kind { NET, FS, PARSE, HASH, MALLOC, NKINDS };

struct worker;
typedef void work_fn(struct worker *w, double until);

struct worker {
	const char *kind;	/* also the thread's name */
	const char *function;	/* its top work function */
	work_fn *work;
	double pct;		/* --share: percent of one core */
	pthread_t thread;
	clockid_t clock;	/* its CPU clock, while it runs */
	double exit_cpu_s;	/* its CPU time when it ended */
	_Atomic double work_cpu_s;	/* its CPU time inside 'work' */
	pid_t tid;
	_Atomic uint64_t rounds;	/* batches of work done */
	uint64_t sink;		/* keeps the work's results alive */
};

static work_fn work_net, work_fs_syscalls, work_parse_json, work_hash_fnv,
	work_malloc_churn;

static struct worker workers[NKINDS] = {
	[NET] = { "net", "work_net", work_net, 30 },
	[FS] = { "fs", "work_fs_syscalls", work_fs_syscalls, 15 },
	[PARSE] = { "parse", "work_parse_json", work_parse_json, 20 },
	[HASH] = { "hash", "work_hash_fnv", work_hash_fnv, 15 },
	[MALLOC] = { "malloc", "work_malloc_churn", work_malloc_churn, 10 },
};

static struct {
	double period_ms;
	double report_every;
	const char *dir;
	long sleepers;
} opt = {
	.period_ms = 10,
	.report_every = 1,
	.dir = "/tmp",
};

/* The idle threads, by name, and what each blocks in. */
enum idle { IDLE_EPOLL, IDLE_FUTEX, NIDLE };
static const char *const idle_names[NIDLE] = { "idle-epoll", "idle-futex" };
static pthread_t idle_threads[NIDLE];
static clockid_t idle_clocks[NIDLE];
static pid_t idle_tids[NIDLE];
static double idle_exit_cpu_s[NIDLE];

static atomic_int stop;
static pthread_barrier_t started;	/* every thread, and main */
static int net_fds[2];			/* the connection's two ends */
static char fs_path[4096];		/* the temp file */
static char *doc;			/* the JSON document */
static int epoll_fd, wake_fd;		/* idle-epoll waits on wake_fd */
static pthread_t *sleeper_threads;	/* --sleepers of them */
static pthread_mutex_t idle_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle_cond = PTHREAD_COND_INITIALIZER;
static unsigned marks;			/* SIGUSR1s taken */
static int joined;	/* the threads ended: their CPU is in exit_cpu_s */

/* ---- net: loopback TCP send and recv ---- */

static WORK ssize_t work_net_send(int fd, const char *buf, size_t n)
{
	ssize_t w = send(fd, buf, n, MSG_NOSIGNAL);

	BARRIER();
	return w;
}

static WORK ssize_t work_net_recv(int fd, char *buf, size_t n)
{
	ssize_t r = recv(fd, buf, n, 0);

	BARRIER();
	return r;
}

/* Send a message on one end and read it back on the other, 4 at a time. */
static WORK void work_net(struct worker *w, double until)
{
	char out[MSG_BYTES], in[MSG_BYTES];
	int i;

	memset(out, 'n', sizeof(out));
	do {
		for (i = 0; i < 4; i++) {
			size_t sent = 0, got = 0;

			while (sent < sizeof(out)) {
				ssize_t n = work_net_send(net_fds[0],
							  out + sent,
							  sizeof(out) - sent);

				if (n < 0 && errno != EINTR)
					die("send");
				if (n > 0)
					sent += n;
			}
			while (got < sent) {
				ssize_t n = work_net_recv(net_fds[1], in + got,
							  sizeof(in) - got);

				if (n < 0 && errno != EINTR)
					die("recv");
				if (n == 0) {
					errno = ECONNRESET;
					die("recv");
				}
				if (n > 0)
					got += n;
			}
			w->sink += (unsigned char)in[i];
		}
		atomic_fetch_add(&w->rounds, 1);
		BARRIER();
	} while (now() < until);
}

static void net_connect(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int lfd, one = 1, i;

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0)
		die("socket");
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)))
		die("bind");
	if (listen(lfd, 1))
		die("listen");
	if (getsockname(lfd, (struct sockaddr *)&sa, &len))
		die("getsockname");
	net_fds[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (net_fds[0] < 0)
		die("socket");
	if (connect(net_fds[0], (struct sockaddr *)&sa, sizeof(sa)))
		die("connect");
	net_fds[1] = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (net_fds[1] < 0)
		die("accept");
	if (close(lfd))
		die("close");
	/* Small writes: no Nagle wait for the receiver's delayed ACK. */
	for (i = 0; i < 2; i++)
		if (setsockopt(net_fds[i], IPPROTO_TCP, TCP_NODELAY, &one,
			       sizeof(one)))
			die("setsockopt TCP_NODELAY");
}

/* ---- fs: filesystem system calls on a small temp file ---- */

static WORK uint64_t fs_read_file(const char *path)
{
	char buf[FS_BYTES];
	struct stat st;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die(path);
	if (fstat(fd, &st))
		die("fstat");
	n = pread(fd, buf, sizeof(buf), 0);
	if (n < 0)
		die("pread");
	if (close(fd))
		die("close");
	BARRIER();
	return (uint64_t)st.st_size + (n ? (unsigned char)buf[n - 1] : 0);
}

static WORK uint64_t fs_stat_path(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		die(path);
	BARRIER();
	return (uint64_t)st.st_ino;
}

static WORK void work_fs_syscalls(struct worker *w, double until)
{
	int i;

	do {
		for (i = 0; i < 8; i++) {
			w->sink += fs_read_file(fs_path);
			w->sink += fs_stat_path(fs_path);
		}
		atomic_fetch_add(&w->rounds, 1);
		BARRIER();
	} while (now() < until);
}

static void fs_create(void)
{
	char buf[FS_BYTES];
	int fd, n;

	n = snprintf(fs_path, sizeof(fs_path), "%s/profile_work.XXXXXX",
		     opt.dir);
	if (n < 0 || (size_t)n >= sizeof(fs_path)) {
		errno = ENAMETOOLONG;
		die(opt.dir);
	}
	fd = mkostemp(fs_path, O_CLOEXEC);
	if (fd < 0)
		die(fs_path);
	memset(buf, 'f', sizeof(buf));
	if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
		die("write temp file");
	if (close(fd))
		die("close");
}

/* ---- parse: a JSON tokenizer over an in-memory document ---- */

static __attribute__((noreturn)) void bad_document(const char *p)
{
	fprintf(stderr, "%s: bad document at offset %td\n",
		program_invocation_short_name, p - doc);
	exit(1);
}

static inline const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	return p;
}

/* A string at 'p' (its opening quote), unescaped into out; past it. */
static WORK const char *json_parse_string(const char *p, char *out,
					  size_t cap, size_t *len)
{
	size_t n = 0;

	if (*p++ != '"')
		bad_document(p - 1);
	while (*p != '"') {
		char c = *p++;

		if (!c)
			bad_document(p - 1);
		if (c == '\\') {
			switch (*p++) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case '"': c = '"'; break;
			case '\\': c = '\\'; break;
			case '/': c = '/'; break;
			default: bad_document(p - 1);
			}
		}
		if (n < cap)
			out[n++] = c;
	}
	*len = n;
	BARRIER();
	return p + 1;
}

/* A number at 'p' (digits, an optional fraction); past it. */
static WORK const char *json_parse_number(const char *p, double *v)
{
	double x = 0, scale = 1;
	int neg = *p == '-';

	if (neg)
		p++;
	if (*p < '0' || *p > '9')
		bad_document(p);
	while (*p >= '0' && *p <= '9')
		x = x * 10 + (*p++ - '0');
	if (*p == '.') {
		p++;
		while (*p >= '0' && *p <= '9') {
			scale /= 10;
			x += (*p++ - '0') * scale;
		}
	}
	*v = neg ? -x : x;
	BARRIER();
	return p;
}

/* A scalar value: string, number, true, false or null; past it. */
static WORK const char *json_parse_value(const char *p, uint64_t *acc)
{
	char s[256];
	size_t len;
	double v;

	if (*p == '"') {
		p = json_parse_string(p, s, sizeof(s), &len);
		*acc += len + (len ? (unsigned char)s[len - 1] : 0);
	} else if (*p == '-' || (*p >= '0' && *p <= '9')) {
		p = json_parse_number(p, &v);
		*acc += (uint64_t)(v < 0 ? -v : v);
	} else if (!strncmp(p, "true", 4)) {
		p += 4;
		*acc += 1;
	} else if (!strncmp(p, "false", 5)) {
		p += 5;
	} else if (!strncmp(p, "null", 4)) {
		p += 4;
	} else {
		bad_document(p);
	}
	BARRIER();
	return p;
}

/* An object of scalar members at 'p' (its '{'); past it. */
static WORK const char *json_parse_object(const char *p, uint64_t *acc)
{
	char key[64];
	size_t len;

	p = skip_ws(p);
	if (*p++ != '{')
		bad_document(p - 1);
	p = skip_ws(p);
	while (*p != '}') {
		p = json_parse_string(p, key, sizeof(key), &len);
		*acc += len;
		p = skip_ws(p);
		if (*p++ != ':')
			bad_document(p - 1);
		p = json_parse_value(skip_ws(p), acc);
		p = skip_ws(p);
		if (*p == ',')
			p = skip_ws(p + 1);
		else if (*p != '}')
			bad_document(p);
	}
	BARRIER();
	return p + 1;
}

/* The document: an array of objects. */
static WORK uint64_t json_parse_document(const char *p)
{
	uint64_t acc = 0;

	p = skip_ws(p);
	if (*p++ != '[')
		bad_document(p - 1);
	p = skip_ws(p);
	while (*p != ']') {
		p = skip_ws(json_parse_object(p, &acc));
		if (*p == ',')
			p = skip_ws(p + 1);
		else if (*p != ']')
			bad_document(p);
	}
	BARRIER();
	return acc;
}

static WORK void work_parse_json(struct worker *w, double until)
{
	do {
		w->sink += json_parse_document(doc);
		atomic_fetch_add(&w->rounds, 1);
		BARRIER();
	} while (now() < until);
}

static void doc_build(void)
{
	size_t cap = DOC_OBJECTS * 256 + 16, n = 0;
	int i;

	doc = malloc(cap);
	if (!doc)
		die("malloc");
	n += snprintf(doc + n, cap - n, "[");
	for (i = 0; i < DOC_OBJECTS; i++)
		n += snprintf(doc + n, cap - n,
			      "%s\n {\"id\": %d, \"name\": \"item-%d\", "
			      "\"path\": \"a\\/b\\\\c\\\"d\\\"\", "
			      "\"price\": %d.%02d, \"delta\": -%d, "
			      "\"ok\": %s, \"note\": null, "
			      "\"text\": \"lorem ipsum dolor sit amet\\n\"}",
			      i ? "," : "", i, i * 7, i * 13, i % 100, i,
			      i % 2 ? "true" : "false");
	n += snprintf(doc + n, cap - n, "\n]\n");
	if (n >= cap) {
		errno = EOVERFLOW;
		die("document");
	}
	/* Parse it once here: a bad document fails at once, not in a thread. */
	json_parse_document(doc);
}

/* ---- hash: FNV-1a ---- */

static unsigned char hash_buf[HASH_BYTES];

/* The leaf: FNV-1a over one block. */
static WORK uint64_t hash_fnv1a_block(const unsigned char *p, size_t n,
				      uint64_t h)
{
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	BARRIER();
	return h;
}

/* FNV-1a over a buffer, a block at a time. */
static WORK uint64_t hash_fnv1a(const unsigned char *p, size_t n, uint64_t h)
{
	size_t off;

	for (off = 0; off < n; off += HASH_BLOCK)
		h = hash_fnv1a_block(p + off, n - off < HASH_BLOCK ?
				     n - off : HASH_BLOCK, h);
	BARRIER();
	return h;
}

static WORK void work_hash_fnv(struct worker *w, double until)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	int j;

	do {
		for (j = 0; j < 8; j++)
			h = hash_fnv1a(hash_buf, sizeof(hash_buf), h);
		atomic_fetch_add(&w->rounds, 1);
		BARRIER();
	} while (now() < until);
	w->sink += h;
}

static void hash_fill(void)
{
	size_t i;

	for (i = 0; i < sizeof(hash_buf); i++)
		hash_buf[i] = (unsigned char)(i * 31 + 7);
}

/* ---- malloc: allocation churn ---- */

static void *ring[RING];

/* Free one slot's block and put a new one of 'size' bytes there. */
static WORK void churn_step(unsigned slot, size_t size)
{
	char *p;

	free(ring[slot]);
	p = malloc(size);
	if (!p)
		die("malloc");
	p[0] = (char)slot;
	ring[slot] = p;
	BARRIER();
}

/* The sizes and slots, drawn once: the loop around malloc and free stays a few
 * instructions, so the thread's time is the allocator's, not ours. */
#define CHURN_PLAN 4096
static struct { uint32_t size, slot; } churn_plan[CHURN_PLAN];

static void churn_plan_fill(void)
{
	uint64_t x = 88172645463325252ULL;	/* xorshift state */
	unsigned i;

	for (i = 0; i < CHURN_PLAN; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		/* 3 in 4 small (tcache sizes), 1 in 4 up to 32 KiB */
		churn_plan[i].size = x & 3 ? 16 + (x >> 8) % 1008 : 1024 + (x >> 8) % (31 << 10);
		churn_plan[i].slot = (uint32_t)((x >> 40) % RING);
	}
}

static WORK void work_malloc_churn(struct worker *w, double until)
{
	static unsigned next;
	int i;

	do {
		for (i = 0; i < 256; i++, next = (next + 1) % CHURN_PLAN)
			churn_step(churn_plan[next].slot, churn_plan[next].size);
		atomic_fetch_add(&w->rounds, 1);
		BARRIER();
	} while (now() < until);
}

static void churn_free(void)
{
	unsigned i;

	for (i = 0; i < RING; i++)
		free(ring[i]);
}

/* ---- The threads ---- */

static double cpu_seconds(clockid_t clock)
{
	struct timespec ts;

	if (clock_gettime(clock, &ts))
		die("clock_gettime");
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_until(double t)
{
	struct timespec ts;
	int rc;

	ts.tv_sec = (time_t)t;
	ts.tv_nsec = (long)((t - ts.tv_sec) * 1e9);
	do
		rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	while (rc == EINTR);
	check(rc, "clock_nanosleep");
}

static void barrier_wait(void)
{
	int rc = pthread_barrier_wait(&started);

	if (rc != PTHREAD_BARRIER_SERIAL_THREAD)
		check(rc, "pthread_barrier_wait");
}

/*
 * Busy in the work function for its share of each period, then asleep
 * until the next.  The share is of CPU time, not wall time: a thread
 * that other work kept off the CPU is owed the difference, which it
 * works off in the periods after (at most a whole period each), so its
 * CPU rate stays at its share while the machine has room for it.  One
 * read of the thread's CPU clock per period does it; within the period
 * the work function watches the monotonic clock only (the vDSO: no
 * system call in the work functions' own samples).
 */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	double share = w->pct / 100, period = opt.period_ms / 1e3;
	double next, from_t, from_cpu;	/* owed 'share' of the time since */

	w->tid = gettid();
	check(pthread_getcpuclockid(pthread_self(), &w->clock),
	      "pthread_getcpuclockid");
	barrier_wait();
	next = from_t = now();
	from_cpu = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
	while (!atomic_load(&stop)) {
		double t = now(), cpu = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
		double owed = from_cpu + (t - from_t + period) * share - cpu;

		if (owed > period) {	/* forgive what one period cannot pay */
			from_cpu -= owed - period;
			owed = period;
		}
		if (owed > 0) {
			w->work(w, t + owed);
			atomic_store(&w->work_cpu_s, atomic_load(&w->work_cpu_s)
				     + cpu_seconds(CLOCK_THREAD_CPUTIME_ID) - cpu);
		}
		next += period;
		t = now();
		if (next < t - period)	/* far behind: no burst to catch up */
			next = t;
		sleep_until(next);
	}
	w->exit_cpu_s = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
	return NULL;
}

static void *idle_main(void *arg)
{
	int i = (int)(intptr_t)arg;
	struct epoll_event ev;

	idle_tids[i] = gettid();
	check(pthread_getcpuclockid(pthread_self(), &idle_clocks[i]),
	      "pthread_getcpuclockid");
	barrier_wait();
	if (i == IDLE_EPOLL) {
		while (!atomic_load(&stop))
			if (epoll_wait(epoll_fd, &ev, 1, -1) < 0 &&
			    errno != EINTR)
				die("epoll_wait");
	} else {
		check(pthread_mutex_lock(&idle_lock), "pthread_mutex_lock");
		while (!atomic_load(&stop))
			check(pthread_cond_wait(&idle_cond, &idle_lock),
			      "pthread_cond_wait");
		check(pthread_mutex_unlock(&idle_lock),
		      "pthread_mutex_unlock");
	}
	idle_exit_cpu_s[i] = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
	return NULL;
}

/* A --sleepers thread: started, then asleep in the futex wait until the end. */
static void *sleeper_main(void *arg)
{
	(void)arg;
	barrier_wait();
	check(pthread_mutex_lock(&idle_lock), "pthread_mutex_lock");
	while (!atomic_load(&stop))
		check(pthread_cond_wait(&idle_cond, &idle_lock),
		      "pthread_cond_wait");
	check(pthread_mutex_unlock(&idle_lock), "pthread_mutex_unlock");
	return NULL;
}

static int nstarted(void)
{
	int k, n = NIDLE + (int)opt.sleepers;

	for (k = 0; k < NKINDS; k++)
		n += workers[k].pct > 0;
	return n;
}

static void start_all(void)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int k, i;

	net_connect();
	fs_create();
	doc_build();
	hash_fill();
	wake_fd = eventfd(0, EFD_CLOEXEC);
	if (wake_fd < 0)
		die("eventfd");
	epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (epoll_fd < 0)
		die("epoll_create1");
	if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, wake_fd, &ev))
		die("epoll_ctl");
	check(pthread_barrier_init(&started, NULL, nstarted() + 1),
	      "pthread_barrier_init");
	for (k = 0; k < NKINDS; k++)
		if (workers[k].pct > 0)
			start_thread(&workers[k].thread, NULL, worker_main,
				     &workers[k], workers[k].kind, -1);
	for (i = 0; i < NIDLE; i++)
		start_thread(&idle_threads[i], NULL, idle_main,
			     (void *)(intptr_t)i, idle_names[i], -1);
	if (opt.sleepers > 0) {
		pthread_attr_t small;

		sleeper_threads = calloc((size_t)opt.sleepers,
					 sizeof(*sleeper_threads));
		if (!sleeper_threads)
			die("calloc");
		check(pthread_attr_init(&small), "pthread_attr_init");
		check(pthread_attr_setstacksize(&small, 64 * 1024),
		      "pthread_attr_setstacksize");
		for (i = 0; i < opt.sleepers; i++)
			start_thread(&sleeper_threads[i], &small, sleeper_main,
				     NULL, "sleeper", i);
		check(pthread_attr_destroy(&small), "pthread_attr_destroy");
	}
	barrier_wait();
	printf("ready\n");
	if (fflush(stdout))
		die("stdout");
}

static void stop_all(void)
{
	uint64_t one = 1;
	int k;

	atomic_store(&stop, 1);
	if (write(wake_fd, &one, sizeof(one)) != sizeof(one))
		die("write eventfd");
	check(pthread_mutex_lock(&idle_lock), "pthread_mutex_lock");
	check(pthread_cond_broadcast(&idle_cond), "pthread_cond_broadcast");
	check(pthread_mutex_unlock(&idle_lock), "pthread_mutex_unlock");
	for (k = 0; k < NKINDS; k++)
		if (workers[k].pct > 0)
			join_threads(&workers[k].thread, 1);
	join_threads(idle_threads, NIDLE);
	if (opt.sleepers > 0)
		join_threads(sleeper_threads, (int)opt.sleepers);
	free(sleeper_threads);
	joined = 1;
	if (close(epoll_fd) || close(wake_fd) || close(net_fds[0]) ||
	    close(net_fds[1]))
		die("close");
	if (unlink(fs_path))
		die(fs_path);
	churn_free();
	free(doc);
	check(pthread_barrier_destroy(&started), "pthread_barrier_destroy");
}

/* ---- Truth ---- */

/*
 * Start one thread's entry, with its CPU time ('clock' while it runs,
 * 'exit_cpu_s' once it ended); the caller ends it with its own keys.
 */
static void thread_truth(FILE *f, const char *kind, const char *name,
			 pid_t tid, clockid_t clock, double exit_cpu_s)
{
	fprintf(f, "{\"kind\":\"%s\",\"name\":\"%s\",\"tid\":%d,"
		"\"cpu_s\":%.6f", kind, name, (int)tid,
		joined ? exit_cpu_s : cpu_seconds(clock));
}

static void truth_write(const char *phase)
{
	FILE *f = truth_begin(phase);
	int k, i, first = 1;

	if (!f)
		return;
	fprintf(f, ",\"mark\":%u,\"period_ms\":%.3f,\"threads\":[", marks,
		opt.period_ms);
	for (k = 0; k < NKINDS; k++) {
		struct worker *w = &workers[k];

		if (!(w->pct > 0))
			continue;
		fputs(first ? "" : ",", f);
		first = 0;
		thread_truth(f, w->kind, w->kind, w->tid, w->clock,
			     w->exit_cpu_s);
		fprintf(f, ",\"function\":\"%s\",\"function_cpu_s\":%.6f,"
			"\"share_pct\":%.1f,\"rounds\":%" PRIu64 "}",
			w->function, atomic_load(&w->work_cpu_s), w->pct,
			atomic_load(&w->rounds));
	}
	for (i = 0; i < NIDLE; i++) {
		fputc(',', f);
		thread_truth(f, "idle", idle_names[i], idle_tids[i],
			     idle_clocks[i], idle_exit_cpu_s[i]);
		fputc('}', f);
	}
	fputc(',', f);
	thread_truth(f, "main", program_invocation_short_name, getpid(),
		     CLOCK_THREAD_CPUTIME_ID,
		     cpu_seconds(CLOCK_THREAD_CPUTIME_ID));
	fprintf(f, "}],\"sleepers\":%ld,\"process_cpu_s\":%.6f", opt.sleepers,
		cpu_seconds(CLOCK_PROCESS_CPUTIME_ID));
	truth_end();
}

static void on_signal(int sig)
{
	if (sig != SIGUSR1)
		return;
	marks++;
	truth_write("running");
}

/* ---- Options ---- */

/* --share KIND=PCT[,KIND=PCT..]: the shares given; the others keep theirs. */
static void parse_shares(const char *name, const char *arg)
{
	char *copy = strdup(arg), *save = NULL, *item;

	if (!copy)
		die("strdup");
	for (item = strtok_r(copy, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '=');
		int k;

		if (eq)
			*eq = '\0';
		for (k = 0; k < NKINDS; k++)
			if (!strcmp(item, workers[k].kind))
				break;
		if (!eq || k == NKINDS) {
			fprintf(stderr, "%s: bad --%s '%s': expected KIND=PCT "
				"with KIND net, fs, parse, hash or malloc\n",
				program_invocation_short_name, name, arg);
			exit(EXIT_USAGE);
		}
		workers[k].pct = parse_num(name, eq + 1, 0, 100);
	}
	free(copy);
}

static void option(int val, const char *name, const char *arg)
{
	switch (val) {
	case 'S':
		parse_shares(name, arg);
		break;
	case 'P':
		opt.period_ms = parse_num(name, arg, 1, 1000);
		break;
	case 'r':
		opt.report_every = parse_num(name, arg, 0.01, 3600);
		break;
	case 'd':
		opt.dir = arg;
		break;
	case 'n':
		opt.sleepers = (long)parse_num(name, arg, 0, 30000);
		break;
	}
}

static const struct option options[] = {
	{ "share", required_argument, NULL, 'S' },
	{ "period-ms", required_argument, NULL, 'P' },
	{ "report-every", required_argument, NULL, 'r' },
	{ "dir", required_argument, NULL, 'd' },
	{ "sleepers", required_argument, NULL, 'n' },
	{ NULL, 0, NULL, 0 }
};

static const struct cli cli = {
	.usage =
	"usage: profile_work [options]\n"
	"  --seconds N         exit after N seconds (default 60)\n"
	"  --truth FILE        append ground truth as JSON lines\n"
	"  --share KIND=PCT,.. percent of one core per kind: net, fs, parse,\n"
	"                      hash, malloc (default net=30,fs=15,parse=20,\n"
	"                      hash=15,malloc=10; 0: no such thread)\n"
	"  --period-ms N       pacing period (default 10)\n"
	"  --report-every S    seconds between truth lines (default 1);\n"
	"                      SIGUSR1 also writes one, with \"mark\" counted\n"
	"  --dir DIR           where the fs thread's temp file goes\n"
	"                      (default /tmp)\n"
	"  --sleepers N        N more threads, sleeper-0 .., asleep in a futex\n"
	"                      wait until the end (default 0)\n",
	.options = options,
	.option = option,
};

int main(int argc, char **argv)
{
	static const int extra[] = { SIGUSR1, 0 };

	parse_options(argc, argv, &cli);
	churn_plan_fill();
	target_begin(extra);
	start_all();
	main_loop(&(struct main_loop){ .report = truth_write,
				       .phase = "running",
				       .signal = on_signal,
				       .every = opt.report_every });
	stop_all();
	truth_write("exit");
	truth_close();
	return 0;
}

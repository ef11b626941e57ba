/*
 * lock_kinds: threads that wait on locks of a known kind, with the time
 * they wait and hold each lock measured by the threads themselves: the
 * truth `vitals locks` is checked against.
 *
 * --mode mutex    --threads workers ("worker-0" ..) take one mutex,
 *                 held_lock, worker-i holding it (i + 1) x --hold-us: the
 *                 holders' shares are 1:2:3:.. by design; with
 *                 --heap-object N the mutex is not held_lock but lies 64
 *                 bytes into an N-byte object from malloc (a lock inside a
 *                 heap object; the truth gives its address and the object's)
 * --mode two      each turn a worker takes lock_a (held --hold-us) or
 *                 lock_b (held --hold-b-us), at random: two contended
 *                 mutexes whose shares of the waiting the truth gives
 * --mode rwlock   worker-0 .. take held_rwlock for writing (held --hold-us),
 *                 "reader-0" .. (--readers) for reading, briefly
 * --mode idle     a pool of workers in pthread_cond_wait on an empty queue
 *                 (idle_cond): nothing to do, never contention
 * --mode malloc   workers that malloc and free in a tight loop: with
 *                 MALLOC_ARENA_MAX=1 they wait on the one arena's lock
 *
 * Between turns a worker naps --nap-us, so a waiter it woke gets the
 * lock (glibc's mutex is not fair).  The truth, per lock, gives the
 * seconds its callers spent in the lock call (wait_s) and, per worker, the
 * seconds it held it (hold_s): shares of time, as vitals's are.
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

#define MAX_THREADS 64

enum mode { MODE_MUTEX, MODE_TWO, MODE_RWLOCK, MODE_IDLE, MODE_MALLOC };

static struct {
	enum mode mode;
	int threads;
	int readers;
	double hold_us;
	double hold_b_us;
	double nap_us;
	int heap_object;   /* > 0: the mutex of mode mutex lies in a malloc'd object this big */
} opt = {
	.mode = MODE_MUTEX,
	.threads = 4,
	.readers = 2,
	.hold_us = 1000,
	.hold_b_us = 300,
	.nap_us = 100,
};

/* The locks: static objects, so vitals names them from the symbol table. */
pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t *mutex_lock = &held_lock;   /* the one mode mutex takes */
static char *heap_object;                          /* --heap-object: the object it lies in */
#define HEAP_OBJECT_LOCK_OFF 64
pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t lock_b = PTHREAD_MUTEX_INITIALIZER;
pthread_rwlock_t held_rwlock = PTHREAD_RWLOCK_INITIALIZER;
pthread_mutex_t idle_mutex = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t idle_cond = PTHREAD_COND_INITIALIZER;

/* What each thread measured, in ns; [0] lock (a), [1] lock b. */
struct account {
	_Atomic uint64_t wait_ns[2];
	_Atomic uint64_t hold_ns[2];
	_Atomic uint64_t turns;
};

static pthread_t threads[2 * MAX_THREADS];
static struct account accounts[2 * MAX_THREADS];
static atomic_int stop;
static _Atomic uint64_t sink;

static uint64_t ns_now(void)
{
	return (uint64_t)(now() * 1e9);
}

static uint64_t compute(uint64_t h, double us)
{
	double until = now() + us / 1e6;
	int i;

	do {
		for (i = 0; i < 64; i++)
			h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ULL + i;
	} while (now() < until);
	return h;
}

static void nap(void)
{
	struct timespec ts = { 0, (long)(opt.nap_us * 1000) };

	if (ts.tv_nsec)
		clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
}

/* Take m, hold it us, count both into a->..[k]. */
static uint64_t turn(pthread_mutex_t *m, double us, struct account *a, int k, uint64_t h)
{
	uint64_t w0 = ns_now(), w1, w2;

	check(pthread_mutex_lock(m), "pthread_mutex_lock");
	w1 = ns_now();
	h = compute(h, us);
	w2 = ns_now();
	check(pthread_mutex_unlock(m), "pthread_mutex_unlock");
	atomic_fetch_add(&a->wait_ns[k], w1 - w0);
	atomic_fetch_add(&a->hold_ns[k], w2 - w1);
	return h;
}

static void *mutex_worker(void *arg)
{
	struct account *a = arg;
	int i = (int)(a - accounts);
	uint64_t h = 1;

	while (!atomic_load(&stop)) {
		h = turn(mutex_lock, opt.hold_us * (i + 1), a, 0, h);
		atomic_fetch_add(&a->turns, 1);
		nap();
	}
	atomic_fetch_xor(&sink, h);
	return NULL;
}

static void *two_worker(void *arg)
{
	struct account *a = arg;
	uint64_t h = 1;

	uint64_t pick = (uint64_t)(a - accounts) * 0x9e3779b97f4a7c15ULL + 1;

	while (!atomic_load(&stop)) {
		/* each turn on one of the two, at random: both stay contended */
		pick ^= pick << 13;
		pick ^= pick >> 7;
		pick ^= pick << 17;
		if (pick & 1)
			h = turn(&lock_a, opt.hold_us, a, 0, h);
		else
			h = turn(&lock_b, opt.hold_b_us, a, 1, h);
		atomic_fetch_add(&a->turns, 1);
		nap();
	}
	atomic_fetch_xor(&sink, h);
	return NULL;
}

static void *rw_writer(void *arg)
{
	struct account *a = arg;
	uint64_t h = 1, w0, w1, w2;

	while (!atomic_load(&stop)) {
		w0 = ns_now();
		check(pthread_rwlock_wrlock(&held_rwlock), "pthread_rwlock_wrlock");
		w1 = ns_now();
		h = compute(h, opt.hold_us);
		w2 = ns_now();
		check(pthread_rwlock_unlock(&held_rwlock), "pthread_rwlock_unlock");
		atomic_fetch_add(&a->wait_ns[0], w1 - w0);
		atomic_fetch_add(&a->hold_ns[0], w2 - w1);
		atomic_fetch_add(&a->turns, 1);
		nap();
	}
	atomic_fetch_xor(&sink, h);
	return NULL;
}

static void *rw_reader(void *arg)
{
	struct account *a = arg;
	uint64_t h = 1, w0, w1;

	while (!atomic_load(&stop)) {
		w0 = ns_now();
		check(pthread_rwlock_rdlock(&held_rwlock), "pthread_rwlock_rdlock");
		w1 = ns_now();
		h = compute(h, 20);
		check(pthread_rwlock_unlock(&held_rwlock), "pthread_rwlock_unlock");
		atomic_fetch_add(&a->wait_ns[0], w1 - w0);
		atomic_fetch_add(&a->turns, 1);
		nap();
	}
	atomic_fetch_xor(&sink, h);
	return NULL;
}

static void *idle_worker(void *arg)
{
	struct account *a = arg;

	check(pthread_mutex_lock(&idle_mutex), "pthread_mutex_lock");
	while (!atomic_load(&stop))
		check(pthread_cond_wait(&idle_cond, &idle_mutex), "pthread_cond_wait");
	check(pthread_mutex_unlock(&idle_mutex), "pthread_mutex_unlock");
	atomic_fetch_add(&a->turns, 1);
	return NULL;
}

static void *malloc_worker(void *arg)
{
	struct account *a = arg;
	void *keep[64] = { 0 };
	unsigned i = 0;

	while (!atomic_load(&stop)) {
		free(keep[i % 64]);
		keep[i % 64] = malloc(64 + (i * 37) % 4000);
		if (!keep[i % 64])
			die("malloc");
		memset(keep[i % 64], (int)i, 16);
		i++;
		if ((i & 1023) == 0)
			atomic_fetch_add(&a->turns, 1024);
	}
	for (i = 0; i < 64; i++)
		free(keep[i]);
	return NULL;
}

static int nthreads(void)
{
	return opt.mode == MODE_RWLOCK ? opt.threads + opt.readers : opt.threads;
}

static void start_workers(void)
{
	int i;

	for (i = 0; i < opt.threads; i++) {
		void *(*fn)(void *) = opt.mode == MODE_MUTEX ? mutex_worker : opt.mode == MODE_TWO ? two_worker
				      : opt.mode == MODE_RWLOCK ? rw_writer : opt.mode == MODE_IDLE ? idle_worker
				      : malloc_worker;

		start_thread(&threads[i], NULL, fn, &accounts[i], "worker", i);
	}
	for (i = 0; opt.mode == MODE_RWLOCK && i < opt.readers; i++)
		start_thread(&threads[opt.threads + i], NULL, rw_reader, &accounts[opt.threads + i], "reader", i);
}

static void stop_workers(void)
{
	atomic_store(&stop, 1);
	if (opt.mode == MODE_IDLE) {
		check(pthread_mutex_lock(&idle_mutex), "pthread_mutex_lock");
		check(pthread_cond_broadcast(&idle_cond), "pthread_cond_broadcast");
		check(pthread_mutex_unlock(&idle_mutex), "pthread_mutex_unlock");
	}
	join_threads(threads, nthreads());
}

static const char *const mode_names[] = { "mutex", "two", "rwlock", "idle", "malloc" };

static void truth_write(const char *phase)
{
	FILE *f = truth_begin(phase);
	int i, k;

	if (!f)
		return;
	if (heap_object)
		fprintf(f, ",\"heap_object\":\"%p\",\"heap_object_size\":%d,\"lock_addr\":\"%p\"",
			(void *)heap_object, opt.heap_object, (void *)mutex_lock);
	fprintf(f, ",\"mode\":\"%s\",\"threads\":%d,\"hold_us\":%.1f,\"hold_b_us\":%.1f,\"nap_us\":%.1f,"
		"\"workers\":[", mode_names[opt.mode], nthreads(), opt.hold_us, opt.hold_b_us, opt.nap_us);
	for (i = 0; i < nthreads(); i++) {
		fprintf(f, "%s{\"name\":\"%s-%d\",\"turns\":%" PRIu64, i ? "," : "",
			i < opt.threads ? "worker" : "reader", i < opt.threads ? i : i - opt.threads,
			atomic_load(&accounts[i].turns));
		for (k = 0; k < 2; k++)
			fprintf(f, ",\"wait_s_%c\":%.6f,\"hold_s_%c\":%.6f", 'a' + k,
				(double)atomic_load(&accounts[i].wait_ns[k]) / 1e9, 'a' + k,
				(double)atomic_load(&accounts[i].hold_ns[k]) / 1e9);
		fputc('}', f);
	}
	fputc(']', f);
	truth_end();
}

static void option(int val, const char *name, const char *arg)
{
	size_t i;

	switch (val) {
	case 'm':
		for (i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++)
			if (!strcmp(arg, mode_names[i]))
				break;
		if (i == sizeof(mode_names) / sizeof(mode_names[0])) {
			fprintf(stderr, "lock_kinds: --mode: mutex, two, rwlock, idle or malloc, not '%s'\n", arg);
			exit(EXIT_USAGE);
		}
		opt.mode = (enum mode)i;
		break;
	case 'n':
		opt.threads = parse_num(name, arg, 1, MAX_THREADS);
		break;
	case 'r':
		opt.readers = parse_num(name, arg, 0, MAX_THREADS);
		break;
	case 'H':
		opt.hold_us = parse_num(name, arg, 0, 1e6);
		break;
	case 'B':
		opt.hold_b_us = parse_num(name, arg, 0, 1e6);
		break;
	case 'N':
		opt.nap_us = parse_num(name, arg, 0, 999999);
		break;
	case 'O':
		opt.heap_object = parse_num(name, arg, HEAP_OBJECT_LOCK_OFF + 64, 1 << 20);
		break;
	}
}

static const struct option options[] = {
	{ "mode", required_argument, NULL, 'm' },
	{ "threads", required_argument, NULL, 'n' },
	{ "readers", required_argument, NULL, 'r' },
	{ "hold-us", required_argument, NULL, 'H' },
	{ "hold-b-us", required_argument, NULL, 'B' },
	{ "nap-us", required_argument, NULL, 'N' },
	{ "heap-object", required_argument, NULL, 'O' },
	{ NULL, 0, NULL, 0 }
};

static const struct cli cli = {
	.usage =
	"usage: lock_kinds [options]\n"
	"  --seconds N     exit after N seconds (default 60)\n"
	"  --truth FILE    append ground truth as JSON lines\n"
	"  --mode M        mutex, two, rwlock, idle or malloc (default mutex)\n"
	"  --threads N     workers (default 4, max 64)\n"
	"  --readers N     rwlock readers (default 2)\n"
	"  --hold-us N     time a worker holds the lock (worker-i: (i+1) x N in\n"
	"                  mode mutex; lock_a in mode two) (default 1000)\n"
	"  --hold-b-us N   time lock_b is held in mode two (default 300)\n"
	"  --nap-us N      sleep between turns (default 100)\n"
	"  --heap-object N mode mutex: the mutex lies 64 bytes into an N-byte\n"
	"                  object from malloc (128 to 1048576)\n",
	.options = options,
	.option = option,
};

int main(int argc, char **argv)
{
	parse_options(argc, argv, &cli);
	if (opt.heap_object) {
		heap_object = calloc(1, (size_t)opt.heap_object);
		if (!heap_object)
			return 1;
		mutex_lock = (pthread_mutex_t *)(void *)(heap_object + HEAP_OBJECT_LOCK_OFF);
		check(pthread_mutex_init(mutex_lock, NULL), "pthread_mutex_init");
	}
	target_begin(NULL);
	start_workers();
	main_loop(&(struct main_loop){ .report = truth_write, .phase = "running" });
	stop_workers();
	truth_write("exit");
	truth_close();
	return 0;
}

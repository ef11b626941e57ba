/*
 * lock_convoy: a pool of workers taking turns on one contended mutex.
 *
 * --threads workers, named "worker-0" .., loop: lock one shared pthread
 * mutex, compute for --hold-us microseconds, unlock, compute for
 * --outside-us, then nap for --nap-us as a poll loop waits between
 * items.  The workers ask for more lock time than there is, so the lock
 * is always held: at any instant one worker computes and most others
 * sleep in futex_wait until their turn.  The workers show near-equal
 * CPU, a process total near one core however many cores there are, and
 * high voluntary context switch rates (field report 000, the cost of
 * MALLOC_ARENA_MAX=2).
 *
 * The hold must be long next to a handoff.  Each handoff costs a futex
 * wake and the wakeup of the thread woken, which /proc shows as R, and
 * the nap is spent in hrtimer_nanosleep.  With a 100 us hold, 4 workers
 * on 2 cores (a 2-vCPU VM) hand the lock over ~7800 times a second, the
 * lock idle a fifth of the time between handoffs, and are R in ~60% of
 * samples (for 0.28 cores and 12% run-queue wait) and in futex wait in
 * only ~25%: busy, but not the picture of field report 000.  With the
 * 2000 us default, one worker is R and the other three sit in futex
 * wait (~65-70% of each worker's samples), with ~240 voluntary switches
 * a second each, 0.25 cores each and 1.0 in total.
 *
 * The nap matters: a glibc mutex is not fair, and a worker that came
 * straight back would usually take the lock again before the waiter it
 * woke got to run.  Napping hands the lock to that waiter, which gives
 * the turn-taking of a real convoy.  --nap-us 0 shows the unfair case.
 *
 * The truth gives the lock acquisitions in total and per worker, in
 * thread order (worker-N is acquisitions[N]).
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdint.h>

#include "common.h"

#define MAX_THREADS	256

static struct {
	int threads;
	double hold_us;
	double outside_us;
	double nap_us;
} opt = {
	.threads = 4,
	.hold_us = 2000,
	.outside_us = 10,
	.nap_us = 50,
};

static pthread_t workers[MAX_THREADS];
static _Atomic uint64_t acquisitions[MAX_THREADS];
static pthread_mutex_t convoy_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int stop;
static _Atomic uint64_t sink;	/* keeps the computation alive */

/* Compute (a hash chain: pure CPU, never sleeps) for 'us' microseconds. */
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

/* Sleep --nap-us; the timer slack (50 us by default) comes on top. */
static void nap(void)
{
	struct timespec ts = { 0, (long)(opt.nap_us * 1000) };
	int rc;

	if (!ts.tv_nsec)
		return;
	rc = clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
	if (rc && rc != EINTR)
		check(rc, "clock_nanosleep");
}

static void *worker_main(void *arg)
{
	_Atomic uint64_t *count = arg;
	uint64_t h = 1;

	while (!atomic_load(&stop)) {
		check(pthread_mutex_lock(&convoy_lock), "pthread_mutex_lock");
		h = compute(h, opt.hold_us);
		atomic_fetch_add(count, 1);
		check(pthread_mutex_unlock(&convoy_lock),
		      "pthread_mutex_unlock");
		h = compute(h, opt.outside_us);
		nap();
	}
	atomic_fetch_xor(&sink, h);
	return NULL;
}

static void start_workers(void)
{
	int i;

	for (i = 0; i < opt.threads; i++)
		start_thread(&workers[i], NULL, worker_main, &acquisitions[i],
			     "worker", i);
}

static void stop_workers(void)
{
	atomic_store(&stop, 1);
	join_threads(workers, opt.threads);
}

static void truth_write(const char *phase)
{
	FILE *f = truth_begin(phase);
	uint64_t total = 0;
	int i;

	if (!f)
		return;
	fprintf(f, ",\"threads\":%d,\"hold_us\":%.1f,\"outside_us\":%.1f,"
		"\"nap_us\":%.1f,\"acquisitions\":[", opt.threads, opt.hold_us,
		opt.outside_us, opt.nap_us);
	for (i = 0; i < opt.threads; i++) {
		uint64_t n = atomic_load(&acquisitions[i]);

		fprintf(f, "%s%" PRIu64, i ? "," : "", n);
		total += n;
	}
	fprintf(f, "],\"lock_acquisitions\":%" PRIu64, total);
	truth_end();
}

static void option(int val, const char *name, const char *arg)
{
	switch (val) {
	case 'n':
		opt.threads = parse_num(name, arg, 1, MAX_THREADS);
		break;
	case 'H':
		opt.hold_us = parse_num(name, arg, 0, 1e6);
		break;
	case 'o':
		opt.outside_us = parse_num(name, arg, 0, 1e6);
		break;
	case 'N':
		opt.nap_us = parse_num(name, arg, 0, 999999);
		break;
	}
}

static const struct option options[] = {
	{ "threads", required_argument, NULL, 'n' },
	{ "hold-us", required_argument, NULL, 'H' },
	{ "outside-us", required_argument, NULL, 'o' },
	{ "nap-us", required_argument, NULL, 'N' },
	{ NULL, 0, NULL, 0 }
};

static const struct cli cli = {
	.usage =
	"usage: lock_convoy [options]\n"
	"  --seconds N     exit after N seconds (default 60)\n"
	"  --truth FILE    append ground truth as JSON lines\n"
	"  --threads N     workers sharing the lock (default 4, max 256)\n"
	"  --hold-us N     computation inside the lock (default 2000)\n"
	"  --outside-us N  computation outside the lock (default 10)\n"
	"  --nap-us N      then sleep N us before the next turn (default 50)\n",
	.options = options,
	.option = option,
};

int main(int argc, char **argv)
{
	parse_options(argc, argv, &cli);
	target_begin(NULL);
	start_workers();
	main_loop(&(struct main_loop){ .report = truth_write,
				       .phase = "running" });
	stop_workers();
	truth_write("exit");
	truth_close();
	return 0;
}

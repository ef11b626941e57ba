/*
 * load_change: idle first, then busy, so that averages since start lie.
 *
 * For --idle-seconds every thread sleeps.  Then --busy-threads threads,
 * named "burn-0" .., compute without pause until exit.  ps's %CPU is CPU
 * time divided by time since start, so right after the change it reads
 * far below the current rate and only creeps towards it (field report
 * 002); a rate from two samples shows the change at once.  The burners
 * exist from the start, blocked on a condition variable, so the thread
 * count does not change with the load.
 *
 * The truth gives the phase ("idle", then "busy") and the time the busy
 * phase began.  While busy the process uses busy_threads cores, as far as
 * the machine has them.
 */
#include <stdatomic.h>
#include <stdint.h>

#include "common.h"

#define MAX_THREADS	1024

static struct {
	double idle_seconds;
	int busy_threads;
} opt = {
	.idle_seconds = 10,
	.busy_threads = 1,
};

static pthread_t burners[MAX_THREADS];
static pthread_mutex_t phase_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t phase_cond = PTHREAD_COND_INITIALIZER;
static atomic_int busy;
static atomic_int stop;
static double busy_since = -1;
static _Atomic uint64_t sink;	/* keeps the computation alive */

/* Block until the busy phase (or the end), then compute until the end. */
static void *burner_main(void *arg)
{
	uint64_t h = 1;
	int i;

	(void)arg;
	check(pthread_mutex_lock(&phase_lock), "pthread_mutex_lock");
	while (!atomic_load(&busy) && !atomic_load(&stop))
		check(pthread_cond_wait(&phase_cond, &phase_lock),
		      "pthread_cond_wait");
	check(pthread_mutex_unlock(&phase_lock), "pthread_mutex_unlock");
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		for (i = 0; i < 4096; i++)
			h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ULL + i;
	atomic_fetch_xor(&sink, h);
	return NULL;
}

static void start_burners(void)
{
	int i;

	for (i = 0; i < opt.busy_threads; i++)
		start_thread(&burners[i], NULL, burner_main, NULL, "burn", i);
}

/* Set 'flag' and wake every burner to look at it. */
static void announce(atomic_int *flag)
{
	check(pthread_mutex_lock(&phase_lock), "pthread_mutex_lock");
	atomic_store(flag, 1);
	check(pthread_cond_broadcast(&phase_cond), "pthread_cond_broadcast");
	check(pthread_mutex_unlock(&phase_lock), "pthread_mutex_unlock");
}

/* The change from idle to busy, 't' seconds after the start. */
static void become_busy(double t)
{
	busy_since = t;
	announce(&busy);
}

static void stop_burners(void)
{
	announce(&stop);
	join_threads(burners, opt.busy_threads);
}

static void truth_write(const char *phase)
{
	char since[32] = "null";
	FILE *f;

	if (busy_since >= 0)
		snprintf(since, sizeof(since), "%.3f", busy_since);
	if (!phase)
		phase = busy_since >= 0 ? "busy" : "idle";
	f = truth_begin(phase);
	if (!f)
		return;
	fprintf(f, ",\"idle_seconds\":%.3f,\"busy_threads\":%d,"
		"\"busy_since_t\":%s", opt.idle_seconds, opt.busy_threads,
		since);
	truth_end();
}

static void option(int val, const char *name, const char *arg)
{
	switch (val) {
	case 'i':
		opt.idle_seconds = parse_num(name, arg, 0, 1e7);
		break;
	case 'n':
		opt.busy_threads = parse_num(name, arg, 1, MAX_THREADS);
		break;
	}
}

static const struct option options[] = {
	{ "idle-seconds", required_argument, NULL, 'i' },
	{ "busy-threads", required_argument, NULL, 'n' },
	{ NULL, 0, NULL, 0 }
};

static const struct cli cli = {
	.usage =
	"usage: load_change [options]\n"
	"  --seconds N       exit after N seconds (default 60)\n"
	"  --truth FILE      append ground truth as JSON lines\n"
	"  --idle-seconds N  sleep for N seconds first (default 10)\n"
	"  --busy-threads N  then burn CPU on N threads (default 1)\n",
	.options = options,
	.option = option,
};

int main(int argc, char **argv)
{
	parse_options(argc, argv, &cli);
	target_begin(NULL);
	start_burners();
	main_loop(&(struct main_loop){ .report = truth_write,
				       .change = become_busy,
				       .change_at = opt.idle_seconds });
	stop_burners();
	truth_write("exit");
	truth_close();
	return 0;
}

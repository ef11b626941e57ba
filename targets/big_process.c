/*
 * big_process: a large process for benchmarks, built in a few seconds.
 *
 * It touches --resident-mb of anonymous memory (one mapping, faulted in
 * and then written once per page), creates --mappings separate one-page anonymous mappings with
 * a hole after each so that the kernel cannot merge them, and starts
 * --threads threads, "sleeper-0" .., with 64 KiB stacks that block on a
 * condition variable until exit.  /proc/PID/maps then has at least
 * mappings + 2 x threads lines (each stack comes with its guard page) and
 * /proc/PID/task as many entries as threads + 1: what it costs vitals to
 * sample such a process is what the benchmarks measure.
 *
 * The default --resident-mb of 2048 is the one exception to the 1.5 GB
 * bound on the targets: benchmarks need a process that large.
 *
 * With --churn N, a spawner starts N short-lived threads a second, "churn-0"
 * .., each of which burns about 15 ms of CPU and exits: a thread table that
 * grows and shrinks under a profiler, as a thread-per-request server's.
 *
 * The truth says "starting" until everything is in place, then "ready";
 * its counts are what is in place at the time.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>

#include "common.h"

#define STACK_BYTES	(64 << 10)
#define POPULATE_CHUNK	((size_t)64 << 20)

static struct {
	int threads;
	int churn;
	long mappings;
	size_t resident_bytes;
} opt = {
	.threads = 1000,
	.mappings = 5000,
	.resident_bytes = (size_t)2048 << 20,
};

static pthread_t *sleepers;
static int nsleepers;
static pthread_mutex_t sleep_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sleep_cond = PTHREAD_COND_INITIALIZER;
static atomic_int stop;
static char *resident;
static size_t touched;		/* bytes of 'resident' touched so far */
static char *mapped;		/* first of the one-page mappings */
static long nmapped;
static size_t page;
static double startup_seconds = -1;
static pthread_t spawner;
static atomic_int churning;	/* short-lived threads alive now */
#define CHURN_SECONDS 0.015	/* what each of them burns */
static atomic_long churned;	/* short-lived threads started so far */
static double next_report;

static void truth_write(const char *phase)
{
	char startup[32] = "null";
	FILE *f = truth_begin(phase);

	if (!f)
		return;
	if (startup_seconds >= 0)
		snprintf(startup, sizeof(startup), "%.3f", startup_seconds);
	fprintf(f, ",\"threads\":%d,\"stack_bytes\":%d,\"mappings\":%ld,"
		"\"mapping_bytes\":%zu,\"resident_bytes\":%zu,"
		"\"startup_seconds\":%s,\"churned\":%ld", nsleepers, STACK_BYTES, nmapped,
		nmapped * page, touched, startup, atomic_load(&churned));
	truth_end();
}

/* Keep reporting once a second while starting up. */
static void progress(void)
{
	double t = now();

	if (t < next_report)
		return;
	truth_write("starting");
	next_report = t + 1;
}

/* Fault a range in and put a non-zero byte in each of its pages. */
static void populate(char *p, size_t len)
{
	size_t off;

#ifdef MADV_POPULATE_WRITE
	/* One call instead of a fault per page; before Linux 5.14, EINVAL. */
	if (madvise(p, len, MADV_POPULATE_WRITE) && errno != EINVAL)
		die("madvise");
#endif
	for (off = 0; off < len; off += page)
		p[off] = (char)(off / page) | 1;
}

static void make_resident(void)
{
	size_t len;

	if (!opt.resident_bytes)
		return;
	resident = mmap(NULL, opt.resident_bytes, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (resident == MAP_FAILED)
		die("mmap resident memory");
	for (; touched < opt.resident_bytes; touched += len) {
		len = opt.resident_bytes - touched;
		if (len > POPULATE_CHUNK)
			len = POPULATE_CHUNK;
		populate(resident + touched, len);
		progress();
	}
}

/*
 * Find room for a page and a hole per mapping, give the room back, then
 * map every other page in it.  Nothing else maps meanwhile: no thread has
 * been started yet.
 */
static void make_mappings(void)
{
	size_t span = 2 * page * opt.mappings;

	if (!opt.mappings)
		return;
	mapped = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		      -1, 0);
	if (mapped == MAP_FAILED)
		die("mmap reservation");
	if (munmap(mapped, span))
		die("munmap reservation");
	for (nmapped = 0; nmapped < opt.mappings; nmapped++) {
		char *want = mapped + 2 * page * nmapped;
		char *p = mmap(want, page, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS |
			       MAP_FIXED_NOREPLACE, -1, 0);

		if (p == MAP_FAILED)
			die("mmap (is vm.max_map_count too low?)");
		if (p != want) {
			errno = EEXIST;
			die("mmap did not honour MAP_FIXED_NOREPLACE");
		}
		*p = 1;
		progress();
	}
}

static void unmap_all(void)
{
	long i;

	for (i = 0; i < nmapped; i++)
		if (munmap(mapped + 2 * page * i, page))
			die("munmap");
	if (resident && munmap(resident, opt.resident_bytes))
		die("munmap");
}

static void *sleeper_main(void *arg)
{
	(void)arg;
	check(pthread_mutex_lock(&sleep_lock), "pthread_mutex_lock");
	while (!atomic_load(&stop))
		check(pthread_cond_wait(&sleep_cond, &sleep_lock),
		      "pthread_cond_wait");
	check(pthread_mutex_unlock(&sleep_lock), "pthread_mutex_unlock");
	return NULL;
}

static void start_sleepers(void)
{
	pthread_attr_t attr;

	sleepers = calloc(opt.threads ? opt.threads : 1, sizeof(*sleepers));
	if (!sleepers)
		die("calloc");
	check(pthread_attr_init(&attr), "pthread_attr_init");
	check(pthread_attr_setstacksize(&attr, STACK_BYTES),
	      "pthread_attr_setstacksize");
	for (; nsleepers < opt.threads; nsleepers++) {
		start_thread(&sleepers[nsleepers], &attr, sleeper_main, NULL,
			     "sleeper", nsleepers);
		progress();
	}
	check(pthread_attr_destroy(&attr), "pthread_attr_destroy");
}

static void stop_sleepers(void)
{
	check(pthread_mutex_lock(&sleep_lock), "pthread_mutex_lock");
	atomic_store(&stop, 1);
	check(pthread_cond_broadcast(&sleep_cond), "pthread_cond_broadcast");
	check(pthread_mutex_unlock(&sleep_lock), "pthread_mutex_unlock");
	join_threads(sleepers, nsleepers);
	free(sleepers);
}

/* A short-lived thread: about 15 ms of CPU, then gone. */
static void *churn_main(void *arg)
{
	volatile uint64_t x = (uint64_t)(uintptr_t)arg;
	double end = now() + CHURN_SECONDS;
	char name[16];

	/* named by itself: a detached thread may be gone before its creator could name it */
	snprintf(name, sizeof(name), "churn-%d", (int)(x % 100000));
	pthread_setname_np(pthread_self(), name);

	while (now() < end)
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ull + 1;
	atomic_fetch_sub(&churning, 1);
	return NULL;
}

static void *spawner_main(void *arg)
{
	pthread_attr_t attr;
	long gap_ns = 1000000000L / opt.churn;
	struct timespec pause = { gap_ns / 1000000000L, gap_ns % 1000000000L };

	(void)arg;
	check(pthread_attr_init(&attr), "pthread_attr_init");
	check(pthread_attr_setstacksize(&attr, STACK_BYTES), "pthread_attr_setstacksize");
	check(pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED),
	      "pthread_attr_setdetachstate");
	while (!atomic_load(&stop)) {
		pthread_t t;
		long n = atomic_fetch_add(&churned, 1);

		atomic_fetch_add(&churning, 1);
		check(pthread_create(&t, &attr, churn_main, (void *)(uintptr_t)n), "pthread_create");
		nanosleep(&pause, NULL);
	}
	check(pthread_attr_destroy(&attr), "pthread_attr_destroy");
	while (atomic_load(&churning) > 0)   /* detached: wait for the last to end */
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	return NULL;
}

static void option(int val, const char *name, const char *arg)
{
	switch (val) {
	case 'n':
		opt.threads = parse_num(name, arg, 0, 30000);
		break;
	case 'c':
		opt.churn = parse_num(name, arg, 0, 1000);
		break;
	case 'm':
		opt.mappings = parse_num(name, arg, 0, 60000);
		break;
	case 'r':
		opt.resident_bytes = parse_num(name, arg, 0, 1 << 20) *
				     (1 << 20);
		break;
	}
}

static const struct option options[] = {
	{ "threads", required_argument, NULL, 'n' },
	{ "churn", required_argument, NULL, 'c' },
	{ "mappings", required_argument, NULL, 'm' },
	{ "resident-mb", required_argument, NULL, 'r' },
	{ NULL, 0, NULL, 0 }
};

static const struct cli cli = {
	.usage =
	"usage: big_process [options]\n"
	"  --seconds N      exit after N seconds (default 60)\n"
	"  --truth FILE     append ground truth as JSON lines\n"
	"  --threads N      sleeping threads, 64 KiB stacks (default 1000)\n"
	"  --churn N        N short-lived threads a second, ~15 ms of CPU each (default 0)\n"
	"  --mappings N     separate one-page mappings (default 5000)\n"
	"  --resident-mb N  touched anonymous memory in MiB (default 2048)\n",
	.options = options,
	.option = option,
};

int main(int argc, char **argv)
{
	long sz;

	parse_options(argc, argv, &cli);
	sz = sysconf(_SC_PAGESIZE);
	if (sz <= 0)
		die("sysconf(_SC_PAGESIZE)");
	page = sz;
	target_begin(NULL);
	next_report = t0;
	progress();
	make_resident();
	make_mappings();
	start_sleepers();
	if (opt.churn)
		start_thread(&spawner, NULL, spawner_main, NULL, "spawner", -1);
	startup_seconds = elapsed();
	main_loop(&(struct main_loop){ .report = truth_write,
				       .phase = "ready" });
	stop_sleepers();
	if (opt.churn)
		join_threads(&spawner, 1);
	truth_write("exit");
	unmap_all();
	truth_close();
	return 0;
}

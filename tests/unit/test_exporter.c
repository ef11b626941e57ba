/*
 * test_exporter.c — the collector behind `vitals serve`: the listen-socket
 * parsers on recorded files, pool naming and its cap, counters that do not
 * fall when a thread exits, a live scrape of a forked child rendered as
 * text, and targets found by name and by pidfile across a restart.
 */
#include "harness.h"

#include "proc/listen.h"
#include "render/prom.h"
#include "sample/metric.h"
#include "serve/exp_internal.h"
#include "serve/exporter.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- parsers ---- */

static void test_listen__proc_net_tcp(void)
{
	struct vt_listen_sock out[8];
	size_t len, n = 0, dropped = 0;
	char *buf = vt_fixture("proc/files/net_tcp", &len);
	uint64_t only[] = { 16024, 16030 };

	CHECK_EQ_I64(vt_listen_parse(buf, len, false, NULL, 0, out, 8, &n, &dropped, NULL), VT_OK);
	CHECK_EQ_U64(n, 2);     /* two LISTEN rows; the established ones are not */
	CHECK_STR(out[0].address, "0.0.0.0:2024");
	CHECK_STR(out[1].address, "127.0.0.1:39097");
	CHECK_EQ_U64(out[1].queue, 2);
	CHECK_EQ_U64(out[1].inode, 16024);
	CHECK_EQ_U64(out[1].backlog, VT_LISTEN_UNKNOWN);
	/* filtered by the process's socket inodes (16030 is not listening) */
	n = 0;
	CHECK_EQ_I64(vt_listen_parse(buf, len, false, only, 2, out, 8, &n, &dropped, NULL), VT_OK);
	CHECK_EQ_U64(n, 1);
	CHECK_EQ_U64(out[0].inode, 16024);
	/* the cap */
	n = 0;
	CHECK_EQ_I64(vt_listen_parse(buf, len, false, NULL, 0, out, 1, &n, &dropped, NULL), VT_OK);
	CHECK_EQ_U64(n, 1);
	CHECK_EQ_U64(dropped, 1);
	free(buf);

	buf = vt_fixture("proc/files/net_tcp6", &len);
	n = 0;
	CHECK_EQ_I64(vt_listen_parse(buf, len, true, NULL, 0, out, 8, &n, NULL, NULL), VT_OK);
	CHECK_EQ_U64(n, 2);
	CHECK_STR(out[0].address, "[::1]:38201");
	CHECK_EQ_U64(out[0].queue, 5);
	CHECK_STR(out[1].address, "[::]:8080");
	free(buf);
}

static void test_listen__malformed(void)
{
	static const char *const bad[] = {
		"hdr\n   0: 0100007F:98B9 00000000:0000 0A 00000000:00000002\n",                   /* short */
		"hdr\n   0: 0100007G:98B9 00000000:0000 0A 00000000:00000002 00:0 0 0 0 16024\n",  /* not hex */
		"hdr\n   0: 0100007F:98B9 00000000:0000 0A 0000000000000002 00:0 0 0 0 16024\n",   /* no colon */
		"hdr\n   0: 0100007F98B9 00000000:0000 0A 00000000:00000002 00:0 0 0 0 16024\n",
		"hdr\n   0: 0100007F:98B9 00000000:0000 0A 00000000:00000002 00:0 0 0 0 99999999999999999999999\n",
	};
	struct vt_listen_sock out[2];
	struct vt_err err;
	size_t i, n;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		n = 0;
		CHECK_EQ_I64(vt_listen_parse(bad[i], strlen(bad[i]), false, NULL, 0, out, 2, &n, NULL, &err),
			     VT_E_PARSE);
		CHECK_EQ_U64(n, 0);
	}
	n = 0;   /* a header alone, and nothing */
	CHECK_EQ_I64(vt_listen_parse("hdr", 3, false, NULL, 0, out, 2, &n, NULL, NULL), VT_OK);
	CHECK_EQ_I64(vt_listen_parse("", 0, true, NULL, 0, out, 2, &n, NULL, NULL), VT_OK);
	CHECK_EQ_U64(n, 0);
}

static void test_listen__sock_diag_reply(void)
{
	struct vt_listen_sock out[4];
	size_t len, n = 0;
	bool done = false;
	char *buf = vt_fixture("proc/files/sock_diag_listen.bin", &len);
	struct vt_err err;

	CHECK_EQ_I64(vt_listen_diag_parse(buf, len, NULL, 0, out, 4, &n, NULL, &done, NULL), VT_OK);
	CHECK(done);
	CHECK_EQ_U64(n, 2);   /* the established socket is left out */
	CHECK_STR(out[0].address, "127.0.0.1:8080");
	CHECK_EQ_U64(out[0].backlog, 77);
	CHECK_EQ_U64(out[0].queue, 2);
	CHECK_STR(out[1].address, "[::1]:8443");
	CHECK_EQ_U64(out[1].backlog, 128);
	n = 0;   /* cut in the middle of a message */
	CHECK_EQ_I64(vt_listen_diag_parse(buf, 30, NULL, 0, out, 4, &n, NULL, &done, &err), VT_E_PARSE);
	free(buf);
}

static void test_listen__live_backlog(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	struct vt_listen_sock out[64];
	size_t n = 0, i;
	int s = socket(AF_INET, SOCK_STREAM, 0);
	char want[64];
	bool found = false;
	struct stat sb;

	CHECK(s >= 0);
	CHECK(bind(s, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(s, 77) == 0);
	CHECK(getsockname(s, (struct sockaddr *)&a, &alen) == 0);
	CHECK(fstat(s, &sb) == 0);
	snprintf(want, sizeof(want), "127.0.0.1:%u", (unsigned)ntohs(a.sin_port));
	if (vt_listen_diag(NULL, 0, out, 64, &n, NULL, NULL) != VT_OK) {
		printf("# sock_diag unavailable here: skipped\n");
		close(s);
		return;
	}
	for (i = 0; i < n; i++)
		if (out[i].inode == (uint64_t)sb.st_ino) {
			found = true;
			CHECK_STR(out[i].address, want);
			CHECK_EQ_U64(out[i].backlog, 77);
		}
	CHECK(found);
	close(s);
}

/* ---- pools ---- */

static void test_pools__names(void)
{
	char out[64];

	exp_pool_name("worker-12", out, sizeof(out));
	CHECK_STR(out, "worker");
	exp_pool_name("io_uring_3", out, sizeof(out));
	CHECK_STR(out, "io_uring");
	exp_pool_name("tokio-rt-wrk#4", out, sizeof(out));
	CHECK_STR(out, "tokio-rt-wrk");
	exp_pool_name("python3", out, sizeof(out));
	CHECK_STR(out, "python");
	exp_pool_name("main", out, sizeof(out));
	CHECK_STR(out, "main");
	exp_pool_name("1234", out, sizeof(out));
	CHECK_STR(out, "1234");
	exp_pool_name("", out, sizeof(out));
	CHECK_STR(out, "");
}

static void test_pools__cap(void)
{
	struct exp_target *t = calloc(1, sizeof(*t));
	char name[32];
	int i, idx;

	for (i = 0; i < EXP_MAX_POOLS; i++) {
		snprintf(name, sizeof(name), "p%c%c", 'a' + i / 26, 'a' + i % 26);
		CHECK_EQ_I64(exp_pool_index(t, name), i);
	}
	idx = exp_pool_index(t, "one-more");
	CHECK_EQ_I64(idx, EXP_MAX_POOLS);
	CHECK_STR(t->pools[idx].name, "other");
	CHECK_EQ_I64(exp_pool_index(t, "and-another"), EXP_MAX_POOLS);
	CHECK_EQ_I64(exp_pool_index(t, "paa"), 0);
	CHECK_EQ_U64(t->npools, EXP_MAX_POOLS + 1);
	free(t);
}

/* A renamed thread's CPU stays with its old pool; an exited one's stays in the pool. */
static void test_pools__rename_and_exit(void)
{
	struct exp_target *t = calloc(1, sizeof(*t));
	struct exp_proc *p = calloc(1, sizeof(*p));
	struct vt_thread_counts rows[2] = { { .tid = 10, .comm = "a-1", .utime_ticks = 5, .start_ticks = 1 },
					    { .tid = 11, .comm = "a-2", .utime_ticks = 7, .start_ticks = 1 } };

	p->clk_tck = 100;
	CHECK_EQ_I64(exp_threads_update(t, p, rows, 2, NULL), VT_OK);
	CHECK_EQ_U64(t->npools, 1);
	snprintf(rows[1].comm, sizeof(rows[1].comm), "b-1");     /* renamed */
	rows[1].utime_ticks = 9;
	CHECK_EQ_I64(exp_threads_update(t, p, rows, 2, NULL), VT_OK);
	CHECK_EQ_U64(t->npools, 2);
	CHECK_EQ_U64(t->pools[0].gone_utime, 9);                  /* its 9 ticks so far stay with "a" */
	CHECK_EQ_U64(p->threads[1].off_utime, 9);
	CHECK_EQ_I64(exp_threads_update(t, p, rows, 1, NULL), VT_OK);   /* tid 11 exits */
	CHECK_EQ_U64(t->pools[1].gone_utime, 0);                  /* it ran nothing as "b" */
	rows[0].start_ticks = 2;                                  /* tid 10 reused by a new thread */
	CHECK_EQ_I64(exp_threads_update(t, p, rows, 1, NULL), VT_OK);
	CHECK_EQ_U64(t->pools[0].gone_utime, 9 + 5);
	exp_threads_retire(t, p);
	free(p->threads);
	free(p);
	free(t);
}

/* ---- live ---- */

#define WORKERS 3

static int ctl[2];                 /* the parent writes a byte: one worker exits */
static atomic_int burned;

static void burn_ms(int ms)
{
	struct timespec a, b;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
}

static void *worker(void *arg)
{
	char name[16], c;

	snprintf(name, sizeof(name), "wk-%d", (int)(intptr_t)arg);
	prctl(PR_SET_NAME, name);
	burn_ms(60);
	usleep(1000);
	atomic_fetch_add(&burned, 1);
	if (read(ctl[0], &c, 1) < 0)
		return NULL;
	return NULL;
}

/*
 * Until every thread of pid sleeps (at most 10 s): a thread that has said
 * it is ready may still be runnable, on its way into read() or pause(),
 * for as long as a loaded box keeps it off a CPU.
 */
static void wait_all_sleeping(pid_t pid)
{
	char path[320], line[512];
	int tries, running;

	for (tries = 0; tries < 1000; tries++) {
		struct dirent *e;
		DIR *d;

		snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
		if (!(d = opendir(path)))
			return;
		running = 0;
		while ((e = readdir(d))) {
			FILE *f;
			char *paren;

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", (int)pid, e->d_name);
			if (!(f = fopen(path, "r")))
				continue;
			if (fgets(line, sizeof(line), f) && (paren = strrchr(line, ')')) && paren[1] && paren[2] != 'S')
				running++;
			fclose(f);
		}
		closedir(d);
		if (!running)
			return;
		usleep(10000);
	}
}

/*
 * A child named comm with WORKERS threads "wk-N" that each ran 60 ms of
 * CPU, listening on a loopback port with backlog 77 (its port in *port).
 * Returns its pid once it is ready and every thread of it sleeps.
 */
static pid_t spawn(const char *comm, int *port)
{
	int ready[2], ports[2];
	pid_t pid;

	CHECK(pipe(ctl) == 0 && pipe(ready) == 0 && pipe(ports) == 0);
	pid = fork();
	if (pid == 0) {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		socklen_t alen = sizeof(a);
		pthread_t th;
		int s = socket(AF_INET, SOCK_STREAM, 0), i, p = 0;

		prctl(PR_SET_NAME, comm);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (s >= 0 && bind(s, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(s, 77) == 0 &&
		    getsockname(s, (struct sockaddr *)&a, &alen) == 0)
			p = ntohs(a.sin_port);
		for (i = 0; i < WORKERS; i++)
			pthread_create(&th, NULL, worker, (void *)(intptr_t)(i + 1));
		while (atomic_load(&burned) < WORKERS)
			usleep(1000);
		if (write(ports[1], &p, sizeof(p)) != sizeof(p) || write(ready[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(ready[1]);
	close(ports[1]);
	close(ctl[0]);
	{
		char c;
		int p = 0;

		CHECK(read(ready[0], &c, 1) == 1);
		CHECK(read(ports[0], &p, sizeof(p)) == sizeof(p));
		if (port)
			*port = p;
	}
	close(ready[0]);
	close(ports[0]);
	wait_all_sleeping(pid);
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(ctl[1]);
}

static int count_tasks(pid_t pid)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(d = opendir(path)))
		return -1;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

/* Scrape x and render it as text into a new string (the caller frees it). */
static char *scrape(struct vt_exporter *x)
{
	struct vt_buf out = VT_BUF_INIT(64u << 20);
	struct vt_prom *p = vt_prom_new();
	struct vt_err err;

	CHECK(p != NULL);
	CHECK_EQ_I64(vt_exporter_scrape(x, p, &err), VT_OK);
	CHECK_EQ_I64(vt_prom_write(p, VT_PROM_TEXT, &out), VT_OK);
	vt_prom_free(p);
	return out.data;
}

/* The value of the sample whose line begins with series + " "; NAN when absent. */
static double value(const char *text, const char *series)
{
	size_t len = strlen(series);
	const char *p = text;

	while (p && *p) {
		if (!strncmp(p, series, len) && p[len] == ' ')
			return strtod(p + len + 1, NULL);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NAN;
}

static struct vt_procfs pfs;

static void open_pfs(void)
{
	if (pfs.proc_fd <= 0)
		CHECK_EQ_I64(vt_procfs_open(&pfs, NULL, NULL, NULL), VT_OK);
}

static void test_live__scrape_families(void)
{
	int port = 0;
	pid_t pid;
	struct vt_exp_target tg = { .kind = VT_EXP_PID, .label = "live" };
	struct vt_exporter_config cfg = { .targets = &tg, .ntargets = 1 };
	struct vt_exporter *x;
	struct vt_err err;
	char *text, series[160];
	int scrapes = 0;

	open_pfs();
	pid = spawn("q\"b\\\n", &port);
	tg.pid = pid;
	CHECK_EQ_I64(vt_exporter_open(&pfs, &cfg, &x, &err), VT_OK);
	if (!x) {
		reap(pid);
		return;
	}
	text = scrape(x);
	scrapes++;
	CHECK(value(text, "vitals_target_up{target=\"live\"}") == 1);
	CHECK(value(text, "vitals_target_processes{target=\"live\"}") == 1);
	CHECK(value(text, "vitals_target_restarts_total{target=\"live\"}") == 0);
	/* a comm with a quote, a backslash and a newline survives, escaped */
	CHECK(strstr(text, "vitals_target_info{target=\"live\",comm=\"q\\\"b\\\\\\n\",allocator=") != NULL);
	CHECK(value(text, "process_resident_memory_bytes{target=\"live\"}") > 0);
	CHECK(value(text, "process_virtual_memory_bytes{target=\"live\"}") > 0);
	CHECK(value(text, "vitals_process_virtual_memory_peak_bytes{target=\"live\"}") > 0);
	CHECK(value(text, "process_cpu_seconds_total{target=\"live\",mode=\"user\"}") +
	      value(text, "process_cpu_seconds_total{target=\"live\",mode=\"system\"}") >= 0.1);
	CHECK(value(text, "process_start_time_seconds{target=\"live\"}") > 1e9);
	CHECK(value(text, "process_open_fds{target=\"live\"}") >= 3);
	CHECK(value(text, "process_max_fds{target=\"live\"}") > 0);
	CHECK(value(text, "vitals_process_memory_bytes{target=\"live\",memtype=\"committed\"}") > 0);
	/* every memory figure the metric table exports is there (rss_shmem may be 0) */
	for (int m = 0; m < VT_M_COUNT; m++) {
		if (!vt_metrics[m].prom)
			continue;
#if defined(__SANITIZE_ADDRESS__)
		/* a heap walk's figures: malloc is the sanitizer's here, not glibc's */
		if (m == VT_M_FREE_RESIDENT || m == VT_M_TRIMMABLE)
			continue;
#endif
		if (vt_metrics[m].prom_label)
			snprintf(series, sizeof(series), "%s{target=\"live\",%s=\"%s\"}", vt_metrics[m].prom,
				 vt_metrics[m].prom_label, vt_metrics[m].prom_label_value);
		else
			snprintf(series, sizeof(series), "%s{target=\"live\"}", vt_metrics[m].prom);
		if (!(value(text, series) >= 0))
			printf("#   %s: not in the scrape\n", series);
		CHECK(value(text, series) >= 0);
	}
	/* and every per-thread counter it exports, summed over the threads */
	for (int k = 0; k < VT_TC_COUNT; k++) {
		const struct vt_thread_counter_info *ti = &vt_thread_counters[k];

		if (!ti->prom)
			continue;
		snprintf(series, sizeof(series), "%s_total{target=\"live\",%s=\"%s\"}", ti->prom,
			 ti->prom_label, ti->prom_label_value);
		if (!(value(text, series) >= 0))
			printf("#   %s: not in the scrape\n", series);
		CHECK(value(text, series) >= 0);
	}
	CHECK(value(text, "vitals_process_memory_bytes{target=\"live\",memtype=\"rss_anon\"}") <=
	      value(text, "vitals_process_memory_bytes{target=\"live\",memtype=\"committed\"}"));
	/* Once in a run of the unit tests two at a time, one thread was not sleeping at the
	 * scrape though all were just before: say which state, and look once more */
	for (int again = 0; again < 3 &&
	     value(text, "vitals_process_threads{target=\"live\",state=\"sleeping\"}") != WORKERS + 1; again++) {
		for (const char *l = strstr(text, "vitals_process_threads{"); l; l = strstr(l + 1, "vitals_process_threads{"))
			printf("#   not all asleep at the scrape: %.*s\n", (int)strcspn(l, "\n"), l);
		free(text);
		wait_all_sleeping(pid);
		text = scrape(x);
		scrapes++;
	}
	CHECK(value(text, "vitals_process_threads{target=\"live\",state=\"sleeping\"}") == WORKERS + 1);
	CHECK(value(text, "vitals_process_context_switches_total{target=\"live\",ctxswitchtype=\"voluntary\"}") >= WORKERS);
	CHECK(value(text, "vitals_thread_pool_threads{target=\"live\",pool=\"wk\"}") == WORKERS);
	CHECK(value(text, "vitals_thread_pool_cpu_seconds_total{target=\"live\",pool=\"wk\",mode=\"user\"}") +
	      value(text, "vitals_thread_pool_cpu_seconds_total{target=\"live\",pool=\"wk\",mode=\"system\"}") >= 0.1);
	CHECK(value(text, "vitals_heap_regions_64m{target=\"live\"}") >= 0);
	CHECK(strstr(text, "vitals_heap_source_info{target=\"live\",source=\"") != NULL);
	snprintf(series, sizeof(series), "vitals_listen_backlog{target=\"live\",address=\"127.0.0.1:%d\"}", port);
	CHECK(value(text, series) == 77);
	snprintf(series, sizeof(series), "vitals_listen_queue_depth{target=\"live\",address=\"127.0.0.1:%d\"}", port);
	CHECK(value(text, series) == 0);
	CHECK(value(text, "vitals_scrape_target_duration_seconds{target=\"live\"}") > 0);
	CHECK(value(text, "vitals_scrape_duration_seconds") > 0);
	CHECK(value(text, "vitals_exporter_scrapes_total") == scrapes);
	CHECK(value(text, "vitals_exporter_cpu_seconds_total{mode=\"user\"}") >= 0);
	CHECK(value(text, "vitals_exporter_resident_memory_bytes") > 0);
	CHECK(strstr(text, "pid=") == NULL && strstr(text, "tid=") == NULL);
	CHECK(strstr(text, "# TYPE process_cpu_seconds_total counter") != NULL);
	free(text);

	/* it exits: down, with its reason; its counters stay */
	reap(pid);
	text = scrape(x);
	CHECK(value(text, "vitals_target_up{target=\"live\"}") == 0);
	CHECK(value(text, "vitals_target_error_info{target=\"live\",reason=\"gone\"}") == 1);
	CHECK(value(text, "process_cpu_seconds_total{target=\"live\",mode=\"user\"}") +
	      value(text, "process_cpu_seconds_total{target=\"live\",mode=\"system\"}") >= 0.1);
	free(text);
	vt_exporter_close(x);
}

static void test_live__counters_do_not_fall(void)
{
	const char *cpu = "vitals_thread_pool_cpu_seconds_total{target=\"mono\",pool=\"wk\",mode=\"user\"}";
	const char *cpus = "vitals_thread_pool_cpu_seconds_total{target=\"mono\",pool=\"wk\",mode=\"system\"}";
	const char *csw = "vitals_process_context_switches_total{target=\"mono\",ctxswitchtype=\"voluntary\"}";
	const char *proc = "process_cpu_seconds_total{target=\"mono\",mode=\"user\"}";
	struct vt_exp_target tg = { .kind = VT_EXP_PID, .label = "mono" };
	struct vt_exporter_config cfg = { .targets = &tg, .ntargets = 1 };
	struct vt_exporter *x;
	struct vt_err err;
	double cpu1, cpus1, csw1, proc1;
	char *text;
	int i;

	open_pfs();
	tg.pid = spawn("vtexp-mono", NULL);
	CHECK_EQ_I64(vt_exporter_open(&pfs, &cfg, &x, &err), VT_OK);
	text = scrape(x);
	cpu1 = value(text, cpu);
	cpus1 = value(text, cpus);
	csw1 = value(text, csw);
	proc1 = value(text, proc);
	CHECK(value(text, "vitals_thread_pool_threads{target=\"mono\",pool=\"wk\"}") == WORKERS);
	free(text);
	CHECK(cpu1 + cpus1 >= 0.15);   /* 3 x 60 ms, user and system (the thread clock is a system call) */
	CHECK(write(ctl[1], "x", 1) == 1);       /* one worker exits */
	for (i = 0; i < 2000 && count_tasks(tg.pid) != WORKERS; i++)
		usleep(1000);
	CHECK_EQ_I64(count_tasks(tg.pid), WORKERS);
	text = scrape(x);
	CHECK(value(text, "vitals_thread_pool_threads{target=\"mono\",pool=\"wk\"}") == WORKERS - 1);
	CHECK(value(text, cpu) >= cpu1);
	CHECK(value(text, cpus) >= cpus1);
	CHECK(value(text, csw) >= csw1);
	CHECK(value(text, proc) >= proc1);
	free(text);
	reap(tg.pid);
	vt_exporter_close(x);
}

static void test_resolve__by_name(void)
{
	char name[16];
	struct vt_exp_target tg = { .kind = VT_EXP_NAME };
	struct vt_exporter_config cfg = { .targets = &tg, .ntargets = 1 };
	struct vt_exporter *x;
	struct vt_err err;
	pid_t a, b, c;
	int ctl_a, ctl_b;
	char *text, series[64], restarts[80];

	open_pfs();
	snprintf(name, sizeof(name), "vtn%d", (int)getpid());
	tg.arg = name;
	snprintf(series, sizeof(series), "vitals_target_processes{target=\"%s\"}", name);
	snprintf(restarts, sizeof(restarts), "vitals_target_restarts_total{target=\"%s\"}", name);
	/* nothing by that name yet: not an error, down */
	CHECK_EQ_I64(vt_exporter_open(&pfs, &cfg, &x, &err), VT_OK);
	text = scrape(x);
	CHECK(value(text, series) == 0);
	CHECK(strstr(text, "reason=\"not_found\"} 1") != NULL);
	free(text);
	vt_exporter_close(x);

	a = spawn(name, NULL);
	ctl_a = ctl[1];
	b = spawn(name, NULL);
	ctl_b = ctl[1];
	CHECK_EQ_I64(vt_exporter_open(&pfs, &cfg, &x, &err), VT_OK);
	text = scrape(x);
	CHECK(value(text, series) == 2);
	free(text);
	/* one is replaced: noticed at once, the newcomer found in the same scrape */
	kill(a, SIGKILL);
	waitpid(a, NULL, 0);
	close(ctl_a);
	c = spawn(name, NULL);
	text = scrape(x);
	CHECK(value(text, series) == 2);
	CHECK(value(text, restarts) == 1);
	free(text);
	vt_exporter_close(x);
	reap(c);
	ctl[1] = ctl_b;
	reap(b);
}

static void write_file(const char *path, const char *text)
{
	char tmp[300];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
	CHECK(rename(tmp, path) == 0);
}

static void test_resolve__pidfile_restart(void)
{
	char dir[] = "/tmp/vt-exp-XXXXXX", path[300], link[300], text_pid[32];
	struct vt_exp_target tg[2] = { { .kind = VT_EXP_PIDFILE, .label = "pf" },
				       { .kind = VT_EXP_PIDFILE } };
	struct vt_exporter_config cfg = { .targets = tg, .ntargets = 2 };
	struct vt_exporter *x;
	struct vt_err err;
	pid_t a, b;
	char *text;

	open_pfs();
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/app.pid", dir);
	snprintf(link, sizeof(link), "%s/link.pid", dir);
	CHECK(symlink(path, link) == 0);
	tg[0].arg = path;
	tg[1].arg = link;       /* a symlink to it is followed; labelled by its own name */
	a = spawn("vtexp-pf", NULL);
	snprintf(text_pid, sizeof(text_pid), "%d\n", (int)a);
	write_file(path, text_pid);
	CHECK_EQ_I64(vt_exporter_open(&pfs, &cfg, &x, &err), VT_OK);
	text = scrape(x);
	CHECK(value(text, "vitals_target_up{target=\"pf\"}") == 1);
	CHECK(value(text, "vitals_target_up{target=\"link.pid\"}") == 1);
	CHECK(value(text, "vitals_target_restarts_total{target=\"pf\"}") == 0);
	free(text);

	reap(a);
	b = spawn("vtexp-pf", NULL);
	snprintf(text_pid, sizeof(text_pid), "%d\n", (int)b);
	write_file(path, text_pid);
	text = scrape(x);
	CHECK(value(text, "vitals_target_up{target=\"pf\"}") == 1);
	CHECK(value(text, "vitals_target_restarts_total{target=\"pf\"}") == 1);
	CHECK(value(text, "vitals_target_restarts_total{target=\"link.pid\"}") == 1);
	free(text);

	/* garbage: down with its reason, then back */
	write_file(path, "12abc\n");
	text = scrape(x);
	CHECK(value(text, "vitals_target_up{target=\"pf\"}") == 0);
	CHECK(value(text, "vitals_target_error_info{target=\"pf\",reason=\"bad_pidfile\"}") == 1);
	free(text);
	write_file(path, text_pid);
	text = scrape(x);
	CHECK(value(text, "vitals_target_up{target=\"pf\"}") == 1);
	CHECK(value(text, "vitals_target_restarts_total{target=\"pf\"}") == 2);
	free(text);

	/* a FIFO in its place does not hang the scrape */
	unlink(path);
	CHECK(mkfifo(path, 0600) == 0);
	text = scrape(x);
	CHECK(value(text, "vitals_target_error_info{target=\"pf\",reason=\"bad_pidfile\"}") == 1);
	free(text);

	vt_exporter_close(x);
	reap(b);
	unlink(path);
	unlink(link);
	rmdir(dir);
}

static void test_open__errors(void)
{
	struct vt_exp_target tg = { .kind = VT_EXP_PID, .pid = 0x3ffffff0 };
	struct vt_exporter_config cfg = { .targets = &tg, .ntargets = 1 };
	struct vt_exporter *x = NULL;
	struct vt_err err;

	open_pfs();
	CHECK_EQ_I64(vt_exporter_open(&pfs, &cfg, &x, &err), VT_E_NOPROC);
	CHECK(x == NULL);
	tg.pid = 2;     /* kthreadd */
	CHECK_EQ_I64(vt_exporter_open(&pfs, &cfg, &x, &err), VT_E_KTHREAD);
	tg.kind = VT_EXP_CGROUP;
	tg.arg = "/no/such/cgroup/here";
	CHECK_EQ_I64(vt_exporter_open(&pfs, &cfg, &x, &err), VT_E_USAGE);
}

/* A metric row exported by serve names a family the exporter declares, of the right type. */
static void test_metrics__prom_families_declared(void)
{
	size_t i, nfam = vt_exporter_family_count();
	int m, exported = 0;

	for (m = 0; m < VT_M_COUNT; m++) {
		const struct vt_metric_info *mi = &vt_metrics[m];
		bool found = false;

		if (!mi->prom)
			continue;
		exported++;
		CHECK(mi->of_sample != NULL);
		CHECK((mi->prom_label == NULL) == (mi->prom_label_value == NULL));
		for (i = 0; i < nfam && !found; i++) {
			const char *name;
			enum vt_prom_type type;

			vt_exporter_family(i, &name, &type);
			if (strcmp(name, mi->prom) != 0)
				continue;
			found = true;
			CHECK(type == ((mi->flags & VT_MF_CUMULATIVE) ? VT_PROM_COUNTER : VT_PROM_GAUGE));
		}
		if (!found)
			printf("#   %s: family %s not declared\n", mi->key, mi->prom);
		CHECK(found);
	}
	CHECK(exported >= 8);
}

/* The same for the per-thread counter table: each exported row's family is a declared counter. */
static void test_thread_metrics__prom_families_declared(void)
{
	size_t i, nfam = vt_exporter_family_count();
	int k, exported = 0;

	for (k = 0; k < VT_TC_COUNT; k++) {
		const struct vt_thread_counter_info *ti = &vt_thread_counters[k];
		bool found = false;

		CHECK(ti->column && ti->rate_key && ti->head && ti->label && ti->of_counts && ti->rate_max > 0);
		if (!ti->prom)
			continue;
		exported++;
		CHECK((ti->prom_label == NULL) == (ti->prom_label_value == NULL));
		for (i = 0; i < nfam && !found; i++) {
			const char *name;
			enum vt_prom_type type;

			vt_exporter_family(i, &name, &type);
			if (strcmp(name, ti->prom) != 0)
				continue;
			found = true;
			CHECK(type == VT_PROM_COUNTER);
		}
		if (!found)
			printf("#   %s: family %s not declared\n", ti->column, ti->prom);
		CHECK(found);
	}
	CHECK(exported >= 2);
}

VT_TEST_MAIN(test_metrics__prom_families_declared, test_thread_metrics__prom_families_declared, test_listen__proc_net_tcp, test_listen__malformed, test_listen__sock_diag_reply,
	     test_listen__live_backlog, test_pools__names, test_pools__cap, test_pools__rename_and_exit,
	     test_live__scrape_families, test_live__counters_do_not_fall, test_resolve__by_name,
	     test_resolve__pidfile_restart, test_open__errors)

/*
 * perf_calibrate.c — the cost of one sample, from a child spinning a fixed loop.
 *
 * Protocol over two pipes: the parent writes one byte per run ('r'), the
 * child answers with the run's duration in ns (uint64_t).  EOF on its pipe
 * ends the child; PR_SET_PDEATHSIG ends it if vitals dies.
 */
#include "perf/perf_calibrate.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RUNS 5
#define RUN_NS 5000000ull         /* one run: 5 ms of the child's CPU */
#define CALIBRATE_HZ 10000u       /* 50 samples a run: their cost shows above the noise */

/* The child's own CPU time: preemption by other work on a busy host does not count,
 * the sampling interrupts it takes do (unless the kernel accounts IRQ time apart:
 * CONFIG_IRQ_TIME_ACCOUNTING, then the cost reads low). */
static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static volatile uint64_t sink;

static __attribute__((noinline)) void spin(uint64_t iterations)
{
	uint64_t x = sink;
	for (uint64_t i = 0; i < iterations; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
}

static __attribute__((noreturn)) void child(int cmd_fd, int res_fd)
{
	char c;
	/* size the loop to RUN_NS once, then run it on each request */
	uint64_t it = 1000000, t0 = now_ns();
	spin(it);
	uint64_t took = now_ns() - t0;
	it = took ? it * RUN_NS / took : it;
	if (it == 0)
		it = 1;
	while (read(cmd_fd, &c, 1) == 1) {
		t0 = now_ns();
		spin(it);
		uint64_t d = now_ns() - t0;
		if (write(res_fd, &d, sizeof(d)) != (ssize_t)sizeof(d))
			break;
	}
	_exit(0);
}

static int run_once(int cmd_fd, int res_fd, uint64_t *ns)
{
	char c = 'r';
	if (write(cmd_fd, &c, 1) != 1)
		return -1;
	return read(res_fd, ns, sizeof(*ns)) == (ssize_t)sizeof(*ns) ? 0 : -1;
}

/* CALIBRATE_HZ, or half of what the kernel allows now (it lowers the limit itself
 * when sampling takes too long: kernel.perf_event_max_sample_rate). */
static unsigned calibrate_hz(void)
{
	char buf[32];
	unsigned hz = CALIBRATE_HZ;
	int fd = open("/proc/sys/kernel/perf_event_max_sample_rate", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return hz;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n > 0) {
		buf[n] = '\0';
		unsigned long max = strtoul(buf, NULL, 10);
		if (max > 0 && max / 2 < hz)
			hz = max / 2 ? (unsigned)(max / 2) : 1;
	}
	return hz;
}

static void count_sample(void *ctx, const struct vt_perf_sample *s)
{
	(void)s;
	(*(unsigned *)ctx)++;
}

/* The fastest and the second fastest of RUNS runs; with perf, the samples they took. */
static int runs(int cmd_fd, int res_fd, struct vt_perf *pf, uint64_t *best, uint64_t *second,
		unsigned *samples, struct vt_err *err)
{
	*best = *second = UINT64_MAX;
	for (int i = 0; i < RUNS; i++) {
		uint64_t ns;
		if (run_once(cmd_fd, res_fd, &ns))
			return vt_err_set(err, VT_E_IO, errno, "perf calibration: the child stopped");
		if (ns < *best) {
			*second = *best;
			*best = ns;
		} else if (ns < *second) {
			*second = ns;
		}
		if (pf && vt_perf_poll(pf, 0, count_sample, samples, err) != VT_OK)
			return err->code;
	}
	return VT_OK;
}

int vt_perf_calibrate(const struct vt_perf_opts *opts, struct vt_perf_cost *out,
		      struct vt_err *err)
{
	int cmd[2], res[2];
	memset(out, 0, sizeof(*out));
	if (pipe2(cmd, O_CLOEXEC) != 0)
		return vt_err_set(err, VT_E_IO, errno, "perf calibration: pipe");
	if (pipe2(res, O_CLOEXEC) != 0) {
		close(cmd[0]);
		close(cmd[1]);
		return vt_err_set(err, VT_E_IO, errno, "perf calibration: pipe");
	}
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(cmd[1]);
		close(res[0]);
		child(cmd[0], res[1]);
	}
	close(cmd[0]);
	close(res[1]);
	if (pid < 0) {
		close(cmd[1]);
		close(res[0]);
		return vt_err_set(err, VT_E_IO, errno, "perf calibration: fork");
	}
	struct vt_perf *pf = NULL;
	struct vt_perf_opts po = *opts;
	po.hz = calibrate_hz();
	uint64_t base, base2, with, with2;
	unsigned samples = 0;
	int rc = runs(cmd[1], res[0], NULL, &base, &base2, NULL, err);
	if (rc == VT_OK)
		rc = vt_perf_open(pid, &po, &pf, err);
	if (rc == VT_OK)
		rc = runs(cmd[1], res[0], pf, &with, &with2, &samples, err);
	if (rc == VT_OK && pf)
		vt_perf_poll(pf, 0, count_sample, &samples, err);
	vt_perf_close(&pf);
	close(cmd[1]);
	close(res[0]);
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	if (rc != VT_OK)
		return rc;
	if (samples < RUNS)
		return vt_err_set(err, VT_E_FAIL, 0, "perf calibration: %u samples", samples);
	double per_run = (double)samples / RUNS;
	out->samples = samples;
	out->ns_per_sample = with > base ? (double)(with - base) / per_run : 0;
	out->noise_ns = (double)(base2 - base) / per_run;
	return VT_OK;
}

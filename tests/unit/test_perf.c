/*
 * test_perf.c — src/perf/perf_events.c: the sample parser on hand-built
 * records (whole, truncated at every length, lying lengths, unknown
 * layouts), and live sessions on a child of known behaviour: two threads
 * spinning in vt_test_spin_here, one asleep.  Samples arrive for the
 * spinners at the asked rate of their measured CPU, with callchains,
 * registers and stack copies; a thread started later is picked up by a
 * sync, one that exits is dropped, small rings that wrap still give whole
 * records, and the child's exit ends the session with VT_E_GONE.  Under a
 * low fd limit the soft limit is raised once, then threads left out are
 * counted as missed.  A
 * process that does not exist is VT_E_NOPROC; an unprivileged user gets
 * user-space samples or VT_E_PERM with a hint naming the setting.
 *
 * Where perf events are refused (EACCES, ENOSYS: a CI container), the live
 * tests say so and skip.
 *
 * lane: long — started first among the unit tests (tests/run)
 */
#include "harness.h"

#include "perf/perf_events.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NO_SUCH_PID ((pid_t)0x7ffffff0)

/* ---- the parser on hand-built records ------------------------------------ */

#define FULL_TYPE                                                                      \
	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN |   \
	 PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)

static const struct vt_perf_layout full_layout = { FULL_TYPE, VT_PERF_X86_REGS_MASK };

/* A sample record of full_layout in w[] (u64 words); returns its size in bytes.
 * nchain frames, abi (0 = no regs), stack_size bytes copied of which dyn valid. */
static size_t build_sample(uint64_t *w, uint16_t misc, uint32_t nchain, uint64_t abi,
			   uint32_t stack_size, uint64_t dyn)
{
	struct perf_event_header hdr = { PERF_RECORD_SAMPLE, misc, 0 };
	uint32_t ids[2] = { 100, 101 };
	size_t k = 1, i;

	w[k++] = 0x401234;                      /* ip */
	memcpy(&w[k++], ids, 8);                /* pid, tid */
	w[k++] = 123456789;                     /* time */
	w[k++] = nchain;
	for (i = 0; i < nchain; i++)
		w[k++] = i == 0 ? PERF_CONTEXT_USER : 0x401000 + i;
	w[k++] = abi;
	if (abi)
		for (i = 0; i < 17; i++)        /* AX..IP, R8..R15 in bit order */
			w[k++] = 0x1000 + i;
	w[k++] = stack_size;
	if (stack_size) {
		memset(&w[k], 0xab, stack_size);
		k += stack_size / 8;
		w[k++] = dyn;
	}
	hdr.size = (uint16_t)(k * 8);
	memcpy(&w[0], &hdr, sizeof(hdr));
	return k * 8;
}

static void test_perf__parse_full(void)
{
	uint64_t w[64];
	struct vt_perf_sample s;
	size_t len = build_sample(w, PERF_RECORD_MISC_USER, 3, PERF_SAMPLE_REGS_ABI_64, 32, 24);

	CHECK_EQ_I64(vt_perf_parse_sample(w, len, &full_layout, &s), VT_OK);
	CHECK_EQ_U64(s.ip, 0x401234);
	CHECK_EQ_I64(s.pid, 100);
	CHECK_EQ_I64(s.tid, 101);
	CHECK_EQ_U64(s.time_ns, 123456789);
	CHECK(!s.in_kernel);
	CHECK_EQ_U64(s.nchain, 3);
	CHECK(s.callchain && s.callchain[0] == PERF_CONTEXT_USER && s.callchain[2] == 0x401002);
	CHECK(s.regs_ok);
	CHECK_EQ_U64(s.regs[VT_PERF_REG_AX], 0x1000);
	CHECK_EQ_U64(s.regs[VT_PERF_REG_SP], 0x1007);
	CHECK_EQ_U64(s.regs[VT_PERF_REG_IP], 0x1008);
	CHECK_EQ_U64(s.regs[VT_PERF_REG_R8], 0x1009);
	CHECK_EQ_U64(s.regs[VT_PERF_REG_R15], 0x1010);
	CHECK(s.stack == (const uint8_t *)w + 8 * (1 + 3 + 1 + 3 + 1 + 17 + 1));
	CHECK_EQ_U64(s.stack_len, 24);
	CHECK(s.stack && s.stack[0] == 0xab);

	/* kernel mode, no user regs (a kernel-only moment), no stack */
	len = build_sample(w, PERF_RECORD_MISC_KERNEL, 0, PERF_SAMPLE_REGS_ABI_NONE, 0, 0);
	CHECK_EQ_I64(vt_perf_parse_sample(w, len, &full_layout, &s), VT_OK);
	CHECK(s.in_kernel);
	CHECK(!s.regs_ok && s.regs[VT_PERF_REG_IP] == 0);
	CHECK(s.callchain == NULL && s.nchain == 0);
	CHECK(s.stack == NULL && s.stack_len == 0);

	/* a stack copy whose valid part is empty */
	len = build_sample(w, PERF_RECORD_MISC_USER, 1, PERF_SAMPLE_REGS_ABI_64, 16, 0);
	CHECK_EQ_I64(vt_perf_parse_sample(w, len, &full_layout, &s), VT_OK);
	CHECK(s.stack == NULL && s.stack_len == 0);
}

/* Every shorter record (its own size shrunk with it, or only len shrunk) fails. */
static void test_perf__parse_truncated(void)
{
	uint64_t w[64], *copy;
	struct vt_perf_sample s;
	size_t len = build_sample(w, 0, 3, PERF_SAMPLE_REGS_ABI_64, 32, 24), cut;

	for (cut = 0; cut < len; cut++) {
		struct perf_event_header hdr;

		/* exactly cut bytes readable, at the end of an allocation ASan watches */
		copy = malloc(cut ? cut : 1);
		memcpy(copy, w, cut);
		if (cut >= sizeof(hdr)) {
			memcpy(&hdr, copy, sizeof(hdr));
			CHECK(vt_perf_parse_sample(copy, cut, &full_layout, &s) == VT_E_PARSE);
			hdr.size = (uint16_t)cut;   /* and a record that says it is that short */
			memcpy(copy, &hdr, sizeof(hdr));
		}
		if (vt_perf_parse_sample(copy, cut, &full_layout, &s) != VT_E_PARSE) {
			printf("#   a record cut to %zu of %zu bytes parsed\n", cut, len);
			CHECK(0);
		}
		free(copy);
	}
}

static void test_perf__parse_lies(void)
{
	uint64_t w[64];
	struct vt_perf_sample s;
	struct perf_event_header hdr;
	size_t len;
	struct vt_perf_layout raw = { FULL_TYPE | PERF_SAMPLE_RAW, VT_PERF_X86_REGS_MASK };

	/* callchain nr far beyond the record */
	len = build_sample(w, 0, 3, PERF_SAMPLE_REGS_ABI_64, 32, 24);
	w[4] = 1u << 28;
	CHECK_EQ_I64(vt_perf_parse_sample(w, len, &full_layout, &s), VT_E_PARSE);
	w[4] = UINT64_MAX;
	CHECK_EQ_I64(vt_perf_parse_sample(w, len, &full_layout, &s), VT_E_PARSE);
	/* dyn_size larger than the copy */
	len = build_sample(w, 0, 0, PERF_SAMPLE_REGS_ABI_64, 32, 40);
	CHECK_EQ_I64(vt_perf_parse_sample(w, len, &full_layout, &s), VT_E_PARSE);
	/* a stack size beyond the record, and one that wraps size_t */
	len = build_sample(w, 0, 0, PERF_SAMPLE_REGS_ABI_NONE, 16, 8);
	w[6] = 1ull << 40;
	CHECK_EQ_I64(vt_perf_parse_sample(w, len, &full_layout, &s), VT_E_PARSE);
	w[6] = UINT64_MAX - 7;
	CHECK_EQ_I64(vt_perf_parse_sample(w, len, &full_layout, &s), VT_E_PARSE);
	/* an unknown register ABI */
	len = build_sample(w, 0, 0, 7, 0, 0);
	CHECK_EQ_I64(vt_perf_parse_sample(w, len, &full_layout, &s), VT_E_PARSE);
	/* a record size above what is readable, and below a header */
	len = build_sample(w, 0, 0, PERF_SAMPLE_REGS_ABI_NONE, 0, 0);
	CHECK_EQ_I64(vt_perf_parse_sample(w, len - 8, &full_layout, &s), VT_E_PARSE);
	memcpy(&hdr, w, sizeof(hdr));
	hdr.size = 4;
	memcpy(w, &hdr, sizeof(hdr));
	CHECK_EQ_I64(vt_perf_parse_sample(w, len, &full_layout, &s), VT_E_PARSE);
	/* not a sample */
	len = build_sample(w, 0, 0, PERF_SAMPLE_REGS_ABI_NONE, 0, 0);
	memcpy(&hdr, w, sizeof(hdr));
	hdr.type = PERF_RECORD_LOST;
	memcpy(w, &hdr, sizeof(hdr));
	CHECK_EQ_I64(vt_perf_parse_sample(w, len, &full_layout, &s), VT_E_PARSE);
	/* misaligned, NULL, a layout the parser does not know */
	len = build_sample(w, 0, 0, PERF_SAMPLE_REGS_ABI_NONE, 0, 0);
	CHECK_EQ_I64(vt_perf_parse_sample((const char *)w + 4, len - 4, &full_layout, &s), VT_E_PARSE);
	CHECK_EQ_I64(vt_perf_parse_sample(NULL, 64, &full_layout, &s), VT_E_PARSE);
	CHECK_EQ_I64(vt_perf_parse_sample(w, len, &raw, &s), VT_E_UNSUPPORTED);
	/* trailing bytes after the last field are tolerated */
	len = build_sample(w, 0, 0, PERF_SAMPLE_REGS_ABI_NONE, 0, 0);
	memcpy(&hdr, w, sizeof(hdr));
	hdr.size = (uint16_t)(len + 16);
	memcpy(w, &hdr, sizeof(hdr));
	w[len / 8] = w[len / 8 + 1] = 0;
	CHECK_EQ_I64(vt_perf_parse_sample(w, len + 16, &full_layout, &s), VT_OK);
}

/* Optional fields the sessions do not ask for are stepped over in kernel order. */
static void test_perf__parse_other_fields(void)
{
	struct vt_perf_layout lay = {
		PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
		PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
		PERF_SAMPLE_PERIOD | PERF_SAMPLE_REGS_USER, (1ull << 8) | (1ull << 7) };
	struct perf_event_header hdr = { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 13 * 8 };
	uint64_t w[13] = { 0, 77, 0xabc, 0, 999, 1, 2, 3, 4, 5, PERF_SAMPLE_REGS_ABI_64, 0x7ff0,
			   0x555 };
	uint32_t ids[2] = { 5, 6 };
	struct vt_perf_sample s;

	memcpy(&w[0], &hdr, sizeof(hdr));
	memcpy(&w[3], ids, 8);
	CHECK_EQ_I64(vt_perf_parse_sample(w, sizeof(w), &lay, &s), VT_OK);
	CHECK_EQ_U64(s.ip, 0xabc);
	CHECK_EQ_I64(s.tid, 6);
	CHECK_EQ_U64(s.time_ns, 999);
	CHECK_EQ_U64(s.regs[VT_PERF_REG_SP], 0x7ff0);   /* bit 7 */
	CHECK_EQ_U64(s.regs[VT_PERF_REG_IP], 0x555);    /* bit 8 */
}

/* ---- a child of known behaviour ------------------------------------------ */

static atomic_bool spin_stop;
static volatile uint64_t spin_sink;

/* Where the spinners spend their time: no calls inside, so a sample's ip is here. */
__attribute__((noinline, noclone)) void vt_test_spin_here(void);
__attribute__((noinline, noclone)) void vt_test_spin_here(void)
{
	uint64_t x = 1;
	int i;

	while (!atomic_load_explicit(&spin_stop, memory_order_relaxed)) {
		for (i = 0; i < 4096; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
		spin_sink = x;
	}
}
#define SPIN_SPAN 1024   /* bytes of code from vt_test_spin_here counted as inside it */

static int rep_fd = -1;
static int sleeper_fd = -1;   /* the sleeper reads this end and exits at EOF */

static void report_tid(void)
{
	pid_t tid = (pid_t)syscall(SYS_gettid);

	if (write(rep_fd, &tid, sizeof(tid)) != (ssize_t)sizeof(tid))
		_exit(3);
}

static void *spinner(void *arg)
{
	(void)arg;
	report_tid();
	vt_test_spin_here();
	return NULL;
}

static void *sleeper(void *arg)
{
	char c;

	(void)arg;
	report_tid();
	while (read(sleeper_fd, &c, 1) > 0)
		;
	return NULL;
}

struct child {
	pid_t pid;
	int cmd;              /* write commands */
	int rep;              /* read tids and acks */
	pid_t spin[3];        /* the two first spinners, then the one started later */
	pid_t sleeper;
};

static bool read_tid(int fd, pid_t *tid)
{
	return read(fd, tid, sizeof(*tid)) == (ssize_t)sizeof(*tid);
}

/* Commands: 'n' start a spinner (its tid comes back), 's' end the sleeper
 * (its tid comes back once joined), 'q' or EOF exit. */
static void child_main(int cmd, int rep)
{
	int sp[2];
	pthread_t t;
	char c;

	rep_fd = rep;
	if (pipe(sp) != 0)
		_exit(3);
	sleeper_fd = sp[0];
	if (pthread_create(&t, NULL, spinner, NULL) || pthread_create(&t, NULL, spinner, NULL))
		_exit(3);
	{
		pthread_t st;
		pid_t tid;

		if (pthread_create(&st, NULL, sleeper, NULL))
			_exit(3);
		while (read(cmd, &c, 1) == 1) {
			if (c == 'n') {
				if (pthread_create(&t, NULL, spinner, NULL))
					_exit(3);
			} else if (c == 's') {
				close(sp[1]);
				pthread_join(st, NULL);
				tid = 0;
				if (write(rep, &tid, sizeof(tid)) != (ssize_t)sizeof(tid))
					_exit(3);
			} else {
				break;
			}
		}
	}
	_exit(0);
}

static bool child_start(struct child *c)
{
	int cmd[2], rep[2];
	pid_t tids[3];
	int i;

	memset(c, 0, sizeof(*c));
	if (pipe(cmd) || pipe(rep))
		return false;
	c->pid = fork();
	if (c->pid < 0)
		return false;
	if (c->pid == 0) {
		close(cmd[1]);
		close(rep[0]);
		child_main(cmd[0], rep[1]);
	}
	close(cmd[0]);
	close(rep[1]);
	c->cmd = cmd[1];
	c->rep = rep[0];
	/* two spinners and the sleeper, in whatever order they start */
	for (i = 0; i < 3; i++)
		if (!read_tid(c->rep, &tids[i]))
			return false;
	/* the sleeper is the one blocked in read: tell it apart by its state */
	for (i = 0; i < 3; i++) {
		char path[64], buf[256], *rp = NULL;
		FILE *f;
		int tries;

		for (tries = 0; tries < 200; tries++) {
			snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)c->pid, (int)tids[i]);
			f = fopen(path, "r");
			buf[0] = '\0';
			if (f) {
				if (!fgets(buf, sizeof(buf), f))
					buf[0] = '\0';
				fclose(f);
			}
			rp = strrchr(buf, ')');
			if (rp && rp[2] == 'S')
				break;
			if (rp && rp[2] == 'R' && tries > 20)
				break;
			usleep(5000);
		}
		if (rp && rp[2] == 'S' && !c->sleeper)
			c->sleeper = tids[i];
		else if (!c->spin[0])
			c->spin[0] = tids[i];
		else
			c->spin[1] = tids[i];
	}
	return c->sleeper && c->spin[0] && c->spin[1];
}

static void child_send(struct child *c, char cmd)
{
	if (write(c->cmd, &cmd, 1) != 1)
		printf("#   cannot command the child\n");
}

static void child_end(struct child *c)
{
	int st;

	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, &st, 0);
		c->pid = 0;
	}
	if (c->cmd > 0)
		close(c->cmd);
	if (c->rep > 0)
		close(c->rep);
	c->cmd = c->rep = -1;
}

/* ns on a CPU of one thread (schedstat), or -1. */
static double thread_cpu_s(pid_t pid, pid_t tid)
{
	char path[96];
	unsigned long long ns;
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)pid, (int)tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	ok = fscanf(f, "%llu", &ns) == 1;
	fclose(f);
	return ok ? (double)ns / 1e9 : -1;
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* What the callback saw, per thread of interest. */
#define NT 5
struct seen {
	pid_t pid;
	pid_t tid[NT];
	uint64_t n[NT], in_spin[NT], user[NT], regs[NT], ip_match[NT], stack[NT], chain[NT];
	uint64_t other, wrong_pid, bad_time, bad_stack;
	uint32_t stack_bytes;
};

static void on_sample(void *ctx, const struct vt_perf_sample *s)
{
	struct seen *sn = ctx;
	uint64_t lo = (uint64_t)(uintptr_t)vt_test_spin_here;
	double now = mono_s(), t = (double)s->time_ns / 1e9;
	uint32_t i, k;

	if (s->pid != sn->pid)
		sn->wrong_pid++;
	if (t > now + 0.001 || t < now - 30)
		sn->bad_time++;
	if (s->stack_len > sn->stack_bytes || (s->stack_len && !s->stack))
		sn->bad_stack++;
	for (k = 0; k < NT; k++)
		if (sn->tid[k] && sn->tid[k] == s->tid)
			break;
	if (k == NT) {
		sn->other++;
		return;
	}
	sn->n[k]++;
	if (!s->in_kernel) {
		sn->user[k]++;
		if (s->ip >= lo && s->ip < lo + SPIN_SPAN)
			sn->in_spin[k]++;
		if (s->regs_ok && s->regs[VT_PERF_REG_IP] == s->ip && s->regs[VT_PERF_REG_SP])
			sn->ip_match[k]++;
		if (s->stack_len > 0)
			sn->stack[k]++;
	}
	if (s->regs_ok)
		sn->regs[k]++;
	/* the user part of the chain starts at the user ip */
	for (i = 0; i + 1 < s->nchain; i++)
		if (s->callchain[i] == PERF_CONTEXT_USER) {
			if (s->in_kernel || s->callchain[i + 1] == s->ip)
				sn->chain[k]++;
			break;
		}
}

/* Poll for about secs; VT_E_GONE ends early. */
static int poll_for(struct vt_perf *pf, double secs, struct seen *sn)
{
	double end = mono_s() + secs;
	struct vt_err err;
	int rc = VT_OK;

	while (mono_s() < end) {
		rc = vt_perf_poll(pf, 50, on_sample, sn, &err);
		if (rc != VT_OK) {
			if (rc != VT_E_GONE)
				printf("#   poll: %s (%s)\n", err.msg, vt_code_name(rc));
			break;
		}
	}
	return rc;
}

/* Perf events allowed here?  Else say why and skip. */
static bool perf_usable(void)
{
	struct vt_err err;
	int rc = vt_perf_check(getpid(), &err);

	if (rc == VT_E_PERM || rc == VT_E_UNSUPPORTED) {
		printf("# SKIP perf events unavailable here: %s (%s)\n", err.msg, err.hint);
		return false;
	}
	CHECK_EQ_I64(rc, VT_OK);
	return rc == VT_OK;
}

static void test_perf__live_session(void)
{
	const struct vt_perf_opts opts = { 499, 8192, 0, true };
	struct vt_perf_stats st;
	struct vt_perf *pf = NULL;
	struct seen sn;
	struct child c;
	struct vt_err err;
	double cpu0[3], cpu1[3], t0, t1;
	int rc, k, gone_after = -1;
	pid_t tid;

	if (!perf_usable())
		return;
	if (!child_start(&c)) {
		printf("#   cannot start the child\n");
		CHECK(0);
		child_end(&c);
		return;
	}
	memset(&sn, 0, sizeof(sn));
	sn.pid = c.pid;
	sn.stack_bytes = opts.stack_bytes;
	sn.tid[0] = c.spin[0];
	sn.tid[1] = c.spin[1];
	sn.tid[3] = c.sleeper;
	rc = vt_perf_open(c.pid, &opts, &pf, &err);
	CHECK_EQ_I64(rc, VT_OK);
	if (rc != VT_OK) {
		printf("#   open: %s (%s)\n", err.msg, err.hint);
		child_end(&c);
		return;
	}
	vt_perf_get_stats(pf, &st);
	CHECK_EQ_U64(st.threads_now, 4);   /* main, two spinners, the sleeper */
	CHECK_EQ_U64(st.hz, 499);

	for (k = 0; k < 2; k++)
		cpu0[k] = thread_cpu_s(c.pid, c.spin[k]);
	t0 = mono_s();
	/* half a second, longer while the machine leaves the spinners little CPU */
	do {
		CHECK_EQ_I64(poll_for(pf, 0.25, &sn), VT_OK);
		t1 = mono_s();
		for (k = 0; k < 2; k++)
			cpu1[k] = thread_cpu_s(c.pid, c.spin[k]);
	} while (t1 - t0 < 0.5 ||
		 ((cpu1[0] - cpu0[0] < 0.05 || cpu1[1] - cpu0[1] < 0.05) && t1 - t0 < 4));

	for (k = 0; k < 2; k++) {
		double cpu = cpu1[k] - cpu0[k], expect = cpu * 499;

		printf("# spinner %d: %" PRIu64 " samples over %.3f s CPU in %.3f s wall: "
		       "%.0f per CPU second (asked 499); in vt_test_spin_here %" PRIu64
		       ", user %" PRIu64 ", regs %" PRIu64 ", stack %" PRIu64 ", chain %" PRIu64 "\n",
		       (int)c.spin[k], sn.n[k], cpu, t1 - t0, cpu > 0 ? (double)sn.n[k] / cpu : 0,
		       sn.in_spin[k], sn.user[k], sn.regs[k], sn.stack[k], sn.chain[k]);
		CHECK(sn.n[k] >= 15);
		/* the machine is shared: loose bounds around the asked rate of its CPU */
		CHECK((double)sn.n[k] >= 0.5 * expect - 5 && (double)sn.n[k] <= 1.3 * expect + 10);
		CHECK(sn.in_spin[k] * 10 >= sn.user[k] * 8);
		CHECK(sn.user[k] * 10 >= sn.n[k] * 8);
		CHECK_EQ_U64(sn.ip_match[k], sn.user[k]);
		CHECK_EQ_U64(sn.regs[k], sn.n[k]);
		CHECK_EQ_U64(sn.stack[k], sn.user[k]);
		CHECK_EQ_U64(sn.chain[k], sn.n[k]);
	}
	CHECK(sn.n[3] <= 2);   /* the sleeper barely runs */
	CHECK_EQ_U64(sn.wrong_pid, 0);
	CHECK_EQ_U64(sn.bad_time, 0);
	CHECK_EQ_U64(sn.bad_stack, 0);

	/* a thread started after open: picked up by sync */
	child_send(&c, 'n');
	CHECK(read_tid(c.rep, &tid));
	sn.tid[2] = c.spin[2] = tid;
	CHECK_EQ_I64(vt_perf_sync_threads(pf, &err), VT_OK);
	vt_perf_get_stats(pf, &st);
	CHECK_EQ_U64(st.threads_now, 5);
	t0 = mono_s();
	do
		CHECK_EQ_I64(poll_for(pf, 0.1, &sn), VT_OK);
	while (sn.n[2] < 5 && mono_s() - t0 < 4);
	printf("# late spinner %d: %" PRIu64 " samples in %.1f s\n", (int)tid, sn.n[2],
	       mono_s() - t0);
	CHECK(sn.n[2] >= 5);

	/* a thread that exits: dropped */
	child_send(&c, 's');
	CHECK(read_tid(c.rep, &tid));
	CHECK_EQ_I64(vt_perf_sync_threads(pf, &err), VT_OK);
	CHECK_EQ_I64(vt_perf_poll(pf, 0, on_sample, &sn, &err), VT_OK);
	vt_perf_get_stats(pf, &st);
	CHECK_EQ_U64(st.threads_now, 4);

	/* the child exits: VT_E_GONE while it is still an unreaped zombie */
	child_send(&c, 'q');
	for (k = 0; k < 60; k++) {
		rc = vt_perf_poll(pf, 50, on_sample, &sn, &err);
		if (rc != VT_OK)
			break;
	}
	gone_after = k;
	CHECK_EQ_I64(rc, VT_E_GONE);
	printf("# exit seen after %d polls\n", gone_after);
	vt_perf_get_stats(pf, &st);
	CHECK_EQ_U64(st.threads_now, 0);
	CHECK_EQ_U64(st.malformed, 0);
	CHECK_EQ_U64(st.threads_missed, 0);
	CHECK_EQ_U64(st.threads_opened, 5);
	CHECK_EQ_U64(st.samples, sn.n[0] + sn.n[1] + sn.n[2] + sn.n[3] + sn.other);
	printf("# session: %" PRIu64 " samples, %" PRIu64 " lost, %" PRIu64 " throttled, %"
	       PRIu64 " not of the known threads\n", st.samples, st.lost, st.throttled, sn.other);
	child_end(&c);
	CHECK_EQ_I64(vt_perf_sync_threads(pf, &err), VT_E_GONE);
	vt_perf_close(&pf);
	CHECK(pf == NULL);
}

/* Rings of 4 pages with 4 KiB stack copies: most records wrap or fill the
 * ring; every one that comes out must still be whole. */
static void test_perf__small_rings_wrap(void)
{
	const struct vt_perf_opts opts = { 999, 4096, 4, false };
	struct vt_perf_stats st;
	struct vt_perf *pf = NULL;
	struct seen sn;
	struct child c;
	struct vt_err err;
	int rc, k;

	if (!perf_usable())
		return;
	if (!child_start(&c)) {
		CHECK(0);
		child_end(&c);
		return;
	}
	memset(&sn, 0, sizeof(sn));
	sn.pid = c.pid;
	sn.stack_bytes = opts.stack_bytes;
	sn.tid[0] = c.spin[0];
	sn.tid[1] = c.spin[1];
	rc = vt_perf_open(c.pid, &opts, &pf, &err);
	CHECK_EQ_I64(rc, VT_OK);
	if (rc == VT_OK) {
		/* drain slowly so the rings wrap and fill (longer on a busy machine) */
		for (k = 0; k < 60; k++) {
			usleep(60000);
			CHECK_EQ_I64(vt_perf_poll(pf, 0, on_sample, &sn, &err), VT_OK);
			vt_perf_get_stats(pf, &st);
			if (k >= 5 && st.lost > 0 && sn.n[0] >= 10 && sn.n[1] >= 10)
				break;
		}
		printf("# 4-page rings: %" PRIu64 " samples, %" PRIu64 " lost, %" PRIu64
		       " malformed\n", st.samples, st.lost, st.malformed);
		CHECK(sn.n[0] >= 10 && sn.n[1] >= 10);
		CHECK(st.lost > 0);
		CHECK_EQ_U64(st.malformed, 0);
		CHECK_EQ_U64(sn.wrong_pid, 0);
		CHECK_EQ_U64(sn.bad_stack, 0);
		CHECK_EQ_U64(sn.bad_time, 0);
		for (k = 0; k < 2; k++) {
			CHECK(sn.in_spin[k] * 10 >= sn.user[k] * 8);
			CHECK_EQ_U64(sn.ip_match[k], sn.user[k]);
			CHECK_EQ_U64(sn.stack[k], sn.user[k]);
			CHECK_EQ_U64(sn.chain[k], sn.n[k]);
		}
		vt_perf_close(&pf);
	}
	child_end(&c);
}

/* The fd limit under which exactly `free` descriptor numbers are unused
 * (RLIMIT_NOFILE bounds the numbers, and new fds take the lowest free one). */
static int limit_with_free(int free)
{
	int fd;

	for (fd = 0;; fd++)
		if (fcntl(fd, F_GETFD) < 0 && --free == 0)
			return fd + 1;
}

/* The fd limit, in a forked child: a soft limit too low for the 4 events is
 * raised to the hard one; with the hard limit that low too, the threads left
 * out are counted as missed for the limit, never dropped silently. */
static void test_perf__fd_limit(void)
{
	struct child c;
	pid_t pid;
	int status;

	if (!perf_usable())
		return;
	if (!child_start(&c)) {
		CHECK(0);
		child_end(&c);
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		const struct vt_perf_opts opts = { 99, 512, 4, false };
		struct vt_perf_stats st;
		struct vt_perf *pf = NULL;
		struct vt_err err;
		struct rlimit rl;
		int bad = 0, limit = limit_with_free(3);

		/* room for the held task/ directory and 2 events */
		getrlimit(RLIMIT_NOFILE, &rl);
		rl.rlim_cur = (rlim_t)limit;
		if (rl.rlim_max <= rl.rlim_cur + 8 || setrlimit(RLIMIT_NOFILE, &rl))
			_exit(100);
		if (vt_perf_open(c.pid, &opts, &pf, &err) != VT_OK)
			bad |= 1;
		else {
			vt_perf_get_stats(pf, &st);
			if (!st.nofile_raised || st.threads_now != 4 || st.threads_missed)
				bad |= 2;
		}
		vt_perf_close(&pf);
		rl.rlim_cur = rl.rlim_max = (rlim_t)limit;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			_exit(101);
		if (vt_perf_open(c.pid, &opts, &pf, &err) != VT_OK)
			bad |= 4;
		else {
			vt_perf_get_stats(pf, &st);
			if (st.nofile_raised || st.threads_now != 2 || st.threads_missed != 2 ||
			    st.threads_limited != 2)
				bad |= 8;
			/* a sync does not count them again */
			if (vt_perf_sync_threads(pf, &err) != VT_OK)
				bad |= 16;
			vt_perf_get_stats(pf, &st);
			if (st.threads_missed != 2 || st.threads_now != 2)
				bad |= 32;
		}
		vt_perf_close(&pf);
		_exit(bad);
	}
	CHECK(pid > 0);
	if (pid > 0) {
		CHECK(waitpid(pid, &status, 0) == pid);
		if (WIFEXITED(status) && WEXITSTATUS(status))
			printf("#   fd-limit child failed checks 0x%x\n", WEXITSTATUS(status));
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	child_end(&c);
}

static void test_perf__no_process(void)
{
	const struct vt_perf_opts opts = { 99, 0, 0, false };
	struct vt_perf *pf = (struct vt_perf *)&pf;
	struct vt_err err;

	CHECK_EQ_I64(vt_perf_open(NO_SUCH_PID, &opts, &pf, &err), VT_E_NOPROC);
	CHECK(pf == NULL);
	CHECK(err.msg[0]);
	CHECK_EQ_I64(vt_perf_check(NO_SUCH_PID, &err), VT_E_NOPROC);
	CHECK_EQ_I64(vt_perf_open(0, &opts, &pf, &err), VT_E_NOPROC);
}

static void test_perf__bad_opts(void)
{
	struct vt_perf_opts opts = { 99, 100, 0, false };   /* not a multiple of 8 */
	struct vt_perf *pf = NULL;
	struct vt_err err;

	CHECK_EQ_I64(vt_perf_open(getpid(), &opts, &pf, &err), VT_E_USAGE);
	opts.stack_bytes = 65536;
	CHECK_EQ_I64(vt_perf_open(getpid(), &opts, &pf, &err), VT_E_USAGE);
	opts.stack_bytes = 0;
	opts.ring_pages = 3;
	CHECK_EQ_I64(vt_perf_open(getpid(), &opts, &pf, &err), VT_E_USAGE);
	opts.ring_pages = 0;
	opts.hz = 100000000;
	CHECK_EQ_I64(vt_perf_open(getpid(), &opts, &pf, &err), VT_E_USAGE);
	CHECK(strstr(err.hint, "perf_event_max_sample_rate") != NULL);
	CHECK(pf == NULL);
}

/* ---- inherit: threads that live less than a sync ---- */

/* A short thread: ~SHORT_CPU_S of CPU in vt_test_spin_here's loop, then it ends. */
#define SHORT_CPU_S 0.025
static void *short_thread(void *arg)
{
	struct timespec ts;
	double end;
	uint64_t x = 1;

	(void)arg;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	end = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 + SHORT_CPU_S;
	do {
		for (int i = 0; i < 4096; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
		spin_sink = x;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	} while ((double)ts.tv_sec + (double)ts.tv_nsec / 1e9 < end);
	return NULL;
}

/* A process that, once told, makes short threads one after another for secs. */
static pid_t short_threads_start(int *go, double secs)
{
	int p[2];
	pid_t pid;

	if (pipe(p) != 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		char c;
		double end;

		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(0);
		end = mono_s() + secs;
		while (mono_s() < end) {
			pthread_t t;

			if (pthread_create(&t, NULL, short_thread, NULL) != 0)
				_exit(3);
			pthread_join(t, NULL);
		}
		_exit(0);
	}
	close(p[0]);
	*go = p[1];
	return pid;
}

static void count_other_tids(void *ctx, const struct vt_perf_sample *s)
{
	struct seen *sn = ctx;

	if (s->tid != sn->pid)
		sn->other++;
	else
		sn->n[0]++;
}

/*
 * Threads made after the session opened and gone before any sync: with
 * inherit each is sampled through the events of the thread that made it;
 * without, none is (the sync that would open theirs never comes).
 */
static void test_perf__inherit_short_threads(void)
{
	for (int inherit = 1; inherit >= 0; inherit--) {
		struct vt_perf_opts opts = { 499, 512, 0, false, inherit };
		struct vt_perf_stats st;
		struct rusage ru;
		double cpu_s;
		struct vt_perf *pf = NULL;
		struct seen sn;
		struct vt_err err;
		int go, rc;
		pid_t pid;

		if (!perf_usable())
			return;
		pid = short_threads_start(&go, 1.0);
		CHECK(pid > 0);
		if (pid <= 0)
			return;
		rc = vt_perf_open(pid, &opts, &pf, &err);
		CHECK_EQ_I64(rc, VT_OK);
		if (rc != VT_OK) {
			printf("#   open: %s\n", err.msg);
			close(go);
			waitpid(pid, NULL, 0);
			return;
		}
		vt_perf_get_stats(pf, &st);
		CHECK_EQ_I64(st.inherit, inherit);
		memset(&sn, 0, sizeof(sn));
		sn.pid = pid;
		CHECK(write(go, "g", 1) == 1);
		double end = mono_s() + 1.3;
		while (mono_s() < end && rc == VT_OK)
			rc = vt_perf_poll(pf, 50, count_other_tids, &sn, &err);
		vt_perf_poll(pf, 0, count_other_tids, &sn, &err);
		vt_perf_get_stats(pf, &st);
		close(go);
		wait4(pid, NULL, 0, &ru);
		vt_perf_close(&pf);
		/*
		 * ~1 s of short threads at 499 Hz: a sample per 2 ms of the CPU they
		 * got, less each thread's first period (2 ms of its 25).  Half of what
		 * their CPU time makes is plenty: on a busy box (make test-loaded)
		 * they got 0.3 s of their 1 s, and a fixed count failed.
		 */
		cpu_s = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
			(double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
		printf("# inherit %d: %llu samples of threads made after the open (their CPU, "
		       "%.3f s, makes %.0f), %llu of the maker, %u CPUs, lost %llu\n", inherit,
		       (unsigned long long)sn.other, cpu_s, cpu_s * 499, (unsigned long long)sn.n[0],
		       st.cpus, (unsigned long long)st.lost);
		if (inherit)
			CHECK(sn.other > 20 && (double)sn.other > 0.5 * cpu_s * 499);
		else
			CHECK_EQ_U64(sn.other, 0);
	}
}

static long paranoid_now(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	long v = 99;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = 99;
		fclose(f);
	}
	return v;
}

/* As an unprivileged user (root forks a child that drops to nobody): its own
 * process gives user-space samples when paranoid <= 2 (kernel frames refused
 * and said so at 2), else VT_E_PERM with the sysctl; pid 1, root's, gives
 * VT_E_PERM with a hint naming whose process it is and the capabilities. */
static void test_perf__unprivileged(void)
{
	long paranoid = paranoid_now();
	pid_t pid;
	int status;

	if (geteuid() != 0) {
		printf("# SKIP not root: cannot drop to another user\n");
		return;
	}
	if (!perf_usable())
		return;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		const struct vt_perf_opts opts = { 99, 1024, 8, true };
		struct vt_perf_stats st;
		struct vt_perf *pf = NULL;
		struct vt_err err;
		char want[64];
		int bad = 0, rc;

		if (setgid(65534) || setuid(65534))
			_exit(100);
		prctl(PR_SET_DUMPABLE, 1);
		rc = vt_perf_open(getpid(), &opts, &pf, &err);
		if (paranoid <= 2) {
			if (rc != VT_OK)
				bad |= 1;
			else {
				vt_perf_get_stats(pf, &st);
				if (st.kernel_refused != (paranoid == 2))
					bad |= 2;
			}
		} else {
			snprintf(want, sizeof(want), "perf_event_paranoid is %ld", paranoid);
			if (rc != VT_E_PERM || !strstr(err.hint, want) ||
			    !strstr(err.hint, "sudo sysctl kernel.perf_event_paranoid="))
				bad |= 4;
		}
		vt_perf_close(&pf);
		rc = vt_perf_check(1, &err);
		if (rc != VT_E_PERM || !strstr(err.hint, "uid 0") || !strstr(err.hint, "cap_perfmon") ||
		    !strstr(err.hint, "perf_event_paranoid is"))
			bad |= 8;
		if (bad & 8)
			fprintf(stderr, "check(1): %s / %s / %s\n", vt_code_name(rc), err.msg, err.hint);
		_exit(bad);
	}
	CHECK(pid > 0);
	if (pid <= 0)
		return;
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status));
	if (WIFEXITED(status) && WEXITSTATUS(status))
		printf("#   unprivileged child failed checks 0x%x (paranoid %ld)\n",
		       WEXITSTATUS(status), paranoid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

VT_TEST_MAIN(test_perf__parse_full, test_perf__parse_truncated, test_perf__parse_lies,
	     test_perf__parse_other_fields, test_perf__live_session, test_perf__small_rings_wrap,
	     test_perf__fd_limit, test_perf__no_process, test_perf__bad_opts, test_perf__unprivileged,
	     test_perf__inherit_short_threads)

/*
 * test_inject.c — calling functions inside running processes (src/inject/).
 *
 * Parsers and tables on strings first; then live processes: the quiet mode
 * of targets/inject_victim (found in $VT_BUILD/targets, else $B/targets as
 * tests/run sets it, else build/targets: a plain glibc build even when this
 * test runs under ASan) for exact malloc
 * figures, and children forked here for the kernel's side of things
 * (registers and vector state across a probe, syscall restart, signals,
 * seccomp).  Last, 2000 probes into the busy inject_victim (two threads
 * churning half the time, 1,000 signals a second), whose own
 * checks must all pass.  Without ptrace permission every live test prints
 * "# skip" and passes.  Every child is killed and reaped before its test
 * returns.
 *
 * lane: long — started first among the unit tests (tests/run)
 */
#include "harness.h"

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "elf/elfsym.h"
#include "inject/inject.h"
#include "proc/maps.h"
#include "proc/procfs.h"

#define LIBC "libc.so.6"
#define T_ATTACH_MS 1000
#define T_CALL_MS 2000
#define STRESS_PROBES_DEFAULT 2000   /* VT_STRESS_PROBES=10000 for the long run */
#define STRESS_MIN_MS 1500           /* and for at least this long */

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static bool contains(const char *s, const char *needle)
{
	return s && strstr(s, needle) != NULL;
}

/* ---- strings: the syscall file and the x86-64 tables ----------------- */

static void test_inject__syscall_parse(void)
{
	static const char blocked[] = "230 0x1 0x0 0x7ffd5d1c5f30 0x0 0x0 0x0 0x7ffd5d1c5f18 0x7f3c9e8d5e4a\n";
	struct vt_inject_syscall sc;

	CHECK(vt_inject_syscall_parse(blocked, sizeof(blocked) - 1, &sc));
	CHECK(!sc.running);
	CHECK_EQ_I64(sc.nr, 230);
	CHECK_EQ_U64(sc.args[0], 1);
	CHECK_EQ_U64(sc.args[2], 0x7ffd5d1c5f30ULL);
	CHECK_EQ_U64(sc.sp, 0x7ffd5d1c5f18ULL);
	CHECK_EQ_U64(sc.pc, 0x7f3c9e8d5e4aULL);
	CHECK(vt_inject_syscall_parse("running\n", 8, &sc) && sc.running);
	CHECK(vt_inject_syscall_parse("-1 0x7ffd5d1c5f18 0x401136\n", 27, &sc));
	CHECK_EQ_I64(sc.nr, -1);
	CHECK_EQ_U64(sc.pc, 0x401136);
	CHECK(!vt_inject_syscall_parse("", 0, &sc));
	CHECK(!vt_inject_syscall_parse("230 0x1 0x0\n", 12, &sc));
	CHECK(!vt_inject_syscall_parse("-2 0x1 0x2\n", 11, &sc));
	CHECK(!vt_inject_syscall_parse("0 0x1 0x2 0x3 0x4 0x5 0x6 0x7 zz\n", 33, &sc));
}

static void test_inject__syscall_class(void)
{
	uint64_t none[6] = { 0 }, masked[6] = { 0, 0, 0, 0x7ffd0000, 0x7ffd0000, 0x7ffd0000 };

	CHECK_EQ_I64(vt_arch_syscall_class(SYS_nanosleep, none), VT_SYS_SLEEP);
	CHECK_EQ_I64(vt_arch_syscall_class(SYS_read, none), VT_SYS_SLEEP);
	CHECK_EQ_I64(vt_arch_syscall_class(SYS_ppoll, none), VT_SYS_SLEEP);
	CHECK_EQ_I64(vt_arch_syscall_class(SYS_ppoll, masked), VT_SYS_NEVER);
	CHECK_EQ_I64(vt_arch_syscall_class(SYS_pselect6, masked), VT_SYS_NEVER);
	CHECK_EQ_I64(vt_arch_syscall_class(SYS_epoll_wait, none), VT_SYS_EINTR);
	CHECK_EQ_I64(vt_arch_syscall_class(SYS_epoll_pwait, masked), VT_SYS_NEVER);
	CHECK_EQ_I64(vt_arch_syscall_class(SYS_futex, none), VT_SYS_FUTEX);
	CHECK_EQ_I64(vt_arch_syscall_class(SYS_mmap, none), VT_SYS_NEVER);
	CHECK_EQ_I64(vt_arch_syscall_class(SYS_clone, none), VT_SYS_NEVER);
	CHECK_EQ_I64(vt_arch_syscall_class(SYS_rt_sigsuspend, none), VT_SYS_NEVER);
	CHECK_EQ_I64(vt_arch_syscall_class(SYS_write, none), VT_SYS_OTHER);
	CHECK_EQ_I64(vt_arch_syscall_class(4242, none), VT_SYS_OTHER);
	CHECK_EQ_I64(vt_arch_syscall_class(-1, none), VT_SYS_NEVER);
	CHECK_STR(vt_arch_syscall_name(SYS_clock_nanosleep), "clock_nanosleep");
	CHECK(vt_arch_syscall_name(4242) == NULL);
}

/* ---- this process's libc: elfsym and resolve ----------------------------- */

static int read_maps(const struct vt_procfs *pfs, pid_t pid, struct vt_region_list *maps)
{
	struct vt_buf buf = VT_BUF_INIT(64u << 20);
	struct vt_err err;
	int fd, rc;

	memset(maps, 0, sizeof(*maps));
	rc = vt_pid_open(pfs, pid, &fd, &err);
	if (rc)
		return rc;
	rc = vt_read_at(fd, "maps", &buf, &err);
	if (!rc)
		rc = vt_maps_parse(buf.data, buf.len, maps, &err);
	vt_buf_release(&buf);
	close(fd);
	return rc;
}

static const char *self_libc_path(char *out, size_t cap)
{
	struct vt_region_list maps;
	struct vt_procfs pfs;
	struct vt_err err;
	size_t i;

	out[0] = '\0';
	if (vt_procfs_open(&pfs, NULL, NULL, &err))
		return out;
	if (read_maps(&pfs, getpid(), &maps) == VT_OK) {
		for (i = 0; i < maps.n; i++)
			if (contains(maps.v[i].path, "/" LIBC)) {
				snprintf(out, cap, "%s", maps.v[i].path);
				break;
			}
		vt_region_list_release(&maps);
	}
	vt_procfs_close(&pfs);
	return out;
}

static void test_inject__elfsym_symbol(void)
{
	struct vt_elfsym *ef = NULL;
	char path[512];
	struct vt_err err;
	uint64_t v, vaddr;
	int fd;

	self_libc_path(path, sizeof(path));
	CHECK(path[0] != '\0');
	fd = open(path, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	if (fd < 0 || vt_elfsym_open_fd(fd, &ef, &err) != VT_OK)
		return;
	CHECK(vt_elfsym_symbol(ef, "mallinfo2", &v, &err) == VT_OK && v != 0);
	CHECK(vt_elfsym_symbol(ef, "malloc_trim", &v, &err) == VT_OK && v != 0);
	CHECK(vt_elfsym_symbol(ef, "malloc_info", &v, &err) == VT_OK && v != 0);
	/* two versions: the default (@@GLIBC_2.3.2) is the one dlsym gives */
	CHECK(vt_elfsym_symbol(ef, "pthread_cond_wait", &v, &err) == VT_OK && v != 0);
	CHECK(vt_elfsym_symbol(ef, "strlen", &v, &err) == VT_E_NOTFOUND);        /* IFUNC */
	CHECK(vt_elfsym_symbol(ef, "no_such_function_here", &v, &err) == VT_E_NOTFOUND);
	CHECK(vt_elfsym_symbol(ef, "errno", &v, &err) == VT_E_NOTFOUND);         /* TLS, not a function */
	CHECK(vt_elfsym_first_load_vaddr(ef, &vaddr));
	CHECK_EQ_U64(vaddr, 0);
	vt_elfsym_free(&ef);
}

static void test_inject__resolve_self(void)
{
	static const char *const names[] = { "mallinfo2", "malloc_trim", "getpid",
					     "pthread_cond_wait", "__errno_location" };
	struct vt_region_list maps;
	struct vt_procfs pfs;
	struct vt_err err;
	void *libc, *want;
	uint64_t addr;
	size_t i;
	int rc;

	CHECK(vt_procfs_open(&pfs, NULL, NULL, &err) == VT_OK);
	CHECK(read_maps(&pfs, getpid(), &maps) == VT_OK);
	/* dlopen of the loaded libc: dlsym gives libc's own definitions, not ASan's */
	libc = dlopen(LIBC, RTLD_NOW | RTLD_NOLOAD);
	CHECK(libc != NULL);
	for (i = 0; libc && i < sizeof(names) / sizeof(names[0]); i++) {
		want = dlsym(libc, names[i]);
		rc = vt_inject_resolve(&pfs, getpid(), &maps, LIBC, names[i], &addr, &err);
		if (rc)
			printf("#   %s: %s\n", names[i], err.msg);
		CHECK_EQ_I64(rc, VT_OK);
		CHECK_EQ_U64(addr, (uint64_t)(uintptr_t)want);
	}
	rc = vt_inject_resolve(&pfs, getpid(), &maps, LIBC, "strlen", &addr, &err);
	CHECK_EQ_I64(rc, VT_E_NOTFOUND);
	CHECK(contains(err.msg, "IFUNC"));
	rc = vt_inject_resolve(&pfs, getpid(), &maps, LIBC, "no_such_function_here", &addr, &err);
	CHECK_EQ_I64(rc, VT_E_NOTFOUND);
	rc = vt_inject_resolve(&pfs, getpid(), &maps, "libnothere.so", "malloc", &addr, &err);
	CHECK_EQ_I64(rc, VT_E_NOTFOUND);
	if (libc)
		dlclose(libc);
	vt_region_list_release(&maps);
	vt_procfs_close(&pfs);
}

/* ---- live processes: plumbing ------------------------------------------------ */

static int ptrace_state = -1;   /* -1 unknown, 0 denied, 1 allowed */

/* Can this process ptrace a child of its own?  Else the live tests skip. */
static bool ptrace_allowed(void)
{
	pid_t child;
	int st;

	if (ptrace_state >= 0)
		return ptrace_state == 1;
	fflush(stdout);
	child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	ptrace_state = ptrace(PTRACE_SEIZE, child, NULL, NULL) == 0;
	kill(child, SIGKILL);
	waitpid(child, &st, __WALL);
	return ptrace_state == 1;
}

static bool skip_live(void)
{
	if (ptrace_allowed())
		return false;
	printf("# skip: ptrace is not permitted here\n");
	return true;
}

/* Whether the program at path links ASan, whose mallinfo2 says all zeros. */
static bool links_asan(const char *path)
{
	static char buf[1 << 20];
	size_t n;
	FILE *f = fopen(path, "rb");

	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	return memmem(buf, n, "libasan.so", 10) != NULL;
}

/*
 * $VT_BUILD/targets/inject_victim, else $B's (tests/run), else build/'s: the
 * first that exists and is a plain glibc build (B=build-san tests/run unit
 * finds the sanitizer build's first, whose malloc is ASan's).
 */
static const char *victim_path(void)
{
	static char path[1024];
	const char *dirs[] = { getenv("VT_BUILD"), getenv("B"), "build" };
	size_t i;

	path[0] = '\0';
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		char cand[1024];

		if (!dirs[i] || !*dirs[i])
			continue;
		snprintf(cand, sizeof(cand), "%s/targets/inject_victim", dirs[i]);
		if (access(cand, X_OK) != 0)
			continue;
		if (!path[0])
			snprintf(path, sizeof(path), "%s", cand);   /* none plain: the first, as before */
		if (!links_asan(cand)) {
			snprintf(path, sizeof(path), "%s", cand);
			break;
		}
	}
	if (!path[0])
		snprintf(path, sizeof(path), "build/targets/inject_victim");
	return path;
}

struct child {
	pid_t pid;
	int to;      /* its stdin */
	int from;    /* its stdout */
};

/* A line from fd within ms; false on timeout or EOF. */
static bool read_line(int fd, char *out, size_t cap, int ms)
{
	double end = now_ms() + ms;
	size_t n = 0;
	char c;

	while (n + 1 < cap) {
		struct pollfd p = { fd, POLLIN, 0 };
		int left = (int)(end - now_ms());

		if (left <= 0 || poll(&p, 1, left) <= 0)
			return false;
		if (read(fd, &c, 1) != 1)
			return false;
		if (c == '\n')
			break;
		out[n++] = c;
	}
	out[n] = '\0';
	return true;
}

static bool spawn(struct child *c, char *const argv[])
{
	int in[2], out[2];
	char line[64];

	memset(c, 0, sizeof(*c));
	c->pid = -1;
	if (pipe(in) || pipe(out))
		return false;
	fflush(stdout);
	c->pid = fork();
	if (c->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->to = in[1];
	c->from = out[0];
	if (c->pid < 0 || !read_line(c->from, line, sizeof(line), 5000) ||
	    strncmp(line, "pid ", 4) != 0) {
		printf("#   %s did not start\n", argv[0]);
		return false;
	}
	return true;
}

static void reap(pid_t pid)
{
	int st, i;

	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	for (i = 0; i < 2000; i++) {
		pid_t r = waitpid(pid, &st, WNOHANG | __WALL);

		if (r == pid || (r < 0 && errno == ECHILD))
			return;
		usleep(1000);
	}
}

static void child_end(struct child *c)
{
	reap(c->pid);
	if (c->to > 0)
		close(c->to);
	if (c->from > 0)
		close(c->from);
	c->pid = -1;
}

static bool start_quiet(struct child *c, const char *hold_kb)
{
	char *argv[] = { (char *)victim_path(), "--hold-kb", (char *)hold_kb, "--seconds", "60",
			 NULL };

	return spawn(c, argv);
}

/* Send one command letter, read the answer line. */
static bool ask(struct child *c, const char *cmd, char *out, size_t cap)
{
	return write(c->to, cmd, strlen(cmd)) == (ssize_t)strlen(cmd) &&
	       read_line(c->from, out, cap, 5000);
}

/* glibc struct mallinfo2: ten size_t. */
struct mi2 {
	size_t arena, ordblks, smblks, hblks, hblkhd, usmblks, fsmblks, uordblks, fordblks, keepcost;
};

static bool ask_mallinfo(struct child *c, struct mi2 *m)
{
	char line[320];

	return ask(c, "m", line, sizeof(line)) &&
	       sscanf(line, "mallinfo2 %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu", &m->arena,
		      &m->ordblks, &m->smblks, &m->hblks, &m->hblkhd, &m->usmblks, &m->fsmblks,
		      &m->uordblks, &m->fordblks, &m->keepcost) == 10;
}

/* Wait until thread tid of pid sleeps in system call nr (-2: any). */
static bool wait_blocked(pid_t pid, pid_t tid, long nr)
{
	char path[64], buf[256];
	struct vt_inject_syscall sc;
	int i, fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
	for (i = 0; i < 400; i++) {
		fd = open(path, O_RDONLY);
		if (fd < 0)
			return false;
		n = read(fd, buf, sizeof(buf));
		close(fd);
		if (n > 0 && vt_inject_syscall_parse(buf, (size_t)n, &sc) && !sc.running &&
		    sc.nr >= 0 && (nr == -2 || sc.nr == nr))
			return true;
		usleep(5000);
	}
	return false;
}

/* Addresses of libc functions in pid. */
struct libc_fns {
	uint64_t mallinfo2, malloc_trim, getpid, getppid, sleep, snprintf, atoi, close, errno_loc;
};

static bool resolve_all(const struct vt_procfs *pfs, pid_t pid, struct libc_fns *f)
{
	static const struct {
		const char *name;
		size_t off;
	} want[] = {
		{ "mallinfo2", offsetof(struct libc_fns, mallinfo2) },
		{ "malloc_trim", offsetof(struct libc_fns, malloc_trim) },
		{ "getpid", offsetof(struct libc_fns, getpid) },
		{ "getppid", offsetof(struct libc_fns, getppid) },
		{ "sleep", offsetof(struct libc_fns, sleep) },
		{ "snprintf", offsetof(struct libc_fns, snprintf) },
		{ "atoi", offsetof(struct libc_fns, atoi) },
		{ "close", offsetof(struct libc_fns, close) },
		{ "__errno_location", offsetof(struct libc_fns, errno_loc) },
	};
	struct vt_region_list maps;
	struct vt_err err;
	size_t i;
	bool ok = true;

	memset(f, 0, sizeof(*f));
	if (read_maps(pfs, pid, &maps) != VT_OK)
		return false;
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		uint64_t *slot = (uint64_t *)((char *)f + want[i].off);

		if (vt_inject_resolve(pfs, pid, &maps, LIBC, want[i].name, slot, &err) != VT_OK) {
			printf("#   resolve %s: %s\n", want[i].name, err.msg);
			ok = false;
		}
	}
	vt_region_list_release(&maps);
	return ok;
}

/* Attach, or print why not. */
static struct vt_inject_session *attach(const struct vt_procfs *pfs, pid_t pid, pid_t tid)
{
	struct vt_inject_session *s = NULL;
	struct vt_err err;
	int rc = vt_inject_attach(pfs, pid, tid, 0, T_ATTACH_MS, &s, &err);

	if (rc)
		printf("#   attach %d/%d: %s: %s\n", (int)pid, (int)tid, vt_code_name(rc), err.msg);
	return s;
}

static int call0(struct vt_inject_session *s, uint64_t fn, uint64_t *ret, struct vt_err *err)
{
	struct vt_inject_call c;
	int rc;

	memset(&c, 0, sizeof(c));
	c.func = fn;
	rc = vt_inject_run(s, &c, T_CALL_MS, err);
	if (rc)
		printf("#   call 0x%" PRIx64 ": %s: %s\n", fn, vt_code_name(rc), err->msg);
	*ret = c.ret;
	return rc;
}

static int call_mallinfo(struct vt_inject_session *s, uint64_t fn, struct mi2 *m,
			 struct vt_err *err)
{
	struct vt_inject_call c;

	memset(&c, 0, sizeof(c));
	c.func = fn;
	c.scratch_args = 1;           /* args[0]: the hidden struct-return pointer */
	c.scratch_len = sizeof(*m);
	c.scratch_out = m;
	return vt_inject_run(s, &c, T_CALL_MS, err);
}

static int detach(struct vt_inject_session **s)
{
	struct vt_err err;
	double us;
	int rc = vt_inject_detach(s, &us, &err);

	if (rc)
		printf("#   detach: %s: %s\n", vt_code_name(rc), err.msg);
	return rc;
}

static uint64_t rss_anon_kb(pid_t pid)
{
	char path[64], buf[4096], *p;
	uint64_t kb = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	p = strstr(buf, "RssAnon:");
	if (p)
		kb = strtoull(p + 8, NULL, 10);
	return kb;
}

/* ---- the quiet victim: exact figures ------------------------------------- */

static void test_inject__pick_quiet_victim(void)
{
	struct vt_procfs pfs;
	struct child c;
	struct vt_err err;
	char why[256];
	pid_t tid = 0;

	if (skip_live())
		return;
	vt_procfs_open(&pfs, NULL, NULL, &err);
	CHECK(start_quiet(&c, "64"));
	CHECK(wait_blocked(c.pid, c.pid, SYS_read));
	CHECK_EQ_I64(vt_inject_pick_thread(&pfs, c.pid, 0, &tid, why, sizeof(why), &err), VT_OK);
	CHECK_EQ_I64(tid, c.pid);
	CHECK(contains(why, "blocked in read"));
	printf("#   picked %s\n", why);
	child_end(&c);
	vt_procfs_close(&pfs);
}

/*
 * Of three sleepers, the longest is stopped: a thread pacing itself with
 * 200 µs sleeps (inside a critical section, as a worker holding the hot
 * lock may be), the main thread in read() (woken whenever), and one asleep
 * for a minute.  The same class and no CPU to tell them apart: before, the
 * lowest tid (the main thread) was stopped, whatever its sleep.
 */
static void *pacer(void *arg)
{
	(void)arg;
	for (;;) {
		struct timespec ts = { 0, 200 * 1000 };

		nanosleep(&ts, NULL);
	}
	return NULL;
}

static void *long_sleeper(void *arg)
{
	struct timespec ts = { 60, 0 };

	(void)arg;
	nanosleep(&ts, NULL);
	return NULL;
}

static void test_inject__pick_longest_sleeper(void)
{
	struct vt_procfs pfs;
	struct vt_err err;
	char why[256];
	pid_t pid, tid = 0, tids[2] = { 0, 0 };
	int to_parent[2], to_child[2];

	if (skip_live())
		return;
	CHECK(pipe(to_parent) == 0 && pipe(to_child) == 0);
	pid = fork();
	if (pid == 0) {
		pthread_t a, b;
		char c;

		close(to_parent[0]);
		close(to_child[1]);
		if (pthread_create(&a, NULL, pacer, NULL) || pthread_create(&b, NULL, long_sleeper, NULL))
			_exit(2);
		if (read(to_child[0], &c, 1) < 0)    /* the main thread waits here */
			_exit(3);
		_exit(0);
	}
	CHECK(pid > 0);
	close(to_parent[1]);
	close(to_child[0]);
	if (pid <= 0)
		return;
	vt_procfs_open(&pfs, NULL, NULL, &err);
	/* the threads' tids, in creation order: the pacer, then the long sleeper */
	for (int i = 0; i < 200 && !tids[1]; i++) {
		char path[64];
		struct dirent *d;
		DIR *dir;
		pid_t lo = 0, hi = 0;

		snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
		if ((dir = opendir(path))) {
			while ((d = readdir(dir))) {
				pid_t t = atoi(d->d_name);

				if (t <= pid)
					continue;
				if (!lo || t < lo) {
					hi = hi ? hi : lo;
					lo = t;
				} else if (!hi || t > hi) {
					hi = t;
				}
			}
			closedir(dir);
		}
		if (lo && hi) {
			tids[0] = lo;
			tids[1] = hi;
		} else {
			usleep(5000);
		}
	}
	CHECK(tids[0] > 0 && tids[1] > 0);
	CHECK(wait_blocked(pid, pid, SYS_read));
	CHECK(wait_blocked(pid, tids[1], SYS_clock_nanosleep) || wait_blocked(pid, tids[1], SYS_nanosleep));
	CHECK_EQ_I64(vt_inject_pick_thread(&pfs, pid, 0, &tid, why, sizeof(why), &err), VT_OK);
	printf("#   picked %s (main %d, pacer %d, long sleeper %d)\n", why, (int)pid, (int)tids[0],
	       (int)tids[1]);
	CHECK_EQ_I64(tid, tids[1]);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(to_parent[0]);
	close(to_child[1]);
	vt_procfs_close(&pfs);
}

static void test_inject__mallinfo2_matches(void)
{
	struct vt_inject_session *s;
	struct mi2 own, injected;
	struct libc_fns f;
	struct vt_procfs pfs;
	struct vt_err err;
	struct child c;
	int rc;

	if (skip_live())
		return;
	vt_procfs_open(&pfs, NULL, NULL, &err);
	CHECK(start_quiet(&c, "1000"));
	CHECK(ask_mallinfo(&c, &own));
	CHECK(wait_blocked(c.pid, c.pid, SYS_read));
	CHECK(resolve_all(&pfs, c.pid, &f));
	s = attach(&pfs, c.pid, c.pid);
	CHECK(s != NULL);
	if (s) {
		memset(&injected, 0xff, sizeof(injected));
		rc = call_mallinfo(s, f.mallinfo2, &injected, &err);
		if (rc)
			printf("#   mallinfo2: %s\n", err.msg);
		CHECK_EQ_I64(rc, VT_OK);
		CHECK_EQ_I64(detach(&s), VT_OK);
		CHECK(s == NULL);
	}
	printf("#   victim: uordblks %zu fordblks %zu arena %zu; injected: %zu %zu %zu\n",
	       own.uordblks, own.fordblks, own.arena, injected.uordblks, injected.fordblks,
	       injected.arena);
	CHECK(own.uordblks >= 1000 * 1024);
	CHECK(memcmp(&own, &injected, sizeof(own)) == 0);
	/* And the victim goes on, its read() restarted, answering the same. */
	CHECK(ask_mallinfo(&c, &own));
	CHECK(memcmp(&own, &injected, sizeof(own)) == 0);
	child_end(&c);
	vt_procfs_close(&pfs);
}

static void test_inject__malloc_trim(void)
{
	struct vt_inject_session *s;
	uint64_t before, after, ret = 99;
	struct mi2 own, injected;
	struct libc_fns f;
	struct vt_procfs pfs;
	struct vt_err err;
	struct child c;
	char line[64];

	if (skip_live())
		return;
	vt_procfs_open(&pfs, NULL, NULL, &err);
	/* 20 MiB in 1 KiB blocks; freeing all but the ends leaves a hole trim can release. */
	CHECK(start_quiet(&c, "20480"));
	CHECK(ask(&c, "f", line, sizeof(line)) && !strcmp(line, "freed"));
	CHECK(wait_blocked(c.pid, c.pid, SYS_read));
	CHECK(resolve_all(&pfs, c.pid, &f));
	before = rss_anon_kb(c.pid);
	s = attach(&pfs, c.pid, c.pid);
	CHECK(s != NULL);
	if (s) {
		CHECK_EQ_I64(call0(s, f.malloc_trim, &ret, &err), VT_OK);   /* malloc_trim(0) */
		CHECK_EQ_U64(ret, 1);
		CHECK_EQ_I64(call_mallinfo(s, f.mallinfo2, &injected, &err), VT_OK);
		CHECK_EQ_I64(detach(&s), VT_OK);
	}
	after = rss_anon_kb(c.pid);
	printf("#   malloc_trim(0) returned %" PRIu64 "; RssAnon %" PRIu64 " -> %" PRIu64 " kB\n",
	       ret, before, after);
	CHECK(after + 10 * 1024 < before);
	CHECK(ask_mallinfo(&c, &own));
	CHECK(memcmp(&own, &injected, sizeof(own)) == 0);
	child_end(&c);
	vt_procfs_close(&pfs);
}

static void test_inject__errno_preserved(void)
{
	struct vt_inject_session *s;
	struct libc_fns f;
	struct vt_procfs pfs;
	struct vt_err err;
	struct child c;
	char line[64];

	if (skip_live())
		return;
	vt_procfs_open(&pfs, NULL, NULL, &err);
	/* close(-1) fails with EBADF: the victim's errno must still read 1234. */
	CHECK(start_quiet(&c, "16"));
	CHECK(ask(&c, "e", line, sizeof(line)));          /* errno = 1234 in the victim */
	CHECK(wait_blocked(c.pid, c.pid, SYS_read));
	CHECK(resolve_all(&pfs, c.pid, &f));
	s = attach(&pfs, c.pid, c.pid);
	CHECK(s != NULL);
	if (s) {
		struct vt_inject_call call;

		memset(&call, 0, sizeof(call));
		call.func = f.close;
		call.args[0] = (uint64_t)-1;
		CHECK_EQ_I64(vt_inject_save_errno(s, f.errno_loc, T_CALL_MS, &err), VT_OK);
		CHECK_EQ_I64(vt_inject_run(s, &call, T_CALL_MS, &err), VT_OK);
		CHECK_EQ_I64((int32_t)call.ret, -1);
		CHECK_EQ_I64(detach(&s), VT_OK);
	}
	CHECK(ask(&c, "E", line, sizeof(line)));
	CHECK_STR(line, "errno 1234");
	/* Without vt_inject_save_errno the callee's EBADF would show: why it exists. */
	s = attach(&pfs, c.pid, c.pid);
	if (s) {
		struct vt_inject_call call;

		memset(&call, 0, sizeof(call));
		call.func = f.close;
		call.args[0] = (uint64_t)-1;
		CHECK_EQ_I64(vt_inject_run(s, &call, T_CALL_MS, &err), VT_OK);
		CHECK_EQ_I64(detach(&s), VT_OK);
	}
	CHECK(ask(&c, "E", line, sizeof(line)));
	CHECK_STR(line, "errno 9");
	child_end(&c);
	vt_procfs_close(&pfs);
}

static volatile sig_atomic_t self_term;

static void on_self_term(int sig)
{
	(void)sig;
	self_term++;
}

static void test_inject__timeout_abandon(void)
{
	struct vt_inject_session *s;
	struct vt_inject_call call;
	struct libc_fns f;
	struct vt_procfs pfs;
	struct vt_err err;
	struct child c;
	struct mi2 own;
	double t;
	uint64_t ret;
	int rc;

	if (skip_live())
		return;
	vt_procfs_open(&pfs, NULL, NULL, &err);
	CHECK(start_quiet(&c, "16"));
	CHECK(wait_blocked(c.pid, c.pid, SYS_read));
	CHECK(resolve_all(&pfs, c.pid, &f));
	signal(SIGTERM, on_self_term);
	s = attach(&pfs, c.pid, c.pid);
	CHECK(s != NULL);
	if (s) {
		/* A SIGTERM to vitals waits until the target is restored. */
		CHECK(kill(getpid(), SIGTERM) == 0);
		CHECK_EQ_I64(self_term, 0);
		memset(&call, 0, sizeof(call));
		call.func = f.sleep;
		call.args[0] = 10;                        /* sleep(10) */
		t = now_ms();
		rc = vt_inject_run(s, &call, 200, &err);
		t = now_ms() - t;
		printf("#   sleep(10) with a 200 ms timeout: %s after %.0f ms: %s\n",
		       vt_code_name(rc), t, err.msg);
		CHECK_EQ_I64(rc, VT_E_TIMEOUT);
		CHECK(contains(err.msg, "nanosleep"));
		CHECK(t < 3000);   /* bounded: far below the callee's 10 s, wide for a busy box */
		/* The session is still good: another call works on the same thread. */
		CHECK_EQ_I64(call0(s, f.getpid, &ret, &err), VT_OK);
		CHECK_EQ_U64(ret, (uint64_t)c.pid);
		CHECK_EQ_I64(self_term, 0);
		CHECK_EQ_I64(detach(&s), VT_OK);
		CHECK_EQ_I64(self_term, 1);
	}
	signal(SIGTERM, SIG_DFL);
	CHECK(ask_mallinfo(&c, &own));
	child_end(&c);
	vt_procfs_close(&pfs);
}

/* ---- forked children: registers, restart, signals ---------------------- */

/* 16 vector registers (32 bytes each), five callee-saved GPRs, MXCSR. */
struct regblk {
	uint8_t pat[16][32];
	uint8_t out[16][32];
	uint64_t gin[5], gout[5];
	uint32_t mx_in, mx_out, mx_save, pad;
};

#define RB_OUT 512
#define RB_GIN 1024
#define RB_GOUT 1064
#define RB_MXI 1104
#define RB_MXO 1108
#define RB_MXS 1112
_Static_assert(offsetof(struct regblk, out) == RB_OUT, "regblk layout");
_Static_assert(offsetof(struct regblk, gin) == RB_GIN, "regblk layout");
_Static_assert(offsetof(struct regblk, gout) == RB_GOUT, "regblk layout");
_Static_assert(offsetof(struct regblk, mx_in) == RB_MXI, "regblk layout");
_Static_assert(offsetof(struct regblk, mx_out) == RB_MXO, "regblk layout");
_Static_assert(offsetof(struct regblk, mx_save) == RB_MXS, "regblk layout");

#define S_(x) #x
#define S(x) S_(x)
#define LD_Y(i) "vmovdqu " #i "*32(%[b]), %%ymm" #i "\n\t"
#define ST_Y(i) "vmovdqu %%ymm" #i ", " S(RB_OUT) "+" #i "*32(%[b])\n\t"
#define LD_X(i) "movdqu " #i "*32(%[b]), %%xmm" #i "\n\t"
#define ST_X(i) "movdqu %%xmm" #i ", " S(RB_OUT) "+" #i "*32(%[b])\n\t"
#define ALL16(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) M(8) M(9) M(10) M(11) M(12) M(13) M(14) M(15)
#define GP_LOAD                                                                         \
	"stmxcsr " S(RB_MXS) "(%[b])\n\t"                                                \
	"ldmxcsr " S(RB_MXI) "(%[b])\n\t"                                                \
	"mov " S(RB_GIN) "+0(%[b]), %%rbx\n\t"                                           \
	"mov " S(RB_GIN) "+8(%[b]), %%r12\n\t"                                           \
	"mov " S(RB_GIN) "+16(%[b]), %%r13\n\t"                                          \
	"mov " S(RB_GIN) "+24(%[b]), %%r14\n\t"                                          \
	"mov " S(RB_GIN) "+32(%[b]), %%r15\n\t"                                          \
	"xor %%eax, %%eax\n\t"                                                           \
	"syscall\n\t"
#define GP_STORE                                                                        \
	"mov %%rbx, " S(RB_GOUT) "+0(%[b])\n\t"                                          \
	"mov %%r12, " S(RB_GOUT) "+8(%[b])\n\t"                                          \
	"mov %%r13, " S(RB_GOUT) "+16(%[b])\n\t"                                         \
	"mov %%r14, " S(RB_GOUT) "+24(%[b])\n\t"                                         \
	"mov %%r15, " S(RB_GOUT) "+32(%[b])\n\t"                                         \
	"stmxcsr " S(RB_MXO) "(%[b])\n\t"                                                \
	"ldmxcsr " S(RB_MXS) "(%[b])\n\t"
#define CLOBBERS "rbx", "rcx", "r11", "r12", "r13", "r14", "r15", "xmm0", "xmm1", "xmm2",   \
	"xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12",   \
	"xmm13", "xmm14", "xmm15", "memory"

/* read(fd, buf, 1) as a raw syscall with every register around it known. */
static long asm_read(int fd, void *buf, struct regblk *b, bool avx)
{
	long ret;

	if (avx)
		__asm__ volatile(ALL16(LD_Y) GP_LOAD ALL16(ST_Y) GP_STORE "vzeroupper\n\t"
				 : "=&a"(ret)
				 : [b] "r"(b), "D"((long)fd), "S"(buf), "d"(1L)
				 : CLOBBERS);
	else
		__asm__ volatile(ALL16(LD_X) GP_LOAD ALL16(ST_X) GP_STORE
				 : "=&a"(ret)
				 : [b] "r"(b), "D"((long)fd), "S"(buf), "d"(1L)
				 : CLOBBERS);
	return ret;
}

/* The child: known registers around a blocking read; reports what changed. */
/* A mask no default leaves: SIGUSR2 and SIGWINCH blocked. */
static void odd_mask(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGUSR2);
	sigaddset(set, SIGWINCH);
}

/*
 * Blocked in a raw read with known values in ymm0-15, rbx, r12-r15 and
 * MXCSR (and, with check_mask, an odd signal mask); once the read returns,
 * reports "regs ok 0 ymm" or what differs.
 */
static void regs_child_core(int in, int out, bool check_mask)
{
	bool avx = __builtin_cpu_supports("avx");
	struct regblk b;
	char msg[96], byte = 0;
	size_t i, width = avx ? 32 : 16;
	sigset_t want, now;
	long r;
	int bad = 0;

	memset(&b, 0, sizeof(b));
	for (i = 0; i < sizeof(b.pat); i++)
		((uint8_t *)b.pat)[i] = (uint8_t)(i * 7 + 3);
	for (i = 0; i < 5; i++)
		b.gin[i] = 0x1111111111111111ULL * (i + 1);
	b.mx_in = 0x7f80;   /* round toward zero, all exceptions masked */
	if (check_mask) {
		odd_mask(&want);
		sigprocmask(SIG_SETMASK, &want, NULL);
	}
	r = asm_read(in, &byte, &b, avx);
	sigprocmask(SIG_SETMASK, NULL, &now);
	for (i = 0; i < 16; i++)
		if (memcmp(b.pat[i], b.out[i], width) != 0)
			bad |= 1;
	if (memcmp(b.gin, b.gout, sizeof(b.gin)) != 0)
		bad |= 2;
	if (b.mx_in != b.mx_out)
		bad |= 4;
	if (r != 1 || byte != 'x')
		bad |= 8;
	if (check_mask && (sigismember(&now, SIGUSR2) != 1 || sigismember(&now, SIGWINCH) != 1 ||
			   sigismember(&now, SIGUSR1) != 0))
		bad |= 16;
	snprintf(msg, sizeof(msg), "regs %s %d %s\n", bad ? "bad" : "ok", bad, avx ? "ymm" : "xmm");
	if (write(out, msg, strlen(msg)) < 0)
		_exit(2);
	_exit(0);
}

static void regs_child(int in, int out)
{
	regs_child_core(in, out, false);
}

static void masked_regs_child(int in, int out)
{
	regs_child_core(in, out, true);
}

struct forked {
	pid_t pid;
	int to, from;
};

static bool fork_child(struct forked *k, void (*body)(int in, int out))
{
	int in[2], out[2];

	memset(k, 0, sizeof(*k));
	if (pipe(in) || pipe(out))
		return false;
	fflush(stdout);
	k->pid = fork();
	if (k->pid == 0) {
		close(in[1]);
		close(out[0]);
		body(in[0], out[1]);
		_exit(0);
	}
	close(in[0]);
	close(out[1]);
	k->to = in[1];
	k->from = out[0];
	return k->pid > 0;
}

static void forked_end(struct forked *k)
{
	reap(k->pid);
	close(k->to);
	close(k->from);
}

static void test_inject__registers_restored(void)
{
	struct vt_inject_session *s;
	struct vt_inject_call call;
	unsigned char gp1[sizeof(struct user_regs_struct)], xs1[416];
	const void *data;
	struct libc_fns f;
	struct vt_procfs pfs;
	struct vt_err err;
	struct forked k;
	char text[64] = { 0 }, line[96];
	size_t len;
	uint64_t ret;
	int rc;

	if (skip_live())
		return;
	vt_procfs_open(&pfs, NULL, NULL, &err);
	CHECK(fork_child(&k, regs_child));
	CHECK(wait_blocked(k.pid, k.pid, SYS_read));
	CHECK(resolve_all(&pfs, k.pid, &f));
	s = attach(&pfs, k.pid, k.pid);
	CHECK(s != NULL);
	if (!s)
		goto out;
	CHECK(vt_inject_saved_regs(s, 0, &data, &len) && len == sizeof(gp1));
	memcpy(gp1, data, sizeof(gp1));
	CHECK(vt_inject_saved_regs(s, 1, &data, &len) && len >= sizeof(xs1));
	memcpy(xs1, data, sizeof(xs1));
	printf("#   saved: general registers %zu bytes, extended state %zu bytes\n", sizeof(gp1), len);
	/* snprintf(scratch, 64, "x=%d", 42): the format lives in scratch too. */
	memset(&call, 0, sizeof(call));
	memcpy(text + 32, "x=%d", 5);
	call.func = f.snprintf;
	call.args[0] = 0;
	call.args[1] = 32;
	call.args[2] = 32;
	call.args[3] = 42;
	call.scratch_args = 1 | 4;
	call.scratch_in = text;
	call.scratch_out = text;
	call.scratch_len = sizeof(text);
	CHECK_EQ_I64(vt_inject_run(s, &call, T_CALL_MS, &err), VT_OK);
	CHECK_EQ_U64(call.ret, 4);
	CHECK_STR(text, "x=42");
	/* atoi(NULL) faults inside libc; a call to address 1 faults at once. */
	memset(&call, 0, sizeof(call));
	call.func = f.atoi;
	rc = vt_inject_run(s, &call, T_CALL_MS, &err);
	CHECK_EQ_I64(rc, VT_E_FAULT);
	printf("#   atoi(NULL): %s\n", err.msg);
	call.func = 1;
	CHECK_EQ_I64(vt_inject_run(s, &call, T_CALL_MS, &err), VT_E_FAULT);
	CHECK(contains(err.msg, "SEGV"));
	CHECK_EQ_I64(call0(s, f.getpid, &ret, &err), VT_OK);
	CHECK_EQ_U64(ret, (uint64_t)k.pid);
	CHECK_EQ_I64(detach(&s), VT_OK);
	/* Stopped again in the same read: the same registers, bit for bit. */
	CHECK(wait_blocked(k.pid, k.pid, SYS_read));
	s = attach(&pfs, k.pid, k.pid);
	CHECK(s != NULL);
	if (s) {
		CHECK(vt_inject_saved_regs(s, 0, &data, &len) && memcmp(data, gp1, sizeof(gp1)) == 0);
		CHECK(vt_inject_saved_regs(s, 1, &data, &len) && memcmp(data, xs1, sizeof(xs1)) == 0);
		CHECK_EQ_I64(detach(&s), VT_OK);
	}
	/* The read completes with data written after the probe; the child checks its registers. */
	CHECK(write(k.to, "x", 1) == 1);
	CHECK(read_line(k.from, line, sizeof(line), 5000));
	printf("#   child: %s\n", line);
	CHECK(strncmp(line, "regs ok", 7) == 0);
out:
	forked_end(&k);
	vt_procfs_close(&pfs);
}

/* What the tracer process of tracer_killed_mid_call calls in whom. */
static struct {
	pid_t victim;
	uint64_t func, arg;
} killed_call;

/* A tracer process: attach, say so, and run a long call (until it is killed). */
static void tracer_child(int in, int out)
{
	struct vt_inject_session *s;
	struct vt_inject_call call;
	struct vt_procfs pfs;
	struct vt_err err;

	(void)in;
	if (vt_procfs_open(&pfs, NULL, NULL, &err) || !(s = attach(&pfs, killed_call.victim,
								    killed_call.victim)))
		_exit(3);
	if (write(out, "attached\n", 9) != 9)
		_exit(2);
	memset(&call, 0, sizeof(call));
	call.func = killed_call.func;
	call.args[0] = killed_call.arg;
	call.abandon = VT_INJECT_ABANDON_LATE;
	vt_inject_run(s, &call, 30000, &err);
	_exit(4);   /* not reached: killed mid-call */
}

/*
 * The tracer dies (SIGKILL) while the callee runs: the thread finishes the
 * call, returns through the signal frame by itself, and carries on with
 * its registers, extended state and signal mask intact, its read() running
 * again; no tracer left.  Before the signal frame, it died of SIGSEGV here.
 */
static void test_inject__tracer_killed_mid_call(void)
{
	struct vt_procfs pfs;
	struct vt_err err;
	struct libc_fns f;
	struct forked k, t;
	char line[96];

	if (skip_live())
		return;
	vt_procfs_open(&pfs, NULL, NULL, &err);
	CHECK(fork_child(&k, masked_regs_child));
	CHECK(wait_blocked(k.pid, k.pid, SYS_read));
	CHECK(resolve_all(&pfs, k.pid, &f));
	killed_call.victim = k.pid;
	killed_call.func = f.sleep;
	killed_call.arg = 1;
	CHECK(fork_child(&t, tracer_child));
	CHECK(read_line(t.from, line, sizeof(line), 5000));
	CHECK_STR(line, "attached");
	CHECK(wait_blocked(k.pid, k.pid, SYS_clock_nanosleep));   /* inside sleep(1) */
	kill(t.pid, SIGKILL);
	forked_end(&t);
	signal(SIGPIPE, SIG_IGN);   /* a victim that died must fail the checks, not kill us */
	CHECK(vt_test_tracer_pid(k.pid) == 0);
	/* sleep(1) returns, the frame puts the thread back into its read. */
	CHECK(wait_blocked(k.pid, k.pid, SYS_read));
	CHECK(write(k.to, "x", 1) == 1);
	CHECK(read_line(k.from, line, sizeof(line), 5000));
	printf("#   victim after its tracer was killed mid-call: %s\n", line);
	CHECK(strncmp(line, "regs ok", 7) == 0);
	forked_end(&k);
	signal(SIGPIPE, SIG_DFL);
	vt_procfs_close(&pfs);
}

/*
 * nanosleep(SLEEP_CHILD_S), reported as "rc elapsed_ms": long enough that a
 * loaded host (the suite beside two CPU hogs) still attaches mid-sleep.
 */
#define SLEEP_CHILD_S 5

static void sleep_child(int in, int out)
{
	struct timespec req = { SLEEP_CHILD_S, 0 };
	char msg[64];
	double t;
	long rc;

	(void)in;
	t = now_ms();
	rc = syscall(SYS_nanosleep, &req, NULL);
	t = now_ms() - t;
	snprintf(msg, sizeof(msg), "%ld %.0f\n", rc, t);
	if (write(out, msg, strlen(msg)) < 0)
		_exit(2);
	_exit(0);
}

static void test_inject__nanosleep_restart(void)
{
	struct vt_inject_session *s;
	struct vt_inject_call call;
	struct forked plain, clobber;
	struct libc_fns f;
	struct vt_procfs pfs;
	struct vt_err err;
	char line[64];
	double ms;
	uint64_t ret;
	long rc;

	if (skip_live())
		return;
	vt_procfs_open(&pfs, NULL, NULL, &err);
	CHECK(fork_child(&plain, sleep_child));
	CHECK(fork_child(&clobber, sleep_child));
	CHECK(wait_blocked(plain.pid, plain.pid, SYS_nanosleep));
	CHECK(wait_blocked(clobber.pid, clobber.pid, SYS_nanosleep));
	CHECK(resolve_all(&pfs, plain.pid, &f));
	usleep(1000 * 1000);
	/*
	 * A probe in the middle of the sleep: the sleep restarts for what is
	 * left, ~5000 ms in all; restarted from scratch it would take >= 6000.
	 * The margins are wide for a busy machine.
	 */
	s = attach(&pfs, plain.pid, plain.pid);
	CHECK(s != NULL);
	if (s) {
		CHECK_EQ_I64(call0(s, f.getpid, &ret, &err), VT_OK);
		CHECK_EQ_I64(detach(&s), VT_OK);
	}
	/*
	 * An abandoned sleep(10) leaves the kernel's restart block set for its
	 * own nanosleep: the thread's sleep must then run again from the start,
	 * not take the callee's 10 s.
	 */
	s = attach(&pfs, clobber.pid, clobber.pid);
	CHECK(s != NULL);
	if (s) {
		memset(&call, 0, sizeof(call));
		call.func = f.sleep;
		call.args[0] = 10;
		CHECK_EQ_I64(vt_inject_run(s, &call, 200, &err), VT_E_TIMEOUT);
		CHECK_EQ_I64(detach(&s), VT_OK);
	}
	CHECK(read_line(plain.from, line, sizeof(line), 10000));
	CHECK(sscanf(line, "%ld %lf", &rc, &ms) == 2);
	printf("#   nanosleep(%d s) probed once: rc %ld after %.0f ms\n", SLEEP_CHILD_S, rc, ms);
	CHECK_EQ_I64(rc, 0);
	CHECK(ms >= SLEEP_CHILD_S * 1000 && ms < SLEEP_CHILD_S * 1000 + 800);
	CHECK(read_line(clobber.from, line, sizeof(line), 10000));
	CHECK(sscanf(line, "%ld %lf", &rc, &ms) == 2);
	printf("#   nanosleep(%d s) with an abandoned sleep(10): rc %ld after %.0f ms\n", SLEEP_CHILD_S, rc, ms);
	CHECK_EQ_I64(rc, 0);
	/* from the start: ~6200; the callee's 10 s never (>= 11000) */
	CHECK(ms >= SLEEP_CHILD_S * 1000 && ms < 10000);
	forked_end(&plain);
	forked_end(&clobber);
	vt_procfs_close(&pfs);
}

static volatile sig_atomic_t got_usr1, got_segv, got_rt, rt_disorder;
static volatile int rt_next;

static void h_usr1(int sig)
{
	(void)sig;
	got_usr1++;
}

static void h_segv(int sig)
{
	(void)sig;
	got_segv++;
}

static void h_rt(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (si->si_value.sival_int != rt_next)
		rt_disorder++;
	rt_next = si->si_value.sival_int + 1;
	got_rt++;
}

/* Handlers with SA_RESTART, SIGUSR2 blocked, then a read(); reports counts and mask. */
static void signals_child(int in, int out)
{
	struct sigaction sa;
	sigset_t mask, after;
	char msg[128], byte = 0;
	ssize_t n;
	int same = 1, i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_flags = SA_RESTART;
	sa.sa_handler = h_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = h_segv;
	sigaction(SIGSEGV, &sa, NULL);
	sa.sa_flags = SA_RESTART | SA_SIGINFO;
	sa.sa_sigaction = h_rt;
	sigaction(SIGRTMIN, &sa, NULL);
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR2);
	sigprocmask(SIG_SETMASK, &mask, NULL);
	n = read(in, &byte, 1);
	sigprocmask(SIG_SETMASK, NULL, &after);
	for (i = 1; i < 65; i++)
		if (sigismember(&mask, i) != sigismember(&after, i))
			same = 0;
	snprintf(msg, sizeof(msg), "read %zd %c usr1 %d segv %d rt %d disorder %d mask %s\n", n,
		 byte, (int)got_usr1, (int)got_segv, (int)got_rt, (int)rt_disorder,
		 same ? "same" : "changed");
	if (write(out, msg, strlen(msg)) < 0)
		_exit(2);
	_exit(0);
}

static void test_inject__signals_during_probe(void)
{
	struct vt_inject_session *s;
	struct libc_fns f;
	struct vt_procfs pfs;
	struct vt_err err;
	struct forked k;
	union sigval v;
	char line[128];
	uint64_t ret;
	int i;

	if (skip_live())
		return;
	vt_procfs_open(&pfs, NULL, NULL, &err);
	CHECK(fork_child(&k, signals_child));
	CHECK(wait_blocked(k.pid, k.pid, SYS_read));
	CHECK(resolve_all(&pfs, k.pid, &f));
	s = attach(&pfs, k.pid, k.pid);
	CHECK(s != NULL);
	if (s) {
		/* While stopped: queued real-time signals, a SIGUSR1, and a SIGSEGV sent by us. */
		for (i = 0; i < 5; i++) {
			v.sival_int = i;
			CHECK(sigqueue(k.pid, SIGRTMIN, v) == 0);
		}
		CHECK(kill(k.pid, SIGUSR1) == 0);
		CHECK(syscall(SYS_tgkill, k.pid, k.pid, SIGSEGV) == 0);
		CHECK_EQ_I64(call0(s, f.getpid, &ret, &err), VT_OK);
		CHECK_EQ_U64(ret, (uint64_t)k.pid);
		CHECK_EQ_I64(call0(s, f.getppid, &ret, &err), VT_OK);
		CHECK_EQ_U64(ret, (uint64_t)getpid());
		CHECK_EQ_I64(detach(&s), VT_OK);
	}
	usleep(50 * 1000);
	CHECK(write(k.to, "y", 1) == 1);
	CHECK(read_line(k.from, line, sizeof(line), 5000));
	printf("#   child: %s\n", line);
	CHECK_STR(line, "read 1 y usr1 1 segv 1 rt 5 disorder 0 mask same");
	forked_end(&k);
	vt_procfs_close(&pfs);
}

/* A seccomp filter that kills the process on getppid(); then a read(). */
static void seccomp_child(int in, int out)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(code) / sizeof(code[0]), code };
	char byte = 0;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
		_exit(3);
	if (read(in, &byte, 1) == 1 && write(out, "alive\n", 6) == 6)
		_exit(0);
	_exit(2);
}

static void test_inject__refusals(void)
{
	struct vt_inject_session *s = NULL;
	struct vt_procfs pfs, recorded;
	struct libc_fns f;
	struct vt_err err;
	struct forked k;
	char line[64];
	uint64_t ret;
	int rc, st;

	if (skip_live())
		return;
	vt_procfs_open(&pfs, NULL, NULL, &err);
	CHECK_EQ_I64(vt_inject_attach(&pfs, getpid(), getpid(), 0, 100, &s, &err), VT_E_USAGE);
	CHECK(s == NULL);
	CHECK(fork_child(&k, seccomp_child));
	CHECK(wait_blocked(k.pid, k.pid, SYS_read));
	/* not a thread of that process */
	CHECK_EQ_I64(vt_inject_attach(&pfs, k.pid, getpid(), 0, 100, &s, &err), VT_E_NOPROC);
	/* a recorded tree never ptraces */
	vt_procfs_open(&recorded, "/proc", "/sys", &err);
	CHECK_EQ_I64(vt_inject_attach(&recorded, k.pid, k.pid, 0, 100, &s, &err), VT_E_UNSUPPORTED);
	vt_procfs_close(&recorded);
	/* seccomp: as root the filter is suspended for the call, so getppid() works */
	CHECK(resolve_all(&pfs, k.pid, &f));
	rc = vt_inject_attach(&pfs, k.pid, k.pid, 0, T_ATTACH_MS, &s, &err);
	if (geteuid() == 0) {
		CHECK_EQ_I64(rc, VT_OK);
		if (s) {
			CHECK_EQ_I64(call0(s, f.getppid, &ret, &err), VT_OK);
			CHECK_EQ_U64(ret, (uint64_t)getpid());
			CHECK_EQ_I64(detach(&s), VT_OK);
		}
		CHECK(write(k.to, "z", 1) == 1);
		CHECK(read_line(k.from, line, sizeof(line), 5000) && !strcmp(line, "alive"));
	} else {
		printf("#   seccomp, not root: %s: %s\n", vt_code_name(rc), err.msg);
		CHECK_EQ_I64(rc, VT_E_PERM);
	}
	forked_end(&k);

	/* already traced: by this very process */
	CHECK(fork_child(&k, seccomp_child));
	CHECK(wait_blocked(k.pid, k.pid, SYS_read));
	CHECK(ptrace(PTRACE_SEIZE, k.pid, NULL, NULL) == 0);
	rc = vt_inject_attach(&pfs, k.pid, k.pid, 0, T_ATTACH_MS, &s, &err);
	CHECK_EQ_I64(rc, VT_E_PERM);
	CHECK(contains(err.msg, "already traced by"));
	printf("#   %s\n", err.msg);
	kill(k.pid, SIGKILL);
	waitpid(k.pid, &st, __WALL);
	k.pid = -1;
	forked_end(&k);
	vt_procfs_close(&pfs);
}

/* A recorded /proc with process 4242 in state, its exe an ELF header of class and machine. */
static bool fake_proc(char *root, size_t cap, char state, int elf_class, int machine)
{
	char path[512];
	unsigned char ehdr[64] = { 0 };
	size_t len = elf_class == ELFCLASS32 ? sizeof(Elf32_Ehdr) : sizeof(Elf64_Ehdr);
	uint16_t half;
	uint32_t word = EV_CURRENT;
	FILE *f;

	snprintf(root, cap, "/tmp/vt-test-abi.XXXXXX");
	if (!mkdtemp(root))
		return false;
	snprintf(path, sizeof(path), "%s/4242", root);
	if (mkdir(path, 0755) != 0)
		return false;
	snprintf(path, sizeof(path), "%s/4242/stat", root);
	if (!(f = fopen(path, "w")))
		return false;
	fprintf(f, "4242 (app) %c 1 4242 4242 0 -1 4194560 100 0 0 0 1 1 0 0 20 0 1 0 100 10000000 "
		"200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n", state);
	fclose(f);
	/* e_ident, e_type, e_machine, e_version: the same offsets in both classes */
	memcpy(ehdr, ELFMAG, SELFMAG);
	ehdr[EI_CLASS] = (unsigned char)elf_class;
	ehdr[EI_DATA] = ELFDATA2LSB;
	ehdr[EI_VERSION] = EV_CURRENT;
	half = ET_EXEC;
	memcpy(ehdr + 16, &half, 2);
	half = (uint16_t)machine;
	memcpy(ehdr + 18, &half, 2);
	memcpy(ehdr + 20, &word, 4);
	half = (uint16_t)len;   /* e_ehsize */
	memcpy(ehdr + (elf_class == ELFCLASS32 ? 40 : 52), &half, 2);
	snprintf(path, sizeof(path), "%s/4242/exe", root);
	if (!(f = fopen(path, "w")))
		return false;
	fwrite(ehdr, 1, len, f);
	fclose(f);
	return true;
}

static void fake_proc_remove(const char *root)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/4242/stat", root);
	unlink(path);
	snprintf(path, sizeof(path), "%s/4242/exe", root);
	unlink(path);
	snprintf(path, sizeof(path), "%s/4242", root);
	rmdir(path);
	rmdir(root);
}

/*
 * Refused before a thread is chosen: a program of another ABI (its exe's ELF
 * class and machine; x32 needs a kernel that runs it, so it is tested here
 * on a recorded tree) and a stopped process.  Neither reads a task file.
 */
static void test_inject__refused_process(void)
{
	static const struct {
		char state;
		int elf_class, machine;
		int code;   /* never for this process, or not right now */
		const char *says;
	} cases[] = {
		{ 'S', ELFCLASS32, EM_X86_64, VT_E_UNSUPPORTED,
		  "process 4242 is built for x32 (32-bit pointers on x86-64)" },
		{ 'S', ELFCLASS32, EM_386, VT_E_UNSUPPORTED, "process 4242 is built for 32-bit x86 (i386)" },
		{ 'S', ELFCLASS64, EM_AARCH64, VT_E_UNSUPPORTED, "process 4242 is built for aarch64:" },
		{ 'T', ELFCLASS64, EM_X86_64, VT_E_BUSY,
		  "process 4242 is stopped (state T): resume it with kill -CONT 4242" },
		{ 'S', ELFCLASS64, EM_X86_64, 0, "cannot list the threads" },
	};
	struct vt_procfs pfs;
	struct vt_err err;
	char root[64], why[200];
	pid_t tid;
	size_t i;
	int rc;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (!fake_proc(root, sizeof(root), cases[i].state, cases[i].elf_class, cases[i].machine)) {
			CHECK(!"cannot write a recorded /proc");
			return;
		}
		CHECK_EQ_I64(vt_procfs_open(&pfs, root, root, &err), VT_OK);
		vt_err_clear(&err);
		rc = vt_inject_pick_thread(&pfs, 4242, 0, &tid, why, sizeof(why), &err);
		printf("#   %s: %s\n", vt_code_name(rc), err.msg);
		if (i + 1 < sizeof(cases) / sizeof(cases[0])) {
			CHECK_EQ_I64(rc, cases[i].code);
			CHECK(contains(err.msg, cases[i].says));
		} else {
			/* the right ABI, running: on to the threads, of which this tree has none */
			CHECK(rc != VT_E_UNSUPPORTED && rc != VT_E_BUSY);
		}
		vt_procfs_close(&pfs);
		fake_proc_remove(root);
	}
}

static void spin_child(int in, int out)
{
	volatile unsigned long n = 0;

	(void)in;
	(void)out;
	for (;;)
		n++;
}

static void test_inject__running_thread(void)
{
	struct vt_inject_session *s = NULL;
	struct libc_fns f;
	struct vt_procfs pfs;
	struct vt_err err;
	struct forked k;
	char why[256];
	pid_t tid;
	uint64_t ret;
	int rc;

	if (skip_live())
		return;
	vt_procfs_open(&pfs, NULL, NULL, &err);
	CHECK(fork_child(&k, spin_child));
	usleep(50 * 1000);
	rc = vt_inject_pick_thread(&pfs, k.pid, 0, &tid, why, sizeof(why), &err);
	CHECK_EQ_I64(rc, VT_E_BUSY);
	printf("#   %s\n", err.msg);
	CHECK_EQ_I64(vt_inject_pick_thread(&pfs, k.pid, VT_INJECT_ALLOW_RUNNING, &tid, why,
					   sizeof(why), &err), VT_OK);
	CHECK_EQ_I64(tid, k.pid);
	/* Stopped in user code: refused unless allowed, and left running. */
	rc = vt_inject_attach(&pfs, k.pid, k.pid, 0, T_ATTACH_MS, &s, &err);
	CHECK_EQ_I64(rc, VT_E_BUSY);
	printf("#   %s\n", err.msg);
	CHECK(resolve_all(&pfs, k.pid, &f));
	rc = vt_inject_attach(&pfs, k.pid, k.pid, VT_INJECT_ALLOW_RUNNING, T_ATTACH_MS, &s, &err);
	CHECK_EQ_I64(rc, VT_OK);
	if (s) {
		CHECK_EQ_I64(call0(s, f.getpid, &ret, &err), VT_OK);
		CHECK_EQ_U64(ret, (uint64_t)k.pid);
		CHECK_EQ_I64(detach(&s), VT_OK);
	}
	usleep(20 * 1000);
	CHECK(kill(k.pid, 0) == 0);
	forked_end(&k);
	vt_procfs_close(&pfs);
}

/* The life of an nginx master: it waits in sigsuspend() for its workers. */
static void sigsuspend_child(int in, int out)
{
	sigset_t none;

	(void)in;
	(void)out;
	sigemptyset(&none);
	for (;;)
		sigsuspend(&none);
}

/*
 * A process whose only thread sits in an unsafe call is refused, naming the
 * call, and the hint does not promise that a retry will do: the thread will
 * still be there.  It offers what answers without a stop.
 */
static void test_inject__refusal_names_unsafe_call(void)
{
	struct vt_procfs pfs;
	struct vt_err err;
	struct forked k;
	char why[256];
	pid_t tid;
	int rc, i;

	if (skip_live())
		return;
	vt_procfs_open(&pfs, NULL, NULL, &err);
	CHECK(fork_child(&k, sigsuspend_child));
	/* until the child sits in sigsuspend (on a loaded host it may still be starting: "1 running") */
	for (i = 0, rc = VT_OK; i < 500 && !(rc == VT_E_BUSY && contains(err.msg, "unsafe")); i++) {
		usleep(10 * 1000);
		rc = vt_inject_pick_thread(&pfs, k.pid, 0, &tid, why, sizeof(why), &err);
	}
	CHECK_EQ_I64(rc, VT_E_BUSY);
	printf("#   %s\n#   hint: %s\n", err.msg, err.hint);
	CHECK(contains(err.msg, "1 in rt_sigsuspend, where a call is unsafe"));
	CHECK(contains(err.hint, "census"));
	CHECK(!contains(err.hint, "less busy"));
	forked_end(&k);
	vt_procfs_close(&pfs);
}

static void block_child(int in, int out)
{
	char byte;

	(void)out;
	if (read(in, &byte, 1) < 0)
		_exit(2);
	_exit(0);
}

static void test_inject__gone(void)
{
	struct vt_inject_session *s;
	struct libc_fns f;
	struct vt_procfs pfs;
	struct vt_err err;
	struct forked k;
	uint64_t ret;
	int rc;

	if (skip_live())
		return;
	vt_procfs_open(&pfs, NULL, NULL, &err);
	CHECK(fork_child(&k, block_child));
	CHECK(wait_blocked(k.pid, k.pid, SYS_read));
	CHECK(resolve_all(&pfs, k.pid, &f));
	s = attach(&pfs, k.pid, k.pid);
	CHECK(s != NULL);
	if (s) {
		kill(k.pid, SIGKILL);
		rc = call0(s, f.getpid, &ret, &err);
		CHECK_EQ_I64(rc, VT_E_GONE);
		rc = vt_inject_detach(&s, NULL, &err);
		CHECK(rc == VT_E_GONE || rc == VT_OK);
		CHECK(s == NULL);
	}
	forked_end(&k);
	CHECK_EQ_I64(vt_inject_attach(&pfs, k.pid, k.pid, 0, 100, &s, &err), VT_E_NOPROC);
	vt_procfs_close(&pfs);
}

/* Spins for ms milliseconds (0: for ever) and returns 7: called in a forked child. */
static long __attribute__((noinline)) busy_ms(long ms)
{
	double end = now_ms() + (double)ms;

	while (ms == 0 || now_ms() < end)
		__asm__ volatile("" ::: "memory");
	return 7;
}

static void test_inject__slow_callee(void)
{
	struct vt_inject_session *s;
	struct vt_inject_call call;
	struct libc_fns f;
	struct vt_procfs pfs;
	struct vt_err err;
	struct forked k;
	double t;
	int rc, st;

	if (skip_live())
		return;
	vt_procfs_open(&pfs, NULL, NULL, &err);
	CHECK(fork_child(&k, block_child));
	CHECK(wait_blocked(k.pid, k.pid, SYS_read));
	CHECK(resolve_all(&pfs, k.pid, &f));
	s = attach(&pfs, k.pid, k.pid);
	CHECK(s != NULL);
	if (!s)
		goto out;
	/* Running user code past its timeout: it may hold a lock, so it runs to the end. */
	memset(&call, 0, sizeof(call));
	call.func = (uint64_t)(uintptr_t)busy_ms;   /* same address in the forked child */
	call.args[0] = 400;
	CHECK_EQ_I64(vt_inject_run(s, &call, 100, &err), VT_OK);
	CHECK_EQ_U64(call.ret, 7);
	printf("#   busy 400 ms with a 100 ms timeout: completed in %.0f ms\n", call.call_us / 1e3);
	/* Blocked past its timeout with VT_INJECT_ABANDON_LATE: let run too. */
	memset(&call, 0, sizeof(call));
	call.func = f.sleep;
	call.args[0] = 1;
	call.abandon = VT_INJECT_ABANDON_LATE;
	CHECK_EQ_I64(vt_inject_run(s, &call, 100, &err), VT_OK);
	CHECK_EQ_U64(call.ret, 0);
	/* Running for ever: abandoned at the hard limit, the thread restored. */
	memset(&call, 0, sizeof(call));
	call.func = (uint64_t)(uintptr_t)busy_ms;
	t = now_ms();
	rc = vt_inject_run(s, &call, 100, &err);
	t = now_ms() - t;
	printf("#   busy for ever with a 100 ms timeout: %s after %.0f ms: %s\n", vt_code_name(rc), t,
	       err.msg);
	CHECK_EQ_I64(rc, VT_E_TIMEOUT);
	CHECK(contains(err.msg, "running user code"));
	CHECK(t >= VT_INJECT_HARD_MIN_MS && t < VT_INJECT_HARD_MIN_MS + 1000);
	CHECK_EQ_I64(detach(&s), VT_OK);
	CHECK(write(k.to, "x", 1) == 1);
	CHECK(waitpid(k.pid, &st, 0) == k.pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	k.pid = -1;
out:
	forked_end(&k);
	vt_procfs_close(&pfs);
}

/* A SIGSTOP that arrives during a call is handed back at detach: the process stops. */
static void test_inject__sigstop_during_call(void)
{
	struct vt_inject_session *s;
	struct libc_fns f;
	struct vt_procfs pfs;
	struct vt_err err;
	struct forked k;
	char path[64], buf[512], *p;
	uint64_t ret;
	int fd, st, i;
	ssize_t n;

	if (skip_live())
		return;
	vt_procfs_open(&pfs, NULL, NULL, &err);
	CHECK(fork_child(&k, block_child));
	CHECK(wait_blocked(k.pid, k.pid, SYS_read));
	CHECK(resolve_all(&pfs, k.pid, &f));
	s = attach(&pfs, k.pid, k.pid);
	CHECK(s != NULL);
	if (s) {
		CHECK(kill(k.pid, SIGSTOP) == 0);
		CHECK_EQ_I64(call0(s, f.getpid, &ret, &err), VT_OK);
		CHECK_EQ_U64(ret, (uint64_t)k.pid);
		CHECK_EQ_I64(detach(&s), VT_OK);
	}
	CHECK(waitpid(k.pid, &st, WUNTRACED) == k.pid && WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP);
	/* The group stop was reported while traced; after detach the thread re-enters it. */
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)k.pid);
	for (i = 0, p = NULL; i < 200 && !(p && p[2] == 'T'); i++) {
		if (i)
			usleep(5000);
		fd = open(path, O_RDONLY);
		n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
		if (fd >= 0)
			close(fd);
		buf[n > 0 ? n : 0] = '\0';
		p = strrchr(buf, ')');
	}
	CHECK(p && p[2] == 'T');
	CHECK(kill(k.pid, SIGCONT) == 0);
	CHECK(write(k.to, "x", 1) == 1);
	CHECK(waitpid(k.pid, &st, 0) == k.pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	k.pid = -1;
	forked_end(&k);
	vt_procfs_close(&pfs);
}

/* The parent of a vfork() sleeps uninterruptibly (D) until its child exits. */
static void vfork_child(int in, int out)
{
	struct timespec ts = { 1, 500 * 1000 * 1000 };
	pid_t pid;
	int st;

	(void)in;
	pid = vfork();
	if (pid == 0) {
		syscall(SYS_nanosleep, &ts, NULL);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || write(out, "back\n", 5) != 5)
		_exit(2);
	_exit(0);
}

static void test_inject__attach_timeout_releases(void)
{
	struct vt_inject_session *s = NULL;
	struct vt_procfs pfs;
	struct vt_err err;
	struct forked k;
	char line[16], why[256];
	pid_t tid;
	double t;
	int rc;

	if (skip_live())
		return;
	vt_procfs_open(&pfs, NULL, NULL, &err);
	CHECK(fork_child(&k, vfork_child));
	usleep(200 * 1000);
	rc = vt_inject_pick_thread(&pfs, k.pid, 0, &tid, why, sizeof(why), &err);
	CHECK_EQ_I64(rc, VT_E_BUSY);
	CHECK(contains(err.msg, "uninterruptible"));
	t = now_ms();
	rc = vt_inject_attach(&pfs, k.pid, k.pid, 0, 300, &s, &err);
	t = now_ms() - t;
	printf("#   attach to a thread in D: %s after %.0f ms: %s\n", vt_code_name(rc), t, err.msg);
	CHECK_EQ_I64(rc, VT_E_TIMEOUT);
	CHECK(s == NULL);
	CHECK(t < 3000);   /* bounded, with room for a busy box */
	/* Released untouched: when its vfork child exits it goes on, never ptrace-stopped. */
	CHECK(read_line(k.from, line, sizeof(line), 5000));
	CHECK_STR(line, "back");
	forked_end(&k);
	vt_procfs_close(&pfs);
}

/* ---- stress: 2000 probes into the busy victim ---------------------------- */

/* VT_STRESS_PROBES overrides the count (the long run is 10000). */
static unsigned stress_probes(void)
{
	const char *env = getenv("VT_STRESS_PROBES");

	return env && atoi(env) > 0 ? (unsigned)atoi(env) : STRESS_PROBES_DEFAULT;
}

/* Integer after "key": in a JSON line; -1 when absent. */
static long long json_int(const char *line, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(line, pat);
	return p ? strtoll(p + strlen(pat), NULL, 10) : -1;
}

static bool last_line(const char *path, char *out, size_t cap)
{
	FILE *fp = fopen(path, "r");
	char line[2048];
	bool any = false;

	if (!fp)
		return false;
	while (fgets(line, sizeof(line), fp)) {
		snprintf(out, cap, "%s", line);
		any = true;
	}
	fclose(fp);
	return any;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct stress {
	double *stopped, *e2e, *call;
	unsigned n, refused, failed, per_role[6];
};

#define STRESS_TRIES 20

/* The call of a probe made in one piece (vt_inject_probe). */
static int stress_body(struct vt_inject_session *s, void *arg, struct vt_err *err)
{
	return vt_inject_run(s, arg, T_CALL_MS, err);
}

static void stress_one(struct stress *st, const struct vt_procfs *pfs, pid_t pid,
		       const pid_t *role_tid, unsigned i, uint64_t fn)
{
	struct vt_inject_session *s = NULL;
	struct vt_inject_call c;
	unsigned role = i % 6;
	struct mi2 m;
	struct vt_err err;
	double t0 = now_ms(), us;
	char why[256];
	pid_t tid = role_tid[role];
	/* every other probe in one piece, as vitals heap makes it; the others call by call */
	bool in_one = (i / 6) % 2 == 1, attached = false;
	int rc = VT_OK, tries;

	/*
	 * Refused: the thread was awake (between pick and stop, or, back to
	 * back, still re-entering the call the last detach restarted).  A
	 * caller retries after a pause, as here, up to STRESS_TRIES times (as
	 * many as vitals heap does); the pause grows, since on a loaded machine
	 * (CI, an ASan build) the victim may wait milliseconds for a CPU to get
	 * back into its call.  Five tries of 1 ms once fell short there.
	 */
	for (tries = 0; tries < STRESS_TRIES; tries++) {
		if (tries)
			usleep(1000 * (useconds_t)(tries < 10 ? tries : 10));
		t0 = now_ms();
		if (role == 0 && vt_inject_pick_thread(pfs, pid, 0, &tid, why, sizeof(why), &err)) {
			st->refused++;
			continue;
		}
		if (in_one) {
			memset(&c, 0, sizeof(c));
			c.func = fn;
			c.scratch_args = 1;
			c.scratch_len = sizeof(m);
			c.scratch_out = &m;
			memset(&m, 0, sizeof(m));
			rc = vt_inject_probe(pfs, pid, tid, 0, T_ATTACH_MS, NULL, stress_body, &c, &attached, &us,
					     &err);
			if (attached || rc != VT_E_BUSY)
				break;
		} else {
			rc = vt_inject_attach(pfs, pid, tid, 0, T_ATTACH_MS, &s, &err);
			if (rc != VT_E_BUSY)
				break;
		}
		st->refused++;
	}
	if (tries == STRESS_TRIES) {
		printf("#   probe %u: thread %d refused %d times in a row\n", i, (int)tid, tries);
		return;
	}
	if (in_one && attached) {
		/* one piece: the call's error, else the detach's */
		if (rc || m.arena == 0 || m.uordblks == 0) {
			printf("#   probe %u in one piece on %d: %s\n", i, (int)tid,
			       rc ? err.msg : "empty mallinfo2");
			st->failed++;
			if (rc)
				return;
		}
		goto done;
	}
	if (rc) {
		printf("#   probe %u attach %d: %s\n", i, (int)tid, err.msg);
		st->failed++;
		return;
	}
	memset(&c, 0, sizeof(c));
	c.func = fn;
	c.scratch_args = 1;
	c.scratch_len = sizeof(m);
	c.scratch_out = &m;
	rc = vt_inject_run(s, &c, T_CALL_MS, &err);
	if (rc || m.arena == 0 || m.uordblks == 0) {
		printf("#   probe %u call on %d: %s\n", i, (int)tid, rc ? err.msg : "empty mallinfo2");
		st->failed++;
	}
	if (vt_inject_detach(&s, &us, &err)) {
		printf("#   probe %u detach %d: %s\n", i, (int)tid, err.msg);
		st->failed++;
		return;
	}
done:
	st->stopped[st->n] = us;
	st->call[st->n] = c.call_us;
	st->e2e[st->n] = (now_ms() - t0) * 1e3;
	st->n++;
	st->per_role[role]++;
}

static void print_dist(const char *what, double *v, unsigned n)
{
	if (!n)
		return;
	qsort(v, n, sizeof(*v), cmp_double);
	printf("#   %s: median %.0f us, p99 %.0f us, max %.0f us\n", what, v[n / 2],
	       v[(size_t)(n * 0.99)], v[n - 1]);
}

/* The cost of a probe when nothing competes for the CPU: the quiet victim. */
static void test_inject__cost_quiet(void)
{
	struct stress st = { 0 };
	pid_t roles[6] = { 0 };
	struct libc_fns f;
	struct vt_procfs pfs;
	struct vt_err err;
	struct child c;
	struct mi2 own;
	unsigned i;

	if (skip_live())
		return;
	vt_procfs_open(&pfs, NULL, NULL, &err);
	CHECK(start_quiet(&c, "1000"));
	CHECK(wait_blocked(c.pid, c.pid, SYS_read));
	CHECK(resolve_all(&pfs, c.pid, &f));
	st.stopped = calloc(300, sizeof(double));
	st.e2e = calloc(300, sizeof(double));
	st.call = calloc(300, sizeof(double));
	for (i = 0; i < 300 && f.mallinfo2 && st.failed == 0; i++)
		stress_one(&st, &pfs, c.pid, roles, i * 6, f.mallinfo2);
	/*
	 * Refused: back to back, a probe can find the thread in user mode
	 * re-executing the syscall instruction that the last detach restarted.
	 */
	printf("#   quiet victim, %u probes (pick, attach, mallinfo2, detach), %u retried:\n",
	       st.n, st.refused);
	print_dist("thread stopped per probe", st.stopped, st.n);
	print_dist("mallinfo2 itself", st.call, st.n);
	print_dist("end to end per probe", st.e2e, st.n);
	CHECK_EQ_U64(st.failed, 0);
	CHECK_EQ_U64(st.n, 300);
	CHECK(ask_mallinfo(&c, &own));
	child_end(&c);
	free(st.stopped);
	free(st.e2e);
	free(st.call);
	vt_procfs_close(&pfs);
}

static void test_inject__stress_busy_victim(void)
{
	char truth[] = "/tmp/vitals-inject-XXXXXX", line[2048];
	/* two churn threads, each in malloc/free half the time: a thread in
	 * malloc at most stops, without two cores spent on it beside the
	 * other unit tests */
	char *argv[] = { (char *)victim_path(), "--seconds", "120", "--churn-duty", "50",
			 "--truth", truth, NULL };
	struct stress st = { 0 };
	struct libc_fns f;
	struct vt_procfs pfs;
	struct vt_err err;
	struct child c;
	pid_t roles[6];
	double t0;
	unsigned i;
	int fd, status = -1;
	unsigned n_probes, max_probes;

	if (skip_live())
		return;
	fd = mkstemp(truth);
	CHECK(fd >= 0);
	close(fd);
	vt_procfs_open(&pfs, NULL, NULL, &err);
	CHECK(spawn(&c, argv));
	for (i = 0; i < 100 && !(last_line(truth, line, sizeof(line)) &&
				 json_int(line, "tid_churn") >= 0); i++)
		usleep(20 * 1000);
	roles[0] = 0;   /* picked */
	roles[1] = (pid_t)json_int(line, "tid_sleeper");
	roles[2] = (pid_t)json_int(line, "tid_reader");
	roles[3] = (pid_t)json_int(line, "tid_waiter");
	roles[4] = (pid_t)json_int(line, "tid_signals");
	roles[5] = (pid_t)json_int(line, "tid_feeder");
	CHECK(roles[5] > 0);
	CHECK(resolve_all(&pfs, c.pid, &f));
	n_probes = stress_probes();
	/*
	 * At least STRESS_MIN_MS of probing, however fast the probes are: the
	 * victim's signal thread must send its thousand signals while they
	 * run (at 0.2 ms a probe, 2,000 of them are over in 0.4 s).
	 */
	max_probes = n_probes * 8;
	st.stopped = calloc(max_probes, sizeof(double));
	st.e2e = calloc(max_probes, sizeof(double));
	st.call = calloc(max_probes, sizeof(double));
	t0 = now_ms();
	for (i = 0; roles[5] > 0 && f.mallinfo2 && st.failed < 10 &&
		    (i < n_probes || (i < max_probes && now_ms() - t0 < STRESS_MIN_MS)); i++)
		stress_one(&st, &pfs, c.pid, roles, i, f.mallinfo2);
	t0 = now_ms() - t0;
	printf("#   %u probes in %.1f s (%u retried: thread awake; %u failed); per thread: "
	       "picked %u sleeper %u reader %u waiter %u signals %u feeder %u\n", st.n, t0 / 1e3,
	       st.refused, st.failed, st.per_role[0], st.per_role[1], st.per_role[2],
	       st.per_role[3], st.per_role[4], st.per_role[5]);
	print_dist("thread stopped per probe", st.stopped, st.n);
	print_dist("mallinfo2 itself", st.call, st.n);
	print_dist("end to end per probe", st.e2e, st.n);
	CHECK_EQ_U64(st.failed, 0);
	CHECK(st.n >= n_probes * 99 / 100);
	/* The victim's own verdict. */
	CHECK(kill(c.pid, 0) == 0);
	CHECK(kill(c.pid, SIGTERM) == 0);
	for (i = 0; i < 1000 && waitpid(c.pid, &status, WNOHANG) == 0; i++)
		usleep(10 * 1000);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(last_line(truth, line, sizeof(line)));
	printf("#   victim: %s", line);
	CHECK(contains(line, "\"phase\":\"exit\""));
	CHECK(contains(line, "\"ok\":true"));
	CHECK_EQ_I64(json_int(line, "errors"), 0);
	CHECK_EQ_I64(json_int(line, "signals_sent"), json_int(line, "signals_received"));
	CHECK(json_int(line, "signals_sent") > 1000);
	CHECK(json_int(line, "sleeps") > 0 && json_int(line, "reads") > 0);
	c.pid = -1;
	child_end(&c);
	unlink(truth);
	free(st.stopped);
	free(st.e2e);
	free(st.call);
	vt_procfs_close(&pfs);
}

/* ---- the trampoline cache ------------------------------------------------ */

static bool tramp_same(const struct vt_arch_tramp *a, const struct vt_arch_tramp *b)
{
	return a->sigreturn == b->sigreturn && a->store == b->store && a->store_reg == b->store_reg &&
	       a->store_disp == b->store_disp;
}

static bool write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	bool ok = f && fputs(text, f) >= 0;

	return f && fclose(f) == 0 && ok;
}

static bool read_text(const char *path, char *out, size_t cap)
{
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(out, 1, cap - 1, f) : 0;

	out[n] = '\0';
	return f && fclose(f) == 0 && n > 0;
}

/* Find the trampoline of pid; *hit: it came from the cache. */
static bool find_tramp(int pid_fd, pid_t pid, struct vt_arch_tramp *t, bool *hit)
{
	unsigned before = vt_inject_tramp_cache_hits();
	struct vt_err err;
	int rc = vt_inject_find_tramp(pid_fd, pid, t, &err);

	if (rc)
		printf("#   find_tramp: %s\n", err.msg);
	*hit = vt_inject_tramp_cache_hits() != before;
	return rc == VT_OK;
}

/*
 * The scan of libc's code is remembered per libc file, and a remembered
 * place is used only when the target's own bytes there are what the scan
 * accepts: an entry pointing one byte off (a stale or forged cache) gives
 * the scanned answer, as do garbage, a symbolic link and a directory that
 * others may write.
 */
static void test_inject__tramp_cache(void)
{
	char dir[] = "/tmp/vitals-tramp-XXXXXX", vdir[128], file[160], other[160], good[512], text[1024];
	unsigned long long f[10];
	char id[80], *old;
	struct vt_arch_tramp scanned, t;
	struct stat st;
	struct child c;
	bool hit;
	int pid_fd;

	if (skip_live())
		return;
	CHECK(mkdtemp(dir) != NULL);
	snprintf(vdir, sizeof(vdir), "%s/vitals", dir);
	snprintf(file, sizeof(file), "%s/tramp-v1", vdir);
	snprintf(other, sizeof(other), "%s/elsewhere", dir);
	old = vt_test_env_swap("XDG_CACHE_HOME", dir);
	CHECK(start_quiet(&c, "100"));
	CHECK(wait_blocked(c.pid, c.pid, SYS_read));
	snprintf(text, sizeof(text), "/proc/%d", (int)c.pid);
	pid_fd = open(text, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(pid_fd >= 0);

	/* first: scanned, and remembered in a 0700 directory, a 0600 file */
	CHECK(find_tramp(pid_fd, c.pid, &scanned, &hit));
	CHECK(!hit);
	CHECK(scanned.sigreturn && scanned.store);
	CHECK(stat(vdir, &st) == 0 && (st.st_mode & 0777) == 0700);
	CHECK(lstat(file, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0600);
	/* second: from the cache, the same places */
	CHECK(find_tramp(pid_fd, c.pid, &t, &hit));
	CHECK(hit);
	CHECK(tramp_same(&t, &scanned));

	/* an entry for this very file, one byte off: the bytes there disagree */
	CHECK(read_text(file, good, sizeof(good)));
	CHECK(sscanf(good, "%llu %llu %llu %llu %llu %79s %llu %llu %llu %llu", &f[0], &f[1], &f[2], &f[3],
		     &f[4], id, &f[6], &f[7], &f[8], &f[9]) == 10);
	snprintf(text, sizeof(text), "%llu %llu %llu %llu %llu %s %llu %llu %llu %llu\n", f[0], f[1], f[2],
		 f[3], f[4], id, f[6] + 1, f[7] + 1, f[8], f[9]);
	CHECK(write_text(file, text));
	CHECK(find_tramp(pid_fd, c.pid, &t, &hit));
	CHECK(!hit);
	CHECK(tramp_same(&t, &scanned));
	/* the scan put the right entry back */
	CHECK(find_tramp(pid_fd, c.pid, &t, &hit));
	CHECK(hit && tramp_same(&t, &scanned));

	/* garbage */
	CHECK(write_text(file, "not a cache\n\x01\x02 1 2 3\n"));
	CHECK(find_tramp(pid_fd, c.pid, &t, &hit));
	CHECK(!hit && tramp_same(&t, &scanned));

	/* a symbolic link, even to a good entry: not followed, and its target left alone */
	CHECK(write_text(other, good));
	CHECK(unlink(file) == 0 && symlink(other, file) == 0);
	CHECK(find_tramp(pid_fd, c.pid, &t, &hit));
	CHECK(!hit && tramp_same(&t, &scanned));
	CHECK(read_text(other, text, sizeof(text)) && !strcmp(text, good));
	CHECK(lstat(file, &st) == 0 && S_ISREG(st.st_mode));

	/* a directory others may write: neither read nor written */
	CHECK(chmod(vdir, 0777) == 0);
	CHECK(find_tramp(pid_fd, c.pid, &t, &hit));
	CHECK(!hit && tramp_same(&t, &scanned));
	CHECK(unlink(file) == 0);
	CHECK(find_tramp(pid_fd, c.pid, &t, &hit));
	CHECK(!hit && tramp_same(&t, &scanned));
	CHECK(lstat(file, &st) < 0 && errno == ENOENT);

	close(pid_fd);
	child_end(&c);
	unlink(other);
	rmdir(vdir);
	rmdir(dir);
	vt_test_env_put_back("XDG_CACHE_HOME", old);
}

/*
 * Every function resolved together is checked against the file, its first
 * bytes read from the target in one batch: a child whose copy of libc has
 * one function patched (the third of five) is refused with that function
 * named; the same five in this process resolve to dlsym's addresses.
 */
static void test_inject__resolve_checks_every_function(void)
{
	static const char *const names[] = { "mallinfo2", "getpid", "malloc_trim",
					     "pthread_cond_wait", "__errno_location" };
	uint64_t addrs[5];
	struct vt_region_list maps;
	struct vt_procfs pfs;
	struct vt_err err;
	int go[2], ready[2], st, rc;
	void *libc = dlopen(LIBC, RTLD_NOW | RTLD_NOLOAD);
	unsigned char *target;
	pid_t pid;
	char c;
	size_t i;

	CHECK(libc != NULL);
	if (!libc)
		return;
	CHECK(vt_procfs_open(&pfs, NULL, NULL, &err) == VT_OK);
	CHECK(read_maps(&pfs, getpid(), &maps) == VT_OK);
	rc = vt_inject_resolve_many(&pfs, getpid(), &maps, LIBC, names, addrs, 5, &err);
	CHECK_EQ_I64(rc, VT_OK);
	for (i = 0; i < 5; i++)
		CHECK_EQ_U64(addrs[i], (uint64_t)(uintptr_t)dlsym(libc, names[i]));
	vt_region_list_release(&maps);
	target = dlsym(libc, "malloc_trim");
	CHECK(pipe(go) == 0 && pipe(ready) == 0);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		long page = sysconf(_SC_PAGESIZE);
		unsigned char *at = (unsigned char *)((uintptr_t)target & ~(uintptr_t)(page - 1));

		/* this copy of libc's malloc_trim no longer matches the file (never called here) */
		if (mprotect(at, (size_t)page * 2, PROT_READ | PROT_WRITE | PROT_EXEC) == 0)
			target[1] ^= 0xff;
		if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	CHECK(read(ready[0], &c, 1) == 1);
	CHECK(read_maps(&pfs, pid, &maps) == VT_OK);
	rc = vt_inject_resolve_many(&pfs, pid, &maps, LIBC, names, addrs, 5, &err);
	if (rc == VT_E_PERM) {
		printf("# skip: %s\n", err.msg);
	} else {
		CHECK_EQ_I64(rc, VT_E_FAIL);
		CHECK(contains(err.msg, "'malloc_trim'") && contains(err.msg, "does not match"));
		CHECK_EQ_U64(addrs[0], 0);
	}
	vt_region_list_release(&maps);
	CHECK(write(go[1], "q", 1) == 1);
	waitpid(pid, &st, 0);
	close(go[0]);
	close(go[1]);
	close(ready[0]);
	close(ready[1]);
	dlclose(libc);
	vt_procfs_close(&pfs);
}

VT_TEST_MAIN(test_inject__syscall_parse, test_inject__syscall_class, test_inject__elfsym_symbol,
	     test_inject__resolve_self, test_inject__resolve_checks_every_function,
	     test_inject__pick_quiet_victim, test_inject__pick_longest_sleeper,
	     test_inject__mallinfo2_matches, test_inject__malloc_trim,
	     test_inject__errno_preserved, test_inject__timeout_abandon,
	     test_inject__registers_restored, test_inject__tracer_killed_mid_call,
	     test_inject__nanosleep_restart,
	     test_inject__signals_during_probe, test_inject__refusals,
	     test_inject__running_thread, test_inject__refusal_names_unsafe_call,
	     test_inject__gone, test_inject__slow_callee,
	     test_inject__sigstop_during_call, test_inject__attach_timeout_releases,
	     test_inject__cost_quiet, test_inject__stress_busy_victim,
	     test_inject__refused_process, test_inject__tramp_cache)

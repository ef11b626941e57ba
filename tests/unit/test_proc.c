/*
 * test_proc.c — the /proc parsers on recorded files and hostile input.
 */
#include "harness.h"
#include "base/dynlib.h"
#include "base/scan.h"
#include "base/unknown.h"

#include "proc/environ.h"
#include "proc/hostload.h"
#include "proc/io.h"
#include "proc/maps.h"
#include "proc/netstat.h"
#include "proc/procfs.h"
#include "proc/stat.h"
#include "proc/status.h"
#include "proc/task.h"
#include "proc/wchan_syscall.h"

#include <fcntl.h>
#include <math.h>
#include <dlfcn.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define ARENA_PID "9277"
#define ARENA_DIR "proc/arena_default/proc/" ARENA_PID "/"

static void test_stat__recorded_process(void)
{
	struct vt_proc_stat st;
	size_t len;
	char *buf = vt_fixture(ARENA_DIR "stat", &len);

	CHECK_EQ_I64(vt_proc_stat_parse(buf, len, &st, NULL), VT_OK);
	CHECK_EQ_I64(st.pid, 9277);
	CHECK_STR(st.comm, "arena_churn");
	CHECK_EQ_I64(st.num_threads, 9);
	CHECK(st.state == 'S' || st.state == 'R');
	CHECK(!(st.flags & VT_PF_KTHREAD));
	CHECK(st.start_ticks > 0);
	CHECK(st.processor >= 0);
	free(buf);
}

static void test_stat__comm_with_paren(void)
{
	struct vt_proc_stat st;
	size_t len;
	char *buf = vt_fixture("proc/files/paren_comm.stat", &len);

	CHECK_EQ_I64(vt_proc_stat_parse(buf, len, &st, NULL), VT_OK);
	CHECK_STR(st.comm, "we ird) (na me");
	CHECK(st.state == 'S');
	CHECK_EQ_I64(st.ppid, 9895);
	CHECK_EQ_I64(st.num_threads, 1);
	CHECK_EQ_U64(st.vsize_bytes, 2990080);
	CHECK_EQ_U64(st.rss_pages, 403);
	free(buf);
}

static void test_stat__kernel_thread_and_zombie(void)
{
	struct vt_proc_stat st;
	size_t len;
	char *buf = vt_fixture("proc/files/kthreadd.stat", &len);

	CHECK_EQ_I64(vt_proc_stat_parse(buf, len, &st, NULL), VT_OK);
	CHECK(st.flags & VT_PF_KTHREAD);
	CHECK_STR(st.comm, "kthreadd");
	free(buf);
	buf = vt_fixture("proc/files/zombie.stat", &len);
	CHECK_EQ_I64(vt_proc_stat_parse(buf, len, &st, NULL), VT_OK);
	CHECK(st.state == 'Z');
	CHECK(!(st.flags & VT_PF_KTHREAD));
	free(buf);
}

static void test_stat__malformed(void)
{
	static const char *bad[] = {
		"",
		"12",
		"12 (name",
		"12 name) S 1",
		"12 (x) S 1 2 3",                      /* ends before field 24 */
		"99999999999999999999 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22",
	};
	struct vt_proc_stat st;
	struct vt_err err;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_EQ_I64(vt_proc_stat_parse(bad[i], strlen(bad[i]), &st, &err), VT_E_PARSE);
		CHECK(err.msg[0] != '\0');
	}
}

static void test_status__recorded_process(void)
{
	struct vt_proc_status st;
	size_t len;
	char *buf = vt_fixture(ARENA_DIR "status", &len);

	CHECK_EQ_I64(vt_proc_status_parse(buf, len, &st, NULL), VT_OK);
	CHECK_STR(st.name, "arena_churn");
	CHECK_EQ_I64(st.pid, 9277);
	CHECK_EQ_I64(st.tgid, 9277);
	CHECK_EQ_I64(st.threads, 9);
	CHECK(vt_known(st.vm_rss) && vt_known(st.rss_anon) && vt_known(st.rss_file));
	/* the kernel's own identity: VmRSS = RssAnon + RssFile + RssShmem */
	CHECK_EQ_U64(st.vm_rss, st.rss_anon + st.rss_file + st.rss_shmem);
	CHECK(st.vm_rss % 1024 == 0);
	CHECK(st.vm_peak >= st.vm_size);
	CHECK(st.vm_hwm >= st.vm_rss);
	CHECK_EQ_U64(st.vm_swap, 0);
	free(buf);
}

static void test_status__old_kernel_fields_missing(void)
{
	const char *text = "Name:\tx\nState:\tS (sleeping)\nPid:\t5\nVmRSS:\t  100 kB\n";
	struct vt_proc_status st;

	CHECK_EQ_I64(vt_proc_status_parse(text, strlen(text), &st, NULL), VT_OK);
	CHECK_EQ_U64(st.vm_rss, 100 * 1024);
	CHECK(!vt_known(st.rss_anon));      /* before 4.5: unknown, not zero */
	CHECK(!vt_known(st.vm_swap));
}

static void test_status__kernel_thread_has_no_memory(void)
{
	struct vt_proc_status st;
	size_t len;
	char *buf = vt_fixture("proc/files/kthreadd.status", &len);

	CHECK_EQ_I64(vt_proc_status_parse(buf, len, &st, NULL), VT_OK);
	CHECK(!vt_known(st.vm_rss));
	CHECK_STR(st.name, "kthreadd");
	free(buf);
}

static void test_status__bad_values(void)
{
	const char *text = "Name:\tx\nState:\tS\nPid:\t5\nVmRSS:\t  lots kB\n";
	struct vt_proc_status st;
	struct vt_err err;

	CHECK_EQ_I64(vt_proc_status_parse(text, strlen(text), &st, &err), VT_E_PARSE);
	CHECK(strstr(err.msg, "VmRSS") != NULL);
	CHECK_EQ_I64(vt_proc_status_parse("Name:\tx\n", 8, &st, &err), VT_E_PARSE);
}

static uint64_t sum_rss(const struct vt_region_list *l)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < l->n; i++)
		sum += l->v[i].rss;
	return sum;
}

static void test_maps__smaps_matches_status(void)
{
	struct vt_region_list list = { 0 };
	struct vt_proc_status st;
	size_t len, slen;
	char *buf = vt_fixture(ARENA_DIR "smaps", &len);
	char *sbuf = vt_fixture(ARENA_DIR "status", &slen);
	uint64_t rss;

	CHECK_EQ_I64(vt_maps_parse(buf, len, &list, NULL), VT_OK);
	CHECK(list.has_smaps);
	CHECK_EQ_U64(list.n, 56);
	CHECK_EQ_I64(vt_proc_status_parse(sbuf, slen, &st, NULL), VT_OK);
	rss = sum_rss(&list);
	/* status counters are batched per CPU; allow 2% */
	CHECK(rss > st.vm_rss * 98 / 100 && rss < st.vm_rss * 102 / 100);
	CHECK_STR(list.v[0].perms, "r--p");
	CHECK(list.v[0].inode != 0);
	vt_region_list_release(&list);
	free(buf);
	free(sbuf);
}

/* every hex digit in either case has its value; the bytes around the digit ranges end the number */
static void test_scan__hex_digits(void)
{
	static const char *const stops = "/:@G`g -\n\x80\xff";
	struct vt_scan s;
	uint64_t v;
	const char *p;

	s = vt_scan_init("0123456789abcdef", 16);
	CHECK(vt_scan_hex(&s, &v) && v == UINT64_C(0x0123456789abcdef) && s.p == s.end);
	s = vt_scan_init("ABCDEF", 6);
	CHECK(vt_scan_hex(&s, &v) && v == 0xabcdef);
	for (p = stops; *p; p++) {
		char text[3] = { '7', *p, '1' };

		s = vt_scan_init(text, 3);
		CHECK(vt_scan_hex(&s, &v) && v == 7 && s.p == text + 1);
		s = vt_scan_init(text + 1, 2);
		CHECK(!vt_scan_hex(&s, &v));
	}
	s = vt_scan_init("10000000000000000", 17);        /* 2^64: does not fit */
	CHECK(!vt_scan_hex(&s, &v));
}

static void test_maps__maps_only_has_no_figures(void)
{
	struct vt_region_list list = { 0 };
	size_t len, i, heap = 0;
	char *buf = vt_fixture(ARENA_DIR "maps", &len);

	CHECK_EQ_I64(vt_maps_parse(buf, len, &list, NULL), VT_OK);
	CHECK(!list.has_smaps);
	CHECK_EQ_U64(list.n, 56);
	for (i = 0; i < list.n; i++) {
		CHECK(!vt_known(list.v[i].rss));
		heap += !strcmp(list.v[i].path, "[heap]");
	}
	CHECK_EQ_U64(heap, 1);
	vt_region_list_release(&list);
	free(buf);
}

static void test_maps__path_with_spaces_and_deleted(void)
{
	const char *text =
		"7f0000000000-7f0000001000 rw-s 00000000 00:05 123 /memfd:my buf (deleted)\n"
		"7f0000001000-7f0000002000 ---p 00000000 00:00 0 \n";
	struct vt_region_list list = { 0 };

	CHECK_EQ_I64(vt_maps_parse(text, strlen(text), &list, NULL), VT_OK);
	CHECK_EQ_U64(list.n, 2);
	CHECK_STR(list.v[0].path, "/memfd:my buf (deleted)");
	CHECK_STR(list.v[1].path, "");
	CHECK_EQ_U64(vt_region_size(&list.v[1]), 4096);
	vt_region_list_release(&list);
}

static void test_maps__garbage_rejected(void)
{
	static const char *bad[] = {
		"Rss: 4 kB\n",                                  /* field before any header */
		"7f00-7e00 rw-p 0 00:00 0\n",                   /* end before start */
		"7f00-7f10 rw-p 0 00:00 0\nnot a line\n",
		"zz-7f10 rw-p 0 00:00 0\n",
	};
	struct vt_region_list list = { 0 };
	struct vt_err err;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_EQ_I64(vt_maps_parse(bad[i], strlen(bad[i]), &list, &err), VT_E_PARSE);
		vt_region_list_release(&list);
	}
}

static void test_environ__lookup(void)
{
	static const char env[] = "A=1\0MALLOC_ARENA_MAX=2\0GLIBC_TUNABLES=glibc.malloc.trim_threshold=1:glibc.malloc.arena_max=4\0MALLOC_ARENA_MAX=9";
	const char *v, *tv;
	size_t vl, tvl;

	CHECK(vt_environ_get(env, sizeof(env) - 1, "MALLOC_ARENA_MAX", &v, &vl));
	CHECK(vl == 1 && v[0] == '2');          /* first wins, as getenv */
	CHECK(!vt_environ_get(env, sizeof(env) - 1, "MALLOC", &v, &vl));
	CHECK(!vt_environ_get(env, sizeof(env) - 1, "B", &v, &vl));
	CHECK(vt_environ_get(env, sizeof(env) - 1, "GLIBC_TUNABLES", &v, &vl));
	CHECK(vt_tunables_get(v, vl, "glibc.malloc.arena_max", &tv, &tvl));
	CHECK(tvl == 1 && tv[0] == '4');
	CHECK(!vt_tunables_get(v, vl, "glibc.malloc.arena", &tv, &tvl));
}

static void test_syscall__stack_pointer(void)
{
	uint64_t sp = 0;
	const char *blocked = "202 0x7f0a 0x80 0x0 0x0 0x0 0x0 0x7ffd1234 0x7f0a99";
	const char *user = "-1 0x7ffd5678 0x55aa";

	CHECK(vt_syscall_parse_sp(blocked, strlen(blocked), &sp));
	CHECK_EQ_U64(sp, 0x7ffd1234);
	CHECK(vt_syscall_parse_sp(user, strlen(user), &sp));
	CHECK_EQ_U64(sp, 0x7ffd5678);
	CHECK(!vt_syscall_parse_sp("running", 7, &sp));
	CHECK(!vt_syscall_parse_sp("1 2", 3, &sp));

	uint64_t pc = 0;
	CHECK(vt_syscall_parse_sp_pc(blocked, strlen(blocked), &sp, &pc));
	CHECK_EQ_U64(sp, 0x7ffd1234);
	CHECK_EQ_U64(pc, 0x7f0a99);
	CHECK(vt_syscall_parse_sp_pc(user, strlen(user), &sp, &pc));
	CHECK_EQ_U64(pc, 0x55aa);
	CHECK(!vt_syscall_parse_sp_pc("-1 0x7ffd5678 55aa", 18, &sp, &pc));
}

/* The arguments of a wait in progress: poll's timeout is its third (0x1f4 = 500 ms). */
static void test_syscall__arguments(void)
{
	const char *poll = "7 0x55d0c8f0a2a0 0x1 0x1f4 0x0 0x0 0x0 0x7ffd1c1b6a58 0x7f2a1b2c3d4e";
	const char *user = "-1 0x7ffd5678 0x55aa";
	uint64_t args[VT_SYSCALL_ARGS];
	long nr;

	CHECK(vt_syscall_parse(poll, strlen(poll), &nr, args, NULL) == VT_OK);
	CHECK(nr == 7 && args[0] == 0x55d0c8f0a2a0ull && args[1] == 1 && args[2] == 500 && args[5] == 0);
	CHECK(vt_syscall_parse(user, strlen(user), &nr, args, NULL) == VT_OK);
	CHECK(nr == VT_SYSCALL_NONE && args[2] == 0);
	CHECK(vt_syscall_parse("running", 7, &nr, args, NULL) == VT_OK && nr == VT_SYSCALL_RUNNING);
	CHECK(vt_syscall_parse("7 0x1 0x2", 9, &nr, args, NULL) == VT_E_PARSE && args[0] == 0);
	CHECK(vt_syscall_parse("7 0x1 0x2 zz 0x0 0x0 0x0", 24, &nr, args, NULL) == VT_E_PARSE);
	CHECK(vt_syscall_parse("7 0x1 0x2", 9, &nr, NULL, NULL) == VT_OK);   /* no args asked */
}

static void test_hostload__loadavg(void)
{
	const char *text = "4.10 2.58 1.02 3/412 12345\n";
	struct vt_loadavg la;

	CHECK(vt_loadavg_parse(text, strlen(text), &la, NULL) == VT_OK);
	CHECK(fabs(la.load1 - 4.10) < 1e-9 && fabs(la.load15 - 1.02) < 1e-9);
	CHECK(la.runnable == 3 && la.tasks == 412);
	CHECK(vt_loadavg_parse("4.10 2.58", 9, &la, NULL) == VT_E_PARSE);
	CHECK(vt_loadavg_parse("4.10 2.58 1.02 3", 16, &la, NULL) == VT_E_PARSE);
	CHECK(vt_loadavg_parse("4.100 2.58 1.02 3/4 5", 21, &la, NULL) == VT_E_PARSE);
	CHECK(vt_loadavg_parse("", 0, &la, NULL) == VT_E_PARSE);
}

static void test_io__parse(void)
{
	const char *text = "rchar: 323934931\nwchar: 323929600\nsyscr: 632687\nsyscw: 632675\n"
			   "read_bytes: 4096\nwrite_bytes: 0\ncancelled_write_bytes: 0\n";
	struct vt_proc_io io;
	struct vt_buf b = VT_BUF_INIT(4096);

	CHECK(vt_proc_io_parse(text, strlen(text), &io, NULL) == VT_OK);
	CHECK(io.rchar == 323934931 && io.wchar == 323929600 && io.syscr == 632687 && io.syscw == 632675);
	CHECK(io.read_bytes == 4096);
	CHECK(vt_proc_io_parse("rchar: 1\nwchar: 2\nsyscr: 3\n", 27, &io, NULL) == VT_E_PARSE);
	CHECK(vt_proc_io_parse("rchar 1\n", 8, &io, NULL) == VT_E_PARSE);
	CHECK(vt_proc_io_parse("rchar: x\n", 9, &io, NULL) == VT_E_PARSE);
	/* our own counters, read through the directory fd */
	{
		int dfd = open("/proc/self", O_RDONLY | O_DIRECTORY);

		CHECK(dfd >= 0);
		CHECK(vt_proc_io_read(dfd, &b, &io, NULL) == VT_OK && io.syscr > 0);
		close(dfd);
	}
	vt_buf_release(&b);
}

static void test_netstat__listen_counters(void)
{
	struct vt_listen_counters c;
	size_t len;
	char *buf = vt_fixture("proc/files/net_netstat", &len);

	/* recorded on the build machine: 7 overflows, 7 drops since its boot */
	CHECK(buf && vt_netstat_parse(buf, len, &c, NULL) == VT_OK);
	CHECK_EQ_U64(c.overflows, 7);
	CHECK_EQ_U64(c.drops, 7);
	free(buf);
	/* the names anywhere in the line; other prefixes' same names ignored */
	const char *t = "IpExt: ListenDrops InOctets\nIpExt: 5 -1\n"
			"TcpExt: A ListenDrops B ListenOverflows \nTcpExt: 1 12 3 9 \n";
	CHECK(vt_netstat_parse(t, strlen(t), &c, NULL) == VT_OK && c.overflows == 9 && c.drops == 12);
	/* an old kernel without them: unknown, not 0 */
	t = "TcpExt: SyncookiesSent\nTcpExt: 0\n";
	CHECK(vt_netstat_parse(t, strlen(t), &c, NULL) == VT_OK && !vt_known(c.overflows) &&
	      !vt_known(c.drops));
	struct vt_err err;
	const char *bad[] = {
		"TcpExt: ListenDrops\n",                         /* no values line */
		"TcpExt: ListenDrops\nIpExt: 4\n",              /* another prefix */
		"TcpExt: ListenDrops ListenOverflows\nTcpExt: 4\n",
		"TcpExt: ListenDrops\nTcpExt: 4 5\n",
		"TcpExt: ListenDrops\nTcpExt: x\n",
		"TcpExt: ListenDrops\nTcpExt: 99999999999999999999999\n",
		"ListenDrops\n4\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		CHECK(vt_netstat_parse(bad[i], strlen(bad[i]), &c, &err) == VT_E_PARSE);
		CHECK(strncmp(err.msg, "netstat: ", 9) == 0);
	}
}

/* A read through the directory fd of a process that has exited says GONE. */
static void test_procfs__reads_after_exit_say_gone(void)
{
	struct vt_buf buf = VT_BUF_INIT(1 << 20);
	struct vt_procfs pfs;
	struct vt_err err;
	pid_t child = fork();
	int fd, rc;

	if (child == 0) {
		pause();
		_exit(0);
	}
	CHECK_EQ_I64(vt_procfs_open(&pfs, NULL, NULL, &err), VT_OK);
	CHECK_EQ_I64(vt_pid_open(&pfs, child, &fd, &err), VT_OK);
	CHECK_EQ_I64(vt_read_at(fd, "status", &buf, &err), VT_OK);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	rc = vt_read_at(fd, "smaps", &buf, &err);
	CHECK_EQ_I64(rc, VT_E_GONE);
	rc = vt_read_at(fd, "status", &buf, &err);
	CHECK_EQ_I64(rc, VT_E_GONE);
	CHECK_EQ_I64(vt_pid_open(&pfs, child, &fd, &err), VT_E_NOPROC);
	close(fd);
	vt_procfs_close(&pfs);
	vt_buf_release(&buf);
}

static void test_buf__cap_is_enforced(void)
{
	struct vt_buf b = VT_BUF_INIT(8);

	CHECK_EQ_I64(vt_buf_append(&b, "12345678", 8), VT_OK);
	CHECK_EQ_I64(vt_buf_append(&b, "9", 1), VT_E_NOMEM);
	CHECK_EQ_U64(b.len, 8);
	CHECK_STR(b.data, "12345678");
	vt_buf_release(&b);
}

/*
 * A library opened on demand: a missing one names its package; one that
 * cannot be opened because vitals ran out of descriptors is VT_E_NOFILE
 * naming the limit, not "install it" (t0125 met this as profile's exit 8).
 */
struct expat_version_api {
	void *(*version)(void);
};

static void test_dynlib__missing_and_short(void)
{
	static const struct vt_dynsym syms[] = { { "XML_ExpatVersion", 0 } };
	struct expat_version_api api = { 0 };
	struct vt_dynlib none = VT_DYNLIB("libvitals-none.so.9", "vitals-none", "a test", syms, &api);
	struct vt_err err;
	int status;
	pid_t child;

	CHECK_EQ_I64(vt_dynlib_load(&none, &err), VT_E_UNSUPPORTED);
	CHECK(strstr(err.hint, "apt-get install vitals-none") != NULL);
	if (dlopen("libexpat.so.1", RTLD_NOW | RTLD_NOLOAD)) {
		printf("# skip: libexpat is loaded already\n");
		return;
	}
	child = fork();
	if (child == 0) {
		struct vt_dynlib expat = VT_DYNLIB("libexpat.so.1", "libexpat1", "a test", syms, &api);
		struct rlimit rl;
		int fd = open("/dev/null", O_RDONLY), rc;

		/* no descriptor left above the ones open now (the hard limit kept, to go back) */
		close(fd);
		if (getrlimit(RLIMIT_NOFILE, &rl))
			_exit(10);
		rl.rlim_cur = (rlim_t)fd;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			_exit(10);
		rc = vt_dynlib_load(&expat, &err);
		if (rc != VT_E_NOFILE)
			_exit(11);
		if (!strstr(err.hint, "ulimit -n"))
			_exit(12);
		rl.rlim_cur = (rlim_t)fd + 8;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			_exit(13);
		if (vt_dynlib_load(&expat, &err) != VT_OK || !api.version) {
			printf("#   %s\n", err.msg);
			_exit(14);
		}
		_exit(0);
	}
	CHECK(child > 0 && waitpid(child, &status, 0) == child);
	CHECK(WIFEXITED(status));
	CHECK_EQ_I64(WEXITSTATUS(status), 0);
}

VT_TEST_MAIN(test_stat__recorded_process, test_stat__comm_with_paren,
	     test_stat__kernel_thread_and_zombie, test_stat__malformed,
	     test_status__recorded_process, test_status__old_kernel_fields_missing,
	     test_status__kernel_thread_has_no_memory, test_status__bad_values,
	     test_maps__smaps_matches_status, test_scan__hex_digits, test_maps__maps_only_has_no_figures,
	     test_maps__path_with_spaces_and_deleted, test_maps__garbage_rejected,
	     test_environ__lookup, test_syscall__stack_pointer, test_syscall__arguments,
	     test_hostload__loadavg, test_io__parse, test_netstat__listen_counters,
	     test_procfs__reads_after_exit_say_gone, test_buf__cap_is_enforced,
	     test_dynlib__missing_and_short)

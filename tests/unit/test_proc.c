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

/* One mapping of the text maps_text() writes, as written. */
struct gen_region {
	uint64_t start, end, offset, inode;
	unsigned maj, min;
	char perms[5];
	char path[80000];
};

/*
 * Maps text of n mappings: runs of one library's segments, anonymous ones,
 * bracketed names, one path of 70,000 bytes (a line longer than a piece
 * read), and smaps field lines when smaps; the last line without '\n'.
 * Writes what each line says into want (n entries).
 */
static char *maps_text(size_t n, bool smaps, struct gen_region *want, size_t *len)
{
	struct vt_buf b = VT_BUF_INIT(64u << 20);
	uint64_t addr = 0x55550000000ull;
	size_t i;

	for (i = 0; i < n; i++) {
		struct gen_region *g = &want[i];
		g->start = addr;
		g->end = addr + 4096 * (1 + i % 7);
		addr = g->end + (i % 3 ? 0 : 4096);
		g->offset = (i % 4) * 0x1000;
		g->maj = i % 5 ? 0 : 0xfe;
		g->min = (unsigned)(i % 3);
		g->inode = i % 5 ? 0 : 1000 + i / 20;
		snprintf(g->perms, sizeof(g->perms), "%s", i % 2 ? "rw-p" : "r-xp");
		if (g->inode)
			snprintf(g->path, sizeof(g->path), "/usr/lib/lib%zu.so (deleted)", i / 20);
		else if (i % 97 == 1)
			snprintf(g->path, sizeof(g->path), "[anon: glibc: malloc arena]");
		else
			g->path[0] = '\0';
		if (i == n / 2) {
			memset(g->path, 'x', 70000);
			g->path[0] = '/';
			g->path[70000] = '\0';
		}
		vt_buf_appendf(&b, "%08llx-%08llx %s %08llx %02x:%02x %llu", (unsigned long long)g->start,
			       (unsigned long long)g->end, g->perms, (unsigned long long)g->offset, g->maj, g->min,
			       (unsigned long long)g->inode);
		vt_buf_appendf(&b, "%s%s%s", g->path[0] ? "                    " : " ", g->path,
			       i + 1 < n || smaps ? "\n" : "");
		if (smaps)
			vt_buf_appendf(&b, "Size:  %zu kB\nRss:   %zu kB\nSwap:  0 kB\nVmFlags: rd wr mr mw me ac%s",
				       (size_t)(g->end - g->start) / 1024, i % 9, i + 1 < n ? "\n" : "");
	}
	*len = b.len;
	return b.data;
}

static void check_regions(const struct vt_region_list *l, const struct gen_region *want, size_t n, bool smaps)
{
	size_t i, bad = 0;

	CHECK_EQ_U64(l->n, n);
	CHECK(l->has_smaps == smaps);
	for (i = 0; i < n && i < l->n; i++) {
		const struct vt_region *r = &l->v[i];
		const struct gen_region *g = &want[i];
		bad += r->start != g->start || r->end != g->end || r->offset != g->offset || r->inode != g->inode ||
		       r->dev_major != g->maj || r->dev_minor != g->min || strcmp(r->perms, g->perms) ||
		       strcmp(r->path, g->path) || r->rss != (smaps ? (uint64_t)(i % 9) * 1024 : VT_NA) ||
		       r->kind != VT_REGION_OTHER || r->blocks || r->py;
	}
	CHECK_EQ_U64(bad, 0);
}

/*
 * maps and smaps read a piece at a time (vt_maps_read_at): lines cut by the
 * end of a piece, a line longer than a piece, the last line without '\n',
 * give what the whole text parsed at once gives, field by field.
 */
static void test_maps__read_in_pieces(void)
{
	static struct gen_region want[6000];
	char dir[] = "/tmp/vt-test-maps.XXXXXX", path[64];
	struct vt_buf buf = VT_BUF_INIT(64u << 20), small = VT_BUF_INIT(100000);
	struct vt_region_list whole = { 0 }, pieces = { 0 };
	struct vt_err err;
	int smaps, dfd;

	CHECK(mkdtemp(dir) != NULL);
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK(dfd >= 0);
	for (smaps = 0; smaps < 2; smaps++) {
		size_t len;
		char *text = maps_text(6000, smaps, want, &len);
		FILE *f;

		CHECK(len > 4 * VT_READ_LINES_PIECE);
		snprintf(path, sizeof(path), "%s/maps", dir);
		f = fopen(path, "w");
		CHECK(f && fwrite(text, 1, len, f) == len);
		fclose(f);
		CHECK_EQ_I64(vt_maps_parse(text, len, &whole, &err), VT_OK);
		check_regions(&whole, want, 6000, smaps);
		CHECK_EQ_I64(vt_maps_read_at(dfd, "maps", &buf, &pieces, &err), VT_OK);
		check_regions(&pieces, want, 6000, smaps);
		CHECK(buf.cap < len);                /* the file was never held whole */
		/* larger than the buffer allows: refused, as a whole read is */
		vt_region_list_release(&pieces);
		CHECK_EQ_I64(vt_maps_read_at(dfd, "maps", &small, &pieces, &err), VT_E_NOMEM);
		CHECK(strstr(err.msg, "larger than") != NULL);
		vt_region_list_release(&pieces);
		vt_region_list_release(&whole);
		unlink(path);
		free(text);
	}
	/* a missing file: the error a whole read gives (here: no "stat" beside it, so the process is gone) */
	CHECK_EQ_I64(vt_maps_read_at(dfd, "maps", &buf, &pieces, &err), vt_read_at(dfd, "maps", &buf, NULL));
	CHECK_EQ_I64(err.code, VT_E_GONE);
	vt_region_list_release(&pieces);
	close(dfd);
	rmdir(dir);
	vt_buf_release(&buf);
	vt_buf_release(&small);
}

/*
 * The index of file-backed mappings follows the list: a file mapping read
 * twice (it grew between two reads of the kernel's buffer) and dropped as
 * stale leaves no index behind, so what walks the index alone (the
 * allocator's detection, CPython's) sees each mapping in v once.
 */
static void test_maps__files_index_drops_stale(void)
{
	const char *text =
		"7f0000000000-7f0000001000 r--p 00000000 fe:00 11 /usr/lib/liba.so\n"
		"7f0000001000-7f0000002000 rw-p 00000000 00:00 0 \n"
		"7f0000002000-7f0000003000 r-xp 00001000 fe:00 12 /usr/lib/libb.so\n"
		"7f0000003000-7f0000004000 r--p 00002000 fe:00 12 /usr/lib/libb.so\n"
		/* the kernel's next buffer: the last two seen again, grown */
		"7f0000002000-7f0000005000 r-xp 00001000 fe:00 13 /usr/lib/libc.so\n"
		"7f0000005000-7f0000006000 rw-p 00000000 00:00 0 [heap]\n"
		"7f0000006000-7f0000007000 r--p 00000000 fe:00 14 /usr/lib/libd.so\n";
	struct vt_region_list l = { 0 };
	size_t i, files = 0;

	CHECK_EQ_I64(vt_maps_parse(text, strlen(text), &l, NULL), VT_OK);
	CHECK_EQ_U64(l.n, 5);
	CHECK_EQ_U64(l.stale, 2);
	for (i = 0; i < l.n; i++)
		files += l.v[i].inode != 0;
	CHECK_EQ_U64(l.nfiles, files);
	for (i = 0; i < l.nfiles; i++)
		CHECK(l.files[i] < l.n && l.v[l.files[i]].inode && (!i || l.files[i] > l.files[i - 1]));
	CHECK_STR(l.v[l.files[1]].path, "/usr/lib/libc.so");
	/* a library's segments share their path's text; an anonymous mapping has "" */
	CHECK_STR(l.v[1].path, "");
	CHECK_STR(l.v[3].path, "[heap]");
	vt_region_list_release(&l);
	CHECK(l.files == NULL && l.nfiles == 0 && l.names == NULL);
}

/* A NUL byte inside a path (hostile or corrupt text) ends it, whatever the mapping before had (found by fuzz_maps). */
static void test_maps__nul_in_path(void)
{
	static const char text[] =
		"1000-2000 rw-p 00000000 00:00 0 \n"
		"2000-3000 rw-p 00000000 00:00 0 \0/x\n"
		"3000-4000 r--p 00000000 fe:00 7 /lib/a\0b\n"
		"4000-5000 r--p 00000000 fe:00 7 /lib/a\0c\n"
		"5000-6000 r--p 00000000 fe:00 7 /lib/ab\n";
	struct vt_region_list l = { 0 };

	CHECK_EQ_I64(vt_maps_parse(text, sizeof(text) - 1, &l, NULL), VT_OK);
	CHECK_EQ_U64(l.n, 5);
	CHECK_STR(l.v[1].path, "");
	CHECK_STR(l.v[2].path, "/lib/a");
	CHECK_STR(l.v[3].path, "/lib/a");
	CHECK_STR(l.v[4].path, "/lib/ab");
	vt_region_list_release(&l);
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
	     test_maps__read_in_pieces, test_maps__files_index_drops_stale, test_maps__nul_in_path,
	     test_environ__lookup, test_syscall__stack_pointer, test_syscall__arguments,
	     test_hostload__loadavg, test_io__parse, test_netstat__listen_counters,
	     test_procfs__reads_after_exit_say_gone, test_buf__cap_is_enforced,
	     test_dynlib__missing_and_short)

/*
 * test_detect.c — allocator detection (src/alloc/detect.c, elfsym.c).
 *
 * Three kinds of test: the banner parser on strings; recorded proc trees in
 * tests/fixtures/detect/<case>/4242 whose root/ links to the small ELF files
 * in tests/fixtures/detect/elf (missing, corrupt and fake libraries); and live
 * processes this program starts (sleep, sleep under LD_PRELOAD, static
 * programs it compiles with cc).  Live tests that lack a prerequisite (cc,
 * libc.a, libjemalloc) print "# skip" and pass.  Every child is killed and
 * reaped before its test returns.
 */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "alloc/detect.h"
#include "alloc/detect_cache.h"
#include "elf/elfsym.h"
#include "proc/maps.h"
#include "proc/procfs.h"

#define JEMALLOC_SO "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
#define LIBC_A "/usr/lib/x86_64-linux-gnu/libc.a"

static bool contains(const char *s, const char *needle)
{
	return s && strstr(s, needle) != NULL;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* ---- running detection ------------------------------------------------- */

/* Detect pid under proc_root (NULL: the live /proc); returns vt_alloc_detect's code. */
static int detect_pid(const char *proc_root, pid_t pid, bool with_env, struct vt_alloc_info *info)
{
	struct vt_buf maps = VT_BUF_INIT(64u << 20), env = VT_BUF_INIT(1u << 20);
	struct vt_region_list regions = { 0 };
	struct vt_procfs pfs;
	struct vt_err err;
	int fd = -1, rc;

	memset(info, 0, sizeof(*info));
	vt_err_clear(&err);
	rc = vt_procfs_open(&pfs, proc_root, proc_root ? "/nonexistent" : NULL, &err);
	if (rc)
		goto out;
	rc = vt_pid_open(&pfs, pid, &fd, &err);
	if (!rc)
		rc = vt_read_at(fd, "maps", &maps, &err);
	if (!rc)
		rc = vt_maps_parse(maps.data, maps.len, &regions, &err);
	if (!rc) {
		with_env = with_env && vt_read_at(fd, "environ", &env, &err) == VT_OK;
		rc = vt_alloc_detect(&pfs, fd, pid, &regions, with_env ? env.data : NULL, env.len,
				     info, &err);
	}
	if (fd >= 0)
		close(fd);
	vt_procfs_close(&pfs);
out:
	if (rc)
		printf("#   detect %d: %s: %s\n", (int)pid, vt_code_name(rc), err.msg);
	else
		printf("#   kind %s, version '%s', %s, path '%s'\n", vt_alloc_kind_name(info->kind),
		       info->version, info->is_static ? "static" : "shared", info->path);
	if (!rc)
		printf("#   evidence: %s\n", info->evidence);
	vt_region_list_release(&regions);
	vt_buf_release(&maps);
	vt_buf_release(&env);
	return rc;
}

static int count_fds(void)
{
	char path[64];
	int fd, n = 0;

	for (fd = 0; fd < 1024; fd++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n += access(path, F_OK) == 0;
	}
	return n;
}

static int detect_fixture(const char *name, bool with_env, struct vt_alloc_info *info)
{
	char rel[128];

	snprintf(rel, sizeof(rel), "detect/%s", name);
	return detect_pid(vt_fixture_path(rel), 4242, with_env, info);
}

/* ---- live children ------------------------------------------------------ */

static char state_of(pid_t pid)
{
	char path[64], buf[512], *paren;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return '?';
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return '?';
	buf[n] = '\0';
	paren = strrchr(buf, ')');
	return paren && paren[1] == ' ' ? paren[2] : '?';
}

static void reap(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

/*
 * fork+exec argv with envp; returns once the child has exec'd and is asleep
 * (so ld.so has mapped its libraries), or -1.
 */
static pid_t spawn(char *const argv[], char *const envp[])
{
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	int pfd[2], i;
	ssize_t n;
	pid_t pid;
	char c;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(pfd[0]);
		execve(argv[0], argv, envp);
		if (write(pfd[1], "x", 1) < 0)
			_exit(126);
		_exit(127);
	}
	close(pfd[1]);
	while ((n = read(pfd[0], &c, 1)) < 0 && errno == EINTR)
		;
	close(pfd[0]);
	if (n != 0) {
		reap(pid);
		return -1;
	}
	for (i = 0; i < 500 && state_of(pid) != 'S'; i++)
		nanosleep(&tick, NULL);
	return pid;
}

static pid_t spawn_sleep(const char *preload)
{
	char env_preload[512];
	char *argv[] = { "/bin/sleep", "30", NULL };
	char *envp[] = { "PATH=/usr/bin:/bin", env_preload, NULL };

	snprintf(env_preload, sizeof(env_preload), "LD_PRELOAD=%s", preload ? preload : "");
	if (!preload)
		envp[1] = NULL;
	return spawn(argv, envp);
}

static char scratch_dir[64];

static void remove_scratch(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", scratch_dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", scratch_dir);
}

/* A scratch directory for programs compiled by the tests, removed at exit; "" when unusable. */
static const char *scratch(void)
{
	if (!scratch_dir[0]) {
		snprintf(scratch_dir, sizeof(scratch_dir), "/tmp/vt-test-detect.XXXXXX");
		if (mkdtemp(scratch_dir))
			atexit(remove_scratch);
		else
			scratch_dir[0] = '\0';
	}
	return scratch_dir;
}

/* Write source to dir/name.c and run "cc FLAGS -o dir/name dir/name.c"; path of the result. */
static const char *compile(const char *name, const char *source, const char *flags)
{
	static char out[256];
	char src[256], cmd[1024];
	FILE *f;

	if (!scratch()[0] || access("/usr/bin/cc", X_OK) != 0)
		return NULL;
	snprintf(src, sizeof(src), "%s/%s.c", scratch(), name);
	snprintf(out, sizeof(out), "%s/%s", scratch(), name);
	f = fopen(src, "w");
	if (!f)
		return NULL;
	fputs(source, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "cc %s -o '%s' '%s' >/dev/null 2>&1", flags, out, src);
	return system(cmd) == 0 ? out : NULL;
}

/* ---- the glibc banner ------------------------------------------------------ */

static bool banner(const char *s, size_t len, char *version)
{
	return vt_glibc_banner_version(s, len, version, 32);
}
#define BANNER(lit, v) banner((lit), sizeof(lit) - 1, (v))

static void test_detect__banner_debian(void)
{
	char v[32], *buf;
	size_t len;

	CHECK(BANNER("GNU C Library (Debian GLIBC 2.36-9+deb12u14) stable release version 2.36.\n"
		     "Copyright (C) 2022 Free Software Foundation, Inc.", v));
	CHECK_STR(v, "2.36");
	/* The bytes around the banner in Debian 12's libc.so.6 .rodata, NULs and all. */
	buf = vt_fixture("detect/banner/debian_2_36.bin", &len);
	CHECK(banner(buf, len, v));
	CHECK_STR(v, "2.36");
	free(buf);
}

static void test_detect__banner_variants(void)
{
	char v[32];

	CHECK(BANNER("\0GNU C Library stable release version 2.17, by Roland McGrath et al.\n", v));
	CHECK_STR(v, "2.17");
	CHECK(BANNER("GNU C Library (GNU libc) development release version 2.39.9000.\n", v));
	CHECK_STR(v, "2.39.9000");
	CHECK(BANNER("GNU C Library (Ubuntu GLIBC 2.35-0ubuntu3.8) stable release version 2.35.", v));
	CHECK_STR(v, "2.35");
	/* Not NUL-terminated: the version may end the buffer. */
	CHECK(BANNER("GNU C Library release version 2.36", v));
	CHECK_STR(v, "2.36");
	/* A bad first banner does not hide a good second one. */
	CHECK(BANNER("GNU C Library release version x\0GNU C Library release version 2.31.\n", v));
	CHECK_STR(v, "2.31");
}

static void test_detect__banner_rejects(void)
{
	char v[32], tiny[4];

	CHECK(!BANNER("", v));
	CHECK_STR(v, "");
	CHECK(!banner(NULL, 0, v));
	CHECK(!BANNER("stable release version 2.36.", v));                /* no "GNU C Library" */
	CHECK(!BANNER("GNU C Library\0release version 2.36.", v));         /* another string */
	CHECK(!BANNER("GNU C Library release version 2", v));              /* one number */
	CHECK(!BANNER("GNU C Library release version 2.", v));
	CHECK(!BANNER("GNU C Library release version .36", v));
	CHECK(!BANNER("GNU C Library release version 2.36a", v));
	CHECK(!BANNER("GNU C Library release version 2.36.1.2", v));       /* four numbers */
	CHECK(!BANNER("GNU C Library release version 2.3600000000000.", v));
	CHECK_STR(v, "");
	CHECK(!vt_glibc_banner_version("GNU C Library release version 2.36", 34, tiny, sizeof(tiny)));
	CHECK_STR(tiny, "");
	CHECK(vt_glibc_banner_version("GNU C Library release version 2.9", 33, tiny, sizeof(tiny)));
	CHECK_STR(tiny, "2.9");
}

static void test_detect__kind_names(void)
{
	CHECK_STR(vt_alloc_kind_name(VT_ALLOC_UNKNOWN), "unknown");
	CHECK_STR(vt_alloc_kind_name(VT_ALLOC_GLIBC), "glibc");
	CHECK_STR(vt_alloc_kind_name(VT_ALLOC_JEMALLOC), "jemalloc");
	CHECK_STR(vt_alloc_kind_name(VT_ALLOC_TCMALLOC), "tcmalloc");
	CHECK_STR(vt_alloc_kind_name(VT_ALLOC_MIMALLOC), "mimalloc");
	CHECK_STR(vt_alloc_kind_name(VT_ALLOC_MUSL), "musl");
	CHECK_STR(vt_alloc_kind_name((enum vt_alloc_kind)99), "unknown");
}

/* ---- elfsym on the fixture libraries -------------------------------------- */

static struct vt_elfsym *open_elf(const char *path)
{
	struct vt_elfsym *ef = NULL;
	struct vt_err err;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || vt_elfsym_open_fd(fd, &ef, &err) != VT_OK)
		printf("#   cannot open %s\n", path);
	return ef;
}

static void test_detect__elfsym_fake_lib(void)
{
	static const char *const names[] = { "malloc", "free", "mallctl", "malloc_info", "banner" };
	struct vt_elfsym *ef = open_elf(vt_fixture_path("detect/elf/libfake.so"));
	char v[32], so[32], small[8];
	const char *bytes;
	size_t len;

	CHECK(ef != NULL);
	if (!ef)
		return;
	/* banner is an object, not a function; free is not defined. */
	CHECK_EQ_U64(vt_elfsym_defines(ef, VT_ELFSYM_DYNSYM, names, 5), 1 | 4 | 8);
	CHECK(!vt_elfsym_has_interp(ef));
	CHECK(vt_elfsym_soname(ef, so, sizeof(so)));
	CHECK_STR(so, "libfake.so.1");
	CHECK(!vt_elfsym_soname(ef, small, sizeof(small)));
	CHECK(vt_elfsym_verdef_max(ef, "GLIBC_", v, sizeof(v)));
	CHECK_STR(v, "2.36");
	CHECK(vt_elfsym_section(ef, ".rodata", &bytes, &len));
	CHECK(vt_glibc_banner_version(bytes, len, v, sizeof(v)));
	CHECK_STR(v, "2.36");
	CHECK(!vt_elfsym_section(ef, ".no_such_section", &bytes, &len));
	/* the tail read from the file: the section's last bytes, all of them when it is smaller */
	{
		char *tail;
		size_t tlen;

		CHECK(vt_elfsym_section(ef, ".rodata", &bytes, &len) && len > 8);
		CHECK(vt_elfsym_section_tail(ef, ".rodata", len - 3, &tail, &tlen));
		CHECK_EQ_U64(tlen, len - 3);
		CHECK(tail && memcmp(tail, bytes + 3, len - 3) == 0);
		free(tail);
		CHECK(vt_elfsym_section_tail(ef, ".rodata", len + 100, &tail, &tlen));
		CHECK_EQ_U64(tlen, len);
		CHECK(tail && memcmp(tail, bytes, len) == 0 && vt_glibc_banner_version(tail, tlen, v, sizeof(v)));
		CHECK_STR(v, "2.36");
		free(tail);
		CHECK(!vt_elfsym_section_tail(ef, ".no_such_section", 64, &tail, &tlen));
	}
	vt_elfsym_free(&ef);
	CHECK(ef == NULL);
	vt_elfsym_free(&ef);
	vt_elfsym_free(NULL);
}

/* every function name of a real library: the GNU hash table finds what the whole scan finds */
struct names {
	char **v;
	size_t n, cap;
};

static bool collect_name(void *ctx, const char *name, uint64_t value, uint64_t size)
{
	struct names *ns = ctx;

	(void)value;
	(void)size;
	if (ns->n == ns->cap) {
		size_t cap = ns->cap ? 2 * ns->cap : 1024;
		char **v = realloc(ns->v, cap * sizeof(*v));

		if (!v)
			return false;
		ns->v = v;
		ns->cap = cap;
	}
	ns->v[ns->n] = strdup(name);
	return ns->v[ns->n++] != NULL;
}

static void test_detect__elfsym_gnu_hash_agrees(void)
{
	static const char *const libs[] = { "/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/libm.so.6",
					    "/lib/x86_64-linux-gnu/libz.so.1" };
	static const char *const absent[] = { "", "mallinfo3", "malloc_", "pthread_cond_wait@GLIBC_2.2.5" };
	size_t l, i, found = 0;

	for (l = 0; l < sizeof(libs) / sizeof(libs[0]); l++) {
		struct names ns = { 0 };
		struct vt_elfsym *ef = NULL;
		struct vt_err err;
		unsigned long before;
		int fd = open(libs[l], O_RDONLY | O_CLOEXEC);

		if (fd < 0 || vt_elfsym_open_fd(fd, &ef, &err) != VT_OK) {
			printf("# skip %s: not here\n", libs[l]);
			continue;
		}
		vt_elfsym_each_func(ef, collect_name, &ns);
		CHECK(ns.n > 10);
		before = vt_elfsym_hash_lookups;
		for (i = 0; i < ns.n + sizeof(absent) / sizeof(absent[0]); i++) {
			const char *name = i < ns.n ? ns.v[i] : absent[i - ns.n];
			uint64_t by_hash = 1, by_scan = 2;
			int rc_hash, rc_scan;

			vt_elfsym_scan_only = false;
			rc_hash = vt_elfsym_symbol(ef, name, &by_hash, NULL);
			vt_elfsym_scan_only = true;
			rc_scan = vt_elfsym_symbol(ef, name, &by_scan, NULL);
			vt_elfsym_scan_only = false;
			if (rc_hash != rc_scan || by_hash != by_scan) {
				CHECK(!"the hash table and the scan disagree");
				printf("#   %s in %s: %d %#llx by hash, %d %#llx by scan\n", name, libs[l], rc_hash,
				       (unsigned long long)by_hash, rc_scan, (unsigned long long)by_scan);
				break;
			}
			found += rc_hash == VT_OK;
		}
		CHECK(vt_elfsym_hash_lookups > before);     /* these libraries have .gnu.hash */
		/* vt_elfsym_defines, 32 names at a time: every function, with absent and imported names between */
		for (i = 0; i < ns.n; i += 29) {
			static const char *const extra[] = { "mallinfo3", "__libc_start_main", "_ITM_registerTMCloneTable" };
			const char *batch[32];
			size_t k, nb = 0;
			uint32_t by_hash, by_scan;

			for (k = i; k < ns.n && nb < 29; k++)
				batch[nb++] = ns.v[k];
			for (k = 0; k < 3; k++)
				batch[nb++] = extra[k];
			before = vt_elfsym_hash_lookups;
			vt_elfsym_scan_only = false;
			by_hash = vt_elfsym_defines(ef, VT_ELFSYM_DYNSYM, batch, nb);
			CHECK(vt_elfsym_hash_lookups > before);
			vt_elfsym_scan_only = true;
			by_scan = vt_elfsym_defines(ef, VT_ELFSYM_DYNSYM, batch, nb);
			vt_elfsym_scan_only = false;
			if (by_hash != by_scan) {
				CHECK(!"vt_elfsym_defines: the hash table and the scan disagree");
				printf("#   %s: %#x by hash, %#x by scan, from %s\n", libs[l], by_hash, by_scan, batch[0]);
				break;
			}
		}
		for (i = 0; i < ns.n; i++)
			free(ns.v[i]);
		free(ns.v);
		vt_elfsym_free(&ef);
	}
	CHECK(found > 1000);
}

static void test_detect__elfsym_verdef_numeric(void)
{
	struct vt_elfsym *ef = open_elf(vt_fixture_path("detect/elf/libnobanner.so"));
	char v[32];

	CHECK(ef != NULL);
	if (!ef)
		return;
	/* GLIBC_2.36 beats GLIBC_2.9 and GLIBC_2.2.5; GLIBC_PRIVATE is not a number. */
	CHECK(vt_elfsym_verdef_max(ef, "GLIBC_", v, sizeof(v)));
	CHECK_STR(v, "2.36");
	CHECK(!vt_elfsym_verdef_max(ef, "GLIBC_", v, 4));
	CHECK(!vt_elfsym_verdef_max(ef, "NOPE_", v, sizeof(v)));
	vt_elfsym_free(&ef);
}

static void test_detect__elfsym_static_exe(void)
{
	static const char *const names[] = { "_start", "malloc" };
	struct vt_elfsym *ef = open_elf(vt_fixture_path("detect/elf/nolibc"));

	CHECK(ef != NULL);
	if (!ef)
		return;
	CHECK(!vt_elfsym_has_interp(ef));
	CHECK_EQ_U64(vt_elfsym_defines(ef, VT_ELFSYM_SYMTAB, names, 2), 1);
	CHECK_EQ_U64(vt_elfsym_defines(ef, VT_ELFSYM_DYNSYM, names, 2), 0);
	vt_elfsym_free(&ef);
}

static void ask_everything(void *image, size_t len)
{
	static const char *const names[] = { "malloc", "mallctl", "malloc_info" };
	struct vt_elfsym *ef = NULL;
	char v[32];
	const char *bytes;
	size_t n;

	if (vt_elfsym_open_mem(image, len, &ef, NULL) != VT_OK)
		return;
	(void)vt_elfsym_defines(ef, VT_ELFSYM_DYNSYM | VT_ELFSYM_SYMTAB, names, 3);
	(void)vt_elfsym_has_interp(ef);
	if (vt_elfsym_section(ef, ".rodata", &bytes, &n))
		(void)vt_glibc_banner_version(bytes, n, v, sizeof(v));
	(void)vt_elfsym_verdef_max(ef, "GLIBC_", v, sizeof(v));
	(void)vt_elfsym_soname(ef, v, sizeof(v));
	vt_elfsym_free(&ef);
}

/* Every prefix of a real library, and copies with bytes flipped: no crash. */
static void test_detect__elfsym_hostile(void)
{
	size_t len, cut, i;
	char *orig = vt_fixture("detect/elf/libfake.so", &len), *copy = malloc(len);
	char magic_only[] = { 0x7f, 'E', 'L', 'F' }, text[] = "plain text";
	uint32_t seed = 12345;
	struct vt_elfsym *ef;
	struct vt_err err;
	int round;

	CHECK(copy != NULL);
	for (cut = 0; copy && cut <= len; cut += cut < 256 ? 1 : 7) {
		memcpy(copy, orig, cut);
		ask_everything(copy, cut);
	}
	for (round = 0; copy && round < 2000; round++) {
		memcpy(copy, orig, len);
		for (i = 0; i < 8; i++) {
			seed = seed * 1103515245u + 12345u;
			copy[(seed >> 8) % len] ^= (char)(1u << (seed % 8));
		}
		ask_everything(copy, len);
	}
	CHECK_EQ_I64(vt_elfsym_open_mem(magic_only, sizeof(magic_only), &ef, &err), VT_E_PARSE);
	CHECK_EQ_I64(vt_elfsym_open_mem(text, sizeof(text), &ef, &err), VT_E_PARSE);
	CHECK_STR(err.msg, "not an ELF file");
	CHECK(ef == NULL);
	free(copy);
	free(orig);
}

/* ---- recorded proc trees ---------------------------------------------------- */

/* maps names files that exist nowhere: nothing decides, nothing crashes. */
static void test_detect__fixture_missing_files(void)
{
	struct vt_alloc_info info;

	CHECK_EQ_I64(detect_fixture("missing", true, &info), VT_OK);
	CHECK_EQ_I64(info.kind, VT_ALLOC_UNKNOWN);
	CHECK_STR(info.version, "");
	CHECK_STR(info.path, "");
	CHECK(contains(info.evidence, "no libc or allocator library mapped"));
	CHECK(contains(info.evidence, "executable unreadable (No such file or directory)"));
}

static void test_detect__fixture_libc_unreadable(void)
{
	struct vt_alloc_info info;

	CHECK_EQ_I64(detect_fixture("libc_missing", true, &info), VT_OK);
	CHECK_EQ_I64(info.kind, VT_ALLOC_GLIBC);
	CHECK_STR(info.version, "");
	CHECK_STR(info.path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	CHECK(contains(info.evidence, "libc.so.6 mapped; unreadable (No such file or directory)"));
	CHECK(contains(info.evidence, "LD_PRELOAD'ed libnone.so not mapped"));
}

static void test_detect__fixture_corrupt_files(void)
{
	struct vt_alloc_info info;
	int fds = count_fds();

	CHECK_EQ_I64(detect_fixture("corrupt", true, &info), VT_OK);
	CHECK_EQ_I64(count_fds(), fds);   /* every file and libelf handle released */
	CHECK_EQ_I64(info.kind, VT_ALLOC_JEMALLOC);
	CHECK(!info.is_static);
	CHECK_STR(info.version, "libjemalloc.so.2");
	CHECK(contains(info.evidence, "unreadable (not an ELF file), malloc not verified"));
	CHECK(contains(info.evidence, "app unreadable (not an ELF file)"));
}

static void test_detect__fixture_glibc_banner(void)
{
	struct vt_alloc_info info;

	CHECK_EQ_I64(detect_fixture("fake_glibc", true, &info), VT_OK);
	CHECK_EQ_I64(info.kind, VT_ALLOC_GLIBC);
	CHECK_STR(info.version, "2.36");
	CHECK_STR(info.evidence, "libc.so.6 mapped and defines malloc; banner says release version 2.36");
}

static void test_detect__fixture_glibc_symbol_versions(void)
{
	struct vt_alloc_info info;

	CHECK_EQ_I64(detect_fixture("fake_glibc_verdef", true, &info), VT_OK);
	CHECK_EQ_I64(info.kind, VT_ALLOC_GLIBC);
	CHECK_STR(info.version, "2.36");
	CHECK(contains(info.evidence, "from symbol versions 2.36"));
}

static void test_detect__fixture_environ_unreadable(void)
{
	struct vt_alloc_info info;

	/*
	 * Without environ the preloaded library is not known to be preloaded,
	 * but it is mapped and defines malloc: it may preempt glibc, and its
	 * symbols say which allocator it is.
	 */
	CHECK_EQ_I64(detect_fixture("preload", false, &info), VT_OK);
	CHECK_EQ_I64(info.kind, VT_ALLOC_JEMALLOC);
	CHECK(contains(info.evidence, "/opt/x/libfake.so mapped and defines malloc (may preempt glibc)"));
	CHECK(contains(info.evidence, "environ unreadable, LD_PRELOAD not checked"));
}

static void test_detect__fixture_preload_wins(void)
{
	struct vt_alloc_info info;

	/* ...with it, the first LD_PRELOAD entry that defines malloc decides. */
	CHECK_EQ_I64(detect_fixture("preload", true, &info), VT_OK);
	CHECK_EQ_I64(info.kind, VT_ALLOC_JEMALLOC);   /* by its mallctl */
	CHECK_STR(info.path, "/opt/x/libfake.so");
	CHECK_STR(info.version, "libfake.so.1");
	CHECK(contains(info.evidence, "LD_PRELOAD'ed /opt/x/libfake.so defines malloc (preempts glibc)"));
	CHECK(contains(info.evidence, "libmissing.so not mapped"));
}

static void test_detect__fixture_static_nolibc(void)
{
	struct vt_alloc_info info;

	CHECK_EQ_I64(detect_fixture("static_nolibc", true, &info), VT_OK);
	CHECK_EQ_I64(info.kind, VT_ALLOC_UNKNOWN);
	CHECK(info.is_static);
	CHECK_STR(info.path, "/usr/bin/nolibc");
	CHECK(contains(info.evidence, "unknown (static)"));
}

/* ---- live processes ------------------------------------------------------------- */

static void test_detect__glibc_dynamic(void)
{
	struct vt_alloc_info info;
	pid_t pid = spawn_sleep(NULL);
	int fds = count_fds();

	CHECK(pid > 0);
	if (pid <= 0)
		return;
	CHECK_EQ_I64(detect_pid(NULL, pid, true, &info), VT_OK);
	CHECK_EQ_I64(count_fds(), fds);
	CHECK_EQ_I64(info.kind, VT_ALLOC_GLIBC);
	CHECK_STR(info.version, gnu_get_libc_version());
	CHECK(!info.is_static);
	CHECK(ends_with(info.path, "/libc.so.6"));
	CHECK(contains(info.evidence, "libc.so.6 mapped and defines malloc; banner says release version"));
	reap(pid);
}

static void test_detect__jemalloc_preload(void)
{
	struct vt_alloc_info info;
	pid_t pid;

	if (access(JEMALLOC_SO, R_OK) != 0) {
		printf("# skip: %s not installed\n", JEMALLOC_SO);
		return;
	}
	pid = spawn_sleep(JEMALLOC_SO);
	CHECK(pid > 0);
	if (pid <= 0)
		return;
	CHECK_EQ_I64(detect_pid(NULL, pid, true, &info), VT_OK);
	CHECK_EQ_I64(info.kind, VT_ALLOC_JEMALLOC);
	CHECK_STR(info.path, JEMALLOC_SO);
	CHECK_STR(info.version, "libjemalloc.so.2");
	CHECK_STR(info.evidence, "LD_PRELOAD'ed " JEMALLOC_SO " defines malloc (preempts glibc)");
	reap(pid);
}

/* LD_PRELOAD through a symlink of another name: matched by inode. */
static void test_detect__jemalloc_preload_symlink(void)
{
	struct vt_alloc_info info;
	char link[256];
	pid_t pid;

	if (access(JEMALLOC_SO, R_OK) != 0 || !scratch()[0]) {
		printf("# skip: %s not installed\n", JEMALLOC_SO);
		return;
	}
	snprintf(link, sizeof(link), "%s/libmy-alloc.so", scratch());
	CHECK(symlink(JEMALLOC_SO, link) == 0);
	pid = spawn_sleep(link);
	CHECK(pid > 0);
	if (pid <= 0)
		return;
	CHECK_EQ_I64(detect_pid(NULL, pid, true, &info), VT_OK);
	CHECK_EQ_I64(info.kind, VT_ALLOC_JEMALLOC);
	CHECK_STR(info.path, JEMALLOC_SO);
	CHECK(contains(info.evidence, "LD_PRELOAD'ed " JEMALLOC_SO " defines malloc"));
	reap(pid);
}

/* The preloaded library is deleted after start (an upgrade): read via map_files or said so. */
static void test_detect__deleted_library(void)
{
	struct vt_alloc_info info;
	char copy[256], cmd[600];
	pid_t pid;

	if (access(JEMALLOC_SO, R_OK) != 0 || !scratch()[0]) {
		printf("# skip: %s not installed\n", JEMALLOC_SO);
		return;
	}
	snprintf(copy, sizeof(copy), "%s/libjemalloc.so.2", scratch());
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", JEMALLOC_SO, copy);
	CHECK(system(cmd) == 0);
	pid = spawn_sleep(copy);
	CHECK(pid > 0);
	if (pid <= 0)
		return;
	CHECK(unlink(copy) == 0);
	CHECK_EQ_I64(detect_pid(NULL, pid, true, &info), VT_OK);
	CHECK_EQ_I64(info.kind, VT_ALLOC_JEMALLOC);
	CHECK(ends_with(info.path, "/libjemalloc.so.2 (deleted)"));
	CHECK(contains(info.evidence, "LD_PRELOAD'ed "));
	/* As root map_files/ still reaches the file; otherwise the evidence says why not. */
	CHECK(strcmp(info.version, "libjemalloc.so.2") == 0 ||
	      contains(info.evidence, "deleted since it was mapped"));
	reap(pid);
}

/* Linked against (not preloaded): found by mapping, step 3. */
static void test_detect__jemalloc_linked(void)
{
	static const char src[] = "#include <stdlib.h>\n#include <unistd.h>\n"
				  "int main(void) { free(malloc(64)); pause(); return 0; }\n";
	char *argv[2] = { NULL, NULL }, *envp[] = { NULL };
	struct vt_alloc_info info;
	const char *prog;
	pid_t pid;

	if (access(JEMALLOC_SO, R_OK) != 0) {
		printf("# skip: %s not installed\n", JEMALLOC_SO);
		return;
	}
	prog = compile("with_jemalloc", src, "-O1 -Wl,--no-as-needed " JEMALLOC_SO);
	if (!prog) {
		printf("# skip: cannot link a program with %s\n", JEMALLOC_SO);
		return;
	}
	argv[0] = (char *)prog;
	pid = spawn(argv, envp);
	CHECK(pid > 0);
	if (pid <= 0)
		return;
	CHECK_EQ_I64(detect_pid(NULL, pid, true, &info), VT_OK);
	CHECK_EQ_I64(info.kind, VT_ALLOC_JEMALLOC);
	CHECK_STR(info.evidence, JEMALLOC_SO " mapped and defines malloc (preempts glibc)");
	reap(pid);
}

/* Compile src, run it, detect it: the common part of the step-1 tests. */
static bool run_compiled(const char *name, const char *src, const char *flags,
			 struct vt_alloc_info *info, const char **prog)
{
	char *argv[2] = { NULL, NULL }, *envp[] = { NULL };
	pid_t pid;
	int rc;

	*prog = compile(name, src, flags);
	if (!*prog) {
		printf("# skip: cc %s failed\n", flags);
		return false;
	}
	argv[0] = (char *)*prog;
	pid = spawn(argv, envp);
	CHECK(pid > 0);
	if (pid <= 0)
		return false;
	rc = detect_pid(NULL, pid, true, info);
	CHECK_EQ_I64(rc, VT_OK);
	reap(pid);
	return rc == VT_OK;
}

/* The executable overrides malloc (as with a statically linked tcmalloc): step 1 beats libc. */
static void test_detect__exe_defines_malloc(void)
{
	static const char src[] = "#include <stddef.h>\n#include <unistd.h>\n"
				  "extern void *__libc_malloc(size_t);\n"
				  "void *tc_malloc(size_t n) { return __libc_malloc(n); }\n"
				  "void *malloc(size_t n) { return tc_malloc(n); }\n"
				  "int main(void) { pause(); return 0; }\n";
	struct vt_alloc_info info;
	const char *prog;

	if (!run_compiled("own_malloc", src, "-O1", &info, &prog))
		return;
	CHECK_EQ_I64(info.kind, VT_ALLOC_TCMALLOC);
	CHECK(info.is_static);
	CHECK_STR(info.path, prog);
	CHECK(contains(info.evidence,
		       "defines malloc itself (tcmalloc linked in: tc_malloc) (preempts glibc)"));
}

/* A sanitizer runtime linked as a library (gcc): malloc is the sanitizer's. */
static void test_detect__sanitizer_linked(void)
{
	static const char src[] = "#include <unistd.h>\nint main(void) { pause(); return 0; }\n";
	struct vt_alloc_info info;
	const char *prog;

	if (!run_compiled("asan_linked", src, "-fsanitize=address", &info, &prog))
		return;
	CHECK_EQ_I64(info.kind, VT_ALLOC_UNKNOWN);
	CHECK_STR(info.sanitizer, "AddressSanitizer");
	CHECK(!info.is_static);
	CHECK(contains(info.evidence, "mapped: malloc is AddressSanitizer's"));
}

/* A runtime built into the executable (clang): its init function is defined there. */
static void test_detect__sanitizer_static(void)
{
	static const char src[] = "#include <unistd.h>\nvoid __tsan_init(void) {}\n"
				  "int main(void) { pause(); return 0; }\n";
	struct vt_alloc_info info;
	const char *prog;

	if (!run_compiled("tsan_static", src, "-O1 -rdynamic", &info, &prog))
		return;
	CHECK_EQ_I64(info.kind, VT_ALLOC_UNKNOWN);
	CHECK_STR(info.sanitizer, "ThreadSanitizer");
	CHECK(info.is_static);
	CHECK(contains(info.evidence, "defines __tsan_init: malloc is ThreadSanitizer's (linked in)"));
}

/* redis-style je_-prefixed jemalloc, visible only in .symtab: jemalloc, plain malloc libc's. */
static void test_detect__exe_prefixed_jemalloc(void)
{
	static const char src[] = "#include <stdlib.h>\n#include <unistd.h>\n"
				  "void *je_malloc(size_t n) { return malloc(n); }\n"
				  "int main(void) { free(je_malloc(8)); pause(); return 0; }\n";
	struct vt_alloc_info info;
	const char *prog;

	if (!run_compiled("je_prefixed", src, "-O1", &info, &prog))
		return;
	CHECK_EQ_I64(info.kind, VT_ALLOC_JEMALLOC);
	CHECK(info.is_static);
	CHECK(contains(info.evidence, "defines je_malloc: jemalloc linked in with prefix je_"));
}

/* A preloaded malloc wrapper we built: it wins over libc, and is not a known allocator. */
static void test_detect__unknown_preload_wins(void)
{
	static const char src[] = "#include <stddef.h>\n"
				  "extern void *__libc_malloc(size_t);\n"
				  "void *malloc(size_t n) { return __libc_malloc(n); }\n";
	struct vt_alloc_info info;
	const char *lib;
	pid_t pid;

	lib = compile("libwrap.so", src, "-shared -fPIC -O1");
	if (!lib) {
		printf("# skip: cannot build a shared library with cc\n");
		return;
	}
	pid = spawn_sleep(lib);
	CHECK(pid > 0);
	if (pid <= 0)
		return;
	CHECK_EQ_I64(detect_pid(NULL, pid, true, &info), VT_OK);
	CHECK_EQ_I64(info.kind, VT_ALLOC_UNKNOWN);
	CHECK_STR(info.path, lib);
	CHECK(contains(info.evidence, "defines malloc, not a known allocator (preempts glibc)"));
	reap(pid);
}

static const char static_src[] = "#include <stdlib.h>\n#include <unistd.h>\n"
				 "int main(void) { volatile char *p = malloc(100); p[0] = 1;"
				 " pause(); return 0; }\n";

static void run_static(const char *name, const char *flags, const char *expect)
{
	char *argv[2] = { NULL, NULL }, *envp[] = { NULL };
	struct vt_alloc_info info;
	const char *prog;
	pid_t pid;

	if (access(LIBC_A, R_OK) != 0) {
		printf("# skip: %s not installed\n", LIBC_A);
		return;
	}
	prog = compile(name, static_src, flags);
	if (!prog) {
		printf("# skip: cc %s failed\n", flags);
		return;
	}
	argv[0] = (char *)prog;
	pid = spawn(argv, envp);
	CHECK(pid > 0);
	if (pid <= 0)
		return;
	CHECK_EQ_I64(detect_pid(NULL, pid, true, &info), VT_OK);
	CHECK_EQ_I64(info.kind, VT_ALLOC_GLIBC);
	CHECK(info.is_static);
	CHECK_STR(info.path, prog);
	CHECK(contains(info.evidence, expect));
	reap(pid);
}

static void test_detect__glibc_static(void)
{
	run_static("static", "-static -O1", "defines malloc itself (glibc linked in: malloc_info)");
}

static void test_detect__glibc_static_stripped(void)
{
	run_static("static_stripped", "-static -s -O1", "glibc malloc's messages are in .rodata");
}

static void test_detect__static_without_libc(void)
{
#if defined(__x86_64__)
	static const char src[] = "void _start(void) { for (;;) __asm__ volatile("
				  "\"mov $34, %%eax; syscall\"\n"
				  "\t::: \"rax\", \"rcx\", \"r11\", \"memory\"); }\n";
	char *argv[2] = { NULL, NULL }, *envp[] = { NULL };
	struct vt_alloc_info info;
	const char *prog;
	pid_t pid;

	prog = compile("nolibc", src, "-static -nostdlib -s -Os");
	if (!prog) {
		printf("# skip: cannot build a program without libc\n");
		return;
	}
	argv[0] = (char *)prog;
	pid = spawn(argv, envp);
	CHECK(pid > 0);
	if (pid <= 0)
		return;
	CHECK_EQ_I64(detect_pid(NULL, pid, true, &info), VT_OK);
	CHECK_EQ_I64(info.kind, VT_ALLOC_UNKNOWN);
	CHECK(info.is_static);
	CHECK(contains(info.evidence, "unknown (static)"));
	reap(pid);
#else
	printf("# skip: x86_64 only\n");
#endif
}

/* The process exits between reading maps and detection: VT_E_GONE, not a guess. */
static void test_detect__process_gone(void)
{
	struct vt_buf maps = VT_BUF_INIT(16u << 20);
	struct vt_region_list regions = { 0 };
	struct vt_alloc_info info;
	struct vt_procfs pfs;
	struct vt_err err;
	pid_t pid = spawn_sleep(NULL);
	int fd = -1;

	CHECK(pid > 0);
	if (pid <= 0)
		return;
	CHECK_EQ_I64(vt_procfs_open(&pfs, NULL, NULL, &err), VT_OK);
	CHECK_EQ_I64(vt_pid_open(&pfs, pid, &fd, &err), VT_OK);
	CHECK_EQ_I64(vt_read_at(fd, "maps", &maps, &err), VT_OK);
	CHECK_EQ_I64(vt_maps_parse(maps.data, maps.len, &regions, &err), VT_OK);
	reap(pid);
	CHECK_EQ_I64(vt_alloc_detect(&pfs, fd, pid, &regions, NULL, 0, &info, &err), VT_E_GONE);
	CHECK_EQ_I64(info.kind, VT_ALLOC_UNKNOWN);
	if (fd >= 0)
		close(fd);
	vt_procfs_close(&pfs);
	vt_region_list_release(&regions);
	vt_buf_release(&maps);
}

/* ---- the remembered answer (alloc/detect_cache.c) ------------------------------ */

/* Detection of pid with environ block env (len bytes); *hit: the answer came from the cache. */
static bool detect_env(pid_t pid, const char *env, size_t env_len, struct vt_alloc_info *info, bool *hit)
{
	struct vt_buf maps = VT_BUF_INIT(64u << 20);
	struct vt_region_list regions = { 0 };
	unsigned before = vt_detect_cache_hits();
	struct vt_procfs pfs;
	struct vt_err err;
	int fd = -1, rc;
	bool opened;

	memset(info, 0, sizeof(*info));
	vt_err_clear(&err);
	rc = vt_procfs_open(&pfs, NULL, NULL, &err);
	opened = rc == VT_OK;
	if (!rc)
		rc = vt_pid_open(&pfs, pid, &fd, &err);
	if (!rc)
		rc = vt_read_at(fd, "maps", &maps, &err);
	if (!rc)
		rc = vt_maps_parse(maps.data, maps.len, &regions, &err);
	if (!rc)
		rc = vt_alloc_detect(&pfs, fd, pid, &regions, env, env_len, info, &err);
	if (fd >= 0)
		close(fd);
	if (opened)
		vt_procfs_close(&pfs);
	*hit = vt_detect_cache_hits() != before;
	printf("#   %s: %s\n", *hit ? "hit" : "miss", rc ? err.msg : info->evidence);
	vt_region_list_release(&regions);
	vt_buf_release(&maps);
	return rc == VT_OK;
}

/* Whether pid's case has a key at all (environ as given). */
static bool has_key(pid_t pid, const char *env, size_t env_len)
{
	struct vt_buf maps = VT_BUF_INIT(64u << 20);
	struct vt_region_list regions = { 0 };
	char path[64], *key = NULL;
	bool keyed = false;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0 && vt_read_at(fd, "maps", &maps, NULL) == VT_OK &&
	    vt_maps_parse(maps.data, maps.len, &regions, NULL) == VT_OK)
		keyed = vt_detect_cache_key(fd, &regions, env, env_len, &key);
	free(key);
	if (fd >= 0)
		close(fd);
	vt_region_list_release(&regions);
	vt_buf_release(&maps);
	return keyed;
}

static bool same_info(const struct vt_alloc_info *a, const struct vt_alloc_info *b)
{
	return a->kind == b->kind && !strcmp(a->version, b->version) && a->is_static == b->is_static &&
	       !strcmp(a->path, b->path) && !strcmp(a->evidence, b->evidence) &&
	       !strcmp(a->sanitizer, b->sanitizer) && !strcmp(a->prefix, b->prefix);
}

static bool file_text(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return false;
	n = fread(buf, 1, cap - 1, f);
	buf[n] = '\0';
	fclose(f);
	return true;
}

static bool put_text(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "w");
	bool ok;

	if (!f)
		return false;
	ok = fwrite(text, 1, len, f) == len;
	return fclose(f) == 0 && ok;
}

/*
 * The answer is remembered per executable, mapped files and LD_PRELOAD, and
 * used only for exactly those: a keyed file touched, grown or replaced, or
 * another LD_PRELOAD, runs the detection again (the same answer, stored
 * anew); so do garbage, a cut-short file, a symbolic link at the file's
 * place, and a directory others may write or own.
 */
static void test_detect__cache(void)
{
	static char text[1u << 17], good[1u << 17];
	char dir[] = "/tmp/vitals-detect-cache-XXXXXX", vdir[128], file[160], other[160];
	char lib[256], lib2[256], env_a[512], env_b[600];
	char *old;
	struct vt_alloc_info first, info;
	struct timespec times[2];
	struct stat st;
	size_t env_a_len, env_b_len;
	bool hit;
	pid_t pid;
	int fd;

	if (!scratch()[0] || access("/usr/lib/x86_64-linux-gnu/libm.so.6", R_OK) != 0) {
		printf("# skip: no scratch directory or libm\n");
		return;
	}
	/* a library of our own, preloaded: one that can be touched and grown */
	snprintf(lib, sizeof(lib), "%s/libcachetest.so", scratch());
	snprintf(lib2, sizeof(lib2), "%s/libcachetest.so.new", scratch());
	snprintf(text, sizeof(text), "cp /usr/lib/x86_64-linux-gnu/libm.so.6 '%s' && cp '%s' '%s'", lib, lib, lib2);
	CHECK(system(text) == 0);
	env_a_len = (size_t)snprintf(env_a, sizeof(env_a), "PATH=/bin%cLD_PRELOAD=%s", '\0', lib) + 1;
	env_b_len = (size_t)snprintf(env_b, sizeof(env_b), "PATH=/bin%cLD_PRELOAD=%s:", '\0', lib) + 1;
	CHECK(mkdtemp(dir) != NULL);
	snprintf(vdir, sizeof(vdir), "%s/vitals", dir);
	snprintf(file, sizeof(file), "%s/detect-v1", vdir);
	snprintf(other, sizeof(other), "%s/elsewhere", dir);
	old = vt_test_env_swap("XDG_CACHE_HOME", dir);
	pid = spawn_sleep(lib);
	CHECK(pid > 0);
	if (pid <= 0)
		goto out;

	/* first: detected, and remembered in a 0700 directory, a 0600 file */
	CHECK(detect_env(pid, env_a, env_a_len, &first, &hit) && !hit);
	CHECK_EQ_I64(first.kind, VT_ALLOC_GLIBC);
	CHECK(stat(vdir, &st) == 0 && (st.st_mode & 0777) == 0700);
	CHECK(lstat(file, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0600);
	/* second: from the cache, the same answer */
	CHECK(detect_env(pid, env_a, env_a_len, &info, &hit) && hit);
	CHECK(same_info(&info, &first));
	CHECK(file_text(file, good, sizeof(good)));

	/* another LD_PRELOAD (the same library, a colon more): detected again */
	CHECK(detect_env(pid, env_b, env_b_len, &info, &hit) && !hit);
	CHECK(same_info(&info, &first));
	/* environ unreadable: detected, and nothing remembered for it */
	CHECK(detect_env(pid, NULL, 0, &info, &hit) && !hit);
	CHECK(detect_env(pid, NULL, 0, &info, &hit) && !hit);

	/* the library's modification time, nanoseconds only: detected again */
	CHECK(stat(lib, &st) == 0);
	times[0] = st.st_atim;
	times[1] = st.st_mtim;
	times[1].tv_nsec = (times[1].tv_nsec + 1) % 1000000000;
	CHECK(utimensat(AT_FDCWD, lib, times, 0) == 0);
	CHECK(detect_env(pid, env_a, env_a_len, &info, &hit) && !hit);
	CHECK(same_info(&info, &first));
	CHECK(detect_env(pid, env_a, env_a_len, &info, &hit) && hit);
	/* its size (a byte past what is mapped), the times put back as they were */
	fd = open(lib, O_WRONLY | O_APPEND | O_CLOEXEC);
	CHECK(fd >= 0 && write(fd, "", 1) == 1);
	if (fd >= 0)
		close(fd);
	CHECK(utimensat(AT_FDCWD, lib, times, 0) == 0);
	CHECK(detect_env(pid, env_a, env_a_len, &info, &hit) && !hit);
	CHECK(same_info(&info, &first));
	CHECK(detect_env(pid, env_a, env_a_len, &info, &hit) && hit);
	/* replaced by another file (another inode) at its path: not the mapped file, no key */
	CHECK(has_key(pid, env_a, env_a_len));
	CHECK(rename(lib2, lib) == 0);
	CHECK(!has_key(pid, env_a, env_a_len));
	CHECK(detect_env(pid, env_a, env_a_len, &info, &hit) && !hit);
	CHECK(detect_env(pid, env_a, env_a_len, &info, &hit) && !hit);
	reap(pid);

	/* a fresh process of the same files: the remembered answer */
	pid = spawn_sleep(lib);
	CHECK(pid > 0);
	if (pid <= 0)
		goto out;
	CHECK(detect_env(pid, env_a, env_a_len, &first, &hit) && !hit);
	CHECK(detect_env(pid, env_a, env_a_len, &info, &hit) && hit);
	/* the file with this one entry only */
	CHECK(unlink(file) == 0);
	CHECK(detect_env(pid, env_a, env_a_len, &info, &hit) && !hit);
	CHECK(file_text(file, good, sizeof(good)) && strchr(good, '\n') == good + strlen(good) - 1);

	/* garbage: detected, and the file rewritten */
	CHECK(put_text(file, "not a cache\n\x01\x02\tV\t1\n", 19));
	CHECK(detect_env(pid, env_a, env_a_len, &info, &hit) && !hit);
	CHECK(same_info(&info, &first));
	CHECK(file_text(file, text, sizeof(text)) && !strcmp(text, good));
	/* cut short inside the answer: the same */
	CHECK(put_text(file, good, strlen(good) - 12));
	CHECK(detect_env(pid, env_a, env_a_len, &info, &hit) && !hit);
	CHECK(same_info(&info, &first));
	CHECK(file_text(file, text, sizeof(text)) && !strcmp(text, good));
	CHECK(detect_env(pid, env_a, env_a_len, &info, &hit) && hit);

	/* a symbolic link, even to a good file: not followed, and its target left alone */
	CHECK(put_text(other, good, strlen(good)));
	CHECK(unlink(file) == 0 && symlink(other, file) == 0);
	CHECK(detect_env(pid, env_a, env_a_len, &info, &hit) && !hit);
	CHECK(same_info(&info, &first));
	CHECK(file_text(other, text, sizeof(text)) && !strcmp(text, good));
	CHECK(lstat(file, &st) == 0 && S_ISREG(st.st_mode));

	/* a directory others may write, or another user's: neither read nor written */
	CHECK(chmod(vdir, 0777) == 0);
	CHECK(detect_env(pid, env_a, env_a_len, &info, &hit) && !hit);
	CHECK(chmod(vdir, 0700) == 0);
	if (geteuid() == 0) {
		CHECK(chown(vdir, 1, 1) == 0);
		CHECK(detect_env(pid, env_a, env_a_len, &info, &hit) && !hit);
		CHECK(chown(vdir, 0, 0) == 0);
	} else {
		printf("# skip: another user's directory (needs root to make one)\n");
	}
	CHECK(unlink(file) == 0);
	CHECK(chmod(vdir, 0777) == 0);
	CHECK(detect_env(pid, env_a, env_a_len, &info, &hit) && !hit);
	CHECK(lstat(file, &st) < 0 && errno == ENOENT);
	CHECK(same_info(&info, &first));
	reap(pid);
out:
	unlink(other);
	rmdir(vdir);
	rmdir(dir);
	vt_test_env_put_back("XDG_CACHE_HOME", old);
}

VT_TEST_MAIN(test_detect__banner_debian, test_detect__banner_variants, test_detect__banner_rejects,
	     test_detect__kind_names, test_detect__elfsym_fake_lib, test_detect__elfsym_gnu_hash_agrees, test_detect__elfsym_verdef_numeric,
	     test_detect__elfsym_static_exe, test_detect__elfsym_hostile,
	     test_detect__fixture_missing_files, test_detect__fixture_libc_unreadable,
	     test_detect__fixture_corrupt_files, test_detect__fixture_glibc_banner,
	     test_detect__fixture_glibc_symbol_versions, test_detect__fixture_environ_unreadable,
	     test_detect__fixture_preload_wins, test_detect__fixture_static_nolibc,
	     test_detect__glibc_dynamic, test_detect__jemalloc_preload,
	     test_detect__jemalloc_preload_symlink, test_detect__deleted_library,
	     test_detect__jemalloc_linked,
	     test_detect__unknown_preload_wins, test_detect__exe_defines_malloc,
	     test_detect__exe_prefixed_jemalloc, test_detect__sanitizer_linked,
	     test_detect__sanitizer_static, test_detect__glibc_static,
	     test_detect__glibc_static_stripped, test_detect__static_without_libc,
	     test_detect__process_gone, test_detect__cache)

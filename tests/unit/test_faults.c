/*
 * test_faults.c — OS-call fault injection for the proc and store layers, in
 * the spirit of SQLite's test_syscall.c: fail the Nth call, then the Nth and
 * every later one, for N = 1, 2, 3 ... until a run makes fewer than N calls.
 *
 * Our own calls are reached with the linker: this program is linked with
 * -Wl,--wrap=read,--wrap=openat,... (VT_FAULT_WRAP in the Makefile), so every
 * call that libvitals.a makes to those functions lands in __wrap_<name>
 * below.  SQLite's calls are reached through its own table: the "unix" VFS's
 * xSetSystemCall, as SQLite's tests do.  Faults are:
 *   an errno (EINTR, EACCES, ESRCH, ENOSPC, EIO, EMFILE, ENFILE, ENOMEM), once or from the
 *   Nth call on (not EINTR: a retry loop is right to spin on it);
 *   a short count from read, pread, write, pwrite, getdents64, readlinkat
 *   and process_vm_readv (at most 7 bytes, 256 for getdents64).
 * Each scenario runs the public readers against the live /proc of a child
 * (two threads, asleep) and against a recorded tree, and the store's create,
 * append, event, close and load.  Every run must end in VT_OK or in an error
 * code with a message (err.code matches, err.msg is not empty), leave no
 * file descriptor open, not hang (SIGALRM aborts), and, in the ASan build,
 * not touch memory it should not or leak.  Besides:
 *  - a single EINTR at read or pread is not seen at all (callers retry);
 *  - "no such process" or "exited" comes only from an injected ESRCH;
 *  - EMFILE, ENFILE and ENOMEM end in VT_OK or in their own code (NOFILE, NOMEM);
 *  - an existing recording survives a create without --force, whatever fails;
 *  - a good recording is called damaged only when SQLite says so.
 * VT_FAULTS_VERBOSE=1 prints every run's outcome.
 *
 * lane: long — started first among the unit tests (tests/run)
 */
#include "harness.h"

#include "base/clock.h"

#include "proc/cgroup.h"
#include "proc/environ.h"
#include "proc/mapped_file.h"
#include "proc/maps.h"
#include "proc/mem.h"
#include "proc/procfs.h"
#include "proc/stat.h"
#include "proc/status.h"
#include "proc/task.h"
#include "proc/thread_watch.h"
#include "proc/uptime.h"
#include "proc/access.h"
#include "sample/sample.h"
#include "sample/threads.h"
#include "store/store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- the fault plan ------------------------------------------------------ */

enum fault_mode { FAULT_ERRNO, FAULT_SHORT };

static struct {
	bool armed;
	enum fault_mode mode;
	int err;              /* FAULT_ERRNO: the errno delivered */
	bool persist;         /* fail the Nth eligible call and every one after it */
	long nth;
	long seen;            /* eligible calls since arming */
	long hits;            /* faults delivered */
	const char *first;    /* the call that took the first fault */
	const char *scenario; /* for the hang report */
} F;

/* Should this call fail (or come back short)?  Counts it when eligible. */
static bool fault_now(const char *call, bool can_short)
{
	if (!F.armed || (F.mode == FAULT_SHORT && !can_short))
		return false;
	F.seen++;
	if (F.seen == F.nth || (F.persist && F.seen > F.nth)) {
		if (!F.hits)
			F.first = call;
		F.hits++;
		return true;
	}
	return false;
}

static size_t short_count(size_t n, size_t most)
{
	return n > most ? most : n;
}

/* ---- our calls (--wrap) -------------------------------------------------- */

int __real_open(const char *path, int flags, ...);
int __real_openat(int dirfd, const char *path, int flags, ...);
ssize_t __real_read(int fd, void *buf, size_t n);
ssize_t __real_pread(int fd, void *buf, size_t n, off_t off);
ssize_t __real_getdents64(int fd, void *buf, size_t n);
ssize_t __real_readlinkat(int dirfd, const char *path, char *buf, size_t n);
int __real_fstatat(int dirfd, const char *path, struct stat *st, int flags);
int __real_fstat(int fd, struct stat *st);
int __real_stat(const char *path, struct stat *st);
off_t __real_lseek(int fd, off_t off, int whence);
int __real_access(const char *path, int mode);
DIR *__real_fdopendir(int fd);
struct dirent *__real_readdir(DIR *d);
ssize_t __real_process_vm_readv(pid_t pid, const struct iovec *l, unsigned long nl,
				const struct iovec *r, unsigned long nr, unsigned long flags);
int __real_unlink(const char *path);
int __real_getrlimit(int res, struct rlimit *rl);
int __real_setrlimit(int res, const struct rlimit *rl);

int __wrap_open(const char *path, int flags, ...);
int __wrap_openat(int dirfd, const char *path, int flags, ...);
ssize_t __wrap_read(int fd, void *buf, size_t n);
ssize_t __wrap_pread(int fd, void *buf, size_t n, off_t off);
ssize_t __wrap_getdents64(int fd, void *buf, size_t n);
ssize_t __wrap_readlinkat(int dirfd, const char *path, char *buf, size_t n);
int __wrap_fstatat(int dirfd, const char *path, struct stat *st, int flags);
int __wrap_fstat(int fd, struct stat *st);
int __wrap_stat(const char *path, struct stat *st);
off_t __wrap_lseek(int fd, off_t off, int whence);
int __wrap_access(const char *path, int mode);
DIR *__wrap_fdopendir(int fd);
struct dirent *__wrap_readdir(DIR *d);
ssize_t __wrap_process_vm_readv(pid_t pid, const struct iovec *l, unsigned long nl,
				const struct iovec *r, unsigned long nr, unsigned long flags);
int __wrap_unlink(const char *path);
int __wrap_getrlimit(int res, struct rlimit *rl);
int __wrap_setrlimit(int res, const struct rlimit *rl);

#define FAIL_ERRNO(ret)              \
	do {                         \
		errno = F.err;       \
		return ret;          \
	} while (0)

static mode_t open_mode(int flags, va_list ap)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
}

int __wrap_open(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = open_mode(flags, ap);
	va_end(ap);
	if (fault_now("open", false))
		FAIL_ERRNO(-1);
	return __real_open(path, flags, mode);
}

int __wrap_openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = open_mode(flags, ap);
	va_end(ap);
	if (fault_now("openat", false))
		FAIL_ERRNO(-1);
	return __real_openat(dirfd, path, flags, mode);
}

ssize_t __wrap_read(int fd, void *buf, size_t n)
{
	if (fault_now("read", true)) {
		if (F.mode == FAULT_SHORT)
			return __real_read(fd, buf, short_count(n, 7));
		FAIL_ERRNO(-1);
	}
	return __real_read(fd, buf, n);
}

ssize_t __wrap_pread(int fd, void *buf, size_t n, off_t off)
{
	if (fault_now("pread", true)) {
		if (F.mode == FAULT_SHORT)
			return __real_pread(fd, buf, short_count(n, 7), off);
		FAIL_ERRNO(-1);
	}
	return __real_pread(fd, buf, n, off);
}

ssize_t __wrap_getdents64(int fd, void *buf, size_t n)
{
	if (fault_now("getdents64", true)) {
		if (F.mode == FAULT_SHORT)
			return __real_getdents64(fd, buf, short_count(n, 256));
		FAIL_ERRNO(-1);
	}
	return __real_getdents64(fd, buf, n);
}

ssize_t __wrap_readlinkat(int dirfd, const char *path, char *buf, size_t n)
{
	if (fault_now("readlinkat", true)) {
		if (F.mode == FAULT_SHORT)
			return __real_readlinkat(dirfd, path, buf, short_count(n, 7));
		FAIL_ERRNO(-1);
	}
	return __real_readlinkat(dirfd, path, buf, n);
}

int __wrap_fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	if (fault_now("fstatat", false))
		FAIL_ERRNO(-1);
	return __real_fstatat(dirfd, path, st, flags);
}

int __wrap_fstat(int fd, struct stat *st)
{
	if (fault_now("fstat", false))
		FAIL_ERRNO(-1);
	return __real_fstat(fd, st);
}

int __wrap_stat(const char *path, struct stat *st)
{
	if (fault_now("stat", false))
		FAIL_ERRNO(-1);
	return __real_stat(path, st);
}

off_t __wrap_lseek(int fd, off_t off, int whence)
{
	if (fault_now("lseek", false))
		FAIL_ERRNO(-1);
	return __real_lseek(fd, off, whence);
}

int __wrap_access(const char *path, int mode)
{
	if (fault_now("access", false))
		FAIL_ERRNO(-1);
	return __real_access(path, mode);
}

DIR *__wrap_fdopendir(int fd)
{
	if (fault_now("fdopendir", false))
		FAIL_ERRNO(NULL);
	return __real_fdopendir(fd);
}

struct dirent *__wrap_readdir(DIR *d)
{
	if (fault_now("readdir", false))
		FAIL_ERRNO(NULL);
	return __real_readdir(d);
}

ssize_t __wrap_process_vm_readv(pid_t pid, const struct iovec *l, unsigned long nl,
				const struct iovec *r, unsigned long nr, unsigned long flags)
{
	if (fault_now("process_vm_readv", true)) {
		struct iovec sl, sr;

		if (F.mode != FAULT_SHORT)
			FAIL_ERRNO(-1);
		if (nl < 1 || nr < 1)
			return __real_process_vm_readv(pid, l, nl, r, nr, flags);
		sl = l[0];
		sr = r[0];
		sl.iov_len = sr.iov_len = short_count(sl.iov_len < sr.iov_len ? sl.iov_len : sr.iov_len, 7);
		return __real_process_vm_readv(pid, &sl, 1, &sr, 1, flags);
	}
	return __real_process_vm_readv(pid, l, nl, r, nr, flags);
}

int __wrap_unlink(const char *path)
{
	if (fault_now("unlink", false))
		FAIL_ERRNO(-1);
	return __real_unlink(path);
}

int __wrap_getrlimit(int res, struct rlimit *rl)
{
	if (fault_now("getrlimit", false))
		FAIL_ERRNO(-1);
	return __real_getrlimit(res, rl);
}

int __wrap_setrlimit(int res, const struct rlimit *rl)
{
	if (fault_now("setrlimit", false))
		FAIL_ERRNO(-1);
	return __real_setrlimit(res, rl);
}

/* ---- SQLite's calls (the unix VFS's system call table) ------------------- */

typedef int (*open_fn)(const char *, int, int);
typedef int (*path_fn)(const char *);
typedef int (*access_fn)(const char *, int);
typedef int (*pstat_fn)(const char *, struct stat *);
typedef int (*fstat_fn)(int, struct stat *);
typedef int (*trunc_fn)(int, off_t);
typedef int (*fcntl_fn)(int, int, ...);
typedef ssize_t (*read_fn)(int, void *, size_t);
typedef ssize_t (*pread_fn)(int, void *, size_t, off_t);
typedef ssize_t (*write_fn)(int, const void *, size_t);
typedef ssize_t (*pwrite_fn)(int, const void *, size_t, off_t);
typedef int (*fchmod_fn)(int, mode_t);
typedef int (*falloc_fn)(int, off_t, off_t);
typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);
typedef ssize_t (*readlink_fn)(const char *, char *, size_t);

static struct {
	open_fn open;
	path_fn unlink;
	access_fn access;
	pstat_fn stat, lstat;
	fstat_fn fstat;
	trunc_fn ftruncate;
	fcntl_fn fcntl;
	read_fn read;
	pread_fn pread, pread64;
	write_fn write;
	pwrite_fn pwrite, pwrite64;
	fchmod_fn fchmod;
	falloc_fn fallocate;
	mmap_fn mmap;
	readlink_fn readlink;
} SQ;

static int sq_open(const char *p, int f, int m)
{
	if (fault_now("sqlite:open", false))
		FAIL_ERRNO(-1);
	return SQ.open(p, f, m);
}

static int sq_unlink(const char *p)
{
	if (fault_now("sqlite:unlink", false))
		FAIL_ERRNO(-1);
	return SQ.unlink(p);
}

static int sq_access(const char *p, int m)
{
	if (fault_now("sqlite:access", false))
		FAIL_ERRNO(-1);
	return SQ.access(p, m);
}

static int sq_stat(const char *p, struct stat *st)
{
	if (fault_now("sqlite:stat", false))
		FAIL_ERRNO(-1);
	return SQ.stat(p, st);
}

static int sq_lstat(const char *p, struct stat *st)
{
	if (fault_now("sqlite:lstat", false))
		FAIL_ERRNO(-1);
	return SQ.lstat(p, st);
}

static int sq_fstat(int fd, struct stat *st)
{
	if (fault_now("sqlite:fstat", false))
		FAIL_ERRNO(-1);
	return SQ.fstat(fd, st);
}

static int sq_ftruncate(int fd, off_t n)
{
	if (fault_now("sqlite:ftruncate", false))
		FAIL_ERRNO(-1);
	return SQ.ftruncate(fd, n);
}

/* As SQLite's test_syscall.c does: the third argument is an int or a pointer. */
static int sq_fcntl(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fault_now("sqlite:fcntl", false))
		FAIL_ERRNO(-1);
	return SQ.fcntl(fd, cmd, arg);
}

static ssize_t sq_read(int fd, void *b, size_t n)
{
	if (fault_now("sqlite:read", true)) {
		if (F.mode == FAULT_SHORT)
			return SQ.read(fd, b, short_count(n, 7));
		FAIL_ERRNO(-1);
	}
	return SQ.read(fd, b, n);
}

static ssize_t sq_pread_any(pread_fn real, const char *name, int fd, void *b, size_t n, off_t off)
{
	if (fault_now(name, true)) {
		if (F.mode == FAULT_SHORT)
			return real(fd, b, short_count(n, 7), off);
		FAIL_ERRNO(-1);
	}
	return real(fd, b, n, off);
}

static ssize_t sq_pread(int fd, void *b, size_t n, off_t off)
{
	return sq_pread_any(SQ.pread, "sqlite:pread", fd, b, n, off);
}

static ssize_t sq_pread64(int fd, void *b, size_t n, off_t off)
{
	return sq_pread_any(SQ.pread64, "sqlite:pread64", fd, b, n, off);
}

static ssize_t sq_write(int fd, const void *b, size_t n)
{
	if (fault_now("sqlite:write", true)) {
		if (F.mode == FAULT_SHORT)
			return SQ.write(fd, b, short_count(n, 7));
		FAIL_ERRNO(-1);
	}
	return SQ.write(fd, b, n);
}

static ssize_t sq_pwrite_any(pwrite_fn real, const char *name, int fd, const void *b, size_t n,
			     off_t off)
{
	if (fault_now(name, true)) {
		if (F.mode == FAULT_SHORT)
			return real(fd, b, short_count(n, 7), off);
		FAIL_ERRNO(-1);
	}
	return real(fd, b, n, off);
}

static ssize_t sq_pwrite(int fd, const void *b, size_t n, off_t off)
{
	return sq_pwrite_any(SQ.pwrite, "sqlite:pwrite", fd, b, n, off);
}

static ssize_t sq_pwrite64(int fd, const void *b, size_t n, off_t off)
{
	return sq_pwrite_any(SQ.pwrite64, "sqlite:pwrite64", fd, b, n, off);
}

static int sq_fchmod(int fd, mode_t m)
{
	if (fault_now("sqlite:fchmod", false))
		FAIL_ERRNO(-1);
	return SQ.fchmod(fd, m);
}

/* posix_fallocate returns the error instead of setting errno. */
static int sq_fallocate(int fd, off_t off, off_t len)
{
	if (fault_now("sqlite:fallocate", false))
		return F.err;
	return SQ.fallocate(fd, off, len);
}

static void *sq_mmap(void *a, size_t n, int prot, int flags, int fd, off_t off)
{
	if (fault_now("sqlite:mmap", false))
		FAIL_ERRNO(MAP_FAILED);
	return SQ.mmap(a, n, prot, flags, fd, off);
}

static ssize_t sq_readlink(const char *p, char *b, size_t n)
{
	if (fault_now("sqlite:readlink", false))
		FAIL_ERRNO(-1);
	return SQ.readlink(p, b, n);
}

static sqlite3_vfs nosleep_vfs;

static int no_sleep(sqlite3_vfs *vfs, int us)
{
	(void)vfs;
	return us;
}

/* Put our wrappers in the unix VFS's table, for the calls this SQLite has. */
static void sqlite_faults_install(void)
{
	static const struct {
		const char *name;
		void *wrapper;
		void **real;
	} calls[] = {
#define CALL(n, field, w) { n, (void *)w, (void **)&SQ.field }
		CALL("open", open, sq_open), CALL("unlink", unlink, sq_unlink),
		CALL("access", access, sq_access), CALL("stat", stat, sq_stat),
		CALL("lstat", lstat, sq_lstat), CALL("fstat", fstat, sq_fstat),
		CALL("ftruncate", ftruncate, sq_ftruncate), CALL("fcntl", fcntl, sq_fcntl),
		CALL("read", read, sq_read), CALL("pread", pread, sq_pread),
		CALL("pread64", pread64, sq_pread64), CALL("write", write, sq_write),
		CALL("pwrite", pwrite, sq_pwrite), CALL("pwrite64", pwrite64, sq_pwrite64),
		CALL("fchmod", fchmod, sq_fchmod), CALL("fallocate", fallocate, sq_fallocate),
		CALL("mmap", mmap, sq_mmap), CALL("readlink", readlink, sq_readlink),
#undef CALL
	};
	sqlite3_vfs *vfs;
	size_t i;
	int n = 0;

	sqlite3_initialize();
	vfs = sqlite3_vfs_find("unix");
	if (!vfs || vfs->iVersion < 3 || !vfs->xSetSystemCall) {
		printf("# this SQLite cannot replace its system calls: store faults reach only vitals' own calls\n");
		return;
	}
	for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		sqlite3_syscall_ptr real = vfs->xGetSystemCall(vfs, calls[i].name);

		if (!real)
			continue;
		*calls[i].real = (void *)real;
		if (vfs->xSetSystemCall(vfs, calls[i].name, (sqlite3_syscall_ptr)calls[i].wrapper) ==
		    SQLITE_OK)
			n++;
	}
	printf("# %d SQLite system calls under fault injection\n", n);
	/*
	 * The same VFS without its sleeps, as the default: a failed lock or
	 * WAL-index read is retried about 100 times with growing sleeps (over
	 * a second a run); under a persistent fault that is every run.
	 */
	nosleep_vfs = *vfs;
	nosleep_vfs.zName = "unix-nosleep";
	nosleep_vfs.xSleep = no_sleep;
	if (sqlite3_vfs_register(&nosleep_vfs, 1) != SQLITE_OK)
		printf("# cannot register the sleepless VFS: the store sweeps will be slow\n");
}

/* ---- running a scenario under every fault --------------------------------- */

struct ctx {
	struct vt_procfs pfs;
	pid_t pid;                /* the process read */
	pid_t plain_pid;          /* live: a plain program (sleep), not a fork of this one */
	const char *store_dir;
	const char *good_db;      /* a complete recording, for the load scenario */
	unsigned serial;          /* makes every store path new */
};

typedef int (*scenario_fn)(struct ctx *c, struct vt_err *err);

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	while (d && (de = readdir(d)) != NULL)
		n += de->d_name[0] != '.';
	if (d)
		closedir(d);
	return n - 1;   /* the directory's own */
}

static void on_alarm(int sig)
{
	char line[256];
	int k;

	(void)sig;
	k = snprintf(line, sizeof(line), "Bail out! %s hung: fault at call %ld (%s, mode %d, errno %d%s)\n",
		     F.scenario ? F.scenario : "?", F.nth, F.first ? F.first : "?", (int)F.mode, F.err,
		     F.persist ? ", persistent" : "");
	if (k > 0 && write(STDOUT_FILENO, line, (size_t)k) < 0)
		_exit(3);
	abort();
}

struct fault_kind {
	enum fault_mode mode;
	int err;
	bool persist;
	const char *label;
	bool under_asan;   /* swept in the ASan build too */
};

/*
 * The ASan build sweeps one kind for each way a run can go (retried,
 * refused from then on, gone, full once, failed once and for good, out of
 * descriptors, out of memory, short): the memory errors a sanitizer finds
 * are in those paths; which code each errno gives is judged on the plain
 * build, which sweeps every kind.  (The store sweeps are most of this
 * program's time: every kind is about 2 s of SQLite work per scenario.)
 */
static const struct fault_kind kinds[] = {
	{ FAULT_ERRNO, EINTR, false, "EINTR", true },
	{ FAULT_ERRNO, EACCES, false, "EACCES", false },
	{ FAULT_ERRNO, EACCES, true, "EACCES from then on", true },
	{ FAULT_ERRNO, ESRCH, false, "ESRCH", false },
	{ FAULT_ERRNO, ESRCH, true, "ESRCH from then on", true },
	{ FAULT_ERRNO, ENOSPC, false, "ENOSPC", true },
	{ FAULT_ERRNO, ENOSPC, true, "ENOSPC from then on", false },
	{ FAULT_ERRNO, EIO, false, "EIO", true },
	{ FAULT_ERRNO, EIO, true, "EIO from then on", true },
	{ FAULT_ERRNO, EMFILE, false, "EMFILE", true },
	{ FAULT_ERRNO, EMFILE, true, "EMFILE from then on", false },
	{ FAULT_ERRNO, ENFILE, true, "ENFILE from then on", false },
	{ FAULT_ERRNO, ENOMEM, false, "ENOMEM", false },
	{ FAULT_ERRNO, ENOMEM, true, "ENOMEM from then on", true },
	{ FAULT_SHORT, 0, false, "short", true },
	{ FAULT_SHORT, 0, true, "short from then on", true },
};

#ifdef __SANITIZE_ADDRESS__
static const bool built_with_asan = true;
#else
static const bool built_with_asan = false;
#endif

#define MAX_CALLS 20000

/* The calls that can see EINTR and that every caller retries. */
static bool is_read(const char *call)
{
	static const char *const reads[] = { "read", "pread", "sqlite:read", "sqlite:pread",
					     "sqlite:pread64", "sqlite:write", "sqlite:pwrite",
					     "sqlite:pwrite64" };
	size_t i;

	for (i = 0; i < sizeof(reads) / sizeof(reads[0]); i++)
		if (strcmp(call, reads[i]) == 0)
			return true;
	return false;
}

/* A run under a fault must end in VT_OK or an error code with its message. */
static bool outcome_ok(int rc, const struct vt_err *err)
{
	if (rc == VT_OK)
		return true;
	return rc > 0 && rc < VT_E__COUNT && err->code == rc && err->msg[0] != '\0';
}

/*
 * Run fn once clean (it must succeed), then under every fault kind at call
 * 1, 2, 3 ... until a run makes fewer eligible calls than N.
 */
static void sweep(struct ctx *c, const char *name, scenario_fn fn, bool may_be_absent)
{
	unsigned long runs = 0, faults = 0, by_code[VT_E__COUNT] = { 0 };
	bool verbose = getenv("VT_FAULTS_VERBOSE") != NULL;
	uint64_t t0;
	struct vt_err err;
	size_t k;
	int rc, fds;
	long n, calls;

	F.scenario = name;
	vt_err_clear(&err);
	fds = open_fds();
	t0 = vt_mono_ns();
	F = (typeof(F)){ .scenario = name, .armed = true, .nth = 0 };
	rc = fn(c, &err);
	calls = F.seen;
	F.armed = false;
	if (rc == VT_E_NOTFOUND && may_be_absent) {
		printf("#   %-28s not in this tree: %s\n", name, err.msg);
		return;
	}
	if (rc != VT_OK) {
		printf("#   %s: fails without faults: %s\n", name, err.msg);
		CHECK(!"scenario runs clean");
		return;
	}
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		if (built_with_asan && !kinds[k].under_asan)
			continue;
		/*
		 * A persistent fault past the calls of a clean run only meets the
		 * calls the fault itself caused (short reads read again and again).
		 */
		for (n = 1; n <= (kinds[k].persist ? calls : MAX_CALLS); n++) {
			vt_err_clear(&err);
			F = (typeof(F)){ .scenario = name, .mode = kinds[k].mode, .err = kinds[k].err,
					 .persist = kinds[k].persist, .nth = n };
			alarm(30);
			F.armed = true;
			rc = fn(c, &err);
			F.armed = false;
			alarm(0);
			runs++;
			if (!F.hits)
				break;           /* fewer than n calls: this kind is done */
			faults += (unsigned long)F.hits;
			by_code[rc >= 0 && rc < VT_E__COUNT ? rc : 0]++;
			if (verbose)
				printf("#     %s at %ld (%s): %s %s\n", kinds[k].label, n, F.first,
				       vt_code_name(rc), err.msg);
			if (!outcome_ok(rc, &err)) {
				printf("#   %s: %s at call %ld (%s): rc %d, err.code %d, msg '%s'\n", name,
				       kinds[k].label, n, F.first, rc, err.code, err.msg);
				CHECK(!"VT_OK or an error with its message");
			}
			/*
			 * "No such process" or "exited" only from ESRCH: another
			 * failure must not pass for the process going away.
			 */
			if ((rc == VT_E_GONE || rc == VT_E_NOPROC) && kinds[k].err != ESRCH) {
				printf("#   %s: %s at call %ld (%s) reads as %s: %s\n", name, kinds[k].label,
				       n, F.first, vt_code_name(rc), err.msg);
				CHECK(!"only ESRCH says the process is gone");
			}
			/*
			 * Out of descriptors or memory is said as such: not "permission
			 * denied", "no thread left" or "glibc too old" (issue 23).
			 * SQLite's own calls are left out (a gap): its unix VFS reports
			 * an errno of open, pwrite or fcntl as its own I/O, locking or
			 * "cannot open" error, and keeps the errno for some paths only.
			 */
			if (kinds[k].mode == FAULT_ERRNO && vt_code_resource(kinds[k].err) && rc != VT_OK &&
			    rc != vt_code_resource(kinds[k].err) && strncmp(F.first, "sqlite:", 7) != 0) {
				printf("#   %s: %s at call %ld (%s) reads as %s: %s\n", name, kinds[k].label,
				       n, F.first, vt_code_name(rc), err.msg);
				CHECK(!"a shortage of descriptors or memory is named as one");
			}
			/* One EINTR from read or pread is retried, never seen. */
			if (kinds[k].mode == FAULT_ERRNO && kinds[k].err == EINTR && !kinds[k].persist &&
			    rc != VT_OK && F.first && is_read(F.first)) {
				printf("#   %s: EINTR at call %ld (%s) was not retried: %s\n", name, n,
				       F.first, err.msg);
				CHECK(!"EINTR at a read is retried");
			}
			if (open_fds() != fds) {
				printf("#   %s: %s at call %ld (%s): %d fds open, %d before (rc %d)\n", name,
				       kinds[k].label, n, F.first, open_fds(), fds, rc);
				CHECK(!"no fd leaked");
				fds = open_fds();
			}
		}
		CHECK(n <= MAX_CALLS);
	}
	printf("#   %-28s %4ld calls clean, %5lu runs, %6lu faults, %5.1f s; ended in", name, calls,
	       runs, faults, (double)(vt_mono_ns() - t0) / 1e9);
	for (k = 0; k < VT_E__COUNT; k++)
		if (by_code[k])
			printf(" %s %lu", vt_code_name((int)k), by_code[k]);
	printf("\n");
	F.scenario = NULL;
}

/* ---- proc scenarios ------------------------------------------------------- */

static int with_pid(struct ctx *c, const char *file, int (*parse)(const char *, size_t, struct vt_err *),
		    struct vt_err *err)
{
	struct vt_buf buf = VT_BUF_INIT(VT_PROC_FILE_MAX);
	int fd, rc;

	rc = vt_pid_open(&c->pfs, c->pid, &fd, err);
	if (rc)
		return rc;
	rc = vt_read_at(fd, file, &buf, err);
	if (!rc && parse)
		rc = parse(buf.data, buf.len, err);
	vt_buf_release(&buf);
	close(fd);
	return rc;
}

static int parse_stat(const char *b, size_t n, struct vt_err *err)
{
	struct vt_proc_stat st;

	return vt_proc_stat_parse(b, n, &st, err);
}

static int parse_status(const char *b, size_t n, struct vt_err *err)
{
	struct vt_proc_status st;

	return vt_proc_status_parse(b, n, &st, err);
}

static int parse_maps(const char *b, size_t n, struct vt_err *err)
{
	struct vt_region_list list = { 0 };
	int rc = vt_maps_parse(b, n, &list, err);

	vt_region_list_release(&list);
	return rc;
}

static int parse_environ(const char *b, size_t n, struct vt_err *err)
{
	const char *v;
	size_t len;

	(void)err;
	vt_environ_get(b, n, "PATH", &v, &len);
	return VT_OK;
}

static int sc_stat(struct ctx *c, struct vt_err *err)
{
	return with_pid(c, "stat", parse_stat, err);
}

static int sc_status(struct ctx *c, struct vt_err *err)
{
	return with_pid(c, "status", parse_status, err);
}

static int sc_maps(struct ctx *c, struct vt_err *err)
{
	return with_pid(c, "maps", parse_maps, err);
}

static int sc_smaps_rollup(struct ctx *c, struct vt_err *err)
{
	return with_pid(c, "smaps_rollup", NULL, err);
}

static int sc_environ(struct ctx *c, struct vt_err *err)
{
	return with_pid(c, "environ", parse_environ, err);
}

static int sc_cgroup(struct ctx *c, struct vt_err *err)
{
	struct vt_cgroup_mem mem;
	struct vt_cgroup_cpu cpu;
	int fd, rc;

	rc = vt_pid_open(&c->pfs, c->pid, &fd, err);
	if (rc)
		return rc;
	rc = vt_cgroup_read(&c->pfs, fd, &mem, err);
	if (!rc)
		rc = vt_cgroup_cpu_read(&c->pfs, fd, &cpu, err);
	close(fd);
	return rc;
}

static int sc_tasks(struct ctx *c, struct vt_err *err)
{
	pid_t *tids = NULL;
	size_t n = 0;
	int fd, rc;

	rc = vt_pid_open(&c->pfs, c->pid, &fd, err);
	if (rc)
		return rc;
	rc = vt_task_list(fd, &tids, &n, err);
	free(tids);
	close(fd);
	return rc;
}

static int sc_thread_watch(struct ctx *c, struct vt_err *err)
{
	struct vt_thread_watch *w = NULL;
	struct vt_threads_sample s;
	int fd, rc;

	rc = vt_pid_open(&c->pfs, c->pid, &fd, err);
	if (rc)
		return rc;
	rc = vt_thread_watch_open(&c->pfs, fd, c->pid, &w, err);
	if (!rc)
		rc = vt_thread_watch_read(w, VT_TW_CSW | VT_TW_WCHAN | VT_TW_SYSCALL, err);
	if (!rc) {
		memset(&s, 0, sizeof(s));
		rc = vt_threads_sample_take(w, VT_TW_CSW | VT_TW_WCHAN | VT_TW_SYSCALL, &s, err);
		vt_threads_sample_release(&s);
	}
	vt_thread_watch_close(w);
	close(fd);
	return rc;
}

static int sc_exe(struct ctx *c, struct vt_err *err)
{
	struct vt_buf buf = VT_BUF_INIT(VT_PROC_FILE_MAX);
	struct vt_region_list list = { 0 };
	char exe[4096], why[256];
	int fd, efd = -1, rc;

	rc = vt_pid_open(&c->pfs, c->pid, &fd, err);
	if (rc)
		return rc;
	rc = vt_read_at(fd, "maps", &buf, err);
	if (!rc)
		rc = vt_maps_parse(buf.data, buf.len, &list, err);
	if (!rc)
		rc = vt_mapped_exe_open(&c->pfs, fd, c->pid, &list, exe, sizeof(exe), &efd, why,
					sizeof(why), err);
	if (efd >= 0)
		close(efd);
	vt_region_list_release(&list);
	vt_buf_release(&buf);
	close(fd);
	return rc;
}

static uint64_t child_word = 0x5eed5eed5eed5eedull;

static int sc_mem(struct ctx *c, struct vt_err *err)
{
	uint64_t v = 0;
	int rc;

	/* The child is a fork of this program: the word is at the same address. */
	rc = vt_mem_read(c->pid, (uint64_t)(uintptr_t)&child_word, &v, sizeof(v), err);
	if (!rc && v != child_word)
		return vt_err_set(err, VT_E_IO, 0, "read %#llx", (unsigned long long)v);
	return rc;
}

static int sc_misc(struct ctx *c, struct vt_err *err)
{
	struct vt_buf buf = VT_BUF_INIT(1u << 20);
	char reason[256], hint[256];
	int fd, rc;

	(void)vt_uptime_read(&c->pfs, &buf);
	vt_buf_release(&buf);
	rc = vt_pid_open(&c->pfs, c->pid, &fd, err);
	if (rc)
		return rc;
	vt_access_explain(&c->pfs, "smaps", 0, fd, reason, sizeof(reason), hint, sizeof(hint));
	close(fd);
	return VT_OK;
}

/*
 * Live, a plain program: a fork of this one, in the ASan build, maps so
 * much that a sweep of a whole sample takes minutes.
 */
static int sc_sample(struct ctx *c, struct vt_err *err)
{
	struct vt_sample_opts opts = { 0 };
	struct vt_sample s;
	int rc;

	memset(&s, 0, sizeof(s));
	rc = vt_sample_take(&c->pfs, c->plain_pid > 0 ? c->plain_pid : c->pid, &opts, &s, err);
	if (!rc)
		vt_sample_release(&s);
	return rc;
}

/* ---- store scenarios -------------------------------------------------------- */

static void store_path(struct ctx *c, char *path, size_t cap)
{
	snprintf(path, cap, "%s/r%u.db", c->store_dir, c->serial++);
}

static void store_remove(const char *path)
{
	char side[600];
	bool armed = F.armed;

	F.armed = false;
	unlink(path);
	snprintf(side, sizeof(side), "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", path);
	unlink(side);
	F.armed = armed;
}

/* What a soak does: create, a few samples with threads, an event, close. */
static int store_write(const char *path, bool overwrite, struct vt_err *err)
{
	struct vt_recording_info info = { 0 };
	struct vt_store_thread th[2] = {
		{ .tid = 100, .name = "main", .counter = { 1000, 10, 1, 2 } },
		{ .tid = 101, .name = "worker-0", .counter = { 2000, 20, 3, 4 } },
	};
	struct vt_event ev = { .t = 1, .wall = 1.7e9 + 1, .kind = 0, .pid = 100 };
	struct vt_store *st = NULL;
	struct vt_err cerr;
	int i, m, rc, crc;

	snprintf(info.target, sizeof(info.target), "pid 100");
	info.every_s = 1;
	info.ncpus = 2;
	info.started_wall = 1.7e9;
	rc = vt_store_create(path, &info, overwrite, &st, err);
	if (rc)
		return rc;
	snprintf(ev.detail, sizeof(ev.detail), "restarted");
	for (i = 0; i < 3 && !rc; i++) {
		struct vt_store_sample s = { .t = i, .wall = 1.7e9 + i, .pid = 100, .read_ms = 0.5 };

		for (m = 0; m < VT_M_COUNT; m++)
			s.v[m] = NAN;
		s.v[VT_M_COMMITTED] = 1e6 * (i + 1);
		th[0].counter[VT_TC_CPU_NS] += 1000;
		rc = vt_store_append(st, &s, th, 2, err);
		if (!rc && i == 1)
			rc = vt_store_event(st, &ev, err);
	}
	crc = vt_store_close(st, &cerr);
	if (!rc && crc) {
		*err = cerr;
		rc = crc;
	}
	return rc;
}

static int sc_store_write(struct ctx *c, struct vt_err *err)
{
	char path[512];
	int rc;

	store_path(c, path, sizeof(path));
	rc = store_write(path, false, err);
	store_remove(path);
	return rc;
}

/*
 * An existing recording at path, unarmed: a copy of the good one (writing
 * it anew each run was half of the store sweeps' time).
 */
static int store_existing(struct ctx *c, const char *path, struct vt_err *err)
{
	bool armed = F.armed;
	char buf[16384];
	ssize_t n = 0;
	int in, out, rc = VT_OK;

	F.armed = false;
	in = open(c->good_db, O_RDONLY | O_CLOEXEC);
	out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n) {
			n = -1;
			break;
		}
	if (in < 0 || out < 0 || n < 0)
		rc = vt_err_set(err, VT_E_IO, errno, "cannot copy %s to %s", c->good_db, path);
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	F.armed = armed;
	return rc;
}

/* Overwriting an existing recording goes through store.c's own stat/unlink. */
static int sc_store_overwrite(struct ctx *c, struct vt_err *err)
{
	char path[512];
	int rc;

	store_path(c, path, sizeof(path));
	rc = store_existing(c, path, err);
	if (!rc)
		rc = store_write(path, true, err);
	store_remove(path);
	return rc;
}

/*
 * An existing recording and no --force: whatever fails, it is refused and
 * the file is left as it was.  VT_OK when it was (refused, or another error
 * with its message); a code past the table when it is gone or damaged.
 */
static int sc_store_no_clobber(struct ctx *c, struct vt_err *err)
{
	struct vt_recording_info info = { 0 };
	struct vt_store *st = NULL;
	struct vt_series s;
	struct vt_err lerr;
	char path[512];
	bool armed = F.armed;
	int rc, lrc;

	store_path(c, path, sizeof(path));
	rc = store_existing(c, path, err);
	if (rc)
		return rc;
	rc = vt_store_create(path, &info, false, &st, err);
	if (rc == VT_OK)
		vt_store_close(st, NULL);
	F.armed = false;
	vt_series_init(&s);
	lrc = vt_store_load(path, 0, &s, &lerr);
	if (lrc == VT_OK && s.n != 3)
		lrc = VT_E_RECORDING;
	vt_series_free(&s);
	store_remove(path);
	F.armed = armed;
	if (lrc != VT_OK) {
		char said[VT_ERR_MSG_MAX];

		snprintf(said, sizeof(said), "%s", err->msg);
		vt_err_set(err, VT_E__COUNT + 1, 0, "the existing recording was lost: %s (create said %s: %s)",
			   lerr.msg, vt_code_name(rc), said);
		return VT_E__COUNT + 1;
	}
	if (rc == VT_OK) {
		vt_err_set(err, VT_E__COUNT + 1, 0, "an existing recording was opened for writing");
		return VT_E__COUNT + 1;
	}
	return rc == VT_E_USAGE ? VT_OK : rc;
}

static int sc_store_load(struct ctx *c, struct vt_err *err)
{
	struct vt_series s;
	int rc;

	vt_series_init(&s);
	rc = vt_store_load(c->good_db, 0, &s, err);
	vt_series_free(&s);
	/*
	 * A good recording is "not a recording" only when SQLite itself took
	 * the failure for a damaged file (it reads some I/O errors so).
	 */
	if (rc == VT_E_RECORDING && !strstr(err->msg, "is damaged")) {
		char said[VT_ERR_MSG_MAX];

		snprintf(said, sizeof(said), "%s", err->msg);
		vt_err_set(err, VT_E__COUNT + 1, 0, "a failed read called a good recording bad: %s", said);
		return VT_E__COUNT + 1;
	}
	return rc;
}

/* ---- the child and the trees ------------------------------------------------- */

static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static pid_t child_start(void)
{
	int go[2];
	char c = 0;
	pid_t pid;

	if (pipe(go) < 0)
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		pthread_t t;

		close(go[0]);
		pthread_create(&t, NULL, sleeper, NULL);
		pthread_create(&t, NULL, sleeper, NULL);
		if (write(go[1], &c, 1) != 1)
			_exit(2);
		for (;;)
			pause();
	}
	close(go[1]);
	if (pid > 0 && read(go[0], &c, 1) != 1)
		pid = -1;
	close(go[0]);
	return pid;
}

/* sleep(1), exec'd: a target that is plain glibc whatever this build is. */
static pid_t plain_start(void)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		execlp("sleep", "sleep", "1000", (char *)NULL);
		_exit(127);
	}
	/* until it has exec'd: its exe is no longer ours */
	for (int i = 0; pid > 0 && i < 500; i++) {
		char link[64], exe[4096], self[4096];
		ssize_t a, b;

		snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
		a = readlink(link, exe, sizeof(exe) - 1);
		b = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (a > 0 && b > 0 && (a != b || memcmp(exe, self, (size_t)a) != 0))
			break;
		usleep(2000);
	}
	return pid;
}

static void child_stop(pid_t pid)
{
	int st;

	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
}

/* The one numeric directory under a recorded proc root. */
static pid_t recorded_pid(const char *proc_root)
{
	DIR *d = opendir(proc_root);
	struct dirent *de;
	pid_t pid = -1;

	while (d && (de = readdir(d)) != NULL)
		if (de->d_name[0] >= '1' && de->d_name[0] <= '9')
			pid = (pid_t)atoi(de->d_name);
	if (d)
		closedir(d);
	return pid;
}

static const struct {
	const char *name;
	scenario_fn fn;
	bool live_only;
} proc_scenarios[] = {
	{ "stat", sc_stat, false },
	{ "status", sc_status, false },
	{ "maps", sc_maps, false },
	{ "smaps_rollup", sc_smaps_rollup, false },
	{ "environ", sc_environ, false },
	{ "cgroup memory+cpu (psi)", sc_cgroup, false },
	{ "task list", sc_tasks, false },
	{ "thread_watch", sc_thread_watch, false },
	{ "exe (readlinkat, open)", sc_exe, true },
	{ "mem (process_vm_readv)", sc_mem, true },
	{ "uptime, access", sc_misc, false },
	{ "sample (all of snap)", sc_sample, false },
};

static void test_faults__proc_live(void)
{
	struct ctx c = { 0 };
	struct vt_err err;
	size_t i;
	char name[64];

	c.pid = child_start();
	c.plain_pid = plain_start();
	CHECK(c.pid > 0 && c.plain_pid > 0);
	if (c.pid <= 0)
		return;
	CHECK_EQ_I64(vt_procfs_open(&c.pfs, NULL, NULL, &err), VT_OK);
	for (i = 0; i < sizeof(proc_scenarios) / sizeof(proc_scenarios[0]); i++) {
		snprintf(name, sizeof(name), "live %s", proc_scenarios[i].name);
		sweep(&c, name, proc_scenarios[i].fn, false);
	}
	vt_procfs_close(&c.pfs);
	child_stop(c.pid);
	child_stop(c.plain_pid);
}

static void test_faults__proc_recorded(void)
{
	static const char *const trees[] = { "proc/arena_default", "threads/lock_convoy/0" };
	char proc[1100], sys[1100], name[96];
	struct ctx c = { 0 };
	struct vt_err err;
	size_t t, i;

	for (t = 0; t < sizeof(trees) / sizeof(trees[0]); t++) {
		snprintf(proc, sizeof(proc), "%s/proc", vt_fixture_path(trees[t]));
		snprintf(sys, sizeof(sys), "%s/sys", vt_fixture_path(trees[t]));
		c.pid = recorded_pid(proc);
		CHECK(c.pid > 0);
		CHECK_EQ_I64(vt_procfs_open(&c.pfs, proc, access(sys, F_OK) == 0 ? sys : NULL, &err),
			     VT_OK);
		for (i = 0; i < sizeof(proc_scenarios) / sizeof(proc_scenarios[0]); i++) {
			if (proc_scenarios[i].live_only)
				continue;
			snprintf(name, sizeof(name), "%s %s", trees[t], proc_scenarios[i].name);
			sweep(&c, name, proc_scenarios[i].fn, true);
		}
		vt_procfs_close(&c.pfs);
	}
}

static void test_faults__store(void)
{
	/* tmpfs when there is one: SQLite's fsyncs cost nothing there */
	char dir[64], good[600], cmd[700];
	struct ctx c = { 0 };
	struct vt_err err;

	snprintf(dir, sizeof(dir), "%s/vitals-test-faults-XXXXXX",
		 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	if (!mkdtemp(dir)) {
		CHECK(!"mkdtemp");
		return;
	}
	c.store_dir = dir;
	snprintf(good, sizeof(good), "%s/good.db", dir);
	c.good_db = good;
	CHECK_EQ_I64(store_write(good, false, &err), VT_OK);
	sqlite_faults_install();
	sweep(&c, "store create/append/close", sc_store_write, false);
	sweep(&c, "store overwrite", sc_store_overwrite, false);
	sweep(&c, "store keeps an existing file", sc_store_no_clobber, false);
	sweep(&c, "store load", sc_store_load, false);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("# cannot remove %s\n", dir);
}

static void test_faults__setup(void)
{
	signal(SIGALRM, on_alarm);
	signal(SIGPIPE, SIG_IGN);
}

VT_TEST_MAIN(test_faults__setup, test_faults__proc_live, test_faults__proc_recorded,
	     test_faults__store)

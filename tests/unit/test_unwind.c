/*
 * test_unwind.c — stacks of a real child walked from a copy of its stack
 * (src/elf/unwind.c), the maps reading behind it (src/elf/code_map.c), and
 * kernel names from fixed kallsyms text (src/proc/kallsyms.c).
 *
 * The test forks itself; the child spins in a chain of non-inlined
 * functions.  Its registers come from ptrace (PTRACE_SEIZE + INTERRUPT) and
 * 16 KiB of its stack from process_vm_readv, as a perf sample would give
 * them; for a child blocked in read(2), only from /proc/CHILD/syscall (user
 * SP and PC), as wall-clock sampling will.  The chains are built with and
 * without frame pointers, and one in assembly without CFI (libdw's
 * frame-pointer fallback).
 */
#include "harness.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "elf/code_map.h"
#include "elf/unwind.h"
#include "proc/kallsyms.h"

#define STACK_COPY (16 * 1024)
#define MAX_FRAMES 64

/* ---- the child's chains (external names: no .isra/.constprop clones) ---- */

volatile int vt_test_spin = 1;
void vt_test_fp_a(void);
void vt_test_fp_b(void);
void vt_test_fp_c(void);
void vt_test_nofp_a(void);
void vt_test_nofp_b(void);
void vt_test_nofp_c(void);
void vt_test_asm_a(void);
void vt_test_nocfi_b(void);
void vt_test_nocfi_c(void);
void vt_test_rd_a(int fd);
void vt_test_rd_b(int fd);
void vt_test_rd_c(int fd);
void vt_test_rdfp_a(int fd);
void vt_test_rdfp_b(int fd);
void vt_test_rdfp_c(int fd);

/* An empty asm after each call keeps it out of tail position: every caller keeps its frame. */
#define KEEP_FRAME() __asm__ volatile("" ::: "memory")
#define FP __attribute__((noinline, noclone, optimize("no-omit-frame-pointer")))
#define NOFP __attribute__((noinline, noclone, optimize("omit-frame-pointer")))

FP void vt_test_fp_c(void) { while (vt_test_spin) KEEP_FRAME(); }
FP void vt_test_fp_b(void) { vt_test_fp_c(); KEEP_FRAME(); }
FP void vt_test_fp_a(void) { vt_test_fp_b(); KEEP_FRAME(); }
NOFP void vt_test_nofp_c(void) { while (vt_test_spin) KEEP_FRAME(); }
NOFP void vt_test_nofp_b(void) { vt_test_nofp_c(); KEEP_FRAME(); }
NOFP void vt_test_nofp_a(void) { vt_test_nofp_b(); KEEP_FRAME(); }

/* Two functions in assembly with frame pointers and no CFI at all. */
__asm__(".text\n"
	".globl vt_test_nocfi_c\n"
	".type vt_test_nocfi_c, @function\n"
	"vt_test_nocfi_c:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"1:	pause\n"
	"	cmpl $0, vt_test_spin(%rip)\n"
	"	jne 1b\n"
	"	pop %rbp\n"
	"	ret\n"
	".size vt_test_nocfi_c, .-vt_test_nocfi_c\n"
	".globl vt_test_nocfi_b\n"
	".type vt_test_nocfi_b, @function\n"
	"vt_test_nocfi_b:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	call vt_test_nocfi_c\n"
	"	pop %rbp\n"
	"	ret\n"
	".size vt_test_nocfi_b, .-vt_test_nocfi_b\n");
FP void vt_test_asm_a(void) { vt_test_nocfi_b(); KEEP_FRAME(); }

/* libc's own read(), not a sanitizer's interceptor of it. */
static ssize_t (*libc_read)(int, void *, size_t);
NOFP void vt_test_rd_c(int fd) { char c; if (libc_read(fd, &c, 1) < 0) _exit(3); KEEP_FRAME(); }
NOFP void vt_test_rd_b(int fd) { vt_test_rd_c(fd); KEEP_FRAME(); }
NOFP void vt_test_rd_a(int fd) { vt_test_rd_b(fd); KEEP_FRAME(); }
FP void vt_test_rdfp_c(int fd) { char c; if (libc_read(fd, &c, 1) < 0) _exit(3); KEEP_FRAME(); }
FP void vt_test_rdfp_b(int fd) { vt_test_rdfp_c(fd); KEEP_FRAME(); }
FP void vt_test_rdfp_a(int fd) { vt_test_rdfp_b(fd); KEEP_FRAME(); }

/* ---- driving the child ---- */

struct child {
	pid_t pid;
	int pid_fd;
	int pipe_w;                  /* the blocked reader's pipe */
	struct vt_unwind_start start;
	uint8_t stack[STACK_COPY];
};

static pid_t spawn(void (*fn)(void), void (*reader)(int), int *pipe_w)
{
	int fds[2] = { -1, -1 };
	pid_t pid;

	if (pipe_w && pipe(fds) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		if (pipe_w) {
			close(fds[1]);
			reader(fds[0]);
		} else {
			fn();
		}
		_exit(0);
	}
	if (pipe_w) {
		close(fds[0]);
		*pipe_w = fds[1];
	}
	return pid;
}

/*
 * Wait until the spawned child has run 30 ms of user CPU (5 s at most): by
 * then it spins in its innermost function.  A fixed sleep was not enough on
 * a loaded host: the child was sampled still inside fork (_Fork).
 */
static void wait_spinning(pid_t pid)
{
	long tick = sysconf(_SC_CLK_TCK);
	char path[64], buf[1024];
	unsigned long long utime;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	for (i = 0; i < 500; i++) {
		FILE *f = fopen(path, "r");
		char *p = NULL;
		size_t got = 0;

		if (f) {
			got = fread(buf, 1, sizeof(buf) - 1, f);
			fclose(f);
		}
		buf[got] = '\0';
		p = strrchr(buf, ')');
		/* after the comm: state, then 10 fields, then utime */
		if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu", &utime) == 1 &&
		    utime * 1000 >= 30ull * (unsigned long long)(tick > 0 ? tick : 100))
			return;
		usleep(10 * 1000);
	}
}

static int open_pid_dir(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static size_t copy_stack(pid_t pid, uint64_t sp, uint8_t *out)
{
	struct iovec local = { out, STACK_COPY }, remote = { (void *)(uintptr_t)sp, STACK_COPY };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	while (n < 0 && remote.iov_len > 4096) {   /* near the top of the stack: less */
		remote.iov_len /= 2;
		local.iov_len = remote.iov_len;
		n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	}
	return n > 0 ? (size_t)n : 0;
}

/* Stop the running child with ptrace and take its registers and stack, as a perf sample would. */
static bool sample_running(struct child *c)
{
	struct user_regs_struct r;
	int st;

	if (ptrace(PTRACE_SEIZE, c->pid, 0, 0) < 0 || ptrace(PTRACE_INTERRUPT, c->pid, 0, 0) < 0 ||
	    waitpid(c->pid, &st, __WALL) != c->pid || ptrace(PTRACE_GETREGS, c->pid, 0, &r) < 0) {
		printf("#   ptrace: %s\n", strerror(errno));
		return false;
	}
	memset(&c->start, 0, sizeof(c->start));
	c->start.regs[VT_DW_RAX] = r.rax;
	c->start.regs[VT_DW_RDX] = r.rdx;
	c->start.regs[VT_DW_RCX] = r.rcx;
	c->start.regs[VT_DW_RBX] = r.rbx;
	c->start.regs[VT_DW_RSI] = r.rsi;
	c->start.regs[VT_DW_RDI] = r.rdi;
	c->start.regs[VT_DW_RBP] = r.rbp;
	c->start.regs[VT_DW_RSP] = r.rsp;
	c->start.regs[VT_DW_R8] = r.r8;
	c->start.regs[VT_DW_R9] = r.r9;
	c->start.regs[VT_DW_R10] = r.r10;
	c->start.regs[VT_DW_R11] = r.r11;
	c->start.regs[VT_DW_R12] = r.r12;
	c->start.regs[VT_DW_R13] = r.r13;
	c->start.regs[VT_DW_R14] = r.r14;
	c->start.regs[VT_DW_R15] = r.r15;
	c->start.regs[VT_DW_RIP] = r.rip;
	c->start.known = (1u << VT_DW_NREGS) - 1;
	c->start.stack_addr = r.rsp;
	c->start.stack_len = copy_stack(c->pid, r.rsp, c->stack);
	c->start.stack = c->stack;
	return c->start.stack_len > 0;
}

/* The blocked child's user SP and PC from /proc/CHILD/syscall (the last two
 * fields), without stopping it: the way wall-clock mode samples. */
static bool sample_blocked(struct child *c)
{
	char path[64], text[512], *p, *q;
	uint64_t sp = 0, pc = 0;
	int i, fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)c->pid);
	for (i = 0; i < 200; i++) {   /* until it sits in read (nr 0) */
		fd = open(path, O_RDONLY | O_CLOEXEC);
		n = fd >= 0 ? read(fd, text, sizeof(text) - 1) : -1;
		if (fd >= 0)
			close(fd);
		if (n > 2 && text[0] == '0' && text[1] == ' ')
			break;
		usleep(10 * 1000);
	}
	if (i == 200 || n <= 0)
		return false;
	text[n] = '\0';
	p = strrchr(text, ' ');              /* pc */
	if (!p)
		return false;
	pc = strtoull(p + 1, NULL, 16);
	*p = '\0';
	q = strrchr(text, ' ');              /* sp */
	if (!q)
		return false;
	sp = strtoull(q + 1, NULL, 16);
	memset(&c->start, 0, sizeof(c->start));
	c->start.regs[VT_DW_RIP] = pc;
	c->start.regs[VT_DW_RSP] = sp;
	c->start.known = (1u << VT_DW_RIP) | (1u << VT_DW_RSP);
	c->start.stack_addr = sp;
	c->start.stack_len = copy_stack(c->pid, sp, c->stack);
	c->start.stack = c->stack;
	return pc && sp && c->start.stack_len > 0;
}

static void reap(struct child *c)
{
	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, NULL, __WALL);
	}
	if (c->pid_fd >= 0)
		close(c->pid_fd);
	if (c->pipe_w >= 0)
		close(c->pipe_w);
}

static const char *end_name(enum vt_unwind_end e)
{
	static const char *n[] = { "root", "stack", "noinfo", "nomodule", "depth", "error" };

	return (unsigned)e < sizeof(n) / sizeof(n[0]) ? n[e] : "?";
}

/* Names of the frames, printed as a TAP comment; index of name in names[] or -1. */
static size_t name_frames(struct vt_unwinder *uw, const struct vt_unwind_frame *f, size_t n,
			  const char **names)
{
	struct vt_unwind_sym s;
	size_t i;

	for (i = 0; i < n; i++) {
		vt_unwind_symbolize(uw, f[i].pc, !f[i].activation, &s);
		names[i] = s.func;
		printf("#     #%zu %s (%s+0x%" PRIx64 ", %s, syms %s)\n", i,
		       s.func ? s.func : "??", s.module ? s.module : "?", s.module_off,
		       vt_unwind_method_name(f[i].method), vt_sym_source_name(s.symbols));
	}
	return n;
}

static int find_name(const char **names, size_t n, const char *want)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (names[i] && strcmp(names[i], want) == 0)
			return (int)i;
	return -1;
}

/* Spawn fn, sample it running, unwind; check want[] appears in order as consecutive frames. */
static void unwind_running(void (*fn)(void), const char *const *want, size_t nwant,
			   const uint8_t *methods, bool time_it)
{
	static struct child c;   /* not on this frame: 16 KiB would hide the callers from the copy */
	struct vt_unwind_frame frames[MAX_FRAMES];
	const char *names[MAX_FRAMES];
	struct vt_unwinder *uw = NULL;
	enum vt_unwind_end why;
	struct vt_err err;
	size_t n, i;
	int at;

	memset(&c, 0, sizeof(c));
	c.pid = c.pid_fd = c.pipe_w = -1;
	c.pid = spawn(fn, NULL, NULL);
	CHECK(c.pid > 0);
	wait_spinning(c.pid);
	c.pid_fd = open_pid_dir(c.pid);
	CHECK(c.pid_fd >= 0);
	if (!sample_running(&c)) {
		CHECK(!"sampled the child");
		goto out;
	}
	CHECK(vt_unwinder_open(c.pid_fd, c.pid, &uw, &err) == VT_OK);
	if (!uw) {
		printf("#   %s\n", err.msg);
		goto out;
	}
	n = vt_unwind(uw, c.pid, &c.start, frames, MAX_FRAMES, &why);
	printf("#   %zu frames, end: %s, stack copy %zu bytes\n", n, end_name(why), c.start.stack_len);
	name_frames(uw, frames, n, names);
	at = find_name(names, n, want[0]);
	CHECK_EQ_I64(at, 0);
	for (i = 1; at >= 0 && i < nwant; i++)
		CHECK_STR((size_t)at + i < n ? names[at + i] : NULL, want[i]);
	for (i = 0; methods && i < nwant && i < n; i++)
		CHECK_STR(vt_unwind_method_name(frames[i].method),
			  vt_unwind_method_name((enum vt_unwind_method)methods[i]));
	CHECK(find_name(names, n, "main") > 0);
	CHECK_EQ_I64(why, VT_UNWIND_END_ROOT);
	CHECK_EQ_U64(frames[n - 1].method, VT_UNWIND_NONE);

	if (time_it) {   /* per unwind on the 16 KiB copy, and per symbolization once cached */
		struct timespec t0, t1;
		struct vt_unwind_sym s;
		struct vt_unwind_stats st;
		int reps = 200, r, batch;
		double us, us_unwind = 1e9, us_sym = 1e9;

		/* the best of 10 batches: the machine is shared */
		for (batch = 0; batch < 10; batch++) {
			clock_gettime(CLOCK_MONOTONIC, &t0);
			for (r = 0; r < reps; r++)
				CHECK_EQ_U64(vt_unwind(uw, c.pid, &c.start, frames, MAX_FRAMES, &why), n);
			clock_gettime(CLOCK_MONOTONIC, &t1);
			us = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / 1e3 / reps;
			us_unwind = us < us_unwind ? us : us_unwind;
			clock_gettime(CLOCK_MONOTONIC, &t0);
			for (r = 0; r < reps; r++)
				for (i = 0; i < n; i++)
					vt_unwind_symbolize(uw, frames[i].pc, !frames[i].activation, &s);
			clock_gettime(CLOCK_MONOTONIC, &t1);
			us = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / 1e3 / reps;
			us_sym = us < us_sym ? us : us_sym;
		}
		vt_unwinder_get_stats(uw, &st);
		printf("#   timing: %.2f us per unwind of %zu frames, %.3f us to name them (cached); "
		       "%" PRIu64 " target reads, %" PRIu32 " modules\n",
		       us_unwind, n, us_sym, st.target_reads, st.modules);
		CHECK(st.cache_hits > 0);
	}
out:
	vt_unwinder_free(&uw);
	reap(&c);
}

static void test_unwind__frame_pointers(void)
{
	const char *want[] = { "vt_test_fp_c", "vt_test_fp_b", "vt_test_fp_a" };
	const uint8_t methods[] = { VT_UNWIND_DWARF, VT_UNWIND_DWARF, VT_UNWIND_DWARF };

	unwind_running(vt_test_fp_a, want, 3, methods, true);
}

static void test_unwind__no_frame_pointers(void)
{
	const char *want[] = { "vt_test_nofp_c", "vt_test_nofp_b", "vt_test_nofp_a" };
	const uint8_t methods[] = { VT_UNWIND_DWARF, VT_UNWIND_DWARF, VT_UNWIND_DWARF };

	unwind_running(vt_test_nofp_a, want, 3, methods, true);
}

/* Assembly without CFI: libdw's x86-64 frame-pointer fallback steps out of it. */
static void test_unwind__no_cfi_falls_back_to_frame_pointers(void)
{
	const char *want[] = { "vt_test_nocfi_c", "vt_test_nocfi_b", "vt_test_asm_a" };
	const uint8_t methods[] = { VT_UNWIND_FP, VT_UNWIND_FP, VT_UNWIND_DWARF };

	unwind_running(vt_test_asm_a, want, 3, methods, false);
}

/* Blocked in libc's read: from RIP and RSP alone (/proc/CHILD/syscall), never stopped.
 * Code whose CFA is rbp-based (built with frame pointers) cannot be stepped
 * out of without rbp, which the syscall file does not give: with_fp, the walk
 * finds it in the stack copy (read left it as the caller had it) and goes on
 * to the root, as it does for Rust's std, built with frame pointers. */
static void blocked_in_read(bool with_fp)
{
	static struct child c;   /* not on this frame: 16 KiB would hide the callers from the copy */
	struct vt_unwind_frame frames[MAX_FRAMES];
	const char *names[MAX_FRAMES];
	struct vt_unwinder *uw = NULL;
	struct vt_unwind_sym s;
	enum vt_unwind_end why;
	struct vt_err err;
	size_t n;
	int at;

	libc_read = (ssize_t(*)(int, void *, size_t))dlsym(dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD),
							    "read");
	CHECK(libc_read != NULL);
	if (!libc_read)
		return;
	memset(&c, 0, sizeof(c));
	c.pid = c.pid_fd = c.pipe_w = -1;
	c.pid = spawn(NULL, with_fp ? vt_test_rdfp_a : vt_test_rd_a, &c.pipe_w);
	CHECK(c.pid > 0);
	c.pid_fd = open_pid_dir(c.pid);
	if (!sample_blocked(&c)) {
		CHECK(!"the child blocked in read");
		goto out;
	}
	CHECK(vt_unwinder_open(c.pid_fd, c.pid, &uw, &err) == VT_OK);
	if (!uw)
		goto out;
	n = vt_unwind(uw, c.pid, &c.start, frames, MAX_FRAMES, &why);
	printf("#   %zu frames from RIP+RSP, end: %s\n", n, end_name(why));
	name_frames(uw, frames, n, names);
	CHECK(n > 0 && vt_unwind_symbolize(uw, frames[0].pc, false, &s) && s.module &&
	      strncmp(s.module, "libc.so", 7) == 0);
	if (with_fp) {
		struct vt_unwind_stats st;

		at = find_name(names, n, "vt_test_rdfp_c");
		CHECK_EQ_I64(at, 1);
		CHECK(at >= 1 && (size_t)at + 2 < n && names[at + 1] && names[at + 2] &&
		      !strcmp(names[at + 1], "vt_test_rdfp_b") && !strcmp(names[at + 2], "vt_test_rdfp_a"));
		CHECK_EQ_I64(why, VT_UNWIND_END_ROOT);
		vt_unwinder_get_stats(uw, &st);
		CHECK_EQ_U64(st.rbp_found, 1);
		goto out;
	}
	at = find_name(names, n, "vt_test_rd_c");
	CHECK_EQ_I64(at, 1);
	CHECK(at >= 1 && (size_t)at + 2 < n && names[at + 1] && names[at + 2] &&
	      !strcmp(names[at + 1], "vt_test_rd_b") && !strcmp(names[at + 2], "vt_test_rd_a"));
	/* the test function itself has frame pointers in the sanitizer build (SANFLAGS) */
	if (why == VT_UNWIND_END_ROOT)
		CHECK(find_name(names, n, "main") > at);
	else
		CHECK_EQ_I64(why, VT_UNWIND_END_NOINFO);
out:
	/* the child was never stopped: still blocked in read */
	CHECK(c.pid > 0 && kill(c.pid, 0) == 0);
	vt_unwinder_free(&uw);
	reap(&c);
}

static void test_unwind__blocked_in_read_from_syscall_file(void)
{
	blocked_in_read(false);
}

static void test_unwind__blocked_with_frame_pointers_finds_rbp(void)
{
	blocked_in_read(true);
}

/* No wrong names: addresses outside modules, and a stack copy that ends early. */
/* ---- inlined functions: a chain of two, by always_inline, in this program's own DWARF ---- */

/* inner's pc, and the lines of the pc and of the two inlined calls */
enum { INL_PC_LINE = __LINE__ + 5, INL_MIDDLE_CALL = __LINE__ + 8, INL_OUTER_CALL = __LINE__ + 12 };
static inline __attribute__((always_inline)) uint64_t vt_test_inl_inner(void)
{
	uint64_t pc;

	__asm__ volatile("1: lea 1b(%%rip), %0" : "=r"(pc));
	return pc;
}
static inline __attribute__((always_inline)) uint64_t vt_test_inl_middle(void) { return vt_test_inl_inner(); }
__attribute__((noinline, noclone)) uint64_t vt_test_inl_outer(void);
__attribute__((noinline, noclone)) uint64_t vt_test_inl_outer(void)
{
	uint64_t pc = vt_test_inl_middle();

	KEEP_FRAME();
	return pc;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = s ? strlen(s) : 0, m = strlen(tail);

	return n >= m && strcmp(s + n - m, tail) == 0;
}

/*
 * vt_unwind_source on this process: the pc inside the two inlined functions
 * gives three functions, innermost first, with the pc's line and the lines
 * of the two calls that were inlined; a function nothing was inlined into
 * gives itself; an address in no module, nothing.
 */
static void test_unwind__inlined_functions_and_lines(void)
{
	struct vt_unwind_inline chain[VT_UNWIND_MAX_INLINE];
	struct vt_unwinder *uw = NULL;
	struct vt_err err;
	uint64_t pc = vt_test_inl_outer();
	int fd = open_pid_dir(getpid());
	size_t n;

	CHECK(fd >= 0);
	CHECK(vt_unwinder_open(fd, getpid(), &uw, &err) == VT_OK);
	close(fd);
	if (!uw)
		return;
	n = vt_unwind_source(uw, pc, false, chain, VT_UNWIND_MAX_INLINE);
	for (size_t i = 0; i < n; i++)
		printf("#   %zu: %s at %s:%u (defined at line %u)\n", i, chain[i].func ? chain[i].func : "?",
		       chain[i].file ? chain[i].file : "?", chain[i].line, chain[i].decl_line);
	CHECK_EQ_U64(n, 3);
	if (n == 3) {
		CHECK_STR(chain[0].func, "vt_test_inl_inner");
		CHECK_STR(chain[1].func, "vt_test_inl_middle");
		CHECK_STR(chain[2].func, "vt_test_inl_outer");
		CHECK(ends_with(chain[0].file, "test_unwind.c") && ends_with(chain[2].file, "test_unwind.c"));
		CHECK_EQ_U64(chain[0].line, INL_PC_LINE);
		CHECK_EQ_U64(chain[1].line, INL_MIDDLE_CALL);
		CHECK_EQ_U64(chain[2].line, INL_OUTER_CALL);
		CHECK(chain[0].decl_line > 0 && chain[0].decl_line < chain[2].decl_line);
	}
	/* at most max, innermost first */
	CHECK_EQ_U64(vt_unwind_source(uw, pc, false, chain, 1), 1);
	CHECK_STR(chain[0].func, "vt_test_inl_inner");
	/* a function nothing was inlined into: itself; an address in no module: nothing */
	n = vt_unwind_source(uw, (uint64_t)(uintptr_t)&vt_test_fp_c, false, chain, VT_UNWIND_MAX_INLINE);
	CHECK_EQ_U64(n, 1);
	CHECK_STR(n ? chain[0].func : NULL, "vt_test_fp_c");
	CHECK_EQ_U64(vt_unwind_source(uw, 0x10, false, chain, VT_UNWIND_MAX_INLINE), 0);
	CHECK_EQ_U64(vt_unwind_source(uw, pc, false, chain, 0), 0);
	CHECK_EQ_U64(vt_unwind_source(NULL, pc, false, chain, VT_UNWIND_MAX_INLINE), 0);
	/* this test's own module: its lines from its own DWARF, no debug file read or refused */
	{
		struct vt_unwind_debug dbg;

		CHECK(vt_unwind_module_debug(uw, pc, &dbg));
		CHECK_EQ_I64(dbg.lines, VT_LINES_OWN);
		CHECK(!dbg.debug_file && !dbg.ignored && !dbg.ignored_why);
		CHECK(!vt_unwind_module_debug(uw, 0x10, &dbg) && dbg.lines == VT_LINES_UNKNOWN);
		CHECK(!vt_unwind_module_debug(NULL, pc, &dbg));
	}
	vt_unwinder_free(&uw);
}

static void test_unwind__limits(void)
{
	static struct child c;   /* not on this frame: 16 KiB would hide the callers from the copy */
	struct vt_unwind_frame frames[MAX_FRAMES];
	struct vt_unwinder *uw = NULL;
	struct vt_unwind_sym s;
	struct vt_unwind_stats st;
	enum vt_unwind_end why;
	struct vt_err err;
	size_t n, full;

	memset(&c, 0, sizeof(c));
	c.pid = c.pid_fd = c.pipe_w = -1;
	c.pid = spawn(vt_test_nofp_a, NULL, NULL);
	wait_spinning(c.pid);
	c.pid_fd = open_pid_dir(c.pid);
	if (!sample_running(&c)) {
		CHECK(!"sampled the child");
		goto out;
	}
	CHECK(vt_unwinder_open(c.pid_fd, c.pid, &uw, &err) == VT_OK);
	if (!uw)
		goto out;
	CHECK(!vt_unwind_symbolize(uw, 0x10, false, &s));
	CHECK(s.func == NULL && s.module == NULL && s.module_off == 0x10);
	/* above the highest module (ld.so, the vdso): libdw's lookup names that
	 * module for every address up there, a garbage return address too */
	CHECK(!vt_unwind_symbolize(uw, 0x7ffffffff000ull, false, &s));
	CHECK(!vt_unwind_symbolize(uw, 0x5f656c69666f7270ull, false, &s) && s.module == NULL);
	/* the first frame's name, and the file offset form */
	CHECK(vt_unwind_symbolize(uw, c.start.regs[VT_DW_RIP], false, &s));
	CHECK_STR(s.func, "vt_test_nofp_c");
	CHECK(s.module && strncmp(s.module, "test_unwind", 11) == 0);
	CHECK(s.module_off < c.start.regs[VT_DW_RIP]);
	CHECK(s.has_cfi);
	CHECK_EQ_U64(s.symbols, VT_SYMS_SYMTAB);
	full = vt_unwind(uw, c.pid, &c.start, frames, MAX_FRAMES, &why);
	CHECK(full > 4 && why == VT_UNWIND_END_ROOT);
	/* a 16-byte stack copy: the walk stops where the copy ends, and says so
	 * (leaf and caller have no frame of their own: 3 return addresses fit) */
	c.start.stack_len = 16;
	n = vt_unwind(uw, c.pid, &c.start, frames, MAX_FRAMES, &why);
	CHECK(n >= 1 && n < full);
	CHECK_EQ_I64(why, VT_UNWIND_END_STACK);
	/* ... unless reading the target is allowed (bounded) */
	c.start.read_target = true;
	n = vt_unwind(uw, c.pid, &c.start, frames, MAX_FRAMES, &why);
	CHECK_EQ_U64(n, full);
	CHECK_EQ_I64(why, VT_UNWIND_END_ROOT);
	vt_unwinder_get_stats(uw, &st);
	CHECK(st.target_reads > 0 && st.target_reads <= VT_UNWIND_TARGET_READS);
	/* depth */
	c.start.read_target = false;
	c.start.stack_len = STACK_COPY;
	n = vt_unwind(uw, c.pid, &c.start, frames, 2, &why);
	CHECK_EQ_U64(n, 2);
	CHECK_EQ_I64(why, VT_UNWIND_END_DEPTH);
	/* no RSP: nothing */
	c.start.known = 1u << VT_DW_RIP;
	CHECK_EQ_U64(vt_unwind(uw, c.pid, &c.start, frames, MAX_FRAMES, &why), 0);
	/* nothing mapped or unmapped: no second report */
	CHECK(vt_unwinder_refresh(uw, &err) == VT_OK);
	vt_unwinder_get_stats(uw, &st);
	CHECK_EQ_U64(st.reports, 1);
out:
	vt_unwinder_free(&uw);
	reap(&c);
	CHECK(vt_unwinder_open(-1, 1, &uw, &err) == VT_E_IO && uw == NULL);   /* no directory */
}

/* 4 MiB of zeros: its end lies far past the file's last page, in the anonymous part of .bss */
static char vt_test_big_bss[4 << 20];

/* The lowest address the test program is mapped at (its first PT_LOAD: vaddr 0 in a PIE). */
static uint64_t own_base(pid_t pid)
{
	char path[64], line[512], exe[256], *name;
	uint64_t lo = 0, base = 0;
	ssize_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n <= 0)
		return 0;
	exe[n] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(path, "r")))
		return 0;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		name = strchr(line, '/');
		if (name && !strcmp(name, exe) && sscanf(line, "%" SCNx64, &lo) == 1 && (!base || lo < base))
			base = lo;
	}
	fclose(f);
	return base;
}

/*
 * Data addresses (vt_unwind_data_symbol, vt_unwind_data_module): a static
 * object by its symbol; the end of a 4 MiB static array, in the anonymous
 * mapping past the file (what a stripped program's statics are named by:
 * its module and the file's address); a malloc'd block in no module's image.
 */
static void test_unwind__data_addresses(void)
{
	static struct child c;
	struct vt_unwinder *uw = NULL;
	struct vt_unwind_sym s, m;
	struct vt_err err;
	uint64_t tail = (uint64_t)(uintptr_t)&vt_test_big_bss[sizeof(vt_test_big_bss) - 8], base;
	char *block = malloc(64);   /* the child has it at the same address */

	memset(&c, 0, sizeof(c));
	c.pid = c.pid_fd = c.pipe_w = -1;
	c.pid = spawn(vt_test_nofp_a, NULL, NULL);
	wait_spinning(c.pid);
	c.pid_fd = open_pid_dir(c.pid);
	base = own_base(c.pid);
	CHECK(base != 0);
	CHECK(vt_unwinder_open(c.pid_fd, c.pid, &uw, &err) == VT_OK);
	if (!uw)
		goto out;
	CHECK(vt_unwind_data_symbol(uw, (uint64_t)(uintptr_t)&vt_test_spin, &s));
	CHECK_STR(s.func, "vt_test_spin");
	CHECK(vt_unwind_data_module(uw, (uint64_t)(uintptr_t)&vt_test_spin, &m));
	CHECK(m.func == NULL && m.module && strncmp(m.module, "test_unwind", 11) == 0);
	CHECK_EQ_U64(m.module_off, s.module_off);
	CHECK_EQ_U64(m.module_off, (uint64_t)(uintptr_t)&vt_test_spin - base);
	/* past the file's last page: the anonymous part of .bss, still the program's image */
	CHECK(vt_unwind_data_module(uw, tail, &m));
	CHECK_EQ_U64(m.module_off, tail - base);
	CHECK(vt_unwind_data_symbol(uw, tail, &s));
	CHECK_STR(s.func, "vt_test_big_bss");
	CHECK_EQ_U64(s.func_off, sizeof(vt_test_big_bss) - 8);
	/* a heap block is in no module's image, though a module is mapped below it */
	CHECK(block && !vt_unwind_data_module(uw, (uint64_t)(uintptr_t)block, &m));
	CHECK(m.module == NULL);
	CHECK(!vt_unwind_data_module(uw, 0x10, &m));
out:
	vt_unwinder_free(&uw);
	reap(&c);
	free(block);
}

static void test_code_map__modules(void)
{
	static const char maps[] =
		"55d0c0000000-55d0c0001000 r--p 00000000 fe:01 100 /usr/bin/app\n"
		"55d0c0001000-55d0c0005000 r-xp 00001000 fe:01 100 /usr/bin/app\n"
		"55d0c0005000-55d0c0006000 rw-p 00005000 fe:01 100 /usr/bin/app\n"
		"55d0c0006000-55d0c0008000 rw-p 00000000 00:00 0 \n"
		"55d0c1000000-55d0c1021000 rw-p 00000000 00:00 0          [heap]\n"
		"7f0000000000-7f0000100000 r--p 00000000 fe:01 200 /usr/lib/locale/locale-archive\n"
		"7f0000200000-7f0000201000 r--p 00000000 fe:01 300 /opt/lib/libold.so (deleted)\n"
		"7f0000201000-7f0000202000 r-xp 00001000 fe:01 300 /opt/lib/libold.so (deleted)\n"
		"7f0000300000-7f0000301000 r-xp 00002000 fe:01 400 /opt/lib/partial.so\n"
		"7f0000400000-7f0000401000 rwxp 00000000 00:00 0 \n"
		"7f0000401000-7f0000403000 r-xp 00000000 00:00 0          [anon:jit]\n"
		"7f0000500000-7f0000501000 r-xp 00000000 00:00 0 \n"
		"7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0          [stack]\n"
		"7ffd00100000-7ffd00102000 r-xp 00000000 00:00 0          [vdso]\n"
		"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0  [vsyscall]\n";
	struct vt_code_map m, m2;
	struct vt_err err;

	CHECK(vt_code_map_parse(maps, sizeof(maps) - 1, &m, &err) == VT_OK);
	CHECK_EQ_U64(m.n, 3);   /* app, libold (deleted), [vdso]; not the data file, not partial.so */
	if (m.n == 3) {
		CHECK_STR(m.v[0].path, "/usr/bin/app");
		CHECK_EQ_U64(m.v[0].low, 0x55d0c0000000ull);
		CHECK_EQ_U64(m.v[0].high, 0x55d0c0006000ull);
		CHECK_EQ_U64(m.v[0].map_end, 0x55d0c0001000ull);
		CHECK_STR(m.v[1].path, "/opt/lib/libold.so");
		CHECK(m.v[1].deleted);
		CHECK(m.v[2].vdso);
		CHECK_STR(vt_code_basename(m.v[0].path), "app");
	}
	/* executable memory of no file, adjacent mappings as one; not [vsyscall] */
	CHECK_EQ_U64(m.nanon, 2);
	CHECK(vt_code_map_anon_at(&m, 0x7f0000400000ull) == &m.anon[0]);
	CHECK(vt_code_map_anon_at(&m, 0x7f0000402fffull) == &m.anon[0]);
	CHECK(vt_code_map_anon_at(&m, 0x7f0000403000ull) == NULL);
	CHECK(vt_code_map_anon_at(&m, 0x7f0000500800ull) == &m.anon[1]);
	CHECK(vt_code_map_anon_at(&m, 0x55d0c1000000ull) == NULL);   /* the heap, not executable */
	CHECK(vt_code_map_anon_at(&m, 0xffffffffff600000ull) == NULL);
	CHECK(vt_code_map_parse(maps, sizeof(maps) - 1, &m2, &err) == VT_OK);
	CHECK_EQ_U64(m.fingerprint, m2.fingerprint);
	vt_code_map_release(&m2);
	/* one executable mapping fewer: another fingerprint */
	CHECK(vt_code_map_parse(maps, strstr(maps, "7f0000300000") - maps, &m2, &err) == VT_OK);
	CHECK(m.fingerprint != m2.fingerprint);
	vt_code_map_release(&m2);
	vt_code_map_release(&m);
	/* node maps part of its own text again, gigabytes above, V8's code
	 * between: the binary's module ends with its own load, the JIT's code is
	 * anonymous, the far copy is in no module */
	static const char node_maps[] =
		"00400000-00b6f000 r--p 00000000 fe:00 247823 /usr/bin/node\n"
		"00b6f000-00b71000 r-xp 0076f000 fe:00 247823 /usr/bin/node\n"
		"00b72000-025fe000 r-xp 00772000 fe:00 247823 /usr/bin/node\n"
		"0563e000-0565d000 rw-p 0523d000 fe:00 247823 /usr/bin/node\n"
		"0565d000-0567a000 rw-p 00000000 00:00 0\n"
		"7f85ec003000-7f85ec03f000 rwxp 00000000 00:00 0\n"
		"7f860be40000-7f860bfd2000 r-xp 014c4000 fe:00 247823 /usr/bin/node\n";
	CHECK(vt_code_map_parse(node_maps, sizeof(node_maps) - 1, &m, &err) == VT_OK);
	CHECK_EQ_U64(m.n, 1);
	CHECK(m.n == 1 && m.v[0].low == 0x400000 && m.v[0].high == 0x565d000);
	CHECK(vt_code_map_anon_at(&m, 0x7f85ec005f4full) != NULL);
	vt_code_map_release(&m);
	CHECK(vt_code_map_parse("55d0c0000000 r--p\n", 18, &m, &err) == VT_E_PARSE);
	CHECK(strstr(err.msg, "line 1") != NULL);
	CHECK_EQ_U64(m.n, 0);
}

static const char kallsyms_text[] =
	"0000000000000000 A fixed_percpu_data\n"
	"ffffffff81000000 T _stext\n"
	"ffffffff81000000 t startup_64\n"
	"ffffffff81000100 t helper\n"
	"ffffffff81000200 W weak_fn\n"
	"ffffffff81000300 D some_data\n"
	"ffffffff81000400 T last_fn\n"
	"ffffffff81000500 T _etext\n"
	"ffffffff82000000 D data_after\n"
	"ffffffffc0001000 t mod_fn\t[ext4]\n"
	"ffffffffc0001100 t mod_fn2\t[ext4]";

static void test_kallsyms__names(void)
{
	struct vt_ksyms *ks = NULL;
	struct vt_err err;

	CHECK(vt_ksyms_parse(kallsyms_text, sizeof(kallsyms_text) - 1, &ks, &err) == VT_OK);
	if (!ks)
		return;
	CHECK(vt_ksyms_name(ks, 0xffffffff80ffffffull) == NULL);
	CHECK_STR(vt_ksyms_name(ks, 0xffffffff81000000ull), "_stext");   /* T before t */
	CHECK_STR(vt_ksyms_name(ks, 0xffffffff81000150ull), "helper");
	CHECK_STR(vt_ksyms_name(ks, 0xffffffff81000250ull), "weak_fn");
	CHECK_STR(vt_ksyms_name(ks, 0xffffffff810004ffull), "last_fn");
	CHECK(vt_ksyms_name(ks, 0xffffffff81000500ull) == NULL);       /* _etext */
	CHECK(vt_ksyms_name(ks, 0xffffffff82000010ull) == NULL);
	CHECK_STR(vt_ksyms_name(ks, 0xffffffffc0001010ull), "mod_fn");
	CHECK_STR(vt_ksyms_name(ks, 0xffffffffc0001110ull), "mod_fn2");
	CHECK(vt_ksyms_name(ks, 0xffffffffc0101100ull) == NULL);       /* far past the last */
	vt_ksyms_free(&ks);
	CHECK(ks == NULL);
}

static void test_kallsyms__hidden_and_malformed(void)
{
	static const char hidden[] = "0000000000000000 T _stext\n0000000000000000 t helper\n";
	struct vt_ksyms *ks = NULL;
	struct vt_err err;

	CHECK(vt_ksyms_parse(hidden, sizeof(hidden) - 1, &ks, &err) == VT_E_PERM);
	CHECK(ks == NULL && strstr(err.hint, "kptr_restrict") != NULL);
	CHECK(vt_ksyms_parse("", 0, &ks, &err) == VT_E_PARSE);
	CHECK(vt_ksyms_parse("ffffffff81000000 T\n", 19, &ks, &err) == VT_E_PARSE);
	CHECK(vt_ksyms_parse("zz T x\n", 7, &ks, &err) == VT_E_PARSE);
	CHECK(vt_ksyms_parse("fffff0z T x\n", 12, &ks, &err) == VT_E_PARSE);   /* fuzzer */
	CHECK(ks == NULL);
	/* no text symbol at all: an empty table, every lookup NULL */
	CHECK(vt_ksyms_parse("ffffffff82000000 D data\n", 24, &ks, &err) == VT_OK);
	CHECK(ks && vt_ksyms_name(ks, 0xffffffff82000000ull) == NULL);
	vt_ksyms_free(&ks);
}

/* The live file, when this machine shows its addresses. */
static void test_kallsyms__live(void)
{
	struct vt_ksyms *ks = NULL;
	struct vt_err err;
	int rc = vt_ksyms_load(NULL, &ks, &err);

	CHECK(rc == VT_OK || rc == VT_E_PERM || rc == VT_E_NOTFOUND);
	if (rc == VT_OK)
		CHECK(vt_ksyms_name(ks, 0) == NULL);
	else
		printf("#   live kallsyms: %s\n", err.msg);
	vt_ksyms_free(&ks);
}

VT_TEST_MAIN(test_unwind__frame_pointers, test_unwind__no_frame_pointers, test_unwind__data_addresses,
	     test_unwind__no_cfi_falls_back_to_frame_pointers,
	     test_unwind__blocked_in_read_from_syscall_file,
	     test_unwind__blocked_with_frame_pointers_finds_rbp,
	     test_unwind__inlined_functions_and_lines, test_unwind__limits,
	     test_code_map__modules, test_kallsyms__names, test_kallsyms__hidden_and_malformed,
	     test_kallsyms__live)

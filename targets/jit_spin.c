/*
 * jit_spin: code a JIT wrote, beside code of a file, for `vitals profile`.
 *
 * At start the program writes a small function's machine code (x86-64) to
 * a page of anonymous memory, then makes the page read+execute (write XOR
 * execute, as JITs do).  Thread "jit" calls that code over and over;
 * thread "native" runs native_spin(), a function of this file, the same
 * way.  Both compute without blocking: on two cores each has about half
 * the process's CPU, and a profile should put the jit thread's samples in
 * the "JIT code" bucket, named [anon]+offset, and none of native's.
 *
 * The truth gives the JIT page's address and length ("jit_start",
 * "jit_len") and each thread's calls and own CPU time ("cpu_s", from its
 * CLOCK_THREAD_CPUTIME_ID), so a test can compare shares.
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>

#include "common.h"

#define STEPS	100000	/* loop steps per call */

enum { JIT, NATIVE, NTHREADS };
static const char *const thread_names[NTHREADS] = { "jit", "native" };

static pthread_t threads[NTHREADS];
static clockid_t clocks[NTHREADS];
static _Atomic uint64_t calls[NTHREADS];
static double final_cpu_s[NTHREADS];	/* each thread's CPU, once it ended */
static _Atomic int clocks_ready, ended;
static atomic_int stop;
static _Atomic uint64_t sink;	/* keeps the results alive */
static uint64_t (*jit_code)(uint64_t);
static unsigned char *jit_page;
static size_t jit_len;

/*
 * uint64_t f(uint64_t n) { uint64_t x = n; do x = x * 3 + n; while (--n); return x; }
 *   mov %rdi,%rax; 1: imul $3,%rax,%rax; add %rdi,%rax; dec %rdi; jnz 1b; ret
 */
static const unsigned char jit_bytes[] = {
	0x48, 0x89, 0xf8, 0x48, 0x6b, 0xc0, 0x03, 0x48, 0x01, 0xf8,
	0x48, 0xff, 0xcf, 0x75, 0xf4, 0xc3,
};

static void jit_compile(void)
{
	long page = sysconf(_SC_PAGESIZE);

	jit_len = page > 0 ? (size_t)page : 4096;
	jit_page = mmap(NULL, jit_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (jit_page == MAP_FAILED)
		die("mmap");
	memcpy(jit_page, jit_bytes, sizeof(jit_bytes));
	if (mprotect(jit_page, jit_len, PROT_READ | PROT_EXEC))
		die("mprotect");
	__builtin___clear_cache((char *)jit_page, (char *)jit_page + sizeof(jit_bytes));
	jit_code = (uint64_t (*)(uint64_t))(void *)jit_page;
}

/* The same computation, compiled from this file. */
__attribute__((noinline)) static uint64_t native_spin(uint64_t n)
{
	uint64_t x = n;

	do
		x = x * 3 + n;
	while (--n);
	__asm__ volatile("" : "+r"(x));
	return x;
}

static double thread_cpu_s(int which)
{
	struct timespec ts;

	if (clock_gettime(clocks[which], &ts))
		return -1;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *spin_main(void *arg)
{
	int which = (int)(intptr_t)arg;
	uint64_t h = 0;

	check(pthread_getcpuclockid(pthread_self(), &clocks[which]), "pthread_getcpuclockid");
	atomic_fetch_add(&clocks_ready, 1);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		h ^= which == JIT ? jit_code(STEPS) : native_spin(STEPS);
		atomic_fetch_add_explicit(&calls[which], 1, memory_order_relaxed);
	}
	atomic_fetch_xor(&sink, h);
	final_cpu_s[which] = thread_cpu_s(which);
	atomic_fetch_add(&ended, 1);
	return NULL;
}

static void truth_write(const char *phase)
{
	FILE *f = truth_begin(phase);
	int i;

	if (!f)
		return;
	fprintf(f, ",\"jit_start\":%" PRIuPTR ",\"jit_len\":%zu,\"threads\":{", (uintptr_t)jit_page,
		jit_len);
	for (i = 0; i < NTHREADS; i++)
		fprintf(f, "%s\"%s\":{\"calls\":%" PRIu64 ",\"cpu_s\":%.6f}", i ? "," : "",
			thread_names[i], atomic_load(&calls[i]),
			atomic_load(&ended) == NTHREADS ? final_cpu_s[i] : thread_cpu_s(i));
	fputc('}', f);
	truth_end();
}

static void option(int val, const char *name, const char *arg)
{
	(void)val;
	(void)name;
	(void)arg;
}

static const struct cli cli = {
	.usage =
	"usage: jit_spin [options]\n"
	"  --seconds N   exit after N seconds (default 60)\n"
	"  --truth FILE  append ground truth as JSON lines\n",
	.options = NULL,
	.option = option,
};

int main(int argc, char **argv)
{
	int i;

	parse_options(argc, argv, &cli);
#if !defined(__x86_64__)
	fprintf(stderr, "jit_spin: its machine code is x86-64's\n");
	return 1;
#endif
	jit_compile();
	target_begin(NULL);
	for (i = 0; i < NTHREADS; i++)
		start_thread(&threads[i], NULL, spin_main, (void *)(intptr_t)i, thread_names[i], -1);
	while (atomic_load(&clocks_ready) < NTHREADS)
		usleep(1000);
	main_loop(&(struct main_loop){ .report = truth_write, .phase = "running" });
	atomic_store(&stop, 1);
	join_threads(threads, NTHREADS);
	truth_write("exit");
	truth_close();
	return 0;
}

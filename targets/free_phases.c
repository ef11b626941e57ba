/*
 * free_phases: glibc free memory whose resident part is known, phase by
 * phase, for the free_resident series of `vitals soak`.
 *
 * The main thread allocates --blocks blocks of --block-kb each (in
 * main_arena: M_MMAP_THRESHOLD is set above the block size, so none is
 * mmapped alone; M_TRIM_THRESHOLD is set out of reach and M_TOP_PAD to 0,
 * so no free() gives memory back by itself) and writes every byte of
 * them.  Then, every --phase-seconds, one phase:
 *   "odd"     the odd-numbered blocks are freed: each lies between two
 *             live ones, so free chunks of one block each;
 *   "quarter" the blocks numbered 2 mod 4 are freed too: each joins its two
 *             free neighbours, so free chunks of three blocks each;
 *   "trim"    malloc_trim(0): glibc gives the free chunks' whole pages
 *             back (MADV_DONTNEED) and keeps their headers' pages; the
 *             free bytes (fordblks) stay, their resident part falls;
 *   "touch"   the first half of the blocks freed so far are allocated
 *             again (same size: each takes back a free block's place, as
 *             best fit gives it) and written, the rest stay free.
 * The last block is never freed, so no free chunk merges with top.
 *
 * The truth: every line carries "free_resident_bytes", the bytes of the
 * free chunks this program made that lie on resident pages, counted with
 * mincore() over each chunk's span (the 16-byte header before the
 * pointer to the end of its usable bytes, as malloc_usable_size says;
 * adjacent free blocks make one chunk spanning them all), and
 * "free_bytes", their bytes resident or not.  malloc's own other free
 * memory (top, libc's few small free chunks, tcache) is outside it:
 * "mallinfo_fordblks" (mallinfo2) bounds it, fordblks - free_bytes.
 * Each phase is written once its change is made; nothing allocates
 * between phases, so the heap is still.
 */
#include <malloc.h>
#include <stdint.h>
#include <sys/mman.h>

#include "common.h"

#define MAX_BLOCKS	(1 << 16)
#define CHUNK_HDR	16	/* prev_size, size before the user pointer */
#define PAGE		4096u

static struct {
	size_t blocks;
	size_t block_bytes;
	double phase_seconds;
} opt = {
	.blocks = 1024,
	.block_bytes = 96 << 10,
	.phase_seconds = 4,
};

static char **block;		/* mmap()ed: our bookkeeping stays out of the heap */
static char **orig;		/* where each block was built, ascending */
static uint8_t *is_free;	/* 1: freed by us */
static size_t usable;		/* malloc_usable_size of a block */
static const char *phase = "ready";
static int phase_i;
static const char *const phases[] = { "odd", "quarter", "trim", "touch" };
static unsigned char *vec;	/* mincore's answer, one byte a page */

/* Bytes of [a, b) on resident pages. */
static uint64_t resident_bytes(uintptr_t a, uintptr_t b)
{
	uintptr_t start = a & ~(uintptr_t)(PAGE - 1);
	size_t npages = (b - start + PAGE - 1) / PAGE, i;
	uint64_t n = 0;

	if (mincore((void *)start, npages * PAGE, vec))
		die("mincore");
	for (i = 0; i < npages; i++) {
		uintptr_t ps = start + i * PAGE, pe = ps + PAGE;

		if (!(vec[i] & 1))
			continue;
		n += (pe < b ? pe : b) - (ps > a ? ps : a);
	}
	return n;
}

/* The free chunks we made: runs of freed blocks, each one chunk from its first header to its last byte. */
static void measure(uint64_t *res, uint64_t *bytes)
{
	size_t i = 0;

	*res = *bytes = 0;
	while (i < opt.blocks) {
		size_t j = i;
		uintptr_t a, b;

		if (!is_free[i]) {
			i++;
			continue;
		}
		while (j + 1 < opt.blocks && is_free[j + 1])
			j++;
		/* the chunk of block k spans [k - 16, k - 16 + usable + 8): its usable bytes
		 * run into the next chunk's prev_size word, which is the next chunk's */
		a = (uintptr_t)block[i] - CHUNK_HDR;
		b = (uintptr_t)block[j] - CHUNK_HDR + usable + 8;
		*bytes += b - a;
		*res += resident_bytes(a, b);
		i = j + 1;
	}
}

static void truth_write(const char *ph)
{
	struct mallinfo2 mi = mallinfo2();
	uint64_t res, bytes;
	FILE *f;

	measure(&res, &bytes);
	f = truth_begin(ph ? ph : phase);
	if (!f)
		return;
	fprintf(f, ",\"phase_index\":%d,\"wall\":%.3f,\"blocks\":%zu,\"block_bytes\":%zu,"
		"\"free_resident_bytes\":%llu,\"free_bytes\":%llu,\"mallinfo_fordblks\":%zu,"
		"\"mallinfo_arena\":%zu", phase_i, wall_now(), opt.blocks, opt.block_bytes,
		(unsigned long long)res, (unsigned long long)bytes, mi.fordblks, mi.arena);
	truth_end();
}

static void touch(char *p)
{
	memset(p, 0x5a, usable);
}

static void build(void)
{
	size_t i;

	if (!mallopt(M_MMAP_THRESHOLD, (int)(4 * opt.block_bytes + (1 << 20))) ||
	    !mallopt(M_TRIM_THRESHOLD, 1 << 30) || !mallopt(M_TOP_PAD, 0))
		die("mallopt");
	block = mmap(NULL, opt.blocks * sizeof(*block), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	orig = mmap(NULL, opt.blocks * sizeof(*orig), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	is_free = mmap(NULL, opt.blocks, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	vec = mmap(NULL, (opt.blocks * opt.block_bytes * 4) / PAGE + 64, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (block == MAP_FAILED || orig == MAP_FAILED || is_free == MAP_FAILED || vec == MAP_FAILED)
		die("mmap");
	for (i = 0; i < opt.blocks; i++) {
		if (!(block[i] = malloc(opt.block_bytes)))
			die("malloc");
		if (i && block[i] <= block[i - 1]) {
			errno = EFAULT;
			die("the heap did not grow upwards");
		}
		orig[i] = block[i];
		usable = malloc_usable_size(block[i]);
		touch(block[i]);
	}
}

static void free_where(size_t mod, size_t rem)
{
	size_t i;

	for (i = 0; i + 1 < opt.blocks; i++)
		if (i % mod == rem && !is_free[i]) {
			free(block[i]);
			is_free[i] = 1;
		}
}

/*
 * Allocate again the first half of the freed blocks (by count).  Each lands
 * at the start of a free chunk that best fit chose (glibc splits it, the
 * rest stays free), so on the grid of the blocks built: the block whose
 * place it took is found by its address.
 */
static void touch_half(void)
{
	size_t n = 0, i, want;

	for (i = 0; i < opt.blocks; i++)
		n += is_free[i];
	for (want = n / 2; want; want--) {
		char *p = malloc(opt.block_bytes);
		size_t lo = 0, hi = opt.blocks;

		if (!p)
			die("malloc");
		while (lo < hi) {       /* orig[] is ascending: the heap grew upwards as it was built */
			size_t mid = (lo + hi) / 2;

			if (orig[mid] < p)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == opt.blocks || orig[lo] != p || !is_free[lo]) {
			errno = EFAULT;
			die("a block allocated again is not where a freed one was");
		}
		block[lo] = p;
		is_free[lo] = 0;
		touch(p);
	}
}

static void next_phase(void)
{
	const char *p = phases[phase_i];

	if (!strcmp(p, "odd"))
		free_where(2, 1);
	else if (!strcmp(p, "quarter"))
		free_where(4, 2);
	else if (!strcmp(p, "trim"))
		malloc_trim(0);
	else {
		touch_half();
	}
	phase = p;
	phase_i++;
	truth_write(NULL);
}

static void option(int val, const char *name, const char *arg)
{
	switch (val) {
	case 'b':
		opt.blocks = (size_t)parse_num(name, arg, 8, MAX_BLOCKS);
		break;
	case 'k':
		opt.block_bytes = (size_t)parse_num(name, arg, 8, 1024) << 10;
		break;
	case 'p':
		opt.phase_seconds = parse_num(name, arg, 0.1, 3600);
		break;
	}
}

static const struct option options[] = {
	{ "blocks", required_argument, NULL, 'b' },
	{ "block-kb", required_argument, NULL, 'k' },
	{ "phase-seconds", required_argument, NULL, 'p' },
	{ NULL, 0, NULL, 0 }
};

static const struct cli cli = {
	.usage =
	"usage: free_phases [options]\n"
	"  --seconds N         exit after N seconds (default 60)\n"
	"  --truth FILE        append ground truth as JSON lines\n"
	"  --blocks N          blocks allocated and written (default 1024)\n"
	"  --block-kb N        each this many KiB (default 96)\n"
	"  --phase-seconds S   a phase every S seconds: odd, quarter, trim, touch\n"
	"                      (default 4)\n",
	.options = options,
	.option = option,
};

int main(int argc, char **argv)
{
	double next;

	parse_options(argc, argv, &cli);
	target_begin(NULL);
	build();
	truth_write("ready");
	printf("ready\n");
	fflush(stdout);
	next = now() + opt.phase_seconds;
	for (;;) {
		double t = now(), until = t + 1;
		int sig;

		if (t >= t0 + run_seconds)
			break;
		if (phase_i < (int)(sizeof(phases) / sizeof(phases[0])) && t >= next) {
			next_phase();
			next = t + opt.phase_seconds;
		} else {
			truth_write(NULL);
		}
		if (phase_i < (int)(sizeof(phases) / sizeof(phases[0])) && next < until)
			until = next;
		if (until > t0 + run_seconds)
			until = t0 + run_seconds;
		sig = wait_signal(until);
		if (sig == SIGTERM || sig == SIGINT)
			break;
	}
	truth_write("exit");
	truth_close();
	return 0;
}

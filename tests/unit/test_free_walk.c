/*
 * test_free_walk.c — free memory on resident pages (sample/free_walk.h):
 * the cadence that keeps the walks' CPU within a budget, and a walk of a
 * forked child whose free bytes are known (resident, then given back with
 * MADV_DONTNEED, then the child gone: no figure, never a wrong one).
 */
#include "harness.h"

#include "sample/free_walk.h"

#include <fcntl.h>
#include <gnu/libc-version.h>
#include <malloc.h>
#include <math.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- the cadence ---- */

static void test_free_walk__cadence_defaults(void)
{
	struct vt_free_cadence c;

	vt_free_cadence_init(&c, 0, 0);
	CHECK(c.every_s == 60 && c.budget == 0.01);
	vt_free_cadence_init(&c, 5, 2);      /* a budget above a core: the default */
	CHECK(c.every_s == 5 && c.budget == 0.01);
	CHECK(vt_free_cadence_due(&c, 0.0));  /* the first walk at once */
	CHECK(vt_free_cadence_due(&c, 123.0));
}

static void test_free_walk__cheap_walks_keep_every(void)
{
	struct vt_free_cadence c;

	vt_free_cadence_init(&c, 10, 0.01);
	vt_free_cadence_done(&c, 100, 0.01);            /* 10 ms: 1 s of gap would do */
	CHECK(!vt_free_cadence_due(&c, 105));
	CHECK(!vt_free_cadence_due(&c, 109.7));
	CHECK(vt_free_cadence_due(&c, 109.8));          /* a tick a little early still walks */
	CHECK(fabs(vt_free_cadence_gap(&c) - 9.75) < 1e-9);
	CHECK(c.walks == 1 && fabs(c.cpu_s - 0.01) < 1e-12);
	vt_free_cadence_done(&c, 110, -1);              /* a clock that failed counts nothing */
	CHECK(c.walks == 2 && fabs(c.cpu_s - 0.01) < 1e-12);
}

static void test_free_walk__dear_walks_are_spaced_by_the_budget(void)
{
	struct vt_free_cadence c;

	vt_free_cadence_init(&c, 10, 0.01);
	vt_free_cadence_done(&c, 100, 0.5);             /* 500 ms at 1%: 50 s apart */
	CHECK(fabs(vt_free_cadence_gap(&c) - 50) < 1e-9);
	CHECK(!vt_free_cadence_due(&c, 149.9));
	CHECK(vt_free_cadence_due(&c, 150));
	CHECK(c.max_cpu_s == 0.5);
}

/*
 * Over a simulated hour of ticks every second, with walks whose cost
 * swings from 1 ms to 2 s, the walks' CPU stays within the budget (plus
 * the last walk, paid before its gap runs out).
 */
static void test_free_walk__budget_holds_over_time(void)
{
	struct vt_free_cadence c;
	double t, budget = 0.02;
	unsigned k = 0;

	vt_free_cadence_init(&c, 1, budget);
	for (t = 0; t < 3600; t += 1) {
		if (!vt_free_cadence_due(&c, t))
			continue;
		vt_free_cadence_done(&c, t, (k++ % 7) == 3 ? 2.0 : 0.001 * (double)(k % 5 + 1));
	}
	printf("# %u walks, %.2f s of CPU over 3600 s (budget %.0f s)\n", c.walks, c.cpu_s, budget * 3600);
	CHECK(c.cpu_s <= budget * 3600 + c.max_cpu_s);
	CHECK(c.walks > 100);        /* the cheap ones still walk often */
}

/* ---- a live walk ---- */

#define BLOCKS 64
#define BLOCK (64u << 10)

/*
 * The child: BLOCKS blocks written, the odd ones freed (each between two
 * live ones), so BLOCKS / 2 free chunks of one block each, all resident.
 * It says how many free bytes that is on the pipe, then, at a byte from the
 * parent, gives the free pages back (malloc_trim) and says so again.
 */
static void child(int to_parent, int from_parent)
{
	char *b[BLOCKS];
	uint64_t freed = 0;
	size_t usable;
	char c;
	int i;

	mallopt(M_MMAP_THRESHOLD, 4 << 20);
	mallopt(M_TRIM_THRESHOLD, 1 << 30);
	mallopt(M_TOP_PAD, 0);
	for (i = 0; i < BLOCKS; i++) {
		b[i] = malloc(BLOCK);
		memset(b[i], 0x5a, BLOCK);
	}
	usable = malloc_usable_size(b[0]);
	for (i = 1; i < BLOCKS - 1; i += 2) {
		free(b[i]);
		freed += usable + 8;       /* the chunk: header to the next chunk's header */
	}
	if (write(to_parent, &freed, sizeof(freed)) != sizeof(freed) || read(from_parent, &c, 1) != 1)
		_exit(1);
	malloc_trim(0);
	if (write(to_parent, &freed, sizeof(freed)) != sizeof(freed))
		_exit(1);
	pause();
	_exit(0);
}

static void test_free_walk__live_child_then_gone(void)
{
	struct vt_alloc_info alloc = { .kind = VT_ALLOC_GLIBC };
	struct vt_free_figures f;
	struct vt_free_walk *fw = NULL;
	struct vt_procfs pfs;
	struct vt_err err;
	uint64_t freed = 0;
	int up[2], down[2], dirfd, rc, i;
	char path[64];
	pid_t pid;

#if defined(__SANITIZE_ADDRESS__)
	printf("# under AddressSanitizer malloc is the sanitizer's, not glibc's: nothing to walk\n");
	return;
#endif
	snprintf(alloc.version, sizeof(alloc.version), "%s", gnu_get_libc_version());
	CHECK(vt_procfs_open(&pfs, NULL, NULL, &err) == VT_OK);
	CHECK(pipe(up) == 0 && pipe(down) == 0);
	pid = fork();
	if (pid == 0)
		child(up[1], down[0]);
	CHECK(read(up[0], &freed, sizeof(freed)) == sizeof(freed));
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(dirfd >= 0);
	CHECK(vt_free_walk_open(&pfs, dirfd, pid, &alloc, &fw, &err) == VT_OK);

	/* every freed byte is resident; the child's other free memory is a few KiB at most */
	for (i = 0, rc = VT_E_BUSY; i < 3 && rc != VT_OK; i++)
		rc = vt_free_walk_take(fw, &f, &err);
	if (rc)
		printf("#   walk: %s\n", err.msg);
	CHECK_EQ_I64(rc, VT_OK);
	printf("# freed %llu: free_resident %.0f, trimmable %.0f, free %.0f; %.2f ms CPU, %llu bytes read\n",
	       (unsigned long long)freed, f.free_resident, f.trimmable, f.free_bytes, f.cpu_s * 1e3,
	       (unsigned long long)f.read_bytes);
	CHECK(f.free_resident >= (double)freed && f.free_resident <= (double)freed + 64 * 1024);
	CHECK(f.trimmable >= (double)freed - (BLOCKS / 2) * 2 * 4096.0 && f.trimmable <= f.free_resident);
	CHECK(f.arenas == 1);

	/* the trim gives the pages back: the free bytes stay, their resident part falls */
	CHECK(write(down[1], "t", 1) == 1);
	CHECK(read(up[0], &freed, sizeof(freed)) == sizeof(freed));
	CHECK_EQ_I64(vt_free_walk_take(fw, &f, &err), VT_OK);
	printf("# after malloc_trim: free_resident %.0f, trimmable %.0f, free %.0f\n", f.free_resident, f.trimmable,
	       f.free_bytes);
	CHECK(f.free_resident < 0.1 * (double)freed && f.free_bytes >= (double)freed);
	CHECK(f.trimmable < 8 * 4096.0);

	/* gone: no figure */
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	rc = vt_free_walk_take(fw, &f, &err);
	printf("# after the child's exit: %s (%s)\n", vt_code_name(rc), err.msg);
	CHECK(rc != VT_OK && isnan(f.free_resident) && isnan(f.trimmable));
	CHECK(!vt_free_walk_refusal_lasts(VT_E_GONE) && vt_free_walk_refusal_lasts(VT_E_PERM));
	vt_free_walk_close(fw);
	close(dirfd);
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);
	vt_procfs_close(&pfs);
}

static void test_free_walk__not_glibc_refused(void)
{
	struct vt_alloc_info alloc = { .kind = VT_ALLOC_JEMALLOC };
	struct vt_free_walk *fw = NULL;
	struct vt_procfs pfs;
	struct vt_err err;

	CHECK(vt_procfs_open(&pfs, NULL, NULL, &err) == VT_OK);
	CHECK_EQ_I64(vt_free_walk_open(&pfs, -1, getpid(), &alloc, &fw, &err), VT_E_UNSUPPORTED);
	CHECK(fw == NULL && strstr(err.msg, "jemalloc") != NULL);
	alloc.kind = VT_ALLOC_GLIBC;
	snprintf(alloc.version, sizeof(alloc.version), "2.17");
	CHECK_EQ_I64(vt_free_walk_open(&pfs, -1, getpid(), &alloc, &fw, &err), VT_E_UNSUPPORTED);
	vt_procfs_close(&pfs);
}

VT_TEST_MAIN(test_free_walk__cadence_defaults, test_free_walk__cheap_walks_keep_every,
	     test_free_walk__dear_walks_are_spaced_by_the_budget, test_free_walk__budget_holds_over_time,
	     test_free_walk__live_child_then_gone, test_free_walk__not_glibc_refused)

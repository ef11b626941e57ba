/*
 * snap_parts — what the parts of one vitals snapshot cost, each on its own.
 *
 *   snap_parts PID ITERATIONS
 *
 * Opens /proc/PID once, as vt_sample_take() does, then ITERATIONS times
 * (after one warm-up pass) makes the same library calls as src/sample/sample.c:
 *
 *   list     vt_task_list alone (readdir of task/), per listing
 *   stat     vt_task_list + vt_read_at + vt_proc_stat_parse of every
 *            task/TID/stat (read_threads, every snapshot), per thread
 *   syscall  vt_read_at + vt_syscall_parse_sp of every task/TID/syscall
 *            (read_threads, full snapshots only), per thread
 *   maps_read, maps_parse    vt_read_at, then vt_maps_parse, of maps
 *                            (read_regions, --light), per read
 *   smaps_read, smaps_parse  the same for smaps (read_regions, full)
 *   probe    one 16-byte vt_mem_read (process_vm_readv) at the start of an
 *            anonymous rw-p mapping: the first read of is_mmapped_chunks()
 *            in src/alloc/regions.c, per mapping
 *   classify_light, classify_full  vt_regions_classify without memory
 *            reads, on the maps regions, then on the smaps regions with the
 *            threads' stack pointers (as full snapshots pass them), per call
 *
 * CPU is this process's own, user + sys (CLOCK_PROCESS_CPUTIME_ID).  Prints
 * "threads N", "anon_rw N", then "NAME median_us max_us" per part.  Built and
 * run by bench/snap.
 */
#include "alloc/regions.h"
#include "proc/maps.h"
#include "proc/mem.h"
#include "proc/procfs.h"
#include "proc/stat.h"
#include "proc/task.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum {
	LIST, STAT, SYSCALL, MAPS_READ, MAPS_PARSE, SMAPS_READ, SMAPS_PARSE, PROBE,
	CLASSIFY_LIGHT, CLASSIFY_FULL, NPARTS
};
static const char *const part_name[NPARTS] = {
	"list", "stat", "syscall", "maps_read", "maps_parse", "smaps_read", "smaps_parse", "probe",
	"classify_light", "classify_full",
};

static struct vt_buf buf = VT_BUF_INIT(VT_PROC_FILE_MAX);
static int pid_fd;
static pid_t pid;

static double cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void die(const char *what, const struct vt_err *e)
{
	fprintf(stderr, "snap_parts: %s: %s\n", what, e ? e->msg : "failed");
	exit(2);
}

/* What vitals probes for a glibc mmapped-chunk header (src/alloc/regions.c). */
static bool probed(const struct vt_region *r)
{
	return r->inode == 0 && r->path[0] == '\0' && !memcmp(r->perms, "rw-p", 4) &&
	       vt_region_size(r) >= VT_MMAP_THRESHOLD_MIN;
}

/*
 * Read, then parse, maps or smaps, timing both; returns the number of
 * mappings vitals would probe.
 */
static size_t regions(const char *file, struct vt_region_list *list, double *t_read,
		      double *t_parse)
{
	struct vt_err err;
	size_t i, n = 0;
	double t0 = cpu_us();

	memset(list, 0, sizeof(*list));
	if (vt_read_at(pid_fd, file, &buf, &err))
		die(file, &err);
	*t_read = cpu_us() - t0;
	t0 = cpu_us();
	if (vt_maps_parse(buf.data, buf.len, list, &err))
		die(file, &err);
	*t_parse = cpu_us() - t0;
	for (i = 0; i < list->n; i++)
		n += probed(&list->v[i]);
	return n;
}

int main(int argc, char **argv)
{
	struct vt_procfs pfs;
	struct vt_err err;
	double *t[NPARTS], t0;
	size_t n = 0, i, nthreads = 0, anon_rw = 0;
	int iters, it, k;
	pid_t *tids;
	struct vt_thread_sp *sps;
	char name[64];

	if (argc != 3 || (pid = (pid_t)atoi(argv[1])) <= 0 || (iters = atoi(argv[2])) <= 0) {
		fprintf(stderr, "usage: snap_parts PID ITERATIONS\n");
		return 64;
	}
	for (k = 0; k < NPARTS; k++)
		if (!(t[k] = calloc((size_t)iters + 1, sizeof(double))))
			return 2;
	if (vt_procfs_open(&pfs, NULL, NULL, &err))
		die("open /proc", &err);
	if (vt_pid_open(&pfs, pid, &pid_fd, &err))
		die("open the process", &err);

	for (it = 0; it <= iters; it++) {	/* pass 0 warms up: stored, not reported */
		struct vt_region_list list;
		struct vt_classify_ctx ctx = { 0 };
		struct vt_arena_summary arenas;
		size_t parsed = 0, n_sps = 0;
		uint64_t word[2];

		t0 = cpu_us();
		if (vt_task_list(pid_fd, &tids, &n, &err))
			die("list threads", &err);
		t[LIST][it] = cpu_us() - t0;
		for (i = 0; i < n; i++) {
			struct vt_proc_stat ts;

			snprintf(name, sizeof(name), "task/%d/stat", (int)tids[i]);
			if (vt_read_at(pid_fd, name, &buf, NULL) == VT_OK &&
			    vt_proc_stat_parse(buf.data, buf.len, &ts, NULL) == VT_OK)
				parsed++;
		}
		t[STAT][it] = (cpu_us() - t0) / (double)(n ? n : 1);
		if (!n || parsed != n) {
			fprintf(stderr, "snap_parts: parsed %zu of %zu task/TID/stat files\n", parsed, n);
			return 2;
		}
		sps = calloc(n, sizeof(*sps));
		if (!sps)
			return 2;
		t0 = cpu_us();
		for (i = 0; i < n; i++) {
			snprintf(name, sizeof(name), "task/%d/syscall", (int)tids[i]);
			if (vt_read_at(pid_fd, name, &buf, NULL) == VT_OK &&
			    vt_syscall_parse_sp(buf.data, buf.len, &sps[n_sps].sp))
				sps[n_sps++].tid = tids[i];
		}
		vt_thread_sp_sort(sps, n_sps);
		t[SYSCALL][it] = (cpu_us() - t0) / (double)n;
		free(tids);
		nthreads = n;

		regions("smaps", &list, &t[SMAPS_READ][it], &t[SMAPS_PARSE][it]);
		ctx.alloc = VT_ALLOC_GLIBC;
		ctx.threads = sps;
		ctx.n_threads = n_sps;
		t0 = cpu_us();
		vt_regions_classify(&list, &ctx, &arenas);
		t[CLASSIFY_FULL][it] = cpu_us() - t0;
		vt_region_list_release(&list);
		free(sps);

		anon_rw = regions("maps", &list, &t[MAPS_READ][it], &t[MAPS_PARSE][it]);
		memset(&ctx, 0, sizeof(ctx));
		ctx.alloc = VT_ALLOC_GLIBC;
		t0 = cpu_us();
		vt_regions_classify(&list, &ctx, &arenas);
		t[CLASSIFY_LIGHT][it] = cpu_us() - t0;

		t0 = cpu_us();
		for (i = 0; i < list.n; i++) {
			const struct vt_region *r = &list.v[i];

			if (probed(r) && vt_mem_read(pid, r->start, word, sizeof(word), &err) != VT_OK)
				die("process_vm_readv", &err);
		}
		t[PROBE][it] = (cpu_us() - t0) / (double)(anon_rw ? anon_rw : 1);
		vt_region_list_release(&list);
	}
	close(pid_fd);
	vt_procfs_close(&pfs);
	vt_buf_release(&buf);

	printf("threads %zu\nanon_rw %zu\n", nthreads, anon_rw);
	for (k = 0; k < NPARTS; k++) {
		double *v = t[k] + 1;

		qsort(v, (size_t)iters, sizeof(*v), cmp_double);
		printf("%s %.3f %.3f\n", part_name[k],
		       iters % 2 ? v[iters / 2] : (v[iters / 2 - 1] + v[iters / 2]) / 2, v[iters - 1]);
		free(t[k]);
	}
	return 0;
}

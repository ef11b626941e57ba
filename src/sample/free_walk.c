/*
 * free_walk.c — free memory on resident pages, walked again and again
 * without stopping the process (see free_walk.h).
 */
#include "sample/free_walk.h"

#include "alloc/glibc.h"
#include "alloc/glibc_heap.h"
#include "base/buf.h"
#include "base/clock.h"
#include "proc/maps.h"
#include "proc/mem.h"
#include "proc/procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_EVERY_S 60.0
#define DEFAULT_BUDGET 0.01
#define MAIN_ARENA_TRIES 5
/*
 * Walks of one take before it gives no figure: on a heap that 8 threads
 * churn at 20,000 allocations a second, 3 walks in 8 met a stretch that
 * changed under them (arena_churn); each try is paid for in the cadence.
 */
#define WALK_TRIES 3

void vt_free_cadence_init(struct vt_free_cadence *c, double every_s, double budget)
{
	memset(c, 0, sizeof(*c));
	c->every_s = every_s > 0 ? every_s : DEFAULT_EVERY_S;
	c->budget = budget > 0 && budget <= 1 ? budget : DEFAULT_BUDGET;
}

bool vt_free_cadence_due(const struct vt_free_cadence *c, double now)
{
	return c->next <= 0 || now >= c->next;
}

/*
 * The caller's ticks land a little late or early (a tick at 2.0001 s after
 * a walk at 1.0002 s with --free-every 1s): a walk is due up to this much
 * before every_s is up, so that it is taken at the tick the user expects,
 * never sooner than the budget allows.
 */
static double slack(const struct vt_free_cadence *c)
{
	return fmin(0.1 * c->every_s, 0.25);
}

double vt_free_cadence_gap(const struct vt_free_cadence *c)
{
	return fmax(c->every_s - slack(c), c->last_cpu_s / c->budget);
}

void vt_free_cadence_done(struct vt_free_cadence *c, double now, double cpu_s)
{
	if (!(cpu_s >= 0))
		cpu_s = 0;
	c->walks++;
	c->cpu_s += cpu_s;
	c->last_cpu_s = cpu_s;
	c->max_cpu_s = fmax(c->max_cpu_s, cpu_s);
	c->next = now + vt_free_cadence_gap(c);
}

/* ---- reading the process ---- */

struct vt_free_walk {
	const struct vt_procfs *pfs;
	int dirfd;                   /* borrowed */
	pid_t pid;
	struct vt_mem_target mem;    /* pagemap_fd -1: not open (then every page counts as resident: refused) */
	bool safe_linking, key_is_tcache;
	uint64_t main_arena;         /* 0: to be found */
	struct vt_buf buf;
};

static unsigned glibc_version(const char *v)
{
	unsigned major = 0, minor = 0;

	if (sscanf(v, "%u.%u", &major, &minor) != 2)
		return 0;
	return major * 1000 + minor;
}

int vt_free_walk_open(const struct vt_procfs *pfs, int dirfd, pid_t pid, const struct vt_alloc_info *alloc,
		      struct vt_free_walk **out, struct vt_err *err)
{
	struct vt_free_walk *fw;
	unsigned v = glibc_version(alloc->version);

	*out = NULL;
	if (alloc->sanitizer[0])
		return vt_err_set(err, VT_E_UNSUPPORTED, 0, "its heap is %s's, not glibc's", alloc->sanitizer);
	if (alloc->kind != VT_ALLOC_GLIBC)
		return vt_err_set(err, VT_E_UNSUPPORTED, 0, "its malloc is %s; free memory on resident pages is "
				  "read from glibc malloc's chunks", vt_alloc_kind_name(alloc->kind));
	if (alloc->is_static)
		return vt_err_set(err, VT_E_UNSUPPORTED, 0, "it links glibc statically: main_arena cannot be found");
	if (v && v < 2027)
		return vt_err_set(err, VT_E_UNSUPPORTED, 0, "it runs glibc %s; the walk reads the malloc layout "
				  "of glibc 2.27 and later", alloc->version);
	if (!pfs->live)
		return vt_err_set(err, VT_E_UNSUPPORTED, 0, "a recorded /proc tree has no memory to walk");
	fw = calloc(1, sizeof(*fw));
	if (!fw)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
	fw->pfs = pfs;
	fw->dirfd = dirfd;
	fw->pid = pid;
	fw->mem.pid = pid;
	fw->mem.pagemap_fd = -1;
	fw->safe_linking = !v || v >= 2032;
	fw->key_is_tcache = v && v >= 2029 && v < 2034;
	fw->buf = (struct vt_buf)VT_BUF_INIT(VT_PROC_FILE_MAX);
	*out = fw;
	return VT_OK;
}

void vt_free_walk_close(struct vt_free_walk *fw)
{
	if (!fw)
		return;
	if (fw->mem.pagemap_fd >= 0)
		close(fw->mem.pagemap_fd);
	vt_buf_release(&fw->buf);
	free(fw);
}

bool vt_free_walk_refusal_lasts(int code)
{
	return code == VT_E_PERM || code == VT_E_UNSUPPORTED;
}

static double thread_cpu_s(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A failed read of the process's memory: gone, refused, or changed under the walk. */
static int read_failed(struct vt_free_walk *fw, const char *what, struct vt_err *err)
{
	int e = fw->mem.last_errno;

	if (e == ESRCH)
		return vt_err_set(err, VT_E_GONE, e, "process %d exited", (int)fw->pid);
	if (e == EPERM || e == EACCES)
		return vt_err_set(err, VT_E_PERM, e, "cannot read the memory of %d (%s)", (int)fw->pid, what);
	return vt_err_set(err, VT_E_BUSY, e, "%s of %d changed while read", what, (int)fw->pid);
}

static int walk(struct vt_free_walk *fw, struct vt_free_figures *out, struct vt_err *err)
{
	const struct vt_heap_mem m = { vt_mem_target_read, vt_mem_target_resident, &fw->mem, vt_mem_target_read_each };
	struct vt_region_list maps = { 0 };
	struct vt_heap_walk w = { 0 };
	struct vt_heap_walk_opts wo = { .safe_linking = fw->safe_linking, .key_is_tcache = fw->key_is_tcache,
					.arenas_only = true };
	uint64_t skipped = 0;
	size_t i;
	int rc;

	if (fw->mem.pagemap_fd < 0) {
		fw->mem.pagemap_fd = openat(fw->dirfd, "pagemap", O_RDONLY | O_CLOEXEC);
		if (fw->mem.pagemap_fd < 0) {
			int e = errno;

			return vt_err_set(err, e == ENOENT || e == ESRCH ? VT_E_GONE : e == EACCES || e == EPERM
					  ? VT_E_PERM : VT_E_IO, e, "cannot open pagemap of %d", (int)fw->pid);
		}
	}
	/* maps afresh: a heap grown since the last walk must be walked to its end */
	if ((rc = vt_read_at(fw->dirfd, "maps", &fw->buf, err)) != VT_OK ||
	    (rc = vt_maps_parse(fw->buf.data, fw->buf.len, &maps, err)) != VT_OK)
		goto out;
	if (!fw->main_arena) {
		rc = vt_glibc_main_arena_locate(fw->pfs, fw->pid, &maps, &m, MAIN_ARENA_TRIES, &fw->main_arena, err);
		if (rc == VT_E_IO) {
			rc = read_failed(fw, "libc's code", err);
			goto out;
		}
		if (rc == VT_E_NOTFOUND) {
			rc = vt_err_set(err, VT_E_UNSUPPORTED, 0, "main_arena not found in %d: no address mallinfo2's "
					"code loads checked as a malloc arena", (int)fw->pid);
			goto out;
		}
		if (rc != VT_OK)
			goto out;
	}
	wo.main_arena = fw->main_arena;
	wo.maps = &maps;
	wo.deadline_s = vt_mono_s() + VT_FREE_WALK_DEADLINE_S;
	fw->mem.last_errno = 0;
	fw->mem.resident_failed = false;
	rc = vt_heap_walk(&m, &wo, &w, err);
	if (rc == VT_E_PARSE || rc == VT_E_GONE) {
		fw->main_arena = 0;     /* found again at the next walk */
		rc = fw->mem.last_errno ? read_failed(fw, "the heap", err)
				    : vt_err_set(err, VT_E_BUSY, 0, "the arenas of %d changed while read", (int)fw->pid);
		goto out;
	}
	if (rc == VT_E_TIMEOUT) {
		rc = vt_err_set(err, VT_E_BUSY, 0, "the walk of %d's heap took longer than %.0f s: given up",
				(int)fw->pid, VT_FREE_WALK_DEADLINE_S);
		goto out;
	}
	if (rc != VT_OK)
		goto out;
	out->free_resident = out->trimmable = out->free_bytes = 0;
	for (i = 0; i < w.narenas; i++) {
		const struct vt_arena_walk *aw = &w.arenas[i];

		skipped += aw->skipped;
		out->free_resident += (double)aw->free_resident;
		out->trimmable += (double)aw->trimmable;
		out->free_bytes += (double)(aw->bytes[VT_CHUNK_BIN] + aw->bytes[VT_CHUNK_FAST] +
					    aw->bytes[VT_CHUNK_TCACHE] + aw->bytes[VT_CHUNK_TOP]);
	}
	out->arenas = (unsigned)w.narenas;
	out->read_bytes = w.read_bytes;
	if (fw->mem.resident_failed) {
		rc = vt_err_set(err, VT_E_BUSY, 0, "pagemap of %d could not be read for every page: which free "
				"bytes are resident is unknown this time", (int)fw->pid);
	} else if (skipped) {
		/* a figure without that stretch would be too low: none at all */
		if (fw->mem.last_errno == ESRCH)
			rc = read_failed(fw, "the heap", err);
		else
			rc = vt_err_set(err, VT_E_BUSY, 0, "%llu bytes of %d's heap changed under the walk and were "
					"skipped: no figure this time", (unsigned long long)skipped, (int)fw->pid);
	}
out:
	vt_heap_walk_release(&w);
	vt_region_list_release(&maps);
	return rc;
}

int vt_free_walk_take(struct vt_free_walk *fw, struct vt_free_figures *out, struct vt_err *err)
{
	double c0 = thread_cpu_s(), t0 = vt_mono_s();
	int rc;

	for (int i = 0; i < WALK_TRIES; i++) {
		memset(out, 0, sizeof(*out));
		rc = walk(fw, out, err);
		if (rc != VT_E_BUSY || vt_mono_s() - t0 > VT_FREE_WALK_DEADLINE_S)
			break;
	}
	if (rc != VT_OK) {
		out->free_resident = out->trimmable = out->free_bytes = NAN;
		out->arenas = 0;
		out->read_bytes = 0;
	}
	out->cpu_s = thread_cpu_s() - c0;
	out->wall_s = vt_mono_s() - t0;
	return rc;
}

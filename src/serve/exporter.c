/*
 * exporter.c — one scrape of every target into a struct vt_prom (see
 * exporter.h): resolve what is due, read each process (exp_proc.c), then
 * add the families below, summed over a target's processes.  The families
 * and their labels are listed once, in families[]; docs/metrics.md
 * documents each (t0010 checks it against vt_exporter_family).
 */
#include "serve/exp_internal.h"

#include "base/clock.h"
#include "base/unknown.h"
#include "proc/cgroup.h"
#include "proc/psi.h"
#include "sample/metric.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

struct family {
	const char *name;
	enum vt_prom_type type;
	const char *unit;
	const char *help;
};

/* Every family, in the order they are written.  Labels besides target in the help. */
static const struct family families[] = {
	{ "vitals_target_up", VT_PROM_GAUGE, NULL, "1 when the target's processes were found and read, 0 when not" },
	{ "vitals_target_error_info", VT_PROM_GAUGE, NULL,
	  "Why a target is down (reason: not_found, gone, permission, zombie, kernel_thread, bad_pidfile, "
	  "not_a_process, cgroup_gone, error)" },
	{ "vitals_target_processes", VT_PROM_GAUGE, NULL, "Processes the target resolved to" },
	{ "vitals_target_unread_info", VT_PROM_GAUGE, NULL,
	  "A part of the target vitals could not read, its figures left out (part: fds, maps, heap; reason: "
	  "permission, unsupported, busy, error); vitals caps PID says what grants it" },
	{ "vitals_target_restarts", VT_PROM_COUNTER, NULL,
	  "Times one of the target's processes left it and another came (a restart)" },
	{ "vitals_target_info", VT_PROM_GAUGE, NULL, "The target's first process: comm and allocator" },
	{ "process_resident_memory_bytes", VT_PROM_GAUGE, "bytes", "Resident memory (VmRSS), summed over the target's processes" },
	{ "process_virtual_memory_bytes", VT_PROM_GAUGE, "bytes", "Virtual memory size (VmSize), summed" },
	{ "vitals_process_virtual_memory_peak_bytes", VT_PROM_GAUGE, "bytes", "Peak virtual memory size (VmPeak), summed" },
	{ "process_cpu_seconds", VT_PROM_COUNTER, "seconds",
	  "CPU time by mode (user, system), summed; processes that left the target keep their share" },
	{ "process_start_time_seconds", VT_PROM_GAUGE, "seconds", "Start time of the oldest process, unix time" },
	{ "process_open_fds", VT_PROM_GAUGE, NULL, "Open file descriptors, summed" },
	{ "process_max_fds", VT_PROM_GAUGE, NULL, "Soft limit on open file descriptors, summed" },
	{ "vitals_process_memory_bytes", VT_PROM_GAUGE, "bytes",
	  "Memory by memtype: rss_anon, rss_file, rss_shmem, swap, committed (rss_anon + swap), summed" },
	{ "vitals_process_threads", VT_PROM_GAUGE, NULL,
	  "Threads by state: running, sleeping, disk, stopped, zombie, idle, other" },
	{ "vitals_process_context_switches", VT_PROM_COUNTER, NULL,
	  "Context switches of every thread by ctxswitchtype (voluntary, nonvoluntary), exited threads included" },
	{ "vitals_thread_pool_cpu_seconds", VT_PROM_COUNTER, "seconds",
	  "CPU time by thread pool (thread name without trailing digits and separators; at most 64, then "
	  "pool=\"other\") and mode, exited threads included" },
	{ "vitals_thread_pool_threads", VT_PROM_GAUGE, NULL, "Live threads by thread pool" },
	{ "vitals_glibc_arenas", VT_PROM_GAUGE, NULL, "glibc malloc arenas, the main one included (from maps and heap headers)" },
	{ "vitals_heap_regions_64m", VT_PROM_GAUGE, NULL, "64 MiB glibc arena heap reservations (from maps)" },
	{ "vitals_heap_live_bytes", VT_PROM_GAUGE, "bytes", "Allocator: bytes in live allocations" },
	{ "vitals_heap_free_bytes", VT_PROM_GAUGE, "bytes", "Allocator: free bytes it holds" },
	{ "vitals_heap_total_bytes", VT_PROM_GAUGE, "bytes", "Allocator: bytes it got from the system" },
	{ "vitals_heap_keepcost_bytes", VT_PROM_GAUGE, "bytes", "glibc keepcost: what malloc_trim could return from the top" },
	{ "vitals_heap_age_seconds", VT_PROM_GAUGE, "seconds", "Age of the allocator figures (read at most every heap interval)" },
	{ "vitals_heap_free_resident_bytes", VT_PROM_GAUGE, "bytes",
	  "glibc: bytes of free chunks on resident pages, the free memory that costs RAM (a heap walk)" },
	{ "vitals_heap_trimmable_bytes", VT_PROM_GAUGE, "bytes",
	  "glibc: resident whole pages of free chunks malloc_trim(0) could give back (a heap walk)" },
	{ "vitals_heap_free_walk_age_seconds", VT_PROM_GAUGE, "seconds",
	  "Age of the two figures above (a walk at most every --free-every, within its CPU budget)" },
	{ "vitals_heap_source_info", VT_PROM_GAUGE, NULL, "Where the allocator figures come from (source: agent, ptrace, none)" },
	{ "vitals_cgroup_memory_current_bytes", VT_PROM_GAUGE, "bytes", "Memory of the first process's cgroup" },
	{ "vitals_cgroup_memory_max_bytes", VT_PROM_GAUGE, "bytes", "Its memory limit (absent when none)" },
	{ "vitals_cgroup_memory_events", VT_PROM_COUNTER, NULL, "Its memory events by event (low, high, max, oom, oom_kill)" },
	{ "vitals_cgroup_pressure_stall_seconds", VT_PROM_COUNTER, "seconds",
	  "Its pressure stall time (PSI total) by resource (memory, cpu, io) and kind (some, full)" },
	{ "vitals_listen_queue_depth", VT_PROM_GAUGE, NULL, "Connections waiting for accept() by listening address" },
	{ "vitals_listen_backlog", VT_PROM_GAUGE, NULL, "Accept queue limit by listening address (own network namespace only)" },
	{ "vitals_scrape_target_duration_seconds", VT_PROM_GAUGE, "seconds", "Time this scrape spent on the target" },
	{ "vitals_scrape_duration_seconds", VT_PROM_GAUGE, "seconds", "Time this scrape took to collect every target" },
	{ "vitals_exporter_cpu_seconds", VT_PROM_COUNTER, "seconds", "CPU time of the exporter itself by mode" },
	{ "vitals_exporter_resident_memory_bytes", VT_PROM_GAUGE, "bytes", "Resident memory of the exporter itself" },
	{ "vitals_exporter_scrapes", VT_PROM_COUNTER, NULL, "Scrapes collected" },
};

/* Unix time of boot, from /proc/stat btime; 0 unknown. */
static double boot_time(struct vt_exporter *x)
{
	const char *line;

	if (vt_procfs_read(x->pfs, "stat", &x->buf, NULL) != VT_OK || !(line = strstr(x->buf.data, "\nbtime ")))
		return 0;
	return strtod(line + 7, NULL);
}

int vt_exporter_open(const struct vt_procfs *pfs, const struct vt_exporter_config *cfg,
		     struct vt_exporter **out, struct vt_err *err)
{
	struct vt_exporter *x = calloc(1, sizeof(*x));
	size_t i;
	int rc;

	*out = NULL;
	if (!x || (cfg->ntargets && !(x->targets = calloc(cfg->ntargets, sizeof(*x->targets))))) {
		free(x);
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
	}
	x->pfs = pfs;
	x->heap_ptrace = cfg->heap_ptrace;
	x->heap_every_s = cfg->heap_every_s > 0 ? cfg->heap_every_s : EXP_HEAP_EVERY_DEFAULT_S;
	x->free_every_s = cfg->free_every_s < 0 ? 0 : cfg->free_every_s > 0 ? cfg->free_every_s
										: EXP_FREE_EVERY_DEFAULT_S;
	x->free_budget = cfg->free_budget > 0 ? cfg->free_budget : EXP_FREE_BUDGET_DEFAULT;
	x->self = getpid();
	x->buf = (struct vt_buf)VT_BUF_INIT(VT_PROC_FILE_MAX);
	x->boot_s = boot_time(x);
	for (i = 0; i < cfg->ntargets; i++) {
		if ((rc = exp_target_init(x, &cfg->targets[i], &x->targets[i], err)) != VT_OK) {
			vt_exporter_close(x);
			return rc;
		}
		x->ntargets++;
		/* one label, one set of series: two targets under one would collide in Prometheus */
		for (size_t j = 0; j < i; j++)
			if (strcmp(x->targets[j].label, x->targets[i].label) == 0) {
				vt_err_set(err, VT_E_USAGE, 0, "targets %zu and %zu are both labelled '%s'", j + 1,
					   i + 1, x->targets[i].label);
				vt_err_hint(err, "their series would collide: give one of them --label NAME");
				vt_exporter_close(x);
				return VT_E_USAGE;
			}
	}
	*out = x;
	return VT_OK;
}

void vt_exporter_close(struct vt_exporter *x)
{
	size_t i;

	if (!x)
		return;
	for (i = 0; i < x->ntargets; i++)
		exp_target_release(&x->targets[i]);
	free(x->targets);
	vt_buf_release(&x->buf);
	free(x);
}

size_t vt_exporter_target_count(const struct vt_exporter *x)
{
	return x->ntargets;
}

const char *vt_exporter_target_label(const struct vt_exporter *x, size_t i)
{
	return x->targets[i].label;
}

int vt_exporter_target_pids(struct vt_exporter *x, size_t i, pid_t *pids, size_t cap, size_t *n,
			    struct vt_err *err)
{
	struct exp_target *t = &x->targets[i];
	int rc;

	*n = 0;
	if ((rc = exp_target_resolve(x, t, vt_mono_s(), false, err)) != VT_OK)
		return rc;
	for (size_t k = 0; k < t->nprocs && *n < cap; k++)
		pids[(*n)++] = t->procs[k]->pid;
	return VT_OK;
}

/* ---- reading ---- */

/* Read every process of t; a gone one is dropped and t resolved again at once. */
static int read_target(struct vt_exporter *x, struct exp_target *t, double now, struct vt_err *err)
{
	size_t i;
	int rc, round;

	if ((rc = exp_target_resolve(x, t, now, false, err)) != VT_OK)
		return rc;
	for (i = 0; i < t->nprocs; i++)
		t->procs[i]->read_now = false;
	for (round = 0; round < 2; round++) {
		bool lost = false;

		for (i = t->nprocs; i-- > 0;) {
			struct exp_proc *p = t->procs[i];
			struct vt_err e;

			if (p->read_now)
				continue;
			rc = exp_proc_read(x, t, p, now, &e);
			if (rc == VT_E_NOMEM)
				return vt_err_set(err, rc, ENOMEM, "%s", e.msg);
			if (rc != VT_OK) {
				exp_target_drop(t, i, true);
				lost = true;
			}
		}
		if (!lost)
			break;
		/* a restart that already happened is seen in this scrape */
		if ((rc = exp_target_resolve(x, t, now, true, err)) != VT_OK)
			return rc;
	}
	if (t->nprocs == 0 && !t->reason)
		t->reason = "gone";
	return VT_OK;
}

/* ---- exposition ---- */

/* Adds one sample with target=label and up to three more label pairs; the first error sticks. */
struct emit {
	struct vt_prom *p;
	const char *target;
	int rc;
};

static void put(struct emit *em, const char *family, double v, const char *k1, const char *v1, const char *k2,
		const char *v2, const char *k3, const char *v3)
{
	struct vt_prom_label l[4] = { { "target", em->target }, { k1, v1 }, { k2, v2 }, { k3, v3 } };
	size_t n = 1 + (k1 != NULL) + (k2 != NULL) + (k3 != NULL);
	int rc;

	if (em->rc != VT_OK)
		return;
	if (!em->target) {   /* the exporter's own figures */
		memmove(l, l + 1, 3 * sizeof(l[0]));
		n--;
	}
	if ((rc = vt_prom_add(em->p, family, v, n, l)) != VT_OK)
		em->rc = rc;
}

#define PUT0(em, fam, v) put(em, fam, v, NULL, NULL, NULL, NULL, NULL, NULL)
#define PUT1(em, fam, v, k, kv) put(em, fam, v, k, kv, NULL, NULL, NULL, NULL)
#define PUT2(em, fam, v, k, kv, k2, kv2) put(em, fam, v, k, kv, k2, kv2, NULL, NULL)

static double add_nan(double sum, double v)
{
	if (isnan(v))
		return sum;
	return isnan(sum) ? v : sum + v;
}

/*
 * The memory figures of the metric table that serve exports (its prom
 * column), each summed over the processes: what each process's status
 * gives, read as a sample (sample/metric.h), so a figure is one row there.
 */
static void emit_memory(struct emit *em, const struct exp_target *t)
{
	struct vt_sample s = { 0 };   /* of status only: the other sections stay unread */
	double sums[VT_M_COUNT];
	size_t i;
	int m;

	for (m = 0; m < VT_M_COUNT; m++)
		sums[m] = NAN;
	for (i = 0; i < t->nprocs; i++) {
		const struct exp_proc *p = t->procs[i];

		vt_sample_set_status(&s, &p->st);
		s.free_known = p->free_have;       /* the last walk's, however old: its age is exported */
		s.free_resident = p->free_resident;
		s.trimmable = p->trimmable;
		for (m = 0; m < VT_M_COUNT; m++)
			if (vt_metrics[m].prom && vt_metrics[m].of_sample)
				sums[m] = add_nan(sums[m], vt_metrics[m].of_sample(&s));
	}
	for (m = 0; m < VT_M_COUNT; m++)
		if (vt_metrics[m].prom)
			put(em, vt_metrics[m].prom, sums[m], vt_metrics[m].prom_label,
			    vt_metrics[m].prom_label_value, NULL, NULL, NULL, NULL);
}

static void emit_cpu_threads(struct emit *em, const struct exp_target *t, double boot_s)
{
	static const char *const states[] = { "running", "sleeping", "disk", "stopped", "zombie", "idle", "other" };
	double user = t->gone_user_s, sys = t->gone_sys_s, counter[VT_TC_COUNT];
	double fds = NAN, maxfds = NAN, start = NAN;
	int nstates[7] = { 0 }, k;
	size_t i, j;

	for (k = 0; k < VT_TC_COUNT; k++)
		counter[k] = (double)t->gone_counter[k];

	for (i = 0; i < t->nprocs; i++) {
		const struct exp_proc *p = t->procs[i];
		const struct vt_thread_states *s = &p->states;

		if (p->clk_tck > 0) {
			user += (double)p->utime / (double)p->clk_tck;
			sys += (double)p->stime / (double)p->clk_tck;
			if (boot_s > 0)
				start = fmin(isnan(start) ? INFINITY : start,
					     boot_s + (double)p->start_ticks / (double)p->clk_tck);
		}
		for (k = 0; k < VT_TC_COUNT; k++) {
			counter[k] += (double)p->gone_counter[k];
			for (j = 0; j < p->nthreads; j++)
				counter[k] += (double)p->threads[j].counter[k];
		}
		fds = add_nan(fds, p->open_fds);
		maxfds = add_nan(maxfds, p->max_fds);
		nstates[0] += s->running;
		nstates[1] += s->sleeping;
		nstates[2] += s->disk;
		nstates[3] += s->stopped;
		nstates[4] += s->zombie;
		nstates[5] += s->idle;
		nstates[6] += s->other;
	}
	PUT1(em, "process_cpu_seconds", user, "mode", "user");
	PUT1(em, "process_cpu_seconds", sys, "mode", "system");
	PUT0(em, "process_start_time_seconds", start);
	PUT0(em, "process_open_fds", fds);
	PUT0(em, "process_max_fds", maxfds);
	for (i = 0; i < 7; i++)
		PUT1(em, "vitals_process_threads", t->nprocs ? nstates[i] : NAN, "state", states[i]);
	for (k = 0; k < VT_TC_COUNT; k++)
		if (vt_thread_counters[k].prom)
			put(em, vt_thread_counters[k].prom, counter[k] * vt_thread_counters[k].rate_scale,
			    vt_thread_counters[k].prom_label, vt_thread_counters[k].prom_label_value,
			    NULL, NULL, NULL, NULL);
}

static void emit_pools(struct emit *em, struct exp_target *t)
{
	long clk_tck = t->nprocs && t->procs[0]->clk_tck > 0 ? t->procs[0]->clk_tck : sysconf(_SC_CLK_TCK);
	size_t i, j, k;

	for (k = 0; k < t->npools; k++) {
		t->pools[k].utime = t->pools[k].gone_utime;
		t->pools[k].stime = t->pools[k].gone_stime;
		t->pools[k].threads = 0;
	}
	for (i = 0; i < t->nprocs; i++)
		for (j = 0; j < t->procs[i]->nthreads; j++) {
			const struct exp_thread *th = &t->procs[i]->threads[j];
			struct exp_pool *pool = &t->pools[th->pool];

			pool->utime += th->utime - th->off_utime;
			pool->stime += th->stime - th->off_stime;
			pool->threads++;
		}
	for (k = 0; k < t->npools; k++) {
		const struct exp_pool *pool = &t->pools[k];

		PUT2(em, "vitals_thread_pool_cpu_seconds", (double)pool->utime / (double)clk_tck, "pool", pool->name,
		     "mode", "user");
		PUT2(em, "vitals_thread_pool_cpu_seconds", (double)pool->stime / (double)clk_tck, "pool", pool->name,
		     "mode", "system");
		PUT1(em, "vitals_thread_pool_threads", pool->threads, "pool", pool->name);
	}
}

static void emit_heap(struct emit *em, const struct exp_target *t, double now)
{
	double arenas = NAN, heaps = NAN, live = NAN, freeb = NAN, total = NAN, keep = NAN, age = NAN;
	const char *source = "none";
	double newest = -INFINITY;
	size_t i;

	for (i = 0; i < t->nprocs; i++) {
		const struct exp_proc *p = t->procs[i];

		arenas = add_nan(arenas, p->arenas);
		heaps = add_nan(heaps, p->heaps_64m);
		if (!p->heap_have)
			continue;
		live = add_nan(live, p->heap.live);
		freeb = add_nan(freeb, p->heap.free);
		total = add_nan(total, p->heap.held);
		keep = add_nan(keep, p->heap.trimmable);
		age = fmax(isnan(age) ? 0 : age, now - p->heap_at);   /* the oldest figures summed */
		if (p->heap_at > newest) {
			newest = p->heap_at;
			source = p->heap_method == VT_HEAP_AGENT ? "agent" : "ptrace";
		}
	}
	PUT0(em, "vitals_glibc_arenas", arenas);
	PUT0(em, "vitals_heap_regions_64m", heaps);
	PUT0(em, "vitals_heap_live_bytes", live);
	PUT0(em, "vitals_heap_free_bytes", freeb);
	PUT0(em, "vitals_heap_total_bytes", total);
	PUT0(em, "vitals_heap_keepcost_bytes", keep);
	PUT0(em, "vitals_heap_age_seconds", age);
	PUT1(em, "vitals_heap_source_info", 1, "source", source);
	for (i = 0, age = NAN; i < t->nprocs; i++)
		if (t->procs[i]->free_have)
			age = fmax(isnan(age) ? 0 : age, now - t->procs[i]->free_at);
	PUT0(em, "vitals_heap_free_walk_age_seconds", age);
}

static double u64d(uint64_t v)
{
	return vt_known(v) ? (double)v : NAN;
}

static void emit_psi(struct emit *em, const char *resource, const struct vt_psi_line *some,
		     const struct vt_psi_line *full)
{
	if (some->present)
		PUT2(em, "vitals_cgroup_pressure_stall_seconds", (double)some->total_us / 1e6, "resource", resource,
		     "kind", "some");
	if (full->present)
		PUT2(em, "vitals_cgroup_pressure_stall_seconds", (double)full->total_us / 1e6, "resource", resource,
		     "kind", "full");
}

/* The cgroup of the first process: memory figures and events, PSI of memory, cpu and io. */
static void emit_cgroup(struct emit *em, struct vt_exporter *x, const struct exp_target *t)
{
	static const char *const res[] = { "cpu", "io" };
	struct vt_cgroup_mem cg;
	size_t i;

	if (t->nprocs == 0 || vt_cgroup_read(x->pfs, vt_watch_dirfd(t->procs[0]->watch), &cg, NULL) != VT_OK || cg.version == 0)
		return;
	PUT0(em, "vitals_cgroup_memory_current_bytes", u64d(cg.usage));
	if (!cg.limit_is_max)
		PUT0(em, "vitals_cgroup_memory_max_bytes", u64d(cg.limit));
	PUT1(em, "vitals_cgroup_memory_events", u64d(cg.events_low), "event", "low");
	PUT1(em, "vitals_cgroup_memory_events", u64d(cg.events_high), "event", "high");
	PUT1(em, "vitals_cgroup_memory_events", u64d(cg.events_max), "event", "max");
	PUT1(em, "vitals_cgroup_memory_events", u64d(cg.events_oom), "event", "oom");
	PUT1(em, "vitals_cgroup_memory_events", u64d(cg.events_oom_kill), "event", "oom_kill");
	emit_psi(em, "memory", &cg.psi_some, &cg.psi_full);
	if (cg.version != 2)
		return;
	for (i = 0; i < 2; i++) {
		struct vt_psi_line some, full;
		char path[600];

		snprintf(path, sizeof(path), "%s/%s.pressure", cg.dir, res[i]);
		if (vt_sysfs_read(x->pfs, path, &x->buf, NULL) == VT_OK &&
		    vt_psi_parse(x->buf.data, x->buf.len, &some, &full, NULL) == VT_OK)
			emit_psi(em, res[i], &some, &full);
	}
}

/* Listening sockets of every process, one per socket (shared by a prefork's children), summed by address. */
static void emit_listen(struct emit *em, const struct exp_target *t)
{
	struct vt_listen_sock seen[EXP_MAX_LISTEN * 2];
	struct {
		const char *address;
		double queue, backlog;
	} by[EXP_MAX_LISTEN];
	size_t nseen = 0, nby = 0, i, j, k;

	for (i = 0; i < t->nprocs; i++)
		for (j = 0; j < t->procs[i]->nlisten; j++) {
			const struct vt_listen_sock *s = &t->procs[i]->listen[j];

			for (k = 0; k < nseen && seen[k].inode != s->inode; k++)
				;
			if (k < nseen || nseen == sizeof(seen) / sizeof(seen[0]))
				continue;
			seen[nseen++] = *s;
			for (k = 0; k < nby && strcmp(by[k].address, s->address); k++)
				;
			if (k == nby) {
				if (nby == EXP_MAX_LISTEN)
					continue;
				by[nby].address = seen[nseen - 1].address;
				by[nby].queue = 0;
				by[nby].backlog = 0;
				nby++;
			}
			by[k].queue += s->queue;
			by[k].backlog = s->backlog == VT_LISTEN_UNKNOWN || isnan(by[k].backlog) ? NAN
												: by[k].backlog + s->backlog;
		}
	for (k = 0; k < nby; k++) {
		PUT1(em, "vitals_listen_queue_depth", by[k].queue, "address", by[k].address);
		PUT1(em, "vitals_listen_backlog", by[k].backlog, "address", by[k].address);
	}
}

/* The parts some process of t refused, with the first reason given. */
static void emit_unread(struct emit *em, const struct exp_target *t)
{
	static const char *const parts[EXP_PART_COUNT] = {
		[EXP_PART_FDS] = "fds", [EXP_PART_MAPS] = "maps", [EXP_PART_HEAP] = "heap", [EXP_PART_FREE] = "free",
	};

	for (int k = 0; k < EXP_PART_COUNT; k++)
		for (size_t i = 0; i < t->nprocs; i++)
			if (t->procs[i]->unread[k]) {
				PUT2(em, "vitals_target_unread_info", 1, "part", parts[k], "reason",
				     t->procs[i]->unread[k]);
				break;
			}
}

static void emit_target(struct emit *em, struct vt_exporter *x, struct exp_target *t, double now, double boot_s)
{
	em->target = t->label;
	PUT0(em, "vitals_target_up", t->nprocs > 0);
	if (t->nprocs == 0)
		PUT1(em, "vitals_target_error_info", 1, "reason", t->reason ? t->reason : "not_found");
	PUT0(em, "vitals_target_processes", (double)t->nprocs);
	emit_unread(em, t);
	PUT0(em, "vitals_target_restarts", (double)t->restarts);
	if (t->nprocs > 0) {
		const struct exp_proc *p = t->procs[0];

		PUT2(em, "vitals_target_info", 1, "comm", p->comm, "allocator",
		     p->alloc.kind == VT_ALLOC_UNKNOWN ? "unknown" : vt_alloc_kind_name(p->alloc.kind));
		emit_memory(em, t);
	}
	emit_cpu_threads(em, t, boot_s);
	emit_pools(em, t);
	if (t->nprocs > 0) {
		emit_heap(em, t, now);
		emit_cgroup(em, x, t);
		emit_listen(em, t);
	}
	PUT0(em, "vitals_scrape_target_duration_seconds", t->took_s);
}

static void emit_self(struct emit *em, struct vt_exporter *x, double took)
{
	struct rusage ru;
	unsigned long size, resident;

	em->target = NULL;
	PUT0(em, "vitals_scrape_duration_seconds", took);
	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		PUT1(em, "vitals_exporter_cpu_seconds", (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6, "mode",
		     "user");
		PUT1(em, "vitals_exporter_cpu_seconds", (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6, "mode",
		     "system");
	}
	if (x->pfs->live && vt_procfs_read(x->pfs, "self/statm", &x->buf, NULL) == VT_OK &&
	    sscanf(x->buf.data, "%lu %lu", &size, &resident) == 2)
		PUT0(em, "vitals_exporter_resident_memory_bytes", (double)resident * (double)x->pfs->page_size);
	PUT0(em, "vitals_exporter_scrapes", (double)x->scrapes);
}

size_t vt_exporter_family_count(void)
{
	return sizeof(families) / sizeof(families[0]);
}

void vt_exporter_family(size_t i, const char **name, enum vt_prom_type *type)
{
	*name = families[i].name;
	*type = families[i].type;
}

int vt_exporter_scrape(struct vt_exporter *x, struct vt_prom *p, struct vt_err *err)
{
	struct emit em = { p, NULL, VT_OK };
	double t0 = vt_mono_s(), now = t0, boot_s;
	size_t i;
	int rc;

	for (i = 0; i < sizeof(families) / sizeof(families[0]); i++)
		if ((rc = vt_prom_family(p, families[i].name, families[i].type, families[i].unit, families[i].help)) !=
		    VT_OK)
			return vt_err_set(err, rc, 0, "cannot declare %s", families[i].name);
	x->scrapes++;
	for (i = 0; i < x->ntargets; i++) {
		double t1 = vt_mono_s();

		if ((rc = read_target(x, &x->targets[i], now, err)) != VT_OK)
			return rc;
		x->targets[i].took_s = vt_mono_s() - t1;
	}
	boot_s = x->boot_s;
	for (i = 0; i < x->ntargets && em.rc == VT_OK; i++) {
		double t1 = vt_mono_s();

		emit_target(&em, x, &x->targets[i], now, boot_s);
		x->targets[i].took_s += vt_mono_s() - t1;
	}
	emit_self(&em, x, vt_mono_s() - t0);
	if (em.rc != VT_OK)
		return vt_err_set(err, em.rc, em.rc == VT_E_NOMEM ? ENOMEM : 0, "cannot add a sample to the scrape");
	return VT_OK;
}

/*
 * soak.c — the sampler loop (see soak.h).
 */
#include "soak/soak.h"
#include "base/unknown.h"

#include "base/clock.h"
#include "base/outfile.h"
#include "base/version.h"
#include "proc/io.h"
#include "proc/thread_watch.h"
#include "sample/heap.h"
#include "sample/locks.h"
#include "sample/sample.h"
#include "sample/series.h"
#include "sample/threads.h"
#include "sample/watch.h"
#include "soak/follow.h"
#include "soak/redact.h"
#include "soak/soak_profile.h"
#include "store/alloc_store.h"
#include "store/lock_store.h"
#include "store/profile_store.h"
#include "store/store.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TREND_RING 120           /* samples the progress trend is fitted over */
#define TREND_MIN_INTERVALS 20   /* ... and it says nothing before it has this many */
#define TREND_MIN_WINDOW_S 60.0  /* ... spanning this long */
#define REDETECT_TICKS 10        /* ticks to retry allocator detection of a just-started process */
#define NAME_SETTLE_S 1.0        /* a --name that appears while waiting is looked at again after this */
/*
 * Maps are read again at least this often even when VmSize says they cannot
 * have changed (an munmap and an mmap of the same size: sample.h).  A fixed
 * minute, not the threads cadence: that one can be set to every tick or to
 * hours for reasons of its own.
 */
#define MAPS_MAX_AGE_S 60.0

void vt_soak_config_default(struct vt_soak_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->every_s = 10;
	cfg->smaps_every_s = 600;
	cfg->threads_every_s = 60;
	cfg->heap_every_s = 60;
	cfg->free_every_s = 60;
	cfg->free_budget = 0.01;
	cfg->wait_s = 30;
	cfg->wait_back_s = 300;
	cfg->profile_for_s = 10;
	cfg->allocs_for_s = 10;
}

/* Profiles taken in a thread while the soak samples (soak/soak_profile.h), by kind. */
enum { JOB_CPU, JOB_ALLOCS, JOBS };

struct soak_job {
	struct vt_soak_prof *run;    /* the one being taken, NULL none */
	double t, wall;              /* when it began: soak seconds, unix time */
	double next;                 /* monotonic time the next one is due */
	bool off;                    /* they cannot be taken here (perf refused): stop asking */
	bool error_noted;            /* a failed one is in the events (once) */
	uint64_t stored;
};

/* Everything the loop keeps between ticks. */
struct vt_soak {
	const struct vt_procfs *pfs;
	const struct vt_soak_config *cfg;
	struct vt_store *store;
	struct vt_follow_key key;
	double start;                /* monotonic */
	double wall_offset;          /* wall - mono at the last tick: a jump shows as a change */

	/* the current incarnation */
	pid_t pid;                   /* 0 while waiting */
	pid_t child;                 /* the launched command, 0 if none */
	int output_fd;               /* its output file while it is being launched, -1 none */
	bool output_made;            /* that file was made by this soak (not /dev/null) */
	int child_status;
	struct vt_sample first;      /* its first full sample: allocator, cap, cmdline */
	bool have_first;
	struct vt_cgroup_mem last_cgroup;   /* its memory cgroup at the last sample (version 0: none) */
	uint64_t oom_kills_before;   /* that cgroup's oom_kill count one sample earlier (VT_NA unknown) */
	int redetect_left;
	struct vt_watch *watch;      /* its reader (sample/watch.h): opened at its first tick */
	struct vt_thread_tallies doing;   /* per live thread: what it was doing */
	struct vt_lock_probe *lock_probe;  /* its locks, looked at at the threads cadence; NULL not yet */
	bool threads_error_noted;    /* the per-thread counters' failure is in the events */
	bool locks_error_noted;      /* and the lock probe's */
	bool heap_error_noted;       /* and the allocator probe's */
	bool free_error_noted;       /* and a free walk's that gave no figure */
	bool access_noted;           /* what cannot be read of it is in the events */
	double next_smaps, next_threads;
	double next_trim;            /* with trim_every_s: when the next malloc_trim(0) is due (monotonic) */
	bool trim_off;               /* a trim was refused for good (not glibc, ptrace refused): no more */
	int incarnations;

	/* progress */
	double ring_t[TREND_RING], ring_v[TREND_RING];
	size_t ring_n, ring_i;
	double committed;
	uint64_t samples;
	double next;                 /* monotonic time of the next tick */
	double wait_since;           /* when the target went away (a restart's delay) */
	pid_t gone_pid;              /* the process that went away */
	char missing[320];           /* what of the target is not recorded, for the result */
	enum vt_soak_end end;        /* 0 while it goes on */
	char end_detail[200];        /* the STOP event's text in the recording */
	int failed;                  /* the code that ended it with VT_SOAK_END_ERROR */
	int redacted;                /* enum vt_redacted: what the recording leaves out of the target */
	char redacted_names[256];    /* whose values were redacted (soak/redact.h) */

	/* free walks over the whole soak (every incarnation) */
	unsigned free_walks, free_failed;
	double free_cpu_s, free_max_cpu_s;
	char free_off[200];          /* why none are walked, said once */

	/* profiles: CPU (profile_every_s) and allocations (allocs_every_s), one at a time */
	struct soak_job jobs[JOBS];
};

static int event(struct vt_soak *sk, enum vt_event_kind kind, pid_t pid, struct vt_err *err,
		 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int event(struct vt_soak *sk, enum vt_event_kind kind, pid_t pid, struct vt_err *err,
		 const char *fmt, ...)
{
	struct vt_event ev = { .t = vt_mono_s() - sk->start, .wall = vt_wall_s(), .kind = kind, .pid = pid };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ev.detail, sizeof(ev.detail), fmt, ap);
	va_end(ap);
	return vt_store_event(sk->store, &ev, err);
}

static void drop_incarnation(struct vt_soak *sk)
{
	vt_watch_close(sk->watch);
	sk->watch = NULL;
	vt_thread_tallies_release(&sk->doing);
	vt_lock_probe_close(sk->lock_probe);
	sk->lock_probe = NULL;
	sk->locks_error_noted = false;
	if (sk->have_first)
		vt_sample_release(&sk->first);
	sk->have_first = false;
	sk->pid = 0;
	sk->threads_error_noted = false;
	sk->heap_error_noted = false;
	sk->free_error_noted = false;
	sk->access_noted = false;
	sk->trim_off = false;
}

/* ---- one tick ---- */

/*
 * Without ptrace read access (another user's process, Yama, a container)
 * maps, smaps_rollup, environ and each thread's wchan and syscall cannot be
 * read; status, stat, schedstat and the cgroup can.  Say once per process
 * which recorded figures will be missing and why, in the recording and to
 * the caller; the rest is recorded as usual.
 */
static void note_access(struct vt_soak *sk, const struct vt_sample *s)
{
	const struct vt_section *why = NULL;
	size_t used = 0;
	char *out = sk->missing;

	if (sk->access_noted)
		return;
	sk->access_noted = true;
	out[0] = '\0';
	if (!s->regions_st.available && s->regions_st.code == VT_E_PERM) {
		why = &s->regions_st;
		used += (size_t)snprintf(out + used, sizeof(sk->missing) - used,
					 "arenas, regions_64m (maps)");
	}
	if (!s->environ_st.available && s->environ_st.code == VT_E_PERM) {
		if (!why)
			why = &s->environ_st;
		if (sk->cfg->smaps_every_s > 0 && used < sizeof(sk->missing))
			used += (size_t)snprintf(out + used, sizeof(sk->missing) - used, "%spss (smaps_rollup)",
						 used ? ", " : "");
		if (used < sizeof(sk->missing))
			used += (size_t)snprintf(out + used, sizeof(sk->missing) - used,
						 "%sthreads' wchan and syscall", used ? ", " : "");
	}
	if (!why)
		return;
	event(sk, VT_EV_ERROR, sk->pid, NULL, "not fully readable (%.90s); not recorded: %s",
	      why->reason, out);
	if (sk->cfg->notice) {
		char text[2 * VT_ERR_MSG_MAX + sizeof(sk->missing) + 128];

		snprintf(text, sizeof(text), "process %d cannot be read in full (%s): %s are not "
			 "recorded; %s", (int)sk->pid, why->reason, out, why->hint[0] ? why->hint : "");
		sk->cfg->notice(sk->cfg->notice_ctx, text);
	}
}

/* Every recorded figure a memory sample holds (sample/metric.h). */
static void fill_memory(const struct vt_sample *s, struct vt_store_sample *row)
{
	int m;

	for (m = 0; m < VT_M_COUNT; m++)
		if ((vt_metrics[m].flags & VT_MF_RECORDED) && vt_metrics[m].of_sample)
			row->v[m] = vt_metrics[m].of_sample(s);
}

/*
 * Pss from smaps_rollup: the same walk of the page tables as smaps (the
 * target's mmap lock is held while the kernel does it, hence the low
 * cadence), summed up by the kernel into one entry.
 */
static void read_pss(int pid_fd, struct vt_store_sample *row)
{
	struct vt_region_list rollup = { 0 };
	struct vt_buf buf = VT_BUF_INIT(1u << 16);
	uint64_t pss = 0;
	size_t i;

	if (vt_read_at(pid_fd, "smaps_rollup", &buf, NULL) == VT_OK &&
	    vt_maps_parse(buf.data, buf.len, &rollup, NULL) == VT_OK && rollup.n > 0) {
		for (i = 0; i < rollup.n; i++)
			if (vt_known(rollup.v[i].pss))
				pss += rollup.v[i].pss;
		row->v[VT_M_PSS] = (double)pss;
	}
	vt_region_list_release(&rollup);
	vt_buf_release(&buf);
}

/*
 * The deepest accept queue of its listening sockets: one sock_diag dump a
 * tick (its own net/tcp{,6} in another network namespace); which fds are
 * sockets is the watch's to know.  A process that listens on nothing
 * leaves the column empty.
 */
static void read_accept_queue(struct vt_soak *sk, double now, struct vt_store_sample *row)
{
	struct vt_listen_sock socks[VT_SAMPLE_MAX_LISTEN];
	size_t n, dropped, i;
	uint32_t deepest = 0;
	const char *via;

	if (vt_watch_listen(sk->watch, now, socks, VT_SAMPLE_MAX_LISTEN, &n, &dropped, &via, NULL) != VT_OK ||
	    !n)
		return;
	for (i = 0; i < n; i++)
		if (socks[i].queue > deepest)
			deepest = socks[i].queue;
	row->v[VT_M_ACCEPT_QUEUE] = (double)deepest;
}

/*
 * The process's read- and write-family calls so far (/proc/PID/io): with
 * its threads' wakeups, what tells a thread woken by data from a poll that
 * found nothing (analyze/diagnose.c), over a recording as live.  Reading it
 * needs ptrace read access; without it the columns stay empty.
 */
static void read_io(int pid_fd, struct vt_store_sample *row)
{
	struct vt_buf buf = VT_BUF_INIT(4096);
	struct vt_proc_io io;

	if (vt_proc_io_read(pid_fd, &buf, &io, NULL) == VT_OK) {
		row->v[VT_M_IO_SYSCR] = (double)io.syscr;
		row->v[VT_M_IO_SYSCW] = (double)io.syscw;
	}
	vt_buf_release(&buf);
}

static void fill_heap(struct vt_soak *sk, double now, struct vt_store_sample *row)
{
	enum vt_alloc_kind kind = sk->have_first ? sk->first.alloc.kind : VT_ALLOC_UNKNOWN;
	struct vt_heap_sample h;
	struct vt_err e;
	bool taken;

	if (vt_watch_heap(sk->watch, now, kind, &h, &taken, &e) != VT_OK) {
		/* A lasting refusal stops the asking for this process (a restart asks
		 * again); the rest (no thread where a call is safe right now, a
		 * timeout) is tried again at the next heap tick.  The first failure
		 * is in the events; without --heap, no agent is no news. */
		bool off = vt_watch_heap_off(sk->watch);

		if (e.code != VT_E_GONE && !sk->heap_error_noted && (sk->cfg->heap || !off)) {
			event(sk, VT_EV_ERROR, sk->pid, NULL, "allocator figures not read%s: %s",
			      off ? "" : " (tried again later)", e.msg);
			sk->heap_error_noted = true;
		}
		return;
	}
	if (!taken)
		return;
	row->v[VT_M_HEAP_LIVE] = h.sum.live;
	row->v[VT_M_HEAP_FREE] = h.sum.free;
	row->v[VT_M_HEAP_TOTAL] = h.sum.held;
	if (!isnan(h.sum.trimmable))
		row->v[VT_M_HEAP_KEEPCOST] = h.sum.trimmable;
	vt_heap_release(&h);
}

/*
 * Free memory on resident pages, when the watch's cadence says a walk is
 * due: into the sample, whose metric rows record it.  A walk that gives no
 * figure leaves the sample's figure unknown; the first such is in the
 * events, and a lasting refusal (not glibc, memory not readable) is said
 * once for the soak.
 */
static void walk_free(struct vt_soak *sk, double now, struct vt_sample *s)
{
	struct vt_free_figures f;
	struct vt_err e;
	bool taken;
	int rc;

	vt_err_clear(&e);
	rc = vt_watch_free(sk->watch, now, &s->alloc, &f, &taken, &e);
	if (taken) {
		sk->free_walks++;
		sk->free_cpu_s += f.cpu_s;
		sk->free_max_cpu_s = fmax(sk->free_max_cpu_s, f.cpu_s);
	}
	if (rc == VT_OK && taken) {
		s->free_known = true;
		s->free_resident = f.free_resident;
		s->trimmable = f.trimmable;
		return;
	}
	if (rc == VT_OK || rc == VT_E_GONE)
		return;
	if (taken)
		sk->free_failed++;
	if (vt_watch_free_off(sk->watch)) {
		if (!sk->free_off[0]) {
			snprintf(sk->free_off, sizeof(sk->free_off), "%.190s", e.msg);
			event(sk, VT_EV_ERROR, sk->pid, NULL, "free_resident and trimmable not recorded: %s", e.msg);
		}
	} else if (!sk->free_error_noted) {
		sk->free_error_noted = true;
		event(sk, VT_EV_ERROR, sk->pid, NULL, "a free-memory walk gave no figure (its sample is left "
		      "unknown; walked again when due): %s", e.msg);
	}
}

/* One thread's row: its counters, and what it was doing when there is a tally of it. */
static void thread_row(const struct vt_soak *sk, const struct vt_thread_snap *t,
		       struct vt_store_thread *row)
{
	const struct vt_thread_tally *tally = vt_thread_tallies_find(&sk->doing, t->tid, t->start_ticks);

	if (tally)
		vt_thread_tally_doing(tally, &row->doing);
	row->tid = t->tid;
	row->name = t->comm;
	memcpy(row->counter, t->counter, sizeof(row->counter));
}

/*
 * Threads' counters: read every tick, written at their cadence and when one
 * exits.  At the cadence the states, wchans and system calls are read too
 * and counted into each thread's tally; an exited thread's row keeps the
 * tally it had.  Between cadences a known thread's schedstat alone is read
 * (VT_TW_SCHEDSTAT_ONLY): all an exited thread's row needs fresh is its
 * run_ns and wait_ns (its name and start, which finds its tally, are of the
 * last full read), and the process's CPU comes from its own stat, read
 * whatever the flag.  *sample holds the rows' names until the caller
 * releases it.
 */
static int read_threads(struct vt_soak *sk, double now, bool last, struct vt_store_sample *row,
			struct vt_threads_sample *sample, struct vt_store_thread **rows, size_t *nrows,
			bool *all_read, struct vt_err *err)
{
	const struct vt_thread_watch_proc *proc;
	bool write_all = now >= sk->next_threads || last;
	struct vt_thread_watch *tw;
	struct vt_store_thread *out;
	size_t i, k = 0, ngone;
	int rc;

	*rows = NULL;
	*nrows = 0;
	*all_read = false;
	memset(sample, 0, sizeof(*sample));
	if ((rc = vt_watch_threads(sk->watch, &tw, err)) != VT_OK)
		return rc;
	/* what each thread is doing is sampled at the per-thread cadence only */
	rc = vt_thread_watch_read(tw, write_all ? VT_TW_CSW | VT_TW_WCHAN | VT_TW_SYSCALL
						       : VT_TW_SCHEDSTAT_ONLY, err);
	if (rc == VT_E_GONE || rc == VT_E_NOMEM)
		return rc;
	proc = vt_thread_watch_process(tw);
	if (proc->clk_tck > 0) {
		row->v[VT_M_CPU_USER_S] = (double)proc->utime_ticks / (double)proc->clk_tck;
		row->v[VT_M_CPU_SYS_S] = (double)proc->stime_ticks / (double)proc->clk_tck;
	}
	vt_thread_watch_exited(tw, &ngone);
	if (!write_all && ngone == 0)
		return VT_OK;
	/* rows only for what is written: the exited every tick, the live at the cadence */
	if ((rc = vt_threads_sample_from_watch(tw, write_all, sample, err)) != VT_OK)
		return rc;
	if (write_all)
		sk->next_threads = now + sk->cfg->threads_every_s;
	*all_read = write_all;
	out = calloc(sample->n + sample->ngone + 1, sizeof(*out));
	if (!out)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
	/* the exited keep their tally; then the live ones count this read */
	for (i = 0; i < sample->ngone; i++)
		thread_row(sk, &sample->gone[i], &out[k++]);
	if (write_all) {
		if ((rc = vt_thread_tallies_count(&sk->doing, sample, err)) != VT_OK) {
			free(out);
			return rc;
		}
		for (i = 0; i < sample->n; i++)
			thread_row(sk, &sample->threads[i], &out[k++]);
	}
	*rows = out;
	*nrows = k;
	return VT_OK;
}

/*
 * The locks its threads wait on, from sample (every thread's system call
 * read), appended as one look at t.  The probe is opened at the first look
 * and kept with the incarnation; what it cannot do is said once in the
 * events, and the soak goes on without it.
 */
static int look_at_locks(struct vt_soak *sk, double t, const struct vt_threads_sample *sample, struct vt_err *err)
{
	struct vt_locks look = { 0 };
	struct vt_err perr;
	int rc;

	vt_err_clear(&perr);
	if (!sk->lock_probe && !sk->locks_error_noted &&
	    vt_lock_probe_open(sk->pfs, sk->pid, vt_watch_dirfd(sk->watch), &sk->lock_probe, &perr) != VT_OK) {
		sk->locks_error_noted = true;
		return perr.code == VT_E_NOMEM ? vt_err_set(err, perr.code, ENOMEM, "%s", perr.msg)
		       : event(sk, VT_EV_ERROR, sk->pid, err, "locks not looked at: %s", perr.msg);
	}
	if (!sk->lock_probe)
		return VT_OK;
	if ((rc = vt_lock_probe_sample(sk->lock_probe, sample, &look, err)) == VT_OK) {
		vt_lock_probe_find_chunks(sk->lock_probe, &look);
		rc = vt_store_locks_append(sk->store, t, &look, err);
	}
	vt_locks_release(&look);
	return rc;
}

/*
 * A trend for the progress line: least squares over the recent samples,
 * once they span TREND_MIN_WINDOW_S and TREND_MIN_INTERVALS intervals (a
 * start-up ramp over a few seconds extrapolates to nonsense per hour).
 */
static void trend(const struct vt_soak *sk, double *slope, double *window)
{
	double st = 0, sv = 0, stt = 0, stv = 0, n = (double)sk->ring_n, tmin = INFINITY, tmax = -INFINITY;
	size_t i;

	*slope = NAN;
	*window = 0;
	if (sk->ring_n < TREND_MIN_INTERVALS)
		return;
	for (i = 0; i < sk->ring_n; i++) {
		st += sk->ring_t[i];
		sv += sk->ring_v[i];
		stt += sk->ring_t[i] * sk->ring_t[i];
		stv += sk->ring_t[i] * sk->ring_v[i];
		tmin = fmin(tmin, sk->ring_t[i]);
		tmax = fmax(tmax, sk->ring_t[i]);
	}
	if (n * stt - st * st <= 0 || tmax - tmin < fmax(TREND_MIN_WINDOW_S, TREND_MIN_INTERVALS * sk->cfg->every_s))
		return;
	*slope = (n * stv - st * sv) / (n * stt - st * st);
	*window = tmax - tmin;
}

/*
 * Sample the current incarnation once and store it.  VT_E_GONE when it
 * exited (the caller records that); other errors are the store's.  The
 * last tick of a soak writes every thread's counters, so that the per-thread
 * figures cover the whole run.
 */
static int tick(struct vt_soak *sk, double now, bool last, struct vt_err *err)
{
	struct vt_sample_opts so = { .light = true, .maps_max_age_s = MAPS_MAX_AGE_S };
	struct vt_store_sample row = { .t = now - sk->start, .wall = vt_wall_s(), .pid = sk->pid };
	struct vt_store_thread *trows = NULL;
	struct vt_threads_sample tsample = { 0 };
	struct vt_sample s;
	size_t ntrows = 0;
	double t0 = vt_mono_s();
	bool smaps = false, threads_read = false, first_of_process = !sk->watch;
	struct vt_process_start started = { .pid = sk->pid, .started_t = NAN, .started_wall = NAN };
	struct vt_watch_opts wo = { .heap_every_s = sk->cfg->heap_every_s, .heap_ptrace = sk->cfg->heap,
				    .free_every_s = sk->cfg->free_every_s, .free_budget = sk->cfg->free_budget };
	int m, rc;

	for (m = 0; m < VT_M_COUNT; m++)
		row.v[m] = NAN;
	if (sk->cfg->smaps_every_s > 0 && now >= sk->next_smaps) {
		smaps = true;
		sk->next_smaps = now + sk->cfg->smaps_every_s;
	}
	if (sk->have_first && sk->first.alloc.kind != VT_ALLOC_UNKNOWN)
		so.reuse = &sk->first;
	else if (sk->have_first && sk->redetect_left-- > 0)
		so.reuse = NULL;    /* a process just exec'ed may not have mapped its libc yet */
	else if (sk->have_first)
		so.reuse = &sk->first;
	/* opened at the incarnation's first tick, closed with it (drop_incarnation) */
	rc = sk->watch ? VT_OK : vt_watch_open(sk->pfs, sk->pid, &wo, &sk->watch, NULL, NULL, err);
	if (rc == VT_OK) {
		so.maps_memo = vt_watch_maps_memo(sk->watch);
		rc = vt_sample_take_from(sk->watch, &so, &s, err);
	}
	if (rc != VT_OK)
		return rc == VT_E_NOPROC || rc == VT_E_ZOMBIE ? VT_E_GONE : rc;
	walk_free(sk, now, &s);
	fill_memory(&s, &row);
	if (first_of_process && s.uptime_s >= 0) {
		/* when it started, for the ages of vitals compare --by-age */
		started.start_ticks = vt_follow_start_ticks(sk->pfs, sk->pid);
		started.started_t = row.t - s.uptime_s;
		started.started_wall = row.wall - s.uptime_s;
	}
	if (s.cgroup_st.available) {
		sk->oom_kills_before = sk->last_cgroup.version ? sk->last_cgroup.events_oom_kill
							       : s.cgroup.events_oom_kill;
		sk->last_cgroup = s.cgroup;
	}
	if (!so.reuse)
		note_access(sk, &s);
	if (!so.reuse) {
		if (sk->have_first)
			vt_sample_release(&sk->first);
		sk->first = s;          /* keeps its cmdline: owned by sk now */
		sk->have_first = true;
		vt_region_list_release(&sk->first.regions);   /* not needed again */
	} else {
		vt_sample_release(&s);
	}

	if (smaps)
		read_pss(vt_watch_dirfd(sk->watch), &row);
	read_accept_queue(sk, now, &row);
	read_io(vt_watch_dirfd(sk->watch), &row);
	rc = read_threads(sk, now, last, &row, &tsample, &trows, &ntrows, &threads_read, err);
	if (rc == VT_E_NOPROC || rc == VT_E_GONE) {
		free(trows);
		vt_threads_sample_release(&tsample);
		return VT_E_GONE;
	}
	if (rc != VT_OK && !sk->threads_error_noted) {
		/* the memory figures still count: say once what is missing, go on */
		event(sk, VT_EV_ERROR, sk->pid, NULL, "per-thread counters not read: %s", err->msg);
		sk->threads_error_noted = true;
	}
	fill_heap(sk, now, &row);
	row.read_ms = (vt_mono_s() - t0) * 1000.0;
	rc = vt_store_append(sk->store, &row, trows, ntrows, err);
	if (rc == VT_OK && isfinite(started.started_t))
		rc = vt_store_process(sk->store, &started, err);
	if (rc == VT_OK && threads_read && tsample.n)
		rc = look_at_locks(sk, row.t, &tsample, err);
	free(trows);
	vt_threads_sample_release(&tsample);
	if (rc != VT_OK)
		return rc;
	sk->samples++;
	sk->committed = row.v[VT_M_COMMITTED];
	if (!isnan(sk->committed)) {
		sk->ring_t[sk->ring_i] = row.t;
		sk->ring_v[sk->ring_i] = sk->committed;
		sk->ring_i = (sk->ring_i + 1) % TREND_RING;
		if (sk->ring_n < TREND_RING)
			sk->ring_n++;
	}
	return VT_OK;
}

/*
 * With trim_every_s: malloc_trim(0) in the target when it is due, right
 * after a sample (which holds the level before it), through the agent or
 * one stopped thread (sample/heap.h: bounded, restored also when vitals is
 * killed or stopped mid-call).  Each is an event with what it returned and
 * what it cost; a refusal that lasts (not glibc, ptrace refused) is said
 * once and ends the trims of this incarnation.
 */
static void trim_if_due(struct vt_soak *sk, double now)
{
	const struct vt_soak_config *cfg = sk->cfg;
	struct vt_heap_opts o = { .trim = true, .timeout_ms = 2000 };
	struct vt_heap_sample h;
	struct vt_err e;
	char a[32], b[32], c[32], cost[96];
	int rc;

	if (cfg->trim_every_s <= 0 || !sk->pid || sk->trim_off || now < sk->next_trim)
		return;
	while (sk->next_trim <= now)
		sk->next_trim += cfg->trim_every_s;
	rc = vt_heap_take(sk->pfs, sk->pid, &o, &h, &e);
	if (rc == VT_E_GONE || rc == VT_E_NOPROC)
		return;          /* the next tick records the exit */
	if (rc != VT_OK) {
		sk->trim_off = vt_heap_refusal_lasts(rc, true);
		event(sk, VT_EV_ERROR, sk->pid, NULL, "malloc_trim(0) not called%s: %.150s",
		      sk->trim_off ? " (no more are tried)" : "", e.msg);
		return;
	}
	if (h.trim.done) {
		if (h.method == VT_HEAP_PTRACE)
			snprintf(cost, sizeof(cost), "a thread stopped %.1f ms (the call %.1f ms)", h.stopped_us / 1000,
				 h.trim.took_ms);
		else
			snprintf(cost, sizeof(cost), "the call %.1f ms in the agent (none stopped)", h.trim.took_ms);
		event(sk, VT_EV_TRIM, sk->pid, NULL, "malloc_trim(0): committed %s -> %s (%s); %s",
		      vt_fmt_bytes(h.trim.committed_before, b, sizeof(b)), vt_fmt_bytes(h.trim.committed_after, c, sizeof(c)),
		      vt_known(h.trim.committed_before) && vt_known(h.trim.committed_after)
		      ? vt_fmt_size_delta((double)h.trim.committed_after - (double)h.trim.committed_before, a, sizeof(a))
		      : "?", cost);
	}
	vt_heap_release(&h);
}

/* ---- profiles ---- */

static const char *const job_what[JOBS] = { "profile", "allocation profile" };

/*
 * A profile that could not be taken.  One the target's exit cut short
 * before its first sample is no news (the exit is in the events).  Where
 * perf events (or uprobes) are refused or missing, none ever will be: said
 * once, in the recording and to the user, and no more are asked for.
 */
static void job_failed(struct vt_soak *sk, int kind, pid_t pid, int rc, const struct vt_err *e)
{
	struct soak_job *j = &sk->jobs[kind];

	if (rc == VT_E_GONE || rc == VT_E_NOPROC)
		return;
	if (rc == VT_E_PERM || rc == VT_E_UNSUPPORTED || rc == VT_E_NOTFOUND)
		j->off = true;
	if (j->error_noted && !j->off)
		return;
	j->error_noted = true;
	event(sk, VT_EV_ERROR, pid, NULL, "%s not taken%s: %s", job_what[kind], j->off ? " (no more are tried)" : "",
	      e->msg);
	if (j->off && sk->cfg->notice) {
		char text[2 * VT_ERR_MSG_MAX + 64];

		snprintf(text, sizeof(text), "no %ss in this soak: %s%s%s", job_what[kind], e->msg,
			 e->hint[0] ? "; " : "", e->hint);
		sk->cfg->notice(sk->cfg->notice_ctx, text);
	}
}

/*
 * The allocation profile's thread is done: no probe is armed.  A Ctrl-Z
 * that came as it ended, after its last look at the flag, is honoured here.
 */
static void probes_done(struct vt_soak *sk)
{
	const struct vt_soak_config *cfg = sk->cfg;

	if (cfg->probes_armed)
		*cfg->probes_armed = 0;
	if (cfg->pause && *cfg->pause && cfg->paused)
		cfg->paused(cfg->pause_ctx);
}

/*
 * Store the profile being taken once it is done; with stop, stop it first
 * and store what it has (partial).  Written here, in the loop's thread:
 * the store's connection is used by one thread only.  VT_OK, or the
 * store's error.
 */
static int job_collect(struct vt_soak *sk, int kind, bool stop, struct vt_err *err)
{
	struct soak_job *j = &sk->jobs[kind];
	struct vt_soak_prof_result res;
	struct vt_err e;
	pid_t pid;
	int rc;

	if (!j->run)
		return VT_OK;
	if (stop)
		vt_soak_prof_stop(j->run);
	else if (!vt_soak_prof_done(j->run))
		return VT_OK;
	pid = vt_soak_prof_pid(j->run);
	rc = vt_soak_prof_collect(&j->run, &res, &e);
	if (kind == JOB_ALLOCS)
		probes_done(sk);
	if (rc != VT_OK) {
		job_failed(sk, kind, pid, rc, &e);
		return VT_OK;
	}
	if (res.allocs)
		rc = vt_store_allocs_append(sk->store, j->t, j->wall, res.partial, res.allocs, err);
	else
		rc = vt_store_profile_append(sk->store, &(struct vt_store_profile){ .t = j->t, .wall = j->wall,
										 .partial = res.partial },
					     res.profile, NULL, err);
	vt_soak_prof_result_release(&res);
	if (rc == VT_OK)
		j->stored++;
	return rc;
}

static int jobs_collect(struct vt_soak *sk, bool stop, struct vt_err *err)
{
	int rc = VT_OK;

	for (int k = 0; k < JOBS && rc == VT_OK; k++)
		rc = job_collect(sk, k, stop, err);
	return rc;
}

/*
 * Start the profile of this kind that is due, of the process followed now.
 * One kind waits while the other is taken: an allocation profile's probes
 * slow the target's allocating code, which a CPU profile would measure.
 */
static void job_start(struct vt_soak *sk, int kind, double now)
{
	const struct vt_soak_config *cfg = sk->cfg;
	struct soak_job *j = &sk->jobs[kind];
	struct vt_soak_prof_opts o = { 0 };
	double every = kind == JOB_ALLOCS ? cfg->allocs_every_s : cfg->profile_every_s;
	struct vt_err e;
	int rc;

	if (every <= 0 || j->run || j->off || !sk->pid || now < j->next)
		return;
	for (int k = 0; k < JOBS; k++)
		if (sk->jobs[k].run)
			return;     /* still due: it starts when the other is done */
	while (j->next <= now)
		j->next += every;
	if (!sk->pfs->live) {
		vt_err_set(&e, VT_E_UNSUPPORTED, 0, "profiles need the live /proc, not a recorded tree");
		job_failed(sk, kind, sk->pid, VT_E_UNSUPPORTED, &e);
		return;
	}
	j->t = now - sk->start;
	j->wall = vt_wall_s();
	if (kind == JOB_ALLOCS) {
		o.kind = VT_SOAK_PROF_ALLOCS;
		o.duration_s = cfg->allocs_for_s;
		o.budget = cfg->allocs_budget;
		o.pause = cfg->pause;
		o.paused = cfg->paused;
		o.pause_ctx = cfg->pause_ctx;
		o.probes_armed = cfg->probes_armed;
	} else {
		o.kind = VT_SOAK_PROF_CPU;
		o.duration_s = cfg->profile_for_s;
		o.hz = cfg->profile_hz;
	}
	if (kind == JOB_ALLOCS && cfg->probes_armed)
		*cfg->probes_armed = 1;
	rc = vt_soak_prof_start(sk->pfs, sk->pid, &o, &j->run, &e);
	if (rc != VT_OK) {
		if (kind == JOB_ALLOCS)
			probes_done(sk);
		job_failed(sk, kind, sk->pid, rc, &e);
	}
}

/* The soak ends: the profile being taken is stopped and stored as far as it got. */
static void jobs_end(struct vt_soak *sk)
{
	for (int k = 0; k < JOBS; k++) {
		struct soak_job *j = &sk->jobs[k];
		struct vt_soak_prof_result res;
		struct vt_err e;

		if (!j->run)
			continue;
		if (sk->failed) {
			/* the recording cannot be written: only stop the thread */
			vt_soak_prof_stop(j->run);
			if (vt_soak_prof_collect(&j->run, &res, &e) == VT_OK)
				vt_soak_prof_result_release(&res);
			if (k == JOB_ALLOCS)
				probes_done(sk);
			continue;
		}
		if (job_collect(sk, k, true, &e) != VT_OK)
			event(sk, VT_EV_ERROR, sk->pid, NULL, "the last %s not stored: %s", job_what[k], e.msg);
	}
}

/* ---- finding the target ---- */

/* Is pid one vitals may soak?  Fatal errors for the initial target. */
static int check_target(struct vt_soak *sk, pid_t pid, struct vt_err *err)
{
	struct vt_sample s;
	struct vt_sample_opts so = { .light = true };
	int rc = vt_sample_take(sk->pfs, pid, &so, &s, err);

	if (rc == VT_OK)
		vt_sample_release(&s);
	return rc;
}

static void adopt(struct vt_soak *sk, pid_t pid, double now)
{
	sk->pid = pid;
	/* a restart is a process started after this one, not a sibling of it */
	sk->key.min_start_ticks = vt_follow_start_ticks(sk->pfs, pid) + 1;
	sk->redetect_left = REDETECT_TICKS;
	sk->next_smaps = now;
	sk->next_threads = now;
	sk->next_trim = now + sk->cfg->trim_every_s;
	sk->ring_n = sk->ring_i = 0;
	sk->incarnations++;
}

/*
 * Can a restart be recognised?  A launched command is ours and is not
 * restarted behind our back; a pid is followed by its command line, when it
 * could be read.
 */
static bool follows_restarts(const struct vt_soak *sk)
{
	if (sk->cfg->target.kind == VT_SOAK_COMMAND)
		return false;
	return sk->cfg->target.kind != VT_SOAK_PID || sk->key.cmdline[0];
}

/*
 * Look for the target (again).  VT_OK with sk->pid set or 0.  The first
 * time, a name that is several processes is refused (VT_E_USAGE); after a
 * restart the oldest tree's root is taken and *tree_n says how many
 * processes its tree holds (1: itself alone).
 */
static int find(struct vt_soak *sk, bool first, size_t *tree_n, struct vt_err *err)
{
	pid_t pid = 0;
	int rc;

	*tree_n = 0;
	if (!follows_restarts(sk) || (sk->cfg->target.kind == VT_SOAK_PID && first))
		return VT_OK;
	rc = vt_follow_find(sk->pfs, &sk->key, first, &pid, tree_n, err);
	if (rc != VT_OK)
		return rc;
	if (pid)
		adopt(sk, pid, vt_mono_s());
	return VT_OK;
}

/*
 * How the target was named, for the recording: a command's arguments that
 * look like secrets are not written (soak/redact.h), nor any with
 * redact_args.  Returns what was left out (enum vt_redacted).
 */
static int describe_target(const struct vt_soak_target *t, bool redact_args, char *out, size_t cap)
{
	size_t n;

	switch (t->kind) {
	case VT_SOAK_PID:
		snprintf(out, cap, "pid %d", (int)t->pid);
		return VT_REDACTED_NONE;
	case VT_SOAK_NAME:
		snprintf(out, cap, "--name %s", t->name);
		return VT_REDACTED_NONE;
	case VT_SOAK_PIDFILE:
		snprintf(out, cap, "--pidfile %s", t->pidfile);
		return VT_REDACTED_NONE;
	case VT_SOAK_COMMAND:
		n = vt_redact_argv("--", t->argv, redact_args, out, cap);
		return redact_args ? VT_REDACTED_ARGS : n ? VT_REDACTED_SECRETS : VT_REDACTED_NONE;
	}
	snprintf(out, cap, "?");
	return VT_REDACTED_NONE;
}

static void report_progress(struct vt_soak *sk, double now, const char *state)
{
	struct vt_soak_progress p = { 0 };

	if (!sk->cfg->progress)
		return;
	p.elapsed_s = now - sk->start;
	p.planned_s = sk->cfg->for_s;
	p.samples = sk->samples;
	p.pid = sk->pid;
	p.restarts = sk->incarnations > 1 ? sk->incarnations - 1 : 0;
	p.committed = sk->committed;
	trend(sk, &p.trend, &p.trend_window_s);
	p.file_bytes = sk->store ? vt_store_bytes(sk->store) : 0;
	p.state = state;
	p.profiles = sk->jobs[JOB_CPU].stored;
	p.allocs = sk->jobs[JOB_ALLOCS].stored;
	p.profiling = sk->jobs[JOB_CPU].run != NULL;
	p.allocs_armed = sk->jobs[JOB_ALLOCS].run != NULL;
	sk->cfg->progress(sk->cfg->progress_ctx, &p);
}

static void note_clock(struct vt_soak *sk, double now, struct vt_err *err)
{
	double offset = vt_wall_s() - now;

	if (sk->wall_offset != 0 && fabs(offset - sk->wall_offset) > 2.0)
		event(sk, VT_EV_CLOCK_JUMP, sk->pid, err, "wall clock moved %+.1f s; intervals use the monotonic clock",
		      offset - sk->wall_offset);
	sk->wall_offset = offset;
}

/* The first target: launched, named, or given; fatal errors end the soak before it starts. */
static int start_target(struct vt_soak *sk, struct vt_err *err)
{
	const struct vt_soak_config *cfg = sk->cfg;
	double deadline = vt_mono_s() + cfg->wait_s;
	bool settled = false;
	unsigned looked;
	int rc;

	if (cfg->target.kind == VT_SOAK_COMMAND) {
		if ((rc = vt_launch(cfg->target.argv, cfg->target.env_add, sk->output_fd, &sk->child, err)))
			return rc;
		adopt(sk, sk->child, vt_mono_s());
		return VT_OK;
	}
	if (cfg->target.kind == VT_SOAK_PID) {
		if ((rc = check_target(sk, cfg->target.pid, err)))
			return rc;
		vt_follow_cmdline(sk->pfs, cfg->target.pid, sk->key.cmdline, sizeof(sk->key.cmdline));
		adopt(sk, cfg->target.pid, vt_mono_s());
		return VT_OK;
	}
	for (looked = 0;; looked++) {
		size_t tree_n;

		if ((rc = find(sk, true, &tree_n, err)))
			return rc;
		if (sk->pid && looked && cfg->target.kind == VT_SOAK_NAME && !settled) {
			/* it has just appeared: a service forks its same-named workers as it starts,
			 * and a name that is several processes is refused; look again once they are */
			sk->pid = 0;                 /* not adopted after all */
			sk->key.min_start_ticks = 0;
			sk->incarnations--;
			settled = true;
			vt_sleep_until_ns((uint64_t)((vt_mono_s() + NAME_SETTLE_S) * 1e9), cfg->stop);
			continue;
		}
		if (sk->pid)
			return check_target(sk, sk->pid, err);
		if (vt_mono_s() >= deadline || (cfg->stop && *cfg->stop))
			break;
		report_progress(sk, vt_mono_s(), "waiting for the target");
		vt_sleep_until_ns((uint64_t)((vt_mono_s() + fmin(0.2, cfg->wait_s)) * 1e9), cfg->stop);
	}
	vt_err_set(err, VT_E_NOPROC, 0, "no process %s %s appeared within %.0f s",
		   cfg->target.kind == VT_SOAK_NAME ? "named" : "in pidfile",
		   cfg->target.kind == VT_SOAK_NAME ? cfg->target.name : cfg->target.pidfile, cfg->wait_s);
	vt_err_hint(err, "start it first, or give --wait a longer time");
	return VT_E_NOPROC;
}

static int open_store(struct vt_soak *sk, struct vt_err *err)
{
	const struct vt_soak_config *cfg = sk->cfg;
	struct vt_recording_info info = { 0 };

	snprintf(info.vitals_version, sizeof(info.vitals_version), "%s", VT_VERSION);
	info.redacted = describe_target(&cfg->target, cfg->redact_args, info.target, sizeof(info.target));
	snprintf(info.arm, sizeof(info.arm), "%s", cfg->arm ? cfg->arm : "");
	if (vt_redact_env_text(cfg->env_text, info.env, sizeof(info.env)) && info.redacted == VT_REDACTED_NONE)
		info.redacted = VT_REDACTED_SECRETS;
	sk->redacted = info.redacted;
	{
		const char *const redacted[] = { info.target, info.env };

		vt_redact_names(redacted, 2, sk->redacted_names, sizeof(sk->redacted_names));
	}
	if (gethostname(info.host, sizeof(info.host) - 1) != 0)
		info.host[0] = '\0';
	info.ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	info.every_s = cfg->every_s;
	info.smaps_every_s = cfg->smaps_every_s;
	info.planned_s = cfg->for_s;
	info.started_wall = vt_wall_s();
	info.heap = cfg->heap;
	return vt_store_create(cfg->out_path, &info, cfg->overwrite, &sk->store, err);
}

/*
 * The launched command's output file (FILE.out, or --log), made the way
 * the recording is: never through a link, an existing one only with
 * --force (a character device such as /dev/null is written as it is).
 */
static int open_output(struct vt_soak *sk, struct vt_err *err)
{
	const char *path = sk->cfg->target.output;
	struct stat sb;
	int rc;

	sk->output_fd = -1;
	if (!path)
		return VT_OK;
	rc = vt_out_create(path, 0644, VT_OUT_DEVICE | (sk->cfg->overwrite ? VT_OUT_REPLACE : 0), &sk->output_fd,
			   err);
	if (rc == VT_E_USAGE && err && err->sys_errno == EEXIST)
		vt_err_hint(err, "it holds an earlier run's output: remove it, or --force to overwrite it");
	if (rc == VT_OK)
		sk->output_made = fstat(sk->output_fd, &sb) == 0 && S_ISREG(sb.st_mode);
	return rc;
}

/* Undo a start that failed after the recording was made: nothing is left behind. */
static void unmake(struct vt_soak *sk)
{
	const struct vt_soak_config *cfg = sk->cfg;

	if (sk->output_fd >= 0)
		close(sk->output_fd);
	if (sk->output_made)
		unlink(cfg->target.output);
	vt_store_close(sk->store, NULL);
	unlink(cfg->out_path);
	free(sk);
}

static void child_exit_text(int status, char *out, size_t cap)
{
	if (WIFEXITED(status))
		snprintf(out, cap, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(out, cap, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(out, cap, "ended");
}

/*
 * After the target exited: did the OOM killer kill in its cgroup meanwhile?
 * A process the limit killed takes no sample after it, so its own kill
 * would never show in the recording: the cgroup, which outlives it, is read
 * once more, and a rise of memory.events oom_kill is an OOM_KILL event.
 * The rise is counted from one sample before the last: the kernel counts the
 * kill when it sends SIGKILL, and a process dying on a loaded host may still
 * be there, counted, at the last sample (CI: no event, the rise inside).
 */
static void oom_kill_check(struct vt_soak *sk, struct vt_err *err)
{
	struct vt_cgroup_mem now;
	struct vt_err e;
	uint64_t was = sk->oom_kills_before;

	if (!sk->last_cgroup.version || !vt_known(was))
		return;
	if (vt_cgroup_reread(sk->pfs, &sk->last_cgroup, &now, &e) != VT_OK || !vt_known(now.events_oom_kill) ||
	    now.events_oom_kill <= was)
		return;
	event(sk, VT_EV_OOM_KILL, sk->pid, err, "its cgroup %.100s: memory.events oom_kill %llu -> %llu over its "
	      "last two samples and its exit (the OOM killer, most likely of it)", sk->last_cgroup.path, (unsigned long long)was,
	      (unsigned long long)now.events_oom_kill);
}

/* The target is gone: record it, and say whether the soak goes on waiting for a restart. */
static bool target_gone(struct vt_soak *sk, struct vt_err *err)
{
	char how[96] = "exited";

	if (sk->child && vt_launch_reap(sk->child, &sk->child_status)) {
		child_exit_text(sk->child_status, how, sizeof(how));
		sk->child = 0;
	}
	event(sk, VT_EV_EXIT, sk->pid, err, "process %d %s", (int)sk->pid, how);
	oom_kill_check(sk, err);
	sk->gone_pid = sk->pid;
	sk->last_cgroup.version = 0;
	drop_incarnation(sk);
	if (!follows_restarts(sk)) {
		sk->end = VT_SOAK_END_TARGET_EXITED;
		snprintf(sk->end_detail, sizeof(sk->end_detail), "the target %s", how);
		return false;
	}
	return true;
}

int vt_soak_start(const struct vt_procfs *pfs, const struct vt_soak_config *cfg, struct vt_soak **out,
		  struct vt_err *err)
{
	struct vt_soak *sk;
	int rc;

	*out = NULL;
	if (cfg->every_s <= 0)
		return vt_err_set(err, VT_E_USAGE, 0, "the interval must be positive");
	if (cfg->profile_every_s > 0 && (cfg->profile_for_s <= 0 || cfg->profile_for_s >= cfg->profile_every_s))
		return vt_err_set(err, VT_E_USAGE, 0, "a profile must last less than the time between profiles");
	if (cfg->allocs_every_s > 0 && (cfg->allocs_for_s <= 0 || cfg->allocs_for_s >= cfg->allocs_every_s))
		return vt_err_set(err, VT_E_USAGE, 0, "an allocation profile must last less than the time between them");
	sk = calloc(1, sizeof(*sk));
	if (!sk)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
	sk->pfs = pfs;
	sk->cfg = cfg;
	sk->committed = NAN;
	sk->child_status = -1;
	sk->output_fd = -1;
	sk->key.exclude = getpid();
	sk->key.name = cfg->target.kind == VT_SOAK_NAME ? cfg->target.name : NULL;
	sk->key.pidfile = cfg->target.kind == VT_SOAK_PIDFILE ? cfg->target.pidfile : NULL;
	sk->start = vt_mono_s();     /* for the progress while waiting; sampling restarts the clock */
	/* A bad target fails before a file is made; a bad path before a command is launched. */
	if ((cfg->target.kind != VT_SOAK_COMMAND && (rc = start_target(sk, err))) ||
	    (rc = open_store(sk, err))) {
		free(sk);
		return rc;
	}
	if (cfg->target.kind == VT_SOAK_COMMAND &&
	    ((rc = open_output(sk, err)) || (rc = start_target(sk, err)))) {
		unmake(sk);
		return rc;
	}
	if (sk->output_fd >= 0)
		close(sk->output_fd);    /* the command has it now */
	sk->output_fd = -1;
	sk->start = vt_mono_s();
	sk->next = sk->start;
	for (int k = 0; k < JOBS; k++)
		sk->jobs[k].next = sk->start;
	{
		char cpu[96] = "", allocs[128] = "", trim[64] = "";

		if (cfg->profile_every_s > 0)
			snprintf(cpu, sizeof(cpu), ", profiling it for %g s every %g s", cfg->profile_for_s,
				 cfg->profile_every_s);
		if (cfg->allocs_every_s > 0)
			snprintf(allocs, sizeof(allocs), ", its allocations for %g s every %g s (budget %g%%)",
				 cfg->allocs_for_s, cfg->allocs_every_s,
				 100 * (cfg->allocs_budget > 0 ? cfg->allocs_budget : 0.05));
		if (cfg->trim_every_s > 0)
			snprintf(trim, sizeof(trim), ", malloc_trim(0) in it every %g s", cfg->trim_every_s);
		event(sk, VT_EV_START, sk->pid, NULL, "sampling process %d every %g s%s%s%s", (int)sk->pid,
		      cfg->every_s, cpu, allocs, trim);
	}
	*out = sk;
	return VT_OK;
}

/* The soak ends: why, and the STOP event's text. */
static void end(struct vt_soak *sk, enum vt_soak_end why, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void end(struct vt_soak *sk, enum vt_soak_end why, const char *fmt, ...)
{
	va_list ap;

	sk->end = why;
	va_start(ap, fmt);
	vsnprintf(sk->end_detail, sizeof(sk->end_detail), fmt, ap);
	va_end(ap);
}

int vt_soak_step(struct vt_soak *sk, double *next, bool *done, struct vt_err *err)
{
	const struct vt_soak_config *cfg = sk->cfg;
	struct vt_err e2;
	double now = vt_mono_s();
	size_t tree_n;
	int rc;

	*done = true;
	*next = now;
	if (sk->end)
		return VT_OK;
	if (cfg->stop && *cfg->stop) {
		end(sk, VT_SOAK_END_STOPPED, "stopped on request");
		if (sk->pid)
			tick(sk, now, true, &e2);
		return VT_OK;
	}
	if (cfg->for_s > 0 && now - sk->start >= cfg->for_s - 1e-3 && !sk->pid && sk->gone_pid &&
	    cfg->wait_back_s > 0) {
		/* --for ends the wait for a restart: the target is gone, as after --wait-back */
		end(sk, VT_SOAK_END_GONE, "process %d exited and no process to follow came back in the %.0f s "
		    "before --for ended", (int)sk->gone_pid, now - sk->wait_since);
		return VT_OK;
	}
	if (cfg->for_s > 0 && now - sk->start >= cfg->for_s - 1e-3) {
		end(sk, VT_SOAK_END_FOR, "--for %g s reached", cfg->for_s);
		if (sk->pid && tick(sk, now, true, &e2) == VT_OK)
			report_progress(sk, now, "done");
		return VT_OK;
	}
	note_clock(sk, now, NULL);
	if (!sk->pid && find(sk, false, &tree_n, &e2) == VT_OK && sk->pid) {
		if (tree_n > 1)
			event(sk, VT_EV_RESTART, sk->pid, NULL, "followed: process %d after %.0f s; it has %zu "
			      "same-named descendants, not recorded (a soak records one process)", (int)sk->pid,
			      now - sk->wait_since, tree_n - 1);
		else
			event(sk, VT_EV_RESTART, sk->pid, NULL, "followed: process %d after %.0f s", (int)sk->pid,
			      now - sk->wait_since);
	}
	if (!sk->pid && cfg->wait_back_s > 0 && now - sk->wait_since >= cfg->wait_back_s - 1e-3) {
		/* Gone for good: a bounded wait, not a soak that records nothing for ever. */
		end(sk, VT_SOAK_END_GONE, "process %d exited and no process to follow came back within "
		    "%g s (--wait-back)", (int)sk->gone_pid, cfg->wait_back_s);
		return VT_OK;
	}
	if (sk->pid) {
		vt_err_clear(&e2);
		rc = tick(sk, now, false, &e2);
		if (rc == VT_OK)
			trim_if_due(sk, now);
		if (rc == VT_E_GONE) {
			sk->wait_since = now;
			if (!target_gone(sk, NULL))
				return VT_OK;
		} else if (rc == VT_E_IO || rc == VT_E_NOMEM || rc == VT_E_RECORDING ||
			   (rc == VT_E_PERM && !sk->have_first)) {
			/* the store failed (disk full, file gone read-only), or the
			 * process can no longer be read at all */
			if (err)
				*err = e2;
			sk->failed = rc;
			end(sk, VT_SOAK_END_ERROR, "error: %.180s", e2.msg);
			return rc;
		} else if (rc != VT_OK) {
			event(sk, VT_EV_ERROR, sk->pid, NULL, "%s", e2.msg);
		}
	}
	vt_err_clear(&e2);
	if ((rc = jobs_collect(sk, false, &e2)) != VT_OK) {
		if (err)
			*err = e2;
		sk->failed = rc;
		end(sk, VT_SOAK_END_ERROR, "error: %.180s", e2.msg);
		return rc;
	}
	job_start(sk, JOB_CPU, now);
	job_start(sk, JOB_ALLOCS, now);
	report_progress(sk, now, sk->pid ? "sampling" : "waiting for the target to come back");
	sk->next += cfg->every_s;
	now = vt_mono_s();
	if (now > sk->next) {
		/* Late: vitals was stopped, the machine suspended, or a tick took
		 * longer than the interval.  Skip the ticks missed, never burst. */
		double missed = floor((now - sk->next) / cfg->every_s) + 1;

		if (missed >= 3)
			event(sk, VT_EV_GAP, sk->pid, NULL, "no sample for %.1f s", missed * cfg->every_s);
		sk->next += missed * cfg->every_s;
	}
	if (cfg->for_s > 0)
		sk->next = fmin(sk->next, sk->start + cfg->for_s);
	*next = sk->next;
	*done = false;
	return VT_OK;
}

int vt_soak_finish(struct vt_soak *sk, struct vt_soak_result *res, struct vt_err *err)
{
	const struct vt_soak_config *cfg = sk->cfg;
	struct rusage ru;
	int rc = sk->failed;

	memset(res, 0, sizeof(*res));
	if (!sk->end)
		end(sk, VT_SOAK_END_STOPPED, "stopped on request");
	jobs_end(sk);            /* before a command vitals launched is stopped */
	if (sk->child && cfg->keep_command) {
		res->child = sk->child;
	} else if (sk->child) {
		vt_launch_stop(sk->child, 5.0, &sk->child_status);
		event(sk, VT_EV_EXIT, sk->child, NULL, "vitals stopped the command it launched (process %d)",
		      (int)sk->child);
	}
	event(sk, VT_EV_STOP, sk->pid, NULL, "%s", sk->end_detail);
	drop_incarnation(sk);
	res->samples = sk->samples;
	res->profiles = sk->jobs[JOB_CPU].stored;
	res->allocs = sk->jobs[JOB_ALLOCS].stored;
	res->restarts = sk->incarnations > 1 ? sk->incarnations - 1 : 0;
	res->elapsed_s = vt_mono_s() - sk->start;
	res->child_status = sk->child_status;
	res->end = sk->end;
	snprintf(res->end_detail, sizeof(res->end_detail), "%s", sk->end_detail);
	snprintf(res->missing, sizeof(res->missing), "%s", sk->missing);
	res->redacted = sk->redacted;
	snprintf(res->redacted_names, sizeof(res->redacted_names), "%s", sk->redacted_names);
	res->free_walks = sk->free_walks;
	res->free_failed = sk->free_failed;
	res->free_cpu_s = sk->free_cpu_s;
	res->free_max_cpu_s = sk->free_max_cpu_s;
	res->free_budget = cfg->free_budget > 0 ? cfg->free_budget : 0.01;
	snprintf(res->free_off, sizeof(res->free_off), "%s", sk->free_off);
	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		res->own_cpu_s = vt_rusage_cpu_s(&ru);
		res->own_maxrss = (uint64_t)ru.ru_maxrss * 1024;
	}
	if (rc == VT_OK)
		rc = vt_store_close(sk->store, err);
	else
		vt_store_close(sk->store, NULL);
	res->file_bytes = vt_store_file_bytes(cfg->out_path);   /* after the final checkpoint, and
								 * its WAL while a reader keeps one */
	vt_watch_close(sk->watch);
	free(sk);
	return rc;
}

int vt_soak_run(const struct vt_procfs *pfs, const struct vt_soak_config *cfg,
		struct vt_soak_result *res, struct vt_err *err)
{
	struct vt_soak *sk;
	double next;
	bool done = false;
	int rc;

	memset(res, 0, sizeof(*res));
	res->child_status = -1;
	if ((rc = vt_soak_start(pfs, cfg, &sk, err)))
		return rc;
	while (vt_soak_step(sk, &next, &done, err) == VT_OK && !done)
		vt_sleep_until_ns((uint64_t)(next * 1e9), cfg->stop);
	return vt_soak_finish(sk, res, err);
}

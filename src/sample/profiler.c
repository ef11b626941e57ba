/*
 * profiler.c — perf samples and thread counters turned into one profile.
 *
 * The loop: wait for perf samples until the next tick; at each tick read
 * the threads (names, CPU, states), give new threads perf events, refresh
 * the module list when code was mapped, and in wall mode sample the
 * threads that are not running.  Each sample becomes a stack of interned
 * locations (a pc cache spares the symbolizer the pcs it has named).
 */
#include "sample/profiler.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/unknown.h"
#include "elf/demangle.h"
#include "elf/unwind.h"
#include "inject/stack_grab.h"
#include "perf/perf_calibrate.h"
#include "perf/perf_events.h"
#include "proc/kallsyms.h"
#include "proc/maps.h"
#include "proc/schedstat.h"
#include "proc/stat.h"
#include "proc/syscall_names.h"
#include "proc/task.h"
#include "proc/thread_watch.h"
#include "proc/wchan_syscall.h"
#include "sample/stack_namer.h"
#include "sample/threads.h"
#include "sample/target.h"

#define TICK_NS 100000000ull
#define WALL_STACK_BYTES 8192
#define NO_IDX UINT32_MAX

/* What the profiler knows of one thread. */
struct tid_info {
	pid_t tid;                  /* 0: free slot */
	bool wanted;                /* its name matches --threads (always without) */
	bool named;                 /* comm is known */
	char comm[64];
	uint32_t thread;            /* index in the profile, NO_IDX until it has a sample */
	bool counters;              /* run/wait below were read */
	bool started, ended;        /* counted in meta.threads_started, threads_ended */
	bool hot;                   /* light ticks: sampled since the last tick (in pr->hot) */
	uint64_t run_first, run_last;   /* schedstat run_ns at first and last read */
	uint64_t ticks_first, ticks_last;   /* utime+stime at first and last read */
	uint64_t wait_last;         /* schedstat wait_ns at the last read */
	uint64_t runnable_ns;       /* runnable time not yet counted as samples */
	uint32_t *last;             /* its last running stack, leaf first (owned) */
	uint32_t last_depth;
	bool last_truncated;
	/* ptrace mode */
	bool ran;                   /* ran since the tick before, or new: worth a look */
	double oncpu_p;             /* in state R, the chance it is on a CPU, not queued */
	uint64_t grab_run_ns;       /* schedstat run_ns its last counted grab covered up to */
	double grab_carry;          /* samples owed to it but not yet counted (a fraction) */
};

struct profiler {
	const struct vt_procfs *pfs;
	pid_t pid;
	int dirfd;
	const struct vt_profiler_opts *opts;
	unsigned hz;
	unsigned wall_weight;       /* samples one wall sample counts for */
	unsigned ticks;             /* wall ticks this tick stands for (more when one came late:
	                             * a slow read of many threads) */
	struct vt_profile *p;
	struct vt_perf *perf;
	struct vt_perf_opts perf_opts;
	struct vt_stack_grab *grab;  /* ptrace mode: perf events were refused */
	struct vt_unwinder *uw;
	struct vt_ksyms *ks;
	struct vt_thread_watch *watch;
	struct vt_lock_probe *locks;  /* wall mode with opts->locks: the locks blocked threads wait on */
	struct vt_buf buf;

	struct tid_info *tids;      /* open addressing by tid */
	size_t tid_cap, tid_n;
	struct vt_stack_namer names; /* pcs -> the profile's locations */

	uint32_t kernel_module;     /* profile module of "[kernel]" */
	uint32_t locs[VT_PROFILE_MAX_DEPTH];
	struct vt_unwind_frame frames[VT_PROFILE_MAX_DEPTH];
	uint8_t wall_stack[WALL_STACK_BYTES];
	uint32_t syscall_frame;     /* ptrace mode: the kernel frame to put under the user stack */
	uint64_t sample_count;      /* samples the next stack counts for: 1, more in ptrace mode */
	uint64_t stops;             /* ptrace mode: stops counted */
	unsigned grab_timeout_us;   /* ptrace mode: how long a stop may take to come */
	struct vt_stack_grab_sample *grab_sample;   /* ptrace mode: 16 KiB of stack (owned) */
	pid_t *grab_tids;           /* ptrace mode: the threads to look at this time (owned) */
	size_t grab_tids_cap;
	bool nomem;                 /* an allocation failed in a callback: the run ends with VT_E_NOMEM */
	uint64_t filtered;          /* samples of threads --threads left out */
	/* CPU mode with perf events: a tick reads the threads sampled since the last one,
	 * every thread only at the start and the end (see light_tick) */
	bool light;
	bool perf_inherit;          /* new threads inherit their maker's events: no sync */
	pid_t *hot;                 /* light: the threads sampled since the last tick (owned) */
	size_t nhot, hot_cap;
	uint64_t unnamed_seen;      /* names.unnamed at the last module refresh */
	uint64_t refreshed_ns;      /* when the module list was last read */
};

/* ---- threads ---- */

static struct tid_info *tid_find(struct profiler *pr, pid_t tid, bool add)
{
	if (add && (pr->tid_n + 1) * 2 > pr->tid_cap) {
		size_t cap = pr->tid_cap ? pr->tid_cap * 2 : 64;
		struct tid_info *n = calloc(cap, sizeof(*n));
		if (!n) {
			pr->nomem = true;
			return NULL;
		}
		for (size_t i = 0; i < pr->tid_cap; i++) {
			if (!pr->tids[i].tid)
				continue;
			size_t s = (size_t)pr->tids[i].tid & (cap - 1);
			while (n[s].tid)
				s = (s + 1) & (cap - 1);
			n[s] = pr->tids[i];
		}
		free(pr->tids);
		pr->tids = n;
		pr->tid_cap = cap;
	}
	if (!pr->tid_cap)
		return NULL;
	size_t s = (size_t)tid & (pr->tid_cap - 1);
	while (pr->tids[s].tid && pr->tids[s].tid != tid)
		s = (s + 1) & (pr->tid_cap - 1);
	if (pr->tids[s].tid == tid)
		return &pr->tids[s];
	if (!add)
		return NULL;
	pr->tids[s] = (struct tid_info){ .tid = tid, .thread = NO_IDX, .wanted = true,
					 .ran = true, .oncpu_p = 1, .grab_run_ns = VT_NA };
	pr->tid_n++;
	return &pr->tids[s];
}

static void tid_name(struct profiler *pr, struct tid_info *ti, const char *comm)
{
	if (ti->named && strcmp(ti->comm, comm) == 0)
		return;
	snprintf(ti->comm, sizeof(ti->comm), "%s", comm);
	ti->named = true;
	ti->wanted = !pr->opts->threads_glob || fnmatch(pr->opts->threads_glob, comm, 0) == 0;
}

/* ti's name now, from task/TID/comm.  false: it is gone. */
static bool tid_rename_from_proc(struct profiler *pr, struct tid_info *ti)
{
	char path[64];
	struct vt_err err;
	snprintf(path, sizeof(path), "task/%d/comm", (int)ti->tid);
	if (vt_read_at(pr->dirfd, path, &pr->buf, &err) == VT_OK && pr->buf.len > 0) {
		size_t len = pr->buf.len;
		while (len && (pr->buf.data[len - 1] == '\n'))
			len--;
		char comm[64];
		snprintf(comm, sizeof(comm), "%.*s", (int)len, pr->buf.data);
		tid_name(pr, ti, comm);
		return true;
	}
	return false;
}

/* A thread perf saw before the watch did: its name from task/TID/comm.  false: it is gone. */
static bool tid_name_from_proc(struct profiler *pr, struct tid_info *ti)
{
	if (tid_rename_from_proc(pr, ti))
		return true;
	tid_name(pr, ti, "(exited)");   /* a thread that lived between two listings */
	return false;
}

static uint32_t tid_thread(struct profiler *pr, struct tid_info *ti)
{
	if (ti->thread == NO_IDX) {
		ti->thread = vt_profile_intern_thread(pr->p, ti->tid, ti->comm);
		if (ti->thread == NO_IDX)
			pr->nomem = true;
	}
	return ti->thread;
}

/* ---- locations ---- */

/* The process's executable, as the profile's program (after an exec, the new one). */
static void note_program(struct profiler *pr)
{
	char exe[PATH_MAX];
	ssize_t n = readlinkat(pr->dirfd, "exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return;
	exe[n] = '\0';
	uint32_t s = vt_profile_intern_str(pr->p, exe);
	if (s != NO_IDX)
		pr->p->meta.program = s;
}

/*
 * Name the kernel locations from /proc/kallsyms, loaded now that sampling is
 * over (it takes about half a second to parse: sampling starts without it).
 * The synthetic ones (a wait, a system call) are named already.
 */
static void name_kernel_locs(struct profiler *pr)
{
	struct vt_profile *p = pr->p;
	struct vt_err err;
	if (pr->opts->no_kernel || pr->grab || vt_ksyms_load(NULL, &pr->ks, &err) != VT_OK)
		return;
	p->meta.kernel_symbols = true;
	p->modules[pr->kernel_module].symbols = VT_SYMS_KALLSYMS;
	uint32_t kmod = p->modules[pr->kernel_module].name;
	for (uint32_t i = 0; i < p->nlocs; i++) {
		struct vt_prof_loc *l = &p->locs[i];
		if (!l->kernel || l->func >= p->nfuncs || p->funcs[l->func].name)
			continue;
		const char *name = vt_ksyms_name(pr->ks, l->pc);
		uint32_t func = name ? vt_profile_intern_func(p, vt_profile_intern_str(p, name), kmod)
				     : NO_IDX;
		if (func != NO_IDX)
			l->func = func;
	}
}

void vt_profiler_regs_to_dwarf(const uint64_t *perf, struct vt_unwind_start *st)
{
	static const int map[VT_PERF_NREGS] = {
		[VT_PERF_REG_AX] = VT_DW_RAX, [VT_PERF_REG_BX] = VT_DW_RBX,
		[VT_PERF_REG_CX] = VT_DW_RCX, [VT_PERF_REG_DX] = VT_DW_RDX,
		[VT_PERF_REG_SI] = VT_DW_RSI, [VT_PERF_REG_DI] = VT_DW_RDI,
		[VT_PERF_REG_BP] = VT_DW_RBP, [VT_PERF_REG_SP] = VT_DW_RSP,
		[VT_PERF_REG_IP] = VT_DW_RIP, [VT_PERF_REG_R8] = VT_DW_R8,
		[VT_PERF_REG_R9] = VT_DW_R9, [VT_PERF_REG_R10] = VT_DW_R10,
		[VT_PERF_REG_R11] = VT_DW_R11, [VT_PERF_REG_R12] = VT_DW_R12,
		[VT_PERF_REG_R13] = VT_DW_R13, [VT_PERF_REG_R14] = VT_DW_R14,
		[VT_PERF_REG_R15] = VT_DW_R15,
	};
	for (int i = 0; i < VT_PERF_NREGS; i++) {
		st->regs[map[i]] = perf[i];
		st->known |= 1u << map[i];
	}
}

/* The user frames of a perf sample: CFI from its registers and stack copy, else the
 * kernel's frame-pointer chain when that gets further. */
static size_t user_frames(struct profiler *pr, const struct vt_perf_sample *s,
			  const uint64_t *fp_chain, size_t nfp, bool *truncated)
{
	size_t n = 0;
	enum vt_unwind_end why = VT_UNWIND_END_ROOT;
	if (s->regs_ok) {
		struct vt_unwind_start st = { .stack = s->stack, .stack_len = s->stack_len,
					      .stack_addr = s->regs[VT_PERF_REG_SP],
					      .read_target = true };
		vt_profiler_regs_to_dwarf(s->regs, &st);
		n = vt_unwind(pr->uw, s->tid, &st, pr->frames, VT_PROFILE_MAX_DEPTH, &why);
	}
	if (n <= 1 && nfp > n) {
		n = nfp < VT_PROFILE_MAX_DEPTH ? nfp : VT_PROFILE_MAX_DEPTH;
		for (size_t i = 0; i < n; i++)
			pr->frames[i] = (struct vt_unwind_frame){
				.pc = fp_chain[i],
				.method = i + 1 < n ? VT_UNWIND_FP : VT_UNWIND_NONE,
				.activation = i == 0,
			};
		why = VT_UNWIND_END_ROOT;
	}
	if (n <= 1 && !s->in_kernel)
		pr->p->meta.unwind_failed++;
	*truncated = why != VT_UNWIND_END_ROOT;
	return n;
}

static void remember_stack(struct profiler *pr, struct tid_info *ti, uint32_t depth, bool trunc)
{
	if (!ti->last) {
		ti->last = malloc(VT_PROFILE_MAX_DEPTH * sizeof(*ti->last));
		if (!ti->last)
			return;   /* runnable time falls back to a bare "[runnable]" row */
	}
	memcpy(ti->last, pr->locs, depth * sizeof(*pr->locs));
	ti->last_depth = depth;
	ti->last_truncated = trunc;
}

/* Light ticks: ti was sampled, so the next tick reads its counters. */
static void mark_hot(struct profiler *pr, struct tid_info *ti)
{
	if (pr->nhot == pr->hot_cap) {
		size_t cap = pr->hot_cap ? pr->hot_cap * 2 : 64;
		pid_t *n = realloc(pr->hot, cap * sizeof(*n));

		if (!n) {
			pr->nomem = true;
			return;
		}
		pr->hot = n;
		pr->hot_cap = cap;
	}
	pr->hot[pr->nhot++] = ti->tid;
	ti->hot = true;
}

static void on_sample(void *ctx, const struct vt_perf_sample *s)
{
	struct profiler *pr = ctx;
	/* a thread the first listing did not have (perf samples come after it) started since */
	bool unknown = !tid_find(pr, s->tid, false);
	struct tid_info *ti = tid_find(pr, s->tid, true);
	if (!ti)
		return;
	if (unknown) {
		ti->started = true;
		pr->p->meta.threads_started++;
	}
	if (!ti->named && !tid_name_from_proc(pr, ti) && !ti->ended) {
		ti->ended = true;
		pr->p->meta.threads_ended++;
	}
	if (pr->light && !ti->hot)
		mark_hot(pr, ti);
	if (!ti->wanted) {
		pr->filtered++;
		return;
	}
	/* the kernel's chain: context markers, kernel frames, then user frames by frame pointer */
	uint64_t fp_user[VT_PROFILE_MAX_DEPTH];
	size_t nfp = 0;
	uint32_t depth = 0;
	uint64_t context = 0;
	for (uint32_t i = 0; i < s->nchain; i++) {
		uint64_t pc = s->callchain[i];
		if (pc >= VT_PERF_CONTEXT_MAX) {
			context = pc;
			continue;
		}
		if (context == PERF_CONTEXT_KERNEL && !pr->opts->no_kernel &&
		    depth < VT_PROFILE_MAX_DEPTH) {
			uint32_t loc = vt_stack_namer_kernel(&pr->names, pc, pr->kernel_module);
			if (loc != NO_IDX)
				pr->locs[depth++] = loc;
		} else if (context == PERF_CONTEXT_USER && nfp < VT_PROFILE_MAX_DEPTH) {
			fp_user[nfp++] = pc;
		}
	}
	if (depth == 0 && s->in_kernel && !pr->opts->no_kernel) {
		uint32_t loc = vt_stack_namer_kernel(&pr->names, s->ip, pr->kernel_module);
		if (loc != NO_IDX)
			pr->locs[depth++] = loc;
	}
	if (pr->syscall_frame && depth < VT_PROFILE_MAX_DEPTH) {
		/* one location per system call name: its "pc" is the name's string index */
		uint32_t func = vt_profile_intern_func(pr->p, pr->syscall_frame,
						       pr->p->modules[pr->kernel_module].name);
		uint32_t loc = vt_profile_intern_loc(pr->p, pr->syscall_frame, 0, func, true);
		if (loc != NO_IDX)
			pr->locs[depth++] = loc;
	}
	bool truncated = false;
	size_t n = user_frames(pr, s, fp_user, nfp, &truncated);
	if (n == 0 && !s->in_kernel) {
		pr->frames[0] = (struct vt_unwind_frame){ .pc = s->ip, .activation = 1 };
		n = 1;
	}
	vt_stack_namer_push(&pr->names, pr->frames, n, pr->locs, &depth);
	if (depth == 0)
		return;
	uint32_t thread = tid_thread(pr, ti);
	if (thread == NO_IDX)
		return;
	struct vt_err err;
	if (vt_profile_add(pr->p, pr->locs, depth, thread, VT_PROF_RUNNING, 0, truncated,
			   pr->sample_count, &err))
		pr->nomem = true;
	remember_stack(pr, ti, depth, truncated);
}

/* ---- wall mode: threads that are not running ---- */

static enum vt_prof_state state_of(char st)
{
	switch (st) {
	case 'S': case 'I': return VT_PROF_SLEEPING;
	case 'D': return VT_PROF_DISK;
	case 'R': return VT_PROF_RUNNABLE;
	default: return VT_PROF_OTHER;
	}
}

/* The stack of a thread blocked in the kernel, from /proc/TID/syscall's sp and pc and a copy
 * of its stack: no stop.  Returns the frames in pr->frames; 0 when it cannot be read. */
static size_t blocked_stack(struct profiler *pr, const struct vt_thread_counts *row, long *nr, bool *truncated)
{
	char path[64];
	struct vt_err err;
	uint64_t sp, pc;
	pid_t tid = row->tid;
	*nr = VT_SYSCALL_RUNNING;
	if (row->syscall_rc == VT_OK) {
		/* read with the counters this tick (the lock probe needs them too) */
		*nr = row->syscall;
		sp = row->syscall_sp;
		pc = row->syscall_pc;
		if (pc == 0)
			return 0;
	} else {
		snprintf(path, sizeof(path), "task/%d/syscall", (int)tid);
		if (vt_read_at(pr->dirfd, path, &pr->buf, &err) != VT_OK)
			return 0;
		if (vt_syscall_parse(pr->buf.data, pr->buf.len, nr, NULL, &err) != VT_OK ||
		    !vt_syscall_parse_sp_pc(pr->buf.data, pr->buf.len, &sp, &pc) || pc == 0)
			return 0;
	}
	/* the copy may run past the top of the stack mapping: take what reads */
	size_t len = 0;
	for (size_t want = WALL_STACK_BYTES; want >= 512 && len == 0; want /= 4) {
		struct iovec local = { pr->wall_stack, want }, remote = { (void *)(uintptr_t)sp, want };
		ssize_t got = process_vm_readv(tid, &local, 1, &remote, 1, 0);
		if (got > 0)
			len = (size_t)got;
	}
	struct vt_unwind_start st;
	vt_unwind_start_blocked(&st, sp, pc, pr->wall_stack, len);
	enum vt_unwind_end why = VT_UNWIND_END_ROOT;
	size_t n = vt_unwind(pr->uw, tid, &st, pr->frames, VT_PROFILE_MAX_DEPTH, &why);
	if (n == 0) {
		pr->frames[0] = (struct vt_unwind_frame){ .pc = pc, .activation = 1 };
		n = 1;
		why = VT_UNWIND_END_NOINFO;
	}
	*truncated = why != VT_UNWIND_END_ROOT;
	return n;
}

static void wall_sample_blocked(struct profiler *pr, struct tid_info *ti,
				const struct vt_thread_counts *row)
{
	long nr;
	bool truncated = false;
	size_t n = blocked_stack(pr, row, &nr, &truncated);
	uint32_t depth = 0;
	char wait[64] = "";
	if (row->wchan[0])
		snprintf(wait, sizeof(wait), "%s", row->wchan);
	else if (nr >= 0)
		vt_syscall_label(nr, wait, sizeof(wait));
	vt_stack_namer_push(&pr->names, pr->frames, n, pr->locs, &depth);
	if (depth == 0) {
		/* no user stack could be read (it woke meanwhile, or syscall is refused): the
		 * kernel function it waits in stands for it, as a kernel frame of its own
		 * (its "pc" is the name's string index: one location per name) */
		uint32_t name = vt_profile_intern_str(pr->p, wait[0] ? wait : "[blocked]");
		uint32_t func = vt_profile_intern_func(pr->p, name,
						       pr->p->modules[pr->kernel_module].name);
		pr->locs[depth++] = vt_profile_intern_loc(pr->p, name, 0, func, true);
		truncated = true;
	}
	uint32_t thread = tid_thread(pr, ti);
	struct vt_err err;
	if (thread == NO_IDX || pr->locs[0] == NO_IDX ||
	    vt_profile_add(pr->p, pr->locs, depth, thread, state_of(row->state),
			   vt_profile_intern_str(pr->p, wait), truncated,
			   (uint64_t)pr->wall_weight * pr->ticks, &err))
		pr->nomem = true;
}

/* Runnable time since the last read, as samples against the thread's last running stack. */
static void wall_count_runnable(struct profiler *pr, struct tid_info *ti, uint64_t before,
				uint64_t now)
{
	if (vt_known(before) && vt_known(now) && now > before)
		ti->runnable_ns += now - before;
	uint64_t per_sample = 1000000000ull / pr->hz;
	uint64_t n = ti->runnable_ns / per_sample;
	if (n == 0)
		return;
	ti->runnable_ns -= n * per_sample;
	uint32_t thread = tid_thread(pr, ti);
	struct vt_err err;
	if (thread == NO_IDX)
		return;
	if (ti->last && ti->last_depth) {
		if (vt_profile_add(pr->p, ti->last, ti->last_depth, thread, VT_PROF_RUNNABLE, 0,
				   ti->last_truncated, n, &err))
			pr->nomem = true;
		return;
	}
	/* never seen running: a frame of its own, in no code module (not anonymous code) */
	uint32_t mod = vt_profile_intern_module(pr->p, "[no stack]", "");
	uint32_t func = mod == NO_IDX ? NO_IDX
		: vt_profile_intern_func(pr->p, vt_profile_intern_str(pr->p, "[runnable]"),
					 pr->p->modules[mod].name);
	uint32_t loc = func == NO_IDX ? NO_IDX : vt_profile_intern_loc(pr->p, 0, 0, func, false);
	if (loc == NO_IDX || vt_profile_add(pr->p, &loc, 1, thread, VT_PROF_RUNNABLE, 0, true, n, &err))
		pr->nomem = true;
}

/* ---- ptrace mode: running threads stopped one at a time, briefly ---- */

/*
 * Without perf events there is no interrupt on a thread's CPU clock, so the
 * profiler looks at the threads hz times a second (at jittered instants, so
 * that a thread paced by a timer is not always met at the same point of its
 * period) and stops those it finds running.  Finding a thread running is
 * luck: a thread at 5% of a core is found once in twenty looks.  So each
 * grab counts for the CPU the thread used since its previous counted grab,
 * read from its schedstat at the grab, in samples of 1/hz s: every thread's
 * samples add up to its measured CPU, and the stacks split it.  The ± of a
 * share is then that of the grabs, which the counts approximate.
 */

/* CPU a thread has used, from its schedstat (ns), VT_NA unknown. */
static uint64_t thread_run_ns(struct profiler *pr, pid_t tid)
{
	char path[64];
	struct vt_schedstat ss;
	struct vt_err err;
	snprintf(path, sizeof(path), "task/%d/schedstat", (int)tid);
	if (vt_read_at(pr->dirfd, path, &pr->buf, &err) != VT_OK ||
	    vt_schedstat_parse(pr->buf.data, pr->buf.len, &ss, &err) != VT_OK)
		return VT_NA;
	return ss.run_ns;
}

/* ran_ns more of ti's CPU, up to run: the whole samples of 1/hz s it owes now (the
 * fraction is carried to the next). */
static uint64_t owed_samples(struct profiler *pr, struct tid_info *ti, uint64_t ran_ns,
			     uint64_t run)
{
	double owed = (double)ran_ns * pr->hz / 1e9 + ti->grab_carry;
	uint64_t count = (uint64_t)(owed + 0.5);
	ti->grab_carry = owed - (double)count;
	ti->grab_run_ns = run;
	return count;
}

/* Samples a grab of ti counts for: its CPU since the last counted grab, in 1/hz s. */
static uint64_t grab_weight(struct profiler *pr, struct tid_info *ti, pid_t tid)
{
	uint64_t run = thread_run_ns(pr, tid);
	uint64_t from = vt_known(ti->grab_run_ns) ? ti->grab_run_ns : ti->run_first;
	if (!vt_known(run) || !vt_known(from) || run < from)
		return 1;   /* no schedstat: one sample per grab */
	return owed_samples(pr, ti, run - from, run);
}

/*
 * Grab a running thread's registers and stack and count them as its CPU
 * since its last grab.  A thread caught in a system call gets the call as
 * its kernel frame (__x64_sys_NAME, what the kernel's own frame would be
 * called).
 */
static void grab_running(struct profiler *pr, pid_t tid)
{
	struct vt_stack_grab_sample *gs = pr->grab_sample;
	struct tid_info *ti;
	struct vt_err err;
	int rc = vt_stack_grab(pr->grab, tid, pr->grab_timeout_us, gs, &err);
	/* on a box so busy that running threads are slow to stop, wait longer (up to 2 ms),
	 * else nearly every stop times out and the profile has nothing to show */
	if (rc == VT_E_TIMEOUT && pr->grab_timeout_us < 2000)
		pr->grab_timeout_us *= 2;
	else if (rc == VT_OK && gs->held == VT_GRAB_TAKEN &&
		 pr->grab_timeout_us > VT_PROFILER_GRAB_TIMEOUT_US)
		pr->grab_timeout_us -= pr->grab_timeout_us / 8;
	if (rc != VT_OK || gs->held != VT_GRAB_TAKEN)
		return;
	/* it went to sleep between the read of its state and the stop: the stop broke a
	 * wait that now restarts, not a moment of CPU */
	if (gs->state != 'R' || gs->syscall_restarts || gs->queued || !(ti = tid_find(pr, tid, false)))
		return;
	uint64_t count = grab_weight(pr, ti, tid);
	if (count == 0)
		return;   /* it used less than half a sample since: its next grab counts it */
	if (gs->syscall >= 0 && !pr->opts->no_kernel) {
		char name[64], label[48];
		vt_syscall_label(gs->syscall, label, sizeof(label));
		snprintf(name, sizeof(name), "__x64_sys_%s", label);
		pr->syscall_frame = vt_profile_intern_str(pr->p, name);
	} else {
		pr->syscall_frame = 0;
	}
	pr->sample_count = count;
	pr->stops++;
	on_sample(pr, &gs->sample);   /* may move pr->tids: ti is not used after */
	pr->sample_count = 1;
	pr->syscall_frame = 0;
}

/*
 * State R is running or waiting for a CPU.  ptrace samples only the first,
 * so a thread in R is grabbed with the chance that it was on a CPU: its run
 * time over its run plus queue time since the last tick (schedstat).  On a
 * busy host a queued thread is otherwise sampled where it waits (the way
 * out of a sleep), and stopped for nothing.
 */
static double oncpu_share(uint64_t run0, uint64_t run1, uint64_t wait0, uint64_t wait1)
{
	if (!vt_known(run0) || !vt_known(run1) || !vt_known(wait0) || !vt_known(wait1) ||
	    run1 < run0 || wait1 < wait0)
		return 1;
	double run = (double)(run1 - run0), queued = (double)(wait1 - wait0);
	return run + queued > 0 ? run / (run + queued) : 1;
}

/* One look at the threads that ran lately: those found running are grabbed. */
static void grab_look(struct profiler *pr)
{
	size_t n = 0;
	if (pr->grab_tids_cap < pr->tid_n) {
		pid_t *t = realloc(pr->grab_tids, pr->tid_n * sizeof(*t));
		if (!t) {
			pr->nomem = true;
			return;
		}
		pr->grab_tids = t;
		pr->grab_tids_cap = pr->tid_n;
	}
	/* the tids first: a grab's sample may grow pr->tids */
	for (size_t i = 0; i < pr->tid_cap && n < pr->grab_tids_cap; i++) {
		const struct tid_info *ti = &pr->tids[i];
		/* a thread with no counted grab yet is looked at every time: its CPU
		 * has no stack to go to until it has one */
		if (ti->tid && ti->wanted && ti->counters && ti->ran &&
		    (!vt_known(ti->grab_run_ns) || drand48() < ti->oncpu_p))
			pr->grab_tids[n++] = ti->tid;
	}
	for (size_t i = 0; i < n && !pr->nomem; i++)
		grab_running(pr, pr->grab_tids[i]);
}

/* The CPU each grabbed thread used after its last grab, counted against that grab's stack. */
static void grab_settle(struct profiler *pr)
{
	for (size_t i = 0; i < pr->tid_cap; i++) {
		struct tid_info *ti = &pr->tids[i];
		if (!ti->tid || !ti->last || !ti->last_depth || ti->thread == NO_IDX ||
		    !vt_known(ti->grab_run_ns) || !vt_known(ti->run_last) ||
		    ti->run_last < ti->grab_run_ns)
			continue;
		uint64_t count = owed_samples(pr, ti, ti->run_last - ti->grab_run_ns, ti->run_last);
		struct vt_err err;
		if (count && vt_profile_add(pr->p, ti->last, ti->last_depth, ti->thread, VT_PROF_RUNNING,
					    0, ti->last_truncated, count, &err))
			pr->nomem = true;
	}
}

/* ---- ticks ---- */

/* ti is row's entry: found by the caller, since a tid_find that adds may move the table. */
static void note_counters(struct profiler *pr, struct tid_info *ti, const struct vt_thread_counts *row,
			  bool fresh)
{
	tid_name(pr, ti, row->comm);
	uint64_t ticks = row->utime_ticks + row->stime_ticks;
	if (!ti->counters) {
		/* a thread born during the profile: all of its CPU is inside it */
		ti->run_first = fresh ? 0 : row->run_ns;
		ti->ticks_first = fresh ? 0 : ticks;
	}
	/* a row of an earlier read (an exited thread's last full read) does not take back
	 * what a light tick read since */
	bool older = ti->counters && vt_known(ti->run_last) && vt_known(row->run_ns) &&
		     row->run_ns < ti->run_last;
	if (!older) {
		ti->run_last = row->run_ns;
		ti->wait_last = row->wait_ns;
	}
	if (!ti->counters || ticks >= ti->ticks_last)
		ti->ticks_last = ticks;
	ti->counters = true;
}

/* Read the threads: names, counters, and (wall) the samples of those not running. */
/*
 * The locks the profiled threads wait on at this tick: the watch's read as a
 * threads sample (every thread's system call read), the threads --threads
 * leaves out taken out of it, counted by the lock probe.
 */
static void count_locks(struct profiler *pr)
{
	struct vt_threads_sample s;
	struct vt_err err;
	size_t i, k = 0;

	if (vt_threads_sample_from_watch(pr->watch, true, &s, &err) != VT_OK) {
		if (err.code == VT_E_NOMEM)
			pr->nomem = true;
		return;
	}
	for (i = 0; i < s.n; i++) {
		struct tid_info *ti = tid_find(pr, s.threads[i].tid, false);

		if (ti && ti->wanted)
			s.threads[k++] = s.threads[i];
	}
	s.n = k;
	if (vt_lock_probe_sample(pr->locks, &s, pr->opts->locks, &err) != VT_OK)
		pr->nomem = true;
	vt_threads_sample_release(&s);
	/* what each holder read this tick was running: the top of its last sampled stack */
	for (i = 0; i < pr->opts->locks->n; i++) {
		struct vt_lock *lk = &pr->opts->locks->v[i];
		struct tid_info *ti = lk->holder_now ? tid_find(pr, lk->holder_now, false) : NULL;
		char label[256];
		uint32_t d;

		if (!ti || !ti->last)
			continue;
		for (d = 0; d < ti->last_depth && pr->p->locs[ti->last[d]].kernel; d++)
			;
		if (d == ti->last_depth)
			continue;
		vt_profile_loc_label(pr->p, ti->last[d], label, sizeof(label));
		vt_lock_add_holder_frame(lk, label);
	}
}

static int tick(struct profiler *pr, bool first, bool wall, struct vt_err *err)
{
	int rc = vt_thread_watch_read(pr->watch, !wall ? 0 : pr->locks ? VT_TW_WCHAN | VT_TW_SYSCALL : VT_TW_WCHAN,
				      err);
	if (rc == VT_E_GONE)
		return rc;
	size_t n, nx;
	const struct vt_thread_counts *rows = vt_thread_watch_rows(pr->watch, &n);
	const struct vt_thread_counts *gone = vt_thread_watch_exited(pr->watch, &nx);
	for (size_t i = 0; i < nx; i++) {
		struct tid_info *ti = tid_find(pr, gone[i].tid, true);
		if (!ti)
			continue;
		note_counters(pr, ti, &gone[i], false);
		if (!ti->ended) {
			ti->ended = true;
			pr->p->meta.threads_ended++;
		}
	}
	for (size_t i = 0; i < n; i++) {
		struct tid_info *ti = tid_find(pr, rows[i].tid, true);
		if (!ti)
			continue;
		if (!first && rows[i].is_new && !ti->started) {
			ti->started = true;
			pr->p->meta.threads_started++;
		}
		uint64_t wait_before = ti->counters ? ti->wait_last : VT_NA;
		uint64_t run_before = ti->counters ? ti->run_last : VT_NA;
		note_counters(pr, ti, &rows[i], !first && rows[i].is_new);
		ti->ran = first || rows[i].is_new || rows[i].state == 'R' || !vt_known(run_before) ||
			  ti->run_last != run_before;
		ti->oncpu_p = oncpu_share(run_before, ti->run_last, wait_before, ti->wait_last);
		if (!wall || first || !ti->wanted)
			continue;
		wall_count_runnable(pr, ti, wait_before, rows[i].wait_ns);
		if (rows[i].state != 'R')
			wall_sample_blocked(pr, ti, &rows[i]);
	}
	if (wall && !first && pr->locks)
		count_locks(pr);
	return VT_OK;
}

/*
 * A tick of a CPU profile with perf events.  The counters are needed only
 * at the start and the end (each thread's CPU over the profile), and of a
 * thread that exits meanwhile, at its last tick: so a tick reads the
 * threads sampled since the one before, and the main thread's stat (does
 * the process still live?), not every thread.  An idle thread costs nothing between the
 * start and the end.  A thread no sample caught used less than a period of
 * CPU since (or, where perf_event_paranoid refuses kernel frames, spent it
 * in the kernel); if it exits before the end, its CPU is left to the
 * process's (unlisted), as a thread's that lived between two ticks always
 * was.  With --threads, a sampled thread's name is read again, for a
 * thread that renamed itself.  When most threads were sampled, one read
 * of all of them through the watch's held fds is cheaper than one by one.
 * The process has exited when its main thread's stat is gone, or says it
 * is a zombie and the last thread (as the watch judges it).
 */
static void light_counters(struct profiler *pr, struct tid_info *ti)
{
	char path[64];
	struct vt_err err;
	struct vt_schedstat ss;
	struct vt_thread_counts row = { .tid = ti->tid, .run_ns = VT_NA, .wait_ns = VT_NA };

	snprintf(path, sizeof(path), "task/%d/schedstat", (int)ti->tid);
	int rc = vt_read_at(pr->dirfd, path, &pr->buf, &err);
	if (rc == VT_OK && vt_schedstat_parse(pr->buf.data, pr->buf.len, &ss, &err) == VT_OK) {
		row.run_ns = ss.run_ns;
		row.wait_ns = ss.wait_ns;
		row.utime_ticks = ti->ticks_last;   /* not read: kept as they were */
	} else if (rc == VT_E_NOTFOUND) {
		/* a kernel without schedstat: the clock ticks of the thread's stat */
		struct vt_proc_stat st;

		snprintf(path, sizeof(path), "task/%d/stat", (int)ti->tid);
		if (vt_read_at(pr->dirfd, path, &pr->buf, &err) != VT_OK ||
		    vt_proc_stat_parse(pr->buf.data, pr->buf.len, &st, &err) != VT_OK)
			return;
		row.utime_ticks = st.utime_ticks;
		row.stime_ticks = st.stime_ticks;
	} else {
		return;   /* it exited: its counters of the last read stand */
	}
	snprintf(row.comm, sizeof(row.comm), "%s", ti->comm);
	/* a thread without counters was not there at the start: all its CPU is inside */
	note_counters(pr, ti, &row, !ti->counters);
}

static int light_tick(struct profiler *pr, struct vt_err *err)
{
	if (pr->nhot * 2 > vt_thread_watch_count(pr->watch)) {
		for (size_t i = 0; i < pr->nhot; i++) {
			struct tid_info *ti = tid_find(pr, pr->hot[i], false);
			if (ti)
				ti->hot = false;
		}
		pr->nhot = 0;
		return tick(pr, false, false, err);
	}
	/* the main thread's stat, not the process's, which sums every thread's CPU (a
	 * walk of them all in the kernel): its state and the process's thread count */
	struct vt_proc_stat st;
	char path[48];
	snprintf(path, sizeof(path), "task/%d/stat", (int)pr->pid);
	int rc = vt_read_at(pr->dirfd, path, &pr->buf, err);
	if (rc == VT_OK)
		rc = vt_proc_stat_parse(pr->buf.data, pr->buf.len, &st, err);
	if (rc == VT_E_GONE || rc == VT_E_NOPROC ||
	    (rc == VT_OK && (st.state == 'Z' || st.state == 'X') && st.num_threads <= 1))
		return vt_err_set(err, VT_E_GONE, ESRCH, "process %d exited", (int)pr->pid);
	for (size_t i = 0; i < pr->nhot; i++) {
		struct tid_info *ti = tid_find(pr, pr->hot[i], false);
		if (!ti)
			continue;
		ti->hot = false;
		if (pr->opts->threads_glob)
			tid_rename_from_proc(pr, ti);
		if (ti->wanted)
			light_counters(pr, ti);
	}
	pr->nhot = 0;
	return VT_OK;
}

/* ---- the run ---- */

/*
 * The module list again (a dlopen, an exec, JIT code), when a pc no module
 * holds was sampled since the last read, and at least once a second
 * otherwise: maps has a line per mapping (two per thread stack), and read
 * every tick it cost about 9 ms of a 5 s profile of 1,000 threads.
 */
#define MODULES_REFRESH_NS 1000000000ull

static void refresh_modules(struct profiler *pr, uint64_t now)
{
	if (pr->names.unnamed == pr->unnamed_seen && now - pr->refreshed_ns < MODULES_REFRESH_NS)
		return;
	vt_stack_namer_refresh(&pr->names);
	pr->unnamed_seen = pr->names.unnamed;
	pr->refreshed_ns = now;
}

/* vitals' CPU so far, its reaped children's (the calibration) included. */
static double cpu_self_s(void)
{
	struct rusage self, kids;
	if (getrusage(RUSAGE_SELF, &self) != 0 || getrusage(RUSAGE_CHILDREN, &kids) != 0)
		return -1;
	return vt_rusage_cpu_s(&self) + vt_rusage_cpu_s(&kids);
}

/*
 * The slowdown the samples caused the target: the cost of one sample,
 * measured on a calibration child with the same settings, times the
 * samples taken, over the CPU the target used.
 */
static void measure_overhead(struct profiler *pr)
{
	struct vt_prof_meta *m = &pr->p->meta;
	struct vt_perf_cost cost;
	struct vt_err err;
	uint64_t cpu_samples = 0;
	for (uint32_t i = 0; i < pr->p->nstacks; i++)
		if (pr->p->stacks[i].state == VT_PROF_RUNNING)
			cpu_samples += pr->p->stacks[i].count;
	if (pr->grab && m->process_cpu_s > 0) {
		/* each stop took its time from a thread that was running: at most that much */
		m->overhead = m->paused_s / m->process_cpu_s;
		snprintf(m->overhead_how, sizeof(m->overhead_how),
			 "at most: its threads stood stopped %.1f ms over %.2f s of its CPU",
			 m->paused_s * 1e3, m->process_cpu_s);
		return;
	}
	if (pr->grab || m->process_cpu_s <= 0 ||
	    vt_perf_calibrate(&pr->perf_opts, &cost, &err) != VT_OK)
		return;
	m->overhead = cost.ns_per_sample * (double)cpu_samples / (m->process_cpu_s * 1e9);
	snprintf(m->overhead_how, sizeof(m->overhead_how),
		 "%.1f us per sample (+-%.1f, calibrated here) x %llu samples",
		 cost.ns_per_sample / 1e3, cost.noise_ns / 1e3, (unsigned long long)cpu_samples);
}

/* Each thread's own CPU over the profile, into the profile's threads. */
static void finish_threads(struct profiler *pr, long clk_tck)
{
	struct vt_profile *p = pr->p;
	for (size_t i = 0; i < pr->tid_cap; i++) {
		struct tid_info *ti = &pr->tids[i];
		if (!ti->tid || !ti->wanted || !ti->counters)
			continue;
		double cpu;
		if (vt_known(ti->run_last) && vt_known(ti->run_first) && ti->run_last >= ti->run_first)
			cpu = (double)(ti->run_last - ti->run_first) / 1e9;
		else if (clk_tck > 0)
			cpu = (double)(ti->ticks_last - ti->ticks_first) / (double)clk_tck;
		else
			continue;
		/* a thread that used CPU gets a row even if no sample caught it */
		if (ti->thread == NO_IDX && cpu <= 0)
			continue;
		uint32_t t = tid_thread(pr, ti);
		if (t != NO_IDX)
			p->threads[t].cpu_s = cpu;
	}
}

static void profiler_end(struct profiler *pr)
{
	vt_perf_close(&pr->perf);
	vt_stack_grab_close(&pr->grab);
	vt_unwinder_free(&pr->uw);
	vt_ksyms_free(&pr->ks);
	vt_thread_watch_close(pr->watch);
	pr->watch = NULL;
	vt_lock_probe_close(pr->locks);
	pr->locks = NULL;
	for (size_t i = 0; i < pr->tid_cap; i++)
		free(pr->tids[i].last);
	free(pr->tids);
	free(pr->hot);
	vt_stack_namer_release(&pr->names);
	free(pr->grab_sample);
	free(pr->grab_tids);
	vt_buf_release(&pr->buf);
	if (pr->dirfd >= 0)
		close(pr->dirfd);
}

/*
 * Perf events were refused (kernel.perf_event_paranoid, no CAP_PERFMON):
 * sample by stopping one running thread at a time with ptrace instead, at
 * a lower rate and within a pause budget, and say so.  When ptrace is
 * refused too, the error names both and how to grant either.
 */
static int start_ptrace(struct profiler *pr, struct vt_err *err)
{
	struct vt_err perr = *err;
	struct vt_stack_grab_opts go = {
		.max_pause_share = VT_PROFILER_PAUSE_SHARE,
		.max_grabs_per_s = VT_PROFILER_GRABS_MAX,
		.running_only = true,
	};
	pr->grab_timeout_us = VT_PROFILER_GRAB_TIMEOUT_US;
	pr->grab_sample = malloc(sizeof(*pr->grab_sample));
	if (!pr->grab_sample)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory for the profile of %d", (int)pr->pid);
	int rc = vt_stack_grab_open(pr->pfs, pr->pid, &go, &pr->grab, err);
	if (rc != VT_OK) {
		char hint[VT_ERR_MSG_MAX];
		snprintf(hint, sizeof(hint), "%.180s%s%.180s", perr.hint,
			 perr.hint[0] && err->hint[0] ? "; or " : "", err->hint);
		rc = vt_err_set(err, perr.code, perr.sys_errno, "%.180s; and ptrace, the fallback: %.160s",
				perr.msg, err->msg);
		snprintf(err->hint, sizeof(err->hint), "%s", hint);
		return rc;
	}
	struct vt_prof_meta *m = &pr->p->meta;
	snprintf(m->method, sizeof(m->method), "ptrace");
	snprintf(m->method_note, sizeof(m->method_note),
		 "%s%.100s%s: running threads stopped one at a time within a budget of %.0f%% of "
		 "each one's time, a stop counting its CPU since the last",
		 perr.code ? "perf events refused (" : "", perr.code ? perr.msg : "--method ptrace",
		 perr.code ? ")" : "", VT_PROFILER_PAUSE_SHARE * 100);
	pr->hz = pr->hz < VT_PROFILER_PTRACE_HZ ? pr->hz : VT_PROFILER_PTRACE_HZ;
	m->hz = pr->hz;
	m->kernel_symbols = false;
	return VT_OK;
}

static int start(struct profiler *pr, struct vt_err *err)
{
	struct vt_proc_stat st;
	struct vt_proc_status status;
	int rc;
	if ((rc = vt_pid_open(pr->pfs, pr->pid, &pr->dirfd, err)) ||
	    (rc = vt_target_check(pr->dirfd, pr->pid, &pr->buf, &st, &status, err)) ||
	    (rc = vt_profile_new(&pr->p, err)))
		return rc;
	struct vt_prof_meta *m = &pr->p->meta;
	m->pid = pr->pid;
	snprintf(m->comm, sizeof(m->comm), "%s", st.comm);
	snprintf(m->method, sizeof(m->method), "perf cpu-clock");
	m->hz = pr->hz;
	m->wall = pr->opts->wall;
	m->overhead = NAN;
	note_program(pr);
	pr->kernel_module = vt_profile_intern_module(pr->p, "[kernel]", "/proc/kallsyms");
	if (pr->kernel_module == NO_IDX)
		return vt_err_set(err, VT_E_NOMEM, 0, "profile");
	if ((rc = vt_thread_watch_open(pr->pfs, pr->dirfd, pr->pid, &pr->watch, err)))
		return rc == VT_E_GONE ? VT_E_GONE : rc;
	if ((rc = vt_unwinder_open(pr->dirfd, pr->pid, &pr->uw, err)))
		return rc;
	vt_stack_namer_init(&pr->names, pr->p, pr->uw, pr->dirfd);
	pr->perf_opts = (struct vt_perf_opts){
		.hz = pr->hz,
		.stack_bytes = VT_PROFILER_STACK_BYTES,
		.kernel = !pr->opts->no_kernel,
		.inherit = true,   /* threads that live less than a tick are sampled too */
		.tasks = true,     /* and counted, sampled or not */
	};
	if ((rc = tick(pr, true, false, err)))
		return rc;
	if (pr->opts->ptrace) {
		vt_err_set(err, VT_E_OK, 0, "asked for");
		return start_ptrace(pr, err);
	}
	rc = vt_perf_open(pr->pid, &pr->perf_opts, &pr->perf, err);
	if (rc == VT_OK) {
		struct vt_perf_stats ps;

		vt_perf_get_stats(pr->perf, &ps);
		pr->perf_inherit = ps.inherit;
		pr->light = !pr->opts->wall;
	}
	if (rc != VT_E_PERM && rc != VT_E_UNSUPPORTED)
		return rc;
	return start_ptrace(pr, err);
}

int vt_profiler_run(const struct vt_procfs *pfs, pid_t pid, const struct vt_profiler_opts *opts,
		    struct vt_profile **out, struct vt_err *err)
{
	struct profiler pr = { .pfs = pfs, .pid = pid, .dirfd = -1, .opts = opts, .ticks = 1,
			       .sample_count = 1,
			       .buf = VT_BUF_INIT(1u << 16) };   /* stat, status, comm, syscall */
	*out = NULL;
	pr.hz = opts->hz ? opts->hz : VT_PROFILER_HZ_DEFAULT;
	if (pr.hz > VT_PROFILER_HZ_MAX)
		pr.hz = VT_PROFILER_HZ_MAX;

	double self0 = cpu_self_s();
	int rc = start(&pr, err);   /* ptrace mode lowers pr.hz */
	if (rc) {
		vt_profile_free(&pr.p);
		profiler_end(&pr);
		return rc;
	}
	/* wall mode: the locks the blocked threads wait on, when asked; without them (no
	 * memory, no fd left) the profile is still taken, and why is said */
	if (opts->wall && opts->locks) {
		struct vt_err lerr;

		vt_err_clear(&lerr);
		if (vt_lock_probe_open(pfs, pid, pr.dirfd, &pr.locks, &lerr) != VT_OK)
			snprintf(opts->locks->probe_why, sizeof(opts->locks->probe_why), "%.*s",
				 (int)sizeof(opts->locks->probe_why) - 1, lerr.msg);
	}
	/* in wall mode the tick is 1/wall_hz, wall_hz = hz / weight <= WALL_HZ_MAX, and each
	 * wall sample counts weight samples of 1/hz s */
	pr.wall_weight = (pr.hz + VT_PROFILER_WALL_HZ_MAX - 1) / VT_PROFILER_WALL_HZ_MAX;
	pr.p->meta.wall_hz = opts->wall ? (double)pr.hz / pr.wall_weight : 0;
	uint64_t tick_ns = opts->wall ? 1000000000ull * pr.wall_weight / pr.hz : TICK_NS;
	/* ptrace mode: mean time between looks.  A look finds a thread running at a moment it
	 * can be stopped only now and then (not queued, not on vitals' CPU), and the stops
	 * are weighed by CPU, not counted: three looks per 1/hz keep enough of them */
	uint64_t look_ns = 1000000000ull / (3ull * pr.hz);
	const struct vt_thread_watch_proc *proc = vt_thread_watch_process(pr.watch);
	uint64_t proc_ticks0 = proc->utime_ticks + proc->stime_ticks;
	long clk_tck = proc->clk_tck;
	uint64_t t0 = vt_mono_ns(), next_tick = t0 + tick_ns;
	pr.refreshed_ns = t0;   /* the unwinder read the module list as it opened */
	uint64_t next_look = pr.grab ? t0 + (uint64_t)(look_ns * drand48()) : UINT64_MAX;
	uint64_t end = t0 + (uint64_t)(opts->duration_s * 1e9);
	bool exited = false;

	while (!exited && !pr.nomem && !pr.names.nomem && !(opts->stop && *opts->stop)) {
		uint64_t now = vt_mono_ns();
		if (now >= end)
			break;
		uint64_t until = next_tick < end ? next_tick : end;
		until = next_look < until ? next_look : until;
		int timeout_ms = until > now ? (int)((until - now + 999999) / 1000000) : 0;
		if (pr.perf) {
			rc = vt_perf_poll(pr.perf, timeout_ms, on_sample, &pr, err);
		} else {
			vt_sleep_until_ns(until, opts->stop);
			rc = VT_OK;
		}
		if (rc == VT_E_GONE) {
			exited = true;
			break;
		}
		if (rc)
			break;
		now = vt_mono_ns();
		if (now >= next_look) {
			grab_look(&pr);
			/* jittered: a thread paced by a timer is met anywhere in its period */
			next_look = vt_mono_ns() + (uint64_t)(look_ns * (0.5 + drand48()));
		}
		if (now < next_tick)
			continue;
		/* a late tick (reading a thousand threads takes a while) samples the blocked
		 * threads once for every tick it stands for: wall time is not lost */
		pr.ticks = 0;
		while (next_tick <= now) {
			next_tick += tick_ns;
			pr.ticks++;
		}
		/* with inherited events a thread born meanwhile is sampled without a sync */
		if ((pr.light ? light_tick(&pr, err) : tick(&pr, false, opts->wall, err)) == VT_E_GONE ||
		    (pr.perf && !pr.perf_inherit && vt_perf_sync_threads(pr.perf, err) == VT_E_GONE)) {
			exited = true;
			break;
		}
		refresh_modules(&pr, now);
		if (opts->progress)
			opts->progress(opts->progress_ctx, (double)(now - t0) / 1e9, opts->duration_s,
				       pr.p->meta.samples);
	}
	if (rc && rc != VT_E_GONE) {
		vt_profile_free(&pr.p);
		profiler_end(&pr);
		return rc;
	}
	/* what is left in the rings, and the counters at the end */
	struct vt_err derr;
	if (!exited && pr.perf)
		vt_perf_poll(pr.perf, 0, on_sample, &pr, &derr);
	if (!exited && tick(&pr, false, false, &derr) == VT_E_GONE)
		exited = true;
	if (!exited)
		note_program(&pr);
	if (pr.locks && !exited)
		vt_lock_probe_find_chunks(pr.locks, opts->locks);
	if (pr.grab)
		grab_settle(&pr);
	struct vt_prof_meta *m = &pr.p->meta;
	m->duration_s = (double)(vt_mono_ns() - t0) / 1e9;
	m->interrupted = opts->stop && *opts->stop && !exited;
	m->exited = exited;
	m->filtered = pr.filtered;
	if (opts->threads_glob)
		snprintf(m->threads_glob, sizeof(m->threads_glob), "%s", opts->threads_glob);
	proc = vt_thread_watch_process(pr.watch);
	if (!exited && clk_tck > 0)
		m->process_cpu_s = (double)(proc->utime_ticks + proc->stime_ticks - proc_ticks0) /
				   (double)clk_tck;
	finish_threads(&pr, clk_tck);
	if (pr.perf) {
		struct vt_perf_stats ps;
		vt_perf_get_stats(pr.perf, &ps);
		m->lost = ps.lost;
		m->kernel_refused = ps.kernel_refused;
		m->threads_inherited = ps.inherit;
		/* the kernel's count of threads made and gone, when it saw more than the
		 * listings and samples did (it sees every one, however short) */
		if (ps.threads_born > m->threads_started)
			m->threads_started = (uint32_t)(ps.threads_born < UINT32_MAX ? ps.threads_born
										   : UINT32_MAX);
		if (ps.threads_exited > m->threads_ended)
			m->threads_ended = (uint32_t)(ps.threads_exited < UINT32_MAX ? ps.threads_exited
										     : UINT32_MAX);
	}
	if (pr.grab) {
		struct vt_stack_grab_stats gs;
		vt_stack_grab_get_stats(pr.grab, &gs);
		m->paused_s = gs.pause_total_us / 1e6;
		m->paused_max_share = gs.max_thread_share;
		m->stops = pr.stops;
		m->lost = gs.timeouts + gs.held_thread + gs.held_rate;
	}
	vt_perf_close(&pr.perf);   /* before the calibration, which samples a child of its own */
	name_kernel_locs(&pr);
	if (!m->interrupted)       /* Ctrl-C: the profile so far, at once */
		measure_overhead(&pr);
	double self1 = cpu_self_s();   /* the calibration child's CPU included */
	m->self_cpu_s = self0 >= 0 && self1 >= 0 ? self1 - self0 : -1;
	if (pr.nomem || pr.names.nomem) {
		vt_profile_free(&pr.p);
		profiler_end(&pr);
		return vt_err_set(err, VT_E_NOMEM, 0, "out of memory for the profile of %d", (int)pid);
	}
	if (exited && m->samples == 0) {
		vt_profile_free(&pr.p);
		profiler_end(&pr);
		return vt_err_set(err, VT_E_GONE, 0, "process %d exited before the first sample",
				  (int)pid);
	}
	*out = pr.p;
	profiler_end(&pr);
	return VT_OK;
}

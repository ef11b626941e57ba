/*
 * sample.c — fill a struct vt_sample from /proc (and target memory).
 *
 * Order matters: stat first (kernel thread? zombie?), then the cheap files,
 * then maps/smaps (the expensive part: smaps walks page tables under the
 * target's mmap lock), and a final stat read through the same directory fd
 * to prove the process did not exit (or its pid get reused) meanwhile.
 */
#include "sample/sample.h"
#include "base/unknown.h"

#include "base/clock.h"
#include "sample/target.h"
#include "proc/access.h"
#include "proc/environ.h"
#include "sample/watch.h"
#include "proc/netstat.h"
#include "proc/mem.h"
#include "proc/stat.h"
#include "proc/task.h"
#include "proc/uptime.h"
#include "base/scan.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct reader {
	const struct vt_procfs *pfs;
	struct vt_watch *w;        /* the process, held */
	int fd;                    /* its directory */
	pid_t pid;
	struct vt_buf buf;         /* reused for every file */
};

static void section_ok(struct vt_section *s)
{
	memset(s, 0, sizeof(*s));
	s->available = true;
}

/* Not read on purpose (an option said so): not a failure, not partial. */
static void section_skip(struct vt_section *s, const char *why)
{
	memset(s, 0, sizeof(*s));
	s->skipped = true;
	snprintf(s->reason, sizeof(s->reason), "%s", why);
}

static void section_fail(struct vt_section *s, const struct vt_err *e)
{
	s->available = false;
	s->code = e->code;
	snprintf(s->reason, sizeof(s->reason), "%s", e->msg);
	snprintf(s->hint, sizeof(s->hint), "%s", e->hint);
}

/* A denied read: name the access rule that refused it. */
static void section_denied(struct vt_section *s, const struct reader *rd, const char *what,
			   long uid)
{
	s->available = false;
	s->code = VT_E_PERM;
	vt_access_explain(rd->pfs, what, uid, rd->fd, s->reason, sizeof(s->reason), s->hint,
			  sizeof(s->hint));
}

static void join_cmdline(struct vt_sample *s, const char *buf, size_t len)
{
	size_t i, o = 0;
	char *out;

	while (len && buf[len - 1] == '\0')
		len--;
	out = malloc(len * 4 + 1);
	if (!out)
		return;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)buf[i];
		if (c == '\0')
			out[o++] = ' ';
		else if (c < 0x20 || c == 0x7f)
			o += (size_t)sprintf(out + o, "\\x%02x", c);
		else
			out[o++] = (char)c;
	}
	out[o] = '\0';
	s->cmdline = out;
}

static void read_uptime(struct reader *rd, const struct vt_proc_stat *st, struct vt_sample *s)
{
	double boot_s = vt_uptime_read(rd->pfs, &rd->buf);

	s->uptime_s = -1;
	if (boot_s < 0)
		return;
	s->uptime_s = boot_s - (double)st->start_ticks / (double)rd->pfs->clk_tck;
	if (s->uptime_s < 0)
		s->uptime_s = 0;
}

void vt_thread_states_count(struct vt_thread_states *t, char state)
{
	t->total++;
	switch (state) {
	case 'R': t->running++; break;
	case 'S': t->sleeping++; break;
	case 'D': t->disk++; break;
	case 'T': case 't': t->stopped++; break;
	case 'Z': case 'X': t->zombie++; break;
	case 'I': t->idle++; break;
	default: t->other++; break;
	}
}

/*
 * Thread states from task/TID/stat, and (unless light) each thread's user
 * stack pointer from task/TID/syscall for stack classification.  Threads that
 * exit meanwhile are skipped: they no longer exist.  *sps is sorted by sp.
 */
static void read_threads(struct reader *rd, struct vt_sample *s, bool want_sp,
			 struct vt_thread_sp **sps, size_t *n_sps)
{
	struct vt_err e;
	pid_t *tids = NULL;
	size_t n, i;
	char name[64];

	*sps = NULL;
	*n_sps = 0;
	if (vt_task_list(rd->fd, &tids, &n, &e) != VT_OK) {
		section_fail(&s->threads_st, &e);
		return;
	}
	section_ok(&s->threads_st);
	if (want_sp && !(*sps = calloc(n ? n : 1, sizeof(**sps))))
		want_sp = false;
	for (i = 0; i < n; i++) {
		struct vt_proc_stat ts;
		uint64_t sp;
		snprintf(name, sizeof(name), "task/%d/stat", (int)tids[i]);
		if (vt_read_at(rd->fd, name, &rd->buf, NULL) != VT_OK ||
		    vt_proc_stat_parse(rd->buf.data, rd->buf.len, &ts, NULL) != VT_OK)
			continue;
		vt_thread_states_count(&s->threads, ts.state);
		if (!want_sp)
			continue;
		snprintf(name, sizeof(name), "task/%d/syscall", (int)tids[i]);
		if (vt_read_at(rd->fd, name, &rd->buf, NULL) == VT_OK &&
		    vt_syscall_parse_sp(rd->buf.data, rd->buf.len, &sp)) {
			(*sps)[*n_sps].sp = sp;
			(*sps)[*n_sps].tid = tids[i];
			(*n_sps)++;
		}
	}
	free(tids);
	vt_thread_sp_sort(*sps, *n_sps);
}

static int mem_reader(void *ctx, uint64_t addr, void *out, size_t len)
{
	return vt_mem_read(*(pid_t *)ctx, addr, out, len, NULL);
}

/* Can we read target memory at all?  Try the first readable mapping. */
static bool probe_memory(struct reader *rd, struct vt_sample *s)
{
	struct vt_err e;
	uint64_t word;
	size_t i;

	for (i = 0; i < s->regions.n; i++) {
		const struct vt_region *r = &s->regions.v[i];
		if (r->perms[0] != 'r' || vt_region_size(r) < sizeof(word) ||
		    !strcmp(r->path, "[vvar]") || !strcmp(r->path, "[vsyscall]"))
			continue;
		if (vt_mem_read(rd->pid, r->start, &word, sizeof(word), &e) == VT_OK)
			return true;
		if (e.code == VT_E_PERM) {
			section_denied(&s->memory_st, rd, "memory (process_vm_readv)", (long)s->uid);
			return false;
		}
	}
	vt_err_set(&e, VT_E_IO, 0, "no readable mapping found");
	section_fail(&s->memory_st, &e);
	return false;
}

static int online_cpus(struct reader *rd)
{
	struct vt_scan sc;
	uint64_t a, b;
	int n = 0;

	if (vt_sysfs_read(rd->pfs, "devices/system/cpu/online", &rd->buf, NULL) != VT_OK)
		return rd->pfs->live ? (int)sysconf(_SC_NPROCESSORS_ONLN) : 0;
	/* "0-3,5,7-8" */
	sc = vt_scan_init(rd->buf.data, rd->buf.len);
	while (vt_scan_u64(&sc, &a)) {
		b = a;
		if (vt_scan_char(&sc, '-') && !vt_scan_u64(&sc, &b))
			break;
		if (b >= a && b - a < 65536)
			n += (int)(b - a + 1);
		if (!vt_scan_char(&sc, ','))
			break;
	}
	return n;
}

static void read_regions(struct reader *rd, struct vt_sample *s, bool light)
{
	struct vt_err e;
	int rc = vt_maps_read_at(rd->fd, light ? "maps" : "smaps", &rd->buf, &s->regions, &e);

	if (rc == VT_E_PERM) {
		vt_region_list_release(&s->regions);
		section_denied(&s->regions_st, rd, light ? "maps" : "smaps", (long)s->uid);
		return;
	}
	if (rc != VT_OK) {
		section_fail(&s->regions_st, &e);
		vt_region_list_release(&s->regions);
		return;
	}
	section_ok(&s->regions_st);
}

static void read_allocator(struct reader *rd, struct vt_sample *s, const char *env, size_t env_len)
{
	struct vt_err e;

	if (!s->regions_st.available) {
		s->alloc_st.available = false;
		s->alloc_st.code = s->regions_st.code;
		snprintf(s->alloc_st.reason, sizeof(s->alloc_st.reason),
			 "needs the process's mappings, which could not be read");
		return;
	}
	if (vt_alloc_detect(rd->pfs, rd->fd, rd->pid, &s->regions, env, env_len, &s->alloc, &e))
		section_fail(&s->alloc_st, &e);
	else
		section_ok(&s->alloc_st);
}

#define BLOCKS_WALK_S 2.0          /* the walk for malloc'd blocks, all mappings together */

/* A CPython process whose arenas were not counted: why. */
static void python_why(struct vt_sample *s, const struct vt_classify_ctx *ctx)
{
	size_t i;

	s->python_why[0] = 0;
	if (!s->python.is_python)
		return;
	for (i = 0; i < s->regions.n; i++)
		if (s->regions.v[i].py)
			return;
	if (!ctx->read_mem)
		snprintf(s->python_why, sizeof(s->python_why), "its memory was not read (%.150s)",
			 s->memory_st.reason[0] ? s->memory_st.reason : "process_vm_readv refused");
	else if (!ctx->find_blocks)
		snprintf(s->python_why, sizeof(s->python_why), "not looked for in a light sample (--light)");
	else if (s->arenas.walks_cut)
		snprintf(s->python_why, sizeof(s->python_why), "no pool header found in the pages read before the "
			 "walk's bound (%.0f s, %llu GiB a mapping); the rest were not read", BLOCKS_WALK_S,
			 (unsigned long long)(VT_HEAP_MMAP_SCAN_MAX >> 30));
	else
		snprintf(s->python_why, sizeof(s->python_why), "no pool header checked in its anonymous mappings "
			 "(a pool layout vitals does not know, or pymalloc turned off: PYTHONMALLOC=malloc)");
}

static void classify(struct reader *rd, struct vt_sample *s, const struct vt_sample_opts *opts,
		     const struct vt_thread_sp *sps, size_t n_sps, uint64_t mmap_threshold)
{
	struct vt_classify_ctx ctx = { 0 };
	struct vt_mem_target target = { rd->pid, -1 };
	const struct vt_heap_mem mem = { vt_mem_target_read, vt_mem_target_resident, &target,
					 vt_mem_target_read_each };

	section_ok(&s->memory_st);
	if (!s->regions_st.available)
		return;
	ctx.alloc = s->alloc.kind;
	if (opts->no_memory || !rd->pfs->live) {
		section_skip(&s->memory_st, opts->no_memory ? "not read (--no-memory)"
							    : "not read (recorded /proc tree)");
	} else if (probe_memory(rd, s)) {
		ctx.read_mem = mem_reader;
		ctx.read_ctx = &rd->pid;
		s->memory_read = true;
		/* a full sample looks for malloc'd blocks page by page: pagemap says which pages to read */
		if (!opts->light) {
			target.pagemap_fd = openat(rd->fd, "pagemap", O_RDONLY | O_CLOEXEC);
			ctx.mem = &mem;
			ctx.find_blocks = true;
			ctx.deadline_s = vt_mono_s() + BLOCKS_WALK_S;
		}
	}
	ctx.threads = sps;
	ctx.n_threads = n_sps;
	ctx.mmap_threshold = mmap_threshold;
	vt_cpython_detect(&s->regions, &s->python);
	ctx.python = &s->python;
	vt_regions_classify(&s->regions, &ctx, &s->arenas);
	if (target.pagemap_fd >= 0)
		close(target.pagemap_fd);
	python_why(s, &ctx);
}

/* ---- the maps memo (sample.h: why its key is enough) ---- */

/* Can this sample take maps and their classification from the memo? */
static bool memo_holds(const struct vt_sample_opts *opts, const struct vt_proc_stat *st,
		       const struct vt_sample *s, double now)
{
	const struct vt_maps_memo *m = opts->maps_memo;

	return m && m->valid && opts->light && opts->reuse && m->pid == s->pid &&
	       m->start_ticks == st->start_ticks && vt_known(s->status.vm_size) &&
	       m->vm_size == s->status.vm_size && m->alloc == opts->reuse->alloc.kind &&
	       now - m->read_at < opts->maps_max_age_s;
}

static void memo_fill(const struct vt_maps_memo *m, struct vt_sample *s)
{
	s->regions_reused = true;
	s->regions_st = m->regions_st;
	s->arenas = m->arenas;
	/* these move with mprotect and brk, which the key does not see */
	s->arenas.mapped_bytes = VT_NA;
	s->arenas.main_heap_bytes = VT_NA;
	s->memory_read = m->memory_read;
	s->memory_st = m->memory_st;
}

/*
 * After a read of maps: keep what it gave, or nothing if it failed.  Status
 * was read before maps, so a change between the two leaves a key that no
 * longer holds at the next sample.
 */
static void memo_keep(struct vt_maps_memo *m, double read_at, const struct vt_proc_stat *st,
		      const struct vt_sample *s)
{
	memset(m, 0, sizeof(*m));
	if (!s->regions_st.available || !vt_known(s->status.vm_size))
		return;
	m->valid = true;
	m->read_at = read_at;
	m->pid = s->pid;
	m->start_ticks = st->start_ticks;
	m->vm_size = s->status.vm_size;
	m->alloc = s->alloc.kind;
	m->regions_st = s->regions_st;
	m->arenas = s->arenas;
	m->memory_read = s->memory_read;
	m->memory_st = s->memory_st;
}

/*
 * What does not change for the life of a process: its environment (and
 * the arena cap and mmap threshold it sets), the CPUs, the allocator.
 */
static void read_static_parts(struct reader *rd, struct vt_sample *s)
{
	struct vt_err e;
	char *env = NULL;
	size_t env_len = 0;
	int rc = vt_read_at(rd->fd, "environ", &rd->buf, &e);

	if (rc == VT_OK) {
		section_ok(&s->environ_st);
		env = malloc(rd->buf.len + 1);
		if (env) {
			memcpy(env, rd->buf.data, rd->buf.len + 1);
			env_len = rd->buf.len;
		}
	} else if (rc == VT_E_PERM) {
		section_denied(&s->environ_st, rd, "environ", (long)s->uid);
	} else {
		section_fail(&s->environ_st, &e);
	}
	s->ncpus = online_cpus(rd);
	vt_arena_cap_decide(env, env_len, s->ncpus, &s->cap);
	s->mmap_threshold = vt_mmap_threshold_floor(env, env_len);
	read_allocator(rd, s, env, env_len);
	free(env);
}

/* The same, taken from an earlier sample of the process (a soak tick). */
static void reuse_static_parts(const struct vt_sample *prev, struct vt_sample *s)
{
	s->environ_st = prev->environ_st;
	s->ncpus = prev->ncpus;
	s->cap = prev->cap;
	s->mmap_threshold = prev->mmap_threshold;
	s->alloc = prev->alloc;
	s->alloc_st = prev->alloc_st;
}

/*
 * Its listening sockets: the fds that are sockets, those of them listening
 * (sock_diag in vitals's own network namespace, else the process's own
 * net/tcp{,6}), and the namespace's overflow and drop counters.
 */
static void read_listeners(struct reader *rd, struct vt_sample *s)
{
	struct vt_sample_listen *l = &s->listen;
	double now = vt_mono_s();
	size_t nfds = 0;
	struct vt_err e;
	int rc;

	l->counters.overflows = l->counters.drops = VT_NA;
	rc = vt_watch_fds(rd->w, now, &nfds, &e);
	if (rc == VT_E_PERM) {
		section_denied(&s->listen_st, rd, "fd", (long)s->uid);
		return;
	}
	if (rc == VT_OK) {
		l->open_fds = nfds;
		rc = vt_watch_listen(rd->w, now, l->v, VT_SAMPLE_MAX_LISTEN, &l->n, &l->dropped, &l->via, &e);
	}
	if (rc) {
		section_fail(&s->listen_st, &e);
		return;
	}
	if (vt_read_at(rd->fd, "net/netstat", &rd->buf, NULL) != VT_OK ||
	    vt_netstat_parse(rd->buf.data, rd->buf.len, &l->counters, NULL) != VT_OK)
		l->counters.overflows = l->counters.drops = VT_NA;
	section_ok(&s->listen_st);
}

/* checked: the target's stat as vt_watch_open just checked it (s->status read with it); NULL: check now */
static int take(struct reader *rd, const struct vt_sample_opts *opts, struct vt_sample *s,
		const struct vt_proc_stat *checked, struct vt_err *err)
{
	struct vt_proc_stat st;
	struct vt_err e;
	size_t n_sps = 0;
	struct vt_thread_sp *sps = NULL;
	double now = vt_mono_s();
	bool from_memo;
	int rc;

	if (checked)
		st = *checked;
	else if ((rc = vt_target_check(rd->fd, rd->pid, &rd->buf, &st, &s->status, err)))
		return rc;
	s->pid = rd->pid;
	snprintf(s->comm, sizeof(s->comm), "%s", st.comm);
	s->num_threads = st.num_threads;
	read_uptime(rd, &st, s);
	vt_sample_set_status(s, &s->status);

	if (!opts->reuse && vt_read_at(rd->fd, "cmdline", &rd->buf, NULL) == VT_OK)
		join_cmdline(s, rd->buf.data, rd->buf.len);

	/* --light reads no per-thread files: the count comes from stat. */
	if (opts->light)
		section_skip(&s->threads_st, "not read (--light)");
	else
		read_threads(rd, s, rd->pfs->live, &sps, &n_sps);
	from_memo = memo_holds(opts, &st, s, now);
	if (!from_memo)
		read_regions(rd, s, opts->light);

	if (opts->reuse)
		reuse_static_parts(opts->reuse, s);
	else
		read_static_parts(rd, s);
	if (from_memo) {
		memo_fill(opts->maps_memo, s);
	} else {
		classify(rd, s, opts, sps, n_sps, s->mmap_threshold);
		if (opts->maps_memo && opts->light)
			memo_keep(opts->maps_memo, now, &st, s);
	}
	free(sps);

	rc = vt_cgroup_read(rd->pfs, rd->fd, &s->cgroup, &e);
	if (rc == VT_OK)
		section_ok(&s->cgroup_st);
	else if (rc == VT_E_GONE)
		goto gone;
	else
		section_fail(&s->cgroup_st, &e);

	if (opts->listeners)
		read_listeners(rd, s);
	else
		section_skip(&s->listen_st, "not read");

	/* A part that saw the process vanish makes the whole sample void. */
	if (s->regions_st.code == VT_E_GONE || s->environ_st.code == VT_E_GONE ||
	    s->alloc_st.code == VT_E_GONE || s->threads_st.code == VT_E_GONE ||
	    s->listen_st.code == VT_E_GONE)
		goto gone;
	/* Still the same, still alive?  Reads through a dead process's fd fail;
	 * a process between releasing its memory and becoming a zombie is
	 * PF_EXITING. */
	if (vt_target_exited(rd->fd, rd->pid, &rd->buf))
		goto gone;
	return VT_OK;
gone:
	return VT_E_GONE;   /* vt_sample_take words it */
}

/* Whichever read noticed it, say it one way. */
static int gone(pid_t pid, struct vt_err *err)
{
	return vt_err_set(err, VT_E_GONE, err ? err->sys_errno : 0, "process %d exited while vitals was reading it",
			  (int)pid);
}

/* held: the process was there when its watch was opened, so no such process, or a zombie, is its exit */
static int take_timed(struct reader *rd, const struct vt_sample_opts *opts, struct vt_sample *out,
		      double t0, bool held, const struct vt_proc_stat *checked, struct vt_err *err)
{
	int rc = take(rd, opts, out, checked, err);

	if (held && (rc == VT_E_NOPROC || rc == VT_E_ZOMBIE))
		rc = VT_E_GONE;
	if (rc == VT_E_GONE)
		gone(rd->pid, err);
	vt_buf_release(&rd->buf);
	out->read_ms = (vt_mono_s() - t0) * 1000.0;
	if (rc)
		vt_sample_release(out);
	return rc;
}

static void sample_begin(const struct vt_sample_opts *opts, struct vt_sample *out)
{
	memset(out, 0, sizeof(*out));
	out->light = opts->light;
	out->taken_at = vt_wall_s();
}

int vt_sample_take_from(struct vt_watch *w, const struct vt_sample_opts *opts, struct vt_sample *out,
			struct vt_err *err)
{
	struct reader rd = { vt_watch_procfs(w), w, vt_watch_dirfd(w), vt_watch_pid(w),
			     VT_BUF_INIT(VT_PROC_FILE_MAX) };

	sample_begin(opts, out);
	return take_timed(&rd, opts, out, vt_mono_s(), true, NULL, err);
}

int vt_sample_take(const struct vt_procfs *pfs, pid_t pid, const struct vt_sample_opts *opts,
		   struct vt_sample *out, struct vt_err *err)
{
	struct vt_watch_opts wo = { 0 };
	struct reader rd = { pfs, NULL, -1, pid, VT_BUF_INIT(VT_PROC_FILE_MAX) };
	struct vt_proc_stat st;
	double t0 = vt_mono_s();
	int rc;

	sample_begin(opts, out);
	rc = vt_watch_open(pfs, pid, &wo, &rd.w, &st, &out->status, err);
	if (rc != VT_OK)
		return rc == VT_E_GONE ? gone(pid, err) : rc;
	rd.fd = vt_watch_dirfd(rd.w);
	rc = take_timed(&rd, opts, out, t0, false, &st, err);
	vt_watch_close(rd.w);
	return rc;
}

void vt_sample_set_status(struct vt_sample *s, const struct vt_proc_status *st)
{
	if (&s->status != st)
		s->status = *st;
	s->uid = (uid_t)st->uid_real;
	if (vt_known(st->rss_anon) && vt_known(st->vm_swap))
		s->committed = st->rss_anon + st->vm_swap;
	else
		s->committed = VT_NA;
}

void vt_sample_release(struct vt_sample *s)
{
	free(s->cmdline);
	s->cmdline = NULL;
	vt_region_list_release(&s->regions);
}

static bool missing(const struct vt_section *sec)
{
	return !sec->available && !sec->skipped;
}

bool vt_sample_maybe_glibc(const struct vt_sample *s)
{
	return s->alloc.kind == VT_ALLOC_GLIBC || !s->alloc_st.available;
}

bool vt_sample_partial(const struct vt_sample *s)
{
	return missing(&s->regions_st) || missing(&s->environ_st) || missing(&s->alloc_st) ||
	       missing(&s->cgroup_st) || missing(&s->threads_st) || missing(&s->listen_st);
}

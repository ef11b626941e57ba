/*
 * heap.c — fill a heap sample: the allocator's own figures from a running
 * process, through the in-process agent when one answers, else by calling
 * the allocator's functions inside one stopped thread.  The recipes (which
 * functions, in which order, with which scratch layout) are the
 * allocator's, in alloc/glibc.c and the rows of alloc/allocator.c; this file picks the
 * way in, stops and releases the thread (inject/), and for --trim reads
 * RssAnon before and after.
 */
#include "sample/heap.h"
#include "alloc/agent_client.h"
#include "base/clock.h"
#include "base/unknown.h"
#include "inject/inject.h"
#include "proc/access.h"
#include "proc/maps.h"
#include "proc/mem.h"
#include "alloc/regions.h"
#include "sample/target.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define AGENT_TIMEOUT_MS 5000

#define ATTACH_ATTEMPTS 20       /* picks of a blocked thread before giving up */

struct probe {
	const struct vt_procfs *pfs;
	const struct vt_heap_opts *opts;
	pid_t pid;
	int fd;                      /* process directory */
	struct vt_buf buf;
	struct vt_region_list maps;
	struct vt_heap_sample *h;
	bool alive;                  /* it passed vt_target_check: a later failure may be its exit */
	struct vt_thread_sp *sps;    /* the threads' stack pointers as the pick read them (ptrace), sorted */
	size_t nsps;
};

/*
 * A read or a ptrace request that failed because the process exited says
 * ENOENT ("cannot read .../libc.so.6"), EACCES or EPERM (a zombie's files
 * and ptrace), ESRCH: say what happened instead, keeping what failed.
 */
static void exited_meanwhile(pid_t pid, struct vt_err *err)
{
	char was[VT_ERR_MSG_MAX];

	if (!err)
		return;
	snprintf(was, sizeof(was), "%s", err->msg);
	vt_err_set(err, VT_E_GONE, err->sys_errno, "process %d exited while being read (%.300s)",
		   (int)pid, was);
}

void vt_heap_release(struct vt_heap_sample *h)
{
	vt_malloc_info_release(&h->info);
	h->has_info = false;
	vt_region_list_release(&h->maps);
	vt_arena_threads_release(&h->threads);
}

/* RssAnon and committed right now, for the trim's before and after. */
static void read_anon(struct probe *p, uint64_t *rss_anon, uint64_t *committed)
{
	struct vt_proc_status st;

	*rss_anon = *committed = VT_NA;
	if (vt_read_at(p->fd, "status", &p->buf, NULL) != VT_OK ||
	    vt_proc_status_parse(p->buf.data, p->buf.len, &st, NULL) != VT_OK)
		return;
	*rss_anon = st.rss_anon;
	if (vt_known(st.rss_anon) && vt_known(st.vm_swap))
		*committed = st.rss_anon + st.vm_swap;
}

/* ---- glibc through the agent ---- */

/* struct vt_agent_mallinfo is the same ten fields, in the same order. */
static void mallinfo_from_agent(struct vt_mallinfo *dst, const struct vt_agent_mallinfo *src)
{
	uint64_t v[10];

	_Static_assert(sizeof(*src) == sizeof(v), "vt_agent_mallinfo is ten uint64_t");
	memcpy(v, src, sizeof(v));
	vt_mallinfo_set(dst, v, true);
}

/* VT_E_NOTFOUND: no agent here, use ptrace. */
static int glibc_by_agent(struct probe *p, struct vt_err *err)
{
	struct vt_heap_sample *h = p->h;
	struct vt_agent_reply r;
	char path[512];
	int rc;

	rc = vt_agent_find(p->pfs, p->pid, (uid_t)h->status.uid_eff, path, sizeof(path));
	if (rc != VT_OK)
		return vt_err_set(err, VT_E_NOTFOUND, 0, "no vitals agent in %d (looked for '%s')",
				  (int)p->pid, path);
	if (p->opts->trim)
		read_anon(p, &h->trim.rss_anon_before, &h->trim.committed_before);
	rc = vt_agent_query(path, p->pid, p->opts->trim, AGENT_TIMEOUT_MS, &r, err);
	if (rc)
		return rc;
	h->method = VT_HEAP_AGENT;
	snprintf(h->method_detail, sizeof(h->method_detail), "%s", path);
	mallinfo_from_agent(&h->mi, &r.mi);
	if (r.malloc_info_xml &&
	    vt_malloc_info_parse(r.malloc_info_xml, r.malloc_info_len, &h->info, NULL) == VT_OK)
		h->has_info = true;
	if (r.has_trim) {
		read_anon(p, &h->trim.rss_anon_after, &h->trim.committed_after);
		h->trim.after_mono_s = vt_mono_s();
		h->trim.done = true;
		h->trim.returned = r.trim.returned;
		mallinfo_from_agent(&h->trim.before, &r.trim.before);
		mallinfo_from_agent(&h->trim.after, &r.trim.after);
		h->trim.took_ms = (double)r.trim.took_us / 1000.0;
	}
	vt_agent_reply_release(&r);
	return VT_OK;
}

/* ---- calls through ptrace ---- */

/*
 * One attached thread.  Everything that can be done without the thread
 * stopped is done before attach (resolving symbols) or after detach
 * (parsing the XML): the thread waits only for the calls themselves.
 */
struct session {
	struct probe *p;
	struct vt_alloc_calls cs;
	struct vt_glibc_fns fns;              /* glibc */
	uint64_t entry;                       /* another allocator's entry function */
	char *xml;                            /* malloc_info output, read from the target */
	size_t xml_len;
};

static int glibc_prepare(struct session *ss, struct vt_err *err)
{
	int rc;

	/* the XML is parsed after detach: a missing expat is said before anything stops */
	if (ss->p->opts->arenas && (rc = vt_malloc_info_ready(err)))
		return rc;
	return vt_glibc_resolve(ss->p->pfs, ss->p->pid, &ss->p->maps, &ss->fns, err);
}

/* After detach: the XML is parsed with the target running again. */
static int glibc_finish(struct session *ss, struct vt_err *err)
{
	if (ss->xml && vt_malloc_info_parse(ss->xml, ss->xml_len, &ss->p->h->info, err) == VT_OK)
		ss->p->h->has_info = true;
	return VT_OK;
}

static int glibc_calls(struct session *ss, struct vt_err *err)
{
	struct probe *p = ss->p;
	struct vt_heap_sample *h = p->h;
	const struct vt_glibc_fns *f = &ss->fns;
	double t0;
	int rc;

	/*
	 * mallinfo2 alone never sets errno (its locks use raw futex calls), and
	 * is one call: what a soak tick needs.  malloc_info writes through a
	 * memory stream whose allocations can fail and set errno: save it first.
	 */
	if ((p->opts->arenas || p->opts->trim) &&
	    (rc = vt_inject_save_errno(ss->cs.s, f->errno_location, ss->cs.timeout_ms, err)))
		return rc;
	if ((rc = vt_glibc_mallinfo(&ss->cs, f, &h->mi, err)) ||
	    (p->opts->arenas && (rc = vt_glibc_malloc_info(&ss->cs, f, &ss->xml, &ss->xml_len, err))))
		return rc;
	if (!p->opts->trim)
		return VT_OK;
	/* --trim: the figures just read are "before"; trim may hold locks for 100s of ms */
	h->trim.before = h->mi;
	read_anon(p, &h->trim.rss_anon_before, &h->trim.committed_before);
	ss->cs.timeout_ms *= 10;
	t0 = vt_mono_s();
	rc = vt_glibc_malloc_trim(&ss->cs, f, &h->trim.returned, err);
	ss->cs.timeout_ms /= 10;
	if (rc)
		return rc;
	h->trim.took_ms = (vt_mono_s() - t0) * 1000.0;
	read_anon(p, &h->trim.rss_anon_after, &h->trim.committed_after);
	h->trim.after_mono_s = vt_mono_s();
	if ((rc = vt_glibc_mallinfo(&ss->cs, f, &h->trim.after, err)))
		return rc;
	h->trim.done = true;
	return VT_OK;
}

/*
 * Any other allocator: its row's entry function, then its row's recipe.  An
 * allocator linked into the executable is called there, under its prefix
 * (tikv-jemallocator's _rjem_mallctl, a je_mallctl).
 */
static int other_prepare(struct session *ss, struct vt_err *err)
{
	const struct vt_allocator *a = ss->p->h->other;
	const struct vt_alloc_info *ai = &ss->p->h->alloc;
	const char *exe = strrchr(ai->path, '/');
	char entry[96];

	if (!ai->is_static || !exe || !exe[1])
		return vt_inject_resolve(ss->p->pfs, ss->p->pid, &ss->p->maps, a->library, a->entry,
					 &ss->entry, err);
	snprintf(entry, sizeof(entry), "%s%s", ai->prefix, a->entry);
	return vt_inject_resolve(ss->p->pfs, ss->p->pid, &ss->p->maps, exe + 1, entry, &ss->entry, err);
}

static int other_calls(struct session *ss, struct vt_err *err)
{
	return ss->p->h->other->read(&ss->cs, ss->entry, &ss->p->h->stats, err);
}

struct allocator_calls {
	int (*prepare)(struct session *, struct vt_err *);   /* before attach */
	int (*calls)(struct session *, struct vt_err *);     /* attached */
	int (*finish)(struct session *, struct vt_err *);    /* after detach, may be NULL */
};

static const struct allocator_calls glibc_ops = { glibc_prepare, glibc_calls, glibc_finish };
static const struct allocator_calls other_ops = { other_prepare, other_calls, NULL };

struct body_args {
	struct session *ss;
	const struct allocator_calls *ops;
};

/* The calls, on the session's tracer thread while the thread stands stopped. */
static int calls_body(struct vt_inject_session *s, void *arg, struct vt_err *err)
{
	struct body_args *b = arg;
	int rc;

	b->ss->cs.s = s;
	rc = b->ops->calls(b->ss, err);
	b->ss->cs.s = NULL;
	return rc;
}

/*
 * Prepare, pick a thread, then attach, the allocator's calls and detach
 * (always) in one probe, so that nothing of vitals hands work from thread
 * to thread while the target's thread stands stopped; then finish.
 */
static int by_ptrace(struct probe *p, const struct allocator_calls *ops, struct vt_err *err)
{
	struct session ss = { .p = p };
	struct body_args body = { &ss, ops };
	bool attached = false;
	char why[200];
	struct vt_inject_thread_sp *sps = NULL;
	size_t nsps = 0, i;
	pid_t tid;
	int rc, attempt;

	ss.cs.pid = p->pid;
	ss.cs.timeout_ms = p->opts->timeout_ms;
	if ((rc = ops->prepare(&ss, err)))
		return rc;

	/*
	 * A thread picked while blocked may be running again by the time it
	 * stops (a worker that sleeps a millisecond at a time): attach refuses
	 * it untouched, and we pick again.
	 */
	for (attempt = 1;; attempt++) {
		free(sps);
		if ((rc = vt_inject_pick_thread_sps(p->pfs, p->pid, 0, &tid, why, sizeof(why), &sps, &nsps,
						    err)))
			return rc;
		/* the maps read_inputs read: libc's code is found there, not in a second read */
		rc = vt_inject_probe(p->pfs, p->pid, tid, 0, p->opts->timeout_ms, p->maps.n ? &p->maps : NULL,
				     calls_body, &body, &attached, &p->h->stopped_us, err);
		if (attached || rc != VT_E_BUSY || attempt == ATTACH_ATTEMPTS)
			break;
		usleep(200);
	}
	if (!attached) {
		free(sps);
		free(ss.xml);
		return rc;
	}
	/* kept for the walk for malloc'd blocks: the threads' stacks need no walk */
	free(p->sps);
	p->sps = nsps ? malloc(nsps * sizeof(*p->sps)) : NULL;
	p->nsps = p->sps ? nsps : 0;
	for (i = 0; i < p->nsps; i++)
		p->sps[i] = (struct vt_thread_sp){ sps[i].sp, sps[i].tid };
	vt_thread_sp_sort(p->sps, p->nsps);
	free(sps);
	p->h->callee_us = ss.cs.callee_us;
	p->h->calls = ss.cs.calls;
	p->h->method = VT_HEAP_PTRACE;
	snprintf(p->h->method_detail, sizeof(p->h->method_detail), "%s", why);
	if (!rc && ops->finish)
		rc = ops->finish(&ss, err);
	free(ss.xml);
	return rc;
}

static int read_inputs(struct probe *p, struct vt_err *err)
{
	return vt_target_allocator(p->pfs, p->fd, p->pid, (long)p->h->status.uid_real, &p->buf, &p->maps,
				   &p->h->alloc, err);
}

/*
 * Which threads use each arena, read before the calls (nothing is stopped
 * for it), so that what they show is the program's own: malloc_info's
 * memory stream allocates in the probed thread, which may give it an arena
 * (a new one, when the cap allows).  Then the ring again, as malloc_info
 * walked it (main_arena, the newest arena next, ...): the threads keep
 * their arenas by address, and an arena made in between is marked later.
 */
static void map_threads_before(struct probe *p)
{
	if (p->opts->thread_arenas && p->opts->arenas)
		vt_arena_threads_read_live(p->pfs, p->fd, p->pid, &p->maps, &p->h->threads);
}

static void map_threads_after(struct probe *p)
{
	struct vt_heap_sample *h = p->h;

	if (!h->has_info) {
		vt_arena_threads_release(&h->threads);
		h->threads.known = false;
		h->threads.why[0] = 0;     /* no per-arena table: nothing to say */
		return;
	}
	if (vt_arena_threads_ring_now(p->pid, &h->threads) != VT_OK)
		return;
	if (h->threads.narenas != h->info.n_arenas)
		vt_arena_threads_not_known(&h->threads, "the arenas changed between malloc_info and the read of "
					   "their ring (%zu, then %zu)", h->info.n_arenas, h->threads.narenas);
}

#define BLOCKS_WALK_S 2.0          /* the walk for malloc'd blocks, all mappings together */

/*
 * The malloc'd blocks in its mappings, read right after mallinfo2 (nothing
 * is stopped for it): the regions are classified as snap does (arena heaps
 * and stacks are not walked) and the list is kept with its blocks.
 */
static void find_blocks(struct probe *p)
{
	struct vt_heap_sample *h = p->h;
	struct vt_mem_target target = { p->pid, -1 };
	const struct vt_heap_mem mem = { vt_mem_target_read, vt_mem_target_resident, &target,
					 vt_mem_target_read_each };
	struct vt_classify_ctx ctx = { .alloc = VT_ALLOC_GLIBC, .read_mem = vt_mem_target_read, .read_ctx = &target,
				       .threads = p->sps, .n_threads = p->nsps, .stack_needs_guard = true,
				       .mmap_threshold = VT_MMAP_THRESHOLD_MIN, .find_blocks = true, .mem = &mem };
	struct vt_arena_summary arenas;
	uint64_t word;
	bool pyarenas = false;
	size_t i;

	h->blocks_min = VT_MMAP_THRESHOLD_MIN;
	if (!p->maps.n || vt_mem_read(p->pid, p->maps.v[0].start, &word, sizeof(word), NULL) != VT_OK) {
		snprintf(h->blocks_why, sizeof(h->blocks_why), "its memory cannot be read (process_vm_readv "
			 "needs the permission ptrace needs)");
		return;
	}
	target.pagemap_fd = openat(p->fd, "pagemap", O_RDONLY | O_CLOEXEC);
	ctx.deadline_s = vt_mono_s() + BLOCKS_WALK_S;
	vt_cpython_detect(&p->maps, &h->python);
	ctx.python = &h->python;
	vt_regions_classify(&p->maps, &ctx, &arenas);
	if (target.pagemap_fd >= 0)
		close(target.pagemap_fd);
	for (i = 0; i < p->maps.n; i++) {
		if (p->maps.v[i].blocks) {
			h->blocks_count += p->maps.v[i].blocks->n;
			h->blocks_bytes += p->maps.v[i].blocks->block_bytes;
		}
		if (p->maps.v[i].py)
			pyarenas = true;
	}
	if (h->python.is_python && !pyarenas)
		snprintf(h->python_why, sizeof(h->python_why), "%s", arenas.walks_cut
			 ? "no pool header found in the pages read before the walk's bound; the rest were not read"
			 : "no pool header checked in its anonymous mappings (a pool layout vitals does not know, or "
			   "pymalloc turned off: PYTHONMALLOC=malloc)");
	h->blocks_walked = true;
	h->maps = p->maps;             /* kept with its blocks */
	memset(&p->maps, 0, sizeof(p->maps));
}

/* glibc: the agent when one answers, else ptrace; then the threads of each arena. */
static int take_glibc(struct probe *p, struct vt_err *err)
{
	const struct vt_heap_opts *o = p->opts;
	struct vt_err agent_err;
	int rc;

	vt_err_clear(&agent_err);
	map_threads_before(p);
	rc = o->no_agent ? VT_E_NOTFOUND : glibc_by_agent(p, &agent_err);
	if (rc != VT_OK && o->no_ptrace) {
		*err = agent_err;
		if (rc == VT_E_NOTFOUND)
			vt_err_hint(err, "start it with LD_PRELOAD=libvitals-agent.so, or allow ptrace");
		return rc;
	}
	if (rc != VT_OK && (rc = by_ptrace(p, &glibc_ops, err)))
		return rc;
	if (o->thread_arenas)
		map_threads_after(p);
	if (o->blocks)
		find_blocks(p);
	return VT_OK;
}

static int take(struct probe *p, struct vt_err *err)
{
	const struct vt_heap_opts *o = p->opts;
	struct vt_proc_stat st;
	char names[128];
	int rc;

	if ((rc = vt_target_check(p->fd, p->pid, &p->buf, &st, &p->h->status, err)))
		return rc;
	p->alive = true;
	snprintf(p->h->comm, sizeof(p->h->comm), "%s", st.comm);
	if ((rc = read_inputs(p, err)))
		return rc;
	if (p->h->alloc.sanitizer[0]) {
		/* Before any thread is stopped: the sanitizer's runtime owns malloc. */
		vt_err_set(err, VT_E_UNSUPPORTED, 0, "process %d runs under %s (%s); a call injected "
			   "into its runtime can abort it, so none is made", (int)p->pid,
			   p->h->alloc.sanitizer, p->h->alloc.evidence);
		vt_err_hint(err, "vitals snap and soak work on it; for the allocator's figures run "
			    "a build without -fsanitize");
		return VT_E_UNSUPPORTED;
	}
	if (p->h->alloc.kind == VT_ALLOC_GLIBC) {
		if (p->h->alloc.is_static) {
			vt_err_set(err, VT_E_UNSUPPORTED, 0, "%d links glibc statically: its malloc "
				   "functions are not exported", (int)p->pid);
			return VT_E_UNSUPPORTED;
		}
		return take_glibc(p, err);
	}
	p->h->other = vt_allocator_of(p->h->alloc.kind);
	if (p->h->other && p->h->other->read) {
		const char *name = vt_alloc_kind_name(p->h->alloc.kind);

		if (o->trim)
			return vt_err_set(err, VT_E_UNSUPPORTED, 0, "--trim is for glibc malloc; %s",
					  p->h->other->gives_back);
		if (o->no_ptrace)
			return vt_err_set(err, VT_E_UNSUPPORTED, 0, "the agent serves glibc only; "
					  "%s is read with ptrace", name);
		return by_ptrace(p, &other_ops, err);
	}
	p->h->other = NULL;
	vt_err_set(err, VT_E_UNSUPPORTED, 0, "not supported: process %d's malloc is %s (%s); "
		   "nothing was stopped", (int)p->pid, vt_alloc_kind_name(p->h->alloc.kind),
		   p->h->alloc.evidence);
	vt_err_hint(err, "vitals heap reads %s; vitals snap works on any process",
		    vt_allocators_read(names, sizeof(names)));
	return VT_E_UNSUPPORTED;
}

int vt_heap_take(const struct vt_procfs *pfs, pid_t pid, const struct vt_heap_opts *opts,
		 struct vt_heap_sample *out, struct vt_err *err)
{
	struct probe p = { pfs, opts, pid, -1, VT_BUF_INIT(VT_PROC_FILE_MAX), { 0 }, out, false };
	double t0 = vt_mono_s();
	int rc;

	memset(out, 0, sizeof(*out));
	out->pid = pid;
	out->taken_at = vt_wall_s();
	rc = vt_pid_open(pfs, pid, &p.fd, err);
	if (rc == VT_OK)
		rc = take(&p, err);
	if (rc && rc != VT_E_GONE && p.alive && vt_target_exited(p.fd, pid, &p.buf)) {
		exited_meanwhile(pid, err);
		rc = VT_E_GONE;
	}
	if (p.fd >= 0)
		close(p.fd);
	vt_buf_release(&p.buf);
	vt_region_list_release(&p.maps);
	free(p.sps);
	out->total_ms = (vt_mono_s() - t0) * 1000.0;
	if (rc)
		vt_heap_release(out);
	else if (out->other)
		out->sum = out->stats.sum;
	else
		vt_mallinfo_summary(&out->mi, &out->sum);
	return rc;
}

bool vt_heap_reads(enum vt_alloc_kind kind)
{
	const struct vt_allocator *a = vt_allocator_of(kind);

	return a && (kind == VT_ALLOC_GLIBC || a->read);   /* the cases of take() */
}

bool vt_heap_refusal_lasts(int code, bool ptrace_allowed)
{
	return code == VT_E_PERM || code == VT_E_UNSUPPORTED ||
	       (!ptrace_allowed && code == VT_E_NOTFOUND);
}

/*
 * heap.c — fill a heap sample: the allocator's own figures from a running
 * process, through the in-process agent when one answers, else by calling
 * the functions inside one stopped thread (src/inject).
 *
 * glibc, by ptrace (all calls on one attached thread, one scratch area):
 *   mallinfo2(&scratch)                    -> the ten figures
 *   fp = open_memstream(&ptr, &size)       \
 *   malloc_info(0, fp); fclose(fp)          > the per-arena XML, read with
 *   ... process_vm_readv(ptr, size) ...    /  process_vm_readv, then
 *   free(ptr)                                 freed in the target
 *   [--trim] malloc_trim(0), then mallinfo2 again
 * Every call of a session uses the same scratch size, so each callee's stack
 * frames stay below the scratch area and never overwrite ptr/size before
 * fclose fills them.  The thread's errno is saved and restored.
 *
 * jemalloc, by ptrace: mallctl("epoch") to refresh, then stats.* one by one.
 */
#include "sample/heap.h"
#include "base/unknown.h"
#include "alloc/agent_client.h"
#include "base/clock.h"
#include "inject/inject.h"
#include "proc/access.h"
#include "proc/maps.h"
#include "proc/mem.h"
#include "sample/target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SCRATCH_LEN 256          /* one layout for every call of a session */
#define OFF_MALLINFO 0           /* struct mallinfo2: 10 x size_t = 80 bytes */
#define OFF_MS_PTR 128           /* open_memstream's char *ptr */
#define OFF_MS_SIZE 136          /* ... and size_t size */
#define MALLOC_INFO_MAX (16u << 20)
#define AGENT_TIMEOUT_MS 5000
#define ATTACH_ATTEMPTS 20       /* picks of a blocked thread before giving up */

struct probe {
	const struct vt_procfs *pfs;
	const struct vt_heap_opts *opts;
	pid_t pid;
	int fd;                      /* process directory */
	struct vt_buf buf;
	struct vt_region_list maps;
	char *env;                   /* environ block, NULL if unreadable */
	size_t env_len;
	struct vt_heap_sample *h;
};

double vt_heap_live_fraction(const struct vt_mallinfo *mi)
{
	uint64_t held = mi->arena + mi->hblkhd;

	return held ? (double)mi->uordblks / (double)held : 0.0;
}

void vt_heap_release(struct vt_heap_sample *h)
{
	vt_malloc_info_release(&h->info);
	h->has_info = false;
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

/* The ten mallinfo2 fields, in their <malloc.h> order. */
static void mallinfo_set(struct vt_mallinfo *mi, const uint64_t v[10], bool wide)
{
	mi->arena = v[0];
	mi->ordblks = v[1];
	mi->smblks = v[2];
	mi->hblks = v[3];
	mi->hblkhd = v[4];
	mi->usmblks = v[5];
	mi->fsmblks = v[6];
	mi->uordblks = v[7];
	mi->fordblks = v[8];
	mi->keepcost = v[9];
	mi->wide = wide;
}

/* struct vt_agent_mallinfo is the same ten fields, in the same order. */
static void mallinfo_from_agent(struct vt_mallinfo *dst, const struct vt_agent_mallinfo *src)
{
	uint64_t v[10];

	_Static_assert(sizeof(*src) == sizeof(v), "vt_agent_mallinfo is ten uint64_t");
	memcpy(v, src, sizeof(v));
	mallinfo_set(dst, v, true);
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

struct glibc_fns {
	uint64_t mallinfo2, mallinfo, malloc_info, open_memstream, fclose, free, malloc_trim,
		errno_location;
};

/*
 * One attached thread.  Everything that can be done without the thread
 * stopped is done before attach (resolving symbols) or after detach
 * (parsing the XML): the thread waits only for the calls themselves.
 */
struct session {
	struct probe *p;
	struct vt_inject_session *s;
	int timeout_ms;
	unsigned char scratch[SCRATCH_LEN];   /* after the last call */
	struct glibc_fns fns;                 /* glibc */
	uint64_t mallctl;                     /* jemalloc */
	char *xml;                            /* malloc_info output, read from the target */
	size_t xml_len;
};

static int call(struct session *ss, uint64_t func, uint64_t a0, uint64_t a1, uint32_t scratch_args,
		uint64_t *ret, struct vt_err *err)
{
	struct vt_inject_call c = { 0 };
	int rc;

	c.func = func;
	c.args[0] = a0;
	c.args[1] = a1;
	c.scratch_args = scratch_args;
	c.scratch_len = SCRATCH_LEN;
	c.scratch_out = ss->scratch;
	rc = vt_inject_run(ss->s, &c, ss->timeout_ms, err);
	ss->p->h->callee_us += c.call_us;
	ss->p->h->calls++;
	if (rc == VT_OK && ret)
		*ret = c.ret;
	return rc;
}

static int resolve_glibc(struct probe *p, struct glibc_fns *f, struct vt_err *err)
{
	static const char *const names[] = { "malloc_info", "open_memstream", "fclose", "free",
					     "malloc_trim", "__errno_location" };
	uint64_t addrs[6];
	int rc;

	memset(f, 0, sizeof(*f));
	/* glibc < 2.33 has only the 32-bit mallinfo() */
	if (vt_inject_resolve(p->pfs, p->pid, &p->maps, "libc.so.6", "mallinfo2", &f->mallinfo2,
			      NULL) != VT_OK &&
	    (rc = vt_inject_resolve(p->pfs, p->pid, &p->maps, "libc.so.6", "mallinfo", &f->mallinfo,
				    err)))
		return rc;
	rc = vt_inject_resolve_many(p->pfs, p->pid, &p->maps, "libc.so.6", names, addrs, 6, err);
	if (rc)
		return rc;
	f->malloc_info = addrs[0];
	f->open_memstream = addrs[1];
	f->fclose = addrs[2];
	f->free = addrs[3];
	f->malloc_trim = addrs[4];
	f->errno_location = addrs[5];
	return VT_OK;
}

static int read_mallinfo(struct session *ss, const struct glibc_fns *f, struct vt_mallinfo *mi,
			 struct vt_err *err)
{
	uint64_t v[10];
	uint32_t v32[10];
	int rc, i;

	/* Both return their struct through a hidden pointer (the first argument). */
	rc = call(ss, f->mallinfo2 ? f->mallinfo2 : f->mallinfo, OFF_MALLINFO, 0, 1, NULL, err);
	if (rc)
		return rc;
	if (f->mallinfo2) {
		memcpy(v, ss->scratch + OFF_MALLINFO, sizeof(v));
	} else {
		memcpy(v32, ss->scratch + OFF_MALLINFO, sizeof(v32));   /* 10 x int */
		for (i = 0; i < 10; i++)
			v[i] = v32[i];
	}
	mallinfo_set(mi, v, f->mallinfo2 != 0);
	return VT_OK;
}

/* malloc_info into an open_memstream buffer in the target, copy it out, free it. */
static int read_malloc_info(struct session *ss, const struct glibc_fns *f, struct vt_err *err)
{
	struct probe *p = ss->p;
	uint64_t fp, ptr, size, ret;
	int rc;

	if ((rc = call(ss, f->open_memstream, OFF_MS_PTR, OFF_MS_SIZE, 3, &fp, err)))
		return rc;
	if (!fp)
		return vt_err_set(err, VT_E_FAIL, 0, "open_memstream failed in the target");
	if ((rc = call(ss, f->malloc_info, 0, fp, 0, &ret, err)) ||
	    (rc = call(ss, f->fclose, fp, 0, 0, &ret, err)))
		return rc;
	memcpy(&ptr, ss->scratch + OFF_MS_PTR, sizeof(ptr));
	memcpy(&size, ss->scratch + OFF_MS_SIZE, sizeof(size));
	if (!ptr)
		return vt_err_set(err, VT_E_FAIL, 0, "malloc_info wrote nothing");
	rc = VT_OK;
	ss->xml = size <= MALLOC_INFO_MAX ? malloc(size + 1) : NULL;
	if (!ss->xml)
		rc = vt_err_set(err, VT_E_NOMEM, 0, "malloc_info output of %llu bytes is too large",
				(unsigned long long)size);
	else if ((rc = vt_mem_read(p->pid, ptr, ss->xml, size, err)) == VT_OK) {
		ss->xml[size] = '\0';
		ss->xml_len = size;
	}
	/* The buffer is the target's: give it back whatever happened above. */
	if (call(ss, f->free, ptr, 0, 0, NULL, NULL) != VT_OK && rc == VT_OK)
		rc = vt_err_set(err, VT_E_FAIL, 0, "could not free the malloc_info buffer in the target");
	return rc;
}

static int glibc_prepare(struct session *ss, struct vt_err *err)
{
	return resolve_glibc(ss->p, &ss->fns, err);
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
	const struct glibc_fns f = ss->fns;
	uint64_t ret;
	double t0;
	int rc;

	if ((rc = vt_inject_save_errno(ss->s, f.errno_location, ss->timeout_ms, err)) ||
	    (rc = read_mallinfo(ss, &f, &h->mi, err)) || (rc = read_malloc_info(ss, &f, err)))
		return rc;
	if (!p->opts->trim)
		return VT_OK;
	/* --trim: the figures just read are "before"; trim may hold locks for 100s of ms */
	h->trim.before = h->mi;
	read_anon(p, &h->trim.rss_anon_before, &h->trim.committed_before);
	ss->timeout_ms *= 10;
	t0 = vt_mono_s();
	rc = call(ss, f.malloc_trim, 0, 0, 0, &ret, err);
	ss->timeout_ms /= 10;
	if (rc)
		return rc;
	h->trim.took_ms = (vt_mono_s() - t0) * 1000.0;
	h->trim.returned = (int)ret;
	read_anon(p, &h->trim.rss_anon_after, &h->trim.committed_after);
	if ((rc = read_mallinfo(ss, &f, &h->trim.after, err)))
		return rc;
	h->trim.done = true;
	return VT_OK;
}

/* ---- jemalloc through ptrace ---- */

#define JE_NAME 0         /* mallctl name, NUL-terminated, < 64 bytes */
#define JE_OLD 64         /* old value */
#define JE_OLDLEN 72      /* size_t *oldlenp */
#define JE_NEW 80         /* new value (epoch) */

static int mallctl_read(struct session *ss, uint64_t mallctl, const char *name, size_t len,
			bool write_epoch, uint64_t *value, struct vt_err *err)
{
	unsigned char in[SCRATCH_LEN] = { 0 };
	struct vt_inject_call c = { 0 };
	uint64_t one = 1;
	int rc;

	snprintf((char *)in + JE_NAME, 64, "%s", name);
	memcpy(in + JE_OLDLEN, &len, sizeof(len));
	memcpy(in + JE_NEW, &one, sizeof(one));
	c.func = mallctl;
	c.args[0] = JE_NAME;
	c.args[1] = JE_OLD;
	c.args[2] = JE_OLDLEN;
	c.args[3] = write_epoch ? JE_NEW : 0;
	c.args[4] = write_epoch ? sizeof(uint64_t) : 0;
	c.scratch_args = write_epoch ? 0xf : 0x7;
	c.scratch_in = in;
	c.scratch_len = SCRATCH_LEN;
	c.scratch_out = ss->scratch;
	c.abandon = VT_INJECT_ABANDON_LATE;   /* mallctl may wait while holding ctl_mtx */
	rc = vt_inject_run(ss->s, &c, ss->timeout_ms, err);
	ss->p->h->callee_us += c.call_us;
	ss->p->h->calls++;
	if (rc)
		return rc;
	if ((int)c.ret != 0)
		return vt_err_set(err, VT_E_FAIL, 0, "mallctl(\"%s\") failed with error %d", name,
				  (int)c.ret);
	*value = 0;
	memcpy(value, ss->scratch + JE_OLD, len);
	return VT_OK;
}

static int jemalloc_calls(struct session *ss, struct vt_err *err)
{
	static const struct {
		const char *name;
		size_t off;
	} stats[] = {
		{ "stats.allocated", offsetof(struct vt_jemalloc_stats, allocated) },
		{ "stats.active", offsetof(struct vt_jemalloc_stats, active) },
		{ "stats.metadata", offsetof(struct vt_jemalloc_stats, metadata) },
		{ "stats.resident", offsetof(struct vt_jemalloc_stats, resident) },
		{ "stats.mapped", offsetof(struct vt_jemalloc_stats, mapped) },
		{ "stats.retained", offsetof(struct vt_jemalloc_stats, retained) },
	};
	struct probe *p = ss->p;
	struct vt_jemalloc_stats *je = &p->h->je;
	uint64_t mallctl = ss->mallctl, v, version_ptr;
	size_t i;
	int rc;

	if ((rc = mallctl_read(ss, mallctl, "epoch", 8, true, &v, err)))
		return rc;
	for (i = 0; i < sizeof(stats) / sizeof(stats[0]); i++) {
		if ((rc = mallctl_read(ss, mallctl, stats[i].name, 8, false, &v, err)))
			return rc;
		*(uint64_t *)(void *)((char *)je + stats[i].off) = v;
	}
	if ((rc = mallctl_read(ss, mallctl, "arenas.narenas", 4, false, &je->narenas, err)))
		return rc;
	if (mallctl_read(ss, mallctl, "version", 8, false, &version_ptr, NULL) == VT_OK &&
	    vt_mem_read(p->pid, version_ptr, je->version, sizeof(je->version) - 1, NULL) == VT_OK)
		je->version[sizeof(je->version) - 1] = '\0';
	else
		je->version[0] = '\0';
	je->version[strcspn(je->version, "\n")] = '\0';
	p->h->has_je = true;
	return VT_OK;
}

static int jemalloc_prepare(struct session *ss, struct vt_err *err)
{
	struct probe *p = ss->p;

	return vt_inject_resolve(p->pfs, p->pid, &p->maps, "libjemalloc.so", "mallctl", &ss->mallctl,
				 err);
}

struct allocator_calls {
	int (*prepare)(struct session *, struct vt_err *);   /* before attach */
	int (*calls)(struct session *, struct vt_err *);     /* attached */
	int (*finish)(struct session *, struct vt_err *);    /* after detach, may be NULL */
};

static const struct allocator_calls glibc_ops = { glibc_prepare, glibc_calls, glibc_finish };
static const struct allocator_calls jemalloc_ops = { jemalloc_prepare, jemalloc_calls, NULL };

/* Prepare, pick a thread, attach, run the allocator's calls, always detach, finish. */
static int by_ptrace(struct probe *p, const struct allocator_calls *ops, struct vt_err *err)
{
	struct session ss = { .p = p, .timeout_ms = p->opts->timeout_ms };
	struct vt_err derr;
	char why[200];
	pid_t tid;
	int rc, drc, attempt;

	if ((rc = ops->prepare(&ss, err)))
		return rc;

	/*
	 * A thread picked while blocked may be running again by the time it
	 * stops (a worker that sleeps a millisecond at a time): attach refuses
	 * it untouched, and we pick again.
	 */
	for (attempt = 1;; attempt++) {
		if ((rc = vt_inject_pick_thread(p->pfs, p->pid, 0, &tid, why, sizeof(why), err)))
			return rc;
		rc = vt_inject_attach(p->pfs, p->pid, tid, 0, p->opts->timeout_ms, &ss.s, err);
		if (rc != VT_E_UNSUPPORTED || attempt == ATTACH_ATTEMPTS)
			break;
		usleep(200);
	}
	if (rc)
		return rc;
	rc = ops->calls(&ss, err);
	drc = vt_inject_detach(&ss.s, &p->h->stopped_us, &derr);
	if (drc && !rc) {
		*err = derr;
		rc = drc;
	}
	p->h->method = VT_HEAP_PTRACE;
	snprintf(p->h->method_detail, sizeof(p->h->method_detail), "%s", why);
	if (!rc && ops->finish)
		rc = ops->finish(&ss, err);
	free(ss.xml);
	return rc;
}

static int read_inputs(struct probe *p, struct vt_err *err)
{
	int rc = vt_read_at(p->fd, "maps", &p->buf, err);

	if (rc == VT_E_PERM) {
		char reason[VT_ERR_MSG_MAX], hint[VT_ERR_MSG_MAX];
		vt_access_explain(p->pfs, "maps", (long)p->h->status.uid_real, p->fd, reason,
				  sizeof(reason), hint, sizeof(hint));
		vt_err_set(err, VT_E_PERM, 0, "%s", reason);
		vt_err_hint(err, "%s", hint);
		return VT_E_PERM;
	}
	if (rc || (rc = vt_maps_parse(p->buf.data, p->buf.len, &p->maps, err)))
		return rc;
	if (vt_read_at(p->fd, "environ", &p->buf, NULL) == VT_OK && (p->env = malloc(p->buf.len + 1))) {
		memcpy(p->env, p->buf.data, p->buf.len + 1);
		p->env_len = p->buf.len;
	}
	return vt_alloc_detect(p->pfs, p->fd, p->pid, &p->maps, p->env, p->env_len, &p->h->alloc, err);
}

static int take(struct probe *p, struct vt_err *err)
{
	const struct vt_heap_opts *o = p->opts;
	struct vt_proc_stat st;
	struct vt_err agent_err;
	int rc;

	if ((rc = vt_target_check(p->fd, p->pid, &p->buf, &st, &p->h->status, err)))
		return rc;
	snprintf(p->h->comm, sizeof(p->h->comm), "%s", st.comm);
	if ((rc = read_inputs(p, err)))
		return rc;
	switch (p->h->alloc.kind) {
	case VT_ALLOC_GLIBC:
		if (p->h->alloc.is_static) {
			vt_err_set(err, VT_E_UNSUPPORTED, 0, "%d links glibc statically: its malloc "
				   "functions are not exported", (int)p->pid);
			return VT_E_UNSUPPORTED;
		}
		rc = o->no_agent ? VT_E_NOTFOUND : glibc_by_agent(p, &agent_err);
		if (rc == VT_OK)
			return VT_OK;
		if (o->no_ptrace) {
			*err = agent_err;
			if (rc == VT_E_NOTFOUND)
				vt_err_hint(err, "start it with LD_PRELOAD=libvitals-agent.so, or allow ptrace");
			return rc;
		}
		return by_ptrace(p, &glibc_ops, err);
	case VT_ALLOC_JEMALLOC:
		if (o->trim)
			return vt_err_set(err, VT_E_UNSUPPORTED, 0, "--trim is for glibc malloc; "
					  "jemalloc returns memory on its own decay timer");
		if (o->no_ptrace)
			return vt_err_set(err, VT_E_UNSUPPORTED, 0, "the agent serves glibc only; "
					  "jemalloc is read with ptrace");
		return by_ptrace(p, &jemalloc_ops, err);
	default:
		vt_err_set(err, VT_E_UNSUPPORTED, 0, "not supported yet: %s (%s)",
			   vt_alloc_kind_name(p->h->alloc.kind), p->h->alloc.evidence);
		vt_err_hint(err, "vitals heap reads glibc malloc and jemalloc; vitals snap works on any process");
		return VT_E_UNSUPPORTED;
	}
}

int vt_heap_take(const struct vt_procfs *pfs, pid_t pid, const struct vt_heap_opts *opts,
		 struct vt_heap_sample *out, struct vt_err *err)
{
	struct probe p = { pfs, opts, pid, -1, VT_BUF_INIT(VT_PROC_FILE_MAX), { 0 }, NULL, 0, out };
	double t0 = vt_mono_s();
	int rc;

	memset(out, 0, sizeof(*out));
	out->pid = pid;
	out->taken_at = vt_wall_s();
	rc = vt_pid_open(pfs, pid, &p.fd, err);
	if (rc == VT_OK)
		rc = take(&p, err);
	if (p.fd >= 0)
		close(p.fd);
	vt_buf_release(&p.buf);
	vt_region_list_release(&p.maps);
	free(p.env);
	out->total_ms = (vt_mono_s() - t0) * 1000.0;
	if (rc)
		vt_heap_release(out);
	return rc;
}

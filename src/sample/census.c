/*
 * census.c — the chunk walk and the content census of one process (see census.h).
 */
#include "sample/census.h"

#include "base/clock.h"
#include "inject/freeze.h"
#include "inject/inject.h"
#include "proc/access.h"
#include "proc/maps.h"
#include "proc/mem.h"
#include "sample/target.h"

#include <errno.h>
#include <time.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>


/* The visitor: live content to one census, free content to the other. */
struct sides {
	struct vt_content *live, *freed;
};

static void visit(void *ctx, const struct vt_chunk_piece *p)
{
	struct sides *s = ctx;
	struct vt_content *c = vt_chunk_kind_free(p->kind) ? s->freed : s->live;

	if (p->first)
		vt_content_add(c, p->bytes, p->len, p->size);
	else
		vt_content_add_more(c, p->bytes, p->len);
}

/* glibc "X.Y" into a comparable number X * 1000 + Y; 0 when unknown. */
static unsigned glibc_version(const char *v)
{
	unsigned major = 0, minor = 0;

	if (sscanf(v, "%u.%u", &major, &minor) != 2)
		return 0;
	return major * 1000 + minor;
}

/*
 * The first of the strings whose kept bytes hold the fragment and that may
 * occur as often as chunks hold the fragment (strings count occurrences,
 * fragments chunks: a free chunk that coalesced several holds several
 * copies), so the string may be all there is of it; -1 when none.
 */
static long inside_string(const struct vt_fragment *f, const struct vt_census_side *s)
{
	size_t i;

	for (i = 0; i < s->nstrings; i++) {
		const struct vt_content_string *x = &s->strings[i];

		if (f->count - f->count_err <= x->count && memmem(x->head, x->head_len, f->bytes, f->len))
			return (long)i;
	}
	return -1;
}

static int side_fill(struct vt_content *c, size_t top, struct vt_census_side *s, struct vt_err *err)
{
	struct vt_fragment *f;
	size_t i;

	vt_content_totals(c, &s->totals);
	if (!top)
		return VT_OK;
	s->strings = calloc(top, sizeof(*s->strings));
	s->shapes = calloc(top, sizeof(*s->shapes));
	s->fragments = calloc(top, sizeof(*s->fragments));
	f = calloc(top, sizeof(*f));
	if (!s->strings || !s->shapes || !s->fragments || !f) {
		free(f);
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
	}
	s->nstrings = vt_content_top_strings(c, s->strings, top);
	s->nshapes = vt_content_top_shapes(c, s->shapes, top);
	s->nfragments = vt_content_top_fragments(c, f, top);
	for (i = 0; i < s->nfragments; i++) {
		s->fragments[i].f = f[i];
		s->fragments[i].string = inside_string(&f[i], s);
	}
	free(f);
	return VT_OK;
}

/* The address ranges a pointer into the process falls in: its writable mappings and its code. */
static uint64_t (*pointer_ranges(const struct vt_region_list *maps, size_t *n))[2]
{
	uint64_t (*r)[2] = calloc(maps->n ? maps->n : 1, sizeof(*r));
	size_t i;

	*n = 0;
	if (!r)
		return NULL;
	for (i = 0; i < maps->n; i++) {
		if (maps->v[i].perms[0] != 'r')
			continue;
		r[*n][0] = maps->v[i].start;
		r[*n][1] = maps->v[i].end;
		(*n)++;
	}
	return r;
}

struct probe {
	const struct vt_procfs *pfs;
	const struct vt_census_opts *opts;
	pid_t pid;
	int fd;
	struct vt_buf buf;
	struct vt_region_list maps;
	struct vt_census *c;
	struct vt_mem_target mem;
	struct vt_content *live, *freed;
	long uid;                    /* the target's real uid */
	bool alive;
};

static int refuse_unsupported(struct probe *p, struct vt_err *err)
{
	const struct vt_alloc_info *a = &p->c->alloc;

	if (a->sanitizer[0])
		return vt_err_set(err, VT_E_UNSUPPORTED, 0, "process %d runs under %s (%s): its heap is the "
				  "sanitizer's, not glibc's", (int)p->pid, a->sanitizer, a->evidence);
	if (a->kind != VT_ALLOC_GLIBC) {
		vt_err_set(err, VT_E_UNSUPPORTED, 0, "not supported: process %d's malloc is %s (%s); the census "
			   "walks glibc malloc's chunks", (int)p->pid, vt_alloc_kind_name(a->kind), a->evidence);
		vt_err_hint(err, "vitals heap reads jemalloc's own figures; vitals snap works on any process");
		return VT_E_UNSUPPORTED;
	}
	if (a->is_static)
		return vt_err_set(err, VT_E_UNSUPPORTED, 0, "%d links glibc statically: its mallinfo2 is not "
				  "exported, so main_arena cannot be found", (int)p->pid);
	if (a->version[0] && glibc_version(a->version) < 2027)
		return vt_err_set(err, VT_E_UNSUPPORTED, 0, "process %d runs glibc %s; the census reads the "
				  "malloc layout of glibc 2.27 and later", (int)p->pid, a->version);
	return VT_OK;
}

/* A refused read of the target's memory: say why, and what grants it. */
static int refused(struct probe *p, int e, struct vt_err *err)
{
	char reason[VT_ERR_MSG_MAX], hint[VT_ERR_MSG_MAX];

	if (e == ESRCH)
		return vt_err_set(err, VT_E_GONE, e, "process %d exited", (int)p->pid);
	vt_access_explain(p->pfs, "memory", p->uid, p->fd, reason, sizeof(reason), hint, sizeof(hint));
	vt_err_set(err, VT_E_PERM, e, "%s", reason);
	vt_err_hint(err, "%s", hint);
	return VT_E_PERM;
}

/* Reads of the arenas before main_arena is called not found. */
#define MAIN_ARENA_TRIES 5

static int find_main_arena(struct probe *p, const struct vt_heap_mem *m, struct vt_err *err)
{
	int rc = vt_glibc_main_arena_locate(p->pfs, p->pid, &p->maps, m, MAIN_ARENA_TRIES, &p->c->main_arena, err);

	if (rc == VT_E_IO)
		return p->mem.last_errno == EFAULT
			       ? vt_err_set(err, VT_E_GONE, 0, "libc's code went away in %d", (int)p->pid)
			       : refused(p, p->mem.last_errno, err);
	if (rc != VT_E_NOTFOUND)
		return rc;
	if (p->mem.last_errno == ESRCH)
		return vt_err_set(err, VT_E_GONE, 0, "process %d exited", (int)p->pid);
	/* A libc this census cannot read: exit 8, as documented. */
	vt_err_set(err, VT_E_UNSUPPORTED, 0, "main_arena not found in %d (glibc %s): no address that "
		   "mallinfo2's code loads checked as a malloc arena on %d reads", (int)p->pid,
		   p->c->alloc.version[0] ? p->c->alloc.version : "of unknown version", MAIN_ARENA_TRIES);
	vt_err_hint(err, "a malloc_state layout this census does not know (it reads glibc 2.27 and later "
		    "on x86-64); please report it with the glibc version");
	return VT_E_UNSUPPORTED;
}

static int walk(struct probe *p, const struct vt_heap_mem *m, struct vt_err *err)
{
	unsigned v = glibc_version(p->c->alloc.version);
	struct vt_heap_walk_opts wo = {
		.main_arena = p->c->main_arena,
		.safe_linking = !v || v >= 2032,
		.key_is_tcache = v && v >= 2029 && v < 2034,
		.maps = &p->maps,
		.visit = visit,
	};
	struct sides sides = { p->live, p->freed };
	struct vt_freeze *fz = NULL;
	int rc;

	wo.visit_ctx = &sides;
	if (p->opts->consistent) {
		double t0 = vt_mono_s();

		rc = vt_freeze_all(p->pfs, p->pid, p->opts->stop_ms, &fz, err);
		if (rc)
			return rc;
		wo.deadline_s = t0 + p->opts->stop_ms / 1e3;   /* the threads stand stopped no longer */
	}
	rc = vt_heap_walk(m, &wo, &p->c->walk, err);
	if (rc == VT_E_TIMEOUT)
		vt_err_hint(err, "the threads were let go after --max-stop %d ms; raise it, or leave out "
			    "--consistent (the walk then re-reads what changes under it)", p->opts->stop_ms);
	if (fz) {
		p->c->consistent = true;
		p->c->threads_stopped = vt_freeze_count(fz);
		vt_freeze_release(&fz, &p->c->stopped_ms);
	}
	return rc;
}

/*
 * Which threads allocate from each arena walked, read after the walk (the
 * threads run again with --consistent): a thread on an arena made since is
 * counted as unknown.  A map that cannot be read is said in its why, and
 * the census goes on; only memory running out ends it.
 */
static int map_threads(struct probe *p, const struct vt_heap_mem *m, struct vt_err *err)
{
	uint64_t *addrs = calloc(p->c->walk.narenas ? p->c->walk.narenas : 1, sizeof(*addrs));
	size_t i;
	int rc;

	if (!addrs)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
	for (i = 0; i < p->c->walk.narenas; i++)
		addrs[i] = p->c->walk.arenas[i].addr;
	rc = vt_arena_threads_read(p->fd, p->pid, m, &p->maps, addrs, p->c->walk.narenas, &p->c->threads);
	free(addrs);
	return rc == VT_E_NOMEM ? vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory") : VT_OK;
}

static int take(struct probe *p, struct vt_err *err)
{
	const struct vt_heap_mem m = { vt_mem_target_read, vt_mem_target_resident, &p->mem,
				       vt_mem_target_read_each };
	struct vt_content_opts co;
	struct vt_proc_status status;
	struct vt_proc_stat st;
	const char *needles[VT_CONTENT_NEEDLES_MAX];
	size_t lens[VT_CONTENT_NEEDLES_MAX], i, nranges = 0;
	uint64_t (*ranges)[2] = NULL;
	int rc;

	if ((rc = vt_target_check(p->fd, p->pid, &p->buf, &st, &status, err)))
		return rc;
	p->alive = true;
	p->uid = (long)status.uid_real;
	snprintf(p->c->comm, sizeof(p->c->comm), "%s", st.comm);
	if ((rc = vt_target_allocator(p->pfs, p->fd, p->pid, (long)status.uid_real, &p->buf, &p->maps,
				      &p->c->alloc, err)) ||
	    (rc = refuse_unsupported(p, err)))
		return rc;
	p->mem.pid = p->pid;
	p->mem.pagemap_fd = openat(p->fd, "pagemap", O_RDONLY | O_CLOEXEC);
	if ((rc = find_main_arena(p, &m, err)))
		return rc;
	for (i = 0; i < p->opts->nneedles; i++) {
		needles[i] = p->opts->needles[i];
		lens[i] = strlen(needles[i]);
		snprintf(p->c->needles[i], sizeof(p->c->needles[i]), "%s", needles[i]);
	}
	p->c->nneedles = p->opts->nneedles;
	ranges = pointer_ranges(&p->maps, &nranges);
	co = (struct vt_content_opts){ .needles = needles, .needle_lens = lens, .nneedles = p->opts->nneedles,
				       .ranges = (const uint64_t (*)[2])ranges, .nranges = nranges,
				       .fragments = !p->opts->no_fragments };
	p->c->fragments = co.fragments;
	rc = vt_content_new(&co, &p->live, err);
	if (rc == VT_OK)
		rc = vt_content_new(&co, &p->freed, err);
	free(ranges);
	if (rc)
		return rc;
	if ((rc = walk(p, &m, err)))
		return rc;
	vt_heap_walk_mallinfo(&p->c->walk, &p->c->mi);
	if ((rc = map_threads(p, &m, err)))
		return rc;
	snprintf(p->c->main_arena_how, sizeof(p->c->main_arena_how),
		 "from mallinfo2's code (no debug symbols needed), checked: a ring of %zu arenas", p->c->walk.narenas);
	if ((rc = side_fill(p->live, p->opts->top, &p->c->live, err)))
		return rc;
	return side_fill(p->freed, p->opts->top, &p->c->freed, err);
}

int vt_census_take(const struct vt_procfs *pfs, pid_t pid, const struct vt_census_opts *opts,
		   struct vt_census *out, struct vt_err *err)
{
	struct probe p = { .pfs = pfs, .opts = opts, .pid = pid, .fd = -1, .buf = VT_BUF_INIT(VT_PROC_FILE_MAX),
			   .c = out, .mem = { .pagemap_fd = -1 } };
	double t0 = vt_mono_s();
	int rc;

	memset(out, 0, sizeof(*out));
	out->pid = pid;
	out->taken_at = vt_wall_s();
	rc = vt_pid_open(pfs, pid, &p.fd, err);
	if (rc == VT_OK)
		rc = take(&p, err);
	if (rc && rc != VT_E_GONE && p.alive && vt_target_exited(p.fd, pid, &p.buf)) {
		vt_err_set(err, VT_E_GONE, 0, "process %d exited during the census", (int)pid);
		rc = VT_E_GONE;
	}
	if (p.mem.pagemap_fd >= 0)
		close(p.mem.pagemap_fd);
	if (p.fd >= 0)
		close(p.fd);
	vt_content_free(p.live);
	vt_content_free(p.freed);
	vt_buf_release(&p.buf);
	vt_region_list_release(&p.maps);
	out->took_s = vt_mono_s() - t0;
	if (rc)
		vt_census_release(out);
	return rc;
}

void vt_census_release(struct vt_census *c)
{
	vt_heap_walk_release(&c->walk);
	vt_arena_threads_release(&c->threads);
	free(c->live.strings);
	free(c->live.shapes);
	free(c->freed.strings);
	free(c->freed.shapes);
	free(c->live.fragments);
	free(c->freed.fragments);
	c->live.fragments = c->freed.fragments = NULL;
	c->live.nfragments = c->freed.nfragments = 0;
	c->live.strings = c->freed.strings = NULL;
	c->live.shapes = c->freed.shapes = NULL;
	c->live.nstrings = c->freed.nstrings = c->live.nshapes = c->freed.nshapes = 0;
}

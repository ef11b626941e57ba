/*
 * locks.c — futex waits read into lock rows: kind from the waiter's stack,
 * place from the arenas, symbols and mappings, holder from the lock's own
 * memory.  The glibc layouts relied on are in docs/locks.md.
 */
#include "sample/locks.h"

#include "alloc/detect.h"
#include "alloc/glibc.h"
#include "alloc/glibc_heap.h"
#include "alloc/thread_arena.h"
#include "base/buf.h"
#include "base/clock.h"
#include "elf/demangle.h"
#include "elf/unwind.h"
#include "proc/maps.h"
#include "proc/mem.h"
#include "proc/task.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define STACK_COPY 8192u         /* bytes of a waiter's stack copied from its sp */
#define CHUNK_MEMO 64             /* heap locks whose chunk is remembered */
#define CHUNK_RETRY_S 30.0        /* a chunk not found is looked for again after this */
#define FRAMES_MAX 24            /* frames looked at for the kind and the call site */
#define ARENAS_MAX 256
#define WORDS_MAX 64              /* futex words whose unwinds a sample counts (per_word) */
#define SITE_MAX 256              /* bytes of a waiter's call site, with its NUL */

/* ---- kinds ---- */

const char *vt_lock_kind_name(enum vt_lock_kind k)
{
	static const char *const names[VT_LOCK_KINDS] = {
		[VT_LOCK_RAW] = "raw futex",
		[VT_LOCK_MUTEX] = "mutex",
		[VT_LOCK_RWLOCK] = "rwlock",
		[VT_LOCK_LIBC] = "glibc lock",
		[VT_LOCK_CONDVAR] = "condition variable",
		[VT_LOCK_SEMAPHORE] = "semaphore",
		[VT_LOCK_BARRIER] = "barrier",
		[VT_LOCK_JOIN] = "thread join",
	};
	return (unsigned)k < VT_LOCK_KINDS ? names[k] : "?";
}

bool vt_lock_kind_contended(enum vt_lock_kind k)
{
	return k == VT_LOCK_MUTEX || k == VT_LOCK_RWLOCK || k == VT_LOCK_LIBC;
}

/*
 * The glibc entry points a waiter's stack passes through, by name with its
 * leading underscores and a trailing "64" (the time64 variants) taken off:
 * pthread_mutex_lock is also __pthread_mutex_lock, the clock variants
 * __pthread_mutex_clocklock64.  __lll_lock_wait_private alone (no public
 * entry above it) is a lock glibc takes for itself.
 */
static const struct {
	const char *name;
	enum vt_lock_kind kind;
} entries[] = {
	{ "pthread_mutex_lock", VT_LOCK_MUTEX },
	{ "pthread_mutex_timedlock", VT_LOCK_MUTEX },
	{ "pthread_mutex_clocklock", VT_LOCK_MUTEX },
	{ "pthread_mutex_lock_full", VT_LOCK_MUTEX },
	{ "lll_lock_wait", VT_LOCK_MUTEX },
	{ "pthread_rwlock_rdlock", VT_LOCK_RWLOCK },
	{ "pthread_rwlock_wrlock", VT_LOCK_RWLOCK },
	{ "pthread_rwlock_timedrdlock", VT_LOCK_RWLOCK },
	{ "pthread_rwlock_timedwrlock", VT_LOCK_RWLOCK },
	{ "pthread_rwlock_clockrdlock", VT_LOCK_RWLOCK },
	{ "pthread_rwlock_clockwrlock", VT_LOCK_RWLOCK },
	{ "pthread_cond_wait", VT_LOCK_CONDVAR },
	{ "pthread_cond_timedwait", VT_LOCK_CONDVAR },
	{ "pthread_cond_clockwait", VT_LOCK_CONDVAR },
	{ "sem_wait", VT_LOCK_SEMAPHORE },
	{ "sem_timedwait", VT_LOCK_SEMAPHORE },
	{ "sem_clockwait", VT_LOCK_SEMAPHORE },
	{ "new_sem_wait_slow", VT_LOCK_SEMAPHORE },
	{ "pthread_barrier_wait", VT_LOCK_BARRIER },
	{ "pthread_join", VT_LOCK_JOIN },
	{ "pthread_timedjoin_np", VT_LOCK_JOIN },
	{ "pthread_clockjoin_np", VT_LOCK_JOIN },
	{ "pthread_clockjoin_ex", VT_LOCK_JOIN },
	{ "lll_lock_wait_private", VT_LOCK_LIBC },
	{ "syscall", VT_LOCK_RAW },     /* syscall(SYS_futex, ...): the program's own futex */
};

/* The kind an entry point's name says, VT_LOCK_KINDS for none. */
static enum vt_lock_kind entry_kind(const char *name)
{
	char base[96];
	size_t len, i;

	while (*name == '_')
		name++;
	len = strlen(name);
	if (len >= sizeof(base))
		return VT_LOCK_KINDS;
	memcpy(base, name, len + 1);
	if (len > 2 && !strcmp(base + len - 2, "64"))
		base[len - 2] = '\0';
	for (i = 0; i < sizeof(entries) / sizeof(entries[0]); i++)
		if (!strcmp(base, entries[i].name))
			return entries[i].kind;
	return VT_LOCK_KINDS;
}

/* glibc's own code: libc, and before glibc 2.34 libpthread and the loader. */
static bool in_glibc(const char *module)
{
	return module && (!strncmp(module, "libc.so", 7) || !strncmp(module, "libc-2.", 7) ||
			  !strncmp(module, "libpthread", 10) || !strncmp(module, "ld-linux", 8));
}

/* ---- the probe ---- */

/* What a waiter's stack said, kept while its wait is the same. */
struct wait_memo {
	pid_t tid;
	uint64_t addr, sp, pc;
	enum vt_lock_kind kind;
	bool unwound;             /* a stack was read (else kind is RAW for want of one) */
	bool by_layout;           /* kind read from the lock's memory, not from a named frame */
	bool certain;             /* the walk said its kind plainly: kept while the wait is the
	                           * same; otherwise unwound again (a copy taken while the
	                           * thread ran between two waits is garbage) */
	bool rust;                /* kind from Rust's std::sync (its futex word is the lock's own) */
	unsigned rust_off;        /* the word's offset in the lock: 4 for an RwLock's writer_notify */
	char *site;               /* the call site, SITE_MAX bytes, owned: NULL until its stack is
	                           * unwound (few are: a slot is 56 bytes without it, 304 with it,
	                           * and the memo of 1,000 threads, 2,048 slots, touches 28 pages,
	                           * not 152) */
};

struct vt_lock_probe {
	const struct vt_procfs *pfs;
	pid_t pid;
	int dirfd;
	struct vt_unwinder *uw;   /* opened at the first futex wait, not before: a process none
	                           * of whose threads waits on one reads no modules (threads -i 1s
	                           * of a python3 with 190 library mappings: about 2 ms of 8) */
	bool uw_tried;
	char uw_why[VT_ERR_MSG_MAX];   /* why there is no unwinder */
	struct vt_buf buf;
	struct vt_region_list maps;
	bool maps_ok;
	bool maps_borrowed;       /* the unwinder's maps text served once (first_maps) */
	uint64_t arenas[ARENAS_MAX];
	size_t narenas;
	bool arenas_tried;
	char arenas_why[192];
	struct wait_memo *memo;   /* by tid, open addressing; cap a power of two */
	size_t memo_cap, memo_used;
	unsigned per_word;        /* unwinds of one futex word's waiters per sample, 0: no limit */
	struct word_unwinds {     /* this sample's, for per_word: the first WORDS_MAX words */
		uint64_t addr;
		unsigned n;
	} words[WORDS_MAX];
	size_t nwords;
	uint8_t stack[STACK_COPY];
	int mem_errno;            /* of the last refused memory read */
	/* chunks found for heap locks, and the ones not found (retried after
	 * CHUNK_RETRY_S), so that a report per second does not walk the heap each time */
	struct chunk_memo {
		uint64_t addr, chunk, size;
		double at;            /* vt_mono_s() when looked for */
		char why[96];         /* not found: why */
	} chunks[CHUNK_MEMO];
	size_t chunks_next;
};

static int mem_read_cb(void *ctx, uint64_t addr, void *out, size_t len)
{
	struct vt_lock_probe *lp = ctx;
	struct iovec local = { out, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t got = process_vm_readv(lp->pid, &local, 1, &remote, 1, 0);

	if (got == (ssize_t)len)
		return 0;
	lp->mem_errno = got < 0 ? errno : EFAULT;
	return -1;
}

static bool read_mem(struct vt_lock_probe *lp, uint64_t addr, void *out, size_t len)
{
	return mem_read_cb(lp, addr, out, len) == 0;
}

/* Why memory could not be read, in the words the error table uses. */
static void mem_why(const struct vt_lock_probe *lp, const char *what, char *out, size_t cap)
{
	if (lp->mem_errno == EPERM || lp->mem_errno == EACCES)
		snprintf(out, cap, "%s: reading process %d's memory was refused (process_vm_readv needs "
			 "ptrace access: the same user and kernel.yama.ptrace_scope 0, or CAP_SYS_PTRACE)",
			 what, (int)lp->pid);
	else
		snprintf(out, cap, "%s: process %d's memory could not be read (%s)", what, (int)lp->pid,
			 strerror(lp->mem_errno ? lp->mem_errno : EFAULT));
}

static void read_maps(struct vt_lock_probe *lp)
{
	struct vt_err err;

	vt_region_list_release(&lp->maps);
	lp->maps_ok = vt_read_at(lp->dirfd, "maps", &lp->buf, &err) == VT_OK &&
		      vt_maps_parse(lp->buf.data, lp->buf.len, &lp->maps, &err) == VT_OK;
}

/*
 * The maps a probe starts with: those the unwinder read when the probe was
 * opened, moments before its first sample (one read fewer of a file that
 * costs a millisecond on a process of thousands of mappings), else a read.
 * An address they do not hold is looked up in a fresh read (place_of), as
 * after any change of the process's mappings.
 */
static void first_maps(struct vt_lock_probe *lp)
{
	struct vt_err err;
	const char *text;
	size_t len;

	if (!lp->maps_borrowed && lp->uw && (text = vt_unwinder_maps_text(lp->uw, &len)) != NULL) {
		lp->maps_borrowed = true;
		vt_region_list_release(&lp->maps);
		lp->maps_ok = vt_maps_parse(text, len, &lp->maps, &err) == VT_OK;
		if (lp->maps_ok)
			return;
	}
	read_maps(lp);
}

static const struct vt_region *region_at(const struct vt_lock_probe *lp, uint64_t addr)
{
	size_t lo = 0, hi = lp->maps.n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct vt_region *r = &lp->maps.v[mid];

		if (addr < r->start)
			hi = mid;
		else if (addr >= r->end)
			lo = mid + 1;
		else
			return r;
	}
	return NULL;
}

/* glibc's arena ring, read again each time (arenas are made as threads come). */
static void read_arenas(struct vt_lock_probe *lp)
{
	struct vt_heap_mem m = { mem_read_cb, NULL, lp };
	struct vt_err err;
	uint64_t main_arena = lp->narenas ? lp->arenas[0] : 0;
	size_t n = 0;

	if (!lp->maps_ok)
		first_maps(lp);
	if (!main_arena) {
		if (lp->arenas_tried)
			return;
		lp->arenas_tried = true;
		vt_err_clear(&err);
		int rc = vt_glibc_main_arena_locate(lp->pfs, lp->pid, &lp->maps, &m, 3, &main_arena, &err);
		struct vt_alloc_info ai;

		if (rc == VT_E_IO)
			mem_why(lp, "glibc's arenas", lp->arenas_why, sizeof(lp->arenas_why));
		else if (rc && vt_alloc_detect(lp->pfs, lp->dirfd, lp->pid, &lp->maps, NULL, 0, &ai, &err) == VT_OK &&
			 ai.kind != VT_ALLOC_GLIBC && ai.kind != VT_ALLOC_UNKNOWN)
			/* glibc's malloc is there but unused: a jemalloc process's main_arena never started */
			snprintf(lp->arenas_why, sizeof(lp->arenas_why), "the process's malloc is %s, not glibc's: "
				 "only glibc's chunks are looked up", vt_alloc_kind_name(ai.kind));
		else if (rc)
			snprintf(lp->arenas_why, sizeof(lp->arenas_why), "glibc's arenas: %.*s",
				 (int)sizeof(lp->arenas_why) - 20, err.msg);
		if (rc)
			return;
	}
	if (vt_glibc_arena_ring(&m, main_arena, lp->arenas, ARENAS_MAX, &n))
		lp->narenas = n;
	else if (!lp->narenas)
		snprintf(lp->arenas_why, sizeof(lp->arenas_why), "glibc's arenas: the ring from main_arena "
			 "did not read as malloc arenas");
}

int vt_lock_probe_open(const struct vt_procfs *pfs, pid_t pid, int dirfd, struct vt_lock_probe **out,
		       struct vt_err *err)
{
	struct vt_lock_probe *lp = calloc(1, sizeof(*lp));

	*out = NULL;
	if (!lp)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
	lp->pfs = pfs;
	lp->pid = pid;
	lp->buf = (struct vt_buf)VT_BUF_INIT(16u << 20);   /* maps of a big process */
	lp->dirfd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
	if (lp->dirfd < 0) {
		int e = errno;

		free(lp);
		return vt_err_set(err, vt_code_from_errno(e) ? vt_code_from_errno(e) : VT_E_IO, e,
				  "cannot keep process %d's directory: %s", (int)pid, strerror(e));
	}
	*out = lp;
	return VT_OK;
}

/*
 * The unwinder, opened the first time a wait needs it (its stack, its lock's
 * symbol), tried once for the probe's life: when it cannot be, uw_why says why.
 */
static void unwinder_open_once(struct vt_lock_probe *lp)
{
	struct vt_err uerr;

	if (lp->uw_tried)
		return;
	lp->uw_tried = true;
	vt_err_clear(&uerr);
	if (vt_unwinder_open(lp->dirfd, lp->pid, &lp->uw, &uerr) != VT_OK)
		snprintf(lp->uw_why, sizeof(lp->uw_why), "%s", uerr.msg);
}

static void memo_clear(struct vt_lock_probe *lp);

void vt_lock_probe_close(struct vt_lock_probe *lp)
{
	if (!lp)
		return;
	vt_unwinder_free(&lp->uw);
	vt_region_list_release(&lp->maps);
	vt_buf_release(&lp->buf);
	memo_clear(lp);
	free(lp->memo);
	if (lp->dirfd >= 0)
		close(lp->dirfd);
	free(lp);
}

/* ---- heap chunks ---- */

struct chunk_find {
	struct vt_lock **rows;    /* the rows still looking for their chunk */
	size_t n;
};

static void chunk_visit(void *ctx, const struct vt_chunk_piece *p)
{
	struct chunk_find *cf = ctx;
	size_t i;

	if (!p->first)
		return;
	for (i = 0; i < cf->n; i++) {
		struct vt_lock *r = cf->rows[i];

		if (!r->chunk && r->addr >= p->chunk && r->addr - p->chunk < p->size) {
			r->chunk = p->chunk;
			r->chunk_size = p->size;
		}
	}
}

/* Row r's chunk as remembered (found, or not found less than CHUNK_RETRY_S ago): true when
 * it is filled from the memo.  A lock's object freed and its address reused since would keep
 * the old chunk; locks live as long as their objects, mostly. */
static bool chunk_remembered(struct vt_lock_probe *lp, struct vt_lock *r)
{
	size_t i;

	for (i = 0; i < CHUNK_MEMO; i++) {
		const struct chunk_memo *c = &lp->chunks[i];

		if (!c->addr || c->addr != r->addr)
			continue;
		if (!c->chunk && vt_mono_s() - c->at > CHUNK_RETRY_S)
			return false;
		r->chunk = c->chunk;
		r->chunk_size = c->size;
		snprintf(r->chunk_why, sizeof(r->chunk_why), "%s", c->why);
		return true;
	}
	return false;
}

void vt_lock_probe_find_chunks(struct vt_lock_probe *lp, struct vt_locks *l)
{
	struct vt_heap_mem m = { mem_read_cb, NULL, lp };
	struct vt_heap_walk walk = { 0 };
	struct chunk_find cf = { 0 };
	struct vt_heap_walk_opts o = { 0 };
	struct vt_err err;
	const char *why = NULL;
	size_t i;
	int rc;

	for (i = 0; i < l->n; i++)
		if (l->v[i].place == VT_LOCK_AT_HEAP && !l->v[i].chunk && !chunk_remembered(lp, &l->v[i])) {
			l->v[i].chunk_why[0] = '\0';    /* looked for (again) below */
			cf.n++;
		}
	if (!cf.n)
		return;
	if (!(cf.rows = calloc(cf.n, sizeof(*cf.rows))))
		return;
	for (i = 0, cf.n = 0; i < l->n; i++)
		if (l->v[i].place == VT_LOCK_AT_HEAP && !l->v[i].chunk && !l->v[i].chunk_why[0])
			cf.rows[cf.n++] = &l->v[i];
	if (!lp->narenas)
		read_arenas(lp);
	if (!lp->narenas) {
		why = lp->arenas_why[0] ? lp->arenas_why : "glibc's arenas were not found";
		goto out;
	}
	read_maps(lp);
	/* chunk boundaries only: the free lists' pointer format (safe-linking) changes which
	 * chunks are called free, never where a chunk begins */
	o.main_arena = lp->arenas[0];
	o.safe_linking = true;
	o.maps = &lp->maps;
	o.visit = chunk_visit;
	o.visit_ctx = &cf;
	o.deadline_s = vt_mono_s() + VT_LOCKS_CHUNK_WALK_S;
	vt_err_clear(&err);
	rc = vt_heap_walk(&m, &o, &walk, &err);
	why = rc == VT_E_TIMEOUT ? "the walk of the heap gave up after 0.25 s"
	      : rc != VT_OK ? "the heap could not be walked"
	      : "no malloc chunk holds it: memory the program mapped itself";
out:
	for (i = 0; i < cf.n; i++) {
		struct vt_lock *r = cf.rows[i];
		struct chunk_memo *c = &lp->chunks[lp->chunks_next++ % CHUNK_MEMO];

		if (!r->chunk)
			snprintf(r->chunk_why, sizeof(r->chunk_why), "%.*s", (int)sizeof(r->chunk_why) - 1, why);
		c->addr = r->addr;
		c->chunk = r->chunk;
		c->size = r->chunk_size;
		c->at = vt_mono_s();
		snprintf(c->why, sizeof(c->why), "%.*s", (int)sizeof(c->why) - 1, r->chunk_why);
	}
	vt_heap_walk_release(&walk);
	free(cf.rows);
}

/* ---- one waiter ---- */

/*
 * Room in the memo for extra more threads, grown (rehashed) before a sample
 * takes any slot: a sample keeps pointers to its waiters' slots, which a
 * growth in the middle of it would free (a process whose threads start
 * waiting all at once: ASan caught it on 2,000 threads).  False out of memory.
 */
static bool memo_reserve(struct vt_lock_probe *lp, size_t extra)
{
	size_t cap = lp->memo_cap ? lp->memo_cap : 64, i;
	struct wait_memo *v, *old = lp->memo;

	while ((lp->memo_used + extra + 1) * 2 > cap)
		cap *= 2;
	if (cap == lp->memo_cap)
		return true;
	if (!(v = calloc(cap, sizeof(*v))))
		return false;
	for (i = 0; i < lp->memo_cap; i++) {
		size_t k;

		if (!old[i].tid)
			continue;
		for (k = (size_t)old[i].tid & (cap - 1); v[k].tid; k = (k + 1) & (cap - 1))
			;
		v[k] = old[i];
	}
	free(old);
	lp->memo = v;
	lp->memo_cap = cap;
	return true;
}

/* Every slot emptied, the call sites they own freed. */
static void memo_clear(struct vt_lock_probe *lp)
{
	size_t i;

	for (i = 0; i < lp->memo_cap; i++)
		free(lp->memo[i].site);
	if (lp->memo)
		memset(lp->memo, 0, lp->memo_cap * sizeof(*lp->memo));
	lp->memo_used = 0;
}

/* Thread tid's slot; the room was made by memo_reserve. */
static struct wait_memo *memo_slot(struct vt_lock_probe *lp, pid_t tid)
{
	size_t i;

	for (i = (size_t)tid & (lp->memo_cap - 1); lp->memo[i].tid && lp->memo[i].tid != tid;
	     i = (i + 1) & (lp->memo_cap - 1))
		;
	if (!lp->memo[i].tid) {
		lp->memo[i].tid = tid;
		lp->memo_used++;
	}
	return &lp->memo[i];
}

/* "func+0xoff (module) file:line" for a call site. */
static void site_name(struct vt_lock_probe *lp, const struct vt_unwind_frame *f, const struct vt_unwind_sym *sym,
		      char *out, size_t cap)
{
	struct vt_unwind_inline in[VT_UNWIND_MAX_INLINE];
	char name[160];
	size_t n;
	int len;

	/* a function named only by its FDE ("python3.11+0x4f92c0 (function)"): module+offset */
	bool named = sym->func && !strstr(sym->func, " (function)");

	if (!named || !vt_demangle(sym->func, name, sizeof(name)))
		snprintf(name, sizeof(name), "%s", named ? sym->func : "?");
	if (named)
		len = snprintf(out, cap, "%s+0x%llx (%s)", name, (unsigned long long)sym->func_off,
			       sym->module ? sym->module : "?");
	else
		len = snprintf(out, cap, "%s+0x%llx", sym->module ? sym->module : "?",
			       (unsigned long long)sym->module_off);
	n = vt_unwind_source(lp->uw, f->pc, !f->activation, in, VT_UNWIND_MAX_INLINE);
	if (n > 0 && in[0].file && in[0].line && len > 0 && (size_t)len < cap) {
		const char *base = strrchr(in[0].file, '/');

		snprintf(out + len, cap - (size_t)len, " %s:%u", base ? base + 1 : in[0].file, in[0].line);
	}
}

/* The site at frame i (sym its symbol): the frame, and the function that called it when it is
 * the program's too, so a helper that takes the lock is named with its caller
 * ("turn+0x2f (app) app.c:102 < worker_main"). */
static void set_site(struct vt_lock_probe *lp, const struct vt_unwind_frame *frames, size_t n, size_t i,
		     const struct vt_unwind_sym *sym, struct wait_memo *m)
{
	struct vt_unwind_sym caller;
	char name[128];
	size_t at;

	site_name(lp, &frames[i], sym, m->site, SITE_MAX);
	at = strlen(m->site);
	if (i + 1 < n && vt_unwind_symbolize(lp->uw, frames[i + 1].pc, !frames[i + 1].activation, &caller) &&
	    caller.func && !strstr(caller.func, " (function)") && !in_glibc(caller.module) && at < SITE_MAX) {
		if (!vt_demangle(caller.func, name, sizeof(name)))
			snprintf(name, sizeof(name), "%s", caller.func);
		snprintf(m->site + at, SITE_MAX - at, " < %s", name);
	}
}

/* Frame i's function, demangled, without the '<' of a v0 "<Type>::method": "" when unnamed. */
static const char *frame_name(struct vt_lock_probe *lp, const struct vt_unwind_frame *f, struct vt_unwind_sym *sym,
			      char *buf, size_t cap)
{
	buf[0] = '\0';
	if (!vt_unwind_symbolize(lp->uw, f->pc, !f->activation, sym) || !sym->func || strstr(sym->func, " (function)"))
		return buf;
	if (!vt_demangle(sym->func, buf, cap))
		snprintf(buf, cap, "%s", sym->func);
	return buf[0] == '<' ? buf + 1 : buf;
}

static bool rust_runtime(const char *name)
{
	return !strncmp(name, "std::", 5) || !strncmp(name, "core::", 6) || !strncmp(name, "alloc::", 7);
}

/*
 * The program's own code in frame j, past Rust's runtime: the innermost
 * function inlined there (DWARF's inline chain: the closure that took the
 * lock is often inlined into std's thread start) or the frame's own
 * function that is not std's, core's or alloc's, as the site.  False when
 * frame j is all runtime.
 */
static bool program_site(struct vt_lock_probe *lp, const struct vt_unwind_frame *frames, size_t n, size_t j,
			 struct wait_memo *m)
{
	struct vt_unwind_inline in[VT_UNWIND_MAX_INLINE];
	struct vt_unwind_sym sym;
	char buf[256];
	const char *name;
	size_t k, nin = vt_unwind_source(lp->uw, frames[j].pc, !frames[j].activation, in, VT_UNWIND_MAX_INLINE);

	for (k = 0; k < nin; k++) {
		if (!in[k].func)
			continue;
		if (!vt_demangle(in[k].func, buf, sizeof(buf)))
			snprintf(buf, sizeof(buf), "%s", in[k].func);
		name = buf[0] == '<' ? buf + 1 : buf;
		if (rust_runtime(name))
			continue;
		if (!vt_unwind_symbolize(lp->uw, frames[j].pc, !frames[j].activation, &sym))
			return false;
		if (in[k].file && in[k].line) {
			const char *base = strrchr(in[k].file, '/');

			snprintf(m->site, SITE_MAX, "%.160s (%.40s) %.40s:%u", buf, sym.module ? sym.module : "?",
				 base ? base + 1 : in[k].file, in[k].line);
		} else {
			snprintf(m->site, SITE_MAX, "%.160s (%.40s)", buf, sym.module ? sym.module : "?");
		}
		return true;
	}
	name = frame_name(lp, &frames[j], &sym, buf, sizeof(buf));
	if (!name[0] || rust_runtime(name))
		return false;
	set_site(lp, frames, n, j, &sym, m);
	return true;
}

/* Rust's std::sync primitives, by the slow path of each (std 1.62 on: futex-based on Linux;
 * sys::unix::locks::futex_mutex before 1.78, sys::sync::mutex::futex since). */
static const struct {
	const char *type, *method;
	enum vt_lock_kind kind;
	unsigned off;             /* the futex word's offset in the lock */
} rust_waits[] = {
	{ "Mutex", "lock_contended", VT_LOCK_MUTEX, 0 },
	{ "RwLock", "read_contended", VT_LOCK_RWLOCK, 0 },
	{ "RwLock", "write_contended", VT_LOCK_RWLOCK, 4 },   /* waits on writer_notify */
	{ "Condvar", "wait", VT_LOCK_CONDVAR, 0 },
};

/*
 * A wait through syscall() whose first frames outside glibc are Rust's
 * std::sync: its kind (the site is then moved past std by the caller).  A
 * Barrier waits on its Condvar, which may or may not be inlined into
 * Barrier::wait: a Barrier frame among std's decides.
 */
static void rust_std_wait(struct vt_lock_probe *lp, const struct vt_unwind_frame *frames, size_t n, size_t i,
			  struct wait_memo *m)
{
	struct vt_unwind_sym sym;
	char buf[256];
	const size_t nwaits = sizeof(rust_waits) / sizeof(rust_waits[0]);
	size_t k, found = nwaits;
	bool barrier = false;

	for (; i < n && i < FRAMES_MAX; i++) {
		const char *name = frame_name(lp, &frames[i], &sym, buf, sizeof(buf));

		if (strncmp(name, "std::", 5))
			break;        /* past std: the program's own code (or its own futex) */
		if (strstr(name, "Barrier>::wait") || strstr(name, "Barrier::wait"))
			barrier = true;
		if (!strstr(name, "futex") || found < nwaits)
			continue;     /* the innermost slow path decides */
		for (k = 0; k < nwaits; k++) {
			char want[64];

			snprintf(want, sizeof(want), "%s>::%s", rust_waits[k].type, rust_waits[k].method);
			if (!strstr(name, want)) {
				snprintf(want, sizeof(want), "%s::%s", rust_waits[k].type, rust_waits[k].method);
				if (!strstr(name, want))
					continue;
			}
			found = k;
			break;
		}
	}
	if (barrier) {
		m->kind = VT_LOCK_BARRIER;
		m->rust = true;
		m->rust_off = 0;
	} else if (found < nwaits) {
		m->kind = rust_waits[found].kind;
		m->rust = true;
		m->rust_off = rust_waits[found].off;
	}
}

/* Whether frame f is in glibc: past std's frames, the thread's start, no program code
 * (a closure the compiler inlined into std's thread start, without DWARF to say so). */
static bool glibc_frame(struct vt_lock_probe *lp, const struct vt_unwind_frame *f)
{
	struct vt_unwind_sym sym;

	return !vt_unwind_symbolize(lp->uw, f->pc, !f->activation, &sym) || in_glibc(sym.module);
}

/* Whether frame f is Rust's runtime (std, core, alloc). */
static bool runtime_frame(struct vt_lock_probe *lp, const struct vt_unwind_frame *f)
{
	struct vt_unwind_sym sym;
	char buf[256];

	return rust_runtime(frame_name(lp, f, &sym, buf, sizeof(buf)));
}

/*
 * glibc's sem_t (x86-64, 2.21 and later): a 64-bit data word, the value in
 * its low half and the waiters in its high half, then private (0 or
 * FUTEX_PRIVATE_FLAG).  A thread waits on the value while it is 0.
 */
static bool sem_layout(struct vt_lock_probe *lp, uint64_t addr)
{
	uint32_t w[3];

	return !(addr & 7) && read_mem(lp, addr, w, sizeof(w)) && w[0] == 0 && w[1] >= 1 && w[1] <= (1u << 20) &&
	       (w[2] == 0 || w[2] == FUTEX_PRIVATE_FLAG);
}

/*
 * Unwind waiter t's stack from its sp and pc, without stopping it, into
 * memo: the kind its glibc frames say and the first frame outside glibc.
 * The stack is copied, then /proc/TID/syscall read again: a thread that
 * left the wait meanwhile gave a copy that is not of the wait, and none is
 * kept.
 */
static void unwind_wait(struct vt_lock_probe *lp, const struct vt_thread_snap *t, struct wait_memo *m,
			struct vt_locks *into)
{
	struct vt_unwind_frame frames[FRAMES_MAX];
	struct vt_unwind_start st;
	enum vt_unwind_end why;
	uint64_t sp2 = 0, pc2 = 0;
	char path[64];
	struct vt_err err;
	size_t len = 0, want, n, i, first_user = 0;
	bool libc_lock = false, glibc_frames = false, raw_call = false;

	m->kind = VT_LOCK_RAW;
	m->rust = false;
	m->rust_off = 0;
	m->unwound = false;
	m->by_layout = false;
	m->certain = false;
	if (!m->site && !(m->site = malloc(SITE_MAX)))
		return;         /* no memory: no stack, as for a thread that woke */
	m->site[0] = '\0';
	if (!lp->uw || !t->sp || !t->pc)
		return;
	/* the copy may run past the top of the stack mapping: what reads is taken (a read
	 * stops at the first page that does not) */
	for (want = STACK_COPY; want >= 512 && len == 0; want /= 4) {
		struct iovec local = { lp->stack, want }, remote = { (void *)(uintptr_t)t->sp, want };
		ssize_t got = process_vm_readv(t->tid, &local, 1, &remote, 1, 0);

		if (got > 0)
			len = (size_t)got;
		else
			lp->mem_errno = got < 0 ? errno : EFAULT;
	}
	if (len == 0) {
		if (!into->stacks_why[0] && lp->mem_errno != EFAULT && lp->mem_errno != ESRCH)
			mem_why(lp, "the waiters' stacks", into->stacks_why, sizeof(into->stacks_why));
		return;
	}
	snprintf(path, sizeof(path), "task/%d/syscall", (int)t->tid);
	if (vt_read_at(lp->dirfd, path, &lp->buf, &err) != VT_OK ||
	    !vt_syscall_parse_sp_pc(lp->buf.data, lp->buf.len, &sp2, &pc2) || sp2 != t->sp || pc2 != t->pc)
		return;     /* it woke: the copy is of whatever it does now */
	vt_unwind_start_blocked(&st, t->sp, t->pc, lp->stack, len);
	n = vt_unwind(lp->uw, t->tid, &st, frames, FRAMES_MAX, &why);
	into->unwinds++;
	m->unwound = n > 0;
	for (i = 0; i < n; i++) {
		struct vt_unwind_sym sym;
		enum vt_lock_kind k;

		if (!vt_unwind_symbolize(lp->uw, frames[i].pc, !frames[i].activation, &sym))
			break;
		if (!in_glibc(sym.module)) {
			set_site(lp, frames, n, i, &sym, m);
			first_user = i;
			break;
		}
		glibc_frames = true;
		k = sym.func ? entry_kind(sym.func) : VT_LOCK_KINDS;
		if (k == VT_LOCK_LIBC)
			libc_lock = true;
		else if (k == VT_LOCK_RAW)
			raw_call = true;
		else if (k != VT_LOCK_KINDS && m->kind == VT_LOCK_RAW && !raw_call)
			m->kind = k;     /* the innermost public entry point decides */
	}
	/* Rust's std::sync waits with syscall(SYS_futex) on the lock's own word */
	if (m->kind == VT_LOCK_RAW && raw_call && m->site[0])
		rust_std_wait(lp, frames, n, first_user, m);
	/* a wait std made for the program (a lock, a channel's park, a join): the site is the
	 * program's own code, the first frame past std, core and alloc */
	if (m->site[0] && runtime_frame(lp, &frames[first_user]))
		for (i = first_user + 1; i < n && i < FRAMES_MAX && !glibc_frame(lp, &frames[i]); i++)
			if (program_site(lp, frames, n, i, m))
				break;
	/* __lll_lock_wait is the slow path of both a mutex and a glibc lock taken with lll_lock */
	if (m->kind == VT_LOCK_RAW && libc_lock)
		m->kind = VT_LOCK_LIBC;
	/* sem_wait tail-calls __new_sem_wait_slow64, which has no public name: a wait inside
	 * glibc with no entry point named is a semaphore when the word reads as glibc's sem_t */
	if (m->kind == VT_LOCK_RAW && glibc_frames && !raw_call && m->site[0] && sem_layout(lp, t->futex_addr)) {
		m->kind = VT_LOCK_SEMAPHORE;
		m->by_layout = true;
	}
	/* plain: a named entry point, the program's own syscall(), or no glibc frame at all */
	m->certain = m->unwound && m->site[0] && (m->kind != VT_LOCK_RAW || raw_call || !glibc_frames);
}

/* ---- lock rows ---- */

static struct vt_lock *row_find(struct vt_locks *l, uint64_t addr)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->v[i].addr == addr)
			return &l->v[i];
	return NULL;
}

/* The kind most of a row's waiter-samples said. */
static enum vt_lock_kind voted_kind(const struct vt_lock *row)
{
	enum vt_lock_kind best = VT_LOCK_RAW;
	unsigned k;

	for (k = 0; k < VT_LOCK_KINDS; k++)
		if (row->kind_votes[k] > row->kind_votes[best])
			best = (enum vt_lock_kind)k;
	return best;
}

/* The threads of sample s whose thread_arena is arena row->arena. */
static void arena_users(struct vt_lock_probe *lp, const struct vt_threads_sample *s, struct vt_lock *row)
{
	struct vt_heap_mem m = { mem_read_cb, NULL, lp };
	pid_t *tids = calloc(s->n ? s->n : 1, sizeof(*tids));
	int *arena_of = calloc(s->n ? s->n : 1, sizeof(*arena_of));
	struct vt_err err;
	size_t i;

	vt_err_clear(&err);
	if (!tids || !arena_of) {
		snprintf(row->users_why, sizeof(row->users_why), "out of memory");
		goto out;
	}
	for (i = 0; i < s->n; i++)
		tids[i] = s->threads[i].tid;
	if (!lp->maps_ok)
		first_maps(lp);
	if (vt_glibc_thread_arenas(&m, &lp->maps, tids, s->n, lp->arenas, lp->narenas, arena_of, &err) != VT_OK) {
		snprintf(row->users_why, sizeof(row->users_why), "%.*s", (int)sizeof(row->users_why) - 1, err.msg);
		goto out;
	}
	for (i = 0; i < s->n; i++) {
		if (arena_of[i] != (int)row->arena)
			continue;
		if (row->nusers == VT_LOCK_THREADS_MAX) {
			row->users_more++;
			continue;
		}
		row->users[row->nusers].tid = s->threads[i].tid;
		snprintf(row->users[row->nusers++].comm, sizeof(row->users[0].comm), "%s", s->threads[i].comm);
	}
out:
	free(tids);
	free(arena_of);
}

static void place_of(struct vt_lock_probe *lp, const struct vt_threads_sample *s, struct vt_lock *row)
{
	const struct vt_region *r;
	struct vt_unwind_sym sym;
	size_t i;

	for (i = 0; i < lp->narenas; i++)
		if (lp->arenas[i] == row->addr) {
			row->place = VT_LOCK_AT_ARENA;
			row->arena = (unsigned)i;
			row->narenas = (unsigned)lp->narenas;
			arena_users(lp, s, row);
			return;
		}
	if (!lp->maps_ok)
		first_maps(lp);
	r = region_at(lp, row->addr);
	if (!r) {
		read_maps(lp);
		r = region_at(lp, row->addr);
	}
	if (r && r->perms[3] == 's') {
		row->place = VT_LOCK_AT_SHARED;
		snprintf(row->mapping, sizeof(row->mapping), "%s", r->path ? r->path : "");
		return;
	}
	if (lp->uw && vt_unwind_data_symbol(lp->uw, row->addr, &sym)) {
		row->place = VT_LOCK_AT_SYMBOL;
		if (!vt_demangle(sym.func, row->symbol, sizeof(row->symbol)))
			snprintf(row->symbol, sizeof(row->symbol), "%s", sym.func);
		row->symbol_off = sym.func_off;
		snprintf(row->module, sizeof(row->module), "%s", sym.module ? sym.module : "?");
		row->python_gil = !strcmp(sym.func, "_PyRuntime");
		return;
	}
	if (!r)
		return;
	if (r->path && !strcmp(r->path, "[stack]")) {
		row->place = VT_LOCK_AT_STACK;
		row->stack_tid = s->pid;
		return;
	}
	for (i = 0; i < s->n; i++)
		if (s->threads[i].sp >= r->start && s->threads[i].sp < r->end && vt_region_is_anon(r)) {
			row->place = VT_LOCK_AT_STACK;
			row->stack_tid = s->threads[i].tid;
			return;
		}
	/* a static of a stripped module: in its data, or its .bss past the file (an anonymous mapping) */
	if ((!r->path || r->path[0] != '[') && lp->uw && vt_unwind_data_module(lp->uw, row->addr, &sym)) {
		row->place = VT_LOCK_AT_FILE;
		row->symbol_off = sym.module_off;
		snprintf(row->module, sizeof(row->module), "%s", sym.module ? sym.module : "?");
		snprintf(row->mapping, sizeof(row->mapping), "%s", sym.path ? sym.path : "");
		return;
	}
	row->place = r->path && r->path[0] && r->path[0] != '[' ? VT_LOCK_AT_FILE : VT_LOCK_AT_HEAP;
	snprintf(row->mapping, sizeof(row->mapping), "%s", r->path ? r->path : "");
}

/* A new zeroed row at the end of l; NULL when l holds VT_LOCKS_MAX or memory ran out. */
static struct vt_lock *row_new(struct vt_locks *l)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 8;
		struct vt_lock *v;

		if (l->n >= VT_LOCKS_MAX)
			return NULL;
		v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return NULL;
		l->v = v;
		l->cap = cap;
	}
	memset(&l->v[l->n], 0, sizeof(l->v[0]));
	return &l->v[l->n++];
}

static struct vt_lock *row_add(struct vt_lock_probe *lp, const struct vt_threads_sample *s, struct vt_locks *l,
			       uint64_t addr, enum vt_lock_kind kind)
{
	struct vt_lock *row = row_new(l);

	if (!row)
		return NULL;
	row->addr = addr;
	row->kind = kind;
	/* a glibc lock that is no known arena's: the ring may have grown since it was read */
	if (kind == VT_LOCK_LIBC || kind == VT_LOCK_RAW)
		read_arenas(lp);
	place_of(lp, s, row);
	return row;
}

/* Add k samples of thread tid (running of them in R) to a table of at most VT_LOCK_THREADS_MAX,
 * kept most samples first; a thread past a full table is not counted. */
static void add_thread(struct vt_lock_thread *v, size_t *n, pid_t tid, const char *comm, unsigned k,
		       unsigned running)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (v[i].tid == tid)
			break;
	if (i == *n) {
		if (*n == VT_LOCK_THREADS_MAX)
			return;
		v[i].tid = tid;
		snprintf(v[i].comm, sizeof(v[i].comm), "%s", comm);
		(*n)++;
	}
	v[i].n += k;
	v[i].running += running;
	for (; i > 0 && v[i].n > v[i - 1].n; i--) {
		struct vt_lock_thread tmp = v[i];

		v[i] = v[i - 1];
		v[i - 1] = tmp;
	}
}

/* Count thread t of a sample: one sample, running when R. */
static void count_thread(struct vt_lock_thread *v, size_t *n, const struct vt_thread_snap *t)
{
	add_thread(v, n, t->tid, t->comm, 1, t->state == 'R');
}

/* Add n samples at where to a table of at most VT_LOCK_SITES_MAX, most first; past a full
 * table they are counted in *other. */
static void add_where(struct vt_lock_site *v, size_t *nv, unsigned *other, const char *where, unsigned n)
{
	size_t i;

	for (i = 0; i < *nv; i++)
		if (!strcmp(v[i].where, where))
			break;
	if (i == *nv) {
		if (*nv == VT_LOCK_SITES_MAX) {
			*other += n;
			return;
		}
		snprintf(v[i].where, sizeof(v[0].where), "%s", where);
		(*nv)++;
	}
	v[i].n += n;
	for (; i > 0 && v[i].n > v[i - 1].n; i--) {
		struct vt_lock_site tmp = v[i];

		v[i] = v[i - 1];
		v[i - 1] = tmp;
	}
}

/* Add n waiter-samples at call site where. */
static void add_site(struct vt_lock *row, const char *where, unsigned n)
{
	add_where(row->sites, &row->nsites, &row->sites_other, where, n);
}

void vt_lock_add_holder_frame(struct vt_lock *k, const char *where)
{
	add_where(k->holder_frames, &k->nholder_frames, &k->holder_frames_other, where, 1);
}

static void count_site(struct vt_lock *row, const struct wait_memo *m)
{
	if (!m || !m->unwound || !m->site || !m->site[0])
		row->sites_unknown++;
	else
		add_site(row, m->site, 1);
}

/*
 * The lock's address a waiter on futex word addr waits for, given its kind:
 * a condvar's waiters wait on __g_signals[0] or [1], at offsets 40 and 44
 * of an 8-aligned pthread_cond_t, so one row holds both.
 */
static uint64_t lock_addr(enum vt_lock_kind kind, uint64_t addr)
{
	return kind == VT_LOCK_CONDVAR && addr >= 40 ? (addr & ~(uint64_t)7) - 40 : addr;
}

/* Bytes of a lock of each kind, for counting a waiter whose stack was not read. */
static uint64_t lock_size(enum vt_lock_kind kind)
{
	switch (kind) {
	case VT_LOCK_MUTEX: return 40;
	case VT_LOCK_RWLOCK: return 56;
	case VT_LOCK_CONDVAR: return 48;
	case VT_LOCK_SEMAPHORE: return 32;
	case VT_LOCK_BARRIER: return 32;
	default: return 4;
	}
}

/* The row of a known kind whose lock holds futex word addr: where a waiter whose
 * stack was not read is counted (a rwlock's or a condvar's waiters wait on words
 * inside it); NULL none. */
static struct vt_lock *row_holding(struct vt_locks *l, uint64_t addr)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->v[i].kind != VT_LOCK_RAW && addr >= l->v[i].addr &&
		    addr < l->v[i].addr + lock_size(l->v[i].kind))
			return &l->v[i];
	return NULL;
}

/* Whether tid is a thread of the process in sample s. */
static const struct vt_thread_snap *thread_of(const struct vt_threads_sample *s, pid_t tid)
{
	return tid > 0 ? vt_threads_sample_find(s, tid) : NULL;
}

/* glibc's pthread_mutex_t (x86-64): __lock, __count, __owner, __nusers, __kind. */
static void read_mutex_owner(struct vt_lock_probe *lp, const struct vt_threads_sample *s, struct vt_lock *row,
			     uint32_t op)
{
	int32_t w[5];
	const struct vt_thread_snap *h;
	int32_t kind_bits;
	pid_t owner;

	if (!read_mem(lp, row->addr, w, sizeof(w))) {
		if (!row->holder_why[0])
			mem_why(lp, "its holder", row->holder_why, sizeof(row->holder_why));
		return;
	}
	/* kind: PTHREAD_MUTEX_{NORMAL,RECURSIVE,ERRORCHECK,ADAPTIVE} with the robust (16), PI (32),
	 * PP (64), pshared (128) and elision (256, 512) bits */
	kind_bits = w[4];
	if (kind_bits & ~(int32_t)(0x3 | 0x10 | 0x20 | 0x40 | 0x80 | 0x100 | 0x200)) {
		snprintf(row->layout_why, sizeof(row->layout_why),
			 "its __kind field reads %d, not a glibc mutex kind: the owner is not read", (int)kind_bits);
		return;
	}
	row->owner_reads++;
	/* a PI mutex keeps the owner's tid in the futex word itself */
	owner = (op & FUTEX_CMD_MASK) == FUTEX_LOCK_PI || (op & FUTEX_CMD_MASK) == FUTEX_LOCK_PI2
			? (pid_t)(w[0] & FUTEX_TID_MASK) : (pid_t)w[2];
	if (owner == 0 || w[0] == 0) {
		row->owner_free++;
		return;
	}
	if (!(h = thread_of(s, owner))) {
		row->owner_foreign++;
		row->foreign_tid = owner;
		return;
	}
	count_thread(row->holders, &row->nholders, h);
	row->holder_now = h->tid;
}

/*
 * glibc's rwlock (x86-64, 2.25 and later): __readers (readers << 3 | phase and
 * waiting bits), __writers, __wrphase_futex, __writers_futex, two pads,
 * __cur_writer, __shared, ..., __flags at 48.  Waiters wait on __readers,
 * __wrphase_futex or __writers_futex: the start is found as the one of those
 * three that reads as a rwlock, and the row moves there.
 */
static uint64_t rwlock_start(struct vt_lock_probe *lp, const struct vt_threads_sample *s, uint64_t addr,
			     int32_t *out)
{
	/* pthread_rwlock_t is 8-aligned: __writers_futex (12) is the one word at 4 mod 8 */
	static const unsigned at4[] = { 12 }, at0[] = { 8, 0 };
	const unsigned *offs = addr % 8 == 4 ? at4 : at0;
	size_t i, n = addr % 8 == 4 ? 1 : 2;

	for (i = 0; i < n; i++) {
		int32_t w[14];

		if (addr < offs[i] || !read_mem(lp, addr - offs[i], w, sizeof(w)))
			continue;
		/* the pads are zero, __wrphase_futex and __writers_futex hold 0..3 (a
		 * value and PTHREAD_RWLOCK_FUTEX_USED), __shared 0 or 1, __flags 0..2,
		 * __cur_writer none or a thread of the process */
		if (w[4] != 0 || w[5] != 0 || ((uint32_t)w[2] & ~3u) || ((uint32_t)w[3] & ~3u) ||
		    (w[7] != 0 && w[7] != 1) || (uint32_t)w[12] > 2 || (w[6] != 0 && !thread_of(s, w[6])))
			continue;
		memcpy(out, w, sizeof(w));
		return addr - offs[i];
	}
	return 0;
}

static void read_rwlock_holder(struct vt_lock *row, const struct vt_threads_sample *s, const int32_t *w)
{
	uint32_t readers = (uint32_t)w[0] >> 3;
	const struct vt_thread_snap *h;

	row->owner_reads++;
	if (w[6] && (h = thread_of(s, w[6]))) {
		count_thread(row->holders, &row->nholders, h);
		row->holder_now = h->tid;
	} else if (readers) {
		row->readers++;
		row->readers_sum += readers;
	} else {
		row->owner_free++;
	}
}

static bool is_wait_op(uint32_t op)
{
	switch (op & FUTEX_CMD_MASK) {
	case FUTEX_WAIT: case FUTEX_WAIT_BITSET: case FUTEX_LOCK_PI: case FUTEX_LOCK_PI2:
	case FUTEX_WAIT_REQUEUE_PI:
		return true;
	}
	return false;
}

/* One waiter of a sample: its thread, what its stack said (NULL: not read), its lock's row. */
struct waiter {
	const struct vt_thread_snap *t;
	const struct wait_memo *m;
	enum vt_lock_kind kind;
	uint64_t addr;
	size_t row;
};

void vt_lock_probe_per_word(struct vt_lock_probe *lp, unsigned per_word)
{
	lp->per_word = per_word;
}

/*
 * Whether one more waiter of futex word addr may be unwound in this sample
 * (per_word), counting it; a word past the first WORDS_MAX is not limited.
 */
static bool word_may_unwind(struct vt_lock_probe *lp, uint64_t addr)
{
	size_t i;

	if (!lp->per_word)
		return true;
	for (i = 0; i < lp->nwords && lp->words[i].addr != addr; i++)
		;
	if (i == lp->nwords) {
		if (lp->nwords == WORDS_MAX)
			return true;
		lp->words[lp->nwords++] = (struct word_unwinds){ addr, 0 };
	}
	if (lp->words[i].n >= lp->per_word)
		return false;
	lp->words[i].n++;
	return true;
}

/* The waiters of sample s, their stacks unwound where their wait is new; *n of them in *out. */
static int sample_waiters(struct vt_lock_probe *lp, const struct vt_threads_sample *s, struct vt_locks *into,
			  struct waiter **out, size_t *n, struct vt_err *err)
{
	struct waiter *w = NULL;
	size_t i, unwinds = 0;

	*out = NULL;
	*n = 0;
	/* the memo keeps a slot per thread ever seen waiting: a server that makes a thread per
	 * request would grow it without end, so it starts again once it holds far more
	 * threads than the process has (its waits are unwound afresh, once each) */
	if (lp->memo_used > 2 * s->n + 64)
		memo_clear(lp);
	if (!memo_reserve(lp, s->n))
		goto nomem;
	lp->nwords = 0;
	for (i = 0; i < s->n; i++) {
		const struct vt_thread_snap *t = &s->threads[i];
		struct wait_memo *m;

		if (!t->syscall_ok) {
			into->syscall_unread++;
			if (!into->syscall_why[0])
				snprintf(into->syscall_why, sizeof(into->syscall_why), "%s", t->syscall_why);
			continue;
		}
		if (!t->futex_addr || t->state == 'R' || !is_wait_op(t->futex_op))
			continue;
		into->futex_waits++;
		if (!w && !(w = calloc(s->n, sizeof(*w))))
			goto nomem;
		unwinder_open_once(lp);
		m = memo_slot(lp, t->tid);
		if (m->addr != t->futex_addr || m->sp != t->sp || m->pc != t->pc || !m->certain) {
			if (unwinds < VT_LOCKS_UNWINDS_PER_SAMPLE && word_may_unwind(lp, t->futex_addr)) {
				m->addr = t->futex_addr;
				m->sp = t->sp;
				m->pc = t->pc;
				unwind_wait(lp, t, m, into);
				unwinds++;
			} else {
				into->unwinds_skipped++;
				m = NULL;
			}
		}
		w[*n].t = t;
		/* a walk that said nothing plainly counts as no stack read: it may be a copy
		 * taken while the thread ran, and it never votes a kind */
		w[*n].m = m && m->certain ? m : NULL;
		w[*n].kind = w[*n].m ? m->kind : VT_LOCK_RAW;
		(*n)++;
	}
	*out = w;
	return VT_OK;
nomem:
	free(w);
	return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory counting locks");
}

/* The row of waiter w (a new one when none has its lock); false when VT_LOCKS_MAX are kept. */
static bool place_waiter(struct vt_lock_probe *lp, const struct vt_threads_sample *s, struct vt_locks *into,
			 struct waiter *w)
{
	struct vt_lock *row;
	int32_t rw[14];

	if (w->m && w->m->rust) {
		w->addr = w->t->futex_addr - w->m->rust_off;
	} else {
		w->addr = lock_addr(w->kind, w->t->futex_addr);
		if (w->kind == VT_LOCK_RWLOCK && (w->addr = rwlock_start(lp, s, w->t->futex_addr, rw)) == 0)
			w->addr = w->t->futex_addr;
	}
	row = row_find(into, w->addr);
	/* a waiter whose stack was not read joins a known lock whose memory holds its word */
	if (!row && !w->m)
		row = row_holding(into, w->addr);
	if (!row && !(row = row_add(lp, s, into, w->addr, w->kind)))
		return false;
	w->row = (size_t)(row - into->v);
	if (w->m) {
		row->kind_votes[w->kind]++;
		if (w->m->by_layout)
			row->layout_votes++;
		if (w->m->rust)
			row->rust_std = true;
	}
	count_thread(row->waiters, &row->nwaiters, w->t);
	count_site(row, w->m);
	return true;
}

/* A lock's row after a sample in which waiting[...] threads waited on it with op. */
static void lock_sampled(struct vt_lock_probe *lp, const struct vt_threads_sample *s, struct vt_lock *row,
			 unsigned waiting, uint32_t op)
{
	enum vt_lock_kind best = voted_kind(row);

	row->samples++;
	row->waits += waiting;
	if (waiting > row->peak)
		row->peak = waiting;
	row->kind = best;
	if (row->python_gil && best != VT_LOCK_CONDVAR && best != VT_LOCK_MUTEX)
		row->python_gil = false;
	if (row->rust_std) {
		snprintf(row->holder_why, sizeof(row->holder_why), "%s",
			 !vt_lock_kind_contended(best) ? "it has no holder: its waiters wait to be woken"
			 : "Rust's std::sync locks record no owner: their futex word says only locked, "
			   "and contended");
	} else if (best == VT_LOCK_MUTEX) {
		read_mutex_owner(lp, s, row, op);
	} else if (best == VT_LOCK_RWLOCK) {
		int32_t rw[14];

		if (read_mem(lp, row->addr, rw, sizeof(rw)))
			read_rwlock_holder(row, s, rw);
		else if (!row->holder_why[0])
			mem_why(lp, "its holder", row->holder_why, sizeof(row->holder_why));
	} else if (!row->holder_why[0]) {
		snprintf(row->holder_why, sizeof(row->holder_why), "%s",
			 row->python_gil ? "CPython records the GIL's holder in its own structures, "
					   "which are not read"
			 : best == VT_LOCK_LIBC ? "glibc's internal locks do not record their holder"
			 : best == VT_LOCK_RAW ? "a raw futex records no holder"
			 : "it has no holder: its waiters wait to be woken");
	}
}

/*
 * Rows of waiters none of whose stacks was read, on a word inside a lock
 * another row knows (a rwlock's or a condvar's other words, seen before
 * that row was made): folded into it.
 */
static void fold_unread_rows(struct vt_locks *l)
{
	size_t i = 0, k;

	while (i < l->n) {
		struct vt_lock *r = &l->v[i], *into = NULL;
		unsigned votes = 0;

		for (k = 0; k < VT_LOCK_KINDS; k++)
			votes += r->kind_votes[k];
		for (k = 0; !votes && k < l->n && !into; k++)
			if (k != i && l->v[k].kind != VT_LOCK_RAW && r->addr >= l->v[k].addr &&
			    r->addr < l->v[k].addr + lock_size(l->v[k].kind))
				into = &l->v[k];
		if (!into) {
			i++;
			continue;
		}
		into->waits += r->waits;
		into->samples = into->samples > r->samples ? into->samples : r->samples;
		into->sites_unknown += r->sites_unknown;
		for (k = 0; k < r->nwaiters; k++)
			add_thread(into->waiters, &into->nwaiters, r->waiters[k].tid, r->waiters[k].comm,
				   r->waiters[k].n, r->waiters[k].running);
		l->v[i] = l->v[--l->n];     /* the order of first sight is lost for the last row only */
	}
}

int vt_lock_probe_sample(struct vt_lock_probe *lp, const struct vt_threads_sample *s, struct vt_locks *into,
			 struct vt_err *err)
{
	unsigned waiting[VT_LOCKS_MAX];
	uint32_t op[VT_LOCKS_MAX];
	struct waiter *w;
	size_t n, i, k;
	int pass, rc;

	into->pid = s->pid;
	if (!into->samples)
		into->first_ns = s->mono_ns;
	into->last_ns = s->mono_ns;
	into->samples++;
	into->thread_samples += s->n;
	into->narenas = lp->narenas;
	if (lp->arenas_why[0] && !into->arenas_why[0])
		snprintf(into->arenas_why, sizeof(into->arenas_why), "%s", lp->arenas_why);
	for (k = 0; k < into->n; k++)
		into->v[k].holder_now = 0;    /* of this sample only */
	if ((rc = sample_waiters(lp, s, into, &w, &n, err)) != VT_OK)
		return rc;
	if (lp->uw_why[0] && !into->stacks_why[0])    /* the unwinder is opened by the first wait */
		snprintf(into->stacks_why, sizeof(into->stacks_why), "the waiters' stacks: %.*s",
			 (int)sizeof(into->stacks_why) - 24, lp->uw_why);
	/* the waiters whose stacks were read first: their rows are the ones a waiter whose
	 * stack was not read may join (a rwlock's or condvar's other words) */
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < n; i++)
			if ((w[i].m != NULL) == (pass == 0) && !place_waiter(lp, s, into, &w[i])) {
				into->untracked++;
				w[i].row = SIZE_MAX;
			}
	/* each row once: its waiters in this sample, and the op the first waits with */
	memset(waiting, 0, sizeof(waiting));
	for (i = 0; i < n; i++)
		if (w[i].row != SIZE_MAX && waiting[w[i].row]++ == 0)
			op[w[i].row] = w[i].t->futex_op;
	for (k = 0; k < into->n; k++)
		if (waiting[k])
			lock_sampled(lp, s, &into->v[k], waiting[k], op[k]);
	fold_unread_rows(into);
	free(w);
	return VT_OK;
}

void vt_locks_release(struct vt_locks *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static void copy_why(char *to, size_t cap, const char *from)
{
	if (!to[0] && from[0])
		snprintf(to, cap, "%s", from);
}

/* Row r of another run added to row into (the same address). */
static void merge_row(struct vt_lock *into, const struct vt_lock *r)
{
	size_t i;
	unsigned k;

	for (k = 0; k < VT_LOCK_KINDS; k++)
		into->kind_votes[k] += r->kind_votes[k];
	into->layout_votes += r->layout_votes;
	into->kind = voted_kind(into);
	into->python_gil = into->python_gil && r->python_gil;
	into->rust_std = into->rust_std || r->rust_std;
	into->samples += r->samples;
	into->waits += r->waits;
	into->peak = r->peak > into->peak ? r->peak : into->peak;
	for (i = 0; i < r->nwaiters; i++)
		add_thread(into->waiters, &into->nwaiters, r->waiters[i].tid, r->waiters[i].comm,
			   r->waiters[i].n, r->waiters[i].running);
	for (i = 0; i < r->nholders; i++)
		add_thread(into->holders, &into->nholders, r->holders[i].tid, r->holders[i].comm,
			   r->holders[i].n, r->holders[i].running);
	for (i = 0; i < r->nsites; i++)
		add_site(into, r->sites[i].where, r->sites[i].n);
	for (i = 0; i < r->nholder_frames; i++)
		add_where(into->holder_frames, &into->nholder_frames, &into->holder_frames_other,
			  r->holder_frames[i].where, r->holder_frames[i].n);
	into->holder_frames_other += r->holder_frames_other;
	into->sites_other += r->sites_other;
	into->sites_unknown += r->sites_unknown;
	into->owner_reads += r->owner_reads;
	into->owner_free += r->owner_free;
	into->owner_foreign += r->owner_foreign;
	if (r->owner_foreign)
		into->foreign_tid = r->foreign_tid;
	into->readers += r->readers;
	into->readers_sum += r->readers_sum;
	copy_why(into->holder_why, sizeof(into->holder_why), r->holder_why);
	copy_why(into->layout_why, sizeof(into->layout_why), r->layout_why);
	if (!into->nusers && !into->users_more && r->nusers) {
		memcpy(into->users, r->users, sizeof(into->users));
		into->nusers = r->nusers;
		into->users_more = r->users_more;
	}
	copy_why(into->users_why, sizeof(into->users_why), r->users_why);
	if (!into->chunk && r->chunk) {
		into->chunk = r->chunk;
		into->chunk_size = r->chunk_size;
		into->chunk_why[0] = '\0';
	} else if (!into->chunk) {
		copy_why(into->chunk_why, sizeof(into->chunk_why), r->chunk_why);
	}
}

int vt_locks_merge(struct vt_locks *into, const struct vt_locks *from, struct vt_err *err)
{
	size_t i;

	if (!into->samples || (from->samples && from->first_ns < into->first_ns))
		into->first_ns = from->first_ns;
	if (from->last_ns > into->last_ns)
		into->last_ns = from->last_ns;
	if (!into->pid)
		into->pid = from->pid;
	into->samples += from->samples;
	into->thread_samples += from->thread_samples;
	into->futex_waits += from->futex_waits;
	into->untracked += from->untracked;
	into->unwinds += from->unwinds;
	into->unwinds_skipped += from->unwinds_skipped;
	into->syscall_unread += from->syscall_unread;
	copy_why(into->syscall_why, sizeof(into->syscall_why), from->syscall_why);
	copy_why(into->stacks_why, sizeof(into->stacks_why), from->stacks_why);
	copy_why(into->arenas_why, sizeof(into->arenas_why), from->arenas_why);
	if (from->narenas > into->narenas)
		into->narenas = from->narenas;
	for (i = 0; i < from->n; i++) {
		const struct vt_lock *r = &from->v[i];
		struct vt_lock *row = row_find(into, r->addr);

		if (row) {
			merge_row(row, r);
			continue;
		}
		if (into->n >= VT_LOCKS_MAX) {
			into->untracked += r->waits;
			continue;
		}
		if (!(row = row_new(into)))
			return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
		*row = *r;
	}
	return VT_OK;
}

void vt_lock_history_release(struct vt_lock_history *h)
{
	vt_locks_release(&h->all);
	vt_locks_release(&h->early);
	vt_locks_release(&h->late);
	memset(h, 0, sizeof(*h));
}

const struct vt_lock *vt_locks_top(const struct vt_locks *l, bool contended_only)
{
	const struct vt_lock *best = NULL;
	size_t i;

	for (i = 0; i < l->n; i++) {
		const struct vt_lock *r = &l->v[i];

		if (contended_only && !vt_lock_kind_contended(r->kind) && !r->python_gil)
			continue;
		if (!best || r->waits > best->waits)
			best = r;
	}
	return best;
}

unsigned vt_lock_waits_of(const struct vt_lock *k, pid_t tid)
{
	size_t i;

	for (i = 0; i < k->nwaiters; i++)
		if (k->waiters[i].tid == tid)
			return k->waiters[i].n;
	return 0;
}

unsigned vt_locks_contended_waits_of(const struct vt_locks *l, pid_t tid)
{
	unsigned n = 0;
	size_t i;

	for (i = 0; i < l->n; i++)
		if (vt_lock_kind_contended(l->v[i].kind) || l->v[i].python_gil)
			n += vt_lock_waits_of(&l->v[i], tid);
	return n;
}

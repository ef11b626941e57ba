/*
 * perf_events.c — one cpu-clock perf event per thread, its ring drained
 * into a callback, and the sample records parsed.
 *
 * The threads are kept in an array sorted by tid, so a sync is one merge of
 * that array with the sorted /proc/PID/task listing: O(threads) per sync
 * (the listing comes sorted in practice; it is sorted when not).  task/ is
 * held open and re-read with getdents64, so a sync needs no new descriptor
 * even at the fd limit.  An entry with fd -1 is a thread whose
 * event could not be opened: counted in threads_missed once and not retried
 * until its tid leaves /proc.  pfds[] is parallel to the array (poll ignores
 * the -1 entries).
 *
 * With inherit the array holds the threads there at the start, whose events
 * (inherit_fds, every CPU's) stay open to the end, and pfds[] is parallel
 * to cpu_rings[].  A ring's poll reports an exit once (the kernel clears
 * its poll state when read), so no ring is ever dropped from the poll.
 *
 * The ring protocol (perf_event_open(2), "MMAP layout"): the kernel writes
 * records at data_head; we read up to a head loaded with acquire ordering
 * (the kernel's smp_wmb pairs with it), and hand the space back by storing
 * data_tail with release ordering once a record is consumed, so the kernel
 * never overwrites a record the callback is still reading.  A record that
 * runs past the end of the data area is copied whole into a bounce buffer
 * first; records are 8-byte multiples in an area of a power of two pages,
 * so a header never wraps.
 */
#include "perf/perf_events.h"

#include "base/tidlist.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_HZ          99u
#define DEFAULT_RING_PAGES  64u
#define MAX_RING_PAGES      (1u << 16)
#define MAX_STACK_BYTES     65528u
#define WANT_MAX_STACK      127u       /* frames asked of the kernel (its default limit) */
#define RECORD_MAX          65536u     /* perf_event_header.size is 16 bits */
#define DENTS_BYTES         (32 * 1024) /* one getdents64 call lists ~1,000 threads */

#define KNOWN_SAMPLE_BITS                                                              \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |  \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |    \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |             \
	 PERF_SAMPLE_STACK_USER)

/* A ring the kernel writes records into: one thread's, or (inherit) one CPU's. */
struct ring {
	int fd;                               /* the event it is mapped from; -1 none */
	struct perf_event_mmap_page *meta;    /* the ring's first page */
	size_t map_len;
	unsigned char *data;                  /* the data area */
	uint64_t data_size;                   /* a power of two */
};

struct thread_ev {
	pid_t tid;
	int fd;                               /* -1: missed (counted once); inherit: unused */
	int more[VT_PERF_EVENTS_MAX - 1];     /* opts->events past the first, writing to ring */
	struct ring ring;                     /* its own ring (not with inherit) */
	bool unlisted;                        /* gone from /proc/PID/task: close after draining */
};

struct vt_perf {
	pid_t pid;
	int task_fd;                      /* /proc/PID/task, re-read by each sync */
	char *dents;                      /* DENTS_BYTES for getdents64 */
	pid_t *tids;                      /* the last listing, sorted */
	size_t ntids, cap_tids;
	long page_size;
	struct perf_event_attr attr;      /* cpu-clock, or opts->events[0] */
	struct vt_perf_layout layout;
	/* opts->events: the others, their layouts ([0] is layout's), and which event
	 * each id the kernel gave is (ids rise as events open: appended sorted) */
	struct perf_event_attr more[VT_PERF_EVENTS_MAX - 1];
	unsigned nmore;
	bool custom;
	struct vt_perf_layout layouts[VT_PERF_EVENTS_MAX];
	struct event_id { uint64_t id; uint32_t event; } *ids;
	size_t nids, cap_ids;
	uint32_t ring_pages;              /* for the next ring (shrinks under the mlock limit) */
	uint32_t min_ring_pages;          /* smallest ring still worth having */
	bool kernel_wanted;
	bool nofile_tried;
	struct thread_ev *th;             /* sorted by tid */
	size_t nth, cap_th;
	struct pollfd *pfds;              /* parallel to th */
	size_t cap_pfds;
	unsigned char *bounce;            /* RECORD_MAX bytes: a record that wraps the ring */
	struct vt_perf_stats st;
	int last_fail_errno;              /* of the last thread that could not be opened */
	bool last_fail_mmap;              /* ... and whether mapping its ring failed */
	/* inherit: th[] holds the threads there at the start, each with an event per CPU */
	bool (*want)(void *ctx, pid_t tid);
	void *want_ctx;
	bool inherit;
	int ncpus;
	struct ring *cpu_rings;           /* [ncpus]; fd -1 where the CPU is offline */
	int *inherit_fds;                 /* every event, closed only at the end */
	size_t ninherit_fds, cap_inherit_fds;
};

/* ---- the record parser --------------------------------------------------- */

/* perf's x86 register bit -> enum vt_perf_reg, -1 for the ones not kept. */
static int reg_slot(unsigned bit)
{
#if defined(__x86_64__)
	static const signed char slot[24] = {
		VT_PERF_REG_AX, VT_PERF_REG_BX, VT_PERF_REG_CX, VT_PERF_REG_DX,
		VT_PERF_REG_SI, VT_PERF_REG_DI, VT_PERF_REG_BP, VT_PERF_REG_SP,
		VT_PERF_REG_IP, -1, -1, -1, -1, -1, -1, -1,
		VT_PERF_REG_R8, VT_PERF_REG_R9, VT_PERF_REG_R10, VT_PERF_REG_R11,
		VT_PERF_REG_R12, VT_PERF_REG_R13, VT_PERF_REG_R14, VT_PERF_REG_R15,
	};
	return bit < 24 ? slot[bit] : -1;
#else
	(void)bit;
	return -1;
#endif
}

/* Take the next u64 of the record, or fail the parse. */
#define TAKE_U64(var)                                      \
	do {                                               \
		if (end - pos < 8)                         \
			return VT_E_PARSE;                 \
		memcpy(&(var), p + pos, 8);                \
		pos += 8;                                  \
	} while (0)

static int parse_sample(const void *rec, size_t len, const struct vt_perf_layout *layout,
			struct vt_perf_sample *out)
{
	const unsigned char *p = rec;
	uint64_t t = layout->sample_type, skip;
	struct perf_event_header hdr;
	size_t pos, end;

	memset(out, 0, sizeof(*out));
	if (t & ~(uint64_t)KNOWN_SAMPLE_BITS)
		return VT_E_UNSUPPORTED;
	if (!rec || ((uintptr_t)rec & 7) || len < sizeof(hdr))
		return VT_E_PARSE;
	memcpy(&hdr, p, sizeof(hdr));
	if (hdr.type != PERF_RECORD_SAMPLE || hdr.size < sizeof(hdr) || hdr.size > len)
		return VT_E_PARSE;
	end = hdr.size;
	pos = sizeof(hdr);
	out->in_kernel = (hdr.misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;

	if (t & PERF_SAMPLE_IDENTIFIER)
		TAKE_U64(skip);
	if (t & PERF_SAMPLE_IP)
		TAKE_U64(out->ip);
	if (t & PERF_SAMPLE_TID) {
		uint32_t ids[2];

		if (end - pos < 8)
			return VT_E_PARSE;
		memcpy(ids, p + pos, 8);
		out->pid = (pid_t)ids[0];
		out->tid = (pid_t)ids[1];
		pos += 8;
	}
	if (t & PERF_SAMPLE_TIME)
		TAKE_U64(out->time_ns);
	if (t & PERF_SAMPLE_ADDR)
		TAKE_U64(skip);
	if (t & PERF_SAMPLE_ID)
		TAKE_U64(skip);
	if (t & PERF_SAMPLE_STREAM_ID)
		TAKE_U64(skip);
	if (t & PERF_SAMPLE_CPU)
		TAKE_U64(skip);
	if (t & PERF_SAMPLE_PERIOD)
		TAKE_U64(skip);
	if (t & PERF_SAMPLE_CALLCHAIN) {
		uint64_t nr;

		TAKE_U64(nr);
		if (nr > (end - pos) / 8)
			return VT_E_PARSE;
		out->callchain = nr ? (const uint64_t *)(const void *)(p + pos) : NULL;
		out->nchain = (uint32_t)nr;
		pos += (size_t)nr * 8;
	}
	if (t & PERF_SAMPLE_REGS_USER) {
		uint64_t abi, mask = layout->regs_mask;
		unsigned bit;

		TAKE_U64(abi);
		if (abi > PERF_SAMPLE_REGS_ABI_64)
			return VT_E_PARSE;
		if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
			if ((size_t)__builtin_popcountll(mask) > (end - pos) / 8)
				return VT_E_PARSE;
			for (bit = 0; bit < 64; bit++) {
				int slot;

				if (!(mask & (1ull << bit)))
					continue;
				slot = reg_slot(bit);
				if (slot >= 0)
					memcpy(&out->regs[slot], p + pos, 8);
				pos += 8;
			}
			out->regs_ok = true;
		}
	}
	if (t & PERF_SAMPLE_STACK_USER) {
		uint64_t size, dyn;
		const unsigned char *stack;

		TAKE_U64(size);
		if (size) {   /* size 0 (no user context): no data and no dyn_size */
			if (size > end - pos)
				return VT_E_PARSE;
			stack = p + pos;
			pos += (size_t)size;
			TAKE_U64(dyn);
			if (dyn > size)
				return VT_E_PARSE;
			out->stack = dyn ? stack : NULL;
			out->stack_len = (uint32_t)dyn;
		}
	}
	(void)skip;
	return VT_OK;
}

#undef TAKE_U64

int vt_perf_parse_sample(const void *rec, size_t len, const struct vt_perf_layout *layout,
			 struct vt_perf_sample *out)
{
	int rc = parse_sample(rec, len, layout, out);

	if (rc != VT_OK)
		memset(out, 0, sizeof(*out));
	return rc;
}

/* ---- small reads from /proc (perf sits beside proc, not above it) -------- */

/* An integer from a /proc/sys file, or dflt. */
static long read_sysctl(const char *path, long dflt)
{
	char buf[64];
	ssize_t n;
	long v;
	char *endp;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return dflt;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return dflt;
	buf[n] = '\0';
	errno = 0;
	v = strtol(buf, &endp, 10);
	if (errno || endp == buf)
		return dflt;
	return v;
}

/* List task/ again through the held fd (no new descriptor: a sync works at
 * the fd limit) into pf->tids, sorted (base/tidlist.h). */
static int list_tids(struct vt_perf *pf, struct vt_err *err)
{
	struct vt_tid_list l = { pf->tids, pf->ntids, pf->cap_tids };
	int rc = vt_tid_list_read(pf->task_fd, pf->dents, DENTS_BYTES, pf->pid, &l, err);

	pf->tids = l.tids;
	pf->ntids = l.n;
	pf->cap_tids = l.cap;
	return rc;
}

/* Has the process exited?  Only asked when no event is open (so descriptors
 * are free): every thread listed is a zombie or dead, or the listing is gone. */
static bool process_gone(struct vt_perf *pf)
{
	bool gone = true;
	size_t i;

	if (list_tids(pf, NULL) != VT_OK)
		return true;
	for (i = 0; i < pf->ntids && gone; i++) {
		char path[32], buf[512], *rp;
		ssize_t len;
		int fd;

		snprintf(path, sizeof(path), "%d/stat", (int)pf->tids[i]);
		fd = openat(pf->task_fd, path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			if (errno != ENOENT && errno != ESRCH)
				gone = false;   /* cannot tell: not gone */
			continue;
		}
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		rp = strrchr(buf, ')');
		if (rp && rp[1] == ' ' && rp[2] != 'Z' && rp[2] != 'X' && rp[2] != 'x')
			gone = false;
	}
	return gone;
}

/* ---- errors -------------------------------------------------------------- */

/* The hint for EACCES/EPERM from perf_event_open: which setting, and the command. */
static void perm_hint(int task_fd, bool kernel, struct vt_err *err)
{
	long paranoid = read_sysctl("/proc/sys/kernel/perf_event_paranoid", LONG_MIN);
	int need = kernel ? 1 : 2;
	uid_t me = geteuid();
	struct stat st;
	char para[32];

	if (paranoid == LONG_MIN)
		snprintf(para, sizeof(para), "unreadable");
	else
		snprintf(para, sizeof(para), "%ld", paranoid);
	if (me == 0) {
		vt_err_hint(err, "refused even to root (kernel.perf_event_paranoid is %s): a container "
			    "or seccomp profile blocks perf_event_open; give the container CAP_PERFMON "
			    "(docker run --cap-add PERFMON) and a seccomp profile that allows it", para);
	} else if (task_fd >= 0 && fstat(task_fd, &st) == 0 && st.st_uid != me) {
		vt_err_hint(err, "the process belongs to uid %u, not you: run as root, or grant "
			    "CAP_PERFMON and CAP_SYS_PTRACE: sudo setcap cap_perfmon,cap_sys_ptrace+ep "
			    "\"$(command -v vitals)\" (kernel.perf_event_paranoid is %s)",
			    (unsigned)st.st_uid, para);
	} else if (paranoid != LONG_MIN && paranoid <= need) {
		vt_err_hint(err, "kernel.perf_event_paranoid is %s, which allows it: a seccomp profile "
			    "or security module refuses perf_event_open here; run as root or grant "
			    "CAP_PERFMON: sudo setcap cap_perfmon+ep \"$(command -v vitals)\"", para);
	} else {
		vt_err_hint(err, "kernel.perf_event_paranoid is %s; to sample your own processes%s: "
			    "sudo sysctl kernel.perf_event_paranoid=%d, or run as root, or grant "
			    "CAP_PERFMON: sudo setcap cap_perfmon+ep \"$(command -v vitals)\"",
			    para, kernel ? " with kernel frames" : "", need);
	}
}

static void mlock_hint(struct vt_err *err)
{
	vt_err_hint(err, "the perf rings exceed the locked-memory allowance (kernel.perf_event_mlock_kb "
		    "is %ld, and RLIMIT_MEMLOCK): sudo sysctl kernel.perf_event_mlock_kb=4096, "
		    "or run as root (CAP_IPC_LOCK)",
		    read_sysctl("/proc/sys/kernel/perf_event_mlock_kb", -1));
}

/* ---- one thread's event -------------------------------------------------- */

enum open_result {
	OPENED,
	MISSED_GONE,      /* the thread exited first */
	MISSED_LIMIT,     /* fd or locked-memory limit */
	MISSED_CPU,       /* inherit: that CPU is offline */
	REFUSED,          /* EACCES/EPERM: err set */
	FAILED,           /* anything else: err set */
};

static int sys_perf_event_open(struct perf_event_attr *attr, pid_t tid, int cpu)
{
	return (int)syscall(SYS_perf_event_open, attr, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Raise RLIMIT_NOFILE's soft limit to the hard one.  True if it went up. */
static bool raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= rl.rlim_max)
		return false;
	rl.rlim_cur = rl.rlim_max;
	return setrlimit(RLIMIT_NOFILE, &rl) == 0;
}

/* Remember which event fd is, by the id its samples carry. */
static bool note_id(struct vt_perf *pf, int fd, uint32_t event)
{
	uint64_t id;

	if (!pf->custom)
		return true;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &id) != 0)
		return false;
	if (pf->nids == pf->cap_ids) {
		size_t cap = pf->cap_ids ? pf->cap_ids * 2 : 64;
		struct event_id *n = realloc(pf->ids, cap * sizeof(*n));

		if (!n)
			return false;
		pf->ids = n;
		pf->cap_ids = cap;
	}
	pf->ids[pf->nids++] = (struct event_id){ id, event };
	return true;
}

/* Which event an id is; -1 unknown. */
static int event_of_id(const struct vt_perf *pf, uint64_t id)
{
	size_t lo = 0, hi = pf->nids;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pf->ids[mid].id < id)
			lo = mid + 1;
		else if (pf->ids[mid].id > id)
			hi = mid;
		else
			return (int)pf->ids[mid].event;
	}
	return -1;
}

/* Open tid's event of attr (pf->attr or one of pf->more) on cpu (-1: any) into *fd. */
static enum open_result open_fd(struct vt_perf *pf, struct perf_event_attr *attr, pid_t tid,
				int cpu, int *fdp, struct vt_err *err)
{
	int fd, e;

	*fdp = -1;
	for (;;) {
		fd = sys_perf_event_open(attr, tid, cpu);
		if (fd >= 0)
			break;
		e = errno;
		if (e == EMFILE && !pf->nofile_tried) {
			pf->nofile_tried = true;
			if (raise_nofile()) {
				pf->st.nofile_raised = true;
				continue;
			}
		}
		if ((e == EACCES || e == EPERM) && !attr->exclude_kernel) {
			/* perf_event_paranoid 2: user space only.  Keep it if that works. */
			attr->exclude_kernel = 1;
			attr->exclude_callchain_kernel = 1;
			fd = sys_perf_event_open(attr, tid, cpu);
			if (fd >= 0) {
				pf->st.kernel_refused = true;
				break;
			}
			if (errno != EACCES && errno != EPERM)
				e = errno;   /* judge the other error on its own */
			attr->exclude_kernel = 0;
			attr->exclude_callchain_kernel = 0;
		}
		pf->last_fail_errno = e;
		pf->last_fail_mmap = false;
		switch (e) {
		case ESRCH:
			return MISSED_GONE;
		case ENODEV:
			if (cpu >= 0)
				return MISSED_CPU;
			break;
		case EMFILE:
		case ENFILE:
			vt_err_set(err, VT_E_IO, e, "cannot open a perf event for thread %d: %s",
				   (int)tid, strerror(e));
			vt_err_hint(err, "raise the open-file limit (ulimit -n): one descriptor per thread");
			return MISSED_LIMIT;
		case EACCES:
		case EPERM:
			vt_err_set(err, VT_E_PERM, e, "perf_event_open refused for thread %d of %d: %s",
				   (int)tid, (int)pf->pid, strerror(e));
			if (pf->custom)
				vt_err_hint(err, "probes (uprobes) need CAP_PERFMON or CAP_SYS_ADMIN, "
					    "whatever kernel.perf_event_paranoid says: run as root, or "
					    "sudo setcap cap_perfmon,cap_sys_ptrace+ep $(command -v vitals)");
			else
				perm_hint(pf->task_fd, pf->kernel_wanted, err);
			return REFUSED;
		case ENOSYS:
		case ENOENT:
		case EOPNOTSUPP:
			if (pf->custom) {
				vt_err_set(err, VT_E_UNSUPPORTED, e, "the kernel cannot place this probe "
					   "(PMU type %u): %s", (unsigned)attr->type, strerror(e));
				return FAILED;
			}
			vt_err_set(err, VT_E_UNSUPPORTED, e, "this kernel has no cpu-clock perf events: %s",
				   strerror(e));
			return FAILED;
		case EINVAL:
		case E2BIG:
		case EOVERFLOW:
			if (pf->custom) {
				vt_err_set(err, VT_E_UNSUPPORTED, e, "the kernel refused the probe "
					   "(PMU type %u, offset 0x%llx): %s", (unsigned)attr->type,
					   (unsigned long long)attr->config2, strerror(e));
				vt_err_hint(err, "the uprobe PMU needs Linux 4.17; the offset must be an "
					    "instruction of an executable mapping of the file");
				return FAILED;
			}
			vt_err_set(err, VT_E_UNSUPPORTED, e,
				   "the kernel refused the perf event's attributes (%u Hz, %u stack bytes, "
				   "%u frames%s): %s", (unsigned)pf->attr.sample_freq,
				   (unsigned)pf->attr.sample_stack_user, (unsigned)pf->attr.sample_max_stack,
				   pf->attr.inherit ? ", inherited" : "", strerror(e));
			vt_err_hint(err, "clock ids in samples need Linux 4.1 and sample_max_stack 4.8");
			return FAILED;
		case ENOMEM:
			vt_err_set(err, VT_E_NOMEM, e, "out of memory opening a perf event");
			return FAILED;
		default:
			break;
		}
		vt_err_set(err, VT_E_IO, e, "perf_event_open for thread %d: %s", (int)tid, strerror(e));
		return FAILED;
	}
	*fdp = fd;
	return OPENED;
}

/* Map the ring of event fd into *r: 1 + pages pages, halved while the locked-memory
 * limit refuses it.  On failure fd is left open for the caller. */
static enum open_result map_ring(struct vt_perf *pf, int fd, pid_t tid, struct ring *r,
				 struct vt_err *err)
{
	struct perf_event_mmap_page *meta;
	uint32_t pages;
	void *map;
	size_t len;
	int e;

	for (pages = pf->ring_pages;; pages /= 2) {
		len = ((size_t)pages + 1) * (size_t)pf->page_size;
		map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (map != MAP_FAILED)
			break;
		e = errno;
		if ((e == EPERM || e == ENOMEM) && pages / 2 >= pf->min_ring_pages)
			continue;
		pf->last_fail_errno = e;
		pf->last_fail_mmap = true;
		vt_err_set(err, e == EPERM ? VT_E_PERM : VT_E_NOMEM, e,
			   "cannot map the perf ring of thread %d (%u pages): %s", (int)tid,
			   (unsigned)pages, strerror(e));
		if (e == EPERM)
			mlock_hint(err);
		return MISSED_LIMIT;
	}
	if (pages < pf->ring_pages) {
		pf->ring_pages = pages;   /* the allowance is shared: the next ring asks no more */
		pf->st.ring_pages = pages;
	}
	meta = map;
	r->fd = fd;
	r->meta = meta;
	r->map_len = len;
	if (meta->data_offset && meta->data_size &&
	    meta->data_offset + meta->data_size <= len &&
	    !(meta->data_size & (meta->data_size - 1))) {
		r->data = (unsigned char *)map + meta->data_offset;
		r->data_size = meta->data_size;
	} else {
		r->data = (unsigned char *)map + pf->page_size;
		r->data_size = (uint64_t)pages * (uint64_t)pf->page_size;
	}
	return OPENED;
}

static void unmap_ring(struct ring *r)
{
	if (r->meta)
		munmap(r->meta, r->map_len);
	r->meta = NULL;
	r->data = NULL;
	r->fd = -1;
}

static void thread_ev_init(struct thread_ev *te, pid_t tid)
{
	memset(te, 0, sizeof(*te));
	te->tid = tid;
	te->fd = -1;
	te->ring.fd = -1;
	for (size_t k = 0; k < VT_PERF_EVENTS_MAX - 1; k++)
		te->more[k] = -1;
}

static void close_more(struct thread_ev *te)
{
	for (size_t k = 0; k < VT_PERF_EVENTS_MAX - 1; k++) {
		if (te->more[k] >= 0) {
			ioctl(te->more[k], PERF_EVENT_IOC_DISABLE, 0);
			close(te->more[k]);
		}
		te->more[k] = -1;
	}
}

/* Open the events of tid into *te, with its own ring (fd -1 unless OPENED). */
static enum open_result open_event(struct vt_perf *pf, pid_t tid, struct thread_ev *te,
				   struct vt_err *err)
{
	enum open_result r;
	int fd;

	thread_ev_init(te, tid);
	pf->attr.wakeup_watermark = (uint32_t)((uint64_t)pf->ring_pages * (uint64_t)pf->page_size / 2);
	r = open_fd(pf, &pf->attr, tid, -1, &fd, err);
	if (r != OPENED)
		return r;
	r = map_ring(pf, fd, tid, &te->ring, err);
	if (r != OPENED) {
		close(fd);
		return r;
	}
	if (!note_id(pf, fd, 0)) {
		r = MISSED_GONE;
		goto undo;
	}
	for (unsigned k = 0; k < pf->nmore; k++) {
		r = open_fd(pf, &pf->more[k], tid, -1, &te->more[k], err);
		if (r != OPENED)
			goto undo;
		if (ioctl(te->more[k], PERF_EVENT_IOC_SET_OUTPUT, fd) != 0 ||
		    !note_id(pf, te->more[k], k + 1) ||
		    ioctl(te->more[k], PERF_EVENT_IOC_ENABLE, 0) != 0) {
			r = MISSED_GONE;
			goto undo;
		}
	}
	if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
		r = MISSED_GONE;
		goto undo;
	}
	te->fd = fd;
	pf->st.threads_opened++;
	pf->st.threads_now++;
	return OPENED;
undo:
	if (r == MISSED_GONE) {
		pf->last_fail_errno = errno;
		pf->last_fail_mmap = false;
	}
	close_more(te);
	unmap_ring(&te->ring);
	close(fd);
	return r;
}

/*
 * Inherit: tid's events on every CPU, each writing to that CPU's ring (the
 * first event of a CPU maps it).  All or nothing: a thread with events on
 * some CPUs only would go unsampled on the others.
 */
static enum open_result open_inherited(struct vt_perf *pf, pid_t tid, struct thread_ev *te,
				       struct vt_err *err)
{
	size_t first = pf->ninherit_fds;
	enum open_result r = OPENED;
	int cpu, fd;

	size_t need = (size_t)pf->ncpus * (1 + pf->nmore);

	thread_ev_init(te, tid);
	if (pf->cap_inherit_fds - pf->ninherit_fds < need) {
		size_t cap = pf->cap_inherit_fds ? pf->cap_inherit_fds * 2 : 64;
		int *n;

		while (cap - pf->ninherit_fds < need)
			cap *= 2;
		n = realloc(pf->inherit_fds, cap * sizeof(*n));
		if (!n) {
			vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory for perf events");
			return FAILED;
		}
		pf->inherit_fds = n;
		pf->cap_inherit_fds = cap;
	}
	pf->attr.wakeup_watermark = (uint32_t)((uint64_t)pf->ring_pages * (uint64_t)pf->page_size / 2);
	for (cpu = 0; cpu < pf->ncpus && r == OPENED; cpu++) {
		struct ring *ring = &pf->cpu_rings[cpu];

		for (unsigned k = 0; k <= pf->nmore && r == OPENED; k++) {
			r = open_fd(pf, k ? &pf->more[k - 1] : &pf->attr, tid, cpu, &fd, err);
			if (r == MISSED_CPU) {
				r = OPENED;
				break;
			}
			if (r != OPENED)
				break;
			pf->inherit_fds[pf->ninherit_fds++] = fd;
			if (ring->fd < 0)
				r = map_ring(pf, fd, tid, ring, err);
			else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, ring->fd) != 0) {
				r = errno == ESRCH ? MISSED_GONE : FAILED;
				if (r == FAILED)
					vt_err_set(err, VT_E_IO, errno, "cannot send thread %d's samples "
						   "to CPU %d's ring: %s", (int)tid, cpu, strerror(errno));
			}
			if (r == OPENED && !note_id(pf, fd, k))
				r = MISSED_GONE;
			if (r == OPENED && ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0)
				r = MISSED_GONE;
		}
	}
	if (r != OPENED) {
		/* undo this thread's events; a ring one of them mapped goes with it */
		for (cpu = 0; cpu < pf->ncpus; cpu++) {
			struct ring *ring = &pf->cpu_rings[cpu];

			for (size_t i = first; i < pf->ninherit_fds; i++)
				if (ring->fd == pf->inherit_fds[i])
					unmap_ring(ring);
		}
		while (pf->ninherit_fds > first)
			close(pf->inherit_fds[--pf->ninherit_fds]);
		return r;
	}
	pf->st.threads_opened++;
	pf->st.threads_now++;
	return OPENED;
}

static void close_event(struct vt_perf *pf, struct thread_ev *te)
{
	if (te->fd < 0)
		return;
	close_more(te);
	ioctl(te->fd, PERF_EVENT_IOC_DISABLE, 0);
	unmap_ring(&te->ring);
	close(te->fd);
	te->fd = -1;
	pf->st.threads_now--;
}

/* Account a thread that was not opened. */
static void count_missed(struct vt_perf *pf, enum open_result r)
{
	pf->st.threads_missed++;
	if (r == MISSED_LIMIT)
		pf->st.threads_limited++;
}

/* ---- draining ------------------------------------------------------------ */

static void handle_record(struct vt_perf *pf, const unsigned char *rec, size_t size,
			  vt_perf_sample_fn fn, void *ctx)
{
	struct perf_event_header hdr;
	struct vt_perf_sample s;
	uint64_t lost;

	memcpy(&hdr, rec, sizeof(hdr));
	switch (hdr.type) {
	case PERF_RECORD_SAMPLE: {
		const struct vt_perf_layout *layout = &pf->layout;
		int event = 0;

		if (pf->custom) {   /* PERF_SAMPLE_IDENTIFIER: the id right after the header */
			uint64_t id;

			if (size < sizeof(hdr) + 8) {
				pf->st.malformed++;
				return;
			}
			memcpy(&id, rec + sizeof(hdr), 8);
			event = event_of_id(pf, id);
			if (event < 0) {
				pf->st.malformed++;
				return;
			}
			layout = &pf->layouts[event];
		}
		if (vt_perf_parse_sample(rec, size, layout, &s) != VT_OK) {
			pf->st.malformed++;
			return;
		}
		s.event = (unsigned)event;
		pf->st.samples++;
		if (fn)
			fn(ctx, &s);
		return;
	}
	case PERF_RECORD_LOST:   /* header, u64 id, u64 lost */
		if (size < sizeof(hdr) + 16) {
			pf->st.malformed++;
			return;
		}
		memcpy(&lost, rec + sizeof(hdr) + 8, 8);
		pf->st.lost += lost;
		return;
	case PERF_RECORD_THROTTLE:
		pf->st.throttled++;
		return;
	case PERF_RECORD_FORK:   /* header, u32 pid, ppid, tid, ptid, u64 time */
	case PERF_RECORD_EXIT: {
		uint32_t ids[4];

		if (size < sizeof(hdr) + sizeof(ids)) {
			pf->st.malformed++;
			return;
		}
		memcpy(ids, rec + sizeof(hdr), sizeof(ids));
		/* threads of the process; not a child process (inherit follows a fork too) */
		if (ids[0] != (uint32_t)pf->pid)
			return;
		if (hdr.type == PERF_RECORD_EXIT)
			pf->st.threads_exited++;
		else if (ids[2] != ids[0])
			pf->st.threads_born++;
		return;
	}
	default:
		return;
	}
}

static void drain(struct vt_perf *pf, struct ring *te, vt_perf_sample_fn fn, void *ctx)
{
	struct perf_event_mmap_page *meta = te->meta;
	uint64_t head, tail, mask = te->data_size - 1;

	head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	tail = __atomic_load_n(&meta->data_tail, __ATOMIC_RELAXED);   /* only we write it */
	while (tail != head) {
		uint64_t avail = head - tail;
		size_t off = (size_t)(tail & mask);
		struct perf_event_header hdr;
		const unsigned char *rec;

		if (avail < sizeof(hdr) || off + sizeof(hdr) > te->data_size || avail > te->data_size)
			goto corrupt;
		memcpy(&hdr, te->data + off, sizeof(hdr));
		if (hdr.size < sizeof(hdr) || hdr.size > avail || (hdr.size & 7))
			goto corrupt;
		rec = te->data + off;
		if (off + hdr.size > te->data_size) {
			size_t first = (size_t)(te->data_size - off);

			memcpy(pf->bounce, te->data + off, first);
			memcpy(pf->bounce + first, te->data, hdr.size - first);
			rec = pf->bounce;
		}
		handle_record(pf, rec, hdr.size, fn, ctx);
		tail += hdr.size;
		__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
	}
	return;
corrupt:
	/* Cannot happen with a sane kernel; never loop on it: give the ring back. */
	pf->st.malformed++;
	__atomic_store_n(&meta->data_tail, head, __ATOMIC_RELEASE);
}

/* ---- the session --------------------------------------------------------- */

static int reserve_threads(struct vt_perf *pf, size_t n, struct vt_err *err)
{
	struct thread_ev *nt;
	struct pollfd *np;
	size_t cap;

	if (n <= pf->cap_th)
		return VT_OK;
	cap = pf->cap_th ? pf->cap_th : 16;
	while (cap < n)
		cap *= 2;
	nt = realloc(pf->th, cap * sizeof(*nt));
	if (!nt)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory for %zu threads", n);
	pf->th = nt;
	np = realloc(pf->pfds, cap * sizeof(*np));
	if (!np)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory for %zu threads", n);
	pf->pfds = np;
	pf->cap_th = pf->cap_pfds = cap;
	return VT_OK;
}

static int check_opts(const struct vt_perf_opts *o, unsigned *hz, struct vt_err *err)
{
	long max_rate;

	*hz = o->hz ? o->hz : DEFAULT_HZ;
	max_rate = read_sysctl("/proc/sys/kernel/perf_event_max_sample_rate", -1);
	if (max_rate > 0 && *hz > (unsigned long)max_rate) {
		vt_err_set(err, VT_E_USAGE, 0, "%u Hz is above the kernel's perf sampling limit of %ld Hz",
			   *hz, max_rate);
		vt_err_hint(err, "ask less, or raise it: sudo sysctl kernel.perf_event_max_sample_rate=%u",
			    *hz);
		return VT_E_USAGE;
	}
	if (o->stack_bytes % 8 || o->stack_bytes > MAX_STACK_BYTES)
		return vt_err_set(err, VT_E_USAGE, 0,
				  "stack copy of %u bytes: a multiple of 8 up to %u is needed",
				  (unsigned)o->stack_bytes, MAX_STACK_BYTES);
	if (o->events && (o->nevents == 0 || o->nevents > VT_PERF_EVENTS_MAX))
		return vt_err_set(err, VT_E_USAGE, 0, "%u events per thread: 1 to %u are possible",
				  o->nevents, (unsigned)VT_PERF_EVENTS_MAX);
	if (o->ring_pages & (o->ring_pages - 1) || o->ring_pages > MAX_RING_PAGES)
		return vt_err_set(err, VT_E_USAGE, 0,
				  "ring of %u pages: a power of two up to %u is needed",
				  (unsigned)o->ring_pages, MAX_RING_PAGES);
	return VT_OK;
}

/*
 * opts->events in place of cpu-clock: every hit a sample, each carrying the
 * event's id first (PERF_SAMPLE_IDENTIFIER) so the drain knows its layout;
 * user space only (a uprobe fires in user mode).  Keeps what build_attr set
 * for all (clock, watermark, inherit, stack depth).
 */
static void build_event_attrs(struct vt_perf *pf, const struct vt_perf_opts *o)
{
	struct perf_event_attr common = pf->attr;

	pf->custom = true;
	pf->nmore = o->nevents - 1;
	common.freq = 0;
	common.sample_period = 1;
	common.exclude_kernel = 1;
	common.exclude_callchain_kernel = 1;
	for (unsigned k = 0; k < o->nevents; k++) {
		const struct vt_perf_event *ev = &o->events[k];
		struct perf_event_attr *a = k ? &pf->more[k - 1] : &pf->attr;

		*a = common;
		a->type = ev->type;
		a->config = ev->config;
		a->config1 = ev->config1;
		a->config2 = ev->config2;
		a->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
		a->sample_stack_user = 0;
#if defined(__x86_64__)
		a->sample_type |= PERF_SAMPLE_REGS_USER;
		a->sample_regs_user = VT_PERF_X86_REGS_MASK;
		if (ev->stack && o->stack_bytes) {
			a->sample_type |= PERF_SAMPLE_STACK_USER;
			a->sample_stack_user = o->stack_bytes;
		}
#endif
		if (ev->stack)
			a->sample_type |= PERF_SAMPLE_CALLCHAIN;
		pf->layouts[k].sample_type = a->sample_type;
		pf->layouts[k].regs_mask = a->sample_regs_user;
	}
	pf->layout = pf->layouts[0];
}

static void build_attr(struct vt_perf *pf, const struct vt_perf_opts *o, unsigned hz)
{
	struct perf_event_attr *a = &pf->attr;
	long max_stack = read_sysctl("/proc/sys/kernel/perf_event_max_stack", WANT_MAX_STACK);

	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_CPU_CLOCK;
	a->freq = 1;
	a->sample_freq = hz;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;
#if defined(__x86_64__)
	a->sample_type |= PERF_SAMPLE_REGS_USER;
	a->sample_regs_user = VT_PERF_X86_REGS_MASK;
	if (o->stack_bytes) {
		a->sample_type |= PERF_SAMPLE_STACK_USER;
		a->sample_stack_user = o->stack_bytes;
	}
#endif
	a->disabled = 1;              /* enabled once its ring is mapped */
	/* the kernel maps no ring for an inherited event of any CPU (cpu -1): inherit takes
	 * one event per CPU */
	a->inherit = pf->inherit;
	a->exclude_kernel = !o->kernel;
	a->exclude_callchain_kernel = !o->kernel;
	a->exclude_hv = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->sample_max_stack = (uint16_t)(max_stack > 0 && max_stack < WANT_MAX_STACK ? max_stack
										       : WANT_MAX_STACK);
	a->watermark = 1;             /* wake poll() when half a ring is waiting */
	a->task = o->tasks && !o->events;   /* FORK and EXIT records: threads made and gone */
	pf->layout.sample_type = a->sample_type;
	pf->layout.regs_mask = a->sample_regs_user;
	if (o->events)
		build_event_attrs(pf, o);
}

/* Open the session; with first_only, stop at the first thread opened (vt_perf_check). */
/* Give up inheritance before any thread has events: one event and ring per thread. */
static void per_thread_events(struct vt_perf *pf)
{
	pf->inherit = false;
	pf->attr.inherit = 0;
	if (pf->ring_pages >= 4)
		pf->ring_pages /= 4;
	pf->st.ring_pages = pf->ring_pages;
}

static int session_open(pid_t pid, const struct vt_perf_opts *opts, bool first_only,
			struct vt_perf **out, struct vt_err *err)
{
	static const struct vt_perf_opts defaults = { DEFAULT_HZ, 8192, DEFAULT_RING_PAGES, true };
	const struct vt_perf_opts *o = opts ? opts : &defaults;
	struct vt_perf *pf;
	struct vt_err first_err;
	bool have_first_err = false;
	char path[64];
	size_t i;
	unsigned hz;
	uint64_t need;
	int rc, e;

	*out = NULL;
	vt_err_clear(&first_err);
	if (pid <= 0)
		return vt_err_set(err, VT_E_NOPROC, ESRCH, "no process %d", (int)pid);
	rc = check_opts(o, &hz, err);
	if (rc != VT_OK)
		return rc;
	pf = calloc(1, sizeof(*pf));
	if (!pf)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
	pf->pid = pid;
	pf->task_fd = -1;
	pf->page_size = sysconf(_SC_PAGESIZE);
	if (pf->page_size <= 0)
		pf->page_size = 4096;
	pf->ring_pages = o->ring_pages ? o->ring_pages : DEFAULT_RING_PAGES;
	/* Shrink no further than two records of the stack copy's size. */
	need = 2 * ((uint64_t)o->stack_bytes + 2048);
	pf->min_ring_pages = 1;
	while ((uint64_t)pf->min_ring_pages * (uint64_t)pf->page_size < need)
		pf->min_ring_pages *= 2;
	if (pf->min_ring_pages > pf->ring_pages)
		pf->min_ring_pages = pf->ring_pages;
	pf->kernel_wanted = o->kernel;
	pf->want = o->want;
	pf->want_ctx = o->want_ctx;
	pf->st.hz = hz;
	pf->inherit = o->inherit && !first_only;
	if (pf->inherit) {
		long n = sysconf(_SC_NPROCESSORS_CONF);

		pf->ncpus = n > 0 && n < 4096 ? (int)n : 1;
		pf->cpu_rings = malloc((size_t)pf->ncpus * sizeof(*pf->cpu_rings));
		if (!pf->cpu_rings) {
			rc = vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
			goto fail;
		}
		for (i = 0; i < (size_t)pf->ncpus; i++)
			pf->cpu_rings[i] = (struct ring){ .fd = -1 };
		/* a CPU's ring takes every thread that runs there */
		if (pf->ring_pages <= MAX_RING_PAGES / 4)
			pf->ring_pages *= 4;
	}
	pf->st.ring_pages = pf->ring_pages;
	build_attr(pf, o, hz);
	pf->bounce = malloc(RECORD_MAX);
	pf->dents = malloc(DENTS_BYTES);
	if (!pf->bounce || !pf->dents) {
		rc = vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
		goto fail;
	}
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	pf->task_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pf->task_fd < 0) {
		e = errno;
		rc = e == ENOENT || e == ESRCH
			     ? vt_err_set(err, VT_E_NOPROC, e, "no process %d", (int)pid)
			     : vt_err_set(err, vt_code_from_errno(e), e, "cannot open the threads of process "
					  "%d: %s", (int)pid, strerror(e));
		goto fail;
	}
	rc = list_tids(pf, err);
	if (rc == VT_E_GONE)
		rc = vt_err_set(err, VT_E_NOPROC, ESRCH, "process %d exited", (int)pid);
	if (rc != VT_OK)
		goto fail;
	rc = reserve_threads(pf, pf->ntids, err);
	if (rc != VT_OK)
		goto fail;
	if (pf->inherit && pf->ntids * (size_t)pf->ncpus * (1 + pf->nmore) > VT_PERF_INHERIT_FDS_MAX)
		per_thread_events(pf);
	for (i = 0; i < pf->ntids; i++) {
		struct thread_ev *te = &pf->th[pf->nth];
		struct vt_err one;
		enum open_result r;

		vt_err_clear(&one);
		if (pf->want && !pf->want(pf->want_ctx, pf->tids[i])) {
			thread_ev_init(te, pf->tids[i]);
			pf->st.threads_skipped++;
			pf->nth++;
			continue;
		}
		r = pf->inherit ? open_inherited(pf, pf->tids[i], te, &one)
				: open_event(pf, pf->tids[i], te, &one);
		if (r == FAILED && pf->inherit && pf->nth == 0) {
			/* a kernel that refuses inherited per-CPU events: one event per thread */
			per_thread_events(pf);
			i--;
			continue;
		}
		if (r == FAILED || (r == REFUSED && pf->st.threads_now == 0)) {
			if (err)
				*err = one;
			rc = one.code;
			goto fail;
		}
		if (r != OPENED && r != MISSED_GONE && !have_first_err) {
			first_err = one;
			have_first_err = true;
		}
		if (r != OPENED)
			count_missed(pf, r);
		pf->nth++;
		if (first_only && r == OPENED)
			break;
	}
	pf->st.inherit = pf->inherit;
	pf->st.cpus = pf->inherit ? (uint32_t)pf->ncpus : 0;
	if (pf->st.threads_now == 0 && !pf->st.threads_skipped) {
		if (have_first_err) {
			if (err)
				*err = first_err;
			rc = first_err.code;
		} else {
			rc = vt_err_set(err, VT_E_NOPROC, ESRCH, "process %d exited", (int)pid);
		}
		goto fail;
	}
	*out = pf;
	return VT_OK;
fail:
	vt_perf_close(&pf);
	return rc;
}

int vt_perf_open(pid_t pid, const struct vt_perf_opts *opts, struct vt_perf **out,
		 struct vt_err *err)
{
	return session_open(pid, opts, false, out, err);
}

int vt_perf_check(pid_t pid, struct vt_err *err)
{
	const struct vt_perf_opts o = { DEFAULT_HZ, 8192, 4, false };
	struct vt_perf *pf;
	int rc = session_open(pid, &o, true, &pf, err);

	vt_perf_close(&pf);
	return rc;
}

int vt_perf_sync_threads(struct vt_perf *pf, struct vt_err *err)
{
	struct thread_ev *merged;
	size_t n, i = 0, j = 0, k = 0, cap;
	const pid_t *tids;
	int rc;

	rc = list_tids(pf, err);
	if (rc != VT_OK)
		return rc;
	tids = pf->tids;
	n = pf->ntids;
	if (n == 0)
		return vt_err_set(err, VT_E_GONE, ESRCH, "process %d exited", (int)pf->pid);
	if (pf->inherit)
		return VT_OK;   /* new threads inherit their maker's events */
	cap = pf->nth + n;
	merged = malloc(cap * sizeof(*merged));
	if (!merged) {
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory for %zu threads", cap);
	}
	/* Merge the sorted entries with the sorted listing. */
	while (i < pf->nth || j < n) {
		if (j == n || (i < pf->nth && pf->th[i].tid < tids[j])) {
			/* not listed any more: a missed one is forgotten, an open one
			 * is drained by the next poll, then closed */
			if (pf->th[i].fd >= 0) {
				pf->th[i].unlisted = true;
				merged[k++] = pf->th[i];
			}
			i++;
		} else if (i == pf->nth || tids[j] < pf->th[i].tid) {
			struct vt_err one;
			enum open_result r;

			if (pf->want && !pf->want(pf->want_ctx, tids[j])) {
				thread_ev_init(&merged[k], tids[j]);
				pf->st.threads_skipped++;
				k++;
				j++;
				continue;
			}
			r = open_event(pf, tids[j], &merged[k], &one);
			if (r != OPENED)
				count_missed(pf, r);
			k++;
			j++;
		} else {
			merged[k++] = pf->th[i];
			i++;
			j++;
		}
	}
	free(pf->th);
	pf->th = merged;
	pf->nth = k;
	pf->cap_th = cap;
	free(pf->pfds);
	pf->pfds = malloc(cap * sizeof(*pf->pfds));
	pf->cap_pfds = pf->pfds ? cap : 0;
	if (!pf->pfds)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory for %zu threads", cap);
	return VT_OK;
}

/* Inherit: wait for a CPU's ring to fill to its mark, then drain them all.  No event
 * is closed: the threads that exit leave their events to the threads they made. */
static int poll_cpu_rings(struct vt_perf *pf, int timeout_ms, vt_perf_sample_fn fn, void *ctx,
			  struct vt_err *err)
{
	size_t n = (size_t)pf->ncpus;
	int r, e;

	if (pf->cap_pfds < n) {
		struct pollfd *np = realloc(pf->pfds, n * sizeof(*np));

		if (!np)
			return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory for %zu CPUs", n);
		pf->pfds = np;
		pf->cap_pfds = n;
	}
	for (size_t i = 0; i < n; i++)
		pf->pfds[i] = (struct pollfd){ .fd = pf->cpu_rings[i].fd, .events = POLLIN };
	r = poll(pf->pfds, (nfds_t)n, timeout_ms);
	if (r < 0 && errno != EINTR) {
		e = errno;
		return vt_err_set(err, VT_E_IO, e, "poll on perf events: %s", strerror(e));
	}
	for (size_t i = 0; i < n; i++)
		if (pf->cpu_rings[i].fd >= 0)
			drain(pf, &pf->cpu_rings[i], fn, ctx);
	return VT_OK;
}

int vt_perf_poll(struct vt_perf *pf, int timeout_ms, vt_perf_sample_fn fn, void *ctx,
		 struct vt_err *err)
{
	size_t i, k;
	int r, e;

	if (pf->inherit)
		return poll_cpu_rings(pf, timeout_ms, fn, ctx, err);
	if (pf->cap_pfds < pf->nth) {
		struct pollfd *np = realloc(pf->pfds, pf->nth * sizeof(*np));

		if (!np)
			return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory for %zu threads",
					  pf->nth);
		pf->pfds = np;
		pf->cap_pfds = pf->nth;
	}
	for (i = 0; i < pf->nth; i++) {
		pf->pfds[i].fd = pf->th[i].fd;   /* poll skips the -1 of missed threads */
		pf->pfds[i].events = POLLIN;
		pf->pfds[i].revents = 0;
	}
	if (pf->st.threads_now > 0 || timeout_ms > 0) {
		r = poll(pf->pfds, (nfds_t)pf->nth, timeout_ms);
		if (r < 0 && errno != EINTR) {
			e = errno;
			return vt_err_set(err, VT_E_IO, e, "poll on perf events: %s", strerror(e));
		}
	}
	/* Drain every ring (the watermark wakes us at half a ring, not per sample),
	 * then close the events of threads that exited. */
	for (i = 0, k = 0; i < pf->nth; i++) {
		struct thread_ev *te = &pf->th[i];

		if (te->fd >= 0) {
			drain(pf, &te->ring, fn, ctx);
			if ((pf->pfds[i].revents & (POLLHUP | POLLERR | POLLNVAL)) || te->unlisted) {
				close_event(pf, te);
				continue;   /* dropped */
			}
		}
		pf->th[k++] = *te;
	}
	pf->nth = k;
	if (pf->st.threads_now == 0 && process_gone(pf))
		return vt_err_set(err, VT_E_GONE, ESRCH, "process %d exited", (int)pf->pid);
	return VT_OK;
}

void vt_perf_get_stats(const struct vt_perf *pf, struct vt_perf_stats *out)
{
	*out = pf->st;
}

void vt_perf_disable(struct vt_perf *pf)
{
	for (size_t i = 0; i < pf->nth; i++) {
		if (pf->th[i].fd < 0)
			continue;
		ioctl(pf->th[i].fd, PERF_EVENT_IOC_DISABLE, 0);
		for (unsigned k = 0; k < pf->nmore; k++)
			if (pf->th[i].more[k] >= 0)
				ioctl(pf->th[i].more[k], PERF_EVENT_IOC_DISABLE, 0);
	}
	for (size_t i = 0; i < pf->ninherit_fds; i++)
		ioctl(pf->inherit_fds[i], PERF_EVENT_IOC_DISABLE, 0);
}

void vt_perf_close(struct vt_perf **pfp)
{
	struct vt_perf *pf = pfp ? *pfp : NULL;
	size_t i;

	if (!pf)
		return;
	for (i = 0; i < pf->nth; i++)
		close_event(pf, &pf->th[i]);
	for (i = 0; pf->cpu_rings && i < (size_t)pf->ncpus; i++)
		unmap_ring(&pf->cpu_rings[i]);
	for (i = 0; i < pf->ninherit_fds; i++)
		close(pf->inherit_fds[i]);
	free(pf->cpu_rings);
	free(pf->inherit_fds);
	if (pf->task_fd >= 0)
		close(pf->task_fd);
	free(pf->th);
	free(pf->tids);
	free(pf->dents);
	free(pf->pfds);
	free(pf->bounce);
	free(pf->ids);
	free(pf);
	*pfp = NULL;
}

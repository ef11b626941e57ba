/*
 * thread_watch.c — per-thread counters through held /proc fds (see
 * thread_watch.h).
 *
 * A read has three phases.  First the process stat and the listing of
 * task/ (or, when the thread count allows, the tids of the previous rows):
 * nothing of the watch changes if they fail.  Then every array the read may
 * need is sized, so running out of memory changes nothing either.  Last,
 * one merge of the previous rows (sorted by tid) with the listing (sorted
 * too) builds the next generation of rows and slots in the spare arrays,
 * moving each slot's fds along, and the two generations swap.  A skipped
 * listing that turns out to be needed (a thread left) is done then, and a
 * second merge adds the threads it finds.  Reads only; never stops or
 * signals the target.
 */
#include "proc/thread_watch.h"
#include "base/unknown.h"

#include "base/clock.h"
#include "base/scan.h"
#include "base/tidlist.h"
#include "proc/schedstat.h"
#include "proc/stat.h"
#include "proc/task.h"
#include "proc/wchan_syscall.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DENTS_BYTES (32 * 1024)   /* one getdents64 call lists ~1,000 threads */
#define FILE_MAX (64 * 1024)      /* a task stat, schedstat or status is < 4 KiB */

/* The fds of one thread; -1 where the file is read by path instead. */
struct slot {
	int stat_fd;     /* task/TID/stat */
	int sched_fd;    /* task/TID/schedstat */
	int status_fd;   /* task/TID/status, opened at the first VT_TW_CSW read */
	int wchan_fd;    /* task/TID/wchan, opened at the first VT_TW_WCHAN read */
	int syscall_fd;  /* task/TID/syscall, opened at the first VT_TW_SYSCALL read */
	unsigned read_last;   /* VT_TW_CARRY: the files of enum slot_file the previous read read */
};

/* status, wchan and syscall: what a VT_TW_CARRY read read for one thread. */
enum slot_file { READ_STATUS = 1 << 0, READ_WCHAN = 1 << 1, READ_SYSCALL = 1 << 2 };

#define SLOT_NONE ((struct slot){ -1, -1, -1, -1, -1, 0 })

struct vt_thread_watch {
	pid_t pid;
	int task_fd;                  /* /proc/PID/task, owned */
	int stat_fd;                  /* /proc/PID/stat, owned */
	bool schedstat;               /* the kernel has task/TID/schedstat */
	int wchan_access;             /* VT_OK, or VT_E_PERM: no ptrace read access (see .h) */
	int syscall_refused;          /* VT_OK, or why the last syscall read failed for good */
	bool syscall_seen;            /* a syscall file was read: its access is known */
	unsigned prev_flags;          /* of the previous read */
	uint64_t reads;               /* completed reads */
	uint64_t lists;               /* listings of task/ */
	bool live;                    /* the real /proc: held fds fail once their thread exits */
	bool relist;                  /* list task/ at the next read, whatever the count */
	size_t fd_max;                /* the caller's cap on thread fds */
	size_t fd_emfile;             /* the cap EMFILE/ENFILE taught us, SIZE_MAX if none */
	size_t thread_fds;            /* thread fds held now */
	long clk_tck;

	struct vt_thread_counts *rows;   /* the last read, sorted by tid, n of them */
	struct slot *slots;              /* slots[i] belongs to rows[i] */
	size_t n, cap;
	struct vt_thread_counts *next_rows;   /* the spare generation, cap entries */
	struct slot *next_slots;
	struct vt_thread_counts *exited;      /* n_exited, capacity exited_cap */
	size_t n_exited, exited_cap;

	pid_t *tids;                  /* the last listing of task/, sorted */
	size_t ntids, tids_cap;

	struct vt_thread_watch_proc proc;
	size_t held, reopened;        /* of the last read */
	size_t stat_read, stat_carried, csw_read, doing_read, doing_carried, doing_running;   /* ditto */
	struct vt_buf buf;            /* one file at a time */
	_Alignas(8) char dents[DENTS_BYTES];
};

/* ---- the fd budget of all watches of this process ------------------------ */

static pthread_once_t nofile_once = PTHREAD_ONCE_INIT;
static struct rlimit nofile_orig;
static bool nofile_raised;
static size_t fd_budget_all;
static atomic_size_t fds_held_all;

static void nofile_raise(void)
{
	struct rlimit rl, want;
	rlim_t cur;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return;     /* budget 0: every thread by open-read-close */
	nofile_orig = rl;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < rl.rlim_max) {
		want = rl;
		want.rlim_cur = rl.rlim_max;
		/* Fails when the hard limit is above fs.nr_open: keep the soft one. */
		if (setrlimit(RLIMIT_NOFILE, &want) == 0) {
			rl = want;
			nofile_raised = true;
		}
	}
	cur = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (1u << 30) ? (1u << 30) : rl.rlim_cur;
	fd_budget_all = cur > VT_TW_FD_RESERVE ? (size_t)cur - VT_TW_FD_RESERVE : 0;
}

void vt_thread_watch_nofile_restore(void)
{
	if (nofile_raised)
		setrlimit(RLIMIT_NOFILE, &nofile_orig);
}

/* Reserve k thread fds against both budgets; false when either is spent. */
static bool fds_reserve(struct vt_thread_watch *w, size_t k)
{
	size_t all = atomic_load(&fds_held_all);

	if (w->thread_fds + k > w->fd_max || w->thread_fds + k > w->fd_emfile)
		return false;
	do {
		if (all + k > fd_budget_all)
			return false;
	} while (!atomic_compare_exchange_weak(&fds_held_all, &all, all + k));
	w->thread_fds += k;
	return true;
}

static void fds_unreserve(struct vt_thread_watch *w, size_t k)
{
	w->thread_fds -= k;
	atomic_fetch_sub(&fds_held_all, k);
}

static void fd_drop(struct vt_thread_watch *w, int *fd)
{
	if (*fd < 0)
		return;
	close(*fd);
	*fd = -1;
	fds_unreserve(w, 1);
}

static void slot_close(struct vt_thread_watch *w, struct slot *s)
{
	fd_drop(w, &s->stat_fd);
	fd_drop(w, &s->sched_fd);
	fd_drop(w, &s->status_fd);
	fd_drop(w, &s->wchan_fd);
	fd_drop(w, &s->syscall_fd);
}

/*
 * Open TID/name under task/ for holding, within a reserved fd.  VT_OK with
 * *fd set, or with *fd == -1 when out of fds or on another error (the file is
 * then read by path, which tells why); VT_E_NOTFOUND when it does not exist.
 */
static int hold_open(struct vt_thread_watch *w, pid_t tid, const char *name, int *fd)
{
	char path[32];
	int e;

	*fd = -1;
	if (!fds_reserve(w, 1))
		return VT_OK;
	snprintf(path, sizeof(path), "%d/%s", (int)tid, name);
	*fd = openat(w->task_fd, path, O_RDONLY | O_CLOEXEC);
	if (*fd >= 0)
		return VT_OK;
	e = errno;
	fds_unreserve(w, 1);
	if (e == EMFILE || e == ENFILE) {
		w->fd_emfile = w->thread_fds;   /* hold no more until some close */
		return VT_OK;
	}
	return e == ENOENT || e == ESRCH ? VT_E_NOTFOUND : VT_OK;
}

/* ---- reading one thread -------------------------------------------------- */

/*
 * Read task/TID/name through fd when held, else by open-read-close.  Errors
 * of vt_pread_fd, and VT_E_GONE or VT_E_NOTFOUND when the file cannot be
 * opened because the thread is gone, or only the file is missing.
 */
static int read_file(struct vt_thread_watch *w, int fd, pid_t tid, const char *name,
		     struct vt_err *err)
{
	char path[32];
	struct stat sb;
	int rc, e;

	if (fd >= 0)
		return vt_pread_fd(fd, name, &w->buf, err);
	snprintf(path, sizeof(path), "%d/%s", (int)tid, name);
	fd = openat(w->task_fd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		if (e != ENOENT && e != ESRCH)
			return vt_err_set(err, vt_code_from_errno(e), e, "cannot open 'task/%s': %s",
					  path, strerror(e));
		snprintf(path, sizeof(path), "%d", (int)tid);
		if (fstatat(w->task_fd, path, &sb, AT_SYMLINK_NOFOLLOW) < 0)
			return vt_err_set(err, VT_E_GONE, e, "thread %d exited", (int)tid);
		return vt_err_set(err, VT_E_NOTFOUND, e, "'task/%d/%s' does not exist", (int)tid,
				  name);
	}
	rc = vt_pread_fd(fd, name, &w->buf, err);
	close(fd);
	return rc;
}

static bool is_gone(int rc)
{
	return rc == VT_E_GONE || rc == VT_E_NOPROC;
}

/*
 * The value of "\nKEY:\t123" in status text; the two context-switch lines are
 * near the end but not always last (x86_Thread_features follows on 6.6+).
 * vt_proc_status_parse would do, but it walks every key on every line, a
 * cost paid per thread per tick here.
 */
static bool status_u64(const char *buf, size_t len, const char *key, size_t key_len,
		       uint64_t *out)
{
	const char *p = memmem(buf, len, key, key_len);
	struct vt_scan s;

	if (!p)
		return false;
	s = vt_scan_init(p + key_len, (size_t)(buf + len - p - key_len));
	return vt_scan_u64(&s, out);
}

static bool parse_csw(const char *buf, size_t len, uint64_t *vol, uint64_t *nonvol)
{
	static const char kv[] = "\nvoluntary_ctxt_switches:";
	static const char kn[] = "\nnonvoluntary_ctxt_switches:";

	return status_u64(buf, len, kv, sizeof(kv) - 1, vol) &&
	       status_u64(buf, len, kn, sizeof(kn) - 1, nonvol);
}

/*
 * wchan and syscall of thread tid into *c, as flags ask.  VT_E_GONE when the
 * thread exited; any other failure only marks the field.
 */
static int read_doing(struct vt_thread_watch *w, struct slot *s, pid_t tid, unsigned flags,
		      struct vt_thread_counts *c)
{
	struct vt_err e;
	int rc;

	c->wchan[0] = '\0';
	c->wchan_rc = c->syscall_rc = VT_TW_UNREAD;
	c->syscall = VT_TW_SYSCALL_RUNNING;
	if (flags & VT_TW_WCHAN) {
		if (w->wchan_access != VT_OK) {
			c->wchan_rc = w->wchan_access;
		} else {
			rc = read_file(w, s->wchan_fd, tid, "wchan", &e);
			if (is_gone(rc))
				return VT_E_GONE;
			c->wchan_rc = rc;
			if (rc == VT_OK)
				vt_wchan_parse(w->buf.data, w->buf.len, c->wchan, sizeof(c->wchan));
		}
	}
	if (flags & VT_TW_SYSCALL) {
		if (w->syscall_refused != VT_OK) {
			c->syscall_rc = w->syscall_refused;
			return VT_OK;
		}
		rc = read_file(w, s->syscall_fd, tid, "syscall", &e);
		if (is_gone(rc))
			return VT_E_GONE;
		w->syscall_seen = true;
		if (rc == VT_OK)
			rc = vt_syscall_parse(w->buf.data, w->buf.len, &c->syscall, c->syscall_args, NULL);
		if (rc != VT_OK || !vt_syscall_parse_sp_pc(w->buf.data, w->buf.len, &c->syscall_sp, &c->syscall_pc))
			c->syscall_sp = c->syscall_pc = 0;
		if (rc == VT_E_PERM || rc == VT_E_NOTFOUND)
			w->syscall_refused = rc;    /* the same for every thread: do not ask again */
		c->syscall_rc = rc;
	}
	return VT_OK;
}

/*
 * run_ns and wait_ns of thread tid into *c, VT_NA when schedstat does not
 * read.  VT_OK, or VT_E_GONE when the thread exited.
 */
static int read_schedstat(struct vt_thread_watch *w, struct slot *s, pid_t tid,
			  struct vt_thread_counts *c)
{
	struct vt_schedstat ss;
	int rc;

	c->run_ns = c->wait_ns = c->timeslices = VT_NA;
	if (!w->schedstat)
		return VT_OK;
	rc = read_file(w, s->sched_fd, tid, "schedstat", NULL);
	if (is_gone(rc))
		return VT_E_GONE;
	if (rc == VT_OK && vt_schedstat_parse(w->buf.data, w->buf.len, &ss, NULL) == VT_OK) {
		c->run_ns = ss.run_ns;
		c->wait_ns = ss.wait_ns;
		c->timeslices = ss.timeslices;
	}
	return VT_OK;
}

/*
 * Whether old's wchan and syscall still hold for a thread that has not run
 * since (VT_TW_CARRY): both asked for were answered then, and they agree
 * with its state (asleep in a wait, or in R with none).  A read that
 * caught the thread between its state and its switch (state S, wchan "0")
 * is read again.
 */
static bool doing_carriable(const struct vt_thread_counts *old, unsigned flags)
{
	bool none_w = old->wchan_rc != VT_OK || !old->wchan[0];
	bool none_s = old->syscall_rc != VT_OK || old->syscall == VT_TW_SYSCALL_RUNNING;

	if (((flags & VT_TW_WCHAN) && old->wchan_rc == VT_TW_UNREAD) ||
	    ((flags & VT_TW_SYSCALL) && old->syscall_rc == VT_TW_UNREAD))
		return false;
	if (old->state == 'R')
		return none_w && none_s;
	return (old->wchan_rc != VT_OK || old->wchan[0]) &&
	       (old->syscall_rc != VT_OK || old->syscall != VT_TW_SYSCALL_RUNNING);
}

/* Keep only the parts of row c that flags asked for (a carried row has old's). */
static void doing_unasked(unsigned flags, struct vt_thread_counts *c)
{
	if (!(flags & VT_TW_WCHAN)) {
		c->wchan[0] = '\0';
		c->wchan_rc = VT_TW_UNREAD;
	}
	if (!(flags & VT_TW_SYSCALL)) {
		c->syscall = VT_TW_SYSCALL_RUNNING;
		c->syscall_rc = VT_TW_UNREAD;
		c->syscall_sp = c->syscall_pc = 0;
		memset(c->syscall_args, 0, sizeof(c->syscall_args));
	}
}

/*
 * wchan and syscall of a thread in state R, not read (VT_TW_CARRY): the
 * kernel shows none for a thread on a CPU or queued for one.  A refused
 * file stays refused; the system call is read until one thread's was, so
 * that a refusal is learnt.  false when they must be read after all.
 */
static bool doing_running(struct vt_thread_watch *w, unsigned flags, struct vt_thread_counts *c)
{
	if ((flags & VT_TW_SYSCALL) && w->syscall_refused == VT_OK && !w->syscall_seen)
		return false;
	c->wchan[0] = '\0';
	c->wchan_rc = (flags & VT_TW_WCHAN) ? w->wchan_access : VT_TW_UNREAD;
	c->syscall = VT_TW_SYSCALL_RUNNING;
	c->syscall_rc = (flags & VT_TW_SYSCALL) ? w->syscall_refused : VT_TW_UNREAD;
	c->syscall_sp = c->syscall_pc = 0;
	memset(c->syscall_args, 0, sizeof(c->syscall_args));
	return true;
}

/* Hold status, wchan or syscall of a VT_TW_CARRY read from the second read in a row that reads it. */
static void hold_again(struct vt_thread_watch *w, struct slot *s, pid_t tid, unsigned file, const char *name,
		       int *fd)
{
	if (s->stat_fd >= 0 && *fd < 0 && (s->read_last & file))
		hold_open(w, tid, name, fd);
}

/* The context switches of thread tid from its status into *c (VT_NA when they do not parse). */
static int read_csw(struct vt_thread_watch *w, struct slot *s, pid_t tid, struct vt_thread_counts *c)
{
	int rc = read_file(w, s->status_fd, tid, "status", NULL);

	if (is_gone(rc))
		return VT_E_GONE;
	if (rc != VT_OK || !parse_csw(w->buf.data, w->buf.len, &c->vcsw, &c->nvcsw))
		c->vcsw = c->nvcsw = VT_NA;
	w->csw_read++;
	return VT_OK;
}

/*
 * The rest of a VT_TW_CARRY read of a thread whose stat and schedstat are
 * in *c: status and what it is doing, read only when they may have changed.
 * read is what was read (enum slot_file), for the fds held next time.
 */
static int carry_rest(struct vt_thread_watch *w, struct slot *s, pid_t tid, const struct vt_thread_counts *old,
		      unsigned flags, struct vt_thread_counts *c, unsigned *read)
{
	bool still = (c->carried & VT_TW_CARRIED_STAT) != 0;
	int rc;

	if (!(flags & VT_TW_CSW)) {
		c->vcsw = c->nvcsw = VT_NA;
	} else if (still && vt_known(old->vcsw)) {
		c->carried |= VT_TW_CARRIED_CSW;    /* no switch without a timeslice or run time */
	} else {
		hold_again(w, s, tid, READ_STATUS, "status", &s->status_fd);
		if ((rc = read_csw(w, s, tid, c)) != VT_OK)
			return rc;
		*read |= READ_STATUS;
	}
	if (!(flags & (VT_TW_WCHAN | VT_TW_SYSCALL)))
		return VT_OK;
	if (still && doing_carriable(old, flags)) {
		c->carried |= old->state == 'R' ? VT_TW_DOING_RUNNING : VT_TW_CARRIED_DOING;
		if (old->state == 'R')
			w->doing_running++;
		else
			w->doing_carried++;
		return VT_OK;
	}
	if (c->state == 'R' && doing_running(w, flags, c)) {
		c->carried |= VT_TW_DOING_RUNNING;
		w->doing_running++;
		return VT_OK;
	}
	if (flags & VT_TW_WCHAN) {
		hold_again(w, s, tid, READ_WCHAN, "wchan", &s->wchan_fd);
		*read |= READ_WCHAN;
	}
	if (flags & VT_TW_SYSCALL) {
		hold_again(w, s, tid, READ_SYSCALL, "syscall", &s->syscall_fd);
		*read |= READ_SYSCALL;
	}
	w->doing_read++;
	return read_doing(w, s, tid, flags, c);
}

/* stat of thread tid into the stat fields of *c. */
static int read_stat(struct vt_thread_watch *w, struct slot *s, pid_t tid, struct vt_thread_counts *c,
		     struct vt_err *err)
{
	struct vt_proc_stat st;
	int rc = read_file(w, s->stat_fd, tid, "stat", err);

	if (rc == VT_OK)
		rc = vt_proc_stat_parse(w->buf.data, w->buf.len, &st, err);
	if (rc != VT_OK)
		return is_gone(rc) ? VT_E_GONE : rc;
	c->tid = tid;
	memcpy(c->comm, st.comm, sizeof(c->comm));
	c->state = st.state;
	c->start_ticks = st.start_ticks;
	c->utime_ticks = st.utime_ticks;
	c->stime_ticks = st.stime_ticks;
	c->processor = st.processor;
	w->stat_read++;
	return VT_OK;
}

/*
 * A VT_TW_CARRY read of thread tid, whose stat and schedstat fds are held
 * since an earlier read (old): schedstat first; the rest as it changed.
 */
static int read_thread_carry(struct vt_thread_watch *w, struct slot *s, pid_t tid,
			     const struct vt_thread_counts *old, unsigned flags, struct vt_thread_counts *c,
			     struct vt_err *err)
{
	struct vt_thread_counts now;
	unsigned read = 0;
	int rc;

	if ((rc = read_schedstat(w, s, tid, &now)) != VT_OK)
		return rc;
	*c = *old;      /* what read_stat does not set */
	c->carried = 0;
	/*
	 * The state is always read: a thread woken since but still queued for
	 * a CPU has not run either, and must show R, not old's S.
	 */
	if ((rc = read_stat(w, s, tid, c, err)) != VT_OK)
		return rc;
	if (vt_known(now.run_ns) && vt_known(now.timeslices) && now.run_ns == old->run_ns &&
	    now.timeslices == old->timeslices && now.wait_ns == old->wait_ns && c->state == old->state) {
		/* not on a CPU since old was read, and in the same state: asleep in the same wait */
		c->carried = VT_TW_CARRIED_STAT;
		w->stat_carried++;
	}
	c->run_ns = now.run_ns;
	c->wait_ns = now.wait_ns;
	c->timeslices = now.timeslices;
	c->is_new = false;
	rc = carry_rest(w, s, tid, old, flags, c, &read);
	doing_unasked(flags, c);
	s->read_last = read;
	return rc;
}

/*
 * Read thread tid into *c, holding its files open when the budget allows.
 * old is its row of the previous read, NULL for a thread new to the watch.
 * VT_OK; VT_E_GONE when it exited (caller closes the slot); another code when
 * its stat cannot be read or parsed (err filled).
 */
static int read_thread(struct vt_thread_watch *w, struct slot *s, pid_t tid,
		       const struct vt_thread_counts *old, unsigned flags, struct vt_thread_counts *c,
		       struct vt_err *err)
{
	/* Decided before any open below: only fds held since an earlier read
	 * prove (ESRCH once it exits) that this is still old's thread. */
	bool sched_only = (flags & VT_TW_SCHEDSTAT_ONLY) && old && s->stat_fd >= 0 && s->sched_fd >= 0;
	bool carry = (flags & VT_TW_CARRY) != 0;
	bool carry_old = carry && old && s->stat_fd >= 0 && s->sched_fd >= 0 && w->schedstat;
	unsigned read = 0;
	int rc;

	/* Hold what the budget allows; a missing stat means the thread is gone. */
	if (s->stat_fd < 0 && hold_open(w, tid, "stat", &s->stat_fd) == VT_E_NOTFOUND)
		return VT_E_GONE;
	if (s->stat_fd >= 0 && s->sched_fd < 0 && w->schedstat)
		hold_open(w, tid, "schedstat", &s->sched_fd);
	if (s->stat_fd >= 0 && s->status_fd < 0 && (flags & VT_TW_CSW) && !carry)
		hold_open(w, tid, "status", &s->status_fd);
	/* held only when asked on consecutive reads (a live view, not a soak's minute) */
	if (s->stat_fd >= 0 && s->wchan_fd < 0 && (flags & w->prev_flags & VT_TW_WCHAN) &&
	    w->wchan_access == VT_OK && !carry)
		hold_open(w, tid, "wchan", &s->wchan_fd);
	if (s->stat_fd >= 0 && s->syscall_fd < 0 && (flags & w->prev_flags & VT_TW_SYSCALL) &&
	    w->syscall_refused == VT_OK && !carry)
		hold_open(w, tid, "syscall", &s->syscall_fd);
	if (s->stat_fd >= 0)
		w->held++;
	else
		w->reopened++;

	if (carry_old)
		return read_thread_carry(w, s, tid, old, flags, c, err);
	if (sched_only) {
		/* the stat fields of its last full read (see Between full reads in the .h) */
		*c = *old;
		if ((rc = read_schedstat(w, s, tid, c)) != VT_OK)
			return rc;
		sched_only = vt_known(c->run_ns);   /* else its stat after all */
	}
	if (!sched_only) {
		if ((rc = read_stat(w, s, tid, c, err)) != VT_OK)
			return rc;
		if ((rc = read_schedstat(w, s, tid, c)) != VT_OK)
			return rc;
	}
	c->is_new = false;
	c->carried = 0;
	if (carry) {
		/* new to the watch, read by path, or no schedstat: everything is read */
		rc = carry_rest(w, s, tid, NULL, flags, c, &read);
		doing_unasked(flags, c);
		s->read_last = read;
		return rc;
	}

	c->vcsw = c->nvcsw = VT_NA;
	if (flags & VT_TW_CSW) {
		rc = read_file(w, s->status_fd, tid, "status", NULL);
		if (is_gone(rc))
			return VT_E_GONE;
		if (rc == VT_OK && !parse_csw(w->buf.data, w->buf.len, &c->vcsw, &c->nvcsw))
			c->vcsw = c->nvcsw = VT_NA;
		w->csw_read++;
	}
	if (flags & (VT_TW_WCHAN | VT_TW_SYSCALL))
		w->doing_read++;
	return read_doing(w, s, tid, flags, c);
}

/* ---- open, list, read ---------------------------------------------------- */

/*
 * VT_E_PERM when this process may not ptrace-read pid_fd's process, which
 * environ needs as wchan does (PTRACE_MODE_READ_FSCREDS); VT_OK otherwise,
 * including when environ is missing (a recorded tree).
 */
static int ptrace_read_access(int pid_fd)
{
	char byte;
	int fd, e;

	fd = openat(pid_fd, "environ", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		return e == EACCES || e == EPERM ? VT_E_PERM : VT_OK;
	}
	e = read(fd, &byte, 1) < 0 ? errno : 0;
	close(fd);
	return e == EACCES || e == EPERM ? VT_E_PERM : VT_OK;
}

int vt_thread_watch_open(const struct vt_procfs *pfs, int pid_fd, pid_t pid,
			 struct vt_thread_watch **out, struct vt_err *err)
{
	struct vt_thread_watch *w;
	struct stat sb;
	int e, rc;

	*out = NULL;
	pthread_once(&nofile_once, nofile_raise);
	w = calloc(1, sizeof(*w));
	if (!w)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory watching threads");
	w->pid = pid;
	w->fd_max = SIZE_MAX;
	w->fd_emfile = SIZE_MAX;
	w->clk_tck = pfs->clk_tck > 0 ? pfs->clk_tck : 100;
	w->live = pfs->live;
	w->buf = (struct vt_buf)VT_BUF_INIT(FILE_MAX);
	w->stat_fd = -1;
	w->task_fd = openat(pid_fd, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (w->task_fd < 0) {
		e = errno;
		rc = vt_err_set(err, vt_code_from_errno(e), e, "cannot open '%s/%d/task': %s",
				pfs->proc_root, (int)pid, strerror(e));
		goto out_free;
	}
	w->stat_fd = openat(pid_fd, "stat", O_RDONLY | O_CLOEXEC);
	if (w->stat_fd < 0) {
		e = errno;
		rc = vt_err_set(err, vt_code_from_errno(e), e, "cannot open '%s/%d/stat': %s",
				pfs->proc_root, (int)pid, strerror(e));
		goto out_close;
	}
	/* Checked once, as htop checks smaps_rollup: CONFIG_SCHED_INFO or not. */
	w->schedstat = fstatat(pid_fd, "schedstat", &sb, 0) == 0;
	w->wchan_access = ptrace_read_access(pid_fd);
	if (vt_buf_reserve(&w->buf, 4096)) {
		rc = vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory watching threads");
		goto out_close;
	}
	*out = w;
	return VT_OK;

out_close:
	if (w->stat_fd >= 0)
		close(w->stat_fd);
	close(w->task_fd);
out_free:
	vt_buf_release(&w->buf);
	free(w);
	return rc;
}

/* Room for n tids in w->tids. */
static int tids_room(struct vt_thread_watch *w, size_t n, struct vt_err *err)
{
	size_t cap = w->tids_cap ? w->tids_cap : 256;
	pid_t *nt;

	if (n <= w->tids_cap)
		return VT_OK;
	while (cap < n)
		cap *= 2;
	nt = realloc(w->tids, cap * sizeof(*nt));
	if (!nt)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory listing threads");
	w->tids = nt;
	w->tids_cap = cap;
	return VT_OK;
}

/* List task/ again through the held fd into w->tids, sorted (base/tidlist.h). */
static int list_tids(struct vt_thread_watch *w, struct vt_err *err)
{
	struct vt_tid_list l = { w->tids, w->ntids, w->tids_cap };
	int rc = vt_tid_list_read(w->task_fd, w->dents, sizeof(w->dents), w->pid, &l, err);

	w->tids = l.tids;
	w->ntids = l.n;
	w->tids_cap = l.cap;
	return rc;
}

/* Room for n rows in both generations and for every current row in exited. */
static int reserve(struct vt_thread_watch *w, size_t n, struct vt_err *err)
{
	void *p;
	size_t cap, want = n > w->n ? n : w->n;

	/* After the merge there are at most n rows: the exited list can always
	 * take every row, also when the process dies before the next merge. */
	if (w->exited_cap < want) {
		p = realloc(w->exited, want * sizeof(*w->exited));
		if (!p)
			goto nomem;
		w->exited = p;
		w->exited_cap = want;
	}
	if (n <= w->cap)
		return VT_OK;
	cap = w->cap ? w->cap : 64;
	while (cap < n)
		cap *= 2;
	if (!(p = realloc(w->rows, cap * sizeof(*w->rows))))
		goto nomem;
	w->rows = p;
	if (!(p = realloc(w->slots, cap * sizeof(*w->slots))))
		goto nomem;
	w->slots = p;
	if (!(p = realloc(w->next_rows, cap * sizeof(*w->next_rows))))
		goto nomem;
	w->next_rows = p;
	if (!(p = realloc(w->next_slots, cap * sizeof(*w->next_slots))))
		goto nomem;
	w->next_slots = p;
	w->cap = cap;
	return VT_OK;
nomem:
	return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory reading %zu threads", n);
}

/* The process is gone: every row goes to the exited list, every fd closes. */
static int process_gone(struct vt_thread_watch *w, struct vt_err *err, const char *why)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		slot_close(w, &w->slots[i]);
	if (w->n)   /* reserve() kept exited_cap >= n */
		memcpy(w->exited, w->rows, w->n * sizeof(*w->rows));
	w->n_exited = w->n;
	w->n = 0;
	return vt_err_set(err, VT_E_GONE, ESRCH, "process %d %s", (int)w->pid, why);
}

/* Lower the fds held to the caller's cap, from the highest tid down. */
static void shed_fds(struct vt_thread_watch *w)
{
	size_t i = w->n;

	while (i > 0 && w->thread_fds > w->fd_max)
		slot_close(w, &w->slots[--i]);
}

static void exit_row(struct vt_thread_watch *w, const struct vt_thread_counts *c)
{
	w->exited[w->n_exited++] = *c;
}

/* Keep the first failure of a read that goes on (partial). */
static void note_bad(int *bad, struct vt_err *err, int rc, pid_t tid, const struct vt_err *terr)
{
	if (*bad != VT_OK)
		return;
	*bad = vt_err_set(err, rc, terr->sys_errno, "thread %d of the process: %s", (int)tid,
			  terr->msg);
}

/* What one merge works on: rows and slots in, rows and slots out. */
struct merge {
	const struct vt_thread_counts *src;
	struct slot *src_slots;
	size_t n_src;
	struct vt_thread_counts *dst;
	struct slot *dst_slots;
	unsigned flags;
	bool add_only;     /* keep src rows as they are; only read tids new to them */
	bool is_new;       /* the is_new of a tid new to src */
	bool lost;         /* out: a src thread exited or was replaced */
	int bad;           /* out: first failure of one thread (partial read) */
};

/*
 * Merge the rows of g->src (sorted, with their slots) with the listing
 * w->tids (sorted) into g->dst: a src thread not listed exits, a listed one
 * is read again (unless add_only), a listed tid new to src is read and
 * added.  Slots move with their rows.  Returns the number of dst rows;
 * dst has room for n_src + ntids.
 */
static size_t merge(struct vt_thread_watch *w, struct merge *g, struct vt_err *err)
{
	struct vt_err terr;
	size_t i = 0, j = 0, m = 0;
	bool was_held;
	int rc;

	while (i < g->n_src || j < w->ntids) {
		const struct vt_thread_counts *old = i < g->n_src ? &g->src[i] : NULL;
		struct vt_thread_counts *c = &g->dst[m];
		struct slot *s = &g->dst_slots[m];

		if (old && (j == w->ntids || old->tid <= w->tids[j]) && g->add_only) {
			/* second pass: rows read this tick stay as they are */
			*c = *old;
			*s = g->src_slots[i];
			m++;
			j += j < w->ntids && old->tid == w->tids[j];
			i++;
			continue;
		}
		if (old && (j == w->ntids || old->tid < w->tids[j])) {
			/* not listed any more: exited */
			slot_close(w, &g->src_slots[i]);
			exit_row(w, old);
			g->lost = true;
			i++;
			continue;
		}
		if (old && old->tid == w->tids[j]) {
			*s = g->src_slots[i];
			rc = read_thread(w, s, old->tid, old, g->flags, c, &terr);
			if (rc == VT_OK) {
				if (c->start_ticks != old->start_ticks) {
					/* read by path: another thread under the same tid */
					exit_row(w, old);
					g->lost = true;
					c->is_new = true;
				}
				m++;
				i++;
				j++;
				continue;
			}
			if (rc != VT_E_GONE) {
				/* partial: repeat what we had */
				note_bad(&g->bad, err, rc, old->tid, &terr);
				*c = *old;
				c->is_new = false;
				m++;
				i++;
				j++;
				continue;
			}
			/* exited since the listing, or (held fds) its tid is reused:
			 * with held fds, see below whether a new thread has it now */
			exit_row(w, old);
			g->lost = true;
			was_held = s->stat_fd >= 0;
			slot_close(w, s);
			i++;
			if (!was_held) {
				j++;
				continue;
			}
			/* fall through to the new-thread case for tids[j] */
		}
		/* a tid we did not have */
		*s = SLOT_NONE;
		rc = read_thread(w, s, w->tids[j], NULL, g->flags, c, &terr);
		if (rc != VT_OK) {
			slot_close(w, s);
			if (rc != VT_E_GONE)
				note_bad(&g->bad, err, rc, w->tids[j], &terr);
			j++;
			continue;
		}
		c->is_new = g->is_new;
		j++;
		m++;
	}
	return m;
}

/* Make the merged generation the current one. */
static void swap_generations(struct vt_thread_watch *w, size_t m)
{
	struct vt_thread_counts *t = w->rows;
	struct slot *ts = w->slots;

	w->rows = w->next_rows;
	w->next_rows = t;
	w->slots = w->next_slots;
	w->next_slots = ts;
	w->n = m;
}

/* Listed tids that are not rows: what a second pass would add. */
static size_t count_unknown(const struct vt_thread_watch *w)
{
	size_t i = 0, j, k = 0;

	for (j = 0; j < w->ntids; j++) {
		while (i < w->n && w->rows[i].tid < w->tids[j])
			i++;
		k += i == w->n || w->rows[i].tid != w->tids[j];
	}
	return k;
}

int vt_thread_watch_read(struct vt_thread_watch *w, unsigned flags, struct vt_err *err)
{
	struct vt_thread_watch_proc proc;
	struct vt_proc_stat st;
	struct merge g;
	uint64_t now_ns;
	bool skip_list;
	size_t i;
	int rc;

	now_ns = vt_mono_ns();
	rc = vt_pread_fd(w->stat_fd, "stat", &w->buf, err);
	if (rc == VT_E_GONE)
		return process_gone(w, err, "exited");
	if (rc == VT_OK)
		rc = vt_proc_stat_parse(w->buf.data, w->buf.len, &st, err);
	if (rc != VT_OK)
		return rc;
	if ((st.state == 'Z' || st.state == 'X') && st.num_threads <= 1)
		return process_gone(w, err, "exited (it is a zombie now)");
	memset(&proc, 0, sizeof(proc));
	proc.pid = w->pid;
	memcpy(proc.comm, st.comm, sizeof(proc.comm));
	proc.state = st.state;
	proc.utime_ticks = st.utime_ticks;
	proc.stime_ticks = st.stime_ticks;
	proc.start_ticks = st.start_ticks;
	proc.num_threads = st.num_threads;
	proc.mono_ns = now_ns;
	proc.clk_tck = w->clk_tck;

	/*
	 * The listing is a fifth of a tick on a cold cache.  On live /proc it can
	 * be skipped when the kernel's thread count equals our rows: each held
	 * fd then proves its thread is still there (ESRCH otherwise), and the
	 * count says no other came.  If one left, task/ is listed after all.
	 */
	skip_list = w->live && w->reads > 0 && !w->relist && st.num_threads == (int64_t)w->n;
	if (skip_list) {
		rc = tids_room(w, w->n, err);
		if (rc != VT_OK)
			return rc;
		for (i = 0; i < w->n; i++)
			w->tids[i] = w->rows[i].tid;
		w->ntids = w->n;
	} else {
		rc = list_tids(w, err);
		if (rc == VT_E_GONE || (rc == VT_OK && w->ntids == 0))
			return process_gone(w, err, "exited while its threads were listed");
		if (rc != VT_OK)
			return rc;
	}
	rc = reserve(w, w->ntids, err);
	if (rc != VT_OK)
		return rc;

	/* From here on the read completes; nothing fails but single threads. */
	shed_fds(w);
	w->n_exited = 0;
	w->held = w->reopened = 0;
	w->stat_read = w->stat_carried = w->csw_read = 0;
	w->doing_read = w->doing_carried = w->doing_running = 0;
	w->relist = false;
	g = (struct merge){ .src = w->rows, .src_slots = w->slots, .n_src = w->n,
			    .dst = w->next_rows, .dst_slots = w->next_slots, .flags = flags,
			    .is_new = w->reads > 0 };
	swap_generations(w, merge(w, &g, err));
	w->lists += !skip_list;

	if (skip_list && g.lost) {
		/* a thread left while the count stayed: another may have come */
		if (list_tids(w, NULL) == VT_OK &&
		    reserve(w, w->n + count_unknown(w), NULL) == VT_OK) {
			g.src = w->rows;
			g.src_slots = w->slots;
			g.n_src = w->n;
			g.dst = w->next_rows;
			g.dst_slots = w->next_slots;
			g.add_only = true;
			swap_generations(w, merge(w, &g, err));
			w->lists++;
		} else {
			w->relist = true;
		}
	}
	w->proc = proc;
	w->reads++;
	w->prev_flags = flags;
	return g.bad;
}

/* ---- accessors and close ------------------------------------------------- */

const struct vt_thread_counts *vt_thread_watch_rows(const struct vt_thread_watch *w, size_t *n)
{
	*n = w->n;
	return w->rows;
}

size_t vt_thread_watch_count(const struct vt_thread_watch *w)
{
	return w->n;
}

const struct vt_thread_counts *vt_thread_watch_exited(const struct vt_thread_watch *w, size_t *n)
{
	*n = w->n_exited;
	return w->exited;
}

const struct vt_thread_watch_proc *vt_thread_watch_process(const struct vt_thread_watch *w)
{
	return &w->proc;
}

void vt_thread_watch_stats(const struct vt_thread_watch *w, struct vt_thread_watch_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->reads = w->reads;
	out->lists = w->lists;
	out->held = w->held;
	out->reopened = w->reopened;
	out->fds = w->thread_fds + 2;
	out->fd_max = w->fd_max;
	out->schedstat = w->schedstat;
	out->stat_read = w->stat_read;
	out->stat_carried = w->stat_carried;
	out->csw_read = w->csw_read;
	out->doing_read = w->doing_read;
	out->doing_carried = w->doing_carried;
	out->doing_running = w->doing_running;
}

void vt_thread_watch_set_fd_max(struct vt_thread_watch *w, size_t fd_max)
{
	w->fd_max = fd_max;
}

void vt_thread_watch_close(struct vt_thread_watch *w)
{
	size_t i;

	if (!w)
		return;
	for (i = 0; i < w->n; i++)
		slot_close(w, &w->slots[i]);
	close(w->stat_fd);
	close(w->task_fd);
	free(w->rows);
	free(w->slots);
	free(w->next_rows);
	free(w->next_slots);
	free(w->exited);
	free(w->tids);
	vt_buf_release(&w->buf);
	free(w);
}

/*
 * thread_watch.h — cumulative counters of every thread of one process, read
 * once per tick for hours, through files held open.
 *
 * A watch keeps, for one process, the fd of /proc/PID/task, of /proc/PID/stat
 * and, per thread, of task/TID/stat and task/TID/schedstat (plus
 * task/TID/status once context switches are asked for).  Each read lists
 * task/ again through the held directory fd (lseek to 0, getdents64), opens
 * the files of new threads, closes those of gone ones and re-reads the rest
 * with pread at offset 0, where a /proc seq_file regenerates its text.  It
 * only reads; rates come from two reads (analyze/rates.h does that arithmetic).
 *
 * Listing.  On live /proc a read skips the listing when the process's thread
 * count (stat field 20) equals the rows of the previous read: every held fd
 * that still reads proves its thread is there, and the count says no other
 * came.  If one of them has exited, task/ is listed in the same read and the
 * threads that came meanwhile are added.  On a cold cache the listing is a
 * fifth of a read; a process without thread churn never pays it.
 *
 * Cost per thread and read, on a 1,000-thread process read once a second
 * (bench/threads, cold caches): 4.6-5 µs for stat + schedstat, 8-9 µs with
 * VT_TW_CSW (about 5 µs on average with it every 10th read), against about
 * 20 µs for a reader that opens every file every time (what `vitals threads`
 * did before it used a watch).  Back to back (hot caches): 2.5 and 6 µs.
 *
 * wchan and syscall (VT_TW_WCHAN, VT_TW_SYSCALL) are read only when asked:
 * what a thread is doing is sampled often over a short interval, not every
 * tick of a soak.  Their fds are held only when two reads in a row ask for
 * them (a live view); asked now and then (a soak's minute), they are read
 * by path and cost no fd.  The kernel prints "0" for a wchan the reader may not see
 * (no ptrace read access), so the watch checks that access once at open,
 * on the process's environ (the same check), and marks wchan refused rather
 * than report every thread as running.  A refused or missing syscall file
 * is not asked again for the other threads.
 *
 * Context switches live only in task/TID/status, the most expensive of the
 * three files (~1.4 KB of text, most of it about memory and CPU masks).
 * They are read only by reads that pass VT_TW_CSW; a caller on a tight
 * budget passes it every Nth tick.  Rows of a read without it carry VT_NA.
 *
 * Between full reads.  A caller that needs only run_ns and wait_ns between
 * its full reads (a soak writes live threads at its threads cadence, but an
 * exited thread's counters every tick) passes VT_TW_SCHEDSTAT_ONLY: a
 * thread that was a row of the previous read and whose stat and schedstat
 * fds are held reads schedstat alone, half the files.  Its row carries the
 * stat fields of its last full read (comm, state, start_ticks, utime_ticks,
 * stime_ticks, processor), which may be stale; run_ns and wait_ns are of
 * this read.  The held schedstat fd is what keeps the row that thread's
 * (see Identity).  New threads, threads read by path (their identity needs
 * start_ticks), those whose schedstat does not read, and every thread on a
 * kernel without schedstat read stat as usual.  The process stat is read
 * whatever the flag.
 *
 * Identity.  A held fd stays bound to the thread it was opened for: once that
 * thread exits, pread fails with ESRCH, even if a new thread got the same
 * tid.  A thread read by path (see fd budget below, and recorded trees) is
 * compared by start time instead: a different start_ticks under a known tid
 * is a new thread.  Either way the old thread goes to the exited list and the
 * new one is a row with is_new set.
 *
 * Fd budget.  Each held thread costs 2 fds (3 with status, one more for each
 * of wchan and syscall when they are held).  The first open in
 * the process raises the RLIMIT_NOFILE soft limit to the hard limit (once; a
 * program that then execs another one should call
 * vt_thread_watch_nofile_restore() in the child, and must not use select()).
 * All watches together hold at most that limit minus VT_TW_FD_RESERVE fds,
 * and each at most its own cap (vt_thread_watch_set_fd_max).  Threads beyond
 * the budget, in tid order, are read by open-read-close of task/TID/... (about
 * 1.6x the cost); they get held fds as soon as others exit.  EMFILE or ENFILE
 * while opening also falls back to open-read-close.
 *
 * Reading what changed (VT_TW_CARRY).  A live view samples every thread
 * many times a second, and most threads of a large process sleep through
 * all of it.  With VT_TW_CARRY a thread of the previous read whose stat
 * and schedstat fds are held reads schedstat and stat; when its run time,
 * its count of timeslices and its run-queue wait are as they were, it has
 * not been on a CPU since (every switch in counts a timeslice, every
 * switch out adds run time), and when its state is also the same it is
 * asleep in the same wait: its context switches, wchan and system call
 * are carried from the previous row, marked carried, not read.  That is
 * exact (none of them moves while the thread is off a CPU).  The state is
 * read every time, because a thread woken since but still queued for a CPU
 * has not run either and is R to the kernel.  A thread that did run, or
 * changed state, reads status when VT_TW_CSW asks, and wchan and syscall
 * only when it is not in state R (for a thread on a CPU or queued for one
 * the kernel shows neither: the row says so without asking; the system
 * call only once one thread's was read, so that a refusal is still seen).
 * vt_thread_watch_stats
 * counts what the last read read and carried.  status, wchan and syscall fds are held from the
 * second read in a row that reads the file for that thread.
 *
 * One watch is used by one thread at a time; several watches may live in
 * different threads (the fd accounting between them is atomic).
 */
#ifndef VT_CPU_THREAD_WATCH_H
#define VT_CPU_THREAD_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/error.h"
#include "proc/procfs.h"
#include "proc/wchan_syscall.h"

/* Fds left to the rest of the program when sizing the budget of all watches. */
#define VT_TW_FD_RESERVE 256

enum vt_thread_watch_flags {
	VT_TW_CSW = 1 << 0,     /* also read task/TID/status for vcsw and nvcsw */
	VT_TW_WCHAN = 1 << 1,   /* also read task/TID/wchan */
	VT_TW_SYSCALL = 1 << 2, /* also read task/TID/syscall */
	VT_TW_SCHEDSTAT_ONLY = 1 << 3,   /* known threads: schedstat only (see Between full reads) */
	VT_TW_CARRY = 1 << 4,   /* a thread not run since the previous read, in the same state, keeps its waits */
};

/* vt_thread_counts.carried: which parts of a row an earlier read gave. */
enum vt_thread_carried {
	VT_TW_CARRIED_STAT = 1 << 0,     /* not run since, same state (stat is read all the same) */
	VT_TW_CARRIED_CSW = 1 << 1,      /* vcsw, nvcsw: not switched since status was read */
	VT_TW_CARRIED_DOING = 1 << 2,    /* wchan and syscall: asleep in the same wait */
	VT_TW_DOING_RUNNING = 1 << 3,    /* wchan and syscall not read: state R, the kernel shows none */
};

/* vt_thread_counts.syscall besides a system call number (proc/wchan_syscall.h). */
#define VT_TW_SYSCALL_NONE VT_SYSCALL_NONE
#define VT_TW_SYSCALL_RUNNING VT_SYSCALL_RUNNING
/* vt_thread_counts.wchan_rc and syscall_rc when the flag was not passed. */
#define VT_TW_UNREAD (-1)

/* One thread at one read.  Counters are cumulative since the thread started. */
struct vt_thread_counts {
	pid_t tid;
	char comm[64];          /* task stat (2) */
	char state;             /* task stat (3) */
	uint64_t start_ticks;   /* task stat (22): clock ticks after boot; identifies the thread */
	uint64_t utime_ticks;   /* task stat (14) */
	uint64_t stime_ticks;   /* task stat (15) */
	uint64_t run_ns;        /* task schedstat (1): on a CPU, VT_NA if unreadable */
	uint64_t wait_ns;       /* task schedstat (2): runnable, waiting for a CPU, VT_NA if unreadable */
	uint64_t timeslices;    /* task schedstat (3): times it was switched in, VT_NA if unreadable */
	uint64_t vcsw;          /* task status voluntary_ctxt_switches, VT_NA if not read this tick */
	uint64_t nvcsw;         /* task status nonvoluntary_ctxt_switches, VT_NA if not read this tick */
	int64_t processor;      /* task stat (39): CPU last run on, -1 unknown */
	char wchan[48];         /* task wchan: kernel function it sleeps in, "" on a CPU or unknown */
	long syscall;           /* task syscall (1): number in progress, or VT_TW_SYSCALL_* */
	uint64_t syscall_args[VT_SYSCALL_ARGS];   /* its arguments, 0 when none */
	uint64_t syscall_sp;    /* task syscall: user stack pointer and program counter of a */
	uint64_t syscall_pc;    /* blocked thread (where its stack is unwound from), 0 none */
	int wchan_rc;           /* VT_OK read; VT_E_PERM refused (ptrace read access needed);
	                         * VT_E_NOTFOUND no such file; VT_TW_UNREAD not asked for */
	int syscall_rc;         /* the same for syscall (ptrace attach access needed) */
	bool is_new;            /* appeared since the previous read; false in the first read */
	unsigned carried;       /* enum vt_thread_carried: the parts an earlier read gave (VT_TW_CARRY) */
};

/* The process as a whole, from the held /proc/PID/stat, at the same read. */
struct vt_thread_watch_proc {
	pid_t pid;
	char comm[64];          /* stat (2) */
	char state;             /* stat (3) of the main thread */
	uint64_t utime_ticks;   /* stat (14): all threads, exited ones included */
	uint64_t stime_ticks;   /* stat (15) */
	uint64_t start_ticks;   /* stat (22) */
	int64_t num_threads;    /* stat (20) */
	uint64_t mono_ns;       /* CLOCK_MONOTONIC when the read began */
	long clk_tck;           /* ticks per second of the *_ticks fields */
};

/* What the last read cost in files, for tests, benchmarks and self-accounting. */
struct vt_thread_watch_stats {
	uint64_t reads;         /* completed reads so far */
	uint64_t lists;         /* listings of task/ so far (see "Listing" above) */
	size_t held;            /* threads of the last read read through held fds */
	size_t reopened;        /* threads of the last read read by open-read-close */
	size_t fds;             /* fds this watch holds now, directory and process stat included */
	size_t fd_max;          /* this watch's own cap on held thread fds (SIZE_MAX: none) */
	bool schedstat;         /* the kernel has task/TID/schedstat (CONFIG_SCHED_INFO) */
	/* What the last read read and carried, thread by thread (rows of the last read). */
	size_t stat_read;       /* rows whose stat was read */
	size_t stat_carried;    /* of those, rows not run since the previous read, in the same state (VT_TW_CARRY) */
	size_t csw_read;        /* rows whose status was read */
	size_t doing_read;      /* rows whose wchan or syscall was read */
	size_t doing_carried;   /* rows whose wchan and syscall were carried (asleep, not run since) */
	size_t doing_running;   /* rows in state R: wchan and syscall not read (the kernel shows none) */
};

struct vt_thread_watch;   /* opaque; owns its fds and arrays */

/*
 * Start watching process pid, whose directory fd (vt_pid_open) is pid_fd.
 * Opens pid_fd/task and pid_fd/stat; pid_fd is not kept and stays the
 * caller's.  Reads nothing per thread yet: the first vt_thread_watch_read
 * does, and opens the thread files.  Works the same on a recorded tree
 * (pfs opened on tests/fixtures/...).
 * Errors: VT_E_GONE (the process exited), VT_E_PERM, VT_E_NOMEM, VT_E_IO.
 * On success the caller owns *out and ends it with vt_thread_watch_close.
 */
int vt_thread_watch_open(const struct vt_procfs *pfs, int pid_fd, pid_t pid,
			 struct vt_thread_watch **out, struct vt_err *err);

/*
 * One tick: read the process stat, list the threads (see Listing above),
 * read every thread.
 * flags: VT_TW_CSW to read context switches too, VT_TW_WCHAN and
 * VT_TW_SYSCALL what threads are doing, VT_TW_SCHEDSTAT_ONLY to skip the
 * stat of known threads (Between full reads above).
 *
 * Afterwards the rows (vt_thread_watch_rows) hold every thread that could be
 * read, in tid order, and the exited list (vt_thread_watch_exited) every
 * thread of the previous read's rows that is no longer there, with the
 * counters of its last complete read: nothing but its last tick is lost.  A
 * thread that exits between the listing and its read is such an exit (or,
 * if it was new, is not seen at all).
 *
 * Returns VT_OK, or:
 *   VT_E_GONE   the process exited (stat unreadable, task/ gone, or a zombie
 *               with no thread left): every row of the previous read moves to
 *               the exited list, with its last counters, and rows are empty
 *   VT_E_NOMEM  out of memory before anything changed; rows are as they were
 *   VT_E_PARSE, VT_E_IO, VT_E_PERM on the process stat: nothing changed;
 *               on one thread's stat: the read is partial: it completes, that
 *               thread's row repeats its previous counters (or it is left out
 *               if it is new), and err names the first such thread
 * Rows and the exited list stay valid until the next read or close.
 */
int vt_thread_watch_read(struct vt_thread_watch *w, unsigned flags, struct vt_err *err);

/* Threads of the last read, sorted by tid, *n of them (0 before the first read). */
const struct vt_thread_counts *vt_thread_watch_rows(const struct vt_thread_watch *w, size_t *n);
size_t vt_thread_watch_count(const struct vt_thread_watch *w);

/* Threads that left between the previous read and the last one, sorted by tid. */
const struct vt_thread_counts *vt_thread_watch_exited(const struct vt_thread_watch *w, size_t *n);

/* The process stat of the last read (zeroed before the first). */
const struct vt_thread_watch_proc *vt_thread_watch_process(const struct vt_thread_watch *w);

void vt_thread_watch_stats(const struct vt_thread_watch *w, struct vt_thread_watch_stats *out);

/*
 * Cap the fds this watch holds for threads (the directory and process stat
 * fds are not counted); threads beyond it are read by open-read-close.
 * Takes effect at the next read, which closes fds above the cap.  SIZE_MAX
 * (the default) leaves only the process-wide budget.
 */
void vt_thread_watch_set_fd_max(struct vt_thread_watch *w, size_t fd_max);

/* Close every fd and free everything; NULL is a no-op. */
void vt_thread_watch_close(struct vt_thread_watch *w);

/*
 * Put the RLIMIT_NOFILE soft limit back to what it was before the first
 * watch raised it.  For a forked child before exec (only setrlimit is called);
 * a no-op if nothing was raised.
 */
void vt_thread_watch_nofile_restore(void);

#endif

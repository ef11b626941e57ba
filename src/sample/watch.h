/*
 * watch.h — one held-open reader of one process, for the commands that read
 * it again and again: soak (a tick), serve (a scrape), threads (a sample).
 *
 * It holds what a reader keeps between reads, so that each part is read
 * once, in one way, with one policy, on its own schedule:
 *   the process   its /proc/PID directory, opened once: once it exits every
 *                 read through it fails, even if the pid is reused;
 *   status        held open, read again with pread;
 *   maps          the memo of its last read of maps (sample/sample.h), so
 *                 that a light sample reads them again only when they can
 *                 have changed;
 *   threads       the thread watch (proc/thread_watch.h), opened at the
 *                 first ask; the caller reads it with the flags its cadence
 *                 wants;
 *   sockets       which of its fds are sockets, walked at the first ask and
 *                 then every sockets_every_s (a server opens its listeners
 *                 at start); the accept queues of those that listen, read
 *                 at every ask;
 *   allocator     its figures (sample/heap.h) at most every heap_every_s,
 *                 only for an allocator vitals reads, and never again once
 *                 a refusal lasts (vt_heap_refusal_lasts); a refusal that is
 *                 only "not right now" is tried at the next due time;
 *   free memory   its free bytes on resident pages (sample/free_walk.h), a
 *                 walk of glibc's arenas at most every free_every_s and
 *                 spaced further so that the walks' CPU stays within
 *                 free_budget of a core; never again once a refusal lasts
 *                 (not glibc, memory not readable).
 *
 * One watch per process: a restarted process is another watch.  Errors are
 * returned, never printed; the caller decides what a missing part means.
 */
#ifndef VT_SAMPLE_WATCH_H
#define VT_SAMPLE_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "alloc/detect.h"
#include "base/error.h"
#include "proc/listen.h"
#include "proc/procfs.h"
#include "proc/stat.h"
#include "proc/status.h"
#include "proc/thread_watch.h"
#include "sample/free_walk.h"
#include "sample/heap.h"

struct vt_watch_opts {
	double sockets_every_s;       /* walk the fds for sockets again this often; 0: 10 s */
	double heap_every_s;          /* allocator figures at most this often; 0: never */
	bool heap_ptrace;             /* the allocator may be read by ptrace, not only by its agent */
	double free_every_s;          /* the free walk at most this often; 0: never */
	double free_budget;           /* the share of a core its walks may use; 0: 1% */
};

struct vt_watch;

/*
 * Open the process pid and check it is one vitals reads (vt_target_check:
 * no kernel thread, no zombie).  *stat and *status, when not NULL, get what
 * the check read.  Errors: those of vt_pid_open and vt_target_check.  On
 * success close *out with vt_watch_close.
 */
int vt_watch_open(const struct vt_procfs *pfs, pid_t pid, const struct vt_watch_opts *opts,
		  struct vt_watch **out, struct vt_proc_stat *stat, struct vt_proc_status *status,
		  struct vt_err *err);
void vt_watch_close(struct vt_watch *w);

pid_t vt_watch_pid(const struct vt_watch *w);
const struct vt_procfs *vt_watch_procfs(const struct vt_watch *w);
/* Its /proc/PID directory, for reads of parts the watch does not keep; owned by the watch. */
int vt_watch_dirfd(const struct vt_watch *w);

/* Its status, read now.  Errors: VT_E_GONE once it exited; those of the parser. */
int vt_watch_status(struct vt_watch *w, struct vt_proc_status *st, struct vt_err *err);

/*
 * Its maps at their last read, for a light vt_sample_take_from (struct
 * vt_maps_memo in sample/sample.h); owned by the watch, empty at first.
 */
struct vt_maps_memo;
struct vt_maps_memo *vt_watch_maps_memo(struct vt_watch *w);

/*
 * Its thread watch, opened at the first ask (errors: vt_thread_watch_open's,
 * asked again next time); owned by the watch.
 */
int vt_watch_threads(struct vt_watch *w, struct vt_thread_watch **tw, struct vt_err *err);

/*
 * Its open fds, counted now (fd/ needs ptrace read access: VT_E_PERM
 * without); the socket walk too when it is due.
 */
int vt_watch_fds(struct vt_watch *w, double now, size_t *nfds, struct vt_err *err);

/*
 * The listening TCP sockets among its sockets and their accept queues,
 * read now, into out[cap] as vt_listen_read does; the socket walk first
 * when it is due.  A process that listens on nothing gives *n 0.  Errors:
 * those of the walk while none succeeded yet, and of vt_listen_read.
 */
int vt_watch_listen(struct vt_watch *w, double now, struct vt_listen_sock *out, size_t cap, size_t *n,
		    size_t *dropped, const char **via, struct vt_err *err);

/*
 * The allocator's figures when they are due: kind is the allocator found
 * so far (VT_ALLOC_UNKNOWN: not yet, nothing is asked).  *taken false: not
 * due, or off for good (vt_watch_heap_off).  *taken true: *h is filled,
 * release it with vt_heap_release.  An error is a try that failed; after a
 * lasting refusal vt_watch_heap_off is true and nothing more is asked.
 */
int vt_watch_heap(struct vt_watch *w, double now, enum vt_alloc_kind kind, struct vt_heap_sample *h,
		  bool *taken, struct vt_err *err);
bool vt_watch_heap_off(const struct vt_watch *w);

/*
 * The free walk when it is due (struct vt_free_cadence): alloc is the
 * allocator found so far (VT_ALLOC_UNKNOWN: not yet, nothing is walked).
 * *taken false: not due, or off for good (vt_watch_free_off).  *taken true:
 * a walk was made and *f holds its figures (NAN when it failed; the error
 * says why, and a walk that failed costs its CPU too).  A lasting refusal
 * (vt_free_walk_refusal_lasts) turns it off.
 */
int vt_watch_free(struct vt_watch *w, double now, const struct vt_alloc_info *alloc, struct vt_free_figures *f,
		  bool *taken, struct vt_err *err);
bool vt_watch_free_off(const struct vt_watch *w);
/* Its walks so far: how many, their CPU, the gap the budget set. */
const struct vt_free_cadence *vt_watch_free_cadence(const struct vt_watch *w);

#endif

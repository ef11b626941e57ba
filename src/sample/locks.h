/*
 * locks.h — which locks a process's threads wait on, what each lock is,
 * who holds it and where its waiters take it: `vitals locks`, and the lock
 * named in `vitals threads`'s convoy verdict.
 *
 * A thread blocked on a lock sleeps in futex(2), and /proc/TID/syscall
 * gives the futex word's address (argument 0), the operation (argument 1)
 * and the thread's user stack pointer and program counter (the thread
 * sample has them: sample/threads.h).  From those, for each waiting thread
 * of a sample, without stopping anything:
 *   its kind      from the waiter's user stack (unwound from a copy read
 *                 with process_vm_readv, elf/unwind.h): the glibc function
 *                 it waits in, pthread_mutex_lock (a mutex),
 *                 pthread_rwlock_*lock, __lll_lock_wait_private alone (a
 *                 lock inside glibc), pthread_cond_*wait, sem_*wait,
 *                 pthread_barrier_wait, pthread_join; a stack through
 *                 glibc that names none of them (sem_wait tail-calls its
 *                 unnamed slow path) is a semaphore when the word reads as
 *                 glibc's sem_t; otherwise a raw futex (the program's own
 *                 syscall(SYS_futex), Rust's std Mutex, or a stack that
 *                 could not be read)
 *   what it is    the address against the arena ring of glibc malloc
 *                 (alloc/glibc.h: main_arena found without symbols; an
 *                 arena's mutex is its first field), the object symbols of
 *                 the module it lies in (elf/unwind.h), the process's
 *                 mappings (shared with other processes, a thread's stack,
 *                 the heap or anonymous memory)
 *   its holder    a mutex's __owner field, read from its memory (glibc's
 *                 layout: docs/locks.md); a rwlock's writer or its count
 *                 of readers; glibc's internal locks and the other kinds
 *                 record no holder, which is said
 *   the call site the first frame of the waiter's stack outside glibc:
 *                 where the program takes the lock
 * Lock rows are counted over samples: waiters per sample, the threads that
 * waited and held it, the call sites.  A waiter's stack is unwound again
 * only when its wait changed (futex address, stack pointer or program
 * counter), so a parked thread costs one unwind; at most
 * VT_LOCKS_UNWINDS_PER_SAMPLE unwinds are made per sample.
 *
 * Reads only.  Memory the process does not let vitals read (another user's
 * process: process_vm_readv needs ptrace access) leaves the kind and the
 * holder unknown and says why; it never guesses.
 */
#ifndef VT_SAMPLE_LOCKS_H
#define VT_SAMPLE_LOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/error.h"
#include "proc/procfs.h"
#include "sample/threads.h"

enum vt_lock_kind {
	VT_LOCK_RAW = 0,      /* a futex no glibc primitive known here waits on */
	VT_LOCK_MUTEX,        /* pthread_mutex_lock, _timedlock, _clocklock */
	VT_LOCK_RWLOCK,       /* pthread_rwlock_rdlock, _wrlock (timed, clock) */
	VT_LOCK_LIBC,         /* a lock inside glibc (malloc's arenas, stdio, the loader) */
	VT_LOCK_CONDVAR,      /* pthread_cond_wait, _timedwait, _clockwait: waits for a signal */
	VT_LOCK_SEMAPHORE,    /* sem_wait, sem_timedwait, sem_clockwait */
	VT_LOCK_BARRIER,      /* pthread_barrier_wait */
	VT_LOCK_JOIN,         /* pthread_join: waits for a thread to end */
	VT_LOCK_KINDS
};

/* "mutex", "rwlock", "glibc lock", "condition variable", ..., "raw futex". */
const char *vt_lock_kind_name(enum vt_lock_kind k);
/* Whether waiting on this kind is contention (a lock held by another thread), not
 * waiting for work or for an event: mutex, rwlock, glibc's own locks. */
bool vt_lock_kind_contended(enum vt_lock_kind k);

enum vt_lock_place {
	VT_LOCK_AT_UNKNOWN = 0,   /* not mapped when looked at (freed, or the process exited) */
	VT_LOCK_AT_ARENA,         /* the mutex of glibc malloc arena arena (of narenas) */
	VT_LOCK_AT_SYMBOL,        /* symbol+symbol_off, an object of module */
	VT_LOCK_AT_STACK,         /* on thread stack_tid's stack */
	VT_LOCK_AT_SHARED,        /* a shared mapping (mapping): other processes may wait on it */
	VT_LOCK_AT_FILE,          /* a file's private mapping (mapping), no symbol covers it */
	VT_LOCK_AT_HEAP,          /* the heap or anonymous memory (mapping: "[heap]" or "") */
};

/* A thread counted against a lock: how many samples, and in how many of them it ran. */
struct vt_lock_thread {
	pid_t tid;
	char comm[64];
	unsigned n;               /* samples */
	unsigned running;         /* of them in state R (a holder on a CPU, or waiting for one) */
};

/* Where waiters take a lock: the first frame outside glibc. */
struct vt_lock_site {
	char where[256];          /* "turn+0x2f (app) app.c:102 < worker_main": the frame and its
	                           * caller's function */
	unsigned n;               /* waiter-samples */
};

#define VT_LOCK_THREADS_MAX 32
#define VT_LOCK_SITES_MAX 8
#define VT_LOCKS_MAX 256                 /* lock rows kept; waits on more are counted apart */
#define VT_LOCKS_UNWINDS_PER_SAMPLE 64

struct vt_lock {
	uint64_t addr;            /* the lock's address (a rwlock's start, a condvar's signal word) */
	enum vt_lock_kind kind;   /* the kind most waiter stacks said */
	unsigned kind_votes[VT_LOCK_KINDS];  /* waiter-samples whose stack said each kind */
	unsigned layout_votes;    /* of them, kinds read from the lock's memory: a stack through
	                           * glibc functions with no public name (sem_wait's slow path) */
	enum vt_lock_place place;
	unsigned arena, narenas;  /* VT_LOCK_AT_ARENA: arena (0 = main_arena) of narenas */
	char symbol[128];         /* VT_LOCK_AT_SYMBOL: the object, demangled */
	uint64_t symbol_off;
	char module[64];          /* basename of the module the symbol is in */
	pid_t stack_tid;          /* VT_LOCK_AT_STACK */
	char mapping[128];        /* SHARED, FILE, HEAP: the mapping's path ("" anonymous) */
	/* VT_LOCK_AT_HEAP: the malloc chunk it lies in (vt_lock_probe_find_chunks): its header's
	 * address and its size, 0 not found; chunk_why says why */
	uint64_t chunk, chunk_size;
	char chunk_why[160];
	bool python_gil;          /* in CPython's _PyRuntime, waited on in a condvar or mutex */
	bool rust_std;            /* a Rust std::sync Mutex, RwLock or Condvar (its kind from
	                           * std's slow path in the waiters' stacks; no owner recorded) */
	/* VT_LOCK_AT_ARENA: the threads whose glibc thread_arena it is (alloc/thread_arena.h),
	 * read when the row was made; users_why says why they are not known */
	struct vt_lock_thread users[VT_LOCK_THREADS_MAX];
	size_t nusers;
	unsigned users_more;      /* users past the table */
	char users_why[160];

	unsigned samples;         /* samples with at least one waiter */
	uint64_t waits;           /* waiters summed over samples */
	unsigned peak;            /* most waiters in one sample */
	struct vt_lock_thread waiters[VT_LOCK_THREADS_MAX];
	size_t nwaiters;
	struct vt_lock_site sites[VT_LOCK_SITES_MAX];
	size_t nsites;
	unsigned sites_other;     /* waiter-samples at sites past the table */
	unsigned sites_unknown;   /* waiter-samples whose stack was not read */

	/* the holder, read at the samples with waiters (mutex, rwlock) */
	unsigned owner_reads;     /* samples whose owner field was read */
	unsigned owner_free;      /* ... found it free: a handoff under way */
	unsigned owner_foreign;   /* ... held by a tid that is no thread of the process */
	pid_t foreign_tid;        /* the last such tid */
	unsigned readers;         /* rwlock: samples held by readers (no tids recorded) */
	uint64_t readers_sum;     /* and the readers summed over them */
	struct vt_lock_thread holders[VT_LOCK_THREADS_MAX];
	size_t nholders;
	char holder_why[128];     /* why no holder is known, "" when one is read */
	pid_t holder_now;         /* the thread read holding it at the last sample counted, 0 none:
	                           * for a caller that knows what that thread runs */
	/* what the holders were running when read holding it (their last sampled stack's top
	 * frame): filled by vitals profile --wall, which samples the running threads' stacks,
	 * with vt_lock_add_holder_frame; empty elsewhere */
	struct vt_lock_site holder_frames[VT_LOCK_SITES_MAX];
	size_t nholder_frames;
	unsigned holder_frames_other;
	char layout_why[128];     /* a lock whose memory did not read as its kind's layout */
};

/* Every lock waited on over a run of samples. */
struct vt_locks {
	pid_t pid;
	unsigned samples;         /* samples counted */
	uint64_t thread_samples;  /* threads summed over them: the process's thread-time */
	uint64_t futex_waits;     /* threads in a futex wait, summed over samples */
	uint64_t untracked;       /* of them on locks past VT_LOCKS_MAX */
	uint64_t first_ns, last_ns;   /* CLOCK_MONOTONIC of the first and last sample */
	uint64_t unwinds;         /* stacks unwound */
	uint64_t unwinds_skipped; /* waits counted without a stack: past the per-sample cap */
	struct vt_lock *v;        /* owned, n, in the order first seen */
	size_t n, cap;
	/* what could not be read, "" when all was: said once, with why */
	uint64_t syscall_unread;  /* thread-samples whose system call could not be read */
	char syscall_why[48];     /* why (sample/threads.h syscall_why), "" all were read */
	char stacks_why[192];     /* the waiters' stacks */
	char arenas_why[192];     /* glibc's arena ring (not glibc, static, refused, ...) */
	size_t narenas;           /* arenas found, 0 unknown */
	char probe_why[160];      /* why no sample was counted: the probe could not be opened */
};

/* A process's looks at its locks over a soak (store/lock_store.h), counted together and by halves. */
struct vt_lock_history {
	pid_t pid;
	size_t looks;             /* looks read */
	double t_first, t_last;   /* soak seconds of the first and the last look */
	double t_split;           /* of the first look of the second half */
	struct vt_locks all;      /* every look counted together */
	struct vt_locks early;    /* the first half of the looks (looks / 2 of them) */
	struct vt_locks late;     /* the second half */
	char why[160];            /* why there are none: "" when looks > 0 */
};

/* Free its counts; it can be loaded into again (zeroed). */
void vt_lock_history_release(struct vt_lock_history *h);

struct vt_lock_probe;

/*
 * A probe of process pid, whose /proc directory is dirfd (duplicated: the
 * caller keeps its own): its unwinder, opened by the first sample that sees
 * a thread in a futex wait (a process that has none never pays for it), and
 * glibc's arena ring when it has one (arenas_why in the report says why
 * not).  Errors: VT_E_NOMEM, VT_E_NOFILE; everything else, an unwinder that
 * cannot be opened too, is said in the report (stacks_why).
 */
int vt_lock_probe_open(const struct vt_procfs *pfs, pid_t pid, int dirfd, struct vt_lock_probe **out,
		       struct vt_err *err);

/*
 * At most per_word waiters of one futex word unwound in a sample (0, the
 * default: no limit but VT_LOCKS_UNWINDS_PER_SAMPLE).  `vitals threads`
 * shows each lock's kind and place, which a few waiters' stacks say, not
 * its call sites: a thousand waiters of one condition variable cost 64
 * unwinds a sample (about 4 ms), not 4.  The others are counted as waits
 * without a stack read (unwinds_skipped) and join the lock whose memory
 * holds their word.
 */
void vt_lock_probe_per_word(struct vt_lock_probe *lp, unsigned per_word);

/*
 * Count the futex waits of sample s (read with VT_TW_SYSCALL) into into,
 * which starts zeroed.  Errors: VT_E_NOMEM only; a thread or a lock that
 * went away between the sample and this look is counted as what was read.
 */
int vt_lock_probe_sample(struct vt_lock_probe *lp, const struct vt_threads_sample *s, struct vt_locks *into,
			 struct vt_err *err);

/*
 * The malloc chunk each lock of l placed in the heap lies in (a mutex inside
 * a malloc'd object): one walk of glibc's arenas (alloc/glibc_heap.h
 * vt_heap_walk, chunk headers only), given up after
 * VT_LOCKS_CHUNK_WALK_S; rows found before keep theirs, the others say
 * why in chunk_why.  Reads only; called before a report, not per sample.
 */
#define VT_LOCKS_CHUNK_WALK_S 0.25
void vt_lock_probe_find_chunks(struct vt_lock_probe *lp, struct vt_locks *l);

/* NULL is a no-op. */
void vt_lock_probe_close(struct vt_lock_probe *lp);

/* Free the rows; the struct can be counted into again (zeroed). */
void vt_locks_release(struct vt_locks *l);

/*
 * Add the counts of from, another run of samples of the same process (a
 * soak's looks, read back from its recording), to into: rows by address,
 * their samples, waits, threads, sites and holders summed, the peak the
 * larger, the kind the one most waiter-samples said in both; a row's place
 * is the first run's.  Rows past VT_LOCKS_MAX count as untracked.
 * Errors: VT_E_NOMEM (into keeps what was added).
 */
int vt_locks_merge(struct vt_locks *into, const struct vt_locks *from, struct vt_err *err);

/* One sample of lock k's holder running where (a frame label), counted as call sites are. */
void vt_lock_add_holder_frame(struct vt_lock *k, const char *where);

/* Samples in which thread tid waited on lock k (0 when it is not among its waiters). */
unsigned vt_lock_waits_of(const struct vt_lock *k, pid_t tid);
/* ... on any lock of a kind that is contention (vt_lock_kind_contended, or the GIL). */
unsigned vt_locks_contended_waits_of(const struct vt_locks *l, pid_t tid);

/* The lock with the most waits (ties: the first seen) of those of kinds that are
 * contention when contended_only; NULL none. */
const struct vt_lock *vt_locks_top(const struct vt_locks *l, bool contended_only);

#endif

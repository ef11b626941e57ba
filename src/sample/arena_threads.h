/*
 * arena_threads.h — which threads of a process allocate from which glibc
 * arena, at one moment: the thread ↔ arena map (each thread's thread_arena,
 * alloc/thread_arena.h) as the one model that the per-arena tables of
 * vitals heap and vitals census render, in every view.  Per arena, the
 * threads whose thread_arena it is; apart, the threads that have not
 * allocated yet and those whose arena could not be told; or, when the map
 * could not be read at all, why.
 *
 * Reads task/ and task/TID/comm of the process and the threads' memory
 * through the caller's callbacks (process_vm_readv for a live process):
 * nothing is stopped.
 */
#ifndef VT_SAMPLE_ARENA_THREADS_H
#define VT_SAMPLE_ARENA_THREADS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "alloc/glibc_heap.h"
#include "proc/maps.h"
#include "proc/procfs.h"

#define VT_ARENA_THREADS_WHY_MAX 256

/* A thread, and the arena it allocates from. */
struct vt_arena_thread {
	pid_t tid;
	char comm[16];               /* task/TID/comm; "" when it exited meanwhile */
	int arena;                   /* index into the ring (0: main_arena), VT_THREAD_ARENA_NONE or
	                              * VT_THREAD_ARENA_UNKNOWN */
};

/* One arena's threads: threads[first .. first + n). */
struct vt_arena_users {
	size_t first, n;
	bool later;                  /* the arena was made after the threads were read: which of them
	                              * use it is not known (n is 0) */
};

struct vt_arena_threads {
	bool known;                  /* the map was read: arenas[] and the counts hold */
	char why[VT_ARENA_THREADS_WHY_MAX];   /* !known: why not ("" when it was not asked for) */
	struct vt_arena_thread *threads;      /* nthreads: those on an arena by arena (ring order),
	                                       * then those not allocated yet, then the unknown,
	                                       * by tid within each; owned */
	size_t nthreads;             /* the threads task/ listed */
	struct vt_arena_users *arenas;        /* narenas, in ring order; owned */
	uint64_t *ring;              /* narenas: each arena's address (its malloc_state); owned */
	size_t narenas;
	size_t on_arenas;            /* threads on one of the arenas: the sum of arenas[].n */
	size_t later;                /* arenas marked later */
	struct vt_arena_users none;  /* thread_arena still 0: they have not allocated yet */
	struct vt_arena_users unknown;        /* their thread pointer not found, or no arena of the ring */
};

/*
 * The map of the process behind dirfd (pid), whose memory m reads, whose
 * mappings are maps, against its arena ring arenas[narenas] (main_arena
 * first).  Always fills *out (release it): known, or why not.  VT_OK when
 * known, VT_E_NOTFOUND (the offsets could not be told), VT_E_GONE or
 * VT_E_PERM (task/ could not be listed), VT_E_NOMEM.
 */
int vt_arena_threads_read(int dirfd, pid_t pid, const struct vt_heap_mem *m, const struct vt_region_list *maps,
			  const uint64_t *arenas, size_t narenas, struct vt_arena_threads *out);

/*
 * The same for a live process read with process_vm_readv: main_arena found
 * as the census finds it (vt_glibc_main_arena_locate), then its ring, then
 * the map.  What could not be read (the memory refused, main_arena not
 * found, the ring torn) is said in out->why.
 */
int vt_arena_threads_read_live(const struct vt_procfs *pfs, int dirfd, pid_t pid, const struct vt_region_list *maps,
			       struct vt_arena_threads *out);

/*
 * The same map against the ring as it is now, read again from main_arena
 * (t->ring[0]) with process_vm_readv: glibc puts each new arena right after
 * main_arena, so an arena made since the threads were read moves the
 * others' indices.  Each thread keeps its arena by address; an arena made
 * since is marked later.  For a reader whose per-arena figures come from
 * a later walk of the ring (vitals heap's malloc_info).  Not known when the
 * ring cannot be read again (why says so).
 */
int vt_arena_threads_ring_now(pid_t pid, struct vt_arena_threads *t);

/* Make *out not known, for why (printf-style); the threads and arenas are dropped. */
void vt_arena_threads_not_known(struct vt_arena_threads *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

void vt_arena_threads_release(struct vt_arena_threads *t);

#endif

/*
 * thread_arena.h — which glibc malloc arena each thread of a process
 * allocates from, read from the threads' own memory without symbols and
 * without stopping anything.
 *
 * glibc keeps a thread's arena in the TLS variable thread_arena
 * (malloc/arena.c), in libc's static TLS block just below the thread
 * pointer.  The thread pointer is the thread's struct pthread, whose first
 * words are tcbhead_t: tcb (offset 0) and self (offset 16) both point at
 * it.  So, from memory alone:
 *   1. thread pointers: 8-aligned addresses X with *X == X and
 *      *(X + 16) == X, looked for in the top VT_TCB_SCAN bytes of every
 *      anonymous mapping (glibc puts a thread's struct pthread at the top
 *      of its stack) and in all of the small ones (the main thread's is
 *      allocated by the loader);
 *   2. whose: struct pthread holds the thread's tid (list_t list; pid_t
 *      tid; after the header): the offset at which most candidates hold
 *      a tid of the process is the tid's, and each thread pointer is
 *      named by it;
 *   3. the arena: the offset below the thread pointers at which most
 *      threads hold the address of an arena of the ring is thread_arena's
 *      (the same for every thread: one static TLS layout); each thread's
 *      value there is its arena, or 0 before its first allocation.
 * Every step checks what it reads; when no offset is held by at least two
 * threads (or the one thread there is), nothing is guessed.  Pure: memory
 * is read through the caller's callbacks (alloc/glibc_heap.h).
 */
#ifndef VT_ALLOC_THREAD_ARENA_H
#define VT_ALLOC_THREAD_ARENA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "alloc/glibc_heap.h"
#include "base/error.h"
#include "proc/maps.h"

#define VT_TCB_SCAN 16384u          /* bytes at the top of an anonymous mapping searched */
#define VT_TCB_SMALL (256u << 10)   /* anonymous mappings up to this size searched whole */
#define VT_TCB_TID_SPAN 4096u       /* bytes of struct pthread searched for the tid */
#define VT_TLS_SPAN 4096u           /* bytes below the thread pointer searched for thread_arena */

#define VT_THREAD_ARENA_NONE (-1)    /* thread_arena is 0: it has not allocated yet */
#define VT_THREAD_ARENA_UNKNOWN (-2) /* its thread pointer was not found, or the value is no arena */

/*
 * For each of the ntids threads, its arena: an index into arenas (0 is
 * main_arena), VT_THREAD_ARENA_NONE or VT_THREAD_ARENA_UNKNOWN, into
 * arena_of[ntids].  maps: the process's mappings.  VT_OK when the offsets
 * were found (some threads may still be unknown); VT_E_NOTFOUND, with why
 * in err, when they could not be told; VT_E_NOMEM.
 */
int vt_glibc_thread_arenas(const struct vt_heap_mem *m, const struct vt_region_list *maps, const pid_t *tids,
			   size_t ntids, const uint64_t *arenas, size_t narenas, int *arena_of, struct vt_err *err);

#endif

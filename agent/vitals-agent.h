/*
 * vitals-agent.h — the public C API of libvitals-agent.so.
 *
 * The library is usually loaded with LD_PRELOAD, and then needs no code in
 * the application: it serves `vitals heap PID` over a Unix socket (see the
 * README of vitals, and agent/protocol.h for the wire format).  An
 * application may also link it (-lvitals-agent) and serve the same figures
 * itself, e.g. on its own HTTP debug route, through the one call below.
 * Linking it also starts the socket listener; set VITALS_AGENT=0 in the
 * environment to serve only through your own route.
 *
 * Only vitals_agent_json is exported (version node VITALS_AGENT_1).
 * libvitals-agent-allocs.so, the same agent with allocation sampling, also
 * defines malloc, free, calloc, realloc, memalign, posix_memalign,
 * aligned_alloc, valloc and pvalloc (forwarded to the next definition; see
 * agent/protocol.h): preload one of the two libraries, not both.
 */
#ifndef VITALS_AGENT_H
#define VITALS_AGENT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Describe the calling process's glibc heap as one JSON object, the same
 * reply the socket gives to {"v":1,"want":"heap"}:
 *
 *   {"v":1,"pid":N,"glibc":"2.36","mallinfo2":{"arena":N,...,"keepcost":N},
 *    "malloc_info":"<malloc version=\"1\">...</malloc>\n","took_us":N}
 *
 * or, when the figures cannot be read, {"v":1,"pid":N,"error":"..."} (for
 * example "not glibc malloc" when another allocator replaced malloc).  This
 * call never trims the heap.
 *
 * out:  on success *out is a NUL-terminated string allocated with malloc();
 *       the caller owns it and frees it with free().  On failure *out is
 *       set to NULL.
 * len:  if not NULL, receives strlen(*out) on success (0 on failure).
 *
 * Returns 0 on success (also for an "error" object), or a negative errno
 * value: -EINVAL if out is NULL, -ENOMEM when memory ran out or the reply
 * would pass 8 MiB.  It never aborts.
 *
 * Thread-safe; takes an internal mutex for the few milliseconds mallinfo2()
 * and malloc_info() need, and they take each arena's lock in turn.  Not
 * async-signal-safe: never call it from a signal handler.
 */
int vitals_agent_json(char **out, size_t *len);

#ifdef __cplusplus
}
#endif

#endif

/*
 * core.h — the agent core's interface to its entry shims (private).
 *
 * The core turns one request line into one reply (agent/protocol.h).  It
 * knows nothing about sockets: agent/preload.c is the LD_PRELOAD entry
 * (listener thread), vitals_agent_json() the in-application entry, and an
 * injected entry could call agent_core_answer() the same way.
 *
 * Everything here has hidden visibility; only vitals_agent_json is exported.
 * Nothing here aborts or prints; nothing here calls malloc except
 * vitals_agent_json's copy of its result (see core.c for why the agent's
 * own thread must not touch the target's malloc).
 */
#ifndef VT_AGENT_CORE_H
#define VT_AGENT_CORE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * A growable output buffer backed by mmap, not by the host's malloc.
 * Zero-initialise, then agent_sink_init(); release with agent_sink_release().
 * A write that would pass max sets failed and is dropped.
 */
struct agent_sink {
	char *p;          /* NUL-terminated at p[len] when p != NULL */
	size_t len;
	size_t cap;       /* bytes mapped */
	size_t max;       /* largest len allowed */
	bool failed;      /* out of memory or over max */
};

void agent_sink_init(struct agent_sink *s, size_t max);
void agent_sink_release(struct agent_sink *s);

/* Append n bytes (kept NUL-terminated); on failure the sink's failed is set. */
void agent_sink_put(struct agent_sink *s, const char *bytes, size_t n);

/*
 * Set up the core once, from the library constructor (the host's main
 * thread, before main()): detect whether malloc is glibc's, create the
 * FILE that malloc_info() writes into, read VITALS_AGENT_ALLOW_TRIM, and
 * register the fork handlers that keep the core's lock consistent.
 * Safe to call again (no-op).  Returns 0, or -1 if the FILE could not be
 * created (requests then get an error reply).
 */
int agent_core_init(void);

/*
 * Answer one request (req: len bytes, need not be NUL-terminated, the
 * trailing '\n' optional).  The reply, always one JSON object (an error
 * object for a bad request), is appended to out.  allow_trim: the entry
 * permits "trim":true.  Returns 0, or -1 if out failed (out of memory).
 */
int agent_core_answer(const char *req, size_t len, bool allow_trim, struct agent_sink *out);

/* Append an error reply {"v":1,"pid":N,"error":"msg"}. */
void agent_core_error(struct agent_sink *out, const char *msg);

/* VITALS_AGENT_ALLOW_TRIM=1 was set when the process started. */
bool agent_core_trim_allowed(void);

/*
 * An "allocs" request (agent/protocol.h), parsed but not yet validated:
 * each member as it came, so that the sampler says what is wrong with it.
 */
enum agent_req_flag { REQ_ABSENT, REQ_TRUE, REQ_FALSE, REQ_BAD };

struct agent_allocs_req {
	enum agent_req_flag start, stop;  /* "start", "stop": REQ_BAD when not a boolean */
	bool has_every, has_for_ms;
	bool every_int, for_ms_int;       /* an integer (no fraction or exponent) */
	long long every, for_ms;          /* clamped to +-1e12 while parsing */
};

#if VT_AGENT_ALLOCS
/*
 * The allocation sampler (agent/alloc_sampler.c, libvitals-agent-allocs.so
 * only).  Called from the listener thread only, one request at a time; no
 * malloc.  Appends the reply (or an error reply) to out.
 */
void agent_allocs_answer(const struct agent_allocs_req *r, struct agent_sink *out);

/*
 * For the listener, before it waits for a client: disarms sampling once
 * its deadline has passed.  Returns the milliseconds left until the
 * deadline (0 or more) while armed, -1 when not armed.
 */
long long agent_allocs_tick(void);

/*
 * The malloc that the process's malloc forwards to, when the process's
 * malloc is this library's; NULL when the process binds malloc elsewhere
 * (an executable or a library preloaded before this one defines it).
 */
void *agent_allocs_forwarded_malloc(void);
#endif

#endif

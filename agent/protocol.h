/*
 * protocol.h — the vitals agent protocol, shared by the agent
 * (agent/core.c, agent/preload.c, agent/alloc_sampler.c) and vitals
 * (src/alloc/agent_client.c).
 *
 * Two libraries speak it.  libvitals-agent.so answers "heap".
 * libvitals-agent-allocs.so is the same agent plus in-process allocation
 * sampling ("allocs" below): it defines malloc, free, calloc, realloc,
 * memalign, posix_memalign, aligned_alloc, valloc and pvalloc and forwards
 * each call to the next definition, so it is preloaded on purpose, before
 * any other allocator (LD_PRELOAD=libvitals-agent-allocs.so:libjemalloc.so
 * samples jemalloc's calls; the other order would sample nothing, and
 * "start" is refused).  Its "heap" is the heap of the malloc it forwards to.
 *
 * This header is plain C with no includes from src/ or agent/: the agent is
 * built apart from libvitals and must not depend on it.  It holds only
 * constants and the description of the wire format; each side writes and
 * reads it with its own code (hand-written JSON in the agent, jansson in
 * vitals).
 *
 * Where the socket is
 *   <dir>/<pid>.sock, <pid> being the agent process's getpid() and <euid>
 *   its geteuid(), both as seen inside its own user and pid namespaces.
 *   <dir> follows one rule that vitals can apply from outside:
 *   1. $XDG_RUNTIME_DIR/vitals-agent, when XDG_RUNTIME_DIR in the
 *      environment the process started with (what /proc/<pid>/environ
 *      shows) is an absolute path to a directory owned by <euid> with no
 *      group/other permission bit (what pam_systemd gives a login session);
 *   2. otherwise /tmp/vitals-agent-<euid>.
 *   The agent creates <dir> with mode 0700 if missing, opens it without
 *   following a symbolic link and refuses it unless it is a directory owned
 *   by <euid> with no group/other bit: a /tmp/vitals-agent-<euid> made by
 *   another user leaves the agent silent (VITALS_AGENT_DEBUG=1 says why);
 *   XDG_RUNTIME_DIR is not exposed to that.  It binds through its
 *   directory fd, the socket is mode 0600, and it serves only clients whose
 *   SO_PEERCRED uid is <euid> or 0 (others get an error reply).
 *   From the host, vitals reaches <dir> through /proc/<hostpid>/root (the
 *   process's own mount namespace, so containers work), reads
 *   XDG_RUNTIME_DIR from /proc/<hostpid>/environ, uses the last NSpid of
 *   /proc/<hostpid>/status as <pid>, maps <euid> through
 *   /proc/<hostpid>/uid_map, and tries rule 1 then rule 2 (then both for
 *   uid 0, for a daemon that dropped root after starting).  It takes a
 *   candidate only if <dir> is, without following links, a directory owned
 *   by the target's euid (as vitals sees it) with no group/other bit and
 *   <pid>.sock is a socket (not a link) of the same owner; and after
 *   connecting it checks SO_PEERCRED: the socket must be served by
 *   <hostpid> itself.  When /proc/<hostpid>/root and environ cannot be read
 *   (a non-dumpable process) and the pid numbering is vitals' own, it tries
 *   /run/user/<euid>/vitals-agent and /tmp/vitals-agent-<euid> as vitals
 *   sees them; the SO_PEERCRED check makes that safe.
 *
 * Exchange (one per connection, Unix stream socket, no TCP)
 *   client -> agent: one line of JSON, at most VT_AGENT_REQ_MAX bytes
 *   including the '\n' (end of stream also ends the line):
 *       {"v":1,"want":"heap"}
 *       {"v":1,"want":"heap","trim":true}
 *   Members: "v" (integer, required) the protocol version the client
 *   speaks; "want" (string, required) "heap", or "allocs" (below); "trim"
 *   (true/false, optional) call malloc_trim(0).  "start", "stop", "every"
 *   and "for_ms" belong to "allocs" and are ignored by "heap".  Other
 *   members are ignored; values must be scalars.
 *
 *   agent -> client: one JSON object, then the agent closes the connection.
 *       {"v":1,"pid":N,"glibc":"2.36",
 *        "mallinfo2":{"arena":..,"ordblks":..,"smblks":..,"hblks":..,
 *                     "hblkhd":..,"usmblks":..,"fsmblks":..,"uordblks":..,
 *                     "fordblks":..,"keepcost":..},
 *        "malloc_info":"<malloc version=\"1\">...</malloc>\n",
 *        "took_us":N,
 *        "trim":{"returned":0|1,"before":{mallinfo2},"after":{mallinfo2},
 *                "took_us":N}}
 *   "pid" is getpid() in the agent's pid namespace.  "mallinfo2" and
 *   "malloc_info" are read back to back (before any trim); "took_us" is
 *   the time both calls took.  "trim" is present only when asked for:
 *   mallinfo2 right before and right after malloc_trim(0), its return
 *   value, and the time malloc_trim took.
 *   On failure the reply is {"v":1,"pid":N,"error":"<message>"} and nothing
 *   in the process was changed, e.g.
 *       "trim not allowed: start the process with VITALS_AGENT_ALLOW_TRIM=1"
 *       "not glibc malloc"
 *       "unsupported protocol version 2: this agent speaks 1"
 *       "request longer than 4096 bytes"
 *
 *   Allocation sampling (libvitals-agent-allocs.so; one session at a time):
 *       {"v":1,"want":"allocs","start":true,"every":N,"for_ms":M}
 *       {"v":1,"want":"allocs","stop":true}
 *   "start":true arms sampling.  It resets the session (a start while
 *   armed replaces the running session); then every thread samples an
 *   allocation each time its byte countdown, drawn from an exponential
 *   distribution of mean "every" bytes, reaches zero.  So an allocation of
 *   s bytes is sampled with probability 1 - exp(-s/every), and
 *   sum(size / (1 - exp(-size/every))) over the samples estimates the bytes
 *   allocated.  "every": integer 1..1073741824, default 524288.  "for_ms":
 *   integer 1..3600000, default 60000: the agent disarms by itself that
 *   long after the start, so a client that goes away cannot leave sampling
 *   on.  Reply:
 *       {"v":1,"pid":N,"allocs":{"armed":true,"every":N,"t0_ns":T,
 *        "for_ms":M,"max_samples":8192,"max_frames":32}}
 *   "stop":true disarms (if still armed) and replies with the session:
 *       {"v":1,"pid":N,"allocs":{"armed":false,"every":N,"t0_ns":T0,
 *        "t1_ns":T1,"expired":true,"calls":C,"bytes":B,"frees":F,"dropped":D,
 *        "fns":{"malloc":n,"calloc":n,"realloc":n,"memalign":n,
 *               "posix_memalign":n,"aligned_alloc":n},
 *        "samples":[{"size":S,"fn":"malloc","ptr":"0x55d0c2a4b2a0","tid":T,
 *                    "t_ns":N,"freed_ns":N,"freed_tid":T,
 *                    "pcs":["0x55d0c1e0a1b3","0x7f3a...",...]},...]}}
 *   Times are CLOCK_MONOTONIC ns in the process (vitals' own clock, unless
 *   the process is in a time namespace).  T0 is when it was armed, T1 when
 *   it was disarmed: at the stop, or T0 + for_ms when the deadline came
 *   first, and then "expired":true is present (absent otherwise).  "calls",
 *   "bytes" (as requested; calloc counts n*size) and "fns" count every call
 *   made while armed, sampled or not, by every thread; valloc and pvalloc
 *   count as "memalign"; realloc counts as an allocation of its new size.
 *   "frees": free() calls of a non-NULL pointer (realloc is not one).
 *   Allocations a thread makes while it is taking a sample (a signal
 *   handler's) are not counted.  "samples", at most max_samples, in the
 *   order taken: "size" as requested, "fn" the entry point, "ptr" the
 *   block returned, "tid" the allocating thread (gettid), "t_ns" when;
 *   "freed_ns"/"freed_tid" when and by which thread the block was freed
 *   (by free, or by a realloc that moved or freed it) before T1, else 0
 *   and 0; "pcs" the return addresses of the allocating stack, leaf first
 *   (in the caller of malloc), at most max_frames, the agent's own frames
 *   left out: symbolise them with the process's /proc/PID/maps.  "dropped":
 *   samples that did not fit (the table holds max_samples) or were still
 *   being written when the session ended; the estimate then runs short,
 *   and a shorter session or a larger "every" is the cure.  A stop after a
 *   stop answers the same session again, until the next start.  The largest
 *   reply (8,192 samples of 32 frames) is under 7.2 MB: within
 *   VT_AGENT_REPLY_MAX.
 *   Errors (nothing changed):
 *       "allocation sampling not in this agent: preload libvitals-agent-allocs.so"
 *           (libvitals-agent.so, to any "allocs" request)
 *       "allocation sampling was not started: send \"start\":true first"
 *       "an \"allocs\" request needs either \"start\":true or \"stop\":true"
 *       "request \"start\" must be true or false" (and "stop")
 *       "request \"every\" must be an integer from 1 to 1073741824"
 *       "request \"for_ms\" must be an integer from 1 to 3600000"
 *       "malloc in this process is not the agent's (...)"
 *           (the executable, or a library loaded before the agent, defines malloc)
 *   Cost to the process: disarmed, a load and a branch a call; armed, a few
 *   ns a call for the counting and about 1 us a sample for the stack (see
 *   agent/alloc_sampler.c).
 *
 * Versioning: VT_AGENT_PROTO_VERSION rises when a member changes meaning or
 * a required one is added; new optional members keep the version.  Both
 * sides ignore members they do not know.  An agent answers a request of
 * another version with an error reply that carries its own "v".
 */
#ifndef VT_AGENT_PROTOCOL_H
#define VT_AGENT_PROTOCOL_H

#define VT_AGENT_PROTO_VERSION 1

/*
 * Directory and socket name (see "Where the socket is"):
 * $XDG_RUNTIME_DIR "/" VT_AGENT_XDG_SUBDIR, else "/tmp/" VT_AGENT_TMP_SUBDIR_FMT
 * (= VT_AGENT_DIR_FMT), then "/" VT_AGENT_SOCK_FMT.
 */
#define VT_AGENT_ENV_XDG        "XDG_RUNTIME_DIR"
#define VT_AGENT_XDG_SUBDIR     "vitals-agent"
#define VT_AGENT_TMP_SUBDIR_FMT "vitals-agent-%u"        /* unsigned euid */
#define VT_AGENT_DIR_FMT        "/tmp/" VT_AGENT_TMP_SUBDIR_FMT
#define VT_AGENT_SOCK_FMT       "%d.sock"                /* int pid */

/* Largest request line, '\n' included. */
#define VT_AGENT_REQ_MAX   4096
/* Largest reply; the client refuses anything longer. */
#define VT_AGENT_REPLY_MAX (8u << 20)

/* The agent waits this long for the request line, then gives up on the client. */
#define VT_AGENT_READ_TIMEOUT_MS 1000
/* ... and this long for the client to take the whole reply. */
#define VT_AGENT_SEND_TIMEOUT_MS 3000
/*
 * A client's timeout should cover one other client's whole turn: the agent
 * serves one connection at a time.
 */
#define VT_AGENT_CLIENT_TIMEOUT_MS 5000

/* Environment read by the agent when the process starts. */
#define VT_AGENT_ENV_ENABLE     "VITALS_AGENT"            /* "0": no listener */
#define VT_AGENT_ENV_ALLOW_TRIM "VITALS_AGENT_ALLOW_TRIM" /* "1": honour "trim":true */
#define VT_AGENT_ENV_DEBUG      "VITALS_AGENT_DEBUG"      /* "1": say on stderr why it is not listening */

#endif

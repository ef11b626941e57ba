/*
 * protocol.h — the vitals agent protocol, shared by the agent
 * (agent/core.c, agent/preload.c) and vitals (src/alloc/agent_client.c).
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
 *   speaks; "want" (string, required) "heap"; "trim" (true/false, optional)
 *   call malloc_trim(0).  Other members are ignored; values must be scalars.
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

/*
 * agent_client.h — vitals' side of the in-process agent (libvitals-agent.so).
 *
 * Where ptrace is not allowed, a process started with
 * LD_PRELOAD=libvitals-agent.so answers the same heap questions over a Unix
 * socket; agent/protocol.h describes where the socket is and the messages.
 * This module finds that socket for a host pid, talks to it, and parses the
 * reply.  It never prints; it reads /proc only through struct vt_procfs.
 */
#ifndef VT_ALLOC_AGENT_CLIENT_H
#define VT_ALLOC_AGENT_CLIENT_H

#include "base/json_lib.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent/protocol.h"
#include "base/buf.h"
#include "base/error.h"
#include "proc/procfs.h"

/* glibc struct mallinfo2 as the agent read it (bytes or counts, malloc.h). */
struct vt_agent_mallinfo {
	uint64_t arena;      /* non-mmapped bytes from the system, all arenas */
	uint64_t ordblks;    /* free chunks (not fast bins) */
	uint64_t smblks;     /* free fast-bin chunks */
	uint64_t hblks;      /* mmapped chunks */
	uint64_t hblkhd;     /* bytes in mmapped chunks */
	uint64_t usmblks;    /* always 0 */
	uint64_t fsmblks;    /* bytes in free fast-bin chunks */
	uint64_t uordblks;   /* bytes in use (live) */
	uint64_t fordblks;   /* bytes free but held (incl. top) */
	uint64_t keepcost;   /* releasable top of the main arena */
};

struct vt_agent_reply {
	int version;                      /* reply "v" */
	int64_t pid;                      /* "pid": getpid() in the target's own pid namespace */
	char glibc[32];                   /* "glibc": gnu_get_libc_version() of the target */
	struct vt_agent_mallinfo mi;      /* "mallinfo2", read before any trim */
	char *malloc_info_xml;            /* "malloc_info": owned, NUL-terminated; freed by
					     vt_agent_reply_release; feed to vt_malloc_info_parse */
	size_t malloc_info_len;           /* its length in bytes */
	uint64_t took_us;                 /* "took_us": mallinfo2 + malloc_info in the target */
	bool has_trim;                    /* the request asked for trim and it ran */
	struct {
		int returned;             /* malloc_trim's return: 1 if memory was released */
		struct vt_agent_mallinfo before, after;
		uint64_t took_us;         /* malloc_trim(0) itself */
	} trim;
};

/*
 * Find the agent socket of host pid `pid`, by the rule of agent/protocol.h:
 *   <proc_root>/<pid>/root<XDG_RUNTIME_DIR>/vitals-agent/<nspid>.sock
 *   <proc_root>/<pid>/root/tmp/vitals-agent-<uid>/<nspid>.sock
 * XDG_RUNTIME_DIR is the target's, from <pid>/environ (the first is skipped
 * when it has none); <nspid> is the last NSpid of <pid>/status (the pid
 * inside the target's pid namespace); <uid> is target_euid (status Uid:
 * effective, as vitals sees it) mapped through <pid>/uid_map into the
 * target's user namespace.  A candidate counts only if its directory is
 * (not through a link) a directory owned by target_euid with no
 * group/other bit and the socket (not a link) is owned by target_euid too.
 * If that finds nothing and target_euid is not 0, root's places are tried
 * too (a daemon that started as root and dropped privileges).  If
 * <pid>/root cannot be entered (EACCES: a non-dumpable target) and the
 * target shares vitals' pid numbering, /run/user/<uid>/vitals-agent and
 * the plain /tmp path are tried.  The file found is only a candidate:
 * vt_agent_query checks who serves it.
 *
 * path/cap: caller's buffer; on VT_OK the socket path, on VT_E_NOTFOUND or
 * VT_E_PERM the first path looked at (for the caller's message).
 * Returns VT_OK, or VT_E_NOTFOUND (no socket there), VT_E_PERM (the path
 * cannot be entered), VT_E_NOPROC, VT_E_GONE.  A candidate longer than cap
 * is skipped.  No struct vt_err: nothing found is the common case, not a
 * failure.
 */
int vt_agent_find(const struct vt_procfs *pfs, pid_t pid, uid_t target_euid, char *path,
		  size_t cap);

/*
 * Ask the agent at `path` for the heap figures, calling malloc_trim(0) first
 * when trim is set (the agent refuses unless the target was started with
 * VITALS_AGENT_ALLOW_TRIM=1).  The whole exchange (connect, send, read) is
 * bounded by timeout_ms; VT_AGENT_CLIENT_TIMEOUT_MS is a good value, since
 * the agent serves one client at a time.  After connecting, the socket's
 * SO_PEERCRED pid must equal host_pid, so a socket served by any other
 * process (a stale file whose pid was reused, a planted socket) is refused.
 *
 * out: filled on success, zeroed on failure; release with
 * vt_agent_reply_release() in both cases.
 * Errors:
 *   VT_E_NOTFOUND     no agent listening there (stale socket: ECONNREFUSED),
 *                     or it is served by another process than host_pid
 *   VT_E_PERM         the socket cannot be opened (EACCES)
 *   VT_E_IO           timed out or the connection failed
 *   VT_E_UNSUPPORTED  the agent answered with an error ("not glibc malloc",
 *                     "trim not allowed: ...", another protocol version):
 *                     err->msg carries its words
 *   VT_E_PARSE        the reply is not the protocol
 *   VT_E_NOMEM        the reply is larger than VT_AGENT_REPLY_MAX
 */
int vt_agent_query(const char *path, pid_t host_pid, bool trim, int timeout_ms,
		   struct vt_agent_reply *out, struct vt_err *err);

/*
 * One exchange with the agent at path, as vt_agent_query makes it (bounded
 * by timeout_ms, the server checked to be host_pid): send the request line
 * req ('\n' ended) and read the reply whole into buf (its max bounds it).
 * Errors as vt_agent_query's before parsing.
 */
int vt_agent_exchange(const char *path, pid_t host_pid, const char *req, int timeout_ms, struct vt_buf *buf,
		      struct vt_err *err);

/*
 * Parse one reply (buf: len bytes, need not be NUL-terminated; untrusted).
 * want_trim: the request asked for trim, so a reply without "trim" is an
 * error.  Same out contract and errors (UNSUPPORTED, PARSE, NOMEM) as
 * vt_agent_query.  Exposed for tests and the fuzzer.
 */
int vt_agent_reply_parse(const char *buf, size_t len, bool want_trim, struct vt_agent_reply *out,
			 struct vt_err *err);

/*
 * The first steps of reading any reply (buf: len bytes, untrusted): JSON,
 * an object, a protocol version "v", no "error" (else VT_E_UNSUPPORTED
 * with the agent's words, made printable) and this vitals' version.
 * VT_OK and *root the reply's object (the caller's: json_decref), or
 * VT_E_PARSE / VT_E_UNSUPPORTED and *root NULL.
 */
int vt_agent_reply_load(const char *buf, size_t len, json_t **root, struct vt_err *err);

/* The agent's words for a terminal: printable ASCII only, '?' for any other byte. */
void vt_agent_printable(char *dst, size_t cap, const char *src);

/* Free what out owns (malloc_info_xml) and zero it.  NULL is a no-op. */
void vt_agent_reply_release(struct vt_agent_reply *out);

#endif

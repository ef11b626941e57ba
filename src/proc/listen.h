/*
 * listen.h — the listening TCP sockets of a process and their accept
 * queues.
 *
 * A process's sockets are its fds whose link reads "socket:[INODE]"
 * (/proc/PID/fd); the sockets of its network namespace are the rows of
 * /proc/PID/net/tcp and tcp6.  A row in state 0A (TCP_LISTEN) is a
 * listening socket, and for it the kernel prints in rx_queue the
 * connections waiting for accept() (sk_ack_backlog).  tx_queue is not the
 * backlog limit there (it is write_seq - snd_una, 0 for a listener), and
 * /proc shows the limit nowhere: only sock_diag does (idiag_wqueue of a
 * listener is sk_max_ack_backlog), and it answers for the namespace of the
 * socket that asks, so vt_listen_diag serves only processes in vitals's own
 * network namespace.
 *
 * The parsers are pure (a buffer in, rows out): fuzz/fuzz_listen.c.
 */
#ifndef VT_PROC_LISTEN_H
#define VT_PROC_LISTEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/error.h"

#define VT_LISTEN_UNKNOWN UINT32_MAX

struct vt_listen_sock {
	uint64_t inode;        /* the socket's inode, as in the fd link "socket:[INODE]" */
	char address[56];      /* local address and port: "0.0.0.0:8080", "[::1]:8080" */
	uint32_t queue;        /* connections waiting for accept() (rx_queue of the LISTEN row) */
	uint32_t backlog;      /* accept queue limit (listen()'s backlog, capped by somaxconn);
	                        * VT_LISTEN_UNKNOWN from net/tcp (only sock_diag has it) */
};

/*
 * Parse the text of /proc/PID/net/tcp (v6 false) or tcp6 (v6 true): a
 * header line, then one row per socket.  The LISTEN rows whose inode is in
 * inodes[ninodes] (sorted ascending; inodes NULL keeps every one) are
 * appended to out[*n], as long as *n < cap; the rest are counted in
 * *dropped (may be NULL).  Addresses are decoded as the kernel of this
 * machine prints them (each 32-bit word in host order).  VT_OK, or
 * VT_E_PARSE on a malformed row (out keeps the rows before it).
 */
int vt_listen_parse(const char *buf, size_t len, bool v6, const uint64_t *inodes, size_t ninodes,
		    struct vt_listen_sock *out, size_t cap, size_t *n, size_t *dropped, struct vt_err *err);

/*
 * The socket inodes among the fds of the process whose directory fd is
 * pid_fd, sorted ascending, into a new array *inodes (*ninodes, the
 * caller frees it; NULL when none), and the number of its open fds into
 * *nfds.  with_sockets false only counts (no readlink per fd).  Errors:
 * VT_E_PERM (fd/ needs ptrace read access), VT_E_GONE, VT_E_NOMEM, VT_E_IO.
 */
int vt_proc_fds(int pid_fd, bool with_sockets, uint64_t **inodes, size_t *ninodes, size_t *nfds,
		struct vt_err *err);

/* Is the process behind pid_fd in the network namespace of vitals itself?  false when unknown. */
bool vt_listen_same_netns(int proc_fd, int pid_fd);

/*
 * The listening TCP sockets of vitals's own network namespace (IPv4 and
 * IPv6) from a sock_diag dump, with their backlog limits, filtered and
 * appended as vt_listen_parse does (inodes sorted; NULL keeps all).  The
 * kernel filters by state, so a host with many connections costs no more
 * than one with none (unlike net/tcp).  Errors: VT_E_IO (netlink refused
 * or failed), VT_E_PARSE.
 */
int vt_listen_diag(const uint64_t *inodes, size_t ninodes, struct vt_listen_sock *out, size_t cap,
		   size_t *n, size_t *dropped, struct vt_err *err);

/*
 * The pure half of vt_listen_diag: one buffer of netlink messages (a part
 * of the dump's reply), its LISTEN sockets appended as above.  *done is set
 * when it holds NLMSG_DONE.  VT_OK, VT_E_IO (an NLMSG_ERROR reply; the
 * resource codes of base/error.h when its errno is one: ENOMEM, ENFILE,
 * EMFILE, ...), VT_E_PARSE.
 */
int vt_listen_diag_parse(const void *buf, size_t len, const uint64_t *inodes, size_t ninodes,
			 struct vt_listen_sock *out, size_t cap, size_t *n, size_t *dropped, bool *done,
			 struct vt_err *err);

/*
 * The listeners of the process behind pid_fd among its socket inodes
 * (sorted, from vt_proc_fds), appended as vt_listen_parse does: through
 * sock_diag when same_netns (the backlog limits known), else, or when the
 * dump fails, from the process's own net/tcp and net/tcp6.  *via is
 * "sock_diag" or "net/tcp".  buf is scratch.  Errors: VT_E_GONE, VT_E_PERM,
 * VT_E_IO from reading net/tcp; VT_E_PARSE from a malformed row.
 */
int vt_listen_read(int pid_fd, bool same_netns, const uint64_t *inodes, size_t ninodes,
		   struct vt_listen_sock *out, size_t cap, size_t *n, size_t *dropped, const char **via,
		   struct vt_buf *buf, struct vt_err *err);

#endif

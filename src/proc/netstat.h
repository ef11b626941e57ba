/*
 * netstat.h — the accept-queue counters of a network namespace, from
 * /proc/PID/net/netstat.
 *
 * The file is pairs of lines, a header and its values: "TcpExt: name name
 * ...", then "TcpExt: 0 7 ...".  Two of TcpExt's counters are about accept
 * queues: ListenOverflows (a connection completed its handshake while the
 * listener's queue was full) and ListenDrops (dropped on the way to a
 * listener, overflows included).  They count since boot, for every socket
 * of the namespace: a rise between two reads is evidence, the value alone
 * is not.
 *
 * The parser is pure (a buffer in, figures out): fuzz/fuzz_netstat.c.
 */
#ifndef VT_PROC_NETSTAT_H
#define VT_PROC_NETSTAT_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

struct vt_listen_counters {
	uint64_t overflows;   /* TcpExt ListenOverflows; VT_NA when the kernel has none */
	uint64_t drops;       /* TcpExt ListenDrops; VT_NA likewise */
};

/*
 * Parse net/netstat text (need not be NUL-terminated).  A counter the file
 * does not name is VT_NA.  VT_OK, or VT_E_PARSE when a header line has no
 * values line after it with as many fields, or a value is not a number.
 */
int vt_netstat_parse(const char *buf, size_t len, struct vt_listen_counters *out, struct vt_err *err);

#endif

/*
 * uptime.h — /proc/uptime: "seconds-since-boot idle-seconds", each with two
 * decimals (proc(5)).  The first figure, with a process's start time (stat
 * field 22, clock ticks after boot), says how long the process has run:
 * what ps divides its CPU time by.
 */
#ifndef VT_PROC_UPTIME_H
#define VT_PROC_UPTIME_H

#include <stddef.h>

#include "base/buf.h"
#include "base/error.h"
#include "proc/procfs.h"

/*
 * Parse the first figure of the text (buf need not be NUL-terminated).
 * VT_OK, or VT_E_PARSE when it does not start with a decimal number.
 */
int vt_uptime_parse(const char *buf, size_t len, double *seconds, struct vt_err *err);

/* Seconds since boot from pfs's /proc/uptime, -1 when unreadable.  buf is scratch. */
double vt_uptime_read(const struct vt_procfs *pfs, struct vt_buf *buf);

#endif

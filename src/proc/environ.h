/*
 * environ.h — look up variables in /proc/PID/environ (NUL-separated).
 *
 * environ is the environment the process was started with, which is what
 * glibc read its tunables from at start-up; later setenv() calls are not in it.
 * Values may be secrets: vitals looks up the few allocator variables it needs
 * and never prints the rest.
 */
#ifndef VT_PROC_ENVIRON_H
#define VT_PROC_ENVIRON_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Find NAME=value.  Returns true and points *value and *value_len into buf at the
 * first match, which is the one getenv() in the target returns.
 */
bool vt_environ_get(const char *buf, size_t len, const char *name, const char **value,
		    size_t *value_len);

/*
 * Find key=value inside a GLIBC_TUNABLES string ("glibc.malloc.arena_max=2:...").
 */
bool vt_tunables_get(const char *tunables, size_t len, const char *key, const char **value,
		     size_t *value_len);

#endif
